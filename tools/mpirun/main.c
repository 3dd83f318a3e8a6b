/*
 * mpirun / mpiexec: command line, then start the PMIx server, launch, wait, clean up; across
 * machines (--host, --hostfile) the same after starting the launch tree (tree.h). Also the entry
 * of the tree's daemons (--umpi-daemon, daemon.c).
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif
#include "mpirun.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <event2/event.h>
#include <pmix.h>
#include <pmix_version.h>

#include "core/umpi_knobs.h"

#ifndef PACKAGE_VERSION
#define PACKAGE_VERSION "unknown"
#endif

#define MAX_RANKS MPIRUN_MAX_RANKS

extern char **environ;

static void usage(FILE *f)
{
    fprintf(f,
        "Usage: %s [options] [-n N] program [arguments...]\n"
        "\n"
        "Starts N copies of program (ranks 0..N-1 of one MPI job), on this machine or, with\n"
        "--host/--hostfile, on several, and serves them PMIx to find each other.\n"
        "\n"
        "Options:\n"
        "  -n N, -np N        number of ranks (default 1; with hosts, every slot)\n"
        "  --host LIST, -H LIST, -hosts LIST\n"
        "                     run on these hosts: \"h1:2,h2:2\" (host:slots; a repeated host adds\n"
        "                     its slots; no :N is 1 slot)\n"
        "  --hostfile FILE, -f FILE, -machinefile FILE\n"
        "                     hosts from a file: lines \"host\", \"host:N\" or \"host slots=N\n"
        "                     [max_slots=M]\"; '#' starts a comment\n"
        "  --map-by slot|node|ppr:N:node\n"
        "                     slot (default): fill each host's slots in turn; node: one rank per\n"
        "                     host in turn; ppr:N:node: N ranks on each host\n"
        "  -ppn N, --npernode N  the same as --map-by ppr:N:node\n"
        "  --oversubscribe    allow more ranks than slots on the hosts, and bound ranks to\n"
        "                     share cores\n"
        "  --launch-agent CMD how to start a umpi daemon on another host: CMD HOST COMMAND...\n"
        "                     (default \"ssh -o BatchMode=yes\", or UMPI_LAUNCH_AGENT)\n"
        "  --tag-output, -l   prefix every line of output with \"[rank] \" (\"[rank@host] \" with\n"
        "                     hosts), e.g. \"[3] hello\"\n"
        "  -x VAR[=value]     set VAR in the ranks' environment (VAR alone: pass mpirun's value;\n"
        "                     the ranks inherit mpirun's whole environment anyway)\n"
        "  -genv VAR value    same as -x VAR=value (MPICH spelling)\n",
        mpirun_name);
    mpirun_bind_usage(f);
    fprintf(f,
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
        "  before MPI_Finalize, a rank exiting without MPI_Finalize while others run, MPI_Abort,\n"
        "  or the loss of a host's daemon. The other ranks are then terminated.\n"
        "  Across hosts, one umpi daemon per other host (started with the launch agent, in a tree\n"
        "  of UMPI_LAUNCH_FANOUT children per daemon) serves PMIx to its ranks and forks them;\n"
        "  the ranks start in mpirun's directory with mpirun's environment.\n"
        "\n"
        "Exit status: the first nonzero exit status of a rank; the code given to MPI_Abort;\n"
        "  128+N if a rank was killed by signal N or mpirun received signal N; 127 if program\n"
        "  cannot be run; 1 for a usage error, a lost daemon or a failure of mpirun itself;\n"
        "  0 if every rank exited with 0.\n");
}

/* Options that belong to launchers umpi does not have yet; told apart from unknown ones. */
static const char *const unsupported_opts[] = {
    "rank-by", "rankfile", "binding", "npersocket", NULL,
};

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

/* What the command line says about hosts. */
struct host_opts {
    struct mpirun_hostlist hosts;
    int have_list, have_file;
    struct mpirun_mapping mapping;
    int have_mapping;
    int np_given;
    const char *agent;
};

/* Keeps a binding option word for the daemons, which plan their own node's binding with the
 * same options (mpirun_bind_option again, then mpirun_bind_setup). */
static int bind_arg(struct mpirun_job *job, const char *word)
{
    size_t n = 0;
    char **v;

    while (job->bind_args != NULL && job->bind_args[n] != NULL)
        n++;
    v = realloc(job->bind_args, (n + 2) * sizeof(char *));
    if (v == NULL || (v[n] = strdup(word)) == NULL) {
        if (v != NULL)
            job->bind_args = v;
        mpirun_error("out of memory");
        return -1;
    }
    v[n + 1] = NULL;
    job->bind_args = v;
    return 0;
}

