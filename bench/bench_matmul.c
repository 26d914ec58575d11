/* bench_matmul.c: tuned at_sgemm against cuBLAS SGEMM (default math mode) and the
 * seeds' tiled kernel on the shapes; `--sweep` times the valid space; `--ops`
 * times transposed and column-major at_gemm calls against cublasSgemm with the same ops
 * and strided batches against cublasSgemmStridedBatched. */
#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <math.h>
#include <nvrtc.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "args.h"
#include "autotune.h"
#include "db.h"
#include "lookup.h"
#include "measure.h"
#include "tpl.h"
#include "bench_timer.h"

extern const tpl_family tpl_matmul;

static const tpl_problem bn_shapes[] = {
    TPL_PROBLEM(3, {1024, 1024, 1024}), TPL_PROBLEM(3, {2048, 2048, 2048}),
    TPL_PROBLEM(3, {4096, 4096, 4096}),
    TPL_PROBLEM(3, {8192, 8192, 8192}), TPL_PROBLEM(3, {1000, 1000, 1000}),
    TPL_PROBLEM(3, {4097, 4097, 4097}),
    TPL_PROBLEM(3, {8192, 8192, 128}), TPL_PROBLEM(3, {128, 8192, 8192}),
    TPL_PROBLEM(3, {8192, 64, 8192}),
    TPL_PROBLEM(3, {16384, 16384, 1024}),
};
#define BN_NSHAPES ((int)(sizeof bn_shapes / sizeof bn_shapes[0]))

#define BN_CUDA(call) do { cudaError_t bn_e = (call); if (bn_e != cudaSuccess) { \
    fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #call, cudaGetErrorString(bn_e)); \
    exit(1); } } while (0)

static double bn_median(double *v, int n)
{
    double med, mn, mx;
    ms_summarize(v, n, &med, &mn, &mx);
    return med;
}

/* One timed operation. */
typedef bench_op bn_op;

/* bench_timer.h: warm-up, then >= 20 runs each between two events (until
 * ~0.5 s or 200 runs); median ms, or -1 if an op failed. */
static double bn_time(bn_op op, void *ctx)
{
    return bench_time_ms(op, ctx, 20, 500.0);
}

typedef struct bn_call {
    int m, n, k;
    float alpha, beta;
    float *A, *B, *C;
    at_handle *h;
    cublasHandle_t cublas;
    at_exec *seed_ex;
    const int *seed_cfg;
    int op_a, op_b;         /* --sweep: 1 = op T (row-major A stored k x m, B stored n x k) */
} bn_call;

static int bn_tuned(void *p)
{
    bn_call *c = p;
    at_status s = at_sgemm(c->h, c->m, c->n, c->k, c->alpha, c->A, c->k, c->B, c->n, c->beta,
                           c->C, c->n);
    if (s != AT_OK)
        fprintf(stderr, "at_sgemm: %s: %s\n", at_status_string(s), at_errmsg(c->h));
    return s != AT_OK;
}

static int bn_cublas(void *p)
{
    bn_call *c = p;
    /* row-major C = op(A) op(B)  <=>  column-major C^T = op(B)^T op(A)^T: the stored B
     * read column-major is B^T (op N) or op(B)^T itself (op T) */
    cublasStatus_t s = cublasSgemm(c->cublas, c->op_b ? CUBLAS_OP_T : CUBLAS_OP_N,
                                   c->op_a ? CUBLAS_OP_T : CUBLAS_OP_N, c->n, c->m, c->k,
                                   &c->alpha, c->B, c->op_b ? c->k : c->n, c->A,
                                   c->op_a ? c->m : c->k, &c->beta, c->C, c->n);
    if (s != CUBLAS_STATUS_SUCCESS)
        fprintf(stderr, "cublasSgemm failed: %d\n", (int)s);
    return s != CUBLAS_STATUS_SUCCESS;
}

static int bn_seed(void *p)
{
    bn_call *c = p;
    tpl_args a = tpl_gemm_args(c->m, c->n, c->k, c->alpha, (CUdeviceptr)c->A, c->k,
                               (CUdeviceptr)c->B, c->n, c->beta, (CUdeviceptr)c->C, c->n);
    at_status s = tpl_matmul.run(c->seed_ex, c->seed_cfg, &a);
    if (s != AT_OK)
        fprintf(stderr, "seed: %s: %s\n", at_status_string(s), c->seed_ex->errmsg);
    return s != AT_OK;
}

/* Resets C from C0, runs op once, returns the relative error against R (-1 on failure). */
static double bn_check(bn_op op, bn_call *c, const float *C0, const float *R, at_exec *ref)
{
    size_t bytes = (size_t)c->m * c->n * 4;
    BN_CUDA(cudaMemcpy(c->C, C0, bytes, cudaMemcpyDeviceToDevice));
    BN_CUDA(cudaDeviceSynchronize());
    if (op(c))
        return -1;
    BN_CUDA(cudaDeviceSynchronize());
    double e = -1;
    if (tpl_rel_error(ref, (CUdeviceptr)c->C, (CUdeviceptr)R, (long long)c->m * c->n, &e) != AT_OK)
        return -1;
    return e;
}

static void bn_store(db *d, const at_device_info *dev, const tpl_problem *p, const char *name,
                     double ms, double err, const char *note)
{
    if (!d || ms <= 0)
        return;
    db_measurement m;
    memset(&m, 0, sizeof m);
    snprintf(m.device_uuid, sizeof m.device_uuid, "%s", dev->uuid);
    snprintf(m.kernel, sizeof m.kernel, "matmul");
    m.problem = *p;
    snprintf(m.name, sizeof m.name, "%s", name);
    m.time_ms = ms;
    m.gflops = 2.0 * p->dims[0] * p->dims[1] * p->dims[2] / ms * 1e-6;
    m.gbs = 0;
    m.rel_error = err;
    snprintf(m.note, sizeof m.note, "%s", note);
    if (db_put_measurement(d, &m) != AT_OK)
        fprintf(stderr, "db_put_measurement: %s\n", db_errmsg(d));
}

