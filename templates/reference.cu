/* reference.cu: trusted float64 references and input generators used to
 * verify every configuration (compiled once per process with NVRTC). */

#ifndef REF_TILE
#define REF_TILE 16  /* tile edge of the reference GEMM; 16 */
#endif

/* Counter-based generator: the same (seed, index) always gives the same
 * value, so inputs are reproducible and need no state. */
__device__ __forceinline__ unsigned long long ref_mix(unsigned long long z)
{
    z += 0x9E3779B97F4A7C15ull;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

__device__ __forceinline__ float ref_uniform(unsigned long long seed, long long i,
                                             float lo, float hi)
{
    unsigned long long bits = ref_mix(seed * 0x100000001B3ull ^ (unsigned long long)i);
    float u = (float)(bits >> 40) * (1.0f / 16777216.0f); /* [0, 1) */
    return lo + (hi - lo) * u;
}

extern "C" __global__ void ref_fill_uniform(float *p, long long n,
                                            unsigned long long seed, float lo, float hi)
{
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n;
         i += (long long)gridDim.x * blockDim.x)
        p[i] = ref_uniform(seed, i, lo, hi);
}

/* One block per row: off-diagonal uniform in [-1, 1), then the diagonal is
 * margin * (sum of |off-diagonal|) so the row is strictly dominant. */
extern "C" __global__ void ref_fill_diag_dominant(float *A, int n,
                                                  unsigned long long seed, float margin)
{
    __shared__ double partial[256];
    int row = blockIdx.x;
    double sum = 0.0;
    for (int j = threadIdx.x; j < n; j += blockDim.x) {
        long long idx = (long long)row * n + j;
        if (j == row)
            continue;
        float v = ref_uniform(seed, idx, -1.0f, 1.0f);
        A[idx] = v;
        sum += fabs((double)v);
    }
    partial[threadIdx.x] = sum;
    __syncthreads();
    for (int s = blockDim.x / 2; s > 0; s >>= 1) {
        if (threadIdx.x < s)
            partial[threadIdx.x] += partial[threadIdx.x + s];
        __syncthreads();
    }
    if (threadIdx.x == 0)
        A[(long long)row * n + row] = (float)(margin * partial[0] + 1.0);
}

/* C = alpha * A * B + beta * C0 with float64 accumulation; C0 may be C. */
extern "C" __global__ void ref_gemm(int m, int n, int k, float alpha,
                                    const float *A, int lda, const float *B, int ldb,
                                    float beta, const float *C0, float *C, int ldc)
{
    __shared__ double As[REF_TILE][REF_TILE];
    __shared__ double Bs[REF_TILE][REF_TILE + 1];
    int row = blockIdx.y * REF_TILE + threadIdx.y;
    int col = blockIdx.x * REF_TILE + threadIdx.x;
    double acc = 0.0;
    for (int t = 0; t < k; t += REF_TILE) {
        int ak = t + threadIdx.x, bk = t + threadIdx.y;
        As[threadIdx.y][threadIdx.x] =
            (row < m && ak < k) ? (double)A[(long long)row * lda + ak] : 0.0;
        Bs[threadIdx.y][threadIdx.x] =
            (bk < k && col < n) ? (double)B[(long long)bk * ldb + col] : 0.0;
        __syncthreads();
        for (int i = 0; i < REF_TILE; i++)
            acc += As[threadIdx.y][i] * Bs[i][threadIdx.x];
        __syncthreads();
    }
    if (row < m && col < n) {
        long long idx = (long long)row * ldc + col;
        double out = (double)alpha * acc;
        if (beta != 0.0f)
            out += (double)beta * (double)C0[idx];
        C[idx] = (float)out;
    }
}

/* ---- typed data (element types as at_dtype numbers them: 0 f32, 1 f64, 2 f16,
 * 3 bf16, 4 FP8 E4M3, 5 FP8 E5M2) for the tensor-core GEMM's verification ---- */

/* The FP8 formats in integer and float64 arithmetic only (no conversion instruction, so the
 * reference depends on no hardware FP8 path): E4M3 has 3 mantissa bits, bias 7, no infinity,
 * S.1111.111 NaN, largest 448; E5M2 2 bits, bias 15, IEEE infinities and NaNs, largest 57344. */
