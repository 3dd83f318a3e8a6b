/*
 * mpirun / mpiexec: command line, then start the PMIx server, launch, wait, clean up.
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif
#include "mpirun.h"

#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <event2/event.h>
#include <pmix.h>
#include <pmix_version.h>

#ifndef PACKAGE_VERSION
#define PACKAGE_VERSION "unknown"
#endif

#define MAX_RANKS 65536

extern char **environ;
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

static void usage(FILE *f)
{
    fprintf(f,
        "Usage: %s [options] [-n N] program [arguments...]\n"
        "\n"
        "Starts N copies of program (ranks 0..N-1 of one MPI job) on this machine and hosts the\n"
        "PMIx server through which they find each other.\n"
        "\n"
        "Options:\n"
        "  -n N, -np N        number of ranks (default 1)\n"
        "  --tag-output, -l   prefix every line of output with \"[rank] \", e.g. \"[3] hello\"\n"
        "  -x VAR[=value]     set VAR in the ranks' environment (VAR alone: pass mpirun's value;\n"
        "                     the ranks inherit mpirun's whole environment anyway)\n"
        "  -genv VAR value    same as -x VAR=value (MPICH spelling)\n"
        "  --oversubscribe    accepted and ignored: any number of ranks may share the cores\n"
        "  -h, --help         this text\n"
        "  -V, --version      version of mpirun and of the PMIx library\n"
        "  --launcher L       auto (default), local (start the ranks here) or slurm (hand the job\n"
        "                     to srun --mpi=pmix); auto is slurm inside a Slurm allocation\n"
        "                     (SLURM_JOB_ID set, not within a job step); UMPI_LAUNCHER sets the default\n"
        "  --                 end of options\n"
        "\n"
        "Behaviour:\n"
        "  Output of the ranks is passed on line by line (stdout to stdout, stderr to stderr).\n"
        "  stdin of mpirun goes to rank 0; the other ranks read /dev/null.\n"
        "  SIGINT, SIGTERM, SIGHUP and SIGQUIT are passed to every rank, which get SIGKILL 2 s later;\n"
        "  SIGUSR1 and SIGUSR2 are passed on. A second SIGINT kills the ranks at once.\n"
        "  The job ends at the first failure: a rank killed by a signal, a rank exiting nonzero\n"
        "  before MPI_Finalize, a rank exiting without MPI_Finalize while others run, or\n"
        "  MPI_Abort. The other ranks are then terminated.\n"
        "\n"
        "Exit status: the first nonzero exit status of a rank; the code given to MPI_Abort;\n"
        "  128+N if a rank was killed by signal N or mpirun received signal N; 127 if program\n"
        "  cannot be run; 1 for a usage error; 0 if every rank exited with 0.\n"
        "\n"
        "Other machines (--host, --hostfile, -H, --map-by, --bind-to, -ppn, ...) are not supported\n"
        "yet: multi-node launch comes with Slurm support (srun --mpi=pmix).\n",
        mpirun_name);
}

/* Options that belong to a multi-node launcher; told apart from unknown ones on purpose. */
static const char *const multinode_opts[] = {
    "host", "hostfile", "H", "f", "machinefile", "machine", "map-by", "bind-to", "rank-by",
    "ppn", "npernode", "N", "hosts", "default-hostfile", "launcher", "rankfile", "cpus-per-proc",
    "cpus-per-rank", "binding", "bind-to-core", "bind-to-socket", "npersocket", NULL,
};

/* "-foo", "--foo" and "--foo=..." all name foo. */
static int is_opt(const char *arg, const char *name)
{
    size_t len = strlen(name);

    if (arg[0] != '-')
        return 0;
    arg += arg[1] == '-' ? 2 : 1;
    return strncmp(arg, name, len) == 0 && (arg[len] == '\0' || arg[len] == '=');
}

