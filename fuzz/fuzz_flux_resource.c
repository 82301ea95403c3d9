/*
 * fuzz_flux_resource.c - libFuzzer target for flux_resource_parse().
 */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "libdiscovery/parse_flux_resource.h"
#include "libutil/xalloc.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *buf = xmalloc(size + 1);
    const char *kind = NULL;
    json_t *res;

    memcpy(buf, data, size);
    buf[size] = '\0';
    res = flux_resource_parse(buf, size, &kind, NULL);
    json_decref(res);
    free(buf);
    return 0;
}
