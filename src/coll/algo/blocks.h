/*
 * The blocks of the gather / scatter / allgather / alltoall algorithms: block i of a caller's
 * buffer (typed), of packed scratch (bytes), and the per-peer blocks of the v and w kinds.
 */
#ifndef UMPI_COLL_BLOCKS_H
#define UMPI_COLL_BLOCKS_H

#include "coll/umpi_coll.h"

/* MPI_BYTE, the datatype of packed scratch. */
static inline umpi_dtype_t *umpi_coll_byte(void)
{
    return umpi_dtype_get(MPI_BYTE);
}

/* Block i of a buffer of blocks of count elements of dt. */
static inline void *umpi_coll_block(const void *buf, int i, MPI_Count count, const umpi_dtype_t *dt)
{
    return umpi_coll_at(buf, (MPI_Count) i * count, dt);
}

/* Block i of packed bytes, blk bytes each. */
static inline char *umpi_coll_packed(const void *buf, MPI_Count i, size_t blk)
{
    return (char *) buf + (size_t) i * blk;
}

static inline int umpi_coll_nomem(const char *what)
{
    return umpi_err_create(MPI_ERR_OTHER, "out of memory for the scratch buffer of %s", what);
}

/* One peer's block of a v or w kind (alltoallv/w, gatherv, ...): address, count, datatype. */
typedef struct {
    void *buf;
    MPI_Count count;
    umpi_dtype_t *dt;
} umpi_coll_blk_t;

/* What this process sends to member i (alltoallv / alltoallw; sbuf not MPI_IN_PLACE). */
static inline umpi_coll_blk_t umpi_coll_sblk(const umpi_coll_args_t *a, int i)
{
    umpi_coll_blk_t b;
    if (a->kind == UMPI_COLL_ALLTOALLW) {
        b.dt = a->sdts[i];
        b.buf = (char *) a->sbuf + a->sdispls[i];
    } else {
        b.dt = a->sdt;
        b.buf = umpi_coll_at(a->sbuf, a->sdispls[i], a->sdt);
    }
    b.count = a->scounts[i];
    return b;
}

/* Where the data from member i goes (alltoallv / alltoallw, allgatherv, gatherv). */
static inline umpi_coll_blk_t umpi_coll_rblk(const umpi_coll_args_t *a, int i)
{
    umpi_coll_blk_t b;
    if (a->kind == UMPI_COLL_ALLTOALLW) {
        b.dt = a->rdts[i];
        b.buf = (char *) a->rbuf + a->rdispls[i];
    } else {
        b.dt = a->rdt;
        b.buf = umpi_coll_at(a->rbuf, a->rdispls[i], a->rdt);
    }
    b.count = a->rcounts[i];
    return b;
}

/*
 * The send blocks of an alltoallv / alltoallw: the caller's, or with MPI_IN_PLACE a packed copy
 * of the receive blocks made by the first steps of s (followed by a fence), since the receive
 * buffer is overwritten while its old contents are still being sent. sb gets p entries.
 */
static inline int umpi_coll_alltoallv_sources(umpi_sched_t *s, const umpi_coll_view_t *v,
                                              const umpi_coll_args_t *a, umpi_coll_blk_t *sb)
{
    int p = v->size;
    if (a->sbuf != MPI_IN_PLACE) {
        for (int i = 0; i < p; i++)
            sb[i] = umpi_coll_sblk(a, i);
        return MPI_SUCCESS;
    }
    size_t total = 0;
    for (int i = 0; i < p; i++) {
        umpi_coll_blk_t r = umpi_coll_rblk(a, i);
        total += (size_t) (r.count * r.dt->size);
    }
    char *tmp = umpi_sched_buf(s, total);
    if (tmp == NULL)
        return umpi_coll_nomem("an in-place alltoall");
    umpi_dtype_t *byte = umpi_coll_byte();
    size_t off = 0;
    for (int i = 0; i < p; i++) {
        umpi_coll_blk_t r = umpi_coll_rblk(a, i);
        MPI_Count nb = r.count * r.dt->size;
        sb[i].buf = tmp + off;
        sb[i].count = nb;
        sb[i].dt = byte;
        if (i != v->rank)
            UMPI_COLL_TRY(umpi_sched_copy(s, r.buf, r.count, r.dt, tmp + off, nb, byte));
        off += (size_t) nb;
    }
    return umpi_sched_fence(s);
}

#endif
