/*
 * jobmap.c - write and remove dcgm-exporter's per-GPU job mapping files
 * from a Slurm Prolog/Epilog.
 *
 * This runs as root on every compute node at every job start and end, so
 * it is shaped to be boring: no network, no database, one flock on the
 * mapping directory around each change, atomic replacement so the
 * exporter never reads a half-written id, and only files whose names look
 * like GPU names are ever touched. A file holds one job id per line (the
 * format dcgm-exporter reads), which lets jobs that share a GPU each keep
 * their own line: the epilog of one never removes the other's mapping.
 */
#include "libobserve/jobmap.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "libutil/atomic.h"
#include "libutil/strbuf.h"
#include "libutil/xalloc.h"

#define JOBMAP_MAX_FILE (64u << 10) /* a mapping file is a few ids */
#define JOBMAP_MAX_GPUS 1024

static int all_digits(const char *s, size_t n)
{
    if (n == 0 || n > 9)
        return 0;
    for (size_t i = 0; i < n; i++)
        if (s[i] < '0' || s[i] > '9')
            return 0;
    return 1;
}

/* "N" or "N.M": a GPU index or a MIG instance, as dcgm-exporter names. */
static int valid_gpu_name(const char *s)
{
    const char *dot = strchr(s, '.');
    if (!dot)
        return all_digits(s, strlen(s));
    return all_digits(s, (size_t)(dot - s)) &&
           all_digits(dot + 1, strlen(dot + 1));
}

static void push_unique(struct strvec *out, const char *s)
{
    for (size_t i = 0; i < out->nr; i++)
        if (!strcmp(out->v[i], s))
            return;
    strvec_push(out, s);
}

int jobmap_parse_gpus(const char *list, struct strvec *out, exa_error_t *err)
{
    struct strvec items = STRVEC_INIT;
    int rc = 0;
    strvec_split(&items, list, ',');
    for (size_t i = 0; i < items.nr && rc == 0; i++) {
        struct strbuf it = STRBUF_INIT;
        const char *dash;
        strbuf_addstr(&it, items.v[i]);
        strbuf_trim(&it);
        dash = strchr(it.buf, '-');
        if (it.len == 0 && items.nr == 1) {
            /* empty list: no GPU */
        } else if (dash && dash != it.buf) {
            char *end;
            long a, b;
            errno = 0;
            a = strtol(it.buf, &end, 10);
            if (errno || end != dash ||
                !all_digits(it.buf, (size_t)(dash - it.buf)))
                a = -1;
            b = strtol(dash + 1, &end, 10);
            if (errno || *end || !all_digits(dash + 1, strlen(dash + 1)))
                b = -1;
            if (a < 0 || b < a || b - a >= JOBMAP_MAX_GPUS) {
                rc = exa_err(err, EXA_EUSAGE, "invalid GPU range '%s'", it.buf);
            } else {
                for (long g = a; g <= b; g++) {
                    char buf[24];
                    xsnprintf(buf, sizeof(buf), "%ld", g);
                    push_unique(out, buf);
                }
            }
        } else if (valid_gpu_name(it.buf)) {
            /* normalise "03" to "3": the file is named by the index */
            const char *dot = strchr(it.buf, '.');
            char *name;
            if (dot)
                name = xstrfmt("%ld.%ld", strtol(it.buf, NULL, 10),
                               strtol(dot + 1, NULL, 10));
            else
                name = xstrfmt("%ld", strtol(it.buf, NULL, 10));
            push_unique(out, name);
            free(name);
        } else {
            rc = exa_err(err, EXA_EUSAGE,
                         "invalid GPU '%s': expected an index such as 0 "
                         "or a MIG instance such as 2.0",
                         it.buf);
        }
        strbuf_release(&it);
        if (out->nr > JOBMAP_MAX_GPUS && rc == 0)
            rc = exa_err(err, EXA_EUSAGE, "more than %d GPUs in '%s'",
                         JOBMAP_MAX_GPUS, list);
    }
    strvec_clear(&items);
    return rc;
}

int jobmap_gpus_from_env(struct strvec *out, const char **source,
                         exa_error_t *err)
{
    static const char *const vars[] = {"SLURM_JOB_GPUS", "SLURM_STEP_GPUS",
                                       "CUDA_VISIBLE_DEVICES", NULL};
    if (source)
        *source = NULL;
    for (size_t i = 0; vars[i]; i++) {
        const char *v = getenv(vars[i]);
        if (!v)
            continue;
        if (source)
            *source = vars[i];
        if (jobmap_parse_gpus(v, out, err) < 0)
            return exa_err_prefix(err, "%s", vars[i]);
        return 0;
    }
    return 0;
}

int jobmap_valid_job_id(const char *id)
{
    size_t n = id ? strlen(id) : 0;
    if (n == 0 || n > 64)
        return 0;
    for (size_t i = 0; i < n; i++) {
        char c = id[i];
        if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') ||
              (c >= 'A' && c <= 'Z') || c == '_' || c == '.' || c == '+' ||
              c == '-'))
            return 0;
    }
    return 1;
}

/* Lock dir exclusively; returns the fd to close, or -1 (errno set). */
static int lock_dir(const char *dir)
{
    int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    while (flock(fd, LOCK_EX) < 0) {
        if (errno != EINTR) {
            int saved = errno;
            close(fd);
            errno = saved;
            return -1;
        }
    }
    return fd;
}

