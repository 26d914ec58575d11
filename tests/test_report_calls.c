/* test_report_calls.c: CPU tests of the random-calls section of the HTML report (bench_calls
 * --tsv tables read as data): the numbers against hand-computed ones, escaping, and bad files
 * that fail the report and write nothing. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "harness.h"
#include "report.h"
#include "th_db.h"

/* bench_calls' header (the columns it writes, in its order). */
static const char rc_header[] =
    "i\ttype\torder\tops\tm\tn\tk\tbatch\tours_us\tcublas_us\tratio\tloop_ours_us\t"
    "loop_cublas_us\tlevel\tvendor\terror\tconfig\tours_read_gbs\tcublas_read_gbs\tours_of_sum\t"
    "call\n";

/* A row of that header: type, cuBLAS's time, the ratio, vendor, the call text. */
static void rc_row(FILE *f, int i, const char *type, const char *cublas_us, const char *ratio,
                   const char *vendor, const char *call)
{
    fprintf(f, "%d\t%s\trow\tNN\t100\t200\t300\t1\t1.0\t%s\t%s\t-1.00\t-1.00\t2\t%s\t0\tX=1\t"
               "1\t1\tnan\t%s\n", i, type, cublas_us, ratio, vendor, call);
}

/* Writes a table at name under the test's folder (path into out); its rows as given. */
static void rc_write(char *out, size_t len, const char *name, const char *header,
                     const char *rows)
{
    tdb_path(out, len, name);
    FILE *f = fopen(out, "w");
    if (!f)
        return;
    fputs(header, f);
    fputs(rows, f);
    fclose(f);
}

static int rc_count(const char *hay, const char *needle)
{
    int n = 0;
    for (const char *p = hay; p && (p = strstr(p, needle)) != NULL; p += strlen(needle))
        n++;
    return n;
}

/* A database with one stored result, so that the report has something of its own. */
static db *rc_db(char *path, size_t len)
{
    db *d = tdb_fresh(path, len);
    const tpl_family *mm = tpl_find("matmul");
    if (!d || !mm)
        return d;
    tpl_problem p = tdb_problem(3, 1024, 1024, 1024);
    if (tdb_store_measured(d, "GPU-A", mm, &p, mm->baselines[0].config, 0.1) != AT_OK) {
        db_close(d);
        return NULL;
    }
    return d;
}

