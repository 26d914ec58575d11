/* test_travel.c: tuning results that travel: the JSON reader and writer,
 * export -> import round trips, bad input that must change nothing,
 * cubins that do not fit this build, a swapped cubin (another valid
 * kernel's code under a configuration's key) dropped by import and merge,
 * merge on random databases (property style), and shipped read-only
 * databases under the user's (CPU tier); a swapped-cubin import followed by
 * the call that must run the right kernel (GPU tier). */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <sqlite3.h>
#include "db.h"
#include "harness.h"
#include "json.h"
#include "lookup.h"
#include "tn.h"

/* ---- fixtures ---- */

static void trv_device(at_device_info *i, const char *uuid, const char *name, int major,
                       int minor)
{
    memset(i, 0, sizeof *i);
    snprintf(i->name, sizeof i->name, "%s", name);
    snprintf(i->uuid, sizeof i->uuid, "%s", uuid);
    i->cc_major = major;
    i->cc_minor = minor;
    tpl_arch_name(major, minor, i->arch, sizeof i->arch);
    i->sm_count = 132;
    i->memory_bytes = 150ll << 30;
    i->l2_bytes = 50 << 20;
    i->smem_per_block_optin = 227 << 10;
    i->smem_per_sm = 228 << 10;
    i->regs_per_block = 65536;
    i->regs_per_sm = 65536;
    i->max_threads_per_block = 1024;
    i->max_threads_per_sm = 2048;
    i->clock_khz = 1980000;
    i->driver_version = 13000;
}

static tpl_problem trv_problem(long long n)
{
    tpl_problem p;
    memset(&p, 0, sizeof p);
    p.n_dims = 1;
    p.dims[0] = n;
    return p;
}

static db *trv_open(const char *name, int mode, char *path, size_t len)
{
    char err[512];
    db *d = NULL;
    snprintf(path, len, "%s/%s", th_tmpdir(), name);
    if (db_open(&d, path, mode, err, sizeof err) != AT_OK) {
        th_fail(__FILE__, __LINE__, "db_open %s: %s", path, err);
        return NULL;
    }
    return d;
}

/* malloc'd bytes of a file, NULL if unreadable. */
static char *trv_slurp(const char *path, size_t *size)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *buf = malloc((size_t)n + 1);
    if (buf && fread(buf, 1, (size_t)n, f) != (size_t)n) {
        free(buf);
        buf = NULL;
    }
    fclose(f);
    if (buf)
        buf[n] = '\0';
    *size = (size_t)n;
    return buf;
}

static int trv_write(const char *path, const char *text, size_t len)
{
    FILE *f = fopen(path, "wb");
    if (!f)
        return 0;
    int ok = fwrite(text, 1, len, f) == len;
    return fclose(f) == 0 && ok;
}

static int trv_exists(const char *path)
{
    struct stat sb;
    return stat(path, &sb) == 0;
}

/* The k-th valid configuration of fam on dev, as text and values. */
static void trv_config(const tpl_family *fam, const at_device_info *dev, long long k,
                       int *cfg, char *text)
{
    long long *valid = NULL;
    long long n = tpl_valid_configs(fam, dev, &valid);
    tpl_config_from_index(fam, valid[k % n], cfg);
    tpl_config_format(fam, cfg, text, TPL_CONFIG_LEN);
    free(valid);
}

static void trv_result(db_result *r, const char *uuid, const tpl_family *fam, tpl_problem p,
                       const char *config, const char *status, double t)
{
    memset(r, 0, sizeof *r);
    snprintf(r->device_uuid, sizeof r->device_uuid, "%s", uuid);
    snprintf(r->kernel, sizeof r->kernel, "%s", fam->name);
    snprintf(r->source_hash, sizeof r->source_hash, "%s", tpl_source_hash(fam));
    r->problem = p;
    snprintf(r->config, sizeof r->config, "%s", config);
    snprintf(r->status, sizeof r->status, "%s", status);
    r->time_ms = t;
    r->time_min_ms = t * 0.99;
    r->time_max_ms = t * 1.01;
    r->runs = 9;
    r->gbs = t > 0 ? 4.0 / t : 0;
    r->rel_error = strcmp(status, DB_OK) == 0 ? 1.5e-7 : -1;
    r->compile_ms = 12.5;
    r->deterministic = 1;
    if (strcmp(status, DB_OK) != 0)
        snprintf(r->error, sizeof r->error, "failed: \"quoted\"\ttab\nline, unicode \xc3\xa9");
}

/* ---- JSON ---- */

TEST(travel_json_reader_strict)
{
    static const char *const bad[] = {
        "", "{", "[1,]", "{\"a\":1,}", "01", "1.", "1e", "-", "+1", "[1 2]", "{\"a\" 1}",
        "\"\x01\"", "\"\\x\"", "\"\\ud800\"", "\"\\udc00x\"", "\"\\u0000\"", "\"\xc3\"",
        "\"\xc0\xaf\"", "\"\xed\xa0\x80\"", "{\"a\":1,\"a\":2}", "[1] x", "tru", "nul",
        "/* c */ 1", "[1e999]", "\"abc", "{\"a\":[1,2}",
    };
    char err[256];
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        db_json *v = NULL;
        at_status s = db_json_parse(bad[i], strlen(bad[i]), &v, err, sizeof err);
        CHECK_MSG(s == AT_ERR_INVALID_ARG && !v, "accepted bad JSON #%zu: %s", i, bad[i]);
        CHECK_MSG(strstr(err, "line 1, column") != NULL, "no position: %s", err);
    }
    char deep[200] = "";
    for (int i = 0; i < 65; i++)
        strcat(deep, "[");
    db_json *v = NULL;
    CHECK(db_json_parse(deep, strlen(deep), &v, err, sizeof err) == AT_ERR_INVALID_ARG);
    /* escapes decode to UTF-8 (U+00E9, U+1F600 from a surrogate pair) */
    const char *good = " {\"s\": \"a\\u00e9\\ud83d\\ude00\\n\\/\", \"n\": -12.5e1, "
                       "\"t\": [true, false, null, 0, 1E2]}\n";
    CHECK_OK(db_json_parse(good, strlen(good), &v, err, sizeof err));
    const db_json *s = db_json_get(v, "s");
    CHECK(s && s->type == DB_JSON_STRING);
    CHECK_STR(s->string, "a\xc3\xa9\xf0\x9f\x98\x80\n/");
    CHECK(db_json_get(v, "n")->number == -125.0);
    const db_json *t = db_json_get(v, "t");
    CHECK(t->n_items == 5 && t->items[0].type == DB_JSON_TRUE &&
          t->items[2].type == DB_JSON_NULL && t->items[4].number == 100.0);
    db_json_free(v);
    /* the writer's strings and numbers read back exactly */
    char path[4300];
    snprintf(path, sizeof path, "%s/w.json", th_tmpdir());
    FILE *f = fopen(path, "w");
    const char *tricky = "q\"b\\s/\x01\x1f\x7f\t\n\xc3\xa9 end";
    const double nums[] = {0.1, 1e-300, 123456789.123456789, -0.0, 5e300, 1.0 / 3.0};
    fprintf(f, "[");
    db_json_put_string(f, tricky);
    for (int i = 0; i < 6; i++) {
        fprintf(f, ",");
        db_json_put_number(f, nums[i]);
    }
    fprintf(f, "]");
    fclose(f);
    size_t len = 0;
    char *text = trv_slurp(path, &len);
    CHECK_OK(db_json_parse(text, len, &v, err, sizeof err));
    CHECK_STR(v->items[0].string, tricky);
    for (int i = 0; i < 6; i++)
        CHECK_MSG(v->items[1 + i].number == nums[i], "%.17g read back as %.17g", nums[i],
                  v->items[1 + i].number);
    db_json_free(v);
    free(text);
}

