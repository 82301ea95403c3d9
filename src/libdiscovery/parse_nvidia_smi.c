/*
 * parse_nvidia_smi.c - nvidia-smi --query-gpu CSV to GPU records.
 *
 * nvidia-smi separates fields with ", ", keeps unit annotations in the
 * header even with nounits, appends units to values without nounits,
 * prints bracketed markers ("[N/A]", "[Not Supported]") for missing
 * values, and prints its errors on stdout with no CSV at all. Columns are
 * therefore named by the header when there is one and by the query
 * otherwise, units are stripped per value, and error text is recognised
 * before any row is read so no GPU is ever built from it.
 */
#include "libdiscovery/parse_nvidia_smi.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "libutil/json.h"
#include "libutil/parse.h"
#include "libutil/strbuf.h"
#include "libutil/xalloc.h"

static const struct {
    const char *field, *key;
} field_keys[] = {
    {"index", "index"},
    {"uuid", "uuid"},
    {"gpu_uuid", "uuid"},
    {"name", "name"},
    {"gpu_name", "name"},
    {"clocks.gr", "clock_gfx_mhz"},
    {"clocks.mem", "clock_mem_mhz"},
    {"clocks.max.sm", "clock_max_sm_mhz"},
    {"memory.total", "mem_total_mb"},
    {"memory.used", "mem_used_mb"},
    {"memory.free", "mem_free_mb"},
    {"utilization.gpu", "util_pct"},
    {"utilization.memory", "util_mem_pct"},
    {"power.draw", "power_w"},
    {"power.limit", "power_limit_w"},
    {"power.default_limit", "power_default_limit_w"},
    {"clocks.current.graphics", "clock_gfx_mhz"},
    {"clocks.current.memory", "clock_mem_mhz"},
    {"fan.speed", "fan_pct"},
    {"temperature.gpu", "temp_c"},
    {"mig.mode.current", "mig_mode"},
};

/* Fields whose values are text even when they look numeric. */
static const char *const text_fields[] = {
    "uuid",
    "name",
    "gpu_name",
    "serial",
    "driver_version",
    "pci.bus_id",
    "vbios_version",
    "mig.mode.current",
    "mig.mode.pending",
    "pstate",
    "compute_mode",
    "display_mode",
    "gpu_bus_id",
    "gpu_serial",
    "gpu_uuid",
    NULL,
};

const char *nvsmi_field_key(const char *field)
{
    for (size_t i = 0; i < sizeof(field_keys) / sizeof(field_keys[0]); i++)
        if (!strcmp(field, field_keys[i].field))
            return field_keys[i].key;
    return NULL;
}

size_t nvsmi_fields_from_command(const char *cmd, struct strvec *out)
{
    const char *p = cmd ? strstr(cmd, "--query-gpu") : NULL;
    size_t n = 0;

    if (!p)
        return 0;
    p += strlen("--query-gpu");
    if (*p != '=' && *p != ' ')
        return 0;
    p++;
    while (*p == ' ')
        p++;
    if (*p == '"' || *p == '\'')
        p++;
    while (*p && !isspace((unsigned char)*p) && *p != '"' && *p != '\'') {
        const char *e = p;
        while (*e && *e != ',' && !isspace((unsigned char)*e) && *e != '"' &&
               *e != '\'')
            e++;
        if (e > p) {
            strvec_pushf(out, "%.*s", (int)(e - p), p);
            n++;
        }
        p = *e == ',' ? e + 1 : e;
    }
    return n;
}

/* Split a CSV line on "," and trim each field. */
static void split_csv(const char *s, size_t len, struct strvec *out)
{
    size_t i = 0;
    for (;;) {
        size_t j = i, a, b;
        while (j < len && s[j] != ',')
            j++;
        a = i;
        b = j;
        while (a < b && isspace((unsigned char)s[a]))
            a++;
        while (b > a && isspace((unsigned char)s[b - 1]))
            b--;
        strvec_pushf(out, "%.*s", (int)(b - a), s + a);
        if (j >= len)
            break;
        i = j + 1;
    }
}

