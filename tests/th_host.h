// th_host.h: what the CPU emulators of a family's kernel share (tests/skinny_host.cpp,
// tests/bgemm_host.cpp): CUDA's keywords as plain C++, random operands, the float64 check.
// C++17; each emulator defines __shared__ and its barriers, then includes its .cu.
#ifndef TH_HOST_H
#define TH_HOST_H

#include <cmath>
#include <cstddef>
#include <vector>

#define __global__
#define __device__
#define __forceinline__ inline
#define __launch_bounds__(...)
#define __align__(x) __attribute__((aligned(x)))
#define __restrict__

// Uniform in [-1, 1): 24 random bits, 48 when wide (double operands, so that products round).
static inline double th_host_rand(unsigned *s, bool wide)
{
    *s = *s * 1664525u + 1013904223u;
    double v = (double)(*s >> 8) / 16777216.0;
    if (wide) {
        *s = *s * 1664525u + 1013904223u;
        v += (double)(*s >> 8) / 281474976710656.0;
    }
    return -1.0 + 2.0 * v;
}

// A, B and C0 (C's values before the call) drawn in that order from seed; C0 all NaN where
// beta is 0 (the kernel must not read C then).
template <typename T>
static void th_host_fill(std::vector<T> &A, std::vector<T> &B, std::vector<T> &C0,
                         unsigned seed, double beta, bool wide)
{
    for (auto &x : A) x = (T)th_host_rand(&seed, wide);
    for (auto &x : B) x = (T)th_host_rand(&seed, wide);
    for (auto &x : C0) x = beta == 0 ? (T)NAN : (T)th_host_rand(&seed, wide);
}

// One strided batched call, row-major: op(A) m x k, op(B) k x n, C m x n, product b's
// operands at b times the strides from the bases.
struct th_host_gemm {
    int m, n, k, batch, opa, opb;
    long long lda, ldb, ldc, sa, sb, sc;
    double alpha, beta;
};

// The relative Frobenius error of C (the buffer after the call, its products from element
// off on; C0 before it) against the float64 product of pa and pb; -1 where an element of C
// outside the products changed (NaN kept as NaN).
template <typename T>
static double th_host_error(const th_host_gemm &g, const T *pa, const T *pb,
                            const std::vector<T> &C, const std::vector<T> &C0, long long off)
{
    double num = 0, den = 0;
    std::vector<char> inside(C.size(), 0);
    for (int b = 0; b < g.batch; b++)
        for (int i = 0; i < g.m; i++)
            for (int j = 0; j < g.n; j++) {
                double ref = 0;
                for (int p = 0; p < g.k; p++) {
                    double x = g.opa ? pa[b * g.sa + (long long)p * g.lda + i]
                                     : pa[b * g.sa + i * g.lda + p];
                    double y = g.opb ? pb[b * g.sb + (long long)j * g.ldb + p]
                                     : pb[b * g.sb + p * g.ldb + j];
                    ref += x * y;
                }
                size_t ic = (size_t)(off + b * g.sc + (long long)i * g.ldc + j);
                ref *= g.alpha;
                if (g.beta != 0)
                    ref += g.beta * (double)C0[ic];
                num += ((double)C[ic] - ref) * ((double)C[ic] - ref);
                den += ref * ref;
                inside[ic] = 1;
            }
    for (size_t i = 0; i < C.size(); i++)
        if (!inside[i] &&
            !(C[i] == C0[i] || (std::isnan((double)C[i]) && std::isnan((double)C0[i]))))
            return -1;
    return std::isfinite(num) ? std::sqrt(num / (den > 0 ? den : 1)) : INFINITY;
}

#endif
