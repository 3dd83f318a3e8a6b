/*
 * Failures and the end of the launch tree (tree.h explains the tree).
 *
 * A lost child (its connection closed before BYE, its agent failed, it never connected) is a lost
 * subtree: a daemon reports it up, the head counts that subtree's ranks as gone and ends the job.
 * A daemon that loses its parent kills its ranks at once and stops, so nothing outlives the head.
 * Once every rank is accounted for, the head sends SHUTDOWN and waits for the daemons' BYE; each
 * daemon passes SHUTDOWN on, waits for its children, flushes its last messages and says BYE. The
 * launch agents are reaped last.
 */
#include "tree.h"

#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/event.h>

#define SHUTDOWN_WAIT_S 10       /* for the daemons to say BYE once the job is over */
#define GIVEUP_AFTER_S  5        /* after the grace period, for daemons to report their ranks */

/* ---- whether this vertex is done ------------------------------------------------------------- */

static int all_down(const struct mpirun_tree *t)
{
    for (int i = 0; i < t->nchild; i++) {
        if (t->child[i].state != LINK_DOWN)
            return 0;
    }
    return 1;
}

void mpirun_tree_check_done(struct mpirun_job *job)
{
    struct mpirun_tree *t = job->tree;

    if (t == NULL || !t->shutdown || t->finished || job->nrunning > 0 || job->npending > 0 ||
        !all_down(t))
        return;
    t->finished = 1;
    event_base_loopbreak(job->base);
}

int mpirun_tree_done(struct mpirun_job *job)
{
    return job->tree->finished || job->tree->parent_lost;
}

/* A child's link went down: the last one ends the head's wait for BYE (mpirun_tree_finish), and
 * may be what a daemon still waited for. */
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

/* ---- failures -------------------------------------------------------------------------------- */

void mpirun_tree_head_lost(struct mpirun_tree *t, int code, int lost_vertex, const char *msg)
{
    struct mpirun_job *job = t->job;

    if (!job->ending && msg[0] != '\0')
        fprintf(stderr, "%s: %s; ending the job\n", mpirun_name, msg);
    if (lost_vertex > 0 && lost_vertex < t->nverts) {
        /* the vertex and every vertex below it */
        for (int v = lost_vertex; v < t->nverts; v++) {
            int u = v;

            while (u > lost_vertex)
                u = mpirun_tree_parent_of(t, u);
            if (u == lost_vertex && t->vertex_node[v] >= 0)
                t->up->ranks_lost(job, t->vertex_node[v]);
        }
    }
    t->up->end_job(job, code, SIGTERM, MPIRUN_FAIL_GRACE_S);
    t->up->maybe_done(job);
}

