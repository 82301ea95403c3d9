/*
 * parse_slurm.h - Slurm job-side parsers: squeue, sacct, scontrol show job
 * -o, sbatch; and the job state table.
 *
 * Contracts and normalized values: doc/formats.md "Jobs", "sbatch"
 * and "Job states". Sources of the formats: squeue(1) "JOB STATE CODES"
 * and -o/-O field names, sacct(1) "Job Accounting Fields" and
 * --parsable2, scontrol(1) show job, sbatch(1) --parsable.
 */
#ifndef EXA_PARSE_SLURM_H
#define EXA_PARSE_SLURM_H

#include <jansson.h>
#include <stddef.h>

#include "libutil/arena.h"
#include "libutil/cmdspec.h"
#include "libutil/error.h"
#include "libutil/jsonw.h"
#include "libutil/strvec.h"

/*
 * exa's own query formats. squeue: `squeue -o SLURM_SQUEUE_FORMAT` (header
 * kept): 0x1E before each record and 0x1F between fields, so job names,
 * reasons and comments may hold '|' and blanks; columns are found by their
 * header names, never by position. Slurm takes any byte but NUL in a job
 * name, 0x1E, 0x1F and newlines included, so a name can cut its record
 * and make up others: the format ends with the job id once more, and
 * without its header (`squeue -h`) a record whose first and last fields
 * differ is no job but an "id_mismatch" error. That stops the made-up
 * record a name's tail closes, not one whole inside the name, so exa asks
 * with this format only where Slurm filters by the exact name (the lookup
 * by name); the queue lists every job by SLURM_SQUEUE_SAFE_FORMAT, with
 * no name in it, and takes names from SLURM_SQUEUE_NAMES_FORMAT.
 * sacct: `sacct --parsable2
 * --delimiter=SLURM_SACCT_DELIMITER -o SLURM_SACCT_FIELDS` (header kept).
 * sinfo: `sinfo -N -o SLURM_SINFO_FORMAT` (header kept).
 */
#define SLURM_SQUEUE_FORMAT                                                    \
    "\x1e%i\x1f%T\x1f%M\x1f%l\x1f%L\x1f%S\x1f%e\x1f%V\x1f%D\x1f%C\x1f%P\x1f"   \
    "%a\x1f%u\x1f%j\x1f%r\x1f%N\x1f%b\x1f%i"
/* The queue's two listings (sched_queue()): the fields it shows but the
 * name, none of them text a user sets (ids, states, partition and user
 * names, Slurm's reason words, node names: not the account, which a
 * cluster without association enforcement keeps as the user typed it,
 * nor the TRES a user asked for), closed by the id again; then only the
 * ids and names, read by squeue_names_parse(). */
#define SLURM_SQUEUE_SAFE_FORMAT "\x1e%i\x1f%T\x1f%P\x1f%u\x1f%r\x1f%N\x1f%i"
#define SLURM_SQUEUE_NAMES_FORMAT "\x1e%i\x1f%j\x1f%i"
#define SLURM_SACCT_DELIMITER "\x1f"
#define SLURM_SACCT_FIELDS                                                     \
    "JobID,JobIDRaw,State,ExitCode,Start,End,Submit,ElapsedRaw,AllocTRES,"     \
    "NodeList,Partition,Account,User,JobName,NCPUS,TimelimitRaw"
#define SLURM_SINFO_FORMAT "%N|%c|%m|%G|%T|%P|%C"

/*
 * Normalize a Slurm job state token, long ("OUT_OF_MEMORY") or compact
 * ("OOM"), to one of PENDING, RUNNING, SUSPENDED, COMPLETED, FAILED,
 * CANCELLED, TIMEOUT, UNKNOWN (static strings). Only the first word counts
 * ("CANCELLED by 0"); a trailing '+' (truncated column) is removed and a
 * truncated long name resolves by unique prefix of at least 4 characters
 * ("COMPLETIN" -> COMPLETING). If raw is not NULL, *raw receives a
 * malloc'ed copy of the token with blanks trimmed (NULL for a NULL token).
 * Never fails: unknown tokens give "UNKNOWN".
 */
