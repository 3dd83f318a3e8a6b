/*
 * PMIx client: the one process-management interface of umpi (src/pmi/umpi_pmi.h).
 *
 * The same code serves our own mpirun, `srun --mpi=pmix` and any other PMIx server: it asks only
 * for standard keys and never assumes who the server is. Without a server in the environment the
 * process is a singleton and a small local table stands in for the key-value store, so that the
 * layers above never need a special case.
 */
#include "pmi/umpi_pmi.h"

#include <pmix.h>
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
    int singleton;
    int size;
    pmix_proc_t me;
    pmix_proc_t job;        /* my nspace, PMIX_RANK_WILDCARD: job-level keys */
    int *node_of;           /* cache of PMIX_NODEID per rank; UMPI__NODE_UNKNOWN until asked */
    pthread_mutex_t kv_lock;
    struct umpi__pmi_kv *kv;
} umpi__pmi = { .kv_lock = PTHREAD_MUTEX_INITIALIZER };

#define UMPI__NODE_UNKNOWN (-2)

/* The one place PMIx errors become umpi statuses; the message keeps the call and PMIx's cause. */
static umpi_status_t umpi__pmix_error(const char *call, pmix_status_t rc)
{
    umpi_status_msg("%s failed: %s", call, PMIx_Error_string(rc));
    return UMPI_ERR_PMI;
}

/*
 * A PMIx server announces itself to its clients through the environment (PMIx_server_setup_fork
 * sets PMIX_NAMESPACE and PMIX_SERVER_URI*). These are the launcher's protocol, not umpi knobs,
 * which is why they are looked up here rather than in the knob table.
 */
static int umpi__pmix_server_in_env(void)
{
    for (char **e = environ; e != NULL && *e != NULL; e++) {
        if (strncmp(*e, "PMIX_NAMESPACE=", 15) == 0 || strncmp(*e, "PMIX_SERVER_URI", 15) == 0)
            return 1;
    }
    return 0;
}

/* Reads a numeric key of proc. PMIX_OPTIONAL: job and proc data is pushed to the client at
 * connect time, so a key absent locally is absent, and asking the server again would only wait. */
static umpi_status_t umpi__get_number(const pmix_proc_t *proc, const char *key, int *out)
{
    pmix_info_t info;
    pmix_value_t *val = NULL;
    pmix_status_t rc;
    long n = 0;
    bool optional = true;

    PMIX_INFO_CONSTRUCT(&info);
    PMIX_INFO_LOAD(&info, PMIX_OPTIONAL, &optional, PMIX_BOOL);
    rc = PMIx_Get(proc, key, &info, 1, &val);
    PMIX_INFO_DESTRUCT(&info);
    if (rc == PMIX_ERR_NOT_FOUND || rc == PMIX_ERR_PROC_ENTRY_NOT_FOUND) {
        umpi_status_msg("PMIx_Get(%s) for rank %d: key not provided by the process manager", key,
                        (int)proc->rank);
        return UMPI_ERR_NOT_FOUND;
    }
    if (rc != PMIX_SUCCESS)
        return umpi__pmix_error("PMIx_Get", rc);

    PMIX_VALUE_GET_NUMBER(rc, val, n, long);
    PMIX_VALUE_RELEASE(val);
    if (rc != PMIX_SUCCESS) {
        umpi_status_msg("PMIx_Get(%s): value is not a number", key);
        return UMPI_ERR_PMI;
    }
    *out = (int)n;
    return UMPI_OK;
}

/* Like umpi__get_number, but a missing key takes the default (servers differ in what they
 * provide beyond the job size). */
static umpi_status_t umpi__get_number_or(const pmix_proc_t *proc, const char *key, int def, int *out)
{
    umpi_status_t st = umpi__get_number(proc, key, out);

    if (st == UMPI_ERR_NOT_FOUND) {
        *out = def;
        return UMPI_OK;
    }
    return st;
}

