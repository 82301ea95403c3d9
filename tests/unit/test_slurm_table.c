/*
 * test_slurm_table.c - splitting rows on a command's separator string
 * (slurm_table_split_spec with spec->sep: sacct -P "|", squeue -O
 * "JobID:|,...", --delimiter=X, nvidia-smi ", "). Fixed cases for the
 * edges (separator first, last, repeated, overlapping with itself, cut
 * off at the end of the line, empty) and a differential check against a
 * byte-by-byte reference on random lines over a small alphabet (1 to 70
 * bytes), so that every overlap of separator bytes turns up.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "libsched/slurm_table.h"
#include "libutil/strbuf.h"

static int known_none(const char *u)
{
    (void)u;
    return 0;
}

static struct cmd_column cols[] = {
    {"COLUMN_ONE", 0, ""},
    {"COLUMN_TWO", 0, ""},
    {"COLUMN_THREE", 0, ""},
};

static void split(const char *buf, const char *sep, struct slurm_table *t)
{
    struct cmd_spec spec = CMD_SPEC_INIT;
    exa_error_t err = EXA_ERROR_INIT;
    spec.tool = CMD_TOOL_SQUEUE;
    spec.cols = cols;
    spec.ncols = 3;
    spec.sep = (char *)sep;
    spec.noheader = 1;
    memset(t, 0, sizeof(*t));
    assert_int_equal(
        slurm_table_split_spec(buf, strlen(buf), known_none, &spec, t, &err),
        0);
}

static void expect_row(const struct slurm_table *t, size_t r,
                       const char *const *want, size_t n)
{
    assert_true(r < t->nrows);
    assert_int_equal(t->rows[r].nf, n);
    for (size_t i = 0; i < n; i++)
        assert_string_equal(t->rows[r].f[i], want[i]);
}

static void test_fixed_cases(void **state)
{
    static const struct {
        const char *line, *sep;
        size_t n;
        const char *f[6];
    } c[] = {
        {"xa|b|c", "|", 3, {"xa", "b", "c"}},
        {"x | b |  c ", "|", 3, {"x", "b", "c"}},
        {"x||", "|", 3, {"x", "", ""}},
        {"x, 81559 MiB, 0 %", ", ", 3, {"x", "81559 MiB", "0 %"}},
        {"x,81559 MiB, 0", ", ", 2, {"x,81559 MiB", "0"}},
        {"x::y:::z", "::", 3, {"x", "y", ":z"}},
        {"xaaay", "aa", 2, {"x", "ay"}},
        {"xaaaay", "aa", 3, {"x", "", "y"}},
        {"x|:y|", "|:|", 1, {"x|:y|"}},
        {"x|:|", "|:|", 2, {"x", ""}},
        {"x\t|\ty\r", "|", 2, {"x", "y"}},
        {"x|y", "", 1, {"x|y"}},
    };
    (void)state;
    for (size_t i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
        struct slurm_table t;
        split(c[i].line, c[i].sep, &t);
        assert_int_equal(t.nrows, 1);
        expect_row(&t, 0, c[i].f, c[i].n);
        slurm_table_free(&t);
    }
}

/* The splitting rule, byte by byte: fields end at the leftmost
 * non-overlapping occurrences of sep, then lose their blanks. */
static char **ref_split(const char *line, size_t len, const char *sep,
                        size_t *n)
{
    size_t sl = strlen(sep), i = 0, cap = 8;
    char **v = malloc(cap * sizeof(*v));
    *n = 0;
    for (;;) {
        size_t j = i, a, b;
        while (sl && j < len && !(j + sl <= len && !memcmp(line + j, sep, sl)))
            j++;
        if (!sl)
            j = len;
        a = i;
        b = j;
        while (a < b && strchr(" \t\r\n", line[a]))
            a++;
        while (b > a && strchr(" \t\r\n", line[b - 1]))
            b--;
        if (*n == cap)
            v = realloc(v, (cap *= 2) * sizeof(*v));
        v[*n] = strndup(line + a, b - a);
        (*n)++;
        if (j >= len)
            break;
        i = j + sl;
    }
    return v;
}

