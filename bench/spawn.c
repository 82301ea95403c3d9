/*
 * bench/spawn.c - what starting a command costs exa as its own memory
 * grows (issue 14 item 5; run by bench/spawn.sh).
 *
 * For each resident size in argv[1..] (MiB; touched, so every page is
 * mapped), runs `true` N times (env SPAWN_N, default 200) three ways,
 * interleaved in rounds of 10:
 *   subprocess_run   exa's path (libutil/subprocess.c: posix_spawnp, pipes,
 *                    poll until the exit)
 *   posix_spawnp     the floor: posix_spawnp(3) + waitpid, nothing else
 *   fork+execvp      how subprocess_run started children before: fork(2)
 *                    copies the page tables of every resident page
 * and prints the mean per run of each and the ratios to the floor.
 */
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "libutil/subprocess.h"

extern char **environ;

static char *const true_argv[] = {"true", NULL};

static int run_exa(void)
{
    struct subprocess_result r = SUBPROCESS_RESULT_INIT;
    int rc = subprocess_run((const char *const *)true_argv, NULL, &r, NULL);
    rc = rc < 0 || r.exit_code != 0;
    subprocess_result_release(&r);
    return rc;
}

static int run_spawn(void)
{
    pid_t pid;
    int st;
    if (posix_spawnp(&pid, "true", NULL, NULL, true_argv, environ) != 0)
        return 1;
    return waitpid(pid, &st, 0) != pid || !WIFEXITED(st) || WEXITSTATUS(st);
}

static int run_fork(void)
{
    pid_t pid = fork();
    int st;
    if (pid < 0)
        return 1;
    if (pid == 0) {
        execvp("true", true_argv);
        _exit(127);
    }
    return waitpid(pid, &st, 0) != pid || !WIFEXITED(st) || WEXITSTATUS(st);
}

int main(int argc, char **argv)
{
    int (*way[3])(void) = {run_exa, run_spawn, run_fork};
    const char *name[3] = {"subprocess_run", "posix_spawnp", "fork+execvp"};
    int n = getenv("SPAWN_N") ? (int)strtol(getenv("SPAWN_N"), NULL, 10) : 200;

    if (n < 10)
        n = 10;
    for (int a = 1; a < argc; a++) {
        size_t mib = (size_t)strtoul(argv[a], NULL, 10);
        char *mem = mib ? malloc(mib << 20) : NULL;
        double t[3] = {0, 0, 0};
        if (mib && !mem) {
            fprintf(stderr, "spawn: cannot allocate %zu MiB\n", mib);
            return 1;
        }
        if (mem)
            memset(mem, 1, mib << 20);
        for (int round = 0; round < n / 10; round++) {
            for (int w = 0; w < 3; w++) {
                double t0 = subprocess_now();
                for (int i = 0; i < 10; i++) {
                    if (way[w]()) {
                        fprintf(stderr, "spawn: %s of true failed\n", name[w]);
                        return 1;
                    }
                }
                t[w] += subprocess_now() - t0;
            }
        }
        printf("-- %zu MiB resident, %d runs of true each way\n", mib,
               n / 10 * 10);
        for (int w = 0; w < 3; w++)
            printf("  %-15s %8.3f ms/run  %6.2fx posix_spawnp\n", name[w],
                   t[w] * 1000 / (n / 10 * 10), t[w] / t[1]);
        free(mem);
    }
    return 0;
}
