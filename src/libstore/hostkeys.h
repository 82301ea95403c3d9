/*
 * hostkeys.h - the host_key_mismatch table: clusters whose host key was
 * last seen not to match the one approved (libfleet/gate.h refuses them
 * and records it here; `exa hpc clusters` shows it). A row is a
 * observation, not a state: the gate compares the keys on every open, and
 * clears the row when they agree again.
 */
#ifndef EXA_STORE_HOSTKEYS_H
#define EXA_STORE_HOSTKEYS_H

#include "libstore/store.h"

/* One observation. Strings owned (malloc'ed) or NULL. */
struct hostkey_mismatch {
    char *cluster;
    char *approved; /* "SHA256:..." recorded at approval, or NULL */
    char *seen;     /* "SHA256:..." pinned or offered now, or "none" */
    char *seen_at;  /* ISO-8601 UTC */
};

void hostkey_mismatch_release(struct hostkey_mismatch *m);

/*
 * Record (insert or replace) that cluster's host key was seen as seen
 * (borrowed; NULL stored as "none") while approved was approved.
 * 0 or -1 with err (EXA_ECONFIG).
 */
int store_hostkey_mismatch_set(store_t *st, const char *cluster,
                               const char *approved, const char *seen,
                               exa_error_t *err);

/* Forget cluster's observation (none is fine). 0 or -1 with err. */
int store_hostkey_mismatch_clear(store_t *st, const char *cluster,
                                 exa_error_t *err);

/*
 * Read cluster's observation into *out (zeroed first; release with
 * hostkey_mismatch_release()). 1 found, 0 none, -1 with err.
 */
int store_hostkey_mismatch_get(store_t *st, const char *cluster,
                               struct hostkey_mismatch *out, exa_error_t *err);

#endif
