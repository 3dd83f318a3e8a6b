/*
 * Cartesian topologies: MPI_Dims_create against a table of cases, then for 1-, 2- and 3-D grids
 * of every size and periodicity: MPI_Cart_get / Cartdim_get / Topo_test, coords <-> rank round
 * trips (with periodic wrap-around), MPI_Cart_shift checked by moving data along the shifts,
 * MPI_Cart_sub for every combination of remaining dimensions, MPI_Comm_dup keeping the topology,
 * grids smaller than the communicator, zero-dimensional grids, MPI_Cart_map, and the errors.
 */
#include "mtest.h"

static int is_umpi;

static void check_err(int err, int cls1, int cls2, const char *words, const char *what)
{
    int cls = mt_class(err);
    MT_CHECK(err != MPI_SUCCESS && (cls == cls1 || cls == cls2), "%s: class %d (%s)", what, cls,
             err != MPI_SUCCESS ? mt_errstr(err) : "success");
    if (is_umpi && err != MPI_SUCCESS)
        MT_CHECK(mt_msg_has(err, words), "%s: message '%s' lacks '%s'", what, mt_errstr(err), words);
}

static void dims_table(void)
{
    static const struct { int n, nd, in[8], out[8]; } t[] = {
        {1, 1, {0}, {1}},           {1, 3, {0}, {1, 1, 1}},        {2, 2, {0}, {2, 1}},
        {4, 2, {0}, {2, 2}},        {6, 2, {0}, {3, 2}},           {7, 2, {0}, {7, 1}},
        {8, 3, {0}, {2, 2, 2}},     {12, 2, {0}, {4, 3}},          {12, 3, {0}, {3, 2, 2}},
        {16, 4, {0}, {2, 2, 2, 2}}, {24, 3, {0}, {4, 3, 2}},       {36, 3, {0}, {4, 3, 3}},
        {49, 3, {0}, {7, 7, 1}},    {60, 3, {0}, {5, 4, 3}},       {64, 3, {0}, {4, 4, 4}},
        {72, 3, {0}, {6, 4, 3}},    {97, 2, {0}, {97, 1}},         {100, 2, {0}, {10, 10}},
        {144, 3, {0}, {6, 6, 4}},   {210, 4, {0}, {7, 5, 3, 2}},   {360, 3, {0}, {10, 6, 6}},
        {720, 4, {0}, {6, 6, 5, 4}}, {1000, 3, {0}, {10, 10, 10}}, {1024, 3, {0}, {16, 8, 8}},
        {2310, 3, {0}, {15, 14, 11}}, {27720, 4, {0}, {15, 14, 12, 11}},
        {36, 3, {0, 3, 0}, {4, 3, 3}}, {60, 3, {2, 0, 0}, {2, 6, 5}}, {12, 2, {3, 4}, {3, 4}},
        {30, 3, {0, 0, 5}, {3, 2, 5}},
        /* large: the search must stay fast */
        {735134400, 3, {0}, {918, 910, 880}}, {735134400, 6, {0}, {34, 33, 30, 30, 28, 26}},
        {2147483646, 4, {0}, {331, 217, 198, 151}}, {1000000, 8, {0}, {8, 8, 5, 5, 5, 5, 5, 5}},
    };
    for (unsigned i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
        int d[8];
        memcpy(d, t[i].in, sizeof(d));
        int err = MPI_Dims_create(t[i].n, t[i].nd, d);
        MT_CHECK(err == MPI_SUCCESS, "Dims_create(%d, %d): %s", t[i].n, t[i].nd, mt_errstr(err));
        for (int j = 0; j < t[i].nd; j++)
            MT_CHECK(d[j] == t[i].out[j], "Dims_create(%d, %d): dims[%d] = %d, want %d", t[i].n, t[i].nd, j, d[j],
                     t[i].out[j]);
    }
    int d[2] = {5, 0};
    check_err(MPI_Dims_create(12, 2, d), MPI_ERR_DIMS, MPI_ERR_DIMS, "dims nnodes", "Dims_create(12, {5,0})");
    d[0] = -1;
    check_err(MPI_Dims_create(8, 2, d), MPI_ERR_DIMS, MPI_ERR_DIMS, "dims[0] -1", "Dims_create(8, {-1,0})");
    check_err(MPI_Dims_create(4, -1, d), MPI_ERR_DIMS, MPI_ERR_ARG, "ndims -1", "Dims_create(4, ndims -1)");
}

