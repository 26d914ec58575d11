/* cudrv.c: loads libcuda.so.1 with dlopen and resolves the driver entry
 * points through cuGetProcAddress, so nothing links against the driver. */
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cudrv.h"

/* cuGetProcAddress as exported by CUDA 12+ drivers (cuGetProcAddress_v2). */
typedef CUresult (*get_proc_fn)(const char *symbol, void **pfn, int version,
                                cuuint64_t flags, CUdriverProcAddressQueryResult *status);

static cudrv driver_table;
static at_status driver_status = AT_ERR_NO_DRIVER;
static char driver_message[512];
static pthread_once_t driver_once = PTHREAD_ONCE_INIT;

/* Entry points: the table slot, the base name for cuGetProcAddress and the
 * exported (versioned) name for plain dlsym when that is missing. */
#define ENTRY(field, base, exported) {offsetof(cudrv, field), base, exported, 0}
#define OPTIONAL(field, base, exported) {offsetof(cudrv, field), base, exported, 1}
static const struct {
    size_t offset;
    const char *base;
    const char *exported;
    int optional;                   /* 1: a missing entry stays NULL */
} entries[] = {
    ENTRY(Init, "cuInit", "cuInit"),
    ENTRY(DriverGetVersion, "cuDriverGetVersion", "cuDriverGetVersion"),
    ENTRY(DeviceGetCount, "cuDeviceGetCount", "cuDeviceGetCount"),
    ENTRY(DeviceGet, "cuDeviceGet", "cuDeviceGet"),
    ENTRY(DeviceGetName, "cuDeviceGetName", "cuDeviceGetName"),
    ENTRY(DeviceGetUuid, "cuDeviceGetUuid", "cuDeviceGetUuid_v2"),
    ENTRY(DeviceGetAttribute, "cuDeviceGetAttribute", "cuDeviceGetAttribute"),
    ENTRY(DeviceTotalMem, "cuDeviceTotalMem", "cuDeviceTotalMem_v2"),
    ENTRY(DevicePrimaryCtxRetain, "cuDevicePrimaryCtxRetain", "cuDevicePrimaryCtxRetain"),
    ENTRY(DevicePrimaryCtxRelease, "cuDevicePrimaryCtxRelease", "cuDevicePrimaryCtxRelease_v2"),
    ENTRY(CtxPushCurrent, "cuCtxPushCurrent", "cuCtxPushCurrent_v2"),
    ENTRY(CtxPopCurrent, "cuCtxPopCurrent", "cuCtxPopCurrent_v2"),
    ENTRY(CtxGetCurrent, "cuCtxGetCurrent", "cuCtxGetCurrent"),
    ENTRY(CtxSynchronize, "cuCtxSynchronize", "cuCtxSynchronize"),
    ENTRY(ModuleLoadData, "cuModuleLoadData", "cuModuleLoadData"),
    ENTRY(ModuleUnload, "cuModuleUnload", "cuModuleUnload"),
    ENTRY(ModuleGetFunction, "cuModuleGetFunction", "cuModuleGetFunction"),
    ENTRY(FuncSetAttribute, "cuFuncSetAttribute", "cuFuncSetAttribute"),
    ENTRY(FuncGetAttribute, "cuFuncGetAttribute", "cuFuncGetAttribute"),
    ENTRY(OccupancyMaxActiveBlocksPerMultiprocessor, "cuOccupancyMaxActiveBlocksPerMultiprocessor",
          "cuOccupancyMaxActiveBlocksPerMultiprocessor"),
    ENTRY(LaunchKernel, "cuLaunchKernel", "cuLaunchKernel"),
    ENTRY(MemAlloc, "cuMemAlloc", "cuMemAlloc_v2"),
    ENTRY(MemFree, "cuMemFree", "cuMemFree_v2"),
    ENTRY(MemcpyHtoD, "cuMemcpyHtoD", "cuMemcpyHtoD_v2"),
    ENTRY(MemcpyDtoH, "cuMemcpyDtoH", "cuMemcpyDtoH_v2"),
    ENTRY(MemcpyDtoD, "cuMemcpyDtoD", "cuMemcpyDtoD_v2"),
    ENTRY(MemcpyDtoHAsync, "cuMemcpyDtoHAsync", "cuMemcpyDtoHAsync_v2"),
    ENTRY(MemcpyHtoDAsync, "cuMemcpyHtoDAsync", "cuMemcpyHtoDAsync_v2"),
    ENTRY(MemcpyDtoDAsync, "cuMemcpyDtoDAsync", "cuMemcpyDtoDAsync_v2"),
    ENTRY(MemsetD8Async, "cuMemsetD8Async", "cuMemsetD8Async"),
    ENTRY(MemsetD32Async, "cuMemsetD32Async", "cuMemsetD32Async"),
    ENTRY(MemGetInfo, "cuMemGetInfo", "cuMemGetInfo_v2"),
    ENTRY(StreamCreate, "cuStreamCreate", "cuStreamCreate"),
    ENTRY(StreamDestroy, "cuStreamDestroy", "cuStreamDestroy_v2"),
    ENTRY(StreamSynchronize, "cuStreamSynchronize", "cuStreamSynchronize"),
    ENTRY(StreamQuery, "cuStreamQuery", "cuStreamQuery"),
    ENTRY(EventCreate, "cuEventCreate", "cuEventCreate"),
    ENTRY(EventDestroy, "cuEventDestroy", "cuEventDestroy_v2"),
    ENTRY(EventRecord, "cuEventRecord", "cuEventRecord"),
    ENTRY(EventSynchronize, "cuEventSynchronize", "cuEventSynchronize"),
    ENTRY(EventElapsedTime, "cuEventElapsedTime", "cuEventElapsedTime"),
    ENTRY(PointerGetAttribute, "cuPointerGetAttribute", "cuPointerGetAttribute"),
    ENTRY(GetErrorName, "cuGetErrorName", "cuGetErrorName"),
    ENTRY(GetErrorString, "cuGetErrorString", "cuGetErrorString"),
    OPTIONAL(TensorMapEncodeTiled, "cuTensorMapEncodeTiled", "cuTensorMapEncodeTiled"),
    OPTIONAL(LaunchKernelEx, "cuLaunchKernelEx", "cuLaunchKernelEx"),
};

