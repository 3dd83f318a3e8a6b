/*
 * Gather(v), Scatter(v), Allgather(v), Alltoall(v,w) in their blocking, nonblocking and
 * persistent forms on MPI_COMM_WORLD and a split communicator: zero and odd counts, every root,
 * MPI_IN_PLACE where the standard allows it, a strided (resized) datatype on either side; every
 * result is checked against values computed locally. Run with UMPI_<COLL>_ALGORITHM to force each
 * algorithm. Also checks the errors of misused arguments (MPI_ERRORS_RETURN). Buffers of the memory
 * kind under test (MPITEST_MEMTYPE, mtest.h).
 */
#include "mtest.h"

#include <string.h>

/* Element i of a buffer of type k: k = 0 MPI_INT, 1 every other int (resized). */
static MPI_Datatype ty[2];
static int stride[2] = {1, 2};

static int val(int from, int to, int i)
{
    return from * 10000 + to * 100 + i + 1;
}

static int *ibuf(size_t elems, int k)
{
    size_t n = elems * (size_t) stride[k] + 1;
    int *b = mt_malloc(n * sizeof(int));
    for (size_t i = 0; i < n; i++)
        b[i] = -1;
    return b;
}
#define AT(b, k, i) ((b)[(size_t) (i) * (size_t) stride[k]])

/* Runs one collective in mode m: 0 blocking, 1 nonblocking, 2 persistent (started `starts` times). */
#define RUN3(m, starts, B, I, P)                                                                          \
    do {                                                                                                  \
        MPI_Request rq_;                                                                                  \
        mt_put_all();                                                                                     \
        if ((m) == 0) {                                                                                   \
            B;                                                                                            \
        } else if ((m) == 1) {                                                                            \
            I;                                                                                            \
            MPI_Wait(&rq_, MPI_STATUS_IGNORE);                                                            \
        } else {                                                                                          \
            P;                                                                                            \
            for (int st_ = 0; st_ < (starts); st_++) {                                                    \
                MPI_Start(&rq_);                                                                          \
                MPI_Wait(&rq_, MPI_STATUS_IGNORE);                                                        \
            }                                                                                             \
            MPI_Request_free(&rq_);                                                                       \
        }                                                                                                 \
        mt_get_all();                                                                                     \
    } while (0)

static MPI_Comm cm;
static int me, np;

static void gather(int n, int root, int m, int inplace, int sk, int rk)
{
    int *s = ibuf((size_t) n, sk), *r = ibuf((size_t) n * np, rk);
    for (int i = 0; i < n; i++)
        AT(s, sk, i) = val(me, root, i);
    const void *sb = s;
    if (inplace && me == root) {
        for (int i = 0; i < n; i++)
            AT(r, rk, root * n + i) = val(me, root, i);
        sb = MPI_IN_PLACE;
    }
    RUN3(m, inplace ? 1 : 2, MPI_Gather(mt_d(sb), n, ty[sk], mt_d(r), n, ty[rk], root, cm),
         MPI_Igather(mt_d(sb), n, ty[sk], mt_d(r), n, ty[rk], root, cm, &rq_),
         MPI_Gather_init(mt_d(sb), n, ty[sk], mt_d(r), n, ty[rk], root, cm, MPI_INFO_NULL, &rq_));
    if (me == root)
        for (int j = 0; j < np; j++)
            for (int i = 0; i < n; i++)
                MT_CHECK(AT(r, rk, j * n + i) == val(j, root, i), "gather n=%d root=%d mode=%d inplace=%d types %d%d: "
                         "[%d][%d] = %d", n, root, m, inplace, sk, rk, j, i, AT(r, rk, j * n + i));
    mt_mfree(s);
    mt_mfree(r);
}

static void scatter(int n, int root, int m, int inplace, int sk, int rk)
{
    int *s = ibuf((size_t) n * np, sk), *r = ibuf((size_t) n, rk);
    if (me == root)
        for (int j = 0; j < np; j++)
            for (int i = 0; i < n; i++)
                AT(s, sk, j * n + i) = val(root, j, i);
    void *rb = inplace && me == root ? MPI_IN_PLACE : r;
    RUN3(m, 2, MPI_Scatter(mt_d(s), n, ty[sk], mt_d(rb), n, ty[rk], root, cm),
         MPI_Iscatter(mt_d(s), n, ty[sk], mt_d(rb), n, ty[rk], root, cm, &rq_),
         MPI_Scatter_init(mt_d(s), n, ty[sk], mt_d(rb), n, ty[rk], root, cm, MPI_INFO_NULL, &rq_));
    for (int i = 0; i < n; i++) {
        int got = rb == MPI_IN_PLACE ? AT(s, sk, root * n + i) : AT(r, rk, i);
        MT_CHECK(got == val(root, me, i), "scatter n=%d root=%d mode=%d inplace=%d types %d%d: [%d] = %d", n, root,
                 m, inplace, sk, rk, i, got);
    }
    mt_mfree(s);
    mt_mfree(r);
}