const char *slurm_job_state_normalize(const char *token, char **raw);

/* Non-zero for the terminal states COMPLETED, FAILED, CANCELLED, TIMEOUT. */
int slurm_job_state_terminal(const char *normalized);

/* Optional fields a record carries (set when the column was printed). */
enum slurm_job_have {
    SJ_PARTITION = 1 << 0,
    SJ_ACCOUNT = 1 << 1,
    SJ_USER = 1 << 2,
    SJ_NAME = 1 << 3,
    SJ_REASON = 1 << 4,
    SJ_NODELIST = 1 << 5,
    SJ_NCPUS = 1 << 6,
    SJ_TIME_LIMIT = 1 << 7,
    SJ_TIME_LEFT = 1 << 8,
    SJ_SUBMIT = 1 << 9,
    SJ_TOTAL_CPU = 1 << 10,
    SJ_MAX_RSS = 1 << 11,
    SJ_BATCH_HOST = 1 << 12,
    SJ_JOB_ID_RAW = 1 << 13,
    SJ_CLUSTER = 1 << 14,
};

struct slurm_job {
    char *id;            /* as printed: 123, 123_4, 123_[5-9%2], 93+0 */
    char *job_id, *step; /* steps only: "846_0", "batch" */
    char *array_job_id, *array_task; /* "1080", "[5-1024]" or "4" */
    long long *array_task_ids;
    size_t n_array_task_ids;     /* NULL: not a range */
    long long array_task_count;  /* 0: not a range */
    long long array_max_running; /* 0: no %N throttle */
    char *het_job_id;
    long long het_offset; /* het_job_id NULL: none */
    const char *state;    /* normalized (static); NULL: no state column */
    char *raw_state;      /* NULL: no state column */
    int has_exit;
    int exit_code;
    int has_signal;
    int signal;
    char *start, *end, *submit; /* ISO as printed, or UTC "...Z" from epoch */
    int has_elapsed;
    double elapsed_s;
    int has_gpus;
    long long gpus;
    unsigned have; /* enum slurm_job_have */
    char *partition, *account, *user, *name, *reason, *batch_host, *job_id_raw,
        *max_rss, *cluster;
    struct strvec nodelist; /* expanded hostlist; in a parse result its
                             * array and names live in slurm_jobs.strings
                             * (alloc 0): read it, never push on or clear
                             * it */
    long long ncpus;
    int has_time_limit;
    long long time_limit_s;
    int has_time_left;
    long long time_left_s;
    int has_total_cpu;
    double total_cpu_s;
    int has_nnodes;
    long long nnodes; /* NODES, NNodes, NumNodes */
    char *std_out;    /* scontrol StdOut= path; NULL when not printed
                       * (not part of the doc/formats.md JSON) */
    /* the copy of the row the record's cells point into, or NULL: a
     * string at [text, text + text_len] is followed, past its NUL, by
     * at least 16 readable bytes (slurm_table.h SLURM_ROW_PAD), and may
     * be scanned 16 bytes at a time; only a read hint, in the result's
     * strings like the rest */
    const char *text;
    size_t text_len;
    /* 1: the record's closing id (SLURM_SQUEUE_FORMAT's last field, role
     * JOBID_END of its headerless layout) is not its first: a record a
     * job name made up, filed as an "id_mismatch" error, never a job */
    int id_mismatch;
};

struct slurm_rec_error {
    long record;      /* 1-based data record */
    const char *kind; /* "field_count_mismatch", "id_mismatch" */
    long expected_fields, got_fields;
    char *id; /* job id if readable, else NULL */
};

