/*
 * Reduce_scatter (and _block), ring: p - 1 steps; in step k member r passes its running sum of
 * block r - k - 1 to r + 1 and folds the block r - k - 2 it gets from r - 1 into its own copy, so
 * that the last step completes block r. Each member sends (p - 1) / p of the vector: the
 * bandwidth-optimal choice for large vectors. Ring order, so commutative ops only.
 */
#include "coll/umpi_coll.h"

UMPI_COLL_BUILD(umpi_reduce_scatter_ring)
{
    int p = v->size, r = v->rank;
    umpi_dtype_t *dt = a->sdt;
    const void *in = a->sbuf == MPI_IN_PLACE ? a->rbuf : a->sbuf;
    MPI_Count *disp = umpi_coll_counts(s, p + 1), most = 0;
    if (disp == NULL)
        return umpi_err_create(MPI_ERR_OTHER, "out of memory building a reduce_scatter");
    disp[0] = 0;
    for (int i = 0; i < p; i++) {
        MPI_Count c = umpi_coll_rs_count(a, i);
        disp[i + 1] = disp[i] + c;
        most = c > most ? c : most;
    }
    if (p == 1)
        return a->sbuf == MPI_IN_PLACE ? MPI_SUCCESS : umpi_sched_copy(s, in, disp[1], dt, a->rbuf, disp[1], dt);

    void *buf = umpi_sched_buf_dt(s, disp[p], dt), *tmp = umpi_sched_buf_dt(s, most, dt);
    if (buf == NULL || tmp == NULL)
        return umpi_err_create(MPI_ERR_OTHER, "out of memory for a %lld-element reduce_scatter",
                               (long long) disp[p]);
    UMPI_COLL_TRY(umpi_sched_copy(s, in, disp[p], dt, buf, disp[p], dt));
    int next = (r + 1) % p, prev = (r - 1 + p) % p;
    for (int k = 0; k < p - 1; k++) {
        int sb = (r - k - 1 + 2 * p) % p, rb = (r - k - 2 + 2 * p) % p;
        MPI_Count rn = disp[rb + 1] - disp[rb];
        UMPI_COLL_TRY(umpi_sched_recv(s, v, prev, tmp, rn, dt));
        UMPI_COLL_TRY(umpi_sched_send(s, v, next, umpi_coll_at(buf, disp[sb], dt), disp[sb + 1] - disp[sb], dt));
        UMPI_COLL_TRY(umpi_sched_fence(s));
        UMPI_COLL_TRY(umpi_sched_reduce(s, tmp, umpi_coll_at(buf, disp[rb], dt), rn, dt, a->op));
    }
    MPI_Count mine = disp[r + 1] - disp[r];
    return umpi_sched_copy(s, umpi_coll_at(buf, disp[r], dt), mine, dt, a->rbuf, mine, a->rdt);
}
