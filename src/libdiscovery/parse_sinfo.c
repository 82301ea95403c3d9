/*
 * parse_sinfo.c - sinfo node and group records.
 *
 * Rows go through slurm_table (separator and header detection), then each
 * column gets a role: from the header name when there is one, else from
 * the value's shape (a/i/o/t quadruple, GRES, state word, integer, other
 * word = partition). Rows printed once per partition (-N) merge into one
 * node in order of first appearance; a hash index keeps that linear for
 * large clusters.
 */
#include "libdiscovery/parse_sinfo.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "libdiscovery/nodestate.h"
#include "libhostlist/hostlist.h"
#include "libres/gres.h"
#include "libsched/slurm_table.h"
#include "libutil/arena.h"
#include "libutil/json.h"
#include "libutil/jsonw.h"
#include "libutil/parse.h"
#include "libutil/strbuf.h"
#include "libutil/xalloc.h"

/* Distinct nodes one sinfo output may describe (untrusted input). */
#define SINFO_MAX_NODES 1000000

enum col {
    C_IGNORE,
    C_NAME,
    C_COUNT,
    C_CPUS,
    C_CPUSTATE,
    C_MEM,
    C_GRES,
    C_GRESUSED,
    C_STATE,
    C_PART,
    C_INT,
    C_COUNT_AIOT,
    C_COUNT_AI,
    C_ADDR
};

/* A column that prints how many nodes a row stands for (%D, %F, %A). */
static int count_col(enum col c)
{
    return c == C_COUNT || c == C_COUNT_AIOT || c == C_COUNT_AI;
}

static const struct {
    const char *name;
    enum col col;
} hdr_map[] = {
    {"NODELIST", C_NAME},
    {"HOSTNAMES", C_NAME},
    {"NODEHOST", C_NAME},
    {"NODE_NAME", C_NAME},
    {"NODES", C_COUNT},
    {"CPUS", C_CPUS},
    {"CPUS(A/I/O/T)", C_CPUSTATE},
    {"MEMORY", C_MEM},
    {"GRES", C_GRES},
    {"GRES_USED", C_GRESUSED},
    {"STATE", C_STATE},
    {"STATECOMPLETE", C_STATE},
    {"PARTITION", C_PART},
    {"AVAIL", C_IGNORE},
    {"TIMELIMIT", C_IGNORE},
    {"FREE_MEM", C_IGNORE},
    {"ALLOCMEM", C_IGNORE},
    {"CPU_LOAD", C_IGNORE},
    {"S:C:T", C_IGNORE},
    {"SOCKETS", C_IGNORE},
    {"CORES", C_IGNORE},
    {"THREADS", C_IGNORE},
    {"TMP_DISK", C_IGNORE},
    {"WEIGHT", C_IGNORE},
    {"AVAIL_FEATURES", C_IGNORE},
    {"ACTIVE_FEATURES", C_IGNORE},
    {"REASON", C_IGNORE},
    {"CLUSTER", C_IGNORE},
    {"NODE_ADDR", C_ADDR},
    {"VERSION", C_IGNORE},
    {"USER", C_IGNORE},
    {"TIMESTAMP", C_IGNORE},
    {"PRIORITY", C_IGNORE},
    {"OVERSUBSCRIBE", C_IGNORE},
    {"ROOT", C_IGNORE},
    {"GROUPS", C_IGNORE},
    {"JOB_SIZE", C_IGNORE},
    {"DEFAULTTIME", C_IGNORE},
    {"CPUS(A/I)", C_IGNORE},
    {"FEATURES", C_IGNORE},
    {"NODES(A/I/O/T)", C_COUNT_AIOT},
    {"NODES(A/I)", C_COUNT_AI},
};

/* Role of header name u; a name cut to its column width ("AVAIL_FE")
 * matches when it is a unique prefix (4+ characters) of a known name. */
static int hdr_lookup(const char *u, enum col *c)
{
    size_t n = strlen(u), hits = 0;
    enum col pc = C_IGNORE;
    for (size_t i = 0; i < sizeof(hdr_map) / sizeof(hdr_map[0]); i++)
        if (!strcmp(hdr_map[i].name, u)) {
            *c = hdr_map[i].col;
            return 1;
        }
    if (n < 4)
        return 0;
    for (size_t i = 0; i < sizeof(hdr_map) / sizeof(hdr_map[0]); i++)
        if (!strncmp(hdr_map[i].name, u, n)) {
            hits++;
            pc = hdr_map[i].col;
        }
    if (hits != 1)
        return 0;
    *c = pc;
    return 1;
}

static int known_hdr(const char *u)
{
    enum col c;
    return hdr_lookup(u, &c);
}

/* A count (libutil/parse.h: digits only, at most INT64_MAX). */
static int is_int(const char *s)
{
    int64_t v;
    return parse_count_str(s, &v) == 0;
}

/* The count s (callers check is_int first); -1 when it is none. */
static long long to_ll(const char *s)
{
    int64_t v;
    return parse_count_str(s, &v) == 0 ? (long long)v : -1;
}

/* "A/I/O/T" -> T; 0 when s is not that shape. */
static int cpustate_total(const char *s, long long *tot)
{
    int slashes = 0;
    const char *last = s;
    if (!*s)
        return 0;
    for (const char *p = s; *p; p++) {
        if (*p == '/') {
            slashes++;
            last = p + 1;
        } else if (!isdigit((unsigned char)*p)) {
            return 0;
        }
    }
    if (slashes != 3 || !is_int(last))
        return 0;
    *tot = to_ll(last);
    return 1;
}

