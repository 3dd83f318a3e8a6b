/*
 * NCCL loaded with dlopen, its communicators and the wait for what runs on their streams
 * (umpi_cuda_nccl.h). Which collectives go to NCCL is src/coll/nccl.c's decision.
 *
 *   first use -> UMPI_NCCL? -> dlopen UMPI_NCCL_LIBRARY (libnccl.so.2) -> dlsym the table ->
 *                ncclGetVersion >= 2.10 -> usable (or not, for the rest of the process)
 *   create    -> context of the buffers' device current -> ncclCommInitRank -> a stream of ours
 *   wait      -> cuStreamQuery until done, ncclCommGetAsyncError between polls and after
 *   finalize  -> ncclCommDestroy + cuStreamDestroy of every live one, before the contexts go
 */
#include "cuda/umpi_cuda_nccl.h"
#include "core/umpi_progress.h"
#include "cuda/umpi_cuda.h"
#include "cuda/umpi_cuda_copy.h"

#include <dlfcn.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct umpi_nccl_lib umpi_nccl;

static struct {
    int tried;      /* the load was attempted (its outcome stays for the process) */
    int usable;
    int version;
    char why[256];  /* why not usable, or what was loaded */
} umpi__nccl;
static void *umpi__lib;
static umpi_nccl_comm_t *umpi__live; /* the communicators not destroyed yet */

int umpi_nccl_mode(void)
{
    int m = umpi_cuda_mode_parse(umpi_config.nccl);
    return m < 0 ? 2 : m; /* not understood: auto (umpi_nccl_init warned once) */
}

static int umpi__unusable(const char *fmt, ...) UMPI_PRINTF(1, 2);
static int umpi__unusable(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(umpi__nccl.why, sizeof(umpi__nccl.why), fmt, ap);
    va_end(ap);
    memset(&umpi_nccl, 0, sizeof(umpi_nccl));
    /* umpi__lib stays open: a library that ran code (ncclGetVersion) may have left threads or
     * exit handlers behind, as the CUDA driver (loader.c) */
    umpi__nccl.usable = 0;
    umpi_debug(1, "nccl: not used: %s", umpi__nccl.why);
    return 0;
}

