/*
 * Communicators created concurrently under MPI_THREAD_MULTIPLE: on every rank NT threads each own
 * a parent communicator (a dup of MPI_COMM_WORLD) and, at the same time as the others, create
 * communicators from it (MPI_Comm_dup, MPI_Comm_split, MPI_Comm_create_group, MPI_Intercomm_create),
 * pass a message around a ring on each new one and free it, keeping a few alive for a while. Two
 * threads of one process must never obtain the same context id: messages on their communicators
 * would then cross, which the ring checks (same tag, same source, only the payload tells them
 * apart). A deadlock shows as a timeout.
 *
 * Then a cycle: rank 0 creates on two parents at once from two threads, while the other ranks
 * create on them one after the other, in the order opposite to the parents' age; each creation
 * must finish although rank 0's other thread is in the middle of one that waits for them.
 */
#include "mtest.h"
#include <pthread.h>

#ifndef NT
#define NT 3
#endif
#define ITERS 40
#define KEEP 4

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
        fprintf(stderr, "[%d] thread %d iteration %d: got (%d,%d,%d) on a new communicator\n", mt_rank, t, i, in[0],
                in[1], in[2]);
    }
}

static void *worker(void *arg)
{
    int t = (int)(long)arg, errs = 0;
    MPI_Comm kept[KEEP];
    for (int k = 0; k < KEEP; k++)
        kept[k] = MPI_COMM_NULL;
    for (int i = 0; i < ITERS; i++) {
        MPI_Comm c = MPI_COMM_NULL;
        switch ((i + t) % 4) {
        case 0:
            MPI_Comm_dup(parent[t], &c);
            break;
        case 1:
            MPI_Comm_split(parent[t], 0, mt_size - mt_rank, &c);
            break;
        case 2: {
            MPI_Group g;
            MPI_Comm_group(parent[t], &g);
            MPI_Comm_create_group(parent[t], g, 7, &c);
            MPI_Group_free(&g);
            break;
        }
        default:
            if (mt_size > 1) {
                /* two halves of the parent, joined into an intercommunicator, then merged */
                MPI_Comm half, inter;
                int low = mt_rank < mt_size / 2;
                MPI_Comm_split(parent[t], low, mt_rank, &half);
                MPI_Intercomm_create(half, 0, parent[t], low ? mt_size / 2 : 0, 5, &inter);
                MPI_Intercomm_merge(inter, !low, &c);
                MPI_Comm_free(&inter);
                MPI_Comm_free(&half);
            } else {
                MPI_Comm_dup(parent[t], &c);
            }
        }
        if (c == MPI_COMM_NULL) {
            errs++;
            fprintf(stderr, "[%d] thread %d iteration %d: no communicator\n", mt_rank, t, i);
            continue;
        }
        ring(c, t, i, &errs);
        /* keep this one for a while, freeing the one it replaces: the live sets differ by thread */
        int k = i % KEEP;
        if (kept[k] != MPI_COMM_NULL) {
            ring(kept[k], t, i, &errs);
            MPI_Comm_free(&kept[k]);
        }
        kept[k] = c;
    }
    for (int k = 0; k < KEEP; k++)
        if (kept[k] != MPI_COMM_NULL)
            MPI_Comm_free(&kept[k]);
    thread_errs[t] = errs;
    return NULL;
}

#define CYCLES 20

static void *cycle_one(void *arg)
{
    int which = (int)(long)arg, errs = 0;
    MPI_Comm c;
    MPI_Comm_dup(parent[which], &c);
    ring(c, 100 + which, 0, &errs);
    MPI_Comm_free(&c);
    thread_errs[which] += errs;
    return NULL;
}

int main(int argc, char **argv)
{
    int provided = -1;
    pthread_t th[NT];
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    mt_setup();
    if (provided != MPI_THREAD_MULTIPLE) {
        MT_CHECK(provided == MPI_THREAD_MULTIPLE, "provided %d", provided);
        return mt_finish();
    }
    for (int t = 0; t < NT; t++)
        MPI_Comm_dup(MPI_COMM_WORLD, &parent[t]);
    for (int t = 0; t < NT; t++)
        pthread_create(&th[t], NULL, worker, (void *)(long)t);
    for (int t = 0; t < NT; t++) {
        pthread_join(th[t], NULL);
        mt_errs += thread_errs[t];
    }
    for (int i = 0; i < CYCLES && NT >= 2 && mt_size > 1; i++) {
        for (int t = 0; t < 2; t++)
            thread_errs[t] = 0;
        if (mt_rank == 0) {
            for (int t = 0; t < 2; t++)
                pthread_create(&th[t], NULL, cycle_one, (void *)(long)t);
            for (int t = 0; t < 2; t++)
                pthread_join(th[t], NULL);
        } else {
            cycle_one((void *)(long)(1 - i % 2));
            cycle_one((void *)(long)(i % 2));
        }
        mt_errs += thread_errs[0] + thread_errs[1];
    }
    for (int t = 0; t < NT; t++)
        MPI_Comm_free(&parent[t]);
    return mt_finish();
}
