/* fakecuda.c: a CUDA driver without a GPU for the CPU tests of the runtime's host path
 * (AUTOTUNE_CUDA_LIB=build/libfakecuda.so): one H200-like device, every call succeeds and is
 * counted (fakecuda_count), launches record their function's module; nothing runs. */
#include <cuda.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

enum {
    FK_CTX_GET, FK_CTX_PUSH, FK_CTX_POP, FK_LAUNCH, FK_LAUNCH_EX, FK_FUNC_GET_ATTR,
    FK_FUNC_SET_ATTR, FK_OCCUPANCY, FK_OCC_CLUSTERS, FK_TENSOR_MAP, FK_MODULE_LOAD,
    FK_GET_FUNCTION, FK_MEM_ALLOC, FK_MEMSET, FK_EVENT_RECORD, FK_EVENT_CREATE, FK_SYNC,
    FK_OTHER, FK_N
};
static const char *const fk_names[FK_N] = {
    "cuCtxGetCurrent", "cuCtxPushCurrent", "cuCtxPopCurrent", "cuLaunchKernel",
    "cuLaunchKernelEx", "cuFuncGetAttribute", "cuFuncSetAttribute",
    "cuOccupancyMaxActiveBlocksPerMultiprocessor", "cuOccupancyMaxActiveClusters",
    "cuTensorMapEncodeTiled", "cuModuleLoadData", "cuModuleGetFunction", "cuMemAlloc",
    "cuMemset", "cuEventRecord", "cuEventCreate", "cuSynchronize", "other",
};
static long long fk_counts[FK_N];

/* A module is its load number; a function its module's number times 1000 plus its name's
 * slot: fakecuda_last_module() says which module the last launch ran. */
static int fk_modules;
static int fk_last_module;
static float fk_module_ms[64];  /* the time an event pair around a launch of module i reads */
static float fk_module_first_ms[64];    /* the first such reading instead, where > 0 */
static int fk_module_between;   /* the module launched since the last event record */
static _Thread_local CUcontext fk_stack[16];
static _Thread_local int fk_depth;
static CUstream fk_last_stream;
static uintptr_t fk_next_ptr = 0x100000000ull;

/* Calls of the named entry point since load or fakecuda_reset ("cuMemset" counts every memset,
 * "cuSynchronize" every synchronize, "total" all of them). */
long long fakecuda_count(const char *name)
{
    long long total = 0;
    for (int i = 0; i < FK_N; i++) {
        if (strcmp(name, fk_names[i]) == 0)
            return fk_counts[i];
        total += fk_counts[i];
    }
    return strcmp(name, "total") == 0 ? total : -1;
}

void fakecuda_reset(void)
{
    memset(fk_counts, 0, sizeof fk_counts);
}

/* The module (1, 2, ... in load order) of the last launch; 0 before any. */
int fakecuda_last_module(void)
{
    return fk_last_module;
}

/* The stream of the last launch. */
CUstream fakecuda_last_stream(void)
{
    return fk_last_stream;
}

/* The time (ms) an event pair around a launch of module `module` reads (default 1). */
void fakecuda_set_module_ms(int module, float ms)
{
    if (module > 0 && module < 64)
        fk_module_ms[module] = ms;
}

/* The time (ms) the first event pair around a launch of module `module` reads, once (the
 * later pairs read fakecuda_set_module_ms's). */
void fakecuda_set_module_first_ms(int module, float ms)
{
    if (module > 0 && module < 64)
        fk_module_first_ms[module] = ms;
}

