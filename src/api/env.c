/*
 * Environment inquiries of MPI: state, thread level, versions, clocks, ranks, memory.
 * MPI_Init/Init_thread/Finalize are in init.c; errors and error handlers in err.c/errhandler.c.
 */
#include "config.h"
#include "core/umpi_err.h"
#include "core/umpi_obj.h"
#include "pmi/umpi_pmi.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#if __has_include("mpi/gen/umpi_impl.h")
#include "mpi/gen/umpi_impl.h"
#endif

int umpi_impl_initialized(int *flag)
{
    /* True from MPI_Init on, and still true after MPI_Finalize (MPI 4.1, 11.2.1). */
    *flag = umpi_global.state != UMPI_STATE_PRE_INIT;
    return MPI_SUCCESS;
}

int umpi_impl_finalized(int *flag)
{
    *flag = umpi_global.state == UMPI_STATE_FINALIZED;
    return MPI_SUCCESS;
}

int umpi_impl_abort(umpi_comm_t *comm_ptr, int errorcode)
{
    char msg[256];
    char name[MPI_MAX_OBJECT_NAME + 16];
    if (comm_ptr->name[0] != '\0')
        umpi_strlcpy(name, comm_ptr->name, sizeof(name));
    else
        snprintf(name, sizeof(name), "comm 0x%x", (unsigned) comm_ptr->handle);
    snprintf(msg, sizeof(msg), "umpi: MPI_Abort(%s, %d) called by rank %d", name, errorcode,
             umpi_global.rank);
    fflush(stdout);
    /* We end the whole job, not only comm's processes: MPI 4.1 allows it, and a job with part
     * of its ranks gone cannot be trusted to finish anyway. */
    umpi_pmi_abort(errorcode, msg);
}

int umpi_impl_query_thread(int *provided)
{
    *provided = umpi_global.thread_level;
    return MPI_SUCCESS;
}

int umpi_impl_is_thread_main(int *flag)
{
    *flag = pthread_equal(pthread_self(), umpi_global.main_thread) != 0;
    return MPI_SUCCESS;
}

int umpi_impl_get_version(int *version, int *subversion)
{
    *version = MPI_VERSION;
    *subversion = MPI_SUBVERSION;
    return MPI_SUCCESS;
}

int umpi_impl_get_library_version(char *version, int *resultlen)
{
#ifdef UMPI_HAVE_CUDA_BUILD
    const char *cuda = "CUDA kernels built in";
#else
    const char *cuda = "CUDA kernels not built";
#endif
    int n = snprintf(version, MPI_MAX_LIBRARY_VERSION_STRING,
                     "umpi %s (MPI %d.%d, MPICH ABI): UCX %s, PMIx %s, %s", PACKAGE_VERSION,
                     MPI_VERSION, MPI_SUBVERSION, UMPI_UCX_VERSION, UMPI_PMIX_VERSION, cuda);
    *resultlen = n < MPI_MAX_LIBRARY_VERSION_STRING ? n : MPI_MAX_LIBRARY_VERSION_STRING - 1;
    return MPI_SUCCESS;
}

int umpi_impl_get_processor_name(char *name, int *resultlen)
{
    size_t len = umpi_strlcpy(name, umpi_global.hostname, MPI_MAX_PROCESSOR_NAME);
    *resultlen = (int) (len < MPI_MAX_PROCESSOR_NAME ? len : MPI_MAX_PROCESSOR_NAME - 1);
    return MPI_SUCCESS;
}

double umpi_impl_wtime(void)
{
    return umpi_wtime();
}

double umpi_impl_wtick(void)
{
    struct timespec res;
    if (clock_getres(CLOCK_MONOTONIC, &res) != 0)
        return 1e-9; /* cannot fail for CLOCK_MONOTONIC on Linux; its resolution is 1 ns */
    return (double) res.tv_sec + (double) res.tv_nsec * 1e-9;
}

int umpi_impl_comm_rank(umpi_comm_t *comm_ptr, int *rank)
{
    *rank = comm_ptr->rank;
    return MPI_SUCCESS;
}

int umpi_impl_comm_size(umpi_comm_t *comm_ptr, int *size)
{
    *size = comm_ptr->size;
    return MPI_SUCCESS;
}

/* Cache-line aligned: the memory is typically a communication buffer. */
#define UMPI__ALLOC_MEM_ALIGN 64
/* Largest alignment the mpi_minimum_memory_alignment hint may ask for (a huge page). */
#define UMPI__ALLOC_MEM_MAX_ALIGN (1L << 30)

/* The MPI 4.1 hint mpi_minimum_memory_alignment: a power of two in bytes. A value that is not one
 * is ignored, as hints may be; smaller ones than our default change nothing. */
static size_t umpi__alloc_mem_align(MPI_Info info)
{
    char val[32], *end;
    if (info == MPI_INFO_NULL || !umpi_info_hint(info, "mpi_minimum_memory_alignment", val, sizeof(val)))
        return UMPI__ALLOC_MEM_ALIGN;
    long a = strtol(val, &end, 10);
    if (end == val || *end != '\0' || a <= UMPI__ALLOC_MEM_ALIGN || a > UMPI__ALLOC_MEM_MAX_ALIGN ||
        (a & (a - 1)) != 0)
        return UMPI__ALLOC_MEM_ALIGN;
    return (size_t) a;
}

int umpi_impl_alloc_mem(MPI_Aint size, MPI_Info info, void *baseptr)
{
    void *p = NULL;
    if (size < 0)
        return umpi_err_create(MPI_ERR_SIZE, "negative size %ld in argument 'size'", (long) size);
    /* Size 0 still yields a pointer MPI_Free_mem accepts. */
    if (posix_memalign(&p, umpi__alloc_mem_align(info), size > 0 ? (size_t) size : 1) != 0)
        return umpi_err_create(MPI_ERR_NO_MEM, "cannot allocate %ld bytes", (long) size);
    *(void **) baseptr = p;
    return MPI_SUCCESS;
}

int umpi_impl_free_mem(void *base)
{
    free(base);
    return MPI_SUCCESS;
}
