/* ceiling.c: the device's ceilings for the report (launch floor, read
 * bandwidth, FP32 and FP64 FMA peaks), measured with the kernels of
 * ceilings.cu through measure.c's timer. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "measure.h"

/* One kernel launch of a ceiling measurement. */
typedef struct ce_call {
    at_exec *ex;
    const char *kernel;
    unsigned grid, block;
    void **args;
} ce_call;

static at_status ce_run(void *ctx, CUstream stream, tpl_args *args, char *err, size_t len)
{
    (void)stream;
    (void)args;
    ce_call *c = ctx;
    at_status s = ex_launch(c->ex, c->kernel, c->grid, 1, 1, c->block, 1, 1, 0, c->args);
    if (s != AT_OK)
        snprintf(err, len, "%s: %s", c->kernel, c->ex->errmsg);
    return s;
}

/* Times one launch configuration; the fastest run's milliseconds, or -1.
 * bytes: what one run reads; the L2 is flushed before each run only when
 * they fit in it, as for the configurations (a flush left dirty in L2 is
 * written back during the run and would steal bandwidth from a large read). */
static double ce_best_ms(ms_gpu *g, ce_call *c, int runs, double bytes, double *median,
                         char *err, size_t len)
{
    ms_options o;
    ms_default_options(&o);
    o.min_runs = runs;
    o.max_runs = runs;
    o.budget_ms = 1e9;
    ms_timing t;
    if (ms_time_call(g, ce_run, c, &o, 1, bytes, &t, err, len) != AT_OK || t.min_ms <= 0)
        return -1;
    if (median)
        *median = t.median_ms;
    return t.min_ms;
}

static void ce_put(ms_ceiling *out, int *n, int max, const char *name, double gflops,
                   double gbs, double ms, const char *note)
{
    if (*n >= max)
        return;
    ms_ceiling *c = &out[(*n)++];
    memset(c, 0, sizeof *c);
    snprintf(c->name, sizeof c->name, "%s", name);
    c->gflops = gflops;
    c->gbs = gbs;
    c->time_ms = ms;
    snprintf(c->note, sizeof c->note, "%s", note);
}

/* Read bandwidth: the best of two unrolls and two grid sizes over a large
 * buffer (bigger than L2, so every byte comes from DRAM). */
static void ce_read(ms_gpu *g, at_exec *ex, ms_ceiling *out, int *n, int max, char *err,
                    size_t len)
{
    const cudrv *cu = ms_driver(g);
    const at_device_info *dev = ms_device(g);
    size_t bytes = 1u << 30;
    if (dev->memory_bytes > 0 && (long long)bytes * 8 > dev->memory_bytes)
        bytes = (size_t)(dev->memory_bytes / 8) & ~(size_t)15;
    CUdeviceptr x = 0, sink = 0;
    if (cu->MemAlloc(&x, bytes) != CUDA_SUCCESS || cu->MemAlloc(&sink, 16) != CUDA_SUCCESS ||
        cu->MemsetD32Async(x, 0x3f800000u, bytes / 4, ms_stream(g)) != CUDA_SUCCESS) {
        snprintf(err, len, "read bandwidth: could not allocate %zu bytes", bytes);
    } else {
        long long n4 = (long long)(bytes / 16);
        void *args[] = { &x, &n4, &sink };
        double best = -1;
        char how[96] = "";
        static const char *const kernels[] = { "ceil_read4", "ceil_read8" };
        for (int k = 0; k < 2; k++)
            for (unsigned per_sm = 4; per_sm <= 8; per_sm += 4) {
                ce_call c = { ex, kernels[k], (unsigned)dev->sm_count * per_sm, 256, args };
                double ms = ce_best_ms(g, &c, 10, (double)bytes, NULL, err, len);
                if (ms > 0 && (best < 0 || ms < best)) {
                    best = ms;
                    snprintf(how, sizeof how, "%s, %u blocks of 256", kernels[k], c.grid);
                }
            }
        if (best > 0) {
            char note[200];
            snprintf(note, sizeof note, "read-only kernel over %zu bytes, best of 10 runs (%s)",
                     bytes, how);
            ce_put(out, n, max, "read_bandwidth", 0, (double)bytes / (best * 1e6), best, note);
        }
    }
    if (x)
        cu->MemFree(x);
    if (sink)
        cu->MemFree(sink);
}

