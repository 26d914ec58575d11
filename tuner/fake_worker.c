/* fake_worker.c: the fake worker (hidden `autotune __fake_worker`) that
 * serves the protocol without a GPU for tests, dying when it is told to. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>
#include "tn.h"

/* $AUTOTUNE_FAKE: ';'-separated directives:
 *   crash=CONFIG   the worker kills itself with SIGSEGV on that configuration
 *   hang=CONFIG    the worker sleeps forever on it
 *   wrong=CONFIG   reports wrong_result (rel_error 0.5)
 *   delay=MS       sleeps MS milliseconds per evaluation
 *   hot=CONFIG     under sustained load (SUSTAIN: tuner/retime.c) that
 *                  configuration runs 1.25x its short time; every other one
 *                  1.05x (all alike: the order kept)
 *   flaky=CONFIG   under sustained load that configuration runs 0.95x and
 *                  1.30x its short time on alternate SUSTAINs (faster by the
 *                  median of 5 rounds, but not in 4 of them)
 *   lead4=CONFIG   under sustained load that configuration runs 0.90x its
 *                  short time, but 1.30x on its third SUSTAIN (faster in 4
 *                  of 5 rounds, by a clear median)
 *   powered=CONFIG under sustained load that configuration runs 0.90x its
 *                  short time when the SUSTAIN's untimed runs before the
 *                  timed ones last at least 50 ms by its short time (its
 *                  own steady clock: AUTOTUNE_RETIME_SETTLE_MS), 1.10x
 *                  otherwise (the clock a hungrier neighbour left)
 *   sdelay=MS      sleeps MS milliseconds per SUSTAIN
 *   close          short times spread over 0.5-0.6 ms, not 0.5-10.5 ms (a
 *                  field of many within 20% of the best)
 *   nodevice       OPEN fails with AT_ERR_NO_DEVICE
 *   die=PHASE:K    the worker SIGKILLs itself at the K-th event of PHASE:
 *                  open (OPEN arrived), ceiling (CEILING arrived), prepare
 *                  (PREPARE arrived), handoff (the first bytes of an EVAL
 *                  read, the rest, with the cubin, not), verify (during
 *                  verification), time (verified, during timing), reply
 *                  (half of the EVAL reply written), idle (the whole EVAL
 *                  reply written: dead before the next request)
 *   die=N          the same at the N-th event of any phase
 *   die@D=PHASE:K  the same, only in the workers of device D, whose events
 *                  are counted apart (in PATH.dD with state=PATH, else by
 *                  each worker process: a respawned one starts again)
 *   state=PATH     events (and deaths) are counted in this file across the
 *                  workers of a run; without it, by each worker process.
 *                  It holds: events of any phase, events of each phase (in
 *                  the order above), deaths, deaths in each phase
 * die may be repeated. Times come from tn_fake_time(config).
 * $AUTOTUNE_FAKE_DEVICES: the GPUs the fake sees: N (N of one model) or a
 * comma-separated list of model names ("a,a,b": devices 0 and 1 of model
 * a, device 2 of model b); another ordinal is refused. Unset: any ordinal
 * opens, the count is unknown. */

static int fake_has(const char *key, const char *config);

