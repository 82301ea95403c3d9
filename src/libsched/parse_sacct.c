/*
 * parse_sacct.c - sacct output: sacct's field names and the field lists
 * of well-known headerless formats, handed to the shared table walk
 * (parse_slurm_table.c), which sends JobIDs with a '.' to jobs->steps.
 * Source: sacct(1) "Job Accounting Fields", --parsable2, --delimiter.
 */
#include "libsched/parse_slurm.h"

#include "libsched/parse_slurm_int.h"

static const struct slurm_name_role sacct_names[] = {
    {"JOBID", R_ID},
    {"JOBIDRAW", R_ID_RAW},
    {"JOBNAME", R_NAME},
    {"STATE", R_STATE},
    {"EXITCODE", R_EXIT},
    {"START", R_START},
    {"END", R_END},
    {"SUBMIT", R_SUBMIT},
    {"ELAPSED", R_ELAPSED},
    {"ELAPSEDRAW", R_ELAPSED_RAW},
    {"ALLOCTRES", R_TRES_ALLOC},
    {"NODELIST", R_NODELIST},
    {"PARTITION", R_PARTITION},
    {"ACCOUNT", R_ACCOUNT},
    {"USER", R_USER},
    {"NCPUS", R_NCPUS},
    {"ALLOCCPUS", R_NCPUS},
    {"TIMELIMIT", R_TIMELIMIT},
    {"TIMELIMITRAW", R_TIMELIMIT_RAW},
    {"TOTALCPU", R_TOTALCPU},
    {"MAXRSS", R_MAXRSS},
    {"CLUSTER", R_CLUSTER},
    {"GROUP", R_IGNORE},
    {"CPUTIMERAW", R_IGNORE},
    {"NNODES", R_NNODES},
    {"MAXVMSIZE", R_IGNORE},
    {"REQCPUS", R_IGNORE},
    {"REQMEM", R_IGNORE},
    {"REQNODES", R_IGNORE},
    {"CONSTRAINTS", R_IGNORE},
    {"ELIGIBLE", R_IGNORE},
    {"SUSPENDED", R_IGNORE},
    {"DERIVEDEXITCODE", R_IGNORE},
    {"ALLOCNODES", R_IGNORE},
    {"MAXDISKREAD", R_IGNORE},
    {"MAXDISKWRITE", R_IGNORE},
    {"MAXPAGES", R_IGNORE},
    {"CPUTIME", R_IGNORE},
    {"USERCPU", R_IGNORE},
    {"SYSTEMCPU", R_IGNORE},
    {"WORKDIR", R_IGNORE},
    {"COMMENT", R_IGNORE},
    {"ADMINCOMMENT", R_IGNORE},
    {"QOS", R_IGNORE},
    {"REQTRES", R_IGNORE},
    {"RESERVATION", R_IGNORE},
    {"UID", R_IGNORE},
    {"GID", R_IGNORE},
    {"NTASKS", R_IGNORE},
    {"AVECPU", R_IGNORE},
    {"MAXRSSNODE", R_IGNORE},
    {"AVERSS", R_IGNORE},
    {"REQGRES", R_IGNORE},
    {"ALLOCGRES", R_IGNORE},
    {"PRIORITY", R_IGNORE},
    {"FLAGS", R_IGNORE},
    {"STDOUT", R_IGNORE},
    {"STDERR", R_IGNORE},
    {"CPUTIMERAW", R_IGNORE},
    {"CONSUMEDENERGY", R_IGNORE},
    {"ELAPSEDRAW", R_ELAPSED_RAW},
    {"RESERVED", R_IGNORE},
    {"PLANNED", R_IGNORE},
    {"WCKEY", R_IGNORE},
    {"ALLOCGRES", R_TRES_PER_JOB},
    {"REASON", R_REASON},
    {"JOBIDRAW", R_ID_RAW},
    {"NODELIST", R_NODELIST},
    {"TRESUSAGEINTOT", R_IGNORE},
    {"TRESUSAGEOUTTOT", R_IGNORE},
    {"PLANNEDCPU", R_IGNORE},
    {"PLANNEDCPURAW", R_IGNORE},
    {"ELIGIBLE", R_IGNORE},
    {"ASSOCID", R_IGNORE},
    {"BLOCKID", R_IGNORE},
    {"MAXRSSTASK", R_IGNORE},
    {"MAXVMSIZENODE", R_IGNORE},
    {"AVEVMSIZE", R_IGNORE},
    {"NTASKS", R_IGNORE},
    {"LAYOUT", R_IGNORE},
    {"SUBMITLINE", R_IGNORE},
    {"CONTAINER", R_IGNORE},
    {NULL, R_IGNORE},
};