/* ---- --sweep SHAPES [STRIDE [TOP [RUNS]]]: compile every STRIDE-th valid
 * ALGO=2 configuration (only those whose text contains $BN_SWEEP_ONLY, if set; or
 * the configurations listed one a line in the file $BN_SWEEP_LIST, a line optionally
 * followed by a space and extra compiler options such as "-DCPY=1": source variants that
 * are not tuning parameters; "@FILE [options]" compiles FILE instead of the embedded
 * matmul.cu, e.g. an older revision for an A/B in one process) in parallel, verify and time each on every shape
 * ("4096x4096x4096,8192x64x8192", problem text: ":NT" etc. for transposes,
 * configurations that do not apply skipped) in two passes (the second in reverse order:
 * drift of the clock cancels in the mean), print the TOP fastest with cuBLAS (same ops).
 * $BN_SWEEP_PAIRS=P (default 0): then the P fastest in paired rounds ($BN_SWEEP_ROUNDS,
 * default 7: ours, cuBLAS, ours, cuBLAS...; cuBLAS on the same prepared inputs with the
 * same timer) and the median of the per-round ratios. ---- */

typedef struct bn_item {
    int cfg[TPL_MAX_PARAMS];
    char text[TPL_CONFIG_LEN];
    char defs[256];         /* extra compiler options of a list line ("" for none) */
    void *cubin;
    size_t size;
    double ms, err, pass_ms[2];
} bn_item;

typedef struct bn_pool {
    bn_item *items;
    int n, next;
    const char *arch;
    pthread_mutex_t lock;
} bn_pool;

/* Compiles the matmul source in file `path` (instead of the embedded one) for cfg with the
 * family's options plus `extra` (space-separated): *cubin malloc'ed, NULL with a message in
 * *log (malloc'ed) when the file cannot be read or NVRTC fails. */
static at_status bn_compile_file(const char *path, const char *extra, const int *cfg,
                                 const char *arch, void **cubin, size_t *size, char **log)
{
    *cubin = NULL;
    *size = 0;
    *log = malloc(1024);
    if (!*log)
        return AT_ERR_NO_MEMORY;
    (*log)[0] = '\0';
    FILE *fp = fopen(path, "rb");
    char *text = NULL;
    long n = -1;
    if (fp && fseek(fp, 0, SEEK_END) == 0 && (n = ftell(fp)) >= 0 && fseek(fp, 0, SEEK_SET) == 0 &&
        (text = malloc((size_t)n + 1)) && fread(text, 1, (size_t)n, fp) == (size_t)n)
        text[n] = '\0';
    else
        n = -1;
    if (fp)
        fclose(fp);
    if (n < 0) {
        free(text);
        snprintf(*log, 1024, "cannot read %s", path);
        return AT_ERR_NOT_FOUND;
    }
    tpl_family fam = tpl_matmul;
    fam.fixed_options = extra;
    char opts[4096], *argv[64];
    int argc = 0;
    tpl_options_string(&fam, cfg, arch, opts, sizeof opts);
    char *save = NULL;
    for (char *t = strtok_r(opts, " ", &save); t && argc < 64; t = strtok_r(NULL, " ", &save))
        argv[argc++] = t;
    nvrtcProgram prog;
    at_status st = AT_ERR_COMPILE;
    if (nvrtcCreateProgram(&prog, text, "matmul.cu", 0, NULL, NULL) == NVRTC_SUCCESS) {
        size_t ls = 0;
        char *big;
        if (nvrtcCompileProgram(prog, argc, (const char *const *)argv) != NVRTC_SUCCESS) {
            if (nvrtcGetProgramLogSize(prog, &ls) == NVRTC_SUCCESS && ls > 1 &&
                (big = realloc(*log, ls))) {
                *log = big;
                if (nvrtcGetProgramLog(prog, *log) != NVRTC_SUCCESS)
                    (*log)[0] = '\0';
            }
        } else if (nvrtcGetCUBINSize(prog, size) == NVRTC_SUCCESS && *size &&
                   (*cubin = malloc(*size)) && nvrtcGetCUBIN(prog, *cubin) == NVRTC_SUCCESS) {
            st = AT_OK;
        }
        nvrtcDestroyProgram(&prog);
    }
    if (st != AT_OK) {
        free(*cubin);
        *cubin = NULL;
        *size = 0;
    }
    free(text);
    return st;
}

static void *bn_compile_worker(void *arg)
{
    bn_pool *p = arg;
    for (;;) {
        pthread_mutex_lock(&p->lock);
        int i = p->next++;
        pthread_mutex_unlock(&p->lock);
        if (i >= p->n)
            return NULL;
        char *log = NULL, file[sizeof p->items[i].defs];
        tpl_family fam = tpl_matmul;
        fam.fixed_options = p->items[i].defs;
        at_status st;
        if (p->items[i].defs[0] == '@') {
            snprintf(file, sizeof file, "%s", p->items[i].defs + 1);
            char *extra = strchr(file, ' ');
            if (extra)
                *extra++ = '\0';
            st = bn_compile_file(file, extra ? extra : "", p->items[i].cfg, p->arch,
                                 &p->items[i].cubin, &p->items[i].size, &log);
        } else {
            st = tpl_compile(&fam, p->items[i].cfg, p->arch, &p->items[i].cubin,
                             &p->items[i].size, &log);
        }
        if (st != AT_OK)
            fprintf(stderr, "compile failed: %s %s\n%s\n", p->items[i].text, p->items[i].defs,
                    log ? log : "");
        free(log);
    }
}

static int bn_by_time(const void *a, const void *b)
{
    const bn_item *x = a, *y = b;
    double tx = x->ms > 0 ? x->ms : 1e30, ty = y->ms > 0 ? y->ms : 1e30;
    return tx < ty ? -1 : tx > ty;
}

/* cuBLAS on the prepared inputs of the sweep (ms_call_fn): same ops, row-major mapped to
 * column-major as bn_cublas does. */
