/**
 * @file impairdev.c
 * Impairment wrapper: seeded loss, duplication, corruption and reordering
 * of frames, per direction, as a device decorator. Portable core code (no
 * stdio, no allocation beyond the stack's pbuf pools, no timers).
 *
 * Ownership (pbuf.h): on receive the wrapper owns each frame and either
 * passes it up or frees it; on transmit it never frees the caller's
 * reference and keeps its own reference (or a copy) for a held frame.
 */
#define WISP_PRIVATE_ACCESS 1 /* library code: sees the private tier (wisp/arch.h) */
#include "wisp/impairdev.h"
#include "wisp/stack.h"

/* xorshift32 (Marsaglia 2003): enough for test decisions, tiny state. */
static uint32_t im_rand(struct wisp_impairdev *im)
{
    uint32_t x = im->rng;
    x ^= x << 13;
    x ^= x >> 17;
    x ^= x << 5;
    im->rng = x;
    return x;
}

/* One Bernoulli decision; 0 and "always" consume no randomness. */
static bool im_roll(struct wisp_impairdev *im, uint32_t ppm)
{
    if (ppm == 0) {
        return false;
    }
    if (ppm >= WISP_IMPAIR_PPM_ALL) {
        return true;
    }
    return (im_rand(im) % WISP_IMPAIR_PPM_ALL) < ppm;
}

/* Flip one random bit of a writable chain and remember where. */
static void im_flip(struct wisp_impairdev *im, struct wisp_pbuf *p)
{
    uint16_t off;
    uint8_t bit, b;
    int v;

    if (p->tot_len == 0) {
        return;
    }
    off = (uint16_t)(im_rand(im) % p->tot_len);
    bit = (uint8_t)(im_rand(im) % 8u);
    v = wisp_pbuf_get_u8(p, off);
    if (v < 0) {
        return;
    }
    b = (uint8_t)((unsigned)v ^ (1u << bit));
    (void)wisp_pbuf_copy_in(p, &b, 1, off);
    im->last_corrupt_off = off;
    im->last_corrupt_bit = bit;
}

/* True when every buffer of the chain is ours alone and writable. */
static bool im_private(const struct wisp_pbuf *p)
{
    for (; p != NULL; p = p->next) {
        if (p->ref != 1 || (p->kind != WISP_PBUF_RAM && p->kind != WISP_PBUF_POOL)) {
            return false;
        }
    }
    return true;
}

/* A copy of a received frame from the receive budget, or NULL. */
static struct wisp_pbuf *im_rx_copy(struct wisp_impairdev *im, const struct wisp_pbuf *p)
{
    struct wisp_pbuf *c = wisp_pbuf_alloc_rx(im->stack, p->tot_len);
    const struct wisp_pbuf *q;
    uint16_t off = 0;

    if (c == NULL) {
        return NULL;
    }
    for (q = p; q != NULL; q = q->next) {
        if (q->len > 0 && wisp_pbuf_copy_in(c, q->payload, q->len, off) != WISP_OK) {
            wisp_pbuf_free(c);
            return NULL;
        }
        off = (uint16_t)(off + q->len);
    }
    c->flags = p->flags;
    c->if_idx = p->if_idx;
    c->prio = p->prio;
    return c;
}

/* ------------------------------------------------------------- receive */

static void im_release_rx(struct wisp_impairdev *im)
{
    struct wisp_pbuf *h = im->rx_held;

    if (h != NULL) {
        im->rx_held = NULL;   /* before passing up: the call may re-enter */
        im->rx.passed++;
        wisp_dev_input(&im->dev, h);
    }
}

static void im_input(struct wisp_dev *dev, struct wisp_pbuf *frame)
{
    struct wisp_impairdev *im = (struct wisp_impairdev *)dev->ctx;
    const struct wisp_impair_cfg *cfg = &im->rx_cfg;
    struct wisp_pbuf *copy = NULL;
    bool dup, reorder;

    im->rx.frames++;
    if (im_roll(im, cfg->loss_ppm)) {
        im->rx.lost++;
        wisp_pbuf_free(frame);   /* input path owns the frame */
        return;
    }
    if (im_roll(im, cfg->corrupt_ppm)) {
        if (!im_private(frame)) {
            struct wisp_pbuf *c = im_rx_copy(im, frame);
            if (c != NULL) {
                wisp_pbuf_free(frame);
                frame = c;
            }
        }
        if (im_private(frame)) {
            im_flip(im, frame);
            im->rx.corrupted++;
        } else {
            im->rx.nomem++;
        }
    }
    dup = im_roll(im, cfg->dup_ppm);
    reorder = im_roll(im, cfg->reorder_ppm);
    if (reorder && im->rx_held == NULL) {
        im->rx_held = frame;
        im->rx.reordered++;
        return;
    }
    if (dup) {
        /* A private copy: the layers above modify and free what they get. */
        copy = im_rx_copy(im, frame);
        if (copy == NULL) {
            im->rx.nomem++;
        }
    }
    im->rx.passed++;
    wisp_dev_input(dev, frame);
    if (copy != NULL) {
        im->rx.passed++;
        im->rx.duplicated++;
        wisp_dev_input(dev, copy);
    }
    im_release_rx(im);
}

/* ------------------------------------------------------------ transmit */

/* Send the held frame; when the lower device is busy keep it and retry at
 * the next tx_ready. Returns false in that case. */
