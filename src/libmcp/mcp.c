/*
 * mcp.c - JSON-RPC 2.0 envelope checks and the MCP method table.
 *
 * The envelope rules are the ones the official SDK client enforces on
 * what it receives (shared/E2E-TESTING.md A1): exactly jsonrpc, id and
 * one of result/error at the top level, the id echoed as it came, never
 * "id": null in the answer to a request that had an id. Requests are
 * checked as strictly as the specification allows, so that what reaches
 * a tool is a well-formed object: an id is a string or an integer (MCP
 * forbids null), params an object, arguments an object that fits the
 * tool's inputSchema.
 */
#include "libmcp/mcp.h"

#include <stdlib.h>
#include <string.h>

#include "libutil/json.h"
#include "libutil/strbuf.h"
#include "libutil/xalloc.h"

const char *const MCP_VERSIONS[] = {"2025-11-25", "2025-06-18", "2025-03-26",
                                    "2024-11-05", "2024-10-07", NULL};

int mcp_version_supported(const char *v)
{
    for (size_t i = 0; v && MCP_VERSIONS[i]; i++)
        if (!strcmp(v, MCP_VERSIONS[i]))
            return 1;
    return 0;
}

struct tool_entry {
    struct mcp_tool t;
    json_t *input, *output; /* parsed schemas */
};

struct mcp_server {
    char *name, *version, *instructions;
    int allow_writes;
    struct tool_entry *tools;
    size_t ntools, alloc;
};

void mcp_session_release(struct mcp_session *s)
{
    if (!s)
        return;
    free(s->client_name);
    free(s->client_version);
    free(s->user);
    free(s->role);
    s->client_name = s->client_version = s->user = s->role = NULL;
}

