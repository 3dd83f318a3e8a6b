/*
 * Starting the ranks, watching them, and ending the job.
 *
 * The job ends on the first failure: a rank killed by a signal, a rank exiting nonzero (or zero
 * while connected and not finalized, with others still running), MPI_Abort, or SIGINT/SIGTERM to
 * mpirun. Ending means SIGTERM to every rank's process group and SIGKILL after a grace period,
 * and mpirun's exit status is that of the first failure. Each rank leads its own process group
 * (so its own children die with it) and asks the kernel for SIGKILL if mpirun dies (so no rank
 * outlives an mpirun killed with -9).
 *
 * Across machines each process of the tree (tree.h) does this for the ranks of its own node; the
 * head alone judges exits and decides the job's end, from what the daemons report: a daemon
 * settles a rank's exit as below and passes it up instead of judging it, and the head's END
 * reaches every daemon, which terminates its ranks in the same way.
 */
#include "mpirun.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <event2/event.h>

#define FAIL_GRACE_S   MPIRUN_FAIL_GRACE_S
#define SIGNAL_GRACE_S MPIRUN_SIGNAL_GRACE_S

static struct event *sig_events[8];
static int nsig_events;

/* ---- ending the job --------------------------------------------------------------------------- */

static void signal_ranks(struct mpirun_job *job, int signo)
{
    for (int r = 0; r < job->np; r++) {
        struct mpirun_rank *rk = &job->ranks[r];

        /* The group outlives its leader while the leader's children live: signal it even after
         * the rank itself was reaped, since the pid cannot be reused while the group exists. */
        if (rk->pid > 0)
            kill(-rk->pid, signo);
    }
}

static void on_kill_timer(evutil_socket_t fd, short what, void *arg)
{
    signal_ranks(arg, SIGKILL);
}

/* Only this node's ranks: what END from the head asks of a daemon. */
static void end_local(struct mpirun_job *job, int signo, double grace_s)
{
    struct timeval tv = { .tv_sec = (long)grace_s,
                          .tv_usec = (long)((grace_s - (long)grace_s) * 1e6) };

    if (signo == SIGKILL || (job->ending && signo != 0)) {
        /* asked again, or asked to be quick: no grace */
        signal_ranks(job, SIGKILL);
        job->ending = 1;
        return;
    }
    job->ending = 1;
    signal_ranks(job, signo);
    if (job->kill_timer == NULL)
        job->kill_timer = evtimer_new(job->base, on_kill_timer, job);
    if (job->kill_timer == NULL || evtimer_add(job->kill_timer, &tv) < 0)
        signal_ranks(job, SIGKILL);
}

/* First failure wins the exit code; then every rank still running is terminated, on every node. */
static void end_job(struct mpirun_job *job, int exit_code, int signo, double grace_s)
{
    if (!job->have_exit_code) {
        job->exit_code = exit_code;
        job->have_exit_code = 1;
    }
    if (job->ending)
        return;
    mpirun_tree_end(job, signo, grace_s);
    end_local(job, signo, grace_s);
}

const char *mpirun_rank_where(struct mpirun_job *job, int rank, char *buf, size_t len)
{
    struct mpirun_rank *rk = &job->ranks[rank];

    if (job->multi)
        snprintf(buf, len, "pid %ld on %s", (long)rk->pid,
                 job->map.node_name[job->map.node_of[rank]]);
    else
        snprintf(buf, len, "pid %ld", (long)rk->pid);
    return buf;
}

static void settle(struct mpirun_job *job, struct mpirun_rank *rk);

/* ---- what the PMIx thread saw ----------------------------------------------------------------- */

static void report_abort(struct mpirun_job *job, struct mpirun_rank *rk, int code, const char *msg)
{
    char where[300] = "";

    if (!job->ending) {
        if (job->multi) {
            where[0] = ' ';
            where[1] = '(';
            mpirun_rank_where(job, rk->rank, where + 2, sizeof(where) - 3);
            strcat(where, ")");
        }
        if (msg[0] != '\0')
            fprintf(stderr, "%s: rank %d%s aborted the job with code %d: %s\n", mpirun_name,
                    rk->rank, where, code, msg);
        else
            fprintf(stderr, "%s: rank %d%s aborted the job with code %d\n", mpirun_name,
                    rk->rank, where, code);
    }
    end_job(job, code, SIGTERM, FAIL_GRACE_S);
}

