/*
 * Collective steps on device buffers (device_stage.c). A schedule step whose buffer is device memory is
 * marked when it is built (umpi_sched.h's steps classify their buffers on a GPU machine); running
 * it, the CPU never touches that buffer:
 *
 *   send     the data is copied (packed) to a host bounce of the step, which goes on the wire
 *   receive  the message lands in the bounce; copied (unpacked) to the device when it completed
 *   copy     a driver copy (both contiguous), else packed and unpacked through host memory
 *   reduce   both operands copied to host memory, reduced by the CPU kernels, the result copied
 *            back: the seam where GPU reduction kernels go (counted: reduce_staged)
 *
 * Messages stay ordinary host messages on the collective context: every algorithm, blocking,
 * nonblocking and persistent, works on device buffers unchanged.
 */
#ifndef UMPI_COLL_DEVICE_H
#define UMPI_COLL_DEVICE_H

#include "coll/umpi_coll.h"
#include "core/umpi_obj.h"
#include "core/umpi_op.h"
#include "cuda/umpi_cuda.h"

#define UMPI_COLL_DEV_IN 0x1  /* the step reads device memory */
#define UMPI_COLL_DEV_OUT 0x2 /* the step writes device memory */

/* UMPI_COLL_DEV_IN/OUT (`flag`) when count x dt at buf is in device memory, else 0; an MPI error
 * code in *err when the buffer cannot be classified. Only called on a GPU machine. */
int umpi_coll_dev_flag(const void *buf, MPI_Count count, const umpi_dtype_t *dt, int flag, int *err);

/* The local steps with device operands (flags: which ones). MPI error codes. */
int umpi_coll_dev_reduce(const umpi_op_t *op, const void *in, void *inout, MPI_Count count, umpi_dtype_t *dt,
                         int flags);
int umpi_coll_dev_copy(const void *src, MPI_Count scount, umpi_dtype_t *sdt, void *dst, MPI_Count rcount,
                       umpi_dtype_t *rdt, int flags);
/* Packed bytes between a typed device buffer and a host bounce (send and receive steps). */
int umpi_coll_dev_pack(const void *buf, MPI_Count count, umpi_dtype_t *dt, void *bounce);
int umpi_coll_dev_unpack(void *buf, MPI_Count count, umpi_dtype_t *dt, const void *bounce, size_t bytes);

/*
 * Small blocking collectives on device buffers run whole on host copies (device.c): every device
 * buffer the call reads is copied out of the GPU at once (pinned staging, one wait), the host
 * collective runs on the copies (the same algorithms, the fast paths of host calls included), and
 * what it wrote is copied back (one more wait): two round trips to the GPU per call, where the
 * schedule's per-step staging makes one per step. For intracommunicators, the kinds with one
 * block per buffer or per process (allreduce, reduce, bcast, allgather, alltoall, gather,
 * scatter, reduce_scatter_block, scan, exscan), contiguous datatypes without gaps, at most
 * UMPI_CUDA_COLL_STAGE_MAX bytes of buffers at this process. Each process decides for itself
 * (the messages are the same host messages either way).
 *
 * The caller (post.c) runs the host collective between the two halves:
 * umpi_coll_dev_whole_begin returns 1 when the call goes this way: either failed already (*err
 * set, nothing to end) or with *h the call on host copies, to be run and then handed with its
 * result to umpi_coll_dev_whole_end (copies back, frees the copies: the call's MPI error code).
 * It returns 0 otherwise, with *host_only 1 when every buffer of the call is host memory (the
 * caller may take the host-only fast paths), else 0.
 */
typedef struct {
    void *sh, *rh;          /* the host copies (pinned bounce buffers) */
    size_t sbytes, rbytes;  /* their sizes */
    char *rdata;            /* the device receive buffer to copy back to, rout bytes */
    size_t rout;
    int running;            /* the host call was handed out */
} umpi_coll_dev_whole_t;
int umpi_coll_dev_whole_begin(umpi_coll_args_t *a, int mode, int *host_only, umpi_coll_dev_whole_t *wh,
                              umpi_coll_args_t *h, int *err);
int umpi_coll_dev_whole_end(umpi_coll_dev_whole_t *wh, int err);

/* ---- within one node through CUDA IPC (device_ipc.c) ---------------------------------------------- */

/*
 * Blocking allreduce, reduce, bcast, allgather, allgatherv and alltoall on an intracommunicator
 * whose members share a node: when every member's buffers are device memory CUDA IPC can export
 * (agreed by one small host allgather), the members copy and reduce straight between each
 * other's GPU buffers instead of running the schedule above. Returns 1 when the call was done
 * here (*err its MPI error code), 0 when the caller runs the usual schedule (every member gets 0
 * together). The one entry from umpi_coll_post; only called when CUDA is active. Knobs:
 * UMPI_CUDA_COLL_IPC=0|1|auto, UMPI_CUDA_COLL_IPC_MIN.
 */
struct umpi_coll_args;
struct umpi_coll_comm;
int umpi_coll_ipc_try(const struct umpi_coll_args *a, struct umpi_coll_comm *cc, int mode, int *err);
/* 0 when UMPI_CUDA_COLL_IPC=0 (then NCCL may serve one node too). */
int umpi_coll_ipc_enabled(void);

/* ---- collectives on device buffers run whole: CUDA IPC or NCCL ---- */

/*
 * The one entry from umpi_coll_post, on a GPU machine, before any algorithm is chosen: 1 when the
 * call was run here (its MPI error code in *err), 0 to go on with the schedules (every process of
 * the communicator answers the same). One node: umpi_coll_ipc_try; else NCCL (src/coll/nccl.c).
 */
int umpi_coll_dev_offload(umpi_coll_args_t *a, umpi_coll_comm_t *cc, int mode, int *err);
/* NCCL's part of it, and the release of a communicator's NCCL state (umpi_coll_comm_free). */
struct umpi_coll_nccl;
int umpi_coll_nccl_run(umpi_coll_args_t *a, int mode, int *err);
void umpi_coll_nccl_free(struct umpi_coll_nccl *n);

#endif /* UMPI_COLL_DEVICE_H */
