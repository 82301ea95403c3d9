/*
 * upload.h - streaming one artifact into the engine's store
 * (WORKERS.md §6.6): the bytes go to a temporary file while their
 * SHA-256 is computed; at the end the hash must equal the one the worker
 * claimed (header X-Exa-Sha256), and the file is fsynced and renamed to
 * <artifacts>/<task>/<attempt>/<name> and recorded.
 */
#ifndef EXA_TASK_UPLOAD_H
#define EXA_TASK_UPLOAD_H

#include <stddef.h>

#include "libtask/engine.h"

struct te_upload;

/* Largest artifact accepted (bytes); more is 413. */
#define TE_UPLOAD_MAX (1ULL << 30)

/*
 * Authenticate and open an upload of task/attempt/name claimed to hash to
 * sha256 (64 hex digits). Returns the upload, or NULL with out set: the
 * error answer, or 200 when that artifact is already stored with that
 * hash (nothing to do).
 */
struct te_upload *te_upload_open(task_engine_t *e, const char *worker_id,
                                 const char *bearer, long long task,
                                 long long attempt, const char *name,
                                 const char *sha256, struct te_reply *out);
/* Append n bytes; -1 when the write failed or the cap was passed (the
 * upload is then answered by te_upload_finish with 413 or 507). */
int te_upload_write(struct te_upload *u, const void *data, size_t n);
/* Check, rename and record; fills out (201, 413, 422, 507, 503) and frees
 * u. */
void te_upload_finish(struct te_upload *u, struct te_reply *out);
/* Drop the upload (client went away): remove the temporary file. */
void te_upload_abort(struct te_upload *u);

#endif
