/*
 * MPI_ERRORS_RETURN: each kind of bad argument (rank, tag, count, datatype, communicator, NULL
 * buffer with count > 0, truncation, bad request) returns the right error class, and the
 * MPI_Error_string of the returned code names the call and the argument.
 */
#include "mtest.h"

/* rc must be of class cls and its message must contain every word of `words` ("a|b": either). */
static void expect(int rc, int cls, const char *words, const char *what, int line)
{
    if (rc == MPI_SUCCESS || mt_class(rc) != cls) {
        mt_errs++;
        fprintf(stderr, "[%d] errargs.c:%d: %s returned %d (class %d), want class %d\n", mt_rank, line, what,
                rc, rc == MPI_SUCCESS ? 0 : mt_class(rc), cls);
        return;
    }
    if (!mt_msg_has(rc, words)) {
        mt_errs++;
        fprintf(stderr, "[%d] errargs.c:%d: %s: message does not name `%s`: %s\n", mt_rank, line, what, words,
                mt_errstr(rc));
    }
}
#define EXPECT(call, cls, words) expect((call), (cls), (words), #call, __LINE__)

int main(int argc, char **argv)
{
    int buf[64] = { 0 }, rc;
    MPI_Request req = MPI_REQUEST_NULL;
    MPI_Status st;

    mt_init(&argc, &argv);
    /* Errors that belong to no communicator go to MPI_COMM_SELF's handler (MPI 4.1, 9.3). */
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
    int peer = mt_size > 1 ? mt_rank ^ 1 : 0;
    if (peer >= mt_size)
        peer = mt_rank;

    /* rank */
    EXPECT(MPI_Send(buf, 1, MPI_INT, mt_size, 0, MPI_COMM_WORLD), MPI_ERR_RANK, "MPI_Send dest|rank");
    EXPECT(MPI_Send(buf, 1, MPI_INT, -5, 0, MPI_COMM_WORLD), MPI_ERR_RANK, "MPI_Send dest|rank");
    EXPECT(MPI_Isend(buf, 1, MPI_INT, mt_size + 3, 0, MPI_COMM_WORLD, &req), MPI_ERR_RANK, "MPI_Isend dest|rank");
    EXPECT(MPI_Recv(buf, 1, MPI_INT, mt_size, 0, MPI_COMM_WORLD, &st), MPI_ERR_RANK, "MPI_Recv source|rank");
    EXPECT(MPI_Irecv(buf, 1, MPI_INT, -7, 0, MPI_COMM_WORLD, &req), MPI_ERR_RANK, "MPI_Irecv source|rank");
    EXPECT(MPI_Ssend(buf, 1, MPI_INT, mt_size, 0, MPI_COMM_WORLD), MPI_ERR_RANK, "MPI_Ssend dest|rank");
    EXPECT(MPI_Probe(mt_size, 0, MPI_COMM_WORLD, &st), MPI_ERR_RANK, "MPI_Probe source|rank");

    /* tag: negative on a send; on a receive, negative except MPI_ANY_TAG; above MPI_TAG_UB */
    int *tag_ub, flag;
    MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB, &tag_ub, &flag);
    EXPECT(MPI_Send(buf, 1, MPI_INT, peer, -1, MPI_COMM_WORLD), MPI_ERR_TAG, "MPI_Send tag");
    EXPECT(MPI_Send(buf, 1, MPI_INT, peer, MPI_ANY_TAG, MPI_COMM_WORLD), MPI_ERR_TAG, "MPI_Send tag");
    if (flag && *tag_ub < 0x7fffffff)
        EXPECT(MPI_Send(buf, 1, MPI_INT, peer, *tag_ub + 1, MPI_COMM_WORLD), MPI_ERR_TAG, "MPI_Send tag");
    EXPECT(MPI_Irecv(buf, 1, MPI_INT, peer, -3, MPI_COMM_WORLD, &req), MPI_ERR_TAG, "MPI_Irecv tag");
    EXPECT(MPI_Isend(buf, 1, MPI_INT, peer, -3, MPI_COMM_WORLD, &req), MPI_ERR_TAG, "MPI_Isend tag");

    /* count */
    EXPECT(MPI_Send(buf, -1, MPI_INT, peer, 0, MPI_COMM_WORLD), MPI_ERR_COUNT, "MPI_Send count");
    EXPECT(MPI_Irecv(buf, -2, MPI_INT, peer, 0, MPI_COMM_WORLD, &req), MPI_ERR_COUNT, "MPI_Irecv count");
    EXPECT(MPI_Recv(buf, -2, MPI_INT, peer, 0, MPI_COMM_WORLD, &st), MPI_ERR_COUNT, "MPI_Recv count");

    /* datatype */
    EXPECT(MPI_Send(buf, 1, MPI_DATATYPE_NULL, peer, 0, MPI_COMM_WORLD), MPI_ERR_TYPE, "MPI_Send datatype|type");
    EXPECT(MPI_Irecv(buf, 1, MPI_DATATYPE_NULL, peer, 0, MPI_COMM_WORLD, &req), MPI_ERR_TYPE,
           "MPI_Irecv datatype|type");

    /* communicator */
    EXPECT(MPI_Send(buf, 1, MPI_INT, 0, 0, MPI_COMM_NULL), MPI_ERR_COMM, "MPI_Send comm");
    EXPECT(MPI_Irecv(buf, 1, MPI_INT, 0, 0, MPI_COMM_NULL, &req), MPI_ERR_COMM, "MPI_Irecv comm");
    int rank;
    EXPECT(MPI_Comm_rank(MPI_COMM_NULL, &rank), MPI_ERR_COMM, "MPI_Comm_rank comm");

    /* buffer: NULL with count > 0 */
    EXPECT(MPI_Send(NULL, 4, MPI_INT, peer, 0, MPI_COMM_WORLD), MPI_ERR_BUFFER, "MPI_Send buf");
    EXPECT(MPI_Recv(NULL, 4, MPI_INT, peer, 0, MPI_COMM_WORLD, &st), MPI_ERR_BUFFER, "MPI_Recv buf");

    /* bad request */
    req = MPI_REQUEST_NULL;
    EXPECT(MPI_Request_free(&req), MPI_ERR_REQUEST, "MPI_Request_free request");
    req = MPI_REQUEST_NULL;
    EXPECT(MPI_Start(&req), MPI_ERR_REQUEST, "MPI_Start request");

    /* None of the failed calls above sent anything: the pairs now exchange one message each way, and
     * a receive into a buffer too small reports the truncation. */
    rc = MPI_Sendrecv(buf, 8, MPI_INT, peer, 5, buf + 8, 8, MPI_INT, peer, 5, MPI_COMM_WORLD, &st);
    MT_CHECK(rc == MPI_SUCCESS, "correct MPI_Sendrecv failed: %s", mt_errstr(rc));
    MPI_Request sreq;
    MPI_Isend(buf, 16, MPI_INT, peer, 6, MPI_COMM_WORLD, &sreq);
    st.MPI_ERROR = MPI_SUCCESS;
    EXPECT(MPI_Recv(buf + 32, 4, MPI_INT, peer, 6, MPI_COMM_WORLD, &st), MPI_ERR_TRUNCATE, "MPI_Recv trunc");
    MT_CHECK(st.MPI_SOURCE == peer && st.MPI_TAG == 6, "status of a truncated receive: source %d tag %d",
             st.MPI_SOURCE, st.MPI_TAG);
    MPI_Wait(&sreq, MPI_STATUS_IGNORE);

    /* The error handler of WORLD still returns: the job goes on. */
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_ARE_FATAL);
    return mt_finish();
}
