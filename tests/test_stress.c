/* test_stress.c: concurrency stress, CPU tier: eight threads on the lookup chain while a fake
 * tuner writes the same database, other connections' locks kept (the public API from eight
 * threads on a GPU: test_stress_gpu.c). */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <sqlite3.h>
#include "autotune.h"
#include "cudrv.h"
#include "db.h"
#include "harness.h"
#include "lookup.h"
#include "th_stress.h"
#include "tpl.h"

/* ---------------- CPU tier: one process, many connections ---------------- */

/* 1 if another process sees a read lock on path's SQLite shared-lock bytes
 * (what this process's open read transaction must hold). */
static int st_read_locked(const char *path)
{
    pid_t pid = fork();
    if (pid == 0) {
        int fd = open(path, O_RDWR);
        struct flock fl;
        memset(&fl, 0, sizeof fl);
        fl.l_type = F_WRLCK;
        fl.l_whence = SEEK_SET;
        fl.l_start = 0x40000002;         /* SQLite's SHARED_FIRST */
        fl.l_len = 510;                  /* SHARED_SIZE */
        if (fd < 0 || fcntl(fd, F_GETLK, &fl) != 0)
            _exit(2);
        _exit(fl.l_type == F_UNLCK ? 0 : 1);
    }
    int status = 0;
    if (pid < 0 || waitpid(pid, &status, 0) != pid || !WIFEXITED(status))
        return -1;
    return WEXITSTATUS(status) == 2 ? -1 : WEXITSTATUS(status);
}

/* Opening and closing a second handle on the same file (every at_create
 * does) must leave the locks of this process's other connections in place:
 * with them gone, another process's last close checkpoints and resets the
 * WAL under a reader ("database disk image is malformed"). */
TEST(stress_second_open_keeps_other_connections_locks)
{
    char path[4300], err[512];
    snprintf(path, sizeof path, "%s/locks.db", th_tmpdir());
    db *d = NULL;
    CHECK_MSG(db_open(&d, path, 1, err, sizeof err) == AT_OK, "%s", err);
    db_close(d);
    sqlite3 *h = NULL;
    sqlite3_stmt *st = NULL;
    CHECK(sqlite3_open_v2(path, &h, SQLITE_OPEN_READONLY, NULL) == SQLITE_OK);
    int rc = sqlite3_prepare_v2(h, "SELECT key FROM meta", -1, &st, NULL);
    if (rc == SQLITE_OK)
        rc = sqlite3_step(st);                     /* a read transaction stays open */
    int before = st_read_locked(path);
    at_status s = db_open(&d, path, 1, err, sizeof err);
    db_close(d);
    int after = st_read_locked(path);
    sqlite3_finalize(st);
    sqlite3_close(h);
    CHECK_EQ(rc, SQLITE_ROW);
    CHECK_MSG(s == AT_OK, "%s", err);
    CHECK_EQ(before, 1);
    CHECK_MSG(after == 1, "a second db_open/db_close dropped this process's read lock (%d)", after);
}

/* ---------------- CPU tier: lookups while the fake tuner writes ---------------- */

/* test_oob's configurations by its documented rule (testfam.c): BLOCK a
 * multiple of 32 among the listed values, ITEMS 1/2/4, BAD=1 only with
 * BLOCK=128,ITEMS=1. */
static int st_oob_valid(const char *config)
{
    static const int blocks[] = {64, 128, 256, 512}, items[] = {1, 2, 4};
    char want[64];
    for (int b = 0; b < 4; b++)
        for (int i = 0; i < 3; i++) {
            snprintf(want, sizeof want, "BLOCK=%d,ITEMS=%d,BAD=0", blocks[b], items[i]);
            if (strcmp(config, want) == 0)
                return 1;
        }
    return strcmp(config, "BLOCK=128,ITEMS=1,BAD=1") == 0;
}
#define ST_OOB_VALID 13

