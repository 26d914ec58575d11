/* util.c: small helpers of the tuner: a seeded random generator, a
 * monotonic clock, parsing of --size (tpl.h's text form) and --budget. */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "db.h"
#include "tn.h"

void tn_rng_seed(tn_rng *r, unsigned long long seed)
{
    r->s = seed * 0x9E3779B97F4A7C15ull + 0x632BE59BD9B4E019ull;
}

unsigned long long tn_rng_next(tn_rng *r)
{
    /* splitmix64 */
    unsigned long long z = (r->s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

unsigned long long tn_rng_below(tn_rng *r, unsigned long long n)
{
    if (n <= 1)
        return 0;
    unsigned long long limit = ~0ull - (~0ull % n);
    unsigned long long x;
    do {
        x = tn_rng_next(r);
    } while (x >= limit);
    return x % n;
}

double tn_rng_unit(tn_rng *r)
{
    return (double)(tn_rng_next(r) >> 11) * (1.0 / 9007199254740992.0);
}

double tn_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

void tn_cond_init_monotonic(pthread_cond_t *cv)
{
    pthread_condattr_t attr;
    pthread_condattr_init(&attr);
    pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
    pthread_cond_init(cv, &attr);
    pthread_condattr_destroy(&attr);
}

struct timespec tn_abstime(double t)
{
    struct timespec at;
    at.tv_sec = (time_t)t;
    at.tv_nsec = (long)((t - (double)at.tv_sec) * 1e9);
    if (at.tv_nsec >= 1000000000L)
        at.tv_nsec = 999999999L;
    return at;
}

int tn_parse_size(const char *text, tpl_problem *p)
{
    char err[256];
    return tpl_problem_parse(text, p, err, sizeof err) == AT_OK ? 0 : -1;
}

void tn_format_size(const tpl_problem *p, char *out, size_t len)
{
    tpl_problem_format(p, out, len);
}

int tn_parse_budget(const char *text, double *seconds, long long *evals)
{
    *seconds = 0;
    *evals = 0;
    if (!text || !isdigit((unsigned char)text[0]))
        return -1;
    errno = 0;
    char *end;
    double v = strtod(text, &end);
    if (errno || v <= 0)
        return -1;
    if (*end == '\0' || strcmp(end, "s") == 0 || strcmp(end, "sec") == 0) {
        *seconds = v;
        return 0;
    }
    if (strcmp(end, "e") == 0 || strcmp(end, "evals") == 0 ||
        strcmp(end, "eval") == 0) {
        if (v != (double)(long long)v || v < 1)
            return -1;
        *evals = (long long)v;
        return 0;
    }
    if (strcmp(end, "m") == 0 || strcmp(end, "min") == 0) {
        *seconds = v * 60;
        return 0;
    }
    return -1;
}

void tn_db_path(const char *given, char *out, size_t len)
{
    if (given)
        snprintf(out, len, "%s", given);
    else
        db_default_path(out, len);
}
