// dmma_peak.cu: the FP64 tensor-core ceiling of this GPU as mma.sync sees it (docs/notes/dgemm.md
// section 6): each warp runs NACC independent accumulator tiles of one DMMA shape on register
// operands (no memory), one block of W warps per SM. Prints TF/s per shape and warps per SM,
// and the SM clock measured during the run (clock64 against globaltimer), to separate the
// instruction's rate from the kernel's losses. Build: nvcc -O3 -arch=sm_90 dmma_peak.cu
#include <cstdio>
#include <cuda_runtime.h>

template <int S> struct shape;
template <> struct shape<884> { enum { A = 1, B = 1, C = 2, FMA = 256 }; };
template <> struct shape<1684> { enum { A = 2, B = 1, C = 4, FMA = 512 }; };
template <> struct shape<1688> { enum { A = 4, B = 2, C = 4, FMA = 1024 }; };
template <> struct shape<16816> { enum { A = 8, B = 4, C = 4, FMA = 2048 }; };

template <int S>
__device__ __forceinline__ void mma(double *d, const double *x, const double *y)
{
    if constexpr (S == 884)
        asm volatile("mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64 {%0,%1}, {%2}, {%3}, {%0,%1};"
                     : "+d"(d[0]), "+d"(d[1]) : "d"(x[0]), "d"(y[0]));
    else if constexpr (S == 1684)
        asm volatile("mma.sync.aligned.m16n8k4.row.col.f64.f64.f64.f64 {%0,%1,%2,%3}, {%4,%5}, {%6}, "
                     "{%0,%1,%2,%3};"
                     : "+d"(d[0]), "+d"(d[1]), "+d"(d[2]), "+d"(d[3]) : "d"(x[0]), "d"(x[1]), "d"(y[0]));
    else if constexpr (S == 1688)
        asm volatile("mma.sync.aligned.m16n8k8.row.col.f64.f64.f64.f64 {%0,%1,%2,%3}, {%4,%5,%6,%7}, "
                     "{%8,%9}, {%0,%1,%2,%3};"
                     : "+d"(d[0]), "+d"(d[1]), "+d"(d[2]), "+d"(d[3])
                     : "d"(x[0]), "d"(x[1]), "d"(x[2]), "d"(x[3]), "d"(y[0]), "d"(y[1]));
    else
        asm volatile("mma.sync.aligned.m16n8k16.row.col.f64.f64.f64.f64 {%0,%1,%2,%3}, "
                     "{%4,%5,%6,%7,%8,%9,%10,%11}, {%12,%13,%14,%15}, {%0,%1,%2,%3};"
                     : "+d"(d[0]), "+d"(d[1]), "+d"(d[2]), "+d"(d[3])
                     : "d"(x[0]), "d"(x[1]), "d"(x[2]), "d"(x[3]), "d"(x[4]), "d"(x[5]), "d"(x[6]),
                       "d"(x[7]), "d"(y[0]), "d"(y[1]), "d"(y[2]), "d"(y[3]));
}

template <int S, int NACC>
__global__ void peak(double *out, long long *clk, int iters)
{
    typedef shape<S> sh;
    double x[sh::A], y[sh::B], d[NACC][sh::C];
    for (int i = 0; i < sh::A; i++)
        x[i] = 1e-3 * (threadIdx.x + i);
    for (int i = 0; i < sh::B; i++)
        y[i] = 1e-3 * (threadIdx.x - i);
    for (int j = 0; j < NACC; j++)
        for (int r = 0; r < sh::C; r++)
            d[j][r] = 0;
    long long c0 = clock64(), t0;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0));
    for (int it = 0; it < iters; it++)
#pragma unroll
        for (int j = 0; j < NACC; j++)
            mma<S>(d[j], x, y);
    long long c1 = clock64(), t1;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t1));
    double s = 0;
    for (int j = 0; j < NACC; j++)
        for (int r = 0; r < sh::C; r++)
            s += d[j][r];
    out[blockIdx.x * blockDim.x + threadIdx.x] = s;
    if (blockIdx.x == 0 && threadIdx.x == 0) {
        clk[0] = c1 - c0;
        clk[1] = t1 - t0;
    }
}

template <int S, int NACC>
static void run(int sms, int warps, double *out, long long *clk)
{
    int iters = (int)(4e8 / (double)shape<S>::FMA / NACC / (warps / 4.0));
    peak<S, NACC><<<sms, warps * 32>>>(out, clk, iters / 10);     // warm-up
    cudaEvent_t e0, e1;
    cudaEventCreate(&e0);
    cudaEventCreate(&e1);
    cudaEventRecord(e0);
    peak<S, NACC><<<sms, warps * 32>>>(out, clk, iters);
    cudaEventRecord(e1);
    cudaEventSynchronize(e1);
    float ms = 0;
    cudaEventElapsedTime(&ms, e0, e1);
    long long h[2];
    cudaMemcpy(h, clk, sizeof h, cudaMemcpyDeviceToHost);
    double flop = 2.0 * shape<S>::FMA * NACC * (double)iters * warps * sms;
    double ghz = h[1] > 0 ? (double)h[0] / h[1] : 0;
    printf("m%s %2d warps/SM %d acc tiles: %6.2f TF/s  (%.3f ms, SM clock %.3f GHz: %.1f FMA/clk/SM)%s\n",
           S == 884 ? "8n8k4  " : S == 1684 ? "16n8k4 " : S == 1688 ? "16n8k8 " : "16n8k16", warps,
           NACC, flop / ms / 1e9, ms, ghz, flop / 2 / (ms * 1e-3) / sms / (ghz * 1e9),
           cudaGetLastError() != cudaSuccess ? "  ** CUDA error **" : "");
}

int main()
{
    cudaDeviceProp p;
    cudaGetDeviceProperties(&p, 0);
    printf("DMMA ceiling on %s, %d SMs: one block of W warps per SM, register operands only\n",
           p.name, p.multiProcessorCount);
    double *out;
    long long *clk;
    cudaMalloc(&out, (size_t)p.multiProcessorCount * 1024 * sizeof(double));
    cudaMalloc(&clk, 2 * sizeof(long long));
    const int sms = p.multiProcessorCount;
    for (int w = 4; w <= 16; w *= 2) {
        run<884, 8>(sms, w, out, clk);
        run<1684, 8>(sms, w, out, clk);
        run<1688, 8>(sms, w, out, clk);
        run<16816, 8>(sms, w, out, clk);
    }
    run<1684, 2>(sms, 8, out, clk);
    run<1684, 16>(sms, 8, out, clk);
    run<1688, 2>(sms, 8, out, clk);
    run<16816, 2>(sms, 8, out, clk);
    run<1684, 16>(sms, 16, out, clk);
    return 0;
}
