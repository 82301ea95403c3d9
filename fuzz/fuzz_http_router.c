/*
 * fuzz_http_router.c - libFuzzer target: the request router of `exa
 * serve` (http_dispatch: path splitting and percent decoding, route
 * patterns, the query string parser, cookies) and the REST API behind it
 * (api.c: bearer tokens and sessions, CSRF, role checks, query values,
 * JSON bodies) on a scratch platform.db with one cluster whose ssh user
 * and key path must never appear in an answer.
 *
 * Input lines: 1 method; 2 request target (path and query); 3 the
 * Authorization header ("0" absent, "1" / "2" / "3" Bearer with an
 * admin / operator / viewer token, else the line itself); 4 Cookie
 * ("" absent, "S" the session an earlier login input made, else the
 * line); 5 X-CSRF-Token ("" absent, "S" that session's); the rest is the
 * body ("@1", "@2", "@3": {"token": ...} with that token, for login).
 * Checks: a status in 100..599; under /api/ a body is JSON and an error
 * status has {"error": {"code", "message"}}; no body holds the key
 * path, the ssh user or a token.
 */
#include <ftw.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <jansson.h>

#include "libauth/auth.h"
#include "libstore/store.h"
#include "libutil/strbuf.h"
#include "libutil/xalloc.h"
#include "server/api.h"
#include "server/http.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerInitialize(int *argc, char ***argv);

#define SECRET_USER "fuzzsecretuser"
#define SECRET_KEY "/fuzz-secret/keys/id_fuzz"

static struct http_server *srv;
static char scratch[64];

static int rm_one(const char *path, const struct stat *sb, int flag,
                  struct FTW *ftw)
{
    (void)sb, (void)flag, (void)ftw;
    return remove(path);
}

/* the scratch directory goes when the fuzzer exits */
static void cleanup(void)
{
    if (*scratch)
        nftw(scratch, rm_one, 8, FTW_DEPTH | FTW_PHYS);
}
static char *tokens[3];
static char session[64], csrf[64];

struct hdrs {
    const char *auth, *cookie, *csrf;
};

static const char *get_header(void *cls, const char *name)
{
    const struct hdrs *h = cls;
    if (!strcasecmp(name, "Authorization"))
        return h->auth;
    if (!strcasecmp(name, "Cookie"))
        return h->cookie;
    if (!strcasecmp(name, "X-CSRF-Token"))
        return h->csrf;
    return NULL;
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    char tmpl[] = "/tmp/exa-fuzz-http-XXXXXX";
    char *dir = mkdtemp(tmpl), *p;
    struct api_config cfg;
    store_t *st;
    FILE *fp;
    static const char *const roles[] = {"admin", "operator", "viewer"};
    (void)argc, (void)argv;
    if (!dir)
        abort();
    snprintf(scratch, sizeof(scratch), "%s", dir);
    atexit(cleanup);
    p = xstrfmt("%s/platform.db", dir);
    setenv("EXAMLOPS_DB", p, 1);
    free(p);
    p = xstrfmt("%s/clusters.yaml", dir);
    setenv("EXAMLOPS_HPC_REGISTRY", p, 1);
    fp = fopen(p, "w");
    if (!fp)
        abort();
    fprintf(fp,
            "clusters:\n  alpha: {scheduler: slurm, transport: ssh, host: "
            "127.0.0.1, ssh_port: 1, ssh_user: %s, ssh_key: %s}\n",
            SECRET_USER, SECRET_KEY);
    fclose(fp);
    free(p);
    setenv("HOME", dir, 1);
    st = store_open(NULL, NULL);
    if (!st)
        abort();
    for (int i = 0; i < 3; i++)
        if (auth_token_create(st,
                              roles[i][0] == 'a'   ? "ann"
                              : roles[i][0] == 'o' ? "otto"
                                                   : "vic",
                              auth_role_parse(roles[i]), 0, "cli", "fuzz",
                              &tokens[i], NULL, NULL) < 0)
            abort();
    store_close(st);
    srv = http_server_new();
    memset(&cfg, 0, sizeof(cfg));
    cfg.fail_limit = -1; /* no slow-down: every input is judged alone */
    api_register(srv, &cfg);
    return 0;
}

/* The next line of [*p, end) as a new string; *p moves past it. */
static char *line(const char **p, const char *end)
{
    const char *q = memchr(*p, '\n', (size_t)(end - *p));
    char *s;
    if (!q)
        q = end;
    s = xstrndup(*p, (size_t)(q - *p));
    *p = q < end ? q + 1 : end;
    return s;
}

