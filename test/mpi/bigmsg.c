/*
 * Large messages: 4, 16 and 64 MiB both ways between pairs with MPI_Send/MPI_Recv and with
 * MPI_Isend/MPI_Irecv, every byte checked. Buffers of the memory kind under test (MPITEST_MEMTYPE,
 * mtest.h).
 */
#include "mtest.h"
#include <stdint.h>

int main(int argc, char **argv)
{
    mt_init(&argc, &argv);
    int peer = (mt_rank ^ 1) < mt_size ? mt_rank ^ 1 : mt_rank;
    size_t max = (size_t)64 << 20;
    uint32_t *out = mt_malloc(max), *in = mt_malloc(max);

    for (int mib = 4; mib <= 64; mib *= 4) {
        size_t n = ((size_t)mib << 20) / 4;
        for (size_t i = 0; i < n; i++)
            out[i] = (uint32_t)(i * 2654435761u) ^ (uint32_t)(mt_rank * 977 + mib);
        for (int nb = 0; nb < 2; nb++) {
            MPI_Request reqs[2];
            MPI_Status st;
            int count;
            memset(in, 0, n * 4);
            mt_put_all();
            MPI_Irecv(mt_d(in), (int)n, MPI_UINT32_T, peer, mib, MPI_COMM_WORLD, &reqs[0]);
            if (nb) {
                MPI_Isend(mt_d(out), (int)n, MPI_UINT32_T, peer, mib, MPI_COMM_WORLD, &reqs[1]);
                MPI_Waitall(2, reqs, MPI_STATUSES_IGNORE);
                st.MPI_SOURCE = peer;
                count = (int)n;
            } else {
                MPI_Send(mt_d(out), (int)n, MPI_UINT32_T, peer, mib, MPI_COMM_WORLD);
                MPI_Wait(&reqs[0], &st);
                MPI_Get_count(&st, MPI_UINT32_T, &count);
            }
            mt_get(in);
            size_t bad = 0;
            for (size_t i = 0; i < n; i++)
                bad += in[i] != ((uint32_t)(i * 2654435761u) ^ (uint32_t)(peer * 977 + mib));
            MT_CHECK(bad == 0 && count == (int)n && st.MPI_SOURCE == peer, "%d MiB (%s): %zu words wrong, count %d",
                     mib, nb ? "Isend" : "Send", bad, count);
        }
    }
    mt_mfree(out);
    mt_mfree(in);
    return mt_finish();
}
