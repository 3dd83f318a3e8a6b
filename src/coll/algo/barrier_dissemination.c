/*
 * Barrier, dissemination: in round k every member signals member (rank + 2^k) mod p and waits for
 * member (rank - 2^k) mod p; after ceil(log2 p) rounds each has heard, transitively, from all.
 */
#include "coll/umpi_coll.h"

UMPI_COLL_BUILD(umpi_barrier_dissemination)
{
    (void) a;
    umpi_dtype_t *byte = umpi_dtype_get(MPI_BYTE);
    int p = v->size, r = v->rank, err = MPI_SUCCESS;
    for (int k = 1; k < p && err == MPI_SUCCESS; k <<= 1) {
        err = umpi_sched_recv(s, v, (r - k + p) % p, NULL, 0, byte);
        if (err == MPI_SUCCESS)
            err = umpi_sched_send(s, v, (r + k) % p, NULL, 0, byte);
        if (err == MPI_SUCCESS)
            err = umpi_sched_fence(s);
    }
    return err;
}
