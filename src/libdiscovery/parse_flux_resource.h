/*
 * parse_flux_resource.h - exa's reader of `flux resource list` and
 * `flux resource status` tables (flux-resource(1)), giving the per-row
 * groups and per-node records of doc/formats.md "Nodes".
 */
#ifndef EXA_PARSE_FLUX_RESOURCE_H
#define EXA_PARSE_FLUX_RESOURCE_H

#include <jansson.h>
#include <stddef.h>

#include "libutil/cmdspec.h"
#include "libutil/error.h"
#include "libutil/strvec.h"

/*
 * Normalize a Flux resource state token to exa's node states: list view
 * `free` -> idle, `allocated` -> allocated, `down` -> down; status view
 * `avail` -> idle, `avail*`/`offline`/`torpid`/`exclude`/`lost` -> down,
 * `drained`/`drained*`/`draining`/`draining*` -> drain. Anything else
 * gives "unknown". Static string, never NULL.
 */
const char *flux_resource_state_normalize(const char *tok);

/*
 * Parse the text table printed by `flux resource list [-v] [-o FMT]` or
 * `flux resource status` (header line naming the columns STATE, QUEUE,
 * PROPERTIES, NNODES, NCORES, NGPUS, RANKS, NODELIST, LIST) into
 * {"groups": [...], "nodes": [...]}:
 *  - groups: one per printed row, with state, nnodes, ncores, ngpus
 *    (null when not printed), nodelist (expanded; only when printed),
 *    queue / properties / ranks when printed; a LIST rlist
 *    ("rank0/core[0-47],gpu[0-7]") gives ranks (array), cores, gpus_list.
 *  - nodes: one per distinct host in order of first appearance. State:
 *    any down row -> down, else drain, else free and allocated -> mixed,
 *    allocated -> allocated, free/avail -> idle. cpus/gpus only when
 *    every row holding the node has NNODES == 1 (summed over those rows).
 *    raw_state is the sorted, comma-joined set of row states; partitions
 *    the QUEUE names split on ','.
 * Lines that are blank (a row of empty fields prints as " ") are skipped.
 * The status view's header word "STATEUP" (flux-core 0.88 prints the
 * STATE and UP columns touching) is read as the two columns STATE, UP.
 * Returns a new reference, or NULL with err set and *errkind a static
 * doc/formats.md error kind when there is no header.
 */
json_t *flux_resource_parse(const char *buf, size_t len, const char **errkind,
                            exa_error_t *err);

/*
 * Per-node cores and GPUs from a Flux resource set R (RFC 20 R_lite and
 * nodelist, as `flux resource R [--states=S]` prints it): hosts gets the
 * expanded nodelist, which names the set's ranks in ascending order (the
 * set's lowest rank is hosts->v[0]: rank 0 only when the set holds it;
 * an empty set prints `"R_lite": [], "nodelist": [""]`: no hosts),
 * *cores and *gpus malloc'ed arrays of hosts->nr counts (caller frees).
 * Pure. 0 or -1 with err (EXA_EPARSE), also when the count of distinct
 * ranks differs from the count of hosts.
 */
int flux_r_per_node(const char *buf, size_t len, struct strvec *hosts,
                    long long **cores, long long **gpus, exa_error_t *err);

/*
 * flux_r_per_node(), and per host the GPU ids its R_lite entries name
 * (RFC 20 "gpu" idsets: the ids Flux's scheduler allocates, 0 .. n-1 on
 * a node of n GPUs): (*ids)[h] has bit i for id i, and (*ids_known)[h]
 * is 0 (its bits 0) when an id is past 63 or an idset is not one. Both
 * malloc'ed arrays of hosts->nr (caller frees). 0 or -1 with err as
 * flux_r_per_node().
 */
int flux_r_per_node_ids(const char *buf, size_t len, struct strvec *hosts,
                        long long **cores, long long **gpus,
                        unsigned long long **ids, int **ids_known,
                        exa_error_t *err);

/*
 * Complete the nodes of a `flux resource list` result doc
 * (flux_resource_parse(), modified in place) with what the list cannot
 * say (flux-resource(1)):
 *  - status: the text of `flux resource status` (NULL: skipped). The
 *    list folds drained and draining nodes into its "down" row; a node
 *    the status view calls drained/draining (or offline, exclude ...)
 *    takes that state ("drain" / "down") and raw_state ("drained").
 *  - R: the text of `flux resource R` (NULL: skipped). Every node R
 *    names gets its cpus and gpus from R (flux_r_per_node()), which a
 *    row grouping several nodes cannot split, and "gpu_ids": its GPU ids
 *    (flux_r_per_node_ids(); null when one is past 63).
 *  - alloc: the text of `flux resource R --states=allocated` (NULL:
 *    skipped): every node gets "cpus_used" and "gpus_used", the cores
 *    and GPUs of it that jobs hold (0 for a node the set does not name),
 *    and "gpus_used_idx", the ids of those GPUs ([] for a node the set
 *    does not name, null when one is past 63).
 *    The list cannot say this per node: a partly used node is in both
 *    its free and its allocated row.
 * Unreadable status, R or alloc text changes nothing. Returns the number
 * of node fields set.
 */
int flux_resource_apply(json_t *doc, const char *status, size_t status_len,
                        const char *R, size_t R_len, const char *alloc,
                        size_t alloc_len);

/*
 * The default queue named in `flux queue list -n -o '{queuem}'` output
 * (flux-queue(1): one queue name a line, the default one marked with a
 * trailing '*'; flux-config-queues(5) policy.jobspec.defaults.system.
 * queue), malloc'ed, or NULL when no line is a name marked so (no
 * queues, or no default). Pure.
 */
char *flux_default_queue(const char *buf, size_t len);

/*
 * The queues named in `flux queue list -n -o '{queuem}'` output (one
 * name a line, the default marked with '*'): lines that are a name
 * (flux_queue_name_ok()) with or without the mark; 0 for an instance
 * without queues (one empty line). Pure.
 */
size_t flux_queue_count(const char *buf, size_t len);

/* 1 when s[0..n) may be a Flux queue name as exa reads one: no blank,
 * control byte, NUL, DEL or '*' (the default mark), else 0
 * (flux-config-queues(5) names are TOML keys; these never print). Pure. */
int flux_queue_name_ok(const char *s, size_t n);

/*
 * The commands version of `flux version` output (flux-version(1): a
 * line "commands:\t\t0.88.0"), malloc'ed and trimmed, or NULL when no
 * line starts with "commands:" (or it holds nothing).
 */
char *flux_version_parse(const char *buf, size_t len);

/*
 * flux_resource_parse with the command line that printed buf (cmdspec.h,
 * parse_flux_resource_cmd.c): `flux resource list -n -o FORMAT` printed
 * no header, so the format's fields name the columns. Any other spec:
 * exactly flux_resource_parse.
 */
json_t *flux_resource_parse_cmd(const char *buf, size_t len,
                                const struct cmd_spec *spec,
                                const char **errkind, exa_error_t *err);

#endif
