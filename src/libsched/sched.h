/*
 * sched.h - the scheduler adapter: one vtable over Slurm, Flux and mock.
 *
 * An adapter talks to its scheduler only through a struct transport, so the
 * same code serves a local Slurm, a cluster over ssh and the fake transport
 * of the tests. It submits (idempotently: the job name carries the run id
 * and a lost reply is followed by a lookup, never by a blind resubmit),
 * reports status for many ids in one batched query per poll, cancels and
 * fetches logs. States follow doc/formats.md "Job states".
 */
#ifndef EXA_SCHED_H
#define EXA_SCHED_H

#include <stddef.h>

#include "libsched/resources.h"
#include "libtransport/transport.h"
#include "libutil/error.h"
#include "libutil/strbuf.h"
#include "libutil/strvec.h"

enum sched_state {
    SCHED_PENDING = 0,
    SCHED_RUNNING,
    SCHED_SUSPENDED,
    SCHED_COMPLETED,
    SCHED_FAILED,
    SCHED_CANCELLED,
    SCHED_TIMEOUT,
    SCHED_UNKNOWN,
};

/* "PENDING", ... "UNKNOWN". */
const char *sched_state_name(enum sched_state s);
/* State for a name as printed by sched_state_name (case-sensitive), or
 * SCHED_UNKNOWN. */
enum sched_state sched_state_parse(const char *name);
/* 1 for COMPLETED FAILED CANCELLED TIMEOUT. */
int sched_state_terminal(enum sched_state s);

/*
 * Slurm job state token (long or compact, `CANCELLED by 0`, truncated
 * `COMPLETIN`, `OUT_OF_ME+`) to the normalized state, per doc/formats.md.
 */
enum sched_state sched_slurm_state(const char *raw);
/* Flux state (`RUN`, `INACTIVE`, `R`, `CD`...) plus result (`COMPLETED`,
 * `FAILED`, `CANCELED`, `TIMEOUT`; may be NULL or empty). */
enum sched_state sched_flux_state(const char *state, const char *result);

/* The status of one job as the scheduler reported it. Strings are empty
 * when unknown; numbers are -1 when unknown. */
struct sched_job {
    char id[128];           /* as tracked ("123", "123_4", "ƒ2TR77Ao1") */
    enum sched_state state; /* SCHED_UNKNOWN when the scheduler has no record */
    char raw_state[64];     /* the scheduler's own word ("CANCELLED by 0") */
    char reason[128];       /* pending reason / exception note */
    int exit_code;          /* -1 unknown */
    int signal;             /* terminating signal, 0 none, -1 unknown */
    char submit[40];        /* ISO-8601 as printed, or epoch seconds (Flux) */
    char start[40];
    char end[40];
    long long elapsed_s; /* -1 unknown */
    int gpus;            /* allocated GPUs, -1 unknown */
    int cpus;            /* allocated CPUs, -1 unknown */
    int nodes;           /* allocated nodes, -1 unknown */
    char node[129];      /* where its batch script ran: Slurm's BatchHost,
                          * else the first of NodeList (sacct's, squeue's
                          * %N, scontrol's); "" unknown (Flux, mock) */
};
/* Reset j to "nothing known" for id. */
void sched_job_init(struct sched_job *j, const char *id);

struct sched_submit_req {
    const char *script_path; /* local run.sh to stage (see runscript.h) */
    const char *remote_dir;  /* directory on the cluster: run.sh and logs */
    const char *run_id;      /* [A-Za-z0-9_-]+, goes into the job name */
    const struct sched_resources *res; /* may be NULL */
};

struct sched_submit_result {
    char job_id[128];  /* first (or only) id */
    char cluster[64];  /* `N;cluster` from sbatch --parsable, else "" */
    int reused;        /* 1 when a lost reply was recovered by name lookup */
    int attempts;      /* submit commands issued (1 normally) */
    struct strvec ids; /* every id (Flux --cc arrays give several) */
    struct strvec warnings;
};
/* Free r's ids and warnings (sched_submit() initialises r, also on
 * failure, so this is always safe after it). r itself is not freed. */
void sched_submit_result_release(struct sched_submit_result *r);

/* One job of a scheduler's queue as `exa hpc queue` shows it. Strings
 * owned, NULL when the scheduler did not say. */
