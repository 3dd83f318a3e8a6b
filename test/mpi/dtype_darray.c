/*
 * MPI_Type_create_darray: for several distributions of a 2-D and a 3-D array (block, cyclic,
 * block-cyclic, not distributed; C and Fortran order), every process of the grid packs the global
 * array through its darray type; each element must appear exactly once across the processes, in
 * the order the standard gives (row-major process grid, indices of the fastest dimension first),
 * and the owner of each element must be the one the distribution says. Also extent, envelope and
 * contents, and errors. The process grid is virtual: one MPI process checks every rank of it.
 * MPICH 4.0.2 passes the distribution checks, then dies of SIGFPE on the first error case (a
 * process grid that does not match size).
 */
#include "mtest.h"

/* Owner coordinate and whether index i of a dimension of g over p is owned by coordinate r. */
static int owns(int g, int dist, int darg, int p, int r, int i)
{
    if (dist == MPI_DISTRIBUTE_NONE)
        return 1;
    int b = dist == MPI_DISTRIBUTE_BLOCK ? (darg == MPI_DISTRIBUTE_DFLT_DARG ? (g + p - 1) / p : darg)
                                         : (darg == MPI_DISTRIBUTE_DFLT_DARG ? 1 : darg);
    return (i / b) % p == r;
}

static void check(int nd, const int *gs, const int *dist, const int *darg, const int *ps, int order)
{
    int size = 1, total = 1;
    for (int d = 0; d < nd; d++)
        size *= ps[d], total *= gs[d];
    int *global = malloc(total * sizeof(int)), *seen = calloc(total, sizeof(int)), *packed = malloc(total * sizeof(int));
    for (int k = 0; k < total; k++)
        global[k] = k;
    for (int rank = 0; rank < size; rank++) {
        int coords[3];
        for (int d = nd - 1, r = rank; d >= 0; d--)
            coords[d] = r % ps[d], r /= ps[d];
        MPI_Datatype t;
        MPI_Type_create_darray(size, rank, nd, gs, dist, darg, ps, order, MPI_INT, &t);
        MPI_Type_commit(&t);
        MPI_Aint lb, ext;
        MPI_Type_get_extent(t, &lb, &ext);
        MT_CHECK(lb == 0 && ext == total * (MPI_Aint) sizeof(int), "darray extent %ld", (long) ext);
        int tsize, pos = 0;
        MPI_Type_size(t, &tsize);
        MPI_Pack(global, 1, t, packed, total * sizeof(int), &pos, MPI_COMM_SELF);
        int n = tsize / (int) sizeof(int), prev = -1;
        for (int k = 0; k < n; k++) {
            int e = packed[k], idx[3], rest = e;
            /* the element's index per dimension in the array's order */
            for (int i = 0; i < nd; i++) {
                int d = order == MPI_ORDER_C ? nd - 1 - i : i;
                idx[d] = rest % gs[d];
                rest /= gs[d];
            }
            int mine = 1;
            for (int d = 0; d < nd; d++)
                mine &= owns(gs[d], dist[d], darg[d], ps[d], coords[d], idx[d]);
            MT_CHECK(mine, "rank %d packed element %d it does not own", rank, e);
            MT_CHECK(e > prev, "rank %d: element %d after %d (not in array order)", rank, e, prev);
            prev = e;
            seen[e]++;
        }
        MPI_Type_free(&t);
    }
    for (int k = 0; k < total; k++)
        MT_CHECK(seen[k] == 1, "element %d packed %d times", k, seen[k]);
    free(global), free(seen), free(packed);
}

int main(int argc, char **argv)
{
    mt_init(&argc, &argv);
    int B = MPI_DISTRIBUTE_BLOCK, C = MPI_DISTRIBUTE_CYCLIC, N = MPI_DISTRIBUTE_NONE, D = MPI_DISTRIBUTE_DFLT_DARG;
    for (int order = 0; order < 2; order++) {
        int o = order ? MPI_ORDER_FORTRAN : MPI_ORDER_C;
        check(2, (int[]) {7, 10}, (int[]) {B, B}, (int[]) {D, D}, (int[]) {2, 3}, o);
        check(2, (int[]) {7, 10}, (int[]) {C, C}, (int[]) {D, 2}, (int[]) {3, 2}, o);
        check(2, (int[]) {8, 9}, (int[]) {B, N}, (int[]) {3, D}, (int[]) {3, 1}, o);
        check(3, (int[]) {5, 4, 6}, (int[]) {C, B, C}, (int[]) {2, D, 1}, (int[]) {2, 2, 2}, o);
    }

    /* envelope and contents: size, rank, ndims, gsizes, distribs, dargs, psizes, order */
    MPI_Datatype t, old[1];
    MPI_Type_create_darray(6, 4, 2, (int[]) {7, 10}, (int[]) {B, C}, (int[]) {D, 2}, (int[]) {2, 3}, MPI_ORDER_C,
                           MPI_DOUBLE, &t);
    int ni, na, ndt, comb, ints[16];
    MPI_Aint addrs[1];
    MPI_Type_get_envelope(t, &ni, &na, &ndt, &comb);
    MT_CHECK(comb == MPI_COMBINER_DARRAY && ni == 4 * 2 + 4 && na == 0 && ndt == 1, "darray envelope %d %d %d %d",
             ni, na, ndt, comb);
    MPI_Type_get_contents(t, 16, 1, 1, ints, addrs, old);
    int want[12] = {6, 4, 2, 7, 10, B, C, D, 2, 2, 3, MPI_ORDER_C};
    for (int k = 0; k < 12; k++)
        MT_CHECK(ints[k] == want[k], "darray contents integer %d: %d, want %d", k, ints[k], want[k]);
    MT_CHECK(old[0] == MPI_DOUBLE, "darray old type");
    MPI_Type_free(&t);

    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    int err = MPI_Type_create_darray(5, 0, 2, (int[]) {7, 10}, (int[]) {B, B}, (int[]) {D, D}, (int[]) {2, 3},
                                     MPI_ORDER_C, MPI_INT, &t), cls;
    MPI_Error_class(err, &cls);
    MT_CHECK(cls == MPI_ERR_ARG, "grid of 6 with size 5: class %d", cls);
    err = MPI_Type_create_darray(6, 0, 1, (int[]) {10}, (int[]) {B}, (int[]) {1}, (int[]) {6}, MPI_ORDER_C, MPI_INT,
                                 &t);
    MPI_Error_class(err, &cls);
    MT_CHECK(cls == MPI_ERR_ARG, "blocks of 1 over 6 processes cannot hold 10: class %d", cls);
    return mt_finish();
}
