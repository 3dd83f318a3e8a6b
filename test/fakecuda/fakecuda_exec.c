/*
 * The fake driver's work: streams, events, copies, memsets and kernels (fakecuda.c has the memory;
 * README.md here says what is modelled).
 *
 * Everything the driver may do asynchronously is queued on its stream and run later, by the
 * executor thread, which waits a random while (FAKECUDA_DELAY) before each operation and picks at
 * random among the streams whose next operation may run, so work on independent streams completes
 * in an order that changes from run to run. A query (cuEventQuery, cuStreamQuery) only looks: it
 * answers CUDA_ERROR_NOT_READY until the executor got there. A synchronization (cuStreamSynchronize,
 * cuEventSynchronize, the synchronous copies that wait) runs what it waits for itself, in an order
 * the dependencies allow, so tests do not wait for the executor's delays.
 *
 * Ordering between streams, as the driver orders them:
 * - The legacy default stream (CUstream NULL or CU_STREAM_LEGACY): an operation there waits for the
 *   work queued before it on every blocking stream (created with flags 0), and an operation on a
 *   blocking stream waits for the work queued before it on the legacy stream.
 * - A stream created CU_STREAM_NON_BLOCKING waits for nothing but its own earlier work.
 *
 * What runs when, by call (the driver's "API synchronization behavior"):
 *
 *   call                          memory                       the fake
 *   cuMemcpy*Async                host <-> host                synchronous (after the stream's work)
 *                                 anything with a GPU side     queued; a pageable host side is read
 *                                                              or written when it runs, not before
 *   cuMemcpy, cuMemcpyHtoD/DtoH   pageable host -> device      the legacy stream's work first, the
 *   (legacy stream)                                            source copied out at once, the write
 *                                                              to the device queued (may not be done
 *                                                              when the call returns)
 *                                 pinned host -> device        queued and waited for
 *                                 device -> host (any)         queued and waited for
 *                                 device -> device             queued, not waited for
 *                                 host -> host, managed        synchronous
 *   cuMemsetD8 (legacy stream)    device                       queued, not waited for
 *                                 pinned host, managed         queued and waited for
 *   cuLaunchKernel                device                       queued (the body runs on the CPU, the
 *                                                              device mappings opened around it)
 *   cuEventRecord                 -                            a marker queued behind the stream's work
 */
#include "fakecuda.h"
#include "kern_emu.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

enum { OP_COPY, OP_SET, OP_KERNEL, OP_MARK };

struct dep {
    int stream;
    unsigned long long seq; /* that stream's operation number that must be done first */
};

struct op {
    int kind;
    char *dst;
    const char *src;
    size_t n;
    unsigned char value;                 /* OP_SET */
    void *owned;                         /* a copy's source snapshot, freed when it has run */
    const struct kern_emu_entry *kern;   /* OP_KERNEL: the body, its arguments, its threads */
    void *args;
    uint64_t nthreads;
    int ndeps;
    struct dep deps[];
};

/* [0] the legacy stream; [1] the per-thread default stream (one for all threads here, blocking);
 * created streams from FIRST_CREATED on. A created stream's handle is its index + HANDLE_BASE, so
 * that it never reads as NULL, CU_STREAM_LEGACY (0x1) or CU_STREAM_PER_THREAD (0x2). */
#define NSTREAMS 128
#define FIRST_CREATED 2
#define HANDLE_BASE 0x1000
static struct stream {
    struct op **q;
    size_t head, tail, cap;            /* queued [head, tail), a ring of cap */
    unsigned long long done, queued;   /* operations run, operations queued */
    int live, blocking;
} streams[NSTREAMS] = { [0] = { .live = 1 }, [1] = { .live = 1, .blocking = 1 } };

struct CUevent_st {
    int stream;                        /* -1: never recorded */
    unsigned long long seq;
};

static pthread_cond_t work_cv = PTHREAD_COND_INITIALIZER;
static int executor_started;

/* ---- streams and their queues ----------------------------------------------------------------- */

