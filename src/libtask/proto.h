/*
 * proto.h - the worker protocol's messages (shared/WORKERS.md §6): the
 * decoder the engine runs on every request body and path that arrives on
 * the worker listener, the task spec both sides share, and the encoders
 * the worker uses.
 *
 * Everything here reads untrusted bytes: bodies are JSON (RFC 8259) read
 * by jansson with JSON_REJECT_DUPLICATES, capped at TP_MAX_BODY, and every
 * member is checked for type and range; unknown members are ignored so
 * that a newer worker of the same protocol still works. Names (worker
 * ids, artifact names, labels) are [A-Za-z0-9._-]{1,128}. A decoder
 * returns 0 and fills its struct (release it with the matching _release),
 * or -1 with err (EXA_EPARSE, "register: 'capacity' must be an integer
 * between 1 and 1024") and leaves nothing allocated.
 */
#ifndef EXA_TASK_PROTO_H
#define EXA_TASK_PROTO_H

#include <jansson.h>
#include <stddef.h>

#include "libutil/error.h"

#define TP_PROTOCOL 1
#define TP_MAX_BODY (1u << 20)
#define TP_NAME_MAX 128
#define TP_MAX_ARGV 4096
#define TP_TAIL_MAX 4096

/* 1 when s is a name: [A-Za-z0-9._-]{1,128}, not "." or "..". */
int tp_name_ok(const char *s);

/* ---- the task spec (tasks.spec in platform.db, lease.spec) ---- */
struct tp_spec {
    char **argv; /* NULL-terminated, argc >= 1 */
    size_t argc;
    char **env; /* "NAME=value", NULL-terminated (may be empty) */
    size_t nenv;
    char *cwd; /* NULL: the worker's per-attempt directory */
    double timeout_s;
    long long cpus, gpus, ram_mb;
    char **labels; /* names, NULL-terminated */
    size_t nlabels;
    char **outputs; /* artifact names the worker uploads after exit */
    size_t noutputs;
    char *outputs_dir; /* a name: the outputs are read from this directory
                          under the working directory; NULL: from the
                          working directory itself */
    int noop;          /* "kind":"noop": the worker runs nothing (benchmarks) */
};
void tp_spec_release(struct tp_spec *s);
/*
 * Decode a spec object (borrowed). argv: non-empty array of strings with
 * no NUL; env: object of string values with names [A-Za-z_][A-Za-z0-9_]*;
 * cwd: absolute path; timeout_s: 1..2592000 (30 days, default 3600);
 * cpus 1..4096 (default 1), gpus 0..1024, ram_mb 0..2^40; labels and
 * outputs: arrays of names; outputs_dir: a name (absent: null).
 */
int tp_spec_decode(const json_t *obj, struct tp_spec *out, exa_error_t *err);
/* New reference: the canonical object of s (what tasks.spec stores). */
json_t *tp_spec_encode(const struct tp_spec *s);
/* Comma-joined labels of s, malloc'ed ("" for none). */
char *tp_spec_labels(const struct tp_spec *s);

/* ---- paths ---- */
enum tp_route {
    TP_PING = 1,
    TP_REGISTER,
    TP_HEARTBEAT,
    TP_LEASE,
    TP_RESULTS,
    TP_DRAIN,
    TP_BYE,
    TP_ARTIFACT, /* PUT /v1/tasks/T/attempts/A/artifacts/NAME */
};
struct tp_path {
    enum tp_route route;
    char worker_id[TP_NAME_MAX + 1];
    long long task, attempt;
    char name[TP_NAME_MAX + 1];
    double wait_s; /* lease ?wait=S (0..60, default -1: the engine's) */
};
/*
 * Match method and path (without query) against the routes of §6.1;
 * query is the raw query string or NULL (only "wait=N" is read, for the
 * lease). Returns 0, 1 when the path is a route but the method is not
 * (405), or -1 with err (404: not a route, or a bad id or name).
 */
int tp_parse_path(const char *method, const char *path, const char *query,
                  struct tp_path *out, exa_error_t *err);

/* ---- bodies ---- */
struct tp_register {
    long long protocol;
    char *worker_id;
    char *join_token;     /* NULL when rejoining with the session */
    char *register_nonce; /* 16..64 chars of [A-Za-z0-9_-] */
    char *exa_version, *host, *node, *slurm_job_id;
    long long pid, restart_count;
    double end_time; /* 0 if unknown */
    long long cpus, gpus, ram_mb, capacity;
    char **labels;
    size_t nlabels;
};
void tp_register_release(struct tp_register *r);
/* protocol is required and read first: a body whose protocol is not
 * TP_PROTOCOL still decodes protocol (so the engine can answer 426) and
 * then fails with EXA_EUSAGE "protocol N is not supported". */
int tp_decode_register(const char *body, size_t len, struct tp_register *out,
                       exa_error_t *err);

struct tp_running {
    long long task, attempt;
    int pid_alive;
};
struct tp_heartbeat {
    struct tp_running *running;
    size_t nrunning; /* at most 4096 */
    long long free_slots;
};
void tp_heartbeat_release(struct tp_heartbeat *h);
int tp_decode_heartbeat(const char *body, size_t len, struct tp_heartbeat *out,
                        exa_error_t *err);

/* lease body {"want": n}: 1..256 (default 1); an empty body is {} */
int tp_decode_lease(const char *body, size_t len, long long *want,
                    exa_error_t *err);

struct tp_artifact_ref {
    char *name;
    char sha256[65]; /* 64 lower-case hex digits */
    long long size;
};
struct tp_result {
    long long task, attempt;
    char *idem; /* must equal "task:attempt" */
    long long exit_code, signal;
    double started_at, ended_at;
    char *stdout_tail, *stderr_tail; /* at most TP_TAIL_MAX bytes each */
    struct tp_artifact_ref *artifacts;
    size_t nartifacts;
};
struct tp_results {
    struct tp_result *v;
    size_t n; /* 1..256 */
};
void tp_results_release(struct tp_results *r);
int tp_decode_results(const char *body, size_t len, struct tp_results *out,
                      exa_error_t *err);

/* drain / bye body {"reason": "..."} (a word, at most 64 chars; default
 * "unspecified"); reason gets a malloc'ed copy. */
int tp_decode_reason(const char *body, size_t len, char **reason,
                     exa_error_t *err);

/* 1 when s is 64 lower-case hex digits. */
int tp_sha256_ok(const char *s);

#endif
