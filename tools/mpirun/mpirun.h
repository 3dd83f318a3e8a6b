/*
 * mpirun: the launcher (shared/DESIGN.md, "Launch").
 *
 * One process per node, two threads each:
 *   main thread   libevent loop: rank stdout/stderr pipes, stdin to rank 0, SIGCHLD, SIGINT/TERM,
 *                 timers, the tree links (below) and the notes the PMIx thread leaves. It alone
 *                 owns the job state.
 *   PMIx thread   libpmix's own progress thread calls our server module (connected, finalized,
 *                 abort, fence). Those upcalls only answer PMIx and post a note for the main thread.
 *
 * On one machine (no --host/--hostfile) mpirun is the only process: it serves PMIx to its ranks,
 * forks them and ends the job. Across machines (tree.h) the same program runs as the head (the
 * user's mpirun) and as one daemon per other node (`mpirun --umpi-daemon ...`, started through a
 * launch agent such as ssh); the processes form a tree in which each serves PMIx to its node's
 * ranks, forks them, and relays messages between its children and its parent.
 *
 *   main.c        options, then start -> run -> stop (the top: no other file calls into it)
 *   error.c       messages to the user (every file reports through it; it calls none of them)
 *   hosts.c       --host / --hostfile parsing and the mapping of ranks to nodes
 *   server.c      PMIx server: init, namespace and client registration, the module upcalls, notes
 *   launch.c      fork/exec of the ranks, signals, child exit, ending the job
 *   iof.c         stdout/stderr forwarding line by line (--tag-output) and stdin to rank 0
 *   bind.c        process binding (hwloc): --bind-to, --map-by, --report-bindings, --cpu-set
 *   wire.c        the tree's messages: framing, encoding, the job description
 *   tree.h        the tree (head and daemons alike): how it works, its state, its four files:
 *   tree_spawn.c  starting daemons through the launch agent; children connecting back
 *   tree_route.c  messages up and down the tree; PMIx fences across nodes
 *   tree_end.c    lost daemons and the end: END, SHUTDOWN, BYE, agents reaped
 *   tree_conn.c   the tree's sockets: frames written and cut, flow control, closing
 *   daemon.c      a daemon's start: reach the parent, receive the job, run it
 *   slurm.c       inside a Slurm allocation: the job handed to srun, options translated
 *
 * Each file calls only those below it: main.c; daemon.c and slurm.c; launch.c; iof.c; the tree
 * (tree_spawn.c over tree_route.c over tree_end.c over tree_conn.c); then server.c, bind.c and
 * wire.c (over hosts.c), and error.c under all. What the tree learns it hands up to launch.c and
 * iof.c through one table of callbacks (struct mpirun_tree_upcalls), never by name.
 */
#ifndef MPIRUN_H
#define MPIRUN_H

#include <stddef.h>
#include <string.h>
#include <stdio.h>
#include <stdint.h>
#include <sys/types.h>

struct mpirun_job;
struct mpirun_launch_desc;
struct mpirun_tree_upcalls;
struct event_base;
struct event;
struct hwloc_topology;
struct hwloc_bitmap_s;

/* ---- messages to the user (error.c) ---------------------------------------------------------- */

/* How this process names itself in messages: argv[0]'s basename at the head (main.c sets it),
 * "mpirun (daemon on HOST)" in a daemon (daemon.c). */
extern const char *mpirun_name;
/* Writes "NAME: message" and a newline to stderr. */
void mpirun_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* ---- process binding (bind.c) ---------------------------------------------------------------- */

/* Objects ranks are placed on and bound to. UNSET: not given; AUTO: bind to core when every rank
 * of the node can have its own, else do not bind; SLOT (--map-by only): the next free core. */
enum mpirun_bind_level {
    MPIRUN_BIND_UNSET = 0, MPIRUN_BIND_AUTO, MPIRUN_BIND_NONE, MPIRUN_BIND_HWTHREAD,
    MPIRUN_BIND_CORE, MPIRUN_BIND_L3CACHE, MPIRUN_BIND_NUMA, MPIRUN_BIND_SOCKET, MPIRUN_BIND_SLOT,
};

/* What one local rank gets: computed in mpirun before any fork, applied by the child. */
struct mpirun_bind_slot {
    void *cpus;           /* a cpu_set_t of cpus_size bytes for sched_setaffinity; NULL: inherit */
    size_t cpus_size;
    char *report;         /* the end of its --report-bindings line: " on HOST: core 0, cpus 0, ..." */
    size_t report_len;
};