/* v kinds: member j's block has (j + shift) % 3 * n elements, blocks in reverse order with a gap */
static void vlayout(int n, int shift, int *counts, int *displs, int *total)
{
    int off = 0;
    for (int j = np - 1; j >= 0; j--) {
        counts[j] = (j + shift) % 3 * n;
        displs[j] = off;
        off += counts[j] + 1;
    }
    *total = off;
}

static void gatherv(int n, int root, int m, int inplace, int sk, int rk)
{
    int counts[8], displs[8], total;
    vlayout(n, root, counts, displs, &total);
    int mine = counts[me];
    int *s = ibuf((size_t) mine, sk), *r = ibuf((size_t) total, rk);
    for (int i = 0; i < mine; i++)
        AT(s, sk, i) = val(me, root, i);
    const void *sb = s;
    if (inplace && me == root) {
        for (int i = 0; i < mine; i++)
            AT(r, rk, displs[root] + i) = val(me, root, i);
        sb = MPI_IN_PLACE;
    }
    /* non-roots pass NULL count arrays: they are not significant there */
    int *c = me == root ? counts : NULL, *d = me == root ? displs : NULL;
    RUN3(m, inplace ? 1 : 2, MPI_Gatherv(mt_d(sb), mine, ty[sk], mt_d(r), c, d, ty[rk], root, cm),
         MPI_Igatherv(mt_d(sb), mine, ty[sk], mt_d(r), c, d, ty[rk], root, cm, &rq_),
         MPI_Gatherv_init(mt_d(sb), mine, ty[sk], mt_d(r), c, d, ty[rk], root, cm, MPI_INFO_NULL, &rq_));
    if (me == root)
        for (int j = 0; j < np; j++)
            for (int i = 0; i < counts[j]; i++)
                MT_CHECK(AT(r, rk, displs[j] + i) == val(j, root, i), "gatherv n=%d root=%d mode=%d: [%d][%d] = %d",
                         n, root, m, j, i, AT(r, rk, displs[j] + i));
    mt_mfree(s);
    mt_mfree(r);
}

static void scatterv(int n, int root, int m, int inplace, int sk, int rk)
{
    int counts[8], displs[8], total;
    vlayout(n, root + 1, counts, displs, &total);
    int mine = counts[me];
    int *s = ibuf((size_t) total, sk), *r = ibuf((size_t) mine, rk);
    if (me == root)
        for (int j = 0; j < np; j++)
            for (int i = 0; i < counts[j]; i++)
                AT(s, sk, displs[j] + i) = val(root, j, i);
    void *rb = inplace && me == root ? MPI_IN_PLACE : r;
    int *c = me == root ? counts : NULL, *d = me == root ? displs : NULL;
    RUN3(m, 2, MPI_Scatterv(mt_d(s), c, d, ty[sk], mt_d(rb), mine, ty[rk], root, cm),
         MPI_Iscatterv(mt_d(s), c, d, ty[sk], mt_d(rb), mine, ty[rk], root, cm, &rq_),
         MPI_Scatterv_init(mt_d(s), c, d, ty[sk], mt_d(rb), mine, ty[rk], root, cm, MPI_INFO_NULL, &rq_));
    for (int i = 0; i < mine; i++) {
        int got = rb == MPI_IN_PLACE ? AT(s, sk, displs[root] + i) : AT(r, rk, i);
        MT_CHECK(got == val(root, me, i), "scatterv n=%d root=%d mode=%d: [%d] = %d", n, root, m, i, got);
    }
    mt_mfree(s);
    mt_mfree(r);
}