static bool im_release_tx(struct wisp_impairdev *im)
{
    struct wisp_pbuf *h = im->tx_held;
    wisp_err_t err;

    if (h == NULL) {
        return true;
    }
    err = wisp_dev_transmit_lower(&im->dev, h);
    if (err == WISP_ERR_WOULDBLOCK) {
        im->tx_held_due = 1;
        return false;
    }
    if (err == WISP_OK) {
        im->tx.passed++;
    } else {
        im->tx.errors++;
    }
    im->tx_held = NULL;
    im->tx_held_due = 0;
    wisp_pbuf_free(h);   /* our own reference */
    return true;
}

static wisp_err_t im_transmit(struct wisp_dev *dev, struct wisp_pbuf *frame)
{
    struct wisp_impairdev *im = (struct wisp_impairdev *)dev->ctx;
    const struct wisp_impair_cfg *cfg = &im->tx_cfg;
    struct wisp_pbuf *out = frame;
    struct wisp_pbuf *clone = NULL;   /* our reference, freed at the end */
    bool dup, reorder;
    wisp_err_t err;

    im->tx.frames++;
    if (im_roll(im, cfg->loss_ppm)) {
        im->tx.lost++;
        return WISP_OK;   /* "sent" into the void; the caller keeps its reference */
    }
    if (im_roll(im, cfg->corrupt_ppm)) {
        /* Never modify the caller's frame: flip a bit of a clone. */
        clone = wisp_pbuf_clone(im->stack, WISP_LAYER_RAW, frame);
        if (clone != NULL) {
            im_flip(im, clone);
            im->tx.corrupted++;
            out = clone;
        } else {
            im->tx.nomem++;
        }
    }
    dup = im_roll(im, cfg->dup_ppm);
    reorder = im_roll(im, cfg->reorder_ppm);
    if (reorder && im->tx_held == NULL) {
        struct wisp_pbuf *h = NULL;
        if (out == clone) {
            h = clone;              /* the clone's reference moves to tx_held */
            clone = NULL;
        } else if (!wisp_pbuf_has_ref(frame)) {
            wisp_pbuf_ref(frame);   /* keep it: our own reference */
            h = frame;
        } else {
            /* REF payload may change after we return: keep a copy. */
            h = wisp_pbuf_clone(im->stack, WISP_LAYER_RAW, frame);
            if (h == NULL) {
                im->tx.nomem++;
            }
        }
        if (h != NULL) {
            im->tx_held = h;
            im->tx_held_due = 0;
            im->tx.reordered++;
            return WISP_OK;
        }
    }
    err = wisp_dev_transmit_lower(dev, out);
    if (err == WISP_OK) {
        im->tx.passed++;
        if (dup) {
            if (wisp_dev_transmit_lower(dev, out) == WISP_OK) {
                im->tx.passed++;
                im->tx.duplicated++;
            } else {
                im->tx.errors++;
            }
        }
        (void)im_release_tx(im);
    }
    if (clone != NULL) {
        wisp_pbuf_free(clone);
    }
    return err;
}

static void im_tx_ready(struct wisp_dev *dev)
{
    struct wisp_impairdev *im = (struct wisp_impairdev *)dev->ctx;

    if (im->tx_held_due && !im_release_tx(im)) {
        return;   /* lower busy again: it will call tx_ready once more */
    }
    wisp_dev_tx_ready(dev);
}

static const struct wisp_dev_ops impairdev_ops = { im_transmit, im_input, im_tx_ready };

/* ---------------------------------------------------------------- API */

wisp_err_t wisp_impairdev_init(struct wisp_impairdev *im, struct wisp_stack *s, struct wisp_dev *lower, uint32_t seed)
{
    WISP_CORE_ASSERT_OWNER(s);
    if (im == NULL || s == NULL || lower == NULL) {
        return WISP_ERR_ARG;
    }
    memset(im, 0, sizeof *im);
    im->dev.ops = &impairdev_ops;
    im->dev.ctx = im;
    im->stack = s;
    im->rng = (seed != 0) ? seed : 0x9e3779b9u;   /* xorshift state must not be 0 */
    wisp_dev_wrap(&im->dev, lower);
    return WISP_OK;
}

static void im_clamp(struct wisp_impair_cfg *dst, const struct wisp_impair_cfg *src)
{
    dst->loss_ppm = WISP_MIN(src->loss_ppm, WISP_IMPAIR_PPM_ALL);
    dst->dup_ppm = WISP_MIN(src->dup_ppm, WISP_IMPAIR_PPM_ALL);
    dst->corrupt_ppm = WISP_MIN(src->corrupt_ppm, WISP_IMPAIR_PPM_ALL);
    dst->reorder_ppm = WISP_MIN(src->reorder_ppm, WISP_IMPAIR_PPM_ALL);
}

void wisp_impairdev_set(struct wisp_impairdev *im, const struct wisp_impair_cfg *rx, const struct wisp_impair_cfg *tx)
{
    WISP_CORE_ASSERT_OWNER(im->stack);
    if (rx != NULL) {
        im_clamp(&im->rx_cfg, rx);
    }
    if (tx != NULL) {
        im_clamp(&im->tx_cfg, tx);
    }
}

void wisp_impairdev_flush(struct wisp_impairdev *im)
{
    WISP_CORE_ASSERT_OWNER(im->stack);
    im_release_rx(im);
    (void)im_release_tx(im);
}

void wisp_impairdev_deinit(struct wisp_impairdev *im)
{
    WISP_CORE_ASSERT_OWNER(im->stack);
    if (im->rx_held != NULL) {
        wisp_pbuf_free(im->rx_held);
        im->rx_held = NULL;
    }
    if (im->tx_held != NULL) {
        wisp_pbuf_free(im->tx_held);
        im->tx_held = NULL;
    }
    im->tx_held_due = 0;
}
