/*
 * The staged-transfer scheduler and its pinned-buffer pool (interface: umpi_cuda_pipe.h).
 *
 * A message of N bytes is cut into ceil(N / C) chunks (C = UMPI_CUDA_PIPELINE_CHUNK). Each chunk
 * borrows one of K staging buffers for its whole trip; chunk i's copies go on stream i mod S. With
 * K >= 3 the three stages of neighbouring chunks overlap:
 *
 *   sender    chunk i+1: D2H copy     chunk i: network send     (chunk i-1: its buffer freed)
 *   receiver  chunk i+1: network recv chunk i: H2D copy
 *
 * Each staging buffer is a small state machine (the states are in umpi_cuda_pipe.h):
 *
 *   sender    FREE --copy issued--> D2H --event done--> COPIED --its turn--> NET --net done--> FREE
 *   receiver  FREE --recv posted--> NET --net done--> RECVD --copy issued--> H2D --event done--> FREE
 *
 * The events are: a copy's cuEventQuery turning SUCCESS (polled in progress), and the network's
 * completion (umpi_cuda_pipe_net_done, which only records it: progress acts on it, so a network
 * completing inside its own start call re-enters nothing). A buffer goes back to FREE only when
 * every operation on it has finished: both copies and the network on the sender, the network and
 * the copy on the receiver; only then can the next chunk be copied into it. Network operations
 * start in chunk order on both sides (a sender chunk copied early waits in COPIED), so one ordered
 * channel matches them; copies complete in any order across streams.
 *
 * Errors: the first failing driver call, event query or network operation is kept (status, why);
 * from then on nothing new starts and buffers without an operation in flight are freed at once,
 * but the transfer finishes only when the operations already in flight have finished, so that no
 * staging buffer returns to the pool while a DMA or the network still uses it.
 *
 * The pool keeps staging buffers (cuMemHostAlloc, pinned, with one event each) and up to 8
 * streams from transfer to transfer: pinning memory costs milliseconds, a transfer must not.
 */
#include "cuda/umpi_cuda_pipe.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- the pool -------------------------------------------------------------------------------- */

static struct umpi_cuda_stage *umpi__free_stages;
static size_t umpi__stages_out, umpi__stages_pooled;
static CUstream umpi__streams[UMPI_CUDA_PIPE_MAX_STREAMS];
static unsigned umpi__nstreams;
static pthread_mutex_t umpi__pool_lock = PTHREAD_MUTEX_INITIALIZER;

static void umpi__lock(void)
{
    if (umpi_unlikely(umpi_global.is_multi))
        pthread_mutex_lock(&umpi__pool_lock);
}

static void umpi__unlock(void)
{
    if (umpi_unlikely(umpi_global.is_multi))
        pthread_mutex_unlock(&umpi__pool_lock);
}

static umpi_status_t umpi__cu_fail(const char *what, CUresult r)
{
    char buf[128];
    umpi_status_msg("%s failed: %s", what, umpi_cuda_strerror(r, buf, sizeof(buf)));
    return UMPI_ERR_OTHER;
}

static void umpi__stage_free(struct umpi_cuda_stage *s)
{
    if (s->event != NULL)
        umpi_cuda_drv.cuEventDestroy(s->event);
    if (s->host != NULL)
        umpi_cuda_drv.cuMemFreeHost(s->host);
    free(s);
}

umpi_status_t umpi_cuda_stage_get(size_t size, struct umpi_cuda_stage **out)
{
    umpi__lock();
    for (struct umpi_cuda_stage **pp = &umpi__free_stages; *pp != NULL; pp = &(*pp)->next) {
        if ((*pp)->size >= size) {
            *out = *pp;
            *pp = (*pp)->next;
            (*out)->next = NULL;
            umpi__stages_pooled--;
            umpi__stages_out++;
            umpi__unlock();
            return UMPI_OK;
        }
    }
    umpi__unlock();

    struct umpi_cuda_stage *s = calloc(1, sizeof(*s));
    CUresult r;
    if (s == NULL) {
        umpi_status_msg("no memory for a staging buffer descriptor");
        return UMPI_ERR_NOMEM;
    }
    s->size = size;
    r = umpi_cuda_drv.cuMemHostAlloc(&s->host, size, UMPI_CU_MEMHOSTALLOC_PORTABLE);
    if (r != UMPI_CUDA_SUCCESS) {
        s->host = NULL;
        umpi__stage_free(s);
        return umpi__cu_fail("cuMemHostAlloc of a pinned staging buffer", r);
    }
    r = umpi_cuda_drv.cuEventCreate(&s->event, UMPI_CU_EVENT_DISABLE_TIMING);
    if (r != UMPI_CUDA_SUCCESS) {
        s->event = NULL;
        umpi__stage_free(s);
        return umpi__cu_fail("cuEventCreate for a staging buffer", r);
    }
    umpi_cuda_slow_path(UMPI_CUDA_STAT_stage_allocs, "cuda: pinned staging buffer of %zu bytes allocated", size);
    umpi__lock();
    umpi__stages_out++;
    umpi__unlock();
    *out = s;
    return UMPI_OK;
}

