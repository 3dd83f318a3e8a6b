/*
 * Intercommunicators: MPI_Intercomm_create from the two halves of world (evens, odds), queries
 * (test_inter, size, remote_size, remote_group), point-to-point between the groups with
 * wildcards (a source is a remote rank), dup and compare, MPI_Intercomm_merge both ways, free
 * and disconnect. Needs at least 2 processes; with 1 it checks only the errors.
 */
#include "mtest.h"

int main(int argc, char **argv)
{
    MPI_Comm half, ic, ic2, merged;
    int r, n, res, flag;

    mt_init(&argc, &argv);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
    int rc;
#ifdef UMPI_VERSION_STRING /* erroneous, and umpi reports it; MPICH asserts */
    rc = MPI_Intercomm_merge(MPI_COMM_WORLD, 0, &merged);
    MT_CHECK(mt_class(rc) == MPI_ERR_COMM && mt_msg_has(rc, "MPI_Intercomm_merge intercomm"),
             "merge of an intracommunicator: %s", mt_errstr(rc));
#endif
    if (mt_size < 2)
        return mt_finish();

    int color = mt_rank % 2;
    MPI_Comm_split(MPI_COMM_WORLD, color, mt_rank, &half);
    int nlocal = (mt_size + 1 - color) / 2, nremote = mt_size - nlocal;
    /* leaders: world rank 0 for the evens, 1 for the odds */
    MPI_Intercomm_create(half, 0, MPI_COMM_WORLD, color ? 0 : 1, 77, &ic);
    MPI_Comm_test_inter(ic, &flag);
    MT_CHECK(flag, "not an intercommunicator");
    MPI_Comm_size(ic, &n);
    MT_CHECK(n == nlocal, "local size %d, want %d", n, nlocal);
    MPI_Comm_rank(ic, &r);
    MT_CHECK(r == mt_rank / 2, "rank %d", r);
    MPI_Comm_remote_size(ic, &n);
    MT_CHECK(n == nremote, "remote size %d, want %d", n, nremote);
    MPI_Group rg, wg;
    MPI_Comm_remote_group(ic, &rg);
    MPI_Comm_group(MPI_COMM_WORLD, &wg);
    for (int i = 0; i < nremote; i++) {
        int w;
        MPI_Group_translate_ranks(rg, 1, &i, wg, &w);
        MT_CHECK(w == 2 * i + 1 - color, "remote rank %d is world rank %d", i, w);
    }
    MPI_Group_free(&rg);
    MPI_Group_free(&wg);

    /* every local rank sends to remote rank (my rank mod remote size); receives with wildcards */
    int me = mt_rank / 2;
    int to = me % nremote;
    int expect = 0;
    for (int i = 0; i < nremote; i++)
        expect += i % nlocal == me;
    MPI_Request sq;
    MPI_Isend(&mt_rank, 1, MPI_INT, to, 100 + me, ic, &sq);
    for (int k = 0; k < expect; k++) {
        int v = -1;
        MPI_Status st;
        MPI_Recv(&v, 1, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, ic, &st);
        MT_CHECK(st.MPI_SOURCE >= 0 && st.MPI_SOURCE < nremote && v == 2 * st.MPI_SOURCE + 1 - color &&
                 st.MPI_TAG == 100 + st.MPI_SOURCE, "got %d from remote %d tag %d", v, st.MPI_SOURCE, st.MPI_TAG);
    }
    MPI_Wait(&sq, MPI_STATUS_IGNORE);
    rc = MPI_Send(&mt_rank, 1, MPI_INT, nremote, 0, ic);
    MT_CHECK(mt_class(rc) == MPI_ERR_RANK, "send beyond the remote group: class %d", mt_class(rc));
#ifdef UMPI_VERSION_STRING
    MT_CHECK(mt_class(rc) == MPI_ERR_RANK && mt_msg_has(rc, "dest remote"), "send beyond the remote group: %s",
             mt_errstr(rc));
#endif

    /* dup: congruent, its own context */
    MPI_Comm_dup(ic, &ic2);
    MPI_Comm_compare(ic, ic2, &res);
    MT_CHECK(res == MPI_CONGRUENT, "compare inter/dup: %d", res);
    MPI_Comm_test_inter(ic2, &flag);
    MT_CHECK(flag, "dup of an intercommunicator is not one");
    if (me == 0) { /* the leaders swap a message on the dup while one on ic is also in flight */
        int a = -1, b = -1, x = 1, y = 2;
        MPI_Request q[2];
        MPI_Irecv(&a, 1, MPI_INT, 0, 0, ic, &q[0]);
        MPI_Irecv(&b, 1, MPI_INT, 0, 0, ic2, &q[1]);
        MPI_Send(&y, 1, MPI_INT, 0, 0, ic2);
        MPI_Send(&x, 1, MPI_INT, 0, 0, ic);
        MPI_Wait(&q[0], MPI_STATUS_IGNORE);
        MPI_Wait(&q[1], MPI_STATUS_IGNORE);
        MT_CHECK(a == 1 && b == 2, "ic got %d, its dup got %d", a, b);
    }
    MPI_Comm_compare(ic, half, &res);
    MT_CHECK(res == MPI_UNEQUAL, "inter vs intra: %d", res);

    /* merge: odds high -> evens first (world order); evens high -> odds first */
    MPI_Intercomm_merge(ic, color, &merged);
    MPI_Comm_size(merged, &n);
    MT_CHECK(n == mt_size, "merged size %d", n);
    MPI_Comm_rank(merged, &r);
    MT_CHECK(r == (color ? nremote + me : me), "merged (odds high) rank %d", r);
    MPI_Comm_test_inter(merged, &flag);
    MT_CHECK(!flag, "merged is an intercommunicator");
    {
        int got = -1;
        MPI_Sendrecv(&r, 1, MPI_INT, (r + 1) % n, 0, &got, 1, MPI_INT, MPI_ANY_SOURCE, 0, merged, MPI_STATUS_IGNORE);
        MT_CHECK(got == (r + n - 1) % n, "ring on merged got %d", got);
    }
    MPI_Comm_free(&merged);
    MPI_Intercomm_merge(ic2, !color, &merged);
    MPI_Comm_rank(merged, &r);
    MT_CHECK(r == (color ? me : nlocal == 0 ? me : nremote + me), "merged (evens high) rank %d", r);
    MPI_Comm_free(&merged);
    /* same high everywhere: one group first, consistently */
    MPI_Intercomm_merge(ic, 1, &merged);
    MPI_Comm_size(merged, &n);
    MPI_Comm_rank(merged, &r);
    {
        int got = -1;
        MPI_Sendrecv(&r, 1, MPI_INT, (r + 1) % n, 0, &got, 1, MPI_INT, MPI_ANY_SOURCE, 0, merged, MPI_STATUS_IGNORE);
        MT_CHECK(got == (r + n - 1) % n, "ring on merged (same high) got %d", got);
    }
    MPI_Comm_free(&merged);

    /* intercomm of an intercomm-derived context: create again with the dup'ed halves, many times */
    for (int i = 0; i < 50; i++) {
        MPI_Comm t;
        MPI_Intercomm_create(half, 0, MPI_COMM_WORLD, color ? 0 : 1, i, &t);
        MPI_Comm_free(&t);
    }

    MPI_Comm_disconnect(&ic2);
    MT_CHECK(ic2 == MPI_COMM_NULL, "disconnect did not set MPI_COMM_NULL");
    MPI_Comm_free(&ic);
    MPI_Comm_free(&half);
    return mt_finish();
}
