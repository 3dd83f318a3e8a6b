/*
 * Collectives on device buffers within a node through CUDA IPC: allreduce,
 * reduce, bcast, allgather, allgatherv and alltoall, in place and not, int and double with
 * MPI_SUM and MPI_MAX, at sizes around UMPI_CUDA_COLL_IPC_MIN; buffers freed and allocated again
 * between calls (a stale mapping would deliver the old data). Buffers are this rank's kind
 * (MPITEST_MEMTYPE: device, or mix: even ranks device), results checked on host copies.
 *
 * With test/fakecuda's driver the program also checks which path each call took through the
 * driver's count of IPC opens: a call through CUDA IPC on fresh buffers opens the peers' handles,
 * the same call again opens none (the mappings are cached), and a call through host memory opens
 * none. It prints, per rank, how many calls it expects through IPC ("expect coll_ipc=N"), which
 * test/fakegpu/coll_ipc.sh compares with umpi's counter. The expectations follow the knobs it is
 * run with (UMPI_CUDA_COLL_IPC, UMPI_CUDA_COLL_IPC_MIN in plain bytes). Sizes are around the
 * threshold, or around argv[1] bytes when given.
 */
#include "../mpi/mtest.h"

static size_t thresh = 32768;
static int knob = 2;       /* 0, 1, 2 = auto */
static int all_device;     /* every rank's buffers are device memory */
static int expected_ipc;   /* calls expected through CUDA IPC */
static int cache_small;    /* UMPI_CUDA_IPC_CACHE too small to keep every peer's mappings */

struct fake_counts {
    long device, pinned, registered, managed, imports, streams, events, copies, opens, closes;
};

static long opens(void)
{
    struct fake_counts c;
    if (mt_mem.fake_counts == NULL)
        return -1;
    mt_mem.fake_counts(&c);
    return c.opens;
}

/* Whether a call whose result is `bytes` bytes goes through IPC, as the knobs say. */
static int via_ipc(size_t bytes)
{
    return mt_size > 1 && all_device && bytes > 0 && (knob == 1 || (knob == 2 && bytes >= thresh));
}

/* After a call on fresh buffers: opened peers' handles exactly when expected (when this rank
 * reads or writes a peer's buffer: `touches`). */
static void check_path(const char *what, size_t bytes, long before, int touches)
{
    int ipc = via_ipc(bytes);
    expected_ipc += ipc;
    long after = opens();
    if (before < 0)
        return; /* a real driver: the counters are checked by the script only */
    if (ipc && touches)
        MT_CHECK(after > before, "%s of %zu bytes: expected through CUDA IPC, but no IPC handle was opened", what,
                 bytes);
    if (!ipc)
        MT_CHECK(after == before, "%s of %zu bytes: expected through host memory, but %ld IPC handle(s) opened",
                 what, bytes, after - before);
}

/* ---- data --------------------------------------------------------------------------------------- */

static double val(int rank, long i, int salt)
{
    return (double) ((rank + 1) * (i % 97) - 3 * rank + salt);
}

static void put(void *buf, MPI_Datatype t, long i, double v)
{
    if (t == MPI_INT)
        ((int *) buf)[i] = (int) v;
    else
        ((double *) buf)[i] = v;
}

static double get(const void *buf, MPI_Datatype t, long i)
{
    return t == MPI_INT ? (double) ((const int *) buf)[i] : ((const double *) buf)[i];
}

static double combine(MPI_Op op, long i, int salt)
{
    double acc = val(0, i, salt);
    for (int r = 1; r < mt_size; r++)
        acc = op == MPI_SUM ? acc + val(r, i, salt) : (val(r, i, salt) > acc ? val(r, i, salt) : acc);
    return acc;
}

static const char *tname(MPI_Datatype t)
{
    return t == MPI_INT ? "MPI_INT" : "MPI_DOUBLE";
}

/* ---- the collectives ------------------------------------------------------------------------------ */

