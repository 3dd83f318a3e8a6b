/*
 * MPI_Sendrecv and MPI_Sendrecv_replace around a ring at several sizes, with wildcards on the
 * receive side and MPI_PROC_NULL on either side. Buffers of the memory kind under test
 * (MPITEST_MEMTYPE, mtest.h).
 */
#include "mtest.h"

int main(int argc, char **argv)
{
    static const int sizes[] = { 0, 1, 1000, 300000 }; /* ints */
    mt_init(&argc, &argv);
    int right = (mt_rank + 1) % mt_size, left = (mt_rank + mt_size - 1) % mt_size;
    mt_buf_t bout, bin;
    mt_buf_init(&bout, sizeof(int) * 300000);
    mt_buf_init(&bin, sizeof(int) * 300000);
    int *out = bout.h, *in = bin.h;

    for (size_t s = 0; s < sizeof(sizes) / sizeof(sizes[0]); s++) {
        int n = sizes[s], count, bad;
        MPI_Status st;

        for (int i = 0; i < n; i++)
            out[i] = mt_rank * 7 + i;
        memset(in, 0xff, sizeof(int) * 300000);
        mt_push(&bout);
        mt_push(&bin);
        MPI_Sendrecv(bout.d, n, MPI_INT, right, 10 + (int)s, bin.d, n, MPI_INT, left, 10 + (int)s, MPI_COMM_WORLD, &st);
        mt_pull(&bin);
        MPI_Get_count(&st, MPI_INT, &count);
        bad = 0;
        for (int i = 0; i < n; i++)
            bad += in[i] != left * 7 + i;
        MT_CHECK(bad == 0 && count == n && st.MPI_SOURCE == left && st.MPI_TAG == 10 + (int)s,
                 "Sendrecv %d ints: %d wrong, count %d source %d tag %d", n, bad, count, st.MPI_SOURCE, st.MPI_TAG);

        /* Wildcards on the receive side. */
        MPI_Sendrecv(bout.d, n, MPI_INT, right, 20 + (int)s, bin.d, n, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG,
                     MPI_COMM_WORLD, &st);
        MPI_Get_count(&st, MPI_INT, &count);
        MT_CHECK(count == n && st.MPI_SOURCE == left && st.MPI_TAG == 20 + (int)s,
                 "Sendrecv with wildcards: count %d source %d tag %d", count, st.MPI_SOURCE, st.MPI_TAG);

        /* In place: what comes from the left replaces what went to the right. */
        for (int i = 0; i < n; i++)
            in[i] = mt_rank * 3 + i;
        mt_push(&bin);
        MPI_Sendrecv_replace(bin.d, n, MPI_INT, right, 30, left, 30, MPI_COMM_WORLD, &st);
        mt_pull(&bin);
        MPI_Get_count(&st, MPI_INT, &count);
        bad = 0;
        for (int i = 0; i < n; i++)
            bad += in[i] != left * 3 + i;
        MT_CHECK(bad == 0 && count == n && st.MPI_SOURCE == left && st.MPI_TAG == 30,
                 "Sendrecv_replace %d ints: %d wrong, count %d source %d", n, bad, count, st.MPI_SOURCE);
    }

    /* MPI_PROC_NULL: the send side does nothing, the receive side completes at once. */
    MPI_Status st;
    int count = -1, x = 5;
    MPI_Sendrecv(bout.d, 10, MPI_INT, MPI_PROC_NULL, 1, bin.d, 10, MPI_INT, MPI_PROC_NULL, 1, MPI_COMM_WORLD, &st);
    MPI_Get_count(&st, MPI_INT, &count);
    MT_CHECK(st.MPI_SOURCE == MPI_PROC_NULL && st.MPI_TAG == MPI_ANY_TAG && count == 0,
             "Sendrecv from PROC_NULL: source %d tag %d count %d", st.MPI_SOURCE, st.MPI_TAG, count);
    MPI_Sendrecv_replace(&x, 1, MPI_INT, MPI_PROC_NULL, 1, MPI_PROC_NULL, 1, MPI_COMM_WORLD, &st);
    MT_CHECK(x == 5 && st.MPI_SOURCE == MPI_PROC_NULL, "Sendrecv_replace with PROC_NULL changed %d", x);
    /* Half null: send right, receive from nobody; the right neighbour receives from the left. */
    MPI_Request req;
    MPI_Irecv(&x, 1, MPI_INT, left, 2, MPI_COMM_WORLD, &req); /* posted first: the ring may be one rank */
    MPI_Sendrecv(&mt_rank, 1, MPI_INT, right, 2, NULL, 0, MPI_INT, MPI_PROC_NULL, 2, MPI_COMM_WORLD, &st);
    MPI_Wait(&req, &st);
    MT_CHECK(x == left && st.MPI_SOURCE == left, "half-null Sendrecv got %d from %d", x, st.MPI_SOURCE);

    mt_buf_free(&bout);
    mt_buf_free(&bin);
    return mt_finish();
}
