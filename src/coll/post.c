/*
 * The collective driver (umpi_coll.h: umpi_coll_post): a call's algorithm (the communicator's last
 * choice for the same call, else select.c's), the two-member paths without a schedule (pair.c),
 * the blocking schedules a communicator keeps for the same call again, and the schedule built,
 * run or wrapped in a request.
 */
#include "coll/umpi_coll_call.h"
#include "coll/umpi_coll_device.h"
#include "core/umpi_err.h"

#include <string.h>

/*
 * Blocking collectives kept for the same call again. Building a schedule is ~700 of the ~4000
 * instructions of a 4-member 8-byte alltoall (callgrind, bench/NOTES.md), the same every time the
 * call is the same, and applications and benchmarks repeat calls: the communicator keeps each
 * kind's last blocking schedule with the arguments it was built from and runs it again when they
 * match. Safe to compare by address: a schedule reads the buffers when it runs, never when it is
 * built, and the kept datatypes and op are retained, so no new object can take their address.
 * Not kept: the v and w variants (their count arrays may change between calls), calls of more
 * than UMPI__KEEP_BYTES (the build is small next to moving the data), device buffers (CUDA active:
 * where the data is is decided per call), schedules over umpi_sched_keepable's limits.
 */
#define UMPI__KEEP_BYTES 65536

static void umpi__kept_clear(struct umpi_coll_kept *k)
{
    if (k->s == NULL)
        return;
    umpi_sched_free(k->s);
    if (k->sdt != NULL)
        umpi_dtype_release(k->sdt);
    if (k->rdt != NULL)
        umpi_dtype_release(k->rdt);
    if (k->op != NULL)
        umpi_op_release(k->op);
    memset(k, 0, sizeof(*k));
}

/* A freed communicator's collective state: the schedules it keeps, its NCCL communicator, its
 * node structure (hier.c). */
void umpi_coll_comm_free(umpi_coll_comm_t *cc)
{
    if (cc == NULL)
        return;
    for (int i = 0; i < UMPI_COLL_NKINDS; i++)
        umpi__kept_clear(&cc->kept[i]);
    umpi_coll_nccl_free(cc->nccl);
    umpi_coll_nodes_free(cc);
}

static int umpi__kept_match(const struct umpi_coll_kept *k, const umpi_coll_algo_t *algo, const umpi_coll_args_t *a)
{
    return k->s != NULL && k->algo == algo && k->sbuf == a->sbuf && k->rbuf == a->rbuf && k->scount == a->scount &&
           k->rcount == a->rcount && k->sdt == a->sdt && k->rdt == a->rdt && k->op == a->op && k->root == a->root;
}

/* Runs the blocking collective a with algo: the kept schedule when it was built for these
 * arguments, else a new one, kept afterwards when small enough. */
static int umpi__run_kept(umpi_coll_comm_t *cc, const umpi_coll_algo_t *algo, const umpi_coll_view_t *v,
                          umpi_coll_args_t *a)
{
    struct umpi_coll_kept *k = &cc->kept[a->kind];
    int err;
    if (!k->busy && umpi__kept_match(k, algo, a)) {
        umpi_sched_unpark(k->s);
        k->busy = 1; /* a call of the same kind in the meantime (a user op's) builds its own */
        err = umpi_sched_run_kept(k->s);
        k->busy = 0;
        if (err != MPI_SUCCESS)
            umpi__kept_clear(k);
        else
            umpi_sched_park(k->s);
        return err;
    }
    umpi_sched_t *s = umpi_sched_new(a->comm);
    if (s == NULL)
        return umpi_err_create(MPI_ERR_OTHER, "out of memory starting a collective");
    err = algo->build(s, v, a);
    if (err == MPI_SUCCESS)
        err = umpi_sched_run_kept(s);
    if (err != MPI_SUCCESS || k->busy || !umpi_sched_keepable(s)) {
        umpi_sched_free(s);
        return err;
    }
    umpi__kept_clear(k);
    k->s = s;
    k->algo = algo;
    k->sbuf = a->sbuf;
    k->rbuf = a->rbuf;
    k->scount = a->scount;
    k->rcount = a->rcount;
    k->sdt = a->sdt;
    k->rdt = a->rdt;
    k->op = a->op;
    k->root = a->root;
    if (k->sdt != NULL)
        umpi_dtype_retain(k->sdt);
    if (k->rdt != NULL)
        umpi_dtype_retain(k->rdt);
    if (k->op != NULL)
        umpi_op_retain(k->op);
    umpi_sched_park(s);
    return MPI_SUCCESS;
}

static int umpi__post(umpi_coll_args_t *a, umpi_coll_mode_t mode, MPI_Request *request, umpi_coll_comm_t *cc,
                      int host_only);

/* A call on a GPU machine: done here (1, *err its error) when its device buffers go whole, through
 * CUDA IPC or NCCL, or on host copies run by the host path; else 0, with *host_only saying whether
 * every buffer is host memory. Out of line: host calls pay only the test of umpi_cuda_active. */
