/* test_layers.c: CPU-tier tests of the include check (tools/layers.c): the
 * tree has no include from a lower layer to a higher one, and a synthetic
 * tree's upward, ambiguous and undeclared includes are each reported; and
 * of the call-cycle check (tools/calls.c) on tuner/ and synthetic folders. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include "harness.h"

/* The checker itself, without its main (one source for `make layers` and
 * this test, which reaches its ly_check without a separate build step). */
#define LY_NO_MAIN
#include "../tools/layers.c"
/* The call-cycle check of the tuner's files, the same way. */
#define CL_NO_MAIN
#include "../tools/calls.c"

/* Runs ly_check on root with table and skip; returns its rc, the text it
 * wrote in *text (malloc'd, caller frees) and its counts. */
static int run_check(const char *root, const char *table, const char *skip,
                     char **text, ly_counts *counts)
{
    size_t size = 0;
    *text = NULL;
    FILE *out = open_memstream(text, &size);
    if (!out)
        return -2;
    const char *skips[1] = {skip};
    int rc = ly_check(root, table, skips, skip ? 1 : 0, out, counts);
    fclose(out);
    return rc;
}

/* Writes text to root/rel, creating the folders on the way; 0 on success. */
static int put_file(const char *root, const char *rel, const char *text)
{
    char path[4600];
    snprintf(path, sizeof path, "%s/%s", root, rel);
    for (char *p = path + strlen(root) + 1; (p = strchr(p, '/')); p++) {
        *p = '\0';
        mkdir(path, 0700);
        *p = '/';
    }
    FILE *f = fopen(path, "w");
    if (!f)
        return -1;
    int rc = fputs(text, f) < 0;
    return fclose(f) != 0 || rc ? -1 : 0;
}

/* Counts the lines `#include "..."` under the current folder with grep (an
 * independent count of what the check must have read); -1 if grep fails. */
static int grep_quoted_includes(const char *build)
{
    const char *base = strrchr(build, '/') ? strrchr(build, '/') + 1 : build;
    char cmd[1024], *out = NULL;
    snprintf(cmd, sizeof cmd,
             "grep -rhE '^[[:space:]]*#[[:space:]]*include[[:space:]]*\"' "
             "--include='*.c' --include='*.h' --include='*.cu' --include='*.cuh' "
             "--exclude-dir='.[!.]*' --exclude-dir='%s' . | wc -l", base);
    int rc = th_run(cmd, &out);
    int n = rc == 0 && out ? atoi(out) : -1;
    free(out);
    return n;
}

TEST(layers_tree_has_no_upward_include)
{
    char *text;
    ly_counts counts;
    int rc = run_check(".", "tools/layers.txt", th_build_dir(), &text, &counts);
    if (rc != 0 || counts.violations != 0)
        fprintf(stderr, "%s", text ? text : "");
    free(text);
    CHECK_EQ(rc, 0);
    CHECK_EQ(counts.violations, 0);
    /* it read every quoted include of the tree, and found ours */
    int expected = grep_quoted_includes(th_build_dir());
    CHECK(expected > 50);
    CHECK_EQ(counts.includes + counts.unresolved, expected);
    CHECK(counts.includes > expected / 2);
}

TEST(layers_reports_upward_ambiguous_and_undeclared_includes)
{
    const char *root = th_tmpdir();
    FILE *real = fopen("tools/layers.txt", "r");
    CHECK(real != NULL);
    char table[8192];
    size_t n = fread(table, 1, sizeof table - 1, real);
    fclose(real);
    table[n] = '\0';
    /* the real table, on a tree of a few files; line numbers matter below */
    const char *files[][2] = {
        {"tools/layers.txt", table},
        {"runtime/autotune.h", "/* public */\n"},
        {"driver/low.h", "#include \"autotune.h\"\n"},
        {"driver/bad.c", "/* upward */\n#include \"low.h\"\n/* #include \"inner.h\" */\n"
                         "  #  include \"inner.h\"\n"},
        {"runtime/inner.h", "#include <stdio.h>\n#include \"low.h\"\n"},
        {"templates/fam.c", "#include \"low.h\"\n#include \"../runtime/inner.h\"\n"},
        {"db/dup.h", ""},
        {"tuner/dup.h", ""},
        {"reports/x.c", "#include \"dup.h\"\n"},
        {"newdir/extra.c", "// undeclared folder\n#include \"low.h\"\n"},
        {"tests/t.c", "#include \"inner.h\"\n#include \"dup.h\" // ambiguous too\n"},
        {"bench/b.cu", "#include \"generated.h\"\n#include \"../runtime/inner.h\"\n"},
        {"skipped/s.c", "#include \"low.h\"\n"},
    };
    for (size_t i = 0; i < sizeof files / sizeof files[0]; i++)
        CHECK_EQ(put_file(root, files[i][0], files[i][1]), 0);
    char table_path[4400];
    snprintf(table_path, sizeof table_path, "%s/tools/layers.txt", root);
    char *text;
    ly_counts counts;
    int rc = run_check(root, table_path, "skipped", &text, &counts);
    CHECK(text != NULL);
    fprintf(stderr, "%s", rc == 0 && counts.violations == 5 ? "" : text);
    int seen = strstr(text, "driver/bad.c:4: #include \"inner.h\" reaches up: runtime/inner.h "
                            "is layer 4") != NULL
               && strstr(text, "templates/fam.c:2: #include \"../runtime/inner.h\" reaches up")
               && strstr(text, "reports/x.c:1: #include \"dup.h\" is ambiguous")
               && strstr(text, "tests/t.c:2: #include \"dup.h\" is ambiguous")
               && strstr(text, "newdir/extra.c:2: the file is in no layer")
               && !strstr(text, "driver/bad.c:2") && !strstr(text, "driver/bad.c:3")
               && !strstr(text, "skipped/");
    free(text);
    CHECK_EQ(rc, 0);
    CHECK(seen);
    CHECK_EQ(counts.violations, 5);
    CHECK_EQ(counts.files, 11);
    CHECK_EQ(counts.unresolved, 1);
    CHECK_EQ(counts.includes, 11);
}

