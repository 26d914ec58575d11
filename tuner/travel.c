/* travel.c: tuning results that travel: `autotune export` (JSON),
 * `autotune import` (checked whole) and `autotune merge` (several databases
 * into a new one). Results travel as data, cubins never as code: a cubin
 * from elsewhere is stored only where this build compiles the same bytes
 * for its configuration, else dropped and the one compiled here stored. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "lookup.h"
#include "tn.h"

#define EXIT_USAGE 2
/* export --shipped: the best configurations kept per problem */
#define SHIPPED_PER_PROBLEM 3
/* ship-build: the best configurations per problem compiled by default */
#define SHIP_COMPILE_PER_PROBLEM 1

static int travel_usage(const char *cmd, const char *fmt, const char *arg)
{
    fprintf(stderr, "autotune %s: ", cmd);
    fprintf(stderr, fmt, arg);
    fprintf(stderr, "; see autotune --help\n");
    return EXIT_USAGE;
}

/* "--name value" or "--name=value" at argv[*i]: 1 and *value if it
 * matched (*value NULL when the value is missing), else 0. */
static int travel_opt(int argc, char **argv, int *i, const char *name, const char **value)
{
    size_t n = strlen(name);
    if (strncmp(argv[*i], name, n) != 0)
        return 0;
    if (argv[*i][n] == '=') {
        *value = argv[*i] + n + 1;
        return 1;
    }
    if (argv[*i][n] != '\0')
        return 0;
    *value = *i + 1 < argc ? argv[++*i] : NULL;
    return 1;
}

static int file_exists(const char *path)
{
    struct stat sb;
    return stat(path, &sb) == 0;
}

/* ---- export ---- */

int tn_export(int argc, char **argv)
{
    const char *db_path = NULL, *out = NULL, *v = NULL;
    db_export_filter flt;
    memset(&flt, 0, sizeof flt);
    int configs_only = 0;
    for (int i = 2; i < argc; i++) {
        const char **slot = NULL;
        if (travel_opt(argc, argv, &i, "--db", &v))
            slot = &db_path;
        else if (travel_opt(argc, argv, &i, "--device", &v))
            slot = &flt.device_uuid;
        else if (travel_opt(argc, argv, &i, "--model", &v))
            slot = &flt.model;
        else if (travel_opt(argc, argv, &i, "--kernel", &v))
            slot = &flt.kernel;
        else if (travel_opt(argc, argv, &i, "-o", &v))
            slot = &out;
        else if (strcmp(argv[i], "--with-cubins") == 0) {
            flt.with_cubins = 1;
            continue;
        } else if (strcmp(argv[i], "--configs-only") == 0) {
            configs_only = 1;
            continue;
        } else if (strcmp(argv[i], "--shipped") == 0) {
            if (!flt.best_per_problem)
                flt.best_per_problem = SHIPPED_PER_PROBLEM;
            continue;
        } else if (travel_opt(argc, argv, &i, "--per-problem", &v)) {
            flt.best_per_problem = v ? atoi(v) : 0;
            if (flt.best_per_problem < 1 || flt.best_per_problem > 100)
                return travel_usage("export", "--per-problem needs 1 to 100, not '%s'",
                                    v ? v : "");
            continue;
        } else
            return travel_usage("export", "unknown option '%s'", argv[i]);
        if (!v || !*v)
            return travel_usage("export", "%s needs a value", argv[i]);
        *slot = v;
    }
    if (!out)
        return travel_usage("export", "needs -o FILE.json%s", "");
    if (configs_only && flt.with_cubins)
        return travel_usage("export", "--configs-only and --with-cubins exclude each other%s",
                            "");
    if (flt.best_per_problem && !configs_only)
        return travel_usage("export", "--shipped and --per-problem go with --configs-only "
                            "(the shipped data has no cubins)%s", "");
    char path[4096], err[1024], tmp[4200];
    tn_db_path(db_path, path, sizeof path);
    db *d = NULL;
    if (db_open(&d, path, DB_OPEN_READONLY, err, sizeof err) != AT_OK) {
        fprintf(stderr, "autotune: cannot open the database %s: %s\n", path, err);
        return 1;
    }
    long long n_res = 0, n_cub = 0;
    if (strcmp(out, "-") == 0) {            /* to stdout, the summary to stderr */
        at_status s = db_export(d, &flt, stdout, &n_res, &n_cub);
        if (s != AT_OK)
            fprintf(stderr, "autotune: export failed: %s\n", db_errmsg(d));
        else
            fprintf(stderr, "exported %lld results and %lld cubins from %s\n", n_res, n_cub,
                    path);
        db_close(d);
        return s == AT_OK ? 0 : 1;
    }
    /* written beside the target and renamed: a failed export leaves no
     * half-written file under the name */
    snprintf(tmp, sizeof tmp, "%s.tmp-%ld", out, (long)getpid());
    FILE *f = fopen(tmp, "wx");
    if (!f) {
        fprintf(stderr, "autotune: cannot write %s: %s\n", tmp, strerror(errno));
        db_close(d);
        return 1;
    }
    at_status s = db_export(d, &flt, f, &n_res, &n_cub);
    if (fclose(f) != 0 && s == AT_OK)
        s = AT_ERR_IO;
    if (s == AT_OK && rename(tmp, out) != 0)
        s = AT_ERR_IO;
    if (s != AT_OK) {
        fprintf(stderr, "autotune: export to %s failed: %s\n", out,
                s == AT_ERR_IO ? strerror(errno) : db_errmsg(d));
        unlink(tmp);
        db_close(d);
        return 1;
    }
    db_close(d);
    printf("exported %lld results and %lld cubins from %s to %s\n", n_res, n_cub, path, out);
    return 0;
}

