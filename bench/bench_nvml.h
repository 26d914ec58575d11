/* bench_nvml.h: the benchmarks' clock and power sampler: NVML through dlopen (no link-time
 * dependency), a thread that samples the SM clock (MHz) and the board power (mW) every 2 ms
 * between bn_nv_begin and bn_nv_end. Used by bench_dgemm and bench_bgemm (C++). */
#ifndef BENCH_NVML_H
#define BENCH_NVML_H

#include <dlfcn.h>
#include <pthread.h>
#include <string.h>
#include <unistd.h>

typedef struct bn_nvml {
    int (*clock)(void *, int, unsigned *);
    int (*power)(void *, unsigned *);
    void *dev;
    int on, stop, n;
    double mhz, mw;
    pthread_t th;
    pthread_mutex_t lock;
} bn_nvml;

static void *bn_nv_thread(void *arg)
{
    bn_nvml *v = (bn_nvml *)arg;
    for (;;) {
        pthread_mutex_lock(&v->lock);
        int stop = v->stop, on = v->on;
        pthread_mutex_unlock(&v->lock);
        if (stop)
            return NULL;
        if (on) {
            unsigned mhz = 0, mw = 0;
            int ok = v->clock(v->dev, 1 /* NVML_CLOCK_SM */, &mhz) == 0 &&
                     v->power(v->dev, &mw) == 0;
            pthread_mutex_lock(&v->lock);
            if (ok && v->on) {
                v->mhz += mhz;
                v->mw += mw;
                v->n++;
            }
            pthread_mutex_unlock(&v->lock);
        }
        usleep(2000);
    }
}

/* 1 if NVML answered (the sampler runs), else 0 (timings then print no clock). */
static int bn_nv_open(bn_nvml *v)
{
    memset(v, 0, sizeof *v);
    void *lib = dlopen("libnvidia-ml.so.1", RTLD_NOW);
    if (!lib)
        return 0;
    int (*init)(void) = (int (*)(void))dlsym(lib, "nvmlInit_v2");
    int (*handle)(unsigned, void **) =
        (int (*)(unsigned, void **))dlsym(lib, "nvmlDeviceGetHandleByIndex_v2");
    v->clock = (int (*)(void *, int, unsigned *))dlsym(lib, "nvmlDeviceGetClockInfo");
    v->power = (int (*)(void *, unsigned *))dlsym(lib, "nvmlDeviceGetPowerUsage");
    pthread_mutex_init(&v->lock, NULL);
    if (!init || !handle || !v->clock || !v->power || init() != 0 || handle(0, &v->dev) != 0 ||
        pthread_create(&v->th, NULL, bn_nv_thread, v) != 0) {
        v->clock = NULL;            /* bn_nv_begin / bn_nv_end do nothing */
        return 0;
    }
    return 1;
}

static void bn_nv_begin(bn_nvml *v)
{
    if (!v->clock)
        return;
    pthread_mutex_lock(&v->lock);
    v->mhz = v->mw = 0;
    v->n = 0;
    v->on = 1;
    pthread_mutex_unlock(&v->lock);
}

/* Mean SM clock (MHz) and power (W) since bn_nv_begin; 0 without samples. */
static void bn_nv_end(bn_nvml *v, double *mhz, double *w)
{
    *mhz = *w = 0;
    if (!v->clock)
        return;
    pthread_mutex_lock(&v->lock);
    v->on = 0;
    if (v->n) {
        *mhz = v->mhz / v->n;
        *w = v->mw / v->n / 1000.0;
    }
    pthread_mutex_unlock(&v->lock);
}

#endif