/* RFC 4648's test vectors, and random bytes through both directions. */
TEST(travel_base64_vectors_and_round_trip)
{
    static const char *const plain[] = {"", "f", "fo", "foo", "foob", "fooba", "foobar"};
    static const char *const coded[] = {"", "Zg==", "Zm8=", "Zm9v", "Zm9vYg==", "Zm9vYmE=",
                                        "Zm9vYmFy"};
    char path[4300];
    snprintf(path, sizeof path, "%s/b.txt", th_tmpdir());
    for (int i = 0; i < 7; i++) {
        FILE *f = fopen(path, "w");
        db_json_put_base64(f, plain[i], strlen(plain[i]));
        fclose(f);
        size_t len = 0;
        char *text = trv_slurp(path, &len);
        CHECK(len == strlen(coded[i]) + 2);
        CHECK(strncmp(text + 1, coded[i], strlen(coded[i])) == 0);
        free(text);
        void *out = NULL;
        size_t n = 0;
        CHECK_OK(db_base64_decode(coded[i], strlen(coded[i]), &out, &n));
        CHECK(n == strlen(plain[i]) && memcmp(out, plain[i], n) == 0);
        free(out);
    }
    static const char *const bad[] = {"Zg=", "Zg=a", "Z===", "Zm9v!A==", "Zm 9", "=Zm9"};
    for (int i = 0; i < 6; i++) {
        void *out = NULL;
        size_t n = 0;
        CHECK_MSG(db_base64_decode(bad[i], strlen(bad[i]), &out, &n) == AT_ERR_INVALID_ARG,
                  "accepted %s", bad[i]);
    }
}

/* ---- export and import ---- */

/* A database of two devices (two models), sum and dot results of every
 * status, one cubin this build computes under its key and one recorded
 * with another NVRTC version. */
static db *trv_source_db(char *path, size_t len)
{
    db *d = trv_open("source.db", DB_OPEN_CREATE, path, len);
    if (!d)
        return NULL;
    at_device_info a, b;
    trv_device(&a, "GPU-src-a", "NVIDIA H200", 9, 0);
    trv_device(&b, "GPU-src-b", "NVIDIA A100-SXM4-80GB", 8, 0);
    if (db_put_device(d, &a, "13.0") != AT_OK || db_put_device(d, &b, "12.8") != AT_OK)
        return NULL;
    const char *const status[] = {DB_OK, DB_OK, DB_WRONG_RESULT, DB_OK, DB_CRASHED, DB_TIMEOUT};
    const char *fams[] = {"sum", "dot"};
    for (int f = 0; f < 2; f++)
        for (int k = 0; k < 6; k++) {
            const tpl_family *fam = tpl_find(fams[f]);
            int cfg[TPL_MAX_PARAMS];
            char config[TPL_CONFIG_LEN];
            trv_config(fam, &a, 37 * k + f, cfg, config);
            db_result r;
            trv_result(&r, k % 2 ? "GPU-src-b" : "GPU-src-a", fam,
                       trv_problem(k < 3 ? 1048576 : 4096), config, status[k], 0.5 + k + f);
            tpl_binary_key(fam, cfg, k % 2 ? "sm_80" : "sm_90", r.binary_key,
                           sizeof r.binary_key);
            if (db_store_result(d, &r) != AT_OK)
                return NULL;
            if (f == 0 && k < 2) {
                const char cubin[] = "\177ELF fake cubin bytes \x01\x02\x00\xff";
                db_put_binary(d, r.binary_key, fam->name, tpl_source_hash(fam), config,
                              k % 2 ? "sm_80" : "sm_90", k == 0 ? tpl_nvrtc_version() : "9.9",
                              "-opts", cubin, sizeof cubin);
            }
        }
    return d;
}

/* 1 if the rows of a and b are the same results, field by field. */
static int trv_same_rows(const db_result *a, int na, const db_result *b, int nb, char *why,
                         size_t len)
{
    if (na != nb) {
        snprintf(why, len, "%d rows against %d", na, nb);
        return 0;
    }
    for (int i = 0; i < na; i++) {
        const db_result *x = &a[i], *y = NULL;
        for (int k = 0; k < nb && !y; k++)
            if (strcmp(b[k].device_uuid, x->device_uuid) == 0 &&
                strcmp(b[k].kernel, x->kernel) == 0 && strcmp(b[k].config, x->config) == 0 &&
                tpl_problem_equal(&b[k].problem, &x->problem))
                y = &b[k];
        if (!y || strcmp(x->source_hash, y->source_hash) || strcmp(x->status, y->status) ||
            x->time_ms != y->time_ms || x->time_min_ms != y->time_min_ms ||
            x->time_max_ms != y->time_max_ms || x->runs != y->runs || x->gflops != y->gflops ||
            x->gbs != y->gbs || x->rel_error != y->rel_error || x->compile_ms != y->compile_ms ||
            strcmp(x->error, y->error) || strcmp(x->created, y->created) ||
            x->deterministic != y->deterministic) {
            snprintf(why, len, "row %.100s %.100s differs or is missing", x->kernel, x->config);
            return 0;
        }
    }
    return 1;
}

