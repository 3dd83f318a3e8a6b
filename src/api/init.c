/*
 * MPI_Init / MPI_Init_thread / MPI_Finalize: the order in which the layers come up and go down.
 *
 *   init:     knobs -> objects -> PMI (who am I) -> UCX (publish address) -> fence -> ready
 *             -> progress thread (UMPI_ASYNC_PROGRESS)
 *   finalize: pending buffered sends -> UCX flush -> fence -> progress thread joined
 *             -> endpoints, worker -> PMI -> objects
 *
 * Endpoints are created lazily at first send, so init costs one fence whatever the job size.
 */
#include "api/umpi_api.h"
#include "api/umpi_comm.h"
#include "api/umpi_hw.h"
#include "coll/umpi_coll.h"
#include "coll/umpi_sched.h"
#include "core/umpi_attr.h"
#include "core/umpi_err.h"
#include "core/umpi_progress.h"
#include "core/umpi_request.h"
#include "cuda/umpi_cuda.h"
#include "cuda/umpi_cuda_kern.h"
#include "cuda/umpi_cuda_nccl.h"
#include "netmod/ucx/umpi_ucx.h"
#include "pmi/umpi_pmi.h"
#include "pt2pt/umpi_p2p.h"

#include <string.h>
#include <unistd.h>

/*
 * Core stands below every other layer and calls nothing above it; where it must act on their
 * behalf it calls through these pointers, set here once: ending the job (the process manager),
 * freeing what coll and the topologies hang on a communicator, freeing a collective's schedule.
 * (The network module sets the engine's poll itself, when its worker exists; src/cuda sets
 * umpi_dtype_cuda_forget when it uploads a type.)
 */
static void umpi__set_core_upcalls(void)
{
    umpi_abort_job = umpi_pmi_abort;
    umpi_comm_free_above = umpi_comm_free_layers;
    umpi_request_sched_free = umpi_sched_free_opaque;
}

/* The finalizers of the rooms above (umpi_api.h). */
#define UMPI__MAX_FINALIZERS 8
static void (*umpi__finalizers[UMPI__MAX_FINALIZERS])(void);
static int umpi__nfinalizers;

int umpi_finalize_register(void (*fn)(void))
{
    for (int i = 0; i < umpi__nfinalizers; i++)
        if (umpi__finalizers[i] == fn)
            return 0;
    if (umpi__nfinalizers == UMPI__MAX_FINALIZERS)
        return -1;
    umpi__finalizers[umpi__nfinalizers++] = fn;
    return 0;
}

static int umpi__init(int required, int *provided)
{
    struct umpi_pmi_info pmi;
    umpi_status_t st;

    if (umpi_global.state != UMPI_STATE_PRE_INIT)
        return umpi_err_create(MPI_ERR_OTHER, umpi_global.state == UMPI_STATE_INITIALIZED
                                                  ? "MPI is already initialized"
                                                  : "MPI cannot be initialized again after MPI_Finalize");
    umpi_knobs_load();
    umpi__set_core_upcalls();
    /* Every level is provided as asked; MPI_THREAD_MULTIPLE takes the big lock around the engine. */
    if (required < MPI_THREAD_SINGLE)
        required = MPI_THREAD_SINGLE;
    if (required > MPI_THREAD_MULTIPLE)
        required = MPI_THREAD_MULTIPLE;
    umpi_global.thread_level = required;
    umpi_global.main_thread = pthread_self();
    if (gethostname(umpi_global.hostname, sizeof(umpi_global.hostname)) != 0)
        umpi_strlcpy(umpi_global.hostname, "localhost", sizeof(umpi_global.hostname));
    umpi_global.hostname[sizeof(umpi_global.hostname) - 1] = '\0';

    if (umpi_objects_init() != 0)
        return umpi_err_create(MPI_ERR_OTHER, "out of memory creating the predefined objects");

    st = umpi_pmi_init(&pmi);
    if (st != UMPI_OK)
        return umpi_err_from_status(st, "connecting to the process manager failed");
    umpi_global.rank = pmi.rank;
    umpi_global.size = pmi.size;
    umpi_global.appnum = pmi.appnum;
    umpi_global.universe_size = pmi.universe_size;
    umpi_global.singleton = pmi.singleton;
    umpi_comm_builtin_setup(pmi.rank, pmi.size);
    if (pmi.size > UMPI_UCX_MAX_RANKS)
        return umpi_err_create(MPI_ERR_OTHER, "%d ranks exceed the %d that the tag layout can address", pmi.size,
                               UMPI_UCX_MAX_RANKS);

    st = umpi_node_cpus_publish(pmi.local_size);
    if (st != UMPI_OK)
        return umpi_err_from_status(st, "publishing the affinity mask failed");

    /* Once the rank is known (for the debug lines); UMPI_CUDA=1 without a usable GPU stops here. */
    st = umpi_cuda_init();
    if (st != UMPI_OK)
        return umpi_err_from_status(st, "starting CUDA failed");
    /* point-to-point (src/pt2pt/gpu_*.c) and the collectives (src/coll/device.c) carry device
     * buffers */
    umpi_cuda_device_buffers = 1;
    /* classification's caches stay right while they hear of every change to the address space */
    if (umpi_cuda_active) {
        st = umpi_ucx_vm_watch(umpi_cuda_vm_changed);
        umpi_cuda_cache_watched(st == UMPI_OK);
        if (st == UMPI_OK)
            umpi_debug(1, "cuda: UCX's memory events keep the buffer classification caches right");
        else
            umpi_debug(1, "cuda: %s: every host buffer is asked of the driver, every cached device range checked "
                       "against its buffer id", umpi_status_last_msg());
    }
    st = umpi_nccl_init(); /* UMPI_NCCL=1: NCCL must load now */
    if (st != UMPI_OK)
        return umpi_err_from_status(st, "starting NCCL failed");
    st = umpi_p2p_init(pmi.size);
    if (st != UMPI_OK)
        return umpi_err_from_status(st, "publishing the device-message threshold failed");

    /* The asynchronous progress thread shares the engine as a second thread of an
     * MPI_THREAD_MULTIPLE program would: the big lock in every call, a worker that allows two
     * threads (SERIALIZED) whatever level the program asked for. */
    int engine_level = umpi_config.async_progress ? MPI_THREAD_MULTIPLE : required;
    st = umpi_ucx_init(engine_level, pmi.size);
    if (st != UMPI_OK)
        return umpi_err_from_status(st, "starting UCX failed");
    umpi_p2p_start(); /* the receive for device senders' nudges (src/pt2pt/gpu_late.c) */
    st = umpi_pmi_fence();
    if (st != UMPI_OK)
        return umpi_err_from_status(st, "exchanging UCX addresses failed");
    umpi_node_cpus_count();
    int err = umpi_coll_net_setup(pmi.rank, pmi.size);
    if (err != MPI_SUCCESS)
        return err;

    umpi_global.is_multi = engine_level == MPI_THREAD_MULTIPLE;
    umpi_global.state = UMPI_STATE_INITIALIZED;
    if (umpi_config.async_progress) {
        st = umpi_progress_thread_start();
        if (st != UMPI_OK)
            return umpi_err_from_status(st, "starting the asynchronous progress thread failed");
    }
    umpi_info_env_setup();
    umpi_debug(1, "initialized: rank %d of %d%s, thread level %d", pmi.rank, pmi.size,
               pmi.singleton ? " (singleton)" : "", required);
    if (provided != NULL)
        *provided = required;
    return MPI_SUCCESS;
}

