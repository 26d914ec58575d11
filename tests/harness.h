/* harness.h: the tiny test framework: TEST/GPU_TEST register functions at
 * load time, CHECK macros record failures, harness.c runs and counts. */
#ifndef HARNESS_H
#define HARNESS_H

#include <stdio.h>
#include <string.h>
#include "autotune.h"

typedef void (*th_fn)(void);
void th_register(const char *name, th_fn fn, int needs_gpu, const char *file);
void th_fail(const char *file, int line, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* 1 if the current test already failed (lets helpers bail out). */
int th_failed(void);
/* Marks the current test skipped with the reason (printed; counted among
 * the skipped unless it also failed): for a CPU test whose tool is absent. */
void th_skip(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* CUDA device ordinal the GPU tier uses ($AUTOTUNE_TEST_DEVICE, default 0). */
int th_device(void);
/* Build directory holding the autotune binary ($AUTOTUNE_BUILD, "build"). */
const char *th_build_dir(void);
/* A fresh empty directory under $TMPDIR for this test (never NULL). */
const char *th_tmpdir(void);
/* Runs a shell command, captures stdout+stderr (malloc'd, caller frees)
 * into *output; returns the exit status (-1 if it could not run). */
int th_run(const char *command, char **output);

/* Calls fn(ctx, i) once for every i in [0, n), on up to max_threads threads taking the next
 * i as they finish one (on this thread where none starts); returns when every call has
 * returned, with the number of threads used. fn runs concurrently with itself: it records
 * its result for the caller to check afterwards (no CHECK macros in it). */
int th_parallel(int n, int max_threads, void (*fn)(void *ctx, int i), void *ctx);

#define TH_REGISTER(name, gpu) \
    static void name(void); \
    __attribute__((constructor)) static void th_reg_##name(void) \
    { th_register(#name, name, gpu, __FILE__); } \
    static void name(void)
#define TEST(name) TH_REGISTER(name, 0)
#define GPU_TEST(name) TH_REGISTER(name, 1)

#define CHECK(cond) do { if (!(cond)) { \
    th_fail(__FILE__, __LINE__, "CHECK(%s)", #cond); return; } } while (0)
#define CHECK_MSG(cond, ...) do { if (!(cond)) { \
    th_fail(__FILE__, __LINE__, __VA_ARGS__); return; } } while (0)
#define CHECK_EQ(a, b) do { long long th_a = (long long)(a), th_b = (long long)(b); \
    if (th_a != th_b) { th_fail(__FILE__, __LINE__, "%s == %s: %lld != %lld", \
    #a, #b, th_a, th_b); return; } } while (0)
#define CHECK_STR(a, b) do { const char *th_a = (a), *th_b = (b); \
    if (!th_a || !th_b || strcmp(th_a, th_b) != 0) { th_fail(__FILE__, __LINE__, \
    "%s == %s: \"%s\" != \"%s\"", #a, #b, th_a ? th_a : "(null)", \
    th_b ? th_b : "(null)"); return; } } while (0)
#define CHECK_OK(expr) do { at_status th_s = (expr); if (th_s != AT_OK) { \
    th_fail(__FILE__, __LINE__, "%s -> %s", #expr, at_status_string(th_s)); \
    return; } } while (0)

#endif
