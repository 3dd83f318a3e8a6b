/*
 * Allgatherv, linear: every member posts its block to each of the others and all p - 1 receives
 * at once, in one round. Fewest rounds; each member sends its block p - 1 times.
 */
#include "blocks.h"

UMPI_COLL_BUILD(umpi_allgatherv_linear)
{
    int p = v->size, r = v->rank;
    umpi_coll_blk_t me = umpi_coll_rblk(a, r);
    const void *src = a->sbuf;
    MPI_Count scount = a->scount;
    umpi_dtype_t *sdt = a->sdt;
    if (a->sbuf != MPI_IN_PLACE) {
        UMPI_COLL_TRY(umpi_sched_copy(s, a->sbuf, a->scount, a->sdt, me.buf, me.count, me.dt));
    } else {
        src = me.buf;
        scount = me.count;
        sdt = me.dt;
    }
    for (int k = 1; k < p; k++) {
        int from = (r - k + p) % p;
        umpi_coll_blk_t rb = umpi_coll_rblk(a, from);
        UMPI_COLL_TRY(umpi_sched_recv(s, v, from, rb.buf, rb.count, rb.dt));
        UMPI_COLL_TRY(umpi_sched_send(s, v, (r + k) % p, src, scount, sdt));
    }
    return MPI_SUCCESS;
}
