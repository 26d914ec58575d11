/* proto.c: the parent/worker protocol: length-prefixed binary messages
 * (little-endian integers, IEEE doubles, length-prefixed strings and blob). */
#include <errno.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "tn.h"

typedef struct pbuf {
    unsigned char *p;
    size_t len, cap;
    int oom;
} pbuf;

static void put_bytes(pbuf *b, const void *src, size_t n)
{
    if (b->oom)
        return;
    if (b->len + n > b->cap) {
        size_t cap = b->cap ? b->cap : 4096;
        while (cap < b->len + n)
            cap *= 2;
        unsigned char *q = realloc(b->p, cap);
        if (!q) {
            b->oom = 1;
            return;
        }
        b->p = q;
        b->cap = cap;
    }
    memcpy(b->p + b->len, src, n);
    b->len += n;
}

static void put_u64(pbuf *b, uint64_t v)
{
    unsigned char t[8];
    for (int i = 0; i < 8; i++)
        t[i] = (unsigned char)(v >> (8 * i));
    put_bytes(b, t, 8);
}

static void put_i64(pbuf *b, long long v) { put_u64(b, (uint64_t)v); }

static void put_f64(pbuf *b, double v)
{
    uint64_t u;
    memcpy(&u, &v, sizeof u);
    put_u64(b, u);
}

static void put_str(pbuf *b, const char *s)
{
    size_t n = strlen(s);
    put_u64(b, n);
    put_bytes(b, s, n);
}

typedef struct rbuf {
    const unsigned char *p;
    size_t len, pos;
    int bad;
} rbuf;

static uint64_t get_u64(rbuf *r)
{
    if (r->bad || r->len - r->pos < 8) {
        r->bad = 1;
        return 0;
    }
    uint64_t v = 0;
    for (int i = 0; i < 8; i++)
        v |= (uint64_t)r->p[r->pos + i] << (8 * i);
    r->pos += 8;
    return v;
}

static long long get_i64(rbuf *r) { return (long long)get_u64(r); }
static int get_int(rbuf *r) { return (int)get_i64(r); }

static double get_f64(rbuf *r)
{
    uint64_t u = get_u64(r);
    double v;
    memcpy(&v, &u, sizeof v);
    return v;
}

static void get_str(rbuf *r, char *out, size_t cap)
{
    uint64_t n = get_u64(r);
    out[0] = '\0';
    if (r->bad || n > r->len - r->pos || n >= cap) {
        r->bad = 1;
        return;
    }
    memcpy(out, r->p + r->pos, (size_t)n);
    out[n] = '\0';
    r->pos += (size_t)n;
}

at_status tn_msg_encode(const tn_msg *m, unsigned char **buf, size_t *len)
{
    pbuf b = {0};
    unsigned char lenbytes[4] = {0};
    put_bytes(&b, lenbytes, 4);
    put_i64(&b, m->type);
    put_i64(&b, m->status);
    put_i64(&b, m->device);
    put_str(&b, m->family);
    put_i64(&b, m->problem.n_dims);
    for (int i = 0; i < TPL_MAX_DIMS; i++)
        put_i64(&b, m->problem.dims[i]);
    put_i64(&b, m->problem.dtype);
    put_i64(&b, m->problem.math);
    put_i64(&b, m->problem.op_a);
    put_i64(&b, m->problem.op_b);
    put_i64(&b, m->problem.order);
    put_i64(&b, m->problem.batch);
    put_i64(&b, m->problem.epilogue);
    put_u64(&b, m->seed);
    int n_cfg = m->n_cfg < 0 ? 0 : m->n_cfg > TPL_MAX_PARAMS ? TPL_MAX_PARAMS : m->n_cfg;
    put_i64(&b, n_cfg);
    for (int i = 0; i < n_cfg; i++)
        put_i64(&b, m->cfg[i]);
    put_i64(&b, m->opt.warmup);
    put_i64(&b, m->opt.min_runs);
    put_i64(&b, m->opt.max_runs);
    put_f64(&b, m->opt.budget_ms);
    put_f64(&b, m->opt.abandon_ms);
    put_i64(&b, m->opt.flush_l2);
    put_i64(&b, m->opt.back_to_back);
    const at_device_info *d = &m->dev;
    put_i64(&b, d->ordinal);
    put_str(&b, d->name);
    put_str(&b, d->uuid);
    put_i64(&b, d->cc_major);
    put_i64(&b, d->cc_minor);
    put_i64(&b, d->sm_count);
    put_i64(&b, d->memory_bytes);
    put_i64(&b, d->l2_bytes);
    put_i64(&b, d->smem_per_block_optin);
    put_i64(&b, d->smem_per_sm);
    put_i64(&b, d->regs_per_block);
    put_i64(&b, d->regs_per_sm);
    put_i64(&b, d->max_threads_per_block);
    put_i64(&b, d->max_threads_per_sm);
    put_i64(&b, d->clock_khz);
    put_i64(&b, d->mem_clock_khz);
    put_i64(&b, d->mem_bus_bits);
    put_i64(&b, d->driver_version);
    put_str(&b, d->arch);
    put_f64(&b, m->rel_error);
    put_f64(&b, m->timing.median_ms);
    put_f64(&b, m->timing.min_ms);
    put_f64(&b, m->timing.max_ms);
    put_i64(&b, m->timing.runs);
    put_i64(&b, m->timing.abandoned);
    put_f64(&b, m->timing.flops);
    put_f64(&b, m->timing.bytes);
    put_i64(&b, m->verified);
    put_i64(&b, m->fatal);
    put_f64(&b, m->value);
    put_f64(&b, m->value2);
    put_str(&b, m->text);
    size_t blob = m->blob ? m->blob_size : 0;
    put_u64(&b, blob);
    if (blob)
        put_bytes(&b, m->blob, blob);
    if (b.oom || b.len - 4 > TN_MSG_MAX) {
        free(b.p);
        return b.oom ? AT_ERR_NO_MEMORY : AT_ERR_INVALID_ARG;
    }
    uint32_t body = (uint32_t)(b.len - 4);
    for (int i = 0; i < 4; i++)
        b.p[i] = (unsigned char)(body >> (8 * i));
    *buf = b.p;
    *len = b.len;
    return AT_OK;
}

