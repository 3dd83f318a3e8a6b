/*
 * Datatype constructors: size, extent, true extent, envelope and contents of every constructor
 * (classic and large-count), names, MPI_Type_match_size, committed duplicates, and the errors of
 * bad arguments. Values are those the MPI 4.1 type-map rules give (section 5.1). MPICH 4.0.2
 * passes all but the subarray-outside-the-array check (it accepts that type).
 */
#include "mtest.h"

static void expect_shape(MPI_Datatype t, MPI_Count size, MPI_Aint lb, MPI_Aint extent, MPI_Aint tlb,
                         MPI_Aint textent, const char *what)
{
    int isize;
    MPI_Count csize, xlb, xext;
    MPI_Aint l, e, tl, te;
    MPI_Type_size(t, &isize);
    MPI_Type_size_x(t, &csize);
    MPI_Type_get_extent(t, &l, &e);
    MPI_Type_get_true_extent(t, &tl, &te);
    MPI_Type_get_extent_x(t, &xlb, &xext);
    MT_CHECK(isize == size && csize == size, "%s: size %d/%lld, want %lld", what, isize, (long long) csize,
             (long long) size);
    MT_CHECK(l == lb && e == extent && xlb == lb && xext == extent, "%s: lb %ld extent %ld, want %ld %ld", what,
             (long) l, (long) e, (long) lb, (long) extent);
    MT_CHECK(tl == tlb && te == textent, "%s: true lb %ld extent %ld, want %ld %ld", what, (long) tl, (long) te,
             (long) tlb, (long) textent);
}

static void expect_envelope(MPI_Datatype t, int ni, int na, int nd, int comb, const char *what)
{
    int i, a, d, c;
    MPI_Type_get_envelope(t, &i, &a, &d, &c);
    MT_CHECK(i == ni && a == na && d == nd && c == comb, "%s: envelope %d %d %d combiner %d, want %d %d %d %d",
             what, i, a, d, c, ni, na, nd, comb);
}

/* Contents: integers and addresses as given, and the datatypes (freed when derived). */
static void expect_contents(MPI_Datatype t, int ni, const int *ints, int na, const MPI_Aint *addrs, int nd,
                            const MPI_Datatype *types, const char *what)
{
    int gi[32];
    MPI_Aint ga[32];
    MPI_Datatype gd[8];
    MPI_Type_get_contents(t, 32, 32, 8, gi, ga, gd);
    for (int k = 0; k < ni; k++)
        MT_CHECK(gi[k] == ints[k], "%s: integer %d is %d, want %d", what, k, gi[k], ints[k]);
    for (int k = 0; k < na; k++)
        MT_CHECK(ga[k] == addrs[k], "%s: address %d is %ld, want %ld", what, k, (long) ga[k], (long) addrs[k]);
    for (int k = 0; k < nd; k++) {
        MT_CHECK(gd[k] == types[k], "%s: datatype %d differs", what, k);
        int i, a, d, c;
        MPI_Type_get_envelope(gd[k], &i, &a, &d, &c);
        if (c != MPI_COMBINER_NAMED)
            MPI_Type_free(&gd[k]);
    }
}

