/*
 * A receive of at most UMPI_CUDA_STAGE_THRESH bytes matched by a longer device message (one that
 * travels as an envelope, src/pt2pt/umpi_p2p_gpu.h) fails with MPI_ERR_TRUNCATE through the error
 * handler, with the message's length in the status, instead of waiting forever; the sender
 * completes; the next message on the same tag arrives whole; nothing stays in use (mt_finish
 * checks the fake driver). Rank 0 sends 256 KiB from device memory; rank 1 receives with small
 * buffers: blocking and nonblocking, host buffers of 100 bytes (shorter than the envelope itself)
 * and 4 KiB, a 100-byte device buffer, MPI_ANY_SOURCE, MPI_ANY_TAG, after MPI_Probe, MPI_Mprobe +
 * MPI_Mrecv, persistent, the receive posted before the message arrives and after it did.
 * 2 ranks; needs device memory (the fakegpu suite, or the gpu suite on a GPU).
 */
#include "../mpi/mtest.h"

#define BIG (256 * 1024)

static int handler_calls, handler_class;

static void on_error(MPI_Comm *comm, int *code, ...)
{
    (void) comm;
    handler_calls++;
    handler_class = mt_class(*code);
}

enum { HOST_100, HOST_4K, DEV_100 };
static const char *const kind_name[] = { "host 100 B", "host 4 KiB", "device 100 B" };
static const size_t kind_len[] = { 100, 4096, 100 };

enum { BLOCKING, NONBLOCKING, ANY_SOURCE, ANY_TAG, PROBE, MPROBE, PERSISTENT, NCASES };
static const char *const case_name[] = { "MPI_Recv", "MPI_Irecv+MPI_Wait", "MPI_ANY_SOURCE", "MPI_ANY_TAG",
                                         "MPI_Probe then MPI_Recv", "MPI_Mprobe+MPI_Mrecv",
                                         "persistent receive" };

/* One case on rank 1: receive the big message (tag) into buf, expecting truncation. */
static void small_receive(int c, void *buf, int len, int tag, const char *what)
{
    MPI_Status st;
    MPI_Request r;
    MPI_Message m;
    int err, count = -1;
    handler_calls = 0;
    handler_class = -1;
    st.MPI_SOURCE = st.MPI_TAG = -1;
    switch (c) {
    case BLOCKING:
        err = MPI_Recv(buf, len, MPI_BYTE, 0, tag, MPI_COMM_WORLD, &st);
        break;
    case NONBLOCKING:
        MPI_Irecv(buf, len, MPI_BYTE, 0, tag, MPI_COMM_WORLD, &r);
        err = MPI_Wait(&r, &st);
        break;
    case ANY_SOURCE:
        err = MPI_Recv(buf, len, MPI_BYTE, MPI_ANY_SOURCE, tag, MPI_COMM_WORLD, &st);
        break;
    case ANY_TAG:
        MPI_Irecv(buf, len, MPI_BYTE, 0, MPI_ANY_TAG, MPI_COMM_WORLD, &r);
        err = MPI_Wait(&r, &st);
        break;
    case PROBE:
        MPI_Probe(0, tag, MPI_COMM_WORLD, &st);
        MPI_Get_count(&st, MPI_BYTE, &count);
        MT_CHECK(count == BIG, "%s: MPI_Probe counts %d bytes, expected %d", what, count, BIG);
        err = MPI_Recv(buf, len, MPI_BYTE, 0, tag, MPI_COMM_WORLD, &st);
        break;
    case MPROBE:
        MPI_Mprobe(0, tag, MPI_COMM_WORLD, &m, &st);
        err = MPI_Mrecv(buf, len, MPI_BYTE, &m, &st);
        break;
    default:
        MPI_Recv_init(buf, len, MPI_BYTE, 0, tag, MPI_COMM_WORLD, &r);
        MPI_Start(&r);
        err = MPI_Wait(&r, &st);
        MPI_Request_free(&r);
        break;
    }
    count = -1;
    MPI_Get_count(&st, MPI_BYTE, &count);
    MT_CHECK(mt_class(err) == MPI_ERR_TRUNCATE, "%s: returned class %d (%s), expected MPI_ERR_TRUNCATE", what,
             mt_class(err), mt_errstr(err));
    MT_CHECK(handler_calls == 1 && handler_class == MPI_ERR_TRUNCATE,
             "%s: the error handler ran %d times (class %d), expected once with MPI_ERR_TRUNCATE", what,
             handler_calls, handler_class);
    MT_CHECK(count == BIG, "%s: status counts %d bytes, expected the message's %d", what, count, BIG);
    MT_CHECK(st.MPI_SOURCE == 0 && st.MPI_TAG == tag, "%s: status source %d tag %d, expected 0 and %d", what,
             st.MPI_SOURCE, st.MPI_TAG, tag);
}