CUresult cuInit(unsigned int flags) { (void)flags; fk_counts[FK_OTHER]++; return CUDA_SUCCESS; }
CUresult cuDriverGetVersion(int *v) { *v = 13000; return CUDA_SUCCESS; }
CUresult cuDeviceGetCount(int *n) { *n = 1; return CUDA_SUCCESS; }
CUresult cuDeviceGet(CUdevice *d, int ordinal)
{
    if (ordinal != 0)
        return CUDA_ERROR_INVALID_DEVICE;
    *d = 0;
    return CUDA_SUCCESS;
}
CUresult cuDeviceGetName(char *name, int len, CUdevice d)
{
    (void)d;
    strncpy(name, "Fake H200 (no GPU)", (size_t)len);
    return CUDA_SUCCESS;
}
CUresult cuDeviceGetUuid(CUuuid *u, CUdevice d)
{
    (void)d;
    for (int i = 0; i < 16; i++)
        u->bytes[i] = (char)(0xf0 + i);
    return CUDA_SUCCESS;
}
CUresult cuDeviceGetAttribute(int *v, CUdevice_attribute a, CUdevice d)
{
    (void)d;
    switch (a) {
    case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR: *v = 9; break;
    case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR: *v = 0; break;
    case CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT: *v = 132; break;
    case CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE: *v = 50331648; break;
    case CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN: *v = 232448; break;
    case CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR: *v = 233472; break;
    case CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_BLOCK: *v = 65536; break;
    case CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_MULTIPROCESSOR: *v = 65536; break;
    case CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK: *v = 1024; break;
    case CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR: *v = 2048; break;
    case CU_DEVICE_ATTRIBUTE_CLOCK_RATE: *v = 1980000; break;
    case CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE: *v = 3201000; break;
    case CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH: *v = 6144; break;
    default: *v = 0; break;
    }
    return CUDA_SUCCESS;
}
CUresult cuDeviceTotalMem(size_t *bytes, CUdevice d) { (void)d; *bytes = 150ull << 30; return CUDA_SUCCESS; }
CUresult cuDevicePrimaryCtxRetain(CUcontext *c, CUdevice d)
{
    (void)d;
    *c = (CUcontext)(uintptr_t)0xc0de0;
    return CUDA_SUCCESS;
}
CUresult cuDevicePrimaryCtxRelease(CUdevice d) { (void)d; return CUDA_SUCCESS; }
CUresult cuCtxPushCurrent(CUcontext c)
{
    fk_counts[FK_CTX_PUSH]++;
    if (fk_depth >= 16)
        return CUDA_ERROR_INVALID_CONTEXT;
    fk_stack[fk_depth++] = c;
    return CUDA_SUCCESS;
}
CUresult cuCtxPopCurrent(CUcontext *c)
{
    fk_counts[FK_CTX_POP]++;
    if (fk_depth == 0)
        return CUDA_ERROR_INVALID_CONTEXT;
    *c = fk_stack[--fk_depth];
    return CUDA_SUCCESS;
}
CUresult cuCtxGetCurrent(CUcontext *c)
{
    fk_counts[FK_CTX_GET]++;
    *c = fk_depth ? fk_stack[fk_depth - 1] : NULL;
    return CUDA_SUCCESS;
}
CUresult cuCtxSynchronize(void) { fk_counts[FK_SYNC]++; return CUDA_SUCCESS; }
CUresult cuModuleLoadData(CUmodule *m, const void *image)
{
    (void)image;
    fk_counts[FK_MODULE_LOAD]++;
    *m = (CUmodule)(uintptr_t)++fk_modules;
    return CUDA_SUCCESS;
}
CUresult cuModuleUnload(CUmodule m) { (void)m; return CUDA_SUCCESS; }
CUresult cuModuleGetFunction(CUfunction *f, CUmodule m, const char *name)
{
    fk_counts[FK_GET_FUNCTION]++;
    unsigned h = 0;
    for (const char *p = name; *p; p++)
        h = h * 31 + (unsigned char)*p;
    *f = (CUfunction)(uintptr_t)((uintptr_t)m * 1000 + 1 + h % 997);
    return CUDA_SUCCESS;
}
CUresult cuFuncSetAttribute(CUfunction f, CUfunction_attribute a, int v)
{
    (void)f, (void)a, (void)v;
    fk_counts[FK_FUNC_SET_ATTR]++;
    return CUDA_SUCCESS;
}
CUresult cuFuncGetAttribute(int *v, CUfunction_attribute a, CUfunction f)
{
    (void)f;
    fk_counts[FK_FUNC_GET_ATTR]++;
    *v = a == CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK ? 1024 : 0;
    return CUDA_SUCCESS;
}
CUresult cuOccupancyMaxActiveBlocksPerMultiprocessor(int *n, CUfunction f, int bs, size_t smem)
{
    (void)f, (void)bs, (void)smem;
    fk_counts[FK_OCCUPANCY]++;
    *n = 2;
    return CUDA_SUCCESS;
}
static void fk_launched(CUfunction f, CUstream s)
{
    fk_last_stream = s;
    fk_last_module = (int)((uintptr_t)f / 1000);
    fk_module_between = fk_last_module;
}
CUresult cuLaunchKernel(CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx,
                        unsigned by, unsigned bz, unsigned smem, CUstream s, void **params,
                        void **extra)
{
    (void)gx, (void)gy, (void)gz, (void)bx, (void)by, (void)bz, (void)smem;
    (void)params, (void)extra;
    fk_counts[FK_LAUNCH]++;
    fk_launched(f, s);
    return CUDA_SUCCESS;
}
CUresult cuLaunchKernelEx(const CUlaunchConfig *c, CUfunction f, void **params, void **extra)
{
    (void)params, (void)extra;
    fk_counts[FK_LAUNCH_EX]++;
    fk_launched(f, c->hStream);
    return CUDA_SUCCESS;
}
CUresult cuOccupancyMaxActiveClusters(int *n, CUfunction f, const CUlaunchConfig *c)
{
    (void)f, (void)c;
    fk_counts[FK_OCC_CLUSTERS]++;
    *n = 66;
    return CUDA_SUCCESS;
}
CUresult cuTensorMapEncodeTiled(CUtensorMap *map, CUtensorMapDataType type, cuuint32_t rank,
                                void *global, const cuuint64_t *dims, const cuuint64_t *strides,
                                const cuuint32_t *box, const cuuint32_t *element_strides,
                                CUtensorMapInterleave il, CUtensorMapSwizzle sw,
                                CUtensorMapL2promotion l2, CUtensorMapFloatOOBfill oob)
{
    (void)type, (void)rank, (void)global, (void)dims, (void)strides, (void)box;
    (void)element_strides, (void)il, (void)sw, (void)l2, (void)oob;
    fk_counts[FK_TENSOR_MAP]++;
    memset(map, 0, sizeof *map);
    return CUDA_SUCCESS;
}
/* Device memory: the live allocations (at most FK_MAX_ALLOCS; more fail), their total and the
 * limit past which cuMemAlloc answers CUDA_ERROR_OUT_OF_MEMORY (0: none). */
