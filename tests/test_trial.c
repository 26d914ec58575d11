/* test_trial.c: the runtime's trials of nearby winners: lk_nearby's
 * candidate list on fixture databases (CPU tier), and on a GPU, an unseen
 * shape that times stored winners of a nearby shape on its own calls,
 * keeps the fastest and leaves it in the database for the next handle. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "autotune.h"
#include "cudrv.h"
#include "db.h"
#include "harness.h"
#include "lookup.h"
#include "tpl.h"
#include "trial.h"

/* ---------------- fixtures ---------------- */

/* A one-dimensional family whose value A=3 needs a large shared memory. */
static int near_valid(const int *cfg, const at_device_info *dev, char *why, size_t len)
{
    if (cfg[0] == 3 && dev && dev->smem_per_block_optin < 100000) {
        snprintf(why, len, "needs 100000 bytes of shared memory");
        return 0;
    }
    return 1;
}
static int near_deterministic(const int *cfg) { return cfg[1] == 0; }

static const tpl_family near_family = {
    .name = "near_family", .source = "reference.cu", .fixed_options = "",
    .n_dims = 1, .dim_names = {"n"},
    .n_params = 2,
    .params = {{"A", 3, {1, 2, 3}, "fake"}, {"ATOMIC", 2, {0, 1}, "1 = nondeterministic"}},
    .valid = near_valid, .deterministic = near_deterministic,
    .default_config = "A=1,ATOMIC=0",
};

static at_device_info fixture_device(const char *uuid, int smem)
{
    at_device_info info;
    memset(&info, 0, sizeof info);
    snprintf(info.uuid, sizeof info.uuid, "%s", uuid);
    snprintf(info.name, sizeof info.name, "Fake GPU %s", uuid);
    info.cc_major = 9;
    info.cc_minor = 0;
    info.smem_per_block_optin = smem;
    tpl_arch_name(9, 0, info.arch, sizeof info.arch);
    return info;
}

/* Stores an ok result of problem (n) and, when with_cubin, a (fake) cubin
 * for its configuration on sm_90. */
static at_status put_winner(db *d, const tpl_family *fam, const char *uuid,
                            const tpl_problem *p, const char *config, double ms,
                            double rel_error, int with_cubin)
{
    db_result r;
    memset(&r, 0, sizeof r);
    snprintf(r.device_uuid, sizeof r.device_uuid, "%s", uuid);
    snprintf(r.kernel, sizeof r.kernel, "%s", fam->name);
    snprintf(r.source_hash, sizeof r.source_hash, "%s", tpl_source_hash(fam));
    r.problem = *p;
    snprintf(r.config, sizeof r.config, "%s", config);
    snprintf(r.status, sizeof r.status, "%s", DB_OK);
    r.time_ms = r.time_min_ms = r.time_max_ms = ms;
    r.runs = 5;
    r.rel_error = rel_error;
    int cfg[TPL_MAX_PARAMS];
    char why[256];
    at_status s = tpl_config_parse(fam, config, cfg, why, sizeof why);
    r.deterministic = s == AT_OK && fam->deterministic ? fam->deterministic(cfg) : 0;
    if (s == AT_OK)
        s = db_store_result(d, &r);
    if (s != AT_OK || !with_cubin)
        return s;
    char key[128];
    tpl_binary_key(fam, cfg, "sm_90", key, sizeof key);
    static const unsigned char blob[16] = {0x7f, 'E', 'L', 'F'};
    return db_put_binary(d, key, fam->name, tpl_source_hash(fam), config, "sm_90", "13.0", "",
                         blob, sizeof blob);
}

static tpl_problem problem_n(long long n)
{
    tpl_problem p = TPL_PROBLEM(1, {n, 0, 0});
    return p;
}

