/*
 * atomic.c - temp file + fsync + rename, and build-then-rename directories.
 *
 * The temporary always lives in the target's own directory: rename(2) is
 * only atomic within one file system, and a temp in /tmp would turn the
 * rename into a copy. Every failure path unlinks what it created so a
 * failed write leaves the directory exactly as it was.
 */
#include "libutil/atomic.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "libutil/strbuf.h"
#include "libutil/xalloc.h"

#ifndef RENAME_NOREPLACE
#define RENAME_NOREPLACE (1 << 0)
#endif

/* Directory part of path ("." when there is none). Caller frees. */
static char *dir_of(const char *path)
{
    const char *slash = strrchr(path, '/');
    if (!slash)
        return xstrdup(".");
    if (slash == path)
        return xstrdup("/");
    return xstrndup(path, (size_t)(slash - path));
}

int fsync_dir(const char *path, exa_error_t *err)
{
    int fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0)
        return exa_err(err, EXA_ECONFIG, "cannot open directory '%s': %s", path,
                       strerror(errno));
    if (fsync(fd) < 0 && errno != EINVAL) {
        int e = errno;
        close(fd);
        return exa_err(err, EXA_ECONFIG, "cannot fsync directory '%s': %s",
                       path, strerror(e));
    }
    close(fd);
    return 0;
}

static int write_all(int fd, const void *data, size_t len)
{
    const char *p = data;
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

int atomic_write_file(const char *path, const void *data, size_t len,
                      mode_t mode, exa_error_t *err)
{
    char *tmp = xstrfmt("%s.tmp-XXXXXX", path);
    char *dir = dir_of(path);
    int fd, rc = -1;

    fd = mkstemp(tmp);
    if (fd < 0) {
        exa_err(err, EXA_ECONFIG, "cannot write '%s': %s", path,
                strerror(errno));
        goto out;
    }
    if (fchmod(fd, mode) < 0 || write_all(fd, data, len) < 0 || fsync(fd) < 0) {
        exa_err(err, EXA_ECONFIG, "cannot write '%s': %s", path,
                strerror(errno));
        close(fd);
        unlink(tmp);
        goto out;
    }
    if (close(fd) < 0) {
        exa_err(err, EXA_ECONFIG, "cannot write '%s': %s", path,
                strerror(errno));
        unlink(tmp);
        goto out;
    }
    if (rename(tmp, path) < 0) {
        exa_err(err, EXA_ECONFIG, "cannot rename '%s' to '%s': %s", tmp, path,
                strerror(errno));
        unlink(tmp);
        goto out;
    }
    rc = fsync_dir(dir, err);
out:
    free(tmp);
    free(dir);
    return rc;
}

int mkdir_p(const char *path, mode_t mode, exa_error_t *err)
{
    struct strbuf sb = STRBUF_INIT;
    struct stat stt;
    int rc = 0;

    if (!stat(path, &stt)) {
        if (S_ISDIR(stt.st_mode))
            return 0;
        return exa_err(err, EXA_ECONFIG, "'%s' exists and is not a directory",
                       path);
    }
    strbuf_addstr(&sb, path);
    for (char *p = sb.buf + 1;; p++) {
        if (*p != '/' && *p != '\0')
            continue;
        char c = *p;
        *p = '\0';
        if (mkdir(sb.buf, mode) < 0 && errno != EEXIST) {
            rc = exa_err(err, EXA_ECONFIG, "cannot create directory '%s': %s",
                         sb.buf, strerror(errno));
            break;
        }
        *p = c;
        if (!c)
            break;
    }
    if (!rc && (stat(path, &stt) < 0 || !S_ISDIR(stt.st_mode)))
        rc = exa_err(err, EXA_ECONFIG, "'%s' is not a directory", path);
    strbuf_release(&sb);
    return rc;
}

char *atomic_dir_begin(const char *final_path, exa_error_t *err)
{
    char *parent = dir_of(final_path);
    char *tmp = NULL;

    if (mkdir_p(parent, 0700, err) < 0)
        goto out;
    tmp = xstrfmt("%s.tmp-XXXXXX", final_path);
    if (!mkdtemp(tmp)) {
        exa_err(err, EXA_ECONFIG, "cannot create directory in '%s': %s", parent,
                strerror(errno));
        free(tmp);
        tmp = NULL;
    }
out:
    free(parent);
    return tmp;
}

/* fsync each regular file directly inside dir. */
static int fsync_files(const char *dir, exa_error_t *err)
{
    DIR *d = opendir(dir);
    struct dirent *de;
    int rc = 0;
    if (!d)
        return exa_err(err, EXA_ECONFIG, "cannot open directory '%s': %s", dir,
                       strerror(errno));
    while (rc == 0 && (de = readdir(d))) {
        int fd;
        if (de->d_name[0] == '.')
            continue;
        fd = openat(dirfd(d), de->d_name, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
        if (fd < 0)
            continue; /* a subdirectory or something we did not write */
        if (fsync(fd) < 0)
            rc = exa_err(err, EXA_ECONFIG, "cannot fsync '%s/%s': %s", dir,
                         de->d_name, strerror(errno));
        close(fd);
    }
    closedir(d);
    return rc;
}

int atomic_dir_commit(const char *tmp_path, const char *final_path, mode_t mode,
                      exa_error_t *err)
{
    char *parent = dir_of(final_path);
    int rc = -1;

    if (fsync_files(tmp_path, err) < 0 || fsync_dir(tmp_path, err) < 0)
        goto out;
    if (chmod(tmp_path, mode) < 0) {
        exa_err(err, EXA_ECONFIG, "cannot chmod '%s': %s", tmp_path,
                strerror(errno));
        goto out;
    }
    if (renameat2(AT_FDCWD, tmp_path, AT_FDCWD, final_path, RENAME_NOREPLACE) <
        0) {
        if (errno != EINVAL && errno != ENOSYS) {
            exa_err(err, EXA_ECONFIG, "cannot rename '%s' to '%s': %s",
                    tmp_path, final_path, strerror(errno));
            goto out;
        }
        /* No RENAME_NOREPLACE here: check, then rename (racy, but rename
         * onto a non-empty directory still fails with ENOTEMPTY). */
        if (!access(final_path, F_OK)) {
            errno = EEXIST;
            exa_err(err, EXA_ECONFIG, "cannot rename '%s' to '%s': %s",
                    tmp_path, final_path, strerror(EEXIST));
            goto out;
        }
        if (rename(tmp_path, final_path) < 0) {
            exa_err(err, EXA_ECONFIG, "cannot rename '%s' to '%s': %s",
                    tmp_path, final_path, strerror(errno));
            goto out;
        }
    }
    rc = fsync_dir(parent, err);
out:
    free(parent);
    return rc;
}

static void remove_tree(int parentfd, const char *name)
{
    int fd =
        openat(parentfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (fd >= 0) {
        DIR *d = fdopendir(fd);
        struct dirent *de;
        if (d) {
            while ((de = readdir(d))) {
                if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
                    continue;
                if (unlinkat(dirfd(d), de->d_name, 0) < 0 && errno == EISDIR)
                    remove_tree(dirfd(d), de->d_name);
            }
            closedir(d);
        } else {
            close(fd);
        }
        unlinkat(parentfd, name, AT_REMOVEDIR);
    } else {
        unlinkat(parentfd, name, 0);
    }
}

void atomic_dir_abort(const char *tmp_path)
{
    int saved = errno;
    if (tmp_path)
        remove_tree(AT_FDCWD, tmp_path);
    errno = saved;
}
