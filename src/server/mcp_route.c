/*
 * mcp_route.c - copy a router request into libmcp's HTTP rules and the
 * answer back. Header names are matched case-insensitively by the router
 * (the SDK sends them in lower case).
 */
#include "server/mcp_route.h"

#include <microhttpd.h>
#include <stdlib.h>
#include <string.h>

#include "libauth/throttle.h"
#include "libmcp/tools.h"
#include "libutil/strvec.h"
#include "libutil/xalloc.h"

static int h_mcp(void *ctx, const struct http_request *req,
                 struct http_response *resp)
{
    struct mcp_http_req in;
    struct mcp_http_resp out;

    memset(&in, 0, sizeof(in));
    memset(&out, 0, sizeof(out));
    if (!strcmp(req->method, MHD_HTTP_METHOD_POST))
        in.method = MCP_HTTP_POST;
    else if (!strcmp(req->method, MHD_HTTP_METHOD_GET) ||
             !strcmp(req->method, MHD_HTTP_METHOD_HEAD))
        in.method = MCP_HTTP_GET;
    else if (!strcmp(req->method, MHD_HTTP_METHOD_DELETE))
        in.method = MCP_HTTP_DELETE;
    in.host = http_request_header(req, "Host");
    in.origin = http_request_header(req, "Origin");
    in.session_id = http_request_header(req, "Mcp-Session-Id");
    in.protocol_version = http_request_header(req, "MCP-Protocol-Version");
    in.authorization = http_request_header(req, "Authorization");
    in.content_type = http_request_header(req, "Content-Type");
    in.body = req->body;
    in.body_len = req->body_len;
    in.remote = req->remote;
    in.method_name = req->method;
    mcp_http_handle(ctx, &in, &out);

    resp->status = out.status;
    resp->content_type = out.content_type;
    resp->body = out.body;
    resp->len = out.len;
    if (out.session_id[0])
        http_response_header(resp, "Mcp-Session-Id", out.session_id);
    if (out.allow)
        http_response_header(resp, "Allow", "POST, " MHD_HTTP_METHOD_DELETE);
    if (out.www_authenticate)
        http_response_header(resp, "WWW-Authenticate", "Bearer");
    if (out.retry_after > 0) {
        char ra[32];
        snprintf(ra, sizeof(ra), "%ld", out.retry_after);
        http_response_header(resp, "Retry-After", ra);
    }
    return 0;
}

void mcp_http_register(struct http_server *srv, const char *path,
                       struct mcp_http *h)
{
    http_route(srv, MHD_HTTP_METHOD_POST, path, h_mcp, h);
    http_route(srv, MHD_HTTP_METHOD_GET, path, h_mcp, h);
    http_route(srv, MHD_HTTP_METHOD_DELETE, path, h_mcp, h);
}

struct mcp_mount {
    struct mcp_server *srv;
    struct mcp_http *http;
    struct auth_throttle *own_thr;
};

struct mcp_mount *mcp_mount(struct http_server *hs, const char *path,
                            int allow_writes, struct auth_throttle *thr,
                            exa_error_t *err)
{
    struct mcp_server_info info = {
        "exa", EXA_VERSION,
        "exa's HPC fleet: clusters, nodes, placement, jobs, capacity, "
        "queues, models and carbon (read-only tools); hpc_approve_cluster "
        "when writes are enabled. doc/mcp.md.",
        allow_writes};
    struct mcp_mount *m = xcalloc(1, sizeof(*m));
    const char *hosts = getenv("EXAMLOPS_MCP_ALLOWED_HOSTS");
    m->srv = mcp_server_create(&info);
    if (mcp_tools_register(m->srv, err) < 0) {
        mcp_server_destroy(m->srv);
        free(m);
        return NULL;
    }
    if (!thr)
        thr = m->own_thr = auth_throttle_new(0, 0, 0, 0);
    m->http = mcp_http_create(m->srv, mcp_auth_store, thr, 0);
    if (hosts && *hosts) {
        struct strvec v = STRVEC_INIT;
        strvec_split(&v, hosts, ',');
        for (size_t i = 0; i < v.nr; i++)
            if (*v.v[i])
                mcp_http_allow_host(m->http, v.v[i]);
        strvec_clear(&v);
    }
    mcp_http_register(hs, path, m->http);
    return m;
}

struct mcp_mount *mcp_mount_env(struct http_server *srv,
                                struct auth_throttle *thr, exa_error_t *err)
{
    const char *v = getenv("EXAMLOPS_MCP_ALLOW_WRITES");
    int w = mcp_env_allow_writes(v);
    if (w < 0) {
        exa_err(err, EXA_ECONFIG,
                "EXAMLOPS_MCP_ALLOW_WRITES is '%s': expected 1, true, yes, "
                "on, 0, false, no or off",
                v);
        return NULL;
    }
    return mcp_mount(srv, "/mcp", w, thr, err);
}

size_t mcp_mount_tool_count(const struct mcp_mount *m)
{
    return mcp_server_tool_count(m->srv);
}

void mcp_unmount(struct mcp_mount *m)
{
    if (!m)
        return;
    mcp_http_destroy(m->http);
    mcp_server_destroy(m->srv);
    auth_throttle_free(m->own_thr);
    free(m);
}