/*
 * Node of every rank, numbered by the order of PMIx_Resolve_nodes, for jobs that span nodes.
 * Servers need not give PMIX_NODEID for ranks on other nodes (Slurm's pmix plugin gives it for
 * local ranks only), and every rank must number the nodes alike, so the map is built from
 * what every client sees the same: the job's node list and each node's peers.
 * On success node_of[] holds every rank's node; on failure it is left as it was.
 */
static umpi_status_t umpi__node_map_by_host(int size, int *node_of)
{
    char *nodes = NULL, *save = NULL, *host;
    int *map = malloc((size_t)size * sizeof(int)), nnodes = 0;
    umpi_status_t st = UMPI_ERR_PMI;
    pmix_status_t rc;

    if (map == NULL)
        return UMPI_ERR_NOMEM;
    for (int i = 0; i < size; i++)
        map[i] = -1;
    rc = PMIx_Resolve_nodes(umpi__pmi.me.nspace, &nodes);
    if (rc != PMIX_SUCCESS || nodes == NULL)
        goto out;
    for (host = strtok_r(nodes, ",", &save); host != NULL; host = strtok_r(NULL, ",", &save)) {
        pmix_proc_t *procs = NULL;
        size_t n = 0;

        rc = PMIx_Resolve_peers(host, umpi__pmi.me.nspace, &procs, &n);
        if (rc != PMIX_SUCCESS)
            goto out;
        for (size_t k = 0; k < n; k++)
            if (procs[k].rank < (pmix_rank_t)size)
                map[procs[k].rank] = nnodes;
        PMIX_PROC_FREE(procs, n);
        nnodes++;
    }
    for (int i = 0; i < size; i++)
        if (map[i] < 0)
            goto out;   /* a rank on no node: not a map to trust */
    memcpy(node_of, map, (size_t)size * sizeof(int));
    st = UMPI_OK;
out:
    free(nodes);
    free(map);
    return st;
}

static umpi_status_t umpi__init_singleton(struct umpi_pmi_info *info)
{
    umpi__pmi.singleton = 1;
    umpi__pmi.size = 1;
    *info = (struct umpi_pmi_info){
        .rank = 0, .size = 1, .appnum = 0, .universe_size = 1,
        .local_rank = 0, .local_size = 1, .node_id = 0, .singleton = 1,
    };
    return UMPI_OK;
}

umpi_status_t umpi_pmi_init(struct umpi_pmi_info *info)
{
    umpi_status_t st = UMPI_OK;
    pmix_status_t rc;
    int size = 0;

    if (!umpi__pmix_server_in_env()) {
        st = umpi__init_singleton(info);
        umpi__pmi.initialized = 1;
        return st;
    }

    rc = PMIx_Init(&umpi__pmi.me, NULL, 0);
    if (rc != PMIX_SUCCESS)
        return umpi__pmix_error("PMIx_Init", rc);
    PMIX_LOAD_PROCID(&umpi__pmi.job, umpi__pmi.me.nspace, PMIX_RANK_WILDCARD);

    *info = (struct umpi_pmi_info){ .rank = (int)umpi__pmi.me.rank };
    st = umpi__get_number(&umpi__pmi.job, PMIX_JOB_SIZE, &size);
    if (st != UMPI_OK)
        goto fail;
    if (size < 1 || info->rank < 0 || info->rank >= size) {
        umpi_status_msg("PMIx reports rank %d in a job of size %d", info->rank, size);
        st = UMPI_ERR_PMI;
        goto fail;
    }
    info->size = size;
    st = umpi__get_number_or(&umpi__pmi.job, PMIX_APPNUM, 0, &info->appnum);
    if (st == UMPI_OK)
        st = umpi__get_number_or(&umpi__pmi.job, PMIX_UNIV_SIZE, size, &info->universe_size);
    if (st == UMPI_OK)
        st = umpi__get_number(&umpi__pmi.me, PMIX_LOCAL_RANK, &info->local_rank);
    if (st == UMPI_OK)
        st = umpi__get_number(&umpi__pmi.job, PMIX_LOCAL_SIZE, &info->local_size);
    if (st == UMPI_OK)
        st = umpi__get_number_or(&umpi__pmi.me, PMIX_NODEID, 0, &info->node_id);
    if (st != UMPI_OK)
        goto fail;
    if (info->universe_size < size)
        info->universe_size = size;

    umpi__pmi.node_of = malloc((size_t)size * sizeof(int));
    if (umpi__pmi.node_of == NULL) {
        umpi_status_msg("no memory for the node map of %d ranks", size);
        st = UMPI_ERR_NOMEM;
        goto fail;
    }
    for (int i = 0; i < size; i++)
        umpi__pmi.node_of[i] = UMPI__NODE_UNKNOWN;
    umpi__pmi.node_of[info->rank] = info->node_id;
    if (info->local_size < size && umpi__node_map_by_host(size, umpi__pmi.node_of) == UMPI_OK)
        info->node_id = umpi__pmi.node_of[info->rank];
    umpi__pmi.size = size;
    umpi__pmi.initialized = 1;
    return UMPI_OK;

fail:
    PMIx_Finalize(NULL, 0);
    return st;
}

