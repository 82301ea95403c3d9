/*
 * slurm_table.c - one splitter for the tabular outputs of sinfo, squeue and
 * sacct.
 *
 * The separator is decided once, from the first record, and a header is
 * recognized by its names (the tool passes a predicate), not by position:
 * `-h`/`--noheader` outputs and headed ones come through the same code.
 * Blank-separated rows are split on runs of blanks; when that gives a
 * different count than the header (a value with a space such as
 * "CANCELLED by 0", or a padded -O field that filled its width and glued
 * onto the next), the row is re-cut at the column offsets of the header
 * or of sacct's dashed ruler, which is how Slurm laid it out.
 */
#include "libsched/slurm_table.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "libutil/arena.h"
#include "libutil/strbuf.h"
#include "libutil/xalloc.h"

#define MAX_ROWS SLURM_TABLE_MAX_ROWS

/*
 * Field strings, field arrays and offsets live in the table's arena
 * (libutil/arena.h, freed together): a 20,000-row table is 140,000 small
 * strings, and one malloc each was most of the parse time.
 */
static inline char *trim_dup(struct slurm_table *t, const char *s, size_t n)
{
    while (n && (*s == ' ' || *s == '\t' || *s == '\r' || *s == '\n')) {
        s++;
        n--;
    }
    while (n && (s[n - 1] == ' ' || s[n - 1] == '\t' || s[n - 1] == '\r' ||
                 s[n - 1] == '\n'))
        n--;
    return arena_strndup(&t->arena, s, n);
}

/* Split blank-separated tokens of line (len bytes) into fields. */
static size_t split_blanks(struct slurm_table *t, const char *line, size_t len,
                           char ***out)
{
    char **v;
    size_t n = 0, i = 0, ntok = 0;
    int in_tok = 0;
    for (size_t k = 0; k < len; k++) {
        int blank = line[k] == ' ' || line[k] == '\t' || line[k] == '\r';
        if (!blank && !in_tok)
            ntok++;
        in_tok = !blank;
    }
    v = arena_alloc(&t->arena, (ntok ? ntok : 1) * sizeof(*v));
    while (i < len) {
        size_t j;
        while (i < len &&
               (line[i] == ' ' || line[i] == '\t' || line[i] == '\r'))
            i++;
        if (i >= len)
            break;
        j = i;
        while (j < len && line[j] != ' ' && line[j] != '\t' && line[j] != '\r')
            j++;
        v[n++] = arena_strndup(&t->arena, line + i, j - i);
        i = j;
    }
    *out = v;
    return n;
}

static inline int trim_byte(char c)
{
    /* one compare for the usual byte: every trim byte is <= ' ' */
    return (unsigned char)c <= ' ' &&
           (c == ' ' || c == '\t' || c == '\r' || c == '\n');
}

/* The first occurrence of sep (sl >= 2 bytes; one byte is cut_on_byte)
 * in [i, end), or end. */
static inline char *find_sep(char *i, char *end, const char *sep, size_t sl)
{
    while ((size_t)(end - i) >= sl) {
        char *p = memchr(i, sep[0], (size_t)(end - i) - sl + 1);
        if (!p)
            break;
        if (!memcmp(p + 1, sep + 1, sl - 1))
            return p;
        i = p + 1;
    }
    return end;
}

/* The cells of a line being split: pointers into its copy, in the
 * table's arena where the header tells how many to expect (cap0 of
 * them: the row's field array itself, no copy), else on the stack for up
 * to cap0 = 128; past cap0 on the heap (n and cap are the caller's
 * locals, so that they stay in registers). */
struct cells {
    char **fs;
    size_t cap0; /* the first capacity, fs's */
    int heap;    /* fs was grown onto the heap */
    char *stack[128];
};

/* Room for one more cell past n (of cap): grown on the heap. */
static void cells_grow(struct cells *cs, size_t *cap)
{
    char **nb = xmalloc(2 * *cap * sizeof(*nb));
    memcpy(nb, cs->fs, *cap * sizeof(*nb));
    if (cs->heap)
        free(cs->fs);
    cs->fs = nb;
    cs->heap = 1;
    *cap *= 2;
}

