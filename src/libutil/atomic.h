/*
 * atomic.h - files and directories that other programs never see
 * half-written (doc/design.md §1.5).
 *
 * A file is written to a temporary name in the same directory, fsync'ed,
 * renamed over the target (rename(2) is atomic within one file system) and
 * the directory is fsync'ed so the rename itself survives a crash. A
 * directory of artifacts is built under "<final>.tmp-XXXXXX" next to its
 * final name and renamed into place once complete; a reader sees either no
 * directory or the whole one.
 */
#ifndef EXA_ATOMIC_H
#define EXA_ATOMIC_H

#include <stddef.h>
#include <sys/types.h>

#include "libutil/error.h"

/*
 * Replace path with len bytes of data, atomically: readers see the old
 * content or the new, never a mix. mode (e.g. 0644) applies to the new
 * file. Returns 0, or -1 with err (EXA_ECONFIG naming the path and the
 * errno text); on failure the old file is untouched and no temporary file
 * is left behind.
 */
int atomic_write_file(const char *path, const void *data, size_t len,
                      mode_t mode, exa_error_t *err);

/*
 * mkdir -p path with mode for each directory created. Existing
 * directories are fine. Returns 0 or -1 with err (EXA_ECONFIG).
 */
int mkdir_p(const char *path, mode_t mode, exa_error_t *err);

/*
 * Start building the directory final_path: creates its parents (0700 when
 * new) and a fresh empty "<final_path>.tmp-XXXXXX" (mkdtemp, mode 0700).
 * Returns the malloc'ed temporary path (caller frees) or NULL with err
 * (EXA_ECONFIG: parent not writable).
 */
char *atomic_dir_begin(const char *final_path, exa_error_t *err);

/*
 * Publish tmp_path (from atomic_dir_begin) as final_path: fsync every
 * regular file in it and the directory itself, chmod it to mode, rename
 * it into place without replacing an existing final_path (RENAME_NOREPLACE
 * where the kernel has it), then fsync the parent. Returns 0, or -1 with
 * err (EXA_ECONFIG; EEXIST when final_path already exists); on failure
 * tmp_path is left for the caller to atomic_dir_abort().
 */
int atomic_dir_commit(const char *tmp_path, const char *final_path, mode_t mode,
                      exa_error_t *err);

/*
 * Remove a directory tree built by atomic_dir_begin() (regular files and
 * subdirectories). Used on failure paths; errors are ignored, errno is
 * preserved. NULL is accepted.
 */
void atomic_dir_abort(const char *tmp_path);

/* fsync the directory at path; 0 or -1 with err (EXA_ECONFIG). */
int fsync_dir(const char *path, exa_error_t *err);

#endif