static int gres_like(const char *s)
{
    const char *c;
    if (!strcmp(s, "(null)"))
        return 1;
    c = strchr(s, ':');
    if (!c || c == s)
        return 0;
    for (const char *p = s; p < c; p++)
        if (!(isalnum((unsigned char)*p) || *p == '_' || *p == '/' ||
              *p == '-'))
            return 0;
    return 1;
}

/* ---- node index: open addressing on name ---- */
struct idx {
    size_t *slot; /* node index + 1, 0 = empty */
    size_t cap;
    struct arena strs; /* every node's strings, partition arrays too */
};

static size_t hash_str(const char *s)
{
    size_t h = 1469598103934665603ULL;
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 1099511628211ULL;
    return h;
}

static struct sinfo_node *node_get(struct sinfo_result *res, const char *name)
{
    struct idx *ix = res->index;
    size_t h;
    if (!ix) {
        ix = xcalloc(1, sizeof(*ix));
        ix->cap = 1024;
        ix->slot = xcalloc(ix->cap, sizeof(size_t));
        res->index = ix;
    }
    if ((res->nnodes + 1) * 2 > ix->cap) {
        size_t ncap = ix->cap * 2;
        size_t *ns = xcalloc(ncap, sizeof(size_t));
        for (size_t i = 0; i < res->nnodes; i++) {
            size_t k = hash_str(res->nodes[i].name) & (ncap - 1);
            while (ns[k])
                k = (k + 1) & (ncap - 1);
            ns[k] = i + 1;
        }
        free(ix->slot);
        ix->slot = ns;
        ix->cap = ncap;
    }
    h = hash_str(name) & (ix->cap - 1);
    while (ix->slot[h]) {
        struct sinfo_node *n = &res->nodes[ix->slot[h] - 1];
        if (!strcmp(n->name, name))
            return n;
        h = (h + 1) & (ix->cap - 1);
    }
    ALLOC_GROW(res->nodes, res->nnodes + 1, res->nodes_alloc);
    memset(&res->nodes[res->nnodes], 0, sizeof(res->nodes[0]));
    res->nodes[res->nnodes].name = arena_strdup(&ix->strs, name);
    res->nodes[res->nnodes].partitions.v = strvec_empty;
    ix->slot[h] = ++res->nnodes;
    return &res->nodes[res->nnodes - 1];
}

/* Headerless layouts sinfo prints by default (-h, -N -h, -s -h, -l -h,
 * -N -l -h) and exa's own -o, checked value by value before guessing. */
static const char *const sinfo_layouts[] = {
    "NODELIST|CPUS|MEMORY|GRES|STATE|PARTITION",
    "PARTITION AVAIL TIMELIMIT NODES STATE NODELIST",
    "NODELIST NODES PARTITION STATE",
    "PARTITION AVAIL TIMELIMIT NODES(A/I/O/T) NODELIST",
    "PARTITION AVAIL TIMELIMIT JOB_SIZE ROOT OVERSUBSCRIBE GROUPS NODES "
    "STATE NODELIST",
    "NODELIST NODES PARTITION STATE CPUS S:C:T MEMORY TMP_DISK WEIGHT "
    "AVAIL_FEATURES REASON",
    NULL,
};

static int is_int(const char *s);
static int cpustate_total(const char *s, long long *tot);
static int gres_like(const char *s);

/* Does value v fit the column named name (upper case)? */
static int layout_value_ok(const char *name, const char *v)
{
    long long x;
    if (!strcmp(name, "AVAIL"))
        return !strcmp(v, "up") || !strcmp(v, "down") || !strcmp(v, "drain") ||
               !strcmp(v, "inact");
    if (!strcmp(name, "TIMELIMIT")) {
        if (!strcmp(v, "infinite") || !strcmp(v, "n/a"))
            return 1;
        for (const char *p = v; *p; p++)
            if (!isdigit((unsigned char)*p) && *p != ':' && *p != '-')
                return 0;
        return *v != '\0';
    }
    if (!strcmp(name, "NODES") || !strcmp(name, "CPUS") ||
        !strcmp(name, "MEMORY") || !strcmp(name, "TMP_DISK") ||
        !strcmp(name, "WEIGHT"))
        return is_int(v);
    if (!strcmp(name, "NODES(A/I/O/T)"))
        return cpustate_total(v, &x);
    if (!strcmp(name, "STATE"))
        return slurm_node_state_known(v);
    if (!strcmp(name, "GRES"))
        return gres_like(v) || !strcmp(v, "N/A");
    if (!strcmp(name, "S:C:T")) {
        int colons = 0;
        for (const char *p = v; *p; p++)
            if (*p == ':')
                colons++;
            else if (!isdigit((unsigned char)*p) && *p != '*')
                return 0;
        return colons == 2;
    }
    if (!strcmp(name, "NODELIST"))
        return *v && !strchr(v, ':') && !strchr(v, '(');
    if (!strcmp(name, "PARTITION"))
        return *v && !strchr(v, ':') && !isdigit((unsigned char)*v);
    return 1;
}

/*
 * Roles for a headerless table from the first layout every row (up to
 * 200) fits; the last column may absorb extra blank-separated tokens when
 * it is REASON. Returns the number of roles (0: none fits); *names gets
 * the layout's column names (owned by the caller's strvec).
 */
