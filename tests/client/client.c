/* client.c: a program built only from the installed header and library
 * (pkg-config --cflags --libs autotune) that calls all four functions and
 * checks them against the CPU; prints the handle's stats for the tests. Built
 * as C by cc and as CUDA C++ by nvcc (tests/test_install.c). */
#include <autotune.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cuda.h>

/* The client reaches the driver the way any CUDA program does; tiny helper
 * table so this file needs no libcuda at link time either. */
#include <dlfcn.h>
typedef CUresult (*alloc_fn)(CUdeviceptr *, size_t);
typedef CUresult (*copy_h2d_fn)(CUdeviceptr, const void *, size_t);
typedef CUresult (*copy_d2h_fn)(void *, CUdeviceptr, size_t);
typedef CUresult (*init_fn)(unsigned);
typedef CUresult (*dev_fn)(CUdevice *, int);
typedef CUresult (*retain_fn)(CUcontext *, CUdevice);
typedef CUresult (*push_fn)(CUcontext);

/* The configuration the handle's last call ran (the tests compare them). */
static void print_config(const at_handle *h, const char *what)
{
    at_stats st;
    if (at_get_stats(h, &st) == AT_OK)
        printf("config %s: %s\n", what, st.last_config);
}

int main(int argc, char **argv)
{
    const char *db_path = argc > 1 ? argv[1] : NULL;
    at_handle *h = NULL;
    at_status s = at_create(&h, 0, db_path);
    if (s != AT_OK) {
        fprintf(stderr, "client: at_create: %s\n", at_status_string(s));
        return 1;
    }
    void *lib = dlopen("libcuda.so.1", RTLD_NOW);
    if (!lib)
        return 1;
    init_fn cu_init = (init_fn)dlsym(lib, "cuInit");
    dev_fn cu_dev = (dev_fn)dlsym(lib, "cuDeviceGet");
    retain_fn cu_retain = (retain_fn)dlsym(lib, "cuDevicePrimaryCtxRetain");
    push_fn cu_push = (push_fn)dlsym(lib, "cuCtxPushCurrent_v2");
    alloc_fn cu_alloc = (alloc_fn)dlsym(lib, "cuMemAlloc_v2");
    copy_h2d_fn h2d = (copy_h2d_fn)dlsym(lib, "cuMemcpyHtoD_v2");
    copy_d2h_fn d2h = (copy_d2h_fn)dlsym(lib, "cuMemcpyDtoH_v2");
    CUdevice dev;
    CUcontext ctx;
    if (!cu_init || cu_init(0) || cu_dev(&dev, 0) || cu_retain(&ctx, dev) || cu_push(ctx))
        return 1;

    enum { N = 96 };
    static float A[N * N], B[N * N], C[N * N], x[N * N], y[N * N];
    unsigned seed = 17;
    for (int i = 0; i < N * N; i++) {
        seed = seed * 1664525u + 1013904223u;
        A[i] = (float)(seed >> 8) / 16777216.0f - 0.5f;
        seed = seed * 1664525u + 1013904223u;
        B[i] = (float)(seed >> 8) / 16777216.0f - 0.5f;
        x[i] = (float)(i % 7) * 0.25f;
        y[i] = (float)(i % 5) * 0.5f;
    }
    for (int i = 0; i < N; i++) {
        double off = 0;
        for (int j = 0; j < N; j++)
            if (i != j)
                off += fabs(A[i * N + j]);
        A[i * N + i] = (float)(2 * off + 1);
    }
    CUdeviceptr dA, dB, dC, dx, dy, dr, db, dsol;
    size_t bytes = sizeof A;
    if (cu_alloc(&dA, bytes) || cu_alloc(&dB, bytes) || cu_alloc(&dC, bytes) ||
        cu_alloc(&dx, bytes) || cu_alloc(&dy, bytes) || cu_alloc(&dr, 4) ||
        cu_alloc(&db, N * 4) || cu_alloc(&dsol, N * 4))
        return 1;
    h2d(dA, A, bytes);
    h2d(dB, B, bytes);
    h2d(dx, x, bytes);
    h2d(dy, y, bytes);
    h2d(db, x, N * 4);
    static const float zeros[N] = {0};
    h2d(dsol, zeros, N * 4);

    int failures = 0;
    s = at_sgemm(h, N, N, N, 1.0f, (float *)dA, N, (float *)dB, N, 0.0f, (float *)dC, N);
    d2h(C, dC, bytes);
    double err = 0, ref_norm = 0;
    for (int i = 0; i < N; i++)
        for (int j = 0; j < N; j++) {
            double acc = 0;
            for (int k = 0; k < N; k++)
                acc += (double)A[i * N + k] * B[k * N + j];
            err += (C[i * N + j] - acc) * (C[i * N + j] - acc);
            ref_norm += acc * acc;
        }
    printf("sgemm: %s, relative error %.2e\n", at_status_string(s), sqrt(err / ref_norm));
    print_config(h, "sgemm");
    failures += s != AT_OK || sqrt(err / ref_norm) > 1e-5;

    double sum = 0, dot = 0;
    for (int i = 0; i < N * N; i++) {
        sum += x[i];
        dot += (double)x[i] * y[i];
    }
    float got = 0;
    s = at_ssum(h, N * N, (float *)dx, (float *)dr);
    d2h(&got, dr, 4);
    printf("ssum: %s, %.6g (expected %.6g)\n", at_status_string(s), got, sum);
    print_config(h, "ssum");
    failures += s != AT_OK || fabs(got - sum) > 1e-5 * sum;
    s = at_sdot(h, N * N, (float *)dx, (float *)dy, (float *)dr);
    d2h(&got, dr, 4);
    printf("sdot: %s, %.6g (expected %.6g)\n", at_status_string(s), got, dot);
    print_config(h, "sdot");
    failures += s != AT_OK || fabs(got - dot) > 1e-5 * dot;

    int iterations = 0;
    float residual = 0;
    s = at_sjacobi(h, N, (float *)dA, (float *)db, (float *)dsol, 1e-6f, 1000, &iterations,
                   &residual);
    float sol[N];
    d2h(sol, dsol, N * 4);
    double rn = 0, bn = 0;
    for (int i = 0; i < N; i++) {
        double r = -x[i];
        for (int j = 0; j < N; j++)
            r += (double)A[i * N + j] * sol[j];
        rn += r * r;
        bn += (double)x[i] * x[i];
    }
    printf("sjacobi: %s, %d iterations, ||Ax-b||/||b|| = %.2e\n", at_status_string(s),
           iterations, sqrt(rn / bn));
    print_config(h, "sjacobi");
    failures += s != AT_OK || sqrt(rn / bn) > 1e-4;

    at_stats st;
    at_get_stats(h, &st);
    printf("stats: compiled=%d loaded=%d exact=%d nearest=%d arch=%d default=%d\n", st.compiled,
           st.loaded, st.lookups[AT_LOOKUP_EXACT], st.lookups[AT_LOOKUP_NEAREST],
           st.lookups[AT_LOOKUP_ARCH], st.lookups[AT_LOOKUP_DEFAULT]);
    at_destroy(h);
    printf("%s\n", failures ? "CLIENT FAILED" : "CLIENT OK");
    return failures ? 1 : 0;
}
