/*
 * osu_put_latency: MPI_Put latency, one operation per flush, between the pairs of ranks
 * (osu_rma.h).
 */
#define RMA_OP RMA_PUT
#define RMA_BW 0
#include "osu_rma.h"