at_status tn_msg_decode(const unsigned char *body, size_t len, tn_msg *m)
{
    rbuf r = {body, len, 0, 0};
    memset(m, 0, sizeof *m);
    m->type = get_int(&r);
    m->status = get_int(&r);
    m->device = get_int(&r);
    get_str(&r, m->family, sizeof m->family);
    m->problem.n_dims = get_int(&r);
    for (int i = 0; i < TPL_MAX_DIMS; i++)
        m->problem.dims[i] = get_i64(&r);
    m->problem.dtype = (at_dtype)get_int(&r);
    m->problem.math = (at_math)get_int(&r);
    m->problem.op_a = (at_op)get_int(&r);
    m->problem.op_b = (at_op)get_int(&r);
    m->problem.order = (at_order)get_int(&r);
    m->problem.batch = get_i64(&r);
    m->problem.epilogue = get_int(&r);
    m->seed = get_u64(&r);
    long long n_cfg = get_i64(&r);
    if (n_cfg < 0 || n_cfg > TPL_MAX_PARAMS || m->problem.n_dims < 0 ||
        m->problem.n_dims > TPL_MAX_DIMS)
        return AT_ERR_INVALID_ARG;
    m->n_cfg = (int)n_cfg;
    for (int i = 0; i < m->n_cfg; i++)
        m->cfg[i] = get_int(&r);
    m->opt.warmup = get_int(&r);
    m->opt.min_runs = get_int(&r);
    m->opt.max_runs = get_int(&r);
    m->opt.budget_ms = get_f64(&r);
    m->opt.abandon_ms = get_f64(&r);
    m->opt.flush_l2 = get_int(&r);
    m->opt.back_to_back = get_int(&r);
    at_device_info *d = &m->dev;
    d->ordinal = get_int(&r);
    get_str(&r, d->name, sizeof d->name);
    get_str(&r, d->uuid, sizeof d->uuid);
    d->cc_major = get_int(&r);
    d->cc_minor = get_int(&r);
    d->sm_count = get_int(&r);
    d->memory_bytes = get_i64(&r);
    d->l2_bytes = get_int(&r);
    d->smem_per_block_optin = get_int(&r);
    d->smem_per_sm = get_int(&r);
    d->regs_per_block = get_int(&r);
    d->regs_per_sm = get_int(&r);
    d->max_threads_per_block = get_int(&r);
    d->max_threads_per_sm = get_int(&r);
    d->clock_khz = get_int(&r);
    d->mem_clock_khz = get_int(&r);
    d->mem_bus_bits = get_int(&r);
    d->driver_version = get_int(&r);
    get_str(&r, d->arch, sizeof d->arch);
    m->rel_error = get_f64(&r);
    m->timing.median_ms = get_f64(&r);
    m->timing.min_ms = get_f64(&r);
    m->timing.max_ms = get_f64(&r);
    m->timing.runs = get_int(&r);
    m->timing.abandoned = get_int(&r);
    m->timing.flops = get_f64(&r);
    m->timing.bytes = get_f64(&r);
    m->verified = get_int(&r);
    m->fatal = get_int(&r);
    m->value = get_f64(&r);
    m->value2 = get_f64(&r);
    get_str(&r, m->text, sizeof m->text);
    uint64_t blob = get_u64(&r);
    if (r.bad || blob > r.len - r.pos)
        return AT_ERR_INVALID_ARG;
    if (blob) {
        m->blob_owned = malloc((size_t)blob);
        if (!m->blob_owned)
            return AT_ERR_NO_MEMORY;
        memcpy(m->blob_owned, r.p + r.pos, (size_t)blob);
        m->blob = m->blob_owned;
        m->blob_size = (size_t)blob;
        r.pos += (size_t)blob;
    }
    if (r.pos != r.len) {
        tn_msg_free(m);
        return AT_ERR_INVALID_ARG;
    }
    return AT_OK;
}

