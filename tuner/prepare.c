/* prepare.c: preparing a problem for the search: the worker up with the
 * inputs prepared, the results stored before, and the device's facts. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "tune_core.h"
#include "vendor.h"

at_status tn_worker_call(tn_ctx *c, const tn_msg *m, double timeout_s, tn_msg *r, char *err,
                         size_t errlen, char *how, size_t howlen)
{
    err[0] = how[0] = '\0';
    tn_unlock(c);                    /* the other GPUs go on meanwhile */
    at_status st = tn_msg_send(c->worker.to_fd, m);
    if (st == AT_OK)
        st = tn_msg_recv(c->worker.from_fd, r, timeout_s, err, errlen);
    tn_relock(c);
    if (st == AT_OK)
        return AT_OK;
    tn_worker_down(c, how, howlen);
    return st == AT_ERR_TIMEOUT ? AT_ERR_TIMEOUT : AT_ERR_IO;
}

/* tn_worker_call for the steps that only need to know that the worker
 * failed: AT_OK, or AT_ERR_CRASHED with how it ended in how. */
static at_status worker_call(tn_ctx *c, const tn_msg *m, double timeout_s, tn_msg *r,
                             char *how, size_t howlen)
{
    char err[512];
    at_status st = tn_worker_call(c, m, timeout_s, r, err, sizeof err, how, howlen);
    if (st == AT_OK)
        return AT_OK;
    if (st == AT_ERR_TIMEOUT)
        snprintf(how, howlen, "no answer within %.0f s, killed", timeout_s);
    else if (!how[0])
        snprintf(how, howlen, "%s", err[0] ? err : "no answer");
    return AT_ERR_CRASHED;
}

/* One start: the process, OPEN and its HELLO; fills c->dev. AT_ERR_CRASHED
 * with how it ended in err when the worker died or did not answer; the
 * worker's status and message when it refused (no driver or device);
 * AT_ERR_IO when the process cannot be made. */
static at_status worker_open_once(tn_ctx *c, char *err, size_t errlen)
{
    at_status st = tn_proc_start(&c->worker, err, errlen);
    if (st != AT_OK)
        return st;
    tn_worker_pids[c->slot] = c->worker.pid;
    tn_msg m, r;
    memset(&m, 0, sizeof m);
    m.type = TN_MSG_OPEN;
    m.device = c->device;
    if (worker_call(c, &m, TN_HELLO_TIMEOUT, &r, err, errlen) != AT_OK)
        return AT_ERR_CRASHED;
    if (r.type != TN_MSG_HELLO || r.status != AT_OK) {
        snprintf(err, errlen, "%s", r.text[0] ? r.text : at_status_string(r.status));
        st = r.status != AT_OK ? (at_status)r.status : AT_ERR_INTERNAL;
        tn_msg_free(&r);
        tn_proc_stop(&c->worker);
        tn_worker_pids[c->slot] = 0;
        return st;
    }
    if (c->dev.uuid[0] && strcmp(c->dev.uuid, r.dev.uuid) != 0) {
        snprintf(err, errlen, "the respawned worker sees another device (%s, not %s)",
                 r.dev.uuid, c->dev.uuid);
        tn_msg_free(&r);
        tn_proc_stop(&c->worker);
        tn_worker_pids[c->slot] = 0;
        return AT_ERR_INTERNAL;
    }
    c->respawns += c->dev.uuid[0] != '\0';
    c->dev = r.dev;
    c->device_count = r.value > 0 && r.value < 1e6 ? (int)r.value : 0;
    if (c->dev.arch[0])
        snprintf(c->arch, sizeof c->arch, "%s", c->dev.arch);
    else
        tpl_arch_name(c->dev.cc_major, c->dev.cc_minor, c->arch, sizeof c->arch);
    tn_msg_free(&r);
    c->worker_up = 1;
    c->prepared = 0;
    return AT_OK;
}

at_status tn_worker_up(tn_ctx *c, char *err, size_t errlen)
{
    char first[512] = "";
    at_status st = worker_open_once(c, err, errlen);
    if (st != AT_ERR_CRASHED)
        return st;
    /* died while starting: once more */
    snprintf(first, sizeof first, "%.500s", err);
    c->retries++;
    st = worker_open_once(c, err, errlen);
    if (st == AT_ERR_CRASHED) {
        char second[512];
        snprintf(second, sizeof second, "%.500s", err);
        snprintf(err, errlen, "the worker (%s) died twice while starting: %s; then %s",
                 c->worker.command, first, second);
    }
    return st;
}

void tn_worker_down(tn_ctx *c, char *how, size_t howlen)
{
    tn_unlock(c);                    /* reaping may take a moment: others go on */
    tn_proc_kill(&c->worker, how, howlen);
    tn_relock(c);
    tn_worker_pids[c->slot] = 0;
    c->worker_up = 0;
    c->prepared = 0;
}