/* The value of option a: after '=' or the next argument; NULL (with a message) if missing. */
static const char *opt_value(const char *a, const char *val, char **argv, int *i)
{
    if (val != NULL)
        return val;
    if (argv[*i + 1] == NULL) {
        mpirun_error("%s needs a value", a);
        return NULL;
    }
    return argv[++*i];
}

/* Returns the index of the program in argv, 0 when there is none, -1 on a usage error;
 * -2 when the answer was printed (--help, --version). */
static int parse_args(int argc, char **argv, struct mpirun_job *job, struct host_opts *ho)
{
    char err[1024];
    int i;

    for (i = 1; i < argc; i++) {
        const char *a = argv[i];
        const char *val = NULL;
        const int first = i;
        int bound;

        if (a[0] != '-')
            break;
        if (strcmp(a, "--") == 0) {
            i++;
            break;
        }
        if (strchr(a, '=') != NULL)
            val = strchr(a, '=') + 1;

        if (mpirun_is_opt(a, "n") || mpirun_is_opt(a, "np") || mpirun_is_opt(a, "c")) {
            if (val == NULL && (val = argv[++i]) == NULL) {
                mpirun_error("%s needs a number of ranks", a);
                return -1;
            }
            if (parse_count(val, &job->np) < 0) {
                mpirun_error("bad number of ranks '%s' (1 to %d)", val, MAX_RANKS);
                return -1;
            }
            ho->np_given = 1;
        } else if (mpirun_is_opt(a, "host") || mpirun_is_opt(a, "H") || mpirun_is_opt(a, "hosts")) {
            if ((val = opt_value(a, val, argv, &i)) == NULL)
                return -1;
            if (mpirun_hosts_parse_list(&ho->hosts, val, err, sizeof(err)) < 0) {
                mpirun_error("%s: %s", a, err);
                return -1;
            }
            ho->have_list = 1;
        } else if (mpirun_is_opt(a, "hostfile") || mpirun_is_opt(a, "f") || mpirun_is_opt(a, "machinefile") ||
                   mpirun_is_opt(a, "default-hostfile")) {
            if ((val = opt_value(a, val, argv, &i)) == NULL)
                return -1;
            if (mpirun_hosts_parse_file(&ho->hosts, val, err, sizeof(err)) < 0) {
                mpirun_error("%s", err);
                return -1;
            }
            ho->have_file = 1;
        } else if (mpirun_is_opt(a, "map-by")) {
            /* Over hosts (slot, node, ppr:N:node: hosts.c) or within a node (core, socket, numa,
             * ..., slot:PE=n: bind.c); slot is both. */
            size_t obj;

            if ((val = opt_value(a, val, argv, &i)) == NULL)
                return -1;
            obj = strcspn(val, ":");
            if (strncmp(val, "node", obj) == 0 || strncmp(val, "by-node", obj) == 0 ||
                strncmp(val, "ppr", obj) == 0 || strcmp(val, "slot") == 0 ||
                strcmp(val, "by-slot") == 0) {
                if (mpirun_mapping_parse(&ho->mapping, val, err, sizeof(err)) < 0) {
                    mpirun_error("%s", err);
                    return -1;
                }
                ho->have_mapping = 1;
            } else {
                char *bind_argv[] = { "--map-by", (char *)val, NULL };
                int k = 0;

                if (mpirun_bind_option(&job->bind, bind_argv, &k) < 0 ||
                    bind_arg(job, bind_argv[0]) < 0 || bind_arg(job, val) < 0)
                    return -1;
            }
        } else if (mpirun_is_opt(a, "ppn") || mpirun_is_opt(a, "npernode")) {
            if ((val = opt_value(a, val, argv, &i)) == NULL)
                return -1;
            if (parse_count(val, &ho->mapping.ppr) < 0) {
                mpirun_error("bad %s '%s' (1 to %d ranks per host)", a, val, MAX_RANKS);
                return -1;
            }
            ho->mapping.policy = MPIRUN_MAP_PPR;
            ho->have_mapping = 1;
        } else if (mpirun_is_opt(a, "launch-agent")) {
            if ((val = opt_value(a, val, argv, &i)) == NULL)
                return -1;
            ho->agent = val;
        } else if (mpirun_is_opt(a, "tag-output") || strcmp(a, "-l") == 0 ||
                   mpirun_is_opt(a, "prepend-rank")) {
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
        } else if (mpirun_is_opt(a, "oversubscribe")) {
            ho->mapping.oversubscribe = 1;   /* more ranks than slots */
            job->bind.oversubscribe = 1;     /* bound ranks may share cores */
            if (bind_arg(job, "--oversubscribe") < 0)
                return -1;
        } else if ((bound = mpirun_bind_option(&job->bind, argv, &i)) != 0) {
            if (bound < 0)
                return -1;
            for (int k = first; k <= i; k++) {
                if (bind_arg(job, argv[k]) < 0)
                    return -1;
            }
        } else if (strcmp(a, "-h") == 0 || mpirun_is_opt(a, "help")) {
            usage(stdout);
            return -2;
        } else if (strcmp(a, "-V") == 0 || mpirun_is_opt(a, "version")) {
            printf("%s (umpi) %s\nPMIx %s (built against %ld.%ld.%ld)\n",
                   mpirun_name, PACKAGE_VERSION, PMIx_Get_version(), PMIX_VERSION_MAJOR,
                   PMIX_VERSION_MINOR, PMIX_VERSION_RELEASE);
            return -2;
        } else {
            for (int k = 0; unsupported_opts[k] != NULL; k++) {
                if (mpirun_is_opt(a, unsupported_opts[k])) {
                    mpirun_error("option %s is not supported yet", a);
                    return -1;
                }
            }
            mpirun_error("unknown option %s (see %s --help)", a, mpirun_name);
            return -1;
        }
    }
    return i < argc ? i : 0;
}

