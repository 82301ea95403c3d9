/*
 * schema.c - the small JSON Schema (2020-12) subset that exa's tool
 * schemas use, applied to tool arguments before a tool runs and to a
 * tool's answer before it is sent.
 *
 * A full validator is not needed: the schemas are exa's own, written in
 * src/libmcp/tools.c, and a keyword outside the subset is ignored rather
 * than guessed at. The messages name the path so that a model (or its
 * user) can fix the call: "'gpus' must be an integer >= 0".
 */
#include <math.h>
#include <string.h>

#include "libmcp/mcp.h"
#include "libutil/json.h"
#include "libutil/strbuf.h"

static int type_is(const char *t, const json_t *v)
{
    if (!strcmp(t, "object"))
        return json_is_object(v);
    if (!strcmp(t, "array"))
        return json_is_array(v);
    if (!strcmp(t, "string"))
        return json_is_string(v);
    if (!strcmp(t, "integer"))
        return json_is_integer(v) ||
               (json_is_real(v) &&
                json_real_value(v) == floor(json_real_value(v)));
    if (!strcmp(t, "number"))
        return json_is_number(v);
    if (!strcmp(t, "boolean"))
        return json_is_boolean(v);
    if (!strcmp(t, "null"))
        return json_is_null(v);
    return 1; /* unknown type word: not ours to refuse */
}

static const char *article(const char *t)
{
    return (t[0] == 'a' || t[0] == 'i' || t[0] == 'o') ? "an" : "a";
}

/* "'gpus'", "'nodes[2]'", or "the arguments" for the root. */
static void path_name(struct strbuf *out, const char *path)
{
    if (*path)
        strbuf_addf(out, "'%s'", path);
    else
        strbuf_addstr(out, "the value");
}

