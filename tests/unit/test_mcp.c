/*
 * test_mcp.c - libmcp: the JSON-RPC envelope, version negotiation, the
 * tool registry and argument checks, and the streamable HTTP rules
 * (Host/Origin, sessions, status codes), with a tool of this file's own.
 */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "libmcp/mcp.h"
#include "libmcp/mcp_http.h"
#include "libutil/json.h"

static int calls;

static json_t *t_add(void *ctx, const struct mcp_call *c, exa_error_t *err)
{
    long long a = jx_get_int(c->args, "a", 0), b = jx_get_int(c->args, "b", 0);
    (void)ctx;
    calls++;
    if (a == 13)
        return exa_err(err, EXA_EFAIL, "unlucky 'a'"), NULL;
    if (a == 404)
        return exa_err(err, EXA_ENOTFOUND, "no such thing '404'"), NULL;
    if (a == 666) /* breaks its own output schema */
        return json_pack("{s:s}", "sum", "six");
    return json_pack("{s:I,s:o}", "sum", (json_int_t)(a + b), "who",
                     c->sess->client_name ? json_string(c->sess->client_name)
                                          : json_null());
}

static json_t *t_write(void *ctx, const struct mcp_call *c, exa_error_t *err)
{
    (void)ctx, (void)c, (void)err;
    return json_object();
}

/* A tool that waits until the test lets it go, to hold a request open. */
static pthread_mutex_t slow_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t slow_cv = PTHREAD_COND_INITIALIZER;
static int slow_started, slow_go;

static json_t *t_slow(void *ctx, const struct mcp_call *c, exa_error_t *err)
{
    (void)ctx, (void)c, (void)err;
    pthread_mutex_lock(&slow_mu);
    slow_started = 1;
    pthread_cond_broadcast(&slow_cv);
    while (!slow_go)
        pthread_cond_wait(&slow_cv, &slow_mu);
    pthread_mutex_unlock(&slow_mu);
    return json_pack("{s:s}", "who", c->sess->client_name);
}

static const struct mcp_tool SLOW = {
    "slow", "Slow", "waits; returns who", "{\"type\":\"object\"}", NULL, 0,
    t_slow, NULL};

static const struct mcp_tool ADD = {
    "add",
    "Add",
    "adds two integers a and b; returns sum",
    "{\"type\":\"object\",\"required\":[\"a\"],\"properties\":{"
    "\"a\":{\"type\":\"integer\",\"minimum\":-1000,\"maximum\":1000},"
    "\"b\":{\"type\":\"integer\"},"
    "\"mode\":{\"type\":\"string\",\"enum\":[\"fast\",\"slow\"]},"
    "\"tag\":{\"type\":\"string\",\"minLength\":2,\"maxLength\":3}},"
    "\"additionalProperties\":false}",
    "{\"type\":\"object\",\"required\":[\"sum\"],\"properties\":{"
    "\"sum\":{\"type\":\"integer\"},\"who\":{\"type\":[\"string\",\"null\"]}}}",
    0,
    t_add,
    NULL};
static const struct mcp_tool WRITE = {
    "poke",  "Poke", "changes something", "{\"type\":\"object\"}", NULL, 1,
    t_write, NULL};

static struct mcp_server *server(int writes)
{
    struct mcp_server_info info = {"exa-test", "1.2.3", "hello", writes};
    struct mcp_server *s = mcp_server_create(&info);
    exa_error_t err = EXA_ERROR_INIT;
    assert_int_equal(mcp_server_add_tool(s, &ADD, &err), 0);
    assert_int_equal(mcp_server_add_tool(s, &WRITE, &err), 0);
    assert_int_equal(mcp_server_add_tool(s, &SLOW, &err), 0);
    return s;
}

/* Send text, parse the reply (NULL when none). */
static json_t *ask(struct mcp_server *s, struct mcp_session *sess,
                   const char *text, enum mcp_msg_kind *kind)
{
    char *r = mcp_handle_text(s, sess, text, strlen(text), kind, NULL);
    json_t *j;
    if (!r)
        return NULL;
    assert_null(strchr(r, '\n')); /* one line */
    j = json_loads(r, 0, NULL);
    assert_non_null(j);
    free(r);
    return j;
}

