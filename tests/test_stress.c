/* test_stress.c: concurrency stress (issue 13): several connections and
 * handles of one process on the database another process writes. */
#include <fcntl.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include <sqlite3.h>
#include "db.h"
#include "harness.h"

/* ---------------- CPU tier: one process, many connections ---------------- */

/* 1 if another process sees a read lock on path's SQLite shared-lock bytes
 * (what this process's open read transaction must hold). */
static int st_read_locked(const char *path)
{
    pid_t pid = fork();
    if (pid == 0) {
        int fd = open(path, O_RDWR);
        struct flock fl;
        memset(&fl, 0, sizeof fl);
        fl.l_type = F_WRLCK;
        fl.l_whence = SEEK_SET;
        fl.l_start = 0x40000002;         /* SQLite's SHARED_FIRST */
        fl.l_len = 510;                  /* SHARED_SIZE */
        if (fd < 0 || fcntl(fd, F_GETLK, &fl) != 0)
            _exit(2);
        _exit(fl.l_type == F_UNLCK ? 0 : 1);
    }
    int status = 0;
    if (pid < 0 || waitpid(pid, &status, 0) != pid || !WIFEXITED(status))
        return -1;
    return WEXITSTATUS(status) == 2 ? -1 : WEXITSTATUS(status);
}

/* Opening and closing a second handle on the same file (every at_create
 * does) must leave the locks of this process's other connections in place:
 * with them gone, another process's last close checkpoints and resets the
 * WAL under a reader ("database disk image is malformed"). */
TEST(stress_second_open_keeps_other_connections_locks)
{
    char path[4300], err[512];
    snprintf(path, sizeof path, "%s/locks.db", th_tmpdir());
    db *d = NULL;
    CHECK_MSG(db_open(&d, path, 1, err, sizeof err) == AT_OK, "%s", err);
    db_close(d);
    sqlite3 *h = NULL;
    sqlite3_stmt *st = NULL;
    CHECK(sqlite3_open_v2(path, &h, SQLITE_OPEN_READONLY, NULL) == SQLITE_OK);
    int rc = sqlite3_prepare_v2(h, "SELECT key FROM meta", -1, &st, NULL);
    if (rc == SQLITE_OK)
        rc = sqlite3_step(st);                     /* a read transaction stays open */
    int before = st_read_locked(path);
    at_status s = db_open(&d, path, 1, err, sizeof err);
    db_close(d);
    int after = st_read_locked(path);
    sqlite3_finalize(st);
    sqlite3_close(h);
    CHECK_EQ(rc, SQLITE_ROW);
    CHECK_MSG(s == AT_OK, "%s", err);
    CHECK_EQ(before, 1);
    CHECK_MSG(after == 1, "a second db_open/db_close dropped this process's read lock (%d)", after);
}
