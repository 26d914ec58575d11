/* export.c: `autotune export`: the results of a database (filtered by
 * device or model and kernel) as one JSON document, cubins optional.
 *
 * The format (version 1), read back by db/import.c:
 *   {"format": "autotune-results", "version": 1, "exported": TIME,
 *    "nvrtc_version": "13.0",              the exporting toolkit
 *    "devices": [DEVICE...], "results": [RESULT...], "cubins": [CUBIN...]}
 *   DEVICE: {"uuid", "model", "arch", "cc_major", "cc_minor", "ordinal",
 *            "sm_count", "memory_bytes", "l2_bytes", "smem_per_block_optin",
 *            "smem_per_sm", "regs_per_block", "regs_per_sm",
 *            "max_threads_per_block", "max_threads_per_sm", "clock_khz",
 *            "mem_clock_khz", "mem_bus_bits", "driver_version",
 *            "nvrtc_version", "first_seen", "last_seen"}
 *   RESULT: {"kernel", "source_hash", "problem" (text form, e.g.
 *            "4096x4096x4096:bf16"), "device": {"uuid", "model", "arch",
 *            "driver_version", "nvrtc_version"}, "config": {NAME: value...},
 *            "status", "time_ms", "time_min_ms", "time_max_ms", "runs",
 *            "gflops", "gbs" (the metric: one of them is 0), "rel_error"
 *            (-1: not verified), "compile_ms", "deterministic" (bool),
 *            "error", "created", "cubin" (the key of its cubin or ""),
 *            and, only for a row the tuner re-timed under sustained load,
 *            "sustained_ms" and "rank_ms" (the time it ranks by, db_rank_ms;
 *            absent: never re-timed, so a file without re-timed rows reads
 *            in older builds too)}
 *   CUBIN:  {"key", "kernel", "source_hash", "config" (text), "arch",
 *            "nvrtc_version", "options", "size", "created", "data" (base64)}
 * Every other member is required; times are UTC ISO 8601. */
#include <stdlib.h>
#include <string.h>
#include "db_internal.h"
#include "json.h"

/* Writes "name": and the string value, with a leading comma unless first. */
static void put_str(FILE *f, const char *name, const char *value, int first)
{
    fprintf(f, "%s\"%s\": ", first ? "" : ", ", name);
    db_json_put_string(f, value);
}

static void put_num(FILE *f, const char *name, double value)
{
    fprintf(f, ", \"%s\": ", name);
    db_json_put_number(f, value);
}

/* The configuration text "A=1,B=2" as an object {"A": 1, "B": 2}. */
static void put_config(FILE *f, const char *config)
{
    fputc('{', f);
    char buf[TPL_CONFIG_LEN];
    db_copy(buf, sizeof buf, config);
    int first = 1;
    for (char *save = NULL, *tok = strtok_r(buf, ",", &save); tok;
         tok = strtok_r(NULL, ",", &save)) {
        char *eq = strchr(tok, '=');
        if (!eq)
            continue;
        *eq = '\0';
        fprintf(f, "%s", first ? "" : ", ");
        db_json_put_string(f, tok);
        char *end = NULL;
        long long v = strtoll(eq + 1, &end, 10);
        if (eq[1] && end && !*end) {
            fprintf(f, ": %lld", v);
        } else {
            fprintf(f, ": ");       /* not a number: import names it */
            db_json_put_string(f, eq + 1);
        }
        first = 0;
    }
    fputc('}', f);
}

static void put_device(FILE *f, const db_device *dv, const char *first, const char *last)
{
    const at_device_info *i = &dv->info;
    fprintf(f, "    {");
    put_str(f, "uuid", i->uuid, 1);
    put_str(f, "model", i->name, 0);
    put_str(f, "arch", i->arch, 0);
    const struct { const char *name; long long v; } n[] = {
        {"cc_major", i->cc_major}, {"cc_minor", i->cc_minor}, {"ordinal", i->ordinal},
        {"sm_count", i->sm_count}, {"memory_bytes", i->memory_bytes},
        {"l2_bytes", i->l2_bytes}, {"smem_per_block_optin", i->smem_per_block_optin},
        {"smem_per_sm", i->smem_per_sm}, {"regs_per_block", i->regs_per_block},
        {"regs_per_sm", i->regs_per_sm}, {"max_threads_per_block", i->max_threads_per_block},
        {"max_threads_per_sm", i->max_threads_per_sm}, {"clock_khz", i->clock_khz},
        {"mem_clock_khz", i->mem_clock_khz}, {"mem_bus_bits", i->mem_bus_bits},
        {"driver_version", i->driver_version},
    };
    for (size_t k = 0; k < sizeof n / sizeof n[0]; k++)
        fprintf(f, ", \"%s\": %lld", n[k].name, n[k].v);
    put_str(f, "nvrtc_version", dv->nvrtc_version, 0);
    put_str(f, "first_seen", first, 0);
    put_str(f, "last_seen", last, 0);
    fprintf(f, "}");
}

