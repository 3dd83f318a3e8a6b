/*
 * The asynchronous progress thread (UMPI_ASYNC_PROGRESS=1): passes of the one progress engine
 * while the program computes outside MPI, so that what other processes ask of this one (the
 * one-sided requests of src/rma, applied by its progress hook; UCX's own protocol messages)
 * is served without waiting for this process's next MPI call. MPI 4.1 (sec. 12.7) requires it for
 * passive-target communication.
 *
 *   loop: trylock the big lock -> one umpi_progress() pass -> unlock -> sleep (backoff) -> loop
 *
 * The thread shares the engine exactly as another thread of an MPI_THREAD_MULTIPLE program would:
 * MPI_Init sets umpi_global.is_multi whatever level the program asked for (so every call takes
 * the big lock) and creates the UCX worker SERIALIZED. It only tries the lock: when a call of the
 * program holds it, that call is in MPI and polls the engine itself, and a thread that queued on
 * the mutex would make every unlock of that call a system call (a futex wake).
 *
 * Backoff: after a pass that found work the thread sleeps UMPI__SLEEP_MIN_NS, and each empty pass
 * doubles the sleep up to UMPI_ASYNC_PROGRESS_SLEEP microseconds, so a burst of requests (lock,
 * accumulates, unlock) is served at the short interval and an idle process wakes rarely. The
 * thread asks for 1 ns of timer slack: Linux otherwise rounds a normal thread's sleeps up by
 * 50 us. Measured figures: bench/NOTES.md (2026-11-28, asynchronous progress).
 *
 * Signals stay with the program's threads: the thread blocks them all.
 */
#include "core/umpi_progress.h"

#include <errno.h>
#include <signal.h>
#include <stdatomic.h>
#include <string.h>
#include <time.h>
#ifdef __linux__
#include <sys/prctl.h>
#endif

#define UMPI__SLEEP_MIN_NS 1000L

static pthread_t umpi__thread;
static int umpi__running;
static atomic_int umpi__stop;

static void umpi__sleep_ns(long ns)
{
    struct timespec ts = {ns / 1000000000L, ns % 1000000000L};
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
        ;
}

static void *umpi__progress_main(void *arg)
{
    long max_ns = (long) umpi_config.async_progress_sleep * 1000L, sleep_ns = UMPI__SLEEP_MIN_NS;
    (void) arg;
    if (max_ns < UMPI__SLEEP_MIN_NS)
        max_ns = UMPI__SLEEP_MIN_NS;
#ifdef PR_SET_TIMERSLACK
    prctl(PR_SET_TIMERSLACK, 1UL, 0UL, 0UL, 0UL);
#endif
    while (!atomic_load_explicit(&umpi__stop, memory_order_relaxed)) {
        if (pthread_mutex_trylock(&umpi_big_lock) == 0) {
            unsigned n = umpi_progress();
            pthread_mutex_unlock(&umpi_big_lock);
            if (n != 0)
                sleep_ns = UMPI__SLEEP_MIN_NS;
            else if ((sleep_ns *= 2) > max_ns)
                sleep_ns = max_ns;
        }
        umpi__sleep_ns(sleep_ns);
    }
    return NULL;
}

umpi_status_t umpi_progress_thread_start(void)
{
    sigset_t all, old;
    int rc;
    atomic_store(&umpi__stop, 0);
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old); /* the thread inherits the mask it is created with */
    rc = pthread_create(&umpi__thread, NULL, umpi__progress_main, NULL);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    if (rc != 0) {
        umpi_status_msg("pthread_create of the progress thread: %s", strerror(rc));
        return UMPI_ERR_OTHER;
    }
    umpi__running = 1;
    umpi_debug(1, "asynchronous progress thread started (sleeps %d ns to %d us)", (int) UMPI__SLEEP_MIN_NS,
               umpi_config.async_progress_sleep);
    return UMPI_OK;
}

void umpi_progress_thread_stop(void)
{
    if (!umpi__running)
        return;
    atomic_store(&umpi__stop, 1);
    pthread_join(umpi__thread, NULL);
    umpi__running = 0;
}
