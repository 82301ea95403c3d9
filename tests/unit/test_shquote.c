/*
 * test_shquote.c - every hostile word survives a real shell unchanged:
 * quote it, hand it to `sh -c 'printf %s WORD'`, compare the bytes, and
 * check that no injected command ran (its marker file is absent).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "libutil/shquote.h"
#include "libutil/subprocess.h"

static char marker[64];

static void roundtrip(const char *word)
{
    struct strbuf cmd = STRBUF_INIT;
    struct subprocess_result res = SUBPROCESS_RESULT_INIT;
    const char *argv[] = {"sh", "-c", NULL, NULL};

    strbuf_addstr(&cmd, "printf %s ");
    shquote_append(&cmd, word);
    argv[2] = cmd.buf;
    assert_int_equal(subprocess_run(argv, NULL, &res, NULL), 0);
    assert_int_equal(res.exit_code, 0);
    assert_string_equal(res.out.buf, word);
    assert_int_equal(access(marker, F_OK), -1);
    subprocess_result_release(&res);
    strbuf_release(&cmd);
}

static void test_exact_forms(void **state)
{
    char *q;

    q = shquote("plain-word_1.0");
    assert_string_equal(q, "plain-word_1.0");
    free(q);
    q = shquote("");
    assert_string_equal(q, "''");
    free(q);
    q = shquote("it's");
    assert_string_equal(q, "'it'\\''s'");
    free(q);
    q = shquote("a b");
    assert_string_equal(q, "'a b'");
    free(q);
    q = shquote("~root");
    assert_string_equal(q, "'~root'");
    free(q);
}

static void test_injection_strings(void **state)
{
    char buf[256];
    const char *words[] = {
        "; touch MARK",
        "$(touch MARK)",
        "`touch MARK`",
        "' ; touch MARK ; '",
        "\" ; touch MARK ; \"",
        "a\ntouch MARK\n",
        "x && touch MARK",
        "| touch MARK",
        "$HOME",
        "${IFS}",
        "*",
        "\\",
        "'",
        "''",
        "a'b\"c",
        "%j %% {{id}}",
        "-n",
        "--",
        "\t tab",
        "!",
        "#comment",
        "$(printf '%s' \"`touch MARK`\")",
    };

    for (size_t i = 0; i < sizeof(words) / sizeof(words[0]); i++) {
        /* substitute the marker path for MARK */
        const char *m = strstr(words[i], "MARK");
        if (m) {
            snprintf(buf, sizeof(buf), "%.*s%s%s", (int)(m - words[i]),
                     words[i], marker, m + 4);
            roundtrip(buf);
        } else {
            roundtrip(words[i]);
        }
    }
}

static void test_argv_join(void **state)
{
    struct strbuf sb = STRBUF_INIT;
    struct subprocess_result res = SUBPROCESS_RESULT_INIT;
    const char *words[] = {"printf", "[%s]", "a b", "", "c'd", "; x", NULL};
    const char *argv[] = {"sh", "-c", NULL, NULL};

    shquote_argv(&sb, words);
    assert_string_equal(sb.buf, "printf '[%s]' 'a b' '' 'c'\\''d' '; x'");
    argv[2] = sb.buf;
    assert_int_equal(subprocess_run(argv, NULL, &res, NULL), 0);
    assert_string_equal(res.out.buf, "[a b][][c'd][; x]");
    subprocess_result_release(&res);
    strbuf_release(&sb);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_exact_forms),
        cmocka_unit_test(test_injection_strings),
        cmocka_unit_test(test_argv_join),
    };
    snprintf(marker, sizeof(marker), "/tmp/exa-pwned-%ld", (long)getpid());
    unlink(marker);
    return cmocka_run_group_tests(tests, NULL, NULL);
}
