/* cli.c: the `autotune` command line: tune (default), list, show, report,
 * check, gc, the hidden worker modes, --help and --version; exit 0/1/2. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "cudrv.h"
#include "lookup.h"
#include "report.h"
#include "strategy.h"
#include "tn.h"

#define EXIT_USAGE 2
#define GC_KEEP_RECENT 100          /* gc's default --keep-recent */
#define CLI_STR2(x) #x
#define CLI_STR(x) CLI_STR2(x)

static const char usage_text[] =
    "usage: autotune [--device N] [options]     tune kernels on CUDA device N\n"
    "       autotune list [--kernel NAME]        families, parameters, spaces, sizes\n"
    "       autotune show [--kernel NAME] [--db PATH] [--all]\n"
    "                                            best result per problem (--all: every\n"
    "                                            result, tab-separated, first)\n"
    "       autotune show --wanted [--all] [--db PATH]\n"
    "                                            problems programs called that were\n"
    "                                            served below the exact level, not\n"
    "                                            tuned since, heaviest first (--all:\n"
    "                                            the tuned ones too)\n"
    "       autotune report -o FILE.html [--db PATH] [--calls FILE.tsv]...\n"
    "                                            self-contained HTML report (--calls: bench_calls\n"
    "                                            --tsv tables of random calls, up to 8)\n"
    "       autotune check --arch sm_XX [--kernel NAME] [--jobs N] [--sample]\n"
    "                                            compile every valid configuration\n"
    "                                            with NVRTC (no GPU needed); --sample:\n"
    "                                            only the default, baselines and a\n"
    "                                            sample with every parameter value\n"
    "       autotune gc [--db PATH] [--dry-run] [--keep-recent N]\n"
    "                                            reclaim space: delete the stored\n"
    "                                            cubins no lookup can serve, VACUUM\n"
    "       autotune export -o FILE.json [--db PATH] [--device UUID] [--model NAME]\n"
    "                       [--kernel NAME] [--with-cubins]   results as JSON (-o -:\n"
    "                                            to stdout)\n"
    "       autotune import FILE.json [--db PATH] [--no-compile] [--jobs N]\n"
    "                                            store an export (a cubin is kept only\n"
    "                                            if this build compiles the same bytes)\n"
    "       autotune merge A.db B.db ... -o OUT.db [--force]\n"
    "                                            every result of every input, the\n"
    "                                            better row of a key in both; cubins\n"
    "                                            compiled here and checked likewise\n"
    "       autotune export --configs-only --shipped -o FILE.json [--per-problem N]\n"
    "                                            the N best verified configurations\n"
    "                                            per problem (default 3), no cubins:\n"
    "                                            the shipped tuning data\n"
    "       autotune ship-build FILE.json -o OUT.db [--per-problem N] [--jobs N]\n"
    "                                            a read-only database from it, the best\n"
    "                                            N per problem compiled here (default 1)\n"
    "\n"
    "Tuning options:\n"
    "  --device N             CUDA device ordinal (default 0)\n"
    "  --device all, --device 0,1,...\n"
    "                         tune these GPUs at once, a worker each; GPUs of\n"
    "                         one model (name, arch, memory) split each search\n"
    "                         (each result stored under the GPU that measured\n"
    "                         it, lookups treat the model as one), other models\n"
    "                         are tuned on their own\n"
    "  --kernel NAME[,NAME]   only these families (default: every family)\n"
    "  --size SIZE            one problem size instead of the defaults:\n"
    "                         MxNxK for matmul (4096x4096x4096), N for sum,\n"
    "                         dot and jacobi (1048576)\n"
    "  --recorded             only the problems programs called that were served\n"
    "                         below the exact level (autotune show --wanted),\n"
    "                         heaviest first; without it a run tunes them first,\n"
    "                         then the default sizes; --budget holds per problem\n"
    "  --problems FILE        only the problems of FILE, in order: one per line\n"
    "                         as --size takes it, optionally after a kernel name\n"
    "                         (share/grid-hopper.txt: the shipped database's grid)\n"
    "  --strategy NAME        exhaustive | random | anneal | surrogate (default:\n"
    "                         exhaustive when at most 300 configurations are\n"
    "                         valid, else surrogate, alias guided: a cost model\n"
    "                         of the parameter values picks each next one);\n"
    "                         the searches without --budget stop after 120\n"
    "                         evaluations or a share of about 80 s per run, by\n"
    "                         family parameter count\n"
    "  --budget B             per problem: SECONDS (\"60\", \"60s\", \"2m\") or a\n"
    "                         number of evaluations (\"200e\", \"200evals\");\n"
    "                         evaluations stored by earlier runs count\n"
    "  --timeout S            watchdog per configuration in seconds (default:\n"
    "                         max(2 s, 20x the best time so far x runs))\n"
    "  --jobs N               NVRTC compile threads (default: CPU cores)\n"
    "  --db PATH              tuning database (default $AUTOTUNE_DB, else\n"
    "                         $XDG_CACHE_HOME/autotune/tuning.db, else\n"
    "                         ~/.cache/autotune/tuning.db)\n"
    "  --seed N               inputs and search order (default: from the clock)\n"
    "  --quiet                no progress line\n"
    "  --keep-all-cubins      keep every compiled cubin (default: a run that\n"
    "                         completes keeps those lookups can serve, as gc)\n"
    "  --help, --version\n"
    "\n"
    "Every problem also runs the family's default and seed configurations.\n"
    "Once a family's problems are done, each earlier one also measures the\n"
    "winners of the later sizes it has not measured (a second look: their\n"
    "cubins are stored, nothing compiles), and keeps the faster.\n"
    "The announced best changes only when a challenger's median beats it by\n"
    "more than the noise (the larger median - min of the two); the database\n"
    "keeps every measurement and its best is the lowest median.\n"
    "A configuration that crashes or hangs the GPU worker is recorded as\n"
    "crashed/timeout and the search goes on. A worker that dies in any step\n"
    "is restarted and the step tried once more (a configuration on which it\n"
    "dies twice is recorded as crashed; a size whose inputs it cannot prepare\n"
    "twice is skipped, exit 1); only a worker that cannot start ends the run.\n"
    "^C stops after the current configuration; rerunning the same command\n"
    "resumes. Exit status: 0 ok, 1 failure, 2 usage, 130 interrupted.\n"
    "\n"
    "A tuning run ends with the database's size. gc keeps the cubin of every\n"
    "result a lookup can serve (per device or architecture, kernel and size,\n"
    "the " CLI_STR(LK_PER_PROBLEM) " fastest and the " CLI_STR(LK_PER_PROBLEM)
    " fastest deterministic configurations) and those\n"
    "of the N newest results and cubins (--keep-recent, default "
    CLI_STR(GC_KEEP_RECENT) "); it\n"
    "deletes the other cubins, never a result (a program that needs one\n"
    "compiles it again), then VACUUMs and prints the size before and after;\n"
    "--dry-run only counts. A read-only database is refused (exit 1).\n";

