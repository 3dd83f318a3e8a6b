/*
 * Allgather, Bruck (any p): blocks travel packed in a scratch buffer in which slot j holds the
 * block of rank (r + j) mod p. In round k member r sends its first min(2^k, p - 2^k) slots to
 * r - 2^k and appends as many from r + 2^k. ceil(log2 p) rounds; one final unpacking rotates the
 * slots into recvbuf.
 */
#include "blocks.h"

UMPI_COLL_BUILD(umpi_allgather_bruck)
{
    int p = v->size, r = v->rank;
    size_t blk = a->bytes;
    umpi_dtype_t *byte = umpi_coll_byte();
    if (p == 1) {
        if (a->sbuf != MPI_IN_PLACE)
            UMPI_COLL_TRY(umpi_sched_copy(s, a->sbuf, a->scount, a->sdt, a->rbuf, a->rcount, a->rdt));
        return MPI_SUCCESS;
    }
    char *tmp = umpi_sched_buf(s, (size_t) p * blk);
    if (tmp == NULL)
        return umpi_coll_nomem("an allgather");
    if (a->sbuf != MPI_IN_PLACE)
        UMPI_COLL_TRY(umpi_sched_copy(s, a->sbuf, a->scount, a->sdt, tmp, (MPI_Count) blk, byte));
    else
        UMPI_COLL_TRY(umpi_sched_copy(s, umpi_coll_block(a->rbuf, r, a->rcount, a->rdt), a->rcount, a->rdt, tmp,
                                      (MPI_Count) blk, byte));
    for (int k = 1; k < p; k <<= 1) {
        int n = k < p - k ? k : p - k;
        MPI_Count nb = (MPI_Count) ((size_t) n * blk);
        UMPI_COLL_TRY(umpi_sched_recv(s, v, (r + k) % p, umpi_coll_packed(tmp, k, blk), nb, byte));
        UMPI_COLL_TRY(umpi_sched_send(s, v, (r - k + p) % p, tmp, nb, byte));
        UMPI_COLL_TRY(umpi_sched_fence(s));
    }
    /* slots 0 .. p - r - 1 are ranks r .. p - 1; slots p - r .. p - 1 are ranks 0 .. r - 1 */
    UMPI_COLL_TRY(umpi_sched_copy(s, tmp, (MPI_Count) ((size_t) (p - r) * blk), byte,
                                  umpi_coll_block(a->rbuf, r, a->rcount, a->rdt), (MPI_Count) (p - r) * a->rcount,
                                  a->rdt));
    if (r > 0)
        UMPI_COLL_TRY(umpi_sched_copy(s, umpi_coll_packed(tmp, p - r, blk), (MPI_Count) ((size_t) r * blk), byte,
                                      a->rbuf, (MPI_Count) r * a->rcount, a->rdt));
    return MPI_SUCCESS;
}
