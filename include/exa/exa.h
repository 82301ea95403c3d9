/*
 * exa/exa.h - the exa core as a C library (libexa.a, libexa.so; doc/libexa.md).
 *
 * Build against an installed exa with
 *     cc prog.c $(pkg-config --cflags --libs exa)
 * (static: add the archive and `pkg-config --static --libs exa`). The
 * include path pkg-config gives holds this header and, under exa/, the
 * core's own headers, which keep the paths they have in the source tree
 * ("libsched/sched.h"): including this one header is enough, and any of
 * them may be included alone.
 *
 * What a front end uses, bottom to top (doc/design.md §2); every
 * declaration carries its contract comment in its own header:
 *   libutil/error.h         exa_error_t, exa_err(), the error codes
 *   libstore/store.h        open platform.db (EXAMLOPS_DB)
 *   libfleet/gate.h         THE way to reach a cluster: open it by name
 *                           for a purpose (READ or SCHEDULE), with its
 *                           approval and pinned host key checked; submit,
 *                           record a job's end and accounting, cancel
 *   libfleet/registry.h     clusters.yaml (EXAMLOPS_HPC_REGISTRY)
 *   libfleet/governance.h   the registered clusters and their approval:
 *                           fleet_load(), fleet_find(),
 *                           fleet_require_active()
 *   libfleet/connect.h      the transport of a registered cluster (the
 *                           gate builds it; use the gate)
 *   libsched/sched.h        the scheduler adapter: submit, batched
 *                           status, cancel, logs (slurm, flux, mock)
 *   libsched/tracker.h      bounded waiting
 *   libsched/accounting.h   what a finished job used (GPU-hours, ...)
 *   libsched/runscript.h    run.sh for a payload argv
 *   libpipeline/cluster_run.h  `exa pipeline run --cluster` as one call
 *
 * Conventions (doc/style.md): functions return 0 / -1 or a pointer /
 * NULL and fill a caller-owned exa_error_t; they never print or exit;
 * allocation failure aborts; foo_create/foo_destroy and FOO_INIT/
 * foo_release pairs; headers say who frees what.
 */
#ifndef EXA_EXA_H
#define EXA_EXA_H

#include "libutil/error.h"
#include "libutil/strbuf.h"
#include "libutil/strvec.h"
#include "libstore/store.h"
#include "libstore/jobs.h"
#include "libfleet/registry.h"
#include "libfleet/governance.h"
#include "libfleet/connect.h"
#include "libfleet/gate.h"
#include "libtransport/transport.h"
#include "libsched/sched.h"
#include "libsched/resources.h"
#include "libsched/runscript.h"
#include "libsched/tracker.h"
#include "libsched/accounting.h"
#include "libsched/byname.h"
#include "libpipeline/cluster_run.h"

#endif
