/* test_runtime.c: tests of the core: status strings, configuration text,
 * embedded sources and cubin keys, NVRTC, the lookup chain on fixture
 * databases (CPU tier), and the public API on a GPU against CPU float64
 * references, including the stored-cubin path (GPU tier). */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "autotune.h"
#include "cudrv.h"
#include "db.h"
#include "harness.h"
#include "lookup.h"
#include "tpl.h"

/* ---------------- status and handles ---------------- */

TEST(status_strings_are_distinct)
{
    const char *seen[AT_ERR_INTERNAL + 1];
    for (int s = AT_OK; s <= AT_ERR_INTERNAL; s++) {
        seen[s] = at_status_string((at_status)s);
        CHECK(seen[s] && *seen[s]);
        CHECK_MSG(strcmp(seen[s], "unknown status") != 0, "status %d has no text", s);
        for (int t = 0; t < s; t++)
            CHECK_MSG(strcmp(seen[s], seen[t]) != 0, "statuses %d and %d share a text", s, t);
    }
    CHECK_STR(at_status_string((at_status)999), "unknown status");
}

TEST(api_rejects_null_handle)
{
    float f = 0;
    CHECK_EQ(at_create(NULL, 0, NULL), AT_ERR_INVALID_ARG);
    CHECK_EQ(at_destroy(NULL), AT_OK);
    CHECK_EQ(at_set_stream(NULL, 0), AT_ERR_INVALID_ARG);
    CHECK_EQ(at_set_deterministic(NULL, 1), AT_ERR_INVALID_ARG);
    CHECK_EQ(at_sgemm(NULL, 1, 1, 1, 1, &f, 1, &f, 1, 0, &f, 1), AT_ERR_INVALID_ARG);
    CHECK_EQ(at_ssum(NULL, 1, &f, &f), AT_ERR_INVALID_ARG);
    CHECK_EQ(at_sdot(NULL, 1, &f, &f, &f), AT_ERR_INVALID_ARG);
    CHECK_EQ(at_sjacobi(NULL, 1, &f, &f, &f, 1e-6f, 10, NULL, NULL), AT_ERR_INVALID_ARG);
    at_stats st;
    CHECK_EQ(at_get_stats(NULL, &st), AT_ERR_INVALID_ARG);
    CHECK(at_errmsg(NULL) != NULL);
}

TEST(create_without_driver_reports_status)
{
    at_status s;
    char why[512];
    if (cudrv_get(&s, why, sizeof why))
        return; /* a driver is installed here: the GPU tier covers at_create */
    at_handle *h = (at_handle *)0x1;
    CHECK_EQ(at_create(&h, 0, NULL), AT_ERR_NO_DRIVER);
    CHECK(h == NULL);
    CHECK(strstr(why, "libcuda") != NULL);
}

/* ---------------- families, configurations, sources ---------------- */

TEST(every_family_is_well_formed)
{
    CHECK(tpl_family_count() >= 1);
    for (int f = 0; f < tpl_family_count(); f++) {
        const tpl_family *fam = tpl_family_at(f);
        CHECK(fam && fam->name && fam->run && fam->valid && fam->prepare && fam->check);
        CHECK(tpl_find(fam->name) == fam);
        size_t len = 0;
        CHECK_MSG(tpl_source_text(fam->source, &len) && len > 0, "%s: source %s not embedded",
                  fam->name, fam->source);
        CHECK(fam->n_params > 0 && fam->n_params <= TPL_MAX_PARAMS);
        for (int i = 0; i < fam->n_params; i++) {
            CHECK(fam->params[i].n_values >= 1 && fam->params[i].n_values <= TPL_MAX_VALUES);
            CHECK_MSG(fam->params[i].meaning && *fam->params[i].meaning,
                      "%s.%s has no meaning", fam->name, fam->params[i].name);
            /* the .cu declares every tunable with a default */
            char decl[96];
            snprintf(decl, sizeof decl, "#ifndef %s", fam->params[i].name);
            CHECK_MSG(strstr(tpl_source_text(fam->source, NULL), decl),
                      "%s: %s lacks '%s'", fam->name, fam->source, decl);
        }
        int cfg[TPL_MAX_PARAMS];
        char err[256];
        CHECK_MSG(tpl_config_parse(fam, fam->default_config, cfg, err, sizeof err) == AT_OK,
                  "%s default: %s", fam->name, err);
        CHECK_MSG(fam->valid(cfg, NULL, err, sizeof err), "%s default invalid: %s", fam->name,
                  err);
        for (int b = 0; b < fam->n_baselines; b++) {
            CHECK_MSG(tpl_config_parse(fam, fam->baselines[b].config, cfg, err, sizeof err) ==
                          AT_OK, "%s %s: %s", fam->name, fam->baselines[b].name, err);
            CHECK_MSG(fam->valid(cfg, NULL, err, sizeof err), "%s %s invalid: %s", fam->name,
                      fam->baselines[b].name, err);
        }
        if (!fam->hidden)
            CHECK_MSG(fam->n_tuning_problems > 0, "%s has no tuning sizes", fam->name);
    }
}