static void t_allreduce(MPI_Datatype t, MPI_Op op, long n, int in_place, int salt)
{
    size_t es = t == MPI_INT ? sizeof(int) : sizeof(double);
    mt_buf_t s, r;
    mt_buf_init(&s, n * es);
    mt_buf_init(&r, n * es);
    for (long i = 0; i < n; i++) {
        put(in_place ? r.h : s.h, t, i, val(mt_rank, i, salt));
        if (!in_place)
            put(r.h, t, i, -1);
    }
    mt_push(&s);
    mt_push(&r);
    long before = opens();
    MPI_Allreduce(in_place ? MPI_IN_PLACE : s.d, r.d, (int) n, t, op, MPI_COMM_WORLD);
    check_path("allreduce", n * es, before, 1);
    mt_pull(&r);
    long bad = 0, first = -1;
    for (long i = 0; i < n; i++)
        if (get(r.h, t, i) != combine(op, i, salt) && bad++ == 0)
            first = i;
    MT_CHECK(bad == 0, "allreduce %ld x %s %s%s: %ld wrong, first at %ld (%g, expected %g)", n, tname(t),
             op == MPI_SUM ? "sum" : "max", in_place ? " in place" : "", bad, first,
             first >= 0 ? get(r.h, t, first) : 0, first >= 0 ? combine(op, first, salt) : 0);
    if (!in_place) {
        /* the same call again on the same buffers: no new IPC open (cached mappings) */
        before = opens();
        MPI_Allreduce(s.d, r.d, (int) n, t, op, MPI_COMM_WORLD);
        expected_ipc += via_ipc(n * es);
        if (before >= 0 && !cache_small)
            MT_CHECK(opens() == before, "allreduce repeated on the same buffers opened %ld IPC handle(s) again",
                     opens() - before);
        mt_pull(&r);
        bad = 0;
        for (long i = 0; i < n; i++)
            bad += get(r.h, t, i) != combine(op, i, salt);
        MT_CHECK(bad == 0, "allreduce repeated: %ld wrong", bad);
    }
    mt_buf_free(&s);
    mt_buf_free(&r);
}

static void t_reduce(MPI_Datatype t, MPI_Op op, long n, int in_place, int root, int salt)
{
    size_t es = t == MPI_INT ? sizeof(int) : sizeof(double);
    int me_root = mt_rank == root, ip = in_place && me_root;
    mt_buf_t s, r;
    mt_buf_init(&s, n * es);
    mt_buf_init(&r, n * es);
    for (long i = 0; i < n; i++) {
        put(ip ? r.h : s.h, t, i, val(mt_rank, i, salt));
        if (!ip)
            put(r.h, t, i, -1);
    }
    mt_push(&s);
    mt_push(&r);
    long before = opens();
    MPI_Reduce(ip ? MPI_IN_PLACE : s.d, r.d, (int) n, t, op, root, MPI_COMM_WORLD);
    check_path("reduce", n * es, before, 1);
    mt_pull(&r);
    long bad = 0;
    for (long i = 0; i < n; i++)
        bad += me_root ? get(r.h, t, i) != combine(op, i, salt) : get(r.h, t, i) != -1;
    MT_CHECK(bad == 0, "reduce %ld x %s %s%s to %d: %ld wrong (%s)", n, tname(t), op == MPI_SUM ? "sum" : "max",
             in_place ? " in place" : "", root, bad, me_root ? "result" : "a non-root's recvbuf was written");
    mt_buf_free(&s);
    mt_buf_free(&r);
}

static void t_bcast(long nbytes, int root, int salt)
{
    mt_buf_t b;
    mt_buf_init(&b, nbytes);
    unsigned char *h = b.h;
    for (long i = 0; i < nbytes; i++)
        h[i] = mt_rank == root ? (unsigned char) (i * 7 + salt) : 0xee;
    mt_push(&b);
    long before = opens();
    MPI_Bcast(b.d, (int) nbytes, MPI_BYTE, root, MPI_COMM_WORLD);
    check_path("bcast", nbytes, before, mt_rank != root);
    mt_pull(&b);
    long bad = 0;
    for (long i = 0; i < nbytes; i++)
        bad += h[i] != (unsigned char) (i * 7 + salt);
    MT_CHECK(bad == 0, "bcast of %ld bytes from %d: %ld wrong", nbytes, root, bad);
    mt_buf_free(&b);
}

