/*
 * Reduce, Allreduce, Reduce_scatter, Reduce_scatter_block, Scan and Exscan in their blocking,
 * nonblocking and persistent forms, with MPI_IN_PLACE where the standard allows it, zero counts,
 * odd counts, every root, on MPI_COMM_WORLD and a split communicator; every result is compared
 * with a reference computed locally from what each rank contributed. The testlist forces each
 * algorithm in turn (UMPI_<COLL>_ALGORITHM). The (type, op) pairs are a table: add rows as more
 * predefined ops are supported. A derived datatype (a vector of ints) is tried when the MPI
 * accepts reductions on it. Buffers of the memory kind under test (MPITEST_MEMTYPE, mtest.h).
 */
#include "mtest.h"

typedef struct {
    MPI_Datatype type;
    MPI_Op op;
    const char *name;
} case_t;

static const case_t cases[] = {
    {MPI_INT, MPI_SUM, "int sum"},
    {MPI_DOUBLE, MPI_MAX, "double max"},
    {MPI_LONG, MPI_PROD, "long prod"},
    {MPI_FLOAT, MPI_MIN, "float min"},
};

/* rank r's input element i */
static double val(MPI_Op op, int r, int i)
{
    if (op == MPI_PROD)
        return 1 + ((r + i) % 3 == 0);
    if (op == MPI_SUM)
        return r * 3 + i % 11 - 4;
    return (r * 7 + i * 5) % 17 - 8;
}

static double combine(MPI_Op op, double x, double y)
{
    if (op == MPI_SUM)
        return x + y;
    if (op == MPI_PROD)
        return x * y;
    if (op == MPI_MAX)
        return x > y ? x : y;
    return x < y ? x : y;
}

/* reduction of element i over ranks lo..hi */
static double ref(MPI_Op op, int lo, int hi, int i)
{
    double x = val(op, lo, i);
    for (int r = lo + 1; r <= hi; r++)
        x = combine(op, x, val(op, r, i));
    return x;
}

/* Element access for the basic types of the table; a derived "type" is a vector of ints with a gap. */
static int derived_mode;
/* MPICH 4.0.2 crashes in an in-place MPI_Reduce at a root other than 0 with thousands of ints,
 * and rejects a NULL recvbuf at Exscan's rank 0: those cases run on umpi only. */
static int is_umpi;
static MPI_Datatype vec_type; /* 2 ints every 3, resized to 3 ints: one element = 2 ints */

static size_t esize(MPI_Datatype t)
{
    if (t == MPI_INT)
        return sizeof(int);
    if (t == MPI_DOUBLE)
        return sizeof(double);
    if (t == MPI_LONG)
        return sizeof(long);
    if (t == MPI_FLOAT)
        return sizeof(float);
    return 3 * sizeof(int);
}

/* element i of a buffer of type t (for the vector: its two ints count as elements 2i and 2i+1) */
static void set(MPI_Datatype t, void *b, int i, double x)
{
    if (t == MPI_INT)
        ((int *) b)[i] = (int) x;
    else if (t == MPI_DOUBLE)
        ((double *) b)[i] = x;
    else if (t == MPI_LONG)
        ((long *) b)[i] = (long) x;
    else if (t == MPI_FLOAT)
        ((float *) b)[i] = (float) x;
}

static double get(MPI_Datatype t, const void *b, int i)
{
    if (t == MPI_INT)
        return ((const int *) b)[i];
    if (t == MPI_DOUBLE)
        return ((const double *) b)[i];
    if (t == MPI_LONG)
        return (double) ((const long *) b)[i];
    return ((const float *) b)[i];
}

/* A buffer of n elements of type t filled with rank r's values (or a poison value when r < 0).
 * For the vector type, n elements hold 2n values; the gaps hold a marker that must survive. */
static void *make(MPI_Datatype t, MPI_Op op, int n, int r, int offset)
{
    char *b = mt_malloc(esize(t) * (size_t) (n + 1));
    for (int i = 0; i < n; i++) {
        if (t == vec_type && derived_mode) {
            int *e = (int *) (b + esize(t) * (size_t) i);
            e[0] = r < 0 ? -777 : (int) val(op, r, offset + 2 * i);
            e[1] = r < 0 ? -777 : (int) val(op, r, offset + 2 * i + 1);
            e[2] = 4242;
        } else {
            set(t, b, i, r < 0 ? -777 : val(op, r, offset + i));
        }
    }
    return b;
}