static int usage_error(const char *fmt, const char *arg)
{
    fprintf(stderr, "autotune: ");
    fprintf(stderr, fmt, arg);
    fprintf(stderr, "; see autotune --help\n");
    return EXIT_USAGE;
}

/* Option value: "--opt value" or "--opt=value". Returns the value or NULL
 * (then *bad is set when the option matched but had no value). */
static const char *opt_value(int argc, char **argv, int *i, const char *name, int *matched)
{
    size_t n = strlen(name);
    *matched = 0;
    if (strncmp(argv[*i], name, n) != 0)
        return NULL;
    if (argv[*i][n] == '=') {
        *matched = 1;
        return argv[*i] + n + 1;
    }
    if (argv[*i][n] != '\0')
        return NULL;
    *matched = 1;
    if (*i + 1 >= argc)
        return NULL;
    return argv[++*i];
}

static int parse_int(const char *s, long long lo, long long hi, long long *out)
{
    if (!s || !*s)
        return -1;
    char *end;
    errno = 0;
    long long v = strtoll(s, &end, 10);
    if (errno || *end || v < lo || v > hi)
        return -1;
    *out = v;
    return 0;
}

/* Parses "a,b,c" kernel names into fams; 0, or an exit code after a message. */
static int parse_kernels(const char *list, const tpl_family **fams, int *n, int max)
{
    char buf[512];
    snprintf(buf, sizeof buf, "%s", list);
    *n = 0;
    for (char *save = NULL, *tok = strtok_r(buf, ",", &save); tok;
         tok = strtok_r(NULL, ",", &save)) {
        const tpl_family *f = tpl_find(tok);
        if (!f)
            return usage_error("unknown kernel '%s'", tok);
        if (*n < max)
            fams[(*n)++] = f;
    }
    if (*n == 0)
        return usage_error("--kernel needs a name%s", "");
    return 0;
}

/* ---- autotune list ---- */

