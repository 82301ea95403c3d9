/*
 * log.c - leveled stderr logging; see log.h.
 */
#include "libutil/log.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int level_set;
static enum log_level cur_level = LOG_WARN;

void log_set_level(enum log_level level)
{
    cur_level = level;
    level_set = 1;
}

enum log_level log_get_level(void)
{
    if (!level_set) {
        const char *e = getenv("EXAMLOPS_LOG_LEVEL");
        if (e && !strcmp(e, "debug"))
            cur_level = LOG_DEBUG;
        else if (e && !strcmp(e, "info"))
            cur_level = LOG_INFO;
        level_set = 1;
    }
    return cur_level;
}

void log_msg(enum log_level level, const char *fmt, ...)
{
    static const char *names[] = {"error", "warning", "info", "debug"};
    va_list ap;
    if (level > log_get_level())
        return;
    fprintf(stderr, "exa: %s: ", names[level]);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
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