__device__ __forceinline__ double ref_fp8_decode(unsigned char b, int e4m3)
{
    const int mb = e4m3 ? 3 : 2, bias = e4m3 ? 7 : 15, eb = e4m3 ? 4 : 5;
    int sign = b >> 7, e = (b >> mb) & ((1 << eb) - 1), f = b & ((1 << mb) - 1);
    double v;
    if (e4m3 && e == 15 && f == 7)
        v = __longlong_as_double(0x7ff8000000000000LL);                  /* NaN */
    else if (!e4m3 && e == 31)
        v = f ? __longlong_as_double(0x7ff8000000000000LL) : __longlong_as_double(0x7ff0000000000000LL);
    else if (e == 0)
        v = ldexp((double)f, 1 - bias - mb);                              /* subnormal */
    else
        v = ldexp((double)((1 << mb) + f), e - bias - mb);
    return sign ? -v : v;
}

/* v rounded to nearest even in E4M3 (e4m3 1) or E5M2, as bits; finite v beyond the largest
 * value saturates to it (the references' data lie in [-1, 1)). */
__device__ __forceinline__ unsigned char ref_fp8_encode(float v, int e4m3)
{
    const int mb = e4m3 ? 3 : 2, bias = e4m3 ? 7 : 15;
    const double maxv = e4m3 ? 448.0 : 57344.0;
    unsigned char sign = v < 0.0f ? 0x80 : 0;
    double a = fabs((double)v);
    if (a == 0.0)
        return sign;
    int e;
    frexp(a, &e);                   /* a = f 2^e, f in [0.5, 1): the leading bit is 2^(e-1) */
    e -= 1;
    if (e < 1 - bias)
        e = 1 - bias;               /* subnormal: the smallest normal's spacing */
    double q = rint(ldexp(a, mb - e));          /* ties to even, in units of the spacing */
    double r = ldexp(q, e - mb);
    if (r > maxv)
        r = maxv;
    if (r == 0.0)
        return sign;                /* rounded to zero (frexp of 0 has no binade to encode) */
    /* re-encode the rounded value exactly (it may have carried into the next binade) */
    int er;
    frexp(r, &er);
    er -= 1;
    unsigned char bits;
    if (er < 1 - bias) {
        bits = (unsigned char)(int)ldexp(r, bias - 1 + mb);               /* subnormal */
    } else {
        int f = (int)ldexp(r, mb - er) - (1 << mb);
        bits = (unsigned char)(((er + bias) << mb) | f);
    }
    return sign | bits;
}

/* Element i of a typed array as a double (exact: every type widens exactly). */
__device__ __forceinline__ double ref_load_typed(const void *p, long long i, int dtype)
{
    if (dtype == 4 || dtype == 5)
        return ref_fp8_decode(((const unsigned char *)p)[i], dtype == 4);
    if (dtype == 1)
        return ((const double *)p)[i];
    if (dtype == 0)
        return (double)((const float *)p)[i];
    unsigned short h = ((const unsigned short *)p)[i];
    if (dtype == 3)
        return (double)__uint_as_float((unsigned)h << 16);
    float f;
    asm("{ .reg .b16 t; mov.b16 t, %1; cvt.f32.f16 %0, t; }" : "=f"(f) : "h"(h));
    return (double)f;
}

/* Stores v rounded to nearest even into element i of a typed array. */
__device__ __forceinline__ void ref_store_typed(void *p, long long i, int dtype, float v)
{
    unsigned short h;
    if (dtype == 4 || dtype == 5) {
        ((unsigned char *)p)[i] = ref_fp8_encode(v, dtype == 4);
        return;
    }
    if (dtype == 1) {
        ((double *)p)[i] = (double)v;
        return;
    }
    if (dtype == 0) {
        ((float *)p)[i] = v;
        return;
    }
    if (dtype == 3)
        asm("cvt.rn.bf16.f32 %0, %1;" : "=h"(h) : "f"(v));
    else
        asm("cvt.rn.f16.f32 %0, %1;" : "=h"(h) : "f"(v));
    ((unsigned short *)p)[i] = h;
}