/* Row-major rank of coords in dims. */
static int rank_of(int nd, const int *dims, const int *c)
{
    int r = 0;
    for (int i = 0; i < nd; i++)
        r = r * dims[i] + c[i];
    return r;
}

static void check_sub(MPI_Comm cart, int nd, const int *dims, const int *periods, const int *me, int mask)
{
    int remain[3], sdims[3], speriods[3], scoords[3], ex[3], sub_nd = 0, want_size = 1;
    MPI_Comm sub;
    for (int i = 0; i < nd; i++) {
        remain[i] = (mask >> i) & 1;
        if (remain[i]) {
            ex[sub_nd++] = i;
            want_size *= dims[i];
        }
    }
    int err = MPI_Cart_sub(cart, remain, &sub);
    MT_CHECK(err == MPI_SUCCESS, "Cart_sub mask %d: %s", mask, mt_errstr(err));
    /* Nothing remains: MPI 4.1 gives every process a zero-dimensional grid of its own; MPICH 4.0
     * gives MPI_COMM_NULL to all but one. */
    if (err != MPI_SUCCESS || (!is_umpi && sub == MPI_COMM_NULL && mask == 0))
        return;
    int size, rank, st, snd;
    MPI_Comm_size(sub, &size);
    MPI_Comm_rank(sub, &rank);
    MPI_Topo_test(sub, &st);
    MPI_Cartdim_get(sub, &snd);
    MT_CHECK(size == want_size && st == MPI_CART && snd == sub_nd, "Cart_sub mask %d: size %d topo %d ndims %d",
             mask, size, st, snd);
    MPI_Cart_get(sub, 3, sdims, speriods, scoords);
    int mine[3];
    for (int j = 0; j < sub_nd; j++) {
        MT_CHECK(sdims[j] == dims[ex[j]] && speriods[j] == periods[ex[j]] && scoords[j] == me[ex[j]],
                 "Cart_sub mask %d dim %d: %d %d %d", mask, j, sdims[j], speriods[j], scoords[j]);
        mine[j] = me[ex[j]];
    }
    MT_CHECK(rank == rank_of(sub_nd, sdims, mine), "Cart_sub mask %d: rank %d", mask, rank);
    /* every member lies in my slice: same coordinates in the dropped dimensions */
    MPI_Group gs, gc;
    MPI_Comm_group(sub, &gs);
    MPI_Comm_group(cart, &gc);
    for (int r = 0; r < size; r++) {
        int rc, c[3], sc[3];
        MPI_Group_translate_ranks(gs, 1, &r, gc, &rc);
        MPI_Cart_coords(cart, rc, nd, c);
        MPI_Cart_coords(sub, r, 3, sc);
        for (int i = 0, j = 0; i < nd; i++) {
            if (remain[i])
                MT_CHECK(c[i] == sc[j++], "Cart_sub mask %d: member %d coordinate %d", mask, r, i);
            else
                MT_CHECK(c[i] == me[i], "Cart_sub mask %d: member %d outside my slice", mask, r);
        }
    }
    MPI_Group_free(&gs);
    MPI_Group_free(&gc);
    MPI_Comm_free(&sub);
}