/* [a, b) of the copy as cell n: past its leading blanks, its end (the
 * separator, or the first of its trailing blanks) made its NUL, the
 * string trim_dup would give. Returns n + 1. */
static inline size_t put_cell(struct cells *cs, size_t n, size_t *cap, char *a,
                              char *b)
{
    while (a < b && trim_byte(*a))
        a++;
    while (b > a && trim_byte(b[-1]))
        b--;
    if (n == *cap)
        cells_grow(cs, cap);
    cs->fs[n] = a;
    *b = '\0';
    return n + 1;
}

/* put_cell for [a, b) known to hold no trim_byte: nothing to trim. */
static inline size_t put_cell_clean(struct cells *cs, size_t n, size_t *cap,
                                    char *a, char *b)
{
    if (n == *cap)
        cells_grow(cs, cap);
    cs->fs[n] = a;
    *b = '\0';
    return n + 1;
}

/*
 * Cut [c, end) into cells at every byte sep; returns their count. Cells
 * are a few bytes long, and a memchr call per cell cost more than its
 * search: with SSE2 (every x86-64) the separators of 16 bytes are found
 * with one compare and taken lowest first, the last partial block read
 * as the 16 bytes that end the line (the bits of bytes already cut
 * masked off), never outside [c, end); byte by byte elsewhere and for
 * lines under 16 bytes.
 */
static size_t cut_on_byte(struct cells *cs, char *c, char *end, char sep)
{
    char *i = c, *p = c;
    size_t n = 0, cap = cs->cap0;
#if defined(__SSE2__)
    /* blank: the bytes that may be trim_byte (below 0x21 as signed bytes:
     * 0x80 and over too), the separators left out; dirty: one was seen
     * in the blocks read so far, which hold every cell cut so far, so
     * while it is 0 no cell needs trimming */
    const __m128i pat = _mm_set1_epi8(sep), blank = _mm_set1_epi8(0x21);
    unsigned dirty = 0;
    if (end - c >= 16) {
        for (;; p += 16) {
            unsigned m, b;
            char *q = p;
            __m128i x;
            if (end - p < 16) {
                if (p == end)
                    break;
                q = end - 16; /* overlaps what was cut: masked */
            }
            x = _mm_loadu_si128((const __m128i *)q);
            m = (unsigned)_mm_movemask_epi8(_mm_cmpeq_epi8(x, pat));
            b = (unsigned)_mm_movemask_epi8(_mm_cmplt_epi8(x, blank)) & ~m;
            if (q != p) {
                m &= ~0u << (p - q);
                b &= ~0u << (p - q);
            }
            dirty |= b;
            while (m) {
                char *j = q + __builtin_ctz(m);
                n = dirty ? put_cell(cs, n, &cap, i, j)
                          : put_cell_clean(cs, n, &cap, i, j);
                i = j + 1;
                m &= m - 1;
            }
            if (q != p)
                break;
        }
        return dirty ? put_cell(cs, n, &cap, i, end)
                     : put_cell_clean(cs, n, &cap, i, end);
    }
#endif
    for (; p < end; p++)
        if (*p == sep) {
            n = put_cell(cs, n, &cap, i, p);
            i = p + 1;
        }
    return put_cell(cs, n, &cap, i, end);
}

/* Split on sep (sl bytes; 0: the whole line is one field), left to right
 * at non-overlapping occurrences; with nest (sep ","), commas inside ()
 * or [] do not split. The line is copied into the arena once and each
 * field cut out of the copy in place (put_cell). The copy goes in
 * t->text when the caller set one, with SLURM_ROW_PAD zero bytes after
 * its NUL; *copy gets it. */