/* n elements of type dtype: uniform in [lo, hi) (the float ref_fill_uniform
 * draws), rounded to the type. */
extern "C" __global__ void ref_fill_typed(void *p, long long n, int dtype,
                                          unsigned long long seed, float lo, float hi)
{
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n;
         i += (long long)gridDim.x * blockDim.x)
        ref_store_typed(p, i, dtype, ref_uniform(seed, i, lo, hi));
}

/* An input element as the tensor cores see it: tf32 != 0 rounds FP32 to TF32
 * (to nearest, ties to even, on the magnitude bits; the 13 low mantissa bits
 * then zero), as the tcgemm family's TFLOAT32 tensor maps and cuBLAS do.
 * Finite inputs (the references' data are). */
__device__ __forceinline__ double ref_operand(const void *p, long long i, int dtype, int tf32)
{
    if (tf32 && dtype == 0) {
        unsigned x = __float_as_uint(((const float *)p)[i]);
        return (double)__uint_as_float((x + 0xfffu + ((x >> 13) & 1u)) & 0xffffe000u);
    }
    return ref_load_typed(p, i, dtype);
}

/* R = alpha * A * B + beta * C0 in float64, NOT rounded to the type: A m x k
 * (lda), B k x n (ldb), C0 m x n (ldc0; unread when beta == 0), all of type
 * dtype; R m x n float64 with leading dimension ldr. */
extern "C" __global__ void ref_gemm_typed(int m, int n, int k, float alpha, const void *A,
                                          long long lda, const void *B, long long ldb,
                                          float beta, const void *C0, long long ldc0,
                                          double *R, long long ldr, int dtype, int tf32)
{
    __shared__ double As[REF_TILE][REF_TILE];
    __shared__ double Bs[REF_TILE][REF_TILE + 1];
    int row = blockIdx.y * REF_TILE + threadIdx.y;
    int col = blockIdx.x * REF_TILE + threadIdx.x;
    double acc = 0.0;
    for (int t = 0; t < k; t += REF_TILE) {
        int ak = t + threadIdx.x, bk = t + threadIdx.y;
        As[threadIdx.y][threadIdx.x] =
            (row < m && ak < k) ? ref_operand(A, (long long)row * lda + ak, dtype, tf32) : 0.0;
        Bs[threadIdx.y][threadIdx.x] =
            (bk < k && col < n) ? ref_operand(B, (long long)bk * ldb + col, dtype, tf32) : 0.0;
        __syncthreads();
        for (int i = 0; i < REF_TILE; i++)
            acc += As[threadIdx.y][i] * Bs[i][threadIdx.x];
        __syncthreads();
    }
    if (row < m && col < n) {
        double out = (double)alpha * acc;
        if (beta != 0.0f)
            out += (double)beta * ref_load_typed(C0, (long long)row * ldc0 + col, dtype);
        R[(long long)row * ldr + col] = out;
    }
}

/* R[z] = alpha * op(A[z]) op(B[z]) + beta * C0[z] in float64 for a batch of products (grid z:
 * the product), NOT rounded: element (i, p) of op(A) is A[z * a_bs + i * a_rs + p * a_cs],
 * (p, j) of op(B) is B[z * b_bs + p * b_rs + j * b_cs] (so either operand may be transposed),
 * C0 row-major with ldc0 and batch stride c_bs (unread when beta == 0); R batch x m x n,
 * contiguous. A of type dtype_a, B of dtype_b (FP8 decoded exactly), C0 of dtype; TF32 rounding
 * as ref_gemm_typed. Block scales (scale_rows and scale_blocks non-null; every product alike):
 * the sum over each K-block of 128 is multiplied by scale_rows[i * kb + b] * scale_blocks[(j /
 * 128) * kb + b], kb = ceil(k / 128), before it is added (float64 throughout). */
