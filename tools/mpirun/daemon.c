/*
 * A daemon of the launch tree: `mpirun --umpi-daemon ADDRS:PORT VERTEX TOKEN`, as the launch
 * agent of its parent started it on this host (tree.h explains the tree).
 *
 * It reaches its parent (trying each address in turn, IPv4 or IPv6: some may be unreachable
 * from here, or even name an interface of this very host), says HELLO, receives the job
 * description, computes the map as the head did, and then is what mpirun is on one machine for
 * the ranks of its node, with its children daemons started first: PMIx server, fork, output,
 * exits; all reported upward.
 */
#include "mpirun.h"
#include "wire.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <event2/event.h>

#define CONNECT_TIMEOUT_MS 5000
#define LAUNCH_TIMEOUT_MS  10000

extern char **environ;

/* Waits for fd to be ready for events; 0, or -1 on timeout or error. */
static int wait_fd(int fd, short events, int timeout_ms)
{
    struct pollfd pfd = { .fd = fd, .events = events };
    int rc;

    do
        rc = poll(&pfd, 1, timeout_ms);
    while (rc < 0 && errno == EINTR);
    if (rc == 0)
        errno = ETIMEDOUT;
    return rc > 0 ? 0 : -1;
}

static int read_full(int fd, char *p, size_t len)
{
    while (len > 0) {
        ssize_t n;

        if (wait_fd(fd, POLLIN, LAUNCH_TIMEOUT_MS) < 0)
            return -1;
        n = read(fd, p, len);
        if (n < 0 && (errno == EINTR || errno == EAGAIN))
            continue;
        if (n <= 0) {
            if (n == 0)
                errno = ECONNRESET;
            return -1;
        }
        p += n;
        len -= (size_t)n;
    }
    return 0;
}

static int write_full(int fd, const char *p, size_t len)
{
    while (len > 0) {
        ssize_t n;

        if (wait_fd(fd, POLLOUT, LAUNCH_TIMEOUT_MS) < 0)
            return -1;
        n = write(fd, p, len);
        if (n < 0 && (errno == EINTR || errno == EAGAIN))
            continue;
        if (n < 0)
            return -1;
        p += n;
        len -= (size_t)n;
    }
    return 0;
}

/* One attempt at one socket address: connect, HELLO, LAUNCH. The connected fd, or -1 with errno
 * set. */
static int try_sockaddr(const struct sockaddr *sa, socklen_t salen, const struct mpirun_wbuf *hello,
                        char **frame, size_t *frame_len)
{
    char hdr[MPIRUN_HDR_LEN];
    uint32_t len, type, dest;
    int fd, err = 0;
    socklen_t elen = sizeof(err);

    fd = socket(sa->sa_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    if (fd < 0)
        return -1;
    if (connect(fd, sa, salen) < 0 && errno != EINPROGRESS)
        goto fail;
    if (wait_fd(fd, POLLOUT, CONNECT_TIMEOUT_MS) < 0)
        goto fail;
    if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &elen) < 0 || err != 0) {
        errno = err ? err : errno;
        goto fail;
    }
    if (write_full(fd, hello->p, hello->len) < 0 || read_full(fd, hdr, sizeof(hdr)) < 0)
        goto fail;
    mpirun_wire_header(hdr, &len, &type, &dest);
    if (type != MPIRUN_MSG_LAUNCH || len > MPIRUN_MAX_MSG) {
        errno = EPROTO;
        goto fail;
    }
    *frame = malloc(MPIRUN_HDR_LEN + (size_t)len);
    if (*frame == NULL)
        goto fail;
    memcpy(*frame, hdr, MPIRUN_HDR_LEN);
    if (read_full(fd, *frame + MPIRUN_HDR_LEN, len) < 0) {
        free(*frame);
        goto fail;
    }
    *frame_len = MPIRUN_HDR_LEN + (size_t)len;
    return fd;
fail:
    err = errno;
    close(fd);
    errno = err;
    return -1;
}

/* addr (IPv4, IPv6, or a name: UMPI_LAUNCH_ADDRESS may give one) at port, each address it
 * resolves to in turn. The connected fd, or -1 with a reason in why. */
