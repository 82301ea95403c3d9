/*
 * shquote.c - single-quote shell quoting (see shquote.h for the rule).
 *
 * Kept deliberately tiny: one rule, no shell-specific escapes, so it can be
 * checked by eye and by the injection tests in tests/unit/test_shquote.c.
 */
#include "libutil/shquote.h"

#include <string.h>

static int is_safe(const char *s)
{
    if (!*s)
        return 0;
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
              (c >= '0' && c <= '9') || strchr("_@%+=:,./-", c)))
            return 0;
    }
    return 1;
}

void shquote_append(struct strbuf *sb, const char *s)
{
    if (is_safe(s)) {
        strbuf_addstr(sb, s);
        return;
    }
    strbuf_addch(sb, '\'');
    for (; *s; s++) {
        if (*s == '\'')
            strbuf_addstr(sb, "'\\''");
        else
            strbuf_addch(sb, *s);
    }
    strbuf_addch(sb, '\'');
}

char *shquote(const char *s)
{
    struct strbuf sb = STRBUF_INIT;
    shquote_append(&sb, s);
    return strbuf_detach(&sb, NULL);
}

void shquote_argv(struct strbuf *sb, const char *const *argv)
{
    for (size_t i = 0; argv[i]; i++) {
        if (i)
            strbuf_addch(sb, ' ');
        shquote_append(sb, argv[i]);
    }
}
