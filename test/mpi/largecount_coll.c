/*
 * The large-count (_c) variants of every collective, in their blocking, nonblocking and persistent
 * forms (neighbourhood ones on a periodic ring), and of the point-to-point send modes, packing and
 * datatype constructors that no other test calls: MPI_Count counts, MPI_Aint displacements, each
 * result checked. (The data stay small: the point is the _c signatures and their conversions.)
 */
#include "mtest.h"

#define RUN3(mode, blocking, nonblocking, init)                                                       \
    do {                                                                                              \
        MPI_Request req_;                                                                             \
        if ((mode) == 0) {                                                                            \
            blocking;                                                                                 \
        } else if ((mode) == 1) {                                                                     \
            nonblocking;                                                                              \
            MPI_Wait(&req_, MPI_STATUS_IGNORE);                                                       \
        } else {                                                                                      \
            init;                                                                                     \
            MPI_Start(&req_);                                                                         \
            MPI_Wait(&req_, MPI_STATUS_IGNORE);                                                       \
            MPI_Request_free(&req_);                                                                  \
        }                                                                                             \
    } while (0)

#define MAXP 8
static MPI_Comm W;

static void test_colls(int mode)
{
    int p = mt_size, me = mt_rank;
    MPI_Count one = 1, counts[MAXP], c2[MAXP];
    MPI_Aint displs[MAXP], bdispls[MAXP];
    MPI_Datatype ints[MAXP];
    int sb[MAXP * 2], rb[MAXP * 2], x;
    for (int i = 0; i < p; i++) {
        counts[i] = 1;
        c2[i] = i < p ? 1 : 0;
        displs[i] = p - 1 - i;
        bdispls[i] = (MPI_Aint) sizeof(int) * (p - 1 - i);
        ints[i] = MPI_INT;
        sb[i] = me * 100 + i;
    }
    /* bcast */
    x = me == 0 ? 42 : -1;
    RUN3(mode, MPI_Bcast_c(&x, one, MPI_INT, 0, W), MPI_Ibcast_c(&x, one, MPI_INT, 0, W, &req_),
         MPI_Bcast_init_c(&x, one, MPI_INT, 0, W, MPI_INFO_NULL, &req_));
    MT_CHECK(x == 42, "bcast_c mode %d: %d", mode, x);
    /* gather / gatherv at the last rank */
    x = me;
    memset(rb, -1, sizeof(rb));
    RUN3(mode, MPI_Gather_c(&x, one, MPI_INT, rb, one, MPI_INT, p - 1, W),
         MPI_Igather_c(&x, one, MPI_INT, rb, one, MPI_INT, p - 1, W, &req_),
         MPI_Gather_init_c(&x, one, MPI_INT, rb, one, MPI_INT, p - 1, W, MPI_INFO_NULL, &req_));
    for (int i = 0; i < p && me == p - 1; i++)
        MT_CHECK(rb[i] == i, "gather_c mode %d: [%d]=%d", mode, i, rb[i]);
    memset(rb, -1, sizeof(rb));
    RUN3(mode, MPI_Gatherv_c(&x, one, MPI_INT, rb, counts, displs, MPI_INT, 0, W),
         MPI_Igatherv_c(&x, one, MPI_INT, rb, counts, displs, MPI_INT, 0, W, &req_),
         MPI_Gatherv_init_c(&x, one, MPI_INT, rb, counts, displs, MPI_INT, 0, W, MPI_INFO_NULL, &req_));
    for (int i = 0; i < p && me == 0; i++)
        MT_CHECK(rb[p - 1 - i] == i, "gatherv_c mode %d: [%d]=%d", mode, p - 1 - i, rb[p - 1 - i]);
    /* scatter / scatterv from rank 0 */
    x = -1;
    RUN3(mode, MPI_Scatter_c(sb, one, MPI_INT, &x, one, MPI_INT, 0, W),
         MPI_Iscatter_c(sb, one, MPI_INT, &x, one, MPI_INT, 0, W, &req_),
         MPI_Scatter_init_c(sb, one, MPI_INT, &x, one, MPI_INT, 0, W, MPI_INFO_NULL, &req_));
    MT_CHECK(x == me, "scatter_c mode %d: %d", mode, x);
    x = -1;
    RUN3(mode, MPI_Scatterv_c(sb, counts, displs, MPI_INT, &x, one, MPI_INT, 0, W),
         MPI_Iscatterv_c(sb, counts, displs, MPI_INT, &x, one, MPI_INT, 0, W, &req_),
         MPI_Scatterv_init_c(sb, counts, displs, MPI_INT, &x, one, MPI_INT, 0, W, MPI_INFO_NULL, &req_));
    MT_CHECK(x == p - 1 - me, "scatterv_c mode %d: %d", mode, x);
    /* allgather / allgatherv */
    x = me;
    memset(rb, -1, sizeof(rb));
    RUN3(mode, MPI_Allgather_c(&x, one, MPI_INT, rb, one, MPI_INT, W),
         MPI_Iallgather_c(&x, one, MPI_INT, rb, one, MPI_INT, W, &req_),
         MPI_Allgather_init_c(&x, one, MPI_INT, rb, one, MPI_INT, W, MPI_INFO_NULL, &req_));
    for (int i = 0; i < p; i++)
        MT_CHECK(rb[i] == i, "allgather_c mode %d: [%d]=%d", mode, i, rb[i]);
    memset(rb, -1, sizeof(rb));
    RUN3(mode, MPI_Allgatherv_c(&x, one, MPI_INT, rb, counts, displs, MPI_INT, W),
         MPI_Iallgatherv_c(&x, one, MPI_INT, rb, counts, displs, MPI_INT, W, &req_),
         MPI_Allgatherv_init_c(&x, one, MPI_INT, rb, counts, displs, MPI_INT, W, MPI_INFO_NULL, &req_));
    for (int i = 0; i < p; i++)
        MT_CHECK(rb[p - 1 - i] == i, "allgatherv_c mode %d: [%d]=%d", mode, p - 1 - i, rb[p - 1 - i]);
    /* alltoall(v,w): rank me sends me*100+i to rank i */
    memset(rb, -1, sizeof(rb));
    RUN3(mode, MPI_Alltoall_c(sb, one, MPI_INT, rb, one, MPI_INT, W),
         MPI_Ialltoall_c(sb, one, MPI_INT, rb, one, MPI_INT, W, &req_),
         MPI_Alltoall_init_c(sb, one, MPI_INT, rb, one, MPI_INT, W, MPI_INFO_NULL, &req_));
    for (int i = 0; i < p; i++)
        MT_CHECK(rb[i] == i * 100 + me, "alltoall_c mode %d: [%d]=%d", mode, i, rb[i]);
    memset(rb, -1, sizeof(rb));
    RUN3(mode, MPI_Alltoallv_c(sb, counts, displs, MPI_INT, rb, c2, displs, MPI_INT, W),
         MPI_Ialltoallv_c(sb, counts, displs, MPI_INT, rb, c2, displs, MPI_INT, W, &req_),
         MPI_Alltoallv_init_c(sb, counts, displs, MPI_INT, rb, c2, displs, MPI_INT, W, MPI_INFO_NULL, &req_));
    /* sb[p-1-i] goes to rank i: (me*100 + p-1-i); rank i's block lands at rb[p-1-i] */
    for (int i = 0; i < p; i++)
        MT_CHECK(rb[p - 1 - i] == i * 100 + p - 1 - me, "alltoallv_c mode %d: [%d]=%d", mode, p - 1 - i,
                 rb[p - 1 - i]);
    memset(rb, -1, sizeof(rb));
    RUN3(mode, MPI_Alltoallw_c(sb, counts, bdispls, ints, rb, c2, bdispls, ints, W),
         MPI_Ialltoallw_c(sb, counts, bdispls, ints, rb, c2, bdispls, ints, W, &req_),
         MPI_Alltoallw_init_c(sb, counts, bdispls, ints, rb, c2, bdispls, ints, W, MPI_INFO_NULL, &req_));
    for (int i = 0; i < p; i++)
        MT_CHECK(rb[p - 1 - i] == i * 100 + p - 1 - me, "alltoallw_c mode %d: [%d]=%d", mode, p - 1 - i,
                 rb[p - 1 - i]);
    /* reductions: sum of ranks (+ i) */
    int tot = p * (p - 1) / 2;
    for (int i = 0; i < p; i++)
        sb[i] = me + i;
    x = -1;
    RUN3(mode, MPI_Reduce_c(sb, &x, one, MPI_INT, MPI_SUM, 0, W),
         MPI_Ireduce_c(sb, &x, one, MPI_INT, MPI_SUM, 0, W, &req_),
         MPI_Reduce_init_c(sb, &x, one, MPI_INT, MPI_SUM, 0, W, MPI_INFO_NULL, &req_));
    MT_CHECK(me != 0 || x == tot, "reduce_c mode %d: %d", mode, x);
    x = -1;
    RUN3(mode, MPI_Allreduce_c(sb, &x, one, MPI_INT, MPI_SUM, W),
         MPI_Iallreduce_c(sb, &x, one, MPI_INT, MPI_SUM, W, &req_),
         MPI_Allreduce_init_c(sb, &x, one, MPI_INT, MPI_SUM, W, MPI_INFO_NULL, &req_));
    MT_CHECK(x == tot, "allreduce_c mode %d: %d", mode, x);
    x = -1;
    RUN3(mode, MPI_Reduce_scatter_c(sb, &x, counts, MPI_INT, MPI_SUM, W),
         MPI_Ireduce_scatter_c(sb, &x, counts, MPI_INT, MPI_SUM, W, &req_),
         MPI_Reduce_scatter_init_c(sb, &x, counts, MPI_INT, MPI_SUM, W, MPI_INFO_NULL, &req_));
    MT_CHECK(x == tot + p * me, "reduce_scatter_c mode %d: %d", mode, x);
    x = -1;
    RUN3(mode, MPI_Reduce_scatter_block_c(sb, &x, one, MPI_INT, MPI_SUM, W),
         MPI_Ireduce_scatter_block_c(sb, &x, one, MPI_INT, MPI_SUM, W, &req_),
         MPI_Reduce_scatter_block_init_c(sb, &x, one, MPI_INT, MPI_SUM, W, MPI_INFO_NULL, &req_));
    MT_CHECK(x == tot + p * me, "reduce_scatter_block_c mode %d: %d", mode, x);
    x = -1;
    RUN3(mode, MPI_Scan_c(sb, &x, one, MPI_INT, MPI_SUM, W), MPI_Iscan_c(sb, &x, one, MPI_INT, MPI_SUM, W, &req_),
         MPI_Scan_init_c(sb, &x, one, MPI_INT, MPI_SUM, W, MPI_INFO_NULL, &req_));
    MT_CHECK(x == me * (me + 1) / 2, "scan_c mode %d: %d", mode, x);
    x = -1;
    RUN3(mode, MPI_Exscan_c(sb, &x, one, MPI_INT, MPI_SUM, W),
         MPI_Iexscan_c(sb, &x, one, MPI_INT, MPI_SUM, W, &req_),
         MPI_Exscan_init_c(sb, &x, one, MPI_INT, MPI_SUM, W, MPI_INFO_NULL, &req_));
    MT_CHECK(me == 0 || x == me * (me - 1) / 2, "exscan_c mode %d: %d", mode, x);
}

