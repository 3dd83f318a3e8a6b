/*
 * The launch tree: how one mpirun runs a job on many machines.
 *
 * Vertices are numbered as a k-ary heap (k = UMPI_LAUNCH_FANOUT): vertex 0 is the head (the
 * user's mpirun), the children of v are k*v+1 .. k*v+k, so the parent of v > 0 is (v-1)/k and the
 * depth is about log_k(number of hosts). Each vertex other than the head is a daemon on one node;
 * the head forks the ranks of its own node when the host list names this machine, none otherwise.
 *
 *              head (vertex 0) ---- TCP ---- daemon 1 ---- daemon 3 ...
 *                     |                            \------ daemon 4 ...
 *                     \-------- TCP ---- daemon 2 ---- daemon 5 ...
 *
 * Start: every vertex with children listens on a TCP port (any address, IPv4 and IPv6) and
 * starts each child with the launch agent: `AGENT... HOST MPIRUN --umpi-daemon ADDRS:PORT VERTEX
 * TOKEN`. The child connects back (trying each of our addresses), says HELLO with its vertex and
 * the job's random token, and gets LAUNCH, the job description, from which it computes the same
 * map as everyone; it then starts its own children the same way (before its ranks, which start
 * while they come up). So a level of the tree starts in parallel and the head waits for about
 * depth agent starts.
 *
 * Running: messages going up (output, exits, aborts, fence contributions, errors) are relayed by
 * every daemon to its parent unchanged, except fences: a vertex waits for its own node's part and
 * each child's, then sends the concatenation up; the head sends the whole down, where each vertex
 * passes it on and hands it to its PMIx server. Messages going down (END, SIGNAL, SHUTDOWN, the
 * fence result) go to every vertex; STDIN goes to the vertex of rank 0 only.
 *
 * Failures: a child's connection that closes before it said BYE, an agent that fails before its
 * daemon connected, or a daemon that does not connect within UMPI_LAUNCH_TIMEOUT seconds is a lost
 * subtree: its parent reports it, and the head counts its ranks as gone, names the host and ends
 * the job. A daemon whose parent connection closes kills its ranks and exits, so its own children
 * see their parent go in turn: nothing is left behind on any host.
 *
 * End: when every rank has exited the head sends SHUTDOWN; each daemon passes it on, waits for
 * its children to say BYE and close, flushes its output and closes with BYE itself.
 */
#include "mpirun.h"
#include "wire.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/event.h>
#include <event2/listener.h>

#define HELLO_TIMEOUT_S 10       /* an accepted connection must say who it is within this */
#define SHUTDOWN_WAIT_S 10       /* for the daemons to say BYE once the job is over */
#define GIVEUP_AFTER_S  5        /* after the grace period, for daemons to report their ranks */
#define CONGESTED  (16u << 20)   /* bytes queued to the parent at which a daemon stops reading */
#define DECONGESTED (1u << 20)   /* ... and at which it reads again */

enum link_state { LINK_STARTING, LINK_UP, LINK_BYE, LINK_DOWN };

struct link {
    struct mpirun_tree *tree;
    int vertex;
    enum link_state state;
    struct bufferevent *bev;      /* once connected */
    struct evbuffer *queue;       /* messages for it before it connected */
    pid_t agent;                  /* launch agent, 0 once reaped */
    struct event *timer;          /* connect deadline */
};

/* An accepted connection that has not said HELLO yet. */
struct greeting {
    struct mpirun_tree *tree;
    struct bufferevent *bev;
    struct event *timer;
    struct greeting *next, *prev;
};

struct mpirun_tree {
    struct mpirun_job *job;
    int nverts, fanout, timeout_s;
    int *vertex_node;             /* [nverts]: node whose ranks each vertex forks (-1: none) */
    int *node_vertex;             /* [nnodes] */
    char **agent;
    char *daemon_path;
    char token[33];
    char uri[1024];               /* "addr,addr,...:port" for our children */
    int dual_stack;               /* we listen on IPv6 too (make_uri may name IPv6 addresses) */
    struct evconnlistener *listener;
    struct link *child;
    int nchild, first_child;
    struct greeting *greetings;
    struct bufferevent *parent;   /* daemons */
    struct mpirun_wbuf launch;    /* the LAUNCH frame every child receives first */

    /* the fence under way */
    uint32_t fence_seq;
    int fence_children;           /* children whose part arrived */
    int fence_sent;               /* our part went up; waiting for the result */
    struct mpirun_note *fence_local;
    struct evbuffer *fence_data;

    int shutdown;                 /* SHUTDOWN sent (head) or received (daemon) */
    int shutdown_over;            /* head: the wait for the daemons' BYE timed out */
    int flush_over;               /* daemon: the wait for its last messages to leave timed out */
    int parent_lost;
    int congested;
    int finished;
    struct event *giveup;
};

static int parent_of(const struct mpirun_tree *t, int v)
{
    return (v - 1) / t->fanout;
}

static const char *vertex_host(const struct mpirun_tree *t, int v)
{
    int node = t->vertex_node[v];

    return node >= 0 ? t->job->map.node_name[node] : t->job->hostname;
}

/* ---- sending ------------------------------------------------------------------------------------ */

static void decongest(struct mpirun_tree *t, int resume);

static void send_up(struct mpirun_tree *t, const void *frame, size_t len)
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

/* The child of ours whose subtree holds vertex v, or NULL. */
static struct link *child_toward(struct mpirun_tree *t, int v)
{
    while (v > 0 && parent_of(t, v) != t->job->vertex)
        v = parent_of(t, v);
    if (v <= 0 || v < t->first_child || v >= t->first_child + t->nchild)
        return NULL;
    return &t->child[v - t->first_child];
}

