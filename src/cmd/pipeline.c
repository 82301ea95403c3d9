/*
 * pipeline.c - the `exa pipeline` group and `exa train`.
 */
#include "cmd/groups.h"

int cmd_train(struct exa_ctx *ctx, int argc, char **argv)
{
    return out_usage(ctx, "exa train is not built yet");
}

static const struct exa_cmd cmds[] = {
    { NULL },
};

const struct exa_group group_pipeline = {
    "pipeline", "train models, inline (mock) or on a cluster", cmds
};