/*
 * A parse result. The strings of every record (struct slurm_job's char *
 * fields, array_task_ids, and the nodelist's array and names) live in
 * strings, freed with the result by slurm_jobs_free: copy what must
 * outlive it.
 */
struct slurm_jobs {
    struct slurm_job *jobs;
    size_t njobs, jobs_alloc;
    struct slurm_job *steps;
    size_t nsteps, steps_alloc;
    struct slurm_rec_error *errors;
    size_t nerrors, errors_alloc;
    struct arena strings; /* the records' strings (see above) */
};

/*
 * Parse squeue output: a header-based format (columns found by header
 * name: JOBID, ST/STATE, TIME, START_TIME, END_TIME, TRES_PER_NODE, ...),
 * 0x1E/0x1F delimiter-safe records (SLURM_SQUEUE_FORMAT, with or without
 * its header), other well-known headerless formats, or
 * `scontrol show job -o` lines. Records whose field count differs from
 * the header are not reported as jobs but listed in jobs->errors.
 * Lines of a Slurm client's error text ("slurm_load_jobs error: Invalid
 * job id specified") are never rows. Returns 0, or -1 with err and *kind:
 * "slurm_error" (EXA_ESCHED) when the input holds only such text,
 * "parse_error" otherwise. jobs must be freed either way.
 */
int squeue_parse(const char *buf, size_t len, struct slurm_jobs *jobs,
                 const char **kind, exa_error_t *err);

/*
 * squeue_parse for `squeue -h -o SLURM_SQUEUE_FORMAT` output (exa's own
 * records without their header, as the queue op and the lookup by name
 * run it): the columns are that format's, never guessed from the values,
 * so rows a job name made up cannot steer them; a record of another
 * field count is a "field_count_mismatch" error and one whose closing id
 * is not its own an "id_mismatch" error. Same returns as squeue_parse.
 */
int squeue_parse_own(const char *buf, size_t len, struct slurm_jobs *jobs,
                     const char **kind, exa_error_t *err);

/* squeue_parse_own for `squeue -h -o SLURM_SQUEUE_SAFE_FORMAT` (no name
 * column: every job's name comes from squeue_names_parse()). */
int squeue_parse_safe(const char *buf, size_t len, struct slurm_jobs *jobs,
                      const char **kind, exa_error_t *err);

/* One job's name, as squeue_names_parse() vouches for it. */
struct squeue_name {
    char *id, *name;
};

/*
 * Parse `squeue -h -o SLURM_SQUEUE_NAMES_FORMAT` output: records led by
 * 0x1E, each the job id, 0x1F, the name, 0x1F, the job id again, then a
 * newline. The name is all between the first and the last 0x1F of its
 * record, newlines and 0x1F included. A name may hold 0x1E too and so
 * cut its record and make up others, each with any id but ending with
 * its own: a record whose two ids differ (or are empty) is malformed,
 * and an id on two well-formed records (one of them made up) is
 * vouched for by neither. Returns the pairs whose id is on exactly one
 * well-formed record, in the order printed, in *out (*n of them;
 * squeue_names_free() releases them) and in *refused the records left
 * out (malformed, or sharing an id). Cannot fail.
 */
void squeue_names_parse(const char *buf, size_t len, struct squeue_name **out,
                        size_t *n, size_t *refused);
void squeue_names_free(struct squeue_name *v, size_t n);

/*
 * squeue_parse with the command line that printed buf (cmdspec.h; NULL,
 * or a spec of another tool, is the same as squeue_parse). Where the
 * output has no header, its column names come from the command's -o/-O
 * format (or squeue's default format); a separator the command sets
 * splits the rows; -O/%.Nx widths cut headerless rows, and a TRES cell
 * that filled its width gives gpus null; a one-state filter (-t R,
 * --states=PENDING) gives that state to every row when no state column
 * was printed. A printed header still names the columns.
 */
int squeue_parse_cmd(const char *buf, size_t len, const struct cmd_spec *spec,
                     struct slurm_jobs *jobs, const char **kind,
                     exa_error_t *err);

