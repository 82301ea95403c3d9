/*
 * promtext.c - the Prometheus text exposition writer (format 0.0.4).
 *
 * The exporter builds one collection's families in a set and writes the
 * exposition either into one buffer (the cache every scraper shares) or
 * through a sink in 60 KiB pieces (prom_render_stream(), `exa serve
 * --once`: the text is never whole in memory). A family keeps its
 * samples as pre-rendered label strings with a value, and rendering
 * sorts them once (then merges equal label sets by summing), which gives
 * byte-stable output and lets callers count by account or partition by
 * adding 1 per job. Families are few (tens), so they are found by a
 * linear scan; samples may be hundreds of thousands, so their label
 * strings are written straight into the set's arena blocks (no
 * allocation and no copy per sample), carry their length, and are sorted
 * as pointers; a label set shared by several families (a node's series)
 * is written once (prom_labels_make). A family of one series per job
 * (prom_family_unique()) keeps no lookup index at all.
 */
#include "libobserve/promtext.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "libutil/xalloc.h"

struct prom_sample {
    const char *labels; /* "" or "{a=\"b\",...}", in the family's arena */
    size_t len;         /* strlen(labels) */
    double value;
};

/* Label strings live in blocks that never move: one allocation per
 * block, not per sample. The set's first block is ARENA_FIRST bytes and
 * each next one twice the last, up to ARENA_BLOCK, so a small set (the
 * fleet view's tens of series) does not hold a mostly empty large block.
 * Every family of a set writes into the set's blocks, so one label
 * string may be the labels of samples in several families
 * (prom_labels_make). */
#define ARENA_FIRST ((size_t)4 << 10)
#define ARENA_BLOCK ((size_t)256 << 10)
struct arena_block {
    struct arena_block *next;
    size_t used, size;
    char data[];
};

/* Label names already checked (callers pass the same literals on every
 * add), with their lengths: validation and strlen cost once per name,
 * not per add. */
#define KNOWN_KEYS 12
struct known_keys {
    const char *k[KNOWN_KEYS];
    size_t len[KNOWN_KEYS];
    size_t nr;
};

/* Pairs a label set may have before prom_add takes its general path. */
#define FAST_PAIRS 16

struct prom_family {
    struct prom_set *set;
    char *name;
    size_t name_len;
    char *help;
    enum prom_type type;
    struct prom_sample *samples;
    size_t nr, alloc;
    int sorted; /* samples sorted and merged since the last add */
    /* open-addressing index of samples by label string: slot holds the
     * sample index + 1, 0 is empty; rebuilt after a sort moved samples */
    size_t *slots, nslots;
    int index_stale;
    int unindexed; /* prom_family_unique(): no index, merged at settle */
    struct known_keys known;
};

struct prom_set {
    struct prom_family **fams;
    size_t nr, alloc;
    struct arena_block *arena; /* every label string of the set */
    struct strbuf scratch;     /* a label set with bytes to escape */
    struct known_keys known;   /* for prom_labels_make */
};

struct prom_set *prom_set_new(void)
{
    struct prom_set *set = xcalloc(1, sizeof(struct prom_set));
    strbuf_init(&set->scratch, 0);
    return set;
}

/* Room for n bytes and a NUL at the end of the set's arena, not yet
 * taken: arena_commit() takes what was written there, and writing
 * without committing (a label set some series already has) costs
 * nothing. */
static char *arena_room(struct prom_set *set, size_t n)
{
    struct arena_block *b = set->arena;
    if (!b || b->size - b->used < n + 1) {
        size_t size = b ? 2 * b->size : ARENA_FIRST;
        if (size > ARENA_BLOCK)
            size = ARENA_BLOCK;
        if (size < n + 1)
            size = n + 1;
        b = xmalloc(sizeof(*b) + size);
        b->next = set->arena;
        b->used = 0;
        b->size = size;
        set->arena = b;
    }
    return b->data + b->used;
}

/* Take the n bytes arena_room() returned (NUL-terminated here). */
static const char *arena_commit(struct prom_set *set, size_t n)
{
    char *d = set->arena->data + set->arena->used;
    d[n] = '\0';
    set->arena->used += n + 1;
    return d;
}