/* A knob of the launcher, from the one table (src/core/umpi_knobs.def), already loaded. */
static const struct umpi_knob_info *knob(const char *name)
{
    int n;
    const struct umpi_knob_info *t = umpi_knobs_table(&n);

    for (int i = 0; i < n; i++) {
        if (strcmp(t[i].name, name) == 0)
            return &t[i];
    }
    return NULL;   /* not reached: the names below are rows of the table */
}

static int knob_int(const char *name)
{
    return *(const int *)knob(name)->value;
}

static const char *knob_str(const char *name)
{
    return *(const char *const *)knob(name)->value;
}

/* "ssh -o BatchMode=yes" -> its words (split on blanks; no quoting). */
static char **split_words(const char *s)
{
    char *copy = strdup(s), *save = NULL, *w;
    char **v = calloc(strlen(s) / 2 + 2, sizeof(char *));
    int n = 0;

    if (copy == NULL || v == NULL)
        return NULL;
    for (w = strtok_r(copy, " \t", &save); w != NULL; w = strtok_r(NULL, " \t", &save))
        v[n++] = w;
    if (n == 0) {
        free(v);
        free(copy);
        return NULL;
    }
    return v;
}

/* The job across the hosts of ho: map, tree, then as on one machine. Returns the exit status. */
static int run_on_hosts(struct mpirun_job *job, struct host_opts *ho)
{
    struct mpirun_tree_opts opts = { 0 };
    const char *agent;
    char err[1024];
    int rc = 1;

    if (ho->have_list && ho->have_file) {
        mpirun_error("give the hosts either with --host or with --hostfile, not both");
        return 1;
    }
    umpi_knobs_load();
    opts.fanout = knob_int("UMPI_LAUNCH_FANOUT");
    opts.timeout_s = knob_int("UMPI_LAUNCH_TIMEOUT");
    opts.address = knob_str("UMPI_LAUNCH_ADDRESS");
    agent = ho->agent != NULL ? ho->agent : knob_str("UMPI_LAUNCH_AGENT");
    if (opts.fanout < 1 || opts.fanout > 4096) {
        mpirun_error("UMPI_LAUNCH_FANOUT=%d: give 1 to 4096 daemons per daemon", opts.fanout);
        return 1;
    }
    if (opts.timeout_s < 1) {
        mpirun_error("UMPI_LAUNCH_TIMEOUT=%d: give at least 1 second", opts.timeout_s);
        return 1;
    }
    if (agent == NULL || (opts.agent = split_words(agent)) == NULL) {
        mpirun_error("the launch agent is empty (--launch-agent, UMPI_LAUNCH_AGENT)");
        return 1;
    }
    if (mpirun_map_compute(&ho->hosts, &ho->mapping, job->np, &job->map, err, sizeof(err)) < 0) {
        mpirun_error("%s", err);
        return 1;
    }
    job->multi = 1;
    job->my_node = -1;
    for (int n = 0; n < job->map.nnodes && job->my_node < 0; n++) {
        if (mpirun_host_is_local(job->map.node_name[n]))
            job->my_node = n;
    }
    if (job->my_node >= 0) {
        snprintf(job->hostname, sizeof(job->hostname), "%s", job->map.node_name[job->my_node]);
        job->nlocal = job->map.node_nranks[job->my_node];
    } else if (gethostname(job->hostname, sizeof(job->hostname) - 1) < 0) {
        strcpy(job->hostname, "localhost");
    }
    job->stdin_remote = job->map.node_of[0] != job->my_node;

    if (mpirun_tree_head_start(job, &opts, &ho->hosts, &ho->mapping, &mpirun_launch_upcalls) == 0 &&
        (job->my_node < 0 ||
         (mpirun_bind_setup(job, job->nlocal) == 0 && mpirun_server_start(job) == 0)) &&
        mpirun_launch(job) == 0)
        rc = job->have_exit_code ? job->exit_code : 0;
    return rc;
}