TEST(config_text_round_trips)
{
    for (int f = 0; f < tpl_family_count(); f++) {
        const tpl_family *fam = tpl_family_at(f);
        long long size = tpl_space_size(fam);
        CHECK(size >= 1);
        unsigned long long state = 12345;
        for (int trial = 0; trial < 200; trial++) {
            state = state * 6364136223846793005ull + 1442695040888963407ull;
            long long index = (long long)((state >> 11) % (unsigned long long)size);
            int cfg[TPL_MAX_PARAMS], back[TPL_MAX_PARAMS];
            tpl_config_from_index(fam, index, cfg);
            CHECK_EQ(tpl_config_to_index(fam, cfg), index);
            char text[TPL_CONFIG_LEN], err[256];
            tpl_config_format(fam, cfg, text, sizeof text);
            CHECK_OK(tpl_config_parse(fam, text, back, err, sizeof err));
            CHECK(memcmp(cfg, back, (size_t)fam->n_params * sizeof(int)) == 0);
        }
    }
}

TEST(config_parse_rejects_bad_text)
{
    const tpl_family *fam = tpl_family_at(0);
    CHECK(fam);
    int cfg[TPL_MAX_PARAMS];
    char err[256], text[TPL_CONFIG_LEN];
    CHECK_EQ(tpl_config_parse(fam, "", cfg, err, sizeof err), AT_ERR_INVALID_ARG);
    CHECK(strstr(err, "missing"));
    CHECK_EQ(tpl_config_parse(fam, "NO_SUCH_PARAM=1", cfg, err, sizeof err), AT_ERR_INVALID_ARG);
    CHECK(strstr(err, "NO_SUCH_PARAM"));
    snprintf(text, sizeof text, "%s=abc", fam->params[0].name);
    CHECK_EQ(tpl_config_parse(fam, text, cfg, err, sizeof err), AT_ERR_INVALID_ARG);
    snprintf(text, sizeof text, "%s=1,%s=1", fam->params[0].name, fam->params[0].name);
    CHECK_EQ(tpl_config_parse(fam, text, cfg, err, sizeof err), AT_ERR_INVALID_ARG);
    CHECK(strstr(err, "twice"));
    CHECK_EQ(tpl_config_parse(fam, NULL, cfg, err, sizeof err), AT_ERR_INVALID_ARG);
}

TEST(binary_keys_separate_configs_and_archs)
{
    const tpl_family *fam = tpl_family_at(0);
    CHECK(fam);
    int a[TPL_MAX_PARAMS], b[TPL_MAX_PARAMS];
    tpl_config_from_index(fam, 0, a);
    tpl_config_from_index(fam, tpl_space_size(fam) - 1, b);
    char ka[128], kb[128], kc[128], ka2[128];
    tpl_binary_key(fam, a, "sm_90", ka, sizeof ka);
    tpl_binary_key(fam, a, "sm_90", ka2, sizeof ka2);
    tpl_binary_key(fam, b, "sm_90", kb, sizeof kb);
    tpl_binary_key(fam, a, "sm_80", kc, sizeof kc);
    CHECK_STR(ka, ka2);
    if (tpl_space_size(fam) > 1)
        CHECK(strcmp(ka, kb) != 0);
    CHECK(strcmp(ka, kc) != 0);
    CHECK(strlen(tpl_source_hash(fam)) == 16);
    CHECK(strcmp(tpl_nvrtc_version(), "unknown") != 0);
}

TEST(nvrtc_compiles_reference_module)
{
    static const char *archs[] = {"sm_80", "sm_90"};
    for (int i = 0; i < 2; i++) {
        void *cubin = NULL;
        size_t size = 0;
        char *log = NULL;
        at_status s = tpl_compile_reference(archs[i], &cubin, &size, &log);
        CHECK_MSG(s == AT_OK, "%s: %s", archs[i], log ? log : "no log");
        CHECK(size > 64 && cubin);
        /* ELF magic: NVRTC gave machine code, not PTX */
        CHECK(memcmp(cubin, "\177ELF", 4) == 0);
        free(cubin);
        free(log);
    }
}

