/*
 * registry.c - clusters.yaml read with libyaml's document API and written
 * with its emitter, so quoting of odd host names or paths is libyaml's job,
 * not ours. The whole file is small (a site has tens of clusters), so it
 * is read whole and rewritten whole; atomicity comes from rename(2) and
 * mutual exclusion from a flock(2) on a sibling lock file (locking the
 * data file itself would not survive the rename).
 */
#include "libfleet/registry.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>
#include <yaml.h>

#include "libutil/atomic.h"
#include "libutil/strbuf.h"
#include "libutil/xalloc.h"

#define REGISTRY_MAX_BYTES (8u << 20)

char *registry_default_path(exa_error_t *err)
{
    const char *e = getenv("EXAMLOPS_HPC_REGISTRY");
    const char *home = getenv("HOME");
    if (e && *e)
        return xstrdup(e);
    if (home && *home)
        return xstrfmt("%s/.config/examlops/clusters.yaml", home);
    exa_err(err, EXA_ECONFIG,
            "cannot locate clusters.yaml: set EXAMLOPS_HPC_REGISTRY or HOME");
    return NULL;
}

void cluster_def_release(struct cluster_def *d)
{
    if (!d)
        return;
    free(d->name);
    free(d->scheduler);
    free(d->transport);
    free(d->host);
    free(d->ssh_user);
    free(d->ssh_key);
    free(d->tenant);
    memset(d, 0, sizeof(*d));
}

static char *dupnull(const char *s)
{
    return s ? xstrdup(s) : NULL;
}

void cluster_def_copy(struct cluster_def *dst, const struct cluster_def *src)
{
    *dst = *src;
    dst->name = dupnull(src->name);
    dst->scheduler = dupnull(src->scheduler);
    dst->transport = dupnull(src->transport);
    dst->host = dupnull(src->host);
    dst->ssh_user = dupnull(src->ssh_user);
    dst->ssh_key = dupnull(src->ssh_key);
    dst->tenant = dupnull(src->tenant);
}

int cluster_def_node_exporter_port(const struct cluster_def *d)
{
    return d && d->node_exporter_port ? d->node_exporter_port
                                      : REGISTRY_NODE_EXPORTER_PORT;
}

int cluster_def_dcgm_exporter_port(const struct cluster_def *d)
{
    return d && d->dcgm_exporter_port ? d->dcgm_exporter_port
                                      : REGISTRY_DCGM_EXPORTER_PORT;
}

void registry_release(struct registry *reg)
{
    for (size_t i = 0; i < reg->nr; i++)
        cluster_def_release(&reg->defs[i]);
    free(reg->defs);
    reg->defs = NULL;
    reg->nr = reg->alloc = 0;
}