static int stream_index(CUstream s)
{
    uintptr_t h = (uintptr_t) s;
    if (h == 0 || h == 1)
        return 0;
    if (h == 2)
        return 1;
    if (h < HANDLE_BASE + FIRST_CREATED || h >= HANDLE_BASE + NSTREAMS || !streams[h - HANDLE_BASE].live)
        return -1;
    return (int) (h - HANDLE_BASE);
}

/* Queues op on stream s with the dependencies the stream's kind implies. Under the lock. */
static CUresult enqueue(int s, struct op *o)
{
    struct stream *st = &streams[s];
    if (st->tail - st->head == st->cap) {
        size_t c = st->cap ? 2 * st->cap : 64;
        struct op **q = malloc(c * sizeof(*q));
        if (q == NULL)
            return FAKE_ERR_OUT_OF_MEMORY;
        for (size_t i = st->head; i < st->tail; i++)
            q[i - st->head] = st->q[i % st->cap];
        st->tail -= st->head;
        st->head = 0;
        free(st->q);
        st->q = q;
        st->cap = c;
    }
    st->q[st->tail++ % st->cap] = o;
    st->queued++;
    pthread_cond_signal(&work_cv);
    return 0;
}

/* A new operation for stream s, its implicit dependencies filled in (legacy-stream semantics). */
static struct op *op_new(int s, int kind)
{
    struct op *o = calloc(1, sizeof(*o) + NSTREAMS * sizeof(struct dep));
    if (o == NULL)
        return NULL;
    o->kind = kind;
    if (s == 0) {
        for (int b = 1; b < NSTREAMS; b++)
            if (streams[b].live && streams[b].blocking && streams[b].queued > streams[b].done)
                o->deps[o->ndeps++] = (struct dep){ b, streams[b].queued };
    } else if (streams[s].blocking && streams[0].queued > streams[0].done) {
        o->deps[o->ndeps++] = (struct dep){ 0, streams[0].queued };
    }
    return o;
}

static int ready(const struct op *o)
{
    for (int i = 0; i < o->ndeps; i++)
        if (streams[o->deps[i].stream].done < o->deps[i].seq)
            return 0;
    return 1;
}

static void run_op(struct op *o)
{
    switch (o->kind) {
    case OP_COPY:
        memmove(o->dst, o->src, o->n);
        break;
    case OP_SET:
        memset(o->dst, o->value, o->n);
        break;
    case OP_KERNEL:
        fk_device_window(1);
        o->kern->run(o->args, o->nthreads);
        fk_device_window(0);
        break;
    default:
        break;
    }
    free(o->owned);
    free(o->args);
    free(o);
}

/* Runs stream s's next operation (its dependencies done). Under the lock. */
static void run_head(int s)
{
    struct stream *st = &streams[s];
    struct op *o = st->q[st->head++ % st->cap];
    if (st->head == st->tail)
        st->head = st->tail = 0;
    run_op(o);
    st->done++;
}

/* Runs stream s up to its operation `seq`, and first whatever those wait for. Dependencies point
 * only at work queued earlier, so this ends. Under the lock. */
static void drain(int s, unsigned long long seq)
{
    struct stream *st = &streams[s];
    while (st->done < seq) {
        const struct op *o = st->q[st->head % st->cap];
        for (int i = 0; i < o->ndeps; i++)
            drain(o->deps[i].stream, o->deps[i].seq);
        run_head(s);
    }
}

void fk_drain_all(void)
{
    for (int s = 0; s < NSTREAMS; s++)
        if (streams[s].queued > streams[s].done)
            drain(s, streams[s].queued);
}

/* A marker behind stream s's work: its number, once done, says everything before it is done. */
static CUresult mark(int s, unsigned long long *seq)
{
    struct op *o = op_new(s, OP_MARK);
    if (o == NULL)
        return FAKE_ERR_OUT_OF_MEMORY;
    CUresult rc = enqueue(s, o);
    if (rc != 0) {
        free(o);
        return rc;
    }
    *seq = streams[s].queued;
    return 0;
}

/* ---- the executor ----------------------------------------------------------------------------- */

static int pick_ready(unsigned *seed)
{
    int ready_streams[NSTREAMS], n = 0;
    for (int s = 0; s < NSTREAMS; s++)
        if (streams[s].head < streams[s].tail && ready(streams[s].q[streams[s].head % streams[s].cap]))
            ready_streams[n++] = s;
    return n == 0 ? -1 : ready_streams[rand_r(seed) % (unsigned) n];
}