static long long err_code(const json_t *r)
{
    return jx_get_int(json_object_get(r, "error"), "code", 0);
}

static void test_envelope(void **state)
{
    struct mcp_server *s = server(0);
    struct mcp_session sess = MCP_SESSION_INIT;
    enum mcp_msg_kind k;
    json_t *r;
    static const struct {
        const char *in;
        int code;
        int id_null;
    } bad[] = {
        {"{", MCP_PARSE_ERROR, 1},
        {"", MCP_PARSE_ERROR, 1},
        {"5", MCP_INVALID_REQUEST, 1},
        {"\"x\"", MCP_INVALID_REQUEST, 1},
        {"[]", MCP_INVALID_REQUEST, 1},
        {"[{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}]",
         MCP_INVALID_REQUEST, 1},
        {"{\"jsonrpc\":\"2.0\",\"id\":null,\"method\":\"ping\"}",
         MCP_INVALID_REQUEST, 1},
        {"{\"jsonrpc\":\"2.0\",\"id\":1.5,\"method\":\"ping\"}",
         MCP_INVALID_REQUEST, 1},
        {"{\"jsonrpc\":\"2.0\",\"id\":{},\"method\":\"ping\"}",
         MCP_INVALID_REQUEST, 1},
        {"{\"jsonrpc\":\"1.0\",\"id\":1,\"method\":\"ping\"}",
         MCP_INVALID_REQUEST, 0},
        {"{\"id\":1,\"method\":\"ping\"}", MCP_INVALID_REQUEST, 0},
        {"{\"jsonrpc\":\"2.0\",\"id\":1}", MCP_INVALID_REQUEST, 0},
        {"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":7}", MCP_INVALID_REQUEST, 0},
        {"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\",\"params\":[1]}",
         MCP_INVALID_PARAMS, 0},
        {"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"no/such\"}",
         MCP_METHOD_NOT_FOUND, 0},
        {"{\"jsonrpc\":\"2.0\",\"id\":1,\"id\":2,\"method\":\"ping\"}",
         MCP_PARSE_ERROR, 1},
        {"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\","
         "\"params\":{}}",
         MCP_INVALID_PARAMS, 0},
        {"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"logging/setLevel\","
         "\"params\":{\"level\":\"loud\"}}",
         MCP_INVALID_PARAMS, 0},
    };
    (void)state;
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        r = ask(s, &sess, bad[i].in, NULL);
        assert_non_null(r);
        assert_string_equal(jx_get_str(r, "jsonrpc", ""), "2.0");
        if (err_code(r) != bad[i].code)
            fail_msg("case %zu '%s': code %lld", i, bad[i].in, err_code(r));
        assert_int_equal(json_is_null(json_object_get(r, "id")),
                         bad[i].id_null);
        assert_true(json_is_string(
            json_object_get(json_object_get(r, "error"), "message")));
        assert_int_equal(json_object_size(r), 3); /* jsonrpc, id, error */
        json_decref(r);
    }
    /* the id comes back exactly as it was sent: 0 and strings included */
    r = ask(s, &sess, "{\"method\":\"ping\",\"jsonrpc\":\"2.0\",\"id\":0}", &k);
    assert_int_equal(k, MCP_MSG_REQUEST);
    assert_true(json_is_integer(json_object_get(r, "id")));
    assert_int_equal(jx_get_int(r, "id", -1), 0);
    assert_int_equal(json_object_size(json_object_get(r, "result")), 0);
    json_decref(r);
    r = ask(s, &sess,
            "{\"jsonrpc\":\"2.0\",\"id\":\"a-1\",\"method\":\"ping\"}", NULL);
    assert_string_equal(jx_get_str(r, "id", ""), "a-1");
    json_decref(r);
    /* notifications and responses get nothing, unknown ones too */
    assert_null(ask(s, &sess,
                    "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/"
                    "initialized\"}",
                    &k));
    assert_int_equal(k, MCP_MSG_NOTIFICATION);
    assert_null(
        ask(s, &sess, "{\"jsonrpc\":\"2.0\",\"method\":\"no/such\"}", &k));
    assert_null(
        ask(s, &sess, "{\"jsonrpc\":\"2.0\",\"id\":9,\"result\":{}}", &k));
    assert_int_equal(k, MCP_MSG_RESPONSE);
    mcp_session_release(&sess);
    mcp_server_destroy(s);
}