/* ---- import ---- */

/* The whole file, malloc'd (NUL added); NULL with a message. */
static char *read_file(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        fprintf(stderr, "autotune: cannot read %s: %s\n", path, strerror(errno));
        return NULL;
    }
    size_t cap = 1 << 16, n = 0, got;
    char *buf = malloc(cap + 1);
    while (buf && (got = fread(buf + n, 1, cap - n, f)) > 0) {
        n += got;
        if (n == cap) {
            char *bigger = realloc(buf, cap * 2 + 1);
            if (!bigger) {
                free(buf);
                buf = NULL;
                break;
            }
            buf = bigger;
            cap *= 2;
        }
    }
    int bad = ferror(f);
    fclose(f);
    if (!buf || bad) {
        fprintf(stderr, "autotune: cannot read %s: %s\n", path, buf ? "read error" : "out of memory");
        free(buf);
        return NULL;
    }
    buf[n] = '\0';
    *len = n;
    return buf;
}

/* Called in order for each compiled need (job->status AT_OK, its cubin). */
typedef void (*travel_compiled_fn)(void *ctx, const db_import_need *need, const tn_job *job);

/* Compiles the needs on jobs threads (every core if 0; NVRTC, no GPU) and
 * hands each cubin to done; one that fails is named and left to the runtime
 * (compiled on first use). The number that failed (all n if the threads
 * cannot start). */
static int compile_needs(const db_import_need *needs, int n, int jobs, travel_compiled_fn done,
                         void *ctx)
{
    if (n == 0)
        return 0;
    tn_pool *pool = tn_pool_create(jobs > 0 ? jobs : tn_cpu_count());
    tn_job *job = calloc((size_t)n, sizeof *job);
    if (!pool || !job) {
        fprintf(stderr, "autotune: cannot start compile threads; the runtime compiles "
                "the %d configurations on first use\n", n);
        tn_pool_destroy(pool);
        free(job);
        return n;
    }
    for (int k = 0; k < n; k++) {
        job[k].fam = needs[k].fam;
        memcpy(job[k].cfg, needs[k].cfg, sizeof job[k].cfg);
        snprintf(job[k].arch, sizeof job[k].arch, "%s", needs[k].arch);
        tn_pool_submit(pool, &job[k]);
    }
    int failed = 0;
    for (int k = 0; k < n; k++) {
        tn_pool_wait(pool, &job[k]);
        if (job[k].status == AT_OK && job[k].cubin && job[k].cubin_size > 0) {
            done(ctx, &needs[k], &job[k]);
        } else {
            failed++;
            fprintf(stderr, "autotune: %s %s for %s: %s; left to the runtime\n",
                    needs[k].fam->name, needs[k].config, needs[k].arch,
                    at_status_string(job[k].status));
        }
        free(job[k].cubin);
        free(job[k].log);
    }
    tn_pool_destroy(pool);
    free(job);
    return failed;
}

static void import_compiled(void *ctx, const db_import_need *need, const tn_job *job)
{
    if (db_import_add_cubin(ctx, need, job->cubin, job->cubin_size) != AT_OK)
        fprintf(stderr, "autotune: %s %s for %s: out of memory; left to the runtime\n",
                need->fam->name, need->config, need->arch);
}

