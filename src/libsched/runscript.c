/*
 * runscript.c - render and write run.sh (see runscript.h).
 *
 * The output is deliberately plain: shebang, a title comment, strict mode,
 * mkdir/cd into the job directory, exports, exec. A reader can check at a
 * glance that every variable part sits inside shquote()'s quotes.
 */
#include "libsched/runscript.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "libutil/shquote.h"
#include "libutil/xalloc.h"

static int valid_name(const char *s, size_t len)
{
    if (!len || (s[0] >= '0' && s[0] <= '9'))
        return 0;
    for (size_t i = 0; i < len; i++) {
        char c = s[i];
        if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
              (c >= '0' && c <= '9') || c == '_'))
            return 0;
    }
    return 1;
}

int runscript_render(const struct runscript *rs, struct strbuf *out,
                     exa_error_t *err)
{
    if (!rs->argv || !rs->argv[0])
        return exa_err(err, EXA_EUSAGE, "run script needs a command");
    strbuf_addstr(out, "#!/bin/bash\n");
    if (rs->title) {
        strbuf_addstr(out, "# exa run script: ");
        for (const char *p = rs->title; *p; p++)
            strbuf_addch(out, *p == '\n' || *p == '\r' ? ' ' : *p);
        strbuf_addch(out, '\n');
    }
    strbuf_addstr(out, "set -euo pipefail\n");
    if (rs->remote_dir) {
        strbuf_addstr(out, "mkdir -p -- ");
        shquote_append(out, rs->remote_dir);
        strbuf_addstr(out, "\ncd -- ");
        shquote_append(out, rs->remote_dir);
        strbuf_addch(out, '\n');
    }
    for (size_t i = 0; rs->env && rs->env[i]; i++) {
        const char *eq = strchr(rs->env[i], '=');
        if (!eq || !valid_name(rs->env[i], (size_t)(eq - rs->env[i])))
            return exa_err(err, EXA_EUSAGE,
                           "environment entry '%s' is not NAME=VALUE",
                           rs->env[i]);
        strbuf_addstr(out, "export ");
        strbuf_add(out, rs->env[i], (size_t)(eq - rs->env[i]) + 1);
        shquote_append(out, eq + 1);
        strbuf_addch(out, '\n');
    }
    strbuf_addstr(out, "exec ");
    shquote_argv(out, rs->argv);
    strbuf_addch(out, '\n');
    return 0;
}

int runscript_write(const char *path, const char *text, exa_error_t *err)
{
    char *tmp = xstrfmt("%s.tmp.%ld", path, (long)getpid());
    size_t len = strlen(text), off = 0;
    int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0700);

    if (fd < 0)
        goto fail;
    while (off < len) {
        ssize_t w = write(fd, text + off, len - off);
        if (w < 0 && errno == EINTR)
            continue;
        if (w < 0)
            goto fail_fd;
        off += (size_t)w;
    }
    if (fchmod(fd, 0700) < 0)
        goto fail_fd;
    if (close(fd) < 0) {
        fd = -1;
        goto fail;
    }
    if (rename(tmp, path) < 0)
        goto fail;
    free(tmp);
    return 0;
fail_fd:
    close(fd);
fail : {
    int e = errno;
    unlink(tmp);
    free(tmp);
    return exa_err(err, EXA_ECONFIG, "cannot write '%s': %s", path,
                   strerror(e));
}
}

char *runscript_log_pattern(const char *sched, const char *remote_dir,
                            const char *ext)
{
    struct strbuf sb = STRBUF_INIT;

    if (!strcmp(sched, "slurm")) {
        /* sbatch(1) "filename pattern": % starts a replacement symbol */
        for (const char *p = remote_dir; *p; p++) {
            if (*p == '%')
                strbuf_addch(&sb, '%');
            strbuf_addch(&sb, *p);
        }
        strbuf_addf(&sb, "/%%j.%s", ext);
    } else {
        strbuf_addf(&sb, "%s/{{id}}.%s", remote_dir, ext);
    }
    return strbuf_detach(&sb, NULL);
}
