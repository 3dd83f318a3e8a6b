/*
 * osu_fop_latency: MPI_Fetch_and_op (MPI_SUM on one 8-byte integer) latency, one operation per
 * flush, between the pairs of ranks (osu_rma.h).
 */
#define RMA_OP RMA_FOP
#define RMA_BW 0
#include "osu_rma.h"
