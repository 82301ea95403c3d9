/*
 * encoder.h - categorical label encoders for JPCP's INT embedding mode
 * (doc/reference.md §5: each input column LabelEncoder-encoded as a
 * string into "<col>_cat").
 *
 * Like scikit-learn's LabelEncoder, the classes seen while fitting are
 * sorted (byte order) and a value's code is its index. Unlike it, a value
 * never seen while fitting does not raise: all unseen values share one
 * extra code, n_classes, so validation rows from new users are scored
 * instead of crashing. Encoders are fitted on the training split only and
 * saved with the model as JSON:
 *   {"column": "user_id", "classes": ["1015", ...], "unseen_code": 28}
 */
#ifndef EXA_ENCODER_H
#define EXA_ENCODER_H

#include <jansson.h>
#include <stddef.h>

#include "libutil/error.h"

struct cat_encoder {
    char *column;   /* source column name */
    char **classes; /* sorted, distinct */
    size_t n;       /* number of classes; also the unseen code */
};
#define CAT_ENCODER_INIT                                                       \
    {                                                                          \
        NULL, NULL, 0                                                          \
    }

/*
 * Fit e (CAT_ENCODER_INIT) on the n values (borrowed; duplicates fine) of
 * column. Never fails; release with cat_encoder_release.
 */
void cat_encoder_fit(struct cat_encoder *e, const char *column,
                     const char *const *values, size_t n);

/* Code of value: its class index, or e->n when unseen. */
size_t cat_encoder_code(const struct cat_encoder *e, const char *value);

void cat_encoder_release(struct cat_encoder *e);

/* New JSON object in the format above. */
json_t *cat_encoder_to_json(const struct cat_encoder *e);

/*
 * Load e (CAT_ENCODER_INIT) from a JSON object in the format above
 * (borrowed). Returns 0, or -1 with err (EXA_EPARSE) when a member is
 * missing or of the wrong type, a class is not a string, classes are not
 * sorted and distinct, or unseen_code differs from the class count.
 */
int cat_encoder_from_json(const json_t *o, struct cat_encoder *e,
                          exa_error_t *err);

#endif