static void *executor(void *arg)
{
    (void) arg;
    unsigned seed = fk.seed;
    pthread_mutex_lock(&fk.lock);
    for (;;) {
        while (pick_ready(&seed) < 0)
            pthread_cond_wait(&work_cv, &fk.lock);
        if (fk.delay_us > 0) {
            pthread_mutex_unlock(&fk.lock);
            struct timespec ts = { 0, 1000L * (long) (rand_r(&seed) % (unsigned) (fk.delay_us + 1)) };
            nanosleep(&ts, NULL);
            pthread_mutex_lock(&fk.lock);
        }
        int s = pick_ready(&seed);
        if (s >= 0)
            run_head(s);
    }
    return NULL;
}

static void start_executor(void)
{
    pthread_t t;
    pthread_attr_t a;
    pthread_attr_init(&a);
    pthread_attr_setdetachstate(&a, PTHREAD_CREATE_DETACHED);
    executor_started = pthread_create(&t, &a, executor, NULL) == 0;
    pthread_attr_destroy(&a);
    if (!executor_started)
        fprintf(stderr, "fakecuda: cannot start the executor thread: queued work runs only when waited for\n");
}

/* fork: the child has no executor thread (and a lock the parent's threads may have held). */
static void before_fork(void)
{
    pthread_mutex_lock(&fk.lock);
}

static void after_fork_parent(void)
{
    pthread_mutex_unlock(&fk.lock);
}

static void after_fork_child(void)
{
    pthread_mutex_init(&fk.lock, NULL);
    pthread_cond_init(&work_cv, NULL);
    if (executor_started)
        start_executor();
}

void fk_exec_init(void)
{
    pthread_atfork(before_fork, after_fork_parent, after_fork_child);
    start_executor();
}

/* ---- copies and memsets ----------------------------------------------------------------------- */

enum { ASYNC, SYNC };

static CUresult copy(uintptr_t dst, uintptr_t src, size_t n, CUstream s, int api)
{
    if (!fk_need_ctx())
        return FAKE_ERR_INVALID_CONTEXT;
    if (n == 0)
        return 0;
    pthread_mutex_lock(&fk.lock);
    int si = api == SYNC ? 0 : stream_index(s);
    int dcls, scls;
    char *d = fk_resolve(dst, n, &dcls);
    const char *sp = fk_resolve(src, n, &scls);
    CUresult rc = 0;
    unsigned long long seq;
    struct op *o = NULL;
    if (si < 0) {
        rc = FAKE_ERR_INVALID_HANDLE;
        goto out;
    }
    if (d == NULL || sp == NULL) {
        rc = FAKE_ERR_INVALID_VALUE;
        goto out;
    }
    fk.counts.copies++;
    int gpu = dcls == CL_DEVICE || scls == CL_DEVICE;
    int managed = dcls == CL_MANAGED || scls == CL_MANAGED;
    if (!gpu && (api == SYNC || !managed)) {
        /* host to host: synchronous, after the stream's earlier work */
        if ((rc = mark(si, &seq)) == 0) {
            drain(si, seq);
            memmove(d, sp, n);
        }
        goto out;
    }
    if ((o = op_new(si, OP_COPY)) == NULL) {
        rc = FAKE_ERR_OUT_OF_MEMORY;
        goto out;
    }
    o->dst = d;
    o->src = sp;
    o->n = n;
    int wait = 0;
    if (api == SYNC) {
        if (scls == CL_PAGEABLE && dcls == CL_DEVICE) {
            /* staged: the legacy stream's work first, the source taken now, the DMA later */
            if ((rc = mark(0, &seq)) != 0)
                goto out;
            drain(0, seq);
            if ((o->owned = malloc(n)) == NULL) {
                rc = FAKE_ERR_OUT_OF_MEMORY;
                goto out;
            }
            memcpy(o->owned, sp, n);
            o->src = o->owned;
            o->ndeps = 0;
        } else if (!(scls == CL_DEVICE && dcls == CL_DEVICE)) {
            wait = 1; /* pinned -> device, device -> host, managed: returns when done */
        }
    }
    if ((rc = enqueue(si, o)) != 0)
        goto out;
    o = NULL;
    if (wait)
        drain(si, streams[si].queued);
out:
    if (o != NULL) {
        free(o->owned);
        free(o);
    }
    pthread_mutex_unlock(&fk.lock);
    return rc;
}

