/*
 * test_subprocess.c - subprocess_run: exit codes, signals, stdin, env,
 * the time cap (a `sleep 30` is killed within the cap plus grace) and the
 * output cap (`yes` is stopped once it passes the cap).
 */
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "libutil/subprocess.h"

static void test_exit_codes(void **state)
{
    struct subprocess_result res = SUBPROCESS_RESULT_INIT;
    exa_error_t err = EXA_ERROR_INIT;
    const char *ok[] = {"true", NULL};
    const char *three[] = {"sh", "-c", "exit 3", NULL};

    assert_int_equal(subprocess_run(ok, NULL, &res, &err), 0);
    assert_int_equal(res.exit_code, 0);
    assert_int_equal(res.signal, 0);
    assert_int_equal(subprocess_run(three, NULL, &res, &err), 0);
    assert_int_equal(res.exit_code, 3);
    subprocess_result_release(&res);
}

static void test_signal(void **state)
{
    struct subprocess_result res = SUBPROCESS_RESULT_INIT;
    const char *argv[] = {"sh", "-c", "kill -USR1 $$", NULL};

    assert_int_equal(subprocess_run(argv, NULL, &res, NULL), 0);
    assert_int_equal(res.exit_code, -1);
    assert_int_equal(res.signal, SIGUSR1);
    subprocess_result_release(&res);
}

static void test_not_found(void **state)
{
    struct subprocess_result res = SUBPROCESS_RESULT_INIT;
    exa_error_t err = EXA_ERROR_INIT;
    const char *argv[] = {"exa-no-such-program-xyz", NULL};

    assert_int_equal(subprocess_run(argv, NULL, &res, &err), -1);
    assert_int_equal(err.code, EXA_ETRANSPORT);
    assert_string_equal(err.text, "cannot run 'exa-no-such-program-xyz': "
                                  "No such file or directory");
    subprocess_result_release(&res);
}

static void test_stdin_roundtrip(void **state)
{
    struct subprocess_result res = SUBPROCESS_RESULT_INIT;
    struct subprocess_opts o = {0};
    const char *argv[] = {"cat", NULL};
    size_t n = 1 << 20; /* larger than a pipe buffer both ways */
    char *data = malloc(n);

    for (size_t i = 0; i < n; i++)
        data[i] = (char)(i * 7 + 1);
    data[5] = '\0';
    o.stdin_data = data;
    o.stdin_len = n;
    assert_int_equal(subprocess_run(argv, &o, &res, NULL), 0);
    assert_int_equal(res.exit_code, 0);
    assert_int_equal(res.out.len, n);
    assert_memory_equal(res.out.buf, data, n);
    free(data);
    subprocess_result_release(&res);
}

static void test_stderr_and_env(void **state)
{
    struct subprocess_result res = SUBPROCESS_RESULT_INIT;
    struct subprocess_opts o = {0};
    const char *env[] = {"EXA_T_A=one two", "HOME=/nonexistent-home", NULL};
    const char *argv[] = {
        "sh", "-c", "printf '%s|%s' \"$EXA_T_A\" \"$HOME\"; echo oops >&2",
        NULL};

    o.env = env;
    assert_int_equal(subprocess_run(argv, &o, &res, NULL), 0);
    assert_string_equal(res.out.buf, "one two|/nonexistent-home");
    assert_string_equal(res.err.buf, "oops\n");
    subprocess_result_release(&res);
}

static void test_timeout_kills_group(void **state)
{
    struct subprocess_result res = SUBPROCESS_RESULT_INIT;
    struct subprocess_opts o = {0};
    exa_error_t err = EXA_ERROR_INIT;
    /* A shell with a grandchild: the whole group must go. */
    const char *argv[] = {"sh", "-c", "sleep 30; echo late", NULL};
    double t0 = subprocess_now();

    o.timeout_s = 0.3;
    assert_int_equal(subprocess_run(argv, &o, &res, &err), -1);
    assert_true(subprocess_now() - t0 < 5.0);
    assert_int_equal(res.timed_out, 1);
    assert_int_equal(err.code, EXA_ETIMEOUT);
    assert_string_equal(err.text, "'sh' timed out after 0.3 s");
    assert_int_equal(res.signal, SIGTERM);
    assert_int_equal(res.out.len, 0);
    subprocess_result_release(&res);
}

static void test_timeout_ignored_term_gets_kill(void **state)
{
    struct subprocess_result res = SUBPROCESS_RESULT_INIT;
    struct subprocess_opts o = {0};
    const char *argv[] = {"sh", "-c", "trap '' TERM; sleep 30", NULL};
    double t0 = subprocess_now();

    o.timeout_s = 0.2;
    assert_int_equal(subprocess_run(argv, &o, &res, NULL), -1);
    assert_true(subprocess_now() - t0 < 0.2 + SUBPROCESS_KILL_GRACE_S + 2.0);
    assert_int_equal(res.timed_out, 1);
    assert_int_equal(res.signal, SIGKILL);
    subprocess_result_release(&res);
}

static void test_output_cap(void **state)
{
    struct subprocess_result res = SUBPROCESS_RESULT_INIT;
    struct subprocess_opts o = {0};
    exa_error_t err = EXA_ERROR_INIT;
    const char *argv[] = {"yes", NULL};

    o.max_output = 100000;
    o.timeout_s = 20;
    assert_int_equal(subprocess_run(argv, &o, &res, &err), -1);
    assert_int_equal(res.truncated, 1);
    assert_int_equal(res.timed_out, 0);
    assert_int_equal(res.out.len, 100000);
    assert_int_equal(err.code, EXA_ETRANSPORT);
    assert_string_equal(err.text,
                        "'yes' wrote more than 100000 bytes on stdout");
    subprocess_result_release(&res);
}

/* A daemon left behind (as ssh's ControlPersist master is) holds the
 * pipes open: the run must end when the child exits, not when they close. */
static void test_background_daemon_holding_pipes(void **state)
{
    struct subprocess_result res = SUBPROCESS_RESULT_INIT;
    const char *argv[] = {"sh", "-c", "sleep 4 & echo hi; echo err >&2", NULL};
    double t0 = subprocess_now();

    assert_int_equal(subprocess_run(argv, NULL, &res, NULL), 0);
    assert_true(subprocess_now() - t0 < 3.0); /* the daemon lives 4 s */
    assert_int_equal(res.exit_code, 0);
    assert_string_equal(res.out.buf, "hi\n");
    assert_string_equal(res.err.buf, "err\n");
    subprocess_result_release(&res);
}

static void test_cwd(void **state)
{
    struct subprocess_result res = SUBPROCESS_RESULT_INIT;
    struct subprocess_opts o = {0};
    const char *argv[] = {"pwd", NULL};

    o.cwd = "/";
    assert_int_equal(subprocess_run(argv, &o, &res, NULL), 0);
    assert_string_equal(res.out.buf, "/\n");
    subprocess_result_release(&res);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_exit_codes),
        cmocka_unit_test(test_signal),
        cmocka_unit_test(test_not_found),
        cmocka_unit_test(test_stdin_roundtrip),
        cmocka_unit_test(test_stderr_and_env),
        cmocka_unit_test(test_timeout_kills_group),
        cmocka_unit_test(test_timeout_ignored_term_gets_kill),
        cmocka_unit_test(test_output_cap),
        cmocka_unit_test(test_background_daemon_holding_pipes),
        cmocka_unit_test(test_cwd),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
