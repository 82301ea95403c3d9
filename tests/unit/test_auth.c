/*
 * test_auth.c - API tokens (libauth/auth.h): the shape and hash of a new
 * token, only the hash stored, verify of good, unknown, malformed,
 * expired and revoked tokens (the user known for the last two), role
 * order, the audit events (no token in them), and the redaction of
 * libview (view_redact_text, view_redact).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "libauth/auth.h"
#include "libauth/throttle.h"
#include "libstore/audit.h"
#include "libstore/tokens.h"
#include "libutil/strbuf.h"
#include "libutil/xalloc.h"
#include "libview/view.h"
#include "testutil.h"

struct fx {
    char *dir;
    store_t *st;
};

static int setup(void **state)
{
    struct fx *f = xcalloc(1, sizeof(*f));
    char *path;
    f->dir = tu_mkdtemp();
    path = xstrfmt("%s/platform.db", f->dir);
    f->st = store_open(path, NULL);
    free(path);
    assert_non_null(f->st);
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    struct fx *f = *state;
    store_close(f->st);
    tu_rmtree(f->dir);
    free(f->dir);
    free(f);
    return 0;
}

static void test_create_verify(void **state)
{
    struct fx *f = *state;
    exa_error_t err = EXA_ERROR_INIT;
    struct auth_principal p;
    struct token_row r;
    char *tok = NULL, hex[65];
    long long id = 0;

    assert_int_equal(auth_token_create(f->st, "alice", AUTH_ROLE_OPERATOR, 0,
                                       "cli", "root", &tok, &id, &err),
                     0);
    assert_int_equal(strlen(tok), AUTH_TOKEN_LEN);
    assert_memory_equal(tok, "exa_", 4);
    assert_true(id > 0);
    /* only the hash is stored */
    auth_sha256_hex(tok, strlen(tok), hex);
    assert_int_equal(store_token_get(f->st, id, &r, &err), 1);
    assert_string_equal(r.token_sha256, hex);
    assert_null(strstr(r.token_sha256, tok + 4));
    token_row_release(&r);

    assert_int_equal(auth_verify(f->st, tok, &p, &err), 0);
    assert_string_equal(p.user, "alice");
    assert_int_equal(p.role, AUTH_ROLE_OPERATOR);
    assert_int_equal(p.token_id, id);

    /* one character changed: unknown, user not known */
    tok[10] = tok[10] == 'A' ? 'B' : 'A';
    assert_int_equal(auth_verify(f->st, tok, &p, &err), -1);
    assert_int_equal(err.code, EXA_EFAIL);
    assert_string_equal(p.user, "");
    assert_null(strstr(err.text, tok));
    assert_int_equal(auth_verify(f->st, NULL, &p, &err), -1);
    assert_int_equal(auth_verify(f->st, "", &p, &err), -1);
    assert_int_equal(auth_verify(f->st, "exa_short", &p, &err), -1);
    assert_int_equal(auth_verify(f->st, "Bearer x", &p, &err), -1);
    free(tok);
}

static void test_revoke_expire(void **state)
{
    struct fx *f = *state;
    exa_error_t err = EXA_ERROR_INIT;
    struct auth_principal p;
    char *tok = NULL;
    long long id = 0;
    struct audit_event *v = NULL;
    size_t n = 0;

    assert_int_equal(auth_token_create(f->st, "bob", AUTH_ROLE_ADMIN, 3600,
                                       "cli", "root", &tok, &id, &err),
                     0);
    assert_int_equal(auth_verify(f->st, tok, &p, &err), 0);
    assert_int_equal(auth_token_revoke(f->st, id, "cli", "root", &err), 0);
    assert_int_equal(auth_verify(f->st, tok, &p, &err), -1);
    assert_string_equal(p.user, "bob");
    assert_non_null(strstr(err.text, "revoked"));
    assert_int_equal(auth_token_revoke(f->st, id, "cli", "root", &err), -1);
    assert_int_equal(err.code, EXA_EFAIL);
    assert_int_equal(auth_token_revoke(f->st, 9999, "cli", "root", &err), -1);
    assert_int_equal(err.code, EXA_ENOTFOUND);
    free(tok);

    /* an expiry in the past (written directly) */
    assert_int_equal(auth_token_create(f->st, "carol", AUTH_ROLE_VIEWER, 60,
                                       "cli", "root", &tok, &id, &err),
                     0);
    assert_int_equal(store_exec(f->st,
                                "UPDATE tokens SET expires_at = "
                                "'2001-01-01T00:00:00Z' WHERE user = 'carol'",
                                &err),
                     0);
    assert_int_equal(auth_verify(f->st, tok, &p, &err), -1);
    assert_string_equal(p.user, "carol");
    assert_non_null(strstr(err.text, "expired"));

    /* audit: token events name the actor, never hold a token */
    assert_int_equal(auth_record_denied(f->st, "carol", 401, "GET",
                                        "/api/v1/clusters", "expired",
                                        "127.0.0.1", &err),
                     0);
    assert_int_equal(auth_record_denied(f->st, NULL, 401, "GET",
                                        "/api/v1/clusters", "no token",
                                        "127.0.0.1", &err),
                     0);
    assert_int_equal(audit_list(f->st, NULL, NULL, &v, &n, &err), 0);
    assert_int_equal(n, 5);
    assert_string_equal(v[0].action, "token_created");
    assert_string_equal(v[0].target, "token:1");
    assert_string_equal(v[1].action, "token_revoked");
    assert_string_equal(v[3].action, "api_denied");
    assert_string_equal(v[3].actor, "carol");
    assert_string_equal(v[4].actor, "anonymous");
    for (size_t i = 0; i < n; i++)
        assert_null(strstr(v[i].details, tok + 4));
    audit_events_free(v, n);
    assert_int_equal(audit_verify(f->st, NULL, NULL, &err), 0);
    free(tok);
}

