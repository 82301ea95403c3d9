/*
 * parse_message.h - the human message in a tool's output: what exa quotes
 * when a scheduler command (sinfo, squeue, sacct, sacctmgr, scontrol,
 * flux, nvidia-smi) failed or printed something else than its table, and
 * the one-line answers read whole (`sinfo --version`, `hostname`).
 *
 * It lives with the parsers so that no adapter, probe or collector splits
 * command output into lines itself (scripts/check-sched-lines.sh).
 */
#ifndef EXA_PARSE_MESSAGE_H
#define EXA_PARSE_MESSAGE_H

#include <stddef.h>

/*
 * The first non-blank line of buf[0..len) (buf may be NULL; a line ends
 * at a NUL byte too), blanks, tabs and CR trimmed, cut to at most max bytes at
 * a UTF-8 character boundary (max 0: no limit). Returns a malloc'ed string (the
 * caller frees it), or NULL when there is no non-blank line. Never fails
 * otherwise.
 */
char *tool_message(const char *buf, size_t len, size_t max);

#endif
