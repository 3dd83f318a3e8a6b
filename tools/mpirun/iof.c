/*
 * Forwarding of the ranks' stdout/stderr to mpirun's, and of mpirun's stdin to rank 0.
 *
 * Output is passed on in whole lines, so that lines of different ranks never mix; the bytes after
 * the last newline wait for the rest of their line. With --tag-output each line gets "[rank] "
 * ("[rank@host] " across machines). A line longer than MAX_PENDING is passed on in pieces rather
 * than held without bound, and a partial last line is passed on when its pipe closes (or when the
 * job ends). A daemon sends the same pieces to the head (tree_route.c), which writes them as its
 * own.
 */
#include "mpirun.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <event2/event.h>

#define READ_CHUNK  65536
#define MAX_PENDING (1024 * 1024)

/* Writes everything, waiting if our own stdout is a non-blocking pipe; gives up on a dead reader
 * (SIGPIPE is ignored in mpirun), since nobody is left to read the rest. */
static void write_all(int fd, const char *p, size_t len)
{
    while (len > 0) {
        ssize_t n = write(fd, p, len);

        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0 && errno == EAGAIN) {
            struct pollfd pfd = { .fd = fd, .events = POLLOUT };

            poll(&pfd, 1, -1);
            continue;
        }
        if (n <= 0)
            return;
        p += n;
        len -= (size_t)n;
    }
}

void mpirun_iof_write(struct mpirun_job *job, int rank, int dest_fd, const char *p, size_t len,
                      int end_line)
{
    char prefix[300];
    size_t plen;

    if (!job->tag_output) {
        write_all(dest_fd, p, len);   /* a partial last line stays as the rank wrote it */
        return;
    }
    if (job->multi)
        plen = (size_t)snprintf(prefix, sizeof(prefix), "[%d@%s] ", rank,
                                job->map.node_name[job->map.node_of[rank]]);
    else
        plen = (size_t)snprintf(prefix, sizeof(prefix), "[%d] ", rank);
    if (plen >= sizeof(prefix))
        plen = sizeof(prefix) - 1;
    /* One write per line keeps a tagged line whole even next to other writers of our stdout. */
    while (len > 0) {
        const char *nl = memchr(p, '\n', len);
        size_t llen = nl != NULL ? (size_t)(nl - p) + 1 : len;
        char stackbuf[4096], *line = stackbuf;
        size_t total = plen + llen + (nl == NULL && end_line);

        if (total > sizeof(stackbuf) && (line = malloc(total)) == NULL) {
            write_all(dest_fd, prefix, plen);
            write_all(dest_fd, p, llen);
        } else {
            memcpy(line, prefix, plen);
            memcpy(line + plen, p, llen);
            if (nl == NULL && end_line)
                line[total - 1] = '\n';
            write_all(dest_fd, line, total);
            if (line != stackbuf)
                free(line);
        }
        p += llen;
        len -= llen;
    }
}

/* Passes on buf[0..len): whole lines, or one piece that is to be ended as a line. */
static void emit(struct mpirun_stream *s, const char *p, size_t len, int end_line)
{
    if (s->job->vertex > 0)
        mpirun_tree_iof(s->job, s->rank->rank, s->dest_fd, p, len, end_line);
    else
        mpirun_iof_write(s->job, s->rank->rank, s->dest_fd, p, len, end_line);
}

static void stream_close(struct mpirun_stream *s)
{
    if (s->len > 0)
        emit(s, s->buf, s->len, 1);
    s->len = 0;
    if (s->ev != NULL) {
        event_free(s->ev);
        s->ev = NULL;
    }
    if (s->fd >= 0)
        close(s->fd);
    s->fd = -1;
    free(s->buf);
    s->buf = NULL;
    s->cap = 0;
}

/* Reads once; returns 0 if more may come, 1 at end of file or error, -1 on EAGAIN. */
static int stream_read(struct mpirun_stream *s)
{
    ssize_t n;
    char *last_nl;

    if (s->cap - s->len < READ_CHUNK) {
        size_t cap = s->len + READ_CHUNK;
        char *buf = realloc(s->buf, cap);

        if (buf == NULL) {
            /* Pass on what we hold and keep going with the memory we have. */
            emit(s, s->buf, s->len, 1);
            s->len = 0;
            if (s->cap == 0)
                return 1;
        } else {
            s->buf = buf;
            s->cap = cap;
        }
    }
    n = read(s->fd, s->buf + s->len, s->cap - s->len);
    if (n < 0 && (errno == EAGAIN || errno == EINTR))
        return -1;
    if (n <= 0)
        return 1;
    s->len += (size_t)n;

    last_nl = memrchr(s->buf, '\n', s->len);
    if (last_nl != NULL) {
        size_t whole = (size_t)(last_nl - s->buf) + 1;

        emit(s, s->buf, whole, 0);
        memmove(s->buf, s->buf + whole, s->len - whole);
        s->len -= whole;
    } else if (s->len >= MAX_PENDING) {
        emit(s, s->buf, s->len, 1);
        s->len = 0;
    }
    return 0;
}

