/*
 * Messages from one sender on one tag match the receives in the order they were sent (MPI's
 * non-overtaking rule), when they are large device messages that travel as envelopes and each is
 * sent right after the application queued a copy into its buffer (a copy from pageable memory,
 * which the driver may finish after the call returns: the sender must fence it before a CUDA IPC
 * reader may look). Rank 0 sends K messages on one tag, all in flight at once, from device buffers
 * and from device and host buffers in turn; rank 1 receives them with MPI_ANY_SOURCE into host or
 * device buffers, and checks that the k-th receive holds the k-th message. Repeated ROUNDS times,
 * since an overtaking shows only when the fences complete in another order than the sends (the
 * fake driver completes queued work late and in random order). 2 ranks; needs device memory.
 */
#include "../mpi/mtest.h"

enum { H = 0, D = 1, MIXED = 2, K = 6, ROUNDS = 60 };
#define LEN 200000

static const char *const kind_name[] = { "host", "device", "device and host in turn" };

static unsigned char pattern(size_t i, int seed)
{
    return (unsigned char) (i * 7 + (size_t) seed * 13 + i / 251);
}

/* The seed whose pattern p holds (-1: none of this round's). */
static int seed_of(const unsigned char *p, int first)
{
    for (int s = first; s < first + K; s++) {
        size_t i = 0;
        while (i < LEN && p[i] == pattern(i, s))
            i++;
        if (i == LEN)
            return s;
    }
    return -1;
}

static void round_trip(int skind, int rkind, int round)
{
    mt_buf_t b[K];
    MPI_Request req[K];
    MPI_Status st[K];
    int first = round * K;
    for (int k = 0; k < K; k++) {
        int kind = mt_rank == 0 ? (skind == MIXED ? (k % 2 == 0 ? D : H) : skind) : rkind;
        mt_buf_init_kind(&b[k], LEN, kind);
        if (mt_rank == 0) {
            for (size_t i = 0; i < LEN; i++)
                ((unsigned char *) b[k].h)[i] = pattern(i, first + k);
            mt_push(&b[k]); /* a copy the driver may still be doing when MPI_Isend is called */
            MPI_Isend(b[k].d, LEN, MPI_BYTE, 1, 70, MPI_COMM_WORLD, &req[k]);
        } else {
            memset(b[k].h, 0xee, LEN);
            mt_push(&b[k]);
            MPI_Irecv(b[k].d, LEN, MPI_BYTE, MPI_ANY_SOURCE, 70, MPI_COMM_WORLD, &req[k]);
        }
    }
    MPI_Waitall(K, req, st);
    for (int k = 0; mt_rank == 1 && k < K; k++) {
        mt_pull(&b[k]);
        int s = seed_of(b[k].h, first);
        MT_CHECK(s == first + k, "%s -> %s, round %d: receive %d of %d holds %s%d", kind_name[skind],
                 kind_name[rkind], round, k, K, s < 0 ? "no message of this round" : "message ",
                 s < 0 ? 0 : s - first);
    }
    for (int k = 0; k < K; k++)
        mt_buf_free(&b[k]);
}

int main(int argc, char **argv)
{
    mt_init(&argc, &argv);
    if (!mt_mem_any_device() || mt_size != 2) {
        if (mt_rank == 0)
            printf("needs 2 ranks and device memory (MPITEST_MEMTYPE=device)\n");
        return mt_finish();
    }
    const int cases[][2] = { { D, D }, { D, H }, { MIXED, D }, { MIXED, H } };
    for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++)
        for (int round = 0; round < ROUNDS; round++) {
            round_trip(cases[c][0], cases[c][1], round);
            MPI_Barrier(MPI_COMM_WORLD);
        }
    return mt_finish();
}
