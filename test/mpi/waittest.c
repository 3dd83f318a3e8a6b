/*
 * Completion calls: MPI_Wait/Test and their -all/-any/-some forms with MPI_REQUEST_NULL entries,
 * MPI_STATUSES_IGNORE and MPI_UNDEFINED results; MPI_Request_get_status (does not free);
 * MPI_Request_free of an active send; MPI_Cancel of a posted receive and MPI_Test_cancelled.
 */
#include "mtest.h"

#define T_A 1
#define T_B 2
#define T_NEVER 3
#define T_FREED 4

int main(int argc, char **argv)
{
    mt_init(&argc, &argv);
    int peer = (mt_rank ^ 1) < mt_size ? mt_rank ^ 1 : mt_rank;
    int a = mt_rank + 10, b = mt_rank + 20, ra = -1, rb = -1, flag, idx, outcount, indices[4];
    MPI_Request reqs[4];
    MPI_Status sts[4], st;

    /* Null requests complete at once with an empty status. */
    MPI_Request rnull = MPI_REQUEST_NULL;
    MPI_Wait(&rnull, &st);
    MT_CHECK(mt_is_empty_status(&st), "MPI_Wait(MPI_REQUEST_NULL): source %d tag %d", st.MPI_SOURCE, st.MPI_TAG);
    flag = 0;
    MPI_Test(&rnull, &flag, &st);
    MT_CHECK(flag && mt_is_empty_status(&st), "MPI_Test(MPI_REQUEST_NULL): flag %d", flag);
    for (int i = 0; i < 4; i++)
        reqs[i] = MPI_REQUEST_NULL;
    MPI_Waitany(4, reqs, &idx, &st);
    MT_CHECK(idx == MPI_UNDEFINED && mt_is_empty_status(&st), "MPI_Waitany on nulls: index %d", idx);
    flag = 0;
    MPI_Testany(4, reqs, &idx, &flag, &st);
    MT_CHECK(flag && idx == MPI_UNDEFINED, "MPI_Testany on nulls: flag %d index %d", flag, idx);
    MPI_Waitsome(4, reqs, &outcount, indices, sts);
    MT_CHECK(outcount == MPI_UNDEFINED, "MPI_Waitsome on nulls: outcount %d", outcount);
    MPI_Testsome(4, reqs, &outcount, indices, sts);
    MT_CHECK(outcount == MPI_UNDEFINED, "MPI_Testsome on nulls: outcount %d", outcount);
    flag = 0;
    MPI_Testall(4, reqs, &flag, MPI_STATUSES_IGNORE);
    MT_CHECK(flag, "MPI_Testall on nulls: flag %d", flag);
    MPI_Waitall(0, NULL, NULL);
    flag = 0;
    MPI_Request_get_status(MPI_REQUEST_NULL, &flag, &st);
    MT_CHECK(flag && mt_is_empty_status(&st), "MPI_Request_get_status(NULL): flag %d", flag);

    /* Waitall with null entries among real ones. */
    reqs[0] = MPI_REQUEST_NULL;
    MPI_Irecv(&ra, 1, MPI_INT, peer, T_A, MPI_COMM_WORLD, &reqs[1]);
    reqs[2] = MPI_REQUEST_NULL;
    MPI_Isend(&a, 1, MPI_INT, peer, T_A, MPI_COMM_WORLD, &reqs[3]);
    MPI_Waitall(4, reqs, sts);
    MT_CHECK(ra == peer + 10 && sts[1].MPI_SOURCE == peer && sts[1].MPI_TAG == T_A, "Waitall: got %d from %d", ra,
             sts[1].MPI_SOURCE);
    MT_CHECK(mt_is_empty_status(&sts[0]) && mt_is_empty_status(&sts[2]), "Waitall: null entries' statuses");
    for (int i = 0; i < 4; i++)
        MT_CHECK(reqs[i] == MPI_REQUEST_NULL, "Waitall left request %d", i);

    /* Testall stays false until the peer's message arrives; Waitany/Waitsome/Testany/Testsome
     * report indices. The peer sends T_B only after it has heard our T_A. */
    ra = rb = -1;
    MPI_Irecv(&rb, 1, MPI_INT, peer, T_B, MPI_COMM_WORLD, &reqs[0]);
    reqs[1] = MPI_REQUEST_NULL;
    flag = 1;
    MPI_Testall(2, reqs, &flag, MPI_STATUSES_IGNORE);
    MT_CHECK(!flag, "MPI_Testall true before the message was sent");
    flag = 1;
    MPI_Testany(2, reqs, &idx, &flag, &st);
    MT_CHECK(!flag && idx == MPI_UNDEFINED, "MPI_Testany before the message: flag %d index %d", flag, idx);
    MPI_Testsome(2, reqs, &outcount, indices, sts);
    MT_CHECK(outcount == 0, "MPI_Testsome before the message: outcount %d", outcount);
    MPI_Sendrecv(&a, 1, MPI_INT, peer, T_A, &ra, 1, MPI_INT, peer, T_A, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    MPI_Request bsreq; /* not a blocking send: the peer may be this rank */
    MPI_Isend(&b, 1, MPI_INT, peer, T_B, MPI_COMM_WORLD, &bsreq);
    if (mt_rank & 1) {
        MPI_Waitany(2, reqs, &idx, &st);
        MT_CHECK(idx == 0 && st.MPI_TAG == T_B && rb == peer + 20 && reqs[0] == MPI_REQUEST_NULL,
                 "MPI_Waitany: index %d tag %d value %d", idx, st.MPI_TAG, rb);
    } else {
        MPI_Waitsome(2, reqs, &outcount, indices, MPI_STATUSES_IGNORE);
        MT_CHECK(outcount == 1 && indices[0] == 0 && rb == peer + 20 && reqs[0] == MPI_REQUEST_NULL,
                 "MPI_Waitsome: outcount %d index %d value %d", outcount, indices[0], rb);
    }

    MPI_Wait(&bsreq, MPI_STATUS_IGNORE);

    /* Request_get_status reports completion without freeing; Wait then frees. */
    MPI_Irecv(&ra, 1, MPI_INT, 0, T_A, MPI_COMM_SELF, &reqs[0]);
    MPI_Isend(&a, 1, MPI_INT, 0, T_A, MPI_COMM_SELF, &reqs[1]);
    flag = 0;
    while (!flag)
        MPI_Request_get_status(reqs[0], &flag, &st);
    MT_CHECK(reqs[0] != MPI_REQUEST_NULL && st.MPI_SOURCE == 0 && st.MPI_TAG == T_A,
             "MPI_Request_get_status: request %s, source %d", reqs[0] == MPI_REQUEST_NULL ? "freed" : "kept",
             st.MPI_SOURCE);
    MPI_Request_get_status(reqs[0], &flag, &st); /* still there, still complete */
    MT_CHECK(flag, "second MPI_Request_get_status: flag %d", flag);
    MPI_Waitall(2, reqs, sts);
    MT_CHECK(ra == a && sts[0].MPI_SOURCE == 0 && reqs[0] == MPI_REQUEST_NULL, "Wait after get_status");

    /* Request_free of an active send: the message still arrives. */
    MPI_Request sreq;
    int big[2000];
    for (int i = 0; i < 2000; i++)
        big[i] = mt_rank + i;
    MPI_Isend(big, 2000, MPI_INT, peer, T_FREED, MPI_COMM_WORLD, &sreq);
    MPI_Request_free(&sreq);
    MT_CHECK(sreq == MPI_REQUEST_NULL, "MPI_Request_free did not null the handle");
    int got[2000], bad = 0;
    MPI_Recv(got, 2000, MPI_INT, peer, T_FREED, MPI_COMM_WORLD, &st);
    for (int i = 0; i < 2000; i++)
        bad += got[i] != peer + i;
    MT_CHECK(bad == 0, "message of a freed send request: %d ints wrong", bad);
    /* The buffer may be reused only once the peer has the message: hear that it has. */
    MPI_Sendrecv(NULL, 0, MPI_INT, peer, T_FREED, NULL, 0, MPI_INT, peer, T_FREED, MPI_COMM_WORLD, &st);

    /* Cancel a receive nobody will match. */
    MPI_Request rreq;
    MPI_Irecv(&ra, 1, MPI_INT, peer, T_NEVER, MPI_COMM_WORLD, &rreq);
    MPI_Cancel(&rreq);
    MPI_Wait(&rreq, &st);
    flag = 0;
    MPI_Test_cancelled(&st, &flag);
    MT_CHECK(flag, "cancelled receive: MPI_Test_cancelled %d", flag);
    MT_CHECK(rreq == MPI_REQUEST_NULL, "Wait on a cancelled receive did not free it");
    /* A received message is not cancelled, even if MPI_Cancel came too late. */
    MPI_Irecv(&ra, 1, MPI_INT, 0, T_A, MPI_COMM_SELF, &rreq);
    MPI_Send(&a, 1, MPI_INT, 0, T_A, MPI_COMM_SELF); /* the receive is posted */
    flag = 0;
    while (!flag)
        MPI_Request_get_status(rreq, &flag, MPI_STATUS_IGNORE);
    MPI_Cancel(&rreq);
    MPI_Wait(&rreq, &st);
    MPI_Test_cancelled(&st, &flag);
    MT_CHECK(!flag && ra == a, "completed receive reported cancelled (%d) or lost (%d)", flag, ra);

    return mt_finish();
}
