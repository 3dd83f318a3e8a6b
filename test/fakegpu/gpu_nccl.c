/*
 * Collectives on device buffers run by NCCL, on the fake NCCL of
 * test/fakecuda (UMPI_NCCL_LIBRARY): allreduce, bcast, reduce, allgather, reduce_scatter_block
 * at sizes around UMPI_NCCL_THRESH, in place and not, on MPI_COMM_WORLD, a dup and a split (an
 * NCCL communicator each, released with MPI_Comm_free); a call with host memory at one rank and
 * device memory at the others (no hang, right answer, not NCCL); a type and an op NCCL lacks and
 * a nonblocking call (staged, right answer). Every result is checked against the inputs.
 *
 * Whether NCCL ran a call is read from the fake's own count of collectives (fakenccl_counts):
 * expected when UMPI_NCCL is not 0, every rank's buffers are device memory (MPITEST_MEMTYPE device,
 * or mix on a communicator of even ranks) and the bytes reach UMPI_NCCL_THRESH. FAKENCCL_FAIL (the fake returning errors) switches to the
 * error checks: the MPI error carries NCCL's text, and the next call takes the staged path.
 * Without UMPI_NCCL_LIBRARY (a real GPU and NCCL, test/gpu/testlist) only the results are checked.
 */
#include "../mpi/mtest.h"

static void (*nccl_counts)(long *, long *);
static int nccl_on, thresh = 32768;

static long colls(void)
{
    long comms = 0, n = 0;
    if (nccl_counts != NULL)
        nccl_counts(&comms, &n);
    return n;
}

static long live_comms(void)
{
    long comms = 0, n = 0;
    if (nccl_counts != NULL)
        nccl_counts(&comms, &n);
    return comms;
}

/* NCCL should have run a call on comm of `bytes` (as the cost model counts them): every rank's
 * buffers device memory, 2 ranks or more. */
static int expect_nccl(MPI_Comm comm, size_t bytes)
{
    int size, all_device = mt_mem_device();
    MPI_Comm_size(comm, &size);
    MPI_Allreduce(MPI_IN_PLACE, &all_device, 1, MPI_INT, MPI_LAND, comm); /* host memory, 4 bytes */
    return nccl_on && size > 1 && all_device && bytes >= (size_t) thresh && bytes > 0;
}

static void check_used(const char *what, long before, int expected)
{
    if (nccl_counts == NULL)
        return; /* a real NCCL (test/gpu): the results are checked, not who computed them */
    long ran = colls() - before;
    MT_CHECK(ran == (expected ? 1 : 0), "%s: NCCL ran %ld collective(s), expected %d", what, ran, expected ? 1 : 0);
}

/* ---- each collective -------------------------------------------------------------------------------- */

static void allreduce(MPI_Comm comm, int n, int in_place)
{
    int rank, size;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    int *s = mt_malloc((size_t) n * sizeof(int)), *r = mt_malloc((size_t) n * sizeof(int));
    for (int i = 0; i < n; i++) {
        s[i] = rank * 1000 + i;
        r[i] = in_place ? s[i] : -1;
    }
    mt_put(s);
    mt_put(r);
    long before = colls();
    MPI_Allreduce(in_place ? MPI_IN_PLACE : mt_d(s), mt_d(r), n, MPI_INT, MPI_SUM, comm);
    check_used("allreduce", before, expect_nccl(comm, (size_t) n * sizeof(int)));
    mt_get(r);
    int bad = 0;
    for (int i = 0; i < n; i++)
        bad += r[i] != 1000 * size * (size - 1) / 2 + size * i;
    MT_CHECK(bad == 0, "allreduce n=%d in_place=%d: %d wrong (r[0]=%d)", n, in_place, bad, r[0]);
    mt_mfree(s);
    mt_mfree(r);
}

