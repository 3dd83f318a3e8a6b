/*
 * mpirun's PMIx server: one namespace; the ranks of this node are its clients.
 *
 * libpmix runs its own progress thread and calls the module below from it. On one machine every
 * participant of a fence is local, so libpmix has already gathered all contributions when it
 * calls fence_nb: the blob it hands us is the whole job's data, and we hand it straight back.
 * Across machines that blob is this node's part: it goes to the main thread as a note, up the
 * tree, and the concatenation of every node's part comes back down (tree_route.c), which libpmix
 * takes in any order. The other upcalls answer PMIx at once and leave a note for the main thread,
 * which owns the job state. libpmix does not hold a finalizing client until we answer, so a
 * finalize note can arrive after the rank's exit; launch.c allows for that.
 *
 * Every node registers the whole job: each rank's node id, local rank and host name, the node
 * list in node-id order, and its own node's size, peers and leader, which is what src/pmi reads
 * (PMIX_NODEID, PMIX_LOCAL_RANK, PMIX_LOCAL_SIZE, ...), so that the ranks of one node find each
 * other and the others. (libpmix 4.2 answers PMIX_NODEID of a rank of another node from neither
 * the rank's data nor the maps; src/pmi then takes the position of the rank's PMIX_HOSTNAME in
 * PMIX_NODE_LIST, which the node map gives, in this same order.)
 */
#include "mpirun.h"

#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <hwloc.h>
#include <pmix.h>
#include <pmix_server.h>

/* ---- notes from the PMIx thread to the main thread ------------------------------------------ */

static pthread_mutex_t notes_lock = PTHREAD_MUTEX_INITIALIZER;
static struct mpirun_note *notes_head, **notes_tail = &notes_head;
static int wake_pipe[2] = { -1, -1 };
static struct mpirun_job *server_job;   /* read-only for the PMIx thread once the server runs */

static struct mpirun_note *new_note(enum mpirun_note_kind kind, int rank, const void *data,
                                    size_t len)
{
    struct mpirun_note *n = malloc(sizeof(*n) + len + 1);

    if (n == NULL) {
        /* Losing a note could hang the job; this process is in no state to go on. */
        fprintf(stderr, "%s: out of memory in the PMIx server\n", mpirun_name);
        _exit(1);
    }
    memset(n, 0, sizeof(*n));
    n->kind = kind;
    n->rank = rank;
    n->len = len;
    if (len > 0)
        memcpy(n->data, data, len);
    n->data[len] = '\0';
    return n;
}

static void queue_note(struct mpirun_note *n)
{
    char byte = 0;

    pthread_mutex_lock(&notes_lock);
    *notes_tail = n;
    notes_tail = &n->next;
    pthread_mutex_unlock(&notes_lock);
    /* A full pipe already holds a wake-up; the note is in the list either way. */
    while (write(wake_pipe[1], &byte, 1) < 0 && errno == EINTR)
        ;
}

static void post_note(enum mpirun_note_kind kind, int rank, int code, const char *msg)
{
    struct mpirun_note *n = new_note(kind, rank, msg, msg != NULL ? strlen(msg) : 0);

    n->code = code;
    queue_note(n);
}

struct mpirun_note *mpirun_server_take_note(void)
{
    struct mpirun_note *n;

    pthread_mutex_lock(&notes_lock);
    n = notes_head;
    if (n != NULL) {
        notes_head = n->next;
        if (notes_head == NULL)
            notes_tail = &notes_head;
    }
    pthread_mutex_unlock(&notes_lock);
    return n;
}

int mpirun_server_wake_fd(void)
{
    return wake_pipe[0];
}

/* ---- the server module ------------------------------------------------------------------------ */

static pmix_status_t on_connected(const pmix_proc_t *proc, void *server_object,
                                  pmix_op_cbfunc_t cbfunc, void *cbdata)
{
    post_note(MPIRUN_NOTE_CONNECTED, (int)proc->rank, 0, NULL);
    return PMIX_OPERATION_SUCCEEDED;
}

static pmix_status_t on_finalized(const pmix_proc_t *proc, void *server_object,
                                  pmix_op_cbfunc_t cbfunc, void *cbdata)
{
    post_note(MPIRUN_NOTE_FINALIZED, (int)proc->rank, 0, NULL);
    return PMIX_OPERATION_SUCCEEDED;
}

