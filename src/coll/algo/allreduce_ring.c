/*
 * Allreduce, ring: the vector is cut into p blocks; a ring reduce-scatter (p - 1 steps, each
 * member passing one block to the next and folding in the one it gets) leaves member r with
 * block r reduced, and a ring allgather (p - 1 more steps) hands the blocks around. Every member
 * sends 2 (p - 1) / p of the vector in all: bandwidth-optimal for large vectors, but 2 (p - 1)
 * latencies. Blocks are combined in ring order, so commutative ops only.
 */
#include "coll/umpi_coll.h"

UMPI_COLL_ALGO(umpi_allreduce_ring)
{
    int p = v->size, r = v->rank;
    MPI_Count n = a->rcount;
    umpi_dtype_t *dt = a->rdt;
    void *buf = a->rbuf;
    if (a->sbuf != MPI_IN_PLACE)
        UMPI_COLL_TRY(umpi_sched_copy(s, a->sbuf, n, dt, buf, n, dt));
    if (p == 1)
        return MPI_SUCCESS;
    MPI_Count *disp = umpi_coll_counts(s, p + 1);
    void *tmp = umpi_sched_buf_dt(s, n / p + 1, dt);
    if (disp == NULL || tmp == NULL)
        return umpi_err_create(MPI_ERR_OTHER, "out of memory for a %lld-element allreduce", (long long) n);
    umpi_coll_even_blocks(disp, p, n);
    int next = (r + 1) % p, prev = (r - 1 + p) % p;

    for (int k = 0; k < p - 1; k++) {
        int sb = (r - k - 1 + 2 * p) % p, rb = (r - k - 2 + 2 * p) % p;
        MPI_Count rn = disp[rb + 1] - disp[rb];
        UMPI_COLL_TRY(umpi_sched_recv(s, v, prev, tmp, rn, dt));
        UMPI_COLL_TRY(umpi_sched_send(s, v, next, umpi_coll_at(buf, disp[sb], dt), disp[sb + 1] - disp[sb], dt));
        UMPI_COLL_TRY(umpi_sched_fence(s));
        /* leads the next phase, before its block goes out */
        UMPI_COLL_TRY(umpi_sched_reduce(s, tmp, umpi_coll_at(buf, disp[rb], dt), rn, dt, a->op));
    }
    for (int k = 0; k < p - 1; k++) {
        int sb = (r - k + p) % p, rb = (r - k - 1 + p) % p;
        UMPI_COLL_TRY(umpi_sched_recv(s, v, prev, umpi_coll_at(buf, disp[rb], dt), disp[rb + 1] - disp[rb], dt));
        UMPI_COLL_TRY(umpi_sched_send(s, v, next, umpi_coll_at(buf, disp[sb], dt), disp[sb + 1] - disp[sb], dt));
        UMPI_COLL_TRY(umpi_sched_fence(s));
    }
    return MPI_SUCCESS;
}