static void t_allgather(MPI_Datatype t, long bc, int in_place, int salt)
{
    size_t es = t == MPI_INT ? sizeof(int) : sizeof(double);
    long total = bc * mt_size;
    mt_buf_t s, r;
    mt_buf_init(&s, bc * es);
    mt_buf_init(&r, total * es);
    for (long i = 0; i < bc; i++)
        put(s.h, t, i, val(mt_rank, i, salt));
    for (long i = 0; i < total; i++)
        put(r.h, t, i, in_place && i / bc == mt_rank ? val(mt_rank, i % bc, salt) : -1);
    mt_push(&s);
    mt_push(&r);
    long before = opens();
    MPI_Allgather(in_place ? MPI_IN_PLACE : s.d, (int) bc, t, r.d, (int) bc, t, MPI_COMM_WORLD);
    check_path("allgather", total * es, before, 1);
    mt_pull(&r);
    long bad = 0;
    for (long i = 0; i < total; i++)
        bad += get(r.h, t, i) != val((int) (i / bc), i % bc, salt);
    MT_CHECK(bad == 0, "allgather %ld x %s per rank%s: %ld wrong", bc, tname(t), in_place ? " in place" : "", bad);
    mt_buf_free(&s);
    mt_buf_free(&r);
}

/* Rank j contributes bc + j elements at a displacement leaving a gap of 2 (marked -7) before it. */
static void t_allgatherv(long bc, int in_place, int salt)
{
    int p = mt_size, *counts = malloc(p * sizeof(int)), *displs = malloc(p * sizeof(int));
    long end = 0, total = 0;
    for (int j = 0; j < p; j++) {
        counts[j] = (int) bc + j;
        displs[j] = (int) end + 2;
        end = displs[j] + counts[j];
        total += counts[j];
    }
    mt_buf_t s, r;
    mt_buf_init(&s, counts[mt_rank] * sizeof(double));
    mt_buf_init(&r, end * sizeof(double));
    double *sh = s.h, *rh = r.h;
    for (int i = 0; i < counts[mt_rank]; i++)
        sh[i] = val(mt_rank, i, salt);
    for (long i = 0; i < end; i++)
        rh[i] = -7;
    if (in_place)
        for (int i = 0; i < counts[mt_rank]; i++)
            rh[displs[mt_rank] + i] = val(mt_rank, i, salt);
    mt_push(&s);
    mt_push(&r);
    long before = opens();
    MPI_Allgatherv(in_place ? MPI_IN_PLACE : s.d, counts[mt_rank], MPI_DOUBLE, r.d, counts, displs, MPI_DOUBLE,
                   MPI_COMM_WORLD);
    /* the size compared with the threshold: the mean block (rounded down) times the ranks */
    check_path("allgatherv", (size_t) (total * sizeof(double) / p) * p, before, 1);
    mt_pull(&r);
    long bad = 0;
    for (int j = 0; j < p; j++)
        for (int i = 0; i < counts[j]; i++)
            bad += rh[displs[j] + i] != val(j, i, salt);
    for (int j = 0; j < p; j++)
        bad += rh[displs[j] - 1] != -7 || rh[displs[j] - 2] != -7;
    MT_CHECK(bad == 0, "allgatherv around %ld doubles per rank%s: %ld wrong (gaps must stay -7)", bc,
             in_place ? " in place" : "", bad);
    mt_buf_free(&s);
    mt_buf_free(&r);
    free(counts);
    free(displs);
}

static void t_alltoall(long bc, int salt)
{
    int p = mt_size;
    long total = bc * p;
    mt_buf_t s, r;
    mt_buf_init(&s, total * sizeof(int));
    mt_buf_init(&r, total * sizeof(int));
    int *sh = s.h, *rh = r.h;
    for (long i = 0; i < total; i++) {
        sh[i] = (int) val(mt_rank, i, salt);
        rh[i] = -1;
    }
    mt_push(&s);
    mt_push(&r);
    long before = opens();
    MPI_Alltoall(s.d, (int) bc, MPI_INT, r.d, (int) bc, MPI_INT, MPI_COMM_WORLD);
    check_path("alltoall", total * sizeof(int), before, 1);
    mt_pull(&r);
    long bad = 0;
    for (int j = 0; j < p; j++)
        for (long i = 0; i < bc; i++)
            bad += rh[j * bc + i] != (int) val(j, mt_rank * bc + i, salt);
    MT_CHECK(bad == 0, "alltoall of %ld ints per pair: %ld wrong", bc, bad);
    mt_buf_free(&s);
    mt_buf_free(&r);
}