static void on_output(evutil_socket_t fd, short what, void *arg)
{
    struct mpirun_stream *s = arg;

    if (stream_read(s) == 1)
        stream_close(s);
}

int mpirun_iof_stream_open(struct mpirun_job *job, struct mpirun_stream *s, int fd, int dest_fd)
{
    s->job = job;
    s->fd = -1;
    s->dest_fd = dest_fd;
    s->ev = event_new(job->base, fd, EV_READ | EV_PERSIST, on_output, s);
    if (s->ev == NULL || event_add(s->ev, NULL) < 0) {
        mpirun_error("cannot watch the output of rank %d", s->rank->rank);
        if (s->ev != NULL)
            event_free(s->ev);
        s->ev = NULL;
        return -1;
    }
    s->fd = fd;
    return 0;
}

/* The ranks are gone, so what they wrote is in the pipes already: read until empty, not until
 * end of file, which a surviving grandchild holding the pipe could delay for ever. */
void mpirun_iof_drain_all(struct mpirun_job *job)
{
    for (int r = 0; r < job->np; r++) {
        struct mpirun_stream *streams[2] = { &job->ranks[r].out, &job->ranks[r].err };

        for (int i = 0; i < 2; i++) {
            struct mpirun_stream *s = streams[i];

            if (s->fd < 0)
                continue;
            fcntl(s->fd, F_SETFL, fcntl(s->fd, F_GETFL) | O_NONBLOCK);
            while (stream_read(s) == 0)
                ;
            stream_close(s);
        }
    }
}

/* Stops or resumes reading every rank's pipes (a daemon whose link to its parent is congested). */
void mpirun_iof_pause(struct mpirun_job *job, int resume)
{
    for (int r = 0; r < job->np; r++) {
        struct mpirun_stream *streams[2] = { &job->ranks[r].out, &job->ranks[r].err };

        for (int i = 0; i < 2; i++) {
            if (streams[i]->ev == NULL)
                continue;
            if (resume)
                event_add(streams[i]->ev, NULL);
            else
                event_del(streams[i]->ev);
        }
    }
}

/*
 * ---- stdin to rank 0 --------------------------------------------------------------------------
 *
 * Rank 0 on our node: it reads our stdin itself, unless that is a terminal, which only our
 * process group may read: then we copy from it (the head's tty mode below). Rank 0 on another
 * node: the head reads its stdin in chunks of up to sizeof(stdin_buf) and sends each to rank 0's
 * daemon, the next one only once the daemon has written the last into rank 0's pipe; so a rank 0
 * that does not read stops the head reading, instead of anyone buffering without bound.
 */

void mpirun_iof_close_stdin(struct mpirun_job *job)
{
    if (job->stdin_read_ev != NULL)
        event_free(job->stdin_read_ev);
    if (job->stdin_write_ev != NULL)
        event_free(job->stdin_write_ev);
    job->stdin_read_ev = job->stdin_write_ev = NULL;
    if (job->stdin_fd >= 0)
        close(job->stdin_fd);
    job->stdin_fd = -1;
}

/* One buffer, two states: reading our stdin while it is empty, writing to rank 0 while it is not.
 * On a daemon the reading is the head's, and a written chunk is acknowledged to it. */
static void on_stdin_writable(evutil_socket_t fd, short what, void *arg)
{
    struct mpirun_job *job = arg;
    ssize_t n = write(job->stdin_fd, job->stdin_buf + job->stdin_off,
                      job->stdin_len - job->stdin_off);

    if (n < 0 && (errno == EAGAIN || errno == EINTR))
        return;
    if (n < 0) {
        /* Rank 0 closed its stdin or exited: what remains has no reader. */
        mpirun_iof_close_stdin(job);
        if (job->vertex > 0)
            mpirun_tree_stdin_ack(job, 0);
        return;
    }
    job->stdin_off += (size_t)n;
    if (job->stdin_off == job->stdin_len) {
        event_del(job->stdin_write_ev);
        if (job->vertex > 0)
            mpirun_tree_stdin_ack(job, 1);
        else
            event_add(job->stdin_read_ev, NULL);
    }
}

