/*
 * Point-to-point of derived datatypes, checked element by element: vector, indexed, struct and
 * subarray types, small (eager) and large (rendezvous, several MiB) messages, sender and receiver
 * using different types with the same type signature, MPI_Pack/MPI_Unpack round trips (also
 * piece by piece), MPI_Get_elements of partial messages, truncation, and MPI_Type_free while the
 * operations that use the type are still pending. With one rank, the messages go to itself.
 * MPICH 4.0.2 fails the MPI_Pack overflow check and MPI_Status_set_elements with a derived type
 * (it counts whole elements of the type where MPI_Get_elements must give back the basic
 * elements that were set); it passes the rest. The vector, subarray and large-block buffers are of
 * the memory kind under test (MPITEST_MEMTYPE, mtest.h).
 */
#include "mtest.h"

#include <stddef.h>

/* Sends count elements of stype from sbuf and receives them as rcount of rtype into rbuf, between
 * ranks 0 and 1 (rank 0 sends, rank 1 receives), or to self with one rank. */
static void xfer(const void *sbuf, int count, MPI_Datatype stype, void *rbuf, int rcount, MPI_Datatype rtype,
                 MPI_Status *st)
{
    MPI_Request r = MPI_REQUEST_NULL;
    mt_put_all(); /* buffers from mt_malloc: MPI gets their mirrors (mt_d) */
    if (mt_size == 1) {
        MPI_Irecv(mt_d(rbuf), rcount, rtype, 0, 7, MPI_COMM_WORLD, &r);
        MPI_Send(mt_d(sbuf), count, stype, 0, 7, MPI_COMM_WORLD);
        MPI_Wait(&r, st);
    } else if (mt_rank == 0) {
        MPI_Send(mt_d(sbuf), count, stype, 1, 7, MPI_COMM_WORLD);
    } else if (mt_rank == 1) {
        MPI_Recv(mt_d(rbuf), rcount, rtype, 0, 7, MPI_COMM_WORLD, st);
    }
    mt_get_all();
}

static int receiver(void)
{
    return mt_size == 1 || mt_rank == 1;
}

static void test_vector(int n)
{
    /* every other double of 2n doubles, received contiguously */
    double *src = mt_malloc(2 * n * sizeof(double)), *dst = mt_malloc(n * sizeof(double));
    MPI_Datatype v;
    MPI_Status st;
    MPI_Type_vector(n, 1, 2, MPI_DOUBLE, &v);
    MPI_Type_commit(&v);
    for (int i = 0; i < 2 * n; i++)
        src[i] = i + 0.5;
    memset(dst, 0, n * sizeof(double));
    xfer(src, 1, v, dst, n, MPI_DOUBLE, &st);
    if (receiver()) {
        int bad = 0;
        for (int i = 0; i < n; i++)
            bad += dst[i] != 2 * i + 0.5;
        MT_CHECK(bad == 0, "vector of %d: %d wrong", n, bad);
    }
    /* and back: contiguous into the vector, the gaps untouched */
    for (int i = 0; i < n; i++)
        dst[i] = -i;
    for (int i = 0; i < 2 * n; i++)
        src[i] = 7;
    xfer(dst, n, MPI_DOUBLE, src, 1, v, &st);
    if (receiver()) {
        int bad = 0;
        for (int i = 0; i < 2 * n; i++)
            bad += src[i] != (i % 2 ? 7 : -(i / 2));
        MT_CHECK(bad == 0, "into vector of %d: %d wrong", n, bad);
        int c;
        MPI_Get_count(&st, v, &c);
        MT_CHECK(c == 1, "count of vector %d", c);
    }
    MPI_Type_free(&v);
    mt_mfree(src);
    mt_mfree(dst);
}