static void test_initialize(void **state)
{
    struct mcp_server *s = server(0);
    static const char *const offered[] = {
        "2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05",
        "2024-10-07", "2023-01-01", "bogus"};
    static const char *const got[] = {"2025-11-25", "2025-06-18", "2025-03-26",
                                      "2024-11-05", "2024-10-07", "2025-11-25",
                                      "2025-11-25"};
    (void)state;
    for (size_t i = 0; i < 7; i++) {
        struct mcp_session sess = MCP_SESSION_INIT;
        char in[512];
        json_t *r, *res;
        snprintf(in, sizeof(in),
                 "{\"jsonrpc\":\"2.0\",\"id\":0,\"method\":\"initialize\","
                 "\"params\":{\"protocolVersion\":\"%s\",\"capabilities\":{},"
                 "\"clientInfo\":{\"name\":\"Claude \\\"x\\\"(1)\","
                 "\"version\":\"9\"}}}",
                 offered[i]);
        r = ask(s, &sess, in, NULL);
        res = json_object_get(r, "result");
        assert_string_equal(jx_get_str(res, "protocolVersion", ""), got[i]);
        assert_string_equal(
            jx_get_str(json_object_get(res, "serverInfo"), "name", ""),
            "exa-test");
        assert_true(json_is_object(
            json_object_get(json_object_get(res, "capabilities"), "tools")));
        assert_string_equal(jx_get_str(res, "instructions", ""), "hello");
        assert_true(sess.initialized);
        assert_string_equal(sess.client_name, "Claude \"x\"(1)");
        {
            char *actor = mcp_session_actor(&sess);
            assert_string_equal(actor, "mcp:Claude _x__1_ (unknown user)");
            free(actor);
        }
        json_decref(r);
        mcp_session_release(&sess);
    }
    mcp_server_destroy(s);
}

static json_t *call(struct mcp_server *s, struct mcp_session *sess,
                    const char *args)
{
    char in[1024];
    snprintf(in, sizeof(in),
             "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"tools/call\","
             "\"params\":{\"name\":\"add\"%s%s}}",
             args ? ",\"arguments\":" : "", args ? args : "");
    return ask(s, sess, in, NULL);
}