static void send_down(struct mpirun_tree *t, const char *frame, size_t len, uint32_t dest)
{
    if (dest == MPIRUN_TO_ALL) {
        for (int i = 0; i < t->nchild; i++)
            link_send(&t->child[i], frame, len);
    } else {
        struct link *l = child_toward(t, (int)dest);

        if (l != NULL)
            link_send(l, frame, len);
    }
}

/* Builds and sends a message without payload beyond up to two u32 values. */
static void send_simple(struct mpirun_tree *t, uint32_t type, uint32_t dest, int nvals,
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
        send_down(t, w.p, w.len, dest);
    else
        send_up(t, w.p, w.len);
    mpirun_wbuf_free(&w);
}

/* ---- failures ----------------------------------------------------------------------------------- */

static void head_lost(struct mpirun_tree *t, int code, int lost_vertex, const char *msg)
{
    struct mpirun_job *job = t->job;

    if (!job->ending && msg[0] != '\0')
        fprintf(stderr, "%s: %s; ending the job\n", mpirun_name, msg);
    if (lost_vertex > 0 && lost_vertex < t->nverts) {
        /* the vertex and every vertex below it */
        for (int v = lost_vertex; v < t->nverts; v++) {
            int u = v;

            while (u > lost_vertex)
                u = parent_of(t, u);
            if (u == lost_vertex && t->vertex_node[v] >= 0)
                mpirun_ranks_lost(job, t->vertex_node[v]);
        }
    }
    mpirun_end_job(job, code, SIGTERM, MPIRUN_FAIL_GRACE_S);
    mpirun_maybe_done(job);
}

/* A failure of this vertex or of a subtree below it: the head acts, a daemon reports. */
static void report(struct mpirun_tree *t, int code, int lost_vertex, const char *msg)
{
    struct mpirun_wbuf w;

    if (t->job->vertex == 0) {
        head_lost(t, code, lost_vertex, msg);
        return;
    }
    mpirun_wbuf_start(&w, MPIRUN_MSG_ERROR, 0);
    mpirun_wbuf_u32(&w, (uint32_t)code);
    mpirun_wbuf_u32(&w, (uint32_t)(lost_vertex > 0 ? lost_vertex : 0));
    mpirun_wbuf_str(&w, msg);
    if (mpirun_wbuf_finish(&w) == 0) {
        send_up(t, w.p, w.len);
        mpirun_wbuf_free(&w);
    }
}

void mpirun_tree_error(struct mpirun_job *job, int code, const char *fmt, ...)
{
    char msg[1024];
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    if (job->tree != NULL)
        report(job->tree, code, 0, msg);
    else
        mpirun_error("%s", msg);
}

static void all_down_check(struct mpirun_tree *t);

static void link_close(struct link *l)
{
    if (l->bev != NULL)
        bufferevent_free(l->bev);
    l->bev = NULL;
    if (l->timer != NULL)
        event_del(l->timer);
    l->state = LINK_DOWN;
}

static void child_lost(struct link *l, const char *why)
{
    struct mpirun_tree *t = l->tree;
    char msg[1024];

    if (l->state == LINK_DOWN)
        return;
    link_close(l);
    if (l->agent > 0)
        kill(l->agent, SIGTERM);
    if (!t->shutdown) {
        snprintf(msg, sizeof(msg), "lost the umpi daemon on %s: %s", vertex_host(t, l->vertex),
                 why);
        report(t, 1, l->vertex, msg);
    }
    all_down_check(t);
}

/* ---- the fence ---------------------------------------------------------------------------------- */

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
        report(t, 1, 0, "out of memory in a fence");
        return;
    }
    evbuffer_drain(t->fence_data, len);
    t->fence_children = 0;
    t->fence_sent = 1;
    if (job->vertex > 0) {
        send_up(t, w.p, w.len);
    } else {
        /* the head's gather is the result: down to everyone, and to our own ranks */
        struct mpirun_rbuf r = { .p = w.p + MPIRUN_HDR_LEN, .len = w.len - MPIRUN_HDR_LEN };
        const char *data;
        size_t dlen;

        send_down(t, w.p, w.len, MPIRUN_TO_ALL);
        mpirun_rbuf_u32(&r);
        data = mpirun_rbuf_rest(&r, &dlen);
        if (t->fence_local != NULL) {
            char *copy = malloc(dlen ? dlen : 1);

            if (copy != NULL) {
                memcpy(copy, data, dlen);
                mpirun_server_fence_done(t->fence_local, copy, dlen);
            }
            t->fence_local = NULL;
        }
        t->fence_sent = 0;
        t->fence_seq++;
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

/* A daemon: the job's data came down. */
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

/* ---- messages from a child ---------------------------------------------------------------------- */

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
        send_up(t, frame, MPIRUN_HDR_LEN + len);
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
        mpirun_iof_write(job, (int)rank, fd, data, dlen, eol);
        return 0;
    }
    case MPIRUN_MSG_RANK_EXIT: {
        uint32_t rank = mpirun_rbuf_u32(&r), pid = mpirun_rbuf_u32(&r);
        uint32_t status = mpirun_rbuf_u32(&r);
        int conn = mpirun_rbuf_u8(&r), fin = mpirun_rbuf_u8(&r), ab = mpirun_rbuf_u8(&r);

        if (r.bad || rank >= (uint32_t)job->np)
            return -1;
        mpirun_remote_exit(job, (int)rank, (pid_t)pid, (int)status, conn, fin, ab);
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
        mpirun_remote_abort(job, (int)rank, (pid_t)pid, code, msg);
        free(msg);
        return 0;
    }
    case MPIRUN_MSG_STDIN_ACK: {
        uint32_t more = mpirun_rbuf_u32(&r);

        if (r.bad)
            return -1;
        mpirun_iof_stdin_ack(job, more != 0);
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
        head_lost(t, code, lost, msg);
        free(msg);
        return 0;
    }
    default:
        return -1;
    }
}

