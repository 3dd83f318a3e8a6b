/* The counters of src/cuda's slower paths (umpi_cuda.h, UMPI_CUDA_STATS) and what UMPI_DEBUG shows of them. */
#include "cuda/umpi_cuda.h"

#include <stdio.h>

unsigned long umpi_cuda_stats[UMPI_CUDA_NSTATS];
const char *const umpi_cuda_stat_names[UMPI_CUDA_NSTATS] = {
#define UMPI__CUDA_STAT_NAME(name, doc) #name,
    UMPI_CUDA_STATS(UMPI__CUDA_STAT_NAME)
#undef UMPI__CUDA_STAT_NAME
};
static const char *const umpi__stat_docs[UMPI_CUDA_NSTATS] = {
#define UMPI__CUDA_STAT_DOC(name, doc) doc,
    UMPI_CUDA_STATS(UMPI__CUDA_STAT_DOC)
#undef UMPI__CUDA_STAT_DOC
};

/* UMPI_DEBUG=1 and 2 print the first few events of each counter (a loop over device buffers would
 * otherwise print one line per message), 3 every one. */
#define UMPI__SLOW_PATH_LINES 8

void umpi_cuda_slow_path(enum umpi_cuda_stat s, const char *fmt, ...)
{
    unsigned long n = __atomic_add_fetch(&umpi_cuda_stats[s], 1, __ATOMIC_RELAXED);
    if (umpi_config.debug >= 3 || (umpi_config.debug >= 1 && n <= UMPI__SLOW_PATH_LINES)) {
        char line[512];
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(line, sizeof(line), fmt, ap);
        va_end(ap);
        umpi_log("debug", "%s [%s%s]", line, umpi_cuda_stat_names[s],
                 umpi_config.debug < 3 && n == UMPI__SLOW_PATH_LINES ? "; further ones counted, shown at UMPI_DEBUG=3"
                                                                     : "");
    }
}

void umpi_cuda_stats_print(void)
{
    if (umpi_config.debug < 1)
        return;
    char line[1024];
    size_t n = 0;
    for (int i = 0; i < UMPI_CUDA_NSTATS && n < sizeof(line); i++) {
        if (umpi_cuda_stats[i] != 0)
            n += (size_t) snprintf(line + n, sizeof(line) - n, " %s=%lu", umpi_cuda_stat_names[i], umpi_cuda_stats[i]);
    }
    umpi_log("debug", "cuda counters:%s", n ? line : " none");
    if (umpi_config.debug >= 2) {
        for (int i = 0; i < UMPI_CUDA_NSTATS; i++)
            umpi_log("debug", "cuda counter %-18s %10lu  %s", umpi_cuda_stat_names[i], umpi_cuda_stats[i],
                     umpi__stat_docs[i]);
    }
}
