/*
 * preflight.c - the checks of preflight.h. Each check appends one line to
 * the report; none aborts the run except where a later check cannot mean
 * anything (no transport: nothing else can be asked). The node checks use
 * the probe's inventory, counting nodes that can take work (idle, mixed
 * or allocated: a queued job waits for them) and never down, drained or
 * unknown ones, so a drained node fails a job that needs it.
 */
#include "libdiscovery/preflight.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "libdiscovery/parse_flux_resource.h"
#include "libdiscovery/parse_sacctmgr.h"
#include "libdiscovery/probe.h"
#include "libsched/parse_message.h"
#include "libsched/resources.h"
#include "libutil/json.h"
#include "libutil/strbuf.h"
#include "libutil/strvec.h"
#include "libutil/xalloc.h"

static void add(struct preflight_report *rep, const char *check, int ok,
                const char *fmt, ...) __attribute__((format(printf, 4, 5)));

static void add(struct preflight_report *rep, const char *check, int ok,
                const char *fmt, ...)
{
    struct strbuf sb = STRBUF_INIT;
    va_list ap;
    struct preflight_check *c;
    va_start(ap, fmt);
    strbuf_vaddf(&sb, fmt, ap);
    va_end(ap);
    ALLOC_GROW(rep->checks, rep->n + 1, rep->alloc);
    c = &rep->checks[rep->n++];
    c->check = xstrdup(check);
    c->ok = ok;
    c->detail = strbuf_detach(&sb, NULL);
    if (!ok)
        rep->ok = 0;
}

void preflight_report_release(struct preflight_report *rep)
{
    for (size_t i = 0; i < rep->n; i++) {
        free(rep->checks[i].check);
        free(rep->checks[i].detail);
    }
    free(rep->checks);
    memset(rep, 0, sizeof(*rep));
}

json_t *preflight_report_json(const char *cluster,
                              const struct preflight_report *rep)
{
    json_t *d = json_object(), *a = json_array();
    for (size_t i = 0; i < rep->n; i++) {
        json_t *o = json_object();
        jx_set(o, "check", jx_str(rep->checks[i].check));
        jx_set(o, "ok", json_boolean(rep->checks[i].ok));
        jx_set(o, "detail", jx_str(rep->checks[i].detail));
        json_array_append_new(a, o);
    }
    jx_set(d, "cluster", jx_str(cluster));
    jx_set(d, "ok", json_boolean(rep->ok));
    jx_set(d, "checks", a);
    return d;
}

static int node_can_take_work(const struct node_info *n)
{
    return n->state &&
           (!strcmp(n->state, "idle") || !strcmp(n->state, "mixed") ||
            !strcmp(n->state, "allocated"));
}

/* 1 when node n is in part: a name, or a list "a,b" (sbatch -p: any of
 * them); NULL: every node. */
static int in_partition(const struct node_info *n, const char *part)
{
    if (!part)
        return 1;
    for (size_t i = 0; i < n->partitions.nr; i++)
        if (csv_has(part, n->partitions.v[i], strlen(n->partitions.v[i])))
            return 1;
    return 0;
}

/* The partition table entry of caps named name[0..l), or NULL. */
static const struct partition_info *find_partition(const struct inventory *inv,
                                                   const char *name, size_t l)
{
    for (size_t i = 0; i < inv->caps.npartitions; i++)
        if (strlen(inv->caps.partitions[i].name) == l &&
            !memcmp(inv->caps.partitions[i].name, name, l))
            return &inv->caps.partitions[i];
    return NULL;
}

/*
 * The "partition" check of a partition the job names: part (a name, or a
 * list "a,b": sbatch refuses a job naming one that does not exist, and
 * starts it in whichever can run it first), from (NULL: asked; else what
 * set it, for the detail). Every name must exist and one be UP; with no
 * partition table (Flux without queues listed) a name is one the nodes
 * carry. Returns part for the node checks, or NULL when it failed.
 */