/* Neighbourhood collectives on a periodic ring: neighbours left, right (in that order). Below 3
 * processes left and right are the same process, and which of its two blocks lands where is
 * not for the test to say (MPICH's persistent form differs from its blocking one). */
static void test_neighbors(int mode)
{
    int p = mt_size, me = mt_rank, dims[1] = {p}, periods[1] = {1};
    MPI_Comm ring;
    MPI_Cart_create(MPI_COMM_WORLD, 1, dims, periods, 0, &ring);
    int left = (me + p - 1) % p, right = (me + 1) % p;
    MPI_Count one = 1, counts[2] = {1, 1};
    MPI_Aint displs[2] = {1, 0}, bdispls[2] = {sizeof(int), 0};
    MPI_Datatype ints[2] = {MPI_INT, MPI_INT};
    int x = me, sb[2] = {me * 10, me * 10 + 1}, rb[2];
    rb[0] = rb[1] = -1;
    RUN3(mode, MPI_Neighbor_allgather_c(&x, one, MPI_INT, rb, one, MPI_INT, ring),
         MPI_Ineighbor_allgather_c(&x, one, MPI_INT, rb, one, MPI_INT, ring, &req_),
         MPI_Neighbor_allgather_init_c(&x, one, MPI_INT, rb, one, MPI_INT, ring, MPI_INFO_NULL, &req_));
    MT_CHECK(rb[0] == left && rb[1] == right, "neighbor_allgather_c mode %d: %d %d", mode, rb[0], rb[1]);
    rb[0] = rb[1] = -1;
    RUN3(mode, MPI_Neighbor_allgatherv_c(&x, one, MPI_INT, rb, counts, displs, MPI_INT, ring),
         MPI_Ineighbor_allgatherv_c(&x, one, MPI_INT, rb, counts, displs, MPI_INT, ring, &req_),
         MPI_Neighbor_allgatherv_init_c(&x, one, MPI_INT, rb, counts, displs, MPI_INT, ring, MPI_INFO_NULL, &req_));
    MT_CHECK(rb[1] == left && rb[0] == right, "neighbor_allgatherv_c mode %d: %d %d", mode, rb[0], rb[1]);
    /* alltoall: block 0 goes left, block 1 right; from left I get its block 1 */
    rb[0] = rb[1] = -1;
    RUN3(mode, MPI_Neighbor_alltoall_c(sb, one, MPI_INT, rb, one, MPI_INT, ring),
         MPI_Ineighbor_alltoall_c(sb, one, MPI_INT, rb, one, MPI_INT, ring, &req_),
         MPI_Neighbor_alltoall_init_c(sb, one, MPI_INT, rb, one, MPI_INT, ring, MPI_INFO_NULL, &req_));
    MT_CHECK(p < 3 || rb[0] == left * 10 + 1 && rb[1] == right * 10, "neighbor_alltoall_c mode %d: %d %d", mode, rb[0],
             rb[1]);
    rb[0] = rb[1] = -1;
    RUN3(mode, MPI_Neighbor_alltoallv_c(sb, counts, displs, MPI_INT, rb, counts, displs, MPI_INT, ring),
         MPI_Ineighbor_alltoallv_c(sb, counts, displs, MPI_INT, rb, counts, displs, MPI_INT, ring, &req_),
         MPI_Neighbor_alltoallv_init_c(sb, counts, displs, MPI_INT, rb, counts, displs, MPI_INT, ring, MPI_INFO_NULL,
                                       &req_));
    /* block to left is sb[1], to right sb[0]; from left lands in rb[1] (it sent its sb[0]) */
    MT_CHECK(p < 3 || rb[1] == left * 10 && rb[0] == right * 10 + 1, "neighbor_alltoallv_c mode %d: %d %d", mode, rb[0],
             rb[1]);
    rb[0] = rb[1] = -1;
    RUN3(mode, MPI_Neighbor_alltoallw_c(sb, counts, bdispls, ints, rb, counts, bdispls, ints, ring),
         MPI_Ineighbor_alltoallw_c(sb, counts, bdispls, ints, rb, counts, bdispls, ints, ring, &req_),
         MPI_Neighbor_alltoallw_init_c(sb, counts, bdispls, ints, rb, counts, bdispls, ints, ring, MPI_INFO_NULL,
                                       &req_));
    MT_CHECK(p < 3 || rb[1] == left * 10 && rb[0] == right * 10 + 1, "neighbor_alltoallw_c mode %d: %d %d", mode, rb[0],
             rb[1]);
    MPI_Comm_free(&ring);
}

