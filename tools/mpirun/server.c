/*
 * mpirun's PMIx server: one namespace, every rank on this node.
 *
 * libpmix runs its own progress thread and calls the module below from it. Since every
 * participant of a fence is local, libpmix has already gathered all contributions when it calls
 * fence_nb: the blob it hands us is the whole job's data, and we hand it straight back. The other
 * upcalls answer PMIx at once and leave a note for the main thread, which owns the job state.
 * libpmix does not hold a finalizing client until we answer, so a finalize note can arrive after
 * the rank's exit; launch.c allows for that.
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

#include <pmix.h>
#include <pmix_server.h>

/* ---- notes from the PMIx thread to the main thread ------------------------------------------ */

static pthread_mutex_t notes_lock = PTHREAD_MUTEX_INITIALIZER;
static struct mpirun_note *notes_head, **notes_tail = &notes_head;
static int wake_pipe[2] = { -1, -1 };

static void post_note(enum mpirun_note_kind kind, int rank, int code, const char *msg)
{
    size_t mlen = msg != NULL ? strlen(msg) : 0;
    struct mpirun_note *n = malloc(sizeof(*n) + mlen + 1);
    char byte = 0;

    if (n == NULL) {
        /* Losing a note could hang the job; this process is in no state to go on. */
        fprintf(stderr, "%s: out of memory in the PMIx server\n", mpirun_name);
        _exit(1);
    }
    n->next = NULL;
    n->kind = kind;
    n->rank = rank;
    n->code = code;
    memcpy(n->msg, msg != NULL ? msg : "", mlen + 1);
    pthread_mutex_lock(&notes_lock);
    *notes_tail = n;
    notes_tail = &n->next;
    pthread_mutex_unlock(&notes_lock);
    /* A full pipe already holds a wake-up; the note is in the list either way. */
    while (write(wake_pipe[1], &byte, 1) < 0 && errno == EINTR)
        ;
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
    /* All participants are ours, so libpmix's local gather is the global result. The data stays
     * libpmix's; it is valid for the duration of this call, which is when the callback copies it. */
    cbfunc(PMIX_SUCCESS, data, ndata, cbdata, NULL, NULL);
    return PMIX_SUCCESS;
}

static pmix_status_t on_direct_modex(const pmix_proc_t *proc, const pmix_info_t info[],
                                     size_t ninfo, pmix_modex_cbfunc_t cbfunc, void *cbdata)
{
    /* Only asked for procs on other servers, and there are none. */
    return PMIX_ERR_NOT_SUPPORTED;
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
    uint16_t local_rank = (uint16_t)r;
    uint32_t nodeid = 0, appnum = 0;
    char *host = job->hostname;
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

/* "0,1,...,np-1": the local peers, and the input of the process-map regex. */
static char *rank_list(int np)
{
    size_t cap = (size_t)np * 11 + 1, off = 0;
    char *s = malloc(cap);

    if (s == NULL)
        return NULL;
    s[0] = '\0';
    for (int r = 0; r < np; r++)
        off += (size_t)snprintf(s + off, cap - off, r ? ",%d" : "%d", r);
    return s;
}

static pmix_status_t register_nspace(struct mpirun_job *job)
{
    struct op_wait w = OP_WAIT_INIT;
    void *list = PMIx_Info_list_start();
    pmix_data_array_t darray = { 0 };
    char *peers = rank_list(job->np), *node_map = NULL, *proc_map = NULL;
    uint32_t np = (uint32_t)job->np, one = 1, zero = 0;
    pmix_rank_t leader = 0;
    pmix_status_t rc = PMIX_ERR_NOMEM;

    if (list == NULL || peers == NULL)
        goto out;
    rc = PMIx_generate_regex(job->hostname, &node_map);
    if (rc == PMIX_SUCCESS)
        rc = PMIx_generate_ppn(peers, &proc_map);
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
        rc = add(list, PMIX_NUM_NODES, &one, PMIX_UINT32);
    if (rc == PMIX_SUCCESS)
        rc = add(list, PMIX_NODE_MAP, node_map, PMIX_REGEX);
    if (rc == PMIX_SUCCESS)
        rc = add(list, PMIX_PROC_MAP, proc_map, PMIX_REGEX);
    if (rc == PMIX_SUCCESS)
        rc = add(list, PMIX_LOCAL_SIZE, &np, PMIX_UINT32);
    if (rc == PMIX_SUCCESS)
        rc = add(list, PMIX_NODE_SIZE, &np, PMIX_UINT32);
    if (rc == PMIX_SUCCESS)
        rc = add(list, PMIX_LOCAL_PEERS, peers, PMIX_STRING);
    if (rc == PMIX_SUCCESS)
        rc = add(list, PMIX_LOCALLDR, &leader, PMIX_PROC_RANK);
    if (rc == PMIX_SUCCESS)
        rc = add(list, PMIX_APPLDR, &leader, PMIX_PROC_RANK);
    if (rc == PMIX_SUCCESS)
        rc = add(list, PMIX_HOSTNAME, job->hostname, PMIX_STRING);
    if (rc == PMIX_SUCCESS)
        rc = add(list, PMIX_NODEID, &zero, PMIX_UINT32);
    for (int r = 0; r < job->np && rc == PMIX_SUCCESS; r++)
        rc = add_proc_data(list, job, r);
    if (rc == PMIX_SUCCESS)
        rc = PMIx_Info_list_convert(list, &darray);
    if (rc == PMIX_SUCCESS)
        rc = op_wait_for(&w, PMIx_server_register_nspace(job->nspace, job->np, darray.array,
                                                         darray.size, op_done, &w));
out:
    if (rc != PMIX_SUCCESS)
        mpirun_error("cannot register the job with the PMIx server: %s", PMIx_Error_string(rc));
    PMIX_DATA_ARRAY_DESTRUCT(&darray);
    if (list != NULL)
        PMIx_Info_list_release(list);
    free(peers);
    free(node_map);
    free(proc_map);
    return rc;
}

int mpirun_server_start(struct mpirun_job *job)
{
    const char *base = getenv("TMPDIR");
    void *list = NULL;
    pmix_data_array_t darray = { 0 };
    pmix_status_t rc;
    bool no = false;

    if (pipe2(wake_pipe, O_CLOEXEC | O_NONBLOCK) < 0) {
        mpirun_error("pipe: %s", strerror(errno));
        return -1;
    }
    if (gethostname(job->hostname, sizeof(job->hostname) - 1) < 0)
        strcpy(job->hostname, "localhost");
    /* The prefix tells the ranks that mpirun prints their MPI_Abort messages (src/pmi/pmi.c). */
    snprintf(job->nspace, sizeof(job->nspace), "umpi.%ld", (long)getpid());

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
    PMIx_server_finalize();
    if (job->tmpdir[0] != '\0')
        nftw(job->tmpdir, remove_entry, 16, FTW_DEPTH | FTW_PHYS);
}
