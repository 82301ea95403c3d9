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
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>

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

/*
 * Exit latency semantics, for both exit notifications. The child closes
 * its stdout and stderr and keeps running: the run has no pipe left to
 * wake it and must still see the exit (and its status) when it comes,
 * through the pidfd or the SIGCHLD pipe, not through a periodic tick: the
 * number of poll() calls stays a handful whatever the child's run time
 * (a 20 ms tick over 0.5 s would be 25).
 */
static void check_exit_after_close(int pidfd)
{
    struct subprocess_result res = SUBPROCESS_RESULT_INIT;
    const char *argv[] = {"sh", "-c",
                          "echo early; exec >&- 2>&-; sleep 0.5; exit 7", NULL};

    subprocess_use_pidfd(pidfd);
    assert_int_equal(subprocess_run(argv, NULL, &res, NULL), 0);
    subprocess_use_pidfd(1);
    assert_int_equal(res.exit_code, 7);
    assert_string_equal(res.out.buf, "early\n");
    assert_true(res.wakeups >= 1);
    assert_true(res.wakeups <= 6);
    subprocess_result_release(&res);
}

static void test_exit_seen_after_pipes_close_pidfd(void **state)
{
    check_exit_after_close(1);
}

static void test_exit_seen_after_pipes_close_sigchld(void **state)
{
    check_exit_after_close(0);
}

/*
 * The run ends at the child's exit although a grandchild still holds
 * both pipes: proven by the grandchild being alive when the run returns
 * (it sleeps 30 s; the test then ends it), for both notifications.
 */
static void check_daemon_alive_at_return(int pidfd)
{
    struct subprocess_result res = SUBPROCESS_RESULT_INIT;
    const char *argv[] = {"sh", "-c", "sleep 30 & echo $!; exit 4", NULL};
    long daemon;

    subprocess_use_pidfd(pidfd);
    assert_int_equal(subprocess_run(argv, NULL, &res, NULL), 0);
    subprocess_use_pidfd(1);
    assert_int_equal(res.exit_code, 4);
    daemon = strtol(res.out.buf, NULL, 10);
    assert_true(daemon > 1);
    assert_int_equal(kill((pid_t)daemon, 0), 0);
    kill((pid_t)daemon, SIGKILL);
    assert_true(res.wakeups <= 6);
    subprocess_result_release(&res);
}

static void test_daemon_alive_at_return_pidfd(void **state)
{
    check_daemon_alive_at_return(1);
}

static void test_daemon_alive_at_return_sigchld(void **state)
{
    check_daemon_alive_at_return(0);
}

/* The fallback keeps the caps: the timeout and the output cap still end
 * the child, and stdin still round-trips. */
static void test_sigchld_fallback_caps(void **state)
{
    struct subprocess_result res = SUBPROCESS_RESULT_INIT;
    struct subprocess_opts o = {0};
    exa_error_t err = EXA_ERROR_INIT;
    const char *slow[] = {"sh", "-c", "sleep 30", NULL};
    const char *yes[] = {"yes", NULL};
    const char *cat[] = {"cat", NULL};

    subprocess_use_pidfd(0);
    o.timeout_s = 0.2;
    assert_int_equal(subprocess_run(slow, &o, &res, &err), -1);
    assert_int_equal(res.timed_out, 1);
    assert_int_equal(err.code, EXA_ETIMEOUT);
    o.timeout_s = 20;
    o.max_output = 5000;
    assert_int_equal(subprocess_run(yes, &o, &res, &err), -1);
    assert_int_equal(res.truncated, 1);
    assert_int_equal(res.out.len, 5000);
    o.max_output = 0;
    o.stdin_data = "abc";
    o.stdin_len = 3;
    assert_int_equal(subprocess_run(cat, &o, &res, &err), 0);
    assert_string_equal(res.out.buf, "abc");
    subprocess_use_pidfd(1);
    subprocess_result_release(&res);
}

/* Many short runs in a row (as a scheduler loop makes): each sees its
 * own exit status, none waits on another's wake-up. */
