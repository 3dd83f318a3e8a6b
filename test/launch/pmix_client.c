/*
 * Exercises src/pmi/pmi.c under a launcher without the rest of the library: every rank puts a
 * value, fences, reads every other rank's value and checks it. Prints "No Errors" from rank 0.
 *
 *   pmix_client [--abort RANK CODE]   with --abort, RANK calls umpi_pmi_abort(CODE) after the
 *                                     exchange, the others wait for the launcher to end them
 *
 * Built by hand against pmi.c with stand-ins for the few core functions it calls, e.g.
 *   gcc -I<stub mpi.h dir> -Isrc $(pkg-config --cflags --libs pmix) test/launch/pmix_client.c \
 *       src/pmi/pmi.c stub.c
 * (umpi_status_msg, umpi_status_last_msg, umpi_log, umpi_config).
 */
#include "pmi/umpi_pmi.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int check(umpi_status_t st, const char *what, int rank)
{
    if (st == UMPI_OK)
        return 0;
    fprintf(stderr, "rank %d: %s: %s (%s)\n", rank, what, umpi_status_string(st),
            umpi_status_last_msg());
    return 1;
}

int main(int argc, char **argv)
{
    struct umpi_pmi_info info;
    char key[64], value[64];
    int errs = 0, abort_rank = -1, abort_code = 0;

    if (argc == 4 && strcmp(argv[1], "--abort") == 0) {
        abort_rank = atoi(argv[2]);
        abort_code = atoi(argv[3]);
    }
    if (check(umpi_pmi_init(&info), "umpi_pmi_init", -1))
        return 1;

    snprintf(value, sizeof(value), "value of rank %d", info.rank);
    errs += check(umpi_pmi_put("umpi.test", value, strlen(value) + 1), "put", info.rank);
    errs += check(umpi_pmi_fence(), "fence", info.rank);
    for (int r = 0; r < info.size; r++) {
        void *got = NULL;
        size_t len = 0;

        snprintf(value, sizeof(value), "value of rank %d", r);
        if (check(umpi_pmi_get(r, "umpi.test", &got, &len), "get", info.rank)) {
            errs++;
            continue;
        }
        if (len != strlen(value) + 1 || memcmp(got, value, len) != 0) {
            fprintf(stderr, "rank %d: rank %d's value is '%.*s', expected '%s'\n", info.rank, r,
                    (int)len, (char *)got, value);
            errs++;
        }
        free(got);
        if (umpi_pmi_node_of(r) != 0) {
            fprintf(stderr, "rank %d: node of rank %d is %d\n", info.rank, r, umpi_pmi_node_of(r));
            errs++;
        }
    }
    snprintf(key, sizeof(key), "umpi.absent");
    {
        void *got = NULL;
        size_t len;

        umpi_status_t st = umpi_pmi_get(0, key, &got, &len);

        if (st != UMPI_ERR_NOT_FOUND) {
            fprintf(stderr, "rank %d: get of a key nobody put returned %s, not NOT_FOUND\n",
                    info.rank, umpi_status_string(st));
            errs++;
            free(got);
        }
    }
    printf("rank %d of %d: local %d of %d, node %d, appnum %d, universe %d%s\n", info.rank,
           info.size, info.local_rank, info.local_size, info.node_id, info.appnum,
           info.universe_size, info.singleton ? ", singleton" : "");
    fflush(stdout);

    if (info.rank == abort_rank)
        umpi_pmi_abort(abort_code, "pmix_client: abort requested");
    if (abort_rank >= 0) {
        /* The launcher is expected to end us: waiting past its grace period is a failure. */
        sleep(10);
        return 99;
    }

    errs += check(umpi_pmi_fence(), "second fence", info.rank);
    errs += check(umpi_pmi_finalize(), "finalize", info.rank);
    if (info.rank == 0 && errs == 0)
        printf("No Errors\n");
    return errs != 0;
}