static void check_grid(int nd, const int *periods)
{
    int dims[3] = {0, 0, 0}, gd[3], gp[3], me[3], st, k;
    MPI_Comm cart, dup;
    MPI_Dims_create(mt_size, nd, dims);
    int err = MPI_Cart_create(MPI_COMM_WORLD, nd, dims, periods, 0, &cart);
    MT_CHECK(err == MPI_SUCCESS && cart != MPI_COMM_NULL, "Cart_create %d-D: %s", nd, mt_errstr(err));
    if (err != MPI_SUCCESS)
        return;
    int rank, size;
    MPI_Comm_rank(cart, &rank);
    MPI_Comm_size(cart, &size);
    MT_CHECK(rank == mt_rank && size == mt_size, "Cart_create: rank %d size %d", rank, size);
    MPI_Topo_test(cart, &st);
    MPI_Cartdim_get(cart, &k);
    MT_CHECK(st == MPI_CART && k == nd, "topo %d ndims %d", st, k);
    MPI_Cart_get(cart, nd, gd, gp, me);
    for (int i = 0; i < nd; i++)
        MT_CHECK(gd[i] == dims[i] && gp[i] == (periods[i] != 0), "Cart_get dim %d: %d %d", i, gd[i], gp[i]);
    MT_CHECK(rank_of(nd, dims, me) == rank, "my coords are not row-major");

    /* round trips, and periodic wrap-around */
    for (int r = 0; r < size; r++) {
        int c[3], back, w[3];
        MPI_Cart_coords(cart, r, nd, c);
        MPI_Cart_rank(cart, c, &back);
        MT_CHECK(back == r, "%d-D: rank %d -> coords -> %d", nd, r, back);
        for (int i = 0; i < nd; i++)
            w[i] = periods[i] ? c[i] - 2 * dims[i] + (i == 0 ? 5 * dims[i] : 0) : c[i];
        MPI_Cart_rank(cart, w, &back);
        MT_CHECK(back == r, "%d-D: wrapped coords of %d -> %d", nd, r, back);
    }

    /* shifts: expected neighbours, then data moved along them */
    for (int dir = 0; dir < nd; dir++) {
        for (int disp = -2; disp <= 2; disp++) {
            int src, dst, got = -7;
            MPI_Cart_shift(cart, dir, disp, &src, &dst);
            int c[3];
            for (int s = 0; s < 2; s++) {
                memcpy(c, me, sizeof(c));
                c[dir] += s ? disp : -disp;
                int want;
                if (c[dir] < 0 || c[dir] >= dims[dir]) {
                    if (periods[dir]) {
                        c[dir] = ((c[dir] % dims[dir]) + dims[dir]) % dims[dir];
                        want = rank_of(nd, dims, c);
                    } else {
                        want = MPI_PROC_NULL;
                    }
                } else {
                    want = rank_of(nd, dims, c);
                }
                MT_CHECK((s ? dst : src) == want, "%d-D dir %d disp %d: %s %d, want %d", nd, dir, disp,
                         s ? "dest" : "source", s ? dst : src, want);
            }
            MPI_Sendrecv(&rank, 1, MPI_INT, dst, 5, &got, 1, MPI_INT, src, 5, cart, MPI_STATUS_IGNORE);
            MT_CHECK(got == (src == MPI_PROC_NULL ? -7 : src), "shift data: got %d from %d", got, src);
        }
    }

    for (int mask = 0; mask < (1 << nd); mask++)
        check_sub(cart, nd, dims, periods, me, mask);

    /* a duplicate keeps the topology */
    MPI_Comm_dup(cart, &dup);
    MPI_Topo_test(dup, &st);
    MPI_Cart_get(dup, nd, gd, gp, me);
    MT_CHECK(st == MPI_CART && rank_of(nd, gd, me) == rank, "Comm_dup lost the topology: %d", st);
    MPI_Comm_free(&dup);

    /* errors on a Cartesian communicator */
    int x;
    check_err(MPI_Cart_shift(cart, nd, 1, &x, &x), MPI_ERR_ARG, MPI_ERR_DIMS, "direction", "Cart_shift bad direction");
    check_err(MPI_Cart_coords(cart, size, nd, me), MPI_ERR_RANK, MPI_ERR_RANK, "rank", "Cart_coords bad rank");
    if (!periods[0] && nd > 0) {
        int c[3] = {dims[0], 0, 0};
        check_err(MPI_Cart_rank(cart, c, &x), MPI_ERR_ARG, MPI_ERR_ARG, "coords[0]", "Cart_rank outside");
    }
    check_err(MPI_Graphdims_get(cart, &x, &x), MPI_ERR_TOPOLOGY, MPI_ERR_TOPOLOGY, "Cartesian graph",
              "Graphdims_get on a grid");
    MPI_Comm_free(&cart);
}

