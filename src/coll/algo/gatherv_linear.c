/*
 * Gatherv, linear: every member sends its block to the root, which posts all p - 1 receives at
 * once, each at its displacement with its own count. One round.
 */
#include "blocks.h"

UMPI_COLL_BUILD(umpi_gatherv_linear)
{
    int p = v->size, root = a->root;
    if (v->rank != root)
        return umpi_sched_send(s, v, root, a->sbuf, a->scount, a->sdt);
    for (int i = 0; i < p; i++) {
        umpi_coll_blk_t r = umpi_coll_rblk(a, i);
        if (i != root)
            UMPI_COLL_TRY(umpi_sched_recv(s, v, i, r.buf, r.count, r.dt));
        else if (a->sbuf != MPI_IN_PLACE)
            UMPI_COLL_TRY(umpi_sched_copy(s, a->sbuf, a->scount, a->sdt, r.buf, r.count, r.dt));
    }
    return MPI_SUCCESS;
}
