/**
 * @file priv/timer.h
 * Private tier: the layout of the structures of wisp/timer.h that a user
 * allocates or that the stack instance holds. Not API: applications
 * use the functions of wisp/timer.h; the members are named through
 * WISP_PRIV() (wisp/arch.h), so code outside the library (no
 * WISP_PRIVATE_ACCESS) cannot use them by accident. May change in
 * any release.
 */
#ifndef WISP_PRIV_TIMER_H
#define WISP_PRIV_TIMER_H

#include "wisp/timer.h"

struct wisp_timer {
    struct wisp_timer *WISP_PRIV(next);
    wisp_timer_fn WISP_PRIV(fn);
    uint32_t WISP_PRIV(due);     /**< absolute deadline, ms on the stack clock */
    uint8_t WISP_PRIV(armed);
};

#endif /* WISP_PRIV_TIMER_H */