/* Compiles what the import needs: the cubins lookups serve that the
 * database lacks, checking the file's under the same keys. */
static void import_compile(db_import *im, const db_import_need *needs, int n, int jobs)
{
    int checks = 0;
    for (int k = 0; k < n; k++)
        checks += needs[k].in_file;
    if (n > 0)
        printf("compiling %d configurations here (NVRTC %s): the cubins lookups serve, %d of "
               "them to check the file's cubin under the same key\n", n, tpl_nvrtc_version(),
               checks);
    fflush(stdout);
    compile_needs(needs, n, jobs, import_compiled, im);
}

static void import_report(const char *file, const char *path, const db_import_stats *st,
                          int compiled)
{
    printf("imported %s into %s: %lld results (%lld new, %lld better than the stored row, "
           "%lld kept the stored row), %lld devices\n", file, path, st->results,
           st->results_added, st->results_replaced, st->results_kept, st->devices);
    printf("cubins: %lld in the file: %lld verified (this build compiles the same bytes), "
           "%lld dropped (%lld not what this build compiles, %lld of another toolkit, source "
           "or arch, %lld not checked: not served by a lookup, or stored here already); "
           "%lld compiled here; %lld stored\n", st->cubins_in_file, st->cubins_verified,
           st->cubins_dropped, st->cubins_differ, st->cubins_unfit,
           st->cubins_dropped - st->cubins_differ - st->cubins_unfit, st->cubins_compiled,
           st->cubins_stored);
    if (!compiled && st->cubins_in_file)
        printf("with --no-compile no cubin of the file can be checked: none is stored; the "
               "runtime compiles each configuration on first use\n");
    if (st->other_source)
        printf("%lld results are of another version of their kernel's source: stored for "
               "the record, never served by lookups\n", st->other_source);
}

int tn_import(int argc, char **argv)
{
    const char *db_path = NULL, *file = NULL, *v = NULL;
    int compile = 1;
    long long jobs = 0;
    for (int i = 2; i < argc; i++) {
        if (travel_opt(argc, argv, &i, "--db", &v)) {
            if (!v || !*v)
                return travel_usage("import", "%s needs a path", "--db");
            db_path = v;
        } else if (travel_opt(argc, argv, &i, "--jobs", &v)) {
            jobs = v ? atoll(v) : 0;
            if (jobs < 1 || jobs > 256)
                return travel_usage("import", "--jobs needs 1 to 256, not '%s'", v ? v : "");
        } else if (strcmp(argv[i], "--no-compile") == 0) {
            compile = 0;
        } else if (argv[i][0] == '-' || file) {
            return travel_usage("import", "unexpected argument '%s'", argv[i]);
        } else {
            file = argv[i];
        }
    }
    if (!file)
        return travel_usage("import", "needs the FILE.json to import%s", "");
    size_t len = 0;
    char *text = read_file(file, &len);
    if (!text)
        return 1;
    char err[1024], path[4096];
    db_import *im = NULL;
    at_status s = db_import_read(text, len, &im, err, sizeof err);
    free(text);
    tn_db_path(db_path, path, sizeof path);
    if (s != AT_OK) {
        fprintf(stderr, "autotune: cannot import %s: %s; nothing was stored in %s\n", file,
                err, path);
        return 1;
    }
    db *d = NULL;
    if (db_open(&d, path, DB_OPEN_CREATE, err, sizeof err) != AT_OK) {
        fprintf(stderr, "autotune: cannot open the database %s: %s\n", path, err);
        db_import_free(im);
        return 1;
    }
    db_import_need *needs = NULL;
    int n_needs = 0;
    if (compile && db_import_needs(d, im, LK_PER_PROBLEM, &needs, &n_needs) == AT_OK)
        import_compile(im, needs, n_needs, (int)jobs);
    free(needs);
    db_import_stats st;
    s = db_import_apply(d, im, &st);
    db_import_free(im);
    if (s != AT_OK) {
        fprintf(stderr, "autotune: cannot import %s: %s; nothing was stored\n", file,
                db_errmsg(d));
        db_close(d);
        return 1;
    }
    import_report(file, path, &st, compile);
    db_close(d);
    return 0;
}

/* ---- merge ---- */

/* The cubin phase of a merge: the inputs (read-only) and what was found. */
typedef struct merge_cubins {
    db *out;
    db **ins;
    int n_ins;
    long long verified, differ, compiled, stored;
} merge_cubins;