/* A 15,000-byte path is kept once and cut (redteam-s3 finding 2). */
static void test_denied_path_cut(void **state)
{
    struct fx *f = *state;
    exa_error_t err = EXA_ERROR_INIT;
    struct audit_event *v = NULL;
    size_t n = 0;
    char *path = xmalloc(15001);
    memset(path, 'a', 15000);
    path[0] = '/';
    path[15000] = '\0';
    assert_int_equal(auth_record_denied(f->st, NULL, 401, "GET", path,
                                        "no token", "127.0.0.1", &err),
                     0);
    assert_int_equal(audit_list(f->st, NULL, NULL, &v, &n, &err), 0);
    assert_int_equal(n, 1);
    assert_int_equal(strlen(v[0].target), AUTH_DENIED_PATH_MAX + 3);
    assert_true(strlen(v[0].details) < 200);
    audit_events_free(v, n);
    free(path);
}

/* Failures are held back after the limit, per address; the caller is
 * told how long (redteam-s3 findings 2, 3, 9). */
static void test_throttle(void **state)
{
    struct auth_throttle *t = auth_throttle_new(3, 300, 0, 60);
    struct auth_throttle *off = auth_throttle_new(-1, 0, 0, 0);
    (void)state;
    assert_int_equal(auth_throttle_failed(t, "10.0.0.1"), 0);
    assert_int_equal(auth_throttle_failed(t, "10.0.0.1"), 0);
    assert_int_equal(auth_throttle_failed(t, "10.0.0.1"), 0); /* the 3rd */
    assert_true(auth_throttle_failed(t, "10.0.0.1") >= 1);    /* held back */
    assert_int_equal(auth_throttle_failed(t, "10.0.0.2"), 0); /* another */
    assert_int_equal(auth_throttle_failed(NULL, "10.0.0.1"), 0);
    for (int i = 0; i < 20; i++)
        assert_int_equal(auth_throttle_failed(off, "10.0.0.1"), 0);
    auth_throttle_free(t);
    auth_throttle_free(off);
    auth_throttle_free(NULL);
}

static void test_roles_users(void **state)
{
    exa_error_t err = EXA_ERROR_INIT;
    (void)state;
    assert_true(auth_role_allows(AUTH_ROLE_ADMIN, AUTH_ROLE_VIEWER));
    assert_true(auth_role_allows(AUTH_ROLE_OPERATOR, AUTH_ROLE_OPERATOR));
    assert_false(auth_role_allows(AUTH_ROLE_VIEWER, AUTH_ROLE_OPERATOR));
    assert_false(auth_role_allows(AUTH_ROLE_OPERATOR, AUTH_ROLE_ADMIN));
    assert_false(auth_role_allows(AUTH_ROLE_NONE, AUTH_ROLE_VIEWER));
    assert_int_equal(auth_role_parse("admin"), AUTH_ROLE_ADMIN);
    assert_int_equal(auth_role_parse("Admin"), AUTH_ROLE_NONE);
    assert_string_equal(auth_role_name(AUTH_ROLE_OPERATOR), "operator");
    assert_int_equal(auth_user_check("alice@site.org", &err), 0);
    assert_int_equal(auth_user_check("", &err), -1);
    assert_int_equal(auth_user_check("-x", &err), -1);
    assert_int_equal(auth_user_check("a b", &err), -1);
    assert_int_equal(auth_user_check("admin", &err), 0);
}

static void test_b64url(void **state)
{
    char out[16];
    (void)state;
    assert_int_equal(auth_b64url((const unsigned char *)"foob", 4, out), 6);
    assert_string_equal(out, "Zm9vYg");
    auth_b64url((const unsigned char *)"\xfb\xff", 2, out);
    assert_string_equal(out, "-_8");
}

