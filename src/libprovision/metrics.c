/*
 * metrics.c - the workers' /metrics families (metrics.h), from the
 * engine's and the provisioner's counters and three small reads of
 * platform.db (workers by state, tasks by state, live requests).
 */
#include "libprovision/metrics.h"

#include <string.h>
#include <time.h>

#include "libobserve/promtext.h"
#include "libstore/provreq.h"
#include "libstore/tasks.h"

#define ADD(fam, lbl, v)                                                       \
    do {                                                                       \
        if (prom_add((fam), (lbl), (double)(v), err) < 0)                      \
            goto fail;                                                         \
    } while (0)

int worker_metrics_render(task_engine_t *e, struct provisioner *p, store_t *st,
                          struct strbuf *out, exa_error_t *err)
{
    static const char *const tstates[5] = {"queued", "leased", "done", "failed",
                                           "cancelled"};
    static const char *const causes[4] = {"dead", "restart", "revoked",
                                          "released"};
    static const char *const outcomes[4] = {"accepted", "duplicate", "stale",
                                            "late_ok"};
    struct prom_set *set = prom_set_new();
    struct prom_family *f;
    struct te_counters c;
    struct worker_rec *ws = NULL;
    struct provreq *rq = NULL;
    struct node_exclusion *xv = NULL;
    size_t nws = 0, nrq = 0, nx = 0;
    long long counts[5];
    int rc = -1;

