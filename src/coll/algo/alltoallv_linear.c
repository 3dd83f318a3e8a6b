/*
 * Alltoallv (and alltoallw, which shares it), linear: all p - 1 receives and sends posted at once,
 * each block with its own count, displacement (and datatype); the own block copied locally.
 * With MPI_IN_PLACE the blocks are first packed aside.
 */
#include "blocks.h"

#include <stdlib.h>

UMPI_COLL_BUILD(umpi_alltoallv_linear)
{
    int p = v->size, r = v->rank;
    umpi_coll_blk_t *sb = malloc((size_t) p * sizeof(*sb));
    if (sb == NULL)
        return umpi_coll_nomem("an alltoallv");
    int err = umpi_coll_alltoallv_sources(s, v, a, sb);
    if (err == MPI_SUCCESS && a->sbuf != MPI_IN_PLACE) {
        umpi_coll_blk_t me = umpi_coll_rblk(a, r);
        err = umpi_sched_copy(s, sb[r].buf, sb[r].count, sb[r].dt, me.buf, me.count, me.dt);
    }
    for (int k = 1; k < p && err == MPI_SUCCESS; k++) {
        int to = (r + k) % p, from = (r - k + p) % p;
        umpi_coll_blk_t rb = umpi_coll_rblk(a, from);
        err = umpi_sched_recv(s, v, from, rb.buf, rb.count, rb.dt);
        if (err == MPI_SUCCESS)
            err = umpi_sched_send(s, v, to, sb[to].buf, sb[to].count, sb[to].dt);
    }
    free(sb);
    return err;
}