static size_t layout_roles(const struct slurm_table *t, enum col **roles)
{
    size_t check = t->nrows < 200 ? t->nrows : 200;
    if (!t->nrows)
        return 0;
    for (size_t li = 0; sinfo_layouts[li]; li++) {
        struct strvec names = STRVEC_INIT;
        char sep = strchr(sinfo_layouts[li], '|') ? '|' : ' ';
        int ok = sep == t->sep;
        size_t n;
        strvec_split(&names, sinfo_layouts[li], sep);
        n = names.nr;
        for (size_t r = 0; r < check && ok; r++) {
            const struct slurm_row *row = &t->rows[r];
            int tail = !strcmp(names.v[n - 1], "REASON");
            if (row->nf != n && !(tail && row->nf > n))
                ok = 0;
            for (size_t k = 0; k < n && ok; k++)
                if (!layout_value_ok(names.v[k], row->f[k]))
                    ok = 0;
        }
        if (ok) {
            *roles = xcalloc(n, sizeof(**roles));
            for (size_t k = 0; k < n; k++)
                if (!hdr_lookup(names.v[k], &(*roles)[k]))
                    (*roles)[k] = C_IGNORE;
            strvec_clear(&names);
            return n;
        }
        strvec_clear(&names);
    }
    return 0;
}

/* Roles of one row's fields: from the header, or guessed from values. */
static int avail_word(const char *s)
{
    return !strcmp(s, "up") || !strcmp(s, "down") || !strcmp(s, "drain") ||
           !strcmp(s, "inact");
}

/*
 * Roles of a headerless row guessed from its values. The first field is
 * the node name (or a %D count), unless the second is a partition AVAIL
 * word ("debug*|up|node1|..."), in which case the row starts with the
 * partition and the name is the next plain word. sinfo prints one state
 * and one partition per row, so only the first of each counts; later
 * words (reasons, features) are ignored.
 */
static void guess_roles(char **f, size_t nf, enum col *role, int *groups)
{
    int have_state = 0, have_part = 0, have_name = 0;
    size_t i = 1, gi[8], ngres = 0;
    for (size_t k = 0; k < nf; k++)
        role[k] = C_IGNORE;
    if (!nf)
        return;
    if (nf >= 3 && avail_word(f[1]) && isalpha((unsigned char)f[0][0]) &&
        !gres_like(f[0])) {
        int later_state = 0;
        for (size_t k = 2; k < nf; k++)
            if (slurm_node_state_known(f[k]))
                later_state = 1;
        if (strcmp(f[1], "up") && strcmp(f[1], "inact") && !later_state)
            goto name_first;
        role[0] = C_PART;
        role[1] = C_IGNORE;
        have_part = 1;
        i = 2;
    } else if (nf >= 2 && isalpha((unsigned char)f[0][0]) &&
               !strchr(f[0], '[') && !gres_like(f[0]) &&
               (f[0][strlen(f[0]) - 1] == '*' ||
                (strchr(f[1], '[') && !gres_like(f[1])))) {
        /* "part*|node[1-2]|...": '*' marks the default partition and
         * never ends a host name; a bracket marks the hostlist */
        role[0] = C_PART;
        have_part = 1;
        i = 1;
    } else {
    name_first:
        if (is_int(f[0]) && nf >= 2) {
            role[0] = C_COUNT;
            *groups = 1;
        } else {
            role[0] = C_NAME;
        }
        have_name = 1;
        i = 1;
    }
    for (; i < nf; i++) {
        long long t;
        if (cpustate_total(f[i], &t))
            role[i] = C_CPUSTATE;
        else if (gres_like(f[i])) {
            role[i] = C_IGNORE;
            if (ngres < 8)
                gi[ngres++] = i;
        } else if (!have_state && slurm_node_state_known(f[i]) && have_name) {
            role[i] = C_STATE;
            have_state = 1;
        } else if (is_int(f[i]))
            role[i] = C_INT;
        else if (!strcmp(f[i], "N/A") || !isalpha((unsigned char)f[i][0]) ||
                 strchr(f[i], ','))
            role[i] = C_IGNORE; /* loads, sizes, times, feature lists */
        else if (!have_name) {
            role[i] = C_NAME;
            have_name = 1;
        } else if (!have_part && !slurm_node_state_known(f[i])) {
            role[i] = C_PART;
            have_part = 1;
        }
    }
    /*
     * GRES-shaped values: Gres then GresUsed. With more than two (a
     * "(null)" features or comment column too) the last two are taken, as
     * both are printed last by every tool format seen. A "(null)" followed
     * by a non-zero GPU count is not Gres/GresUsed (GPUs in use on a node
     * without GPUs): the count is the Gres.
     */
    if (ngres == 1) {
        /* IDX index lists are printed in GresUsed only */
        role[gi[0]] = strstr(f[gi[0]], "(IDX:") ? C_GRESUSED : C_GRES;
    } else if (ngres >= 2) {
        size_t a = gi[ngres - 2], b = gi[ngres - 1];
        struct gres_info used;
        long long used_gpus;
        gres_parse(f[b], &used);
        used_gpus = used.gpus; /* only the count is read */
        gres_info_release(&used);
        if (!strcmp(f[a], "(null)") && used_gpus > 0) {
            role[b] = C_GRES;
        } else {
            role[a] = C_GRES;
            role[b] = C_GRESUSED;
        }
    }
}

