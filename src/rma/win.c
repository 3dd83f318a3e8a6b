/* Windows: creation in the four flavors, free, and the objects' queries (umpi_rma.h). */
#include "rma/umpi_rma.h"
#include "api/umpi_api.h"
#include "api/umpi_comm.h"
#include "core/umpi_attr.h"
#include "core/umpi_err.h"
#include "core/umpi_knobs.h"
#include "core/umpi_progress.h"
#include "mpi/gen/umpi_impl.h"
#include "pmi/umpi_pmi.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

struct umpi_handle_table umpi_win_table = {
    .first_dynamic = 1, /* index 0 stays unused: MPI_WIN_NULL's index */
    .next = 1,
    .lock = PTHREAD_MUTEX_INITIALIZER,
};

umpi_win_t *umpi_rma_windows;

int umpi_rma_err_dispatch(const char *fname, MPI_Win win, int code)
{
    umpi_win_t *w = umpi_win_get(win);
    if (w == NULL)
        return umpi_err_dispatch(fname, MPI_COMM_NULL, code);
    return umpi_err_dispatch_handler(fname, __atomic_load_n(&w->errhandler, __ATOMIC_ACQUIRE), win, code);
}

static void umpi__win_destroy(umpi_win_t *w)
{
    umpi_rma_ipc_release(w);
    for (int r = 0; w->rkeys != NULL && r < w->comm->size; r++)
        if (w->rkeys[r] != NULL)
            umpi_ucx_rkey_destroy(w->rkeys[r]);
    if (w->comm != NULL) {
        umpi_lock();
        umpi_comm_release(w->comm);
        umpi_unlock();
    }
    if (w->info != MPI_INFO_NULL)
        umpi_impl_info_free(&w->info);
    umpi_errhandler_t *eh = umpi_errhandler_get(w->errhandler);
    if (eh != NULL)
        umpi_errhandler_release(eh);
    if (w->memh != NULL)
        umpi_ucx_mem_unmap(w->memh, w->rkey_packed);
    if (w->flavor == MPI_WIN_FLAVOR_ALLOCATE && w->shm == NULL)
        free(w->base); /* posix_memalign'ed, not in a node's segment */
    if (w->shm != NULL)
        munmap(w->shm, w->shm_len);
    if (w->handle != MPI_WIN_NULL)
        umpi_ht_remove(&umpi_win_table, UMPI_HANDLE_INDEX(w->handle));
    free(w->sizes);
    free(w->disp_units);
    free(w->shared_bases);
    free(w->locked);
    free(w->start_ranks);
    free(w->post_ranks);
    free(w->dirty);
    free(w->rma_dirty);
    free(w->inflight);
    free(w->rma_base);
    free(w->rkey_off);
    free(w->rkey_len);
    free(w->rkey_all);
    free(w->rkeys);
    free(w->waiting);
    free(w->regions);
    free(w->unattached);
    free(w);
}

/*
 * The part every flavor shares: the private communicator, the hints, the handle, and every rank's
 * size and disp_unit. Collective over comm.
 */
