/*
 * The part of the CUDA driver API that umpi calls, declared here so that umpi builds without cuda.h
 * and links without libcuda: the driver is opened with dlopen at MPI_Init (src/cuda/loader.c).
 *
 * The types and numeric values are those of NVIDIA's driver API (CUDA 11 and 12); each function is
 * looked up by the versioned symbol that cuda.h maps its name to (cuMemAlloc is exported as
 * cuMemAlloc_v2, and so on), so that we get the same entry point a program built with the toolkit
 * would get.
 *
 * umpi_cuda_drv, the table of function pointers, is the one seam between umpi and the driver: every
 * call goes through it, and the unit tests fill it with fakes (test/unit/test_cuda.c).
 */
#ifndef UMPI_CUDA_DRV_H
#define UMPI_CUDA_DRV_H

#include <stddef.h>
#include <stdint.h>

typedef int CUresult;                      /* an enum in cuda.h; 0 is success */
typedef int CUdevice;
typedef unsigned long long CUdeviceptr;    /* 64-bit builds only, like umpi itself */
typedef struct CUctx_st *CUcontext;
typedef struct CUstream_st *CUstream;
typedef struct CUevent_st *CUevent;
typedef struct CUmemPoolHandle_st *CUmemoryPool;

/* 64 opaque bytes that a process hands to another one on the same node. */
#define UMPI_CU_IPC_HANDLE_SIZE 64
typedef struct {
    char reserved[UMPI_CU_IPC_HANDLE_SIZE];
} CUipcMemHandle;

/* Results umpi tells apart; every other value is reported through cuGetErrorString. */
enum {
    UMPI_CUDA_SUCCESS = 0,
    UMPI_CUDA_ERROR_INVALID_VALUE = 1,
    UMPI_CUDA_ERROR_NOT_INITIALIZED = 3,
    UMPI_CUDA_ERROR_DEINITIALIZED = 4,
    UMPI_CUDA_ERROR_NO_DEVICE = 100,
    UMPI_CUDA_ERROR_INVALID_CONTEXT = 201,
    UMPI_CUDA_ERROR_NOT_READY = 600,
};

/* CUmemorytype: what CU_POINTER_ATTRIBUTE_MEMORY_TYPE reports (0 for memory CUDA does not know). */
enum {
    UMPI_CU_MEMORYTYPE_HOST = 1,
    UMPI_CU_MEMORYTYPE_DEVICE = 2,
    UMPI_CU_MEMORYTYPE_ARRAY = 3,
    UMPI_CU_MEMORYTYPE_UNIFIED = 4,
};

/* CUpointer_attribute: the ones umpi asks for, and the C type each is written as. */
typedef enum {
    UMPI_CU_POINTER_ATTRIBUTE_MEMORY_TYPE = 2,       /* unsigned int (CUmemorytype) */
    UMPI_CU_POINTER_ATTRIBUTE_BUFFER_ID = 7,         /* unsigned long long, unique per allocation */
    UMPI_CU_POINTER_ATTRIBUTE_IS_MANAGED = 8,        /* boolean */
    UMPI_CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL = 9,    /* int */
    UMPI_CU_POINTER_ATTRIBUTE_IS_LEGACY_CUDA_IPC_CAPABLE = 10, /* boolean (CUDA 11.0) */
    UMPI_CU_POINTER_ATTRIBUTE_RANGE_START_ADDR = 11, /* CUdeviceptr */
    UMPI_CU_POINTER_ATTRIBUTE_RANGE_SIZE = 12,       /* size_t */
    UMPI_CU_POINTER_ATTRIBUTE_MAPPED = 13,           /* boolean (CUDA 11.0) */
    UMPI_CU_POINTER_ATTRIBUTE_MEMPOOL_HANDLE = 17,   /* CUmemoryPool (CUDA 11.3) */
} umpi_cu_pointer_attribute_t;

/* Flags. */
#define UMPI_CU_MEMHOSTALLOC_PORTABLE  0x01
#define UMPI_CU_MEMHOSTREGISTER_PORTABLE 0x01
#define UMPI_CU_MEMATTACH_GLOBAL       0x01
#define UMPI_CU_STREAM_LEGACY          ((CUstream) 0x1) /* the legacy default stream, by name */
#define UMPI_CU_STREAM_DEFAULT         0x00
#define UMPI_CU_STREAM_NON_BLOCKING    0x01
#define UMPI_CU_EVENT_DISABLE_TIMING   0x02
#define UMPI_CU_IPC_MEM_LAZY_ENABLE_PEER_ACCESS 0x01

/*
 * The driver functions: UMPI_CUDA_FN(name, symbol, required, (parameters)).
 * required = 0: newer than CUDA 11.0; NULL in the table when the driver lacks it.
 */
