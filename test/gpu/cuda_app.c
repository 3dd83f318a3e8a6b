/*
 * A CUDA application as users write them (the runtime API: cudaMalloc, cudaMemcpy, <cuda_runtime.h>,
 * linked with -lcudart), built by umpi's mpicc and handing device pointers to MPI: point-to-point
 * of small and large device buffers (staged, CUDA IPC or pipeline inside umpi), a ring with
 * MPI_Sendrecv, and MPI_Allreduce on device buffers. Run by test/gpu/cuda_app.sh on a GPU.
 */
#include <mpi.h>
#include <cuda_runtime.h>

#include <stdio.h>
#include <stdlib.h>

static int errs;

#define CUDA_OK(call)                                                                               \
    do {                                                                                            \
        cudaError_t e_ = (call);                                                                    \
        if (e_ != cudaSuccess) {                                                                    \
            fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #call, cudaGetErrorString(e_));   \
            MPI_Abort(MPI_COMM_WORLD, 1);                                                           \
        }                                                                                           \
    } while (0)

/* rank 0 sends n ints from device memory, rank 1 receives them into device memory */
static void pingpong(int rank, size_t n)
{
    int *h = malloc(n * sizeof(int)), *d = NULL;
    CUDA_OK(cudaMalloc((void **) &d, n * sizeof(int)));
    for (size_t i = 0; i < n; i++)
        h[i] = rank == 0 ? (int) (i * 3 + 1) : -1;
    CUDA_OK(cudaMemcpy(d, h, n * sizeof(int), cudaMemcpyHostToDevice));
    if (rank == 0) {
        MPI_Send(d, (int) n, MPI_INT, 1, 7, MPI_COMM_WORLD);
        MPI_Recv(d, (int) n, MPI_INT, 1, 8, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    } else if (rank == 1) {
        MPI_Status st;
        int count = 0;
        MPI_Recv(d, (int) n, MPI_INT, 0, 7, MPI_COMM_WORLD, &st);
        MPI_Get_count(&st, MPI_INT, &count);
        if ((size_t) count != n) {
            fprintf(stderr, "received %d ints, expected %zu\n", count, n);
            errs++;
        }
        MPI_Send(d, (int) n, MPI_INT, 0, 8, MPI_COMM_WORLD);
    }
    if (rank <= 1) {
        CUDA_OK(cudaMemcpy(h, d, n * sizeof(int), cudaMemcpyDeviceToHost));
        for (size_t i = 0; i < n; i++)
            if (h[i] != (int) (i * 3 + 1)) {
                fprintf(stderr, "rank %d: %zu ints: element %zu is %d, expected %d\n", rank, n, i, h[i],
                        (int) (i * 3 + 1));
                errs++;
                break;
            }
    }
    CUDA_OK(cudaFree(d));
    free(h);
}

int main(int argc, char **argv)
{
    int rank, size, ndev = 0, total = 0;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    CUDA_OK(cudaGetDeviceCount(&ndev));
    MPI_Comm node;
    int local;
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &node);
    MPI_Comm_rank(node, &local);
    MPI_Comm_free(&node);
    CUDA_OK(cudaSetDevice(local % ndev));

    pingpong(rank, 25);             /* 100 bytes: one staged copy */
    pingpong(rank, 1 << 20);        /* 4 MiB: CUDA IPC or the pipeline */

    /* a ring of device buffers */
    int *dsend, *drecv, got = -1;
    CUDA_OK(cudaMalloc((void **) &dsend, sizeof(int)));
    CUDA_OK(cudaMalloc((void **) &drecv, sizeof(int)));
    CUDA_OK(cudaMemcpy(dsend, &rank, sizeof(int), cudaMemcpyHostToDevice));
    MPI_Sendrecv(dsend, 1, MPI_INT, (rank + 1) % size, 9, drecv, 1, MPI_INT, (rank + size - 1) % size, 9,
                 MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    CUDA_OK(cudaMemcpy(&got, drecv, sizeof(int), cudaMemcpyDeviceToHost));
    if (got != (rank + size - 1) % size) {
        fprintf(stderr, "rank %d: ring got %d\n", rank, got);
        errs++;
    }
    CUDA_OK(cudaFree(dsend));
    CUDA_OK(cudaFree(drecv));

    /* MPI_Allreduce on device buffers: 1 MiB of floats, rank + 1 each */
    size_t n = (1 << 20) / sizeof(float);
    float *h = malloc(n * sizeof(float)), *din, *dout;
    for (size_t i = 0; i < n; i++)
        h[i] = (float) (rank + 1);
    CUDA_OK(cudaMalloc((void **) &din, n * sizeof(float)));
    CUDA_OK(cudaMalloc((void **) &dout, n * sizeof(float)));
    CUDA_OK(cudaMemcpy(din, h, n * sizeof(float), cudaMemcpyHostToDevice));
    MPI_Allreduce(din, dout, (int) n, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
    CUDA_OK(cudaMemcpy(h, dout, n * sizeof(float), cudaMemcpyDeviceToHost));
    float want = (float) size * (float) (size + 1) / 2.0f;
    for (size_t i = 0; i < n; i++)
        if (h[i] != want) {
            fprintf(stderr, "rank %d: allreduce element %zu is %g, expected %g\n", rank, i, h[i], want);
            errs++;
            break;
        }
    CUDA_OK(cudaFree(din));
    CUDA_OK(cudaFree(dout));
    free(h);

    MPI_Reduce(&errs, &total, 1, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD);
    if (rank == 0 && total == 0)
        printf(" No Errors\n");
    MPI_Finalize();
    return total != 0;
}