static void test_tools(void **state)
{
    struct mcp_server *s = server(0), *w = server(1);
    struct mcp_session sess = MCP_SESSION_INIT;
    json_t *r, *res, *tools;
    static const struct {
        const char *args, *msg;
    } bad[] = {
        {"{}", "'a' is required"},
        {"{\"a\":\"x\"}", "'a' must be an integer"},
        {"{\"a\":1.5}", "'a' must be an integer"},
        {"{\"a\":1001}", "'a' must be an integer <= 1000"},
        {"{\"a\":-1001}", "'a' must be an integer >= -1000"},
        {"{\"a\":1,\"c\":1}", "'c' is not an argument of this tool"},
        {"{\"a\":1,\"mode\":\"warp\"}", "'mode' must be one of \"fast\""},
        {"{\"a\":1,\"tag\":\"x\"}", "at least 2 characters"},
        {"{\"a\":1,\"tag\":\"\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\"}",
         "at most 3 characters"},
        {"[1]", "'arguments' must be an object"},
        {"{\"a\":404}", "no such thing"},
    };
    (void)state;
    r = ask(s, &sess,
            "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/list\"}", NULL);
    tools = json_object_get(json_object_get(r, "result"), "tools");
    assert_int_equal(json_array_size(tools), 2); /* no write tool */
    assert_string_equal(jx_get_str(json_array_get(tools, 0), "name", ""),
                        "add");
    assert_true(json_is_object(
        json_object_get(json_array_get(tools, 0), "outputSchema")));
    json_decref(r);
    r = ask(w, &sess,
            "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/list\"}", NULL);
    tools = json_object_get(json_object_get(r, "result"), "tools");
    assert_int_equal(json_array_size(tools), 3);
    json_decref(r);

    calls = 0;
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        r = call(s, &sess, bad[i].args);
        assert_int_equal(err_code(r), MCP_INVALID_PARAMS);
        if (!strstr(jx_get_str(json_object_get(r, "error"), "message", ""),
                    bad[i].msg))
            fail_msg("case %zu: %s", i,
                     jx_get_str(json_object_get(r, "error"), "message", ""));
        json_decref(r);
    }
    assert_int_equal(calls, 1); /* only the valid 404 call ran */

    r = call(s, &sess, "{\"a\":2,\"b\":3,\"mode\":\"fast\",\"tag\":\"ab\"}");
    res = json_object_get(r, "result");
    assert_int_equal(
        jx_get_int(json_object_get(res, "structuredContent"), "sum", 0), 5);
    assert_string_equal(
        jx_get_str(json_array_get(json_object_get(res, "content"), 0), "text",
                   ""),
        "{\"sum\":5,\"who\":null}");
    assert_null(json_object_get(res, "isError"));
    json_decref(r);
    r = call(s, &sess, NULL); /* no arguments: {} - a is required */
    assert_int_equal(err_code(r), MCP_INVALID_PARAMS);
    json_decref(r);
    r = call(s, &sess, "{\"a\":13}"); /* a tool failure is a result */
    res = json_object_get(r, "result");
    assert_true(json_is_true(json_object_get(res, "isError")));
    assert_string_equal(
        jx_get_str(json_array_get(json_object_get(res, "content"), 0), "text",
                   ""),
        "unlucky 'a'");
    json_decref(r);
    r = call(s, &sess, "{\"a\":666}"); /* outside its own schema */
    assert_int_equal(err_code(r), MCP_INTERNAL_ERROR);
    json_decref(r);
    r = ask(s, &sess,
            "{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":\"tools/call\","
            "\"params\":{\"name\":\"poke\"}}",
            NULL);
    assert_int_equal(err_code(r), MCP_INVALID_PARAMS); /* not registered */
    json_decref(r);
    mcp_server_destroy(s);
    mcp_server_destroy(w);
}

static void test_schema_registry(void **state)
{
    struct mcp_server_info info = {"x", "1", NULL, 0};
    struct mcp_server *s = mcp_server_create(&info);
    struct mcp_tool t = ADD;
    exa_error_t err = EXA_ERROR_INIT;
    (void)state;
    t.input_schema = "{\"type\":\"string\"}";
    assert_int_equal(mcp_server_add_tool(s, &t, &err), -1);
    assert_non_null(strstr(err.text, "tool 'add': inputSchema"));
    t.input_schema = "{nope";
    assert_int_equal(mcp_server_add_tool(s, &t, &err), -1);
    assert_int_equal(mcp_server_tool_count(s), 0);
    mcp_server_destroy(s);
}

/* ---- HTTP ---- */

static int fake_auth(void *ctx, const char *token,
                     const struct mcp_http_req *req, struct mcp_principal *out,
                     exa_error_t *err)
{
    (void)ctx, (void)req;
    if (!token)
        return exa_err(err, EXA_EFAIL, "no token");
    if (!strcmp(token, "tok-alice") || !strcmp(token, "tok-bob")) {
        snprintf(out->user, sizeof(out->user), "%s", token + 4);
        snprintf(out->role, sizeof(out->role), "admin");
        return 0;
    }
    if (!strcmp(token, "tok-alice-viewer")) {
        snprintf(out->user, sizeof(out->user), "alice");
        snprintf(out->role, sizeof(out->role), "viewer");
        return 0;
    }
    return exa_err(err, EXA_EFAIL, "unknown token");
}

static const char INIT[] =
    "{\"jsonrpc\":\"2.0\",\"id\":0,\"method\":\"initialize\",\"params\":{"
    "\"protocolVersion\":\"2025-11-25\",\"capabilities\":{},"
    "\"clientInfo\":{\"name\":\"t\",\"version\":\"1\"}}}";

