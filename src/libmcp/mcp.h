/*
 * mcp.h - a Model Context Protocol server core: JSON-RPC 2.0 framing and
 * dispatch, protocol version negotiation, and a tool registry with input
 * and output schemas (https://modelcontextprotocol.io/specification/
 * 2025-11-25, JSON-RPC 2.0: https://www.jsonrpc.org/specification).
 *
 * The core knows no transport: a front end hands it one message (a line
 * of stdio, an HTTP POST body) with the session it belongs to, and sends
 * the reply text it gets back, if any. The stdio loop and the streamable
 * HTTP rules (libmcp/mcp_http.h) are built on mcp_handle_text().
 *
 * What it answers:
 *   initialize          protocolVersion echoed when supported (MCP_VERSIONS),
 *                       else the newest; serverInfo, capabilities (tools,
 *                       logging), instructions; the session records the
 *                       client's name and version
 *   ping                {}
 *   logging/setLevel    {} for an RFC 5424 level name, kept in the session
 *   tools/list          the registered tools (write tools only when the
 *                       server was created with allow_writes)
 *   tools/call          arguments checked against the tool's inputSchema
 *                       (-32602 when they do not fit), then a result with
 *                       structuredContent and the same JSON as text, or
 *                       isError:true with one text item when the tool fails
 *   notifications/...   nothing (a notification never gets a reply)
 * and JSON-RPC errors: -32700 unparsable, -32600 not a request (also a
 * batch: the 2025-06-18 revision removed them), -32601 unknown method,
 * -32602 bad params or unknown tool, -32603 a tool broke an invariant.
 * Every reply is compact JSON on one line; NaN and Infinity cannot occur
 * (jansson refuses them, libutil/json.h turns them into null).
 */
#ifndef EXA_MCP_H
#define EXA_MCP_H

#include <jansson.h>
#include <stddef.h>

#include "libutil/error.h"

/* JSON-RPC 2.0 error codes (spec §5.1). */
#define MCP_PARSE_ERROR (-32700)
#define MCP_INVALID_REQUEST (-32600)
#define MCP_METHOD_NOT_FOUND (-32601)
#define MCP_INVALID_PARAMS (-32602)
#define MCP_INTERNAL_ERROR (-32603)

/* The revision exa speaks first, and every one it accepts, newest first
 * (the SDK 1.32.2 SUPPORTED_PROTOCOL_VERSIONS). */
#define MCP_LATEST_VERSION "2025-11-25"
extern const char *const MCP_VERSIONS[];
/* 1 when v is one of MCP_VERSIONS. */
int mcp_version_supported(const char *v);

/* Most bytes in one message; a longer stdio line is refused (-32600). */
#define MCP_MAX_MESSAGE (4u << 20)

/*
 * Who is on the other end of a session. user: the OS user (stdio) or the
 * token's user (HTTP); role: NULL for a local (stdio) user, who has the
 * CLI's rights, else "viewer", "operator" or "admin".
 */
struct mcp_session {
    int initialized;      /* initialize answered */
    char protocol[16];    /* negotiated revision ("" before initialize) */
    char *client_name;    /* clientInfo.name, NULL until initialize */
    char *client_version; /* clientInfo.version, NULL until initialize */
    char *user;           /* see above; NULL: unknown */
    char *role;           /* see above */
    char log_level[16];   /* logging/setLevel, default "info" */
    char remote[64];      /* HTTP: the peer address of the latest request
                             ("" unknown, stdio), for audit events */
};

#define MCP_SESSION_INIT                                                       \
    {                                                                          \
        0, "", NULL, NULL, NULL, NULL, "info", ""                              \
    }

/* Free the session's strings; the struct may be reused after
 * MCP_SESSION_INIT. */
void mcp_session_release(struct mcp_session *s);

/*
 * "mcp:<client name>" plus the user, as audit events name the actor:
 * "mcp:claude-desktop (alice)". The client name is cut to 64 bytes and
 * anything but [A-Za-z0-9._ -] becomes '_', so a client cannot forge
 * another actor's shape. Malloc'ed; the caller frees.
 */
char *mcp_session_actor(const struct mcp_session *s);

/* A tool call as the tool sees it. */
struct mcp_call {
    const char *tool;               /* the tool's name */
    const json_t *args;             /* an object, already validated */
    const struct mcp_session *sess; /* the caller */
};