umpi_status_t umpi_pmi_put(const char *key, const void *value, size_t len)
{
    pmix_value_t val;
    pmix_status_t rc;

    if (strlen(key) > PMIX_MAX_KEYLEN) {
        umpi_status_msg("PMI key '%s' is longer than %d characters", key, PMIX_MAX_KEYLEN);
        return UMPI_ERR_INTERN;
    }
    if (umpi__pmi.singleton) {
        struct umpi__pmi_kv *kv = malloc(sizeof(*kv) + len);
        char *k = strdup(key);

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

    /* PMIx_Put copies the bytes, so the caller's buffer can be lent without a copy here. */
    PMIX_VALUE_CONSTRUCT(&val);
    val.type = PMIX_BYTE_OBJECT;
    val.data.bo.bytes = (char *)value;
    val.data.bo.size = len;
    rc = PMIx_Put(PMIX_GLOBAL, key, &val);
    if (rc != PMIX_SUCCESS)
        return umpi__pmix_error("PMIx_Put", rc);
    return UMPI_OK;
}

umpi_status_t umpi_pmi_fence(void)
{
    pmix_info_t info;
    pmix_status_t rc;
    bool collect = true;

    if (umpi__pmi.singleton)
        return UMPI_OK;

    rc = PMIx_Commit();
    if (rc != PMIX_SUCCESS)
        return umpi__pmix_error("PMIx_Commit", rc);
    /* Collecting the data makes every later get a local lookup (no server round trip). */
    PMIX_INFO_CONSTRUCT(&info);
    PMIX_INFO_LOAD(&info, PMIX_COLLECT_DATA, &collect, PMIX_BOOL);
    rc = PMIx_Fence(NULL, 0, &info, 1);
    PMIX_INFO_DESTRUCT(&info);
    if (rc != PMIX_SUCCESS)
        return umpi__pmix_error("PMIx_Fence", rc);
    return UMPI_OK;
}

static umpi_status_t umpi__singleton_get(int rank, const char *key, void **value, size_t *len)
{
    umpi_status_t st = UMPI_ERR_NOT_FOUND;

    pthread_mutex_lock(&umpi__pmi.kv_lock);
    for (struct umpi__pmi_kv *kv = umpi__pmi.kv; rank == 0 && kv != NULL; kv = kv->next) {
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
        umpi_status_msg("PMI key '%s' of rank %d not found (singleton)", key, rank);
    else if (st == UMPI_ERR_NOMEM)
        umpi_status_msg("no memory for PMI key '%s'", key);
    return st;
}

umpi_status_t umpi_pmi_get(int rank, const char *key, void **value, size_t *len)
{
    umpi_status_t st = UMPI_OK;
    pmix_proc_t proc;
    pmix_info_t info;
    pmix_value_t *val = NULL;
    pmix_status_t rc;
    bool optional = true;

    if (rank < 0 || rank >= umpi__pmi.size) {
        umpi_status_msg("PMI get of key '%s' from rank %d: no such rank (job size %d)", key, rank,
                        umpi__pmi.size);
        return UMPI_ERR_INTERN;
    }
    if (umpi__pmi.singleton)
        return umpi__singleton_get(rank, key, value, len);

    /* After a collecting fence every rank's data is here: PMIX_OPTIONAL makes a missing key an
     * immediate NOT_FOUND instead of a request to the server that waits for it to appear. */
    PMIX_LOAD_PROCID(&proc, umpi__pmi.me.nspace, (pmix_rank_t)rank);
    PMIX_INFO_CONSTRUCT(&info);
    PMIX_INFO_LOAD(&info, PMIX_OPTIONAL, &optional, PMIX_BOOL);
    rc = PMIx_Get(&proc, key, &info, 1, &val);
    PMIX_INFO_DESTRUCT(&info);
    if (rc == PMIX_ERR_NOT_FOUND) {
        umpi_status_msg("PMIx_Get: key '%s' of rank %d not found", key, rank);
        return UMPI_ERR_NOT_FOUND;
    }
    if (rc != PMIX_SUCCESS)
        return umpi__pmix_error("PMIx_Get", rc);
    if (val->type != PMIX_BYTE_OBJECT) {
        umpi_status_msg("PMIx_Get: key '%s' of rank %d has PMIx type %d, not bytes", key, rank,
                        (int)val->type);
        st = UMPI_ERR_PMI;
        goto out;
    }
    *value = malloc(val->data.bo.size ? val->data.bo.size : 1);
    if (*value == NULL) {
        umpi_status_msg("no memory for PMI key '%s' (%zu bytes)", key, val->data.bo.size);
        st = UMPI_ERR_NOMEM;
        goto out;
    }
    memcpy(*value, val->data.bo.bytes, val->data.bo.size);
    *len = val->data.bo.size;
out:
    PMIX_VALUE_RELEASE(val);
    return st;
}

int umpi_pmi_node_of(int rank)
{
    pmix_proc_t proc;
    int node;

    if (rank < 0 || rank >= umpi__pmi.size)
        return -1;
    if (umpi__pmi.singleton)
        return 0;
    /* Racing threads may both ask PMIx; they store the same value, so no lock is needed. */
    node = __atomic_load_n(&umpi__pmi.node_of[rank], __ATOMIC_RELAXED);
    if (node != UMPI__NODE_UNKNOWN)
        return node;
    PMIX_LOAD_PROCID(&proc, umpi__pmi.me.nspace, (pmix_rank_t)rank);
    if (umpi__get_number(&proc, PMIX_NODEID, &node) != UMPI_OK)
        node = -1;
    __atomic_store_n(&umpi__pmi.node_of[rank], node, __ATOMIC_RELAXED);
    return node;
}

void umpi_pmi_abort(int code, const char *msg)
{
    if (umpi__pmi.initialized && !umpi__pmi.singleton) {
        /* The launcher ends every rank; returning means it could not. umpi's mpirun (namespace
         * "umpi.<pid>") prints msg with the rank; others need not (Slurm's pmix plugin does not):
         * then the rank says it itself, or the reason of the abort would be lost. */
        if (msg != NULL && msg[0] != '\0' && strncmp(umpi__pmi.me.nspace, "umpi.", 5) != 0) {
            fprintf(stderr, "%s\n", msg);
            fflush(stderr);
        }
        PMIx_Abort(code, msg, NULL, 0);
    } else if (msg != NULL && msg[0] != '\0') {
        fprintf(stderr, "%s\n", msg);
        fflush(stderr);
    }
    _exit(code);
}

umpi_status_t umpi_pmi_finalize(void)
{
    pmix_status_t rc = PMIX_SUCCESS;

    if (!umpi__pmi.initialized)
        return UMPI_OK;
    if (!umpi__pmi.singleton)
        rc = PMIx_Finalize(NULL, 0);

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
    umpi__pmi.singleton = 0;
    umpi__pmi.size = 0;

    if (rc != PMIX_SUCCESS)
        return umpi__pmix_error("PMIx_Finalize", rc);
    return UMPI_OK;
}
