/* test_compile_pool.c: the tuner's compile pool: a budget never waits for a compile, a detached
 * job is never touched again, compiles run below the workers' priority. */
#include <math.h>
#include <signal.h>
#include <dirent.h>
#include <sys/resource.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "db.h"
#include "harness.h"
#include "strategy.h"
#include "th_sql.h"
#include "tn.h"

/* ---- the compile pool lets go of a running compile ---- */

/* A job of the sum family's default configuration for sm_90. */
static tn_job pool_job(void)
{
    tn_job job;
    memset(&job, 0, sizeof job);
    job.fam = tpl_family_at(0);
    for (int i = 0; i < tpl_family_count(); i++)
        if (strcmp(tpl_family_at(i)->name, "sum") == 0)
            job.fam = tpl_family_at(i);
    char err[256];
    if (tpl_config_parse(job.fam, job.fam->default_config, job.cfg, err, sizeof err) != AT_OK)
        th_fail(__FILE__, __LINE__, "the sum default does not parse: %s", err);
    snprintf(job.arch, sizeof job.arch, "sm_90");
    return job;
}

/* A time budget is never overrun by waiting for NVRTC: test_slowcc's default compiles fast and each
 * searched configuration takes NVRTC seconds. The rule is checked, not a count (a faster machine
 * compiles and evaluates more searched ones within the budget, a loaded one none): the problem ends
 * within a fixed margin of its deadline, where the deadline may only be stretched by the wait for the
 * first result (the default's compile, whose duration the row records); every evaluation is in the
 * database and the default is among them; and a searched compile still running at the deadline is
 * let go, not waited for: it finishes after the problem and its cubin is stored by the end of the
 * run (unless all five were evaluated). Waiting for one searched compile would stretch the problem
 * by seconds, past the margin. On one GPU and on two of one model. */
TEST(tuner_budget_never_waits_for_a_compile)
{
    static const char *devices[] = {"0", "all"};
    const double budget_s = 1.0, margin_s = 1.0;
    for (int d = 0; d < 2 && !th_failed(); d++) {
        char dbpath[4300], cmd[16384], *out = NULL;
        snprintf(dbpath, sizeof dbpath, "%s/slowcc%d.db", th_tmpdir(), d);
        snprintf(cmd, sizeof cmd,
                 "AUTOTUNE_WORKER='%s/autotune-test __fake_worker' AUTOTUNE_FAKE_DEVICES=2 "
                 "%s/autotune-test --device %s --kernel test_slowcc --db %s --budget 1s "
                 "--strategy random --seed 3 --jobs 2 --keep-all-cubins",
                 th_build_dir(), th_build_dir(), devices[d], dbpath);
        int rc = th_run(cmd, &out);
        CHECK_MSG(rc == 0, "--device %s: exit %d: %s", devices[d], rc, out ? out : "");
        long long evaluated = -1;
        double seconds = -1;
        const char *line = out ? strstr(out, "test_slowcc 1000003: ") : NULL;
        int matched = 0;
        while (line && (matched = 0, sscanf(line, "test_slowcc 1000003: %lld evaluated%n",
                                            &evaluated, &matched)) >= 0 && !matched)
            line = strstr(line + 1, "test_slowcc 1000003: ");
        const char *secs = line ? strstr(line, "cubins reused, ") : NULL;
        CHECK_MSG(line && secs && sscanf(secs, "cubins reused, %lf s", &seconds) == 1,
                  "--device %s: no problem summary: %s", devices[d], out ? out : "");
        /* every evaluation is stored, the default's among them */
        long long rows = th_sql_int(dbpath, "SELECT count(*) FROM result r JOIN kernel k ON "
                                            "k.id = r.kernel_id WHERE k.name = 'test_slowcc'");
        CHECK_MSG(evaluated >= 1 && rows == evaluated, "--device %s: %lld evaluated, %lld rows: "
                  "%s", devices[d], evaluated, rows, out ? out : "");
        CHECK_EQ(th_sql_int(dbpath, "SELECT count(*) FROM result WHERE config = "
                                    "'BLOCK=128,SLOW=0'"), 1);
        /* no wait past the deadline but the first result's */
        double default_compile_s =
            (double)th_sql_int(dbpath, "SELECT CAST(compile_ms AS INTEGER) FROM result WHERE "
                                       "config = 'BLOCK=128,SLOW=0'") / 1000.0;
        double allowed = (default_compile_s > budget_s ? default_compile_s : budget_s) + margin_s;
        CHECK_MSG(seconds >= 0 && seconds <= allowed,
                  "--device %s: the problem took %.1f s, its budget %.1f s, the default's "
                  "compile %.1f s: it waited past the deadline: %s", devices[d], seconds,
                  budget_s, default_compile_s, out ? out : "");
        free(out);
        /* a searched configuration left unevaluated had its compile let go, not cancelled:
         * a SLOW=1 cubin without a result row (none to check if all 5 were evaluated) */
        long long let_go = th_sql_int(dbpath,
            "SELECT count(*) FROM binary b WHERE b.config LIKE '%SLOW=1' AND NOT EXISTS "
            "(SELECT 1 FROM result r WHERE r.binary_key = b.key)");
        CHECK_MSG(evaluated == 5 || let_go >= 1, "--device %s: %lld evaluated, %lld let-go "
                  "cubins stored", devices[d], evaluated, let_go);
    }
}

