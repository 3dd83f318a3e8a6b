/*
 * Broadcast, flat: the root sends the whole message to every other member in one round; nobody
 * forwards. p - 1 sends at the root against binomial's log2 p, but every receiver depends on the
 * root alone: when ranks outnumber cores, a binomial receiver also waits for its forwarding
 * parent to get a core, a hand-off of about 1.5 us on a 2-core machine (bench/NOTES.md, "small
 * collectives, per-call overhead and oversubscribed bcast/alltoall").
 */
#include "coll/umpi_coll.h"

UMPI_COLL_BUILD(umpi_bcast_linear)
{
    int p = v->size, root = a->root;
    if (v->rank != root)
        return umpi_sched_recv(s, v, root, a->rbuf, a->rcount, a->rdt);
    /* the members after the root first, as binomial's nearest children are */
    for (int k = 1; k < p; k++)
        UMPI_COLL_TRY(umpi_sched_send(s, v, (root + k) % p, a->rbuf, a->rcount, a->rdt));
    return MPI_SUCCESS;
}