/* dev: this process's window memory is device memory; *any_dev (when not NULL): some process's is. */
static int umpi__win_new(umpi_comm_t *comm, int flavor, MPI_Aint size, MPI_Aint disp_unit, int dev, MPI_Info info,
                         umpi_win_t **out, int *any_dev)
{
    *out = NULL;
    if (comm->is_inter)
        return umpi_err_create(MPI_ERR_COMM, "communicator 0x%x in argument 'comm' is an intercommunicator "
                               "(windows need an intracommunicator)", (unsigned) comm->handle);
    if (size < 0)
        return umpi_err_create(MPI_ERR_SIZE, "negative size %ld in argument 'size'", (long) size);
    if (disp_unit <= 0 || disp_unit > INT32_MAX)
        return umpi_err_create(MPI_ERR_DISP, "disp_unit %ld in argument 'disp_unit' is not a positive int",
                               (long) disp_unit);
    umpi_win_t *w = calloc(1, sizeof(*w));
    if (w == NULL)
        return umpi_err_create(MPI_ERR_NO_MEM, "out of memory allocating a window");
    w->flavor = flavor;
    w->size = size;
    w->disp_unit = (int) disp_unit;
    w->errhandler = MPI_ERRORS_ARE_FATAL;
    w->info = MPI_INFO_NULL;
    int n = comm->size, err;
    w->sizes = calloc((size_t) n, sizeof(MPI_Aint) * 3);
    w->disp_units = calloc((size_t) n, sizeof(int));
    w->locked = calloc((size_t) n, sizeof(int));
    w->start_ranks = calloc((size_t) n, sizeof(int));
    w->post_ranks = calloc((size_t) n, sizeof(int));
    w->dirty = calloc((size_t) n, 1);
    w->rma_dirty = calloc((size_t) n, 1);
    if (!w->sizes || !w->disp_units || !w->locked || !w->start_ranks || !w->post_ranks || !w->dirty ||
        !w->rma_dirty) {
        err = umpi_err_create(MPI_ERR_NO_MEM, "out of memory allocating a window of %d ranks", n);
        goto fail;
    }
    err = umpi_impl_info_create(&w->info);
    if (err != MPI_SUCCESS)
        goto fail;
    if (info != MPI_INFO_NULL) {
        umpi_info_t *src = umpi_info_get(info), *dst = umpi_info_get(w->info);
        pthread_mutex_lock(&src->lock);
        umpi_status_t st = umpi_info_list_copy(src, dst);
        pthread_mutex_unlock(&src->lock);
        if (st != UMPI_OK) {
            err = umpi_err_from_status(st, "copying the window's hints");
            goto fail;
        }
    }

    uint32_t context;
    MPI_Comm h;
    umpi_lock();
    err = umpi_comm_context_agree(comm, NULL, &context);
    if (err == MPI_SUCCESS)
        err = umpi_comm_new(comm, comm->group, NULL, context, &h);
    umpi_unlock();
    if (err != MPI_SUCCESS)
        goto fail;
    w->comm = umpi_comm_get(h);
    snprintf(w->comm->name, sizeof(w->comm->name), "window of 0x%x", (unsigned) comm->handle);

    /* every rank's size and disp_unit: range checks and displacements at the origin; whether its
     * memory is device memory: whether the window needs CUDA IPC records (ipc.c) */
    MPI_Aint mine[3] = { size, disp_unit, dev };
    err = umpi_impl_allgather(mine, 3, MPI_AINT, w->sizes, 3, umpi_dtype_get(MPI_AINT), w->comm,
                              UMPI_COLL_BLOCKING, NULL);
    if (err != MPI_SUCCESS)
        goto fail;
    int some_dev = 0;
    for (int r = 0; r < n; r++) {
        w->disp_units[r] = (int) w->sizes[3 * r + 1];
        some_dev |= w->sizes[3 * r + 2] != 0;
        w->sizes[r] = w->sizes[3 * r];
    }
    w->dev = dev;
    if (any_dev != NULL)
        *any_dev = some_dev;

    int idx = umpi_ht_insert(&umpi_win_table, w);
    if (idx < 0) {
        err = umpi_err_create(MPI_ERR_NO_MEM, "cannot register a window");
        goto fail;
    }
    w->handle = UMPI_HANDLE_MAKE(UMPI_KIND_DIRECT, UMPI_OBJ_WIN, idx);
    *out = w;
    return MPI_SUCCESS;
fail:
    umpi__win_destroy(w);
    return err;
}

/* The window goes live: the progress hook serves it from now on. */
static void umpi__win_publish(umpi_win_t *w, MPI_Win *win)
{
    umpi_lock();
    if (umpi_rma_windows == NULL) {
        umpi_progress_register(umpi_rma_progress);
        umpi_finalize_register(umpi_rma_finalize); /* registrations of windows left at MPI_Finalize */
    }
    w->next = umpi_rma_windows;
    umpi_rma_windows = w;
    umpi_unlock();
    *win = w->handle;
    umpi_debug(2, "window 0x%x created (flavor %d, %ld bytes)", (unsigned) w->handle, w->flavor, (long) w->size);
}

/* The last step of every constructor but create_dynamic: the memory registered for UCX RMA (unless
 * UMPI_RMA_UCX=0), the base handed out (baseptr non-NULL: the flavors that allocate), the window
 * published; a failure destroys it. */
static int umpi__win_ready(umpi_win_t *w, MPI_Win *win, void *baseptr)
{
    int err = umpi_rma_map(w);
    if (err != MPI_SUCCESS) {
        umpi__win_destroy(w);
        return err;
    }
    if (baseptr != NULL)
        *(void **) baseptr = w->base;
    umpi__win_publish(w, win);
    return MPI_SUCCESS;
}

