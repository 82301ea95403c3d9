/*
 * fuzz_mcp.c - libFuzzer target: MCP's JSON-RPC framing and dispatch
 * (mcp_handle_text, what `exa mcp serve` does with each stdio line) and
 * the streamable HTTP rules (mcp_http_handle, what /mcp does with each
 * request), with one tool whose schemas use every keyword the argument
 * checker knows.
 *
 * Input: the first line's first byte picks the method ('P' POST, 'G'
 * GET, 'D' DELETE, else POST) and the rest is split at '|' into Host,
 * Origin, Mcp-Session-Id ("*" = the session the last initialize made),
 * MCP-Protocol-Version and Authorization (an empty field is an absent
 * header; no Host gives "localhost"); the rest of the input is one stdio
 * message and also the POST body. Every reply must be one
 * line of JSON with jsonrpc "2.0" and exactly one of result and error.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "libmcp/mcp.h"
#include "libmcp/mcp_http.h"
#include "libutil/json.h"
#include "libutil/xalloc.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static json_t *t_echo(void *ctx, const struct mcp_call *c, exa_error_t *err)
{
    (void)ctx;
    if (jx_get_int(c->args, "n", 0) == 7)
        return exa_err(err, EXA_EFAIL, "seven"), NULL;
    if (jx_get_int(c->args, "n", 0) == 8)
        return exa_err(err, EXA_ENOTFOUND, "eight"), NULL;
    return json_pack("{s:O}", "args", (json_t *)c->args);
}

static const struct mcp_tool ECHO = {
    "echo",
    "Echo",
    "returns its arguments as args",
    "{\"type\":\"object\",\"required\":[\"n\"],\"properties\":{"
    "\"n\":{\"type\":\"integer\",\"minimum\":0,\"maximum\":100},"
    "\"x\":{\"type\":[\"number\",\"null\"]},"
    "\"s\":{\"type\":\"string\",\"minLength\":1,\"maxLength\":4},"
    "\"e\":{\"enum\":[\"a\",1,null,true]},"
    "\"l\":{\"type\":\"array\",\"items\":{\"type\":\"object\","
    "\"properties\":{\"k\":{\"type\":\"boolean\"}},"
    "\"additionalProperties\":false}},"
    "\"o\":{\"type\":\"object\",\"additionalProperties\":{\"type\":"
    "\"string\"}}},\"additionalProperties\":false}",
    "{\"type\":\"object\",\"required\":[\"args\"],\"properties\":{"
    "\"args\":{\"type\":\"object\"}}}",
    0,
    t_echo,
    NULL};

static int fake_auth(void *ctx, const char *token,
                     const struct mcp_http_req *req, struct mcp_principal *out,
                     exa_error_t *err)
{
    (void)ctx, (void)req;
    if (!token)
        return exa_err(err, EXA_EFAIL, "no token");
    if (strcmp(token, "good"))
        return exa_err(err, EXA_EFAIL, "bad token");
    memcpy(out->user, "fuzz", 5);
    memcpy(out->role, "admin", 6);
    return 0;
}

static void check_reply(const char *text)
{
    json_t *j;
    size_t n;
    if (!text)
        return;
    if (strchr(text, '\n'))
        abort();
    j = json_loads(text, 0, NULL);
    if (!j || strcmp(jx_get_str(j, "jsonrpc", ""), "2.0"))
        abort();
    n = !!json_object_get(j, "result") + !!json_object_get(j, "error");
    if (n != 1 || json_object_size(j) != 3)
        abort();
    json_decref(j);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static struct mcp_server *srv;
    static struct mcp_http *http, *http_auth;
    static char last_sid[33];
    struct mcp_session sess = MCP_SESSION_INIT;
    const char *nl = memchr(data, '\n', size);
    size_t hlen = nl ? (size_t)(nl - (const char *)data) : 0;
    const char *body = nl ? nl + 1 : (const char *)data;
    size_t blen = size - (nl ? hlen + 1 : 0);
    char *hdr = xstrndup((const char *)data, hlen);
    char *f[5] = {NULL, NULL, NULL, NULL, NULL};
    struct mcp_http_req req;
    struct mcp_http_resp resp;
    char *text;

    if (!srv) {
        struct mcp_server_info info = {"fuzz", "0", NULL, 1};
        srv = mcp_server_create(&info);
        if (mcp_server_add_tool(srv, &ECHO, NULL) < 0)
            abort();
        http = mcp_http_create(srv, NULL, NULL, 8);
        http_auth = mcp_http_create(srv, fake_auth, NULL, 8);
    }
    text = mcp_handle_text(srv, &sess, body, blen, NULL, NULL);
    check_reply(text);
    free(text);
    mcp_session_release(&sess);

    {
        /* the line is cut at a NUL byte, like a header value */
        char *p = *hdr ? hdr + 1 : NULL;
        for (int i = 0; i < 5 && p; i++) {
            char *bar = strchr(p, '|');
            if (bar)
                *bar = '\0';
            f[i] = *p ? p : NULL;
            p = bar ? bar + 1 : NULL;
        }
    }
    memset(&req, 0, sizeof(req));
    req.method = hdr[0] == 'G'   ? MCP_HTTP_GET
                 : hdr[0] == 'D' ? MCP_HTTP_DELETE
                                 : MCP_HTTP_POST;
    req.host = f[0] ? f[0] : "localhost";
    req.origin = f[1];
    req.session_id = f[2] && !strcmp(f[2], "*") ? last_sid : f[2];
    req.protocol_version = f[3];
    req.authorization = f[4];
    req.body = body;
    req.body_len = blen;
    for (int k = 0; k < 2; k++) {
        memset(&resp, 0, sizeof(resp));
        mcp_http_handle(k ? http_auth : http, &req, &resp);
        if (resp.status < 200 || resp.status > 499)
            abort();
        if (resp.session_id[0])
            memcpy(last_sid, resp.session_id, sizeof(last_sid));
        if (resp.status == 200 && resp.body && req.method == MCP_HTTP_POST)
            check_reply(resp.body);
        free(resp.body);
    }
    free(hdr);
    return 0;
}
