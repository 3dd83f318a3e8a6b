/*
 * mpirun inside a Slurm allocation: the job goes to srun.
 *
 * Inside an allocation (salloc, sbatch) Slurm owns the nodes, and srun --mpi=pmix starts tasks on
 * all of them with a PMIx server in each node's slurmstepd: the same interface our own server
 * gives the ranks. So mpirun does not start ranks there; it translates its options and replaces
 * itself with
 *
 *     srun --mpi=pmix --kill-on-bad-exit=1 -n N [translated options] program args...
 *
 * srun forwards stdio and signals and ends the step when a rank fails; its exit status becomes
 * mpirun's (exec keeps the pid, so whoever waits for mpirun waits for srun).
 *
 * Which launcher: the option --launcher auto|local|slurm, else UMPI_LAUNCHER, else auto. auto
 * hands over when SLURM_JOB_ID is set and SLURM_STEP_ID is not (mpirun run as a task of a step
 * was already placed by srun: it starts its ranks there itself), and when no hosts were named
 * (--host, --hostfile: the user chose the machines, mpirun reaches them itself).
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif
#include "mpirun.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define MAX_TASKS 65536

/* Options of mpirun that take a value as the next argument (or after '='), so that scanning for
 * --launcher and for host options steps over their values. */
static const char *const value_opts[] = {
    "n", "np", "c", "x", "map-by", "bind-to", "launcher", "host", "H", "hostfile", "f",
    "machinefile", "machine", "hosts", "default-hostfile", "rankfile", "ppn", "npernode",
    "launch-agent", "cpu-set", "rank-by", "output-filename", "wdir", "N", NULL,
};

/* Options naming the machines to run on. */
static const char *const host_opts[] = {
    "host", "H", "hostfile", "f", "machinefile", "machine", "hosts", "default-hostfile",
    "rankfile", NULL,
};

static int opt_in(const char *arg, const char *const *list)
{
    for (int k = 0; list[k] != NULL; k++)
        if (mpirun_is_opt(arg, list[k]))
            return 1;
    return 0;
}

/* Number of arguments after an option that are its values. */
static int opt_nvalues(const char *arg)
{
    if (strcmp(arg, "-genv") == 0 || strcmp(arg, "-env") == 0)
        return 2;
    if (strchr(arg, '=') != NULL)
        return 0;
    return opt_in(arg, value_opts) ? 1 : 0;
}

/* A growing argument vector for srun. */
struct argvec {
    char **v;
    int n, cap;
};

static int av_add(struct argvec *a, const char *s)
{
    if (a->n + 2 > a->cap) {
        int cap = a->cap ? 2 * a->cap : 32;
        char **v = realloc(a->v, (size_t)cap * sizeof(char *));

        if (v == NULL)
            return -1;
        a->v = v;
        a->cap = cap;
    }
    if ((a->v[a->n] = strdup(s)) == NULL)
        return -1;
    a->v[++a->n] = NULL;
    return 0;
}

/* Adds "--name=value" (value a string) or "--name=N" (value NULL, N the number). */
static int av_opt(struct argvec *a, const char *name, const char *value, int n)
{
    char buf[512];

    if (value != NULL ? snprintf(buf, sizeof(buf), "--%s=%s", name, value) >= (int)sizeof(buf)
                      : snprintf(buf, sizeof(buf), "--%s=%d", name, n) >= (int)sizeof(buf))
        return -1;
    return av_add(a, buf);
}

static int parse_int(const char *s, int lo, int hi, int *out)
{
    char *end;
    long v;

    errno = 0;
    v = strtol(s, &end, 10);
    if (errno != 0 || end == s || *end != '\0' || v < lo || v > hi)
        return -1;
    *out = (int)v;
    return 0;
}

/* Slurm's compressed per-node counts, "2(x3),1": their sum, or -1 if the string is not one. */
static long sum_counts(const char *s)
{
    long total = 0;

    while (*s != '\0') {
        char *end;
        long count = strtol(s, &end, 10), times = 1;

        if (end == s || count < 0)
            return -1;
        s = end;
        if (strncmp(s, "(x", 2) == 0) {
            times = strtol(s + 2, &end, 10);
            if (end == s + 2 || *end != ')' || times < 1)
                return -1;
            s = end + 1;
        }
        total += count * times;
        if (total > MAX_TASKS)
            return -1;
        if (*s == ',')
            s++;
        else if (*s != '\0')
            return -1;
    }
    return total;
}

/* Tasks of the allocation: what mpirun runs when -n is not given (Open MPI's "all slots"). */
static int allocation_tasks(void)
{
    const char *s = getenv("SLURM_NTASKS");
    int n;
    long sum;

    if (s != NULL && parse_int(s, 1, MAX_TASKS, &n) == 0)
        return n;
    s = getenv("SLURM_TASKS_PER_NODE");
    if (s != NULL && (sum = sum_counts(s)) > 0)
        return (int)sum;
    return 0;   /* unknown: srun's own default */
}