static void test_against_reference(void **state)
{
    static const char alpha[] = "xy|: \t";
    static const char *const seps[] = {
        "|", ":", "||", "|:", ":|:", "|||", " :", ", ", "x|"};
    unsigned seed = 12345;
    (void)state;
    for (size_t s = 0; s < sizeof(seps) / sizeof(seps[0]); s++) {
        struct strbuf buf = STRBUF_INIT;
        struct slurm_table t;
        char lines[200][80];
        size_t nl = 200;
        for (size_t l = 0; l < nl; l++) {
            /* up to 70 bytes: several 16-byte blocks of the one-byte
             * separators' block search, its overlapping last block and
             * lines shorter than a block */
            size_t len = 1 + (seed = seed * 1103515245u + 12345u) % 70;
            lines[l][0] = 'x'; /* never blank, a header or an error line */
            for (size_t k = 1; k < len; k++)
                lines[l][k] =
                    alpha[((seed = seed * 1103515245u + 12345u) >> 16) % 6];
            lines[l][len] = '\0';
            strbuf_addstr(&buf, lines[l]);
            strbuf_addch(&buf, '\n');
        }
        split(buf.buf, seps[s], &t);
        assert_int_equal(t.nrows, nl);
        for (size_t l = 0; l < nl; l++) {
            size_t n;
            char **want = ref_split(lines[l], strlen(lines[l]), seps[s], &n);
            expect_row(&t, l, (const char *const *)want, n);
            for (size_t i = 0; i < n; i++)
                free(want[i]);
            free(want);
        }
        slurm_table_free(&t);
        strbuf_release(&buf);
    }
}

/* Lines whose first 16 to 47 bytes hold no blank (the one-byte
 * separator's block search then cuts cells without trimming), then a
 * tail of blanks, tabs, CRs and UTF-8 bytes (0x80 and over, which are
 * never trimmed): every cell as the byte-by-byte rule cuts and trims it,
 * whether it was cut before or after the first blank. */
static void test_clean_then_dirty(void **state)
{
    static const char clean[] = "xyz|:ab";
    static const char *const dirty[] = {" ", "\t", "\r", "\xc3\xa9",     "|",
                                        ":", "q",  " |", "\xe2\x82\xac "};
    static const char *const seps[] = {"|", ":"};
    unsigned seed = 777;
    (void)state;
    for (size_t s = 0; s < 2; s++) {
        struct strbuf buf = STRBUF_INIT;
        struct slurm_table t;
        char lines[150][128];
        for (size_t l = 0; l < 150; l++) {
            size_t nclean = 16 + (seed = seed * 1103515245u + 12345u) % 32, k;
            lines[l][0] = 'x';
            for (k = 1; k < nclean; k++)
                lines[l][k] =
                    clean[((seed = seed * 1103515245u + 12345u) >> 16) % 7];
            lines[l][k] = '\0';
            for (size_t d = 0; d < 1 + (seed >> 20) % 12; d++) {
                const char *piece =
                    dirty[((seed = seed * 1103515245u + 12345u) >> 16) % 9];
                size_t have = strlen(lines[l]), add = strlen(piece);
                if (have + add < sizeof(lines[l]) - 1)
                    memcpy(lines[l] + have, piece, add + 1);
            }
            strbuf_addstr(&buf, lines[l]);
            strbuf_addch(&buf, '\n');
        }
        split(buf.buf, seps[s], &t);
        assert_int_equal(t.nrows, 150);
        for (size_t l = 0; l < 150; l++) {
            size_t n;
            /* the line as the split saw it: a trailing CR is the line
             * end's */
            size_t len = strlen(lines[l]);
            while (len && lines[l][len - 1] == '\r')
                len--;
            char **want = ref_split(lines[l], len, seps[s], &n);
            expect_row(&t, l, (const char *const *)want, n);
            for (size_t i = 0; i < n; i++)
                free(want[i]);
            free(want);
        }
        slurm_table_free(&t);
        strbuf_release(&buf);
    }
}