struct cluster_def *registry_find(const struct registry *reg, const char *name)
{
    /* defs are sorted by name (registry_put): a binary search, so a load
     * of n definitions is n log n comparisons, not n^2 / 2 */
    size_t lo = 0, hi = reg->nr;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        int c = strcmp(reg->defs[mid].name, name);
        if (!c)
            return &reg->defs[mid];
        if (c < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return NULL;
}

struct cluster_def *registry_put(struct registry *reg,
                                 const struct cluster_def *def)
{
    struct cluster_def *old = registry_find(reg, def->name);
    struct cluster_def copy;
    size_t i;
    cluster_def_copy(&copy, def);
    if (old) {
        cluster_def_release(old);
        *old = copy;
        return old;
    }
    ALLOC_GROW(reg->defs, reg->nr + 1, reg->alloc);
    for (i = reg->nr; i > 0 && strcmp(reg->defs[i - 1].name, def->name) > 0;
         i--)
        reg->defs[i] = reg->defs[i - 1];
    reg->defs[i] = copy;
    reg->nr++;
    return &reg->defs[i];
}

int registry_remove(struct registry *reg, const char *name)
{
    struct cluster_def *d = registry_find(reg, name);
    size_t i;
    if (!d)
        return 0;
    i = (size_t)(d - reg->defs);
    cluster_def_release(d);
    memmove(&reg->defs[i], &reg->defs[i + 1], (reg->nr - i - 1) * sizeof(*d));
    reg->nr--;
    return 1;
}

/* ---- reading ---- */

struct ydoc {
    yaml_document_t doc;
    const char *where;
    exa_error_t *err;
};

static int yerr(struct ydoc *y, yaml_node_t *n, const char *fmt, const char *a)
{
    char msg[512];
    snprintf(msg, sizeof(msg), fmt, a);
    return exa_err(y->err, EXA_ECONFIG, "clusters.yaml '%s': line %lu: %s",
                   y->where, n ? (unsigned long)n->start_mark.line + 1 : 0UL,
                   msg);
}

static const char *scalar(yaml_node_t *n)
{
    return n && n->type == YAML_SCALAR_NODE ? (const char *)n->data.scalar.value
                                            : NULL;
}

static const char *nz(const char *s)
{
    return s ? s : "";
}

static int is_null_scalar(yaml_node_t *n)
{
    const char *s = scalar(n);
    return s && n->data.scalar.style == YAML_PLAIN_SCALAR_STYLE &&
           (!*s || !strcmp(s, "~") || !strcmp(s, "null") ||
            !strcmp(s, "Null") || !strcmp(s, "NULL"));
}

static int set_str(struct ydoc *y, yaml_node_t *v, const char *key, char **out)
{
    const char *s = scalar(v);
    if (is_null_scalar(v))
        return 0;
    if (!s)
        return yerr(y, v, "'%s' must be a string", key);
    free(*out);
    *out = xstrdup(s);
    return 0;
}

static int set_port(struct ydoc *y, yaml_node_t *v, const char *key, int *out)
{
    const char *s = scalar(v);
    char *end;
    long p;
    if (is_null_scalar(v))
        return 0;
    if (!s)
        return yerr(y, v, "'%s' must be a port number", key);
    errno = 0;
    p = strtol(s, &end, 10);
    if (errno || end == s || *end || p < 1 || p > 65535)
        return yerr(y, v, "'%s' must be a port number in 1..65535", key);
    *out = (int)p;
    return 0;
}

static int set_num(struct ydoc *y, yaml_node_t *v, const char *key, int *has,
                   double *out)
{
    const char *s = scalar(v);
    char *end;
    double d;
    if (is_null_scalar(v))
        return 0;
    if (!s)
        return yerr(y, v, "'%s' must be a number", key);
    errno = 0;
    d = strtod(s, &end);
    if (errno || end == s || *end || !isfinite(d) || d < 0)
        return yerr(y, v, "'%s' must be a non-negative number", key);
    *has = 1;
    *out = d;
    return 0;
}

int cluster_name_check(const char *name, const char *source, exa_error_t *err)
{
    struct strbuf shown = STRBUF_INIT;
    size_t len = name ? strlen(name) : 0, i;
    int ok = len >= 1 && len <= 63 && isalnum((unsigned char)name[0]);
    for (i = 1; ok && i < len; i++) {
        unsigned char c = (unsigned char)name[i];
        ok = isalnum(c) || c == '.' || c == '_' || c == '-';
    }
    if (ok)
        return 0;
    for (i = 0; i < len && i < 64; i++) {
        unsigned char c = (unsigned char)name[i];
        if (c == '\n')
            strbuf_addstr(&shown, "\\n");
        else if (c == '\t')
            strbuf_addstr(&shown, "\\t");
        else if (c == '"' || c == '\'' || c == '\\')
            strbuf_addf(&shown, "\\%c", c);
        else if (c < 0x20 || c >= 0x7f)
            strbuf_addf(&shown, "\\x%02x", c);
        else
            strbuf_addch(&shown, (char)c);
    }
    if (len > 64)
        strbuf_addstr(&shown, "...");
    exa_err(err, EXA_EUSAGE,
            "invalid cluster name '%s'%s%s%s%s: expected " CLUSTER_NAME_RULE,
            shown.buf, len > 64 ? " (too long)" : "", source ? " (from " : "",
            source ? source : "", source ? ")" : "");
    strbuf_release(&shown);
    return -1;
}

static int parse_def(struct ydoc *y, yaml_node_t *m, const char *name,
                     struct registry *reg)
{
    struct cluster_def d = {0};
    exa_error_t nerr = EXA_ERROR_INIT;
    int rc = -1;
    if (cluster_name_check(name, NULL, &nerr) < 0)
        return yerr(y, m, "%s", nerr.text);
    if (m->type != YAML_MAPPING_NODE) {
        if (is_null_scalar(m))
            goto ok; /* "NAME:" with nothing: a bare name */
        return yerr(y, m, "cluster '%s' must be a mapping", name);
    }
    for (yaml_node_pair_t *p = m->data.mapping.pairs.start;
         p < m->data.mapping.pairs.top; p++) {
        yaml_node_t *kn = yaml_document_get_node(&y->doc, p->key);
        yaml_node_t *vn = yaml_document_get_node(&y->doc, p->value);
        const char *k = scalar(kn);
        int r = 0;
        if (!k)
            continue;
        if (!strcmp(k, "scheduler"))
            r = set_str(y, vn, k, &d.scheduler);
        else if (!strcmp(k, "transport"))
            r = set_str(y, vn, k, &d.transport);
        else if (!strcmp(k, "host"))
            r = set_str(y, vn, k, &d.host);
        else if (!strcmp(k, "ssh_user"))
            r = set_str(y, vn, k, &d.ssh_user);
        else if (!strcmp(k, "ssh_key"))
            r = set_str(y, vn, k, &d.ssh_key);
        else if (!strcmp(k, "tenant"))
            r = set_str(y, vn, k, &d.tenant);
        else if (!strcmp(k, "ssh_port"))
            r = set_port(y, vn, k, &d.ssh_port);
        else if (!strcmp(k, "node_exporter_port"))
            r = set_port(y, vn, k, &d.node_exporter_port);
        else if (!strcmp(k, "dcgm_exporter_port"))
            r = set_port(y, vn, k, &d.dcgm_exporter_port);
        else if (!strcmp(k, "carbon_intensity"))
            r = set_num(y, vn, k, &d.has_carbon_intensity, &d.carbon_intensity);
        else if (!strcmp(k, "cost_per_gpu_hour"))
            r = set_num(y, vn, k, &d.has_cost_per_gpu_hour,
                        &d.cost_per_gpu_hour);
        if (r < 0)
            goto out;
    }
ok:
    if (!*name) {
        yerr(y, m, "a cluster has an empty name%s", "");
        goto out;
    }
    if (registry_find(reg, name)) {
        yerr(y, m, "cluster '%s' is defined twice", name);
        goto out;
    }
    d.name = xstrdup(name);
    registry_put(reg, &d);
    rc = 0;
out:
    cluster_def_release(&d);
    return rc;
}

static int parse_name_map(struct ydoc *y, yaml_node_t *m, struct registry *reg)
{
    for (yaml_node_pair_t *p = m->data.mapping.pairs.start;
         p < m->data.mapping.pairs.top; p++) {
        yaml_node_t *kn = yaml_document_get_node(&y->doc, p->key);
        const char *k = scalar(kn);
        if (!k)
            return yerr(y, kn, "cluster names must be strings%s", "");
        if (parse_def(y, yaml_document_get_node(&y->doc, p->value), k, reg))
            return -1;
    }
    return 0;
}

static int parse_list(struct ydoc *y, yaml_node_t *s, struct registry *reg)
{
    for (yaml_node_item_t *it = s->data.sequence.items.start;
         it < s->data.sequence.items.top; it++) {
        yaml_node_t *m = yaml_document_get_node(&y->doc, *it);
        const char *name = NULL;
        if (!m || m->type != YAML_MAPPING_NODE)
            return yerr(y, m, "list items must be mappings%s", "");
        for (yaml_node_pair_t *p = m->data.mapping.pairs.start;
             p < m->data.mapping.pairs.top; p++)
            if (!strcmp(nz(scalar(yaml_document_get_node(&y->doc, p->key))),
                        "name"))
                name = scalar(yaml_document_get_node(&y->doc, p->value));
        if (!name)
            return yerr(y, m, "a list item has no 'name'%s", "");
        if (parse_def(y, m, name, reg))
            return -1;
    }
    return 0;
}

int registry_parse(const char *text, size_t len, const char *where,
                   struct registry *reg, exa_error_t *err)
{
    yaml_parser_t parser;
    struct ydoc y = {.where = where, .err = err};
    yaml_node_t *root;
    int rc = 0;