/* Checks n elements of b against the reduction over ranks lo..hi (element numbers from offset). */
static void verify(MPI_Datatype t, MPI_Op op, const void *b, int n, int lo, int hi, int offset, const char *what,
                   int mode, int in_place)
{
    for (int i = 0; i < n; i++) {
        if (t == vec_type && derived_mode) {
            const int *e = (const int *) ((const char *) b + esize(t) * (size_t) i);
            for (int k = 0; k < 2; k++)
                MT_CHECK(e[k] == ref(op, lo, hi, offset + 2 * i + k), "%s (vector) mode %d in_place %d n=%d: [%d][%d]=%d want %g",
                         what, mode, in_place, n, i, k, e[k], ref(op, lo, hi, offset + 2 * i + k));
            MT_CHECK(e[2] == 4242, "%s (vector): gap overwritten at %d: %d", what, i, e[2]);
        } else {
            double want = ref(op, lo, hi, offset + i), got = get(t, b, i);
            MT_CHECK(got == want, "%s mode %d in_place %d n=%d: [%d]=%g want %g", what, mode, in_place, n, i, got,
                     want);
        }
        if (mt_errs > 20)
            return;
    }
}

/* Runs one collective in mode 0 (blocking), 1 (nonblocking) or 2 (persistent, started twice). */
#define RUN(mode, blocking, nonblocking, persistent)                                                        \
    do {                                                                                                   \
        MPI_Request req_;                                                                                  \
        mt_put_all();                                                                                      \
        if ((mode) == 0) {                                                                                 \
            blocking;                                                                                      \
        } else if ((mode) == 1) {                                                                          \
            nonblocking;                                                                                   \
            MPI_Wait(&req_, MPI_STATUS_IGNORE);                                                            \
        } else {                                                                                           \
            persistent;                                                                                    \
            for (int k_ = 0; k_ < 2; k_++) {                                                               \
                MPI_Start(&req_);                                                                          \
                MPI_Wait(&req_, MPI_STATUS_IGNORE);                                                        \
            }                                                                                              \
            MPI_Request_free(&req_);                                                                       \
        }                                                                                                  \
        mt_get_all();                                                                                      \
    } while (0)

static void test_reduce(MPI_Comm comm, MPI_Datatype t, MPI_Op op, int n, int mode, int in_place)
{
    int rank, size;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    for (int root = 0; root < size; root++) {
        if (!is_umpi && in_place && root > 0 && n > 1000)
            continue;
        void *in = make(t, op, n, rank, 0);
        void *out = make(t, op, n, rank == root && in_place ? rank : -1, 0);
        const void *sb = in_place && rank == root ? MPI_IN_PLACE : in;
        RUN(mode, MPI_Reduce(mt_d(sb), mt_d(out), n, t, op, root, comm),
            MPI_Ireduce(mt_d(sb), mt_d(out), n, t, op, root, comm, &req_),
            MPI_Reduce_init(mt_d(sb), mt_d(out), n, t, op, root, comm, MPI_INFO_NULL, &req_));
        if (rank == root && !(mode == 2 && in_place)) /* in place twice would reduce twice */
            verify(t, op, out, n, 0, size - 1, 0, "reduce", mode, in_place);
        mt_mfree(in);
        mt_mfree(out);
    }
}

static void test_allreduce(MPI_Comm comm, MPI_Datatype t, MPI_Op op, int n, int mode, int in_place)
{
    int rank, size;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    void *in = make(t, op, n, rank, 0), *out = make(t, op, n, in_place ? rank : -1, 0);
    const void *sb = in_place ? MPI_IN_PLACE : in;
    if (mode == 2 && in_place)
        mode = 1; /* a persistent in-place reduction would fold twice */
    RUN(mode, MPI_Allreduce(mt_d(sb), mt_d(out), n, t, op, comm),
        MPI_Iallreduce(mt_d(sb), mt_d(out), n, t, op, comm, &req_),
        MPI_Allreduce_init(mt_d(sb), mt_d(out), n, t, op, comm, MPI_INFO_NULL, &req_));
    verify(t, op, out, n, 0, size - 1, 0, "allreduce", mode, in_place);
    mt_mfree(in);
    mt_mfree(out);
}

