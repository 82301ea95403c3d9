/*
 * parse_flux_resource.c - `flux resource list` / `flux resource status`
 * tables to exa's node records.
 *
 * Flux prints one row per (state, queue, properties) group with a
 * compressed NODELIST, so a node's state is found by looking at every
 * row that names it: free and allocated rows together mean a mixed node.
 * Per-node cores and GPUs are exact only when each such row covers that
 * single node; otherwise a row's total cannot be split and they are
 * null. Cells are cut by header position (parse_flux.h), which also
 * copes with the empty NODELIST of zero-count rows and with an
 * untruncated RANKS idset pushing NODELIST to the right (flux-core#4269).
 * flux_resource_apply() completes them from the status view and from R
 * (read per node by parse_flux_r.c).
 */
#include "libdiscovery/parse_flux_resource.h"

#include <ctype.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "libsched/parse_flux.h"
#include "libutil/json.h"
#include "libutil/strbuf.h"
#include "libutil/strvec.h"
#include "libutil/xalloc.h"
#include "libutil/xalloc.h"

const char *flux_resource_state_normalize(const char *tok)
{
    static const struct {
        const char *tok, *norm;
    } map[] = {
        {"free", "idle"},           {"avail", "idle"},
        {"allocated", "allocated"}, {"down", "down"},
        {"avail*", "down"},         {"offline", "down"},
        {"torpid", "down"},         {"exclude", "down"},
        {"lost", "down"},           {"drained", "drain"},
        {"drained*", "drain"},      {"draining", "drain"},
        {"draining*", "drain"},
    };
    if (!tok)
        return "unknown";
    for (size_t i = 0; i < sizeof(map) / sizeof(map[0]); i++)
        if (!strcasecmp(tok, map[i].tok))
            return map[i].norm;
    return "unknown";
}

struct rnode {
    char *name;
    struct strvec states; /* distinct raw row states */
    struct strvec parts;  /* distinct queue names */
    int all_single;       /* every row holding it has NNODES == 1 */
    long long cpus, gpus;
    int cpus_known, gpus_known;
};

