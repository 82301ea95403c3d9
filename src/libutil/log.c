/*
 * log.c - leveled stderr logging; see log.h.
 */
#include "libutil/log.h"

#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Read on every log call from any thread (the exporter runs its commands
 * on two): atomics, and EXAMLOPS_LOG_LEVEL read once. */
static atomic_int level_set;
static atomic_int cur_level = LOG_WARN;
static pthread_once_t env_once = PTHREAD_ONCE_INIT;

void log_set_level(enum log_level level)
{
    atomic_store(&cur_level, (int)level);
    atomic_store(&level_set, 1);
}

/* The level EXAMLOPS_LOG_LEVEL names, unless log_set_level() came first. */
static void level_from_env(void)
{
    const char *e = getenv("EXAMLOPS_LOG_LEVEL");
    if (atomic_load(&level_set))
        return;
    if (e && !strcmp(e, "debug"))
        atomic_store(&cur_level, LOG_DEBUG);
    else if (e && !strcmp(e, "info"))
        atomic_store(&cur_level, LOG_INFO);
}

enum log_level log_get_level(void)
{
    pthread_once(&env_once, level_from_env);
    return (enum log_level)atomic_load(&cur_level);
}

void log_msg(enum log_level level, const char *fmt, ...)
{
    static const char *names[] = {"error", "warning", "info", "debug"};
    va_list ap;
    if (level > log_get_level())
        return;
    flockfile(stderr); /* one line, whichever threads log at once */
    fprintf(stderr, "exa: %s: ", names[level]);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    funlockfile(stderr);
}

static int status_quiet;

void log_status_quiet(int on)
{
    status_quiet = on;
}

int log_status_enabled(void)
{
    if (log_get_level() >= LOG_DEBUG)
        return 1;
    return !status_quiet && isatty(STDERR_FILENO);
}

void log_status(const char *fmt, ...)
{
    va_list ap;
    if (!log_status_enabled())
        return;
    fputs("exa: ", stderr);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
}
