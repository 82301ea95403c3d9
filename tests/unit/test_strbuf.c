/*
 * test_strbuf.c - strbuf, strvec, the arena and the JSON helpers of libutil.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <string.h>

#include "libutil/arena.h"
#include "libutil/error.h"
#include "libutil/json.h"
#include "libutil/strbuf.h"
#include "libutil/strvec.h"

static void test_strbuf_basic(void **state)
{
    struct strbuf sb = STRBUF_INIT;
    assert_int_equal(sb.len, 0);
    assert_string_equal(sb.buf, "");
    strbuf_addstr(&sb, "  node");
    strbuf_addf(&sb, "[%03d-%d]  ", 1, 4);
    assert_string_equal(sb.buf, "  node[001-4]  ");
    strbuf_trim(&sb);
    assert_string_equal(sb.buf, "node[001-4]");
    assert_int_equal(sb.len, 11);
    strbuf_add(&sb, "\0x", 2);
    assert_int_equal(sb.len, 13);
    assert_int_equal(sb.buf[11], '\0');
    char *s = strbuf_detach(&sb, NULL);
    assert_string_equal(sb.buf, "");
    assert_string_equal(s, "node[001-4]");
    free(s);
    strbuf_release(&sb);
}

static void test_strbuf_grow_large(void **state)
{
    struct strbuf sb = STRBUF_INIT;
    for (int i = 0; i < 100000; i++)
        strbuf_addch(&sb, 'a' + i % 26);
    assert_int_equal(sb.len, 100000);
    assert_int_equal(sb.buf[99999], 'a' + 99999 % 26);
    assert_int_equal(sb.buf[100000], '\0');
    strbuf_release(&sb);
}

static void test_prefix_helpers(void **state)
{
    const char *rest;
    assert_true(starts_with("gres/gpu:a100=1", "gres/gpu"));
    assert_false(starts_with("gres", "gres/gpu"));
    assert_true(ends_with("job.batch", ".batch"));
    assert_true(skip_prefix("--output=json", "--output=", &rest));
    assert_string_equal(rest, "json");
    assert_false(skip_prefix("-o", "--output=", &rest));
}

static void test_strvec(void **state)
{
    struct strvec sv = STRVEC_INIT;
    assert_null(sv.v[0]);
    strvec_pushl(&sv, "sbatch", "--parsable", NULL);
    strvec_pushf(&sv, "--gpus=%d", 2);
    assert_int_equal(sv.nr, 3);
    assert_string_equal(sv.v[2], "--gpus=2");
    assert_null(sv.v[3]);
    strvec_pop(&sv);
    assert_int_equal(sv.nr, 2);
    strvec_split(&sv, "a,,b", ',');
    assert_int_equal(sv.nr, 5);
    assert_string_equal(sv.v[3], "");
    assert_string_equal(sv.v[4], "b");
    strvec_clear(&sv);
    assert_int_equal(sv.nr, 0);
    /* comma-separated lists: whole items only */
    assert_int_equal(csv_has("gpu,long", "long", 4), 1);
    assert_int_equal(csv_has("gpu,long", "gpu", 3), 1);
    assert_int_equal(csv_has("gpu2,long", "gpu", 3), 0);
    assert_int_equal(csv_has("gpu", "gpu2", 4), 0);
    assert_int_equal(csv_has("a,,b", "", 0), 1);
    assert_int_equal(csv_has("", "", 0), 0);
    assert_int_equal(csv_has(NULL, "a", 1), 0);
    assert_int_equal(csv_has_any("cpu,long", "gpu,long"), 1);
    assert_int_equal(csv_has_any("cpu,long", "gpu,lon"), 0);
    assert_int_equal(csv_has_any("cpu", NULL), 0);
}

static void test_json_never_nan(void **state)
{
    json_t *o = json_object();
    jx_set(o, "nan", jx_real(NAN));
    jx_set(o, "inf", jx_real(-INFINITY));
    jx_set(o, "x", jx_real(1.5));
    jx_set(o, "bad", jx_str("ok\xff\xfe"));
    char *s = json_dumps(o, JSON_SORT_KEYS | JSON_COMPACT);
    assert_string_equal(s, "{\"bad\":\"ok\xef\xbf\xbd\xef\xbf\xbd\","
                           "\"inf\":null,\"nan\":null,\"x\":1.5}");
    free(s);
    assert_int_equal(jx_get_int(o, "x", 7), 7);
    assert_true(jx_get_num(o, "x", 0) == 1.5);
    assert_null(jx_get_str(o, "x", NULL));
    json_decref(o);
}