/*
 * A headerless table prints the same columns on every row, so the roles
 * guessed row by row are put to a vote, column by column, over the rows
 * of the most common width (up to 5000 of them): an unknown state word
 * ("foo_bar_baz") in the state column is still the state, and a row of
 * "(null)"s reads like the rows with real GRES. Returns that width and
 * the voted roles (*out, caller frees), or 0 when there is no clear
 * common width.
 */
static size_t consensus_roles(const struct slurm_table *t, enum col **out)
{
    size_t widths[8] = {0}, counts[8] = {0}, nw = 0, best = 0, w;
    size_t(*tally)[C_INT + 1];
    size_t used = 0;
    for (size_t r = 0; r < t->nrows && r < 5000; r++) {
        size_t k;
        for (k = 0; k < nw; k++)
            if (widths[k] == t->rows[r].nf)
                break;
        if (k == nw) {
            if (nw == 8)
                continue;
            widths[nw++] = t->rows[r].nf;
        }
        counts[k]++;
    }
    for (size_t k = 1; k < nw; k++)
        if (counts[k] > counts[best])
            best = k;
    w = widths[best];
    if (!w || w > 256)
        return 0;
    tally = xcalloc(w, sizeof(*tally));
    for (size_t r = 0; r < t->nrows && used < 5000; r++) {
        enum col role[256];
        int groups = 0;
        if (t->rows[r].nf != w)
            continue;
        guess_roles(t->rows[r].f, w, role, &groups);
        for (size_t c = 0; c < w; c++)
            tally[c][role[c]]++;
        used++;
    }
    *out = xcalloc(w, sizeof(**out));
    for (size_t c = 0; c < w; c++) {
        enum col bestc = C_IGNORE;
        for (int k = 0; k <= C_INT; k++)
            if (tally[c][k] > tally[c][bestc])
                bestc = (enum col)k;
        (*out)[c] = bestc;
    }
    free(tally);
    return w;
}

/*
 * A table repeats a few distinct state and GRES strings; both parses are
 * pure functions of the string, so the first MEMO_N distinct ones of each
 * are kept with their results (a parse per row was a fifth of the time).
 */
#define MEMO_N 16
struct memo {
    struct {
        char *key;
        const char *state; /* slurm_node_state_normalize's static string */
        /* key and state in the result's arena once, for the nodes to
         * share (NULL until a node takes them) */
        char *raw_a, *state_a;
    } st[MEMO_N];
    /* the first MEMO_N distinct partition names, each once in the
     * result's arena (nodes share them), with their lengths */
    const char *in[MEMO_N];
    size_t inl[MEMO_N];
    size_t nin;
    struct {
        char *key;
        long long gpus;
        char *types;
        int mask_known; /* gres_used_gpu_mask(key): -1 not asked yet */
        unsigned long long mask;
    } gr[MEMO_N];
    size_t nst, ngr;
};

/* slurm_node_state_normalize(s); *idx gets its memo entry's index, or
 * -1 when the memo is full. */
static const char *memo_state(struct memo *m, const char *s, int *idx)
{
    const char *v;
    for (size_t i = 0; i < m->nst; i++)
        if (m->st[i].key[0] == s[0] && !strcmp(m->st[i].key, s)) {
            *idx = (int)i;
            return m->st[i].state;
        }
    v = slurm_node_state_normalize(s);
    *idx = -1;
    if (m->nst < MEMO_N) {
        m->st[m->nst].key = xstrdup(s);
        m->st[m->nst].raw_a = m->st[m->nst].state_a = NULL;
        *idx = (int)m->nst;
        m->st[m->nst++].state = v;
    }
    return v;
}

/* gres_parse(s)'s GPU count; *types (when not NULL) gets a copy of its
 * types or NULL: in arena a, or malloc'ed when a is NULL; *mask (when
 * not NULL) gres_used_gpu_mask(s)'s, *mask_known its return. */
static long long memo_gres(struct memo *m, const char *s, struct arena *a,
                           char **types, unsigned long long *mask,
                           int *mask_known)
{
    struct gres_info gi;
    long long gpus;
    for (size_t i = 0; i < m->ngr; i++)
        if (m->gr[i].key[0] == s[0] && !strcmp(m->gr[i].key, s)) {
            if (types)
                *types = !m->gr[i].types ? NULL
                         : a             ? arena_strdup(a, m->gr[i].types)
                                         : xstrdup(m->gr[i].types);
            if (mask) {
                if (m->gr[i].mask_known < 0)
                    m->gr[i].mask_known = gres_used_gpu_mask(s, &m->gr[i].mask);
                *mask = m->gr[i].mask;
                *mask_known = m->gr[i].mask_known;
            }
            return m->gr[i].gpus;
        }
    gres_parse(s, &gi);
    gpus = gi.gpus;
    if (types)
        *types = !gi.types ? NULL
                 : a       ? arena_strdup(a, gi.types)
                           : xstrdup(gi.types);
    if (mask)
        *mask_known = gres_used_gpu_mask(s, mask);
    if (m->ngr < MEMO_N) {
        m->gr[m->ngr].key = xstrdup(s);
        m->gr[m->ngr].gpus = gpus;
        m->gr[m->ngr].mask_known = mask ? *mask_known : -1;
        m->gr[m->ngr].mask = mask ? *mask : 0;
        m->gr[m->ngr++].types = gi.types; /* taken over */
        gi.types = NULL;
    }
    gres_info_release(&gi);
    return gpus;
}

