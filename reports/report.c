/* report.c: writes the tuning database (and any bench_calls tables of random calls) as one
 * self-contained HTML file: reads the tables (calls.c), collects the figures (figures.c),
 * renders them (html.c), saves the file. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "figures.h"
#include "html.h"
#include "report.h"

/* Writes the buffer to path through a temporary file and a rename;
 * AT_ERR_IO with the reason in err if any step fails. */
static at_status rp_save(const rp_buf *b, const char *path, char *err, size_t errlen)
{
    char tmp[4200];
    snprintf(tmp, sizeof tmp, "%s.tmp%ld", path, (long)getpid());
    FILE *f = fopen(tmp, "wb");
    if (!f) {
        snprintf(err, errlen, "cannot write %s: %s", path, strerror(errno));
        return AT_ERR_IO;
    }
    size_t wrote = fwrite(b->p, 1, b->len, f);
    int bad = wrote != b->len || ferror(f);
    if (fclose(f) != 0)
        bad = 1;
    if (bad) {
        snprintf(err, errlen, "cannot write %s: %s", path, strerror(errno));
        unlink(tmp);
        return AT_ERR_IO;
    }
    if (rename(tmp, path) != 0) {
        snprintf(err, errlen, "cannot write %s: %s", path, strerror(errno));
        unlink(tmp);
        return AT_ERR_IO;
    }
    return AT_OK;
}

at_status rp_write(db *d, const char *path, const char *device_uuid,
                   char *err, size_t errlen)
{
    return rp_write_calls(d, path, device_uuid, NULL, 0, err, errlen);
}

at_status rp_write_calls(db *d, const char *path, const char *device_uuid,
                         const char *const *calls, int n_calls, char *err, size_t errlen)
{
    char dummy[8];
    if (!err || errlen == 0) {
        err = dummy;
        errlen = sizeof dummy;
    }
    err[0] = '\0';
    if (!d || !path || !*path) {
        snprintf(err, errlen, "rp_write: no database or no output path");
        return AT_ERR_INVALID_ARG;
    }
    if (n_calls < 0 || n_calls > RP_CALLS_MAX_FILES || (n_calls > 0 && !calls)) {
        snprintf(err, errlen, "rp_write: %d random-calls files (at most %d)", n_calls,
                 RP_CALLS_MAX_FILES);
        return AT_ERR_INVALID_ARG;
    }
    rp_calls files[RP_CALLS_MAX_FILES];
    memset(files, 0, sizeof files);
    at_status s = AT_OK;
    for (int i = 0; i < n_calls && s == AT_OK; i++)
        s = rp_calls_read(calls[i], &files[i], err, errlen);
    rp_report rep;
    if (s == AT_OK)
        s = rp_collect(d, device_uuid, &rep, err, errlen);
    if (s != AT_OK) {
        for (int i = 0; i < n_calls; i++)
            rp_calls_free(&files[i]);
        return s;
    }
    if (rep.total == 0 && (n_calls == 0 || (device_uuid && rep.n_devs == 0))) {
        if (device_uuid && rep.n_devs == 0)
            snprintf(err, errlen, "device %s is not in the database", device_uuid);
        else
            snprintf(err, errlen, "the database holds no tuning results%s%s",
                     device_uuid ? " for device " : "", device_uuid ? device_uuid : "");
        rp_report_free(&rep);
        for (int i = 0; i < n_calls; i++)
            rp_calls_free(&files[i]);
        return AT_ERR_NOT_FOUND;
    }
    char now[64];
    time_t t = time(NULL);
    struct tm tm;
    gmtime_r(&t, &tm);
    strftime(now, sizeof now, "%Y-%m-%d %H:%M UTC", &tm);
    rp_buf b = { 0 };
    rp_render_html(&b, &rep, now, files, n_calls);
    rp_report_free(&rep);
    for (int i = 0; i < n_calls; i++)
        rp_calls_free(&files[i]);
    if (b.oom) {
        free(b.p);
        snprintf(err, errlen, "out of memory building the report");
        return AT_ERR_NO_MEMORY;
    }
    s = rp_save(&b, path, err, errlen);
    free(b.p);
    return s;
}