/* sacct: exa's own field lists, then lists used by common tools. */
static const struct slurm_layout sacct_layouts[] = {
    {0, "JOBID JOBIDRAW STATE EXITCODE START END SUBMIT ELAPSEDRAW "
        "ALLOCTRES NODELIST PARTITION ACCOUNT USER JOBNAME NCPUS "
        "TIMELIMITRAW"}, /* SLURM_SACCT_FIELDS with --noheader */
    {0, "JOBID STATE EXITCODE START END ALLOCTRES ELAPSEDRAW"},
    {0, "JOBID STATE EXITCODE START END ALLOCTRES ELAPSEDRAW TIMELIMIT"},
    {0, "JOBID STATE EXITCODE START END ALLOCTRES ELAPSEDRAW NODELIST"},
    {0, "JOBID STATE EXITCODE ALLOCTRES CLUSTER"},
    {0, "JOBID JOBNAME STATE EXITCODE ELAPSEDRAW ALLOCTRES"},
    {0, "JOBID STATE EXITCODE DERIVEDEXITCODE"},
    {0, "STATE EXITCODE START END"},
    {0, "JOBID STATE EXITCODE"},
    {0, "JOBID STATE"},
    {0, "STATE"},
    {0, "JOBID JOBNAME USER GROUP START END ELAPSED CPUTIMERAW PARTITION "
        "NCPUS NNODES NODELIST MAXRSS MAXVMSIZE STATE"},
    {0, "STATE JOBID REQCPUS REQMEM REQNODES CONSTRAINTS SUBMIT ELIGIBLE "
        "START ELAPSED SUSPENDED END EXITCODE DERIVEDEXITCODE ALLOCNODES "
        "NCPUS MAXDISKREAD MAXDISKWRITE MAXPAGES MAXRSS MAXVMSIZE CPUTIME "
        "USERCPU SYSTEMCPU TOTALCPU PARTITION"},
    {0, "STATE JOBID REQCPUS REQMEM REQNODES CONSTRAINTS SUBMIT ELIGIBLE "
        "START ELAPSED SUSPENDED END EXITCODE DERIVEDEXITCODE ALLOCNODES "
        "NCPUS MAXDISKREAD MAXDISKWRITE MAXPAGES MAXRSS MAXVMSIZE CPUTIME "
        "USERCPU SYSTEMCPU TOTALCPU"},
    {0, "JOBID USER GROUP PARTITION START END STATE REQMEM MAXRSS NCPUS "
        "TOTALCPU NNODES WORKDIR ELAPSED EXITCODE COMMENT CLUSTER NODELIST "
        "TIMELIMIT TIMELIMITRAW JOBIDRAW JOBNAME"},
    {0, "JOBID JOBNAME PARTITION ACCOUNT ALLOCCPUS STATE EXITCODE"},
    {0, "JOBID JOBNAME STATE"},
    {0, "JOBID USER ACCOUNT ALLOCCPUS ELAPSED TOTALCPU CPUTIME MAXRSS "
        "REQMEM"},
    {0, NULL},
};

int sacct_parse(const char *buf, size_t len, struct slurm_jobs *jobs,
                const char **kind, exa_error_t *err)
{
    return sacct_parse_cmd(buf, len, NULL, jobs, kind, err);
}

int sacct_parse_table(const struct slurm_text *in, const struct cmd_spec *spec,
                      struct slurm_jobs *jobs, size_t host_budget,
                      struct slurm_parse_info *info, exa_error_t *err)
{
    return slurm_parse_table_ex(in, jobs, sacct_names, sacct_layouts, 1, spec,
                                host_budget, info, err);
}

int sacct_parse_cmd(const char *buf, size_t len, const struct cmd_spec *spec,
                    struct slurm_jobs *jobs, const char **kind,
                    exa_error_t *err)
{
    struct slurm_text in = {NULL, 0, buf, len, 0};
    int rc;
    *kind = "parse_error";
    if (spec && spec->tool != CMD_TOOL_SACCT)
        spec = NULL;
    rc = sacct_parse_table(&in, spec, jobs, SLURM_HOST_BUDGET, NULL, err);
    if (rc == -2)
        *kind = "slurm_error";
    return rc < 0 ? -1 : 0;
}