#define ST_CPU_SIZES 4
static const long long st_cpu_sizes[ST_CPU_SIZES] = {777, 1001, 3001, 9001};
#define ST_CPU_MIN_ITERS 40
#define ST_CPU_PUT_KEYS 4

typedef struct st_cpu_worker {
    int index;
    const char *path;
    at_device_info dev;
    const tpl_family *fam;
    unsigned long long rng;
    atomic_int *stop, *abort_all;
    double last_best[2][ST_CPU_SIZES];   /* per mode and size: never rises */
    unsigned char written[ST_CPU_PUT_KEYS][64];
    int wrote[ST_CPU_PUT_KEYS];
    long long iters, exact, reopens, puts;
    char error[1536];
} st_cpu_worker;

static void st_cpu_fail(st_cpu_worker *w, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
static void st_cpu_fail(st_cpu_worker *w, const char *fmt, ...)
{
    if (w->error[0])
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(w->error, sizeof w->error, fmt, ap);
    va_end(ap);
    atomic_store(w->abort_all, 1);
}

/* One round of lookups at a random size: db_best, both candidate lists,
 * the lookup chain, and for threads 0 and 1 a cubin-cache write, as the
 * runtime does. Returns 0, or -1 after recording the failure. */
static int st_cpu_round(st_cpu_worker *w, db *d)
{
    int which = (int)st_range(&w->rng, 0, ST_CPU_SIZES);      /* ST_CPU_SIZES: random */
    tpl_problem p = TPL_PROBLEM(1, {which < ST_CPU_SIZES ? st_cpu_sizes[which]
                                              : st_range(&w->rng, 1, 1000000)});
    int det = (int)(st_next(&w->rng) & 1);
    const char *hash = tpl_source_hash(w->fam);
    db_result best;
    at_status s = db_best(d, w->dev.uuid, w->fam->name, hash, &p, det, &best);
    if (s != AT_OK && s != AT_ERR_NOT_FOUND) {
        st_cpu_fail(w, "db_best n=%lld: %s: %s", p.dims[0], at_status_string(s), db_errmsg(d));
        return -1;
    }
    if (s == AT_OK) {
        if (!st_oob_valid(best.config) || strcmp(best.status, DB_OK) != 0) {
            st_cpu_fail(w, "db_best n=%lld gave %s (%s)", p.dims[0], best.config, best.status);
            return -1;
        }
        if (which < ST_CPU_SIZES) {
            if (best.time_ms > w->last_best[det][which]) {
                st_cpu_fail(w, "best of n=%lld rose from %g to %g ms (%s)", p.dims[0],
                            w->last_best[det][which], best.time_ms, best.config);
                return -1;
            }
            w->last_best[det][which] = best.time_ms;
        }
    }
    for (int level = 0; level < 2; level++) {
        db_result *c = NULL;
        int n = 0;
        s = db_candidates(d, level ? NULL : w->dev.uuid, level ? w->dev.arch : NULL,
                          w->fam->name, hash, NULL, 4, det, &c, &n);
        for (int i = 0; s == AT_OK && i < n; i++)
            if (!st_oob_valid(c[i].config) || strcmp(c[i].status, DB_OK) != 0)
                s = AT_ERR_INTERNAL;
        free(c);
        if (s != AT_OK) {
            st_cpu_fail(w, "db_candidates (%s): %s: %s", level ? "arch" : "device",
                        at_status_string(s), s == AT_ERR_INTERNAL ? "a foreign config"
                                                                   : db_errmsg(d));
            return -1;
        }
    }
    int cfg[TPL_MAX_PARAMS], back[TPL_MAX_PARAMS];
    char config[TPL_CONFIG_LEN] = "", why[256];
    at_lookup_level level = lk_choose(d, &w->dev, w->fam, &p, det, cfg, config);
    if (level == AT_LOOKUP_NONE || !st_oob_valid(config) ||
        tpl_config_parse(w->fam, config, back, why, sizeof why) != AT_OK ||
        memcmp(cfg, back, (size_t)w->fam->n_params * sizeof *cfg) != 0) {
        st_cpu_fail(w, "lk_choose n=%lld: level %d config '%s'", p.dims[0], (int)level, config);
        return -1;
    }
    w->exact += level == AT_LOOKUP_EXACT;
    if (w->index < 2) {
        int k = (int)(w->iters % ST_CPU_PUT_KEYS);
        char key[40];
        snprintf(key, sizeof key, "stress-%d-%d", w->index, k);
        for (size_t i = 0; i < sizeof w->written[k]; i++)
            w->written[k][i] = (unsigned char)(w->iters * 31 + (long long)i);
        s = db_put_binary(d, key, w->fam->name, hash, config, w->dev.arch, "stress", "",
                          w->written[k], sizeof w->written[k]);
        if (s != AT_OK) {
            st_cpu_fail(w, "db_put_binary %s: %s: %s", key, at_status_string(s), db_errmsg(d));
            return -1;
        }
        w->wrote[k] = 1;
        w->puts++;
    }
    return 0;
}

static void *st_cpu_thread(void *arg)
{
    st_cpu_worker *w = arg;
    db *d = NULL;
    char err[1024];
    for (int i = 0; i < ST_CPU_SIZES; i++)
        w->last_best[0][i] = w->last_best[1][i] = INFINITY;
    for (w->iters = 0; !atomic_load(w->abort_all); w->iters++) {
        if (w->iters >= ST_CPU_MIN_ITERS && atomic_load(w->stop))
            break;
        /* the last thread reopens its connection every round, as at_create does */
        if (d && w->index == ST_THREADS - 1) {
            db_close(d);
            d = NULL;
            w->reopens++;
        }
        if (!d) {
            at_status s = db_open(&d, w->path, 1, err, sizeof err);
            if (s != AT_OK || db_is_readonly(d)) {
                st_cpu_fail(w, "db_open: %s: %s", at_status_string(s),
                            s == AT_OK ? "opened read-only" : err);
                break;
            }
        }
        if (st_cpu_round(w, d) != 0)
            break;
        st_sleep_ms(1);
    }
    db_close(d);
    return NULL;
}

/* The fake tuner's command over the given sizes (one run each, in turn); its run-end gc is
 * off, since the threads' own cubins (under keys no lookup serves) must survive it. */
static void st_fake_command(char *cmd, size_t len, const char *path, const char *sizes)
{
    snprintf(cmd, len,
             "for s in %s; do AUTOTUNE_WORKER='%s/autotune-test __fake_worker' "
             "AUTOTUNE_FAKE='delay=10' %s/autotune-test --device 0 --kernel test_oob --db %s "
             "--size $s --seed 7 --jobs 2 --quiet --keep-all-cubins || exit $?; done",
             sizes, th_build_dir(), th_build_dir(), path);
}

/* Checks the threads' cubin writes read back as last written. */
static void st_check_puts(const char *path, st_cpu_worker *w, int n)
{
    db *d = NULL;
    char err[512];
    CHECK_MSG(db_open(&d, path, 0, err, sizeof err) == AT_OK, "%s", err);
    for (int t = 0; t < n; t++) {
        for (int k = 0; k < ST_CPU_PUT_KEYS; k++) {
            if (!w[t].wrote[k])
                continue;
            char key[40];
            snprintf(key, sizeof key, "stress-%d-%d", w[t].index, k);
            void *bin = NULL;
            size_t size = 0;
            at_status s = db_get_binary(d, key, &bin, &size);
            int same = s == AT_OK && size == sizeof w[t].written[k] &&
                       memcmp(bin, w[t].written[k], size) == 0;
            free(bin);
            if (!same) {
                db_close(d);
                CHECK_MSG(same, "cubin %s: %s, %zu bytes", key, at_status_string(s), size);
            }
        }
    }
    db_close(d);
}

TEST(stress_lookups_while_fake_tuner_writes)
{
    char path[4300], log[4400], cmd[16384], *out = NULL;
    snprintf(path, sizeof path, "%s/stress.db", th_tmpdir());
    snprintf(log, sizeof log, "%s.tuner.log", path);
    /* an earlier run, whose rows must survive */
    st_fake_command(cmd, sizeof cmd, path, "777");
    int rc = th_run(cmd, &out);
    int runs = 0;
    long long seeded_stored = st_done_total(out, &runs);
    CHECK_MSG(rc == 0 && runs == 1 && seeded_stored == ST_OOB_VALID, "seeding run: exit %d: %s",
              rc, out ? out : "");
    free(out);
    db_result *seeded = NULL;
    char why[1024];
    int n_seeded = st_all_results(path, &seeded, why, sizeof why);
    CHECK_MSG(n_seeded == ST_OOB_VALID, "%d seeded rows: %s", n_seeded, why);
    long long seed_session = seeded[0].session_id;
    st_cpu_worker w[ST_THREADS];
    memset(w, 0, sizeof w);
    {
        db *d = NULL;
        db_device dev;
        CHECK_OK(db_open(&d, path, 0, why, sizeof why));
        at_status s = db_get_device(d, seeded[0].device_uuid, &dev);
        db_close(d);
        CHECK_OK(s);
        w[0].dev = dev.info;
    }
    const tpl_family *fam = tpl_find("test_oob");
    CHECK(fam);

    unsigned long long seed = st_seed();
    atomic_int stop = 0, abort_all = 0;
    st_fake_command(cmd, sizeof cmd, path, "1001 3001 9001");
    double t0 = st_now();
    pid_t tuner = st_spawn(cmd, log);
    CHECK(tuner > 0);
    pthread_t threads[ST_THREADS];
    int started = 0;
    for (int t = 0; t < ST_THREADS; t++) {
        w[t].index = t;
        w[t].path = path;
        w[t].dev = w[0].dev;
        w[t].fam = fam;
        w[t].rng = seed + 1000003ull * (unsigned long long)t;
        w[t].stop = &stop;
        w[t].abort_all = &abort_all;
        if (pthread_create(&threads[t], NULL, st_cpu_thread, &w[t]) != 0)
            break;
        started++;
    }
    rc = st_wait(tuner, ST_TUNER_DEADLINE_S);
    double tuner_s = st_now() - t0;
    atomic_store(&stop, 1);
    if (started < ST_THREADS)
        atomic_store(&abort_all, 1);
    for (int t = 0; t < started; t++)
        pthread_join(threads[t], NULL);
    out = st_slurp(log);
    long long iters = 0, exact = 0, puts = 0, reopens = 0;
    for (int t = 0; t < started; t++) {
        iters += w[t].iters;
        exact += w[t].exact;
        puts += w[t].puts;
        reopens += w[t].reopens;
    }
    printf("    seed %llu: tuner %.1f s; %lld lookup rounds (%lld exact), %lld cubin writes, "
           "%lld reopens\n", seed, tuner_s, iters, exact, puts, reopens);
    int failed = 0;
    for (int t = 0; t < started; t++)
        if (w[t].error[0] && failed++ < 4)
            th_fail(__FILE__, __LINE__, "thread %d: %s", t, w[t].error);
    long long stored = st_done_total(out, &runs);
    if (failed || started < ST_THREADS || rc != 0 || runs != 3) {
        free(seeded);
        CHECK_MSG(!failed && started == ST_THREADS, "%d threads failed, %d started", failed,
                  started);
        CHECK_MSG(rc == 0 && runs == 3, "tuner exit %d after %.1f s, %d runs: %s", rc, tuner_s,
                  runs, out ? out : "");
    }
    free(out);
    CHECK(stored == 3 * ST_OOB_VALID);
    CHECK_MSG(exact > 0, "no lookup found a tuned size");
    st_verify_db(path, seeded, n_seeded, seed_session, stored);
    free(seeded);
    st_check_puts(path, w, ST_THREADS);
}