EXPORT CUresult cuMemcpyAsync(CUdeviceptr dst, CUdeviceptr src, size_t n, CUstream s)
{
    return copy(dst, src, n, s, ASYNC);
}

EXPORT CUresult cuMemcpyHtoDAsync_v2(CUdeviceptr dst, const void *src, size_t n, CUstream s)
{
    return copy(dst, (uintptr_t) src, n, s, ASYNC);
}

EXPORT CUresult cuMemcpyDtoHAsync_v2(void *dst, CUdeviceptr src, size_t n, CUstream s)
{
    return copy((uintptr_t) dst, src, n, s, ASYNC);
}

EXPORT CUresult cuMemcpyDtoDAsync_v2(CUdeviceptr dst, CUdeviceptr src, size_t n, CUstream s)
{
    return copy(dst, src, n, s, ASYNC);
}

EXPORT CUresult cuMemcpy(CUdeviceptr dst, CUdeviceptr src, size_t n)
{
    return copy(dst, src, n, NULL, SYNC);
}

EXPORT CUresult cuMemcpyHtoD_v2(CUdeviceptr dst, const void *src, size_t n)
{
    return copy(dst, (uintptr_t) src, n, NULL, SYNC);
}

EXPORT CUresult cuMemcpyDtoH_v2(void *dst, CUdeviceptr src, size_t n)
{
    return copy((uintptr_t) dst, src, n, NULL, SYNC);
}

EXPORT CUresult cuMemcpyDtoD_v2(CUdeviceptr dst, CUdeviceptr src, size_t n)
{
    return copy(dst, src, n, NULL, SYNC);
}

/* The synchronous memset: asynchronous for device memory, waited for on pinned host and managed. */
static CUresult set(CUdeviceptr dst, unsigned char v, size_t n, CUstream s, int api)
{
    if (!fk_need_ctx())
        return FAKE_ERR_INVALID_CONTEXT;
    if (n == 0)
        return 0;
    pthread_mutex_lock(&fk.lock);
    int si = api == SYNC ? 0 : stream_index(s), cls;
    char *d = fk_resolve(dst, n, &cls);
    CUresult rc = si < 0 ? FAKE_ERR_INVALID_HANDLE : d == NULL || cls == CL_PAGEABLE ? FAKE_ERR_INVALID_VALUE : 0;
    struct op *o = rc == 0 ? op_new(si, OP_SET) : NULL;
    if (rc == 0 && o == NULL)
        rc = FAKE_ERR_OUT_OF_MEMORY;
    if (rc == 0) {
        o->dst = d;
        o->n = n;
        o->value = v;
        rc = enqueue(si, o);
        if (rc != 0)
            free(o);
        else if (api == SYNC && cls != CL_DEVICE)
            drain(si, streams[si].queued);
    }
    pthread_mutex_unlock(&fk.lock);
    return rc;
}

EXPORT CUresult cuMemsetD8_v2(CUdeviceptr dst, unsigned char v, size_t n)
{
    return set(dst, v, n, NULL, SYNC);
}

EXPORT CUresult cuMemsetD8Async(CUdeviceptr dst, unsigned char v, size_t n, CUstream s)
{
    return set(dst, v, n, s, ASYNC);
}

/* ---- streams and events ----------------------------------------------------------------------- */

EXPORT CUresult cuStreamCreate(CUstream *s, unsigned int flags)
{
    if (!fk_need_ctx())
        return FAKE_ERR_INVALID_CONTEXT;
    pthread_mutex_lock(&fk.lock);
    for (int i = FIRST_CREATED; i < NSTREAMS; i++) {
        struct stream *st = &streams[i];
        if (!st->live && st->head == st->tail) {
            free(st->q);
            memset(st, 0, sizeof(*st));
            st->live = 1;
            st->blocking = (flags & UMPI_CU_STREAM_NON_BLOCKING) == 0;
            fk.counts.streams++;
            pthread_mutex_unlock(&fk.lock);
            *s = (CUstream) (uintptr_t) (HANDLE_BASE + i);
            return 0;
        }
    }
    pthread_mutex_unlock(&fk.lock);
    return FAKE_ERR_OUT_OF_MEMORY;
}

