/*
 * MPI_Comm_dup / MPI_Comm_free / MPI_Comm_compare / names: a duplicate has the same group and a
 * context of its own (messages on it never match receives on the parent), inherits the error
 * handler, not the name; 1000 dup/free cycles do not run out of context ids; a communicator freed
 * with a receive pending lives until it completes.
 */
#include "mtest.h"

int main(int argc, char **argv)
{
    MPI_Comm dup, dup2;
    int res, r, len, flag;
    char name[MPI_MAX_OBJECT_NAME];

    mt_init(&argc, &argv);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);

    MPI_Comm_dup(MPI_COMM_WORLD, &dup);
    MPI_Comm_rank(dup, &r);
    MT_CHECK(r == mt_rank, "rank in dup %d", r);
    MPI_Comm_size(dup, &r);
    MT_CHECK(r == mt_size, "size of dup %d", r);
    MPI_Comm_compare(dup, MPI_COMM_WORLD, &res);
    MT_CHECK(res == MPI_CONGRUENT, "compare dup/world: %d", res);
    MPI_Comm_compare(dup, dup, &res);
    MT_CHECK(res == MPI_IDENT, "compare dup/dup: %d", res);
    MPI_Comm_compare(MPI_COMM_SELF, MPI_COMM_WORLD, &res);
    MT_CHECK(res == (mt_size == 1 ? MPI_CONGRUENT : MPI_UNEQUAL), "compare self/world: %d", res);
    MPI_Comm_test_inter(dup, &flag);
    MT_CHECK(!flag, "dup of world is an intercommunicator");

    /* error handler inherited; name not */
    MPI_Errhandler eh;
    MPI_Comm_get_errhandler(dup, &eh);
    MT_CHECK(eh == MPI_ERRORS_RETURN, "dup did not inherit MPI_ERRORS_RETURN");
    MPI_Errhandler_free(&eh);
    MPI_Comm_get_name(dup, name, &len);
    MT_CHECK(len == 0 && name[0] == '\0', "dup has name '%s'", name);
    MPI_Comm_get_name(MPI_COMM_WORLD, name, &len);
    MT_CHECK(strcmp(name, "MPI_COMM_WORLD") == 0 && len == 14, "world is named '%s' (%d)", name, len);
    MPI_Comm_set_name(dup, "my duplicate");
    MPI_Comm_get_name(dup, name, &len);
    MT_CHECK(strcmp(name, "my duplicate") == 0 && len == 12, "dup is named '%s' (%d)", name, len);
    char longname[300];
    memset(longname, 'x', sizeof(longname) - 1);
    longname[sizeof(longname) - 1] = '\0';
    MPI_Comm_set_name(dup, longname);
    MPI_Comm_get_name(dup, name, &len);
    MT_CHECK(len == MPI_MAX_OBJECT_NAME - 1, "long name truncated to %d", len);

    /* separate contexts: a message on dup is not received on world, even with wildcards */
    if (mt_size > 1) {
        int peer = (mt_rank + 1) % mt_size, from = (mt_rank + mt_size - 1) % mt_size, a = mt_rank, b = -1;
        MPI_Request rq[2];
        MPI_Irecv(&b, 1, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &rq[0]);
        MPI_Send(&a, 1, MPI_INT, peer, 5, dup);
        int c = -1;
        MPI_Status st;
        MPI_Recv(&c, 1, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, dup, &st);
        MT_CHECK(c == from && st.MPI_SOURCE == from && st.MPI_TAG == 5, "dup recv %d from %d tag %d", c,
                 st.MPI_SOURCE, st.MPI_TAG);
        MPI_Send(&a, 1, MPI_INT, peer, 6, MPI_COMM_WORLD);
        MPI_Wait(&rq[0], &st);
        MT_CHECK(b == from && st.MPI_TAG == 6, "world recv %d tag %d", b, st.MPI_TAG);
    }

    /* dup of a dup; free while a receive is pending on it */
    MPI_Comm_dup(dup, &dup2);
    MPI_Comm_compare(dup, dup2, &res);
    MT_CHECK(res == MPI_CONGRUENT, "compare dup/dup2: %d", res);
    {
        int v = -1, me = 100 + mt_rank;
        MPI_Request rq;
        MPI_Irecv(&v, 1, MPI_INT, mt_rank, 1, dup2, &rq);
        MPI_Comm_free(&dup2);
        MT_CHECK(dup2 == MPI_COMM_NULL, "free did not set MPI_COMM_NULL");
        /* The pending receive keeps the freed communicator alive; a send on another
         * communicator does not match it, cancelling completes it and lets it go. */
        MPI_Request sq;
        MPI_Comm self_dup;
        MPI_Comm_dup(MPI_COMM_SELF, &self_dup);
        MPI_Isend(&me, 1, MPI_INT, 0, 1, self_dup, &sq);
        MPI_Test(&rq, &flag, MPI_STATUS_IGNORE);
        MT_CHECK(!flag, "receive on the freed communicator matched a send on another");
        MPI_Cancel(&rq);
        MPI_Wait(&rq, MPI_STATUS_IGNORE);
        int w;
        MPI_Recv(&w, 1, MPI_INT, 0, 1, self_dup, MPI_STATUS_IGNORE);
        MPI_Wait(&sq, MPI_STATUS_IGNORE);
        MT_CHECK(w == me, "self dup got %d", w);
        MPI_Comm_free(&self_dup);
    }

    /* many cycles must not exhaust context ids; a few live at once too */
    for (int i = 0; i < 1000; i++) {
        MPI_Comm c;
        int rc = MPI_Comm_dup(dup, &c);
        if (rc != MPI_SUCCESS) {
            MT_CHECK(0, "dup %d failed: %s", i, mt_errstr(rc));
            break;
        }
        MPI_Comm_free(&c);
    }
    MPI_Comm live[100];
    for (int i = 0; i < 100; i++)
        MPI_Comm_dup(i ? live[i - 1] : MPI_COMM_WORLD, &live[i]);
    if (mt_size > 1) { /* the last one still works */
        int a = mt_rank, b = -1;
        MPI_Sendrecv(&a, 1, MPI_INT, (mt_rank + 1) % mt_size, 0, &b, 1, MPI_INT, MPI_ANY_SOURCE, 0, live[99],
                     MPI_STATUS_IGNORE);
        MT_CHECK(b == (mt_rank + mt_size - 1) % mt_size, "sendrecv on the 100th dup got %d", b);
    }
    for (int i = 99; i >= 0; i--)
        MPI_Comm_free(&live[i]);

    /* errors */
    MPI_Comm c = MPI_COMM_WORLD;
    int rc = MPI_Comm_free(&c);
    MT_CHECK(mt_class(rc) == MPI_ERR_COMM && mt_msg_has(rc, "MPI_Comm_free comm"), "free of world: %s",
             mt_errstr(rc));
    c = MPI_COMM_NULL;
    rc = MPI_Comm_free(&c);
    MT_CHECK(mt_class(rc) == MPI_ERR_COMM, "free of MPI_COMM_NULL: class %d", mt_class(rc));
    rc = MPI_Comm_dup(MPI_COMM_NULL, &c);
    MT_CHECK(mt_class(rc) == MPI_ERR_COMM, "dup of MPI_COMM_NULL: class %d", mt_class(rc));
#ifdef UMPI_VERSION_STRING /* erroneous, and umpi reports it; MPICH does not */
    rc = MPI_Comm_remote_size(dup, &r);
    MT_CHECK(mt_class(rc) == MPI_ERR_COMM, "remote_size of an intracommunicator: class %d", mt_class(rc));
#endif

    MPI_Comm_disconnect(&dup);
    MT_CHECK(dup == MPI_COMM_NULL, "disconnect did not set MPI_COMM_NULL");
    return mt_finish();
}
