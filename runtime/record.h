/* record.h: the runtime's record of the problems its calls were served
 * below the exact level (counted per plan in memory, written at at_destroy). */
#ifndef RECORD_H
#define RECORD_H

#include <time.h>
#include "autotune.h"
#include "cudrv.h"
#include "db.h"
#include "tpl.h"

/* The rows one handle writes, gathered from its plans. */
typedef struct rec_batch {
    db_recorded *rows;
    int n, cap;
    int dropped;                /* rows lost to an allocation failure */
} rec_batch;

/* The estimated time of one call of fam on p on dev, in ms: the family's
 * work (tpl_family.work: flops and bytes) against the device's peak rates
 * (rec_peaks), the slower of the two, plus REC_LAUNCH_MS for the launch.
 * A roofline bound, not a measurement: it ranks the recorded problems
 * (which is heaviest) without any synchronization on the call path. */
#define REC_LAUNCH_MS 0.005
double rec_estimate_ms(const tpl_family *fam, const tpl_problem *p, const at_device_info *dev);
/* The peak rates rec_estimate_ms uses for p's kind on dev: FLOP/s (the
 * SM count x clock x flops per SM per clock of the kind's unit: FP64,
 * FP32 FMA, TF32/FP16/BF16 tensor cores, doubled from compute capability
 * 9) and bytes/s (the memory clock x bus width x 2). */
void rec_peaks(const tpl_problem *p, const at_device_info *dev, double *flops_s,
               double *bytes_s);

/* Adds one plan's count to b when it was served below the exact level
 * (level > AT_LOOKUP_EXACT) and called at least once; its time is calls x
 * rec_estimate_ms, its first sighting first_seen. Never fails: a row that
 * cannot be kept (out of memory) is counted in b->dropped. */
void rec_add(rec_batch *b, const tpl_family *fam, const tpl_problem *p, at_lookup_level level,
             long long calls, time_t first_seen, const at_device_info *dev);
/* Writes b's rows into d in one transaction (db_record_served, at most
 * DB_RECORDED_MAX rows kept) and frees them. A NULL or read-only d records
 * nothing; a failed write is dropped (recording is a side matter: the
 * caller's work never fails for it). AT_OK, or the write's status. */
at_status rec_write(rec_batch *b, db *d, const at_device_info *dev);

#endif
