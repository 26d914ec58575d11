/* sessions.c: tuning sessions: when a run started and ended, on which
 * device, with which facts and outcome. */
#include <string.h>
#include "db_internal.h"

at_status db_begin_session(db *d, const char *device_uuid, const char *command,
                           const char *start_facts, long long *session_id)
{
    if (!d || !session_id)
        return d ? db_fail(d, AT_ERR_INVALID_ARG, "db_begin_session: NULL argument")
                 : AT_ERR_INVALID_ARG;
    *session_id = 0;
    at_status s = db_check_writable(d, "starting a session");
    if (s != AT_OK)
        return s;
    long long dev = 0;
    if (device_uuid && (s = db_device_id(d, device_uuid, &dev)) != AT_OK)
        return s;
    char now[32];
    db_now(now, sizeof now);
    sqlite3_stmt *st;
    s = db_prepare(d, &st, "INSERT INTO session (device_id, command, start_facts, started) "
                           "VALUES (?1, ?2, ?3, ?4)");
    if (s != AT_OK)
        return s;
    if (dev)
        sqlite3_bind_int64(st, 1, dev);
    else
        sqlite3_bind_null(st, 1);
    db_bind_text(st, 2, command ? command : "");
    db_bind_text(st, 3, start_facts ? start_facts : "");
    db_bind_text(st, 4, now);
    int rc = sqlite3_step(st);
    sqlite3_finalize(st);
    if (rc != SQLITE_DONE)
        return db_sqlfail(d, rc, "starting a session");
    *session_id = sqlite3_last_insert_rowid(d->h);
    return AT_OK;
}

at_status db_end_session(db *d, long long session_id, const char *end_facts,
                         const char *outcome)
{
    if (!d)
        return AT_ERR_INVALID_ARG;
    at_status s = db_check_writable(d, "ending a session");
    if (s != AT_OK)
        return s;
    char now[32];
    db_now(now, sizeof now);
    sqlite3_stmt *st;
    s = db_prepare(d, &st, "UPDATE session SET end_facts = ?1, outcome = ?2, ended = ?3 "
                           "WHERE id = ?4");
    if (s != AT_OK)
        return s;
    db_bind_text(st, 1, end_facts ? end_facts : "");
    db_bind_text(st, 2, outcome ? outcome : "");
    db_bind_text(st, 3, now);
    sqlite3_bind_int64(st, 4, session_id);
    int rc = sqlite3_step(st);
    sqlite3_finalize(st);
    if (rc != SQLITE_DONE)
        return db_sqlfail(d, rc, "ending a session");
    if (sqlite3_changes(d->h) == 0)
        return db_fail(d, AT_ERR_NOT_FOUND, "no session %lld", session_id);
    return AT_OK;
}

at_status db_open_sessions(db *d, long long *count)
{
    if (!d || !count)
        return d ? db_fail(d, AT_ERR_INVALID_ARG, "db_open_sessions: NULL argument")
                 : AT_ERR_INVALID_ARG;
    return db_query_int(d, "SELECT count(*) FROM session WHERE ended IS NULL AND "
                           "started >= strftime('%Y-%m-%dT%H:%M:%fZ', 'now', '-1 day')",
                        NULL, count, "counting the open tuning sessions");
}
