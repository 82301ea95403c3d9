/*
 * output.c - every byte `exa` prints goes through here, so that --json mode
 * prints exactly one JSON document on stdout (errors included) and table
 * mode prints aligned text with a caption, as the reference CLI does.
 */
#include "cmd/cmd.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "libutil/json.h"
#include "libutil/jsonw.h"
#include "libutil/strbuf.h"
#include "libutil/strvec.h"
#include "libutil/xalloc.h"

void out_json(struct exa_ctx *ctx, json_t *doc)
{
    if (ctx->emitted) {
        /* A second document would break consumers; keep the first. */
        json_decref(doc);
        return;
    }
    ctx->emitted = 1;
    if (jx_dumpf(doc, stdout, 1) < 0)
        fprintf(stderr, "exa: error: writing to stdout failed: %s\n",
                strerror(errno));
    json_decref(doc);
}

void out_jsonw_finish(struct exa_ctx *ctx, struct jsonw *w)
{
    ctx->emitted = 1;
    if (jsonw_finish(w) < 0)
        fprintf(stderr, "exa: error: writing to stdout failed: %s\n",
                strerror(errno));
}

int out_error(struct exa_ctx *ctx, const exa_error_t *err, const char *hint)
{
    int code = exa_errc_exit(err->code ? err->code : EXA_EFAIL);
    const char *text = err->text[0] ? err->text : "unknown error";
    if (ctx->out == OUT_JSON) {
        json_t *doc = json_object();
        jx_set(doc, "error", jx_str(text));
        jx_set(doc, "exit_code", json_integer(code));
        if (hint)
            jx_set(doc, "hint", jx_str(hint));
        if (ctx->emitted) {
            /* Already printed a document: keep stdout valid, use stderr. */
            fprintf(stderr, "exa: error: %s\n", text);
            json_decref(doc);
        } else {
            out_json(ctx, doc);
        }
    } else {
        /* what stdout already holds comes first under 2>&1 (a pipe
         * buffers stdout fully; stderr is unbuffered) */
        fflush(stdout);
        fprintf(stderr, "exa: error: %s\n", text);
        if (hint)
            fprintf(stderr, "hint: %s\n", hint);
    }
    return code;
}

int out_errorf(struct exa_ctx *ctx, enum exa_errc code, const char *hint,
               const char *fmt, ...)
{
    exa_error_t err = EXA_ERROR_INIT;
    va_list ap;
    err.code = code;
    va_start(ap, fmt);
    vsnprintf(err.text, sizeof(err.text), fmt, ap);
    va_end(ap);
    return out_error(ctx, &err, hint);
}

int out_usage(struct exa_ctx *ctx, const char *fmt, ...)
{
    exa_error_t err = EXA_ERROR_INIT;
    char hint[256];
    va_list ap;
    err.code = EXA_EUSAGE;
    va_start(ap, fmt);
    vsnprintf(err.text, sizeof(err.text), fmt, ap);
    va_end(ap);
    snprintf(hint, sizeof(hint), "see '%s --help'",
             ctx->prog ? ctx->prog : "exa");
    return out_error(ctx, &err, hint);
}

static void vline(FILE *fp, const char *prefix, const char *fmt, va_list ap)
{
    if (prefix)
        fputs(prefix, fp);
    vfprintf(fp, fmt, ap);
    fputc('\n', fp);
}

void out_info(struct exa_ctx *ctx, const char *fmt, ...)
{
    va_list ap;
    if (ctx->out == OUT_JSON || ctx->quiet)
        return;
    va_start(ap, fmt);
    vline(stdout, NULL, fmt, ap);
    va_end(ap);
    fflush(stdout);
}

void out_detail(struct exa_ctx *ctx, const char *fmt, ...)
{
    va_list ap;
    if (ctx->out == OUT_JSON || !ctx->verbose)
        return;
    va_start(ap, fmt);
    vline(stdout, "  ", fmt, ap);
    va_end(ap);
}

void out_warn(struct exa_ctx *ctx, const char *fmt, ...)
{
    va_list ap;
    fflush(stdout); /* keep the order of the lines under 2>&1 */
    va_start(ap, fmt);
    vline(stderr, "exa: warning: ", fmt, ap);
    va_end(ap);
}

int out_confirm(struct exa_ctx *ctx, const char *fmt, ...)
{
    char line[64];
    va_list ap;
    if (ctx->yes)
        return 1;
    if (ctx->out == OUT_JSON || !isatty(STDIN_FILENO))
        return 0;
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputs(" [y/N] ", stderr);
    fflush(stderr);
    if (!fgets(line, sizeof(line), stdin))
        return 0;
    return line[0] == 'y' || line[0] == 'Y';
}