static pmix_status_t on_abort(const pmix_proc_t *proc, void *server_object, int status,
                              const char msg[], pmix_proc_t procs[], size_t nprocs,
                              pmix_op_cbfunc_t cbfunc, void *cbdata)
{
    /* Whatever subset was named, MPI_Abort ends the whole job here (the standard allows it). */
    post_note(MPIRUN_NOTE_ABORT, (int)proc->rank, status, msg);
    return PMIX_OPERATION_SUCCEEDED;
}

static pmix_status_t on_fence(const pmix_proc_t procs[], size_t nprocs, const pmix_info_t info[],
                              size_t ninfo, char *data, size_t ndata, pmix_modex_cbfunc_t cbfunc,
                              void *cbdata)
{
    struct mpirun_note *n;
    bool collect = false;

    if (server_job->tree == NULL) {
        /* All participants are ours, so libpmix's local gather is the global result. The data
         * stays libpmix's; it is valid for the duration of this call, which is when the callback
         * copies it. */
        cbfunc(PMIX_SUCCESS, data, ndata, cbdata, NULL, NULL);
        return PMIX_SUCCESS;
    }
    /* Across nodes, a fence of the whole job (what src/pmi asks for); a subset would need the
     * nodes of its members to take part, and nothing in umpi asks for one. */
    if (nprocs != 1 || procs[0].rank != PMIX_RANK_WILDCARD ||
        !PMIX_CHECK_NSPACE(procs[0].nspace, server_job->nspace))
        return PMIX_ERR_NOT_SUPPORTED;
    for (size_t i = 0; i < ninfo; i++) {
        if (PMIX_CHECK_KEY(&info[i], PMIX_COLLECT_DATA))
            collect = PMIX_INFO_TRUE(&info[i]);
    }
    n = new_note(MPIRUN_NOTE_FENCE, -1, data, collect ? ndata : 0);
    n->fence_cbfunc = (void *)cbfunc;
    n->fence_cbdata = cbdata;
    queue_note(n);
    return PMIX_SUCCESS;
}

void mpirun_server_fence_done(struct mpirun_note *fence, char *data, size_t len)
{
    pmix_modex_cbfunc_t cbfunc = (pmix_modex_cbfunc_t)fence->fence_cbfunc;

    /* libpmix calls free(data) when it is done with it. */
    cbfunc(PMIX_SUCCESS, data, len, fence->fence_cbdata, free, data);
    free(fence);
}

static pmix_status_t on_direct_modex(const pmix_proc_t *proc, const pmix_info_t info[],
                                     size_t ninfo, pmix_modex_cbfunc_t cbfunc, void *cbdata)
{
    /* libpmix asks this for a key of a rank of another node that it does not hold. Every fence of
     * the job brings every node's data to every server (on_fence, tree_route.c), and umpi's ranks
     * read keys only after one: no other server has what this one lacks. */
    return PMIX_ERR_NOT_FOUND;
}

static pmix_server_module_t module = {
    .client_connected = on_connected,
    .client_finalized = on_finalized,
    .abort = on_abort,
    .fence_nb = on_fence,
    .direct_modex = on_direct_modex,
};

/* ---- blocking wrappers for libpmix's asynchronous registration calls -------------------------- */

struct op_wait {
    pthread_mutex_t lock;
    pthread_cond_t cond;
    int done;
    pmix_status_t status;
};

static void op_done(pmix_status_t status, void *cbdata)
{
    struct op_wait *w = cbdata;

    pthread_mutex_lock(&w->lock);
    w->status = status;
    w->done = 1;
    pthread_cond_signal(&w->cond);
    pthread_mutex_unlock(&w->lock);
}

static pmix_status_t op_wait_for(struct op_wait *w, pmix_status_t rc)
{
    /* PMIX_OPERATION_SUCCEEDED: done already, no callback will come. */
    if (rc == PMIX_OPERATION_SUCCEEDED)
        return PMIX_SUCCESS;
    if (rc != PMIX_SUCCESS)
        return rc;
    pthread_mutex_lock(&w->lock);
    while (!w->done)
        pthread_cond_wait(&w->cond, &w->lock);
    pthread_mutex_unlock(&w->lock);
    return w->status;
}

#define OP_WAIT_INIT { PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, 0, PMIX_SUCCESS }

/* ---- namespace -------------------------------------------------------------------------------- */

/* Adds one key to an info list; PMIx copies the value. */
static pmix_status_t add(void *list, const char *key, const void *value, pmix_data_type_t type)
{
    return PMIx_Info_list_add(list, key, value, type);
}

