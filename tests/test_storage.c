/* test_storage.c: CPU-tier tests of the database where it cannot be written (read-only file,
 * folder or mount; full disk): the runtime reads it, the tuner stops cleanly, gc refuses; the
 * size line a run ends with (the gc rules on a model database: test_gc.c). */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <sched.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <sqlite3.h>
#include "db.h"
#include "harness.h"
#include "lookup.h"
#include "th_storage.h"
#include "tpl.h"

/* ---- a fixture database the lookup chain can read ---- */

static int st_valid(const int *cfg, const at_device_info *dev, char *why, size_t len)
{
    (void)cfg;
    (void)dev;
    (void)why;
    (void)len;
    return 1;
}
static int st_deterministic(const int *cfg) { return cfg[1] == 0; }

static const tpl_family st_family = {
    .name = "st_lookup", .source = "reference.cu", .fixed_options = "",
    .n_dims = 1, .dim_names = {"n"},
    .n_params = 2,
    .params = {{"A", 3, {1, 2, 3}, "fake"}, {"ATOMIC", 2, {0, 1}, "1 = nondeterministic"}},
    .valid = st_valid, .deterministic = st_deterministic,
    .default_config = "A=1,ATOMIC=0",
};

#define ST_UUID "GPU-st-a"
static const char st_cubin[] = "cubin\0bytes";     /* 11 bytes, a NUL inside */

/* The fixture's rows: the best at n = 1024 is A=2 (1.0 ms), deterministic
 * too; at n = 1048576 A=3,ATOMIC=1 (5.0 ms), deterministic A=1 (6.0 ms).
 * The row left in a -wal (st_leave_wal) is faster at 1024: A=3,ATOMIC=0. */
typedef struct st_row {
    long long n;
    const char *config;
    const char *status;
    double ms;
    int det;
} st_row;

static const st_row st_rows[] = {
    {1024, "A=2,ATOMIC=0", DB_OK, 1.0, 1},
    {1024, "A=1,ATOMIC=0", DB_OK, 2.0, 1},
    {1024, "A=3,ATOMIC=1", DB_WRONG_RESULT, 0.1, 0},
    {1048576, "A=3,ATOMIC=1", DB_OK, 5.0, 0},
    {1048576, "A=1,ATOMIC=0", DB_OK, 6.0, 1},
};
static const st_row st_wal_row = {1024, "A=3,ATOMIC=0", DB_OK, 0.5, 1};

static at_device_info st_device(void)
{
    at_device_info info;
    memset(&info, 0, sizeof info);
    snprintf(info.uuid, sizeof info.uuid, "%s", ST_UUID);
    snprintf(info.name, sizeof info.name, "Storage test GPU");
    info.cc_major = 9;
    info.cc_minor = 0;
    info.smem_per_block_optin = 232448;
    tpl_arch_name(9, 0, info.arch, sizeof info.arch);
    return info;
}

static at_status st_store(db *d, const st_row *row)
{
    db_result r;
    memset(&r, 0, sizeof r);
    snprintf(r.device_uuid, sizeof r.device_uuid, "%s", ST_UUID);
    snprintf(r.kernel, sizeof r.kernel, "%s", st_family.name);
    snprintf(r.source_hash, sizeof r.source_hash, "%s", tpl_source_hash(&st_family));
    r.problem.n_dims = 1;
    r.problem.dims[0] = row->n;
    snprintf(r.config, sizeof r.config, "%s", row->config);
    snprintf(r.status, sizeof r.status, "%s", row->status);
    r.time_ms = r.time_min_ms = r.time_max_ms = row->ms;
    r.runs = 5;
    r.deterministic = row->det;
    snprintf(r.binary_key, sizeof r.binary_key, "st-%s", row->config);
    return db_store_result(d, &r);
}

/* Writes the fixture into a new database at path; "" or the failure. */
static void st_make(const char *path, char *why, size_t len)
{
    db *d = NULL;
    char err[512];
    why[0] = '\0';
    if (db_open(&d, path, DB_OPEN_CREATE, err, sizeof err) != AT_OK) {
        snprintf(why, len, "db_open: %s", err);
        return;
    }
    at_device_info info = st_device();
    if (db_put_device(d, &info, "13.0") != AT_OK ||
        db_put_binary(d, "st-best", st_family.name, "h", "A=2,ATOMIC=0", "sm_90", "13.0", "",
                      st_cubin, sizeof st_cubin - 1) != AT_OK)
        snprintf(why, len, "fixture: %s", db_errmsg(d));
    for (size_t i = 0; !why[0] && i < sizeof st_rows / sizeof st_rows[0]; i++)
        if (st_store(d, &st_rows[i]) != AT_OK)
            snprintf(why, len, "fixture row %zu: %s", i, db_errmsg(d));
    db_close(d);
}

