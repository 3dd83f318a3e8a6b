/*
 * A transfer of the device protocol (umpi_p2p_gpu.h): the state that the sender's and the
 * receiver's state machines (gpu_send.c, gpu_recv.c) keep, and what gpu_xfer.c does for both
 * (bookkeeping, failures and completion, the pipeline's network, the progress hook). Private to
 * src/pt2pt/gpu_*.c.
 */
#ifndef UMPI_P2P_GPU_XFER_H
#define UMPI_P2P_GPU_XFER_H

#include "core/umpi_err.h"
#include "cuda/umpi_cuda_ipc.h"
#include "cuda/umpi_cuda_pipe.h"
#include "pt2pt/gpu_wire.h"
#include "pt2pt/umpi_p2p_gpu.h"

typedef struct umpi_p2p_gpu_xfer umpi_p2p_gpu_xfer_t;

/* A pipeline chunk's send or receive. */
struct umpi_p2p_gpu_chunk_op {
    umpi_ucx_op_t op;          /* op.user: this */
    umpi_p2p_gpu_xfer_t *x;
    unsigned chunk;
    int used;
};

enum { X_SEND = 1, X_RECV };
enum {
    S_UNSENT = 1,     /* the envelope could not go (the fence failed): the send fails */
    S_WAIT_REPLY,     /* envelope sent, reply receive posted */
    S_PIPE,           /* CTS came: the pipeline runs */
    S_FINISH,         /* the data has gone: waits for the envelope's send to complete */
    R_POSTED,         /* device receive posted into the bounce */
    R_MATCHED,        /* a message or an envelope arrived: the hook decides */
    R_COPY,           /* a copy into the receive buffer in flight (event) */
    R_PIPE,           /* device receive buffer: the pipeline runs */
    R_CHUNKS,         /* host receive buffer: chunks land in place */
    R_FINISH,         /* the data is in place */
    X_DONE,           /* completed: freed once nothing of it is in flight */
};

struct umpi_p2p_gpu_xfer {
    umpi_p2p_gpu_xfer_t *next, *prev;
    int dir, state;
    int (*advance)(umpi_p2p_gpu_xfer_t *x); /* its side's state machine: nonzero when it moved */
    unsigned long seq;         /* creation order */
    int peer;                  /* world rank at the other end */
    uint32_t id;               /* the sender's transfer id */
    umpi_request_t *req;       /* completed by this transfer; NULL once done */
    umpi_status_t err;         /* first error, its cause in why */
    char why[256];
    unsigned inflight;         /* UCX operations of this transfer not completed */
    umpi_ucx_op_t match_in;    /* receiver (device buffer): the receive of a message or envelope */
    umpi_ucx_op_t reply_in;    /* sender: the reply's receive */
    umpi_ucx_op_t env_out;     /* sender: the envelope's send */
    umpi_ucx_op_t nudge_out;   /* sender: a nudge's send */
    umpi_ucx_op_t reply_out;   /* receiver: the reply's send */
    ucp_tag_t env_tag;         /* the envelope's tag (sent, or matched) */
    struct umpi_p2p_gpu_envelope env;
    struct umpi_p2p_gpu_reply reply;  /* sender: the one received; receiver: the one sent */
    int replied;               /* receiver: the first reply has gone */
    CUevent ev;
    /* sender */
    const char *src;
    size_t bytes;
    int device;
    int reply_arrived, env_done;
    ucs_status_t reply_status, env_status;
    double nudge_at, nudge_wait; /* when to nudge the receiver next, and the wait after that (s) */
    int nudging;                 /* a nudge is on its way (its buffer in use) */
    struct umpi_p2p_gpu_nudge nudge;
    /* pipeline (either side) */
    int piping;
    struct umpi_cuda_pipe pipe;
    struct umpi_p2p_gpu_chunk_op ops[UMPI_CUDA_PIPE_MAX_BUFS];
    /* receiver: the user's buffer, and where the data goes */
    void *ubuf;
    MPI_Count ucount;
    umpi_dtype_t *udt;
    int udev;                  /* the user's buffer is device memory (of device `device`) */
    size_t cap;                /* its capacity in bytes */
    char *dst;                 /* contiguous destination: the user's buffer, or staging */
    char *staging;             /* malloc'ed when the user's type is not contiguous */
    char *bounce;              /* device receive: where UCX put the message */
    size_t bounce_size;
    ucs_status_t match_status;
    ucp_tag_recv_info_t info;
    int env_unreadable;        /* the envelope did not fit (a protocol error) */
    size_t n, msg_len;         /* bytes moved, message length */
    umpi_cuda_ipc_ref_t *ref;
    /* host receive buffer, pipelined sender: the chunks' receives, one record for all (only how
     * many are left and whether one failed matter) */
    umpi_ucx_counter_t in_place;
    umpi_ucx_done_t in_place_done;
    /* a copy into host memory: its first bytes, put in place by the CPU when the copy is done */
    char head[sizeof(struct umpi_p2p_gpu_envelope)];
    size_t head_len;
};

/* ---- gpu_xfer.c ------------------------------------------------------------------------------ */

/* The envelope threshold of world rank w (SIZE_MAX: it does not use CUDA, send it no envelope). */
size_t umpi_p2p_gpu_peer_envelope_min(int w);

/* A new transfer (zeroed, no device) of direction dir whose state machine is advance (gpu_send.c,
 * gpu_recv.c), and its start: the progress hook then runs advance until the transfer is done. */
umpi_p2p_gpu_xfer_t *umpi_p2p_gpu_xfer_new(int dir, int (*advance)(umpi_p2p_gpu_xfer_t *x));
umpi_status_t umpi_p2p_gpu_activate(umpi_p2p_gpu_xfer_t *x);
/* An event for a copy, from those kept for reuse (given back when the transfer is freed). */
umpi_status_t umpi_p2p_gpu_event_get(CUevent *ev);
/* Records the first failure: "<fmt>: <umpi's last cause>" goes to the MPI error at completion. */
void umpi_p2p_gpu_fail(umpi_p2p_gpu_xfer_t *x, umpi_status_t st, const char *fmt, ...) UMPI_PRINTF(3, 4);
/* Hands the outcome to the request (its status already filled for receives). */
void umpi_p2p_gpu_complete(umpi_p2p_gpu_xfer_t *x, ucs_status_t net);
/* A receive's status: the source and tag of tag, len bytes. */
void umpi_p2p_gpu_recv_status(umpi_p2p_gpu_xfer_t *x, ucp_tag_t tag, size_t len);
/* The pipeline's network: chunk sends and receives on (ctrl, sender, id). */
extern const struct umpi_cuda_pipe_net umpi_p2p_gpu_pipe_net;
/* Advances x's pipeline; 1 once it has finished (its failure recorded in x), 0 while it runs. */
int umpi_p2p_gpu_pipe_done(umpi_p2p_gpu_xfer_t *x);

/* The time read in this progress pass, 0 until a waiting sender reads it (gpu_send.c): the hook
 * clears it at each pass. */
extern double umpi_p2p_gpu_pass_now;

/* ---- gpu_probe.c ----------------------------------------------------------------------------- */

/* Receives a small matched (probed) message into buf, waiting for it here. */
umpi_status_t umpi_p2p_gpu_recv_probed(void *buf, size_t len, ucp_tag_message_h msg);

#endif /* UMPI_P2P_GPU_XFER_H */