/* A family whose fixed options break the source: the failure path. */
static int fake_valid(const int *cfg, const at_device_info *dev, char *why, size_t len)
{
    /* value 3 needs more shared memory than a small device has */
    if (cfg[0] == 3 && dev && dev->smem_per_block_optin < 100000) {
        snprintf(why, len, "needs 100000 bytes of shared memory");
        return 0;
    }
    return 1;
}
static int fake_deterministic(const int *cfg) { return cfg[1] == 0; }

static const tpl_family fake_broken = {
    .name = "fake_broken", .source = "reference.cu", .fixed_options = "-DREF_TILE=not_a_number",
    .n_params = 1, .params = {{"P", 2, {1, 2}, "fake"}},
};

TEST(nvrtc_failure_returns_log)
{
    int cfg[1] = {1};
    void *cubin = (void *)0x1;
    size_t size = 7;
    char *log = NULL;
    CHECK_EQ(tpl_compile(&fake_broken, cfg, "sm_90", &cubin, &size, &log), AT_ERR_COMPILE);
    CHECK(cubin == NULL && size == 0);
    CHECK_MSG(log && strstr(log, "not_a_number"), "log: %s", log ? log : "(none)");
    free(log);
}

/* ---------------- lookup chain on fixture databases ---------------- */

static const tpl_family fake_lookup = {
    .name = "fake_lookup", .source = "reference.cu", .fixed_options = "",
    .n_dims = 1, .dim_names = {"n"},
    .n_params = 2,
    .params = {{"A", 3, {1, 2, 3}, "fake"}, {"ATOMIC", 2, {0, 1}, "1 = nondeterministic"}},
    .valid = fake_valid, .deterministic = fake_deterministic,
    .default_config = "A=1,ATOMIC=0",
};

static void put_device(db *d, const char *uuid, int major, int minor, int smem)
{
    at_device_info info;
    memset(&info, 0, sizeof info);
    snprintf(info.uuid, sizeof info.uuid, "%s", uuid);
    snprintf(info.name, sizeof info.name, "Fake GPU %s", uuid);
    info.cc_major = major;
    info.cc_minor = minor;
    info.smem_per_block_optin = smem;
    tpl_arch_name(major, minor, info.arch, sizeof info.arch);
    db_put_device(d, &info, "13.0");
}

static at_status put_result(db *d, const char *uuid, long long n, const char *config,
                            const char *status, double ms, int det, const char *hash)
{
    db_result r;
    memset(&r, 0, sizeof r);
    snprintf(r.device_uuid, sizeof r.device_uuid, "%s", uuid);
    snprintf(r.kernel, sizeof r.kernel, "fake_lookup");
    snprintf(r.source_hash, sizeof r.source_hash, "%s", hash);
    r.problem.n_dims = 1;
    r.problem.dims[0] = n;
    snprintf(r.config, sizeof r.config, "%s", config);
    snprintf(r.status, sizeof r.status, "%s", status);
    r.time_ms = r.time_min_ms = r.time_max_ms = ms;
    r.runs = 5;
    r.rel_error = 0;
    r.deterministic = det;
    return db_store_result(d, &r);
}

static at_device_info device(const char *uuid, int major, int minor, int smem)
{
    at_device_info info;
    memset(&info, 0, sizeof info);
    snprintf(info.uuid, sizeof info.uuid, "%s", uuid);
    info.cc_major = major;
    info.cc_minor = minor;
    info.smem_per_block_optin = smem;
    tpl_arch_name(major, minor, info.arch, sizeof info.arch);
    return info;
}