static void list_family(const tpl_family *f)
{
    long long *valid = NULL;
    long long n_valid = tpl_valid_configs(f, NULL, &valid);
    free(valid);
    printf("%s%s: %s\n", f->name, f->hidden ? " (hidden, tests only)" : "", f->summary);
    printf("  space: %lld raw, %lld valid (generic sm_80+ device)\n", tpl_space_size(f),
           n_valid);
    printf("  tuning sizes (%s", f->dim_names[0] ? f->dim_names[0] : "n");
    for (int d = 1; d < f->n_dims; d++)
        printf("x%s", f->dim_names[d] ? f->dim_names[d] : "?");
    printf("):");
    for (int k = 0; k < f->n_tuning_problems; k++) {
        char s[64];
        tn_format_size(&f->tuning_problems[k], s, sizeof s);
        printf("%s%s", k ? ", " : " ", s);
    }
    printf("\n  metric: %s\n", f->metric_is_flops ? "GFLOP/s" : "GB/s");
    printf("  parameters:\n");
    for (int p = 0; p < f->n_params; p++) {
        const tpl_param *par = &f->params[p];
        printf("    %-14s", par->name);
        for (int v = 0; v < par->n_values; v++)
            printf(" %d", par->values[v]);
        printf("  -- %s\n", par->meaning ? par->meaning : "");
    }
    printf("  default: %s\n", f->default_config ? f->default_config : "-");
    for (int b = 0; b < f->n_baselines; b++)
        printf("  baseline %s: %s (%s)\n", f->baselines[b].name, f->baselines[b].config,
               f->baselines[b].description ? f->baselines[b].description : "");
}

static int cmd_list(int argc, char **argv)
{
    const tpl_family *fams[32];
    int n = 0;
    for (int i = 2; i < argc; i++) {
        int m;
        const char *v = opt_value(argc, argv, &i, "--kernel", &m);
        if (m && !v)
            return usage_error("%s needs a value", "--kernel");
        if (m) {
            int rc = parse_kernels(v, fams, &n, 32);
            if (rc)
                return rc;
            continue;
        }
        return usage_error("unknown option '%s' for list", argv[i]);
    }
    int first = 1;
    for (int i = 0; i < tpl_family_count(); i++) {
        const tpl_family *f = tpl_family_at(i);
        int want = n == 0 ? !f->hidden : 0;
        for (int k = 0; k < n; k++)
            want |= fams[k] == f;
        if (!want)
            continue;
        if (!first)
            printf("\n");
        first = 0;
        list_family(f);
    }
    return 0;
}

/* ---- autotune show ---- */

typedef struct show_group {
    char device[48];
    char kernel[32];
    tpl_problem problem;
    int counts[9];
    int best;                        /* index into results, -1 none */
} show_group;

static const char *const show_status[] = {
    DB_OK, DB_COMPILE_ERROR, DB_WRONG_RESULT, DB_LAUNCH_ERROR, DB_CRASHED,
    DB_TIMEOUT, DB_ABANDONED, DB_INVALID, "other",
};

/* Parses show's options; 0, or an exit code after a message. */
static int show_options(int argc, char **argv, const tpl_family **fams, int *n_fams, int *all,
                        const char **db_path, int *wanted)
{
    for (int i = 2; i < argc; i++) {
        int m;
        const char *v = opt_value(argc, argv, &i, "--kernel", &m);
        if (m && !v)
            return usage_error("%s needs a value", "--kernel");
        if (m) {
            int rc = parse_kernels(v, fams, n_fams, 32);
            if (rc)
                return rc;
            continue;
        }
        v = opt_value(argc, argv, &i, "--db", &m);
        if (m && !v)
            return usage_error("%s needs a value", "--db");
        if (m) {
            *db_path = v;
            continue;
        }
        if (strcmp(argv[i], "--all") == 0) {
            *all = 1;
            continue;
        }
        if (strcmp(argv[i], "--wanted") == 0) {
            *wanted = 1;
            continue;
        }
        return usage_error("unknown option '%s' for show", argv[i]);
    }
    return 0;
}

/* Groups the results of the selected kernels by device, kernel and
 * problem (printing each row with --all); returns the number of groups. */
static int show_group_results(const db_result *res, int n, const tpl_family *const *fams,
                              int n_fams, int all, show_group *groups)
{
    int n_groups = 0;
    for (int i = 0; i < n && groups; i++) {
        const db_result *r = &res[i];
        if (n_fams) {
            int want = 0;
            for (int k = 0; k < n_fams; k++)
                want |= strcmp(fams[k]->name, r->kernel) == 0;
            if (!want)
                continue;
        }
        int g;
        for (g = 0; g < n_groups; g++)
            if (strcmp(groups[g].device, r->device_uuid) == 0 &&
                strcmp(groups[g].kernel, r->kernel) == 0 &&
                tpl_problem_equal(&groups[g].problem, &r->problem))
                break;
        if (g == n_groups) {
            snprintf(groups[g].device, sizeof groups[g].device, "%s", r->device_uuid);
            snprintf(groups[g].kernel, sizeof groups[g].kernel, "%s", r->kernel);
            groups[g].problem = r->problem;
            groups[g].best = -1;
            n_groups++;
        }
        if (all) {
            char size[64];
            tn_format_size(&r->problem, size, sizeof size);
            printf("%s\t%s\t%s\t%s\t%.6f\t%.6f\t%.6f\t%d\t%.3g\t%.1f\t%s\t%s\n",
                   r->device_uuid, r->kernel, size, r->status, r->time_ms, r->time_min_ms,
                   r->time_max_ms, r->runs, r->rel_error, r->compile_ms, r->created,
                   r->config);
        }
        int s;
        for (s = 0; s < 8; s++)
            if (strcmp(show_status[s], r->status) == 0)
                break;
        groups[g].counts[s]++;
        if (s == 0 && (groups[g].best < 0 || db_rank_ms(r) < db_rank_ms(&res[groups[g].best]) ||
                       (db_rank_ms(r) == db_rank_ms(&res[groups[g].best]) &&
                        r->id < res[groups[g].best].id)))
            groups[g].best = i;
    }
    return n_groups;
}

