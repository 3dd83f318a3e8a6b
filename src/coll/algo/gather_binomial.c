/*
 * Gather, binomial tree: ranks are renumbered so that the root is 0; member vr collects the blocks
 * of its subtree (vr .. vr + 2^k - 1, 2^k its lowest set bit) as packed bytes in relative-rank
 * order and hands them to vr - 2^k in one message. log2 p rounds; the root unpacks into recvbuf.
 * Leaves send straight from sendbuf.
 */
#include "blocks.h"

UMPI_COLL_BUILD(umpi_gather_binomial)
{
    int p = v->size, root = a->root, vr = (v->rank - root + p) % p;
    size_t blk = a->bytes;
    umpi_dtype_t *byte = umpi_coll_byte();
    int low = vr ? vr & -vr : umpi_coll_pow2_ceil(p);  /* subtree size before clipping */
    int sub = low < p - vr ? low : p - vr;

    if (vr == 0 && a->sbuf != MPI_IN_PLACE)
        UMPI_COLL_TRY(umpi_sched_copy(s, a->sbuf, a->scount, a->sdt, umpi_coll_block(a->rbuf, root, a->rcount, a->rdt),
                                      a->rcount, a->rdt));
    if (p == 1)
        return MPI_SUCCESS;
    if (sub == 1) /* a leaf */
        return umpi_sched_send(s, v, (vr - low + root) % p, a->sbuf, a->scount, a->sdt);

    char *tmp = umpi_sched_buf(s, (size_t) sub * blk);
    if (tmp == NULL)
        return umpi_coll_nomem("a gather");
    if (vr != 0)
        UMPI_COLL_TRY(umpi_sched_copy(s, a->sbuf, a->scount, a->sdt, tmp, (MPI_Count) blk, byte));
    for (int mask = 1; mask < low && vr + mask < p; mask <<= 1) {
        int child = vr + mask, n = mask < p - child ? mask : p - child;
        UMPI_COLL_TRY(umpi_sched_recv(s, v, (child + root) % p, umpi_coll_packed(tmp, mask, blk),
                                      (MPI_Count) ((size_t) n * blk), byte));
    }
    UMPI_COLL_TRY(umpi_sched_fence(s));
    if (vr != 0)
        return umpi_sched_send(s, v, (vr - low + root) % p, tmp, (MPI_Count) ((size_t) sub * blk), byte);
    /* the root: relative blocks 1 .. p - root - 1 belong to ranks root + 1 .. p - 1, the rest to 0 .. root - 1 */
    if (p - root - 1 > 0)
        UMPI_COLL_TRY(umpi_sched_copy(s, umpi_coll_packed(tmp, 1, blk), (MPI_Count) ((size_t) (p - root - 1) * blk),
                                      byte, umpi_coll_block(a->rbuf, root + 1, a->rcount, a->rdt),
                                      (MPI_Count) (p - root - 1) * a->rcount, a->rdt));
    if (root > 0)
        UMPI_COLL_TRY(umpi_sched_copy(s, umpi_coll_packed(tmp, p - root, blk), (MPI_Count) ((size_t) root * blk), byte,
                                      a->rbuf, (MPI_Count) root * a->rcount, a->rdt));
    return MPI_SUCCESS;
}