static void put_result(FILE *f, const db_result *r, const db_device *dv, int shipped)
{
    char problem[128];
    tpl_problem_format(&r->problem, problem, sizeof problem);
    fprintf(f, "    {");
    put_str(f, "kernel", r->kernel, 1);
    put_str(f, "source_hash", r->source_hash, 0);
    put_str(f, "problem", problem, 0);
    fprintf(f, ", \"device\": {");
    put_str(f, "uuid", r->device_uuid, 1);
    put_str(f, "model", dv->info.name, 0);
    put_str(f, "arch", dv->info.arch, 0);
    fprintf(f, ", \"driver_version\": %d", dv->info.driver_version);
    put_str(f, "nvrtc_version", dv->nvrtc_version, 0);
    fprintf(f, "}, \"config\": ");
    put_config(f, r->config);
    put_str(f, "status", r->status, 0);
    put_num(f, "time_ms", r->time_ms);
    put_num(f, "time_min_ms", r->time_min_ms);
    put_num(f, "time_max_ms", r->time_max_ms);
    fprintf(f, ", \"runs\": %d", r->runs);
    put_num(f, "gflops", r->gflops);
    put_num(f, "gbs", r->gbs);
    put_num(f, "rel_error", r->rel_error);
    put_num(f, "compile_ms", r->compile_ms);
    fprintf(f, ", \"deterministic\": %s", r->deterministic ? "true" : "false");
    put_str(f, "error", r->error, 0);
    put_str(f, "created", r->created, 0);
    put_str(f, "cubin", shipped ? "" : r->binary_key, 0);
    if (r->rank_ms > 0) {            /* only re-timed rows: older importers read the rest */
        put_num(f, "sustained_ms", r->sustained_ms);
        put_num(f, "rank_ms", r->rank_ms);
    }
    fprintf(f, "}");
}

