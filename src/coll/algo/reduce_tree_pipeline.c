/*
 * Reduce, segmented along a binomial tree: log2 p levels work at once, and the root takes in the
 * vector log2 p times (the segmented reduce: reduce_segmented.c).
 */
#include "coll/umpi_coll.h"

UMPI_COLL_BUILD(umpi_reduce_tree_pipeline)
{
    return umpi_coll_reduce_segmented(s, v, a, UMPI_COLL_SEG_BINOMIAL);
}