static int post(struct mcp_http *h, const char *host, const char *origin,
                const char *sid, const char *authz, const char *body,
                struct mcp_http_resp *out)
{
    struct mcp_http_req req = {
        MCP_HTTP_POST,      host, origin,       sid,  NULL, authz,
        "application/json", body, strlen(body), NULL, NULL};
    free(out->body);
    memset(out, 0, sizeof(*out));
    mcp_http_handle(h, &req, out);
    return out->status;
}

static void test_http(void **state)
{
    struct mcp_server *s = server(0);
    struct mcp_http *h = mcp_http_create(s, NULL, NULL, 2);
    struct mcp_http_resp r = {0};
    char sid[33];
    const char *ping = "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}";
    static const char *const good_hosts[] = {
        "127.0.0.1:8080", "localhost", "LOCALHOST:1", "[::1]:443", "[::1]"};
    static const char *const bad_hosts[] = {
        "evil.example.com", "127.0.0.1.evil.com",
        "localhost:80x",    "[::1",
        "localhost:",       "",
        "127.0.0.2"};
    (void)state;
    for (size_t i = 0; i < 5; i++)
        assert_int_equal(post(h, good_hosts[i], NULL, NULL, NULL, INIT, &r),
                         200);
    assert_int_equal(mcp_http_session_count(h), 2); /* capped at 2 */
    for (size_t i = 0; i < 7; i++)
        assert_int_equal(post(h, bad_hosts[i], NULL, NULL, NULL, INIT, &r),
                         403);
    assert_int_equal(post(h, NULL, NULL, NULL, NULL, INIT, &r), 403);
    assert_int_equal(
        post(h, "localhost", "http://evil.example.com", NULL, NULL, INIT, &r),
        403);
    assert_int_equal(post(h, "localhost", "null", NULL, NULL, INIT, &r), 403);
    mcp_http_allow_host(h, "Exa.Example.Org");
    assert_int_equal(post(h, "exa.example.org:9477", "https://exa.example.org",
                          NULL, NULL, INIT, &r),
                     200);
    assert_int_equal(
        post(h, "127.0.0.1:1", "http://localhost:3000", NULL, NULL, INIT, &r),
        200);
    assert_string_equal(r.content_type, "application/json");
    assert_int_equal(strlen(r.session_id), 32);
    memcpy(sid, r.session_id, sizeof(sid));
    /* without a session only initialize is accepted */
    assert_int_equal(post(h, "localhost", NULL, NULL, NULL, ping, &r), 400);
    assert_int_equal(post(h, "localhost", NULL, "0123", NULL, ping, &r), 404);
    assert_int_equal(post(h, "localhost", NULL, sid, NULL, ping, &r), 200);
    assert_string_equal(r.session_id, "");
    assert_int_equal(post(h, "localhost", NULL, sid, NULL, INIT, &r), 400);
    assert_int_equal(post(h, "localhost", NULL, sid, NULL,
                          "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/"
                          "initialized\"}",
                          &r),
                     202);
    assert_null(r.body);
    assert_int_equal(post(h, "localhost", NULL, sid, NULL, "{oops", &r), 400);
    assert_int_equal(post(h, "localhost", NULL, sid, NULL, "[]", &r), 400);
    /* a JSON-RPC error answering a request is still 200 */
    assert_int_equal(post(h, "localhost", NULL, sid, NULL,
                          "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"x\"}",
                          &r),
                     200);
    {
        struct mcp_http_req g = {MCP_HTTP_GET, "localhost", NULL, sid, NULL,
                                 NULL,         NULL,        "",   0,   NULL,
                                 NULL};
        struct mcp_http_req v = {MCP_HTTP_POST, "localhost", NULL, sid,
                                 "1999-01-01",  NULL,        NULL, ping,
                                 strlen(ping),  NULL,        NULL};
        struct mcp_http_req v2 = {MCP_HTTP_POST, "localhost", NULL, sid,
                                  "2024-11-05",  NULL,        NULL, ping,
                                  strlen(ping),  NULL,        NULL};
        struct mcp_http_req ct = {
            MCP_HTTP_POST, "localhost", NULL,         sid,  NULL, NULL,
            "text/plain",  ping,        strlen(ping), NULL, NULL};
        struct mcp_http_req d = {MCP_HTTP_DELETE,
                                 "localhost",
                                 NULL,
                                 sid,
                                 NULL,
                                 NULL,
                                 NULL,
                                 "",
                                 0,
                                 NULL,
                                 NULL};
        free(r.body);
        memset(&r, 0, sizeof(r));
        mcp_http_handle(h, &g, &r);
        assert_int_equal(r.status, 405);
        assert_int_equal(r.allow, 1);
        free(r.body);
        memset(&r, 0, sizeof(r));
        mcp_http_handle(h, &v, &r);
        assert_int_equal(r.status, 400);
        free(r.body);
        memset(&r, 0, sizeof(r));
        mcp_http_handle(h, &v2, &r);
        assert_int_equal(r.status, 200);
        free(r.body);
        memset(&r, 0, sizeof(r));
        mcp_http_handle(h, &ct, &r);
        assert_int_equal(r.status, 415);
        free(r.body);
        memset(&r, 0, sizeof(r));
        mcp_http_handle(h, &d, &r);
        assert_int_equal(r.status, 200);
        free(r.body);
        memset(&r, 0, sizeof(r));
        mcp_http_handle(h, &d, &r);
        assert_int_equal(r.status, 404);
    }
    assert_int_equal(post(h, "localhost", NULL, sid, NULL, ping, &r), 404);
    free(r.body);
    mcp_http_destroy(h);
    mcp_server_destroy(s);
}

