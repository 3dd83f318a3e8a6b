/*
 * Alltoall, Bruck (small blocks): the blocks are packed into slots, slot j holding the block for
 * rank (r + j) mod p. In round k (2^k < p) member r packs the slots whose index has bit k set,
 * sends them to r + 2^k, receives as many from r - 2^k and unpacks them into the same slots.
 * After ceil(log2 p) rounds slot j holds the block from rank (r - j) mod p. log2 p messages of
 * about p/2 blocks each, plus local packing.
 */
#include "blocks.h"

UMPI_COLL_BUILD(umpi_alltoall_bruck)
{
    int p = v->size, r = v->rank;
    size_t blk = a->bytes;
    umpi_dtype_t *byte = umpi_coll_byte(), *rdt = a->rdt;
    MPI_Count rc = a->rcount;
    if (p == 1) {
        if (a->sbuf != MPI_IN_PLACE)
            UMPI_COLL_TRY(umpi_sched_copy(s, a->sbuf, a->scount, a->sdt, a->rbuf, rc, rdt));
        return MPI_SUCCESS;
    }
    char *slots = umpi_sched_buf(s, (size_t) p * blk);
    char *out = umpi_sched_buf(s, (size_t) (p / 2 + 1) * blk), *in = umpi_sched_buf(s, (size_t) (p / 2 + 1) * blk);
    if (slots == NULL || out == NULL || in == NULL)
        return umpi_coll_nomem("an alltoall");
    /* slot j = the block for rank (r + j) % p: blocks r .. p - 1, then 0 .. r - 1 */
    const void *src = a->sbuf == MPI_IN_PLACE ? a->rbuf : a->sbuf;
    MPI_Count sc = a->sbuf == MPI_IN_PLACE ? rc : a->scount;
    umpi_dtype_t *sdt = a->sbuf == MPI_IN_PLACE ? rdt : a->sdt;
    UMPI_COLL_TRY(umpi_sched_copy(s, umpi_coll_block(src, r, sc, sdt), (MPI_Count) (p - r) * sc, sdt, slots,
                                  (MPI_Count) ((size_t) (p - r) * blk), byte));
    if (r > 0)
        UMPI_COLL_TRY(umpi_sched_copy(s, src, (MPI_Count) r * sc, sdt, umpi_coll_packed(slots, p - r, blk),
                                      (MPI_Count) ((size_t) r * blk), byte));
    UMPI_COLL_TRY(umpi_sched_fence(s));
    for (int k = 1; k < p; k <<= 1) {
        int n = 0;
        for (int j = 1; j < p; j++)
            if (j & k)
                UMPI_COLL_TRY(umpi_sched_copy(s, umpi_coll_packed(slots, j, blk), (MPI_Count) blk, byte,
                                              umpi_coll_packed(out, n++, blk), (MPI_Count) blk, byte));
        MPI_Count nb = (MPI_Count) ((size_t) n * blk);
        UMPI_COLL_TRY(umpi_sched_recv(s, v, (r - k + p) % p, in, nb, byte));
        UMPI_COLL_TRY(umpi_sched_send(s, v, (r + k) % p, out, nb, byte));
        UMPI_COLL_TRY(umpi_sched_fence(s));
        n = 0;
        for (int j = 1; j < p; j++)
            if (j & k)
                UMPI_COLL_TRY(umpi_sched_copy(s, umpi_coll_packed(in, n++, blk), (MPI_Count) blk, byte,
                                              umpi_coll_packed(slots, j, blk), (MPI_Count) blk, byte));
    }
    /* slot j came from rank (r - j) mod p */
    for (int j = 0; j < p; j++)
        UMPI_COLL_TRY(umpi_sched_copy(s, umpi_coll_packed(slots, j, blk), (MPI_Count) blk, byte,
                                      umpi_coll_block(a->rbuf, (r - j + p) % p, rc, rdt), rc, rdt));
    return MPI_SUCCESS;
}
