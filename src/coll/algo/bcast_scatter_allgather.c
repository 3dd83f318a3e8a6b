/*
 * Broadcast, scatter + ring allgather (van de Geijn): the message, seen as bytes, is cut into p
 * blocks; a binomial scatter from the root gives member r (numbered from the root) block r, and a
 * ring allgather passes the blocks round in p - 1 steps. About 2n bytes per member instead of
 * n log2 p: the large-message choice. The cut is by bytes because the members' counts and
 * datatypes may differ (only the type signatures match); non-contiguous data is packed first.
 */
#include "coll/umpi_coll.h"

UMPI_COLL_BUILD(umpi_bcast_scatter_allgather)
{
    int p = v->size, root = a->root, vr = (v->rank - root + p) % p;
    umpi_dtype_t *byte = umpi_dtype_get(MPI_BYTE), *dt = a->rdt;
    MPI_Count n = a->rcount * dt->size;
    if (p == 1)
        return MPI_SUCCESS;
    char *b;
    MPI_Count *disp = umpi_coll_counts(s, p + 1);
    if (dt->contig)
        b = (char *) a->rbuf + dt->true_lb;
    else
        b = umpi_sched_buf(s, (size_t) n);
    void *junk = vr == 0 ? umpi_sched_buf(s, (size_t) (n / p + 1)) : NULL;
    if (disp == NULL || b == NULL || (vr == 0 && junk == NULL))
        return umpi_err_create(MPI_ERR_OTHER, "out of memory for a %lld-byte broadcast", (long long) n);
    umpi_coll_even_blocks(disp, p, n);
    if (!dt->contig && vr == 0)
        UMPI_COLL_TRY(umpi_sched_copy(s, a->rbuf, a->rcount, dt, b, n, byte));
#define MEMBER(x) (((x) + root) % p)
    /* binomial scatter: a subtree of members [vr, vr + mask) gets their blocks in one message */
    int mask;
    for (mask = 1; mask < p; mask <<= 1) {
        if (vr & mask) {
            int end = vr + mask < p ? vr + mask : p;
            UMPI_COLL_TRY(umpi_sched_recv(s, v, MEMBER(vr - mask), b + disp[vr], disp[end] - disp[vr], byte));
            UMPI_COLL_TRY(umpi_sched_fence(s));
            break;
        }
    }
    for (mask >>= 1; mask > 0; mask >>= 1) {
        int c = vr + mask, end = vr + 2 * mask < p ? vr + 2 * mask : p;
        if (c < p)
            UMPI_COLL_TRY(umpi_sched_send(s, v, MEMBER(c), b + disp[c], disp[end] - disp[c], byte));
    }
    UMPI_COLL_TRY(umpi_sched_fence(s));
    /* ring allgather; the root has every block already and drops what comes back */
    for (int k = 0; k < p - 1; k++) {
        int sb = (vr - k + p) % p, rb = (vr - k - 1 + p) % p;
        void *dst = vr == 0 ? junk : b + disp[rb];
        UMPI_COLL_TRY(umpi_sched_recv(s, v, MEMBER(vr - 1 + p), dst, disp[rb + 1] - disp[rb], byte));
        UMPI_COLL_TRY(umpi_sched_send(s, v, MEMBER(vr + 1), b + disp[sb], disp[sb + 1] - disp[sb], byte));
        UMPI_COLL_TRY(umpi_sched_fence(s));
    }
#undef MEMBER
    if (!dt->contig && vr != 0)
        UMPI_COLL_TRY(umpi_sched_copy(s, b, n, byte, a->rbuf, a->rcount, dt));
    return MPI_SUCCESS;
}
