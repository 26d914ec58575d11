/* measure.c: judges configurations on one GPU: prepares random inputs,
 * verifies a cubin's output against the float64 reference, then times it
 * with CUDA events (warm-up, L2 flush, median). Used by the tuner's worker,
 * the GPU tests and the benchmarks. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "measure.h"

#define MS_MODULES 8             /* the widest re-timing set (tuner/retime.c) */

struct ms_gpu {
    const cudrv *cu;
    at_device_info info;
    CUdevice device;
    CUcontext ctx;
    CUstream stream;
    CUmodule ref_module;
    at_exec ref;
    char ref_msg[1024];
    CUevent start, stop;
    CUdeviceptr flush;              /* 2 x L2 bytes, written between runs */
    size_t flush_bytes;
    const tpl_family *fam;          /* the prepared workset's family */
    tpl_workset ws;
    int have_ws;
    CUmodule module;                /* module of the last cubin used */
    /* The last MS_MODULES cubins stay loaded (the re-timing alternates a
     * few configurations: no reload between their slices). */
    CUmodule cached[MS_MODULES];
    unsigned long long cached_hash[MS_MODULES], cached_used[MS_MODULES], uses;
    size_t cached_size[MS_MODULES];
};

void ms_default_options(ms_options *o)
{
    o->warmup = 2;
    o->min_runs = 5;
    o->max_runs = 200;
    o->budget_ms = 200.0;
    o->abandon_ms = 0.0;
    o->flush_l2 = 1;
    o->back_to_back = 0;
}

static at_status ms_cuda(ms_gpu *g, CUresult rc, const char *call, char *err, size_t len)
{
    cudrv_describe(g->cu, rc, call, err, len);
    return rc == CUDA_ERROR_OUT_OF_MEMORY ? AT_ERR_NO_MEMORY : AT_ERR_CUDA;
}

at_status ms_open(ms_gpu **out, int ordinal, char *err, size_t errlen)
{
    at_status s;
    *out = NULL;
    const cudrv *cu = cudrv_get(&s, err, errlen);
    if (!cu)
        return s;
    ms_gpu *g = calloc(1, sizeof *g);
    if (!g) {
        snprintf(err, errlen, "out of host memory");
        return AT_ERR_NO_MEMORY;
    }
    g->cu = cu;
    if ((s = cudrv_device_info(cu, ordinal, &g->info, err, errlen)) != AT_OK) {
        free(g);
        return s;
    }
    CUresult rc = cu->DeviceGet(&g->device, ordinal);
    if (rc == CUDA_SUCCESS)
        rc = cu->DevicePrimaryCtxRetain(&g->ctx, g->device);
    if (rc != CUDA_SUCCESS) {
        s = ms_cuda(g, rc, "cuDevicePrimaryCtxRetain", err, errlen);
        free(g);
        return s;
    }
    cu->CtxPushCurrent(g->ctx);
    if ((rc = cu->StreamCreate(&g->stream, CU_STREAM_NON_BLOCKING)) != CUDA_SUCCESS ||
        (rc = cu->EventCreate(&g->start, CU_EVENT_DEFAULT)) != CUDA_SUCCESS ||
        (rc = cu->EventCreate(&g->stop, CU_EVENT_DEFAULT)) != CUDA_SUCCESS) {
        s = ms_cuda(g, rc, "stream/event creation", err, errlen);
        ms_close(g);
        return s;
    }
    void *cubin = NULL;
    size_t size = 0;
    char *log = NULL;
    s = tpl_compile_reference(g->info.arch, &cubin, &size, &log);
    if (s != AT_OK) {
        snprintf(err, errlen, "reference module failed to compile for %s: %s", g->info.arch,
                 log ? log : "no log");
        free(log);
        ms_close(g);
        return s;
    }
    free(log);
    rc = cu->ModuleLoadData(&g->ref_module, cubin);
    free(cubin);
    if (rc != CUDA_SUCCESS) {
        s = ms_cuda(g, rc, "cuModuleLoadData(reference)", err, errlen);
        ms_close(g);
        return s;
    }
    ex_init(&g->ref, cu, &g->info, g->ref_module, g->stream, g->ref_msg, sizeof g->ref_msg);
    g->flush_bytes = (size_t)(g->info.l2_bytes > 0 ? g->info.l2_bytes : 64 << 20) * 2;
    if ((rc = cu->MemAlloc(&g->flush, g->flush_bytes)) != CUDA_SUCCESS) {
        s = ms_cuda(g, rc, "cuMemAlloc(L2 flush buffer)", err, errlen);
        ms_close(g);
        return s;
    }
    *out = g;
    return AT_OK;
}

