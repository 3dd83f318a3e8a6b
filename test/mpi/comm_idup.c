/*
 * MPI_Comm_idup and MPI_Comm_idup_with_info: a duplicate that works once its request completes
 * (Wait, Test loop, Waitall in reverse order of several outstanding on one parent), point-to-point
 * traffic on the parent while idups are in flight, a blocking MPI_Comm_dup on another
 * communicator meanwhile, an intercommunicator parent, hints as MPI_Comm_dup_with_info gives
 * them, attributes copied by their callbacks (and a callback failing at one member), completion
 * by Testany/Waitany/Waitsome, context-id windows that do not meet, MPI_Request_free of an idup
 * in flight, and the argument errors (bad communicator, MPI_COMM_NULL, NULL newcomm).
 */
#include "mtest.h"

#define NOUT 6

static int copies;

static int fail_copy;

static int copy_maybe_fail(MPI_Comm comm, int keyval, void *extra, void *in, void *out, int *flag)
{
    (void) comm, (void) keyval, (void) extra;
    *(void **) out = in;
    *flag = 1;
    return fail_copy ? MPI_ERR_OTHER : MPI_SUCCESS;
}

static int copy_plus_one(MPI_Comm comm, int keyval, void *extra, void *in, void *out, int *flag)
{
    (void) comm, (void) keyval, (void) extra;
    copies++;
    *(void **) out = (void *) ((char *) in + 1);
    *flag = 1;
    return MPI_SUCCESS;
}

/* The new communicator is a working copy of parent: same size and rank, congruent, and a ring of
 * messages on it meets no message of parent's with the same tag. */
static void check_copy(MPI_Comm parent, MPI_Comm c, const char *what)
{
    int r, n, pr, pn, res = -1, inter = 0;
    MPI_Comm_test_inter(parent, &inter);
    MPI_Comm_rank(c, &r);
    MPI_Comm_size(c, &n);
    MPI_Comm_rank(parent, &pr);
    MPI_Comm_size(parent, &pn);
    MT_CHECK(r == pr && n == pn, "%s: rank/size %d/%d, parent %d/%d", what, r, n, pr, pn);
    MPI_Comm_compare(parent, c, &res);
    MT_CHECK(res == MPI_CONGRUENT, "%s: compare gives %d, want MPI_CONGRUENT", what, res);
    if (inter) {
        int rn = 0, prn = 0;
        MPI_Comm_remote_size(c, &rn);
        MPI_Comm_remote_size(parent, &prn);
        MT_CHECK(rn == prn, "%s: remote size %d, parent %d", what, rn, prn);
        n = rn < n ? rn : n; /* pairs (i, i) across the groups */
        if (r < n) {
            int x = 1000 + r, y = -1, z = -1;
            MPI_Request q;
            MPI_Irecv(&z, 1, MPI_INT, r, 5, parent, &q);
            MPI_Sendrecv(&x, 1, MPI_INT, r, 5, &y, 1, MPI_INT, r, 5, c, MPI_STATUS_IGNORE);
            MPI_Send(&r, 1, MPI_INT, r, 5, parent);
            MPI_Wait(&q, MPI_STATUS_IGNORE);
            MT_CHECK(y == 1000 + r && z == r, "%s: across got %d and %d on parent", what, y, z);
        }
        return;
    }
    int x = 1000 + r, y = -1, z = -1;
    MPI_Request q;
    MPI_Irecv(&z, 1, MPI_INT, (r + n - 1) % n, 5, parent, &q);
    MPI_Sendrecv(&x, 1, MPI_INT, (r + 1) % n, 5, &y, 1, MPI_INT, (r + n - 1) % n, 5, c, MPI_STATUS_IGNORE);
    MPI_Send(&r, 1, MPI_INT, (r + 1) % n, 5, parent);
    MPI_Wait(&q, MPI_STATUS_IGNORE);
    MT_CHECK(y == 1000 + (r + n - 1) % n, "%s: ring got %d", what, y);
    MT_CHECK(z == (r + n - 1) % n, "%s: parent's ring got %d", what, z);
}

static int get_hint(MPI_Comm c, const char *key, char *v)
{
    MPI_Info used;
    int flag = 0;
    MPI_Comm_get_info(c, &used);
    if (used != MPI_INFO_NULL) {
        MPI_Info_get(used, key, MPI_MAX_INFO_VAL, v, &flag);
        MPI_Info_free(&used);
    }
    return flag;
}

