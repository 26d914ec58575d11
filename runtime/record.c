/* record.c: the runtime's record of served problems: per-plan counts
 * turned into recorded rows (estimated time) and written in one go. */
#include <stdlib.h>
#include <string.h>
#include "record.h"

void rec_peaks(const tpl_problem *p, const at_device_info *dev, double *flops_s,
               double *bytes_s)
{
    /* flops per SM per clock of the unit that computes the kind (sm_80) */
    double per_clock = 128.0;                   /* FP32: 64 FMA */
    if (tpl_math_fp8(p->math))
        per_clock = 4096.0;                     /* FP8 tensor cores (sm_90): twice 16-bit */
    else if (p->dtype == AT_R_64F)
        per_clock = 64.0;                       /* FP64 tensor cores / FMA */
    else if (p->dtype == AT_R_16F || p->dtype == AT_R_16BF)
        per_clock = 2048.0;                     /* FP16/BF16 tensor cores */
    else if (p->math == AT_MATH_TF32)
        per_clock = 1024.0;                     /* TF32 tensor cores */
    if (dev->cc_major >= 9)
        per_clock *= 2.0;
    double clock = dev->clock_khz > 0 ? dev->clock_khz * 1e3 : 1.5e9;
    int sms = dev->sm_count > 0 ? dev->sm_count : 100;
    *flops_s = per_clock * sms * clock;
    double mem_clock = dev->mem_clock_khz > 0 ? dev->mem_clock_khz * 1e3 : 1.5e9;
    int bus = dev->mem_bus_bits > 0 ? dev->mem_bus_bits : 4096;
    *bytes_s = mem_clock * 2.0 * bus / 8.0;
}

double rec_estimate_ms(const tpl_family *fam, const tpl_problem *p, const at_device_info *dev)
{
    double flops = 0, bytes = 0, flops_s, bytes_s;
    if (fam && fam->work)
        fam->work(p, &flops, &bytes);
    rec_peaks(p, dev, &flops_s, &bytes_s);
    double compute = flops > 0 ? flops / flops_s : 0, memory = bytes > 0 ? bytes / bytes_s : 0;
    return (compute > memory ? compute : memory) * 1e3 + REC_LAUNCH_MS;
}

/* t as UTC ISO 8601 with milliseconds, as the database writes times. */
static void rec_time_text(time_t t, char *out, size_t len)
{
    struct tm tm;
    if (t <= 0 || !gmtime_r(&t, &tm) || strftime(out, len, "%Y-%m-%dT%H:%M:%S.000Z", &tm) == 0)
        out[0] = '\0';               /* the database writes "now" */
}

void rec_add(rec_batch *b, const tpl_family *fam, const tpl_problem *p, at_lookup_level level,
             long long calls, time_t first_seen, const at_device_info *dev)
{
    if (!b || !fam || !p || level <= AT_LOOKUP_EXACT || calls <= 0)
        return;
    if (b->n == b->cap) {
        int cap = b->cap ? b->cap * 2 : 16;
        db_recorded *rows = realloc(b->rows, (size_t)cap * sizeof *rows);
        if (!rows) {
            b->dropped++;
            return;
        }
        b->rows = rows;
        b->cap = cap;
    }
    db_recorded *r = &b->rows[b->n++];
    memset(r, 0, sizeof *r);
    snprintf(r->kernel, sizeof r->kernel, "%s", fam->name);
    r->problem = *p;
    r->level = (int)level;
    r->calls = calls;
    r->time_ms = (double)calls * rec_estimate_ms(fam, p, dev);
    rec_time_text(first_seen, r->first_seen, sizeof r->first_seen);
}

at_status rec_write(rec_batch *b, db *d, const at_device_info *dev)
{
    at_status s = AT_OK;
    if (b && b->n > 0 && d && !db_is_readonly(d))
        s = db_record_served(d, dev, tpl_nvrtc_version(), b->rows, b->n, DB_RECORDED_MAX);
    if (b) {
        free(b->rows);
        memset(b, 0, sizeof *b);
    }
    return s;
}