static void on_child_read(struct bufferevent *bev, void *arg)
{
    struct link *l = arg;
    struct evbuffer *in = bufferevent_get_input(bev);

    while (l->state == LINK_UP || l->state == LINK_BYE) {
        size_t have = evbuffer_get_length(in);
        uint32_t len, type, dest;
        const char *frame;

        if (have < MPIRUN_HDR_LEN)
            return;
        mpirun_wire_header((const char *)evbuffer_pullup(in, MPIRUN_HDR_LEN), &len, &type, &dest);
        if (len > MPIRUN_MAX_MSG) {
            child_lost(l, "it sent a malformed message");
            return;
        }
        if (have < MPIRUN_HDR_LEN + (size_t)len)
            return;
        frame = (const char *)evbuffer_pullup(in, MPIRUN_HDR_LEN + (ssize_t)len);
        if (from_child(l, frame, len, type) < 0) {
            child_lost(l, "it sent a malformed message");
            return;
        }
        evbuffer_drain(in, MPIRUN_HDR_LEN + (size_t)len);
    }
}

static void on_child_event(struct bufferevent *bev, short what, void *arg)
{
    struct link *l = arg;

    if (!(what & (BEV_EVENT_EOF | BEV_EVENT_ERROR)))
        return;
    if (l->state == LINK_BYE || l->tree->shutdown) {
        link_close(l);
        all_down_check(l->tree);
        return;
    }
    child_lost(l, what & BEV_EVENT_ERROR ? strerror(EVUTIL_SOCKET_ERROR())
                                         : "its connection closed");
}

/* ---- connections from our children -------------------------------------------------------------- */

static void greeting_free(struct greeting *g, int close_conn)
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

static void keepalive(int fd)
{
    int on = 1, idle = 10, intvl = 5, cnt = 3;

    /* a host that vanishes without closing its connections is noticed within half a minute */
    setsockopt(fd, SOL_SOCKET, SO_KEEPALIVE, &on, sizeof(on));
    setsockopt(fd, IPPROTO_TCP, TCP_KEEPIDLE, &idle, sizeof(idle));
    setsockopt(fd, IPPROTO_TCP, TCP_KEEPINTVL, &intvl, sizeof(intvl));
    setsockopt(fd, IPPROTO_TCP, TCP_KEEPCNT, &cnt, sizeof(cnt));
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &on, sizeof(on));
}

static void on_greeting_read(struct bufferevent *bev, void *arg)
{
    struct greeting *g = arg;
    struct mpirun_tree *t = g->tree;
    struct evbuffer *in = bufferevent_get_input(bev);
    size_t have = evbuffer_get_length(in);
    uint32_t len, type, dest, vertex;
    struct mpirun_rbuf r;
    struct link *l;
    char *token;

    if (have < MPIRUN_HDR_LEN)
        return;
    mpirun_wire_header((const char *)evbuffer_pullup(in, MPIRUN_HDR_LEN), &len, &type, &dest);
    if (type != MPIRUN_MSG_HELLO || len > 1024) {
        greeting_free(g, 1);   /* not one of ours */
        return;
    }
    if (have < MPIRUN_HDR_LEN + (size_t)len)
        return;
    r = (struct mpirun_rbuf){ .p = (const char *)evbuffer_pullup(in, MPIRUN_HDR_LEN + len) +
                                   MPIRUN_HDR_LEN, .len = len };
    vertex = mpirun_rbuf_u32(&r);
    token = mpirun_rbuf_str(&r);
    l = !r.bad && vertex > 0 && vertex < (uint32_t)t->nverts ? child_toward(t, (int)vertex) : NULL;
    if (token == NULL || strcmp(token, t->token) != 0 || l == NULL || l->vertex != (int)vertex ||
        l->state != LINK_STARTING) {
        free(token);
        greeting_free(g, 1);
        return;
    }
    free(token);
    evbuffer_drain(in, MPIRUN_HDR_LEN + (size_t)len);

    /* It is our child: LAUNCH first, then what waited for it. */
    l->bev = bev;
    g->bev = NULL;
    greeting_free(g, 0);
    l->state = LINK_UP;
    event_del(l->timer);
    keepalive(bufferevent_getfd(bev));
    bufferevent_setcb(bev, on_child_read, NULL, on_child_event, l);
    bufferevent_write(bev, t->launch.p, t->launch.len);
    bufferevent_write_buffer(bev, l->queue);
    if (t->congested)
        bufferevent_disable(bev, EV_READ);
    if (evbuffer_get_length(in) > 0)
        on_child_read(bev, l);
}

static void on_greeting_event(struct bufferevent *bev, short what, void *arg)
{
    if (what & (BEV_EVENT_EOF | BEV_EVENT_ERROR))
        greeting_free(arg, 1);
}

static void on_greeting_timeout(evutil_socket_t fd, short what, void *arg)
{
    greeting_free(arg, 1);
}

