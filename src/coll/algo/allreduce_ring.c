/*
 * Allreduce, ring: the vector is cut into p blocks; a ring reduce-scatter (p - 1 steps, each
 * member passing one block to the next and folding in the one it gets) leaves member r with
 * block r reduced, and a ring allgather (p - 1 more steps) hands the blocks around. Every member
 * sends 2 (p - 1) / p of the vector in all: bandwidth-optimal for large vectors, but 2 (p - 1)
 * latencies. Blocks are combined in ring order, so commutative ops only.
 *
 * With a separate send buffer nothing is copied: the first step sends from it, and every block of
 * the reduce-scatter arrives straight in the receive buffer, where my own block of the send
 * buffer is folded into it (at 1 MiB on 2 ranks this saves a 1 MiB copy out of about 270 us).
 * In place, blocks arrive in scratch and fold into the receive buffer as usual.
 */
#include "coll/umpi_coll.h"

UMPI_COLL_BUILD(umpi_allreduce_ring)
{
    int p = v->size, r = v->rank;
    MPI_Count n = a->rcount;
    umpi_dtype_t *dt = a->rdt;
    void *buf = a->rbuf;
    const void *sbuf = a->sbuf == MPI_IN_PLACE ? NULL : a->sbuf;
    if (p == 1)
        return sbuf ? umpi_sched_copy(s, sbuf, n, dt, buf, n, dt) : MPI_SUCCESS;
    MPI_Count *disp = umpi_coll_counts(s, p + 1);
    void *tmp = sbuf ? buf : umpi_sched_buf_dt(s, n / p + 1, dt);
    if (disp == NULL || tmp == NULL)
        return umpi_err_create(MPI_ERR_OTHER, "out of memory for a %lld-element allreduce", (long long) n);
    umpi_coll_even_blocks(disp, p, n);
    int next = (r + 1) % p, prev = (r - 1 + p) % p;

    for (int k = 0; k < p - 1; k++) {
        int sb = (r - k - 1 + 2 * p) % p, rb = (r - k - 2 + 2 * p) % p;
        MPI_Count rn = disp[rb + 1] - disp[rb];
        /* the block to send: mine from the send buffer first, then the sum that came in last */
        const void *from = sbuf && k == 0 ? sbuf : buf;
        void *into = sbuf ? umpi_coll_at(buf, disp[rb], dt) : tmp;
        UMPI_COLL_TRY(umpi_sched_recv(s, v, prev, into, rn, dt));
        UMPI_COLL_TRY(umpi_sched_send(s, v, next, umpi_coll_at(from, disp[sb], dt), disp[sb + 1] - disp[sb], dt));
        UMPI_COLL_TRY(umpi_sched_fence(s));
        /* leads the next phase, before its block goes out */
        if (sbuf)
            UMPI_COLL_TRY(umpi_sched_reduce(s, umpi_coll_at(sbuf, disp[rb], dt), into, rn, dt, a->op));
        else
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