/* Header field name without its " [MiB]" annotation (malloc'ed). */
static char *header_name(const char *h)
{
    const char *br = strchr(h, '[');
    size_t n = br ? (size_t)(br - h) : strlen(h);
    while (n && isspace((unsigned char)h[n - 1]))
        n--;
    return xstrndup(h, n);
}

/*
 * A header line: every field is a query field name (+ optional " [unit]"
 * annotation): a letter, then letters of either case, digits, '.', '_'
 * or '-', of any length ("memory.total [MiB]", "Clocks.Max.SM",
 * "clocks_event_reasons.hw_thermal_slowdown"); and at least one field
 * shows it is a name, not a value such as "Disabled" or "P0": it has a
 * '.' or '_', a unit annotation, or is a known field, or the names are
 * the command's query fields (fields, nfields).
 */
static int is_header(const struct strvec *f, const char *const *fields,
                     size_t nfields)
{
    int named = 0, query = fields && nfields == f->nr;
    for (size_t i = 0; i < f->nr; i++) {
        char *n = header_name(f->v[i]);
        int ok = *n != '\0' && isalpha((unsigned char)n[0]);
        for (const char *p = n; *p && ok; p++)
            if (!(isalnum((unsigned char)*p) || *p == '.' || *p == '_' ||
                  *p == '-'))
                ok = 0;
        if (ok && (strpbrk(n, "._") || strchr(f->v[i], '[')))
            named = 1;
        if (ok && !named) {
            char *l = xstrdup(n);
            for (char *p = l; *p; p++)
                *p = (char)tolower((unsigned char)*p);
            if (nvsmi_field_key(l))
                named = 1;
            free(l);
        }
        if (query && (!ok || strcasecmp(n, fields[i])))
            query = 0;
        free(n);
        if (!ok)
            return 0;
    }
    return f->nr > 0 && (named || query);
}

static int is_text_field(const char *field)
{
    for (size_t i = 0; text_fields[i]; i++)
        if (!strcmp(field, text_fields[i]))
            return 1;
    return 0;
}

/* One value: bracketed marker -> null, unit stripped, number or text. */
static json_t *value_json(const char *field, const char *v)
{
    static const char *const units[] = {" MiB", " GiB", " KiB", " %",
                                        " W",   " MHz", " C",   NULL};
    size_t n = strlen(v);
    char *s;
    json_t *r;

    if (n == 0 || (v[0] == '[' && v[n - 1] == ']') || !strcmp(v, "N/A"))
        return json_null();
    if (is_text_field(field) || strchr(v, 'x') || strchr(v, 'X'))
        return jx_str(v); /* "0x2330" is an id, not a hex float */
    s = xstrdup(v);
    for (size_t u = 0; units[u]; u++)
        if (ends_with(s, units[u])) {
            s[n - strlen(units[u])] = '\0';
            break;
        }
    /* numbers through libutil/parse.h: an integer that does not fit
     * int64 is read as a real, anything else stays text */
    {
        int64_t i;
        double d;
        if (parse_i64_str(s, &i) == 0) {
            free(s);
            return json_integer((json_int_t)i);
        }
        if (parse_real_str(s, &d) == 0 &&
            (isdigit((unsigned char)s[0]) || s[0] == '-'))
            r = jx_real(d);
        else
            r = jx_str(v);
    }
    free(s);
    return r;
}

static json_t *fail(exa_error_t *err, const char **errkind, const char *kind,
                    const char *msg)
{
    *errkind = kind;
    exa_err(err, EXA_ESCHED, "nvidia-smi: %s", msg);
    return NULL;
}

