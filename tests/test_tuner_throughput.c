/* test_tuner_throughput.c: the rules that set the tuner's evaluations per second: which
 * compile a free thread takes, how many threads there are, how many speculative compiles
 * leave room for the prefetches, which searches may evaluate out of proposal order, and
 * that an exhaustive search so reordered (with prefetched cubins awaited in turn) still
 * evaluates each configuration once, verified, on one GPU and on two. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "harness.h"
#include "strategy.h"
#include "th_sql.h"
#include "tn.h"
#include "tune_core.h"

/* Urgent compiles (the window's) first, then normal ones (speculative), then idle-time ones
 * (prefetches) while fewer than their cap run; nothing queued: the thread waits. */
TEST(tuner_pool_pick_rule)
{
    for (int normal = 0; normal <= 1; normal++)
        for (int idle = 0; idle <= 1; idle++)
            CHECK_EQ(tn_pool_pick(1, normal, idle, 0, 4), 1);
    CHECK_EQ(tn_pool_pick(0, 1, 1, 0, 4), 0);
    CHECK_EQ(tn_pool_pick(0, 0, 1, 0, 4), -1);
    CHECK_EQ(tn_pool_pick(0, 0, 1, 3, 4), -1);
    CHECK_EQ(tn_pool_pick(0, 0, 1, 4, 4), 2);        /* the idle cap reached */
    CHECK_EQ(tn_pool_pick(0, 0, 0, 0, 4), 2);
}

/* Prefetches run on all but a quarter of the threads (at least one kept for urgent compiles). */
TEST(tuner_prefetches_keep_a_quarter_of_the_threads)
{
    CHECK_EQ(tn_pool_idle_cap(1), 1);
    CHECK_EQ(tn_pool_idle_cap(2), 1);
    CHECK_EQ(tn_pool_idle_cap(4), 3);
    CHECK_EQ(tn_pool_idle_cap(7), 6);
    CHECK_EQ(tn_pool_idle_cap(16), 12);
    CHECK_EQ(tn_pool_idle_cap(32), 24);
    for (int n = 2; n <= 256; n++)
        CHECK(tn_pool_idle_cap(n) >= 1 && tn_pool_idle_cap(n) < n);
}

/* The compile threads come from the CPUs this process may use: the affinity mask where it
 * is known and below the online count (a container, taskset), else the online CPUs; 1..256. */
TEST(tuner_compile_threads_from_the_cores)
{
    CHECK_EQ(tn_cpu_count_of(32, 0), 32);
    CHECK_EQ(tn_cpu_count_of(32, 32), 32);
    CHECK_EQ(tn_cpu_count_of(32, 16), 16);
    CHECK_EQ(tn_cpu_count_of(16, 32), 16);
    CHECK_EQ(tn_cpu_count_of(-1, 8), 8);
    CHECK_EQ(tn_cpu_count_of(0, 0), 1);
    CHECK_EQ(tn_cpu_count_of(1000, 0), 256);
    long online = sysconf(_SC_NPROCESSORS_ONLN);
    int n = tn_cpu_count();
    CHECK(n >= 1 && n <= 256);
    CHECK(online < 1 || n <= online);
}

/* Speculative compiles fill the threads the window's compiles leave, less a quarter of
 * them while prefetches wait (no more than the prefetches pending, none below 4 threads),
 * never below 0 nor past TN_SPEC_MAX active. */
TEST(tuner_speculation_leaves_the_prefetches_a_share)
{
    CHECK_EQ(tn_spec_room(16, 0, 0, 0), 16);
    CHECK_EQ(tn_spec_room(16, 10, 2, 0), 4);
    CHECK_EQ(tn_spec_room(16, 0, 0, 900), 12);
    CHECK_EQ(tn_spec_room(16, 10, 2, 900), 0);
    CHECK_EQ(tn_spec_room(16, 0, 0, 2), 14);          /* 2 pending: 2 threads kept */
    CHECK_EQ(tn_spec_room(32, 0, 0, 900), 24);
    CHECK_EQ(tn_spec_room(2, 0, 0, 900), 2);          /* too few threads to keep one */
    CHECK_EQ(tn_spec_room(16, 20, 0, 0), 0);
    CHECK_EQ(tn_spec_room(128, 0, 0, 0), TN_SPEC_MAX);
    CHECK_EQ(tn_spec_room(128, 0, TN_SPEC_MAX - 3, 0), 3);
}