TEST(travel_export_import_round_trip)
{
    char src[4300], dst[4300], json[4300], cmd[40000], *out = NULL;
    db *d = trv_source_db(src, sizeof src);
    CHECK(d != NULL);
    db_close(d);
    snprintf(json, sizeof json, "%s/all.json", th_tmpdir());
    snprintf(dst, sizeof dst, "%s/imported.db", th_tmpdir());
    snprintf(cmd, sizeof cmd, "%s/autotune export --db '%s' --with-cubins -o '%s' && "
             "%s/autotune import '%s' --db '%s' --no-compile", th_build_dir(), src, json,
             th_build_dir(), json, dst);
    CHECK_MSG(th_run(cmd, &out) == 0, "%s", out);
    CHECK_MSG(strstr(out, "exported 12 results and 2 cubins") &&
              strstr(out, "12 results (12 new") &&
              strstr(out, "2 in the file: 0 verified (this build compiles the same bytes), 2 "
                     "dropped (0 not what this build compiles, 1 of another toolkit") &&
              strstr(out, "with --no-compile no cubin of the file can be checked"),
              "%s", out);
    free(out);
    db *a = NULL, *b = NULL;
    char err[512];
    CHECK_OK(db_open(&a, src, DB_OPEN_READONLY, err, sizeof err));
    CHECK_OK(db_open(&b, dst, DB_OPEN_READONLY, err, sizeof err));
    db_result *ra = NULL, *rb = NULL;
    int na = 0, nb = 0;
    CHECK_OK(db_results(a, NULL, NULL, &ra, &na));
    CHECK_OK(db_results(b, NULL, NULL, &rb, &nb));
    char why[256];
    CHECK_MSG(trv_same_rows(ra, na, rb, nb, why, sizeof why), "%s", why);
    /* the devices, facts included */
    db_device da, dbv;
    CHECK_OK(db_get_device(a, "GPU-src-b", &da));
    CHECK_OK(db_get_device(b, "GPU-src-b", &dbv));
    CHECK(memcmp(&da.info, &dbv.info, sizeof da.info) == 0);
    CHECK_STR(dbv.nvrtc_version, "12.8");
    /* neither cubin arrived: without a compile here none can be checked */
    void *c2 = NULL;
    size_t n2 = 0;
    int fit = -1, unfit = -1;
    for (int i = 0; i < na; i++) {
        if (strcmp(ra[i].kernel, "sum") == 0 && ra[i].problem.dims[0] == 1048576 &&
            strcmp(ra[i].status, DB_OK) == 0)
            *(strcmp(ra[i].device_uuid, "GPU-src-a") == 0 ? &fit : &unfit) = i;
    }
    CHECK(fit >= 0 && unfit >= 0);
    CHECK(db_get_binary(b, ra[fit].binary_key, &c2, &n2) == AT_ERR_NOT_FOUND);
    CHECK(db_get_binary(b, ra[unfit].binary_key, &c2, &n2) == AT_ERR_NOT_FOUND);
    free(ra);
    free(rb);
    db_close(a);
    db_close(b);
    /* SQLite's own JSON parser (independent of ours) reads the export */
    size_t jlen = 0;
    char *jtext = trv_slurp(json, &jlen);
    sqlite3 *h = NULL;
    sqlite3_stmt *st = NULL;
    CHECK(jtext && sqlite3_open(":memory:", &h) == SQLITE_OK);
    CHECK(sqlite3_prepare_v2(h, "SELECT json_valid(?1), json_array_length(?1, '$.results'), "
                             "json_array_length(?1, '$.cubins'), json_extract(?1, "
                             "'$.results[0].config.STYLE') IS NOT NULL", -1, &st, NULL) == SQLITE_OK);
    sqlite3_bind_text(st, 1, jtext, (int)jlen, SQLITE_STATIC);
    CHECK(sqlite3_step(st) == SQLITE_ROW);
    CHECK(sqlite3_column_int(st, 0) == 1 && sqlite3_column_int(st, 1) == 12 &&
          sqlite3_column_int(st, 2) == 2 && sqlite3_column_int(st, 3) == 1);
    sqlite3_finalize(st);
    sqlite3_close(h);
    free(jtext);
    /* filters: one model, one kernel */
    snprintf(cmd, sizeof cmd, "%s/autotune export --db '%s' --model 'NVIDIA A100-SXM4-80GB' "
             "-o '%s.a100' && %s/autotune export --db '%s' --kernel dot --device GPU-src-a "
             "-o '%s.dot'", th_build_dir(), src, json, th_build_dir(), src, json);
    CHECK_MSG(th_run(cmd, &out) == 0 && strstr(out, "exported 6 results and 0 cubins") &&
              strstr(out, "exported 3 results"), "%s", out);
    free(out);
    /* a result of another version of the kernel's source: stored, never served */
    size_t len = 0;
    char *text = trv_slurp(json, &len), *hash = strstr(text, "\"source_hash\": \"");
    CHECK(hash && strstr(hash, "\"kernel\": \"sum\"") != NULL);
    hash = strstr(strstr(text, "\"results\""), "\"source_hash\": \"") + 16;
    memcpy(hash, "0123456789abcdef", 16);
    CHECK(trv_write(json, text, len));
    free(text);
    snprintf(dst, sizeof dst, "%s/other-source.db", th_tmpdir());
    snprintf(cmd, sizeof cmd, "%s/autotune import '%s' --db '%s' --no-compile", th_build_dir(),
             json, dst);
    CHECK_MSG(th_run(cmd, &out) == 0 && strstr(out, "1 results are of another version"), "%s",
              out);
    free(out);
    CHECK_OK(db_open(&b, dst, DB_OPEN_READONLY, err, sizeof err));
    CHECK_OK(db_results(b, NULL, NULL, &rb, &nb));
    int other = 0;
    for (int i = 0; i < nb; i++)
        if (strcmp(rb[i].source_hash, "0123456789abcdef") == 0) {
            other++;
            CHECK(rb[i].binary_key[0] == '\0');
        }
    CHECK_EQ(other, 1);
    free(rb);
    db_close(b);
}

/* Bad documents: exit 1, a message naming the problem, and the database
 * byte for byte as before (its rows counted too). */
TEST(travel_import_bad_input_changes_nothing)
{
    char src[4300], json[4300], bad[4300], target[4300], cmd[40000], *out = NULL;
    db *d = trv_source_db(src, sizeof src);
    CHECK(d != NULL);
    db_close(d);
    snprintf(json, sizeof json, "%s/good.json", th_tmpdir());
    snprintf(bad, sizeof bad, "%s/bad.json", th_tmpdir());
    snprintf(cmd, sizeof cmd, "%s/autotune export --db '%s' --with-cubins -o '%s'",
             th_build_dir(), src, json);
    CHECK_EQ(th_run(cmd, &out), 0);
    free(out);
    /* the target already holds rows: a copy of the source */
    d = trv_open("target.db", DB_OPEN_CREATE, target, sizeof target);
    CHECK(d != NULL);
    at_device_info t;
    trv_device(&t, "GPU-target", "NVIDIA H100 80GB HBM3", 9, 0);
    CHECK_OK(db_put_device(d, &t, "13.0"));
    db_result r;
    trv_result(&r, "GPU-target", tpl_find("sum"), trv_problem(77), tpl_find("sum")->default_config,
               DB_OK, 1.0);
    CHECK_OK(db_store_result(d, &r));
    CHECK_OK(db_checkpoint(d));
    db_close(d);
    size_t len = 0, before_len = 0, after_len = 0;
    char *text = trv_slurp(json, &len), *before = trv_slurp(target, &before_len);
    CHECK(text && before);
    struct { const char *from, *to, *expect; } edits[] = {
        {"\"version\": 1", "\"version\": 2", "unsupported export version 2"},
        {"\"kernel\": \"dot\"", "\"kernel\": \"dgemm_nope\"", "unknown kernel \"dgemm_nope\""},
        {"\"STYLE\":", "\"STYLEX\":", "has no parameter STYLEX"},
        {"\"status\": \"crashed\"", "\"status\": \"exploded\"", "unknown status"},
        {"\"runs\": 9", "\"runs\": \"9\"", "runs: expected a number"},
        {"\"problem\": \"4096\"", "\"problem\": \"4096x2\"", "does not have the 1 sizes"},
        {"\"gbs\":", "\"gbs\": 1, \"gbs\":", "duplicate member"},
        {"\"time_ms\": 0.5", "\"time_ms\": -0.5", "time_ms: -0.5 is below 0"},
        {"\"cc_major\": 9,", "", "member \"cc_major\" is missing"},
        {"\"data\": \"", "\"data\": \"!", "not valid base64"},
    };
    int n_cases = (int)(sizeof edits / sizeof edits[0]);
    for (int c = 0; c < n_cases + 3; c++) {
        char *mod = malloc(len + 256);
        const char *expect;
        if (c < n_cases) {
            const char *at = strstr(text, edits[c].from);
            CHECK_MSG(at != NULL, "fixture lacks %s", edits[c].from);
            size_t pre = (size_t)(at - text);
            memcpy(mod, text, pre);
            strcpy(mod + pre, edits[c].to);
            strcat(mod, at + strlen(edits[c].from));
            expect = edits[c].expect;
        } else {
            /* truncated at three places */
            size_t cut = c == n_cases ? len / 3 : c == n_cases + 1 ? len - 3 : 1;
            memcpy(mod, text, cut);
            mod[cut] = '\0';
            expect = "truncated";
        }
        CHECK(trv_write(bad, mod, strlen(mod)));
        free(mod);
        snprintf(cmd, sizeof cmd, "%s/autotune import '%s' --db '%s'", th_build_dir(), bad,
                 target);
        int rc = th_run(cmd, &out);
        CHECK_MSG(rc == 1 && strstr(out, expect) && strstr(out, "nothing was stored"),
                  "case %d: exit %d: %s", c, rc, out);
        free(out);
        char *after = trv_slurp(target, &after_len);
        CHECK_MSG(after && after_len == before_len && memcmp(after, before, after_len) == 0,
                  "case %d changed the database", c);
        free(after);
        CHECK(!trv_exists(bad) || 1);
    }
    /* a missing target is not even created */
    char missing[4400];
    snprintf(missing, sizeof missing, "%s/never.db", th_tmpdir());
    snprintf(cmd, sizeof cmd, "%s/autotune import '%s' --db '%s'", th_build_dir(), bad, missing);
    CHECK_EQ(th_run(cmd, &out), 1);
    free(out);
    CHECK(!trv_exists(missing));
    free(text);
    free(before);
}

