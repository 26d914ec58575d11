/* model.h: the selection model of the lookup chain: predicts a stored GEMM
 * winner's time at a shape it was not measured at, from its time at its own
 * shape and its launch geometry (tiles, waves, split-K, K depth, bytes). */
#ifndef MODEL_H
#define MODEL_H

#include "cudrv.h"
#include "tpl.h"

/* Fixed costs of the model, in milliseconds and K units (runtime/model.c
 * says where each comes from). */
#define MD_LAUNCH_MS 0.004      /* one kernel launch and its tail */
#define MD_K_FIXED 64           /* prologue and epilogue of a tile, as K steps */
#define MD_MEM_EFFICIENCY 0.8   /* share of the peak DRAM bandwidth a GEMM reaches */

/* The model's cost of configuration tile t for problem p (canonical
 * row-major {m, n, k} and batch) on dev (NULL: an H200-like device of 132
 * SMs), split into the part that scales with the configuration's speed
 * (*compute: waves x tile area x K depth, in arbitrary units) and the parts
 * that do not (*memory_ms: the bytes every product must move at
 * MD_MEM_EFFICIENCY of the peak bandwidth, split-K partials included;
 * *fixed_ms: launches). Returns 0 for a problem of fewer than 3 sizes or a
 * tile without sizes, else 1. */
int md_cost(const tpl_tile *t, const at_device_info *dev, const tpl_problem *p,
            double *compute, double *memory_ms, double *fixed_ms);

/* The predicted milliseconds of fam's configuration cfg at problem p, from
 * its measured time measured_ms at problem `tuned` (same kind): the
 * configuration's speed per compute unit is taken from the measurement
 * (what the memory and launch parts leave of it), then
 * fixed + max(speed x compute(p), memory(p)). NAN where the family has no
 * tile_of hook, the hook cannot describe cfg, or a problem is not a GEMM
 * (callers then rank by shape distance). */
double md_predict_ms(const tpl_family *fam, const int *cfg, const at_device_info *dev,
                     const tpl_problem *tuned, double measured_ms, const tpl_problem *p);

#endif