struct mpirun_bind {
    /* options (mpirun_bind_option) */
    enum mpirun_bind_level bind_to;  /* --bind-to; UNSET: UMPI_BIND_TO, else AUTO */
    enum mpirun_bind_level map_by;   /* --map-by; UNSET: SLOT, or the bind-to object if larger */
    int pe;               /* cores (hwthreads) per rank: --map-by X:PE=n, --cpus-per-rank; 0: 1 */
    int report;           /* --report-bindings */
    int oversubscribe;    /* --oversubscribe: ranks may share the objects they are bound to */
    char *cpu_set;        /* --cpu-set: the OS cpu numbers the ranks are confined to; NULL: all */

    /* the plan (mpirun_bind_setup) */
    int nslots;           /* local ranks planned for; 0: nothing to do in the children */
    struct mpirun_bind_slot *slots;
    int node_cpus;        /* cpus of the node's ranks together; 0 when not bound */
};

/* Tries argv[*i] as a binding option; 1: consumed (with its value, *i advanced), 0: not one of
 * them, -1: bad value (reported). */
int mpirun_bind_option(struct mpirun_bind *b, char **argv, int *i);
/* The --help lines of the binding options. */
void mpirun_bind_usage(FILE *f);
/* Computes, in mpirun, which cpus each of the local_size ranks of this node gets, and adds
 * UMPI_NODE_CPUS to job->env when it binds. 0, or -1 with the reason reported. */
int mpirun_bind_setup(struct mpirun_job *job, int local_size);
/* The plan for a given topology and set of available cpus (mpirun_bind_setup and the unit test);
 * host names the node in the report lines. */
int mpirun_bind_plan(struct mpirun_bind *b, struct hwloc_topology *topo,
                     const struct hwloc_bitmap_s *avail, int local_size, const char *host);
/* In the child, between fork and exec (async-signal-safe): binds the calling process as planned
 * for local_rank and writes its --report-bindings line naming it `rank`. Exits the child with
 * status 1 and a message if the kernel refuses the binding. */
void mpirun_bind_child(const struct mpirun_job *job, int rank, int local_rank);
/* Frees the plan. */
void mpirun_bind_free(struct mpirun_bind *b);

/* ---- hosts and the map (hosts.c) -------------------------------------------------------------- */

struct mpirun_host {
    char *name;
    int slots;            /* ranks it takes before it counts as oversubscribed */
    int max_slots;        /* hard limit even with --oversubscribe; 0: none */
};

struct mpirun_hostlist {
    struct mpirun_host *hosts;
    int n;
};

enum mpirun_map_policy { MPIRUN_MAP_SLOT, MPIRUN_MAP_NODE, MPIRUN_MAP_PPR };

struct mpirun_mapping {
    enum mpirun_map_policy policy;
    int ppr;              /* ranks per node for MPIRUN_MAP_PPR */
    int oversubscribe;
};

/* Where every rank runs. Nodes are the hosts that received at least one rank, in host order. */
struct mpirun_map {
    int np;
    int nnodes;
    char **node_name;     /* [nnodes] */
    int *node_nranks;     /* [nnodes] */
    int *node_of;         /* [np]: node index of each rank */
    int *local_rank;      /* [np]: its index among the ranks of its node, in rank order */
};

#define MPIRUN_MAX_RANKS 65536
#define MPIRUN_MAX_HOSTS 65536

/* Adds "h1[:N],h2[:N],..." to hl (a repeated host adds its slots). 0, or -1 with err set. */
int mpirun_hosts_parse_list(struct mpirun_hostlist *hl, const char *spec, char *err, size_t errlen);
/* Adds the hosts of a hostfile: lines "host", "host:N" (MPICH) or "host slots=N [max_slots=M]"
 * (Open MPI), '#' comments, blank lines. 0, or -1 with err naming the file and line. */
int mpirun_hosts_parse_file(struct mpirun_hostlist *hl, const char *path, char *err,
                            size_t errlen);
void mpirun_hosts_free(struct mpirun_hostlist *hl);
/* Parses a --map-by value: slot, node, ppr:N:node. 0, or -1 with err set. */
int mpirun_mapping_parse(struct mpirun_mapping *m, const char *spec, char *err, size_t errlen);
/* The ranks a mapping places on hl when -n is not given (every slot, or N per host for ppr). */
int mpirun_map_default_np(const struct mpirun_hostlist *hl, const struct mpirun_mapping *m);
/* Places np ranks on hl. 0, or -1 with err set (too few slots, ...). */
int mpirun_map_compute(const struct mpirun_hostlist *hl, const struct mpirun_mapping *m, int np,
                       struct mpirun_map *map, char *err, size_t errlen);
