/* exec.c: launches a configuration's kernels on a stream for the runtime and
 * the tuner's worker; caches functions, owns scratch memory. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include "exec.h"

void ex_init(at_exec *ex, const cudrv *cu, const at_device_info *dev,
             CUmodule module, CUstream stream, char *errmsg, size_t errlen)
{
    memset(ex, 0, sizeof *ex);
    ex->cu = cu;
    ex->dev = dev;
    ex->module = module;
    ex->stream = stream;
    ex->errmsg = errmsg;
    ex->errlen = errlen;
}

int ex_memo_get(const at_exec *ex, int slot, const unsigned long long *key, int n_key,
                void *value, size_t size)
{
    if (slot < 0 || slot >= EX_MAX_MEMO || n_key < 1 || n_key > EX_MEMO_KEY ||
        size > EX_MEMO_VALUE || ex->memo[slot].n_key != n_key ||
        memcmp(ex->memo[slot].key, key, (size_t)n_key * sizeof *key) != 0)
        return 0;
    memcpy(value, ex->memo[slot].value, size);
    return 1;
}

void ex_memo_put(at_exec *ex, int slot, const unsigned long long *key, int n_key,
                 const void *value, size_t size)
{
    if (slot < 0 || slot >= EX_MAX_MEMO || n_key < 1 || n_key > EX_MEMO_KEY ||
        size > EX_MEMO_VALUE)
        return;
    ex->memo[slot].n_key = n_key;
    memcpy(ex->memo[slot].key, key, (size_t)n_key * sizeof *key);
    memcpy(ex->memo[slot].value, value, size);
}

void ex_release(at_exec *ex)
{
    if (!ex || !ex->cu)
        return;
    for (int i = 0; i < EX_MAX_SCRATCH; i++) {
        if (ex->scratch[i])
            ex->cu->MemFree(ex->scratch[i]);
        ex->scratch[i] = 0;
        ex->scratch_bytes[i] = 0;
    }
    ex->n_funcs = 0;
}

at_status ex_fail(at_exec *ex, at_status status, const char *fmt, ...)
{
    if (ex->errmsg && ex->errlen) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(ex->errmsg, ex->errlen, fmt, ap);
        va_end(ap);
    }
    return status;
}

static at_status ex_cuda_fail(at_exec *ex, CUresult rc, const char *call)
{
    if (ex->errmsg && ex->errlen)
        cudrv_describe(ex->cu, rc, call, ex->errmsg, ex->errlen);
    if (rc == CUDA_ERROR_OUT_OF_MEMORY)
        return AT_ERR_NO_MEMORY;
    return AT_ERR_CUDA;
}

/* The slot of kernel name in ex's module, looked up once; -1 if the module
 * has none (or the table is full), with the driver's answer in *rc. */
static int ex_find(at_exec *ex, const char *name, CUresult *rc)
{
    *rc = CUDA_SUCCESS;
    for (int i = 0; i < ex->n_funcs; i++)
        if (strcmp(ex->funcs[i].name, name) == 0)
            return i;
    if (ex->n_funcs >= EX_MAX_FUNCS || strlen(name) >= sizeof ex->funcs[0].name)
        return -1;
    CUfunction fn;
    if ((*rc = ex->cu->ModuleGetFunction(&fn, ex->module, name)) != CUDA_SUCCESS)
        return -1;
    int slot = ex->n_funcs++;
    snprintf(ex->funcs[slot].name, sizeof ex->funcs[slot].name, "%s", name);
    ex->funcs[slot].fn = fn;
    ex->funcs[slot].smem_limit_set = 0;
    ex->funcs[slot].static_smem = -1;
    ex->funcs[slot].occ_blocks = 0;
    return slot;
}

/* The failure of ex_find: which kernel, and the driver's error where it gave one (a module
 * that has the kernel can still fail here: an unloaded module, a lost context). */
static at_status ex_not_found(at_exec *ex, const char *name, CUresult rc)
{
    const char *text = NULL;
    if (rc != CUDA_SUCCESS && ex->cu->GetErrorName)
        ex->cu->GetErrorName(rc, &text);
    if (rc == CUDA_SUCCESS)
        return ex_fail(ex, AT_ERR_NOT_FOUND, "kernel %s not found in the module (%d kernels "
                       "looked up already)", name, ex->n_funcs);
    return ex_fail(ex, rc == CUDA_ERROR_NOT_FOUND       ? AT_ERR_NOT_FOUND
                       : rc == CUDA_ERROR_OUT_OF_MEMORY ? AT_ERR_NO_MEMORY
                                                        : AT_ERR_CUDA,
                   "kernel %s not found in the module (cuModuleGetFunction: %s, %d)", name,
                   text ? text : "unknown error", (int)rc);
}

at_status ex_function(at_exec *ex, const char *name, CUfunction *fn)
{
    CUresult rc;
    int slot = ex_find(ex, name, &rc);
    if (slot < 0)
        return ex_not_found(ex, name, rc);
    *fn = ex->funcs[slot].fn;
    return AT_OK;
}