/* Candidate list as one comma-free text: "cfg|cfg|..." for comparisons. */
static void list_text(const lk_candidate *c, int n, char *out, size_t len)
{
    out[0] = '\0';
    for (int i = 0; i < n; i++) {
        size_t used = strlen(out);
        snprintf(out + used, len - used, "%s%s", i ? "|" : "", c[i].config);
    }
}

/* ---------------- CPU tier ---------------- */

TEST(nearby_candidates_are_distinct_usable_stored_and_nearest_first)
{
    char path[4300], err[512], text[2048];
    snprintf(path, sizeof path, "%s/nearby.db", th_tmpdir());
    db *d = NULL;
    CHECK_OK(db_open(&d, path, DB_OPEN_CREATE, err, sizeof err));
    at_device_info a = fixture_device("GPU-a", 232448), b = fixture_device("GPU-b", 232448);
    CHECK_OK(db_put_device(d, &a, "13.0"));
    CHECK_OK(db_put_device(d, &b, "13.0"));
    tpl_problem p1024 = problem_n(1024), pbig = problem_n(1048576), p2048 = problem_n(2048);
    tpl_problem p4096 = problem_n(4096);
    /* this device: two winners at 1024, two at 2^20 (one repeats A=1) */
    CHECK_OK(put_winner(d, &near_family, "GPU-a", &p1024, "A=2,ATOMIC=0", 1.0, 0, 1));
    CHECK_OK(put_winner(d, &near_family, "GPU-a", &p1024, "A=1,ATOMIC=0", 2.0, 0, 1));
    CHECK_OK(put_winner(d, &near_family, "GPU-a", &pbig, "A=3,ATOMIC=1", 5.0, 0, 1));
    CHECK_OK(put_winner(d, &near_family, "GPU-a", &pbig, "A=1,ATOMIC=0", 6.0, 0, 1));
    /* the nearest winner of all, but no cubin is stored: a trial never compiles */
    CHECK_OK(put_winner(d, &near_family, "GPU-a", &p2048, "A=2,ATOMIC=1", 0.5, 0, 0));
    /* another device of the same architecture */
    CHECK_OK(put_winner(d, &near_family, "GPU-b", &p4096, "A=3,ATOMIC=0", 0.5, 0, 1));

    lk_candidate c[8];
    tpl_problem q = problem_n(2000);
    int n = lk_nearby(d, &a, &near_family, &q, 0, 8, c);
    list_text(c, n, text, sizeof text);
    /* distances: 1024 -> 0.67, 2^20 -> 6.26 (this device first), 4096 -> 0.72 (arch) */
    CHECK_STR(text, "A=2,ATOMIC=0|A=1,ATOMIC=0|A=3,ATOMIC=1|A=3,ATOMIC=0");
    CHECK(fabs(c[0].distance - log(2000.0 / 1024.0)) < 1e-9);
    CHECK(c[0].cfg[0] == 2 && c[0].cfg[1] == 0);
    /* the limit keeps the nearest */
    n = lk_nearby(d, &a, &near_family, &q, 0, 2, c);
    list_text(c, n, text, sizeof text);
    CHECK_STR(text, "A=2,ATOMIC=0|A=1,ATOMIC=0");
    /* deterministic mode drops the atomic configuration */
    n = lk_nearby(d, &a, &near_family, &q, 1, 8, c);
    list_text(c, n, text, sizeof text);
    CHECK_STR(text, "A=2,ATOMIC=0|A=1,ATOMIC=0|A=3,ATOMIC=0");
    /* a device too small for A=3 gets neither A=3 configuration */
    at_device_info small = fixture_device("GPU-a", 50000);
    n = lk_nearby(d, &small, &near_family, &q, 0, 8, c);
    list_text(c, n, text, sizeof text);
    CHECK_STR(text, "A=2,ATOMIC=0|A=1,ATOMIC=0");
    /* another kind of problem is never served */
    tpl_problem other = q;
    other.dtype = AT_R_64F;
    CHECK_EQ(lk_nearby(d, &a, &near_family, &other, 0, 8, c), 0);
    /* no database, no room */
    CHECK_EQ(lk_nearby(NULL, &a, &near_family, &q, 0, 8, c), 0);
    CHECK_EQ(lk_nearby(d, &a, &near_family, &q, 0, 0, c), 0);
    db_close(d);
}