static int allocation_nodes(void)
{
    const char *s = getenv("SLURM_JOB_NUM_NODES");
    int n;

    if (s == NULL)
        s = getenv("SLURM_NNODES");
    return s != NULL && parse_int(s, 1, MAX_TASKS, &n) == 0 ? n : 0;
}

/* What srun is told, gathered from mpirun's options. */
struct srun_opts {
    int np;                 /* 0: not given */
    int per_node;           /* --ntasks-per-node, 0: not given */
    int per_socket;         /* --ntasks-per-socket, 0: not given */
    const char *dist;       /* --distribution */
    int cpus_per_task;      /* 0: not given */
    const char *bind;       /* --cpu-bind's type */
    int report_bindings;
    int label;
    int overcommit;
};

/* --map-by OBJ[:MODIFIER...] in Open MPI's spelling; ppr:N:node|socket. */
static int map_by(const char *val, struct srun_opts *o)
{
    char buf[128], *mods, *mod, *save = NULL;

    if (snprintf(buf, sizeof(buf), "%s", val) >= (int)sizeof(buf))
        goto bad;
    if (strncmp(buf, "ppr:", 4) == 0) {
        char *n = buf + 4, *obj = strchr(n, ':');
        int count;

        if (obj == NULL)
            goto bad;
        *obj++ = '\0';
        mods = strchr(obj, ':');
        if (mods != NULL)
            *mods++ = '\0';
        if (parse_int(n, 1, MAX_TASKS, &count) < 0)
            goto bad;
        if (strcmp(obj, "node") == 0) {
            o->per_node = count;
        } else if (strcmp(obj, "socket") == 0 || strcmp(obj, "package") == 0) {
            o->per_socket = count;
        } else {
            mpirun_error("--map-by %s: srun can place a number of ranks per node or per socket, "
                         "not per %s", val, obj);
            return -1;
        }
    } else {
        mods = strchr(buf, ':');
        if (mods != NULL)
            *mods++ = '\0';
        if (strcmp(buf, "slot") == 0 || strcmp(buf, "core") == 0 || strcmp(buf, "hwthread") == 0)
            o->dist = "block:block";    /* fill a node's cores in order, then the next node */
        else if (strcmp(buf, "node") == 0)
            o->dist = "cyclic";         /* round robin over the nodes */
        else if (strcmp(buf, "socket") == 0 || strcmp(buf, "package") == 0 || strcmp(buf, "numa") == 0)
            o->dist = "block:cyclic";   /* fill nodes, round robin over their sockets */
        else
            goto bad;
    }
    for (mod = mods ? strtok_r(mods, ":,", &save) : NULL; mod != NULL; mod = strtok_r(NULL, ":,", &save)) {
        if (strncasecmp(mod, "PE=", 3) == 0) {
            if (parse_int(mod + 3, 1, 4096, &o->cpus_per_task) < 0)
                goto bad;
        } else if (strcasecmp(mod, "OVERSUBSCRIBE") == 0) {
            o->overcommit = 1;
        } else if (strcasecmp(mod, "NOOVERSUBSCRIBE") == 0) {
            o->overcommit = 0;
        } else {
            mpirun_error("--map-by %s: modifier %s has no srun equivalent (PE=n, OVERSUBSCRIBE and "
                         "NOOVERSUBSCRIBE do)", val, mod);
            return -1;
        }
    }
    return 0;

bad:
    mpirun_error("bad --map-by '%s' (slot, core, hwthread, socket, numa, node or ppr:N:node|socket, "
                 "with :PE=n)", val);
    return -1;
}

static int bind_to(const char *val, struct srun_opts *o)
{
    static const char *const names[][2] = {
        { "none", "none" }, { "core", "cores" }, { "hwthread", "threads" }, { "socket", "sockets" },
        { "package", "sockets" }, { "numa", "ldoms" }, { "board", "boards" },
    };

    for (size_t k = 0; k < sizeof(names) / sizeof(names[0]); k++) {
        if (strcmp(val, names[k][0]) == 0) {
            o->bind = names[k][1];
            return 0;
        }
    }
    mpirun_error("--bind-to %s: srun binds to none, core, hwthread, socket (package), numa or "
                 "board only", val);
    return -1;
}

/* The value of option argv[*i] (after '=' or the next argument), advancing *i; NULL if none. */
static const char *opt_value(int argc, char **argv, int *i)
{
    const char *eq = strchr(argv[*i], '=');

    if (eq != NULL)
        return eq + 1;
    if (*i + 1 >= argc || argv[*i + 1] == NULL) {
        mpirun_error("%s needs a value", argv[*i]);
        return NULL;
    }
    return argv[++*i];
}

