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
 * GRES_USED|STATE|PARTITION. Source: sinfo(1) "-O, --Format".
 */
static const char *const SINFO_NODES_ARGV[] = {
    "sinfo", "-N",
    "--Format=NodeList:|,CPUs:|,Memory:|,Gres:|,GresUsed:|,StateLong:|,"
    "Partition:",
    NULL};

static int slurm_available(struct transport *t, char **version,
                           exa_error_t *err)
{
    const char *argv[] = {"sinfo", "--version", NULL};
    struct transport_result r = TRANSPORT_RESULT_INIT;
    int ok = run_ok(t, argv, &r, err);
    if (ok == 1 && version)
        *version = first_line_dup(&r.out);
    transport_result_release(&r);
    return ok;
}

static char *kv_dup(const char *line, const char *key)
{
    const char *p = line;
    size_t kl = strlen(key);
    while ((p = strstr(p, key))) {
        if ((p == line || p[-1] == ' ') && p[kl] == '=') {
            const char *v = p + kl + 1, *e = v;
            while (*e && *e != ' ' && *e != '\n')
                e++;
            return xstrndup(v, (size_t)(e - v));
        }
        p += kl;
    }
    return NULL;
}

static long long kv_int(const char *line, const char *key)
{
    char *v = kv_dup(line, key), *end;
    long long r = -1;
    if (v && *v) {
        r = strtoll(v, &end, 10);
        if (*end || r < 0)
            r = -1;
    }
    free(v);
    return r;
}

int parse_scontrol_partitions(const char *buf, size_t len,
                              struct partition_info **out, size_t *n,
                              exa_error_t *err)
{
    struct partition_info *v = NULL;
    size_t nr = 0, alloc = 0, i = 0;
    while (i < len) {
        size_t j = i;
        char *line, *name;
        while (j < len && buf[j] != '\n')
            j++;
        line = xstrndup(buf + i, j - i);
        i = j + 1;
        name = kv_dup(line, "PartitionName");
        if (name) {
            struct partition_info *p;
            char *def = kv_dup(line, "Default");
            ALLOC_GROW(v, nr + 1, alloc);
            p = &v[nr++];
            p->name = name;
            p->state = kv_dup(line, "State");
            p->max_time = kv_dup(line, "MaxTime");
            p->max_nodes = kv_int(line, "MaxNodes");
            p->total_nodes = kv_int(line, "TotalNodes");
            p->total_cpus = kv_int(line, "TotalCPUs");
            p->is_default = def && !strcmp(def, "YES");
            free(def);
        }
        free(line);
    }
    if (!nr && len && !memchr(buf, '=', len)) {
        free(v);
        return exa_err(err, EXA_EPARSE,
                       "scontrol show partition printed no partitions");
    }
    *out = v;
    *n = nr;
    return 0;
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
        d->gpu_model = join_or_null(s->gpu_type);
        d->state = xstrdup(s->state ? s->state : "unknown");
        d->raw_state = join_or_null(s->raw_state);
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

const struct probe probe_slurm = {
    "slurm", "slurm", slurm_available, slurm_caps, slurm_nodes, slurm_gpus};
