/*
 * tools.c - exa's MCP tools over libview; see tools.h.
 *
 * The schemas are written out here rather than derived: they are the
 * contract an agent reads (tools/list), and mcp.c checks every answer
 * against its outputSchema before sending it, so a view that changes
 * shape is caught as an error here and not by the client. Nullable
 * fields say so ("type": [..., "null"]): a snapshot that was never
 * taken, a score that is not finite (null, never NaN or Infinity).
 */
#include "libmcp/tools.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "libauth/auth.h"
#include "libauth/throttle.h"
#include "libfleet/governance.h"
#include "libfleet/registry.h"
#include "libstore/audit.h"
#include "libstore/store.h"
#include "libutil/json.h"
#include "libutil/strbuf.h"
#include "libutil/xalloc.h"
#include "libview/view.h"

int mcp_env_allow_writes(const char *v)
{
    static const char *const yes[] = {"1", "true", "yes", "on"};
    static const char *const no[] = {"0", "false", "no", "off"};
    if (!v || !*v)
        return 0;
    for (size_t i = 0; i < 4; i++) {
        if (!strcasecmp(v, yes[i]))
            return 1;
        if (!strcasecmp(v, no[i]))
            return 0;
    }
    return -1;
}

int mcp_auth_store(void *ctx, const char *token, const struct mcp_http_req *req,
                   struct mcp_principal *out, exa_error_t *err)
{
    struct auth_throttle *thr = ctx;
    struct auth_principal p;
    exa_error_t e = EXA_ERROR_INIT;
    store_t *st = store_open(NULL, err);
    const char *remote = req && req->remote ? req->remote : "";
    int rc;
    if (!st)
        return -1;
    memset(&p, 0, sizeof(p));
    rc = auth_verify(st, token, &p, &e);
    if (rc == 0) {
        xsnprintf(out->user, sizeof(out->user), "%s", p.user);
        xsnprintf(out->role, sizeof(out->role), "%s", auth_role_name(p.role));
    } else if (e.code != EXA_ECONFIG &&
               (out->retry_after = auth_throttle_failed(thr, remote)) <= 0 &&
               token)
        /* a missing token is counted but not audited: nothing was
         * presented; a held-back one neither (the slow-down bounds the
         * log) */
        auth_record_denied(st, p.user[0] ? p.user : NULL, 401,
                           req ? req->method_name : NULL, "/mcp", e.text,
                           remote, NULL);
    store_close(st);
    if (rc < 0 && err)
        *err = e;
    return rc;
}

/* ---- the call frame: store, registry, redaction ---- */

struct frame {
    store_t *st;
    char *regpath;
    struct view_ctx vc;
    struct view_secrets sec;
    int have_sec;
};

static int frame_open(struct frame *f, exa_error_t *err)
{
    memset(f, 0, sizeof(*f));
    if (!(f->regpath = registry_default_path(err)))
        return -1;
    if (!(f->st = store_open(NULL, err))) {
        free(f->regpath);
        return -1;
    }
    f->vc.st = f->st;
    f->vc.regpath = f->regpath;
    f->vc.redact = 1;
    return 0;
}

static void frame_close(struct frame *f)
{
    if (f->have_sec)
        view_secrets_release(&f->sec);
    store_close(f->st);
    free(f->regpath);
}

/*
 * The views redact already (redact = 1); the tool output passes through
 * view_redact once more, with the secrets of every registered cluster,
 * so a field a view adds later cannot carry them out either.
 */
static json_t *finish(struct frame *f, json_t *doc, exa_error_t *err)
{
    if (doc) {
        if (view_secrets_load(&f->vc, &f->sec, err) < 0) {
            json_decref(doc);
            doc = NULL;
        } else {
            f->have_sec = 1;
            view_redact(doc, &f->sec);
        }
    }
    frame_close(f);
    return doc;
}

/* {key: arr} with "count" (arr stolen). */
static json_t *listed(const char *key, json_t *arr)
{
    json_t *o;
    if (!arr)
        return NULL;
    o = json_object();
    json_object_set_new(o, "count",
                        json_integer((json_int_t)json_array_size(arr)));
    json_object_set_new(o, key, arr);
    return o;
}