/* PREPARE of the current problem in the worker: 1 prepared, 0 refused
 * (message in err), -1 when the worker died (how in how). */
static int prepare_inputs(tn_ctx *c, char *how, size_t howlen, char *err, size_t errlen)
{
    tn_msg m, r;
    memset(&m, 0, sizeof m);
    m.type = TN_MSG_PREPARE;
    snprintf(m.family, sizeof m.family, "%s", c->fam->name);
    m.problem = c->problem;
    m.seed = c->seed;
    if (worker_call(c, &m, TN_PREPARE_TIMEOUT, &r, how, howlen) != AT_OK)
        return -1;
    c->prepared = r.status == AT_OK;
    if (!c->prepared)
        snprintf(err, errlen, "preparing the inputs failed: %.1900s", r.text);
    tn_msg_free(&r);
    return c->prepared;
}

tn_ready tn_worker_ready(tn_ctx *c, char *err, size_t errlen)
{
    char how[256] = "", first[256] = "";
    if (c->worker_up && !tn_proc_alive(&c->worker))
        tn_worker_down(c, how, sizeof how);      /* died while idle */
    for (int attempt = 0; attempt < 2 && tn_interrupts < 2; attempt++) {
        if (!c->worker_up && tn_worker_up(c, err, errlen) != AT_OK)
            return TN_NO_WORKER;
        if (c->prepared)
            return TN_READY;
        how[0] = '\0';
        int done = prepare_inputs(c, how, sizeof how, err, errlen);
        if (done >= 0)
            return done ? TN_READY : TN_NO_INPUTS;
        if (attempt == 0) {
            snprintf(first, sizeof first, "%s", how);
            c->retries++;
        }
    }
    if (tn_interrupts >= 2)
        snprintf(err, errlen, "interrupted");
    else
        snprintf(err, errlen, "preparing the inputs killed the worker twice: %s; then %s",
                 first, how);
    return TN_NO_INPUTS;
}

/* JSON string body of s, truncated to fit len. */
void tn_json_escape(const char *s, char *out, size_t len)
{
    size_t o = 0;
    for (; *s && o + 7 < len; s++) {
        unsigned char ch = (unsigned char)*s;
        if (ch == '"' || ch == '\\') {
            out[o++] = '\\';
            out[o++] = (char)ch;
        } else if (ch < 0x20) {
            o += (size_t)snprintf(out + o, len - o, "\\u%04x", ch);
        } else {
            out[o++] = (char)ch;
        }
    }
    out[o] = '\0';
}

/* The GPU's clocks and temperature from nvidia-smi as one JSON member,
 * or why they are unavailable (never fails). */
void tn_gpu_facts(const char *uuid, char *out, size_t len)
{
    char cmd[256], line[256] = "";
    snprintf(cmd, sizeof cmd,
             "command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi -i '%s' "
             "--query-gpu=clocks.sm,clocks.mem,temperature.gpu --format=csv,noheader "
             "2>/dev/null", uuid);
    FILE *f = popen(cmd, "r");
    if (f) {
        if (!fgets(line, sizeof line, f))
            line[0] = '\0';
        pclose(f);
    }
    line[strcspn(line, "\r\n")] = '\0';
    char esc[512];
    if (line[0]) {
        tn_json_escape(line, esc, sizeof esc);
        snprintf(out, len, "\"gpu_clocks_sm_mem_temp\": \"%.400s\"", esc);
    } else {
        snprintf(out, len, "\"gpu_clocks_sm_mem_temp\": \"unavailable: nvidia-smi "
                 "not found or failed\"");
    }
}

/* ---- the device's copy bandwidth (the report's ceiling) ---- */

/* "GPU 1: " in a run of several GPUs (their lines may come in any order),
 * else "". */
static const char *gpu_tag(const tn_ctx *c, char *buf, size_t len)
{
    if (c->tag[0])                   /* a run of several GPUs */
        snprintf(buf, len, "GPU %d: ", c->device);
    else
        buf[0] = '\0';
    return buf;
}

