/*
 * MPI_Reduce_local with predefined and user operations, MPI_Op_create(_c), MPI_Op_commutative,
 * MPI_Op_free and the MPI_ERR_OP errors of undefined (op, datatype) pairs. Local only: every rank
 * runs the same checks.
 */
#include "mtest.h"

/* Non-commutative: inout = in * 10 + inout shows which operand came first. */
static void concat(void *in, void *inout, int *len, MPI_Datatype *dt)
{
    int *a = in, *b = inout;
    for (int i = 0; i < *len; i++)
        b[i] = a[i] * 10 + b[i];
}

static MPI_Count seen_count;
static MPI_Datatype seen_type;
static void big_sum(void *in, void *inout, MPI_Count *len, MPI_Datatype *dt)
{
    const long *a = in;
    long *b = inout;
    seen_count = *len;
    seen_type = *dt;
    for (MPI_Count i = 0; i < *len; i++)
        b[i] += a[i];
}

static void int_max(void *in, void *inout, int *len, MPI_Datatype *dt)
{
    int *a = in, *b = inout;
    seen_type = *dt;
    for (int i = 0; i < *len; i++)
        b[i] = a[i] > b[i] ? a[i] : b[i];
}

static void expect_op_error(int rc, const char *what)
{
    int cls = MPI_SUCCESS;
    if (rc != MPI_SUCCESS)
        MPI_Error_class(rc, &cls);
    MT_CHECK(cls == MPI_ERR_OP, "%s: error class %d, expected MPI_ERR_OP", what, cls);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    mt_setup();
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);

    /* predefined ops, odd count */
    enum { N = 37 };
    int ia[N], ib[N];
    double da[N], db[N];
    for (int i = 0; i < N; i++) {
        ia[i] = i - 5; ib[i] = 3 * i % 11;
        da[i] = 0.5 * i; db[i] = 100.0 - i;
    }
    int ib0[N];
    memcpy(ib0, ib, sizeof ib);
    MT_CHECK(MPI_Reduce_local(ia, ib, N, MPI_INT, MPI_SUM) == MPI_SUCCESS, "SUM int");
    for (int i = 0; i < N; i++)
        MT_CHECK(ib[i] == ia[i] + ib0[i], "SUM int [%d] = %d", i, ib[i]);
    MT_CHECK(MPI_Reduce_local(da, db, N, MPI_DOUBLE, MPI_MAX) == MPI_SUCCESS, "MAX double");
    for (int i = 0; i < N; i++)
        MT_CHECK(db[i] == (0.5 * i > 100.0 - i ? 0.5 * i : 100.0 - i), "MAX double [%d] = %g", i, db[i]);
    unsigned char ba[3] = {0xf0, 0x0f, 0xff}, bb[3] = {0x3c, 0x3c, 0x81};
    MT_CHECK(MPI_Reduce_local(ba, bb, 3, MPI_BYTE, MPI_BXOR) == MPI_SUCCESS, "BXOR byte");
    MT_CHECK(bb[0] == 0xcc && bb[1] == 0x33 && bb[2] == 0x7e, "BXOR byte %x %x %x", bb[0], bb[1], bb[2]);

    /* MINLOC/MAXLOC on MPI_DOUBLE_INT: on equal values the smaller index wins */
    struct { double v; int i; } pa[3] = {{1.0, 7}, {2.0, 3}, {5.0, 1}}, pb[3] = {{1.0, 4}, {2.0, 9}, {0.5, 0}};
    MT_CHECK(MPI_Reduce_local(pa, pb, 3, MPI_DOUBLE_INT, MPI_MINLOC) == MPI_SUCCESS, "MINLOC");
    MT_CHECK(pb[0].v == 1.0 && pb[0].i == 4 && pb[1].v == 2.0 && pb[1].i == 3 && pb[2].v == 0.5 &&
             pb[2].i == 0, "MINLOC: (%g,%d) (%g,%d) (%g,%d)", pb[0].v, pb[0].i, pb[1].v, pb[1].i,
             pb[2].v, pb[2].i);
    int qa[4] = {6, 2, 6, 8}, qb[4] = {6, 1, 3, 0};   /* MPI_2INT: (value, index) */
    MT_CHECK(MPI_Reduce_local(qa, qb, 2, MPI_2INT, MPI_MAXLOC) == MPI_SUCCESS, "MAXLOC 2INT");
    MT_CHECK(qb[0] == 6 && qb[1] == 1 && qb[2] == 6 && qb[3] == 8, "MAXLOC 2INT: %d %d %d %d",
             qb[0], qb[1], qb[2], qb[3]);

    /* user ops: non-commutative keeps the order, commutative too */
    MPI_Op cat, mx, big;
    int flag = -1;
    MT_CHECK(MPI_Op_create(concat, 0, &cat) == MPI_SUCCESS, "Op_create");
    MT_CHECK(MPI_Op_commutative(cat, &flag) == MPI_SUCCESS && flag == 0, "concat commutative %d", flag);
    int ca[2] = {1, 3}, cb[2] = {2, 4};
    MT_CHECK(MPI_Reduce_local(ca, cb, 2, MPI_INT, cat) == MPI_SUCCESS, "Reduce_local user");
    MT_CHECK(cb[0] == 12 && cb[1] == 34, "non-commutative order: %d %d (want 12 34)", cb[0], cb[1]);
    MT_CHECK(MPI_Op_create(int_max, 1, &mx) == MPI_SUCCESS, "Op_create");
    MT_CHECK(MPI_Op_commutative(mx, &flag) == MPI_SUCCESS && flag == 1, "int_max commutative %d", flag);
    MPI_Datatype pair;
    MPI_Type_contiguous(2, MPI_INT, &pair);
    MPI_Type_commit(&pair);
    int ma[4] = {1, 9, 5, 5}, mb[4] = {4, 2, 5, 6};
    MT_CHECK(MPI_Reduce_local(ma, mb, 2, pair, mx) == MPI_SUCCESS, "user op on a derived type");
    MT_CHECK(mb[0] == 4 && mb[1] == 9 && mb[2] == 5 && mb[3] == 6, "user max: %d %d %d %d", mb[0], mb[1],
             mb[2], mb[3]);
    MT_CHECK(seen_type == pair, "user function got datatype 0x%x", (unsigned) seen_type);

    /* MPI_Op_create_c: the function gets an MPI_Count */
    MT_CHECK(MPI_Op_create_c(big_sum, 1, &big) == MPI_SUCCESS, "Op_create_c");
    enum { M = 1001 };
    static long la[M], lb[M];
    for (int i = 0; i < M; i++)
        la[i] = i, lb[i] = 2 * i;
    MT_CHECK(MPI_Reduce_local_c(la, lb, (MPI_Count) M, MPI_LONG, big) == MPI_SUCCESS, "Reduce_local_c");
    MT_CHECK(seen_count == M && seen_type == MPI_LONG, "large user fn saw %ld of 0x%x", (long) seen_count,
             (unsigned) seen_type);
    for (int i = 0; i < M; i++)
        MT_CHECK(lb[i] == 3 * i, "big_sum [%d] = %ld", i, lb[i]);

    /* MPI_Op_commutative of predefined ops */
    MT_CHECK(MPI_Op_commutative(MPI_SUM, &flag) == MPI_SUCCESS && flag == 1, "SUM commutative %d", flag);
    MT_CHECK(MPI_Op_commutative(MPI_MAXLOC, &flag) == MPI_SUCCESS && flag == 1, "MAXLOC commutative");

    /* undefined (op, datatype) pairs */
    float fi[4] = {0};
    double d1 = 1, d2 = 2;
    int i1 = 1, i2 = 2;
    expect_op_error(MPI_Reduce_local(fi, fi + 2, 1, MPI_FLOAT_INT, MPI_SUM), "SUM on MPI_FLOAT_INT");
    expect_op_error(MPI_Reduce_local(&d1, &d2, 1, MPI_DOUBLE, MPI_BAND), "BAND on MPI_DOUBLE");
    expect_op_error(MPI_Reduce_local(&i1, &i2, 1, MPI_INT, MPI_MINLOC), "MINLOC on MPI_INT");
    expect_op_error(MPI_Reduce_local(&i1, &i2, 1, MPI_INT, MPI_REPLACE), "REPLACE in Reduce_local");
    expect_op_error(MPI_Reduce_local(&i1, &i2, 1, MPI_INT, MPI_OP_NULL), "MPI_OP_NULL");
    MT_CHECK(i2 == 2 && d2 == 2, "a refused reduction changed its output");

    /* MPI_Op_free */
    MPI_Op op = MPI_SUM;
    expect_op_error(MPI_Op_free(&op), "freeing MPI_SUM");
    MT_CHECK(op == MPI_SUM, "a refused Op_free changed the handle");
    op = MPI_OP_NULL;
    expect_op_error(MPI_Op_free(&op), "freeing MPI_OP_NULL");
    MT_CHECK(MPI_Op_free(&cat) == MPI_SUCCESS && cat == MPI_OP_NULL, "Op_free of a user op");
    MT_CHECK(MPI_Op_free(&mx) == MPI_SUCCESS && mx == MPI_OP_NULL, "Op_free");
    MT_CHECK(MPI_Op_free(&big) == MPI_SUCCESS && big == MPI_OP_NULL, "Op_free");
    MPI_Type_free(&pair);

    return mt_finish();
}