TEST(lookup_chain_levels)
{
    char path[4300], err[512];
    snprintf(path, sizeof path, "%s/lookup.db", th_tmpdir());
    db *d = NULL;
    CHECK_OK(db_open(&d, path, 1, err, sizeof err));
    const char *hash = tpl_source_hash(&fake_lookup);
    put_device(d, "GPU-a", 9, 0, 232448);
    put_device(d, "GPU-b", 9, 0, 232448);
    put_device(d, "GPU-old", 8, 0, 166912);
    /* device a: tuned at 1024 (best A=2) and 1048576 (best A=3) */
    CHECK_OK(put_result(d, "GPU-a", 1024, "A=2,ATOMIC=0", DB_OK, 1.0, 1, hash));
    CHECK_OK(put_result(d, "GPU-a", 1024, "A=1,ATOMIC=0", DB_OK, 2.0, 1, hash));
    CHECK_OK(put_result(d, "GPU-a", 1024, "A=3,ATOMIC=0", DB_WRONG_RESULT, 0.1, 1, hash));
    CHECK_OK(put_result(d, "GPU-a", 1048576, "A=3,ATOMIC=1", DB_OK, 5.0, 0, hash));
    CHECK_OK(put_result(d, "GPU-a", 1048576, "A=1,ATOMIC=0", DB_OK, 6.0, 1, hash));
    /* results of an older source are ignored */
    CHECK_OK(put_result(d, "GPU-b", 1024, "A=3,ATOMIC=0", DB_OK, 0.01, 1, "0123456789abcdef"));

    at_device_info a = device("GPU-a", 9, 0, 232448);
    at_device_info c = device("GPU-c", 9, 0, 232448);     /* same arch, never tuned */
    at_device_info old = device("GPU-old", 8, 0, 166912); /* other arch */
    at_device_info small = device("GPU-small", 9, 0, 50000);
    tpl_problem p = TPL_PROBLEM(1, {1024, 0, 0});
    int cfg[TPL_MAX_PARAMS];
    char config[TPL_CONFIG_LEN];

    /* exact: fastest ok, the faster wrong result is never chosen */
    CHECK_EQ(lk_choose(d, &a, &fake_lookup, &p, 0, cfg, config), AT_LOOKUP_EXACT);
    CHECK_STR(config, "A=2,ATOMIC=0");
    CHECK(cfg[0] == 2 && cfg[1] == 0);
    /* nearest shape (log distance): 800000 is nearer 1048576 than 1024 */
    p.dims[0] = 800000;
    CHECK_EQ(lk_choose(d, &a, &fake_lookup, &p, 0, cfg, config), AT_LOOKUP_NEAREST);
    CHECK_STR(config, "A=3,ATOMIC=1");
    /* deterministic mode skips the atomic configuration */
    CHECK_EQ(lk_choose(d, &a, &fake_lookup, &p, 1, cfg, config), AT_LOOKUP_NEAREST);
    CHECK_STR(config, "A=1,ATOMIC=0");
    p.dims[0] = 2000;
    CHECK_EQ(lk_choose(d, &a, &fake_lookup, &p, 0, cfg, config), AT_LOOKUP_NEAREST);
    CHECK_STR(config, "A=2,ATOMIC=0");
    /* another device of the same architecture */
    CHECK_EQ(lk_choose(d, &c, &fake_lookup, &p, 0, cfg, config), AT_LOOKUP_ARCH);
    CHECK_STR(config, "A=2,ATOMIC=0");
    /* another architecture: built-in default */
    CHECK_EQ(lk_choose(d, &old, &fake_lookup, &p, 0, cfg, config), AT_LOOKUP_DEFAULT);
    CHECK_STR(config, "A=1,ATOMIC=0");
    /* a configuration illegal on the device is passed over */
    p.dims[0] = 1048576;
    CHECK_EQ(lk_choose(d, &a, &fake_lookup, &p, 0, cfg, config), AT_LOOKUP_EXACT);
    CHECK_STR(config, "A=3,ATOMIC=1");
    at_device_info small_a = small;
    snprintf(small_a.uuid, sizeof small_a.uuid, "GPU-a");
    CHECK(lk_choose(d, &small_a, &fake_lookup, &p, 0, cfg, config) != AT_LOOKUP_EXACT);
    CHECK(strcmp(config, "A=3,ATOMIC=1") != 0);
    /* no database: default */
    CHECK_EQ(lk_choose(NULL, &a, &fake_lookup, &p, 0, cfg, config), AT_LOOKUP_DEFAULT);
    db_close(d);
}

TEST(lookup_distance_is_symmetric_log)
{
    tpl_problem a = TPL_PROBLEM(3, {1024, 1024, 1024}), b = TPL_PROBLEM(3, {2048, 1024, 512});
    double d1 = lk_shape_distance(&a, &b), d2 = lk_shape_distance(&b, &a);
    CHECK(fabs(d1 - d2) < 1e-12);
    CHECK(fabs(d1 - 2 * log(2.0)) < 1e-12);
    CHECK(lk_shape_distance(&a, &a) == 0.0);
}

/* ---------------- GPU tier: the public API ---------------- */

typedef struct gpu_buffers {
    const cudrv *cu;
    CUcontext ctx;
    CUdevice dev;
} gpu_buffers;

