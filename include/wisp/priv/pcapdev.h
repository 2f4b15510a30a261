/**
 * @file priv/pcapdev.h
 * Private tier: the layout of the structures of wisp/pcapdev.h that a user
 * allocates or that the stack instance holds. Not API: applications
 * use the functions of wisp/pcapdev.h; the members are named through
 * WISP_PRIV() (wisp/arch.h), so code outside the library (no
 * WISP_PRIVATE_ACCESS) cannot use them by accident. May change in
 * any release.
 */
#ifndef WISP_PRIV_PCAPDEV_H
#define WISP_PRIV_PCAPDEV_H

#include "wisp/pcapdev.h"

struct wisp_pcapdev {
    struct wisp_dev dev;           /**< the wrapper device (attach this one) */
    struct wisp_stack *WISP_PRIV(stack);
    wisp_pcap_write_fn WISP_PRIV(write);
    void *WISP_PRIV(write_ctx);
    wisp_pcap_time_fn WISP_PRIV(time_us);     /**< NULL = stack clock (ms * 1000) */
    void *WISP_PRIV(time_ctx);
    uint32_t rx_records;           /**< received frames recorded by the wrapper */
    uint32_t tx_records;           /**< transmitted frames recorded by the wrapper */
    uint32_t write_errors;         /**< write callback failures */
    uint8_t failed;                /**< a write failed: capture stopped */
};

#endif /* WISP_PRIV_PCAPDEV_H */