static size_t split_sep(struct slurm_table *t, const char *line, size_t len,
                        const char *sep, size_t sl, int nest, char ***out,
                        const char **copy)
{
    struct cells cs;
    char *c = t->text ? arena_strndup_pad(t->text, line, len, SLURM_ROW_PAD)
                      : arena_strndup(&t->arena, line, len);
    char *end = c + len, *i = c;
    char **v;
    size_t n = 0, cap;
    cs.heap = 0;
    if (t->nhdr && t->nhdr < 128) {
        /* the header's count, one more for a trailing separator */
        cs.cap0 = t->nhdr + 1;
        cs.fs = arena_alloc_raw(&t->arena, cs.cap0 * sizeof(*cs.fs));
    } else {
        cs.cap0 = 128;
        cs.fs = cs.stack;
    }
    cap = cs.cap0;
    if (sl == 1 && !nest) {
        n = cut_on_byte(&cs, c, end, sep[0]);
    } else {
        for (;;) {
            char *j = i;
            if (!nest) {
                j = sl ? find_sep(i, end, sep, sl) : end;
            } else {
                int depth = 0;
                while (j < end && (*j != ',' || depth)) {
                    if (*j == '(' || *j == '[')
                        depth++;
                    else if ((*j == ')' || *j == ']') && depth)
                        depth--;
                    j++;
                }
            }
            n = put_cell(&cs, n, &cap, i, j);
            if (j >= end)
                break;
            i = j + sl;
        }
    }
    if (cs.fs != cs.stack && !cs.heap) {
        v = cs.fs; /* the arena's already */
    } else {
        v = arena_alloc(&t->arena, n * sizeof(*v));
        memcpy(v, cs.fs, n * sizeof(*v));
        if (cs.heap)
            free(cs.fs);
    }
    *out = v;
    *copy = c;
    return n;
}

/* Upper-cased header name without a "%N" suffix. */
static void upper_name(const char *s, char *buf, size_t n)
{
    size_t k = 0;
    for (; *s && *s != '%' && k + 1 < n; s++)
        buf[k++] = (char)toupper((unsigned char)*s);
    buf[k] = '\0';
}

static int is_ruler(const char *line, size_t len)
{
    int dashes = 0;
    for (size_t i = 0; i < len; i++) {
        if (line[i] == '-')
            dashes++;
        else if (line[i] != ' ' && line[i] != '\t' && line[i] != '\r')
            return 0;
    }
    return dashes > 0;
}

static int is_blank(const char *line, size_t len)
{
    for (size_t i = 0; i < len; i++)
        if (!isspace((unsigned char)line[i]))
            return 0;
    return 1;
}

static int free_text_col(const char *name)
{
    char u[64];
    upper_name(name, u, sizeof(u));
    return !strcmp(u, "REASON") || !strcmp(u, "NODELIST(REASON)") ||
           !strcmp(u, "COMMENT") || !strcmp(u, "NAME") || !strcmp(u, "STATE");
}

/* Cut line at column starts (ncols of them, starts[0] == 0). */
static char **slice(struct slurm_table *t, const char *line, size_t len,
                    const size_t *starts, const size_t *ends, size_t ncols)
{
    char **f = arena_alloc(&t->arena, ncols * sizeof(*f));
    for (size_t k = 0; k < ncols; k++) {
        size_t a = starts[k], b = k + 1 < ncols ? starts[k + 1] : len;
        if (ends && ends[k] < b && k + 1 < ncols)
            b = ends[k];
        if (a > len)
            a = len;
        if (b > len)
            b = len;
        if (b < a)
            b = a;
        f[k] = trim_dup(t, line + a, b - a);
    }
    return f;
}

/* Does the slice of line [a, b) hold a run of two blanks inside it? */
static int slice_unclean(const char *line, size_t a, size_t b)
{
    while (a < b && line[a] == ' ')
        a++;
    while (b > a && line[b - 1] == ' ')
        b--;
    for (size_t i = a; i + 1 < b; i++)
        if (line[i] == ' ' && line[i + 1] == ' ')
            return 1;
    return 0;
}

/*
 * For a padded (-O style) header: should this row be cut at the header's
 * column starts instead of at blanks? Yes when some blank-separated token
 * does not start at its column (a value with a blank, or one that filled
 * its width and ran into the next) and every cut piece is clean (no run
 * of blanks inside, which would mean the row is not laid out on the
 * header's grid at all).
 */
