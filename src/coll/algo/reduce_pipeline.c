/*
 * Reduce, segmented along a chain: every member has one child, so the segments need p - 2 + nseg
 * steps and the root takes in the vector once (the segmented reduce: reduce_segmented.c).
 */
#include "coll/umpi_coll.h"

UMPI_COLL_BUILD(umpi_reduce_pipeline)
{
    return umpi_coll_reduce_segmented(s, v, a, UMPI_COLL_SEG_CHAIN);
}