static void allgather(int n, int m, int inplace, int sk, int rk)
{
    int *s = ibuf((size_t) n, sk), *r = ibuf((size_t) n * np, rk);
    for (int i = 0; i < n; i++)
        AT(s, sk, i) = val(me, 0, i);
    const void *sb = s;
    if (inplace) {
        for (int i = 0; i < n; i++)
            AT(r, rk, me * n + i) = val(me, 0, i);
        sb = MPI_IN_PLACE;
    }
    RUN3(m, 2, MPI_Allgather(mt_d(sb), n, ty[sk], mt_d(r), n, ty[rk], cm),
         MPI_Iallgather(mt_d(sb), n, ty[sk], mt_d(r), n, ty[rk], cm, &rq_),
         MPI_Allgather_init(mt_d(sb), n, ty[sk], mt_d(r), n, ty[rk], cm, MPI_INFO_NULL, &rq_));
    for (int j = 0; j < np; j++)
        for (int i = 0; i < n; i++)
            MT_CHECK(AT(r, rk, j * n + i) == val(j, 0, i), "allgather n=%d mode=%d inplace=%d types %d%d: [%d][%d] = %d",
                     n, m, inplace, sk, rk, j, i, AT(r, rk, j * n + i));
    mt_mfree(s);
    mt_mfree(r);
}

static void allgatherv(int n, int m, int inplace, int sk, int rk)
{
    int counts[8], displs[8], total;
    vlayout(n, 1, counts, displs, &total);
    int mine = counts[me];
    int *s = ibuf((size_t) mine, sk), *r = ibuf((size_t) total, rk);
    for (int i = 0; i < mine; i++)
        AT(s, sk, i) = val(me, 0, i);
    const void *sb = s;
    if (inplace) {
        for (int i = 0; i < mine; i++)
            AT(r, rk, displs[me] + i) = val(me, 0, i);
        sb = MPI_IN_PLACE;
    }
    RUN3(m, 2, MPI_Allgatherv(mt_d(sb), mine, ty[sk], mt_d(r), counts, displs, ty[rk], cm),
         MPI_Iallgatherv(mt_d(sb), mine, ty[sk], mt_d(r), counts, displs, ty[rk], cm, &rq_),
         MPI_Allgatherv_init(mt_d(sb), mine, ty[sk], mt_d(r), counts, displs, ty[rk], cm, MPI_INFO_NULL, &rq_));
    for (int j = 0; j < np; j++)
        for (int i = 0; i < counts[j]; i++)
            MT_CHECK(AT(r, rk, displs[j] + i) == val(j, 0, i), "allgatherv n=%d mode=%d inplace=%d: [%d][%d] = %d", n,
                     m, inplace, j, i, AT(r, rk, displs[j] + i));
    mt_mfree(s);
    mt_mfree(r);
}

static void alltoall(int n, int m, int inplace, int sk, int rk)
{
    int *s = ibuf((size_t) n * np, sk), *r = ibuf((size_t) n * np, rk);
    for (int j = 0; j < np; j++)
        for (int i = 0; i < n; i++) {
            AT(s, sk, j * n + i) = val(me, j, i);
            if (inplace)
                AT(r, rk, j * n + i) = val(me, j, i);
        }
    const void *sb = inplace ? MPI_IN_PLACE : s;
    RUN3(m, inplace ? 1 : 2, MPI_Alltoall(mt_d(sb), n, ty[sk], mt_d(r), n, ty[rk], cm),
         MPI_Ialltoall(mt_d(sb), n, ty[sk], mt_d(r), n, ty[rk], cm, &rq_),
         MPI_Alltoall_init(mt_d(sb), n, ty[sk], mt_d(r), n, ty[rk], cm, MPI_INFO_NULL, &rq_));
    for (int j = 0; j < np; j++)
        for (int i = 0; i < n; i++)
            MT_CHECK(AT(r, rk, j * n + i) == val(j, me, i), "alltoall n=%d mode=%d inplace=%d types %d%d: [%d][%d] = %d",
                     n, m, inplace, sk, rk, j, i, AT(r, rk, j * n + i));
    mt_mfree(s);
    mt_mfree(r);
}

/* alltoallv / alltoallw (w: byte displacements, a datatype per peer): from j to me, (j + me) % 3 * n
 * elements; blocks in reverse order with gaps */