/*
 * A tool: returns a new JSON object (the structuredContent, matching
 * output_schema) or NULL with err. err's code decides the answer:
 * EXA_ENOTFOUND and EXA_EUSAGE (a name that does not exist, an argument
 * the schema could not express) give JSON-RPC -32602; anything else a
 * result with isError:true and err's text, so a model can read why.
 */
typedef json_t *(*mcp_tool_f)(void *ctx, const struct mcp_call *call,
                              exa_error_t *err);

struct mcp_tool {
    const char *name;          /* ^[A-Za-z0-9_.-]{1,128}$ */
    const char *title;         /* short human name */
    const char *description;   /* what it returns, in the fields' words */
    const char *input_schema;  /* JSON Schema text, "type":"object" */
    const char *output_schema; /* JSON Schema text, "type":"object" */
    int writes;                /* 1: mutates; listed only with writes */
    mcp_tool_f fn;
    void *ctx;
};

struct mcp_server_info {
    const char *name;         /* serverInfo.name, "exa" */
    const char *version;      /* serverInfo.version */
    const char *instructions; /* or NULL */
    int allow_writes;         /* register tools with writes = 1 */
};

struct mcp_server;

/* A server with no tools; info's strings are copied. */
struct mcp_server *mcp_server_create(const struct mcp_server_info *info);
/* Free it; NULL is accepted. */
void mcp_server_destroy(struct mcp_server *srv);

/*
 * Register a tool (the struct is copied, its strings borrowed: use static
 * text). A writes tool is ignored unless the server allows writes. The
 * schemas are parsed here: returns 0, or -1 with err (EXA_EPARSE) naming
 * the tool when a schema is not a JSON object of "type":"object".
 */
int mcp_server_add_tool(struct mcp_server *srv, const struct mcp_tool *tool,
                        exa_error_t *err);
/*
 * Once its tools are registered a server is read-only: mcp_handle may run
 * in several threads at once, each on its own session (a session is
 * written by initialize and logging/setLevel, so one session's messages
 * must not run concurrently; libmcp/mcp_http.c locks each session).
 */

/* Number of tools tools/list shows. */
size_t mcp_server_tool_count(const struct mcp_server *srv);

/* What a message was, for the HTTP rules. */
enum mcp_msg_kind {
    MCP_MSG_INVALID = 0,  /* unparsable or not a request: an error reply */
    MCP_MSG_REQUEST,      /* a request: its reply follows */
    MCP_MSG_NOTIFICATION, /* no id: no reply */
    MCP_MSG_RESPONSE,     /* the client answered a request: no reply */
    MCP_MSG_BATCH,        /* a JSON array: refused with -32600 */
};

/*
 * Dispatch one parsed message (borrowed) for sess. Returns the reply, a
 * new JSON object, or NULL when the message gets none (a notification, or
 * a response from the client). *kind (may be NULL) says what the message
 * was; *was_initialize (may be NULL) is set to 1 when it was an
 * initialize request that succeeded, else 0.
 */
json_t *mcp_handle(struct mcp_server *srv, struct mcp_session *sess,
                   const json_t *msg, enum mcp_msg_kind *kind,
                   int *was_initialize);

/*
 * Parse buf (len bytes, need not be NUL-terminated; one JSON value,
 * surrounding white space allowed) and dispatch it. Returns the compact
 * one-line reply text (malloc'ed, no newline) or NULL when there is none.
 * kind and was_initialize as for mcp_handle (an unparsable text is
 * MCP_MSG_INVALID).
 */
char *mcp_handle_text(struct mcp_server *srv, struct mcp_session *sess,
                      const char *buf, size_t len, enum mcp_msg_kind *kind,
                      int *was_initialize);

/*
 * A JSON-RPC error reply: {"jsonrpc":"2.0","id":id,"error":{"code",
 * "message"}} with id borrowed (NULL: json null, only when no id could be
 * read). New reference.
 */
json_t *mcp_error_reply(const json_t *id, int code, const char *message);

/*
 * Check instance (borrowed) against the subset of JSON Schema (2020-12)
 * the tools use: type (object, array, string, integer, number, boolean,
 * null, or a list of them), properties, required, additionalProperties
 * false, items, enum, minimum, maximum, minLength, maxLength. Returns 0,
 * or -1 with err (EXA_EUSAGE) naming the path: "'gpus' must be an
 * integer >= 0". Keywords outside the subset are ignored.
 */
int mcp_schema_check(const json_t *schema, const json_t *instance,
                     exa_error_t *err);

#endif