static int try_parent(const char *addr, const char *port, const struct mpirun_wbuf *hello,
                      char **frame, size_t *frame_len, char *why, size_t whylen)
{
    struct addrinfo hints = { .ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM,
                              .ai_flags = AI_NUMERICSERV };
    struct addrinfo *res = NULL;
    int rc, fd = -1;

    rc = getaddrinfo(addr, port, &hints, &res);
    if (rc != 0) {
        snprintf(why, whylen, "%s", rc == EAI_SYSTEM ? strerror(errno) : gai_strerror(rc));
        return -1;
    }
    for (struct addrinfo *ai = res; ai != NULL && fd < 0; ai = ai->ai_next) {
        fd = try_sockaddr(ai->ai_addr, ai->ai_addrlen, hello, frame, frame_len);
        if (fd < 0)
            snprintf(why, whylen, "%s", strerror(errno));
    }
    freeaddrinfo(res);
    return fd;
}

/* The connection to the parent, trying each address of "a,b,c:port". */
static int reach_parent(const char *uri, int vertex, const char *token, char **frame,
                        size_t *frame_len)
{
    const char *colon = strrchr(uri, ':');
    struct mpirun_wbuf hello;
    char addrs[1024], why[2048] = "", pbuf[16], *save = NULL, *addr;
    size_t off = 0;
    int port, fd = -1;

    if (colon == NULL || (port = atoi(colon + 1)) <= 0 || port > 65535 ||
        (size_t)(colon - uri) >= sizeof(addrs)) {
        mpirun_error("bad parent address '%s'", uri);
        return -1;
    }
    memcpy(addrs, uri, (size_t)(colon - uri));
    addrs[colon - uri] = '\0';
    mpirun_wbuf_start(&hello, MPIRUN_MSG_HELLO, 0);
    mpirun_wbuf_u32(&hello, (uint32_t)vertex);
    mpirun_wbuf_str(&hello, token);
    if (mpirun_wbuf_finish(&hello) < 0) {
        mpirun_error("out of memory");
        return -1;
    }
    snprintf(pbuf, sizeof(pbuf), "%d", port);
    for (addr = strtok_r(addrs, ",", &save); addr != NULL && fd < 0;
         addr = strtok_r(NULL, ",", &save)) {
        char one[256] = "";

        fd = try_parent(addr, pbuf, &hello, frame, frame_len, one, sizeof(one));
        if (fd < 0 && off < sizeof(why))
            off += (size_t)snprintf(why + off, sizeof(why) - off, "%s%s: %s", off ? ", " : "",
                                    addr, one);
    }
    if (fd < 0)
        mpirun_error("cannot reach the parent umpi process on port %d (%s)", port, why);
    mpirun_wbuf_free(&hello);
    return fd;
}

/* The head's environment, except what describes this host or this login (its own values stay). */
static int host_specific(const char *e)
{
    return strncmp(e, "HOSTNAME=", 9) == 0 || strncmp(e, "SSH_", 4) == 0;
}

static char **rank_env(char **head_env)
{
    int n = 0, k = 0;
    char **env;

    for (int i = 0; head_env[i] != NULL; i++)
        n++;
    for (int i = 0; environ[i] != NULL; i++)
        n++;
    env = calloc((size_t)n + 1, sizeof(char *));
    if (env == NULL)
        return NULL;
    for (int i = 0; head_env[i] != NULL; i++) {
        if (!host_specific(head_env[i]))
            env[k++] = head_env[i];
    }
    for (int i = 0; environ[i] != NULL; i++) {
        if (host_specific(environ[i]))
            env[k++] = environ[i];
    }
    return env;
}

/* This node's binding plan, from the head's binding options (the same words it parsed). */
static int daemon_bind(struct mpirun_job *job, char **args)
{
    /* The default policy is the head's (UMPI_BIND_TO in its environment), not this host's login's. */
    for (int k = 0; job->env[k] != NULL; k++) {
        if (strncmp(job->env[k], "UMPI_BIND_TO=", 13) == 0)
            setenv("UMPI_BIND_TO", job->env[k] + 13, 1);
    }
    for (int k = 0; args != NULL && args[k] != NULL; k++) {
        if (strcmp(args[k], "--oversubscribe") == 0)
            job->bind.oversubscribe = 1;
        else if (mpirun_bind_option(&job->bind, args, &k) <= 0)
            return -1;
    }
    return mpirun_bind_setup(job, job->nlocal);
}