/* A cubin of another NVRTC version is dropped and its configuration
 * compiled here, stored under the key this build computes. */
TEST(travel_import_recompiles_what_does_not_fit)
{
    char src[4300], json[4300], dst[4300], cmd[40000], *out = NULL;
    db *d = trv_open("one.db", DB_OPEN_CREATE, src, sizeof src);
    CHECK(d != NULL);
    at_device_info a;
    trv_device(&a, "GPU-one", "NVIDIA H200", 9, 0);
    CHECK_OK(db_put_device(d, &a, "13.0"));
    const tpl_family *fam = tpl_find("sum");
    int cfg[TPL_MAX_PARAMS];
    char err[256];
    CHECK_OK(tpl_config_parse(fam, fam->default_config, cfg, err, sizeof err));
    db_result r;
    trv_result(&r, "GPU-one", fam, trv_problem(4096), fam->default_config, DB_OK, 0.01);
    tpl_binary_key(fam, cfg, "sm_90", r.binary_key, sizeof r.binary_key);
    CHECK_OK(db_store_result(d, &r));
    const char stale[] = "\177ELF stale cubin of another toolkit";
    CHECK_OK(db_put_binary(d, r.binary_key, "sum", tpl_source_hash(fam), fam->default_config,
                           "sm_90", "11.0", "", stale, sizeof stale));
    db_close(d);
    snprintf(json, sizeof json, "%s/one.json", th_tmpdir());
    snprintf(dst, sizeof dst, "%s/fresh.db", th_tmpdir());
    snprintf(cmd, sizeof cmd, "%s/autotune export --db '%s' --with-cubins -o '%s' && "
             "%s/autotune import '%s' --db '%s' --jobs 2", th_build_dir(), src, json,
             th_build_dir(), json, dst);
    CHECK_MSG(th_run(cmd, &out) == 0, "%s", out);
    CHECK_MSG(strstr(out, "1 in the file: 0 verified") &&
              strstr(out, "1 dropped (0 not what this build compiles, 1 of another toolkit") &&
              strstr(out, "1 compiled here; 1 stored"), "%s", out);
    free(out);
    CHECK_OK(db_open(&d, dst, DB_OPEN_READONLY, err, sizeof err));
    void *cubin = NULL, *ref = NULL;
    size_t n = 0, n_ref = 0;
    char *log = NULL;
    CHECK_OK(db_get_binary(d, r.binary_key, &cubin, &n));
    CHECK_OK(tpl_compile(fam, cfg, "sm_90", &ref, &n_ref, &log));
    CHECK(n == n_ref && memcmp(cubin, ref, n) == 0);
    free(cubin);
    free(ref);
    free(log);
    db_close(d);
}

/* ---- cubins from elsewhere are checked against this build's compile ---- */

/* Two valid sum configurations of dev that compile to different cubins for
 * arch (a, b: NVRTC here, independent of the import's code). 1 if found. */
static int trv_two_cubins(const at_device_info *dev, int *cfg_a, char *text_a, int *cfg_b,
                          char *text_b, void **cubin_a, size_t *size_a, void **cubin_b,
                          size_t *size_b)
{
    const tpl_family *fam = tpl_find("sum");
    char *log = NULL;
    trv_config(fam, dev, 0, cfg_a, text_a);
    if (tpl_compile(fam, cfg_a, dev->arch, cubin_a, size_a, &log) != AT_OK)
        return 0;
    free(log);
    for (long long k = 1; k < 64; k++) {
        trv_config(fam, dev, 7 * k, cfg_b, text_b);
        log = NULL;
        if (tpl_compile(fam, cfg_b, dev->arch, cubin_b, size_b, &log) != AT_OK)
            return 0;
        free(log);
        if (*size_a != *size_b || memcmp(*cubin_a, *cubin_b, *size_a) != 0)
            return 1;
        free(*cubin_b);
    }
    return 0;
}

/* A database at name with dev, one ok sum result of config text on size n
 * and, under that configuration's key with this build's metadata (kernel,
 * source hash, NVRTC, arch, options), the given bytes. */
static int trv_cubin_db(const char *name, const at_device_info *dev, const int *cfg,
                        const char *text, long long n, const void *cubin, size_t size,
                        char *path, size_t len)
{
    db *d = trv_open(name, DB_OPEN_CREATE, path, len);
    if (!d)
        return 0;
    const tpl_family *fam = tpl_find("sum");
    db_result r;
    char options[4096];
    trv_result(&r, dev->uuid, fam, trv_problem(n), text, DB_OK, 0.01);
    tpl_binary_key(fam, cfg, dev->arch, r.binary_key, sizeof r.binary_key);
    tpl_options_string(fam, cfg, dev->arch, options, sizeof options);
    int ok = db_put_device(d, dev, tpl_nvrtc_version()) == AT_OK &&
             db_store_result(d, &r) == AT_OK &&
             db_put_binary(d, r.binary_key, fam->name, tpl_source_hash(fam), text, dev->arch,
                           tpl_nvrtc_version(), options, cubin, size) == AT_OK;
    db_close(d);
    return ok;
}

/* 1 if the database at path stores exactly want under key. */
static int trv_stored_is(const char *path, const char *key, const void *want, size_t size)
{
    char err[512];
    db *d = NULL;
    void *got = NULL;
    size_t n = 0;
    if (db_open(&d, path, DB_OPEN_READONLY, err, sizeof err) != AT_OK)
        return 0;
    int same = db_get_binary(d, key, &got, &n) == AT_OK && n == size &&
               memcmp(got, want, size) == 0;
    free(got);
    db_close(d);
    return same;
}

/* An export whose cubin under configuration A's key (every metadata field
 * right) holds another valid configuration's code, B's: the import drops
 * it and stores this build's compile of A; a genuine file's cubin is
 * verified and stored; with --no-compile neither is stored. */