/* Sets VAR=value (or passes VAR on) in our environment, which srun gives every task. */
static int pass_env(const char *var, const char *value)
{
    if (var == NULL || var[0] == '\0' || var[0] == '=') {
        mpirun_error("-x needs a variable name");
        return -1;
    }
    if (value == NULL) {
        const char *eq = strchr(var, '=');
        char name[256];

        if (eq == NULL)
            return 0;   /* VAR alone: srun passes our whole environment already */
        if ((size_t)(eq - var) >= sizeof(name)) {
            mpirun_error("variable name too long in -x %s", var);
            return -1;
        }
        memcpy(name, var, (size_t)(eq - var));
        name[eq - var] = '\0';
        return setenv(name, eq + 1, 1);
    }
    if (strchr(var, '=') != NULL) {
        mpirun_error("usage: -genv VAR value (got VAR '%s')", var);
        return -1;
    }
    return setenv(var, value, 1);
}

/* Translates argv[1..prog-1] into o; returns the index of the program, or -1 on an error. */
static int translate(int argc, char **argv, struct srun_opts *o)
{
    int i;

    for (i = 1; i < argc; i++) {
        const char *a = argv[i], *val;

        if (a[0] != '-')
            break;
        if (strcmp(a, "--") == 0) {
            i++;
            break;
        }
        if (mpirun_is_opt(a, "n") || mpirun_is_opt(a, "np") || mpirun_is_opt(a, "c")) {
            if ((val = opt_value(argc, argv, &i)) == NULL)
                return -1;
            if (parse_int(val, 1, MAX_TASKS, &o->np) < 0) {
                mpirun_error("bad number of ranks '%s' (1 to %d)", val, MAX_TASKS);
                return -1;
            }
        } else if (mpirun_is_opt(a, "map-by")) {
            if ((val = opt_value(argc, argv, &i)) == NULL || map_by(val, o) < 0)
                return -1;
        } else if (mpirun_is_opt(a, "bind-to")) {
            if ((val = opt_value(argc, argv, &i)) == NULL || bind_to(val, o) < 0)
                return -1;
        } else if (mpirun_is_opt(a, "ppn") || mpirun_is_opt(a, "npernode") || mpirun_is_opt(a, "N")) {
            if ((val = opt_value(argc, argv, &i)) == NULL)
                return -1;
            if (parse_int(val, 1, MAX_TASKS, &o->per_node) < 0) {
                mpirun_error("bad number of ranks per node '%s'", val);
                return -1;
            }
        } else if (mpirun_is_opt(a, "report-bindings")) {
            o->report_bindings = 1;
        } else if (mpirun_is_opt(a, "tag-output") || strcmp(a, "-l") == 0 || mpirun_is_opt(a, "prepend-rank")) {
            o->label = 1;
        } else if (mpirun_is_opt(a, "oversubscribe")) {
            o->overcommit = 1;
        } else if (strcmp(a, "-x") == 0) {
            if (pass_env(argv[++i], NULL) < 0)
                return -1;
        } else if (strcmp(a, "-genv") == 0 || strcmp(a, "-env") == 0) {
            if (i + 2 >= argc || pass_env(argv[i + 1], argv[i + 2]) < 0) {
                if (i + 2 >= argc)
                    mpirun_error("usage: %s VAR value", a);
                return -1;
            }
            i += 2;
        } else if (mpirun_is_opt(a, "launcher")) {
            i += opt_nvalues(a);   /* chosen already */
        } else if (opt_in(a, host_opts)) {
            mpirun_error("%s: inside a Slurm allocation the nodes are the allocation's; choose them "
                         "with salloc/sbatch -w (or run mpirun --launcher local %s ...)", a, a);
            return -1;
        } else {
            mpirun_error("option %s has no srun equivalent; mpirun hands the job to srun inside a "
                         "Slurm allocation (--launcher local runs it without srun)", a);
            return -1;
        }
    }
    if (i >= argc) {
        mpirun_error("no program to run (see %s --help)", mpirun_name);
        return -1;
    }
    return i;
}

