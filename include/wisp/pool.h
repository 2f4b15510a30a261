/**
 * @file pool.h
 * Fixed-size object pools over static storage (storage lives in the stack
 * instance, sized from opt.h). O(1) alloc/free from a free list, with used,
 * high-water and failure counters so users can size them.
 * Who may call: the core context only (checked in debug builds through
 * the pool's stack: WISP_CORE_ASSERT_OWNER).
 */
#ifndef WISP_POOL_H
#define WISP_POOL_H

#include "wisp/opt.h"
#include "wisp/arch.h"

#if WISP_ALLOC_FAIL_INJECT
/** Allocation-failure injection (WISP_ALLOC_FAIL_INJECT, wisp/debug.h):
 *  one per stack, shared by its pools. */
struct wisp_alloc_inject {
    uint32_t count;       /**< allocation attempts through the pools, total */
    uint32_t fail_at;     /**< the next attempt (value of count) that fails */
    uint32_t fail_len;    /**< attempts still to fail from fail_at on, 0 = none */
    uint32_t injected;    /**< failures injected, total */
};
#endif
struct wisp_stack;

struct wisp_pool {
    const char *name;
    void *free_list;
    uint8_t *base;
    uint32_t elem_size;   /**< bytes per element, multiple of the alignment */
    uint16_t count;       /**< elements in all */
    uint16_t used;        /**< elements handed out now */
    uint16_t high;        /**< high-water mark of used */
    uint32_t failed;      /**< allocations refused because the pool was empty */
    uint32_t allocs;      /**< successful allocations, total */
#if WISP_ALLOC_FAIL_INJECT
    struct wisp_alloc_inject *inject; /**< the stack's injection state (NULL: none) */
#endif
    struct wisp_stack *stack; /**< the stack owning this pool (set by wisp_stack_init; NULL for a
                                   free-standing pool): whose core owner may alloc and free */
};

/** Alignment of every pool element (enough for any C object). */
#define WISP_POOL_ALIGN 8u
#define WISP_POOL_ELEM(sz) WISP_ALIGN_UP((size_t)(sz), WISP_POOL_ALIGN)

/** Prepare a pool of count elements over mem (mem_size bytes, 8-byte
 *  aligned). Each element takes WISP_POOL_ELEM(elem_size) bytes; storage
 *  for fewer elements than count is a configuration error (asserted in
 *  debug builds; the pool is clamped to what fits). */
void wisp_pool_init(struct wisp_pool *pool, const char *name, void *mem, size_t mem_size, size_t elem_size,
                    uint16_t count);
/** Take one element, or NULL when empty (counted in failed). With
 *  WISP_ALLOC_FAIL_INJECT, an attempt chosen by wisp_debug_fail_alloc
 *  fails the same way, as if the pool were empty. */
void *wisp_pool_alloc(struct wisp_pool *pool);
/** Return an element. Freeing a foreign pointer or freeing twice is a
 *  programming error: checked with WISP_ASSERT in debug builds. */
void wisp_pool_free(struct wisp_pool *pool, void *elem);
/** True when elem lies inside this pool's storage at an element boundary. */
bool wisp_pool_owns(const struct wisp_pool *pool, const void *elem);

#endif /* WISP_POOL_H */
