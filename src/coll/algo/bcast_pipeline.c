/*
 * Broadcast, pipelined chain: the message, seen as bytes, goes down the chain root, root + 1, ...
 * in segments of UMPI__SEG bytes, each member forwarding segment j while receiving j + 1. With
 * s segments: p - 2 + s steps of one segment, so about n * beta for large messages whatever p.
 * Cut by bytes (the members' counts and datatypes may differ); non-contiguous data is packed.
 */
#include "coll/umpi_coll.h"

#define UMPI__SEG 65536

UMPI_COLL_BUILD(umpi_bcast_pipeline)
{
    int p = v->size, root = a->root, vr = (v->rank - root + p) % p;
    umpi_dtype_t *byte = umpi_dtype_get(MPI_BYTE), *dt = a->rdt;
    MPI_Count n = a->rcount * dt->size;
    if (p == 1)
        return MPI_SUCCESS;
    char *b = dt->contig ? (char *) a->rbuf + dt->true_lb : umpi_sched_buf(s, (size_t) n);
    if (b == NULL)
        return umpi_err_create(MPI_ERR_OTHER, "out of memory for a %lld-byte broadcast", (long long) n);
    if (!dt->contig && vr == 0)
        UMPI_COLL_TRY(umpi_sched_copy(s, a->rbuf, a->rcount, dt, b, n, byte));
    MPI_Count nseg = n == 0 ? 1 : (n + UMPI__SEG - 1) / UMPI__SEG;
    int prev = (vr - 1 + root) % p, next = (vr + 1 + root) % p;
    for (MPI_Count j = 0; j <= nseg; j++) {
        /* step j: receive segment j, forward segment j - 1 */
        if (j < nseg && vr > 0) {
            MPI_Count off = j * UMPI__SEG, len = n - off < UMPI__SEG ? n - off : UMPI__SEG;
            UMPI_COLL_TRY(umpi_sched_recv(s, v, prev, b + off, len, byte));
        }
        if (j > 0 && vr < p - 1) {
            MPI_Count off = (j - 1) * UMPI__SEG, len = n - off < UMPI__SEG ? n - off : UMPI__SEG;
            UMPI_COLL_TRY(umpi_sched_send(s, v, next, b + off, len, byte));
        }
        UMPI_COLL_TRY(umpi_sched_fence(s));
    }
    if (!dt->contig && vr != 0)
        UMPI_COLL_TRY(umpi_sched_copy(s, b, n, byte, a->rbuf, a->rcount, dt));
    return MPI_SUCCESS;
}
