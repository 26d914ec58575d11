/* cudrv.h: the CUDA driver API resolved at run time (dlopen of libcuda.so.1),
 * so every program starts on machines without a GPU driver. */
#ifndef CUDRV_H
#define CUDRV_H

#include <cuda.h>
#include <stddef.h>
#include "autotune.h"

typedef struct cudrv {
    CUresult (*Init)(unsigned int flags);
    CUresult (*DriverGetVersion)(int *version);
    CUresult (*DeviceGetCount)(int *count);
    CUresult (*DeviceGet)(CUdevice *dev, int ordinal);
    CUresult (*DeviceGetName)(char *name, int len, CUdevice dev);
    CUresult (*DeviceGetUuid)(CUuuid *uuid, CUdevice dev);
    CUresult (*DeviceGetAttribute)(int *value, CUdevice_attribute attr, CUdevice dev);
    CUresult (*DeviceTotalMem)(size_t *bytes, CUdevice dev);
    CUresult (*DevicePrimaryCtxRetain)(CUcontext *ctx, CUdevice dev);
    CUresult (*DevicePrimaryCtxRelease)(CUdevice dev);
    CUresult (*CtxPushCurrent)(CUcontext ctx);
    CUresult (*CtxPopCurrent)(CUcontext *ctx);
    CUresult (*CtxGetCurrent)(CUcontext *ctx);
    CUresult (*CtxSynchronize)(void);
    CUresult (*ModuleLoadData)(CUmodule *module, const void *image);
    CUresult (*ModuleUnload)(CUmodule module);
    CUresult (*ModuleGetFunction)(CUfunction *fn, CUmodule module, const char *name);
    CUresult (*FuncSetAttribute)(CUfunction fn, CUfunction_attribute attr, int value);
    CUresult (*FuncGetAttribute)(int *value, CUfunction_attribute attr, CUfunction fn);
    CUresult (*OccupancyMaxActiveBlocksPerMultiprocessor)(int *blocks, CUfunction fn,
                                                          int block_size, size_t smem);
    CUresult (*LaunchKernel)(CUfunction f, unsigned gx, unsigned gy, unsigned gz,
                             unsigned bx, unsigned by, unsigned bz, unsigned smem,
                             CUstream stream, void **params, void **extra);
    CUresult (*MemAlloc)(CUdeviceptr *ptr, size_t bytes);
    CUresult (*MemFree)(CUdeviceptr ptr);
    CUresult (*MemcpyHtoD)(CUdeviceptr dst, const void *src, size_t bytes);
    CUresult (*MemcpyDtoH)(void *dst, CUdeviceptr src, size_t bytes);
    CUresult (*MemcpyDtoD)(CUdeviceptr dst, CUdeviceptr src, size_t bytes);
    CUresult (*MemcpyDtoHAsync)(void *dst, CUdeviceptr src, size_t bytes, CUstream s);
    CUresult (*MemcpyHtoDAsync)(CUdeviceptr dst, const void *src, size_t bytes, CUstream s);
    CUresult (*MemcpyDtoDAsync)(CUdeviceptr dst, CUdeviceptr src, size_t bytes, CUstream s);
    CUresult (*MemsetD8Async)(CUdeviceptr dst, unsigned char v, size_t n, CUstream s);
    CUresult (*MemsetD32Async)(CUdeviceptr dst, unsigned int v, size_t n, CUstream s);
    CUresult (*MemGetInfo)(size_t *free_bytes, size_t *total_bytes);
    CUresult (*StreamCreate)(CUstream *s, unsigned int flags);
    CUresult (*StreamDestroy)(CUstream s);
    CUresult (*StreamSynchronize)(CUstream s);
    CUresult (*StreamQuery)(CUstream s);
    CUresult (*EventCreate)(CUevent *e, unsigned int flags);
    CUresult (*EventDestroy)(CUevent e);
    CUresult (*EventRecord)(CUevent e, CUstream s);
    CUresult (*EventSynchronize)(CUevent e);
    CUresult (*EventElapsedTime)(float *ms, CUevent start, CUevent end);
    CUresult (*PointerGetAttribute)(void *data, CUpointer_attribute attr, CUdeviceptr p);
    CUresult (*GetErrorName)(CUresult error, const char **str);
    CUresult (*GetErrorString)(CUresult error, const char **str);
    /* Optional (CUDA 12+ drivers): NULL where the driver lacks them; the
     * families that need them (tensor maps, cluster launches) check first. */
    CUresult (*TensorMapEncodeTiled)(CUtensorMap *map, CUtensorMapDataType type,
                                     cuuint32_t rank, void *global, const cuuint64_t *dims,
                                     const cuuint64_t *strides, const cuuint32_t *box,
                                     const cuuint32_t *element_strides,
                                     CUtensorMapInterleave interleave,
                                     CUtensorMapSwizzle swizzle,
                                     CUtensorMapL2promotion l2promotion,
                                     CUtensorMapFloatOOBfill oob_fill);
    CUresult (*LaunchKernelEx)(const CUlaunchConfig *config, CUfunction f, void **params,
                               void **extra);
} cudrv;

/* Loads the driver once (thread-safe) and returns its table, or NULL with
 * AT_ERR_NO_DRIVER in *status and a reason in msg (msg may be NULL).
 * $AUTOTUNE_CUDA_LIB names another library (tests use a missing one). */
const cudrv *cudrv_get(at_status *status, char *msg, size_t msglen);

/* Writes "cuXxx failed: CUDA_ERROR_NAME (description)" into msg. */
void cudrv_describe(const cudrv *cu, CUresult rc, const char *call,
                    char *msg, size_t msglen);

/* Facts about one device, read once. */
typedef struct at_device_info {
    int ordinal;
    char name[128];
    char uuid[48];             /* "GPU-xxxxxxxx-xxxx-..." */
    int cc_major, cc_minor;
    int sm_count;
    long long memory_bytes;
    int l2_bytes;
    int smem_per_block_optin;  /* max dynamic+static shared memory per block */
    int smem_per_sm;
    int regs_per_block;
    int regs_per_sm;
    int max_threads_per_block;
    int max_threads_per_sm;
    int clock_khz;
    int mem_clock_khz;
    int mem_bus_bits;
    int driver_version;        /* e.g. 13000 */
    char arch[16];             /* "sm_90" */
} at_device_info;

/* Fills info for device `ordinal` (cuInit done here). */
at_status cudrv_device_info(const cudrv *cu, int ordinal, at_device_info *info,
                            char *msg, size_t msglen);

#endif
