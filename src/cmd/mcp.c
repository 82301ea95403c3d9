/*
 * mcp.c - `exa mcp serve`: exa's tools for agents over the Model Context
 * Protocol, on stdio (default) or streamable HTTP on loopback.
 *
 * stdio: one JSON-RPC message per line in, one reply per line out,
 * flushed after each (a pipe is fully buffered otherwise and the client
 * waits forever), nothing else ever on stdout; diagnostics go to stderr.
 * The server exits 0 at end of input, which is how clients stop it.
 *
 * http: the same endpoint that `exa serve` mounts at /mcp
 * (server/mcp_route.h), alone on its own listener; it prints "listening
 * on HOST:PORT" on stderr once bound (port 0 picks a free one) and runs
 * until SIGINT or SIGTERM.
 */
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cmd/groups.h"
#include "libmcp/mcp.h"
#include "libmcp/tools.h"
#include "libstore/audit.h"
#include "libutil/strbuf.h"
#include "libutil/xalloc.h"
#include "server/http.h"
#include "server/mcp_route.h"

#define MCP_DEFAULT_LISTEN "127.0.0.1:8765"

static const char INSTRUCTIONS[] =
    "exa's HPC fleet: clusters, nodes, placement, jobs, capacity, queues, "
    "models and carbon (read-only tools); hpc_approve_cluster when writes "
    "are enabled. doc/mcp.md.";

/*
 * Read one line of at most MCP_MAX_MESSAGE bytes into sb (without the
 * newline and a trailing CR). Returns 1 for a line, 0 at end of input,
 * 2 for a line that was too long (read to its end and dropped). Bytes are
 * counted, not strlen()ed: a NUL inside a line stays in it (the JSON
 * parser refuses it: -32700) and never joins the next line to it.
 */
static int read_line(FILE *in, struct strbuf *sb)
{
    int c, too_long = 0, got = 0;
    strbuf_setlen(sb, 0);
    while ((c = getc(in)) != EOF) {
        got = 1;
        if (c == '\n')
            break;
        if (too_long)
            continue;
        if (sb->len + 1 > MCP_MAX_MESSAGE) {
            too_long = 1;
            strbuf_setlen(sb, 0);
            continue;
        }
        strbuf_addch(sb, (char)c);
    }
    if (!got)
        return 0;
    if (too_long)
        return 2;
    if (sb->len && sb->buf[sb->len - 1] == '\r')
        strbuf_setlen(sb, sb->len - 1);
    return 1;
}

static int write_reply(const char *text)
{
    if (fputs(text, stdout) == EOF || fputc('\n', stdout) == EOF ||
        fflush(stdout) == EOF)
        return -1;
    return 0;
}

static int serve_stdio(struct exa_ctx *ctx, int allow_writes)
{
    struct mcp_server_info info = {"exa", EXA_VERSION, INSTRUCTIONS,
                                   allow_writes};
    struct mcp_server *srv = mcp_server_create(&info);
    struct mcp_session sess = MCP_SESSION_INIT;
    struct strbuf line = STRBUF_INIT;
    exa_error_t err = EXA_ERROR_INIT;
    int rc = 0, r;

    if (mcp_tools_register(srv, &err) < 0) {
        mcp_server_destroy(srv);
        return out_error(ctx, &err, NULL);
    }
    signal(SIGPIPE, SIG_IGN); /* a gone client is a write error, then exit */
    sess.user = audit_actor();
    if (!ctx->quiet)
        fprintf(stderr, "exa mcp: serving %zu tools on stdio%s\n",
                mcp_server_tool_count(srv),
                allow_writes ? " (writes enabled)" : "");
    while ((r = read_line(stdin, &line)) != 0) {
        char *reply = NULL;
        if (r == 2) {
            json_t *e = mcp_error_reply(NULL, MCP_INVALID_REQUEST,
                                        "message too large: more than 4 MiB");
            reply = json_dumps(e, JSON_COMPACT);
            json_decref(e);
        } else {
            size_t i = 0;
            while (i < line.len && strchr(" \t", line.buf[i]))
                i++;
            if (i == line.len) /* blank line: nothing to answer */
                continue;
            reply = mcp_handle_text(srv, &sess, line.buf, line.len, NULL, NULL);
        }
        if (reply && write_reply(reply) < 0) {
            free(reply);
            rc = 1; /* the client went away */
            break;
        }
        free(reply);
    }
    strbuf_release(&line);
    mcp_session_release(&sess);
    mcp_server_destroy(srv);
    return rc;
}

