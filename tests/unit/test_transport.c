/*
 * test_transport.c - local run/put/get, the ssh argv and host-key error
 * mapping (through a stand-in ssh program), fake rules, call log and
 * faults, and selection from the environment.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "libtransport/transport.h"
#include "libutil/xalloc.h"

static char tmpdir[64];

static char *path_in(const char *name)
{
    static char buf[256];
    snprintf(buf, sizeof(buf), "%s/%s", tmpdir, name);
    return buf;
}

static void write_file(const char *path, const char *data, int mode)
{
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(data, f);
    fclose(f);
    chmod(path, mode);
}

static void test_local_run_and_status(void **state)
{
    struct transport *t = transport_local_new();
    struct transport_result res = TRANSPORT_RESULT_INIT;
    exa_error_t err = EXA_ERROR_INIT;
    const char *argv[] = {"sh", "-c", "cat; echo bad >&2; exit 4", NULL};

    assert_int_equal(transport_run(t, argv, "in\n", 3, 0, &res, &err), 0);
    assert_int_equal(res.rc, 4);
    assert_string_equal(res.out.buf, "in\n");
    assert_int_equal(transport_run_ok(t, argv, "", 0, &res, &err), -1);
    assert_int_equal(err.code, EXA_ESCHED);
    assert_string_equal(err.text, "'sh' on 'localhost' exited 4: bad");
    transport_result_release(&res);
    transport_close(t);
}

static void test_local_timeout(void **state)
{
    struct transport *t = transport_local_new();
    struct transport_result res = TRANSPORT_RESULT_INIT;
    exa_error_t err = EXA_ERROR_INIT;
    const char *argv[] = {"sleep", "30", NULL};

    t->timeout_s = 0.2;
    assert_int_equal(transport_run(t, argv, NULL, 0, 0, &res, &err), -1);
    assert_int_equal(err.code, EXA_ETIMEOUT);
    assert_string_equal(err.text,
                        "'sleep' on 'localhost' timed out after 0.2 s");
    transport_result_release(&res);
    transport_close(t);
}

static void test_local_put_get(void **state)
{
    struct transport *t = transport_local_new();
    exa_error_t err = EXA_ERROR_INIT;
    char src[256], dst[256], back[256];
    char buf[64] = {0};
    struct stat st;
    FILE *f;

    snprintf(src, sizeof(src), "%s", path_in("src.sh"));
    snprintf(dst, sizeof(dst), "%s", path_in("a/b/run.sh"));
    snprintf(back, sizeof(back), "%s", path_in("back.sh"));
    write_file(src, "#!/bin/sh\necho hi\n", 0755);
    assert_int_equal(transport_put(t, src, dst, &err), 0);
    assert_int_equal(stat(dst, &st), 0);
    assert_int_equal(st.st_mode & 0777, 0700); /* private: owner bits only */
    {
        struct stat ds;
        assert_int_equal(stat(path_in("a/b"), &ds), 0);
        assert_int_equal(ds.st_mode & 0777, 0700); /* new parents 0700 */
    }
    assert_int_equal(transport_get(t, dst, back, &err), 0);
    f = fopen(back, "r");
    assert_non_null(f);
    assert_int_equal(fread(buf, 1, sizeof(buf) - 1, f), 18);
    fclose(f);
    assert_string_equal(buf, "#!/bin/sh\necho hi\n");
    assert_int_equal(transport_get(t, path_in("missing"), back, &err), -1);
    assert_int_equal(err.code, EXA_ENOTFOUND);
    /* same file: a no-op, not a truncation */
    assert_int_equal(transport_put(t, dst, dst, &err), 0);
    assert_int_equal(stat(dst, &st), 0);
    assert_int_equal(st.st_size, 18);
    transport_close(t);
}

/* Deferred fsync: a deferred put is complete at its name at once and
 * pending until the next command, which syncs it while its child runs;
 * transport_sync_pending then has nothing left and says 0. A pending
 * file that is gone by then fails the sync, naming it. */
