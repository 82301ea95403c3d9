/*
 * test_sched_queue.c - the `queue` op of the scheduler vtable over the
 * fake transport: the exact squeue / flux argv, the parsed rows, errors,
 * and mock's queue from its own records.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "libsched/parse_slurm.h"
#include "libsched/sched.h"
#include "libtransport/transport.h"
#include "libutil/xalloc.h"

/* A record of SLURM_SQUEUE_SAFE_FORMAT: no name, closed by the id. */
#define SAFE(id, st, user, reason, nodes)                                      \
    "\036" id "\037" st "\037cpu\037" user "\037" reason "\037" nodes          \
    "\037" id "\n"
/* the globs of the two listings (fnmatch over the joined argv) */
#define SAFE_GLOB "squeue -h*-o \036%i\037%T*"
#define NAMES_GLOB "squeue -h*-o \036%i\037%j*"

static void test_slurm_queue(void **state)
{
    struct transport *t = transport_fake_new();
    struct sched *s;
    struct sched_queue q;
    exa_error_t err = EXA_ERROR_INIT;
    (void)state;
    /* the rows, then the names: job 43's holds '|' and ' ' */
    transport_fake_add(
        t, SAFE_GLOB,
        "\03641\037RUNNING\037gpu\037alice\037None\037n[1-2]"
        "\03741\n" SAFE("42_3", "PENDING", "bob", "Resources", "")
            SAFE("43", "PENDING", "eve", "Priority", ""),
        "", 0, 0, 0);
    transport_fake_add(t, NAMES_GLOB,
                       "\03641\037train-a\03741\n"
                       "\03642_3\037exa-abc\03742_3\n"
                       "\03643\037a|b c\03743\n",
                       "", 0, 0, 0);
    s = sched_new("slurm", t, &err);
    assert_non_null(s);
    assert_int_equal(sched_queue(s, &q, &err), 0);
    assert_int_equal(transport_fake_ncalls(t), 2);
    assert_string_equal(transport_fake_call(t, 0),
                        "squeue -h -o " SLURM_SQUEUE_SAFE_FORMAT);
    assert_string_equal(transport_fake_call(t, 1),
                        "squeue -h -o " SLURM_SQUEUE_NAMES_FORMAT);
    assert_int_equal(q.n, 3);
    assert_int_equal(q.refused, 0);
    assert_string_equal(q.v[2].id, "43");
    assert_string_equal(q.v[2].name, "a|b c");
    assert_string_equal(q.v[2].user, "eve");
    assert_string_equal(q.v[0].id, "41");
    assert_string_equal(q.v[0].name, "train-a");
    assert_string_equal(q.v[0].user, "alice");
    assert_string_equal(q.v[0].state, "RUNNING");
    assert_string_equal(q.v[0].raw_state, "RUNNING");
    assert_string_equal(q.v[0].partition, "gpu");
    assert_int_equal(q.v[0].nodes, 2);
    assert_string_equal(q.v[1].id, "42_3");
    assert_string_equal(q.v[1].name, "exa-abc");
    assert_string_equal(q.v[1].user, "bob");
    assert_string_equal(q.v[1].state, "PENDING");
    assert_string_equal(q.v[1].partition, "cpu");
    assert_null(q.v[0].reason); /* squeue's "None" */
    assert_string_equal(q.v[1].reason, "Resources");
    sched_queue_release(&q);
    assert_int_equal(q.n, 0);
    sched_free(s);
    transport_close(t);
}

/* The own queue: Slurm's two listings with --me, Flux's flux jobs without
 * -A (the provisioner acts on it). */
