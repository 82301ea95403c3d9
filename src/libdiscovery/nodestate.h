/*
 * nodestate.h - normalize a Slurm node state token to exa's node states.
 *
 * Source of the tokens: sinfo(1) "NODE STATE CODES" (%t / %T / StateLong)
 * and StateComplete ("idle+drain+not_responding"), src/common/slurm_protocol
 * node_state_string(). The mapping and its judgment calls are those of
 * doc/formats.md "Slurm node states".
 */
#ifndef EXA_NODESTATE_H
#define EXA_NODESTATE_H

/*
 * Normalize token (as printed; case-insensitive; blanks trimmed) to one of
 * "idle", "allocated", "mixed", "drain", "down", "unknown" (static
 * strings). A single trailing flag character from "*~#!%$@^-+" is
 * applied per doc/formats.md ('*' makes idle/mixed/allocated down); compound
 * "base+flag+flag" tokens are resolved in doc/formats.md's order. Returns
 * NULL for a NULL or empty token; never fails otherwise ("unknown").
 */
const char *slurm_node_state_normalize(const char *token);

/* Non-zero when token looks like a node state (its base is in the table). */
int slurm_node_state_known(const char *token);

#endif
