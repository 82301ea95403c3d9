/*
 * probe.h - read-only discovery of what a host offers: which scheduler
 * answers, its version, accounting, partitions, nodes and GPUs
 * (doc/reference.md §4.6, doc/design.md §2 libdiscovery).
 *
 * A probe is a vtable (available, capabilities, list_nodes, list_gpus)
 * run through a `struct transport *`, so the same code probes the local
 * host, a login node over ssh, or a fake in tests. Probes are found by
 * name with probe_find(): "slurm", "flux", and "nvidia-smi" (also under
 * its scheduler name "unmanaged", the key mismatch that lost unmanaged
 * inventories in the reference, §6.1). New probes join with
 * probe_register().
 *
 * Errors keep their kind: a transport failure (ssh refused, host key
 * changed, timeout) is returned as -1 with EXA_ETRANSPORT / EXA_ETIMEOUT
 * and the transport's own message ("ssh to 'login1' failed: ..."); only a
 * host that answered and has none of the tools is "no scheduler detected".
 */
#ifndef EXA_PROBE_H
#define EXA_PROBE_H

#include <jansson.h>
#include <stddef.h>

#include "libdiscovery/parse_flux_resource.h"
#include "libtransport/transport.h"
#include "libutil/error.h"
#include "libutil/strvec.h"

/* One node, normalized (doc/formats.md "Nodes"). -1: unknown. */
struct node_info {
    char *name;
    long long cpus;
    long long mem_mb;
    long long gpus;      /* -1 when the scheduler did not say */
    long long gpus_used; /* GresUsed; -1 unknown */
    /* the GPUs in use by index (bit i: GRES index i, Slurm GresUsed's
     * IDX list, libres/gres.h gres_used_gpu_mask), when known */
    int has_gpu_used_mask;
    unsigned long long gpu_used_mask;
    char *gpu_model; /* distinct types "a100,v100", NULL untyped */
    char *state;     /* idle|allocated|mixed|down|drain|unknown */
    char *raw_state; /* the scheduler's token */
    struct strvec partitions;
    char *addr; /* where the node is reached (Slurm NodeAddr), or NULL */
};

/* One GPU. Numbers -1 (integers) or NAN (reals) when unknown. */
struct gpu_info {
    char *node;
    long long index;
    char *uuid;
    char *name;
    long long mem_total_mb;
    long long mem_used_mb;
    double util_pct;
    double power_w;
    char *state; /* nvidia-smi: "online"; entries from a scheduler's
                  * node records: "idle", "allocated", the node's
                  * "down"/"drain", or "unknown" (probe_gpus_from_nodes) */
};

struct partition_info {
    char *name;
    char *state;                       /* UP, DOWN, ... */
    char *max_time;                    /* as printed: UNLIMITED, 1-00:00:00 */
    long long max_nodes;               /* -1 unlimited/unknown */
    long long total_nodes, total_cpus; /* -1 unknown */
    int is_default;
};

struct cluster_caps {
    char *scheduler; /* slurm | flux | unmanaged | unknown */
    char *version;
    int available;
    int accounting;
    int gpus_present;
    long long total_nodes, total_cpus, total_gpus;
    struct partition_info *partitions;
    size_t npartitions;
    struct strvec notes;
};

struct probe {
    const char *name;      /* registry key: "slurm", "flux", "nvidia-smi" */
    const char *scheduler; /* what it reports: "slurm", "flux", "unmanaged" */
    /*
     * 1 when the tool answers (version malloc'ed into *version, may be
     * NULL), 0 when the host answered but the tool is absent or failing,
     * -1 with err on a transport failure.
     */
    int (*available)(struct transport *t, char **version, exa_error_t *err);
    /* Fill caps (zeroed by the caller) beyond the inventory counts:
     * version, accounting, partitions, notes. 0 or -1. */
    int (*capabilities)(struct transport *t, struct cluster_caps *caps,
                        exa_error_t *err);
    /* Nodes: *out malloc'ed array (node_infos_free). 0 or -1. */
    int (*list_nodes)(struct transport *t, struct node_info **out, size_t *n,
                      exa_error_t *err);
    /* GPUs: *out malloc'ed array (gpu_infos_free). 0 or -1. */
    int (*list_gpus)(struct transport *t, struct gpu_info **out, size_t *n,
                     exa_error_t *err);
};

/*
 * Add p (borrowed; must outlive the process) to the registry, replacing a
 * probe of the same name. The built-in probes are registered on first use.
 * Returns 0, or -1 when the table (16 entries) is full.
 */
int probe_register(const struct probe *p);

/*
 * The probe registered as name, or whose scheduler is name ("unmanaged"
 * finds "nvidia-smi"). NULL when none.
 */
const struct probe *probe_find(const char *name);

/* Detection order: flux, slurm, nvidia-smi (then any registered later). */
const struct probe *const *probe_all(size_t *n);

