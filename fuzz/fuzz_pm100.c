/*
 * fuzz_pm100.c - libFuzzer target for the PM100 CSV loader: any bytes must
 * parse or fail with an error, never crash, leak or read out of bounds;
 * every accepted row must have a finite, positive target.
 */
#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include "libpipeline/pm100.h"
#include "libutil/xalloc.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct pm100_table t = PM100_TABLE_INIT;
    struct pm100_split s;
    exa_error_t err = EXA_ERROR_INIT;
    if (pm100_parse((const char *)data, size, &t, &err) == 0) {
        for (size_t i = 0; i < t.nr; i++)
            if (!(isfinite(t.rows[i].target) && t.rows[i].target > 0))
                abort();
        pm100_split(&t, 1, &s);
        if (s.ntrain > PM100_DUMMY_ROWS || s.nval > PM100_DUMMY_ROWS)
            abort();
        pm100_split_release(&s);
    }
    pm100_table_release(&t);
    return 0;
}