static void on_accept(struct evconnlistener *lis, evutil_socket_t fd, struct sockaddr *sa,
                      int salen, void *arg)
{
    struct mpirun_tree *t = arg;
    struct greeting *g = calloc(1, sizeof(*g));
    struct timeval tv = { .tv_sec = HELLO_TIMEOUT_S };

    if (g == NULL) {
        close(fd);
        return;
    }
    g->tree = t;
    g->bev = bufferevent_socket_new(t->job->base, fd, BEV_OPT_CLOSE_ON_FREE);
    g->timer = evtimer_new(t->job->base, on_greeting_timeout, g);
    g->next = t->greetings;
    if (t->greetings != NULL)
        t->greetings->prev = g;
    t->greetings = g;
    if (g->bev == NULL || g->timer == NULL) {
        if (g->bev == NULL)
            close(fd);
        greeting_free(g, 1);
        return;
    }
    bufferevent_setcb(g->bev, on_greeting_read, NULL, on_greeting_event, g);
    bufferevent_enable(g->bev, EV_READ);
    evtimer_add(g->timer, &tv);
}

/* ---- starting our children ---------------------------------------------------------------------- */

/* Whether an address is one a daemon on another host may reach us by: not link-local IPv6
 * (meaningless without the interface, whose name is ours), not an IPv4-mapped one. */
static int reachable6(const struct in6_addr *a)
{
    return !IN6_IS_ADDR_LINKLOCAL(a) && !IN6_IS_ADDR_V4MAPPED(a) && !IN6_IS_ADDR_UNSPECIFIED(a);
}

/*
 * "a,b,c:port": our addresses, IPv4 first (the usual network), then IPv6, loopback ones last;
 * or UMPI_LAUNCH_ADDRESS (an address of either family, or a name the daemons resolve). The port
 * is after the last ':', so IPv6 addresses go as they are: no brackets, which a remote shell
 * would take for a glob pattern.
 */
static int make_uri(struct mpirun_tree *t, int port, const char *fixed)
{
    struct ifaddrs *ifs = NULL;
    size_t off = 0;
    int n = 0;

    if (fixed != NULL && fixed[0] != '\0') {
        snprintf(t->uri, sizeof(t->uri), "%s:%d", fixed, port);
        return 0;
    }
    if (getifaddrs(&ifs) < 0) {
        mpirun_error("getifaddrs: %s", strerror(errno));
        return -1;
    }
    /* passes: IPv4, IPv6, loopback IPv4, loopback IPv6 */
    for (int pass = 0; pass < 4; pass++) {
        int family = pass % 2 ? AF_INET6 : AF_INET, loop = pass >= 2;

        for (struct ifaddrs *i = ifs; i != NULL; i = i->ifa_next) {
            char addr[INET6_ADDRSTRLEN];
            const void *raw;

            if (i->ifa_addr == NULL || i->ifa_addr->sa_family != family ||
                !(i->ifa_flags & IFF_UP) || !!(i->ifa_flags & IFF_LOOPBACK) != loop)
                continue;
            if (family == AF_INET) {
                raw = &((struct sockaddr_in *)i->ifa_addr)->sin_addr;
            } else {
                raw = &((struct sockaddr_in6 *)i->ifa_addr)->sin6_addr;
                if (!t->dual_stack || !reachable6(raw))
                    continue;
            }
            inet_ntop(family, raw, addr, sizeof(addr));
            if (off + strlen(addr) + 16 >= sizeof(t->uri))
                break;
            off += (size_t)snprintf(t->uri + off, sizeof(t->uri) - off, "%s%s", n++ ? "," : "",
                                    addr);
        }
    }
    freeifaddrs(ifs);
    if (n == 0)
        off += (size_t)snprintf(t->uri + off, sizeof(t->uri) - off, "127.0.0.1");
    snprintf(t->uri + off, sizeof(t->uri) - off, ":%d", port);
    return 0;
}

/* A listening socket on every address of both families (an IPv6 socket that also takes IPv4,
 * as mapped addresses), or IPv4 only where IPv6 is absent; *dual says which. The fd, or -1. */
static int listen_any(int *dual)
{
    struct sockaddr_in6 sin6 = { .sin6_family = AF_INET6, .sin6_addr = IN6ADDR_ANY_INIT };
    struct sockaddr_in sin = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_ANY) };
    int off = 0, on = 1, fd;

    fd = socket(AF_INET6, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    if (fd >= 0 && setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &off, sizeof(off)) == 0 &&
        bind(fd, (struct sockaddr *)&sin6, sizeof(sin6)) == 0 && listen(fd, 128) == 0) {
        *dual = 1;
        return fd;
    }
    if (fd >= 0)
        close(fd);
    *dual = 0;
    fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    if (fd < 0)
        return -1;
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &on, sizeof(on));
    if (bind(fd, (struct sockaddr *)&sin, sizeof(sin)) < 0 || listen(fd, 128) < 0) {
        int err = errno;

        close(fd);
        errno = err;
        return -1;
    }
    return fd;
}

static void on_connect_timeout(evutil_socket_t fd, short what, void *arg)
{
    struct link *l = arg;
    char why[128];

    snprintf(why, sizeof(why), "it did not connect back within %d s (UMPI_LAUNCH_TIMEOUT)",
             l->tree->timeout_s);
    child_lost(l, why);
}

