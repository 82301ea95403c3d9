/*
 * collect.c - sources for real clusters (see collect.h).
 *
 * The transport and the sinfo/squeue parsers live in other layers; this
 * file only binds them to the exporter's obs_source interface, so the
 * exporter itself is tested with any source (tests/unit/test_exporter.c).
 */
#include "libobserve/collect.h"

struct obs_source *obs_collect_factory(const struct fv_cluster *c, void *ctx,
                                       exa_error_t *err)
{
    (void)ctx;
    exa_err(err, EXA_ECONFIG, "no collector for scheduler '%s' of '%s'",
            c->scheduler ? c->scheduler : "unknown", c->name);
    return NULL;
}