/* An H200-like device with every limit a GEMM family's valid() reads. */
static at_device_info gemm_device(const char *uuid)
{
    at_device_info d = fixture_device(uuid, 232448);
    snprintf(d.name, sizeof d.name, "NVIDIA H200");
    d.sm_count = 132;
    d.smem_per_sm = 233472;
    d.regs_per_block = d.regs_per_sm = 65536;
    d.max_threads_per_block = 1024;
    d.max_threads_per_sm = 2048;
    return d;
}

/* Index of (fam, config) in the candidate list, -1 if absent. */
static int cand_index(const at_trial_candidate *c, int n, const tpl_family *fam,
                      const char *config)
{
    for (int i = 0; i < n; i++)
        if (c[i].fam == fam && strcmp(c[i].config, config) == 0)
            return i;
    return -1;
}

/* The trial's candidates (runtime/trial.c) for an FP32 call of 1100 x 1000 x 900 served by
 * matmul at the nearest level, with a matmul winner in the user's database and another in a
 * read-only layer: the plan's own first, both layers' winners, matmul's built-in choice and its
 * next row, skinny's built-in choice; every one distinct. $AUTOTUNE_GEMM_FAMILY, a call past
 * 2^35 flops, and a batch past AT_TRIAL_SECOND_MAX_BATCH narrow it; the exact level has no
 * trial; the default level has no stored winners. */
