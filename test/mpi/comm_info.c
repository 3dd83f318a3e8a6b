/*
 * Info hints of communicators: MPI_Comm_set_info, MPI_Comm_get_info, MPI_Comm_dup_with_info, and
 * the hints MPI_Comm_dup copies. Only the standard's assertion keys are checked by value, and
 * only when the implementation reports them (an MPI may ignore any hint); keys the MPI does not
 * know must not break anything. Also messages on a dup_with_info communicator, and MPI_INFO_NULL.
 */
#define _GNU_SOURCE /* RTLD_DEFAULT */
#include "mtest.h"

#include <dlfcn.h>

static int get_hint(MPI_Comm c, const char *key, char *v)
{
    MPI_Info used;
    int flag = 0;
    MPI_Comm_get_info(c, &used);
    MT_CHECK(used != MPI_INFO_NULL, "MPI_Comm_get_info returned MPI_INFO_NULL");
    if (used != MPI_INFO_NULL) {
        MPI_Info_get(used, key, MPI_MAX_INFO_VAL, v, &flag);
        MPI_Info_free(&used);
    }
    return flag;
}

int main(int argc, char **argv)
{
    char v[MPI_MAX_INFO_VAL + 1];
    MPI_Info info;
    MPI_Comm a, b, c;
    char lib[MPI_MAX_LIBRARY_VERSION_STRING];
    int len, is_umpi;
    mt_init(&argc, &argv);
    /* What MPI_Comm_dup and MPI_Comm_set_info do to the hints they do not set is checked for umpi
     * only (its documented choice; MPICH 4.0.2, for one, reports defaults after a dup). */
    MPI_Get_library_version(lib, &len);
    is_umpi = strstr(lib, "umpi") != NULL;

    MPI_Info_create(&info);
    MPI_Info_set(info, "mpi_assert_no_any_tag", "true");
    MPI_Info_set(info, "umpi_test_unknown_key", "whatever");
    MPI_Comm_dup_with_info(MPI_COMM_WORLD, info, &a);
    MPI_Info_free(&info);
    /* the info object given is not the one in use: freeing it changes nothing */
    if (get_hint(a, "mpi_assert_no_any_tag", v))
        MT_CHECK(strcmp(v, "true") == 0, "no_any_tag on the dup_with_info communicator is %s", v);
    if (get_hint(a, "mpi_assert_no_any_source", v))
        MT_CHECK(strcmp(v, "false") == 0, "no_any_source (never set) is %s", v);

    /* MPI_Comm_dup copies the hints */
    MPI_Comm_dup(a, &b);
    if (is_umpi && get_hint(b, "mpi_assert_no_any_tag", v))
        MT_CHECK(strcmp(v, "true") == 0, "no_any_tag after MPI_Comm_dup is %s", v);

    /* set_info changes the keys it names, leaves the others */
    MPI_Info_create(&info);
    MPI_Info_set(info, "mpi_assert_exact_length", "true");
    MPI_Comm_set_info(b, info);
    MPI_Info_set(info, "mpi_assert_exact_length", "false");
    MPI_Info_set(info, "mpi_assert_allow_overtaking", "true");
    MPI_Comm_dup_with_info(b, info, &c); /* hints of info, not b's */
    MPI_Info_free(&info);
    if (get_hint(b, "mpi_assert_exact_length", v))
        MT_CHECK(strcmp(v, "true") == 0, "exact_length after set_info is %s", v);
    if (is_umpi && get_hint(b, "mpi_assert_no_any_tag", v))
        MT_CHECK(strcmp(v, "true") == 0, "no_any_tag after a set_info without it is %s", v);
    if (get_hint(c, "mpi_assert_no_any_tag", v))
        MT_CHECK(strcmp(v, "false") == 0, "no_any_tag on dup_with_info of b is %s (info did not set it)", v);
    if (get_hint(c, "mpi_assert_allow_overtaking", v))
        MT_CHECK(strcmp(v, "true") == 0, "allow_overtaking on dup_with_info of b is %s", v);
    if (get_hint(c, "mpi_assert_exact_length", v))
        MT_CHECK(strcmp(v, "false") == 0, "exact_length on dup_with_info of b is %s", v);

    /* MPI_INFO_NULL: no hints */
    MPI_Comm d;
    MPI_Comm_dup_with_info(MPI_COMM_SELF, MPI_INFO_NULL, &d);
    if (get_hint(d, "mpi_assert_no_any_tag", v))
        MT_CHECK(strcmp(v, "false") == 0, "no_any_tag on a dup_with_info(MPI_INFO_NULL) is %s", v);
    MPI_Comm_free(&d);

    /* the new communicators work, and do not cross */
    int x = mt_rank, y = -1, z = -1, n = mt_size;
    MPI_Sendrecv(&x, 1, MPI_INT, (mt_rank + 1) % n, 0, &y, 1, MPI_INT, (mt_rank + n - 1) % n, 0, c,
                 MPI_STATUS_IGNORE);
    x += 1000;
    MPI_Sendrecv(&x, 1, MPI_INT, (mt_rank + 1) % n, 0, &z, 1, MPI_INT, (mt_rank + n - 1) % n, 0, a,
                 MPI_STATUS_IGNORE);
    MT_CHECK(y == (mt_rank + n - 1) % n && z == y + 1000, "got %d and %d", y, z);

    /* errors: a bad info handle */
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    int err = MPI_Comm_set_info(MPI_COMM_WORLD, (MPI_Info) 0x12345), cls = -1;
    MPI_Error_class(err, &cls);
    MT_CHECK(cls == MPI_ERR_INFO, "bad info handle: class %d", cls);

    /* MPI 4.1's memory allocation kinds: umpi reports "system,mpi", plus the CUDA kinds when it
     * takes device buffers (MPIX_Query_cuda_support, looked up at run time: MPICH's mpi.h may not
     * declare it), on MPI_COMM_WORLD and on a communicator made from it alike. */
    if (is_umpi) {
        int (*query)(void) = (int (*)(void)) dlsym(RTLD_DEFAULT, "MPIX_Query_cuda_support");
        const char *want = query != NULL && query() ? "system,mpi,cuda:device,cuda:host,cuda:managed"
                                                    : "system,mpi";
        MT_CHECK(query != NULL, "umpi exports no MPIX_Query_cuda_support");
        MT_CHECK(get_hint(MPI_COMM_WORLD, "mpi_memory_alloc_kinds", v) && strcmp(v, want) == 0,
                 "MPI_COMM_WORLD: mpi_memory_alloc_kinds is '%s', expected '%s'", v, want);
        v[0] = '\0';
        MT_CHECK(get_hint(a, "mpi_memory_alloc_kinds", v) && strcmp(v, want) == 0,
                 "a dup: mpi_memory_alloc_kinds is '%s', expected '%s'", v, want);
    }

    MPI_Comm_free(&a);
    MPI_Comm_free(&b);
    MPI_Comm_free(&c);
    return mt_finish();
}