/* Over HTTP the token's role must allow needed; stdio (no role) may. */
static int allowed(const struct mcp_call *call, enum auth_role needed,
                   exa_error_t *err)
{
    enum auth_role have;
    store_t *st;
    if (!call->sess->role)
        return 0;
    have = auth_role_parse(call->sess->role);
    if (auth_role_allows(have, needed))
        return 0;
    exa_err(err, EXA_EFAIL,
            "tool '%s' needs the %s role; the token of '%s' has %s", call->tool,
            auth_role_name(needed), call->sess->user ? call->sess->user : "?",
            auth_role_name(have));
    /* audited as the REST API's 403 is */
    if ((st = store_open(NULL, NULL))) {
        auth_record_denied(st, call->sess->user, 403, "POST", "/mcp",
                           err ? err->text : "role", call->sess->remote, NULL);
        store_close(st);
    }
    return -1;
}

static const char *arg_str(const struct mcp_call *c, const char *k)
{
    return jx_get_str(c->args, k, NULL);
}

/* ---- schemas ---- */

#define S_STR "{\"type\":\"string\"}"
#define S_NSTR "{\"type\":[\"string\",\"null\"]}"
#define S_INT "{\"type\":\"integer\"}"
#define S_NINT "{\"type\":[\"integer\",\"null\"]}"
#define S_NNUM "{\"type\":[\"number\",\"null\"]}"
#define S_BOOL "{\"type\":\"boolean\"}"
#define S_NAME                                                                 \
    "{\"type\":\"string\",\"minLength\":1,\"maxLength\":64,"                   \
    "\"description\":\"a registered cluster's name\"}"
#define S_STATE                                                                \
    "{\"type\":\"string\",\"enum\":[\"PENDING\",\"ACTIVE\",\"REJECTED\"]}"
#define NO_ARGS                                                                \
    "{\"type\":\"object\",\"properties\":{},\"additionalProperties\":false}"

#define CLUSTER_PROPS                                                          \
    "\"name\":" S_STR ",\"scheduler\":" S_NSTR ",\"transport\":" S_NSTR        \
    ",\"host\":" S_NSTR ",\"ssh_port\":" S_NINT ",\"key_fingerprint\":" S_NSTR \
    ",\"host_key_fingerprint\":" S_NSTR ",\"state\":" S_STATE                  \
    ",\"approved_by\":" S_NSTR ",\"requested_by\":" S_NSTR                     \
    ",\"reason\":" S_NSTR ",\"tenant\":" S_NSTR                                \
    ",\"carbon_intensity\":" S_NNUM ",\"cost_per_gpu_hour\":" S_NNUM           \
    ",\"in_registry\":" S_BOOL ",\"audit_mismatch\":" S_NSTR                   \
    ",\"updated_at\":" S_NSTR

static const char CLUSTERS_OUT[] =
    "{\"type\":\"object\",\"required\":[\"clusters\",\"count\"],"
    "\"properties\":{\"count\":" S_INT ",\"clusters\":{\"type\":\"array\","
    "\"items\":{\"type\":\"object\",\"required\":[\"name\",\"state\"],"
    "\"properties\":{" CLUSTER_PROPS "}}}}}";

#define NODE_ITEM                                                              \
    "{\"type\":\"object\",\"required\":[\"cluster\",\"node\",\"state\"],"      \
    "\"properties\":{\"cluster\":" S_STR ",\"node\":" S_STR                    \
    ",\"state\":" S_NSTR ",\"raw_state\":" S_NSTR ",\"cpus\":" S_NINT          \
    ",\"mem_mb\":" S_NINT ",\"gpus\":" S_NINT ",\"gpus_used\":" S_NINT         \
    ",\"gpu_model\":" S_NSTR ",\"captured_at\":" S_NSTR "}}"

static const char NODES_IN[] =
    "{\"type\":\"object\",\"properties\":{\"cluster\":" S_NAME
    "},\"additionalProperties\":false}";
static const char NODES_OUT[] =
    "{\"type\":\"object\",\"required\":[\"nodes\",\"count\"],"
    "\"properties\":{\"count\":" S_INT ",\"nodes\":{\"type\":\"array\","
    "\"items\":" NODE_ITEM "}}}";

