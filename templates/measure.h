/* measure.h: everything done on one GPU to judge a configuration: make
 * fresh random inputs, verify a cubin against the float64 reference on a
 * poisoned output, then time it with CUDA events (warm-up, median). */
#ifndef MEASURE_H
#define MEASURE_H

#include <stddef.h>
#include "autotune.h"
#include "cudrv.h"
#include "exec.h"
#include "tpl.h"

typedef struct ms_gpu ms_gpu;

typedef struct ms_options {
    int warmup;            /* untimed runs first (default 2) */
    int min_runs;          /* timed runs at least (default 5) */
    int max_runs;          /* timed runs at most (default 200) */
    double budget_ms;      /* stop timing after this much GPU time (default 200) */
    double abandon_ms;     /* > 0: stop after min_runs if the median exceeds
                              this (clearly slower than the best so far) */
    int flush_l2;          /* 1: overwrite a 2x-L2 buffer before each run when
                              the problem's bytes fit in L2 (default 1) */
    int back_to_back;      /* 1: the warm-up and exactly max_runs timed runs
                              queued back to back, no output reset, flush or
                              host wait between them, an event between each
                              two (a program's calls in a loop, at the clock
                              the GPU holds under that load; default 0) */
} ms_options;

typedef struct ms_timing {
    double median_ms, min_ms, max_ms;
    int runs;
    int abandoned;         /* 1 if stopped early by abandon_ms */
    double flops, bytes;   /* useful work of one run (family's work_done
                              where the work depends on the run) */
} ms_timing;

/* Fills o with the defaults above. */
void ms_default_options(ms_options *o);

/* Opens device `ordinal` (primary context), a stream, the reference module
 * (compiled with NVRTC for the device's arch). AT_ERR_NO_DRIVER /
 * AT_ERR_NO_DEVICE / AT_ERR_COMPILE with the reason in err. */
at_status ms_open(ms_gpu **out, int ordinal, char *err, size_t errlen);
void ms_close(ms_gpu *g);                          /* NULL is a no-op */
const at_device_info *ms_device(const ms_gpu *g);
const cudrv *ms_driver(const ms_gpu *g);
/* The reference/utility exec (reference.cu module) on the session stream. */
at_exec *ms_reference(ms_gpu *g);

/* Makes the inputs of (fam, problem) from seed, replacing the previous
 * workset; kept until the next ms_prepare or ms_close. */
at_status ms_prepare(ms_gpu *g, const tpl_family *fam, const tpl_problem *p,
                     unsigned long long seed, char *err, size_t errlen);

/* Loads cubin, poisons or resets the output, runs cfg once and checks it:
 * AT_OK with *error set, AT_ERR_WRONG_RESULT (error above the family's
 * tolerance), or the run's failure status; message in err. */
at_status ms_verify(ms_gpu *g, const tpl_family *fam, const int *cfg,
                    const void *cubin, size_t cubin_size, double *error,
                    char *err, size_t errlen);

/* Times cfg (already verified) on the prepared workset. */
at_status ms_time(ms_gpu *g, const tpl_family *fam, const int *cfg,
                  const void *cubin, size_t cubin_size, const ms_options *opt,
                  ms_timing *timing, char *err, size_t errlen);

/* A computation timed and verified like a configuration (a vendor library,
 * a ceiling kernel): runs once on stream with args (a copy of the prepared
 * inputs' arguments; zeroed when none are prepared). AT_OK, or a status
 * with the reason in err. */
typedef at_status (*ms_call_fn)(void *ctx, CUstream stream, tpl_args *args, char *err,
                                size_t errlen);
/* ms_verify for a call on the prepared inputs: the output reset or
 * poisoned, one run, the family's check and its tolerance. */
at_status ms_verify_call(ms_gpu *g, ms_call_fn fn, void *ctx, double *error, char *err,
                         size_t errlen);
/* ms_time for a call, with the same timer, warm-up, L2 flush and median;
 * flops and bytes are one run's work (both 0: the prepared problem's). */
at_status ms_time_call(ms_gpu *g, ms_call_fn fn, void *ctx, const ms_options *opt,
                       double flops, double bytes, ms_timing *timing, char *err,
                       size_t errlen);
/* The session stream; the prepared inputs' arguments and family (NULL if
 * none are prepared). */
CUstream ms_stream(const ms_gpu *g);
const tpl_args *ms_args(const ms_gpu *g);
const tpl_family *ms_family(const ms_gpu *g);

/* One ceiling of the device (templates/ceiling.c). */
typedef struct ms_ceiling {
    char name[32];         /* "read_bandwidth", "fp32_peak", "fp64_peak", "launch_floor" */
    double gflops, gbs;    /* the peak rate, 0 where it is not this metric */
    double time_ms;        /* the run it came from (launch_floor: the floor) */
    char note[200];        /* how it was measured */
} ms_ceiling;
/* Measures the ceilings with the kernels of ceilings.cu, timed like the
 * configurations (best of the runs for rates, fastest empty launch for the
 * floor) into out (at most max); returns how many, or -1 with the reason in
 * err when nothing could be measured. Needs no prepared inputs; leaves the
 * prepared ones untouched. */
int ms_ceilings(ms_gpu *g, ms_ceiling *out, int max, char *err, size_t errlen);

/* Median/min/max of n values (sorts a copy). */
void ms_summarize(const double *values, int n, double *median, double *min,
                  double *max);

#endif
