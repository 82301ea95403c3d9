/*
 * console.c - the routes of the Facility console (server/console.h): the
 * embedded assets, answered with their Content-Type, a strict
 * Content-Security-Policy and cache headers.
 *
 * The assets change only with the binary, so they are revalidated on each
 * load (Cache-Control: no-cache with a strong ETag from their SHA-256,
 * RFC 9111 §5.2.2.4) rather than cached for a time: a new exa never runs
 * with the old page's script. The bodies are streamed from the static
 * arrays, never copied.
 */
#include "server/console.h"

#include <string.h>

#include "libutil/etag.h"
#include "server/http.h"

const char *console_content_type(const char *name)
{
    static const struct {
        const char *ext, *type;
    } types[] = {
        {".html", "text/html; charset=utf-8"},
        {".css", "text/css; charset=utf-8"},
        {".js", "text/javascript; charset=utf-8"},
        {".svg", "image/svg+xml"},
        {".json", "application/json"},
        {".txt", "text/plain; charset=utf-8"},
    };
    const char *dot = strrchr(name, '.');
    for (size_t i = 0; dot && i < sizeof(types) / sizeof(types[0]); i++)
        if (!strcmp(dot, types[i].ext))
            return types[i].type;
    return "application/octet-stream";
}

const struct console_asset *console_asset_find(const char *name)
{
    for (size_t i = 0; i < console_nassets; i++)
        if (!strcmp(console_assets[i].name, name))
            return &console_assets[i];
    return NULL;
}

static size_t asset_read(void *cls, size_t pos, char *buf, size_t max)
{
    const struct console_asset *a = cls;
    size_t n;
    if (pos >= a->len)
        return 0;
    n = a->len - pos < max ? a->len - pos : max;
    memcpy(buf, a->data + pos, n);
    return n;
}

static int h_asset(void *ctx, const struct http_request *req,
                   struct http_response *resp)
{
    const struct console_asset *a = ctx;
    const char *inm = http_request_header(req, "If-None-Match");
    resp->content_type = console_content_type(a->name);
    if (inm && etag_if_none_match(inm, strlen(inm), a->etag)) {
        resp->status = 304; /* RFC 9110 §15.4.5: no body, same ETag */
    } else {
        resp->len = a->len;
        resp->read = asset_read;
        resp->read_cls = (void *)a;
    }
    http_response_header(resp, "Content-Security-Policy", CONSOLE_CSP);
    http_response_header(resp, "X-Content-Type-Options", "nosniff");
    http_response_header(resp, "X-Frame-Options", "DENY");
    http_response_header(resp, "Referrer-Policy", "no-referrer");
    http_response_header(resp, "Cross-Origin-Opener-Policy", "same-origin");
    http_response_header(resp, "Cross-Origin-Resource-Policy", "same-origin");
    http_response_header(resp, "Cache-Control", "no-cache");
    http_response_header(resp, "ETag", a->etag);
    return 0;
}

void console_register(struct http_server *srv)
{
    for (size_t i = 0; i < console_nassets; i++) {
        const struct console_asset *a = &console_assets[i];
        if (!strcmp(a->name, "index.html")) {
            http_route(srv, "GET", "/", h_asset, (void *)a);
            continue;
        }
        {
            char path[128];
            size_t n = strlen(a->name);
            if (n + 2 > sizeof(path))
                continue; /* embed-assets.sh names are short */
            path[0] = '/';
            memcpy(path + 1, a->name, n + 1);
            http_route(srv, "GET", path, h_asset, (void *)a);
        }
    }
}
