/*
 * Point-to-point on device buffers over a UCX that cannot touch GPU memory (Debian's): the device
 * protocol. The rule that shapes everything: a device pointer never reaches UCX or a CPU copy;
 * UCX only ever sees host memory. The rest of pt2pt calls in here only after classification said
 * "device memory", or when a receive on host memory matched the envelope of a device message (the
 * netmod hands it up: umpi_ucx.h, struct umpi_ucx_upcalls); host-to-host messages never come here.
 *
 *   gpu_send.c   the sender: staged sends, the envelope, its state machine, nudges
 *   gpu_recv.c   the receiver: device receives, envelopes matched, copies, chunks, truncation
 *   gpu_xfer.c   transfers: thresholds, bookkeeping, the pipeline's network, the progress hook
 *   gpu_late.c   small receives that a longer device message passed by (MPI_ERR_TRUNCATE)
 *   gpu_probe.c  probes meeting device messages: envelopes read, messages held
 *   gpu_wire.h   the wire formats and the control context's tags
 *
 * Which path a message takes is decided by the sender from its own buffer; the receiver learns it
 * from what matches its receive:
 *
 *   sender buffer       size                    on the wire (user context, user tag)
 *   host                any                     the data, as always (device code never runs)
 *   device, contiguous  <= UMPI_CUDA_STAGE_THRESH  the data, copied to a host bounce first
 *   device, derived     any                     the packed data (packed through host memory)
 *   device, contiguous  larger than both ends'  an ENVELOPE: the tag with the envelope bit
 *                       thresholds (below), to  (UMPI_P2P_GPU_ENVELOPE_BIT), 136 bytes
 *                       a process using CUDA    describing the transfer (gpu_wire.h)
 *
 * So a receive sees either the message's bytes or an envelope, whatever its own buffer is. A
 * receive on host memory gets the bytes straight from UCX (no cost added); one on device memory
 * receives into a host bounce and copies to the device. An envelope starts the device protocol
 * at the receiver, which then moves the data itself into the receive buffer (device or host):
 * by a copy from the sender's buffer (the same process, or CUDA IPC on one node), or through a
 * pipeline of chunks in pinned host memory (gpu_wire.h draws the exchange).
 *
 * Which receives see envelopes. UCX hashes a posted receive by its tag only when its mask compares
 * every bit; a receive that ignores the envelope bit goes to UCX's wildcard list, which every
 * incoming message then searches. So only receives that can hold an envelope's message ignore the
 * bit: on a process that uses CUDA, those whose buffer is longer than its envelope threshold T =
 * max(UMPI_CUDA_STAGE_THRESH, 136 bytes), which every process publishes at MPI_Init (PMI key
 * umpi.cuda.env; 0 when it does not use CUDA), and every receive into device memory (its host
 * bounce holds an envelope whatever the buffer's size). A sender sends an envelope only for a
 * message longer than the receiver's T: a receive that can hold the message ignores the bit and
 * matches it. A shorter receive on host memory stays hashed and does not see the envelope, though
 * in MPI's terms it matches the message (and fails with MPI_ERR_TRUNCATE): gpu_late.c finds such a
 * receive when the envelope's sender, unanswered for milliseconds, nudges the receiver, and hands
 * it the envelope, which the device protocol then truncates. To a process without CUDA the
 * message goes whole through a host buffer as an ordinary message. Receives of T bytes or less on
 * host memory, and every receive on a process without CUDA, stay hashed: host messaging pays
 * nothing for this but a branch or two (measured: README.md, "GPU buffers").
 *
 * Truncation. A receive shorter than the message (longer than T, into device memory, or given the
 * envelope by gpu_late.c) reports MPI_ERR_TRUNCATE with the message's length in its status and
 * takes what fits; the sender completes.
 *
 * Progress: UCX callbacks only record what happened; a progress hook, registered while any
 * transfer is active, moves the state machines (copies watched with events, pipelines).
 */
#ifndef UMPI_P2P_GPU_H
#define UMPI_P2P_GPU_H

#include "core/umpi_request.h"
#include "cuda/umpi_cuda.h"
#include "netmod/ucx/umpi_ucx.h"

/* The envelope of a large device message (the device protocol's request to send) carries this
 * bit in its point-to-point tag: the tag layout's internal bit, which no other traffic on a
 * point-to-point context sets. Receives whose buffer is longer than umpi_p2p_gpu_envelope_min
 * ignore it when matching (only those: see above), so an envelope matches the receives that can
 * hold its message, and the completion's sender tag tells the two apart. */
