/*
 * test_cmdspec.c - command lines read into output column specs
 * (src/libutil/cmdspec.c): shell-like splitting without a shell, and the
 * columns, widths, separators, header and state filter of squeue, sinfo,
 * sacct, flux jobs/resource and nvidia-smi commands.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "libutil/cmdspec.h"

static void spec_of(const char *cmd, struct cmd_spec *sp)
{
    exa_error_t err = EXA_ERROR_INIT;
    struct cmd_spec z = CMD_SPEC_INIT;
    *sp = z;
    assert_int_equal(cmd_spec_from_string(cmd, sp, &err), 0);
}

/* names joined by blanks */
static char *names(const struct cmd_spec *sp)
{
    static char buf[1024];
    size_t k = 0;
    buf[0] = '\0';
    for (size_t i = 0; i < sp->ncols; i++) {
        size_t n = strlen(sp->cols[i].name);
        if (k + n + 2 >= sizeof(buf))
            break;
        if (i)
            buf[k++] = ' ';
        memcpy(buf + k, sp->cols[i].name, n);
        k += n;
        buf[k] = '\0';
    }
    return buf;
}

static void test_split(void **state)
{
    struct strvec *c;
    size_t n;
    exa_error_t err = EXA_ERROR_INIT;
    (void)state;
    assert_int_equal(cmd_split("a 'b c' \"d\\\"e\" f\\ g $'\\x1fh'|tail -n1 "
                               "(exit status 6)",
                               &c, &n, &err),
                     0);
    assert_int_equal(n, 3);
    assert_int_equal(c[0].nr, 5);
    assert_string_equal(c[0].v[1], "b c");
    assert_string_equal(c[0].v[2], "d\"e");
    assert_string_equal(c[0].v[3], "f g");
    assert_string_equal(c[0].v[4], "\x1fh");
    assert_string_equal(c[1].v[0], "tail");
    assert_string_equal(c[2].v[0], "exit");
    cmd_split_free(c, n);
    assert_int_equal(cmd_split("squeue -o 'x", &c, &n, &err), -1);
    assert_int_equal(err.code, EXA_EUSAGE);
}

static void test_sacct(void **state)
{
    struct cmd_spec sp;
    (void)state;
    spec_of("sacct -P -n --format=State,JobID,ExitCode%5", &sp);
    assert_int_equal(sp.tool, CMD_TOOL_SACCT);
    assert_string_equal(names(&sp), "STATE JOBID EXITCODE");
    assert_string_equal(sp.sep, "|");
    assert_int_equal(sp.noheader, 1);
    assert_int_equal(sp.cols[2].width, 0);
    cmd_spec_release(&sp);

    spec_of("SLURM_TIME_FORMAT=%s sacct --noheader --parsable2 "
            "--delimiter=';' --format JobName,JobID",
            &sp);
    assert_string_equal(names(&sp), "JOBNAME JOBID");
    assert_string_equal(sp.sep, ";");
    cmd_spec_release(&sp);

    /* fixed width: the widths are the columns */
    spec_of("sacct -n -o jobid%25,state%13", &sp);
    assert_null(sp.sep);
    assert_int_equal(sp.sliceable, 1);
    assert_int_equal(sp.cols[0].width, 25);
    assert_string_equal(sp.cols[0].after, " ");
    cmd_spec_release(&sp);

    /* no --format: sacct's default columns */
    spec_of("sacct -n", &sp);
    assert_string_equal(names(&sp),
                        "JOBID JOBNAME PARTITION ACCOUNT ALLOCCPUS STATE "
                        "EXITCODE");
    assert_int_equal(sp.cols[6].width, 8);
    cmd_spec_release(&sp);
}