/* Raises the dynamic shared memory limit of function `slot` to smem where smem and the
 * function's static shared memory together pass 48 KiB (the limit without the opt-in: exactly
 * 48 KiB of dynamic memory beside a static word was refused on an H200). */
static at_status ex_raise_smem_limit(at_exec *ex, int slot, unsigned smem)
{
    if (ex->funcs[slot].static_smem < 0) {
        int bytes = 0;
        if (!ex->cu->FuncGetAttribute ||
            ex->cu->FuncGetAttribute(&bytes, CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES,
                                     ex->funcs[slot].fn) != CUDA_SUCCESS)
            bytes = 0;
        ex->funcs[slot].static_smem = bytes;
    }
    if ((long long)smem + ex->funcs[slot].static_smem <= 48 * 1024 ||
        (int)smem <= ex->funcs[slot].smem_limit_set)
        return AT_OK;
    CUresult rc = ex->cu->FuncSetAttribute(ex->funcs[slot].fn,
                                           CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                                           (int)smem);
    if (rc != CUDA_SUCCESS)
        return ex_cuda_fail(ex, rc, "cuFuncSetAttribute(max dynamic shared memory)");
    ex->funcs[slot].smem_limit_set = (int)smem;
    return AT_OK;
}

at_status ex_occupancy(at_exec *ex, const char *name, unsigned threads, unsigned smem,
                       int *blocks)
{
    CUresult rc;
    int slot = ex_find(ex, name, &rc);
    if (slot < 0)
        return ex_not_found(ex, name, rc);
    if (ex->funcs[slot].occ_blocks > 0 && ex->funcs[slot].occ_threads == (int)threads &&
        ex->funcs[slot].occ_smem == (int)smem) {
        *blocks = ex->funcs[slot].occ_blocks;
        return AT_OK;
    }
    at_status s = ex_raise_smem_limit(ex, slot, smem);
    if (s != AT_OK)
        return s;
    int n = 0;
    rc = ex->cu->OccupancyMaxActiveBlocksPerMultiprocessor(&n, ex->funcs[slot].fn,
                                                                     (int)threads, smem);
    if (rc != CUDA_SUCCESS)
        return ex_cuda_fail(ex, rc, "cuOccupancyMaxActiveBlocksPerMultiprocessor");
    if (n < 1)
        return ex_fail(ex, AT_ERR_UNSUPPORTED, "kernel %s: no block of %u threads with %u bytes "
                       "of shared memory fits on an SM", name, threads, smem);
    ex->funcs[slot].occ_threads = (int)threads;
    ex->funcs[slot].occ_smem = (int)smem;
    ex->funcs[slot].occ_blocks = n;
    *blocks = n;
    return AT_OK;
}

/* Launches through cuLaunchKernel, or cuLaunchKernelEx with a cluster shape
 * when cluster is not NULL; describes a refused launch in errmsg. */
static at_status ex_launch_with(at_exec *ex, const char *name, const unsigned grid[3],
                                const unsigned block[3], const unsigned *cluster,
                                unsigned smem, void **args)
{
    CUresult rc;
    int slot = ex_find(ex, name, &rc);
    if (slot < 0)
        return ex_not_found(ex, name, rc);
    if (grid[0] == 0 || grid[1] == 0 || grid[2] == 0 || block[0] * block[1] * block[2] == 0)
        return ex_fail(ex, AT_ERR_INTERNAL, "kernel %s: empty launch %ux%ux%u / %ux%ux%u",
                       name, grid[0], grid[1], grid[2], block[0], block[1], block[2]);
    if (cluster && !ex->cu->LaunchKernelEx)
        return ex_fail(ex, AT_ERR_UNSUPPORTED,
                       "kernel %s needs cluster launches (cuLaunchKernelEx): driver too old",
                       name);
    at_status s = ex_raise_smem_limit(ex, slot, smem);
    if (s != AT_OK)
        return s;
    if (cluster) {
        CUlaunchAttribute attr;
        memset(&attr, 0, sizeof attr);
        attr.id = CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION;
        attr.value.clusterDim.x = cluster[0];
        attr.value.clusterDim.y = cluster[1];
        attr.value.clusterDim.z = cluster[2];
        CUlaunchConfig config;
        memset(&config, 0, sizeof config);
        config.gridDimX = grid[0];
        config.gridDimY = grid[1];
        config.gridDimZ = grid[2];
        config.blockDimX = block[0];
        config.blockDimY = block[1];
        config.blockDimZ = block[2];
        config.sharedMemBytes = smem;
        config.hStream = ex->stream;
        config.attrs = &attr;
        config.numAttrs = 1;
        rc = ex->cu->LaunchKernelEx(&config, ex->funcs[slot].fn, args, NULL);
    } else {
        rc = ex->cu->LaunchKernel(ex->funcs[slot].fn, grid[0], grid[1], grid[2], block[0],
                                  block[1], block[2], smem, ex->stream, args, NULL);
    }
    if (rc != CUDA_SUCCESS) {
        s = ex_cuda_fail(ex, rc, cluster ? "cuLaunchKernelEx" : "cuLaunchKernel");
        size_t used = ex->errmsg ? strlen(ex->errmsg) : 0;
        if (ex->errmsg && used + 1 < ex->errlen)
            snprintf(ex->errmsg + used, ex->errlen - used,
                     " [%s grid %ux%ux%u block %ux%ux%u cluster %ux%ux%u smem %u]", name,
                     grid[0], grid[1], grid[2], block[0], block[1], block[2],
                     cluster ? cluster[0] : 1, cluster ? cluster[1] : 1,
                     cluster ? cluster[2] : 1, smem);
        return s;
    }
    return AT_OK;
}

