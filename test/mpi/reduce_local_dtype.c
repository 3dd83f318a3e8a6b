/*
 * Predefined operations on derived datatypes whose basic elements are all one predefined type:
 * a strided vector of MPI_DOUBLE with MPI_SUM (several thousand elements, so the data goes through
 * the pack engine in several pieces), a contiguous type of the padded pair MPI_DOUBLE_INT with
 * MPI_MINLOC, and MPI_ERR_OP for a struct mixing types. (MPICH 4.0.2 refuses derived datatypes in
 * MPI_Reduce_local altogether; MPI 4.1 allows them.)
 */
#include "mtest.h"

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    mt_setup();
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);

    /* vector: 2 blocks of 3 doubles, stride 5; the gaps must stay untouched */
    enum { COUNT = 701, EXT = 8 };    /* extent of the vector: (2-1)*5+3 = 8 doubles */
    MPI_Datatype vec;
    MPI_Type_vector(2, 3, 5, MPI_DOUBLE, &vec);
    MPI_Type_commit(&vec);
    double *a = malloc(sizeof(double) * COUNT * EXT), *b = malloc(sizeof(double) * COUNT * EXT);
    for (int i = 0; i < COUNT * EXT; i++)
        a[i] = i, b[i] = -0.25 * i;
    MT_CHECK(MPI_Reduce_local(a, b, COUNT, vec, MPI_SUM) == MPI_SUCCESS, "SUM on a vector of double");
    for (int i = 0; i < COUNT * EXT; i++) {
        int in_block = i % EXT % 5 < 3;
        double want = in_block ? i - 0.25 * i : -0.25 * i;
        MT_CHECK(b[i] == want, "vector SUM [%d] = %g, want %g", i, b[i], want);
        if (b[i] != want)
            break;
    }
    free(a);
    free(b);

    /* contiguous of MPI_DOUBLE_INT (12 bytes of data in 16) with MPI_MINLOC: ties keep the smaller index */
    MPI_Datatype c2;
    MPI_Type_contiguous(2, MPI_DOUBLE_INT, &c2);
    MPI_Type_commit(&c2);
    struct { double v; int i; } pa[4] = {{1, 5}, {3, 3}, {2, 2}, {7, 0}}, pb[4] = {{1, 6}, {2, 9}, {2, 1}, {-1, 4}};
    MT_CHECK(MPI_Reduce_local(pa, pb, 2, c2, MPI_MINLOC) == MPI_SUCCESS, "MINLOC on contiguous DOUBLE_INT");
    MT_CHECK(pb[0].v == 1 && pb[0].i == 5 && pb[1].v == 2 && pb[1].i == 9 && pb[2].v == 2 && pb[2].i == 1 &&
             pb[3].v == -1 && pb[3].i == 4, "MINLOC: (%g,%d) (%g,%d) (%g,%d) (%g,%d)", pb[0].v, pb[0].i,
             pb[1].v, pb[1].i, pb[2].v, pb[2].i, pb[3].v, pb[3].i);

    /* a struct of double and int: no predefined op applies */
    int bl[2] = {1, 1};
    MPI_Aint disp[2] = {0, 8};
    MPI_Datatype types[2] = {MPI_DOUBLE, MPI_INT}, st;
    MPI_Type_create_struct(2, bl, disp, types, &st);
    MPI_Type_commit(&st);
    char x[16] = {0}, y[16] = {0};
    int rc = MPI_Reduce_local(x, y, 1, st, MPI_SUM), cls = MPI_SUCCESS;
    if (rc != MPI_SUCCESS)
        MPI_Error_class(rc, &cls);
    MT_CHECK(cls == MPI_ERR_OP, "SUM on a struct of double and int: class %d", cls);

    MPI_Type_free(&vec);
    MPI_Type_free(&c2);
    MPI_Type_free(&st);
    return mt_finish();
}