static int should_slice(const char *line, size_t len, const size_t *starts,
                        size_t ncols)
{
    size_t i = 0, k = 0;
    int aligned = 1;
    while (i < len) {
        while (i < len && (line[i] == ' ' || line[i] == '\t'))
            i++;
        if (i >= len)
            break;
        if (k >= ncols || starts[k] != i)
            aligned = 0;
        k++;
        while (i < len && line[i] != ' ' && line[i] != '\t')
            i++;
    }
    if (aligned && k == ncols)
        return 0;
    for (size_t c = 0; c < ncols; c++) {
        size_t a = starts[c], b = c + 1 < ncols ? starts[c + 1] : len;
        if (a > len)
            a = len;
        if (b > len)
            b = len;
        if (b > a && slice_unclean(line, a, b))
            return 0;
    }
    return 1;
}

/* Is the next non-blank line at p a dashed ruler (sacct's fixed width)?
 * 1 yes, 0 no, -1 no such line (blank to end). */
static int next_is_ruler(const char *p, const char *end)
{
    while (p < end) {
        const char *e = memchr(p, '\n', (size_t)(end - p));
        size_t l;
        if (!e)
            e = end;
        l = (size_t)(e - p);
        if (!is_blank(p, l))
            return is_ruler(p, l);
        p = e + 1;
    }
    return -1; /* blank to the end */
}

/* next_is_ruler over [p, end) and then, when that is blank to its end,
 * over [q, qend) (the segment after it; q NULL: none). */
static int ruler_follows(const char *p, const char *end, const char *q,
                         const char *qend)
{
    int r = next_is_ruler(p, end);
    if (r < 0 && q)
        r = next_is_ruler(q, qend);
    return r > 0;
}

/* The first n (<= 4) bytes of p as a string (for the weekday test). */
static const char *head4(const char *p, size_t n)
{
    static _Thread_local char b[8];
    memcpy(b, p, n);
    b[n] = '\0';
    return b;
}

int slurm_error_line(const char *p, size_t l)
{
    static const char *const tools[] = {
        "sinfo: ",  "squeue: ", "sacct: ",    "scontrol: ",
        "sbatch: ", "srun: ",   "sacctmgr: ", NULL};
    static const char needle[] = "Unable to contact slurm controller";
    const char *q, *e;
    while (l && (*p == ' ' || *p == '\t')) {
        p++;
        l--;
    }
    /* every prefix below starts with 's', 'e' or 'E': most rows skip them */
    if (l && (*p == 's' || *p == 'e' || *p == 'E')) {
        if (l >= 11 && !strncmp(p, "slurm_load_", 11))
            return 1;
        if (l >= 7 && !strncasecmp(p, "error: ", 7))
            return 1;
        for (size_t i = 0; tools[i]; i++) {
            size_t n = strlen(tools[i]);
            if (l >= n + 5 && !strncmp(p, tools[i], n) &&
                !strncasecmp(p + n, "error", 5))
                return 1;
        }
    }
    /* memmem(needle), by its first byte (rare in rows), which cannot be
     * in the needle's length less one before the end */
    for (q = p, e = p + l;
         (size_t)(e - q) >= sizeof(needle) - 1 &&
         (q = memchr(q, 'U', (size_t)(e - q) - (sizeof(needle) - 2))) != NULL;
         q++)
        if ((size_t)(e - q) >= sizeof(needle) - 1 &&
            !memcmp(q, needle, sizeof(needle) - 1))
            return 1;
    return 0;
}

/* The room the first row makes: t->rows_hint rows (a block's records),
 * capped (a hint is not trusted with memory), else one. */
static size_t rows_first(const struct slurm_table *t)
{
    return t->rows_hint > 1 && t->rows_hint <= 65536 ? t->rows_hint : 1;
}

/* Is a line cut into nf cells f one row of a table of ncols columns:
 * ncols cells, or one more, empty, where every line ends with the
 * separator (trailing, sacct -p)? */
static int cells_fit(size_t nf, char **f, size_t ncols, int trailing)
{
    return nf == ncols || (trailing && nf == ncols + 1 && !f[nf - 1][0]);
}