static void driver_load(void)
{
    const char *name = getenv("AUTOTUNE_CUDA_LIB");
    if (!name || !*name)
        name = "libcuda.so.1";
    void *lib = dlopen(name, RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
        const char *why = dlerror();
        snprintf(driver_message, sizeof driver_message,
                 "no CUDA driver: cannot load %s (%s); is an NVIDIA driver installed?",
                 name, why ? why : "unknown reason");
        return;
    }
    get_proc_fn get_proc = (get_proc_fn)dlsym(lib, "cuGetProcAddress_v2");
    for (size_t i = 0; i < sizeof entries / sizeof entries[0]; i++) {
        void *fn = NULL;
        if (get_proc) {
            CUdriverProcAddressQueryResult found;
            if (get_proc(entries[i].base, &fn, 12000, CU_GET_PROC_ADDRESS_DEFAULT, &found)
                != CUDA_SUCCESS || found != CU_GET_PROC_ADDRESS_SUCCESS)
                fn = NULL;
        }
        if (!fn)
            fn = dlsym(lib, entries[i].exported);
        if (!fn && entries[i].optional)
            continue;
        if (!fn) {
            snprintf(driver_message, sizeof driver_message,
                     "no CUDA driver: %s lacks %s (driver too old?)", name,
                     entries[i].exported);
            dlclose(lib);
            return;
        }
        memcpy((char *)&driver_table + entries[i].offset, &fn, sizeof fn);
    }
    driver_status = AT_OK;
}

const cudrv *cudrv_get(at_status *status, char *msg, size_t msglen)
{
    pthread_once(&driver_once, driver_load);
    if (status)
        *status = driver_status;
    if (driver_status != AT_OK) {
        if (msg && msglen)
            snprintf(msg, msglen, "%s", driver_message);
        return NULL;
    }
    return &driver_table;
}