TEST(layers_rejects_a_bad_table)
{
    const char *root = th_tmpdir();
    char table_path[4400];
    snprintf(table_path, sizeof table_path, "%s/tools/layers.txt", root);
    CHECK_EQ(put_file(root, "tools/layers.txt", "1 driver/\ntwo runtime/\n"), 0);
    char *text;
    ly_counts counts;
    CHECK_EQ(run_check(root, table_path, NULL, &text, &counts), -1);
    CHECK(text && strstr(text, "layers.txt:2:"));
    free(text);
    /* a folder written without its '/' would silently match no file */
    CHECK_EQ(put_file(root, "tools/layers.txt", "0 tools\n"), 0);
    CHECK_EQ(run_check(root, table_path, NULL, &text, &counts), -1);
    CHECK(text && strstr(text, "layers.txt:1: tools is a folder"));
    free(text);
    snprintf(table_path, sizeof table_path, "%s/missing.txt", root);
    CHECK_EQ(run_check(root, table_path, NULL, &text, &counts), -1);
    free(text);
}

/* Runs cl_check on folder; its rc and the text it wrote (malloc'd). */
static int run_calls(const char *folder, int graph, char **text)
{
    size_t size = 0;
    *text = NULL;
    FILE *out = open_memstream(text, &size);
    if (!out)
        return -2;
    int rc = cl_check(folder, graph, out);
    fclose(out);
    return rc;
}

TEST(layers_tuner_files_call_in_no_cycle)
{
    char *text = NULL;
    CHECK_EQ(run_calls("tuner", 1, &text), 0);
    /* the graph was read: the driver calls the pipeline, the pipeline
     * never the driver (the cycle this check keeps out) */
    CHECK_MSG(text && strstr(text, "\ntune.c -> ") && strstr(text, "pipeline.c") &&
              strstr(text, "policy.c"), "%s", text ? text : "");
    const char *line = text ? strstr(text, "\npipeline.c ->") : NULL;
    const char *end = line ? strchr(line + 1, '\n') : NULL;
    CHECK(line && end);
    if (line && end) {
        char edges[1024];
        snprintf(edges, sizeof edges, "%.*s", (int)(end - line), line);
        CHECK_MSG(!strstr(edges, " tune.c"), "%s", edges);
    }
    free(text);
}

TEST(layers_call_check_finds_a_cycle_and_no_false_one)
{
    const char *root = th_tmpdir();
    char folder[4400];
    snprintf(folder, sizeof folder, "%s/calls", root);
    /* a -> b -> c -> a; a static function, a comment and a string naming
     * another file's function draw no edge; a declaration defines nothing */
    CHECK_EQ(put_file(root, "calls/a.c",
                      "int b_one(void);\nint a_one(void)\n{\n    return b_one();\n}\n"), 0);
    CHECK_EQ(put_file(root, "calls/b.c",
                      "int c_one(int x);\nint b_one(void)\n{\n    return c_one(1);\n}\n"), 0);
    CHECK_EQ(put_file(root, "calls/c.c",
                      "int a_one(void);\nint c_one(int x)\n{\n    return x ? a_one() : 0;\n}\n"),
             0);
    CHECK_EQ(put_file(root, "calls/d.c",
                      "static int a_one(void)\n{\n    return 0; /* b_one() */\n}\n"
                      "const char *d_one(void)\n{\n    return \"c_one()\";\n}\n"), 0);
    char *text = NULL;
    CHECK_EQ(run_calls(folder, 1, &text), 1);
    CHECK_MSG(text && strstr(text, "call cycle: a.c -> b.c -> c.c -> a.c") &&
              strstr(text, "d.c ->\n"), "%s", text ? text : "");
    free(text);
    /* the cycle broken: c calls nothing of a */
    CHECK_EQ(put_file(root, "calls/c.c", "int c_one(int x)\n{\n    return x;\n}\n"), 0);
    CHECK_EQ(run_calls(folder, 0, &text), 0);
    CHECK_MSG(text && !strstr(text, "cycle"), "%s", text ? text : "");
    free(text);
}

/* Lines of the file at path, -1 if it cannot be read. */
static long lines_of(const char *path)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return -1;
    long n = 0;
    for (int c; (c = fgetc(f)) != EOF;)
        n += c == '\n';
    fclose(f);
    return n;
}

/* No C source or header of the tree (library, tuner, tools, reports, benchmarks, tests) is
 * over 1000 lines; kernel sources (.cu) are exempt: a kernel stays in one file. The files come
 * from git (the tree's own, not build outputs); a file over the limit is named. */
#define LY_MAX_LINES 1000
TEST(layers_no_source_over_1000_lines)
{
    FILE *p = popen("git ls-files -- '*.c' '*.h' 2>/dev/null", "r");
    CHECK(p != NULL);
    char path[4096];
    int checked = 0;
    while (p && fgets(path, sizeof path, p)) {
        path[strcspn(path, "\n")] = '\0';
        long n = lines_of(path);
        CHECK_MSG(n >= 0, "cannot read %s", path);
        CHECK_MSG(n <= LY_MAX_LINES, "%s: %ld lines (at most %d)", path, n, LY_MAX_LINES);
        checked++;
    }
    int rc = p ? pclose(p) : -1;
    if (rc != 0 || checked == 0) {
        th_skip("not a git checkout: no file list to check");
        return;
    }
    CHECK(checked > 100);
}
