/*
 * osu_acc_latency: MPI_Accumulate (MPI_SUM on bytes) latency, one operation per flush, between the
 * pairs of ranks (osu_rma.h).
 */
#define RMA_OP RMA_ACC
#define RMA_BW 0
#include "osu_rma.h"
