/*
 * Puts and gets within a node straight into a device window through CUDA IPC (umpi_rma.h, "Device
 * memory"): the origin maps the target's window memory once and copies between its own buffer
 * (host or device) and the mapping with driver copies; nothing runs at the target.
 *
 *   MPI_Win_create  some process's memory is device memory (the size allgather says so): every
 *                   process exports its allocation if it can (umpi_cuda_ipc_export), all gather
 *                   { usable, descriptor } (umpi_rma_ipc_rec_t)
 *   put / get       fence or PSCW epoch, one contiguous target block, a contiguous origin type, a
 *                   target on my node with a usable record, UMPI_CUDA_IPC=1: first use opens the
 *                   mapping (the IPC cache: one mapping per allocation, shared with pt2pt), then
 *                   cuMemcpyAsync on my copy stream, not waited for (counted: rma_ipc)
 *   fence           target: umpi_cuda_fence (its legacy-stream writes before the fence are done
 *                   before anyone copies); origin: its copy stream synchronized before the barrier
 *   post / complete post: the target's fence before its notes; complete: the origin's wait first
 *   MPI_Win_free    the mappings released to the cache (closed by its rules: LRU, finalize)
 *
 * Passive target stays on messages: no call of the target orders its own device work with an
 * origin's copies there, and an accumulate must stay atomic against the target's message path.
 */
#include "rma/umpi_rma.h"
#include "core/umpi_err.h"
#include "cuda/umpi_cuda_copy.h"
#include "mpi/gen/umpi_impl.h"
#include "pmi/umpi_pmi.h"

#include <stdlib.h>
#include <string.h>

int umpi_rma_ipc_setup(umpi_win_t *w)
{
    int n = w->comm->size;
    umpi_rma_ipc_rec_t mine, *all = calloc((size_t) n, sizeof(*all));
    w->ipc = calloc((size_t) n, sizeof(*w->ipc));
    if (all == NULL || w->ipc == NULL) {
        free(all);
        return umpi_err_create(MPI_ERR_NO_MEM, "out of memory for the CUDA IPC records of a window of %d ranks", n);
    }
    memset(&mine, 0, sizeof(mine));
    if (w->dev && w->size > 0 && umpi_config.cuda_ipc) {
        int usable = 0;
        umpi_status_t st = umpi_cuda_ipc_export(w->base, (size_t) w->size, &mine.desc, &usable);
        if (st != UMPI_OK) /* not fatal: operations to this process go by message */
            umpi_debug(1, "window 0x%x: no CUDA IPC for its device memory here: %s", (unsigned) w->handle,
                       umpi_status_last_msg());
        mine.usable = st == UMPI_OK && usable;
    }
    int err = umpi_impl_allgather(&mine, sizeof(mine), MPI_BYTE, all, sizeof(mine), umpi_dtype_get(MPI_BYTE),
                                  w->comm, UMPI_COLL_BLOCKING, NULL);
    for (int r = 0; r < n && err == MPI_SUCCESS; r++)
        w->ipc[r].rec = all[r];
    free(all);
    if (mine.usable)
        umpi_debug(1, "window 0x%x: its %ld bytes here are device memory, exported for CUDA IPC: puts and gets "
                   "from this node in fence and PSCW epochs copy straight into it [rma_ipc]", (unsigned) w->handle,
                   (long) w->size);
    return err;
}

/* The target's window base in my mapping, or NULL (then the caller sends a message). */
static char *umpi__mapping(umpi_win_t *w, int target, size_t end, umpi_status_t *st)
{
    umpi_rma_ipc_t *t = &w->ipc[target];
    *st = UMPI_OK;
    if (t->mapped != NULL || t->failed)
        return t->mapped;
    CUstream s;
    void *p = NULL;
    *st = umpi_cuda_copy_stream(&s); /* a current context, which the open needs */
    if (*st == UMPI_OK)
        *st = umpi_cuda_ipc_open(umpi_comm_to_world(w->comm, target), &t->rec.desc, end, &p, &t->ref);
    if (*st != UMPI_OK || p == NULL) { /* refused (counted by the cache as ipc_fallback) */
        t->failed = 1;
        t->ref = NULL;
        return NULL;
    }
    t->mapped = p;
    return t->mapped;
}

int umpi_rma_ipc_copy(umpi_win_t *w, int target, int put, void *local, MPI_Aint addr, size_t len, int *done)
{
    *done = 0;
    if (w->ipc == NULL || !w->ipc[target].rec.usable || !umpi_cuda_active || !umpi_config.cuda_ipc ||
        target == w->comm->rank)
        return MPI_SUCCESS;
    int world = umpi_comm_to_world(w->comm, target), node = umpi_pmi_node_of(world);
    if (node < 0 || node != umpi_pmi_node_of(umpi_global.rank))
        return MPI_SUCCESS;
    umpi_status_t st;
    char *base = umpi__mapping(w, target, (size_t) w->sizes[target], &st);
    if (st != UMPI_OK)
        return umpi_err_from_status(st, "mapping a device window through CUDA IPC");
    if (base == NULL)
        return MPI_SUCCESS;
    CUstream s;
    st = umpi_cuda_copy_stream(&s);
    if (st != UMPI_OK)
        return umpi_err_from_status(st, "one-sided copy through CUDA IPC");
    CUdeviceptr remote = (CUdeviceptr) (uintptr_t) (base + addr), mine = (CUdeviceptr) (uintptr_t) local;
    CUresult r = put ? umpi_cuda_drv.cuMemcpyAsync(remote, mine, len, s)
                     : umpi_cuda_drv.cuMemcpyAsync(mine, remote, len, s);
    if (r != UMPI_CUDA_SUCCESS)
        return umpi_err_from_status(umpi_cuda_fail("cuMemcpyAsync through a CUDA IPC mapping", r),
                                    "one-sided copy through CUDA IPC");
    w->ipc_pending = 1;
    umpi_cuda_stat_hot(UMPI_CUDA_STAT_rma_ipc);
    *done = 1;
    return MPI_SUCCESS;
}

int umpi_rma_ipc_wait(umpi_win_t *w)
{
    if (!w->ipc_pending)
        return MPI_SUCCESS;
    w->ipc_pending = 0;
    CUstream s;
    umpi_status_t st = umpi_cuda_copy_stream(&s);
    if (st == UMPI_OK) {
        CUresult r = umpi_cuda_drv.cuStreamSynchronize(s);
        if (r != UMPI_CUDA_SUCCESS)
            st = umpi_cuda_fail("cuStreamSynchronize after one-sided copies through CUDA IPC", r);
    }
    return st == UMPI_OK ? MPI_SUCCESS : umpi_err_from_status(st, "one-sided copies through CUDA IPC");
}

int umpi_rma_ipc_expose(umpi_win_t *w)
{
    if (w->ipc == NULL || !w->ipc[w->comm->rank].rec.usable)
        return MPI_SUCCESS;
    umpi_status_t st = umpi_cuda_fence();
    return st == UMPI_OK ? MPI_SUCCESS : umpi_err_from_status(st, "fencing device window memory");
}

void umpi_rma_ipc_release(umpi_win_t *w)
{
    if (w->ipc == NULL)
        return;
    for (int r = 0; r < w->comm->size; r++)
        umpi_cuda_ipc_release(w->ipc[r].ref);
    free(w->ipc);
    w->ipc = NULL;
}
