/*
 * test_atomic.c - atomic file write and directory publish: the new content
 * appears whole, and every failure leaves the old state and no temporary
 * file behind.
 */
#include <errno.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "libutil/atomic.h"
#include "libutil/strbuf.h"
#include "libutil/xalloc.h"
#include "testutil.h"

static void test_write_new_and_replace(void **state)
{
    char *dir = tu_mkdtemp();
    char *path = xstrfmt("%s/f.json", dir);
    exa_error_t err = EXA_ERROR_INIT;
    struct stat st;
    char *got;

    assert_int_equal(atomic_write_file(path, "first\n", 6, 0640, &err), 0);
    got = tu_read_file(path, NULL);
    assert_string_equal(got, "first\n");
    free(got);
    assert_int_equal(stat(path, &st), 0);
    assert_int_equal(st.st_mode & 0777, 0640);

    assert_int_equal(atomic_write_file(path, "second", 6, 0600, &err), 0);
    got = tu_read_file(path, NULL);
    assert_string_equal(got, "second");
    free(got);
    /* Only the target itself: no temporary left over. */
    assert_int_equal(tu_count_entries(dir), 1);
    tu_rmtree(dir);
    free(path);
    free(dir);
}

static void test_missing_dir_fails(void **state)
{
    char *dir = tu_mkdtemp();
    char *path = xstrfmt("%s/nope/f", dir);
    exa_error_t err = EXA_ERROR_INIT;
    assert_int_equal(atomic_write_file(path, "x", 1, 0600, &err), -1);
    assert_int_equal(err.code, EXA_ECONFIG);
    assert_non_null(strstr(err.text, path));
    assert_non_null(strstr(err.text, "No such file or directory"));
    tu_rmtree(dir);
    free(path);
    free(dir);
}

/* A read-only directory refuses the temp file; the old file survives.
 * Root ignores permission bits, so as root the write is attempted from a
 * child that dropped to uid/gid 65534 (nobody). */
static void test_readonly_dir_keeps_old(void **state)
{
    char *dir = tu_mkdtemp();
    char *path = xstrfmt("%s/f", dir);
    char *got;
    int status;
    pid_t pid;

    tu_write_file(path, "old");
    assert_int_equal(chmod(dir, 0555), 0);
    fflush(NULL);
    pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        exa_error_t err = EXA_ERROR_INIT;
        if (geteuid() == 0 && (setgid(65534) < 0 || setuid(65534) < 0))
            _exit(10);
        if (atomic_write_file(path, "new", 3, 0600, &err) != -1)
            _exit(11);
        if (err.code != EXA_ECONFIG || !strstr(err.text, "Permission denied"))
            _exit(12);
        _exit(0);
    }
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFEXITED(status));
    assert_int_equal(WEXITSTATUS(status), 0);
    got = tu_read_file(path, NULL);
    assert_string_equal(got, "old");
    free(got);
    assert_int_equal(tu_count_entries(dir), 1);
    chmod(dir, 0700);
    tu_rmtree(dir);
    free(path);
    free(dir);
}

/* A write that fails half-way (file size limit: EFBIG, works as root too)
 * leaves the old content and no temporary file. */
static void test_short_write_keeps_old(void **state)
{
    char *dir = tu_mkdtemp();
    char *path = xstrfmt("%s/f", dir);
    exa_error_t err = EXA_ERROR_INIT;
    struct rlimit old, lim;
    char big[4096];
    char *got;

    tu_write_file(path, "old content");
    memset(big, 'x', sizeof(big));
    signal(SIGXFSZ, SIG_IGN);
    assert_int_equal(getrlimit(RLIMIT_FSIZE, &old), 0);
    lim = old;
    lim.rlim_cur = 100;
    assert_int_equal(setrlimit(RLIMIT_FSIZE, &lim), 0);
    assert_int_equal(atomic_write_file(path, big, sizeof(big), 0600, &err), -1);
    assert_int_equal(setrlimit(RLIMIT_FSIZE, &old), 0);
    assert_int_equal(err.code, EXA_ECONFIG);
    assert_non_null(strstr(err.text, "File too large"));
    got = tu_read_file(path, NULL);
    assert_string_equal(got, "old content");
    free(got);
    assert_int_equal(tu_count_entries(dir), 1);
    tu_rmtree(dir);
    free(path);
    free(dir);
}

static void test_dir_publish(void **state)
{
    char *dir = tu_mkdtemp();
    char *final = xstrfmt("%s/models/JPCP/1", dir);
    char *parent = xstrfmt("%s/models/JPCP", dir);
    exa_error_t err = EXA_ERROR_INIT;
    char *tmp, *f, *got;
    struct stat st;

    tmp = atomic_dir_begin(final, &err);
    assert_non_null(tmp);
    assert_non_null(strstr(tmp, "/models/JPCP/1.tmp-"));
    /* Not visible under its final name while being built. */
    assert_int_equal(stat(final, &st), -1);
    f = xstrfmt("%s/model.json", tmp);
    tu_write_file(f, "{}");
    free(f);
    assert_int_equal(atomic_dir_commit(tmp, final, 0755, &err), 0);
    assert_int_equal(stat(final, &st), 0);
    assert_int_equal(st.st_mode & 0777, 0755);
    f = xstrfmt("%s/model.json", final);
    got = tu_read_file(f, NULL);
    assert_string_equal(got, "{}");
    free(got);
    free(f);
    assert_int_equal(tu_count_entries(parent), 1);
    free(tmp);

    /* A second publish under the same name must not replace the first. */
    tmp = atomic_dir_begin(final, &err);
    assert_non_null(tmp);
    f = xstrfmt("%s/model.json", tmp);
    tu_write_file(f, "{\"second\":1}");
    free(f);
    assert_int_equal(atomic_dir_commit(tmp, final, 0755, &err), -1);
    assert_non_null(strstr(err.text, "exists"));
    atomic_dir_abort(tmp);
    assert_int_equal(tu_count_entries(parent), 1);
    f = xstrfmt("%s/model.json", final);
    got = tu_read_file(f, NULL);
    assert_string_equal(got, "{}");
    free(got);
    free(f);
    free(tmp);
    tu_rmtree(dir);
    free(final);
    free(parent);
    free(dir);
}

static void test_mkdir_p(void **state)
{
    char *dir = tu_mkdtemp();
    char *deep = xstrfmt("%s/a/b/c", dir);
    char *file = xstrfmt("%s/file", dir);
    char *under = xstrfmt("%s/file/x", dir);
    exa_error_t err = EXA_ERROR_INIT;
    struct stat st;
    assert_int_equal(mkdir_p(deep, 0700, &err), 0);
    assert_int_equal(stat(deep, &st), 0);
    assert_true(S_ISDIR(st.st_mode));
    assert_int_equal(mkdir_p(deep, 0700, &err), 0);
    tu_write_file(file, "x");
    assert_int_equal(mkdir_p(under, 0700, &err), -1);
    assert_int_equal(err.code, EXA_ECONFIG);
    tu_rmtree(dir);
    free(deep);
    free(file);
    free(under);
    free(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_write_new_and_replace),
        cmocka_unit_test(test_missing_dir_fails),
        cmocka_unit_test(test_readonly_dir_keeps_old),
        cmocka_unit_test(test_short_write_keeps_old),
        cmocka_unit_test(test_dir_publish),
        cmocka_unit_test(test_mkdir_p),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
