/* Tests for libfleet/connect.c: the one cluster -> transport rule. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "libfleet/connect.h"
#include "libutil/strbuf.h"
#include "libutil/strvec.h"
#include "libutil/xalloc.h"

static int setup(void **state)
{
    (void)state;
    setenv("XDG_CONFIG_HOME", "/tmp/exa-connect-cfg", 1);
    setenv("HOME", "/tmp/exa-connect-home", 1);
    unsetenv("EXAMLOPS_SLURM_CMD_TIMEOUT");
    return 0;
}

static void test_known_hosts_path(void **state)
{
    char *p;
    (void)state;
    p = fleet_known_hosts_path("hpc1");
    assert_string_equal(p, "/tmp/exa-connect-cfg/examlops/known_hosts.d/hpc1");
    free(p);
    setenv("XDG_CONFIG_HOME", "", 1);
    p = fleet_known_hosts_path("hpc1");
    assert_string_equal(
        p, "/tmp/exa-connect-home/.config/examlops/known_hosts.d/hpc1");
    free(p);
    setenv("XDG_CONFIG_HOME", "/tmp/exa-connect-cfg", 1);
}

static void test_local_rule(void **state)
{
    const char *hosts[] = {NULL, "", "local", "localhost"};
    struct fleet_conn c = {"a", "ssh", NULL, NULL, NULL, 0};
    exa_error_t err = EXA_ERROR_INIT;
    struct transport *t;
    (void)state;
    /* no remote host named: local whatever the transport says */
    for (size_t i = 0; i < 3; i++) {
        c.host = hosts[i];
        t = fleet_conn_transport(&c, &err);
        assert_non_null(t);
        assert_string_equal(t->ops->kind, "local");
        transport_close(t);
    }
    /* "localhost" is local unless ssh is asked for (a local sshd on
     * another port is a host-key-checked login, libutil/target.h) */
    c.host = hosts[3];
    t = fleet_conn_transport(&c, &err);
    assert_non_null(t);
    assert_string_equal(t->ops->kind, "ssh");
    transport_close(t);
    c.transport = NULL;
    t = fleet_conn_transport(&c, &err);
    assert_non_null(t);
    assert_string_equal(t->ops->kind, "local");
    transport_close(t);
    c.transport = "local";
    c.host = "login1.example.org";
    t = fleet_conn_transport(&c, &err);
    assert_non_null(t);
    assert_string_equal(t->ops->kind, "local");
    transport_close(t);
}

static void test_ssh_pins_known_hosts_and_cap(void **state)
{
    struct fleet_conn c = {"hpc1", NULL, "login1", "alice", NULL, 2222};
    exa_error_t err = EXA_ERROR_INIT;
    struct strvec argv = STRVEC_INIT;
    struct strbuf sb = STRBUF_INIT;
    struct transport *t;
    char *joined;
    (void)state;
    setenv("EXAMLOPS_SLURM_CMD_TIMEOUT", "7", 1);
    t = fleet_conn_transport(&c, &err);
    assert_non_null(t);
    assert_string_equal(t->ops->kind, "ssh");
    assert_true(t->timeout_s == 7.0);
    transport_ssh_base_argv(t, &argv);
    for (size_t i = 0; i < argv.nr; i++)
        strbuf_addf(&sb, "%s ", argv.v[i]);
    joined = sb.buf;
    assert_non_null(strstr(joined, "UserKnownHostsFile=/tmp/exa-connect-cfg/"
                                   "examlops/known_hosts.d/hpc1"));
    assert_non_null(strstr(joined, "2222"));
    strbuf_release(&sb);
    strvec_clear(&argv);
    transport_close(t);
    /* the cap applies to local clusters too */
    c.host = "localhost";
    t = fleet_conn_transport(&c, &err);
    assert_non_null(t);
    assert_true(t->timeout_s == 7.0);
    transport_close(t);
    unsetenv("EXAMLOPS_SLURM_CMD_TIMEOUT");
    t = fleet_conn_transport(&c, &err);
    assert_true(t->timeout_s == TRANSPORT_DEFAULT_TIMEOUT_S);
    transport_close(t);
}

static void test_errors(void **state)
{
    struct fleet_conn c = {"hpc1", "rsh", "login1", NULL, NULL, 0};
    exa_error_t err = EXA_ERROR_INIT;
    (void)state;
    assert_null(fleet_conn_transport(&c, &err));
    assert_int_equal(err.code, EXA_ECONFIG);
    assert_string_equal(err.text, "unknown transport 'rsh' of 'hpc1'");
    c.transport = "ssh";
    setenv("EXAMLOPS_SLURM_CMD_TIMEOUT", "soon", 1);
    err = (exa_error_t)EXA_ERROR_INIT;
    assert_null(fleet_conn_transport(&c, &err));
    assert_int_equal(err.code, EXA_ECONFIG);
    unsetenv("EXAMLOPS_SLURM_CMD_TIMEOUT");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_known_hosts_path),
        cmocka_unit_test(test_local_rule),
        cmocka_unit_test(test_ssh_pins_known_hosts_and_cap),
        cmocka_unit_test(test_errors),
    };
    return cmocka_run_group_tests(tests, setup, NULL);
}
