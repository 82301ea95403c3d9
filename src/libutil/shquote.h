/*
 * shquote.h - POSIX shell quoting, the one function every remote argument
 * goes through.
 *
 * ssh hands the remote side one string that the login shell re-parses, and
 * run.sh is read by bash; both are places where a job name such as
 * `x; touch /tmp/pwned` would run as a command if pasted raw. Every word is
 * therefore wrapped in single quotes, inside which POSIX sh (XCU 2.2.2)
 * gives no character a special meaning; an embedded single quote becomes
 * '\'' (close, escaped quote, reopen). Words made only of characters that
 * are never special ([A-Za-z0-9_@%+=:,./-]) are left bare for readability.
 */
#ifndef EXA_SHQUOTE_H
#define EXA_SHQUOTE_H

#include "libutil/strbuf.h"

/* Append the quoted form of s (NUL-terminated; "" gives '') to sb. */
void shquote_append(struct strbuf *sb, const char *s);

/* malloc'ed quoted form of s. Caller frees. */
char *shquote(const char *s);

/*
 * Append each word of the NULL-terminated argv, quoted, separated by one
 * space: the command line a POSIX shell splits back into exactly argv.
 */
void shquote_argv(struct strbuf *sb, const char *const *argv);

#endif
