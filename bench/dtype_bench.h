/*
 * dtype_bench.h: the derived datatypes the datatype benchmarks move, and their ping-pong.
 *
 *   vector  8-byte blocks (MPI_DOUBLE) with a 16-byte stride: the halo-exchange shape, half the
 *           bytes of the buffer are payload;
 *   struct  {int; double; int} elements (16 bytes of data in a 24-byte extent: holes after each
 *           int), the shape of an array of C structs sent field by field.
 *
 * SIZE in the output is the payload in bytes (what MPI_Type_size reports times the count), so
 * the rows compare with osu_latency's for contiguous bytes.
 */
#ifndef DTYPE_BENCH_H
#define DTYPE_BENCH_H

#include "umpi_bench.h"

#include <stddef.h>

struct dtype_bench_elem {
    int a;
    double b;
    int c;
};

/* The type whose elements carry `unit` payload bytes each; *extent is the bytes one element spans. */
static inline MPI_Datatype dtype_bench_make(const char *which, size_t *unit, size_t *extent)
{
    MPI_Datatype t;
    if (strcmp(which, "vector") == 0) {
        /* One element = one double followed by a 8-byte hole; a count of n is a vector of n. */
        MPI_Type_create_resized(MPI_DOUBLE, 0, 2 * sizeof(double), &t);
        *unit = sizeof(double);
        *extent = 2 * sizeof(double);
    } else {
        int lens[3] = {1, 1, 1};
        MPI_Aint disps[3] = {offsetof(struct dtype_bench_elem, a), offsetof(struct dtype_bench_elem, b),
                             offsetof(struct dtype_bench_elem, c)};
        MPI_Datatype types[3] = {MPI_INT, MPI_DOUBLE, MPI_INT}, s;
        MPI_Type_create_struct(3, lens, disps, types, &s);
        MPI_Type_create_resized(s, 0, sizeof(struct dtype_bench_elem), &t);
        MPI_Type_free(&s);
        *unit = 2 * sizeof(int) + sizeof(double);
        *extent = sizeof(struct dtype_bench_elem);
    }
    MPI_Type_commit(&t);
    return t;
}

/* Ping-pong of `count` elements of type t; one-way latency in us. */
static inline double dtype_bench_pingpong(const struct bench_opts *o, int rank, MPI_Datatype t, int count, void *sbuf,
                                   void *rbuf, size_t payload)
{
    int iters = bench_iters(o, payload), skip = bench_skip(o, payload), peer = bench_peer(rank);
    double t0 = 0.0;

    bench_sync(peer);
    for (int i = 0; i < iters + skip; i++) {
        if (i == skip)
            t0 = MPI_Wtime();
        if (bench_first(rank)) {
            MPI_Send(sbuf, count, t, peer, 1, MPI_COMM_WORLD);
            MPI_Recv(rbuf, count, t, peer, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        } else {
            MPI_Recv(rbuf, count, t, peer, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            MPI_Send(sbuf, count, t, peer, 1, MPI_COMM_WORLD);
        }
    }
    return (MPI_Wtime() - t0) * 1e6 / (2.0 * iters);
}

/* The latency benchmark for one kind of type (the main of dtype_vector.c and dtype_struct.c). */
static inline int dtype_bench_latency_main(int argc, char **argv, const char *which)
{
    struct bench_opts o;
    int rank, rc = EXIT_FAILURE;
    size_t unit, extent;
    void *sbuf = NULL, *rbuf = NULL;

    bench_opts_default(&o, BENCH_LATENCY);
    o.min_size = 8;
    if (bench_init(&argc, &argv, &o, &rank, &rc) != 0)
        return rc;
    MPI_Datatype t = dtype_bench_make(which, &unit, &extent);
    size_t span = (o.max_size / unit + 1) * extent;
    if (bench_buf_alloc(&sbuf, span, o.mem) != 0 || bench_buf_alloc(&rbuf, span, o.mem) != 0) {
        fprintf(stderr, "%s: cannot allocate 2 x %zu bytes\n", argv[0], span);
        MPI_Abort(MPI_COMM_WORLD, EXIT_FAILURE);
    }
    bench_buf_fill(sbuf, 'a', span, o.mem);
    bench_buf_fill(rbuf, 'b', span, o.mem);
    if (rank == 0) {
        printf("# " BENCH_NAME_PREFIX " MPI Latency Test, %s datatype v" BENCH_VERSION "\n", which);
        printf("# %-*s%*s\n", BENCH_SIZE_WIDTH + 4, "Size", BENCH_FIELD_WIDTH - 6, "Latency (us)");
    }
    for (size_t size = bench_first_size(o.min_size); size <= o.max_size; size = bench_next_size(size)) {
        int count = (int) (size / unit);
        if (count == 0)
            continue;
        double lat = dtype_bench_pingpong(&o, rank, t, count, sbuf, rbuf, (size_t) count * unit);
        if (rank == 0)
            bench_print_row((size_t) count * unit, lat);
    }
    MPI_Type_free(&t);
    bench_buf_free(sbuf, o.mem);
    bench_buf_free(rbuf, o.mem);
    MPI_Finalize();
    return EXIT_SUCCESS;
}

#endif
