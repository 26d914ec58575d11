/* test_tuner.c: tests of the tuner: search strategies on synthetic spaces,
 * the worker protocol, and whole runs with a fake (CPU) or the real worker. */
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

/* ---- a synthetic family: 4 parameters x 8 values, a constraint ---- */

static int syn_valid(const int *cfg, const at_device_info *dev, char *why, size_t len)
{
    (void)dev;
    /* values are 10*i: forbid A + B above 110 (a corner of the lattice) */
    if (cfg[0] + cfg[1] > 110) {
        snprintf(why, len, "A + B > 110");
        return 0;
    }
    return 1;
}

static const tpl_family syn_family = {
    .name = "synthetic",
    .n_params = 4,
    .params = {
        {"A", 8, {0, 10, 20, 30, 40, 50, 60, 70}, "a"},
        {"B", 8, {0, 10, 20, 30, 40, 50, 60, 70}, "b"},
        {"C", 8, {0, 10, 20, 30, 40, 50, 60, 70}, "c"},
        {"D", 8, {0, 10, 20, 30, 40, 50, 60, 70}, "d"},
    },
    .valid = syn_valid,
};

/* Independent count of the valid set by nested loops. */
static long long syn_count_valid(void)
{
    long long n = 0;
    for (int a = 0; a < 8; a++)
        for (int b = 0; b < 8; b++)
            for (int c = 0; c < 8; c++)
                for (int d = 0; d < 8; d++)
                    n += (10 * a + 10 * b) <= 110;
    return n;
}

/* Smooth cost with one minimum at A=50, B=20, C=60, D=30 (a valid point),
 * plus a small deterministic ripple so it is not perfectly separable. */
static double syn_cost(const int *cfg)
{
    double a = cfg[0] / 10.0 - 5, b = cfg[1] / 10.0 - 2, c = cfg[2] / 10.0 - 6,
           d = cfg[3] / 10.0 - 3;
    unsigned h = (unsigned)(cfg[0] * 7919 + cfg[1] * 104729 + cfg[2] * 1299709 + cfg[3] * 15485863);
    h ^= h >> 13;
    h *= 0x5bd1e995u;
    h ^= h >> 15;
    return 1.0 + a * a + 0.5 * b * b + c * c + 0.3 * d * d + 0.2 * (double)(h % 100) / 100.0;
}

typedef struct syn_space {
    tn_space space;
    long long *idx;
} syn_space;

static int syn_space_make(syn_space *s)
{
    long long n = tn_valid_space(&syn_family, NULL, NULL, &s->idx);
    if (n < 0)
        return -1;
    s->space.fam = &syn_family;
    s->space.n_valid = n;
    s->space.valid = s->idx;
    return 0;
}

TEST(tuner_valid_space_matches_brute_force)
{
    syn_space s;
    CHECK(syn_space_make(&s) == 0);
    CHECK_EQ(s.space.n_valid, syn_count_valid());
    CHECK(s.space.n_valid < 4096);
    for (long long i = 1; i < s.space.n_valid; i++)
        CHECK(s.idx[i] > s.idx[i - 1]);
    free(s.idx);
}

/* Runs a strategy to exhaustion; checks every proposal is valid and new. */
static long long drain(const tn_strategy *strat, const tn_space *space, void *st,
                       unsigned char *hit, long long max)
{
    long long n = 0, idx;
    while (n < max && (idx = strat->next(st)) >= 0) {
        long long pos = tn_space_position(space, idx);
        if (pos < 0 || hit[pos])
            return -1 - n;           /* invalid or repeated */
        hit[pos] = 1;
        n++;
        strat->tell(st, idx, 1.0 + (double)(idx % 17));
    }
    return n;
}

TEST(tuner_exhaustive_visits_every_valid_config_once)
{
    syn_space s;
    CHECK(syn_space_make(&s) == 0);
    void *st = tn_strategy_exhaustive.create(&s.space, 1);
    unsigned char *hit = calloc((size_t)s.space.n_valid, 1);
    CHECK(st && hit);
    /* configurations told before (stored by an earlier run) are skipped */
    tn_strategy_exhaustive.tell(st, s.idx[3], 2.0);
    tn_strategy_exhaustive.tell(st, s.idx[10], INFINITY);
    long long n = drain(&tn_strategy_exhaustive, &s.space, st, hit, 1 << 20);
    CHECK_EQ(n, s.space.n_valid - 2);
    CHECK(!hit[3] && !hit[10]);
    CHECK_EQ(tn_strategy_exhaustive.next(st), -1);
    tn_strategy_exhaustive.destroy(st);
    free(hit);
    free(s.idx);
}

TEST(tuner_random_no_repeats_and_seeded)
{
    syn_space s;
    CHECK(syn_space_make(&s) == 0);
    unsigned char *hit = calloc((size_t)s.space.n_valid, 1);
    void *a = tn_strategy_random.create(&s.space, 42);
    void *b = tn_strategy_random.create(&s.space, 42);
    void *c = tn_strategy_random.create(&s.space, 43);
    CHECK(hit && a && b && c);
    /* same seed, same order; another seed, another order; not lattice order */
    int same = 1, differ = 0, sorted = 1;
    long long prev = -1;
    for (int i = 0; i < 50; i++) {
        long long x = tn_strategy_random.next(a), y = tn_strategy_random.next(b),
                  z = tn_strategy_random.next(c);
        same &= x == y;
        differ |= x != z;
        sorted &= x > prev;
        prev = x;
        hit[tn_space_position(&s.space, x)] = 1;
    }
    CHECK(same);
    CHECK(differ);
    CHECK(!sorted);
    /* the rest: every valid configuration exactly once in all */
    long long n = drain(&tn_strategy_random, &s.space, a, hit, 1 << 20);
    CHECK_EQ(n, s.space.n_valid - 50);
    for (long long i = 0; i < s.space.n_valid; i++)
        CHECK(hit[i]);
    tn_strategy_random.destroy(a);
    tn_strategy_random.destroy(b);
    tn_strategy_random.destroy(c);
    free(hit);
    free(s.idx);
}

/* Best cost found by a strategy within `budget` evaluations, with up to
 * `lookahead` proposals in flight as the driver does. */
static double search_best(const tn_strategy *strat, const tn_space *space,
                          unsigned long long seed, int budget, int *invalid)
{
    void *st = strat->create(space, seed);
    if (!st)
        return INFINITY;
    long long inflight[8];
    int n_in = 0, done = 0;
    int look = strat->lookahead > 0 ? strat->lookahead : 1;
    if (look > 8)
        look = 8;
    double best = INFINITY;
    unsigned char *seen = calloc((size_t)space->n_valid, 1);
    while (done < budget) {
        while (n_in < look && done + n_in < budget) {
            long long idx = strat->next(st);
            if (idx < 0)
                break;
            long long pos = tn_space_position(space, idx);
            if (pos < 0 || seen[pos])
                (*invalid)++;
            else
                seen[pos] = 1;
            inflight[n_in++] = idx;
        }
        if (n_in == 0)
            break;
        long long idx = inflight[0];
        memmove(inflight, inflight + 1, (size_t)(n_in - 1) * sizeof *inflight);
        n_in--;
        int cfg[TPL_MAX_PARAMS];
        tpl_config_from_index(space->fam, idx, cfg);
        double cost = syn_cost(cfg);
        if (cost < best)
            best = cost;
        strat->tell(st, idx, cost);
        done++;
    }
    free(seen);
    strat->destroy(st);
    return best;
}

