/*
 * Messages to oneself (MPI_Isend/MPI_Irecv in either order, eager and rendezvous sizes), zero-byte
 * messages (NULL buffers too), and MPI_PROC_NULL as destination and source of every kind of call.
 */
#include "mtest.h"

int main(int argc, char **argv)
{
    static const int sizes[] = { 0, 1, 1000, 1 << 20 }; /* ints */
    mt_init(&argc, &argv);
    int *out = malloc(sizeof(int) << 20), *in = malloc(sizeof(int) << 20);
    MPI_Request reqs[2];
    MPI_Status st;
    int count;

    for (size_t s = 0; s < sizeof(sizes) / sizeof(sizes[0]); s++) {
        int n = sizes[s];
        for (int recv_first = 0; recv_first < 2; recv_first++) {
            for (int i = 0; i < n; i++)
                out[i] = i * 3 + recv_first;
            memset(in, 0, sizeof(int) * (n + 1));
            if (recv_first)
                MPI_Irecv(in, n + 1, MPI_INT, mt_rank, 3, MPI_COMM_WORLD, &reqs[1]);
            MPI_Isend(out, n, MPI_INT, mt_rank, 3, MPI_COMM_WORLD, &reqs[0]);
            if (!recv_first)
                MPI_Irecv(in, n + 1, MPI_INT, mt_rank, 3, MPI_COMM_WORLD, &reqs[1]);
            MPI_Waitall(2, reqs, MPI_STATUSES_IGNORE);
            int bad = 0;
            for (int i = 0; i < n; i++)
                bad += in[i] != i * 3 + recv_first;
            MT_CHECK(bad == 0 && in[n] == 0, "self message of %d ints (receive first %d): %d wrong", n, recv_first,
                     bad);
        }
    }

    /* Zero bytes with NULL buffers, to oneself and to a neighbour; the status counts 0. */
    int right = (mt_rank + 1) % mt_size, left = (mt_rank + mt_size - 1) % mt_size;
    MPI_Irecv(NULL, 0, MPI_BYTE, left, 4, MPI_COMM_WORLD, &reqs[1]);
    MPI_Isend(NULL, 0, MPI_BYTE, right, 4, MPI_COMM_WORLD, &reqs[0]);
    MPI_Wait(&reqs[0], MPI_STATUS_IGNORE);
    MPI_Wait(&reqs[1], &st);
    MPI_Get_count(&st, MPI_BYTE, &count);
    MT_CHECK(count == 0 && st.MPI_SOURCE == left && st.MPI_TAG == 4, "zero-byte message: count %d source %d tag %d",
             count, st.MPI_SOURCE, st.MPI_TAG);
    /* A zero-byte message into a larger buffer leaves the buffer alone. */
    in[0] = 77;
    MPI_Irecv(in, 10, MPI_INT, left, 5, MPI_COMM_WORLD, &reqs[1]);
    MPI_Send(out, 0, MPI_INT, right, 5, MPI_COMM_WORLD);
    MPI_Wait(&reqs[1], &st);
    MPI_Get_count(&st, MPI_INT, &count);
    MT_CHECK(count == 0 && in[0] == 77, "zero-int message: count %d, buffer %d", count, in[0]);

    /* MPI_PROC_NULL: sends succeed at once, receives complete with source PROC_NULL, tag
     * ANY_TAG, count 0, and do not touch the buffer. */
    in[0] = 55;
    MPI_Send(out, 10, MPI_INT, MPI_PROC_NULL, 1, MPI_COMM_WORLD);
    MPI_Ssend(out, 10, MPI_INT, MPI_PROC_NULL, 1, MPI_COMM_WORLD);
    MPI_Rsend(out, 10, MPI_INT, MPI_PROC_NULL, 1, MPI_COMM_WORLD);
    MPI_Recv(in, 10, MPI_INT, MPI_PROC_NULL, 1, MPI_COMM_WORLD, &st);
    MPI_Get_count(&st, MPI_INT, &count);
    MT_CHECK(st.MPI_SOURCE == MPI_PROC_NULL && st.MPI_TAG == MPI_ANY_TAG && count == 0 && in[0] == 55,
             "Recv(PROC_NULL): source %d tag %d count %d", st.MPI_SOURCE, st.MPI_TAG, count);
    MPI_Isend(out, 10, MPI_INT, MPI_PROC_NULL, 1, MPI_COMM_WORLD, &reqs[0]);
    MPI_Irecv(in, 10, MPI_INT, MPI_PROC_NULL, 1, MPI_COMM_WORLD, &reqs[1]);
    MPI_Wait(&reqs[0], MPI_STATUS_IGNORE);
    MPI_Wait(&reqs[1], &st);
    MPI_Get_count(&st, MPI_INT, &count);
    MT_CHECK(st.MPI_SOURCE == MPI_PROC_NULL && st.MPI_TAG == MPI_ANY_TAG && count == 0 && in[0] == 55,
             "Irecv(PROC_NULL): source %d tag %d count %d", st.MPI_SOURCE, st.MPI_TAG, count);
    MPI_Issend(out, 10, MPI_INT, MPI_PROC_NULL, 1, MPI_COMM_WORLD, &reqs[0]);
    MPI_Wait(&reqs[0], MPI_STATUS_IGNORE);
    MPI_Recv_init(in, 10, MPI_INT, MPI_PROC_NULL, 1, MPI_COMM_WORLD, &reqs[1]);
    MPI_Start(&reqs[1]);
    MPI_Wait(&reqs[1], &st);
    MT_CHECK(st.MPI_SOURCE == MPI_PROC_NULL && in[0] == 55, "persistent Recv(PROC_NULL): source %d", st.MPI_SOURCE);
    MPI_Request_free(&reqs[1]);

    free(out);
    free(in);
    return mt_finish();
}
