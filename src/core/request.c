/* The request pool: chunks of UMPI_REQ_CHUNK requests that never move, threaded on a free list. */
#include "core/umpi_request.h"

#include <stdlib.h>

struct umpi_request_pool umpi_request_pool;
void (*umpi_request_sched_free)(void *sched);

umpi_request_t *umpi_request_alloc_grow(void)
{
    struct umpi_request_pool *p = &umpi_request_pool;
    if (p->nchunks == UMPI_REQ_MAX_CHUNKS)
        return NULL;
    umpi_request_t *chunk = calloc(UMPI_REQ_CHUNK, sizeof(*chunk));
    if (chunk == NULL)
        return NULL;
    uint32_t base = p->nchunks << UMPI_REQ_CHUNK_BITS;
    /* Thread in reverse so that low indices are handed out first. */
    for (uint32_t i = UMPI_REQ_CHUNK; i-- > 0;) {
        chunk[i].handle = UMPI_HANDLE_MAKE(UMPI_KIND_DIRECT, UMPI_OBJ_REQUEST, base + i);
        chunk[i].next_free = p->free_list;
        p->free_list = &chunk[i];
    }
    p->chunks[p->nchunks++] = chunk;
    return p->free_list;
}

void umpi_request_free_tmp(umpi_request_t *r)
{
    if (r->tmp_put != NULL)
        r->tmp_put(r->tmp, r->tmp_len);
    else
        free(r->tmp);
    r->tmp = NULL;
    r->tmp_put = NULL;
}

void umpi_request_pool_finalize(void)
{
    struct umpi_request_pool *p = &umpi_request_pool;
    if (p->in_use > 0)
        umpi_debug(1, "%ld requests still allocated at MPI_Finalize (never completed or freed)", p->in_use);
    for (uint32_t i = 0; i < p->nchunks; i++)
        free(p->chunks[i]);
    p->nchunks = 0;
    p->free_list = NULL;
    p->in_use = 0;
}
