/* th_stress.c: helpers of the concurrency stress tests (test_stress.c, test_stress_gpu.c):
 * per-thread random streams, clocks, child processes, and the whole database checked after a run. */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <sqlite3.h>
#include "autotune.h"
#include "cudrv.h"
#include "db.h"
#include "harness.h"
#include "lookup.h"
#include "tpl.h"
#include "th_stress.h"

/* splitmix64: every thread draws from its own stream. */
unsigned long long st_next(unsigned long long *s)
{
    unsigned long long z = (*s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

double st_unit(unsigned long long *s)
{
    return (double)(st_next(s) >> 11) / 9007199254740992.0;
}

/* Uniform integer in [lo, hi]. */
long long st_range(unsigned long long *s, long long lo, long long hi)
{
    return lo + (long long)(st_next(s) % (unsigned long long)(hi - lo + 1));
}

/* $AUTOTUNE_STRESS_SEED repeats a run; otherwise from the clock (printed). */
unsigned long long st_seed(void)
{
    const char *env = getenv("AUTOTUNE_STRESS_SEED");
    if (env && *env)
        return strtoull(env, NULL, 10);
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (unsigned long long)ts.tv_sec * 1000003ull + (unsigned long long)ts.tv_nsec;
}

double st_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

void st_sleep_ms(double ms)
{
    struct timespec ts = {(time_t)(ms / 1000), (long)(fmod(ms, 1000.0) * 1e6)};
    nanosleep(&ts, NULL);
}

/* Starts `command` under /bin/sh in its own process group, stdout and
 * stderr into `log`; returns its pid, -1 if fork failed. */
pid_t st_spawn(const char *command, const char *log)
{
    pid_t pid = fork();
    if (pid != 0)
        return pid;
    setpgid(0, 0);
    int fd = open(log, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd >= 0) {
        dup2(fd, 1);
        dup2(fd, 2);
        close(fd);
    }
    execl("/bin/sh", "sh", "-c", command, (char *)NULL);
    _exit(127);
}

/* Waits up to `seconds` for pid: its exit status (128 + signal when
 * killed), or -1 after killing its process group at the deadline. */
int st_wait(pid_t pid, double seconds)
{
    double end = st_now() + seconds;
    for (;;) {
        int status = 0;
        pid_t r = waitpid(pid, &status, WNOHANG);
        if (r == pid)
            return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
        if (r < 0 && errno != EINTR)
            return -1;
        if (st_now() > end) {
            kill(-pid, SIGKILL);
            waitpid(pid, &status, 0);
            return -1;
        }
        st_sleep_ms(20);
    }
}

/* malloc'd text of a file ("" if unreadable; NULL only without memory). */
char *st_slurp(const char *path)
{
    FILE *f = fopen(path, "rb");
    size_t cap = 4096, n = 0;
    char *buf = malloc(cap);
    while (f && buf) {
        if (n + 1 >= cap) {
            char *bigger = realloc(buf, cap *= 2);
            if (!bigger) {
                free(buf);
                buf = NULL;
                break;
            }
            buf = bigger;
        }
        size_t got = fread(buf + n, 1, cap - n - 1, f);
        if (got == 0)
            break;
        n += got;
    }
    if (f)
        fclose(f);
    if (buf)
        buf[n] = '\0';
    return buf;
}

/* Sum of N over the tuner's "done: N results stored" lines (*runs: how
 * many such lines). */
long long st_done_total(const char *log, int *runs)
{
    long long total = 0;
    *runs = 0;
    for (const char *p = log; p && (p = strstr(p, "done: ")) != NULL; p += 6) {
        total += strtoll(p + 6, NULL, 10);
        (*runs)++;
    }
    return total;
}

/* N of the tuner's "FAMILY SIZE: N evaluated" line; -1 if absent. */
long long st_evaluated(const char *log, const char *family, const char *size)
{
    char key[128];
    snprintf(key, sizeof key, "%s %s: ", family, size);
    for (const char *p = log; p && (p = strstr(p, key)) != NULL; p++) {
        char *end;
        long long n = strtoll(p + strlen(key), &end, 10);
        if (strncmp(end, " evaluated", 10) == 0)
            return n;
    }
    return -1;
}

/* Rows of a raw SQL query outside db/ (first column's text of the first
 * row into first); -1 if the query cannot run. */
long long st_sql_rows(const char *path, const char *sql, char *first, size_t len)
{
    sqlite3 *h = NULL;
    long long rows = -1;
    if (first && len)
        first[0] = '\0';
    if (sqlite3_open_v2(path, &h, SQLITE_OPEN_READONLY, NULL) == SQLITE_OK) {
        sqlite3_busy_timeout(h, 10000);
        sqlite3_stmt *st;
        if (sqlite3_prepare_v2(h, sql, -1, &st, NULL) == SQLITE_OK) {
            int rc;
            rows = 0;
            while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
                if (rows++ == 0 && first && len)
                    snprintf(first, len, "%s", (const char *)sqlite3_column_text(st, 0)
                                                   ? (const char *)sqlite3_column_text(st, 0)
                                                   : "(null)");
            }
            if (rc != SQLITE_DONE)
                rows = -1;
            sqlite3_finalize(st);
        }
    }
    sqlite3_close(h);
    return rows;
}

/* Checks every tuning session except `skip`: outcome "complete" and as many
 * result rows carrying its id as its end facts say it stored. Returns the
 * sessions' total, or -1 with the reason in why. */
long long st_sessions_stored(const char *path, long long skip, char *why, size_t len)
{
    sqlite3 *h = NULL;
    long long total = -1;
    snprintf(why, len, "cannot read the sessions of %s", path);
    if (sqlite3_open_v2(path, &h, SQLITE_OPEN_READONLY, NULL) != SQLITE_OK) {
        sqlite3_close(h);
        return -1;
    }
    sqlite3_busy_timeout(h, 10000);
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(h, "SELECT s.id, s.outcome, s.end_facts, (SELECT count(*) FROM "
                              "result r WHERE r.session_id = s.id) FROM session s "
                              "WHERE s.id != ?1 ORDER BY s.id", -1, &st, NULL) == SQLITE_OK) {
        sqlite3_bind_int64(st, 1, skip);
        int rc;
        total = 0;
        while (total >= 0 && (rc = sqlite3_step(st)) == SQLITE_ROW) {
            long long id = sqlite3_column_int64(st, 0), rows = sqlite3_column_int64(st, 3);
            const char *outcome = (const char *)sqlite3_column_text(st, 1);
            const char *facts = (const char *)sqlite3_column_text(st, 2);
            const char *n = facts ? strstr(facts, "\"results_stored\": ") : NULL;
            long long stored = n ? strtoll(n + 18, NULL, 10) : -1;
            if (!outcome || strcmp(outcome, "complete") != 0 || stored != rows) {
                snprintf(why, len, "session %lld: outcome '%s', end facts say %lld stored, "
                         "%lld rows carry its id (%.300s)", id, outcome ? outcome : "(null)",
                         stored, rows, facts ? facts : "(no end facts)");
                total = -1;
            } else {
                total += stored;
            }
        }
        if (total >= 0 && rc != SQLITE_DONE) {
            snprintf(why, len, "reading sessions: %s", sqlite3_errmsg(h));
            total = -1;
        }
        sqlite3_finalize(st);
    }
    sqlite3_close(h);
    return total;
}