void umpi_cuda_stage_put(struct umpi_cuda_stage *s)
{
    umpi__lock();
    s->next = umpi__free_stages;
    umpi__free_stages = s;
    umpi__stages_out--;
    umpi__stages_pooled++;
    umpi__unlock();
}

umpi_status_t umpi_cuda_stage_streams(unsigned n, CUstream *out)
{
    umpi_status_t st = UMPI_OK;
    if (n > UMPI_CUDA_PIPE_MAX_STREAMS)
        n = UMPI_CUDA_PIPE_MAX_STREAMS;
    umpi__lock();
    while (umpi__nstreams < n) {
        CUresult r = umpi_cuda_drv.cuStreamCreate(&umpi__streams[umpi__nstreams], UMPI_CUDA_STREAM_FLAGS);
        if (r != UMPI_CUDA_SUCCESS) {
            st = umpi__cu_fail("cuStreamCreate for staged copies", r);
            break;
        }
        umpi__nstreams++;
    }
    if (st == UMPI_OK)
        memcpy(out, umpi__streams, n * sizeof(*out));
    umpi__unlock();
    return st;
}

void umpi_cuda_stage_finalize(void)
{
    umpi__lock();
    if (umpi__stages_out != 0)
        umpi_debug(1, "cuda: %zu staging buffer(s) still in use at finalize", umpi__stages_out);
    while (umpi__free_stages != NULL) {
        struct umpi_cuda_stage *s = umpi__free_stages;
        umpi__free_stages = s->next;
        umpi__stage_free(s);
    }
    umpi__stages_pooled = 0;
    for (unsigned i = 0; i < umpi__nstreams; i++)
        umpi_cuda_drv.cuStreamDestroy(umpi__streams[i]);
    umpi__nstreams = 0;
    umpi__unlock();
}

void umpi_cuda_stage_counts(size_t *out, size_t *pooled)
{
    umpi__lock();
    *out = umpi__stages_out;
    *pooled = umpi__stages_pooled;
    umpi__unlock();
}

/* ---- the scheduler --------------------------------------------------------------------------- */

static void umpi__fail(struct umpi_cuda_pipe *p, umpi_status_t st, const char *fmt, ...) UMPI_PRINTF(3, 4);
static void umpi__fail(struct umpi_cuda_pipe *p, umpi_status_t st, const char *fmt, ...)
{
    if (p->status != UMPI_OK)
        return; /* the first error is the cause */
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(p->why, sizeof(p->why), fmt, ap);
    va_end(ap);
    p->status = st;
    umpi_debug(1, "cuda: staged transfer of %zu bytes failed: %s", p->nbytes, p->why);
}

static size_t umpi__chunk_len(const struct umpi_cuda_pipe *p, unsigned i)
{
    size_t off = (size_t) i * p->chunk;
    return p->nbytes - off < p->chunk ? p->nbytes - off : p->chunk;
}

static void umpi__release(struct umpi_cuda_pipe *p)
{
    for (unsigned b = 0; b < p->nbufs; b++) {
        if (p->buf[b] != NULL)
            umpi_cuda_stage_put(p->buf[b]);
        p->buf[b] = NULL;
    }
    p->finished = 1;
}

umpi_status_t umpi_cuda_pipe_start(struct umpi_cuda_pipe *p, umpi_cuda_pipe_dir_t dir, CUdeviceptr dev, size_t nbytes,
                                   const struct umpi_cuda_pipe_net *net, void *ctx)
{
    return umpi_cuda_pipe_start_chunk(p, dir, dev, nbytes, 0, net, ctx);
}