/* The driver returns at once; the work queued before still runs (here: now). */
EXPORT CUresult cuStreamDestroy_v2(CUstream s)
{
    pthread_mutex_lock(&fk.lock);
    int si = stream_index(s);
    CUresult rc = si < FIRST_CREATED ? FAKE_ERR_INVALID_HANDLE : 0;
    if (rc == 0) {
        drain(si, streams[si].queued);
        streams[si].live = 0;
        fk.counts.streams--;
    }
    pthread_mutex_unlock(&fk.lock);
    return rc;
}

EXPORT CUresult cuStreamSynchronize(CUstream s)
{
    if (!fk_need_ctx())
        return FAKE_ERR_INVALID_CONTEXT;
    pthread_mutex_lock(&fk.lock);
    int si = stream_index(s);
    if (si >= 0)
        drain(si, streams[si].queued); /* the work queued on it (and what that waits for), no more */
    pthread_mutex_unlock(&fk.lock);
    return si >= 0 ? 0 : FAKE_ERR_INVALID_HANDLE;
}

EXPORT CUresult cuStreamQuery(CUstream s)
{
    pthread_mutex_lock(&fk.lock);
    int si = stream_index(s);
    CUresult rc = si < 0 ? FAKE_ERR_INVALID_HANDLE : streams[si].done < streams[si].queued ? FAKE_ERR_NOT_READY : 0;
    pthread_mutex_unlock(&fk.lock);
    return rc;
}

EXPORT CUresult cuEventCreate(CUevent *e, unsigned int flags)
{
    (void) flags;
    if (!fk_need_ctx())
        return FAKE_ERR_INVALID_CONTEXT;
    struct CUevent_st *ev = calloc(1, sizeof(*ev));
    if (ev == NULL)
        return FAKE_ERR_OUT_OF_MEMORY;
    ev->stream = -1;
    pthread_mutex_lock(&fk.lock);
    fk.counts.events++;
    pthread_mutex_unlock(&fk.lock);
    *e = ev;
    return 0;
}

EXPORT CUresult cuEventDestroy_v2(CUevent e)
{
    if (e == NULL)
        return FAKE_ERR_INVALID_HANDLE;
    pthread_mutex_lock(&fk.lock);
    fk.counts.events--;
    pthread_mutex_unlock(&fk.lock);
    free(e);
    return 0;
}

EXPORT CUresult cuEventRecord(CUevent e, CUstream s)
{
    if (!fk_need_ctx())
        return FAKE_ERR_INVALID_CONTEXT;
    if (e == NULL)
        return FAKE_ERR_INVALID_HANDLE;
    pthread_mutex_lock(&fk.lock);
    int si = stream_index(s);
    unsigned long long seq = 0;
    CUresult rc = si < 0 ? FAKE_ERR_INVALID_HANDLE : mark(si, &seq);
    if (rc == 0) {
        e->stream = si;
        e->seq = seq;
    }
    pthread_mutex_unlock(&fk.lock);
    return rc;
}

EXPORT CUresult cuEventQuery(CUevent e)
{
    if (e == NULL)
        return FAKE_ERR_INVALID_HANDLE;
    pthread_mutex_lock(&fk.lock);
    CUresult rc = e->stream >= 0 && streams[e->stream].done < e->seq ? FAKE_ERR_NOT_READY : 0;
    pthread_mutex_unlock(&fk.lock);
    return rc;
}

EXPORT CUresult cuEventSynchronize(CUevent e)
{
    if (e == NULL)
        return FAKE_ERR_INVALID_HANDLE;
    pthread_mutex_lock(&fk.lock);
    if (e->stream >= 0)
        drain(e->stream, e->seq);
    pthread_mutex_unlock(&fk.lock);
    return 0;
}