/* Prints one group: its counts per status and its best. */
static void show_print_group(const show_group *gr, const db_result *res)
{
    char size[64];
    tn_format_size(&gr->problem, size, sizeof size);
    printf("  %s %s:", gr->kernel, size);
    int total = 0;
    for (int s = 0; s < 9; s++)
        total += gr->counts[s];
    printf(" %d results (", total);
    int first = 1;
    for (int s = 0; s < 9; s++)
        if (gr->counts[s]) {
            printf("%s%d %s", first ? "" : ", ", gr->counts[s], show_status[s]);
            first = 0;
        }
    printf(")\n");
    if (gr->best >= 0) {
        const db_result *b = &res[gr->best];
        const tpl_family *f = tpl_find(b->kernel);
        int flops = f ? f->metric_is_flops : b->gflops > 0;
        printf("    best %.4f ms (min %.4f, max %.4f, %d runs), %.1f %s: %s\n",
               b->time_ms, b->time_min_ms, b->time_max_ms, b->runs,
               flops ? b->gflops : b->gbs, flops ? "GFLOP/s" : "GB/s", b->config);
        if (b->sustained_ms > 0)
            printf("    sustained %.4f ms (re-timed under sustained load; ranks as %.4f ms)\n",
                   b->sustained_ms, b->rank_ms);
    } else {
        printf("    no configuration passed\n");
    }
}

static int cmd_show(int argc, char **argv)
{
    const tpl_family *fams[32];
    int n_fams = 0, all = 0, wanted = 0;
    const char *db_path = NULL;
    int rc = show_options(argc, argv, fams, &n_fams, &all, &db_path, &wanted);
    if (rc)
        return rc;
    if (wanted)
        return tn_show_wanted(db_path, all);
    char path[4096], err[1024];
    tn_db_path(db_path, path, sizeof path);
    db *d = NULL;
    at_status st = db_open(&d, path, 0, err, sizeof err);
    if (st == AT_ERR_NOT_FOUND) {
        printf("no results: %s does not exist (run autotune --device 0 first)\n", path);
        return 0;
    }
    if (st != AT_OK) {
        fprintf(stderr, "autotune: cannot open %s: %s\n", path, err);
        return 1;
    }
    db_result *res = NULL;
    int n = 0;
    if (db_results(d, NULL, NULL, &res, &n) != AT_OK) {
        fprintf(stderr, "autotune: %s\n", db_errmsg(d));
        db_close(d);
        return 1;
    }
    db_device *devs = NULL;
    int n_devs = 0;
    db_list_devices(d, &devs, &n_devs);
    show_group *groups = calloc((size_t)n + 1, sizeof *groups);
    int n_groups = show_group_results(res, n, fams, n_fams, all, groups);
    if (all)
        printf("\n");
    if (n_groups == 0)
        printf("no results in %s\n", path);
    const char *last_dev = "";
    for (int g = 0; g < n_groups; g++) {
        if (strcmp(last_dev, groups[g].device) != 0) {
            const char *name = "unknown device";
            for (int k = 0; k < n_devs; k++)
                if (strcmp(devs[k].info.uuid, groups[g].device) == 0)
                    name = devs[k].info.name;
            printf("%s (%s)\n", name, groups[g].device);
            last_dev = groups[g].device;
        }
        show_print_group(&groups[g], res);
    }
    free(groups);
    free(devs);
    free(res);
    db_close(d);
    return 0;
}

/* ---- autotune report ---- */

