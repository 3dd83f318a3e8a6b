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
} umpi_context_mask_t;

enum { UMPI_CONTEXT_WORLD = 0, UMPI_CONTEXT_SELF = 2 };

/* Every pair free except the builtin communicators' ones. */
void umpi_context_mask_init(umpi_context_mask_t *m);
/* The lowest free pair's point-to-point id in m, or -1 when none is free. */
int umpi_context_lowest(const umpi_context_mask_t *m);
/* Marks the pair of context id as used / free in m. */
void umpi_context_take(umpi_context_mask_t *m, uint32_t context_id);
void umpi_context_give(umpi_context_mask_t *m, uint32_t context_id);
/* dst &= src */
void umpi_context_and(umpi_context_mask_t *dst, const umpi_context_mask_t *src);

/* This process's bitmap (comm.c). */
extern umpi_context_mask_t umpi_context_free;

#endif
