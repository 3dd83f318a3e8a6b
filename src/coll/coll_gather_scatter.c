/*
 * The gather, scatter, allgather and alltoall families (Gather(v), Scatter(v), Allgather(v),
 * Alltoall(v,w)), each the one implementation of its blocking, nonblocking and persistent forms
 * (coll.c says how).
 *
 * The generated bindings pass the arguments that only some processes use (the root's buffers,
 * what MPI_IN_PLACE makes meaningless) raw: the functions here check them where they are
 * significant, decode them, fill umpi_coll_args_t and hand it to umpi_coll_run.
 *
 * args.bytes, the message size of the cost model, is the size in bytes of ONE process's block:
 * recvcount * size(recvtype) at the receivers of Gather/Allgather/Alltoall (the senders' equals it,
 * type signatures matching), sendcount * size(sendtype) at the root of Scatter. Every member must
 * select the same algorithm, so for the v/w kinds bytes is what every member knows alike: the mean
 * block of Allgatherv; for Alltoallv/w (each process knows its own row only) 0; for Gatherv /
 * Scatterv (one algorithm) this process's own block.
 */
#include "coll/umpi_coll_call.h"
#include "core/umpi_check.h"
#include "mpi/gen/umpi_impl.h"

#include <stdio.h>
#include <stdlib.h>

/* ---- argument checks --------------------------------------------------------------------------- */

/* A typed buffer argument that is significant here: count, datatype (committed), buffer. */
static int umpi__buf(const void *buf, MPI_Count count, MPI_Datatype type, umpi_dtype_t **dt, const char *bufarg,
                     const char *countarg, const char *typearg)
{
    int err = umpi_check_count(count, countarg);
    if (err == MPI_SUCCESS)
        err = umpi_check_dtype(type, dt, 1, typearg);
    if (err == MPI_SUCCESS)
        err = umpi_check_buffer(buf, count, *dt, bufarg);
    return err;
}

/* MPI_IN_PLACE where the standard does not allow it. */
static int umpi__no_inplace(const char *arg, const char *why)
{
    return umpi_err_create(MPI_ERR_BUFFER, "MPI_IN_PLACE in argument '%s' is not allowed %s", arg, why);
}

/* A per-process count array and its displacements, significant here: present, counts >= 0. */
static int umpi__counts(const MPI_Count *counts, const MPI_Aint *displs, MPI_Count n, const char *countarg,
                        const char *displarg)
{
    if (n > 0 && counts == NULL)
        return umpi_err_create(MPI_ERR_ARG, "argument '%s' is NULL with %lld entries", countarg, (long long) n);
    if (n > 0 && displs == NULL)
        return umpi_err_create(MPI_ERR_ARG, "argument '%s' is NULL with %lld entries", displarg, (long long) n);
    for (MPI_Count i = 0; i < n; i++)
        if (counts[i] < 0)
            return umpi_err_create(MPI_ERR_COUNT, "negative count %lld in argument '%s[%lld]'",
                                   (long long) counts[i], countarg, (long long) i);
    return MPI_SUCCESS;
}

/* Decodes a datatype array (alltoallw): *out gets a malloc'ed array the caller frees. */
static int umpi__types(const MPI_Datatype *types, MPI_Count n, const char *arg, umpi_dtype_t ***out)
{
    *out = NULL;
    if (n > 0 && types == NULL)
        return umpi_err_create(MPI_ERR_ARG, "argument '%s' is NULL with %lld entries", arg, (long long) n);
    umpi_dtype_t **d = malloc((size_t) (n > 0 ? n : 1) * sizeof(*d));
    if (d == NULL)
        return umpi_err_create(MPI_ERR_NO_MEM, "out of memory decoding argument '%s'", arg);
    for (MPI_Count i = 0; i < n; i++) {
        char name[64];
        snprintf(name, sizeof(name), "%s[%lld]", arg, (long long) i);
        int err = umpi_check_dtype(types[i], &d[i], 1, name);
        if (err != MPI_SUCCESS) {
            free(d);
            return err;
        }
    }
    *out = d;
    return MPI_SUCCESS;
}

/* Whether this process sends in a rooted collective (intercommunicator: the other group). */
static int umpi__rooted_sender(const umpi_comm_t *comm, int root)
{
    if (comm->is_inter)
        return root != MPI_ROOT && root != MPI_PROC_NULL;
    return 1;
}

static int umpi__inplace_allowed(const umpi_comm_t *comm, const void *buf, const char *arg)
{
    if (buf == MPI_IN_PLACE && comm->is_inter)
        return umpi__no_inplace(arg, "on an intercommunicator");
    return MPI_SUCCESS;
}

/* ---- gather ------------------------------------------------------------------------------------ */