/* Forks the agent that starts the daemon of vertex v. */
static pid_t spawn_agent(struct mpirun_tree *t, int v)
{
    int nagent = 0;
    char vbuf[16];
    char **argv;
    pid_t pid;

    while (t->agent[nagent] != NULL)
        nagent++;
    argv = calloc((size_t)nagent + 7, sizeof(char *));
    if (argv == NULL)
        return -1;
    memcpy(argv, t->agent, (size_t)nagent * sizeof(char *));
    snprintf(vbuf, sizeof(vbuf), "%d", v);
    argv[nagent] = (char *)vertex_host(t, v);
    argv[nagent + 1] = t->daemon_path;
    argv[nagent + 2] = "--umpi-daemon";
    argv[nagent + 3] = t->uri;
    argv[nagent + 4] = vbuf;
    argv[nagent + 5] = t->token;

    pid = fork();
    if (pid == 0) {
        /* Its own process group: a Ctrl-C at the terminal is the head's to handle, and reaches
         * the remote ranks through it. It dies with us (no agent or daemon outlives the head). */
        static const char msg[] = ": cannot run the launch agent\n";
        sigset_t none;
        int devnull = open("/dev/null", O_RDONLY);

        setpgid(0, 0);
        prctl(PR_SET_PDEATHSIG, SIGTERM);
        for (int sig = 1; sig < NSIG; sig++)
            signal(sig, SIG_DFL);
        sigemptyset(&none);
        sigprocmask(SIG_SETMASK, &none, NULL);
        /* stdin: not ours to give (ssh would read it); stdout: the agent's chatter is a message */
        if (devnull < 0 || dup2(devnull, 0) < 0 || dup2(2, 1) < 0)
            _exit(127);
        close_range(3, ~0u, 0);
        execvp(argv[0], argv);
        write(2, argv[0], strlen(argv[0]));
        write(2, msg, sizeof(msg) - 1);
        _exit(127);
    }
    free(argv);
    return pid;
}

/* Listens and starts every child of this vertex (none: nothing to do). */
static int start_children(struct mpirun_tree *t, const char *fixed_addr)
{
    struct mpirun_job *job = t->job;
    struct sockaddr_storage ss;
    socklen_t slen = sizeof(ss);
    int fd, port;
    struct timeval tv = { .tv_sec = t->timeout_s };

    t->first_child = t->fanout * job->vertex + 1;
    t->nchild = t->first_child < t->nverts ? t->nverts - t->first_child : 0;
    if (t->nchild > t->fanout)
        t->nchild = t->fanout;
    if (t->nchild == 0)
        return 0;
    t->child = calloc((size_t)t->nchild, sizeof(struct link));
    if (t->child == NULL)
        return -1;

    fd = listen_any(&t->dual_stack);
    t->listener = NULL;
    if (fd >= 0)
        t->listener = evconnlistener_new(job->base, on_accept, t,
                                         LEV_OPT_CLOSE_ON_FREE | LEV_OPT_CLOSE_ON_EXEC, -1, fd);
    if (t->listener == NULL) {
        mpirun_error("cannot listen for the umpi daemons: %s", strerror(errno));
        if (fd >= 0)
            close(fd);
        return -1;
    }
    getsockname(fd, (struct sockaddr *)&ss, &slen);
    port = ntohs(ss.ss_family == AF_INET6 ? ((struct sockaddr_in6 *)&ss)->sin6_port
                                          : ((struct sockaddr_in *)&ss)->sin_port);
    if (make_uri(t, port, fixed_addr) < 0)
        return -1;

    for (int i = 0; i < t->nchild; i++) {
        struct link *l = &t->child[i];

        l->tree = t;
        l->vertex = t->first_child + i;
        l->state = LINK_STARTING;
        l->queue = evbuffer_new();
        l->timer = evtimer_new(job->base, on_connect_timeout, l);
        if (l->queue == NULL || l->timer == NULL)
            return -1;
        evtimer_add(l->timer, &tv);
    }
    /* Agents last: every link is ready for whichever connects first. */
    for (int i = 0; i < t->nchild; i++) {
        struct link *l = &t->child[i];

        l->agent = spawn_agent(t, l->vertex);
        if (l->agent < 0) {
            l->agent = 0;
            child_lost(l, "cannot fork its launch agent");
        }
    }
    return 0;
}

int mpirun_tree_child_exited(struct mpirun_job *job, pid_t pid, int status)
{
    struct mpirun_tree *t = job->tree;
    char why[1024];
    size_t off;

    for (int i = 0; t != NULL && i < t->nchild; i++) {
        struct link *l = &t->child[i];

        if (l->agent != pid)
            continue;
        l->agent = 0;
        /* An agent that ends well before its daemon connected may have left it running (as a
         * remote shell with a background command would): the connect deadline still applies. */
        if (l->state != LINK_STARTING || (WIFEXITED(status) && WEXITSTATUS(status) == 0))
            return 1;
        off = (size_t)snprintf(why, sizeof(why), "its launch agent `");
        for (int a = 0; t->agent[a] != NULL && off < sizeof(why); a++)
            off += (size_t)snprintf(why + off, sizeof(why) - off, "%s ", t->agent[a]);
        if (off < sizeof(why))
            off += (size_t)snprintf(why + off, sizeof(why) - off, "%s ...` ",
                                    vertex_host(t, l->vertex));
        if (off < sizeof(why)) {
            if (WIFSIGNALED(status))
                snprintf(why + off, sizeof(why) - off, "was killed by signal %d",
                         WTERMSIG(status));
            else
                snprintf(why + off, sizeof(why) - off, "exited with status %d before the "
                         "daemon connected", WEXITSTATUS(status));
        }
        child_lost(l, why);
        return 1;
    }
    return 0;
}

/* ---- common set-up ------------------------------------------------------------------------------ */

static struct mpirun_tree *tree_new(struct mpirun_job *job, int head_node, int fanout,
                                    int timeout_s)
{
    struct mpirun_tree *t = calloc(1, sizeof(*t));
    int v = 1;

    if (t == NULL)
        return NULL;
    t->job = job;
    t->fanout = fanout;
    t->timeout_s = timeout_s;
    t->nverts = 1 + job->map.nnodes - (head_node >= 0);
    t->vertex_node = malloc((size_t)t->nverts * sizeof(int));
    t->node_vertex = malloc((size_t)job->map.nnodes * sizeof(int));
    t->fence_data = evbuffer_new();
    if (t->vertex_node == NULL || t->node_vertex == NULL || t->fence_data == NULL)
        return NULL;   /* exiting anyway */
    t->vertex_node[0] = head_node;
    for (int n = 0; n < job->map.nnodes; n++) {
        if (n == head_node) {
            t->node_vertex[n] = 0;
        } else {
            t->vertex_node[v] = n;
            t->node_vertex[n] = v++;
        }
    }
    job->tree = t;
    return t;
}

