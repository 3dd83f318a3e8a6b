/*
 * Neighbourhood collectives, linear: every receive from an in-neighbour and every send to an
 * out-neighbour posted at once, in one phase. Block i of the receive buffer comes from in-neighbour
 * i, block j of the send buffer (alltoall forms) goes to out-neighbour j; MPI_PROC_NULL
 * neighbours (the ends of a non-periodic Cartesian dimension) get no message and their blocks are
 * left alone.
 *
 * Matching: the same process may be a neighbour several times (a periodic dimension of size 1 or
 * 2, repeated graph edges). Messages of one pair match in posting order, so both ends post them in
 * an order that pairs them right: receives in neighbour order; sends in neighbour order, except
 * that on a Cartesian grid the send towards +d goes before the send towards -d (the process at +d
 * receives first the block from its -d neighbour, which is me).
 */
#include "coll/umpi_coll.h"
#include "core/umpi_topo.h"

#include <stdlib.h>

static int umpi__recvs(umpi_sched_t *s, const umpi_coll_view_t *v, const umpi_coll_args_t *a, const int *in,
                       int nin)
{
    for (int i = 0; i < nin; i++) {
        if (in[i] == MPI_PROC_NULL)
            continue;
        void *buf;
        MPI_Count n;
        umpi_dtype_t *dt = a->rdt;
        switch (a->kind) {
        case UMPI_COLL_NEIGHBOR_ALLGATHER:
        case UMPI_COLL_NEIGHBOR_ALLTOALL:
            buf = umpi_coll_at(a->rbuf, i * a->rcount, dt);
            n = a->rcount;
            break;
        case UMPI_COLL_NEIGHBOR_ALLTOALLW:
            dt = a->rdts[i];
            buf = (char *) a->rbuf + a->rdispls[i];
            n = a->rcounts[i];
            break;
        default: /* allgatherv, alltoallv */
            buf = umpi_coll_at(a->rbuf, a->rdispls[i], dt);
            n = a->rcounts[i];
            break;
        }
        UMPI_COLL_TRY(umpi_sched_recv(s, v, in[i], buf, n, dt));
    }
    return MPI_SUCCESS;
}

static int umpi__send(umpi_sched_t *s, const umpi_coll_view_t *v, const umpi_coll_args_t *a, int j, int peer)
{
    if (peer == MPI_PROC_NULL)
        return MPI_SUCCESS;
    switch (a->kind) {
    case UMPI_COLL_NEIGHBOR_ALLGATHER:
    case UMPI_COLL_NEIGHBOR_ALLGATHERV:
        return umpi_sched_send(s, v, peer, a->sbuf, a->scount, a->sdt);
    case UMPI_COLL_NEIGHBOR_ALLTOALL:
        return umpi_sched_send(s, v, peer, umpi_coll_at(a->sbuf, j * a->scount, a->sdt), a->scount, a->sdt);
    case UMPI_COLL_NEIGHBOR_ALLTOALLV:
        return umpi_sched_send(s, v, peer, umpi_coll_at(a->sbuf, a->sdispls[j], a->sdt), a->scounts[j], a->sdt);
    default: /* alltoallw */
        return umpi_sched_send(s, v, peer, (const char *) a->sbuf + a->sdispls[j], a->scounts[j], a->sdts[j]);
    }
}

UMPI_COLL_BUILD(umpi_neighbor_linear)
{
    int *in, *out, nin, nout;
    int err = umpi_coll_neighbors(a->comm, &in, &nin, &out, &nout);
    if (err != MPI_SUCCESS)
        return err;
    int cart = a->comm->topo->kind == MPI_CART;
    err = umpi__recvs(s, v, a, in, nin);
    for (int j = 0; j < nout && err == MPI_SUCCESS; j++) {
        int k = cart ? j ^ 1 : j; /* Cartesian: +d (odd index) before -d */
        err = umpi__send(s, v, a, k, out[k]);
    }
    free(in);
    free(out);
    return err;
}
