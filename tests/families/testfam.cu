// testfam.cu: test-only kernels (hidden families test_oob, test_hang, test_wide,
// test_slowcc and test_split): y = 2x + 1; one configuration writes far out of bounds or
// spins; SLOW=1 takes NVRTC seconds to compile.

#ifndef BLOCK
#define BLOCK 256      // threads per block: 64, 128, 256, 512
#endif
#ifndef ITEMS
#define ITEMS 1        // elements per thread: 1, 2, 4
#endif
#ifndef BAD
#define BAD 0          // 1: write 2^44 floats past the output (illegal address)
#endif
#ifndef SPIN
#define SPIN 0         // 1: spin until x[0] holds a NaN pattern it never holds
#endif
#ifndef REPEAT
#define REPEAT 1       // launches per run, host only (test_wide): 1 to 8
#endif
#ifndef SLOW
#define SLOW 0         // 1: 4096 dependent steps whose result never changes y (a slow compile)
#endif
#ifndef SPLIT
#define SPLIT 1        // test_split: run-time from 2 (every value >= 2 compiles as 2); unused here
#endif

#if SLOW
// One step of a chain that stays within [-2, 2]: the compiler cannot drop it, since y depends on
// a comparison it cannot decide; NVRTC then spends seconds on the 4096 steps.
#define TF_STEP b = __sinf(b * a + c) + 0.5f * b; c += 1.0f; if (b > 100.0f) a = -a;
#define TF_X4(s) s s s s
#define TF_SLOW_CHAIN TF_X4(TF_X4(TF_X4(TF_X4(TF_X4(TF_X4(TF_STEP))))))
#endif

extern "C" __global__ void __launch_bounds__(BLOCK)
testfam_main(const float *x, float *y, long long n)
{
#if SPIN
    if (threadIdx.x == 0) {
        volatile const unsigned *p = (volatile const unsigned *)x;
        while (p[0] != 0xFFFFFFFFu)
            __nanosleep(1000);
    }
    __syncthreads();
#endif
    long long base = ((long long)blockIdx.x * BLOCK + threadIdx.x) * ITEMS;
#pragma unroll
    for (int k = 0; k < ITEMS; k++) {
        long long i = base + k;
        if (i < n) {
            float v = 2.0f * x[i] + 1.0f;
#if SLOW
            float a = x[i], b = 1.0f, c = 0.0f;
            TF_SLOW_CHAIN
            if (b == 12345.0f)          // never: |b| <= 2
                v = 0.0f;
#endif
#if BAD
            y[i + 0x100000000000LL] = v;
#else
            y[i] = v;
#endif
        }
    }
}
