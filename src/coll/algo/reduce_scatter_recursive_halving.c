/*
 * Reduce_scatter (and _block), recursive halving: after folding to a power of two of members
 * (umpi_coll.h), each round exchanges half of the remaining range of blocks with the partner
 * across it and keeps reducing the other half, until every new rank holds its own blocks; a
 * folded pair's odd member then hands its even neighbour its block. log2 p latencies and
 * (p - 1) / p of the vector per member. Commutative ops only.
 */
#include "coll/umpi_coll.h"

UMPI_COLL_BUILD(umpi_reduce_scatter_recursive_halving)
{
    int p = v->size, r = v->rank;
    umpi_dtype_t *dt = a->sdt;
    const void *in = a->sbuf == MPI_IN_PLACE ? a->rbuf : a->sbuf;
    int pof2 = 1 << umpi_coll_log2(p), rem = p - pof2, newrank;
    MPI_Count *odisp = umpi_coll_counts(s, p + 1), *disp = umpi_coll_counts(s, pof2 + 1);
    if (odisp == NULL || disp == NULL)
        return umpi_err_create(MPI_ERR_OTHER, "out of memory building a reduce_scatter");
    odisp[0] = 0;
    for (int i = 0; i < p; i++)
        odisp[i + 1] = odisp[i] + umpi_coll_rs_count(a, i);
    for (int i = 0; i <= pof2; i++)
        disp[i] = odisp[i < rem ? 2 * i : i + rem]; /* new rank i's blocks start with its first member's */
    MPI_Count n = odisp[p], mine = odisp[r + 1] - odisp[r];
    if (p == 1)
        return a->sbuf == MPI_IN_PLACE ? MPI_SUCCESS : umpi_sched_copy(s, in, n, dt, a->rbuf, n, dt);

    void *buf = umpi_sched_buf_dt(s, n, dt), *tmp = umpi_sched_buf_dt(s, n, dt);
    if (buf == NULL || tmp == NULL)
        return umpi_err_create(MPI_ERR_OTHER, "out of memory for a %lld-element reduce_scatter", (long long) n);
    UMPI_COLL_TRY(umpi_sched_copy(s, in, n, dt, buf, n, dt));
    UMPI_COLL_TRY(umpi_coll_fold(s, v, buf, tmp, n, dt, a->op, rem, &newrank));
    if (newrank < 0) /* folded in: my block comes back from the member I sent to */
        return umpi_sched_recv(s, v, r + 1, a->rbuf, mine, a->rdt);
    UMPI_COLL_TRY(umpi_coll_halving(s, v, buf, tmp, disp, pof2, rem, newrank, dt, a->op));
    if (r < 2 * rem)
        UMPI_COLL_TRY(umpi_sched_send(s, v, r - 1, umpi_coll_at(buf, odisp[r - 1], dt), odisp[r] - odisp[r - 1], dt));
    return umpi_sched_copy(s, umpi_coll_at(buf, odisp[r], dt), mine, dt, a->rbuf, mine, a->rdt);
}
