/* test_db_files.c: CPU-tier tests of the database file itself: the default path's precedence,
 * corrupt, foreign, newer, missing and read-only files refused or opened untouched, SQL text
 * stored verbatim, concurrent writers waiting their turn. */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <sqlite3.h>
#include "db.h"
#include "harness.h"
#include "th_db.h"
#include "th_sql.h"

/* Sets or unsets an environment variable (value NULL = unset). */
static void tdb_env(const char *name, const char *value)
{
    if (value)
        setenv(name, value, 1);
    else
        unsetenv(name);
}

TEST(db_default_path_precedence)
{
    const char *names[] = { "AUTOTUNE_DB", "XDG_CACHE_HOME", "HOME" };
    char *saved[3];
    for (int i = 0; i < 3; i++) {
        const char *v = getenv(names[i]);
        saved[i] = v ? strdup(v) : NULL;
    }
    char out[4096];
    int ok = 1;
    tdb_env("AUTOTUNE_DB", "/x/explicit.db");
    tdb_env("XDG_CACHE_HOME", "/x/cache");
    tdb_env("HOME", "/x/home");
    db_default_path(out, sizeof out);
    if (strcmp(out, "/x/explicit.db") != 0) {
        th_fail(__FILE__, __LINE__, "AUTOTUNE_DB not first: %s", out);
        ok = 0;
    }
    tdb_env("AUTOTUNE_DB", "");
    db_default_path(out, sizeof out);
    if (ok && strcmp(out, "/x/cache/autotune/tuning.db") != 0) {
        th_fail(__FILE__, __LINE__, "XDG_CACHE_HOME not second: %s", out);
        ok = 0;
    }
    tdb_env("AUTOTUNE_DB", NULL);
    tdb_env("XDG_CACHE_HOME", NULL);
    db_default_path(out, sizeof out);
    if (ok && strcmp(out, "/x/home/.cache/autotune/tuning.db") != 0) {
        th_fail(__FILE__, __LINE__, "HOME not third: %s", out);
        ok = 0;
    }
    tdb_env("XDG_CACHE_HOME", "relative/cache");   /* invalid per XDG: ignored */
    db_default_path(out, sizeof out);
    if (ok && strcmp(out, "/x/home/.cache/autotune/tuning.db") != 0) {
        th_fail(__FILE__, __LINE__, "relative XDG_CACHE_HOME used: %s", out);
        ok = 0;
    }
    for (int i = 0; i < 3; i++) {
        tdb_env(names[i], saved[i]);
        free(saved[i]);
    }
}

/* Runs db_open(create) on path and checks it is refused as corrupt while the
 * file stays byte-identical and no WAL/journal files appear. */
static void tdb_refused_untouched(const char *path, int line)
{
    size_t n0 = 0, n1 = 0;
    unsigned char *before = tdb_slurp(path, &n0);
    if (!before) {
        th_fail(__FILE__, line, "cannot read %s", path);
        return;
    }
    for (int create = 0; create <= 1; create++) {
        db *d = NULL;
        char err[512] = "";
        at_status s = db_open(&d, path, create, err, sizeof err);
        if (s != AT_ERR_DB_CORRUPT || d != NULL) {
            th_fail(__FILE__, line, "create=%d: %s (%s), expected AT_ERR_DB_CORRUPT", create,
                    at_status_string(s), err);
            db_close(d);
            free(before);
            return;
        }
        if (!err[0]) {
            th_fail(__FILE__, line, "no message for a refused database");
            free(before);
            return;
        }
    }
    unsigned char *after = tdb_slurp(path, &n1);
    if (!after || n0 != n1 || memcmp(before, after, n0) != 0)
        th_fail(__FILE__, line, "%s changed (%zu -> %zu bytes)", path, n0, n1);
    char side[4400];
    for (int i = 0; i < 3; i++) {
        static const char *const suffix[] = { "-wal", "-shm", "-journal" };
        snprintf(side, sizeof side, "%s%s", path, suffix[i]);
        if (tdb_exists(side))
            th_fail(__FILE__, line, "%s was created", side);
    }
    free(before);
    free(after);
}