static int gpu_begin(gpu_buffers *g)
{
    at_status s;
    g->cu = cudrv_get(&s, NULL, 0);
    if (!g->cu || g->cu->Init(0) != CUDA_SUCCESS || g->cu->DeviceGet(&g->dev, th_device()) !=
        CUDA_SUCCESS || g->cu->DevicePrimaryCtxRetain(&g->ctx, g->dev) != CUDA_SUCCESS)
        return 0;
    return g->cu->CtxPushCurrent(g->ctx) == CUDA_SUCCESS;
}

static void gpu_end(gpu_buffers *g)
{
    CUcontext popped;
    g->cu->CtxPopCurrent(&popped);
    g->cu->DevicePrimaryCtxRelease(g->dev);
}

static CUdeviceptr upload(gpu_buffers *g, const float *host, size_t count)
{
    CUdeviceptr p = 0;
    if (g->cu->MemAlloc(&p, count * sizeof(float) + 16) != CUDA_SUCCESS)
        return 0;
    if (host && g->cu->MemcpyHtoD(p, host, count * sizeof(float)) != CUDA_SUCCESS)
        return 0;
    return p;
}

static float *random_floats(size_t count, unsigned seed, float lo, float hi)
{
    float *v = malloc(count * sizeof *v);
    for (size_t i = 0; v && i < count; i++) {
        seed = seed * 1664525u + 1013904223u;
        v[i] = lo + (hi - lo) * (float)(seed >> 8) / 16777216.0f;
    }
    return v;
}

static double gemm_error(int m, int n, int k, float alpha, const float *A, int lda,
                         const float *B, int ldb, float beta, const float *C0,
                         const float *C, int ldc)
{
    double num = 0, den = 0;
    for (int i = 0; i < m; i++) {
        for (int j = 0; j < n; j++) {
            double acc = 0;
            for (int p = 0; p < k; p++)
                acc += (double)A[(size_t)i * lda + p] * B[(size_t)p * ldb + j];
            double ref = alpha * acc + beta * (double)C0[(size_t)i * ldc + j];
            double d = C[(size_t)i * ldc + j] - ref;
            num += d * d;
            den += ref * ref;
        }
    }
    return sqrt(num / (den > 0 ? den : 1));
}

/* Runs sgemm, sum, dot and jacobi through one handle, checks each against
 * the CPU in float64, returns the handle's stats. Trials off: each plan then
 * loads or compiles exactly its own kernel (the trials' candidates are
 * tested in test_trial.c and gemm_api_builtin_trial_across_families). */