static int umpi__load(void)
{
    const char *name = umpi_config.nccl_library != NULL && *umpi_config.nccl_library ? umpi_config.nccl_library
                                                                                     : "libnccl.so.2";
    umpi__nccl.tried = 1;
    if (!umpi_cuda_active)
        return umpi__unusable("CUDA is not in use (%s)", umpi_config.cuda);
    umpi__lib = dlopen(name, RTLD_NOW | RTLD_LOCAL);
    if (umpi__lib == NULL) {
        const char *err = dlerror();
        return umpi__unusable("%s could not be loaded (%s)", name, err ? err : "?");
    }
#define UMPI__NCCL_SYM(fn, req, params)                                                            \
    *(void **) &umpi_nccl.fn = dlsym(umpi__lib, #fn);                                              \
    if (umpi_nccl.fn == NULL && (req))                                                             \
        return umpi__unusable("%s has no %s", name, #fn);
    UMPI_NCCL_FUNCTIONS(UMPI__NCCL_SYM)
#undef UMPI__NCCL_SYM
    *(void **) &umpi_nccl.ncclGetErrorString = dlsym(umpi__lib, "ncclGetErrorString");
    *(void **) &umpi_nccl.ncclGetLastError = dlsym(umpi__lib, "ncclGetLastError");
    if (umpi_nccl.ncclGetErrorString == NULL)
        return umpi__unusable("%s has no ncclGetErrorString", name);
    int v = 0;
    ncclResult_t r = umpi_nccl.ncclGetVersion(&v);
    if (r != UMPI_NCCL_SUCCESS)
        return umpi__unusable("ncclGetVersion of %s failed: %s", name, umpi_nccl.ncclGetErrorString(r));
    /* codes before 2.9 were major * 1000 + minor * 100 + patch: all below the minimum */
    if (v < UMPI_NCCL_MIN_VERSION)
        return umpi__unusable("%s is NCCL version code %d; umpi needs 2.10 or later (code %d)", name, v,
                              UMPI_NCCL_MIN_VERSION);
    umpi__nccl.version = v;
    umpi__nccl.usable = 1;
    snprintf(umpi__nccl.why, sizeof(umpi__nccl.why), "%s, NCCL %d.%d.%d", name, v / 10000, v / 100 % 100, v % 100);
    umpi_debug(1, "nccl: loaded %s", umpi__nccl.why);
    return 1;
}

int umpi_nccl_available(const char **why)
{
    if (!umpi__nccl.tried && umpi_nccl_mode() != 0)
        umpi__load();
    else if (umpi_nccl_mode() == 0)
        snprintf(umpi__nccl.why, sizeof(umpi__nccl.why), "UMPI_NCCL=0");
    if (why != NULL)
        *why = umpi__nccl.why;
    return umpi__nccl.usable;
}

umpi_status_t umpi_nccl_init(void)
{
    if (umpi_cuda_mode_parse(umpi_config.nccl) < 0)
        umpi_log("warning", "UMPI_NCCL=\"%s\": not auto, 0 or 1; using auto", umpi_config.nccl);
    if (umpi_nccl_mode() != 1)
        return UMPI_OK;
    if (!umpi_nccl_available(NULL)) {
        umpi_status_msg("UMPI_NCCL=1 but NCCL cannot be used: %s", umpi__nccl.why);
        return UMPI_ERR_OTHER;
    }
    return UMPI_OK;
}

const char *umpi_nccl_strerror(ncclResult_t r, ncclComm_t comm, char *buf, size_t len)
{
    const char *text = umpi_nccl.ncclGetErrorString ? umpi_nccl.ncclGetErrorString(r) : NULL;
    const char *last = umpi_nccl.ncclGetLastError ? umpi_nccl.ncclGetLastError(comm) : NULL;
    snprintf(buf, len, "%s (ncclResult_t %d)%s%s", text ? text : "NCCL error", (int) r,
             last && *last ? ": " : "", last && *last ? last : "");
    return buf;
}

static umpi_status_t umpi__fail(const char *what, ncclResult_t r, ncclComm_t comm)
{
    char buf[512];
    umpi_status_msg("%s failed: %s", what, umpi_nccl_strerror(r, comm, buf, sizeof(buf)));
    return UMPI_ERR_OTHER;
}

umpi_status_t umpi_nccl_comm_create(const ncclUniqueId *id, int nranks, int rank, int device,
                                    umpi_nccl_comm_t **out)
{
    *out = NULL;
    umpi_nccl_comm_t *nc = calloc(1, sizeof(*nc));
    if (nc == NULL)
        return UMPI_ERR_NOMEM;
    nc->device = device;
    nc->nranks = nranks;
    nc->rank = rank;
    umpi_status_t st = umpi_cuda_ctx_ensure(device);
    if (st != UMPI_OK)
        goto fail;
    ncclResult_t r = umpi_nccl.ncclCommInitRank(&nc->comm, nranks, *id, rank);
    if (r != UMPI_NCCL_SUCCESS) {
        nc->comm = NULL;
        st = umpi__fail("ncclCommInitRank", r, NULL);
        goto fail;
    }
    CUresult cr = umpi_cuda_drv.cuStreamCreate(&nc->stream, UMPI_CUDA_STREAM_FLAGS);
    if (cr != UMPI_CUDA_SUCCESS) {
        nc->stream = NULL;
        st = umpi_cuda_fail("cuStreamCreate for NCCL", cr);
        goto fail;
    }
    nc->next = umpi__live;
    if (umpi__live != NULL)
        umpi__live->prev = nc;
    umpi__live = nc;
    *out = nc;
    return UMPI_OK;
fail:
    if (nc->comm != NULL)
        umpi_nccl.ncclCommDestroy(nc->comm);
    free(nc);
    return st;
}

/* Releases nc's NCCL communicator and stream and takes it off the live list. */
static void umpi__release(umpi_nccl_comm_t *nc, int abort)
{
    if (nc->comm == NULL)
        return;
    int ctx = umpi_cuda_ctx_ensure(nc->device) == UMPI_OK;
    /* what runs on the stream finishes first, unless NCCL failed (abort stops its kernels) */
    if (ctx && !abort && nc->stream != NULL)
        umpi_cuda_drv.cuStreamSynchronize(nc->stream);
    ncclResult_t r = abort ? umpi_nccl.ncclCommAbort(nc->comm) : umpi_nccl.ncclCommDestroy(nc->comm);
    if (r != UMPI_NCCL_SUCCESS) {
        char buf[256];
        umpi_debug(1, "nccl: %s: %s", abort ? "ncclCommAbort" : "ncclCommDestroy",
                   umpi_nccl_strerror(r, NULL, buf, sizeof(buf)));
    }
    nc->comm = NULL;
    if (ctx && nc->stream != NULL)
        umpi_cuda_drv.cuStreamDestroy(nc->stream);
    nc->stream = NULL;
    if (nc->prev != NULL)
        nc->prev->next = nc->next;
    else
        umpi__live = nc->next;
    if (nc->next != NULL)
        nc->next->prev = nc->prev;
    nc->next = nc->prev = NULL;
}

void umpi_nccl_comm_destroy(umpi_nccl_comm_t *nc, int abort)
{
    if (nc == NULL)
        return;
    umpi__release(nc, abort);
    free(nc);
}

umpi_status_t umpi_nccl_wait(umpi_nccl_comm_t *nc, const char *what)
{
    umpi_waiter_t w = {0};
    ncclResult_t async = UMPI_NCCL_SUCCESS, r;
    for (;;) {
        CUresult cr = umpi_cuda_drv.cuStreamQuery(nc->stream);
        if (cr == UMPI_CUDA_SUCCESS)
            break;
        if (cr != UMPI_CUDA_ERROR_NOT_READY) {
            umpi_status_t st = umpi_cuda_fail(what, cr);
            umpi__release(nc, 1);
            return st;
        }
        /* a peer that failed or left makes NCCL's kernels wait forever: its error comes here */
        r = umpi_nccl.ncclCommGetAsyncError(nc->comm, &async);
        if (r != UMPI_NCCL_SUCCESS)
            async = r;
        if (async != UMPI_NCCL_SUCCESS && async != UMPI_NCCL_IN_PROGRESS)
            break;
        umpi_progress_step(&w);
    }
    if (async == UMPI_NCCL_SUCCESS || async == UMPI_NCCL_IN_PROGRESS) {
        r = umpi_nccl.ncclCommGetAsyncError(nc->comm, &async);
        if (r != UMPI_NCCL_SUCCESS)
            async = r;
    }
    if (async != UMPI_NCCL_SUCCESS && async != UMPI_NCCL_IN_PROGRESS) {
        char buf[160];
        snprintf(buf, sizeof(buf), "%s (asynchronous error)", what);
        umpi_status_t st = umpi__fail(buf, async, nc->comm);
        umpi__release(nc, 1);
        return st;
    }
    return UMPI_OK;
}

void umpi_nccl_finalize(void)
{
    int n = 0;
    while (umpi__live != NULL) {
        umpi__release(umpi__live, 0);
        n++;
    }
    if (n > 0)
        umpi_debug(2, "nccl: %d communicator(s) destroyed at MPI_Finalize", n);
    /* libnccl stays loaded once it made a communicator: its threads and exit handlers may remain */
}

void umpi_nccl_describe(char *buf, size_t len)
{
    const char *why = NULL;
    if (umpi_nccl_available(&why))
        snprintf(buf, len, "UMPI_NCCL=%s; %s: blocking allreduce, bcast, reduce, allgather, reduce_scatter_block "
                 "on device buffers from UMPI_NCCL_THRESH=%zu bytes", umpi_config.nccl, why, umpi_config.nccl_thresh);
    else
        snprintf(buf, len, "UMPI_NCCL=%s; not used: %s", umpi_config.nccl, why);
}