static void test_many_short_runs(void **state)
{
    struct subprocess_result res = SUBPROCESS_RESULT_INIT;
    const char *argv[] = {"sh", "-c", "exit $1", "sh", "0", NULL};
    char code[8];

    for (int mode = 0; mode < 2; mode++) {
        subprocess_use_pidfd(mode);
        for (int i = 0; i < 50; i++) {
            snprintf(code, sizeof(code), "%d", i % 5);
            argv[4] = code;
            assert_int_equal(subprocess_run(argv, NULL, &res, NULL), 0);
            assert_int_equal(res.exit_code, i % 5);
        }
    }
    subprocess_use_pidfd(1);
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

/* An executable without "#!" (a site's wrapper for a Slurm command) runs
 * under /bin/sh, as execvp ran it: by path and found on PATH, with its
 * arguments. */
static void test_script_without_shebang(void **state)
{
    struct subprocess_result res = SUBPROCESS_RESULT_INIT;
    char dir[] = "/tmp/exa-t-noshebang-XXXXXX", path[64], *old, *newpath;
    const char *byname[] = {"exa-t-wrapper", "a b", NULL};
    const char *bypath[] = {path, "c", NULL};
    FILE *f;
    (void)state;
    assert_non_null(mkdtemp(dir));
    snprintf(path, sizeof(path), "%s/exa-t-wrapper", dir);
    f = fopen(path, "w");
    assert_non_null(f);
    fputs("echo \"wrapped:$1\"\n", f);
    fclose(f);
    assert_int_equal(chmod(path, 0755), 0);
    assert_int_equal(subprocess_run(bypath, NULL, &res, NULL), 0);
    assert_int_equal(res.exit_code, 0);
    assert_string_equal(res.out.buf, "wrapped:c\n");
    old = getenv("PATH") ? strdup(getenv("PATH")) : NULL;
    {
        size_t nl = strlen(dir) + (old ? strlen(old) : 0) + 2;
        newpath = malloc(nl);
        snprintf(newpath, nl, "%s:%s", dir, old ? old : "");
    }
    setenv("PATH", newpath, 1);
    assert_int_equal(subprocess_run(byname, NULL, &res, NULL), 0);
    if (old)
        setenv("PATH", old, 1);
    assert_int_equal(res.exit_code, 0);
    assert_string_equal(res.out.buf, "wrapped:a b\n");
    unlink(path);
    rmdir(dir);
    free(old);
    free(newpath);
    subprocess_result_release(&res);
}

/* A missing working directory is a start failure, named like a missing
 * program (posix_spawnp reports the chdir's errno). */
static void test_cwd_missing(void **state)
{
    struct subprocess_result res = SUBPROCESS_RESULT_INIT;
    struct subprocess_opts o = {0};
    exa_error_t err = EXA_ERROR_INIT;
    const char *argv[] = {"pwd", NULL};

    o.cwd = "/nonexistent-exa-dir/x";
    assert_int_equal(subprocess_run(argv, &o, &res, &err), -1);
    assert_int_equal(err.code, EXA_ETRANSPORT);
    assert_string_equal(err.text,
                        "cannot run 'pwd': No such file or directory");
    subprocess_result_release(&res);
}

/* Field NAME of /proc/self/status in text ("SigBlk", ...): its value. */
static unsigned long long status_hex(const char *text, const char *name)
{
    char key[32];
    const char *p;
    snprintf(key, sizeof(key), "\n%s:", name);
    p = strstr(text, key);
    assert_non_null(p);
    return strtoull(p + strlen(key), NULL, 16);
}

/* What the child starts with, whatever the parent's state: its own
 * process group, no signal blocked, SIGPIPE not ignored (the parent
 * ignores it during a run; a test ignores it and blocks SIGUSR1 too), and
 * no descriptor of the run's own (its pipes are close-on-exec). */
static void test_child_state(void **state)
{
    struct subprocess_result r1 = SUBPROCESS_RESULT_INIT,
                             r2 = SUBPROCESS_RESULT_INIT,
                             r3 = SUBPROCESS_RESULT_INIT;
    const char *st[] = {"cat", "/proc/self/status", NULL};
    const char *stat[] = {"cat", "/proc/self/stat", NULL};
    const char *fds[] = {"ls", "/proc/self/fd", NULL};
    sigset_t usr1, old;
    void (*prev)(int);
    long pid, pgrp;
    char comm[64], st_c;
    int rc1, rc2, rc3, n = 0, inherited = 0;

    /* the three runs under the odd state, which is put back before any
     * assertion can leave it to the tests after this one */
    prev = signal(SIGPIPE, SIG_IGN);
    sigemptyset(&usr1);
    sigaddset(&usr1, SIGUSR1);
    sigprocmask(SIG_BLOCK, &usr1, &old);
    rc1 = subprocess_run(st, NULL, &r1, NULL);
    rc2 = subprocess_run(stat, NULL, &r2, NULL);
    rc3 = subprocess_run(fds, NULL, &r3, NULL);
    for (int fd = 3; fd < 1024; fd++) {
        int fl = fcntl(fd, F_GETFD);
        inherited += fl >= 0 && !(fl & FD_CLOEXEC);
    }
    sigprocmask(SIG_SETMASK, &old, NULL);
    signal(SIGPIPE, prev);

    assert_int_equal(rc1, 0);
    assert_int_equal(r1.exit_code, 0);
    assert_int_equal(status_hex(r1.out.buf, "SigBlk"), 0);
    assert_int_equal(status_hex(r1.out.buf, "SigIgn") & (1ull << (SIGPIPE - 1)),
                     0);
    assert_int_equal(rc2, 0);
    assert_int_equal(
        sscanf(r2.out.buf, "%ld %63s %c %*d %ld", &pid, comm, &st_c, &pgrp), 4);
    assert_int_equal(pid, pgrp);
    assert_int_not_equal(pgrp, (long)getpgrp());
    /* 0, 1 and 2, what this test's own parent passed without
     * close-on-exec, and ls's handle on the directory: none of the run's
     * pipe ends */
    assert_int_equal(rc3, 0);
    for (const char *p = r3.out.buf; *p; p++)
        n += *p == '\n';
    assert_int_equal(n, 3 + inherited + 1);
    subprocess_result_release(&r1);
    subprocess_result_release(&r2);
    subprocess_result_release(&r3);
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
        cmocka_unit_test(test_cwd_missing),
        cmocka_unit_test(test_script_without_shebang),
        cmocka_unit_test(test_child_state),
        cmocka_unit_test(test_exit_seen_after_pipes_close_pidfd),
        cmocka_unit_test(test_exit_seen_after_pipes_close_sigchld),
        cmocka_unit_test(test_daemon_alive_at_return_pidfd),
        cmocka_unit_test(test_daemon_alive_at_return_sigchld),
        cmocka_unit_test(test_sigchld_fallback_caps),
        cmocka_unit_test(test_many_short_runs),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