static int cmd_report(int argc, char **argv)
{
    const char *out = NULL, *db_path = NULL, *calls[RP_CALLS_MAX_FILES];
    int n_calls = 0;
    for (int i = 2; i < argc; i++) {
        int m;
        const char *v = opt_value(argc, argv, &i, "-o", &m);
        if (!m)
            v = opt_value(argc, argv, &i, "--output", &m);
        if (m && !v)
            return usage_error("%s needs a file name", "-o");
        if (m) {
            out = v;
            continue;
        }
        v = opt_value(argc, argv, &i, "--db", &m);
        if (m && !v)
            return usage_error("%s needs a value", "--db");
        if (m) {
            db_path = v;
            continue;
        }
        v = opt_value(argc, argv, &i, "--calls", &m);
        if (m && !v)
            return usage_error("%s needs a bench_calls --tsv file", "--calls");
        if (m && n_calls == RP_CALLS_MAX_FILES)
            return usage_error("at most 8 --calls files (%s is the ninth)", v);
        if (m) {
            calls[n_calls++] = v;
            continue;
        }
        return usage_error("unknown option '%s' for report", argv[i]);
    }
    if (!out)
        return usage_error("report needs -o FILE%s", "");
    char path[4096], err[1024];
    tn_db_path(db_path, path, sizeof path);
    db *d = NULL;
    if (db_open(&d, path, 0, err, sizeof err) != AT_OK) {
        fprintf(stderr, "autotune: cannot open the database %s: %s\n", path, err);
        return 1;
    }
    at_status st = rp_write_calls(d, out, NULL, calls, n_calls, err, sizeof err);
    db_close(d);
    if (st != AT_OK) {
        fprintf(stderr, "autotune: report failed: %s\n", err);
        return 1;
    }
    printf("wrote %s\n", out);
    return 0;
}

/* ---- autotune check ---- */

typedef struct check_key {
    char key[40];
    long long index;                 /* into the job list */
} check_key;

static int check_key_cmp(const void *a, const void *b)
{
    const check_key *x = a, *y = b;
    int c = strcmp(x->key, y->key);
    return c ? c : (x->index > y->index) - (x->index < y->index);
}

/* The configurations check compiles for f: every valid one (on the generic
 * device) and the default and baselines when off that list, or with sample
 * the stratified sample of templates/samples.c (seed 1). malloc'd rows in *cfgs;
 * the count, or -1 with a message printed. */
static long long check_configs(const tpl_family *f, int sample, int (**cfgs)[TPL_MAX_PARAMS])
{
    char err[512];
    *cfgs = NULL;
    if (sample) {
        tpl_sample *s = NULL;
        int n = tpl_sample_configs(f, NULL, 1, NULL, 0, &s, err, sizeof err);
        *cfgs = n >= 0 ? malloc((size_t)(n ? n : 1) * sizeof **cfgs) : NULL;
        for (int k = 0; *cfgs && k < n; k++)
            memcpy((*cfgs)[k], s[k].cfg, sizeof (*cfgs)[k]);
        free(s);
        if (!*cfgs)
            fprintf(stderr, "autotune: %s\n", n < 0 ? err : "out of memory");
        return *cfgs ? n : -1;
    }
    long long *valid = NULL;
    long long n_valid = tpl_valid_configs(f, NULL, &valid);
    *cfgs = n_valid >= 0 ? malloc((size_t)(n_valid + 1 + f->n_baselines) * sizeof **cfgs) : NULL;
    if (!*cfgs) {
        free(valid);
        fprintf(stderr, "autotune: out of memory\n");
        return -1;
    }
    long long total = 0;
    for (; total < n_valid; total++)
        tpl_config_from_index(f, valid[total], (*cfgs)[total]);
    for (int b = -1; b < f->n_baselines; b++) {
        const char *text = b < 0 ? f->default_config : f->baselines[b].config;
        if (!text || tpl_config_parse(f, text, (*cfgs)[total], err, sizeof err) != AT_OK)
            continue;
        long long idx = tpl_config_to_index(f, (*cfgs)[total]);
        int on = 0;
        for (long long k = 0; k < n_valid && idx >= 0 && !on; k++)
            on = valid[k] == idx;
        total += !on;
    }
    free(valid);
    return total;
}

/* Compiles every valid configuration of f (and the default and baselines
 * when off the lattice), or the stratified sample. Configurations whose
 * NVRTC input is identical (same tpl_binary_key: source, options, arch,
 * NVRTC) share one compile. 1 if one fails or there is none, else 0. */
