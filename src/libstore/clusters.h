/*
 * clusters.h - typed access to the `clusters` table (governance state:
 * connection identity, approval state, who asked, who decided, why).
 *
 * The state machine itself lives in libfleet/governance.c; these are plain
 * row reads and writes, meant to run inside the caller's transaction so a
 * transition and its audit event commit together.
 */
#ifndef EXA_STORE_CLUSTERS_H
#define EXA_STORE_CLUSTERS_H

#include <stddef.h>

#include "libstore/store.h"

/* One row. Strings are owned (malloc'ed) or NULL for SQL NULL. */
struct cluster_row {
    char *name;
    char *scheduler;
    char *transport;
    char *host;
    int port; /* 0 when NULL */
    char *ssh_user;
    char *ssh_key;              /* a path, never key material */
    char *key_fingerprint;      /* OpenSSH "SHA256:..." of the client key */
    char *host_key_fingerprint; /* "SHA256:..." of the pinned host key */
    char *state;                /* PENDING | ACTIVE | REJECTED */
    char *capabilities;         /* JSON text of the probe's caps */
    char *requested_by;
    char *approved_by;
    char *reason;
    char *created_at;
    char *updated_at;
    char *audit_hash; /* hash of the row's latest cluster_* audit event */
};

void cluster_row_release(struct cluster_row *row);
/* Deep copy src into dst (dst overwritten, not released). */
void cluster_row_copy(struct cluster_row *dst, const struct cluster_row *src);

/*
 * Read the row named name into *out (zeroed first). Returns 1 when found,
 * 0 when absent (out untouched), -1 with err (EXA_ECONFIG).
 */
int store_cluster_get(store_t *st, const char *name, struct cluster_row *out,
                      exa_error_t *err);

/*
 * All rows ordered by name: *rows (caller frees each with
 * cluster_row_release, then the array with free) and *n. 0 or -1.
 */
int store_cluster_list(store_t *st, struct cluster_row **rows, size_t *n,
                       exa_error_t *err);

/*
 * Insert or replace the whole row (every column from row except
 * audit_hash, which only store_cluster_bind_event writes; created_at is
 * kept for an existing row, set to now for a new one; updated_at = now).
 * 0 or -1 with err.
 */
int store_cluster_put(store_t *st, const struct cluster_row *row,
                      exa_error_t *err);

/*
 * Bind the row named name to its latest audit event: set audit_hash to
 * hash (64 hex digits, from audit_record). Run it in the transaction that
 * wrote the row and the event (libfleet/governance.c is the only
 * caller). 0, or -1 with err (EXA_ECONFIG; EXA_ENOTFOUND for no row).
 */
int store_cluster_bind_event(store_t *st, const char *name, const char *hash,
                             exa_error_t *err);

#endif
