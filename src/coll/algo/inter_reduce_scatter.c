/*
 * Reduce_scatter on an intercommunicator: each group reduces its vectors (sum of rcounts
 * elements; both groups' sums agree) to its rank 0, the leaders swap the results, and each
 * leader hands member i of its group rcounts[i] elements of what it got (linear).
 */
#include "coll/umpi_coll.h"

UMPI_COLL_BUILD(umpi_inter_reduce_scatter)
{
    return umpi_coll_inter_reduce_scatter_counts(s, v, a, a->rcounts, 0);
}