void mpirun_handle_notes(struct mpirun_job *job)
{
    struct mpirun_note *n;

    while ((n = mpirun_server_take_note()) != NULL) {
        struct mpirun_rank *rk = n->rank >= 0 && n->rank < job->np ? &job->ranks[n->rank] : NULL;

        if (n->kind == MPIRUN_NOTE_FENCE) {
            mpirun_tree_fence(job, n);   /* the tree keeps the note until the fence ends */
            continue;
        }
        if (rk == NULL) {
            free(n);
            continue;
        }
        switch (n->kind) {
        case MPIRUN_NOTE_CONNECTED:
            rk->connected = 1;
            break;
        case MPIRUN_NOTE_FINALIZED:
            rk->finalized = 1;
            settle(job, rk);
            break;
        case MPIRUN_NOTE_ABORT:
            rk->aborted = 1;
            if (job->vertex > 0)
                mpirun_tree_rank_abort(job, rk, n->code, n->data);
            else
                report_abort(job, rk, n->code, n->data);
            settle(job, rk);
            break;
        case MPIRUN_NOTE_FENCE:
            break;
        }
        free(n);
    }
}

static void on_wake(evutil_socket_t fd, short what, void *arg)
{
    char drain[256];

    while (read(fd, drain, sizeof(drain)) > 0)
        ;
    mpirun_handle_notes(arg);
}

/* ---- child exits ------------------------------------------------------------------------------ */

/*
 * libpmix releases a client from PMIx_Finalize before it has told us (the finalize note can come
 * after the rank's exit), so the exit of a rank not yet known as finalized is judged only once
 * its note arrived or VERDICT_WAIT_S passed. Only failures wait: a clean job ends at once.
 */
#define VERDICT_WAIT_S 0.5

/* Stops the event loop when there is nothing left to wait for. */
static void maybe_done(struct mpirun_job *job)
{
    /* A daemon runs until the head says the job is over (tree_end.c). */
    if (job->vertex > 0)
        mpirun_tree_check_done(job);
    else if (job->nrunning == 0 && job->npending == 0)
        event_base_loopbreak(job->base);
}

static void judge_exit(struct mpirun_job *job, struct mpirun_rank *rk)
{
    int status = rk->status;
    char where[300];

    /* Once we are killing the ranks their deaths are ours; and an aborting rank was announced. */
    if (job->ending || rk->aborted)
        return;

    mpirun_rank_where(job, rk->rank, where, sizeof(where));
    if (WIFSIGNALED(status)) {
        int sig = WTERMSIG(status);

        fprintf(stderr, "%s: rank %d (%s) killed by signal %d (%s)%s\n", mpirun_name,
                rk->rank, where, sig, strsignal(sig),
                job->nrunning > 0 ? "; ending the job" : "");
        end_job(job, 128 + sig, SIGTERM, FAIL_GRACE_S);
    } else if (WEXITSTATUS(status) != 0) {
        int code = WEXITSTATUS(status);

        if (rk->finalized) {
            /* Finalized ranks are done with the others; only the exit status is kept. */
            if (!job->have_exit_code) {
                job->exit_code = code;
                job->have_exit_code = 1;
            }
            return;
        }
        fprintf(stderr, "%s: rank %d (%s) exited with code %d%s%s\n", mpirun_name, rk->rank,
                where, code, rk->connected ? " before MPI_Finalize" : "",
                job->nrunning > 0 ? "; ending the job" : "");
        end_job(job, code, SIGTERM, FAIL_GRACE_S);
    } else if (rk->connected && !rk->finalized && rk->others_running) {
        /* The others would wait for it for ever in their next collective. */
        fprintf(stderr, "%s: rank %d (%s) exited without calling MPI_Finalize; ending the job\n",
                mpirun_name, rk->rank, where);
        end_job(job, 1, SIGTERM, FAIL_GRACE_S);
    }
}

/* The exit of a rank of ours is settled: the head judges it, a daemon passes it up. */
static void exit_settled(struct mpirun_job *job, struct mpirun_rank *rk)
{
    if (job->vertex > 0)
        mpirun_tree_rank_exit(job, rk);
    else
        judge_exit(job, rk);
}

static void settle(struct mpirun_job *job, struct mpirun_rank *rk)
{
    if (!rk->verdict_pending)
        return;
    rk->verdict_pending = 0;
    job->npending--;
    exit_settled(job, rk);
    maybe_done(job);
}

static void on_verdict_timer(evutil_socket_t fd, short what, void *arg)
{
    struct mpirun_rank *rk = arg;

    mpirun_handle_notes(rk->job);
    settle(rk->job, rk);
}

