/*
 * finops.c - the `exa finops` group: GPU-hours, cost and carbon.
 */
#include "cmd/groups.h"

static const struct exa_cmd cmds[] = {
    { NULL },
};

const struct exa_group group_finops = { "finops", "GPU-hours, cost and carbon", cmds };
