/*
 * Scatter, binomial tree: ranks are renumbered so that the root is 0. The root packs sendbuf in
 * relative-rank order; member vr receives the packed blocks of its subtree (vr .. vr + 2^k - 1,
 * 2^k its lowest set bit) from vr - 2^k and passes the upper halves on to vr + 2^j, j < k, largest
 * first. log2 p rounds. Leaves receive straight into recvbuf.
 */
#include "blocks.h"

UMPI_COLL_BUILD(umpi_scatter_binomial)
{
    int p = v->size, root = a->root, vr = (v->rank - root + p) % p;
    size_t blk = a->bytes;
    umpi_dtype_t *byte = umpi_coll_byte();
    int low = vr ? vr & -vr : umpi_coll_pow2_ceil(p);
    int sub = low < p - vr ? low : p - vr;

    if (vr == 0 && a->rbuf != MPI_IN_PLACE)
        UMPI_COLL_TRY(umpi_sched_copy(s, umpi_coll_block(a->sbuf, root, a->scount, a->sdt), a->scount, a->sdt, a->rbuf,
                                      a->rcount, a->rdt));
    if (p == 1)
        return MPI_SUCCESS;
    if (sub == 1)
        return umpi_sched_recv(s, v, (vr - low + root) % p, a->rbuf, a->rcount, a->rdt);

    char *tmp = umpi_sched_buf(s, (size_t) sub * blk);
    if (tmp == NULL)
        return umpi_coll_nomem("a scatter");
    if (vr == 0) {
        /* relative block j is rank (j + root) % p's: ranks root .. p - 1 first, then 0 .. root - 1 */
        UMPI_COLL_TRY(umpi_sched_copy(s, umpi_coll_block(a->sbuf, root, a->scount, a->sdt),
                                      (MPI_Count) (p - root) * a->scount, a->sdt, tmp,
                                      (MPI_Count) ((size_t) (p - root) * blk), byte));
        if (root > 0)
            UMPI_COLL_TRY(umpi_sched_copy(s, a->sbuf, (MPI_Count) root * a->scount, a->sdt,
                                          umpi_coll_packed(tmp, p - root, blk), (MPI_Count) ((size_t) root * blk),
                                          byte));
    } else {
        UMPI_COLL_TRY(umpi_sched_recv(s, v, (vr - low + root) % p, tmp, (MPI_Count) ((size_t) sub * blk), byte));
        UMPI_COLL_TRY(umpi_sched_fence(s));
        UMPI_COLL_TRY(umpi_sched_copy(s, tmp, (MPI_Count) blk, byte, a->rbuf, a->rcount, a->rdt));
    }
    for (int mask = low >> 1; mask > 0; mask >>= 1) {
        int child = vr + mask;
        if (child >= p)
            continue;
        int n = mask < p - child ? mask : p - child;
        UMPI_COLL_TRY(umpi_sched_send(s, v, (child + root) % p, umpi_coll_packed(tmp, mask, blk),
                                      (MPI_Count) ((size_t) n * blk), byte));
    }
    return MPI_SUCCESS;
}
