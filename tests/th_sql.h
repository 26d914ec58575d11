/* th_sql.h: test support for reading and writing a database file with raw
 * SQL, outside db/: the tests' independent view of what db/ wrote. */
#ifndef TH_SQL_H
#define TH_SQL_H

/* The first column of the first row of sql on the file at path (opened
 * read-only), or -999 if the file or the query fails or has no row. */
long long th_sql_int(const char *path, const char *sql);
/* Runs sql (one or more statements) on the file at path; SQLite's status. */
int th_sql_exec(const char *path, const char *sql);

#endif
