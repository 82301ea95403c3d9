/*
 * fuzz_sacctmgr.c - libFuzzer target for preflight's readers of Slurm
 * output: sacctmgr_assoc_parse (association rows) and tool_message (the
 * first line a failed command printed, quoted in errors by preflight, the
 * probes and the collectors). A message is never empty, never holds a
 * newline and never exceeds its cut.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "libdiscovery/parse_sacctmgr.h"
#include "libsched/parse_message.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *b = (const char *)data;
    struct sacctmgr_assoc *a;
    size_t n;
    char *m;

    sacctmgr_assoc_parse(b, size, &a, &n);
    for (size_t i = 0; i < n; i++)
        if (!a[i].account || strchr(a[i].account, '\n'))
            __builtin_trap();
    sacctmgr_assocs_free(a, n);
    m = tool_message(b, size, 120);
    if (m && (!*m || strchr(m, '\n') || strlen(m) > 120))
        __builtin_trap();
    free(m);
    return 0;
}