static const char *check_named_partition(const struct inventory *inv,
                                         const char *part, const char *from,
                                         struct preflight_report *rep)
{
    const char *missing = NULL, *state = NULL;
    size_t missing_l = 0;
    int up = 0;
    for (const char *c = part, *e; c; c = *e ? e + 1 : NULL) {
        const struct partition_info *found;
        e = strchr(c, ',');
        if (!e)
            e = c + strlen(c);
        found = find_partition(inv, c, (size_t)(e - c));
        if (!found && !inv->caps.npartitions) {
            /* no partition table (flux queues): look at the nodes */
            int any = 0;
            struct strbuf one = STRBUF_INIT;
            strbuf_add(&one, c, (size_t)(e - c));
            for (size_t i = 0; i < inv->nnodes && !any; i++)
                any = in_partition(&inv->nodes[i], one.buf);
            strbuf_release(&one);
            up |= any;
            if (!any && !missing) {
                missing = c;
                missing_l = (size_t)(e - c);
            }
            continue;
        }
        if (!found) {
            if (!missing) {
                missing = c;
                missing_l = (size_t)(e - c);
            }
            continue;
        }
        if (!found->state || !strcmp(found->state, "UP"))
            up = 1;
        state = found->state;
    }
    if (missing) {
        add(rep, "partition", 0, "'%.*s' does not exist%s%s", (int)missing_l,
            missing, from ? ": " : "", from ? from : "");
        return NULL;
    }
    if (strchr(part, ','))
        add(rep, "partition", up, "'%s' exist (%s)%s%s", part,
            up ? "one is UP" : "none is UP", from ? ": " : "",
            from ? from : "");
    else if (!inv->caps.npartitions)
        add(rep, "partition", up, "'%s' exists%s%s", part, from ? ": " : "",
            from ? from : "");
    else
        add(rep, "partition", up, "'%s' exists (state %s)%s%s", part,
            state ? state : "?", from ? ": " : "", from ? from : "");
    return part;
}

/*
 * SBATCH_PARTITION in the environment sbatch runs in (`printenv` through
 * t: exa's own for a local cluster; over ssh that of the non-interactive
 * shell ssh runs commands in, ~/.bashrc and not the login profile):
 * sbatch takes it for a job that names no partition (sbatch(1) "INPUT
 * ENVIRONMENT VARIABLES"). Its names as sbatch reads them
 * (slurm_partition_env_value()), malloc'ed; NULL when unset or naming
 * none.
 */
static char *sbatch_partition_env(struct transport *t)
{
    const char *argv[] = {"printenv", "SBATCH_PARTITION", NULL};
    struct transport_result r = TRANSPORT_RESULT_INIT;
    char *v = NULL;
    if (transport_run(t, argv, NULL, 0, 0, &r, NULL) == 0 && r.rc == 0 &&
        r.out.len)
        v = slurm_partition_env_value(r.out.buf, r.out.len);
    transport_result_release(&r);
    return v;
}

/* First line of a result's stderr (else stdout), for details. */
static void message_line(const struct transport_result *r, char *buf, size_t n)
{
    /* the tool's own words (parse_message.h), cut to fit a report line */
    const struct strbuf *s = r->err.len ? &r->err : &r->out;
    char *m = tool_message(s->buf, s->len, n - 1);
    size_t l = m ? strlen(m) : 0;
    memcpy(buf, m ? m : "", l + 1);
    free(m);
}

/* The remote user: ask->user, else `id -un` through t. */
static char *remote_user(struct transport *t, const char *user)
{
    const char *argv[] = {"id", "-un", NULL};
    struct transport_result r = TRANSPORT_RESULT_INIT;
    char *u = NULL;
    if (user && *user)
        return xstrdup(user);
    if (probe_run(t, argv, &r, NULL) == 1 && r.rc == 0) {
        strbuf_trim(&r.out);
        if (r.out.len)
            u = xstrdup(r.out.buf);
    }
    transport_result_release(&r);
    return u;
}

