/*
 * Reduce_scatter_block on an intercommunicator: as inter_reduce_scatter.c with rcount elements
 * for every member (each group's vectors have rcount * its size elements).
 */
#include "coll/umpi_coll.h"

UMPI_COLL_BUILD(umpi_inter_reduce_scatter_block)
{
    return umpi_coll_inter_reduce_scatter_counts(s, v, a, NULL, a->rcount);
}
