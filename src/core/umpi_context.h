/*
 * Context ids of communicators (context.c).
 *
 * Every communicator owns a pair of ids in the 20-bit context field of the UCX tag
 * (netmod/ucx/umpi_ucx.h): 2p for point-to-point, 2p + 1 for collective and internal traffic.
 * Each process keeps a bitmap of the pairs it has free. A new communicator takes the lowest pair
 * free at every member: the members AND their bitmaps (an internal allreduce over the parent) and
 * all pick the same lowest bit. A pair goes back to the bitmap when the communicator is destroyed.
 * Disjoint groups may pick the same pair at the same time: their messages never meet, since UCX
 * matches at the receiving process and no process belongs to both.
 *
 * Pairs 0 and 1 are MPI_COMM_WORLD's and MPI_COMM_SELF's. The bitmap covers UMPI_CONTEXT_PAIRS
 * pairs (a few KiB to reduce), far fewer than the field allows, and enough for that many live
 * communicators per process.
 */
#ifndef UMPI_CONTEXT_H
#define UMPI_CONTEXT_H

#include <stdint.h>

#define UMPI_CONTEXT_PAIRS 16384
#define UMPI_CONTEXT_WORDS (UMPI_CONTEXT_PAIRS / 64)

_Static_assert(2 * UMPI_CONTEXT_PAIRS <= (1 << 20), "context ids must fit the tag's 20-bit field");

typedef struct {
    uint64_t word[UMPI_CONTEXT_WORDS]; /* bit set: pair free */
    uint64_t owner;                    /* 1: a complete proposal, every free pair (umpi_context_round_t) */
} umpi_context_mask_t;

enum { UMPI_CONTEXT_WORLD = 0, UMPI_CONTEXT_SELF = 2 };
/* The context of a communicator whose agreement has not ended (MPI_Comm_idup in flight). */
#define UMPI_CONTEXT_NONE UINT32_MAX

/* Every pair free except the builtin communicators' ones. */
void umpi_context_mask_init(umpi_context_mask_t *m);
/* The lowest free pair's point-to-point id in m, or -1 when none is free. */
int umpi_context_lowest(const umpi_context_mask_t *m);
/* Marks the pair of context id as used / free in m. */
void umpi_context_take(umpi_context_mask_t *m, uint32_t context_id);
void umpi_context_give(umpi_context_mask_t *m, uint32_t context_id);
/* dst &= src (the owner flag too) */
void umpi_context_and(umpi_context_mask_t *dst, const umpi_context_mask_t *src);

/* This process's bitmap (comm.c). */
extern umpi_context_mask_t umpi_context_free;

/*
 * Concurrent agreements in one process (MPI_THREAD_MULTIPLE: threads creating communicators on
 * different parents at once). The big lock is released while an agreement waits for the other
 * members, so two agreements must never propose the same pair: each reserves what it proposes
 * until it ends, and proposes only pairs free and not reserved.
 *
 * First round: a window, the UMPI_CONTEXT_WINDOW lowest such pairs. It never waits for another
 * agreement of this process, so agreements that depend on each other through other processes
 * cannot deadlock, and with one thread (or disjoint ids in use) it nearly always succeeds. When
 * the members' windows have no pair in common, every member sees the empty result, and all go on
 * to the fallback rounds: only the "owner" proposes all free unreserved pairs, the others an
 * empty mask, and an empty result is retried (reservation and ownership go back after each
 * empty round). Ownership goes to the lowest-keyed agreement in fallback (the parent's context
 * id, the same at every member), so the lowest of them wins everywhere: no livelock. An empty
 * result from proposals that were all complete (mask.owner) means the ids are exhausted.
 *
 * Known limit: in fallback rounds the owner's reservation blocks the other fallback agreements of
 * its process while it waits; a cycle through two threads of this process (the other members
 * reach the owner's agreement only after one that needs this process's ids) can then hang. It
 * takes two agreements whose windows already failed. MPI_Comm_idup's agreements (comm_idup.c)
 * are agreements like the others; they run in the progress engine, so one thread may have several
 * in flight. All calls with the big lock held (comm.c, comm_idup.c).
 */
#define UMPI_CONTEXT_WINDOW 64

typedef struct umpi_context_round {
    uint32_t key;
    int owner;
    int attempt;                /* rounds done; 0: window round */
    int holds;                  /* held is reserved */
    umpi_context_mask_t held;   /* what this agreement proposed last */
    struct umpi_context_round *next;
} umpi_context_round_t;

/* Registers an agreement under key. */
void umpi_context_round_begin(umpi_context_round_t *r, uint32_t key);
/* This round's proposal (reserved until the round is retried or ends). */
void umpi_context_round_propose(umpi_context_round_t *r, umpi_context_mask_t *m);
/* After the members combined their proposals into m: 1 with *context set when a pair was found,
 * 0 to retry (reservation and ownership go back), -1 when the ids are exhausted. After a found
 * pair, the reservation stays until umpi_context_round_end. */
int umpi_context_round_result(umpi_context_round_t *r, const umpi_context_mask_t *m, uint32_t *context);
/* An empty round (when the caller decides retries itself): reservation and ownership go back. */
void umpi_context_round_retry(umpi_context_round_t *r);
/* Unregisters r, gives back its reservation and ownership (after the caller took the pair, or
 * gave up). */
void umpi_context_round_end(umpi_context_round_t *r);

#endif