static void memo_free(struct memo *m)
{
    for (size_t i = 0; i < m->nst; i++)
        free(m->st[i].key);
    for (size_t i = 0; i < m->ngr; i++) {
        free(m->gr[i].key);
        free(m->gr[i].types);
    }
}

/* s[0..l) as a string of arena a, the same copy for equal strings among
 * the first MEMO_N distinct ones; *shared 1 when it is that copy (an equal
 * string met before is then the same pointer), 0 for a fresh one. */
static const char *memo_intern(struct memo *m, struct arena *a, const char *s,
                               size_t l, int *shared)
{
    char *c;
    *shared = 1;
    for (size_t i = 0; i < m->nin; i++)
        if (m->inl[i] == l && !memcmp(m->in[i], s, l))
            return m->in[i];
    c = arena_strndup(a, s, l);
    if (m->nin < MEMO_N) {
        m->inl[m->nin] = l;
        m->in[m->nin++] = c;
    } else {
        *shared = 0;
    }
    return c;
}

/* Partition p ('*', the default mark, dropped) on node n, once. The array
 * is the arena's: it is copied one entry longer when a row names another
 * partition of n (a node is in a few), never realloc'ed. */
static void add_part(struct sinfo_node *n, struct memo *m, struct arena *a,
                     const char *p)
{
    size_t l = strlen(p);
    const char **v, *q;
    int shared;
    if (l && p[l - 1] == '*')
        l--;
    if (!l)
        return;
    /* a shared copy: the node has this partition iff it has that pointer
     * (the memo is never evicted, so its first sight was shared too) */
    q = memo_intern(m, a, p, l, &shared);
    for (size_t i = 0; i < n->partitions.nr; i++)
        if (n->partitions.v[i] == q ||
            (!shared && !strcmp(n->partitions.v[i], q)))
            return;
    v = arena_alloc(a, (n->partitions.nr + 2) * sizeof(*v));
    if (n->partitions.nr)
        memcpy(v, n->partitions.v, n->partitions.nr * sizeof(*v));
    v[n->partitions.nr] = q;
    v[n->partitions.nr + 1] = NULL;
    n->partitions.v = v;
    n->partitions.nr++;
}

/* What one row says about the nodes it names. */
struct row_vals {
    long long cpus, mem;
    const char *gres, *gres_used, *state, *addr;
    int gres_used_cut;      /* the GresUsed cell filled its column width */
    const char *norm_state; /* normalized state, NULL when none */
    int st_idx;             /* its memo entry (struct memo st), or -1 */
    const char **parts;
    size_t nparts, nhosts;
};

/* Merge row v into the node named host (created on first sight). */
static void node_apply(struct sinfo_result *res, struct memo *m,
                       const char *host, const struct row_vals *v)
{
    struct sinfo_node *n = node_get(res, host);
    struct arena *a = &((struct idx *)res->index)->strs;
    if (!n->has_cpus && v->cpus >= 0) {
        n->has_cpus = 1;
        n->cpus = v->cpus;
    }
    if (!n->has_mem && v->mem >= 0) {
        n->has_mem = 1;
        n->mem_mb = v->mem;
    }
    if (!n->has_gres && v->gres) {
        n->has_gres = 1;
        n->gpus = memo_gres(m, v->gres, a, &n->gpu_type, NULL, NULL);
    }
    if (!n->has_gres_used && v->gres_used) {
        n->has_gres_used = 1;
        n->gpus_used = memo_gres(m, v->gres_used, NULL, NULL, &n->gpu_used_mask,
                                 &n->has_gpu_used_mask);
        if (v->gres_used_cut) {
            n->has_gpu_used_mask = 0;
            n->gpu_used_mask = 0;
        }
    }
    if (!n->raw_state && v->norm_state) {
        if (v->st_idx >= 0) {
            /* one copy in the arena per distinct state, shared */
            if (!m->st[v->st_idx].raw_a) {
                m->st[v->st_idx].raw_a = arena_strdup(a, v->state);
                m->st[v->st_idx].state_a = arena_strdup(a, v->norm_state);
            }
            n->raw_state = m->st[v->st_idx].raw_a;
            n->state = m->st[v->st_idx].state_a;
        } else {
            n->raw_state = arena_strdup(a, v->state);
            n->state = arena_strdup(a, v->norm_state);
        }
    }
    for (size_t k = 0; k < v->nparts; k++)
        add_part(n, m, a, v->parts[k]);
    /* one address per -N row: a hostlist row has none */
    if (!n->addr && v->addr && *v->addr && v->nhosts == 1 &&
        !strpbrk(v->addr, "[],"))
        n->addr = arena_strdup(a, v->addr);
}

int sinfo_parse(const char *buf, size_t len, struct sinfo_result *res,
                const char **kind, exa_error_t *err)
{
    return sinfo_parse_cmd(buf, len, NULL, res, kind, err);
}

