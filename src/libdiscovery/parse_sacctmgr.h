/*
 * parse_sacctmgr.h - `sacctmgr -n -P show assoc user=U format=account,qos`
 * (sacctmgr(1) "show association", --parsable2 without header): one row
 * "account|qos1,qos2" per association, read by preflight's account and
 * QOS checks.
 */
#ifndef EXA_PARSE_SACCTMGR_H
#define EXA_PARSE_SACCTMGR_H

#include <stddef.h>

#include "libutil/strvec.h"

struct sacctmgr_assoc {
    char *account;     /* "" when the row names none */
    struct strvec qos; /* the QOS list, empty when none */
};

/*
 * Parse buf[0..len) into *out (malloc'ed array of *n rows; free with
 * sacctmgr_assocs_free). Blank lines are skipped; a row without '|' is an
 * account with no QOS; CR of CRLF and blanks around names are dropped.
 * Always succeeds (0 rows for empty or NULL input).
 */
void sacctmgr_assoc_parse(const char *buf, size_t len,
                          struct sacctmgr_assoc **out, size_t *n);

void sacctmgr_assocs_free(struct sacctmgr_assoc *v, size_t n);

#endif