/*
 * Slurm associations of user: lines "account|qos1,qos2". Checks account
 * (any row) and qos (in the account's row, or any row when no account).
 */
static void check_slurm_assoc(struct transport *t,
                              const struct preflight_ask *ask,
                              struct preflight_report *rep)
{
    char *user = remote_user(t, ask->user), *ufilter;
    struct transport_result r = TRANSPORT_RESULT_INIT;
    exa_error_t err = EXA_ERROR_INIT;
    int acct_ok = 0, qos_ok = 0, ran;
    char line[256];
    if (!user) {
        if (ask->account)
            add(rep, "account", 0, "cannot tell the remote user");
        if (ask->qos)
            add(rep, "qos", 0, "cannot tell the remote user");
        return;
    }
    ufilter = xstrfmt("user=%s", user);
    {
        const char *argv[] = {
            "sacctmgr",           "-n", "-P", "show", "assoc", ufilter,
            "format=account,qos", NULL};
        ran = probe_run(t, argv, &r, &err);
    }
    if (ran <= 0 || r.rc != 0) {
        if (ran == 1)
            message_line(&r, line, sizeof(line));
        else
            xsnprintf(line, sizeof(line), "%s",
                      ran < 0 ? err.text : "sacctmgr not found");
        if (ask->account)
            add(rep, "account", 0, "cannot list associations of '%s': %s", user,
                line);
        if (ask->qos)
            add(rep, "qos", 0, "cannot list associations of '%s': %s", user,
                line);
        goto out;
    }
    {
        struct sacctmgr_assoc *as;
        size_t nas;
        sacctmgr_assoc_parse(r.out.buf, r.out.len, &as, &nas);
        for (size_t k = 0; k < nas; k++) {
            int this_acct =
                ask->account && !strcmp(as[k].account, ask->account);
            if (this_acct)
                acct_ok = 1;
            if (ask->qos && (!ask->account || this_acct))
                for (size_t i = 0; i < as[k].qos.nr; i++)
                    if (!strcmp(as[k].qos.v[i], ask->qos))
                        qos_ok = 1;
        }
        sacctmgr_assocs_free(as, nas);
    }
    if (ask->account)
        add(rep, "account", acct_ok,
            acct_ok ? "account '%s' is associated with user '%s'"
                    : "account '%s' is not associated with user '%s'",
            ask->account, user);
    if (ask->qos)
        add(rep, "qos", qos_ok,
            qos_ok ? "QOS '%s' is allowed for user '%s'"
                   : "QOS '%s' is not allowed for user '%s'",
            ask->qos, user);
out:
    transport_result_release(&r);
    free(ufilter);
    free(user);
}

/* Flux banks: `flux account view-user USER` names the user's banks. */
static void check_flux_bank(struct transport *t,
                            const struct preflight_ask *ask,
                            const struct inventory *inv,
                            struct preflight_report *rep)
{
    char *user;
    struct transport_result r = TRANSPORT_RESULT_INIT;
    int ran;
    if (!ask->account)
        return;
    if (!inv->caps.accounting) {
        add(rep, "account", 0,
            "bank '%s' asked but flux-accounting is not installed",
            ask->account);
        return;
    }
    user = remote_user(t, ask->user);
    {
        const char *argv[] = {"flux", "account", "view-user", user ? user : "",
                              NULL};
        ran = probe_run(t, argv, &r, NULL);
    }
    add(rep, "account",
        ran == 1 && r.rc == 0 && strstr(r.out.buf, ask->account) != NULL,
        "bank '%s' for user '%s'", ask->account, user ? user : "?");
    transport_result_release(&r);
    free(user);
}

/*
 * Flux: the slot shape `flux batch` will get (sched_flux_slots(), the
 * rule flux.c submits with): a count of slots always (flux batch refuses
 * a job without -n/-N), and GPUs that split evenly over the slots.
 */