/* Stores st_wal_row from a child that exits without closing, so the row
 * lives only in path's -wal (and its -shm stays); 1 if it did. */
static int st_leave_wal(const char *path)
{
    pid_t pid = fork();
    if (pid == 0) {
        db *d = NULL;
        char err[512];
        if (db_open(&d, path, DB_OPEN_EXISTING, err, sizeof err) != AT_OK ||
            st_store(d, &st_wal_row) != AT_OK)
            _exit(1);
        _exit(0);                    /* no db_close: no checkpoint */
    }
    int status = 0;
    if (pid < 0 || waitpid(pid, &status, 0) != pid)
        return 0;
    char wal[4400];
    snprintf(wal, sizeof wal, "%s-wal", path);
    struct stat sb;
    return WIFEXITED(status) && WEXITSTATUS(status) == 0 && stat(wal, &sb) == 0 &&
           sb.st_size > 0;
}

/* ---- running checks where the database cannot be written ---- */
/* ---- the runtime on a database it cannot write ---- */

/* The fastest ok configuration at size n of the fixture (plus the -wal's
 * row where with_wal), by a scan of the fixture's own table. */
static const char *st_expected(long long n, int deterministic, int with_wal)
{
    const char *best = NULL;
    double t = 1e300;
    for (size_t i = 0; i <= sizeof st_rows / sizeof st_rows[0]; i++) {
        const st_row *r = i < sizeof st_rows / sizeof st_rows[0] ? &st_rows[i] : &st_wal_row;
        if (r == &st_wal_row && !with_wal)
            continue;
        if (r->n == n && strcmp(r->status, DB_OK) == 0 && (!deterministic || r->det) &&
            r->ms < t) {
            t = r->ms;
            best = r->config;
        }
    }
    return best;
}

/* What a handle does: open the way at_create does, then look up. */
static void st_check_lookups(const char *path, void *arg, char *why, size_t len)
{
    int with_wal = *(const int *)arg;
    db *d = NULL;
    char msg[1024] = "";
    at_status s = lk_open_db(path, &d, msg, sizeof msg);
    if (s != AT_OK || !d) {
        snprintf(why, len, "lk_open_db: %s (%s)", at_status_string(s), msg);
        return;
    }
    if (!db_is_readonly(d) || !db_readonly_reason(d)[0]) {
        snprintf(why, len, "the handle may write (readonly %d)", db_is_readonly(d));
        db_close(d);
        return;
    }
    at_device_info dev = st_device();
    int cfg[TPL_MAX_PARAMS];
    char config[TPL_CONFIG_LEN];
    /* exact and nearest shape, fastest and fastest deterministic */
    static const long long asked[2] = {1024, 800000}, tuned[2] = {1024, 1048576};
    for (int k = 0; k < 4 && !why[0]; k++) {
        tpl_problem p = TPL_PROBLEM(1, {asked[k / 2], 0, 0});
        int det = k % 2;
        const char *want = st_expected(tuned[k / 2], det, with_wal);
        at_lookup_level lv = lk_choose(d, &dev, &st_family, &p, det, cfg, config);
        at_lookup_level want_lv = k < 2 ? AT_LOOKUP_EXACT : AT_LOOKUP_NEAREST;
        if (lv != want_lv || !want || strcmp(config, want) != 0)
            snprintf(why, len, "n=%lld det=%d: level %d config %s, want level %d %s "
                     "(reason %s)", asked[k / 2], det, (int)lv, config, (int)want_lv,
                     want ? want : "?", db_readonly_reason(d));
    }
    void *bin = NULL;
    size_t size = 0;
    if (!why[0] && (db_get_binary(d, "st-best", &bin, &size) != AT_OK ||
                    size != sizeof st_cubin - 1 || memcmp(bin, st_cubin, size) != 0))
        snprintf(why, len, "stored cubin: %s", db_errmsg(d));
    free(bin);
    if (!why[0] && (db_put_binary(d, "st-new", "x", "h", "", "sm_90", "", "", "ab", 2) !=
                        AT_ERR_DB || !strstr(db_errmsg(d), "read-only")))
        snprintf(why, len, "a write was not refused: %s", db_errmsg(d));
    db_close(d);
}