int umpi_impl_win_create(void *base, MPI_Aint size, MPI_Aint disp_unit, MPI_Info info, umpi_comm_t *comm_ptr,
                         MPI_Win *win)
{
    umpi_win_t *w;
    if (base == NULL && size > 0)
        return umpi_err_create(MPI_ERR_BASE, "NULL base in argument 'base' with size %ld", (long) size);
    int dev;
    int err = umpi_rma_classify(base, size > 0 ? (size_t) size : 0, MPI_ERR_BASE, "window memory in argument 'base'",
                                &dev);
    if (err != MPI_SUCCESS)
        return err;
    int any_dev;
    err = umpi__win_new(comm_ptr, MPI_WIN_FLAVOR_CREATE, size, disp_unit, dev, info, &w, &any_dev);
    if (err != MPI_SUCCESS)
        return err;
    w->base = base;
    if (any_dev && (err = umpi_rma_ipc_setup(w)) != MPI_SUCCESS) {
        umpi__win_destroy(w);
        return err;
    }
    return umpi__win_ready(w, win, NULL);
}

int umpi_impl_win_create_dynamic(MPI_Info info, umpi_comm_t *comm_ptr, MPI_Win *win)
{
    umpi_win_t *w;
    int err = umpi__win_new(comm_ptr, MPI_WIN_FLAVOR_DYNAMIC, 0, 1, 0, info, &w, NULL);
    if (err != MPI_SUCCESS)
        return err;
    w->unattached = calloc((size_t) w->comm->size, sizeof(*w->unattached)); /* all MPI_SUCCESS */
    if (w->unattached == NULL) {
        umpi__win_destroy(w);
        return umpi_err_create(MPI_ERR_NO_MEM, "out of memory allocating a window");
    }
    umpi__win_publish(w, win);
    return MPI_SUCCESS;
}

/* The ranks of w on my node, in rank order: 1 in mine[r]; returns the lowest (the segment's maker). */
static int umpi__node_ranks(const umpi_win_t *w, char *mine)
{
    int mynode = umpi_pmi_node_of(umpi_global.rank), leader = -1;
    for (int r = 0; r < w->comm->size; r++) {
        mine[r] = umpi_pmi_node_of(umpi_comm_to_world(w->comm, r)) == mynode;
        if (mine[r] && leader < 0)
            leader = r;
    }
    return leader;
}

/* Each node rank's offset in the segment (kept in shared_bases until the segment is mapped) and the
 * segment's length; noncontig: every part begins on a page. */
static MPI_Aint umpi__segment_layout(umpi_win_t *w, const char *mine, int noncontig)
{
    MPI_Aint off = 0, page = (MPI_Aint) sysconf(_SC_PAGESIZE);
    for (int r = 0; r < w->comm->size; r++) {
        if (!mine[r])
            continue;
        w->shared_bases[r] = (char *) (uintptr_t) off;
        off += noncontig ? (w->sizes[r] + page - 1) / page * page : w->sizes[r];
    }
    /* the lock word (umpi_rma_shm_lock) on a cache line of its own after the parts */
    w->shm_len = ((size_t) off + 63) / 64 * 64 + 64;
    return off;
}

/*
 * The window memory of the ranks of each node in one shared segment (collective over w->comm):
 * the lowest rank of the node makes it (shm_open, named after its pid and a counter), every rank of
 * the node maps it; the ranks' parts follow each other in rank order, contiguous unless the maker
 * was given alloc_shared_noncontig=true (noncontig): then each part begins on a page of its own, so
 * that its owner's first touch places its pages in the owner's NUMA node and no page is shared by
 * two ranks. Sets shm, shm_len, shm_lock, shared_bases (NULL for ranks on other nodes) and base.
 * 0 when some rank could not map its segment: then nothing is left mapped anywhere.
 */
