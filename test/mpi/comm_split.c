/*
 * MPI_Comm_split / MPI_Comm_split_type / MPI_Comm_create / MPI_Comm_create_group: membership and
 * order (by key, then parent rank), MPI_UNDEFINED giving MPI_COMM_NULL, point-to-point with
 * wildcards on the new communicators, and disjoint groups creating communicators at the same time
 * (split halves, then both halves dup and create_group).
 */
#include "mtest.h"

/* A ring exchange on comm with wildcards: each rank gets its left neighbour's rank in comm. */
static void ring(MPI_Comm comm, const char *what)
{
    int r, n, got = -1;
    MPI_Status st;
    MPI_Comm_rank(comm, &r);
    MPI_Comm_size(comm, &n);
    MPI_Request rq;
    MPI_Irecv(&got, 1, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, comm, &rq);
    MPI_Send(&r, 1, MPI_INT, (r + 1) % n, 40 + r, comm);
    MPI_Wait(&rq, &st);
    int left = (r + n - 1) % n;
    MT_CHECK(got == left && st.MPI_SOURCE == left && st.MPI_TAG == 40 + left, "%s: ring got %d from %d tag %d",
             what, got, st.MPI_SOURCE, st.MPI_TAG);
}

int main(int argc, char **argv)
{
    MPI_Comm half, rev, none, shared, d, cg;
    int r, n, res;

    mt_init(&argc, &argv);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);

    /* halves by parity; key reverses the order */
    MPI_Comm_split(MPI_COMM_WORLD, mt_rank % 2, -mt_rank, &half);
    int nhalf = (mt_size + 1 - mt_rank % 2) / 2;
    MPI_Comm_size(half, &n);
    MT_CHECK(n == nhalf, "half size %d, want %d", n, nhalf);
    MPI_Comm_rank(half, &r);
    MT_CHECK(r == nhalf - 1 - mt_rank / 2, "rank in half %d", r);
    ring(half, "half");

    /* same key everywhere: parent order */
    MPI_Comm_split(MPI_COMM_WORLD, 0, 7, &rev);
    MPI_Comm_compare(rev, MPI_COMM_WORLD, &res);
    MT_CHECK(res == MPI_CONGRUENT, "split with one color vs world: %d", res);
    MPI_Comm_free(&rev);

    /* everybody reversed */
    MPI_Comm_split(MPI_COMM_WORLD, 3, mt_size - mt_rank, &rev);
    MPI_Comm_rank(rev, &r);
    MT_CHECK(r == mt_size - 1 - mt_rank, "reversed rank %d", r);
    MPI_Comm_compare(rev, MPI_COMM_WORLD, &res);
    MT_CHECK(res == (mt_size == 1 ? MPI_CONGRUENT : MPI_SIMILAR), "reversed vs world: %d", res);
    ring(rev, "reversed");
    MPI_Comm_free(&rev);

    /* MPI_UNDEFINED */
    MPI_Comm_split(MPI_COMM_WORLD, mt_rank == 0 ? MPI_UNDEFINED : 1, 0, &none);
    MT_CHECK((mt_rank == 0) == (none == MPI_COMM_NULL), "MPI_UNDEFINED: comm %x", (unsigned) none);
    if (none != MPI_COMM_NULL) {
        MPI_Comm_size(none, &n);
        MT_CHECK(n == mt_size - 1, "size without rank 0: %d", n);
        ring(none, "without rank 0");
        MPI_Comm_free(&none);
    }

    /* shared memory: every test runs on one node */
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &shared);
    MPI_Comm_compare(shared, MPI_COMM_WORLD, &res);
    MT_CHECK(res == MPI_CONGRUENT, "shared vs world on one node: %d", res);
    MPI_Comm_free(&shared);
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_UNDEFINED, 0, MPI_INFO_NULL, &shared);
    MT_CHECK(shared == MPI_COMM_NULL, "split_type MPI_UNDEFINED gave a communicator");
#ifdef UMPI_VERSION_STRING /* erroneous, and umpi reports it (at every process); MPICH does not */
    int rc = MPI_Comm_split(MPI_COMM_WORLD, -5, 0, &none);
    MT_CHECK(mt_class(rc) == MPI_ERR_ARG && mt_msg_has(rc, "MPI_Comm_split color -5"), "negative color: %s",
             mt_errstr(rc));
#endif

    /* Comm_create: the odd ranks of world, built by everyone */
    MPI_Group wg, odd;
    MPI_Comm_group(MPI_COMM_WORLD, &wg);
    int ranges[1][3] = {{1, mt_size - 1, 2}};
    if (mt_size > 1)
        MPI_Group_range_incl(wg, 1, ranges, &odd);
    else
        odd = MPI_GROUP_EMPTY;
    MPI_Comm oc;
    MPI_Comm_create(MPI_COMM_WORLD, odd, &oc);
    MT_CHECK((mt_rank % 2 == 1) == (oc != MPI_COMM_NULL), "create: comm %x at rank %d", (unsigned) oc, mt_rank);
    if (oc != MPI_COMM_NULL) {
        MPI_Comm_rank(oc, &r);
        MT_CHECK(r == mt_rank / 2, "rank in odd comm %d", r);
        MPI_Group og;
        MPI_Comm_group(oc, &og);
        MPI_Group_compare(og, odd, &res);
        MT_CHECK(res == MPI_IDENT, "group of the created comm: %d", res);
        MPI_Group_free(&og);
        ring(oc, "created");
        MPI_Comm_free(&oc);
    }

    /* Disjoint groups at the same time: each half dups itself and creates from its own group */
    MPI_Comm_dup(half, &d);
    ring(d, "dup of half");
    MPI_Group hg;
    MPI_Comm_group(half, &hg);
    MPI_Comm_create_group(MPI_COMM_WORLD, hg, 9, &cg);
    MPI_Comm_compare(cg, half, &res);
    MT_CHECK(res == MPI_CONGRUENT, "create_group of half vs half: %d", res);
    ring(cg, "create_group of half");
    /* and the two new communicators of each process are distinct contexts */
    if (nhalf > 1) {
        int r2, a = -1, b = -1;
        MPI_Comm_rank(d, &r2);
        MPI_Request q[2];
        MPI_Irecv(&a, 1, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, d, &q[0]);
        MPI_Irecv(&b, 1, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, cg, &q[1]);
        int one = 1, two = 2, to = (r2 + 1) % nhalf;
        MPI_Send(&two, 1, MPI_INT, to, 0, cg);
        MPI_Send(&one, 1, MPI_INT, to, 0, d);
        MPI_Wait(&q[0], MPI_STATUS_IGNORE);
        MPI_Wait(&q[1], MPI_STATUS_IGNORE);
        MT_CHECK(a == 1 && b == 2, "dup got %d, create_group got %d", a, b);
    }
    MPI_Group_free(&hg);
    /* a process outside the group gets MPI_COMM_NULL at once */
    MPI_Comm_create_group(MPI_COMM_WORLD, MPI_GROUP_EMPTY, 3, &none);
    MT_CHECK(none == MPI_COMM_NULL, "create_group of the empty group");

    MPI_Comm_free(&cg);
    MPI_Comm_free(&d);
    MPI_Comm_free(&half);
    if (odd != MPI_GROUP_EMPTY)
        MPI_Group_free(&odd);
    MPI_Group_free(&wg);
    return mt_finish();
}
