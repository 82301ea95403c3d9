/*
 * fuzz_worker_proto.c - libFuzzer target: the worker protocol decoder
 * (libtask/proto.c) that `exa serve --worker-listen` runs on every request
 * from a compute node, and the join-token verifier. The first byte picks
 * the entry point; the rest is the path, body, token or (8) the
 * provisioners.json the provisioner reads. A decoded spec is
 * encoded and decoded again and must come back equal.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "libprovision/provision.h"
#include "libtask/proto.h"
#include "libtask/token.h"
#include "libutil/json.h"
#include "libutil/xalloc.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void spec_roundtrip(const char *body, size_t len)
{
    json_error_t je;
    json_t *j = json_loadb(body, len, JSON_REJECT_DUPLICATES, &je);
    struct tp_spec s, back;
    exa_error_t err = EXA_ERROR_INIT;
    if (!j)
        return;
    if (tp_spec_decode(j, &s, &err) == 0) {
        json_t *enc = tp_spec_encode(&s);
        char *a, *b;
        if (tp_spec_decode(enc, &back, &err) < 0)
            abort();
        a = jx_dumps_canonical(enc);
        json_decref(enc);
        enc = tp_spec_encode(&back);
        b = jx_dumps_canonical(enc);
        if (strcmp(a, b))
            abort();
        free(a);
        free(b);
        json_decref(enc);
        tp_spec_release(&back);
        tp_spec_release(&s);
    }
    json_decref(j);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    exa_error_t err = EXA_ERROR_INIT;
    char *buf;
    size_t len;
    if (size < 1)
        return 0;
    len = size - 1;
    buf = xmalloc(len + 1);
    memcpy(buf, data + 1, len);
    buf[len] = '\0';
    switch (data[0] % 9) {
    case 0: {
        struct tp_path p;
        char *q = strchr(buf, '?');
        if (q)
            *q++ = '\0';
        tp_parse_path("POST", buf, q, &p, &err);
        tp_parse_path("PUT", buf, q, &p, &err);
        break;
    }
    case 1: {
        struct tp_register r;
        if (tp_decode_register(buf, len, &r, &err) == 0)
            tp_register_release(&r);
        break;
    }
    case 2: {
        struct tp_heartbeat h;
        if (tp_decode_heartbeat(buf, len, &h, &err) == 0)
            tp_heartbeat_release(&h);
        break;
    }
    case 3: {
        long long want;
        tp_decode_lease(buf, len, &want, &err);
        break;
    }
    case 4: {
        struct tp_results r;
        if (tp_decode_results(buf, len, &r, &err) == 0)
            tp_results_release(&r);
        break;
    }
    case 5: {
        char *reason = NULL;
        if (tp_decode_reason(buf, len, &reason, &err) == 0)
            free(reason);
        break;
    }
    case 6:
        spec_roundtrip(buf, len);
        break;
    case 8: {
        struct prov_config c;
        if (prov_config_parse(buf, len, &c, &err) == 0)
            prov_config_release(&c);
        break;
    }
    default: {
        /* a fixed key: only the parser is under test, not the MAC */
        struct token_keys k;
        struct join_claims c;
        memset(&k, 0, sizeof(k));
        k.n = 1;
        memcpy(k.k[0].kid, "k1", 3);
        token_join_verify(&k, buf, 1500, 120, &c);
        break;
    }
    }
    free(buf);
    return 0;
}
