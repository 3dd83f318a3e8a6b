/*
 * Starting the launch tree (tree.h explains the tree): the vertices numbered, a vertex's children
 * started through the launch agent (listening first, one agent per child, a deadline for each to
 * connect back), a child's HELLO answered with LAUNCH, and an agent that ends before its daemon
 * connected taken as a lost child. The head enters the tree by mpirun_tree_head_start, a daemon by
 * mpirun_tree_daemon_start once it has the job description (daemon.c).
 */
#include "tree.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netinet/in.h>
#include <signal.h>
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

/* ---- the numbering --------------------------------------------------------------------------- */

/* This process's tree, numbered as every process of the job numbers it: vertex 0 (the head) forks
 * the ranks of head_node (none when -1), the other nodes are vertices 1, 2, ... in map order. */
static struct mpirun_tree *tree_new(struct mpirun_job *job, int head_node, int fanout,
                                    int timeout_s, const struct mpirun_tree_upcalls *up)
{
    struct mpirun_tree *t = calloc(1, sizeof(*t));
    int v = 1;

    if (t == NULL)
        return NULL;
    t->job = job;
    t->up = up;
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

/* ---- children connecting back ---------------------------------------------------------------- */

/* An accepted connection becomes a child's link when it says HELLO with the job's token and the
 * vertex of a child of ours that has not connected yet; anything else is closed. */
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
        mpirun_tree_greeting_free(g, 1);   /* not one of ours */
        return;
    }
    if (have < MPIRUN_HDR_LEN + (size_t)len)
        return;
    r = (struct mpirun_rbuf){ .p = (const char *)evbuffer_pullup(in, MPIRUN_HDR_LEN + len) +
                                   MPIRUN_HDR_LEN, .len = len };
    vertex = mpirun_rbuf_u32(&r);
    token = mpirun_rbuf_str(&r);
    l = !r.bad && vertex > 0 && vertex < (uint32_t)t->nverts
            ? mpirun_tree_child_toward(t, (int)vertex) : NULL;
    if (token == NULL || strcmp(token, t->token) != 0 || l == NULL || l->vertex != (int)vertex ||
        l->state != LINK_STARTING) {
        free(token);
        mpirun_tree_greeting_free(g, 1);
        return;
    }
    free(token);
    evbuffer_drain(in, MPIRUN_HDR_LEN + (size_t)len);

    /* It is our child: LAUNCH first, then what waited for it. */
    l->bev = bev;
    g->bev = NULL;
    mpirun_tree_greeting_free(g, 0);
    l->state = LINK_UP;
    event_del(l->timer);
    mpirun_tree_keepalive(bufferevent_getfd(bev));
    bufferevent_setcb(bev, mpirun_tree_on_child_read, NULL, mpirun_tree_on_child_event, l);
    bufferevent_write(bev, t->launch.p, t->launch.len);
    bufferevent_write_buffer(bev, l->queue);
    if (t->congested)
        bufferevent_disable(bev, EV_READ);
    if (evbuffer_get_length(in) > 0)
        mpirun_tree_on_child_read(bev, l);
}

static void on_greeting_event(struct bufferevent *bev, short what, void *arg)
{
    if (what & (BEV_EVENT_EOF | BEV_EVENT_ERROR))
        mpirun_tree_greeting_free(arg, 1);
}

static void on_greeting_timeout(evutil_socket_t fd, short what, void *arg)
{
    mpirun_tree_greeting_free(arg, 1);
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
        mpirun_tree_greeting_free(g, 1);
        return;
    }
    bufferevent_setcb(g->bev, on_greeting_read, NULL, on_greeting_event, g);
    bufferevent_enable(g->bev, EV_READ);
    evtimer_add(g->timer, &tv);
}

/* ---- starting our children ------------------------------------------------------------------- */

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
    mpirun_tree_child_lost(l, why);
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
    argv[nagent] = (char *)mpirun_tree_vertex_host(t, v);
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
            mpirun_tree_child_lost(l, "cannot fork its launch agent");
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
                                    mpirun_tree_vertex_host(t, l->vertex));
        if (off < sizeof(why)) {
            if (WIFSIGNALED(status))
                snprintf(why + off, sizeof(why) - off, "was killed by signal %d",
                         WTERMSIG(status));
            else
                snprintf(why + off, sizeof(why) - off, "exited with status %d before the "
                         "daemon connected", WEXITSTATUS(status));
        }
        mpirun_tree_child_lost(l, why);
        return 1;
    }
    return 0;
}

/* ---- the head and the daemons ---------------------------------------------------------------- */

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
                           const struct mpirun_hostlist *hl, const struct mpirun_mapping *m,
                           const struct mpirun_tree_upcalls *up)
{
    struct mpirun_tree *t = tree_new(job, job->my_node, opts->fanout, opts->timeout_s, up);
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

int mpirun_tree_daemon_start(struct mpirun_job *job, int fd, struct mpirun_launch_desc *d,
                             const char *launch_frame, size_t launch_len,
                             const struct mpirun_tree_upcalls *up)
{
    struct mpirun_tree *t = tree_new(job, d->head_node, d->fanout, d->timeout_s, up);

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
    mpirun_tree_keepalive(fd);
    t->parent = bufferevent_socket_new(job->base, fd, BEV_OPT_CLOSE_ON_FREE);
    if (t->parent == NULL)
        return -1;
    bufferevent_setcb(t->parent, mpirun_tree_on_parent_read, mpirun_tree_on_parent_drained,
                      mpirun_tree_on_parent_event, t);
    bufferevent_setwatermark(t->parent, EV_WRITE, DECONGESTED, 0);
    bufferevent_enable(t->parent, EV_READ | EV_WRITE);
    return start_children(t, NULL);
}
