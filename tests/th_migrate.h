/* th_migrate.h: fixtures of the schema and kind tests (tests/th_migrate.c). */
#ifndef TH_MIGRATE_H
#define TH_MIGRATE_H

#include "db.h"
#include "tpl.h"

/* The rows of a query as one malloc'd text ('|' between columns, '\n' after rows); NULL on
 * failure. */
char *tm_text(const char *path, const char *sql);
/* The fake worker's device under uuid. */
at_device_info tm_device(const char *uuid);
/* A family that takes every kind (no applicable()): only the database and the lookup keep
 * kinds apart. Parameter A 1..9 names the row that won. */
extern const tpl_family tm_any_kind;
/* The problem of a text form (the test fails on a bad one). */
tpl_problem tm_problem(const char *text);
/* Stores an ok result of tm_any_kind at the problem `size` (text form) on device uuid. */
at_status tm_store(db *d, const char *uuid, const char *size, const char *config, double ms);

#endif
