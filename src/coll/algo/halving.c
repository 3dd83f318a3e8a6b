/*
 * Building blocks of Rabenseifner's algorithms (reduce, allreduce, reduce_scatter): recursive
 * halving (a reduce-scatter in log2 pof2 rounds, each moving half of what the last one did) and
 * recursive doubling allgather, both among the pof2 "new ranks" left after folding (umpi_coll.h).
 */
#include "coll/umpi_coll.h"

int umpi_coll_commutative(const umpi_coll_view_t *v, const umpi_coll_args_t *a)
{
    (void) v;
    return umpi_op_is_commutative(a->op);
}

int umpi_coll_fold(umpi_sched_t *s, const umpi_coll_view_t *v, void *buf, void *tmp, MPI_Count n,
                   umpi_dtype_t *dt, umpi_op_t *op, int rem, int *newrank)
{
    int r = v->rank;
    if (r < 2 * rem && r % 2 == 0) {
        UMPI_COLL_TRY(umpi_sched_send(s, v, r + 1, buf, n, dt));
        *newrank = -1;
    } else if (r < 2 * rem) {
        UMPI_COLL_TRY(umpi_sched_recv(s, v, r - 1, tmp, n, dt));
        UMPI_COLL_TRY(umpi_sched_fence(s));
        UMPI_COLL_TRY(umpi_sched_reduce(s, tmp, buf, n, dt, op));
        *newrank = r / 2;
    } else {
        *newrank = r - rem;
    }
    return umpi_sched_fence(s);
}

int umpi_coll_halving(umpi_sched_t *s, const umpi_coll_view_t *v, void *buf, void *tmp, const MPI_Count *disp,
                      int pof2, int rem, int newrank, umpi_dtype_t *dt, umpi_op_t *op)
{
    int lo = 0, hi = pof2; /* the blocks I am still responsible for */
    for (int mask = pof2 >> 1; mask > 0; mask >>= 1) {
        int partner = newrank ^ mask, mid = lo + mask;
        int slo = newrank < partner ? mid : lo, shi = newrank < partner ? hi : mid;
        int klo = newrank < partner ? lo : mid, khi = newrank < partner ? mid : hi;
        int peer = umpi_coll_fold_member(partner, rem);
        MPI_Count kn = disp[khi] - disp[klo];
        UMPI_COLL_TRY(umpi_sched_recv(s, v, peer, tmp, kn, dt));
        UMPI_COLL_TRY(umpi_sched_send(s, v, peer, umpi_coll_at(buf, disp[slo], dt), disp[shi] - disp[slo], dt));
        UMPI_COLL_TRY(umpi_sched_fence(s));
        /* runs before the next round's messages are posted (local steps lead their phase) */
        UMPI_COLL_TRY(umpi_sched_reduce(s, tmp, umpi_coll_at(buf, disp[klo], dt), kn, dt, op));
        lo = klo;
        hi = khi;
    }
    return umpi_sched_fence(s);
}

int umpi_coll_doubling_allgather(umpi_sched_t *s, const umpi_coll_view_t *v, void *buf, const MPI_Count *disp,
                                 int pof2, int rem, int newrank, umpi_dtype_t *dt)
{
    for (int mask = 1; mask < pof2; mask <<= 1) {
        int partner = newrank ^ mask;
        int mine = newrank & ~(mask - 1), theirs = partner & ~(mask - 1);
        int peer = umpi_coll_fold_member(partner, rem);
        UMPI_COLL_TRY(umpi_sched_recv(s, v, peer, umpi_coll_at(buf, disp[theirs], dt),
                                      disp[theirs + mask] - disp[theirs], dt));
        UMPI_COLL_TRY(umpi_sched_send(s, v, peer, umpi_coll_at(buf, disp[mine], dt),
                                      disp[mine + mask] - disp[mine], dt));
        UMPI_COLL_TRY(umpi_sched_fence(s));
    }
    return MPI_SUCCESS;
}
