/*
 * test_fleet.c - clusters.yaml round trips (all three shapes), OpenSSH key
 * fingerprints, the approval state machine (every allowed and forbidden
 * transition), governance over a real platform.db with its audit chain,
 * and the identity binding (a YAML edit or a new host key sends an ACTIVE
 * cluster back to PENDING).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>

#include "libfleet/governance.h"
#include "libfleet/placement.h"
#include "libfleet/registry.h"
#include "libstore/audit.h"
#include "libstore/clusters.h"
#include "libstore/nodes.h"
#include "libutil/json.h"
#include "libutil/sha256.h"
#include "libutil/strbuf.h"
#include "libutil/xalloc.h"

struct env {
    char *dir, *db, *reg;
    store_t *st;
};

static int setup(void **state)
{
    char tmpl[] = "/tmp/exa-test-fleet-XXXXXX";
    struct env *e = xcalloc(1, sizeof(*e));
    exa_error_t err = EXA_ERROR_INIT;
    e->dir = xstrdup(mkdtemp(tmpl));
    e->db = xstrfmt("%s/platform.db", e->dir);
    e->reg = xstrfmt("%s/cfg/clusters.yaml", e->dir);
    e->st = store_open(e->db, &err);
    assert_non_null(e->st);
    *state = e;
    return 0;
}

static int teardown(void **state)
{
    struct env *e = *state;
    char *cmd = xstrfmt("rm -rf '%s'", e->dir);
    store_close(e->st);
    assert_int_equal(system(cmd), 0);
    free(cmd);
    free(e->dir);
    free(e->db);
    free(e->reg);
    free(e);
    return 0;
}

static void write_text(const char *path, const char *text)
{
    FILE *fp = fopen(path, "w");
    assert_non_null(fp);
    fputs(text, fp);
    fclose(fp);
}

/* ---- registry ---- */

static void check_testa(const struct registry *reg)
{
    const struct cluster_def *d = registry_find(reg, "testa");
    assert_non_null(d);
    assert_string_equal(d->scheduler, "slurm");
    assert_string_equal(d->host, "login1");
    assert_string_equal(d->ssh_user, "alice");
    assert_int_equal(d->ssh_port, 2222);
    assert_string_equal(d->ssh_key, "/keys/id ed25519");
    assert_int_equal(d->has_carbon_intensity, 1);
    assert_true(d->carbon_intensity == 120.5);
    assert_int_equal(d->has_cost_per_gpu_hour, 0);
    assert_int_equal(cluster_def_node_exporter_port(d), 9100);
    assert_int_equal(cluster_def_dcgm_exporter_port(d), 9401);
}

static void test_registry_shapes(void **state)
{
    static const char *const shapes[] = {
        "clusters:\n  testa:\n    scheduler: slurm\n    host: login1\n"
        "    ssh_user: alice\n    ssh_port: 2222\n"
        "    ssh_key: /keys/id ed25519\n    carbon_intensity: 120.5\n"
        "    dcgm_exporter_port: 9401\n  testb: {scheduler: flux}\n",
        "- name: testb\n  scheduler: flux\n- name: testa\n  scheduler: slurm\n"
        "  host: login1\n  ssh_user: alice\n  ssh_port: '2222'\n"
        "  ssh_key: \"/keys/id ed25519\"\n  carbon_intensity: 120.5\n"
        "  dcgm_exporter_port: 9401\n",
        "testa:\n  scheduler: slurm\n  host: login1\n  ssh_user: alice\n"
        "  ssh_port: 2222\n  ssh_key: /keys/id ed25519\n"
        "  carbon_intensity: 120.5\n  dcgm_exporter_port: 9401\n"
        "  unknown_key: [1, 2]\ntestb:\n  scheduler: flux\n",
    };
    for (size_t i = 0; i < 3; i++) {
        struct registry reg = REGISTRY_INIT;
        exa_error_t err = EXA_ERROR_INIT;
        assert_int_equal(
            registry_parse(shapes[i], strlen(shapes[i]), "t", &reg, &err), 0);
        assert_int_equal(reg.nr, 2);
        /* sorted by name whatever the input order */
        assert_string_equal(reg.defs[0].name, "testa");
        assert_string_equal(reg.defs[1].name, "testb");
        check_testa(&reg);
        registry_release(&reg);
    }
}