extern "C" __global__ void ref_gemm_strided(int m, int n, int k, double alpha, const void *A,
                                            long long a_rs, long long a_cs, long long a_bs,
                                            const void *B, long long b_rs, long long b_cs,
                                            long long b_bs, double beta, const void *C0,
                                            long long ldc0, long long c_bs, double *R, int dtype,
                                            int tf32, int dtype_a, int dtype_b,
                                            const float *scale_rows, const float *scale_blocks)
{
    __shared__ double As[REF_TILE][REF_TILE];
    __shared__ double Bs[REF_TILE][REF_TILE + 1];
    long long z = blockIdx.z;
    int row = blockIdx.y * REF_TILE + threadIdx.y;
    int col = blockIdx.x * REF_TILE + threadIdx.x;
    double acc = 0.0, block = 0.0;
    const int blocked = scale_rows && scale_blocks;
    const long long kb = (k + 127) / 128;
    for (int t = 0; t < k; t += REF_TILE) {
        int ak = t + threadIdx.x, bk = t + threadIdx.y;
        As[threadIdx.y][threadIdx.x] = (row < m && ak < k)
            ? ref_operand(A, z * a_bs + row * a_rs + ak * a_cs, dtype_a, tf32) : 0.0;
        Bs[threadIdx.y][threadIdx.x] = (bk < k && col < n)
            ? ref_operand(B, z * b_bs + bk * b_rs + col * b_cs, dtype_b, tf32) : 0.0;
        __syncthreads();
        for (int i = 0; i < REF_TILE; i++)
            block += As[threadIdx.y][i] * Bs[i][threadIdx.x];
        __syncthreads();
        if (!blocked) {
            acc += block;
            block = 0.0;
        } else if ((t + REF_TILE) % 128 == 0 || t + REF_TILE >= k) {   /* REF_TILE divides 128 */
            long long b = t / 128;
            if (row < m && col < n)
                acc += (double)scale_rows[row * kb + b] * (double)scale_blocks[(col / 128) * kb + b] *
                       block;
            block = 0.0;
        }
    }
    if (row < m && col < n) {
        double out = alpha * acc;
        if (beta != 0.0)
            out += beta * ref_load_typed(C0, z * c_bs + row * ldc0 + col, dtype);
        R[(z * m + row) * n + col] = out;
    }
}

/* The fused epilogue in float64 on the unfused result R (batch x m x n doubles, contiguous):
 * R = act(R + bias) with epi = bias * 4 + act (tpl.h TPL_EPI): bias 1 adds bias[i] to row i,
 * 2 bias[j] to column j (a vector of type dtype, one for every product); act 1 ReLU, 2 GELU
 * 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))), 3 GELU 0.5 x (1 + erf(x / sqrt(2))).
 * Grid-stride over the batch x m x n values. */
extern "C" __global__ void ref_epilogue(double *R, long long total, int m, int n, int epi,
                                        const void *bias, int dtype)
{
    int kind = epi / 4, act = epi % 4;
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < total;
         i += (long long)gridDim.x * blockDim.x) {
        long long col = i % n, row = (i / n) % m;
        double x = R[i];
        if (kind == 1)
            x += ref_load_typed(bias, row, dtype);
        else if (kind == 2)
            x += ref_load_typed(bias, col, dtype);
        if (act == 1)
            x = x < 0.0 ? 0.0 : x;
        else if (act == 2)
            x = 0.5 * x * (1.0 + tanh(0.7978845608028654 * (x + 0.044715 * x * x * x)));
        else if (act == 3)
            x = 0.5 * x * (1.0 + erf(x * 0.7071067811865476));
        R[i] = x;
    }
}

__device__ __forceinline__ double ref_block_sum(double v, double *shared)
{
    shared[threadIdx.x] = v;
    __syncthreads();
    for (int s = blockDim.x / 2; s > 0; s >>= 1) {
        if (threadIdx.x < s)
            shared[threadIdx.x] += shared[threadIdx.x + s];
        __syncthreads();
    }
    double total = shared[0];
    __syncthreads();
    return total;
}

/* acc[0] += sum x[i] (or x[i] * y[i] when y is not null), in float64. */
extern "C" __global__ void ref_reduce(long long n, const float *x, const float *y,
                                      double *acc)
{
    __shared__ double shared[256];
    double sum = 0.0;
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n;
         i += (long long)gridDim.x * blockDim.x)
        sum += y ? (double)x[i] * (double)y[i] : (double)x[i];
    sum = ref_block_sum(sum, shared);
    if (threadIdx.x == 0)
        atomicAdd(acc, sum);
}

/* ---- double precision sum and dot: compensated, a reference for double kernels ---- */