TEST(tuner_anneal_valid_and_better_than_random)
{
    syn_space s;
    CHECK(syn_space_make(&s) == 0);
    /* the optimum by brute force */
    double opt = INFINITY;
    for (long long i = 0; i < s.space.n_valid; i++) {
        int cfg[TPL_MAX_PARAMS];
        tpl_config_from_index(&syn_family, s.idx[i], cfg);
        double c = syn_cost(cfg);
        if (c < opt)
            opt = c;
    }
    const int budget = 80, trials = 40;
    double sum_an = 0, sum_rn = 0;
    int hits_an = 0, hits_rn = 0, invalid = 0;
    for (int t = 0; t < trials; t++) {
        double a = search_best(&tn_strategy_anneal, &s.space, 1000 + t, budget, &invalid);
        double r = search_best(&tn_strategy_random, &s.space, 1000 + t, budget, &invalid);
        sum_an += a - opt;
        sum_rn += r - opt;
        hits_an += a <= opt * 1.03;
        hits_rn += r <= opt * 1.03;
    }
    printf("    anneal: mean gap %.3f, within 3%% in %d/%d; random: mean gap %.3f, %d/%d\n",
           sum_an / trials, hits_an, trials, sum_rn / trials, hits_rn, trials);
    CHECK_EQ(invalid, 0);
    CHECK(sum_an < 0.5 * sum_rn);
    CHECK(hits_an >= trials / 2);
    CHECK(hits_an > 2 * hits_rn);
    /* run to exhaustion: anneal eventually proposes every valid config */
    void *st = tn_strategy_anneal.create(&s.space, 7);
    unsigned char *hit = calloc((size_t)s.space.n_valid, 1);
    CHECK(st && hit);
    CHECK_EQ(drain(&tn_strategy_anneal, &s.space, st, hit, 1 << 20), s.space.n_valid);
    tn_strategy_anneal.destroy(st);
    free(hit);
    free(s.idx);
}

/* ---- protocol ---- */

TEST(tuner_protocol_round_trip)
{
    tn_msg m, d;
    memset(&m, 0, sizeof m);
    m.type = TN_MSG_EVAL;
    m.status = AT_ERR_WRONG_RESULT;
    m.device = 3;
    snprintf(m.family, sizeof m.family, "matmul");
    m.problem.n_dims = 3;
    m.problem.dims[0] = 4096;
    m.problem.dims[1] = -7;
    m.problem.dims[2] = 1LL << 40;
    m.problem.dtype = AT_R_16BF;
    m.problem.math = AT_MATH_TF32;
    m.problem.op_b = AT_OP_T;
    m.problem.order = AT_COL_MAJOR;
    m.problem.batch = 1LL << 33;
    m.seed = 0xFEDCBA9876543210ull;
    m.n_cfg = 5;
    for (int i = 0; i < 5; i++)
        m.cfg[i] = i * 1000 - 3;
    m.opt.warmup = 2;
    m.opt.min_runs = 5;
    m.opt.max_runs = 200;
    m.opt.budget_ms = 12.5;
    m.opt.abandon_ms = 0.1;
    m.opt.flush_l2 = 1;
    m.opt.back_to_back = 1;
    snprintf(m.dev.name, sizeof m.dev.name, "NVIDIA H100 80GB HBM3");
    snprintf(m.dev.uuid, sizeof m.dev.uuid, "GPU-12345678-abcd");
    snprintf(m.dev.arch, sizeof m.dev.arch, "sm_90");
    m.dev.memory_bytes = 85520809984LL;
    m.dev.sm_count = 132;
    m.dev.driver_version = 13000;
    m.rel_error = 1.25e-7;
    m.timing.median_ms = 3.5;
    m.timing.min_ms = 3.25;
    m.timing.max_ms = 4.0;
    m.timing.runs = 57;
    m.timing.abandoned = 1;
    m.verified = 1;
    m.fatal = 1;
    m.value = -0.0;
    m.value2 = NAN;
    snprintf(m.text, sizeof m.text, "line one\nline \"two\"");
    unsigned char blob[300];
    for (int i = 0; i < 300; i++)
        blob[i] = (unsigned char)(i * 7);
    m.blob = blob;
    m.blob_size = sizeof blob;

    unsigned char *buf;
    size_t len;
    CHECK_OK(tn_msg_encode(&m, &buf, &len));
    CHECK(len > 4 + sizeof blob);
    size_t body = (size_t)buf[0] | (size_t)buf[1] << 8 | (size_t)buf[2] << 16 |
                  (size_t)buf[3] << 24;
    CHECK_EQ(body, len - 4);
    CHECK_OK(tn_msg_decode(buf + 4, len - 4, &d));
    CHECK_EQ(d.type, TN_MSG_EVAL);
    CHECK_EQ(d.status, AT_ERR_WRONG_RESULT);
    CHECK_EQ(d.device, 3);
    CHECK_STR(d.family, "matmul");
    CHECK_EQ(d.problem.n_dims, 3);
    CHECK_EQ(d.problem.dims[1], -7);
    CHECK_EQ(d.problem.dims[2], 1LL << 40);
    CHECK(tpl_problem_equal(&d.problem, &m.problem) && d.problem.op_a == AT_OP_N);
    CHECK(d.seed == 0xFEDCBA9876543210ull);
    CHECK_EQ(d.n_cfg, 5);
    CHECK_EQ(d.cfg[4], 3997);
    CHECK_EQ(d.cfg[0], -3);
    CHECK(d.opt.budget_ms == 12.5 && d.opt.abandon_ms == 0.1 && d.opt.max_runs == 200);
    CHECK(d.opt.flush_l2 == 1 && d.opt.back_to_back == 1 && d.opt.warmup == 2);
    CHECK_STR(d.dev.name, "NVIDIA H100 80GB HBM3");
    CHECK_STR(d.dev.uuid, "GPU-12345678-abcd");
    CHECK_STR(d.dev.arch, "sm_90");
    CHECK_EQ(d.dev.memory_bytes, 85520809984LL);
    CHECK(d.rel_error == 1.25e-7);
    CHECK(d.timing.median_ms == 3.5 && d.timing.min_ms == 3.25 && d.timing.max_ms == 4.0);
    CHECK_EQ(d.timing.runs, 57);
    CHECK(d.timing.abandoned && d.verified && d.fatal);
    CHECK(isnan(d.value2) && d.value == 0.0 && signbit(d.value));
    CHECK_STR(d.text, "line one\nline \"two\"");
    CHECK_EQ(d.blob_size, sizeof blob);
    CHECK(memcmp(d.blob, blob, sizeof blob) == 0);
    tn_msg_free(&d);

    /* malformed: truncated, or trailing bytes */
    CHECK(tn_msg_decode(buf + 4, len - 5, &d) != AT_OK);
    CHECK(tn_msg_decode(buf + 4, 10, &d) != AT_OK);
    free(buf);
}

TEST(tuner_protocol_over_pipe_and_timeout)
{
    int fds[2];
    CHECK(pipe(fds) == 0);
    tn_msg m, d;
    memset(&m, 0, sizeof m);
    m.type = TN_MSG_REPLY;
    m.status = AT_ERR_TIMEOUT;
    snprintf(m.text, sizeof m.text, "hello");
    CHECK_OK(tn_msg_send(fds[1], &m));
    char err[256];
    CHECK_OK(tn_msg_recv(fds[0], &d, 1.0, err, sizeof err));
    CHECK_EQ(d.status, AT_ERR_TIMEOUT);
    CHECK_STR(d.text, "hello");
    tn_msg_free(&d);
    /* nothing to read: a timeout, after about the time asked */
    double t0 = tn_now();
    CHECK_EQ(tn_msg_recv(fds[0], &d, 0.2, err, sizeof err), AT_ERR_TIMEOUT);
    double waited = tn_now() - t0;
    CHECK(waited >= 0.19 && waited < 2.0);
    /* writer closed: an I/O error (EOF), not a hang */
    close(fds[1]);
    CHECK_EQ(tn_msg_recv(fds[0], &d, 5.0, err, sizeof err), AT_ERR_IO);
    close(fds[0]);
}

