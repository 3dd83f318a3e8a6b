/*
 * The two-level handle table of umpi_obj.h.
 *
 * Writers (insert, set, remove) take the table's mutex; readers (umpi_ht_get) take nothing. That
 * is safe because chunks never move or go away, a chunk pointer is published before `limit`
 * covers it (release store), and a slot is published with a release store after the object
 * behind it is fully built. A reader that sees an index below `limit` therefore sees its chunk.
 */
#include "core/umpi_obj.h"

#include <stdlib.h>

/* Makes sure idx has a chunk; called with the lock held. */
static umpi_status_t umpi__ht_reserve(struct umpi_handle_table *t, uint32_t idx)
{
    uint32_t c = idx >> UMPI_HT_CHUNK_BITS;
    if (c >= UMPI_HT_MAX_CHUNKS) {
        umpi_status_msg("handle table full (%u objects)", UMPI_HT_MAX_CHUNKS * UMPI_HT_CHUNK);
        return UMPI_ERR_NOMEM;
    }
    /* Chunks below `limit` all exist. One above it may too (a statically built first chunk
     * of builtins): it is adopted rather than replaced. */
    while (t->limit <= idx) {
        uint32_t next_chunk = t->limit >> UMPI_HT_CHUNK_BITS;
        if (t->chunks[next_chunk] == NULL) {
            void **chunk = calloc(UMPI_HT_CHUNK, sizeof(void *));
            if (chunk == NULL) {
                umpi_status_msg("cannot grow handle table to %u objects",
                                (next_chunk + 1) * UMPI_HT_CHUNK);
                return UMPI_ERR_NOMEM;
            }
            __atomic_store_n(&t->chunks[next_chunk], chunk, __ATOMIC_RELEASE);
        }
        __atomic_store_n(&t->limit, (next_chunk + 1) * UMPI_HT_CHUNK, __ATOMIC_RELEASE);
    }
    return UMPI_OK;
}

static void umpi__ht_store(struct umpi_handle_table *t, uint32_t idx, void *obj)
{
    __atomic_store_n(&t->chunks[idx >> UMPI_HT_CHUNK_BITS][idx & (UMPI_HT_CHUNK - 1)], obj,
                     __ATOMIC_RELEASE);
}

int umpi_ht_insert(struct umpi_handle_table *t, void *obj)
{
    int ret = -1;
    uint32_t idx;

    pthread_mutex_lock(&t->lock);
    if (t->nfree > 0) {
        /* LIFO reuse: the most recently freed slot is the one most likely still in cache. */
        idx = t->free_list[--t->nfree];
    } else {
        if (t->next < t->first_dynamic)
            t->next = t->first_dynamic;
        idx = t->next;
        if (umpi__ht_reserve(t, idx) != UMPI_OK)
            goto fail;
        t->next++;
    }
    umpi__ht_store(t, idx, obj);
    ret = (int) idx;
fail:
    pthread_mutex_unlock(&t->lock);
    return ret;
}

void umpi_ht_set(struct umpi_handle_table *t, uint32_t idx, void *obj)
{
    pthread_mutex_lock(&t->lock);
    /* Builtin slots are few and set at start-up; failing to allocate the first chunk there
     * leaves the process unable to run MPI at all. */
    if (umpi__ht_reserve(t, idx) != UMPI_OK)
        umpi_die(1, "cannot set up builtin object %u: %s", idx, umpi_status_last_msg());
    umpi__ht_store(t, idx, obj);
    pthread_mutex_unlock(&t->lock);
}

void umpi_ht_remove(struct umpi_handle_table *t, uint32_t idx)
{
    pthread_mutex_lock(&t->lock);
    if (idx >= t->limit || idx < t->first_dynamic)
        goto out; /* not ours to free: a builtin, or a bogus index */
    umpi__ht_store(t, idx, NULL);
    if (t->nfree == t->free_cap) {
        uint32_t cap = t->free_cap ? 2 * t->free_cap : 64;
        uint32_t *fl = realloc(t->free_list, cap * sizeof(*fl));
        /* Without memory for the free list the index is simply never reused: a slot lost,
         * not a correctness problem. */
        if (fl == NULL)
            goto out;
        t->free_list = fl;
        t->free_cap = cap;
    }
    t->free_list[t->nfree++] = idx;
out:
    pthread_mutex_unlock(&t->lock);
}