static void test_http_auth(void **state)
{
    struct mcp_server *s = server(0);
    struct mcp_http *h = mcp_http_create(s, fake_auth, NULL, 0);
    struct mcp_http_resp r = {0};
    char sid[33];
    const char *ping = "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}";
    (void)state;
    assert_int_equal(post(h, "localhost", NULL, NULL, NULL, INIT, &r), 401);
    assert_int_equal(r.www_authenticate, 1);
    assert_int_equal(post(h, "localhost", NULL, NULL, "Basic eDp5", INIT, &r),
                     401);
    assert_int_equal(post(h, "localhost", NULL, NULL, "Bearer nope", INIT, &r),
                     401);
    assert_non_null(strstr(r.body, "unknown token"));
    /* the Host check comes first: no token oracle for another site */
    assert_int_equal(
        post(h, "evil.example.com", NULL, NULL, "Bearer nope", INIT, &r), 403);
    assert_int_equal(
        post(h, "localhost", NULL, NULL, "bearer  tok-alice", INIT, &r), 200);
    memcpy(sid, r.session_id, sizeof(sid));
    assert_int_equal(
        post(h, "localhost", NULL, sid, "Bearer tok-alice", ping, &r), 200);
    assert_int_equal(post(h, "localhost", NULL, sid, NULL, ping, &r), 401);
    /* bob's token cannot use alice's session */
    assert_int_equal(
        post(h, "localhost", NULL, sid, "Bearer tok-bob", ping, &r), 403);
    free(r.body);
    mcp_http_destroy(h);
    mcp_server_destroy(s);
}

static json_t *t_role(void *ctx, const struct mcp_call *c, exa_error_t *err)
{
    (void)ctx, (void)err;
    return json_pack("{s:s?}", "role", c->sess->role);
}

/* A session opened with an admin token, used with a viewer token of the
 * same user (the admin one revoked meanwhile): the call runs as viewer
 * (redteam-s3 finding 1). */