/* Per-rank data: rank first (PMIx's rule for a process data array), then where it lives. */
static pmix_status_t add_proc_data(void *joblist, struct mpirun_job *job, int r)
{
    void *list = PMIx_Info_list_start();
    pmix_data_array_t darray = { 0 };
    pmix_rank_t rank = (pmix_rank_t)r;
    uint16_t local_rank = (uint16_t)job->map.local_rank[r];
    uint32_t nodeid = (uint32_t)job->map.node_of[r], appnum = 0;
    char *host = job->map.node_name[nodeid];
    pmix_status_t rc;

    if (list == NULL)
        return PMIX_ERR_NOMEM;
    rc = add(list, PMIX_RANK, &rank, PMIX_PROC_RANK);
    if (rc == PMIX_SUCCESS)
        rc = add(list, PMIX_LOCAL_RANK, &local_rank, PMIX_UINT16);
    if (rc == PMIX_SUCCESS)
        rc = add(list, PMIX_NODE_RANK, &local_rank, PMIX_UINT16);
    if (rc == PMIX_SUCCESS)
        rc = add(list, PMIX_NODEID, &nodeid, PMIX_UINT32);
    if (rc == PMIX_SUCCESS)
        rc = add(list, PMIX_APPNUM, &appnum, PMIX_UINT32);
    if (rc == PMIX_SUCCESS)
        rc = add(list, PMIX_GLOBAL_RANK, &rank, PMIX_PROC_RANK);
    if (rc == PMIX_SUCCESS)
        rc = add(list, PMIX_APP_RANK, &rank, PMIX_PROC_RANK);
    if (rc == PMIX_SUCCESS)
        rc = add(list, PMIX_HOSTNAME, host, PMIX_STRING);
    if (rc == PMIX_SUCCESS)
        rc = PMIx_Info_list_convert(list, &darray);
    if (rc == PMIX_SUCCESS)
        rc = add(joblist, PMIX_PROC_DATA, &darray, PMIX_DATA_ARRAY);
    PMIX_DATA_ARRAY_DESTRUCT(&darray);
    PMIx_Info_list_release(list);
    return rc;
}

/* Appends text to a growing string; -1 when out of memory. */
static int append(char **s, size_t *len, size_t *cap, const char *text)
{
    size_t tlen = strlen(text);

    if (*len + tlen + 1 > *cap) {
        size_t ncap = (*cap ? *cap * 2 : 256) + tlen;
        char *ns = realloc(*s, ncap);

        if (ns == NULL)
            return -1;
        *s = ns;
        *cap = ncap;
    }
    memcpy(*s + *len, text, tlen + 1);
    *len += tlen;
    return 0;
}

/* The inputs of the two maps PMIx generates: node names "a,b,c" and the ranks of each node in
 * node order, "0,1;2,3;4" (also the list of our own node's peers, "2,3"). */
static int map_strings(struct mpirun_job *job, char **nodes, char **ranks, char **peers)
{
    size_t nlen = 0, ncap = 0, rlen = 0, rcap = 0, plen = 0, pcap = 0;
    int rc = 0;

    *nodes = *ranks = *peers = NULL;
    for (int n = 0; n < job->map.nnodes && rc == 0; n++) {
        int first = 1;

        if (n > 0)
            rc |= append(nodes, &nlen, &ncap, ",") | append(ranks, &rlen, &rcap, ";");
        rc |= append(nodes, &nlen, &ncap, job->map.node_name[n]);
        for (int r = 0; r < job->np && rc == 0; r++) {
            char num[16];

            if (job->map.node_of[r] != n)
                continue;
            snprintf(num, sizeof(num), first ? "%d" : ",%d", r);
            first = 0;
            rc |= append(ranks, &rlen, &rcap, num);
            if (n == job->my_node)
                rc |= append(peers, &plen, &pcap, num);
        }
    }
    if (rc == 0 && *peers == NULL)
        rc = append(peers, &plen, &pcap, "");
    return rc;
}