/* Does t->head or buf hold a 0x1E (records led by it)? */
static int has_rs(const struct slurm_table *t, const char *buf, size_t len)
{
    return (t->head && memchr(t->head, 0x1e, t->head_len)) ||
           memchr(buf, 0x1e, len);
}

int slurm_table_split(const char *buf, size_t len, slurm_hdr_known_f known,
                      struct slurm_table *t, exa_error_t *err)
{
    const char *p = buf, *end = buf + len, *next = NULL;
    char rec_sep = '\n';
    int first = 1;
    size_t *starts = NULL, *ends = NULL;
    size_t hdr_len = 0;
    const char *hdr_line = NULL;
    int padded = 0;

    if (has_rs(t, buf, len))
        rec_sep = 0x1e;
    if (t->head) { /* t->head's records, then buf's */
        next = buf;
        p = t->head;
        end = t->head + t->head_len;
    }
    t->sep = 0;
    for (;;) {
        const char *e;
        size_t l;
        char **f;
        size_t nf;
        const char *copy = NULL; /* split_sep's */
        int defer;
        if (p >= end) {
            if (!next)
                break;
            p = next;
            end = buf + len;
            next = NULL;
            continue;
        }
        e = memchr(p, rec_sep, (size_t)(end - p));
        if (!e)
            e = end;
        l = (size_t)(e - p);
        /* a record led by 0x1E ends at its newline */
        if (rec_sep == 0x1e)
            while (l && (p[l - 1] == '\n' || p[l - 1] == '\r'))
                l--;
        else if (l && p[l - 1] == '\r')
            l--;
        if (is_blank(p, l)) {
            p = e + 1;
            continue;
        }
        if (is_ruler(p, l)) {
            /* sacct's ruler gives exact column extents */
            if (t->hdr && !ends) {
                size_t k = 0, i = 0;
                free(starts);
                padded = 0;
                starts = xcalloc(t->nhdr, sizeof(*starts));
                ends = xcalloc(t->nhdr, sizeof(*ends));
                while (i < l && k < t->nhdr) {
                    while (i < l && p[i] != '-')
                        i++;
                    starts[k] = i;
                    while (i < l && p[i] == '-')
                        i++;
                    ends[k++] = i;
                }
                if (k != t->nhdr) {
                    free(starts);
                    free(ends);
                    starts = ends = NULL;
                }
            }
            p = e + 1;
            continue;
        }
        /* -l prints the time first: "Mon Nov 30 02:03:30 2026" */
        if (first && l >= 4 && p[3] == ' ' &&
            strstr("Mon Tue Wed Thu Fri Sat Sun ", head4(p, 4))) {
            p = e + 1;
            continue;
        }
        /* a Slurm client's error text is never a row; once the columns
         * are known, a line cut into as many cells as the header names
         * is a row whatever its cells say (a job named "Unable to contact
         * slurm controller" is still listed), so the check waits for the
         * cut (cells_fit); before, a line holding 0x1F (the separator of
         * exa's own formats, in no Slurm message) is no error text */
        defer = t->nhdr >= 2 && t->sep && t->sep != ' ';
        if (!defer && !memchr(p, 0x1f, l) && slurm_error_line(p, l)) {
            if (!t->error_line)
                t->error_line = trim_dup(t, p, l);
            p = e + 1;
            continue;
        }
        /* sinfo/squeue -M print "CLUSTER: name" before each cluster */
        if (l >= 9 && *p == 'C' && !strncmp(p, "CLUSTER: ", 9)) {
            p = e + 1;
            continue;
        }
        if (t->hdr && l == hdr_len && !memcmp(p, hdr_line, l)) {
            p = e + 1;
            continue;
        }
        if (!t->sep) {
            if (memchr(p, 0x1f, l))
                t->sep = 0x1f;
            else if (memchr(p, '|', l))
                t->sep = '|';
            else if (!memchr(p, ' ', l) && !memchr(p, '\t', l) &&
                     memchr(p, ',', l))
                t->sep = ',';
            else
                t->sep = ' ';
        }
        if (t->sep == ' ')
            nf = split_blanks(t, p, l, &f);
        else
            nf = split_sep(t, p, l, &t->sep, 1, t->sep == ',', &f, &copy);
        if (defer && !cells_fit(nf, f, t->nhdr, t->trailing_sep) &&
            slurm_error_line(p, l)) {
            if (!t->error_line)
                t->error_line = trim_dup(t, p, l);
            p = e + 1;
            continue;
        }
        if (first) {
            size_t nknown = 0;
            char u[64];
            first = 0;
            for (size_t i = 0; i < nf; i++) {
                upper_name(f[i], u, sizeof(u));
                if (known(u))
                    nknown++;
            }
            if (nf && ((known((upper_name(f[0], u, sizeof(u)), u)) &&
                        nknown * 2 >= nf) ||
                       (t->sep == ' ' &&
                        ruler_follows(e + 1, end, next, buf + len)))) {
                t->hdr = f;
                t->nhdr = nf;
                t->hdr_printed = 1;
                /* sacct -p ends every line with the separator */
                if (t->sep != ' ' && nf > 1 && !f[nf - 1][0]) {
                    --nf;
                    t->nhdr = nf;
                    t->trailing_sep = 1;
                }
                hdr_len = l;
                hdr_line = p;
                if (t->sep == ' ') {
                    /* column starts from the header line */
                    size_t k = 0, i = 0;
                    starts = xcalloc(nf, sizeof(*starts));
                    while (i < l && k < nf) {
                        while (i < l && p[i] == ' ')
                            i++;
                        starts[k++] = i;
                        while (i < l && p[i] != ' ')
                            i++;
                    }
                    starts[0] = 0;
                    /* -O style: every column padded, two blanks or more */
                    padded = nf > 1;
                    for (size_t c = 1; c < nf; c++)
                        if (starts[c] < 2 || p[starts[c] - 2] != ' ')
                            padded = 0;
                }
                p = e + 1;
                continue;
            }
        }
        if (t->nrows >= MAX_ROWS) {
            free(starts);
            free(ends);
            return exa_err(err, EXA_EPARSE, "more than %d rows", MAX_ROWS);
        }
        if (t->trailing_sep && nf > 1 && !f[nf - 1][0])
            --nf;
        if (t->sep != ' ' && !(nf > 1 && !f[nf - 1][0]))
            t->not_all_trailing = 1;
        ALLOC_GROW(t->rows, t->nrows ? t->nrows + 1 : rows_first(t), t->alloc);
        {
            struct slurm_row *r = &t->rows[t->nrows++];
            r->f = f;
            r->nf = nf;
            r->ntokens = nf;
            r->sliced = 0;
            r->off = NULL;
            r->cut = NULL;
            r->kept = t->text && t->sep != ' '; /* split_sep's cells */
            r->text = r->kept ? copy : NULL;
            r->text_len = r->kept ? l : 0;
            if (t->sep == ' ' && nf) {
                size_t i = 0, k = 0;
                r->off = arena_alloc(&t->arena, 2 * nf * sizeof(size_t));
                while (i < l && k < nf) {
                    while (i < l &&
                           (p[i] == ' ' || p[i] == '\t' || p[i] == '\r'))
                        i++;
                    r->off[2 * k] = i;
                    while (i < l && p[i] != ' ' && p[i] != '\t' && p[i] != '\r')
                        i++;
                    r->off[2 * k + 1] = i;
                    k++;
                }
            }
            if (t->sep == ' ' && t->hdr && starts && !ends && padded &&
                should_slice(p, l, starts, t->nhdr)) {
                r->f = slice(t, p, l, starts, NULL, t->nhdr);
                r->nf = t->nhdr;
                r->sliced = 1;
            } else if (t->sep == ' ' && t->hdr && nf != t->nhdr) {
                if (nf > t->nhdr && free_text_col(t->hdr[t->nhdr - 1]) &&
                    !ends) {
                    /* join the tail into the last (free text) column */
                    struct strbuf sb = STRBUF_INIT;
                    for (size_t k = t->nhdr - 1; k < nf; k++) {
                        if (sb.len)
                            strbuf_addch(&sb, ' ');
                        strbuf_addstr(&sb, f[k]);
                    }
                    f[t->nhdr - 1] = arena_strndup(&t->arena, sb.buf, sb.len);
                    strbuf_release(&sb);
                    r->nf = t->nhdr;
                } else if (starts && (ends || padded)) {
                    r->f = slice(t, p, l, starts, ends, t->nhdr);
                    r->nf = t->nhdr;
                    r->sliced = 1;
                }
            }
        }
        p = e + 1;
    }
    free(starts);
    free(ends);
    return 0;
}

