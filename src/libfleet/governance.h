/*
 * governance.h - who may schedule where: the approval state machine over
 * the clusters table, bound to the connection identity, merged with the
 * clusters.yaml definitions (doc/design.md §1.2, §4).
 *
 * States and the only transitions:
 *
 *   (none)   --connect-->  PENDING
 *   PENDING  --connect-->  PENDING      (capabilities refreshed)
 *   PENDING  --approve-->  ACTIVE
 *   PENDING  --reject--->  REJECTED
 *   ACTIVE   --connect-->  ACTIVE       (same identity: a re-probe, never
 *                                         revokes)
 *   ACTIVE   --reject--->  REJECTED
 *   ACTIVE   --identity->  PENDING      (host, port, user, key fingerprint,
 *   PENDING  --identity->  PENDING       transport or pinned host key
 *   REJECTED --identity->  REJECTED      changed, by connect or YAML edit)
 *   REJECTED --connect-->  PENDING      (only a new connect revives it)
 *
 * Every transition and every identity change writes one hash-chained
 * audit event (libstore/audit.h) inside the same SQLite transaction as
 * the row change, and binds the row to it (clusters.audit_hash; the
 * event records the row's digest), so the log and the state cannot
 * disagree unnoticed: a row changed behind exa's back (sqlite3 UPDATE)
 * fails governance_verify_cluster and is treated as PENDING by every
 * gate (fleet_load, fleet_require_active) until a governance decision
 * (approve, reject, connect) rewrites it through this API.
 */
#ifndef EXA_GOVERNANCE_H
#define EXA_GOVERNANCE_H

#include <stddef.h>

#include "libfleet/registry.h"
#include "libstore/clusters.h"
#include "libstore/store.h"

enum cluster_state {
    CLUSTER_NONE = -1, /* not registered */
    CLUSTER_PENDING = 0,
    CLUSTER_ACTIVE,
    CLUSTER_REJECTED,
};

enum gov_event {
    GOV_CONNECT,
    GOV_APPROVE,
    GOV_REJECT,
    GOV_IDENTITY_CHANGE,
};

/* "PENDING" / "ACTIVE" / "REJECTED" ("NONE" for CLUSTER_NONE). */
const char *cluster_state_name(enum cluster_state s);
/* Parse a state word; unknown text gives CLUSTER_NONE. */
enum cluster_state cluster_state_parse(const char *s);

/*
 * The pure transition function. Sets *to and returns 0 when event is
 * allowed from `from`, else -1 with err (EXA_EFAIL) explaining why, e.g.
 * "cluster 'x' is REJECTED; only a new 'exa hpc connect' returns it to
 * PENDING". name is used only in messages.
 */
int gov_transition(const char *name, enum cluster_state from, enum gov_event ev,
                   enum cluster_state *to, exa_error_t *err);

/* A cluster as the rest of exa sees it: the YAML definition (wins for
 * definition fields) over the DB copy, and the DB's governance state. */
struct fleet_cluster {
    struct cluster_def def;   /* merged definition; def.ssh_port >= 1 */
    struct cluster_row row;   /* the DB row (row.name NULL when absent) */
    enum cluster_state state; /* PENDING when only in clusters.yaml, or
                                 when the row disagrees with its audit
                                 chain (then audit_mismatch is set) */
    int in_yaml, in_db;
    char *audit_mismatch; /* governance_verify_cluster's text, or NULL */
};

struct fleet {
    struct fleet_cluster *v; /* sorted by name */
    size_t nr;
};

/*
 * Reconcile clusters.yaml at regpath with the table (see gov_reconcile),
 * then build the merged view: the sorted union of names. Returns 0 or -1
 * with err. Release with fleet_release().
 */
int fleet_load(store_t *st, const char *regpath, struct fleet *out,
               exa_error_t *err);
void fleet_release(struct fleet *f);
/* Borrowed pointer to the named cluster, or NULL. */
struct fleet_cluster *fleet_find(const struct fleet *f, const char *name);

