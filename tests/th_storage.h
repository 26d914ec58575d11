/* th_storage.h: helpers of the storage and gc tests (tests/th_storage.c). */
#ifndef TH_STORAGE_H
#define TH_STORAGE_H

#include <stddef.h>

/* The ways a folder is made unwritable for a check. */
typedef enum st_way {
    ST_AS_USER,                      /* not root: the file modes apply */
    ST_AS_NOBODY,                    /* root drops to uid 65534 */
    ST_RO_MOUNT,                     /* root: folder bind-mounted read-only */
    ST_FSIZE,                        /* a file size limit: no file may grow */
    ST_TMPFS,                        /* root: a small tmpfs on the folder */
} st_way;

/* A line per way, for the tests' messages. */
extern const char *const st_way_text[];

/* A check run where the database cannot be written. */
typedef void (*st_check_fn)(const char *path, void *arg, char *why, size_t len);

/* FNV-1a of a file's bytes; 0 if it is missing or empty (a reader may
 * create an empty -wal beside a database). */
unsigned long long st_file_hash(const char *path);

/* Lets uid 65534 reach path: adds o+x to its folders up to the test root. */
void st_open_path_for_others(const char *path);

/* In a child: makes dir unwritable (or small: bytes) the way asked; 0, or
 * 77 where this machine cannot (the caller reports the way as not run). */
int st_enter_way(st_way way, const char *dir, long long bytes);

/* Runs check(path) in a child that cannot write path's folder (way);
 * returns 0 if it passed, 77 if the way is not available here, else 1
 * with the failure in why. */
int st_run_in_way(st_way way, const char *path, st_check_fn check, void *arg,
                         char *why, size_t len);

/* The ways this machine offers: as root, dropping privileges and a
 * read-only mount; otherwise the modes themselves. */
int st_ways(st_way *ways);

/* Runs cmd with /bin/sh in a child entered into way (dir, bytes as
 * st_enter_way); output (stdout and stderr) into out. The shell's exit
 * status, 77 if the way is not available here, -1 if it could not run. */
int st_shell(st_way way, const char *dir, long long bytes, const char *cmd,
                    char *out, size_t len);

/* Appends one line per result and cubin row of the database at path, read
 * with SQLite itself (not db/), to out ("\n"-framed, so "\nLINE\n" finds a
 * row); *intact = 1 if PRAGMA integrity_check says ok. 0 if unreadable. */
int st_dump(const char *path, char *out, size_t len, int *intact);

long long st_size(const char *path);

#endif
