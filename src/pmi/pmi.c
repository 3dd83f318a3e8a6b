/*
 * The process-management interface of umpi (umpi_pmi.h): picks a client at MPI_Init and forwards
 * every call to it.
 *
 *   UMPI_PMI=auto (default):
 *     a PMIx server in the environment (PMIX_NAMESPACE, PMIX_SERVER_URI*)  -> PMIx (pmix.c): our mpirun,
 *                                                                              srun --mpi=pmix
 *     else PMI_FD or PMI_PORT                                              -> PMI-2 (pmi2.c): srun --mpi=pmi2,
 *                                                                              mpiexec.hydra
 *     else traces of a launch of several processes (SLURM_STEP_NUM_TASKS > 1 with SLURM_PROCID,
 *          or PMI_SIZE > 1)                                                -> MPI_Init fails, saying so:
 *                                                                              N singletons are never wanted
 *     else                                                                 -> singleton
 *   UMPI_PMI=pmix | pmi2: that client, or MPI_Init fails saying what is missing;
 *   UMPI_PMI=singleton: a singleton whatever the environment says.
 *
 * The singleton keeps a small local table in place of the key-value store, so that the layers above
 * never need a special case. The node of every rank is a table the client fills at init, so
 * umpi_pmi_node_of is a lookup, safe from any thread.
 */
#include "pmi/umpi_pmi_impl.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

extern char **environ;

/* Singleton key-value store: a short list, only this process reads it. */
struct umpi__pmi_kv {
    struct umpi__pmi_kv *next;
    char *key;
    size_t len;
    char value[];
};

static struct {
    int initialized;
    int kind; /* enum umpi_pmi_kind */
    int size;
    int *node_of; /* node of every rank (PMIx, PMI-2) */
    pthread_mutex_t kv_lock;
    struct umpi__pmi_kv *kv;
} umpi__pmi = { .kv_lock = PTHREAD_MUTEX_INITIALIZER };

/* ---- choosing the client ---------------------------------------------------------------------- */

/*
 * A PMIx server announces itself to its clients through the environment (PMIx_server_setup_fork
 * sets PMIX_NAMESPACE and PMIX_SERVER_URI*). This and the variables below are the launchers'
 * protocol, not umpi knobs, which is why they are read here rather than through the knob table.
 */
static const char *umpi__pmix_server_in_env(void)
{
    for (char **e = environ; e != NULL && *e != NULL; e++) {
        if (strncmp(*e, "PMIX_NAMESPACE=", 15) == 0 || strncmp(*e, "PMIX_SERVER_URI", 15) == 0)
            return *e;
    }
    return NULL;
}

/* A positive integer variable, or 0. */
static long umpi__env_count(const char *name)
{
    const char *v = getenv(name);
    char *end;
    long n;

    if (v == NULL || *v == '\0')
        return 0;
    n = strtol(v, &end, 10);
    return *end == '\0' && n > 0 ? n : 0;
}

static const char *umpi__env_or(const char *name, const char *def)
{
    const char *v = getenv(name);

    return v != NULL && *v != '\0' ? v : def;
}

/* Where a PMI-2 server is, for the description; NULL when none is announced. */
static const char *umpi__pmi2_in_env(char *buf, size_t len)
{
    if (getenv("PMI_FD") != NULL) {
        snprintf(buf, len, "PMI_FD=%s, rank %s", getenv("PMI_FD"),
                 umpi__env_or("PMI_RANK", umpi__env_or("PMI_ID", "(unset)")));
        return buf;
    }
    if (getenv("PMI_PORT") != NULL) {
        snprintf(buf, len, "PMI_PORT=%s, rank %s", getenv("PMI_PORT"),
                 umpi__env_or("PMI_ID", umpi__env_or("PMI_RANK", "(unset)")));
        return buf;
    }
    return NULL;
}

/*
 * Traces of a launcher that started several processes and offers none of our interfaces. srun sets
 * SLURM_STEP_NUM_TASKS and SLURM_PROCID in the tasks of a step (not in a batch script or an salloc
 * shell, where a program runs alone); PMI_SIZE is what PMI launchers set next to their PMI_FD/PORT.
 */
