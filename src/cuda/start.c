/*
 * src/cuda's start and finish: the driver opened (loader.c), the counters and the classification
 * caches emptied; at the end the counters shown (UMPI_DEBUG), the IPC mappings closed, the pinned
 * staging and bounce buffers and the streams freed, the caches emptied, the driver closed. The one file that calls
 * every part of src/cuda, so that none of them calls another's finalizer.
 */
#include "cuda/umpi_cuda.h"
#include "cuda/umpi_cuda_bounce.h"
#include "cuda/umpi_cuda_ipc.h"
#include "cuda/umpi_cuda_pipe.h"

#include <string.h>

umpi_status_t umpi_cuda_setup(const char *libname, const struct umpi_cuda_driver *fake)
{
    memset(umpi_cuda_stats, 0, sizeof(umpi_cuda_stats));
    umpi_cuda_cache_reset();
    return umpi_cuda_driver_open(libname, fake);
}

umpi_status_t umpi_cuda_init(void)
{
    /* UMPI_CUDA_LIBRARY: libcuda.so.1 unless a test names its fake driver (test/fakecuda) */
    const char *lib = umpi_config.cuda_library != NULL && *umpi_config.cuda_library ? umpi_config.cuda_library
                                                                                     : "libcuda.so.1";
    return umpi_cuda_setup(lib, NULL);
}

void umpi_cuda_finalize(void)
{
    if (umpi_cuda_active)
        umpi_cuda_stats_print();
    umpi_cuda_active = 0;
    umpi_cuda_cache_watched(0);
    umpi_cuda_ipc_finalize();
    umpi_cuda_stage_finalize();
    umpi_cuda_bounce_finalize();
    umpi_cuda_cache_finalize();
    umpi_cuda_driver_close();
}
