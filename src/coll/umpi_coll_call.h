/*
 * What the MPI collective functions (coll.c, coll_gather_scatter.c, coll_reduce.c,
 * coll_neighbor.c) use to hand a call to the driver (post.c): the collective's engine below them
 * includes only umpi_coll.h.
 */
#ifndef UMPI_COLL_CALL_H
#define UMPI_COLL_CALL_H

#include "coll/umpi_coll.h"

/*
 * Builds the collective described by a on comm and runs it: blocking (request NULL), nonblocking
 * (a started request) or persistent (an inactive request). Called with the big lock held.
 */
int umpi_coll_post(umpi_coll_args_t *a, umpi_coll_mode_t mode, MPI_Request *request);

/* For the MPI functions (coll*.c): the op argument decoded and checked against dt (MPI_ERR_OP). */
int umpi_coll_op_arg(MPI_Op h, const umpi_dtype_t *dt, umpi_op_t **op);

/* MPI_ERR_BUFFER when sendbuf == recvbuf without MPI_IN_PLACE (MPI forbids aliased arguments).
 * Always inline, as umpi_coll_run: every collective call passes through both, and GCC keeps an
 * out-of-line copy in a file that calls them from several places (10 instructions a call). */
static inline __attribute__((always_inline)) int umpi_coll_aliased(const void *sbuf, const void *rbuf,
                                                                   MPI_Count count)
{
    if (umpi_unlikely(sbuf == rbuf && count > 0 && sbuf != NULL))
        return umpi_err_create(MPI_ERR_BUFFER, "sendbuf and recvbuf are the same buffer (%p); use MPI_IN_PLACE",
                               sbuf);
    return MPI_SUCCESS;
}

/* umpi_coll_post under the big lock. */
static inline __attribute__((always_inline)) int umpi_coll_run(umpi_coll_args_t *a, umpi_coll_mode_t mode,
                                                               MPI_Request *request)
{
    umpi_lock();
    int err = umpi_coll_post(a, mode, request);
    umpi_unlock();
    return err;
}

#endif
