/* wanted.c: problems a run tunes before the defaults: those the runtime
 * recorded (heaviest first, `autotune --recorded`, `show --wanted`) and
 * the lines of a problem file (`--problems`, e.g. share/grid-hopper.txt). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "lookup.h"
#include "tune_core.h"

static const char *const wanted_level_names[] = {"none", "exact", "nearest", "arch", "default"};

static const char *wanted_level(int level)
{
    return level >= 0 && level <= 4 ? wanted_level_names[level] : "?";
}

/* Opens the database read-only; 0 and *d, 0 and *d NULL when it does not
 * exist, 1 after a message. */
static int wanted_open(const char *db_path, db **d, char *path, size_t len)
{
    char err[1024];
    tn_db_path(db_path, path, len);
    *d = NULL;
    at_status s = db_open(d, path, DB_OPEN_READONLY, err, sizeof err);
    if (s == AT_ERR_NOT_FOUND)
        return 0;
    if (s != AT_OK) {
        fprintf(stderr, "autotune: cannot open the database %s: %s\n", path, err);
        return 1;
    }
    return 0;
}

/* Appends (fam, p) to the items, growing the array (*cap entries); -1 if out of memory. */
static int items_push(tn_first **items, int *n, int *cap, const tpl_family *fam,
                      const tpl_problem *p)
{
    if (*n == *cap) {
        int bigger_cap = *cap ? *cap * 2 : 64;
        tn_first *bigger = realloc(*items, (size_t)bigger_cap * sizeof *bigger);
        if (!bigger)
            return -1;
        *items = bigger;
        *cap = bigger_cap;
    }
    (*items)[*n].fam = fam;
    (*items)[(*n)++].problem = *p;
    return 0;
}

/* 1 if (fam, p) is already among the items. */
static int items_have(const tn_first *items, int n, const tpl_family *fam, const tpl_problem *p)
{
    for (int k = 0; k < n; k++)
        if (items[k].fam == fam && tpl_problem_equal(&items[k].problem, p))
            return 1;
    return 0;
}

int tn_recorded_items(const char *db_path, tn_first **items, int *n)
{
    char path[4096];
    db *d = NULL;
    *items = NULL;
    *n = 0;
    if (wanted_open(db_path, &d, path, sizeof path) != 0)
        return 1;
    if (!d)
        return 0;
    db_recorded *rows = NULL;
    int n_rows = 0;
    if (db_wanted(d, NULL, 0, &rows, &n_rows) != AT_OK) {
        fprintf(stderr, "autotune: reading the recorded problems of %s: %s\n", path,
                db_errmsg(d));
        db_close(d);
        return 1;
    }
    db_close(d);
    int cap = 0;
    for (int i = 0; i < n_rows; i++) {
        const tpl_problem *p = &rows[i].problem;
        const tpl_family *fam = tpl_find(rows[i].kernel);
        if (!fam || !tpl_family_accepts(fam, p))
            continue;                /* a kernel or kind this build does not have */
        /* the family that served the call first; for a GEMM call every other family the
         * runtime chooses among, so the measurement (not the family that happened to serve it)
         * decides which one serves the shape from now on. Each (family, problem) once: one
         * model's rows come after another's */
        const tpl_family *cands[16];
        int n_cands = p->n_dims == 3 ? lk_gemm_families(p, NULL, cands, 16) : 0, is_gemm = 0;
        for (int c = 0; c < n_cands; c++)
            is_gemm |= cands[c] == fam;
        int oom = !items_have(*items, *n, fam, p) && items_push(items, n, &cap, fam, p) != 0;
        for (int c = 0; is_gemm && !oom && c < n_cands; c++)
            if (tpl_family_accepts(cands[c], p) && !items_have(*items, *n, cands[c], p))
                oom = items_push(items, n, &cap, cands[c], p) != 0;
        if (oom) {
            free(rows);
            fprintf(stderr, "autotune: out of memory\n");
            return 1;
        }
    }
    free(rows);
    return 0;
}

/* Splits a line into an optional family name and the problem text; the
 * family NULL when the line is only a problem. 0, or -1 with why. */