static void test_registry_round_trip(void **state)
{
    struct env *e = *state;
    struct registry reg = REGISTRY_INIT, back = REGISTRY_INIT;
    struct cluster_def d = {0};
    exa_error_t err = EXA_ERROR_INIT;
    struct stat sb;
    d.name = (char *)"1.0";
    d.scheduler = (char *)"slurm";
    d.host = (char *)"yes"; /* would read back as a boolean unquoted */
    d.ssh_user = (char *)"#bob";
    d.ssh_key = (char *)"/k/a b:c";
    d.ssh_port = 22;
    d.tenant = (char *)"0123";
    d.has_cost_per_gpu_hour = 1;
    d.cost_per_gpu_hour = 2.1;
    registry_put(&reg, &d);
    d.name = (char *)"testa";
    d.host = (char *)"login1";
    d.has_cost_per_gpu_hour = 0;
    d.ssh_user = NULL;
    d.tenant = NULL;
    registry_put(&reg, &d);
    assert_int_equal(registry_save(e->reg, &reg, &err), 0);
    assert_int_equal(stat(e->reg, &sb), 0);
    assert_int_equal(sb.st_mode & 0777, 0600);
    assert_int_equal(registry_load(e->reg, &back, &err), 0);
    assert_int_equal(back.nr, 2);
    {
        const struct cluster_def *w = registry_find(&back, "1.0");
        assert_non_null(w);
        assert_string_equal(w->host, "yes");
        assert_string_equal(w->ssh_user, "#bob");
        assert_string_equal(w->ssh_key, "/k/a b:c");
        assert_string_equal(w->tenant, "0123");
        assert_true(w->cost_per_gpu_hour == 2.1);
        assert_null(registry_find(&back, "testa")->ssh_user);
    }
    /* no temp file left behind: the directory holds clusters.yaml only */
    {
        char *cmd =
            xstrfmt("test \"$(ls -A '%s/cfg')\" = clusters.yaml", e->dir);
        assert_int_equal(system(cmd), 0);
        free(cmd);
    }
    registry_release(&reg);
    registry_release(&back);
}

static void test_registry_errors(void **state)
{
    static const char *const bad[] = {
        "clusters:\n  a:\n    ssh_port: 70000\n",
        "clusters:\n  a:\n    ssh_port: twenty\n",
        "clusters:\n  a:\n    host: [x]\n",
        "clusters:\n  a: {}\n  a: {}\n",
        "- scheduler: slurm\n",
        "clusters: [\n",
        "clusters:\n  a:\n    carbon_intensity: -3\n",
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        struct registry reg = REGISTRY_INIT;
        exa_error_t err = EXA_ERROR_INIT;
        assert_int_equal(
            registry_parse(bad[i], strlen(bad[i]), "f.yaml", &reg, &err), -1);
        assert_int_equal(err.code, EXA_ECONFIG);
        assert_non_null(strstr(err.text, "clusters.yaml 'f.yaml': line "));
        assert_int_equal(reg.nr, 0);
    }
    {
        struct registry reg = REGISTRY_INIT;
        assert_int_equal(registry_parse("", 0, "e", &reg, NULL), 0);
        assert_int_equal(reg.nr, 0);
        assert_int_equal(registry_load("/nonexistent/x.yaml", &reg, NULL), 0);
        assert_int_equal(reg.nr, 0);
    }
}

/* ---- fingerprints (expected values from `ssh-keygen -lf`) ---- */

static void test_fingerprints(void **state)
{
    struct env *e = *state;
    exa_error_t err = EXA_ERROR_INIT;
    char *f = fleet_pubkey_fingerprint(
        "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIB+3fhnQf0eWc883MdMb0NG7iLdubz"
        "SoWNj5SsGYOTZX test@exa\n",
        &err);
    assert_string_equal(f,
                        "SHA256:GrZPTzVzm9iHPYaIE5tKEUtviHg/PpsoHUclpAzzkPI");
    free(f);
    /* base64 with "==" padding, as a known_hosts line */
    f = fleet_pubkey_fingerprint(
        "[login1]:2222 ssh-rsa AAAAB3NzaC1yc2EAAAADAQABAAAAgQDJua5NS+Y5FXvAj"
        "C14tpvvl27k97udaypPSa31JMCg71+TpKlt37J7mZ3u+8MOhs65TIOzbJUD3lTX6UX5"
        "/wmkMEvy189lOdtW7ofb6RogvhmZhTuCwQzq3N3EH1QToz6iRaOu7+l31BlqFSl0fII"
        "VTgkNfvodjusLeAFolzl7Gw==",
        &err);
    assert_string_equal(f,
                        "SHA256:E3EdYOsk0iBPoDnOb9QuFAfO+9d7pqnn6DmxQsjPU8U");
    free(f);
    assert_null(fleet_pubkey_fingerprint("not a key", &err));
    assert_int_equal(err.code, EXA_EPARSE);
    assert_null(fleet_pubkey_fingerprint("ssh-ed25519 !!!!", &err));
    /* ssh-keyscan output: the ed25519 key is pinned, not the first one */
    f = fleet_host_key_fingerprint(
        "# login1:22 SSH-2.0-OpenSSH_9.2\n"
        "login1 ssh-rsa AAAAB3NzaC1yc2EAAAADAQABAAAAgQDJua5NS+Y5FXvAjC14tpvv"
        "l27k97udaypPSa31JMCg71+TpKlt37J7mZ3u+8MOhs65TIOzbJUD3lTX6UX5/wmkMEv"
        "y189lOdtW7ofb6RogvhmZhTuCwQzq3N3EH1QToz6iRaOu7+l31BlqFSl0fIIVTgkNfv"
        "odjusLeAFolzl7Gw==\n"
        "login1 ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIB+3fhnQf0eWc883MdMb0NG7"
        "iLdubzSoWNj5SsGYOTZX\n",
        &err);
    assert_string_equal(f,
                        "SHA256:GrZPTzVzm9iHPYaIE5tKEUtviHg/PpsoHUclpAzzkPI");
    free(f);
    assert_null(fleet_host_key_fingerprint("# only a comment\n", &err));
    {
        char *p = xstrfmt("%s/k.pub", e->dir);
        write_text(p, "# comment\nssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIB+3fh"
                      "nQf0eWc883MdMb0NG7iLdubzSoWNj5SsGYOTZX c\n");
        f = fleet_pubkey_file_fingerprint(p, &err);
        assert_string_equal(
            f, "SHA256:GrZPTzVzm9iHPYaIE5tKEUtviHg/PpsoHUclpAzzkPI");
        free(f);
        free(p);
    }
}

