/*
 * osu_get_bw: MPI_Get bandwidth, 64 operations in flight per flush, between the pairs of ranks
 * (osu_rma.h).
 */
#define RMA_OP RMA_GET
#define RMA_BW 1
#include "osu_rma.h"
