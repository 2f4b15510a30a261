/**
 * @file debug.c
 * Debug probes of a stack (wisp/debug.h): allocation-failure injection.
 * The failing itself happens in wisp_pool_alloc (pool.c).
 */
#include "wisp/debug.h"

wisp_err_t wisp_debug_fail_alloc(struct wisp_stack *s, uint32_t n)
{
    WISP_CORE_ASSERT_OWNER(s);
#if WISP_ALLOC_FAIL_INJECT
    /* fail_at is compared with the attempt counter after its increment;
     * 0 means none, so a target that wraps to 0 moves on by one. */
    s->alloc_inject.fail_at = n == 0u ? 0u : s->alloc_inject.count + n;
    if (n != 0u && s->alloc_inject.fail_at == 0u) {
        s->alloc_inject.fail_at = 1u;
    }
    return WISP_OK;
#else
    (void)s;
    (void)n;
    return WISP_ERR_VAL;
#endif
}

uint32_t wisp_debug_alloc_count(const struct wisp_stack *s)
{
#if WISP_ALLOC_FAIL_INJECT
    return s->alloc_inject.count;
#else
    (void)s;
    return 0u;
#endif
}

uint32_t wisp_debug_alloc_injected(const struct wisp_stack *s)
{
#if WISP_ALLOC_FAIL_INJECT
    return s->alloc_inject.injected;
#else
    (void)s;
    return 0u;
#endif
}

bool wisp_debug_fail_armed(const struct wisp_stack *s)
{
#if WISP_ALLOC_FAIL_INJECT
    return s->alloc_inject.fail_at != 0u;
#else
    (void)s;
    return false;
#endif
}
