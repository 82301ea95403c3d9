/*
 * file_sd.h - Prometheus file-based service discovery for the fleet.
 *
 * Format: https://prometheus.io/docs/prometheus/latest/configuration/
 * configuration/#file_sd_config - a JSON list of target groups
 * {"targets": ["host:port", ...], "labels": {...}}. exa writes one group
 * per (cluster, job): job "node" (node_exporter, every node) and "dcgm"
 * (dcgm-exporter, nodes with gpus > 0), labels cluster, scheduler, tenant
 * and job, ordered by (cluster, job) so "dcgm" precedes "node"; a target
 * is the node's address (Slurm NodeAddr, saved with the snapshot) when it
 * differs from the node name, else the name
 * (doc/reference.md §4.13); targets in node-name order.
 */
#ifndef EXA_FILE_SD_H
#define EXA_FILE_SD_H

#include <jansson.h>
#include <stddef.h>

#include "libobserve/fleet_view.h"
#include "libutil/error.h"

/*
 * Build the target groups of every cluster in fleet (the caller chose
 * which: prometheus-sd passes ACTIVE ones) with label tenant: the
 * cluster's own (clusters.yaml `tenant`), else tenant, else "default".
 * Clusters without nodes contribute no group. Returns a new JSON array;
 * *ntargets (may be NULL) gets the number of targets.
 */
json_t *file_sd_build(const struct fv_fleet *fleet, const char *tenant,
                      size_t *ntargets);

/*
 * Serialize groups (borrowed) as the file's bytes: 2-space indented JSON,
 * object keys sorted, a final newline; identical input gives identical
 * bytes. Returns a malloc'ed NUL-terminated string.
 */
char *file_sd_render(const json_t *groups);

#endif
