/*
 * Alltoall, pairwise exchange: p - 1 rounds; in round k member r exchanges one block with r XOR k
 * when p is a power of two, else sends to r + k and receives from r - k. One message in flight
 * each way per round: good for large blocks. With MPI_IN_PLACE recvbuf is first copied aside.
 */
#include "blocks.h"

UMPI_COLL_BUILD(umpi_alltoall_pairwise)
{
    int p = v->size, r = v->rank, pow2 = (p & (p - 1)) == 0;
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
        sbuf = tmp;
        sc = rc;
        sdt = rdt;
        UMPI_COLL_TRY(umpi_sched_fence(s));
    } else if (p == 1) {
        return umpi_sched_copy(s, sbuf, sc, sdt, a->rbuf, rc, rdt);
    }
    for (int k = 1; k < p; k++) {
        int to = pow2 ? r ^ k : (r + k) % p, from = pow2 ? r ^ k : (r - k + p) % p;
        UMPI_COLL_TRY(umpi_sched_recv(s, v, from, umpi_coll_block(a->rbuf, from, rc, rdt), rc, rdt));
        UMPI_COLL_TRY(umpi_sched_send(s, v, to, umpi_coll_block(sbuf, to, sc, sdt), sc, sdt));
        /* my own block: copied while the first exchange is in flight, not before it starts */
        if (k == 1 && sbuf == a->sbuf)
            UMPI_COLL_TRY(umpi_sched_copy(s, umpi_coll_block(sbuf, r, sc, sdt), sc, sdt,
                                          umpi_coll_block(a->rbuf, r, rc, rdt), rc, rdt));
        UMPI_COLL_TRY(umpi_sched_fence(s));
    }
    return MPI_SUCCESS;
}