static at_status bn_cublas_call(void *ctx, CUstream stream, tpl_args *a, char *err, size_t len)
{
    cublasHandle_t h = ctx;
    const tpl_problem *p = &a->problem;
    int ta = p->op_a == AT_OP_T, tb = p->op_b == AT_OP_T;
    float alpha = (float)a->scalar[TPL_GEMM_ALPHA], beta = (float)a->scalar[TPL_GEMM_BETA];
    cublasSetStream(h, (cudaStream_t)stream);
    cublasStatus_t s = cublasSgemm(
        h, tb ? CUBLAS_OP_T : CUBLAS_OP_N, ta ? CUBLAS_OP_T : CUBLAS_OP_N, (int)p->dims[1],
        (int)p->dims[0], (int)p->dims[2], &alpha, (const float *)a->operand[TPL_GEMM_B].ptr,
        (int)a->operand[TPL_GEMM_B].ld, (const float *)a->operand[TPL_GEMM_A].ptr,
        (int)a->operand[TPL_GEMM_A].ld, &beta, (float *)a->operand[TPL_GEMM_C].ptr,
        (int)a->operand[TPL_GEMM_C].ld);
    cublasSetStream(h, 0);
    if (s != CUBLAS_STATUS_SUCCESS) {
        snprintf(err, len, "cublasSgemm: %d", (int)s);
        return AT_ERR_CUDA;
    }
    return AT_OK;
}

/* $BN_SWEEP_PAIRS fastest items (sorted) against cuBLAS in paired rounds on the prepared
 * problem: per round the median of ours, then of cuBLAS; prints each round's ratio and
 * the median ratio. Prints the failure and goes on when a timing fails. */
static void bn_sweep_pairs(ms_gpu *g, cublasHandle_t cublas, const tpl_family *f,
                           const bn_item *items, int n, const ms_options *o, const char *tok)
{
    const char *ps = getenv("BN_SWEEP_PAIRS"), *rs = getenv("BN_SWEEP_ROUNDS");
    int pairs = ps ? atoi(ps) : 0, rounds = rs ? atoi(rs) : 7;
    if (rounds > 64)
        rounds = 64;
    char err[1024];
    double v = -1;
    if (pairs > 0) {
        at_status s = ms_verify_call(g, bn_cublas_call, cublas, &v, err, sizeof err);
        printf("pairs %s: cuBLAS on the sweep's inputs: %s, error %.2e\n", tok,
               s == AT_OK ? "verified" : err, v);
    }
    for (int i = 0; i < n && i < pairs; i++) {
        if (items[i].ms <= 0)
            continue;
        double ours[64], cub[64], ratio[64];
        int r = 0;
        for (; r < rounds; r++) {
            ms_timing t, tc;
            if (ms_time(g, f, items[i].cfg, items[i].cubin, items[i].size, o, &t, err,
                        sizeof err) != AT_OK ||
                ms_time_call(g, bn_cublas_call, cublas, o, 0, 0, &tc, err, sizeof err) != AT_OK) {
                printf("pairs %s: %s\n", tok, err);
                break;
            }
            ours[r] = t.median_ms;
            cub[r] = tc.median_ms;
            ratio[r] = tc.median_ms / t.median_ms;
        }
        if (r == 0)
            continue;
        printf("pairs %s: %d rounds, ours %.4f ms, cuBLAS %.4f ms (medians), median ratio %.4fx "
               "(rounds:", tok, r, bn_median(ours, r), bn_median(cub, r), bn_median(ratio, r));
        for (int j = 0; j < r; j++)
            printf(" %.3f", ratio[j]);
        printf(")  %s\n", items[i].text);
        fflush(stdout);
    }
}

