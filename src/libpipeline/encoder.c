/*
 * encoder.c - sorted-class label encoders (see encoder.h). Lookups are a
 * binary search over the sorted classes: O(log n) per value with no hash
 * table to serialize.
 */
#include "libpipeline/encoder.h"

#include <stdlib.h>
#include <string.h>

#include "libutil/json.h"
#include "libutil/xalloc.h"

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

void cat_encoder_fit(struct cat_encoder *e, const char *column,
                     const char *const *values, size_t n)
{
    char **sorted = xcalloc(n ? n : 1, sizeof(*sorted));
    size_t k = 0;
    if (n)
        memcpy(sorted, values, n * sizeof(*sorted));
    qsort(sorted, n, sizeof(*sorted), cmp_str);
    e->column = xstrdup(column);
    e->classes = xcalloc(n ? n : 1, sizeof(*e->classes));
    for (size_t i = 0; i < n; i++)
        if (!k || strcmp(sorted[i], e->classes[k - 1]))
            e->classes[k++] = xstrdup(sorted[i]);
    e->n = k;
    free(sorted);
}

size_t cat_encoder_code(const struct cat_encoder *e, const char *value)
{
    size_t lo = 0, hi = e->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        int c = strcmp(value, e->classes[mid]);
        if (!c)
            return mid;
        if (c < 0)
            hi = mid;
        else
            lo = mid + 1;
    }
    return e->n;
}

void cat_encoder_release(struct cat_encoder *e)
{
    for (size_t i = 0; i < e->n; i++)
        free(e->classes[i]);
    free(e->classes);
    free(e->column);
    memset(e, 0, sizeof(*e));
}

json_t *cat_encoder_to_json(const struct cat_encoder *e)
{
    json_t *o = json_object(), *arr = json_array();
    for (size_t i = 0; i < e->n; i++)
        json_array_append_new(arr, jx_str(e->classes[i]));
    jx_set(o, "column", jx_str(e->column));
    jx_set(o, "classes", arr);
    jx_set(o, "unseen_code", json_integer((json_int_t)e->n));
    return o;
}

int cat_encoder_from_json(const json_t *o, struct cat_encoder *e,
                          exa_error_t *err)
{
    const char *column = jx_get_str(o, "column", NULL);
    json_t *arr = json_object_get(o, "classes");
    json_t *unseen = json_object_get(o, "unseen_code");
    struct cat_encoder tmp = CAT_ENCODER_INIT;
    size_t n;

    if (!column || !json_is_array(arr) || !json_is_integer(unseen))
        return exa_err(err, EXA_EPARSE,
                       "encoder needs 'column', 'classes' and 'unseen_code'");
    n = json_array_size(arr);
    if ((json_int_t)n != json_integer_value(unseen))
        return exa_err(err, EXA_EPARSE,
                       "encoder '%s': unseen_code %lld is not the class "
                       "count %zu",
                       column, (long long)json_integer_value(unseen), n);
    tmp.column = xstrdup(column);
    tmp.classes = xcalloc(n ? n : 1, sizeof(*tmp.classes));
    for (size_t i = 0; i < n; i++) {
        json_t *v = json_array_get(arr, i);
        if (!json_is_string(v) ||
            (i && strcmp(json_string_value(v), tmp.classes[i - 1]) <= 0)) {
            cat_encoder_release(&tmp);
            return exa_err(err, EXA_EPARSE,
                           "encoder '%s': class %zu is not a string in "
                           "sorted order",
                           column, i);
        }
        tmp.classes[i] = xstrdup(json_string_value(v));
        tmp.n = i + 1;
    }
    *e = tmp;
    return 0;
}