static void check_flux_slots(const struct preflight_ask *ask,
                             struct preflight_report *rep)
{
    exa_error_t err = EXA_ERROR_INIT;
    long slots, per;

    if (sched_flux_slots(ask->ntasks, ask->nodes, ask->gpus, &slots, &per,
                         &err) < 0) {
        add(rep, "slots", 0, "%s", err.text);
        return;
    }
    if (per)
        add(rep, "slots", 1,
            "flux batch gets -n%ld with -g%ld per slot "
            "(%ld GPUs in all)",
            slots, per, slots * per);
    else
        add(rep, "slots", 1, "flux batch gets -n%ld", slots);
}

/*
 * Flux without --partition, where the probe has no queues (none
 * configured, or a flux whose `flux queue list` lacks the probe's
 * fields): a job goes to the default queue when queues are configured
 * (flux-config-queues(5)), so the node checks count its nodes only:
 * `flux queue list -n -o '{queuem}'` names it with a '*'
 * (flux_default_queue()); named queues without one fail, as
 * check_flux_queues(). Returns the queue (*dq, caller frees) to count
 * nodes in, or NULL (no queues, or the command failed, which the check
 * says: the whole instance).
 */
static const char *check_flux_default_queue(struct transport *t,
                                            const struct inventory *inv,
                                            struct preflight_report *rep,
                                            char **dq)
{
    const char *argv[] = {"flux", "queue",    "list", "-n",
                          "-o",   "{queuem}", NULL};
    struct transport_result r = TRANSPORT_RESULT_INIT;
    exa_error_t err = EXA_ERROR_INIT;
    size_t n = 0, named = 0;
    int listed = 0;
    *dq = NULL;
    if (transport_run(t, argv, NULL, 0, 0, &r, &err) == 0 && r.rc == 0) {
        listed = 1;
        *dq = flux_default_queue(r.out.buf, r.out.len);
        named = flux_queue_count(r.out.buf, r.out.len);
    }
    transport_result_release(&r);
    if (!listed) {
        add(rep, "partition", 1,
            "none asked; the queues could not be listed (flux queue list "
            "failed), so none is checked: counting the whole instance");
        return NULL;
    }
    if (!*dq && named) {
        add(rep, "partition", 0,
            "none asked, and no queue is the default: flux needs --queue "
            "(%zu queue(s); flux-run: \"no queue specified\")",
            named);
        return NULL;
    }
    if (!*dq)
        return NULL;
    for (size_t i = 0; i < inv->nnodes; i++)
        n += in_partition(&inv->nodes[i], *dq);
    add(rep, "partition", n > 0,
        "none asked: the default queue '%s' (flux queue list), %zu node(s)",
        *dq, n);
    return *dq;
}

/* The partition (queue) caps marks the default, or NULL. */
static const struct partition_info *
default_partition(const struct inventory *inv)
{
    for (size_t i = 0; i < inv->caps.npartitions; i++)
        if (inv->caps.partitions[i].is_default)
            return &inv->caps.partitions[i];
    return NULL;
}

/*
 * Flux without --partition where the probe read the queues
 * (caps.partitions, parse_flux_queue_list()): the default one, which
 * must take and start jobs (UP) and hold a node; with named queues and
 * no default, flux refuses a job that names none ("no queue specified",
 * flux-core's jobspec defaults plugin, frobnicator/plugins/defaults.py).
 * Returns the queue to count nodes in, or NULL.
 */
static const char *check_flux_queues(const struct inventory *inv,
                                     struct preflight_report *rep)
{
    const struct partition_info *def = default_partition(inv);
    size_t n = 0;
    if (!def) {
        add(rep, "partition", 0,
            "none asked, and no queue is the default: flux needs --queue "
            "(%zu queue(s); flux-run: \"no queue specified\")",
            inv->caps.npartitions);
        return NULL;
    }
    for (size_t i = 0; i < inv->nnodes; i++)
        n += in_partition(&inv->nodes[i], def->name);
    add(rep, "partition", n > 0 && (!def->state || !strcmp(def->state, "UP")),
        "none asked: the default queue '%s' (flux queue list, state %s), "
        "%zu node(s)",
        def->name, def->state ? def->state : "?", n);
    return def->name;
}

