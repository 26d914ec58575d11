/* th_fakegpu.h: tests of the runtime's host path on the CPU, through the fake driver
 * (tests/fakecuda/fakecuda.c, build/libfakecuda.so): a test re-runs itself in a child
 * run_tests under AUTOTUNE_CUDA_LIB, and the child reads the fake's counters. */
#ifndef TH_FAKEGPU_H
#define TH_FAKEGPU_H

#include "autotune.h"
#include "cudrv.h"
#include "tpl.h"

/* 1 in the child (the fake driver loaded); 0 in the parent, where it has run `name` in a
 * child under the fake driver and checked that it passed (a failure is the parent's). */
int th_fake_child(const char *name);
/* The fake driver's counter of a driver entry point (fakecuda_count), -1 if unknown. */
long long th_fake_count(const char *name);
void th_fake_reset(void);
/* The module (1, 2, ... in load order) of the last launch. */
int th_fake_last_module(void);
/* The stream of the last launch. */
CUstream th_fake_last_stream(void);
/* The time an event pair around a launch of module `module` reads. */
void th_fake_set_module_ms(int module, float ms);
/* The first event pair around a launch of module `module` reads ms, once. */
void th_fake_set_module_first_ms(int module, float ms);
/* Device memory the fake driver's live allocations hold (bytes). */
size_t th_fake_live_bytes(void);
/* From now on the fake driver's allocations past `bytes` live fail as out of memory (0: none). */
void th_fake_set_memory_limit(size_t bytes);
/* Makes h's context current on this thread (as a CUDA runtime program has it). */
void th_fake_make_current(at_handle *h);
/* Stores a stand-in cubin in h's database for every configuration a GEMM call of the
 * canonical problem p may load: each candidate family's lookup choice and, unless
 * no_trials, every trial candidate; so no call compiles with NVRTC. AT_OK or the failure. */
at_status th_fake_prestore(at_handle *h, const tpl_problem *p, int no_trials);

#endif
