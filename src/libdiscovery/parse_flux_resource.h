/*
 * parse_flux_resource.h - exa's reader of `flux resource list` and
 * `flux resource status` tables (flux-resource(1)), giving the per-row
 * groups and per-node records of shared/cases/FORMAT.md "Nodes".
 */
#ifndef EXA_PARSE_FLUX_RESOURCE_H
#define EXA_PARSE_FLUX_RESOURCE_H

#include <jansson.h>
#include <stddef.h>

#include "libutil/error.h"

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
 * Returns a new reference, or NULL with err set and *errkind a static
 * FORMAT.md error kind when there is no header.
 */
json_t *flux_resource_parse(const char *buf, size_t len,
                            const char **errkind, exa_error_t *err);

#endif