/* Send modes with MPI_Count counts, to myself (the receive posted first where ready mode needs it). */
static void test_p2p(void)
{
    int s[4] = {1, 2, 3, 4}, r[4];
    MPI_Count n = 4;
    MPI_Request rq[2];
    int bsz = 1024 + MPI_BSEND_OVERHEAD * 4;
    char *bbuf = malloc((size_t) bsz);
    MPI_Buffer_attach(bbuf, bsz);
    for (int m = 0; m < 10; m++) {
        memset(r, 0, sizeof(r));
        MPI_Irecv_c(r, n, MPI_INT, 0, m, MPI_COMM_SELF, &rq[0]);
        switch (m) {
        case 0: MPI_Bsend_c(s, n, MPI_INT, 0, m, MPI_COMM_SELF); break;
        case 1: MPI_Rsend_c(s, n, MPI_INT, 0, m, MPI_COMM_SELF); break;
        case 2: MPI_Ibsend_c(s, n, MPI_INT, 0, m, MPI_COMM_SELF, &rq[1]); break;
        case 3: MPI_Irsend_c(s, n, MPI_INT, 0, m, MPI_COMM_SELF, &rq[1]); break;
        case 4: MPI_Issend_c(s, n, MPI_INT, 0, m, MPI_COMM_SELF, &rq[1]); break;
        case 5: MPI_Bsend_init_c(s, n, MPI_INT, 0, m, MPI_COMM_SELF, &rq[1]); break;
        case 6: MPI_Rsend_init_c(s, n, MPI_INT, 0, m, MPI_COMM_SELF, &rq[1]); break;
        case 7: MPI_Send_init_c(s, n, MPI_INT, 0, m, MPI_COMM_SELF, &rq[1]); break;
        case 8: MPI_Ssend_init_c(s, n, MPI_INT, 0, m, MPI_COMM_SELF, &rq[1]); break;
        default: rq[1] = MPI_REQUEST_NULL; break;
        }
        if (m >= 5 && m <= 8)
            MPI_Start(&rq[1]);
        if (m == 9) { /* Ssend_c blocks until matched: the receive is posted */
            MPI_Ssend_c(s, n, MPI_INT, 0, m, MPI_COMM_SELF);
        }
        if (m < 2)
            rq[1] = MPI_REQUEST_NULL;
        MPI_Status sts[2];
        MPI_Waitall(2, rq, sts);
        if (m >= 5 && m <= 8)
            MPI_Request_free(&rq[1]);
        MT_CHECK(r[0] == 1 && r[3] == 4, "send mode %d (_c): %d %d", m, r[0], r[3]);
    }
    MPI_Buffer_detach(&bbuf, &bsz);
    free(bbuf);
}

