/*
 * What every MPI test program shares: counting failed checks and the final verdict.
 *
 * A program checks everything it can, reports each failure on stderr with its rank and line, and
 * mt_finish() sums the failures on rank 0, which prints " No Errors" when there are none (the
 * harness, test/runtests, looks for that line). Only point-to-point and environment functions are
 * used here, so that the tests run on an MPI that has no collectives yet. Standard C API only: the
 * programs are validated against MPICH and Open MPI too.
 */
#ifndef MTEST_H
#define MTEST_H

#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

/* Tags at or above this are the helpers' own; tests use smaller ones. */
#define MT_TAG_SYNC 32000

static int mt_rank, mt_size, mt_errs;

/* Counts a failed check and says where and why; the program goes on so one run shows every problem. */
#define MT_CHECK(cond, ...)                                                                  \
    do {                                                                                     \
        if (!(cond)) {                                                                       \
            mt_errs++;                                                                       \
            fprintf(stderr, "[%d] %s:%d: check `%s` failed: ", mt_rank, __FILE__, __LINE__, #cond); \
            fprintf(stderr, __VA_ARGS__);                                                    \
            fputc('\n', stderr);                                                             \
        }                                                                                    \
    } while (0)

/* Fills mt_rank/mt_size after MPI_Init or MPI_Init_thread. */
static inline void mt_setup(void)
{
    MPI_Comm_rank(MPI_COMM_WORLD, &mt_rank);
    MPI_Comm_size(MPI_COMM_WORLD, &mt_size);
}

static inline void mt_init(int *argc, char ***argv)
{
    MPI_Init(argc, argv);
    mt_setup();
}

static inline void mt_sleep_ms(int ms)
{
    struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000L };
    nanosleep(&ts, NULL);
}

/* A barrier made of point-to-point messages: everyone reports to rank 0, which releases them. */
static inline void mt_barrier(void)
{
    if (mt_rank == 0) {
        for (int i = 1; i < mt_size; i++)
            MPI_Recv(NULL, 0, MPI_BYTE, MPI_ANY_SOURCE, MT_TAG_SYNC, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        for (int i = 1; i < mt_size; i++)
            MPI_Send(NULL, 0, MPI_BYTE, i, MT_TAG_SYNC + 1, MPI_COMM_WORLD);
    } else {
        MPI_Send(NULL, 0, MPI_BYTE, 0, MT_TAG_SYNC, MPI_COMM_WORLD);
        MPI_Recv(NULL, 0, MPI_BYTE, 0, MT_TAG_SYNC + 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    }
}

/* Sums the failures on rank 0, prints the verdict there and finalizes. Returns the exit status. */
static inline int mt_finish(void)
{
    int total = mt_errs;
    if (mt_rank == 0) {
        for (int i = 1; i < mt_size; i++) {
            int e = 0;
            MPI_Recv(&e, 1, MPI_INT, i, MT_TAG_SYNC + 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            total += e;
        }
        if (total == 0)
            printf(" No Errors\n");
        else
            printf(" Found %d errors\n", total);
        fflush(stdout);
    } else {
        MPI_Send(&mt_errs, 1, MPI_INT, 0, MT_TAG_SYNC + 2, MPI_COMM_WORLD);
    }
    MPI_Finalize();
    return total == 0 ? 0 : 1;
}

/* The MPI error class of code, and whether MPI_Error_string(code) contains each of the given words
 * (case-insensitive; a word "a|b" accepts either). */
static inline int mt_class(int code)
{
    int cls = -1;
    MPI_Error_class(code, &cls);
    return cls;
}

static inline int mt_msg_has(int code, const char *words)
{
    char msg[MPI_MAX_ERROR_STRING], buf[256];
    int len = 0;
    MPI_Error_string(code, msg, &len);
    snprintf(buf, sizeof(buf), "%s", words);
    for (char *save = NULL, *w = strtok_r(buf, " ", &save); w; w = strtok_r(NULL, " ", &save)) {
        int found = 0;
        for (char *s2 = NULL, *alt = strtok_r(w, "|", &s2); alt; alt = strtok_r(NULL, "|", &s2))
            for (const char *p = msg; *p && !found; p++)
                found = strncasecmp(p, alt, strlen(alt)) == 0;
        if (!found)
            return 0;
    }
    return 1;
}

static inline const char *mt_errstr(int code)
{
    static char msg[MPI_MAX_ERROR_STRING];
    int len = 0;
    MPI_Error_string(code, msg, &len);
    return msg;
}

/* The status every completion of a null or inactive request returns (MPI 4.1, 3.7.3). */
static inline int mt_is_empty_status(const MPI_Status *st)
{
    int count = -1, cancelled = -1;
    MPI_Get_count(st, MPI_BYTE, &count);
    MPI_Test_cancelled(st, &cancelled);
    return st->MPI_SOURCE == MPI_ANY_SOURCE && st->MPI_TAG == MPI_ANY_TAG && count == 0 && !cancelled;
}

#endif
