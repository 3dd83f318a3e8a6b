/*
 * NCCL, loaded at run time (src/cuda/nccl.c): the collectives on device buffers that NCCL runs
 * whole (src/coll/nccl.c decides when). No build-time dependency: the types and values below are
 * NCCL 2's (umpi_nccl_api.h), and libnccl.so.2 is opened with dlopen.
 *
 *   UMPI_NCCL=0     never load it
 *   UMPI_NCCL=auto  load it at the first collective that could use it; absent or unusable: the
 *                   staged path, silently (UMPI_DEBUG=1 says why)
 *   UMPI_NCCL=1     load it at MPI_Init, which fails with the reason when it cannot be used
 *
 * Every NCCL call goes through umpi_nccl (the table), and every NCCL communicator umpi makes through
 * umpi_nccl_comm_create / _destroy, which keep the list that MPI_Finalize empties before the
 * CUDA contexts go. The NCCL types and values are in umpi_nccl_api.h.
 */
#ifndef UMPI_CUDA_NCCL_H
#define UMPI_CUDA_NCCL_H

#include "core/umpi.h"
#include "cuda/umpi_nccl_api.h"

struct umpi_nccl_lib {
#define UMPI__NCCL_FN_PTR(name, req, params) ncclResult_t (*name) params;
    UMPI_NCCL_FUNCTIONS(UMPI__NCCL_FN_PTR)
#undef UMPI__NCCL_FN_PTR
    /* the two that return strings */
    const char *(*ncclGetErrorString)(ncclResult_t r);
    const char *(*ncclGetLastError)(ncclComm_t comm); /* NCCL 2.13; NULL before */
};
extern struct umpi_nccl_lib umpi_nccl;

/* UMPI_NCCL as understood: 0 never, 1 required, 2 auto. */
int umpi_nccl_mode(void);

/* UMPI_NCCL=1: loads NCCL now (MPI_Init), UMPI_ERR_OTHER with the cause when it cannot be used.
 * Otherwise UMPI_OK without doing anything. */
umpi_status_t umpi_nccl_init(void);

/* 1 when NCCL is loaded and usable (loading it on the first call, once per process); else 0 and
 * *why says why not. */
int umpi_nccl_available(const char **why);

/* For umpi_info (after umpi_cuda_init): whether collectives on device buffers would go to NCCL
 * here, loading it as the first such collective would: "NCCL 2.19.3 (libnccl.so.2): ..." or why
 * not. */
void umpi_nccl_describe(char *buf, size_t len) UMPI_EXPORT;

/* "ncclAllReduce: internal error - please report this issue (the detail NCCL gave)": r's text,
 * with ncclGetLastError's when there is one, into buf. */
const char *umpi_nccl_strerror(ncclResult_t r, ncclComm_t comm, char *buf, size_t len);

/* A communicator of NCCL with the stream umpi launches its collectives on. */
typedef struct umpi_nccl_comm {
    ncclComm_t comm; /* NULL once destroyed (MPI_Finalize) */
    CUstream stream;
    int device;
    int nranks, rank;
    struct umpi_nccl_comm *next, *prev; /* the live ones */
} umpi_nccl_comm_t;

/*
 * Collective over the nranks processes that pass the same id: the NCCL communicator on `device`
 * (its context made current here) and a stream. UMPI_ERR_OTHER with the cause (NCCL's text) when
 * it fails; nothing is left then.
 */
umpi_status_t umpi_nccl_comm_create(const ncclUniqueId *id, int nranks, int rank, int device,
                                    umpi_nccl_comm_t **out);
/* Destroys it (abort: after an error, ncclCommAbort); NULL is a no-op. Local, not collective. */
void umpi_nccl_comm_destroy(umpi_nccl_comm_t *nc, int abort);

/*
 * Waits for what was launched on nc's stream, checking NCCL's asynchronous error while it runs
 * and once more when the stream drained (a peer's failure NCCL detected). The big lock is held;
 * the wait turns the progress engine. UMPI_OK, or UMPI_ERR_OTHER naming `what` and NCCL's or
 * CUDA's reason; after an NCCL error the communicator is aborted (nc->comm NULL).
 */
umpi_status_t umpi_nccl_wait(umpi_nccl_comm_t *nc, const char *what);

/* MPI_Finalize: destroys the NCCL communicators still live (their umpi_nccl_comm_t stay, with
 * comm NULL, for the MPI communicators' own release). */
void umpi_nccl_finalize(void);

#endif /* UMPI_CUDA_NCCL_H */
