/*
 * fuzz_etag.c - libFuzzer target for libutil/etag.h, the If-None-Match
 * reader of the console's conditional GETs (server/console.c). Checks the
 * contract, not just "no crash": only size bytes are read (the input is
 * copied to an exact-size buffer, so ASan sees a read past it), the answer
 * is 0 or 1, a tag quoted from the input's first line matches a list that
 * holds it, and the same bytes followed by junk that is no list never do.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "libutil/etag.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *buf = malloc(size ? size : 1);
    char tag[64 + 3]; /* quote, up to 64 bytes, quote, NUL */
    size_t tl = 0;
    int r;

    memcpy(buf, data, size);
    r = etag_if_none_match(buf, size, "\"0123456789abcdef\"");
    if (r != 0 && r != 1)
        __builtin_trap();

    /* a tag made of the input's leading etagc bytes (at most 64) */
    tag[tl++] = '"';
    for (size_t i = 0; i < size && tl < 65; i++) {
        unsigned char c = data[i];
        if (!(c == 0x21 || (c >= 0x23 && c <= 0x7e) || c >= 0x80))
            break;
        tag[tl++] = (char)c;
    }
    tag[tl++] = '"';
    tag[tl] = '\0';
    {
        char list[160];
        size_t n = 0;
        memcpy(list + n, "\"x\", W/", 7);
        n += 7;
        memcpy(list + n, tag, tl);
        n += tl;
        if (!etag_if_none_match(list, n, tag))
            __builtin_trap(); /* the tag is in the list */
        list[n++] = ' ';
        list[n++] = 'j';
        if (etag_if_none_match(list, n, tag))
            __builtin_trap(); /* not a list any more */
    }
    free(buf);
    return 0;
}