static void alltoallv(int n, int m, int inplace, int w, int sk, int rk)
{
    int sc[8], sd[8], rc[8], rd[8], soff = 0, roff = 0;
    MPI_Datatype st[8], rt[8];
    for (int j = np - 1; j >= 0; j--) {
        sc[j] = (me + j) % 3 * n;
        rc[j] = (j + me) % 3 * n;
        sd[j] = soff;
        rd[j] = roff;
        soff += sc[j] + 1;
        roff += rc[j] + 1;
    }
    int *s = ibuf((size_t) soff, sk), *r = ibuf((size_t) roff, rk);
    for (int j = 0; j < np; j++)
        for (int i = 0; i < sc[j]; i++) {
            AT(s, sk, sd[j] + i) = val(me, j, i);
            if (inplace)
                AT(r, rk, rd[j] + i) = val(me, j, i);
        }
    const void *sb = inplace ? MPI_IN_PLACE : s;
    if (!w) {
        RUN3(m, inplace ? 1 : 2, MPI_Alltoallv(mt_d(sb), sc, sd, ty[sk], mt_d(r), rc, rd, ty[rk], cm),
             MPI_Ialltoallv(mt_d(sb), sc, sd, ty[sk], mt_d(r), rc, rd, ty[rk], cm, &rq_),
             MPI_Alltoallv_init(mt_d(sb), sc, sd, ty[sk], mt_d(r), rc, rd, ty[rk], cm, MPI_INFO_NULL, &rq_));
    } else {
        int sdb[8], rdb[8];
        for (int j = 0; j < np; j++) {
            /* alternate the datatypes per peer; displacements in bytes */
            int skj = (sk + j) % 2, rkj = (rk + j) % 2;
            st[j] = ty[skj];
            rt[j] = ty[rkj];
            sdb[j] = sd[j] * stride[sk] * (int) sizeof(int);
            rdb[j] = rd[j] * stride[rk] * (int) sizeof(int);
        }
        /* the blocks are spaced for the wider of the two layouts */
        int *s2 = ibuf((size_t) soff * 2, 0), *r2 = ibuf((size_t) roff * 2, 0);
        for (int j = 0; j < np; j++) {
            sdb[j] = sd[j] * 2 * (int) sizeof(int);
            rdb[j] = rd[j] * 2 * (int) sizeof(int);
            int skj = (sk + j) % 2;
            for (int i = 0; i < sc[j]; i++) {
                s2[sd[j] * 2 + i * stride[skj]] = val(me, j, i);
                if (inplace)
                    r2[rd[j] * 2 + i * stride[(rk + j) % 2]] = val(me, j, i);
            }
        }
        const void *sb2 = inplace ? MPI_IN_PLACE : s2;
        RUN3(m, inplace ? 1 : 2, MPI_Alltoallw(mt_d(sb2), sc, sdb, st, mt_d(r2), rc, rdb, rt, cm),
             MPI_Ialltoallw(mt_d(sb2), sc, sdb, st, mt_d(r2), rc, rdb, rt, cm, &rq_),
             MPI_Alltoallw_init(mt_d(sb2), sc, sdb, st, mt_d(r2), rc, rdb, rt, cm, MPI_INFO_NULL, &rq_));
        for (int j = 0; j < np; j++)
            for (int i = 0; i < rc[j]; i++) {
                int got = r2[rd[j] * 2 + i * stride[(rk + j) % 2]];
                MT_CHECK(got == val(j, me, i), "alltoallw n=%d mode=%d inplace=%d: [%d][%d] = %d", n, m, inplace, j, i,
                         got);
            }
        mt_mfree(s2);
        mt_mfree(r2);
        mt_mfree(s);
        mt_mfree(r);
        return;
    }
    for (int j = 0; j < np; j++)
        for (int i = 0; i < rc[j]; i++)
            MT_CHECK(AT(r, rk, rd[j] + i) == val(j, me, i), "alltoallv n=%d mode=%d inplace=%d types %d%d: [%d][%d] = %d",
                     n, m, inplace, sk, rk, j, i, AT(r, rk, rd[j] + i));
    mt_mfree(s);
    mt_mfree(r);
}