TEST(db_corrupt_file_refused_untouched)
{
    char path[4300];
    tdb_path(path, sizeof path, "random.db");
    FILE *f = fopen(path, "wb");
    CHECK(f);
    unsigned long long x = 0x9e3779b97f4a7c15ULL;
    for (int i = 0; i < 8192; i++) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        fputc((int)(x & 0xff), f);
    }
    fclose(f);
    tdb_refused_untouched(path, __LINE__);
    CHECK(!th_failed());

    /* SQLite's magic followed by garbage: SQLite itself must reject it. */
    tdb_path(path, sizeof path, "magic.db");
    f = fopen(path, "wb");
    CHECK(f);
    fwrite("SQLite format 3", 1, 16, f);
    for (int i = 16; i < 4096; i++) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        fputc((int)(x & 0xff), f);
    }
    fclose(f);
    tdb_refused_untouched(path, __LINE__);
    CHECK(!th_failed());

    /* A text file. */
    tdb_path(path, sizeof path, "notes.txt");
    f = fopen(path, "wb");
    CHECK(f);
    fputs("these are my notes, not a database\n", f);
    fclose(f);
    tdb_refused_untouched(path, __LINE__);
}

TEST(db_foreign_sqlite_refused_untouched)
{
    char path[4300];
    tdb_path(path, sizeof path, "foreign.db");
    CHECK_EQ(th_sql_exec(path, "CREATE TABLE contacts (name TEXT, phone TEXT);"
                               "INSERT INTO contacts VALUES ('ada', '555');"), SQLITE_OK);
    tdb_refused_untouched(path, __LINE__);
    CHECK(!th_failed());
    CHECK_EQ(th_sql_int(path, "SELECT count(*) FROM contacts"), 1);
    /* Even one that has a table called meta, but not ours. */
    tdb_path(path, sizeof path, "foreign_meta.db");
    CHECK_EQ(th_sql_exec(path, "CREATE TABLE meta (key TEXT, value TEXT);"
                               "INSERT INTO meta VALUES ('created_by', 'someone else');"
                               "PRAGMA user_version = 1;"), SQLITE_OK);
    tdb_refused_untouched(path, __LINE__);
}

TEST(db_newer_schema_refused)
{
    char path[4300], err[512];
    db *d = tdb_fresh(path, sizeof path);
    CHECK(d);
    db_close(d);
    char sql[64];
    snprintf(sql, sizeof sql, "PRAGMA user_version = %d", DB_SCHEMA_VERSION + 1);
    CHECK_EQ(th_sql_exec(path, sql), SQLITE_OK);
    d = NULL;
    CHECK_EQ(db_open(&d, path, 0, err, sizeof err), AT_ERR_DB_CORRUPT);
    CHECK(d == NULL);
    CHECK_MSG(strstr(err, "newer") != NULL, "message: %s", err);
    CHECK_EQ(db_open(&d, path, 1, err, sizeof err), AT_ERR_DB_CORRUPT);
    CHECK_EQ(th_sql_int(path, "PRAGMA user_version"), DB_SCHEMA_VERSION + 1);
    /* Back to our version: usable again (the refusal changed nothing). */
    snprintf(sql, sizeof sql, "PRAGMA user_version = %d", DB_SCHEMA_VERSION);
    CHECK_EQ(th_sql_exec(path, sql), SQLITE_OK);
    CHECK_MSG(db_open(&d, path, 0, err, sizeof err) == AT_OK, "%s", err);
    db_close(d);
    /* Our schema with a table dropped is not usable either. */
    CHECK_EQ(th_sql_exec(path, "DROP TABLE measurement"), SQLITE_OK);
    CHECK_EQ(db_open(&d, path, 0, err, sizeof err), AT_ERR_DB_CORRUPT);
    CHECK_MSG(strstr(err, "measurement") != NULL, "message: %s", err);
}

