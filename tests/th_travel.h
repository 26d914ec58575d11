/* th_travel.h: fixtures of the tests of results that travel (tests/th_travel.c). */
#ifndef TH_TRAVEL_H
#define TH_TRAVEL_H

#include <stddef.h>
#include "db.h"
#include "tpl.h"

/* An H200-like device of this uuid, name and compute capability. */
void trv_device(at_device_info *i, const char *uuid, const char *name, int major, int minor);
/* A one-size problem {n}. */
tpl_problem trv_problem(long long n);
/* Opens th_tmpdir()/name in db_open's mode (path filled); NULL after failing the test. */
db *trv_open(const char *name, int mode, char *path, size_t len);
/* malloc'd bytes of a file (NUL-terminated), NULL if unreadable. */
char *trv_slurp(const char *path, size_t *size);
/* Writes len bytes of text to path; 1 on success. */
int trv_write(const char *path, const char *text, size_t len);
/* 1 if path exists. */
int trv_exists(const char *path);
/* The k-th valid configuration of fam on dev, as text and values. */
void trv_config(const tpl_family *fam, const at_device_info *dev, long long k, int *cfg,
                char *text);
/* A result row of fam at p with this configuration, status and time. */
void trv_result(db_result *r, const char *uuid, const tpl_family *fam, tpl_problem p,
                const char *config, const char *status, double t);
/* 1 if the rows of a and b are the same results, field by field; else 0 with why. */
int trv_same_rows(const db_result *a, int na, const db_result *b, int nb, char *why,
                  size_t len);

#endif