static void allreduce_types(MPI_Comm comm, int n)
{
    int rank, size;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    /* max on doubles, min on longs, sum on unsigned chars (wrapping) */
    double *d = mt_malloc((size_t) n * sizeof(double));
    long *l = mt_malloc((size_t) n * sizeof(long));
    unsigned char *u = mt_malloc((size_t) n * 8);
    for (int i = 0; i < n; i++) {
        d[i] = (double) ((rank * 7 + i) % (size + 3));
        l[i] = (long) (rank - i) * 100000000000L;
    }
    for (int i = 0; i < 8 * n; i++)
        u[i] = (unsigned char) (rank * 91 + i);
    mt_put(d);
    mt_put(l);
    mt_put(u);
    MPI_Allreduce(MPI_IN_PLACE, mt_d(d), n, MPI_DOUBLE, MPI_MAX, comm);
    MPI_Allreduce(MPI_IN_PLACE, mt_d(l), n, MPI_LONG, MPI_MIN, comm);
    long before = colls();
    MPI_Allreduce(MPI_IN_PLACE, mt_d(u), 8 * n, MPI_UNSIGNED_CHAR, MPI_SUM, comm);
    check_used("allreduce unsigned char", before, expect_nccl(comm, (size_t) n * 8));
    mt_get(d);
    mt_get(l);
    mt_get(u);
    int bad = 0;
    for (int i = 0; i < n; i++) {
        double mx = 0;
        for (int k = 0; k < size; k++)
            mx = (double) ((k * 7 + i) % (size + 3)) > mx ? (double) ((k * 7 + i) % (size + 3)) : mx;
        bad += d[i] != mx;
        bad += l[i] != (long) (0 - i) * 100000000000L;
    }
    for (int i = 0; i < 8 * n; i++) {
        unsigned char sum = 0;
        for (int k = 0; k < size; k++)
            sum = (unsigned char) (sum + (unsigned char) (k * 91 + i));
        bad += u[i] != sum;
    }
    MT_CHECK(bad == 0, "allreduce max double / min long / sum unsigned char n=%d: %d wrong", n, bad);
    mt_mfree(d);
    mt_mfree(l);
    mt_mfree(u);
}

static void bcast(MPI_Comm comm, int n, int root)
{
    int rank;
    MPI_Comm_rank(comm, &rank);
    /* a contiguous derived type of 2 doubles: NCCL moves it as bytes */
    MPI_Datatype two;
    MPI_Type_contiguous(2, MPI_DOUBLE, &two);
    MPI_Type_commit(&two);
    double *b = mt_malloc((size_t) n * 2 * sizeof(double));
    for (int i = 0; i < 2 * n; i++)
        b[i] = rank == root ? i * 0.5 + root : -1;
    mt_put(b);
    long before = colls();
    MPI_Bcast(mt_d(b), n, two, root, comm);
    check_used("bcast", before, expect_nccl(comm, (size_t) n * 16));
    mt_get(b);
    int bad = 0;
    for (int i = 0; i < 2 * n; i++)
        bad += b[i] != i * 0.5 + root;
    MT_CHECK(bad == 0, "bcast n=%d root=%d: %d wrong", n, root, bad);
    mt_mfree(b);
    MPI_Type_free(&two);
}

static void reduce(MPI_Comm comm, int n, int root, int in_place)
{
    int rank, size;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    double *s = mt_malloc((size_t) n * sizeof(double)), *r = mt_malloc((size_t) n * sizeof(double));
    for (int i = 0; i < n; i++) {
        s[i] = rank + i * 2.0;
        r[i] = rank == root && in_place ? s[i] : -1;
    }
    mt_put(s);
    mt_put(r);
    long before = colls();
    MPI_Reduce(rank == root && in_place ? MPI_IN_PLACE : mt_d(s), mt_d(r), n, MPI_DOUBLE, MPI_SUM, root, comm);
    check_used("reduce", before, expect_nccl(comm, (size_t) n * sizeof(double)));
    mt_get(r);
    int bad = 0;
    for (int i = 0; i < n; i++)
        bad += rank == root ? r[i] != size * (size - 1) / 2.0 + size * i * 2.0 : r[i] != -1;
    MT_CHECK(bad == 0, "reduce n=%d root=%d in_place=%d: %d wrong", n, root, in_place, bad);
    mt_mfree(s);
    mt_mfree(r);
}