static void test_local_deferred_sync(void **state)
{
    struct transport *t = transport_local_new();
    exa_error_t err = EXA_ERROR_INIT;
    struct transport_result res = TRANSPORT_RESULT_INIT;
    const char *argv[] = {"true", NULL};
    char src[256], dst[256], dst2[256];
    struct stat st;
    (void)state;

    snprintf(src, sizeof(src), "%s", path_in("d-src.sh"));
    snprintf(dst, sizeof(dst), "%s", path_in("d/run.sh"));
    snprintf(dst2, sizeof(dst2), "%s", path_in("d/payload.sh"));
    write_file(src, "#!/bin/sh\necho hi\n", 0755);
    transport_defer_sync(t, 1);
    assert_int_equal(transport_put(t, src, dst, &err), 0);
    assert_int_equal(transport_put(t, src, dst2, &err), 0);
    assert_int_equal(stat(dst, &st), 0);
    assert_int_equal(st.st_size, 18);
    assert_int_equal(t->sync_nr, 2);
    assert_int_equal(transport_run(t, argv, NULL, 0, 0, &res, &err), 0);
    assert_int_equal(t->sync_nr, 0); /* done while `true` ran */
    transport_defer_sync(t, 0);
    assert_int_equal(transport_sync_pending(t, &err), 0);
    /* not deferred: nothing pending */
    assert_int_equal(transport_put(t, src, dst, &err), 0);
    assert_int_equal(t->sync_nr, 0);
    /* a pending file removed before its sync */
    transport_defer_sync(t, 1);
    assert_int_equal(transport_put(t, src, dst2, &err), 0);
    assert_int_equal(unlink(dst2), 0);
    transport_defer_sync(t, 0);
    assert_int_equal(transport_sync_pending(t, &err), -1);
    assert_non_null(strstr(err.text, "payload.sh"));
    assert_int_equal(transport_sync_pending(t, &err), 0); /* reported once */
    transport_result_release(&res);
    transport_close(t);
}

/* Progress lines: one per further 10 %, or after 2 s without one; none
 * at the end (the summary's place); rate and ETA from the start. */
static void test_progress_lines(void **state)
{
    struct transport_progress p;
    char line[768];
    int n = 0;

    transport_progress_begin(&p, "put 'a' to 'b' on local", 100000000ULL, 10);
    /* 5 % after 1 s: neither a step nor 2 s */
    assert_int_equal(transport_progress_line(&p, 5000000, 11, line, 768), 0);
    /* 10 % after 1.5 s: a step */
    assert_int_equal(transport_progress_line(&p, 10000000, 11.5, line, 768), 1);
    assert_string_equal(line, "put 'a' to 'b' on local: 10.0 of 100.0 MB "
                              "(10%), 6.7 MB/s, ETA 14 s");
    /* still 10-19 %: only after 2 s */
    assert_int_equal(transport_progress_line(&p, 15000000, 13, line, 768), 0);
    assert_int_equal(transport_progress_line(&p, 16000000, 13.5, line, 768), 1);
    assert_non_null(strstr(line, "16.0 of 100.0 MB (16%)"));
    /* a jump over several steps is one line */
    assert_int_equal(transport_progress_line(&p, 55000000, 13.6, line, 768), 1);
    assert_int_equal(transport_progress_line(&p, 59000000, 13.7, line, 768), 0);
    /* the end is the summary's */
    assert_int_equal(transport_progress_line(&p, 100000000, 14, line, 768), 0);
    assert_int_equal(p.lines, 3);
    transport_progress_summary(&p, 14, line, sizeof(line));
    assert_string_equal(
        line, "put 'a' to 'b' on local: 100.0 MB in 4.0 s, 25.0 MB/s");
    /* 1 MB/s over 100 s of writes: a line every 2 s (the steps, at
     * 10 s, 20 s, ..., fall on them), none at 1 s, 3 s, ... */
    transport_progress_begin(&p, "x", 100000000ULL, 0);
    for (int i = 1; i < 100; i++)
        n += transport_progress_line(&p, (unsigned long long)i * 1000000, i,
                                     line, sizeof(line));
    assert_int_equal(n, 49);
    assert_int_equal(p.last_step, 9);
    (void)state;
}

/* A stand-in ssh that prints its argv, one per line, then the remote
 * command run through sh (as sshd would via the login shell). */
static struct transport *ssh_with(const char *script)
{
    struct ssh_config c = {0};
    exa_error_t err = EXA_ERROR_INIT;
    struct transport *t;
    char prog[256];

    snprintf(prog, sizeof(prog), "%s", path_in("fake-ssh"));
    write_file(prog, script, 0755);
    c.host = "login1";
    c.user = "alice";
    c.port = 2222;
    c.key = "/keys/id_ed25519";
    c.known_hosts = "/kh/known_hosts";
    c.control_dir = path_in("cm");
    c.ssh_program = prog;
    t = transport_ssh_new(&c, &err);
    assert_non_null(t);
    return t;
}

