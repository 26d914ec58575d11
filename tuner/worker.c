/* worker.c: the GPU worker process (hidden `autotune __worker`) that serves
 * the protocol with measure.h (the fake one for tests: fake_worker.c). */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "tn.h"
#include "vendor.h"

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

/* The device's other ceilings (launch floor, read bandwidth, FP32/FP64
 * peaks) as side lines into b; their failure leaves b empty (the copy
 * bandwidth still answers). */
static void worker_more_ceilings(ms_gpu *g, tn_side_buf *b)
{
    ms_ceiling ce[8];
    char err[512] = "";
    int n = ms_ceilings(g, ce, 8, err, sizeof err);
    for (int i = 0; i < n; i++) {
        tn_side s;
        memset(&s, 0, sizeof s);
        snprintf(s.name, sizeof s.name, "%.31s", ce[i].name);
        s.time_ms = s.min_ms = s.max_ms = ce[i].time_ms;
        s.rel_error = -1;
        s.gflops = ce[i].gflops;
        s.gbs = ce[i].gbs;
        snprintf(s.note, sizeof s.note, "%.199s", ce[i].note);
        tn_side_put(b, &s);
    }
}

/* VENDOR: every vendor call of the prepared problem, verified and timed,
 * as side lines into b; AT_ERR_UNSUPPORTED with the reason in text when
 * the problem has none; *fatal when a call left the context unusable. */
static at_status worker_vendor(ms_gpu *g, ms_vendor **v, const ms_options *opt, tn_side_buf *b,
                               int *fatal, char *text, size_t len)
{
    if (!*v && !(*v = ms_vendor_open())) {
        snprintf(text, len, "out of host memory");
        return AT_ERR_NO_MEMORY;
    }
    ms_vendor_result vr[MS_MAX_VENDOR];
    int n = ms_vendor_measure(*v, g, opt, vr, MS_MAX_VENDOR, text, len);
    if (n == 0)
        return AT_ERR_UNSUPPORTED;
    for (int i = 0; i < n; i++) {
        tn_side s;
        memset(&s, 0, sizeof s);
        snprintf(s.name, sizeof s.name, "%.31s", vr[i].name);
        s.status = vr[i].status;
        s.time_ms = vr[i].timing.median_ms;
        s.min_ms = vr[i].timing.min_ms;
        s.max_ms = vr[i].timing.max_ms;
        s.runs = vr[i].timing.runs;
        s.rel_error = vr[i].rel_error;
        if (vr[i].status == AT_OK && s.time_ms > 0) {
            s.gflops = vr[i].timing.flops / (s.time_ms * 1e6);
            s.gbs = vr[i].timing.bytes / (s.time_ms * 1e6);
        }
        snprintf(s.note, sizeof s.note, "%.255s", vr[i].note);
        tn_side_put(b, &s);
        if (vr[i].status == AT_ERR_CRASHED)
            *fatal = 1;
    }
    text[0] = '\0';
    return AT_OK;
}

int tn_worker_main(int in_fd, int out_fd)
{
    ms_vendor *vendor = NULL;
    ms_gpu *g = NULL;
    signal(SIGPIPE, SIG_IGN);
    for (;;) {
        tn_msg m, r;
        char err[2048] = "";
        tn_side_buf side = { 0 };
        if (tn_msg_recv(in_fd, &m, -1, err, sizeof err) != AT_OK) {
            ms_vendor_close(vendor);
            ms_close(g);
            return 0;                /* parent gone */
        }
        const tpl_family *fam = m.family[0] ? tpl_find(m.family) : NULL;
        switch (m.type) {
        case TN_MSG_OPEN: {
            tn_msg_reply_init(&r, AT_OK);
            r.type = TN_MSG_HELLO;
            if (g) {
                ms_close(g);
                g = NULL;
            }
            r.status = ms_open(&g, m.device, r.text, sizeof r.text);
            if (r.status == AT_OK) {
                int count = 0;
                r.dev = *ms_device(g);
                if (ms_driver(g)->DeviceGetCount(&count) == CUDA_SUCCESS)
                    r.value = count;             /* the GPUs it sees, for --device all */
            }
            break;
        }
        case TN_MSG_PREPARE:
            tn_msg_reply_init(&r, AT_OK);
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
        case TN_MSG_SUSTAIN:
        case TN_MSG_EVAL: {
            tn_msg_reply_init(&r, AT_OK);
            if (!g || !fam || m.n_cfg != fam->n_params || !m.blob) {
                r.status = AT_ERR_INTERNAL;
                snprintf(r.text, sizeof r.text, "bad evaluate request");
                break;
            }
            double error = -1;
            if (m.type == TN_MSG_EVAL)   /* SUSTAIN: verified by an earlier EVAL */
                r.status = ms_verify(g, fam, m.cfg, m.blob, m.blob_size, &error,
                                     r.text, sizeof r.text);
            if (m.type == TN_MSG_EVAL &&
                (r.status == AT_OK || r.status == AT_ERR_WRONG_RESULT)) {
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
            tn_msg_reply_init(&r, AT_OK);
            if (!g) {
                r.status = AT_ERR_INTERNAL;
                snprintf(r.text, sizeof r.text, "ceiling before open");
            } else {
                r.status = worker_ceiling(g, &r.value, &r.value2, r.text, sizeof r.text);
                worker_more_ceilings(g, &side);
            }
            break;
        case TN_MSG_VENDOR:
            tn_msg_reply_init(&r, AT_OK);
            if (!g || !fam || ms_family(g) != fam) {
                r.status = AT_ERR_INTERNAL;
                snprintf(r.text, sizeof r.text, "vendor measurement before prepare");
            } else {
                r.status = worker_vendor(g, &vendor, &m.opt, &side, &r.fatal, r.text,
                                         sizeof r.text);
            }
            break;
        case TN_MSG_QUIT:
            ms_vendor_close(vendor);
            ms_close(g);
            return 0;
        default:
            tn_msg_reply_init(&r, AT_ERR_INTERNAL);
            snprintf(r.text, sizeof r.text, "unknown message type %d", m.type);
            break;
        }
        tn_msg_free(&m);
        if (side.len && !side.oom) {
            r.blob = side.p;
            r.blob_size = side.len;
        }
        at_status sent = tn_msg_send(out_fd, &r);
        free(side.p);
        if (sent != AT_OK) {
            ms_vendor_close(vendor);
            ms_close(g);
            return 1;
        }
        if (r.fatal) {
            /* the context is poisoned: leave without touching CUDA again */
            _exit(3);
        }
    }
}
