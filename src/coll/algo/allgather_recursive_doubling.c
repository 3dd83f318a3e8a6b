/*
 * Allgather, recursive doubling (p a power of two): in round k member r exchanges the 2^k blocks
 * it holds (those of its aligned group of 2^k ranks) with r XOR 2^k, straight in recvbuf.
 * log2 p rounds, the last one moving half the result.
 */
#include "c1_blocks.h"

int umpi_allgather_recursive_doubling_usable(const umpi_coll_view_t *v, const umpi_coll_args_t *a)
{
    (void) a;
    return (v->size & (v->size - 1)) == 0;
}

UMPI_COLL_ALGO(umpi_allgather_recursive_doubling)
{
    int p = v->size, r = v->rank;
    if (a->sbuf != MPI_IN_PLACE)
        UMPI_COLL_TRY(umpi_sched_copy(s, a->sbuf, a->scount, a->sdt, umpi_c1_block(a->rbuf, r, a->rcount, a->rdt),
                                      a->rcount, a->rdt));
    UMPI_COLL_TRY(umpi_sched_fence(s));
    for (int mask = 1; mask < p; mask <<= 1) {
        int peer = r ^ mask, mine = r & ~(mask - 1), theirs = peer & ~(mask - 1);
        MPI_Count n = (MPI_Count) mask * a->rcount;
        UMPI_COLL_TRY(umpi_sched_recv(s, v, peer, umpi_c1_block(a->rbuf, theirs, a->rcount, a->rdt), n, a->rdt));
        UMPI_COLL_TRY(umpi_sched_send(s, v, peer, umpi_c1_block(a->rbuf, mine, a->rcount, a->rdt), n, a->rdt));
        UMPI_COLL_TRY(umpi_sched_fence(s));
    }
    return MPI_SUCCESS;
}