TEST(travel_import_swapped_cubin_is_not_stored)
{
    at_device_info dev;
    trv_device(&dev, "GPU-swap", "NVIDIA H200", 9, 0);
    int cfg_a[TPL_MAX_PARAMS], cfg_b[TPL_MAX_PARAMS];
    char text_a[TPL_CONFIG_LEN], text_b[TPL_CONFIG_LEN], key[128];
    void *ca = NULL, *cb = NULL;
    size_t na = 0, nb = 0;
    CHECK_MSG(trv_two_cubins(&dev, cfg_a, text_a, cfg_b, text_b, &ca, &na, &cb, &nb),
              "no two sum configurations with different cubins");
    if (th_failed())
        return;
    tpl_binary_key(tpl_find("sum"), cfg_a, dev.arch, key, sizeof key);
    static const char *const flags[] = {"--jobs 2", "--jobs 2", "--no-compile"};
    for (int c = 0; c < 3; c++) {
        int genuine = c != 0;
        char src[4300], json[4300], dst[4300], name[64], cmd[40000], *out = NULL;
        snprintf(name, sizeof name, "swap-src-%d.db", c);
        CHECK(trv_cubin_db(name, &dev, cfg_a, text_a, 1048576, genuine ? ca : cb,
                           genuine ? na : nb, src, sizeof src));
        snprintf(json, sizeof json, "%s/swap-%d.json", th_tmpdir(), c);
        snprintf(dst, sizeof dst, "%s/swap-dst-%d.db", th_tmpdir(), c);
        snprintf(cmd, sizeof cmd, "%s/autotune export --db '%s' --with-cubins -o '%s' && "
                 "%s/autotune import '%s' --db '%s' %s", th_build_dir(), src, json,
                 th_build_dir(), json, dst, flags[c]);
        CHECK_MSG(th_run(cmd, &out) == 0, "%s", out);
        const char *want = c == 0 ? "1 in the file: 0 verified (this build compiles the same "
                                    "bytes), 1 dropped (1 not what this build compiles"
                         : c == 1 ? "1 in the file: 1 verified (this build compiles the same "
                                    "bytes), 0 dropped"
                                  : "1 in the file: 0 verified (this build compiles the same "
                                    "bytes), 1 dropped (0 not what this build compiles, 0 of "
                                    "another toolkit, source or arch, 1 not checked";
        const char *stored = c == 0 ? "1 compiled here; 1 stored"
                           : c == 1 ? "0 compiled here; 1 stored" : "0 compiled here; 0 stored";
        CHECK_MSG(strstr(out, want) && strstr(out, stored), "case %d: %s", c, out);
        free(out);
        /* what a lookup of A gets: this build's compile of A, never B's code */
        if (c < 2)
            CHECK_MSG(trv_stored_is(dst, key, ca, na), "case %d: the stored cubin of %s is not "
                      "this build's compile of it", c, text_a);
        CHECK(!trv_stored_is(dst, key, cb, nb));
        if (c == 2) {
            char err[512];
            db *d = NULL;
            void *got = NULL;
            size_t n = 0;
            CHECK_OK(db_open(&d, dst, DB_OPEN_READONLY, err, sizeof err));
            CHECK(db_get_binary(d, key, &got, &n) == AT_ERR_NOT_FOUND);
            db_close(d);
        }
    }
    free(ca);
    free(cb);
}

/* Merge: an input whose cubin under A's key is B's code and another whose
 * cubin under the same key is genuine: the genuine one is verified, the
 * swapped one dropped, a cubin no lookup serves dropped, and the stored
 * cubin is this build's compile of A; alone, the swapped input's cubin is
 * dropped and A compiled here. */
TEST(travel_merge_swapped_cubin_is_not_stored)
{
    at_device_info one, two;
    trv_device(&one, "GPU-merge-1", "NVIDIA H200", 9, 0);
    trv_device(&two, "GPU-merge-2", "NVIDIA H200", 9, 0);
    int cfg_a[TPL_MAX_PARAMS], cfg_b[TPL_MAX_PARAMS];
    char text_a[TPL_CONFIG_LEN], text_b[TPL_CONFIG_LEN], key[128];
    void *ca = NULL, *cb = NULL;
    size_t na = 0, nb = 0;
    CHECK_MSG(trv_two_cubins(&one, cfg_a, text_a, cfg_b, text_b, &ca, &na, &cb, &nb),
              "no two sum configurations with different cubins");
    if (th_failed())
        return;
    const tpl_family *fam = tpl_find("sum");
    tpl_binary_key(fam, cfg_a, one.arch, key, sizeof key);
    char swapped[4300], genuine[4300], out_db[4300], cmd[40000], *out = NULL;
    CHECK(trv_cubin_db("merge-swapped.db", &one, cfg_a, text_a, 4096, cb, nb, swapped,
                       sizeof swapped));
    CHECK(trv_cubin_db("merge-genuine.db", &two, cfg_a, text_a, 8192, ca, na, genuine,
                       sizeof genuine));
    /* B's own cubin under B's key, of a failed result: no lookup serves it */
    char err[512], key_b[128];
    db *d = NULL;
    CHECK_OK(db_open(&d, genuine, 0, err, sizeof err));
    db_result r;
    trv_result(&r, two.uuid, fam, trv_problem(8192), text_b, DB_WRONG_RESULT, 0);
    tpl_binary_key(fam, cfg_b, two.arch, key_b, sizeof key_b);
    CHECK_OK(db_store_result(d, &r));
    CHECK_OK(db_put_binary(d, key_b, "sum", tpl_source_hash(fam), text_b, two.arch,
                           tpl_nvrtc_version(), "", cb, nb));
    db_close(d);
    snprintf(out_db, sizeof out_db, "%s/merged-swap.db", th_tmpdir());
    snprintf(cmd, sizeof cmd, "%s/autotune merge '%s' '%s' -o '%s'", th_build_dir(), swapped,
             genuine, out_db);
    CHECK_MSG(th_run(cmd, &out) == 0, "%s", out);
    CHECK_MSG(strstr(out, "cubins: 3 in the inputs: 1 verified (this build compiles the same "
                     "bytes), 2 dropped (1 not what this build compiles, 1 not served") &&
              strstr(out, "0 compiled here; 1 stored"), "%s", out);
    free(out);
    CHECK(trv_stored_is(out_db, key, ca, na));
    CHECK(!trv_stored_is(out_db, key_b, cb, nb));
    /* the swapped input alone */
    snprintf(cmd, sizeof cmd, "%s/autotune merge '%s' -o '%s' --force", th_build_dir(), swapped,
             out_db);
    CHECK_MSG(th_run(cmd, &out) == 0, "%s", out);
    CHECK_MSG(strstr(out, "cubins: 1 in the inputs: 0 verified (this build compiles the same "
                     "bytes), 1 dropped (1 not what this build compiles") &&
              strstr(out, "1 compiled here; 1 stored"), "%s", out);
    free(out);
    CHECK(trv_stored_is(out_db, key, ca, na));
    free(ca);
    free(cb);
}

/* On the GPU: an export of this device's result for sum's configuration A
 * whose cubin is B's code is imported; at_ssum then runs this build's
 * compile of A (loaded from the database, not compiled by the handle) and
 * its sum matches a float64 reference. */
