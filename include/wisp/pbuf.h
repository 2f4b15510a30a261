/**
 * @file pbuf.h
 * Packet buffers: chains of reference-counted buffers with reserved headroom.
 *
 * Kinds:
 *  - WISP_PBUF_RAM:  header and payload in one contiguous transmit-budget
 *                    block; the payload may not exceed one block.
 *  - WISP_PBUF_POOL: a chain of fixed-size blocks (transmit budget, or the
 *                    receive budget for frames allocated by drivers).
 *  - WISP_PBUF_REF:  header only; payload points to caller memory that the
 *                    caller keeps valid and unchanged while the pbuf lives.
 *  - WISP_PBUF_ROM:  like REF for memory that never changes (const data);
 *                    the stack may keep it queued without copying.
 *
 * Ownership rules (the same on every layer):
 *  - An *input* function takes over the caller's reference (it frees).
 *  - An *output* function never takes the caller's reference; when it must
 *    keep the packet (ARP queue, transmit queue) it adds its own.
 *  - A receive callback that gets a pbuf owns it and must free it.
 *
 * Who may call: the core context only (pools are not locked; allocation,
 * free, ref, cat and chain check it in debug builds). The data functions
 * (copy_in/out, push/pop, trim, ...) touch only the chain and may also run
 * in a driver thread filling a receive pbuf it holds alone
 * (wisp_tcpip_alloc_rx, wisp/tcpip.h).
 */
#ifndef WISP_PBUF_H
#define WISP_PBUF_H

#include "wisp/opt.h"
#include "wisp/arch.h"
#include "wisp/err.h"
#include "wisp/pool.h"

struct wisp_stack;

enum wisp_pbuf_kind { WISP_PBUF_RAM = 0, WISP_PBUF_POOL, WISP_PBUF_REF, WISP_PBUF_ROM };

/** Headroom reserved in front of the payload when allocating, per layer. */
#define WISP_HLEN_LINK 14u                        /**< Ethernet II header */
#define WISP_HLEN_IP4 20u                         /**< IPv4 header, no options */
#define WISP_HLEN_TRANSPORT_MAX 60u               /**< largest TCP header */
enum wisp_pbuf_layer {
    WISP_LAYER_RAW = 0,                                            /**< no headroom */
    WISP_LAYER_LINK = WISP_HLEN_LINK,                              /**< room for link header */
    WISP_LAYER_IP = WISP_HLEN_LINK + WISP_HLEN_IP4,                /**< room for IP + link */
    WISP_LAYER_TRANSPORT = WISP_HLEN_LINK + WISP_HLEN_IP4 + WISP_HLEN_TRANSPORT_MAX
};

/** Flags in wisp_pbuf.flags. */
#define WISP_PBUF_F_BCAST 0x01u  /**< received as link-layer broadcast */
#define WISP_PBUF_F_MCAST 0x02u  /**< received as link-layer multicast */
/* 0x80 is the API layer's while the pbuf waits in a netconn's mailbox. */

/** Transmit queue class in wisp_pbuf.prio. */
#define WISP_PRIO_COMMON 0u
#define WISP_PRIO_EMERG 1u

struct wisp_pbuf;

/** Bytes of one pool element: header plus WISP_PBUF_BLOCK_SIZE payload. */
#define WISP_PBUF_HDR_SIZE WISP_POOL_ELEM(sizeof(struct wisp_pbuf))
/* Rounded like wisp_pool_init rounds its stride (WISP_POOL_ALIGN): the
 * storage in struct wisp_stack must match the pool stride exactly. */
#define WISP_PBUF_ELEM_SIZE WISP_POOL_ELEM(WISP_PBUF_HDR_SIZE + WISP_PBUF_BLOCK_SIZE)

/** Allocate a transmit pbuf of len payload bytes with the layer's headroom.
 *  RAM: one block (len + headroom <= WISP_PBUF_BLOCK_SIZE, else NULL).
 *  POOL: a chain of blocks; only the first has headroom.
 *  REF/ROM: header only, payload NULL (set it, or use wisp_pbuf_alloc_ref).
 *  Returns NULL when the budget is exhausted (counted in the pool). */
