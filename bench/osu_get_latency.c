/*
 * osu_get_latency: MPI_Get latency, one operation per flush, between the pairs of ranks
 * (osu_rma.h).
 */
#define RMA_OP RMA_GET
#define RMA_BW 0
#include "osu_rma.h"