/* A put over ssh may take its command cap plus a second per MB: a 3 MB
 * copy that takes 1.5 s passes under a 1 s cap (it timed out at the cap
 * alone), and arrives whole. */
static void test_ssh_put_time_scales(void **state)
{
    struct transport *t = ssh_with("#!/bin/sh\nfor a; do last=$a; done\n"
                                   "sleep 1.5\nexec sh -c \"$last\"\n");
    exa_error_t err = EXA_ERROR_INIT;
    char src[256], dst[256];
    struct stat st;
    FILE *f;

    snprintf(src, sizeof(src), "%s", path_in("big.bin"));
    snprintf(dst, sizeof(dst), "%s", path_in("remote/big.bin"));
    f = fopen(src, "w");
    assert_non_null(f);
    for (int i = 0; i < 3 * 1000 * 1000; i++)
        fputc('a' + i % 26, f);
    fclose(f);
    t->timeout_s = 1;
    assert_int_equal(transport_put(t, src, dst, &err), 0);
    assert_int_equal(stat(dst, &st), 0);
    assert_int_equal(st.st_size, 3 * 1000 * 1000);
    assert_int_equal(st.st_mode & 0777, 0600);
    transport_close(t);
    (void)state;
}

static void test_ssh_argv_and_quoting(void **state)
{
    /* last argument is the remote command line: run it with sh */
    struct transport *t = ssh_with("#!/bin/sh\nfor a; do last=$a; done\n"
                                   "exec sh -c \"$last\"\n");
    struct transport_result res = TRANSPORT_RESULT_INIT;
    struct strvec base = STRVEC_INIT;
    exa_error_t err = EXA_ERROR_INIT;
    char marker[256];
    const char *argv[] = {"printf", "%s|", "a b",  "; touch MARK",
                          "$(id)",  "`x`", "it's", NULL};
    struct strbuf joined = STRBUF_INIT;

    snprintf(marker, sizeof(marker), "%s", path_in("MARK"));
    assert_int_equal(chdir(tmpdir), 0);
    assert_int_equal(transport_run(t, argv, NULL, 0, 5, &res, &err), 0);
    assert_int_equal(res.rc, 0);
    assert_string_equal(res.out.buf, "a b|; touch MARK|$(id)|`x`|it's|");
    assert_int_equal(access(marker, F_OK), -1);
    assert_string_equal(transport_describe(t), "ssh alice@login1:2222");

    transport_ssh_base_argv(t, &base);
    for (size_t i = 1; i < base.nr; i++) {
        strbuf_addstr(&joined, base.v[i]);
        strbuf_addch(&joined, ' ');
    }
    assert_non_null(
        strstr(joined.buf, "-o BatchMode=yes -o StrictHostKeyChecking=yes"));
    assert_non_null(
        strstr(joined.buf, "-oUserKnownHostsFile=/kh/known_hosts "));
    assert_non_null(strstr(joined.buf, "-o ControlMaster=auto "));
    assert_non_null(strstr(joined.buf, "/cm/"));
    assert_non_null(strstr(joined.buf, "-%C "));
    assert_non_null(strstr(joined.buf, "-o ControlPersist=60 "));
    assert_non_null(strstr(joined.buf, "-p 2222 -i /keys/id_ed25519 "));
    assert_true(ends_with(joined.buf, "-l alice -- login1 "));
    strbuf_release(&joined);
    strvec_clear(&base);
    transport_result_release(&res);
    transport_close(t);
}

/* The ControlPath argument of a transport's base argv (malloc'ed). */
static char *control_path_of(const char *known_hosts)
{
    struct ssh_config c = {0};
    exa_error_t err = EXA_ERROR_INIT;
    struct strvec base = STRVEC_INIT;
    struct transport *t;
    char *cp = NULL;

    c.host = "login1";
    c.port = 22;
    c.known_hosts = known_hosts;
    c.control_dir = path_in("cm");
    c.ssh_program = "/bin/false";
    t = transport_ssh_new(&c, &err);
    assert_non_null(t);
    transport_ssh_base_argv(t, &base);
    for (size_t i = 0; i < base.nr; i++)
        if (starts_with(base.v[i], "-oControlPath="))
            cp = xstrdup(base.v[i]);
    assert_non_null(cp);
    strvec_clear(&base);
    transport_close(t);
    return cp;
}

