/*
 * hpc.c - the `exa hpc` group: clusters, jobs and the scheduler adapter.
 */
#include "cmd/groups.h"

static const struct exa_cmd cmds[] = {
    { NULL },
};

const struct exa_group group_hpc = { "hpc", "clusters, jobs and the scheduler adapter", cmds };