TEST(db_missing_file_not_found)
{
    char path[4300], err[512] = "";
    tdb_path(path, sizeof path, "absent.db");
    db *d = (db *)&err;                          /* must be reset to NULL */
    CHECK_EQ(db_open(&d, path, 0, err, sizeof err), AT_ERR_NOT_FOUND);
    CHECK(d == NULL);
    CHECK(err[0] != '\0');
    CHECK(!tdb_exists(path));
    /* An empty file is not a database of ours unless we may create it. */
    int fd = open(path, O_CREAT | O_WRONLY, 0644);
    CHECK(fd >= 0);
    close(fd);
    CHECK_EQ(db_open(&d, path, 0, err, sizeof err), AT_ERR_DB_CORRUPT);
    CHECK_MSG(db_open(&d, path, 1, err, sizeof err) == AT_OK, "%s", err);
    db_close(d);
    CHECK_MSG(db_open(&d, path, 0, err, sizeof err) == AT_OK, "%s", err);
    db_close(d);
    /* A path whose folder is a file cannot be created. */
    char bad[4400];
    snprintf(bad, sizeof bad, "%s/sub/x.db", path);
    CHECK_EQ(db_open(&d, bad, 1, err, sizeof err), AT_ERR_IO);
}

/* The read-only checks, run as an unprivileged user where we are root
 * (root writes through permissions). Returns "" or the failure. */
static void tdb_readonly_checks(const char *path, char *why, size_t len)
{
    db *d = NULL;
    char err[512];
    at_status s = db_open(&d, path, 0, err, sizeof err);
    if (s != AT_OK) {
        snprintf(why, len, "open read-only file: %s (%s)", at_status_string(s), err);
        return;
    }
    if (!db_is_readonly(d)) {
        snprintf(why, len, "db_is_readonly is 0 for a 0444 file");
        db_close(d);
        return;
    }
    tpl_problem p = tdb_problem(1, 1000, 0, 0);
    db_result best;
    s = db_best(d, "GPU-A", "sum", "h", &p, 0, &best);
    if (s != AT_OK || strcmp(best.config, "B=128") != 0) {
        snprintf(why, len, "read from read-only: %s (%s)", at_status_string(s), db_errmsg(d));
        db_close(d);
        return;
    }
    void *cubin = NULL;
    size_t size = 0;
    s = db_get_binary(d, "k", &cubin, &size);
    free(cubin);
    if (s != AT_OK || size != 3) {
        snprintf(why, len, "cubin from read-only: %s", at_status_string(s));
        db_close(d);
        return;
    }
    db_result r;
    tdb_result(&r, "GPU-A", "sum", "h", p, "B=1", DB_OK, 1.0, 1);
    s = db_store_result(d, &r);
    if (s != AT_ERR_DB || !strstr(db_errmsg(d), "read-only")) {
        snprintf(why, len, "store into read-only: %s (%s)", at_status_string(s), db_errmsg(d));
        db_close(d);
        return;
    }
    s = db_put_binary(d, "k2", "sum", "h", "B=1", "sm_90", "13.0", "", "abc", 3);
    if (s != AT_ERR_DB) {
        snprintf(why, len, "put_binary into read-only: %s", at_status_string(s));
        db_close(d);
        return;
    }
    at_device_info info;
    tdb_device(&info, "GPU-Z", "x", 9, 0);
    if (db_put_device(d, &info, "13.0") != AT_ERR_DB) {
        snprintf(why, len, "put_device into read-only succeeded");
        db_close(d);
        return;
    }
    db_close(d);
    why[0] = '\0';
}

