/*
 * Allreduce, Rabenseifner: recursive halving reduce-scatter, then recursive doubling allgather
 * (algo/halving.c), among a power of two of members; the others first fold their vector into a
 * neighbour and get the result back at the end. 2 log2 p latencies and about 2n bytes per member:
 * large vectors with few latencies to spare. Commutative ops only.
 */
#include "coll/umpi_coll.h"

UMPI_COLL_BUILD(umpi_allreduce_rabenseifner)
{
    int p = v->size, r = v->rank;
    MPI_Count n = a->rcount;
    umpi_dtype_t *dt = a->rdt;
    void *buf = a->rbuf;
    if (a->sbuf != MPI_IN_PLACE)
        UMPI_COLL_TRY(umpi_sched_copy(s, a->sbuf, n, dt, buf, n, dt));
    if (p == 1)
        return MPI_SUCCESS;
    int pof2 = 1 << umpi_coll_log2(p), rem = p - pof2, newrank;
    void *tmp = umpi_sched_buf_dt(s, n, dt);
    MPI_Count *disp = umpi_coll_counts(s, pof2 + 1);
    if (tmp == NULL || disp == NULL)
        return umpi_err_create(MPI_ERR_OTHER, "out of memory for a %lld-element allreduce", (long long) n);
    umpi_coll_even_blocks(disp, pof2, n);

    UMPI_COLL_TRY(umpi_coll_fold(s, v, buf, tmp, n, dt, a->op, rem, &newrank));
    if (newrank >= 0) {
        UMPI_COLL_TRY(umpi_coll_halving(s, v, buf, tmp, disp, pof2, rem, newrank, dt, a->op));
        UMPI_COLL_TRY(umpi_coll_doubling_allgather(s, v, buf, disp, pof2, rem, newrank, dt));
    }
    if (r < 2 * rem && r % 2 == 0)
        return umpi_sched_recv(s, v, r + 1, buf, n, dt);
    if (r < 2 * rem)
        return umpi_sched_send(s, v, r - 1, buf, n, dt);
    return MPI_SUCCESS;
}
