/*
 * win_allocate: the time of MPI_Win_allocate, then of MPI_Win_free (win_bench.h).
 */
#define WIN_FLAVOR WIN_ALLOCATE
#include "win_bench.h"
