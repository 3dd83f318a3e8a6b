/*
 * The launch tree's messages (tree.h explains the tree, wire.h lays the messages out): what each
 * frame from a child or from the parent means, the PMIx fences across nodes, and the messages
 * the rest of mpirun sends through the tree.
 *
 * Up: a daemon relays what its children send to its parent unchanged, except a fence's parts,
 * which it gathers with its own node's part first, and BYE, which is for it alone; the head acts
 * on each message (output written, a rank's exit judged, ...). Down: a message for every vertex
 * (MPIRUN_TO_ALL) is passed on and acted on; one for a single vertex is passed toward it, and
 * acted on there. Acting on a message is mostly handing it up to launch.c or iof.c, through the
 * tree's upcalls (t->up).
 */
#include "tree.h"

#include <signal.h>
#include <stdlib.h>
#include <string.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>

/* ---- the fence ------------------------------------------------------------------------------- */

/* The whole job's data, come down to a daemon or gathered at the head: to our PMIx server, and
 * the fence is over here. */
static void fence_release(struct mpirun_tree *t, const char *data, size_t len)
{
    if (t->fence_local != NULL) {
        char *copy = malloc(len ? len : 1);

        if (copy != NULL) {
            memcpy(copy, data, len);
            mpirun_server_fence_done(t->fence_local, copy, len);
        }
        t->fence_local = NULL;
    }
    t->fence_sent = 0;
    t->fence_seq++;
}

/* Once our own node's part (if we fork ranks) and every child's are in: a daemon sends the gather
 * up; at the head it is the result. */
static void fence_check(struct mpirun_tree *t)
{
    struct mpirun_job *job = t->job;
    struct mpirun_wbuf w;
    size_t len;

    if (t->fence_sent || (job->my_node >= 0 && t->fence_local == NULL) ||
        t->fence_children < t->nchild)
        return;
    len = evbuffer_get_length(t->fence_data);
    mpirun_wbuf_start(&w, job->vertex > 0 ? MPIRUN_MSG_FENCE_UP : MPIRUN_MSG_FENCE_DOWN,
                      job->vertex > 0 ? 0 : MPIRUN_TO_ALL);
    mpirun_wbuf_u32(&w, t->fence_seq);
    mpirun_wbuf_bytes(&w, evbuffer_pullup(t->fence_data, -1), len);
    if (mpirun_wbuf_finish(&w) < 0) {
        mpirun_tree_report(t, 1, 0, "out of memory in a fence");
        return;
    }
    evbuffer_drain(t->fence_data, len);
    t->fence_children = 0;
    t->fence_sent = 1;
    if (job->vertex > 0) {
        mpirun_tree_send_up(t, w.p, w.len);
    } else {
        /* the head's gather is the result: down to everyone, and to our own ranks */
        struct mpirun_rbuf r = { .p = w.p + MPIRUN_HDR_LEN, .len = w.len - MPIRUN_HDR_LEN };
        const char *data;
        size_t dlen;

        mpirun_tree_send_down(t, w.p, w.len, MPIRUN_TO_ALL);
        mpirun_rbuf_u32(&r);
        data = mpirun_rbuf_rest(&r, &dlen);
        fence_release(t, data, dlen);
    }
    mpirun_wbuf_free(&w);
}

void mpirun_tree_fence(struct mpirun_job *job, struct mpirun_note *fence)
{
    struct mpirun_tree *t = job->tree;

    if (t->fence_local != NULL) {
        /* libpmix starts a fence only when the last one ended: this is a bug, not a user's */
        mpirun_error("a second fence began before the first ended");
        free(fence);
        return;
    }
    t->fence_local = fence;
    evbuffer_add(t->fence_data, fence->data, fence->len);
    fence_check(t);
}

/* ---- messages from a child ------------------------------------------------------------------- */