int umpi_impl_gather(const void *sbuf, MPI_Count scount, MPI_Datatype stype, void *rbuf, MPI_Count rcount,
                     MPI_Datatype rtype, int root, umpi_comm_t *comm, umpi_coll_mode_t mode, MPI_Request *request)
{
    umpi_coll_args_t a = {.kind = UMPI_COLL_GATHER, .comm = comm, .sbuf = sbuf, .rbuf = rbuf, .root = root};
    int at_root = umpi_check_at_root(root, comm), err = MPI_SUCCESS;
    if (sbuf == MPI_IN_PLACE && !at_root)
        return umpi__no_inplace("sendbuf", "except at the root");
    if (umpi__rooted_sender(comm, root) && sbuf != MPI_IN_PLACE)
        err = umpi__buf(sbuf, scount, stype, &a.sdt, "sendbuf", "sendcount", "sendtype");
    if (err == MPI_SUCCESS && at_root)
        err = umpi__buf(rbuf, rcount, rtype, &a.rdt, "recvbuf", "recvcount", "recvtype");
    if (err == MPI_SUCCESS && at_root && !comm->is_inter)
        err = umpi_coll_aliased(sbuf, rbuf, rcount);
    if (err != MPI_SUCCESS)
        return err;
    a.scount = a.sdt ? scount : 0;
    a.rcount = at_root ? rcount : 0;
    a.bytes = at_root ? (size_t) (rcount * a.rdt->size) : a.sdt ? (size_t) (scount * a.sdt->size) : 0;
    return umpi_coll_run(&a, mode, request);
}

/* ---- gatherv ----------------------------------------------------------------------------------- */

int umpi_impl_gatherv(const void *sbuf, MPI_Count scount, MPI_Datatype stype, void *rbuf, const MPI_Count *rcounts,
                      const MPI_Aint *displs, MPI_Datatype rtype, int root, umpi_comm_t *comm, umpi_coll_mode_t mode,
                      MPI_Request *request)
{
    umpi_coll_args_t a = {.kind = UMPI_COLL_GATHERV, .comm = comm, .sbuf = sbuf, .rbuf = rbuf, .root = root};
    int at_root = umpi_check_at_root(root, comm), err = MPI_SUCCESS;
    if (sbuf == MPI_IN_PLACE && !at_root)
        return umpi__no_inplace("sendbuf", "except at the root");
    if (umpi__rooted_sender(comm, root) && sbuf != MPI_IN_PLACE)
        err = umpi__buf(sbuf, scount, stype, &a.sdt, "sendbuf", "sendcount", "sendtype");
    if (err == MPI_SUCCESS && at_root)
        err = umpi__counts(rcounts, displs, umpi_check_peers(comm), "recvcounts", "displs");
    if (err == MPI_SUCCESS && at_root)
        err = umpi_check_dtype(rtype, &a.rdt, 1, "recvtype");
    if (err == MPI_SUCCESS && at_root && !comm->is_inter && rbuf == sbuf && rbuf != NULL)
        err = umpi_coll_aliased(sbuf, rbuf, rcounts[comm->rank]);
    if (err != MPI_SUCCESS)
        return err;
    if (at_root) {
        a.rcounts = rcounts;
        a.rdispls = displs;
    }
    a.scount = a.sdt ? scount : 0;
    a.bytes = a.sdt ? (size_t) (scount * a.sdt->size) : at_root && !comm->is_inter ?
                                                                (size_t) (rcounts[comm->rank] * a.rdt->size) : 0;
    return umpi_coll_run(&a, mode, request);
}

/* ---- scatter ----------------------------------------------------------------------------------- */

int umpi_impl_scatter(const void *sbuf, MPI_Count scount, MPI_Datatype stype, void *rbuf, MPI_Count rcount,
                      MPI_Datatype rtype, int root, umpi_comm_t *comm, umpi_coll_mode_t mode, MPI_Request *request)
{
    umpi_coll_args_t a = {.kind = UMPI_COLL_SCATTER, .comm = comm, .sbuf = sbuf, .rbuf = rbuf, .root = root};
    int at_root = umpi_check_at_root(root, comm), err = MPI_SUCCESS;
    if (rbuf == MPI_IN_PLACE && !at_root)
        return umpi__no_inplace("recvbuf", "except at the root");
    if (at_root)
        err = umpi__buf(sbuf, scount, stype, &a.sdt, "sendbuf", "sendcount", "sendtype");
    if (err == MPI_SUCCESS && umpi__rooted_sender(comm, root) && rbuf != MPI_IN_PLACE)
        err = umpi__buf(rbuf, rcount, rtype, &a.rdt, "recvbuf", "recvcount", "recvtype");
    if (err == MPI_SUCCESS && at_root && !comm->is_inter)
        err = umpi_coll_aliased(sbuf, rbuf, scount);
    if (err != MPI_SUCCESS)
        return err;
    a.scount = at_root ? scount : 0;
    a.rcount = a.rdt ? rcount : 0;
    a.bytes = at_root ? (size_t) (scount * a.sdt->size) : a.rdt ? (size_t) (rcount * a.rdt->size) : 0;
    return umpi_coll_run(&a, mode, request);
}

