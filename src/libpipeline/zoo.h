/*
 * zoo.h - the model zoo and dataset table: which model and dataset names
 * `exa pipeline run` and `exa train` accept (doc/reference.md §5).
 *
 * Built in: the model JPCP ("Job Power Consumption Predictor", a random
 * forest over categorical job features) and the dataset PM100Dataset
 * (the PM100 job table as CSV, libpipeline/pm100.h). Names match
 * case-insensitively; the canonical spelling is what gets recorded.
 */
#ifndef EXA_ZOO_H
#define EXA_ZOO_H

#include "libutil/error.h"

struct zoo_model {
    const char *name; /* "JPCP" */
    const char *summary;
    const char *task;   /* "regression" */
    const char *target; /* what is predicted, with its unit */
};

struct zoo_dataset {
    const char *name; /* "PM100Dataset" */
    const char *summary;
    const char *path_env;    /* env var naming the file, or NULL */
    const char *sample_file; /* file name of the bundled sample */
};

/*
 * Look up a model / dataset by name. Returns the static entry, or NULL
 * with err (EXA_EUSAGE): "unknown model 'X': known models: JPCP".
 */
const struct zoo_model *zoo_model_find(const char *name, exa_error_t *err);
const struct zoo_dataset *zoo_dataset_find(const char *name, exa_error_t *err);

/* NULL-terminated static lists of the known names. */
const char *const *zoo_model_names(void);
const char *const *zoo_dataset_names(void);

/*
 * The file to read when no --dataset-path is given: $<path_env> when set;
 * else <datadir>/<sample_file> when it exists; else
 * <srcdir>/data/<sample_file> when it exists; else the datadir path (so
 * the "not found" error names where exa looked first). datadir and
 * srcdir are the install and source directories (EXA_DATADIR and
 * EXA_SRCDIR from the Makefile; "" skips one). Returns a malloc'ed path.
 */
char *zoo_dataset_default_path(const struct zoo_dataset *d, const char *datadir,
                               const char *srcdir);

#endif
