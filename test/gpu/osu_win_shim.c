/*
 * Link shim for the real OSU Micro-Benchmarks 7.4, compiled into OSU's build only (never into
 * libmpi) by test/gpu/bundle.sh, and only when `nm -D libmpi.so` shows that umpi lacks these
 * functions: umpi has no one-sided communication yet, but OSU's shared utility file
 * (c/util/osu_util_mpi.c) references the window calls below, so without them not even
 * osu_latency links. The point-to-point and collective benchmarks never call them; a benchmark
 * that does (the one-sided ones, or -t with windows) stops here with a message that says why,
 * rather than measuring something else.
 *
 * The bundle script compiles this file with -DUMPI_SHIM_<function> for each missing function, so
 * that a function libmpi does export is never shadowed by a stub.
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

static void umpi_shim_abort(const char *fn)
{
    fprintf(stderr,
            "%s: not available: umpi has no one-sided communication (MPI_Win_*) yet; this OSU "
            "binary links a stub from the umpi GPU bundle (test/gpu/osu_win_shim.c) that stops here\n",
            fn);
    fflush(stderr);
    abort();
}

#ifdef UMPI_SHIM_MPI_Win_create
int MPI_Win_create(void *base, MPI_Aint size, int disp_unit, MPI_Info info, MPI_Comm comm, MPI_Win *win)
{
    umpi_shim_abort("MPI_Win_create");
    return MPI_ERR_OTHER;
}
#endif

#ifdef UMPI_SHIM_MPI_Win_allocate
int MPI_Win_allocate(MPI_Aint size, int disp_unit, MPI_Info info, MPI_Comm comm, void *baseptr, MPI_Win *win)
{
    umpi_shim_abort("MPI_Win_allocate");
    return MPI_ERR_OTHER;
}
#endif

#ifdef UMPI_SHIM_MPI_Win_create_dynamic
int MPI_Win_create_dynamic(MPI_Info info, MPI_Comm comm, MPI_Win *win)
{
    umpi_shim_abort("MPI_Win_create_dynamic");
    return MPI_ERR_OTHER;
}
#endif

#ifdef UMPI_SHIM_MPI_Win_attach
int MPI_Win_attach(MPI_Win win, void *base, MPI_Aint size)
{
    umpi_shim_abort("MPI_Win_attach");
    return MPI_ERR_OTHER;
}
#endif

#ifdef UMPI_SHIM_MPI_Win_free
int MPI_Win_free(MPI_Win *win)
{
    umpi_shim_abort("MPI_Win_free");
    return MPI_ERR_OTHER;
}
#endif

/* ISO C forbids an empty translation unit (all five present in libmpi: nothing to stub). */
typedef int umpi_shim_nonempty;