/* The header names of spec as t->hdr (arena strings). */
static void hdr_from_spec(struct slurm_table *t, const struct cmd_spec *spec)
{
    t->hdr = arena_alloc(&t->arena, spec->ncols * sizeof(*t->hdr));
    for (size_t i = 0; i < spec->ncols; i++)
        t->hdr[i] = arena_strndup(&t->arena, spec->cols[i].name,
                                  strlen(spec->cols[i].name));
    t->nhdr = spec->ncols;
}

/* Cut line (l bytes) into spec->ncols cells by the spec's widths and
 * literals; cut[k] = 1 when cell k filled its fixed width. */
static char **slice_by_spec(struct slurm_table *t, const char *p, size_t l,
                            const struct cmd_spec *spec, unsigned char *cut)
{
    char **v = arena_alloc(&t->arena, spec->ncols * sizeof(*v));
    size_t i = 0;
    for (size_t k = 0; k < spec->ncols; k++) {
        const struct cmd_column *c = &spec->cols[k];
        size_t a = i, b, al = strlen(c->after);
        int last = k + 1 == spec->ncols;
        if (c->width && !last) {
            b = a + c->width < l ? a + c->width : l;
            cut[k] = b - a == c->width && b > a && p[b - 1] != ' ';
            i = b;
            if (al && i + al <= l && !memcmp(p + i, c->after, al))
                i += al;
        } else if (c->width && last) {
            b = l;
            cut[k] = b >= a && b - a >= c->width && b > a && p[b - 1] != ' ';
            i = l;
        } else if (al && !last) {
            const char *m = NULL;
            for (size_t j = a; j + al <= l; j++)
                if (!memcmp(p + j, c->after, al)) {
                    m = p + j;
                    break;
                }
            b = m ? (size_t)(m - p) : l;
            i = m ? b + al : l;
        } else {
            b = l;
            i = l;
        }
        v[k] = trim_dup(t, p + a, b > a ? b - a : 0);
    }
    return v;
}

