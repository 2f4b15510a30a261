/**
 * @file timer.h
 * Event-driven one-shot timers with millisecond resolution. Timers are
 * intrusive (embedded in the object that owns them), so arming one never
 * allocates; the stack keeps them in a list sorted by deadline and reports
 * the earliest through wisp_stack_next_deadline().
 * Who may call: the core context only.
 */
#ifndef WISP_TIMER_H
#define WISP_TIMER_H

#include "wisp/arch.h"

struct wisp_stack;
struct wisp_timer;

typedef void (*wisp_timer_fn)(struct wisp_stack *s, struct wisp_timer *t);

struct wisp_timer;

/** Wrap-safe time comparison: a is before b. */
static inline bool wisp_time_before(uint32_t a, uint32_t b) { return (int32_t)(a - b) < 0; }

/** (Re)arm t to call fn at now + delay_ms. Re-arming moves the deadline. */
void wisp_timer_arm(struct wisp_stack *s, struct wisp_timer *t, uint32_t delay_ms, wisp_timer_fn fn);
/** Disarm t (no-op when not armed). */
void wisp_timer_cancel(struct wisp_stack *s, struct wisp_timer *t);

/* the layout of the structures above (private tier) */
#include "wisp/priv/timer.h"

/** True when t is armed. */
static inline bool wisp_timer_armed(const struct wisp_timer *t) { return t->WISP_PRIV(armed) != 0; }

#endif /* WISP_TIMER_H */