char *mcp_session_actor(const struct mcp_session *s)
{
    struct strbuf sb = STRBUF_INIT;
    const char *c =
        s && s->client_name && *s->client_name ? s->client_name : "unknown";
    strbuf_addstr(&sb, "mcp:");
    for (size_t i = 0; c[i] && i < 64; i++) {
        unsigned char ch = (unsigned char)c[i];
        int okc = (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') ||
                  (ch >= '0' && ch <= '9') || ch == '.' || ch == '_' ||
                  ch == '-' || ch == ' ';
        strbuf_addch(&sb, okc ? ch : '_');
    }
    strbuf_addf(&sb, " (%s)", s && s->user ? s->user : "unknown user");
    return strbuf_detach(&sb, NULL);
}

struct mcp_server *mcp_server_create(const struct mcp_server_info *info)
{
    struct mcp_server *srv = xcalloc(1, sizeof(*srv));
    srv->name = xstrdup(info->name ? info->name : "exa");
    srv->version = xstrdup(info->version ? info->version : "0");
    srv->instructions = info->instructions ? xstrdup(info->instructions) : NULL;
    srv->allow_writes = info->allow_writes;
    return srv;
}

void mcp_server_destroy(struct mcp_server *srv)
{
    if (!srv)
        return;
    for (size_t i = 0; i < srv->ntools; i++) {
        json_decref(srv->tools[i].input);
        json_decref(srv->tools[i].output);
    }
    free(srv->tools);
    free(srv->name);
    free(srv->version);
    free(srv->instructions);
    free(srv);
}

static json_t *parse_schema(const char *name, const char *what,
                            const char *text, exa_error_t *err)
{
    json_error_t je;
    json_t *s = text ? json_loads(text, JSON_REJECT_DUPLICATES, &je) : NULL;
    if (!s || !json_is_object(s) ||
        strcmp(jx_get_str(s, "type", ""), "object")) {
        json_decref(s);
        exa_err(err, EXA_EPARSE,
                "tool '%s': %s is not a JSON Schema of type object%s%s", name,
                what, text && !s ? ": " : "", text && !s ? je.text : "");
        return NULL;
    }
    return s;
}

int mcp_server_add_tool(struct mcp_server *srv, const struct mcp_tool *tool,
                        exa_error_t *err)
{
    struct tool_entry e;
    if (tool->writes && !srv->allow_writes)
        return 0;
    memset(&e, 0, sizeof(e));
    e.t = *tool;
    if (!(e.input =
              parse_schema(tool->name, "inputSchema", tool->input_schema, err)))
        return -1;
    if (tool->output_schema &&
        !(e.output = parse_schema(tool->name, "outputSchema",
                                  tool->output_schema, err))) {
        json_decref(e.input);
        return -1;
    }
    ALLOC_GROW(srv->tools, srv->ntools + 1, srv->alloc);
    srv->tools[srv->ntools++] = e;
    return 0;
}

size_t mcp_server_tool_count(const struct mcp_server *srv)
{
    return srv->ntools;
}

/* ---- replies ---- */

static json_t *reply(const json_t *id, json_t *result)
{
    json_t *r = json_object();
    json_object_set_new(r, "jsonrpc", json_string("2.0"));
    json_object_set(r, "id", (json_t *)id);
    json_object_set_new(r, "result", result);
    return r;
}

json_t *mcp_error_reply(const json_t *id, int code, const char *message)
{
    json_t *r = json_object(), *e = json_object();
    json_object_set_new(e, "code", json_integer(code));
    json_object_set_new(e, "message", jx_str(message));
    json_object_set_new(r, "jsonrpc", json_string("2.0"));
    if (id)
        json_object_set(r, "id", (json_t *)id);
    else
        json_object_set_new(r, "id", json_null());
    json_object_set_new(r, "error", e);
    return r;
}

static json_t *errorf(const json_t *id, int code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static json_t *errorf(const json_t *id, int code, const char *fmt, ...)
{
    struct strbuf sb = STRBUF_INIT;
    va_list ap;
    json_t *r;
    va_start(ap, fmt);
    strbuf_vaddf(&sb, fmt, ap);
    va_end(ap);
    r = mcp_error_reply(id, code, sb.buf);
    strbuf_release(&sb);
    return r;
}

/* ---- methods ---- */

static json_t *m_initialize(struct mcp_server *srv, struct mcp_session *sess,
                            const json_t *id, const json_t *params)
{
    const json_t *v = json_object_get(params, "protocolVersion");
    const json_t *ci = json_object_get(params, "clientInfo");
    const json_t *caps = json_object_get(params, "capabilities");
    const char *want, *name, *ver;
    json_t *res, *cap, *info;

    if (!json_is_string(v))
        return errorf(id, MCP_INVALID_PARAMS,
                      "initialize: 'protocolVersion' must be a string");
    if (caps && !json_is_object(caps))
        return errorf(id, MCP_INVALID_PARAMS,
                      "initialize: 'capabilities' must be an object");
    if (ci && !json_is_object(ci))
        return errorf(id, MCP_INVALID_PARAMS,
                      "initialize: 'clientInfo' must be an object");
    name = jx_get_str(ci, "name", NULL);
    ver = jx_get_str(ci, "version", NULL);
    want = json_string_value(v);
    /* the client's revision when exa speaks it, else exa's newest: the
     * client then decides whether it can go on (spec: lifecycle,
     * version negotiation) */
    xsnprintf(sess->protocol, sizeof(sess->protocol), "%s",
              mcp_version_supported(want) ? want : MCP_LATEST_VERSION);
    free(sess->client_name);
    free(sess->client_version);
    sess->client_name = name ? xstrdup(name) : NULL;
    sess->client_version = ver ? xstrdup(ver) : NULL;
    sess->initialized = 1;

    res = json_object();
    json_object_set_new(res, "protocolVersion", json_string(sess->protocol));
    cap = json_object();
    json_object_set_new(cap, "tools", json_pack("{s:b}", "listChanged", 0));
    json_object_set_new(cap, "logging", json_object());
    json_object_set_new(res, "capabilities", cap);
    info = json_object();
    json_object_set_new(info, "name", jx_str(srv->name));
    json_object_set_new(info, "version", jx_str(srv->version));
    json_object_set_new(res, "serverInfo", info);
    if (srv->instructions)
        json_object_set_new(res, "instructions", jx_str(srv->instructions));
    return reply(id, res);
}

/* RFC 5424 severities, as MCP's LoggingLevel names them. */
static const char *const LEVELS[] = {"debug",   "info",      "notice",
                                     "warning", "error",     "critical",
                                     "alert",   "emergency", NULL};

static json_t *m_set_level(struct mcp_session *sess, const json_t *id,
                           const json_t *params)
{
    const char *l = jx_get_str(params, "level", NULL);
    for (size_t i = 0; l && LEVELS[i]; i++)
        if (!strcmp(l, LEVELS[i])) {
            xsnprintf(sess->log_level, sizeof(sess->log_level), "%s", l);
            return reply(id, json_object());
        }
    return errorf(id, MCP_INVALID_PARAMS,
                  "logging/setLevel: 'level' must be one of debug, info, "
                  "notice, warning, error, critical, alert, emergency");
}

static json_t *tool_json(const struct tool_entry *e)
{
    json_t *t = json_object(), *ann = json_object();
    json_object_set_new(t, "name", json_string(e->t.name));
    if (e->t.title)
        json_object_set_new(t, "title", jx_str(e->t.title));
    json_object_set_new(t, "description", jx_str(e->t.description));
    /* copies: the registry's schemas are shared by every thread */
    json_object_set_new(t, "inputSchema", json_deep_copy(e->input));
    if (e->output)
        json_object_set_new(t, "outputSchema", json_deep_copy(e->output));
    /* hints for clients (spec: ToolAnnotations); not a security boundary */
    json_object_set_new(ann, "readOnlyHint", json_boolean(!e->t.writes));
    json_object_set_new(ann, "destructiveHint", json_false());
    json_object_set_new(ann, "idempotentHint", json_boolean(!e->t.writes));
    json_object_set_new(ann, "openWorldHint", json_false());
    json_object_set_new(t, "annotations", ann);
    return t;
}

static json_t *m_tools_list(struct mcp_server *srv, const json_t *id,
                            const json_t *params)
{
    json_t *res = json_object(), *arr = json_array();
    const json_t *cur = json_object_get(params, "cursor");
    if (cur && !json_is_string(cur)) {
        json_decref(res);
        json_decref(arr);
        return errorf(id, MCP_INVALID_PARAMS,
                      "tools/list: 'cursor' must be a string");
    }
    /* one page: there is never a nextCursor, so any cursor is past it */
    for (size_t i = 0; !cur && i < srv->ntools; i++)
        json_array_append_new(arr, tool_json(&srv->tools[i]));
    json_object_set_new(res, "tools", arr);
    return reply(id, res);
}

static json_t *text_content(const char *text)
{
    json_t *arr = json_array(), *item = json_object();
    json_object_set_new(item, "type", json_string("text"));
    json_object_set_new(item, "text", jx_str(text));
    json_array_append_new(arr, item);
    return arr;
}

static json_t *m_tools_call(struct mcp_server *srv, struct mcp_session *sess,
                            const json_t *id, const json_t *params)
{
    const char *name = jx_get_str(params, "name", NULL);
    const json_t *args = json_object_get(params, "arguments");
    json_t *empty = NULL, *out, *res;
    const struct tool_entry *e = NULL;
    exa_error_t err = EXA_ERROR_INIT;
    struct mcp_call call;
    char *text;

    if (!name)
        return errorf(id, MCP_INVALID_PARAMS,
                      "tools/call: 'name' must be a string");
    for (size_t i = 0; i < srv->ntools && !e; i++)
        if (!strcmp(srv->tools[i].t.name, name))
            e = &srv->tools[i];
    if (!e)
        return errorf(id, MCP_INVALID_PARAMS, "unknown tool: '%.128s'", name);
    if (args && json_is_null(args))
        args = NULL;
    if (args && !json_is_object(args))
        return errorf(id, MCP_INVALID_PARAMS,
                      "tool '%s': 'arguments' must be an object", name);
    if (!args)
        args = empty = json_object();
    if (mcp_schema_check(e->input, args, &err) < 0) {
        json_decref(empty);
        return errorf(id, MCP_INVALID_PARAMS, "tool '%s': %s", name, err.text);
    }
    call.tool = name;
    call.args = args;
    call.sess = sess;
    out = e->t.fn(e->t.ctx, &call, &err);
    json_decref(empty);
    if (!out) {
        if (err.code == EXA_ENOTFOUND || err.code == EXA_EUSAGE)
            return errorf(id, MCP_INVALID_PARAMS, "tool '%s': %s", name,
                          err.text);
        res = json_object();
        json_object_set_new(
            res, "content",
            text_content(err.text[0] ? err.text : "the tool failed"));
        json_object_set_new(res, "isError", json_true());
        return reply(id, res);
    }
    if (!json_is_object(out) ||
        (e->output && mcp_schema_check(e->output, out, &err) < 0)) {
        /* a tool whose answer breaks its own schema is a bug: say so
         * rather than send what the client would reject */
        json_decref(out);
        return errorf(id, MCP_INTERNAL_ERROR,
                      "tool '%s' produced a result outside its output "
                      "schema: %s",
                      name, err.text[0] ? err.text : "not an object");
    }
    text = json_dumps(out, JSON_COMPACT);
    if (!text) {
        json_decref(out);
        return errorf(id, MCP_INTERNAL_ERROR,
                      "tool '%s' produced a result that cannot be encoded",
                      name);
    }
    res = json_object();
    json_object_set_new(res, "content", text_content(text));
    json_object_set_new(res, "structuredContent", out);
    free(text);
    return reply(id, res);
}

/* An id is a string or an integer (MCP: RequestId; never null). */
static int id_ok(const json_t *id)
{
    return json_is_string(id) || json_is_integer(id);
}

static json_t *dispatch(struct mcp_server *srv, struct mcp_session *sess,
                        const json_t *msg, enum mcp_msg_kind *kind,
                        int *was_init)
{
    const json_t *id, *m, *params;
    const char *method;

    if (json_is_array(msg)) {
        *kind = MCP_MSG_BATCH;
        return mcp_error_reply(NULL, MCP_INVALID_REQUEST,
                               "batch requests are not supported (removed "
                               "in protocol revision 2025-06-18)");
    }
    if (!json_is_object(msg))
        return mcp_error_reply(NULL, MCP_INVALID_REQUEST,
                               "invalid request: expected a JSON object");
    id = json_object_get(msg, "id");
    m = json_object_get(msg, "method");
    params = json_object_get(msg, "params");
    if (id && !id_ok(id))
        return mcp_error_reply(NULL, MCP_INVALID_REQUEST,
                               "invalid request: 'id' must be a string or "
                               "an integer");
    if (strcmp(jx_get_str(msg, "jsonrpc", ""), "2.0"))
        return mcp_error_reply(id, MCP_INVALID_REQUEST,
                               "invalid request: 'jsonrpc' must be \"2.0\"");
    if (!m && id &&
        (json_object_get(msg, "result") || json_object_get(msg, "error"))) {
        *kind = MCP_MSG_RESPONSE; /* exa sends no requests: ignore it */
        return NULL;
    }
    if (!json_is_string(m))
        return mcp_error_reply(id, MCP_INVALID_REQUEST,
                               "invalid request: 'method' must be a string");
    method = json_string_value(m);
    if (!id) {
        /* notifications/initialized, cancelled, progress...: no reply
         * ever, not even for an unknown method (JSON-RPC §4.1) */
        *kind = MCP_MSG_NOTIFICATION;
        return NULL;
    }
    *kind = MCP_MSG_REQUEST;
    if (params && json_is_null(params))
        params = NULL;
    if (params && !json_is_object(params))
        return errorf(id, MCP_INVALID_PARAMS,
                      "%.64s: 'params' must be an object", method);
    if (!strcmp(method, "initialize")) {
        json_t *r = m_initialize(srv, sess, id, params);
        if (was_init && json_object_get(r, "result"))
            *was_init = 1;
        return r;
    }
    if (!strcmp(method, "ping"))
        return reply(id, json_object());
    if (!strcmp(method, "tools/list"))
        return m_tools_list(srv, id, params);
    if (!strcmp(method, "tools/call"))
        return m_tools_call(srv, sess, id, params);
    if (!strcmp(method, "logging/setLevel"))
        return m_set_level(sess, id, params);
    return errorf(id, MCP_METHOD_NOT_FOUND, "method not found: '%.128s'",
                  method);
}

json_t *mcp_handle(struct mcp_server *srv, struct mcp_session *sess,
                   const json_t *msg, enum mcp_msg_kind *kind,
                   int *was_initialize)
{
    enum mcp_msg_kind k = MCP_MSG_INVALID;
    json_t *r;
    if (was_initialize)
        *was_initialize = 0;
    r = dispatch(srv, sess, msg, &k, was_initialize);
    if (kind)
        *kind = k;
    return r;
}

char *mcp_handle_text(struct mcp_server *srv, struct mcp_session *sess,
                      const char *buf, size_t len, enum mcp_msg_kind *kind,
                      int *was_initialize)
{
    enum mcp_msg_kind k = MCP_MSG_INVALID;
    json_error_t je;
    json_t *msg = NULL, *out;
    char *text;

    if (was_initialize)
        *was_initialize = 0;
    if (len > MCP_MAX_MESSAGE)
        out = mcp_error_reply(NULL, MCP_INVALID_REQUEST,
                              "message too large: more than 4 MiB");
    else if (!(msg = json_loadb(
                   buf, len, JSON_DECODE_ANY | JSON_REJECT_DUPLICATES, &je))) {
        struct strbuf sb = STRBUF_INIT;
        strbuf_addf(&sb, "parse error: %s at byte %d", je.text, je.position);
        out = mcp_error_reply(NULL, MCP_PARSE_ERROR, sb.buf);
        strbuf_release(&sb);
    } else
        out = dispatch(srv, sess, msg, &k, was_initialize);
    json_decref(msg);
    if (kind)
        *kind = k;
    if (!out)
        return NULL;
    text = json_dumps(out, JSON_COMPACT);
    json_decref(out);
    return text;
}
