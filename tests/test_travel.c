/* test_travel.c: tuning results that travel: the JSON reader and writer,
 * export -> import round trips, bad input that must change nothing,
 * cubins that do not fit this build, a swapped cubin (another valid
 * kernel's code under a configuration's key) dropped by import and merge
 * (CPU tier); a swapped-cubin import followed by the call that must run the
 * right kernel (GPU tier). Merging: test_merge.c. */
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
#include "th_travel.h"
#include "tn.h"

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