#define UMPI_CUDA_FUNCTIONS(X)                                                                       \
    X(cuGetErrorString, "cuGetErrorString", 1, (CUresult err, const char **str))                     \
    X(cuGetErrorName, "cuGetErrorName", 1, (CUresult err, const char **str))                         \
    X(cuInit, "cuInit", 1, (unsigned int flags))                                                     \
    X(cuDriverGetVersion, "cuDriverGetVersion", 1, (int *version))                                   \
    X(cuDeviceGetCount, "cuDeviceGetCount", 1, (int *count))                                         \
    X(cuDeviceGet, "cuDeviceGet", 1, (CUdevice *dev, int ordinal))                                   \
    X(cuDeviceGetName, "cuDeviceGetName", 1, (char *name, int len, CUdevice dev))                    \
    X(cuDevicePrimaryCtxRetain, "cuDevicePrimaryCtxRetain", 1, (CUcontext *ctx, CUdevice dev))       \
    X(cuDevicePrimaryCtxRelease, "cuDevicePrimaryCtxRelease_v2", 1, (CUdevice dev))                  \
    X(cuCtxGetCurrent, "cuCtxGetCurrent", 1, (CUcontext *ctx))                                       \
    X(cuCtxSetCurrent, "cuCtxSetCurrent", 1, (CUcontext ctx))                                        \
    X(cuPointerGetAttributes, "cuPointerGetAttributes", 1,                                           \
      (unsigned int n, umpi_cu_pointer_attribute_t *attrs, void **data, CUdeviceptr ptr))             \
    X(cuMemAlloc, "cuMemAlloc_v2", 1, (CUdeviceptr *dptr, size_t bytes))                             \
    X(cuMemAllocManaged, "cuMemAllocManaged", 1, (CUdeviceptr *dptr, size_t bytes, unsigned flags))  \
    X(cuMemFree, "cuMemFree_v2", 1, (CUdeviceptr dptr))                                              \
    X(cuMemHostAlloc, "cuMemHostAlloc", 1, (void **p, size_t bytes, unsigned int flags))             \
    X(cuMemFreeHost, "cuMemFreeHost", 1, (void *p))                                                  \
    X(cuMemHostRegister, "cuMemHostRegister_v2", 1, (void *p, size_t bytes, unsigned int flags))     \
    X(cuMemHostUnregister, "cuMemHostUnregister", 1, (void *p))                                      \
    X(cuMemcpyAsync, "cuMemcpyAsync", 1, (CUdeviceptr dst, CUdeviceptr src, size_t n, CUstream s))   \
    X(cuMemcpyHtoDAsync, "cuMemcpyHtoDAsync_v2", 1,                                                 \
      (CUdeviceptr dst, const void *src, size_t n, CUstream s))                                      \
    X(cuMemcpyDtoHAsync, "cuMemcpyDtoHAsync_v2", 1,                                                 \
      (void *dst, CUdeviceptr src, size_t n, CUstream s))                                            \
    X(cuMemcpyDtoDAsync, "cuMemcpyDtoDAsync_v2", 1,                                                 \
      (CUdeviceptr dst, CUdeviceptr src, size_t n, CUstream s))                                      \
    X(cuStreamCreate, "cuStreamCreate", 1, (CUstream *s, unsigned int flags))                        \
    X(cuStreamDestroy, "cuStreamDestroy_v2", 1, (CUstream s))                                        \
    X(cuStreamSynchronize, "cuStreamSynchronize", 1, (CUstream s))                                   \
    X(cuStreamQuery, "cuStreamQuery", 1, (CUstream s))                                               \
    X(cuEventCreate, "cuEventCreate", 1, (CUevent *e, unsigned int flags))                           \
    X(cuEventDestroy, "cuEventDestroy_v2", 1, (CUevent e))                                           \
    X(cuEventRecord, "cuEventRecord", 1, (CUevent e, CUstream s))                                    \
    X(cuEventQuery, "cuEventQuery", 1, (CUevent e))                                                  \
    X(cuEventSynchronize, "cuEventSynchronize", 1, (CUevent e))                                      \
    X(cuIpcGetMemHandle, "cuIpcGetMemHandle", 1, (CUipcMemHandle *h, CUdeviceptr dptr))              \
    X(cuIpcOpenMemHandle, "cuIpcOpenMemHandle_v2", 1,                                               \
      (CUdeviceptr *dptr, CUipcMemHandle h, unsigned int flags))                                     \
    X(cuIpcCloseMemHandle, "cuIpcCloseMemHandle", 1, (CUdeviceptr dptr))                             \
    X(cuMemAllocAsync, "cuMemAllocAsync", 0, (CUdeviceptr *dptr, size_t bytes, CUstream s))          \
    X(cuMemFreeAsync, "cuMemFreeAsync", 0, (CUdeviceptr dptr, CUstream s))                       \
    /* --- the GPU kernels (src/cuda/kern.c) --- */                            \
    X(cuModuleLoadData, "cuModuleLoadData", 1, (CUmodule *mod, const void *image))                   \
    X(cuModuleUnload, "cuModuleUnload", 1, (CUmodule mod))                                          \
    X(cuModuleGetFunction, "cuModuleGetFunction", 1, (CUfunction *fn, CUmodule mod, const char *name)) \
    X(cuLaunchKernel, "cuLaunchKernel", 1,                                                          \
      (CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by, unsigned bz,  \
       unsigned shmem, CUstream s, void **params, void **extra))                                    \
    X(cuDeviceGetAttribute, "cuDeviceGetAttribute", 1, (int *value, int attrib, CUdevice dev))      \
    X(cuCtxGetDevice, "cuCtxGetDevice", 1, (CUdevice *dev))                                         \
    X(cuMemcpyHtoD, "cuMemcpyHtoD_v2", 1, (CUdeviceptr dst, const void *src, size_t n))             \
    X(cuCtxGetId, "cuCtxGetId", 0, (CUcontext ctx, unsigned long long *id))

/* --- types and values of the kernel functions above --- */
typedef struct CUmod_st *CUmodule;
typedef struct CUfunc_st *CUfunction;
#define UMPI_CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT 16
#define UMPI_CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR 75
#define UMPI_CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR 76

struct umpi_cuda_driver {
#define UMPI__CUDA_FN_PTR(name, sym, req, params) CUresult (*name) params;
    UMPI_CUDA_FUNCTIONS(UMPI__CUDA_FN_PTR)
#undef UMPI__CUDA_FN_PTR
};

/* The table in use; all NULL while CUDA is not active. */
extern struct umpi_cuda_driver umpi_cuda_drv;

#endif /* UMPI_CUDA_DRV_H */