/* n doubles uniform in [0, 1) with all 53 bits random (the float draws of
 * ref_fill_uniform widened would make every double sum of them exact). */
extern "C" __global__ void ref_fill_f64(double *p, long long n, unsigned long long seed,
                                        double lo, double hi)
{
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n;
         i += (long long)gridDim.x * blockDim.x) {
        unsigned long long bits = ref_mix(seed * 0x100000001B3ull ^ (unsigned long long)i);
        p[i] = lo + (hi - lo) * ((double)(bits >> 11) * 0x1p-53);
    }
}

/* s + e == a + b exactly (Knuth's TwoSum, any order of magnitudes; the
 * intrinsics keep the compiler from reassociating). */
__device__ __forceinline__ void ref_two_sum(double a, double b, double *s, double *e)
{
    double t = __dadd_rn(a, b), bv = __dadd_rn(t, -a);
    *e = __dadd_rn(__dadd_rn(a, -__dadd_rn(t, -bv)), __dadd_rn(b, -bv));
    *s = t;
}

/* The block's grid-strided share of sum x[i] (y NULL) or sum x[i] y[i] as an
 * unevaluated pair hi + lo: every addition error-free (TwoSum) and every
 * product split exactly by an FMA (TwoProduct), the errors summed in lo, the
 * block's pairs combined the same way. Accurate to about n 2^-106 relative
 * for positive data (Ogita, Rump, Oishi's Sum2/Dot2), where a plain float64
 * sum is off by up to n 2^-53: the error of the double kernels it checks.
 * Writes out[2 * block] = hi, out[2 * block + 1] = lo (blockDim.x = 256). */
extern "C" __global__ void ref_reduce_f64(long long n, const double *x, const double *y,
                                          double *out)
{
    __shared__ double hs[256], ls[256];
    double hi = 0.0, lo = 0.0;
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n;
         i += (long long)gridDim.x * blockDim.x) {
        double v = x[i], e = 0.0, t;
        if (y) {
            v = x[i] * y[i];
            e = fma(x[i], y[i], -v);
        }
        ref_two_sum(hi, v, &hi, &t);
        lo += t + e;
    }
    hs[threadIdx.x] = hi;
    ls[threadIdx.x] = lo;
    __syncthreads();
    for (int s = blockDim.x / 2; s > 0; s >>= 1) {
        if (threadIdx.x < s) {
            double h, t;
            ref_two_sum(hs[threadIdx.x], hs[threadIdx.x + s], &h, &t);
            hs[threadIdx.x] = h;
            ls[threadIdx.x] += ls[threadIdx.x + s] + t;
        }
        __syncthreads();
    }
    if (threadIdx.x == 0) {
        out[2 * blockIdx.x] = hs[0];
        out[2 * blockIdx.x + 1] = ls[0];
    }
}

/* acc[0] += sum (out-ref)^2, acc[1] += sum ref^2, acc[2] += count of
 * non-finite values in out. */
extern "C" __global__ void ref_error(long long n, const float *out, const float *ref,
                                     double *acc)
{
    __shared__ double shared[256];
    double diff2 = 0.0, ref2 = 0.0, bad = 0.0;
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n;
         i += (long long)gridDim.x * blockDim.x) {
        float o = out[i];
        double r = (double)ref[i];
        if (!isfinite(o)) {
            bad += 1.0;
            continue;
        }
        double d = (double)o - r;
        diff2 += d * d;
        ref2 += r * r;
    }
    diff2 = ref_block_sum(diff2, shared);
    ref2 = ref_block_sum(ref2, shared);
    bad = ref_block_sum(bad, shared);
    if (threadIdx.x == 0) {
        atomicAdd(acc, diff2);
        atomicAdd(acc + 1, ref2);
        atomicAdd(acc + 2, bad);
    }
}

/* Over the rows x cols region of out (type dtype, leading dimension ldo)
 * against ref (float64, leading dimension ldr): acc[0] += sum (out-ref)^2,
 * acc[1] += sum ref^2, acc[2] += count of non-finite values in out. */
