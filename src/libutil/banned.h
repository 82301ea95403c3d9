/*
 * banned.h - functions exa code must not call.
 *
 * Included last by every exa translation unit (through the compiler's
 * -include flag in the Makefile), so a use of one of these names fails to
 * compile. The replacements: strbuf_addf/xsnprintf for sprintf, strbuf or
 * memcpy with an explicit length for strcpy/strcat, the cursor helpers in
 * libutil/parse.h for atoi/strtok. Modelled on git's banned.h.
 */
#ifndef EXA_BANNED_H
#define EXA_BANNED_H

/* System headers first, so their own declarations are not rewritten. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define BANNED(func) sorry_##func##_is_a_banned_function

#undef strcpy
#define strcpy(x, y) BANNED(strcpy)
#undef strcat
#define strcat(x, y) BANNED(strcat)
#undef strncpy
#define strncpy(x, y, n) BANNED(strncpy)
#undef strncat
#define strncat(x, y, n) BANNED(strncat)
#undef sprintf
#define sprintf(...) BANNED(sprintf)
#undef vsprintf
#define vsprintf(...) BANNED(vsprintf)
#undef atoi
#define atoi(x) BANNED(atoi)
#undef atol
#define atol(x) BANNED(atol)
#undef strtok
#define strtok(x, y) BANNED(strtok)
#undef gets
#define gets(x) BANNED(gets)

#endif
