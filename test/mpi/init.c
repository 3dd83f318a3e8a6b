/*
 * The environment: Init/Finalize and the state queries around them, versions, processor name,
 * clocks, rank/size on WORLD and SELF, the predefined attributes of MPI_COMM_WORLD, Alloc_mem.
 */
#include "mtest.h"
#include <unistd.h>

static void check_attrs(void)
{
    int *val, flag;

    MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB, &val, &flag);
    MT_CHECK(flag && *val >= 32767, "MPI_TAG_UB flag %d value %d", flag, flag ? *val : 0);

    MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_HOST, &val, &flag);
    MT_CHECK(flag && (*val == MPI_PROC_NULL || (*val >= 0 && *val < mt_size)), "MPI_HOST flag %d value %d",
             flag, flag ? *val : 0);

    MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_IO, &val, &flag);
    MT_CHECK(flag && (*val == MPI_PROC_NULL || *val == MPI_ANY_SOURCE || (*val >= 0 && *val < mt_size)),
             "MPI_IO flag %d value %d", flag, flag ? *val : 0);

    MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_WTIME_IS_GLOBAL, &val, &flag);
    MT_CHECK(flag && (*val == 0 || *val == 1), "MPI_WTIME_IS_GLOBAL flag %d value %d", flag, flag ? *val : 0);

    /* Optional in the standard (MPICH 4.0.2 under hydra leaves MPI_UNIVERSE_SIZE unset), but umpi's
     * mpirun knows the job and sets both. */
    char lib[MPI_MAX_LIBRARY_VERSION_STRING] = "";
    int len, umpi;
    MPI_Get_library_version(lib, &len);
    umpi = strstr(lib, "umpi") != NULL;
    MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_UNIVERSE_SIZE, &val, &flag);
    MT_CHECK((flag || !umpi) && (!flag || *val >= mt_size), "MPI_UNIVERSE_SIZE flag %d value %d", flag, flag ? *val : 0);

    MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_APPNUM, &val, &flag);
    MT_CHECK((flag || !umpi) && (!flag || *val == 0), "MPI_APPNUM flag %d value %d", flag, flag ? *val : 0);
}

static void check_clock(void)
{
    double tick = MPI_Wtick();
    MT_CHECK(tick > 0 && tick <= 1e-3, "MPI_Wtick %g", tick);

    double prev = MPI_Wtime(), t0 = prev;
    for (int i = 0; i < 10000; i++) {
        double t = MPI_Wtime();
        if (t < prev) {
            MT_CHECK(t >= prev, "MPI_Wtime went back from %.9f to %.9f", prev, t);
            break;
        }
        prev = t;
    }
    mt_sleep_ms(20);
    double dt = MPI_Wtime() - t0;
    MT_CHECK(dt >= 0.019 && dt < 5, "20 ms of sleep measured as %g s", dt);
}

int main(int argc, char **argv)
{
    int flag = -1, version = 0, subversion = 0, len = -1, provided = -1;

    /* Allowed before MPI_Init. */
    MPI_Initialized(&flag);
    if (flag != 0) {
        fprintf(stderr, "MPI_Initialized before MPI_Init: %d\n", flag);
        return 1;
    }
    MPI_Finalized(&flag);
    if (flag != 0) {
        fprintf(stderr, "MPI_Finalized before MPI_Init: %d\n", flag);
        return 1;
    }
    MPI_Get_version(&version, &subversion);
    MPI_Get_library_version((char[MPI_MAX_LIBRARY_VERSION_STRING]){ 0 }, &len);

    mt_init(&argc, &argv);

    MPI_Initialized(&flag);
    MT_CHECK(flag == 1, "MPI_Initialized after MPI_Init: %d", flag);
    MPI_Finalized(&flag);
    MT_CHECK(flag == 0, "MPI_Finalized after MPI_Init: %d", flag);

    /* The library is at least as new as the header the program was compiled with. */
    MPI_Get_version(&version, &subversion);
    MT_CHECK(version > MPI_VERSION || (version == MPI_VERSION && subversion >= MPI_SUBVERSION),
             "MPI_Get_version %d.%d, header %d.%d", version, subversion, MPI_VERSION, MPI_SUBVERSION);

    char lib[MPI_MAX_LIBRARY_VERSION_STRING];
    memset(lib, 'x', sizeof(lib));
    MPI_Get_library_version(lib, &len);
    MT_CHECK(len > 0 && len < MPI_MAX_LIBRARY_VERSION_STRING && (int)strlen(lib) == len,
             "MPI_Get_library_version len %d strlen %zu", len, strnlen(lib, sizeof(lib)));

    char name[MPI_MAX_PROCESSOR_NAME], host[256] = "";
    memset(name, 'x', sizeof(name));
    MPI_Get_processor_name(name, &len);
    gethostname(host, sizeof(host) - 1);
    MT_CHECK(len > 0 && len < MPI_MAX_PROCESSOR_NAME && (int)strlen(name) == len,
             "MPI_Get_processor_name len %d", len);
    MT_CHECK(strncmp(name, host, strcspn(host, ".")) == 0, "processor name `%s`, host `%s`", name, host);

    int rank = -1, size = -1;
    MPI_Comm_rank(MPI_COMM_SELF, &rank);
    MPI_Comm_size(MPI_COMM_SELF, &size);
    MT_CHECK(rank == 0 && size == 1, "MPI_COMM_SELF rank %d size %d", rank, size);
    MT_CHECK(mt_rank >= 0 && mt_rank < mt_size, "MPI_COMM_WORLD rank %d size %d", mt_rank, mt_size);

    /* Every rank has a distinct rank and agrees on the size. */
    int mine[2] = { mt_rank, mt_size };
    if (mt_rank == 0) {
        for (int i = 1; i < mt_size; i++) {
            int theirs[2];
            MPI_Recv(theirs, 2, MPI_INT, i, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            MT_CHECK(theirs[0] == i && theirs[1] == mt_size, "rank %d says rank %d size %d", i, theirs[0],
                     theirs[1]);
        }
    } else {
        MPI_Send(mine, 2, MPI_INT, 0, 1, MPI_COMM_WORLD);
    }

    MPI_Query_thread(&provided);
    MT_CHECK(provided >= MPI_THREAD_SINGLE && provided <= MPI_THREAD_MULTIPLE, "MPI_Query_thread %d", provided);
    MPI_Is_thread_main(&flag);
    MT_CHECK(flag == 1, "MPI_Is_thread_main in main: %d", flag);

    check_attrs();
    check_clock();

    char *mem = NULL;
    int rc = MPI_Alloc_mem(1 << 20, MPI_INFO_NULL, &mem);
    MT_CHECK(rc == MPI_SUCCESS && mem != NULL, "MPI_Alloc_mem rc %d", rc);
    if (mem) {
        memset(mem, 0x5a, 1 << 20);
        MT_CHECK(mem[(1 << 20) - 1] == 0x5a, "Alloc_mem memory");
        rc = MPI_Free_mem(mem);
        MT_CHECK(rc == MPI_SUCCESS, "MPI_Free_mem rc %d", rc);
    }

    int status = mt_finish();

    MPI_Finalized(&flag);
    if (flag != 1) {
        fprintf(stderr, "[%d] MPI_Finalized after MPI_Finalize: %d\n", mt_rank, flag);
        status = 1;
    }
    MPI_Initialized(&flag);
    if (flag != 1) {
        fprintf(stderr, "[%d] MPI_Initialized after MPI_Finalize: %d\n", mt_rank, flag);
        status = 1;
    }
    return status;
}