TEST(trial_candidates_layers_families_and_second_opinion)
{
    const tpl_family *mm = tpl_find("matmul"), *sk = tpl_find("skinny");
    CHECK(mm && sk && mm->n_baselines >= 2);
    at_device_info dev = gemm_device("GPU-trial");
    char upath[4300], spath[4300], err[512];
    snprintf(upath, sizeof upath, "%s/trial-user.db", th_tmpdir());
    snprintf(spath, sizeof spath, "%s/trial-shipped.db", th_tmpdir());
    remove(upath);
    remove(spath);
    db *user = NULL, *shipped = NULL;
    CHECK_OK(db_open(&user, upath, DB_OPEN_CREATE, err, sizeof err));
    CHECK_OK(db_open(&shipped, spath, DB_OPEN_CREATE, err, sizeof err));
    CHECK_OK(db_put_device(user, &dev, "13.0"));
    CHECK_OK(db_put_device(shipped, &dev, "13.0"));
    const char *in_user = mm->baselines[0].config, *in_shipped = mm->baselines[1].config;
    tpl_problem tuned = TPL_PROBLEM(3, {1024, 1024, 1024});
    CHECK_OK(put_winner(user, mm, dev.uuid, &tuned, in_user, 1.0, 0, 1));
    CHECK_OK(put_winner(shipped, mm, dev.uuid, &tuned, in_shipped, 1.5, 0, 1));
    db *layers[2] = {user, shipped};
    tpl_problem p = TPL_PROBLEM(3, {1100, 1000, 900});
    int served[TPL_MAX_PARAMS], first[TPL_MAX_PARAMS], next[TPL_MAX_PARAMS], skb[TPL_MAX_PARAMS];
    char first_text[TPL_CONFIG_LEN], next_text[TPL_CONFIG_LEN], sk_text[TPL_CONFIG_LEN];
    CHECK_OK(tpl_config_parse(mm, in_user, served, err, sizeof err));
    CHECK(tpl_builtin_config(mm, &dev, &p, 0, first, first_text, NULL));
    CHECK(tpl_builtin_config_nth(mm, &dev, &p, 0, 1, next, next_text, NULL));
    CHECK(tpl_builtin_config(sk, &dev, &p, 0, skb, sk_text, NULL));
    at_trial_request rq = {.layers = layers, .n_layers = 2, .dev = &dev, .fam = mm,
                           .problem = &p, .level = AT_LOOKUP_NEAREST, .cfg = served,
                           .config = in_user, .trial_max = AT_TRIALS_DEFAULT};
    at_trial_candidate c[AT_TRIALS_MAX];
    unsetenv("AUTOTUNE_GEMM_FAMILY");
    int n = at_trial_candidates(&rq, c, AT_TRIALS_MAX);
    CHECK(n >= 5 && n <= AT_TRIALS_MAX);
    CHECK(c[0].fam == mm && strcmp(c[0].config, in_user) == 0 && !c[0].builtin);
    int i_shipped = cand_index(c, n, mm, in_shipped), i_first = cand_index(c, n, mm, first_text);
    int i_next = cand_index(c, n, mm, next_text), i_skinny = cand_index(c, n, sk, sk_text);
    CHECK_MSG(i_shipped > 0 && !c[i_shipped].builtin, "the read-only layer's winner: %d",
              i_shipped);
    CHECK_MSG(i_first > 0 && c[i_first].builtin, "matmul's built-in choice: %d", i_first);
    CHECK_MSG(i_next > i_first && c[i_next].builtin, "matmul's next row: %d", i_next);
    CHECK_MSG(i_skinny > i_next && c[i_skinny].builtin, "skinny's built-in choice: %d", i_skinny);
    for (int i = 0; i < n; i++)
        for (int j = 0; j < i; j++)
            CHECK(c[i].fam != c[j].fam || strcmp(c[i].config, c[j].config) != 0);
    /* the rule's family alone: its stored winners and built-in choice, no next row */
    setenv("AUTOTUNE_GEMM_FAMILY", "main", 1);
    n = at_trial_candidates(&rq, c, AT_TRIALS_MAX);
    unsetenv("AUTOTUNE_GEMM_FAMILY");
    CHECK(cand_index(c, n, mm, in_shipped) > 0 && cand_index(c, n, mm, first_text) > 0);
    CHECK(cand_index(c, n, mm, next_text) < 0 && cand_index(c, n, sk, sk_text) < 0);
    /* past 2^35 flops: the same */
    tpl_problem big = TPL_PROBLEM(3, {8192, 8192, 8192});
    rq.problem = &big;
    n = at_trial_candidates(&rq, c, AT_TRIALS_MAX);
    for (int i = 0; i < n; i++)
        CHECK_MSG(c[i].fam == mm, "candidate %d of %s at 8192^3", i, c[i].fam->name);
    CHECK(!at_trial_widens(&rq));
    /* a batch of 33 small products: other families, but no next row of its own */
    tpl_problem batch = TPL_PROBLEM(3, {100, 100, 100});
    batch.batch = AT_TRIAL_SECOND_MAX_BATCH + 1;
    rq.problem = &batch;
    int bnext[TPL_MAX_PARAMS];
    char bnext_text[TPL_CONFIG_LEN];
    n = at_trial_candidates(&rq, c, AT_TRIALS_MAX);
    CHECK(at_trial_widens(&rq));
    if (tpl_builtin_config_nth(mm, &dev, &batch, 0, 1, bnext, bnext_text, NULL))
        CHECK(cand_index(c, n, mm, bnext_text) < 0);
    /* the exact level: no trial but the plan's own */
    rq.problem = &p;
    rq.level = AT_LOOKUP_EXACT;
    CHECK_EQ(at_trial_candidates(&rq, c, AT_TRIALS_MAX), 1);
    /* the default level: built-in choices only, the plan's own marked as one */
    rq.level = AT_LOOKUP_DEFAULT;
    rq.cfg = first;
    rq.config = first_text;
    n = at_trial_candidates(&rq, c, AT_TRIALS_MAX);
    CHECK(c[0].builtin && cand_index(c, n, mm, next_text) > 0 && cand_index(c, n, sk, sk_text) > 0);
    CHECK(cand_index(c, n, mm, in_user) < 0 && cand_index(c, n, mm, in_shipped) < 0);
    for (int i = 0; i < n; i++)
        CHECK(c[i].builtin);
    /* room for two: the plan's own and one more */
    CHECK_EQ(at_trial_candidates(&rq, c, 2), 2);
    db_close(user);
    db_close(shipped);
}

