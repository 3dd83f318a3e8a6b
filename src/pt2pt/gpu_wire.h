/*
 * The device protocol on the wire (umpi_p2p_gpu.h says which messages take it): the envelope, the
 * replies, the pipeline's chunks and the nudges, and the tags of the control context. Private to
 * src/pt2pt/gpu_*.c.
 *
 *   envelope kind  condition (sender)                     receiver                        reply
 *   SELF           the receiver is this process           copies from the sender's pointer DONE
 *   IPC            same node, UMPI_CUDA_IPC=1, the buffer opens the CUDA IPC handle (cached,  DONE
 *                  exportable (cuMemAlloc memory)          ipc_cache.c), copies from it
 *   PIPE           otherwise (reason counted: pipe_fallback) CTS: then receives chunks      CTS
 *
 *   sender                                              receiver
 *   post reply receive (ctrl, me<-R, id)
 *   send envelope (user tag | ENVELOPE_BIT) ----------> matched by a receive (any buffer kind)
 *                                                       IPC/SELF: copy (event), then
 *   request complete <--------------------------------- DONE
 *                                                       PIPE (or IPC refused by the driver):
 *   <-------------------------------------------------- CTS (bytes it will take: truncation)
 *   pipeline.c: D2H chunks --- (ctrl, S, id) --------->  device buffer: pipeline.c H2D; host: into place
 *
 * Why the handle travels in the envelope, a tagged message, and not in a UCX active message: the
 * envelope has to be MATCHED like the message it stands for (source, tag, wildcards, order with
 * the sender's other messages, MPI_Probe), and UCX's tag matching does exactly that when the
 * envelope goes on the message's own tag. The replies and chunks go on a control context of their
 * own, each transfer on its own tag, with the receive posted before the message that answers it
 * can arrive, so they never wait in UCX's unexpected queue.
 *
 * Control context (context id 2^20 - 1, above every communicator's):
 *    63                  44 43              24  23   22                    0
 *   +----------------------+------------------+-----+-----------------------+
 *   |   0xFFFFF (ctrl)     | sender's world   | R   |   transfer id (23)    |
 *   +----------------------+------------------+-----+-----------------------+
 *   R = 1: a reply (DONE, CTS) of the receiver, whose world rank is in the source field;
 *   R = 0: a chunk of the sender's pipeline. Ids are per sender (mod 2^23), never 2^23 - 1:
 *   R = 1 with id 2^23 - 1 is a sender's NUDGE (gpu_late.c), whose source field holds the world
 *   rank of the receiver it goes to, so that the receiver's one receive for nudges is hashed.
 */
#ifndef UMPI_P2P_GPU_WIRE_H
#define UMPI_P2P_GPU_WIRE_H

#include "core/umpi_context.h"
#include "cuda/umpi_cuda_ipc.h"
#include "netmod/ucx/umpi_ucx.h"

#define UMPI_P2P_GPU_CTRL_CONTEXT ((1u << UMPI_UCX_CONTEXT_BITS) - 1)
#define UMPI_P2P_GPU_REPLY_BIT UMPI_UCX_INTERNAL_BIT
#define UMPI_P2P_GPU_ID_MASK (((uint32_t) 1 << UMPI_UCX_TAG_BITS) - 1)
_Static_assert(2 * UMPI_CONTEXT_PAIRS <= UMPI_P2P_GPU_CTRL_CONTEXT, "the control context is no communicator's");

#define UMPI_P2P_GPU_ENV_MAGIC 0x31706475u /* "udp1" */
enum { UMPI_P2P_GPU_ENV_SELF = 1, UMPI_P2P_GPU_ENV_IPC = 2, UMPI_P2P_GPU_ENV_PIPE = 3 };

/* The envelope (little-endian; both ends run the same build):
 *   0      4      6      8      12       16      24      32                         136
 *   | magic| kind | pad  | id   | sender | bytes | chunk | IPC descriptor (104)      |      */
struct umpi_p2p_gpu_envelope {
    uint32_t magic;
    uint16_t kind;     /* SELF, IPC, PIPE */
    uint16_t pad;
    uint32_t id;       /* the sender's transfer id */
    int32_t sender;    /* the sender's world rank */
    uint64_t bytes;    /* the message's length */
    uint64_t chunk;    /* PIPE: bytes per chunk */
    struct umpi_cuda_ipc_desc desc; /* IPC: the buffer; SELF: desc.base is the sender's pointer */
};
_Static_assert(sizeof(struct umpi_p2p_gpu_envelope) == 136, "the envelope is 136 bytes on the wire");

/* A reply: DONE (the data is in place; the sender may complete) or CTS (send `bytes` through the
 * pipeline; fewer than the message when it is truncated). */
enum { UMPI_P2P_GPU_REPLY_DONE = 1, UMPI_P2P_GPU_REPLY_CTS = 2 };
struct umpi_p2p_gpu_reply {
    uint32_t kind;
    uint32_t pad;
    uint64_t bytes;
};
_Static_assert(sizeof(struct umpi_p2p_gpu_reply) == 16, "a reply is 16 bytes on the wire");

static inline ucp_tag_t umpi_p2p_gpu_ctrl_tag(int from_world, int reply, uint32_t id)
{
    return umpi_ucx_send_tag(UMPI_P2P_GPU_CTRL_CONTEXT, from_world,
                             (int) ((reply ? UMPI_P2P_GPU_REPLY_BIT : 0) | (id & UMPI_P2P_GPU_ID_MASK)));
}

/* A nudge (gpu_late.c): the sender's envelope of tag env_tag has not been answered for a while.
 * Tag (ctrl, the RECEIVER's world rank, R, UMPI_P2P_GPU_NUDGE_ID), so that the receiver's one
 * receive for nudges is hashed; transfer ids never take that value. */
#define UMPI_P2P_GPU_NUDGE_ID UMPI_P2P_GPU_ID_MASK
struct umpi_p2p_gpu_nudge {
    uint64_t env_tag;  /* the envelope's tag (envelope bit included) */
    uint32_t id;       /* the sender's transfer id */
    int32_t sender;    /* the sender's world rank */
};
_Static_assert(sizeof(struct umpi_p2p_gpu_nudge) == 16, "a nudge is 16 bytes on the wire");

#endif /* UMPI_P2P_GPU_WIRE_H */
