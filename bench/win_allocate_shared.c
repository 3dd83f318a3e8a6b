/*
 * win_allocate_shared: the time of MPI_Win_allocate_shared on each node's ranks, then of MPI_Win_free (win_bench.h).
 */
#define WIN_FLAVOR WIN_SHARED
#include "win_bench.h"