int umpi_impl_init(int *argc, char ***argv)
{
    return umpi__init(MPI_THREAD_SINGLE, NULL);
}

int umpi_impl_init_thread(int *argc, char ***argv, int required, int *provided)
{
    return umpi__init(required, provided);
}

int umpi_impl_finalize(void)
{
    /* MPI 4.1 sec. 11.2.4: MPI_COMM_SELF's attributes are deleted first, while MPI is whole
     * (MPI_Finalized still says false); then MPI_COMM_WORLD's, so that nothing is left behind. */
    int attr_err = umpi_attr_finalize_builtin_comms();
    umpi_lock();
    umpi_p2p_bsend_finalize();
    void *flush;
    if (umpi_ucx_flush_start(&flush) == UMPI_OK)
        umpi_ucx_wait(flush);
    umpi_unlock();
    /* The flush may wait for a peer's progress (an endpoint this process made late, still wiring
     * up over TCP, needs the peer's answer); the process manager's fence below makes none. So
     * everyone meets in a barrier first, which serves the network while it waits: past it, every
     * flush is done and nothing needs anyone's progress. */
    int barrier_err = umpi_impl_barrier(&umpi_comm_world, UMPI_COLL_BLOCKING, NULL);
    if (barrier_err != MPI_SUCCESS)
        umpi_debug(1, "MPI_Finalize: the closing barrier failed (%d)", barrier_err);
    /* Nobody tears down endpoints that a peer may still be sending over. */
    umpi_status_t st = umpi_pmi_fence();
    umpi_progress_thread_stop(); /* serves the peers until they too are past their flush */
    umpi_global.is_multi = 0;
    umpi_global.state = UMPI_STATE_FINALIZED;
    umpi_nccl_finalize(); /* NCCL's communicators, while the CUDA contexts are there */
    umpi_p2p_finalize();
    while (umpi__nfinalizers > 0) /* the rooms above: e.g. windows the program did not free */
        umpi__finalizers[--umpi__nfinalizers]();
    umpi_ucx_finalize();
    umpi_cuda_kern_finalize();   /* GPU modules and uploaded types, while the driver is loaded */
    umpi_ucx_vm_unwatch();
    umpi_cuda_finalize();
    umpi_sched_finalize();
    umpi_request_pool_finalize();
    umpi_status_t st2 = umpi_pmi_finalize();
    umpi_objects_finalize();
    if (attr_err != MPI_SUCCESS)
        return attr_err;
    if (st != UMPI_OK)
        return umpi_err_from_status(st, "the final fence with the other ranks failed");
    if (st2 != UMPI_OK)
        return umpi_err_from_status(st2, "disconnecting from the process manager failed");
    return MPI_SUCCESS;
}
