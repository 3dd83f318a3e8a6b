/*
 * osu_allreduce: MPI_Allreduce latency (MPI_SUM on MPI_FLOAT), OSU methodology.
 *
 * Every rank contributes SIZE bytes (SIZE / 4 floats) and receives the sum.
 * OSU methodology and output (coll_bench.h); standard MPI only.
 *
 * `-d cuda` puts both buffers in CUDA device memory (umpi_bench.h opens the driver at run time).
 * `--staged-baseline` adds a column: the same sums done as an application without a CUDA-aware
 * MPI would, each call copying the contribution to host memory (cuMemcpyDtoH), MPI_Allreduce on
 * host buffers, and the result back (cuMemcpyHtoD), timed the same way; the device allreduce
 * should beat it. `-c` fills rank r's contribution with r + 1 and checks, after each size, that
 * every element of the result is n (n + 1) / 2 (exact in floats for any sensible n).
 */
#include "coll_bench.h"

struct ctx {
    char *sbuf, *rbuf;   /* what MPI is given: device memory under -d cuda */
    char *hs, *hr;       /* host buffers of the staged baseline */
    int nprocs;
};

static void call(void *arg, size_t size)
{
    struct ctx *c = arg;
    MPI_Allreduce(c->sbuf, c->rbuf, (int)(size / sizeof(float)), MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
}

/* The staged baseline: device -> host, allreduce on host buffers, host -> device. */
static void call_staged(void *arg, size_t size)
{
    struct ctx *c = arg;
    bench_cuda_check("cuMemcpyDtoH", bench_cu.dtoh(c->hs, (unsigned long long)(uintptr_t)c->sbuf, size));
    MPI_Allreduce(c->hs, c->hr, (int)(size / sizeof(float)), MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
    bench_cuda_check("cuMemcpyHtoD", bench_cu.htod((unsigned long long)(uintptr_t)c->rbuf, c->hr, size));
}

/* -c: sbuf = rank + 1 everywhere (before timing). */
static void fill_contribution(struct ctx *c, int rank, size_t len, enum bench_mem mem)
{
    size_t n = len / sizeof(float);
    float *h = malloc(n ? n * sizeof(float) : 1);
    if (h == NULL) {
        fprintf(stderr, "osu_allreduce: out of memory\n");
        MPI_Abort(MPI_COMM_WORLD, EXIT_FAILURE);
        return;
    }
    for (size_t i = 0; i < n; i++)
        h[i] = (float)(rank + 1);
    if (mem == BENCH_MEM_HOST)
        memcpy(c->sbuf, h, n * sizeof(float));
    else if (n > 0)
        bench_cuda_check("cuMemcpyHtoD", bench_cu.htod((unsigned long long)(uintptr_t)c->sbuf, h, n * sizeof(float)));
    free(h);
}

/* -c: every element of rbuf is the sum over the ranks; 1 when it is so on every rank. */
static int check_result(struct ctx *c, size_t size, enum bench_mem mem)
{
    size_t n = size / sizeof(float);
    float want = (float)c->nprocs * (float)(c->nprocs + 1) / 2.0f;
    float *h = malloc(n ? n * sizeof(float) : 1);
    int ok = h != NULL, all = 0;

    if (ok) {
        const unsigned char *v = bench_buf_host_view(c->rbuf, n * sizeof(float), mem, h);
        for (size_t i = 0; i < n && ok; i++) {
            float f;
            memcpy(&f, v + i * sizeof(float), sizeof(f));
            ok = f == want;
        }
    }
    free(h);
    MPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    return all;
}

int main(int argc, char **argv)
{
    static const struct coll_bench b = {"Allreduce Latency Test", sizeof(float), sizeof(float), 0, 1};
    struct coll_opts o;
    struct ctx c = {NULL, NULL, NULL, NULL, 0};
    int rank, rc = EXIT_FAILURE, failed = 0;
    enum bench_mem mem;

    if (coll_init(&argc, &argv, &o, &b, &rank, &rc) != 0)
        return rc;
    mem = o.accel ? BENCH_MEM_CUDA : BENCH_MEM_HOST;
    MPI_Comm_size(MPI_COMM_WORLD, &c.nprocs);
    size_t len = o.max_size * 1;
    if (bench_buf_alloc((void **)&c.sbuf, len, mem) != 0 || bench_buf_alloc((void **)&c.rbuf, len, mem) != 0
        || (o.staged && (bench_buf_alloc((void **)&c.hs, len, BENCH_MEM_HOST) != 0
                         || bench_buf_alloc((void **)&c.hr, len, BENCH_MEM_HOST) != 0))) {
        fprintf(stderr, "%s: cannot allocate 2 x %zu bytes of %s memory\n", argv[0], len, bench_mem_name(mem));
        MPI_Abort(MPI_COMM_WORLD, EXIT_FAILURE);
        goto fail;
    }
    /* Written before timing, so the pages exist (zero floats: sums stay finite). */
    bench_buf_fill(c.sbuf, 0, len, mem);
    bench_buf_fill(c.rbuf, 0, len, mem);
    if (o.staged) {
        bench_buf_fill(c.hs, 0, len, BENCH_MEM_HOST);
        bench_buf_fill(c.hr, 0, len, BENCH_MEM_HOST);
    }
    if (o.validate)
        fill_contribution(&c, rank, len, mem);

    if (!o.accel && !o.validate) {
        coll_run_sweep(&o, &b, rank, call, &c);
    } else {
        /* coll_run_sweep's loop with the extra columns */
        if (rank == 0) {
            printf("# " BENCH_NAME_PREFIX " MPI %s v" BENCH_VERSION "\n", b.title);
            if (o.accel)
                printf("# Every buffer on DEVICE (D) (CUDA device %d)\n", bench_cu.device);
            printf("# %-*s%*s", BENCH_SIZE_WIDTH - 2, "Size", BENCH_FIELD_WIDTH, "Avg Latency(us)");
            if (o.staged)
                printf("%*s%*s", BENCH_FIELD_WIDTH, "Staged(us)", BENCH_FIELD_WIDTH, "Device/Staged");
            if (o.validate)
                printf("%*s", BENCH_FIELD_WIDTH, "Validation");
            printf("\n");
            fflush(stdout);
        }
        for (int k = 0; k < o.nsizes; k++) {
            size_t size = o.sizes[k] / b.unit * b.unit;
            if (size == 0)
                continue; /* smaller than one float */
            if (o.validate)
                bench_buf_fill(c.rbuf, 0, size, mem);
            double avg = coll_avg_ranks(coll_time(&o, size, call, &c));
            int valid = o.validate ? check_result(&c, size, mem) : 1;
            double staged = o.staged ? coll_avg_ranks(coll_time(&o, size, call_staged, &c)) : 0.0;
            failed |= !valid;
            if (rank == 0) {
                printf("%-*zu%*.*f", BENCH_SIZE_WIDTH, size, BENCH_FIELD_WIDTH, BENCH_PRECISION, avg);
                if (o.staged)
                    printf("%*.*f%*.*f", BENCH_FIELD_WIDTH, BENCH_PRECISION, staged, BENCH_FIELD_WIDTH,
                           BENCH_PRECISION, staged > 0 ? avg / staged : 0.0);
                if (o.validate)
                    printf("%*s", BENCH_FIELD_WIDTH, valid ? "Pass" : "Fail");
                printf("\n");
                fflush(stdout);
            }
        }
    }
    rc = failed ? EXIT_FAILURE : EXIT_SUCCESS;

fail:
    bench_buf_free(c.sbuf, mem);
    bench_buf_free(c.rbuf, mem);
    bench_buf_free(c.hs, BENCH_MEM_HOST);
    bench_buf_free(c.hr, BENCH_MEM_HOST);
    MPI_Finalize();
    return rc;
}
