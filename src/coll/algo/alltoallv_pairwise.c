/*
 * Alltoallv (and alltoallw, which shares it), pairwise exchange: p - 1 rounds; in round k member
 * r exchanges with r XOR k (p a power of two) or sends to r + k and receives from r - k. Each
 * block has its own count, displacement (and datatype). With MPI_IN_PLACE the blocks are first
 * packed aside.
 */
#include "blocks.h"

#include <stdlib.h>

UMPI_COLL_BUILD(umpi_alltoallv_pairwise)
{
    int p = v->size, r = v->rank, pow2 = (p & (p - 1)) == 0;
    umpi_coll_blk_t *sb = malloc((size_t) p * sizeof(*sb));
    if (sb == NULL)
        return umpi_coll_nomem("an alltoallv");
    int err = umpi_coll_alltoallv_sources(s, v, a, sb);
    if (err == MPI_SUCCESS && a->sbuf != MPI_IN_PLACE) {
        umpi_coll_blk_t me = umpi_coll_rblk(a, r);
        err = umpi_sched_copy(s, sb[r].buf, sb[r].count, sb[r].dt, me.buf, me.count, me.dt);
    }
    if (err == MPI_SUCCESS)
        err = umpi_sched_fence(s);
    for (int k = 1; k < p && err == MPI_SUCCESS; k++) {
        int to = pow2 ? r ^ k : (r + k) % p, from = pow2 ? r ^ k : (r - k + p) % p;
        umpi_coll_blk_t rb = umpi_coll_rblk(a, from);
        err = umpi_sched_recv(s, v, from, rb.buf, rb.count, rb.dt);
        if (err == MPI_SUCCESS)
            err = umpi_sched_send(s, v, to, sb[to].buf, sb[to].count, sb[to].dt);
        if (err == MPI_SUCCESS)
            err = umpi_sched_fence(s);
    }
    free(sb);
    return err;
}