/*
 * Slurm without --partition: sbatch puts a job in the partition marked
 * Default=YES (slurm.conf(5) "Default"; `scontrol show partition -o`,
 * read into caps.partitions[].is_default), so the node checks count its
 * nodes only; with partitions but none marked default sbatch refuses the
 * job ("No partition specified or system default partition"), unless a
 * job_submit plugin (`scontrol show config`: JobSubmitPlugins) picks
 * one. Returns the partition to count nodes in, or NULL (no partition
 * table, or a plugin that may choose: the whole cluster).
 */
static const char *check_slurm_default_partition(struct transport *t,
                                                 const struct inventory *inv,
                                                 struct preflight_report *rep)
{
    const char *argv[] = {"scontrol", "show", "config", NULL};
    struct transport_result r = TRANSPORT_RESULT_INIT;
    const struct partition_info *def = default_partition(inv);
    char *plugins = NULL;
    if (!inv->caps.npartitions)
        return NULL;
    /* A job_submit plugin (slurm.conf JobSubmitPlugins: a site's
     * job_submit.lua, all_partitions, ...) may set or change the
     * partition of a job that names none: exa cannot know which, so the
     * checks count the whole cluster, and say why. */
    if (transport_run(t, argv, NULL, 0, 0, &r, NULL) == 0 && r.rc == 0)
        plugins = slurm_config_value(r.out.buf, r.out.len, "JobSubmitPlugins");
    transport_result_release(&r);
    if (plugins && *plugins && strcmp(plugins, "(null)")) {
        add(rep, "partition", 1,
            "none asked: the job_submit plugin(s) '%s' (JobSubmitPlugins) "
            "may choose it; counting the whole cluster",
            plugins);
        free(plugins);
        return NULL;
    }
    free(plugins);
    if (!def) {
        add(rep, "partition", 0,
            "none asked, and no partition is Default=YES: sbatch needs "
            "--partition (%zu partition(s))",
            inv->caps.npartitions);
        return NULL;
    }
    add(rep, "partition", !def->state || !strcmp(def->state, "UP"),
        "none asked: the default partition '%s' (Default=YES, state %s)",
        def->name, def->state ? def->state : "?");
    return def->name;
}

/*
 * part: the partition to count nodes in (NULL: the whole cluster). flux:
 * without --nodes, Flux places each slot on a node of its choosing (one
 * node may hold several), so the GPUs check counts the slots of
 * gpus/slots GPUs (sched_flux_slots()) the usable nodes can hold, not
 * one node holding all of them.
 */
