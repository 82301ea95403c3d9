/*
 * upload.c - streamed artifact uploads (upload.h) on top of
 * te_artifact_check() / te_artifact_commit(), hashing as the bytes
 * arrive so the body is never held in memory.
 */
#include "libtask/upload.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "libutil/dl_crypto_int.h"
#include "libutil/strbuf.h"
#include "libutil/xalloc.h"

struct te_upload {
    task_engine_t *e;
    char worker[TP_NAME_MAX + 1], name[TP_NAME_MAX + 1], claimed[65];
    long long task, attempt;
    char *tmp;
    int fd;
    EVP_MD_CTX *md;
    unsigned long long size;
    int failed; /* 1 too large, 2 write error */
};

struct te_upload *te_upload_open(task_engine_t *e, const char *worker_id,
                                 const char *bearer, long long task,
                                 long long attempt, const char *name,
                                 const char *sha256, struct te_reply *out)
{
    char *tmp = NULL;
    struct te_upload *u;
    int rc = te_artifact_check(e, worker_id, bearer, task, attempt, name,
                               sha256 ? sha256 : "", &tmp, out);
    if (rc != 0)
        return NULL;
    u = xcalloc(1, sizeof(*u));
    u->e = e;
    xsnprintf(u->worker, sizeof(u->worker), "%s", worker_id);
    xsnprintf(u->name, sizeof(u->name), "%s", name);
    xsnprintf(u->claimed, sizeof(u->claimed), "%s", sha256);
    u->task = task;
    u->attempt = attempt;
    u->tmp = tmp;
    u->fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    u->md = dl_crypto()->EVP_MD_CTX_new();
    dl_crypto()->EVP_DigestInit_ex(u->md, dl_crypto()->EVP_sha256(), NULL);
    if (u->fd < 0)
        u->failed = 2;
    return u;
}

int te_upload_write(struct te_upload *u, const void *data, size_t n)
{
    const char *p = data;
    if (u->failed)
        return -1;
    if (u->size + n > TE_UPLOAD_MAX) {
        u->failed = 1;
        return -1;
    }
    dl_crypto()->EVP_DigestUpdate(u->md, data, n);
    u->size += n;
    while (n) {
        ssize_t w = write(u->fd, p, n);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0) {
            u->failed = 2;
            return -1;
        }
        p += w;
        n -= (size_t)w;
    }
    return 0;
}

static void upload_free(struct te_upload *u)
{
    if (u->fd >= 0)
        close(u->fd);
    dl_crypto()->EVP_MD_CTX_free(u->md);
    free(u->tmp);
    free(u);
}

void te_upload_abort(struct te_upload *u)
{
    if (!u)
        return;
    unlink(u->tmp);
    upload_free(u);
}

void te_upload_finish(struct te_upload *u, struct te_reply *out)
{
    unsigned char md[EVP_MAX_MD_SIZE];
    unsigned mdlen = 0;
    char hex[65];
    json_t *b = NULL, *er;
    if (!u->failed && fsync(u->fd) < 0)
        u->failed = 2;
    if (u->failed) {
        b = json_object();
        er = json_object();
        json_object_set_new(
            er, "code",
            json_string(u->failed == 1 ? "too_large" : "insufficient_storage"));
        json_object_set_new(er, "reason",
                            json_string(u->failed == 1
                                            ? "artifact over the upload limit"
                                            : "cannot write the artifact"));
        json_object_set_new(b, "error", er);
        out->status = u->failed == 1 ? 413 : 507;
        out->body = b;
        out->retry_after_s = 0;
        te_upload_abort(u);
        return;
    }
    dl_crypto()->EVP_DigestFinal_ex(u->md, md, &mdlen);
    for (unsigned i = 0; i < 32; i++)
        xsnprintf(hex + 2 * i, 3, "%02x", md[i]);
    close(u->fd);
    u->fd = -1;
    te_artifact_commit(u->e, u->worker, u->task, u->attempt, u->name,
                       u->claimed, hex, (long long)u->size, u->tmp, out);
    upload_free(u);
}