TEST(tuner_parse_size_and_budget)
{
    tpl_problem p;
    CHECK(tn_parse_size("4096x4096x4096", &p) == 0);
    CHECK_EQ(p.n_dims, 3);
    CHECK_EQ(p.dims[2], 4096);
    CHECK(tn_parse_size("1000003", &p) == 0);
    CHECK_EQ(p.n_dims, 1);
    CHECK_EQ(p.dims[0], 1000003);
    CHECK(tn_parse_size("12x", &p) != 0);
    CHECK(tn_parse_size("x12", &p) != 0);
    CHECK(tn_parse_size("0", &p) != 0);
    CHECK(tn_parse_size("1x2x3x4", &p) != 0);
    CHECK(tn_parse_size("12a", &p) != 0);
    CHECK(tn_parse_size("", &p) != 0);
    CHECK(tn_parse_size("64x64x64:col:NT", &p) == 0);
    CHECK(p.order == AT_COL_MAJOR && p.op_a == AT_OP_N && p.op_b == AT_OP_T);
    char text[64];
    tn_format_size(&p, text, sizeof text);
    CHECK_STR(text, "64x64x64:col:NT");
    CHECK(tn_parse_size("64x64x64:", &p) != 0);
    double s;
    long long e;
    CHECK(tn_parse_budget("60", &s, &e) == 0 && s == 60 && e == 0);
    CHECK(tn_parse_budget("2.5s", &s, &e) == 0 && s == 2.5 && e == 0);
    CHECK(tn_parse_budget("2m", &s, &e) == 0 && s == 120);
    CHECK(tn_parse_budget("200e", &s, &e) == 0 && e == 200 && s == 0);
    CHECK(tn_parse_budget("200evals", &s, &e) == 0 && e == 200);
    CHECK(tn_parse_budget("1.5e", &s, &e) != 0);
    CHECK(tn_parse_budget("-3", &s, &e) != 0);
    CHECK(tn_parse_budget("5q", &s, &e) != 0);
}

/* ---- whole runs with the fake worker ---- */

/* The fake worker's time formula, written again here (FNV-1a 64). */
static double fake_time(const char *config)
{
    unsigned long long h = 14695981039346656037ull;
    for (const unsigned char *p = (const unsigned char *)config; *p; p++) {
        h ^= *p;
        h *= 1099511628211ull;
    }
    return 0.5 + (double)(h % 10000u) / 1000.0;
}

/* The valid configurations of test_oob, by its documented rule. */
static int oob_configs(char list[][64])
{
    static const int blocks[] = {64, 128, 256, 512}, items[] = {1, 2, 4};
    int n = 0;
    for (int b = 0; b < 4; b++)
        for (int i = 0; i < 3; i++)
            snprintf(list[n++], 64, "BLOCK=%d,ITEMS=%d,BAD=0", blocks[b], items[i]);
    snprintf(list[n++], 64, "BLOCK=128,ITEMS=1,BAD=1");
    return n;
}

static const db_result *find_config(const db_result *r, int n, const char *config)
{
    for (int i = 0; i < n; i++)
        if (strcmp(r[i].config, config) == 0)
            return &r[i];
    return NULL;
}

static int count_rows(const char *path, const char *kernel)
{
    db *d = NULL;
    char err[256];
    if (db_open(&d, path, 0, err, sizeof err) != AT_OK)
        return -1;
    db_result *r = NULL;
    int n = -1;
    if (db_results(d, NULL, kernel, &r, &n) != AT_OK)
        n = -1;
    free(r);
    db_close(d);
    return n;
}

TEST(tuner_fake_worker_crash_hang_wrong_best_resume)
{
    char cfgs[16][64];
    int n = oob_configs(cfgs);
    /* wrong_result on the formula's optimum (so it must not become best),
     * a crash and a hang on two others */
    int order[16];
    for (int i = 0; i < n; i++)
        order[i] = i;
    for (int i = 0; i < n; i++)
        for (int j = i + 1; j < n; j++)
            if (fake_time(cfgs[order[j]]) < fake_time(cfgs[order[i]])) {
                int t = order[i];
                order[i] = order[j];
                order[j] = t;
            }
    const char *wrong = cfgs[order[0]], *crash = cfgs[order[1]], *hang = cfgs[order[3]];
    const char *expect = cfgs[order[2]];
    char dbpath[4300], cmd[16384], *out = NULL;
    snprintf(dbpath, sizeof dbpath, "%s/fake.db", th_tmpdir());
    snprintf(cmd, sizeof cmd,
             "AUTOTUNE_WORKER='%s/autotune-test __fake_worker' "
             "AUTOTUNE_FAKE='crash=%s;hang=%s;wrong=%s' "
             "%s/autotune-test --device 0 --kernel test_oob --db %s --timeout 1 --seed 3 --quiet "
             "--jobs 16",
             th_build_dir(), crash, hang, wrong, th_build_dir(), dbpath);
    int rc = th_run(cmd, &out);
    CHECK_MSG(rc == 0, "exit %d: %s", rc, out ? out : "");
    CHECK(strstr(out, "13 evaluated") != NULL);
    free(out);

    db *d = NULL;
    char err[256];
    CHECK_OK(db_open(&d, dbpath, 0, err, sizeof err));
    db_result *r = NULL;
    int nr = 0;
    CHECK_OK(db_results(d, NULL, "test_oob", &r, &nr));
    CHECK_EQ(nr, n);
    const db_result *x;
    CHECK((x = find_config(r, nr, crash)) && strcmp(x->status, DB_CRASHED) == 0);
    CHECK(strstr(x->error, "signal 11") != NULL);
    CHECK((x = find_config(r, nr, hang)) && strcmp(x->status, DB_TIMEOUT) == 0);
    CHECK((x = find_config(r, nr, wrong)) && strcmp(x->status, DB_WRONG_RESULT) == 0);
    CHECK(x->rel_error == 0.5);
    int ok = 0;
    for (int i = 0; i < nr; i++) {
        ok += strcmp(r[i].status, DB_OK) == 0;
        if (strcmp(r[i].status, DB_OK) == 0 || strcmp(r[i].status, DB_ABANDONED) == 0) {
            CHECK(fabs(r[i].time_ms - fake_time(r[i].config)) < 1e-9);
            CHECK(r[i].binary_key[0] != '\0');
        }
    }
    CHECK(ok >= 2);
    db_result best;
    CHECK_OK(db_best(d, r[0].device_uuid, "test_oob", r[0].source_hash, &r[0].problem, 0, &best));
    CHECK_STR(best.config, expect);
    /* the cubin of the best is stored */
    void *bin = NULL;
    size_t size = 0;
    CHECK_OK(db_get_binary(d, best.binary_key, &bin, &size));
    CHECK(size > 0);
    free(bin);
    free(r);
    db_close(d);

    /* a rerun evaluates nothing new */
    rc = th_run(cmd, &out);
    CHECK_MSG(rc == 0, "rerun exit %d: %s", rc, out ? out : "");
    CHECK_MSG(strstr(out, "0 evaluated (+13 stored before)") != NULL, "%s", out);
    free(out);
    CHECK_EQ(count_rows(dbpath, "test_oob"), n);
}

TEST(tuner_fake_worker_no_device)
{
    char cmd[16384], *out = NULL;
    snprintf(cmd, sizeof cmd,
             "AUTOTUNE_WORKER='%s/autotune-test __fake_worker' AUTOTUNE_FAKE=nodevice "
             "%s/autotune-test --device 5 --kernel test_oob --db %s/x.db",
             th_build_dir(), th_build_dir(), th_tmpdir());
    int rc = th_run(cmd, &out);
    CHECK_MSG(rc == 1, "exit %d: %s", rc, out ? out : "");
    CHECK(strstr(out, "no CUDA driver/device") && strstr(out, "no device 5"));
    free(out);
}

/* Interrupts a slow fake run with `sig` after `delay` s; returns its
 * output (malloc'd) and exit status. */