static void test_queue_own(void **state)
{
    struct transport *t = transport_fake_new();
    struct sched *s;
    struct sched_queue q;
    exa_error_t err = EXA_ERROR_INIT;
    (void)state;
    transport_fake_add(t, SAFE_GLOB,
                       SAFE("51", "PENDING", "exa", "Priority", ""), "", 0, 0,
                       0);
    transport_fake_add(t, NAMES_GLOB, "\03651\037exa-e1-w1\03751\n", "", 0, 0,
                       0);
    s = sched_new("slurm", t, &err);
    assert_non_null(s);
    assert_int_equal(sched_queue_own(s, &q, &err), 0);
    assert_string_equal(transport_fake_call(t, 0),
                        "squeue -h --me -o " SLURM_SQUEUE_SAFE_FORMAT);
    assert_string_equal(transport_fake_call(t, 1),
                        "squeue -h --me -o " SLURM_SQUEUE_NAMES_FORMAT);
    assert_int_equal(q.n, 1);
    assert_string_equal(q.v[0].name, "exa-e1-w1");
    sched_queue_release(&q);
    sched_free(s);
    transport_close(t);

    /* flux jobs --json: the whole name (the default table cuts it to ten
     * columns, "exa-012345+", and the provisioner would never find it) */
    t = transport_fake_new();
    transport_fake_add(t, "flux jobs --json --count=0",
                       "{\"jobs\": [{\"id\": 106065559552, \"name\": "
                       "\"exa-0123456789ab-w000001\", \"state\": \"SCHED\", "
                       "\"username\": \"exa\", \"urgency\": 0, "
                       "\"priority\": 0, \"nnodes\": 1, "
                       "\"jobid\": \"\u01923nbeib1\"}]}\n",
                       "", 0, 0, 0);
    s = sched_new("flux", t, &err);
    assert_non_null(s);
    assert_int_equal(sched_queue_own(s, &q, &err), 0);
    assert_string_equal(transport_fake_call(t, 0),
                        "flux jobs --json --count=0");
    assert_int_equal(q.n, 1);
    assert_string_equal(q.v[0].id, "\xc6\x92"
                                   "3nbeib1");
    assert_string_equal(q.v[0].name, "exa-0123456789ab-w000001");
    assert_string_equal(q.v[0].state, "PENDING");
    assert_string_equal(q.v[0].reason, "held"); /* urgency 0 */
    sched_queue_release(&q);
    sched_free(s);
    transport_close(t);
}

/* Names that cut their record and make up others (Slurm takes 0x1E and
 * 0x1F in a name): rows come only from the listing without names, so
 * none is made up; a name record claiming a listed job's id leaves that
 * job with no name (never the made-up one); the mid-record forgery of a
 * job that is not listed adds nothing. Job 7 is listed with its name. */
static void test_slurm_queue_made_up(void **state)
{
    struct transport *t = transport_fake_new();
    struct sched *s;
    struct sched_queue q;
    exa_error_t err = EXA_ERROR_INIT;
    (void)state;
    transport_fake_add(t, SAFE_GLOB,
                       SAFE("7", "PENDING", "vic", "Priority", "")
                           SAFE("8", "PENDING", "mal", "Priority", "")
                               SAFE("9", "PENDING", "ann", "Priority", ""),
                       "", 0, 0, 0);
    transport_fake_add(
        t, NAMES_GLOB,
        "\0367\037victim\0377\n"
        /* job 8's name: "x", a record for 99999 (no such job) and one
         * for job 9, then junk; its own record closes the junk */
        "\0368\037x\03699999\037exa-e1-w1\03799999\n"
        "\0369\037exa-e1-w2\0379\n\036junk\0378\n"
        "\0369\037analysis\0379\n",
        "", 0, 0, 0);
    s = sched_new("slurm", t, &err);
    assert_non_null(s);
    assert_int_equal(sched_queue(s, &q, &err), 0);
    assert_int_equal(q.n, 3);
    assert_string_equal(q.v[0].id, "7");
    assert_string_equal(q.v[0].name, "victim");
    assert_string_equal(q.v[1].id, "8");
    assert_null(q.v[1].name);
    assert_string_equal(q.v[2].id, "9");
    assert_null(q.v[2].name); /* claimed twice: neither is believed */
    /* job 8's first record ("8", "x": one 0x1F) and its last ("junk",
     * "8": two ids that differ), and job 9's two records */
    assert_int_equal(q.refused, 4);
    for (size_t i = 0; i < q.n; i++)
        assert_true(strcmp(q.v[i].id, "99999"));
    sched_queue_release(&q);
    assert_int_equal(q.refused, 0);
    sched_free(s);
    transport_close(t);
}

/* The first listing holds no user's text, so a record of it that is not
 * whole (a field count, a closing id not its own) fails the whole call:
 * nothing is listed from it (the provisioner then changes nothing). */
