/*
 * MPI_Init_thread at the level named by argv[1] (single, funneled, serialized, multiple): the level
 * provided, MPI_Query_thread, MPI_Is_thread_main in the main thread and (where the level lets
 * another thread call MPI) in a second one, and a ring exchange at that level.
 */
#include "mtest.h"
#include <pthread.h>

static void *not_main(void *arg)
{
    int flag = -1;
    MPI_Is_thread_main(&flag);
    *(int *)arg = flag;
    return NULL;
}

int main(int argc, char **argv)
{
    static const char *names[] = { "single", "funneled", "serialized", "multiple" };
    static const int levels[] = { MPI_THREAD_SINGLE, MPI_THREAD_FUNNELED, MPI_THREAD_SERIALIZED,
                                  MPI_THREAD_MULTIPLE };
    int required = -1, provided = -1, flag = -1;

    for (int i = 0; i < 4; i++)
        if (argc > 1 && strcmp(argv[1], names[i]) == 0)
            required = levels[i];
    if (required < 0) {
        fprintf(stderr, "usage: %s single|funneled|serialized|multiple\n", argv[0]);
        return 2;
    }
    /* The levels are ordered (MPI 4.1, 11.6.2). */
    if (!(MPI_THREAD_SINGLE < MPI_THREAD_FUNNELED && MPI_THREAD_FUNNELED < MPI_THREAD_SERIALIZED &&
          MPI_THREAD_SERIALIZED < MPI_THREAD_MULTIPLE)) {
        fprintf(stderr, "thread levels are not ordered\n");
        return 1;
    }

    MPI_Init_thread(&argc, &argv, required, &provided);
    mt_setup();
    MT_CHECK(provided >= required && provided <= MPI_THREAD_MULTIPLE, "required %d provided %d", required,
             provided);
    MPI_Query_thread(&flag);
    MT_CHECK(flag == provided, "MPI_Query_thread %d, provided %d", flag, provided);
    MPI_Is_thread_main(&flag);
    MT_CHECK(flag == 1, "MPI_Is_thread_main in the main thread: %d", flag);

    if (provided >= MPI_THREAD_SERIALIZED) {
        pthread_t th;
        int other = -1;
        pthread_create(&th, NULL, not_main, &other);
        pthread_join(th, NULL);
        MT_CHECK(other == 0, "MPI_Is_thread_main in another thread: %d", other);
    }

    int right = (mt_rank + 1) % mt_size, left = (mt_rank + mt_size - 1) % mt_size;
    for (int i = 0; i < 10; i++) {
        int out = mt_rank * 100 + i, in = -1;
        MPI_Request req;
        MPI_Irecv(&in, 1, MPI_INT, left, i, MPI_COMM_WORLD, &req);
        MPI_Send(&out, 1, MPI_INT, right, i, MPI_COMM_WORLD);
        MPI_Wait(&req, MPI_STATUS_IGNORE);
        MT_CHECK(in == left * 100 + i, "ring step %d got %d", i, in);
    }
    return mt_finish();
}