GPU_TEST(travel_gpu_swapped_cubin_import_runs_the_right_kernel)
{
    at_status s;
    char msg[512];
    const cudrv *cu = cudrv_get(&s, msg, sizeof msg);
    at_device_info dev;
    CHECK_MSG(cu && cudrv_device_info(cu, th_device(), &dev, msg, sizeof msg) == AT_OK, "%s",
              msg);
    if (th_failed())
        return;
    int cfg_a[TPL_MAX_PARAMS], cfg_b[TPL_MAX_PARAMS];
    char text_a[TPL_CONFIG_LEN], text_b[TPL_CONFIG_LEN], key[128];
    void *ca = NULL, *cb = NULL;
    size_t na = 0, nb = 0;
    CHECK(trv_two_cubins(&dev, cfg_a, text_a, cfg_b, text_b, &ca, &na, &cb, &nb));
    if (th_failed())
        return;
    tpl_binary_key(tpl_find("sum"), cfg_a, dev.arch, key, sizeof key);
    const long long n = 1 << 20;
    char src[4300], json[4300], dst[4300], cmd[40000], *out = NULL;
    CHECK(trv_cubin_db("gpu-swap-src.db", &dev, cfg_a, text_a, n, cb, nb, src, sizeof src));
    snprintf(json, sizeof json, "%s/gpu-swap.json", th_tmpdir());
    snprintf(dst, sizeof dst, "%s/gpu-swap-dst.db", th_tmpdir());
    snprintf(cmd, sizeof cmd, "%s/autotune export --db '%s' --with-cubins -o '%s' && "
             "%s/autotune import '%s' --db '%s'", th_build_dir(), src, json, th_build_dir(),
             json, dst);
    CHECK_MSG(th_run(cmd, &out) == 0 && strstr(out, "1 not what this build compiles"), "%s",
              out);
    free(out);
    CHECK(trv_stored_is(dst, key, ca, na));
    /* the call: the imported row's configuration, its cubin from the database */
    at_handle *h = NULL;
    CHECK_OK(at_create(&h, th_device(), dst));
    if (th_failed())
        return;
    CHECK_OK(at_set_trials(h, 0));
    float *x = malloc((size_t)n * sizeof *x);
    double want = 0, magnitude = 0;
    for (long long i = 0; i < n; i++) {
        x[i] = (float)((i * 7919 % 2001) - 1000) / 1000.0f;
        want += x[i];
        magnitude += fabs(x[i]);
    }
    /* the test's own allocations go to the device's primary context, the handle's */
    CUdevice device;
    CUcontext ctx = NULL, popped;
    CHECK(cu->DeviceGet(&device, th_device()) == CUDA_SUCCESS &&
          cu->DevicePrimaryCtxRetain(&ctx, device) == CUDA_SUCCESS &&
          cu->CtxPushCurrent(ctx) == CUDA_SUCCESS);
    CUdeviceptr dx = 0, dr = 0;
    CHECK(cu->MemAlloc(&dx, (size_t)n * sizeof *x) == CUDA_SUCCESS &&
          cu->MemAlloc(&dr, sizeof(float)) == CUDA_SUCCESS &&
          cu->MemcpyHtoD(dx, x, (size_t)n * sizeof *x) == CUDA_SUCCESS);
    float got = 0;
    CHECK_OK(at_ssum(h, n, (const float *)dx, (float *)dr));
    CHECK(cu->MemcpyDtoH(&got, dr, sizeof got) == CUDA_SUCCESS);
    CHECK_MSG(fabs(got - want) <= 1e-5 * magnitude, "sum %g, reference %g", got, want);
    at_stats st;
    CHECK_OK(at_get_stats(h, &st));
    CHECK_MSG(st.compiled == 0 && st.loaded >= 1 && strcmp(st.last_config, text_a) == 0,
              "compiled %d, loaded %d, config %s (want %s)", st.compiled, st.loaded,
              st.last_config, text_a);
    cu->MemFree(dx);
    cu->MemFree(dr);
    at_destroy(h);
    cu->CtxPopCurrent(&popped);
    cu->DevicePrimaryCtxRelease(device);
    free(x);
    free(ca);
    free(cb);
}

/* ---- merge ---- */

/* The generator's view of one row and the rule merge must follow. */
typedef struct trv_row {
    char uuid[48], model[64], config[64];
    long long n;
    int ok;
    double t;
    char created[32];
} trv_row;

/* 1 if x beats y under merge's rule: servable first, lower time, newer. */
static int trv_better(const trv_row *x, const trv_row *y)
{
    int sx = x->ok && x->t > 0, sy = y->ok && y->t > 0;
    if (sx != sy)
        return sx > sy;
    if (x->t != y->t)
        return x->t < y->t;
    return strcmp(x->created, y->created) > 0;
}

#define TRV_DBS 3
#define TRV_ROWS 60

/* Random databases from seed: 5 devices of 2 models (shared between the
 * databases, so keys collide), 4 sizes, 12 configurations, random times and
 * statuses; the rows written in rows[db][i]. */
static int trv_random_dbs(unsigned long long seed, char paths[TRV_DBS][4300],
                          trv_row rows[TRV_DBS][TRV_ROWS])
{
    tn_rng g;
    tn_rng_seed(&g, seed);
    static const char *const models[] = {"NVIDIA H200", "NVIDIA H100 80GB HBM3"};
    const tpl_family *fam = tpl_find("sum");
    for (int k = 0; k < TRV_DBS; k++) {
        char name[64];
        snprintf(name, sizeof name, "rand-%llu-%d.db", seed, k);
        db *d = trv_open(name, DB_OPEN_CREATE, paths[k], sizeof paths[k]);
        if (!d)
            return 0;
        for (int dv = 0; dv < 5; dv++) {
            at_device_info info;
            char uuid[48];
            snprintf(uuid, sizeof uuid, "GPU-rand-%d", dv);
            trv_device(&info, uuid, models[dv % 2], 9, 0);
            info.clock_khz = 1000 + k;   /* facts differ between the databases */
            if (db_put_device(d, &info, "13.0") != AT_OK)
                return 0;
        }
        for (int i = 0; i < TRV_ROWS; i++) {
            trv_row *w = &rows[k][i];
            memset(w, 0, sizeof *w);
            int dv = (int)tn_rng_below(&g, 5);
            snprintf(w->uuid, sizeof w->uuid, "GPU-rand-%d", dv);
            snprintf(w->model, sizeof w->model, "%s", models[dv % 2]);
            snprintf(w->config, sizeof w->config, "X=%d", (int)tn_rng_below(&g, 12));
            w->n = 1024ll << tn_rng_below(&g, 4);
            w->ok = tn_rng_below(&g, 4) != 0;
            /* distinct times (no ties for the rule to break) */
            w->t = w->ok && tn_rng_below(&g, 10) == 0 ? 0.0
                 : 0.001 * (double)(1 + tn_rng_below(&g, 1000000)) + 1e-9 * (k * TRV_ROWS + i);
            snprintf(w->created, sizeof w->created, "2026-11-%02uT10:00:%02u.%03uZ",
                     1u + (unsigned)tn_rng_below(&g, 28) % 28u,
                     (unsigned)tn_rng_below(&g, 60) % 60u, (unsigned)(k * 100 + i) % 1000u);
            db_result r;
            trv_result(&r, w->uuid, fam, trv_problem(w->n), w->config,
                       w->ok ? DB_OK : DB_WRONG_RESULT, w->t);
            if (db_store_result(d, &r) != AT_OK)
                return 0;
        }
        db_close(d);
        /* db_store_result stamps the time: put the generated ones back */
        sqlite3 *h = NULL;
        if (sqlite3_open(paths[k], &h) != SQLITE_OK)
            return 0;
        for (int i = 0; i < TRV_ROWS; i++) {
            char sql[512];
            /* in write order: a key written twice keeps the later row */
            snprintf(sql, sizeof sql, "UPDATE result SET created = '%s' WHERE config = '%s' "
                     "AND problem_id IN (SELECT id FROM problem WHERE d0 = %lld) AND "
                     "device_id IN (SELECT id FROM device WHERE uuid = '%s')",
                     rows[k][i].created, rows[k][i].config, rows[k][i].n, rows[k][i].uuid);
            sqlite3_exec(h, sql, NULL, NULL, NULL);
        }
        sqlite3_close(h);
    }
    return 1;
}

static int trv_same_key(const trv_row *a, const trv_row *b)
{
    return strcmp(a->uuid, b->uuid) == 0 && strcmp(a->config, b->config) == 0 && a->n == b->n;
}