int main(int argc, char **argv)
{
    mt_init(&argc, &argv);
    MPI_Datatype t, t2, v;

    /* contiguous */
    MPI_Type_contiguous(5, MPI_INT, &t);
    expect_shape(t, 20, 0, 20, 0, 20, "contiguous");
    expect_envelope(t, 1, 0, 1, MPI_COMBINER_CONTIGUOUS, "contiguous");
    expect_contents(t, 1, (int[]) {5}, 0, NULL, 1, (MPI_Datatype[]) {MPI_INT}, "contiguous");
    MPI_Type_free(&t);
    MT_CHECK(t == MPI_DATATYPE_NULL, "Type_free did not set MPI_DATATYPE_NULL");

    /* vector: 3 blocks of 2 doubles, stride 4 doubles; and a negative stride */
    MPI_Type_vector(3, 2, 4, MPI_DOUBLE, &v);
    expect_shape(v, 48, 0, 80, 0, 80, "vector");
    expect_envelope(v, 3, 0, 1, MPI_COMBINER_VECTOR, "vector");
    expect_contents(v, 3, (int[]) {3, 2, 4}, 0, NULL, 1, (MPI_Datatype[]) {MPI_DOUBLE}, "vector");
    MPI_Type_vector(3, 1, -2, MPI_INT, &t);
    expect_shape(t, 12, -16, 20, -16, 20, "vector with negative stride");
    MPI_Type_free(&t);

    /* hvector of the vector */
    MPI_Type_create_hvector(2, 1, 100, v, &t);
    expect_shape(t, 96, 0, 180, 0, 180, "hvector");
    expect_envelope(t, 2, 1, 1, MPI_COMBINER_HVECTOR, "hvector");
    expect_contents(t, 2, (int[]) {2, 1}, 1, (MPI_Aint[]) {100}, 1, &v, "hvector");
    MPI_Type_free(&t);

    /* indexed, hindexed */
    MPI_Type_indexed(2, (int[]) {1, 3}, (int[]) {4, 0}, MPI_INT, &t);
    expect_shape(t, 16, 0, 20, 0, 20, "indexed");
    expect_envelope(t, 5, 0, 1, MPI_COMBINER_INDEXED, "indexed");
    expect_contents(t, 5, (int[]) {2, 1, 3, 4, 0}, 0, NULL, 1, (MPI_Datatype[]) {MPI_INT}, "indexed");
    MPI_Type_free(&t);
    MPI_Type_create_hindexed(2, (int[]) {2, 1}, (MPI_Aint[]) {8, 40}, MPI_SHORT, &t);
    expect_shape(t, 6, 8, 34, 8, 34, "hindexed");
    expect_envelope(t, 3, 2, 1, MPI_COMBINER_HINDEXED, "hindexed");
    expect_contents(t, 3, (int[]) {2, 2, 1}, 2, (MPI_Aint[]) {8, 40}, 1, (MPI_Datatype[]) {MPI_SHORT}, "hindexed");
    MPI_Type_free(&t);

    /* indexed_block, hindexed_block */
    MPI_Type_create_indexed_block(3, 2, (int[]) {6, 0, 3}, MPI_FLOAT, &t);
    expect_shape(t, 24, 0, 32, 0, 32, "indexed_block");
    expect_envelope(t, 5, 0, 1, MPI_COMBINER_INDEXED_BLOCK, "indexed_block");
    expect_contents(t, 5, (int[]) {3, 2, 6, 0, 3}, 0, NULL, 1, (MPI_Datatype[]) {MPI_FLOAT}, "indexed_block");
    MPI_Type_free(&t);
    MPI_Type_create_hindexed_block(2, 1, (MPI_Aint[]) {16, 0}, MPI_DOUBLE, &t);
    expect_shape(t, 16, 0, 24, 0, 24, "hindexed_block");
    expect_envelope(t, 2, 2, 1, MPI_COMBINER_HINDEXED_BLOCK, "hindexed_block");
    MPI_Type_free(&t);

    /* struct { char c; double d; int i; }: padding to the double's alignment */
    struct s { char c; double d; int i; };
    MPI_Type_create_struct(3, (int[]) {1, 1, 1}, (MPI_Aint[]) {0, 8, 16},
                           (MPI_Datatype[]) {MPI_CHAR, MPI_DOUBLE, MPI_INT}, &t);
    expect_shape(t, 13, 0, sizeof(struct s), 0, 20, "struct");
    expect_envelope(t, 4, 3, 3, MPI_COMBINER_STRUCT, "struct");
    expect_contents(t, 4, (int[]) {3, 1, 1, 1}, 3, (MPI_Aint[]) {0, 8, 16}, 3,
                    (MPI_Datatype[]) {MPI_CHAR, MPI_DOUBLE, MPI_INT}, "struct");
    MPI_Type_free(&t);

    /* subarray: 3x2 out of 4x5 ints from (1, 2), C and Fortran order */
    MPI_Type_create_subarray(2, (int[]) {4, 5}, (int[]) {3, 2}, (int[]) {1, 2}, MPI_ORDER_C, MPI_INT, &t);
    expect_shape(t, 24, 0, 80, 28, 48, "subarray C"); /* (1,2) at 28 to (3,3) ending at 76 */
    expect_envelope(t, 8, 0, 1, MPI_COMBINER_SUBARRAY, "subarray");
    expect_contents(t, 8, (int[]) {2, 4, 5, 3, 2, 1, 2, MPI_ORDER_C}, 0, NULL, 1, (MPI_Datatype[]) {MPI_INT},
                    "subarray");
    MPI_Type_free(&t);
    MPI_Type_create_subarray(2, (int[]) {4, 5}, (int[]) {3, 2}, (int[]) {1, 2}, MPI_ORDER_FORTRAN, MPI_INT, &t);
    /* Fortran: first index fastest; element (i, j) at (i + 4 j) * 4 */
    expect_shape(t, 24, 0, 80, (1 + 4 * 2) * 4, ((3 + 4 * 3) - (1 + 4 * 2) + 1) * 4, "subarray Fortran");
    MPI_Type_free(&t);

    /* resized, dup */
    MPI_Type_create_resized(MPI_INT, -4, 16, &t);
    expect_shape(t, 4, -4, 16, 0, 4, "resized");
    expect_envelope(t, 0, 2, 1, MPI_COMBINER_RESIZED, "resized");
    expect_contents(t, 0, NULL, 2, (MPI_Aint[]) {-4, 16}, 1, (MPI_Datatype[]) {MPI_INT}, "resized");
    MPI_Type_dup(t, &t2);
    expect_shape(t2, 4, -4, 16, 0, 4, "dup");
    expect_envelope(t2, 0, 0, 1, MPI_COMBINER_DUP, "dup");
    MPI_Type_free(&t2);
    MPI_Type_free(&t);
    expect_envelope(MPI_INT, 0, 0, 0, MPI_COMBINER_NAMED, "MPI_INT");

    /* large-count constructors give the same types */
    MPI_Type_vector_c(3, 2, 4, MPI_DOUBLE, &t);
    expect_shape(t, 48, 0, 80, 0, 80, "vector_c");
    MPI_Count nl;
    MPI_Count ni, na, nd;
    int comb;
    MPI_Type_get_envelope_c(t, &ni, &na, &nl, &nd, &comb);
    MT_CHECK(comb == MPI_COMBINER_VECTOR && ni == 0 && na == 0 && nl == 3 && nd == 1,
             "vector_c envelope_c %lld %lld %lld %lld", (long long) ni, (long long) na, (long long) nl, (long long) nd);
    {
        int gi[1];
        MPI_Aint ga[1];
        MPI_Count gc[3];
        MPI_Datatype gd[1];
        MPI_Type_get_contents_c(t, 0, 0, 3, 1, gi, ga, gc, gd);
        MT_CHECK(gc[0] == 3 && gc[1] == 2 && gc[2] == 4 && gd[0] == MPI_DOUBLE, "vector_c contents_c");
    }
    /* the classic calls cannot describe a type made by MPI_X_c (MPICH says so too) */
    {
        int i, a, d, c, cls;
        MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
        MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN); /* MPICH 4.0.2 calls this one */
        MPI_Error_class(MPI_Type_get_envelope(t, &i, &a, &d, &c), &cls);
        MT_CHECK(cls != MPI_SUCCESS, "classic envelope of vector_c: class %d", cls);
        MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_ARE_FATAL);
        MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
    }
    MPI_Type_free(&t);
    /* and a classic type seen through the _c calls: no large counts */
    MPI_Type_create_hvector(2, 3, 40, MPI_INT, &t);
    MPI_Type_get_envelope_c(t, &ni, &na, &nl, &nd, &comb);
    MT_CHECK(ni == 2 && na == 1 && nl == 0 && nd == 1, "hvector envelope_c %lld %lld %lld", (long long) ni,
             (long long) na, (long long) nl);
    MPI_Type_free(&t);

    /* a type built on a freed type stays valid */
    MPI_Type_contiguous(2, v, &t);
    MPI_Type_free(&v);
    MPI_Type_commit(&t);
    expect_shape(t, 96, 0, 160, 0, 160, "contiguous of freed vector");

    /* names */
    char name[MPI_MAX_OBJECT_NAME];
    int len;
    MPI_Type_get_name(MPI_DOUBLE, name, &len);
    MT_CHECK(strcmp(name, "MPI_DOUBLE") == 0 && len == 10, "name of MPI_DOUBLE: '%s'", name);
    MPI_Type_get_name(t, name, &len);
    MT_CHECK(len == 0 && name[0] == '\0', "derived type has name '%s'", name);
    MPI_Type_set_name(t, "halo");
    MPI_Type_get_name(t, name, &len);
    MT_CHECK(strcmp(name, "halo") == 0 && len == 4, "name '%s'", name);

    /* a duplicate of a committed type is committed: usable at once */
    MPI_Type_dup(t, &t2);
    double buf[20] = {0}, packed[12];
    int pos = 0;
    MT_CHECK(MPI_Pack(buf, 1, t2, packed, sizeof(packed), &pos, MPI_COMM_SELF) == MPI_SUCCESS && pos == 96,
             "pack with a dup of a committed type: position %d", pos);
    MPI_Type_free(&t2);
    MPI_Type_free(&t);

    /* match_size */
    MPI_Datatype m;
    MPI_Type_match_size(MPI_TYPECLASS_REAL, 8, &m);
    MT_CHECK(m == MPI_REAL8, "match_size real 8");
    MPI_Type_match_size(MPI_TYPECLASS_INTEGER, 4, &m);
    MT_CHECK(m == MPI_INTEGER4, "match_size integer 4");

    /* errors */
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    int err, cls;
    err = MPI_Type_contiguous(-1, MPI_INT, &t);
    MPI_Error_class(err, &cls);
    MT_CHECK(cls == MPI_ERR_COUNT, "contiguous count -1: class %d", cls);
    err = MPI_Type_vector(1, 1, 1, MPI_DATATYPE_NULL, &t);
    MPI_Error_class(err, &cls);
    MT_CHECK(cls == MPI_ERR_TYPE, "vector of MPI_DATATYPE_NULL: class %d", cls);
    m = MPI_INT;
    err = MPI_Type_free(&m);
    MPI_Error_class(err, &cls);
    MT_CHECK(cls == MPI_ERR_TYPE, "free MPI_INT: class %d", cls);
    err = MPI_Type_create_subarray(1, (int[]) {4}, (int[]) {3}, (int[]) {2}, MPI_ORDER_C, MPI_INT, &t);
    MPI_Error_class(err, &cls);
    MT_CHECK(cls == MPI_ERR_ARG, "subarray out of the array: class %d", cls);
    err = MPI_Type_match_size(MPI_TYPECLASS_REAL, 3, &m);
    MPI_Error_class(err, &cls);
    MT_CHECK(cls == MPI_ERR_ARG, "match_size real 3: class %d", cls);
    MPI_Type_contiguous(2, MPI_INT, &t);
    int x[2];
    err = MPI_Send(x, 1, t, MPI_PROC_NULL, 0, MPI_COMM_WORLD);
    MPI_Error_class(err, &cls);
    MT_CHECK(cls == MPI_ERR_TYPE, "send with an uncommitted type: class %d", cls);
    MPI_Type_free(&t);

    return mt_finish();
}