/* One node holding every rank: the single-machine job. */
int mpirun_map_single(struct mpirun_map *map, const char *hostname, int np);
void mpirun_map_free(struct mpirun_map *map);
/* Whether name is this machine ("localhost", its host name, or that name up to the first dot). */
int mpirun_host_is_local(const char *name);

/* ---- the job ---------------------------------------------------------------------------------- */

/* One output stream of a rank (stdout or stderr), forwarded line by line. */
struct mpirun_stream {
    struct mpirun_job *job;
    struct mpirun_rank *rank;
    int fd;               /* read end of the pipe, -1 once closed */
    int dest_fd;          /* 1 or 2 */
    struct event *ev;
    char *buf;            /* bytes after the last newline seen */
    size_t len, cap;
};

struct mpirun_rank {
    struct mpirun_job *job;
    int rank;
    pid_t pid;            /* 0 before fork; for a rank of another node, as that node reported it */
    int exited;           /* reaped (or reported by its node, or its node was lost) */
    int status;           /* wait status, once exited */
    int connected;        /* called PMIx_Init */
    int finalized;        /* called PMIx_Finalize */
    int aborted;          /* called PMIx_Abort */
    int verdict_pending;  /* exited unfinalized; waiting whether a finalize note was on its way */
    int others_running;   /* other ranks were running when it exited */
    struct mpirun_stream out, err;
};

struct mpirun_tree;

struct mpirun_job {
    /* options */
    int np;
    int tag_output;
    char *path;           /* resolved executable */
    char **argv;          /* program and its arguments */
    char **bind_args;     /* the binding options as given, for the daemons (NULL: none) */
    char **env;           /* environment for the ranks, before PMIx adds its part */

    /* where the ranks run */
    struct mpirun_map map;
    int multi;            /* --host/--hostfile: the tree, and hosts in messages and tags */
    int my_node;          /* node whose ranks this process forks, -1 for none */
    int vertex;           /* place in the tree: 0 the head, > 0 a daemon */

    /* state (main thread only) */
    struct event_base *base;
    struct mpirun_rank *ranks;   /* [np]: every rank of the job, local or not */
    int nlocal;           /* ranks of my_node */
    int nrunning;         /* ranks not yet known to have exited: local ones once forked; at the
                           * head, also every rank of the other nodes */
    int npending;         /* ranks with verdict_pending */
    int ending;           /* we are killing the ranks: their deaths are expected */
    int exit_code;        /* mpirun's exit status; the first failure sets it */
    int have_exit_code;
    struct event *kill_timer;

    /* stdin forwarding to rank 0 (iof.c): at the head from its stdin when that is a terminal or
     * rank 0 is on another node; at rank 0's daemon from the head's messages */
    int stdin_fd;         /* rank 0's end is handed over; ours is the write end, or -1 */
    struct event *stdin_read_ev, *stdin_write_ev;
    char stdin_buf[65536];
    size_t stdin_len, stdin_off;
    int stdin_remote;     /* head: rank 0 is elsewhere, stdin goes out as messages */
    int stdin_waiting;    /* head: a chunk is on its way and not yet acknowledged */
    int stdin_done;       /* head: end of input sent, or rank 0 stopped reading */

    /* PMIx server (server.c) */
    char nspace[256];     /* a pmix_nspace_t (PMIX_MAX_NSLEN + 1), which PMIx reads whole */
    char tmpdir[4096];
    char hostname[256];   /* this node's name: the host name, or its name in the host list */
    int server_up;

    struct mpirun_tree *tree;    /* tree.h; NULL on one machine */
    struct mpirun_bind bind;     /* bind.c */
};

/* "-foo", "--foo" and "--foo=..." all name the option foo (main.c, bind.c, slurm.c). */
static inline int mpirun_is_opt(const char *arg, const char *name)
{
    size_t len = strlen(name);

    if (arg[0] != '-')
        return 0;
    arg += arg[1] == '-' ? 2 : 1;
    return strncmp(arg, name, len) == 0 && (arg[len] == '\0' || arg[len] == '=');
}

/* ---- server.c --------------------------------------------------------------------------------- */

int mpirun_server_start(struct mpirun_job *job);
int mpirun_server_setup_rank(struct mpirun_job *job, int rank, char ***env);
void mpirun_server_stop(struct mpirun_job *job);