void cudrv_describe(const cudrv *cu, CUresult rc, const char *call, char *msg,
                    size_t msglen)
{
    const char *name = NULL, *text = NULL;
    if (cu) {
        cu->GetErrorName(rc, &name);
        cu->GetErrorString(rc, &text);
    }
    if (msg && msglen)
        snprintf(msg, msglen, "%s failed: %s (%s)", call,
                 name ? name : "CUDA_ERROR_UNKNOWN", text ? text : "no description");
}

at_status cudrv_device_info(const cudrv *cu, int ordinal, at_device_info *info,
                            char *msg, size_t msglen)
{
    CUresult rc = cu->Init(0);
    if (rc != CUDA_SUCCESS) {
        cudrv_describe(cu, rc, "cuInit", msg, msglen);
        return rc == CUDA_ERROR_NO_DEVICE ? AT_ERR_NO_DEVICE : AT_ERR_CUDA;
    }
    int count = 0;
    rc = cu->DeviceGetCount(&count);
    if (rc != CUDA_SUCCESS) {
        cudrv_describe(cu, rc, "cuDeviceGetCount", msg, msglen);
        return AT_ERR_CUDA;
    }
    if (ordinal < 0 || ordinal >= count) {
        snprintf(msg, msglen, "no CUDA device %d (this machine has %d)", ordinal, count);
        return AT_ERR_NO_DEVICE;
    }
    CUdevice dev;
    if ((rc = cu->DeviceGet(&dev, ordinal)) != CUDA_SUCCESS) {
        cudrv_describe(cu, rc, "cuDeviceGet", msg, msglen);
        return AT_ERR_NO_DEVICE;
    }
    memset(info, 0, sizeof *info);
    info->ordinal = ordinal;
    cu->DeviceGetName(info->name, (int)sizeof info->name - 1, dev);
    CUuuid uuid;
    if (cu->DeviceGetUuid(&uuid, dev) == CUDA_SUCCESS) {
        const unsigned char *b = (const unsigned char *)uuid.bytes;
        snprintf(info->uuid, sizeof info->uuid,
                 "GPU-%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x",
                 b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10],
                 b[11], b[12], b[13], b[14], b[15]);
    }
    size_t total = 0;
    cu->DeviceTotalMem(&total, dev);
    info->memory_bytes = (long long)total;
    static const struct { CUdevice_attribute attr; size_t offset; } attrs[] = {
        {CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, offsetof(at_device_info, cc_major)},
        {CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, offsetof(at_device_info, cc_minor)},
        {CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, offsetof(at_device_info, sm_count)},
        {CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE, offsetof(at_device_info, l2_bytes)},
        {CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN,
         offsetof(at_device_info, smem_per_block_optin)},
        {CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR,
         offsetof(at_device_info, smem_per_sm)},
        {CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_BLOCK, offsetof(at_device_info, regs_per_block)},
        {CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_MULTIPROCESSOR,
         offsetof(at_device_info, regs_per_sm)},
        {CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK,
         offsetof(at_device_info, max_threads_per_block)},
        {CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR,
         offsetof(at_device_info, max_threads_per_sm)},
        {CU_DEVICE_ATTRIBUTE_CLOCK_RATE, offsetof(at_device_info, clock_khz)},
        {CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE, offsetof(at_device_info, mem_clock_khz)},
        {CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH, offsetof(at_device_info, mem_bus_bits)},
    };
    for (size_t i = 0; i < sizeof attrs / sizeof attrs[0]; i++) {
        int value = 0;
        if (cu->DeviceGetAttribute(&value, attrs[i].attr, dev) == CUDA_SUCCESS)
            memcpy((char *)info + attrs[i].offset, &value, sizeof value);
    }
    cu->DriverGetVersion(&info->driver_version);
    snprintf(info->arch, sizeof info->arch, "sm_%d%d", info->cc_major, info->cc_minor);
    return AT_OK;
}