static void test_indexed_struct(void)
{
    /* indexed: blocks in an order different from their addresses */
    int src[16], dst[16];
    MPI_Datatype ix;
    MPI_Status st;
    for (int i = 0; i < 16; i++)
        src[i] = 100 + i, dst[i] = -1;
    MPI_Type_indexed(3, (int[]) {2, 1, 3}, (int[]) {10, 0, 4}, MPI_INT, &ix);
    MPI_Type_commit(&ix);
    xfer(src, 1, ix, dst, 6, MPI_INT, &st);
    if (receiver()) {
        int want[6] = {110, 111, 100, 104, 105, 106};
        for (int i = 0; i < 6; i++)
            MT_CHECK(dst[i] == want[i], "indexed element %d: %d, want %d", i, dst[i], want[i]);
    }
    MPI_Type_free(&ix);

    /* struct { int a; double b[2]; char c; } x 3, sent as the struct, received as the struct */
    struct s { int a; double b[2]; char c; } ss[3], rs[3];
    MPI_Datatype t;
    MPI_Type_create_struct(3, (int[]) {1, 2, 1},
                           (MPI_Aint[]) {offsetof(struct s, a), offsetof(struct s, b), offsetof(struct s, c)},
                           (MPI_Datatype[]) {MPI_INT, MPI_DOUBLE, MPI_CHAR}, &t);
    MPI_Type_commit(&t);
    MPI_Aint lb, ext;
    MPI_Type_get_extent(t, &lb, &ext);
    MT_CHECK(ext == sizeof(struct s), "struct extent %ld, sizeof %zu", (long) ext, sizeof(struct s));
    memset(rs, 0, sizeof(rs));
    for (int i = 0; i < 3; i++)
        ss[i].a = i, ss[i].b[0] = i * 1.5, ss[i].b[1] = -i, ss[i].c = (char) ('a' + i);
    xfer(ss, 3, t, rs, 3, t, &st);
    if (receiver()) {
        for (int i = 0; i < 3; i++)
            MT_CHECK(rs[i].a == i && rs[i].b[0] == i * 1.5 && rs[i].b[1] == -i && rs[i].c == 'a' + i,
                     "struct element %d", i);
        /* a partial message: Get_elements counts the basic elements that arrived */
        int e;
        MPI_Get_elements(&st, t, &e);
        MT_CHECK(e == 12, "elements of 3 structs: %d", e);
    }
    /* 1 struct and an int and one double of the next: 4 + 1 + 1 basic elements */
    char raw[64];
    int pos = 0;
    MPI_Pack(ss, 1, t, raw, sizeof(raw), &pos, MPI_COMM_WORLD);
    MPI_Pack(&ss[1].a, 1, MPI_INT, raw, sizeof(raw), &pos, MPI_COMM_WORLD);
    MPI_Pack(&ss[1].b[0], 1, MPI_DOUBLE, raw, sizeof(raw), &pos, MPI_COMM_WORLD);
    xfer(raw, pos, MPI_PACKED, rs, 3, t, &st);
    if (receiver()) {
        int e, c;
        MPI_Count ex;
        MPI_Get_elements(&st, t, &e);
        MPI_Get_elements_x(&st, t, &ex);
        MPI_Get_count(&st, t, &c);
        MT_CHECK(e == 6 && ex == 6, "elements of a partial struct message: %d", e);
        MT_CHECK(c == MPI_UNDEFINED, "count of a partial struct message: %d", c);
        MT_CHECK(rs[1].a == 1 && rs[1].b[0] == 1.5, "partial struct data");
    }
    MPI_Type_free(&t);
}

static void test_subarray(int n)
{
    /* the n/2 x n/2 block at (n/4, n/4) of an n x n array, to the same block of another array */
    int *a = mt_malloc(n * n * sizeof(int)), *b = mt_malloc(n * n * sizeof(int));
    MPI_Datatype sub;
    MPI_Status st;
    int h = n / 2, o = n / 4;
    MPI_Type_create_subarray(2, (int[]) {n, n}, (int[]) {h, h}, (int[]) {o, o}, MPI_ORDER_C, MPI_INT, &sub);
    MPI_Type_commit(&sub);
    for (int i = 0; i < n * n; i++)
        a[i] = i, b[i] = -1;
    xfer(a, 1, sub, b, 1, sub, &st);
    if (receiver()) {
        int bad = 0;
        for (int i = 0; i < n; i++)
            for (int j = 0; j < n; j++) {
                int in = i >= o && i < o + h && j >= o && j < o + h;
                bad += b[i * n + j] != (in ? i * n + j : -1);
            }
        MT_CHECK(bad == 0, "subarray %d: %d wrong", n, bad);
    }
    MPI_Type_free(&sub);
    mt_mfree(a);
    mt_mfree(b);
}

