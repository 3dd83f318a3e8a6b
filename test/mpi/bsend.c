/*
 * Buffered sends: MPI_Buffer_attach/detach, MPI_BSEND_OVERHEAD, MPI_Bsend, MPI_Ibsend,
 * MPI_Bsend_init, and MPI_ERR_BUFFER when the attached buffer is too small.
 */
#include "mtest.h"

#define NMSG 10
#define LEN 1000 /* ints */

int main(int argc, char **argv)
{
    mt_init(&argc, &argv);
    int peer = (mt_rank ^ 1) < mt_size ? mt_rank ^ 1 : mt_rank;
    int size = NMSG * (LEN * (int)sizeof(int) + MPI_BSEND_OVERHEAD);
    char *buffer = malloc(size);
    int *msgs = malloc(sizeof(int) * LEN * NMSG), *in = malloc(sizeof(int) * LEN);

    MT_CHECK(MPI_BSEND_OVERHEAD >= 0, "MPI_BSEND_OVERHEAD %d", (int)MPI_BSEND_OVERHEAD);
    MPI_Buffer_attach(buffer, size);

    /* Bsend completes locally: all of them return before the peer receives any. Each message
     * is overwritten right after its Bsend, which must not change what arrives. */
    for (int round = 0; round < 3; round++) {
        for (int m = 0; m < NMSG; m++) {
            int *msg = msgs + m * LEN;
            for (int i = 0; i < LEN; i++)
                msg[i] = mt_rank * 100000 + round * 1000 + m * 10 + i % 10;
            if (m % 3 == 0) {
                MPI_Bsend(msg, LEN, MPI_INT, peer, m, MPI_COMM_WORLD);
            } else {
                MPI_Request req;
                if (m % 3 == 1)
                    MPI_Ibsend(msg, LEN, MPI_INT, peer, m, MPI_COMM_WORLD, &req);
                else
                    MPI_Bsend_init(msg, LEN, MPI_INT, peer, m, MPI_COMM_WORLD, &req);
                if (m % 3 == 2)
                    MPI_Start(&req);
                MPI_Wait(&req, MPI_STATUS_IGNORE);
                if (m % 3 == 2)
                    MPI_Request_free(&req);
            }
            memset(msg, 0, sizeof(int) * LEN);
        }
        for (int m = NMSG - 1; m >= 0; m--) {
            MPI_Status st;
            int count = -1, bad = 0;
            MPI_Recv(in, LEN, MPI_INT, peer, m, MPI_COMM_WORLD, &st);
            MPI_Get_count(&st, MPI_INT, &count);
            for (int i = 0; i < LEN; i++)
                bad += in[i] != peer * 100000 + round * 1000 + m * 10 + i % 10;
            MT_CHECK(bad == 0 && count == LEN && st.MPI_SOURCE == peer && st.MPI_TAG == m,
                     "round %d message %d: %d bad, count %d", round, m, bad, count);
        }
    }

    /* Detach waits for the messages to leave and gives back what was attached. */
    void *got = NULL;
    int gotsize = -1;
    MPI_Buffer_detach(&got, &gotsize);
    MT_CHECK(got == buffer && gotsize == size, "detach gave %p/%d, attached %p/%d", got, gotsize,
             (void *)buffer, size);

    /* A buffer too small for the message. */
    char small[100 + MPI_BSEND_OVERHEAD];
    MPI_Buffer_attach(small, sizeof(small));
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    int rc = MPI_Bsend(msgs, 1000, MPI_INT, peer, 99, MPI_COMM_WORLD);
    MT_CHECK(rc != MPI_SUCCESS && mt_class(rc) == MPI_ERR_BUFFER, "Bsend of 4000 bytes into %zu: rc %d class %d",
             sizeof(small), rc, rc ? mt_class(rc) : 0);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
    /* A message that fits still goes. */
    MPI_Bsend(msgs, 10, MPI_INT, peer, 98, MPI_COMM_WORLD);
    MPI_Recv(in, 10, MPI_INT, peer, 98, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    MPI_Buffer_detach(&got, &gotsize);
    MT_CHECK(got == small && gotsize == (int)sizeof(small), "second detach %p/%d", got, gotsize);

    free(buffer);
    free(msgs);
    free(in);
    return mt_finish();
}
