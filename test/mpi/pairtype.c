/*
 * Counting pair types (MPI_DOUBLE_INT, MPI_2INT, ...): MPI_Get_elements counts basic elements, two
 * per pair, and a message that ends in the middle of a pair has MPI_Get_count MPI_UNDEFINED while
 * MPI_Get_elements still counts what arrived (MPI 4.1, 5.1.11: pair types are struct types).
 * Open MPI 4.1 counts pairs as one element; MPICH 4.0.2 crashes on these queries.
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
    struct { double d; int i; } di[4] = { { 1.5, 1 }, { 2.5, 2 }, { 3.5, 3 }, { 4.5, 4 } }, dr[4];
    struct { float f; int i; } fi[3] = { { 1, 1 }, { 2, 2 }, { 3, 3 } }, fr[3];
    int ints[8] = { 0, 1, 2, 3, 4, 5, 6, 7 }, ir[8];
    MPI_Request req;
    MPI_Status st;

    MPI_Irecv(dr, 4, MPI_DOUBLE_INT, 0, 1, MPI_COMM_SELF, &req);
    MPI_Send(di, 4, MPI_DOUBLE_INT, 0, 1, MPI_COMM_SELF);
    MPI_Wait(&req, &st);
    expect_counts(&st, MPI_DOUBLE_INT, 4, 8, "4 MPI_DOUBLE_INT");
    MT_CHECK(dr[3].d == 4.5 && dr[3].i == 4, "MPI_DOUBLE_INT data");

    MPI_Irecv(fr, 3, MPI_FLOAT_INT, 0, 2, MPI_COMM_SELF, &req);
    MPI_Send(fi, 3, MPI_FLOAT_INT, 0, 2, MPI_COMM_SELF);
    MPI_Wait(&req, &st);
    expect_counts(&st, MPI_FLOAT_INT, 3, 6, "3 MPI_FLOAT_INT");

    /* 3 ints into MPI_2INT: one and a half pairs. */
    MPI_Irecv(ir, 4, MPI_2INT, 0, 3, MPI_COMM_SELF, &req);
    MPI_Send(ints, 3, MPI_INT, 0, 3, MPI_COMM_SELF);
    MPI_Wait(&req, &st);
    expect_counts(&st, MPI_2INT, MPI_UNDEFINED, 3, "3 ints as MPI_2INT");
    MT_CHECK(ir[2] == 2, "partial MPI_2INT data");
    return mt_finish();
}
