/*
 * worker.c - `exa worker` (run the dial-back worker, libworker/worker.h),
 * `exa worker list` and `exa worker token`, and the hidden
 * `exa task-shim` every task runs under.
 *
 * The join token is read from stdin only (`--join-token-stdin`), never
 * from argv or the environment, which `ps` and /proc show; stdin is then
 * reopened on /dev/null so no task can read it.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cmd/groups.h"
#include "libstore/store.h"
#include "libtask/engine.h"
#include "libtask/proto.h"
#include "libtask/view.h"
#include "libutil/json.h"
#include "libutil/strbuf.h"
#include "libutil/tlspin.h"
#include "libutil/xalloc.h"
#include "libworker/worker.h"

static void log_line(void *ctx, const char *line)
{
    char ts[32];
    time_t t = time(NULL);
    struct tm tm;
    (void)ctx;
    gmtime_r(&t, &tm);
    strftime(ts, sizeof(ts), "%H:%M:%S", &tm);
    fprintf(stderr, "exa worker %s: %s\n", ts, line);
    fflush(stderr);
}

static int parse_secs(struct exa_ctx *ctx, const char *opt, const char *s,
                      double lo, double *out)
{
    char *end;
    double v;
    errno = 0;
    v = strtod(s, &end);
    if (errno || end == s || *end || !isfinite(v) || v < lo || v > 31e6)
        return out_usage(ctx, "%s expects seconds (%g or more), got '%s'", opt,
                         lo, s);
    *out = v;
    return 0;
}

/* One line from stdin (the join token), then stdin is /dev/null. */
static char *read_token(exa_error_t *err)
{
    char buf[2100];
    size_t n = 0;
    int fd;
    while (n < sizeof(buf) - 1) {
        ssize_t r = read(0, buf + n, 1);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0 || buf[n] == '\n')
            break;
        n++;
    }
    buf[n] = '\0';
    while (n && (buf[n - 1] == '\r' || buf[n - 1] == ' '))
        buf[--n] = '\0';
    fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
    if (fd >= 0) {
        dup2(fd, 0);
        close(fd);
    }
    if (!n || n >= 2048) {
        memset(buf, 0, sizeof(buf));
        exa_err(err, EXA_EUSAGE,
                "--join-token-stdin: expected one line holding the token on "
                "stdin");
        return NULL;
    }
    {
        char *t = xstrdup(buf);
        memset(buf, 0, sizeof(buf));
        return t;
    }
}