#define FK_MAX_ALLOCS 4096
static CUdeviceptr fk_alloc_ptr[FK_MAX_ALLOCS];
static size_t fk_alloc_bytes[FK_MAX_ALLOCS];
static size_t fk_live_bytes, fk_memory_limit;

/* Device memory the live allocations hold, in bytes. */
size_t fakecuda_live_bytes(void)
{
    return fk_live_bytes;
}

/* From now on allocations past `bytes` live in total fail as out of memory (0: no limit). */
void fakecuda_set_memory_limit(size_t bytes)
{
    fk_memory_limit = bytes;
}

CUresult cuMemAlloc(CUdeviceptr *p, size_t bytes)
{
    fk_counts[FK_MEM_ALLOC]++;
    int slot = -1;
    for (int i = 0; i < FK_MAX_ALLOCS && slot < 0; i++)
        if (!fk_alloc_ptr[i])
            slot = i;
    if (slot < 0 || (fk_memory_limit && fk_live_bytes + bytes > fk_memory_limit))
        return CUDA_ERROR_OUT_OF_MEMORY;
    *p = (CUdeviceptr)fk_next_ptr;
    fk_next_ptr += (bytes + 255) / 256 * 256 + 256;
    fk_alloc_ptr[slot] = *p;
    fk_alloc_bytes[slot] = bytes;
    fk_live_bytes += bytes;
    return CUDA_SUCCESS;
}
CUresult cuMemFree(CUdeviceptr p)
{
    for (int i = 0; i < FK_MAX_ALLOCS; i++)
        if (p && fk_alloc_ptr[i] == p) {
            fk_live_bytes -= fk_alloc_bytes[i];
            fk_alloc_ptr[i] = 0;
            return CUDA_SUCCESS;
        }
    return CUDA_ERROR_INVALID_VALUE;
}
CUresult cuMemcpyHtoD(CUdeviceptr d, const void *s, size_t n) { (void)d, (void)s, (void)n; return CUDA_SUCCESS; }
CUresult cuMemcpyDtoH(void *d, CUdeviceptr s, size_t n) { (void)s; memset(d, 0, n); return CUDA_SUCCESS; }
CUresult cuMemcpyDtoD(CUdeviceptr d, CUdeviceptr s, size_t n) { (void)d, (void)s, (void)n; return CUDA_SUCCESS; }
CUresult cuMemcpyDtoHAsync(void *d, CUdeviceptr s, size_t n, CUstream st) { (void)s, (void)st; memset(d, 0, n); return CUDA_SUCCESS; }
CUresult cuMemcpyHtoDAsync(CUdeviceptr d, const void *s, size_t n, CUstream st) { (void)d, (void)s, (void)n, (void)st; return CUDA_SUCCESS; }
CUresult cuMemcpyDtoDAsync(CUdeviceptr d, CUdeviceptr s, size_t n, CUstream st) { (void)d, (void)s, (void)n, (void)st; return CUDA_SUCCESS; }
CUresult cuMemsetD8Async(CUdeviceptr d, unsigned char v, size_t n, CUstream s) { (void)d, (void)v, (void)n, (void)s; fk_counts[FK_MEMSET]++; return CUDA_SUCCESS; }
CUresult cuMemsetD32Async(CUdeviceptr d, unsigned int v, size_t n, CUstream s) { (void)d, (void)v, (void)n, (void)s; fk_counts[FK_MEMSET]++; return CUDA_SUCCESS; }
CUresult cuMemGetInfo(size_t *f, size_t *t) { *f = 140ull << 30; *t = 150ull << 30; return CUDA_SUCCESS; }
CUresult cuStreamCreate(CUstream *s, unsigned int flags) { (void)flags; *s = (CUstream)(uintptr_t)0x5700; return CUDA_SUCCESS; }
CUresult cuStreamDestroy(CUstream s) { (void)s; return CUDA_SUCCESS; }
CUresult cuStreamSynchronize(CUstream s) { (void)s; fk_counts[FK_SYNC]++; return CUDA_SUCCESS; }
CUresult cuStreamQuery(CUstream s) { (void)s; return CUDA_SUCCESS; }

