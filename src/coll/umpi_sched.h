/*
 * Collective schedules: every collective (blocking, nonblocking, persistent) is built as a schedule
 * and run by the progress engine.
 *
 * A schedule is a list of steps cut into phases by fences. When a phase starts, its local steps
 * (reduce, copy) run in order, then its sends and receives are posted; the phase ends when all of
 * them completed, and the next one starts. An algorithm fences wherever a step needs data an
 * earlier step brings. The whole schedule is built when the collective is called (buffers, counts
 * and peers are known then), so nothing refers to the caller's count arrays afterwards, and a
 * persistent collective restarts the same steps at every MPI_Start; a small blocking one is kept
 * by its communicator and restarted when the same call comes back (post.c).
 *
 * Messages travel on the communicator's collective context (context_id + 1) with tag
 *     seq (18 bits) | sub-view (4 bits) | LOCAL (1 bit)
 * where seq is the communicator's count of collective calls (every member calls collectives in
 * the same order, so it agrees everywhere; UMPI_COLL_SEQ_MASK bounds how many may be outstanding),
 * the sub-view number separates the phases of hierarchical algorithms that run over subsets, and
 * LOCAL marks traffic inside one group of an intercommunicator (umpi_coll_internal.h). A persistent
 * collective keeps the tag it got at initialization for all its starts (2^18 collectives later the
 * number comes round again; only a persistent request still active then could meet that call's
 * messages). Within one
 * collective, messages between two processes match in posting order (UCX keeps the order of one
 * sender's messages per tag): algorithms post the sends and receives of one pair in the same
 * order at both ends.
 *
 * Threads: everything here runs with the big lock held.
 */
#ifndef UMPI_SCHED_H
#define UMPI_SCHED_H

#include "coll/umpi_coll_internal.h"
#include "core/umpi.h"
#include "core/umpi_obj.h"
#include "core/umpi_op.h"
#include "core/umpi_request.h"

#define UMPI_COLL_SEQ_BITS 18
#define UMPI_COLL_SEQ_MASK ((1u << UMPI_COLL_SEQ_BITS) - 1)
#define UMPI_COLL_TAG_SUB(k) ((uint32_t) (k) << UMPI_COLL_SEQ_BITS) /* sub-view k, 1..15 */
_Static_assert(UMPI_COLL_SEQ_BITS + 4 == 22 && UMPI_COLL_TAG_LOCAL == 1 << 22, "collective tag layout");

/*
 * The processes an algorithm runs over ("members", indexed 0..size-1) and how to reach them: the
 * whole communicator, one group of an intercommunicator, the other group, or a subset
 * (hierarchical algorithms). Algorithms only ever name members by index.
 */
typedef struct umpi_coll_view {
    int rank;            /* my index among the members; -1 when I am not one (remote group) */
    int size;            /* members */
    int my_src;          /* the source id my messages carry */
    uint32_t tag_bits;   /* UMPI_COLL_TAG_LOCAL, UMPI_COLL_TAG_SUB(k) */
    const int *world;    /* member -> MPI_COMM_WORLD rank; NULL: the index is the world rank */
    const int *src;      /* member -> the source id its messages carry; NULL: its index */
} umpi_coll_view_t;

/* The communicator (intracommunicator), or the local group of an intercommunicator. */
void umpi_coll_view_local(umpi_coll_view_t *v, const umpi_comm_t *c);
/* The remote group of an intercommunicator. */
void umpi_coll_view_remote(umpi_coll_view_t *v, const umpi_comm_t *c);

typedef struct umpi_sched umpi_sched_t;

/* ---- building ---------------------------------------------------------------------------------- */

/* A new empty schedule on comm, with the next collective tag of comm; NULL when out of memory. */
umpi_sched_t *umpi_sched_new(umpi_comm_t *comm);
/* Scratch memory living as long as the schedule (NULL when out of memory: the build fails). */
void *umpi_sched_buf(umpi_sched_t *s, size_t bytes);
/* Scratch for count elements of dt, laid out as a user buffer of dt would be (extent-based, the
 * returned pointer accounts for dt's true lower bound). */
void *umpi_sched_buf_dt(umpi_sched_t *s, MPI_Count count, const umpi_dtype_t *dt);

/* Steps. Each returns MPI_SUCCESS or an error code (out of memory); counts may be 0 (the message
 * is still sent: both ends must agree). Datatypes and the op are retained by the schedule. */
int umpi_sched_send(umpi_sched_t *s, const umpi_coll_view_t *v, int member, const void *buf, MPI_Count count,
                    umpi_dtype_t *dt);
int umpi_sched_recv(umpi_sched_t *s, const umpi_coll_view_t *v, int member, void *buf, MPI_Count count,
                    umpi_dtype_t *dt);
/* inout = in op inout (in is the lower rank's data for non-commutative ops). */
int umpi_sched_reduce(umpi_sched_t *s, const void *in, void *inout, MPI_Count count, umpi_dtype_t *dt,
                      umpi_op_t *op);
/* Copies the data of (src, scount, sdt) into (dst, rcount, rdt): as a send and matching receive
 * would, type signatures matching, rcount * rdt->size >= scount * sdt->size. */
int umpi_sched_copy(umpi_sched_t *s, const void *src, MPI_Count scount, umpi_dtype_t *sdt, void *dst,
                    MPI_Count rcount, umpi_dtype_t *rdt);
/* Steps after the fence start when every step before it is complete. */
int umpi_sched_fence(umpi_sched_t *s);

/* ---- running ------------------------------------------------------------------------------------ */

/* Runs s to completion (a blocking collective) and frees it. An MPI error code. */
int umpi_sched_run(umpi_sched_t *s);
/*
 * A blocking schedule kept by its communicator to run again when the same call comes back
 * (post.c): umpi_sched_run_kept runs it to completion without freeing it (an MPI error code;
 * after an error it must be freed, not kept). umpi_sched_park then gives back its reference on the
 * communicator (the communicator owns it, and frees it when it is freed itself);
 * umpi_sched_unpark takes it again, with the communicator's next collective tag, ready to run.
 */
int umpi_sched_run_kept(umpi_sched_t *s);
/* Whether s is worth keeping: small (its steps and scratch memory), not failed. (Device buffers
 * are never kept: the caller keeps nothing while CUDA is active.) */
int umpi_sched_keepable(const umpi_sched_t *s);
void umpi_sched_park(umpi_sched_t *s);
void umpi_sched_unpark(umpi_sched_t *s);
/* Wraps s in a request: started (nonblocking) or inactive until MPI_Start (persistent). */
int umpi_sched_request(umpi_sched_t *s, int persistent, MPI_Request *request);
/* MPI_Start of a persistent collective request (wait.c, persistent.c). */
int umpi_sched_start_request(umpi_request_t *r);
/* Frees the schedule of a released request (umpi_request_release). */
void umpi_sched_free(umpi_sched_t *s);
/* The same for core's umpi_request_sched_free, which knows a schedule only as a pointer. */
void umpi_sched_free_opaque(void *s);
/* Frees the schedules kept for reuse (MPI_Finalize). */
void umpi_sched_finalize(void);

/* The same data movement outside a schedule: a typed copy (umpi_sched_copy's rules). */
void umpi_coll_copy(const void *src, MPI_Count scount, umpi_dtype_t *sdt, void *dst, MPI_Count rcount,
                    umpi_dtype_t *rdt);

#endif
