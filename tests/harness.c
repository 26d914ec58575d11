/* harness.c: runs every registered test (CPU tier always, GPU tier when a
 * CUDA device answers), prints one line per failure and the closing
 * "N passed, N failed, N skipped" line; exit status 1 on any failure. */
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "cudrv.h"
#include "harness.h"

#define TH_MAX_TESTS 1024

static struct { const char *name; th_fn fn; int gpu; const char *file; } tests[TH_MAX_TESTS];
static int n_tests;
static int current_failed, current_skipped;
static char tmp_root[4096];
static int tmp_counter;

void th_register(const char *name, th_fn fn, int needs_gpu, const char *file)
{
    if (n_tests < TH_MAX_TESTS) {
        tests[n_tests].name = name;
        tests[n_tests].fn = fn;
        tests[n_tests].gpu = needs_gpu;
        tests[n_tests].file = file;
        n_tests++;
    }
}

void th_fail(const char *file, int line, const char *fmt, ...)
{
    va_list ap;
    current_failed = 1;
    fprintf(stderr, "    %s:%d: ", file, line);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
}

int th_failed(void) { return current_failed; }

void th_skip(const char *fmt, ...)
{
    va_list ap;
    current_skipped = 1;
    printf("    skipped: ");
    va_start(ap, fmt);
    vprintf(fmt, ap);
    va_end(ap);
    putchar('\n');
}

int th_device(void)
{
    const char *env = getenv("AUTOTUNE_TEST_DEVICE");
    return env && *env ? atoi(env) : 0;
}

const char *th_build_dir(void)
{
    const char *env = getenv("AUTOTUNE_BUILD");
    return env && *env ? env : "build";
}

const char *th_tmpdir(void)
{
    static char path[4200];
    snprintf(path, sizeof path, "%s/t%d", tmp_root, ++tmp_counter);
    mkdir(path, 0700);
    return path;
}