static const char PLACE_IN[] =
    "{\"type\":\"object\",\"properties\":{"
    "\"gpus\":{\"type\":\"integer\",\"minimum\":0,\"maximum\":100000,"
    "\"default\":0,\"description\":\"GPUs in total\"},"
    "\"nodes\":{\"type\":\"integer\",\"minimum\":1,\"maximum\":100000,"
    "\"default\":1,\"description\":\"nodes\"},"
    "\"cpus\":{\"type\":\"integer\",\"minimum\":0,\"maximum\":1000000,"
    "\"default\":0,\"description\":\"CPUs in total\"},"
    "\"provider\":{\"type\":\"string\",\"enum\":[\"least-loaded\","
    "\"carbon-aware\",\"cost-aware\"],\"description\":\"placement "
    "objective (default least-loaded or $EXAMLOPS_PLACEMENT_PROVIDER)\"},"
    "\"partition\":{\"type\":\"string\",\"minLength\":1,\"maxLength\":255,"
    "\"description\":\"the partition (Flux: queue) the job goes to, or a "
    "list a,b; default: the server's EXAMLOPS_HPC_PARTITION, else each "
    "cluster's default partition\"}"
    "},\"additionalProperties\":false}";
static const char PLACE_OUT[] =
    "{\"type\":\"object\",\"required\":[\"cluster\",\"reason\","
    "\"candidates\",\"explain\"],\"properties\":{"
    "\"cluster\":" S_NSTR ",\"scheduler\":" S_NSTR ",\"reason\":" S_NSTR
    ",\"candidates\":{\"type\":\"array\",\"items\":{\"type\":\"object\","
    "\"required\":[\"name\",\"fits\"],\"properties\":{\"name\":" S_STR
    ",\"fits\":" S_BOOL ",\"score\":" S_NNUM ",\"idle_gpus\":" S_INT
    ",\"total_gpus\":" S_INT ",\"idle_nodes\":" S_INT ",\"total_nodes\":" S_INT
    ",\"snapshot_age_s\":" S_NINT ",\"stale\":" S_BOOL ",\"why\":" S_NSTR
    "}}},\"objectives_unavailable\":{\"type\":\"array\"},"
    "\"objectives\":{\"type\":\"object\"},"
    "\"explain\":{\"type\":\"object\",\"required\":[\"candidates\"],"
    "\"properties\":{\"provider\":" S_STR ",\"chosen\":" S_NSTR
    ",\"candidates\":{\"type\":\"array\",\"items\":{\"type\":\"object\","
    "\"required\":[\"cluster\",\"rank\",\"fits\"],\"properties\":{"
    "\"cluster\":" S_STR ",\"rank\":" S_INT ",\"fits\":" S_BOOL
    ",\"score\":" S_NNUM ",\"margin_to_best\":" S_NNUM "}}}}}}}";

static const char JOBS_IN[] =
    "{\"type\":\"object\",\"properties\":{"
    "\"model\":{\"type\":\"string\",\"minLength\":1,\"maxLength\":128},"
    "\"cluster\":" S_NAME ","
    "\"state\":{\"type\":\"string\",\"minLength\":1,\"maxLength\":32,"
    "\"description\":\"a job state word, e.g. RUNNING, COMPLETED\"},"
    "\"limit\":{\"type\":\"integer\",\"minimum\":1,\"maximum\":1000,"
    "\"default\":50}},\"additionalProperties\":false}";
static const char JOBS_OUT[] =
    "{\"type\":\"object\",\"required\":[\"jobs\",\"count\"],"
    "\"properties\":{\"count\":" S_INT ",\"jobs\":{\"type\":\"array\","
    "\"items\":{\"type\":\"object\",\"required\":[\"job_id\",\"cluster\"],"
    "\"properties\":{\"job_id\":" S_NSTR ",\"cluster\":" S_NSTR
    ",\"model\":" S_NSTR ",\"state\":" S_NSTR "}}}}}";

static const char CAPACITY_OUT[] =
    "{\"type\":\"object\",\"required\":[\"clusters\",\"count\"],"
    "\"properties\":{\"count\":" S_INT ",\"clusters\":{\"type\":\"array\","
    "\"items\":{\"type\":\"object\",\"required\":[\"name\",\"total_gpus\","
    "\"idle_gpus\"],\"properties\":{\"name\":" S_STR ",\"scheduler\":" S_NSTR
    ",\"total_gpus\":" S_INT ",\"idle_gpus\":" S_INT ",\"total_nodes\":" S_INT
    ",\"idle_nodes\":" S_INT ",\"utilization_pct\":" S_NNUM
    ",\"gpu_hours_used\":" S_NNUM ",\"cpu_hours_used\":" S_NNUM
    ",\"cost_usd\":" S_NNUM ",\"snapshot_age_s\":" S_NINT
    ",\"captured_at\":" S_NSTR ",\"stale\":" S_BOOL "}}}}}";