static void test_reduce_scatter(MPI_Comm comm, MPI_Datatype t, MPI_Op op, int n, int mode, int in_place, int block)
{
    int rank, size;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    int *counts = malloc(sizeof(int) * (size_t) size), total = 0, before = 0;
    for (int i = 0; i < size; i++) {
        counts[i] = block ? n : (n + i * 3) % (n + 2); /* uneven, some zero */
        if (i < rank)
            before += counts[i];
        total += counts[i];
    }
    void *in = make(t, op, total, rank, 0);
    void *out = in_place ? make(t, op, total, rank, 0) : make(t, op, counts[rank], -1, 0);
    const void *sb = in_place ? MPI_IN_PLACE : in;
    if (mode == 2 && in_place)
        mode = 0;
    if (block)
        RUN(mode, MPI_Reduce_scatter_block(mt_d(sb), mt_d(out), n, t, op, comm),
            MPI_Ireduce_scatter_block(mt_d(sb), mt_d(out), n, t, op, comm, &req_),
            MPI_Reduce_scatter_block_init(mt_d(sb), mt_d(out), n, t, op, comm, MPI_INFO_NULL, &req_));
    else
        RUN(mode, MPI_Reduce_scatter(mt_d(sb), mt_d(out), counts, t, op, comm),
            MPI_Ireduce_scatter(mt_d(sb), mt_d(out), counts, t, op, comm, &req_),
            MPI_Reduce_scatter_init(mt_d(sb), mt_d(out), counts, t, op, comm, MPI_INFO_NULL, &req_));
    int off = t == vec_type && derived_mode ? 2 * before : before;
    verify(t, op, out, counts[rank], 0, size - 1, off, block ? "reduce_scatter_block" : "reduce_scatter", mode,
           in_place);
    free(counts);
    mt_mfree(in);
    mt_mfree(out);
}

static void test_scan(MPI_Comm comm, MPI_Datatype t, MPI_Op op, int n, int mode, int in_place, int ex)
{
    int rank, size;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    void *in = make(t, op, n, rank, 0), *out = make(t, op, n, in_place ? rank : -1, 0);
    const void *sb = in_place ? MPI_IN_PLACE : in;
    if (mode == 2 && in_place)
        mode = 1;
    if (ex)
        RUN(mode, MPI_Exscan(mt_d(sb), mt_d(out), n, t, op, comm),
            MPI_Iexscan(mt_d(sb), mt_d(out), n, t, op, comm, &req_),
            MPI_Exscan_init(mt_d(sb), mt_d(out), n, t, op, comm, MPI_INFO_NULL, &req_));
    else
        RUN(mode, MPI_Scan(mt_d(sb), mt_d(out), n, t, op, comm), MPI_Iscan(mt_d(sb), mt_d(out), n, t, op, comm, &req_),
            MPI_Scan_init(mt_d(sb), mt_d(out), n, t, op, comm, MPI_INFO_NULL, &req_));
    if (!ex)
        verify(t, op, out, n, 0, rank, 0, "scan", mode, in_place);
    else if (rank > 0)
        verify(t, op, out, n, 0, rank - 1, 0, "exscan", mode, in_place);
    mt_mfree(in);
    mt_mfree(out);
}

static void run_case(MPI_Comm comm, MPI_Datatype t, MPI_Op op)
{
    static const int counts[] = {0, 1, 5, 33, 3000};
    for (unsigned c = 0; c < sizeof(counts) / sizeof(counts[0]); c++) {
        int n = counts[c];
        for (int mode = 0; mode < 3; mode++) {
            for (int ip = 0; ip < 2; ip++) {
                test_reduce(comm, t, op, n, mode, ip);
                test_allreduce(comm, t, op, n, mode, ip);
                test_reduce_scatter(comm, t, op, n, mode, ip, 0);
                test_reduce_scatter(comm, t, op, n, mode, ip, 1);
                test_scan(comm, t, op, n, mode, ip, 0);
                test_scan(comm, t, op, n, mode, ip, 1);
            }
        }
    }
}

static void test_error_classes(void)
{
    MPI_Comm comm;
    MPI_Comm_dup(MPI_COMM_WORLD, &comm);
    MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);
    int x[4] = {1, 2, 3, 4}, y[4], cls, err;
    err = MPI_Allreduce(x, x, 4, MPI_INT, MPI_SUM, comm);
    MPI_Error_class(err, &cls);
    MT_CHECK(cls == MPI_ERR_BUFFER, "aliased allreduce: class %d", cls);
    err = MPI_Scan(x, x, 4, MPI_INT, MPI_SUM, comm);
    MPI_Error_class(err, &cls);
    MT_CHECK(cls == MPI_ERR_BUFFER, "aliased scan: class %d", cls);
    err = MPI_Reduce(x, y, 4, MPI_INT, MPI_SUM, mt_size, comm);
    MPI_Error_class(err, &cls);
    MT_CHECK(cls == MPI_ERR_ROOT, "reduce root %d: class %d", mt_size, cls);
    err = MPI_Reduce(x, y, 4, MPI_INT, MPI_OP_NULL, 0, comm);
    MPI_Error_class(err, &cls);
    MT_CHECK(cls == MPI_ERR_OP, "reduce MPI_OP_NULL: class %d", cls);
    err = MPI_Reduce_scatter_block(x, y, -1, MPI_INT, MPI_SUM, comm);
    MPI_Error_class(err, &cls);
    MT_CHECK(cls == MPI_ERR_COUNT, "reduce_scatter_block count -1: class %d", cls);
    int *counts = calloc((size_t) mt_size, sizeof(int));
    counts[mt_size - 1] = -2;
    err = MPI_Reduce_scatter(x, y, counts, MPI_INT, MPI_SUM, comm);
    MPI_Error_class(err, &cls);
    MT_CHECK(cls == MPI_ERR_COUNT, "reduce_scatter recvcounts[%d] = -2: class %d", mt_size - 1, cls);
    char msg[MPI_MAX_ERROR_STRING];
    int len;
    MPI_Error_string(err, msg, &len);
    MT_CHECK(strstr(msg, "recvcounts[") != NULL && strstr(msg, "-2") != NULL, "message: %s", msg);
    free(counts);
    if (mt_size > 1 && mt_rank == 1) {
        /* MPI_IN_PLACE is for the root only; fails locally before any message */
        err = MPI_Reduce(MPI_IN_PLACE, y, 4, MPI_INT, MPI_SUM, 0, comm);
        MPI_Error_class(err, &cls);
        MT_CHECK(cls == MPI_ERR_BUFFER, "reduce MPI_IN_PLACE at a non-root: class %d", cls);
    }
    MPI_Comm_free(&comm);
}

