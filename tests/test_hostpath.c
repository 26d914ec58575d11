/* test_hostpath.c: a repeated GEMM call's host path on the CPU, through the fake driver
 * (th_fakegpu.h): the call table serves it without checks, family choice or plan lookup, with
 * only the context query and its launches as driver calls; the changes that must miss miss;
 * a trial's winner is what the table serves afterwards. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include "handle.h"
#include "harness.h"
#include "th_fakegpu.h"
#include "th_gemm.h"

#define TH_A ((const void *)(uintptr_t)0x10000000)
#define TH_B ((const void *)(uintptr_t)0x20000000)
#define TH_C ((void *)(uintptr_t)0x30000000)

/* A handle on the fake device with its own database, its context current, the vendor
 * candidate off (cuBLAS needs a real GPU) and trials as asked; NULL after a failed check. */
static at_handle *hp_handle(const char *name, int trials)
{
    char path[4300];
    snprintf(path, sizeof path, "%s/%s.db", th_tmpdir(), name);
    at_handle *h = NULL;
    at_status s = at_create(&h, 0, path);
    if (s != AT_OK) {
        th_fail(__FILE__, __LINE__, "at_create on the fake driver: %s", at_status_string(s));
        return NULL;
    }
    at_set_vendor(h, AT_VENDOR_OFF);
    at_set_trials(h, trials);
    th_fake_make_current(h);
    return h;
}

/* The canonical (row-major) problem of an m x n x k call of type t. */
static tpl_problem hp_problem(int m, int n, int k, at_dtype t)
{
    tpl_problem p;
    memset(&p, 0, sizeof p);
    p.n_dims = 3;
    p.dims[0] = m;
    p.dims[1] = n;
    p.dims[2] = k;
    p.dtype = t;
    return p;
}

/* Row-major NN call of m x n x k, tight leading dimensions. */
static at_status hp_gemm(at_handle *h, int m, int n, int k, at_dtype t, double alpha)
{
    return at_gemm(h, AT_ROW_MAJOR, AT_OP_N, AT_OP_N, m, n, k, t, alpha, TH_A, k, TH_B, n, 0.0,
                   TH_C, n);
}

static int hp_lookups(const at_handle *h)
{
    at_stats st;
    at_get_stats(h, &st);
    int n = 0;
    for (int i = 0; i < 5; i++)
        n += st.lookups[i];
    return n;
}

TEST(hostpath_repeated_call_is_served_from_the_call_table)
{
    if (!th_fake_child("hostpath_repeated_call_is_served_from_the_call_table"))
        return;
    at_handle *h = hp_handle("repeat", 0);
    CHECK(h);
    static const struct { int m, n, k; at_dtype t; } shapes[] = {
        {64, 64, 64, AT_R_16BF}, {512, 512, 256, AT_R_16BF}, {512, 512, 256, AT_R_32F},
        {256, 256, 256, AT_R_64F}, {384, 128, 512, AT_R_16F},
    };
    for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++) {
        tpl_problem p = hp_problem(shapes[i].m, shapes[i].n, shapes[i].k, shapes[i].t);
        CHECK_OK(th_fake_prestore(h, &p, 1));
        th_fake_reset();
        CHECK_OK(hp_gemm(h, shapes[i].m, shapes[i].n, shapes[i].k, shapes[i].t, 1.0));
        at_stats first;
        CHECK_OK(at_get_stats(h, &first));
        CHECK_EQ(first.compiled, 0);            /* the stand-in cubins served: no NVRTC */
        long long hits = h->call_hits;
        int lookups = hp_lookups(h);
        for (int rep = 0; rep < 3; rep++) {
            th_fake_reset();
            CHECK_OK(hp_gemm(h, shapes[i].m, shapes[i].n, shapes[i].k, shapes[i].t, 1.0));
            /* the driver calls of a repeated call: one context query and its launches */
            long long launches = th_fake_count("cuLaunchKernel") + th_fake_count("cuLaunchKernelEx");
            CHECK_MSG(launches >= 1, "%s: no launch", first.last_config);
            CHECK_EQ(th_fake_count("cuCtxGetCurrent"), 1);
            CHECK_EQ(th_fake_count("cuCtxPushCurrent"), 0);
            CHECK_MSG(th_fake_count("total") == 1 + launches + th_fake_count("cuMemset"),
                      "%s %s: %lld driver calls for %lld launches (module loads %lld, function "
                      "lookups %lld, attributes %lld, occupancy %lld, tensor maps %lld)",
                      first.last_kernel, first.last_config, th_fake_count("total"), launches,
                      th_fake_count("cuModuleLoadData"), th_fake_count("cuModuleGetFunction"),
                      th_fake_count("cuFuncGetAttribute"),
                      th_fake_count("cuOccupancyMaxActiveBlocksPerMultiprocessor") +
                          th_fake_count("cuOccupancyMaxActiveClusters"),
                      th_fake_count("cuTensorMapEncodeTiled"));
        }
        CHECK_EQ(h->call_hits, hits + 3);
        CHECK_EQ(hp_lookups(h), lookups);       /* no new plan */
        at_stats st;
        CHECK_OK(at_get_stats(h, &st));
        CHECK_STR(st.last_config, first.last_config);
    }
    CHECK_OK(at_destroy(h));
}