/* Everything a probe learned about one host. */
struct inventory {
    struct cluster_caps caps;
    struct node_info *nodes;
    size_t nnodes;
    struct gpu_info *gpus;
    size_t ngpus;
};

/*
 * Probe t: with forced (a probe name or scheduler) only that probe, else
 * the first available in detection order. Fills inv (zeroed by the
 * caller; release with inventory_release): capabilities, nodes and GPUs
 * (the probe's GPU list enriched from nvidia-smi when it has no models
 * and nvidia-smi answers; an unmanaged host keeps its own inventory).
 * When nothing answers: returns 0 with caps.scheduler "unknown",
 * available 0 and the note "no known scheduler detected". Errors: -1 with
 * EXA_ETRANSPORT / EXA_ETIMEOUT for transport failures, EXA_EUSAGE
 * "unknown scheduler probe: 'x'" for a bad forced name.
 */
int probe_inventory(struct transport *t, const char *forced,
                    struct inventory *inv, exa_error_t *err);

void inventory_release(struct inventory *inv);
void cluster_caps_release(struct cluster_caps *caps);
void node_infos_free(struct node_info *v, size_t n);
void gpu_infos_free(struct gpu_info *v, size_t n);

/* JSON views (new references): ClusterCaps, [NodeInfo], [GpuInfo]. */
json_t *cluster_caps_json(const struct cluster_caps *caps);
json_t *node_infos_json(const struct node_info *v, size_t n);
json_t *gpu_infos_json(const struct gpu_info *v, size_t n);

/*
 * Run argv on t, classifying the outcome: 1 when it ran (res filled, any
 * exit status except "command not found"), 0 when the program is absent
 * (local exec failure, or exit 127 remotely), -1 with err on a transport
 * failure. res must be TRANSPORT_RESULT_INIT; caller releases.
 */
int probe_run(struct transport *t, const char *const *argv,
              struct transport_result *res, exa_error_t *err);

/*
 * Parse `scontrol show partition -o` output (one "Key=Value ..." line per
 * partition) into *out (caller frees with partition_infos_free). Pure.
 */
int parse_scontrol_partitions(const char *buf, size_t len,
                              struct partition_info **out, size_t *n,
                              exa_error_t *err);
void partition_infos_free(struct partition_info *v, size_t n);

/*
 * The value of key in `scontrol show config` output (scontrol(1) show
 * config: one "Key = value" line per parameter, the key padded with
 * blanks), malloc'ed and trimmed ("(null)" as Slurm prints an unset one),
 * or NULL when no line names key (or its value holds a NUL). Pure.
 */
char *slurm_config_value(const char *buf, size_t len, const char *key);

/*
 * The partition names `printenv SBATCH_PARTITION` printed (buf[0..len)),
 * as sbatch reads the variable (get_part_list: strtok on ',', so empty
 * names are skipped), joined with ',', from the output's last non-blank
 * line (a shell rc file may print before it); malloc'ed, or NULL when
 * it names none. Pure.
 */
char *slurm_partition_env_value(const char *buf, size_t len);

/*
 * The fields the probe asks `flux queue list -n -o` for (flux-queue(1);
 * the names are those of flux-queue.py in flux-core), joined by 0x1F:
 * the name (`*` after the default queue), submission (enabled|disabled),
 * scheduling (started|stopped), the time limit (seconds or "inf"), the
 * most nodes a job may ask ("inf" or a count), and the queue's nodes,
 * cores and GPUs.
 */
#define FLUX_QUEUE_LIST_FORMAT                                                 \
    "{queuem}\x1f{submission}\x1f{scheduling}\x1f{limits.timelimit}\x1f"       \
    "{limits.max.nnodes}\x1f{resources.all.nnodes}\x1f"                        \
    "{resources.all.ncores}\x1f{resources.all.ngpus}"

/*
 * Parse `flux queue list -n -o FLUX_QUEUE_LIST_FORMAT` output (one line
 * per queue) into *out, one partition_info per queue (caller frees with
 * partition_infos_free): is_default from the `*`; state in Slurm's
 * partition words, UP (enabled, started), DOWN (enabled, stopped: jobs
 * wait), DRAIN (disabled, started: no new jobs) or INACTIVE; max_time as
 * Slurm prints MaxTime ("UNLIMITED" for "inf" and 0, "01:00:00");
 * max_nodes, total_nodes and total_cpus (-1 for "inf"). The one row with
 * an empty name (no queues configured) gives none. 0, or -1 with err
 * (EXA_EPARSE) for a row of another shape, a bad name or state; nothing
 * is returned then. Pure.
 */
int parse_flux_queue_list(const char *buf, size_t len,
                          struct partition_info **out, size_t *n,
                          exa_error_t *err);

/* flux_r_per_node() (the R reader): libdiscovery/parse_flux_resource.h */

#endif
