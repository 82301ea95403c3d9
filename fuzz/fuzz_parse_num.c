/*
 * fuzz_parse_num.c - libFuzzer target for libutil/parse.h, the number
 * readers under every parser. Checks the contract, not just "no crash":
 * the cursor only moves forward, never past end, and not at all on
 * failure; a parsed count printed back in decimal reads the same value;
 * count_add never wraps; slurm_duration_parse's fast path for the
 * printed shapes answers as its general reading does.
 */
#include <inttypes.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "libutil/duration.h"
#include "libutil/parse.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void cursor_ok(const char *b, const char *p, const char *e, int rc)
{
    if (p < b || p > e || (rc < 0 && p != b) || (rc == 0 && p == b))
        __builtin_trap();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *b = (const char *)data, *e = b + size, *p;
    uint64_t u, bytes;
    int64_t c, i, acc;
    double d;
    int rc;

    p = b;
    rc = parse_u64(&p, e, &u);
    cursor_ok(b, p, e, rc);
    p = b;
    rc = parse_i64(&p, e, &i);
    cursor_ok(b, p, e, rc);
    p = b;
    rc = parse_count(&p, e, &c);
    cursor_ok(b, p, e, rc);
    if (rc == 0) {
        char buf[32];
        int64_t back;
        snprintf(buf, sizeof(buf), "%" PRId64, c);
        if (c < 0 || parse_count_str(buf, &back) < 0 || back != c)
            __builtin_trap();
        acc = c;
        if (count_add(&acc, c) == 0 && (acc < c || acc - c != c))
            __builtin_trap();
        acc = c;
        if (count_mul(&acc, 3) == 0 && (c && acc / c != 3))
            __builtin_trap();
    }
    p = b;
    rc = parse_size(&p, e, (uint64_t)1 << 20, &bytes);
    cursor_ok(b, p, e, rc);
    p = b;
    rc = parse_real(&p, e, &d);
    cursor_ok(b, p, e, rc);
    if (rc == 0 && d != d)
        __builtin_trap();
    /* a Slurm duration: the fast path for printed shapes agrees with the
     * general reading (a NUL-terminated copy of exactly the input) */
    if (size <= 64) {
        char *z = malloc(size + 1);
        double fa = -7, fb = -7;
        if (!z)
            return 0;
        memcpy(z, data, size);
        z[size] = '\0';
        if (slurm_duration_parse(z, &fa) !=
                slurm_duration_parse_unfixed(z, &fb) ||
            (fa != fb && !(fa != fa && fb != fb)))
            __builtin_trap();
        free(z);
    }
    return 0;
}
