/*
 * fuzz_fleet_remote.c - libFuzzer target for the readers of remote output
 * the fleet parses itself: `scontrol show partition -o` lines (and the
 * same bytes as `scontrol show config`), a Flux
 * resource set R (with its GPU ids, flux_r_per_node_ids), and ssh-keyscan /
 * public key text (host key pinning). The first byte picks the reader so one
 * corpus covers all three.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "libdiscovery/probe.h"
#include "libfleet/governance.h"
#include "libutil/xalloc.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *buf;
    if (!size)
        return 0;
    buf = xmalloc(size);
    memcpy(buf, data + 1, size - 1);
    buf[size - 1] = '\0';
    switch (data[0] % 3) {
    case 0: {
        struct partition_info *p = NULL;
        size_t n = 0;
        char *v;
        if (parse_scontrol_partitions(buf, size - 1, &p, &n, NULL) == 0)
            for (size_t i = 0; i < n; i++)
                if (!p[i].name)
                    __builtin_trap();
        partition_infos_free(p, n);
        /* the same bytes as `scontrol show config` */
        v = slurm_config_value(buf, size - 1, "JobSubmitPlugins");
        if (v && strlen(v) > size)
            __builtin_trap();
        free(v);
        /* and as `printenv SBATCH_PARTITION`: names without an empty
         * one, on one line */
        v = slurm_partition_env_value(buf, size - 1);
        if (v && (!*v || strlen(v) > size || strchr(v, '\n') || v[0] == ',' ||
                  v[strlen(v) - 1] == ',' || strstr(v, ",,")))
            __builtin_trap();
        free(v);
        break;
    }
    case 1: {
        struct strvec hosts = STRVEC_INIT;
        long long *c = NULL, *g = NULL;
        unsigned long long *ids = NULL;
        int *known = NULL;
        /* the GPU ids a host's entries name are never more than its
         * count, and unknown ones are 0 */
        if (flux_r_per_node_ids(buf, size - 1, &hosts, &c, &g, &ids, &known,
                                NULL) == 0)
            for (size_t i = 0; i < hosts.nr; i++)
                if (c[i] < 0 || g[i] < 0 || (!known[i] && ids[i]) ||
                    __builtin_popcountll(ids[i]) > g[i])
                    __builtin_trap();
        free(c);
        free(g);
        free(ids);
        free(known);
        strvec_clear(&hosts);
        break;
    }
    default: {
        char *f = fleet_host_key_fingerprint(buf, NULL);
        if (f && strncmp(f, "SHA256:", 7))
            __builtin_trap();
        free(f);
        break;
    }
    }
    free(buf);
    return 0;
}