int main(int argc, char **argv)
{
    mt_init(&argc, &argv);
    if (mt_size != 2 || !mt_mem_any_device()) {
        if (mt_rank == 0)
            printf("gpu_trunc_small: needs 2 ranks and MPITEST_MEMTYPE=device; nothing to do\n");
        return mt_finish();
    }
    MPI_Errhandler eh;
    MPI_Comm_create_errhandler(on_error, &eh);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, eh);

    mt_buf_t big, follow;
    mt_buf_init_kind(&big, BIG, 1);
    mt_buf_init_kind(&follow, 64, 1);
    for (size_t i = 0; i < BIG; i++)
        ((unsigned char *) big.h)[i] = (unsigned char) (i * 7 + 3);
    mt_push(&big);
    mt_buf_t small[3];
    mt_buf_init_kind(&small[HOST_100], kind_len[HOST_100], 0);
    mt_buf_init_kind(&small[HOST_4K], kind_len[HOST_4K], 0);
    mt_buf_init_kind(&small[DEV_100], kind_len[DEV_100], 1);

    int tag = 1;
    for (int k = HOST_100; k <= DEV_100; k++)
        for (int c = 0; c < NCASES; c++)
            for (int late = 0; late < 2; late++, tag++) {
                /* late = 0: the receive waits before the message is sent; 1: it arrives first */
                char what[160];
                snprintf(what, sizeof(what), "%s into %s, receive posted %s", case_name[c], kind_name[k],
                         late ? "after the message arrived" : "before the message was sent");
                if (mt_rank == 0) {
                    int go;
                    if (!late)
                        MPI_Recv(&go, 1, MPI_INT, 1, MT_TAG_SYNC, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                    handler_calls = 0;
                    int err = MPI_Send(big.d, BIG, MPI_BYTE, 1, tag, MPI_COMM_WORLD);
                    MT_CHECK(err == MPI_SUCCESS && handler_calls == 0, "%s: the send failed: %s", what,
                             mt_errstr(err));
                    /* then a message the receiver takes whole on the same tag */
                    for (int i = 0; i < 64; i++)
                        ((unsigned char *) follow.h)[i] = (unsigned char) (tag + i);
                    mt_push(&follow);
                    MPI_Send(follow.d, 64, MPI_BYTE, 1, tag, MPI_COMM_WORLD);
                } else {
                    if (!late) {
                        /* post first (the nonblocking forms post at once; blocking ones as soon as
                         * the sender is told to go, which races the message: both orders occur) */
                        int go = 1;
                        MPI_Send(&go, 1, MPI_INT, 0, MT_TAG_SYNC, MPI_COMM_WORLD);
                    } else {
                        mt_sleep_ms(30); /* the envelope is in the unexpected queue by now */
                    }
                    small_receive(c, small[k].d, (int) kind_len[k], tag, what);
                    mt_buf_t got;
                    mt_buf_init_kind(&got, 64, k == DEV_100);
                    MPI_Status st;
                    int err = MPI_Recv(got.d, 64, MPI_BYTE, 0, tag, MPI_COMM_WORLD, &st), count = -1;
                    MPI_Get_count(&st, MPI_BYTE, &count);
                    mt_pull(&got);
                    int bad = 0;
                    for (int i = 0; i < 64; i++)
                        bad += ((unsigned char *) got.h)[i] != (unsigned char) (tag + i);
                    MT_CHECK(err == MPI_SUCCESS && count == 64 && bad == 0,
                             "%s: the next message: %s, %d bytes, %d wrong", what, mt_errstr(err), count, bad);
                    mt_buf_free(&got);
                }
            }
    mt_buf_free(&big);
    mt_buf_free(&follow);
    for (int k = HOST_100; k <= DEV_100; k++)
        mt_buf_free(&small[k]);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
    MPI_Errhandler_free(&eh);
    return mt_finish();
}