static void test_slurm_queue_not_whole(void **state)
{
    struct transport *t = transport_fake_new();
    struct sched *s;
    struct sched_queue q;
    exa_error_t err = EXA_ERROR_INIT;
    (void)state;
    transport_fake_add(t, SAFE_GLOB,
                       SAFE("7", "PENDING", "vic", "Priority",
                            "") "\0368\037PENDING\037cpu\037mal\037Priority\037"
                                "\0379\n",
                       "", 0, 0, 1);
    transport_fake_add(t, SAFE_GLOB, "\0367\037PENDING\037cpu\n", "", 0, 0, 1);
    s = sched_new("slurm", t, &err);
    assert_non_null(s);
    assert_int_equal(sched_queue(s, &q, &err), -1);
    assert_int_equal(err.code, EXA_ESCHED);
    assert_non_null(strstr(err.text, "id_mismatch of record 2"));
    assert_int_equal(q.n, 0);
    err = (exa_error_t)EXA_ERROR_INIT;
    assert_int_equal(sched_queue(s, &q, &err), -1);
    assert_non_null(strstr(err.text, "field_count_mismatch of record 1"));
    assert_int_equal(transport_fake_count(t, NAMES_GLOB), 0);
    sched_free(s);
    transport_close(t);
}

static void test_slurm_queue_errors(void **state)
{
    struct transport *t = transport_fake_new();
    struct sched *s;
    struct sched_queue q;
    exa_error_t err = EXA_ERROR_INIT;
    (void)state;
    /* an empty queue is no error */
    transport_fake_add(t, "squeue *", "", "", 0, 0, 1);
    transport_fake_add(t, "squeue *", "",
                       "squeue: error: Unable to contact slurm controller\n", 1,
                       0, 1);
    s = sched_new("slurm", t, &err);
    assert_int_equal(sched_queue(s, &q, &err), 0);
    assert_int_equal(q.n, 0);
    sched_queue_release(&q);
    assert_int_equal(sched_queue(s, &q, &err), -1);
    assert_int_equal(err.code, EXA_ESCHED);
    assert_non_null(strstr(err.text, "Unable to contact slurm controller"));
    assert_int_equal(q.n, 0);
    transport_fake_fail_nth(t, 3);
    err = (exa_error_t)EXA_ERROR_INIT;
    assert_int_equal(sched_queue(s, &q, &err), -1);
    assert_int_equal(err.code, EXA_ETRANSPORT);
    sched_free(s);
    transport_close(t);
}

/* flux jobs -A --json --count=0: names with blanks and '|' as they are,
 * the states and the reasons of flux-jobs' INFO column (contextual_info)
 * from the JSON fields; output that is not JSON fails the call. */