TEST(hostpath_changes_that_must_miss_the_call_table)
{
    if (!th_fake_child("hostpath_changes_that_must_miss_the_call_table"))
        return;
    at_handle *h = hp_handle("miss", 0);
    CHECK(h);
    int m = 96, n = 160, k = 128;
    tpl_problem p = hp_problem(m, n, k, AT_R_32F);
    CHECK_OK(th_fake_prestore(h, &p, 1));
    CHECK_OK(hp_gemm(h, m, n, k, AT_R_32F, 1.0));
    CHECK_OK(hp_gemm(h, m, n, k, AT_R_32F, 1.0));
    long long hits = h->call_hits;
    CHECK_EQ(hits, 1);

    /* other scalars, another stream: the same call (its launch on the new stream) */
    CHECK_OK(hp_gemm(h, m, n, k, AT_R_32F, -2.5));
    CHECK_EQ(h->call_hits, ++hits);
    CUstream other = (CUstream)(uintptr_t)0x5701;
    CHECK_OK(at_set_stream(h, other));
    CHECK_OK(hp_gemm(h, m, n, k, AT_R_32F, 1.0));
    CHECK_EQ(h->call_hits, ++hits);
    CHECK(th_fake_last_stream() == other);
    CHECK_OK(at_set_stream(h, NULL));

    /* a refused argument is refused on a remembered call too, with the same message */
    CHECK_EQ(hp_gemm(h, m, n, k, AT_R_32F, NAN), AT_ERR_INVALID_ARG);
    CHECK(strstr(at_errmsg(h), "finite") != NULL);
    CHECK_EQ(at_gemm(h, AT_ROW_MAJOR, AT_OP_N, AT_OP_N, m, n, k, AT_R_32F, 1.0, TH_A, k, TH_B, n,
                     0.0, NULL, n), AT_ERR_INVALID_ARG);
    CHECK(strstr(at_errmsg(h), "NULL") != NULL);
    CHECK_EQ(h->call_hits, hits);

    /* another leading dimension: a miss, served by the same plan */
    int lookups = hp_lookups(h);
    CHECK_OK(at_gemm(h, AT_ROW_MAJOR, AT_OP_N, AT_OP_N, m, n, k, AT_R_32F, 1.0, TH_A, k + 8, TH_B,
                     n, 0.0, TH_C, n));
    CHECK_EQ(h->call_hits, hits);
    CHECK_EQ(hp_lookups(h), lookups);
    CHECK_OK(at_gemm(h, AT_ROW_MAJOR, AT_OP_N, AT_OP_N, m, n, k, AT_R_32F, 1.0, TH_A, k + 8, TH_B,
                     n, 0.0, TH_C, n));
    CHECK_EQ(h->call_hits, ++hits);

    /* TF32 math: another problem, so a miss and a new plan (another kernel: its TYPE) */
    at_stats st, exact;
    CHECK_OK(at_get_stats(h, &exact));
    tpl_problem tf32 = p;
    tf32.math = AT_MATH_TF32;
    CHECK_OK(th_fake_prestore(h, &tf32, 1));
    CHECK_OK(at_set_math_mode(h, AT_MATH_TF32));
    CHECK_OK(hp_gemm(h, m, n, k, AT_R_32F, 1.0));
    CHECK_EQ(h->call_hits, hits);
    CHECK_EQ(hp_lookups(h), lookups + 1);
    CHECK_OK(at_get_stats(h, &st));
    CHECK_MSG(strcmp(st.last_config, exact.last_config) != 0, "TF32 ran exact FP32's %s",
              st.last_config);
    CHECK_OK(at_set_math_mode(h, AT_MATH_DEFAULT));
    CHECK_OK(hp_gemm(h, m, n, k, AT_R_32F, 1.0));
    CHECK_EQ(h->call_hits, ++hits);
    CHECK_OK(at_get_stats(h, &st));
    CHECK_STR(st.last_config, exact.last_config);

    /* column-major: another key, the row-major canonical form's plan of the swapped sizes */
    tpl_problem col = hp_problem(n, m, k, AT_R_32F);
    CHECK_OK(th_fake_prestore(h, &col, 1));
    for (int rep = 0; rep < 2; rep++)
        CHECK_OK(at_gemm(h, AT_COL_MAJOR, AT_OP_N, AT_OP_N, m, n, k, AT_R_32F, 1.0, TH_A, m, TH_B,
                         k, 0.0, TH_C, m));
    CHECK_EQ(h->call_hits, ++hits);

    /* a database layer added (the handle's own file, read-only): the table starts over (a
     * problem's family may come from a new layer) */
    CHECK_OK(at_add_readonly_db(h, h->db_path));
    CHECK_OK(hp_gemm(h, m, n, k, AT_R_32F, 1.0));
    CHECK_EQ(h->call_hits, hits);
    CHECK_OK(hp_gemm(h, m, n, k, AT_R_32F, 1.0));
    CHECK_EQ(h->call_hits, ++hits);

    /* deterministic mode: another key */
    CHECK_OK(at_set_deterministic(h, 1));
    CHECK_OK(th_fake_prestore(h, &p, 1));
    at_status s = hp_gemm(h, m, n, k, AT_R_32F, 1.0);
    CHECK_MSG(s == AT_OK || s == AT_ERR_UNSUPPORTED, "%s", at_status_string(s));
    CHECK_EQ(h->call_hits, hits);
    CHECK_OK(at_destroy(h));
}

