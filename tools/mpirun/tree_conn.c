/*
 * The launch tree's sockets (tree.h explains the tree): frames written to the parent or down
 * toward a vertex, flow control on the link to the parent, whole frames cut from what arrives,
 * and connections closed. What the frames mean is tree_route.c's business.
 */
#include "tree.h"

#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdlib.h>
#include <sys/socket.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/event.h>
#include <event2/listener.h>

/* ---- writing --------------------------------------------------------------------------------- */

/*
 * A daemon whose parent link backs up (the network is slower than its ranks' output) stops
 * reading what feeds it, its ranks' pipes and its children's links, until the link drains: the
 * memory a daemon holds stays bounded, and the ranks block in write() as they would on a terminal.
 */
static void decongest(struct mpirun_tree *t, int resume)
{
    t->congested = !resume;
    t->up->iof_pause(t->job, resume);
    for (int i = 0; i < t->nchild; i++) {
        if (t->child[i].bev == NULL)
            continue;
        if (resume)
            bufferevent_enable(t->child[i].bev, EV_READ);
        else
            bufferevent_disable(t->child[i].bev, EV_READ);
    }
}

void mpirun_tree_on_parent_drained(struct bufferevent *bev, void *arg)
{
    struct mpirun_tree *t = arg;

    if (t->congested)
        decongest(t, 1);
}

void mpirun_tree_send_up(struct mpirun_tree *t, const void *frame, size_t len)
{
    if (t->parent == NULL || t->parent_lost)
        return;
    bufferevent_write(t->parent, frame, len);
    if (!t->congested && evbuffer_get_length(bufferevent_get_output(t->parent)) > CONGESTED)
        decongest(t, 0);
}

static void link_send(struct link *l, const void *frame, size_t len)
{
    if (l->state == LINK_UP || l->state == LINK_BYE)
        bufferevent_write(l->bev, frame, len);
    else if (l->state == LINK_STARTING)
        evbuffer_add(l->queue, frame, len);
}

struct link *mpirun_tree_child_toward(struct mpirun_tree *t, int v)
{
    while (v > 0 && mpirun_tree_parent_of(t, v) != t->job->vertex)
        v = mpirun_tree_parent_of(t, v);
    if (v <= 0 || v < t->first_child || v >= t->first_child + t->nchild)
        return NULL;
    return &t->child[v - t->first_child];
}

void mpirun_tree_send_down(struct mpirun_tree *t, const char *frame, size_t len, uint32_t dest)
{
    if (dest == MPIRUN_TO_ALL) {
        for (int i = 0; i < t->nchild; i++)
            link_send(&t->child[i], frame, len);
    } else {
        struct link *l = mpirun_tree_child_toward(t, (int)dest);

        if (l != NULL)
            link_send(l, frame, len);
    }
}

void mpirun_tree_send_simple(struct mpirun_tree *t, uint32_t type, uint32_t dest, int nvals,
                             uint32_t a, uint32_t b)
{
    struct mpirun_wbuf w;

    mpirun_wbuf_start(&w, type, dest);
    if (nvals > 0)
        mpirun_wbuf_u32(&w, a);
    if (nvals > 1)
        mpirun_wbuf_u32(&w, b);
    if (mpirun_wbuf_finish(&w) < 0)
        return;
    if (type >= MPIRUN_MSG_LAUNCH)
        mpirun_tree_send_down(t, w.p, w.len, dest);
    else
        mpirun_tree_send_up(t, w.p, w.len);
    mpirun_wbuf_free(&w);
}

/* ---- reading --------------------------------------------------------------------------------- */

int mpirun_tree_next_frame(struct evbuffer *in, const char **frame, uint32_t *len, uint32_t *type,
                           uint32_t *dest)
{
    size_t have = evbuffer_get_length(in);

    if (have < MPIRUN_HDR_LEN)
        return 0;
    mpirun_wire_header((const char *)evbuffer_pullup(in, MPIRUN_HDR_LEN), len, type, dest);
    if (*len > MPIRUN_MAX_MSG)
        return -1;
    if (have < MPIRUN_HDR_LEN + (size_t)*len)
        return 0;
    *frame = (const char *)evbuffer_pullup(in, MPIRUN_HDR_LEN + (ssize_t)*len);
    return 1;
}

/* ---- the connections themselves -------------------------------------------------------------- */

void mpirun_tree_keepalive(int fd)
{
    int on = 1, idle = 10, intvl = 5, cnt = 3;

    /* a host that vanishes without closing its connections is noticed within half a minute */
    setsockopt(fd, SOL_SOCKET, SO_KEEPALIVE, &on, sizeof(on));
    setsockopt(fd, IPPROTO_TCP, TCP_KEEPIDLE, &idle, sizeof(idle));
    setsockopt(fd, IPPROTO_TCP, TCP_KEEPINTVL, &intvl, sizeof(intvl));
    setsockopt(fd, IPPROTO_TCP, TCP_KEEPCNT, &cnt, sizeof(cnt));
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &on, sizeof(on));
}

void mpirun_tree_link_close(struct link *l)
{
    if (l->bev != NULL)
        bufferevent_free(l->bev);
    l->bev = NULL;
    if (l->timer != NULL)
        event_del(l->timer);
    l->state = LINK_DOWN;
}

void mpirun_tree_greeting_free(struct greeting *g, int close_conn)
{
    struct mpirun_tree *t = g->tree;

    if (g->prev != NULL)
        g->prev->next = g->next;
    else
        t->greetings = g->next;
    if (g->next != NULL)
        g->next->prev = g->prev;
    if (close_conn && g->bev != NULL)
        bufferevent_free(g->bev);
    if (g->timer != NULL)
        event_free(g->timer);
    free(g);
}

void mpirun_tree_close_all(struct mpirun_tree *t)
{
    for (int i = 0; i < t->nchild; i++)
        mpirun_tree_link_close(&t->child[i]);
    if (t->listener != NULL)
        evconnlistener_free(t->listener);
    t->listener = NULL;
    while (t->greetings != NULL)
        mpirun_tree_greeting_free(t->greetings, 1);
    if (t->parent != NULL)
        bufferevent_free(t->parent);
    t->parent = NULL;
}