/* Bad arguments come back as errors of the right class (checked on umpi only: MPICH 4.0.2
 * crashes on an invalid root), arguments that are not significant are not looked at. */
static void test_errors(void)
{
    if (is_umpi)
        test_error_classes();
    MPI_Comm comm;
    MPI_Comm_dup(MPI_COMM_WORLD, &comm);
    MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);
    int x[4], y[4], err;
    /* recvbuf matters at the root only: NULL elsewhere is fine */
    for (int i = 0; i < 4; i++)
        x[i] = mt_rank + i;
    err = MPI_Reduce(x, mt_rank == 0 ? y : NULL, 4, MPI_INT, MPI_SUM, 0, comm);
    MT_CHECK(err == MPI_SUCCESS, "reduce with NULL recvbuf at a non-root: error %d", err);
    if (mt_rank == 0)
        MT_CHECK(y[3] == mt_size * (mt_size - 1) / 2 + 3 * mt_size, "reduce: y[3]=%d", y[3]);
    /* Exscan's recvbuf at rank 0 is not significant either */
    err = MPI_Exscan(x, mt_rank == 0 && is_umpi ? NULL : y, 4, MPI_INT, MPI_SUM, comm);
    MT_CHECK(err == MPI_SUCCESS, "exscan with NULL recvbuf at rank 0: error %d", err);
    if (mt_rank > 0)
        MT_CHECK(y[0] == mt_rank * (mt_rank - 1) / 2, "exscan: y[0]=%d", y[0]);
    MPI_Comm_free(&comm);
}

int main(int argc, char **argv)
{
    mt_init(&argc, &argv);
    char lib[MPI_MAX_LIBRARY_VERSION_STRING];
    int len;
    MPI_Get_library_version(lib, &len);
    is_umpi = strstr(lib, "umpi") != NULL;
    MPI_Comm half;
    MPI_Comm_split(MPI_COMM_WORLD, mt_rank % 2, -mt_rank, &half);
    for (unsigned c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
        run_case(MPI_COMM_WORLD, cases[c].type, cases[c].op);
        if (c == 0)
            run_case(half, cases[c].type, cases[c].op);
    }

    /* a derived datatype, where the MPI's ops take it */
    MPI_Datatype v;
    MPI_Type_vector(1, 2, 3, MPI_INT, &v);
    MPI_Type_create_resized(v, 0, 3 * sizeof(int), &vec_type);
    MPI_Type_commit(&vec_type);
    MPI_Type_free(&v);
    MPI_Comm probe;
    MPI_Comm_dup(MPI_COMM_WORLD, &probe);
    MPI_Comm_set_errhandler(probe, MPI_ERRORS_RETURN);
    int e[3] = {1, 1, 0}, f[3];
    int ok = MPI_Allreduce(e, f, 1, vec_type, MPI_SUM, probe) == MPI_SUCCESS;
    MPI_Comm_free(&probe);
    if (ok) {
        derived_mode = 1;
        run_case(MPI_COMM_WORLD, vec_type, MPI_SUM);
        run_case(MPI_COMM_WORLD, vec_type, MPI_MAX);
        derived_mode = 0;
    } else if (mt_rank == 0) {
        fprintf(stderr, "note: reductions on a derived datatype are not supported by this MPI yet: skipped\n");
    }
    MPI_Type_free(&vec_type);
    test_errors();
    MPI_Comm_free(&half);
    return mt_finish();
}