json_t *nvsmi_parse(const char *buf, size_t len, const char *const *fields,
                    size_t nfields, const char **errkind, exa_error_t *err)
{
    static const char *const product[] = {
        "index",           "uuid",       "name", "memory.total", "memory.used",
        "utilization.gpu", "power.draw",
    };
    struct strvec cols = STRVEC_INIT;
    json_t *gpus = json_array(), *res;
    size_t i = 0, rows = 0, bad = 0;
    int have_cols = 0;

    *errkind = "parse_error";
    /* error text first: no GPU may be built from it */
    while (i < len) {
        const char *s = buf + i, *nl = memchr(s, '\n', len - i);
        size_t l = nl ? (size_t)(nl - s) : len - i;
        char *line = xstrndup(s, l);
        json_t *r = NULL;
        int hit = 1;
        i += l + 1;
        if (strstr(line, "No devices were found"))
            r = fail(err, errkind, "no_devices", "No devices were found");
        else if (strstr(line, "is not a valid field to query"))
            r = fail(err, errkind, "invalid_field", line);
        else if (strstr(line, "NVIDIA-SMI has failed") ||
                 strstr(line, "couldn't communicate with the NVIDIA") ||
                 strstr(line, "Failed to initialize NVML"))
            r = fail(err, errkind, "nvidia_smi_failed", line);
        else
            hit = 0;
        free(line);
        if (hit) {
            json_decref(gpus);
            return r;
        }
    }
    if (fields && nfields) {
        for (size_t k = 0; k < nfields; k++) {
            char *l = xstrdup(fields[k]);
            for (char *c = l; *c; c++)
                *c = (char)tolower((unsigned char)*c);
            strvec_push(&cols, l);
            free(l);
        }
        have_cols = 1;
    }
    i = 0;
    while (i < len) {
        const char *s = buf + i, *nl = memchr(s, '\n', len - i);
        size_t l = nl ? (size_t)(nl - s) : len - i;
        struct strvec f = STRVEC_INIT;
        i += l + 1;
        if (l && s[l - 1] == '\r')
            l--;
        {
            size_t k = 0;
            while (k < l && isspace((unsigned char)s[k]))
                k++;
            if (k == l)
                continue;
        }
        split_csv(s, l, &f);
        if (is_header(&f, fields, nfields)) {
            strvec_clear(&cols);
            for (size_t k = 0; k < f.nr; k++) {
                /* nvidia-smi's names are lower case; a header written
                 * in capitals names the same fields */
                char *h = header_name(f.v[k]);
                for (char *c = h; *c; c++)
                    *c = (char)tolower((unsigned char)*c);
                strvec_push(&cols, h);
                free(h);
            }
            have_cols = 1;
            strvec_clear(&f);
            continue;
        }
        if (!have_cols && f.nr == sizeof(product) / sizeof(product[0])) {
            for (size_t k = 0; k < f.nr; k++)
                strvec_push(&cols, product[k]);
            have_cols = 1;
        }
        if (!have_cols) {
            strvec_clear(&f);
            strvec_clear(&cols);
            json_decref(gpus);
            return fail(err, errkind, "unknown_columns",
                        "headerless output and the query fields are unknown");
        }
        if (f.nr != cols.nr) {
            bad++;
            strvec_clear(&f);
            continue;
        }
        {
            json_t *g = json_object();
            for (size_t k = 0; k < f.nr; k++) {
                const char *key = nvsmi_field_key(cols.v[k]);
                char *alt = NULL;
                if (!key) {
                    alt = xstrdup(cols.v[k]);
                    for (char *p = alt; *p; p++)
                        if (*p == '.')
                            *p = '_';
                    key = alt;
                }
                jx_set(g, key, value_json(cols.v[k], f.v[k]));
                free(alt);
            }
            json_array_append_new(gpus, g);
            rows++;
        }
        strvec_clear(&f);
    }
    strvec_clear(&cols);
    if (!rows && bad) {
        json_decref(gpus);
        return fail(err, errkind, "parse_error",
                    "no row has as many fields as the header");
    }
    res = json_object();
    jx_set(res, "gpus", gpus);
    return res;
}