/*
 * What slurm_parse_blocks() does with each block, all three called with
 * ctx:
 *   work: on the thread that parsed the block, right after (may be NULL):
 *         what it returns reaches take as out. It may run on two threads
 *         at once (two blocks), beside take; jobs->errors' record numbers
 *         are still the block's own there.
 *   take: on the caller's thread, one block at a time in the output's
 *         order, with the block's jobs (every string and node list lives
 *         in jobs->strings; all of it is freed when take returns) and
 *         errors numbered as in the whole output.
 *   drop: frees an out that take will never see (a block parsed past a
 *         failure, or parsed again); may be NULL.
 */
struct slurm_block_ops {
    void *(*work)(void *ctx, const struct slurm_jobs *jobs);
    void (*take)(void *ctx, struct slurm_jobs *jobs, void *out);
    void (*drop)(void *ctx, void *out);
};

/*
 * squeue_parse_cmd (is_sacct 0) or sacct_parse_cmd (1) over a large
 * output a block at a time, on two threads, with exactly the records,
 * errors and *kind of the one parse: take sees the whole result in order,
 * so 100,000 rows never exist as 100,000 struct slurm_job at once.
 *
 * Blocks are made when the output is a delimited table whose first line
 * is a printed header (exa's own formats, -O/-o with a separator,
 * --parsable2): that line is parsed with each run of about block_rows
 * following records (0: 4096; cut by bytes: at the first record boundary
 * past block_rows times the mean length of the first 64 records),
 * records being lines, or from one 0x1E to the next where the header
 * starts with 0x1E. A second thread (POSIX
 * threads) and the caller's take the blocks in turn, at most four ahead
 * of take; the budget of node names a parse expands is kept across the
 * blocks as one parse keeps it (a block over it is parsed again on the
 * caller's thread with what is left). Any other output (blank-aligned
 * columns, headerless, scontrol lines, Slurm error text, a single block)
 * is parsed whole, on the caller's thread, and is one block.
 *
 * Returns 0, or -1 with err and *kind ("parse_error", or "slurm_error":
 * only Slurm error text) from the first block that fails; take has then
 * had the blocks before it. kind may be NULL.
 */
int slurm_parse_blocks(const char *buf, size_t len, int is_sacct,
                       const struct cmd_spec *spec, size_t block_rows,
                       const struct slurm_block_ops *ops, void *ctx,
                       const char **kind, exa_error_t *err);

/*
 * slurm_parse_blocks() of squeue output with cb as take (no work, no
 * drop): the exporter's collection. Returns as that.
 */
int squeue_parse_cmd_blocks(const char *buf, size_t len,
                            const struct cmd_spec *spec, size_t block_rows,
                            void (*cb)(void *ctx, struct slurm_jobs *jobs),
                            void *ctx, exa_error_t *err);

/*
 * The jobs (steps 0) or steps (1) of jobs as the elements of the array w
 * is in, each as slurm_jobs_write_json() writes it.
 */
void slurm_jobs_write_items(const struct slurm_jobs *jobs, int steps,
                            struct jsonw *w);
/* The "errors" member of slurm_jobs_write_json() (nothing without
 * errors), in the object w is in. */
void slurm_jobs_write_errors(const struct slurm_jobs *jobs, struct jsonw *w);

/*
 * squeue (is_sacct 0) or sacct (1) output parsed and written to out as
 * slurm_jobs_write_json() writes its result (pretty), with the same
 * bytes, through slurm_parse_blocks() (block_rows as there): each
 * block's records are written as JSON on the thread that parsed them,
 * and the text is put in order.
 * Returns 0, or -1 with err and *kind as slurm_parse_blocks(), and then
 * nothing is written: an output parsed whole fails before its one take,
 * and the blocks of a table cannot fail (their parse's one failure, too
 * many records, sends the output to the whole parse first). A failed
 * write to out is not an error (the reader closed it).
 */
