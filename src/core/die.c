/*
 * A fatal error: the message with the rank, then the job ends through the process manager (the
 * launcher prints it and ends every rank). The process-manager client stands above core (it logs
 * through log.c), so core reaches it through umpi_abort_job, which MPI_Init sets; before that, or
 * without one, the message goes to stderr and this process alone exits.
 */
#include "core/umpi.h"

#include <stdio.h>
#include <unistd.h>

void (*umpi_abort_job)(int exit_code, const char *msg);

void umpi_die(int exit_code, const char *fmt, ...)
{
    char line[1024];
    int n = snprintf(line, sizeof(line), "umpi: rank %d: ", umpi_global.rank);
    if (n < 0 || (size_t) n >= sizeof(line))
        n = 0;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line + n, sizeof(line) - (size_t) n, fmt, ap);
    va_end(ap);
    /* Whatever the program printed before dying is worth seeing. */
    fflush(stdout);
    /* The process manager prints the message (or hands it to the launcher) and ends the job. */
    if (umpi_abort_job != NULL)
        umpi_abort_job(exit_code, line);
    fprintf(stderr, "%s\n", line);
    fflush(stderr);
    _exit(exit_code);
}