static int parse_problem_line(char *line, const tpl_family **fam, tpl_problem *p, char *why,
                              size_t len)
{
    char *text = line, *space = strpbrk(line, " \t");
    *fam = NULL;
    if (space) {
        *space = '\0';
        text = space + 1;
        while (*text == ' ' || *text == '\t')
            text++;
        *fam = tpl_find(line);
        if (!*fam) {
            snprintf(why, len, "unknown kernel '%s'", line);
            return -1;
        }
    }
    char err[256];
    if (tpl_problem_parse(text, p, err, sizeof err) != AT_OK) {
        snprintf(why, len, "bad problem '%s': %s", text, err);
        return -1;
    }
    return 0;
}

int tn_problem_file_items(const char *file, const tn_options *o, tn_first **items, int *n)
{
    *items = NULL;
    *n = 0;
    FILE *f = fopen(file, "r");
    if (!f) {
        fprintf(stderr, "autotune: cannot read %s: %s\n", file, strerror(errno));
        return 1;
    }
    char line[512], why[512];
    int cap = 0, lineno = 0, rc = 0;
    while (rc == 0 && fgets(line, sizeof line, f)) {
        lineno++;
        char *hash = strchr(line, '#');
        if (hash)
            *hash = '\0';
        size_t end = strlen(line);
        while (end > 0 && strchr(" \t\r\n", line[end - 1]))
            line[--end] = '\0';
        char *start = line;
        while (*start == ' ' || *start == '\t')
            start++;
        if (!*start)
            continue;
        const tpl_family *only = NULL;
        tpl_problem p;
        if (parse_problem_line(start, &only, &p, why, sizeof why) != 0) {
            fprintf(stderr, "autotune: %s:%d: %s\n", file, lineno, why);
            rc = 2;
            break;
        }
        /* a GEMM line without a family: the families the runtime chooses among for it (a
         * batch's bgemm, never bgemm for one product); any other line: every family */
        const tpl_family *gemm[16];
        int n_gemm = !only && p.n_dims == 3 ? lk_gemm_families(&p, NULL, gemm, 16) : 0;
        int takers = 0;
        for (int i = 0; i < tpl_family_count() && rc == 0; i++) {
            const tpl_family *fam = tpl_family_at(i);
            int candidate = n_gemm == 0;
            for (int g = 0; g < n_gemm && !candidate; g++)
                candidate = gemm[g] == fam;
            if ((only && fam != only) || !candidate || !tn_family_selected(o, fam) ||
                !tpl_family_accepts(fam, &p))
                continue;
            takers++;
            if (items_push(items, n, &cap, fam, &p) != 0) {
                fprintf(stderr, "autotune: out of memory\n");
                rc = 1;
                break;
            }
        }
        if (rc == 0 && takers == 0 && (only || o->n_families == 0)) {
            fprintf(stderr, "autotune: %s:%d: no %s computes this problem\n", file, lineno,
                    only ? only->name : "selected kernel");
            rc = 2;
        }
    }
    if (rc == 0 && ferror(f)) {
        fprintf(stderr, "autotune: cannot read %s\n", file);
        rc = 1;
    }
    fclose(f);
    if (rc != 0) {
        free(*items);
        *items = NULL;
        *n = 0;
    }
    return rc;
}

int tn_show_wanted(const char *db_path, int with_done)
{
    char path[4096];
    db *d = NULL;
    if (wanted_open(db_path, &d, path, sizeof path) != 0)
        return 1;
    if (!d) {
        printf("nothing recorded: %s does not exist\n", path);
        return 0;
    }
    db_recorded *rows = NULL;
    int n = 0;
    if (db_wanted(d, NULL, with_done, &rows, &n) != AT_OK) {
        fprintf(stderr, "autotune: reading the recorded problems of %s: %s\n", path,
                db_errmsg(d));
        db_close(d);
        return 1;
    }
    db_close(d);
    if (n == 0)
        printf("no recorded problem %sin %s\n", with_done ? "" : "waits for tuning ", path);
    else
        printf("%-8s %-32s %12s %12s %-8s %-5s %s\n", "kernel", "problem", "calls",
               "time_ms", "served", "done", "device");
    for (int i = 0; i < n; i++) {
        char size[64];
        tn_format_size(&rows[i].problem, size, sizeof size);
        printf("%-8s %-32s %12lld %12.3f %-8s %-5s %s\n", rows[i].kernel, size, rows[i].calls,
               rows[i].time_ms, wanted_level(rows[i].level), rows[i].done ? "yes" : "no",
               rows[i].model);
    }
    if (n > 0)
        printf("(time: calls x an estimate per call from the work and the device's peak "
               "rates; served: the lookup level that served the calls)\n");
    free(rows);
    return 0;
}