/* Stores and prints the worker's answer to CEILING. */
static void ceiling_record(tn_ctx *c, const tn_msg *r)
{
    char gpu[32];
    gpu_tag(c, gpu, sizeof gpu);
    if (r->status == AT_OK && r->value > 0) {
        db_measurement dm;
        memset(&dm, 0, sizeof dm);
        snprintf(dm.device_uuid, sizeof dm.device_uuid, "%s", c->dev.uuid);
        snprintf(dm.kernel, sizeof dm.kernel, "device");
        snprintf(dm.name, sizeof dm.name, "copy_bandwidth");
        dm.problem.n_dims = 1;
        dm.problem.dims[0] = 256ll << 20;
        dm.time_ms = r->value2;
        dm.gbs = r->value;
        dm.rel_error = -1;
        snprintf(dm.note, sizeof dm.note, "%.200s", r->text);
        db_put_measurement(c->d, &dm);
        printf("%scopy bandwidth: %.0f GB/s\n", gpu, r->value);
    } else {
        printf("%scopy bandwidth: not measured (%s)\n", gpu, r->text);
    }
    tn_side side[8];
    int n = tn_side_parse(r->blob, r->blob_size, side, 8);
    for (int i = 0; i < n; i++) {
        db_measurement dm;
        memset(&dm, 0, sizeof dm);
        snprintf(dm.device_uuid, sizeof dm.device_uuid, "%s", c->dev.uuid);
        snprintf(dm.kernel, sizeof dm.kernel, "device");
        snprintf(dm.name, sizeof dm.name, "%.31s", side[i].name);
        dm.problem.n_dims = 1;
        dm.problem.dims[0] = 1;
        dm.time_ms = side[i].time_ms;
        dm.gflops = side[i].gflops;
        dm.gbs = side[i].gbs;
        dm.rel_error = -1;
        snprintf(dm.note, sizeof dm.note, "%.255s", side[i].note);
        db_put_measurement(c->d, &dm);
        if (side[i].gflops > 0)
            printf("%s%s: %.0f GFLOP/s\n", gpu, side[i].name, side[i].gflops);
        else if (side[i].gbs > 0)
            printf("%s%s: %.0f GB/s\n", gpu, side[i].name, side[i].gbs);
        else
            printf("%s%s: %.4f ms\n", gpu, side[i].name, side[i].time_ms);
    }
}

/* Copy bandwidth measured by the worker, stored as a measurement and
 * printed. A worker that dies is started again and asked once more (then
 * the run goes on without the figure); one that cannot start makes the run
 * fatal. */
void tn_measure_ceiling(tn_ctx *c)
{
    char err[2048] = "", how[256] = "", first[256] = "", gpu[32];
    tn_msg m, r;
    memset(&m, 0, sizeof m);
    m.type = TN_MSG_CEILING;
    for (int attempt = 0; attempt < 2; attempt++) {
        if (!c->worker_up && tn_worker_up(c, err, sizeof err) != AT_OK) {
            c->fatal = 1;
            snprintf(c->fatal_msg, sizeof c->fatal_msg, "the worker cannot start: %s", err);
            return;
        }
        if (worker_call(c, &m, TN_CEILING_TIMEOUT, &r, how, sizeof how) == AT_OK) {
            ceiling_record(c, &r);
            tn_msg_free(&r);
            return;
        }
        if (attempt == 0) {
            snprintf(first, sizeof first, "%s", how);
            c->retries++;
        }
    }
    printf("%scopy bandwidth: not measured (the worker died twice: %s; then %s)\n",
           gpu_tag(c, gpu, sizeof gpu), first, how);
}

/* ---- one problem ---- */

at_status tn_group_rows(tn_ctx *c, tn_rows_fetch fetch, const void *arg, db_result **rows,
                        int *n)
{
    *rows = NULL;
    *n = 0;
    if (c->n_peers <= 1)             /* one GPU: its rows as they come */
        return fetch(c, c->dev.uuid, arg, rows, n);
    for (int g = 0; g < c->n_peers; g++) {
        db_result *part = NULL;
        int n_part = 0;
        at_status st = fetch(c, c->peer_uuid[g], arg, &part, &n_part);
        db_result *all = st == AT_OK ? realloc(*rows, (size_t)(*n + n_part + 1) * sizeof **rows)
                                     : NULL;
        if (!all) {
            free(part);
            free(*rows);
            *rows = NULL;
            *n = 0;
            return st == AT_OK ? AT_ERR_NO_MEMORY : st;
        }
        if (n_part)
            memcpy(all + *n, part, (size_t)n_part * sizeof *part);
        *rows = all;
        *n += n_part;
        free(part);
    }
    return AT_OK;
}

/* tn_group_rows's fetch: every row of the family (arg) on one device. */
static at_status family_rows(tn_ctx *c, const char *uuid, const void *arg, db_result **rows,
                             int *n)
{
    return db_results(c->d, uuid, ((const tpl_family *)arg)->name, rows, n);
}

/* Makes fam/p the current problem; the rows stored for fam on this device
 * (kept for plan), how many are p's and their best. An unreadable database
 * means nothing stored. */