/* Every result row (malloc'd into *rows); -1 with the reason in why. */
int st_all_results(const char *path, db_result **rows, char *why, size_t len)
{
    db *d = NULL;
    int n = -1;
    *rows = NULL;
    if (db_open(&d, path, 0, why, len) != AT_OK)
        return -1;
    if (db_results(d, NULL, NULL, rows, &n) != AT_OK) {
        snprintf(why, len, "%s", db_errmsg(d));
        n = -1;
    }
    db_close(d);
    return n;
}

/* Rows of `kernel` at exactly problem p. */
int st_rows_at(const db_result *r, int n, const char *kernel, const tpl_problem *p)
{
    int count = 0;
    for (int i = 0; i < n; i++)
        count += strcmp(r[i].kernel, kernel) == 0 && tpl_problem_equal(&r[i].problem, p);
    return count;
}

/* The whole database after a run: integrity and foreign keys, no damaged
 * cubin, the rows seeded before unchanged, every tuning session's rows
 * present, and nothing else: seeded + tuner_stored rows in all, and the
 * runtime's trial results (a handle that timed nearby winners for a shape
 * stores the fastest: ok, no session, rel_error -1, its cubin's key). */
void st_verify_db(const char *path, const db_result *seeded, int n_seeded,
                         long long seed_session, long long tuner_stored)
{
    char text[1024];
    long long rows = st_sql_rows(path, "PRAGMA integrity_check", text, sizeof text);
    CHECK_MSG(rows == 1 && strcmp(text, "ok") == 0, "integrity_check: %lld rows, %s", rows, text);
    rows = st_sql_rows(path, "PRAGMA foreign_key_check", text, sizeof text);
    CHECK_MSG(rows == 0, "foreign_key_check: %lld rows (%s)", rows, text);
    rows = st_sql_rows(path, "SELECT key FROM binary WHERE length(cubin) != size OR size <= 0",
                       text, sizeof text);
    CHECK_MSG(rows == 0, "%lld damaged cubins (%s)", rows, text);
    long long sessions = st_sessions_stored(path, seed_session, text, sizeof text);
    CHECK_MSG(sessions == tuner_stored, "tuner reported %lld stored; sessions: %lld (%s)",
              tuner_stored, sessions, text);
    db_result *all = NULL;
    int n = st_all_results(path, &all, text, sizeof text);
    CHECK_MSG(n >= 0, "reading results: %s", text);
    int trials = 0;
    for (int i = 0; i < n; i++)
        trials += all[i].session_id <= 0 && all[i].rel_error == -1 &&
                  strcmp(all[i].status, DB_OK) == 0 && all[i].binary_key[0];
    printf("    %d trial results stored by the runtime\n", trials);
    if (n != n_seeded + tuner_stored + trials)
        free(all);
    CHECK_MSG(n == n_seeded + tuner_stored + trials, "%d result rows, want %d seeded + %lld "
              "stored + %d trials", n, n_seeded, tuner_stored, trials);
    int lost = 0;
    for (int i = 0; i < n_seeded; i++) {
        int same = 0;
        for (int j = 0; j < n && !same; j++)
            same = all[j].id == seeded[i].id && all[j].session_id == seeded[i].session_id &&
                   strcmp(all[j].kernel, seeded[i].kernel) == 0 &&
                   strcmp(all[j].config, seeded[i].config) == 0 &&
                   strcmp(all[j].status, seeded[i].status) == 0 &&
                   strcmp(all[j].created, seeded[i].created) == 0 &&
                   all[j].time_ms == seeded[i].time_ms &&
                   tpl_problem_equal(&all[j].problem, &seeded[i].problem);
        if (!same && lost++ < 3)
            th_fail(__FILE__, __LINE__, "seeded row %lld (%s %s) lost or changed",
                    seeded[i].id, seeded[i].kernel, seeded[i].config);
    }
    free(all);
    CHECK_EQ(lost, 0);
}