static pmix_status_t register_nspace(struct mpirun_job *job)
{
    struct op_wait w = OP_WAIT_INIT;
    void *list = PMIx_Info_list_start();
    pmix_data_array_t darray = { 0 };
    char *nodes = NULL, *ranks = NULL, *peers = NULL, *node_map = NULL, *proc_map = NULL;
    uint32_t np = (uint32_t)job->np, one = 1, zero = 0;
    uint32_t nnodes = (uint32_t)job->map.nnodes, my_node = (uint32_t)job->my_node;
    uint32_t nlocal = (uint32_t)job->nlocal;
    pmix_rank_t leader = 0;
    pmix_status_t rc = PMIX_ERR_NOMEM;

    for (int r = 0; r < job->np; r++) {
        if (job->map.node_of[r] == job->my_node) {
            leader = (pmix_rank_t)r;
            break;
        }
    }
    if (list == NULL || map_strings(job, &nodes, &ranks, &peers) < 0)
        goto out;
    rc = PMIx_generate_regex(nodes, &node_map);
    if (rc == PMIX_SUCCESS)
        rc = PMIx_generate_ppn(ranks, &proc_map);
    if (rc == PMIX_SUCCESS)
        rc = add(list, PMIX_JOBID, job->nspace, PMIX_STRING);
    if (rc == PMIX_SUCCESS)
        rc = add(list, PMIX_UNIV_SIZE, &np, PMIX_UINT32);
    if (rc == PMIX_SUCCESS)
        rc = add(list, PMIX_JOB_SIZE, &np, PMIX_UINT32);
    if (rc == PMIX_SUCCESS)
        rc = add(list, PMIX_MAX_PROCS, &np, PMIX_UINT32);
    if (rc == PMIX_SUCCESS)
        rc = add(list, PMIX_APP_SIZE, &np, PMIX_UINT32);
    if (rc == PMIX_SUCCESS)
        rc = add(list, PMIX_JOB_NUM_APPS, &one, PMIX_UINT32);
    if (rc == PMIX_SUCCESS)
        rc = add(list, PMIX_APPNUM, &zero, PMIX_UINT32);
    if (rc == PMIX_SUCCESS)
        rc = add(list, PMIX_NUM_NODES, &nnodes, PMIX_UINT32);
    if (rc == PMIX_SUCCESS)
        rc = add(list, PMIX_NODE_MAP, node_map, PMIX_REGEX);
    if (rc == PMIX_SUCCESS)
        rc = add(list, PMIX_PROC_MAP, proc_map, PMIX_REGEX);
    if (rc == PMIX_SUCCESS)
        rc = add(list, PMIX_LOCAL_SIZE, &nlocal, PMIX_UINT32);
    if (rc == PMIX_SUCCESS)
        rc = add(list, PMIX_NODE_SIZE, &nlocal, PMIX_UINT32);
    if (rc == PMIX_SUCCESS)
        rc = add(list, PMIX_LOCAL_PEERS, peers, PMIX_STRING);
    if (rc == PMIX_SUCCESS)
        rc = add(list, PMIX_LOCALLDR, &leader, PMIX_PROC_RANK);
    if (rc == PMIX_SUCCESS)
        rc = add(list, PMIX_APPLDR, &zero, PMIX_PROC_RANK);
    if (rc == PMIX_SUCCESS)
        rc = add(list, PMIX_HOSTNAME, job->hostname, PMIX_STRING);
    if (rc == PMIX_SUCCESS)
        rc = add(list, PMIX_NODEID, &my_node, PMIX_UINT32);
    for (int r = 0; r < job->np && rc == PMIX_SUCCESS ; r++)
        rc = add_proc_data(list, job, r);
    if (rc == PMIX_SUCCESS)
        rc = PMIx_Info_list_convert(list, &darray);
    if (rc == PMIX_SUCCESS)
        rc = op_wait_for(&w, PMIx_server_register_nspace(job->nspace, job->nlocal, darray.array,
                                                         darray.size, op_done, &w));
out:
    if (rc != PMIX_SUCCESS)
        mpirun_error("cannot register the job with the PMIx server: %s", PMIx_Error_string(rc));
    PMIX_DATA_ARRAY_DESTRUCT(&darray);
    if (list != NULL)
        PMIx_Info_list_release(list);
    free(nodes);
    free(ranks);
    free(peers);
    free(node_map);
    free(proc_map);
    return rc;
}

/*
 * The node's topology, for libpmix. Left to itself, libpmix discovers it with every hwloc
 * component, I/O devices included: reading the PCI tree and probing for X11 displays (GL) takes
 * tens of milliseconds of every start, on every node. PMIx needs the processors and memory only
 * (for locality); the ranks discover what they need themselves.
 */
static hwloc_topology_t server_topo;

static void load_topology(void)
{
    if (hwloc_topology_init(&server_topo) != 0) {
        server_topo = NULL;
        return;
    }
    hwloc_topology_set_io_types_filter(server_topo, HWLOC_TYPE_FILTER_KEEP_NONE);
    if (hwloc_topology_load(server_topo) != 0) {
        hwloc_topology_destroy(server_topo);
        server_topo = NULL;
    }
}

