/*
 * Allgather, ring: each member puts its block in place, then in round k (k = 0 .. p - 2) sends
 * block (rank - k) to rank + 1 and receives block (rank - k - 1) from rank - 1, straight into
 * recvbuf. p - 1 rounds of one block: bandwidth-optimal, latency linear in p.
 */
#include "blocks.h"

UMPI_COLL_BUILD(umpi_allgather_ring)
{
    int p = v->size, r = v->rank;
    if (a->sbuf != MPI_IN_PLACE)
        UMPI_COLL_TRY(umpi_sched_copy(s, a->sbuf, a->scount, a->sdt, umpi_coll_block(a->rbuf, r, a->rcount, a->rdt),
                                      a->rcount, a->rdt));
    UMPI_COLL_TRY(umpi_sched_fence(s));
    for (int k = 0; k < p - 1; k++) {
        int sb = (r - k + p) % p, rb = (r - k - 1 + p) % p;
        UMPI_COLL_TRY(umpi_sched_recv(s, v, (r - 1 + p) % p, umpi_coll_block(a->rbuf, rb, a->rcount, a->rdt), a->rcount,
                                      a->rdt));
        UMPI_COLL_TRY(umpi_sched_send(s, v, (r + 1) % p, umpi_coll_block(a->rbuf, sb, a->rcount, a->rdt), a->rcount,
                                      a->rdt));
        UMPI_COLL_TRY(umpi_sched_fence(s));
    }
    return MPI_SUCCESS;
}