static int umpi__orphan_launch(char *why, size_t len)
{
    long n = umpi__env_count("SLURM_STEP_NUM_TASKS");

    if (n > 1 && getenv("SLURM_PROCID") != NULL) {
        snprintf(why, len,
                 "started by srun as task %s of %ld without a PMI: run srun --mpi=pmix or srun --mpi=pmi2 "
                 "(or set UMPI_PMI=singleton to run every task as a separate singleton)",
                 getenv("SLURM_PROCID"), n);
        return 1;
    }
    n = umpi__env_count("PMI_SIZE");
    if (n > 1) {
        snprintf(why, len,
                 "started as rank %s of %ld (PMI_RANK, PMI_SIZE) but the launcher gave neither PMI_FD nor "
                 "PMI_PORT to reach it: umpi speaks PMIx and PMI-2 (or set UMPI_PMI=singleton to run a "
                 "separate singleton)", umpi__env_or("PMI_RANK", "?"), n);
        return 1;
    }
    return 0;
}

umpi_status_t umpi_pmi_choose(int *kind, char *how, size_t len)
{
    const char *want = umpi_config.pmi != NULL ? umpi_config.pmi : "auto";
    const char *pmix = umpi__pmix_server_in_env(), *pmi2;
    char where[160];

    pmi2 = umpi__pmi2_in_env(where, sizeof(where));
    if (strcmp(want, "singleton") == 0) {
        *kind = UMPI_PMI_SINGLETON;
        snprintf(how, len, "singleton (UMPI_PMI=singleton)");
        return UMPI_OK;
    }
    if (strcmp(want, "pmix") == 0 || (strcmp(want, "auto") == 0 && pmix != NULL)) {
        if (pmix == NULL) {
            snprintf(how, len, "UMPI_PMI=pmix but no PMIx server in the environment (PMIX_NAMESPACE and "
                               "PMIX_SERVER_URI* are unset): start the program with mpirun or srun --mpi=pmix");
            return UMPI_ERR_PMI;
        }
        *kind = UMPI_PMI_PMIX;
        snprintf(how, len, "PMIx (%.60s%s)", pmix, strlen(pmix) > 60 ? "..." : "");
        return UMPI_OK;
    }
    if (strcmp(want, "pmi2") == 0 || (strcmp(want, "auto") == 0 && pmi2 != NULL)) {
        if (pmi2 == NULL) {
            snprintf(how, len, "UMPI_PMI=pmi2 but no PMI-2 server in the environment (PMI_FD and PMI_PORT are "
                               "unset): start the program with srun --mpi=pmi2 or mpiexec.hydra");
            return UMPI_ERR_PMI;
        }
        *kind = UMPI_PMI_PMI2;
        snprintf(how, len, "PMI-2 (%s)", pmi2);
        return UMPI_OK;
    }
    if (strcmp(want, "auto") != 0) {
        snprintf(how, len, "UMPI_PMI='%s' is not one of auto, pmix, pmi2, singleton", want);
        return UMPI_ERR_PMI;
    }
    if (umpi__orphan_launch(how, len))
        return UMPI_ERR_PMI;
    *kind = UMPI_PMI_SINGLETON;
    snprintf(how, len, "singleton (no process manager in the environment)");
    return UMPI_OK;
}

/* ---- the interface ---------------------------------------------------------------------------- */

umpi_status_t umpi_pmi_init(struct umpi_pmi_info *info)
{
    char how[512];
    int kind = UMPI_PMI_SINGLETON;
    umpi_status_t st = umpi_pmi_choose(&kind, how, sizeof(how));

    if (st != UMPI_OK) {
        umpi_status_msg("%s", how);
        return st;
    }
    switch (kind) {
    case UMPI_PMI_PMIX:
        st = umpi_pmix_init(info, &umpi__pmi.node_of);
        break;
    case UMPI_PMI_PMI2:
        st = umpi_pmi2_init(info, &umpi__pmi.node_of);
        break;
    default:
        *info = (struct umpi_pmi_info){
            .rank = 0, .size = 1, .appnum = 0, .universe_size = 1,
            .local_rank = 0, .local_size = 1, .node_id = 0, .singleton = 1,
        };
        break;
    }
    if (st != UMPI_OK)
        return st;
    umpi__pmi.kind = kind;
    umpi__pmi.size = info->size;
    umpi__pmi.initialized = 1;
    umpi_debug(1, "pmi: %s: rank %d of %d, node %d, local rank %d of %d", how, info->rank, info->size,
               info->node_id, info->local_rank, info->local_size);
    return UMPI_OK;
}

