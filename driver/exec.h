/* exec.h: what a kernel family's host code may do on the GPU: find a kernel
 * in its compiled module, launch it, get scratch memory, move small data.
 * Used by the runtime library and by the tuner's worker alike. */
#ifndef EXEC_H
#define EXEC_H

#include <stddef.h>
#include "autotune.h"
#include "cudrv.h"

#define EX_MAX_FUNCS 16
#define EX_MAX_SCRATCH 4
#define EX_MAX_MEMO 4
#define EX_MEMO_KEY 10
#define EX_MEMO_VALUE 128           /* a CUtensorMap */

typedef struct at_exec {
    const cudrv *cu;
    const at_device_info *dev;
    CUmodule module;             /* the configuration's module */
    CUstream stream;             /* caller's stream (0 = legacy default) */
    struct {
        char name[64];
        CUfunction fn;
        int smem_limit_set;      /* dynamic smem limit raised to this value */
        int static_smem;         /* its static shared memory (bytes), -1 not asked yet */
        int occ_threads, occ_smem, occ_blocks;  /* last ex_occupancy answer */
    } funcs[EX_MAX_FUNCS];
    int n_funcs;
    CUdeviceptr scratch[EX_MAX_SCRATCH];    /* owned; grown on demand */
    size_t scratch_bytes[EX_MAX_SCRATCH];
    unsigned epoch;              /* call number a family may tag scratch
                                    with: 0 after ex_init, the family
                                    advances it (reduce's gather finish) */
    char *errmsg;                /* where failures are described */
    size_t errlen;
    struct {                     /* host-side values a family derives from a call's
                                    arguments, kept while the arguments repeat (ex_memo) */
        int n_key;
        unsigned long long key[EX_MEMO_KEY];
        unsigned char value[EX_MEMO_VALUE];
    } memo[EX_MAX_MEMO];
} at_exec;

/* Sets up an exec over an already loaded module; no allocation. */
void ex_init(at_exec *ex, const cudrv *cu, const at_device_info *dev,
             CUmodule module, CUstream stream, char *errmsg, size_t errlen);
/* Frees scratch memory (the module is the caller's). */
void ex_release(at_exec *ex);

/* Finds extern "C" kernel `name` in the module (cached). AT_ERR_NOT_FOUND
 * with a message if the module has no such kernel. */
at_status ex_function(at_exec *ex, const char *name, CUfunction *fn);
/* Launches kernel `name` on the exec's stream; raises the function's
 * dynamic shared memory limit first when smem > 48 KiB. Checks the launch
 * status (not completion). */
at_status ex_launch(at_exec *ex, const char *name,
                    unsigned gx, unsigned gy, unsigned gz,
                    unsigned bx, unsigned by, unsigned bz,
                    unsigned smem, void **args);
/* ex_launch with a thread-block cluster shape (cuLaunchKernelEx); the grid
 * must be a multiple of the cluster in every dimension. AT_ERR_UNSUPPORTED
 * where the driver has no cuLaunchKernelEx. */
at_status ex_launch_cluster(at_exec *ex, const char *name, const unsigned grid[3],
                            const unsigned block[3], const unsigned cluster[3],
                            unsigned smem, void **args);
/* Blocks of kernel `name` that fit on one SM at once with this block size and
 * dynamic shared memory (cuOccupancyMaxActiveBlocksPerMultiprocessor, after
 * raising the function's shared memory limit as ex_launch would); cached.
 * AT_ERR_UNSUPPORTED if not even one fits. */
at_status ex_occupancy(at_exec *ex, const char *name, unsigned threads, unsigned smem,
                       int *blocks);
/* A small memo for values a family computes on the host from a call's arguments (tcgemm's
 * tensor maps, its cluster occupancy), so that a call repeating the arguments of the previous
 * call in the same slot (0..EX_MAX_MEMO-1) skips the work. ex_memo_get copies the value of
 * slot into value (size bytes, at most EX_MEMO_VALUE) and returns 1 when the slot holds
 * exactly this key (n_key <= EX_MEMO_KEY words), else 0; ex_memo_put stores it. */
int ex_memo_get(const at_exec *ex, int slot, const unsigned long long *key, int n_key,
                void *value, size_t size);
void ex_memo_put(at_exec *ex, int slot, const unsigned long long *key, int n_key,
                 const void *value, size_t size);
/* Scratch buffer `slot` (0..EX_MAX_SCRATCH-1) of at least `bytes`, kept
 * across calls; contents undefined. */
at_status ex_scratch(at_exec *ex, int slot, size_t bytes, CUdeviceptr *ptr);
/* ex_scratch, and when the buffer is (re)allocated, zero-filled in stream
 * order; a buffer kept from an earlier call keeps its contents. For counters
 * and flags that the kernels themselves leave at zero after each call. */
at_status ex_scratch_zeroed(at_exec *ex, int slot, size_t bytes, CUdeviceptr *ptr);
/* Asynchronous fill of n 32-bit words on the exec's stream. */
at_status ex_memset32(at_exec *ex, CUdeviceptr ptr, unsigned value, size_t n);
/* Copies device -> host after all work queued on the stream (blocks). */
at_status ex_download(at_exec *ex, void *dst, CUdeviceptr src, size_t bytes);
/* Copies host -> device in stream order (blocks until done). */
at_status ex_upload(at_exec *ex, CUdeviceptr dst, const void *src, size_t bytes);
/* Waits for the stream. */
at_status ex_sync(at_exec *ex);
/* Records a printf-style message into ex->errmsg and returns status. */
at_status ex_fail(at_exec *ex, at_status status, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

#endif