typedef struct st_case {
    const char *name;
    mode_t file_mode, dir_mode;      /* for the ways by modes */
    int wal;                         /* 0 none, 1 -wal and -shm left, 2 -wal only */
    int by_modes_only;               /* the case is about modes, not a mount */
} st_case;

static const st_case st_cases[] = {
    {"file 0444 in folder 0555", 0444, 0555, 0, 0},
    {"file 0444 in folder 0555, -wal and -shm left over", 0444, 0555, 1, 0},
    {"file 0444 in folder 0555, -wal left over without -shm", 0444, 0555, 2, 0},
    {"file 0666 in folder 0555", 0666, 0555, 0, 1},
    {"file 0444 in a writable folder", 0444, 0777, 0, 1},
};

/* One case one way: fixture, modes, the check in a child, then the files
 * compared with their bytes before. 0 ok, 77 way unavailable, else 1. */
static int st_run_case(const st_case *c, st_way way, char *why, size_t len)
{
    char dir[4400], path[4500], wal[4600], shm[4600], snap[4500];
    snprintf(dir, sizeof dir, "%s/ro", th_tmpdir());
    snprintf(path, sizeof path, "%s/tuning.db", dir);
    snprintf(wal, sizeof wal, "%s-wal", path);
    snprintf(shm, sizeof shm, "%s-shm", path);
    snprintf(snap, sizeof snap, "%s/../snap", dir);
    mkdir(dir, 0755);
    mkdir(snap, 0777);
    chmod(snap, 0777);
    st_make(path, why, len);
    if (why[0])
        return 1;
    if (c->wal && !st_leave_wal(path)) {
        snprintf(why, len, "could not leave a -wal behind");
        return 1;
    }
    if (c->wal == 2)
        unlink(shm);
    int by_modes = way != ST_RO_MOUNT;
    if (by_modes) {
        chmod(path, c->file_mode);
        chmod(dir, geteuid() != 0 && c->dir_mode == 0777 ? 0755 : c->dir_mode);
    }
    unsigned long long h_db = st_file_hash(path), h_wal = st_file_hash(wal);
    setenv("TMPDIR", snap, 1);       /* where a snapshot would go */
    int with_wal = c->wal != 0;
    int rc = st_run_in_way(way, path, st_check_lookups, &with_wal, why, len);
    unsetenv("TMPDIR");
    chmod(dir, 0755);
    if (rc == 0 && (st_file_hash(path) != h_db || st_file_hash(wal) != h_wal)) {
        snprintf(why, len, "the database's bytes changed");
        rc = 1;
    }
    if (rc == 0 && rmdir(snap) != 0) {
        snprintf(why, len, "a snapshot was left in %.1000s", snap);
        rc = 1;
    }
    return rc;
}

TEST(storage_runtime_reads_readonly_database)
{
    st_way ways[2];
    int n_ways = st_ways(ways);
    for (int w = 0; w < n_ways; w++) {
        int ran = 0;
        for (size_t i = 0; i < sizeof st_cases / sizeof st_cases[0]; i++) {
            if (ways[w] == ST_RO_MOUNT && st_cases[i].by_modes_only)
                continue;
            char why[2048] = "";
            int rc = st_run_case(&st_cases[i], ways[w], why, sizeof why);
            if (rc == 77)
                break;
            CHECK_MSG(rc == 0, "%s, %s: %s", st_cases[i].name, st_way_text[ways[w]], why);
            ran++;
        }
        if (ran)
            printf("     read-only by %s: %d cases passed\n", st_way_text[ways[w]], ran);
        else
            printf("     note: read-only by %s: not available here\n", st_way_text[ways[w]]);
    }
}

