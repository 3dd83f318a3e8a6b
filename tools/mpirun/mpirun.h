/*
 * mpirun: the embedded single-machine launcher (shared/DESIGN.md, "Launch").
 *
 * One process, two threads:
 *   main thread   libevent loop: rank stdout/stderr pipes, stdin to rank 0, SIGCHLD, SIGINT/TERM,
 *                 timers, and the notes the PMIx thread leaves (below). It alone owns the job state.
 *   PMIx thread   libpmix's own progress thread calls our server module (connected, finalized,
 *                 abort, fence). Those upcalls only answer PMIx and post a note for the main thread.
 *
 *   main.c     options, then start -> run -> stop
 *   server.c   PMIx server: init, namespace and client registration, the module upcalls, notes
 *   launch.c   fork/exec of the ranks, signals, child exit, ending the job
 *   iof.c      stdout/stderr forwarding line by line (--tag-output) and stdin to rank 0
 *   bind.c     process binding (hwloc): --bind-to, --map-by, --report-bindings, --cpu-set
 */
#ifndef MPIRUN_H
#define MPIRUN_H

#include <stddef.h>
#include <stdio.h>
#include <sys/types.h>

struct mpirun_job;
struct event_base;
struct event;
struct hwloc_topology;
struct hwloc_bitmap_s;

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
    pid_t pid;            /* 0 before fork */
    int exited;           /* reaped */
    int status;           /* wait status, once exited */
    int connected;        /* called PMIx_Init */
    int finalized;        /* called PMIx_Finalize */
    int aborted;          /* called PMIx_Abort */
    int verdict_pending;  /* exited unfinalized; waiting whether a finalize note was on its way */
    int others_running;   /* other ranks were running when it exited */
    struct mpirun_stream out, err;
};

struct mpirun_job {
    /* options */
    int np;
    int tag_output;
    char *path;           /* resolved executable */
    char **argv;          /* program and its arguments */
    char **env;           /* environment for the ranks, before PMIx adds its part */

    /* state (main thread only) */
    struct event_base *base;
    struct mpirun_rank *ranks;
    int nrunning;         /* forked and not yet reaped */
    int npending;         /* ranks with verdict_pending */
    int ending;           /* we are killing the ranks: their deaths are expected */
    int exit_code;        /* mpirun's exit status; the first failure sets it */
    int have_exit_code;
    struct event *kill_timer;

    /* stdin forwarding to rank 0 when mpirun's stdin is a terminal (iof.c) */
    int stdin_fd;         /* rank 0's end is handed over; ours is the write end, or -1 */
    struct event *stdin_read_ev, *stdin_write_ev;
    char stdin_buf[4096];
    size_t stdin_len, stdin_off;

    /* PMIx server (server.c) */
    char nspace[256];     /* a pmix_nspace_t (PMIX_MAX_NSLEN + 1), which PMIx reads whole */
    char tmpdir[4096];
    char hostname[256];

    struct mpirun_bind bind;   /* bind.c */
};

extern const char *mpirun_name;   /* argv[0]'s basename, for messages */

/* server.c */
int mpirun_server_start(struct mpirun_job *job);
int mpirun_server_setup_rank(struct mpirun_job *job, int rank, char ***env);
void mpirun_server_stop(struct mpirun_job *job);

enum mpirun_note_kind { MPIRUN_NOTE_CONNECTED, MPIRUN_NOTE_FINALIZED, MPIRUN_NOTE_ABORT };
struct mpirun_note {
    struct mpirun_note *next;
    enum mpirun_note_kind kind;
    int rank;
    int code;             /* abort */
    char msg[];           /* abort */
};
/* The read end of the pipe the PMIx thread writes a byte to after posting a note. */
int mpirun_server_wake_fd(void);
/* Takes the oldest note (NULL when none); the caller frees it. */
struct mpirun_note *mpirun_server_take_note(void);

/* launch.c */
int mpirun_launch(struct mpirun_job *job);
/* Applies every pending note of the PMIx thread (also called before judging a child's exit, so
 * that a rank's finalize or abort is known before its exit is). */
void mpirun_handle_notes(struct mpirun_job *job);
/* First failure wins the exit code; then every rank still running is terminated. */
void mpirun_end_job(struct mpirun_job *job, int exit_code, int signo, double grace_s);

/* iof.c */
int mpirun_iof_stream_open(struct mpirun_job *job, struct mpirun_stream *s, int fd, int dest_fd);
/* Reads what is left in every pipe without waiting and flushes partial lines (job over). */
void mpirun_iof_drain_all(struct mpirun_job *job);
int mpirun_iof_stdin_start(struct mpirun_job *job, int write_fd);
void mpirun_iof_close_stdin(struct mpirun_job *job);

void mpirun_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#endif
