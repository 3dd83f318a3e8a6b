/*
 * Device buffers under MPI_THREAD_MULTIPLE: several threads of each rank exchange device buffers
 * with the same thread of the neighbour ranks at once (small: staged, large: the envelope
 * protocol), from threads that never made a CUDA context current: umpi must make one current for
 * its copies, in whichever thread sends, receives or drives the progress. The main thread fills
 * and checks the buffers. Needs MPITEST_MEMTYPE=device or mix.
 */
#include "../mpi/mtest.h"

#include <pthread.h>

enum { T = 4, ROUNDS = 3 };
static const size_t sizes[] = { 1000, 200000 };
static mt_buf_t out[T][2], in[T][2];
static int right, left;

static void *worker(void *arg)
{
    int t = (int) (intptr_t) arg;
    for (int round = 0; round < ROUNDS; round++)
        for (int s = 0; s < 2; s++) {
            MPI_Request r[2];
            MPI_Irecv(in[t][s].d, (int) sizes[s], MPI_BYTE, left, t * 10 + s, MPI_COMM_WORLD, &r[0]);
            MPI_Isend(out[t][s].d, (int) sizes[s], MPI_BYTE, right, t * 10 + s, MPI_COMM_WORLD, &r[1]);
            MPI_Waitall(2, r, MPI_STATUSES_IGNORE);
        }
    return NULL;
}

int main(int argc, char **argv)
{
    int provided;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    mt_setup();
    if (provided < MPI_THREAD_MULTIPLE || !mt_mem_any_device()) {
        if (mt_rank == 0)
            printf("gpu_threads: needs MPI_THREAD_MULTIPLE and MPITEST_MEMTYPE=device or mix; nothing to do\n");
        return mt_finish();
    }
    right = (mt_rank + 1) % mt_size;
    left = (mt_rank + mt_size - 1) % mt_size;
    for (int t = 0; t < T; t++)
        for (int s = 0; s < 2; s++) {
            mt_buf_init(&out[t][s], sizes[s]);
            mt_buf_init(&in[t][s], sizes[s]);
            for (size_t i = 0; i < sizes[s]; i++)
                ((unsigned char *) out[t][s].h)[i] = (unsigned char) (mt_rank * 31 + t * 7 + s + i);
            mt_push(&out[t][s]);
        }
    pthread_t th[T];
    for (int t = 0; t < T; t++)
        pthread_create(&th[t], NULL, worker, (void *) (intptr_t) t);
    for (int t = 0; t < T; t++)
        pthread_join(th[t], NULL);
    for (int t = 0; t < T; t++)
        for (int s = 0; s < 2; s++) {
            mt_pull(&in[t][s]);
            size_t bad = 0;
            for (size_t i = 0; i < sizes[s]; i++)
                bad += ((unsigned char *) in[t][s].h)[i] != (unsigned char) (left * 31 + t * 7 + s + i);
            MT_CHECK(bad == 0, "thread %d, %zu bytes: %zu wrong", t, sizes[s], bad);
            mt_buf_free(&out[t][s]);
            mt_buf_free(&in[t][s]);
        }
    return mt_finish();
}
