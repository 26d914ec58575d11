/* worker.c: the GPU worker process (hidden `autotune __worker`) that serves
 * the protocol with measure.h, and a fake worker for tests without a GPU. */
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>
#include "tn.h"

static void reply_init(tn_msg *r, int status)
{
    memset(r, 0, sizeof *r);
    r->type = TN_MSG_REPLY;
    r->status = status;
    r->rel_error = -1;
}

/* Copy bandwidth: device-to-device copies of a large buffer timed with
 * events; GB/s counts bytes read plus bytes written. */
static at_status worker_ceiling(ms_gpu *g, double *gbs, double *ms_per_copy,
                                char *err, size_t errlen)
{
    const cudrv *cu = ms_driver(g);
    const at_device_info *dev = ms_device(g);
    CUstream stream = ms_reference(g)->stream;
    size_t bytes = 256u << 20;
    if (dev->memory_bytes > 0 && (long long)bytes * 8 > dev->memory_bytes)
        bytes = (size_t)(dev->memory_bytes / 8);
    CUdeviceptr a = 0, b = 0;
    CUevent e0 = NULL, e1 = NULL;
    at_status st = AT_OK;
    CUresult rc;
    if ((rc = cu->MemAlloc(&a, bytes)) != CUDA_SUCCESS ||
        (rc = cu->MemAlloc(&b, bytes)) != CUDA_SUCCESS ||
        (rc = cu->EventCreate(&e0, 0)) != CUDA_SUCCESS ||
        (rc = cu->EventCreate(&e1, 0)) != CUDA_SUCCESS ||
        (rc = cu->MemsetD32Async(a, 0x3f800000u, bytes / 4, stream)) != CUDA_SUCCESS ||
        (rc = cu->MemcpyDtoDAsync(b, a, bytes, stream)) != CUDA_SUCCESS) {
        cudrv_describe(cu, rc, "copy bandwidth setup", err, errlen);
        st = AT_ERR_CUDA;
    }
    const int reps = 20;
    if (st == AT_OK) {
        if ((rc = cu->EventRecord(e0, stream)) == CUDA_SUCCESS) {
            for (int i = 0; i < reps && rc == CUDA_SUCCESS; i++)
                rc = cu->MemcpyDtoDAsync(i % 2 ? a : b, i % 2 ? b : a, bytes, stream);
        }
        float ms = 0;
        if (rc == CUDA_SUCCESS)
            rc = cu->EventRecord(e1, stream);
        if (rc == CUDA_SUCCESS)
            rc = cu->EventSynchronize(e1);
        if (rc == CUDA_SUCCESS)
            rc = cu->EventElapsedTime(&ms, e0, e1);
        if (rc != CUDA_SUCCESS || ms <= 0) {
            cudrv_describe(cu, rc, "copy bandwidth timing", err, errlen);
            st = AT_ERR_CUDA;
        } else {
            *ms_per_copy = ms / reps;
            *gbs = 2.0 * (double)bytes / (*ms_per_copy * 1e6);
            snprintf(err, errlen, "%zu-byte cuMemcpyDtoDAsync x%d; read+written bytes",
                     bytes, reps);
        }
    }
    if (e0) cu->EventDestroy(e0);
    if (e1) cu->EventDestroy(e1);
    if (a) cu->MemFree(a);
    if (b) cu->MemFree(b);
    return st;
}

