/**
 * @file debug.h
 * Debug probes of a stack for tests: allocation-failure injection
 * (WISP_ALLOC_FAIL_INJECT, on by default when WISP_DEBUG).
 *
 * Every allocation from any pool of a stack (pbufs of every kind, UDP and
 * TCP PCBs, listeners, TCP segments: all go through wisp_pool_alloc) is
 * counted. wisp_debug_fail_alloc(s, n) makes the nth attempt from now fail
 * exactly as if its pool were empty: NULL to the caller, counted in the
 * pool's failure counter (failed of wisp_stack_pool_stats). One attempt
 * fails, the ones after it succeed again; wisp_debug_fail_allocs fails a run of them. A
 * test learns how many allocations an exchange takes from
 * wisp_debug_alloc_count, then runs it again from scratch for n = 1, 2,
 * ... (test/sim/test_alloc_walk.c).
 *
 * Without WISP_ALLOC_FAIL_INJECT the functions exist and do nothing
 * (wisp_debug_fail_alloc returns WISP_ERR_VAL, the counters read 0).
 * Who may call: the core context of s.
 */
#ifndef WISP_DEBUG_H
#define WISP_DEBUG_H

#include "wisp/stack.h"

/** Fail the nth allocation attempt of s from now (n = 1: the next one);
 *  n = 0 disarms. Replaces an armed failure not yet reached. Returns
 *  WISP_OK, or WISP_ERR_VAL when injection is compiled out. */
wisp_err_t wisp_debug_fail_alloc(struct wisp_stack *s, uint32_t n);
/** Fail count consecutive allocation attempts of s, the first being the
 *  nth from now (a pool exhausted for a while); n = 0 or count = 0
 *  disarms. Same returns as wisp_debug_fail_alloc. */
wisp_err_t wisp_debug_fail_allocs(struct wisp_stack *s, uint32_t n, uint32_t count);
/** Allocation attempts of s through its pools since wisp_stack_init
 *  (failed ones included; wraps at 2^32). */
uint32_t wisp_debug_alloc_count(const struct wisp_stack *s);
/** Failures injected since wisp_stack_init. */
uint32_t wisp_debug_alloc_injected(const struct wisp_stack *s);
/** True while a failure is armed and not yet reached. */
bool wisp_debug_fail_armed(const struct wisp_stack *s);

#endif /* WISP_DEBUG_H */
