/*
 * fuzz_flux_resource.c - libFuzzer target for flux_resource_parse(),
 * flux_resource_apply() (the input as the status view, R and the allocated
 * set's R over a fixed two-node list), flux_version_parse(),
 * flux_default_queue(), flux_queue_count() and parse_flux_queue_list().
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "libdiscovery/parse_flux_resource.h"
#include "libdiscovery/probe.h"
#include "libutil/xalloc.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *buf = xmalloc(size + 1);
    const char *kind = NULL;
    json_t *res;

    memcpy(buf, data, size);
    buf[size] = '\0';
    static const char list[] = "     STATE NNODES NCORES NGPUS NODELIST\n"
                               "      down      2      8     4 node[0-1]\n";
    char *v;
    res = flux_resource_parse(buf, size, &kind, NULL);
    json_decref(res);
    res = flux_resource_parse(list, sizeof(list) - 1, &kind, NULL);
    if (res)
        flux_resource_apply(res, buf, size, buf, size, buf, size);
    json_decref(res);
    v = flux_version_parse(buf, size);
    free(v);
    if (flux_queue_count(buf, size) > size) /* a name is a byte or more */
        abort();
    v = flux_default_queue(buf, size);
    if (v) { /* a queue name: not empty, no mark, blank or control byte */
        if (!*v)
            abort();
        for (const char *c = v; *c; c++)
            if ((unsigned char)*c <= ' ' || *c == 0x7f || *c == '*')
                abort();
    }
    free(v);
    {
        struct partition_info *p = NULL;
        size_t n = 0;
        if (parse_flux_queue_list(buf, size, &p, &n, NULL) == 0) {
            for (size_t i = 0; i < n; i++) /* named, in a known state */
                if (!p[i].name[0] || !p[i].state)
                    abort();
            partition_infos_free(p, n);
        } else if (p || n) { /* a refusal returns nothing */
            abort();
        }
    }
    free(buf);
    return 0;
}