TEST(report_random_calls_table_and_scatter)
{
    char tsv[4300], dbpath[4300], out[4300], err[512] = "";
    tdb_path(tsv, sizeof tsv, "calls.tsv");
    FILE *f = fopen(tsv, "w");
    CHECK(f != NULL);
    if (!f)
        return;
    fputs(rc_header, f);
    rc_row(f, 0, "bf16", "12.5", "0.5", "0", "100x200x300:bf16");
    rc_row(f, 1, "bf16", "250", "2.0", "0", "100x200x300:bf16:NT");
    rc_row(f, 2, "fp32", "40", "0.4", "0", "<b>x</b>");
    rc_row(f, 3, "fp32", "3000", "1.0", "1", "100x200x300:b64");
    fclose(f);
    db *d = rc_db(dbpath, sizeof dbpath);
    CHECK(d != NULL);
    if (!d)
        return;
    tdb_path(out, sizeof out, "calls.html");
    const char *files[1] = {tsv};
    at_status s = rp_write_calls(d, out, NULL, files, 1, err, sizeof err);
    db_close(d);
    CHECK_MSG(s == AT_OK, "rp_write_calls: %s (%s)", at_status_string(s), err);
    size_t size = 0;
    char *html = (char *)tdb_slurp(out, &size);
    CHECK(html != NULL);
    if (!html)
        return;
    const char *sec = strstr(html, "<h2 id=\"calls\">Random calls against cuBLAS</h2>");
    CHECK_MSG(sec != NULL, "no section");
    CHECK(strstr(html, "<a href=\"#calls\">") != NULL);
    /* by hand: bf16 0.5 and 2 (geomean 1, lowest 0.5: not below 0.5, below 0.8 and 0.95);
     * fp32 0.4 and 1 (geomean sqrt 0.4 = 0.632, one below each edge, one served by cuBLAS);
     * all four: (0.5 * 2 * 0.4 * 1)^(1/4) = 0.795 */
    const char *want[] = {
        ">bf16</td><td class=\"n\">2</td><td class=\"n\">1.000x</td>"
        "<td class=\"n\">0.500x</td><td class=\"n\">0</td><td class=\"n\">1</td>"
        "<td class=\"n\">1</td><td class=\"n\">0</td></tr>",
        ">fp32</td><td class=\"n\">2</td><td class=\"n fail\">0.632x</td>"
        "<td class=\"n fail\">0.400x</td><td class=\"n\">1</td><td class=\"n\">1</td>"
        "<td class=\"n\">1</td><td class=\"n\">1</td></tr>",
        "<td>all</td><td class=\"n\">4</td><td class=\"n fail\">0.795x</td>"
        "<td class=\"n fail\">0.400x</td><td class=\"n\">1</td><td class=\"n\">2</td>"
        "<td class=\"n\">2</td><td class=\"n\">1</td></tr>",
        "&lt;b&gt;x&lt;/b&gt;: 0.400x (cuBLAS 40.0 us)",
        "100x200x300:b64: 1.000x (cuBLAS 3000.0 us), served by cuBLAS",
        "calls.tsv</h3>",
    };
    for (size_t i = 0; sec && i < sizeof want / sizeof want[0]; i++)
        CHECK_MSG(strstr(sec, want[i]) != NULL, "no \"%s\" in the section", want[i]);
    CHECK(!strstr(html, "<b>x</b>"));
    /* one dot per call, in the section's own chart */
    const char *end = sec ? strstr(sec, "</div>") : NULL;
    if (sec && end) {
        char *part = strndup(sec, (size_t)(end - sec));
        CHECK(part && rc_count(part, "<circle") == 4);
        free(part);
    }
    free(html);
}