/* Datatype constructors, queries and packing with MPI_Count / MPI_Aint arguments. */
static void test_types(void)
{
    MPI_Datatype t[12];
    MPI_Count sz, lb, ext, tlb, text;
    MPI_Count bl2[2] = {1, 2}, disp2[2] = {0, 3};
    MPI_Count bdisp2[2] = {0, 3 * sizeof(int)};
    MPI_Datatype types2[2] = {MPI_INT, MPI_INT};
    MPI_Count gs[2] = {4, 4}, ss[2] = {2, 2}, st[2] = {1, 1};
    int gsz[1] = {8}, distr[1] = {MPI_DISTRIBUTE_BLOCK}, darg[1] = {MPI_DISTRIBUTE_DFLT_DARG}, psz[1] = {2};
    MPI_Type_contiguous_c(3, MPI_INT, &t[0]);
    MPI_Type_indexed_c(2, bl2, disp2, MPI_INT, &t[1]);
    MPI_Type_create_indexed_block_c(2, 2, disp2, MPI_INT, &t[2]);
    MPI_Type_create_hindexed_c(2, bl2, bdisp2, MPI_INT, &t[3]);
    MPI_Type_create_hindexed_block_c(2, 2, bdisp2, MPI_INT, &t[4]);
    MPI_Type_create_hvector_c(2, 2, 3 * sizeof(int), MPI_INT, &t[5]);
    MPI_Type_create_struct_c(2, bl2, bdisp2, types2, &t[6]);
    MPI_Type_create_resized_c(MPI_INT, 0, 2 * sizeof(int), &t[7]);
    MPI_Type_create_subarray_c(2, gs, ss, st, MPI_ORDER_C, MPI_INT, &t[8]);
    MPI_Type_create_darray_c(2, 1, 1, (MPI_Count[]){8}, distr, darg, psz, MPI_ORDER_C, MPI_INT, &t[9]);
    (void) gsz;
    static const MPI_Count want_size[10] = {3, 3, 4, 3, 4, 4, 3, 1, 4, 4};
    static const MPI_Count want_ext[10] = {3, 5, 5, 5, 5, 5, 5, 2, 16, 8};
    for (int i = 0; i < 10; i++) {
        MPI_Type_commit(&t[i]);
        MPI_Type_size_c(t[i], &sz);
        MPI_Type_get_extent_c(t[i], &lb, &ext);
        MT_CHECK(sz == want_size[i] * (MPI_Count) sizeof(int), "type %d: size %lld", i, (long long) sz);
        MT_CHECK(ext == want_ext[i] * (MPI_Count) sizeof(int), "type %d: extent %lld", i, (long long) ext);
    }
    MPI_Type_get_true_extent_c(t[8], &tlb, &text);
    MT_CHECK(tlb == 5 * (MPI_Count) sizeof(int) && text == 6 * (MPI_Count) sizeof(int),
             "subarray true extent_c %lld %lld", (long long) tlb, (long long) text);
    tlb = text = -1;
    MPI_Type_get_true_extent_x(t[8], &tlb, &text);
    MT_CHECK(tlb == 5 * (MPI_Count) sizeof(int) && text == 6 * (MPI_Count) sizeof(int),
             "subarray true extent_x %lld %lld", (long long) tlb, (long long) text);
    /* pack a vector-like indexed type (ints 0 and 3, 4), unpack it back */
    int src[5] = {10, 11, 12, 13, 14}, dst[5] = {0, 0, 0, 0, 0};
    char buf[64];
    MPI_Count psize, pos = 0, upos = 0, esize, epos = 0, eupos = 0;
    MPI_Pack_size_c(1, t[1], MPI_COMM_WORLD, &psize);
    MT_CHECK(psize >= 3 * (MPI_Count) sizeof(int), "pack_size_c %lld", (long long) psize);
    MPI_Pack_c(src, 1, t[1], buf, sizeof(buf), &pos, MPI_COMM_WORLD);
    MT_CHECK(pos == 3 * (MPI_Count) sizeof(int), "pack_c position %lld", (long long) pos);
    MPI_Unpack_c(buf, pos, &upos, dst, 1, t[1], MPI_COMM_WORLD);
    MT_CHECK(upos == pos && dst[0] == 10 && dst[1] == 0 && dst[3] == 13 && dst[4] == 14, "unpack_c: %d %d %d %d",
             dst[0], dst[1], dst[3], dst[4]);
    MPI_Pack_external_size_c("external32", 2, MPI_INT, &esize);
    MT_CHECK(esize == 8, "pack_external_size_c %lld", (long long) esize);
    MPI_Pack_external_c("external32", src, 2, MPI_INT, buf, sizeof(buf), &epos);
    MT_CHECK(epos == 8 && (unsigned char) buf[3] == 10, "pack_external_c %lld %d", (long long) epos, buf[3]);
    memset(dst, 0, sizeof(dst));
    MPI_Unpack_external_c("external32", buf, epos, &eupos, dst, 2, MPI_INT);
    MT_CHECK(eupos == 8 && dst[0] == 10 && dst[1] == 11, "unpack_external_c %d %d", dst[0], dst[1]);
    for (int i = 0; i < 10; i++)
        MPI_Type_free(&t[i]);
}

int main(int argc, char **argv)
{
    mt_init(&argc, &argv);
    if (mt_size > MAXP) {
        if (mt_rank == 0)
            fprintf(stderr, "at most %d processes\n", MAXP);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    W = MPI_COMM_WORLD;
    for (int mode = 0; mode < 3; mode++) {
        test_colls(mode);
        test_neighbors(mode);
    }
    test_p2p();
    test_types();
    return mt_finish();
}
