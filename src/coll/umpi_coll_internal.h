/*
 * Internal collectives: what communicator creation needs (broadcast, allreduce of small int
 * arrays, a pairwise exchange), over the UCX netmod on the parent's collective context with the
 * internal tag bit. Simple algorithms (binomial tree, recursive doubling); not exported as MPI
 * functions. They stay apart from the schedules of umpi_sched.h, which run over a communicator:
 * these run while the communicator is still being made.
 *
 * They run over a set of members that need not be a whole communicator (MPI_Comm_create_group,
 * the local group of an intercommunicator), described by umpi_coll_grp_t. Callers hold the big
 * lock; waits go through the progress engine.
 */
#ifndef UMPI_COLL_INTERNAL_H
#define UMPI_COLL_INTERNAL_H

#include "core/umpi.h"
#include "core/umpi_obj.h"

/* Internal tags (the 23-bit tag field, under the internal bit). LOCAL marks local-group traffic
 * on an intercommunicator, which shares its context with traffic between the two groups.
 *
 * IDUP: the agreements of MPI_Comm_idup (api/comm_idup.c), which run in the background and may
 * overlap blocking internal collectives and other idups on the same parent. Each carries IDUP |
 * its sequence number on the parent (parent->idup_seq, the same at every member since idup is
 * collective; modulo 2^21, so 2^21 idups on one parent may be in flight at once) | LOCAL where it
 * applies:
 *
 *      22      21      20                                    0
 *   +-------+------+----------------------------------------+
 *   | LOCAL | IDUP |  idup sequence number (blocking: 1..3) |
 *   +-------+------+----------------------------------------+
 */
enum {
    UMPI_COLL_TAG_BCAST = 1,
    UMPI_COLL_TAG_ALLREDUCE = 2,
    UMPI_COLL_TAG_EXCHANGE = 3,
    UMPI_COLL_TAG_IDUP = 1 << 21,
    UMPI_COLL_TAG_IDUP_SEQ = (1 << 21) - 1,
    UMPI_COLL_TAG_LOCAL = 1 << 22,
};

typedef struct {
    uint32_t context;  /* collective (odd) context id the messages travel on */
    int tag_flags;     /* 0 or UMPI_COLL_TAG_LOCAL */
    int rank, size;    /* my index among the members, their number */
    const int *world;  /* member -> MPI_COMM_WORLD rank; NULL: identity */
    const int *src;    /* member -> the source id its messages carry; NULL: its index */
} umpi_coll_grp_t;

/* The members of c's local group (for an intercommunicator: its local group, LOCAL tags). */
void umpi_coll_grp_of_comm(umpi_coll_grp_t *g, const umpi_comm_t *c);

typedef enum { UMPI_COLL_BAND, UMPI_COLL_BOR, UMPI_COLL_MAX } umpi_coll_op_t;

/* len bytes from member root to every member. */
umpi_status_t umpi_coll_bcast(const umpi_coll_grp_t *g, void *buf, size_t len, int root);
/* Element-wise op over n ints of every member, result at every member. */
umpi_status_t umpi_coll_allreduce_int(const umpi_coll_grp_t *g, int *buf, int n, umpi_coll_op_t op);
/* Sends slen bytes to world rank peer and receives rlen bytes from the process whose messages
 * carry source id peer_src, on context / tag; my messages carry my_src. */
umpi_status_t umpi_coll_exchange(uint32_t context, int tag, int my_src, int peer_world, const void *sbuf,
                                 size_t slen, int peer_src, void *rbuf, size_t rlen);

#endif