static void ms_drop_modules(ms_gpu *g)
{
    for (int i = 0; i < MS_MODULES; i++) {
        if (g->cached[i])
            g->cu->ModuleUnload(g->cached[i]);
        g->cached[i] = NULL;
        g->cached_hash[i] = g->cached_used[i] = 0;
        g->cached_size[i] = 0;
    }
    g->module = NULL;
}

void ms_close(ms_gpu *g)
{
    if (!g)
        return;
    const cudrv *cu = g->cu;
    if (g->stream)
        cu->StreamSynchronize(g->stream);
    if (g->have_ws)
        tpl_workset_free(cu, &g->ws);
    ms_drop_modules(g);
    ex_release(&g->ref);
    if (g->ref_module)
        cu->ModuleUnload(g->ref_module);
    if (g->flush)
        cu->MemFree(g->flush);
    if (g->start)
        cu->EventDestroy(g->start);
    if (g->stop)
        cu->EventDestroy(g->stop);
    if (g->stream)
        cu->StreamDestroy(g->stream);
    if (g->ctx) {
        CUcontext popped;
        cu->CtxPopCurrent(&popped);
        cu->DevicePrimaryCtxRelease(g->device);
    }
    free(g);
}

const at_device_info *ms_device(const ms_gpu *g) { return &g->info; }
const cudrv *ms_driver(const ms_gpu *g) { return g->cu; }
at_exec *ms_reference(ms_gpu *g) { return &g->ref; }

at_status ms_prepare(ms_gpu *g, const tpl_family *fam, const tpl_problem *p,
                     unsigned long long seed, char *err, size_t errlen)
{
    if (g->have_ws) {
        g->cu->StreamSynchronize(g->stream);
        tpl_workset_free(g->cu, &g->ws);
        g->have_ws = 0;
    }
    memset(&g->ws, 0, sizeof g->ws);
    g->ref_msg[0] = '\0';
    at_status s = fam->prepare(&g->ref, p, seed, &g->ws);
    if (s == AT_OK)
        s = ex_sync(&g->ref);
    if (s != AT_OK) {
        snprintf(err, errlen, "%s: preparing inputs failed: %s", fam->name,
                 g->ref_msg[0] ? g->ref_msg : at_status_string(s));
        tpl_workset_free(g->cu, &g->ws);
        return s;
    }
    g->fam = fam;
    g->have_ws = 1;
    return AT_OK;
}

static unsigned long long ms_hash(const void *data, size_t len)
{
    const unsigned char *p = data;
    unsigned long long h = 0xCBF29CE484222325ull;
    for (size_t i = 0; i < len; i++) {
        h ^= p[i];
        h *= 0x100000001B3ull;
    }
    return h;
}

/* Makes the cubin the current module: one of the cached ones, or loaded in
 * place of the least recently used (nothing runs from it: every timing
 * waits for its runs). */
