/*
 * parse_slurm_int.h - private to the Slurm job parsers (parse_slurm*.c,
 * parse_squeue.c, parse_sacct.c, parse_scontrol.c, parse_sbatch.c): the
 * column roles, the tables that name them, and the helpers those files
 * share. Nothing outside src/libsched/parse_*.c includes it; the public
 * contract is parse_slurm.h.
 */
#ifndef EXA_PARSE_SLURM_INT_H
#define EXA_PARSE_SLURM_INT_H

#include <stddef.h>

#include "libsched/parse_slurm.h"
#include "libutil/cmdspec.h"

/* What a column (or scontrol key) holds; R_IGNORE: not read. */
enum slurm_role {
    R_IGNORE,
    R_ID,
    R_ID_RAW,
    R_STATE,
    R_STATE_COMPACT,
    R_EXIT,
    R_START,
    R_END,
    R_SUBMIT,
    R_ELAPSED,
    R_ELAPSED_RAW,
    R_TRES_ALLOC,
    R_TRES_PER_JOB,
    R_TRES_PER_NODE,
    R_NODES,
    R_NODELIST,
    R_NODELIST_REASON,
    R_REASON,
    R_PARTITION,
    R_ACCOUNT,
    R_USER,
    R_NAME,
    R_NCPUS,
    R_TIMELIMIT,
    R_TIMELIMIT_RAW,
    R_TIMELEFT,
    R_TOTALCPU,
    R_MAXRSS,
    R_BATCHHOST,
    R_CLUSTER,
    R_PRIORITY,
    R_NNODES, /* sacct NNodes: recorded like R_NODES, value shape unchecked
               * so headerless layout guessing is unchanged */
    R_STDOUT, /* scontrol StdOut= */
    R_ID_END, /* SLURM_SQUEUE_FORMAT's closing %i: must equal R_ID */
};

/* Upper-case header name -> role; tables end with a NULL name. */
struct slurm_name_role {
    const char *name;
    enum slurm_role role;
};

/* A well-known headerless field list; arrays end with NULL fields. */
struct slurm_layout {
    char sep;           /* ' ' for blank-separated only, 0 for any, or
                         * SLURM_LAYOUT_OWN */
    const char *fields; /* header names separated by single spaces */
};

/* The sep of a layout the output was printed in for certain (exa's own
 * 0x1F format, asked without its header): when it is the first of the
 * layouts, it is the only one tried and is taken whatever the rows hold
 * (a row of another field count is an error, never a reason to guess
 * the columns from the values). */
#define SLURM_LAYOUT_OWN '\x1f'

/* Per-parse state slurm_build_job reads and updates. */
/*
 * What one parse has worked out of its first SLURM_MEMO_N distinct state
 * and TRES cells (a table repeats a few: "RUNNING", "gres/gpu:4"), each
 * a pure function of the string; the keys live in the result's strings.
 * Zeroed (a struct slurm_memo m = {0}) is empty.
 */
#define SLURM_MEMO_N 16
struct slurm_memo_state {
    const char *key;
    const char *state; /* slurm_job_state_normalize's */
    unsigned flags;    /* SLURM_ST_PENDING | SLURM_ST_TERMINAL */
};
struct slurm_memo_tres {
    const char *key;
    int cut;        /* tres_cut */
    int has;        /* a GPU count was read: gpus */
    long long gpus; /* tres_gpus (kv) or tres_per_gpus */
};
struct slurm_memo {
    struct slurm_memo_state st[SLURM_MEMO_N];
    size_t nst;
    /* [1]: AllocTRES (key=value lists), [0]: tres-per-job/node */
    struct slurm_memo_tres tr[2][SLURM_MEMO_N];
    size_t ntr[2];
};
#define SLURM_ST_PENDING 1u
#define SLURM_ST_TERMINAL 2u

struct slurm_row_ctx {
    int squeue;               /* apply squeue's projected-time rules */
    size_t host_budget;       /* node names left to expand in this parse */
    int delimited;            /* cells printed between separators (or at fixed
                               * widths): an empty one is "", not absent */
    const unsigned char *cut; /* this row's slurm_row.cut, or NULL */
    const char *state_filter; /* the command's one-state filter (squeue
                               * -t R), or NULL */
    struct arena *strings;    /* where the record's strings go: the
                               * result's slurm_jobs.strings */
    int cells_kept;           /* 1 when the row's cells are strings in
                               * *strings already (slurm_row.kept): the
                               * record points at them, no copy */
    struct slurm_memo *memo;  /* the parse's memo, or NULL for none */
    const char *text;         /* the row's slurm_row.text (its length
                               * text_len), or NULL: slurm_job.text */
    size_t text_len;
};

/* squeue's column names (parse_squeue.c); the table walk tells squeue
 * from sacct by this address when it guesses roles from values. */
extern const struct slurm_name_role slurm_squeue_names[];

/* parse_slurm_state.c */

