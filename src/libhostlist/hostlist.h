/*
 * hostlist.h - Slurm hostlist expressions: "node[001-004,010],gpu[1-2]".
 *
 * Semantics follow Slurm's src/common/hostlist.c as summarized in
 * doc/formats.md "hostlist": top-level commas (and blanks, as
 * Slurm accepts) separate expressions, commas inside [] separate numeric
 * ranges, the zero-padding width comes from the low bound, text after ] is a
 * suffix, several bracket groups expand as a cartesian product (earlier group
 * outermost), duplicates are kept, empty input is an empty list.
 */
#ifndef EXA_HOSTLIST_H
#define EXA_HOSTLIST_H

#include <stddef.h>

#include "libutil/arena.h"
#include "libutil/error.h"
#include "libutil/strvec.h"

/* Default cap on the number of hosts one expansion may produce. */
#define HOSTLIST_MAX_HOSTS 100000

/*
 * Expand expr (NUL-terminated; surrounding blanks and newlines ignored)
 * and append each host name to out, in order. max_hosts caps the result
 * (0 means HOSTLIST_MAX_HOSTS). Returns the number of hosts appended, or
 * -1 with err set (EXA_EPARSE) on alphabetic ranges, unbalanced or nested
 * brackets, an empty range, low > high, or a result over the cap; out is
 * then left as it was.
 */
long hostlist_expand(const char *expr, struct strvec *out, size_t max_hosts,
                     exa_error_t *err);

/*
 * hostlist_expand with the names in the arena a (libutil/arena.h): on
 * success *names is a NULL-terminated array of the names, the array and
 * every name in a (valid until arena_release), and the count is
 * returned; -1 with err as hostlist_expand (*names untouched). A parse
 * that expands many node lists makes no malloc per name.
 */
long hostlist_expand_arena(const char *expr, struct arena *a,
                           const char ***names, size_t max_hosts,
                           exa_error_t *err);

/*
 * 1 when s is one Slurm node name that may go on a command line as it is
 * (sbatch --exclude=...): 1 to 128 of [A-Za-z0-9._-], starting with a
 * letter or a digit (so never an option), no "..". Hostlist expressions
 * ("n[1-2]"), blanks, commas and shell characters are refused; 0 for NULL.
 */
int hostlist_node_ok(const char *s);

/*
 * Compress n host names into one expression: consecutive names sharing a
 * prefix and a numeric suffix of the same width become one bracket group
 * ("n1,n2,n3,x" -> "n[1-3],x"). Order is kept; nothing is sorted.
 * Returns a malloc'ed string (caller frees); "" for n == 0.
 */
char *hostlist_compress(const char *const *hosts, size_t n);

#endif