static int check_family(const tpl_family *f, const char *arch, int sample, tn_pool *pool)
{
    int (*cfgs)[TPL_MAX_PARAMS] = NULL;
    long long total = check_configs(f, sample, &cfgs);
    if (total < 0)
        return 1;
    long long other_arch = 0, kept = 0;     /* configurations that cannot run on arch */
    for (long long k = 0; k < total; k++) {
        if (tpl_target_arch(f, cfgs[k], arch))
            memmove(cfgs[kept++], cfgs[k], sizeof cfgs[k]);
        else
            other_arch++;
    }
    total = kept;
    tn_job *jobs = calloc((size_t)total + 1, sizeof *jobs);
    check_key *keys = calloc((size_t)total + 1, sizeof *keys);
    long long *owner = calloc((size_t)total + 1, sizeof *owner);
    if (!jobs || !keys || !owner) {
        free(jobs);
        free(keys);
        free(owner);
        free(cfgs);
        fprintf(stderr, "autotune: out of memory\n");
        return 1;
    }
    for (long long k = 0; k < total; k++) {
        jobs[k].fam = f;
        snprintf(jobs[k].arch, sizeof jobs[k].arch, "%s", arch);
        memcpy(jobs[k].cfg, cfgs[k], sizeof jobs[k].cfg);
        tpl_binary_key(f, jobs[k].cfg, arch, keys[k].key, sizeof keys[k].key);
        keys[k].index = k;
    }
    free(cfgs);
    qsort(keys, (size_t)total, sizeof *keys, check_key_cmp);
    long long distinct = 0;
    for (long long i = 0; i < total; i++) {
        if (i == 0 || strcmp(keys[i].key, keys[i - 1].key) != 0) {
            owner[keys[i].index] = keys[i].index;
            distinct++;
        } else {
            owner[keys[i].index] = owner[keys[i - 1].index];
        }
    }
    for (long long k = 0; k < total; k++)
        if (owner[k] == k)
            tn_pool_submit(pool, &jobs[k]);
    long long failed = 0, compiled = 0;
    double t0 = tn_now();
    for (long long k = 0; k < total; k++) {
        tn_job *job = &jobs[owner[k]];
        tn_pool_wait(pool, job);
        if (job->status == AT_OK) {
            compiled++;
        } else {
            char cfg[TPL_CONFIG_LEN];
            tpl_config_format(f, jobs[k].cfg, cfg, sizeof cfg);
            printf("%s: %s failed to compile for %s (%s)", f->name, cfg, arch,
                   at_status_string(job->status));
            if (owner[k] == k)
                printf(":\n%s\n", job->log ? job->log : "(no log)");
            else
                printf(" (same NVRTC input as a configuration above)\n");
            failed++;
        }
    }
    for (long long k = 0; k < total; k++) {
        free(jobs[k].cubin);
        free(jobs[k].log);
    }
    printf("%s: %lld raw, %lld %s, %lld compiled, %lld failed (%lld distinct cubins, "
           "%.1f s)", f->name, tpl_space_size(f), total, sample ? "sampled" : "valid", compiled,
           failed, distinct, tn_now() - t0);
    if (other_arch)
        printf("; %lld only for other architectures", other_arch);
    printf("\n");
    if (total == 0 && !other_arch)
        printf("%s: no valid configuration\n", f->name);
    fflush(stdout);
    free(jobs);
    free(keys);
    free(owner);
    return failed || total == 0 ? 1 : 0;
}

static int cmd_check(int argc, char **argv)
{
    const tpl_family *fams[32];
    int n_fams = 0;
    const char *arch = NULL;
    long long jobs = 0;
    int sample = 0;
    for (int i = 2; i < argc; i++) {
        int m;
        const char *v = opt_value(argc, argv, &i, "--kernel", &m);
        if (m && !v)
            return usage_error("%s needs a value", "--kernel");
        if (m) {
            int rc = parse_kernels(v, fams, &n_fams, 32);
            if (rc)
                return rc;
            continue;
        }
        v = opt_value(argc, argv, &i, "--arch", &m);
        if (m && !v)
            return usage_error("%s needs a value such as sm_90", "--arch");
        if (m) {
            long long cc;
            if (strncmp(v, "sm_", 3) != 0 || parse_int(v + 3, 50, 200, &cc) != 0)
                return usage_error("bad architecture '%s' (expected e.g. sm_90)", v);
            arch = v;
            continue;
        }
        if (strcmp(argv[i], "--sample") == 0) {
            sample = 1;
            continue;
        }
        v = opt_value(argc, argv, &i, "--jobs", &m);
        if (m && (!v || parse_int(v, 1, 256, &jobs) != 0))
            return usage_error("--jobs needs a number from 1 to 256, not '%s'", v ? v : "");
        if (m)
            continue;
        return usage_error("unknown option '%s' for check", argv[i]);
    }
    if (!arch)
        return usage_error("check needs --arch (e.g. --arch sm_90)%s", "");
    tn_pool *pool = tn_pool_create(jobs > 0 ? (int)jobs : tn_cpu_count());
    if (!pool) {
        fprintf(stderr, "autotune: could not start compile threads\n");
        return 1;
    }
    printf("checking with NVRTC %s for %s\n", tpl_nvrtc_version(), arch);
    int rc = 0;
    for (int i = 0; i < tpl_family_count(); i++) {
        const tpl_family *f = tpl_family_at(i);
        int want = n_fams == 0 ? !f->hidden : 0;
        for (int k = 0; k < n_fams; k++)
            want |= fams[k] == f;
        if (want && check_family(f, arch, sample, pool) != 0)
            rc = 1;
    }
    tn_pool_destroy(pool);
    return rc;
}

/* ---- autotune gc ---- */