/* This build's cubin for need is stored; each input's cubin under the key
 * is counted verified (the same bytes) or not what this build compiles. */
static void merge_compiled(void *ctx, const db_import_need *need, const tn_job *job)
{
    merge_cubins *mc = ctx;
    int same = 0;
    for (int i = 0; i < mc->n_ins; i++) {
        void *theirs = NULL;
        size_t size = 0;
        if (db_get_binary(mc->ins[i], need->key, &theirs, &size) != AT_OK)
            continue;
        if (size == job->cubin_size && memcmp(theirs, job->cubin, size) == 0) {
            mc->verified++;
            same = 1;
        } else {
            mc->differ++;
        }
        free(theirs);
    }
    char options[4096];
    tpl_options_string(need->fam, need->cfg, need->arch, options, sizeof options);
    if (db_put_binary(mc->out, need->key, need->fam->name, tpl_source_hash(need->fam),
                      need->config, need->arch, tpl_nvrtc_version(), options, job->cubin,
                      job->cubin_size) != AT_OK) {
        fprintf(stderr, "autotune: storing the cubin of %s %s: %s\n", need->fam->name,
                need->config, db_errmsg(mc->out));
        return;
    }
    mc->stored++;
    mc->compiled += !same;
}

int tn_merge_cubins(db *out, char **inputs, int n_inputs, long long cubins_read)
{
    char err[1024];
    db_import_need *needs = NULL;
    int n = 0;
    if (db_servable_needs(out, LK_PER_PROBLEM, &needs, &n) != AT_OK) {
        fprintf(stderr, "autotune: %s\n", db_errmsg(out));
        return 1;
    }
    merge_cubins mc;
    memset(&mc, 0, sizeof mc);
    mc.out = out;
    mc.ins = calloc((size_t)n_inputs + 1, sizeof *mc.ins);
    if (!mc.ins) {
        free(needs);
        return 1;
    }
    for (int i = 0; i < n_inputs; i++)
        if (db_open(&mc.ins[mc.n_ins], inputs[i], DB_OPEN_READONLY, err, sizeof err) == AT_OK)
            mc.n_ins++;
    if (n > 0)
        printf("compiling %d configurations here (NVRTC %s): the cubins lookups serve, to "
               "check the inputs' cubins against\n", n, tpl_nvrtc_version());
    fflush(stdout);
    compile_needs(needs, n, 0, merge_compiled, &mc);
    for (int i = 0; i < mc.n_ins; i++)
        db_close(mc.ins[i]);
    free(mc.ins);
    free(needs);
    long long dropped = cubins_read - mc.verified;
    if (n_inputs == 0) {
        printf("cubins: %lld compiled here, %lld stored (the inputs' cubins are never "
               "copied)\n", mc.compiled, mc.stored);
        return 0;
    }
    printf("cubins: %lld in the inputs: %lld verified (this build compiles the same bytes), "
           "%lld dropped (%lld not what this build compiles, %lld not served by a lookup or "
           "of another toolkit, source or arch); %lld compiled here; %lld stored\n",
           cubins_read, mc.verified, dropped, mc.differ, dropped - mc.differ, mc.compiled,
           mc.stored);
    return 0;
}

/* Opens the inputs read-only, merges each into the fresh database tmp,
 * then its cubins (compiled here); 0, or 1 after a message. */
static int merge_into(const char *tmp, char **inputs, int n_inputs)
{
    char err[1024];
    db *out = NULL;
    if (db_open(&out, tmp, DB_OPEN_CREATE, err, sizeof err) != AT_OK) {
        fprintf(stderr, "autotune: cannot create %s: %s\n", tmp, err);
        return 1;
    }
    int rc = 0;
    long long cubins_read = 0;
    for (int i = 0; i < n_inputs && rc == 0; i++) {
        db *in = NULL;
        db_merge_stats st;
        memset(&st, 0, sizeof st);
        if (db_open(&in, inputs[i], DB_OPEN_READONLY, err, sizeof err) != AT_OK) {
            fprintf(stderr, "autotune: cannot read %s: %s\n", inputs[i], err);
            rc = 1;
        } else if (db_merge(out, in, &st) != AT_OK) {
            fprintf(stderr, "autotune: merging %s failed: %s\n", inputs[i], db_errmsg(out));
            rc = 1;
        } else {
            printf("%s: %lld results (%lld new keys, %lld better than a row of the same "
                   "key), %lld devices, %lld cubins (checked below)\n", inputs[i],
                   st.results_read, st.results_added, st.results_replaced, st.devices,
                   st.cubins_read);
            cubins_read += st.cubins_read;
        }
        db_close(in);
    }
    if (rc == 0)
        rc = tn_merge_cubins(out, inputs, n_inputs, cubins_read);
    if (rc == 0 && db_checkpoint(out) != AT_OK) {
        fprintf(stderr, "autotune: %s\n", db_errmsg(out));
        rc = 1;
    }
    if (rc == 0)
        tn_print_db_size(out, 0);
    db_close(out);
    return rc;
}

