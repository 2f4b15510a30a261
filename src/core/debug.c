/**
 * @file debug.c
 * Debug probes of a stack (wisp/debug.h): allocation-failure injection.
 * The failing itself happens in wisp_pool_alloc (pool.c).
 */
#define WISP_PRIVATE_ACCESS 1 /* library code: sees the private tier (wisp/arch.h) */
#include "wisp/debug.h"

wisp_err_t wisp_debug_fail_allocs(struct wisp_stack *s, uint32_t n, uint32_t count)
{
    WISP_CORE_ASSERT_OWNER(s);
#if WISP_ALLOC_FAIL_INJECT
    if (n == 0u || count == 0u) {
        s->alloc_inject.fail_len = 0u; /* disarm */
        return WISP_OK;
    }
    /* compared with the attempt counter after its increment */
    s->alloc_inject.fail_at = s->alloc_inject.count + n;
    s->alloc_inject.fail_len = count;
    return WISP_OK;
#else
    (void)s;
    (void)n;
    (void)count;
    return WISP_ERR_VAL;
#endif
}

wisp_err_t wisp_debug_fail_alloc(struct wisp_stack *s, uint32_t n)
{
    WISP_CORE_ASSERT_OWNER(s);
    return wisp_debug_fail_allocs(s, n, 1u);
}

uint32_t wisp_debug_alloc_count(const struct wisp_stack *s)
{
    WISP_CORE_ASSERT_OWNER(s);
#if WISP_ALLOC_FAIL_INJECT
    return s->alloc_inject.count;
#else
    (void)s;
    return 0u;
#endif
}

uint32_t wisp_debug_alloc_injected(const struct wisp_stack *s)
{
    WISP_CORE_ASSERT_OWNER(s);
#if WISP_ALLOC_FAIL_INJECT
    return s->alloc_inject.injected;
#else
    (void)s;
    return 0u;
#endif
}

bool wisp_debug_fail_armed(const struct wisp_stack *s)
{
    WISP_CORE_ASSERT_OWNER(s);
#if WISP_ALLOC_FAIL_INJECT
    return s->alloc_inject.fail_len != 0u;
#else
    (void)s;
    return false;
#endif
}