/* ---- the head ----------------------------------------------------------------------------------- */

static void random_token(char out[33])
{
    unsigned char raw[16];

    if (getrandom(raw, sizeof(raw), 0) != (ssize_t)sizeof(raw)) {
        /* no entropy source: the token only guards against stray connections */
        struct timespec ts;

        clock_gettime(CLOCK_REALTIME, &ts);
        for (size_t i = 0; i < sizeof(raw); i++)
            raw[i] = (unsigned char)((ts.tv_nsec >> (i % 4 * 8)) ^ (getpid() >> (i % 2 * 8)) ^ i);
    }
    for (size_t i = 0; i < sizeof(raw); i++)
        snprintf(out + 2 * i, 3, "%02x", raw[i]);
}

int mpirun_tree_head_start(struct mpirun_job *job, const struct mpirun_tree_opts *opts,
                           const struct mpirun_hostlist *hl, const struct mpirun_mapping *m)
{
    struct mpirun_tree *t = tree_new(job, job->my_node, opts->fanout, opts->timeout_s);
    struct mpirun_launch_desc d = { 0 };
    char self[4096], cwd[4096];
    ssize_t n;

    if (t == NULL) {
        mpirun_error("out of memory");
        return -1;
    }
    t->agent = opts->agent;
    random_token(t->token);
    n = readlink("/proc/self/exe", self, sizeof(self) - 1);
    if (n <= 0 || getcwd(cwd, sizeof(cwd)) == NULL) {
        mpirun_error("cannot find the mpirun program or the current directory: %s",
                     strerror(errno));
        return -1;
    }
    self[n] = '\0';
    /* A remote shell (ssh) joins the command's words and splits them again: they must survive. */
    if (self[strspn(self, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789/._+-")]) {
        mpirun_error("mpirun's own path '%s' holds characters that a remote shell would take "
                     "apart; to run on other hosts, install umpi under a path of letters, digits "
                     "and / . _ + -", self);
        return -1;
    }
    t->daemon_path = strdup(self);

    /* the ranks of the other nodes run until their daemons report otherwise */
    for (int r = 0; r < job->np; r++)
        job->nrunning += job->map.node_of[r] != job->my_node;

    d.nspace = job->nspace;
    d.np = job->np;
    d.mapping = *m;
    d.hosts = *hl;
    d.head_node = job->my_node;
    d.fanout = t->fanout;
    d.timeout_s = t->timeout_s;
    d.agent = t->agent;
    d.daemon_path = t->daemon_path;
    d.token = t->token;
    d.cwd = cwd;
    d.path = job->path;
    d.argv = job->argv;
    d.env = job->env;
    d.bind_args = job->bind_args;
    if (t->daemon_path == NULL || mpirun_wire_launch_encode(&t->launch, &d) < 0) {
        mpirun_error("out of memory (the job description)");
        return -1;
    }
    return start_children(t, opts->address);
}

/* The job is ending, yet some daemons did not report all their ranks by now: stop waiting. */
static void on_giveup(evutil_socket_t fd, short what, void *arg)
{
    struct mpirun_tree *t = arg;

    for (int i = 0; i < t->nchild; i++) {
        struct link *l = &t->child[i];

        if (l->state == LINK_DOWN)
            continue;
        fprintf(stderr, "%s: no word from the umpi daemon on %s after ending the job; giving up "
                "on it\n", mpirun_name, vertex_host(t, l->vertex));
        link_close(l);
        if (l->agent > 0)
            kill(l->agent, SIGKILL);
        head_lost(t, 1, l->vertex, "");
    }
    mpirun_maybe_done(t->job);
}

void mpirun_tree_end(struct mpirun_job *job, int signo, double grace_s)
{
    struct mpirun_tree *t = job->tree;
    struct timeval tv = { .tv_sec = (long)grace_s + GIVEUP_AFTER_S };

    if (t == NULL || job->vertex != 0)
        return;
    send_simple(t, MPIRUN_MSG_END, MPIRUN_TO_ALL, 2, (uint32_t)signo,
                (uint32_t)(grace_s * 1000));
    if (t->giveup == NULL)
        t->giveup = evtimer_new(job->base, on_giveup, t);
    if (t->giveup != NULL && !evtimer_pending(t->giveup, NULL))
        evtimer_add(t->giveup, &tv);
}

void mpirun_tree_signal(struct mpirun_job *job, int signo)
{
    if (job->tree != NULL && job->vertex == 0)
        send_simple(job->tree, MPIRUN_MSG_SIGNAL, MPIRUN_TO_ALL, 1, (uint32_t)signo, 0);
}

void mpirun_tree_stdin(struct mpirun_job *job, const char *p, size_t len)
{
    struct mpirun_tree *t = job->tree;
    struct mpirun_wbuf w;

    mpirun_wbuf_start(&w, MPIRUN_MSG_STDIN, (uint32_t)t->node_vertex[job->map.node_of[0]]);
    mpirun_wbuf_bytes(&w, p, len);
    if (mpirun_wbuf_finish(&w) < 0)
        return;
    send_down(t, w.p, w.len, (uint32_t)t->node_vertex[job->map.node_of[0]]);
    mpirun_wbuf_free(&w);
}

static int all_down(const struct mpirun_tree *t)
{
    for (int i = 0; i < t->nchild; i++) {
        if (t->child[i].state != LINK_DOWN)
            return 0;
    }
    return 1;
}

static void all_down_check(struct mpirun_tree *t)
{
    if (!all_down(t))
        return;
    if (t->job->vertex == 0) {
        if (t->shutdown)
            event_base_loopbreak(t->job->base);
    } else {
        mpirun_tree_check_done(t->job);
    }
}

static double now_s(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* Reaps the agents: they end once their daemons did (which have closed their connections by now
 * and are stopping their PMIx servers); the ones that do not are made to, after 1 s and 2 s. */
static void reap_agents(struct mpirun_tree *t)
{
    double start = now_s();
    int sent = 0;

    for (;;) {
        double waited = now_s() - start;
        int left = 0;

        for (int i = 0; i < t->nchild; i++) {
            struct link *l = &t->child[i];

            if (l->agent > 0 && waitpid(l->agent, NULL, WNOHANG) == l->agent)
                l->agent = 0;
            if (l->agent > 0) {
                left++;
                if (sent == 0 && waited > 1.0)
                    kill(l->agent, SIGTERM);
                else if (sent == 1 && waited > 2.0)
                    kill(l->agent, SIGKILL);
            }
        }
        if (left == 0 || waited > 3.0)
            return;
        sent += (sent == 0 && waited > 1.0) || (sent == 1 && waited > 2.0);
        usleep(1000);
    }
}

static void on_shutdown_timeout(evutil_socket_t fd, short what, void *arg)
{
    struct mpirun_tree *t = arg;

    for (int i = 0; i < t->nchild; i++) {
        if (t->child[i].state != LINK_DOWN) {
            fprintf(stderr, "%s: the umpi daemon on %s did not finish; leaving it\n",
                    mpirun_name, vertex_host(t, t->child[i].vertex));
            link_close(&t->child[i]);
        }
    }
    t->shutdown_over = 1;
    event_base_loopbreak(t->job->base);
}

/* ---- a daemon ----------------------------------------------------------------------------------- */

static void decongest(struct mpirun_tree *t, int resume)
{
    t->congested = !resume;
    mpirun_iof_pause(t->job, resume);
    for (int i = 0; i < t->nchild; i++) {
        if (t->child[i].bev == NULL)
            continue;
        if (resume)
            bufferevent_enable(t->child[i].bev, EV_READ);
        else
            bufferevent_disable(t->child[i].bev, EV_READ);
    }
}

static void on_parent_drained(struct bufferevent *bev, void *arg)
{
    struct mpirun_tree *t = arg;

    if (t->congested)
        decongest(t, 1);
}

static void parent_gone(struct mpirun_tree *t)
{
    /* Nobody left to report to or to take orders from: end everything here, at once. */
    t->parent_lost = 1;
    mpirun_end_local(t->job, SIGKILL, 0);
    event_base_loopbreak(t->job->base);
}

/* One whole frame from the parent. */
static int from_parent(struct mpirun_tree *t, const char *frame, uint32_t len, uint32_t type,
                       uint32_t dest)
{
    struct mpirun_job *job = t->job;
    struct mpirun_rbuf r = { .p = frame + MPIRUN_HDR_LEN, .len = len };

    if (dest != MPIRUN_TO_ALL && dest != (uint32_t)job->vertex) {
        send_down(t, frame, MPIRUN_HDR_LEN + len, dest);
        return 0;
    }
    if (dest == MPIRUN_TO_ALL && type != MPIRUN_MSG_LAUNCH)
        send_down(t, frame, MPIRUN_HDR_LEN + len, dest);

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

        mpirun_iof_stdin_data(job, data, dlen);
        return 0;
    }
    case MPIRUN_MSG_END: {
        uint32_t signo = mpirun_rbuf_u32(&r), grace_ms = mpirun_rbuf_u32(&r);

        if (r.bad || signo >= NSIG)
            return -1;
        mpirun_end_local(job, (int)signo, grace_ms / 1000.0);
        return 0;
    }
    case MPIRUN_MSG_SIGNAL: {
        uint32_t signo = mpirun_rbuf_u32(&r);

        if (r.bad || signo >= NSIG)
            return -1;
        mpirun_signal_local(job, (int)signo);
        return 0;
    }
    case MPIRUN_MSG_SHUTDOWN:
        t->shutdown = 1;
        for (int i = 0; i < t->nchild; i++) {
            /* never connected: nothing to shut down but its agent */
            if (t->child[i].state == LINK_STARTING) {
                if (t->child[i].agent > 0)
                    kill(t->child[i].agent, SIGTERM);
                link_close(&t->child[i]);
            }
        }
        mpirun_tree_check_done(job);
        return 0;
    default:
        return -1;
    }
}

static void on_parent_read(struct bufferevent *bev, void *arg)
{
    struct mpirun_tree *t = arg;
    struct evbuffer *in = bufferevent_get_input(bev);

    while (!t->parent_lost) {
        size_t have = evbuffer_get_length(in);
        uint32_t len, type, dest;
        const char *frame;

        if (have < MPIRUN_HDR_LEN)
            return;
        mpirun_wire_header((const char *)evbuffer_pullup(in, MPIRUN_HDR_LEN), &len, &type, &dest);
        if (len > MPIRUN_MAX_MSG) {
            mpirun_error("malformed message from the parent umpi process; exiting");
            parent_gone(t);
            return;
        }
        if (have < MPIRUN_HDR_LEN + (size_t)len)
            return;
        frame = (const char *)evbuffer_pullup(in, MPIRUN_HDR_LEN + (ssize_t)len);
        if (from_parent(t, frame, len, type, dest) < 0) {
            mpirun_error("malformed message from the parent umpi process; exiting");
            parent_gone(t);
            return;
        }
        evbuffer_drain(in, MPIRUN_HDR_LEN + (size_t)len);
    }
}

static void on_parent_event(struct bufferevent *bev, short what, void *arg)
{
    if (what & (BEV_EVENT_EOF | BEV_EVENT_ERROR))
        parent_gone(arg);
}

int mpirun_tree_done(struct mpirun_job *job)
{
    return job->tree->finished || job->tree->parent_lost;
}

void mpirun_tree_check_done(struct mpirun_job *job)
{
    struct mpirun_tree *t = job->tree;

    if (t == NULL || !t->shutdown || t->finished || job->nrunning > 0 || job->npending > 0)
        return;
    for (int i = 0; i < t->nchild; i++) {
        if (t->child[i].state != LINK_DOWN)
            return;
    }
    t->finished = 1;
    event_base_loopbreak(job->base);
}

int mpirun_tree_daemon_start(struct mpirun_job *job, int fd, struct mpirun_launch_desc *d,
                             const char *launch_frame, size_t launch_len)
{
    struct mpirun_tree *t = tree_new(job, d->head_node, d->fanout, d->timeout_s);

    if (t == NULL)
        return -1;
    t->agent = d->agent;
    t->daemon_path = d->daemon_path;
    snprintf(t->token, sizeof(t->token), "%s", d->token);
    /* our children get the very description we got */
    mpirun_wbuf_bytes(&t->launch, launch_frame, launch_len);
    if (t->launch.oom)
        return -1;

    evutil_make_socket_nonblocking(fd);
    keepalive(fd);
    t->parent = bufferevent_socket_new(job->base, fd, BEV_OPT_CLOSE_ON_FREE);
    if (t->parent == NULL)
        return -1;
    bufferevent_setcb(t->parent, on_parent_read, on_parent_drained, on_parent_event, t);
    bufferevent_setwatermark(t->parent, EV_WRITE, DECONGESTED, 0);
    bufferevent_enable(t->parent, EV_READ | EV_WRITE);
    return start_children(t, NULL);
}

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
    send_up(job->tree, w.p, w.len);
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
    send_up(job->tree, w.p, w.len);
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
    send_up(job->tree, w.p, w.len);
    mpirun_wbuf_free(&w);
}

