/*
 * Synchronous and ready sends: an MPI_Issend does not complete before the receiver has posted the
 * matching receive (checked with MPI_Test while the receiver holds back), MPI_Ssend completes once
 * it has; MPI_Rsend/MPI_Irsend to a receive known to be posted.
 */
#include "mtest.h"

#define T_DATA 1
#define T_GO 2
#define T_READY 3

static void check_data(const int *buf, int n, int base, const char *what)
{
    int bad = 0;
    for (int i = 0; i < n; i++)
        bad += buf[i] != base + i;
    MT_CHECK(bad == 0, "%s: %d of %d ints wrong", what, bad, n);
}

int main(int argc, char **argv)
{
    static const int sizes[] = { 1, 1024, 1 << 18 }; /* ints: tiny, eager, rendezvous */
    mt_init(&argc, &argv);
    int peer = mt_rank ^ 1;
    int *buf = malloc(sizeof(int) * (1 << 18));

    if (peer < mt_size) {
        int sender = !(mt_rank & 1);
        for (size_t s = 0; s < sizeof(sizes) / sizeof(sizes[0]); s++) {
            int n = sizes[s];
            if (sender) {
                MPI_Request req;
                int flag = 0;
                for (int i = 0; i < n; i++)
                    buf[i] = 7 * (int)s + i;
                MPI_Issend(buf, n, MPI_INT, peer, T_DATA, MPI_COMM_WORLD, &req);
                /* The receiver posts nothing until told to: the send cannot have completed. */
                for (int i = 0; i < 50 && !flag; i++) {
                    MPI_Test(&req, &flag, MPI_STATUS_IGNORE);
                    mt_sleep_ms(2);
                }
                MT_CHECK(!flag, "MPI_Issend of %d ints completed before the receive was posted", n);
                MPI_Send(NULL, 0, MPI_INT, peer, T_GO, MPI_COMM_WORLD);
                MPI_Wait(&req, MPI_STATUS_IGNORE);

                /* Blocking Ssend, then Rsend and Irsend into receives the peer says are posted. */
                MPI_Ssend(buf, n, MPI_INT, peer, T_DATA, MPI_COMM_WORLD);
                MPI_Recv(NULL, 0, MPI_INT, peer, T_READY, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                MPI_Rsend(buf, n, MPI_INT, peer, T_DATA, MPI_COMM_WORLD);
                MPI_Irsend(buf, n, MPI_INT, peer, T_DATA + 10, MPI_COMM_WORLD, &req);
                MPI_Wait(&req, MPI_STATUS_IGNORE);
            } else {
                MPI_Request reqs[2];
                MPI_Status st;
                int count = -1;
                MPI_Recv(NULL, 0, MPI_INT, peer, T_GO, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                for (int k = 0; k < 2; k++) {
                    memset(buf, 0, sizeof(int) * n);
                    MPI_Recv(buf, n, MPI_INT, peer, T_DATA, MPI_COMM_WORLD, &st);
                    MPI_Get_count(&st, MPI_INT, &count);
                    MT_CHECK(count == n && st.MPI_SOURCE == peer && st.MPI_TAG == T_DATA,
                             "%s: count %d source %d tag %d", k ? "Ssend" : "Issend", count, st.MPI_SOURCE,
                             st.MPI_TAG);
                    check_data(buf, n, 7 * (int)s, k ? "Ssend" : "Issend");
                }
                int *buf2 = malloc(sizeof(int) * n);
                MPI_Irecv(buf, n, MPI_INT, peer, T_DATA, MPI_COMM_WORLD, &reqs[0]);
                MPI_Irecv(buf2, n, MPI_INT, peer, T_DATA + 10, MPI_COMM_WORLD, &reqs[1]);
                MPI_Send(NULL, 0, MPI_INT, peer, T_READY, MPI_COMM_WORLD);
                MPI_Waitall(2, reqs, MPI_STATUSES_IGNORE);
                check_data(buf, n, 7 * (int)s, "Rsend");
                check_data(buf2, n, 7 * (int)s, "Irsend");
                free(buf2);
            }
        }
    }
    /* Ssend to oneself completes once the receive is posted. */
    MPI_Request req;
    int one = 42, got = 0;
    MPI_Irecv(&got, 1, MPI_INT, mt_rank, 9, MPI_COMM_WORLD, &req);
    MPI_Ssend(&one, 1, MPI_INT, mt_rank, 9, MPI_COMM_WORLD);
    MPI_Wait(&req, MPI_STATUS_IGNORE);
    MT_CHECK(got == 42, "Ssend to self: %d", got);

    free(buf);
    return mt_finish();
}
