/*
 * Allreduce as a binomial reduce to member 0 followed by a binomial broadcast from it, in one
 * schedule. 2 log2 p rounds of the whole vector; applies non-commutative ops in rank order
 * (algo/reduce_binomial.c), which makes it the fallback for them.
 */
#include "coll/umpi_coll.h"

UMPI_COLL_BUILD(umpi_allreduce_reduce_bcast)
{
    umpi_coll_args_t ra = *a;
    ra.kind = UMPI_COLL_REDUCE;
    ra.root = 0;
    UMPI_COLL_TRY(umpi_reduce_binomial(s, v, &ra));
    if (v->size == 1)
        return MPI_SUCCESS;
    UMPI_COLL_TRY(umpi_sched_fence(s));
    umpi_coll_args_t ba = {.kind = UMPI_COLL_BCAST, .comm = a->comm, .rbuf = a->rbuf, .rcount = a->rcount,
                           .rdt = a->rdt, .root = 0, .bytes = a->bytes};
    return umpi_bcast_binomial(s, v, &ba);
}
