/*
 * console.h - the Facility console: the HTML, CSS and JavaScript of
 * src/server/console/, compiled into the binary (scripts/embed-assets.sh,
 * run by the Makefile) and answered by `exa serve` at / (doc/console.md).
 *
 * The page is static: everything it shows comes from the REST API on the
 * same origin, so the assets carry no data and the handlers here need no
 * store. Every answer has a Content-Security-Policy that allows only this
 * origin's own script, style and fetches (no inline script or style), and
 * X-Content-Type-Options, X-Frame-Options, Referrer-Policy and
 * Cache-Control headers.
 */
#ifndef EXA_SERVER_CONSOLE_H
#define EXA_SERVER_CONSOLE_H

#include <stddef.h>

struct http_server;

/* One embedded file (generated, build/gen/console_assets.c). */
struct console_asset {
    const char *name;          /* base name, "index.html" */
    const unsigned char *data; /* len bytes, then a NUL */
    size_t len;
    const char *etag; /* strong entity tag with its quotes (RFC 9110 8.8.3) */
};

extern const struct console_asset console_assets[];
extern const size_t console_nassets;

/*
 * The Content-Security-Policy of the console's answers (W3C CSP Level 3):
 * same-origin script, style, images and fetches, nothing inline, no
 * frames, no plugins, forms post only here.
 */
#define CONSOLE_CSP                                                            \
    "default-src 'none'; script-src 'self'; style-src 'self'; "                \
    "img-src 'self'; connect-src 'self'; form-action 'self'; "                 \
    "base-uri 'none'; frame-ancestors 'none'"

/*
 * The Content-Type of an asset by its name's extension (.html, .css, .js,
 * .svg, .json, .txt; RFC 9239 for JavaScript), "application/octet-stream"
 * for any other. A static string.
 */
const char *console_content_type(const char *name);

/*
 * Look an asset up by its base name; NULL when there is none.
 */
const struct console_asset *console_asset_find(const char *name);

/*
 * Add the console's routes to srv: GET / (index.html) and GET /NAME for
 * every other embedded file. The assets are static, so the routes share
 * no state and are safe from any server thread. Call before
 * http_server_listen(); a route the caller adds later with the same path
 * is never reached (the first match wins).
 */
void console_register(struct http_server *srv);

#endif
