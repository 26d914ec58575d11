/* bench_fp8_block.cuh: bench_tcgemm's BENCH_TCGEMM_FP8_BLOCK=1 mode (issue 36): block-scaled FP8
 * E4M3 x E4M3 -> BF16 (at_gemm_fp8_blockscaled: 1 x 128 scales of A, 128 x 128 of B) against our
 * own per-tensor FP8 (at_gemm_fp8) at the same shape, and cublasLtMatmul with VEC128_32F /
 * BLK128x128_32F scales where this cuBLASLt has them; each one's error against float64 of its own
 * scaled inputs. Included by bench_tcgemm.cu after its FP8 mode (its fill, reference, timing). */

/* Issue 36's block-scaled targets (4096^3, 8192^3), then two model shapes. */
static const bn_shape bn_f8b_shapes[] = {
    {4096, 4096, 4096}, {8192, 8192, 8192}, {8192, 8192, 1024}, {8192, 28672, 4096},
};
#define BN_F8B_NSHAPES ((int)(sizeof bn_f8b_shapes / sizeof bn_f8b_shapes[0]))

/* n block scales uniform in [0.5, 2) (bn_uniform's draws mapped), seeded. */
__global__ void bn_f8b_scales(float *p, size_t n, unsigned long long seed)
{
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
         i += (size_t)gridDim.x * blockDim.x)
        p[i] = 1.25f + 0.75f * bn_uniform(seed, i);
}

/* dst[j * rows + i] = src[i * cols + j]: a rows x cols float array transposed. */
__global__ void bn_f8b_transpose(const float *src, float *dst, int rows, int cols)
{
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < (size_t)rows * cols;
         i += (size_t)gridDim.x * blockDim.x)
        dst[(i % cols) * rows + i / cols] = src[i];
}

/* R = sum over K-blocks b of sa[row][b] sb[col / 128][b] (A B^T over the block) in float64, for
 * the rows 0, step, 2 step, ... (A m x k, B n x k, K-major), the rows one after another. */
__global__ void bn_f8b_reference(const unsigned char *A, const unsigned char *B, const float *sa,
                                 const float *sb, double *R, int m, int n, int k, int step)
{
    __shared__ double ta[16][17], tb[16][17];
    int rr = blockIdx.y * 16 + threadIdx.y, row = rr * step, col = blockIdx.x * 16 + threadIdx.x;
    int brow = blockIdx.x * 16 + threadIdx.y, kb = (k + 127) / 128;
    double acc = 0, blk = 0;
    for (int p0 = 0; p0 < k; p0 += 16) {
        int pa = p0 + threadIdx.x;
        ta[threadIdx.y][threadIdx.x] = row < m && pa < k ? bn_f8_load(A, (size_t)row * k + pa, 1) : 0;
        tb[threadIdx.x][threadIdx.y] = brow < n && pa < k ? bn_f8_load(B, (size_t)brow * k + pa, 1) : 0;
        __syncthreads();
        for (int q = 0; q < 16; q++)
            blk += ta[threadIdx.y][q] * tb[q][threadIdx.x];
        __syncthreads();
        if ((p0 + 16) % 128 == 0 || p0 + 16 >= k) {
            if (row < m && col < n)
                acc += (double)sa[(size_t)row * kb + p0 / 128] * sb[(size_t)(col / 128) * kb + p0 / 128] * blk;
            blk = 0;
        }
    }
    if (row < m && col < n)
        R[(size_t)rr * n + col] = acc;
}

/* The error over the reference's rows of the m x n BF16 C, row-major (col_major 0) or not. */
__global__ void bn_f8b_error(const __nv_bfloat16 *C, const double *R, int rows, int m, int n,
                             int step, int col_major, double *sums)
{
    bench_error_sums([=](size_t i) {
        size_t rr = i / n, col = i % n, row = rr * step;
        return (double)__bfloat162float(C[col_major ? row + col * (size_t)m : row * n + col]);
    }, R, (size_t)rows * n, sums);
}