/* Non-zero when v is exactly a compact job state code ("R", "PD", "OOM"). */
int slurm_compact_state(const char *v);

/* Malloc'ed copy of s without leading/trailing blanks, tabs, CR, LF. */
char *slurm_trim_dup(const char *s);
/* Where s without its surrounding blanks (' ', '\t', '\r', '\n') starts;
 * *n gets its length. Points into s; nothing is copied. */
const char *slurm_trim_span(const char *s, size_t *n);

/* Non-zero when v reads as a job state word: known, truncated, or
 * all-caps/underscore of at least 4 characters. */
int slurm_state_shaped(const char *v);

/* parse_slurm.c */

/* Non-zero for an empty cell or Unknown/None/N/A (any case) or "(null)". */
int slurm_none_token(const char *v);

/* Non-zero when v starts with an ISO time "YYYY-MM-DDTHH:MM:SS". */
int slurm_is_iso(const char *v);

/* Non-zero when v is a whole job id: 123, 123_4, 123_[1-9%2], 12+1, 7.0. */
int slurm_is_job_id(const char *v);

/* Non-zero when value v fits a column of role r (untyped roles: always). */
int slurm_valid_for(enum slurm_role r, const char *v);

/* Fill j's array / het fields from j->job_id (else j->id), their strings
 * in a; no-op without. */
void slurm_id_parts(struct slurm_job *j, struct arena *a);

/* Build *j (overwritten) from nf cells f with roles, its strings and its
 * nodelist's array and names in ctx->strings (nothing for the caller to
 * free: slurm_jobs_free releases the arena); ids are not split into
 * array/het parts (slurm_id_parts does that). */
void slurm_build_job(struct slurm_job *j, char **f, size_t nf,
                     const enum slurm_role *roles, size_t nroles,
                     struct slurm_row_ctx *ctx);

/* parse_slurm_table.c */

/* Role of upper-case header name u in t (exact, else unique 4+ char
 * prefix) into *r; returns 1, or 0 when unknown (*r untouched). */
int slurm_lookup_role(const struct slurm_name_role *t, const char *u,
                      enum slurm_role *r);

/* Upper-case s into buf (n bytes, NUL-terminated), stopping at a '%'. */
void slurm_upper(const char *s, char *buf, size_t n);

/* Parse an squeue (is_sacct 0) or sacct (1) table into jobs: 0, -1 with
 * err (parse error), or -2 with err EXA_ESCHED (only Slurm error text).
 * spec: the command line's column spec (cmdspec.h) or NULL. */
int slurm_parse_table(const char *buf, size_t len, struct slurm_jobs *jobs,
                      const struct slurm_name_role *tbl,
                      const struct slurm_layout *layouts, int is_sacct,
                      const struct cmd_spec *spec, exa_error_t *err);

/* Node names one parse may expand in all; past it, lists stay as printed. */
#define SLURM_HOST_BUDGET 2000000

/* What a table parse saw, beyond its records (slurm_parse_blocks()). */
struct slurm_parse_info {
    size_t nrecords;       /* data rows read (not the header, blank or
                            * error lines), the numbering of jobs->errors */
    size_t hosts_expanded; /* node names expanded from hostlists */
    int hdr_printed;       /* a printed header line named the columns */
    int delimited;         /* fields split on a separator, not blanks */
    int error_line;        /* a Slurm client error line was skipped */
};

/* What a table parse reads: head (NULL, or head_len bytes of whole
 * records, a header line, parsed ahead of buf's as if one buffer held
 * both: slurm_table.head), then the len bytes at buf. nrec: how many
 * records buf holds when the caller knows (room is made for them at
 * once: slurm_table.rows_hint), else 0. */
struct slurm_text {
    const char *head;
    size_t head_len;
    const char *buf;
    size_t len;
    size_t nrec;
};

/* slurm_parse_table() of in's bytes, with at most host_budget node
 * names expanded (SLURM_HOST_BUDGET there) and what it saw in *info (may
 * be NULL). */
int slurm_parse_table_ex(const struct slurm_text *in, struct slurm_jobs *jobs,
                         const struct slurm_name_role *tbl,
                         const struct slurm_layout *layouts, int is_sacct,
                         const struct cmd_spec *spec, size_t host_budget,
                         struct slurm_parse_info *info, exa_error_t *err);

/* The table walk of squeue_parse_cmd() (no scontrol lines) and of
 * sacct_parse_cmd(), through slurm_parse_table_ex(): the same returns.
 * spec must be the tool's or NULL. */
int squeue_parse_table(const struct slurm_text *in, const struct cmd_spec *spec,
                       struct slurm_jobs *jobs, size_t host_budget,
                       struct slurm_parse_info *info, exa_error_t *err);
int sacct_parse_table(const struct slurm_text *in, const struct cmd_spec *spec,
                      struct slurm_jobs *jobs, size_t host_budget,
                      struct slurm_parse_info *info, exa_error_t *err);

#endif
