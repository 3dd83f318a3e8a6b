/*
 * Allgather, recursive doubling (p a power of two): in round k member r exchanges the 2^k blocks
 * it holds (those of its aligned group of 2^k ranks) with r XOR 2^k, straight in recvbuf.
 * log2 p rounds, the last one moving half the result.
 */
#include "blocks.h"

int umpi_allgather_recursive_doubling_usable(const umpi_coll_view_t *v, const umpi_coll_args_t *a)
{
    (void) a;
    return (v->size & (v->size - 1)) == 0;
}

UMPI_COLL_BUILD(umpi_allgather_recursive_doubling)
{
    int p = v->size, r = v->rank, sep = a->sbuf != MPI_IN_PLACE;
    void *own = umpi_coll_block(a->rbuf, r, a->rcount, a->rdt);
    if (p == 1)
        return sep ? umpi_sched_copy(s, a->sbuf, a->scount, a->sdt, own, a->rcount, a->rdt) : MPI_SUCCESS;
    for (int mask = 1; mask < p; mask <<= 1) {
        int peer = r ^ mask, mine = r & ~(mask - 1), theirs = peer & ~(mask - 1);
        MPI_Count n = (MPI_Count) mask * a->rcount;
        UMPI_COLL_TRY(umpi_sched_recv(s, v, peer, umpi_coll_block(a->rbuf, theirs, a->rcount, a->rdt), n, a->rdt));
        if (mask == 1 && sep) {
            /* the first block goes straight from the send buffer; its copy into place overlaps the
             * exchange instead of preceding it */
            UMPI_COLL_TRY(umpi_sched_send(s, v, peer, a->sbuf, a->scount, a->sdt));
            UMPI_COLL_TRY(umpi_sched_copy(s, a->sbuf, a->scount, a->sdt, own, a->rcount, a->rdt));
        } else {
            UMPI_COLL_TRY(umpi_sched_send(s, v, peer, umpi_coll_block(a->rbuf, mine, a->rcount, a->rdt), n, a->rdt));
        }
        UMPI_COLL_TRY(umpi_sched_fence(s));
    }
    return MPI_SUCCESS;
}