/* One whole frame (header included) from child l; 0, or -1 if it was malformed. */
static int from_child(struct link *l, const char *frame, uint32_t len, uint32_t type)
{
    struct mpirun_tree *t = l->tree;
    struct mpirun_job *job = t->job;
    struct mpirun_rbuf r = { .p = frame + MPIRUN_HDR_LEN, .len = len };

    if (type == MPIRUN_MSG_FENCE_UP) {
        uint32_t seq = mpirun_rbuf_u32(&r);
        size_t dlen;
        const char *data = mpirun_rbuf_rest(&r, &dlen);

        if (r.bad || seq != t->fence_seq || t->fence_sent)
            return -1;
        evbuffer_add(t->fence_data, data, dlen);
        t->fence_children++;
        fence_check(t);
        return 0;
    }
    if (type == MPIRUN_MSG_BYE) {
        l->state = LINK_BYE;
        return 0;
    }
    if (job->vertex > 0) {
        /* everything else is for the head */
        if (type < MPIRUN_MSG_HELLO || type > MPIRUN_MSG_BYE || type == MPIRUN_MSG_HELLO)
            return -1;
        mpirun_tree_send_up(t, frame, MPIRUN_HDR_LEN + len);
        return 0;
    }

    switch (type) {
    case MPIRUN_MSG_IOF: {
        uint32_t rank = mpirun_rbuf_u32(&r);
        int fd = mpirun_rbuf_u8(&r), eol = mpirun_rbuf_u8(&r);
        size_t dlen;
        const char *data = mpirun_rbuf_rest(&r, &dlen);

        if (r.bad || rank >= (uint32_t)job->np || (fd != 1 && fd != 2))
            return -1;
        t->up->iof_write(job, (int)rank, fd, data, dlen, eol);
        return 0;
    }
    case MPIRUN_MSG_RANK_EXIT: {
        uint32_t rank = mpirun_rbuf_u32(&r), pid = mpirun_rbuf_u32(&r);
        uint32_t status = mpirun_rbuf_u32(&r);
        int conn = mpirun_rbuf_u8(&r), fin = mpirun_rbuf_u8(&r), ab = mpirun_rbuf_u8(&r);

        if (r.bad || rank >= (uint32_t)job->np)
            return -1;
        t->up->remote_exit(job, (int)rank, (pid_t)pid, (int)status, conn, fin, ab);
        return 0;
    }
    case MPIRUN_MSG_ABORT: {
        uint32_t rank = mpirun_rbuf_u32(&r), pid = mpirun_rbuf_u32(&r);
        int code = (int)mpirun_rbuf_u32(&r);
        char *msg = mpirun_rbuf_str(&r);

        if (r.bad || rank >= (uint32_t)job->np) {
            free(msg);
            return -1;
        }
        t->up->remote_abort(job, (int)rank, (pid_t)pid, code, msg);
        free(msg);
        return 0;
    }
    case MPIRUN_MSG_STDIN_ACK: {
        uint32_t more = mpirun_rbuf_u32(&r);

        if (r.bad)
            return -1;
        t->up->iof_stdin_ack(job, more != 0);
        return 0;
    }
    case MPIRUN_MSG_ERROR: {
        int code = (int)mpirun_rbuf_u32(&r);
        int lost = (int)mpirun_rbuf_u32(&r);
        char *msg = mpirun_rbuf_str(&r);

        if (r.bad) {
            free(msg);
            return -1;
        }
        mpirun_tree_head_lost(t, code, lost, msg);
        free(msg);
        return 0;
    }
    default:
        return -1;
    }
}

void mpirun_tree_on_child_read(struct bufferevent *bev, void *arg)
{
    struct link *l = arg;
    struct evbuffer *in = bufferevent_get_input(bev);

    while (l->state == LINK_UP || l->state == LINK_BYE) {
        uint32_t len, type, dest;
        const char *frame;
        int got = mpirun_tree_next_frame(in, &frame, &len, &type, &dest);

        if (got == 0)
            return;
        if (got < 0 || from_child(l, frame, len, type) < 0) {
            mpirun_tree_child_lost(l, "it sent a malformed message");
            return;
        }
        evbuffer_drain(in, MPIRUN_HDR_LEN + (size_t)len);
    }
}

/* ---- messages from the parent ---------------------------------------------------------------- */

/* One whole frame from the parent. */
static int from_parent(struct mpirun_tree *t, const char *frame, uint32_t len, uint32_t type,
                       uint32_t dest)
{
    struct mpirun_job *job = t->job;
    struct mpirun_rbuf r = { .p = frame + MPIRUN_HDR_LEN, .len = len };

    if (dest != MPIRUN_TO_ALL && dest != (uint32_t)job->vertex) {
        mpirun_tree_send_down(t, frame, MPIRUN_HDR_LEN + len, dest);
        return 0;
    }
    if (dest == MPIRUN_TO_ALL && type != MPIRUN_MSG_LAUNCH)
        mpirun_tree_send_down(t, frame, MPIRUN_HDR_LEN + len, dest);

    switch (type) {
    case MPIRUN_MSG_FENCE_DOWN: {
        uint32_t seq = mpirun_rbuf_u32(&r);
        size_t dlen;
        const char *data = mpirun_rbuf_rest(&r, &dlen);

        if (r.bad || seq != t->fence_seq)
            return -1;
        fence_release(t, data, dlen);
        return 0;
    }
    case MPIRUN_MSG_STDIN: {
        size_t dlen;
        const char *data = mpirun_rbuf_rest(&r, &dlen);

        t->up->iof_stdin_data(job, data, dlen);
        return 0;
    }
    case MPIRUN_MSG_END: {
        uint32_t signo = mpirun_rbuf_u32(&r), grace_ms = mpirun_rbuf_u32(&r);

        if (r.bad || signo >= NSIG)
            return -1;
        t->up->end_local(job, (int)signo, grace_ms / 1000.0);
        return 0;
    }
    case MPIRUN_MSG_SIGNAL: {
        uint32_t signo = mpirun_rbuf_u32(&r);

        if (r.bad || signo >= NSIG)
            return -1;
        t->up->signal_local(job, (int)signo);
        return 0;
    }
    case MPIRUN_MSG_SHUTDOWN:
        mpirun_tree_begin_shutdown(t);
        mpirun_tree_check_done(job);
        return 0;
    default:
        return -1;
    }
}