TEST(db_readonly_file)
{
    char path[4300];
    db *d = tdb_fresh(path, sizeof path);
    CHECK(d);
    db_result r;
    tdb_result(&r, "GPU-A", "sum", "h", tdb_problem(1, 1000, 0, 0), "B=128", DB_OK, 0.5, 1);
    CHECK_OK(db_store_result(d, &r));
    CHECK_OK(db_put_binary(d, "k", "sum", "h", "B=128", "sm_90", "13.0", "", "a\0b", 3));
    db_close(d);
    CHECK_EQ(chmod(path, 0444), 0);

    int fds[2];
    CHECK_EQ(pipe(fds), 0);
    pid_t pid = fork();
    CHECK(pid >= 0);
    if (pid == 0) {
        char why[1024] = "";
        close(fds[0]);
        if (geteuid() == 0) {
            /* Let the unprivileged user reach the file through the test's own
             * folders (the database's folder and its parent). */
            char dir[4300];
            snprintf(dir, sizeof dir, "%s", path);
            for (int up = 0; up < 2; up++) {
                char *slash = strrchr(dir, '/');
                if (!slash || slash == dir)
                    break;
                *slash = '\0';
                struct stat sb;
                if (stat(dir, &sb) == 0 && !(sb.st_mode & S_IXOTH))
                    chmod(dir, (sb.st_mode & 07777) | S_IXOTH);
            }
            if (setgid(65534) != 0 || setuid(65534) != 0)
                snprintf(why, sizeof why, "cannot drop root: %s", strerror(errno));
            else if (access(path, R_OK) != 0)
                _exit(77);          /* a folder above the test's is closed */
        }
        if (!why[0])
            tdb_readonly_checks(path, why, sizeof why);
        ssize_t wr = write(fds[1], why, strlen(why));
        (void)wr;
        _exit(why[0] ? 1 : 0);
    }
    close(fds[1]);
    char msg[1024] = "";
    ssize_t got = read(fds[0], msg, sizeof msg - 1);
    if (got > 0)
        msg[got] = '\0';
    close(fds[0]);
    int status = 0;
    waitpid(pid, &status, 0);
    if (WIFEXITED(status) && WEXITSTATUS(status) == 77) {
        printf("     note: read-only checks not run: the unprivileged user cannot "
               "reach %s\n", path);
        return;
    }
    CHECK_MSG(WIFEXITED(status) && WEXITSTATUS(status) == 0, "read-only child: %s", msg);
    /* Nothing was written: still one result. */
    CHECK_EQ(th_sql_int(path, "SELECT count(*) FROM result"), 1);
}

TEST(db_injection_stored_verbatim)
{
    char path[4300];
    db *d = tdb_fresh(path, sizeof path);
    CHECK(d);
    const char *kernel = "k'); DROP TABLE device;--";
    const char *config = "TILE=1'); DELETE FROM result; --\"; SELECT '";
    db_result r;
    tdb_result(&r, "GPU-A", kernel, "h'--", tdb_problem(1, 10, 0, 0), config, DB_OK, 1.0, 1);
    snprintf(r.error, sizeof r.error, "%s", "'; DROP TABLE binary; --");
    CHECK_OK(db_store_result(d, &r));
    tdb_result(&r, "GPU-A", "sum", "h", tdb_problem(1, 10, 0, 0), "B=1", DB_OK, 1.0, 1);
    CHECK_OK(db_store_result(d, &r));
    tpl_problem p = tdb_problem(1, 10, 0, 0);
    db_result best;
    CHECK_OK(db_best(d, "GPU-A", kernel, "h'--", &p, 0, &best));
    CHECK_STR(best.kernel, kernel);
    CHECK_STR(best.config, config);
    CHECK_STR(best.source_hash, "h'--");
    CHECK_STR(best.error, "'; DROP TABLE binary; --");
    CHECK_EQ(db_has_result(d, "GPU-A' OR '1'='1", kernel, "h'--", &p, config), 0);
    db_close(d);
    CHECK_EQ(th_sql_int(path, "SELECT count(*) FROM result"), 2);
    CHECK_EQ(th_sql_int(path, "SELECT count(*) FROM device"), 1);
    CHECK_EQ(th_sql_int(path, "SELECT count(*) FROM sqlite_master WHERE name = 'binary'"), 1);
}

/* Holds a write lock on the file for ~300 ms from another connection; released is the moment it lets go. */
typedef struct tdb_locker {
    const char *path;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    int locked;
    int rc;
    struct timespec released;
} tdb_locker;