static void test_flux_queue(void **state)
{
    struct transport *t = transport_fake_new();
    struct sched *s;
    struct sched_queue q;
    exa_error_t err = EXA_ERROR_INIT;
    (void)state;
    transport_fake_add(
        t, "flux jobs -A --json --count=0",
        "{\"jobs\": ["
        "{\"id\": 1, \"jobid\": \"f2TR77Ao1\", \"name\": \"two words "
        "here\", \"username\": \"alice\", \"state\": \"RUN\", "
        "\"nnodes\": 2, \"nodelist\": \"node[0-1]\", \"urgency\": 16, "
        "\"priority\": 16}, "
        "{\"id\": 2, \"jobid\": \"f3aB4cDe5\", \"name\": \"pipe|bar\", "
        "\"username\": \"bob\", \"state\": \"SCHED\", \"queue\": "
        "\"batch\", \"urgency\": 16, \"priority\": 16}, "
        "{\"id\": 3, \"jobid\": \"f3aB4cDe6\", \"name\": \"dep\", "
        "\"username\": \"bob\", \"state\": \"DEPEND\", "
        "\"dependencies\": [\"afterok:f2TR77Ao1\"]}, "
        "{\"id\": 4, \"jobid\": \"f3aB4cDe7\", \"name\": \"prio\", "
        "\"username\": \"bob\", \"state\": \"SCHED\", \"urgency\": 16, "
        "\"priority\": 0}, "
        "{\"id\": 5, \"jobid\": \"f3aB4cDe8\", \"name\": \"new\", "
        "\"username\": \"bob\", \"state\": \"PRIORITY\"}"
        "]}\n",
        "", 0, 0, 0);
    s = sched_new("flux", t, &err);
    assert_non_null(s);
    assert_int_equal(sched_queue(s, &q, &err), 0);
    assert_string_equal(transport_fake_call(t, 0),
                        "flux jobs -A --json --count=0");
    assert_int_equal(q.n, 5);
    assert_string_equal(q.v[0].id, "f2TR77Ao1");
    assert_string_equal(q.v[0].user, "alice");
    assert_string_equal(q.v[0].name, "two words here");
    assert_string_equal(q.v[0].state, "RUNNING");
    assert_string_equal(q.v[0].raw_state, "RUN");
    assert_int_equal(q.v[0].nodes, 2);
    assert_null(q.v[0].reason);
    assert_null(q.v[0].partition);
    assert_string_equal(q.v[1].name, "pipe|bar");
    assert_string_equal(q.v[1].state, "PENDING");
    assert_string_equal(q.v[1].partition, "batch");
    assert_null(q.v[1].reason); /* waiting, held by nothing */
    assert_int_equal(q.v[1].nodes, -1);
    assert_string_equal(q.v[2].reason, "depends:afterok:f2TR77Ao1");
    assert_string_equal(q.v[3].reason, "priority-hold");
    assert_string_equal(q.v[4].reason, "priority-wait");
    sched_queue_release(&q);
    sched_free(s);
    transport_close(t);

    /* the default table (a flux that ignored --json): refused, not read */
    t = transport_fake_new();
    transport_fake_add(t, "flux jobs -A --json --count=0",
                       "       JOBID USER     NAME       ST NTASKS NNODES     "
                       "TIME INFO\n"
                       "    f2TR77Ao1 alice    train       R      1      1   "
                       "1.234s node0\n",
                       "", 0, 0, 0);
    s = sched_new("flux", t, &err);
    assert_int_equal(sched_queue(s, &q, &err), -1);
    assert_int_equal(err.code, EXA_ESCHED);
    assert_non_null(strstr(err.text, "flux jobs --json printed no JSON"));
    assert_int_equal(q.n, 0);
    sched_queue_release(&q);
    sched_free(s);
    transport_close(t);
}

static void test_mock_queue(void **state)
{
    char dir[] = "/tmp/exa-test-queue-XXXXXX";
    struct transport *t = transport_fake_new();
    struct sched *s;
    struct sched_queue q;
    exa_error_t err = EXA_ERROR_INIT;
    char *p;
    FILE *fp;
    (void)state;
    assert_non_null(mkdtemp(dir));
    s = sched_new("mock", t, &err);
    s->mock_dir = xstrdup(dir);
    p = xstrfmt("%s/mock-b.json", dir);
    fp = fopen(p, "w");
    fputs("{\"id\":\"mock-b\",\"state\":\"PENDING\"}", fp);
    fclose(fp);
    free(p);
    p = xstrfmt("%s/mock-a.json", dir);
    fp = fopen(p, "w");
    fputs("{\"id\":\"mock-a\",\"state\":\"COMPLETED\"}", fp);
    fclose(fp);
    free(p);
    assert_int_equal(sched_queue(s, &q, &err), 0);
    assert_int_equal(transport_fake_ncalls(t), 0);
    assert_int_equal(q.n, 1);
    assert_string_equal(q.v[0].id, "mock-b");
    assert_string_equal(q.v[0].state, "PENDING");
    sched_queue_release(&q);
    sched_free(s);
    transport_close(t);
    p = xstrfmt("rm -rf '%s'", dir);
    assert_int_equal(system(p), 0);
    free(p);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_slurm_queue),
        cmocka_unit_test(test_queue_own),
        cmocka_unit_test(test_slurm_queue_made_up),
        cmocka_unit_test(test_slurm_queue_not_whole),
        cmocka_unit_test(test_slurm_queue_errors),
        cmocka_unit_test(test_flux_queue),
        cmocka_unit_test(test_mock_queue),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
