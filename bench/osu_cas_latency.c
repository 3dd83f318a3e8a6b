/*
 * osu_cas_latency: MPI_Compare_and_swap (one 8-byte integer) latency, one operation per flush,
 * between the pairs of ranks (osu_rma.h).
 */
#define RMA_OP RMA_CAS
#define RMA_BW 0
#include "osu_rma.h"