int tn_worker_main(int in_fd, int out_fd)
{
    ms_gpu *g = NULL;
    signal(SIGPIPE, SIG_IGN);
    for (;;) {
        tn_msg m, r;
        char err[2048] = "";
        if (tn_msg_recv(in_fd, &m, -1, err, sizeof err) != AT_OK) {
            ms_close(g);
            return 0;                /* parent gone */
        }
        const tpl_family *fam = m.family[0] ? tpl_find(m.family) : NULL;
        switch (m.type) {
        case TN_MSG_OPEN: {
            reply_init(&r, AT_OK);
            r.type = TN_MSG_HELLO;
            if (g) {
                ms_close(g);
                g = NULL;
            }
            r.status = ms_open(&g, m.device, r.text, sizeof r.text);
            if (r.status == AT_OK)
                r.dev = *ms_device(g);
            break;
        }
        case TN_MSG_PREPARE:
            reply_init(&r, AT_OK);
            if (!g) {
                r.status = AT_ERR_INTERNAL;
                snprintf(r.text, sizeof r.text, "prepare before open");
            } else if (!fam) {
                r.status = AT_ERR_NOT_FOUND;
                snprintf(r.text, sizeof r.text, "unknown kernel family '%s'", m.family);
            } else {
                r.status = ms_prepare(g, fam, &m.problem, m.seed, r.text, sizeof r.text);
            }
            break;
        case TN_MSG_EVAL: {
            reply_init(&r, AT_OK);
            if (!g || !fam || m.n_cfg != fam->n_params || !m.blob) {
                r.status = AT_ERR_INTERNAL;
                snprintf(r.text, sizeof r.text, "bad evaluate request");
                break;
            }
            double error = -1;
            r.status = ms_verify(g, fam, m.cfg, m.blob, m.blob_size, &error,
                                 r.text, sizeof r.text);
            if (r.status == AT_OK || r.status == AT_ERR_WRONG_RESULT) {
                r.verified = 1;
                r.rel_error = error;
            }
            if (r.status == AT_OK)
                r.status = ms_time(g, fam, m.cfg, m.blob, m.blob_size, &m.opt,
                                   &r.timing, r.text, sizeof r.text);
            if (r.status == AT_ERR_CRASHED)
                r.fatal = 1;
            break;
        }
        case TN_MSG_CEILING:
            reply_init(&r, AT_OK);
            if (!g) {
                r.status = AT_ERR_INTERNAL;
                snprintf(r.text, sizeof r.text, "ceiling before open");
            } else {
                r.status = worker_ceiling(g, &r.value, &r.value2, r.text, sizeof r.text);
            }
            break;
        case TN_MSG_QUIT:
            ms_close(g);
            return 0;
        default:
            reply_init(&r, AT_ERR_INTERNAL);
            snprintf(r.text, sizeof r.text, "unknown message type %d", m.type);
            break;
        }
        tn_msg_free(&m);
        if (tn_msg_send(out_fd, &r) != AT_OK) {
            ms_close(g);
            return 1;
        }
        if (r.fatal) {
            /* the context is poisoned: leave without touching CUDA again */
            _exit(3);
        }
    }
}

/* ---- fake worker ----
 * $AUTOTUNE_FAKE: ';'-separated directives:
 *   crash=CONFIG   the worker kills itself with SIGSEGV on that configuration
 *   hang=CONFIG    the worker sleeps forever on it
 *   wrong=CONFIG   reports wrong_result (rel_error 0.5)
 *   delay=MS       sleeps MS milliseconds per evaluation
 *   nodevice       OPEN fails with AT_ERR_NO_DEVICE
 * Times come from tn_fake_time(config). */

double tn_fake_time(const char *config)
{
    unsigned long long h = 14695981039346656037ull;
    for (const unsigned char *p = (const unsigned char *)config; *p; p++) {
        h ^= *p;
        h *= 1099511628211ull;
    }
    return 0.5 + (double)(h % 10000u) / 1000.0;
}

/* 1 if $AUTOTUNE_FAKE has directive key=config (or bare key if config NULL). */
static int fake_has(const char *key, const char *config)
{
    const char *spec = getenv("AUTOTUNE_FAKE");
    if (!spec)
        return 0;
    size_t klen = strlen(key);
    const char *p = spec;
    while (*p) {
        const char *end = strchr(p, ';');
        size_t len = end ? (size_t)(end - p) : strlen(p);
        if (len >= klen && strncmp(p, key, klen) == 0) {
            if (!config && len == klen)
                return 1;
            if (config && len > klen && p[klen] == '=' &&
                len - klen - 1 == strlen(config) &&
                strncmp(p + klen + 1, config, len - klen - 1) == 0)
                return 1;
        }
        p += len;
        if (*p == ';')
            p++;
    }
    return 0;
}

static double fake_delay_ms(void)
{
    const char *spec = getenv("AUTOTUNE_FAKE");
    const char *d = spec ? strstr(spec, "delay=") : NULL;
    return d ? atof(d + 6) : 0.0;
}

