/*
 * Status queries: MPI_Get_count, MPI_Get_elements, MPI_Get_elements_x (MPI_UNDEFINED when the
 * message is not a whole number of the type), MPI_Status_set_elements (and _x),
 * MPI_Status_set_cancelled, and the large-count variants (_c) of the point-to-point calls.
 * Pair types are in pairtype.c.
 */
#include "mtest.h"

static void expect_counts(const MPI_Status *st, MPI_Datatype type, int count, int elems, const char *what)
{
    int c = -2, e = -2;
    MPI_Count ex = -2;
    MPI_Get_count(st, type, &c);
    MPI_Get_elements(st, type, &e);
    MPI_Get_elements_x(st, type, &ex);
    MT_CHECK(c == count && e == elems && ex == elems, "%s: count %d elements %d elements_x %lld, want %d %d", what,
             c, e, (long long)ex, count, elems);
}

int main(int argc, char **argv)
{
    mt_init(&argc, &argv);
    int ints[16], recvd[16];
    MPI_Status st;
    MPI_Request req;

    for (int i = 0; i < 16; i++)
        ints[i] = i;

    /* 10 ints as ints, and as bytes. */
    MPI_Irecv(recvd, 16, MPI_INT, 0, 1, MPI_COMM_SELF, &req);
    MPI_Send(ints, 10, MPI_INT, 0, 1, MPI_COMM_SELF);
    MPI_Wait(&req, &st);
    expect_counts(&st, MPI_INT, 10, 10, "10 ints");
    expect_counts(&st, MPI_BYTE, 40, 40, "10 ints as bytes");
    expect_counts(&st, MPI_DOUBLE, 5, 5, "40 bytes as doubles");
    expect_counts(&st, MPI_C_LONG_DOUBLE_COMPLEX, MPI_UNDEFINED, MPI_UNDEFINED, "40 bytes as 32-byte complex");
    expect_counts(&st, MPI_SHORT, 20, 20, "10 ints as shorts");

    /* 6 bytes: no whole int. */
    MPI_Irecv(recvd, 64, MPI_BYTE, 0, 2, MPI_COMM_SELF, &req);
    MPI_Send(ints, 6, MPI_BYTE, 0, 2, MPI_COMM_SELF);
    MPI_Wait(&req, &st);
    expect_counts(&st, MPI_BYTE, 6, 6, "6 bytes");
    expect_counts(&st, MPI_INT, MPI_UNDEFINED, MPI_UNDEFINED, "6 bytes as ints");

    /* Setting the count of a status. */
    MPI_Status_set_elements(&st, MPI_INT, 5);
    expect_counts(&st, MPI_INT, 5, 5, "set_elements 5 ints");
    expect_counts(&st, MPI_BYTE, 20, 20, "set_elements 5 ints, as bytes");
    MPI_Status_set_elements_x(&st, MPI_BYTE, (MPI_Count)3000000000LL);
    MPI_Count ex = 0;
    int c = 0;
    MPI_Get_elements_x(&st, MPI_BYTE, &ex);
    MPI_Get_count(&st, MPI_BYTE, &c);
    MT_CHECK(ex == 3000000000LL && c == MPI_UNDEFINED, "set_elements_x 3e9 bytes: elements_x %lld count %d",
             (long long)ex, c);
    MPI_Status_set_elements_x(&st, MPI_INT, 7);
    expect_counts(&st, MPI_INT, 7, 7, "set_elements_x 7 ints");

    int flag = -1;
    MPI_Status_set_cancelled(&st, 1);
    MPI_Test_cancelled(&st, &flag);
    MT_CHECK(flag == 1, "set_cancelled 1: %d", flag);
    MPI_Status_set_cancelled(&st, 0);
    MPI_Test_cancelled(&st, &flag);
    MT_CHECK(flag == 0, "set_cancelled 0: %d", flag);

#if MPI_VERSION >= 4
    /* Large-count variants with MPI_Count arguments. */
    MPI_Count cc = -1, ce = -1;
    memset(recvd, 0, sizeof(recvd));
    MPI_Irecv_c(recvd, (MPI_Count)16, MPI_INT, 0, 5, MPI_COMM_SELF, &req);
    MPI_Send_c(ints, (MPI_Count)12, MPI_INT, 0, 5, MPI_COMM_SELF);
    MPI_Wait(&req, &st);
    MPI_Get_count_c(&st, MPI_INT, &cc);
    MPI_Get_elements_c(&st, MPI_INT, &ce);
    MT_CHECK(cc == 12 && ce == 12 && recvd[11] == 11, "Send_c/Irecv_c: count %lld elements %lld",
             (long long)cc, (long long)ce);
    MPI_Isend_c(ints, (MPI_Count)9, MPI_INT, 0, 6, MPI_COMM_SELF, &req);
    MPI_Recv_c(recvd, (MPI_Count)16, MPI_INT, 0, 6, MPI_COMM_SELF, &st);
    MPI_Wait(&req, MPI_STATUS_IGNORE);
    MPI_Get_count_c(&st, MPI_INT, &cc);
    MT_CHECK(cc == 9 && recvd[8] == 8, "Isend_c/Recv_c: count %lld", (long long)cc);
    MPI_Sendrecv_c(ints, (MPI_Count)4, MPI_INT, 0, 7, recvd, (MPI_Count)16, MPI_INT, 0, 7, MPI_COMM_SELF, &st);
    MPI_Get_count_c(&st, MPI_INT, &cc);
    MT_CHECK(cc == 4, "Sendrecv_c: count %lld", (long long)cc);
    MPI_Status_set_elements_x(&st, MPI_BYTE, (MPI_Count)5000000000LL);
    MPI_Get_count_c(&st, MPI_BYTE, &cc);
    MT_CHECK(cc == 5000000000LL, "set_elements_x 5e9: count_c %lld", (long long)cc);
#endif
    return mt_finish();
}