static void test_squeue(void **state)
{
    struct cmd_spec sp;
    (void)state;
    spec_of("squeue -h -t R -O 'JobID,tres-alloc:30,UserName:|,State'", &sp);
    assert_int_equal(sp.tool, CMD_TOOL_SQUEUE);
    assert_string_equal(names(&sp), "JOBID TRES_ALLOC USER STATE");
    assert_int_equal(sp.cols[0].width, 20);
    assert_string_equal(sp.cols[0].after, "");
    assert_int_equal(sp.cols[1].width, 30);
    assert_int_equal(sp.cols[2].width, 0);
    assert_string_equal(sp.cols[2].after, "|");
    assert_int_equal(sp.sliceable, 1);
    assert_null(sp.sep);
    assert_string_equal(sp.state_filter, "R");
    assert_int_equal(sp.noheader, 1);
    cmd_spec_release(&sp);

    spec_of("squeue --noheader --states=PENDING,RUNNING -o '%i|%T|%b'", &sp);
    assert_string_equal(names(&sp), "JOBID STATE TRES_PER_NODE");
    assert_string_equal(sp.sep, "|");
    assert_null(sp.state_filter);
    cmd_spec_release(&sp);

    spec_of("squeue -ht pd -o \"%.18i %.10T %20V %M\"", &sp);
    assert_string_equal(names(&sp), "JOBID STATE SUBMIT_TIME TIME");
    assert_int_equal(sp.cols[1].width, 10);
    assert_int_equal(sp.sliceable, 1);
    assert_string_equal(sp.state_filter, "PD");
    cmd_spec_release(&sp);

    /* "%i %T": blank-separated natural widths cannot be sliced */
    spec_of("squeue -h -o '%i %T'", &sp);
    assert_int_equal(sp.sliceable, 0);
    assert_null(sp.sep);
    cmd_spec_release(&sp);

    /* the command inside a pipeline; default format */
    spec_of("ssh login1 -- true; squeue -h | tail -n1", &sp);
    assert_string_equal(names(&sp), "JOBID PARTITION NAME USER ST TIME NODES "
                                    "NODELIST(REASON)");
    cmd_spec_release(&sp);
}

static void test_sinfo_flux_nvsmi(void **state)
{
    struct cmd_spec sp;
    (void)state;
    spec_of("sinfo -ahNO nodehost,gres:21,gresused:23,statelong", &sp);
    assert_int_equal(sp.tool, CMD_TOOL_SINFO);
    assert_string_equal(names(&sp), "HOSTNAMES GRES GRES_USED STATE");
    assert_int_equal(sp.cols[1].width, 21);
    assert_int_equal(sp.noheader, 1);
    cmd_spec_release(&sp);

    spec_of("sinfo -h -N --format='%N,%G,%C'", &sp);
    assert_string_equal(names(&sp), "NODELIST GRES CPUS(A/I/O/T)");
    assert_string_equal(sp.sep, ",");
    cmd_spec_release(&sp);

    spec_of("flux resource list -n -o '{queue} {nodelist} {ngpus}'", &sp);
    assert_int_equal(sp.tool, CMD_TOOL_FLUX_RESOURCE);
    assert_string_equal(names(&sp), "QUEUE NODELIST NGPUS");
    assert_int_equal(sp.noheader, 1);
    cmd_spec_release(&sp);

    spec_of("flux jobs --no-header -a "
            "--format=$'{id.f58}\\x1f{state}\\x1f{?:queue}\\x1f{runtime!F:>8}'",
            &sp);
    assert_int_equal(sp.tool, CMD_TOOL_FLUX_JOBS);
    assert_string_equal(names(&sp), "JOBID STATE QUEUE RUNTIME");
    assert_string_equal(sp.sep, "\x1f");
    cmd_spec_release(&sp);

    spec_of("for i in 1 2; do nvidia-smi.exe -i 0 --format=csv,noheader "
            "--query-gpu=index,Memory.Total; done",
            &sp);
    assert_int_equal(sp.tool, CMD_TOOL_NVIDIA_SMI);
    assert_string_equal(names(&sp), "index Memory.Total");
    assert_int_equal(sp.noheader, 1);
    cmd_spec_release(&sp);

    spec_of("hostname", &sp);
    assert_int_equal(sp.tool, CMD_TOOL_NONE);
    assert_int_equal(sp.ncols, 0);
    cmd_spec_release(&sp);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_split),
        cmocka_unit_test(test_sacct),
        cmocka_unit_test(test_squeue),
        cmocka_unit_test(test_sinfo_flux_nvsmi),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