static int umpi__node_segment(umpi_win_t *w, int noncontig, int *done)
{
    static unsigned counter;
    int n = w->comm->size, me = w->comm->rank, err, fd = -1;
    *done = 0;
    w->shared_bases = calloc((size_t) n, sizeof(char *));
    char *mine = calloc((size_t) n, 1);
    int *ids = calloc((size_t) n, 3 * sizeof(int));
    if (w->shared_bases == NULL || mine == NULL || ids == NULL) {
        free(mine);
        free(ids);
        return umpi_err_create(MPI_ERR_NO_MEM, "out of memory allocating a window");
    }
    int leader = umpi__node_ranks(w, mine);
    char name[64];
    /* the maker's name for the segment, and whether its parts are page-aligned (the maker's hint) */
    int id[3] = { (int) getpid(), (int) counter++, noncontig };
    MPI_Aint total = umpi__segment_layout(w, mine, noncontig);
    if (me == leader) {
        snprintf(name, sizeof(name), "/umpi-win-%d-%d", id[0], id[1]);
        fd = shm_open(name, O_CREAT | O_EXCL | O_RDWR, 0600);
        if (fd < 0 || ftruncate(fd, (off_t) w->shm_len) != 0)
            id[0] = -1;
    }
    err = umpi_impl_allgather(id, 3, MPI_INT, ids, 3, umpi_dtype_get(MPI_INT), w->comm, UMPI_COLL_BLOCKING, NULL);
    if (err == MPI_SUCCESS && me != leader && ids[3 * leader] >= 0) {
        total = umpi__segment_layout(w, mine, ids[3 * leader + 2]); /* the maker's choice */
        snprintf(name, sizeof(name), "/umpi-win-%d-%d", ids[3 * leader], ids[3 * leader + 1]);
        fd = shm_open(name, O_RDWR, 0600);
    }
    if (err == MPI_SUCCESS && fd >= 0) {
        void *p = mmap(NULL, w->shm_len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
        if (p != MAP_FAILED)
            w->shm = p;
    }
    if (fd >= 0)
        close(fd);
    /* everyone has mapped it (or failed): the name can go, the memory stays while mapped */
    int ok = err == MPI_SUCCESS && w->shm != NULL, all_ok = ok;
    if (err == MPI_SUCCESS)
        err = umpi_impl_allreduce(&ok, &all_ok, 1, umpi_dtype_get(MPI_INT), MPI_MIN, w->comm,
                                  UMPI_COLL_BLOCKING, NULL);
    if (me == leader && id[0] >= 0)
        shm_unlink(name);
    if (err != MPI_SUCCESS || !all_ok) {
        if (w->shm != NULL)
            munmap(w->shm, w->shm_len);
        w->shm = NULL;
        memset(w->shared_bases, 0, (size_t) n * sizeof(char *));
        if (err == MPI_SUCCESS)
            umpi_debug(1, "window 0x%x: no shared segment of %ld bytes for this node", (unsigned) w->handle,
                       (long) total);
    } else {
        for (int r = 0; r < n; r++)
            if (mine[r])
                w->shared_bases[r] = (char *) w->shm + (uintptr_t) w->shared_bases[r]; /* offsets until now */
        w->shm_lock = (int *) ((char *) w->shm + w->shm_len - 64); /* zero: ftruncate's fresh pages */
        w->base = w->size > 0 ? w->shared_bases[me] : NULL;
        *done = 1;
    }
    free(mine);
    free(ids);
    return err;
}

/*
 * The window memory of each node's ranks in one segment (umpi__node_segment), so that the
 * operations of a rank towards another of its node are applied by the caller itself (umpi_rma.h);
 * private memory when no segment could be made (e.g. /dev/shm full).
 */
int umpi_impl_win_allocate(MPI_Aint size, MPI_Aint disp_unit, MPI_Info info, umpi_comm_t *comm_ptr,
                           void *baseptr, MPI_Win *win)
{
    umpi_win_t *w;
    int err = umpi__win_new(comm_ptr, MPI_WIN_FLAVOR_ALLOCATE, size, disp_unit, 0, info, &w, NULL), done;
    if (err != MPI_SUCCESS)
        return err;
    err = umpi__node_segment(w, 0, &done);
    if (err != MPI_SUCCESS) {
        umpi__win_destroy(w);
        return err;
    }
    if (!done && size > 0 && posix_memalign((void **) &w->base, 64, (size_t) size) != 0) {
        w->base = NULL;
        umpi__win_destroy(w);
        return umpi_err_create(MPI_ERR_NO_MEM, "cannot allocate %ld bytes of window memory", (long) size);
    }
    return umpi__win_ready(w, win, baseptr);
}

/* MPI_Win_allocate_shared: the node's segment (umpi__node_segment) of a communicator of one node;
 * rank 0's alloc_shared_noncontig hint decides the layout. */
int umpi_impl_win_allocate_shared(MPI_Aint size, MPI_Aint disp_unit, MPI_Info info, umpi_comm_t *comm_ptr,
                                  void *baseptr, MPI_Win *win)
{
    umpi_win_t *w;
    if (!comm_ptr->is_inter) {
        int mynode = umpi_pmi_node_of(umpi_global.rank);
        for (int r = 0; r < comm_ptr->size; r++) {
            int node = umpi_pmi_node_of(umpi_comm_to_world(comm_ptr, r));
            if (node != mynode)
                return umpi_err_create(MPI_ERR_RMA_SHARED, "rank %d of communicator 0x%x in argument 'comm' is on "
                                       "node %d, rank %d on node %d: a shared window needs one node",
                                       r, (unsigned) comm_ptr->handle, node, comm_ptr->rank, mynode);
        }
    }
    int err = umpi__win_new(comm_ptr, MPI_WIN_FLAVOR_SHARED, size, disp_unit, 0, info, &w, NULL), done;
    if (err != MPI_SUCCESS)
        return err;
    char hint[8];
    int noncontig = umpi_info_hint(info, "alloc_shared_noncontig", hint, sizeof(hint)) && strcmp(hint, "true") == 0;
    err = umpi__node_segment(w, noncontig, &done);
    if (err == MPI_SUCCESS && !done)
        err = umpi_err_create(MPI_ERR_NO_MEM, "cannot make or map the node's shared segment for %ld bytes per rank "
                              "(is /dev/shm full?)", (long) size);
    if (err != MPI_SUCCESS) {
        umpi__win_destroy(w);
        return err;
    }
    return umpi__win_ready(w, win, baseptr);
}

int umpi_impl_win_shared_query(MPI_Win win, int rank, MPI_Aint *size, MPI_Aint *disp_unit, void *baseptr)
{
    umpi_win_t *w;
    int err = umpi_rma_win_check(win, &w, "win");
    if (err != MPI_SUCCESS)
        return err;
    if (w->flavor != MPI_WIN_FLAVOR_SHARED)
        return umpi_err_create(MPI_ERR_RMA_FLAVOR, "window 0x%x in argument 'win' is not a shared window "
                               "(flavor %d)", (unsigned) win, w->flavor);
    if (rank == MPI_PROC_NULL) {
        /* the first rank with memory, MPI 4.1 sec. 12.2.3 */
        rank = 0;
        for (int r = 0; r < w->comm->size; r++)
            if (w->sizes[r] > 0) {
                rank = r;
                break;
            }
    } else if (rank < 0 || rank >= w->comm->size) {
        return umpi_err_create(MPI_ERR_RANK, "invalid rank %d in argument 'rank' (window of %d ranks)", rank,
                               w->comm->size);
    }
    *size = w->sizes[rank];
    *disp_unit = w->disp_units[rank];
    *(void **) baseptr = w->sizes[rank] > 0 ? w->shared_bases[rank] : NULL;
    return MPI_SUCCESS;
}

int umpi_impl_win_attach(MPI_Win win, void *base, MPI_Aint size)
{
    umpi_win_t *w;
    int err = umpi_rma_win_check(win, &w, "win");
    if (err != MPI_SUCCESS)
        return err;
    if (w->flavor != MPI_WIN_FLAVOR_DYNAMIC)
        return umpi_err_create(MPI_ERR_RMA_FLAVOR, "window 0x%x in argument 'win' is not a dynamic window "
                               "(flavor %d)", (unsigned) win, w->flavor);
    if (size < 0)
        return umpi_err_create(MPI_ERR_SIZE, "negative size %ld in argument 'size'", (long) size);
    if (base == NULL && size > 0)
        return umpi_err_create(MPI_ERR_RMA_ATTACH, "NULL base in argument 'base' with size %ld", (long) size);
    int dev;
    err = umpi_rma_classify(base, (size_t) size, MPI_ERR_RMA_ATTACH, "memory in argument 'base'", &dev);
    if (err != MPI_SUCCESS)
        return err;
    umpi_lock();
    for (int i = 0; i < w->nregions; i++) {
        umpi_rma_region_t *g = &w->regions[i];
        if ((char *) base < g->base + g->size && g->base < (char *) base + size) {
            umpi_unlock();
            return umpi_err_create(MPI_ERR_RMA_ATTACH, "memory %p + %ld in argument 'base' overlaps memory "
                                   "attached already (%p + %ld)", base, (long) size, (void *) g->base,
                                   (long) g->size);
        }
    }
    if (w->nregions == w->capregions) {
        int cap = w->capregions ? 2 * w->capregions : 8;
        void *p = realloc(w->regions, (size_t) cap * sizeof(*w->regions));
        if (p == NULL) {
            umpi_unlock();
            return umpi_err_create(MPI_ERR_NO_MEM, "out of memory attaching memory to a window");
        }
        w->regions = p;
        w->capregions = cap;
    }
    w->regions[w->nregions++] = (umpi_rma_region_t){ base, size, dev };
    umpi_unlock();
    if (dev)
        umpi_debug(1, "window 0x%x: %ld bytes of device memory attached at %p: requests to them are applied through "
                   "driver copies [rma_target]", (unsigned) win, (long) size, base);
    return MPI_SUCCESS;
}

int umpi_impl_win_detach(MPI_Win win, const void *base)
{
    umpi_win_t *w;
    int err = umpi_rma_win_check(win, &w, "win");
    if (err != MPI_SUCCESS)
        return err;
    if (w->flavor != MPI_WIN_FLAVOR_DYNAMIC)
        return umpi_err_create(MPI_ERR_RMA_FLAVOR, "window 0x%x in argument 'win' is not a dynamic window "
                               "(flavor %d)", (unsigned) win, w->flavor);
    umpi_lock();
    for (int i = 0; i < w->nregions; i++) {
        if (w->regions[i].base == base) {
            w->regions[i] = w->regions[--w->nregions];
            umpi_unlock();
            return MPI_SUCCESS;
        }
    }
    umpi_unlock();
    return umpi_err_create(MPI_ERR_RMA_ATTACH, "base %p in argument 'base' is not attached to window 0x%x",
                           base, (unsigned) win);
}

int umpi_impl_win_free(MPI_Win *win)
{
    umpi_win_t *w;
    int err = umpi_rma_win_check(*win, &w, "win");
    if (err != MPI_SUCCESS)
        return err;
    int busy = w->lock_all || w->started || w->posted;
    for (int r = 0; r < w->comm->size && !busy; r++)
        busy = w->locked[r] != 0;
    if (busy)
        return umpi_err_create(MPI_ERR_RMA_SYNC, "window 0x%x in argument 'win' is in an epoch (%s): close it "
                               "before MPI_Win_free", (unsigned) *win,
                               w->lock_all || !(w->started || w->posted) ? "locked" : "PSCW");
    /* MPI 4.1 sec. 12.2.5: the delete callbacks run first; a failing one keeps the window */
    err = umpi_attr_list_delete(UMPI_OBJ_WIN, *win, &w->attrs);
    if (err != MPI_SUCCESS)
        return err;
    umpi_lock();
    err = umpi_rma_drain(w); /* what an erroneous program left in flight, before the memory goes */
    if (err == MPI_SUCCESS)
        err = umpi_rma_ipc_wait(w);
    umpi_unlock();
    if (err != MPI_SUCCESS)
        return err;
    /* Every rank's operations are complete at its own end of its epochs; the barrier waits until
     * every rank is there, serving requests meanwhile, so that none is still on its way in. */
    err = umpi_impl_barrier(w->comm, UMPI_COLL_BLOCKING, NULL);
    if (err != MPI_SUCCESS)
        return err;
    umpi_lock();
    for (umpi_win_t **p = &umpi_rma_windows; *p != NULL; p = &(*p)->next)
        if (*p == w) {
            *p = w->next;
            break;
        }
    if (umpi_rma_windows == NULL)
        umpi_progress_unregister(umpi_rma_progress);
    umpi_unlock();
    umpi__win_destroy(w);
    *win = MPI_WIN_NULL;
    return MPI_SUCCESS;
}

/*
 * UCX RMA (unless UMPI_RMA_UCX=0): each process registers its window memory and packs its remote
 * key; every process gathers all addresses and keys (two allgathers and an allgatherv). A process
 * whose memory is empty, device memory (UCX here may have no CUDA transport; its target applies
 * requests through driver copies), or could not be registered, publishes no key: operations to it
 * go by message.
 */
int umpi_rma_map(umpi_win_t *w)
{
    int n = w->comm->size, err;
    size_t len = 0;
    if (w->dev)
        umpi_debug(1, "window 0x%x: its %ld bytes here are device memory: requests to this process are applied "
                   "through driver copies%s [rma_target]", (unsigned) w->handle, (long) w->size,
                   umpi_config.rma_ucx ? " (not registered for UCX RMA: operations to it go by message, or through "
                                                "CUDA IPC from its node in fence and PSCW epochs)" : "");
    if (!umpi_config.rma_ucx || w->flavor == MPI_WIN_FLAVOR_SHARED)
        return MPI_SUCCESS; /* w->rkey_len stays NULL: messages (a shared window: its own path) */
    if (w->size > 0 && !w->dev) {
        umpi_status_t st = umpi_ucx_mem_map(w->base, (size_t) w->size, &w->memh, &w->rkey_packed, &len);
        if (st != UMPI_OK) {
            umpi_debug(1, "window 0x%x: cannot register %ld bytes for UCX RMA (%s): operations to this "
                       "process go by message", (unsigned) w->handle, (long) w->size, umpi_status_string(st));
            w->memh = NULL;
            w->rkey_packed = NULL;
            len = 0;
        }
    }
    w->rma_base = calloc((size_t) n, sizeof(uint64_t));
    w->rkey_off = calloc((size_t) n, sizeof(MPI_Aint));
    w->rkey_len = calloc((size_t) n, sizeof(MPI_Aint));
    w->rkeys = calloc((size_t) n, sizeof(ucp_rkey_h));
    MPI_Aint *both = calloc((size_t) n, 2 * sizeof(MPI_Aint));
    MPI_Count *counts = calloc((size_t) n, sizeof(MPI_Count));
    if (!w->rma_base || !w->rkey_off || !w->rkey_len || !w->rkeys || !both || !counts) {
        free(both);
        free(counts);
        return umpi_err_create(MPI_ERR_NO_MEM, "out of memory for the remote keys of a window of %d ranks", n);
    }
    MPI_Aint mine[2] = { (MPI_Aint) (uintptr_t) w->base, (MPI_Aint) len };
    err = umpi_impl_allgather(mine, 2, MPI_AINT, both, 2, umpi_dtype_get(MPI_AINT), w->comm, UMPI_COLL_BLOCKING,
                              NULL);
    MPI_Aint total = 0;
    for (int r = 0; r < n && err == MPI_SUCCESS; r++) {
        w->rma_base[r] = (uint64_t) both[2 * r];
        w->rkey_len[r] = both[2 * r + 1];
        w->rkey_off[r] = total;
        counts[r] = both[2 * r + 1];
        total += both[2 * r + 1];
    }
    if (err == MPI_SUCCESS) {
        w->rkey_all = malloc(total > 0 ? (size_t) total : 1);
        if (w->rkey_all == NULL)
            err = umpi_err_create(MPI_ERR_NO_MEM, "out of memory for %ld bytes of remote keys", (long) total);
    }
    if (err == MPI_SUCCESS)
        err = umpi_impl_allgatherv(w->rkey_packed, (MPI_Count) len, MPI_BYTE, w->rkey_all, counts, w->rkey_off,
                                   umpi_dtype_get(MPI_BYTE), w->comm, UMPI_COLL_BLOCKING, NULL);
    free(both);
    free(counts);
    return err;
}

void umpi_rma_finalize(void)
{
    if (umpi_rma_windows == NULL)
        return;
    umpi_progress_unregister(umpi_rma_progress);
    for (umpi_win_t *w = umpi_rma_windows; w != NULL; w = w->next) {
        umpi_rma_drain(w);
        umpi_rma_ipc_wait(w);
        umpi_rma_ipc_release(w);
        for (int r = 0; w->rkeys != NULL && r < w->comm->size; r++)
            if (w->rkeys[r] != NULL)
                umpi_ucx_rkey_destroy(w->rkeys[r]);
        if (w->memh != NULL)
            umpi_ucx_mem_unmap(w->memh, w->rkey_packed);
        w->memh = NULL;
        free(w->rkeys);
        w->rkeys = NULL;
    }
    umpi_rma_windows = NULL;
}
