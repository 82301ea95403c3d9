/*
 * file_sd.c - Prometheus file_sd target groups from the fleet's saved
 * node snapshots, and the atomic file replacement they are written with.
 *
 * Prometheus watches the file with inotify and re-reads it on every
 * change, so two properties matter more than anything else: it must never
 * see a half-written file (it would drop every target until the next
 * write), and an unchanged fleet must rewrite identical bytes (so a cron
 * job that regenerates the file every minute causes no churn). The first
 * is temp-file + fsync + rename in the same directory; the second is a
 * fixed order (clusters and nodes sorted by name, groups by job) and
 * sorted JSON keys.
 */
#include "libobserve/file_sd.h"

#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "libutil/json.h"
#include "libutil/strbuf.h"
#include "libutil/strvec.h"
#include "libutil/xalloc.h"

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

static json_t *group(const struct fv_cluster *c, const char *job,
                     const char *tenant, int port, int gpu_only,
                     size_t *ntargets)
{
    json_t *targets = json_array(), *labels, *g;
    struct strvec names = STRVEC_INIT;
    for (size_t i = 0; i < c->nr_nodes; i++) {
        const struct fv_node *n = &c->nodes[i];
        if (gpu_only && n->gpus <= 0)
            continue;
        strvec_pushf(&names, "%s:%d", n->name, port);
    }
    if (names.nr == 0) {
        json_decref(targets);
        return NULL;
    }
    /* node-name order whatever order the caller's snapshot had */
    qsort(names.v, names.nr, sizeof(*names.v), cmp_str);
    for (size_t i = 0; i < names.nr; i++)
        json_array_append_new(targets, jx_str(names.v[i]));
    *ntargets += names.nr;
    strvec_clear(&names);
    labels = json_object();
    jx_set(labels, "cluster", jx_str(c->name));
    jx_set(labels, "scheduler",
           jx_str(c->scheduler ? c->scheduler : "unknown"));
    jx_set(labels, "tenant", jx_str(tenant));
    jx_set(labels, "job", jx_str(job));
    g = json_object();
    jx_set(g, "targets", targets);
    jx_set(g, "labels", labels);
    return g;
}

json_t *file_sd_build(const struct fv_fleet *fleet, const char *tenant,
                      size_t *ntargets)
{
    json_t *groups = json_array(), *g;
    size_t n = 0;
    if (!tenant || !*tenant)
        tenant = "default";
    for (size_t i = 0; i < fleet->nr; i++) {
        const struct fv_cluster *c = &fleet->clusters[i];
        const char *t = c->tenant ? c->tenant : tenant;
        /* (cluster, job) order: "dcgm" sorts before "node" */
        if ((g = group(c, "dcgm", t, c->dcgm_port, 1, &n)))
            json_array_append_new(groups, g);
        if ((g = group(c, "node", t, c->node_port, 0, &n)))
            json_array_append_new(groups, g);
    }
    if (ntargets)
        *ntargets = n;
    return groups;
}

char *file_sd_render(const json_t *groups)
{
    char *s = json_dumps(groups, JSON_INDENT(2) | JSON_SORT_KEYS);
    char *out;
    if (!s)
        BUG("cannot serialize file_sd groups");
    out = xstrfmt("%s\n", s);
    free(s);
    return out;
}

static int write_all(int fd, const char *p, size_t len)
{
    while (len) {
        ssize_t n = write(fd, p, len);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            return -1;
        }
        p += n;
        len -= (size_t)n;
    }
    return 0;
}

int file_write_atomic(const char *path, const void *data, size_t len,
                      unsigned mode, exa_error_t *err)
{
    char *dcopy = xstrdup(path), *bcopy = xstrdup(path);
    const char *dir = dirname(dcopy), *base = basename(bcopy);
    char *tmp = xstrfmt("%s/.%s.XXXXXX", dir, base);
    int fd, dfd, saved;

    fd = mkstemp(tmp);
    if (fd < 0)
        goto fail;
    if (write_all(fd, data, len) < 0 || fchmod(fd, mode) < 0 || fsync(fd) < 0) {
        saved = errno;
        close(fd);
        unlink(tmp);
        errno = saved;
        goto fail;
    }
    if (close(fd) < 0 || rename(tmp, path) < 0) {
        saved = errno;
        unlink(tmp);
        errno = saved;
        goto fail;
    }
    /* make the rename itself durable; failure here loses nothing */
    dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dfd >= 0) {
        (void)fsync(dfd);
        close(dfd);
    }
    free(tmp);
    free(dcopy);
    free(bcopy);
    return 0;
fail:
    exa_err(err, EXA_ECONFIG, "writing '%s': %s", path, strerror(errno));
    free(tmp);
    free(dcopy);
    free(bcopy);
    return -1;
}
