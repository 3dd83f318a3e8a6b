/*
 * MPI_ANY_SOURCE and MPI_ANY_TAG: rank 0 receives every message of every other rank with
 * wildcards; the status names the true source and tag, and each source's messages arrive in the
 * order they were sent (non-overtaking holds per source under wildcards).
 */
#include "mtest.h"

#define NMSG 200

int main(int argc, char **argv)
{
    mt_init(&argc, &argv);
    if (mt_rank == 0) {
        int next[64] = { 0 }, msg[3];
        MPI_Status st;
        for (int k = 0; k < (mt_size - 1) * NMSG; k++) {
            MPI_Recv(msg, 3, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &st);
            int src = st.MPI_SOURCE;
            MT_CHECK(src > 0 && src < mt_size && msg[0] == src, "source %d, payload says %d", src, msg[0]);
            if (src <= 0 || src >= mt_size)
                continue;
            MT_CHECK(msg[1] == next[src], "from %d: message %d arrived when %d was due", src, msg[1], next[src]);
            MT_CHECK(st.MPI_TAG == msg[2], "from %d: tag %d, payload says %d", src, st.MPI_TAG, msg[2]);
            next[src] = msg[1] + 1;
        }
        /* Specific source, any tag; any source, specific tag. Until now the others held these back. */
        for (int src = 1; src < mt_size; src++)
            MPI_Send(NULL, 0, MPI_INT, src, 3000, MPI_COMM_WORLD);
        for (int src = 1; src < mt_size; src++) {
            MPI_Recv(msg, 3, MPI_INT, src, MPI_ANY_TAG, MPI_COMM_WORLD, &st);
            MT_CHECK(st.MPI_SOURCE == src && st.MPI_TAG == 1000 + src && msg[0] == src,
                     "Recv(%d, ANY_TAG): source %d tag %d", src, st.MPI_SOURCE, st.MPI_TAG);
        }
        for (int src = mt_size - 1; src > 0; src--) {
            MPI_Recv(msg, 3, MPI_INT, MPI_ANY_SOURCE, 2000 + src, MPI_COMM_WORLD, &st);
            MT_CHECK(st.MPI_SOURCE == src && st.MPI_TAG == 2000 + src && msg[0] == src,
                     "Recv(ANY_SOURCE, %d): source %d tag %d", 2000 + src, st.MPI_SOURCE, st.MPI_TAG);
        }
    } else {
        for (int i = 0; i < NMSG; i++) {
            int msg[3] = { mt_rank, i, i % 7 };
            MPI_Send(msg, 3, MPI_INT, 0, msg[2], MPI_COMM_WORLD);
        }
        int a[3] = { mt_rank, 0, 1000 + mt_rank }, b[3] = { mt_rank, 0, 2000 + mt_rank };
        MPI_Recv(NULL, 0, MPI_INT, 0, 3000, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        MPI_Send(a, 3, MPI_INT, 0, a[2], MPI_COMM_WORLD);
        MPI_Send(b, 3, MPI_INT, 0, b[2], MPI_COMM_WORLD);
    }
    return mt_finish();
}
