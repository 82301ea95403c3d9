/*
 * test_store_locks.c - a second store_open() of platform.db in one
 * process must not drop the POSIX locks of the first connection
 * (close(2) of any descriptor of the file releases all of the process's
 * fcntl locks on it). If it did, another process opening and closing the
 * database would think itself the last user, checkpoint and delete the
 * WAL, and the first connection's later commits would never reach the
 * file (exa serve: one connection per thread, the CLI next to it).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>

#include "libstore/store.h"
#include "libutil/strbuf.h"
#include "libutil/xalloc.h"
#include "testutil.h"

/* The count of rows of t in path, read by a fresh process (this binary
 * run again: a forked child would share this process's SQLite state);
 * 255 on error. */
static int count_rows(const char *path)
{
    store_t *st = store_open(path, NULL);
    sqlite3_stmt *s;
    int n = 255;
    if (st && (s = store_prepare(st, "SELECT count(*) FROM t", NULL))) {
        if (sqlite3_step(s) == SQLITE_ROW)
            n = sqlite3_column_int(s, 0);
        sqlite3_finalize(s);
    }
    store_close(st);
    return n;
}

static int child_count(const char *path)
{
    pid_t pid = fork();
    int status = 0;
    assert_true(pid >= 0);
    if (pid == 0) {
        execl("/proc/self/exe", "test_store_locks", "--count", path,
              (char *)NULL);
        _exit(254);
    }
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFEXITED(status));
    return WEXITSTATUS(status);
}

static void test_second_open_keeps_locks(void **state)
{
    char *dir = tu_mkdtemp(), *path = xstrfmt("%s/platform.db", dir);
    store_t *a, *b;
    (void)state;
    a = store_open(path, NULL);
    assert_non_null(a);
    assert_int_equal(store_exec(a, "CREATE TABLE t (x INTEGER)", NULL), 0);
    assert_int_equal(store_exec(a, "INSERT INTO t VALUES (1)", NULL), 0);
    /* a second connection of the same process, as a server thread's */
    b = store_open(path, NULL);
    assert_non_null(b);
    /* another process comes and goes (the CLI) */
    assert_int_equal(child_count(path), 1);
    /* the first connection keeps writing: the next process must see it */
    assert_int_equal(store_exec(a, "INSERT INTO t VALUES (2)", NULL), 0);
    assert_int_equal(store_exec(b, "INSERT INTO t VALUES (3)", NULL), 0);
    assert_int_equal(child_count(path), 3);
    store_close(b);
    store_close(a);
    assert_int_equal(child_count(path), 3);
    tu_rmtree(dir);
    free(path);
    free(dir);
}

int main(int argc, char **argv)
{
    if (argc == 3 && !strcmp(argv[1], "--count"))
        return count_rows(argv[2]);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_second_open_keeps_locks),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