static int worker_run_cmd(struct exa_ctx *ctx, int argc, char **argv)
{
    static const struct option opts[] = {
        {"url", required_argument, NULL, 'u'},
        {"worker-id", required_argument, NULL, 'i'},
        {"join-token-stdin", no_argument, NULL, 'j'},
        {"cpus", required_argument, NULL, 'c'},
        {"gpus", required_argument, NULL, 'g'},
        {"ram-mb", required_argument, NULL, 'r'},
        {"capacity", required_argument, NULL, 'k'},
        {"labels", required_argument, NULL, 'l'},
        {"walltime", required_argument, NULL, 'w'},
        {"max-idle", required_argument, NULL, 'm'},
        {"drain", required_argument, NULL, 'd'},
        {"engine-lost", required_argument, NULL, 'e'},
        {"pin", required_argument, NULL, 'p'},
        {"protocol", required_argument, NULL, 'P'},
        {"allow-root", no_argument, NULL, 'R'},
        {"spool", required_argument, NULL, 's'},
        {NULL, 0, NULL, 0},
    };
    struct worker_opts o;
    exa_error_t err = EXA_ERROR_INIT;
    int c, rc, from_stdin = 0, allow_root = 0;
    char self[4096];
    char *spool = NULL;
    ssize_t sl;
    long long v;

    memset(&o, 0, sizeof(o));
    o.cpus = 1;
    o.capacity = 0;
    o.max_idle_s = -1;
    o.engine_lost_s = -1;
    o.drain_s = 300;
    o.protocol = TP_PROTOCOL;
    optind = 0;
    opterr = 0;
    while ((c = getopt_long(argc, argv, ":", opts, NULL)) != -1) {
        switch (c) {
        case 'u':
            o.url = optarg;
            break;
        case 'i':
            o.worker_id = optarg;
            break;
        case 'j':
            from_stdin = 1;
            break;
        case 'c':
        case 'g':
        case 'r':
        case 'k':
        case 'P':
            if ((rc = cmd_parse_uint(ctx, argv[optind - 1], optarg, &v)))
                return rc;
            if (c == 'c')
                o.cpus = v;
            else if (c == 'g')
                o.gpus = v;
            else if (c == 'r')
                o.ram_mb = v;
            else if (c == 'k')
                o.capacity = v;
            else
                o.protocol = v;
            break;
        case 'l':
            o.labels = optarg;
            break;
        case 'w':
            if ((rc = parse_secs(ctx, "--walltime", optarg, 1, &o.walltime_s)))
                return rc;
            break;
        case 'm':
            if ((rc = parse_secs(ctx, "--max-idle", optarg, 0, &o.max_idle_s)))
                return rc;
            break;
        case 'd':
            if ((rc = parse_secs(ctx, "--drain", optarg, 0, &o.drain_s)))
                return rc;
            break;
        case 'e':
            if ((rc = parse_secs(ctx, "--engine-lost", optarg, 1,
                                 &o.engine_lost_s)))
                return rc;
            break;
        case 'p':
            if (!tlspin_valid(optarg))
                return out_usage(ctx,
                                 "--pin '%s': expected sha256//BASE64 (44 "
                                 "base64 characters; ';' between several)",
                                 optarg);
            o.pin = optarg;
            break;
        case 'R':
            allow_root = 1;
            break;
        case 's':
            o.spool = optarg;
            break;
        case ':':
            return out_usage(ctx, "option '%s' needs a value",
                             argv[optind - 1]);
        default:
            return out_usage(ctx, "unknown option '%s'", argv[optind - 1]);
        }
    }
    if (optind < argc)
        return out_usage(ctx, "unexpected argument '%s'", argv[optind]);
    if (!o.url ||
        (strncmp(o.url, "http://", 7) && strncmp(o.url, "https://", 8)))
        return out_usage(ctx, "--url http[s]://HOST:PORT is required");
    if (!o.worker_id || !tp_name_ok(o.worker_id))
        return out_usage(ctx,
                         "--worker-id NAME is required ([A-Za-z0-9._-], 1 to "
                         "128 characters)");
    if (!from_stdin)
        return out_usage(ctx, "--join-token-stdin is required: the token is "
                              "read from stdin, never from argv");
    if (o.cpus < 1 || o.protocol < 1)
        return out_usage(ctx, "--cpus and --protocol must be at least 1");
    if (!o.capacity)
        o.capacity = o.cpus;
    if (o.capacity > 1024)
        return out_usage(ctx, "--capacity must be 1 to 1024");
    if (geteuid() == 0 && !allow_root)
        return out_errorf(ctx, EXA_EUSAGE,
                          "pass --allow-root if this is intended",
                          "'exa worker' refuses to run as root");
    sl = readlink("/proc/self/exe", self, sizeof(self) - 1);
    if (sl <= 0)
        return out_errorf(ctx, EXA_ECONFIG, NULL,
                          "cannot find the exa binary (/proc/self/exe)");
    self[sl] = '\0';
    o.self_exe = self;
    if (!o.spool) {
        const char *tmp = getenv("TMPDIR");
        spool = xstrfmt("%s/exa-worker-%s-%d", tmp && *tmp ? tmp : "/tmp",
                        o.worker_id, (int)getpid());
        o.spool = spool;
    }
    o.slurm_job_id = getenv("SLURM_JOB_ID");
    if (o.slurm_job_id && !tp_name_ok(o.slurm_job_id))
        o.slurm_job_id = NULL;
    o.node = getenv("SLURMD_NODENAME");
    o.log = log_line;
    o.join_token = read_token(&err);
    if (!o.join_token) {
        free(spool);
        return out_error(ctx, &err, NULL);
    }
    rc = worker_run(&o, &err);
    memset(o.join_token, 0, strlen(o.join_token));
    free(o.join_token);
    free(spool);
    if (rc < 0) /* it could not start: the exit status of err's code */
        return out_error(ctx, &err, NULL);
    if (rc != WORKER_EXIT_OK)
        out_error(ctx, &err, NULL);
    return rc;
}