static void test_ssh_master_follows_pinned_key(void **state)
{
    /* A master connection verified against one pinned host key must not
     * serve commands after the pin changed: the socket name changes. */
    char kh[256];
    char *a, *b, *c;

    snprintf(kh, sizeof(kh), "%s", path_in("pinned_known_hosts"));
    write_file(kh, "[login1]:22 ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIA1\n",
               0600);
    a = control_path_of(kh);
    b = control_path_of(kh);
    assert_string_equal(a, b);
    write_file(kh, "[login1]:22 ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIB2\n",
               0600);
    c = control_path_of(kh);
    assert_string_not_equal(a, c);
    free(a);
    free(b);
    free(c);
}

static void test_ssh_host_key_changed(void **state)
{
    struct transport *t = ssh_with(
        "#!/bin/sh\n"
        "echo '@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@' "
        ">&2\n"
        "echo '@    WARNING: REMOTE HOST IDENTIFICATION HAS CHANGED!     @' "
        ">&2\n"
        "echo 'Host key verification failed.' >&2\nexit 255\n");
    struct transport_result res = TRANSPORT_RESULT_INIT;
    exa_error_t err = EXA_ERROR_INIT;
    const char *argv[] = {"squeue", NULL};

    assert_int_equal(transport_run(t, argv, NULL, 0, 5, &res, &err), -1);
    assert_int_equal(err.code, EXA_ETRANSPORT);
    assert_string_equal(err.text, "host key for 'login1' changed: refusing to "
                                  "connect (check /kh/known_hosts)");
    transport_result_release(&res);
    transport_close(t);
}

static void test_ssh_host_key_unknown(void **state)
{
    struct transport *t = ssh_with(
        "#!/bin/sh\n"
        "echo 'No ED25519 host key is known for [127.0.0.1]:2222 and you have "
        "requested strict checking.' >&2\n"
        "echo 'Host key verification failed.' >&2\nexit 255\n");
    struct transport_result res = TRANSPORT_RESULT_INIT;
    exa_error_t err = EXA_ERROR_INIT;
    const char *argv[] = {"squeue", NULL};

    assert_int_equal(transport_run(t, argv, NULL, 0, 5, &res, &err), -1);
    assert_string_equal(err.text, "host key for 'login1' unknown: not in "
                                  "/kh/known_hosts (pin it first)");
    transport_result_release(&res);
    transport_close(t);
}

static void test_ssh_other_failure(void **state)
{
    struct transport *t = ssh_with("#!/bin/sh\necho 'ssh: connect to host "
                                   "login1 port 2222: Connection refused' >&2\n"
                                   "exit 255\n");
    struct transport_result res = TRANSPORT_RESULT_INIT;
    exa_error_t err = EXA_ERROR_INIT;
    const char *argv[] = {"squeue", NULL};

    assert_int_equal(transport_run(t, argv, NULL, 0, 5, &res, &err), -1);
    assert_string_equal(err.text,
                        "ssh to 'login1' failed: ssh: connect to host "
                        "login1 port 2222: Connection refused");
    transport_result_release(&res);
    transport_close(t);
}

/* A CRLF line end of ssh's message is not kept (redteam-s3 15). */
static void test_ssh_failure_crlf(void **state)
{
    struct transport *t = ssh_with("#!/bin/sh\nprintf 'ssh: connect to host "
                                   "login1 port 22: Connection timed "
                                   "out\\r\\nmore\\r\\n' >&2\nexit 255\n");
    struct transport_result res = TRANSPORT_RESULT_INIT;
    exa_error_t err = EXA_ERROR_INIT;
    const char *argv[] = {"squeue", NULL};
    (void)state;
    assert_int_equal(transport_run(t, argv, NULL, 0, 5, &res, &err), -1);
    assert_string_equal(err.text,
                        "ssh to 'login1' failed: ssh: connect to host "
                        "login1 port 22: Connection timed out");
    transport_result_release(&res);
    transport_close(t);
}

/* Exit 255 is ambiguous: ssh's own failure or the remote command's. The
 * ControlMaster tells them apart (`ssh -O check`): alive means the
 * connection worked, so 255 is the command's status (a result, and for
 * transport_run_ok the scheduler's failure with its own message). */