static void test_large_blocks(void)
{
    /* 4 blocks of 64 KiB, 64 KiB apart, two elements: few large blocks (umpi: an iov list) */
    enum { B = 16384 };
    int *src = mt_malloc(16 * B * sizeof(int)), *dst = mt_malloc(16 * B * sizeof(int));
    MPI_Datatype v;
    MPI_Status st;
    MPI_Type_vector(4, B, 2 * B, MPI_INT, &v);
    MPI_Type_commit(&v);
    MPI_Aint lb, ext;
    MPI_Type_get_extent(v, &lb, &ext);
    for (int i = 0; i < 16 * B; i++)
        src[i] = i, dst[i] = -1;
    /* the second element starts at the extent (7 blocks), so it overlaps the first one's gaps */
    xfer(src, 2, v, dst, 2, v, &st);
    if (receiver()) {
        int bad = 0;
        for (int i = 0; i < 16 * B; i++) {
            long blk = i / B;
            int in = (blk % 2 == 0 && blk < 8) || (blk >= 7 && (blk - 7) % 2 == 0 && blk - 7 < 8);
            bad += dst[i] != (in ? i : -1);
        }
        MT_CHECK(bad == 0, "large blocks: %d wrong", bad);
        int c;
        MPI_Get_count(&st, v, &c);
        MT_CHECK(c == 2 && ext == 7 * B * (MPI_Aint) sizeof(int), "count %d extent %ld", c, (long) ext);
    }
    MPI_Type_free(&v);
    mt_mfree(src);
    mt_mfree(dst);
}

static void test_bottom(void)
{
    /* absolute addresses from MPI_Get_address, buffers given as MPI_BOTTOM on both sides */
    static int a = 0;
    static double b[2] = {0, 0};
    MPI_Aint disp[2];
    MPI_Datatype t;
    MPI_Status st;
    MPI_Get_address(&a, &disp[0]);
    MPI_Get_address(b, &disp[1]);
    MPI_Type_create_struct(2, (int[]) {1, 2}, disp, (MPI_Datatype[]) {MPI_INT, MPI_DOUBLE}, &t);
    MPI_Type_commit(&t);
    if (mt_rank == 0) {
        a = 42, b[0] = 0.5, b[1] = -3;
    }
    if (mt_size == 1) {
        int a2 = 0;
        double b2[2] = {0, 0};
        MPI_Request r;
        MPI_Aint d2[2];
        MPI_Datatype t2;
        MPI_Get_address(&a2, &d2[0]);
        MPI_Get_address(b2, &d2[1]);
        MPI_Type_create_struct(2, (int[]) {1, 2}, d2, (MPI_Datatype[]) {MPI_INT, MPI_DOUBLE}, &t2);
        MPI_Type_commit(&t2);
        MPI_Irecv(MPI_BOTTOM, 1, t2, 0, 13, MPI_COMM_WORLD, &r);
        MPI_Send(MPI_BOTTOM, 1, t, 0, 13, MPI_COMM_WORLD);
        MPI_Wait(&r, &st);
        MT_CHECK(a2 == 42 && b2[0] == 0.5 && b2[1] == -3, "MPI_BOTTOM to self: %d %g %g", a2, b2[0], b2[1]);
        MPI_Type_free(&t2);
    } else if (mt_rank == 0) {
        MPI_Send(MPI_BOTTOM, 1, t, 1, 13, MPI_COMM_WORLD);
    } else if (mt_rank == 1) {
        MPI_Recv(MPI_BOTTOM, 1, t, 0, 13, MPI_COMM_WORLD, &st);
        MT_CHECK(a == 42 && b[0] == 0.5 && b[1] == -3, "MPI_BOTTOM: %d %g %g", a, b[0], b[1]);
    }
    /* MPI_Status_set_elements with a derived type: 2 basic elements = the int and one double */
    MPI_Status_set_elements(&st, t, 2);
    int e, c;
    MPI_Get_elements(&st, t, &e);
    MPI_Get_count(&st, t, &c);
    MT_CHECK(e == 2 && c == MPI_UNDEFINED, "set_elements 2: elements %d count %d", e, c);
    MPI_Status_set_elements(&st, t, 6);
    MPI_Get_count(&st, t, &c);
    MT_CHECK(c == 2, "set_elements 6: count %d", c);
    MPI_Type_free(&t);
}

