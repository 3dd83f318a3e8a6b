/*
 * Reduce_scatter (and _block) as a reduce of the whole vector to member 0 (binomial, in rank order:
 * algo/reduce_binomial.c) followed by member 0 sending each member its block. The choice for
 * non-commutative ops; log2 p rounds of the whole vector plus p - 1 sends from member 0.
 */
#include "coll/umpi_coll.h"

UMPI_COLL_BUILD(umpi_reduce_scatter_reduce_scatterv)
{
    int p = v->size, r = v->rank;
    umpi_dtype_t *dt = a->sdt;
    MPI_Count *disp = umpi_coll_counts(s, p + 1);
    if (disp == NULL)
        return umpi_err_create(MPI_ERR_OTHER, "out of memory building a reduce_scatter");
    disp[0] = 0;
    for (int i = 0; i < p; i++)
        disp[i + 1] = disp[i] + umpi_coll_rs_count(a, i);
    MPI_Count n = disp[p];
    void *all = r == 0 ? umpi_sched_buf_dt(s, n, dt) : NULL;
    if (r == 0 && all == NULL)
        return umpi_err_create(MPI_ERR_OTHER, "out of memory for a %lld-element reduce_scatter", (long long) n);
    umpi_coll_args_t ra = {.kind = UMPI_COLL_REDUCE, .comm = a->comm,
                           .sbuf = a->sbuf == MPI_IN_PLACE ? a->rbuf : a->sbuf, .rbuf = all,
                           .scount = n, .rcount = n, .sdt = dt, .rdt = dt, .op = a->op, .root = 0};
    UMPI_COLL_TRY(umpi_reduce_binomial(s, v, &ra));
    UMPI_COLL_TRY(umpi_sched_fence(s));
    if (r != 0)
        return umpi_sched_recv(s, v, 0, a->rbuf, disp[r + 1] - disp[r], a->rdt);
    for (int i = 1; i < p; i++)
        UMPI_COLL_TRY(umpi_sched_send(s, v, i, umpi_coll_at(all, disp[i], dt), disp[i + 1] - disp[i], dt));
    return umpi_sched_copy(s, all, disp[1], dt, a->rbuf, disp[1], a->rdt);
}