/* ---- the pure state machine ---- */

static void test_transitions(void **state)
{
    static const struct {
        enum cluster_state from;
        enum gov_event ev;
        int ok;
        enum cluster_state to;
    } t[] = {
        {CLUSTER_NONE, GOV_CONNECT, 1, CLUSTER_PENDING},
        {CLUSTER_PENDING, GOV_CONNECT, 1, CLUSTER_PENDING},
        {CLUSTER_ACTIVE, GOV_CONNECT, 1, CLUSTER_ACTIVE},
        {CLUSTER_REJECTED, GOV_CONNECT, 1, CLUSTER_PENDING},
        {CLUSTER_PENDING, GOV_APPROVE, 1, CLUSTER_ACTIVE},
        {CLUSTER_ACTIVE, GOV_APPROVE, 0, 0},
        {CLUSTER_REJECTED, GOV_APPROVE, 0, 0},
        {CLUSTER_NONE, GOV_APPROVE, 0, 0},
        {CLUSTER_PENDING, GOV_REJECT, 1, CLUSTER_REJECTED},
        {CLUSTER_ACTIVE, GOV_REJECT, 1, CLUSTER_REJECTED},
        {CLUSTER_REJECTED, GOV_REJECT, 0, 0},
        {CLUSTER_NONE, GOV_REJECT, 0, 0},
        {CLUSTER_ACTIVE, GOV_IDENTITY_CHANGE, 1, CLUSTER_PENDING},
        {CLUSTER_PENDING, GOV_IDENTITY_CHANGE, 1, CLUSTER_PENDING},
        {CLUSTER_REJECTED, GOV_IDENTITY_CHANGE, 1, CLUSTER_REJECTED},
        {CLUSTER_NONE, GOV_IDENTITY_CHANGE, 0, 0},
    };
    for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
        enum cluster_state to = (enum cluster_state)99;
        exa_error_t err = EXA_ERROR_INIT;
        int rc = gov_transition("c", t[i].from, t[i].ev, &to, &err);
        if (t[i].ok) {
            assert_int_equal(rc, 0);
            assert_int_equal(to, t[i].to);
        } else {
            assert_int_equal(rc, -1);
            assert_int_equal(to, 99);
            assert_true(err.text[0]);
        }
    }
    {
        exa_error_t err = EXA_ERROR_INIT;
        enum cluster_state to;
        gov_transition("x", CLUSTER_REJECTED, GOV_APPROVE, &to, &err);
        assert_string_equal(err.text,
                            "cluster 'x' is REJECTED; only a new 'exa hpc "
                            "connect' returns it to PENDING");
    }
    assert_int_equal(cluster_state_parse("ACTIVE"), CLUSTER_ACTIVE);
    assert_int_equal(cluster_state_parse("active"), CLUSTER_NONE);
}

/* ---- governance over a database ---- */

static long long count(store_t *st, const char *sql)
{
    sqlite3_stmt *s = store_prepare(st, sql, NULL);
    long long v;
    assert_non_null(s);
    assert_int_equal(sqlite3_step(s), SQLITE_ROW);
    v = sqlite3_column_int64(s, 0);
    sqlite3_finalize(s);
    return v;
}

static const char *state_of(store_t *st, const char *name, char *buf)
{
    struct cluster_row r = {0};
    assert_int_equal(store_cluster_get(st, name, &r, NULL), 1);
    xsnprintf(buf, 16, "%s", r.state);
    cluster_row_release(&r);
    return buf;
}

