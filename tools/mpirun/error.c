/*
 * mpirun's messages to the user: one line on stderr, "NAME: what happened", where NAME says which
 * process of the job wrote it (argv[0]'s basename at the head, set by main.c; "mpirun (daemon on
 * HOST)" in a daemon, set by daemon.c).
 *
 * Every part of mpirun reports through here, so this file calls none of them: the parts depend on
 * it, never the other way round.
 */
#include "mpirun.h"

#include <stdarg.h>
#include <stdio.h>

#include "core/umpi.h"   /* umpi_log's declaration, which the definition below must match */

const char *mpirun_name = "mpirun";

void mpirun_error(const char *fmt, ...)
{
    va_list ap;

    fprintf(stderr, "%s: ", mpirun_name);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
}

/* src/core/knobs.c, compiled into mpirun for the launcher's knobs, reports a malformed value
 * through this (libmpi's own writes "umpi[rank] ..."). */
void umpi_log(const char *what, const char *fmt, ...)
{
    va_list ap;

    fprintf(stderr, "%s %s: ", mpirun_name, what);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
}
