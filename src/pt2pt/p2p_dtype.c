/*
 * How UCX sees the data of a non-contiguous datatype (contiguous data is handled inline by the
 * callers: bytes at buf + true_lb, zero-copy):
 *
 *   few large blocks  (<= UMPI_DTYPE_IOV_MAX blocks, >= UMPI_DTYPE_IOV_MIN_BLOCK bytes on average)
 *                     -> an iov list of the blocks in the user's buffer: UCX moves them, nothing
 *                        is packed; the list hangs on req->tmp until the request is released
 *   anything else     -> the UCX generic datatype (ucx_dtype.c): the engine packs or unpacks each
 *                        fragment at its offset, with no copy of the whole message
 */
#include "pt2pt/umpi_p2p.h"
#include "core/umpi_knobs.h"

#include <stdlib.h>

/* The blocks of count elements, or 0 when there are more than max of them. */
static MPI_Count umpi__blocks(const umpi_dtype_t *dt, MPI_Count count, MPI_Count max)
{
    MPI_Count per = 0;
    if (dt->builtin)
        per = dt->nblocks;
    else
        for (MPI_Count k = 0; k < dt->nops && per <= max; k++)
            per += dt->ops[k].count * dt->loop_count;
    return per > 0 && per * count <= max ? per * count : 0;
}

static ucp_dt_iov_t *umpi__iov(const umpi_dtype_t *dt, const void *buf, MPI_Count count, MPI_Count nblocks,
                               size_t *n)
{
    ucp_dt_iov_t *iov = malloc((size_t) nblocks * sizeof(*iov));
    if (iov == NULL)
        return NULL;
    size_t i = 0;
    MPI_Count loop = dt->builtin ? 1 : dt->loop_count;
    for (MPI_Count e = 0; e < count * loop; e++) {
        const char *base = (const char *) buf + (e / loop) * dt->extent + (e % loop) * (dt->builtin ? 0 : dt->loop_stride);
        MPI_Count nops = dt->builtin ? dt->nblocks : dt->nops;
        for (MPI_Count k = 0; k < nops; k++) {
            MPI_Aint disp = dt->builtin ? dt->blocks[k].disp : dt->ops[k].disp;
            MPI_Aint len = dt->builtin ? dt->blocks[k].len : dt->ops[k].len;
            MPI_Count reps = dt->builtin ? 1 : dt->ops[k].count;
            MPI_Aint stride = dt->builtin ? 0 : dt->ops[k].stride;
            for (MPI_Count j = 0; j < reps; j++) {
                const char *p = base + disp + j * stride;
                if (i > 0 && (const char *) iov[i - 1].buffer + iov[i - 1].length == p)
                    iov[i - 1].length += (size_t) len; /* the next element continues the block */
                else
                    iov[i++] = (ucp_dt_iov_t) {(void *) p, (size_t) len};
            }
        }
    }
    *n = i;
    return iov;
}

int umpi_p2p_dt_target(umpi_request_t *r, size_t bytes, void **data, size_t *len, ucp_datatype_t *udt)
{
    MPI_Count max = umpi_config.dtype_iov_max;
    MPI_Count nblocks = max > 0 ? umpi__blocks(r->dt, r->count, max) : 0;
    if (nblocks > 0 && bytes >= (size_t) nblocks * umpi_config.dtype_iov_min_block) {
        size_t n;
        ucp_dt_iov_t *iov = umpi__iov(r->dt, r->buf, r->count, nblocks, &n);
        if (iov == NULL)
            return umpi_err_create(MPI_ERR_OTHER, "out of memory describing %ld blocks", (long) nblocks);
        free(r->tmp); /* a persistent request's list from its previous start */
        r->tmp = iov;
        *data = iov;
        *len = n;
        *udt = UMPI_UCX_DT_IOV;
        umpi_debug(3, "datatype %s: %zu bytes as %zu iov blocks", r->dt->name[0] ? r->dt->name : "(derived)",
                   bytes, n);
        return MPI_SUCCESS;
    }
    *data = r;
    *len = 1;
    *udt = umpi_ucx.dt_generic;
    umpi_debug(3, "datatype %s: %zu bytes packed piece by piece (UCX generic datatype)",
               r->dt->name[0] ? r->dt->name : "(derived)", bytes);
    return MPI_SUCCESS;
}