/* More cells than the splitter keeps on its stack (128), on one- and
 * two-byte separators, kept in order. */
static void test_many_cells(void **state)
{
    static const char *const seps[] = {"|", "::"};
    (void)state;
    for (size_t s = 0; s < 2; s++) {
        struct strbuf line = STRBUF_INIT;
        struct slurm_table t;
        for (size_t k = 0; k < 300; k++)
            strbuf_addf(&line, "%sc%zu", k ? seps[s] : "", k);
        split(line.buf, seps[s], &t);
        assert_int_equal(t.nrows, 1);
        assert_int_equal(t.rows[0].nf, 300);
        for (size_t k = 0; k < 300; k++) {
            char want[16];
            snprintf(want, sizeof(want), "c%zu", k);
            assert_string_equal(t.rows[0].f[k], want);
        }
        slurm_table_free(&t);
        strbuf_release(&line);
    }
}

static int known_hdr(const char *u)
{
    return !strcmp(u, "JOBID") || !strcmp(u, "STATE") || !strcmp(u, "NAME");
}

/* Two tables split alike: header, rows and cells. */
static void expect_same(const struct slurm_table *a,
                        const struct slurm_table *b)
{
    assert_int_equal(a->nhdr, b->nhdr);
    for (size_t i = 0; i < a->nhdr; i++)
        assert_string_equal(a->hdr[i], b->hdr[i]);
    assert_int_equal(a->hdr_printed, b->hdr_printed);
    assert_int_equal(a->sep, b->sep);
    assert_int_equal(a->nrows, b->nrows);
    assert_int_equal(a->error_line != NULL, b->error_line != NULL);
    for (size_t r = 0; r < a->nrows; r++) {
        assert_int_equal(a->rows[r].nf, b->rows[r].nf);
        assert_int_equal(a->rows[r].sliced, b->rows[r].sliced);
        for (size_t i = 0; i < a->rows[r].nf; i++)
            assert_string_equal(a->rows[r].f[i], b->rows[r].f[i]);
    }
}

/* slurm_table.head: a header line split ahead of buf's records gives
 * the split of the two in one buffer (with and without a spec; 0x1E and
 * newline records; a ruler or blank lines after the header). */
static void test_head_segment(void **state)
{
    static const char *const cases[][2] = {
        {"JOBID|STATE|NAME\n", "1|RUNNING|a\n2|PENDING|b c\n"},
        {"\x1e"
         "JOBID\x1fSTATE\x1fNAME\n",
         "\x1e"
         "1\x1fRUNNING\x1f"
         "a\n\x1e"
         "2\x1fPENDING\x1f"
         "b\n"},
        {"JOBID   STATE     NAME\n",
         "\n-------- --------- ----\n1       RUNNING   a b\n2 PENDING x\n"},
        {"JOBID   STATE     NAME\n\n", "   \n--------- ------ ----\n1 R a\n"},
        {"JOBID STATE NAME\n", "1 RUNNING a\nsqueue: error: oops\n"},
        {"JOBID,STATE,NAME\n", "1,RUNNING,a[1,2]\n"},
    };
    for (size_t c = 0; c < 2 * sizeof(cases) / sizeof(cases[0]); c++) {
        /* a header known by its names, or only by the ruler after it */
        slurm_hdr_known_f known = c % 2 ? known_none : known_hdr;
        for (int with_spec = 0; with_spec < 2; with_spec++) {
            struct cmd_spec spec = CMD_SPEC_INIT;
            struct cmd_spec *sp = with_spec ? &spec : NULL;
            struct slurm_table one, two;
            exa_error_t err = EXA_ERROR_INIT;
            char *both;
            size_t hl = strlen(cases[c / 2][0]), bl = strlen(cases[c / 2][1]);
            spec.tool = CMD_TOOL_SQUEUE;
            spec.cols = cols;
            spec.ncols = 3;
            spec.sep = strchr(cases[c / 2][0], '|') ? (char *)"|" : NULL;
            both = malloc(hl + bl + 1);
            memcpy(both, cases[c / 2][0], hl);
            memcpy(both + hl, cases[c / 2][1], bl + 1);
            memset(&one, 0, sizeof(one));
            memset(&two, 0, sizeof(two));
            assert_int_equal(
                slurm_table_split_spec(both, hl + bl, known, sp, &one, &err),
                0);
            two.head = cases[c / 2][0];
            two.head_len = hl;
            assert_int_equal(slurm_table_split_spec(cases[c / 2][1], bl, known,
                                                    sp, &two, &err),
                             0);
            expect_same(&one, &two);
            slurm_table_free(&one);
            slurm_table_free(&two);
            free(both);
        }
    }
}