static void test_error(void **state)
{
    exa_error_t err = EXA_ERROR_INIT;
    assert_int_equal(
        exa_err(&err, EXA_ETRANSPORT, "ssh to '%s' failed", "login1"), -1);
    assert_string_equal(err.text, "ssh to 'login1' failed");
    exa_err_prefix(&err, "detect");
    assert_string_equal(err.text, "detect: ssh to 'login1' failed");
    assert_int_equal(exa_errc_exit(err.code), 4);
    assert_int_equal(exa_errc_exit(EXA_ENOTAPPROVED), 6);
    assert_int_equal(exa_errc_exit(EXA_EUSAGE), 2);
    assert_int_equal(exa_err(NULL, EXA_EFAIL, "x"), -1);
}

/* Arena objects are aligned, zeroed, independent, and survive a new
 * chunk; an object larger than a chunk gets its own. */
static void test_arena(void **state)
{
    struct arena a = {0};
    char *first, *s, *big;
    size_t *arr;
    (void)state;
    first = arena_strndup(&a, "gpu-00001|64", 9);
    assert_string_equal(first, "gpu-00001");
    assert_null(arena_strdup(&a, NULL));
    assert_string_equal(arena_strdup(&a, ""), "");
    for (int i = 0; i < 20000; i++) { /* several 64 KiB chunks */
        arr = arena_alloc(&a, 3 * sizeof(*arr));
        assert_int_equal((uintptr_t)arr % 16, 0);
        assert_int_equal(arr[0] | arr[1] | arr[2], 0);
        arr[0] = arr[1] = arr[2] = (size_t)i;
        s = arena_strdup(&a, "node");
        assert_string_equal(s, "node");
    }
    big = arena_alloc(&a, 200000);
    memset(big, 'x', 200000);
    s = arena_strndup(&a, "after", 5);
    assert_string_equal(s, "after");
    assert_string_equal(first, "gpu-00001");
    assert_non_null(arena_alloc(&a, 0));
    arena_release(&a);
    assert_null(a.head);
    assert_string_equal(arena_strdup(&a, "again"), "again");
    arena_release(&a);
}

/* strbuf_take: into an empty buffer the storage moves (same pointer, no
 * copy); onto bytes it appends; src is left empty and usable either way. */
static void test_strbuf_take(void **state)
{
    struct strbuf a = STRBUF_INIT, b = STRBUF_INIT, e = STRBUF_INIT;
    char *p;
    (void)state;
    strbuf_addstr(&b, "output of a command");
    p = b.buf;
    strbuf_take(&a, &b);
    assert_ptr_equal(a.buf, p);
    assert_string_equal(a.buf, "output of a command");
    assert_int_equal(a.len, 19);
    assert_int_equal(b.len, 0);
    assert_int_equal(b.alloc, 0);
    assert_string_equal(b.buf, "");
    strbuf_addstr(&b, " and more");
    strbuf_take(&a, &b);
    assert_string_equal(a.buf, "output of a command and more");
    assert_int_equal(b.alloc, 0);
    strbuf_take(&a, &e); /* nothing to take */
    assert_string_equal(a.buf, "output of a command and more");
    strbuf_take(&a, &a); /* itself: unchanged */
    assert_string_equal(a.buf, "output of a command and more");
    strbuf_reset(&a); /* empty but allocated: the old storage is freed */
    strbuf_addstr(&b, "x");
    strbuf_take(&a, &b);
    assert_string_equal(a.buf, "x");
    strbuf_take(&e, &b); /* an empty src into an unallocated sb */
    assert_int_equal(e.len, 0);
    assert_string_equal(e.buf, "");
    strbuf_release(&a);
    strbuf_release(&b);
    strbuf_release(&e);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_strbuf_basic),
        cmocka_unit_test(test_strbuf_grow_large),
        cmocka_unit_test(test_prefix_helpers),
        cmocka_unit_test(test_strvec),
        cmocka_unit_test(test_json_never_nan),
        cmocka_unit_test(test_error),
        cmocka_unit_test(test_arena),
        cmocka_unit_test(test_strbuf_take),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