static const char QUEUE_IN[] =
    "{\"type\":\"object\",\"required\":[\"cluster\"],\"properties\":{"
    "\"cluster\":" S_NAME "},\"additionalProperties\":false}";
static const char QUEUE_OUT[] =
    "{\"type\":\"object\",\"required\":[\"cluster\",\"jobs\",\"count\"],"
    "\"properties\":{\"cluster\":" S_STR ",\"count\":" S_INT
    ",\"refused_records\":" S_INT
    ",\"jobs\":{\"type\":\"array\",\"items\":{\"type\":\"object\","
    "\"required\":[\"job_id\",\"state\"],\"properties\":{\"job_id\":" S_NSTR
    ",\"name\":" S_NSTR ",\"user\":" S_NSTR ",\"state\":" S_NSTR
    ",\"raw_state\":" S_NSTR ",\"partition\":" S_NSTR ",\"nodes\":" S_NINT
    "}}}}}";

static const char MODELS_OUT[] =
    "{\"type\":\"object\",\"required\":[\"models\",\"count\"],"
    "\"properties\":{\"count\":" S_INT ",\"models\":{\"type\":\"array\","
    "\"items\":{\"type\":\"object\",\"required\":[\"model\"],"
    "\"properties\":{\"model\":" S_STR ",\"versions\":" S_INT
    ",\"latest_version\":" S_NINT ",\"stage\":" S_NSTR ",\"rmse\":" S_NNUM
    ",\"created_at\":" S_NSTR "}}}}}";

static const char MODEL_IN[] =
    "{\"type\":\"object\",\"required\":[\"model\"],\"properties\":{"
    "\"model\":{\"type\":\"string\",\"minLength\":1,\"maxLength\":128},"
    "\"version\":{\"type\":\"integer\",\"minimum\":1,\"description\":"
    "\"one version; all when absent\"}},\"additionalProperties\":false}";
static const char MODEL_OUT[] =
    "{\"type\":\"object\",\"required\":[\"model\",\"versions\"],"
    "\"properties\":{\"model\":" S_STR ",\"versions\":{\"type\":\"array\","
    "\"items\":{\"type\":\"object\"}}}}";

static const char CARBON_IN[] =
    "{\"type\":\"object\",\"properties\":{"
    "\"model\":{\"type\":\"string\",\"minLength\":1,\"maxLength\":128}},"
    "\"additionalProperties\":false}";
static const char CARBON_OUT[] =
    "{\"type\":\"object\",\"required\":[\"n\",\"total_kwh\","
    "\"operational_co2e_g\",\"scope\"],\"properties\":{\"model\":" S_NSTR
    ",\"n\":" S_INT ",\"total_kwh\":" S_NNUM ",\"operational_co2e_g\":" S_NNUM
    ",\"scope\":" S_STR ",\"embodied_co2e_g\":" S_NNUM
    ",\"embodied_status\":" S_NSTR "}}";

static const char APPROVE_IN[] =
    "{\"type\":\"object\",\"required\":[\"name\",\"reason\"],"
    "\"properties\":{\"name\":" S_NAME ",\"reason\":{\"type\":\"string\","
    "\"minLength\":1,\"maxLength\":500,\"description\":\"why the cluster "
    "may take jobs; kept in the audit event\"},"
    "\"host_key_fingerprint\":{\"type\":\"string\",\"minLength\":1,"
    "\"maxLength\":128,\"description\":\"the pinned host key fingerprint "
    "(SHA256:...) the caller reviewed in hpc_clusters; when given, nothing "
    "changes unless it is still the cluster's and its identity did not "
    "change since\"}},\"additionalProperties\":false}";
static const char APPROVE_OUT[] =
    "{\"type\":\"object\",\"required\":[\"cluster\",\"state\","
    "\"previous_state\",\"approved_by\"],\"properties\":{\"cluster\":" S_STR
    ",\"state\":" S_STATE ",\"previous_state\":" S_STATE
    ",\"approved_by\":" S_STR ",\"host\":" S_NSTR ",\"key_fingerprint\":" S_NSTR
    ",\"host_key_fingerprint\":" S_NSTR ",\"audit_event_id\":" S_NINT "}}";

