/*
 * error.h - exa_error_t, the one way human-readable errors travel.
 *
 * A function that fails fills a caller-owned exa_error_t once, with the
 * facts it knows (host, command, exit status, line number), and returns -1
 * (or NULL). Callers may pass NULL when they do not want the text. The
 * front end maps the code to an exit status (doc/exit-codes.md), the
 * server to an HTTP status. Modelled on flux-core's flux_error_t.
 *
 * Message style: lower case, no full stop, what failed first, the subject
 * in single quotes: "sinfo on 'login1' exited 1: Unable to contact ...".
 */
#ifndef EXA_ERROR_H
#define EXA_ERROR_H

enum exa_errc {
    EXA_OK = 0,
    EXA_EFAIL,        /* generic failure, a check failed: exit 1 */
    EXA_EUSAGE,       /* bad arguments, unknown name: exit 2 */
    EXA_ECONFIG,      /* configuration, files, paths, database: exit 3 */
    EXA_ETRANSPORT,   /* ssh/local execution failed, timeout, host key: 4 */
    EXA_ESCHED,       /* the scheduler refused or answered garbage: 5 */
    EXA_ENOTAPPROVED, /* cluster is not ACTIVE: exit 6 */
    EXA_EPARSE,       /* input could not be parsed: exit 1 */
    EXA_ENOTFOUND,    /* a named object does not exist: exit 1 */
    EXA_ETIMEOUT,     /* a deadline passed: exit 4 for commands, 1 waits */
};

typedef struct {
    enum exa_errc code;
    char text[256];
} exa_error_t;

#define EXA_ERROR_INIT                                                         \
    {                                                                          \
        EXA_OK, ""                                                             \
    }

/*
 * Fill err (if not NULL) with code and the printf-formatted text, truncated
 * to fit. Always returns -1 so callers can `return exa_err(...)`.
 */
int exa_err(exa_error_t *err, enum exa_errc code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Prefix err->text with "prefix: " (truncating); returns -1. */
int exa_err_prefix(exa_error_t *err, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* Exit status for a code, per doc/exit-codes.md. */
int exa_errc_exit(enum exa_errc code);

/* Stable short name of a code ("usage", "transport", ...). */
const char *exa_errc_name(enum exa_errc code);

#endif
