/*
 * win_create: the time of MPI_Win_create on memory malloc'd once, then of MPI_Win_free (win_bench.h).
 */
#define WIN_FLAVOR WIN_CREATE
#include "win_bench.h"