static void allgather(MPI_Comm comm, int n, int in_place)
{
    int rank, size;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    int *s = mt_malloc((size_t) n * sizeof(int)), *r = mt_malloc((size_t) n * size * sizeof(int));
    for (int i = 0; i < n; i++)
        s[i] = rank * 100000 + i;
    for (int i = 0; i < n * size; i++)
        r[i] = in_place && i / n == rank ? s[i % n] : -1;
    mt_put(s);
    mt_put(r);
    long before = colls();
    MPI_Allgather(in_place ? MPI_IN_PLACE : mt_d(s), n, MPI_INT, mt_d(r), n, MPI_INT, comm);
    check_used("allgather", before, expect_nccl(comm, (size_t) n * sizeof(int)));
    mt_get(r);
    int bad = 0;
    for (int i = 0; i < n * size; i++)
        bad += r[i] != (i / n) * 100000 + i % n;
    MT_CHECK(bad == 0, "allgather n=%d in_place=%d: %d wrong", n, in_place, bad);
    mt_mfree(s);
    mt_mfree(r);
}

static void reduce_scatter_block(MPI_Comm comm, int n, int in_place)
{
    int rank, size;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    int *s = mt_malloc((size_t) n * size * sizeof(int)), *r = mt_malloc((size_t) n * size * sizeof(int));
    for (int i = 0; i < n * size; i++) {
        s[i] = rank + i;
        r[i] = in_place ? s[i] : -1;
    }
    mt_put(s);
    mt_put(r);
    long before = colls();
    MPI_Reduce_scatter_block(in_place ? MPI_IN_PLACE : mt_d(s), mt_d(r), n, MPI_INT, MPI_SUM, comm);
    check_used("reduce_scatter_block", before, expect_nccl(comm, (size_t) n * size * sizeof(int)));
    mt_get(r);
    int bad = 0;
    for (int i = 0; i < n; i++)
        bad += r[i] != size * (size - 1) / 2 + size * (rank * n + i);
    if (!in_place)
        for (int i = n; i < n * size; i++)
            bad += r[i] != -1; /* only the first block is written */
    MT_CHECK(bad == 0, "reduce_scatter_block n=%d in_place=%d: %d wrong (r[0]=%d)", n, in_place, bad, r[0]);
    mt_mfree(s);
    mt_mfree(r);
}

/* ---- what NCCL does not take ------------------------------------------------------------------------- */

/* MPI_SHORT (no NCCL type) and MPI_BAND (no NCCL op), above the threshold: staged, right. */
static void not_nccl(MPI_Comm comm, int n)
{
    int rank, size;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    short *h = mt_malloc((size_t) n * sizeof(short));
    int *b = mt_malloc((size_t) n * sizeof(int));
    for (int i = 0; i < n; i++) {
        h[i] = (short) (rank + i % 100);
        b[i] = ~(1 << (rank % 31)) & (i | 0x7ff00000);
    }
    mt_put(h);
    mt_put(b);
    long before = colls();
    MPI_Allreduce(MPI_IN_PLACE, mt_d(h), n, MPI_SHORT, MPI_SUM, comm);
    MPI_Allreduce(MPI_IN_PLACE, mt_d(b), n, MPI_INT, MPI_BAND, comm);
    check_used("MPI_SHORT and MPI_BAND", before, 0);
    mt_get(h);
    mt_get(b);
    int bad = 0;
    for (int i = 0; i < n; i++) {
        int want = i | 0x7ff00000;
        for (int k = 0; k < size; k++)
            want &= ~(1 << (k % 31));
        bad += h[i] != (short) (size * (size - 1) / 2 + size * (i % 100));
        bad += b[i] != want;
    }
    MT_CHECK(bad == 0, "allreduce MPI_SHORT sum / MPI_INT band n=%d: %d wrong", n, bad);
    mt_mfree(h);
    mt_mfree(b);
}