TEST(storage_open_readonly_mode_never_writes)
{
    char path[4400], why[1024] = "";
    snprintf(path, sizeof path, "%s/tuning.db", th_tmpdir());
    st_make(path, why, sizeof why);
    CHECK_MSG(!why[0], "%s", why);
    CHECK(st_leave_wal(path));
    char wal[4500];
    snprintf(wal, sizeof wal, "%s-wal", path);
    unsigned long long h_db = st_file_hash(path), h_wal = st_file_hash(wal);
    /* the file is writable: only the mode keeps the handle from writing */
    CHECK(access(path, W_OK) == 0);
    {
        db *d = NULL;
        char err[512];
        CHECK_OK(db_open(&d, path, DB_OPEN_READONLY, err, sizeof err));
        CHECK(db_is_readonly(d));
        CHECK_STR(db_readonly_reason(d), "opened read-only");
        tpl_problem p = TPL_PROBLEM(1, {1024, 0, 0});
        db_result best;
        CHECK_OK(db_best(d, ST_UUID, st_family.name, tpl_source_hash(&st_family), &p, 0,
                         &best));
        CHECK_STR(best.config, st_expected(1024, 0, 1));
        CHECK_EQ(st_store(d, &st_rows[0]), AT_ERR_DB);
        CHECK(strstr(db_errmsg(d), "read-only") && strstr(db_errmsg(d), "opened read-only"));
        at_device_info info = st_device();
        CHECK_EQ(db_put_device(d, &info, "13.0"), AT_ERR_DB);
        db_close(d);
    }
    CHECK(st_file_hash(path) == h_db && st_file_hash(wal) == h_wal);
    /* a missing file is not created */
    char missing[4500];
    snprintf(missing, sizeof missing, "%s/none/x.db", th_tmpdir());
    db *d = NULL;
    char err[512];
    CHECK_EQ(db_open(&d, missing, DB_OPEN_READONLY, err, sizeof err), AT_ERR_NOT_FOUND);
    CHECK(access(missing, F_OK) != 0);
}

/* ---- a tuner on a read-only database or a full disk ---- */

/* 1 if every line of before (a st_dump) is in after. */
static int st_rows_kept(const char *before, const char *after, char *missing, size_t len)
{
    const char *p = before + 1;
    while (*p) {
        const char *end = strchr(p, '\n');
        char line[1200];
        snprintf(line, sizeof line, "\n%.*s\n", (int)(end - p), p);
        if (!strstr(after, line)) {
            snprintf(missing, len, "%s", line + 1);
            return 0;
        }
        p = end + 1;
    }
    return 1;
}

/* The fake tuner's command on db path (extra options appended). */
static void st_tuner_cmd(char *cmd, size_t len, const char *path, const char *extra)
{
    snprintf(cmd, len,
             "test -x %s/autotune-test || exit 77; "
             "AUTOTUNE_WORKER='%s/autotune-test __fake_worker' %s/autotune-test --device 0 "
             "--kernel test_oob --db %s --seed 5 --quiet %s",
             th_build_dir(), th_build_dir(), th_build_dir(), path, extra);
}

/* A database with three results of test_oob stored by the fake tuner. */
static int st_prefill(const char *path, char *out, size_t len)
{
    char cmd[16384];
    st_tuner_cmd(cmd, sizeof cmd, path, "--budget 3e");
    return st_shell(ST_AS_USER, "/", 0, cmd, out, len);
}

/* Copies file src to dst; 1 if it did. */
static int st_copy_file(const char *src, const char *dst)
{
    FILE *in = fopen(src, "rb"), *out = in ? fopen(dst, "wb") : NULL;
    char buf[8192];
    size_t n;
    int ok = in && out;
    while (ok && (n = fread(buf, 1, sizeof buf, in)) > 0)
        ok = fwrite(buf, 1, n, out) == n;
    if (in)
        fclose(in);
    if (out)
        ok = fclose(out) == 0 && ok;
    return ok;
}

/* The last "autotune: ..." line of a tuner's output, for the log. */
static void st_print_message(const char *out)
{
    const char *m = NULL, *p = out;
    while ((p = strstr(p, "autotune: ")) != NULL)
        m = p++;
    if (m)
        printf("       said: %.*s\n", (int)(strchr(m, '\n') ? strchr(m, '\n') - m
                                                                 : (long)strlen(m)), m);
}

