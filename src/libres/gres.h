/*
 * gres.h - GPU (and CPU, node, memory) counts in Slurm's resource
 * strings, the one implementation every tool parser uses: GRES (sinfo %G
 * / Gres / GresUsed, squeue tres-per-node / tres-per-job, scontrol
 * TresPerNode) and TRES (sacct AllocTRES, squeue tres-alloc, scontrol
 * TRES=).
 *
 * Rules: doc/formats.md "GRES strings" and "gpus" (gres.conf(5),
 * sinfo(1) %G, sacct(1) AllocTRES). Numbers go through libutil/parse.h;
 * a count or sum that would overflow is unknown (see parse.h), never
 * wrapped.
 *
 * libres sits between libutil and libsched and libdiscovery in the layer
 * order (doc/architecture.md): both the job parsers (libsched) and the
 * node parsers (libdiscovery) read these strings, and neither may
 * include the other's headers for it.
 */
#ifndef EXA_GRES_H
#define EXA_GRES_H

#include <stddef.h>
#include <stdint.h>

struct gres_info {
    long long gpus; /* sum of counts of entries named exactly "gpu";
                     * -1 when that sum does not fit a long long */
    char *types;    /* distinct GPU types joined by ',' in order, NULL if
                     * none; owned by the struct (gres_info_release) */
    int entries;    /* well-formed entries seen (any name) */
};

/*
 * Parse a GRES string: entries split on commas outside parentheses, a
 * trailing "(...)" dropped, an optional leading "gres/" or "gres:" dropped,
 * forms name:N, name:TYPE:N, name:TYPE:no_consume:N; an entry whose last
 * field is not a count (digits, at most INT64_MAX) is ignored (a
 * truncated column). "(null)", "N/A" and "" give zero entries. Always
 * succeeds; *out is overwritten (release it with gres_info_release).
 */
void gres_parse(const char *s, struct gres_info *out);

/* Free out->types; out is left as zero entries. NULL is accepted. */
void gres_info_release(struct gres_info *out);

/*
 * Which GPUs a GresUsed string says are in use, by GRES index: Slurm
 * numbers the GPUs of a node 0, 1, ... in gres.conf order across their
 * types and prints those allocated as "(IDX:LIST)" after each entry
 * (sinfo(1) -O GresUsed; "gpu:a100:2(IDX:0-1)", "gpu:tesla:3(IDX:0,2-3)",
 * "gpu:tesla:0(IDX:N/A)", "gpu:a:1(IDX:0),gpu:b:1(IDX:2)"; LIST is
 * indices and ranges A-B separated by ','). *mask gets bit i for index i.
 * Returns 1 when the string says it whole: it names a "gpu" entry, every
 * one carries an IDX list of exactly its count of distinct indices below
 * 64 ("IDX:N/A" with a count of 0), no list is 62 bytes or more (Slurm
 * writes it into 64 bytes, bit_fmt: one that long may have been cut;
 * 62 for releases before 22.05), and no
 * "shard" or "mps" entry has a non-zero count; entries of other names
 * are ignored. Else 0 with *mask 0, the indices unknown: GPUs shared as
 * shards or MPS are in use though no gpu index is; no_consume GPUs print
 * "gpu:0" with no list whatever holds them; a Slurm without IDX; a
 * column cut (an unclosed group, a trailing ','); more than 64 GPUs; s
 * NULL, "", "(null)", "N/A" or naming no gpu entry.
 */
int gres_used_gpu_mask(const char *s, unsigned long long *mask);

/* What a TRES string names; has_X 0: not named (or not a count). */
struct tres_info {
    int has_gpus;
    long long gpus; /* untyped gres/gpu=N, else the sum of
                     * typed gres/gpu:T=N, else 0 */
    int has_cpus;
    long long cpus; /* cpu=N */
    int has_nodes;
    long long nodes; /* node=N */
    int has_mem;
    uint64_t mem_bytes; /* mem=SIZE (parse_size, MiB bare) */
};

/*
 * Parse a TRES string "billing=1,cpu=1,gres/gpu:a100=1,gres/gpu=1,
 * mem=500M,node=1". Returns 1 with *out filled (has_gpus always 1: no
 * GPU entry means 0 GPUs), or 0 when the string carries no value (*out
 * zeroed): s is NULL, empty, "N/A", "(null)", or truncated (an entry
 * without '=' or with an empty value, as `squeue -O tres-alloc` cuts it
 * at 20 characters: "cpu=2,mem=512M,node="; a trailing '+'); or a GPU
 * count that is not a count or a typed sum that overflows INT64_MAX.
 */
int tres_parse(const char *s, struct tres_info *out);

/*
 * GPU count of a TRES string per tres_parse: returns 1 with *gpus set,
 * or 0 when there is no value (*gpus untouched).
 */
int tres_gpus(const char *s, long long *gpus);

#endif
