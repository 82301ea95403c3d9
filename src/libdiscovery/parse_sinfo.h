/*
 * parse_sinfo.h - sinfo output to node records (or aggregated groups).
 *
 * Accepts the formats in doc/formats.md "Nodes": exa's own
 * `sinfo -N -o '%N|%c|%m|%G|%t|%P'` (with or without header), the default
 * partition view (NODELIST hostlists expanded), `-O` padded formats,
 * headerless `-o '%n %G'`, `%N,%G`, StateComplete, and `%D` count formats,
 * whose rows become groups. Without a header the columns are recognized
 * by content: a/i/o/t CPU counts, GRES strings, state words, integers.
 * Source: sinfo(1) "OUTPUT FORMAT" and "NODE STATE CODES".
 */
#ifndef EXA_PARSE_SINFO_H
#define EXA_PARSE_SINFO_H

#include <jansson.h>
#include <stddef.h>

#include "libutil/cmdspec.h"
#include "libutil/error.h"
#include "libutil/jsonw.h"
#include "libutil/strvec.h"

/* A node's strings and its partitions' array and names belong to the
 * result (its arena; equal strings may be one copy shared by nodes): read
 * them, never free, push on or clear them; sinfo_result_free releases
 * them. Copy what must outlive the result. */
struct sinfo_node {
    char *name;
    int has_cpus;
    long long cpus;
    int has_mem;
    long long mem_mb;
    int has_gres;
    long long gpus; /* gres column printed */
    char *gpu_type; /* distinct types "a,b", NULL when untyped/none */
    int has_gres_used;
    long long gpus_used;
    /* the GPUs GresUsed names by GRES index (bit i: index i in use;
     * libres/gres.h gres_used_gpu_mask), when it says them whole */
    int has_gpu_used_mask;
    unsigned long long gpu_used_mask;
    char *state;     /* normalized (nodestate.h), NULL: no state column */
    char *raw_state; /* as printed */
    struct strvec partitions; /* '*' stripped, first-appearance order;
                               * read-only (alloc 0, the result's) */
    /* NodeAddr (`--Format=NodeAddr`, "%o"): where the node is reached
     * (Slurm fills it from NodeHostname, else NodeName); NULL when not
     * printed. Not part of the doc/formats.md result object. */
    char *addr;
};

struct sinfo_group {
    long long nodes;
    char *partition; /* '*' stripped; NULL when not printed */
    char *state, *raw_state;
    int has_gres;
    long long gpus_per_node;
    char *gpu_type;
    int has_gres_used;
    long long gpus_used_per_node;
};

struct sinfo_result {
    struct sinfo_node *nodes;
    size_t nnodes, nodes_alloc;
    struct sinfo_group *groups;
    size_t ngroups, groups_alloc;
    int is_groups; /* the output printed counts, not names */
    int has_state_col, has_gres_col, has_gres_used_col;
    void *index; /* name lookup (private) */
};

/*
 * Parse len bytes of sinfo output into res (zeroed by the caller).
 * Returns 0, or -1 with err set and *kind set to a doc/formats.md error kind
 * ("column_overflow" when a fixed-width name ran into the next column,
 * "invalid_hostlist" for a bad NODELIST, "slurm_error" when the input is
 * only a Slurm client's error text such as "slurm_load_partitions: Unable
 * to contact slurm controller", "too_large" past a million nodes).
 * res must be freed either way.
 */
int sinfo_parse(const char *buf, size_t len, struct sinfo_result *res,
                const char **kind, exa_error_t *err);

/*
 * sinfo_parse with the command line that printed buf (cmdspec.h; NULL or
 * another tool's spec: sinfo_parse): where the output has no header, the
 * column names come from its -o/-O format, a separator it sets splits
 * the rows, and -O widths cut headerless rows.
 */
int sinfo_parse_cmd(const char *buf, size_t len, const struct cmd_spec *spec,
                    struct sinfo_result *res, const char **kind,
                    exa_error_t *err);

/* Free what res owns; res is zeroed. */
void sinfo_result_free(struct sinfo_result *res);

/* doc/formats.md result object: {"nodes":[...]} or {"groups":[...]}. New ref.
 */
json_t *sinfo_result_to_json(const struct sinfo_result *res);

/* The same document written to w as it goes (jsonw.h: the bytes
 * jx_dumpf gives for sinfo_result_to_json's result), with no json_t. */
void sinfo_result_write_json(const struct sinfo_result *res, struct jsonw *w);

#endif