typedef struct bn_f8b_call {
    int m, n, k;
    void *A, *B, *C;
    float *sa, *sb;                 /* block scales, row-major (at_gemm_fp8_blockscaled's) */
    float *lsa, *lsb;               /* the scales as given to cuBLASLt (one of two layouts) */
    float *tensor;                  /* per-tensor scale_a, scale_b (16-byte apart) */
    at_handle *h;
    cublasLtHandle_t lt;
    cublasLtMatmulDesc_t op;
    cublasLtMatrixLayout_t la, lb, lc;
    cublasLtMatmulAlgo_t algo;
    int lt_ok;                      /* cuBLASLt has a block-scaled algorithm for the shape */
    void *ws;
} bn_f8b_call;

/* Ours, block scales: row-major C (m x n) = A B^T, A m x k and B n x k (the layout read in place). */
static int bn_f8b_ours(const bn_f8b_call *c)
{
    at_status s = at_gemm_fp8_blockscaled(c->h, AT_ROW_MAJOR, AT_OP_N, AT_OP_T, c->m, c->n, c->k,
                                          AT_R_8F_E4M3, AT_R_8F_E4M3, AT_R_16BF, 1.0, c->A, c->k,
                                          c->sa, c->B, c->k, c->sb, 0.0, c->C, c->n, NULL);
    if (s != AT_OK)
        fprintf(stderr, "at_gemm_fp8_blockscaled: %s: %s\n", at_status_string(s), at_errmsg(c->h));
    return s != AT_OK;
}

/* Ours, per-tensor scales, the same operands and layout. */
static int bn_f8b_tensor(const bn_f8b_call *c)
{
    at_status s = at_gemm_fp8(c->h, AT_ROW_MAJOR, AT_OP_N, AT_OP_T, c->m, c->n, c->k, AT_R_8F_E4M3,
                              AT_R_8F_E4M3, AT_R_16BF, 1.0, c->A, c->k, c->tensor, c->B, c->k,
                              c->tensor + 4, 0.0, c->C, c->n, NULL);
    if (s != AT_OK)
        fprintf(stderr, "at_gemm_fp8: %s: %s\n", at_status_string(s), at_errmsg(c->h));
    return s != AT_OK;
}

/* cuBLASLt, block scales: column-major D (m x n) = A^T B with A k x m and B k x n (TN). */
static int bn_f8b_lt(const bn_f8b_call *c)
{
    const float one = 1.0f, zero = 0.0f;
    cublasStatus_t s = cublasLtMatmul(c->lt, c->op, &one, c->A, c->la, c->B, c->lb, &zero, c->C,
                                      c->lc, c->C, c->lc, &c->algo, c->ws, BN_LT_WORKSPACE, 0);
    if (s != CUBLAS_STATUS_SUCCESS)
        fprintf(stderr, "cublasLtMatmul block-scaled FP8 failed: %d\n", (int)s);
    return s != CUBLAS_STATUS_SUCCESS;
}

/* cuBLASLt TN with A_SCALE_MODE VEC128_32F and B_SCALE_MODE BLK128x128_32F (cuBLAS 12.9 and
 * later; earlier headers: none), the heuristic's first algorithm; c->lt_ok 1 when it has one. */