struct sched_queue_job {
    char *id; /* "123", "123_4", "ƒ2TR77Ao1" */
    char *name;
    char *user;
    char *state;     /* normalized: PENDING, RUNNING, ... (doc/formats.md) */
    char *raw_state; /* the scheduler's own word */
    char *partition; /* Slurm partition / Flux queue */
    long long nodes; /* node count; -1 unknown */
    /* Why the job waits, as the scheduler says it: squeue %r
     * ("Resources", "Priority", "QOSMaxJobsPerUserLimit"; squeue(1)
     * JOB REASON CODES), Flux's contextual_info of a pending job
     * ("priority-wait", "held", "depend"; flux-jobs(1)); NULL when the
     * scheduler gives none ("None", a running job). */
    char *reason;
};

/* The queue: every job the scheduler lists, in its order. */
struct sched_queue {
    struct sched_queue_job *v;
    size_t n;
    /* name records not believed (Slurm): one a job name cut short or
     * made up (two ids that differ, or an id claimed twice: that job is
     * listed, its name null). See sched_queue(). */
    size_t refused;
};
/* Free q's jobs (q itself is not freed); q is zeroed. */
void sched_queue_release(struct sched_queue *q);

struct sched;

struct sched_ops {
    const char *name; /* "slurm", "flux", "mock" */
    int (*submit)(struct sched *s, const struct sched_submit_req *req,
                  struct sched_submit_result *out, exa_error_t *err);
    /* out[i] describes ids[i]; an id the scheduler does not know is
     * SCHED_UNKNOWN. -1 only when nothing could be asked (transport).
     * A query that failed (transport error, or a scheduler command that
     * exited non-zero for another reason than not knowing an id) is
     * noted with sched_note_failure(), so UNKNOWN is never mistaken for
     * "the scheduler does not know it" during an outage. */
    int (*status_batch)(struct sched *s, const char *const *ids, size_t n,
                        struct sched_job *out, exa_error_t *err);
    int (*cancel)(struct sched *s, const char *id, exa_error_t *err);
    /* Append the job's stdout log to out. remote_dir may be NULL. */
    int (*logs)(struct sched *s, const char *id, const char *remote_dir,
                struct strbuf *out, exa_error_t *err);
    /* Free adapter-private state. */
    void (*destroy)(struct sched *s);
    /* Every job in the queue (own 0: all users; 1: the user exa runs as
     * on the cluster); see sched_queue() and sched_queue_own(). */
    int (*queue)(struct sched *s, int own, struct sched_queue *out,
                 exa_error_t *err);
};

struct sched {
    const struct sched_ops *ops;
    struct transport *t;      /* borrowed; outlives s */
    long long sacct_since;    /* epoch seconds for sacct -S; 0: now-7days */
    int submit_attempts;      /* max submit tries after lost replies (3) */
    int flux_accounting;      /* -1 unknown (probed once), 0 no, 1 yes */
    int slurm_accounting;     /* -1 unknown, 0 sacct unusable, 1 works */
    char *mock_dir;           /* mock: where job records live */
    size_t sacct_chunk_bytes; /* max bytes of ids per sacct/squeue (96 KiB) */
    size_t log_max_bytes;     /* logs keep at most this many trailing bytes
                                 (SCHED_LOG_MAX_DEFAULT) */
    int log_truncated;        /* set by sched_logs/sched_fetch_tail: 1 when
                                 the log was longer than log_max_bytes */
    int batch_failed;         /* set by sched_status_batch: 1 when one of
                                 its queries failed (see
                                 sched_status_failed) */
    exa_error_t batch_err;    /* the first such failure */
    /* 1: sched_submit() builds the submit command into dry_argv and
     * returns 0 without copying the script or running anything (no ids);
     * `--dry-run`. */
    int dry_run;
    struct strvec dry_argv; /* the command a dry run would have run */
    void *priv;
};

/*
 * New adapter of kind "slurm", "flux" or "mock" over transport t
 * (borrowed). NULL with err (EXA_EUSAGE) for another name.
 */
struct sched *sched_new(const char *kind, struct transport *t,
                        exa_error_t *err);