static int serve_http(struct exa_ctx *ctx, const char *listen, int allow_writes)
{
    exa_error_t err = EXA_ERROR_INIT;
    struct http_server *hs;
    struct mcp_mount *m;
    sigset_t set;
    int sig = 0;

    sigemptyset(&set);
    sigaddset(&set, SIGINT);
    sigaddset(&set, SIGTERM);
    pthread_sigmask(SIG_BLOCK, &set, NULL);
    hs = http_server_new();
    if (!(m = mcp_mount(hs, "/mcp", allow_writes, NULL, &err))) {
        http_server_free(hs);
        return out_error(ctx, &err, NULL);
    }
    if (http_server_listen(hs, listen, &err) < 0) {
        http_server_free(hs);
        mcp_unmount(m);
        return out_error(ctx, &err, NULL);
    }
    if (!http_server_is_loopback(hs)) {
        http_server_free(hs);
        mcp_unmount(m);
        return out_errorf(ctx, EXA_EUSAGE,
                          "exa serve --listen HOST:PORT (TLS, beyond loopback)",
                          "'exa mcp serve --transport http' listens on "
                          "loopback only, not on '%s'",
                          listen);
    }
    fprintf(stderr, "exa mcp: listening on %s:%d (/mcp, %zu tools%s)\n",
            strchr(listen, ':') == strrchr(listen, ':') ? "127.0.0.1" : "[::1]",
            http_server_port(hs), mcp_mount_tool_count(m),
            allow_writes ? ", writes enabled" : "");
    while (sigwait(&set, &sig) != 0)
        ;
    http_server_free(hs);
    mcp_unmount(m);
    return 0;
}

static int cmd_mcp_serve(struct exa_ctx *ctx, int argc, char **argv)
{
    static const struct option opts[] = {
        {"transport", required_argument, NULL, 't'},
        {"listen", required_argument, NULL, 'l'},
        {"allow-writes", no_argument, NULL, 'w'},
        {NULL, 0, NULL, 0},
    };
    const char *transport = "stdio", *listen = MCP_DEFAULT_LISTEN;
    const char *env = getenv("EXAMLOPS_MCP_ALLOW_WRITES");
    int writes = mcp_env_allow_writes(env), c, listen_set = 0;

    optind = 0;
    opterr = 0;
    while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
        switch (c) {
        case 't':
            transport = optarg;
            break;
        case 'l':
            listen = optarg;
            listen_set = 1;
            break;
        case 'w':
            writes = 1;
            break;
        default:
            return out_usage(ctx, "unknown or incomplete option '%s'",
                             argv[optind - 1]);
        }
    }
    if (optind < argc)
        return out_usage(ctx, "unexpected argument '%s'", argv[optind]);
    if (writes < 0)
        return out_errorf(ctx, EXA_ECONFIG, NULL,
                          "EXAMLOPS_MCP_ALLOW_WRITES is '%s': expected 1, "
                          "true, yes, on, 0, false, no or off",
                          env);
    if (!strcmp(transport, "stdio")) {
        if (listen_set)
            return out_usage(ctx, "--listen needs --transport http");
        return serve_stdio(ctx, writes);
    }
    if (!strcmp(transport, "http"))
        return serve_http(ctx, listen, writes);
    return out_usage(ctx, "--transport must be 'stdio' or 'http', got '%s'",
                     transport);
}

static const struct exa_cmd cmds[] = {
    {"serve", cmd_mcp_serve,
     "[--transport stdio|http] [--listen HOST:PORT] [--allow-writes]",
     "serve exa's tools to agents over the Model Context Protocol",
     "Read-only tools: hpc_clusters, hpc_nodes, hpc_place, hpc_jobs,\n"
     "hpc_capacity, hpc_queue, models_list, models_show,\n"
     "finops_carbon_report. hpc_approve_cluster is registered only with\n"
     "--allow-writes or EXAMLOPS_MCP_ALLOW_WRITES=1|true|yes|on.\n"
     "--transport stdio (default): newline-delimited JSON-RPC on\n"
     "stdin/stdout. --transport http: streamable HTTP at /mcp on\n"
     "--listen (default 127.0.0.1:8765, loopback only; port 0 picks one),\n"
     "every request with 'Authorization: Bearer TOKEN' ('exa auth token\n"
     "create'). See doc/mcp.md.\n\n"
     "Options:\n"
     "  --transport T         stdio (default) or http\n"
     "  --listen HOST:PORT    the HTTP address, loopback only (default\n"
     "                        127.0.0.1:8765; port 0 picks a free one)\n"
     "  --allow-writes        also register hpc_approve_cluster (default\n"
     "                        off; EXAMLOPS_MCP_ALLOW_WRITES)\n"
     "Example: exa mcp serve --transport http --listen 127.0.0.1:8765"},
    {NULL},
};

const struct exa_group group_mcp = {
    "mcp", "serve exa's tools to agents (Model Context Protocol)", cmds};