static int cmd_gc(int argc, char **argv)
{
    const char *db_path = NULL;
    long long keep_recent = GC_KEEP_RECENT;
    int dry_run = 0;
    for (int i = 2; i < argc; i++) {
        int m;
        const char *v = opt_value(argc, argv, &i, "--db", &m);
        if (m && (!v || !*v))
            return usage_error("%s needs a path", "--db");
        if (m) {
            db_path = v;
            continue;
        }
        v = opt_value(argc, argv, &i, "--keep-recent", &m);
        if (m && (!v || parse_int(v, 0, 1000000000, &keep_recent) != 0))
            return usage_error("--keep-recent needs a number of configurations, not '%s'",
                               v ? v : "");
        if (m)
            continue;
        if (strcmp(argv[i], "--dry-run") == 0) {
            dry_run = 1;
            continue;
        }
        return usage_error("unknown option '%s' for gc", argv[i]);
    }
    return tn_gc(db_path, keep_recent, dry_run);
}

/* ---- tuning ---- */

/* The command line as typed, for the session record. */
static void tune_command_text(int argc, char **argv, char *out, size_t len)
{
    size_t used = 0;
    out[0] = '\0';
    for (int i = 0; i < argc && used + 2 < len; i++) {
        int w = snprintf(out + used, len - used, "%s%s", i ? " " : "", argv[i]);
        if (w < 0)
            break;
        used += (size_t)w;
        if (used >= len)
            used = len - 1;
    }
}

/* What to tune: --device, --kernel, --size, --budget, --strategy at argv[*i].
 * -1 if argv[*i] is none of them, 0 if parsed, else an exit code after a
 * message. */
static int tune_option_what(int argc, char **argv, int *i, tn_options *o,
                            const char **size_text)
{
    int m;
    const char *v = opt_value(argc, argv, i, "--device", &m);
    if (m) {
        char err[256];
        if (tn_parse_devices(v, o, err, sizeof err) != 0)
            return usage_error("%s", err);
        return 0;
    }
    v = opt_value(argc, argv, i, "--kernel", &m);
    if (m) {
        if (!v)
            return usage_error("%s needs a value", "--kernel");
        return parse_kernels(v, o->families, &o->n_families, 31);
    }
    v = opt_value(argc, argv, i, "--size", &m);
    if (m) {
        if (!v || tn_parse_size(v, &o->size) != 0)
            return usage_error("bad size '%s' (expected e.g. 4096x4096x4096 or 1048576)",
                               v ? v : "");
        o->have_size = 1;
        *size_text = v;
        return 0;
    }
    v = opt_value(argc, argv, i, "--budget", &m);
    if (m) {
        if (!v || tn_parse_budget(v, &o->budget_s, &o->budget_evals) != 0)
            return usage_error("bad budget '%s' (expected seconds like 60 or 60s, "
                               "or evaluations like 200e)", v ? v : "");
        return 0;
    }
    v = opt_value(argc, argv, i, "--strategy", &m);
    if (m) {
        if (!v || !tn_strategy_find(v))
            return usage_error("unknown strategy '%s' (exhaustive, random, anneal, surrogate)",
                               v ? v : "");
        o->strategy = tn_strategy_find(v)->name;
        return 0;
    }
    return -1;
}

/* How to run: --timeout, --jobs, --db, --seed at argv[*i]; returns as
 * tune_option_what. */
static int tune_option_how(int argc, char **argv, int *i, tn_options *o)
{
    int m;
    long long n;
    const char *v = opt_value(argc, argv, i, "--timeout", &m);
    if (m) {
        char *end = NULL;
        double t = v ? strtod(v, &end) : 0;
        if (!v || !*v || *end || !(t > 0) || t > 86400)
            return usage_error("--timeout needs seconds, not '%s'", v ? v : "");
        o->timeout_s = t;
        return 0;
    }
    v = opt_value(argc, argv, i, "--jobs", &m);
    if (m) {
        if (!v || parse_int(v, 1, 256, &n) != 0)
            return usage_error("--jobs needs a number from 1 to 256, not '%s'", v ? v : "");
        o->jobs = (int)n;
        return 0;
    }
    v = opt_value(argc, argv, i, "--db", &m);
    if (m) {
        if (!v || !*v)
            return usage_error("%s needs a path", "--db");
        o->db_path = v;
        return 0;
    }
    v = opt_value(argc, argv, i, "--seed", &m);
    if (m) {
        char *end = NULL;
        errno = 0;
        unsigned long long s = v ? strtoull(v, &end, 10) : 0;
        if (!v || !*v || *end || errno)
            return usage_error("--seed needs a number, not '%s'", v ? v : "");
        o->seed = s;
        return 0;
    }
    return -1;
}

/* 1 if the --size has the dimensions of a selected kernel. */
static int size_fits(const tn_options *o)
{
    int fits = 0;
    for (int i = 0; i < tpl_family_count(); i++) {
        const tpl_family *f = tpl_family_at(i);
        int sel = o->n_families == 0 ? !f->hidden : 0;
        for (int k = 0; k < o->n_families; k++)
            sel |= o->families[k] == f;
        fits |= sel && tpl_family_accepts(f, &o->size);
    }
    return fits;
}

