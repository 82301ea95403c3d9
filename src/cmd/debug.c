/*
 * debug.c - the `exa debug` group: see what exa understood of scheduler output.
 */
#include "cmd/groups.h"

static const struct exa_cmd cmds[] = {
    { NULL },
};

const struct exa_group group_debug = { "debug", "see what exa understood of scheduler output", cmds };
