/*
 * Logging, internal status messages and small utilities (fatal exits: die.c).
 *
 * Every line goes to stderr with one write(2), so that lines of different threads (and of
 * different ranks, which mpirun forwards line by line) never interleave mid-line.
 */
#include "core/umpi.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* One line of log output; longer messages are cut, never split. */
#define UMPI__LINE_MAX 1024

static void umpi__write_line(const char *buf, size_t len)
{
    while (len > 0) {
        ssize_t n = write(STDERR_FILENO, buf, len);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return; /* stderr is gone: nothing sensible left to do */
        buf += n;
        len -= (size_t) n;
    }
}

/* Appends "\n" after a possibly truncated vsnprintf result; returns the line length. */
static size_t umpi__finish_line(char *buf, size_t cap, int n)
{
    size_t len = n < 0 ? 0 : (size_t) n;
    if (len > cap - 2)
        len = cap - 2;
    buf[len++] = '\n';
    buf[len] = '\0';
    return len;
}

void umpi_log(const char *what, const char *fmt, ...)
{
    char line[UMPI__LINE_MAX];
    int n = snprintf(line, sizeof(line), "umpi[%d] %s: ", umpi_global.rank, what);
    if (n < 0 || (size_t) n >= sizeof(line))
        n = 0;
    va_list ap;
    va_start(ap, fmt);
    int m = vsnprintf(line + n, sizeof(line) - (size_t) n, fmt, ap);
    va_end(ap);
    size_t len = umpi__finish_line(line, sizeof(line), m < 0 ? n : n + m);
    umpi__write_line(line, len);
}

/* ---- internal status ---------------------------------------------------------------------------- */

const char *umpi_status_string(umpi_status_t st)
{
    switch (st) {
    case UMPI_OK: return "success";
    case UMPI_ERR_NOMEM: return "out of memory";
    case UMPI_ERR_TRANSPORT: return "transport (UCX) error";
    case UMPI_ERR_PMI: return "process manager error";
    case UMPI_ERR_TRUNCATE: return "message truncated";
    case UMPI_ERR_CANCELED: return "operation cancelled";
    case UMPI_ERR_INTERN: return "internal error";
    case UMPI_ERR_NOT_FOUND: return "not found";
    case UMPI_ERR_OTHER: return "other error";
    case UMPI_ERR_UNREACHABLE: return "peer unreachable";
    }
    return "unknown status";
}

/* The cause belongs to the thread that hit it: MPI_THREAD_MULTIPLE callers must not see each
 * other's causes. */
static _Thread_local char umpi__status_msg[512];

void umpi_status_msg(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(umpi__status_msg, sizeof(umpi__status_msg), fmt, ap);
    va_end(ap);
}

const char *umpi_status_last_msg(void)
{
    return umpi__status_msg;
}

/* ---- utilities ---------------------------------------------------------------------------------- */

double umpi_wtime(void)
{
    struct timespec ts;
    /* MONOTONIC: MPI_Wtime must never jump back when NTP adjusts the wall clock. */
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double) ts.tv_sec + (double) ts.tv_nsec * 1e-9;
}

size_t umpi_strlcpy(char *dst, const char *src, size_t size)
{
    size_t len = strlen(src);
    if (size > 0) {
        size_t n = len < size - 1 ? len : size - 1;
        memcpy(dst, src, n);
        dst[n] = '\0';
    }
    return len;
}
