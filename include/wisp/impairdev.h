/**
 * @file impairdev.h
 * Impairment wrapper: a device decorator (see netif.h) that loses,
 * duplicates, corrupts and reorders frames, with separate probabilities for
 * the receive and the transmit direction, for testing a stack against a bad
 * link. Decisions come from the wrapper's own xorshift generator seeded at
 * init, so a run is reproducible and independent of the stack's generator.
 *
 * Probabilities are in parts per million (WISP_IMPAIR_PPM_ALL = always,
 * 0 = never); no floating point is needed on the target.
 *
 * Per frame and direction, in this order:
 *  1. loss: the frame is dropped (receive: freed; transmit: reported as
 *     sent, the caller keeps its reference as always);
 *  2. corruption: one random bit of a copy is flipped and the copy goes on
 *     instead (transmit: a clone, the caller's frame is never modified;
 *     receive: in place when the chain is private and writable, else a
 *     copy). The last flip is remembered in last_corrupt_off/bit;
 *  3. duplication: the frame goes on twice (transmit: transmitted twice;
 *     receive: a copy from the receive budget goes up after it);
 *  4. reordering: when no frame of this direction is held, the frame is
 *     held back and goes on right after the next frame of the same
 *     direction (or at wisp_impairdev_flush). Timer-free: a held frame
 *     waits until traffic or a flush releases it. Reordering wins over
 *     duplication (a held frame is released once).
 *
 * Who may call: the core context only.
 */
#ifndef WISP_IMPAIRDEV_H
#define WISP_IMPAIRDEV_H

#include "wisp/netif.h"

/** Probability 1.0 in parts per million. */
#define WISP_IMPAIR_PPM_ALL 1000000u

/** Probabilities of one direction, parts per million (0..1000000). */
struct wisp_impair_cfg {
    uint32_t loss_ppm;
    uint32_t dup_ppm;
    uint32_t corrupt_ppm;
    uint32_t reorder_ppm;
};

/** Counters of one direction. */
struct wisp_impair_stats {
    uint32_t frames;      /**< frames that entered the wrapper */
    uint32_t passed;      /**< frames handed on (duplicates and released ones included) */
    uint32_t lost;        /**< dropped by the loss decision */
    uint32_t duplicated;  /**< extra copies handed on */
    uint32_t corrupted;   /**< frames handed on with a flipped bit */
    uint32_t reordered;   /**< frames held back and released later */
    uint32_t nomem;       /**< an impairment skipped or a frame dropped: no buffer for a copy */
    uint32_t errors;      /**< transmit: lower device error on a duplicate or released frame */
};

struct wisp_impairdev;

/** Set up im above the device lower (wisp_dev_wrap) with no impairment and
 *  the generator seeded from seed. WISP_ERR_ARG on NULL arguments. */
wisp_err_t wisp_impairdev_init(struct wisp_impairdev *im, struct wisp_stack *s, struct wisp_dev *lower, uint32_t seed);
/** Set the probabilities of each direction (NULL leaves one unchanged).
 *  Values above WISP_IMPAIR_PPM_ALL are clamped. */
void wisp_impairdev_set(struct wisp_impairdev *im, const struct wisp_impair_cfg *rx, const struct wisp_impair_cfg *tx);
/** Release held frames now (receive: passed up; transmit: sent down; when
 *  the lower device is busy it goes at the next tx_ready). */
void wisp_impairdev_flush(struct wisp_impairdev *im);
/** Drop held frames without delivering them (call before removing the
 *  netif / deinitialising the stack, so every pool is back at zero). */
void wisp_impairdev_deinit(struct wisp_impairdev *im);

/* the layout of the structures above (private tier) */
#include "wisp/priv/impairdev.h"

#endif /* WISP_IMPAIRDEV_H */
