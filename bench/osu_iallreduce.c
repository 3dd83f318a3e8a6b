/*
 * osu_iallreduce: how much of an MPI_Iallreduce overlaps computation (OSU's non-blocking method).
 *
 * For each size (MPI_SUM on MPI_FLOAT, as osu_allreduce):
 *   1. pure communication: MPI_Iallreduce + MPI_Wait, timed per iteration -> t_pure (mean over
 *      iterations, then over ranks, so every rank computes for the same time below);
 *   2. overlapped: MPI_Iallreduce, then t_pure of computation (double multiply-adds) cut into
 *      COMPUTE_SLICES slices with an MPI_Test after each (what an application that polls does),
 *      then MPI_Wait -> t_overall, and the computation alone -> t_compute;
 *   3. overlap % = 100 * (1 - (t_overall - t_compute) / t_pure), clamped to 0..100: 100 when the
 *      collective completed entirely behind the computation, 0 when none of it did.
 * The computation runs for a wall-clock time (it checks MPI_Wtime between blocks of arithmetic),
 * so a descheduled rank on an oversubscribed machine does not stretch it.
 *
 * Output columns as OSU's: Size, Overall(us), Compute(us), Pure Comm.(us), Overlap(%).
 */
#include "coll_bench.h"

#define COMPUTE_SLICES 4

static volatile double sink; /* keeps the arithmetic alive */

/* Arithmetic for `secs` of wall-clock time. */
static void compute_for(double secs)
{
    double t0 = MPI_Wtime(), x = 1.0, y = 0.5;

    do {
        for (int i = 0; i < 32; i++)
            x = x * 0.999999 + y;
    } while (MPI_Wtime() - t0 < secs);
    sink = x;
}

struct result {
    double overall, compute, pure;
};

static void run_size(const struct coll_opts *o, float *sbuf, float *rbuf, size_t size, struct result *r)
{
    int iters = coll_iters(o, size), skip = coll_skip(o, size);
    int count = (int)(size / sizeof(float));
    double pure = 0.0, overall = 0.0, comp = 0.0;
    MPI_Request req;

    MPI_Barrier(MPI_COMM_WORLD);
    for (int i = 0; i < iters + skip; i++) {
        double t0 = MPI_Wtime();
        MPI_Iallreduce(sbuf, rbuf, count, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD, &req);
        MPI_Wait(&req, MPI_STATUS_IGNORE);
        if (i >= skip)
            pure += MPI_Wtime() - t0;
        MPI_Barrier(MPI_COMM_WORLD);
    }
    /* The same compute time on every rank: the mean over the ranks. */
    double target = coll_avg_ranks(pure / iters);

    MPI_Barrier(MPI_COMM_WORLD);
    for (int i = 0; i < iters + skip; i++) {
        int done = 0;
        double t0 = MPI_Wtime();
        MPI_Iallreduce(sbuf, rbuf, count, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD, &req);
        double c0 = MPI_Wtime();
        for (int k = 0; k < COMPUTE_SLICES; k++) {
            compute_for(target / COMPUTE_SLICES);
            if (!done)
                MPI_Test(&req, &done, MPI_STATUS_IGNORE);
        }
        double c1 = MPI_Wtime();
        if (!done)
            MPI_Wait(&req, MPI_STATUS_IGNORE);
        double t1 = MPI_Wtime();
        if (i >= skip) {
            overall += t1 - t0;
            comp += c1 - c0;
        }
        MPI_Barrier(MPI_COMM_WORLD);
    }
    r->pure = target * 1e6;
    r->overall = coll_avg_ranks(overall / iters) * 1e6;
    r->compute = coll_avg_ranks(comp / iters) * 1e6;
}

int main(int argc, char **argv)
{
    static const struct coll_bench b = {"Non-blocking Allreduce Overlap Test", sizeof(float), sizeof(float), 0};
    struct coll_opts o;
    float *sbuf = NULL, *rbuf = NULL;
    int rank, rc = EXIT_FAILURE;

    if (coll_init(&argc, &argv, &o, &b, &rank, &rc) != 0)
        return rc;
    if (bench_buf_alloc((void **)&sbuf, o.max_size, BENCH_MEM_HOST) != 0
        || bench_buf_alloc((void **)&rbuf, o.max_size, BENCH_MEM_HOST) != 0) {
        fprintf(stderr, "%s: cannot allocate 2 x %zu bytes\n", argv[0], o.max_size);
        MPI_Abort(MPI_COMM_WORLD, EXIT_FAILURE);
        goto fail;
    }
    bench_buf_fill(sbuf, 0, o.max_size, BENCH_MEM_HOST);
    bench_buf_fill(rbuf, 0, o.max_size, BENCH_MEM_HOST);

    if (rank == 0) {
        printf("# " BENCH_NAME_PREFIX " MPI %s v" BENCH_VERSION "\n", b.title);
        printf("# %-*s%*s%*s%*s%*s\n", BENCH_SIZE_WIDTH - 2, "Size", BENCH_FIELD_WIDTH, "Overall(us)",
               BENCH_FIELD_WIDTH, "Compute(us)", BENCH_FIELD_WIDTH, "Pure Comm.(us)", BENCH_FIELD_WIDTH,
               "Overlap(%)");
        fflush(stdout);
    }
    for (int k = 0; k < o.nsizes; k++) {
        size_t size = o.sizes[k] / sizeof(float) * sizeof(float);
        struct result r;
        if (size == 0 && o.sizes[k] != 0)
            continue;
        run_size(&o, sbuf, rbuf, size, &r);
        if (rank == 0) {
            double ov = r.pure > 0 ? 100.0 * (1.0 - (r.overall - r.compute) / r.pure) : 0.0;
            ov = ov < 0 ? 0 : ov > 100 ? 100 : ov;
            printf("%-*zu%*.*f%*.*f%*.*f%*.*f\n", BENCH_SIZE_WIDTH, size, BENCH_FIELD_WIDTH, BENCH_PRECISION,
                   r.overall, BENCH_FIELD_WIDTH, BENCH_PRECISION, r.compute, BENCH_FIELD_WIDTH,
                   BENCH_PRECISION, r.pure, BENCH_FIELD_WIDTH, BENCH_PRECISION, ov);
            fflush(stdout);
        }
    }
    rc = EXIT_SUCCESS;

fail:
    bench_buf_free(sbuf, BENCH_MEM_HOST);
    bench_buf_free(rbuf, BENCH_MEM_HOST);
    MPI_Finalize();
    return rc;
}
