/**
 * @file priv/pbuf.h
 * Private tier: the layout of the structures of wisp/pbuf.h that a user
 * allocates or that the stack instance holds. Not API: applications
 * use the functions of wisp/pbuf.h; the members are named through
 * WISP_PRIV() (wisp/arch.h), so code outside the library (no
 * WISP_PRIVATE_ACCESS) cannot use them by accident. May change in
 * any release.
 */
#ifndef WISP_PRIV_PBUF_H
#define WISP_PRIV_PBUF_H

#include "wisp/pbuf.h"

struct wisp_pbuf {
    struct wisp_pbuf *next;   /**< next buffer of this packet (chain) */
    uint8_t *payload;         /**< current start of data */
    struct wisp_pool *WISP_PRIV(pool);   /**< pool this header (and its block) came from */
    uint16_t tot_len;         /**< bytes in this buffer and all that follow */
    uint16_t len;             /**< bytes in this buffer */
    uint16_t WISP_PRIV(ref);             /**< reference count */
    uint8_t WISP_PRIV(kind);             /**< enum wisp_pbuf_kind */
    uint8_t flags;            /**< WISP_PBUF_F_* */
    uint8_t if_idx;           /**< interface it arrived on / leaves by; 0 = none */
    uint8_t prio;             /**< WISP_PRIO_* (set by IP output from DSCP) */
    uint16_t WISP_PRIV(pad_);
};

#endif /* WISP_PRIV_PBUF_H */
