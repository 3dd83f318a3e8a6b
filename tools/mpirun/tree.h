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
 *
 * The files, each calling only those below it (wire.h has the messages' layout):
 *   tree_spawn.c  starting: the tree's numbering, listening, the launch agents, a child's HELLO
 *                 answered with LAUNCH; the head's and a daemon's way into the tree
 *   tree_route.c  messages: what each frame from a child or from the parent means (relayed, or
 *                 handed up, or to server.c), the fences, the messages the job sends
 *   tree_end.c    failures and the end: a lost subtree or parent, END, SHUTDOWN and BYE, the
 *                 agents reaped
 *   tree_conn.c   the sockets: frames written up or down toward a vertex, flow control, frames
 *                 cut from what arrives, connections closed
 * The tree is below the job: launch.c and iof.c tell it what happened here by calling it
 * (mpirun.h lists those calls); what happened elsewhere the tree hands up only through the table
 * it was given at its start (t->up, struct mpirun_tree_upcalls in mpirun.h), so that no file of
 * the tree names a function of launch.c or iof.c.
 *
 * Everything here runs on the main thread.
 */
#ifndef MPIRUN_TREE_H
#define MPIRUN_TREE_H

#include "mpirun.h"
#include "wire.h"

#include <stdint.h>
#include <sys/types.h>

#include <event2/util.h>

struct bufferevent;
struct evbuffer;
struct evconnlistener;

#define CONGESTED  (16u << 20)   /* bytes queued to the parent at which a daemon stops reading */
#define DECONGESTED (1u << 20)   /* ... and at which it reads again */

/* A child's link: STARTING (agent started; messages for it wait in queue) -> UP (said HELLO) ->
 * BYE (said it is done) -> DOWN (closed, lost, or never connected). */
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

/* One per process of the tree (job->tree). Who writes what; every file reads what it needs. */
struct mpirun_tree {
    /* set once when the tree is made (tree_spawn.c) */
    struct mpirun_job *job;
    const struct mpirun_tree_upcalls *up;   /* the one way up, to launch.c and iof.c (mpirun.h) */
    int nverts, fanout, timeout_s;
    int *vertex_node;             /* [nverts]: node whose ranks each vertex forks (-1: none) */
    int *node_vertex;             /* [nnodes] */
    char **agent;
    char *daemon_path;
    char token[33];
    char uri[1024];               /* "addr,addr,...:port" for our children */
    int dual_stack;               /* we listen on IPv6 too (the uri may name IPv6 addresses) */
    struct mpirun_wbuf launch;    /* the LAUNCH frame every child receives first */

    /* the sockets: opened by tree_spawn.c, written and closed by tree_conn.c; a link's state
     * moves as the child says HELLO (tree_spawn.c), BYE (tree_route.c), or is lost (tree_end.c) */
    struct evconnlistener *listener;
    struct link *child;
    int nchild, first_child;
    struct greeting *greetings;
    struct bufferevent *parent;   /* daemons */
    int congested;                /* tree_conn.c: the parent link is full, reading stopped */

    /* the fence under way (tree_route.c) */
    uint32_t fence_seq;
    int fence_children;           /* children whose part arrived */
    int fence_sent;               /* our part went up; waiting for the result */
    struct mpirun_note *fence_local;
    struct evbuffer *fence_data;

    /* the end (tree_end.c) */
    int shutdown;                 /* SHUTDOWN sent (head) or received (daemon) */
    int shutdown_over;            /* head: the wait for the daemons' BYE timed out */
    int flush_over;               /* daemon: the wait for its last messages to leave timed out */
    int parent_lost;
    int finished;
    struct event *giveup;
};

static inline int mpirun_tree_parent_of(const struct mpirun_tree *t, int v)
{
    return (v - 1) / t->fanout;
}

/* The host of vertex v, for messages and the launch agent. */
static inline const char *mpirun_tree_vertex_host(const struct mpirun_tree *t, int v)
{
    int node = t->vertex_node[v];

    return node >= 0 ? t->job->map.node_name[node] : t->job->hostname;
}

/* ---- tree_route.c: the readers of established links ------------------------------------------ */

void mpirun_tree_on_child_read(struct bufferevent *bev, void *arg);    /* arg: the link */
void mpirun_tree_on_parent_read(struct bufferevent *bev, void *arg);   /* arg: the tree */

/* ---- tree_end.c ------------------------------------------------------------------------------ */

/* A failure of this vertex or of a subtree below it (lost_vertex > 0: that subtree's ranks are
 * gone): the head acts on it (head_lost), a daemon reports it up. */
void mpirun_tree_report(struct mpirun_tree *t, int code, int lost_vertex, const char *msg);
/* Head: prints msg (unless empty or the job is already ending), counts the ranks below
 * lost_vertex as gone, and ends the job with code. */
void mpirun_tree_head_lost(struct mpirun_tree *t, int code, int lost_vertex, const char *msg);
/* The child of l is gone (why: for the message), with its subtree unless the job is over. */
void mpirun_tree_child_lost(struct link *l, const char *why);
/* Daemon: the parent is gone: our ranks are killed and the loop stops. */
void mpirun_tree_parent_gone(struct mpirun_tree *t);
/* SHUTDOWN sent or received: a child that never connected is given up (its agent terminated). */
void mpirun_tree_begin_shutdown(struct mpirun_tree *t);
/* The event callbacks of a child's and of the parent's connection (closed, or an error). */
void mpirun_tree_on_child_event(struct bufferevent *bev, short what, void *arg);
void mpirun_tree_on_parent_event(struct bufferevent *bev, short what, void *arg);

/* ---- tree_conn.c ----------------------------------------------------------------------------- */

/* A whole frame to the parent (nothing once it is lost). */
void mpirun_tree_send_up(struct mpirun_tree *t, const void *frame, size_t len);
/* A whole frame down to vertex dest (through the child whose subtree holds it), or to every
 * child for MPIRUN_TO_ALL. */
void mpirun_tree_send_down(struct mpirun_tree *t, const char *frame, size_t len, uint32_t dest);
/* Builds and sends a message of up to two u32 values: down for the types that go down, else up. */
void mpirun_tree_send_simple(struct mpirun_tree *t, uint32_t type, uint32_t dest, int nvals,
                             uint32_t a, uint32_t b);
/* The child of ours whose subtree holds vertex v, or NULL. */
struct link *mpirun_tree_child_toward(struct mpirun_tree *t, int v);
/* The next frame in a connection's input: 1 with *frame pointing at it (header included, still
 * in the buffer: drain MPIRUN_HDR_LEN + *len once it is handled), 0 until it has all arrived,
 * -1 when its length is more than any peer of ours sends. */
int mpirun_tree_next_frame(struct evbuffer *in, const char **frame, uint32_t *len, uint32_t *type,
                           uint32_t *dest);
/* The write callback of the parent's connection: reading resumes once it drained. */
void mpirun_tree_on_parent_drained(struct bufferevent *bev, void *arg);
void mpirun_tree_keepalive(int fd);
void mpirun_tree_link_close(struct link *l);
void mpirun_tree_greeting_free(struct greeting *g, int close_conn);
/* Every socket of this vertex closed: children's links, the listener, greetings, the parent. */
void mpirun_tree_close_all(struct mpirun_tree *t);

#endif
