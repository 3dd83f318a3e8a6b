/*
 * Point-to-point with device buffers: every host/device combination of sender and
 * receiver, at sizes that take each path (empty, staged, envelope: CUDA IPC or the pipeline),
 * in every mode: blocking, nonblocking with the receive posted before and after the message,
 * synchronous, ready, buffered, persistent, wildcards, MPI_Probe, MPI_Mprobe/Mrecv,
 * Improbe/Imrecv, Sendrecv_replace, messages to oneself, derived datatypes on either side,
 * truncation (the sender still completes), cancel of a device receive, ordering of several
 * large messages on one tag, and a window of receives on one host buffer. Data and statuses are
 * checked.
 *
 * Buffers of both kinds are made here whatever MPITEST_MEMTYPE says, when it names device memory
 * (device or mix); with host memory only the test says so and passes. Needs 2 or more ranks.
 */
#include "../mpi/mtest.h"

enum { H = 0, D = 1 };
static const char *kname[] = { "host", "device" };
static const size_t sizes[] = { 0, 8, 4096, 100000, (3u << 20) + 5 };
#define NSIZES (sizeof(sizes) / sizeof(sizes[0]))

static void fill(unsigned char *p, size_t n, int seed)
{
    for (size_t i = 0; i < n; i++)
        p[i] = (unsigned char) (i * 7 + (size_t) seed * 13 + i / 251);
}

static size_t bad_bytes(const unsigned char *p, size_t n, int seed)
{
    size_t bad = 0;
    for (size_t i = 0; i < n; i++)
        bad += p[i] != (unsigned char) (i * 7 + (size_t) seed * 13 + i / 251);
    return bad;
}

/* Checks a completed receive of n bytes with seed from rank `from`. */
static void check_recv(mt_buf_t *b, size_t n, int seed, MPI_Status *st, int from, int tag, const char *what)
{
    mt_pull(b);
    size_t bad = bad_bytes(b->h, n, seed);
    int count = -1;
    MPI_Get_count(st, MPI_BYTE, &count);
    MT_CHECK(bad == 0 && count == (int) n && st->MPI_SOURCE == from && st->MPI_TAG == tag,
             "%s: %zu of %zu bytes wrong, count %d source %d tag %d", what, bad, n, count, st->MPI_SOURCE,
             st->MPI_TAG);
}