static void rank_exited(struct mpirun_job *job, struct mpirun_rank *rk, int status)
{
    struct timeval wait = { .tv_sec = 0, .tv_usec = (long)(VERDICT_WAIT_S * 1e6) };
    int code = WIFEXITED(status) ? WEXITSTATUS(status) : 0;

    rk->exited = 1;
    rk->status = status;
    job->nrunning--;
    rk->others_running = job->nrunning > 0;

    if (!job->ending && !rk->aborted && !rk->finalized && WIFEXITED(status) &&
        (code != 0 || rk->connected)) {
        rk->verdict_pending = 1;
        job->npending++;
        if (event_base_once(job->base, -1, EV_TIMEOUT, on_verdict_timer, rk, &wait) == 0)
            return;
        rk->verdict_pending = 0;   /* no timer: judge now */
        job->npending--;
    }
    exit_settled(job, rk);
}

/* Head: a rank of another node exited, as its daemon reported. */
static void remote_exit(struct mpirun_job *job, int rank, pid_t pid, int status, int connected,
                        int finalized, int aborted)
{
    struct mpirun_rank *rk;

    if (rank < 0 || rank >= job->np || job->ranks[rank].exited)
        return;
    rk = &job->ranks[rank];
    rk->pid = pid;
    rk->connected = connected;
    rk->finalized = finalized;
    rk->aborted |= aborted;
    rk->exited = 1;
    rk->status = status;
    job->nrunning--;
    rk->others_running = job->nrunning > 0;
    judge_exit(job, rk);
    maybe_done(job);
}

/* Head: a rank of another node called MPI_Abort. */
static void remote_abort(struct mpirun_job *job, int rank, pid_t pid, int code, const char *msg)
{
    if (rank < 0 || rank >= job->np)
        return;
    job->ranks[rank].pid = pid;
    job->ranks[rank].aborted = 1;
    report_abort(job, &job->ranks[rank], code, msg);
}

/* Head: the ranks of a lost node: counted as gone, without a verdict of their own. */
static void ranks_lost(struct mpirun_job *job, int node)
{
    for (int r = 0; r < job->np; r++) {
        struct mpirun_rank *rk = &job->ranks[r];

        if (job->map.node_of[r] == node && !rk->exited) {
            rk->exited = 1;
            rk->status = 0;
            job->nrunning--;
        }
    }
    maybe_done(job);
}

static void on_sigchld(evutil_socket_t fd, short what, void *arg)
{
    struct mpirun_job *job = arg;
    pid_t pid;
    int status;

    /* Notes already queued happened before these exits; late ones are waited for (above). */
    mpirun_handle_notes(job);
    while ((pid = waitpid(-1, &status, WNOHANG)) > 0) {
        if (mpirun_tree_child_exited(job, pid, status))
            continue;
        for (int r = 0; r < job->np; r++) {
            if (job->ranks[r].pid == pid && !job->ranks[r].exited &&
                job->map.node_of[r] == job->my_node) {
                rank_exited(job, &job->ranks[r], status);
                break;
            }
        }
    }
    maybe_done(job);
}

/* ---- signals to mpirun ------------------------------------------------------------------------ */

static void on_signal(evutil_socket_t signo, short what, void *arg)
{
    struct mpirun_job *job = arg;

    if (job->vertex > 0 && (signo == SIGUSR1 || signo == SIGUSR2)) {
        signal_ranks(job, (int)signo);
        return;
    }
    if (job->vertex > 0) {
        /* A daemon signalled on its own host (not through the head): it stops, and says so. */
        mpirun_tree_error(job, 128 + (int)signo, "the umpi daemon on %s received signal %d (%s)",
                          job->hostname, (int)signo, strsignal((int)signo));
        end_local(job, SIGKILL, 0);
        return;
    }
    if (signo == SIGUSR1 || signo == SIGUSR2) {
        signal_ranks(job, (int)signo);
        mpirun_tree_signal(job, (int)signo);
        return;
    }
    if (job->ending) {
        /* Asked twice: the user does not want to wait for the grace period. */
        signal_ranks(job, SIGKILL);
        mpirun_tree_end(job, SIGKILL, 0);
        return;
    }
    end_job(job, 128 + (int)signo, (int)signo, SIGNAL_GRACE_S);
}

/* ---- what the tree hands up ------------------------------------------------------------------- */

/* Filled here, where the functions it names live; the tree holds it from its start (mpirun.h).
 * Those of launch.c are file-local: the tree reaches them through the table alone. */