TEST(hostpath_many_shapes_in_turn_stay_in_the_call_table)
{
    if (!th_fake_child("hostpath_many_shapes_in_turn_stay_in_the_call_table"))
        return;
    at_handle *h = hp_handle("many", 0);
    CHECK(h);
    enum { SHAPES = 20, ROUNDS = 4 };   /* more than the family memory's 8 problems */
    for (int s = 0; s < SHAPES; s++) {
        tpl_problem p = hp_problem(64 + 16 * s, 256, 128, AT_R_16BF);
        CHECK_OK(th_fake_prestore(h, &p, 1));
    }
    /* the stats name each call's own kernel (written when asked for, not per call) */
    static char configs[SHAPES][512];
    char kernels[SHAPES][32];
    for (int r = 0; r < ROUNDS; r++)
        for (int s = 0; s < SHAPES; s++) {
            CHECK_OK(hp_gemm(h, 64 + 16 * s, 256, 128, AT_R_16BF, 1.0));
            at_stats st;
            CHECK_OK(at_get_stats(h, &st));
            if (r == 0) {
                snprintf(configs[s], sizeof configs[s], "%s", st.last_config);
                snprintf(kernels[s], sizeof kernels[s], "%s", st.last_kernel);
                continue;
            }
            CHECK_STR(st.last_config, configs[s]);
            CHECK_STR(st.last_kernel, kernels[s]);
        }
    CHECK_EQ(h->call_hits, SHAPES * (ROUNDS - 1));
    int differ = 0;                     /* the shapes span more than one kernel */
    for (int s = 1; s < SHAPES; s++)
        differ += strcmp(configs[s], configs[0]) != 0;
    CHECK_MSG(differ > 0, "every shape ran %s", configs[0]);
    CHECK_EQ(hp_lookups(h), SHAPES);
    CHECK_OK(at_destroy(h));
}

