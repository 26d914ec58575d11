/* th_sql.c: raw SQL on a database file for the tests (th_sql.h). */
#include <stddef.h>
#include <sqlite3.h>
#include "th_sql.h"

long long th_sql_int(const char *path, const char *sql)
{
    sqlite3 *h = NULL;
    long long v = -999;
    if (sqlite3_open_v2(path, &h, SQLITE_OPEN_READONLY, NULL) == SQLITE_OK) {
        sqlite3_stmt *st;
        if (sqlite3_prepare_v2(h, sql, -1, &st, NULL) == SQLITE_OK) {
            if (sqlite3_step(st) == SQLITE_ROW)
                v = sqlite3_column_int64(st, 0);
            sqlite3_finalize(st);
        }
    }
    sqlite3_close(h);
    return v;
}

int th_sql_exec(const char *path, const char *sql)
{
    sqlite3 *h = NULL;
    int rc = sqlite3_open(path, &h);
    if (rc == SQLITE_OK)
        rc = sqlite3_exec(h, sql, NULL, NULL, NULL);
    sqlite3_close(h);
    return rc;
}