/* Rank 0 passes host memory, the others device memory (or all host under MPITEST_MEMTYPE=host). */
static void mixed(MPI_Comm comm, int n)
{
    int rank, size;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    mt_buf_t b;
    mt_buf_init_kind(&b, (size_t) n * sizeof(int), rank == 0 ? 0 : mt_mem_device());
    int *x = b.h;
    for (int i = 0; i < n; i++)
        x[i] = rank + 3 * i;
    mt_push(&b);
    long before = colls();
    MPI_Allreduce(MPI_IN_PLACE, b.d, n, MPI_INT, MPI_SUM, comm);
    check_used("mixed host and device allreduce", before, 0);
    mt_pull(&b);
    int bad = 0;
    for (int i = 0; i < n; i++)
        bad += x[i] != size * (size - 1) / 2 + size * 3 * i;
    MT_CHECK(bad == 0, "allreduce with host memory at rank 0 n=%d: %d wrong", n, bad);
    mt_buf_free(&b);
}

static void nonblocking(MPI_Comm comm, int n)
{
    int rank, size;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    int *r = mt_malloc((size_t) n * sizeof(int));
    for (int i = 0; i < n; i++)
        r[i] = rank * i;
    mt_put(r);
    long before = colls();
    MPI_Request req;
    MPI_Iallreduce(MPI_IN_PLACE, mt_d(r), n, MPI_INT, MPI_SUM, comm, &req);
    MPI_Wait(&req, MPI_STATUS_IGNORE);
    check_used("iallreduce", before, 0);
    mt_get(r);
    int bad = 0;
    for (int i = 0; i < n; i++)
        bad += r[i] != i * size * (size - 1) / 2;
    MT_CHECK(bad == 0, "iallreduce n=%d: %d wrong", n, bad);
    mt_mfree(r);
}

/* Everything on one communicator, at element counts whose bytes straddle the threshold. */
static void all_on(MPI_Comm comm)
{
    int size;
    MPI_Comm_size(comm, &size);
    int counts[] = {thresh / 4 - 1, thresh / 4, thresh / 4 + 1, thresh};
    for (int k = 0; k < 4; k++) {
        int n = counts[k] > 0 ? counts[k] : 1;
        allreduce(comm, n, k % 2);
        reduce(comm, n / 2 + 1, k % size, k == 1);
        allgather(comm, n, k % 2 == 0);
        bcast(comm, n / 4 + 1, (k + 1) % size);
        reduce_scatter_block(comm, n / size + 1, k % 2);
    }
    allreduce_types(comm, thresh / 8 + 5);
}

/* ---- FAKENCCL_FAIL: NCCL's errors -------------------------------------------------------------------- */

static void errors(const char *fail)
{
    int size;
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm comm;
    MPI_Comm_dup(MPI_COMM_WORLD, &comm);
    MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);
    int n = thresh;
    int *r = mt_malloc((size_t) n * sizeof(int));
    for (int i = 0; i < n; i++)
        r[i] = i;
    mt_put(r);
    int err;
    if (strcmp(fail, "ncclCommInitRank") == 0) {
        /* no NCCL communicator: the staged path, right */
        err = MPI_Allreduce(MPI_IN_PLACE, mt_d(r), n, MPI_INT, MPI_SUM, comm);
        MT_CHECK(err == MPI_SUCCESS, "allreduce after a failed ncclCommInitRank: %s", mt_errstr(err));
        MT_CHECK(colls() == 0 && live_comms() == 0, "NCCL ran %ld collective(s) without a communicator", colls());
    } else if (strcmp(fail, "async:ncclBroadcast") == 0) {
        err = MPI_Bcast(mt_d(r), n, MPI_INT, 0, comm);
        MT_CHECK(err != MPI_SUCCESS && mt_class(err) == MPI_ERR_OTHER &&
                 mt_msg_has(err, "MPI_Bcast ncclBroadcast asynchronous FAKENCCL_FAIL=async:ncclBroadcast"),
                 "bcast with NCCL's asynchronous error: %s", err == MPI_SUCCESS ? "no error" : mt_errstr(err));
        MT_CHECK(live_comms() == 0, "the failed NCCL communicator was not aborted (%ld live)", live_comms());
        for (int i = 0; i < n; i++)
            r[i] = i;
        mt_put(r);
        err = MPI_Allreduce(MPI_IN_PLACE, mt_d(r), n, MPI_INT, MPI_SUM, comm);
        MT_CHECK(err == MPI_SUCCESS, "allreduce after NCCL failed: %s", mt_errstr(err));
    } else {
        err = MPI_Allreduce(MPI_IN_PLACE, mt_d(r), n, MPI_INT, MPI_SUM, comm);
        MT_CHECK(err != MPI_SUCCESS && mt_class(err) == MPI_ERR_OTHER &&
                 mt_msg_has(err, "MPI_Allreduce ncclAllReduce FAKENCCL_FAIL=ncclAllReduce"),
                 "allreduce with NCCL failing: %s", err == MPI_SUCCESS ? "no error" : mt_errstr(err));
        for (int i = 0; i < n; i++)
            r[i] = i;
        mt_put(r);
        /* NCCL is off on this communicator now: the staged path */
        err = MPI_Allreduce(MPI_IN_PLACE, mt_d(r), n, MPI_INT, MPI_SUM, comm);
        MT_CHECK(err == MPI_SUCCESS, "allreduce after NCCL failed: %s", mt_errstr(err));
    }
    if (err == MPI_SUCCESS) {
        mt_get(r);
        int bad = 0;
        for (int i = 0; i < n; i++)
            bad += r[i] != size * i;
        MT_CHECK(bad == 0, "staged allreduce after the NCCL failure: %d wrong", bad);
    }
    mt_mfree(r);
    MPI_Comm_free(&comm);
}