int slurm_jobs_stream_json(const char *buf, size_t len, int is_sacct,
                           const struct cmd_spec *spec, size_t block_rows,
                           FILE *out, const char **kind, exa_error_t *err);

/*
 * Parse sacct output: --parsable2 with or without header, fixed-width
 * with the dashed ruler, exa's own field list. JobIDs with a '.' go to
 * jobs->steps. Same return convention as squeue_parse.
 */
int sacct_parse(const char *buf, size_t len, struct slurm_jobs *jobs,
                const char **kind, exa_error_t *err);

/*
 * sacct_parse with the command line that printed buf (cmdspec.h; NULL or
 * another tool's spec: sacct_parse): headerless columns from --format/
 * -o/--fields (sacct's default list without one), the separator from
 * -P/-p and --delimiter, fixed widths from "%N". sacct's -s filter says
 * which jobs were in a state during the window, not their state now, so
 * it never sets one.
 */
int sacct_parse_cmd(const char *buf, size_t len, const struct cmd_spec *spec,
                    struct slurm_jobs *jobs, const char **kind,
                    exa_error_t *err);

/*
 * Parse `scontrol show job -o` output (one "Key=Value ..." line per job;
 * multi-line output is accepted too, a blank line separating jobs).
 * Same return convention as squeue_parse.
 */
int scontrol_jobs_parse(const char *buf, size_t len, struct slurm_jobs *jobs,
                        const char **kind, exa_error_t *err);

/* Free what jobs owns; jobs is zeroed. */
void slurm_jobs_free(struct slurm_jobs *jobs);

/* One record as a doc/formats.md job object (new reference). */
json_t *slurm_job_to_json(const struct slurm_job *job, int is_step);

/*
 * doc/formats.md result: {"jobs": [...]} plus "steps" when with_steps (sacct)
 * and "errors" when there are any. New reference.
 */
json_t *slurm_jobs_to_json(const struct slurm_jobs *jobs, int with_steps);

/* The same document written to w as it goes (jsonw.h: the bytes jx_dumpf
 * gives for slurm_jobs_to_json's result), with no json_t per value. */
void slurm_jobs_write_json(const struct slurm_jobs *jobs, int with_steps,
                           struct jsonw *w);

struct sbatch_result {
    char *job_id;           /* "519605" */
    char *cluster;          /* NULL when not printed */
    struct strvec warnings; /* non-blank lines other than the id line */
};

/*
 * Parse sbatch stdout+stderr: the id comes from "Submitted batch job N[ on
 * cluster C]" or a line that is exactly "N" or "N;C" (--parsable), never
 * from the first integer anywhere. Returns 0, or -1 with err (EXA_ESCHED,
 * the first "error:" line or first line as text) when there is no id
 * line: doc/formats.md kind "submit_failed".
 */
int sbatch_parse(const char *buf, size_t len, struct sbatch_result *res,
                 exa_error_t *err); /* *res overwritten; free it either way */

/*
 * The same over sbatch's two streams as the adapter captures them: the id
 * line is looked for on stdout (out[0..out_len)) only, so nothing sbatch
 * prints on stderr can pass for an id; warnings are stdout's other
 * non-blank lines, then every non-blank stderr line. errbuf may be NULL.
 * *res is overwritten; free it with sbatch_result_free() either way.
 * Returns 0, or -1 with err (EXA_ESCHED: the first line holding "error:",
 * else the first line, e.g. "sbatch: error: Invalid account ...").
 */
int sbatch_parse_streams(const char *out, size_t out_len, const char *errbuf,
                         size_t err_len, struct sbatch_result *res,
                         exa_error_t *err);

void sbatch_result_free(struct sbatch_result *res);

/* {"job_id", "cluster", "warnings"} (new reference). */
json_t *sbatch_result_to_json(const struct sbatch_result *res);

#endif