    yaml_parser_initialize(&parser);
    yaml_parser_set_input_string(&parser, (const unsigned char *)text, len);
    if (!yaml_parser_load(&parser, &y.doc)) {
        rc = exa_err(err, EXA_ECONFIG, "clusters.yaml '%s': line %lu: %s",
                     where, (unsigned long)parser.problem_mark.line + 1,
                     parser.problem ? parser.problem : "invalid YAML");
        yaml_parser_delete(&parser);
        return rc;
    }
    root = yaml_document_get_root_node(&y.doc);
    if (!root || is_null_scalar(root))
        goto out; /* empty file */
    if (root->type == YAML_SEQUENCE_NODE) {
        rc = parse_list(&y, root, reg);
    } else if (root->type == YAML_MAPPING_NODE) {
        yaml_node_t *clusters = NULL;
        for (yaml_node_pair_t *p = root->data.mapping.pairs.start;
             p < root->data.mapping.pairs.top; p++)
            if (!strcmp(nz(scalar(yaml_document_get_node(&y.doc, p->key))),
                        "clusters"))
                clusters = yaml_document_get_node(&y.doc, p->value);
        if (!clusters)
            rc = parse_name_map(&y, root, reg);
        else if (clusters->type == YAML_MAPPING_NODE)
            rc = parse_name_map(&y, clusters, reg);
        else if (clusters->type == YAML_SEQUENCE_NODE)
            rc = parse_list(&y, clusters, reg);
        else if (!is_null_scalar(clusters))
            rc = yerr(&y, clusters, "'clusters' must be a mapping or a list%s",
                      "");
    } else {
        rc = yerr(&y, root, "the top level must be a mapping or a list%s", "");
    }
out:
    if (rc < 0)
        registry_release(reg);
    yaml_document_delete(&y.doc);
    yaml_parser_delete(&parser);
    return rc;
}

int registry_read(const char *path, struct strbuf *text, exa_error_t *err)
{
    char buf[16384];
    int fd = open(path, O_RDONLY | O_CLOEXEC), rc = 1;
    if (fd < 0) {
        if (errno == ENOENT)
            return 0;
        return exa_err(err, EXA_ECONFIG, "cannot read clusters.yaml '%s': %s",
                       path, strerror(errno));
    }
    for (;;) {
        ssize_t n = read(fd, buf, sizeof(buf));
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0) {
            rc = exa_err(err, EXA_ECONFIG, "cannot read clusters.yaml '%s': %s",
                         path, strerror(errno));
            break;
        }
        if (n == 0)
            break;
        if (text->len + (size_t)n > REGISTRY_MAX_BYTES) {
            rc =
                exa_err(err, EXA_ECONFIG, "clusters.yaml '%s' exceeds %u bytes",
                        path, REGISTRY_MAX_BYTES);
            break;
        }
        strbuf_add(text, buf, (size_t)n);
    }
    close(fd);
    return rc;
}

