/*
 * The neighbourhood collectives (MPI 4.1 sec. 8.6): Neighbor_allgather(v) and
 * Neighbor_alltoall(v,w), each the one implementation of its blocking, nonblocking (I-) and
 * persistent (_init) forms (coll.c says how), on a communicator with a Cartesian, graph or
 * distributed-graph topology. Each fills umpi_coll_args_t, checks what the generated binding
 * cannot (a topology, negative counts in the arrays, the datatypes of the w form) and hands it to
 * umpi_coll_run; the algorithm (algo/neighbor_linear.c) reads the neighbour lists from
 * umpi_coll_neighbors.
 */
#include "coll/umpi_coll_call.h"
#include "core/umpi_check.h"
#include "core/umpi_topo.h"
#include "mpi/gen/umpi_impl.h"

#include <stdlib.h>

/* ---- neighbour lists ------------------------------------------------------------------------- */

/* The rank one step from me in dimension d, direction dir (-1 or +1), or MPI_PROC_NULL. */
static int umpi__cart_step(const umpi_comm_t *c, const umpi_topo_t *t, int d, int dir)
{
    long stride = 1;
    for (int i = t->ndims - 1; i > d; i--)
        stride *= t->dims[i];
    long x = (long) t->coords[d] + dir;
    if (x < 0 || x >= t->dims[d]) {
        if (!t->periods[d])
            return MPI_PROC_NULL;
        x = (x + t->dims[d]) % t->dims[d];
    }
    return (int) (c->rank + (x - t->coords[d]) * stride);
}

int umpi_coll_neighbors(const umpi_comm_t *c, int **in, int *nin, int **out, int *nout)
{
    const umpi_topo_t *t = c->is_inter ? NULL : c->topo;
    *in = *out = NULL;
    if (t == NULL)
        return umpi_err_create(MPI_ERR_TOPOLOGY, "communicator in argument 'comm' has no process topology "
                                                 "(a neighbourhood collective needs a Cartesian or graph one)");
    *nin = umpi_topo_degree(c, 0);
    *nout = umpi_topo_degree(c, 1);
    *in = malloc((size_t) (*nin + 1) * sizeof(int));
    *out = malloc((size_t) (*nout + 1) * sizeof(int));
    if (*in == NULL || *out == NULL) {
        free(*in);
        free(*out);
        *in = *out = NULL;
        return umpi_err_create(MPI_ERR_NO_MEM, "out of memory listing %d neighbours", *nin + *nout);
    }
    const int *src_in = NULL, *src_out = NULL;
    switch (t->kind) {
    case MPI_CART:
        for (int d = 0; d < t->ndims; d++) {
            (*in)[2 * d] = (*out)[2 * d] = umpi__cart_step(c, t, d, -1);
            (*in)[2 * d + 1] = (*out)[2 * d + 1] = umpi__cart_step(c, t, d, +1);
        }
        return MPI_SUCCESS;
    case MPI_GRAPH:
        src_in = src_out = t->edges + (c->rank > 0 ? t->index[c->rank - 1] : 0);
        break;
    default:
        src_in = t->in;
        src_out = t->out;
        break;
    }
    for (int i = 0; i < *nin; i++)
        (*in)[i] = src_in[i];
    for (int i = 0; i < *nout; i++)
        (*out)[i] = src_out[i];
    return MPI_SUCCESS;
}

/* ---- argument checks ---------------------------------------------------------------------------- */

static int umpi__counts(const MPI_Count *counts, int n, const char *arg)
{
    for (int i = 0; i < n; i++)
        if (umpi_unlikely(counts[i] < 0))
            return umpi_err_create(MPI_ERR_COUNT, "negative count %lld in argument '%s[%d]'", (long long) counts[i],
                                   arg, i);
    return MPI_SUCCESS;
}

/* The n datatypes of a w argument, decoded into a new array (freed by the caller). */
static int umpi__types(const MPI_Datatype *h, int n, const char *arg, umpi_dtype_t ***out)
{
    *out = malloc((size_t) (n + 1) * sizeof(**out));
    if (*out == NULL)
        return umpi_err_create(MPI_ERR_NO_MEM, "out of memory decoding argument '%s'", arg);
    for (int i = 0; i < n; i++) {
        umpi_dtype_t *dt = umpi_dtype_get(h[i]);
        if (umpi_unlikely(dt == NULL || !dt->committed))
            return umpi_err_create(MPI_ERR_TYPE, "%s datatype 0x%x in argument '%s[%d]'",
                                   dt == NULL ? "invalid" : "uncommitted", (unsigned) h[i], arg, i);
        (*out)[i] = dt;
    }
    return MPI_SUCCESS;
}

/*
 * The one path of every neighbourhood collective. args.bytes (the cost model's n) is what this
 * process sends in all: one block per out-neighbour.
 */