static void *tdb_lock_thread(void *arg)
{
    tdb_locker *l = arg;
    sqlite3 *h = NULL;
    l->rc = sqlite3_open(l->path, &h);
    if (l->rc == SQLITE_OK)
        l->rc = sqlite3_exec(h, "BEGIN IMMEDIATE; UPDATE meta SET value = value "
                                "WHERE key = 'created';", NULL, NULL, NULL);
    pthread_mutex_lock(&l->mu);
    l->locked = 1;
    pthread_cond_signal(&l->cv);
    pthread_mutex_unlock(&l->mu);
    struct timespec ts = { 0, 300 * 1000 * 1000 };
    nanosleep(&ts, NULL);
    clock_gettime(CLOCK_MONOTONIC, &l->released);     /* before COMMIT: no writer can finish earlier */
    if (l->rc == SQLITE_OK)
        l->rc = sqlite3_exec(h, "COMMIT", NULL, NULL, NULL);
    sqlite3_close(h);
    return NULL;
}

TEST(db_concurrent_writers_wait)
{
    char path[4300];
    db *d = tdb_fresh(path, sizeof path);
    CHECK(d);
    tdb_locker l = { .path = path, .mu = PTHREAD_MUTEX_INITIALIZER,
                     .cv = PTHREAD_COND_INITIALIZER };
    pthread_t t;
    CHECK_EQ(pthread_create(&t, NULL, tdb_lock_thread, &l), 0);
    pthread_mutex_lock(&l.mu);
    while (!l.locked)
        pthread_cond_wait(&l.cv, &l.mu);
    pthread_mutex_unlock(&l.mu);
    struct timespec t1;
    db_result r;
    tdb_result(&r, "GPU-A", "sum", "h", tdb_problem(1, 10, 0, 0), "B=1", DB_OK, 1.0, 1);
    at_status s = db_store_result(d, &r);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    pthread_join(t, NULL);
    /* The store ends after the lock's release, however late this thread ran: it waited.  (A fixed minimum wait
     * failed when a loaded machine delayed this thread after the lock was taken.) */
    double after_release = (double)(t1.tv_sec - l.released.tv_sec) * 1e3
                           + (double)(t1.tv_nsec - l.released.tv_nsec) / 1e6;
    CHECK_EQ(l.rc, SQLITE_OK);
    CHECK_MSG(s == AT_OK, "store while locked: %s (%s)", at_status_string(s), db_errmsg(d));
    CHECK_MSG(after_release >= 0, "store finished %.1f ms before the lock was let go", -after_release);
    db_close(d);

    /* Two processes storing 100 results each into the same file. */
    pid_t pids[2];
    for (int w = 0; w < 2; w++) {
        pids[w] = fork();
        CHECK(pids[w] >= 0);
        if (pids[w] == 0) {
            db *c = NULL;
            char err[512];
            if (db_open(&c, path, 0, err, sizeof err) != AT_OK)
                _exit(2);
            for (int i = 0; i < 100; i++) {
                db_result x;
                char cfg[64];
                snprintf(cfg, sizeof cfg, "W=%d,I=%d", w, i);
                tdb_result(&x, "GPU-A", "dot", "h", tdb_problem(1, 1000 + i % 3, 0, 0), cfg,
                           DB_OK, 1.0 + i, 1);
                if (db_store_result(c, &x) != AT_OK)
                    _exit(3);
            }
            db_close(c);
            _exit(0);
        }
    }
    for (int w = 0; w < 2; w++) {
        int status = 0;
        waitpid(pids[w], &status, 0);
        CHECK_MSG(WIFEXITED(status) && WEXITSTATUS(status) == 0, "writer %d exit %d", w,
                  WIFEXITED(status) ? WEXITSTATUS(status) : -1);
    }
    CHECK_EQ(th_sql_int(path, "SELECT count(*) FROM result r JOIN kernel k "
                              "ON k.id = r.kernel_id WHERE k.name = 'dot'"), 200);
    CHECK_EQ(th_sql_int(path, "SELECT count(*) FROM problem WHERE kernel = 'dot'"), 3);
}