int main(int argc, char **argv)
{
    char lib[MPI_MAX_LIBRARY_VERSION_STRING];
    int len, st, x, nr;
    mt_init(&argc, &argv);
    MPI_Get_library_version(lib, &len);
    is_umpi = strstr(lib, "umpi") != NULL;
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);

    dims_table();

    static const int per[8][3] = {{0, 0, 0}, {1, 0, 0}, {0, 1, 0}, {1, 1, 0},
                                  {0, 0, 1}, {1, 0, 1}, {0, 1, 1}, {1, 1, 1}};
    for (int nd = 1; nd <= 3; nd++)
        for (int p = 0; p < (1 << nd); p++)
            check_grid(nd, per[p]);

    /* a grid smaller than the communicator: the last rank is left out */
    MPI_Comm cart;
    int d = mt_size > 1 ? mt_size - 1 : 1, p1 = 1;
    MPI_Cart_create(MPI_COMM_WORLD, 1, &d, &p1, 1, &cart);
    MT_CHECK((cart == MPI_COMM_NULL) == (mt_rank >= d), "smaller grid: comm %x at rank %d", (unsigned) cart, mt_rank);
    MPI_Cart_map(MPI_COMM_WORLD, 1, &d, &p1, &nr);
    MT_CHECK(nr == (mt_rank < d ? mt_rank : MPI_UNDEFINED), "Cart_map: %d", nr);
    if (cart != MPI_COMM_NULL)
        MPI_Comm_free(&cart);

    /* zero dimensions: one process */
    MPI_Cart_create(MPI_COMM_WORLD, 0, NULL, NULL, 0, &cart);
    MT_CHECK((cart == MPI_COMM_NULL) == (mt_rank > 0), "0-D grid: comm %x at rank %d", (unsigned) cart, mt_rank);
    if (cart != MPI_COMM_NULL) {
        int sz;
        MPI_Comm_size(cart, &sz);
        MPI_Cartdim_get(cart, &x);
        MPI_Topo_test(cart, &st);
        MT_CHECK(sz == 1 && x == 0 && st == MPI_CART, "0-D grid: size %d ndims %d topo %d", sz, x, st);
        MPI_Comm_free(&cart);
    }

    /* errors */
    MPI_Topo_test(MPI_COMM_WORLD, &st);
    MT_CHECK(st == MPI_UNDEFINED, "Topo_test(world) = %d", st);
    check_err(MPI_Cartdim_get(MPI_COMM_WORLD, &x), MPI_ERR_TOPOLOGY, MPI_ERR_TOPOLOGY, "Cartesian",
              "Cartdim_get(world)");
    check_err(MPI_Cart_shift(MPI_COMM_WORLD, 0, 1, &x, &x), MPI_ERR_TOPOLOGY, MPI_ERR_TOPOLOGY, "topology",
              "Cart_shift(world)");
    int big = mt_size + 1, neg = -1;
    check_err(MPI_Cart_create(MPI_COMM_WORLD, 1, &big, &p1, 0, &cart), MPI_ERR_DIMS, MPI_ERR_ARG, "grid dims",
              "Cart_create too big");
    if (is_umpi) /* MPICH 4.0 does not check the extents */
        check_err(MPI_Cart_create(MPI_COMM_WORLD, 1, &neg, &p1, 0, &cart), MPI_ERR_DIMS, MPI_ERR_ARG, "dims[0]",
                  "Cart_create extent -1");
    check_err(MPI_Cart_map(MPI_COMM_WORLD, 1, &big, &p1, &nr), MPI_ERR_DIMS, MPI_ERR_ARG, "grid dims",
              "Cart_map too big");
    return mt_finish();
}