/* Do the cells name the spec's columns (a printed header)? */
static int cells_are_header(char **f, size_t nf, const struct cmd_spec *spec,
                            slurm_hdr_known_f known)
{
    size_t same = 0, nknown = 0;
    char u[64];
    for (size_t i = 0; i < nf; i++) {
        upper_name(f[i], u, sizeof(u));
        if (i < spec->ncols && !strncasecmp(u, spec->cols[i].name, strlen(u)) &&
            *u)
            same++;
        if (known(u))
            nknown++;
    }
    return nf && (same == nf || (nknown * 2 >= nf &&
                                 known((upper_name(f[0], u, sizeof(u)), u))));
}

int slurm_table_split_spec(const char *buf, size_t len, slurm_hdr_known_f known,
                           const struct cmd_spec *spec, struct slurm_table *t,
                           exa_error_t *err)
{
    const char *p = buf, *end = buf + len, *next = NULL;
    char rec_sep = '\n';
    int first = 1;

    if (!spec || !spec->ncols)
        return slurm_table_split(buf, len, known, t, err);
    if (!spec->sep && !(spec->sliceable && spec->noheader)) {
        /* blank-separated natural widths: the usual split, and the
         * command's names where no header was printed */
        if (slurm_table_split(buf, len, known, t, err) < 0)
            return -1;
        if (!t->hdr)
            hdr_from_spec(t, spec);
        return 0;
    }
    if (has_rs(t, buf, len))
        rec_sep = 0x1e;
    if (t->head) { /* t->head's records, then buf's */
        next = buf;
        p = t->head;
        end = t->head + t->head_len;
    }
    hdr_from_spec(t, spec);
    t->sep = spec->sep && strlen(spec->sep) == 1 ? spec->sep[0] : 0x1f;
    if (t->sep == ' ')
        t->sep = 0x1f;
    t->trailing_sep = spec->trailing_sep;
    t->not_all_trailing = 1;
    for (;;) {
        const char *e;
        size_t l, nf;
        char **f;
        unsigned char *cut = NULL;
        const char *copy = NULL; /* split_sep's */
        if (p >= end) {
            if (!next)
                break;
            p = next;
            end = buf + len;
            next = NULL;
            continue;
        }
        e = memchr(p, rec_sep, (size_t)(end - p));
        if (!e)
            e = end;
        l = (size_t)(e - p);
        if (rec_sep == 0x1e)
            while (l && (p[l - 1] == '\n' || p[l - 1] == '\r'))
                l--;
        else if (l && p[l - 1] == '\r')
            l--;
        if (is_blank(p, l) || is_ruler(p, l) ||
            (l >= 9 && *p == 'C' && !strncmp(p, "CLUSTER: ", 9))) {
            p = e + 1;
            continue;
        }
        /* error text: as in slurm_table_split, a line cut at the spec's
         * separator into its count of cells is a row */
        if (!(spec->sep && spec->ncols >= 2) && slurm_error_line(p, l)) {
            if (!t->error_line)
                t->error_line = trim_dup(t, p, l);
            p = e + 1;
            continue;
        }
        if (spec->sep) {
            nf = split_sep(t, p, l, spec->sep, strlen(spec->sep), 0, &f, &copy);
            if (!cells_fit(nf, f, spec->ncols, spec->trailing_sep) &&
                spec->ncols >= 2 && slurm_error_line(p, l)) {
                if (!t->error_line)
                    t->error_line = trim_dup(t, p, l);
                p = e + 1;
                continue;
            }
            if (spec->trailing_sep && nf > 1 && !f[nf - 1][0])
                nf--;
        } else {
            cut = arena_alloc(&t->arena, spec->ncols);
            f = slice_by_spec(t, p, l, spec, cut);
            nf = spec->ncols;
        }
        if (first) {
            first = 0;
            if (cells_are_header(f, nf, spec, known)) {
                /* a printed header names the columns */
                t->hdr = f;
                t->nhdr = nf;
                t->hdr_printed = 1;
                p = e + 1;
                continue;
            }
        }
        if (t->nrows >= MAX_ROWS)
            return exa_err(err, EXA_EPARSE, "more than %d rows", MAX_ROWS);
        ALLOC_GROW(t->rows, t->nrows ? t->nrows + 1 : rows_first(t), t->alloc);
        {
            struct slurm_row *r = &t->rows[t->nrows++];
            memset(r, 0, sizeof(*r));
            r->f = f;
            r->nf = nf;
            r->ntokens = nf;
            r->sliced = !spec->sep;
            r->cut = cut;
            r->kept = t->text && spec->sep; /* split_sep's cells */
            r->text = r->kept ? copy : NULL;
            r->text_len = r->kept ? l : 0;
        }
        p = e + 1;
    }
    return 0;
}

void slurm_table_free(struct slurm_table *t)
{
    /* field, offset and cut arrays are the arena's too */
    free(t->rows);
    arena_release(&t->arena);
    memset(t, 0, sizeof(*t));
}

long slurm_table_col(const struct slurm_table *t, const char *name)
{
    char u[64], v[64];
    if (!t->hdr)
        return -1;
    upper_name(name, v, sizeof(v));
    for (size_t i = 0; i < t->nhdr; i++) {
        upper_name(t->hdr[i], u, sizeof(u));
        if (!strcmp(u, v))
            return (long)i;
    }
    return -1;
}

void slurm_table_drop_trailing(struct slurm_table *t)
{
    for (size_t i = 0; i < t->nrows; i++) {
        struct slurm_row *r = &t->rows[i];
        if (r->nf > 1 && !r->f[r->nf - 1][0]) {
            --r->nf;
            r->ntokens = r->nf;
        }
    }
}
