/* test_storage.c: CPU-tier tests of the database where it cannot be written
 * (read-only file, folder or mount; full disk) and of its size and gc. */
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

/* FNV-1a of a file's bytes; 0 if it is missing or empty (a reader may
 * create an empty -wal beside a database). */
static unsigned long long st_file_hash(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return 0;
    unsigned long long h = 14695981039346656037ull;
    int c, any = 0;
    while ((c = fgetc(f)) != EOF) {
        any = 1;
        h ^= (unsigned char)c;
        h *= 1099511628211ull;
    }
    fclose(f);
    return any ? h : 0;
}

/* ---- running checks where the database cannot be written ---- */

typedef enum st_way {
    ST_AS_USER,                      /* not root: the file modes apply */
    ST_AS_NOBODY,                    /* root drops to uid 65534 */
    ST_RO_MOUNT,                     /* root: folder bind-mounted read-only */
    ST_FSIZE,                        /* a file size limit: no file may grow */
    ST_TMPFS,                        /* root: a small tmpfs on the folder */
} st_way;

static const char *const st_way_text[] = {
    "file and folder modes (the tests run unprivileged)",
    "file and folder modes, checked as uid 65534 (root writes through modes)",
    "a read-only bind mount in a private mount namespace",
    "a file size limit (RLIMIT_FSIZE, SIGXFSZ ignored)",
    "a real tmpfs barely larger than the database, in a private mount namespace",
};

/* Lets uid 65534 reach path: adds o+x to its folders up to the test root. */
static void st_open_path_for_others(const char *path)
{
    char dir[4700];
    snprintf(dir, sizeof dir, "%s", path);
    for (int up = 0; up < 3; up++) {
        char *slash = strrchr(dir, '/');
        if (!slash || slash == dir)
            break;
        *slash = '\0';
        struct stat sb;
        if (stat(dir, &sb) == 0 && !(sb.st_mode & S_IXOTH))
            chmod(dir, (sb.st_mode & 07777) | S_IXOTH);
    }
}

/* In a child: makes dir unwritable (or small: bytes) the way asked; 0, or
 * 77 where this machine cannot (the caller reports the way as not run). */
static int st_enter_way(st_way way, const char *dir, long long bytes)
{
    if (way == ST_AS_NOBODY) {
        if (setgroups(0, NULL) != 0 || setgid(65534) != 0 || setuid(65534) != 0)
            return 77;
        return access(dir, R_OK | X_OK) == 0 ? 0 : 77;
    }
    if (way == ST_FSIZE) {
        struct rlimit lim = {(rlim_t)bytes, (rlim_t)bytes};
        signal(SIGXFSZ, SIG_IGN);
        return setrlimit(RLIMIT_FSIZE, &lim) == 0 ? 0 : 77;
    }
    if (way == ST_RO_MOUNT || way == ST_TMPFS) {
        char opts[64];
        snprintf(opts, sizeof opts, "size=%lld", bytes);
        if (unshare(CLONE_NEWNS) != 0 ||
            mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) != 0)
            return 77;
        if (way == ST_TMPFS)
            return mount("tmpfs", dir, "tmpfs", 0, opts) == 0 ? 0 : 77;
        if (mount(dir, dir, NULL, MS_BIND, NULL) != 0 ||
            mount(NULL, dir, NULL, MS_REMOUNT | MS_BIND | MS_RDONLY, NULL) != 0)
            return 77;
        return access(dir, W_OK) != 0 && errno == EROFS ? 0 : 77;
    }
    return 0;
}

typedef void (*st_check_fn)(const char *path, void *arg, char *why, size_t len);

/* Runs check(path) in a child that cannot write path's folder (way);
 * returns 0 if it passed, 77 if the way is not available here, else 1
 * with the failure in why. */