/*
 * The kind the environment asks for: EXAMLOPS_HPC_SCHEDULER, else the
 * legacy EXAMLOPS_SLURM_MODE (`real`/`slurm` -> slurm, `mock` -> mock),
 * else "mock". Borrowed static string or environment value.
 */
const char *sched_kind_from_env(void);
/* Free s, its adapter state and mock_dir; not the transport (borrowed).
 * NULL is accepted. */
void sched_free(struct sched *s);

/*
 * Submit one job (or one Flux --cc array) and fill out, which this
 * initialises (release it with sched_submit_result_release() either way).
 * req->script_path (local) is staged as <remote_dir>/run.sh with
 * transport_put(); logs go to <remote_dir>/<jobid>.out|err.
 *   slurm  `sbatch --parsable --job-name=<name> [resource flags]
 *          --output=... --error=... --chdir=<remote_dir> run.sh` (sbatch(1))
 * With s->dry_run nothing is copied or run: s->dry_argv gets the submit
 * command (sbatch ..., flux batch ..., bash run.sh for mock) and out no id.
 *   flux   `flux batch` or, for an array, `flux submit --cc=IDSET bash
 *          run.sh` (flux-batch(1), flux-submit(1)); always a slot count
 *          (-n1 when neither tasks nor nodes are asked) and -g per slot
 *          (sched_flux_slots()); --bank only when `flux account --help`
 *          works; the ids are the lines flux_submit_ids() accepts
 *   mock   runs `bash run.sh` at once over the transport and writes the
 *          logs and a record under s->mock_dir
 * The job name carries req->run_id (sched_job_name()); when the reply is
 * lost (transport error after the command may have run) the name is
 * looked up (`squeue --name` + `sacct --name`; `flux jobs -a --name`)
 * before another try, at most s->submit_attempts commands in all, and
 * never a new try when the lookup itself cannot run. Returns 0 with
 * out->job_id set (out->reused = 1 when recovered by the lookup), or -1
 * with err: EXA_EUSAGE for a bad run id, resource or empty remote_dir,
 * EXA_ETRANSPORT/EXA_ETIMEOUT when the transport failed, EXA_ESCHED when
 * the scheduler refused ("sbatch on 'HOST' exited 1: MESSAGE") or printed
 * no id, EXA_ECONFIG (mock) when a log or record cannot be written.
 */
int sched_submit(struct sched *s, const struct sched_submit_req *req,
                 struct sched_submit_result *out, exa_error_t *err);

/*
 * Status of n jobs at once: out[i] (caller-owned array of n) describes
 * ids[i]; every out[i] is reset with sched_job_init() first, and an id the
 * scheduler does not know stays SCHED_UNKNOWN (never an error). Commands,
 * ids chunked below s->sacct_chunk_bytes per command line:
 *   slurm  one `squeue -j IDS -o FMT` (squeue(1), header kept), then
 *          for ids gone from the queue or ended one `sacct -X --parsable2
 *          --delimiter=US -S SINCE -j IDS -o FIELDS` (sacct(1), header
 *          kept); without accounting one `scontrol show job -o`
 *          (scontrol(1)); all read by parse_slurm.h
 *   flux   one `flux jobs --no-header -o FLUX_JOBS_STATUS_FORMAT IDS`
 *          (flux-jobs(1)); when it lists pending jobs, one `flux jobs
 *          --json IDS` of those for their reason (the format has no such
 *          field); then `flux job info ID eventlog` (flux-job(1),
 *          RFC 18) per id it no longer lists, and `flux job info ID R`
 *          (RFC 20) once per started job for nodes, cpus and gpus; all
 *          read by parse_flux.h
 *   mock   reads the records, runs nothing
 * Times in out are as the scheduler prints them (Slurm ISO-8601 local),
 * or UTC "...Z" (Flux, converted from epoch seconds; mock); absurd values are
 * left empty. Returns 0, or -1 with err (the transport's) only when no command
 * could be run at all.
 */
int sched_status_batch(struct sched *s, const char *const *ids, size_t n,
                       struct sched_job *out, exa_error_t *err);

/*
 * After sched_status_batch(): 1 when one of its queries failed (a
 * transport error or timeout: EXA_ETRANSPORT/EXA_ETIMEOUT; a scheduler
 * command that exited non-zero with something else than "unknown job
 * id", e.g. squeue while slurmctld is down: EXA_ESCHED with the
 * scheduler's own message), with that failure copied into err (may be
 * NULL); 0 when every query answered. An UNKNOWN job of a failed batch
 * was not observed: it is no evidence that the scheduler does not know
 * it (libsched/tracker.c does not count it).
 */