/* Rank 0 sends n bytes from a skind buffer to rank 1's rkind buffer, in one of the modes. */
static void pair(int skind, int rkind, size_t n, int mode)
{
    static int seed;
    char what[160];
    mt_buf_t b;
    MPI_Status st;
    MPI_Request req;
    int tag = 100 + mode, flag = 0;
    seed++;
    snprintf(what, sizeof(what), "%s -> %s, %zu bytes, mode %d", kname[skind], kname[rkind], n, mode);
    if (mt_rank > 1) {
        if (mode == 1 || mode == 2 || mode == 4)
            mt_barrier(); /* the ones the pair's modes take */
        mt_barrier();
        return;
    }
    mt_buf_init_kind(&b, n, mt_rank == 0 ? skind : rkind);
    if (mt_rank == 0) {
        fill(b.h, n, seed);
        mt_push(&b);
    } else {
        memset(b.h, 0xee, n);
        mt_push(&b);
    }
    switch (mode) {
    case 0: /* blocking */
        if (mt_rank == 0)
            MPI_Send(b.d, (int) n, MPI_BYTE, 1, tag, MPI_COMM_WORLD);
        else
            MPI_Recv(b.d, (int) n, MPI_BYTE, 0, tag, MPI_COMM_WORLD, &st);
        break;
    case 1: /* receive posted first, then the message */
        if (mt_rank == 1)
            MPI_Irecv(b.d, (int) n, MPI_BYTE, 0, tag, MPI_COMM_WORLD, &req);
        mt_barrier();
        if (mt_rank == 0)
            MPI_Isend(b.d, (int) n, MPI_BYTE, 1, tag, MPI_COMM_WORLD, &req);
        MPI_Wait(&req, &st);
        break;
    case 2: /* the message first (unexpected), then the receive */
        if (mt_rank == 0)
            MPI_Isend(b.d, (int) n, MPI_BYTE, 1, tag, MPI_COMM_WORLD, &req);
        mt_barrier();
        if (mt_rank == 1)
            MPI_Irecv(b.d, (int) n, MPI_BYTE, 0, tag, MPI_COMM_WORLD, &req);
        MPI_Wait(&req, &st);
        break;
    case 3: /* synchronous, wildcards */
        if (mt_rank == 0)
            MPI_Ssend(b.d, (int) n, MPI_BYTE, 1, tag, MPI_COMM_WORLD);
        else
            MPI_Recv(b.d, (int) n, MPI_BYTE, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &st);
        break;
    case 4: /* ready */
        if (mt_rank == 1)
            MPI_Irecv(b.d, (int) n, MPI_BYTE, 0, tag, MPI_COMM_WORLD, &req);
        mt_barrier();
        if (mt_rank == 0)
            MPI_Rsend(b.d, (int) n, MPI_BYTE, 1, tag, MPI_COMM_WORLD);
        else
            MPI_Wait(&req, &st);
        break;
    case 5: { /* buffered */
        if (mt_rank == 0) {
            int size = (int) n + MPI_BSEND_OVERHEAD;
            void *att = malloc((size_t) size), *old;
            MPI_Buffer_attach(att, size);
            MPI_Bsend(b.d, (int) n, MPI_BYTE, 1, tag, MPI_COMM_WORLD);
            MPI_Buffer_detach(&old, &size);
            free(att);
        } else {
            MPI_Recv(b.d, (int) n, MPI_BYTE, 0, tag, MPI_COMM_WORLD, &st);
        }
        break;
    }
    case 6: /* persistent, started twice */
        if (mt_rank == 0)
            MPI_Send_init(b.d, (int) n, MPI_BYTE, 1, tag, MPI_COMM_WORLD, &req);
        else
            MPI_Recv_init(b.d, (int) n, MPI_BYTE, 0, tag, MPI_COMM_WORLD, &req);
        for (int k = 0; k < 2; k++) {
            if (k == 1 && mt_rank == 1) {
                memset(b.h, 0xee, n);
                mt_push(&b);
            }
            MPI_Start(&req);
            MPI_Wait(&req, &st);
            if (k == 0 && mt_rank == 1)
                check_recv(&b, n, seed, &st, 0, tag, what);
        }
        MPI_Request_free(&req);
        break;
    case 7: { /* probe: the count before the receive */
        if (mt_rank == 0) {
            MPI_Send(b.d, (int) n, MPI_BYTE, 1, tag, MPI_COMM_WORLD);
        } else {
            int count = -1;
            MPI_Probe(0, tag, MPI_COMM_WORLD, &st);
            MPI_Get_count(&st, MPI_BYTE, &count);
            MT_CHECK(count == (int) n, "%s: MPI_Probe counts %d", what, count);
            do
                MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, &st);
            while (!flag);
            MPI_Get_count(&st, MPI_BYTE, &count);
            MT_CHECK(count == (int) n && st.MPI_TAG == tag, "%s: MPI_Iprobe counts %d tag %d", what, count, st.MPI_TAG);
            MPI_Recv(b.d, (int) n, MPI_BYTE, st.MPI_SOURCE, st.MPI_TAG, MPI_COMM_WORLD, &st);
        }
        break;
    }
    case 8: { /* matched probe */
        if (mt_rank == 0) {
            MPI_Send(b.d, (int) n, MPI_BYTE, 1, tag, MPI_COMM_WORLD);
        } else {
            MPI_Message msg;
            int count = -1;
            MPI_Mprobe(0, MPI_ANY_TAG, MPI_COMM_WORLD, &msg, &st);
            MPI_Get_count(&st, MPI_BYTE, &count);
            MT_CHECK(count == (int) n, "%s: MPI_Mprobe counts %d", what, count);
            MPI_Mrecv(b.d, (int) n, MPI_BYTE, &msg, &st);
        }
        break;
    }
    case 9: { /* Improbe + Imrecv */
        if (mt_rank == 0) {
            MPI_Isend(b.d, (int) n, MPI_BYTE, 1, tag, MPI_COMM_WORLD, &req);
            MPI_Wait(&req, MPI_STATUS_IGNORE);
        } else {
            MPI_Message msg;
            int count = -1;
            do
                MPI_Improbe(MPI_ANY_SOURCE, tag, MPI_COMM_WORLD, &flag, &msg, &st);
            while (!flag);
            MPI_Get_count(&st, MPI_BYTE, &count);
            MT_CHECK(count == (int) n, "%s: MPI_Improbe counts %d", what, count);
            MPI_Imrecv(b.d, (int) n, MPI_BYTE, &msg, &req);
            MPI_Wait(&req, &st);
        }
        break;
    }
    }
    if (mt_rank == 1)
        check_recv(&b, n, seed, &st, 0, tag, what);
    mt_buf_free(&b);
    mt_barrier();
}