int mpirun_daemon_main(int argc, char **argv)
{
    static char name[300];
    struct mpirun_job job = { .stdin_fd = -1, .my_node = -1 };
    struct mpirun_launch_desc d;
    char err[1024], *frame = NULL;
    size_t frame_len = 0;
    int fd, vertex, v = 0, rc = 1, chdir_errno = 0, prog_errno = 0;

    if (argc != 3 || (vertex = atoi(argv[1])) < 1) {
        mpirun_error("--umpi-daemon is for mpirun's own use: it takes ADDRS:PORT VERTEX TOKEN");
        return 1;
    }
    if (gethostname(name, sizeof(name) - 1) < 0)
        strcpy(name, "?");
    fd = reach_parent(argv[0], vertex, argv[2], &frame, &frame_len);
    if (fd < 0)
        return 1;
    if (mpirun_wire_launch_decode(frame + MPIRUN_HDR_LEN, frame_len - MPIRUN_HDR_LEN, &d, err,
                                  sizeof(err)) < 0) {
        mpirun_error("%s", err);
        return 1;
    }

    /* The map, as the head computed it, and this vertex's node in it (tree_spawn.c's numbering). */
    if (mpirun_map_compute(&d.hosts, &d.mapping, d.np, &job.map, err, sizeof(err)) < 0) {
        mpirun_error("%s", err);
        return 1;
    }
    for (int n = 0; n < job.map.nnodes; n++) {
        if (n != d.head_node && ++v == vertex) {
            job.my_node = n;
            break;
        }
    }
    if (job.my_node < 0) {
        mpirun_error("vertex %d of the launch tree has no node", vertex);
        return 1;
    }
    snprintf(job.hostname, sizeof(job.hostname), "%s", job.map.node_name[job.my_node]);
    snprintf(name, sizeof(name), "mpirun (daemon on %s)", job.hostname);
    mpirun_name = name;
    snprintf(job.nspace, sizeof(job.nspace), "%s", d.nspace);
    job.np = d.np;
    job.multi = 1;
    job.vertex = vertex;
    job.path = d.path;
    job.argv = d.argv;
    job.env = rank_env(d.env);
    job.nlocal = job.map.node_nranks[job.my_node];
    job.ranks = calloc((size_t)job.np, sizeof(*job.ranks));
    job.base = event_base_new();
    if (job.env == NULL || job.ranks == NULL || job.base == NULL) {
        mpirun_error("out of memory");
        return 1;
    }
    for (int r = 0; r < job.np; r++) {
        job.ranks[r].job = &job;
        job.ranks[r].rank = r;
        job.ranks[r].out.fd = job.ranks[r].err.fd = -1;
    }
    /* The ranks start where the head was started, as they would on its host. */
    if (chdir(d.cwd) < 0)
        chdir_errno = errno;
    else if (access(d.path, X_OK) < 0)
        prog_errno = errno;

    /* Children first: their start is the slow part, and goes on while our ranks start. */
    if (mpirun_tree_daemon_start(&job, fd, &d, frame, frame_len, &mpirun_launch_upcalls) < 0) {
        mpirun_error("cannot join the launch tree");
        return 1;
    }
    free(frame);
    if (chdir_errno != 0) {
        mpirun_tree_error(&job, 1, "on %s: cannot change to the directory %s: %s",
                          job.hostname, d.cwd, strerror(chdir_errno));
        job.ending = 1;
    } else if (prog_errno != 0) {
        mpirun_tree_error(&job, 127, "on %s: %s: %s", job.hostname, d.path,
                          strerror(prog_errno));
        job.ending = 1;
    } else if (daemon_bind(&job, d.bind_args) < 0) {
        mpirun_tree_error(&job, 1, "on %s: cannot bind the ranks as asked (message above)",
                          job.hostname);
        job.ending = 1;
    } else if (mpirun_server_start(&job) < 0) {
        mpirun_tree_error(&job, 1, "on %s: cannot start the PMIx server", job.hostname);
        job.ending = 1;
    }
    if (mpirun_launch(&job) == 0)
        rc = 0;
    mpirun_server_stop(&job);
    event_base_free(job.base);
    return rc;
}