umpi_status_t umpi_cuda_pipe_start_chunk(struct umpi_cuda_pipe *p, umpi_cuda_pipe_dir_t dir, CUdeviceptr dev,
                                         size_t nbytes, size_t chunk, const struct umpi_cuda_pipe_net *net, void *ctx)
{
    memset(p, 0, sizeof(*p));
    p->dir = dir;
    p->dev = dev;
    p->nbytes = nbytes;
    p->net = net;
    p->ctx = ctx;
    p->chunk = chunk > 0 ? chunk : umpi_config.cuda_pipeline_chunk > 0 ? umpi_config.cuda_pipeline_chunk : 524288;
    p->nchunks = (unsigned) ((nbytes + p->chunk - 1) / p->chunk);
    if (nbytes == 0) {
        p->finished = 1;
        return UMPI_OK;
    }
    int k = umpi_config.cuda_pipeline_buffers, s = umpi_config.cuda_pipeline_streams;
    p->nbufs = k < 1 ? 1 : k > UMPI_CUDA_PIPE_MAX_BUFS ? UMPI_CUDA_PIPE_MAX_BUFS : (unsigned) k;
    if (p->nbufs > p->nchunks)
        p->nbufs = p->nchunks;
    p->nstreams = s < 1 ? 1 : s > UMPI_CUDA_PIPE_MAX_STREAMS ? UMPI_CUDA_PIPE_MAX_STREAMS : (unsigned) s;
    if (p->nstreams > p->nchunks)
        p->nstreams = p->nchunks;

    umpi_status_t st = umpi_cuda_stage_streams(p->nstreams, p->stream);
    for (unsigned b = 0; st == UMPI_OK && b < p->nbufs; b++)
        st = umpi_cuda_stage_get(p->chunk, &p->buf[b]);
    if (st != UMPI_OK) {
        umpi__release(p);
        return st;
    }
    umpi_cuda_slow_path(UMPI_CUDA_STAT_pipelined,
                        "cuda: %zu bytes %s through %u pinned buffers of %zu bytes on %u streams", nbytes,
                        dir == UMPI_CUDA_PIPE_SEND ? "sent" : "received", p->nbufs, p->chunk, p->nstreams);
    return UMPI_OK;
}

void umpi_cuda_pipe_net_done(struct umpi_cuda_pipe *p, unsigned chunk, umpi_status_t st)
{
    for (unsigned b = 0; b < p->nbufs; b++) {
        if (p->state[b] != UMPI_CUDA_PIPE_NET || p->chunk_of[b] != chunk)
            continue;
        if (st != UMPI_OK) {
            umpi__fail(p, st, "network %s of chunk %u failed (%s)", p->dir == UMPI_CUDA_PIPE_SEND ? "send" : "receive",
                       chunk, umpi_status_string(st));
            p->state[b] = UMPI_CUDA_PIPE_FREE;
        } else if (p->dir == UMPI_CUDA_PIPE_SEND) {
            p->state[b] = UMPI_CUDA_PIPE_FREE;
            p->ndone++;
        } else {
            p->state[b] = UMPI_CUDA_PIPE_RECVD;
        }
        return;
    }
    umpi__fail(p, UMPI_ERR_INTERN, "network completion of chunk %u, which is not in flight", chunk);
}

/* Issues chunk c's copy from or to staging buffer b and records b's event behind it. */
static int umpi__copy(struct umpi_cuda_pipe *p, unsigned b, unsigned c)
{
    struct umpi_cuda_stage *s = p->buf[b];
    CUstream stream = p->stream[c % p->nstreams];
    CUdeviceptr d = p->dev + (CUdeviceptr) c * p->chunk;
    size_t len = umpi__chunk_len(p, c);
    char ebuf[128];
    CUresult r = p->dir == UMPI_CUDA_PIPE_SEND ? umpi_cuda_drv.cuMemcpyDtoHAsync(s->host, d, len, stream)
                                               : umpi_cuda_drv.cuMemcpyHtoDAsync(d, s->host, len, stream);
    if (r != UMPI_CUDA_SUCCESS) {
        umpi__fail(p, UMPI_ERR_OTHER, "%s of chunk %u failed: %s",
                   p->dir == UMPI_CUDA_PIPE_SEND ? "cuMemcpyDtoHAsync" : "cuMemcpyHtoDAsync", c,
                   umpi_cuda_strerror(r, ebuf, sizeof(ebuf)));
        return 0;
    }
    r = umpi_cuda_drv.cuEventRecord(s->event, stream);
    if (r != UMPI_CUDA_SUCCESS) {
        /* the copy is queued but cannot be watched: wait for it here, once, then give up */
        umpi__fail(p, UMPI_ERR_OTHER, "cuEventRecord after chunk %u's copy failed: %s", c,
                   umpi_cuda_strerror(r, ebuf, sizeof(ebuf)));
        umpi_cuda_drv.cuStreamSynchronize(stream);
        return 0;
    }
    return 1;
}

