/*
 * Barrier, recursive doubling: the members above the largest power of two pof2 first signal
 * member r - pof2; the pof2 others then exchange empty messages with r XOR 2^k for each k, and
 * finally release their extra member. log2 p rounds (two more when p is not a power of two), one
 * message each way per round: fewer messages in flight than dissemination on a non-power-of-two.
 */
#include "coll/umpi_coll.h"

UMPI_COLL_BUILD(umpi_barrier_recursive_doubling)
{
    (void) a;
    umpi_dtype_t *byte = umpi_dtype_get(MPI_BYTE);
    int p = v->size, r = v->rank, pof2 = 1 << umpi_coll_log2(p);
    if (p == 1)
        return MPI_SUCCESS;
    if (r >= pof2) {
        UMPI_COLL_TRY(umpi_sched_send(s, v, r - pof2, NULL, 0, byte));
        return umpi_sched_recv(s, v, r - pof2, NULL, 0, byte);
    }
    if (r + pof2 < p) {
        UMPI_COLL_TRY(umpi_sched_recv(s, v, r + pof2, NULL, 0, byte));
        UMPI_COLL_TRY(umpi_sched_fence(s));
    }
    for (int mask = 1; mask < pof2; mask <<= 1) {
        UMPI_COLL_TRY(umpi_sched_recv(s, v, r ^ mask, NULL, 0, byte));
        UMPI_COLL_TRY(umpi_sched_send(s, v, r ^ mask, NULL, 0, byte));
        UMPI_COLL_TRY(umpi_sched_fence(s));
    }
    if (r + pof2 < p)
        UMPI_COLL_TRY(umpi_sched_send(s, v, r + pof2, NULL, 0, byte));
    return MPI_SUCCESS;
}