static struct gov_connect_req req_for(const char *name, const char *host,
                                      const char *hostkey)
{
    struct gov_connect_req q = {0};
    q.name = name;
    q.scheduler = "slurm";
    q.transport = "ssh";
    q.host = host;
    q.ssh_user = "alice";
    q.ssh_port = 2222;
    q.key_fingerprint = "SHA256:client";
    q.host_key_fingerprint = hostkey;
    q.capabilities = "{\"total_gpus\":4}";
    return q;
}

static void test_governance_flow(void **state)
{
    struct env *e = *state;
    exa_error_t err = EXA_ERROR_INIT;
    struct gov_connect_req q = req_for("testa", "login1", "SHA256:hk1");
    struct gov_result res;
    struct fleet f = {NULL, 0};
    char b[16];
    long long n;

    assert_int_equal(gov_connect(e->st, e->reg, &q, "root", &res, &err), 0);
    assert_int_equal(res.from, CLUSTER_NONE);
    assert_int_equal(res.to, CLUSTER_PENDING);
    assert_string_equal(state_of(e->st, "testa", b), "PENDING");
    /* placement's gate refuses PENDING */
    assert_int_equal(fleet_load(e->st, e->reg, &f, &err), 0);
    assert_int_equal(fleet_require_active(&f, "testa", &err), -1);
    assert_int_equal(err.code, EXA_ENOTAPPROVED);
    fleet_release(&f);

    assert_int_equal(
        gov_approve(e->st, e->reg, "testa", NULL, "ops", &res, &err), 0);
    assert_string_equal(state_of(e->st, "testa", b), "ACTIVE");
    /* approving twice is refused and changes nothing */
    assert_int_equal(
        gov_approve(e->st, e->reg, "testa", NULL, "ops", &res, &err), -1);
    assert_string_equal(err.text, "cluster 'testa' is already ACTIVE");

    /* a re-probe with the same identity never revokes */
    q.capabilities = "{\"total_gpus\":8}";
    assert_int_equal(gov_connect(e->st, e->reg, &q, "root", &res, &err), 0);
    assert_int_equal(res.to, CLUSTER_ACTIVE);
    assert_int_equal(res.identity_changed, 0);
    assert_int_equal(count(e->st, "SELECT count(*) FROM clusters WHERE "
                                  "capabilities LIKE '%8%'"),
                     1);

    /* a new host key sends it back to PENDING, audited */
    q.host_key_fingerprint = "SHA256:hk2";
    assert_int_equal(gov_connect(e->st, e->reg, &q, "root", &res, &err), 0);
    assert_int_equal(res.identity_changed, 1);
    assert_int_equal(res.to, CLUSTER_PENDING);
    assert_int_equal(count(e->st, "SELECT count(*) FROM audit_events WHERE "
                                  "action='cluster_identity_changed' AND "
                                  "details LIKE '%host_key_fingerprint%'"),
                     1);

    /* reject, then approve is refused; only connect revives */
    assert_int_equal(gov_reject(e->st, e->reg, "testa", "maintenance", NULL,
                                "ops", &res, &err),
                     0);
    assert_string_equal(state_of(e->st, "testa", b), "REJECTED");
    assert_int_equal(
        gov_approve(e->st, e->reg, "testa", NULL, "ops", &res, &err), -1);
    assert_string_equal(state_of(e->st, "testa", b), "REJECTED");
    assert_int_equal(gov_connect(e->st, e->reg, &q, "root", &res, &err), 0);
    assert_int_equal(res.from, CLUSTER_REJECTED);
    assert_int_equal(res.to, CLUSTER_PENDING);

    /* every step left one or two events; the chain verifies */
    assert_int_equal(audit_verify(e->st, &n, NULL, &err), 0);
    assert_int_equal(n, count(e->st, "SELECT count(*) FROM audit_events"));
    assert_int_equal(count(e->st, "SELECT count(*) FROM audit_events WHERE "
                                  "action='cluster_connect_requested'"),
                     4);
    assert_int_equal(count(e->st, "SELECT count(*) FROM audit_events WHERE "
                                  "action='cluster_approved' AND "
                                  "actor='ops'"),
                     1);
    assert_int_equal(count(e->st, "SELECT count(*) FROM audit_events WHERE "
                                  "action='cluster_rejected' AND details "
                                  "LIKE '%maintenance%'"),
                     1);
    /* the definition reached clusters.yaml */
    {
        struct registry reg = REGISTRY_INIT;
        assert_int_equal(registry_load(e->reg, &reg, &err), 0);
        assert_int_equal(reg.nr, 1);
        assert_string_equal(reg.defs[0].host, "login1");
        assert_int_equal(reg.defs[0].ssh_port, 2222);
        registry_release(&reg);
    }
}