int main(int argc, char **argv)
{
    mt_init(&argc, &argv);
    const char *on = getenv("UMPI_NCCL"), *t = getenv("UMPI_NCCL_THRESH"), *lib = getenv("UMPI_NCCL_LIBRARY");
    const char *fail = getenv("FAKENCCL_FAIL");
    nccl_on = on == NULL || strcmp(on, "0") != 0;
    if (t != NULL && *t)
        thresh = atoi(t);
    mt_mem_device();
    /* the fake NCCL, for its counts: the same library (and state) umpi loads by that name */
    void *h = lib != NULL && *lib ? dlopen(lib, RTLD_NOW | RTLD_LOCAL) : NULL;
    if (h != NULL)
        *(void **) &nccl_counts = dlsym(h, "fakenccl_counts");
    if (lib != NULL && *lib && h == NULL && (on == NULL || strcmp(on, "auto") == 0))
        nccl_on = 0; /* no NCCL to load: UMPI_NCCL=auto takes the staged path */
    if (h != NULL && nccl_counts == NULL) {
        MT_CHECK(0, "UMPI_NCCL_LIBRARY=%s: not the fake NCCL (no fakenccl_counts)", lib);
        return mt_finish();
    }
    if (fail != NULL && *fail) {
        errors(fail);
        return mt_finish();
    }

    all_on(MPI_COMM_WORLD);

    /* a dup and a split: NCCL communicators of their own, released with them */
    long live0 = live_comms(); /* 0 throughout with a real NCCL, which has no such count */
    MPI_Comm dup, split;
    MPI_Comm_dup(MPI_COMM_WORLD, &dup);
    MPI_Comm_split(MPI_COMM_WORLD, mt_rank % 2, -mt_rank, &split);
    allreduce(dup, thresh, 0);
    allreduce(split, thresh, 1);
    bcast(split, thresh / 16, 0);
    long made_dup = nccl_counts && expect_nccl(dup, (size_t) thresh * 4);
    long made_split = nccl_counts && expect_nccl(split, (size_t) thresh * 4);
    MT_CHECK(live_comms() == live0 + made_dup + made_split,
             "after a dup and a split: %ld NCCL communicators live, expected %ld", live_comms(),
             live0 + made_dup + made_split);
    MPI_Comm_free(&dup);
    MT_CHECK(live_comms() == live0 + made_split, "after MPI_Comm_free(dup): %ld NCCL communicators live, expected %ld",
             live_comms(), live0 + made_split);
    MPI_Comm_free(&split);
    MT_CHECK(live_comms() == live0, "after freeing both: %ld NCCL communicators live, expected %ld", live_comms(),
             live0);

    not_nccl(MPI_COMM_WORLD, thresh);
    mixed(MPI_COMM_WORLD, thresh);
    nonblocking(MPI_COMM_WORLD, thresh);
    return mt_finish();
}