TEST(unverified_trial_result_serves_lookups_but_not_resume)
{
    char path[4300], err[512];
    snprintf(path, sizeof path, "%s/trial-resume.db", th_tmpdir());
    db *d = NULL;
    CHECK_OK(db_open(&d, path, DB_OPEN_CREATE, err, sizeof err));
    at_device_info a = fixture_device("GPU-a", 232448);
    CHECK_OK(db_put_device(d, &a, "13.0"));
    tpl_problem p = problem_n(3000);
    const char *hash = tpl_source_hash(&near_family);
    CHECK_OK(put_winner(d, &near_family, "GPU-a", &p, "A=2,ATOMIC=0", 1.0, -1, 1));
    CHECK_OK(put_winner(d, &near_family, "GPU-a", &p, "A=1,ATOMIC=0", 2.0, 1e-7, 1));
    /* the tuner measures (and verifies) the trial's configuration again ... */
    CHECK_EQ(db_has_result(d, "GPU-a", "near_family", hash, &p, "A=2,ATOMIC=0"), 0);
    CHECK_EQ(db_has_result(d, "GPU-a", "near_family", hash, &p, "A=1,ATOMIC=0"), 1);
    /* ... while the runtime's lookup serves it at the exact level */
    int cfg[TPL_MAX_PARAMS];
    char config[TPL_CONFIG_LEN];
    CHECK_EQ(lk_choose(d, &a, &near_family, &p, 0, cfg, config), AT_LOOKUP_EXACT);
    CHECK_STR(config, "A=2,ATOMIC=0");
    db_close(d);
}

TEST(set_trials_rejects_null_handle)
{
    CHECK_EQ(at_set_trials(NULL, 2), AT_ERR_INVALID_ARG);
}

/* ---------------- GPU tier ---------------- */

/* Sampled entries of C = A B (k x n row-major B), relative to the largest
 * |reference| among them: the worst error of 97 entries. */
static double sampled_error(int m, int n, int k, const float *A, const float *B,
                            const float *C)
{
    double worst = 0, scale = 1e-30;
    unsigned seed = 12345;
    for (int s = 0; s < 97; s++) {
        seed = seed * 1664525u + 1013904223u;
        int i = (int)(seed % (unsigned)m);
        seed = seed * 1664525u + 1013904223u;
        int j = (int)(seed % (unsigned)n);
        double ref = 0;
        for (int p = 0; p < k; p++)
            ref += (double)A[(size_t)i * k + p] * B[(size_t)p * n + j];
        scale = fmax(scale, fabs(ref));
        worst = fmax(worst, fabs(C[(size_t)i * n + j] - ref));
    }
    return worst / scale;
}

/* Compiles config for the device's arch and stores it with an ok result of
 * problem p claiming ms. */
static int store_compiled(db *d, const tpl_family *fam, const at_device_info *dev,
                          const tpl_problem *p, const char *config, double ms)
{
    int cfg[TPL_MAX_PARAMS];
    char why[256], key[128], options[4096];
    void *cubin = NULL;
    size_t size = 0;
    char *log = NULL;
    if (tpl_config_parse(fam, config, cfg, why, sizeof why) != AT_OK ||
        tpl_compile(fam, cfg, dev->arch, &cubin, &size, &log) != AT_OK) {
        free(log);
        return 0;
    }
    free(log);
    tpl_binary_key(fam, cfg, dev->arch, key, sizeof key);
    tpl_options_string(fam, cfg, dev->arch, options, sizeof options);
    at_status s = db_put_binary(d, key, fam->name, tpl_source_hash(fam), config, dev->arch,
                                tpl_nvrtc_version(), options, cubin, size);
    free(cubin);
    return s == AT_OK && put_winner(d, fam, dev->uuid, p, config, ms, 0, 0) == AT_OK;
}