static void test_yaml_edit_returns_to_pending(void **state)
{
    struct env *e = *state;
    exa_error_t err = EXA_ERROR_INIT;
    struct gov_connect_req q = req_for("testa", "login1", "SHA256:hk1");
    struct registry reg = REGISTRY_INIT;
    struct fleet f = {NULL, 0};
    struct cluster_row seen = {0};
    char b[16];

    assert_int_equal(gov_connect(e->st, e->reg, &q, "root", NULL, &err), 0);
    assert_int_equal(store_cluster_get(e->st, "testa", &seen, &err), 1);
    assert_int_equal(
        gov_approve(e->st, e->reg, "testa", &seen, "ops", NULL, &err), 0);
    /* carbon_intensity is not identity: editing it keeps ACTIVE */
    assert_int_equal(registry_load(e->reg, &reg, &err), 0);
    reg.defs[0].has_carbon_intensity = 1;
    reg.defs[0].carbon_intensity = 50;
    assert_int_equal(registry_save(e->reg, &reg, &err), 0);
    assert_int_equal(fleet_load(e->st, e->reg, &f, &err), 0);
    assert_int_equal(fleet_find(&f, "testa")->state, CLUSTER_ACTIVE);
    assert_true(fleet_find(&f, "testa")->def.carbon_intensity == 50);
    fleet_release(&f);
    /* the host is identity */
    free(reg.defs[0].host);
    reg.defs[0].host = xstrdup("evil.example");
    assert_int_equal(registry_save(e->reg, &reg, &err), 0);
    registry_release(&reg);
    assert_int_equal(fleet_load(e->st, e->reg, &f, &err), 0);
    assert_int_equal(fleet_find(&f, "testa")->state, CLUSTER_PENDING);
    assert_string_equal(fleet_find(&f, "testa")->def.host, "evil.example");
    assert_null(fleet_find(&f, "testa")->row.approved_by);
    fleet_release(&f);
    assert_string_equal(state_of(e->st, "testa", b), "PENDING");
    assert_int_equal(count(e->st, "SELECT count(*) FROM audit_events WHERE "
                                  "action='cluster_identity_changed' AND "
                                  "details LIKE '%evil.example%' AND "
                                  "details LIKE '%clusters.yaml%'"),
                     1);
    /* approving with the identity shown before the edit is refused */
    assert_int_equal(
        gov_approve(e->st, e->reg, "testa", &seen, "ops", NULL, &err), -1);
    assert_non_null(strstr(err.text, "changed its connection identity"));
    assert_string_equal(state_of(e->st, "testa", b), "PENDING");
    cluster_row_release(&seen);
    /* a YAML-only cluster shows as PENDING and gets a row */
    assert_int_equal(registry_load(e->reg, &reg, &err), 0);
    {
        struct cluster_def d = {0};
        d.name = (char *)"yamlonly";
        d.host = (char *)"h2";
        registry_put(&reg, &d);
    }
    assert_int_equal(registry_save(e->reg, &reg, &err), 0);
    registry_release(&reg);
    assert_int_equal(fleet_load(e->st, e->reg, &f, &err), 0);
    assert_int_equal(f.nr, 2);
    assert_int_equal(fleet_find(&f, "yamlonly")->state, CLUSTER_PENDING);
    assert_string_equal(fleet_find(&f, "yamlonly")->row.requested_by,
                        "clusters.yaml");
    fleet_release(&f);
    assert_int_equal(audit_verify(e->st, NULL, NULL, &err), 0);
}

static void test_unknown_cluster(void **state)
{
    struct env *e = *state;
    exa_error_t err = EXA_ERROR_INIT;
    struct fleet f = {NULL, 0};
    assert_int_equal(
        gov_approve(e->st, e->reg, "nope", NULL, "ops", NULL, &err), -1);
    assert_int_equal(err.code, EXA_ENOTFOUND);
    assert_string_equal(err.text, "Unknown cluster: nope");
    assert_int_equal(fleet_load(e->st, e->reg, &f, &err), 0);
    assert_int_equal(fleet_require_active(&f, "nope", &err), -1);
    assert_string_equal(err.text,
                        "unknown cluster: 'nope' (run 'exa hpc connect' "
                        "first)");
    fleet_release(&f);
    assert_int_equal(count(e->st, "SELECT count(*) FROM audit_events"), 0);
}

/* Audit binds state: every governance write binds the row to its event;
 * a row edited behind the API is treated as PENDING with the reason; a
 * deleted tail is caught by the head; a decision through the API
 * repairs the binding. */
