/*
 * The large-count (_c) entry points that status.c does not reach: every send mode and its
 * nonblocking and persistent forms, Sendrecv_replace_c, Mrecv_c/Imrecv_c and
 * Buffer_attach_c/detach_c. Each message goes around a ring (rank r sends to r+1) and is checked
 * element by element, with the received count read back through MPI_Get_count_c.
 */
#include "mtest.h"

#include <stdlib.h>

#define N 1000

static void fill(long *buf, int seed)
{
    for (int i = 0; i < N; i++)
        buf[i] = (long) seed * 100000 + i;
}

static void check(const long *buf, int seed, const MPI_Status *st, int src, const char *what)
{
    MPI_Count c = -1;
    MPI_Get_count_c(st, MPI_LONG, &c);
    MT_CHECK(c == N, "%s: count %lld, want %d", what, (long long) c, N);
    MT_CHECK(st->MPI_SOURCE == src, "%s: source %d, want %d", what, st->MPI_SOURCE, src);
    int bad = 0;
    for (int i = 0; i < N; i++)
        bad += buf[i] != (long) seed * 100000 + i;
    MT_CHECK(bad == 0, "%s: %d wrong elements", what, bad);
}

int main(int argc, char **argv)
{
    mt_init(&argc, &argv);
    int right = (mt_rank + 1) % mt_size, left = (mt_rank + mt_size - 1) % mt_size;
    long *sbuf = malloc(N * sizeof(long)), *rbuf = malloc(N * sizeof(long));
    MPI_Status st;
    MPI_Request req, rreq;
    int tag = 0;

    /* Blocking send modes: the receive is posted first, so ready mode is legal. */
    typedef int (*send_c_fn)(const void *, MPI_Count, MPI_Datatype, int, int, MPI_Comm);
    const struct { send_c_fn fn; const char *name; } blocking[] = {
        {MPI_Ssend_c, "MPI_Ssend_c"}, {MPI_Rsend_c, "MPI_Rsend_c"}, {MPI_Bsend_c, "MPI_Bsend_c"},
    };
    MPI_Count bsize = 4 * (N * (MPI_Count) sizeof(long) + MPI_BSEND_OVERHEAD);
    void *battach = malloc((size_t) bsize);
    MPI_Buffer_attach_c(battach, bsize);
    for (unsigned k = 0; k < sizeof(blocking) / sizeof(blocking[0]); k++, tag++) {
        fill(sbuf, mt_rank * 10 + (int) k);
        MPI_Irecv_c(rbuf, N, MPI_LONG, left, tag, MPI_COMM_WORLD, &rreq);
        mt_barrier();
        blocking[k].fn(sbuf, N, MPI_LONG, right, tag, MPI_COMM_WORLD);
        MPI_Wait(&rreq, &st);
        check(rbuf, left * 10 + (int) k, &st, left, blocking[k].name);
    }

    /* Nonblocking send modes. */
    typedef int (*isend_c_fn)(const void *, MPI_Count, MPI_Datatype, int, int, MPI_Comm, MPI_Request *);
    const struct { isend_c_fn fn; const char *name; } nonblocking[] = {
        {MPI_Issend_c, "MPI_Issend_c"}, {MPI_Irsend_c, "MPI_Irsend_c"}, {MPI_Ibsend_c, "MPI_Ibsend_c"},
    };
    for (unsigned k = 0; k < sizeof(nonblocking) / sizeof(nonblocking[0]); k++, tag++) {
        fill(sbuf, mt_rank * 20 + (int) k);
        MPI_Irecv_c(rbuf, N, MPI_LONG, left, tag, MPI_COMM_WORLD, &rreq);
        mt_barrier();
        nonblocking[k].fn(sbuf, N, MPI_LONG, right, tag, MPI_COMM_WORLD, &req);
        MPI_Wait(&req, MPI_STATUS_IGNORE);
        MPI_Wait(&rreq, &st);
        check(rbuf, left * 20 + (int) k, &st, left, nonblocking[k].name);
    }

    /* Persistent send modes against a persistent receive, each started twice. */
    typedef int (*psend_c_fn)(const void *, MPI_Count, MPI_Datatype, int, int, MPI_Comm, MPI_Request *);
    const struct { psend_c_fn fn; const char *name; } persistent[] = {
        {MPI_Send_init_c, "MPI_Send_init_c"}, {MPI_Ssend_init_c, "MPI_Ssend_init_c"},
        {MPI_Rsend_init_c, "MPI_Rsend_init_c"}, {MPI_Bsend_init_c, "MPI_Bsend_init_c"},
    };
    for (unsigned k = 0; k < sizeof(persistent) / sizeof(persistent[0]); k++, tag++) {
        MPI_Recv_init_c(rbuf, N, MPI_LONG, left, tag, MPI_COMM_WORLD, &rreq);
        persistent[k].fn(sbuf, N, MPI_LONG, right, tag, MPI_COMM_WORLD, &req);
        for (int round = 0; round < 2; round++) {
            fill(sbuf, mt_rank * 30 + (int) k * 2 + round);
            MPI_Start(&rreq);
            mt_barrier();
            MPI_Start(&req);
            MPI_Wait(&req, MPI_STATUS_IGNORE);
            MPI_Wait(&rreq, &st);
            check(rbuf, left * 30 + (int) k * 2 + round, &st, left, persistent[k].name);
        }
        MPI_Request_free(&req);
        MPI_Request_free(&rreq);
    }

    /* Sendrecv_replace_c: the ring shifts one buffer in place. */
    fill(rbuf, mt_rank + 7);
    MPI_Sendrecv_replace_c(rbuf, N, MPI_LONG, right, tag, left, tag, MPI_COMM_WORLD, &st);
    check(rbuf, left + 7, &st, left, "MPI_Sendrecv_replace_c");
    tag++;

    /* Matched receives: Mprobe then Mrecv_c, Improbe then Imrecv_c. */
    for (int k = 0; k < 2; k++, tag++) {
        MPI_Message msg;
        int flag = 0;
        fill(sbuf, mt_rank * 40 + k);
        MPI_Isend_c(sbuf, N, MPI_LONG, right, tag, MPI_COMM_WORLD, &req);
        if (k == 0) {
            MPI_Mprobe(left, tag, MPI_COMM_WORLD, &msg, &st);
            MPI_Mrecv_c(rbuf, N, MPI_LONG, &msg, &st);
        } else {
            while (!flag)
                MPI_Improbe(left, tag, MPI_COMM_WORLD, &flag, &msg, &st);
            MPI_Imrecv_c(rbuf, N, MPI_LONG, &msg, &rreq);
            MPI_Wait(&rreq, &st);
        }
        MT_CHECK(msg == MPI_MESSAGE_NULL, "message handle not reset to MPI_MESSAGE_NULL");
        MPI_Wait(&req, MPI_STATUS_IGNORE);
        check(rbuf, left * 40 + k, &st, left, k == 0 ? "MPI_Mrecv_c" : "MPI_Imrecv_c");
    }

    void *detached = NULL;
    MPI_Count dsize = -1;
    MPI_Buffer_detach_c(&detached, &dsize);
    MT_CHECK(detached == battach && dsize == bsize, "MPI_Buffer_detach_c gave %p/%lld, want %p/%lld", detached,
             (long long) dsize, battach, (long long) bsize);
    free(battach);
    free(sbuf);
    free(rbuf);
    return mt_finish();
}