TEST(storage_tuner_readonly_database_stops_cleanly)
{
    static char before[1 << 16], after[1 << 16], out[1 << 16];
    char dir[4400], path[4500], cmd[16384];
    snprintf(dir, sizeof dir, "%s/ro", th_tmpdir());
    snprintf(path, sizeof path, "%s/tuning.db", dir);
    mkdir(dir, 0755);
    int rc = st_prefill(path, out, sizeof out);
    CHECK_MSG(rc == 0, "prefill exit %d: %s", rc, out);
    int intact = 0;
    CHECK(st_dump(path, before, sizeof before, &intact) && intact);
    CHECK(strstr(before, "\nresult 3|") && !strstr(before, "\nresult 4|"));
    unsigned long long hash = st_file_hash(path);
    st_way ways[2];
    int n_ways = st_ways(ways);
    for (int w = 0; w < n_ways; w++) {
        if (ways[w] == ST_AS_NOBODY)
            st_open_path_for_others(dir);
        if (ways[w] != ST_RO_MOUNT) {
            chmod(path, 0444);
            chmod(dir, 0555);
        }
        st_tuner_cmd(cmd, sizeof cmd, path, "");
        rc = st_shell(ways[w], dir, 0, cmd, out, sizeof out);
        chmod(dir, 0755);
        chmod(path, 0644);
        if (rc == 77) {
            printf("     note: read-only by %s: not available here\n", st_way_text[ways[w]]);
            continue;
        }
        printf("     read-only by %s: exit %d\n", st_way_text[ways[w]], rc);
        st_print_message(out);
        CHECK_MSG(rc == 1, "exit %d: %s", rc, out);
        CHECK_MSG(strstr(out, "read-only"), "%s", out);
        CHECK(st_file_hash(path) == hash);
        CHECK(st_dump(path, after, sizeof after, &intact));
        CHECK(intact);
        CHECK_STR(after, before);
    }
}

TEST(storage_tuner_full_disk_stops_cleanly)
{
    static char before[1 << 16], after[1 << 16], out[1 << 16];
    char base[4400], pre[4500], dir[4500], path[4600], save[4500], cmd[16384],
         run[40000], missing[1200];
    snprintf(base, sizeof base, "%s", th_tmpdir());
    snprintf(pre, sizeof pre, "%s/prefill.db", base);
    int rc = st_prefill(pre, out, sizeof out);
    CHECK_MSG(rc == 0, "prefill exit %d: %s", rc, out);
    int intact = 0;
    CHECK(st_dump(pre, before, sizeof before, &intact) && intact);
    long long size = st_size(pre);
    CHECK(size > 0);
    static const st_way ways[2] = {ST_FSIZE, ST_TMPFS};
    for (int w = 0; w < 2; w++) {
        snprintf(dir, sizeof dir, "%s/way%d", base, w);
        snprintf(save, sizeof save, "%s/saved%d", base, w);
        snprintf(path, sizeof path, "%s/tuning.db", dir);
        mkdir(dir, 0755);
        mkdir(save, 0755);
        long long bytes;
        st_tuner_cmd(cmd, sizeof cmd, path, "");
        if (ways[w] == ST_FSIZE) {
            /* no file may grow past the database's size: the -wal fills */
            bytes = size;
            CHECK(st_copy_file(pre, path));
            snprintf(run, sizeof run, "%s", cmd);
        } else {
            /* a tmpfs with room for the file, its -shm and a few pages */
            bytes = (size + 48 * 1024 + 4095) / 4096 * 4096;
            snprintf(run, sizeof run, "cp %s %s || exit 3; %s; rc=$?; cp %s* %s/; exit $rc",
                     pre, path, cmd, path, save);
        }
        rc = st_shell(ways[w], dir, bytes, run, out, sizeof out);
        if (rc == 77) {
            printf("     note: full disk by %s: not available here\n", st_way_text[ways[w]]);
            continue;
        }
        printf("     full disk by %s (%lld bytes): exit %d\n", st_way_text[ways[w]], bytes, rc);
        st_print_message(out);
        CHECK_MSG(rc == 1, "exit %d: %s", rc, out);
        CHECK_MSG(strstr(out, "no space left") || strstr(out, "cannot grow past"), "%s", out);
        if (ways[w] == ST_TMPFS)
            snprintf(path, sizeof path, "%s/tuning.db", save);
        CHECK(st_dump(path, after, sizeof after, &intact));
        CHECK_MSG(intact, "integrity_check failed after: %s", out);
        CHECK_MSG(st_rows_kept(before, after, missing, sizeof missing),
                  "lost: %s\nafter:%s", missing, after);
        /* with room again, the same command resumes and completes */
        st_tuner_cmd(cmd, sizeof cmd, path, "");
        rc = st_shell(ST_AS_USER, "/", 0, cmd, out, sizeof out);
        CHECK_MSG(rc == 0, "rerun exit %d: %s", rc, out);
        CHECK(st_dump(path, after, sizeof after, &intact) && intact);
        CHECK(st_rows_kept(before, after, missing, sizeof missing));
        CHECK(strstr(after, "\nresult 13|") != NULL);
    }
}