extern "C" __global__ void ref_error_typed(int rows, int cols, const void *out, long long ldo,
                                           int dtype, const double *ref, long long ldr,
                                           double *acc)
{
    __shared__ double shared[256];
    double diff2 = 0.0, ref2 = 0.0, bad = 0.0;
    long long total = (long long)rows * cols;
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < total;
         i += (long long)gridDim.x * blockDim.x) {
        long long r = i / cols, c = i - r * cols;
        double o = ref_load_typed(out, r * ldo + c, dtype), x = ref[r * ldr + c];
        ref2 += x * x;
        if (!isfinite(o)) {
            bad += 1.0;
            continue;
        }
        diff2 += (o - x) * (o - x);
    }
    diff2 = ref_block_sum(diff2, shared);
    ref2 = ref_block_sum(ref2, shared);
    bad = ref_block_sum(bad, shared);
    if (threadIdx.x == 0) {
        atomicAdd(acc, diff2);
        atomicAdd(acc + 1, ref2);
        atomicAdd(acc + 2, bad);
    }
}

/* One block per row: acc[0] += (A x - b)_i^2, acc[1] += b_i^2, acc[2] +=
 * non-finite x count. */
extern "C" __global__ void ref_residual(int n, const float *A, const float *b,
                                        const float *x, double *acc)
{
    __shared__ double shared[256];
    int row = blockIdx.x;
    double dot = 0.0, bad = 0.0;
    for (int j = threadIdx.x; j < n; j += blockDim.x) {
        float xj = x[j];
        if (!isfinite(xj))
            bad += 1.0;
        dot += (double)A[(long long)row * n + j] * (double)xj;
    }
    dot = ref_block_sum(dot, shared);
    bad = ref_block_sum(bad, shared);
    if (threadIdx.x == 0) {
        double r = dot - (double)b[row];
        atomicAdd(acc, r * r);
        atomicAdd(acc + 1, (double)b[row] * (double)b[row]);
        if (row == 0)
            atomicAdd(acc + 2, bad);
    }
}

/* The double versions: a_ii = v for every row i. */
extern "C" __global__ void ref_set_diagonal_f64(double *A, int n, double v)
{
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
        A[(long long)i * n + i] = v;
}

/* One block per row: acc[0] += (A x - b)_i^2, acc[1] += b_i^2, acc[2] +=
 * non-finite x count, for doubles. */
extern "C" __global__ void ref_residual_f64(int n, const double *A, const double *b,
                                            const double *x, double *acc)
{
    __shared__ double shared[256];
    int row = blockIdx.x;
    double dot = 0.0, bad = 0.0;
    for (int j = threadIdx.x; j < n; j += blockDim.x) {
        double xj = x[j];
        if (!isfinite(xj))
            bad += 1.0;
        dot = fma(A[(long long)row * n + j], xj, dot);
    }
    dot = ref_block_sum(dot, shared);
    bad = ref_block_sum(bad, shared);
    if (threadIdx.x == 0) {
        double r = dot - b[row];
        atomicAdd(acc, r * r);
        atomicAdd(acc + 1, b[row] * b[row]);
        if (row == 0)
            atomicAdd(acc + 2, bad);
    }
}

/* Writes over a buffer so the next kernel finds nothing of its inputs in L2. */
extern "C" __global__ void ref_flush(unsigned int *p, long long words, unsigned int v)
{
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < words;
         i += (long long)gridDim.x * blockDim.x)
        p[i] = v + (unsigned int)i;
}

/* An empty kernel: the launch overhead baseline. */
extern "C" __global__ void ref_empty(void)
{
}

/* ---- double-precision GEMM verification (templates/dgemm.c) ---- */

/* (hi, lo) += x * y, the product split exactly by an FMA (TwoProd). */
__device__ __forceinline__ void ref_dd_fma(double &hi, double &lo, double x, double y)
{
    double p = __dmul_rn(x, y), pe = __fma_rn(x, y, -p), s, e;
    ref_two_sum(hi, p, &s, &e);
    hi = s;
    lo = __dadd_rn(lo, __dadd_rn(e, pe));
}

