/*
 * debug.c - `exa debug parse KIND`: run one of exa's own parsers over
 * stdin and print what it understood as the normalized JSON of
 * doc/formats.md. The same parsers the product uses, exposed for
 * users who need to see what exa made of their scheduler's output and for
 * the conformance test.
 *
 * Each kind adapter turns raw bytes into the `result` object (new
 * reference), or returns NULL with err->text set and errkind filled with
 * the doc/formats.md error kind ("submit_failed", "invalid_hostlist", ...).
 */
#include <errno.h>
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cmd/debug_flux.h"
#include "cmd/debug_kinds.h"
#include "cmd/debug_slurm.h"
#include "cmd/groups.h"
#include "libutil/json.h"
#include "libutil/strbuf.h"

/* Scheduler output larger than this is refused (untrusted input). */
#define DEBUG_PARSE_MAX_BYTES (256u << 20)

static const struct parse_kind kinds[] = {
    /* slurm kinds and hostlist */
    {"sinfo", debug_parse_sinfo, "sinfo node or group records",
     debug_stream_sinfo},
    {"squeue", debug_parse_squeue, "squeue jobs (or scontrol show job -o)",
     debug_stream_squeue},
    {"sacct", debug_parse_sacct, "sacct jobs and steps", debug_stream_sacct},
    {"sbatch", debug_parse_sbatch, "sbatch job id and cluster", NULL},
    {"hostlist", debug_parse_hostlist, "Slurm hostlist expansion", NULL},
    /* flux kinds and nvidia-smi */
    {"flux-jobs", debug_parse_flux_jobs, "flux jobs output", NULL},
    {"flux-eventlog", debug_parse_flux_eventlog, "flux job eventlog", NULL},
    {"flux-resource", debug_parse_flux_resource, "flux resource list", NULL},
    {"nvidia-smi", debug_parse_nvidia_smi, "nvidia-smi --query-gpu csv", NULL},
    {NULL, NULL, NULL, NULL},
};

/* All of fd into sb, read straight into its storage (a large input is
 * not copied from a bounce buffer), at most cap bytes. */
static int read_all(int fd, struct strbuf *sb, size_t cap, exa_error_t *err)
{
    struct stat st;
    /* a file's size known: its bytes in one allocation, not a doubling
     * series of copies */
    if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0 &&
        (size_t)st.st_size <= cap)
        strbuf_grow(sb, (size_t)st.st_size + 1);
    for (;;) {
        ssize_t n;
        if (sb->alloc < sb->len + 2) /* room for a byte and the NUL */
            strbuf_grow(sb, 65536);
        n = read(fd, sb->buf + sb->len, sb->alloc - sb->len - 1);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            return exa_err(err, EXA_EFAIL, "reading stdin: %s",
                           strerror(errno));
        }
        if (n == 0)
            return 0;
        if (sb->len + (size_t)n > cap)
            return exa_err(err, EXA_EPARSE, "input on stdin exceeds %zu bytes",
                           cap);
        strbuf_setlen(sb, sb->len + (size_t)n);
    }
}

/*
 * Stdin mapped when it is a regular file read from its start whose last
 * page has room after the bytes: mmap(2) fills that room with zeros, so
 * the bytes end in a NUL as a strbuf's do. No copy, and the pages come in
 * a few at a time. NULL otherwise (read_all() then); munmap(*len).
 */
static const char *map_input(int fd, size_t cap, size_t *len)
{
    struct stat st;
    long pg = sysconf(_SC_PAGESIZE);
    void *p;
    if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || st.st_size <= 0 ||
        (unsigned long long)st.st_size > cap || pg <= 0 ||
        st.st_size % pg == 0 || lseek(fd, 0, SEEK_CUR) != 0)
        return NULL;
    p = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
    if (p == MAP_FAILED)
        return NULL;
    *len = (size_t)st.st_size;
    return p;
}