void prom_set_free(struct prom_set *set)
{
    if (!set)
        return;
    for (size_t i = 0; i < set->nr; i++) {
        struct prom_family *f = set->fams[i];
        free(f->samples);
        free(f->slots);
        free(f->name);
        free(f->help);
        free(f);
    }
    while (set->arena) {
        struct arena_block *b = set->arena;
        set->arena = b->next;
        free(b);
    }
    strbuf_release(&set->scratch);
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

void prom_set_adopt(struct prom_set *dst, struct prom_set *src)
{
    struct arena_block **tail;
    if (!src)
        return;
    for (size_t i = 0; i < src->nr; i++) {
        struct prom_family *f = src->fams[i], *d = NULL;
        for (size_t k = 0; k < dst->nr && !d; k++)
            if (!strcmp(dst->fams[k]->name, f->name))
                d = dst->fams[k];
        if (!d) { /* moved whole: its samples point into src's blocks,
                   * which move below */
            f->set = dst;
            ALLOC_GROW(dst->fams, dst->nr + 1, dst->alloc);
            dst->fams[dst->nr++] = f;
            continue;
        }
        if (d->type != f->type)
            BUG("prom_set_adopt: metric '%s' declared as %s and %s", f->name,
                type_name(d->type), type_name(f->type));
        ALLOC_GROW(d->samples, d->nr + f->nr, d->alloc);
        memcpy(d->samples + d->nr, f->samples, f->nr * sizeof(*f->samples));
        d->nr += f->nr;
        d->sorted = 0;
        d->index_stale = 1;
        free(f->samples);
        free(f->slots);
        free(f->name);
        free(f->help);
        free(f);
    }
    /* src's blocks go after dst's: dst's head block stays the one that
     * arena_room() writes next */
    tail = dst->arena ? &dst->arena->next : &dst->arena;
    while (*tail)
        tail = &(*tail)->next;
    *tail = src->arena;
    src->arena = NULL;
    strbuf_release(&src->scratch);
    free(src->fams);
    free(src);
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
    f->set = set;
    f->name = xstrdup(name);
    f->name_len = strlen(name);
    f->help = help ? xstrdup(help) : NULL;
    f->type = type;
    f->sorted = 1;
    ALLOC_GROW(set->fams, set->nr + 1, set->alloc);
    set->fams[set->nr++] = f;
    return f;
}

void prom_family_unique(struct prom_family *fam)
{
    fam->unindexed = 1;
    free(fam->slots);
    fam->slots = NULL;
    fam->nslots = 0;
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

/* 1 for the bytes a label value carries as they are: printable ASCII
 * but '\\' and '"' */
static const unsigned char plain_byte[256] = {
#define P4 1, 1, 1, 1
#define P16 P4, P4, P4, P4
    [0x20] = 1,   1,           0,  1,  P4, P4, P4,    /* 0x22 '"' */
    [0x30] = P16, P16,                                /* 0x30-0x4f */
    [0x50] = P4,  P4,          P4, 0,  1,  1,  1,     /* 0x5c '\\' */
    [0x60] = P16, [0x70] = P4, P4, P4, 1,  1,  1,  0, /* 0x7f DEL */
#undef P16
#undef P4
};

void prom_escape_label(struct strbuf *out, const char *s)
{
    const unsigned char *p = (const unsigned char *)s;
    size_t plain = 0;

    /* the common case, printable ASCII without '\\' or '"': one copy */
    while (plain_byte[p[plain]])
        plain++;
    strbuf_add(out, p, plain);
    p += plain;
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

/* FNV-1a over 8-byte words (then the tail bytes): the label strings are
 * tens of bytes and hashed on every add. */
static size_t hash_str(const char *s, size_t n)
{
    uint64_t h = 1469598103934665603ULL;
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        uint64_t w;
        memcpy(&w, s + i, 8);
        h ^= w;
        h *= 1099511628211ULL;
        h ^= h >> 29;
    }
    for (; i < n; i++) {
        h ^= (unsigned char)s[i];
        h *= 1099511628211ULL;
    }
    return (size_t)(h ^ (h >> 32));
}

/* Room for n more bytes (and the NUL) in sb, growing only when needed. */
static inline void room(struct strbuf *sb, size_t n)
{
    if (sb->alloc < sb->len + n + 1)
        strbuf_grow(sb, n);
}

static void index_put(struct prom_family *f, size_t idx)
{
    size_t i =
        hash_str(f->samples[idx].labels, f->samples[idx].len) & (f->nslots - 1);
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
        const struct prom_sample *c = &f->samples[f->slots[i] - 1];
        if (c->len == n && !memcmp(c->labels, l, n))
            return f->slots[i] - 1;
        i = (i + 1) & (f->nslots - 1);
    }
    return f->nr;
}

/* The length of label name k when it is valid, else 0; a valid name is
 * remembered in kk by pointer. at is k's place in its label list: a
 * caller passing the same list every time finds each name there first. */
static size_t key_len(struct known_keys *kk, const char *k, size_t at)
{
    size_t n;
    if (at < kk->nr && kk->k[at] == k)
        return kk->len[at];
    for (size_t i = 0; i < kk->nr; i++)
        if (kk->k[i] == k)
            return kk->len[i];
    if (!valid_name(k, 0) || !strncmp(k, "__", 2))
        return 0;
    n = strlen(k);
    if (kk->nr < KNOWN_KEYS) {
        kk->k[kk->nr] = k;
        kk->len[kk->nr++] = n;
    }
    return n;
}

/*
 * Render labels (prom_add's list) as a label string, '{k="v",...}' or ""
 * for none, at the end of the set's arena without taking it
 * (arena_commit() does): returns its start with its length in *len, or
 * NULL with err (EXA_EFAIL) for an invalid label name. Values of
 * printable ASCII without '\\' or '"' (job ids, user, node and partition
 * names) are copied as they are, in one pass that also measures them;
 * any other value sends the whole set through prom_escape_label.
 */
static const char *build_labels(struct prom_set *set, struct known_keys *kk,
                                const char *metric, const char *const *labels,
                                size_t *len, exa_error_t *err)
{
    size_t kl[FAST_PAIRS], vl[FAST_PAIRS];
    size_t np = 0, need = 1; /* the closing '}' */
    int plain = 1;
    char *d;
    for (size_t i = 0; labels && labels[i]; i += 2) {
        const char *v = labels[i + 1];
        size_t n = key_len(kk, labels[i], i / 2), m = 0;
        if (!n) {
            if (metric)
                exa_err(err, EXA_EFAIL,
                        "invalid label name '%s' on metric '%s'", labels[i],
                        metric);
            else
                exa_err(err, EXA_EFAIL, "invalid label name '%s'", labels[i]);
            return NULL;
        }
        if (!v)
            continue;
        if (plain && np < FAST_PAIRS) {
            while (plain_byte[(unsigned char)v[m]])
                m++;
            if (v[m])
                plain = 0;
            kl[np] = n;
            vl[np] = m;
            need += n + m + 4; /* '{' or ',', '="', '"' */
        } else {
            plain = 0;
        }
        np++;
    }
    if (!np) {
        *len = 0;
        return arena_room(set, 0);
    }
    if (plain) {
        size_t at = 0, j = 0;
        d = arena_room(set, need);
        for (size_t i = 0; labels[i]; i += 2) {
            if (!labels[i + 1])
                continue;
            d[at++] = j ? ',' : '{';
            memcpy(d + at, labels[i], kl[j]);
            at += kl[j];
            d[at++] = '=';
            d[at++] = '"';
            memcpy(d + at, labels[i + 1], vl[j]);
            at += vl[j];
            d[at++] = '"';
            j++;
        }
        d[at++] = '}';
        *len = at;
        return d;
    }
    /* a value to escape (or more pairs than FAST_PAIRS): the general way */
    {
        struct strbuf *sb = &set->scratch;
        int first = 1;
        strbuf_reset(sb);
        for (size_t i = 0; labels[i]; i += 2) {
            if (!labels[i + 1])
                continue;
            strbuf_addch(sb, first ? '{' : ',');
            strbuf_addstr(sb, labels[i]);
            strbuf_add(sb, "=\"", 2);
            prom_escape_label(sb, labels[i + 1]);
            strbuf_addch(sb, '"');
            first = 0;
        }
        strbuf_addch(sb, '}');
        d = arena_room(set, sb->len);
        memcpy(d, sb->buf, sb->len);
        *len = sb->len;
        return d;
    }
}

/* Append a new series (label string l of n bytes, in the set's arena). */
static void push(struct prom_family *fam, const char *l, size_t n, double value)
{
    ALLOC_GROW(fam->samples, fam->nr + 1, fam->alloc);
    fam->samples[fam->nr].labels = l;
    fam->samples[fam->nr].len = n;
    fam->samples[fam->nr].value = value;
    if (!fam->unindexed)
        index_put(fam, fam->nr);
    fam->nr++;
    fam->sorted = 0;
}

/* The series of fam with label string l (n bytes), or NULL. */
static struct prom_sample *find(struct prom_family *fam, const char *l,
                                size_t n)
{
    size_t at;
    if (fam->unindexed)
        return NULL;
    if (fam->index_stale || fam->nslots < (fam->nr + 1) * 2)
        index_rebuild(fam, fam->nr + 1);
    at = index_find(fam, l, n);
    return at < fam->nr ? &fam->samples[at] : NULL;
}

int prom_add(struct prom_family *fam, const char *const *labels, double value,
             exa_error_t *err)
{
    size_t n;
    struct prom_sample *old;
    const char *l =
        build_labels(fam->set, &fam->known, fam->name, labels, &n, err);
    if (!l)
        return -1;
    old = find(fam, l, n);
    if (old) { /* the string written is not taken: nothing to undo */
        old->value += value;
        return 0;
    }
    push(fam, arena_commit(fam->set, n), n, value);
    return 0;
}

int prom_labels_make(struct prom_set *set, const char *const *labels,
                     struct prom_labels *out, exa_error_t *err)
{
    size_t n;
    if (!build_labels(set, &set->known, NULL, labels, &n, err))
        return -1;
    out->s = arena_commit(set, n);
    out->len = n;
    return 0;
}

void prom_add_labels(struct prom_family *fam, const struct prom_labels *l,
                     double value)
{
    struct prom_sample *old = find(fam, l->s, l->len);
    if (old)
        old->value += value;
    else
        push(fam, l->s, l->len, value);
}

static int cmp_sample(const void *a, const void *b)
{
    const struct prom_sample *x = a, *y = b;
    size_t n = x->len < y->len ? x->len : y->len;
    int c = memcmp(x->labels, y->labels, n);
    /* as strcmp: a prefix sorts first */
    return c ? c : (x->len > y->len) - (x->len < y->len);
}

static int cmp_family(const void *a, const void *b)
{
    const struct prom_family *const *x = a, *const *y = b;
    return strcmp((*x)->name, (*y)->name);
}

static int cmp_sample_ptr(const void *a, const void *b)
{
    return cmp_sample(*(const struct prom_sample *const *)a,
                      *(const struct prom_sample *const *)b);
}

/* Merge runs of equal label sets in v[0..n) (sorted) into their first,
 * summing the values; returns the number left. In place: out never
 * passes i. */
static size_t merge_sorted(struct prom_sample *v, size_t n)
{
    size_t out = 0;
    for (size_t i = 0; i < n; i++) {
        if (out && v[out - 1].len == v[i].len &&
            !memcmp(v[out - 1].labels, v[i].labels, v[i].len)) {
            v[out - 1].value += v[i].value;
            continue;
        }
        v[out++] = v[i];
    }
    return out;
}

/*
 * Sort the samples of f and merge equal label sets by summing. Samples
 * added in label order (a caller walking its jobs in that order) are
 * merged where they are, with no allocation. Otherwise pointers are
 * sorted, not the 24-byte samples (qsort(3) moves a pointer-sized element
 * by assignment, anything larger by memcpy per move), and the samples are
 * gathered in that order before the merge.
 */
static void family_settle(struct prom_family *f)
{
    size_t i = 1;
    if (f->sorted)
        return;
    while (i < f->nr && cmp_sample(&f->samples[i - 1], &f->samples[i]) <= 0)
        i++;
    if (i < f->nr) {
        const struct prom_sample **p = xmalloc(f->nr * sizeof(*p));
        struct prom_sample *out = xmalloc(f->nr * sizeof(*out));
        for (size_t k = 0; k < f->nr; k++)
            p[k] = &f->samples[k];
        qsort(p, f->nr, sizeof(*p), cmp_sample_ptr);
        for (size_t k = 0; k < f->nr; k++)
            out[k] = *p[k];
        free(p);
        free(f->samples);
        f->samples = out;
        f->alloc = f->nr;
    }
    f->nr = merge_sorted(f->samples, f->nr);
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

/* Write u's decimal digits at d (room for 20); returns how many. */
static size_t put_digits(char *d, uint64_t u)
{
    char t[20];
    size_t k = sizeof(t), n;
    do {
        t[--k] = (char)('0' + u % 10);
        u /= 10;
    } while (u);
    n = sizeof(t) - k;
    memcpy(d, t + k, n);
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
        char d[24];
        size_t k = sizeof(d);
        long long x = (long long)v;
        unsigned long long u =
            x < 0 ? 0ULL - (unsigned long long)x : (unsigned long long)x;
        do {
            d[--k] = (char)('0' + u % 10);
            u /= 10;
        } while (u);
        if (x < 0)
            d[--k] = '-';
        strbuf_add(out, d + k, sizeof(d) - k);
        return;
    }
    xsnprintf(buf, sizeof(buf), "%.15g", v);
    if (strtod(buf, NULL) != v)
        xsnprintf(buf, sizeof(buf), "%.17g", v);
    strbuf_addstr(out, buf);
}

/*
 * Write the exposition into out; with write set, hand out's bytes to it
 * whenever they pass FLUSH_AT (and at the end) and reuse the buffer, so
 * the text is never whole in memory. Returns 0, or -1 once write failed.
 */
#define FLUSH_AT ((size_t)60 << 10)
static int render(struct prom_set *set, struct strbuf *out, prom_write_f write,
                  void *ctx)
{
    size_t need = 0;
    if (set->nr) /* qsort(3) needs a non-NULL base */
        qsort(set->fams, set->nr, sizeof(*set->fams), cmp_family);
    /* one allocation of about the final size (or of one flush), not a
     * doubling series of copies (a 20 MB exposition would peak at 1.5x) */
    for (size_t i = 0; i < set->nr && (!write || need < FLUSH_AT); i++) {
        struct prom_family *f = set->fams[i];
        family_settle(f);
        need += 2 * f->name_len + (f->help ? strlen(f->help) : 0) + 32;
        for (size_t j = 0; j < f->nr; j++)
            need += f->name_len + f->samples[j].len + 8;
    }
    room(out, write && need > FLUSH_AT + 4096 ? FLUSH_AT + 4096 : need);
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
            const struct prom_sample *sm = &f->samples[j];
            room(out, f->name_len + sm->len + 32); /* value <= 24 bytes */
            memcpy(out->buf + out->len, f->name, f->name_len);
            memcpy(out->buf + out->len + f->name_len, sm->labels, sm->len);
            out->len += f->name_len + sm->len;
            out->buf[out->len++] = ' ';
            /* the usual value, a count: its digits straight into the room
             * reserved above (prom_format_value's integer rule) */
            if (sm->value >= 1 && sm->value < 1e15 &&
                sm->value == (double)(uint64_t)sm->value) {
                out->len +=
                    put_digits(out->buf + out->len, (uint64_t)sm->value);
            } else {
                out->buf[out->len] = '\0';
                prom_format_value(out, sm->value);
            }
            out->buf[out->len++] = '\n';
            out->buf[out->len] = '\0';
            if (write && out->len >= FLUSH_AT) {
                if (write(ctx, out->buf, out->len) < 0)
                    return -1;
                strbuf_reset(out);
            }
        }
    }
    if (write && out->len) {
        if (write(ctx, out->buf, out->len) < 0)
            return -1;
        strbuf_reset(out);
    }
    return 0;
}

void prom_render(struct prom_set *set, struct strbuf *out)
{
    render(set, out, NULL, NULL);
}

int prom_render_stream(struct prom_set *set, prom_write_f write, void *ctx)
{
    struct strbuf buf = STRBUF_INIT;
    int rc = render(set, &buf, write, ctx);
    strbuf_release(&buf);
    return rc;
}
