/*
 * Persistent requests: MPI_Send_init, MPI_Ssend_init, MPI_Rsend_init, MPI_Bsend_init and
 * MPI_Recv_init, started with MPI_Start and MPI_Startall several times with new data each time;
 * an inactive persistent request completes at once with an empty status; MPI_Request_free.
 * Buffers of the memory kind under test (MPITEST_MEMTYPE, mtest.h).
 */
#include "mtest.h"

#define N 5000 /* ints: above the eager limits of the usual transports */
#define ROUNDS 5

int main(int argc, char **argv)
{
    mt_init(&argc, &argv);
    int right = (mt_rank + 1) % mt_size, left = (mt_rank + mt_size - 1) % mt_size;
    int *out = mt_malloc(sizeof(int) * N * 4), *in = mt_malloc(sizeof(int) * N * 4);
    int bsize = N * (int)sizeof(int) + MPI_BSEND_OVERHEAD;
    void *bbuf = malloc(bsize);
    MPI_Request sreq[4], rreq[4];
    MPI_Status st[4];

    MPI_Buffer_attach(bbuf, bsize);
    /* One send of each kind to the right, four receives from the left; tag = kind. */
    MPI_Send_init(mt_d(out), N, MPI_INT, right, 0, MPI_COMM_WORLD, &sreq[0]);
    MPI_Ssend_init(mt_d(out + N), N, MPI_INT, right, 1, MPI_COMM_WORLD, &sreq[1]);
    MPI_Rsend_init(mt_d(out + 2 * N), N, MPI_INT, right, 2, MPI_COMM_WORLD, &sreq[2]);
    MPI_Bsend_init(mt_d(out + 3 * N), N, MPI_INT, right, 3, MPI_COMM_WORLD, &sreq[3]);
    for (int k = 0; k < 4; k++)
        MPI_Recv_init(mt_d(in + k * N), N, MPI_INT, left, k, MPI_COMM_WORLD, &rreq[k]);

    for (int round = 0; round < ROUNDS; round++) {
        for (int i = 0; i < 4 * N; i++)
            out[i] = mt_rank * 1000000 + round * 100000 + i;
        memset(in, 0, sizeof(int) * 4 * N);
        mt_put_all();

        if (round % 2) {
            MPI_Startall(4, rreq);
        } else {
            for (int k = 0; k < 4; k++)
                MPI_Start(&rreq[k]);
        }
        /* The ready send needs the right neighbour's receive posted: hear it from them. */
        MPI_Sendrecv(NULL, 0, MPI_INT, left, 50, NULL, 0, MPI_INT, right, 50, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        if (round % 2) {
            MPI_Startall(4, sreq);
        } else {
            for (int k = 0; k < 4; k++)
                MPI_Start(&sreq[k]);
        }
        MPI_Waitall(4, sreq, MPI_STATUSES_IGNORE);
        MPI_Waitall(4, rreq, st);
        mt_get(in);

        int bad = 0;
        for (int i = 0; i < 4 * N; i++)
            bad += in[i] != left * 1000000 + round * 100000 + i;
        MT_CHECK(bad == 0, "round %d: %d ints wrong", round, bad);
        for (int k = 0; k < 4; k++) {
            int count = -1;
            MPI_Get_count(&st[k], MPI_INT, &count);
            MT_CHECK(st[k].MPI_SOURCE == left && st[k].MPI_TAG == k && count == N,
                     "round %d receive %d: source %d tag %d count %d", round, k, st[k].MPI_SOURCE,
                     st[k].MPI_TAG, count);
        }
        /* Completed persistent requests stay allocated but inactive. */
        MT_CHECK(sreq[0] != MPI_REQUEST_NULL && rreq[0] != MPI_REQUEST_NULL, "persistent request was freed");
    }

    /* Waiting on an inactive persistent request returns at once with an empty status. */
    MPI_Status es;
    int flag = 0;
    MPI_Wait(&rreq[0], &es);
    MT_CHECK(mt_is_empty_status(&es), "MPI_Wait on an inactive request: source %d tag %d", es.MPI_SOURCE,
             es.MPI_TAG);
    MPI_Test(&rreq[1], &flag, &es);
    MT_CHECK(flag && mt_is_empty_status(&es), "MPI_Test on an inactive request: flag %d", flag);

    for (int k = 0; k < 4; k++) {
        MPI_Request_free(&sreq[k]);
        MPI_Request_free(&rreq[k]);
        MT_CHECK(sreq[k] == MPI_REQUEST_NULL && rreq[k] == MPI_REQUEST_NULL, "MPI_Request_free left a handle");
    }
    void *b;
    int bs;
    MPI_Buffer_detach(&b, &bs);
    free(bbuf);
    mt_mfree(out);
    mt_mfree(in);
    return mt_finish();
}