/* The stored winners of 1024^3 claim the naive seed is fastest (so the
 * lookup serves it to a nearby shape), the register-tiled default slowest.
 * The trial must time all three on the caller's calls, keep the truly
 * fastest (the default), compute the right product on every call, compile
 * nothing, and leave the choice in the database for the next handle. */
GPU_TEST(trial_keeps_fastest_nearby_winner_and_remembers_it)
{
    const tpl_family *mm = tpl_find("matmul");
    CHECK(mm && mm->n_baselines >= 2);
    const char *naive = mm->baselines[0].config, *tiled = mm->baselines[1].config;
    at_status st;
    const cudrv *cu = cudrv_get(&st, NULL, 0);
    CHECK(cu && cu->Init(0) == CUDA_SUCCESS);
    at_device_info dev;
    char msg[512], path[4300], err[512];
    CHECK_OK(cudrv_device_info(cu, th_device(), &dev, msg, sizeof msg));
    /* the fast stored winner is the built-in choice for the trial's shape, which the trial
     * would otherwise add as a fourth candidate (compiled) */
    int fast_cfg[TPL_MAX_PARAMS];
    char fast[TPL_CONFIG_LEN];
    tpl_problem asked = TPL_PROBLEM(3, {1100, 1000, 900});
    CHECK(tpl_builtin_config(mm, &dev, &asked, 0, fast_cfg, fast, NULL));
    snprintf(path, sizeof path, "%s/trial-gpu.db", th_tmpdir());
    db *d = NULL;
    CHECK_OK(db_open(&d, path, DB_OPEN_CREATE, err, sizeof err));
    CHECK_OK(db_put_device(d, &dev, tpl_nvrtc_version()));
    tpl_problem tuned = TPL_PROBLEM(3, {1024, 1024, 1024});
    CHECK(store_compiled(d, mm, &dev, &tuned, naive, 1.0));
    CHECK(store_compiled(d, mm, &dev, &tuned, tiled, 1.5));
    CHECK(store_compiled(d, mm, &dev, &tuned, fast, 2.0));
    db_close(d);

    /* the rule's family alone: at the nearest level a call this small also times the other
     * families' nearest winners and built-in choices (tests/test_gemm_trials.c) */
    setenv("AUTOTUNE_GEMM_FAMILY", "main", 1);
    int m = 1100, n = 1000, k = 900;
    float *A = malloc((size_t)m * k * sizeof *A), *B = malloc((size_t)k * n * sizeof *B);
    float *C = malloc((size_t)m * n * sizeof *C);
    CHECK(A && B && C);
    unsigned seed = 7;
    for (size_t i = 0; i < (size_t)m * k; i++, seed = seed * 1664525u + 1013904223u)
        A[i] = (float)(seed >> 8) / 16777216.0f - 0.5f;
    for (size_t i = 0; i < (size_t)k * n; i++, seed = seed * 1664525u + 1013904223u)
        B[i] = (float)(seed >> 8) / 16777216.0f - 0.5f;
    CUdevice device;
    CUcontext ctx, popped;
    CHECK(cu->DeviceGet(&device, th_device()) == CUDA_SUCCESS &&
          cu->DevicePrimaryCtxRetain(&ctx, device) == CUDA_SUCCESS &&
          cu->CtxPushCurrent(ctx) == CUDA_SUCCESS);
    at_handle *h = NULL;
    CHECK_OK(at_create(&h, th_device(), path));
    CHECK_EQ(at_set_trials(h, AT_TRIALS_MAX + 1), AT_ERR_INVALID_ARG);
    CHECK_EQ(at_set_trials(h, -1), AT_ERR_INVALID_ARG);
    CUdeviceptr dA = 0, dB = 0, dC = 0;
    CHECK(cu->MemAlloc(&dA, (size_t)m * k * 4) == CUDA_SUCCESS &&
          cu->MemAlloc(&dB, (size_t)k * n * 4) == CUDA_SUCCESS &&
          cu->MemAlloc(&dC, (size_t)m * n * 4) == CUDA_SUCCESS);
    CHECK(cu->MemcpyHtoD(dA, A, (size_t)m * k * 4) == CUDA_SUCCESS &&
          cu->MemcpyHtoD(dB, B, (size_t)k * n * 4) == CUDA_SUCCESS);
    at_stats stats;
    for (int call = 0; call < 3 * 3 + 2; call++) {
        CHECK(cu->MemsetD32Async(dC, 0x7fc00000u, (size_t)m * n, 0) == CUDA_SUCCESS); /* NaN */
        CHECK_MSG(at_sgemm(h, m, n, k, 1.0f, (const float *)dA, k, (const float *)dB, n, 0.0f,
                           (float *)dC, n) == AT_OK, "call %d: %s", call, at_errmsg(h));
        CHECK(cu->MemcpyDtoH(C, dC, (size_t)m * n * 4) == CUDA_SUCCESS);
        double e = sampled_error(m, n, k, A, B, C);
        CHECK_MSG(e < 1e-5, "call %d: sampled relative error %g", call, e);
        CHECK_OK(at_get_stats(h, &stats));
        CHECK_MSG(stats.trials == (call >= 8), "call %d: %d trials settled", call, stats.trials);
    }
    CHECK_EQ(stats.compiled, 0);
    CHECK_EQ(stats.lookups[AT_LOOKUP_NEAREST], 1);
    CHECK_MSG(strcmp(stats.last_config, fast) == 0, "kept %s", stats.last_config);
    at_destroy(h);

    /* the next handle finds the choice at the exact level, compiles nothing */
    CHECK_OK(at_create(&h, th_device(), path));
    CHECK_OK(at_sgemm(h, m, n, k, 1.0f, (const float *)dA, k, (const float *)dB, n, 0.0f,
                      (float *)dC, n));
    CHECK_OK(at_get_stats(h, &stats));
    CHECK_EQ(stats.last_level, AT_LOOKUP_EXACT);
    CHECK_STR(stats.last_config, fast);
    CHECK_EQ(stats.compiled + stats.trials, 0);
    at_destroy(h);

    /* deterministic mode and trials off: the lookup's choice, no trial */
    for (int mode = 0; mode < 2; mode++) {
        CHECK_OK(at_create(&h, th_device(), path));
        if (mode == 0)
            CHECK_OK(at_set_deterministic(h, 1));
        else
            CHECK_OK(at_set_trials(h, 0));
        for (int call = 0; call < 10; call++)
            CHECK_OK(at_sgemm(h, 1000, 1000, 1000, 1.0f, (const float *)dA, 1000,
                              (const float *)dB, 1000, 0.0f, (float *)dC, 1000));
        CHECK_OK(at_get_stats(h, &stats));
        CHECK_MSG(stats.trials == 0 && strcmp(stats.last_config, naive) == 0,
                  "mode %d: %d trials, %s", mode, stats.trials, stats.last_config);
        at_destroy(h);
    }
    unsetenv("AUTOTUNE_GEMM_FAMILY");
    cu->MemFree(dA);
    cu->MemFree(dB);
    cu->MemFree(dC);
    free(A);
    free(B);
    free(C);
    cu->CtxPopCurrent(&popped);
    cu->DevicePrimaryCtxRelease(device);
}