void mpirun_tree_on_parent_read(struct bufferevent *bev, void *arg)
{
    struct mpirun_tree *t = arg;
    struct evbuffer *in = bufferevent_get_input(bev);

    while (!t->parent_lost) {
        uint32_t len, type, dest;
        const char *frame;
        int got = mpirun_tree_next_frame(in, &frame, &len, &type, &dest);

        if (got == 0)
            return;
        if (got < 0 || from_parent(t, frame, len, type, dest) < 0) {
            mpirun_error("malformed message from the parent umpi process; exiting");
            mpirun_tree_parent_gone(t);
            return;
        }
        evbuffer_drain(in, MPIRUN_HDR_LEN + (size_t)len);
    }
}

/* ---- messages from this vertex --------------------------------------------------------------- */

void mpirun_tree_rank_exit(struct mpirun_job *job, struct mpirun_rank *rk)
{
    struct mpirun_wbuf w;

    mpirun_wbuf_start(&w, MPIRUN_MSG_RANK_EXIT, 0);
    mpirun_wbuf_u32(&w, (uint32_t)rk->rank);
    mpirun_wbuf_u32(&w, (uint32_t)rk->pid);
    mpirun_wbuf_u32(&w, (uint32_t)rk->status);
    mpirun_wbuf_u8(&w, (uint8_t)rk->connected);
    mpirun_wbuf_u8(&w, (uint8_t)rk->finalized);
    mpirun_wbuf_u8(&w, (uint8_t)rk->aborted);
    if (mpirun_wbuf_finish(&w) < 0)
        return;
    mpirun_tree_send_up(job->tree, w.p, w.len);
    mpirun_wbuf_free(&w);
}

void mpirun_tree_rank_abort(struct mpirun_job *job, struct mpirun_rank *rk, int code,
                            const char *msg)
{
    struct mpirun_wbuf w;

    mpirun_wbuf_start(&w, MPIRUN_MSG_ABORT, 0);
    mpirun_wbuf_u32(&w, (uint32_t)rk->rank);
    mpirun_wbuf_u32(&w, (uint32_t)rk->pid);
    mpirun_wbuf_u32(&w, (uint32_t)code);
    mpirun_wbuf_str(&w, msg);
    if (mpirun_wbuf_finish(&w) < 0)
        return;
    mpirun_tree_send_up(job->tree, w.p, w.len);
    mpirun_wbuf_free(&w);
}

void mpirun_tree_iof(struct mpirun_job *job, int rank, int dest_fd, const char *p, size_t len,
                     int end_line)
{
    struct mpirun_wbuf w;

    mpirun_wbuf_start(&w, MPIRUN_MSG_IOF, 0);
    mpirun_wbuf_u32(&w, (uint32_t)rank);
    mpirun_wbuf_u8(&w, (uint8_t)dest_fd);
    mpirun_wbuf_u8(&w, (uint8_t)end_line);
    mpirun_wbuf_bytes(&w, p, len);
    if (mpirun_wbuf_finish(&w) < 0)
        return;
    mpirun_tree_send_up(job->tree, w.p, w.len);
    mpirun_wbuf_free(&w);
}

void mpirun_tree_stdin(struct mpirun_job *job, const char *p, size_t len)
{
    struct mpirun_tree *t = job->tree;
    struct mpirun_wbuf w;

    mpirun_wbuf_start(&w, MPIRUN_MSG_STDIN, (uint32_t)t->node_vertex[job->map.node_of[0]]);
    mpirun_wbuf_bytes(&w, p, len);
    if (mpirun_wbuf_finish(&w) < 0)
        return;
    mpirun_tree_send_down(t, w.p, w.len, (uint32_t)t->node_vertex[job->map.node_of[0]]);
    mpirun_wbuf_free(&w);
}

void mpirun_tree_stdin_ack(struct mpirun_job *job, int more)
{
    mpirun_tree_send_simple(job->tree, MPIRUN_MSG_STDIN_ACK, 0, 1, (uint32_t)more, 0);
}

void mpirun_tree_signal(struct mpirun_job *job, int signo)
{
    if (job->tree != NULL && job->vertex == 0)
        mpirun_tree_send_simple(job->tree, MPIRUN_MSG_SIGNAL, MPIRUN_TO_ALL, 1, (uint32_t)signo, 0);
}