static int bn_sweep(ms_gpu *g, cublasHandle_t cublas, int argc, char **argv)
{
    const tpl_family *f = &tpl_matmul;
    const at_device_info *dev = ms_device(g);
    int stride = argc > 3 ? atoi(argv[3]) : 1;
    int top = argc > 4 ? atoi(argv[4]) : 25;
    long long raw = tpl_space_size(f);
    bn_item *items = calloc(1024, sizeof *items);
    int n = 0, seen = 0;
    char why[256];
    /* BN_SWEEP_ONLY=TEXT: only configurations whose text contains TEXT ("FRAG=1") */
    const char *only = getenv("BN_SWEEP_ONLY"), *list = getenv("BN_SWEEP_LIST");
    FILE *lf = list ? fopen(list, "r") : NULL;
    if (list && !lf) {
        printf("BN_SWEEP_LIST %s: cannot open\n", list);
        return 1;
    }
    char line[TPL_CONFIG_LEN + 8], cerr[256];
    while (lf && n < 1024 && fgets(line, sizeof line, lf)) {
        line[strcspn(line, "\r\n")] = '\0';
        if (!line[0] || line[0] == '#')
            continue;
        char *defs = strchr(line, ' ');
        items[n].defs[0] = '\0';
        if (defs) {
            *defs++ = '\0';
            snprintf(items[n].defs, sizeof items[n].defs, "%s", defs);
        }
        if (tpl_config_parse(f, line, items[n].cfg, cerr, sizeof cerr) != AT_OK ||
            !f->valid(items[n].cfg, dev, why, sizeof why)) {
            printf("skipped %s: %s%s\n", line, cerr, why);
            continue;
        }
        tpl_config_format(f, items[n].cfg, items[n].text, sizeof items[n].text);
        if (items[n].defs[0])
            snprintf(items[n].text + strlen(items[n].text),
                     sizeof items[n].text - strlen(items[n].text), " %s", items[n].defs);
        n++;
    }
    if (lf)
        fclose(lf);
    for (long long i = 0; i < raw && n < 1024 && !list; i++) {
        int cfg[TPL_MAX_PARAMS];
        tpl_config_from_index(f, i, cfg);
        if (cfg[0] != 2 || !f->valid(cfg, dev, why, sizeof why))
            continue;
        tpl_config_format(f, cfg, items[n].text, sizeof items[n].text);
        if ((only && !strstr(items[n].text, only)) || seen++ % (stride > 0 ? stride : 1))
            continue;
        memcpy(items[n].cfg, cfg, sizeof cfg);
        n++;
    }
    bn_pool pool = {items, n, 0, dev->arch, PTHREAD_MUTEX_INITIALIZER};
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    pthread_t th[32];
    int nth = 16;
    for (int i = 0; i < nth; i++)
        pthread_create(&th[i], NULL, bn_compile_worker, &pool);
    for (int i = 0; i < nth; i++)
        pthread_join(th[i], NULL);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    printf("sweep: %d configurations compiled in %.1f s (%d threads)\n", n,
           (t1.tv_sec - t0.tv_sec) + 1e-9 * (t1.tv_nsec - t0.tv_nsec), nth);
    fflush(stdout);
    char *shapes = strdup(argv[2]);
    for (char *tok = strtok(shapes, ","); tok; tok = strtok(NULL, ",")) {
        tpl_problem p;
        char err[1024];
        if (tpl_problem_parse(tok, &p, err, sizeof err) != AT_OK || p.n_dims != 3) {
            printf("problem %s: %s\n", tok, err);
            continue;
        }
        if (ms_prepare(g, f, &p, 42, err, sizeof err) != AT_OK) {
            printf("prepare %s: %s\n", tok, err);
            continue;
        }
        ms_options o;
        ms_default_options(&o);
        o.max_runs = argc > 5 ? atoi(argv[5]) : 30;
        o.budget_ms = 100;
        int wrong = 0;
        for (int i = 0; i < n; i++) {
            items[i].ms = items[i].pass_ms[0] = items[i].pass_ms[1] = -1;
            if (!items[i].cubin || !f->applicable(items[i].cfg, &p))
                continue;
            double e = -1;
            at_status s = ms_verify(g, f, items[i].cfg, items[i].cubin, items[i].size, &e, err,
                                    sizeof err);
            items[i].err = e;
            if (s != AT_OK || !(e <= f->tolerance(&p))) {
                printf("  FAILED %s: %s %s (error %g)\n", items[i].text, at_status_string(s), err, e);
                wrong++;
                continue;
            }
            items[i].ms = 0;
        }
        for (int pass = 0; pass < 2; pass++)
            for (int j = 0; j < n; j++) {
                int i = pass ? n - 1 - j : j;
                ms_timing t;
                if (items[i].ms < 0 ||
                    ms_time(g, f, items[i].cfg, items[i].cubin, items[i].size, &o, &t, err,
                            sizeof err) != AT_OK)
                    continue;
                items[i].pass_ms[pass] = t.median_ms;
            }
        for (int i = 0; i < n; i++)
            if (items[i].ms == 0)
                items[i].ms = items[i].pass_ms[0] > 0 && items[i].pass_ms[1] > 0
                                  ? 0.5 * (items[i].pass_ms[0] + items[i].pass_ms[1]) : -1;
        /* cuBLAS at the same shape for scale */
        double flops = 2.0 * p.dims[0] * p.dims[1] * p.dims[2];
        float *A, *B, *C;
        int m = (int)p.dims[0], nn = (int)p.dims[1], k = (int)p.dims[2];
        BN_CUDA(cudaMalloc((void **)&A, (size_t)m * k * 4));
        BN_CUDA(cudaMalloc((void **)&B, (size_t)k * nn * 4));
        BN_CUDA(cudaMalloc((void **)&C, (size_t)m * nn * 4));
        at_exec *ref = ms_reference(g);
        if (tpl_fill_uniform(ref, (CUdeviceptr)A, (long long)m * k, 7, -1, 1) != AT_OK ||
            tpl_fill_uniform(ref, (CUdeviceptr)B, (long long)k * nn, 8, -1, 1) != AT_OK ||
            tpl_fill_uniform(ref, (CUdeviceptr)C, (long long)m * nn, 9, -1, 1) != AT_OK ||
            ex_sync(ref) != AT_OK) {
            printf("fill: %s\n", ref->errmsg);
            return 1;
        }
        bn_call c = {m, nn, k, 1.0f, 0.5f, A, B, C, NULL, cublas, NULL, NULL,
                     p.op_a == AT_OP_T, p.op_b == AT_OP_T};
        double cub = bn_time(bn_cublas, &c);
        cudaFree(A);
        cudaFree(B);
        cudaFree(C);
        qsort(items, (size_t)n, sizeof *items, bn_by_time);
        bn_sweep_pairs(g, cublas, f, items, n, &o, tok);
        printf("sweep %s: cuBLAS %.3f ms %.2f TFLOP/s; %d wrong; fastest:\n", tok, cub,
               flops / cub * 1e-9, wrong);
        for (int i = 0; i < n && i < top; i++)
            if (items[i].ms > 0)
                printf("  %7.3f ms (%7.3f / %7.3f) %6.2f TFLOP/s %5.3fx err %.1e  %s\n",
                       items[i].ms, items[i].pass_ms[0], items[i].pass_ms[1],
                       flops / items[i].ms * 1e-9, cub / items[i].ms, items[i].err, items[i].text);
        fflush(stdout);
    }
    free(shapes);
    for (int i = 0; i < n; i++)
        free(items[i].cubin);
    free(items);
    return 0;
}

/* ---- --ops [DB]: transposes, orders and batches ---- */

/* One --ops row: a problem as the caller states it (order, ops, batch), its device data
 * (products one after another, minimal leading dimensions of that order) and ours. */
typedef struct bo_call {
    tpl_problem p;                  /* as called: order, ops, batch */
    int lda, ldb, ldc;
    long long sa, sb, sc;           /* batch strides (elements) */
    float alpha, beta;
    float *A, *B, *C;
    at_handle *h;
    cublasHandle_t cublas;
    at_exec *ex;                    /* batched rows: the looked-up configuration's module */
    const int *cfg;
} bo_call;

static int bo_ours(void *ctx)
{
    bo_call *c = ctx;
    const tpl_problem *p = &c->p;
    if (tpl_problem_batch(p) == 1) {
        at_status s = at_gemm(c->h, p->order, p->op_a, p->op_b, (int)p->dims[0], (int)p->dims[1],
                              (int)p->dims[2], AT_R_32F, c->alpha, c->A, c->lda, c->B, c->ldb,
                              c->beta, c->C, c->ldc);
        if (s != AT_OK)
            fprintf(stderr, "at_gemm: %s: %s\n", at_status_string(s), at_errmsg(c->h));
        return s != AT_OK;
    }
    /* batched (row-major): the configuration the runtime's lookup chose, run as the runtime
     * runs it (at_gemm_strided_batched is another part of the issue) */
    tpl_args a = tpl_gemm_args((int)p->dims[0], (int)p->dims[1], (int)p->dims[2], c->alpha,
                               (CUdeviceptr)c->A, c->lda, (CUdeviceptr)c->B, c->ldb, c->beta,
                               (CUdeviceptr)c->C, c->ldc);
    a.problem = *p;
    a.operand[TPL_GEMM_A].batch_stride = c->sa;
    a.operand[TPL_GEMM_B].batch_stride = c->sb;
    a.operand[TPL_GEMM_C].batch_stride = c->sc;
    at_status s = tpl_matmul.run(c->ex, c->cfg, &a);
    if (s != AT_OK)
        fprintf(stderr, "matmul run: %s: %s\n", at_status_string(s), c->ex->errmsg);
    return s != AT_OK;
}