/* A buffer freed and allocated again (the fake driver hands out the same addresses with a new
 * buffer id, as a real allocator often does): the peers must map the new allocation, not reuse
 * the mapping of the old one, whose memory still holds the old values. */
static void t_realloc(long n)
{
    for (int round = 0; round < 3; round++) {
        mt_buf_t b;
        mt_buf_init(&b, n * sizeof(double));
        double *h = b.h;
        for (long i = 0; i < n; i++)
            h[i] = val(mt_rank, i, 100 * round);
        mt_push(&b);
        long before = opens();
        MPI_Allreduce(MPI_IN_PLACE, b.d, (int) n, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
        check_path("allreduce after a free and allocation", n * sizeof(double), before, 1);
        mt_pull(&b);
        long bad = 0;
        for (long i = 0; i < n; i++)
            bad += h[i] != combine(MPI_SUM, i, 100 * round);
        MT_CHECK(bad == 0, "allreduce on a buffer allocated again (round %d): %ld wrong (a stale mapping?)", round,
                 bad);
        mt_buf_free(&b);
    }
}

int main(int argc, char **argv)
{
    mt_init(&argc, &argv);
    const char *e = getenv("UMPI_CUDA_COLL_IPC_MIN");
    if (e != NULL && *e)
        thresh = strtoul(e, NULL, 10);
    e = getenv("UMPI_CUDA_COLL_IPC");
    if (e != NULL && strcmp(e, "0") == 0)
        knob = 0;
    else if (e != NULL && strcmp(e, "1") == 0)
        knob = 1;
    const char *mt = getenv("MPITEST_MEMTYPE");
    all_device = mt != NULL && strcmp(mt, "device") == 0;
    e = getenv("FAKECUDA_IPC"); /* the fake driver refusing IPC: every call agrees on host memory */
    if (e != NULL && (strcmp(e, "noget") == 0 || strcmp(e, "noopen") == 0))
        all_device = 0;
    e = getenv("UMPI_CUDA_IPC_CACHE");
    cache_small = e != NULL && atoi(e) < 2 * mt_size;
    mt_mem_device(); /* loads the driver where one is used */

    /* sizes in bytes around the threshold (or around argv[1] bytes), and well above it */
    long base = argc > 1 ? atol(argv[1]) : (long) thresh;
    if (base < 64)
        base = 64;
    long sizes[] = { base / 2, base - 8, base, base + 8, 3 * base + 24, 16 * base };
    int salt = 0;
    for (size_t k = 0; k < sizeof(sizes) / sizeof(sizes[0]); k++) {
        long bytes = sizes[k];
        for (int ti = 0; ti < 2; ti++) {
            MPI_Datatype t = ti ? MPI_DOUBLE : MPI_INT;
            long es = ti ? (long) sizeof(double) : (long) sizeof(int), n = bytes / es;
            for (int oi = 0; oi < 2; oi++) {
                MPI_Op op = oi ? MPI_MAX : MPI_SUM;
                t_allreduce(t, op, n, 0, ++salt);
                t_allreduce(t, op, n, 1, ++salt);
                t_reduce(t, op, n, 0, (int) (k % mt_size), ++salt);
                t_reduce(t, op, n, 1, (int) ((k + 1) % mt_size), ++salt);
            }
            /* blocks such that all p of them make about `bytes` */
            long bc = n / mt_size > 0 ? n / mt_size : 1;
            t_allgather(t, bc, 0, ++salt);
            t_allgather(t, bc, 1, ++salt);
        }
        t_bcast(bytes, (int) (k % mt_size), ++salt);
        long dc = bytes / (long) sizeof(double) / mt_size;
        t_allgatherv(dc > 0 ? dc : 1, 0, ++salt);
        t_allgatherv(dc > 0 ? dc : 1, 1, ++salt);
        long ic = bytes / (long) sizeof(int) / mt_size;
        t_alltoall(ic > 0 ? ic : 1, ++salt);
    }
    t_realloc(4 * base / (long) sizeof(double));
    fprintf(stderr, "[%d] expect coll_ipc=%d\n", mt_rank, expected_ipc);
    return mt_finish();
}