/* A printed header sizes each row's cell array; rows with more cells
 * than it names (past the stack's 128 too) and with fewer keep every
 * cell, in order, with and without a spec. */
static void test_header_sized_cells(void **state)
{
    struct strbuf buf = STRBUF_INIT;
    (void)state;
    strbuf_addstr(&buf, "JOBID|STATE|NAME\n1|RUNNING|a\n2|PENDING\n3\n");
    strbuf_addstr(&buf, "4|RUNNING|a|extra|more\n");
    for (size_t k = 0; k < 200; k++)
        strbuf_addf(&buf, "%sc%zu", k ? "|" : "", k);
    strbuf_addstr(&buf, "\n5|RUNNING| b \n");
    for (int with_spec = 0; with_spec < 2; with_spec++) {
        struct cmd_spec spec = CMD_SPEC_INIT;
        struct slurm_table t;
        exa_error_t err = EXA_ERROR_INIT;
        spec.tool = CMD_TOOL_SQUEUE;
        spec.cols = cols;
        spec.ncols = 3;
        spec.sep = (char *)"|";
        memset(&t, 0, sizeof(t));
        assert_int_equal(slurm_table_split_spec(buf.buf, buf.len, known_hdr,
                                                with_spec ? &spec : NULL, &t,
                                                &err),
                         0);
        assert_int_equal(t.hdr_printed, 1);
        assert_int_equal(t.nrows, 6);
        expect_row(&t, 0, (const char *const[]){"1", "RUNNING", "a"}, 3);
        expect_row(&t, 1, (const char *const[]){"2", "PENDING"}, 2);
        expect_row(&t, 2, (const char *const[]){"3"}, 1);
        expect_row(&t, 3,
                   (const char *const[]){"4", "RUNNING", "a", "extra", "more"},
                   5);
        assert_int_equal(t.rows[4].nf, 200);
        for (size_t k = 0; k < 200; k++) {
            char want[16];
            snprintf(want, sizeof(want), "c%zu", k);
            assert_string_equal(t.rows[4].f[k], want);
        }
        expect_row(&t, 5, (const char *const[]){"5", "RUNNING", "b"}, 3);
        slurm_table_free(&t);
    }
    strbuf_release(&buf);
}

/* slurm_error_line's search for the controller message anywhere in a
 * line, at its very end too, and not in a line one byte short of it */
static void test_error_line_needle(void **state)
{
    static const struct {
        const char *line;
        int want;
    } cases[] = {
        {"Unable to contact slurm controller", 1},
        {"x Unable to contact slurm controller", 1},
        {"RUNNING|Unable to contact slurm controller (connect failure)", 1},
        {"UUUUnable to contact slurm controller", 1},
        {"Unable to contact slurm controlle", 0},
        {"x Unable to contact slurm controlle", 0},
        {"RUNNING|UNKNOWN|U", 0},
        {"", 0},
    };
    (void)state;
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
        assert_int_equal(slurm_error_line(cases[i].line, strlen(cases[i].line)),
                         cases[i].want);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_fixed_cases),
        cmocka_unit_test(test_against_reference),
        cmocka_unit_test(test_many_cells),
        cmocka_unit_test(test_clean_then_dirty),
        cmocka_unit_test(test_header_sized_cells),
        cmocka_unit_test(test_head_segment),
        cmocka_unit_test(test_error_line_needle),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