const struct mpirun_tree_upcalls mpirun_launch_upcalls = {
    .end_job = end_job,
    .end_local = end_local,
    .signal_local = signal_ranks,
    .remote_exit = remote_exit,
    .remote_abort = remote_abort,
    .ranks_lost = ranks_lost,
    .maybe_done = maybe_done,
    .iof_write = mpirun_iof_write,
    .iof_pause = mpirun_iof_pause,
    .iof_stdin_ack = mpirun_iof_stdin_ack,
    .iof_stdin_data = mpirun_iof_stdin_data,
};

/* ---- starting the ranks ----------------------------------------------------------------------- */

/* Between fork and exec only async-signal-safe calls: libpmix's thread may hold any lock. */
static void exec_rank(struct mpirun_job *job, int stdin_fd, int out_fd, int err_fd, char **env,
                      pid_t parent)
{
    static const char msg[] = ": cannot execute the program\n";
    sigset_t none;

    setpgid(0, 0);
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != parent)
        _exit(127);   /* mpirun died before we asked to follow it */

    /* Undo what mpirun set for itself: ignored SIGPIPE and blocked signals would be inherited. */
    for (int sig = 1; sig < NSIG; sig++)
        signal(sig, SIG_DFL);
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, NULL);

    if (dup2(stdin_fd, 0) < 0 || dup2(out_fd, 1) < 0 || dup2(err_fd, 2) < 0)
        _exit(127);
    close_range(3, ~0u, 0);
    execve(job->path, job->argv, env);
    write(2, job->path, strlen(job->path));
    write(2, msg, sizeof(msg) - 1);
    _exit(127);
}

static int start_rank(struct mpirun_job *job, int r, int devnull)
{
    struct mpirun_rank *rk = &job->ranks[r];
    int out[2] = { -1, -1 }, err[2] = { -1, -1 }, in[2] = { -1, -1 };
    int stdin_fd = devnull, rc = -1;
    char **env = NULL;
    pid_t pid, parent;

    /* Each rank's environment: ours (with -x), plus what PMIx says its client needs. */
    for (int n = 0; job->env[n] != NULL; n++) {
        char **e = realloc(env, (size_t)(n + 2) * sizeof(char *));

        if (e == NULL)
            goto fail;
        env = e;
        if ((env[n] = strdup(job->env[n])) == NULL)
            goto fail;
        env[n + 1] = NULL;
    }
    if (mpirun_server_setup_rank(job, r, &env) < 0)
        goto fail;

    if (pipe2(out, O_CLOEXEC) < 0 || pipe2(err, O_CLOEXEC) < 0) {
        mpirun_error("pipe: %s", strerror(errno));
        goto fail;
    }
    if (r == 0) {
        /* A terminal is read only by the foreground process group, which is ours, not rank 0's:
         * copy from it. Anything else (file, pipe, /dev/null) rank 0 reads itself. On a daemon
         * rank 0's input comes from the head, through a pipe of ours. */
        if (job->vertex > 0 || isatty(0)) {
            if (pipe2(in, O_CLOEXEC) < 0) {
                mpirun_error("pipe: %s", strerror(errno));
                goto fail;
            }
            stdin_fd = in[0];
        } else {
            stdin_fd = 0;
        }
    }

    parent = getpid();
    pid = fork();
    if (pid < 0) {
        mpirun_error("fork: %s", strerror(errno));
        goto fail;
    }
    if (pid == 0) {
        mpirun_bind_child(job, r, job->map.local_rank[r]);
        exec_rank(job, stdin_fd, out[1], err[1], env, parent);
    }
    /* Also here, so that a kill of the group cannot come before the child made it. */
    setpgid(pid, pid);
    rk->pid = pid;
    job->nrunning++;

    rk->out.rank = rk->err.rank = rk;
    if (mpirun_iof_stream_open(job, &rk->out, out[0], 1) < 0)
        goto fail;
    out[0] = -1;   /* the stream owns it now */
    if (mpirun_iof_stream_open(job, &rk->err, err[0], 2) < 0)
        goto fail;
    err[0] = -1;
    if (in[1] >= 0) {
        int fd = in[1];

        in[1] = -1;
        if (mpirun_iof_stdin_start(job, fd) < 0)   /* closes fd on failure */
            goto fail;
    }
    rc = 0;
fail:
    /* Our copies of the child's ends, and whatever was not handed over. */
    for (int i = 0; i < 2; i++) {
        if (out[i] >= 0)
            close(out[i]);
        if (err[i] >= 0)
            close(err[i]);
        if (in[i] >= 0)
            close(in[i]);
    }
    for (int n = 0; env != NULL && env[n] != NULL; n++)
        free(env[n]);
    free(env);
    return rc;
}