int sinfo_parse_cmd(const char *buf, size_t len, const struct cmd_spec *spec,
                    struct sinfo_result *res, const char **kind,
                    exa_error_t *err)
{
    struct slurm_table t;
    enum col *hroles = NULL, *cons = NULL;
    size_t nh = 0, cons_n = 0;
    int rc = -1;
    struct memo memo;

    memset(&t, 0, sizeof(t));
    memset(&memo, 0, sizeof(memo));
    *kind = "parse_error";
    if (spec && spec->tool != CMD_TOOL_SINFO)
        spec = NULL;
    if (slurm_table_split_spec(buf, len, known_hdr, spec, &t, err) < 0)
        return -1;
    if (t.error_line && !t.nrows && !t.hdr) {
        exa_err(err, EXA_ESCHED, "%s", t.error_line);
        *kind = "slurm_error";
        goto out;
    }
    if (!t.hdr && (nh = layout_roles(&t, &hroles)) > 0) {
        int has_name = 0;
        for (size_t i = 0; i < nh; i++)
            if (hroles[i] == C_NAME)
                has_name = 1;
        for (size_t i = 0; i < nh; i++)
            if (count_col(hroles[i]) && !has_name)
                res->is_groups = 1;
    }
    if (t.hdr) {
        int has_name = 0;
        nh = t.nhdr;
        hroles = xcalloc(t.nhdr, sizeof(*hroles));
        for (size_t i = 0; i < t.nhdr; i++) {
            char u[64];
            size_t k = 0;
            for (const char *s = t.hdr[i]; *s && k + 1 < sizeof(u); s++)
                u[k++] = (char)toupper((unsigned char)*s);
            u[k] = '\0';
            if (!hdr_lookup(u, &hroles[i]))
                hroles[i] = C_IGNORE;
            if (hroles[i] == C_NAME)
                has_name = 1;
        }
        for (size_t i = 0; i < t.nhdr; i++)
            if (count_col(hroles[i]) && !has_name)
                res->is_groups = 1;
    }
    /* sinfo's %N,%G joins GRES entries with the separator: re-merge them */
    if (!hroles && t.nrows)
        cons_n = consensus_roles(&t, &cons);
    for (size_t r = 0; r < t.nrows; r++) {
        struct slurm_row *row = &t.rows[r];
        enum col role_buf[32], *role;
        const char *parts_buf[32];
        int groups = 0, gres_joined = 0;
        long long first_int = -1, count = -1;
        const char *name = NULL;
        struct strbuf gres_sb = STRBUF_INIT;
        struct row_vals v;
        int nints = 0, name_cut = 0;

        memset(&v, 0, sizeof(v));
        v.cpus = v.mem = -1;
        if (row->nf <= 32) {
            role = role_buf;
            v.parts = parts_buf;
            memset(role, 0, sizeof(role_buf));
        } else {
            role = xcalloc(row->nf, sizeof(*role));
            v.parts = xcalloc(row->nf, sizeof(*v.parts));
        }
        if (hroles) {
            for (size_t i = 0; i < row->nf && i < nh; i++)
                role[i] = hroles[i];
        } else if (cons && row->nf == cons_n) {
            memcpy(role, cons, cons_n * sizeof(*role));
            if (role[0] == C_COUNT)
                res->is_groups = 1;
        } else {
            guess_roles(row->f, row->nf, role, &groups);
            if (groups)
                res->is_groups = 1;
            if (t.sep == ',') {
                /* consecutive GRES fields were one comma-joined value */
                for (size_t i = 1; i < row->nf; i++)
                    if (role[i] == C_GRESUSED && role[i - 1] == C_GRES)
                        role[i] = C_GRES;
            }
        }
        for (size_t i = 0; i < row->nf; i++) {
            const char *f = row->f[i];
            long long x;
            int64_t y;
            switch (role[i]) {
            case C_NAME:
                name = f;
                name_cut = row->cut && row->cut[i];
                break;
            case C_COUNT:
                if (parse_count_str(f, &y) == 0)
                    count = y;
                break;
            case C_COUNT_AIOT: /* %F "A/I/O/T": the total */
                if (cpustate_total(f, &x))
                    count = x;
                break;
            case C_COUNT_AI: { /* %A "A/I": allocated plus idle */
                const char *sl = strchr(f, '/');
                int64_t a, b;
                if (sl && parse_count_span(f, (size_t)(sl - f), &a) == 0 &&
                    parse_count_str(sl + 1, &b) == 0 && count_add(&a, b) == 0)
                    count = a;
                break;
            }
            case C_CPUS:
                if (parse_count_str(f, &y) == 0)
                    v.cpus = y;
                break;
            case C_CPUSTATE:
                if (cpustate_total(f, &x))
                    v.cpus = x;
                break;
            case C_MEM:
                if (parse_count_str(f, &y) == 0)
                    v.mem = y;
                break;
            case C_GRES:
                /* entries the separator split are joined with ',' */
                if (!v.gres) {
                    v.gres = f;
                    break;
                }
                if (!gres_joined) {
                    strbuf_addstr(&gres_sb, v.gres);
                    gres_joined = 1;
                }
                if (gres_sb.len)
                    strbuf_addch(&gres_sb, ',');
                strbuf_addstr(&gres_sb, f);
                v.gres = gres_sb.buf;
                break;
            case C_GRESUSED:
                v.gres_used = f;
                /* a cell the column width cut may end at an entry's end
                 * and look whole: its GPU indices are not believed */
                v.gres_used_cut = row->cut && row->cut[i];
                break;
            case C_STATE:
                v.state = f;
                break;
            case C_ADDR:
                v.addr = f;
                break;
            case C_PART:
                v.parts[v.nparts++] = f;
                break;
            case C_INT:
                x = parse_count_str(f, &y) == 0 ? (long long)y : -1;
                if (!nints++)
                    first_int = x;
                if (x > v.mem)
                    v.mem = x;
                break;
            default:
                break;
            }
        }
        /* headerless: with no a/i/o/t column the first integer is %c */
        if (!hroles && v.cpus < 0 && nints >= 2) {
            v.cpus = first_int;
            v.mem = -1;
            nints = 0;
            for (size_t i = 0; i < row->nf; i++)
                if (role[i] == C_INT && nints++ && to_ll(row->f[i]) > v.mem)
                    v.mem = to_ll(row->f[i]);
            /* "%m %c": two integers, the first far larger than any CPU
             * count and the second not, are memory (MiB) then CPUs */
            if (nints == 2 && v.cpus > 4096 && v.mem <= 4096) {
                long long x = v.cpus;
                v.cpus = v.mem;
                v.mem = x;
            }
        } else if (!hroles && v.cpus < 0 && nints == 1) {
            v.cpus = first_int;
            v.mem = -1;
        }
        for (size_t i = 0; i < row->nf; i++) {
            if (role[i] == C_GRES)
                res->has_gres_col = 1;
            if (role[i] == C_GRESUSED)
                res->has_gres_used_col = 1;
            if (role[i] == C_STATE)
                res->has_state_col = 1;
        }
        if (v.state)
            v.norm_state = memo_state(&memo, v.state, &v.st_idx);
        if (res->is_groups) {
            struct sinfo_group *g;
            ALLOC_GROW(res->groups, res->ngroups + 1, res->groups_alloc);
            g = &res->groups[res->ngroups++];
            memset(g, 0, sizeof(*g));
            g->nodes = count < 0 ? 0 : count;
            if (v.nparts) {
                size_t pl = strlen(v.parts[0]);
                g->partition = xstrndup(
                    v.parts[0], pl && v.parts[0][pl - 1] == '*' ? pl - 1 : pl);
            }
            if (v.norm_state) {
                g->raw_state = xstrdup(v.state);
                g->state = xstrdup(v.norm_state);
            }
            if (v.gres) {
                g->has_gres = 1;
                g->gpus_per_node =
                    memo_gres(&memo, v.gres, NULL, &g->gpu_type, NULL, NULL);
            }
            if (v.gres_used) {
                g->has_gres_used = 1;
                g->gpus_used_per_node =
                    memo_gres(&memo, v.gres_used, NULL, NULL, NULL, NULL);
            }
        } else if (name) {
            struct strvec hosts = STRVEC_INIT;
            const char *fail = NULL;
            /* a name that filled the width the command gave it (-O's
             * default 20) was cut: no node is made of part of a name */
            if (strchr(name, ':') || strchr(name, '(') || name_cut) {
                exa_err(err, EXA_EPARSE,
                        "row %zu: node name '%s' ran into the next column",
                        r + 1, name);
                fail = "column_overflow";
            } else if (!strpbrk(name, "[],")) {
                v.nhosts = 1; /* -N rows: one plain name */
            } else if (hostlist_expand(name, &hosts, 0, err) < 0) {
                fail = "invalid_hostlist";
            } else {
                v.nhosts = hosts.nr;
            }
            if (!fail && res->nnodes > SINFO_MAX_NODES) {
                exa_err(err, EXA_EPARSE, "more than %d nodes in sinfo output",
                        SINFO_MAX_NODES);
                fail = "too_large";
            }
            if (fail) {
                *kind = fail;
                strvec_clear(&hosts);
                strbuf_release(&gres_sb);
                if (role != role_buf) {
                    free(role);
                    free(v.parts);
                }
                goto out;
            }
            if (!hosts.nr)
                node_apply(res, &memo, name, &v);
            for (size_t h = 0; h < hosts.nr; h++)
                node_apply(res, &memo, hosts.v[h], &v);
            strvec_clear(&hosts);
        }
        strbuf_release(&gres_sb);
        if (role != role_buf) {
            free(role);
            free(v.parts);
        }
    }
    rc = 0;
out:
    free(hroles);
    free(cons);
    memo_free(&memo);
    slurm_table_free(&t);
    return rc;
}

