/*
 * fuzz_json_canon.c - libFuzzer target for the audit chain's canonical
 * shortcut (libutil/json.h jx_is_canonical_flat, used by audit_hash on
 * every stored event's details): whenever it says a text is its own
 * canonical form, jansson's canonical dump of that text's parse must be
 * the same bytes, or an event hash would change meaning. jx_quote must
 * write what jansson writes for the same string.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "libutil/json.h"
#include "libutil/strbuf.h"
#include "libutil/xalloc.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *text;
    struct strbuf sb = STRBUF_INIT;
    json_t *j;
    char *want;

    if (memchr(data, 0, size))
        return 0;
    text = xmalloc(size + 1);
    memcpy(text, data, size);
    text[size] = '\0';
    if (jx_is_canonical_flat(text)) {
        char *canon;
        j = json_loads(text, JSON_DECODE_ANY, NULL);
        if (!j)
            __builtin_trap();
        canon = jx_dumps_canonical(j);
        if (strcmp(canon, text))
            __builtin_trap();
        free(canon);
        /* jx_flat_str reads a member as jansson does (governance reads
         * an audit event's "state" and "row_sha256" with it) */
        for (size_t k = 0; k < 3; k++) {
            static const char *const keys[] = {"state", "a", "row_sha256"};
            const char *v, *want_v = jx_get_str(j, keys[k], NULL);
            size_t len;
            int rc = jx_flat_str(text, keys[k], &v, &len);
            if (rc == 1 &&
                (!want_v || strlen(want_v) != len || memcmp(want_v, v, len)))
                __builtin_trap();
            if (rc == 0 && want_v)
                __builtin_trap();
            if (rc == -1 && !want_v)
                __builtin_trap();
        }
        json_decref(j);
    }
    j = jx_str(text);
    want = json_dumps(j, JSON_ENCODE_ANY);
    jx_quote(&sb, text);
    if (strcmp(sb.buf, want ? want : "null"))
        __builtin_trap();
    free(want);
    json_decref(j);
    strbuf_release(&sb);
    free(text);
    return 0;
}
