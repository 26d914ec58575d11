/* test_strategy.c: the tuner's search strategies on a synthetic space (exhaustive, random,
 * anneal) and the worker protocol (messages, pipes, timeouts, sizes and budgets). */
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
    m.problem.epilogue = TPL_EPI(TPL_BIAS_COL, 2);   /* a fused epilogue travels to the worker */
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
    CHECK_EQ(d.problem.epilogue, TPL_EPI(TPL_BIAS_COL, 2));
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
