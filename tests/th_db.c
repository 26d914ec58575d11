/* th_db.c: fixtures of the database tests (test_db.c, test_db_files.c): a device, problems,
 * results, a fresh database, reading a file back. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include "db.h"
#include "harness.h"
#include "th_db.h"

void tdb_path(char *out, size_t len, const char *name)
{
    snprintf(out, len, "%s/%s", th_tmpdir(), name);
}

void tdb_device(at_device_info *i, const char *uuid, const char *name,
                       int major, int minor)
{
    memset(i, 0, sizeof *i);
    i->ordinal = 1;
    snprintf(i->name, sizeof i->name, "%s", name);
    snprintf(i->uuid, sizeof i->uuid, "%s", uuid);
    i->cc_major = major;
    i->cc_minor = minor;
    i->sm_count = 132;
    i->memory_bytes = 85520809984LL;
    i->l2_bytes = 52428800;
    i->smem_per_block_optin = 232448;
    i->smem_per_sm = 233472;
    i->regs_per_block = 65536;
    i->regs_per_sm = 65537;
    i->max_threads_per_block = 1024;
    i->max_threads_per_sm = 2048;
    i->clock_khz = 1980000;
    i->mem_clock_khz = 2619000;
    i->mem_bus_bits = 5120;
    i->driver_version = 13000;
}

tpl_problem tdb_problem(int n, long long a, long long b, long long c)
{
    tpl_problem p;
    memset(&p, 0, sizeof p);
    p.n_dims = n;
    p.dims[0] = a;
    if (n > 1)
        p.dims[1] = b;
    if (n > 2)
        p.dims[2] = c;
    return p;
}

void tdb_result(db_result *r, const char *uuid, const char *kernel,
                       const char *hash, tpl_problem p, const char *config,
                       const char *status, double time_ms, int deterministic)
{
    memset(r, 0, sizeof *r);
    snprintf(r->device_uuid, sizeof r->device_uuid, "%s", uuid);
    snprintf(r->kernel, sizeof r->kernel, "%s", kernel);
    snprintf(r->source_hash, sizeof r->source_hash, "%s", hash);
    r->problem = p;
    snprintf(r->config, sizeof r->config, "%s", config);
    snprintf(r->status, sizeof r->status, "%s", status);
    r->time_ms = time_ms;
    r->time_min_ms = time_ms * 0.9;
    r->time_max_ms = time_ms * 1.1;
    r->runs = 7;
    r->gflops = time_ms > 0 ? 1.0 / time_ms : 0;
    r->rel_error = 1e-7;
    r->deterministic = deterministic;
}

at_status tdb_store_measured(db *d, const char *uuid, const tpl_family *fam, const tpl_problem *p,
                             const char *config, double time_ms)
{
    db_result r;
    tdb_result(&r, uuid, fam->name, tpl_source_hash(fam), *p, config, DB_OK, time_ms, 1);
    return db_store_result(d, &r);
}

/* Opens a fresh database with one sm_90 device "GPU-A". */
db *tdb_fresh(char *path, size_t len)
{
    char err[512];
    db *d = NULL;
    tdb_path(path, len, "tuning.db");
    if (db_open(&d, path, 1, err, sizeof err) != AT_OK) {
        th_fail(__FILE__, __LINE__, "db_open: %s", err);
        return NULL;
    }
    at_device_info info;
    tdb_device(&info, "GPU-A", "NVIDIA H100 80GB HBM3", 9, 0);
    if (db_put_device(d, &info, "13.0") != AT_OK) {
        th_fail(__FILE__, __LINE__, "db_put_device: %s", db_errmsg(d));
        db_close(d);
        return NULL;
    }
    return d;
}

/* malloc'd contents of a file (NULL if unreadable). */
unsigned char *tdb_slurp(const char *path, size_t *size)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    size_t cap = 1 << 16, n = 0;
    unsigned char *buf = malloc(cap);
    size_t got;
    while (buf && (got = fread(buf + n, 1, cap - n, f)) > 0) {
        n += got;
        if (n == cap) {
            unsigned char *bigger = realloc(buf, cap *= 2);
            if (!bigger) {
                free(buf);
                buf = NULL;
            }
            buf = bigger;
        }
    }
    fclose(f);
    *size = n;
    return buf;
}

int tdb_exists(const char *path)
{
    struct stat sb;
    return stat(path, &sb) == 0;
}