static void api_round(const char *db_path, at_stats *stats)
{
    gpu_buffers g;
    CHECK(gpu_begin(&g));
    at_handle *h = NULL;
    CHECK_OK(at_create(&h, th_device(), db_path));
    CHECK_OK(at_set_trials(h, 0));
    int m = 67, n = 45, k = 129, lda = 131, ldb = 47, ldc = 50;
    float *A = random_floats((size_t)m * lda, 1, -1, 1);
    float *B = random_floats((size_t)k * ldb, 2, -1, 1);
    float *C0 = random_floats((size_t)m * ldc, 3, -1, 1);
    float *C = malloc((size_t)m * ldc * sizeof *C);
    CUdeviceptr dA = upload(&g, A, (size_t)m * lda), dB = upload(&g, B, (size_t)k * ldb);
    CUdeviceptr dC = upload(&g, C0, (size_t)m * ldc);
    CHECK(dA && dB && dC && C);
    CHECK_MSG(at_sgemm(h, m, n, k, 1.25f, (const float *)dA, lda, (const float *)dB, ldb, 0.5f,
                       (float *)dC, ldc) == AT_OK, "sgemm: %s", at_errmsg(h));
    CHECK(g.cu->MemcpyDtoH(C, dC, (size_t)m * ldc * sizeof *C) == CUDA_SUCCESS);
    double err = gemm_error(m, n, k, 1.25f, A, lda, B, ldb, 0.5f, C0, C, ldc);
    CHECK_MSG(err < 1e-5, "sgemm relative error %g", err);
    /* beta = 0 must not read C: NaN in C stays out of the result */
    for (size_t i = 0; i < (size_t)m * ldc; i++)
        C0[i] = NAN;
    CHECK(g.cu->MemcpyHtoD(dC, C0, (size_t)m * ldc * sizeof *C) == CUDA_SUCCESS);
    CHECK_OK(at_sgemm(h, m, n, k, 1.0f, (const float *)dA, lda, (const float *)dB, ldb, 0.0f,
                      (float *)dC, ldc));
    CHECK(g.cu->MemcpyDtoH(C, dC, (size_t)m * ldc * sizeof *C) == CUDA_SUCCESS);
    for (int i = 0; i < m; i++)
        for (int j = 0; j < n; j++)
            CHECK_MSG(isfinite(C[(size_t)i * ldc + j]), "beta=0 read C at %d,%d", i, j);

    long long len = 1000003;
    float *x = random_floats((size_t)len, 4, 0, 1), *y = random_floats((size_t)len, 5, 0, 1);
    CUdeviceptr dx = upload(&g, x, (size_t)len), dy = upload(&g, y, (size_t)len);
    CUdeviceptr dr = upload(&g, NULL, 4);
    CHECK(dx && dy && dr);
    double sum = 0, dot = 0;
    for (long long i = 0; i < len; i++) {
        sum += x[i];
        dot += (double)x[i] * y[i];
    }
    float got = 0;
    CHECK_MSG(at_ssum(h, len, (const float *)dx, (float *)dr) == AT_OK, "sum: %s", at_errmsg(h));
    CHECK(g.cu->MemcpyDtoH(&got, dr, 4) == CUDA_SUCCESS);
    CHECK_MSG(fabs(got - sum) / sum < 1e-5, "sum %g vs %g", got, sum);
    CHECK_MSG(at_sdot(h, len, (const float *)dx, (const float *)dy, (float *)dr) == AT_OK,
              "dot: %s", at_errmsg(h));
    CHECK(g.cu->MemcpyDtoH(&got, dr, 4) == CUDA_SUCCESS);
    CHECK_MSG(fabs(got - dot) / dot < 1e-5, "dot %g vs %g", got, dot);
    /* unaligned x: one float past a 16-byte boundary */
    CHECK_OK(at_ssum(h, len - 1, (const float *)(dx + 4), (float *)dr));
    CHECK(g.cu->MemcpyDtoH(&got, dr, 4) == CUDA_SUCCESS);
    CHECK_MSG(fabs(got - (sum - x[0])) / sum < 1e-5, "unaligned sum %g vs %g", got, sum - x[0]);
    CHECK_OK(at_ssum(h, 0, (const float *)dx, (float *)dr));
    CHECK(g.cu->MemcpyDtoH(&got, dr, 4) == CUDA_SUCCESS);
    CHECK(got == 0.0f);

    int jn = 301;
    float *JA = random_floats((size_t)jn * jn, 6, -1, 1), *jb = random_floats((size_t)jn, 7, -1, 1);
    for (int i = 0; i < jn; i++) {
        double off = 0;
        for (int j = 0; j < jn; j++)
            if (j != i)
                off += fabs(JA[(size_t)i * jn + j]);
        JA[(size_t)i * jn + i] = (float)(1.5 * off + 1);
    }
    float *jx = calloc((size_t)jn, sizeof *jx);
    CUdeviceptr dJA = upload(&g, JA, (size_t)jn * jn), djb = upload(&g, jb, (size_t)jn);
    CUdeviceptr djx = upload(&g, jx, (size_t)jn);
    int iters = 0;
    float resid = 0;
    at_status s = at_sjacobi(h, jn, (const float *)dJA, (const float *)djb, (float *)djx, 1e-6f,
                             5000, &iters, &resid);
    CHECK_MSG(s == AT_OK, "jacobi: %s: %s", at_status_string(s), at_errmsg(h));
    CHECK(iters > 1 && iters < 5000);
    CHECK(g.cu->MemcpyDtoH(jx, djx, (size_t)jn * sizeof *jx) == CUDA_SUCCESS);
    double rn = 0, bn = 0;
    for (int i = 0; i < jn; i++) {
        double r = -jb[i];
        for (int j = 0; j < jn; j++)
            r += (double)JA[(size_t)i * jn + j] * jx[j];
        rn += r * r;
        bn += (double)jb[i] * jb[i];
    }
    CHECK_MSG(sqrt(rn / bn) < 1e-4, "jacobi residual %g", sqrt(rn / bn));

    /* bad input is refused with a message and changes nothing */
    CHECK_EQ(at_sgemm(h, -1, 2, 2, 1, (const float *)dA, 2, (const float *)dB, 2, 0,
                      (float *)dC, 2), AT_ERR_INVALID_ARG);
    CHECK(strstr(at_errmsg(h), "negative"));
    CHECK_EQ(at_sgemm(h, 4, 4, 8, 1, (const float *)dA, 4, (const float *)dB, 4, 0,
                      (float *)dC, 4), AT_ERR_INVALID_ARG);
    CHECK_EQ(at_sgemm(h, 4, 4, 4, 1, NULL, 4, (const float *)dB, 4, 0, (float *)dC, 4),
             AT_ERR_INVALID_ARG);
    CHECK_EQ(at_ssum(h, -5, (const float *)dx, (float *)dr), AT_ERR_INVALID_ARG);
    CHECK_EQ(at_sdot(h, 5, (const float *)dx, NULL, (float *)dr), AT_ERR_INVALID_ARG);
    CHECK_EQ(at_sjacobi(h, 0, (const float *)dJA, (const float *)djb, (float *)djx, 1e-6f, 10,
                        NULL, NULL), AT_ERR_INVALID_ARG);
    CHECK_EQ(at_sjacobi(h, jn, (const float *)dJA, (const float *)djb, (float *)djx, 1e-6f, 0,
                        NULL, NULL), AT_ERR_INVALID_ARG);

    CHECK_OK(at_get_stats(h, stats));
    CHECK_OK(at_destroy(h));
    CUdeviceptr all[] = {dA, dB, dC, dx, dy, dr, dJA, djb, djx};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
        g.cu->MemFree(all[i]);
    free(A); free(B); free(C0); free(C); free(x); free(y); free(JA); free(jb); free(jx);
    gpu_end(&g);
}