/* Ranks of ours that were never forked (a failure or the job's end came first) count as gone;
 * a daemon tells the head, which counts every rank of other nodes until they are reported. */
static void unstarted_ranks_gone(struct mpirun_job *job)
{
    for (int r = 0; r < job->np; r++) {
        struct mpirun_rank *rk = &job->ranks[r];

        if (job->map.node_of[r] != job->my_node || rk->pid != 0 || rk->exited)
            continue;
        rk->exited = 1;
        rk->status = W_EXITCODE(127, 0);
        if (job->vertex > 0)
            mpirun_tree_rank_exit(job, rk);
    }
}

int mpirun_launch(struct mpirun_job *job)
{
    static const int forwarded[] = { SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2 };
    struct event *chld_ev = NULL, *wake_ev = NULL;
    int devnull = -1, rc = -1;

    /* A rank that closes its stdin, or a reader of our stdout that goes away, must not kill us. */
    signal(SIGPIPE, SIG_IGN);

    chld_ev = evsignal_new(job->base, SIGCHLD, on_sigchld, job);
    if (job->server_up)
        wake_ev = event_new(job->base, mpirun_server_wake_fd(), EV_READ | EV_PERSIST, on_wake, job);
    if (chld_ev == NULL || (job->server_up && wake_ev == NULL) || event_add(chld_ev, NULL) < 0 ||
        (wake_ev != NULL && event_add(wake_ev, NULL) < 0)) {
        mpirun_error("cannot set up the event loop");
        goto out;
    }
    for (size_t i = 0; i < sizeof(forwarded) / sizeof(forwarded[0]); i++) {
        struct event *ev = evsignal_new(job->base, forwarded[i], on_signal, job);

        if (ev == NULL || event_add(ev, NULL) < 0) {
            mpirun_error("cannot watch signal %d", forwarded[i]);
            goto out;
        }
        sig_events[nsig_events++] = ev;
    }
    devnull = open("/dev/null", O_RDONLY | O_CLOEXEC);
    if (devnull < 0) {
        mpirun_error("/dev/null: %s", strerror(errno));
        goto out;
    }

    /* Launch agents started before this loop watched SIGCHLD may have exited already. */
    on_sigchld(-1, 0, job);
    if (job->stdin_remote && mpirun_iof_stdin_remote_start(job) < 0)
        end_job(job, 1, SIGTERM, FAIL_GRACE_S);

    for (int r = 0; r < job->np && !job->ending; r++) {
        if (job->map.node_of[r] != job->my_node)
            continue;
        if (start_rank(job, r, devnull) < 0) {
            if (job->vertex > 0)
                mpirun_tree_error(job, 1, "cannot start rank %d on %s", r, job->hostname);
            else
                end_job(job, 1, SIGKILL, 0);
            break;
        }
        /* A signal or a failure during a long start stops the starting. */
        event_base_loop(job->base, EVLOOP_NONBLOCK);
    }
    unstarted_ranks_gone(job);
    /* Until every rank is accounted for (a daemon: until the head says the job is over). A
     * loopbreak can come from a callback run by any loop, the start-up one above included, so
     * the condition is checked here rather than trusted to the break. */
    while (job->vertex > 0 ? !mpirun_tree_done(job) : job->nrunning > 0 || job->npending > 0)
        event_base_loop(job->base, EVLOOP_ONCE);
    rc = 0;

out:
    /* Every rank of ours is reaped here, unless the loop could not run (or a daemon lost its
     * parent): then make sure of it. */
    for (int r = 0; r < job->np; r++) {
        struct mpirun_rank *rk = &job->ranks[r];

        if (job->map.node_of[r] == job->my_node && rk->pid > 0 && !rk->exited) {
            kill(-rk->pid, SIGKILL);
            if (waitpid(rk->pid, &rk->status, 0) == rk->pid) {
                rk->exited = 1;
                job->nrunning--;
            }
        }
    }
    mpirun_handle_notes(job);
    mpirun_iof_drain_all(job);
    mpirun_iof_close_stdin(job);
    if (job->tree != NULL)
        mpirun_tree_finish(job);
    if (devnull >= 0)
        close(devnull);
    for (int i = 0; i < nsig_events; i++)
        event_free(sig_events[i]);
    nsig_events = 0;
    if (chld_ev != NULL)
        event_free(chld_ev);
    if (wake_ev != NULL)
        event_free(wake_ev);
    if (job->kill_timer != NULL)
        event_free(job->kill_timer);
    job->kill_timer = NULL;
    return rc;
}