#define UMPI_P2P_GPU_ENVELOPE_BIT UMPI_UCX_INTERNAL_BIT

/* This process's envelope threshold: SIZE_MAX when it does not use CUDA (no receive ignores the
 * bit), else max(UMPI_CUDA_STAGE_THRESH, the envelope's size). */
extern size_t umpi_p2p_gpu_envelope_min;

/* At MPI_Init, before the fence: publishes this process's threshold (PMI key umpi.cuda.env). */
umpi_status_t umpi_p2p_gpu_init(int world_size);

static inline int umpi_p2p_gpu_is_envelope(ucp_tag_t sender_tag)
{
    return (sender_tag & UMPI_P2P_GPU_ENVELOPE_BIT) != 0;
}

/**
 * Sends count x dt at buf, which classification found in device memory (of device `device`), in
 * any mode; req NULL for a blocking send (complete when this returns). An MPI error code.
 */
int umpi_p2p_gpu_send(const void *buf, MPI_Count count, umpi_dtype_t *dt, size_t bytes, int device, int dest,
                      int tag, umpi_comm_t *comm, umpi_send_mode_t mode, umpi_request_t *req);

/* Posts receive r (buf, count, dt, peer, tag, comm set) whose buffer is device memory. */
int umpi_p2p_gpu_irecv(umpi_request_t *r, size_t bytes, int device);

/* A receive on host memory completed with an envelope (st UCS_OK, or UCS_ERR_MESSAGE_TRUNCATED
 * when the envelope itself did not fit): the device protocol takes over r and completes it. The
 * netmod's upcall, from UCX completion callbacks; it only queues the work for the progress hook. */
void umpi_p2p_gpu_envelope_matched(umpi_request_t *r, ucs_status_t st, const ucp_tag_recv_info_t *info);

/* MPI_Mprobe/Improbe removed message msg, an envelope: reads it so that the status tells the
 * message's real length (*length), and keeps it in the message request (msgreq->tmp). */
umpi_status_t umpi_p2p_gpu_probed_envelope(umpi_request_t *msgreq, ucp_tag_message_h msg,
                                           const ucp_tag_recv_info_t *info, size_t *length);

/* MPI_Mrecv/Imrecv of r (turned into a receive, buf/count/dt set) when its message is an
 * envelope (r->tmp) or its buffer is device memory: receives msg and completes r. */
int umpi_p2p_gpu_mrecv(umpi_request_t *r, ucp_tag_message_h msg, size_t bytes, int dst_device, int dst_is_dev);

/* Messages a probe took out of UCX's queue because it met an envelope (gpu_probe.c explains why):
 * receives, probes and matched probes look there first while umpi_p2p_gpu_held_count is not 0.
 * umpi_p2p_gpu_held_find: the first held message of context matching source and tag (MPI_ANY_*
 * allowed); 1 and its sender tag and length (an envelope's: its message's) when there is one;
 * with take, it is removed and handed over: *msg (a plain message, to receive with
 * umpi_ucx_msg_recv*) or *env (an envelope's header, for umpi_p2p_gpu_mrecv through r->tmp). */
extern size_t umpi_p2p_gpu_held_count;
int umpi_p2p_gpu_held_find(uint32_t context, int source, int tag, int take, ucp_tag_t *sender_tag, size_t *length,
                           ucp_tag_message_h *msg, void **env);
/* A probe for (context, source, tag) found the envelope described by found: takes it and its
 * sender's older messages on context out of UCX's queue, into the held list. */
umpi_status_t umpi_p2p_gpu_hold(uint32_t context, int source, int tag, const ucp_tag_recv_info_t *found);

/* Small host receives that a longer device message's envelope passed by (gpu_late.c says how
 * they are found and made to fail with MPI_ERR_TRUNCATE; MPI_Recv's request-less waits among them
 * in umpi_p2p_recv_waiting). umpi_p2p_gpu_late_start, once UCX is up: posts the receive for the
 * senders' nudges. */
void umpi_p2p_gpu_late_start(void);

/* The end, at MPI_Finalize before UCX goes, in this order: nudges still on their way
 * (gpu_late.c), messages held and never received (gpu_probe.c), transfers and thresholds. */
void umpi_p2p_gpu_late_finalize(void);
void umpi_p2p_gpu_held_finalize(void);
void umpi_p2p_gpu_finalize(void);

#endif /* UMPI_P2P_GPU_H */
