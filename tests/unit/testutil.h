/*
 * testutil.h - helpers shared by exa's cmocka unit tests: scratch
 * directories and reading whole files.
 */
#ifndef EXA_TESTUTIL_H
#define EXA_TESTUTIL_H

#include <stddef.h>

/* Create a fresh directory under $TMPDIR (or /tmp); caller frees the path
 * and removes it with tu_rmtree(). Fails the test on error. */
char *tu_mkdtemp(void);
/* rm -r path (best effort). */
void tu_rmtree(const char *path);
/* Read path into a malloc'ed NUL-terminated buffer; *len (may be NULL)
 * gets its size. NULL when the file cannot be read. */
char *tu_read_file(const char *path, size_t *len);
/* Write s to path (truncating); fails the test on error. */
void tu_write_file(const char *path, const char *s);
/* Number of entries (other than . and ..) in directory path, or -1. */
int tu_count_entries(const char *path);

#endif