/* cuBLAS with the same ops: column-major as it is; row-major C = op(A) op(B) as the
 * column-major C' = op(B)' op(A)' (each operand keeps its op). */
static int bo_cublas(void *ctx)
{
    bo_call *c = ctx;
    const tpl_problem *p = &c->p;
    int m = (int)p->dims[0], n = (int)p->dims[1], k = (int)p->dims[2];
    cublasOperation_t ta = p->op_a == AT_OP_T ? CUBLAS_OP_T : CUBLAS_OP_N;
    cublasOperation_t tb = p->op_b == AT_OP_T ? CUBLAS_OP_T : CUBLAS_OP_N;
    long long batch = tpl_problem_batch(p);
    cublasStatus_t s;
    if (p->order == AT_COL_MAJOR)
        s = batch > 1 ? cublasSgemmStridedBatched(c->cublas, ta, tb, m, n, k, &c->alpha, c->A,
                                                  c->lda, c->sa, c->B, c->ldb, c->sb, &c->beta,
                                                  c->C, c->ldc, c->sc, (int)batch)
                      : cublasSgemm(c->cublas, ta, tb, m, n, k, &c->alpha, c->A, c->lda, c->B,
                                    c->ldb, &c->beta, c->C, c->ldc);
    else
        s = batch > 1 ? cublasSgemmStridedBatched(c->cublas, tb, ta, n, m, k, &c->alpha, c->B,
                                                  c->ldb, c->sb, c->A, c->lda, c->sa, &c->beta,
                                                  c->C, c->ldc, c->sc, (int)batch)
                      : cublasSgemm(c->cublas, tb, ta, n, m, k, &c->alpha, c->B, c->ldb, c->A,
                                    c->lda, &c->beta, c->C, c->ldc);
    if (s != CUBLAS_STATUS_SUCCESS)
        fprintf(stderr, "cuBLAS failed: %d\n", (int)s);
    return s != CUBLAS_STATUS_SUCCESS;
}

static int bo_cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* Resets C from C0, runs op once; the relative error of C against R (doubles, the canonical
 * row-major products one after another), -1 on failure. */
static double bo_check(bn_op op, bo_call *c, const float *C0, CUdeviceptr R, size_t c_elems,
                       long long rows, long long cols, at_exec *ref)
{
    BN_CUDA(cudaMemcpy(c->C, C0, c_elems * 4, cudaMemcpyDeviceToDevice));
    BN_CUDA(cudaDeviceSynchronize());
    if (op(c))
        return -1;
    BN_CUDA(cudaDeviceSynchronize());
    double e = -1;
    if (tpl_rel_error_typed(ref, AT_R_32F, (CUdeviceptr)c->C, (int)rows, (int)cols, cols, R,
                            &e) != AT_OK)
        return -1;
    return e;
}

#define BO_MAX_ROUNDS 31

/* Whether row index `row` is in the comma-separated list `list`. */
static int bo_row_listed(const char *list, int row)
{
    for (const char *p = list; *p;) {
        char *end;
        long v = strtol(p, &end, 10);
        if (end == p)
            return 0;
        if (v == row)
            return 1;
        p = *end == ',' ? end + 1 : end;
    }
    return 0;
}