static __attribute__((noinline)) int umpi__post_device(umpi_coll_args_t *a, umpi_coll_comm_t *cc,
                                                       umpi_coll_mode_t mode, int *host_only, int *err)
{
    umpi_coll_dev_whole_t wh;
    umpi_coll_args_t h;
    if (umpi_coll_dev_offload(a, cc, mode, err))
        return 1;
    if (!umpi_coll_dev_whole_begin(a, mode, host_only, &wh, &h, err))
        return 0;
    if (*err == MPI_SUCCESS)
        *err = umpi_coll_dev_whole_end(&wh, umpi__post(&h, mode, NULL, cc, 1));
    return 1;
}

int umpi_coll_post(umpi_coll_args_t *a, umpi_coll_mode_t mode, MPI_Request *request)
{
    umpi_coll_comm_t *cc = umpi_coll_comm(a->comm);
    if (cc == NULL)
        return umpi_err_create(MPI_ERR_OTHER, "out of memory describing the nodes of a communicator");
    /* device buffers: run whole through CUDA IPC within a node or by NCCL when every member
     * agrees, or, small, on host copies of them (umpi_coll_device.h); otherwise the schedule
     * below moves each step's device data through host memory */
    int host_only = 1;
    if (umpi_unlikely(umpi_cuda_active)) {
        int err;
        if (umpi__post_device(a, cc, mode, &host_only, &err))
            return err;
    }
    return umpi__post(a, mode, request, cc, host_only);
}

/* The call, its buffers host memory when host_only (then the paths that never stage may run). */
static int umpi__post(umpi_coll_args_t *a, umpi_coll_mode_t mode, MPI_Request *request, umpi_coll_comm_t *cc,
                      int host_only)
{
    umpi_coll_view_t v;
    umpi_coll_view_local(&v, a->comm);
    /* What a choice depends on: the communicator (size, nodes: cc is its own), the kind, the
     * bytes and whether the op commutes (the usable() tests); knobs are read once at MPI_Init. A
     * repeated call (every benchmark loop, most applications) reuses it: 10-20 ns of the 40-60 ns
     * a one-process collective costs went to selection. */
    int commutative = a->op == NULL || umpi_op_is_commutative(a->op);
    const umpi_coll_algo_t *algo = NULL;
    if (cc->last[a->kind].algo != NULL && cc->last[a->kind].bytes == a->bytes &&
        cc->last[a->kind].commutative == commutative && !umpi_unlikely(umpi_config.debug)) {
        algo = cc->last[a->kind].algo;
    } else {
        umpi_coll_shape_t shape = {.nnodes = cc->nnodes, .max_ppn = cc->max_ppn};
        algo = umpi_coll_select(&v, a, &shape);
        cc->last[a->kind].algo = algo;
        cc->last[a->kind].bytes = a->bytes;
        cc->last[a->kind].commutative = commutative;
    }
    int nalgos;
    if (algo == NULL && a->comm->is_inter && (umpi_coll_algos(a->kind, 1, &nalgos), nalgos == 0))
        return umpi_err_create(MPI_ERR_COMM, "%s is not defined on an intercommunicator (argument 'comm')",
                               umpi_coll_kind_name(a->kind));
    if (algo == NULL)
        return umpi_err_create(MPI_ERR_INTERN, "no %s algorithm can run on this %s", umpi_coll_kind_name(a->kind),
                               a->comm->is_inter ? "intercommunicator" : "communicator");
    umpi_debug(1, "%s%s on %s (size %d, %zu bytes): algorithm %s",
               mode == UMPI_COLL_NONBLOCKING ? "i" : "", umpi_coll_kind_name(a->kind),
               a->comm->name[0] ? a->comm->name : "a communicator", a->comm->size, a->bytes, algo->name);
    /* two members, blocking: the algorithm's messages straight from the call (pair.c; device
     * buffers keep the schedule, which stages them) */
    if (algo->pair != NULL && mode == UMPI_COLL_BLOCKING && v.size == 2 && host_only) {
        int err;
        if (algo->pair(&v, a, &err))
            return err;
    }
    if (mode == UMPI_COLL_BLOCKING && a->bytes <= UMPI__KEEP_BYTES && a->scounts == NULL && a->rcounts == NULL &&
        a->sdts == NULL && a->rdts == NULL && host_only)
        return umpi__run_kept(cc, algo, &v, a);
    umpi_sched_t *s = umpi_sched_new(a->comm);
    if (s == NULL)
        return umpi_err_create(MPI_ERR_OTHER, "out of memory starting a collective");
    int err = algo->build(s, &v, a);
    if (err != MPI_SUCCESS) {
        umpi_sched_free(s);
        return err;
    }
    if (mode == UMPI_COLL_BLOCKING)
        return umpi_sched_run(s);
    return umpi_sched_request(s, mode == UMPI_COLL_PERSISTENT, request);
}
