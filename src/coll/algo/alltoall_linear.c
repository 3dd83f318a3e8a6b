/*
 * Alltoall, linear: every member posts all p - 1 receives and p - 1 sends at once (one round), then
 * copies its own block locally. With MPI_IN_PLACE recvbuf is first copied aside.
 */
#include "blocks.h"

UMPI_COLL_BUILD(umpi_alltoall_linear)
{
    int p = v->size, r = v->rank;
    const void *sbuf = a->sbuf;
    MPI_Count sc = a->scount, rc = a->rcount;
    umpi_dtype_t *sdt = a->sdt, *rdt = a->rdt;
    if (sbuf == MPI_IN_PLACE) {
        if (p == 1)
            return MPI_SUCCESS;
        void *tmp = umpi_sched_buf_dt(s, (MPI_Count) p * rc, rdt);
        if (tmp == NULL)
            return umpi_coll_nomem("an in-place alltoall");
        UMPI_COLL_TRY(umpi_sched_copy(s, a->rbuf, (MPI_Count) p * rc, rdt, tmp, (MPI_Count) p * rc, rdt));
        UMPI_COLL_TRY(umpi_sched_fence(s));
        sbuf = tmp;
        sc = rc;
        sdt = rdt;
    }
    for (int k = 1; k < p; k++) {
        int to = (r + k) % p, from = (r - k + p) % p;
        UMPI_COLL_TRY(umpi_sched_recv(s, v, from, umpi_coll_block(a->rbuf, from, rc, rdt), rc, rdt));
        UMPI_COLL_TRY(umpi_sched_send(s, v, to, umpi_coll_block(sbuf, to, sc, sdt), sc, sdt));
    }
    /* my own block after everything is posted: the peers need not wait for the copy */
    if (a->sbuf != MPI_IN_PLACE)
        UMPI_COLL_TRY(umpi_sched_copy(s, umpi_coll_block(sbuf, r, sc, sdt), sc, sdt,
                                      umpi_coll_block(a->rbuf, r, rc, rdt), rc, rdt));
    return MPI_SUCCESS;
}