static int run_and_signal(const char *dbpath, const char *sig, char **out)
{
    char cmd[32768];
    snprintf(cmd, sizeof cmd,
             "AUTOTUNE_WORKER='%s/autotune-test __fake_worker %s' AUTOTUNE_FAKE='delay=200' "
             "%s/autotune-test --device 0 --kernel test_oob --db %s --seed 9 --quiet "
             "> %s.log 2>&1 & pid=$!; sleep 1.5; kill -%s $pid; wait $pid; echo \"rc=$?\"; "
             "cat %s.log",
             th_build_dir(), dbpath, th_build_dir(), dbpath, dbpath, sig, dbpath);
    return th_run(cmd, out);
}

TEST(tuner_sigint_stops_cleanly_and_rerun_completes)
{
    char dbpath[4300], cmd[16384], *out = NULL;
    snprintf(dbpath, sizeof dbpath, "%s/int.db", th_tmpdir());
    run_and_signal(dbpath, "INT", &out);
    CHECK_MSG(out && strstr(out, "rc=130"), "%s", out ? out : "");
    CHECK(strstr(out, "interrupted: ") && strstr(out, "rerun the same command to resume"));
    free(out);
    int stored = count_rows(dbpath, "test_oob");
    CHECK_MSG(stored >= 1 && stored < 13, "stored %d", stored);
    snprintf(cmd, sizeof cmd,
             "AUTOTUNE_WORKER='%s/autotune-test __fake_worker' "
             "%s/autotune-test --device 0 --kernel test_oob --db %s --seed 9 --quiet",
             th_build_dir(), th_build_dir(), dbpath);
    int rc = th_run(cmd, &out);
    CHECK_MSG(rc == 0, "exit %d: %s", rc, out ? out : "");
    char want[64];
    snprintf(want, sizeof want, "%d evaluated (+%d stored before)", 13 - stored, stored);
    CHECK_MSG(strstr(out, want) != NULL, "want '%s' in %s", want, out);
    free(out);
    CHECK_EQ(count_rows(dbpath, "test_oob"), 13);
}

TEST(tuner_kill9_loses_nothing_stored)
{
    char dbpath[4300], cmd[16384], *out = NULL;
    snprintf(dbpath, sizeof dbpath, "%s/k9.db", th_tmpdir());
    run_and_signal(dbpath, "9", &out);
    CHECK_MSG(out && strstr(out, "rc=137"), "%s", out ? out : "");
    free(out);
    int stored = count_rows(dbpath, "test_oob");
    CHECK_MSG(stored >= 1 && stored < 13, "stored %d", stored);
    /* the orphaned worker (its command line names this database) died
     * with its parent */
    snprintf(cmd, sizeof cmd, "sleep 0.3; pgrep -f '[_]_fake_worker %s' >/dev/null", dbpath);
    CHECK(th_run(cmd, NULL) != 0);
    snprintf(cmd, sizeof cmd,
             "AUTOTUNE_WORKER='%s/autotune-test __fake_worker' "
             "%s/autotune-test --device 0 --kernel test_oob --db %s --seed 9 --quiet",
             th_build_dir(), th_build_dir(), dbpath);
    int rc = th_run(cmd, &out);
    CHECK_MSG(rc == 0, "exit %d: %s", rc, out ? out : "");
    free(out);
    CHECK_EQ(count_rows(dbpath, "test_oob"), 13);
}

/* ---- the real worker on a GPU ---- */

GPU_TEST(tuner_gpu_worker_isolates_crash_and_hang)
{
    char dbpath[4300], cmd[16384], *out = NULL;
    snprintf(dbpath, sizeof dbpath, "%s/gpu.db", th_tmpdir());
    snprintf(cmd, sizeof cmd,
             "env -u AUTOTUNE_WORKER %s/autotune-test --device %d --kernel test_oob,test_hang "
             "--db %s --seed 1 --quiet",
             th_build_dir(), th_device(), dbpath);
    double t0 = tn_now();
    int rc = th_run(cmd, &out);
    double secs = tn_now() - t0;
    printf("    %s    (%.1f s)\n", out ? out : "", secs);
    CHECK_MSG(rc == 0, "exit %d: %s", rc, out ? out : "");
    free(out);
    db *d = NULL;
    char err[256];
    CHECK_OK(db_open(&d, dbpath, 0, err, sizeof err));
    db_result *r = NULL;
    int nr = 0;
    CHECK_OK(db_results(d, NULL, NULL, &r, &nr));
    int crashed = 0, timeout = 0, passed = 0, other = 0;
    for (int i = 0; i < nr; i++) {
        const char *s = r[i].status;
        int oob = strcmp(r[i].kernel, "test_oob") == 0;
        if (oob && strstr(r[i].config, "BAD=1")) {
            CHECK_MSG(strcmp(s, DB_CRASHED) == 0, "%s: %s (%s)", r[i].config, s, r[i].error);
            crashed++;
        } else if (!oob && strstr(r[i].config, "SPIN=1")) {
            CHECK_MSG(strcmp(s, DB_TIMEOUT) == 0, "%s: %s (%s)", r[i].config, s, r[i].error);
            timeout++;
        } else if (strcmp(s, DB_OK) == 0 || strcmp(s, DB_ABANDONED) == 0) {
            CHECK(r[i].rel_error >= 0 && r[i].rel_error < 1e-6);
            passed++;
        } else {
            printf("    unexpected %s %s: %s (%s)\n", r[i].kernel, r[i].config, s, r[i].error);
            other++;
        }
    }
    CHECK_EQ(crashed, 1);
    CHECK_EQ(timeout, 1);
    CHECK_EQ(other, 0);
    CHECK_EQ(passed, 12 + 4);
    free(r);
    db_close(d);
}

/* The results stored for kernel at size n (malloc'd into *rows); how
 * many, 0 when the database cannot be read. */
static int kernel_rows_at(const char *dbpath, const char *kernel, long long n,
                          db_result **rows)
{
    db *d = NULL;
    char err[256];
    int nr = 0, kept = 0;
    *rows = NULL;
    if (db_open(&d, dbpath, 0, err, sizeof err) != AT_OK)
        return 0;
    if (db_results(d, NULL, kernel, rows, &nr) != AT_OK)
        nr = 0;
    db_close(d);
    for (int i = 0; i < nr; i++)
        if ((*rows)[i].problem.dims[0] == n)
            (*rows)[kept++] = (*rows)[i];
    return kept;
}

static int oob_rows_at(const char *dbpath, long long n, db_result **rows)
{
    return kernel_rows_at(dbpath, "test_oob", n, rows);
}

static int oob_rows_wide(const char *dbpath, long long n, db_result **rows)
{
    return kernel_rows_at(dbpath, "test_wide", n, rows);
}

/* 1 if test_oob has a stored result for config at size n. */
static int find_config_at(const char *dbpath, long long n, const char *config)
{
    db_result *r;
    int nr = oob_rows_at(dbpath, n, &r);
    int found = find_config(r, nr, config) != NULL;
    free(r);
    return found;
}

/* The fastest ok configuration of rows (by the fake worker's formula, which
 * does not depend on the size); NULL if none. */
static const db_result *fastest_row(const db_result *rows, int n)
{
    const db_result *best = NULL;
    for (int i = 0; i < n; i++)
        if (strcmp(rows[i].status, DB_OK) == 0 &&
            (!best || fake_time(rows[i].config) < fake_time(best->config)))
            best = &rows[i];
    return best;
}

/* The fastest ok configuration stored for test_oob at size n (by the fake
 * worker's formula); 0 if none. */
static int best_at(const char *dbpath, long long n, char *out, size_t len)
{
    db_result *r;
    int nr = oob_rows_at(dbpath, n, &r);
    const db_result *best = fastest_row(r, nr);
    if (best)
        snprintf(out, len, "%s", best->config);
    free(r);
    return best != NULL;
}