static int parse_count(const char *s, int *out)
{
    char *end;
    long v;

    errno = 0;
    v = strtol(s, &end, 10);
    if (errno != 0 || end == s || *end != '\0' || v < 1 || v > MAX_RANKS)
        return -1;
    *out = (int)v;
    return 0;
}

/* Sets or replaces NAME=value in a NULL-terminated environment we own. */
static int env_set(char ***envp, const char *assignment)
{
    size_t nlen = strcspn(assignment, "=");
    char **env = *envp, *copy = strdup(assignment);
    int n;

    if (copy == NULL)
        return -1;
    for (n = 0; env[n] != NULL; n++) {
        if (strncmp(env[n], assignment, nlen) == 0 && env[n][nlen] == '=') {
            free(env[n]);
            env[n] = copy;
            return 0;
        }
    }
    env = realloc(env, (size_t)(n + 2) * sizeof(char *));
    if (env == NULL) {
        free(copy);
        return -1;
    }
    env[n] = copy;
    env[n + 1] = NULL;
    *envp = env;
    return 0;
}

/* Our environment for the ranks, less what a PMIx server of our own (when mpirun itself runs
 * under a launcher) told us: the ranks must find our server and no other. PMIX_MCA_* are the
 * user's settings of libpmix and stay. */
static char **env_copy(void)
{
    int n = 0, k = 0;
    char **env;

    while (environ[n] != NULL)
        n++;
    env = calloc((size_t)n + 1, sizeof(char *));
    for (int i = 0; env != NULL && i < n; i++) {
        if (strncmp(environ[i], "PMIX_", 5) == 0 && strncmp(environ[i], "PMIX_MCA_", 9) != 0)
            continue;
        if ((env[k++] = strdup(environ[i])) == NULL)
            return NULL;   /* exiting anyway */
    }
    return env;
}

/* Finds program as execvp would, here, so that a missing program is one clear error rather than
 * N failing ranks. */
static char *resolve_program(const char *prog)
{
    const char *path = getenv("PATH");
    struct stat st;

    if (strchr(prog, '/') != NULL)
        return access(prog, X_OK) == 0 ? strdup(prog) : NULL;
    if (path == NULL || path[0] == '\0')
        path = "/usr/local/bin:/usr/bin:/bin";
    while (*path != '\0') {
        size_t dlen = strcspn(path, ":");
        char buf[PATH_MAX];

        if (snprintf(buf, sizeof(buf), "%.*s%s%s", (int)dlen, dlen ? path : ".",
                     dlen ? "/" : "/", prog) < (int)sizeof(buf) &&
            stat(buf, &st) == 0 && S_ISREG(st.st_mode) && access(buf, X_OK) == 0)
            return strdup(buf);
        path += dlen;
        if (*path == ':')
            path++;
    }
    return NULL;
}

/* Returns the index of the program in argv, 0 when there is none, -1 on a usage error;
 * -2 when the answer was printed (--help, --version). */