int tn_merge(int argc, char **argv)
{
    const char *out = NULL, *v = NULL;
    int force = 0, n_inputs = 0;
    char **inputs = calloc((size_t)argc, sizeof *inputs);
    if (!inputs)
        return 1;
    for (int i = 2; i < argc; i++) {
        if (travel_opt(argc, argv, &i, "-o", &v)) {
            if (!v || !*v) {
                free(inputs);
                return travel_usage("merge", "%s needs a path", "-o");
            }
            out = v;
        } else if (strcmp(argv[i], "--force") == 0) {
            force = 1;
        } else if (argv[i][0] == '-') {
            free(inputs);
            return travel_usage("merge", "unknown option '%s'", argv[i]);
        } else {
            inputs[n_inputs++] = argv[i];
        }
    }
    if (!out || n_inputs == 0) {
        free(inputs);
        return travel_usage("merge", "needs A.db [B.db ...] -o OUT.db%s", "");
    }
    if (file_exists(out) && !force) {
        free(inputs);
        fprintf(stderr, "autotune merge: %s exists; choose a new name or add --force to "
                "replace it\n", out);
        return 1;
    }
    for (int i = 0; i < n_inputs; i++)
        if (!file_exists(inputs[i])) {
            fprintf(stderr, "autotune merge: no database at %s\n", inputs[i]);
            free(inputs);
            return 1;
        }
    /* built under a temporary name and renamed: the inputs (OUT among them
     * with --force) are only read, and a failure leaves OUT as it was */
    char tmp[4200], side[4300];
    snprintf(tmp, sizeof tmp, "%s.merge-%ld", out, (long)getpid());
    int rc = merge_into(tmp, inputs, n_inputs);
    free(inputs);
    snprintf(side, sizeof side, "%s-wal", tmp);
    if (rc == 0 && file_exists(side)) {
        fprintf(stderr, "autotune merge: %s still has a write-ahead log; not renamed\n", tmp);
        rc = 1;
    }
    if (rc == 0) {
        /* an old OUT's side files would be read as the new file's */
        snprintf(side, sizeof side, "%s-wal", out);
        unlink(side);
        snprintf(side, sizeof side, "%s-shm", out);
        unlink(side);
        if (rename(tmp, out) != 0) {
            fprintf(stderr, "autotune merge: cannot rename %s to %s: %s\n", tmp, out,
                    strerror(errno));
            rc = 1;
        }
    }
    if (rc != 0) {
        unlink(tmp);
        snprintf(side, sizeof side, "%s-wal", tmp);
        unlink(side);
        snprintf(side, sizeof side, "%s-shm", tmp);
        unlink(side);
        return 1;
    }
    printf("wrote %s\n", out);
    return 0;
}

/* ---- ship-build ---- */

/* Keeps the needs whose configuration the family's valid() accepts on a
 * generic device of their architecture and that have a target there;
 * the new count (the others are named). */
static int ship_valid_needs(db_import_need *needs, int n)
{
    int kept = 0;
    for (int k = 0; k < n; k++) {
        char why[256] = "";
        const tpl_family *f = needs[k].fam;
        if (!f->valid(needs[k].cfg, NULL, why, sizeof why) ||
            !tpl_target_arch(f, needs[k].cfg, needs[k].arch)) {
            fprintf(stderr, "autotune ship-build: %s %s is not valid for %s (%s): not "
                    "compiled, the runtime's lookup refuses it too\n", f->name, needs[k].config,
                    needs[k].arch, why[0] ? why : "no target");
            continue;
        }
        needs[kept++] = needs[k];
    }
    return kept;
}

/* Imports the parsed file into the fresh database tmp with its compiled
 * cubins; 0, or 1 after a message. */
