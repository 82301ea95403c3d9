/*
 * pm100.h - the PM100 job table (CINECA Marconi100, May-Oct 2020; Zenodo
 * record 10127767, DOI 10.1145/3624062.3624263) as CSV, and its JPCP
 * train/validation split (doc/reference.md §5).
 *
 * Columns are found by header name (any order, extra columns ignored):
 * job_id, user_id, num_nodes_req, num_nodes_alloc, submit_time (ISO-8601,
 * UTC when no offset), node_power_consumption (watts: one number, or a
 * series separated by ';' ',' or blanks, optionally in [ ], as a quoted
 * field). The target is mean(node_power_consumption) / num_nodes_alloc:
 * average power per allocated node in watts. doc/pm100.md shows how to
 * export the real job_table.parquet to this layout.
 */
#ifndef EXA_PM100_H
#define EXA_PM100_H

#include <stddef.h>
#include <time.h>

#include "libutil/error.h"

struct pm100_row {
    char *job_id;
    char *user_id;       /* categorical, as written */
    char *num_nodes_req; /* categorical, normalized ("2.0" -> "2") */
    long long num_nodes_alloc;
    time_t submit_time;
    double target; /* watts per node, finite and > 0 */
    size_t line;   /* line in the file, for messages */
};

/* Why a well-formed record was skipped (pm100_skip_reason()). */
enum pm100_skip {
    PM100_SKIP_NO_POWER = 0,      /* node_power_consumption empty */
    PM100_SKIP_NONFINITE_POWER,   /* a NaN or infinite sample (1e309) */
    PM100_SKIP_NONPOSITIVE_POWER, /* mean power per node <= 0 */
    PM100_SKIP_NO_NODES,          /* num_nodes_alloc empty or < 1 */
    PM100_SKIP_NO_SUBMIT_TIME,    /* submit_time empty */
    PM100_NSKIP
};

/* "no power samples", "non-finite power sample", ... for messages. */
const char *pm100_skip_reason(enum pm100_skip why);

struct pm100_table {
    struct pm100_row *rows; /* usable rows in file order */
    size_t nr, alloc;
    size_t records; /* data records read (header excluded) */
    size_t skipped; /* records with a missing or non-positive target */
    size_t skipped_by[PM100_NSKIP]; /* skipped, per reason (sums to it) */
};
#define PM100_TABLE_INIT                                                       \
    {                                                                          \
        NULL, 0, 0, 0, 0,                                                      \
        {                                                                      \
            0                                                                  \
        }                                                                      \
    }

/*
 * Parse CSV text buf[0..len) into t (PM100_TABLE_INIT; release with
 * pm100_table_release, also after a failure). Records whose target is
 * missing or not positive (empty or zero power, non-finite samples,
 * num_nodes_alloc empty or < 1) or whose submit_time is empty are skipped
 * and counted in t->skipped and, by the first reason found (the order of
 * enum pm100_skip), in t->skipped_by. A record longer than
 * CSV_MAX_RECORD_BYTES is an error naming its line (csv.h). Returns 0, or
 * -1 with err (EXA_EPARSE)
 * naming the line for: a missing header column, a record whose field
 * count differs from the header's, an unparseable number or time.
 */
int pm100_parse(const char *buf, size_t len, struct pm100_table *t,
                exa_error_t *err);

/*
 * Read the file at path (at most max_bytes) and parse it. Returns 0, or
 * -1 with err: EXA_ECONFIG when the file is missing, unreadable or too
 * large (naming the path), EXA_EPARSE as for pm100_parse, prefixed with
 * the path.
 */
int pm100_load_file(const char *path, size_t max_bytes, struct pm100_table *t,
                    exa_error_t *err);

void pm100_table_release(struct pm100_table *t);

/* The JPCP splits: [from, to) in epoch seconds, UTC. */
#define PM100_TRAIN_FROM 1588291200LL /* 2020-05-01T00:00:00Z */
#define PM100_TRAIN_TO 1598918400LL   /* 2020-09-01T00:00:00Z */
#define PM100_VAL_FROM 1598918400LL   /* 2020-09-01T00:00:00Z */
#define PM100_VAL_TO 1601510400LL     /* 2020-10-01T00:00:00Z */
/* --dummy keeps the first this many usable rows of each split. */
#define PM100_DUMMY_ROWS 50

struct pm100_split {
    size_t *train, ntrain; /* indices into t->rows, file order */
    size_t *val, nval;
    size_t outside; /* usable rows in neither window */
};

/*
 * Split t by submit_time into the train and validation windows above;
 * with dummy, keep only the first PM100_DUMMY_ROWS of each. Always
 * succeeds; release s with pm100_split_release.
 */
void pm100_split(const struct pm100_table *t, int dummy, struct pm100_split *s);
void pm100_split_release(struct pm100_split *s);

#endif