double tn_fake_time(const char *config)
{
    unsigned long long h = 14695981039346656037ull;
    for (const unsigned char *p = (const unsigned char *)config; *p; p++) {
        h ^= *p;
        h *= 1099511628211ull;
    }
    return 0.5 + (double)(h % 10000u) / (fake_has("close", NULL) ? 100000.0 : 1000.0);
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

/* The value of the nth directive key=VALUE into out; 1 if there is one. */
static int fake_value(const char *key, int nth, char *out, size_t len)
{
    const char *spec = getenv("AUTOTUNE_FAKE");
    size_t klen = strlen(key);
    for (const char *p = spec ? spec : ""; *p;) {
        size_t n = strcspn(p, ";");
        if (n > klen && strncmp(p, key, klen) == 0 && p[klen] == '=' && nth-- == 0) {
            snprintf(out, len, "%.*s", (int)(n - klen - 1), p + klen + 1);
            return 1;
        }
        p += n;
        p += *p == ';';
    }
    return 0;
}

/* delay=MS (not sdelay=), 0 without one. */
static double fake_delay_ms(void)
{
    char v[32];
    return fake_value("delay", 0, v, sizeof v) ? atof(v) : 0.0;
}

/* ---- deaths on demand ---- */

enum {
    FK_OPEN, FK_CEILING, FK_PREPARE, FK_HANDOFF, FK_VERIFY, FK_TIME, FK_REPLY, FK_IDLE,
    FK_PHASES
};
static const char *const fk_phase[FK_PHASES] = {
    "open", "ceiling", "prepare", "handoff", "verify", "time", "reply", "idle",
};

/* Events so far: of any phase, of each, and the deaths they caused (in
 * all, in each phase). The state file holds them in this order. */
typedef struct fk_counts {
    long long all, phase[FK_PHASES], kills, killed[FK_PHASES];
} fk_counts;

static fk_counts fk_local;           /* without state=PATH */
static fk_counts fk_device;          /* die@D, counted by this process */
static int fk_ordinal = -1;          /* the device opened */

static void fk_load(const char *path, fk_counts *n)
{
    memset(n, 0, sizeof *n);
    FILE *f = fopen(path, "r");
    if (!f)
        return;
    long long *v = &n->all;
    for (size_t i = 0; i < sizeof *n / sizeof *v; i++)
        if (fscanf(f, "%lld", &v[i]) != 1)
            break;
    fclose(f);
}

static void fk_save(const char *path, const fk_counts *n)
{
    FILE *f = fopen(path, "w");
    if (!f)
        return;
    const long long *v = &n->all;
    for (size_t i = 0; i < sizeof *n / sizeof *v; i++)
        fprintf(f, "%s%lld", i ? " " : "", v[i]);
    fprintf(f, "\n");
    fclose(f);
}

/* Counts an event of phase; 1 if a die directive names it (the caller
 * then calls fake_die). */
static int fake_event(int phase)
{
    char path[1024], v[64];
    fk_counts n = fk_local;
    int shared = fake_value("state", 0, path, sizeof path);
    if (shared)
        fk_load(path, &n);
    n.all++;
    n.phase[phase]++;
    int die = 0;
    for (int k = 0; !die && fake_value("die", k, v, sizeof v); k++) {
        char *colon = strchr(v, ':');
        if (!colon) {
            die = atoll(v) == n.all;
        } else {
            *colon = '\0';
            die = strcmp(v, fk_phase[phase]) == 0 && atoll(colon + 1) == n.phase[phase];
        }
    }
    if (!die && fk_ordinal >= 0) {
        char key[32], dpath[1100];
        snprintf(key, sizeof key, "die@%d", fk_ordinal);
        snprintf(dpath, sizeof dpath, "%s.d%d", path, fk_ordinal);
        if (shared)
            fk_load(dpath, &fk_device);
        fk_device.all++;
        fk_device.phase[phase]++;
        for (int k = 0; !die && fake_value(key, k, v, sizeof v); k++) {
            char *colon = strchr(v, ':');
            if (!colon) {
                die = atoll(v) == fk_device.all;
            } else {
                *colon = '\0';
                die = strcmp(v, fk_phase[phase]) == 0 && atoll(colon + 1) == fk_device.phase[phase];
            }
        }
        if (shared)
            fk_save(dpath, &fk_device);
    }
    n.kills += die;
    n.killed[phase] += die;
    if (shared)
        fk_save(path, &n);
    else
        fk_local = n;
    return die;
}

static void fake_die(void)
{
    kill(getpid(), SIGKILL);
    for (;;)
        pause();
}

/* Reads exactly n bytes; -1 at EOF or on an error. */
static int fake_read(int fd, unsigned char *dst, size_t n)
{
    size_t off = 0;
    while (off < n) {
        ssize_t got = read(fd, dst + off, n - off);
        if (got < 0 && errno == EINTR)
            continue;
        if (got <= 0)
            return -1;
        off += (size_t)got;
    }
    return 0;
}

/* tn_msg_recv without a deadline, with the handoff event between the
 * first bytes of an EVAL and the rest. AT_ERR_IO at EOF or if malformed. */
static at_status fake_recv(int fd, tn_msg *m)
{
    unsigned char hdr[4];
    if (fake_read(fd, hdr, 4) != 0)
        return AT_ERR_IO;
    uint32_t len = (uint32_t)hdr[0] | (uint32_t)hdr[1] << 8 | (uint32_t)hdr[2] << 16 |
                   (uint32_t)hdr[3] << 24;
    unsigned char *body = len >= 8 && len <= TN_MSG_MAX ? malloc(len) : NULL;
    if (!body || fake_read(fd, body, 8) != 0) {
        free(body);
        return AT_ERR_IO;
    }
    uint64_t type = 0;
    for (int i = 0; i < 8; i++)
        type |= (uint64_t)body[i] << (8 * i);
    if (type == TN_MSG_EVAL && fake_event(FK_HANDOFF))
        fake_die();
    at_status st = fake_read(fd, body + 8, len - 8) == 0 ? tn_msg_decode(body, len, m)
                                                        : AT_ERR_IO;
    free(body);
    return st;
}

/* Sends the reply to an EVAL, or half of it and dies (the reply event). */
static at_status fake_reply(int fd, const tn_msg *r)
{
    if (!fake_event(FK_REPLY))
        return tn_msg_send(fd, r);
    unsigned char *buf = NULL;
    size_t len = 0;
    if (tn_msg_encode(r, &buf, &len) == AT_OK && write(fd, buf, len / 2) < 0)
        len = 0;
    free(buf);
    fake_die();
    return AT_ERR_IO;
}

/* The GPUs of $AUTOTUNE_FAKE_DEVICES: their count (0: unset, any ordinal
 * opens) and the model name of ordinal ("" for the default model). */
static int fake_devices(int ordinal, char *model, size_t len)
{
    const char *spec = getenv("AUTOTUNE_FAKE_DEVICES");
    if (model && len)
        model[0] = '\0';
    if (!spec || !*spec)
        return 0;
    if (strchr(spec, ',') == NULL && spec[0] >= '0' && spec[0] <= '9')
        return atoi(spec);
    int n = 0;
    for (const char *p = spec; *p; n++) {
        size_t k = strcspn(p, ",");
        if (n == ordinal && model)
            snprintf(model, len, "%.*s", (int)k, p);
        p += k;
        p += *p == ',';
    }
    return n;
}

static void fake_device(at_device_info *d, int ordinal)
{
    char model[64];
    fake_devices(ordinal, model, sizeof model);
    memset(d, 0, sizeof *d);
    d->ordinal = ordinal;
    if (model[0])
        snprintf(d->name, sizeof d->name, "Fake GPU %s (autotune tests)", model);
    else
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

/* Answers an EVAL in r: the verify and time events, then the directives
 * for its configuration, else the formula's time. */
static void fake_eval(const tn_msg *m, const tpl_family *fam, int prepared, tn_msg *r)
{
    char config[TPL_CONFIG_LEN];
    if (!prepared || !fam || m->n_cfg != fam->n_params || !m->blob || m->blob_size == 0) {
        r->status = AT_ERR_INTERNAL;
        snprintf(r->text, sizeof r->text, "fake worker: bad evaluate request");
        return;
    }
    if (fake_event(FK_VERIFY))
        fake_die();
    tpl_config_format(fam, m->cfg, config, sizeof config);
    double delay = fake_delay_ms();
    if (delay > 0) {
        struct timespec ts = {(time_t)(delay / 1000), (long)(fmod(delay, 1000.0) * 1e6)};
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
        r->status = AT_ERR_WRONG_RESULT;
        r->verified = 1;
        r->rel_error = 0.5;
        snprintf(r->text, sizeof r->text, "relative error 0.5 above tolerance");
        return;
    }
    if (fake_event(FK_TIME))
        fake_die();
    double t = tn_fake_time(config);
    r->verified = 1;
    r->rel_error = 1e-7;
    r->timing.median_ms = t;
    r->timing.min_ms = t * 0.995;
    r->timing.max_ms = t * 1.005;
    r->timing.runs = m->opt.max_runs < 10 ? m->opt.max_runs : 10;
    if (m->opt.abandon_ms > 0 && t > m->opt.abandon_ms) {
        r->timing.abandoned = 1;
        r->timing.runs = m->opt.min_runs;
    }
}

/* Answers a SUSTAIN in r: the time of its configuration under sustained
 * load (hot=CONFIG: 1.25x the short time, flaky=CONFIG: 0.95x and 1.30x in
 * turn, lead4=CONFIG: 0.90x but 1.30x the third time, else 1.05x), no
 * verification. */
static void fake_sustain(const tn_msg *m, const tpl_family *fam, int prepared, tn_msg *r)
{
    char config[TPL_CONFIG_LEN], sdelay[32];
    if (!prepared || !fam || m->n_cfg != fam->n_params || !m->blob || m->blob_size == 0) {
        r->status = AT_ERR_INTERNAL;
        snprintf(r->text, sizeof r->text, "fake worker: bad sustain request");
        return;
    }
    if (fake_value("sdelay", 0, sdelay, sizeof sdelay)) {
        double ms = atof(sdelay);
        struct timespec ts = {(time_t)(ms / 1000), (long)(fmod(ms, 1000.0) * 1e6)};
        nanosleep(&ts, NULL);
    }
    tpl_config_format(fam, m->cfg, config, sizeof config);
    static int flaky_calls, lead4_calls;
    double f = fake_has("hot", config) ? 1.25 : 1.05;
    if (fake_has("flaky", config))
        f = flaky_calls++ % 2 ? 1.30 : 0.95;
    if (fake_has("lead4", config))
        f = lead4_calls++ == 2 ? 1.30 : 0.90;
    if (fake_has("powered", config))
        f = m->opt.warmup * tn_fake_time(config) >= 50.0 ? 0.90 : 1.10;
    double t = tn_fake_time(config) * f;
    r->timing.median_ms = t;
    r->timing.min_ms = t * 0.995;
    r->timing.max_ms = t * 1.005;
    r->timing.runs = 10;
}

int tn_fake_worker_main(int in_fd, int out_fd)
{
    struct rlimit nocore = {0, 0};
    setrlimit(RLIMIT_CORE, &nocore);
    signal(SIGPIPE, SIG_IGN);
    /* a small pipe: a long EVAL is still being written when handoff dies */
    fcntl(in_fd, F_SETPIPE_SZ, 4096);
    int opened = 0, prepared = 0;
    for (;;) {
        tn_msg m, r;
        if (fake_recv(in_fd, &m) != AT_OK)
            return 0;
        const tpl_family *fam = m.family[0] ? tpl_find(m.family) : NULL;
        tn_msg_reply_init(&r, AT_OK);
        switch (m.type) {
        case TN_MSG_OPEN:
            fk_ordinal = m.device;           /* die@D counts its open too */
            if (fake_event(FK_OPEN))
                fake_die();
            r.type = TN_MSG_HELLO;
            int count = fake_devices(m.device, NULL, 0);
            if (fake_has("nodevice", NULL) || (count > 0 && (m.device < 0 || m.device >= count))) {
                r.status = AT_ERR_NO_DEVICE;
                snprintf(r.text, sizeof r.text, "fake worker: no device %d", m.device);
                if (count > 0)
                    snprintf(r.text + strlen(r.text), sizeof r.text - strlen(r.text),
                             " (this machine has %d)", count);
            } else {
                fake_device(&r.dev, m.device);
                r.value = count;
                opened = 1;
            }
            break;
        case TN_MSG_PREPARE:
            if (fake_event(FK_PREPARE))
                fake_die();
            prepared = opened && fam;
            if (!prepared) {
                r.status = AT_ERR_NOT_FOUND;
                snprintf(r.text, sizeof r.text, "fake worker: bad prepare");
            }
            break;
        case TN_MSG_EVAL:
            fake_eval(&m, fam, prepared, &r);
            break;
        case TN_MSG_SUSTAIN:
            fake_sustain(&m, fam, prepared, &r);
            break;
        case TN_MSG_CEILING:
            if (fake_event(FK_CEILING))
                fake_die();
            r.value = 3000.0;
            r.value2 = 0.179;
            snprintf(r.text, sizeof r.text, "fake");
            break;
        case TN_MSG_VENDOR:
            r.status = AT_ERR_UNSUPPORTED;
            snprintf(r.text, sizeof r.text, "fake worker: no vendor libraries");
            break;
        case TN_MSG_QUIT:
            return 0;
        default:
            r.status = AT_ERR_INTERNAL;
            snprintf(r.text, sizeof r.text, "unknown message type %d", m.type);
            break;
        }
        int type = m.type;
        tn_msg_free(&m);
        at_status st = type == TN_MSG_EVAL ? fake_reply(out_fd, &r) : tn_msg_send(out_fd, &r);
        if (st != AT_OK)
            return 1;
        if (type == TN_MSG_EVAL && fake_event(FK_IDLE))
            fake_die();
    }
}
