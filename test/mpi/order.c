/*
 * Non-overtaking: messages from one sender with one tag are received in the order sent, for many
 * small messages and for mixed sizes that cross the eager/rendezvous boundary (8 B .. 4 MiB), with
 * the receives posted late (unexpected messages) and early (posted receives).
 */
#include "mtest.h"

#define NSMALL 1000
#define NMIXED 60
#define MAXLEN (4 << 20)

static int mixed_len(int i) /* bytes, a multiple of 4 */
{
    static const int lens[] = { 8, 1024, 8192, 65536, 200000, 1 << 20, MAXLEN };
    return lens[(i * 5) % 7];
}

int main(int argc, char **argv)
{
    mt_init(&argc, &argv);
    int peer = mt_rank ^ 1;
    int *buf = malloc(MAXLEN);

    if (peer < mt_size) {
        for (int late = 0; late < 2; late++) {
            if (!(mt_rank & 1)) {
                /* Many small messages in flight at once, then mixed sizes, one tag. */
                int vals[NSMALL];
                MPI_Request reqs[NSMALL];
                for (int i = 0; i < NSMALL; i++) {
                    vals[i] = i;
                    MPI_Isend(&vals[i], 1, MPI_INT, peer, 5, MPI_COMM_WORLD, &reqs[i]);
                }
                MPI_Waitall(NSMALL, reqs, MPI_STATUSES_IGNORE);
                for (int i = 0; i < NMIXED; i++) {
                    int n = mixed_len(i) / 4;
                    buf[0] = buf[n - 1] = i;
                    MPI_Send(buf, n, MPI_INT, peer, 6, MPI_COMM_WORLD);
                }
            } else {
                MPI_Status st;
                int v, count;
                if (late)
                    mt_sleep_ms(100); /* let the messages arrive unexpected */
                for (int i = 0; i < NSMALL; i++) {
                    MPI_Recv(&v, 1, MPI_INT, peer, 5, MPI_COMM_WORLD, &st);
                    if (v != i) {
                        MT_CHECK(v == i, "small message %d arrived as number %d", v, i);
                        break;
                    }
                }
                for (int i = 0; i < NMIXED; i++) {
                    buf[0] = -1;
                    MPI_Recv(buf, MAXLEN / 4, MPI_INT, peer, 6, MPI_COMM_WORLD, &st);
                    MPI_Get_count(&st, MPI_INT, &count);
                    int n = mixed_len(i) / 4;
                    MT_CHECK(count == n && buf[0] == i && buf[n - 1] == i,
                             "mixed message %d: %d ints (want %d), marks %d %d", i, count, n, buf[0], buf[n - 1]);
                    if (buf[0] != i)
                        break;
                }
            }
        }
    }
    free(buf);
    return mt_finish();
}