int registry_load(const char *path, struct registry *reg, exa_error_t *err)
{
    struct strbuf sb = STRBUF_INIT;
    int rc = registry_read(path, &sb, err);
    if (rc > 0)
        rc = registry_parse(sb.buf, sb.len, path, reg, err);
    strbuf_release(&sb);
    return rc;
}

/* ---- writing ---- */

static int emit_handler(void *data, unsigned char *buffer, size_t size)
{
    strbuf_add(data, buffer, size);
    return 1;
}

static void emit_scalar(yaml_emitter_t *e, const char *s, int plain_ok)
{
    yaml_event_t ev;
    yaml_scalar_event_initialize(
        &ev, NULL, NULL, (yaml_char_t *)s, (int)strlen(s), plain_ok, 1,
        plain_ok ? YAML_ANY_SCALAR_STYLE : YAML_SINGLE_QUOTED_SCALAR_STYLE);
    yaml_emitter_emit(e, &ev);
}

static void emit_kv(yaml_emitter_t *e, const char *k, const char *v)
{
    if (!v)
        return;
    emit_scalar(e, k, 1);
    /* Strings are never plain-resolved to numbers or booleans on read
     * back only if quoted when they look like one: let libyaml choose,
     * but forbid plain style for values a YAML 1.1 reader would retype. */
    {
        char *end;
        int numeric = (strtod(v, &end), end != v && !*end);
        int special = !strcmp(v, "yes") || !strcmp(v, "no") ||
                      !strcmp(v, "true") || !strcmp(v, "false") ||
                      !strcmp(v, "on") || !strcmp(v, "off") ||
                      !strcmp(v, "null") || !strcmp(v, "~") || !*v;
        emit_scalar(e, v, !(numeric || special));
    }
}

