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
 */
#ifndef MPIRUN_H
#define MPIRUN_H

#include <stddef.h>
#include <sys/types.h>

struct event_base;
struct event;

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

/* slurm.c: inside a Slurm allocation, replaces mpirun by srun with the translated options.
 * Returns -1 when mpirun launches the job itself (no allocation, --launcher local, ...), with
 * --launcher and its value taken out of argv; otherwise mpirun's exit status (a bad option, or
 * srun could not be run). */
int mpirun_slurm_handover(int *argc, char **argv);

void mpirun_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#endif