static int st_run_in_way(st_way way, const char *path, st_check_fn check, void *arg,
                         char *why, size_t len)
{
    char dir[4600];
    snprintf(dir, sizeof dir, "%s", path);
    *strrchr(dir, '/') = '\0';
    if (way == ST_AS_NOBODY)
        st_open_path_for_others(dir);
    int fds[2];
    if (pipe(fds) != 0) {
        snprintf(why, len, "pipe: %s", strerror(errno));
        return 1;
    }
    fflush(stdout);
    pid_t pid = fork();
    if (pid == 0) {
        char msg[2048] = "";
        close(fds[0]);
        int rc = st_enter_way(way, dir, 0);
        if (rc == 0) {
            check(path, arg, msg, sizeof msg);
            rc = msg[0] ? 1 : 0;
        }
        ssize_t w = write(fds[1], msg, strlen(msg));
        (void)w;
        _exit(rc);
    }
    close(fds[1]);
    ssize_t got = pid > 0 ? read(fds[0], why, len - 1) : -1;
    why[got > 0 ? got : 0] = '\0';
    close(fds[0]);
    int status = 0;
    if (pid < 0 || waitpid(pid, &status, 0) != pid) {
        snprintf(why, len, "fork/wait: %s", strerror(errno));
        return 1;
    }
    if (!WIFEXITED(status)) {
        snprintf(why, len, "check child died (signal %d)", WTERMSIG(status));
        return 1;
    }
    return WEXITSTATUS(status);
}

/* The ways this machine offers: as root, dropping privileges and a
 * read-only mount; otherwise the modes themselves. */
static int st_ways(st_way *ways)
{
    if (geteuid() != 0) {
        ways[0] = ST_AS_USER;
        return 1;
    }
    ways[0] = ST_AS_NOBODY;
    ways[1] = ST_RO_MOUNT;
    return 2;
}

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

/* Runs cmd with /bin/sh in a child entered into way (dir, bytes as
 * st_enter_way); output (stdout and stderr) into out. The shell's exit
 * status, 77 if the way is not available here, -1 if it could not run. */