int sched_status_failed(const struct sched *s, exa_error_t *err);

/* For adapters: note a failed status query (err copied; the first one
 * of a batch is kept). */
void sched_note_failure(struct sched *s, const exa_error_t *err);

/*
 * Cancel job id: `scancel -- ID` (scancel(1)), `flux cancel -- ID`
 * (flux-cancel(1)): the id after `--`, never an option; mock marks a held
 * (PENDING) record CANCELLED, and a finished one is left as it is. Returns 0,
 * or -1 with err: EXA_ESCHED when the command exits non-zero ("'scancel' on
 * 'HOST' exited 1: ..."), EXA_ENOTFOUND for an unknown mock id, the transport's
 * code otherwise.
 */
int sched_cancel(struct sched *s, const char *id, exa_error_t *err);

/*
 * Append at most the last s->log_max_bytes bytes of job id's stdout log
 * to out (caller-owned) and set s->log_truncated to 1 when bytes before
 * them were dropped. The log is <remote_dir>/<id>.out read with
 * sched_fetch_tail(); when remote_dir is NULL or empty, Slurm asks
 * `scontrol show job -o ID` for StdOut, mock reads the directory from its
 * record, and Flux reads flux batch's default `flux-<ƒid>.out` in the
 * job's submit cwd (`flux jobs --json ID`; never `flux job attach`,
 * which prints nothing for a batch job); Flux's <id> in a file name is
 * the ƒ-prefixed F58 form {{id}} expands to. Returns 0, or -1 with err:
 * EXA_ENOTFOUND when the log (or the job) does not exist,
 * EXA_ESCHED/EXA_ETRANSPORT otherwise.
 */
int sched_logs(struct sched *s, const char *id, const char *remote_dir,
               struct strbuf *out, exa_error_t *err);

/*
 * The scheduler's queue, all users, into out (initialised here; release
 * with sched_queue_release() either way). Commands:
 *   slurm  two: `squeue -h -o SLURM_SQUEUE_SAFE_FORMAT`, the fields shown
 *          but the name, none of them a user's text (squeue_parse_safe;
 *          a record that is not whole fails the call, EXA_ESCHED),
 *          then, when it listed a job, `squeue -h -o
 *          SLURM_SQUEUE_NAMES_FORMAT` (squeue_names_parse): Slurm takes
 *          any byte but NUL in a job name, so a name can cut its record
 *          and make up others; the rows come from the first listing only
 *          and a job's name from a record nothing else claims, else null
 *          (out->refused counts what was left out)
 *   flux   one `flux jobs -A --json --count=0` (flux-jobs(1); --json: a
 *          name whole, where the default table cuts it to ten columns,
 *          "exa-01234+"; --count=0: every job, not the first 1,000),
 *          read by flux_jobs_parse(); output
 *          that is not a JSON object fails the call (EXA_ESCHED). A
 *          pending job's reason is the default table's INFO wording
 *          ("held", "priority-hold", "priority-wait", "depends:...")
 *   mock   runs nothing: the records under s->mock_dir that are not in a
 *          terminal state (held submissions), sorted by id
 * Returns 0, or -1 with err: the transport's code when the command could
 * not run, EXA_ESCHED when it exited non-zero or printed what the parser
 * refuses, EXA_ECONFIG (mock) when a record cannot be read.
 */
int sched_queue(struct sched *s, struct sched_queue *out, exa_error_t *err);

/*
 * sched_queue() for the jobs of the user exa runs as on the cluster only:
 * slurm the same two listings with `--me` (Slurm >= 20.11), flux
 * `flux jobs --json --count=0` (without -A), mock the same records. What exa
 * acts on from the queue (the provisioner's orphan and shutdown cancels, by job
 * name) comes from here: only exa's own jobs are listed, so another user's job
 * can neither take one of exa's names nor, by a name that claims an id
 * twice, blank one. Same returns as sched_queue().
 */
int sched_queue_own(struct sched *s, struct sched_queue *out, exa_error_t *err);