GPU_TEST(api_results_match_cpu_and_second_handle_loads_cubins)
{
    char path[4300];
    snprintf(path, sizeof path, "%s/api.db", th_tmpdir());
    at_stats first, second;
    api_round(path, &first);
    if (th_failed())
        return;
    CHECK_MSG(first.compiled >= 4, "first handle compiled %d kernels", first.compiled);
    CHECK_EQ(first.lookups[AT_LOOKUP_DEFAULT], first.compiled + first.loaded);
    api_round(path, &second);
    if (th_failed())
        return;
    CHECK_MSG(second.compiled == 0, "second handle compiled %d kernels", second.compiled);
    CHECK_EQ(second.loaded, first.compiled + first.loaded);
    CHECK(second.cache_hits > 0);
}

/* Repeated calls reuse the previous call's plan without a table lookup and
 * push the handle's context only when another one (or none) is current:
 * alternating families, sizes and modes must each get their own plan, and
 * the caller's current context must be the same after every call. */
GPU_TEST(api_plan_reuse_and_callers_context)
{
    gpu_buffers g;
    CHECK(gpu_begin(&g));
    char path[4300];
    snprintf(path, sizeof path, "%s/reuse.db", th_tmpdir());
    at_handle *h = NULL;
    CHECK_OK(at_create(&h, th_device(), path));
    const long long len = 70001;
    float *x = random_floats((size_t)len, 11, 0, 1), *y = random_floats((size_t)len, 12, -1, 1);
    CUdeviceptr dx = upload(&g, x, (size_t)len), dy = upload(&g, y, (size_t)len);
    CUdeviceptr dr = upload(&g, NULL, 4);
    CHECK(dx && dy && dr && x && y);
    /* (family, n, deterministic) per call; a stale plan gives a wrong value */
    static const struct { int dot; long long n; int det; } calls[] = {
        {0, 70001, 0}, {0, 70001, 0}, {1, 70001, 0}, {0, 70001, 0}, {0, 1000, 0},
        {0, 70001, 1}, {0, 70001, 0}, {1, 999, 1}, {1, 999, 1}, {0, 999, 1},
    };
    for (int pass = 0; pass < 2; pass++) {
        /* pass 0: the primary context is current; pass 1: none is */
        CUcontext before = NULL, after = NULL;
        if (pass == 1) {
            CUcontext popped;
            CHECK(g.cu->CtxPopCurrent(&popped) == CUDA_SUCCESS);
        }
        CHECK(g.cu->CtxGetCurrent(&before) == CUDA_SUCCESS);
        CHECK(pass == 0 ? before == g.ctx : before == NULL);
        for (size_t c = 0; c < sizeof calls / sizeof calls[0]; c++) {
            double ref = 0;
            for (long long i = 0; i < calls[c].n; i++)
                ref += calls[c].dot ? (double)x[i] * y[i] : (double)x[i];
            CHECK_OK(at_set_deterministic(h, calls[c].det));
            at_status s = calls[c].dot
                              ? at_sdot(h, calls[c].n, (const float *)dx, (const float *)dy,
                                        (float *)dr)
                              : at_ssum(h, calls[c].n, (const float *)dx, (float *)dr);
            CHECK_MSG(s == AT_OK, "call %zu: %s", c, at_errmsg(h));
            CHECK(g.cu->CtxGetCurrent(&after) == CUDA_SUCCESS);
            CHECK_MSG(after == before, "call %zu changed the current context", c);
            float got = 0;
            if (pass == 1)
                CHECK(g.cu->CtxPushCurrent(g.ctx) == CUDA_SUCCESS);
            CHECK(g.cu->MemcpyDtoH(&got, dr, 4) == CUDA_SUCCESS);
            if (pass == 1) {
                CUcontext popped;
                CHECK(g.cu->CtxPopCurrent(&popped) == CUDA_SUCCESS);
            }
            CHECK_MSG(fabs(got - ref) <= 1e-5 * fabs(ref) + 1e-6,
                      "pass %d call %zu (%s n=%lld det=%d): %.9g vs %.9g", pass, c,
                      calls[c].dot ? "dot" : "sum", calls[c].n, calls[c].det, got, ref);
        }
        if (pass == 1)
            CHECK(g.cu->CtxPushCurrent(g.ctx) == CUDA_SUCCESS);
    }
    at_stats st;
    CHECK_OK(at_get_stats(h, &st));
    /* six distinct (family, n, mode) plans; every other call is a hit */
    CHECK_EQ(st.compiled + st.loaded, 6);
    CHECK_EQ(st.cache_hits, 2 * 10 - 6);
    CHECK_OK(at_destroy(h));
    g.cu->MemFree(dx);
    g.cu->MemFree(dy);
    g.cu->MemFree(dr);
    free(x);
    free(y);
    gpu_end(&g);
}

