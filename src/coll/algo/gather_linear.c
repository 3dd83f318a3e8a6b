/*
 * Gather, linear: every member sends its block straight to the root, which posts all p - 1
 * receives at once into their places in recvbuf. One round; the root takes p - 1 messages.
 */
#include "blocks.h"

UMPI_COLL_BUILD(umpi_gather_linear)
{
    int p = v->size, root = a->root;
    if (v->rank != root)
        return umpi_sched_send(s, v, root, a->sbuf, a->scount, a->sdt);
    for (int i = 0; i < p; i++) {
        void *dst = umpi_coll_block(a->rbuf, i, a->rcount, a->rdt);
        if (i != root)
            UMPI_COLL_TRY(umpi_sched_recv(s, v, i, dst, a->rcount, a->rdt));
        else if (a->sbuf != MPI_IN_PLACE)
            UMPI_COLL_TRY(umpi_sched_copy(s, a->sbuf, a->scount, a->sdt, dst, a->rcount, a->rdt));
    }
    return MPI_SUCCESS;
}