/* The ops->queue of each adapter (libsched/queue.c); own as in struct
 * sched_ops. */
int sched_slurm_queue(struct sched *s, int own, struct sched_queue *out,
                      exa_error_t *err);
int sched_flux_queue(struct sched *s, int own, struct sched_queue *out,
                     exa_error_t *err);
int sched_mock_queue(struct sched *s, int own, struct sched_queue *out,
                     exa_error_t *err);

/* "slurm", "flux" or "mock" (static string, never NULL). */
const char *sched_name(const struct sched *s);

/*
 * Job directory for a run on the cluster: EXAMLOPS_HPC_REMOTE_WORKDIR,
 * else EXAMLOPS_HPC_WORKDIR, else `$HOME/.local/share/examlops/jobs` of
 * the target (asked over the transport for ssh), then "/<run_id>".
 * malloc'ed, or NULL with err.
 */
char *sched_remote_jobdir(struct sched *s, const char *run_id,
                          exa_error_t *err);

/* A fresh run id: 12 lower-case hex digits from /dev/urandom. */
void sched_new_run_id(char out[13]);

/* Job name carrying the run id: "exa-<run_id>", or "<job_name>.exa-<run_id>".
 */
char *sched_job_name(const char *job_name, const char *run_id);

/* Exposed for tests: split ids into chunks whose comma-joined length stays
 * under max_bytes; pushes one joined string per chunk onto out. */
void sched_chunk_ids(const char *const *ids, size_t n, size_t max_bytes,
                     struct strvec *out);

/* Default cap of a fetched log: the last 8 MiB. */
#define SCHED_LOG_MAX_DEFAULT ((size_t)8 << 20)

/*
 * Append the last max_bytes bytes (> 0) of the file remote on the cluster
 * to out, without holding more than max_bytes + 1 of them: runs
 * `tail -c MAX+1 -- REMOTE` (tail(1), POSIX -c) over the transport, so
 * the transport's output cap bounds it. Sets s->log_truncated to 1 when
 * the file was longer (the first bytes were dropped), else 0. -1 with err:
 * EXA_ENOTFOUND when the file is absent, EXA_ETRANSPORT when tail fails
 * otherwise or the transport does.
 */
int sched_fetch_tail(struct sched *s, const char *remote, size_t max_bytes,
                     struct strbuf *out, exa_error_t *err);

/* Append all bytes of the file remote on the cluster to out (via
 * transport_get and a private temp file in /tmp, removed after). Not
 * capped beyond the transport's own limit: for logs use
 * sched_fetch_tail(). 0, or -1 with err; EXA_ENOTFOUND when it is absent. */
int sched_fetch_file(struct sched *s, const char *remote, struct strbuf *out,
                     exa_error_t *err);

/*
 * Index of tracked ids for matching scheduler rows in O(1): a hash of
 * ids[i] (or of key(ids[i]) when key is given) to i, with a chain for ids
 * tracked twice. For adapters.
 */
struct sched_idmap {
    size_t cap; /* slots, a power of two */
    long *slot; /* index into ids, -1 empty */
    long *next; /* next index with the same key, -1 end */
    const char *const *ids;
    const char *(*key)(const char *);
};
/* Fill m for ids[0..n) (borrowed: they must outlive m). key may be NULL
 * (the id itself). Release with sched_idmap_free(). */
void sched_idmap_build(struct sched_idmap *m, const char *const *ids, size_t n,
                       const char *(*key)(const char *));
/* First index whose key equals s[0..len), or -1; follow m->next[i]. */
long sched_idmap_find(const struct sched_idmap *m, const char *s, size_t len);
/* Free m's arrays (not the ids). */
void sched_idmap_free(struct sched_idmap *m);

/* The mock adapter's record directory: s->mock_dir, set on first use from
 * EXAMLOPS_HPC_WORKDIR/mock_jobs, else ${XDG_DATA_HOME:-~/.local/share}/
 * examlops/mock_jobs. Borrowed (owned by s). */
const char *sched_mock_dir(struct sched *s);

/* Internal constructors (one per adapter file): set s->ops. Called only
 * by sched_new(). */
void sched_slurm_init(struct sched *s);
void sched_flux_init(struct sched *s);
void sched_mock_init(struct sched *s);

#endif