static at_status ms_load(ms_gpu *g, const void *cubin, size_t size, char *err, size_t len)
{
    unsigned long long h = ms_hash(cubin, size);
    int slot = 0;
    for (int i = 0; i < MS_MODULES; i++) {
        if (g->cached[i] && g->cached_hash[i] == h && g->cached_size[i] == size) {
            g->cached_used[i] = ++g->uses;
            g->module = g->cached[i];
            return AT_OK;
        }
        if (g->cached_used[i] < g->cached_used[slot])
            slot = i;
    }
    if (g->cached[slot])
        g->cu->ModuleUnload(g->cached[slot]);
    g->cached[slot] = NULL;
    g->cached_used[slot] = 0;
    g->module = NULL;
    CUresult rc = g->cu->ModuleLoadData(&g->cached[slot], cubin);
    if (rc != CUDA_SUCCESS) {
        g->cached[slot] = NULL;
        return ms_cuda(g, rc, "cuModuleLoadData", err, len);
    }
    g->cached_hash[slot] = h;
    g->cached_size[slot] = size;
    g->cached_used[slot] = ++g->uses;
    g->module = g->cached[slot];
    return AT_OK;
}

/* A failed run may have poisoned the context (illegal address...): then
 * nothing more can run in this process. */
static at_status ms_context_health(ms_gpu *g, at_status s, char *err, size_t len)
{
    CUresult rc = g->cu->CtxSynchronize();
    if (rc == CUDA_SUCCESS)
        return s;
    char why[512];
    cudrv_describe(g->cu, rc, "kernel execution", why, sizeof why);
    snprintf(err, len, "%s; the CUDA context is unusable", why);
    return AT_ERR_CRASHED;
}

/* Puts the output back to its initial state (or NaN poison). */
static at_status ms_reset_output(ms_gpu *g)
{
    tpl_workset *ws = &g->ws;
    if (!ws->out)
        return AT_OK;
    CUresult rc;
    if (ws->out_initial)
        rc = g->cu->MemcpyDtoDAsync(ws->out, ws->out_initial, ws->out_bytes, g->stream);
    else
        rc = g->cu->MemsetD32Async(ws->out, 0x7FC00000u, ws->out_bytes / 4, g->stream);
    return rc == CUDA_SUCCESS ? AT_OK : AT_ERR_CUDA;
}

/* What one run executes: a configuration's kernels (fam, cfg through ex)
 * or a caller's call (fn, ctx: a vendor library, a ceiling kernel). */
typedef struct ms_runner {
    const tpl_family *fam;
    const int *cfg;
    at_exec *ex;
    ms_call_fn fn;
    void *ctx;
} ms_runner;

static at_status ms_run_once(ms_gpu *g, const ms_runner *rn, tpl_args *done, char *err,
                             size_t len)
{
    tpl_args args = g->ws.args;
    at_status s;
    if (rn->fn) {
        err[0] = '\0';
        s = rn->fn(rn->ctx, g->stream, &args, err, len);
        if (done)
            *done = args;
        if (s != AT_OK && !err[0])
            snprintf(err, len, "%s", at_status_string(s));
        return s == AT_OK ? AT_OK : ms_context_health(g, s, err, len);
    }
    at_exec *ex = rn->ex;
    s = rn->fam->run(ex, rn->cfg, &args);
    if (done)
        *done = args;
    if (s != AT_OK) {
        if (!ex->errmsg[0])
            snprintf(ex->errmsg, ex->errlen, "%s", at_status_string(s));
        snprintf(err, len, "%s", ex->errmsg);
        return ms_context_health(g, s, err, len);
    }
    return AT_OK;
}

/* Resets the output, runs rn once, waits, and checks the output against
 * the prepared reference (the family's check and tolerance). */
static at_status ms_verify_runner(ms_gpu *g, const ms_runner *rn, double *error, char *err,
                                  size_t errlen)
{
    if (ms_reset_output(g) != AT_OK) {
        snprintf(err, errlen, "could not reset the output buffer");
        return ms_context_health(g, AT_ERR_CUDA, err, errlen);
    }
    at_status s = ms_run_once(g, rn, NULL, err, errlen);
    if (s == AT_OK) {
        CUresult rc = g->cu->StreamSynchronize(g->stream);
        if (rc != CUDA_SUCCESS)
            s = ms_context_health(g, ms_cuda(g, rc, "cuStreamSynchronize", err, errlen), err,
                                  errlen);
    }
    if (s != AT_OK)
        return s;
    const tpl_family *fam = g->fam;
    g->ref_msg[0] = '\0';
    s = fam->check(&g->ref, &g->ws, error);
    if (s != AT_OK) {
        snprintf(err, errlen, "check failed: %s",
                 g->ref_msg[0] ? g->ref_msg : at_status_string(s));
        return ms_context_health(g, s, err, errlen);
    }
    double tolerance = fam->tolerance(&g->ws.args.problem);
    if (!(*error <= tolerance)) {
        snprintf(err, errlen, "relative error %.3g exceeds tolerance %.3g", *error, tolerance);
        return AT_ERR_WRONG_RESULT;
    }
    return AT_OK;
}

