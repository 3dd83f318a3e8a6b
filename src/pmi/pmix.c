/*
 * PMIx client (umpi_pmi_impl.h): our mpirun, `srun --mpi=pmix` and any other PMIx server.
 *
 * It asks only for standard keys and never assumes who the server is. Where servers are known to
 * differ, it takes the key that every one gets right: the node of each rank comes from the node list
 * and the ranks on each node (PMIx_Resolve_nodes / PMIx_Resolve_peers, built from PMIX_NODE_MAP and
 * PMIX_PROC_MAP), then from each rank's PMIX_HOSTNAME, and only last from PMIX_NODEID, because
 * Slurm's mpi/pmix plugin (22.05, src/plugins/mpi/pmix/pmixp_client.c) stores the *local* node's id
 * as every rank's PMIX_NODEID.
 */
#include "pmi/umpi_pmi_impl.h"

#include <pmix.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static struct {
    pmix_proc_t me;
    pmix_proc_t job;     /* my nspace, PMIX_RANK_WILDCARD: job-level keys */
    const int *node_of;  /* the node map this client made (pmi.c owns it), size ranks */
    int size;
} umpi__pmix;

/* The one place PMIx errors become umpi statuses; the message keeps the call and PMIx's cause. */
static umpi_status_t umpi__pmix_error(const char *call, pmix_status_t rc)
{
    umpi_status_msg("%s failed: %s", call, PMIx_Error_string(rc));
    return UMPI_ERR_PMI;
}

/* Reads a key of proc from this process's copy of the job data, never from the server
 * (PMIX_OPTIONAL). The server's keys (job size, ranks, nodes: every data store pushes them to the
 * client when it connects) are all there, so for them a key absent here is absent, and asking the
 * server again would only wait. What the ranks publish may not be: umpi_pmix_get says where. */
static pmix_status_t umpi__get(const pmix_proc_t *proc, const char *key, pmix_value_t **val)
{
    pmix_info_t info;
    pmix_status_t rc;
    bool optional = true;

    PMIX_INFO_CONSTRUCT(&info);
    PMIX_INFO_LOAD(&info, PMIX_OPTIONAL, &optional, PMIX_BOOL);
    rc = PMIx_Get(proc, key, &info, 1, val);
    PMIX_INFO_DESTRUCT(&info);
    return rc;
}