struct out_table {
    size_t ncol;
    const char *const *cols;
    struct strvec cells; /* row-major; "\x01" marks NULL */
    size_t nrow;
};

struct out_table *out_table_create(const char *const *columns)
{
    struct out_table *t = xcalloc(1, sizeof(*t));
    while (columns[t->ncol])
        t->ncol++;
    t->cols = columns;
    strvec_init(&t->cells);
    return t;
}

void out_table_row(struct out_table *t, const char *const *values)
{
    for (size_t i = 0; i < t->ncol; i++)
        strvec_push(&t->cells, values[i] ? values[i] : "\x01");
    t->nrow++;
}

void out_table_destroy(struct out_table *t)
{
    if (!t)
        return;
    strvec_clear(&t->cells);
    free(t);
}

/* Display width of a UTF-8 string (code points; good enough here). */
static size_t width(const char *s)
{
    size_t w = 0;
    for (; *s; s++)
        if (((unsigned char)*s & 0xC0) != 0x80)
            w++;
    return w;
}

void out_table_print(struct exa_ctx *ctx, struct out_table *t)
{
    if (ctx->out == OUT_JSON) {
        json_t *arr = json_array();
        for (size_t r = 0; r < t->nrow; r++) {
            json_t *o = json_object();
            for (size_t c = 0; c < t->ncol; c++) {
                const char *v = t->cells.v[r * t->ncol + c];
                jx_set(o, t->cols[c], strcmp(v, "\x01") ? jx_str(v) : NULL);
            }
            json_array_append_new(arr, o);
        }
        out_json(ctx, arr);
        out_table_destroy(t);
        return;
    }
    size_t *w = xcalloc(t->ncol, sizeof(*w));
    for (size_t c = 0; c < t->ncol; c++)
        w[c] = width(t->cols[c]);
    for (size_t r = 0; r < t->nrow; r++)
        for (size_t c = 0; c < t->ncol; c++) {
            const char *v = t->cells.v[r * t->ncol + c];
            size_t n = strcmp(v, "\x01") ? width(v) : 1;
            if (n > w[c])
                w[c] = n;
        }
    for (size_t c = 0; c < t->ncol; c++)
        printf("%s%-*s", c ? "  " : "", c + 1 < t->ncol ? (int)w[c] : 0,
               t->cols[c]);
    putchar('\n');
    for (size_t r = 0; r < t->nrow; r++) {
        for (size_t c = 0; c < t->ncol; c++) {
            const char *v = t->cells.v[r * t->ncol + c];
            if (!strcmp(v, "\x01"))
                v = "-";
            size_t pad = c + 1 < t->ncol ? w[c] - width(v) : 0;
            printf("%s%s%*s", c ? "  " : "", v, (int)pad, "");
        }
        putchar('\n');
    }
    if (!ctx->quiet)
        printf("%zu item(s)\n", t->nrow);
    free(w);
    out_table_destroy(t);
}

int cmd_no_args(struct exa_ctx *ctx, int argc, char **argv)
{
    if (argc <= 1)
        return 0;
    if (argv[1][0] == '-' && argv[1][1])
        return out_usage(ctx, "option '%s' is unknown", argv[1]);
    return out_usage(ctx, "unexpected argument '%s'", argv[1]);
}

int cmd_parse_uint(struct exa_ctx *ctx, const char *opt, const char *s,
                   long long *out)
{
    char *end;
    long long v;
    errno = 0;
    v = strtoll(s, &end, 10);
    if (errno || end == s || *end || v < 0)
        return out_usage(ctx,
                         "option '%s' expects a non-negative integer, "
                         "got '%s'",
                         opt, s);
    *out = v;
    return 0;
}

void cmd_print_help(const char *group, const struct exa_cmd *cmd, FILE *fp)
{
    fprintf(fp, "usage: exa %s%s%s %s\n\n%s\n", group, group[0] ? " " : "",
            cmd->name, cmd->usage ? cmd->usage : "", cmd->summary);
    if (cmd->help)
        fprintf(fp, "\n%s\n", cmd->help);
}

const char *cmd_not_approved_hint(const exa_error_t *err, const char *name,
                                  char *buf, size_t len)
{
    if (!name || !*name)
        name = "NAME";
    if (strstr(err->text, "is REJECTED"))
        snprintf(buf, len,
                 "connect it again with 'exa hpc connect HOST --name %s' "
                 "(it becomes PENDING; 'exa hpc clusters' shows its host, "
                 "port and user), then 'exa hpc approve %s'",
                 name, name);
    else
        snprintf(buf, len, "a sysadmin approves it: exa hpc approve %s", name);
    return buf;
}
