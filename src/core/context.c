/* Context-id bitmap arithmetic (umpi_context.h); the agreement between processes is in
 * src/api/comm.c, the bookkeeping of concurrent agreements in context_round.c. */
#include "core/umpi_context.h"

#include <string.h>

void umpi_context_mask_init(umpi_context_mask_t *m)
{
    memset(m->word, 0xff, sizeof(m->word));
    m->owner = 0;
    umpi_context_take(m, UMPI_CONTEXT_WORLD);
    umpi_context_take(m, UMPI_CONTEXT_SELF);
}

int umpi_context_lowest(const umpi_context_mask_t *m)
{
    for (int i = 0; i < UMPI_CONTEXT_WORDS; i++)
        if (m->word[i] != 0)
            return 2 * (64 * i + __builtin_ctzll(m->word[i]));
    return -1;
}

void umpi_context_take(umpi_context_mask_t *m, uint32_t context_id)
{
    uint32_t pair = context_id / 2;
    m->word[pair / 64] &= ~((uint64_t) 1 << (pair % 64));
}

void umpi_context_give(umpi_context_mask_t *m, uint32_t context_id)
{
    uint32_t pair = context_id / 2;
    m->word[pair / 64] |= (uint64_t) 1 << (pair % 64);
}

void umpi_context_and(umpi_context_mask_t *dst, const umpi_context_mask_t *src)
{
    for (int i = 0; i < UMPI_CONTEXT_WORDS; i++)
        dst->word[i] &= src->word[i];
    dst->owner &= src->owner;
}