static void run(MPI_Comm comm)
{
    cm = comm;
    MPI_Comm_rank(comm, &me);
    MPI_Comm_size(comm, &np);
    static const int counts[] = {0, 1, 5, 300};
    static const int types[][2] = {{0, 0}, {1, 0}, {0, 1}};
    for (unsigned c = 0; c < sizeof(counts) / sizeof(counts[0]); c++) {
        int n = counts[c];
        for (int m = 0; m < 3; m++)
            for (int ip = 0; ip < 2; ip++)
                for (unsigned t = 0; t < 3; t++) {
                    /* the datatype combinations with the blocking form, the forms with plain ints */
                    if (m != 0 && t != 0)
                        continue;
                    int sk = types[t][0], rk = types[t][1];
                    for (int root = 0; root < np; root++) {
                        gather(n, root, m, ip, sk, rk);
                        scatter(n, root, m, ip, sk, rk);
                        gatherv(n, root, m, ip, sk, rk);
                        scatterv(n, root, m, ip, sk, rk);
                    }
                    allgather(n, m, ip, sk, rk);
                    allgatherv(n, m, ip, sk, rk);
                    alltoall(n, m, ip, sk, rk);
                    alltoallv(n, m, ip, 0, sk, rk);
                    alltoallv(n, m, ip, 1, sk, rk);
                }
    }
}

/* Misused arguments return the standard's error classes. */
static void errors(void)
{
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    int a[64], b[64], cls, cnt[8], dsp[8];
    for (int j = 0; j < 8; j++) {
        cnt[j] = 1;
        dsp[j] = j;
    }
    int err = MPI_Gather(a, 1, MPI_INT, b, 1, MPI_INT, mt_size, MPI_COMM_WORLD);
    MPI_Error_class(err, &cls);
    MT_CHECK(cls == MPI_ERR_ROOT, "gather bad root: class %d", cls);
    err = MPI_Allgather(a, -1, MPI_INT, b, 1, MPI_INT, MPI_COMM_WORLD);
    MPI_Error_class(err, &cls);
    MT_CHECK(cls == MPI_ERR_COUNT, "allgather negative sendcount: class %d", cls);
    err = MPI_Alltoall(b, 1, MPI_INT, b, 1, MPI_INT, MPI_COMM_WORLD);
    MPI_Error_class(err, &cls);
    MT_CHECK(cls == MPI_ERR_BUFFER, "alltoall aliased buffers: class %d", cls);
    err = MPI_Allgather(a, 1, MPI_DATATYPE_NULL, b, 1, MPI_INT, MPI_COMM_WORLD);
    MPI_Error_class(err, &cls);
    MT_CHECK(cls == MPI_ERR_TYPE, "allgather null sendtype: class %d", cls);
    if (mt_size > 1) {
        /* MPI_IN_PLACE at a non-root */
        err = MPI_Gather(MPI_IN_PLACE, 1, MPI_INT, b, 1, MPI_INT, mt_rank == 0 ? 1 : 0, MPI_COMM_WORLD);
        MPI_Error_class(err, &cls);
        MT_CHECK(cls == MPI_ERR_BUFFER, "gather in place at a non-root: class %d", cls);
    }
    cnt[mt_size - 1] = -2;
    err = MPI_Alltoallv(a, cnt, dsp, MPI_INT, b, cnt, dsp, MPI_INT, MPI_COMM_WORLD);
    MPI_Error_class(err, &cls);
    MT_CHECK(cls == MPI_ERR_COUNT, "alltoallv negative count: class %d", cls);
    /* the root's arguments are not checked elsewhere: a NULL recvtype at non-roots is fine */
    err = MPI_Gather(a, 1, MPI_INT, mt_rank == 0 ? b : NULL, 1, mt_rank == 0 ? MPI_INT : MPI_DATATYPE_NULL, 0,
                     MPI_COMM_WORLD);
    MT_CHECK(err == MPI_SUCCESS, "gather with unused root arguments at non-roots: %d", err);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
}

int main(int argc, char **argv)
{
    mt_init(&argc, &argv);
    ty[0] = MPI_INT;
    MPI_Type_create_resized(MPI_INT, 0, 2 * sizeof(int), &ty[1]);
    MPI_Type_commit(&ty[1]);
    run(MPI_COMM_WORLD);
    MPI_Comm half;
    MPI_Comm_split(MPI_COMM_WORLD, mt_rank % 2, -mt_rank, &half);
    run(half);
    MPI_Comm_free(&half);
    /* erroneous calls: what other implementations do with them is undefined (MPICH crashes) */
    char lib[MPI_MAX_LIBRARY_VERSION_STRING];
    int len;
    MPI_Get_library_version(lib, &len);
    if (strstr(lib, "umpi") != NULL)
        errors();
    MPI_Type_free(&ty[1]);
    return mt_finish();
}