static int parse_args(int argc, char **argv, struct mpirun_job *job)
{
    int i;

    for (i = 1; i < argc; i++) {
        const char *a = argv[i];
        const char *val = NULL;

        if (a[0] != '-')
            break;
        if (strcmp(a, "--") == 0) {
            i++;
            break;
        }
        if (strchr(a, '=') != NULL)
            val = strchr(a, '=') + 1;

        if (is_opt(a, "n") || is_opt(a, "np") || is_opt(a, "c")) {
            if (val == NULL && (val = argv[++i]) == NULL) {
                mpirun_error("%s needs a number of ranks", a);
                return -1;
            }
            if (parse_count(val, &job->np) < 0) {
                mpirun_error("bad number of ranks '%s' (1 to %d)", val, MAX_RANKS);
                return -1;
            }
        } else if (is_opt(a, "tag-output") || strcmp(a, "-l") == 0 ||
                   is_opt(a, "prepend-rank")) {
            job->tag_output = 1;
        } else if (strcmp(a, "-x") == 0 || strcmp(a, "-genv") == 0 || strcmp(a, "-env") == 0) {
            const char *var = argv[++i];
            char *assignment;
            int rc;

            if (var == NULL || var[0] == '\0' || var[0] == '=') {
                mpirun_error("%s needs a variable name", a);
                return -1;
            }
            if (strcmp(a, "-x") != 0) {
                const char *value = argv[++i];

                if (value == NULL || strchr(var, '=') != NULL) {
                    mpirun_error("usage: %s VAR value", a);
                    return -1;
                }
                if (asprintf(&assignment, "%s=%s", var, value) < 0)
                    return -1;
            } else if (strchr(var, '=') != NULL) {
                assignment = strdup(var);
            } else {
                const char *value = getenv(var);

                if (value == NULL)
                    continue;   /* nothing to pass: the ranks do not have it either */
                if (asprintf(&assignment, "%s=%s", var, value) < 0)
                    return -1;
            }
            rc = assignment != NULL ? env_set(&job->env, assignment) : -1;
            free(assignment);
            if (rc < 0) {
                mpirun_error("out of memory");
                return -1;
            }
        } else if (is_opt(a, "oversubscribe")) {
            /* nothing to do: we never bind ranks to cores */
        } else if (strcmp(a, "-h") == 0 || is_opt(a, "help")) {
            usage(stdout);
            return -2;
        } else if (strcmp(a, "-V") == 0 || is_opt(a, "version")) {
            printf("%s (umpi) %s\nPMIx %s (built against %ld.%ld.%ld)\n",
                   mpirun_name, PACKAGE_VERSION, PMIx_Get_version(), PMIX_VERSION_MAJOR,
                   PMIX_VERSION_MINOR, PMIX_VERSION_RELEASE);
            return -2;
        } else {
            for (int k = 0; multinode_opts[k] != NULL; k++) {
                if (is_opt(a, multinode_opts[k])) {
                    mpirun_error("option %s is not supported yet: multi-node launch comes with "
                                 "Slurm support", a);
                    return -1;
                }
            }
            mpirun_error("unknown option %s (see %s --help)", a, mpirun_name);
            return -1;
        }
    }
    return i < argc ? i : 0;
}

int main(int argc, char **argv)
{
    struct mpirun_job job = { .np = 1, .stdin_fd = -1 };
    int prog, rc = 1;

    if (argc > 0 && argv[0] != NULL) {
        const char *slash = strrchr(argv[0], '/');

        mpirun_name = slash != NULL ? slash + 1 : argv[0];
    }
    int handover = mpirun_slurm_handover(&argc, argv);   /* inside a Slurm allocation: srun */
    if (handover >= 0)
        return handover;
    job.env = env_copy();
    if (job.env == NULL) {
        mpirun_error("out of memory");
        return 1;
    }
    prog = parse_args(argc, argv, &job);
    if (prog == -2)
        return 0;
    if (prog == 0) {
        mpirun_error("no program to run (see %s --help)", mpirun_name);
        return 1;
    }
    if (prog < 0)
        return 1;
    job.argv = &argv[prog];
    job.path = resolve_program(argv[prog]);
    if (job.path == NULL) {
        mpirun_error("%s: %s", argv[prog],
                     strchr(argv[prog], '/') != NULL ? strerror(errno) : "command not found");
        return 127;
    }

    job.ranks = calloc((size_t)job.np, sizeof(*job.ranks));
    job.base = event_base_new();
    if (job.ranks == NULL || job.base == NULL) {
        mpirun_error("out of memory");
        return 1;
    }
    for (int r = 0; r < job.np; r++) {
        job.ranks[r].job = &job;
        job.ranks[r].rank = r;
        job.ranks[r].out.fd = job.ranks[r].err.fd = -1;
    }

    if (mpirun_server_start(&job) == 0 && mpirun_launch(&job) == 0)
        rc = job.have_exit_code ? job.exit_code : 0;
    mpirun_server_stop(&job);
    event_base_free(job.base);
    fflush(stdout);
    return rc;
}