umpi_status_t umpi_pmi_put(const char *key, const void *value, size_t len)
{
    struct umpi__pmi_kv *kv;
    char *k;

    if (umpi__pmi.kind == UMPI_PMI_PMIX)
        return umpi_pmix_put(key, value, len);
    if (umpi__pmi.kind == UMPI_PMI_PMI2)
        return umpi_pmi2_put(key, value, len);

    kv = malloc(sizeof(*kv) + len);
    k = strdup(key);
    if (kv == NULL || k == NULL) {
        free(kv);
        free(k);
        umpi_status_msg("no memory for PMI key '%s' (%zu bytes)", key, len);
        return UMPI_ERR_NOMEM;
    }
    kv->key = k;
    kv->len = len;
    memcpy(kv->value, value, len);
    /* Newest first: a later put of the same key shadows the earlier one, as in PMIx. */
    pthread_mutex_lock(&umpi__pmi.kv_lock);
    kv->next = umpi__pmi.kv;
    umpi__pmi.kv = kv;
    pthread_mutex_unlock(&umpi__pmi.kv_lock);
    return UMPI_OK;
}

umpi_status_t umpi_pmi_fence(void)
{
    if (umpi__pmi.kind == UMPI_PMI_PMIX)
        return umpi_pmix_fence();
    if (umpi__pmi.kind == UMPI_PMI_PMI2)
        return umpi_pmi2_fence();
    return UMPI_OK;
}

static umpi_status_t umpi__singleton_get(const char *key, void **value, size_t *len)
{
    umpi_status_t st = UMPI_ERR_NOT_FOUND;

    pthread_mutex_lock(&umpi__pmi.kv_lock);
    for (struct umpi__pmi_kv *kv = umpi__pmi.kv; kv != NULL; kv = kv->next) {
        if (strcmp(kv->key, key) != 0)
            continue;
        *value = malloc(kv->len ? kv->len : 1);
        if (*value == NULL) {
            st = UMPI_ERR_NOMEM;
            break;
        }
        memcpy(*value, kv->value, kv->len);
        *len = kv->len;
        st = UMPI_OK;
        break;
    }
    pthread_mutex_unlock(&umpi__pmi.kv_lock);
    if (st == UMPI_ERR_NOT_FOUND)
        umpi_status_msg("rank 0 published no key '%s' (a singleton: no process manager)", key);
    else if (st == UMPI_ERR_NOMEM)
        umpi_status_msg("no memory for PMI key '%s'", key);
    return st;
}

umpi_status_t umpi_pmi_get(int rank, const char *key, void **value, size_t *len)
{
    if (rank < 0 || rank >= umpi__pmi.size) {
        umpi_status_msg("PMI get of key '%s' from rank %d: no such rank (job size %d)", key, rank,
                        umpi__pmi.size);
        return UMPI_ERR_INTERN;
    }
    if (umpi__pmi.kind == UMPI_PMI_PMIX)
        return umpi_pmix_get(rank, key, value, len);
    if (umpi__pmi.kind == UMPI_PMI_PMI2)
        return umpi_pmi2_get(rank, key, value, len);
    return umpi__singleton_get(key, value, len);
}

int umpi_pmi_node_of(int rank)
{
    if (rank < 0 || rank >= umpi__pmi.size)
        return -1;
    return umpi__pmi.node_of != NULL ? umpi__pmi.node_of[rank] : 0;
}

void umpi_pmi_abort(int code, const char *msg)
{
    if (umpi__pmi.initialized && umpi__pmi.kind == UMPI_PMI_PMIX) {
        umpi_pmix_abort(code, msg);
    } else if (umpi__pmi.initialized && umpi__pmi.kind == UMPI_PMI_PMI2) {
        umpi_pmi2_abort(code, msg); /* prints msg */
    } else if (msg != NULL && msg[0] != '\0') {
        fprintf(stderr, "%s\n", msg);
        fflush(stderr);
    }
    _exit(code);
}

umpi_status_t umpi_pmi_finalize(void)
{
    umpi_status_t st = UMPI_OK;

    if (!umpi__pmi.initialized)
        return UMPI_OK;
    if (umpi__pmi.kind == UMPI_PMI_PMIX)
        st = umpi_pmix_finalize();
    else if (umpi__pmi.kind == UMPI_PMI_PMI2)
        st = umpi_pmi2_finalize();

    free(umpi__pmi.node_of);
    umpi__pmi.node_of = NULL;
    pthread_mutex_lock(&umpi__pmi.kv_lock);
    while (umpi__pmi.kv != NULL) {
        struct umpi__pmi_kv *kv = umpi__pmi.kv;

        umpi__pmi.kv = kv->next;
        free(kv->key);
        free(kv);
    }
    pthread_mutex_unlock(&umpi__pmi.kv_lock);
    umpi__pmi.initialized = 0;
    umpi__pmi.kind = UMPI_PMI_SINGLETON;
    umpi__pmi.size = 0;
    return st;
}
