/*
 * umpi internal header: what every layer of the library shares.
 *
 * Layers and prefixes (shared/STYLE.md): src/mpi exports MPI_/PMPI_ (generated), src/core umpi_,
 * src/pt2pt umpi_p2p_, src/netmod/ucx umpi_ucx_, src/pmi umpi_pmi_, src/cuda umpi_cuda_;
 * umpi__ for file-local helpers.
 */
#ifndef UMPI_H
#define UMPI_H

#include <mpi.h>
#include <stddef.h>
#include <stdint.h>
#include <stdarg.h>
#include <pthread.h>

#define umpi_likely(x)   __builtin_expect(!!(x), 1)
#define umpi_unlikely(x) __builtin_expect(!!(x), 0)
#define UMPI_EXPORT      __attribute__((visibility("default")))
#define UMPI_PRINTF(f, a) __attribute__((format(printf, f, a)))
#define UMPI_ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

/*
 * Internal status: 0 or a negative code. Layers below the MPI semantics (netmod, pmi, cuda) return
 * it; each translates its library's errors once, at its boundary, and records the cause with
 * umpi_status_msg() so that the MPI layer can put it into the MPI error message.
 */
typedef enum {
    UMPI_OK = 0,
    UMPI_ERR_NOMEM = -1,     /* out of memory */
    UMPI_ERR_TRANSPORT = -2, /* UCX failed; cause in the message */
    UMPI_ERR_PMI = -3,       /* process manager failed; cause in the message */
    UMPI_ERR_TRUNCATE = -4,  /* message longer than the receive buffer */
    UMPI_ERR_CANCELED = -5,  /* operation was cancelled */
    UMPI_ERR_INTERN = -6,    /* internal invariant broken */
    UMPI_ERR_NOT_FOUND = -7, /* key or object not found */
    UMPI_ERR_OTHER = -8,
    UMPI_ERR_UNREACHABLE = -9, /* a peer cannot be reached (no address for it); cause in the message */
} umpi_status_t;

const char *umpi_status_string(umpi_status_t st);

/* Records a human-readable cause for the status about to be returned (thread-local, last one wins). */
void umpi_status_msg(const char *fmt, ...) UMPI_PRINTF(1, 2);
const char *umpi_status_last_msg(void);

/* ---- process-wide state ------------------------------------------------------------------------ */

typedef enum {
    UMPI_STATE_PRE_INIT = 0,
    UMPI_STATE_INITIALIZED = 1,
    UMPI_STATE_FINALIZED = 2,
} umpi_state_t;

struct umpi_global {
    volatile int state;      /* umpi_state_t */
    int thread_level;        /* provided MPI_THREAD_* level */
    int is_multi;            /* thread_level == MPI_THREAD_MULTIPLE: the big lock is taken */
    pthread_t main_thread;   /* the thread that called MPI_Init*: MPI_Is_thread_main */
    int rank;                /* in MPI_COMM_WORLD */
    int size;
    int appnum;              /* MPI_APPNUM, or -1 */
    int universe_size;       /* MPI_UNIVERSE_SIZE, or -1 */
    int singleton;           /* started without a launcher */
    char hostname[MPI_MAX_PROCESSOR_NAME];
};
extern struct umpi_global umpi_global;

static inline int umpi_is_initialized(void)
{
    return umpi_global.state == UMPI_STATE_INITIALIZED;
}

/*
 * The big lock. MPI_THREAD_MULTIPLE serialises the progress engine and the UCX worker with one
 * mutex (shared/DESIGN.md: "a lock around the engine first; finer later, measured"). Below
 * THREAD_MULTIPLE the lock is not taken at all.
 */
extern pthread_mutex_t umpi_big_lock;
static inline void umpi_lock(void)
{
    if (umpi_unlikely(umpi_global.is_multi))
        pthread_mutex_lock(&umpi_big_lock);
}
static inline void umpi_unlock(void)
{
    if (umpi_unlikely(umpi_global.is_multi))
        pthread_mutex_unlock(&umpi_big_lock);
}

/* ---- logging ----------------------------------------------------------------------------------- */

/* UMPI_DEBUG=1..3: 1 protocol/algorithm choices and fallbacks, 2 object life cycles, 3 every message */
#define umpi_debug(level, ...)                                                                    \
    do {                                                                                          \
        if (umpi_unlikely(umpi_config.debug >= (level)))                                          \
            umpi_log("debug", __VA_ARGS__);                                                       \
    } while (0)
void umpi_log(const char *what, const char *fmt, ...) UMPI_PRINTF(2, 3);
/* Prints "umpi: rank R: <message>" to stderr and ends the whole job with the given exit code. */
void umpi_die(int exit_code, const char *fmt, ...) UMPI_PRINTF(2, 3) __attribute__((noreturn));
/* How umpi_die ends the job: the process manager's abort (set at MPI_Init by src/api/init.c; it
 * does not return). NULL: this process alone exits. */
extern void (*umpi_abort_job)(int exit_code, const char *msg);

/* ---- knobs ------------------------------------------------------------------------------------- */

#include "core/umpi_knobs.h"

/* ---- small utilities --------------------------------------------------------------------------- */

double umpi_wtime(void);
size_t umpi_strlcpy(char *dst, const char *src, size_t size);

#endif /* UMPI_H */