static void check(const struct http_request *req,
                  const struct http_response *resp, int echo)
{
    char *b;
    if (resp->status < 100 || resp->status > 599)
        abort();
    if (!resp->body)
        return;
    b = xstrndup(resp->body, resp->len);
    /* a name from the request may be quoted back: only a secret the
     * input (or, for the audit log, no earlier input) did not hold counts */
    if (!echo && (strstr(b, SECRET_KEY) || strstr(b, SECRET_USER)))
        abort();
    for (int i = 0; i < 3; i++)
        if (!echo && strstr(b, tokens[i] + 4))
            abort();
    if (!strncmp(req->path, "/api/", 5) && resp->len) {
        json_t *d = json_loads(b, 0, NULL);
        if (!d)
            abort();
        if (resp->status >= 400) {
            json_t *e = json_object_get(d, "error");
            if (!json_is_string(json_object_get(e, "code")) ||
                !json_is_string(json_object_get(e, "message")))
                abort();
        }
        /* remember a session a login made */
        if (resp->status == 200 && !strcmp(req->path, "/api/v1/auth/login") &&
            json_is_string(json_object_get(d, "csrf")))
            snprintf(csrf, sizeof(csrf), "%s",
                     json_string_value(json_object_get(d, "csrf")));
        json_decref(d);
    }
    for (size_t i = 0; i < resp->nheaders; i++) {
        const char *v = resp->headers[i].value, *s;
        if (!strcmp(resp->headers[i].name, "Set-Cookie") &&
            (s = strstr(v, "exa_session=")) && s[12] != ';')
            snprintf(session, sizeof(session), "%.43s", s + 12);
    }
    free(b);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *p = (const char *)data, *end = p + size, *qm;
    char *method = line(&p, end), *target = line(&p, end);
    char *auth = line(&p, end), *cookie = line(&p, end), *csrfl = line(&p, end);
    size_t blen = (size_t)(end - p);
    char *body = xstrndup(p, blen), *path, *authv = NULL;
    char *cookiev = NULL;
    struct hdrs h = {NULL, NULL, NULL};
    struct http_request req;
    struct http_response resp;
    struct http_kv *kv = NULL;
    size_t nkv = 0;
    char cbuf[128];

    if (!strcmp(auth, "1") || !strcmp(auth, "2") || !strcmp(auth, "3"))
        authv = xstrfmt("Bearer %s", tokens[auth[0] - '1']);
    else if (strcmp(auth, "0"))
        authv = xstrdup(auth);
    h.auth = authv;
    if (!strcmp(cookie, "S"))
        cookiev = xstrfmt("a=b; exa_session=%s", session);
    else if (*cookie)
        cookiev = xstrdup(cookie);
    h.cookie = cookiev;
    h.csrf = !strcmp(csrfl, "S") ? csrf : *csrfl ? csrfl : NULL;

    if (blen == 2 && body[0] == '@' && body[1] >= '1' && body[1] <= '3') {
        free(body);
        body = xstrfmt("{\"token\": \"%s\"}", tokens[p[1] - '1']);
        blen = strlen(body);
    }
    qm = strchr(target, '?');
    path = qm ? xstrndup(target, (size_t)(qm - target)) : xstrdup(target);
    memset(&req, 0, sizeof(req));
    memset(&resp, 0, sizeof(resp));
    req.method = method;
    req.path = path;
    req.query = qm ? qm + 1 : "";
    req.body = body;
    req.body_len = blen;
    req.remote = "127.0.0.1";
    req.header_fn = get_header;
    req.header_cls = &h;
    http_dispatch(srv, &req, &resp);
    {

        static int tainted; /* an earlier input held a secret */
        /* libFuzzer learns compared strings, the tokens included: an
         * input that holds one may see it quoted back */
        int echo = memmem(data, size, "fuzzsecret", 10) ||
                   memmem(data, size, "fuzz-secret", 11);
        for (int i = 0; i < 3; i++)
            echo |= memmem(data, size, tokens[i] + 4, 8) != NULL;
        /* the audit log keeps earlier inputs (a denied path) */
        if (tainted && strstr(path, "audit"))
            echo = 1;
        tainted |= echo;
        check(&req, &resp, echo);
    }
    /* the pure parsers on their own */
    if (http_query_parse(req.query, &kv, &nkv) == 0)
        http_kv_free(kv, nkv);
    http_request_cookie(&req, "exa_session", cbuf, sizeof(cbuf));
    http_response_release(&resp);
    http_request_release(&req);
    free(method);
    free(target);
    free(auth);
    free(cookie);
    free(csrfl);
    free(body);
    free(path);
    free(authv);
    free(cookiev);
    return 0;
}