static int bn_ops(ms_gpu *g, cublasHandle_t cublas, const char *db_path)
{
    const tpl_family *f = &tpl_matmul;
    const at_device_info *dev = ms_device(g);
    at_exec *ref = ms_reference(g);
    const cudrv *cu = ms_driver(g);
    static const struct { int m, n, k, batch; at_order order; at_op a, b; } rows[] = {
        {4096, 4096, 4096, 1, AT_ROW_MAJOR, AT_OP_N, AT_OP_N},
        {4096, 4096, 4096, 1, AT_ROW_MAJOR, AT_OP_N, AT_OP_T},
        {4096, 4096, 4096, 1, AT_ROW_MAJOR, AT_OP_T, AT_OP_N},
        {4096, 4096, 4096, 1, AT_ROW_MAJOR, AT_OP_T, AT_OP_T},
        {4096, 4096, 4096, 1, AT_COL_MAJOR, AT_OP_N, AT_OP_N},
        {4096, 4096, 4096, 1, AT_COL_MAJOR, AT_OP_N, AT_OP_T},
        {4096, 4096, 4096, 1, AT_COL_MAJOR, AT_OP_T, AT_OP_N},
        {4096, 4096, 4096, 1, AT_COL_MAJOR, AT_OP_T, AT_OP_T},
        {1000, 1000, 1000, 1, AT_COL_MAJOR, AT_OP_T, AT_OP_N},
        {512, 512, 512, 128, AT_ROW_MAJOR, AT_OP_N, AT_OP_N},
        {256, 256, 256, 512, AT_ROW_MAJOR, AT_OP_N, AT_OP_N},
    };
    at_handle *h = NULL;
    if (at_create(&h, 0, db_path) != AT_OK) {
        fprintf(stderr, "at_create failed\n");
        return 1;
    }
    char err[1024];
    db *d = NULL;
    if (lk_open_db(db_path, &d, err, sizeof err) != AT_OK)
        d = NULL;
    printf("%-22s %9s %7s %9s | %9s %7s %9s | %7s %9s  %s\n", "call (MxNxK order ops)", "ours ms",
           "TF/s", "error", "cuBLAS ms", "TF/s", "error", "ratio", "vs cuBLAS",
           "configuration (lookup)");
    static const char *const level[] = {"none", "exact", "nearest", "arch", "default"};
    int failures = 0;
    /* $BENCH_OPS_ROUNDS: rounds per row (odd, 3 by default); $BENCH_OPS_ROWS: the rows to run,
     * as their indices in the table above (e.g. "1,2,3": the row-major transposed calls) */
    const char *rounds_env = getenv("BENCH_OPS_ROUNDS"), *rows_env = getenv("BENCH_OPS_ROWS");
    int rounds = rounds_env ? atoi(rounds_env) : 3;
    if (rounds < 3)
        rounds = 3;
    if (rounds > BO_MAX_ROUNDS)
        rounds = BO_MAX_ROUNDS;
    rounds |= 1;
    for (size_t r = 0; r < sizeof rows / sizeof rows[0]; r++) {
        if (rows_env && !bo_row_listed(rows_env, (int)r))
            continue;
        bo_call c;
        memset(&c, 0, sizeof c);
        c.p = (tpl_problem)TPL_PROBLEM(3, {rows[r].m, rows[r].n, rows[r].k});
        c.p.order = rows[r].order;
        c.p.op_a = rows[r].a;
        c.p.op_b = rows[r].b;
        c.p.batch = rows[r].batch > 1 ? rows[r].batch : 0;
        int m = rows[r].m, n = rows[r].n, k = rows[r].k;
        long long batch = tpl_problem_batch(&c.p);
        c.lda = (int)tpl_gemm_min_ld(c.p.order, c.p.op_a, m, k);
        c.ldb = (int)tpl_gemm_min_ld(c.p.order, c.p.op_b, k, n);
        c.ldc = (int)tpl_gemm_min_ld(c.p.order, AT_OP_N, m, n);
        c.sa = (long long)m * k;
        c.sb = (long long)k * n;
        c.sc = (long long)m * n;
        c.alpha = 1.0f;
        c.beta = 0.5f;
        c.h = h;
        c.cublas = cublas;
        size_t na = (size_t)(c.sa * batch), nb = (size_t)(c.sb * batch), nc = (size_t)(c.sc * batch);
        float *C0, *Cv;
        double *R;
        BN_CUDA(cudaMalloc((void **)&c.A, na * 4));
        BN_CUDA(cudaMalloc((void **)&c.B, nb * 4));
        BN_CUDA(cudaMalloc((void **)&c.C, nc * 4));
        BN_CUDA(cudaMalloc((void **)&C0, nc * 4));
        BN_CUDA(cudaMalloc((void **)&Cv, nc * 4));
        BN_CUDA(cudaMalloc((void **)&R, nc * 8));
        unsigned long long seed = 7000 + 5 * (unsigned long long)r;
        /* the float64 reference of the canonical (row-major) form of the call */
        tpl_args a = tpl_gemm_args(m, n, k, c.alpha, (CUdeviceptr)c.A, c.lda, (CUdeviceptr)c.B,
                                   c.ldb, c.beta, (CUdeviceptr)c.C, c.ldc);
        a.problem = c.p;
        a.operand[TPL_GEMM_A].batch_stride = c.sa;
        a.operand[TPL_GEMM_B].batch_stride = c.sb;
        a.operand[TPL_GEMM_C].batch_stride = c.sc;
        ag_gemm_canonical(&a);
        BN_CUDA(cudaDeviceSynchronize());
        if (tpl_fill_uniform(ref, (CUdeviceptr)c.A, (long long)na, seed, -1, 1) != AT_OK ||
            tpl_fill_uniform(ref, (CUdeviceptr)c.B, (long long)nb, seed + 1, -1, 1) != AT_OK ||
            tpl_fill_uniform(ref, (CUdeviceptr)C0, (long long)nc, seed + 2, -1, 1) != AT_OK ||
            tpl_ref_gemm_args(ref, &a, (CUdeviceptr)C0, (CUdeviceptr)R) != AT_OK ||
            ex_sync(ref) != AT_OK) {
            fprintf(stderr, "reference: %s\n", ref->errmsg);
            return 1;
        }
        long long rrows = batch * a.problem.dims[0], rcols = a.problem.dims[1];
        /* batched: the lookup's configuration for the canonical problem, compiled and loaded */
        int cfg[TPL_MAX_PARAMS];
        char config[TPL_CONFIG_LEN] = "", exmsg[1024];
        at_lookup_level lvl = AT_LOOKUP_NONE;
        CUmodule mod = NULL;
        at_exec ex;
        void *cubin = NULL;
        if (batch > 1) {
            size_t size = 0;
            char *log = NULL;
            lvl = lk_choose(d, dev, f, &a.problem, 0, cfg, config);
            if (lvl == AT_LOOKUP_NONE ||
                tpl_compile(f, cfg, dev->arch, &cubin, &size, &log) != AT_OK ||
                cu->ModuleLoadData(&mod, cubin) != CUDA_SUCCESS) {
                fprintf(stderr, "batched configuration unavailable: %s\n", log ? log : config);
                return 1;
            }
            free(log);
            ex_init(&ex, cu, dev, mod, 0, exmsg, sizeof exmsg);
            c.ex = &ex;
            c.cfg = cfg;
        }
        double e_o = bo_check(bo_ours, &c, C0, (CUdeviceptr)R, nc, rrows, rcols, ref);
        if (batch == 1) {
            at_stats st;
            at_get_stats(h, &st);
            snprintf(config, sizeof config, "%s", st.last_config);
            lvl = st.last_level;
        }
        BN_CUDA(cudaMemcpy(Cv, c.C, nc * 4, cudaMemcpyDeviceToDevice));
        double e_c = bo_check(bo_cublas, &c, C0, (CUdeviceptr)R, nc, rrows, rcols, ref);
        /* ours against cuBLAS's own result, element for element (relative Frobenius) */
        double vs = -1;
        if (e_o >= 0 && e_c >= 0)
            tpl_rel_error(ref, (CUdeviceptr)Cv, (CUdeviceptr)c.C, (long long)nc, &vs);
        double tol = f->tolerance(&a.problem);
        int ok = e_o >= 0 && e_o <= tol && e_c >= 0;
        /* rounds (3, or $BENCH_OPS_ROUNDS), alternating which side goes first (clock and
         * thermal drift reach both alike); the median of each side's medians, and with more
         * than 3 rounds also the median of the rounds' paired ratios */
        double t_o[BO_MAX_ROUNDS], t_c[BO_MAX_ROUNDS], pr[BO_MAX_ROUNDS];
        for (int round = 0; round < rounds; round++) {
            t_o[round] = t_c[round] = -1;
            if (!ok)
                continue;
            if (round % 2 == 0) {
                t_o[round] = bn_time(bo_ours, &c);
                t_c[round] = bn_time(bo_cublas, &c);
            } else {
                t_c[round] = bn_time(bo_cublas, &c);
                t_o[round] = bn_time(bo_ours, &c);
            }
            pr[round] = t_o[round] > 0 && t_c[round] > 0 ? t_c[round] / t_o[round] : 0;
        }
        if (rounds > 3 && ok) {
            printf("%-22s paired rounds:", "");
            for (int round = 0; round < rounds; round++)
                printf(" %.3f", pr[round]);
            qsort(pr, rounds, sizeof pr[0], bo_cmp);
            printf("  median %.4fx (min %.3f, max %.3f)\n", pr[rounds / 2], pr[0],
                   pr[rounds - 1]);
        }
        qsort(t_o, rounds, sizeof t_o[0], bo_cmp);
        qsort(t_c, rounds, sizeof t_c[0], bo_cmp);
        double ms_o = t_o[0] > 0 ? t_o[rounds / 2] : -1, ms_c = t_c[0] > 0 ? t_c[rounds / 2] : -1;
        double fl = 2.0 * m * n * (double)k * batch * 1e-9;
        char name[64], text[64];
        tpl_problem_format(&c.p, text, sizeof text);
        snprintf(name, sizeof name, "%s", text);
        printf("%-22s %9.4f %7.2f %9.2e | %9.4f %7.2f %9.2e | %6.3fx %9.2e  %s (%s)%s\n", name,
               ms_o, ms_o > 0 ? fl / ms_o : 0, e_o, ms_c, ms_c > 0 ? fl / ms_c : 0, e_c,
               ms_o > 0 && ms_c > 0 ? ms_c / ms_o : 0, vs, config,
               level[lvl < 5 ? lvl : 0], ok ? "" : "  ** FAILED CHECK **");
        fflush(stdout);
        failures += !ok;
        if (mod) {
            ex_release(&ex);
            cu->ModuleUnload(mod);
        }
        free(cubin);
        cudaFree(c.A);
        cudaFree(c.B);
        cudaFree(c.C);
        cudaFree(C0);
        cudaFree(Cv);
        cudaFree(R);
    }
    printf("# ratio = cuBLAS ms / ours ms (same ops; row-major calls as cuBLAS's column-major "
           "C' = op(B)' op(A)'); vs cuBLAS = relative Frobenius difference of the two results; "
           "errors vs the float64 product (alpha 1, beta 0.5)\n");
    printf("# %s\n", failures ? "SOME CHECKS FAILED" : "all checks passed");
    if (d)
        db_close(d);
    at_destroy(h);
    return failures ? 1 : 0;
}