/* ---- the tools ---- */

static json_t *t_clusters(void *ctx, const struct mcp_call *c, exa_error_t *err)
{
    struct frame f;
    (void)ctx;
    if (allowed(c, AUTH_ROLE_VIEWER, err) < 0 || frame_open(&f, err) < 0)
        return NULL;
    return finish(&f, listed("clusters", view_clusters(&f.vc, err)), err);
}

/* view_nodes of one cluster, each row tagged with its cluster, appended. */
static int add_nodes(struct frame *f, const char *cluster, json_t *all,
                     exa_error_t *err)
{
    json_t *arr = view_nodes(&f->vc, cluster, err), *o;
    size_t i;
    if (!arr)
        return -1;
    json_array_foreach(arr, i, o)
    {
        json_object_set_new(o, "cluster", json_string(cluster));
        json_array_append(all, o);
    }
    json_decref(arr);
    return 0;
}

static json_t *t_nodes(void *ctx, const struct mcp_call *c, exa_error_t *err)
{
    struct frame f;
    const char *cluster = arg_str(c, "cluster");
    json_t *all, *cl = NULL, *o;
    size_t i;
    (void)ctx;
    if (allowed(c, AUTH_ROLE_VIEWER, err) < 0 || frame_open(&f, err) < 0)
        return NULL;
    all = json_array();
    if (cluster) {
        if (add_nodes(&f, cluster, all, err) < 0)
            goto fail;
    } else {
        if (!(cl = view_clusters(&f.vc, err)))
            goto fail;
        json_array_foreach(cl, i, o)
        {
            if (add_nodes(&f, jx_get_str(o, "name", ""), all, err) < 0)
                goto fail;
        }
        json_decref(cl);
    }
    return finish(&f, listed("nodes", all), err);
fail:
    json_decref(cl);
    json_decref(all);
    return finish(&f, NULL, err);
}

static json_t *t_place(void *ctx, const struct mcp_call *c, exa_error_t *err)
{
    struct frame f;
    struct view_place_ask ask;
    (void)ctx;
    if (allowed(c, AUTH_ROLE_OPERATOR, err) < 0 || frame_open(&f, err) < 0)
        return NULL;
    ask.gpus = (int)jx_get_int(c->args, "gpus", 0);
    ask.nodes = (int)jx_get_int(c->args, "nodes", 1);
    ask.cpus = (int)jx_get_int(c->args, "cpus", 0);
    ask.provider = arg_str(c, "provider");
    ask.partition = arg_str(c, "partition");
    ask.refresh = 1; /* as `exa hpc place`: stale snapshots are refreshed */
    return finish(&f, view_place(&f.vc, &ask, NULL, err), err);
}

static json_t *t_jobs(void *ctx, const struct mcp_call *c, exa_error_t *err)
{
    struct frame f;
    struct view_job_filter jf;
    (void)ctx;
    if (allowed(c, AUTH_ROLE_VIEWER, err) < 0 || frame_open(&f, err) < 0)
        return NULL;
    memset(&jf, 0, sizeof(jf));
    jf.cluster = arg_str(c, "cluster");
    jf.model = arg_str(c, "model");
    jf.state = arg_str(c, "state");
    jf.limit = jx_get_int(c->args, "limit", 50);
    return finish(&f, listed("jobs", view_jobs(&f.vc, &jf, err)), err);
}

static json_t *t_capacity(void *ctx, const struct mcp_call *c, exa_error_t *err)
{
    struct frame f;
    (void)ctx;
    if (allowed(c, AUTH_ROLE_VIEWER, err) < 0 || frame_open(&f, err) < 0)
        return NULL;
    return finish(&f, listed("clusters", view_capacity(&f.vc, 0, err)), err);
}

static json_t *t_queue(void *ctx, const struct mcp_call *c, exa_error_t *err)
{
    struct frame f;
    json_t *q;
    (void)ctx;
    if (allowed(c, AUTH_ROLE_VIEWER, err) < 0 || frame_open(&f, err) < 0)
        return NULL;
    q = view_queue(&f.vc, arg_str(c, "cluster"), err);
    if (q)
        json_object_set_new(q, "count",
                            json_integer((json_int_t)json_array_size(
                                json_object_get(q, "jobs"))));
    return finish(&f, q, err);
}

