/*
 * MPI_Pack_external / MPI_Unpack_external / MPI_Pack_external_size with "external32": the bytes
 * of each basic element big-endian (checked byte by byte for int, short, double, long double as
 * IEEE binary128), holes dropped, and the round trip through a struct type. An unknown data
 * representation is MPI_ERR_ARG. MPICH 4.0.2 dies of SIGILL inside libmpich on this program (its
 * external32 bytes of an int and a double agree with these).
 */
#include "mtest.h"

#include <stddef.h>

int main(int argc, char **argv)
{
    mt_init(&argc, &argv);
    unsigned char buf[128];
    MPI_Aint pos = 0, size;

    int i = 0x01020304;
    short s = 0x0506;
    double d = 1.0; /* 0x3ff0000000000000 */
    long double ld = -2.0L; /* binary128: 0xc000 0000... */
    MPI_Pack_external("external32", &i, 1, MPI_INT, buf, sizeof(buf), &pos);
    MPI_Pack_external("external32", &s, 1, MPI_SHORT, buf, sizeof(buf), &pos);
    MPI_Pack_external("external32", &d, 1, MPI_DOUBLE, buf, sizeof(buf), &pos);
    MPI_Pack_external("external32", &ld, 1, MPI_LONG_DOUBLE, buf, sizeof(buf), &pos);
    MT_CHECK(pos == 4 + 2 + 8 + 16, "position %ld", (long) pos);
    unsigned char want[30] = {1, 2, 3, 4, 5, 6, 0x3f, 0xf0, 0, 0, 0, 0, 0, 0, 0xc0, 0x00};
    for (int k = 0; k < 30; k++)
        MT_CHECK(buf[k] == want[k], "byte %d is 0x%02x, want 0x%02x", k, buf[k], want[k]);

    /* a struct with a hole, as a vector of 3: size has no holes, round trip restores the data */
    struct r { char c; double v; int n; } in[3], out[3];
    MPI_Datatype t, v;
    MPI_Type_create_struct(3, (int[]) {1, 1, 1},
                           (MPI_Aint[]) {offsetof(struct r, c), offsetof(struct r, v), offsetof(struct r, n)},
                           (MPI_Datatype[]) {MPI_CHAR, MPI_DOUBLE, MPI_INT}, &t);
    MPI_Type_contiguous(3, t, &v);
    MPI_Type_commit(&v);
    MPI_Pack_external_size("external32", 1, v, &size);
    MT_CHECK(size == 3 * 13, "external size %ld", (long) size);
    for (int k = 0; k < 3; k++)
        in[k].c = (char) ('x' + k), in[k].v = k * 0.25, in[k].n = -k;
    memset(out, 0, sizeof(out));
    pos = 0;
    MPI_Pack_external("external32", in, 1, v, buf, sizeof(buf), &pos);
    MT_CHECK(pos == size, "packed %ld", (long) pos);
    MT_CHECK(buf[13 + 12] == 0xff && buf[13] == 'y', "second element's int -1 big-endian, char first");
    MPI_Aint upos = 0;
    MPI_Unpack_external("external32", buf, pos, &upos, out, 1, v);
    for (int k = 0; k < 3; k++)
        MT_CHECK(out[k].c == in[k].c && out[k].v == in[k].v && out[k].n == in[k].n, "round trip element %d", k);
    long double lo = 0;
    pos = 0;
    MPI_Pack_external("external32", &ld, 1, MPI_LONG_DOUBLE, buf, sizeof(buf), &pos);
    upos = 0;
    MPI_Unpack_external("external32", buf, pos, &upos, &lo, 1, MPI_LONG_DOUBLE);
    MT_CHECK(lo == ld, "long double round trip %Lg", lo);

    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    int err = MPI_Pack_external_size("native", 1, MPI_INT, &size), cls;
    MPI_Error_class(err, &cls);
    MT_CHECK(cls == MPI_ERR_ARG, "datarep native: class %d", cls);
    MPI_Type_free(&v);
    MPI_Type_free(&t);
    return mt_finish();
}
