/*
 * promtext.c - the Prometheus text exposition writer (format 0.0.4).
 *
 * The exporter builds a whole scrape in memory from a cached snapshot and
 * serves those bytes to every scraper, so the writer favours a simple
 * shape over streaming: a family keeps its samples as pre-rendered label
 * strings with a value, and rendering sorts them once (then merges equal
 * label sets by summing), which gives byte-stable output and lets callers
 * count by account or partition by adding 1 per job. Families are few
 * (tens), so they are found by a linear scan; samples may be hundreds of
 * thousands, so they are one allocation each and sorted with qsort.
 */
#include "libobserve/promtext.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "libutil/xalloc.h"

struct prom_sample {
    char *labels; /* "" or "{a=\"b\",...}" */
    double value;
};

struct prom_family {
    char *name;
    char *help;
    enum prom_type type;
    struct prom_sample *samples;
    size_t nr, alloc;
    int sorted; /* samples sorted and merged since the last add */
    /* open-addressing index of samples by label string: slot holds the
     * sample index + 1, 0 is empty; rebuilt after a sort moved samples */
    size_t *slots, nslots;
    int index_stale;
    struct strbuf scratch; /* the label string being built */
};

struct prom_set {
    struct prom_family **fams;
    size_t nr, alloc;
};

struct prom_set *prom_set_new(void)
{
    return xcalloc(1, sizeof(struct prom_set));
}

void prom_set_free(struct prom_set *set)
{
    if (!set)
        return;
    for (size_t i = 0; i < set->nr; i++) {
        struct prom_family *f = set->fams[i];
        for (size_t j = 0; j < f->nr; j++)
            free(f->samples[j].labels);
        free(f->samples);
        free(f->slots);
        strbuf_release(&f->scratch);
        free(f->name);
        free(f->help);
        free(f);
    }
    free(set->fams);
    free(set);
}

static int is_name_char(int c, int first, int colon)
{
    if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_')
        return 1;
    if (colon && c == ':')
        return 1;
    return !first && c >= '0' && c <= '9';
}

static int valid_name(const char *s, int colon)
{
    if (!s || !*s)
        return 0;
    for (size_t i = 0; s[i]; i++)
        if (!is_name_char((unsigned char)s[i], i == 0, colon))
            return 0;
    return 1;
}

static const char *type_name(enum prom_type t)
{
    switch (t) {
    case PROM_COUNTER:
        return "counter";
    case PROM_GAUGE:
        return "gauge";
    default:
        return "untyped";
    }
}

struct prom_family *prom_family(struct prom_set *set, const char *name,
                                enum prom_type type, const char *help,
                                exa_error_t *err)
{
    struct prom_family *f;
    if (!valid_name(name, 1)) {
        exa_err(err, EXA_EFAIL, "invalid metric name '%s'", name ? name : "");
        return NULL;
    }
    for (size_t i = 0; i < set->nr; i++) {
        f = set->fams[i];
        if (strcmp(f->name, name))
            continue;
        if (f->type != type) {
            exa_err(err, EXA_EFAIL, "metric '%s' declared as %s and %s", name,
                    type_name(f->type), type_name(type));
            return NULL;
        }
        return f;
    }
    f = xcalloc(1, sizeof(*f));
    f->name = xstrdup(name);
    f->help = help ? xstrdup(help) : NULL;
    f->type = type;
    f->sorted = 1;
    strbuf_init(&f->scratch, 0);
    ALLOC_GROW(set->fams, set->nr + 1, set->alloc);
    set->fams[set->nr++] = f;
    return f;
}

/* Length of the valid UTF-8 sequence at s (1-4), or 0 when invalid. */
static size_t utf8_seq(const unsigned char *s)
{
    unsigned c = s[0];
    size_t n;
    unsigned min, cp;
    if (c < 0x80)
        return 1;
    if ((c & 0xE0) == 0xC0) {
        n = 2, cp = c & 0x1F, min = 0x80;
    } else if ((c & 0xF0) == 0xE0) {
        n = 3, cp = c & 0x0F, min = 0x800;
    } else if ((c & 0xF8) == 0xF0) {
        n = 4, cp = c & 0x07, min = 0x10000;
    } else {
        return 0;
    }
    for (size_t i = 1; i < n; i++) {
        if ((s[i] & 0xC0) != 0x80)
            return 0;
        cp = (cp << 6) | (s[i] & 0x3F);
    }
    if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF))
        return 0;
    return n;
}

void prom_escape_label(struct strbuf *out, const char *s)
{
    const unsigned char *p = (const unsigned char *)s;
    while (*p) {
        size_t n = utf8_seq(p);
        if (n == 0) {
            strbuf_addstr(out, "\xEF\xBF\xBD");
            p++;
            continue;
        }
        if (*p == '\\')
            strbuf_addstr(out, "\\\\");
        else if (*p == '"')
            strbuf_addstr(out, "\\\"");
        else if (*p == '\n')
            strbuf_addstr(out, "\\n");
        else
            strbuf_add(out, p, n);
        p += n;
    }
}

static void escape_help(struct strbuf *out, const char *s)
{
    for (; *s; s++) {
        if (*s == '\\')
            strbuf_addstr(out, "\\\\");
        else if (*s == '\n')
            strbuf_addstr(out, "\\n");
        else
            strbuf_addch(out, *s);
    }
}

static size_t hash_str(const char *s, size_t n)
{
    uint64_t h = 1469598103934665603ULL; /* FNV-1a */
    for (size_t i = 0; i < n; i++) {
        h ^= (unsigned char)s[i];
        h *= 1099511628211ULL;
    }
    return (size_t)h;
}

