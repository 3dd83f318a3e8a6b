/*
 * Many outstanding requests: 2000 receives and 2000 sends posted at once around a ring (receives
 * in reverse tag order), completed by MPI_Waitall, then by an MPI_Waitsome/MPI_Testany loop.
 */
#include "mtest.h"

#define N 2000

int main(int argc, char **argv)
{
    mt_init(&argc, &argv);
    int right = (mt_rank + 1) % mt_size, left = (mt_rank + mt_size - 1) % mt_size;
    int *out = malloc(sizeof(int) * N), *in = malloc(sizeof(int) * N), *idx = malloc(sizeof(int) * 2 * N);
    MPI_Request *reqs = malloc(sizeof(MPI_Request) * 2 * N);
    MPI_Status *sts = malloc(sizeof(MPI_Status) * 2 * N);

    for (int round = 0; round < 2; round++) {
        for (int i = 0; i < N; i++) {
            out[i] = mt_rank * N + i + round;
            in[i] = -1;
        }
        for (int i = 0; i < N; i++)
            MPI_Irecv(&in[N - 1 - i], 1, MPI_INT, left, N - 1 - i, MPI_COMM_WORLD, &reqs[i]);
        for (int i = 0; i < N; i++)
            MPI_Isend(&out[i], 1, MPI_INT, right, i, MPI_COMM_WORLD, &reqs[N + i]);
        if (round == 0) {
            MPI_Waitall(2 * N, reqs, sts);
            for (int i = 0; i < N; i++)
                MT_CHECK(sts[i].MPI_TAG == N - 1 - i && sts[i].MPI_SOURCE == left, "request %d: tag %d source %d", i,
                         sts[i].MPI_TAG, sts[i].MPI_SOURCE);
        } else {
            int done = 0, outcount, flag, k;
            while (done < 2 * N) {
                MPI_Waitsome(2 * N, reqs, &outcount, idx, sts);
                MT_CHECK(outcount > 0 && outcount != MPI_UNDEFINED, "MPI_Waitsome outcount %d", outcount);
                if (outcount <= 0)
                    break;
                done += outcount;
                MPI_Testany(2 * N, reqs, &k, &flag, MPI_STATUS_IGNORE);
                if (flag && k != MPI_UNDEFINED)
                    done++;
            }
        }
        int bad = 0;
        for (int i = 0; i < N; i++)
            bad += in[i] != left * N + i + round;
        MT_CHECK(bad == 0, "round %d: %d of %d messages wrong", round, bad, N);
    }
    free(out);
    free(in);
    free(idx);
    free(reqs);
    free(sts);
    return mt_finish();
}