static void emit_int(yaml_emitter_t *e, const char *k, int v)
{
    char b[32];
    if (!v)
        return;
    xsnprintf(b, sizeof(b), "%d", v);
    emit_scalar(e, k, 1);
    emit_scalar(e, b, 1);
}

static void emit_num(yaml_emitter_t *e, const char *k, int has, double v)
{
    char b[64];
    if (!has)
        return;
    xsnprintf(b, sizeof(b), "%.17g", v);
    /* Shortest form that reads back exactly. */
    for (int prec = 1; prec <= 17; prec++) {
        char t[64];
        xsnprintf(t, sizeof(t), "%.*g", prec, v);
        if (strtod(t, NULL) == v) {
            xsnprintf(b, sizeof(b), "%s", t);
            break;
        }
    }
    emit_scalar(e, k, 1);
    emit_scalar(e, b, 1);
}

char *registry_format(const struct registry *reg)
{
    yaml_emitter_t e;
    yaml_event_t ev;
    struct strbuf sb = STRBUF_INIT;

    yaml_emitter_initialize(&e);
    yaml_emitter_set_output(&e, emit_handler, &sb);
    yaml_emitter_set_unicode(&e, 1);
    yaml_emitter_set_width(&e, -1);
    yaml_stream_start_event_initialize(&ev, YAML_UTF8_ENCODING);
    yaml_emitter_emit(&e, &ev);
    yaml_document_start_event_initialize(&ev, NULL, NULL, NULL, 1);
    yaml_emitter_emit(&e, &ev);
    yaml_mapping_start_event_initialize(&ev, NULL, NULL, 1,
                                        YAML_BLOCK_MAPPING_STYLE);
    yaml_emitter_emit(&e, &ev);
    emit_scalar(&e, "clusters", 1);
    yaml_mapping_start_event_initialize(&ev, NULL, NULL, 1,
                                        reg->nr ? YAML_BLOCK_MAPPING_STYLE
                                                : YAML_FLOW_MAPPING_STYLE);
    yaml_emitter_emit(&e, &ev);
    for (size_t i = 0; i < reg->nr; i++) {
        const struct cluster_def *d = &reg->defs[i];
        emit_scalar(&e, d->name, 1);
        yaml_mapping_start_event_initialize(&ev, NULL, NULL, 1,
                                            YAML_BLOCK_MAPPING_STYLE);
        yaml_emitter_emit(&e, &ev);
        /* keys in sorted order */
        emit_num(&e, "carbon_intensity", d->has_carbon_intensity,
                 d->carbon_intensity);
        emit_num(&e, "cost_per_gpu_hour", d->has_cost_per_gpu_hour,
                 d->cost_per_gpu_hour);
        emit_int(&e, "dcgm_exporter_port", d->dcgm_exporter_port);
        emit_kv(&e, "host", d->host);
        emit_int(&e, "node_exporter_port", d->node_exporter_port);
        emit_kv(&e, "scheduler", d->scheduler);
        emit_kv(&e, "ssh_key", d->ssh_key);
        emit_int(&e, "ssh_port", d->ssh_port);
        emit_kv(&e, "ssh_user", d->ssh_user);
        emit_kv(&e, "tenant", d->tenant);
        emit_kv(&e, "transport", d->transport);
        yaml_mapping_end_event_initialize(&ev);
        yaml_emitter_emit(&e, &ev);
    }
    yaml_mapping_end_event_initialize(&ev);
    yaml_emitter_emit(&e, &ev);
    yaml_mapping_end_event_initialize(&ev);
    yaml_emitter_emit(&e, &ev);
    yaml_document_end_event_initialize(&ev, 1);
    yaml_emitter_emit(&e, &ev);
    yaml_stream_end_event_initialize(&ev);
    yaml_emitter_emit(&e, &ev);
    yaml_emitter_flush(&e);
    yaml_emitter_delete(&e);
    return strbuf_detach(&sb, NULL);
}