    te_counters_get(e, &c);
    if (store_worker_list(st, &ws, &nws, err) < 0 ||
        store_task_counts(st, counts, err) < 0)
        goto fail;
    if (!(f = prom_family(set, "exa_workers", PROM_GAUGE,
                          "workers known to the engine, by state", err)))
        goto fail;
    for (size_t i = 0; i < nws; i++) {
        const char *l[] = {"cluster", ws[i].cluster ? ws[i].cluster : "",
                           "profile", ws[i].profile ? ws[i].profile : "",
                           "state",   ws[i].state,
                           NULL};
        ADD(f, l, 1);
    }
    if (!(f = prom_family(set, "exa_worker_registrations_total", PROM_COUNTER,
                          "registrations by result", err)))
        goto fail;
    for (int r = 0; r < 8; r++) {
        const char *l[] = {"result", te_reg_result_name(r), NULL};
        ADD(f, l, c.registrations[r]);
    }
    if (!(f = prom_family(set, "exa_worker_lost_total", PROM_COUNTER,
                          "workers declared lost", err)))
        goto fail;
    ADD(f, NULL, c.worker_lost);
    if (!(f = prom_family(set, "exa_worker_black_holes_total", PROM_COUNTER,
                          "workers drained because their tasks failed fast "
                          "with infrastructure signs (exit 126/127)",
                          err)))
        goto fail;
    ADD(f, NULL, c.black_holes);
    if (!(f = prom_family(set, "exa_tasks", PROM_GAUGE, "tasks by state", err)))
        goto fail;
    for (int i = 0; i < 5; i++) {
        const char *l[] = {"state", tstates[i], NULL};
        ADD(f, l, counts[i]);
    }
    if (!(f = prom_family(set, "exa_task_leases_total", PROM_COUNTER,
                          "leases handed out", err)))
        goto fail;
    ADD(f, NULL, c.leases);
    if (!(f = prom_family(set, "exa_task_lease_expired_total", PROM_COUNTER,
                          "leases ended without a result, by cause", err)))
        goto fail;
    for (int i = 0; i < 4; i++) {
        const char *l[] = {"cause", causes[i], NULL};
        ADD(f, l, c.expired[i]);
    }
    if (!(f = prom_family(set, "exa_task_results_total", PROM_COUNTER,
                          "results by outcome", err)))
        goto fail;
    for (int i = 0; i < 4; i++) {
        const char *l[] = {"outcome", outcomes[i], NULL};
        ADD(f, l, c.results[i]);
    }
    if (!(f = prom_family(set, "exa_task_result_posts_total", PROM_COUNTER,
                          "result requests answered 200 (a worker posts "
                          "every result it has done in one)",
                          err)))
        goto fail;
    ADD(f, NULL, c.result_posts);
    if (!(f = prom_family(set, "exa_longpoll_parked", PROM_GAUGE,
                          "lease requests parked now", err)))
        goto fail;
    ADD(f, NULL, c.parked);
    if (p) {
        struct prov_counters pc;
        static const char *const outs[5] = {"submitted", "submit_error",
                                            "timeout", "ended_before_attach",
                                            "orphan_cancelled"};
        unsigned long long v[5];
        prov_counters_get(p, &pc);
        v[0] = pc.submitted;
        v[1] = pc.submit_failed;
        v[2] = pc.timeouts;
        v[3] = pc.start_failed;
        v[4] = pc.orphans;
        if (!(f = prom_family(set, "exa_provision_requests_total", PROM_COUNTER,
                              "provisioner requests and their outcomes", err)))
            goto fail;
        for (int i = 0; i < 5; i++) {
            const char *l[] = {"outcome", outs[i], NULL};
            ADD(f, l, v[i]);
        }
        if (!(f = prom_family(set, "exa_scheduler_command_errors_total",
                              PROM_COUNTER,
                              "scheduler commands of the provisioner that "
                              "failed",
                              err)))
            goto fail;
        {
            const char *l[] = {"command", "squeue", NULL};
            ADD(f, l, pc.squeue_errors);
        }
        if (store_provreq_list(st, NULL, "live", 0, &rq, &nrq, err) < 0)
            goto fail;
        if (!(f = prom_family(set, "exa_provision_outstanding", PROM_GAUGE,
                              "outstanding requests (intent or submitted)",
                              err)))
            goto fail;
        for (size_t i = 0; i < nrq; i++) {
            const char *l[] = {"cluster", rq[i].cluster, "profile",
                               rq[i].profile, NULL};
            ADD(f, l, 1);
        }
        /* black-hole nodes (WORKERS.md §9.4): how many, never which (a
         * node name is no bounded label); 0 for every configured profile */
        if (store_node_exclusions(st, NULL, NULL, (double)time(NULL), &xv, &nx,
                                  err) < 0)
            goto fail;
        if (!(f = prom_family(set, "exa_provision_excluded_nodes", PROM_GAUGE,
                              "nodes excluded from a profile's sbatch "
                              "(--exclude) after two failed starts or "
                              "black-hole drains there",
                              err)))
            goto fail;
        {
            const struct prov_config *cfg = prov_config_of(p);
            for (size_t i = 0; i < cfg->n; i++)
                for (size_t k = 0; k < cfg->v[i].np; k++) {
                    const char *cl = cfg->v[i].cluster;
                    const char *pr = cfg->v[i].p[k].name;
                    const char *l[] = {"cluster", cl, "profile", pr, NULL};
                    int dup = 0;
                    long long cnt = 0;
                    /* two provisioners may share a cluster and a name */
                    for (size_t a = 0; a <= i && !dup; a++)
                        for (size_t b = 0; b < cfg->v[a].np && !dup; b++)
                            if ((a < i || b < k) &&
                                !strcmp(cfg->v[a].cluster, cl) &&
                                !strcmp(cfg->v[a].p[b].name, pr))
                                dup = 1;
                    if (dup)
                        continue;
                    for (size_t x = 0; x < nx; x++)
                        cnt += !strcmp(xv[x].cluster, cl) &&
                               !strcmp(xv[x].profile, pr);
                    ADD(f, l, cnt);
                }
        }
    }
    prom_render(set, out);
    rc = 0;
fail:
    worker_rec_free_list(ws, nws);
    provreq_free_list(rq, nrq);
    node_exclusions_free(xv, nx);
    prom_set_free(set);
    return rc;
}
