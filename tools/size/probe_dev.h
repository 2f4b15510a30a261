/**
 * @file probe_dev.h
 * The Ethernet device of the size probes (probe_raw.c, probe_full.c): a
 * stub whose transmit drops the frame, standing for a MAC driver that the
 * measurement does not count. Included by each probe once (static
 * definitions: each probe is its own image).
 */
#ifndef WISP_PROBE_DEV_H
#define WISP_PROBE_DEV_H

#include "wisp/wisp.h"

static wisp_err_t drv_transmit(struct wisp_dev *dev, struct wisp_pbuf *frame)
{
    (void)dev;
    (void)frame;
    return WISP_OK;
}

static const struct wisp_dev_ops drv_ops = { drv_transmit, NULL, NULL };
static struct wisp_dev drv = { &drv_ops, NULL, NULL, NULL, NULL };

#endif