enum mpirun_note_kind {
    MPIRUN_NOTE_CONNECTED, MPIRUN_NOTE_FINALIZED, MPIRUN_NOTE_ABORT, MPIRUN_NOTE_FENCE,
};
struct mpirun_note {
    struct mpirun_note *next;
    enum mpirun_note_kind kind;
    int rank;
    int code;             /* abort */
    void *fence_cbfunc;   /* fence: libpmix's pmix_modex_cbfunc_t and its argument */
    void *fence_cbdata;
    size_t len;           /* bytes in data: the abort message (with its NUL) or the fence data */
    char data[];
};
/* The read end of the pipe the PMIx thread writes a byte to after posting a note. */
int mpirun_server_wake_fd(void);
/* Takes the oldest note (NULL when none); the caller frees it. */
struct mpirun_note *mpirun_server_take_note(void);
/* Ends a fence of this node's ranks with the whole job's data (the concatenated contributions of
 * every node); takes ownership of data (malloc'ed). */
void mpirun_server_fence_done(struct mpirun_note *fence, char *data, size_t len);

/* ---- launch.c --------------------------------------------------------------------------------- */

int mpirun_launch(struct mpirun_job *job);
/* Applies every pending note of the PMIx thread (also called before judging a child's exit, so
 * that a rank's finalize or abort is known before its exit is). */
void mpirun_handle_notes(struct mpirun_job *job);
/* What the tree hands up to launch.c and iof.c (main.c and daemon.c give it to the tree). */
extern const struct mpirun_tree_upcalls mpirun_launch_upcalls;
/* "pid 1234" or, across machines, "pid 1234 on node7": where a rank ran, for messages. */
const char *mpirun_rank_where(struct mpirun_job *job, int rank, char *buf, size_t len);

#define MPIRUN_FAIL_GRACE_S   0.5  /* MPI_Abort and rank failures: every rank gone within a second */
#define MPIRUN_SIGNAL_GRACE_S 2.0  /* SIGINT/SIGTERM: time for the ranks to act on the signal */

/* ---- iof.c ------------------------------------------------------------------------------------ */

int mpirun_iof_stream_open(struct mpirun_job *job, struct mpirun_stream *s, int fd, int dest_fd);
/* Reads what is left in every pipe without waiting and flushes partial lines (job over). */
void mpirun_iof_drain_all(struct mpirun_job *job);
/* Writes output of rank to our stdout (dest_fd 1) or stderr (2), tagged if asked; end_line: the
 * piece ends a line that had no newline. */
void mpirun_iof_write(struct mpirun_job *job, int rank, int dest_fd, const char *p, size_t len,
                      int end_line);
/* Stops (0) or resumes (1) reading the ranks' pipes: a daemon whose parent link is congested. */
void mpirun_iof_pause(struct mpirun_job *job, int resume);
int mpirun_iof_stdin_start(struct mpirun_job *job, int write_fd);
void mpirun_iof_close_stdin(struct mpirun_job *job);
/* Head: rank 0 is on another node; our stdin goes to it as messages. */
int mpirun_iof_stdin_remote_start(struct mpirun_job *job);
/* Head: rank 0's node wrote the last chunk (more = 1) or will take no more (more = 0). */
void mpirun_iof_stdin_ack(struct mpirun_job *job, int more);
/* Rank 0's daemon: bytes from the head for rank 0 (len 0: end of input). */
void mpirun_iof_stdin_data(struct mpirun_job *job, const char *p, size_t len);

/* ---- the launch tree, tree_*.c (across machines; a no-op or absent on one machine) ----------- */

struct mpirun_tree_opts {
    char **agent;         /* launch agent words: host and daemon command follow */
    int fanout;
    int timeout_s;        /* for a daemon to connect back */
    const char *address;  /* the address daemons connect back to; NULL or "": every one of ours */
};

/*
 * The one way the tree calls up. The tree is a transport below launch.c and iof.c: they call it
 * by name (the functions below), and what it learns from other vertices, or from the state of
 * its own links, it hands up through this table alone, never by naming a function of theirs.
 * launch.c fills it (mpirun_launch_upcalls) and main.c or daemon.c gives it to the tree as the
 * tree starts, before anything can come up: a child lost while the agents start calls up.
 */
