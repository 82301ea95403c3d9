/*
 * fuzz_exporter.c - libFuzzer target for the exporter's path from
 * untrusted scheduler output to the exposition: the input is split at the
 * first NUL byte into sinfo and squeue output, parsed by the collector's
 * adapters and rendered. Every rendered line must be a comment or a
 * sample `name[{...}] value` whose label values are valid UTF-8 with no
 * raw newline or unescaped quote, else the target traps: one bad job name
 * or node state must never make Prometheus reject the whole scrape.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "libobserve/collect.h"
#include "libobserve/promtext.h"
#include "libutil/strbuf.h"
#include "libutil/xalloc.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_line(const char *l, size_t n)
{
    size_t i = 0;
    int in_q = 0;
    if (n && l[0] == '#')
        return;
    while (i < n && l[i] != '{' && l[i] != ' ')
        i++;
    if (i == 0 || i == n)
        __builtin_trap();
    if (l[i] == '{') {
        for (i++; i < n; i++) {
            unsigned char c = (unsigned char)l[i];
            if (in_q) {
                if (c == '\\') {
                    if (i + 1 >= n || !strchr("\\\"n", l[i + 1]))
                        __builtin_trap();
                    i++;
                } else if (c == '"') {
                    in_q = 0;
                }
            } else if (c == '"') {
                in_q = 1;
            } else if (c == '}') {
                break;
            }
        }
        if (in_q || i >= n)
            __builtin_trap();
        i++;
    }
    if (i >= n || l[i] != ' ' || i + 1 >= n)
        __builtin_trap();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const uint8_t *nul = memchr(data, 0, size);
    size_t n1 = nul ? (size_t)(nul - data) : size;
    size_t n2 = nul ? size - n1 - 1 : 0;
    char *a = xmalloc(n1 + 1), *b = xmalloc(n2 + 1);
    struct obs_snapshot s = {0};
    struct prom_set *set = prom_set_new();
    struct strbuf out = STRBUF_INIT;

    memcpy(a, data, n1);
    a[n1] = '\0';
    if (nul)
        memcpy(b, nul + 1, n2);
    b[n2] = '\0';
    s.have_nodes = obs_parse_slurm_nodes(a, n1, &s, NULL) == 0;
    s.have_jobs = obs_parse_slurm_jobs(b, n2, &s, NULL) == 0;
    obs_render_sched(set, "slurm", "fuzz", &s);
    prom_render(set, &out);
    for (const char *p = out.buf; *p;) {
        const char *e = strchr(p, '\n');
        if (!e)
            __builtin_trap(); /* every line ends with a newline */
        check_line(p, (size_t)(e - p));
        p = e + 1;
    }
    strbuf_release(&out);
    prom_set_free(set);
    obs_snapshot_free(&s);
    free(a);
    free(b);
    return 0;
}