static void test_ssh_remote_255(void **state)
{
    static const char *const script =
        "#!/bin/sh\n"
        "for a; do [ \"$a\" = check ] && { [ -e \"$0.master\" ] && "
        "{ echo 'Master running (pid=4242)' >&2; exit 0; }; "
        "echo 'Control socket connect(/cm/x): No such file or directory' "
        ">&2; exit 255; }; done\n"
        "echo \"$*\" >> \"$0.calls\"\n"
        "echo 'sbatch: error: Batch job submission failed: Invalid account' "
        ">&2\nexit 255\n";
    struct transport *t = ssh_with(script);
    struct transport_result res = TRANSPORT_RESULT_INIT;
    exa_error_t err = EXA_ERROR_INIT;
    const char *argv[] = {"sbatch", "--parsable", "run.sh", NULL};
    char *master = xstrfmt("%s.master", path_in("fake-ssh"));

    write_file(master, "", 0644);
    assert_int_equal(transport_run(t, argv, NULL, 0, 5, &res, &err), 0);
    assert_int_equal(res.rc, 255);
    transport_result_release(&res);
    assert_int_equal(transport_run_ok(t, argv, NULL, 0, &res, &err), -1);
    assert_int_equal(err.code, EXA_ESCHED);
    assert_int_equal(exa_errc_exit(err.code), 5);
    assert_string_equal(err.text, "'sbatch' on 'login1' exited 255: sbatch: "
                                  "error: Batch job submission failed: "
                                  "Invalid account");
    transport_result_release(&res);

    /* no master left: ssh itself failed */
    assert_int_equal(unlink(master), 0);
    err = (exa_error_t)EXA_ERROR_INIT;
    assert_int_equal(transport_run_ok(t, argv, NULL, 0, &res, &err), -1);
    assert_int_equal(err.code, EXA_ETRANSPORT);
    assert_int_equal(exa_errc_exit(err.code), 4);
    assert_string_equal(err.text, "ssh to 'login1' failed: sbatch: error: "
                                  "Batch job submission failed: Invalid "
                                  "account");
    transport_result_release(&res);
    free(master);
    transport_close(t);
}

/* A command past its cap is a transport failure: exit 4. */
static void test_timeout_exit_code(void **state)
{
    assert_int_equal(exa_errc_exit(EXA_ETIMEOUT), 4);
    assert_int_equal(exa_errc_exit(EXA_ETRANSPORT), 4);
    assert_int_equal(exa_errc_exit(EXA_ESCHED), 5);
}

static void test_fake_rules_and_faults(void **state)
{
    struct transport *t = transport_fake_new();
    struct transport_result res = TRANSPORT_RESULT_INIT;
    exa_error_t err = EXA_ERROR_INIT;
    const char *sq[] = {"squeue", "-h", "-j", "1,2", NULL};
    const char *sb[] = {"sbatch", "--parsable", "run.sh", NULL};

    transport_fake_add(t, "squeue *", "1|RUNNING\n", "", 0, 0, 1);
    transport_fake_add(t, "squeue *", "", "", 0, 0, 0);
    transport_fake_add(t, "sbatch *", "42\n", "", 0, 0, 0);
    assert_int_equal(transport_run(t, sq, NULL, 0, 0, &res, &err), 0);
    assert_string_equal(res.out.buf, "1|RUNNING\n");
    assert_int_equal(transport_run(t, sq, NULL, 0, 0, &res, &err), 0);
    assert_string_equal(res.out.buf, "");

    transport_fake_fail_nth(t, 3);
    assert_int_equal(transport_run(t, sb, NULL, 0, 0, &res, &err), -1);
    assert_string_equal(err.text, "connection to 'fake' refused");
    transport_fake_drop_nth(t, 4);
    assert_int_equal(transport_run(t, sb, NULL, 0, 0, &res, &err), -1);
    assert_string_equal(err.text,
                        "connection to 'fake' lost before 'sbatch' answered");
    assert_int_equal(transport_run(t, sb, NULL, 0, 0, &res, &err), 0);
    assert_string_equal(res.out.buf, "42\n");

    assert_int_equal(transport_fake_ncalls(t), 5);
    assert_int_equal(transport_fake_count(t, "squeue *"), 2);
    assert_int_equal(transport_fake_count(t, "sbatch *"), 3);
    assert_string_equal(transport_fake_call(t, 0), "squeue -h -j 1,2");
    {
        const char *none[] = {"scancel", "9", NULL};
        assert_int_equal(transport_run(t, none, NULL, 0, 0, &res, &err), 0);
        assert_int_equal(res.rc, 127);
        assert_string_equal(res.err.buf, "fake: no rule for 'scancel 9'\n");
    }
    transport_result_release(&res);
    transport_close(t);
}