static void test_audit_binds_state(void **state)
{
    struct env *e = *state;
    exa_error_t err = EXA_ERROR_INIT;
    struct gov_connect_req q = req_for("testa", "login1", "SHA256:hk1");
    struct gov_audit_report rep;
    struct cluster_row row = {0};
    struct audit_event ev = {0};
    struct fleet f = {NULL, 0};
    char digest[65], b[16];
    long long n, bad = 0;

    assert_int_equal(gov_connect(e->st, e->reg, &q, "root", NULL, &err), 0);
    assert_int_equal(
        gov_approve(e->st, e->reg, "testa", NULL, "ops", NULL, &err), 0);
    assert_int_equal(store_cluster_get(e->st, "testa", &row, &err), 1);
    assert_int_equal(audit_latest(e->st, "testa", "cluster_", &ev, &err), 1);
    assert_string_equal(ev.action, "cluster_approved");
    assert_string_equal(row.audit_hash, ev.hash);
    gov_row_digest(&row, digest);
    assert_non_null(strstr(ev.details, digest));
    assert_non_null(strstr(ev.details, "\"state\":\"ACTIVE\""));
    assert_int_equal(governance_verify_cluster(e->st, &row, &err), 0);
    assert_int_equal(count(e->st, "SELECT count FROM audit_head"), 2);
    assert_int_equal(count(e->st, "SELECT last_hash = (SELECT hash FROM "
                                  "audit_events WHERE id = 2) FROM "
                                  "audit_head"),
                     1);

    /* a state edit: gates see PENDING, the reason names the event */
    assert_int_equal(
        store_exec(e->st, "UPDATE clusters SET state='REJECTED'", &err), 0);
    cluster_row_release(&row);
    assert_int_equal(store_cluster_get(e->st, "testa", &row, &err), 1);
    assert_int_equal(governance_verify_cluster(e->st, &row, &err), -1);
    assert_int_equal(err.code, EXA_ENOTAPPROVED);
    assert_string_equal(err.text,
                        "cluster 'testa' does not match its audit chain: "
                        "the row says REJECTED but its latest audit event "
                        "(2, cluster_approved) left it ACTIVE; it is "
                        "treated as PENDING ('exa hpc audit --verify')");
    assert_int_equal(store_exec(e->st,
                                "UPDATE clusters SET state='ACTIVE', "
                                "host='evil'",
                                &err),
                     0);
    assert_int_equal(fleet_load(e->st, e->reg, &f, &err), 0);
    /* the YAML still says login1: reconcile moved it back through the
     * API (identity change), so the row is PENDING and bound again */
    assert_string_equal(state_of(e->st, "testa", b), "PENDING");
    assert_null(fleet_find(&f, "testa")->audit_mismatch);
    assert_int_equal(fleet_require_active(&f, "testa", &err), -1);
    fleet_release(&f);
    assert_int_equal(count(e->st, "SELECT count(*) FROM audit_events WHERE "
                                  "action='cluster_identity_changed' AND "
                                  "details LIKE '%audit_mismatch%'"),
                     1);
    /* an identity edit with the state untouched: caught by the digest */
    assert_int_equal(
        store_exec(e->st, "UPDATE clusters SET ssh_user='eve'", &err), 0);
    cluster_row_release(&row);
    assert_int_equal(store_cluster_get(e->st, "testa", &row, &err), 1);
    assert_int_equal(governance_verify_cluster(e->st, &row, &err), -1);
    assert_non_null(strstr(err.text, "the row's identity differs from what "
                                     "its latest audit event (3, "
                                     "cluster_identity_changed) recorded"));
    assert_int_equal(gov_audit_verify(e->st, &rep, &err), 0);
    assert_int_equal(rep.nr, 1);
    assert_string_equal(rep.v[0].cluster, "testa");
    assert_int_equal(rep.events, 3);
    gov_audit_report_release(&rep);

    /* a decision through the API rewrites and rebinds the row (first
     * reconcile brings the YAML's ssh_user back: event 4, then the
     * rejection: event 5) */
    assert_int_equal(
        gov_reject(e->st, e->reg, "testa", "edited", NULL, "ops", NULL, &err),
        0);
    assert_int_equal(gov_audit_verify(e->st, &rep, &err), 0);
    assert_int_equal(rep.nr, 0);
    assert_int_equal(rep.events, 5);
    assert_int_equal(rep.clusters_checked, 1);
    gov_audit_report_release(&rep);

    /* a deleted tail links but disagrees with the head */
    assert_int_equal(store_exec(e->st,
                                "DROP TRIGGER audit_events_no_delete; "
                                "DELETE FROM audit_events WHERE id = 5",
                                &err),
                     0);
    assert_int_equal(audit_verify(e->st, &n, &bad, &err), -1);
    assert_int_equal(bad, 5);
    assert_string_equal(err.text,
                        "audit chain tail deleted: the head records 5 "
                        "event(s) up to event 5, the table holds 4 up to "
                        "event 4");
    cluster_row_release(&row);
    audit_event_release(&ev);
}

/* gov_row_digest is SHA-256 of the canonical document of the row's
 * identity, as built through json_t (NULL and "" as null). */