int th_run(const char *command, char **output)
{
    char full[8192];
    snprintf(full, sizeof full, "(%s) 2>&1", command);
    FILE *pipe = popen(full, "r");
    if (output)
        *output = NULL;
    if (!pipe)
        return -1;
    size_t cap = 4096, len = 0;
    char *buf = malloc(cap);
    int c;
    while (buf && (c = fgetc(pipe)) != EOF) {
        if (len + 1 >= cap) {
            char *bigger = realloc(buf, cap *= 2);
            if (!bigger) {
                free(buf);
                buf = NULL;
                break;
            }
            buf = bigger;
        }
        buf[len++] = (char)c;
    }
    if (buf)
        buf[len] = '\0';
    int status = pclose(pipe);
    if (output)
        *output = buf;
    else
        free(buf);
    if (status == -1)
        return -1;
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

#define TH_MAX_THREADS 64

typedef struct th_queue {
    void (*fn)(void *ctx, int i);
    void *ctx;
    int n, next;
    pthread_mutex_t lock;
} th_queue;

static void *th_worker(void *arg)
{
    th_queue *q = arg;
    for (;;) {
        pthread_mutex_lock(&q->lock);
        int i = q->next < q->n ? q->next++ : -1;
        pthread_mutex_unlock(&q->lock);
        if (i < 0)
            return NULL;
        q->fn(q->ctx, i);
    }
}

int th_parallel(int n, int max_threads, void (*fn)(void *ctx, int i), void *ctx)
{
    th_queue q = {fn, ctx, n, 0, PTHREAD_MUTEX_INITIALIZER};
    pthread_t threads[TH_MAX_THREADS];
    int want = max_threads < n ? max_threads : n, started = 0;
    want = want > TH_MAX_THREADS ? TH_MAX_THREADS : want;
    for (int t = 0; t < want; t++)
        started += pthread_create(&threads[started], NULL, th_worker, &q) == 0;
    if (started == 0)
        th_worker(&q);
    for (int t = 0; t < started; t++)
        pthread_join(threads[t], NULL);
    return started ? started : 1;
}

/* 1 if a CUDA device can be used, else 0 with the reason. */
static int gpu_present(char *why, size_t len)
{
    at_status s;
    const cudrv *cu = cudrv_get(&s, why, len);
    if (!cu)
        return 0;
    at_device_info info;
    return cudrv_device_info(cu, th_device(), &info, why, len) == AT_OK;
}

/* The calling thread's current CUDA context (NULL if none or no driver). */
static CUcontext current_context(const cudrv *cu)
{
    CUcontext ctx = NULL;
    if (!cu || cu->CtxGetCurrent(&ctx) != CUDA_SUCCESS)
        return NULL;
    return ctx;
}

/* After a failed GPU test: pops the contexts it left current (a CHECK that fails
 * returns before the test's cleanup), so that the next tests start as this one
 * did instead of failing in its wake. */
static void restore_context(const cudrv *cu, CUcontext before, const char *name)
{
    int popped = 0;
    while (popped < 16 && current_context(cu) != before) {
        CUcontext ctx;
        if (cu->CtxPopCurrent(&ctx) != CUDA_SUCCESS)
            break;
        popped++;
    }
    if (popped)
        printf("    harness: popped %d CUDA context%s that %s left current\n", popped,
               popped == 1 ? "" : "s", name);
}

int main(int argc, char **argv)
{
    const char *filter = argc > 1 ? argv[1] : getenv("AUTOTUNE_TEST_FILTER");
    const char *tmp = getenv("TMPDIR");
    snprintf(tmp_root, sizeof tmp_root, "%s/autotune-tests-XXXXXX", tmp && *tmp ? tmp : "/tmp");
    if (!mkdtemp(tmp_root)) {
        perror("mkdtemp");
        return 1;
    }
    /* the tests measure our kernels: the vendor candidate (at_set_vendor) is off unless a
     * test turns it on for its handle */
    setenv("AUTOTUNE_VENDOR", "off", 1);
    char why[512] = "";
    int gpu = gpu_present(why, sizeof why);
    if (gpu)
        printf("GPU tier: enabled (device %d)\n", th_device());
    else
        printf("GPU tier: skipped, no usable GPU: %s\n", why);
    /* AUTOTUNE_TEST_TIER=gpu (or cpu) runs one tier only, e.g. on a GPU
     * machine whose CPU tier already passed in CI */
    const char *tier = getenv("AUTOTUNE_TEST_TIER");
    int only = tier && strcmp(tier, "gpu") == 0 ? 1 : tier && strcmp(tier, "cpu") == 0 ? 0 : -1;
    /* AUTOTUNE_TEST_SHARD=i/n runs the i-th of n interleaved parts of the selected tests
     * (every n-th, from the i-th): a tier longer than one machine call runs in n calls */
    const char *shard_text = getenv("AUTOTUNE_TEST_SHARD");
    int shard = 0, shards = 1, selected = 0;
    if (shard_text && *shard_text) {
        char tail = 0;
        if (sscanf(shard_text, "%d/%d%c", &shard, &shards, &tail) != 2 || shards < 1 ||
            shard < 1 || shard > shards) {
            fprintf(stderr, "AUTOTUNE_TEST_SHARD=%s: want i/n with 1 <= i <= n\n", shard_text);
            return 2;
        }
        shard--;
        printf("shard %d of %d\n", shard + 1, shards);
    }
    int passed = 0, failed = 0, skipped = 0, gpu_skipped = 0;
    for (int i = 0; i < n_tests; i++) {
        if (filter && *filter && !strstr(tests[i].name, filter))
            continue;
        if (only >= 0 && tests[i].gpu != only)
            continue;
        if (selected++ % shards != shard)
            continue;
        if (tests[i].gpu && !gpu) {
            skipped++;
            gpu_skipped++;
            continue;
        }
        current_failed = current_skipped = 0;
        struct timespec t0, t1;
        clock_gettime(CLOCK_MONOTONIC, &t0);
        printf("%-4s %s ...\n", tests[i].gpu ? "gpu" : "cpu", tests[i].name);
        fflush(stdout);
        at_status ds;
        const cudrv *cu = tests[i].gpu ? cudrv_get(&ds, NULL, 0) : NULL;
        CUcontext before = current_context(cu);
        tests[i].fn();
        if (cu && current_failed)
            restore_context(cu, before, tests[i].name);
        clock_gettime(CLOCK_MONOTONIC, &t1);
        double secs = (double)(t1.tv_sec - t0.tv_sec) + 1e-9 * (double)(t1.tv_nsec - t0.tv_nsec);
        printf("     %s %s (%.2f s)\n", current_failed ? "FAIL" : current_skipped ? "skip" : "ok",
               tests[i].name, secs);
        fflush(stdout);
        if (current_failed)
            failed++;
        else if (current_skipped)
            skipped++;
        else
            passed++;
    }
    if (!getenv("AUTOTUNE_KEEP_TMP")) {
        char cmd[4200];
        snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmp_root);
        if (system(cmd) != 0)
            fprintf(stderr, "could not remove %s\n", tmp_root);
    }
    if (gpu_skipped)
        printf("%d GPU tests skipped: %s\n", gpu_skipped, why);
    printf("%d passed, %d failed, %d skipped\n", passed, failed, skipped);
    return failed ? 1 : 0;
}