/* The rows a database holds: per key, the last written. */
static int trv_effective(trv_row rows[TRV_ROWS], trv_row *out)
{
    int n = 0;
    for (int i = 0; i < TRV_ROWS; i++) {
        int k;
        for (k = 0; k < n && !trv_same_key(&out[k], &rows[i]); k++)
            ;
        out[k] = rows[i];
        n += k == n;
    }
    return n;
}

/* Merges the databases in the order given into a fresh database; its rows. */
static int trv_merge_order(const char paths[TRV_DBS][4300], const int *order, const char *name,
                           db_result **res, int *n)
{
    char out[4300], err[512];
    db *d = trv_open(name, DB_OPEN_CREATE, out, sizeof out);
    if (!d)
        return 0;
    for (int k = 0; k < TRV_DBS; k++) {
        db *in = NULL;
        if (db_open(&in, paths[order[k]], DB_OPEN_READONLY, err, sizeof err) != AT_OK ||
            db_merge(d, in, NULL) != AT_OK) {
            th_fail(__FILE__, __LINE__, "merge: %s %s", err, db_errmsg(d));
            db_close(in);
            db_close(d);
            return 0;
        }
        db_close(in);
    }
    int ok = db_results(d, NULL, NULL, res, n) == AT_OK;
    db_close(d);
    return ok;
}

static const db_result *trv_find(const db_result *res, int n, const trv_row *w)
{
    for (int i = 0; i < n; i++)
        if (strcmp(res[i].device_uuid, w->uuid) == 0 && strcmp(res[i].config, w->config) == 0 &&
            res[i].problem.dims[0] == w->n)
            return &res[i];
    return NULL;
}

/* For seeds 1..8: every key of every input is in the merge with the row
 * the rule picks, the best per (model, kernel, problem) is the best over
 * the inputs, nothing else is there, two orders give the same rows, and
 * the inputs are unchanged. */
TEST(travel_merge_random_databases)
{
    for (unsigned long long seed = 1; seed <= 8; seed++) {
        char paths[TRV_DBS][4300];
        static trv_row rows[TRV_DBS][TRV_ROWS], eff[TRV_DBS][TRV_ROWS];
        int n_eff[TRV_DBS];
        CHECK(trv_random_dbs(seed, paths, rows));
        char *before[TRV_DBS];
        size_t blen[TRV_DBS];
        for (int k = 0; k < TRV_DBS; k++) {
            n_eff[k] = trv_effective(rows[k], eff[k]);
            before[k] = trv_slurp(paths[k], &blen[k]);
        }
        static const int orders[2][TRV_DBS] = {{0, 1, 2}, {2, 0, 1}};
        db_result *res[2] = {NULL, NULL};
        int n[2] = {0, 0};
        for (int o = 0; o < 2; o++) {
            char name[64];
            snprintf(name, sizeof name, "merged-%llu-%d.db", seed, o);
            CHECK(trv_merge_order(paths, orders[o], name, &res[o], &n[o]));
        }
        /* the expected row of every key: the rule over the inputs */
        static trv_row want[TRV_DBS * TRV_ROWS];
        int n_want = 0;
        for (int k = 0; k < TRV_DBS; k++)
            for (int i = 0; i < n_eff[k]; i++) {
                int w;
                for (w = 0; w < n_want && !trv_same_key(&want[w], &eff[k][i]); w++)
                    ;
                if (w == n_want || trv_better(&eff[k][i], &want[w]))
                    want[w] = eff[k][i];
                n_want += w == n_want;
            }
        for (int o = 0; o < 2; o++) {
            CHECK_MSG(n[o] == n_want, "seed %llu: %d rows, %d keys in the inputs", seed, n[o],
                      n_want);
            for (int w = 0; w < n_want; w++) {
                const db_result *r = trv_find(res[o], n[o], &want[w]);
                CHECK_MSG(r && r->time_ms == want[w].t && strcmp(r->created, want[w].created) == 0 &&
                          (strcmp(r->status, DB_OK) == 0) == want[w].ok,
                          "seed %llu order %d: key %s %s %lld kept the wrong row", seed, o,
                          want[w].uuid, want[w].config, want[w].n);
            }
            /* best per model and size: the minimum over every input row */
            static const char *const models[] = {"NVIDIA H200", "NVIDIA H100 80GB HBM3"};
            for (int m = 0; m < 2; m++)
                for (long long size = 1024; size <= 8192; size *= 2) {
                    double in_best = INFINITY, out_best = INFINITY;
                    for (int k = 0; k < TRV_DBS; k++)
                        for (int i = 0; i < n_eff[k]; i++)
                            if (eff[k][i].ok && eff[k][i].t > 0 && eff[k][i].n == size &&
                                strcmp(eff[k][i].model, models[m]) == 0)
                                in_best = fmin(in_best, eff[k][i].t);
                    for (int i = 0; i < n[o]; i++) {
                        int dv = res[o][i].device_uuid[9] - '0';
                        if (strcmp(res[o][i].status, DB_OK) == 0 && res[o][i].time_ms > 0 &&
                            res[o][i].problem.dims[0] == size && dv % 2 == m)
                            out_best = fmin(out_best, res[o][i].time_ms);
                    }
                    CHECK_MSG(in_best == out_best, "seed %llu: best of %s at %lld: %g, inputs %g",
                              seed, models[m], size, out_best, in_best);
                }
        }
        char why[256];
        CHECK_MSG(trv_same_rows(res[0], n[0], res[1], n[1], why, sizeof why),
                  "seed %llu: the orders differ: %s", seed, why);
        for (int k = 0; k < TRV_DBS; k++) {
            size_t len = 0;
            char *after = trv_slurp(paths[k], &len);
            CHECK_MSG(after && len == blen[k] && memcmp(after, before[k], len) == 0,
                      "seed %llu: input %d changed", seed, k);
            free(after);
            free(before[k]);
        }
        free(res[0]);
        free(res[1]);
    }
}

/* The command: OUT must not exist without --force; the inputs are read
 * only; the merged database serves the lookups. */
TEST(travel_merge_command)
{
    char paths[TRV_DBS][4300], out[4300], cmd[40000], *text = NULL;
    static trv_row rows[TRV_DBS][TRV_ROWS];
    CHECK(trv_random_dbs(99, paths, rows));
    snprintf(out, sizeof out, "%s/out.db", th_tmpdir());
    snprintf(cmd, sizeof cmd, "%s/autotune merge '%s' '%s' '%s' -o '%s'", th_build_dir(),
             paths[0], paths[1], paths[2], out);
    CHECK_MSG(th_run(cmd, &text) == 0, "%s", text);
    free(text);
    CHECK_MSG(th_run(cmd, &text) == 1 && strstr(text, "exists"), "%s", text);
    free(text);
    strcat(cmd, " --force");
    CHECK_MSG(th_run(cmd, &text) == 0, "%s", text);
    free(text);
    char side[4400];
    snprintf(side, sizeof side, "%s-wal", out);
    CHECK(!trv_exists(side));
    snprintf(cmd, sizeof cmd, "%s/autotune merge '%s' -o '%s/x.db'", th_build_dir(),
             "/nonexistent/a.db", th_tmpdir());
    CHECK(th_run(cmd, &text) == 1);
    free(text);
    snprintf(cmd, sizeof cmd, "%s/autotune merge '%s'", th_build_dir(), paths[0]);
    CHECK(th_run(cmd, &text) == 2);
    free(text);
}

/* ---- shipped read-only databases ---- */