/* Out of proposal order: under a time budget, or where the proposals do not depend on the
 * results (exhaustive, random); a model-guided search without a budget keeps the order. */
TEST(tuner_reorder_only_where_the_proposals_do_not_change)
{
    CHECK_EQ(tn_may_reorder(0, &tn_strategy_exhaustive), 1);
    CHECK_EQ(tn_may_reorder(0, &tn_strategy_random), 1);
    CHECK_EQ(tn_may_reorder(0, &tn_strategy_surrogate), 0);
    CHECK_EQ(tn_may_reorder(0, &tn_strategy_anneal), 0);
    const tn_strategy *const *all = tn_strategy_all();
    for (int i = 0; all[i]; i++)
        CHECK_EQ(tn_may_reorder(2.0, all[i]), 1);
}

/* A run of two exhaustive families: test_split's compiles are prefetched while test_wide is
 * searched (taken from the database, or awaited in their turn if still running), and both
 * searches may evaluate ready items first. Every configuration of every problem is evaluated
 * exactly once (the summaries' counts, the stored rows, one row per configuration), each
 * verified (timed in full or abandoned as slow), on one GPU and on two of one model. */
TEST(tuner_exhaustive_reordered_evaluates_each_configuration_once)
{
    static const char *devices[] = {"0", "all"};
    static const struct { const char *kernel, *size; long long n; } probs[] = {
        {"test_wide", "1000003", 96}, {"test_wide", "250007", 96}, {"test_split", "1000003", 8},
    };
    for (int d = 0; d < 2 && !th_failed(); d++) {
        char dbpath[4300], cmd[16384], *out = NULL;
        snprintf(dbpath, sizeof dbpath, "%s/reorder%d.db", th_tmpdir(), d);
        snprintf(cmd, sizeof cmd,
                 "AUTOTUNE_WORKER='%s/autotune-test __fake_worker' AUTOTUNE_FAKE_DEVICES=2 "
                 "AUTOTUNE_FAKE=delay=5 %s/autotune-test --device %s --kernel test_wide,test_split "
                 "--db %s --seed 3 --jobs 2 --quiet --keep-all-cubins",
                 th_build_dir(), th_build_dir(), devices[d], dbpath);
        int rc = th_run(cmd, &out);
        CHECK_MSG(rc == 0, "--device %s: exit %d: %s", devices[d], rc, out ? out : "");
        for (int p = 0; p < 3; p++) {
            char head[128], sql[1024];
            snprintf(head, sizeof head, "%s %s: ", probs[p].kernel, probs[p].size);
            long long evaluated = -1, failed = -1;
            /* "N evaluated, F failed" or, split, "N evaluated (GPU 0: a, GPU 1: b), F failed" */
            for (const char *s = out; s && (s = strstr(s, head)) != NULL; s++) {
                const char *f = strstr(s, " failed,"), *nl = strchr(s, '\n');
                if (sscanf(s + strlen(head), "%lld evaluated", &evaluated) != 1 || !f ||
                    (nl && f > nl))
                    continue;
                while (f > s && f[-1] >= '0' && f[-1] <= '9')
                    f--;
                failed = atoll(f);
                break;
            }
            CHECK_MSG(evaluated == probs[p].n && failed == 0, "--device %s %s: %lld evaluated, "
                      "%lld failed: %s", devices[d], head, evaluated, failed, out ? out : "");
            snprintf(sql, sizeof sql,
                     "SELECT count(*) FROM result r JOIN kernel k ON k.id = r.kernel_id JOIN "
                     "problem p ON p.id = r.problem_id WHERE k.name = '%s' AND p.d0 = %s"
                     " AND r.status IN ('ok', 'abandoned') AND r.rel_error >= 0", probs[p].kernel, probs[p].size);
            long long verified = th_sql_int(dbpath, sql);
            CHECK_MSG(verified == probs[p].n, "--device %s %s: %lld verified rows", devices[d],
                      head, verified);
        }
        CHECK_EQ(th_sql_int(dbpath, "SELECT count(*) FROM (SELECT 1 FROM result GROUP BY "
                                    "kernel_id, problem_id, config HAVING count(*) > 1)"), 0);
        free(out);
    }
}