EXPORT CUresult cuStreamWaitEvent(CUstream s, CUevent e, unsigned int flags)
{
    (void) flags;
    if (!fk_need_ctx())
        return FAKE_ERR_INVALID_CONTEXT;
    pthread_mutex_lock(&fk.lock);
    int si = stream_index(s);
    CUresult rc = si < 0 || e == NULL ? FAKE_ERR_INVALID_HANDLE : 0;
    struct op *o = rc == 0 ? op_new(si, OP_MARK) : NULL;
    if (rc == 0 && o == NULL)
        rc = FAKE_ERR_OUT_OF_MEMORY;
    if (rc == 0) {
        if (e->stream >= 0)
            o->deps[o->ndeps++] = (struct dep){ e->stream, e->seq };
        if ((rc = enqueue(si, o)) != 0)
            free(o);
    }
    pthread_mutex_unlock(&fk.lock);
    return rc;
}

EXPORT CUresult cuCtxSynchronize(void)
{
    if (!fk_need_ctx())
        return FAKE_ERR_INVALID_CONTEXT;
    pthread_mutex_lock(&fk.lock);
    fk_drain_all();
    pthread_mutex_unlock(&fk.lock);
    return 0;
}

/* ---- modules and kernels ---------------------------------------------------------------------- */

/*
 * umpi's kernels run on the CPU: a module is any image (the fake cannot read a fatbin), and its
 * functions are those of test/unit/kern_emu.cc, the same bodies (src/cuda/kern_body.h) that
 * src/cuda/kernels.cu wraps for the GPU. A launch queues the body with a copy of its argument
 * block; it runs, when its turn on the stream comes, with every device allocation opened at its
 * GPU address for the duration. FAKECUDA_KERNELS=0 refuses every image, as a driver refuses one
 * built for other GPUs.
 */
struct CUmod_st {
    int magic;
};
static struct CUmod_st the_module = { 0x6b65726e };

EXPORT CUresult cuModuleLoadData(CUmodule *mod, const void *image)
{
    (void) image;
    if (!fk_need_ctx())
        return FAKE_ERR_INVALID_CONTEXT;
    if (strcmp(fk_env("FAKECUDA_KERNELS", "1"), "0") == 0) {
        *mod = NULL;
        return FAKE_ERR_NO_BINARY_FOR_GPU;
    }
    *mod = &the_module;
    return 0;
}

EXPORT CUresult cuModuleUnload(CUmodule mod)
{
    return mod == &the_module ? 0 : FAKE_ERR_INVALID_HANDLE;
}

EXPORT CUresult cuModuleGetFunction(CUfunction *fn, CUmodule mod, const char *name)
{
    if (mod != &the_module)
        return FAKE_ERR_INVALID_HANDLE;
    const struct kern_emu_entry *k = kern_emu_find(name);
    *fn = (CUfunction) (uintptr_t) k;
    return k != NULL ? 0 : FAKE_ERR_NOT_FOUND;
}

EXPORT CUresult cuLaunchKernel(CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by,
                               unsigned bz, unsigned shmem, CUstream s, void **params, void **extra)
{
    (void) shmem;
    (void) extra;
    const struct kern_emu_entry *k = (const struct kern_emu_entry *) (uintptr_t) f;
    if (!fk_need_ctx())
        return FAKE_ERR_INVALID_CONTEXT;
    if (k == NULL || params == NULL || gx == 0 || bx == 0 || gy * gz * by * bz != 1)
        return FAKE_ERR_INVALID_VALUE;
    pthread_mutex_lock(&fk.lock);
    int si = stream_index(s);
    CUresult rc = si < 0 ? FAKE_ERR_INVALID_HANDLE : 0;
    struct op *o = rc == 0 ? op_new(si, OP_KERNEL) : NULL;
    if (rc == 0 && (o == NULL || (o->args = malloc(k->args_size)) == NULL))
        rc = FAKE_ERR_OUT_OF_MEMORY;
    if (rc == 0) {
        memcpy(o->args, params[0], k->args_size); /* the driver copies the arguments at the launch */
        o->kern = k;
        o->nthreads = (uint64_t) gx * bx;
        rc = enqueue(si, o);
    }
    if (rc != 0 && o != NULL) {
        free(o->args);
        free(o);
    }
    pthread_mutex_unlock(&fk.lock);
    return rc;
}
