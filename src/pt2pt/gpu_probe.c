/*
 * Probes meeting device messages (interface: umpi_p2p_gpu.h): the envelope a matched probe
 * removes is read at once, and MPI_Probe / MPI_Iprobe hold the messages they take out of UCX's
 * queue (why: below).
 */
#include "pt2pt/gpu_xfer.h"
#include "core/umpi_progress.h"

#include <stdlib.h>
#include <string.h>

/* ---- probed messages ------------------------------------------------------------------------ */

/* Receives a matched (probed) message that is small into buf, waiting here: its bytes are here or
 * arriving. The wait is atomic (umpi_progress_wait_atomic): umpi_p2p_gpu_hold reads an envelope
 * while the older messages it took wait to be held behind it, and nothing may receive past them. */
umpi_status_t umpi_p2p_gpu_recv_probed(void *buf, size_t len, ucp_tag_message_h msg)
{
    struct umpi_ucx_recv_wait w;
    umpi_status_t st = umpi_ucx_msg_recv_blocking(buf, len, msg, &w);
    if (st != UMPI_OK)
        return st;
    umpi_progress_wait_atomic(&w.done);
    return w.status == UCS_OK ? UMPI_OK : umpi_ucx_status(w.status, "receiving a device-message envelope");
}

umpi_status_t umpi_p2p_gpu_probed_envelope(umpi_request_t *msgreq, ucp_tag_message_h msg,
                                           const ucp_tag_recv_info_t *info, size_t *length)
{
    struct umpi_p2p_gpu_envelope *e = calloc(1, info->length > sizeof(*e) ? info->length : sizeof(*e));
    if (e == NULL) {
        umpi_status_msg("out of memory reading a device-message envelope");
        return UMPI_ERR_NOMEM;
    }
    umpi_status_t st = umpi_p2p_gpu_recv_probed(e, info->length, msg);
    if (st != UMPI_OK) {
        free(e);
        return st;
    }
    free(msgreq->tmp);
    msgreq->tmp = e; /* freed with the request, or taken by the receive */
    *length = (size_t) e->bytes;
    return UMPI_OK;
}

/* ---- messages held: taken out of UCX's queue by a probe -------------------------------------
 *
 * MPI_Probe and MPI_Iprobe must report a message's length, and an envelope's UCX length is not its
 * message's. So a probe that meets an envelope takes it out of UCX's unexpected queue (reading
 * its header), and with it every older message of the same sender on that context: were a later
 * receive to find the envelope here first while an older message of that sender that it also
 * matches stayed in UCX, the two would be received out of order. Receives, probes and matched
 * probes look here before UCX while anything is held (one test of umpi_p2p_gpu_held_count
 * otherwise). Messages held are matched handles: UCX keeps their eager data, and rendezvous
 * senders wait, until they are received. Nothing posted earlier can match them (it would have
 * taken them when they arrived), so checking here first keeps MPI's order. */

struct umpi__held {
    struct umpi__held *next;
    uint32_t context;
    ucp_tag_t tag;              /* the sender's tag (envelope bit included) */
    size_t length;              /* the message's length (an envelope's: its message's) */
    ucp_tag_message_h msg;      /* plain messages: to receive; NULL for envelopes */
    struct umpi_p2p_gpu_envelope *env; /* envelopes: read already */
};

size_t umpi_p2p_gpu_held_count;
static struct umpi__held *umpi__held_head, **umpi__held_tail = &umpi__held_head;

void umpi_p2p_gpu_held_finalize(void)
{
    while (umpi__held_head != NULL) {
        struct umpi__held *e = umpi__held_head;
        umpi__held_head = e->next;
        umpi_debug(1, "cuda: a probed message of %zu bytes was never received", e->length);
        free(e->env);
        free(e);
    }
    umpi__held_tail = &umpi__held_head;
    umpi_p2p_gpu_held_count = 0;
}

static int umpi__tag_matches(ucp_tag_t t, uint32_t context, int source, int tag)
{
    ucp_tag_t want, mask;
    umpi_ucx_recv_tag(context, source, tag, &want, &mask);
    return ((t ^ want) & mask & ~UMPI_P2P_GPU_ENVELOPE_BIT) == 0;
}

int umpi_p2p_gpu_held_find(uint32_t context, int source, int tag, int take, ucp_tag_t *sender_tag, size_t *length,
                           ucp_tag_message_h *msg, void **env)
{
    for (struct umpi__held **pp = &umpi__held_head; *pp != NULL; pp = &(*pp)->next) {
        struct umpi__held *e = *pp;
        if (e->context != context || !umpi__tag_matches(e->tag, context, source, tag))
            continue;
        *sender_tag = e->tag;
        *length = e->length;
        if (take) {
            *msg = e->msg;
            *env = e->env;
            *pp = e->next;
            if (umpi__held_tail == &e->next)
                umpi__held_tail = pp;
            umpi_p2p_gpu_held_count--;
            free(e);
        }
        return 1;
    }
    return 0;
}

umpi_status_t umpi_p2p_gpu_hold(uint32_t context, int source, int tag, const ucp_tag_recv_info_t *found)
{
    int sender = umpi_ucx_tag_source(found->sender_tag);
    ucp_tag_t from = (ucp_tag_t) context << UMPI_UCX_CONTEXT_SHIFT |
                     (ucp_tag_t) (uint32_t) sender << UMPI_UCX_SOURCE_SHIFT;
    ucp_tag_t mask = ~(UMPI_UCX_TAG_MASK | UMPI_UCX_INTERNAL_BIT);
    for (;;) {
        ucp_tag_recv_info_t info;
        ucp_tag_message_h m = umpi_ucx_probe(from, mask, 1, &info);
        if (m == NULL) {
            umpi_status_msg("a probed device-message envelope left UCX's queue");
            return UMPI_ERR_INTERN;
        }
        struct umpi__held *e = calloc(1, sizeof(*e));
        if (e == NULL)
            umpi_die(1, "out of memory holding a probed message");
        e->context = context;
        e->tag = info.sender_tag;
        e->length = info.length;
        if (umpi_p2p_gpu_is_envelope(info.sender_tag)) {
            e->env = calloc(1, info.length > sizeof(*e->env) ? info.length : sizeof(*e->env));
            if (e->env == NULL || umpi_p2p_gpu_recv_probed(e->env, info.length, m) != UMPI_OK)
                umpi_die(1, "reading a probed device-message envelope failed: %s", umpi_status_last_msg());
            e->length = (size_t) e->env->bytes;
        } else {
            e->msg = m;
        }
        *umpi__held_tail = e;
        umpi__held_tail = &e->next;
        umpi_p2p_gpu_held_count++;
        umpi_debug(2, "cuda: probe: message of %zu bytes from rank %d tag %d held for a later receive%s", e->length,
                   sender, umpi_ucx_tag_tag(e->tag), e->env ? " (device-message envelope)" : "");
        if (e->env != NULL && umpi__tag_matches(e->tag, context, source, tag))
            return UMPI_OK; /* the one the probe found: the first of its sender that matches */
    }
}
