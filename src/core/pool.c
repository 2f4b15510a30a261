/**
 * @file pool.c
 * Fixed-size object pools: a free list threaded through the free elements.
 */
#define WISP_PRIVATE_ACCESS 1 /* library code: sees the private tier (wisp/arch.h) */
#include "wisp/opt.h"
#include "wisp/pool.h"

#if WISP_DEBUG
/* Debug builds mark free elements: after the free-list link, a word that
 * depends on the element's address (elements big enough for both only). */
#define POOL_MARK_MAGIC 0x5eedf4eeu

static uint32_t pool_mark_value(const void *elem)
{
    return POOL_MARK_MAGIC ^ (uint32_t)(uintptr_t)elem;
}

static void pool_mark(const struct wisp_pool *pool, void *elem, bool on)
{
    uint32_t v = on ? pool_mark_value(elem) : 0u;
    if (pool->elem_size >= sizeof(void *) + sizeof(uint32_t)) {
        memcpy((uint8_t *)elem + sizeof(void *), &v, sizeof v);
    }
}

static bool pool_marked(const struct wisp_pool *pool, const void *elem)
{
    uint32_t v;
    if (pool->elem_size < sizeof(void *) + sizeof(uint32_t)) {
        return true; /* no room for a mark: always walk */
    }
    memcpy(&v, (const uint8_t *)elem + sizeof(void *), sizeof v);
    return v == pool_mark_value(elem);
}
#endif

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
#if WISP_ALLOC_FAIL_INJECT
    pool->inject = NULL;
#endif
    pool->free_list = NULL;
    pool->stack = NULL;
    /* Thread the list so that the lowest address is handed out first. */
    for (i = count; i > 0; i--) {
        void *e = pool->base + (size_t)(i - 1u) * pool->elem_size;
        memcpy(e, &pool->free_list, sizeof(void *));
#if WISP_DEBUG
        pool_mark(pool, e, true);
#endif
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

#if WISP_ALLOC_FAIL_INJECT
/* Count an allocation attempt; true when it is the one chosen to fail. */
static bool pool_inject_fail(struct wisp_alloc_inject *inj)
{
    inj->count++;
    if (inj->fail_len != 0u && inj->count == inj->fail_at) {
        inj->fail_at++;
        inj->fail_len--;
        inj->injected++;
        return true;
    }
    return false;
}
#endif

void *wisp_pool_alloc(struct wisp_pool *pool)
{
    void *e = pool->free_list;
#if WISP_ALLOC_FAIL_INJECT
    if (pool->inject != NULL && pool_inject_fail(pool->inject)) {
        e = NULL; /* injected: exactly as if the pool were empty */
    }
#endif
    WISP_CORE_ASSERT_OWNER(pool->stack);
    if (e == NULL) {
        pool->failed++;
        return NULL;
    }
    memcpy(&pool->free_list, e, sizeof(void *));
#if WISP_DEBUG
    pool_mark(pool, e, false);
#endif
    pool->used++;
    pool->allocs++;
    if (pool->used > pool->high) {
        pool->high = pool->used;
    }
    return e;
}

void wisp_pool_free(struct wisp_pool *pool, void *elem)
{
    WISP_CORE_ASSERT_OWNER(pool->stack);
    if (elem == NULL) {
        return;
    }
    WISP_ASSERT(wisp_pool_owns(pool, elem));
    WISP_ASSERT(pool->used > 0);
#if WISP_DEBUG
    /* Double free: elem must not already be on the free list. The mark
     * makes the common case O(1); a live object that happens to hold the
     * mark's value is told apart by walking the list (rare). */
    if (pool_marked(pool, elem)) {
        void *f = pool->free_list;
        while (f != NULL) {
            WISP_ASSERT(f != elem);
            memcpy(&f, f, sizeof(void *));
        }
    }
#endif
    memcpy(elem, &pool->free_list, sizeof(void *));
#if WISP_DEBUG
    pool_mark(pool, elem, true);
#endif
    pool->free_list = elem;
    pool->used--;
}
