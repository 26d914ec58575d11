/* report.h: writes the self-contained HTML performance report (inline SVG,
 * no network) from the tuning database. */
#ifndef REPORT_H
#define REPORT_H

#include <stddef.h>
#include "autotune.h"
#include "calls.h"
#include "db.h"

/* Writes the report for one device (device_uuid) or every device (NULL) to
 * path. AT_ERR_IO if the file cannot be written, AT_ERR_NOT_FOUND if the
 * database holds no results; reason in err. */
at_status rp_write(db *d, const char *path, const char *device_uuid,
                   char *err, size_t errlen);
/* The same with the random calls of bench_calls --tsv files (at most RP_CALLS_MAX_FILES)
 * in a section after the first screen's table; with calls, a database with no results gives
 * a report of the calls alone. A file that is not such a table fails the report
 * (AT_ERR_INVALID_ARG or AT_ERR_IO, the file and line in err) and writes nothing. */
at_status rp_write_calls(db *d, const char *path, const char *device_uuid,
                         const char *const *calls, int n_calls, char *err, size_t errlen);

/* Appends s to out with &, <, >, ", ' escaped (exposed for tests). */
void rp_escape_html(const char *s, char *out, size_t len);

#endif