/* Starts chunk c's network operation on buffer b (state NET first: it may complete inside). */
static void umpi__net(struct umpi_cuda_pipe *p, unsigned b, unsigned c)
{
    p->state[b] = UMPI_CUDA_PIPE_NET;
    p->chunk_of[b] = c;
    p->next_net++;
    umpi_status_t st = p->net->start(p->ctx, p, c, p->buf[b]->host, umpi__chunk_len(p, c));
    if (st != UMPI_OK) {
        umpi__fail(p, st, "network %s of chunk %u could not start: %s",
                   p->dir == UMPI_CUDA_PIPE_SEND ? "send" : "receive", c, umpi_status_last_msg());
        p->state[b] = UMPI_CUDA_PIPE_FREE;
    }
}

/* One pass over the buffers; returns whether anything changed. */
static int umpi__step(struct umpi_cuda_pipe *p)
{
    int changed = 0;
    char ebuf[128];

    /* 1. copies that finished */
    for (unsigned b = 0; b < p->nbufs; b++) {
        if (p->state[b] != UMPI_CUDA_PIPE_D2H && p->state[b] != UMPI_CUDA_PIPE_H2D)
            continue;
        CUresult r = umpi_cuda_drv.cuEventQuery(p->buf[b]->event);
        if (r == UMPI_CUDA_ERROR_NOT_READY)
            continue;
        changed = 1;
        if (r != UMPI_CUDA_SUCCESS) {
            umpi__fail(p, UMPI_ERR_OTHER, "the copy of chunk %u failed: %s", p->chunk_of[b],
                       umpi_cuda_strerror(r, ebuf, sizeof(ebuf)));
            p->state[b] = UMPI_CUDA_PIPE_FREE;
        } else if (p->state[b] == UMPI_CUDA_PIPE_D2H) {
            p->state[b] = UMPI_CUDA_PIPE_COPIED;
        } else {
            p->state[b] = UMPI_CUDA_PIPE_FREE;
            p->ndone++;
        }
    }

    /* 2. after an error, buffers with nothing in flight are simply freed */
    if (p->status != UMPI_OK) {
        for (unsigned b = 0; b < p->nbufs; b++)
            if (p->state[b] == UMPI_CUDA_PIPE_COPIED || p->state[b] == UMPI_CUDA_PIPE_RECVD)
                p->state[b] = UMPI_CUDA_PIPE_FREE;
        return changed;
    }

    /* 3. receiver: chunks that arrived go to the device */
    for (unsigned b = 0; b < p->nbufs && p->status == UMPI_OK; b++) {
        if (p->state[b] == UMPI_CUDA_PIPE_RECVD) {
            changed = 1;
            p->state[b] = umpi__copy(p, b, p->chunk_of[b]) ? UMPI_CUDA_PIPE_H2D : UMPI_CUDA_PIPE_FREE;
        }
    }

    /* 4. sender: copied chunks go to the network, in order */
    for (int found = 1; found && p->dir == UMPI_CUDA_PIPE_SEND && p->status == UMPI_OK;) {
        found = 0;
        for (unsigned b = 0; b < p->nbufs; b++) {
            if (p->state[b] == UMPI_CUDA_PIPE_COPIED && p->chunk_of[b] == p->next_net) {
                umpi__net(p, b, p->chunk_of[b]);
                found = changed = 1;
                break;
            }
        }
    }

    /* 5. free buffers take the next chunks */
    for (unsigned b = 0; b < p->nbufs && p->next_chunk < p->nchunks && p->status == UMPI_OK; b++) {
        if (p->state[b] != UMPI_CUDA_PIPE_FREE)
            continue;
        unsigned c = p->next_chunk++;
        changed = 1;
        p->chunk_of[b] = c;
        if (p->dir == UMPI_CUDA_PIPE_SEND)
            p->state[b] = umpi__copy(p, b, c) ? UMPI_CUDA_PIPE_D2H : UMPI_CUDA_PIPE_FREE;
        else
            umpi__net(p, b, c);
    }
    return changed;
}

int umpi_cuda_pipe_progress(struct umpi_cuda_pipe *p)
{
    if (p->finished)
        return 1;
    while (umpi__step(p))
        ;
    if (p->status == UMPI_OK && p->ndone < p->nchunks)
        return 0;
    for (unsigned b = 0; b < p->nbufs; b++)
        if (p->state[b] != UMPI_CUDA_PIPE_FREE)
            return 0; /* an error, and operations still in flight */
    umpi__release(p);
    return 1;
}