TEST(hostpath_trial_winner_is_served_through_the_call_table)
{
    if (!th_fake_child("hostpath_trial_winner_is_served_through_the_call_table"))
        return;
    at_handle *h = hp_handle("trial", AT_TRIALS_DEFAULT);
    CHECK(h);
    int m = 200, n = 300, k = 64;
    tpl_problem p = hp_problem(m, n, k, AT_R_16BF);
    CHECK_OK(th_fake_prestore(h, &p, 0));
    /* the fake's event pairs read 10 ms less 0.1 ms per module number: the last module loaded
     * (a trial candidate, never the plan's first kernel) is the fastest */
    for (int module = 1; module < 64; module++)
        th_fake_set_module_ms(module, 10.0f - 0.1f * (float)module);
    th_fake_reset();
    /* the trial log (AUTOTUNE_TRIAL_LOG) gets one line per candidate, the chosen one marked */
    char log_path[sizeof h->trial_log];
    snprintf(log_path, sizeof log_path, "%s/hostpath_trial.log", th_tmpdir());
    remove(log_path);
    snprintf(h->trial_log, sizeof h->trial_log, "%s", log_path);
    at_stats st;
    int calls = 0;
    do {
        CHECK_OK(hp_gemm(h, m, n, k, AT_R_16BF, 1.0));
        CHECK_OK(at_get_stats(h, &st));
        calls++;
        /* each trial call starts on an idle stream (its time is the call's whole latency) */
        if (st.trials == 0)
            CHECK_MSG(th_fake_count("cuSynchronize") >= calls, "%lld waits in %d trial calls",
                      th_fake_count("cuSynchronize"), calls);
    } while (st.trials == 0 && calls < 3 * AT_TRIALS_MAX + 1);
    CHECK_MSG(st.trials == 1, "no trial settled in %d calls", calls);
    long long loaded = th_fake_count("cuModuleLoadData");
    CHECK_MSG(loaded >= 2, "the trial had %lld kernels", loaded);
    CHECK_EQ(calls, 3 * loaded);        /* three rounds of every candidate */
    CHECK_EQ(h->call_hits, calls - 1);  /* the trial's calls came through the table too */
    for (int rep = 0; rep < 4; rep++) {
        CHECK_OK(hp_gemm(h, m, n, k, AT_R_16BF, 1.0));
        CHECK_EQ(th_fake_last_module(), loaded);
    }
    CHECK_EQ(h->call_hits, calls - 1 + 4);
    at_stats after;
    CHECK_OK(at_get_stats(h, &after));
    CHECK_STR(after.last_config, st.last_config);
    FILE *log = fopen(log_path, "r");
    CHECK_MSG(log, "no trial log at %s", log_path);
    char line[4096], chosen_config[1024] = "";
    int lines = 0, chosen = 0;
    double chosen_ms = -1, fastest_ms = 1e30;
    while (log && fgets(line, sizeof line, log)) {
        char shape[128], fam[64], mark[16], runner[64], config[1024];
        int slot;
        double ms, t0, t1, t2;
        line[strcspn(line, "\n")] = '\0';
        CHECK_MSG(sscanf(line, "trial\t%127[^\t]\t%63[^\t]\t%d\t%15[^\t]\t%lf\t%lf\t%lf\t%lf\t"
                         "%63[^\t]\t%1023[^\n]", shape, fam, &slot, mark, &ms, &t0, &t1, &t2,
                         runner, config) == 10, "trial log line: %s", line);
        CHECK_EQ(slot, lines);
        /* the score is the fastest of the three calls (printed to 0.01 us) */
        double fastest = t0 < t1 ? (t0 < t2 ? t0 : t2) : (t1 < t2 ? t1 : t2);
        CHECK_MSG(ms > fastest - 0.006 && ms < fastest + 0.006, "score %.2f, times %.2f %.2f %.2f",
                  ms, t0, t1, t2);
        lines++;
        fastest_ms = ms < fastest_ms ? ms : fastest_ms;
        if (strcmp(mark, "chosen") == 0) {
            chosen++;
            chosen_ms = ms;
            snprintf(chosen_config, sizeof chosen_config, "%s", config);
        }
    }
    if (log)
        fclose(log);
    CHECK_EQ(lines, loaded);
    CHECK_EQ(chosen, 1);
    CHECK_MSG(chosen_ms == fastest_ms, "chosen %.2f us, fastest %.2f us", chosen_ms, fastest_ms);
    CHECK_STR(chosen_config, st.last_config);
    CHECK_OK(at_destroy(h));
}