static void fake_device(at_device_info *d, int ordinal)
{
    memset(d, 0, sizeof *d);
    d->ordinal = ordinal;
    snprintf(d->name, sizeof d->name, "Fake GPU (autotune tests)");
    snprintf(d->uuid, sizeof d->uuid, "GPU-fa4e0000-0000-0000-0000-00000000000%d",
             ordinal % 10);
    d->cc_major = 9;
    d->cc_minor = 0;
    d->sm_count = 132;
    d->memory_bytes = 80ll << 30;
    d->l2_bytes = 50 << 20;
    d->smem_per_block_optin = 227 << 10;
    d->smem_per_sm = 228 << 10;
    d->regs_per_block = 65536;
    d->regs_per_sm = 65536;
    d->max_threads_per_block = 1024;
    d->max_threads_per_sm = 2048;
    d->clock_khz = 1980000;
    d->mem_clock_khz = 2619000;
    d->mem_bus_bits = 5120;
    d->driver_version = 13000;
    snprintf(d->arch, sizeof d->arch, "sm_90");
}

int tn_fake_worker_main(int in_fd, int out_fd)
{
    struct rlimit nocore = {0, 0};
    setrlimit(RLIMIT_CORE, &nocore);
    signal(SIGPIPE, SIG_IGN);
    int opened = 0, prepared = 0;
    for (;;) {
        tn_msg m, r;
        char err[2048] = "";
        if (tn_msg_recv(in_fd, &m, -1, err, sizeof err) != AT_OK)
            return 0;
        const tpl_family *fam = m.family[0] ? tpl_find(m.family) : NULL;
        reply_init(&r, AT_OK);
        switch (m.type) {
        case TN_MSG_OPEN:
            r.type = TN_MSG_HELLO;
            if (fake_has("nodevice", NULL)) {
                r.status = AT_ERR_NO_DEVICE;
                snprintf(r.text, sizeof r.text, "fake worker: no device %d", m.device);
            } else {
                fake_device(&r.dev, m.device);
                opened = 1;
            }
            break;
        case TN_MSG_PREPARE:
            if (!opened || !fam) {
                r.status = AT_ERR_NOT_FOUND;
                snprintf(r.text, sizeof r.text, "fake worker: bad prepare");
            } else {
                prepared = 1;
            }
            break;
        case TN_MSG_EVAL: {
            char config[TPL_CONFIG_LEN];
            if (!prepared || !fam || m.n_cfg != fam->n_params || !m.blob ||
                m.blob_size == 0) {
                r.status = AT_ERR_INTERNAL;
                snprintf(r.text, sizeof r.text, "fake worker: bad evaluate request");
                break;
            }
            tpl_config_format(fam, m.cfg, config, sizeof config);
            double delay = fake_delay_ms();
            if (delay > 0) {
                struct timespec ts = {(time_t)(delay / 1000),
                                      (long)(fmod(delay, 1000.0) * 1e6)};
                nanosleep(&ts, NULL);
            }
            if (fake_has("crash", config)) {
                signal(SIGSEGV, SIG_DFL);
                raise(SIGSEGV);
            }
            if (fake_has("hang", config))
                for (;;)
                    pause();
            if (fake_has("wrong", config)) {
                r.status = AT_ERR_WRONG_RESULT;
                r.verified = 1;
                r.rel_error = 0.5;
                snprintf(r.text, sizeof r.text, "relative error 0.5 above tolerance");
                break;
            }
            double t = tn_fake_time(config);
            r.verified = 1;
            r.rel_error = 1e-7;
            r.timing.median_ms = t;
            r.timing.min_ms = t * 0.995;
            r.timing.max_ms = t * 1.005;
            r.timing.runs = m.opt.max_runs < 10 ? m.opt.max_runs : 10;
            if (m.opt.abandon_ms > 0 && t > m.opt.abandon_ms) {
                r.timing.abandoned = 1;
                r.timing.runs = m.opt.min_runs;
            }
            break;
        }
        case TN_MSG_CEILING:
            r.value = 3000.0;
            r.value2 = 0.179;
            snprintf(r.text, sizeof r.text, "fake");
            break;
        case TN_MSG_QUIT:
            return 0;
        default:
            r.status = AT_ERR_INTERNAL;
            snprintf(r.text, sizeof r.text, "unknown message type %d", m.type);
            break;
        }
        tn_msg_free(&m);
        if (tn_msg_send(out_fd, &r) != AT_OK)
            return 1;
    }
}