/* A vector of ints (3 of every 5) on either side; the other side contiguous or a vector too. */
static void datatypes(int skind, int rkind, int svec, int rvec, int blocks)
{
    MPI_Datatype vec;
    MPI_Type_vector(blocks, 3, 5, MPI_INT, &vec);
    MPI_Type_commit(&vec);
    size_t span = (size_t) blocks * 5 * sizeof(int), packed = (size_t) blocks * 3 * sizeof(int);
    char what[128];
    snprintf(what, sizeof(what), "%s %s -> %s %s, %d blocks", kname[skind], svec ? "vector" : "contiguous",
             kname[rkind], rvec ? "vector" : "contiguous", blocks);
    if (mt_rank > 1) {
        mt_barrier();
        MPI_Type_free(&vec);
        return;
    }
    int vec_here = mt_rank == 0 ? svec : rvec;
    mt_buf_t b;
    mt_buf_init_kind(&b, vec_here ? span : packed, mt_rank == 0 ? skind : rkind);
    int *p = b.h;
    if (mt_rank == 0) {
        for (int i = 0, k = 0; i < blocks; i++)
            for (int j = 0; j < (svec ? 5 : 3); j++)
                p[i * (svec ? 5 : 3) + j] = j < 3 ? 1000 + k++ : -7;
        mt_push(&b);
        if (svec)
            MPI_Send(b.d, 1, vec, 1, 50, MPI_COMM_WORLD);
        else
            MPI_Send(b.d, 3 * blocks, MPI_INT, 1, 50, MPI_COMM_WORLD);
    } else {
        for (size_t i = 0; i < b.n / sizeof(int); i++)
            p[i] = -1;
        mt_push(&b);
        MPI_Status st;
        if (rvec)
            MPI_Recv(b.d, 1, vec, 0, 50, MPI_COMM_WORLD, &st);
        else
            MPI_Recv(b.d, 3 * blocks, MPI_INT, 0, 50, MPI_COMM_WORLD, &st);
        mt_pull(&b);
        int bad = 0, count = -1;
        for (int i = 0, k = 0; i < blocks; i++)
            for (int j = 0; j < (rvec ? 5 : 3); j++)
                bad += p[i * (rvec ? 5 : 3) + j] != (j < 3 ? 1000 + k++ : -1); /* gaps untouched */
        MPI_Get_count(&st, MPI_BYTE, &count);
        MT_CHECK(bad == 0 && count == (int) packed, "%s: %d ints wrong, count %d", what, bad, count);
    }
    mt_buf_free(&b);
    MPI_Type_free(&vec);
    mt_barrier();
}

/* Receive buffers shorter than the message: MPI_ERR_TRUNCATE at the receiver, the sender completes,
 * and the next message on the same tag arrives whole. */