/* A trial keeps the candidate whose fastest call was fastest: the last module loaded reads
 * 9.8-9.9 ms on every call, the plan's own first kernel 10 ms on two of its three calls but
 * 1 ms on one; the median would keep the last module, the fastest call keeps the first. */
TEST(hostpath_trial_scores_each_candidate_by_its_fastest_call)
{
    if (!th_fake_child("hostpath_trial_scores_each_candidate_by_its_fastest_call"))
        return;
    at_handle *h = hp_handle("trial_fastest", AT_TRIALS_DEFAULT);
    CHECK(h);
    int m = 200, n = 300, k = 64;
    tpl_problem p = hp_problem(m, n, k, AT_R_16BF);
    CHECK_OK(th_fake_prestore(h, &p, 0));
    for (int module = 1; module < 64; module++)
        th_fake_set_module_ms(module, 10.0f - 0.001f * (float)module);
    th_fake_reset();
    at_stats st;
    int calls = 0;
    long long first_module = -1;
    do {
        CHECK_OK(hp_gemm(h, m, n, k, AT_R_16BF, 1.0));
        if (calls == 0) {
            first_module = th_fake_last_module();   /* the plan's own kernel runs first */
            th_fake_set_module_first_ms((int)first_module, 1.0f);
        }
        CHECK_OK(at_get_stats(h, &st));
        calls++;
    } while (st.trials == 0 && calls < 3 * AT_TRIALS_MAX + 1);
    CHECK_MSG(st.trials == 1, "no trial settled in %d calls", calls);
    CHECK(th_fake_count("cuModuleLoadData") >= 2);
    CHECK_OK(hp_gemm(h, m, n, k, AT_R_16BF, 1.0));
    CHECK_EQ(th_fake_last_module(), first_module);
    CHECK_OK(at_destroy(h));
}

/* On a GPU: 10 shapes of two types and both orders called in turn (more than the 8 problems
 * the family memory holds), three rounds; every call's result against the float64 reference,
 * the later rounds served from the call table. */
GPU_TEST(hostpath_shapes_in_turn_compute_right_from_the_call_table)
{
    th_gemm_gpu g;
    CHECK(th_gemm_begin(&g));
    char path[4300];
    snprintf(path, sizeof path, "%s/hostpath_gpu.db", th_tmpdir());
    at_handle *h = NULL;
    CHECK_OK(at_create(&h, th_device(), path));
    enum { SHAPES = 10, ROUNDS = 3 };
    for (int r = 0; r < ROUNDS; r++)
        for (int s = 0; s < SHAPES; s++) {
            at_dtype t = s % 2 ? AT_R_32F : AT_R_16BF;
            at_order o = s % 3 ? AT_ROW_MAJOR : AT_COL_MAJOR;
            th_gemm_case c = th_gemm_case_of(t, 0, o, s % 4, 48 + 24 * s, 96 + 8 * s, 64 + 16 * s,
                                             0, 0, 0);
            c.alpha = 1.25;
            c.beta = s % 2 ? 0.5 : 0.0;
            double err = 0;
            int padding_ok = 0;
            at_status st = th_gemm_run(&g, h, &c, &err, &padding_ok);
            CHECK_MSG(st == AT_OK, "round %d shape %d: %s: %s", r, s, at_status_string(st),
                      at_errmsg(h));
            CHECK_MSG(err <= th_gemm_tolerance(t, c.k), "round %d shape %d (%dx%dx%d type %d): "
                      "error %.3g", r, s, c.m, c.n, c.k, (int)t, err);
            CHECK_MSG(padding_ok, "round %d shape %d wrote C's padding", r, s);
        }
    CHECK_MSG(h->call_hits >= SHAPES, "%lld calls from the call table", h->call_hits);
    CHECK_OK(at_destroy(h));
    th_gemm_end(&g);
}