/* An event remembers the module launched between the previous record and its own. */
typedef struct fk_event { int module; } fk_event;
CUresult cuEventCreate(CUevent *e, unsigned int flags)
{
    (void)flags;
    fk_counts[FK_EVENT_CREATE]++;
    fk_event *ev = calloc(1, sizeof *ev);
    if (!ev)
        return CUDA_ERROR_OUT_OF_MEMORY;
    *e = (CUevent)ev;
    return CUDA_SUCCESS;
}
CUresult cuEventDestroy(CUevent e) { free(e); return CUDA_SUCCESS; }
CUresult cuEventRecord(CUevent e, CUstream s)
{
    (void)s;
    fk_counts[FK_EVENT_RECORD]++;
    ((fk_event *)e)->module = fk_module_between;
    fk_module_between = 0;
    return CUDA_SUCCESS;
}
CUresult cuEventSynchronize(CUevent e) { (void)e; fk_counts[FK_SYNC]++; return CUDA_SUCCESS; }
/* the name cudrv.c resolves (cuda.h of CUDA 13 maps it to cuEventElapsedTime_v2) */
#undef cuEventElapsedTime
CUresult cuEventElapsedTime(float *ms, CUevent start, CUevent end);
CUresult cuEventElapsedTime(float *ms, CUevent start, CUevent end)
{
    (void)start;
    int m = ((fk_event *)end)->module;
    *ms = m > 0 && m < 64 && fk_module_ms[m] > 0 ? fk_module_ms[m] : 1.0f;
    if (m > 0 && m < 64 && fk_module_first_ms[m] > 0) {
        *ms = fk_module_first_ms[m];
        fk_module_first_ms[m] = 0;
    }
    return CUDA_SUCCESS;
}
CUresult cuPointerGetAttribute(void *data, CUpointer_attribute a, CUdeviceptr p)
{
    (void)a, (void)p;
    memset(data, 0, sizeof(int));
    return CUDA_ERROR_NOT_SUPPORTED;
}
CUresult cuGetErrorName(CUresult e, const char **s) { (void)e; *s = "CUDA_ERROR_FAKE"; return CUDA_SUCCESS; }
CUresult cuGetErrorString(CUresult e, const char **s) { (void)e; *s = "the fake driver refused"; return CUDA_SUCCESS; }
