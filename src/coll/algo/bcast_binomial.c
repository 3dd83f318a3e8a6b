/*
 * Broadcast, binomial tree: with ranks renumbered so that the root is 0, member r receives the
 * whole message from r minus its lowest set bit, then sends it on to r + 2^k for every 2^k below
 * that bit. log2 p rounds; the root sends log2 p times.
 */
#include "coll/umpi_coll.h"

UMPI_COLL_BUILD(umpi_bcast_binomial)
{
    int p = v->size, root = a->root;
    int vr = (v->rank - root + p) % p;
    int mask = 1, err = MPI_SUCCESS;
    while (mask < p) {
        if (vr & mask) {
            err = umpi_sched_recv(s, v, (vr - mask + root) % p, a->rbuf, a->rcount, a->rdt);
            if (err == MPI_SUCCESS)
                err = umpi_sched_fence(s);
            break;
        }
        mask <<= 1;
    }
    for (mask >>= 1; mask > 0 && err == MPI_SUCCESS; mask >>= 1)
        if (vr + mask < p)
            err = umpi_sched_send(s, v, (vr + mask + root) % p, a->rbuf, a->rcount, a->rdt);
    return err;
}
