/*
 * models.c - the `exa models` group: model versions, lineage and cost.
 */
#include "cmd/groups.h"
#include "cmd/models_cost.h"

static const struct exa_cmd cmds[] = {
    { "cost", cmd_models_cost, MODELS_COST_USAGE, MODELS_COST_SUMMARY,
      MODELS_COST_HELP },
    { "cost-list", cmd_models_cost_list, MODELS_COST_LIST_USAGE,
      MODELS_COST_LIST_SUMMARY, NULL },
    { NULL },
};

const struct exa_group group_models = { "models", "model versions, lineage and cost", cmds };