/* Every plan keeps its scratch memory between calls (packed operands, split-K partials). When
 * device memory runs out, a call makes the other plans give theirs back and runs again: two
 * shapes that each pack an operand (an odd leading dimension) fit one after the other in room
 * for one; without a limit, the scratch plans keep stays bounded; at_destroy leaves nothing
 * allocated. */
TEST(hostpath_out_of_memory_releases_other_plans_scratch)
{
    if (!th_fake_child("hostpath_out_of_memory_releases_other_plans_scratch"))
        return;
    size_t start = th_fake_live_bytes();
    at_handle *h = hp_handle("oom_scratch", 0);
    CHECK(h);
    const int m[2] = {3001, 2001}, n = 512, k[2] = {1023, 2047};
    size_t held[2];
    for (int i = 0; i < 2; i++) {
        tpl_problem p = hp_problem(m[i], n, k[i], AT_R_16BF);
        CHECK_OK(th_fake_prestore(h, &p, 1));
        size_t before = th_fake_live_bytes();
        CHECK_OK(hp_gemm(h, m[i], n, k[i], AT_R_16BF, 1.0));
        held[i] = th_fake_live_bytes() - before;
        CHECK_MSG(held[i] >= (size_t)m[i] * (size_t)k[i] * 2,
                  "shape %d holds %zu bytes of scratch, no packed copy of A", i, held[i]);
    }
    CHECK_OK(at_destroy(h));
    CHECK_EQ((long long)th_fake_live_bytes(), (long long)start);
    /* again with room for the larger of the two plans' scratch only */
    h = hp_handle("oom_scratch_limited", 0);
    CHECK(h);
    size_t base = th_fake_live_bytes();
    th_fake_set_memory_limit(base + (held[0] > held[1] ? held[0] : held[1]) + 4096);
    for (int round = 0; round < 2; round++)
        for (int i = 0; i < 2; i++) {
            at_status s = hp_gemm(h, m[i], n, k[i], AT_R_16BF, 1.0);
            CHECK_MSG(s == AT_OK, "round %d, shape %d: %s (%s)", round, i, at_status_string(s),
                      at_errmsg(h));
        }
    th_fake_set_memory_limit(0);
    /* with no limit, what the plans keep stays bounded (a 32nd of the device's memory): two
     * shapes whose packed operands each take 3.2 GB leave one of them held */
    const int big_m[2] = {40000, 40002}, big_k = 40001;
    size_t big_held = 0;
    for (int i = 0; i < 2; i++) {
        tpl_problem p = hp_problem(big_m[i], 64, big_k, AT_R_16BF);
        CHECK_OK(th_fake_prestore(h, &p, 1));
        size_t before = th_fake_live_bytes();
        CHECK_OK(hp_gemm(h, big_m[i], 64, big_k, AT_R_16BF, 1.0));
        if (i == 0)
            big_held = th_fake_live_bytes() - before;
    }
    CHECK_MSG(big_held >= (size_t)big_m[0] * big_k * 2 &&
              th_fake_live_bytes() - base < 2 * big_held,
              "one big plan holds %zu bytes, both together %zu", big_held,
              th_fake_live_bytes() - base);
    CHECK_OK(at_destroy(h));
    CHECK_EQ((long long)th_fake_live_bytes(), (long long)start);
}