static int ship_into(const char *tmp, db_import *im, int per_problem, int jobs)
{
    char err[1024];
    db *d = NULL;
    if (db_open(&d, tmp, DB_OPEN_CREATE, err, sizeof err) != AT_OK) {
        fprintf(stderr, "autotune ship-build: cannot create %s: %s\n", tmp, err);
        return 1;
    }
    db_import_need *needs = NULL;
    int n_needs = 0, rc = 0;
    if (db_import_needs(d, im, per_problem, &needs, &n_needs) != AT_OK) {
        fprintf(stderr, "autotune ship-build: %s\n", db_errmsg(d));
        rc = 1;
    }
    if (rc == 0)
        import_compile(im, needs, ship_valid_needs(needs, n_needs), jobs);
    free(needs);
    db_import_stats st;
    if (rc == 0 && db_import_apply(d, im, &st) != AT_OK) {
        fprintf(stderr, "autotune ship-build: storing failed: %s\n", db_errmsg(d));
        rc = 1;
    }
    if (rc == 0 && db_checkpoint(d) != AT_OK) {
        fprintf(stderr, "autotune ship-build: %s\n", db_errmsg(d));
        rc = 1;
    }
    if (rc == 0)
        printf("%lld results of %lld devices, %lld cubins compiled for them\n", st.results,
               st.devices, st.cubins_compiled);
    db_close(d);
    return rc;
}

/* Removes path and its side files. */
static void ship_unlink(const char *path)
{
    char side[4400];
    unlink(path);
    snprintf(side, sizeof side, "%s-wal", path);
    unlink(side);
    snprintf(side, sizeof side, "%s-shm", path);
    unlink(side);
}

int tn_ship_build(int argc, char **argv)
{
    const char *file = NULL, *out = NULL, *v = NULL;
    long long jobs = 0, per_problem = SHIP_COMPILE_PER_PROBLEM;
    for (int i = 2; i < argc; i++) {
        if (travel_opt(argc, argv, &i, "-o", &v)) {
            if (!v || !*v)
                return travel_usage("ship-build", "%s needs a path", "-o");
            out = v;
        } else if (travel_opt(argc, argv, &i, "--jobs", &v)) {
            jobs = v ? atoll(v) : 0;
            if (jobs < 1 || jobs > 256)
                return travel_usage("ship-build", "--jobs needs 1 to 256, not '%s'",
                                    v ? v : "");
        } else if (travel_opt(argc, argv, &i, "--per-problem", &v)) {
            per_problem = v ? atoll(v) : 0;
            if (per_problem < 0 || per_problem > 100)
                return travel_usage("ship-build", "--per-problem needs 0 to 100, not '%s'",
                                    v ? v : "");
        } else if (argv[i][0] == '-' || file) {
            return travel_usage("ship-build", "unexpected argument '%s'", argv[i]);
        } else {
            file = argv[i];
        }
    }
    if (!file || !out)
        return travel_usage("ship-build", "needs FILE.json -o OUT.db%s", "");
    size_t len = 0;
    char *text = read_file(file, &len);
    if (!text)
        return 1;
    char err[1024];
    db_import *im = NULL;
    at_status s = db_import_read(text, len, &im, err, sizeof err);
    free(text);
    if (s != AT_OK) {
        fprintf(stderr, "autotune ship-build: %s is not usable: %s; %s not written\n", file,
                err, out);
        return 1;
    }
    /* built under a temporary name and renamed: a failure leaves OUT as it was */
    char tmp[4200];
    snprintf(tmp, sizeof tmp, "%s.build-%ld", out, (long)getpid());
    ship_unlink(tmp);
    int rc = ship_into(tmp, im, (int)per_problem, (int)jobs);
    db_import_free(im);
    char side[4400];
    snprintf(side, sizeof side, "%s-wal", tmp);
    if (rc == 0 && file_exists(side)) {
        struct stat sb;
        if (stat(side, &sb) == 0 && sb.st_size > 0) {
            fprintf(stderr, "autotune ship-build: %s still has a write-ahead log\n", tmp);
            rc = 1;
        }
    }
    if (rc == 0) {
        ship_unlink(out);            /* an old OUT's side files would be read as the new's */
        unlink(side);
        snprintf(side, sizeof side, "%s-shm", tmp);
        unlink(side);
        if (chmod(tmp, 0444) != 0 || rename(tmp, out) != 0) {
            fprintf(stderr, "autotune ship-build: cannot make %s: %s\n", out, strerror(errno));
            rc = 1;
        }
    }
    if (rc != 0) {
        ship_unlink(tmp);
        return 1;
    }
    printf("wrote %s (read-only)\n", out);
    return 0;
}
