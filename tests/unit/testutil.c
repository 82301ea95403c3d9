/*
 * testutil.c - scratch files for unit tests (see testutil.h).
 */
#include "testutil.h"

#include <dirent.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "libutil/atomic.h"
#include "libutil/strbuf.h"
#include "libutil/xalloc.h"

char *tu_mkdtemp(void)
{
    const char *t = getenv("TMPDIR");
    char *p = xstrfmt("%s/exa-unit-XXXXXX", t && *t ? t : "/tmp");
    assert_non_null(mkdtemp(p));
    return p;
}

void tu_rmtree(const char *path)
{
    atomic_dir_abort(path);
}

char *tu_read_file(const char *path, size_t *len)
{
    FILE *fp = fopen(path, "rb");
    char *buf;
    long n;
    if (!fp)
        return NULL;
    fseek(fp, 0, SEEK_END);
    n = ftell(fp);
    fseek(fp, 0, SEEK_SET);
    buf = xmalloc((size_t)n + 1);
    if (fread(buf, 1, (size_t)n, fp) != (size_t)n) {
        fclose(fp);
        free(buf);
        return NULL;
    }
    buf[n] = '\0';
    fclose(fp);
    if (len)
        *len = (size_t)n;
    return buf;
}

void tu_write_file(const char *path, const char *s)
{
    FILE *fp = fopen(path, "wb");
    assert_non_null(fp);
    assert_int_equal(fwrite(s, 1, strlen(s), fp), strlen(s));
    assert_int_equal(fclose(fp), 0);
}

int tu_count_entries(const char *path)
{
    DIR *d = opendir(path);
    struct dirent *de;
    int n = 0;
    if (!d)
        return -1;
    while ((de = readdir(d)))
        if (strcmp(de->d_name, ".") && strcmp(de->d_name, ".."))
            n++;
    closedir(d);
    return n;
}