void tn_msg_free(tn_msg *m)
{
    free(m->blob_owned);
    m->blob_owned = NULL;
    m->blob = NULL;
    m->blob_size = 0;
}

at_status tn_msg_send(int fd, const tn_msg *m)
{
    unsigned char *buf;
    size_t len;
    at_status st = tn_msg_encode(m, &buf, &len);
    if (st != AT_OK)
        return st;
    size_t off = 0;
    while (off < len) {
        ssize_t w = write(fd, buf + off, len - off);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0) {
            free(buf);
            return AT_ERR_IO;
        }
        off += (size_t)w;
    }
    free(buf);
    return AT_OK;
}

/* Reads exactly n bytes by `deadline` (tn_now() seconds, < 0: none). */
static at_status read_full(int fd, unsigned char *dst, size_t n, double deadline,
                           char *err, size_t errlen)
{
    size_t off = 0;
    while (off < n) {
        int wait_ms = -1;
        if (deadline >= 0) {
            double left = deadline - tn_now();
            if (left <= 0) {
                snprintf(err, errlen, "no answer within the time limit");
                return AT_ERR_TIMEOUT;
            }
            wait_ms = (int)(left * 1000.0) + 1;
        }
        struct pollfd pfd = {.fd = fd, .events = POLLIN};
        int rc = poll(&pfd, 1, wait_ms);
        if (rc < 0 && errno == EINTR)
            continue;
        if (rc < 0) {
            snprintf(err, errlen, "poll failed: %s", strerror(errno));
            return AT_ERR_IO;
        }
        if (rc == 0)
            continue;                /* deadline check above */
        ssize_t got = read(fd, dst + off, n - off);
        if (got < 0 && (errno == EINTR || errno == EAGAIN))
            continue;
        if (got < 0) {
            snprintf(err, errlen, "read failed: %s", strerror(errno));
            return AT_ERR_IO;
        }
        if (got == 0) {
            snprintf(err, errlen, "worker closed the pipe");
            return AT_ERR_IO;
        }
        off += (size_t)got;
    }
    return AT_OK;
}

at_status tn_msg_recv(int fd, tn_msg *m, double timeout_s, char *err, size_t errlen)
{
    double deadline = timeout_s < 0 ? -1.0 : tn_now() + timeout_s;
    unsigned char hdr[4];
    at_status st = read_full(fd, hdr, 4, deadline, err, errlen);
    if (st != AT_OK)
        return st;
    uint32_t len = (uint32_t)hdr[0] | (uint32_t)hdr[1] << 8 |
                   (uint32_t)hdr[2] << 16 | (uint32_t)hdr[3] << 24;
    if (len > TN_MSG_MAX) {
        snprintf(err, errlen, "message of %u bytes is too large", len);
        return AT_ERR_IO;
    }
    unsigned char *body = malloc(len ? len : 1);
    if (!body) {
        snprintf(err, errlen, "out of memory for a %u-byte message", len);
        return AT_ERR_NO_MEMORY;
    }
    st = read_full(fd, body, len, deadline, err, errlen);
    if (st == AT_OK) {
        st = tn_msg_decode(body, len, m);
        if (st != AT_OK) {
            snprintf(err, errlen, "malformed message from the worker");
            st = AT_ERR_IO;
        }
    }
    free(body);
    return st;
}

void tn_msg_reply_init(tn_msg *r, int status)
{
    memset(r, 0, sizeof *r);
    r->type = TN_MSG_REPLY;
    r->status = status;
    r->rel_error = -1;
}
