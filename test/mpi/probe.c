/*
 * MPI_Probe, MPI_Iprobe, MPI_Mprobe, MPI_Improbe, MPI_Mrecv, MPI_Imrecv: the status tells source,
 * tag and size before the receive; a matched message can no longer be probed or received by
 * anyone else; MPI_PROC_NULL probes give MPI_MESSAGE_NO_PROC and an empty-ish status.
 */
#include "mtest.h"

#define T_PROBE 100
#define T_MPROBE 200
#define T_NONE 300

#define T_GO 400

/* Rank 0 probes with MPI_ANY_TAG: the other ranks send nothing else (not even the final verdict)
 * until rank 0 says it is done with a phase. */
static void phase_done(void)
{
    if (mt_rank == 0)
        for (int i = 1; i < mt_size; i++)
            MPI_Send(NULL, 0, MPI_INT, i, T_GO, MPI_COMM_WORLD);
    else
        MPI_Recv(NULL, 0, MPI_INT, 0, T_GO, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
}

static int len_of(int src) { return 10 * (src + 1); }

static void expect_msg(const MPI_Status *st, const int *buf, int src, int tag, const char *what)
{
    int count = -1, bad = 0;
    MPI_Get_count(st, MPI_INT, &count);
    for (int i = 0; buf && i < len_of(src); i++)
        bad += buf[i] != src * 1000 + tag + i;
    MT_CHECK(st->MPI_SOURCE == src && st->MPI_TAG == tag && count == len_of(src) && bad == 0,
             "%s: source %d tag %d count %d (want %d %d %d), %d ints wrong", what, st->MPI_SOURCE, st->MPI_TAG,
             count, src, tag, len_of(src), bad);
}

static void send_mine(int tag, MPI_Request *req, int *buf)
{
    for (int i = 0; i < len_of(mt_rank); i++)
        buf[i] = mt_rank * 1000 + tag + mt_rank + i;
    MPI_Isend(buf, len_of(mt_rank), MPI_INT, 0, tag + mt_rank, MPI_COMM_WORLD, req);
}

int main(int argc, char **argv)
{
    mt_init(&argc, &argv);
    int *out = malloc(sizeof(int) * 1000), *in = malloc(sizeof(int) * 1000);
    MPI_Request sreq;
    MPI_Status st;
    int flag;

    /* Every rank (rank 0 too) sends one message to rank 0 with tag T_PROBE + rank. */
    send_mine(T_PROBE, &sreq, out);
    if (mt_rank == 0) {
        int seen[64] = { 0 };
        for (int k = 0; k < mt_size; k++) {
            if (k % 2) {
                MPI_Probe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &st);
            } else {
                flag = 0;
                while (!flag)
                    MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, &st);
            }
            int src = st.MPI_SOURCE;
            MT_CHECK(src >= 0 && src < mt_size && !seen[src], "probe %d: source %d", k, src);
            if (src < 0 || src >= mt_size)
                break;
            seen[src] = 1;
            expect_msg(&st, NULL, src, T_PROBE + src, "Probe");
            /* Probing again finds the same message: probe does not receive. */
            MPI_Probe(src, st.MPI_TAG, MPI_COMM_WORLD, &st);
            expect_msg(&st, NULL, src, T_PROBE + src, "second Probe");
            MPI_Recv(in, len_of(src), MPI_INT, src, st.MPI_TAG, MPI_COMM_WORLD, &st);
            expect_msg(&st, in, src, T_PROBE + src, "Recv after Probe");
        }
        MPI_Iprobe(MPI_ANY_SOURCE, T_NONE, MPI_COMM_WORLD, &flag, &st);
        MT_CHECK(!flag, "MPI_Iprobe found a message that was never sent");
    }
    MPI_Wait(&sreq, MPI_STATUS_IGNORE);
    phase_done();

    /* Matched probes: the message belongs to the handle. */
    send_mine(T_MPROBE, &sreq, out);
    if (mt_rank == 0) {
        for (int k = 0; k < mt_size; k++) {
            MPI_Message msg = MPI_MESSAGE_NULL;
            MPI_Request rreq;
            if (k % 2) {
                MPI_Mprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &msg, &st);
            } else {
                flag = 0;
                while (!flag)
                    MPI_Improbe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, &msg, &st);
            }
            int src = st.MPI_SOURCE;
            MT_CHECK(msg != MPI_MESSAGE_NULL && src >= 0 && src < mt_size, "Mprobe %d: source %d", k, src);
            if (src < 0 || src >= mt_size)
                break;
            expect_msg(&st, NULL, src, T_MPROBE + src, "Mprobe");
            /* Each source sent one such message, and it is taken. */
            MPI_Iprobe(src, T_MPROBE + src, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE);
            MT_CHECK(!flag, "a message matched by Mprobe was found again by Iprobe");
            memset(in, 0, sizeof(int) * 1000);
            if (k % 3) {
                MPI_Mrecv(in, 1000, MPI_INT, &msg, &st);
            } else {
                MPI_Imrecv(in, 1000, MPI_INT, &msg, &rreq);
                MPI_Wait(&rreq, &st);
            }
            MT_CHECK(msg == MPI_MESSAGE_NULL, "message handle not nulled by the receive");
            expect_msg(&st, in, src, T_MPROBE + src, "Mrecv");
        }
    }
    MPI_Wait(&sreq, MPI_STATUS_IGNORE);
    phase_done();

    /* MPI_PROC_NULL */
    MPI_Message msg = MPI_MESSAGE_NULL;
    int count = -1;
    MPI_Probe(MPI_PROC_NULL, 0, MPI_COMM_WORLD, &st);
    MPI_Get_count(&st, MPI_INT, &count);
    MT_CHECK(st.MPI_SOURCE == MPI_PROC_NULL && st.MPI_TAG == MPI_ANY_TAG && count == 0,
             "Probe(PROC_NULL): source %d tag %d count %d", st.MPI_SOURCE, st.MPI_TAG, count);
    flag = 0;
    MPI_Iprobe(MPI_PROC_NULL, 0, MPI_COMM_WORLD, &flag, &st);
    MT_CHECK(flag && st.MPI_SOURCE == MPI_PROC_NULL && st.MPI_TAG == MPI_ANY_TAG, "Iprobe(PROC_NULL): flag %d",
             flag);
    MPI_Mprobe(MPI_PROC_NULL, 0, MPI_COMM_WORLD, &msg, &st);
    MT_CHECK(msg == MPI_MESSAGE_NO_PROC && st.MPI_SOURCE == MPI_PROC_NULL && st.MPI_TAG == MPI_ANY_TAG,
             "Mprobe(PROC_NULL): message is not MPI_MESSAGE_NO_PROC");
    MPI_Mrecv(in, 10, MPI_INT, &msg, &st);
    MPI_Get_count(&st, MPI_INT, &count);
    MT_CHECK(msg == MPI_MESSAGE_NULL && st.MPI_SOURCE == MPI_PROC_NULL && st.MPI_TAG == MPI_ANY_TAG && count == 0,
             "Mrecv(MPI_MESSAGE_NO_PROC): source %d count %d", st.MPI_SOURCE, count);
    flag = 0;
    MPI_Improbe(MPI_PROC_NULL, 0, MPI_COMM_WORLD, &flag, &msg, &st);
    MT_CHECK(flag && msg == MPI_MESSAGE_NO_PROC, "Improbe(PROC_NULL): flag %d", flag);
    MPI_Request rreq;
    MPI_Imrecv(in, 10, MPI_INT, &msg, &rreq);
    MPI_Wait(&rreq, &st);
    MT_CHECK(msg == MPI_MESSAGE_NULL && st.MPI_SOURCE == MPI_PROC_NULL, "Imrecv(MPI_MESSAGE_NO_PROC): source %d",
             st.MPI_SOURCE);

    free(out);
    free(in);
    return mt_finish();
}