static int fail(exa_error_t *err, const char *path, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static int fail(exa_error_t *err, const char *path, const char *fmt, ...)
{
    struct strbuf sb = STRBUF_INIT;
    va_list ap;
    path_name(&sb, path);
    strbuf_addch(&sb, ' ');
    va_start(ap, fmt);
    strbuf_vaddf(&sb, fmt, ap);
    va_end(ap);
    exa_err(err, EXA_EUSAGE, "%s", sb.buf);
    strbuf_release(&sb);
    return -1;
}

static int check(const json_t *s, const json_t *v, const char *path,
                 exa_error_t *err);

static int check_type(const json_t *s, const json_t *v, const char *path,
                      exa_error_t *err)
{
    const json_t *t = json_object_get(s, "type");
    struct strbuf want = STRBUF_INIT;
    size_t i;
    const json_t *x;
    int rc;

    if (!t)
        return 0;
    if (json_is_string(t)) {
        if (type_is(json_string_value(t), v))
            return 0;
        return fail(err, path, "must be %s %s", article(json_string_value(t)),
                    json_string_value(t));
    }
    if (!json_is_array(t))
        return 0;
    json_array_foreach(t, i, x)
    {
        if (json_is_string(x) && type_is(json_string_value(x), v)) {
            strbuf_release(&want);
            return 0;
        }
        if (json_is_string(x))
            strbuf_addf(&want, "%s%s", i ? " or " : "", json_string_value(x));
    }
    rc = fail(err, path, "must be %s", want.buf);
    strbuf_release(&want);
    return rc;
}

static int check_number(const json_t *s, const json_t *v, const char *path,
                        exa_error_t *err)
{
    const json_t *mn = json_object_get(s, "minimum");
    const json_t *mx = json_object_get(s, "maximum");
    double d;
    const char *what;
    if (!json_is_number(v))
        return 0;
    d = json_number_value(v);
    what = json_is_integer(v) ? "an integer" : "a number";
    if (json_is_number(mn) && d < json_number_value(mn))
        return fail(err, path, "must be %s >= %g", what, json_number_value(mn));
    if (json_is_number(mx) && d > json_number_value(mx))
        return fail(err, path, "must be %s <= %g", what, json_number_value(mx));
    return 0;
}

/* Length in code points (the schema's "length" of a string). */
static size_t utf8_len(const char *s, size_t n)
{
    size_t c = 0;
    for (size_t i = 0; i < n; i++)
        if (((unsigned char)s[i] & 0xc0) != 0x80)
            c++;
    return c;
}

static int check_string(const json_t *s, const json_t *v, const char *path,
                        exa_error_t *err)
{
    long long mn = jx_get_int(s, "minLength", -1);
    long long mx = jx_get_int(s, "maxLength", -1);
    size_t n;
    if (!json_is_string(v))
        return 0;
    n = utf8_len(json_string_value(v), json_string_length(v));
    if (mn >= 0 && n < (size_t)mn)
        return fail(err, path, "must have at least %lld characters", mn);
    if (mx >= 0 && n > (size_t)mx)
        return fail(err, path, "must have at most %lld characters", mx);
    return 0;
}

static int check_enum(const json_t *s, const json_t *v, const char *path,
                      exa_error_t *err)
{
    const json_t *e = json_object_get(s, "enum"), *x;
    struct strbuf want = STRBUF_INIT;
    size_t i;
    int rc;
    if (!json_is_array(e))
        return 0;
    json_array_foreach(e, i, x)
    {
        if (json_equal((json_t *)x, (json_t *)v))
            return 0;
    }
    json_array_foreach(e, i, x)
    {
        char *t = json_dumps(x, JSON_COMPACT | JSON_ENCODE_ANY);
        strbuf_addf(&want, "%s%s", i ? ", " : "", t ? t : "?");
        free(t);
    }
    rc = fail(err, path, "must be one of %s", want.buf);
    strbuf_release(&want);
    return rc;
}

static void join(struct strbuf *sb, const char *path, const char *key)
{
    strbuf_addstr(sb, path);
    if (*path)
        strbuf_addch(sb, '.');
    strbuf_addstr(sb, key);
}

static int check_object(const json_t *s, const json_t *v, const char *path,
                        exa_error_t *err)
{
    const json_t *props = json_object_get(s, "properties");
    const json_t *req = json_object_get(s, "required");
    const json_t *addl = json_object_get(s, "additionalProperties");
    const char *k;
    const json_t *x;
    size_t i;
    int rc = 0;

    if (!json_is_object(v))
        return 0;
    json_array_foreach(req, i, x)
    {
        if (json_is_string(x) && !json_object_get(v, json_string_value(x))) {
            struct strbuf p = STRBUF_INIT;
            join(&p, path, json_string_value(x));
            rc = fail(err, p.buf, "is required");
            strbuf_release(&p);
            return rc;
        }
    }
    json_object_foreach((json_t *)v, k, x)
    {
        const json_t *ps = json_object_get(props, k);
        struct strbuf p = STRBUF_INIT;
        join(&p, path, k);
        if (!ps && json_is_false(addl)) {
            /* the known names help the caller more than "no" */
            struct strbuf known = STRBUF_INIT;
            const char *pk;
            const json_t *pv;
            json_object_foreach((json_t *)props, pk, pv)
            {
                (void)pv;
                strbuf_addf(&known, "%s%s", known.len ? ", " : "", pk);
            }
            rc =
                fail(err, p.buf, "is not an argument of this tool%s%s",
                     known.len ? "; it takes " : " (it takes none)", known.buf);
            strbuf_release(&known);
        } else if (ps)
            rc = check(ps, x, p.buf, err);
        else if (json_is_object(addl))
            rc = check(addl, x, p.buf, err);
        strbuf_release(&p);
        if (rc)
            return rc;
    }
    return 0;
}

static int check_array(const json_t *s, const json_t *v, const char *path,
                       exa_error_t *err)
{
    const json_t *items = json_object_get(s, "items"), *x;
    size_t i;
    if (!json_is_array(v) || !json_is_object(items))
        return 0;
    json_array_foreach(v, i, x)
    {
        struct strbuf p = STRBUF_INIT;
        int rc;
        strbuf_addf(&p, "%s[%zu]", path, i);
        rc = check(items, x, p.buf, err);
        strbuf_release(&p);
        if (rc)
            return rc;
    }
    return 0;
}

static int check(const json_t *s, const json_t *v, const char *path,
                 exa_error_t *err)
{
    if (!json_is_object(s))
        return 0;
    if (check_type(s, v, path, err) || check_enum(s, v, path, err) ||
        check_number(s, v, path, err) || check_string(s, v, path, err) ||
        check_object(s, v, path, err) || check_array(s, v, path, err))
        return -1;
    return 0;
}

int mcp_schema_check(const json_t *schema, const json_t *instance,
                     exa_error_t *err)
{
    return check(schema, instance, "", err);
}
