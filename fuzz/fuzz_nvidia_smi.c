/*
 * fuzz_nvidia_smi.c - libFuzzer target for nvsmi_parse(), with a header,
 * without one, and with the product's query fields.
 */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "libdiscovery/parse_nvidia_smi.h"
#include "libutil/xalloc.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const char *const f[] = {
        "index",           "uuid",      "name", "memory.total", "memory.used",
        "utilization.gpu", "power.draw"};
    char *buf = xmalloc(size + 1);
    const char *kind = NULL;
    json_t *res;

    memcpy(buf, data, size);
    buf[size] = '\0';
    res = nvsmi_parse(buf, size, NULL, 0, &kind, NULL);
    json_decref(res);
    res = nvsmi_parse(buf, size, f, 7, &kind, NULL);
    json_decref(res);
    free(buf);
    return 0;
}