static void bn_f8b_lt_setup(bn_f8b_call *c)
{
    c->lt_ok = 0;
#if defined(CUBLAS_VERSION) && CUBLAS_VERSION >= 120900
    cublasOperation_t t = CUBLAS_OP_T, no = CUBLAS_OP_N;
    int32_t ma = CUBLASLT_MATMUL_MATRIX_SCALE_VEC128_32F, mb = CUBLASLT_MATMUL_MATRIX_SCALE_BLK128x128_32F;
    const float *sa = c->lsa, *sb = c->lsb;
    if (cublasLtMatmulDescCreate(&c->op, CUBLAS_COMPUTE_32F, CUDA_R_32F) ||
        cublasLtMatmulDescSetAttribute(c->op, CUBLASLT_MATMUL_DESC_TRANSA, &t, sizeof t) ||
        cublasLtMatmulDescSetAttribute(c->op, CUBLASLT_MATMUL_DESC_TRANSB, &no, sizeof no) ||
        cublasLtMatmulDescSetAttribute(c->op, CUBLASLT_MATMUL_DESC_A_SCALE_MODE, &ma, sizeof ma) ||
        cublasLtMatmulDescSetAttribute(c->op, CUBLASLT_MATMUL_DESC_B_SCALE_MODE, &mb, sizeof mb) ||
        cublasLtMatmulDescSetAttribute(c->op, CUBLASLT_MATMUL_DESC_A_SCALE_POINTER, &sa, sizeof sa) ||
        cublasLtMatmulDescSetAttribute(c->op, CUBLASLT_MATMUL_DESC_B_SCALE_POINTER, &sb, sizeof sb) ||
        cublasLtMatrixLayoutCreate(&c->la, CUDA_R_8F_E4M3, c->k, c->m, c->k) ||
        cublasLtMatrixLayoutCreate(&c->lb, CUDA_R_8F_E4M3, c->k, c->n, c->k) ||
        cublasLtMatrixLayoutCreate(&c->lc, CUDA_R_16BF, c->m, c->n, c->m))
        return;
    cublasLtMatmulPreference_t pref;
    size_t wsz = BN_LT_WORKSPACE;
    cublasLtMatmulHeuristicResult_t res;
    int found = 0;
    if (cublasLtMatmulPreferenceCreate(&pref) ||
        cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &wsz,
                                             sizeof wsz))
        return;
    if (!cublasLtMatmulAlgoGetHeuristic(c->lt, c->op, c->la, c->lb, c->lc, c->lc, pref, 1, &res,
                                        &found) && found > 0) {
        c->algo = res.algo;
        c->lt_ok = 1;
    }
    cublasLtMatmulPreferenceDestroy(pref);
#endif
}

static void bn_f8b_lt_teardown(bn_f8b_call *c)
{
    if (c->op)
        cublasLtMatmulDescDestroy(c->op);
    if (c->la)
        cublasLtMatrixLayoutDestroy(c->la);
    if (c->lb)
        cublasLtMatrixLayoutDestroy(c->lb);
    if (c->lc)
        cublasLtMatrixLayoutDestroy(c->lc);
}

/* The relative error of op's C over the reference rows, C column-major for cuBLASLt
 * (bn_check_with). */
static double bn_f8b_check(int (*op)(const bn_f8b_call *), const bn_f8b_call *c, const double *R,
                           int rows, int step, double *sums)
{
    return bn_check_with(op, c, (size_t)c->m * c->n, 0, sums, [=] {
        bn_f8b_error<<<1024, 256>>>((const __nv_bfloat16 *)c->C, R, rows, c->m, c->n, step,
                                    op == bn_f8b_lt, sums);
    });
}

/* Block-scaled against per-tensor FP8 (ours) and cuBLASLt's block scaling; rounds alternate the
 * order. The per-tensor run uses scales 0.75 and 1.25 on the same bytes, so each error is against
 * float64 of its own scaled inputs (the accumulation's error). 0 if every check passed. */