at_status ms_verify(ms_gpu *g, const tpl_family *fam, const int *cfg, const void *cubin,
                    size_t cubin_size, double *error, char *err, size_t errlen)
{
    *error = -1.0;
    err[0] = '\0';
    if (!g->have_ws || g->fam != fam) {
        snprintf(err, errlen, "no inputs prepared for %s", fam->name);
        return AT_ERR_INTERNAL;
    }
    at_status s = ms_load(g, cubin, cubin_size, err, errlen);
    if (s != AT_OK)
        return ms_context_health(g, s, err, errlen);
    char msg[1024] = "";
    at_exec ex;
    ex_init(&ex, g->cu, &g->info, g->module, g->stream, msg, sizeof msg);
    ms_runner rn = { fam, cfg, &ex, NULL, NULL };
    s = ms_verify_runner(g, &rn, error, err, errlen);
    if (s != AT_OK && !err[0])
        snprintf(err, errlen, "%s", msg[0] ? msg : at_status_string(s));
    ex_release(&ex);
    return s;
}

at_status ms_verify_call(ms_gpu *g, ms_call_fn fn, void *ctx, double *error, char *err,
                         size_t errlen)
{
    *error = -1.0;
    err[0] = '\0';
    if (!g->have_ws) {
        snprintf(err, errlen, "no inputs prepared");
        return AT_ERR_INTERNAL;
    }
    ms_runner rn = { NULL, NULL, NULL, fn, ctx };
    return ms_verify_runner(g, &rn, error, err, errlen);
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

void ms_summarize(const double *values, int n, double *median, double *min, double *max)
{
    *median = *min = *max = 0.0;
    if (n <= 0)
        return;
    double *copy = malloc((size_t)n * sizeof *copy);
    if (!copy) {
        *median = *min = *max = values[0];
        return;
    }
    memcpy(copy, values, (size_t)n * sizeof *copy);
    qsort(copy, (size_t)n, sizeof *copy, cmp_double);
    *min = copy[0];
    *max = copy[n - 1];
    *median = n % 2 ? copy[n / 2] : 0.5 * (copy[n / 2 - 1] + copy[n / 2]);
    free(copy);
}

/* The options with their floors: at least one timed run. */
static ms_options ms_options_of(const ms_options *opt_in)
{
    ms_options opt;
    if (opt_in)
        opt = *opt_in;
    else
        ms_default_options(&opt);
    if (opt.min_runs < 1)
        opt.min_runs = 1;
    if (opt.max_runs < opt.min_runs)
        opt.max_runs = opt.min_runs;
    return opt;
}

/* One timed (or warm-up) run of rn between the events: output reset, L2
 * flushed first where flush; the milliseconds in *ms. */
static at_status ms_time_one(ms_gpu *g, const ms_runner *rn, int flush, unsigned *flush_value,
                             tpl_args *last, float *ms, char *err, size_t errlen)
{
    if (ms_reset_output(g) != AT_OK) {
        snprintf(err, errlen, "could not reset the output buffer");
        return AT_ERR_CUDA;
    }
    if (flush) {
        long long flush_words = (long long)(g->flush_bytes / 4);
        void *args[] = {&g->flush, &flush_words, flush_value};
        (*flush_value)++;
        at_status s = ex_launch(&g->ref, "ref_flush", (unsigned)g->info.sm_count * 4, 1, 1, 512,
                                1, 1, 0, args);
        if (s != AT_OK) {
            snprintf(err, errlen, "%s", g->ref_msg);
            return s;
        }
    }
    CUresult rc = g->cu->EventRecord(g->start, g->stream);
    if (rc != CUDA_SUCCESS)
        return ms_cuda(g, rc, "cuEventRecord", err, errlen);
    at_status s = ms_run_once(g, rn, last, err, errlen);
    if (s != AT_OK)
        return s;
    if ((rc = g->cu->EventRecord(g->stop, g->stream)) != CUDA_SUCCESS ||
        (rc = g->cu->EventSynchronize(g->stop)) != CUDA_SUCCESS)
        return ms_cuda(g, rc, "cuEventSynchronize", err, errlen);
    if ((rc = g->cu->EventElapsedTime(ms, g->start, g->stop)) != CUDA_SUCCESS)
        return ms_cuda(g, rc, "cuEventElapsedTime", err, errlen);
    return AT_OK;
}

/* ms_options.back_to_back: the output reset once (before every run where
 * the run starts from it: tpl_workset.out_is_state), then the warm-up and
 * opt->max_runs timed runs of rn queued without a host wait, each between
 * two events; their times into times[], their count into *runs. The events
 * are created for the call and destroyed after it. */
static at_status ms_time_back_to_back(ms_gpu *g, const ms_runner *rn, const ms_options *opt,
                                      double *times, int *runs, tpl_args *last, char *err,
                                      size_t errlen)
{
    int n = opt->max_runs, each = g->ws.out_is_state;
    CUevent *marks = calloc(2 * (size_t)n, sizeof *marks);
    if (!marks) {
        snprintf(err, errlen, "out of host memory");
        return AT_ERR_NO_MEMORY;
    }
    CUresult rc = CUDA_SUCCESS;
    int made = 0;
    while (made < 2 * n &&
           (rc = g->cu->EventCreate(&marks[made], CU_EVENT_DEFAULT)) == CUDA_SUCCESS)
        made++;
    at_status s = rc == CUDA_SUCCESS ? ms_reset_output(g) : ms_cuda(g, rc, "cuEventCreate", err,
                                                                    errlen);
    for (int i = 0; s == AT_OK && i < opt->warmup; i++)
        if ((s = ms_run_once(g, rn, last, err, errlen)) == AT_OK && each)
            s = ms_reset_output(g);
    for (int i = 0; s == AT_OK && i < n; i++) {
        if (i > 0 && each)
            s = ms_reset_output(g);
        if (s == AT_OK && (rc = g->cu->EventRecord(marks[2 * i], g->stream)) != CUDA_SUCCESS)
            s = ms_cuda(g, rc, "cuEventRecord", err, errlen);
        if (s == AT_OK)
            s = ms_run_once(g, rn, last, err, errlen);
        if (s == AT_OK && (rc = g->cu->EventRecord(marks[2 * i + 1], g->stream)) != CUDA_SUCCESS)
            s = ms_cuda(g, rc, "cuEventRecord", err, errlen);
    }
    if (s == AT_OK && (rc = g->cu->EventSynchronize(marks[2 * n - 1])) != CUDA_SUCCESS)
        s = ms_cuda(g, rc, "cuEventSynchronize", err, errlen);
    for (int i = 0; s == AT_OK && i < n; i++) {
        float ms = 0.0f;
        if ((rc = g->cu->EventElapsedTime(&ms, marks[2 * i], marks[2 * i + 1])) != CUDA_SUCCESS)
            s = ms_cuda(g, rc, "cuEventElapsedTime", err, errlen);
        times[i] = ms;
    }
    if (s != AT_OK)
        g->cu->StreamSynchronize(g->stream);
    for (int i = 0; i < made; i++)
        g->cu->EventDestroy(marks[i]);
    free(marks);
    *runs = s == AT_OK ? n : 0;
    return s;
}

/* Warm-up, then timed runs of rn until the budget or max_runs (or the
 * abandon rule; back to back: exactly max_runs): median, min and max into
 * timing; the work of one run from bytes and flops (the family's work_done
 * where it has one). */
static at_status ms_time_runner(ms_gpu *g, const ms_runner *rn, const ms_options *opt_in,
                                double flops, double bytes, ms_timing *timing, char *err,
                                size_t errlen)
{
    ms_options opt = ms_options_of(opt_in);
    memset(timing, 0, sizeof *timing);
    err[0] = '\0';
    int flush = opt.flush_l2 && bytes < (double)g->flush_bytes;
    unsigned flush_value = 1;
    double *times = malloc((size_t)opt.max_runs * sizeof *times);
    if (!times) {
        snprintf(err, errlen, "out of host memory");
        return AT_ERR_NO_MEMORY;
    }
    int runs = 0;
    double total = 0.0;
    tpl_args last_args = g->ws.args;
    at_status s = AT_OK;
    if (opt.back_to_back)
        s = ms_time_back_to_back(g, rn, &opt, times, &runs, &last_args, err, errlen);
    for (int i = 0; !opt.back_to_back && s == AT_OK && i < opt.warmup + opt.max_runs; i++) {
        int timed = i >= opt.warmup;
        float ms = 0.0f;
        s = ms_time_one(g, rn, flush && timed, &flush_value, &last_args, &ms, err, errlen);
        if (s != AT_OK || !timed)
            continue;
        times[runs++] = ms;
        total += ms;
        if (runs >= opt.min_runs) {
            double median, lo, hi;
            ms_summarize(times, runs, &median, &lo, &hi);
            if (opt.abandon_ms > 0 && median > opt.abandon_ms) {
                timing->abandoned = 1;
                break;
            }
            if (total >= opt.budget_ms)
                break;
        }
    }
    if (s != AT_OK) {
        free(times);
        return ms_context_health(g, s, err, errlen);
    }
    ms_summarize(times, runs, &timing->median_ms, &timing->min_ms, &timing->max_ms);
    timing->runs = runs;
    timing->flops = flops;
    timing->bytes = bytes;
    if (rn->fam && rn->fam->work_done)
        rn->fam->work_done(&last_args, &timing->flops, &timing->bytes);
    free(times);
    return AT_OK;
}

at_status ms_time(ms_gpu *g, const tpl_family *fam, const int *cfg, const void *cubin,
                  size_t cubin_size, const ms_options *opt, ms_timing *timing,
                  char *err, size_t errlen)
{
    memset(timing, 0, sizeof *timing);
    err[0] = '\0';
    if (!g->have_ws || g->fam != fam) {
        snprintf(err, errlen, "no inputs prepared for %s", fam->name);
        return AT_ERR_INTERNAL;
    }
    at_status s = ms_load(g, cubin, cubin_size, err, errlen);
    if (s != AT_OK)
        return ms_context_health(g, s, err, errlen);
    double flops = 0, bytes = 0;
    fam->work(&g->ws.args.problem, &flops, &bytes);
    char msg[1024] = "";
    at_exec ex;
    ex_init(&ex, g->cu, &g->info, g->module, g->stream, msg, sizeof msg);
    ms_runner rn = { fam, cfg, &ex, NULL, NULL };
    s = ms_time_runner(g, &rn, opt, flops, bytes, timing, err, errlen);
    ex_release(&ex);
    return s;
}

at_status ms_time_call(ms_gpu *g, ms_call_fn fn, void *ctx, const ms_options *opt,
                       double flops, double bytes, ms_timing *timing, char *err, size_t errlen)
{
    ms_runner rn = { NULL, NULL, NULL, fn, ctx };
    if (g->have_ws && g->fam && flops <= 0 && bytes <= 0)
        g->fam->work(&g->ws.args.problem, &flops, &bytes);
    return ms_time_runner(g, &rn, opt, flops, bytes, timing, err, errlen);
}

CUstream ms_stream(const ms_gpu *g) { return g->stream; }
const tpl_args *ms_args(const ms_gpu *g) { return g->have_ws ? &g->ws.args : NULL; }
const tpl_family *ms_family(const ms_gpu *g) { return g->have_ws ? g->fam : NULL; }
