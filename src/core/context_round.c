/*
 * Concurrent context-id agreements in one process (umpi_context.h): which pairs each agreement in
 * flight proposes, so that two agreements of one process never take the same pair. The rounds
 * between processes are run by their caller (umpi_comm_context_agree, src/api/comm.c).
 */
#include "core/umpi.h"
#include "core/umpi_context.h"

#include <string.h>

static umpi_context_round_t *umpi__rounds;  /* registered agreements, by key (ties: first come) */
static umpi_context_round_t *umpi__owner;   /* the one proposing the whole bitmap, or NULL */
static umpi_context_mask_t umpi__reserved;  /* pairs proposed by agreements in flight (bit set) */
static int umpi__nreserved;                 /* agreements holding a reservation */

void umpi_context_round_begin(umpi_context_round_t *r, uint32_t key)
{
    umpi_context_round_t **p = &umpi__rounds;
    while (*p != NULL && (*p)->key <= key)
        p = &(*p)->next;
    r->key = key;
    r->owner = 0;
    r->attempt = 0;
    r->holds = 0;
    r->next = *p;
    *p = r;
}

/* Gives back the pairs r reserved. */
static void umpi__round_unreserve(umpi_context_round_t *r)
{
    if (!r->holds)
        return;
    for (int i = 0; i < UMPI_CONTEXT_WORDS; i++)
        umpi__reserved.word[i] &= ~r->held.word[i];
    r->holds = 0;
    umpi__nreserved--;
}

/* The lowest-keyed agreement past its first round: the one ownership may go to. */
static umpi_context_round_t *umpi__round_first_fallback(void)
{
    umpi_context_round_t *q = umpi__rounds;
    while (q != NULL && q->attempt == 0)
        q = q->next;
    return q;
}

void umpi_context_round_propose(umpi_context_round_t *r, umpi_context_mask_t *m)
{
    int others = umpi__nreserved != 0; /* r holds nothing here */
    memset(m, 0, sizeof(*m));
    if (r->attempt == 0) {
        /* a window: the UMPI_CONTEXT_WINDOW lowest pairs free and not reserved */
        int k = 0;
        for (int i = 0; i < UMPI_CONTEXT_WORDS && k < UMPI_CONTEXT_WINDOW; i++) {
            uint64_t w = umpi_context_free.word[i] & ~umpi__reserved.word[i];
            while (w != 0 && k < UMPI_CONTEXT_WINDOW) {
                uint64_t bit = w & -w;
                m->word[i] |= bit;
                w &= ~bit;
                k++;
            }
        }
        /* complete when it holds every free pair and nothing else was reserved */
        m->owner = k < UMPI_CONTEXT_WINDOW && !others;
    } else {
        if (umpi__owner == NULL && umpi__round_first_fallback() == r)
            umpi__owner = r;
        r->owner = umpi__owner == r;
        if (r->owner) {
            for (int i = 0; i < UMPI_CONTEXT_WORDS; i++)
                m->word[i] = umpi_context_free.word[i] & ~umpi__reserved.word[i];
            m->owner = !others;
        }
    }
    r->held = *m;
    r->holds = 1;
    umpi__nreserved++;
    for (int i = 0; i < UMPI_CONTEXT_WORDS; i++)
        umpi__reserved.word[i] |= m->word[i];
}

int umpi_context_round_result(umpi_context_round_t *r, const umpi_context_mask_t *m, uint32_t *context)
{
    int id = umpi_context_lowest(m);
    if (id >= 0) {
        *context = (uint32_t) id;
        return 1;
    }
    if (m->owner)
        return -1;
    umpi_context_round_retry(r);
    return 0;
}

void umpi_context_round_retry(umpi_context_round_t *r)
{
    /* No pair was chosen: the reservation and ownership go back (keeping ownership could
     * livelock two agreements that each own the bitmap at a different process). */
    umpi_debug(3, "context-id agreement (key %u): round %d found no common pair, retrying", (unsigned) r->key,
               r->attempt);
    umpi__round_unreserve(r);
    if (umpi__owner == r)
        umpi__owner = NULL;
    r->attempt++;
}

void umpi_context_round_end(umpi_context_round_t *r)
{
    umpi_context_round_t **p = &umpi__rounds;
    while (*p != r)
        p = &(*p)->next;
    *p = r->next;
    umpi__round_unreserve(r);
    if (umpi__owner == r)
        umpi__owner = NULL;
}

