/* th_travel.c: fixtures of the tests of results that travel (test_travel.c, test_merge.c):
 * devices, problems, databases, files, configurations and result rows, rows compared. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include "db.h"
#include "harness.h"
#include "th_travel.h"
#include "tpl.h"

void trv_device(at_device_info *i, const char *uuid, const char *name, int major,
                       int minor)
{
    memset(i, 0, sizeof *i);
    snprintf(i->name, sizeof i->name, "%s", name);
    snprintf(i->uuid, sizeof i->uuid, "%s", uuid);
    i->cc_major = major;
    i->cc_minor = minor;
    tpl_arch_name(major, minor, i->arch, sizeof i->arch);
    i->sm_count = 132;
    i->memory_bytes = 150ll << 30;
    i->l2_bytes = 50 << 20;
    i->smem_per_block_optin = 227 << 10;
    i->smem_per_sm = 228 << 10;
    i->regs_per_block = 65536;
    i->regs_per_sm = 65536;
    i->max_threads_per_block = 1024;
    i->max_threads_per_sm = 2048;
    i->clock_khz = 1980000;
    i->driver_version = 13000;
}

tpl_problem trv_problem(long long n)
{
    tpl_problem p;
    memset(&p, 0, sizeof p);
    p.n_dims = 1;
    p.dims[0] = n;
    return p;
}

db *trv_open(const char *name, int mode, char *path, size_t len)
{
    char err[512];
    db *d = NULL;
    snprintf(path, len, "%s/%s", th_tmpdir(), name);
    if (db_open(&d, path, mode, err, sizeof err) != AT_OK) {
        th_fail(__FILE__, __LINE__, "db_open %s: %s", path, err);
        return NULL;
    }
    return d;
}

/* malloc'd bytes of a file, NULL if unreadable. */
char *trv_slurp(const char *path, size_t *size)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *buf = malloc((size_t)n + 1);
    if (buf && fread(buf, 1, (size_t)n, f) != (size_t)n) {
        free(buf);
        buf = NULL;
    }
    fclose(f);
    if (buf)
        buf[n] = '\0';
    *size = (size_t)n;
    return buf;
}

int trv_write(const char *path, const char *text, size_t len)
{
    FILE *f = fopen(path, "wb");
    if (!f)
        return 0;
    int ok = fwrite(text, 1, len, f) == len;
    return fclose(f) == 0 && ok;
}

int trv_exists(const char *path)
{
    struct stat sb;
    return stat(path, &sb) == 0;
}

/* The k-th valid configuration of fam on dev, as text and values. */
void trv_config(const tpl_family *fam, const at_device_info *dev, long long k,
                       int *cfg, char *text)
{
    long long *valid = NULL;
    long long n = tpl_valid_configs(fam, dev, &valid);
    tpl_config_from_index(fam, valid[k % n], cfg);
    tpl_config_format(fam, cfg, text, TPL_CONFIG_LEN);
    free(valid);
}

void trv_result(db_result *r, const char *uuid, const tpl_family *fam, tpl_problem p,
                       const char *config, const char *status, double t)
{
    memset(r, 0, sizeof *r);
    snprintf(r->device_uuid, sizeof r->device_uuid, "%s", uuid);
    snprintf(r->kernel, sizeof r->kernel, "%s", fam->name);
    snprintf(r->source_hash, sizeof r->source_hash, "%s", tpl_source_hash(fam));
    r->problem = p;
    snprintf(r->config, sizeof r->config, "%s", config);
    snprintf(r->status, sizeof r->status, "%s", status);
    r->time_ms = t;
    r->time_min_ms = t * 0.99;
    r->time_max_ms = t * 1.01;
    r->runs = 9;
    r->gbs = t > 0 ? 4.0 / t : 0;
    r->rel_error = strcmp(status, DB_OK) == 0 ? 1.5e-7 : -1;
    r->compile_ms = 12.5;
    r->deterministic = 1;
    if (strcmp(status, DB_OK) != 0)
        snprintf(r->error, sizeof r->error, "failed: \"quoted\"\ttab\nline, unicode \xc3\xa9");
}

/* 1 if the rows of a and b are the same results, field by field. */
int trv_same_rows(const db_result *a, int na, const db_result *b, int nb, char *why,
                         size_t len)
{
    if (na != nb) {
        snprintf(why, len, "%d rows against %d", na, nb);
        return 0;
    }
    for (int i = 0; i < na; i++) {
        const db_result *x = &a[i], *y = NULL;
        for (int k = 0; k < nb && !y; k++)
            if (strcmp(b[k].device_uuid, x->device_uuid) == 0 &&
                strcmp(b[k].kernel, x->kernel) == 0 && strcmp(b[k].config, x->config) == 0 &&
                tpl_problem_equal(&b[k].problem, &x->problem))
                y = &b[k];
        if (!y || strcmp(x->source_hash, y->source_hash) || strcmp(x->status, y->status) ||
            x->time_ms != y->time_ms || x->time_min_ms != y->time_min_ms ||
            x->time_max_ms != y->time_max_ms || x->runs != y->runs || x->gflops != y->gflops ||
            x->gbs != y->gbs || x->rel_error != y->rel_error || x->compile_ms != y->compile_ms ||
            strcmp(x->error, y->error) || strcmp(x->created, y->created) ||
            x->deterministic != y->deterministic) {
            snprintf(why, len, "row %.100s %.100s differs or is missing", x->kernel, x->config);
            return 0;
        }
    }
    return 1;
}