static int strvec_has(const struct strvec *sv, const char *s)
{
    for (size_t i = 0; i < sv->nr; i++)
        if (!strcmp(sv->v[i], s))
            return 1;
    return 0;
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

static const char *col(const struct flux_table_hdr *h, char **cells,
                       const char *name)
{
    for (size_t i = 0; i < h->ncols; i++)
        if (!strcasecmp(h->names[i], name))
            return cells[i] ? cells[i] : "";
    return NULL;
}

static int cell_ll(const char *s, long long *v)
{
    char *end;
    if (!s || !*s)
        return -1;
    *v = strtoll(s, &end, 10);
    return *end ? -1 : 0;
}

static json_t *ll_or_null(const char *s)
{
    long long v;
    return cell_ll(s, &v) == 0 ? json_integer(v) : json_null();
}

/* rlist "rank[0-1]/core[0-47],gpu[0-7] rank2/core[0-3]": ranks, counts. */
static void add_rlist(json_t *grp, const char *s)
{
    json_t *ranks = json_array();
    long long cores = 0, gpus = 0;
    struct strvec ents = STRVEC_INIT;
    int ok = 0;

    strvec_split(&ents, s, ' ');
    for (size_t e = 0; e < ents.nr; e++) {
        const char *p = ents.v[e], *slash;
        char *rs;
        long long *ids = NULL;
        size_t nids = 0;
        if (!*p || strncmp(p, "rank", 4))
            continue;
        slash = strchr(p, '/');
        rs = xstrndup(p + 4, slash ? (size_t)(slash - p - 4) : strlen(p + 4));
        if (flux_idset_expand(rs, &ids, &nids) == 0) {
            ok = 1;
            for (size_t i = 0; i < nids; i++)
                json_array_append_new(ranks, json_integer(ids[i]));
            if (slash) {
                const char *c = slash + 1;
                while (*c) {
                    const char *q = c;
                    int depth = 0;
                    char *child, *br;
                    long long *cid = NULL;
                    size_t ncid = 0;
                    while (*q && (*q != ',' || depth)) {
                        depth += *q == '[' ? 1 : *q == ']' ? -1 : 0;
                        q++;
                    }
                    child = xstrndup(c, (size_t)(q - c));
                    br = child;
                    while (*br && isalpha((unsigned char)*br))
                        br++;
                    if (flux_idset_expand(br, &cid, &ncid) == 0) {
                        if (!strncmp(child, "core", 4))
                            cores += (long long)(ncid * nids);
                        else if (!strncmp(child, "gpu", 3))
                            gpus += (long long)(ncid * nids);
                    }
                    free(cid);
                    free(child);
                    c = *q ? q + 1 : q;
                }
            }
        }
        free(ids);
        free(rs);
    }
    strvec_clear(&ents);
    if (ok) {
        jx_set(grp, "ranks", ranks);
        jx_set(grp, "cores", json_integer(cores));
        jx_set(grp, "gpus_list", json_integer(gpus));
    } else {
        json_decref(ranks);
    }
}

static json_t *resource_parse_clean(const char *buf, size_t len,
                                    const char **errkind, exa_error_t *err);

/*
 * `flux resource status` (flux-core 0.88) prints the right-aligned STATE
 * column and the one-character UP column (✔/✗) without a space between
 * them: the header word "STATEUP". Split it back into STATE (its first
 * five code points) and UP (the rest), so "drained ✔" gives state
 * "drained" and up "✔".
 */
static void split_stateup(struct flux_table_hdr *h)
{
    for (size_t i = 0; i < h->ncols; i++) {
        if (strcmp(h->names[i], "STATEUP"))
            continue;
        h->names = xrealloc(h->names, (h->ncols + 1) * sizeof(*h->names));
        h->start = xrealloc(h->start, (h->ncols + 1) * sizeof(*h->start));
        h->end = xrealloc(h->end, (h->ncols + 1) * sizeof(*h->end));
        memmove(h->names + i + 2, h->names + i + 1,
                (h->ncols - i - 1) * sizeof(*h->names));
        memmove(h->start + i + 2, h->start + i + 1,
                (h->ncols - i - 1) * sizeof(*h->start));
        memmove(h->end + i + 2, h->end + i + 1,
                (h->ncols - i - 1) * sizeof(*h->end));
        h->ncols++;
        free(h->names[i]);
        h->names[i] = xstrdup("STATE");
        h->names[i + 1] = xstrdup("UP");
        h->start[i + 1] = h->start[i] + 5;
        h->end[i + 1] = h->end[i];
        h->end[i] = h->start[i] + 5;
        return;
    }
}

/* Case-insensitive search for needle in the n bytes at s. */
static int strcasestr_n(const char *s, size_t n, const char *needle)
{
    size_t m = strlen(needle);
    for (size_t i = 0; i + m <= n; i++)
        if (!strncasecmp(s + i, needle, m))
            return 1;
    return 0;
}

static int has_lower(const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (islower((unsigned char)s[i]))
            return 1;
    return 0;
}

/*
 * `flux resource list -n` / `status -n` print no header: assume the
 * default columns, chosen by the widest row (5 tokens: the list view
 * with NGPUS; 4: the old list view, or the status view when the third
 * token is an idset "0-2" / "15,40"), read token by token.
 */
static void synth_header(struct flux_table_hdr *h, const char *buf, size_t len)
{
    size_t i = 0, maxtok = 0;
    int idset3 = 0;
    const char *cols;

    while (i < len) {
        const char *s = buf + i, *nl = memchr(s, '\n', len - i);
        size_t l = nl ? (size_t)(nl - s) : len - i, ntok = 0, k = 0;
        i += l + 1;
        while (k < l) {
            size_t b;
            while (k < l && isspace((unsigned char)s[k]))
                k++;
            if (k >= l)
                break;
            b = k;
            while (k < l && !isspace((unsigned char)s[k]))
                k++;
            if (++ntok == 3 && memchr(s + b, '-', k - b))
                idset3 = 1;
            if (ntok == 3 && memchr(s + b, ',', k - b))
                idset3 = 1;
        }
        if (ntok > maxtok)
            maxtok = ntok;
    }
    cols = maxtok >= 5 ? "STATE NNODES NCORES NGPUS NODELIST"
           : idset3    ? "STATE NNODES RANKS NODELIST"
                       : "STATE NNODES NCORES NODELIST";
    flux_table_hdr_init(h, cols, strlen(cols));
    h->by_token = 1;
}

json_t *flux_resource_parse(const char *buf, size_t len, const char **errkind,
                            exa_error_t *err)
{
    struct strbuf sb = STRBUF_INIT;
    json_t *res;
    if (!memchr(buf, 0x1b, len))
        return resource_parse_clean(buf, len, errkind, err);
    flux_strip_ansi(buf, len, &sb);
    res = resource_parse_clean(sb.buf, sb.len, errkind, err);
    strbuf_release(&sb);
    return res;
}

static json_t *resource_parse_clean(const char *buf, size_t len,
                                    const char **errkind, exa_error_t *err)
{
    struct flux_table_hdr hdr = {0};
    int have_hdr = 0;
    size_t i = 0, nn = 0, nalloc = 0;
    struct rnode *nodes = NULL;
    json_t *index = json_object(), *groups = json_array(), *jnodes, *res;

    *errkind = "parse_error";
    while (i < len) {
        const char *s = buf + i, *nl = memchr(s, '\n', len - i);
        size_t l = nl ? (size_t)(nl - s) : len - i;
        size_t k;
        i += l + 1;
        if (l && s[l - 1] == '\r')
            l--;
        for (k = 0; k < l && isspace((unsigned char)s[k]); k++)
            ;
        if (k == l)
            continue;
        if (!have_hdr) {
            if (!has_lower(s, l)) {
                flux_table_hdr_init(&hdr, s, l);
                split_stateup(&hdr);
                have_hdr = 1;
                continue;
            }
            if (strcasestr_n(s, l, "error") || strcasestr_n(s, l, "unable") ||
                strcasestr_n(s, l, "usage:")) {
                char *msg = xstrndup(s, l);
                json_decref(index);
                json_decref(groups);
                exa_err(err, EXA_ESCHED, "flux resource: %s", msg);
                free(msg);
                return NULL;
            }
            synth_header(&hdr, buf, len);
            have_hdr = 1;
        }
        {
            char **cells = xcalloc(hdr.ncols ? hdr.ncols : 1, sizeof(char *));
            json_t *grp = json_object();
            const char *state, *q, *nl_cell, *v;
            struct strvec hosts = STRVEC_INIT, qs = STRVEC_INIT;
            long long nnodes = -1, ncores = -1, ngpus = -1;
            int has_cores, has_gpus;

            flux_table_row(&hdr, s, l, cells);
            state = col(&hdr, cells, "STATE");
            jx_set(grp, "state", jx_str(state && *state ? state : NULL));
            v = col(&hdr, cells, "NNODES");
            cell_ll(v, &nnodes);
            jx_set(grp, "nnodes", ll_or_null(v));
            v = col(&hdr, cells, "NCORES");
            has_cores = v != NULL;
            cell_ll(v, &ncores);
            jx_set(grp, "ncores", ll_or_null(v));
            v = col(&hdr, cells, "NGPUS");
            has_gpus = v != NULL;
            cell_ll(v, &ngpus);
            jx_set(grp, "ngpus", ll_or_null(v));
            q = col(&hdr, cells, "QUEUE");
            if (q) {
                jx_set(grp, "queue", jx_str(*q ? q : NULL));
                if (*q)
                    strvec_split(&qs, q, ',');
            }
            if ((v = col(&hdr, cells, "PROPERTIES")))
                jx_set(grp, "properties", jx_str(*v ? v : NULL));
            if ((v = col(&hdr, cells, "RANKS")))
                jx_set(grp, "ranks", jx_str(*v ? v : NULL));
            if ((v = col(&hdr, cells, "LIST")) && *v)
                add_rlist(grp, v);
            nl_cell = col(&hdr, cells, "NODELIST");
            if (nl_cell) {
                json_t *arr = json_array();
                if (*nl_cell && flux_hostlist_expand(nl_cell, &hosts) < 0)
                    strvec_push(&hosts, nl_cell);
                for (size_t h = 0; h < hosts.nr; h++)
                    json_array_append_new(arr, jx_str(hosts.v[h]));
                jx_set(grp, "nodelist", arr);
            }
            json_array_append_new(groups, grp);

            for (size_t h = 0; h < hosts.nr; h++) {
                json_t *ix = json_object_get(index, hosts.v[h]);
                struct rnode *rn;
                if (!ix) {
                    ALLOC_GROW(nodes, nn + 1, nalloc);
                    rn = &nodes[nn];
                    memset(rn, 0, sizeof(*rn));
                    rn->name = xstrdup(hosts.v[h]);
                    strvec_init(&rn->states);
                    strvec_init(&rn->parts);
                    rn->all_single = 1;
                    rn->cpus_known = has_cores;
                    rn->gpus_known = has_gpus;
                    json_object_set_new(index, hosts.v[h],
                                        json_integer((json_int_t)nn));
                    nn++;
                } else {
                    rn = &nodes[json_integer_value(ix)];
                }
                if (state && *state && !strvec_has(&rn->states, state))
                    strvec_push(&rn->states, state);
                for (size_t p = 0; p < qs.nr; p++)
                    if (*qs.v[p] && !strvec_has(&rn->parts, qs.v[p]))
                        strvec_push(&rn->parts, qs.v[p]);
                if (nnodes != 1)
                    rn->all_single = 0;
                /* A sum that would overflow is as unknown as a missing
                 * count (untrusted input: never signed overflow). */
                if (ncores >= 0 && rn->cpus <= LLONG_MAX - ncores)
                    rn->cpus += ncores;
                else
                    rn->cpus_known = 0;
                if (ngpus >= 0 && rn->gpus <= LLONG_MAX - ngpus)
                    rn->gpus += ngpus;
                else
                    rn->gpus_known = 0;
            }
            strvec_clear(&hosts);
            strvec_clear(&qs);
            for (size_t c = 0; c < hdr.ncols; c++)
                free(cells[c]);
            free(cells);
        }
    }
    json_decref(index);
    if (!have_hdr) {
        json_decref(groups);
        exa_err(err, EXA_EPARSE, "flux resource output has no header line");
        return NULL;
    }
    jnodes = json_array();
    for (size_t n = 0; n < nn; n++) {
        struct rnode *rn = &nodes[n];
        json_t *o = json_object(), *parts = json_array();
        int down = 0, drain = 0, alloc = 0, idle = 0, unknown = 0;
        const char *st = NULL;
        struct strbuf raw = STRBUF_INIT;
        const char **sorted;

        for (size_t k = 0; k < rn->states.nr; k++) {
            const char *ns = flux_resource_state_normalize(rn->states.v[k]);
            down |= !strcmp(ns, "down");
            drain |= !strcmp(ns, "drain");
            alloc |= !strcmp(ns, "allocated");
            idle |= !strcmp(ns, "idle");
            unknown |= !strcmp(ns, "unknown");
        }
        if (down)
            st = "down";
        else if (drain)
            st = "drain";
        else if (alloc && idle)
            st = "mixed";
        else if (alloc)
            st = "allocated";
        else if (idle)
            st = "idle";
        else if (unknown)
            st = "unknown";
        sorted = xcalloc(rn->states.nr + 1, sizeof(char *));
        memcpy(sorted, rn->states.v, rn->states.nr * sizeof(char *));
        qsort(sorted, rn->states.nr, sizeof(char *), cmp_str);
        for (size_t k = 0; k < rn->states.nr; k++)
            strbuf_addf(&raw, "%s%s", k ? "," : "", sorted[k]);
        free(sorted);
        for (size_t k = 0; k < rn->parts.nr; k++)
            json_array_append_new(parts, jx_str(rn->parts.v[k]));

        jx_set(o, "name", jx_str(rn->name));
        jx_set(o, "cpus",
               rn->all_single && rn->cpus_known ? json_integer(rn->cpus)
                                                : json_null());
        jx_set(o, "mem_mb", json_null());
        jx_set(o, "gpus",
               rn->all_single && rn->gpus_known ? json_integer(rn->gpus)
                                                : json_null());
        jx_set(o, "gpu_type", json_null());
        jx_set(o, "state", jx_str(st));
        jx_set(o, "raw_state", jx_str(raw.len ? raw.buf : NULL));
        jx_set(o, "partitions", parts);
        json_array_append_new(jnodes, o);
        strbuf_release(&raw);
        strvec_clear(&rn->states);
        strvec_clear(&rn->parts);
        free(rn->name);
    }
    free(nodes);
    flux_table_hdr_release(&hdr);
    res = json_object();
    jx_set(res, "groups", groups);
    jx_set(res, "nodes", jnodes);
    return res;
}

/* Set keys ck and gk of each node in nodes to the cores and GPUs the R
 * text gives it (flux_r_per_node_ids()), and key ik (not NULL) to its
 * GPU ids as an array when every one is below 64 (else null); a node R
 * does not name is set to 0 (and no ids) when absent_zero, else left as
 * it is. Unreadable R sets nothing. Returns the number of nodes set. */
static int apply_r(json_t *nodes, const char *R, size_t R_len, const char *ck,
                   const char *gk, const char *ik, int absent_zero)
{
    struct strvec hosts = STRVEC_INIT;
    long long *c = NULL, *g = NULL;
    unsigned long long *gm = NULL;
    int *known = NULL;
    json_t *n;
    size_t i;
    int changed = 0;
    if (flux_r_per_node_ids(R, R_len, &hosts, &c, &g, &gm, &known, NULL) == 0) {
        json_array_foreach(nodes, i, n)
        {
            const char *name = jx_get_str(n, "name", "");
            size_t h = 0;
            while (h < hosts.nr && strcmp(hosts.v[h], name))
                h++;
            if (h == hosts.nr && !absent_zero)
                continue;
            jx_set(n, ck, json_integer(h < hosts.nr ? c[h] : 0));
            jx_set(n, gk, json_integer(h < hosts.nr ? g[h] : 0));
            if (ik) {
                json_t *a = json_array();
                if (h < hosts.nr && !known[h]) {
                    json_decref(a);
                    a = json_null();
                } else if (h < hosts.nr) {
                    for (int b = 0; b < 64; b++)
                        if (gm[h] >> b & 1)
                            json_array_append_new(a, json_integer(b));
                }
                jx_set(n, ik, a);
            }
            changed++;
        }
    }
    free(c);
    free(g);
    free(gm);
    free(known);
    strvec_clear(&hosts);
    return changed;
}

int flux_resource_apply(json_t *doc, const char *status, size_t status_len,
                        const char *R, size_t R_len, const char *alloc,
                        size_t alloc_len)
{
    json_t *nodes = json_object_get(doc, "nodes"), *n;
    int changed = 0;
    size_t i;

    if (!json_is_array(nodes))
        return 0;
    if (status) {
        const char *kind = NULL;
        json_t *sd = flux_resource_parse(status, status_len, &kind, NULL);
        const json_t *sn = json_object_get(sd, "nodes"), *m;
        size_t k;
        json_array_foreach(sn, k, m)
        {
            const char *name = jx_get_str(m, "name", NULL);
            const char *st = jx_get_str(m, "state", "");
            if (!name || (strcmp(st, "drain") && strcmp(st, "down")))
                continue;
            json_array_foreach(nodes, i, n)
            {
                if (strcmp(jx_get_str(n, "name", ""), name))
                    continue;
                jx_set(n, "state", jx_str(st));
                jx_set(n, "raw_state",
                       jx_str(jx_get_str(m, "raw_state", NULL)));
                changed++;
            }
        }
        json_decref(sd);
    }
    if (R)
        changed += apply_r(nodes, R, R_len, "cpus", "gpus", "gpu_ids", 0);
    if (alloc) /* a node not in the allocated set holds no job */
        changed += apply_r(nodes, alloc, alloc_len, "cpus_used", "gpus_used",
                           "gpus_used_idx", 1);
    return changed;
}

/* The next line of buf[*i..len) (`flux queue list -n -o '{queuem}'`:
 * one name a line), blanks trimmed, into *s and *l; *i moves past it.
 * 0 when none is left. */
static int queuem_line(const char *buf, size_t len, size_t *i, const char **s,
                       size_t *l)
{
    const char *nl;
    if (*i >= len)
        return 0;
    *s = buf + *i;
    nl = memchr(*s, '\n', len - *i);
    *l = nl ? (size_t)(nl - *s) : len - *i;
    *i += *l + 1;
    while (*l && isspace((unsigned char)(*s)[*l - 1]))
        --*l;
    while (*l && isspace((unsigned char)**s)) {
        ++*s;
        --*l;
    }
    return 1;
}

char *flux_default_queue(const char *buf, size_t len)
{
    const char *s;
    size_t i = 0, l;
    while (queuem_line(buf, len, &i, &s, &l))
        if (l > 1 && s[l - 1] == '*' && flux_queue_name_ok(s, l - 1))
            return xstrndup(s, l - 1);
    return NULL;
}

size_t flux_queue_count(const char *buf, size_t len)
{
    const char *s;
    size_t i = 0, l, n = 0;
    while (queuem_line(buf, len, &i, &s, &l)) {
        if (l && s[l - 1] == '*')
            l--;
        n += l > 0 && flux_queue_name_ok(s, l);
    }
    return n;
}

char *flux_version_parse(const char *buf, size_t len)
{
    static const char key[] = "commands:";
    size_t i = 0;

    while (i < len) {
        const char *nl = memchr(buf + i, '\n', len - i);
        size_t l = nl ? (size_t)(nl - (buf + i)) : len - i;
        if (l >= sizeof(key) - 1 && !memcmp(buf + i, key, sizeof(key) - 1)) {
            struct strbuf sb = STRBUF_INIT;
            strbuf_add(&sb, buf + i + sizeof(key) - 1, l - (sizeof(key) - 1));
            strbuf_trim(&sb);
            if (sb.len)
                return strbuf_detach(&sb, NULL);
            strbuf_release(&sb);
            return NULL;
        }
        i += l + 1;
    }
    return NULL;
}
