/*
 * Truncation: a message longer than the receive buffer gives MPI_ERR_TRUNCATE (eager and rendezvous
 * sizes, MPI_Recv and MPI_Wait); in MPI_Waitall it makes the call return MPI_ERR_IN_STATUS with
 * MPI_ERR_TRUNCATE in that request's status and MPI_SUCCESS in the others. The job goes on.
 */
#include "mtest.h"

int main(int argc, char **argv)
{
    static const int sizes[] = { 8, 100000 }; /* ints sent; half of that fits */
    mt_init(&argc, &argv);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    int peer = (mt_rank ^ 1) < mt_size ? mt_rank ^ 1 : mt_rank;
    int *out = malloc(sizeof(int) * 100000), *in = malloc(sizeof(int) * 200000);
    for (int i = 0; i < 100000; i++)
        out[i] = i;

    for (int s = 0; s < 2; s++) {
        int n = sizes[s], rc;
        MPI_Request reqs[3];
        MPI_Status st, sts[3];

        /* MPI_Recv */
        MPI_Isend(out, n, MPI_INT, peer, 1, MPI_COMM_WORLD, &reqs[0]);
        st.MPI_ERROR = -1;
        rc = MPI_Recv(in, n / 2, MPI_INT, peer, 1, MPI_COMM_WORLD, &st);
        MT_CHECK(mt_class(rc) == MPI_ERR_TRUNCATE, "MPI_Recv of %d into %d ints: rc class %d", n, n / 2, mt_class(rc));
        MT_CHECK(st.MPI_SOURCE == peer && st.MPI_TAG == 1, "truncated MPI_Recv status: source %d tag %d",
                 st.MPI_SOURCE, st.MPI_TAG);
        rc = MPI_Wait(&reqs[0], MPI_STATUS_IGNORE);
        MT_CHECK(rc == MPI_SUCCESS, "the send of a truncated message failed: %s", mt_errstr(rc));

        /* MPI_Wait on an MPI_Irecv */
        MPI_Irecv(in, n / 2, MPI_INT, peer, 2, MPI_COMM_WORLD, &reqs[1]);
        MPI_Isend(out, n, MPI_INT, peer, 2, MPI_COMM_WORLD, &reqs[0]);
        rc = MPI_Wait(&reqs[1], &st);
        MT_CHECK(mt_class(rc) == MPI_ERR_TRUNCATE, "MPI_Wait of a truncated MPI_Irecv: class %d", mt_class(rc));
        MPI_Wait(&reqs[0], MPI_STATUS_IGNORE);

        /* MPI_Waitall: one good receive, one truncated, one send */
        MPI_Irecv(in, n, MPI_INT, peer, 3, MPI_COMM_WORLD, &reqs[0]);
        MPI_Irecv(in + n, n / 2, MPI_INT, peer, 4, MPI_COMM_WORLD, &reqs[1]);
        MPI_Request sreqs[2];
        MPI_Isend(out, n, MPI_INT, peer, 3, MPI_COMM_WORLD, &sreqs[0]);
        MPI_Isend(out, n, MPI_INT, peer, 4, MPI_COMM_WORLD, &sreqs[1]);
        reqs[2] = sreqs[0];
        for (int i = 0; i < 3; i++)
            sts[i].MPI_ERROR = -1;
        rc = MPI_Waitall(3, reqs, sts);
        MT_CHECK(mt_class(rc) == MPI_ERR_IN_STATUS, "MPI_Waitall with a truncation: class %d", mt_class(rc));
        /* The others either completed or are still pending (then they are still active). */
        for (int i = 0; i < 3; i += 2) {
            MT_CHECK(sts[i].MPI_ERROR == MPI_SUCCESS || sts[i].MPI_ERROR == MPI_ERR_PENDING,
                     "MPI_Waitall: request %d's MPI_ERROR %d", i, sts[i].MPI_ERROR);
            if (sts[i].MPI_ERROR == MPI_ERR_PENDING)
                MPI_Wait(&reqs[i], &sts[i]);
        }
        MT_CHECK(sts[1].MPI_ERROR != -1 && mt_class(sts[1].MPI_ERROR) == MPI_ERR_TRUNCATE,
                 "MPI_Waitall: truncated request's MPI_ERROR %d", sts[1].MPI_ERROR);
        MT_CHECK(sts[0].MPI_SOURCE == peer && sts[0].MPI_TAG == 3 && in[n - 1] == n - 1,
                 "MPI_Waitall: the good receive: source %d tag %d", sts[0].MPI_SOURCE, sts[0].MPI_TAG);
        MPI_Wait(&sreqs[1], MPI_STATUS_IGNORE);

        /* Still talking afterwards. */
        MPI_Sendrecv(out, n, MPI_INT, peer, 5, in, n, MPI_INT, peer, 5, MPI_COMM_WORLD, &st);
        MT_CHECK(in[n - 1] == n - 1, "exchange after truncations");
    }
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
    free(out);
    free(in);
    return mt_finish();
}