static int worker_list(struct exa_ctx *ctx, int argc, char **argv)
{
    static const char *const cols[] = {"ID",     "Cluster", "Profile", "Job",
                                       "Node",   "State",   "Leases",  "Cap",
                                       "Seen_s", "Left_s",  NULL};
    exa_error_t err = EXA_ERROR_INIT;
    store_t *st;
    json_t *doc, *ws;
    double now = te_wallclock(NULL);
    int rc;
    if ((rc = cmd_no_args(ctx, argc, argv)))
        return rc;
    if (!(st = store_open(NULL, &err)))
        return out_error(ctx, &err, NULL);
    doc = worker_view_list(st, now, &err);
    store_close(st);
    if (!doc)
        return out_error(ctx, &err, NULL);
    if (ctx->out == OUT_JSON) {
        out_json(ctx, doc);
        return 0;
    }
    ws = json_object_get(doc, "workers");
    if (!json_array_size(ws)) {
        out_info(ctx, "No workers have registered.");
    } else {
        struct out_table *t = out_table_create(cols);
        for (size_t i = 0; i < json_array_size(ws); i++) {
            json_t *w = json_array_get(ws, i);
            char leases[24], cap[24], seen[32], left[32];
            double ls = jx_get_num(w, "last_seen_at", 0);
            double wl = jx_get_num(w, "walltime_left_s", NAN);
            const char *row[11];
            xsnprintf(leases, sizeof(leases), "%lld",
                      jx_get_int(w, "leases", 0));
            xsnprintf(cap, sizeof(cap), "%lld", jx_get_int(w, "capacity", 0));
            xsnprintf(seen, sizeof(seen), "%.0f", ls > 0 ? now - ls : 0);
            if (isfinite(wl))
                xsnprintf(left, sizeof(left), "%.0f", wl);
            row[0] = jx_get_str(w, "id", NULL);
            row[1] = jx_get_str(w, "cluster", NULL);
            row[2] = jx_get_str(w, "profile", NULL);
            row[3] = jx_get_str(w, "job", NULL);
            row[4] = jx_get_str(w, "node", NULL);
            row[5] = jx_get_str(w, "state", NULL);
            row[6] = leases;
            row[7] = cap;
            row[8] = ls > 0 ? seen : NULL;
            row[9] = isfinite(wl) ? left : NULL;
            row[10] = NULL;
            out_table_row(t, row);
        }
        out_table_print(ctx, t);
    }
    json_decref(doc);
    return 0;
}

static int worker_token(struct exa_ctx *ctx, int argc, char **argv)
{
    static const struct option opts[] = {
        {"worker-id", required_argument, NULL, 'i'},
        {"ttl", required_argument, NULL, 't'},
        {"cluster", required_argument, NULL, 'c'},
        {"profile", required_argument, NULL, 'p'},
        {NULL, 0, NULL, 0},
    };
    const char *id = NULL, *cluster = NULL, *profile = NULL;
    double ttl = 1020;
    exa_error_t err = EXA_ERROR_INIT;
    store_t *st;
    char *tok;
    int c, rc;
    optind = 0;
    opterr = 0;
    while ((c = getopt_long(argc, argv, ":", opts, NULL)) != -1) {
        switch (c) {
        case 'i':
            id = optarg;
            break;
        case 't':
            if ((rc = parse_secs(ctx, "--ttl", optarg, 1, &ttl)))
                return rc;
            break;
        case 'c':
            cluster = optarg;
            break;
        case 'p':
            profile = optarg;
            break;
        case ':':
            return out_usage(ctx, "option '%s' needs a value",
                             argv[optind - 1]);
        default:
            return out_usage(ctx, "unknown option '%s'", argv[optind - 1]);
        }
    }
    if (optind < argc)
        return out_usage(ctx, "unexpected argument '%s'", argv[optind]);
    if (!id)
        return out_usage(ctx, "--worker-id NAME is required");
    if (!(st = store_open(NULL, &err)))
        return out_error(ctx, &err, NULL);
    tok = task_join_mint(st, NULL, id, cluster, profile, NULL, ttl,
                         te_wallclock(NULL), &err);
    store_close(st);
    if (!tok)
        return out_error(ctx, &err, NULL);
    /* the token alone on stdout, for a pipe into --join-token-stdin */
    printf("%s\n", tok);
    fflush(stdout);
    memset(tok, 0, strlen(tok));
    free(tok);
    return 0;
}

int cmd_worker(struct exa_ctx *ctx, int argc, char **argv)
{
    if (argc >= 2 && !strcmp(argv[1], "list"))
        return worker_list(ctx, argc - 1, argv + 1);
    if (argc >= 2 && !strcmp(argv[1], "token"))
        return worker_token(ctx, argc - 1, argv + 1);
    return worker_run_cmd(ctx, argc, argv);
}

int cmd_task_shim(struct exa_ctx *ctx, int argc, char **argv)
{
    (void)ctx;
    return worker_shim_main(argc, argv);
}
