/*
 * MPI_Comm_create_from_group and MPI_Intercomm_create_from_groups with groups from the World
 * model: the whole world, a reordered subset (called by its members only), two disjoint subsets
 * at once with different stringtags, two calls in a row with the same stringtag, the error
 * handler and info hints of the result, threads creating from overlapping groups at once with
 * different stringtags, an intercommunicator of evens and odds with point-to-point across, and
 * the argument errors.
 */
#include "mtest.h"

#include <pthread.h>
#include <string.h>

/* Each member sends its world rank to the next member (by rank in c) and checks what the previous
 * one sent; world[] gives the expected world rank of each rank of c. */
static void ring(MPI_Comm c, const int *world, int n, const char *what)
{
    int r, size, v = -1;
    MPI_Comm_rank(c, &r);
    MPI_Comm_size(c, &size);
    MT_CHECK(size == n && world[r] == mt_rank, "%s: rank %d of %d (want world %d at rank %d, size %d)", what, r,
             size, world[r], r, n);
    MPI_Sendrecv(&mt_rank, 1, MPI_INT, (r + 1) % size, 3, &v, 1, MPI_INT, (r + size - 1) % size, 3, c,
                 MPI_STATUS_IGNORE);
    MT_CHECK(v == world[(r + size - 1) % size], "%s: got %d from rank %d", what, v, (r + size - 1) % size);
}

#define NTHREADS 3
static MPI_Group thr_group;
static int thr_world[64];

/* One of NTHREADS threads: communicators over the whole world under its own stringtag, while the
 * others do the same (the groups overlap completely). */
static void *thr_main(void *arg)
{
    char tag[32];
    snprintf(tag, sizeof(tag), "org.umpi.test.thread%ld", (long) arg);
    for (int it = 0; it < 4; it++) {
        MPI_Comm c;
        int rc = MPI_Comm_create_from_group(thr_group, tag, MPI_INFO_NULL, MPI_ERRORS_RETURN, &c);
        MT_CHECK(rc == MPI_SUCCESS, "thread %ld: %s", (long) arg, mt_errstr(rc));
        if (rc != MPI_SUCCESS)
            break;
        ring(c, thr_world, mt_size, tag);
        MPI_Comm_free(&c);
    }
    return NULL;
}

static MPI_Group world_incl(MPI_Group wg, int n, const int *ranks)
{
    MPI_Group g;
    MPI_Group_incl(wg, n, ranks, &g);
    return g;
}

