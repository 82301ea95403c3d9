/*
 * mcp_route.h - MCP's streamable HTTP endpoint on the `exa serve` router
 * (server/http.h): the glue between the router's requests and the rules
 * in libmcp/mcp_http.h.
 */
#ifndef EXA_MCP_ROUTE_H
#define EXA_MCP_ROUTE_H

#include "libmcp/mcp_http.h"
#include "server/http.h"

/*
 * Route POST, GET and DELETE of path (normally "/mcp") on srv to h
 * (borrowed; it must outlive srv's listening). Other methods get the
 * router's 405.
 */
void mcp_http_register(struct http_server *srv, const char *path,
                       struct mcp_http *h);

/*
 * The whole MCP endpoint for a router: the exa tools (libmcp/tools.h;
 * hpc_approve_cluster when allow_writes), the HTTP rules with bearer
 * tokens checked against platform.db (libauth auth_verify; refusals are
 * audited as `api_denied`), routed at path. Failed authentications count
 * in thr (borrowed, shared with the REST API: libauth/throttle.h; NULL:
 * the mount makes its own with the defaults). Extra allowed Host names
 * come from EXAMLOPS_MCP_ALLOWED_HOSTS (comma-separated). NULL with err
 * when a tool schema is broken.
 */
struct mcp_mount;
struct auth_throttle;
struct mcp_mount *mcp_mount(struct http_server *srv, const char *path,
                            int allow_writes, struct auth_throttle *thr,
                            exa_error_t *err);
/*
 * mcp_mount at "/mcp" with writes from EXAMLOPS_MCP_ALLOW_WRITES
 * (libmcp/tools.h mcp_env_allow_writes), for `exa serve`: NULL with err
 * (EXA_ECONFIG) when the variable holds something else.
 */
struct mcp_mount *mcp_mount_env(struct http_server *srv,
                                struct auth_throttle *thr, exa_error_t *err);
/* Number of tools the mount's server lists. */
size_t mcp_mount_tool_count(const struct mcp_mount *m);
/* Free after the router stopped listening; NULL is accepted. */
void mcp_unmount(struct mcp_mount *m);

#endif
