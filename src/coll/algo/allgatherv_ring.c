/*
 * Allgatherv, ring: as the allgather ring, each block with its own count and displacement: in
 * round k member r sends block (r - k) to r + 1 and receives block (r - k - 1) from r - 1.
 * p - 1 rounds.
 */
#include "blocks.h"

UMPI_COLL_BUILD(umpi_allgatherv_ring)
{
    int p = v->size, r = v->rank;
    if (a->sbuf != MPI_IN_PLACE) {
        umpi_coll_blk_t me = umpi_coll_rblk(a, r);
        UMPI_COLL_TRY(umpi_sched_copy(s, a->sbuf, a->scount, a->sdt, me.buf, me.count, me.dt));
    }
    UMPI_COLL_TRY(umpi_sched_fence(s));
    for (int k = 0; k < p - 1; k++) {
        umpi_coll_blk_t sb = umpi_coll_rblk(a, (r - k + p) % p), rb = umpi_coll_rblk(a, (r - k - 1 + p) % p);
        UMPI_COLL_TRY(umpi_sched_recv(s, v, (r - 1 + p) % p, rb.buf, rb.count, rb.dt));
        UMPI_COLL_TRY(umpi_sched_send(s, v, (r + 1) % p, sb.buf, sb.count, sb.dt));
        UMPI_COLL_TRY(umpi_sched_fence(s));
    }
    return MPI_SUCCESS;
}
