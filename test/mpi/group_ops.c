/*
 * Groups: size/rank, translate_ranks, compare, union/intersection/difference, incl/excl,
 * range_incl/range_excl, MPI_GROUP_EMPTY, free; bad arguments return MPI_ERR_GROUP / MPI_ERR_RANK.
 */
#include "mtest.h"

static void check_members(MPI_Group g, int n, const int *want_world, int line)
{
    MPI_Group wg;
    int size = -1, ranks[64], out[64];
    MPI_Comm_group(MPI_COMM_WORLD, &wg);
    MPI_Group_size(g, &size);
    MT_CHECK(size == n, "line %d: group size %d, want %d", line, size, n);
    for (int i = 0; i < n && i < 64; i++)
        ranks[i] = i;
    if (size == n && n > 0) {
        MPI_Group_translate_ranks(g, n, ranks, wg, out);
        for (int i = 0; i < n; i++)
            MT_CHECK(out[i] == want_world[i], "line %d: member %d is world rank %d, want %d", line, i, out[i],
                     want_world[i]);
    }
    MPI_Group_free(&wg);
}
#define CHECK_MEMBERS(g, n, w) check_members(g, n, w, __LINE__)

int main(int argc, char **argv)
{
    MPI_Group world, self, g, h, u;
    int n, r, res, w[64];

    mt_init(&argc, &argv);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
    n = mt_size;

    MPI_Comm_group(MPI_COMM_WORLD, &world);
    MPI_Group_size(world, &r);
    MT_CHECK(r == n, "world group size %d", r);
    MPI_Group_rank(world, &r);
    MT_CHECK(r == mt_rank, "world group rank %d", r);
    MPI_Comm_group(MPI_COMM_SELF, &self);
    MPI_Group_size(self, &r);
    MT_CHECK(r == 1, "self group size %d", r);
    MPI_Group_rank(self, &r);
    MT_CHECK(r == 0, "self group rank %d", r);

    /* empty group */
    MPI_Group_size(MPI_GROUP_EMPTY, &r);
    MT_CHECK(r == 0, "MPI_GROUP_EMPTY size %d", r);
    MPI_Group_rank(MPI_GROUP_EMPTY, &r);
    MT_CHECK(r == MPI_UNDEFINED, "MPI_GROUP_EMPTY rank %d", r);

    /* reverse order with incl */
    int rev[64];
    for (int i = 0; i < n; i++)
        rev[i] = n - 1 - i;
    MPI_Group_incl(world, n, rev, &g);
    CHECK_MEMBERS(g, n, rev);
    MPI_Group_rank(g, &r);
    MT_CHECK(r == n - 1 - mt_rank, "rank in reversed group %d", r);
    MPI_Group_compare(world, g, &res);
    MT_CHECK(res == (n == 1 ? MPI_IDENT : MPI_SIMILAR), "compare reversed: %d", res);
    MPI_Group_compare(world, world, &res);
    MT_CHECK(res == MPI_IDENT, "compare same: %d", res);

    /* translate ranks with MPI_PROC_NULL and a rank outside the other group */
    int in[2] = {MPI_PROC_NULL, 0}, out[2];
    MPI_Group_translate_ranks(world, 2, in, self, out);
    MT_CHECK(out[0] == MPI_PROC_NULL, "translate PROC_NULL -> %d", out[0]);
    MT_CHECK(out[1] == (mt_rank == 0 ? 0 : MPI_UNDEFINED), "translate 0 into self -> %d", out[1]);

    /* excl of even ranks; range_incl of odd ranks: same group */
    int evens[64], ne = 0, odds[64], no = 0;
    for (int i = 0; i < n; i++) {
        if (i % 2 == 0)
            evens[ne++] = i;
        else
            odds[no++] = i;
    }
    MPI_Group_excl(world, ne, evens, &h);
    CHECK_MEMBERS(h, no, odds);
    if (no > 0) {
        int ranges[1][3] = {{1, n - 1, 2}};
        MPI_Group_range_incl(world, 1, ranges, &u);
        MPI_Group_compare(h, u, &res);
        MT_CHECK(res == MPI_IDENT, "excl evens vs range_incl odds: %d", res);
        MPI_Group_free(&u);
        /* descending range, then range_excl of the odds gives the evens */
        int down[1][3] = {{odds[no - 1], 1, -2}};
        int odds_down[64];
        for (int i = 0; i < no; i++)
            odds_down[i] = odds[no - 1 - i];
        MPI_Group_range_incl(world, 1, down, &u);
        CHECK_MEMBERS(u, no, odds_down);
        MPI_Group_free(&u);
        MPI_Group_range_excl(world, 1, ranges, &u);
        CHECK_MEMBERS(u, ne, evens);
        MPI_Group_free(&u);
    }

    /* set operations: evens U odds = world order for evens then odds */
    MPI_Group ev;
    MPI_Group_incl(world, ne, evens, &ev);
    MPI_Group_union(ev, h, &u);
    int evod[64];
    for (int i = 0; i < ne; i++)
        evod[i] = evens[i];
    for (int i = 0; i < no; i++)
        evod[ne + i] = odds[i];
    CHECK_MEMBERS(u, n, evod);
    MPI_Group_compare(u, world, &res);
    MT_CHECK(res == (n <= 2 ? MPI_IDENT : MPI_SIMILAR), "union vs world: %d", res);
    MPI_Group_free(&u);
    MPI_Group_union(world, ev, &u); /* world already contains ev: world order */
    MPI_Group_compare(u, world, &res);
    MT_CHECK(res == MPI_IDENT, "world U evens vs world: %d", res);
    MPI_Group_free(&u);
    MPI_Group_intersection(ev, h, &u);
    MT_CHECK(u == MPI_GROUP_EMPTY, "evens ^ odds is not MPI_GROUP_EMPTY");
    MPI_Group_free(&u);
    MT_CHECK(u == MPI_GROUP_NULL, "free did not set MPI_GROUP_NULL");
    MPI_Group_intersection(g, ev, &u); /* order of the first group: evens descending */
    int evdown[64];
    for (int i = 0; i < ne; i++)
        evdown[i] = evens[ne - 1 - i];
    CHECK_MEMBERS(u, ne, evdown);
    MPI_Group_free(&u);
    MPI_Group_difference(world, ev, &u);
    CHECK_MEMBERS(u, no, odds);
    MPI_Group_free(&u);
    MPI_Group_difference(world, world, &u);
    MT_CHECK(u == MPI_GROUP_EMPTY, "world - world is not empty");
    MPI_Group_free(&u);
    MPI_Group_incl(world, 0, NULL, &u);
    MPI_Group_size(u, &r);
    MT_CHECK(r == 0, "incl of nothing has size %d", r);
    MPI_Group_free(&u);

    /* errors */
    int bad[2] = {0, 0}, rc;
#ifdef UMPI_VERSION_STRING /* erroneous, and umpi reports it; MPICH does not */
    rc = MPI_Group_incl(world, 2, bad, &u);
    MT_CHECK(n < 2 || mt_class(rc) == MPI_ERR_RANK, "incl with a duplicate: class %d", mt_class(rc));
#endif
    bad[0] = n;
    rc = MPI_Group_incl(world, 1, bad, &u);
    MT_CHECK(mt_class(rc) == MPI_ERR_RANK && mt_msg_has(rc, "MPI_Group_incl ranks"), "incl out of range: %s",
             mt_errstr(rc));
    rc = MPI_Group_size(MPI_GROUP_NULL, &r);
    MT_CHECK(mt_class(rc) == MPI_ERR_GROUP && mt_msg_has(rc, "MPI_GROUP_NULL group"), "size of GROUP_NULL: %s",
             mt_errstr(rc));
    int zero[1][3] = {{0, 0, 0}};
    rc = MPI_Group_range_incl(world, 1, zero, &u);
    MT_CHECK(mt_class(rc) == MPI_ERR_ARG, "stride 0: class %d", mt_class(rc));
    rc = MPI_Group_translate_ranks(world, 1, bad, self, out);
    MT_CHECK(mt_class(rc) == MPI_ERR_RANK, "translate out of range: class %d", mt_class(rc));

    MPI_Group_free(&ev);
    MPI_Group_free(&h);
    MPI_Group_free(&g);
    MPI_Group_free(&self);
    MPI_Group_free(&world);
    MT_CHECK(world == MPI_GROUP_NULL, "freed group handle not MPI_GROUP_NULL");
    (void) w;
    return mt_finish();
}