static json_t *t_models(void *ctx, const struct mcp_call *c, exa_error_t *err)
{
    struct frame f;
    (void)ctx;
    if (allowed(c, AUTH_ROLE_VIEWER, err) < 0 || frame_open(&f, err) < 0)
        return NULL;
    return finish(&f, listed("models", view_models(&f.vc, err)), err);
}

static json_t *t_model(void *ctx, const struct mcp_call *c, exa_error_t *err)
{
    struct frame f;
    (void)ctx;
    if (allowed(c, AUTH_ROLE_VIEWER, err) < 0 || frame_open(&f, err) < 0)
        return NULL;
    return finish(&f,
                  view_model(&f.vc, arg_str(c, "model"),
                             jx_get_int(c->args, "version", 0), err),
                  err);
}

static json_t *t_carbon(void *ctx, const struct mcp_call *c, exa_error_t *err)
{
    struct frame f;
    (void)ctx;
    if (allowed(c, AUTH_ROLE_VIEWER, err) < 0 || frame_open(&f, err) < 0)
        return NULL;
    return finish(&f, view_carbon(&f.vc, arg_str(c, "model"), err), err);
}

static json_t *t_approve(void *ctx, const struct mcp_call *c, exa_error_t *err)
{
    struct frame f;
    struct gov_result res;
    struct fleet fl = {NULL, 0}, seen = {NULL, 0};
    const struct fleet_cluster *fc, *sc = NULL;
    struct audit_event ev = {0};
    const char *name = arg_str(c, "name");
    const char *want = arg_str(c, "host_key_fingerprint");
    char *actor;
    json_t *o = NULL;
    (void)ctx;
    if (allowed(c, AUTH_ROLE_ADMIN, err) < 0 || frame_open(&f, err) < 0)
        return NULL;
    actor = mcp_session_actor(c->sess);
    if (want) { /* bind the approval to what the caller reviewed */
        if (fleet_load(f.st, f.regpath, &seen, err) < 0)
            goto out;
        sc = fleet_find(&seen, name);
        if (!sc || !sc->in_db) {
            exa_err(err, EXA_ENOTFOUND, "unknown cluster '%s'", name);
            goto out;
        }
        if (!sc->row.host_key_fingerprint ||
            strcmp(sc->row.host_key_fingerprint, want)) {
            exa_err(err, EXA_EFAIL,
                    "cluster '%s' pins host key %s, not the %s given; "
                    "nothing changed (review it again with hpc_clusters)",
                    name,
                    sc->row.host_key_fingerprint ? sc->row.host_key_fingerprint
                                                 : "none",
                    want);
            goto out;
        }
    }
    /* the same state machine and audit event as `exa hpc approve`; the
     * event is committed with the state before this answers */
    if (gov_approve_reason(f.st, f.regpath, name, arg_str(c, "reason"),
                           sc ? &sc->row : NULL, actor, &res, err) < 0)
        goto out;
    if (fleet_load(f.st, f.regpath, &fl, err) < 0)
        goto out;
    fc = fleet_find(&fl, name);
    o = json_object();
    jx_set(o, "cluster", jx_str(name));
    jx_set(o, "state", jx_str(cluster_state_name(fc ? fc->state : res.to)));
    jx_set(o, "previous_state", jx_str(cluster_state_name(res.from)));
    jx_set(o, "approved_by", jx_str(actor));
    jx_set(o, "host", jx_str(fc ? fc->def.host : NULL));
    jx_set(o, "key_fingerprint", jx_str(fc ? fc->row.key_fingerprint : NULL));
    jx_set(o, "host_key_fingerprint",
           jx_str(fc ? fc->row.host_key_fingerprint : NULL));
    jx_set(o, "audit_event_id",
           audit_latest(f.st, name, "cluster_approved", &ev, NULL) == 1
               ? json_integer(ev.id)
               : NULL);
out:
    audit_event_release(&ev);
    fleet_release(&fl);
    fleet_release(&seen);
    free(actor);
    return finish(&f, o, err);
}

