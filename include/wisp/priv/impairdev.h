/**
 * @file priv/impairdev.h
 * Private tier: the layout of the structures of wisp/impairdev.h that a user
 * allocates or that the stack instance holds. Not API: applications
 * use the functions of wisp/impairdev.h; the members are named through
 * WISP_PRIV() (wisp/arch.h), so code outside the library (no
 * WISP_PRIVATE_ACCESS) cannot use them by accident. May change in
 * any release.
 */
#ifndef WISP_PRIV_IMPAIRDEV_H
#define WISP_PRIV_IMPAIRDEV_H

#include "wisp/impairdev.h"

struct wisp_impairdev {
    struct wisp_dev WISP_PRIV(dev);               /**< the wrapper device (attach this one) */
    struct wisp_stack *WISP_PRIV(stack);
    struct wisp_impair_cfg WISP_PRIV(rx_cfg), WISP_PRIV(tx_cfg);
    struct wisp_impair_stats WISP_PRIV(rx), WISP_PRIV(tx);
    uint32_t WISP_PRIV(rng);                      /**< xorshift32 state, never 0 */
    struct wisp_pbuf *WISP_PRIV(rx_held);         /**< held received frame (owned) */
    struct wisp_pbuf *WISP_PRIV(tx_held);         /**< held transmit frame (own reference) */
    uint8_t WISP_PRIV(tx_held_due);               /**< tx_held should have gone, lower was busy */
    uint16_t WISP_PRIV(last_corrupt_off);         /**< byte offset of the last flipped bit */
    uint8_t WISP_PRIV(last_corrupt_bit);          /**< bit (0..7) flipped in that byte */
};

#endif /* WISP_PRIV_IMPAIRDEV_H */