static void truncation(int rkind, size_t room)
{
    size_t n = 100000;
    mt_buf_t b, ok;
    char what[96];
    snprintf(what, sizeof(what), "device 100000 bytes into %zu bytes of %s memory", room, kname[rkind]);
    if (mt_rank > 1) {
        mt_barrier();
        return;
    }
    mt_buf_init_kind(&b, mt_rank == 0 ? n : room, mt_rank == 0 ? D : rkind);
    mt_buf_init_kind(&ok, n, mt_rank == 0 ? D : rkind);
    if (mt_rank == 0) {
        fill(b.h, n, 77);
        fill(ok.h, n, 78);
        mt_push(&b);
        mt_push(&ok);
        MPI_Send(b.d, (int) n, MPI_BYTE, 1, 60, MPI_COMM_WORLD); /* must return although truncated */
        MPI_Send(ok.d, (int) n, MPI_BYTE, 1, 60, MPI_COMM_WORLD);
    } else {
        MPI_Status st;
        int err = MPI_Recv(b.d, (int) room, MPI_BYTE, 0, 60, MPI_COMM_WORLD, &st);
        MT_CHECK(mt_class(err) == MPI_ERR_TRUNCATE, "%s: error class %d (%s)", what, mt_class(err), mt_errstr(err));
        err = MPI_Recv(ok.d, (int) n, MPI_BYTE, 0, 60, MPI_COMM_WORLD, &st);
        MT_CHECK(err == MPI_SUCCESS, "%s: the next message failed: %s", what, mt_errstr(err));
        check_recv(&ok, n, 78, &st, 0, 60, what);
    }
    mt_buf_free(&b);
    mt_buf_free(&ok);
    mt_barrier();
}

/* Large messages on one tag, all in flight at once: they must arrive in order. */
static void ordering(int skind, int rkind)
{
    enum { K = 6 };
    size_t n = 200000;
    mt_buf_t b[K];
    MPI_Request req[K];
    MPI_Status st[K];
    if (mt_rank > 1) {
        mt_barrier();
        return;
    }
    for (int k = 0; k < K; k++) {
        mt_buf_init_kind(&b[k], n, mt_rank == 0 ? skind : rkind);
        if (mt_rank == 0) {
            fill(b[k].h, n, 200 + k);
            mt_push(&b[k]);
            MPI_Isend(b[k].d, (int) n, MPI_BYTE, 1, 70, MPI_COMM_WORLD, &req[k]);
        } else {
            MPI_Irecv(b[k].d, (int) n, MPI_BYTE, MPI_ANY_SOURCE, 70, MPI_COMM_WORLD, &req[k]);
        }
    }
    MPI_Waitall(K, req, st);
    for (int k = 0; mt_rank == 1 && k < K; k++) {
        char what[64];
        snprintf(what, sizeof(what), "%s -> %s, message %d of %d on one tag", kname[skind], kname[rkind], k, K);
        check_recv(&b[k], n, 200 + k, &st[k], 0, 70, what);
    }
    for (int k = 0; k < K; k++)
        mt_buf_free(&b[k]);
    mt_barrier();
}

/* A window of receives posted on one host buffer, each matched by a large device message (OSU's
 * bandwidth tests do this): every receive completes, and the buffer holds the (identical) data.
 * The device protocol's envelopes land in that buffer while earlier messages are still being
 * copied into it by the GPU. */
static void shared_window(void)
{
    enum { K = 16, ROUNDS = 8 };
    size_t n = 1 << 20;
    mt_buf_t b[K];
    MPI_Request req[K];
    MPI_Status st[K];
    if (mt_rank > 1) {
        mt_barrier();
        return;
    }
    for (int k = 0; k < K; k++)
        mt_buf_init_kind(&b[k], n, mt_rank == 0 ? D : H);
    for (int round = 0; round < ROUNDS; round++) {
        for (int k = 0; k < K; k++) {
            if (mt_rank == 0) {
                if (round == 0) {
                    fill(b[k].h, n, 300);
                    mt_push(&b[k]);
                }
                MPI_Isend(b[k].d, (int) n, MPI_BYTE, 1, 80, MPI_COMM_WORLD, &req[k]);
            } else {
                /* the later receives are posted while the earlier ones' copies run (a probe for
                 * nothing makes progress without completing anything) */
                int flag;
                MPI_Irecv(b[0].d, (int) n, MPI_BYTE, 0, 80, MPI_COMM_WORLD, &req[k]);
                MPI_Iprobe(0, 81, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE);
            }
        }
        int err = MPI_Waitall(K, req, st);
        MT_CHECK(err == MPI_SUCCESS, "a window of %d receives on one host buffer, round %d: %s", K, round,
                 err == MPI_ERR_IN_STATUS ? "a receive failed" : "MPI_Waitall failed");
        if (mt_rank == 1 && err == MPI_SUCCESS)
            check_recv(&b[0], n, 300, &st[K - 1], 0, 80, "a window of receives on one host buffer");
    }
    for (int k = 0; k < K; k++)
        mt_buf_free(&b[k]);
    mt_barrier();
}

