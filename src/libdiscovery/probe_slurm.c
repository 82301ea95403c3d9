/*
 * probe_slurm.c - the slurm probe: `sinfo --version` for presence,
 * sacctmgr for accounting and `scontrol show partition -o` for the
 * partitions, `sinfo -N --Format` for the nodes (parsed by parse_sinfo.c),
 * and GPUs as counts per node. Read-only commands only, each through the
 * transport; registered by probe.c as "slurm".
 */
#include "libdiscovery/probe_int.h"

#include <stdlib.h>
#include <string.h>

#include "libdiscovery/parse_sinfo.h"
#include "libutil/strbuf.h"
#include "libutil/xalloc.h"

/*
 * Node listing: one row per node and partition, '|' after every field and
 * no padding (an empty width in --Format prints the value as is), so no
 * value can shift a column. Header names: NODELIST|CPUS|MEMORY|GRES|
 * GRES_USED|STATE|NODE_ADDR|PARTITION. Source: sinfo(1) "-O, --Format"
 * (NodeAddr: where slurmctld reaches the node, the file_sd target).
 */
static const char *const SINFO_NODES_ARGV[] = {
    "sinfo", "-N",
    "--Format=NodeList:|,CPUs:|,Memory:|,Gres:|,GresUsed:|,StateLong:|,"
    "NodeAddr:|,Partition:",
    NULL};

static int slurm_available(struct transport *t, char **version,
                           exa_error_t *err)
{
    const char *argv[] = {"sinfo", "--version", NULL};
    struct transport_result r = TRANSPORT_RESULT_INIT;
    int ok = run_ok(t, argv, &r, err);
    if (ok == 1 && version)
        *version = tool_message(r.out.buf, r.out.len, 0);
    transport_result_release(&r);
    return ok;
}

static int slurm_caps(struct transport *t, struct cluster_caps *caps,
                      exa_error_t *err)
{
    const char *acct[] = {"sacctmgr", "-n", "-P", "list", "cluster", NULL};
    const char *part[] = {"scontrol", "show", "partition", "-o", NULL};
    struct transport_result r = TRANSPORT_RESULT_INIT;
    int ok;
    if (!caps->version && slurm_available(t, &caps->version, err) < 0)
        return -1;
    ok = run_ok(t, acct, &r, err);
    if (ok < 0)
        goto fail;
    caps->accounting = ok == 1 && r.out.len > 0;
    if (!caps->accounting)
        strvec_push(&caps->notes, "slurm accounting (slurmdbd) not "
                                  "reachable \u2014 accounts and QOS cannot "
                                  "be validated");
    transport_result_release(&r);
    r = (struct transport_result)TRANSPORT_RESULT_INIT;
    ok = run_ok(t, part, &r, err);
    if (ok < 0)
        goto fail;
    if (ok == 1 &&
        parse_scontrol_partitions(r.out.buf, r.out.len, &caps->partitions,
                                  &caps->npartitions, NULL) < 0)
        strvec_push(&caps->notes, "could not read 'scontrol show partition'");
    transport_result_release(&r);
    return 0;
fail:
    transport_result_release(&r);
    return -1;
}

static int slurm_nodes(struct transport *t, struct node_info **out, size_t *n,
                       exa_error_t *err)
{
    struct transport_result r = TRANSPORT_RESULT_INIT;
    struct sinfo_result sr;
    const char *kind = NULL;
    struct node_info *v = NULL;
    int ran = probe_run(t, SINFO_NODES_ARGV, &r, err), rc = -1;
    memset(&sr, 0, sizeof(sr));
    if (ran < 0)
        goto out;
    if (ran == 0 || r.rc != 0) {
        sched_fail(t, "sinfo", &r, err);
        goto out;
    }
    {
        /* the columns and separator are the ones SINFO_NODES_ARGV asked */
        struct cmd_spec spec = CMD_SPEC_INIT;
        int prc;
        size_t nargv = 0;
        while (SINFO_NODES_ARGV[nargv])
            nargv++;
        cmd_spec_from_argv(SINFO_NODES_ARGV, nargv, &spec);
        prc = sinfo_parse_cmd(r.out.buf, r.out.len, &spec, &sr, &kind, err);
        cmd_spec_release(&spec);
        if (prc < 0) {
            exa_err_prefix(err, "sinfo on '%s'", t->host);
            goto out;
        }
    }
    v = xcalloc(sr.nnodes ? sr.nnodes : 1, sizeof(*v));
    for (size_t i = 0; i < sr.nnodes; i++) {
        const struct sinfo_node *s = &sr.nodes[i];
        struct node_info *d = &v[i];
        d->name = xstrdup(s->name);
        d->cpus = s->has_cpus ? s->cpus : -1;
        d->mem_mb = s->has_mem ? s->mem_mb : -1;
        d->gpus = s->has_gres ? s->gpus : -1;
        d->gpus_used = s->has_gres_used ? s->gpus_used : -1;
        d->has_gpu_used_mask = s->has_gres_used && s->has_gpu_used_mask;
        d->gpu_used_mask = d->has_gpu_used_mask ? s->gpu_used_mask : 0;
        d->gpu_model = join_or_null(s->gpu_type);
        d->state = xstrdup(s->state ? s->state : "unknown");
        d->raw_state = join_or_null(s->raw_state);
        d->addr = s->addr && strcmp(s->addr, s->name) ? xstrdup(s->addr) : NULL;
        strvec_init(&d->partitions);
        for (size_t k = 0; k < s->partitions.nr; k++)
            strvec_push(&d->partitions, s->partitions.v[k]);
    }
    *out = v;
    *n = sr.nnodes;
    rc = 0;
out:
    sinfo_result_free(&sr);
    transport_result_release(&r);
    return rc;
}

static int slurm_gpus(struct transport *t, struct gpu_info **out, size_t *n,
                      exa_error_t *err)
{
    return probe_gpus_by_count(t, slurm_nodes, out, n, err);
}

const struct probe probe_slurm = {"slurm",    "slurm",     slurm_available,
                                  slurm_caps, slurm_nodes, slurm_gpus};