/* Warm start: with a budget of two evaluations, a new size evaluates the
 * default and the winner of the nearest stored size (by the fake worker's
 * formula), not a random configuration. */
TEST(tuner_warm_start_from_nearest_size)
{
    char dbpath[4300], cmd[16384], *out = NULL;
    snprintf(dbpath, sizeof dbpath, "%s/transfer.db", th_tmpdir());
    const char *fmt = "AUTOTUNE_WORKER='%s/autotune-test __fake_worker' "
                      "%s/autotune-test --device 0 --kernel test_oob --db %s --strategy random "
                      "--size %s --budget %s --seed %d --quiet";
    snprintf(cmd, sizeof cmd, fmt, th_build_dir(), th_build_dir(), dbpath, "1000", "13e", 1);
    int rc = th_run(cmd, &out);
    CHECK_MSG(rc == 0, "exit %d: %s", rc, out ? out : "");
    free(out);
    /* the whole space at 1000: its winner is the formula's optimum */
    char cfgs[16][64];
    int n = oob_configs(cfgs), opt = 0;
    for (int i = 1; i < n; i++)
        if (fake_time(cfgs[i]) < fake_time(cfgs[opt]))
            opt = i;
    char win1000[TPL_CONFIG_LEN], win2000[TPL_CONFIG_LEN], got[TPL_CONFIG_LEN];
    CHECK(best_at(dbpath, 1000, win1000, sizeof win1000));
    CHECK_STR(win1000, cfgs[opt]);
    CHECK(strcmp(win1000, "BLOCK=256,ITEMS=1,BAD=0") != 0);      /* not the default */
    /* 2000: the default plus the winner of 1000 */
    snprintf(cmd, sizeof cmd, fmt, th_build_dir(), th_build_dir(), dbpath, "2000", "2e", 2);
    rc = th_run(cmd, &out);
    CHECK_MSG(rc == 0 && strstr(out, "1 winners of other sizes first") &&
              strstr(out, "2 evaluated"), "exit %d: %s", rc, out ? out : "");
    free(out);
    CHECK(best_at(dbpath, 2000, win2000, sizeof win2000));
    CHECK_STR(win2000, win1000);
    /* 3000, after 2000 got a different winner by hand: nearest first */
    db *d = NULL;
    char err[256];
    CHECK_OK(db_open(&d, dbpath, 1, err, sizeof err));
    db_result *r = NULL;
    int nr = 0;
    CHECK_OK(db_results(d, NULL, "test_oob", &r, &nr));
    db_result extra = r[0];
    free(r);
    extra.id = 0;
    extra.problem.dims[0] = 2900;
    const char *near = strcmp(cfgs[opt], "BLOCK=512,ITEMS=4,BAD=0") != 0
                           ? "BLOCK=512,ITEMS=4,BAD=0" : "BLOCK=512,ITEMS=2,BAD=0";
    snprintf(extra.config, sizeof extra.config, "%s", near);
    snprintf(extra.status, sizeof extra.status, "%s", DB_OK);
    extra.time_ms = 0.01;
    CHECK_OK(db_store_result(d, &extra));
    db_close(d);
    snprintf(cmd, sizeof cmd, fmt, th_build_dir(), th_build_dir(), dbpath, "3000", "2e", 3);
    rc = th_run(cmd, &out);
    CHECK_MSG(rc == 0 && strstr(out, "2 winners of other sizes first"), "exit %d: %s", rc,
              out ? out : "");
    free(out);
    CHECK(best_at(dbpath, 3000, got, sizeof got));
    /* evaluated: the default and 2900's winner (nearest), not 1000's */
    CHECK(find_config_at(dbpath, 3000, near));
    CHECK(!find_config_at(dbpath, 3000, win1000));
}

/* The second look. 1000003 is searched alone (5 evaluations); then a
 * faster result of 250007 appears (stored by hand: the fake formula's
 * optimum, which that search missed); the run of both default sizes finds
 * 1000003's evaluation budget spent, searches 250007, and the second look
 * then measures 250007's winner on 1000003 too (its cubin is stored: no
 * compile), which becomes 1000003's best. A rerun measures nothing more. */
TEST(tuner_second_look_measures_later_winners)
{
    char dbpath[4300], cmd[16384], *out = NULL;
    snprintf(dbpath, sizeof dbpath, "%s/second_look.db", th_tmpdir());
    const char *fmt = "AUTOTUNE_WORKER='%s/autotune-test __fake_worker' %s/autotune-test "
                      "--device 0 --kernel test_wide --db %s --strategy random --budget 5e "
                      "--seed 7%s";
    snprintf(cmd, sizeof cmd, fmt, th_build_dir(), th_build_dir(), dbpath, " --size 1000003");
    int rc = th_run(cmd, &out);
    CHECK_MSG(rc == 0, "exit %d: %s", rc, out ? out : "");
    free(out);
    /* the formula's optimum over the 96 configurations */
    char opt[TPL_CONFIG_LEN] = "", text[TPL_CONFIG_LEN];
    const int blocks[] = {64, 128, 256, 512}, items[] = {1, 2, 4};
    for (int b = 0; b < 4; b++)
        for (int i = 0; i < 3; i++)
            for (int r = 1; r <= 8; r++) {
                snprintf(text, sizeof text, "BLOCK=%d,ITEMS=%d,REPEAT=%d", blocks[b], items[i],
                         r);
                if (!opt[0] || fake_time(text) < fake_time(opt))
                    snprintf(opt, sizeof opt, "%s", text);
            }
    db_result *first = NULL;
    int n1 = oob_rows_wide(dbpath, 1000003, &first);
    CHECK(n1 == 5);
    CHECK(n1 > 0 && !find_config(first, n1, opt));      /* the search missed it */
    db *d = NULL;
    char err[256];
    CHECK_OK(db_open(&d, dbpath, 1, err, sizeof err));
    db_result later = first[0];
    free(first);
    later.id = 0;
    later.problem.dims[0] = 250007;
    snprintf(later.config, sizeof later.config, "%s", opt);
    snprintf(later.status, sizeof later.status, "%s", DB_OK);
    later.time_ms = later.time_min_ms = later.time_max_ms = fake_time(opt);
    CHECK_OK(db_store_result(d, &later));
    db_close(d);

    snprintf(cmd, sizeof cmd, fmt, th_build_dir(), th_build_dir(), dbpath, "");
    rc = th_run(cmd, &out);
    CHECK_MSG(rc == 0 && out && strstr(out, "test_wide 1000003: second look, 1 winners of "
                                       "other sizes measured") && strstr(out, opt),
              "exit %d: %s", rc, out ? out : "");
    free(out);
    n1 = oob_rows_wide(dbpath, 1000003, &first);
    CHECK_MSG(n1 == 6 && find_config(first, n1, opt), "1000003: %d results", n1);
    const db_result *best = fastest_row(first, n1);
    CHECK(best && strcmp(best->config, opt) == 0);
    free(first);
    /* a rerun (resume) finds everything measured: no second look line */
    rc = th_run(cmd, &out);
    CHECK_MSG(rc == 0 && out && !strstr(out, "second look"), "exit %d: %s", rc,
              out ? out : "");
    free(out);
    CHECK(oob_rows_wide(dbpath, 1000003, &first) == 6);
    free(first);
}