static void test_http_role_per_request(void **state)
{
    static const struct mcp_tool ROLE = {
        "role", "Role", "the caller's role", "{\"type\":\"object\"}", NULL, 0,
        t_role, NULL};
    struct mcp_server *s = server(0);
    struct mcp_http *h = mcp_http_create(s, fake_auth, NULL, 0);
    struct mcp_http_resp r = {0};
    exa_error_t err = EXA_ERROR_INIT;
    char sid[33];
    const char *call = "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":"
                       "\"tools/call\",\"params\":{\"name\":\"role\"}}";
    (void)state;
    assert_int_equal(mcp_server_add_tool(s, &ROLE, &err), 0);
    assert_int_equal(
        post(h, "localhost", NULL, NULL, "Bearer tok-alice", INIT, &r), 200);
    memcpy(sid, r.session_id, sizeof(sid));
    assert_int_equal(
        post(h, "localhost", NULL, sid, "Bearer tok-alice", call, &r), 200);
    assert_non_null(strstr(r.body, "\"role\":\"admin\""));
    assert_int_equal(
        post(h, "localhost", NULL, sid, "Bearer tok-alice-viewer", call, &r),
        200);
    assert_non_null(strstr(r.body, "\"role\":\"viewer\""));
    assert_null(strstr(r.body, "admin"));
    free(r.body);
    mcp_http_destroy(h);
    mcp_server_destroy(s);
}

struct slow_call {
    struct mcp_http *h;
    char sid[33];
    struct mcp_http_resp r;
};

static void *slow_thread(void *arg)
{
    struct slow_call *sc = arg;
    const char *b = "{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"tools/call\","
                    "\"params\":{\"name\":\"slow\"}}";
    struct mcp_http_req req = {MCP_HTTP_POST, "localhost", NULL, sc->sid,
                               NULL,          NULL,        NULL, b,
                               strlen(b),     NULL,        NULL};
    mcp_http_handle(sc->h, &req, &sc->r);
    return NULL;
}

/* A slow call holds only its own session; ending that session while the
 * call runs answers 200 and frees it once the call is done (ASan checks
 * there is no use after free). */
static void test_http_parallel(void **state)
{
    struct mcp_server *s = server(0);
    struct mcp_http *h = mcp_http_create(s, NULL, NULL, 0);
    struct mcp_http_resp r = {0};
    struct slow_call sc;
    char other[33];
    pthread_t t;
    const char *ping = "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}";
    (void)state;
    memset(&sc, 0, sizeof(sc));
    sc.h = h;
    assert_int_equal(post(h, "localhost", NULL, NULL, NULL, INIT, &r), 200);
    memcpy(sc.sid, r.session_id, sizeof(sc.sid));
    assert_int_equal(post(h, "localhost", NULL, NULL, NULL, INIT, &r), 200);
    memcpy(other, r.session_id, sizeof(other));
    slow_started = slow_go = 0;
    assert_int_equal(pthread_create(&t, NULL, slow_thread, &sc), 0);
    pthread_mutex_lock(&slow_mu);
    while (!slow_started)
        pthread_cond_wait(&slow_cv, &slow_mu);
    pthread_mutex_unlock(&slow_mu);
    /* another session is answered while the slow call waits */
    assert_int_equal(post(h, "localhost", NULL, other, NULL, ping, &r), 200);
    {
        struct mcp_http_req d = {MCP_HTTP_DELETE,
                                 "localhost",
                                 NULL,
                                 sc.sid,
                                 NULL,
                                 NULL,
                                 NULL,
                                 "",
                                 0,
                                 NULL,
                                 NULL};
        free(r.body);
        memset(&r, 0, sizeof(r));
        mcp_http_handle(h, &d, &r);
        assert_int_equal(r.status, 200);
    }
    assert_int_equal(post(h, "localhost", NULL, sc.sid, NULL, ping, &r), 404);
    assert_int_equal(mcp_http_session_count(h), 1);
    pthread_mutex_lock(&slow_mu);
    slow_go = 1;
    pthread_cond_broadcast(&slow_cv);
    pthread_mutex_unlock(&slow_mu);
    pthread_join(t, NULL);
    assert_int_equal(sc.r.status, 200);
    assert_non_null(strstr(sc.r.body, "\"who\":\"t\""));
    free(sc.r.body);
    free(r.body);
    mcp_http_destroy(h);
    mcp_server_destroy(s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_envelope),
        cmocka_unit_test(test_initialize),
        cmocka_unit_test(test_tools),
        cmocka_unit_test(test_schema_registry),
        cmocka_unit_test(test_http),
        cmocka_unit_test(test_http_auth),
        cmocka_unit_test(test_http_role_per_request),
        cmocka_unit_test(test_http_parallel),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