static void reference_digest(const struct cluster_row *r, char hex[65])
{
    json_t *o = json_object();
    char *canon;
#define NZ(s) ((s) && *(s) ? json_string(s) : json_null())
    jx_set(o, "name", NZ(r->name));
    jx_set(o, "state", NZ(r->state));
    jx_set(o, "scheduler", NZ(r->scheduler));
    jx_set(o, "transport", NZ(r->transport));
    jx_set(o, "host", NZ(r->host));
    jx_set(o, "ssh_port", json_integer(r->port > 0 ? r->port : 22));
    jx_set(o, "ssh_user", NZ(r->ssh_user));
    jx_set(o, "ssh_key", NZ(r->ssh_key));
    jx_set(o, "key_fingerprint", NZ(r->key_fingerprint));
    jx_set(o, "host_key_fingerprint", NZ(r->host_key_fingerprint));
    jx_set(o, "approved_by", NZ(r->approved_by));
#undef NZ
    canon = jx_dumps_canonical(o);
    exa_sha256_hex(canon, strlen(canon), hex);
    free(canon);
    json_decref(o);
}

static void test_row_digest_document(void **state)
{
    static const char *const v[] = {
        NULL, "", "login1", "a\"b", "c\\d\n\x01", "caf\xc3\xa9", "bad\xff"};
    size_t nv = sizeof(v) / sizeof(v[0]);
    (void)state;
    for (size_t i = 0; i < nv; i++)
        for (size_t k = 0; k < nv; k++) {
            struct cluster_row r = {0};
            char got[65], want[65];
            r.name = (char *)"c1";
            r.state = (char *)v[(i + 1) % nv];
            r.scheduler = (char *)"slurm";
            r.transport = (char *)v[k];
            r.host = (char *)v[i];
            r.port = (int)(i * 1000 + k) - 3;
            r.ssh_user = (char *)v[(k + 2) % nv];
            r.ssh_key = (char *)v[(i + k) % nv];
            r.key_fingerprint = (char *)v[(i + 3) % nv];
            r.host_key_fingerprint = (char *)v[(k + 4) % nv];
            r.approved_by = (char *)v[(i + 5) % nv];
            gov_row_digest(&r, got);
            reference_digest(&r, want);
            if (strcmp(got, want))
                fail_msg("gov_row_digest differs for values %zu, %zu", i, k);
        }
}

/* The decision as JSON (choice, candidates and the explanation). */
static char *decision_json(const struct place_cluster *c, size_t n, time_t now)
{
    struct place_ask ask = {8, 32, 2, NULL};
    struct place_result res;
    json_t *doc;
    char *s;
    memset(&res, 0, sizeof(res));
    assert_int_equal(
        place_choose(c, n, &ask, place_scorer_find(NULL), 300, now, &res, NULL),
        0);
    doc = place_result_json(&res, 1);
    s = json_dumps(doc,
                   JSON_SORT_KEYS | JSON_COMPACT | JSON_REAL_PRECISION(17));
    json_decref(doc);
    place_result_release(&res);
    return s;
}

/*
 * Placement through fleet_load (the one cluster list of the reconcile, the
 * flat reading of the audit events, the summary table) decides as a
 * reference built from the node rows of the clusters that really are
 * approved: c5 set ACTIVE by an UPDATE, c4's ssh_user edited and c0
 * inserted ACTIVE with no event are not candidates although c5 and c4
 * have the most idle GPUs (audit_latest_of_clusters agrees with
 * audit_latest for each cluster), and the choice and
 * explanation are the reference's byte for byte.
 */