TEST(storage_gc_refuses_readonly_database)
{
    char dir[4400], path[4500], cmd[9000], why[1024] = "";
    static char out[1 << 14];
    snprintf(dir, sizeof dir, "%s/ro", th_tmpdir());
    snprintf(path, sizeof path, "%s/tuning.db", dir);
    mkdir(dir, 0755);
    st_make(path, why, sizeof why);
    CHECK_MSG(!why[0], "%s", why);
    /* a cubin no result names: gc would delete it */
    db *d = NULL;
    char err[512];
    CHECK_OK(db_open(&d, path, DB_OPEN_EXISTING, err, sizeof err));
    CHECK_OK(db_put_binary(d, "st-unused", "x", "h", "", "sm_90", "", "", "abc", 3));
    db_close(d);
    unsigned long long hash = st_file_hash(path);
    st_way ways[2];
    int n_ways = st_ways(ways);
    for (int w = 0; w < n_ways; w++) {
        if (ways[w] == ST_AS_NOBODY)
            st_open_path_for_others(dir);
        for (int dry = 0; dry < 2; dry++) {
            if (ways[w] != ST_RO_MOUNT) {
                chmod(path, 0444);
                chmod(dir, 0555);
            }
            snprintf(cmd, sizeof cmd, "test -x %s/autotune || exit 77; %s/autotune gc --db %s "
                     "--keep-recent 0%s", th_build_dir(), th_build_dir(), path,
                     dry ? " --dry-run" : "");
            int rc = st_shell(ways[w], dir, 0, cmd, out, sizeof out);
            chmod(dir, 0755);
            chmod(path, 0644);
            if (rc == 77) {
                printf("     note: read-only by %s: not available here\n", st_way_text[ways[w]]);
                break;
            }
            if (!dry) {
                printf("     read-only by %s: exit %d\n", st_way_text[ways[w]], rc);
                st_print_message(out);
                CHECK_MSG(rc == 1 && strstr(out, "read-only") &&
                          strstr(out, "nothing was deleted"), "exit %d: %s", rc, out);
            } else {
                /* no result names the fixture's two cubins */
                CHECK_MSG(rc == 0 && strstr(out, "would delete 2 cubins"), "dry run exit %d: %s",
                          rc, out);
            }
            CHECK(st_file_hash(path) == hash);
        }
    }
}

TEST(storage_tuning_run_ends_with_the_database_size)
{
    static char out[1 << 16];
    char path[4400];
    snprintf(path, sizeof path, "%s/size.db", th_tmpdir());
    int rc = st_prefill(path, out, sizeof out);
    CHECK_MSG(rc == 0, "exit %d: %s", rc, out);
    const char *line = strstr(out, "\ndatabase: ");
    CHECK_MSG(line, "no size line in %s", out);
    printf("    %.*s\n", (int)(strchr(line + 1, '\n') - line - 1), line + 1);
    /* the counts it names, against SQLite's own */
    sqlite3 *h = NULL;
    sqlite3_stmt *st = NULL;
    CHECK(sqlite3_open_v2(path, &h, SQLITE_OPEN_READONLY, NULL) == SQLITE_OK);
    CHECK(sqlite3_prepare_v2(h, "SELECT (SELECT count(*) FROM result), "
                             "(SELECT count(*) FROM binary)", -1, &st, NULL) == SQLITE_OK);
    CHECK(sqlite3_step(st) == SQLITE_ROW);
    char want[128];
    snprintf(want, sizeof want, "), %d results, %d cubins of ", sqlite3_column_int(st, 0),
             sqlite3_column_int(st, 1));
    sqlite3_finalize(st);
    sqlite3_close(h);
    CHECK_MSG(strstr(line, want), "want '%s' in %s", want, line);
    /* measured after a checkpoint: the file holds everything */
    CHECK_MSG(strstr(line, "(file ") && strstr(line, " + WAL 0 B)"), "%s", line);
}