int main(int argc, char **argv)
{
    MPI_Comm a, out[NOUT];
    MPI_Request req, reqs[NOUT];
    MPI_Status st;
    mt_init(&argc, &argv);

    /* one idup, Wait, with an empty status */
    MPI_Comm_idup(MPI_COMM_WORLD, &a, &req);
    MT_CHECK(req != MPI_REQUEST_NULL, "MPI_Comm_idup returned MPI_REQUEST_NULL");
    MPI_Wait(&req, &st);
    MT_CHECK(req == MPI_REQUEST_NULL, "the request is not MPI_REQUEST_NULL after MPI_Wait");
    check_copy(MPI_COMM_WORLD, a, "idup of MPI_COMM_WORLD");

    /* idup of a duplicate, completed by a Test loop; on umpi, cancel has no effect on it (MPICH
     * 4.0.2 makes it a fatal error, which the standard also allows) */
    MPI_Comm b;
    int flag = 0;
    char lib[MPI_MAX_LIBRARY_VERSION_STRING];
    int len;
    MPI_Get_library_version(lib, &len);
    int is_umpi = strstr(lib, "umpi") != NULL;
    MPI_Comm_idup(a, &b, &req);
    if (is_umpi)
        MPI_Cancel(&req);
    while (!flag)
        MPI_Test(&req, &flag, &st);
    MT_CHECK(req == MPI_REQUEST_NULL, "the request is not MPI_REQUEST_NULL after MPI_Test");
    int cancelled = 1;
    MPI_Test_cancelled(&st, &cancelled);
    MT_CHECK(!cancelled, "an idup reported cancelled");
    check_copy(a, b, "idup of a duplicate");
    MPI_Comm_free(&b);

    /* several on one parent in flight, with point-to-point on the parent meanwhile and a blocking
     * dup of another communicator; Waitall over them in reverse order */
    int n = mt_size, r = mt_rank, x[4], y[4];
    MPI_Request p2p[2];
    for (int i = 0; i < NOUT; i++) {
        MPI_Comm_idup(a, &out[i], &reqs[NOUT - 1 - i]);
        if (i == 2) {
            MPI_Irecv(y, 4, MPI_INT, (r + n - 1) % n, 9, a, &p2p[0]);
            for (int k = 0; k < 4; k++)
                x[k] = r * 10 + k;
            MPI_Isend(x, 4, MPI_INT, (r + 1) % n, 9, a, &p2p[1]);
        }
    }
    MPI_Comm d;
    MPI_Comm_dup(MPI_COMM_WORLD, &d);
    MPI_Waitall(2, p2p, MPI_STATUSES_IGNORE);
    for (int k = 0; k < 4; k++)
        MT_CHECK(y[k] == ((r + n - 1) % n) * 10 + k, "p2p on the parent during idups: y[%d] = %d", k, y[k]);
    MPI_Status sts[NOUT];
    MPI_Waitall(NOUT, reqs, sts);
    for (int i = 0; i < NOUT; i++) {
        char what[64];
        snprintf(what, sizeof(what), "outstanding idup %d", i);
        MT_CHECK(reqs[i] == MPI_REQUEST_NULL, "%s: request not freed by Waitall", what);
        check_copy(a, out[i], what);
    }
    /* they are distinct from each other */
    for (int i = 0; i < NOUT; i++) {
        int v = i, w = -1;
        MPI_Sendrecv(&v, 1, MPI_INT, (r + 1) % n, 3, &w, 1, MPI_INT, (r + n - 1) % n, 3, out[i],
                     MPI_STATUS_IGNORE);
        MT_CHECK(w == i, "message on duplicate %d arrived as %d", i, w);
    }
    for (int i = 0; i < NOUT; i++)
        MPI_Comm_free(&out[i]);
    check_copy(MPI_COMM_WORLD, d, "blocking dup among idups");
    MPI_Comm_free(&d);

    /* Testany / Waitany / Waitsome complete idups too */
    MPI_Comm_idup(MPI_COMM_WORLD, &out[0], &reqs[0]);
    MPI_Comm_idup(MPI_COMM_WORLD, &out[1], &reqs[1]);
    int idx, left = 2;
    while (left > 0) {
        int fl = 0;
        MPI_Testany(2, reqs, &idx, &fl, MPI_STATUS_IGNORE);
        if (fl && idx != MPI_UNDEFINED)
            left--;
    }
    MPI_Comm_idup(out[0], &out[2], &reqs[0]);
    MPI_Waitany(1, reqs, &idx, MPI_STATUS_IGNORE);
    MT_CHECK(idx == 0, "Waitany index %d", idx);
    MPI_Comm_idup(out[1], &out[3], &reqs[0]);
    int outcount = 0, ind[1];
    while (outcount == 0)
        MPI_Waitsome(1, reqs, &outcount, ind, MPI_STATUSES_IGNORE);
    check_copy(out[0], out[2], "idup completed by Waitany");
    check_copy(out[1], out[3], "idup completed by Waitsome");
    for (int i = 0; i < 4; i++)
        MPI_Comm_free(&out[i]);

    /* attributes: the copy callback runs, the copy reaches the duplicate */
    int key, *val;
    MPI_Comm_create_keyval(copy_plus_one, MPI_COMM_NULL_DELETE_FN, &key, NULL);
    MPI_Comm_set_attr(a, key, (void *) (char *) 41);
    copies = 0;
    MPI_Comm_idup(a, &b, &req);
    MPI_Wait(&req, MPI_STATUS_IGNORE);
    MT_CHECK(copies == 1, "copy callback called %d times", copies);
    flag = 0;
    MPI_Comm_get_attr(b, key, &val, &flag);
    MT_CHECK(flag && (char *) val == (char *) 42, "attribute on the idup: flag %d value %p", flag, (void *) val);
    MPI_Comm_free(&b);
    MPI_Comm_delete_attr(a, key);
    MPI_Comm_free_keyval(&key);

    /* a copy callback failing at rank 0 only: its idup fails at the call, the others' complete
     * (umpi: the failing member still takes part in the agreement; MPICH 4.0.2 does not, and the
     * others hang, which the standard allows after an error) */
    int rc = MPI_SUCCESS;
    if (is_umpi) {
        MPI_Comm_create_keyval(copy_maybe_fail, MPI_COMM_NULL_DELETE_FN, &key, NULL);
        MPI_Comm_set_attr(a, key, (void *) (char *) 7);
        MPI_Comm_set_errhandler(a, MPI_ERRORS_RETURN);
        fail_copy = mt_rank == 0;
        b = MPI_COMM_WORLD;
        req = MPI_REQUEST_NULL;
        rc = MPI_Comm_idup(a, &b, &req);
        if (mt_rank == 0) {
            MT_CHECK(rc != MPI_SUCCESS, "idup with a failing copy callback succeeded");
            MT_CHECK(b == MPI_COMM_NULL && req == MPI_REQUEST_NULL, "failed idup left newcomm 0x%x request 0x%x",
                     (unsigned) b, (unsigned) req);
        } else {
            MT_CHECK(rc == MPI_SUCCESS, "idup failed: %s", mt_errstr(rc));
            MPI_Wait(&req, MPI_STATUS_IGNORE);
            MPI_Comm_free(&b);
        }
        fail_copy = 0;
        MPI_Comm_set_errhandler(a, MPI_ERRORS_ARE_FATAL);
        MPI_Comm_delete_attr(a, key);
        MPI_Comm_free_keyval(&key);
        mt_barrier();
    }

    /* hints: idup copies them, idup_with_info takes info's */
    char v[MPI_MAX_INFO_VAL + 1];
    MPI_Info info;
    MPI_Info_create(&info);
    MPI_Info_set(info, "mpi_assert_no_any_tag", "true");
    MPI_Comm_idup_with_info(MPI_COMM_WORLD, info, &b, &req);
    MPI_Info_free(&info);
    MPI_Wait(&req, MPI_STATUS_IGNORE);
    if (get_hint(b, "mpi_assert_no_any_tag", v))
        MT_CHECK(strcmp(v, "true") == 0, "no_any_tag on the idup_with_info communicator is %s", v);
    if (get_hint(b, "mpi_assert_exact_length", v))
        MT_CHECK(strcmp(v, "false") == 0, "exact_length (never set) is %s", v);
    check_copy(MPI_COMM_WORLD, b, "idup_with_info");
    MPI_Comm c;
    MPI_Comm_idup(b, &c, &req);
    MPI_Wait(&req, MPI_STATUS_IGNORE);
    if (is_umpi && get_hint(c, "mpi_assert_no_any_tag", v))
        MT_CHECK(strcmp(v, "true") == 0, "no_any_tag after MPI_Comm_idup is %s", v);
    MPI_Comm_free(&c);
    MPI_Comm_idup_with_info(b, MPI_INFO_NULL, &c, &req);
    MPI_Wait(&req, MPI_STATUS_IGNORE);
    if (get_hint(c, "mpi_assert_no_any_tag", v))
        MT_CHECK(strcmp(v, "false") == 0, "no_any_tag after idup_with_info(MPI_INFO_NULL) is %s", v);
    MPI_Comm_free(&c);
    MPI_Comm_free(&b);

    /* an intercommunicator parent: evens and odds */
    if (mt_size >= 2) {
        MPI_Comm half, ic, ic2[2];
        MPI_Request ir[2];
        int color = mt_rank % 2;
        MPI_Comm_split(MPI_COMM_WORLD, color, mt_rank, &half);
        MPI_Intercomm_create(half, 0, MPI_COMM_WORLD, color ? 0 : 1, 77, &ic);
        MPI_Comm_idup(ic, &ic2[0], &ir[1]);
        MPI_Comm_idup(ic, &ic2[1], &ir[0]);
        MPI_Waitall(2, ir, MPI_STATUSES_IGNORE);
        int inter = 0;
        MPI_Comm_test_inter(ic2[0], &inter);
        MT_CHECK(inter, "the idup of an intercommunicator is not one");
        check_copy(ic, ic2[0], "idup of an intercommunicator");
        check_copy(ic, ic2[1], "second idup of an intercommunicator");
        MPI_Comm_free(&ic2[0]);
        MPI_Comm_free(&ic2[1]);
        MPI_Comm_free(&ic);
        MPI_Comm_free(&half);
    }

    /* MPI_Request_free of an idup in flight (umpi): it completes in the background. Using the new
     * communicator needs its completion, which nothing reports after Request_free; a later
     * operation that cannot finish before it gives it: here the completion of a second idup of
     * the same parent started after it and waited for (umpi completes the agreements of one
     * parent in the order they started), then a sync of everyone. */
    MPI_Comm_idup(a, &b, &req);
    if (is_umpi) { /* MPICH 4.0.2 rejects Request_free of an idup (fatal) */
        MPI_Request_free(&req);
        MT_CHECK(req == MPI_REQUEST_NULL, "Request_free did not reset the request");
    } else {
        MPI_Wait(&req, MPI_STATUS_IGNORE);
    }
    mt_barrier();
    MPI_Comm_idup(a, &c, &req);
    MPI_Wait(&req, MPI_STATUS_IGNORE);
    mt_barrier();
    check_copy(a, b, "idup whose request was freed");
    check_copy(a, c, "idup after a freed one");
    MPI_Comm_free(&b);
    MPI_Comm_free(&c);

    /* windows that do not meet: rank 0 holds many more communicators than the others, so the
     * lowest context ids free there are taken elsewhere (umpi's agreement then needs more rounds);
     * two idups in flight, completed in reverse order */
    if (mt_size >= 2) {
        enum { NHELD = 70 };
        MPI_Comm held[NHELD], e[2];
        MPI_Request er[2];
        int nheld = mt_rank == 0 ? NHELD : 0;
        for (int i = 0; i < nheld; i++)
            MPI_Comm_dup(MPI_COMM_SELF, &held[i]);
        MPI_Comm_idup(a, &e[0], &er[1]);
        MPI_Comm_idup(a, &e[1], &er[0]);
        MPI_Wait(&er[0], MPI_STATUS_IGNORE);
        MPI_Wait(&er[1], MPI_STATUS_IGNORE);
        check_copy(a, e[0], "idup with disjoint windows");
        check_copy(a, e[1], "second idup with disjoint windows");
        MPI_Comm_free(&e[0]);
        MPI_Comm_free(&e[1]);
        for (int i = 0; i < nheld; i++)
            MPI_Comm_free(&held[i]);
    }

    /* errors */
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
    rc = MPI_Comm_idup(MPI_COMM_NULL, &b, &req);
    MT_CHECK(rc != MPI_SUCCESS && mt_class(rc) == MPI_ERR_COMM, "idup of MPI_COMM_NULL: class %d",
             rc == MPI_SUCCESS ? 0 : mt_class(rc));
    MT_CHECK(rc == MPI_SUCCESS || !is_umpi || mt_msg_has(rc, "MPI_Comm_idup comm"),
             "message does not name the call and argument: %s", mt_errstr(rc));
    rc = MPI_Comm_idup((MPI_Comm) 0x7777, &b, &req);
    MT_CHECK(rc != MPI_SUCCESS && mt_class(rc) == MPI_ERR_COMM, "idup of a bad handle: class %d",
             rc == MPI_SUCCESS ? 0 : mt_class(rc));
    rc = MPI_Comm_idup_with_info(MPI_COMM_NULL, MPI_INFO_NULL, &b, &req);
    MT_CHECK(rc != MPI_SUCCESS && mt_class(rc) == MPI_ERR_COMM, "idup_with_info of MPI_COMM_NULL: class %d",
             rc == MPI_SUCCESS ? 0 : mt_class(rc));
    if (is_umpi) { /* MPICH 4.0.2 does not check a NULL newcomm */
        rc = MPI_Comm_idup(MPI_COMM_WORLD, NULL, &req);
        MT_CHECK(rc != MPI_SUCCESS && mt_class(rc) == MPI_ERR_ARG, "idup with NULL newcomm: class %d",
                 rc == MPI_SUCCESS ? 0 : mt_class(rc));
        MT_CHECK(rc == MPI_SUCCESS || mt_msg_has(rc, "newcomm"), "message does not name newcomm: %s",
                 mt_errstr(rc));
        rc = MPI_Comm_idup(MPI_COMM_WORLD, &b, NULL);
        MT_CHECK(rc != MPI_SUCCESS && mt_class(rc) == MPI_ERR_ARG, "idup with NULL request: class %d",
                 rc == MPI_SUCCESS ? 0 : mt_class(rc));
    }
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);

    MPI_Comm_free(&a);
    return mt_finish();
}
