/*
 * tools.h - exa's MCP tools: the fleet, jobs, placement, capacity, the
 * scheduler queue, models and carbon as read tools over the shared views
 * (libview/view.h, redacted), and hpc_approve_cluster, the one write,
 * through the same governance call as `exa hpc approve`
 * (libfleet/governance.h gov_approve_reason). doc/mcp.md lists them.
 *
 * Each call opens platform.db ($EXAMLOPS_DB or the default path) and
 * clusters.yaml ($EXAMLOPS_HPC_REGISTRY or the default) afresh and
 * closes them before it answers, so a server that runs for days sees
 * what the CLI wrote meanwhile and holds no database lock between calls.
 *
 * Rights: a session with no role (stdio: the local OS user) may call
 * every registered tool, as the CLI may; over HTTP the token's role
 * decides (libauth: viewer reads, operator also places, admin also
 * approves). The approve is audited (event `cluster_approved`, actor
 * "mcp:<client name> (<user>)") inside the transaction that changes the
 * state, so no answer is sent for an approve that is not in the log.
 */
#ifndef EXA_MCP_TOOLS_H
#define EXA_MCP_TOOLS_H

#include "libmcp/mcp.h"
#include "libmcp/mcp_http.h"

/*
 * Register every exa tool on srv (hpc_approve_cluster only when srv was
 * created with allow_writes). 0 or -1 with err (a schema bug).
 */
int mcp_tools_register(struct mcp_server *srv, exa_error_t *err);

/*
 * EXAMLOPS_MCP_ALLOW_WRITES as a switch: 1 for "1", "true", "yes", "on"
 * (any case), 0 for unset or empty or "0", "false", "no", "off"; -1 for
 * anything else (the front end refuses it as a configuration error).
 */
int mcp_env_allow_writes(const char *value);

/*
 * An mcp_auth_f (libmcp/mcp_http.h) over platform.db's tokens: opens the
 * store, auth_verify()s the token and fills out with its user and role
 * name. ctx is the struct auth_throttle (libauth/throttle.h; may be NULL)
 * that counts the failures per req->remote: a failure while the address
 * is held back sets out->retry_after (429) and is not audited; any other
 * refused token is audited (`api_denied`, path /mcp, method, remote,
 * under the token's user when it was known); a missing token is counted
 * but not audited.
 */
int mcp_auth_store(void *ctx, const char *token, const struct mcp_http_req *req,
                   struct mcp_principal *out, exa_error_t *err);

#endif