TEST(tuner_pool_detach_never_touches_the_job_again)
{
    tn_pool *pool = tn_pool_create(1);
    CHECK(pool != NULL);
    if (!pool)
        return;
    /* one thread: the first job runs, the second waits in the queue */
    tn_job *running = malloc(sizeof *running), *queued = malloc(sizeof *queued);
    *queued = pool_job();
    int let_go = 1;
    for (int attempt = 0; attempt < 20 && let_go == 1; attempt++) {
        *running = pool_job();
        tn_pool_submit(pool, running);
        tn_pool_submit(pool, queued);
        CHECK(tn_pool_detach(pool, queued) == 1);    /* cancelled */
        struct timespec pause = {0, (attempt + 1) * 10 * 1000 * 1000};
        nanosleep(&pause, NULL);                       /* the thread takes the first */
        let_go = tn_pool_detach(pool, running);        /* 1: not taken yet, again */
    }
    CHECK_MSG(let_go != 1, "the only thread never took the first job");
    tn_job kept = *running;
    /* the pool must never write the let-go job again: poison it */
    memset(running, 0xA5, sizeof *running);
    unsigned char poison[sizeof *running];
    memcpy(poison, running, sizeof poison);
    tn_job *got = NULL;
    for (int i = 0; let_go == 2 && !got && i < 6000; i++) {   /* up to 60 s */
        got = tn_pool_take_detached(pool);
        if (!got) {
            struct timespec tick = {0, 10 * 1000 * 1000};
            nanosleep(&tick, NULL);
        }
    }
    if (let_go == 2) {
        CHECK_MSG(got != NULL, "the detached compile never came back");
        CHECK(memcmp(running, poison, sizeof poison) == 0);
        CHECK(got->done == 1 && got->status == AT_OK && got->cubin && got->cubin_size > 0);
        CHECK(got->fam == kept.fam && memcmp(got->cfg, kept.cfg, sizeof kept.cfg) == 0);
        free(got->cubin);
        free(got->log);
        free(got);
    } else {
        /* it had finished already: the results are the caller's */
        CHECK(kept.done == 1 && kept.cubin);
        free(kept.cubin);
        free(kept.log);
    }
    CHECK(tn_pool_take_detached(pool) == NULL);        /* a cancelled one never comes */
    free(running);
    free(queued);
    tn_pool_destroy(pool);
}

/* The number of this process's threads at niceness nice (Linux /proc). */
static int threads_at_nice(int nice)
{
    int count = 0;
    DIR *dir = opendir("/proc/self/task");
    for (struct dirent *e; dir && (e = readdir(dir)) != NULL;) {
        char path[300], line[1024];
        snprintf(path, sizeof path, "/proc/self/task/%.255s/stat", e->d_name);
        FILE *f = e->d_name[0] != '.' ? fopen(path, "r") : NULL;
        if (!f)
            continue;
        size_t n = fread(line, 1, sizeof line - 1, f);
        fclose(f);
        line[n] = '\0';
        const char *after = strrchr(line, ')');      /* the name may hold spaces */
        int field = 2, value = 0;
        for (const char *p = after; p && *p && field < 19; p++)
            if (*p == ' ' && ++field == 19)
                value = atoi(p + 1);
        count += field == 19 && value == nice;
    }
    if (dir)
        closedir(dir);
    return count;
}

TEST(tuner_pool_compiles_below_the_workers)
{
    int before = threads_at_nice(5);
    tn_pool *pool = tn_pool_create(3);
    CHECK(pool != NULL);
    /* Each thread lowers itself once it runs; on a loaded machine that can take a while, so wait for it (up to
     * 10 s) rather than a fixed moment.  A fourth never comes: the count must be exactly 3 when it settles. */
    struct timespec pause = {0, 10 * 1000 * 1000};
    for (int waited = 0; threads_at_nice(5) - before < 3 && waited < 1000; waited++)
        nanosleep(&pause, NULL);
    nanosleep(&pause, NULL);
    CHECK_EQ(threads_at_nice(5) - before, 3);
    CHECK(getpriority(PRIO_PROCESS, 0) == 0);          /* this thread is left alone */
    tn_pool_destroy(pool);
}