at_status ex_launch(at_exec *ex, const char *name, unsigned gx, unsigned gy,
                    unsigned gz, unsigned bx, unsigned by, unsigned bz,
                    unsigned smem, void **args)
{
    const unsigned grid[3] = {gx, gy, gz}, block[3] = {bx, by, bz};
    return ex_launch_with(ex, name, grid, block, NULL, smem, args);
}

at_status ex_launch_cluster(at_exec *ex, const char *name, const unsigned grid[3],
                            const unsigned block[3], const unsigned cluster[3],
                            unsigned smem, void **args)
{
    return ex_launch_with(ex, name, grid, block, cluster, smem, args);
}

at_status ex_scratch(at_exec *ex, int slot, size_t bytes, CUdeviceptr *ptr)
{
    if (slot < 0 || slot >= EX_MAX_SCRATCH)
        return ex_fail(ex, AT_ERR_INTERNAL, "scratch slot %d out of range", slot);
    if (bytes == 0)
        bytes = 16;
    if (ex->scratch_bytes[slot] < bytes) {
        /* Scratch is only freed once the stream no longer uses it. */
        if (ex->scratch[slot]) {
            ex->cu->StreamSynchronize(ex->stream);
            ex->cu->MemFree(ex->scratch[slot]);
            ex->scratch[slot] = 0;
            ex->scratch_bytes[slot] = 0;
        }
        CUresult rc = ex->cu->MemAlloc(&ex->scratch[slot], bytes);
        if (rc != CUDA_SUCCESS)
            return ex_cuda_fail(ex, rc, "cuMemAlloc(scratch)");
        ex->scratch_bytes[slot] = bytes;
    }
    *ptr = ex->scratch[slot];
    return AT_OK;
}

at_status ex_scratch_zeroed(at_exec *ex, int slot, size_t bytes, CUdeviceptr *ptr)
{
    if (slot < 0 || slot >= EX_MAX_SCRATCH)
        return ex_scratch(ex, slot, bytes, ptr);    /* reports the bad slot */
    size_t had = ex->scratch_bytes[slot];
    at_status s = ex_scratch(ex, slot, bytes, ptr);
    if (s != AT_OK || ex->scratch_bytes[slot] == had)
        return s;
    return ex_memset32(ex, *ptr, 0, ex->scratch_bytes[slot] / 4);
}

at_status ex_memset32(at_exec *ex, CUdeviceptr ptr, unsigned value, size_t n)
{
    CUresult rc = ex->cu->MemsetD32Async(ptr, value, n, ex->stream);
    return rc == CUDA_SUCCESS ? AT_OK : ex_cuda_fail(ex, rc, "cuMemsetD32Async");
}

at_status ex_download(at_exec *ex, void *dst, CUdeviceptr src, size_t bytes)
{
    CUresult rc = ex->cu->MemcpyDtoHAsync(dst, src, bytes, ex->stream);
    if (rc != CUDA_SUCCESS)
        return ex_cuda_fail(ex, rc, "cuMemcpyDtoHAsync");
    rc = ex->cu->StreamSynchronize(ex->stream);
    return rc == CUDA_SUCCESS ? AT_OK : ex_cuda_fail(ex, rc, "cuStreamSynchronize");
}

at_status ex_upload(at_exec *ex, CUdeviceptr dst, const void *src, size_t bytes)
{
    CUresult rc = ex->cu->MemcpyHtoDAsync(dst, src, bytes, ex->stream);
    if (rc != CUDA_SUCCESS)
        return ex_cuda_fail(ex, rc, "cuMemcpyHtoDAsync");
    rc = ex->cu->StreamSynchronize(ex->stream);
    return rc == CUDA_SUCCESS ? AT_OK : ex_cuda_fail(ex, rc, "cuStreamSynchronize");
}

at_status ex_sync(at_exec *ex)
{
    CUresult rc = ex->cu->StreamSynchronize(ex->stream);
    return rc == CUDA_SUCCESS ? AT_OK : ex_cuda_fail(ex, rc, "cuStreamSynchronize");
}