int main(int argc, char **argv)
{
    mt_init(&argc, &argv);
    if (mt_size < 2 || !mt_mem_any_device()) {
        if (mt_rank == 0)
            printf("gpu_p2p: needs 2 ranks and MPITEST_MEMTYPE=device or mix; nothing to do\n");
        return mt_finish();
    }
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);

    for (int sk = H; sk <= D; sk++)
        for (int rk = H; rk <= D; rk++)
            for (size_t s = 0; s < NSIZES; s++)
                for (int mode = 0; mode < 10; mode++)
                    pair(sk, rk, sizes[s], mode);

    /* to oneself, large (the sender's pointer is read directly) and small */
    for (size_t s = 0; s < NSIZES; s++) {
        size_t n = sizes[s];
        mt_buf_t a, c;
        mt_buf_init_kind(&a, n, D);
        mt_buf_init_kind(&c, n, s % 2 ? H : D);
        fill(a.h, n, 31);
        mt_push(&a);
        MPI_Request req;
        MPI_Status st;
        MPI_Isend(a.d, (int) n, MPI_BYTE, mt_rank, 5, MPI_COMM_WORLD, &req);
        MPI_Recv(c.d, (int) n, MPI_BYTE, mt_rank, 5, MPI_COMM_WORLD, &st);
        MPI_Wait(&req, MPI_STATUS_IGNORE);
        check_recv(&c, n, 31, &st, mt_rank, 5, "device message to oneself");
        mt_buf_free(&a);
        mt_buf_free(&c);
    }

    /* Sendrecv_replace on device memory around the ring */
    {
        size_t n = 300000;
        int right = (mt_rank + 1) % mt_size, left = (mt_rank + mt_size - 1) % mt_size;
        mt_buf_t a;
        MPI_Status st;
        mt_buf_init_kind(&a, n, D);
        fill(a.h, n, 40 + mt_rank);
        mt_push(&a);
        MPI_Sendrecv_replace(a.d, (int) n, MPI_BYTE, right, 9, left, 9, MPI_COMM_WORLD, &st);
        check_recv(&a, n, 40 + left, &st, left, 9, "Sendrecv_replace on device memory");
        mt_buf_free(&a);
    }

    for (int sk = H; sk <= D; sk++)
        for (int rk = H; rk <= D; rk++)
            for (int sv = 0; sv <= 1; sv++)
                for (int rv = 0; rv <= 1; rv++)
                    for (int blocks = 1; blocks <= 40000; blocks *= 200) /* 1, 200, 40000 */
                        if (sv || rv)
                            datatypes(sk, rk, sv, rv, blocks);

    /* (a receive of at most UMPI_CUDA_STAGE_THRESH bytes never matches a larger device message's
     * envelope: that erroneous case waits instead of failing, README.md) */
    truncation(H, 50000);
    truncation(D, 50000);
    truncation(H, 99999);

    for (int sk = H; sk <= D; sk++)
        for (int rk = H; rk <= D; rk++)
            ordering(sk, rk);
    shared_window();

    /* a receive on device memory that nothing matches, cancelled */
    {
        mt_buf_t a;
        MPI_Request req;
        MPI_Status st;
        int cancelled = 0;
        mt_buf_init_kind(&a, 1000, D);
        MPI_Irecv(a.d, 1000, MPI_BYTE, MPI_ANY_SOURCE, 999, MPI_COMM_WORLD, &req);
        MPI_Cancel(&req);
        MPI_Wait(&req, &st);
        MPI_Test_cancelled(&st, &cancelled);
        MT_CHECK(cancelled, "a cancelled receive on device memory is not reported cancelled");
        mt_buf_free(&a);
    }
    return mt_finish();
}
