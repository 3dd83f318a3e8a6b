/*
 * MPIX_Query_cuda_support (the MPICH extension): the same on every rank, and the value the first
 * argument names when there is one ("0": a run with UMPI_CUDA=0 or on a machine without a GPU; "1": a
 * GPU machine). Host buffers move as before, whatever it says. A second argument "prepost" also
 * checks that it is 0 before MPI_Init and after MPI_Finalize, as umpi answers (MPICH refuses the call
 * outside MPI, so the MPI testlist, which is also run against MPICH, does not ask for it).
 */
#include "mtest.h"

int main(int argc, char **argv)
{
    int prepost = argc > 2 && strcmp(argv[2], "prepost") == 0;
    int before = prepost ? MPIX_Query_cuda_support() : 0;
    mt_init(&argc, &argv);
    int v = MPIX_Query_cuda_support();

    MT_CHECK(v == 0 || v == 1, "MPIX_Query_cuda_support() = %d", v);
    if (argc > 1)
        MT_CHECK(v == atoi(argv[1]), "MPIX_Query_cuda_support() = %d, expected %s", v, argv[1]);
    MT_CHECK(MPIX_Query_cuda_support() == v, "a second call differs");

    int lo, hi;
    MPI_Allreduce(&v, &lo, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    MPI_Allreduce(&v, &hi, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    MT_CHECK(lo == hi, "ranks disagree: %d..%d", lo, hi);
    MT_CHECK(before == 0, "MPIX_Query_cuda_support() before MPI_Init = %d", before);

    /* A host buffer around the ring, as before CUDA was looked at. */
    int data[256], got[256];
    for (int i = 0; i < 256; i++)
        data[i] = mt_rank * 1000 + i;
    int next = (mt_rank + 1) % mt_size, prev = (mt_rank + mt_size - 1) % mt_size;
    MPI_Sendrecv(data, 256, MPI_INT, next, 1, got, 256, MPI_INT, prev, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    for (int i = 0; i < 256; i++)
        MT_CHECK(got[i] == prev * 1000 + i, "got[%d] = %d", i, got[i]);
    int rc = mt_finish();
    if (prepost && MPIX_Query_cuda_support() != 0) {
        fprintf(stderr, "[%d] MPIX_Query_cuda_support() after MPI_Finalize is not 0\n", mt_rank);
        return 1;
    }
    return rc;
}