static int st_shell(st_way way, const char *dir, long long bytes, const char *cmd,
                    char *out, size_t len)
{
    int fds[2];
    out[0] = '\0';
    if (pipe(fds) != 0)
        return -1;
    fflush(stdout);
    pid_t pid = fork();
    if (pid == 0) {
        close(fds[0]);
        dup2(fds[1], 1);
        dup2(fds[1], 2);
        close(fds[1]);
        if (st_enter_way(way, dir, bytes) != 0)
            _exit(77);
        execl("/bin/sh", "sh", "-c", cmd, (char *)NULL);
        _exit(127);
    }
    close(fds[1]);
    size_t used = 0;
    ssize_t got;
    while (pid > 0 && (got = read(fds[0], out + used, len - 1 - used)) > 0)
        used += (size_t)got;
    out[used] = '\0';
    close(fds[0]);
    int status = 0;
    if (pid < 0 || waitpid(pid, &status, 0) != pid)
        return -1;
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

/* Appends one line per result and cubin row of the database at path, read
 * with SQLite itself (not db/), to out ("\n"-framed, so "\nLINE\n" finds a
 * row); *intact = 1 if PRAGMA integrity_check says ok. 0 if unreadable. */
static int st_dump(const char *path, char *out, size_t len, int *intact)
{
    static const char *const queries[] = {
        "PRAGMA integrity_check",
        "SELECT 'result ' || id || '|' || device_id || '|' || kernel_id || '|' || problem_id "
        "|| '|' || config || '|' || status || '|' || time_ms || '|' || binary_key "
        "FROM result ORDER BY id",
        "SELECT 'binary ' || key || '|' || size || '|' || length(cubin) FROM binary ORDER BY key",
    };
    sqlite3 *h = NULL;
    size_t used = 0;
    *intact = 0;
    if (sqlite3_open_v2(path, &h, SQLITE_OPEN_READWRITE, NULL) != SQLITE_OK) {
        sqlite3_close(h);
        return 0;
    }
    used += (size_t)snprintf(out, len, "\n");
    int ok = 1;
    for (int q = 0; q < 3 && ok; q++) {
        sqlite3_stmt *st;
        ok = sqlite3_prepare_v2(h, queries[q], -1, &st, NULL) == SQLITE_OK;
        while (ok && sqlite3_step(st) == SQLITE_ROW) {
            const char *text = (const char *)sqlite3_column_text(st, 0);
            if (q == 0)
                *intact = text && strcmp(text, "ok") == 0;
            else if (used < len)
                used += (size_t)snprintf(out + used, len - used, "%s\n", text ? text : "");
        }
        sqlite3_finalize(st);
    }
    sqlite3_close(h);
    return ok && used < len;
}

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

static long long st_size(const char *path)
{
    struct stat sb;
    return stat(path, &sb) == 0 ? (long long)sb.st_size : -1;
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

/* ---- size and gc ---- */

/* A database of many results and cubins written through db_: 3 devices
 * (two sm_90, one sm_80), kernel "ga" of two sources and "gb", 4 sizes,
 * 40 configurations each with noisy times, some deterministic, some
 * failed, one ok row of time 0; a cubin per (arch, kernel, source,
 * configuration) as the tuner keys them, and cubins no result names. */
#define GC_NDEV 3
#define GC_NKER 3
#define GC_NPROB 4
#define GC_NCFG 40
#define GC_NROWS (GC_NDEV * GC_NKER * GC_NPROB * GC_NCFG)
#define GC_NORPHAN 5

typedef struct gc_row {
    int dev, ker, prob, cfg;
    char status[16];
    double ms;
    int det;
    char key[40];
} gc_row;

static const char *const gc_uuid[GC_NDEV] = {"GPU-g0", "GPU-g1", "GPU-g2"};
static const char *const gc_arch[GC_NDEV] = {"sm_90", "sm_90", "sm_80"};
static const char *const gc_kname[GC_NKER] = {"ga", "ga", "gb"};
static const char *const gc_khash[GC_NKER] = {"h-new", "h-old", "h-new"};

static unsigned long long gc_rng(unsigned long long *s)
{
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    return *s;
}

/* Fills rows (in storing order) from a seed: the test's own record. */
static void gc_rows(gc_row *rows, unsigned long long seed)
{
    int n = 0;
    for (int d = 0; d < GC_NDEV; d++)
        for (int k = 0; k < GC_NKER; k++)
            for (int p = 0; p < GC_NPROB; p++)
                for (int c = 0; c < GC_NCFG; c++) {
                    gc_row *r = &rows[n++];
                    memset(r, 0, sizeof *r);
                    r->dev = d, r->ker = k, r->prob = p, r->cfg = c;
                    unsigned long long x = gc_rng(&seed);
                    /* a configuration's quality carries across sizes and
                     * devices, with noise; determinism is its own */
                    double base = 1.0 + (double)(c * 7919 % GC_NCFG) / 8.0;
                    r->ms = base * (1.0 + (double)(x % 1000003) / 2000006.0);
                    r->det = c % 3 != 0;
                    int fail = (int)((x >> 32) % 10);
                    snprintf(r->status, sizeof r->status, "%s",
                             fail == 0 ? DB_WRONG_RESULT : fail == 1 ? DB_CRASHED :
                             fail == 2 ? DB_ABANDONED : DB_OK);
                    if (c == 0 && p == 0)
                        r->ms = 0.0;             /* ok but never served */
                    snprintf(r->key, sizeof r->key, "%s-%s-%s-C%d", gc_arch[d], gc_kname[k],
                             gc_khash[k], c);
                }
}

/* Writes rows through db_ into a new database at path; "" or why. */
static void gc_make(const char *path, const gc_row *rows, char *why, size_t len)
{
    db *d = NULL;
    char err[512];
    why[0] = '\0';
    if (db_open(&d, path, DB_OPEN_CREATE, err, sizeof err) != AT_OK) {
        snprintf(why, len, "%s", err);
        return;
    }
    for (int i = 0; i < GC_NDEV && !why[0]; i++) {
        at_device_info info;
        memset(&info, 0, sizeof info);
        snprintf(info.uuid, sizeof info.uuid, "%s", gc_uuid[i]);
        info.cc_major = gc_arch[i][3] - '0';
        info.cc_minor = 0;
        if (db_put_device(d, &info, "13.0") != AT_OK)
            snprintf(why, len, "%s", db_errmsg(d));
    }
    char cubin[600];
    for (int i = 0; i < GC_NROWS && !why[0]; i++) {
        const gc_row *g = &rows[i];
        memset(cubin, 'a' + i % 26, sizeof cubin);
        if (db_put_binary(d, g->key, gc_kname[g->ker], gc_khash[g->ker], "C", gc_arch[g->dev],
                          "13.0", "", cubin, sizeof cubin) != AT_OK)
            snprintf(why, len, "%s", db_errmsg(d));
        db_result r;
        memset(&r, 0, sizeof r);
        snprintf(r.device_uuid, sizeof r.device_uuid, "%s", gc_uuid[g->dev]);
        snprintf(r.kernel, sizeof r.kernel, "%s", gc_kname[g->ker]);
        snprintf(r.source_hash, sizeof r.source_hash, "%s", gc_khash[g->ker]);
        r.problem.n_dims = 1;
        r.problem.dims[0] = 1000 << g->prob;
        snprintf(r.config, sizeof r.config, "C=%d", g->cfg);
        snprintf(r.status, sizeof r.status, "%s", g->status);
        r.time_ms = r.time_min_ms = r.time_max_ms = g->ms;
        r.deterministic = g->det;
        snprintf(r.binary_key, sizeof r.binary_key, "%s", g->key);
        if (!why[0] && db_store_result(d, &r) != AT_OK)
            snprintf(why, len, "%s", db_errmsg(d));
    }
    for (int i = 0; i < GC_NORPHAN && !why[0]; i++) {
        char key[40];
        snprintf(key, sizeof key, "orphan-%d", i);
        if (db_put_binary(d, key, "ga", "h-new", "C", "sm_90", "13.0", "", cubin, 100) != AT_OK)
            snprintf(why, len, "%s", db_errmsg(d));
    }
    db_close(d);
}

/* 1 if row i is among the `top` fastest ok rows (det_only: deterministic
 * ones) of its partition: same kernel, source and problem, and the same
 * device (by_arch 0) or architecture (by_arch 1). By a scan of rows. */
static int gc_in_top(const gc_row *rows, int i, int top, int by_arch, int det_only)
{
    const gc_row *a = &rows[i];
#define GC_SERVABLE(r) (strcmp((r)->status, DB_OK) == 0 && (r)->ms > 0 && (!det_only || (r)->det))
    if (!GC_SERVABLE(a))
        return 0;
    int faster = 0;
    for (int j = 0; j < GC_NROWS; j++) {
        const gc_row *b = &rows[j];
        int same = b->ker == a->ker && b->prob == a->prob &&
                   (by_arch ? strcmp(gc_arch[b->dev], gc_arch[a->dev]) == 0 : b->dev == a->dev);
        if (same && GC_SERVABLE(b) && (b->ms < a->ms || (b->ms == a->ms && j < i)))
            faster++;
    }
#undef GC_SERVABLE
    return faster < top;
}

/* The keys gc must keep with keep_recent = 0: a scan of the test's rows. */
static int gc_must_keep(const gc_row *rows, const char *key)
{
    for (int i = 0; i < GC_NROWS; i++)
        if (strcmp(rows[i].key, key) == 0)
            for (int v = 0; v < 4; v++)
                if (gc_in_top(rows, i, LK_PER_PROBLEM, v & 1, v >> 1))
                    return 1;
    return 0;
}

/* The stored cubin keys, read with SQLite itself, "\n"-framed. */
static int gc_keys(const char *path, char *out, size_t len, int *n)
{
    sqlite3 *h = NULL;
    sqlite3_stmt *st = NULL;
    size_t used = (size_t)snprintf(out, len, "\n");
    *n = 0;
    int ok = sqlite3_open_v2(path, &h, SQLITE_OPEN_READONLY, NULL) == SQLITE_OK &&
             sqlite3_prepare_v2(h, "SELECT key FROM binary ORDER BY key", -1, &st,
                                NULL) == SQLITE_OK;
    while (ok && sqlite3_step(st) == SQLITE_ROW && used < len) {
        used += (size_t)snprintf(out + used, len - used, "%s\n", sqlite3_column_text(st, 0));
        (*n)++;
    }
    sqlite3_finalize(st);
    sqlite3_close(h);
    return ok && used < len;
}

static int gc_has_key(const char *keys, const char *key)
{
    char framed[128];
    snprintf(framed, sizeof framed, "\n%.100s\n", key);
    return strstr(keys, framed) != NULL;
}

TEST(storage_gc_keeps_every_best_and_no_other_cubin)
{
    static gc_row rows[GC_NROWS];
    static char before[1 << 18], after[1 << 18], keys[1 << 16], out[1 << 14];
    char path[4400], why[1024], cmd[9000];
    snprintf(path, sizeof path, "%s/gc.db", th_tmpdir());
    gc_rows(rows, 0x9e3779b97f4a7c15ull);
    gc_make(path, rows, why, sizeof why);
    CHECK_MSG(!why[0], "%s", why);
    int intact = 0, n_keys = 0;
    CHECK(st_dump(path, before, sizeof before, &intact) && intact);
    CHECK(gc_keys(path, keys, sizeof keys, &n_keys));
    /* expected: from the test's own rows */
    int n_keep = 0, n_all = 0;
    for (const char *p = keys + 1; *p; p = strchr(p, '\n') + 1) {
        char key[64];
        snprintf(key, sizeof key, "%.*s", (int)(strchr(p, '\n') - p), p);
        n_all++;
        n_keep += gc_must_keep(rows, key);
    }
    CHECK_EQ(n_all, n_keys);
    CHECK_MSG(n_keep > 10 && n_keep < n_all - GC_NORPHAN - 10, "keep %d of %d", n_keep, n_all);

    /* --dry-run: counts, changes nothing */
    unsigned long long hash = st_file_hash(path);
    snprintf(cmd, sizeof cmd, "%s/autotune gc --db %s --dry-run --keep-recent 0",
             th_build_dir(), path);
    int rc = st_shell(ST_AS_USER, "/", 0, cmd, out, sizeof out);
    CHECK_MSG(rc == 0, "dry run exit %d: %s", rc, out);
    char want[128];
    snprintf(want, sizeof want, "would delete %d cubins", n_all - n_keep);
    CHECK_MSG(strstr(out, want), "want '%s' in %s", want, out);
    CHECK(st_file_hash(path) == hash);
    CHECK(st_dump(path, after, sizeof after, &intact) && intact);
    CHECK_STR(after, before);

    /* gc: the kept set exactly, every result row unchanged, smaller file */
    long long size_before = st_size(path);
    snprintf(cmd, sizeof cmd, "%s/autotune gc --db %s --keep-recent 0", th_build_dir(), path);
    rc = st_shell(ST_AS_USER, "/", 0, cmd, out, sizeof out);
    CHECK_MSG(rc == 0, "gc exit %d: %s", rc, out);
    printf("%s", out);
    snprintf(want, sizeof want, "deleted %d cubins", n_all - n_keep);
    CHECK_MSG(strstr(out, want) && strstr(out, "after VACUUM"), "want '%s' in %s", want, out);
    CHECK(st_dump(path, after, sizeof after, &intact) && intact);
    /* the result rows: the same lines, up to the first cubin line */
    size_t n_results = (size_t)(strstr(before, "\nbinary ") - before);
    CHECK_EQ(strstr(after, "\nbinary ") - after, (long long)n_results);
    CHECK(strncmp(before, after, n_results) == 0);
    snprintf(want, sizeof want, "\nresult %d|", GC_NROWS);
    CHECK(strstr(before, want));
    snprintf(want, sizeof want, "\nresult %d|", GC_NROWS + 1);
    CHECK(!strstr(before, want));
    static char kept[1 << 16];
    int n_kept = 0;
    CHECK(gc_keys(path, kept, sizeof kept, &n_kept));
    CHECK_EQ(n_kept, n_keep);
    for (const char *p = keys + 1; *p; p = strchr(p, '\n') + 1) {
        char key[64];
        snprintf(key, sizeof key, "%.*s", (int)(strchr(p, '\n') - p), p);
        CHECK_MSG(gc_has_key(kept, key) == gc_must_keep(rows, key), "cubin %s: kept %d", key,
                  gc_has_key(kept, key));
    }
    /* every best (fastest, fastest deterministic; per device) keeps its cubin */
    for (int i = 0; i < GC_NROWS; i++)
        for (int det = 0; det < 2; det++)
            if (gc_in_top(rows, i, 1, 0, det))
                CHECK_MSG(gc_has_key(kept, rows[i].key), "best %s lost its cubin", rows[i].key);
    CHECK_MSG(st_size(path) < size_before, "%lld -> %lld bytes", size_before, st_size(path));
}

TEST(storage_gc_keep_recent_and_dry_run_through_db)
{
    static gc_row rows[GC_NROWS];
    static char keys[1 << 16], kept[1 << 16];
    char path[4400], why[1024];
    snprintf(path, sizeof path, "%s/gc.db", th_tmpdir());
    gc_rows(rows, 12345);
    gc_make(path, rows, why, sizeof why);
    CHECK_MSG(!why[0], "%s", why);
    int n_keys = 0, n_kept = 0;
    CHECK(gc_keys(path, keys, sizeof keys, &n_keys));
    /* recent: the 7 newest results (the last rows stored) and the 7 newest
     * cubins (the 5 orphans, then the last two rows' keys, stored again) */
    const int recent = 7;
    db *d = NULL;
    char err[512];
    CHECK_OK(db_open(&d, path, DB_OPEN_EXISTING, err, sizeof err));
    db_gc_stats dry, st;
    CHECK_OK(db_gc_binaries(d, LK_PER_PROBLEM, recent, 1, &dry));
    CHECK_OK(db_gc_binaries(d, LK_PER_PROBLEM, recent, 0, &st));
    db_close(d);
    CHECK(gc_keys(path, kept, sizeof kept, &n_kept));
    int want_best = 0, want_recent = 0;
    for (const char *p = keys + 1; *p; p = strchr(p, '\n') + 1) {
        char key[64];
        snprintf(key, sizeof key, "%.*s", (int)(strchr(p, '\n') - p), p);
        int best = gc_must_keep(rows, key), is_recent = strncmp(key, "orphan-", 7) == 0;
        for (int i = GC_NROWS - recent; i < GC_NROWS; i++)
            is_recent |= strcmp(rows[i].key, key) == 0;
        want_best += best;
        want_recent += !best && is_recent;
        CHECK_MSG(gc_has_key(kept, key) == (best || is_recent), "cubin %s", key);
    }
    CHECK_EQ(st.n_best, want_best);
    CHECK_EQ(st.n_recent, want_recent);
    CHECK_EQ(st.n_binaries, n_keys);
    CHECK_EQ(st.n_deleted, n_keys - n_kept);
    CHECK(st.n_deleted > 0 && st.deleted_bytes >= st.n_deleted * 100);
    /* the dry run counted the same and deleted nothing before it */
    CHECK(memcmp(&dry, &st, sizeof st) == 0);
    /* a second gc finds nothing more to delete */
    CHECK_OK(db_open(&d, path, DB_OPEN_EXISTING, err, sizeof err));
    CHECK_OK(db_gc_binaries(d, LK_PER_PROBLEM, recent, 0, &st));
    CHECK_EQ(st.n_deleted, 0);
    db_close(d);
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