/* Read the ids in path into ids (missing file: none). 0 or -1 (errno). */
static int read_ids(const char *path, struct strvec *ids)
{
    struct strbuf sb = STRBUF_INIT;
    struct strvec lines = STRVEC_INIT;
    char buf[4096];
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
    if (fd < 0)
        return errno == ENOENT ? 0 : -1;
    for (;;) {
        ssize_t n = read(fd, buf, sizeof(buf));
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0 || sb.len + (size_t)(n > 0 ? n : 0) > JOBMAP_MAX_FILE) {
            if (n >= 0)
                errno = EFBIG;
            int saved = errno;
            close(fd);
            strbuf_release(&sb);
            errno = saved;
            return -1;
        }
        if (n == 0)
            break;
        strbuf_add(&sb, buf, (size_t)n);
    }
    close(fd);
    strvec_split(&lines, sb.buf, '\n');
    for (size_t i = 0; i < lines.nr; i++) {
        struct strbuf l = STRBUF_INIT;
        strbuf_addstr(&l, lines.v[i]);
        strbuf_trim(&l);
        if (l.len)
            push_unique(ids, l.buf);
        strbuf_release(&l);
    }
    strvec_clear(&lines);
    strbuf_release(&sb);
    return 0;
}

/*
 * Add (add=1) or remove job_id in the mapping file dir/gpu. Returns 1 when
 * the file changed, 0 when not, -1 with err.
 */
static int update_file(const char *dir, const char *gpu, const char *job_id,
                       int add, exa_error_t *err)
{
    struct strvec ids = STRVEC_INIT, keep = STRVEC_INIT;
    char *path = xstrfmt("%s/%s", dir, gpu);
    int present = 0, rc = 0;

    if (read_ids(path, &ids) < 0) {
        rc = exa_err(err, EXA_ECONFIG, "reading '%s': %s", path,
                     strerror(errno));
        goto out;
    }
    for (size_t i = 0; i < ids.nr; i++) {
        if (!strcmp(ids.v[i], job_id))
            present = 1;
        else
            strvec_push(&keep, ids.v[i]);
    }
    if (add == present)
        goto out; /* already as wanted */
    if (add)
        strvec_push(&keep, job_id);
    if (keep.nr == 0) {
        if (unlink(path) < 0 && errno != ENOENT) {
            rc = exa_err(err, EXA_ECONFIG, "removing '%s': %s", path,
                         strerror(errno));
            goto out;
        }
    } else {
        struct strbuf sb = STRBUF_INIT;
        for (size_t i = 0; i < keep.nr; i++)
            strbuf_addf(&sb, "%s\n", keep.v[i]);
        rc = atomic_write_file(path, sb.buf, sb.len, 0644, err);
        strbuf_release(&sb);
        if (rc < 0)
            goto out;
    }
    rc = 1;
out:
    strvec_clear(&ids);
    strvec_clear(&keep);
    free(path);
    return rc;
}

int jobmap_prolog(const char *dir, const char *job_id,
                  const struct strvec *gpus, exa_error_t *err)
{
    int fd, changed = 0;
    if (!jobmap_valid_job_id(job_id))
        return exa_err(err, EXA_EUSAGE, "invalid job id '%s'",
                       job_id ? job_id : "");
    if (gpus->nr == 0)
        return 0;
    if (mkdir(dir, 0755) < 0 && errno != EEXIST)
        return exa_err(err, EXA_ECONFIG, "creating '%s': %s", dir,
                       strerror(errno));
    fd = lock_dir(dir);
    if (fd < 0)
        return exa_err(err, EXA_ECONFIG, "locking '%s': %s", dir,
                       strerror(errno));
    for (size_t i = 0; i < gpus->nr; i++) {
        int r;
        if (!valid_gpu_name(gpus->v[i])) {
            changed = exa_err(err, EXA_EUSAGE, "invalid GPU '%s'", gpus->v[i]);
            break;
        }
        r = update_file(dir, gpus->v[i], job_id, 1, err);
        if (r < 0) {
            changed = -1;
            break;
        }
        changed += r;
    }
    close(fd);
    return changed;
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

int jobmap_epilog(const char *dir, const char *job_id, exa_error_t *err)
{
    struct strvec names = STRVEC_INIT;
    struct dirent *de;
    DIR *d;
    int fd, changed = 0;

    if (!jobmap_valid_job_id(job_id))
        return exa_err(err, EXA_EUSAGE, "invalid job id '%s'",
                       job_id ? job_id : "");
    fd = lock_dir(dir);
    if (fd < 0) {
        if (errno == ENOENT)
            return 0;
        return exa_err(err, EXA_ECONFIG, "locking '%s': %s", dir,
                       strerror(errno));
    }
    d = fdopendir(dup(fd));
    if (!d) {
        close(fd);
        return exa_err(err, EXA_ECONFIG, "listing '%s': %s", dir,
                       strerror(errno));
    }
    while ((de = readdir(d)))
        if (valid_gpu_name(de->d_name))
            strvec_push(&names, de->d_name);
    closedir(d);
    qsort(names.v, names.nr, sizeof(*names.v), cmp_str);
    for (size_t i = 0; i < names.nr; i++) {
        int r = update_file(dir, names.v[i], job_id, 0, err);
        if (r < 0) {
            changed = -1;
            break;
        }
        changed += r;
    }
    strvec_clear(&names);
    close(fd);
    return changed;
}