struct mpirun_tree_upcalls {
    /* launch.c */
    /* First failure wins the exit code; then every rank still running is terminated, on every
     * node (a lost subtree at the head). */
    void (*end_job)(struct mpirun_job *job, int exit_code, int signo, double grace_s);
    /* Only this node's ranks: what END from the head asks of a daemon, and SIGKILL at once when
     * its parent is gone. */
    void (*end_local)(struct mpirun_job *job, int signo, double grace_s);
    /* SIGNAL from the head: signo to this node's ranks. */
    void (*signal_local)(struct mpirun_job *job, int signo);
    /* Head: a rank of another node exited, as its daemon reported. */
    void (*remote_exit)(struct mpirun_job *job, int rank, pid_t pid, int status, int connected,
                        int finalized, int aborted);
    /* Head: a rank of another node called MPI_Abort. */
    void (*remote_abort)(struct mpirun_job *job, int rank, pid_t pid, int code, const char *msg);
    /* Head: the ranks of a lost node: counted as gone, without a verdict of their own. */
    void (*ranks_lost)(struct mpirun_job *job, int node);
    /* Stops the event loop when there is nothing left to wait for. */
    void (*maybe_done)(struct mpirun_job *job);

    /* iof.c */
    /* Head: output of a rank of another node, written as our own (mpirun_iof_write). */
    void (*iof_write)(struct mpirun_job *job, int rank, int dest_fd, const char *p, size_t len,
                      int end_line);
    /* Daemon: its parent link is congested (resume 0) or drained (1) (mpirun_iof_pause). */
    void (*iof_pause)(struct mpirun_job *job, int resume);
    /* Head: rank 0's node acknowledged a chunk of stdin (mpirun_iof_stdin_ack). */
    void (*iof_stdin_ack)(struct mpirun_job *job, int more);
    /* Rank 0's daemon: stdin from the head for rank 0 (mpirun_iof_stdin_data). */
    void (*iof_stdin_data)(struct mpirun_job *job, const char *p, size_t len);
};

/* Head: listens, starts its direct children through the agent (hl and m: what every daemon
 * computes the map from). up: how the tree calls up, for as long as it lives. */
int mpirun_tree_head_start(struct mpirun_job *job, const struct mpirun_tree_opts *opts,
                           const struct mpirun_hostlist *hl, const struct mpirun_mapping *m,
                           const struct mpirun_tree_upcalls *up);
/* Daemon (daemon.c): joins the tree through the connection fd to its parent, over which the job
 * description d came (launch_frame: that LAUNCH message, for our own children). */
int mpirun_tree_daemon_start(struct mpirun_job *job, int fd, struct mpirun_launch_desc *d,
                             const char *launch_frame, size_t launch_len,
                             const struct mpirun_tree_upcalls *up);
/* Head, after the event loop: every daemon told to finish, waited for, agents reaped. */
void mpirun_tree_finish(struct mpirun_job *job);
/* Daemon main (daemon.c): argv after --umpi-daemon. Returns the exit status. */
int mpirun_daemon_main(int argc, char **argv);
/* What the rest of mpirun tells the tree. */
void mpirun_tree_end(struct mpirun_job *job, int signo, double grace_s);
void mpirun_tree_signal(struct mpirun_job *job, int signo);
void mpirun_tree_fence(struct mpirun_job *job, struct mpirun_note *fence);
/* Daemon: a local rank's exit, settled (its finalize note seen or waited for). */
void mpirun_tree_rank_exit(struct mpirun_job *job, struct mpirun_rank *rk);
void mpirun_tree_rank_abort(struct mpirun_job *job, struct mpirun_rank *rk, int code,
                            const char *msg);
void mpirun_tree_iof(struct mpirun_job *job, int rank, int dest_fd, const char *p, size_t len,
                     int end_line);
void mpirun_tree_stdin(struct mpirun_job *job, const char *p, size_t len);
void mpirun_tree_stdin_ack(struct mpirun_job *job, int more);
/* Daemon: a failure of its own (fork, chdir, ...), reported to the head, which ends the job. */
void mpirun_tree_error(struct mpirun_job *job, int code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* Daemon: stops the event loop once the head said the job is over and nothing is left to do. */
void mpirun_tree_check_done(struct mpirun_job *job);
/* Daemon: whether that happened, or the parent is gone. */
int mpirun_tree_done(struct mpirun_job *job);
/* A child process exited: 1 if it was a launch agent (the tree took note), 0 otherwise. */
int mpirun_tree_child_exited(struct mpirun_job *job, pid_t pid, int status);

/* slurm.c: inside a Slurm allocation, replaces mpirun by srun with the translated options.
 * Returns -1 when mpirun launches the job itself (no allocation, --launcher local, ...), with
 * --launcher and its value taken out of argv; otherwise mpirun's exit status (a bad option, or
 * srun could not be run). */
int mpirun_slurm_handover(int *argc, char **argv);

#endif
