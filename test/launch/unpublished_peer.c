/*
 * A peer that cannot be reached because it never published an address: rank 1 is no MPI process
 * but a bare PMIx client that takes part in the job's fences and publishes nothing. Rank 0's sends
 * to it must fail at once (no wait for a key that will never come) with MPI_ERR_OTHER, not
 * MPI_ERR_ARG (the arguments are right), and a message naming the call, the peer's world rank,
 * the key and PMIx's reason; rank 0 prints "No Errors" when they do.
 *
 * Rank 1 takes part in the fences an umpi rank makes on one node: the address exchange in
 * MPI_Init and the one in MPI_Finalize, both collecting data, as src/pmi/pmix.c asks.
 *
 * Built by test/launch/pmix_gds.sh with mpicc and libpmix (pkg-config pmix).
 */
#include <mpi.h>
#include <pmix.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int stand_in(void)
{
    pmix_proc_t me;
    pmix_info_t info;
    bool collect = true;
    pmix_status_t rc = PMIx_Init(&me, NULL, 0);

    if (rc != PMIX_SUCCESS) {
        fprintf(stderr, "rank 1: PMIx_Init: %s\n", PMIx_Error_string(rc));
        return 1;
    }
    PMIX_INFO_CONSTRUCT(&info);
    PMIX_INFO_LOAD(&info, PMIX_COLLECT_DATA, &collect, PMIX_BOOL);
    for (int i = 0; i < 2 && rc == PMIX_SUCCESS; i++) {
        rc = PMIx_Commit();
        if (rc == PMIX_SUCCESS)
            rc = PMIx_Fence(NULL, 0, &info, 1);
    }
    PMIX_INFO_DESTRUCT(&info);
    if (rc != PMIX_SUCCESS)
        fprintf(stderr, "rank 1: fence: %s\n", PMIx_Error_string(rc));
    PMIx_Finalize(NULL, 0);
    return rc != PMIX_SUCCESS;
}

/* One failing call: its class and its message. */
static int check_error(const char *call, int err, double secs)
{
    static const char *const want[] = { "world rank 1", "'umpi.ucx.addr'", "NOT-FOUND" };
    char msg[MPI_MAX_ERROR_STRING];
    int cls = -1, len = 0, errs = 0;

    if (err == MPI_SUCCESS) {
        printf("%s to the rank without an address succeeded\n", call);
        return 1;
    }
    MPI_Error_class(err, &cls);
    MPI_Error_string(err, msg, &len);
    if (cls != MPI_ERR_OTHER) {
        printf("%s: error class %d, expected MPI_ERR_OTHER (%d): %s\n", call, cls, MPI_ERR_OTHER, msg);
        errs++;
    }
    if (strncmp(msg, call, strlen(call)) != 0) {
        printf("%s: the message does not start with the call: %s\n", call, msg);
        errs++;
    }
    for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
        if (strstr(msg, want[i]) == NULL) {
            printf("%s: the message lacks \"%s\": %s\n", call, want[i], msg);
            errs++;
        }
    }
    /* A server that waited for the key would take its default 2 s. */
    if (secs > 1.0) {
        printf("%s took %.2f s to fail\n", call, secs);
        errs++;
    }
    return errs;
}

int main(int argc, char **argv)
{
    const char *rank_env = getenv("PMIX_RANK");
    MPI_Request req;
    double t0;
    int errs = 0, x = 1, err;

    if (rank_env != NULL && strcmp(rank_env, "1") == 0)
        return stand_in();

    MPI_Init(&argc, &argv);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    t0 = MPI_Wtime();
    err = MPI_Send(&x, 1, MPI_INT, 1, 0, MPI_COMM_WORLD);
    errs += check_error("MPI_Send", err, MPI_Wtime() - t0);
    /* Asked again, the answer is the same (nothing was cached as reachable). */
    t0 = MPI_Wtime();
    err = MPI_Isend(&x, 1, MPI_INT, 1, 0, MPI_COMM_WORLD, &req);
    errs += check_error("MPI_Isend", err, MPI_Wtime() - t0);
    if (errs == 0)
        printf(" No Errors\n");
    fflush(stdout);
    MPI_Finalize();
    return errs != 0;
}
