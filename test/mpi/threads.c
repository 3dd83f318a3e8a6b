/*
 * MPI_THREAD_MULTIPLE for real: on every rank four threads ping-pong with the peer rank on their
 * own tags at the same time, while a fifth thread sends to this process on MPI_COMM_SELF and a
 * sixth receives those with MPI_Probe(MPI_ANY_SOURCE, MPI_ANY_TAG) + MPI_Recv of what it probed.
 */
#include "mtest.h"
#include <pthread.h>

#define NPP 4
#define ITERS 500
#define NSELF 1000

static int peer;
static int thread_errs[NPP + 2];

static void *pingpong(void *arg)
{
    int id = (int)(long)arg, v;
    MPI_Status st;
    for (int i = 0; i < ITERS; i++) {
        if (mt_rank < peer) {
            v = id * 100000 + i;
            MPI_Send(&v, 1, MPI_INT, peer, id, MPI_COMM_WORLD);
            MPI_Recv(&v, 1, MPI_INT, peer, id, MPI_COMM_WORLD, &st);
            thread_errs[id] += v != id * 100000 + i + 1 || st.MPI_TAG != id;
        } else {
            MPI_Recv(&v, 1, MPI_INT, peer, id, MPI_COMM_WORLD, &st);
            thread_errs[id] += v != id * 100000 + i || st.MPI_TAG != id;
            v++;
            MPI_Send(&v, 1, MPI_INT, peer, id, MPI_COMM_WORLD);
        }
    }
    return NULL;
}

static void *self_sender(void *arg)
{
    for (int i = 0; i < NSELF; i++) {
        int msg[2] = { i, i % 13 };
        MPI_Send(msg, 2, MPI_INT, 0, msg[1], MPI_COMM_SELF);
    }
    return NULL;
}

static void *prober(void *arg)
{
    for (int i = 0; i < NSELF; i++) {
        MPI_Status st;
        int msg[2] = { -1, -1 }, count = -1;
        MPI_Probe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_SELF, &st);
        MPI_Get_count(&st, MPI_INT, &count);
        MPI_Recv(msg, 2, MPI_INT, st.MPI_SOURCE, st.MPI_TAG, MPI_COMM_SELF, MPI_STATUS_IGNORE);
        thread_errs[NPP + 1] += msg[0] != i || msg[1] != st.MPI_TAG || count != 2;
    }
    return NULL;
}

int main(int argc, char **argv)
{
    int provided = -1;
    pthread_t th[NPP + 2];

    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    mt_setup();
    MT_CHECK(provided == MPI_THREAD_MULTIPLE, "provided %d", provided);
    if (provided != MPI_THREAD_MULTIPLE)
        return mt_finish();
    peer = (mt_rank ^ 1) < mt_size ? mt_rank ^ 1 : -1;

    int n = 0;
    if (peer >= 0)
        for (; n < NPP; n++)
            pthread_create(&th[n], NULL, pingpong, (void *)(long)n);
    pthread_create(&th[n++], NULL, self_sender, NULL);
    pthread_create(&th[n++], NULL, prober, NULL);
    for (int i = 0; i < n; i++)
        pthread_join(th[i], NULL);
    for (int i = 0; i < NPP + 2; i++)
        MT_CHECK(thread_errs[i] == 0, "thread %d: %d wrong messages", i, thread_errs[i]);
    return mt_finish();
}
