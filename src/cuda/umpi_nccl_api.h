/*
 * NCCL's binary interface as umpi calls it: the types and values of NCCL 2's nccl.h (stable since
 * 2.10) and the functions umpi looks up, declared here so that nothing needs nccl.h at build time
 * (src/cuda/nccl.c opens libnccl.so.2 with dlopen). No umpi headers: the fake NCCL
 * (test/fakecuda/fakenccl.c) implements these same declarations.
 */
#ifndef UMPI_NCCL_API_H
#define UMPI_NCCL_API_H

#include "cuda/umpi_cuda_drv.h"

#include <stddef.h>

typedef struct ncclComm *ncclComm_t;
#define UMPI_NCCL_UNIQUE_ID_BYTES 128
typedef struct {
    char internal[UMPI_NCCL_UNIQUE_ID_BYTES];
} ncclUniqueId;

typedef int ncclResult_t; /* an enum in nccl.h */
enum {
    UMPI_NCCL_SUCCESS = 0,
    UMPI_NCCL_UNHANDLED_CUDA_ERROR = 1,
    UMPI_NCCL_SYSTEM_ERROR = 2,
    UMPI_NCCL_INTERNAL_ERROR = 3,
    UMPI_NCCL_INVALID_ARGUMENT = 4,
    UMPI_NCCL_INVALID_USAGE = 5,
    UMPI_NCCL_REMOTE_ERROR = 6,
    UMPI_NCCL_IN_PROGRESS = 7,
};

/* ncclDataType_t and ncclRedOp_t values (NCCL 2.10 and later). */
typedef int ncclDataType_t;
enum {
    UMPI_NCCL_INT8 = 0, UMPI_NCCL_UINT8 = 1, UMPI_NCCL_INT32 = 2, UMPI_NCCL_UINT32 = 3, UMPI_NCCL_INT64 = 4,
    UMPI_NCCL_UINT64 = 5, UMPI_NCCL_FLOAT16 = 6, UMPI_NCCL_FLOAT32 = 7, UMPI_NCCL_FLOAT64 = 8,
    UMPI_NCCL_BFLOAT16 = 9,
};
typedef int ncclRedOp_t;
enum { UMPI_NCCL_SUM = 0, UMPI_NCCL_PROD = 1, UMPI_NCCL_MAX = 2, UMPI_NCCL_MIN = 3 };

/* ncclGetVersion's code for 2.10.0 (major * 10000 + minor * 100 + patch since 2.9): the oldest
 * accepted, the first with bfloat16 and the values above. */
#define UMPI_NCCL_MIN_VERSION 21000

/* The NCCL functions: X(name, required, (parameters)). required = 0: NULL when absent. */
#define UMPI_NCCL_FUNCTIONS(X)                                                                      \
    X(ncclGetVersion, 1, (int *version))                                                           \
    X(ncclGetUniqueId, 1, (ncclUniqueId *id))                                                      \
    X(ncclCommInitRank, 1, (ncclComm_t *comm, int nranks, ncclUniqueId id, int rank))              \
    X(ncclCommDestroy, 1, (ncclComm_t comm))                                                       \
    X(ncclCommAbort, 1, (ncclComm_t comm))                                                         \
    X(ncclCommGetAsyncError, 1, (ncclComm_t comm, ncclResult_t *async_error))                      \
    X(ncclAllReduce, 1, (const void *sbuf, void *rbuf, size_t count, ncclDataType_t type,          \
                         ncclRedOp_t op, ncclComm_t comm, CUstream stream))                        \
    X(ncclBroadcast, 1, (const void *sbuf, void *rbuf, size_t count, ncclDataType_t type, int root, \
                         ncclComm_t comm, CUstream stream))                                        \
    X(ncclReduce, 1, (const void *sbuf, void *rbuf, size_t count, ncclDataType_t type,             \
                      ncclRedOp_t op, int root, ncclComm_t comm, CUstream stream))                 \
    X(ncclAllGather, 1, (const void *sbuf, void *rbuf, size_t sendcount, ncclDataType_t type,      \
                         ncclComm_t comm, CUstream stream))                                        \
    X(ncclReduceScatter, 1, (const void *sbuf, void *rbuf, size_t recvcount, ncclDataType_t type,  \
                             ncclRedOp_t op, ncclComm_t comm, CUstream stream))

#endif /* UMPI_NCCL_API_H */