TEST(report_random_calls_bad_files_write_nothing)
{
    char dbpath[4300], out[4300], bad[4300], err[512];
    db *d = rc_db(dbpath, sizeof dbpath);
    CHECK(d != NULL);
    if (!d)
        return;
    tdb_path(out, sizeof out, "kept.html");
    FILE *f = fopen(out, "w");
    CHECK(f != NULL);
    if (f) {
        fputs("an earlier report", f);
        fclose(f);
    }
    struct {
        const char *name, *header, *rows, *said;
    } cases[] = {
        {"nocol.tsv", "i\ttype\tratio\tvendor\tcall\n", "", "no column \"cublas_us\""},
        {"nan.tsv", rc_header,
         "0\tbf16\trow\tNN\t1\t1\t1\t1\t1\t12\tnan\t1\t1\t2\t0\t0\tX=1\t1\t1\tnan\tc\n",
         "line 2: cublas_us \"12\" and ratio \"nan\""},
        {"type.tsv", rc_header,
         "0\tint8\trow\tNN\t1\t1\t1\t1\t1\t12\t1.5\t1\t1\t2\t0\t0\tX=1\t1\t1\tnan\tc\n",
         "line 2: type \"int8\""},
        {"vendor.tsv", rc_header,
         "0\tbf16\trow\tNN\t1\t1\t1\t1\t1\t12\t1.5\t1\t1\t2\t2\t0\tX=1\t1\t1\tnan\tc\n",
         "line 2: vendor \"2\""},
        {"short.tsv", rc_header, "0\tbf16\trow\n", "line 2: 3 fields"},
        {"empty.tsv", rc_header, "", "no calls"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        rc_write(bad, sizeof bad, cases[i].name, cases[i].header, cases[i].rows);
        const char *files[1] = {bad};
        err[0] = '\0';
        at_status s = rp_write_calls(d, out, NULL, files, 1, err, sizeof err);
        CHECK_MSG(s == AT_ERR_INVALID_ARG && strstr(err, cases[i].name) &&
                  strstr(err, cases[i].said), "%s: %s (%s)", cases[i].name,
                  at_status_string(s), err);
    }
    const char *missing[1] = {"/nonexistent-autotune-dir/calls.tsv"};
    CHECK_EQ(rp_write_calls(d, out, NULL, missing, 1, err, sizeof err), AT_ERR_IO);
    CHECK(strstr(err, "nonexistent-autotune-dir") != NULL);
    CHECK_EQ(rp_write_calls(d, out, NULL, missing, RP_CALLS_MAX_FILES + 1, err, sizeof err),
             AT_ERR_INVALID_ARG);
    db_close(d);
    size_t size = 0;
    char *kept = (char *)tdb_slurp(out, &size);
    CHECK_MSG(kept && size == strlen("an earlier report") &&
              memcmp(kept, "an earlier report", size) == 0, "the earlier report was changed");
    free(kept);
}

TEST(report_random_calls_through_the_cli)
{
    char dbpath[4300], good[4300], bad[4300], out[4300], cmd[20000], *text = NULL;
    db *d = rc_db(dbpath, sizeof dbpath);
    CHECK(d != NULL);
    if (!d)
        return;
    db_close(d);
    rc_write(good, sizeof good, "cli.tsv", rc_header,
             "0\tfp64\trow\tNN\t1\t1\t1\t1\t1\t12\t1.25\t1\t1\t2\t0\t0\tX=1\t1\t1\tnan\tc\n");
    rc_write(bad, sizeof bad, "cli-bad.tsv", "type\tratio\n", "");
    tdb_path(out, sizeof out, "cli.html");
    snprintf(cmd, sizeof cmd, "%s/autotune report -o '%s' --db '%s' --calls '%s' 2>&1",
             th_build_dir(), out, dbpath, good);
    CHECK_EQ(th_run(cmd, &text), 0);
    CHECK_MSG(text && strstr(text, "wrote "), "%s", text ? text : "");
    free(text);
    snprintf(cmd, sizeof cmd, "%s/autotune report -o '%s' --db '%s' --calls '%s' 2>&1",
             th_build_dir(), out, dbpath, bad);
    CHECK_EQ(th_run(cmd, &text), 1);
    CHECK_MSG(text && strstr(text, "cli-bad.tsv line 1: the header has no column"), "%s",
              text ? text : "");
    free(text);
    snprintf(cmd, sizeof cmd, "%s/autotune report -o '%s' --db '%s' --calls 2>&1",
             th_build_dir(), out, dbpath);
    CHECK_EQ(th_run(cmd, &text), 2);
    free(text);
    size_t size = 0;
    char *html = (char *)tdb_slurp(out, &size);
    CHECK(html && strstr(html, ">fp64</td><td class=\"n\">1</td><td class=\"n\">1.250x</td>"));
    free(html);
}

TEST(report_random_calls_alone_from_a_database_without_results)
{
    char dbpath[4300], tsv[4300], out[4300], err[512] = "";
    db *d = tdb_fresh(dbpath, sizeof dbpath);         /* a device, no results */
    CHECK(d != NULL);
    if (!d)
        return;
    rc_write(tsv, sizeof tsv, "alone.tsv", rc_header,
             "0\ttf32\trow\tNN\t1\t1\t1\t1\t1\t12\t0.9\t1\t1\t2\t0\t0\tX=1\t1\t1\tnan\tc\n");
    tdb_path(out, sizeof out, "alone.html");
    CHECK_EQ(rp_write(d, out, NULL, err, sizeof err), AT_ERR_NOT_FOUND);   /* nothing to show */
    const char *files[1] = {tsv};
    at_status s = rp_write_calls(d, out, NULL, files, 1, err, sizeof err);
    CHECK_MSG(s == AT_OK, "%s (%s)", at_status_string(s), err);
    CHECK_EQ(rp_write_calls(d, out, "GPU-unknown", files, 1, err, sizeof err), AT_ERR_NOT_FOUND);
    db_close(d);
    size_t size = 0;
    char *html = (char *)tdb_slurp(out, &size);
    CHECK(html && strstr(html, "<h2 id=\"calls\">") && !strstr(html, "id=\"glance\"") &&
          rc_count(html, "<circle") == 1);
    CHECK(html && strstr(html, ">tf32</td><td class=\"n\">1</td><td class=\"n\">0.900x</td>"));
    free(html);
}