void mpirun_tree_report(struct mpirun_tree *t, int code, int lost_vertex, const char *msg)
{
    struct mpirun_wbuf w;

    if (t->job->vertex == 0) {
        mpirun_tree_head_lost(t, code, lost_vertex, msg);
        return;
    }
    mpirun_wbuf_start(&w, MPIRUN_MSG_ERROR, 0);
    mpirun_wbuf_u32(&w, (uint32_t)code);
    mpirun_wbuf_u32(&w, (uint32_t)(lost_vertex > 0 ? lost_vertex : 0));
    mpirun_wbuf_str(&w, msg);
    if (mpirun_wbuf_finish(&w) == 0) {
        mpirun_tree_send_up(t, w.p, w.len);
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
        mpirun_tree_report(job->tree, code, 0, msg);
    else
        mpirun_error("%s", msg);
}

void mpirun_tree_child_lost(struct link *l, const char *why)
{
    struct mpirun_tree *t = l->tree;
    char msg[1024];

    if (l->state == LINK_DOWN)
        return;
    mpirun_tree_link_close(l);
    if (l->agent > 0)
        kill(l->agent, SIGTERM);
    if (!t->shutdown) {
        snprintf(msg, sizeof(msg), "lost the umpi daemon on %s: %s",
                 mpirun_tree_vertex_host(t, l->vertex), why);
        mpirun_tree_report(t, 1, l->vertex, msg);
    }
    all_down_check(t);
}

void mpirun_tree_on_child_event(struct bufferevent *bev, short what, void *arg)
{
    struct link *l = arg;

    if (!(what & (BEV_EVENT_EOF | BEV_EVENT_ERROR)))
        return;
    if (l->state == LINK_BYE || l->tree->shutdown) {
        mpirun_tree_link_close(l);
        all_down_check(l->tree);
        return;
    }
    mpirun_tree_child_lost(l, what & BEV_EVENT_ERROR ? strerror(EVUTIL_SOCKET_ERROR())
                                                     : "its connection closed");
}

void mpirun_tree_parent_gone(struct mpirun_tree *t)
{
    /* Nobody left to report to or to take orders from: end everything here, at once. */
    t->parent_lost = 1;
    t->up->end_local(t->job, SIGKILL, 0);
    event_base_loopbreak(t->job->base);
}

void mpirun_tree_on_parent_event(struct bufferevent *bev, short what, void *arg)
{
    if (what & (BEV_EVENT_EOF | BEV_EVENT_ERROR))
        mpirun_tree_parent_gone(arg);
}

/* ---- ending the job -------------------------------------------------------------------------- */

/* The job is ending, yet some daemons did not report all their ranks by now: stop waiting. */
static void on_giveup(evutil_socket_t fd, short what, void *arg)
{
    struct mpirun_tree *t = arg;

    for (int i = 0; i < t->nchild; i++) {
        struct link *l = &t->child[i];

        if (l->state == LINK_DOWN)
            continue;
        fprintf(stderr, "%s: no word from the umpi daemon on %s after ending the job; giving up "
                "on it\n", mpirun_name, mpirun_tree_vertex_host(t, l->vertex));
        mpirun_tree_link_close(l);
        if (l->agent > 0)
            kill(l->agent, SIGKILL);
        mpirun_tree_head_lost(t, 1, l->vertex, "");
    }
    t->up->maybe_done(t->job);
}

void mpirun_tree_end(struct mpirun_job *job, int signo, double grace_s)
{
    struct mpirun_tree *t = job->tree;
    struct timeval tv = { .tv_sec = (long)grace_s + GIVEUP_AFTER_S };

    if (t == NULL || job->vertex != 0)
        return;
    mpirun_tree_send_simple(t, MPIRUN_MSG_END, MPIRUN_TO_ALL, 2, (uint32_t)signo,
                            (uint32_t)(grace_s * 1000));
    if (t->giveup == NULL)
        t->giveup = evtimer_new(job->base, on_giveup, t);
    if (t->giveup != NULL && !evtimer_pending(t->giveup, NULL))
        evtimer_add(t->giveup, &tv);
}

/* ---- shutting the tree down ------------------------------------------------------------------ */

void mpirun_tree_begin_shutdown(struct mpirun_tree *t)
{
    t->shutdown = 1;
    for (int i = 0; i < t->nchild; i++) {
        /* never connected: nothing to shut down but its agent */
        if (t->child[i].state == LINK_STARTING) {
            if (t->child[i].agent > 0)
                kill(t->child[i].agent, SIGTERM);
            mpirun_tree_link_close(&t->child[i]);
        }
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
                    mpirun_name, mpirun_tree_vertex_host(t, t->child[i].vertex));
            mpirun_tree_link_close(&t->child[i]);
        }
    }
    t->shutdown_over = 1;
    event_base_loopbreak(t->job->base);
}

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
    bufferevent_setcb(t->parent, NULL, on_parent_flushed, mpirun_tree_on_parent_event, t);
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

        if (t->giveup != NULL)
            event_free(t->giveup);
        t->giveup = NULL;
        mpirun_tree_send_simple(t, MPIRUN_MSG_SHUTDOWN, MPIRUN_TO_ALL, 0, 0, 0);
        mpirun_tree_begin_shutdown(t);
        if (timer != NULL)
            evtimer_add(timer, &tv);
        /* Other callbacks (a reaped agent) break loops too: wait on the links themselves. */
        while (!t->shutdown_over && !all_down(t))
            event_base_loop(job->base, EVLOOP_ONCE);
        if (timer != NULL)
            event_free(timer);
    } else if (!t->parent_lost) {
        mpirun_tree_send_simple(t, MPIRUN_MSG_BYE, 0, 0, 0, 0);
        flush_parent(t);
    }
    mpirun_tree_close_all(t);
    reap_agents(t);
}