static void on_stdin_readable(evutil_socket_t fd, short what, void *arg)
{
    struct mpirun_job *job = arg;
    ssize_t n = read(0, job->stdin_buf, sizeof(job->stdin_buf));

    if (n < 0 && (errno == EAGAIN || errno == EINTR))
        return;
    if (n <= 0) {
        /* End of our input: rank 0 sees end of file too. */
        mpirun_iof_close_stdin(job);
        return;
    }
    job->stdin_len = (size_t)n;
    job->stdin_off = 0;
    event_del(job->stdin_read_ev);
    event_add(job->stdin_write_ev, NULL);
}

int mpirun_iof_stdin_start(struct mpirun_job *job, int write_fd)
{
    job->stdin_fd = write_fd;
    fcntl(write_fd, F_SETFL, fcntl(write_fd, F_GETFL) | O_NONBLOCK);
    if (job->vertex == 0)
        job->stdin_read_ev = event_new(job->base, 0, EV_READ | EV_PERSIST, on_stdin_readable,
                                       job);
    job->stdin_write_ev = event_new(job->base, write_fd, EV_WRITE | EV_PERSIST, on_stdin_writable,
                                    job);
    if ((job->vertex == 0 && job->stdin_read_ev == NULL) || job->stdin_write_ev == NULL ||
        (job->stdin_read_ev != NULL && event_add(job->stdin_read_ev, NULL) < 0)) {
        mpirun_error("cannot forward stdin to rank 0");
        mpirun_iof_close_stdin(job);
        return -1;
    }
    return 0;
}

void mpirun_iof_stdin_data(struct mpirun_job *job, const char *p, size_t len)
{
    if (job->stdin_fd < 0) {
        /* rank 0 is gone or never started: nobody to give it to */
        if (len > 0)
            mpirun_tree_stdin_ack(job, 0);
        return;
    }
    if (len == 0) {
        mpirun_iof_close_stdin(job);   /* rank 0 sees end of file */
        return;
    }
    if (len > sizeof(job->stdin_buf))
        len = sizeof(job->stdin_buf);   /* the head never sends more than one buffer */
    memcpy(job->stdin_buf, p, len);
    job->stdin_len = len;
    job->stdin_off = 0;
    event_add(job->stdin_write_ev, NULL);
}

/* Head, rank 0 elsewhere: reads one chunk and sends it (or the end of input). */
static void stdin_remote_read(struct mpirun_job *job)
{
    ssize_t n;

    if (job->stdin_done || job->stdin_waiting)
        return;
    do
        n = read(0, job->stdin_buf, sizeof(job->stdin_buf));
    while (n < 0 && errno == EINTR);
    if (n < 0 && errno == EAGAIN)
        return;
    if (job->stdin_read_ev != NULL)
        event_del(job->stdin_read_ev);
    if (n <= 0) {
        job->stdin_done = 1;
        mpirun_tree_stdin(job, NULL, 0);
        return;
    }
    job->stdin_waiting = 1;
    mpirun_tree_stdin(job, job->stdin_buf, (size_t)n);
}

static void on_stdin_remote_readable(evutil_socket_t fd, short what, void *arg)
{
    stdin_remote_read(arg);
}

static void on_stdin_remote_next(evutil_socket_t fd, short what, void *arg)
{
    stdin_remote_read(arg);
}

int mpirun_iof_stdin_remote_start(struct mpirun_job *job)
{
    struct stat st;

    /* Regular files and devices such as /dev/null cannot be watched by epoll and never block:
     * they are read as soon as the last chunk is acknowledged. Pipes, sockets and terminals are
     * read when they have data. */
    if (fstat(0, &st) < 0) {
        job->stdin_done = 1;
        mpirun_tree_stdin(job, NULL, 0);
        return 0;
    }
    if (!S_ISREG(st.st_mode) && !(S_ISCHR(st.st_mode) && !isatty(0))) {
        job->stdin_read_ev = event_new(job->base, 0, EV_READ | EV_PERSIST,
                                       on_stdin_remote_readable, job);
        if (job->stdin_read_ev == NULL || event_add(job->stdin_read_ev, NULL) < 0) {
            mpirun_error("cannot forward stdin to rank 0");
            return -1;
        }
        return 0;
    }
    stdin_remote_read(job);
    return 0;
}

void mpirun_iof_stdin_ack(struct mpirun_job *job, int more)
{
    job->stdin_waiting = 0;
    if (!more) {
        /* rank 0 takes no more input */
        job->stdin_done = 1;
        if (job->stdin_read_ev != NULL)
            event_del(job->stdin_read_ev);
        return;
    }
    if (job->stdin_read_ev != NULL)
        event_add(job->stdin_read_ev, NULL);
    else
        event_base_once(job->base, -1, EV_TIMEOUT, on_stdin_remote_next, job, NULL);
}
