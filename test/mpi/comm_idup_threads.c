/*
 * MPI_Comm_idup under MPI_THREAD_MULTIPLE: on every rank NT threads each own a parent (a dup of
 * MPI_COMM_WORLD) and at the same time as the others keep two idups of it in flight, complete
 * them (Waitall, or a Test loop), pass a message around a ring on each and free it; one thread
 * mixes in blocking MPI_Comm_dup. Two idups of one process must never get the same context id:
 * the rings would then cross (same tag and source, only the payload tells them apart). A
 * deadlock shows as a timeout.
 */
#include "mtest.h"
#include <pthread.h>

#define NT 3
#define ITERS 12

static MPI_Comm parent[NT];
static int thread_errs[NT];

static void ring(MPI_Comm c, int t, int i, int *errs)
{
    int rank, size, out[3], in[3] = {-1, -1, -1};
    MPI_Comm_rank(c, &rank);
    MPI_Comm_size(c, &size);
    out[0] = t;
    out[1] = i;
    out[2] = rank;
    MPI_Sendrecv(out, 3, MPI_INT, (rank + 1) % size, 0, in, 3, MPI_INT, (rank + size - 1) % size, 0, c,
                 MPI_STATUS_IGNORE);
    if (in[0] != t || in[1] != i || in[2] != (rank + size - 1) % size) {
        (*errs)++;
        fprintf(stderr, "[%d] thread %d iteration %d: got (%d,%d,%d) on a new communicator\n", mt_rank, t, i,
                in[0], in[1], in[2]);
    }
}

static void *work(void *arg)
{
    int t = (int) (long) arg, errs = 0;
    for (int i = 0; i < ITERS; i++) {
        MPI_Comm c[2];
        MPI_Request r[2];
        MPI_Comm_idup(parent[t], &c[0], &r[0]);
        MPI_Comm_idup(parent[t], &c[1], &r[1]);
        if (i % 2) {
            MPI_Waitall(2, r, MPI_STATUSES_IGNORE);
        } else {
            int flag = 0;
            while (!flag)
                MPI_Testall(2, r, &flag, MPI_STATUSES_IGNORE);
        }
        ring(c[0], t, 2 * i, &errs);
        ring(c[1], t, 2 * i + 1, &errs);
        MPI_Comm_free(&c[0]);
        MPI_Comm_free(&c[1]);
        if (t == 0 && i % 5 == 0) {
            MPI_Comm d;
            MPI_Comm_dup(parent[t], &d);
            ring(d, t, -i, &errs);
            MPI_Comm_free(&d);
        }
    }
    thread_errs[t] = errs;
    return NULL;
}

int main(int argc, char **argv)
{
    int provided;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    mt_setup();
    if (provided < MPI_THREAD_MULTIPLE) {
        if (mt_rank == 0)
            printf("MPI_THREAD_MULTIPLE not provided: nothing to test\n");
        return mt_finish();
    }
    for (int t = 0; t < NT; t++)
        MPI_Comm_dup(MPI_COMM_WORLD, &parent[t]);
    pthread_t th[NT];
    for (int t = 0; t < NT; t++)
        pthread_create(&th[t], NULL, work, (void *) (long) t);
    for (int t = 0; t < NT; t++) {
        pthread_join(th[t], NULL);
        mt_errs += thread_errs[t];
    }
    for (int t = 0; t < NT; t++)
        MPI_Comm_free(&parent[t]);
    return mt_finish();
}