/* ---- scatterv ---------------------------------------------------------------------------------- */

int umpi_impl_scatterv(const void *sbuf, const MPI_Count *scounts, const MPI_Aint *displs, MPI_Datatype stype,
                       void *rbuf, MPI_Count rcount, MPI_Datatype rtype, int root, umpi_comm_t *comm,
                       umpi_coll_mode_t mode, MPI_Request *request)
{
    umpi_coll_args_t a = {.kind = UMPI_COLL_SCATTERV, .comm = comm, .sbuf = sbuf, .rbuf = rbuf, .root = root};
    int at_root = umpi_check_at_root(root, comm), err = MPI_SUCCESS;
    if (rbuf == MPI_IN_PLACE && !at_root)
        return umpi__no_inplace("recvbuf", "except at the root");
    if (at_root)
        err = umpi__counts(scounts, displs, umpi_check_peers(comm), "sendcounts", "displs");
    if (err == MPI_SUCCESS && at_root)
        err = umpi_check_dtype(stype, &a.sdt, 1, "sendtype");
    if (err == MPI_SUCCESS && umpi__rooted_sender(comm, root) && rbuf != MPI_IN_PLACE)
        err = umpi__buf(rbuf, rcount, rtype, &a.rdt, "recvbuf", "recvcount", "recvtype");
    if (err == MPI_SUCCESS && at_root && !comm->is_inter && rbuf == sbuf && rbuf != NULL)
        err = umpi_coll_aliased(sbuf, rbuf, scounts[comm->rank]);
    if (err != MPI_SUCCESS)
        return err;
    if (at_root) {
        a.scounts = scounts;
        a.sdispls = displs;
    }
    a.rcount = a.rdt ? rcount : 0;
    a.bytes = a.rdt ? (size_t) (rcount * a.rdt->size) : at_root && !comm->is_inter ?
                                                              (size_t) (scounts[comm->rank] * a.sdt->size) : 0;
    return umpi_coll_run(&a, mode, request);
}

/* ---- allgather and alltoall ----------------------------------------------------------------------- */

/* Allgather and Alltoall take the same arguments: a block per process on each side. */
static int umpi__blocks_each(umpi_coll_kind_t kind, const void *sbuf, MPI_Count scount, MPI_Datatype stype,
                             void *rbuf, MPI_Count rcount, umpi_dtype_t *rdt, umpi_comm_t *comm,
                             umpi_coll_mode_t mode, MPI_Request *request)
{
    umpi_coll_args_t a = {.kind = kind, .comm = comm, .sbuf = sbuf, .rbuf = rbuf, .rcount = rcount,
                          .rdt = rdt, .bytes = (size_t) (rcount * rdt->size)};
    int err = umpi__inplace_allowed(comm, sbuf, "sendbuf");
    if (err == MPI_SUCCESS && sbuf != MPI_IN_PLACE)
        err = umpi__buf(sbuf, scount, stype, &a.sdt, "sendbuf", "sendcount", "sendtype");
    if (err == MPI_SUCCESS)
        err = umpi_coll_aliased(sbuf, rbuf, rcount);
    if (err != MPI_SUCCESS)
        return err;
    a.scount = a.sdt ? scount : 0;
    return umpi_coll_run(&a, mode, request);
}

int umpi_impl_allgather(const void *sbuf, MPI_Count scount, MPI_Datatype stype, void *rbuf, MPI_Count rcount,
                        umpi_dtype_t *rdt, umpi_comm_t *comm, umpi_coll_mode_t mode, MPI_Request *request)
{
    return umpi__blocks_each(UMPI_COLL_ALLGATHER, sbuf, scount, stype, rbuf, rcount, rdt, comm, mode, request);
}

int umpi_impl_alltoall(const void *sbuf, MPI_Count scount, MPI_Datatype stype, void *rbuf, MPI_Count rcount,
                       umpi_dtype_t *rdt, umpi_comm_t *comm, umpi_coll_mode_t mode, MPI_Request *request)
{
    return umpi__blocks_each(UMPI_COLL_ALLTOALL, sbuf, scount, stype, rbuf, rcount, rdt, comm, mode, request);
}

/* ---- allgatherv -------------------------------------------------------------------------------- */