int main(int argc, char **argv)
{
    struct mpirun_job job = { .np = 1, .stdin_fd = -1 };
    struct host_opts ho = { .mapping.policy = MPIRUN_MAP_SLOT };
    int prog, rc = 1;

    if (argc > 0 && argv[0] != NULL) {
        const char *slash = strrchr(argv[0], '/');

        mpirun_name = slash != NULL ? slash + 1 : argv[0];
    }
    if (argc > 1 && strcmp(argv[1], "--umpi-daemon") == 0)
        return mpirun_daemon_main(argc - 2, argv + 2);
    int handover = mpirun_slurm_handover(&argc, argv);   /* inside a Slurm allocation: srun */
    if (handover >= 0)
        return handover;
    job.env = env_copy();
    if (job.env == NULL) {
        mpirun_error("out of memory");
        return 1;
    }
    prog = parse_args(argc, argv, &job, &ho);
    if (prog == -2)
        return 0;
    if (prog == 0) {
        mpirun_error("no program to run (see %s --help)", mpirun_name);
        return 1;
    }
    if (prog < 0)
        return 1;
    if (ho.have_mapping && !ho.have_list && !ho.have_file &&
        ho.mapping.policy == MPIRUN_MAP_PPR) {
        /* one machine: ppr:N:node is N ranks here (slot and node mapping change nothing) */
        if (!ho.np_given)
            job.np = ho.mapping.ppr;
        else if (job.np > ho.mapping.ppr) {
            mpirun_error("--map-by ppr:%d:node places at most %d ranks on this machine, not %d",
                         ho.mapping.ppr, ho.mapping.ppr, job.np);
            return 1;
        }
    }
    job.argv = &argv[prog];
    job.path = resolve_program(argv[prog]);
    if (job.path == NULL) {
        mpirun_error("%s: %s", argv[prog],
                     strchr(argv[prog], '/') != NULL ? strerror(errno) : "command not found");
        return 127;
    }
    /* The prefix tells the ranks that mpirun prints their MPI_Abort messages (src/pmi). */
    snprintf(job.nspace, sizeof(job.nspace), "umpi.%ld", (long)getpid());
    job.base = event_base_new();
    if (job.base == NULL) {
        mpirun_error("out of memory");
        return 1;
    }

    if (ho.have_list || ho.have_file) {
        /* -n defaults to what the hosts hold */
        if (!ho.np_given)
            job.np = mpirun_map_default_np(&ho.hosts, &ho.mapping);
    } else {
        /* One machine: every rank here, as ever. */
        if (gethostname(job.hostname, sizeof(job.hostname) - 1) < 0)
            strcpy(job.hostname, "localhost");
        job.my_node = 0;
        job.nlocal = job.np;
        if (mpirun_bind_setup(&job, job.nlocal) < 0)
            return 1;
        if (mpirun_map_single(&job.map, job.hostname, job.np) < 0) {
            mpirun_error("out of memory");
            return 1;
        }
    }
    job.ranks = calloc((size_t)job.np, sizeof(*job.ranks));
    if (job.ranks == NULL) {
        mpirun_error("out of memory");
        return 1;
    }
    for (int r = 0; r < job.np; r++) {
        job.ranks[r].job = &job;
        job.ranks[r].rank = r;
        job.ranks[r].out.fd = job.ranks[r].err.fd = -1;
    }

    if (ho.have_list || ho.have_file)
        rc = run_on_hosts(&job, &ho);
    else if (mpirun_server_start(&job) == 0 && mpirun_launch(&job) == 0)
        rc = job.have_exit_code ? job.exit_code : 0;
    mpirun_server_stop(&job);
    event_base_free(job.base);
    fflush(stdout);
    return rc;
}
