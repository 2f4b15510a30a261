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
struct wisp_alloc_inject;
#endif
struct wisp_stack;

struct wisp_pool;

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

/* the layout of the structures above (private tier) */
#include "wisp/priv/pool.h"

#endif /* WISP_POOL_H */