static void check_nodes(const struct inventory *inv,
                        const struct preflight_ask *ask, const char *part,
                        int flux, struct preflight_report *rep)
{
    int nn = ask->nodes > 0 ? ask->nodes : 1;
    long long per = ask->gpus > 0 ? (ask->gpus + nn - 1) / nn : 0;
    long long usable = 0, gpus = 0, fit = 0, maxg = 0, unusable = 0;
    long slots = 0, per_slot = 0;
    long long slot_fit = 0;
    exa_error_t serr = EXA_ERROR_INIT;
    int by_slot = flux && ask->nodes <= 0 && ask->gpus > 0 &&
                  sched_flux_slots(ask->ntasks, ask->nodes, ask->gpus, &slots,
                                   &per_slot, &serr) == 0 &&
                  per_slot > 0;
    for (size_t i = 0; i < inv->nnodes; i++) {
        const struct node_info *n = &inv->nodes[i];
        long long g = n->gpus > 0 ? n->gpus : 0;
        if (!in_partition(n, part))
            continue;
        if (!node_can_take_work(n)) {
            unusable++;
            continue;
        }
        usable++;
        gpus += g;
        if (g > maxg)
            maxg = g;
        if (g >= per)
            fit++;
        if (by_slot)
            slot_fit += g / per_slot;
    }
    if (ask->gpus > 0) {
        add(rep, "gpus", gpus >= ask->gpus,
            "asked %d, %s has %lld on usable nodes", ask->gpus,
            part ? part : "cluster", gpus);
        if (by_slot)
            add(rep, "gpus_per_node", slot_fit >= slots,
                "asked %ld slot(s) of %ld GPU(s), each on one node; the "
                "usable nodes hold %lld such slot(s) (largest node: %lld "
                "GPUs)",
                slots, per_slot, slot_fit, maxg);
        else
            add(rep, "gpus_per_node", fit >= nn,
                "asked %lld per node on %d node(s); %lld usable node(s) "
                "have that many (largest: %lld)",
                per, nn, fit, maxg);
    }
    if (unusable)
        add(rep, "nodes", usable >= nn,
            "asked %d, %lld usable (%lld down, drained or unknown)", nn, usable,
            unusable);
    else
        add(rep, "nodes", usable >= nn, "asked %d, %lld usable", nn, usable);
}

static void check_workdir(struct transport *t, const char *dir,
                          struct preflight_report *rep)
{
    char *probe = xstrfmt("%s/.exa-preflight", dir);
    const char *mk[] = {"mkdir", "-p", dir, NULL};
    const char *touch[] = {"touch", probe, NULL};
    const char *rm[] = {"rm", "-f", probe, NULL};
    struct transport_result r = TRANSPORT_RESULT_INIT;
    exa_error_t err = EXA_ERROR_INIT;
    char line[200] = "";
    int ok = transport_run(t, mk, NULL, 0, 0, &r, &err) == 0 && r.rc == 0;
    if (ok) {
        transport_result_release(&r);
        r = (struct transport_result)TRANSPORT_RESULT_INIT;
        ok = transport_run(t, touch, NULL, 0, 0, &r, &err) == 0 && r.rc == 0;
    }
    if (!ok)
        message_line(&r, line, sizeof(line));
    transport_result_release(&r);
    r = (struct transport_result)TRANSPORT_RESULT_INIT;
    if (ok)
        transport_run(t, rm, NULL, 0, 0, &r, NULL);
    transport_result_release(&r);
    if (ok)
        add(rep, "workdir", 1, "'%s' is writable", dir);
    else
        add(rep, "workdir", 0, "'%s' is not writable: %s", dir,
            err.text[0] ? err.text : line);
    free(probe);
}

static void check_remote_exa(struct transport *t, const char *exa,
                             struct preflight_report *rep)
{
    const char *argv[] = {exa, "--version", NULL};
    struct transport_result r = TRANSPORT_RESULT_INIT;
    exa_error_t err = EXA_ERROR_INIT;
    int ran = probe_run(t, argv, &r, &err);
    char line[200] = "";
    if (ran == 1 && r.rc == 0) {
        strbuf_trim(&r.out);
        add(rep, "remote_exa", 1, "'%s --version': %s", exa, r.out.buf);
    } else {
        if (ran == 1)
            message_line(&r, line, sizeof(line));
        add(rep, "remote_exa", 0, "'%s --version' %s%s%s", exa,
            ran == 0  ? "not found"
            : ran < 0 ? "failed: "
                      : "failed",
            ran < 0 ? err.text
            : *line ? ": "
                    : "",
            ran < 0 ? "" : line);
    }
    transport_result_release(&r);
}

void preflight_run(struct transport *t, const struct preflight_target *tg,
                   const struct preflight_ask *ask,
                   struct preflight_report *rep)
{
    const char *hn[] = {"hostname", NULL};
    struct transport_result r = TRANSPORT_RESULT_INIT;
    struct inventory inv;
    exa_error_t err = EXA_ERROR_INIT;
    const struct probe *p;
    char *version = NULL;
    const char *node_part = NULL; /* count nodes of an existing partition */
    char *dq = NULL;              /* Flux's default queue, when one is */
    char *env_part = NULL;        /* SBATCH_PARTITION where sbatch runs */
    int a;

