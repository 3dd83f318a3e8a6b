/* Internal collectives for communicator creation (umpi_coll_internal.h). */
#include "coll/umpi_coll_internal.h"
#include "core/umpi_progress.h"
#include "netmod/ucx/umpi_ucx.h"

#include <stdlib.h>
#include <string.h>

void umpi_coll_grp_of_comm(umpi_coll_grp_t *g, const umpi_comm_t *c)
{
    g->context = c->context_id + 1;
    g->tag_flags = c->is_inter ? UMPI_COLL_TAG_LOCAL : 0;
    g->rank = c->rank;
    g->size = c->size;
    g->world = c->is_inter ? c->group->world : c->world_rank;
    g->src = NULL;
}

static int umpi__world(const umpi_coll_grp_t *g, int member)
{
    return g->world ? g->world[member] : member;
}

static int umpi__src(const umpi_coll_grp_t *g, int member)
{
    return g->src ? g->src[member] : member;
}

static umpi_status_t umpi__wait_send(void *ucx_req)
{
    ucs_status_t s = umpi_ucx_wait(ucx_req);
    return s == UCS_OK ? UMPI_OK : umpi_ucx_status(s, "internal send");
}

static umpi_status_t umpi__wait_recv(struct umpi_ucx_recv_wait *w)
{
    umpi_waiter_t waiter = {0};
    while (!w->done)
        umpi_progress_step(&waiter);
    return w->status == UCS_OK ? UMPI_OK : umpi_ucx_status(w->status, "internal receive");
}

/* Either direction optional (peer_world < 0 / peer_src < 0 skips it); the receive is posted first. */
static umpi_status_t umpi__sendrecv(uint32_t context, int tag, int my_src, int peer_world, const void *sbuf,
                                    size_t slen, int peer_src, void *rbuf, size_t rlen)
{
    struct umpi_ucx_recv_wait w;
    umpi_status_t st = UMPI_OK;
    int tagfield = (int) UMPI_UCX_INTERNAL_BIT | tag;
    if (peer_src >= 0) {
        ucp_tag_t t = umpi_ucx_send_tag(context, peer_src, tagfield);
        st = umpi_ucx_recv_blocking(rbuf, rlen, t, ~(ucp_tag_t) 0, &w);
        if (st != UMPI_OK)
            return st;
    }
    if (peer_world >= 0) {
        ucp_ep_h ep;
        void *ucx_req = NULL;
        st = umpi_ucx_ep(peer_world, &ep);
        if (st == UMPI_OK)
            st = umpi_ucx_send(ep, sbuf, slen, umpi_ucx_send_tag(context, my_src, tagfield), 0, NULL, &ucx_req);
        if (st == UMPI_OK)
            st = umpi__wait_send(ucx_req);
    }
    if (peer_src >= 0) {
        /* After a failed send (the peer cannot be reached, so its message to us will not come
         * either) the receive is cancelled rather than waited for forever; either way it is
         * complete before rbuf is given back. */
        if (st == UMPI_OK) {
            st = umpi__wait_recv(&w);
        } else {
            umpi_waiter_t waiter = {0};
            if (!w.done && w.ucx_req != NULL)
                umpi_ucx_cancel(w.ucx_req);
            while (!w.done) /* the send's error is the one to report, not the cancellation */
                umpi_progress_step(&waiter);
        }
    }
    return st;
}

umpi_status_t umpi_coll_exchange(uint32_t context, int tag, int my_src, int peer_world, const void *sbuf,
                                 size_t slen, int peer_src, void *rbuf, size_t rlen)
{
    return umpi__sendrecv(context, tag, my_src, peer_world, sbuf, slen, peer_src, rbuf, rlen);
}

/* Binomial tree rooted at root, in ranks relative to it. */
umpi_status_t umpi_coll_bcast(const umpi_coll_grp_t *g, void *buf, size_t len, int root)
{
    int tag = UMPI_COLL_TAG_BCAST | g->tag_flags, me = umpi__src(g, g->rank);
    int rel = (g->rank - root + g->size) % g->size;
    int mask = 1;
    while (mask < g->size) {
        if (rel & mask) {
            int parent = (rel - mask + root) % g->size;
            umpi_status_t st = umpi__sendrecv(g->context, tag, me, -1, NULL, 0, umpi__src(g, parent), buf, len);
            if (st != UMPI_OK)
                return st;
            break;
        }
        mask <<= 1;
    }
    for (mask >>= 1; mask > 0; mask >>= 1) {
        if (rel + mask < g->size) {
            int child = (rel + mask + root) % g->size;
            umpi_status_t st = umpi__sendrecv(g->context, tag, me, umpi__world(g, child), buf, len, -1, NULL, 0);
            if (st != UMPI_OK)
                return st;
        }
    }
    return UMPI_OK;
}

static void umpi__combine(int *acc, const int *in, int n, umpi_coll_op_t op)
{
    for (int i = 0; i < n; i++) {
        switch (op) {
        case UMPI_COLL_BAND: acc[i] &= in[i]; break;
        case UMPI_COLL_BOR: acc[i] |= in[i]; break;
        case UMPI_COLL_MAX: acc[i] = in[i] > acc[i] ? in[i] : acc[i]; break;
        }
    }
}

/*
 * Recursive doubling over the largest power of two p2 <= size; the members above it first fold
 * their data into a partner below p2, and get the result back from it at the end. The ops are
 * commutative, so the order of combination does not matter.
 */
umpi_status_t umpi_coll_allreduce_int(const umpi_coll_grp_t *g, int *buf, int n, umpi_coll_op_t op)
{
    int tag = UMPI_COLL_TAG_ALLREDUCE | g->tag_flags, me = umpi__src(g, g->rank);
    size_t len = (size_t) n * sizeof(int);
    int p2 = 1;
    while (p2 * 2 <= g->size)
        p2 *= 2;
    int *tmp = malloc(len ? len : 1);
    if (tmp == NULL)
        return UMPI_ERR_NOMEM;
    umpi_status_t st = UMPI_OK;
    int r = g->rank;
    if (r >= p2) {
        st = umpi__sendrecv(g->context, tag, me, umpi__world(g, r - p2), buf, len, -1, NULL, 0);
        if (st == UMPI_OK)
            st = umpi__sendrecv(g->context, tag, me, -1, NULL, 0, umpi__src(g, r - p2), buf, len);
        goto out;
    }
    if (r + p2 < g->size) {
        st = umpi__sendrecv(g->context, tag, me, -1, NULL, 0, umpi__src(g, r + p2), tmp, len);
        if (st != UMPI_OK)
            goto out;
        umpi__combine(buf, tmp, n, op);
    }
    for (int mask = 1; mask < p2; mask <<= 1) {
        int peer = r ^ mask;
        st = umpi__sendrecv(g->context, tag, me, umpi__world(g, peer), buf, len, umpi__src(g, peer), tmp, len);
        if (st != UMPI_OK)
            goto out;
        umpi__combine(buf, tmp, n, op);
    }
    if (r + p2 < g->size)
        st = umpi__sendrecv(g->context, tag, me, umpi__world(g, r + p2), buf, len, -1, NULL, 0);
out:
    free(tmp);
    return st;
}
