/*
 * Reduce, Rabenseifner: a reduce-scatter by recursive halving (each member ends up with one
 * reduced block of the vector) followed by a binomial gather of the blocks to new rank 0, which
 * passes the vector on to the root when that is another member. Moves about 2n bytes per member
 * instead of n log2 p: the large-message choice. Commutative ops only (halving mixes the order).
 */
#include "coll/umpi_coll.h"

UMPI_COLL_BUILD(umpi_reduce_rabenseifner)
{
    int p = v->size, r = v->rank, root = a->root;
    MPI_Count n = a->scount;
    umpi_dtype_t *dt = a->sdt;
    const void *in = a->sbuf == MPI_IN_PLACE ? a->rbuf : a->sbuf;
    if (p == 1)
        return a->sbuf == MPI_IN_PLACE ? MPI_SUCCESS : umpi_sched_copy(s, a->sbuf, n, dt, a->rbuf, n, dt);

    int pof2 = 1 << umpi_coll_log2(p), rem = p - pof2, newrank;
    void *buf = umpi_sched_buf_dt(s, n, dt), *tmp = umpi_sched_buf_dt(s, n, dt);
    MPI_Count *disp = umpi_coll_counts(s, pof2 + 1);
    if (buf == NULL || tmp == NULL || disp == NULL)
        return umpi_err_create(MPI_ERR_OTHER, "out of memory for a %lld-element reduce", (long long) n);
    umpi_coll_even_blocks(disp, pof2, n);
    UMPI_COLL_TRY(umpi_sched_copy(s, in, n, dt, buf, n, dt));

    UMPI_COLL_TRY(umpi_coll_fold(s, v, buf, tmp, n, dt, a->op, rem, &newrank));
    int top = umpi_coll_fold_member(0, rem);
    if (newrank >= 0) {
        UMPI_COLL_TRY(umpi_coll_halving(s, v, buf, tmp, disp, pof2, rem, newrank, dt, a->op));
        /* binomial gather of the blocks to new rank 0 */
        for (int mask = 1; mask < pof2; mask <<= 1) {
            if (newrank & mask) {
                UMPI_COLL_TRY(umpi_sched_send(s, v, umpi_coll_fold_member(newrank - mask, rem),
                                              umpi_coll_at(buf, disp[newrank], dt),
                                              disp[newrank + mask] - disp[newrank], dt));
                break;
            }
            UMPI_COLL_TRY(umpi_sched_recv(s, v, umpi_coll_fold_member(newrank + mask, rem),
                                          umpi_coll_at(buf, disp[newrank + mask], dt),
                                          disp[newrank + 2 * mask] - disp[newrank + mask], dt));
            UMPI_COLL_TRY(umpi_sched_fence(s));
        }
    }
    UMPI_COLL_TRY(umpi_sched_fence(s));
    if (r == top && r == root)
        return umpi_sched_copy(s, buf, n, dt, a->rbuf, n, a->rdt);
    if (r == top)
        return umpi_sched_send(s, v, root, buf, n, dt);
    if (r == root)
        return umpi_sched_recv(s, v, top, a->rbuf, n, a->rdt);
    return MPI_SUCCESS;
}