void sinfo_result_free(struct sinfo_result *res)
{
    /* every node's strings and partition arrays are the index's arena's */
    free(res->nodes);
    for (size_t i = 0; i < res->ngroups; i++) {
        free(res->groups[i].state);
        free(res->groups[i].raw_state);
        free(res->groups[i].gpu_type);
        free(res->groups[i].partition);
    }
    free(res->groups);
    if (res->index) {
        free(((struct idx *)res->index)->slot);
        arena_release(&((struct idx *)res->index)->strs);
        free(res->index);
    }
    memset(res, 0, sizeof(*res));
}

json_t *sinfo_result_to_json(const struct sinfo_result *res)
{
    json_t *doc = json_object(), *arr = json_array();
    if (res->is_groups) {
        for (size_t i = 0; i < res->ngroups; i++) {
            const struct sinfo_group *g = &res->groups[i];
            json_t *o = json_object();
            jx_set(o, "nodes", json_integer(g->nodes));
            if (g->partition)
                jx_set(o, "partition", jx_str(g->partition));
            if (res->has_state_col) {
                jx_set(o, "state", jx_str(g->state));
                jx_set(o, "raw_state", jx_str(g->raw_state));
            }
            if (res->has_gres_col) {
                jx_set(o, "gpus_per_node",
                       jx_int_or_null(g->has_gres, g->gpus_per_node));
                jx_set(o, "gpu_type", jx_str(g->gpu_type));
            }
            if (res->has_gres_used_col)
                jx_set(o, "gpus_used_per_node",
                       jx_int_or_null(g->has_gres_used, g->gpus_used_per_node));
            json_array_append_new(arr, o);
        }
        jx_set(doc, "groups", arr);
        return doc;
    }
    for (size_t i = 0; i < res->nnodes; i++) {
        const struct sinfo_node *n = &res->nodes[i];
        json_t *o = json_object(), *parts = json_array();
        jx_set(o, "name", jx_str(n->name));
        jx_set(o, "cpus", jx_int_or_null(n->has_cpus, n->cpus));
        jx_set(o, "mem_mb", jx_int_or_null(n->has_mem, n->mem_mb));
        jx_set(o, "gpus", jx_int_or_null(n->has_gres, n->gpus));
        jx_set(o, "gpu_type", jx_str(n->gpu_type));
        jx_set(o, "state", jx_str(n->state));
        jx_set(o, "raw_state", jx_str(n->raw_state));
        for (size_t k = 0; k < n->partitions.nr; k++)
            json_array_append_new(parts, jx_str(n->partitions.v[k]));
        jx_set(o, "partitions", parts);
        if (res->has_gres_used_col) {
            jx_set(o, "gpus_used",
                   jx_int_or_null(n->has_gres_used, n->gpus_used));
            if (n->has_gpu_used_mask) {
                json_t *idx = json_array();
                for (int b = 0; b < 64; b++)
                    if (n->gpu_used_mask >> b & 1)
                        json_array_append_new(idx, json_integer(b));
                jx_set(o, "gpus_used_idx", idx);
            } else {
                jx_set(o, "gpus_used_idx", json_null());
            }
        }
        json_array_append_new(arr, o);
    }
    jx_set(doc, "nodes", arr);
    return doc;
}

