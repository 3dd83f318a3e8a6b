/*
 * win_create_dynamic: the time of MPI_Win_create_dynamic, then of MPI_Win_free (win_bench.h); no
 * memory at creation, so one row, size 0.
 */
#define WIN_FLAVOR WIN_DYNAMIC
#include "win_bench.h"