static int key_cmp(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* Writes the cubins of the keys (sorted, duplicates skipped); counts them. */
static at_status put_cubins(db *d, FILE *f, const char **keys, int n, long long *n_cubins)
{
    sqlite3_stmt *st;
    at_status s = db_prepare(d, &st, "SELECT key, kernel, source_hash, config, arch, "
                                     "nvrtc_version, options, cubin, size, created "
                                     "FROM binary WHERE key = ?1");
    int first = 1;
    for (int i = 0; s == AT_OK && i < n; i++) {
        if (i > 0 && strcmp(keys[i], keys[i - 1]) == 0)
            continue;
        sqlite3_reset(st);
        db_bind_text(st, 1, keys[i]);
        int rc = sqlite3_step(st);
        if (rc == SQLITE_DONE)
            continue;               /* never stored, or reclaimed by gc */
        if (rc != SQLITE_ROW) {
            s = db_sqlfail(d, rc, "reading a cubin");
            break;
        }
        static const char *const names[] = {"key", "kernel", "source_hash", "config", "arch",
                                            "nvrtc_version", "options"};
        fprintf(f, "%s    {", first ? "\n" : ",\n");
        for (int k = 0; k < 7; k++)
            put_str(f, names[k], (const char *)sqlite3_column_text(st, k), k == 0);
        fprintf(f, ", \"size\": %lld", (long long)sqlite3_column_bytes(st, 7));
        put_str(f, "created", (const char *)sqlite3_column_text(st, 9), 0);
        fprintf(f, ", \"data\": ");
        db_json_put_base64(f, sqlite3_column_blob(st, 7), (size_t)sqlite3_column_bytes(st, 7));
        fprintf(f, "}");
        first = 0;
        (*n_cubins)++;
    }
    sqlite3_finalize(st);
    fprintf(f, "%s]\n}\n", first ? "" : "\n  ");
    return s;
}

/* Shipped order: device, kernel, problem, then rank (db_rank_ms), id. */
static int shipped_cmp(const void *a, const void *b)
{
    const db_result *x = a, *y = b;
    int c = strcmp(x->device_uuid, y->device_uuid);
    if (!c)
        c = strcmp(x->kernel, y->kernel);
    if (!c) {
        char px[128], py[128];
        tpl_problem_format(&x->problem, px, sizeof px);
        tpl_problem_format(&y->problem, py, sizeof py);
        for (int i = 0; !c && i < 3; i++)
            c = (x->problem.dims[i] > y->problem.dims[i]) - (x->problem.dims[i] < y->problem.dims[i]);
        if (!c)
            c = strcmp(px, py);
    }
    if (!c)
        c = (db_rank_ms(x) > db_rank_ms(y)) - (db_rank_ms(x) < db_rank_ms(y));
    return c ? c : (x->id > y->id) - (x->id < y->id);
}

/* Keeps the per best ok, verified rows of the current source per device,
 * kernel and problem, in shipped order; the new count. */
static int keep_shipped(db_result *res, int n, int per)
{
    int kept = 0;
    for (int i = 0; i < n; i++) {
        const tpl_family *fam = tpl_find(res[i].kernel);
        if (fam && strcmp(res[i].status, DB_OK) == 0 && res[i].rel_error >= 0 &&
            strcmp(res[i].source_hash, tpl_source_hash(fam)) == 0)
            res[kept++] = res[i];
    }
    qsort(res, (size_t)kept, sizeof *res, shipped_cmp);
    int out = 0, run = 0;
    for (int i = 0; i < kept; i++) {
        int same = i > 0 && strcmp(res[i].device_uuid, res[i - 1].device_uuid) == 0 &&
                   strcmp(res[i].kernel, res[i - 1].kernel) == 0 &&
                   tpl_problem_equal(&res[i].problem, &res[i - 1].problem);
        run = same ? run + 1 : 0;
        if (run < per)
            res[out++] = res[i];
    }
    return out;
}

/* first_seen and last_seen of a device ("" if unreadable). */
static void seen_times(db *d, const char *uuid, char *first, char *last)
{
    first[0] = last[0] = '\0';
    sqlite3_stmt *st;
    if (db_prepare(d, &st, "SELECT first_seen, last_seen FROM device WHERE uuid = ?1") != AT_OK)
        return;
    db_bind_text(st, 1, uuid);
    if (sqlite3_step(st) == SQLITE_ROW) {
        db_col_text(st, 0, first, 32);
        db_col_text(st, 1, last, 32);
    }
    sqlite3_finalize(st);
}

/* The devices of the filter that hold at least one selected result; in
 * *keep[i] whether device i is written. */
static void pick_devices(const db_export_filter *flt, const db_device *devs, int n_devs,
                         const db_result *res, int n_res, int *keep)
{
    for (int i = 0; i < n_devs; i++) {
        keep[i] = 0;
        if (flt && flt->device_uuid && strcmp(flt->device_uuid, devs[i].info.uuid) != 0)
            continue;
        if (flt && flt->model && strcmp(flt->model, devs[i].info.name) != 0)
            continue;
        for (int r = 0; r < n_res && !keep[i]; r++)
            keep[i] = strcmp(res[r].device_uuid, devs[i].info.uuid) == 0;
    }
}

at_status db_export(db *d, const db_export_filter *flt, FILE *f, long long *n_results,
                    long long *n_cubins)
{
    if (!d || !f)
        return d ? db_fail(d, AT_ERR_INVALID_ARG, "db_export: NULL file") : AT_ERR_INVALID_ARG;
    *n_results = *n_cubins = 0;
    db_result *res = NULL;
    db_device *devs = NULL;
    int n_res = 0, n_devs = 0;
    at_status s = db_results(d, flt ? flt->device_uuid : NULL, flt ? flt->kernel : NULL,
                             &res, &n_res);
    if (s == AT_OK)
        s = db_list_devices(d, &devs, &n_devs);
    int *keep = s == AT_OK ? calloc((size_t)n_devs + 1, sizeof *keep) : NULL;
    const char **keys = s == AT_OK ? calloc((size_t)n_res + 1, sizeof *keys) : NULL;
    if (s == AT_OK && (!keep || !keys))
        s = db_fail(d, AT_ERR_NO_MEMORY, "out of memory exporting");
    if (s != AT_OK)
        goto out;
    int shipped = flt && flt->best_per_problem > 0;
    if (shipped)
        n_res = keep_shipped(res, n_res, flt->best_per_problem);
    pick_devices(flt, devs, n_devs, res, n_res, keep);
    char now[32];
    db_now(now, sizeof now);
    fprintf(f, "{\n  \"format\": \"autotune-results\",\n  \"version\": 1,\n  \"exported\": ");
    db_json_put_string(f, now);
    fprintf(f, ",\n  \"nvrtc_version\": ");
    db_json_put_string(f, tpl_nvrtc_version());
    fprintf(f, ",\n  \"devices\": [");
    int first = 1;
    for (int i = 0; i < n_devs; i++) {
        if (!keep[i])
            continue;
        char fs[32], ls[32];
        seen_times(d, devs[i].info.uuid, fs, ls);
        fprintf(f, "%s", first ? "\n" : ",\n");
        put_device(f, &devs[i], fs, ls);
        first = 0;
    }
    fprintf(f, "%s],\n  \"results\": [", first ? "" : "\n  ");
    first = 1;
    int n_keys = 0;
    for (int r = 0; r < n_res; r++) {
        int dv = -1;
        for (int i = 0; i < n_devs && dv < 0; i++)
            if (keep[i] && strcmp(devs[i].info.uuid, res[r].device_uuid) == 0)
                dv = i;
        if (dv < 0)
            continue;
        fprintf(f, "%s", first ? "\n" : ",\n");
        put_result(f, &res[r], &devs[dv], shipped);
        first = 0;
        (*n_results)++;
        if (flt && flt->with_cubins && !shipped && res[r].binary_key[0])
            keys[n_keys++] = res[r].binary_key;
    }
    fprintf(f, "%s],\n  \"cubins\": [", first ? "" : "\n  ");
    qsort(keys, (size_t)n_keys, sizeof *keys, key_cmp);
    s = put_cubins(d, f, keys, n_keys, n_cubins);
    if (s == AT_OK && (fflush(f) != 0 || ferror(f)))
        s = db_fail(d, AT_ERR_IO, "writing the export failed");
out:
    free(keys);
    free(keep);
    free(res);
    free(devs);
    return s;
}
