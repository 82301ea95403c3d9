/*
 * zoo.c - the built-in model and dataset tables (see zoo.h). New models
 * join by adding a row here and a fit function in train.c.
 */
#include "libpipeline/zoo.h"

#include <stdlib.h>
#include <strings.h>
#include <unistd.h>

#include "libutil/strbuf.h"
#include "libutil/xalloc.h"

static const struct zoo_model models[] = {
    {"JPCP",
     "Job Power Consumption Predictor: random forest over num_nodes_req "
     "and user_id",
     "regression", "power_per_node_watts"},
};

static const struct zoo_dataset datasets[] = {
    {"PM100Dataset", "PM100 job table (CINECA Marconi100, 2020) as CSV",
     "EXAMLOPS_PM100_PATH", "pm100-sample.csv"},
};

#define NMODELS (sizeof(models) / sizeof(models[0]))
#define NDATASETS (sizeof(datasets) / sizeof(datasets[0]))

static const char *const model_names[] = {"JPCP", NULL};
static const char *const dataset_names[] = {"PM100Dataset", NULL};

const char *const *zoo_model_names(void)
{
    return model_names;
}

const char *const *zoo_dataset_names(void)
{
    return dataset_names;
}

static void join(struct strbuf *sb, const char *const *names)
{
    for (size_t i = 0; names[i]; i++)
        strbuf_addf(sb, "%s%s", i ? ", " : "", names[i]);
}

const struct zoo_model *zoo_model_find(const char *name, exa_error_t *err)
{
    struct strbuf sb = STRBUF_INIT;
    for (size_t i = 0; name && i < NMODELS; i++)
        if (!strcasecmp(name, models[i].name))
            return &models[i];
    join(&sb, model_names);
    exa_err(err, EXA_EUSAGE, "unknown model '%s': known models: %s",
            name ? name : "", sb.buf);
    strbuf_release(&sb);
    return NULL;
}

const struct zoo_dataset *zoo_dataset_find(const char *name, exa_error_t *err)
{
    struct strbuf sb = STRBUF_INIT;
    for (size_t i = 0; name && i < NDATASETS; i++)
        if (!strcasecmp(name, datasets[i].name))
            return &datasets[i];
    join(&sb, dataset_names);
    exa_err(err, EXA_EUSAGE, "unknown dataset '%s': known datasets: %s",
            name ? name : "", sb.buf);
    strbuf_release(&sb);
    return NULL;
}

char *zoo_dataset_default_path(const struct zoo_dataset *d, const char *datadir,
                               const char *srcdir)
{
    const char *e = d->path_env ? getenv(d->path_env) : NULL;
    char *p;
    if (e && *e)
        return xstrdup(e);
    if (datadir && *datadir) {
        p = xstrfmt("%s/%s", datadir, d->sample_file);
        if (!access(p, F_OK))
            return p;
        free(p);
    }
    if (srcdir && *srcdir) {
        p = xstrfmt("%s/data/%s", srcdir, d->sample_file);
        if (!access(p, F_OK))
            return p;
        free(p);
    }
    if (datadir && *datadir)
        return xstrfmt("%s/%s", datadir, d->sample_file);
    return xstrfmt("data/%s", d->sample_file);
}