static void test_place_through_fleet_load(void **state)
{
    struct env *e = *state;
    exa_error_t err = EXA_ERROR_INIT;
    struct fleet f = {NULL, 0};
    struct place_cluster *cands = NULL, ref[3];
    struct node_row *sum = NULL, *rows = NULL;
    size_t ncands = 0, nsum = 0, nrows = 0, j = 0;
    static const char *const names[] = {"c1", "c2", "c3", "c4", "c5"};
    char *cmd = xstrfmt("mkdir -p '%s/cfg'", e->dir), *got, *want, stamp[32];
    time_t now = time(NULL);

    assert_int_equal(system(cmd), 0);
    free(cmd);
    strftime(stamp, sizeof(stamp), "%Y-%m-%dT%H:%M:%SZ", gmtime(&now));
    write_text(e->reg, "clusters:\n"
                       "  c1: {scheduler: slurm, host: login1}\n"
                       "  c2: {scheduler: slurm, host: login2}\n"
                       "  c3: {scheduler: slurm, host: login3, "
                       "carbon_intensity: 80}\n"
                       "  c4: {scheduler: slurm, host: login4}\n"
                       "  c5: {scheduler: slurm, host: login5}\n");
    assert_int_equal(gov_reconcile(e->st, e->reg, "root", NULL, &err), 0);
    for (int c = 0; c < 4; c++)
        assert_int_equal(
            gov_approve(e->st, e->reg, names[c], NULL, "ops", NULL, &err), 0);
    for (int c = 0; c < 5; c++) {
        struct node_row nr[12];
        char nn[12][16];
        memset(nr, 0, sizeof(nr));
        for (int i = 0; i < 12; i++) {
            snprintf(nn[i], sizeof(nn[i]), "n%02d", i);
            nr[i].node = nn[i];
            /* c5, then c4, have the most idle GPUs */
            nr[i].state = (char *)(i % 4 == 3  ? "down"
                                   : i < c * 2 ? "idle"
                                               : "mixed");
            nr[i].gpus = 8;
            nr[i].gpus_used = i < c * 2 ? 0 : (i + c) % 9;
            nr[i].cpus = 64;
            nr[i].mem_mb = -1;
            nr[i].captured_at = stamp;
        }
        assert_int_equal(
            store_nodes_replace(e->st, names[c], "slurm", nr, 12, &err), 0);
    }
    assert_int_equal(store_exec(e->st,
                                "UPDATE clusters SET state='ACTIVE' WHERE "
                                "name='c5'; UPDATE clusters SET "
                                "ssh_user='eve' WHERE name='c4'",
                                &err),
                     0);

    /* c0: a row no event records, ACTIVE by an INSERT */
    assert_int_equal(store_exec(e->st,
                                "INSERT INTO clusters (name, scheduler, "
                                "state, created_at, updated_at) VALUES "
                                "('c0', 'slurm', 'ACTIVE', 'x', 'x')",
                                &err),
                     0);
    {
        /* the batch lookup is audit_latest per cluster */
        struct audit_event *evs = NULL;
        size_t nevs = 0, k = 0;
        assert_int_equal(
            audit_latest_of_clusters(e->st, "cluster_", &evs, &nevs, &err), 0);
        assert_int_equal(nevs, 5);
        for (int c = 0; c < 5; c++) {
            struct audit_event one = {0};
            assert_int_equal(
                audit_latest(e->st, names[c], "cluster_", &one, &err), 1);
            assert_string_equal(evs[k].target, names[c]);
            assert_int_equal(evs[k].id, one.id);
            assert_string_equal(evs[k].hash, one.hash);
            assert_string_equal(evs[k].details, one.details);
            k++;
            audit_event_release(&one);
        }
        audit_events_free(evs, nevs);
    }
    assert_int_equal(fleet_load(e->st, e->reg, &f, &err), 0);
    assert_int_equal(f.nr, 6);
    assert_non_null(strstr(fleet_find(&f, "c0")->audit_mismatch,
                           "no audit event records it"));
    assert_non_null(fleet_find(&f, "c4")->audit_mismatch);
    assert_non_null(fleet_find(&f, "c5")->audit_mismatch);
    assert_int_equal(
        place_load_candidates(e->st, &f, &cands, &ncands, &sum, &nsum, &err),
        0);
    assert_int_equal(ncands, 3);
    got = decision_json(cands, ncands, now);

    /* the reference: c1..c3 with their node rows, one per node */
    assert_int_equal(store_nodes_list(e->st, NULL, &rows, &nrows, &err), 0);
    memset(ref, 0, sizeof(ref));
    for (int c = 0; c < 3; c++) {
        const struct cluster_def *d = &fleet_find(&f, names[c])->def;
        ref[c].name = d->name;
        ref[c].scheduler = d->scheduler;
        ref[c].has_carbon_intensity = d->has_carbon_intensity;
        ref[c].carbon_intensity = d->carbon_intensity;
        while (j < nrows && strcmp(rows[j].cluster, names[c]) < 0)
            j++;
        ref[c].nodes = rows + j;
        while (j < nrows && !strcmp(rows[j].cluster, names[c])) {
            ref[c].nnodes++;
            j++;
        }
        assert_int_equal(ref[c].nnodes, 12);
    }
    want = decision_json(ref, 3, now);
    assert_string_equal(got, want);
    if (!strstr(got, "\"chosen\":\"c2\""))
        fail_msg("%s", got);
    assert_null(strstr(got, "\"c4\""));
    assert_null(strstr(got, "\"c5\""));
    free(got);
    free(want);
    free(cands);
    node_rows_free(sum, nsum);
    node_rows_free(rows, nrows);
    fleet_release(&f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_registry_shapes),
        cmocka_unit_test_setup_teardown(test_registry_round_trip, setup,
                                        teardown),
        cmocka_unit_test(test_registry_errors),
        cmocka_unit_test_setup_teardown(test_fingerprints, setup, teardown),
        cmocka_unit_test(test_transitions),
        cmocka_unit_test_setup_teardown(test_governance_flow, setup, teardown),
        cmocka_unit_test_setup_teardown(test_yaml_edit_returns_to_pending,
                                        setup, teardown),
        cmocka_unit_test_setup_teardown(test_unknown_cluster, setup, teardown),
        cmocka_unit_test(test_row_digest_document),
        cmocka_unit_test_setup_teardown(test_audit_binds_state, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_place_through_fleet_load, setup,
                                        teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