static int cmd_parse(struct exa_ctx *ctx, int argc, char **argv)
{
    struct strbuf in = STRBUF_INIT;
    exa_error_t err = EXA_ERROR_INIT;
    char errkind[64] = "";
    const struct parse_kind *k = NULL;
    json_t *res;
    struct strbuf names = STRBUF_INIT;
    struct cmd_spec spec = CMD_SPEC_INIT;
    const char *command = getenv("EXA_PARSE_COMMAND");
    char *pos[2] = {argv[0], NULL};
    int npos = 1;

    /* KIND [--command CMDLINE | --command=CMDLINE], in any order */
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--command") || !strcmp(argv[i], "-c")) {
            if (i + 1 >= argc)
                return out_usage(ctx, "--command needs a command line");
            command = argv[++i];
        } else if (!strncmp(argv[i], "--command=", 10)) {
            command = argv[i] + 10;
        } else if (npos < 2) {
            pos[npos++] = argv[i];
        } else {
            npos = 3;
        }
    }
    argc = npos;
    argv = pos;
    for (size_t i = 0; kinds[i].name; i++)
        strbuf_addf(&names, "%s%s", i ? ", " : "", kinds[i].name);
    if (argc != 2) {
        int rc =
            out_usage(ctx, "exa debug parse needs one KIND: %s", names.buf);
        strbuf_release(&names);
        return rc;
    }
    for (size_t i = 0; kinds[i].name; i++)
        if (!strcmp(kinds[i].name, argv[1]))
            k = &kinds[i];
    if (!k) {
        int rc = out_usage(ctx, "unknown parse kind '%s': expected one of %s",
                           argv[1], names.buf);
        strbuf_release(&names);
        return rc;
    }
    strbuf_release(&names);
    if (cmd_spec_from_string(command, &spec, &err) < 0)
        return out_error(ctx, &err, NULL);
    /* The kinds parsed a block of records at a time (libsched
     * slurm_parse_blocks), once, then exit: memory a block freed is kept
     * for the next (not unmapped and faulted in again; glibc mallopt(3)),
     * which was a third of a 100,000-row parse's time in page faults.
     * (sinfo grows a few large arrays, which realloc then copies.) */
    if (!strcmp(k->name, "squeue") || !strcmp(k->name, "sacct")) {
        mallopt(M_MMAP_THRESHOLD, 64 << 20);
        mallopt(M_TRIM_THRESHOLD, 256 << 20);
    }
    if (k->stream) {
        size_t mlen = 0;
        const char *m = map_input(STDIN_FILENO, DEBUG_PARSE_MAX_BYTES, &mlen);
        int rc;
        if (!m &&
            read_all(STDIN_FILENO, &in, DEBUG_PARSE_MAX_BYTES, &err) < 0) {
            strbuf_release(&in);
            cmd_spec_release(&spec);
            return out_error(ctx, &err, NULL);
        }
        rc = k->stream(m ? m : in.buf, m ? mlen : in.len, &spec, stdout, &err,
                       errkind, sizeof(errkind));
        if (m)
            munmap((void *)m, mlen);
        strbuf_release(&in);
        cmd_spec_release(&spec);
        if (rc == 0)
            return 0;
        res = NULL;
        goto failed;
    }
    if (read_all(STDIN_FILENO, &in, DEBUG_PARSE_MAX_BYTES, &err) < 0) {
        strbuf_release(&in);
        cmd_spec_release(&spec);
        return out_error(ctx, &err, NULL);
    }
    res = k->fn(in.buf, in.len, &spec, &err, errkind, sizeof(errkind));
    strbuf_release(&in);
    cmd_spec_release(&spec);
failed:
    if (!res) {
        /* doc/formats.md's error envelope, in table mode too: it is data. */
        json_t *doc = json_object(), *e = json_object();
        jx_set(e, "kind", jx_str(errkind[0] ? errkind : "parse_error"));
        jx_set(e, "message", jx_str(err.text));
        jx_set(doc, "error", e);
        jx_dumpf(doc, stdout, 1);
        json_decref(doc);
        return 1;
    }
    jx_dumpf(res, stdout, 1);
    json_decref(res);
    return 0;
}

static const struct exa_cmd cmds[] = {
    {"parse", cmd_parse, "KIND [--command CMDLINE] < OUTPUT",
     "parse scheduler output on stdin and print what exa understood",
     "KIND is one of: sinfo, squeue, sacct, sbatch, flux-resource,\n"
     "flux-jobs, flux-eventlog, nvidia-smi, hostlist. The JSON shapes are\n"
     "those of doc/debug-parse.md.\n"
     "\n"
     "--command CMDLINE (or $EXA_PARSE_COMMAND; the option wins) names the\n"
     "command line that printed OUTPUT; it is part of the input. It is\n"
     "split like sh would (quotes, $'\\x1f'), but never run. Where OUTPUT\n"
     "has no header the columns come from its format (sacct --format/-o,\n"
     "squeue/sinfo -o/-O, flux -o '{...}', nvidia-smi --query-gpu), the\n"
     "separator from sacct -P/--delimiter or the format's literals, the\n"
     "cut widths from -O (20 by default) or %.Nx; a value that filled its\n"
     "width may be truncated (a TRES cell gives gpus null); squeue -t with\n"
     "one state sets that state when no state column was printed. A\n"
     "printed header still names the columns.\n\n"
     "Options:\n"
     "  KIND                  what OUTPUT is (the list above)\n"
     "  --command CMDLINE     the command line that printed OUTPUT\n"
     "                        (default $EXA_PARSE_COMMAND, else none)\n"
     "Example: squeue -h -o '%i|%T' | exa debug parse squeue --command "
     "\"squeue -h -o '%i|%T'\""},
    {NULL},
};

const struct exa_group group_debug = {
    "debug", "see what exa understood of scheduler output", cmds};