static int mkdir_parent(const char *path, exa_error_t *err)
{
    char *dir = xstrdup(path);
    char *slash = strrchr(dir, '/');
    int rc = 0;
    if (slash && slash != dir) {
        *slash = '\0';
        for (char *p = dir + 1; *p; p++) {
            if (*p != '/')
                continue;
            *p = '\0';
            mkdir(dir, 0700);
            *p = '/';
        }
        if (mkdir(dir, 0700) && errno != EEXIST)
            rc = exa_err(err, EXA_ECONFIG, "cannot create directory '%s': %s",
                         dir, strerror(errno));
    }
    free(dir);
    return rc;
}

int registry_save(const char *path, const struct registry *reg,
                  exa_error_t *err)
{
    static const char header[] = "# exa cluster registry (connection "
                                 "definitions); approval state lives in "
                                 "platform.db\n";
    char *text = registry_format(reg);
    struct strbuf sb = STRBUF_INIT;
    int rc = -1;
    if (mkdir_parent(path, err) < 0)
        goto out;
    strbuf_addstr(&sb, header);
    strbuf_addstr(&sb, text);
    rc = atomic_write_file(path, sb.buf, sb.len, 0600, err);
out:
    strbuf_release(&sb);
    free(text);
    return rc;
}

int registry_lock(const char *path, int excl, exa_error_t *err)
{
    char *lp = xstrfmt("%s.lock", path);
    int fd;
    if (mkdir_parent(path, err) < 0) {
        free(lp);
        return -1;
    }
    fd = open(lp, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
    if (fd < 0) {
        exa_err(err, EXA_ECONFIG, "cannot open lock file '%s': %s", lp,
                strerror(errno));
        free(lp);
        return -1;
    }
    while (flock(fd, excl ? LOCK_EX : LOCK_SH)) {
        if (errno == EINTR)
            continue;
        exa_err(err, EXA_ECONFIG, "cannot lock '%s': %s", lp, strerror(errno));
        close(fd);
        free(lp);
        return -1;
    }
    free(lp);
    return fd;
}

void registry_unlock(int fd)
{
    if (fd >= 0) {
        flock(fd, LOCK_UN);
        close(fd);
    }
}

int registry_update(const char *path, registry_update_f fn, void *arg,
                    exa_error_t *err)
{
    struct registry reg = REGISTRY_INIT;
    int fd = registry_lock(path, 1, err), rc;
    if (fd < 0)
        return -1;
    rc = registry_load(path, &reg, err);
    if (rc == 0)
        rc = fn(&reg, arg, err);
    if (rc == 1 && registry_save(path, &reg, err) < 0)
        rc = -1;
    registry_release(&reg);
    registry_unlock(fd);
    return rc;
}
