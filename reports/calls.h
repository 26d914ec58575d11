/* calls.h: the random-calls benchmark in the report: bench_calls' TSV files (ours against
 * cuBLAS on shapes drawn at random) read as data and shown as a table per element type and a
 * scatter of every call's ratio. */
#ifndef RP_CALLS_H
#define RP_CALLS_H

#include <stddef.h>
#include "autotune.h"
#include "text.h"

#define RP_CALLS_MAX_FILES 8
#define RP_CALLS_MAX_ROWS 100000

/* One timed call of a file. */
typedef struct rp_call {
    char type[8];                    /* bf16, fp16, tf32, fp32, fp64 */
    char shape[96];                  /* bench_calls' call text, e.g. 1004x3911x25:f16:b30 */
    double cublas_us, ratio;         /* cuBLAS's time; its time over ours */
    int vendor;                      /* 1: the library served the call with cuBLAS */
} rp_call;

/* One file: its label (the file's name) and its calls. */
typedef struct rp_calls {
    char label[256];
    rp_call *call;
    int n;
} rp_calls;

/* Reads a bench_calls --tsv file into c: the header must name the columns type, cublas_us,
 * ratio, vendor and call; every row's numbers must be finite and positive (vendor 0 or 1).
 * AT_ERR_INVALID_ARG with the file and line in err for anything else, AT_ERR_IO if it
 * cannot be read; c is left empty then. */
at_status rp_calls_read(const char *path, rp_calls *c, char *err, size_t errlen);
void rp_calls_free(rp_calls *c);

/* The section of the report: per file a table by type (calls, geomean, lowest, below 0.5x /
 * 0.8x / 0.95x, served by cuBLAS) and a scatter of ratio against cuBLAS's time. */
void rp_calls_section(rp_buf *b, const rp_calls *files, int n_files);

#endif
