/*
 * Point-to-point on device buffers, for a UCX without CUDA support (p2p.c has the protocol and its
 * wire formats). src/pt2pt calls in here only after classification said "device memory", or when
 * a receive on host memory matched the envelope of a device message (the envelope bit below);
 * host-to-host messages never come here.
 */
#ifndef UMPI_CUDA_P2P_H
#define UMPI_CUDA_P2P_H

#include "cuda/umpi_cuda.h"
#include "core/umpi_request.h"
#include "netmod/ucx/umpi_ucx.h"

/* The envelope of a large device message (the device protocol's request to send) carries this
 * bit in its point-to-point tag: the tag layout's internal bit, which no other traffic on a
 * point-to-point context sets. Receives whose buffer is longer than umpi_cuda_envelope_min ignore
 * it when matching (only those: p2p.c says why), so an envelope matches the receives that can
 * hold its message, and the completion's sender tag tells the two apart. */
#define UMPI_CUDA_ENVELOPE_BIT UMPI_UCX_INTERNAL_BIT

/* This process's envelope threshold: SIZE_MAX when it does not use CUDA (no receive ignores the
 * bit), else max(UMPI_CUDA_STAGE_THRESH, the envelope's size). */
extern size_t umpi_cuda_envelope_min;

/* At MPI_Init, before the fence: publishes this process's threshold (PMI key umpi.cuda.env). */
umpi_status_t umpi_cuda_p2p_init(int world_size);

static inline int umpi_cuda_is_envelope(ucp_tag_t sender_tag)
{
    return (sender_tag & UMPI_CUDA_ENVELOPE_BIT) != 0;
}

/**
 * Sends count x dt at buf, which classification found in device memory (of device `device`), in
 * any mode; req NULL for a blocking send (complete when this returns). An MPI error code.
 */
int umpi_cuda_p2p_send(const void *buf, MPI_Count count, umpi_dtype_t *dt, size_t bytes, int device, int dest,
                       int tag, umpi_comm_t *comm, umpi_send_mode_t mode, umpi_request_t *req);

/* Posts receive r (buf, count, dt, peer, tag, comm set) whose buffer is device memory. */
int umpi_cuda_p2p_irecv(umpi_request_t *r, size_t bytes, int device);

/* A receive on host memory completed with an envelope (st UCS_OK, or UCS_ERR_MESSAGE_TRUNCATED
 * when the envelope itself did not fit): the device protocol takes over r and completes it.
 * Called from UCX completion callbacks; it only queues the work for the progress hook. */
void umpi_cuda_p2p_envelope(umpi_request_t *r, ucs_status_t st, const ucp_tag_recv_info_t *info);

/* MPI_Mprobe/Improbe removed message msg, an envelope: reads it so that the status tells the
 * message's real length (*length), and keeps it in the message request (msgreq->tmp). */
umpi_status_t umpi_cuda_p2p_probed_envelope(umpi_request_t *msgreq, ucp_tag_message_h msg,
                                            const ucp_tag_recv_info_t *info, size_t *length);

/* MPI_Mrecv/Imrecv of r (turned into a receive, buf/count/dt set) when its message is an
 * envelope (r->tmp) or its buffer is device memory: receives msg and completes r. */
int umpi_cuda_p2p_mrecv(umpi_request_t *r, ucp_tag_message_h msg, size_t bytes, int dst_device, int dst_is_dev);

/* Messages a probe took out of UCX's queue because it met an envelope (p2p.c explains why):
 * receives, probes and matched probes look there first while umpi_cuda_pulled_count is not 0.
 * umpi_cuda_pulled_find: the first held message of context matching source and tag (MPI_ANY_*
 * allowed); 1 and its sender tag and length (an envelope's: its message's) when there is one;
 * with take, it is removed and handed over: *msg (a plain message, to receive with
 * ucp_tag_msg_recv_nbx) or *env (an envelope's header, for umpi_cuda_p2p_mrecv through r->tmp). */
extern size_t umpi_cuda_pulled_count;
int umpi_cuda_pulled_find(uint32_t context, int source, int tag, int take, ucp_tag_t *sender_tag, size_t *length,
                          ucp_tag_message_h *msg, void **env);
/* A probe for (context, source, tag) found the envelope described by found: takes it and its
 * sender's older messages on context out of UCX's queue, into the held list. */
umpi_status_t umpi_cuda_pull(uint32_t context, int source, int tag, const ucp_tag_recv_info_t *found);

/* Small host receives that a longer device message's envelope passed by (p2p_late.c says how
 * they are found and made to fail with MPI_ERR_TRUNCATE). umpi_cuda_late_start, once UCX is up:
 * posts the receive for the senders' nudges; umpi_cuda_late_finalize before UCX goes. MPI_Recv's
 * request-less wait on a process that uses CUDA registers itself between wait_begin and
 * wait_end; `redirected` then says that its UCX receive was cancelled because the message it
 * matches is a held envelope: it must receive again (through a request). */
struct umpi_cuda_waiting_recv {
    struct umpi_cuda_waiting_recv *next;
    uint32_t context;
    int source, tag;
    struct umpi_ucx_recv_wait *wait;
    int redirected;
};
umpi_status_t umpi_cuda_late_start(void);
void umpi_cuda_late_finalize(void);
void umpi_cuda_late_wait_begin(struct umpi_cuda_waiting_recv *n);
void umpi_cuda_late_wait_end(struct umpi_cuda_waiting_recv *n);

/* Transfers still running (leak check), and the end: MPI_Finalize, before UCX goes. */
void umpi_cuda_p2p_counts(size_t *active);
void umpi_cuda_p2p_finalize(void);

#endif /* UMPI_CUDA_P2P_H */
