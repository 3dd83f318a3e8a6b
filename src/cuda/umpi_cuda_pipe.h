/*
 * Staged transfers of device buffers through pinned host buffers: the scheduler (pipeline.c) and
 * its pool of pinned buffers. Point-to-point uses it for large device messages that CUDA IPC
 * cannot carry (src/pt2pt/gpu_*.c); design in pipeline.c.
 *
 *   sender    device --D2H copy--> staging buffer --network send-->
 *   receiver                                       --network recv--> staging buffer --H2D copy--> device
 *
 * The caller supplies the network (start one chunk's send or receive; report its completion with
 * umpi_cuda_pipe_net_done) and calls umpi_cuda_pipe_progress until it returns 1. The copies go
 * through the driver table and are watched with cuEventQuery, so nothing here blocks.
 */
#ifndef UMPI_CUDA_PIPE_H
#define UMPI_CUDA_PIPE_H

#include "cuda/umpi_cuda.h"

#define UMPI_CUDA_PIPE_MAX_BUFS 16
#define UMPI_CUDA_PIPE_MAX_STREAMS 8

/* ---- the pinned-buffer pool ------------------------------------------------------------------ */

/* A pinned host buffer with the event that marks the end of the last copy into or out of it. */
struct umpi_cuda_stage {
    void *host;
    size_t size;
    CUevent event;
    struct umpi_cuda_stage *next; /* free list */
};

/* A buffer of at least size bytes: from the pool, else cuMemHostAlloc (counted: stage_allocs). */
umpi_status_t umpi_cuda_stage_get(size_t size, struct umpi_cuda_stage **out);
/* Back to the pool (kept for the next transfer). */
void umpi_cuda_stage_put(struct umpi_cuda_stage *s);
/* The first n of the pool's streams, created (UMPI_CUDA_STREAM_FLAGS) on first use. */
umpi_status_t umpi_cuda_stage_streams(unsigned n, CUstream *out);
/* Frees the pool's buffers and streams: at finalize, when no transfer is left. */
void umpi_cuda_stage_finalize(void);
/* Buffers handed out and not returned; buffers in the pool. */
void umpi_cuda_stage_counts(size_t *out, size_t *pooled);

/* ---- the scheduler --------------------------------------------------------------------------- */

typedef enum { UMPI_CUDA_PIPE_SEND, UMPI_CUDA_PIPE_RECV } umpi_cuda_pipe_dir_t;

struct umpi_cuda_pipe;

struct umpi_cuda_pipe_net {
    /* Starts sending (SEND) or receiving (RECV) chunk i of len bytes from/into host. Chunks are
     * started in order 0, 1, 2, ... on each side, so an ordered channel (one UCX tag) matches them.
     * Completion is reported by umpi_cuda_pipe_net_done, possibly from inside this call. An error
     * returned here means the operation did not start. */
    umpi_status_t (*start)(void *ctx, struct umpi_cuda_pipe *p, unsigned chunk, void *host, size_t len);
};

/* Per staging buffer: where its chunk is. */
enum {
    UMPI_CUDA_PIPE_FREE,   /* no chunk */
    UMPI_CUDA_PIPE_D2H,    /* sender: device -> host copy in flight */
    UMPI_CUDA_PIPE_COPIED, /* sender: in host memory, waiting for the chunks before it to be sent */
    UMPI_CUDA_PIPE_NET,    /* send or receive in flight */
    UMPI_CUDA_PIPE_RECVD,  /* receiver: arrived, host -> device copy not yet issued */
    UMPI_CUDA_PIPE_H2D,    /* receiver: host -> device copy in flight */
};

struct umpi_cuda_pipe {
    umpi_cuda_pipe_dir_t dir;
    CUdeviceptr dev;             /* the device buffer */
    size_t nbytes, chunk;
    unsigned nchunks, nbufs, nstreams;
    const struct umpi_cuda_pipe_net *net;
    void *ctx;
    struct umpi_cuda_stage *buf[UMPI_CUDA_PIPE_MAX_BUFS];
    unsigned char state[UMPI_CUDA_PIPE_MAX_BUFS];
    unsigned chunk_of[UMPI_CUDA_PIPE_MAX_BUFS];
    CUstream stream[UMPI_CUDA_PIPE_MAX_STREAMS];
    unsigned next_chunk;         /* the next chunk to be given a staging buffer */
    unsigned next_net;           /* the next chunk whose send or receive starts */
    unsigned ndone;              /* chunks wholly moved */
    int finished;                /* buffers returned; status final */
    umpi_status_t status;        /* the first error, or UMPI_OK */
    char why[192];               /* its cause */
};

/**
 * Sets up a staged transfer of nbytes at dev: chunks of UMPI_CUDA_PIPELINE_CHUNK bytes over
 * UMPI_CUDA_PIPELINE_BUFFERS staging buffers (fewer if fewer chunks) and UMPI_CUDA_PIPELINE_STREAMS
 * streams. Nothing is started until the first umpi_cuda_pipe_progress. Zero bytes: finished at once.
 * Returns an error (nothing held) when buffers or streams cannot be had.
 */
umpi_status_t umpi_cuda_pipe_start(struct umpi_cuda_pipe *p, umpi_cuda_pipe_dir_t dir, CUdeviceptr dev, size_t nbytes,
                                   const struct umpi_cuda_pipe_net *net, void *ctx);
/* The same with chunks of `chunk` bytes (0: the knob): both ends of a transfer must cut it alike,
 * so the receiver takes the sender's chunk size from its envelope (src/pt2pt/gpu_wire.h). */
umpi_status_t umpi_cuda_pipe_start_chunk(struct umpi_cuda_pipe *p, umpi_cuda_pipe_dir_t dir, CUdeviceptr dev,
                                         size_t nbytes, size_t chunk, const struct umpi_cuda_pipe_net *net, void *ctx);
/**
 * Advances the transfer: polls the copies' events, starts what can start. Returns 1 once it has
 * finished (p->status: UMPI_OK, or the first error with p->why), with every staging buffer back in
 * the pool; 0 while something is in flight. After an error nothing new starts, but the operations
 * in flight are waited for, since their buffers cannot be reused under them.
 */
int umpi_cuda_pipe_progress(struct umpi_cuda_pipe *p);
/* The network's completion of chunk i's send or receive (st: its result). */
void umpi_cuda_pipe_net_done(struct umpi_cuda_pipe *p, unsigned chunk, umpi_status_t st);

#endif /* UMPI_CUDA_PIPE_H */