/*
 * Compare every clusters.yaml definition with its row. A YAML cluster
 * with no row gets a PENDING row (requested_by "clusters.yaml"); a row
 * whose identity (host, ssh_port, ssh_user, ssh_key path, the key's
 * fingerprint when "<ssh_key>.pub" is readable, transport) differs from
 * the YAML takes the YAML identity and follows GOV_IDENTITY_CHANGE, with
 * an audit event `cluster_identity_changed` listing old and new values.
 * actor is recorded. *changed (may be NULL) counts rows changed.
 * 0 or -1 with err.
 */
int gov_reconcile(store_t *st, const char *regpath, const char *actor,
                  int *changed, exa_error_t *err);

struct gov_connect_req {
    const char *name;
    const char *scheduler; /* probed or forced; "unknown" when none */
    const char *transport; /* ssh | local */
    const char *host;
    const char *ssh_user;             /* may be NULL */
    int ssh_port;                     /* 22 when 0 */
    const char *ssh_key;              /* path, may be NULL */
    const char *key_fingerprint;      /* "SHA256:..." or NULL */
    const char *host_key_fingerprint; /* "SHA256:..." or NULL */
    const char *capabilities;         /* JSON text or NULL */
};

struct gov_result {
    enum cluster_state from, to;
    int identity_changed; /* 1 when connect changed an existing identity */
};

/*
 * Register or re-probe a cluster: under the registry's exclusive lock,
 * writes its definition into clusters.yaml (other YAML fields of the
 * cluster kept) and its row (GOV_CONNECT; an existing row whose identity
 * differs first takes GOV_IDENTITY_CHANGE), with audit events
 * `cluster_identity_changed` (when so) and `cluster_connect_requested`.
 * The table commit follows the YAML rename, so a crash between them
 * leaves a YAML-only cluster, which reconciles as PENDING. 0 or -1.
 */
int gov_connect(store_t *st, const char *regpath,
                const struct gov_connect_req *req, const char *actor,
                struct gov_result *res, exa_error_t *err);

/*
 * Approve (GOV_APPROVE, audit `cluster_approved` with the host) or reject
 * (GOV_REJECT, audit `cluster_rejected` with the reason). seen, when not
 * NULL, is the row the caller showed the operator: if the identity in
 * the table differs now, nothing changes and err says so (EXA_EFAIL).
 * approved_by is the actor for both (the reference's semantics); reject
 * stores reason. Unknown name: EXA_ENOTFOUND. 0 or -1.
 */
int gov_approve(store_t *st, const char *regpath, const char *name,
                const struct cluster_row *seen, const char *actor,
                struct gov_result *res, exa_error_t *err);
int gov_reject(store_t *st, const char *regpath, const char *name,
               const char *reason, const struct cluster_row *seen,
               const char *actor, struct gov_result *res, exa_error_t *err);
/*
 * gov_approve that also records reason (may be NULL) as "reason" in the
 * `cluster_approved` event's details (MCP's hpc_approve_cluster, whose
 * caller says why); the row's reason column is cleared as by gov_approve.
 */
int gov_approve_reason(store_t *st, const char *regpath, const char *name,
                       const char *reason, const struct cluster_row *seen,
                       const char *actor, struct gov_result *res,
                       exa_error_t *err);

/*
 * The `exa hpc connect` command line that registers d's connection
 * (again): "exa hpc connect HOST --name NAME [--user U] [--key K]
 * [--port P] [--scheduler S]", --port only when not 22 and --scheduler
 * only for slurm/flux/mock; every value shell-quoted (libutil/shquote.h)
 * so the line can be pasted into sh. A local cluster (no host) gets
 * HOST "local". Caller frees.
 */
char *fleet_connect_command(const struct cluster_def *d);

/*
 * What a user runs next to get c scheduling, as one line for a hint, or
 * NULL when c is ACTIVE and agrees with its audit chain:
 *   PENDING:   "a sysadmin approves it: exa hpc approve NAME"
 *   REJECTED:  "connect it again (it becomes PENDING): <connect line>,
 *               then exa hpc approve NAME"
 *   mismatch:  "exa hpc audit --verify"
 * (doc/hpc-fleet.md). Caller frees.
 */
char *fleet_next_step(const struct fleet_cluster *c);