static void test_persistent_mrecv(void)
{
    /* persistent send and receive of a vector, started twice; then a matched receive of one */
    int src[12], dst[12];
    MPI_Datatype v;
    MPI_Request r = MPI_REQUEST_NULL, s = MPI_REQUEST_NULL;
    MPI_Type_vector(3, 2, 4, MPI_INT, &v);
    MPI_Type_commit(&v);
    int to = mt_size == 1 ? 0 : 1;
    if (receiver())
        MPI_Recv_init(dst, 1, v, 0, 15, MPI_COMM_WORLD, &r);
    if (mt_rank == 0)
        MPI_Ssend_init(src, 1, v, to, 15, MPI_COMM_WORLD, &s);
    MPI_Type_free(&v); /* the persistent requests keep it */
    for (int round = 0; round < 2; round++) {
        for (int i = 0; i < 12; i++)
            src[i] = 10 * round + i, dst[i] = -1;
        if (r != MPI_REQUEST_NULL)
            MPI_Start(&r);
        if (s != MPI_REQUEST_NULL)
            MPI_Start(&s);
        MPI_Wait(&s, MPI_STATUS_IGNORE);
        MPI_Wait(&r, MPI_STATUS_IGNORE);
        if (receiver()) {
            int bad = 0;
            for (int i = 0; i < 12; i++)
                bad += dst[i] != (i % 4 < 2 && i < 10 ? 10 * round + i : -1);
            MT_CHECK(bad == 0, "persistent vector round %d: %d wrong", round, bad);
        }
    }
    if (r != MPI_REQUEST_NULL)
        MPI_Request_free(&r);
    if (s != MPI_REQUEST_NULL)
        MPI_Request_free(&s);

    MPI_Type_vector(3, 2, 4, MPI_INT, &v);
    MPI_Type_commit(&v);
    if (mt_rank == 0 && mt_size > 1)
        MPI_Send(src, 1, v, 1, 16, MPI_COMM_WORLD);
    if (mt_size == 1)
        MPI_Isend(src, 1, v, 0, 16, MPI_COMM_WORLD, &s);
    if (receiver()) {
        MPI_Message m;
        MPI_Status st;
        for (int i = 0; i < 12; i++)
            dst[i] = -1;
        MPI_Mprobe(0, 16, MPI_COMM_WORLD, &m, &st);
        MPI_Mrecv(dst, 1, v, &m, &st);
        int bad = 0;
        for (int i = 0; i < 12; i++)
            bad += dst[i] != (i % 4 < 2 && i < 10 ? src[i] : -1);
        MT_CHECK(bad == 0, "mrecv of a vector: %d wrong", bad);
    }
    if (mt_size == 1)
        MPI_Wait(&s, MPI_STATUS_IGNORE);
    MPI_Type_free(&v);
}

