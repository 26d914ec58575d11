/* import.c: `autotune import`: an export document (db/export.c) read and
 * checked whole before anything is stored, then stored in one transaction.
 * A cubin of the file is code from outside: it is stored only where this
 * build, compiling the same configuration for the same arch, produced the
 * same bytes (db_import_add_cubin); every other one is dropped. */
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include "db_internal.h"
#include "json.h"

typedef struct im_device {
    db_device dev;
    char first[32], last[32];
} im_device;

typedef struct im_result {
    db_result r;
    const tpl_family *fam;
    int cfg[TPL_MAX_PARAMS];
    int dev;                        /* index into devs */
    int current;                    /* 1 if of this build's source of the kernel */
} im_result;

typedef struct im_cubin {
    char key[40], kernel[32], source_hash[20], config[TPL_CONFIG_LEN], arch[16];
    char nvrtc[16], created[32];
    char *options;
    void *data;
    size_t size;
    int fits;                       /* 1: its metadata is this build's (checked further) */
    int verified;                   /* 1: this build compiled the same bytes: stored */
    int differs;                    /* 1: this build compiled other bytes: dropped */
    int compiled;                   /* 1: compiled here (db_import_add_cubin): stored */
} im_cubin;

struct db_import {
    im_device *devs;
    im_result *res;
    im_cubin *cub;
    int n_devs, n_res, n_cub, cap_cub;
    long long in_file, unfit;
};

/* ---- checking members ---- */

typedef struct ictx {
    char *err;
    size_t errlen;
} ictx;