/*
 * Require name to be ACTIVE in the merged view. 0, or -1 with err:
 * EXA_ENOTFOUND "unknown cluster: 'X' (run 'exa hpc connect' first)" or
 * EXA_ENOTAPPROVED "cluster 'X' is PENDING — a sysadmin must approve it
 * ('exa hpc approve X') before jobs can be scheduled on it"; for a
 * REJECTED cluster the text names the connect line (fleet_next_step()).
 */
int fleet_require_active(const struct fleet *f, const char *name,
                         exa_error_t *err);

/*
 * The binding check every gate makes: does row (as read from the table,
 * audit_hash included) agree with the audit chain? It does when row's
 * audit_hash is the hash of the newest cluster_* event targeting
 * row->name, that event is intact (its hash recomputes), the state the
 * event left the cluster in is row->state, and the row's digest
 * (gov_row_digest) is the "row_sha256" the event recorded (events written
 * before the binding existed carry none; then the state alone is
 * compared). Returns 0 when it agrees; -1 with err EXA_ENOTAPPROVED
 * "cluster 'X' does not match its audit chain: WHY; it is treated as
 * PENDING ('exa hpc audit --verify')" when it does not (callers treat the
 * cluster as PENDING: nothing may be scheduled there); -1 with
 * EXA_ECONFIG on a database error. Reads only; run it inside the
 * caller's transaction to check what that transaction will act on.
 */
int governance_verify_cluster(store_t *st, const struct cluster_row *row,
                              exa_error_t *err);

/* One thing `exa hpc audit --verify` found wrong. */
struct gov_audit_problem {
    char *cluster;      /* the cluster row named, or NULL for the chain */
    long long event_id; /* the event concerned, 0 when none */
    char *message;      /* one line, as in exa_error_t */
};

struct gov_audit_report {
    long long events;        /* events in the chain (when it verifies) */
    size_t clusters_checked; /* cluster rows compared with the chain */
    struct gov_audit_problem *v;
    size_t nr; /* 0: everything agrees */
};

/*
 * Verify the whole log: the hash chain and its head (audit_verify: a
 * broken link, an edited event, a deleted tail) and every clusters row
 * against it (governance_verify_cluster). Fills *rep (release with
 * gov_audit_report_release) and returns 0 whether or not it found
 * problems; -1 with err (EXA_ECONFIG) when the database cannot be read.
 */
int gov_audit_verify(store_t *st, struct gov_audit_report *rep,
                     exa_error_t *err);
void gov_audit_report_release(struct gov_audit_report *rep);

/*
 * SHA-256 (64 hex digits + NUL into hex) of the canonical JSON of row's
 * governed fields: name, state, scheduler, transport, host, ssh_port
 * (22 for none), ssh_user, ssh_key, key_fingerprint,
 * host_key_fingerprint, approved_by (NULL and "" alike). Recorded as
 * "row_sha256" in every cluster_* event's details.
 */
void gov_row_digest(const struct cluster_row *row, char hex[65]);

/*
 * OpenSSH's key fingerprint ("SHA256:" + unpadded base64 of the SHA-256
 * of the decoded key blob, as `ssh-keygen -lf` prints it) of one public
 * key line "TYPE BASE64 [comment]" (also a known_hosts line "HOST TYPE
 * BASE64"). Returns malloc'ed text or NULL with err (EXA_EPARSE).
 */
char *fleet_pubkey_fingerprint(const char *line, exa_error_t *err);

/*
 * Fingerprint of the first key in a file of public key lines (a .pub
 * file, or ssh-keyscan output / known_hosts; '#' lines skipped). NULL
 * with err (EXA_ECONFIG unreadable, EXA_EPARSE no key).
 */
char *fleet_pubkey_file_fingerprint(const char *path, exa_error_t *err);

/*
 * The fingerprint of the host key exa pins from ssh-keyscan output or a
 * known_hosts file's text: the ssh-ed25519 key when offered (OpenSSH's
 * preferred type), else the first key line. NULL with err (EXA_EPARSE).
 */
char *fleet_host_key_fingerprint(const char *text, exa_error_t *err);

#endif