static void test_pack(void)
{
    /* pack a vector of 3 ints and a double, unpack them; then pack in pieces and unpack as a whole */
    int iv[12] = {1, 2, 3, 4, 5, 6}, io[6] = {0};
    double d = 2.25, dd = 0;
    MPI_Datatype v;
    MPI_Type_vector(3, 1, 2, MPI_INT, &v);
    MPI_Type_commit(&v);
    int size, pos = 0;
    MPI_Pack_size(1, v, MPI_COMM_WORLD, &size);
    MT_CHECK(size >= 12, "pack size %d", size);
    char buf[64];
    MPI_Pack(iv, 1, v, buf, sizeof(buf), &pos, MPI_COMM_WORLD);
    MPI_Pack(&d, 1, MPI_DOUBLE, buf, sizeof(buf), &pos, MPI_COMM_WORLD);
    MT_CHECK(pos == 20, "position after packing %d", pos);
    int upos = 0;
    MPI_Unpack(buf, pos, &upos, io, 1, v, MPI_COMM_WORLD);
    MPI_Unpack(buf, pos, &upos, &dd, 1, MPI_DOUBLE, MPI_COMM_WORLD);
    MT_CHECK(upos == 20 && io[0] == 1 && io[1] == 0 && io[2] == 3 && io[4] == 5 && dd == 2.25,
             "unpack: %d %d %d %d %g", io[0], io[1], io[2], io[4], dd);
    /* too small an output buffer (MPICH 4.0.2 packs past the end without an error) */
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    pos = 0;
    int err = MPI_Pack(iv, 2, v, buf, 16, &pos, MPI_COMM_WORLD), cls;
    MPI_Error_class(err, &cls);
    MT_CHECK(cls == MPI_ERR_TRUNCATE, "pack past the end: class %d", cls);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
    MPI_Type_free(&v);
}

static void test_free_pending(void)
{
    /* MPI_Type_free while a receive and a large send using the type are pending */
    enum { N = 1 << 18 };
    double *src = malloc(2 * N * sizeof(double)), *dst = malloc(2 * N * sizeof(double));
    MPI_Datatype v;
    MPI_Request rq[2] = {MPI_REQUEST_NULL, MPI_REQUEST_NULL};
    for (int i = 0; i < 2 * N; i++)
        src[i] = i, dst[i] = -1;
    MPI_Type_vector(N, 1, 2, MPI_DOUBLE, &v);
    MPI_Type_commit(&v);
    if (receiver())
        MPI_Irecv(dst, 1, v, 0, 9, MPI_COMM_WORLD, &rq[0]);
    if (mt_rank == 0)
        MPI_Isend(src, 1, v, mt_size == 1 ? 0 : 1, 9, MPI_COMM_WORLD, &rq[1]);
    MPI_Type_free(&v);
    MT_CHECK(v == MPI_DATATYPE_NULL, "freed type handle");
    MPI_Waitall(2, rq, MPI_STATUSES_IGNORE);
    if (receiver()) {
        int bad = 0;
        for (int i = 0; i < 2 * N; i++)
            bad += dst[i] != (i % 2 ? -1 : i);
        MT_CHECK(bad == 0, "vector freed while pending: %d wrong", bad);
    }
    free(src);
    free(dst);
}

static void test_truncate(void)
{
    int src[8] = {0}, dst[8];
    MPI_Datatype v;
    MPI_Status st;
    MPI_Type_vector(2, 1, 2, MPI_INT, &v);
    MPI_Type_commit(&v);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    int err = MPI_SUCCESS, cls = MPI_SUCCESS;
    if (mt_size == 1) {
        MPI_Request r;
        MPI_Irecv(dst, 1, v, 0, 11, MPI_COMM_WORLD, &r);
        MPI_Send(src, 3, MPI_INT, 0, 11, MPI_COMM_WORLD);
        err = MPI_Wait(&r, &st);
    } else if (mt_rank == 0) {
        MPI_Send(src, 3, MPI_INT, 1, 11, MPI_COMM_WORLD);
    } else if (mt_rank == 1) {
        err = MPI_Recv(dst, 1, v, 0, 11, MPI_COMM_WORLD, &st);
    }
    if (receiver()) {
        MPI_Error_class(err, &cls);
        MT_CHECK(cls == MPI_ERR_TRUNCATE, "3 ints into a vector of 2: class %d", cls);
    }
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
    MPI_Type_free(&v);
}

int main(int argc, char **argv)
{
    mt_init(&argc, &argv);
    if (mt_rank < 2) {
        test_vector(10);
        test_vector(1 << 20); /* 8 MiB: rendezvous, packed in pieces */
        test_indexed_struct();
        test_subarray(8);
        test_subarray(1024);
        test_large_blocks();
        test_bottom();
        test_persistent_mrecv();
        test_pack();
        test_free_pending();
        test_truncate();
    }
    return mt_finish();
}