static int bn_fp8_block_main(at_handle *h, cublasLtHandle_t lt, const cudaDeviceProp *prop,
                             int rounds)
{
    printf("Block-scaled FP8 GEMM E4M3 x E4M3 -> BF16 on %s (cuBLASLt %zu): blk = "
           "at_gemm_fp8_blockscaled (row-major NT, scales of A per 1 x 128, of B per 128 x 128, "
           "uniform in [0.5, 2)), pt = at_gemm_fp8 per-tensor (0.75, 1.25) on the same bytes, Lt = "
           "cublasLtMatmul TN with VEC128_32F / BLK128x128_32F scales (the scale layout that "
           "matched the reference: rm = ours, km = K-block-major); error = ||C - R||_F / ||R||_F "
           "over every (m/512)-th row against float64 of each one's scaled inputs; %d rounds "
           "alternating the order, each the median of >= 20 CUDA-event timings; x = median of "
           "per-round ratios (target: blk/pt >= 0.9)\n", prop->name, cublasLtGetVersion(), rounds);
    printf("\n%-17s %9s %8s %9s | %9s %8s %9s | %9s %8s %9s %2s | %7s %7s  %s\n", "m x n x k",
           "blk ms", "TF/s", "error", "pt ms", "TF/s", "error", "Lt ms", "TF/s", "error", "",
           "blk/pt", "blk/Lt", "configuration (lookup level)");
    int failures = 0;
    for (int i = 0; i < BN_F8B_NSHAPES; i++) {
        bn_f8b_call c;
        memset(&c, 0, sizeof c);
        c.m = bn_f8b_shapes[i].m;
        c.n = bn_f8b_shapes[i].n;
        c.k = bn_f8b_shapes[i].k;
        c.h = h;
        c.lt = lt;
        int kb = (c.k + 127) / 128, nb = (c.n + 127) / 128;
        size_t na = (size_t)c.m * c.k, nbb = (size_t)c.n * c.k, nc = (size_t)c.m * c.n;
        int step = c.m >= 512 ? c.m / 512 : 1, rows = (c.m + step - 1) / step;
        double *R, *RT, *sums;
        BN_CUDA(cudaMalloc(&c.A, na));
        BN_CUDA(cudaMalloc(&c.B, nbb));
        BN_CUDA(cudaMalloc(&c.C, nc * 2));
        BN_CUDA(cudaMalloc(&c.sa, (size_t)c.m * kb * 4));
        BN_CUDA(cudaMalloc(&c.sb, (size_t)nb * kb * 4));
        /* cuBLASLt's copies padded (rows and K-blocks rounded up), so a layout that pads its
         * dimensions reads inside the allocation */
        BN_CUDA(cudaMalloc(&c.lsa, (size_t)(c.m + 128) * (kb + 4) * 4));
        BN_CUDA(cudaMalloc(&c.lsb, (size_t)(nb + 4) * (kb + 4) * 4));
        BN_CUDA(cudaMalloc(&c.tensor, 8 * sizeof(float)));
        BN_CUDA(cudaMalloc(&c.ws, BN_LT_WORKSPACE));
        BN_CUDA(cudaMalloc(&R, (size_t)rows * c.n * sizeof(double)));
        BN_CUDA(cudaMalloc(&RT, (size_t)rows * c.n * sizeof(double)));
        BN_CUDA(cudaMalloc(&sums, 3 * sizeof(double)));
        const float tensor[8] = {BN_F8_SCALE_A, 0, 0, 0, BN_F8_SCALE_B, 0, 0, 0};
        BN_CUDA(cudaMemcpy(c.tensor, tensor, sizeof tensor, cudaMemcpyHostToDevice));
        unsigned long long seed = 0xb1ull * (unsigned long long)(i + 1);
        bn_f8_fill<<<1024, 256>>>((unsigned char *)c.A, na, 1, seed);
        bn_f8_fill<<<1024, 256>>>((unsigned char *)c.B, nbb, 1, seed ^ 0xabcdefull);
        bn_f8b_scales<<<256, 256>>>(c.sa, (size_t)c.m * kb, seed + 1);
        bn_f8b_scales<<<256, 256>>>(c.sb, (size_t)nb * kb, seed + 2);
        dim3 grid((unsigned)((c.n + 15) / 16), (unsigned)((rows + 15) / 16));
        bn_f8b_reference<<<grid, dim3(16, 16)>>>((const unsigned char *)c.A,
                                                 (const unsigned char *)c.B, c.sa, c.sb, R, c.m,
                                                 c.n, c.k, step);
        bn_f8_reference<<<grid, dim3(16, 16)>>>((const unsigned char *)c.A,
                                                (const unsigned char *)c.B, RT, c.m, c.n, c.k,
                                                step, 1, (double)BN_F8_SCALE_A * BN_F8_SCALE_B);
        BN_CUDA(cudaDeviceSynchronize());
        /* the rule of each kind (templates/tcgemm.c): BF16's plus the FP8 accumulation's */
        double sk = 4 * sqrt((double)c.k), base = 2 * ldexp(1, -8) + (sk + c.k / 8.0) * ldexp(1, -24);
        double tol_b = base + (sk + 8) * ldexp(1, -13), tol_t = base + (sk + c.k / 32.0) * ldexp(1, -13);
        double e_b = bn_f8b_check(bn_f8b_ours, &c, R, rows, step, sums);
        at_stats st;
        at_get_stats(h, &st);
        char config[sizeof st.last_config];
        snprintf(config, sizeof config, "%s", st.last_config);
        at_lookup_level level = st.last_level;
        double e_t = bn_f8b_check(bn_f8b_tensor, &c, RT, rows, step, sums);
        /* cuBLASLt's scale layout: ours (row-major, K-block fastest), else K-block-major */
        double e_l = -1;
        const char *lt_layout = "--";
        for (int lay = 0; lay < 2 && e_l < 0; lay++) {
            if (lay == 0) {
                BN_CUDA(cudaMemcpy(c.lsa, c.sa, (size_t)c.m * kb * 4, cudaMemcpyDeviceToDevice));
                BN_CUDA(cudaMemcpy(c.lsb, c.sb, (size_t)nb * kb * 4, cudaMemcpyDeviceToDevice));
            } else {
                bn_f8b_transpose<<<256, 256>>>(c.sa, c.lsa, c.m, kb);
                bn_f8b_transpose<<<256, 256>>>(c.sb, c.lsb, nb, kb);
            }
            bn_f8b_lt_teardown(&c);
            c.op = NULL, c.la = c.lb = c.lc = NULL;
            bn_f8b_lt_setup(&c);
            if (!c.lt_ok)
                break;
            double e = bn_f8b_check(bn_f8b_lt, &c, R, rows, step, sums);
            if (e >= 0 && e <= tol_t) {
                e_l = e;
                lt_layout = lay ? "km" : "rm";
            }
        }
        /* cuBLASLt timed only where its check passed (its ms -1 and blk/Lt 0 otherwise) */
        int (*const ops[3])(const bn_f8b_call *) = {bn_f8b_ours, bn_f8b_tensor, bn_f8b_lt};
        int ran = e_b >= 0 && e_t >= 0;                           /* each check's call ran */
        bench_rounds timed = bn_time_rounds(ops, e_l >= 0 ? 3 : 2, &c, ran ? rounds : 0);
        const double *ms = timed.ms;
        double flop = 2.0 * c.m * c.n * (double)c.k;
        /* the checks: each within its rule, and block scaling no worse than per-tensor */
        int ok = e_b >= 0 && e_b <= tol_b && e_t >= 0 && e_t <= tol_t && e_b <= e_t;
        char shape[64];
        snprintf(shape, sizeof shape, "%dx%dx%d", c.m, c.n, c.k);
        printf("%-17s %9.4f %8.1f %9.2e | %9.4f %8.1f %9.2e | %9.4f %8.1f %9.2e %2s | %6.3fx "
               "%6.3fx  %s (%s)%s\n", shape, ms[0], ms[0] > 0 ? flop / ms[0] / 1e9 : 0, e_b,
               ms[1], ms[1] > 0 ? flop / ms[1] / 1e9 : 0, e_t, ms[2],
               ms[2] > 0 ? flop / ms[2] / 1e9 : 0, e_l, lt_layout, timed.over_first[1],
               timed.over_first[2], config, bn_levels[level], ok ? "" : "  ** FAILED CHECK **");
        fflush(stdout);
        failures += !ok;
        bn_f8b_lt_teardown(&c);
        cudaFree(c.A);
        cudaFree(c.B);
        cudaFree(c.C);
        cudaFree(c.sa);
        cudaFree(c.sb);
        cudaFree(c.lsa);
        cudaFree(c.lsb);
        cudaFree(c.tensor);
        cudaFree(c.ws);
        cudaFree(R);
        cudaFree(RT);
        cudaFree(sums);
    }
    return failures ? 1 : 0;
}