int mpirun_server_start(struct mpirun_job *job)
{
    pmix_topology_t topo = { .source = "hwloc" };
    const char *base = getenv("TMPDIR");
    void *list = NULL;
    pmix_data_array_t darray = { 0 };
    pmix_status_t rc;
    bool no = false;

    uint32_t nodeid = (uint32_t)job->my_node;

    /* job->hostname and job->nspace are set: this node's name, the job's name (main.c, daemon.c) */
    server_job = job;
    if (pipe2(wake_pipe, O_CLOEXEC | O_NONBLOCK) < 0) {
        mpirun_error("pipe: %s", strerror(errno));
        return -1;
    }

    /* A private rendezvous directory: our ranks find this server and no other, and no other
     * client finds it; removed when the job ends. */
    if (base == NULL || base[0] == '\0')
        base = "/tmp";
    if ((size_t)snprintf(job->tmpdir, sizeof(job->tmpdir), "%s/umpi-mpirun.XXXXXX", base) >=
            sizeof(job->tmpdir) ||
        mkdtemp(job->tmpdir) == NULL) {
        mpirun_error("cannot create a directory under %s for the PMIx server: %s", base,
                     strerror(errno));
        job->tmpdir[0] = '\0';
        return -1;
    }

    list = PMIx_Info_list_start();
    rc = list != NULL ? PMIX_SUCCESS : PMIX_ERR_NOMEM;
    if (rc == PMIX_SUCCESS)
        rc = add(list, PMIX_SERVER_TMPDIR, job->tmpdir, PMIX_STRING);
    if (rc == PMIX_SUCCESS)
        rc = add(list, PMIX_SYSTEM_TMPDIR, job->tmpdir, PMIX_STRING);
    if (rc == PMIX_SUCCESS)
        rc = add(list, PMIX_SERVER_TOOL_SUPPORT, &no, PMIX_BOOL);
    if (rc == PMIX_SUCCESS)
        rc = add(list, PMIX_SERVER_SYSTEM_SUPPORT, &no, PMIX_BOOL);
    /* This node as the job knows it, which across machines may be a name from the host list */
    if (rc == PMIX_SUCCESS)
        rc = add(list, PMIX_HOSTNAME, job->hostname, PMIX_STRING);
    if (rc == PMIX_SUCCESS)
        rc = add(list, PMIX_NODEID, &nodeid, PMIX_UINT32);
    load_topology();
    topo.topology = server_topo;
    if (rc == PMIX_SUCCESS && server_topo != NULL)
        rc = add(list, PMIX_TOPOLOGY2, &topo, PMIX_TOPO);
    if (rc == PMIX_SUCCESS)
        rc = PMIx_Info_list_convert(list, &darray);
    if (rc == PMIX_SUCCESS)
        rc = PMIx_server_init(&module, darray.array, darray.size);
    PMIX_DATA_ARRAY_DESTRUCT(&darray);
    if (list != NULL)
        PMIx_Info_list_release(list);
    if (rc != PMIX_SUCCESS) {
        mpirun_error("cannot start the PMIx server: %s", PMIx_Error_string(rc));
        return -1;
    }
    job->server_up = 1;
    if (register_nspace(job) != PMIX_SUCCESS)
        return -1;
    return 0;
}

int mpirun_server_setup_rank(struct mpirun_job *job, int rank, char ***env)
{
    struct op_wait w = OP_WAIT_INIT;
    pmix_proc_t proc;
    pmix_status_t rc;

    PMIX_LOAD_PROCID(&proc, job->nspace, (pmix_rank_t)rank);
    /* Registered before the fork, so that the client cannot connect to a server that does not
     * know it yet. */
    rc = op_wait_for(&w, PMIx_server_register_client(&proc, geteuid(), getegid(),
                                                     &job->ranks[rank], op_done, &w));
    if (rc != PMIX_SUCCESS) {
        mpirun_error("PMIx_server_register_client(rank %d): %s", rank, PMIx_Error_string(rc));
        return -1;
    }
    rc = PMIx_server_setup_fork(&proc, env);
    if (rc != PMIX_SUCCESS) {
        mpirun_error("PMIx_server_setup_fork(rank %d): %s", rank, PMIx_Error_string(rc));
        return -1;
    }
    return 0;
}

static int remove_entry(const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
    remove(path);
    return 0;
}

/* libpmix removes its rendezvous files; the directory and anything a client left go here. */
void mpirun_server_stop(struct mpirun_job *job)
{
    if (job->server_up)
        PMIx_server_finalize();
    job->server_up = 0;
    if (server_topo != NULL)
        hwloc_topology_destroy(server_topo);
    server_topo = NULL;
    if (job->tmpdir[0] != '\0')
        nftw(job->tmpdir, remove_entry, 16, FTW_DEPTH | FTW_PHYS);
}
