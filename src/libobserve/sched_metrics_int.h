/*
 * sched_metrics_int.h - what the job half (sched_metrics.c) and the node
 * half (sched_nodes.c) of the scheduler families share. Not installed.
 */
#ifndef EXA_SCHED_METRICS_INT_H
#define EXA_SCHED_METRICS_INT_H

#include <stddef.h>

#include "libobserve/promtext.h"
#include "libobserve/sched_metrics.h"

/* The family prefix_suffix ("slurm", "nodes_idle"): untyped when its name
 * ends in _total (promtool's lint), else a gauge; a bad name is a bug. */
struct prom_family *sm_fam(struct prom_set *set, const char *prefix,
                           const char *suffix, const char *help);
/* prom_add(); a bad label is a bug. */
void sm_add(struct prom_family *f, const char *const *labels, double v);
/* prom_labels_make() on set; a bad label is a bug. */
struct prom_labels sm_labels(struct prom_set *set, const char *const *list);
/* djb2 of the NUL-terminated s. */
size_t sm_strhash(const char *s);

/*
 * Add the node families of snapshot s for cluster cl to set (prefix px).
 * jobs_cpus / jobs_gpus: the running jobs' CPUs and GPUs (-1 when no job
 * reported a count), for the allocated and idle totals.
 */
void sm_render_nodes(struct prom_set *set, const char *px, const char *cl,
                     const struct obs_snapshot *s, double jobs_cpus,
                     double jobs_gpus);

#endif