static void test_redact(void **state)
{
    struct view_secrets sec = {0};
    char *users[] = {(char *)"root"};
    char *paths[] = {(char *)"/tmp/tb/ssh/id_ed25519"};
    json_t *doc;
    char *s;
    (void)state;
    sec.users = users;
    sec.nusers = 1;
    sec.paths = paths;
    sec.npaths = 1;
    s = view_redact_text(
        xstrdup("ssh root@127.0.0.1 -i /tmp/tb/ssh/id_ed25519"), &sec);
    assert_string_equal(s, "ssh [redacted]@127.0.0.1 -i [redacted]");
    free(s);
    s = view_redact_text(xstrdup("/root/runs --user root rootfs root.x"), &sec);
    assert_string_equal(s, "/[redacted]/runs --user [redacted] rootfs root.x");
    free(s);
    doc = json_pack("{s:s, s:s, s:s, s:[s, {s:s}], s:s}", "ssh_user", "root",
                    "ssh_key", "/x", "name", "testa", "list", "root", "user",
                    "root", "remote_dir", "/root/x");
    view_redact(doc, &sec);
    assert_null(json_object_get(doc, "ssh_user"));
    assert_null(json_object_get(doc, "ssh_key"));
    assert_null(json_object_get(doc, "remote_dir"));
    assert_string_equal(json_string_value(json_object_get(doc, "name")),
                        "testa");
    /* an identifier equal to the ssh user is not free text */
    assert_string_equal(
        json_string_value(json_array_get(json_object_get(doc, "list"), 0)),
        "root");
    json_decref(doc);
}

/* redteam-s3 6: an ssh user named like the scheduler or an actor hides
 * only free text; 7: a "~/" key path is redacted in the form ssh prints
 * it, and so is the server's known_hosts.d. */
static void test_redact_fields_paths(void **state)
{
    struct fx *f = *state;
    exa_error_t err = EXA_ERROR_INIT;
    struct view_ctx vc = {0};
    struct view_secrets sec;
    char *reg = xstrfmt("%s/clusters.yaml", f->dir);
    char *old_home = getenv("HOME") ? xstrdup(getenv("HOME")) : NULL;
    char *old_xdg =
        getenv("XDG_CONFIG_HOME") ? xstrdup(getenv("XDG_CONFIG_HOME")) : NULL;
    char *msg;
    json_t *doc;
    FILE *fp = fopen(reg, "w");
    assert_non_null(fp);
    fputs("clusters:\n  alpha: {scheduler: slurm, transport: ssh, host: "
          "127.0.0.1, ssh_port: 1, ssh_user: slurm, ssh_key: "
          "~/.ssh/id_alpha}\n",
          fp);
    fclose(fp);
    setenv("HOME", f->dir, 1);
    unsetenv("XDG_CONFIG_HOME");
    vc.st = f->st;
    vc.regpath = reg;
    vc.redact = 1;
    assert_int_equal(view_secrets_load(&vc, &sec, &err), 0);
    doc = json_pack("{s:s, s:s, s:s, s:{s:s}}", "scheduler", "slurm", "actor",
                    "slurm", "message", "ssh slurm@127.0.0.1 failed", "details",
                    "raw", "as slurm");
    view_redact(doc, &sec);
    assert_string_equal(json_string_value(json_object_get(doc, "scheduler")),
                        "slurm");
    assert_string_equal(json_string_value(json_object_get(doc, "actor")),
                        "slurm");
    assert_string_equal(json_string_value(json_object_get(doc, "message")),
                        "ssh [redacted]@127.0.0.1 failed");
    assert_string_equal(json_string_value(json_object_get(
                            json_object_get(doc, "details"), "raw")),
                        "as [redacted]");
    json_decref(doc);
    msg = view_redact_text(
        xstrfmt("Warning: Identity file %s/.ssh/id_alpha not accessible; "
                "%s/.config/examlops/known_hosts.d/alpha: no such file",
                f->dir, f->dir),
        &sec);
    assert_null(strstr(msg, "id_alpha"));
    assert_null(strstr(msg, "known_hosts.d"));
    assert_null(strstr(msg, f->dir));
    free(msg);
    view_secrets_release(&sec);
    if (old_home)
        setenv("HOME", old_home, 1);
    else
        unsetenv("HOME");
    if (old_xdg)
        setenv("XDG_CONFIG_HOME", old_xdg, 1);
    free(old_home);
    free(old_xdg);
    free(reg);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_create_verify, setup, teardown),
        cmocka_unit_test_setup_teardown(test_revoke_expire, setup, teardown),
        cmocka_unit_test_setup_teardown(test_denied_path_cut, setup, teardown),
        cmocka_unit_test(test_throttle),
        cmocka_unit_test(test_roles_users),
        cmocka_unit_test(test_b64url),
        cmocka_unit_test(test_redact),
        cmocka_unit_test_setup_teardown(test_redact_fields_paths, setup,
                                        teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