void mpirun_tree_stdin_ack(struct mpirun_job *job, int more)
{
    send_simple(job->tree, MPIRUN_MSG_STDIN_ACK, 0, 1, (uint32_t)more, 0);
}

/* ---- the end ------------------------------------------------------------------------------------ */

static void on_parent_flushed(struct bufferevent *bev, void *arg)
{
    struct mpirun_tree *t = arg;

    event_base_loopbreak(t->job->base);
}

static void on_flush_timeout(evutil_socket_t fd, short what, void *arg)
{
    struct mpirun_tree *t = arg;

    t->flush_over = 1;
}

/* Writes what is queued to the parent (the bufferevent owns its buffer: the loop must run),
 * waiting at most a few seconds for a slow link. */
static void flush_parent(struct mpirun_tree *t)
{
    struct timeval tv = { .tv_sec = 5 };
    struct event *timer;

    if (evbuffer_get_length(bufferevent_get_output(t->parent)) == 0)
        return;
    timer = evtimer_new(t->job->base, on_flush_timeout, t);
    bufferevent_setwatermark(t->parent, EV_WRITE, 0, 0);
    bufferevent_setcb(t->parent, NULL, on_parent_flushed, on_parent_event, t);
    if (timer != NULL)
        evtimer_add(timer, &tv);
    t->flush_over = 0;
    while (!t->flush_over && !t->parent_lost &&
           evbuffer_get_length(bufferevent_get_output(t->parent)) > 0)
        event_base_loop(t->job->base, EVLOOP_ONCE);
    if (timer != NULL)
        event_free(timer);
}