static int umpi__neighbor(umpi_coll_args_t *a, const MPI_Datatype *stypes, const MPI_Datatype *rtypes,
                          umpi_coll_mode_t mode, MPI_Request *request)
{
    int nin = umpi_topo_degree(a->comm, 0), nout = umpi_topo_degree(a->comm, 1), err;
    if (a->comm->is_inter || a->comm->topo == NULL)
        return umpi_err_create(MPI_ERR_TOPOLOGY, "communicator in argument 'comm' has no process topology "
                                                 "(a neighbourhood collective needs a Cartesian or graph one)");
    umpi_dtype_t **sdts = NULL, **rdts = NULL;
    size_t bytes = 0;
    switch (a->kind) {
    case UMPI_COLL_NEIGHBOR_ALLGATHER:
    case UMPI_COLL_NEIGHBOR_ALLTOALL:
        if (nin > 0 && nout > 0 && (err = umpi_coll_aliased(a->sbuf, a->rbuf, a->scount * a->rcount)) != MPI_SUCCESS)
            return err;
        bytes = (size_t) (nout * a->scount * a->sdt->size);
        break;
    case UMPI_COLL_NEIGHBOR_ALLGATHERV:
        if ((err = umpi__counts(a->rcounts, nin, "recvcounts")) != MPI_SUCCESS)
            return err;
        bytes = (size_t) (nout * a->scount * a->sdt->size);
        break;
    default: /* alltoallv, alltoallw */
        if ((err = umpi__counts(a->scounts, nout, "sendcounts")) != MPI_SUCCESS ||
            (err = umpi__counts(a->rcounts, nin, "recvcounts")) != MPI_SUCCESS)
            return err;
        if (a->kind == UMPI_COLL_NEIGHBOR_ALLTOALLW) {
            err = umpi__types(stypes, nout, "sendtypes", &sdts);
            if (err == MPI_SUCCESS)
                err = umpi__types(rtypes, nin, "recvtypes", &rdts);
            if (err != MPI_SUCCESS)
                goto out;
            a->sdts = sdts;
            a->rdts = rdts;
        }
        for (int i = 0; i < nout; i++)
            bytes += (size_t) (a->scounts[i] * (sdts ? sdts[i] : a->sdt)->size);
        break;
    }
    a->bytes = bytes;
    err = umpi_coll_run(a, mode, request);
out:
    free(sdts);
    free(rdts);
    return err;
}

/* ---- the implementations ---------------------------------------------------------------------------- */

int umpi_impl_neighbor_allgather(const void *sendbuf, MPI_Count sendcount, umpi_dtype_t *sendtype, void *recvbuf,
                                 MPI_Count recvcount, umpi_dtype_t *recvtype, umpi_comm_t *comm,
                                 umpi_coll_mode_t mode, MPI_Request *request)
{
    umpi_coll_args_t a = {.kind = UMPI_COLL_NEIGHBOR_ALLGATHER, .comm = comm, .sbuf = sendbuf, .scount = sendcount,
                          .sdt = sendtype, .rbuf = recvbuf, .rcount = recvcount, .rdt = recvtype};
    return umpi__neighbor(&a, NULL, NULL, mode, request);
}

int umpi_impl_neighbor_alltoall(const void *sendbuf, MPI_Count sendcount, umpi_dtype_t *sendtype, void *recvbuf,
                                MPI_Count recvcount, umpi_dtype_t *recvtype, umpi_comm_t *comm, umpi_coll_mode_t mode,
                                MPI_Request *request)
{
    umpi_coll_args_t a = {.kind = UMPI_COLL_NEIGHBOR_ALLTOALL, .comm = comm, .sbuf = sendbuf, .scount = sendcount,
                          .sdt = sendtype, .rbuf = recvbuf, .rcount = recvcount, .rdt = recvtype};
    return umpi__neighbor(&a, NULL, NULL, mode, request);
}

int umpi_impl_neighbor_allgatherv(const void *sendbuf, MPI_Count sendcount, umpi_dtype_t *sendtype, void *recvbuf,
                                  const MPI_Count recvcounts[], const MPI_Aint displs[], umpi_dtype_t *recvtype,
                                  umpi_comm_t *comm, umpi_coll_mode_t mode, MPI_Request *request)
{
    umpi_coll_args_t a = {.kind = UMPI_COLL_NEIGHBOR_ALLGATHERV, .comm = comm, .sbuf = sendbuf, .scount = sendcount,
                          .sdt = sendtype, .rbuf = recvbuf, .rcounts = recvcounts, .rdispls = displs,
                          .rdt = recvtype};
    return umpi__neighbor(&a, NULL, NULL, mode, request);
}

int umpi_impl_neighbor_alltoallv(const void *sendbuf, const MPI_Count sendcounts[], const MPI_Aint sdispls[],
                                 umpi_dtype_t *sendtype, void *recvbuf, const MPI_Count recvcounts[],
                                 const MPI_Aint rdispls[], umpi_dtype_t *recvtype, umpi_comm_t *comm,
                                 umpi_coll_mode_t mode, MPI_Request *request)
{
    umpi_coll_args_t a = {.kind = UMPI_COLL_NEIGHBOR_ALLTOALLV, .comm = comm, .sbuf = sendbuf, .scounts = sendcounts,
                          .sdispls = sdispls, .sdt = sendtype, .rbuf = recvbuf, .rcounts = recvcounts,
                          .rdispls = rdispls, .rdt = recvtype};
    return umpi__neighbor(&a, NULL, NULL, mode, request);
}

/* sdispls / rdispls of the w form are in bytes */
int umpi_impl_neighbor_alltoallw(const void *sendbuf, const MPI_Count sendcounts[], const MPI_Aint sdispls[],
                                 const MPI_Datatype sendtypes[], void *recvbuf, const MPI_Count recvcounts[],
                                 const MPI_Aint rdispls[], const MPI_Datatype recvtypes[], umpi_comm_t *comm,
                                 umpi_coll_mode_t mode, MPI_Request *request)
{
    umpi_coll_args_t a = {.kind = UMPI_COLL_NEIGHBOR_ALLTOALLW, .comm = comm, .sbuf = sendbuf, .scounts = sendcounts,
                          .sdispls = sdispls, .rbuf = recvbuf, .rcounts = recvcounts, .rdispls = rdispls};
    return umpi__neighbor(&a, sendtypes, recvtypes, mode, request);
}