/* The real worker needs the CUDA driver: without one, a run fails here, at once, with one
 * line (the driver's reason) and nothing printed before it. A worker named by
 * $AUTOTUNE_WORKER (the fake one of the tests) brings its own devices. 1 if the run can
 * start. */
static int driver_present(void)
{
    const char *worker = getenv("AUTOTUNE_WORKER");
    if (worker && *worker)
        return 1;
    char why[512] = "";
    if (cudrv_get(NULL, why, sizeof why))
        return 1;
    fprintf(stderr, "autotune: %s\n", why[0] ? why : "no CUDA driver");
    return 0;
}

/* The items a run tunes first: the --problems file's, else the recorded
 * problems waiting (none with --size). 0, or an exit code after a message. */
static int tune_items(tn_options *o, const char *problems, int recorded, tn_first **items)
{
    *items = NULL;
    if (problems && (recorded || o->have_size))
        return usage_error("--problems goes with neither --recorded nor --size%s", "");
    if (recorded && o->have_size)
        return usage_error("--recorded goes without --size%s", "");
    int rc = 0;
    if (problems)
        rc = tn_problem_file_items(problems, o, items, &o->n_items);
    else if (!o->have_size)
        rc = tn_recorded_items(o->db_path, items, &o->n_items);
    o->items = *items;
    o->items_only = problems || recorded;
    if (rc == 0 && o->items_only && o->n_items == 0)
        printf("%s\n", problems ? "no problem to tune in the file"
                                : "no recorded problem waits for tuning (autotune show --wanted)");
    return rc;
}

static int cmd_tune(int argc, char **argv)
{
    tn_options o;
    const char *size_text = "", *problems = NULL;
    int recorded = 0;
    memset(&o, 0, sizeof o);
    o.seed = (unsigned long long)time(NULL) ^ ((unsigned long long)getpid() << 20);
    tune_command_text(argc, argv, o.command, sizeof o.command);
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--keep-all-cubins") == 0) {
            o.keep_all_cubins = 1;
            continue;
        }
        if (strcmp(argv[i], "--quiet") == 0) {
            o.quiet = 1;
            continue;
        }
        if (strcmp(argv[i], "--recorded") == 0) {
            recorded = 1;
            continue;
        }
        int m;
        const char *v = opt_value(argc, argv, &i, "--problems", &m);
        if (m && (!v || !*v))
            return usage_error("%s needs a file", "--problems");
        if (m) {
            problems = v;
            continue;
        }
        int rc = tune_option_what(argc, argv, &i, &o, &size_text);
        if (rc < 0)
            rc = tune_option_how(argc, argv, &i, &o);
        if (rc > 0)
            return rc;
        if (rc == 0)
            continue;
        if (argv[i][0] == '-')
            return usage_error("unknown option '%s'", argv[i]);
        return usage_error("unknown command '%s'", argv[i]);
    }
    if (o.have_size && !size_fits(&o))
        return usage_error("size '%s' fits none of the selected kernels", size_text);
    if (!driver_present())
        return 1;
    tn_first *items = NULL;
    int rc = tune_items(&o, problems, recorded, &items);
    if (rc == 0 && !(o.items_only && o.n_items == 0))
        rc = tn_tune(&o);
    free(items);
    return rc;
}

int tn_main(int argc, char **argv)
{
    if (argc < 2) {
        fputs(usage_text, stderr);
        return EXIT_USAGE;
    }
    const char *cmd = argv[1];
    if (strcmp(cmd, "--help") == 0 || strcmp(cmd, "-h") == 0 || strcmp(cmd, "help") == 0) {
        fputs(usage_text, stdout);
        return 0;
    }
    if (strcmp(cmd, "--version") == 0) {
        printf("autotune %s (NVRTC %s)\n", TN_VERSION, tpl_nvrtc_version());
        return 0;
    }
    if (strcmp(cmd, "__worker") == 0)
        return tn_worker_main(3, 4);
    if (strcmp(cmd, "__fake_worker") == 0)
        return tn_fake_worker_main(3, 4);
    /* the subcommands (the tuning run itself is the default, below) */
    static const struct {
        const char *name;
        int (*run)(int argc, char **argv);
    } commands[] = {
        {"list", cmd_list},     {"show", cmd_show},     {"report", cmd_report},
        {"check", cmd_check},   {"gc", cmd_gc},         {"export", tn_export},
        {"import", tn_import},  {"merge", tn_merge},    {"ship-build", tn_ship_build},
    };
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
        if (strcmp(cmd, commands[i].name) == 0)
            return commands[i].run(argc, argv);
    for (int i = 1; i < argc; i++)
        if (strcmp(argv[i], "--help") == 0) {
            fputs(usage_text, stdout);
            return 0;
        }
    if (cmd[0] != '-')
        return usage_error("unknown command '%s'", cmd);
    return cmd_tune(argc, argv);
}
