/*
 * Scatter, linear: the root posts p - 1 sends at once, each from its block of sendbuf; the others
 * receive theirs. One round; the root sends p - 1 messages.
 */
#include "blocks.h"

UMPI_COLL_BUILD(umpi_scatter_linear)
{
    int p = v->size, root = a->root;
    if (v->rank != root)
        return umpi_sched_recv(s, v, root, a->rbuf, a->rcount, a->rdt);
    for (int i = 0; i < p; i++) {
        const void *src = umpi_coll_block(a->sbuf, i, a->scount, a->sdt);
        if (i != root)
            UMPI_COLL_TRY(umpi_sched_send(s, v, i, src, a->scount, a->sdt));
        else if (a->rbuf != MPI_IN_PLACE)
            UMPI_COLL_TRY(umpi_sched_copy(s, src, a->scount, a->sdt, a->rbuf, a->rcount, a->rdt));
    }
    return MPI_SUCCESS;
}