void mpirun_tree_finish(struct mpirun_job *job)
{
    struct mpirun_tree *t = job->tree;

    if (job->vertex == 0) {
        struct timeval tv = { .tv_sec = SHUTDOWN_WAIT_S };
        struct event *timer = evtimer_new(job->base, on_shutdown_timeout, t);

        t->shutdown = 1;
        if (t->giveup != NULL)
            event_free(t->giveup);
        t->giveup = NULL;
        send_simple(t, MPIRUN_MSG_SHUTDOWN, MPIRUN_TO_ALL, 0, 0, 0);
        for (int i = 0; i < t->nchild; i++) {
            if (t->child[i].state == LINK_STARTING) {
                if (t->child[i].agent > 0)
                    kill(t->child[i].agent, SIGTERM);
                link_close(&t->child[i]);
            }
        }
        if (timer != NULL)
            evtimer_add(timer, &tv);
        /* Other callbacks (a reaped agent) break loops too: wait on the links themselves. */
        while (!t->shutdown_over && !all_down(t))
            event_base_loop(job->base, EVLOOP_ONCE);
        if (timer != NULL)
            event_free(timer);
    } else if (!t->parent_lost) {
        send_simple(t, MPIRUN_MSG_BYE, 0, 0, 0, 0);
        flush_parent(t);
    }
    for (int i = 0; i < t->nchild; i++)
        link_close(&t->child[i]);
    if (t->listener != NULL)
        evconnlistener_free(t->listener);
    t->listener = NULL;
    while (t->greetings != NULL)
        greeting_free(t->greetings, 1);
    if (t->parent != NULL)
        bufferevent_free(t->parent);
    t->parent = NULL;
    reap_agents(t);
}