TEST(tuner_fake_worker_anneal_no_duplicates)
{
    char cfgs[16][64];
    int n = oob_configs(cfgs);
    double opt = INFINITY;
    for (int i = 0; i < n; i++)
        opt = fmin(opt, fake_time(cfgs[i]));
    char dbpath[4300], cmd[16384], *out = NULL;
    snprintf(dbpath, sizeof dbpath, "%s/anneal.db", th_tmpdir());
    snprintf(cmd, sizeof cmd,
             "AUTOTUNE_WORKER='%s/autotune-test __fake_worker' AUTOTUNE_FAKE='delay=5' "
             "%s/autotune-test --device 0 --kernel test_oob --db %s --strategy anneal "
             "--budget 100e --seed 4 --jobs 8 --quiet",
             th_build_dir(), th_build_dir(), dbpath);
    int rc = th_run(cmd, &out);
    CHECK_MSG(rc == 0, "exit %d: %s", rc, out ? out : "");
    /* the whole small space, each configuration once (the default too) */
    CHECK_MSG(strstr(out, "13 evaluated, 0 failed") != NULL, "%s", out);
    free(out);
    db *d = NULL;
    char err[256];
    CHECK_OK(db_open(&d, dbpath, 0, err, sizeof err));
    db_result *r = NULL;
    int nr = 0;
    CHECK_OK(db_results(d, NULL, "test_oob", &r, &nr));
    CHECK_EQ(nr, n);
    double best = INFINITY;
    for (int i = 0; i < nr; i++) {
        CHECK(find_config(r, nr, cfgs[i]) != NULL);
        if (strcmp(r[i].status, DB_OK) == 0)
            best = fmin(best, r[i].time_ms);
    }
    CHECK(fabs(best - opt) < 1e-9);
    free(r);
    db_close(d);
    /* a budget in evaluations is respected */
    snprintf(dbpath, sizeof dbpath, "%s/budget.db", th_tmpdir());
    snprintf(cmd, sizeof cmd,
             "AUTOTUNE_WORKER='%s/autotune-test __fake_worker' "
             "%s/autotune-test --device 0 --kernel test_oob --db %s --strategy random "
             "--budget 5e --seed 4 --quiet",
             th_build_dir(), th_build_dir(), dbpath);
    rc = th_run(cmd, &out);
    CHECK_MSG(rc == 0 && strstr(out, "5 evaluated"), "exit %d: %s", rc, out ? out : "");
    free(out);
    CHECK_EQ(count_rows(dbpath, "test_oob"), 5);
}

/* ---- the worker dies in any phase (the fake worker's die= directives) ---- */

/* Runs autotune-test on kernel with the fake worker and $AUTOTUNE_FAKE
 * `fake`; its output (malloc'd) in *out, its exit status returned. */
static int fake_run(const char *kernel, const char *dbpath, const char *fake, char **out)
{
    char cmd[16384];
    snprintf(cmd, sizeof cmd,
             "AUTOTUNE_WORKER='%s/autotune-test __fake_worker' AUTOTUNE_FAKE='%s' "
             "%s/autotune-test --device 0 --kernel %s --db %s --seed 3 --jobs 2 --quiet",
             th_build_dir(), fake, th_build_dir(), kernel, dbpath);
    return th_run(cmd, out);
}

#define FAKE_PHASES 8                  /* open ... idle (fake_worker.c) */

/* Deaths the fake worker counted in its state file (events of any phase,
 * of each phase, deaths, deaths by phase); by phase into by[] if not NULL.
 * -1 if there is no state file. */
static long long fake_kills(const char *state, long long *by)
{
    long long v[2 + 2 * FAKE_PHASES] = {0};
    FILE *f = fopen(state, "r");
    if (!f)
        return -1;
    for (int i = 0; i < 2 + 2 * FAKE_PHASES; i++)
        if (fscanf(f, "%lld", &v[i]) != 1)
            break;
    fclose(f);
    for (int i = 0; by && i < FAKE_PHASES; i++)
        by[i] = v[2 + FAKE_PHASES + i];
    return v[1 + FAKE_PHASES];
}