/* R = alpha * op(A) op(B) + beta * C0 for `batch` row-major double products (op 0 N, 1 T: A
 * stored m x k or k x m, B k x n or n x k; batch strides sa, sb, sc0, R packed m x n per
 * product) in double-double arithmetic (TwoProd + TwoSum per term), rounded once to double:
 * each element is within about one unit roundoff (2^-53) of the exact value, far below the
 * error of any double GEMM. C0 is unread when beta == 0. Grid (n/16, m/16, batch). */
extern "C" __global__ void ref_dg_gemm(int m, int n, int k, double alpha, const double *A,
                                       long long lda, long long sa, int opa, const double *B,
                                       long long ldb, long long sb, int opb, double beta,
                                       const double *C0, long long ldc0, long long sc0,
                                       double *R)
{
    __shared__ double As[REF_TILE][REF_TILE];
    __shared__ double Bs[REF_TILE][REF_TILE + 1];
    long long b = blockIdx.z;
    A += b * sa;
    B += b * sb;
    int row = blockIdx.y * REF_TILE + threadIdx.y;
    int col = blockIdx.x * REF_TILE + threadIdx.x;
    double hi = 0.0, lo = 0.0;
    for (int t = 0; t < k; t += REF_TILE) {
        int ak = t + threadIdx.x, bk = t + threadIdx.y;
        As[threadIdx.y][threadIdx.x] =
            row < m && ak < k ? A[opa ? (long long)ak * lda + row : (long long)row * lda + ak] : 0.0;
        Bs[threadIdx.y][threadIdx.x] =
            bk < k && col < n ? B[opb ? (long long)col * ldb + bk : (long long)bk * ldb + col] : 0.0;
        __syncthreads();
        for (int i = 0; i < REF_TILE; i++)
            ref_dd_fma(hi, lo, As[threadIdx.y][i], Bs[i][threadIdx.x]);
        __syncthreads();
    }
    if (row < m && col < n) {
        double rh = 0.0, rl = 0.0;
        ref_dd_fma(rh, rl, alpha, hi);
        rl = __fma_rn(alpha, lo, rl);
        if (beta != 0.0)
            ref_dd_fma(rh, rl, beta, C0[b * sc0 + (long long)row * ldc0 + col]);
        R[(b * m + row) * (long long)n + col] = __dadd_rn(rh, rl);
    }
}

/* ---- strided batched GEMM (the bgemm family's verification) ---- */

/* R[b][i][j] = alpha * (op(A_b) op(B_b))[i][j] + beta * C0_b[i][j] in float64 for each of
 * batch products, R packed (m x n per product, one after another). op(A) = A (m x k, lda) or,
 * opa != 0, the transpose of A stored k x m; op(B) likewise (k x n, or stored n x k). Each
 * product's sum is compensated (the exact product error by fma, TwoSum for the addition),
 * so for FP64 data the dot product is about as accurate as if computed in twice the working
 * precision and rounded once; FP32 data is exact in double. C0 is unread when beta == 0. */
extern "C" __global__ void ref_bgemm(int m, int n, int k, double alpha, const void *A,
                                     long long lda, long long sa, int opa, const void *B,
                                     long long ldb, long long sb, int opb, double beta,
                                     const void *C0, long long ldc0, long long sc0, double *R,
                                     long long batch, int dtype)
{
    long long per = (long long)m * n, total = per * batch;
    for (long long idx = blockIdx.x * (long long)blockDim.x + threadIdx.x; idx < total;
         idx += (long long)gridDim.x * blockDim.x) {
        long long b = idx / per, rem = idx - b * per;
        int i = (int)(rem / n), j = (int)(rem - (long long)i * n);
        double s = 0.0, comp = 0.0;
        for (int p = 0; p < k; p++) {
            double x = ref_load_typed(A, b * sa + (opa ? (long long)p * lda + i
                                                       : (long long)i * lda + p), dtype);
            double y = ref_load_typed(B, b * sb + (opb ? (long long)j * ldb + p
                                                       : (long long)p * ldb + j), dtype);
            double pr = x * y, pe = fma(x, y, -pr);
            double t = s + pr, z = t - s;
            comp += pe + ((s - (t - z)) + (pr - z));
            s = t;
        }
        double out = alpha * (s + comp);
        if (beta != 0.0)
            out += beta * ref_load_typed(C0, b * sc0 + (long long)i * ldc0 + j, dtype);
        R[idx] = out;
    }
}