int main(int argc, char **argv)
{
    MPI_Comm c, c2;
    MPI_Group wg, g;
    int rc, all[64], evens[64], odds[64], ne = 0, no = 0;

    int provided;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    mt_setup();
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
    MPI_Comm_group(MPI_COMM_WORLD, &wg);
    for (int i = 0; i < mt_size; i++) {
        all[i] = i;
        if (i % 2 == 0)
            evens[ne++] = i;
        else
            odds[no++] = i;
    }

    /* the whole world, with an error handler and a hint */
    MPI_Info info;
    MPI_Info_create(&info);
    MPI_Info_set(info, "mpi_assert_no_any_tag", "true");
    rc = MPI_Comm_create_from_group(wg, "org.umpi.test.world", info, MPI_ERRORS_RETURN, &c);
    MT_CHECK(rc == MPI_SUCCESS, "world: %s", mt_errstr(rc));
    MPI_Info_free(&info);
    ring(c, all, mt_size, "world");
    MPI_Errhandler eh;
    MPI_Comm_get_errhandler(c, &eh);
    MT_CHECK(eh == MPI_ERRORS_RETURN, "errhandler 0x%x, want MPI_ERRORS_RETURN", (unsigned) eh);
    MPI_Errhandler_free(&eh);
    MPI_Info used;
    char v[MPI_MAX_INFO_VAL];
    int flag = 0;
    MPI_Comm_get_info(c, &used);
    MPI_Info_get(used, "mpi_assert_no_any_tag", MPI_MAX_INFO_VAL - 1, v, &flag);
    MT_CHECK(flag && strcmp(v, "true") == 0, "hint mpi_assert_no_any_tag: flag %d value %s", flag, flag ? v : "");
    MPI_Info_free(&used);
    MPI_Comm_free(&c);

    /* a subset, reversed: the even world ranks, called by them only */
    int rev[64];
    for (int i = 0; i < ne; i++)
        rev[i] = evens[ne - 1 - i];
    if (mt_rank % 2 == 0) {
        g = world_incl(wg, ne, rev);
        rc = MPI_Comm_create_from_group(g, "org.umpi.test.subset", MPI_INFO_NULL, MPI_ERRORS_ARE_FATAL, &c);
        MT_CHECK(rc == MPI_SUCCESS, "subset: %s", mt_errstr(rc));
        ring(c, rev, ne, "subset");
        MPI_Comm_free(&c);
        MPI_Group_free(&g);
    }

    /* evens and odds at the same time, different stringtags */
    int odd = mt_rank % 2;
    g = world_incl(wg, odd ? no : ne, odd ? odds : evens);
    rc = MPI_Comm_create_from_group(g, odd ? "odd" : "even", MPI_INFO_NULL, MPI_ERRORS_RETURN, &c);
    MT_CHECK(rc == MPI_SUCCESS, "evens/odds: %s", mt_errstr(rc));
    ring(c, odd ? odds : evens, odd ? no : ne, "evens/odds");
    MPI_Comm_free(&c);
    MPI_Group_free(&g);

    /* two in a row with one stringtag: distinct communicators (a message on the second is not
     * received on the first) */
    rc = MPI_Comm_create_from_group(wg, "again", MPI_INFO_NULL, MPI_ERRORS_RETURN, &c);
    MT_CHECK(rc == MPI_SUCCESS, "again 1: %s", mt_errstr(rc));
    rc = MPI_Comm_create_from_group(wg, "again", MPI_INFO_NULL, MPI_ERRORS_RETURN, &c2);
    MT_CHECK(rc == MPI_SUCCESS, "again 2: %s", mt_errstr(rc));
    int res;
    MPI_Comm_compare(c, c2, &res);
    MT_CHECK(res == MPI_CONGRUENT, "compare: %d, want MPI_CONGRUENT", res);
    int next = (mt_rank + 1) % mt_size, prev = (mt_rank + mt_size - 1) % mt_size, a = -1, b = -1, one = 1, two = 2;
    MPI_Request rq[2];
    MPI_Isend(&two, 1, MPI_INT, next, 0, c2, &rq[0]);
    MPI_Isend(&one, 1, MPI_INT, next, 0, c, &rq[1]);
    MPI_Recv(&a, 1, MPI_INT, prev, 0, c, MPI_STATUS_IGNORE);
    MPI_Recv(&b, 1, MPI_INT, prev, 0, c2, MPI_STATUS_IGNORE);
    MPI_Waitall(2, rq, MPI_STATUSES_IGNORE);
    MT_CHECK(a == 1 && b == 2, "same stringtag: got %d on the first, %d on the second", a, b);
    MPI_Comm_free(&c);
    MPI_Comm_free(&c2);

    /* threads at once, one stringtag each, all over the world group */
    if (provided == MPI_THREAD_MULTIPLE) {
        pthread_t th[NTHREADS];
        thr_group = wg;
        for (int i = 0; i < mt_size; i++)
            thr_world[i] = i;
        for (long t = 0; t < NTHREADS; t++)
            pthread_create(&th[t], NULL, thr_main, (void *) t);
        for (int t = 0; t < NTHREADS; t++)
            pthread_join(th[t], NULL);
    }

    /* intercommunicator: evens (leader world 0) and odds (leader world 1) */
    if (mt_size >= 2) {
        MPI_Group lg = world_incl(wg, odd ? no : ne, odd ? odds : evens);
        MPI_Group rg = world_incl(wg, odd ? ne : no, odd ? evens : odds);
        /* leaders: the last even process, and odd world rank 1 */
        rc = MPI_Intercomm_create_from_groups(lg, odd ? 0 : ne - 1, rg, odd ? ne - 1 : 0, "org.umpi.test.inter",
                                              MPI_INFO_NULL, MPI_ERRORS_RETURN, &c);
        MT_CHECK(rc == MPI_SUCCESS, "intercomm: %s", mt_errstr(rc));
        int inter = 0, r, n, rn;
        MPI_Comm_test_inter(c, &inter);
        MPI_Comm_rank(c, &r);
        MPI_Comm_size(c, &n);
        MPI_Comm_remote_size(c, &rn);
        MT_CHECK(inter && r == mt_rank / 2 && n == (odd ? no : ne) && rn == (odd ? ne : no),
                 "intercomm: inter %d rank %d size %d remote %d", inter, r, n, rn);
        const int *remote = odd ? evens : odds;
        MPI_Request sq[64];
        for (int j = 0; j < rn; j++)
            MPI_Isend(&mt_rank, 1, MPI_INT, j, 9, c, &sq[j]);
        for (int j = 0; j < rn; j++) {
            int x = -1;
            MPI_Recv(&x, 1, MPI_INT, j, 9, c, MPI_STATUS_IGNORE);
            MT_CHECK(x == remote[j], "intercomm: from remote %d got %d, want %d", j, x, remote[j]);
        }
        MPI_Waitall(rn, sq, MPI_STATUSES_IGNORE);
        MPI_Comm_get_errhandler(c, &eh);
        MT_CHECK(eh == MPI_ERRORS_RETURN, "intercomm errhandler 0x%x", (unsigned) eh);
        MPI_Errhandler_free(&eh);
        MPI_Comm_free(&c);
        MPI_Group_free(&lg);
        MPI_Group_free(&rg);
    }

    /* errors, each found before any communication (MPI_COMM_SELF's handler returns them) */
    MPI_Group notme;
    MPI_Group_excl(wg, 1, &mt_rank, &notme);
    /* MPI_GROUP_EMPTY: a local call giving MPI_COMM_NULL (MPI 4.1 sec. 7.4.2) */
    c = MPI_COMM_WORLD;
    rc = MPI_Comm_create_from_group(MPI_GROUP_EMPTY, "x", MPI_INFO_NULL, MPI_ERRORS_RETURN, &c);
    MT_CHECK(rc == MPI_SUCCESS && c == MPI_COMM_NULL, "MPI_GROUP_EMPTY: %s", mt_errstr(rc));
    rc = MPI_Comm_create_from_group(MPI_GROUP_NULL, "x", MPI_INFO_NULL, MPI_ERRORS_RETURN, &c);
    MT_CHECK(mt_class(rc) == MPI_ERR_GROUP, "MPI_GROUP_NULL: %s", mt_errstr(rc));
#ifdef UMPI_VERSION_STRING /* erroneous; umpi reports them, MPICH 4.0.2 crashes on some, or returns
                            * MPI_COMM_NULL to a caller outside a non-empty group */
    rc = MPI_Comm_create_from_group(notme, "x", MPI_INFO_NULL, MPI_ERRORS_RETURN, &c);
    MT_CHECK(mt_size == 1 ? rc == MPI_SUCCESS && c == MPI_COMM_NULL
                          : mt_class(rc) == MPI_ERR_GROUP && mt_msg_has(rc, "group calling") && c == MPI_COMM_NULL,
             "not in group: %s", mt_errstr(rc));
    rc = MPI_Intercomm_create_from_groups(notme, 0, wg, 0, "x", MPI_INFO_NULL, MPI_ERRORS_RETURN, &c);
    MT_CHECK(mt_class(rc) == MPI_ERR_GROUP && mt_msg_has(rc, "local_group calling"),
             "intercomm, not in local_group: %s", mt_errstr(rc));
    rc = MPI_Comm_create_from_group(wg, NULL, MPI_INFO_NULL, MPI_ERRORS_RETURN, &c);
    MT_CHECK(mt_class(rc) == MPI_ERR_ARG && mt_msg_has(rc, "MPI_Comm_create_from_group stringtag"),
             "NULL stringtag: %s", mt_errstr(rc));
    char longtag[MPI_MAX_STRINGTAG_LEN + 2];
    memset(longtag, 'a', sizeof(longtag) - 1);
    longtag[sizeof(longtag) - 1] = 0;
    rc = MPI_Comm_create_from_group(wg, longtag, MPI_INFO_NULL, MPI_ERRORS_RETURN, &c);
    MT_CHECK(mt_class(rc) == MPI_ERR_ARG && mt_msg_has(rc, "stringtag 257 MPI_MAX_STRINGTAG_LEN"),
             "long stringtag: %s", mt_errstr(rc));
    longtag[MPI_MAX_STRINGTAG_LEN] = 0; /* exactly the maximum: accepted */
    rc = MPI_Comm_create_from_group(wg, longtag, MPI_INFO_NULL, MPI_ERRORS_RETURN, &c);
    MT_CHECK(rc == MPI_SUCCESS, "stringtag of MPI_MAX_STRINGTAG_LEN: %s", mt_errstr(rc));
    if (rc == MPI_SUCCESS)
        MPI_Comm_free(&c);
    rc = MPI_Comm_create_from_group(wg, "x", MPI_INFO_NULL, MPI_ERRHANDLER_NULL, &c);
    MT_CHECK(mt_class(rc) == MPI_ERR_ARG && mt_msg_has(rc, "errhandler"), "MPI_ERRHANDLER_NULL: %s",
             mt_errstr(rc));
    rc = MPI_Intercomm_create_from_groups(wg, mt_size, wg, 0, "x", MPI_INFO_NULL, MPI_ERRORS_RETURN, &c);
    MT_CHECK(mt_class(rc) == MPI_ERR_RANK && mt_msg_has(rc, "local_leader"), "local_leader %d: %s", mt_size,
             mt_errstr(rc));
    /* "tag179" and "tag1881" hash alike in umpi: members that pass them meet, and see the mismatch */
    if (mt_size >= 2) {
        rc = MPI_Comm_create_from_group(wg, mt_rank == 1 ? "tag1881" : "tag179", MPI_INFO_NULL, MPI_ERRORS_RETURN,
                                        &c);
        MT_CHECK(mt_class(rc) == MPI_ERR_ARG && mt_msg_has(rc, "different stringtags") && c == MPI_COMM_NULL,
                 "stringtags that hash alike: %s", mt_errstr(rc));
        MPI_Group lg = world_incl(wg, odd ? no : ne, odd ? odds : evens);
        MPI_Group rg = world_incl(wg, odd ? ne : no, odd ? evens : odds);
        rc = MPI_Intercomm_create_from_groups(lg, 0, rg, 0, odd ? "tag1881" : "tag179", MPI_INFO_NULL,
                                              MPI_ERRORS_RETURN, &c);
        MT_CHECK(mt_class(rc) == MPI_ERR_ARG && mt_msg_has(rc, "disagree stringtag") && c == MPI_COMM_NULL,
                 "intercomm, stringtags that hash alike: %s", mt_errstr(rc));
        MPI_Group_free(&lg);
        MPI_Group_free(&rg);
    }
    /* remote_group overlapping local_group: the leader reports it, its group hears of the failure */
    rc = MPI_Intercomm_create_from_groups(wg, 0, wg, 0, "x", MPI_INFO_NULL, MPI_ERRORS_RETURN, &c);
    MT_CHECK(mt_rank == 0 ? mt_class(rc) == MPI_ERR_GROUP && mt_msg_has(rc, "disjoint")
                          : mt_class(rc) == MPI_ERR_OTHER && mt_msg_has(rc, "leader"),
             "overlapping groups: %s", mt_errstr(rc));
#endif
    MPI_Group_free(&notme);
    MPI_Group_free(&wg);
    return mt_finish();
}
