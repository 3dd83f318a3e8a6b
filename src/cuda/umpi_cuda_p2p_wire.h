/*
 * The device protocol's wire formats (p2p.c describes the protocol): the envelope, the reply and the
 * control context's tags. Private to src/cuda/p2p*.c.
 */
#ifndef UMPI_CUDA_P2P_WIRE_H
#define UMPI_CUDA_P2P_WIRE_H

#include "core/umpi_context.h"
#include "cuda/umpi_cuda_ipc.h"
#include "netmod/ucx/umpi_ucx.h"

#define UMPI_CUDA_CTRL_CONTEXT ((1u << UMPI_UCX_CONTEXT_BITS) - 1)
#define UMPI_CUDA_REPLY_BIT UMPI_UCX_INTERNAL_BIT
#define UMPI_CUDA_ID_MASK (((uint32_t) 1 << UMPI_UCX_TAG_BITS) - 1)
_Static_assert(2 * UMPI_CONTEXT_PAIRS <= UMPI_CUDA_CTRL_CONTEXT, "the control context is no communicator's");

#define UMPI_CUDA_RTS_MAGIC 0x31706475u /* "udp1" */
enum { UMPI_CUDA_RTS_SELF = 1, UMPI_CUDA_RTS_IPC = 2, UMPI_CUDA_RTS_PIPE = 3 };

/* The envelope (little-endian; both ends run the same build):
 *   0      4      6      8      12       16      24      32                         136
 *   | magic| kind | pad  | id   | sender | bytes | chunk | IPC descriptor (104)      |      */
struct umpi_cuda_rts {
    uint32_t magic;
    uint16_t kind;     /* SELF, IPC, PIPE */
    uint16_t pad;
    uint32_t id;       /* the sender's transfer id */
    int32_t sender;    /* the sender's world rank */
    uint64_t bytes;    /* the message's length */
    uint64_t chunk;    /* PIPE: bytes per chunk */
    struct umpi_cuda_ipc_desc desc; /* IPC: the buffer; SELF: desc.base is the sender's pointer */
};
_Static_assert(sizeof(struct umpi_cuda_rts) == 136, "the envelope is 136 bytes on the wire");

/* A reply: DONE (the data is in place; the sender may complete) or CTS (send `bytes` through the
 * pipeline; fewer than the message when it is truncated). */
enum { UMPI_CUDA_REPLY_DONE = 1, UMPI_CUDA_REPLY_CTS = 2 };
struct umpi_cuda_reply {
    uint32_t kind;
    uint32_t pad;
    uint64_t bytes;
};
_Static_assert(sizeof(struct umpi_cuda_reply) == 16, "a reply is 16 bytes on the wire");

static inline ucp_tag_t umpi_cuda_ctrl_tag(int from_world, int reply, uint32_t id)
{
    return umpi_ucx_send_tag(UMPI_CUDA_CTRL_CONTEXT, from_world,
                             (int) ((reply ? UMPI_CUDA_REPLY_BIT : 0) | (id & UMPI_CUDA_ID_MASK)));
}

/* A nudge (p2p_late.c): the sender's envelope of tag env_tag has not been answered for a while.
 * Tag (ctrl, the RECEIVER's world rank, R, UMPI_CUDA_NUDGE_ID), so that the receiver's one
 * receive for nudges is hashed; transfer ids never take that value. */
#define UMPI_CUDA_NUDGE_ID UMPI_CUDA_ID_MASK
struct umpi_cuda_nudge {
    uint64_t env_tag;  /* the envelope's tag (envelope bit included) */
    uint32_t id;       /* the sender's transfer id */
    int32_t sender;    /* the sender's world rank */
};
_Static_assert(sizeof(struct umpi_cuda_nudge) == 16, "a nudge is 16 bytes on the wire");

/* A small matched (probed) message received into buf, waited for here (p2p_probe.c). */
umpi_status_t umpi_cuda_p2p_msg_recv_now(void *buf, size_t len, ucp_tag_message_h msg);
/* Probed messages not received at MPI_Finalize (p2p_probe.c). */
void umpi_cuda_p2p_held_finalize(void);

#endif /* UMPI_CUDA_P2P_WIRE_H */