static void test_fake_delay_timeout(void **state)
{
    struct transport *t = transport_fake_new();
    struct transport_result res = TRANSPORT_RESULT_INIT;
    exa_error_t err = EXA_ERROR_INIT;
    const char *sq[] = {"squeue", NULL};

    transport_fake_add(t, "squeue", "x", "", 0, 60, 0);
    assert_int_equal(transport_run(t, sq, NULL, 0, 0.05, &res, &err), -1);
    assert_int_equal(err.code, EXA_ETIMEOUT);
    assert_string_equal(err.text, "'squeue' on 'fake' timed out after 0.05 s");
    transport_result_release(&res);
    transport_close(t);
}

static void test_from_env(void **state)
{
    exa_error_t err = EXA_ERROR_INIT;
    struct transport *t;

    unsetenv("EXAMLOPS_HPC_SSH_HOST");
    unsetenv("EXAMLOPS_HPC_TRANSPORT");
    setenv("EXAMLOPS_SLURM_CMD_TIMEOUT", "7", 1);
    t = transport_from_env(&err);
    assert_non_null(t);
    assert_string_equal(t->ops->kind, "local");
    assert_true(t->timeout_s == 7.0);
    transport_close(t);

    setenv("EXAMLOPS_HPC_TRANSPORT", "ssh", 1);
    assert_null(transport_from_env(&err));
    assert_int_equal(err.code, EXA_ECONFIG);
    assert_string_equal(err.text, "EXAMLOPS_HPC_TRANSPORT is 'ssh' but "
                                  "EXAMLOPS_HPC_SSH_HOST is not set");
    setenv("EXAMLOPS_HPC_SSH_HOST", "127.0.0.1", 1);
    setenv("EXAMLOPS_HPC_SSH_PORT", "22x", 1);
    assert_null(transport_from_env(&err));
    assert_string_equal(
        err.text, "EXAMLOPS_HPC_SSH_PORT must be a port number, not '22x'");
    setenv("EXAMLOPS_HPC_SSH_PORT", "2222", 1);
    setenv("EXAMLOPS_HPC_SSH_USER", "bob", 1);
    t = transport_from_env(&err);
    assert_non_null(t);
    assert_string_equal(transport_describe(t), "ssh bob@127.0.0.1:2222");
    transport_close(t);
    setenv("EXAMLOPS_SLURM_CMD_TIMEOUT", "-1", 1);
    assert_null(transport_from_env(&err));
    assert_string_equal(err.text,
                        "EXAMLOPS_SLURM_CMD_TIMEOUT must be a positive "
                        "number of seconds, not '-1'");
    unsetenv("EXAMLOPS_SLURM_CMD_TIMEOUT");
    unsetenv("EXAMLOPS_HPC_TRANSPORT");
    unsetenv("EXAMLOPS_HPC_SSH_HOST");
    unsetenv("EXAMLOPS_HPC_SSH_PORT");
    unsetenv("EXAMLOPS_HPC_SSH_USER");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_local_run_and_status),
        cmocka_unit_test(test_local_timeout),
        cmocka_unit_test(test_local_put_get),
        cmocka_unit_test(test_local_deferred_sync),
        cmocka_unit_test(test_progress_lines),
        cmocka_unit_test(test_ssh_argv_and_quoting),
        cmocka_unit_test(test_ssh_put_time_scales),
        cmocka_unit_test(test_ssh_master_follows_pinned_key),
        cmocka_unit_test(test_ssh_host_key_changed),
        cmocka_unit_test(test_ssh_host_key_unknown),
        cmocka_unit_test(test_ssh_other_failure),
        cmocka_unit_test(test_ssh_failure_crlf),
        cmocka_unit_test(test_ssh_remote_255),
        cmocka_unit_test(test_timeout_exit_code),
        cmocka_unit_test(test_fake_rules_and_faults),
        cmocka_unit_test(test_fake_delay_timeout),
        cmocka_unit_test(test_from_env),
    };
    char cwd[4096];
    int rc;

    snprintf(tmpdir, sizeof(tmpdir), "/tmp/exa-tt-XXXXXX");
    assert_non_null(mkdtemp(tmpdir));
    if (!getcwd(cwd, sizeof(cwd)))
        return 1;
    rc = cmocka_run_group_tests(tests, NULL, NULL);
    if (chdir(cwd) == 0) {
        char cmd[128];
        snprintf(cmd, sizeof(cmd), "rm -rf %s", tmpdir);
        if (system(cmd) != 0)
            rc = rc ? rc : 1;
    }
    return rc;
}