/* FP32 or FP64 FMA peak: 8 chains per thread, the whole device busy. */
static void ce_fma(ms_gpu *g, at_exec *ex, int f64, ms_ceiling *out, int *n, int max, char *err,
                   size_t len)
{
    const cudrv *cu = ms_driver(g);
    const at_device_info *dev = ms_device(g);
    CUdeviceptr sink = 0;
    if (cu->MemAlloc(&sink, 16) != CUDA_SUCCESS)
        return;
    int per_sm = dev->max_threads_per_sm > 0 ? dev->max_threads_per_sm / 256 : 8;
    unsigned grid = (unsigned)(dev->sm_count * (per_sm > 0 ? per_sm : 1));
    int iters = f64 ? 2048 : 8192;
    float bf = 0.999f, cf = 0.001f;
    double bd = 0.999, cd = 0.001;
    void *args32[] = { &sink, &iters, &bf, &cf }, *args64[] = { &sink, &iters, &bd, &cd };
    ce_call c = { ex, f64 ? "ceil_fma64" : "ceil_fma32", grid, 256, f64 ? args64 : args32 };
    double ms = ce_best_ms(g, &c, 10, 1, NULL, err, len);
    if (ms > 0) {
        double flops = (double)grid * 256 * iters * 16 * 8 * 2;
        char note[200];
        snprintf(note, sizeof note, "%s FMA chains, %u blocks of 256, best of 10 runs",
                 f64 ? "FP64" : "FP32", grid);
        ce_put(out, n, max, f64 ? "fp64_peak" : "fp32_peak", flops / (ms * 1e6), 0, ms, note);
    }
    cu->MemFree(sink);
}

int ms_ceilings(ms_gpu *g, ms_ceiling *out, int max, char *err, size_t errlen)
{
    const cudrv *cu = ms_driver(g);
    void *cubin = NULL;
    size_t size = 0;
    char *log = NULL;
    err[0] = '\0';
    at_status s = tpl_compile_utility("ceilings.cu", ms_device(g)->arch, &cubin, &size, &log);
    if (s != AT_OK) {
        snprintf(err, errlen, "ceilings.cu failed to compile: %.400s", log ? log : "no log");
        free(log);
        free(cubin);
        return -1;
    }
    free(log);
    CUmodule mod = NULL;
    CUresult rc = cu->ModuleLoadData(&mod, cubin);
    free(cubin);
    if (rc != CUDA_SUCCESS) {
        cudrv_describe(cu, rc, "cuModuleLoadData(ceilings)", err, errlen);
        return -1;
    }
    char msg[512] = "";
    at_exec ex;
    ex_init(&ex, cu, ms_device(g), mod, ms_stream(g), msg, sizeof msg);
    int n = 0;
    double median = 0;
    ce_call empty = { &ex, "ceil_empty", 1, 32, NULL };
    double floor_ms = ce_best_ms(g, &empty, 50, 1, &median, err, errlen);
    if (floor_ms > 0) {
        char note[200];
        snprintf(note, sizeof note, "empty kernel, fastest of 50 timed launches (median %.4f ms)",
                 median);
        ce_put(out, &n, max, "launch_floor", 0, 0, floor_ms, note);
    }
    ce_read(g, &ex, out, &n, max, err, errlen);
    ce_fma(g, &ex, 0, out, &n, max, err, errlen);
    ce_fma(g, &ex, 1, out, &n, max, err, errlen);
    ex_release(&ex);
    cu->StreamSynchronize(ms_stream(g));
    cu->ModuleUnload(mod);
    return n > 0 ? n : -1;
}
