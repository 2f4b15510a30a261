/**
 * @file priv/pool.h
 * Private tier: the layout of the structures of wisp/pool.h that a user
 * allocates or that the stack instance holds. Not API: applications
 * use the functions of wisp/pool.h; the members are named through
 * WISP_PRIV() (wisp/arch.h), so code outside the library (no
 * WISP_PRIVATE_ACCESS) cannot use them by accident. May change in
 * any release.
 */
#ifndef WISP_PRIV_POOL_H
#define WISP_PRIV_POOL_H

#include "wisp/pool.h"

#if WISP_ALLOC_FAIL_INJECT
/** Allocation-failure injection (WISP_ALLOC_FAIL_INJECT, wisp/debug.h):
 *  one per stack, shared by its pools. */
struct wisp_alloc_inject {
    uint32_t WISP_PRIV(count);       /**< allocation attempts through the pools, total */
    uint32_t WISP_PRIV(fail_at);     /**< the next attempt (value of count) that fails */
    uint32_t WISP_PRIV(fail_len);    /**< attempts still to fail from fail_at on, 0 = none */
    uint32_t WISP_PRIV(injected);    /**< failures injected, total */
};
#endif

struct wisp_pool {
    const char *WISP_PRIV(name);
    void *WISP_PRIV(free_list);
    uint8_t *WISP_PRIV(base);
    uint32_t WISP_PRIV(elem_size);   /**< bytes per element, multiple of the alignment */
    uint16_t WISP_PRIV(count);       /**< elements in all */
    uint16_t WISP_PRIV(used);        /**< elements handed out now */
    uint16_t WISP_PRIV(high);        /**< high-water mark of used */
    uint32_t WISP_PRIV(failed);      /**< allocations refused because the pool was empty */
    uint32_t WISP_PRIV(allocs);      /**< successful allocations, total */
#if WISP_ALLOC_FAIL_INJECT
    struct wisp_alloc_inject *WISP_PRIV(inject); /**< the stack's injection state (NULL: none) */
#endif
    struct wisp_stack *WISP_PRIV(stack); /**< the stack owning this pool (set by wisp_stack_init; NULL for a
                                   free-standing pool): whose core owner may alloc and free */
};

#endif /* WISP_PRIV_POOL_H */
