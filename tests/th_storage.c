/* th_storage.c: helpers of the storage and gc tests (test_storage.c, test_gc.c): checks run
 * where a database cannot be written (file modes, another uid, a read-only mount, a size limit,
 * a small tmpfs), shell commands run that way, a database dumped and hashed with SQLite itself. */
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
#include "th_storage.h"

/* FNV-1a of a file's bytes; 0 if it is missing or empty (a reader may
 * create an empty -wal beside a database). */
unsigned long long st_file_hash(const char *path)
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

const char *const st_way_text[] = {
    "file and folder modes (the tests run unprivileged)",
    "file and folder modes, checked as uid 65534 (root writes through modes)",
    "a read-only bind mount in a private mount namespace",
    "a file size limit (RLIMIT_FSIZE, SIGXFSZ ignored)",
    "a real tmpfs barely larger than the database, in a private mount namespace",
};

/* Lets uid 65534 reach path: adds o+x to its folders up to the test root. */
void st_open_path_for_others(const char *path)
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
int st_enter_way(st_way way, const char *dir, long long bytes)
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

/* Runs check(path) in a child that cannot write path's folder (way);
 * returns 0 if it passed, 77 if the way is not available here, else 1
 * with the failure in why. */
int st_run_in_way(st_way way, const char *path, st_check_fn check, void *arg,
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
int st_ways(st_way *ways)
{
    if (geteuid() != 0) {
        ways[0] = ST_AS_USER;
        return 1;
    }
    ways[0] = ST_AS_NOBODY;
    ways[1] = ST_RO_MOUNT;
    return 2;
}

/* Runs cmd with /bin/sh in a child entered into way (dir, bytes as
 * st_enter_way); output (stdout and stderr) into out. The shell's exit
 * status, 77 if the way is not available here, -1 if it could not run. */
int st_shell(st_way way, const char *dir, long long bytes, const char *cmd,
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
int st_dump(const char *path, char *out, size_t len, int *intact)
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

long long st_size(const char *path)
{
    struct stat sb;
    return stat(path, &sb) == 0 ? (long long)sb.st_size : -1;
}