static int build_srun_argv(struct srun_opts *o, int argc, char **argv, int prog, struct argvec *a)
{
    char num[32];
    int np = o->np, rc = 0;

    if (np == 0 && o->per_node > 0 && allocation_nodes() > 0)
        np = o->per_node * allocation_nodes();
    if (np == 0)
        np = allocation_tasks();

    rc |= av_add(a, "srun");
    rc |= av_add(a, "--mpi=pmix");
    rc |= av_add(a, "--kill-on-bad-exit=1");
    if (np > 0) {
        snprintf(num, sizeof(num), "%d", np);
        rc |= av_add(a, "-n") | av_add(a, num);
    }
    if (o->per_node > 0)
        rc |= av_opt(a, "ntasks-per-node", NULL, o->per_node);
    if (o->per_socket > 0)
        rc |= av_opt(a, "ntasks-per-socket", NULL, o->per_socket);
    if (o->dist != NULL)
        rc |= av_opt(a, "distribution", o->dist, 0);
    if (o->cpus_per_task > 0)
        rc |= av_opt(a, "cpus-per-task", NULL, o->cpus_per_task);
    if (o->bind != NULL || o->report_bindings) {
        char bind[64];

        snprintf(bind, sizeof(bind), "%s%s%s", o->report_bindings ? "verbose" : "",
                 o->report_bindings && o->bind ? "," : "", o->bind ? o->bind : "");
        rc |= av_opt(a, "cpu-bind", bind, 0);
    }
    if (o->overcommit)
        rc |= av_add(a, "--overcommit");
    if (o->label)
        rc |= av_add(a, "--label");
    if (strcmp(argv[prog - 1], "--") == 0 || argv[prog][0] == '-')
        rc |= av_add(a, "--");
    for (int i = prog; i < argc; i++)
        rc |= av_add(a, argv[i]);
    return rc ? -1 : 0;
}

/* The launcher asked for: --launcher VALUE (removed from argv) or UMPI_LAUNCHER; "auto" if neither. */
static const char *launcher_choice(int *argc, char **argv, int *explicit_hosts)
{
    const char *choice = getenv("UMPI_LAUNCHER");

    *explicit_hosts = 0;
    for (int i = 1; i < *argc && argv[i][0] == '-' && strcmp(argv[i], "--") != 0;) {
        int take = 1 + opt_nvalues(argv[i]);

        if (opt_in(argv[i], host_opts))
            *explicit_hosts = 1;
        if (mpirun_is_opt(argv[i], "launcher")) {
            const char *eq = strchr(argv[i], '=');

            if (eq == NULL && i + 1 >= *argc) {
                mpirun_error("%s needs a value (auto, local or slurm)", argv[i]);
                return NULL;
            }
            choice = eq != NULL ? eq + 1 : argv[i + 1];
            /* Removed, so that the local launcher never sees it. */
            memmove(&argv[i], &argv[i + take], (size_t)(*argc - i - take + 1) * sizeof(char *));
            *argc -= take;
            continue;
        }
        i += take;
    }
    if (choice == NULL || choice[0] == '\0')
        choice = "auto";
    if (strcmp(choice, "auto") != 0 && strcmp(choice, "local") != 0 && strcmp(choice, "slurm") != 0) {
        mpirun_error("unknown launcher '%s' (--launcher or UMPI_LAUNCHER: auto, local or slurm)", choice);
        return NULL;
    }
    return choice;
}

int mpirun_slurm_handover(int *argc, char **argv)
{
    struct srun_opts o = { 0 };
    struct argvec a = { 0 };
    const char *choice, *job = getenv("SLURM_JOB_ID"), *step = getenv("SLURM_STEP_ID");
    const char *debug = getenv("UMPI_DEBUG");
    int explicit_hosts, prog;

    for (int i = 1; i < *argc && argv[i][0] == '-' && strcmp(argv[i], "--") != 0; i++) {
        if (strcmp(argv[i], "-h") == 0 || mpirun_is_opt(argv[i], "help") || strcmp(argv[i], "-V") == 0 ||
            mpirun_is_opt(argv[i], "version"))
            return -1;   /* answered by mpirun itself */
        i += opt_nvalues(argv[i]);
    }
    if ((choice = launcher_choice(argc, argv, &explicit_hosts)) == NULL)
        return 1;
    if (strcmp(choice, "local") == 0)
        return -1;
    if (strcmp(choice, "auto") == 0 &&
        (job == NULL || job[0] == '\0' || (step != NULL && step[0] != '\0') || explicit_hosts))
        return -1;

    if ((prog = translate(*argc, argv, &o)) < 0)
        return 1;
    if (build_srun_argv(&o, *argc, argv, prog, &a) < 0) {
        mpirun_error("out of memory");
        return 1;
    }
    if (debug != NULL && atoi(debug) >= 1) {
        fprintf(stderr, "%s: Slurm job %s: running", mpirun_name, job ? job : "(none yet)");
        for (int i = 0; i < a.n; i++)
            fprintf(stderr, " %s", a.v[i]);
        fputc('\n', stderr);
    }
    fflush(NULL);
    execvp(a.v[0], a.v);
    mpirun_error("cannot run srun (%s)%s", strerror(errno),
                 errno == ENOENT ? ": is Slurm installed here? --launcher local runs the job without it"
                                 : "");
    return errno == ENOENT ? 127 : 126;
}