void sinfo_result_write_json(const struct sinfo_result *res, struct jsonw *w)
{
    jsonw_obj_begin(w);
    if (res->is_groups) {
        jsonw_key_lit(w, "groups");
        jsonw_arr_begin(w);
        for (size_t i = 0; i < res->ngroups; i++) {
            const struct sinfo_group *g = &res->groups[i];
            jsonw_obj_begin(w);
            jsonw_key_lit(w, "nodes");
            jsonw_int(w, g->nodes);
            if (g->partition) {
                jsonw_key_lit(w, "partition");
                jsonw_str(w, g->partition);
            }
            if (res->has_state_col) {
                jsonw_key_lit(w, "state");
                jsonw_str(w, g->state);
                jsonw_key_lit(w, "raw_state");
                jsonw_str(w, g->raw_state);
            }
            if (res->has_gres_col) {
                jsonw_key_lit(w, "gpus_per_node");
                jsonw_int_or_null(w, g->has_gres, g->gpus_per_node);
                jsonw_key_lit(w, "gpu_type");
                jsonw_str(w, g->gpu_type);
            }
            if (res->has_gres_used_col) {
                jsonw_key_lit(w, "gpus_used_per_node");
                jsonw_int_or_null(w, g->has_gres_used, g->gpus_used_per_node);
            }
            jsonw_obj_end(w);
        }
        jsonw_arr_end(w);
        jsonw_obj_end(w);
        return;
    }
    jsonw_key_lit(w, "nodes");
    jsonw_arr_begin(w);
    for (size_t i = 0; i < res->nnodes; i++) {
        const struct sinfo_node *n = &res->nodes[i];
        jsonw_obj_begin(w);
        jsonw_key_lit(w, "name");
        jsonw_str(w, n->name);
        jsonw_key_lit(w, "cpus");
        jsonw_int_or_null(w, n->has_cpus, n->cpus);
        jsonw_key_lit(w, "mem_mb");
        jsonw_int_or_null(w, n->has_mem, n->mem_mb);
        jsonw_key_lit(w, "gpus");
        jsonw_int_or_null(w, n->has_gres, n->gpus);
        jsonw_key_lit(w, "gpu_type");
        jsonw_str(w, n->gpu_type);
        jsonw_key_lit(w, "state");
        jsonw_str(w, n->state);
        jsonw_key_lit(w, "raw_state");
        jsonw_str(w, n->raw_state);
        jsonw_key_lit(w, "partitions");
        jsonw_arr_begin(w);
        for (size_t k = 0; k < n->partitions.nr; k++)
            jsonw_str(w, n->partitions.v[k]);
        jsonw_arr_end(w);
        if (res->has_gres_used_col) {
            jsonw_key_lit(w, "gpus_used");
            jsonw_int_or_null(w, n->has_gres_used, n->gpus_used);
            jsonw_key_lit(w, "gpus_used_idx");
            if (n->has_gpu_used_mask) {
                jsonw_arr_begin(w);
                for (int b = 0; b < 64; b++)
                    if (n->gpu_used_mask >> b & 1)
                        jsonw_int(w, b);
                jsonw_arr_end(w);
            } else {
                jsonw_null(w);
            }
        }
        jsonw_obj_end(w);
    }
    jsonw_arr_end(w);
    jsonw_obj_end(w);
}
