/*
 * log.h - diagnostics on stderr for the front end and daemons.
 *
 * Libraries do not print; they may call log_debug() for traces a user
 * asked for with --verbose (EXAMLOPS_LOG_LEVEL=debug also enables it).
 * Messages go to stderr so stdout stays one JSON document in --json mode.
 */
#ifndef EXA_LOG_H
#define EXA_LOG_H

enum log_level { LOG_ERROR = 0, LOG_WARN, LOG_INFO, LOG_DEBUG };

/* Set the most verbose level printed (default LOG_WARN). */
void log_set_level(enum log_level level);
enum log_level log_get_level(void);

/*
 * Print "exa: <level>: <message>\n" on stderr when level is at most the
 * set level; fmt is printf-style. For the front end and daemons;
 * library calls report failures through exa_error_t instead.
 */
void log_msg(enum log_level level, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/*
 * Print "exa: <message>\n" on stderr when log_status_enabled(): a status
 * line of a long operation (a copy's progress), which a terminal wants
 * and a pipe or a log file does not unless -v asked for it.
 */
void log_status(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* 1 when stderr is a terminal or the level is LOG_DEBUG (-v), else 0;
 * always 0 after log_status_quiet(1) (-q without -v). */
int log_status_enabled(void);
void log_status_quiet(int on);

#define log_error(...) log_msg(LOG_ERROR, __VA_ARGS__)
#define log_warn(...) log_msg(LOG_WARN, __VA_ARGS__)
#define log_info(...) log_msg(LOG_INFO, __VA_ARGS__)
#define log_debug(...) log_msg(LOG_DEBUG, __VA_ARGS__)

#endif