int main(int argc, char **argv)
{
    const tpl_family *f = &tpl_matmul;
    int sweep = argc > 2 && strcmp(argv[1], "--sweep") == 0;
    int ops = argc > 1 && strcmp(argv[1], "--ops") == 0;
    char db_path[4096];
    if (ops && argc > 2)
        snprintf(db_path, sizeof db_path, "%s", argv[2]);
    else if (!sweep && !ops && argc > 1)
        snprintf(db_path, sizeof db_path, "%s", argv[1]);
    else
        db_default_path(db_path, sizeof db_path);

    BN_CUDA(cudaSetDevice(0));
    BN_CUDA(cudaFree(0));       /* primary context, shared with libautotune */
    char err[1024];
    ms_gpu *g = NULL;
    if (ms_open(&g, 0, err, sizeof err) != AT_OK) {
        fprintf(stderr, "ms_open: %s\n", err);
        return 1;
    }
    const at_device_info *dev = ms_device(g);
    at_exec *ref = ms_reference(g);
    cublasHandle_t cublas;
    if (cublasCreate(&cublas) != CUBLAS_STATUS_SUCCESS) {
        fprintf(stderr, "cublasCreate failed\n");
        return 1;
    }
    cublasMath_t mode;
    cublasGetMathMode(cublas, &mode);
    if (mode != CUBLAS_DEFAULT_MATH) {
        fprintf(stderr, "cuBLAS math mode is %d, not CUBLAS_DEFAULT_MATH\n", (int)mode);
        return 1;
    }
    if (sweep)
        return bn_sweep(g, cublas, argc, argv);
    if (ops) {
        int drv = 0, rt = 0, cubv = 0;
        cudaDriverGetVersion(&drv);
        cudaRuntimeGetVersion(&rt);
        cublasGetVersion(cublas, &cubv);
        time_t now = time(NULL);
        char date[64];
        strftime(date, sizeof date, "%Y-%m-%d %H:%M:%S UTC", gmtime(&now));
        printf("# matmul --ops benchmark %s\n# GPU %s (%s, %d SMs), driver %d.%d, CUDA runtime "
               "%d.%d, cuBLAS %d (CUBLAS_DEFAULT_MATH), NVRTC %s; database %s\n", date, dev->name,
               dev->arch, dev->sm_count, drv / 1000, (drv % 1000) / 10, rt / 1000,
               (rt % 1000) / 10, cubv, tpl_nvrtc_version(), db_path);
        int rc = bn_ops(g, cublas, db_path);
        cublasDestroy(cublas);
        ms_close(g);
        return rc;
    }

    int drv = 0, rt = 0, cubv = 0;
    cudaDriverGetVersion(&drv);
    cudaRuntimeGetVersion(&rt);
    cublasGetVersion(cublas, &cubv);
    time_t now = time(NULL);
    char date[64];
    strftime(date, sizeof date, "%Y-%m-%d %H:%M:%S UTC", gmtime(&now));
    const char *tf32 = getenv("NVIDIA_TF32_OVERRIDE");
    printf("# matmul benchmark %s\n# GPU %s (%s, %d SMs), driver %d.%d, CUDA runtime %d.%d, "
           "cuBLAS %d, NVRTC %s\n# cuBLAS math mode CUBLAS_DEFAULT_MATH (FP32, no TF32), "
           "NVIDIA_TF32_OVERRIDE=%s; database %s\n",
           date, dev->name, dev->arch, dev->sm_count, drv / 1000, (drv % 1000) / 10, rt / 1000,
           (rt % 1000) / 10, cubv, tpl_nvrtc_version(), tf32 ? tf32 : "(unset)", db_path);
    printf("# TFLOP/s = 2mnk / median of >= 20 event-timed runs after warm-up; "
           "error = relative Frobenius vs float64 reference (alpha=1, beta=0.5)\n");

    at_handle *h = NULL;
    at_status s = at_create(&h, 0, db_path);
    if (s != AT_OK) {
        fprintf(stderr, "at_create: %s\n", at_status_string(s));
        return 1;
    }
    db *d = NULL;
    if (db_open(&d, db_path, 1, err, sizeof err) != AT_OK) {
        fprintf(stderr, "db_open %s: %s (measurements not stored)\n", db_path, err);
        d = NULL;
    } else if (db_put_device(d, dev, tpl_nvrtc_version()) != AT_OK) {
        fprintf(stderr, "db_put_device: %s (measurements not stored)\n", db_errmsg(d));
        db_close(d);
        d = NULL;
    }
    int seed_cfg[TPL_MAX_PARAMS];
    const char *seed_text = NULL;
    for (int b = 0; b < f->n_baselines; b++)
        if (strcmp(f->baselines[b].name, "seed_tiled") == 0)
            seed_text = f->baselines[b].config;
    void *cubin = NULL;
    size_t cubin_size = 0;
    char *clog = NULL;
    CUmodule seed_mod;
    const cudrv *cu = ms_driver(g);
    if (!seed_text || tpl_config_parse(f, seed_text, seed_cfg, err, sizeof err) != AT_OK ||
        tpl_compile(f, seed_cfg, dev->arch, &cubin, &cubin_size, &clog) != AT_OK ||
        cu->ModuleLoadData(&seed_mod, cubin) != CUDA_SUCCESS) {
        fprintf(stderr, "seed kernel unavailable: %s\n", clog ? clog : err);
        return 1;
    }
    char exmsg[1024];
    at_exec seed_ex;
    ex_init(&seed_ex, cu, dev, seed_mod, 0, exmsg, sizeof exmsg);

    printf("%-18s %8s %8s %8s %7s %9s %9s %9s  %-8s %s\n", "shape (MxNxK)", "tuned", "cuBLAS",
           "seed", "tuned/", "err", "err", "err", "lookup", "tuned configuration");
    printf("%-18s %8s %8s %8s %7s %9s %9s %9s\n", "", "TFLOP/s", "TFLOP/s", "TFLOP/s", "cuBLAS",
           "tuned", "cuBLAS", "seed");
    static const char *const level[] = {"none", "exact", "nearest", "arch", "default"};
    int failures = 0;
    double log_ratio = 0, min_ratio = 1e9;
    int n_ratio = 0;
    for (int si = 0; si < BN_NSHAPES; si++) {
        const tpl_problem *p = &bn_shapes[si];
        int m = (int)p->dims[0], n = (int)p->dims[1], k = (int)p->dims[2];
        size_t an = (size_t)m * k, bnum = (size_t)k * n, cn = (size_t)m * n;
        float *A, *B, *C, *C0, *R;
        BN_CUDA(cudaMalloc((void **)&A, an * 4));
        BN_CUDA(cudaMalloc((void **)&B, bnum * 4));
        BN_CUDA(cudaMalloc((void **)&C, cn * 4));
        BN_CUDA(cudaMalloc((void **)&C0, cn * 4));
        BN_CUDA(cudaMalloc((void **)&R, cn * 4));
        unsigned long long seed = 1000 + 3 * (unsigned long long)si;
        BN_CUDA(cudaDeviceSynchronize());
        if (tpl_fill_uniform(ref, (CUdeviceptr)A, (long long)an, seed, -1, 1) != AT_OK ||
            tpl_fill_uniform(ref, (CUdeviceptr)B, (long long)bnum, seed + 1, -1, 1) != AT_OK ||
            tpl_fill_uniform(ref, (CUdeviceptr)C0, (long long)cn, seed + 2, -1, 1) != AT_OK ||
            tpl_ref_gemm(ref, m, n, k, 1.0f, (CUdeviceptr)A, k, (CUdeviceptr)B, n, 0.5f,
                         (CUdeviceptr)C0, (CUdeviceptr)R, n) != AT_OK ||
            ex_sync(ref) != AT_OK) {
            fprintf(stderr, "reference: %s\n", ref->errmsg);
            return 1;
        }
        bn_call c = {m, n, k, 1.0f, 0.5f, A, B, C, h, cublas, &seed_ex, seed_cfg, 0, 0};
        double e_t = bn_check(bn_tuned, &c, C0, R, ref);
        at_stats st;
        at_get_stats(h, &st);
        double e_c = bn_check(bn_cublas, &c, C0, R, ref);
        double e_s = bn_check(bn_seed, &c, C0, R, ref);
        double tol = f->tolerance(p);
        int ok = e_t >= 0 && e_t <= tol;
        double t_t = ok ? bn_time(bn_tuned, &c) : -1;
        double t_c = bn_time(bn_cublas, &c);
        double t_s = bn_time(bn_seed, &c);
        double fl = 2.0 * m * n * k * 1e-9;
        double ratio = t_t > 0 && t_c > 0 ? t_c / t_t : 0;
        if (ratio > 0) {
            log_ratio += log(ratio);
            n_ratio++;
            if (ratio < min_ratio)
                min_ratio = ratio;
        }
        char shape[32];
        snprintf(shape, sizeof shape, "%dx%dx%d", m, n, k);
        printf("%-18s %8.2f %8.2f %8.2f %7.3f %9.2e %9.2e %9.2e  %-8s %s%s\n", shape,
               t_t > 0 ? fl / t_t : 0, t_c > 0 ? fl / t_c : 0, t_s > 0 ? fl / t_s : 0, ratio,
               e_t, e_c, e_s, level[st.last_level < 5 ? st.last_level : 0], st.last_config,
               ok ? "" : "  CHECK FAILED");
        fflush(stdout);
        if (!ok || t_t <= 0)
            failures++;
        bn_store(d, dev, p, "cublas", t_c, e_c, "cublasSgemm, CUBLAS_DEFAULT_MATH");
        bn_store(d, dev, p, "seed_tiled", t_s, e_s, seed_text);
        cudaFree(A);
        cudaFree(B);
        cudaFree(C);
        cudaFree(C0);
        cudaFree(R);
    }
    if (n_ratio)
        printf("# geometric mean tuned/cuBLAS %.3f over %d shapes, lowest %.3f\n",
               exp(log_ratio / n_ratio), n_ratio, min_ratio);
    printf("# %s\n", failures ? "SOME CHECKS FAILED" : "all checks passed");
    db_close(d);
    at_destroy(h);
    cu->ModuleUnload(seed_mod);
    ex_release(&seed_ex);
    free(cubin);
    free(clog);
    cublasDestroy(cublas);
    ms_close(g);
    return failures ? 1 : 0;
}