void tn_prepare_problem(tn_ctx *c, tn_prob *pr, const tpl_family *fam, const tpl_problem *p)
{
    memset(pr, 0, sizeof *pr);
    pr->fam = fam;
    pr->p = p;
    tn_format_size(p, pr->size, sizeof pr->size);
    pr->hash = tpl_source_hash(fam);
    pr->t_start = tn_now();
    c->fam = fam;
    c->problem = *p;
    c->prepared = 0;
    c->skip = 0;
    c->skip_msg[0] = '\0';

    pr->n_peers = c->n_peers;
    memcpy(pr->peer_uuid, c->peer_uuid, sizeof pr->peer_uuid);
    memcpy(pr->peer_ordinal, c->peer_ordinal, sizeof pr->peer_ordinal);
    snprintf(pr->tag, sizeof pr->tag, "%s", c->tag);

    /* results stored before: counted, best known (plan tells the strategy) */
    if (tn_group_rows(c, family_rows, fam, &pr->old, &pr->n_old) != AT_OK) {
        pr->old = NULL;
        pr->n_old = 0;
        return;
    }
    for (int i = 0; i < pr->n_old; i++) {
        db_result *r = &pr->old[i];
        if (strcmp(r->source_hash, pr->hash) != 0 || !tpl_problem_equal(&r->problem, p))
            continue;
        pr->stats.previously++;
        if (strcmp(r->status, DB_OK) == 0 &&
            tn_beats(&pr->best, r->time_ms, r->time_min_ms, r->time_max_ms))
            tn_best_take(&pr->best, r, tn_metric_of(fam, p, r->time_ms));
    }
}

/* ---- the vendor libraries on the current problem ---- */

/* Stores one vendor measurement of pr's problem and prints it against the
 * best found: a failed or absent one is stored with time 0 and why. */
static void vendor_record(tn_ctx *c, const tn_prob *pr, const tn_side *v)
{
    db_measurement dm;
    memset(&dm, 0, sizeof dm);
    snprintf(dm.device_uuid, sizeof dm.device_uuid, "%s", c->dev.uuid);
    snprintf(dm.kernel, sizeof dm.kernel, "%s", pr->fam->name);
    snprintf(dm.name, sizeof dm.name, "%.31s", v->name);
    dm.problem = *pr->p;
    int ok = v->status == AT_OK && v->time_ms > 0;
    dm.time_ms = ok ? v->time_ms : 0;
    dm.gflops = ok ? v->gflops : 0;
    dm.gbs = ok ? v->gbs : 0;
    dm.rel_error = v->rel_error;
    if (ok || v->status == AT_ERR_NOT_FOUND)      /* the note names the library missing */
        snprintf(dm.note, sizeof dm.note, "%.255s", v->note);
    else
        snprintf(dm.note, sizeof dm.note, "%s: %.200s", at_status_string((at_status)v->status),
                 v->note);
    db_put_measurement(c->d, &dm);
    if (ok && pr->best.have)
        printf("  vendor %s: %.4g ms, tuned best %.3fx (%s)\n", v->name, v->time_ms,
               v->time_ms / pr->best.median, v->note);
    else if (ok)
        printf("  vendor %s: %.4g ms (%s)\n", v->name, v->time_ms, v->note);
    else
        printf("  vendor %s: not measured (%s)\n", v->name, dm.note);
}

void tn_measure_vendor(tn_ctx *c, tn_prob *pr)
{
    char err[2048] = "", how[256] = "";
    ms_vendor_call calls[MS_MAX_VENDOR];
    if (c->fatal || tn_interrupts || c->skip)
        return;
    if (ms_vendor_calls(pr->fam, pr->p, calls, MS_MAX_VENDOR, err, sizeof err) == 0) {
        printf("  vendor: %s\n", err);
        return;
    }
    if (tn_worker_ready(c, err, sizeof err) != TN_READY) {
        printf("  vendor: not measured (%s)\n", err);
        return;
    }
    tn_msg m, r;
    memset(&m, 0, sizeof m);
    m.type = TN_MSG_VENDOR;
    snprintf(m.family, sizeof m.family, "%s", pr->fam->name);
    m.problem = *pr->p;
    ms_default_options(&m.opt);
    double t0 = tn_now();
    if (worker_call(c, &m, TN_VENDOR_TIMEOUT, &r, how, sizeof how) != AT_OK) {
        printf("  vendor: not measured (the worker died: %s)\n", how);
        return;
    }
    tn_side v[MS_MAX_VENDOR];
    int n = tn_side_parse(r.blob, r.blob_size, v, MS_MAX_VENDOR);
    if (n == 0)
        printf("  vendor: not measured (%s)\n", r.text[0] ? r.text : at_status_string(r.status));
    for (int i = 0; i < n; i++)
        vendor_record(c, pr, &v[i]);
    printf("  vendor measurements: %.2f s\n", tn_now() - t0);
    if (r.fatal)
        tn_worker_down(c, how, sizeof how);
    tn_msg_free(&r);
    fflush(stdout);
}