int umpi_impl_allgatherv(const void *sbuf, MPI_Count scount, MPI_Datatype stype, void *rbuf, const MPI_Count *rcounts,
                         const MPI_Aint *displs, umpi_dtype_t *rdt, umpi_comm_t *comm, umpi_coll_mode_t mode,
                         MPI_Request *request)
{
    umpi_coll_args_t a = {.kind = UMPI_COLL_ALLGATHERV, .comm = comm, .sbuf = sbuf, .rbuf = rbuf,
                          .rcounts = rcounts, .rdispls = displs, .rdt = rdt};
    MPI_Count n = umpi_check_peers(comm);
    int err = umpi__inplace_allowed(comm, sbuf, "sendbuf");
    if (err == MPI_SUCCESS && sbuf != MPI_IN_PLACE)
        err = umpi__buf(sbuf, scount, stype, &a.sdt, "sendbuf", "sendcount", "sendtype");
    if (err == MPI_SUCCESS)
        err = umpi__counts(rcounts, displs, n, "recvcounts", "displs");
    if (err == MPI_SUCCESS && !comm->is_inter)
        err = umpi_coll_aliased(sbuf, rbuf, rcounts[comm->rank]);
    if (err != MPI_SUCCESS)
        return err;
    a.scount = a.sdt ? scount : 0;
    MPI_Count total = 0;
    for (MPI_Count i = 0; i < n; i++)
        total += rcounts[i];
    a.bytes = n > 0 ? (size_t) (total * rdt->size / n) : 0;
    return umpi_coll_run(&a, mode, request);
}

/* ---- alltoallv / alltoallw --------------------------------------------------------------------- */

/* Both kinds: stypes/rtypes (w) or stype/rdt (v). */
static int umpi__alltoallvw(umpi_coll_kind_t kind, const void *sbuf, const MPI_Count *scounts,
                            const MPI_Aint *sdispls, MPI_Datatype stype, const MPI_Datatype *stypes, void *rbuf,
                            const MPI_Count *rcounts, const MPI_Aint *rdispls, umpi_dtype_t *rdt,
                            const MPI_Datatype *rtypes, umpi_comm_t *comm, umpi_coll_mode_t mode,
                            MPI_Request *request)
{
    umpi_coll_args_t a = {.kind = kind, .comm = comm, .sbuf = sbuf, .rbuf = rbuf, .rcounts = rcounts,
                          .rdispls = rdispls, .rdt = rdt};
    MPI_Count n = umpi_check_peers(comm);
    int w = kind == UMPI_COLL_ALLTOALLW;
    int err = umpi__inplace_allowed(comm, sbuf, "sendbuf");
    if (err == MPI_SUCCESS && sbuf != MPI_IN_PLACE)
        err = umpi__counts(scounts, sdispls, n, "sendcounts", "sdispls");
    if (err == MPI_SUCCESS && sbuf != MPI_IN_PLACE) {
        if (w)
            err = umpi__types(stypes, n, "sendtypes", &a.sdts);
        else
            err = umpi_check_dtype(stype, &a.sdt, 1, "sendtype");
    }
    if (err == MPI_SUCCESS)
        err = umpi__counts(rcounts, rdispls, n, "recvcounts", "rdispls");
    if (err == MPI_SUCCESS && w)
        err = umpi__types(rtypes, n, "recvtypes", &a.rdts);
    if (err == MPI_SUCCESS && sbuf == rbuf && sbuf != NULL)
        for (MPI_Count i = 0; i < n && err == MPI_SUCCESS; i++)
            err = umpi_coll_aliased(sbuf, rbuf, rcounts[i]);
    if (err == MPI_SUCCESS) {
        if (sbuf != MPI_IN_PLACE) {
            a.scounts = scounts;
            a.sdispls = sdispls;
        }
        err = umpi_coll_run(&a, mode, request);
    }
    free(a.sdts);
    free(a.rdts);
    return err;
}

int umpi_impl_alltoallv(const void *sbuf, const MPI_Count *scounts, const MPI_Aint *sdispls, MPI_Datatype stype,
                        void *rbuf, const MPI_Count *rcounts, const MPI_Aint *rdispls, umpi_dtype_t *rdt,
                        umpi_comm_t *comm, umpi_coll_mode_t mode, MPI_Request *request)
{
    return umpi__alltoallvw(UMPI_COLL_ALLTOALLV, sbuf, scounts, sdispls, stype, NULL, rbuf, rcounts, rdispls, rdt,
                            NULL, comm, mode, request);
}

int umpi_impl_alltoallw(const void *sbuf, const MPI_Count *scounts, const MPI_Aint *sdispls,
                        const MPI_Datatype *stypes, void *rbuf, const MPI_Count *rcounts, const MPI_Aint *rdispls,
                        const MPI_Datatype *rtypes, umpi_comm_t *comm, umpi_coll_mode_t mode, MPI_Request *request)
{
    return umpi__alltoallvw(UMPI_COLL_ALLTOALLW, sbuf, scounts, sdispls, MPI_DATATYPE_NULL, stypes, rbuf, rcounts,
                            rdispls, NULL, rtypes, comm, mode, request);
}