/* Stores an ok result of sum's k-th valid configuration for size n on uuid. */
static int trv_put(db *d, const char *uuid, long long n, long long k, double t, char *config)
{
    at_device_info dev;
    trv_device(&dev, "GPU-user", "NVIDIA H200", 9, 0);
    const tpl_family *fam = tpl_find("sum");
    int cfg[TPL_MAX_PARAMS];
    trv_config(fam, &dev, k, cfg, config);
    db_result r;
    trv_result(&r, uuid, fam, trv_problem(n), config, DB_OK, t);
    return db_store_result(d, &r) == AT_OK;
}

static long long trv_mtime_ns(const char *path)
{
    struct stat sb;
    if (stat(path, &sb) != 0)
        return -1;
    return (long long)sb.st_mtim.tv_sec * 1000000000ll + sb.st_mtim.tv_nsec;
}

/* Lookup order over the user's database and shipped ones (exact anywhere
 * beats nearest; equal levels: the user's, then the shipped in order); a
 * corrupt or missing shipped database is named and skipped; the shipped
 * files are never written, not even a side file beside them. */
TEST(travel_shipped_databases_under_the_users)
{
    char user[4300], s1[4300], s2[4300], bad[4400], missing[4400];
    char c_near[TPL_CONFIG_LEN], c_p[TPL_CONFIG_LEN], c_q_user[TPL_CONFIG_LEN];
    char c_q_ship[TPL_CONFIG_LEN], c_r[TPL_CONFIG_LEN];
    at_device_info dev, other;
    trv_device(&dev, "GPU-user", "NVIDIA H200", 9, 0);
    trv_device(&other, "GPU-other", "NVIDIA H100 80GB HBM3", 9, 0);
    db *u = trv_open("user.db", DB_OPEN_CREATE, user, sizeof user);
    db *a = trv_open("ship1.db", DB_OPEN_CREATE, s1, sizeof s1);
    db *b = trv_open("ship2.db", DB_OPEN_CREATE, s2, sizeof s2);
    CHECK(u && a && b);
    CHECK_OK(db_put_device(u, &dev, "13.0"));
    CHECK_OK(db_put_device(a, &dev, "13.0"));
    CHECK_OK(db_put_device(b, &other, "13.0"));
    /* P = 2^20: the user has only a nearby size, ship1 the exact one;
     * Q = 4096: both exact; R = 65536: only ship2, tuned on another model */
    CHECK(trv_put(u, "GPU-user", 2000000, 3, 1.0, c_near));
    CHECK(trv_put(a, "GPU-user", 1048576, 5, 1.0, c_p));
    CHECK(trv_put(u, "GPU-user", 4096, 7, 1.0, c_q_user));
    CHECK(trv_put(a, "GPU-user", 4096, 11, 0.5, c_q_ship));
    CHECK(trv_put(b, "GPU-other", 65536, 13, 1.0, c_r));
    db_close(a);
    db_close(b);
    snprintf(bad, sizeof bad, "%s/corrupt.db", th_tmpdir());
    snprintf(missing, sizeof missing, "%s/missing.db", th_tmpdir());
    CHECK(trv_write(bad, "this is not an SQLite database, just text\n", 42));
    size_t l1 = 0, l2 = 0;
    char *h1 = trv_slurp(s1, &l1), *h2 = trv_slurp(s2, &l2);
    long long m1 = trv_mtime_ns(s1), m2 = trv_mtime_ns(s2);
    char list[20000], msg[4096];
    snprintf(list, sizeof list, "%s:%s:%s:%s", s1, bad, missing, s2);
    db *layers[1 + AT_MAX_READONLY_DBS] = {u};
    int n = 1;
    lk_open_shipped(list, layers, &n, 1 + AT_MAX_READONLY_DBS, msg, sizeof msg);
    CHECK_EQ(n, 3);
    CHECK_MSG(strstr(msg, "corrupt.db") && strstr(msg, "missing.db") && !strstr(msg, "ship1"),
              "%s", msg);
    CHECK(db_is_readonly(layers[1]) && db_is_readonly(layers[2]));
    const tpl_family *fam = tpl_find("sum");
    struct { long long n; at_lookup_level level; int which; const char *config; } want[] = {
        {1048576, AT_LOOKUP_EXACT, 1, c_p},
        {4096, AT_LOOKUP_EXACT, 0, c_q_user},
        {65536, AT_LOOKUP_NEAREST, 0, c_q_user},  /* the user's nearest beats ARCH */
        {2100000, AT_LOOKUP_NEAREST, 0, c_near},
    };
    for (int i = 0; i < 4; i++) {
        tpl_problem p = trv_problem(want[i].n);
        int cfg[TPL_MAX_PARAMS], which = -9;
        char config[TPL_CONFIG_LEN];
        at_lookup_level level = lk_choose_layers(layers, n, &dev, fam, &p, 0, cfg, config, &which);
        CHECK_MSG(level == want[i].level && which == want[i].which &&
                  strcmp(config, want[i].config) == 0,
                  "n=%lld: level %d from %d (%s), expected %d from %d (%s)", want[i].n,
                  (int)level, which, config, (int)want[i].level, want[i].which, want[i].config);
    }
    /* without the user's database, on a third device of the arch: the
     * shipped ones at the ARCH level, the earlier first; defaults last */
    at_device_info third;
    trv_device(&third, "GPU-third", "NVIDIA GH200 480GB", 9, 0);
    layers[0] = NULL;
    tpl_problem p = trv_problem(100000);
    int cfg[TPL_MAX_PARAMS], which = -9;
    char config[TPL_CONFIG_LEN];
    CHECK(lk_choose_layers(layers, n, &third, fam, &p, 0, cfg, config, &which) ==
          AT_LOOKUP_ARCH && which == 1 && strcmp(config, c_p) == 0);
    db *only2[2] = {NULL, layers[2]};
    CHECK(lk_choose_layers(only2, 2, &third, fam, &p, 0, cfg, config, &which) ==
          AT_LOOKUP_ARCH && which == 1 && strcmp(config, c_r) == 0);
    CHECK(lk_choose_layers(layers, 0, &dev, fam, &p, 0, cfg, config, &which) ==
          AT_LOOKUP_DEFAULT && which == -1);
    /* a shipped handle refuses writes, even though its file is writable */
    db_result r;
    trv_result(&r, "GPU-user", fam, trv_problem(8), fam->default_config, DB_OK, 1.0);
    CHECK(db_store_result(layers[1], &r) == AT_ERR_DB);
    db_close(layers[1]);
    db_close(layers[2]);
    db_close(u);
    size_t a1 = 0, a2 = 0;
    char *g1 = trv_slurp(s1, &a1), *g2 = trv_slurp(s2, &a2);
    CHECK(g1 && g2 && a1 == l1 && a2 == l2 && memcmp(g1, h1, l1) == 0 &&
          memcmp(g2, h2, l2) == 0);
    CHECK(trv_mtime_ns(s1) == m1 && trv_mtime_ns(s2) == m2);
    char side[4400];
    const char *sfx[] = {"-wal", "-shm", "-journal"};
    for (int k = 0; k < 3; k++) {
        snprintf(side, sizeof side, "%s%s", s1, sfx[k]);
        CHECK_MSG(!trv_exists(side), "%s was made", side);
        snprintf(side, sizeof side, "%s%s", s2, sfx[k]);
        CHECK_MSG(!trv_exists(side), "%s was made", side);
    }
    free(h1);
    free(h2);
    free(g1);
    free(g2);
    CHECK(at_add_readonly_db(NULL, s1) == AT_ERR_INVALID_ARG);
}