    memset(rep, 0, sizeof(*rep));
    memset(&inv, 0, sizeof(inv));
    rep->ok = 1;
    if (tg->ssh) {
        if (!tg->pinned_fingerprint)
            add(rep, "host_key", 0,
                "no pinned host key in '%s' (run 'exa hpc connect')",
                tg->known_hosts ? tg->known_hosts : "?");
        else if (!tg->host_key_fingerprint ||
                 strcmp(tg->pinned_fingerprint, tg->host_key_fingerprint))
            add(rep, "host_key", 0,
                "pinned key %s differs from the approved %s",
                tg->pinned_fingerprint,
                tg->host_key_fingerprint ? tg->host_key_fingerprint : "-");
        else
            add(rep, "host_key", 1, "%s (pinned in %s)", tg->pinned_fingerprint,
                tg->known_hosts);
    }
    if (transport_run(t, hn, NULL, 0, 0, &r, &err) < 0 || r.rc != 0) {
        char line[200] = "";
        message_line(&r, line, sizeof(line));
        add(rep, "transport", 0, "%s", err.text[0] ? err.text : line);
        goto out;
    }
    strbuf_trim(&r.out);
    add(rep, "transport", 1, "host reachable (%s)", r.out.buf);
    p = probe_find(tg->scheduler);
    if (!p) {
        add(rep, "scheduler", 0, "no probe for scheduler '%s'",
            tg->scheduler ? tg->scheduler : "unknown");
        goto out;
    }
    a = p->available(t, &version, &err);
    if (a != 1) {
        add(rep, "scheduler", 0, "%s", a < 0 ? err.text : "does not answer");
        goto out;
    }
    add(rep, "scheduler", 1, "%s responds to queries%s%s%s", p->scheduler,
        version ? " (" : "", version ? version : "", version ? ")" : "");
    free(version);
    version = NULL;
    if (probe_inventory(t, p->name, &inv, &err) < 0) {
        add(rep, "inventory", 0, "%s", err.text);
        goto out;
    }
    if (ask->partition)
        node_part = check_named_partition(&inv, ask->partition, NULL, rep);
    else if (!strcmp(p->scheduler, "slurm") &&
             (env_part = sbatch_partition_env(t)))
        node_part = check_named_partition(
            &inv, env_part,
            "none asked, SBATCH_PARTITION in the environment sbatch runs in",
            rep);
    if (!ask->partition && !strcmp(p->scheduler, "flux"))
        node_part = inv.caps.npartitions
                        ? check_flux_queues(&inv, rep)
                        : check_flux_default_queue(t, &inv, rep, &dq);
    else if (!ask->partition && !env_part && !strcmp(p->scheduler, "slurm"))
        node_part = check_slurm_default_partition(t, &inv, rep);
    if (!strcmp(p->scheduler, "slurm") && (ask->account || ask->qos))
        check_slurm_assoc(t, ask, rep);
    else if (!strcmp(p->scheduler, "flux"))
        check_flux_bank(t, ask, &inv, rep);
    if (!strcmp(p->scheduler, "flux"))
        check_flux_slots(ask, rep);
    if (!strcmp(p->scheduler, "flux") && ask->qos)
        add(rep, "qos", 1,
            "Flux has no QOS: '%s' is dropped at submit (a Flux queue is "
            "--partition)",
            ask->qos);
    check_nodes(&inv, ask, node_part, !strcmp(p->scheduler, "flux"), rep);
    if (tg->workdir)
        check_workdir(t, tg->workdir, rep);
    if (tg->remote_exa)
        check_remote_exa(t, tg->remote_exa, rep);
out:
    free(dq);
    free(env_part);
    free(version);
    inventory_release(&inv);
    transport_result_release(&r);
}