/* Reads a numeric key of proc. */
static umpi_status_t umpi__get_number(const pmix_proc_t *proc, const char *key, int *out)
{
    pmix_value_t *val = NULL;
    pmix_status_t rc = umpi__get(proc, key, &val);
    long n = 0;

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

/* ---- node of every rank ----------------------------------------------------------------------- */

/* Node list, then the ranks of each node: node ids are positions in the list, the same everywhere. */
static int umpi__nodes_by_peers(int size, int *node_of)
{
    char *list = NULL, *save = NULL;
    int id = 0, placed = 0;

    if (PMIx_Resolve_nodes(umpi__pmix.me.nspace, &list) != PMIX_SUCCESS || list == NULL)
        return 0;
    for (char *host = strtok_r(list, ",", &save); host != NULL; host = strtok_r(NULL, ",", &save), id++) {
        pmix_proc_t *procs = NULL;
        size_t n = 0;

        if (PMIx_Resolve_peers(host, umpi__pmix.me.nspace, &procs, &n) != PMIX_SUCCESS)
            continue;
        for (size_t i = 0; i < n; i++) {
            int r = (int)procs[i].rank;

            if (PMIX_CHECK_NSPACE(procs[i].nspace, umpi__pmix.me.nspace) && r >= 0 && r < size &&
                node_of[r] < 0) {
                node_of[r] = id;
                placed++;
            }
        }
        if (procs != NULL)
            PMIX_PROC_FREE(procs, n);
    }
    free(list);
    return placed == size;
}

/* Each rank's PMIX_HOSTNAME: a node's id is the rank order of its first appearance. */
static int umpi__nodes_by_hostname(int size, int *node_of)
{
    char **first = calloc((size_t)size, sizeof(*first)); /* hostname of node k */
    int nnodes = 0, ok = first != NULL;

    for (int r = 0; ok && r < size; r++) {
        pmix_proc_t proc;
        pmix_value_t *val = NULL;
        int k = 0;

        PMIX_LOAD_PROCID(&proc, umpi__pmix.me.nspace, (pmix_rank_t)r);
        if (umpi__get(&proc, PMIX_HOSTNAME, &val) != PMIX_SUCCESS) {
            ok = 0;
            break;
        }
        if (val->type != PMIX_STRING || val->data.string == NULL) {
            PMIX_VALUE_RELEASE(val);
            ok = 0;
            break;
        }
        while (k < nnodes && strcmp(first[k], val->data.string) != 0)
            k++;
        if (k == nnodes)
            first[nnodes++] = strdup(val->data.string);
        PMIX_VALUE_RELEASE(val);
        ok = first[k] != NULL;
        node_of[r] = k;
    }
    for (int k = 0; first != NULL && k < nnodes; k++)
        free(first[k]);
    free(first);
    return ok;
}

/* Each rank's PMIX_NODEID; a rank without one is on an unknown node (-1). */
static void umpi__nodes_by_nodeid(int size, int *node_of)
{
    for (int r = 0; r < size; r++) {
        pmix_proc_t proc;

        PMIX_LOAD_PROCID(&proc, umpi__pmix.me.nspace, (pmix_rank_t)r);
        if (umpi__get_number(&proc, PMIX_NODEID, &node_of[r]) != UMPI_OK)
            node_of[r] = -1;
    }
}

static umpi_status_t umpi__node_map(int size, int **out)
{
    int *node_of = malloc((size_t)size * sizeof(int));
    const char *how = "PMIx_Resolve_peers";

    if (node_of == NULL) {
        umpi_status_msg("no memory for the node map of %d ranks", size);
        return UMPI_ERR_NOMEM;
    }
    for (int r = 0; r < size; r++)
        node_of[r] = -1;
    if (!umpi__nodes_by_peers(size, node_of)) {
        how = "PMIX_HOSTNAME";
        if (!umpi__nodes_by_hostname(size, node_of)) {
            how = "PMIX_NODEID";
            umpi__nodes_by_nodeid(size, node_of);
        }
    }
    umpi_debug(1, "pmix: node of every rank from %s", how);
    *out = node_of;
    return UMPI_OK;
}

/* ---- the interface ---------------------------------------------------------------------------- */

umpi_status_t umpi_pmix_init(struct umpi_pmi_info *info, int **node_of)
{
    umpi_status_t st;
    pmix_status_t rc;
    int size = 0, count = 0;

    rc = PMIx_Init(&umpi__pmix.me, NULL, 0);
    if (rc != PMIX_SUCCESS)
        return umpi__pmix_error("PMIx_Init", rc);
    PMIX_LOAD_PROCID(&umpi__pmix.job, umpi__pmix.me.nspace, PMIX_RANK_WILDCARD);

    *info = (struct umpi_pmi_info){ .rank = (int)umpi__pmix.me.rank };
    st = umpi__get_number(&umpi__pmix.job, PMIX_JOB_SIZE, &size);
    if (st != UMPI_OK)
        goto fail;
    if (size < 1 || info->rank < 0 || info->rank >= size) {
        umpi_status_msg("PMIx reports rank %d in a job of size %d", info->rank, size);
        st = UMPI_ERR_PMI;
        goto fail;
    }
    info->size = size;
    st = umpi__get_number_or(&umpi__pmix.job, PMIX_APPNUM, 0, &info->appnum);
    if (st == UMPI_OK)
        st = umpi__get_number_or(&umpi__pmix.job, PMIX_UNIV_SIZE, size, &info->universe_size);
    if (st == UMPI_OK)
        st = umpi__get_number(&umpi__pmix.me, PMIX_LOCAL_RANK, &info->local_rank);
    if (st == UMPI_OK)
        st = umpi__get_number(&umpi__pmix.job, PMIX_LOCAL_SIZE, &info->local_size);
    if (st == UMPI_OK)
        st = umpi__node_map(size, node_of);
    if (st != UMPI_OK)
        goto fail;
    if (info->universe_size < size)
        info->universe_size = size;
    umpi__pmix.node_of = *node_of;
    umpi__pmix.size = size;
    info->node_id = (*node_of)[info->rank];
    for (int r = 0; r < size; r++)
        count += (*node_of)[r] == info->node_id;
    if (count != info->local_size)
        umpi_debug(1, "pmix: PMIX_LOCAL_SIZE is %d but the node map puts %d ranks on this node", info->local_size,
                   count);
    return UMPI_OK;

fail:
    PMIx_Finalize(NULL, 0);
    return st;
}

umpi_status_t umpi_pmix_put(const char *key, const void *value, size_t len)
{
    pmix_value_t val;
    pmix_status_t rc;

    if (strlen(key) > PMIX_MAX_KEYLEN) {
        umpi_status_msg("PMI key '%s' is longer than %d characters", key, PMIX_MAX_KEYLEN);
        return UMPI_ERR_INTERN;
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

umpi_status_t umpi_pmix_fence(void)
{
    pmix_info_t info;
    pmix_status_t rc;
    bool collect = true;

    rc = PMIx_Commit();
    if (rc != PMIX_SUCCESS)
        return umpi__pmix_error("PMIx_Commit", rc);
    /* Collecting the data brings every rank's puts to every server before the fence ends, so that
     * a later get finds them without waiting (umpi_pmix_get). */
    PMIX_INFO_CONSTRUCT(&info);
    PMIX_INFO_LOAD(&info, PMIX_COLLECT_DATA, &collect, PMIX_BOOL);
    rc = PMIx_Fence(NULL, 0, &info, 1);
    PMIX_INFO_DESTRUCT(&info);
    if (rc != PMIX_SUCCESS)
        return umpi__pmix_error("PMIx_Fence", rc);
    return UMPI_OK;
}

/*
 * Asks the server for a key of proc that this process's copy of the job data lacks, without
 * waiting for what will not come. The server holds what the last collecting fence brought (libpmix
 * 4.2, pmix_server.c: it stores the fence's data with its own data store, then releases the
 * clients) and what the ranks of its node committed. For a rank of this node a miss there is
 * final: PMIX_IMMEDIATE makes the server say so at once rather than wait for the key (2 s, or
 * PMIX_TIMEOUT, for a local client's). For a rank of another node the server may still ask that
 * node's server (direct modex, where the launcher's fence did not collect the data, e.g. Slurm's
 * PMIxFenceBarrier): PMIX_TIMEOUT bounds that.
 */
/* The node of a rank by the map made at init (-1: unknown). */
static int umpi__node_of(int rank)
{
    return umpi__pmix.node_of != NULL && rank >= 0 && rank < umpi__pmix.size ? umpi__pmix.node_of[rank] : -1;
}

static pmix_status_t umpi__get_from_server(const pmix_proc_t *proc, const char *key, pmix_value_t **val)
{
    pmix_info_t info[2];
    pmix_status_t rc;
    int node = umpi__node_of((int)proc->rank), timeout = umpi_config.pmi_timeout;
    bool immediate = true;
    size_t n = 0;

    PMIX_INFO_CONSTRUCT(&info[0]);
    PMIX_INFO_CONSTRUCT(&info[1]);
    PMIX_INFO_LOAD(&info[n++], PMIX_TIMEOUT, &timeout, PMIX_INT);
    if (node >= 0 && node == umpi__node_of((int)umpi__pmix.me.rank))
        PMIX_INFO_LOAD(&info[n++], PMIX_IMMEDIATE, &immediate, PMIX_BOOL);
    rc = PMIx_Get(proc, key, info, n, val);
    PMIX_INFO_DESTRUCT(&info[0]);
    PMIX_INFO_DESTRUCT(&info[1]);
    return rc;
}

umpi_status_t umpi_pmix_get(int rank, const char *key, void **value, size_t *len)
{
    umpi_status_t st = UMPI_OK;
    pmix_proc_t proc;
    pmix_value_t *val = NULL;
    pmix_status_t rc;

    /*
     * Here first, at no cost to the server. With libpmix's shared-memory data store (gds ds21 or
     * ds12, its default) a collecting fence leaves every rank's data in this process's view of
     * the store. With the hash store (PMIX_MCA_gds=hash, and builds without shared memory) the
     * fence answers the clients with a status only and the data stays at the server. So a miss
     * asks the server: under the hash store for the first key of each rank (the answer, all of
     * that rank's data, is kept here for its next keys), under shared memory only for a key that
     * is absent or that a fence without data collection left at another node.
     */
    PMIX_LOAD_PROCID(&proc, umpi__pmix.me.nspace, (pmix_rank_t)rank);
    rc = umpi__get(&proc, key, &val);
    if (rc == PMIX_ERR_NOT_FOUND)
        rc = umpi__get_from_server(&proc, key, &val);
    if (rc == PMIX_ERR_NOT_FOUND || rc == PMIX_ERR_PROC_ENTRY_NOT_FOUND) {
        umpi_status_msg("rank %d published no key '%s' (PMIx_Get: the PMIx server answers %s)", rank, key,
                        PMIx_Error_string(rc));
        return UMPI_ERR_NOT_FOUND;
    }
    if (rc != PMIX_SUCCESS) {
        umpi_status_msg("PMIx_Get of key '%s' of rank %d failed: %s", key, rank, PMIx_Error_string(rc));
        return UMPI_ERR_PMI;
    }
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

void umpi_pmix_abort(int code, const char *msg)
{
    /* The launcher ends every rank; returning means it could not. umpi's mpirun (namespace
     * "umpi.<pid>") prints msg with the rank; others need not (Slurm's pmix plugin does not):
     * then the rank says it itself, or the reason of the abort would be lost. */
    if (msg != NULL && msg[0] != '\0' && strncmp(umpi__pmix.me.nspace, "umpi.", 5) != 0) {
        fprintf(stderr, "%s\n", msg);
        fflush(stderr);
        /* srun forwards output asynchronously and kills the step on the abort: give the line
         * time to leave this node first (as the PMI-2 client does) */
        usleep(100000);
    }
    PMIx_Abort(code, msg, NULL, 0);
}

umpi_status_t umpi_pmix_finalize(void)
{
    pmix_status_t rc = PMIx_Finalize(NULL, 0);

    umpi__pmix.node_of = NULL;   /* pmi.c frees it */
    if (rc != PMIX_SUCCESS)
        return umpi__pmix_error("PMIx_Finalize", rc);
    return UMPI_OK;
}