static const struct mcp_tool tools[] = {
    {"hpc_clusters", "Registered clusters",
     "Every registered cluster, sorted by name: its governance state "
     "(PENDING, ACTIVE or REJECTED; only ACTIVE clusters take jobs), "
     "scheduler (slurm, flux), transport (ssh, local), host, ssh_port, the "
     "client key and pinned host key fingerprints (SHA256:...), who "
     "approved or requested it, the reason of a rejection, capabilities, "
     "tenant, carbon intensity (gCO2e/kWh) and cost per GPU-hour. No ssh "
     "user, key path or key material.",
     NO_ARGS, CLUSTERS_OUT, 0, t_clusters, NULL},
    {"hpc_nodes", "Node snapshot",
     "The latest saved node inventory of one cluster (or of every cluster "
     "when none is named): per node its cluster, node name, state (idle, "
     "mixed, allocated, down, drained...), raw scheduler state, cpus, "
     "mem_mb, gpus, gpus_used, gpu_model, partitions, flags and "
     "captured_at (UTC) of the snapshot.",
     NODES_IN, NODES_OUT, 0, t_nodes, NULL},
    {"hpc_place", "Choose a cluster",
     "Choose the ACTIVE cluster for an ask of gpus per node, nodes and cpus "
     "per node under a placement provider (least-loaded, carbon-aware, "
     "cost-aware), refreshing stale snapshots first. Returns cluster "
     "(null when nothing fits), scheduler, reason (one line), candidates "
     "(fits, score, idle and total GPUs and nodes, snapshot_age_s, why) "
     "and explain (rank, score, margin_to_best per cluster). Scores that "
     "are not finite are null.",
     PLACE_IN, PLACE_OUT, 0, t_place, NULL},
    {"hpc_jobs", "Recorded jobs",
     "Jobs exa recorded, newest first, filtered by model, cluster and "
     "state, at most limit (default 50): job_id, cluster, model, dataset, "
     "state, resources, submit/start/end times and exit code.",
     JOBS_IN, JOBS_OUT, 0, t_jobs, NULL},
    {"hpc_capacity", "Fleet capacity",
     "Capacity of every ACTIVE cluster from its latest snapshot: "
     "total_gpus, idle_gpus, total_nodes, idle_nodes, utilization_pct, "
     "gpu_hours_used, cpu_hours_used, cost_usd, snapshot_age_s and whether "
     "the snapshot is stale.",
     NO_ARGS, CAPACITY_OUT, 0, t_capacity, NULL},
    {"hpc_queue", "Scheduler queue",
     "The live scheduler queue of one ACTIVE cluster, asked through its "
     "pinned connection: per job job_id, name, user, state, raw_state, "
     "partition and nodes; refused_records counts records not believed (a "
     "name made up by another job's name: that job is listed without "
     "one).",
     QUEUE_IN, QUEUE_OUT, 0, t_queue, NULL},
    {"models_list", "Registered models",
     "Every model in the registry: model, number of versions, "
     "latest_version, its stage, rmse and created_at.",
     NO_ARGS, MODELS_OUT, 0, t_models, NULL},
    {"models_show", "One model",
     "The versions of one registered model (or one version): version, "
     "stage, metrics (rmse...), dataset, artifact and created_at.",
     MODEL_IN, MODEL_OUT, 0, t_model, NULL},
    {"finops_carbon_report", "Carbon report",
     "Operational emissions recorded for one model (or all): n records, "
     "total_kwh, operational_co2e_g in grams of CO2e, scope; embodied "
     "emissions are not modelled (embodied_co2e_g null).",
     CARBON_IN, CARBON_OUT, 0, t_carbon, NULL},
    {"hpc_approve_cluster", "Approve a cluster",
     "Approve a PENDING cluster so that jobs may be scheduled on it: the "
     "same state machine and audit event as 'exa hpc approve'. The audit "
     "event names this client and its user and records the reason. "
     "Give host_key_fingerprint as hpc_clusters showed it to approve only "
     "what was reviewed. Returns cluster, state (ACTIVE), previous_state, "
     "approved_by, host, the key fingerprints and audit_event_id. A "
     "REJECTED cluster cannot be approved (a new 'exa hpc connect' "
     "first).",
     APPROVE_IN, APPROVE_OUT, 1, t_approve, NULL},
};

int mcp_tools_register(struct mcp_server *srv, exa_error_t *err)
{
    for (size_t i = 0; i < sizeof(tools) / sizeof(tools[0]); i++)
        if (mcp_server_add_tool(srv, &tools[i], err) < 0)
            return -1;
    return 0;
}
