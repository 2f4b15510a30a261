/**
 * @file pool.c
 * Fixed-size object pools: a free list threaded through the free elements.
 */
#include "wisp/opt.h"
#include "wisp/pool.h"

void wisp_pool_init(struct wisp_pool *pool, const char *name, void *mem, size_t mem_size, size_t elem_size,
                    uint16_t count)
{
    uint16_t i;
    size_t stride = WISP_POOL_ELEM(elem_size);
    /* Storage too small for count elements is a configuration error: never
     * hand out memory beyond it (checked in debug builds, clamped always). */
    WISP_ASSERT((size_t)count * stride <= mem_size);
    if ((size_t)count * stride > mem_size) {
        count = (uint16_t)(mem_size / stride);
    }
    pool->name = name;
    pool->base = (uint8_t *)mem;
    pool->elem_size = (uint32_t)stride;
    pool->count = count;
    pool->used = 0;
    pool->high = 0;
    pool->failed = 0;
    pool->allocs = 0;
    pool->free_list = NULL;
    /* Thread the list so that the lowest address is handed out first. */
    for (i = count; i > 0; i--) {
        void *e = pool->base + (size_t)(i - 1u) * pool->elem_size;
        memcpy(e, &pool->free_list, sizeof(void *));
        pool->free_list = e;
    }
}

bool wisp_pool_owns(const struct wisp_pool *pool, const void *elem)
{
    const uint8_t *p = (const uint8_t *)elem;
    size_t off;
    if (p < pool->base || p >= pool->base + (size_t)pool->count * pool->elem_size) {
        return false;
    }
    off = (size_t)(p - pool->base);
    return (off % pool->elem_size) == 0;
}

void *wisp_pool_alloc(struct wisp_pool *pool)
{
    void *e = pool->free_list;
    if (e == NULL) {
        pool->failed++;
        return NULL;
    }
    memcpy(&pool->free_list, e, sizeof(void *));
    pool->used++;
    pool->allocs++;
    if (pool->used > pool->high) {
        pool->high = pool->used;
    }
    return e;
}

void wisp_pool_free(struct wisp_pool *pool, void *elem)
{
    if (elem == NULL) {
        return;
    }
    WISP_ASSERT(wisp_pool_owns(pool, elem));
    WISP_ASSERT(pool->used > 0);
#if WISP_DEBUG
    {
        /* Double free: elem must not already be on the free list. */
        void *f = pool->free_list;
        while (f != NULL) {
            WISP_ASSERT(f != elem);
            memcpy(&f, f, sizeof(void *));
        }
    }
#endif
    memcpy(elem, &pool->free_list, sizeof(void *));
    pool->free_list = elem;
    pool->used--;
}