GPU_TEST(api_corrupt_database_is_refused_and_kept)
{
    char path[4300];
    snprintf(path, sizeof path, "%s/corrupt.db", th_tmpdir());
    FILE *f = fopen(path, "wb");
    CHECK(f);
    for (int i = 0; i < 4096; i++)
        fputc((i * 7919) & 0xFF, f);
    fclose(f);
    at_handle *h = NULL;
    CHECK_EQ(at_create(&h, th_device(), path), AT_ERR_DB_CORRUPT);
    CHECK(h == NULL);
    f = fopen(path, "rb");
    CHECK(f);
    int same = 1;
    for (int i = 0; i < 4096; i++)
        same &= fgetc(f) == ((i * 7919) & 0xFF);
    fclose(f);
    CHECK(same);
}

GPU_TEST(api_bad_device_ordinal)
{
    at_handle *h = NULL;
    CHECK_EQ(at_create(&h, 4096, NULL), AT_ERR_NO_DEVICE);
    CHECK_EQ(at_create(&h, -1, NULL), AT_ERR_INVALID_ARG);
}

TEST(host_only_parameters_share_one_cubin)
{
    const tpl_family *fam = tpl_find("jacobi");
    CHECK(fam);
    int host = -1;
    for (int i = 0; i < fam->n_params; i++)
        if (fam->params[i].host_only)
            host = i;
    CHECK_MSG(host >= 0, "jacobi has no host-only parameter");
    int a[TPL_MAX_PARAMS], b[TPL_MAX_PARAMS];
    char err[256], ka[128], kb[128], opts[4096];
    CHECK_OK(tpl_config_parse(fam, fam->default_config, a, err, sizeof err));
    memcpy(b, a, sizeof a);
    b[host] = a[host] + 1;
    tpl_binary_key(fam, a, "sm_90", ka, sizeof ka);
    tpl_binary_key(fam, b, "sm_90", kb, sizeof kb);
    CHECK_STR(ka, kb);
    tpl_options_string(fam, a, "sm_90", opts, sizeof opts);
    char define[96];
    snprintf(define, sizeof define, "-D%s=", fam->params[host].name);
    CHECK_MSG(!strstr(opts, define), "host-only %s reached NVRTC: %s", define, opts);
    /* a device parameter still changes the key */
    int dev_param = host == 0 ? 1 : 0;
    b[host] = a[host];
    b[dev_param] = a[dev_param] == fam->params[dev_param].values[0]
                       ? fam->params[dev_param].values[fam->params[dev_param].n_values - 1]
                       : fam->params[dev_param].values[0];
    tpl_binary_key(fam, b, "sm_90", kb, sizeof kb);
    CHECK(strcmp(ka, kb) != 0);
}