struct wisp_pbuf *wisp_pbuf_alloc(struct wisp_stack *s, enum wisp_pbuf_layer layer, uint16_t len,
                                  enum wisp_pbuf_kind kind);
/** Allocate a receive chain of len bytes from the receive budget (drivers). */
struct wisp_pbuf *wisp_pbuf_alloc_rx(struct wisp_stack *s, uint16_t len);
/** A REF (or ROM) pbuf over caller memory: zero-copy. */
struct wisp_pbuf *wisp_pbuf_alloc_ref(struct wisp_stack *s, const void *data, uint16_t len,
                                      enum wisp_pbuf_kind kind);

/** Drop one reference to each buffer of the chain from p on; buffers whose
 *  count reaches 0 go back to their pool. Returns how many were freed.
 *  NULL is accepted (returns 0). */
unsigned wisp_pbuf_free(struct wisp_pbuf *p);
/** Add a reference to p (only the first buffer: a chain is held through its
 *  head, as each buffer holds the next). */
void wisp_pbuf_ref(struct wisp_pbuf *p);
/** Number of buffers in the chain. */
unsigned wisp_pbuf_clen(const struct wisp_pbuf *p);

/** Append t to h; h takes over the caller's reference to t. */
void wisp_pbuf_cat(struct wisp_pbuf *h, struct wisp_pbuf *t);
/** Append t to h and add a reference to t (caller keeps its own). */
void wisp_pbuf_chain(struct wisp_pbuf *h, struct wisp_pbuf *t);

/** Make n more bytes in front of the payload visible (push a header).
 *  Only RAM/POOL buffers with enough headroom; else WISP_ERR_BUF. */
wisp_err_t wisp_pbuf_push(struct wisp_pbuf *p, uint16_t n);
/** Hide n bytes at the front (pop a header). n must not exceed p->len
 *  (the first buffer); else WISP_ERR_BUF. Works on every kind. */
wisp_err_t wisp_pbuf_pop(struct wisp_pbuf *p, uint16_t n);
/** Headroom available in front of p->payload (0 for REF/ROM). */
uint16_t wisp_pbuf_headroom(const struct wisp_pbuf *p);

/** Shrink the chain to new_len bytes (new_len <= tot_len), freeing buffers
 *  that become empty. Used to cut Ethernet padding. */
void wisp_pbuf_trim(struct wisp_pbuf *p, uint16_t new_len);

/** Copy up to len bytes starting at offset out of the chain into dst.
 *  Returns the number of bytes copied (less when the chain is shorter). */
uint16_t wisp_pbuf_copy_out(const struct wisp_pbuf *p, void *dst, uint16_t len, uint16_t offset);
/** Copy len bytes from src into the chain starting at offset; WISP_ERR_BUF
 *  (and nothing written) when the chain is too short. Not into ROM. */
wisp_err_t wisp_pbuf_copy_in(struct wisp_pbuf *p, const void *src, uint16_t len, uint16_t offset);
/** Byte at offset, or -1 past the end. */
int wisp_pbuf_get_u8(const struct wisp_pbuf *p, uint16_t offset);
/** Pointer to len contiguous bytes at offset when they lie in one buffer,
 *  else NULL (then use wisp_pbuf_copy_out). */
void *wisp_pbuf_contig(const struct wisp_pbuf *p, uint16_t offset, uint16_t len);

/** A fresh copy of the whole chain (kind POOL, transmit budget, given
 *  headroom), or NULL. Flags, if_idx and prio are copied. */
struct wisp_pbuf *wisp_pbuf_clone(struct wisp_stack *s, enum wisp_pbuf_layer layer, const struct wisp_pbuf *p);
/** True when any buffer of the chain is of kind REF (caller memory that may
 *  change; must be copied before being queued). */
bool wisp_pbuf_has_ref(const struct wisp_pbuf *p);

/** Internet checksum sum (wisp_chksum_sum semantics) over len bytes of the
 *  chain starting at offset. */
uint16_t wisp_pbuf_chksum(const struct wisp_pbuf *p, uint16_t offset, uint16_t len);

/* the layout of the structures above (private tier) */
#include "wisp/priv/pbuf.h"

#endif /* WISP_PBUF_H */
