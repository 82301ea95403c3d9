/*
 * models.c - the `exa models` group: model versions, lineage and cost.
 */
#include "cmd/groups.h"

static const struct exa_cmd cmds[] = {
    { NULL },
};

const struct exa_group group_models = { "models", "model versions, lineage and cost", cmds };