static void index_put(struct prom_family *f, size_t idx)
{
    const char *l = f->samples[idx].labels;
    size_t i = hash_str(l, strlen(l)) & (f->nslots - 1);
    while (f->slots[i])
        i = (i + 1) & (f->nslots - 1);
    f->slots[i] = idx + 1;
}

static void index_rebuild(struct prom_family *f, size_t want)
{
    size_t n = 64;
    while (n < want * 2)
        n *= 2;
    free(f->slots);
    f->slots = xcalloc(n, sizeof(*f->slots));
    f->nslots = n;
    for (size_t i = 0; i < f->nr; i++)
        index_put(f, i);
    f->index_stale = 0;
}

/* Index of the sample whose label string is l (n bytes), or nr. */
static size_t index_find(struct prom_family *f, const char *l, size_t n)
{
    size_t i = hash_str(l, n) & (f->nslots - 1);
    while (f->slots[i]) {
        const char *c = f->samples[f->slots[i] - 1].labels;
        if (!strncmp(c, l, n) && c[n] == '\0')
            return f->slots[i] - 1;
        i = (i + 1) & (f->nslots - 1);
    }
    return f->nr;
}

int prom_add(struct prom_family *fam, const char *const *labels, double value,
             exa_error_t *err)
{
    struct strbuf *sb = &fam->scratch;
    size_t at;
    int first = 1;
    for (size_t i = 0; labels && labels[i]; i += 2) {
        const char *k = labels[i], *v = labels[i + 1];
        if (!valid_name(k, 0) || !strncmp(k, "__", 2)) {
            strbuf_reset(sb);
            return exa_err(err, EXA_EFAIL,
                           "invalid label name '%s' on metric '%s'", k,
                           fam->name);
        }
        if (!v)
            continue;
        strbuf_addstr(sb, first ? "{" : ",");
        first = 0;
        strbuf_addstr(sb, k);
        strbuf_addstr(sb, "=\"");
        prom_escape_label(sb, v);
        strbuf_addch(sb, '"');
    }
    if (!first)
        strbuf_addch(sb, '}');
    if (fam->index_stale || fam->nslots < (fam->nr + 1) * 2)
        index_rebuild(fam, fam->nr + 1);
    at = index_find(fam, sb->buf, sb->len);
    if (at < fam->nr) {
        fam->samples[at].value += value;
        strbuf_reset(sb);
        return 0;
    }
    ALLOC_GROW(fam->samples, fam->nr + 1, fam->alloc);
    fam->samples[fam->nr].labels = xstrndup(sb->buf, sb->len);
    fam->samples[fam->nr].value = value;
    index_put(fam, fam->nr);
    fam->nr++;
    fam->sorted = 0;
    strbuf_reset(sb);
    return 0;
}

static int cmp_sample(const void *a, const void *b)
{
    const struct prom_sample *x = a, *y = b;
    return strcmp(x->labels, y->labels);
}

static int cmp_family(const void *a, const void *b)
{
    const struct prom_family *const *x = a, *const *y = b;
    return strcmp((*x)->name, (*y)->name);
}

/* Sort the samples of f and merge equal label sets by summing. */
static void family_settle(struct prom_family *f)
{
    size_t out = 0;
    if (f->sorted)
        return;
    qsort(f->samples, f->nr, sizeof(*f->samples), cmp_sample);
    for (size_t i = 0; i < f->nr; i++) {
        if (out && !strcmp(f->samples[out - 1].labels, f->samples[i].labels)) {
            f->samples[out - 1].value += f->samples[i].value;
            free(f->samples[i].labels);
            continue;
        }
        f->samples[out++] = f->samples[i];
    }
    f->nr = out;
    f->sorted = 1;
    f->index_stale = 1;
}

size_t prom_set_series(struct prom_set *set)
{
    size_t n = 0;
    for (size_t i = 0; i < set->nr; i++) {
        family_settle(set->fams[i]);
        n += set->fams[i]->nr;
    }
    return n;
}

void prom_format_value(struct strbuf *out, double v)
{
    char buf[40];
    if (isnan(v)) {
        strbuf_addstr(out, "NaN");
        return;
    }
    if (isinf(v)) {
        strbuf_addstr(out, v > 0 ? "+Inf" : "-Inf");
        return;
    }
    if (v == 0) { /* also -0 */
        strbuf_addch(out, '0');
        return;
    }
    if (fabs(v) < 9007199254740992.0 && v == floor(v)) {
        strbuf_addf(out, "%lld", (long long)v);
        return;
    }
    xsnprintf(buf, sizeof(buf), "%.15g", v);
    if (strtod(buf, NULL) != v)
        xsnprintf(buf, sizeof(buf), "%.17g", v);
    strbuf_addstr(out, buf);
}

void prom_render(struct prom_set *set, struct strbuf *out)
{
    if (set->nr) /* qsort(3) needs a non-NULL base */
        qsort(set->fams, set->nr, sizeof(*set->fams), cmp_family);
    for (size_t i = 0; i < set->nr; i++) {
        struct prom_family *f = set->fams[i];
        family_settle(f);
        if (f->help) {
            strbuf_addf(out, "# HELP %s ", f->name);
            escape_help(out, f->help);
            strbuf_addch(out, '\n');
        }
        strbuf_addf(out, "# TYPE %s %s\n", f->name, type_name(f->type));
        for (size_t j = 0; j < f->nr; j++) {
            strbuf_addstr(out, f->name);
            strbuf_addstr(out, f->samples[j].labels);
            strbuf_addch(out, ' ');
            prom_format_value(out, f->samples[j].value);
            strbuf_addch(out, '\n');
        }
    }
}