static int cmp_text(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The rows of kernel as sorted "size config status time" lines in one
 * malloc'd string; NULL if the database cannot be read. */
static char *rows_text(const char *dbpath, const char *kernel)
{
    db *d = NULL;
    char err[256];
    db_result *r = NULL;
    int n = 0;
    if (db_open(&d, dbpath, 0, err, sizeof err) != AT_OK)
        return NULL;
    int ok = db_results(d, NULL, kernel, &r, &n) == AT_OK;
    db_close(d);
    char **lines = calloc((size_t)n + 1, sizeof *lines);
    char *text = ok && lines ? calloc((size_t)n + 1, 700) : NULL;
    for (int i = 0; text && i < n; i++) {
        lines[i] = malloc(700);
        if (lines[i])
            snprintf(lines[i], 700, "%lld %s %s %.6f\n", r[i].problem.dims[0], r[i].config,
                     r[i].status, r[i].time_ms);
    }
    if (text)
        qsort(lines, (size_t)n, sizeof *lines, cmp_text);
    for (int i = 0; text && i < n; i++)
        if (lines[i])
            strcat(text, lines[i]);
    for (int i = 0; lines && i < n; i++)
        free(lines[i]);
    free(lines);
    free(r);
    return text;
}

/* Checks what a disturbed test_oob run stored against the fake worker's
 * formula: every valid configuration once, measured (ok or abandoned) at
 * the formula's time, except `crashed` rows crashed by the worker dying
 * twice; the best stored is the formula's fastest measured one. */
static void check_oob_rows(const char *dbpath, int crashed)
{
    char cfgs[16][64];
    int n = oob_configs(cfgs), n_crashed = 0;
    db_result *r;
    int nr = oob_rows_at(dbpath, 1000003, &r);
    CHECK_EQ(nr, n);
    const char *opt = NULL;
    for (int i = 0; i < n; i++) {
        const db_result *x = find_config(r, nr, cfgs[i]);
        CHECK_MSG(x, "%s not stored", cfgs[i]);
        if (strcmp(x->status, DB_CRASHED) == 0) {
            CHECK_MSG(strstr(x->error, "died on it twice"), "%s: %s", x->config, x->error);
            n_crashed++;
            continue;
        }
        CHECK_MSG(strcmp(x->status, DB_OK) == 0 || strcmp(x->status, DB_ABANDONED) == 0,
                  "%s: %s (%s)", x->config, x->status, x->error);
        CHECK(fabs(x->time_ms - fake_time(x->config)) < 1e-9);
        if (!opt || fake_time(x->config) < fake_time(opt))
            opt = x->config;
    }
    CHECK_EQ(n_crashed, crashed);
    char best[TPL_CONFIG_LEN];
    CHECK(best_at(dbpath, 1000003, best, sizeof best));
    CHECK_STR(best, opt);
    free(r);
}

/* A run of test_oob whose fake worker dies at the events of `die` (events
 * counted across its workers): it ends with exit 0, `kills` deaths and as
 * many steps retried, and every result (check_oob_rows). */
static void survives(const char *die, int kills)
{
    char dir[4300], dbpath[4400], state[4400], fake[9000], *out = NULL;
    snprintf(dir, sizeof dir, "%s", th_tmpdir());
    snprintf(dbpath, sizeof dbpath, "%s/die.db", dir);
    snprintf(state, sizeof state, "%s/die.state", dir);
    snprintf(fake, sizeof fake, "%s;state=%s", die, state);
    int rc = fake_run("test_oob", dbpath, fake, &out);
    CHECK_MSG(rc == 0, "%s: exit %d: %s", die, rc, out ? out : "");
    CHECK_EQ(fake_kills(state, NULL), kills);
    char want[64];
    snprintf(want, sizeof want, "%d retried after the worker died", kills);
    CHECK_MSG(strstr(out, want) && strstr(out, "13 evaluated"), "%s: %s", die, out);
    free(out);
    check_oob_rows(dbpath, 0);
}

/* start: the first start, and a restart after a death in verification */
TEST(tuner_worker_dies_at_start)
{
    survives("die=open:1;die=verify:4;die=open:3", 3);
}

TEST(tuner_worker_dies_measuring_the_ceiling)
{
    survives("die=ceiling:1", 1);
}

/* input preparation: the first, and the one after a death in timing */
TEST(tuner_worker_dies_preparing_inputs)
{
    survives("die=prepare:1;die=time:6;die=prepare:3", 3);
}

/* with the request's first bytes read, its cubin not */
TEST(tuner_worker_dies_in_compile_handoff)
{
    survives("die=handoff:5", 1);
}

TEST(tuner_worker_dies_verifying)
{
    survives("die=verify:5", 1);
}

TEST(tuner_worker_dies_timing)
{
    survives("die=time:5", 1);
}

/* half of the reply written */
TEST(tuner_worker_dies_replying)
{
    survives("die=reply:5", 1);
}

/* between requests: replaced before the next one (or, when its death is
 * not visible yet, on the next one's retry) */
TEST(tuner_worker_dies_between_requests)
{
    char dir[4300], dbpath[4400], fake[9000], state[4400], *out = NULL;
    snprintf(dir, sizeof dir, "%s", th_tmpdir());
    snprintf(dbpath, sizeof dbpath, "%s/idle.db", dir);
    snprintf(state, sizeof state, "%s/idle.state", dir);
    snprintf(fake, sizeof fake, "die=idle:5;state=%s", state);
    int rc = fake_run("test_oob", dbpath, fake, &out);
    CHECK_MSG(rc == 0 && strstr(out, "13 evaluated, 0 failed") &&
              strstr(out, "(1 worker restarts"), "exit %d: %s", rc, out ? out : "");
    free(out);
    CHECK_EQ(fake_kills(state, NULL), 1);
    check_oob_rows(dbpath, 0);
}

/* dying on a configuration twice (in verification, then in its retry's
 * timing) records it as crashed; the search goes on */
TEST(tuner_worker_dies_twice_on_a_configuration)
{
    char dir[4300], dbpath[4400], fake[9000], *out = NULL;
    snprintf(dir, sizeof dir, "%s", th_tmpdir());
    snprintf(dbpath, sizeof dbpath, "%s/twice.db", dir);
    snprintf(fake, sizeof fake, "die=verify:5;die=time:5;state=%s/twice.state", dir);
    int rc = fake_run("test_oob", dbpath, fake, &out);
    CHECK_MSG(rc == 0 && strstr(out, "13 evaluated, 1 failed"), "exit %d: %s", rc,
              out ? out : "");
    free(out);
    check_oob_rows(dbpath, 1);
}

/* Input preparation that kills the worker twice skips the problem, keeps
 * its results and goes on with the others (exit 1); a worker that cannot
 * start ends the run, at the start or later, keeping what was stored. */
TEST(tuner_worker_lost_preparing_twice_or_unable_to_start)
{
    char dir[4300], dbpath[4400], fake[9000], *out = NULL;
    snprintf(dir, sizeof dir, "%s", th_tmpdir());
    snprintf(dbpath, sizeof dbpath, "%s/skip.db", dir);
    /* the 10th evaluation of size 1000003 kills it; preparing again, twice */
    snprintf(fake, sizeof fake, "die=verify:10;die=prepare:2;die=prepare:3;state=%s/skip.state",
             dir);
    int rc = fake_run("test_wide", dbpath, fake, &out);
    CHECK_MSG(rc == 1, "exit %d: %s", rc, out ? out : "");
    CHECK_MSG(strstr(out, "test_wide 1000003 skipped: preparing the inputs killed the "
                          "worker twice") &&
              strstr(out, "its 9 results stored are kept") &&
              strstr(out, "test_wide 250007: 96 evaluated, 0 failed") &&
              strstr(out, "1 problem skipped"), "%s", out);
    /* the skipped problem still gets its second look (as every problem
     * searched before its family's last): the winner of 250007 measured */
    CHECK_MSG(strstr(out, "test_wide 1000003: second look, 1 winners of other sizes"), "%s",
              out);
    free(out);
    db_result *r;
    CHECK_EQ(oob_rows_wide(dbpath, 1000003, &r), 10);
    free(r);
    CHECK_EQ(oob_rows_wide(dbpath, 250007, &r), 96);
    free(r);

    /* no start at all: no state file, so every worker dies opening */
    snprintf(dbpath, sizeof dbpath, "%s/nostart.db", dir);
    rc = fake_run("test_oob", dbpath, "die=open:1", &out);
    CHECK_MSG(rc == 1 && strstr(out, "autotune: the worker cannot start: ") &&
              strstr(out, "died twice while starting: killed by signal 9"), "exit %d: %s", rc,
              out ? out : "");
    free(out);
    /* a restart that fails twice, after two results */
    snprintf(dbpath, sizeof dbpath, "%s/late.db", dir);
    snprintf(fake, sizeof fake, "die=verify:3;die=open:2;die=open:3;state=%s/late.state", dir);
    rc = fake_run("test_oob", dbpath, fake, &out);
    CHECK_MSG(rc == 1 && strstr(out, "autotune: the worker cannot start: "), "exit %d: %s", rc,
              out ? out : "");
    free(out);
    CHECK_EQ(count_rows(dbpath, "test_oob"), 2);
}

/* The fake worker SIGKILLs itself at 20 random moments of one run of
 * test_wide (two sizes, 96 configurations each, about 960 events from
 * start to the last reply): the moments are events of any phase, at least
 * 8 apart so that each retry finishes before the next death. The run ends
 * with exit 0, a retry for each death (but those between requests that are
 * seen before the next one), and the rows and best of an undisturbed run. */
TEST(tuner_worker_killed_at_20_random_moments)
{
    unsigned long long seed = (unsigned long long)time(NULL);
    const char *env = getenv("AUTOTUNE_KILL_SEED");
    if (env && *env)
        seed = strtoull(env, NULL, 10);
    printf("    kill seed %llu (AUTOTUNE_KILL_SEED=%llu replays it)\n", seed, seed);
    tn_rng rng;
    tn_rng_seed(&rng, seed);
    char dir[4300], calm[4400], hit[4400], fake[9000], *out = NULL;
    snprintf(dir, sizeof dir, "%s", th_tmpdir());
    snprintf(calm, sizeof calm, "%s/calm.db", dir);
    snprintf(hit, sizeof hit, "%s/hit.db", dir);
    int used = snprintf(fake, sizeof fake, "state=%s/hit.state", dir);
    long long event = 1 + (long long)tn_rng_below(&rng, 8);
    for (int k = 0; k < 20; k++) {
        used += snprintf(fake + used, sizeof fake - (size_t)used, ";die=%lld", event);
        event += 8 + (long long)tn_rng_below(&rng, 31);
    }
    printf("    %s\n", fake);
    int rc = fake_run("test_wide", calm, "", &out);
    CHECK_MSG(rc == 0, "undisturbed: exit %d: %s", rc, out ? out : "");
    free(out);
    rc = fake_run("test_wide", hit, fake, &out);
    const char *retried = out ? strstr(out, " retried after the worker died") : NULL;
    while (retried && retried > out && retried[-1] != ' ')
        retried--;
    int n_retried = retried ? atoi(retried) : 0;
    CHECK_MSG(rc == 0, "exit %d: %s", rc, out ? out : "");
    free(out);
    char state[4400];
    snprintf(state, sizeof state, "%s/hit.state", dir);
    long long by[FAKE_PHASES];
    CHECK_EQ(fake_kills(state, by), 20);
    printf("    deaths: open %lld, ceiling %lld, prepare %lld, handoff %lld, verify %lld, "
           "time %lld, reply %lld, idle %lld; %d retried\n", by[0], by[1], by[2], by[3], by[4],
           by[5], by[6], by[7], n_retried);
    CHECK(n_retried >= 20 - by[7] && n_retried <= 20);
    char *a = rows_text(calm, "test_wide"), *b = rows_text(hit, "test_wide");
    CHECK(a && b);
    int same = strcmp(a, b) == 0;
    CHECK_MSG(same, "rows differ:\n--- undisturbed\n%s--- killed\n%s", a, b);
    CHECK(strstr(a, " crashed ") == NULL);
    /* every configuration of both sizes, the best the formula's */
    for (int s = 0; s < 2; s++) {
        long long n = s ? 250007 : 1000003;
        db_result *r;
        int nr = oob_rows_wide(hit, n, &r);
        CHECK_EQ(nr, 96);
        const char *opt = NULL;
        for (int i = 0; i < nr; i++)
            if (!opt || fake_time(r[i].config) < fake_time(opt))
                opt = r[i].config;
        db *d = NULL;
        char err[256];
        db_result best;
        CHECK_OK(db_open(&d, hit, 0, err, sizeof err));
        CHECK_OK(db_best(d, r[0].device_uuid, "test_wide", r[0].source_hash, &r[0].problem, 0,
                         &best));
        db_close(d);
        CHECK_STR(best.config, opt);
        free(r);
    }
    free(a);
    free(b);
}

/* ---- the real worker killed on a GPU ---- */

/* 1 if a status is a measurement (ok or abandoned: which one depends on
 * noise and on the order of results). */
static int measured(const char *status)
{
    return strcmp(status, DB_OK) == 0 || strcmp(status, DB_ABANDONED) == 0;
}

/* Every row of ref has one in hit of the same configuration and kind of
 * status, unless the test killed the worker twice on it (crashed, "died on
 * it twice", counted in *twice). Returns the rows matched. */
static int match_rows(const db_result *ref, int n_ref, const db_result *hit, int n_hit,
                      int *twice)
{
    int matched = 0;
    *twice = 0;
    for (int i = 0; i < n_ref; i++) {
        const db_result *h = find_config(hit, n_hit, ref[i].config);
        if (!h)
            continue;
        if (strcmp(h->status, DB_CRASHED) == 0 && strstr(h->error, "died on it twice")) {
            printf("    %s: killed twice by the test (%s)\n", h->config, h->error);
            (*twice)++;
            matched++;
        } else if (measured(ref[i].status) ? measured(h->status)
                                            : strcmp(h->status, ref[i].status) == 0) {
            matched++;
        } else {
            printf("    %s: %s, undisturbed %s (%s)\n", h->config, h->status, ref[i].status,
                   h->error);
        }
    }
    return matched;
}

/* The real worker of `autotune` (its child running __worker) is SIGKILLed
 * at several random moments of a search of sum at 2^20 (seeded random
 * strategy, a budget of 400 evaluations, about 8 s on an H200 (80 took
 * 1.5 s, too short for two kills): the same configurations as an
 * undisturbed run). Each kill comes 0.8 to 1.8 s after a worker appears,
 * so that the retry of the step it hits has mostly finished before the
 * next (a configuration killed twice is recorded as crashed, and counted
 * here as the test's doing). The run ends with exit 0, a result for every
 * configuration of the undisturbed run, and its best: the same
 * configuration or a time within 3%. */
GPU_TEST(tuner_gpu_worker_killed_at_random_moments)
{
    unsigned long long seed = (unsigned long long)time(NULL);
    const char *env = getenv("AUTOTUNE_KILL_SEED");
    if (env && *env)
        seed = strtoull(env, NULL, 10);
    printf("    kill seed %llu (AUTOTUNE_KILL_SEED=%llu replays it)\n", seed, seed);
    tn_rng rng;
    tn_rng_seed(&rng, seed);
    char dir[4300], ref[4400], hit[4400], run[6000], sleeps[128] = "", cmd[16384];
    char *out = NULL;
    snprintf(dir, sizeof dir, "%s", th_tmpdir());
    snprintf(ref, sizeof ref, "%s/ref.db", dir);
    snprintf(hit, sizeof hit, "%s/hit.db", dir);
    for (int k = 0; k < 6; k++)
        snprintf(sleeps + strlen(sleeps), sizeof sleeps - strlen(sleeps), " %.2f",
                 0.8 + tn_rng_unit(&rng));
    const char *fmt = "env -u AUTOTUNE_WORKER -u AUTOTUNE_FAKE %s/autotune --device %d "
                      "--kernel sum --size 1048576 --strategy random --budget 400e --seed 5 "
                      "--quiet --db %s";
    snprintf(run, sizeof run, fmt, th_build_dir(), th_device(), ref);
    int rc = th_run(run, &out);
    CHECK_MSG(rc == 0, "undisturbed: exit %d: %s", rc, out ? out : "");
    free(out);
    snprintf(run, sizeof run, fmt, th_build_dir(), th_device(), hit);
    snprintf(cmd, sizeof cmd,
             "worker() { if command -v pgrep >/dev/null; then pgrep -P $1 -f __worker; "
             "else for c in $(cat /proc/$1/task/*/children 2>/dev/null); do "
             "tr '\\0' ' ' </proc/$c/cmdline 2>/dev/null | grep -q __worker && echo $c; "
             "done; fi | head -n 1; }; "
             "alive() { [ -e /proc/$1 ] && ! grep -q '^State:[[:space:]]*Z' /proc/$1/status; }; "
             "%s > %s/hit.log 2>&1 & pid=$!; kills=0; last=; "
             "for r in%s; do w=; "
             "while alive $pid; do w=$(worker $pid); "
             "[ -n \"$w\" ] && [ \"$w\" != \"$last\" ] && break; w=; sleep 0.05; "
             "done; [ -z \"$w\" ] && break; sleep $r; "
             "kill -9 $w 2>/dev/null && kills=$((kills+1)); last=$w; done; "
             "wait $pid; echo \"rc=$? kills=$kills\"; cat %s/hit.log",
             run, dir, sleeps, dir);
    th_run(cmd, &out);
    int kills = -1;
    const char *p = out ? strstr(out, "rc=") : NULL;
    rc = -1;
    if (p)
        sscanf(p, "rc=%d kills=%d", &rc, &kills);
    printf("    %d kills; %s", kills, out && strstr(out, "done:") ? strstr(out, "done:") : "\n");
    CHECK_MSG(rc == 0 && kills >= 2, "exit %d, %d kills: %s", rc, kills, out ? out : "");
    free(out);

    db_result *r0, *r1;
    int n0 = kernel_rows_at(ref, "sum", 1048576, &r0), n1 = kernel_rows_at(hit, "sum", 1048576,
                                                                          &r1);
    int twice = 0;
    int matched = match_rows(r0, n0, r1, n1, &twice);
    CHECK_MSG(n0 > 0 && n1 == n0 && matched == n0, "undisturbed %d rows, killed %d, %d matched",
              n0, n1, matched);
    db *d = NULL;
    char err[256];
    db_result b0, b1;
    CHECK_OK(db_open(&d, ref, 0, err, sizeof err));
    CHECK_OK(db_best(d, r0[0].device_uuid, "sum", r0[0].source_hash, &r0[0].problem, 0, &b0));
    db_close(d);
    CHECK_OK(db_open(&d, hit, 0, err, sizeof err));
    CHECK_OK(db_best(d, r1[0].device_uuid, "sum", r1[0].source_hash, &r1[0].problem, 0, &b1));
    db_close(d);
    printf("    best undisturbed %.4f ms %s; killed %.4f ms %s\n", b0.time_ms, b0.config,
           b1.time_ms, b1.config);
    CHECK_MSG(strcmp(b0.config, b1.config) == 0 || fabs(b1.time_ms - b0.time_ms) <= 0.03 *
              b0.time_ms, "bests differ: %.4f ms %s vs %.4f ms %s", b0.time_ms, b0.config,
              b1.time_ms, b1.config);
    free(r0);
    free(r1);
}

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
        CHECK_MSG(evaluated >= 1 && count_rows(dbpath, "test_slowcc") == evaluated,
                  "--device %s: %lld evaluated, %d rows: %s", devices[d], evaluated,
                  count_rows(dbpath, "test_slowcc"), out ? out : "");
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