/* "PATH: why" into err; returns 0. */
static int bad(ictx *c, const char *path, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int bad(ictx *c, const char *path, const char *fmt, ...)
{
    char why[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(why, sizeof why, fmt, ap);
    va_end(ap);
    if (c->err && c->errlen)
        snprintf(c->err, c->errlen, "%s: %s", path, why);
    return 0;
}

/* 1 if obj is an object with exactly the members names[0..n). */
/* The members of obj are names[0 .. n_known), the first n of them
 * required. */
static int members_opt(ictx *c, const db_json *obj, const char *path, const char *const *names,
                       int n, int n_known)
{
    if (!obj || obj->type != DB_JSON_OBJECT)
        return bad(c, path, "expected an object");
    for (int i = 0; i < obj->n_items; i++) {
        int known = 0;
        for (int k = 0; k < n_known && !known; k++)
            known = strcmp(obj->items[i].key, names[k]) == 0;
        if (!known)
            return bad(c, path, "unknown member \"%.100s\"", obj->items[i].key);
    }
    for (int k = 0; k < n; k++)
        if (!db_json_get(obj, names[k]))
            return bad(c, path, "member \"%s\" is missing", names[k]);
    return 1;
}

/* Every member of obj is one of names[0 .. n), each required. */
static int members(ictx *c, const db_json *obj, const char *path, const char *const *names, int n)
{
    return members_opt(c, obj, path, names, n, n);
}

static int get_str(ictx *c, const db_json *obj, const char *path, const char *name, char *dst,
                   size_t len)
{
    const db_json *v = db_json_get(obj, name);
    if (!v || v->type != DB_JSON_STRING)
        return bad(c, path, "%s: expected a string", name);
    if (v->length >= len)
        return bad(c, path, "%s: longer than %zu bytes", name, len - 1);
    memcpy(dst, v->string, v->length + 1);
    return 1;
}

static int get_num(ictx *c, const db_json *obj, const char *path, const char *name, double lo,
                   double *out)
{
    const db_json *v = db_json_get(obj, name);
    if (!v || v->type != DB_JSON_NUMBER)
        return bad(c, path, "%s: expected a number", name);
    if (!(v->number >= lo))
        return bad(c, path, "%s: %g is below %g", name, v->number, lo);
    *out = v->number;
    return 1;
}

static int get_int(ictx *c, const db_json *obj, const char *path, const char *name,
                   long long lo, long long hi, long long *out)
{
    double x = 0;
    if (!get_num(c, obj, path, name, (double)lo, &x))
        return 0;
    if (x != floor(x) || x > (double)hi)
        return bad(c, path, "%s: expected an integer from %lld to %lld", name, lo, hi);
    *out = (long long)x;
    return 1;
}

/* ---- devices ---- */

static int read_device(ictx *c, const db_json *v, const char *path, im_device *d)
{
    static const char *const names[] = {
        "uuid", "model", "arch", "cc_major", "cc_minor", "ordinal", "sm_count",
        "memory_bytes", "l2_bytes", "smem_per_block_optin", "smem_per_sm", "regs_per_block",
        "regs_per_sm", "max_threads_per_block", "max_threads_per_sm", "clock_khz",
        "mem_clock_khz", "mem_bus_bits", "driver_version", "nvrtc_version", "first_seen",
        "last_seen",
    };
    at_device_info *i = &d->dev.info;
    if (!members(c, v, path, names, 22) || !get_str(c, v, path, "uuid", i->uuid, sizeof i->uuid) ||
        !get_str(c, v, path, "model", i->name, sizeof i->name) ||
        !get_str(c, v, path, "arch", i->arch, sizeof i->arch) ||
        !get_str(c, v, path, "nvrtc_version", d->dev.nvrtc_version, sizeof d->dev.nvrtc_version) ||
        !get_str(c, v, path, "first_seen", d->first, sizeof d->first) ||
        !get_str(c, v, path, "last_seen", d->last, sizeof d->last))
        return 0;
    int *fields[] = {
        &i->cc_major, &i->cc_minor, &i->ordinal, &i->sm_count, NULL, &i->l2_bytes,
        &i->smem_per_block_optin, &i->smem_per_sm, &i->regs_per_block, &i->regs_per_sm,
        &i->max_threads_per_block, &i->max_threads_per_sm, &i->clock_khz, &i->mem_clock_khz,
        &i->mem_bus_bits, &i->driver_version,
    };
    for (int k = 0; k < 16; k++) {
        long long x = 0;
        if (!get_int(c, v, path, names[3 + k], 0, k == 4 ? (1ll << 53) : 0x7fffffff, &x))
            return 0;
        if (fields[k])
            *fields[k] = (int)x;
        else
            i->memory_bytes = x;
    }
    char arch[16];
    tpl_arch_name(i->cc_major, i->cc_minor, arch, sizeof arch);
    if (!i->uuid[0] || strcmp(arch, i->arch) != 0)
        return bad(c, path, "no uuid, or arch \"%s\" is not compute capability %d.%d", i->arch,
                   i->cc_major, i->cc_minor);
    return 1;
}

/* ---- results ---- */

static const char *const im_status[] = {
    DB_OK, DB_COMPILE_ERROR, DB_WRONG_RESULT, DB_LAUNCH_ERROR, DB_CRASHED, DB_TIMEOUT,
    DB_ABANDONED, DB_INVALID,
};

/* The config object as this build's canonical text and values. */
static int read_config(ictx *c, const db_json *v, const char *path, im_result *ir)
{
    if (!v || v->type != DB_JSON_OBJECT)
        return bad(c, path, "config: expected an object of parameter values");
    char text[TPL_CONFIG_LEN * 2] = "", err[256];
    size_t used = 0;
    for (int k = 0; k < v->n_items; k++) {
        const db_json *p = &v->items[k];
        if (p->type != DB_JSON_NUMBER || p->number != floor(p->number) ||
            fabs(p->number) > 2147483647.0)
            return bad(c, path, "config.%.100s: expected an integer", p->key);
        if (strchr(p->key, ',') || strchr(p->key, '='))
            return bad(c, path, "config: bad parameter name \"%.100s\"", p->key);
        int w = snprintf(text + used, sizeof text - used, "%s%s=%lld", k ? "," : "", p->key,
                         (long long)p->number);
        if (w < 0 || (size_t)w >= sizeof text - used)
            return bad(c, path, "config: too long");
        used += (size_t)w;
    }
    if (tpl_config_parse(ir->fam, text, ir->cfg, err, sizeof err) != AT_OK)
        return bad(c, path, "config: %s", err);
    tpl_config_format(ir->fam, ir->cfg, ir->r.config, sizeof ir->r.config);
    return 1;
}

/* The result's device object: a device of the document, same model and arch. */
static int read_result_device(ictx *c, const db_json *v, const char *path,
                              const db_import *im, im_result *ir)
{
    static const char *const names[] = {"uuid", "model", "arch", "driver_version",
                                        "nvrtc_version"};
    char uuid[48], model[256], arch[16], nvrtc[16];
    long long driver;
    if (!members(c, v, path, names, 5) || !get_str(c, v, path, "uuid", uuid, sizeof uuid) ||
        !get_str(c, v, path, "model", model, sizeof model) ||
        !get_str(c, v, path, "arch", arch, sizeof arch) ||
        !get_str(c, v, path, "nvrtc_version", nvrtc, sizeof nvrtc) ||
        !get_int(c, v, path, "driver_version", 0, 0x7fffffff, &driver))
        return 0;
    for (int i = 0; i < im->n_devs; i++) {
        const at_device_info *d = &im->devs[i].dev.info;
        if (strcmp(d->uuid, uuid) != 0)
            continue;
        if (strcmp(d->name, model) != 0 || strcmp(d->arch, arch) != 0)
            return bad(c, path, "model or arch differs from device %s in devices", uuid);
        ir->dev = i;
        db_copy(ir->r.device_uuid, sizeof ir->r.device_uuid, uuid);
        return 1;
    }
    return bad(c, path, "uuid %s is not among the devices", uuid);
}

static int read_result(ictx *c, const db_json *v, const char *path, const db_import *im,
                       im_result *ir)
{
    static const char *const names[] = {
        "kernel", "source_hash", "problem", "device", "config", "status", "time_ms",
        "time_min_ms", "time_max_ms", "runs", "gflops", "gbs", "rel_error", "compile_ms",
        "deterministic", "error", "created", "cubin", "sustained_ms", "rank_ms",
    };
    db_result *r = &ir->r;
    char problem[128], key[40], err[256], sub[96];
    long long runs = 0;
    if (!members_opt(c, v, path, names, 18, 20) ||
        !get_str(c, v, path, "kernel", r->kernel, sizeof r->kernel) ||
        !get_str(c, v, path, "source_hash", r->source_hash, sizeof r->source_hash) ||
        !get_str(c, v, path, "problem", problem, sizeof problem) ||
        !get_str(c, v, path, "status", r->status, sizeof r->status) ||
        !get_str(c, v, path, "error", r->error, sizeof r->error) ||
        !get_str(c, v, path, "created", r->created, sizeof r->created) ||
        !get_str(c, v, path, "cubin", key, sizeof key) ||
        !get_num(c, v, path, "time_ms", 0, &r->time_ms) ||
        !get_num(c, v, path, "time_min_ms", 0, &r->time_min_ms) ||
        !get_num(c, v, path, "time_max_ms", 0, &r->time_max_ms) ||
        !get_int(c, v, path, "runs", 0, 0x7fffffff, &runs) ||
        !get_num(c, v, path, "gflops", 0, &r->gflops) || !get_num(c, v, path, "gbs", 0, &r->gbs) ||
        !get_num(c, v, path, "rel_error", -1, &r->rel_error) ||
        !get_num(c, v, path, "compile_ms", 0, &r->compile_ms) ||
        (db_json_get(v, "sustained_ms") &&
         !get_num(c, v, path, "sustained_ms", 0, &r->sustained_ms)) ||
        (db_json_get(v, "rank_ms") && !get_num(c, v, path, "rank_ms", 0, &r->rank_ms)))
        return 0;
    if ((r->sustained_ms > 0) != (r->rank_ms > 0))
        return bad(c, path, "sustained_ms and rank_ms: both or neither");
    r->runs = (int)runs;
    const db_json *det = db_json_get(v, "deterministic");
    if (det->type != DB_JSON_TRUE && det->type != DB_JSON_FALSE)
        return bad(c, path, "deterministic: expected true or false");
    r->deterministic = det->type == DB_JSON_TRUE;
    ir->fam = tpl_find(r->kernel);
    if (!ir->fam)
        return bad(c, path, "unknown kernel \"%s\" (not built into this autotune)", r->kernel);
    if (tpl_problem_parse(problem, &r->problem, err, sizeof err) != AT_OK)
        return bad(c, path, "problem \"%s\": %s", problem, err);
    if (r->problem.n_dims != ir->fam->n_dims)
        return bad(c, path, "problem \"%s\" does not have the %d sizes of %s", problem,
                   ir->fam->n_dims, r->kernel);
    int known = 0;
    for (size_t k = 0; k < sizeof im_status / sizeof im_status[0]; k++)
        known |= strcmp(im_status[k], r->status) == 0;
    if (!known)
        return bad(c, path, "unknown status \"%s\"", r->status);
    if (!r->created[0])
        return bad(c, path, "created is empty");
    snprintf(sub, sizeof sub, "%s.device", path);
    if (!read_result_device(c, db_json_get(v, "device"), sub, im, ir) ||
        !read_config(c, db_json_get(v, "config"), path, ir))
        return 0;
    ir->current = strcmp(r->source_hash, tpl_source_hash(ir->fam)) == 0;
    r->binary_key[0] = '\0';
    if (ir->current)
        tpl_binary_key(ir->fam, ir->cfg, im->devs[ir->dev].dev.info.arch, r->binary_key,
                       sizeof r->binary_key);
    return 1;
}

/* ---- cubins ---- */

/* 1 if the cubin's metadata is what this build would compile under its
 * key: known kernel, same source and NVRTC, the key recomputed from its
 * configuration and arch, and an ELF image of the recorded size. Metadata
 * can be written by anyone: a fitting cubin is still only a candidate,
 * stored once this build's compile gives the same bytes. */
static int cubin_fits(const im_cubin *cb)
{
    const tpl_family *fam = tpl_find(cb->kernel);
    int cfg[TPL_MAX_PARAMS];
    char err[256], key[128];
    if (!fam || strcmp(cb->source_hash, tpl_source_hash(fam)) != 0 ||
        strcmp(cb->nvrtc, tpl_nvrtc_version()) != 0 ||
        tpl_config_parse(fam, cb->config, cfg, err, sizeof err) != AT_OK ||
        !tpl_target_arch(fam, cfg, cb->arch))
        return 0;
    tpl_binary_key(fam, cfg, cb->arch, key, sizeof key);
    return strcmp(key, cb->key) == 0 && cb->size >= 4 && memcmp(cb->data, "\177ELF", 4) == 0;
}

static int read_cubin(ictx *c, const db_json *v, const char *path, im_cubin *cb)
{
    static const char *const names[] = {"key", "kernel", "source_hash", "config", "arch",
                                        "nvrtc_version", "options", "size", "created", "data"};
    long long size = 0;
    if (!members(c, v, path, names, 10) || !get_str(c, v, path, "key", cb->key, sizeof cb->key) ||
        !get_str(c, v, path, "kernel", cb->kernel, sizeof cb->kernel) ||
        !get_str(c, v, path, "source_hash", cb->source_hash, sizeof cb->source_hash) ||
        !get_str(c, v, path, "config", cb->config, sizeof cb->config) ||
        !get_str(c, v, path, "arch", cb->arch, sizeof cb->arch) ||
        !get_str(c, v, path, "nvrtc_version", cb->nvrtc, sizeof cb->nvrtc) ||
        !get_str(c, v, path, "created", cb->created, sizeof cb->created) ||
        !get_int(c, v, path, "size", 1, 0x7fffffff, &size))
        return 0;
    const db_json *opt = db_json_get(v, "options"), *data = db_json_get(v, "data");
    if (opt->type != DB_JSON_STRING || data->type != DB_JSON_STRING)
        return bad(c, path, "options and data: expected strings");
    cb->options = strdup(opt->string);
    if (!cb->options)
        return bad(c, path, "out of memory");
    if (db_base64_decode(data->string, data->length, &cb->data, &cb->size) != AT_OK)
        return bad(c, path, "data: not valid base64");
    if ((long long)cb->size != size)
        return bad(c, path, "data holds %zu bytes, size says %lld", cb->size, size);
    cb->fits = cubin_fits(cb);
    return 1;
}

/* ---- the document ---- */

/* The array member name of the document, NULL after a message if absent. */
static const db_json *array_of(ictx *c, const db_json *doc, const char *name)
{
    const db_json *a = db_json_get(doc, name);
    if (!a || a->type != DB_JSON_ARRAY) {
        bad(c, name, "expected an array");
        return NULL;
    }
    return a;
}

static int read_document(ictx *c, const db_json *doc, db_import *im)
{
    static const char *const names[] = {"format", "version", "exported", "nvrtc_version",
                                        "devices", "results", "cubins"};
    char format[64], path[64];
    long long version = 0;
    if (!doc || doc->type != DB_JSON_OBJECT)
        return bad(c, "document", "expected a JSON object");
    const db_json *ver = db_json_get(doc, "version");
    if (!get_str(c, doc, "document", "format", format, sizeof format) ||
        strcmp(format, "autotune-results") != 0)
        return bad(c, "format", "not an autotune export (format \"autotune-results\")");
    if (!ver || ver->type != DB_JSON_NUMBER || ver->number != 1)
        return bad(c, "version", "unsupported export version %g (this autotune reads 1)",
                   ver && ver->type == DB_JSON_NUMBER ? ver->number : -1.0);
    if (!members(c, doc, "document", names, 7) ||
        !get_int(c, doc, "document", "version", 1, 1, &version))
        return 0;
    const db_json *devs = array_of(c, doc, "devices"), *res = array_of(c, doc, "results"),
                  *cub = array_of(c, doc, "cubins");
    if (!devs || !res || !cub)
        return 0;
    im->devs = calloc((size_t)devs->n_items + 1, sizeof *im->devs);
    im->res = calloc((size_t)res->n_items + 1, sizeof *im->res);
    im->cap_cub = cub->n_items + 16;
    im->cub = calloc((size_t)im->cap_cub, sizeof *im->cub);
    if (!im->devs || !im->res || !im->cub)
        return bad(c, "document", "out of memory");
    for (int i = 0; i < devs->n_items; i++, im->n_devs++) {
        snprintf(path, sizeof path, "devices[%d]", i);
        if (!read_device(c, &devs->items[i], path, &im->devs[i]))
            return 0;
        for (int k = 0; k < i; k++)
            if (strcmp(im->devs[k].dev.info.uuid, im->devs[i].dev.info.uuid) == 0)
                return bad(c, path, "device %s listed twice", im->devs[i].dev.info.uuid);
    }
    for (int i = 0; i < res->n_items; i++, im->n_res++) {
        snprintf(path, sizeof path, "results[%d]", i);
        if (!read_result(c, &res->items[i], path, im, &im->res[i]))
            return 0;
    }
    for (int i = 0; i < cub->n_items; i++, im->n_cub++) {
        snprintf(path, sizeof path, "cubins[%d]", i);
        if (!read_cubin(c, &cub->items[i], path, &im->cub[i]))
            return 0;
        im->unfit += !im->cub[i].fits;
    }
    im->in_file = im->n_cub;
    return 1;
}

void db_import_free(db_import *im)
{
    if (!im)
        return;
    for (int i = 0; i < im->n_cub; i++) {
        free(im->cub[i].options);
        free(im->cub[i].data);
    }
    free(im->cub);
    free(im->devs);
    free(im->res);
    free(im);
}

at_status db_import_read(const char *text, size_t len, db_import **out, char *err,
                         size_t errlen)
{
    *out = NULL;
    db_json *doc = NULL;
    at_status s = db_json_parse(text, len, &doc, err, errlen);
    if (s != AT_OK)
        return s;
    db_import *im = calloc(1, sizeof *im);
    ictx c = {err, errlen};
    if (!im) {
        db_json_free(doc);
        snprintf(err, errlen, "out of memory");
        return AT_ERR_NO_MEMORY;
    }
    int ok = read_document(&c, doc, im);
    if (!ok) {
        db_json_free(doc);
        db_import_free(im);
        return AT_ERR_INVALID_ARG;
    }
    db_json_free(doc);
    *out = im;
    return AT_OK;
}

/* ---- what to compile, and storing ---- */

static const db_import *sort_im;

/* By device, kernel, source, problem, then rank (db_rank_ms; servable rows
 * only). */
static int need_cmp(const void *a, const void *b)
{
    const im_result *x = &sort_im->res[*(const int *)a], *y = &sort_im->res[*(const int *)b];
    int c = strcmp(x->r.device_uuid, y->r.device_uuid);
    if (!c)
        c = strcmp(x->r.kernel, y->r.kernel);
    if (!c)
        c = strcmp(x->r.source_hash, y->r.source_hash);
    if (!c && !tpl_problem_equal(&x->r.problem, &y->r.problem)) {
        char px[128], py[128];
        tpl_problem_format(&x->r.problem, px, sizeof px);
        tpl_problem_format(&y->r.problem, py, sizeof py);
        c = strcmp(px, py);
    }
    if (!c)
        c = (db_rank_ms(&x->r) > db_rank_ms(&y->r)) - (db_rank_ms(&x->r) < db_rank_ms(&y->r));
    return c ? c : *(const int *)a - *(const int *)b;
}

/* 1 if a and b are results of one device, kernel (and source) and problem. */
static int same_group(const db_result *a, const db_result *b)
{
    return strcmp(a->device_uuid, b->device_uuid) == 0 && strcmp(a->kernel, b->kernel) == 0 &&
           strcmp(a->source_hash, b->source_hash) == 0 &&
           tpl_problem_equal(&a->problem, &b->problem);
}

/* The file's fitting cubin under key, NULL if none. */
static im_cubin *file_cubin(const db_import *im, const char *key)
{
    for (int i = 0; i < im->n_cub; i++)
        if (im->cub[i].fits && !im->cub[i].compiled && strcmp(im->cub[i].key, key) == 0)
            return &im->cub[i];
    return NULL;
}

/* 1 if key is stored in d (a cubin of this machine), 0 if not, -1 on error. */
static int have_cubin(db *d, const char *key)
{
    long long n = 0;
    if (db_query_int(d, "SELECT count(*) FROM binary WHERE key = ?1", key, &n,
                     "looking up a cubin") != AT_OK)
        return -1;
    return n > 0;
}

static at_status add_need(db *d, const db_import *im, const im_result *ir, db_import_need *out,
                          int *n)
{
    const char *arch = im->devs[ir->dev].dev.info.arch;
    if (!tpl_target_arch(ir->fam, ir->cfg, arch))
        return AT_OK;
    for (int k = 0; k < *n; k++)
        if (strcmp(out[k].key, ir->r.binary_key) == 0)
            return AT_OK;
    int have = have_cubin(d, ir->r.binary_key);
    if (have < 0)
        return AT_ERR_DB;
    if (have)
        return AT_OK;
    db_import_need *nd = &out[(*n)++];
    memset(nd, 0, sizeof *nd);
    nd->fam = ir->fam;
    memcpy(nd->cfg, ir->cfg, sizeof nd->cfg);
    db_copy(nd->config, sizeof nd->config, ir->r.config);
    db_copy(nd->arch, sizeof nd->arch, arch);
    db_copy(nd->key, sizeof nd->key, ir->r.binary_key);
    nd->in_file = file_cubin(im, nd->key) != NULL;
    return AT_OK;
}

at_status db_import_needs(db *d, db_import *im, int per_problem, db_import_need **out,
                          int *count)
{
    *out = NULL;
    *count = 0;
    int *idx = malloc(((size_t)im->n_res + 1) * sizeof *idx);
    db_import_need *needs = calloc((size_t)im->n_res + 1, sizeof *needs);
    if (!idx || !needs) {
        free(idx);
        free(needs);
        return db_fail(d, AT_ERR_NO_MEMORY, "out of memory");
    }
    int n = 0, n_needs = 0;
    for (int i = 0; i < im->n_res; i++)
        if (im->res[i].current && strcmp(im->res[i].r.status, DB_OK) == 0 &&
            im->res[i].r.time_ms > 0)
            idx[n++] = i;
    sort_im = im;
    qsort(idx, (size_t)n, sizeof *idx, need_cmp);
    at_status s = AT_OK;
    int rank = 0, rank_det = 0;
    for (int k = 0; k < n && s == AT_OK; k++) {
        const im_result *ir = &im->res[idx[k]];
        if (k == 0 || !same_group(&im->res[idx[k - 1]].r, &ir->r))
            rank = rank_det = 0;
        int take = rank++ < per_problem || (ir->r.deterministic && rank_det < per_problem);
        rank_det += ir->r.deterministic;
        if (take)
            s = add_need(d, im, ir, needs, &n_needs);
    }
    free(idx);
    if (s != AT_OK) {
        free(needs);
        return s;
    }
    *out = needs;
    *count = n_needs;
    return AT_OK;
}

at_status db_import_add_cubin(db_import *im, const db_import_need *need, const void *cubin,
                              size_t size)
{
    im_cubin *theirs = file_cubin(im, need->key);
    if (theirs && !theirs->verified && !theirs->differs) {
        if (theirs->size == size && memcmp(theirs->data, cubin, size) == 0) {
            theirs->verified = 1;       /* the same bytes: the file's is this build's */
            return AT_OK;
        }
        theirs->differs = 1;            /* other code under the key: dropped */
    } else if (theirs && theirs->verified) {
        return AT_OK;
    }
    if (im->n_cub == im->cap_cub) {
        int cap = im->cap_cub * 2;
        im_cubin *c = realloc(im->cub, (size_t)cap * sizeof *c);
        if (!c)
            return AT_ERR_NO_MEMORY;
        im->cub = c;
        im->cap_cub = cap;
    }
    im_cubin *cb = &im->cub[im->n_cub];
    memset(cb, 0, sizeof *cb);
    char options[4096];
    tpl_options_string(need->fam, need->cfg, need->arch, options, sizeof options);
    cb->options = strdup(options);
    cb->data = malloc(size ? size : 1);
    if (!cb->options || !cb->data) {
        free(cb->options);
        free(cb->data);
        return AT_ERR_NO_MEMORY;
    }
    memcpy(cb->data, cubin, size);
    cb->size = size;
    db_copy(cb->key, sizeof cb->key, need->key);
    db_copy(cb->kernel, sizeof cb->kernel, need->fam->name);
    db_copy(cb->source_hash, sizeof cb->source_hash, tpl_source_hash(need->fam));
    db_copy(cb->config, sizeof cb->config, need->config);
    db_copy(cb->arch, sizeof cb->arch, need->arch);
    db_copy(cb->nvrtc, sizeof cb->nvrtc, tpl_nvrtc_version());
    db_now(cb->created, sizeof cb->created);
    cb->fits = cb->compiled = 1;
    im->n_cub++;
    return AT_OK;
}

void db_import_counts(const db_import *im, db_import_stats *st)
{
    memset(st, 0, sizeof *st);
    st->devices = im->n_devs;
    st->results = im->n_res;
    st->cubins_in_file = im->in_file;
    st->cubins_unfit = im->unfit;
    for (int i = 0; i < im->n_res; i++)
        st->other_source += !im->res[i].current;
    for (int i = 0; i < im->n_cub; i++) {
        st->cubins_compiled += im->cub[i].compiled;
        st->cubins_verified += im->cub[i].verified;
        st->cubins_differ += im->cub[i].differs;
    }
    st->cubins_dropped = st->cubins_in_file - st->cubins_verified;
}

/* Inside the transaction: every result row. */
static at_status apply_results(db *d, const db_import *im, db_import_stats *st)
{
    sqlite3_stmt *up;
    at_status s = db_prepare_result_upsert(d, &up);
    long long before = 0, after = 0, changed = 0;
    if (s == AT_OK)
        s = db_query_int(d, "SELECT count(*) FROM result", NULL, &before, "counting results");
    for (int i = 0; s == AT_OK && i < im->n_res; i++) {
        const db_result *r = &im->res[i].r;
        long long dev = 0, ker = 0, prob = 0;
        if ((s = db_device_id(d, r->device_uuid, &dev)) != AT_OK ||
            (s = db_kernel_id(d, r->kernel, r->source_hash, &ker)) != AT_OK ||
            (s = db_problem_id(d, r->kernel, &r->problem, &prob)) != AT_OK)
            break;
        sqlite3_reset(up);
        sqlite3_bind_int64(up, 1, dev);
        sqlite3_bind_int64(up, 2, ker);
        sqlite3_bind_int64(up, 3, prob);
        const char *text[] = {r->config, r->status};
        const double num[] = {r->time_ms, r->time_min_ms, r->time_max_ms};
        for (int k = 0; k < 2; k++)
            db_bind_text(up, 4 + k, text[k]);
        for (int k = 0; k < 3; k++)
            sqlite3_bind_double(up, 6 + k, num[k]);
        sqlite3_bind_int(up, 9, r->runs);
        sqlite3_bind_double(up, 10, r->gflops);
        sqlite3_bind_double(up, 11, r->gbs);
        sqlite3_bind_double(up, 12, r->rel_error);
        sqlite3_bind_double(up, 13, r->compile_ms);
        db_bind_text(up, 14, r->binary_key);
        db_bind_text(up, 15, r->error);
        sqlite3_bind_int(up, 16, r->deterministic);
        sqlite3_bind_null(up, 17);
        db_bind_text(up, 18, r->created);
        if (r->sustained_ms > 0 && r->rank_ms > 0) {
            sqlite3_bind_double(up, 19, r->sustained_ms);
            sqlite3_bind_double(up, 29, r->rank_ms);
        } else {
            sqlite3_bind_null(up, 19);
            sqlite3_bind_null(up, 29);
        }
        int rc = sqlite3_step(up);
        if (rc != SQLITE_DONE)
            s = db_sqlfail(d, rc, "storing an imported result");
        changed += sqlite3_changes(d->h);
    }
    sqlite3_finalize(up);
    if (s == AT_OK)
        s = db_query_int(d, "SELECT count(*) FROM result", NULL, &after, "counting results");
    st->results_added = after - before;
    st->results_replaced = changed - st->results_added;
    st->results_kept = im->n_res - changed;
    return s;
}

/* Inside the transaction: the verified and the compiled cubins. */
static at_status apply_cubins(db *d, const db_import *im, db_import_stats *st)
{
    sqlite3_stmt *ins;
    at_status s = db_prepare_binary_insert(d, &ins);
    for (int i = 0; s == AT_OK && i < im->n_cub; i++) {
        const im_cubin *cb = &im->cub[i];
        if (!cb->verified && !cb->compiled)
            continue;
        sqlite3_reset(ins);
        const char *text[] = {cb->key, cb->kernel, cb->source_hash, cb->config, cb->arch,
                              cb->nvrtc, cb->options};
        for (int k = 0; k < 7; k++)
            db_bind_text(ins, k + 1, text[k]);
        sqlite3_bind_blob(ins, 8, cb->data, (int)cb->size, SQLITE_STATIC);
        sqlite3_bind_int64(ins, 9, (long long)cb->size);
        db_bind_text(ins, 10, cb->created);
        int rc = sqlite3_step(ins);
        if (rc != SQLITE_DONE)
            s = db_sqlfail(d, rc, "storing an imported cubin");
        st->cubins_stored += sqlite3_changes(d->h);
    }
    sqlite3_finalize(ins);
    return s;
}

at_status db_import_apply(db *d, db_import *im, db_import_stats *st)
{
    db_import_counts(im, st);
    at_status s = db_check_writable(d, "importing");
    if (s != AT_OK || (s = db_begin(d)) != AT_OK)
        return s;
    for (int i = 0; i < im->n_devs && s == AT_OK; i++) {
        long long id = 0;
        s = db_upsert_device(d, &im->devs[i].dev, im->devs[i].first, im->devs[i].last, &id);
    }
    if (s == AT_OK)
        s = apply_results(d, im, st);
    if (s == AT_OK)
        s = apply_cubins(d, im, st);
    if (s != AT_OK) {
        db_rollback(d);
        return s;
    }
    return db_commit(d);
}
