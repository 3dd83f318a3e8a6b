/*
 * A fatal error: the message with the rank, then the job ends through the process manager (the
 * launcher prints it and ends every rank). Apart from log.c, which the process-manager clients
 * themselves use for their messages, so that no file depends on one that depends on it.
 */
#include "core/umpi.h"
#include "pmi/umpi_pmi.h"

#include <stdio.h>

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
    /* The PMI layer prints the message (or hands it to the launcher) and ends the job. */
    umpi_pmi_abort(exit_code, line);
}
