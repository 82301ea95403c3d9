/*
 * error.c - filling exa_error_t and mapping codes to exit statuses.
 */
#include "libutil/error.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "libutil/strbuf.h"

int exa_err(exa_error_t *err, enum exa_errc code, const char *fmt, ...)
{
    va_list ap;
    if (!err)
        return -1;
    err->code = code;
    va_start(ap, fmt);
    vsnprintf(err->text, sizeof(err->text), fmt, ap);
    va_end(ap);
    return -1;
}

int exa_err_prefix(exa_error_t *err, const char *fmt, ...)
{
    char prefix[256], old[256];
    va_list ap;
    if (!err)
        return -1;
    va_start(ap, fmt);
    vsnprintf(prefix, sizeof(prefix), fmt, ap);
    va_end(ap);
    memcpy(old, err->text, sizeof(old));
    {
        struct strbuf sb = STRBUF_INIT;
        strbuf_addf(&sb, "%s: %s", prefix, old);
        memcpy(err->text, sb.buf,
               sb.len < sizeof(err->text) ? sb.len + 1 : sizeof(err->text));
        err->text[sizeof(err->text) - 1] = '\0';
        strbuf_release(&sb);
    }
    return -1;
}

int exa_errc_exit(enum exa_errc code)
{
    switch (code) {
    case EXA_OK:
        return 0;
    case EXA_EUSAGE:
        return 2;
    case EXA_ECONFIG:
        return 3;
    case EXA_ETRANSPORT:
    case EXA_ETIMEOUT: /* a command past its cap; a wait's own deadline
                          is mapped to 1 by the wait commands */
        return 4;
    case EXA_ESCHED:
        return 5;
    case EXA_ENOTAPPROVED:
        return 6;
    case EXA_EFAIL:
    case EXA_EPARSE:
    case EXA_ENOTFOUND:
        return 1;
    }
    return 1;
}

const char *exa_errc_name(enum exa_errc code)
{
    switch (code) {
    case EXA_OK:
        return "ok";
    case EXA_EFAIL:
        return "failed";
    case EXA_EUSAGE:
        return "usage";
    case EXA_ECONFIG:
        return "config";
    case EXA_ETRANSPORT:
        return "transport";
    case EXA_ESCHED:
        return "scheduler";
    case EXA_ENOTAPPROVED:
        return "not_approved";
    case EXA_EPARSE:
        return "parse";
    case EXA_ENOTFOUND:
        return "not_found";
    case EXA_ETIMEOUT:
        return "timeout";
    }
    return "unknown";
}
