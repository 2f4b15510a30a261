/**
 * @file netif.h
 * Network interfaces and the device interface under them.
 *
 * A *device* (struct wisp_dev) is the few functions a driver provides. A
 * device can be wrapped by decorators (pcap capture, impairment): each
 * wrapper sits above a lower device, sees every frame in both directions and
 * passes it on. The top of the device chain is attached to a netif.
 *
 * Transmit path (the priority management of "Analysis and optimization of
 * the lwIP mechanism", Computer Engineering 41(2), 2015, §4.3: an
 * emergency and a common wait queue, a "transmitter free" signal from the
 * driver): link output hands a complete frame to
 * wisp_netif_tx(), which sends it right away when the device is free and
 * both queues are empty, or else queues it on the emergency or the common
 * queue (by the frame's prio, which IP output derives from the DSCP). When
 * the device reports it is free again (wisp_dev_tx_ready), the emergency
 * queue is drained first; the common queue only when it is empty.
 *
 * Who may call: everything here runs in the core context. Drivers call
 * wisp_dev_input() and wisp_dev_tx_ready() from the core context too (a
 * threaded port forwards them through its stack thread).
 */
#ifndef WISP_NETIF_H
#define WISP_NETIF_H

#include "wisp/opt.h"
#include "wisp/addr.h"
#include "wisp/err.h"
#include "wisp/pbuf.h"

struct wisp_stack;
struct wisp_netif;
struct wisp_dev;

/** Device operations. A driver fills transmit; wrappers fill all three. */
struct wisp_dev_ops {
    /** Send one frame. WISP_OK: taken (the device copied it, or added its
     *  own reference with wisp_pbuf_ref and frees it when done; it never
     *  frees the caller's reference). WISP_ERR_WOULDBLOCK: busy, nothing
     *  taken; the device calls wisp_dev_tx_ready() when it is free again.
     *  Any other error: the frame is dropped and counted. */
    wisp_err_t (*transmit)(struct wisp_dev *dev, struct wisp_pbuf *frame);
    /** Wrappers only: a frame arrived from the lower device (owned). */
    void (*input)(struct wisp_dev *dev, struct wisp_pbuf *frame);
    /** Wrappers only: the lower device can transmit again. */
    void (*tx_ready)(struct wisp_dev *dev);
};

struct wisp_dev {
    const struct wisp_dev_ops *ops;
    struct wisp_dev *lower;    /**< device below a wrapper (NULL for drivers) */
    struct wisp_dev *upper;    /**< wrapper above, NULL when attached to netif */
    struct wisp_netif *netif;  /**< netif at the top of this chain */
    void *ctx;                 /**< driver / wrapper private state */
};

/** Put wrapper w above device d (before or after attaching to a netif). */
void wisp_dev_wrap(struct wisp_dev *w, struct wisp_dev *d);
/** Driver up-call: a received frame (owned by the stack from here on). */
void wisp_dev_input(struct wisp_dev *dev, struct wisp_pbuf *frame);
/** Driver up-call: the transmitter is free again. */
void wisp_dev_tx_ready(struct wisp_dev *dev);
/** Pass a frame down to dev->lower (for wrappers' transmit). */
wisp_err_t wisp_dev_transmit_lower(struct wisp_dev *dev, struct wisp_pbuf *frame);

/** Longest interface name, characters (wisp_netif_add_eth truncates). */
#define WISP_NETIF_NAME_MAX 7u

/** Interface flags. */
#define WISP_NETIF_F_UP 0x01u        /**< administratively up */
#define WISP_NETIF_F_LINK_UP 0x02u   /**< carrier present */
#define WISP_NETIF_F_ETHARP 0x04u    /**< Ethernet II + ARP link layer */
#define WISP_NETIF_F_BROADCAST 0x08u /**< link supports broadcast */
#define WISP_NETIF_F_LOOPBACK 0x10u  /**< the loopback interface */

/** Per-interface counters. */
struct wisp_netif_stats {
    uint32_t rx_frames, rx_bytes, rx_drops;
    uint32_t tx_frames, tx_bytes, tx_drops;
    uint32_t tx_emerg, tx_common;     /**< frames sent from each queue class */
    uint32_t tx_queued;               /**< frames that had to wait in a queue */
    uint8_t txq_emerg_high, txq_common_high;  /**< queue high-water marks */
};

struct wisp_txq;

struct wisp_netif_watch;

/** A link layer: how IP datagrams of any family travel over one kind of
 *  link. Implementations: wisp_link_eth (Ethernet II + ARP, ethernet.c)
 *  and wisp_link_rawip (bare IP datagrams, as TUN, SLIP or PPP devices
 *  carry them; link_rawip.c). An IPv6 link adds its family's cases
 *  (neighbour discovery) to an implementation, not a new netif. */
struct wisp_link_ops {
    const char *name;        /**< "eth", "rawip" */
    uint8_t flags;           /**< WISP_NETIF_F_* the netif gets (ETHARP, BROADCAST) */
    uint8_t hlen;            /**< link header bytes in front of a datagram */
    /** A received frame (owned): check and strip the link header and hand
     *  the datagram to the IP layer of its family (or drop and count it). */
    void (*input)(struct wisp_netif *nif, struct wisp_pbuf *frame);
    /** Send IP datagram p (starting at its IP header) to next_hop on this
     *  link (resolving the link address as needed). Does not consume p. */
    wisp_err_t (*output)(struct wisp_netif *nif, struct wisp_pbuf *p, const wisp_ipaddr_t *next_hop);
    /** Optional (NULL: nothing to do): the netif became usable, or its
     *  address changed while usable (Ethernet: announce, RFC 5227 §3)... */
    void (*up)(struct wisp_netif *nif);
    /** ...and it became unusable, or is about to change its address
     *  (Ethernet: forget the neighbour cache of this link). */
    void (*down)(struct wisp_netif *nif);
};

/** Link implementations (see struct wisp_link_ops). */
extern const struct wisp_link_ops wisp_link_eth;
extern const struct wisp_link_ops wisp_link_rawip;

struct wisp_netif_ip4;

struct wisp_netif;

/** Add an interface driven by dev (a driver or top wrapper) with link
 *  layer link (wisp_link_eth, wisp_link_rawip, ...) and hardware address
 *  hwaddr of hwaddr_len bytes (0..6; NULL when 0). The netif starts
 *  administratively down; name is copied (max 7 chars). Returns
 *  WISP_ERR_MEM when WISP_MAX_NETIFS are in use, WISP_ERR_VAL for an MTU
 *  below 68 (RFC 791), a hardware address longer than 6 bytes, or a link
 *  without input and output. */
wisp_err_t wisp_netif_add(struct wisp_stack *s, struct wisp_netif *nif, const char *name, struct wisp_dev *dev,
                          const struct wisp_link_ops *link, const uint8_t *hwaddr, uint8_t hwaddr_len, uint16_t mtu);
/** Add an Ethernet interface (wisp_netif_add with wisp_link_eth). */
wisp_err_t wisp_netif_add_eth(struct wisp_stack *s, struct wisp_netif *nif, const char *name, struct wisp_dev *dev,
                              const uint8_t mac[6], uint16_t mtu);
/** Remove an interface: flushes its queues and ARP entries. */
void wisp_netif_remove(struct wisp_netif *nif);
/** Set IPv4 address, netmask and gateway (network order; 0 = none). */
void wisp_netif_set_ip4(struct wisp_netif *nif, wisp_ip4_t ip, wisp_ip4_t mask, wisp_ip4_t gw);
/** Administrative up/down. Going up with the link up sends a gratuitous ARP. */
void wisp_netif_set_up(struct wisp_netif *nif, bool up);
/** Carrier up/down (drivers call this). Link up on an up interface sends a
 *  gratuitous ARP; link down flushes the transmit queues. */
void wisp_netif_set_link(struct wisp_netif *nif, bool up);
/** Register / unregister an observer of nif becoming usable or unusable
 *  (struct wisp_netif_watch). Register after wisp_netif_add / _add_eth (which
 *  clears the netif); adding one that is registered already is a no-op. */
void wisp_netif_watch_add(struct wisp_netif *nif, struct wisp_netif_watch *w);
void wisp_netif_watch_remove(struct wisp_netif *nif, struct wisp_netif_watch *w);
/** Read-only views of an interface (its members are private). */
const char *wisp_netif_name(const struct wisp_netif *nif);
uint8_t wisp_netif_index(const struct wisp_netif *nif);
uint8_t wisp_netif_flags(const struct wisp_netif *nif);      /**< WISP_NETIF_F_* */
uint16_t wisp_netif_mtu(const struct wisp_netif *nif);
/** Hardware address and its length (0 for links without one). */
const uint8_t *wisp_netif_hwaddr(const struct wisp_netif *nif, uint8_t *len);
const struct wisp_netif_stats *wisp_netif_get_stats(const struct wisp_netif *nif);
/** IPv4 configuration (network order; 0 = none). */
wisp_ip4_t wisp_netif_ip4_addr(const struct wisp_netif *nif);
wisp_ip4_t wisp_netif_ip4_mask(const struct wisp_netif *nif);
wisp_ip4_t wisp_netif_ip4_gw(const struct wisp_netif *nif);
/** The stack the interface belongs to. */
struct wisp_stack *wisp_netif_stack(const struct wisp_netif *nif);
/** The application's pointer (wisp_netif_set_user). */
void *wisp_netif_user(const struct wisp_netif *nif);
void wisp_netif_set_user(struct wisp_netif *nif, void *user);

/** Interface by index (1-based), or NULL. */
struct wisp_netif *wisp_netif_by_index(struct wisp_stack *s, uint8_t index);
/** Interface by name, or NULL. */
struct wisp_netif *wisp_netif_by_name(struct wisp_stack *s, const char *name);

/** Queue or send one complete link-layer frame (see file comment). Does not
 *  take the caller's reference. Uses frame->prio to pick the queue. */
wisp_err_t wisp_netif_tx(struct wisp_netif *nif, struct wisp_pbuf *frame);
/** Frames waiting in the emergency / common queue. */
unsigned wisp_netif_txq_len(const struct wisp_netif *nif, unsigned prio);

/** Map a DSCP (0..63) to a transmit queue class (WISP_PRIO_*). */
static inline uint8_t wisp_dscp_prio(uint8_t dscp)
{
    return (dscp >= WISP_EMERG_DSCP_MIN) ? (uint8_t)WISP_PRIO_EMERG : (uint8_t)WISP_PRIO_COMMON;
}

/* the layout of the structures above (private tier) */
#include "wisp/priv/netif.h"

/** True when the interface can carry traffic (admin up and link up). */
static inline bool wisp_netif_is_usable(const struct wisp_netif *nif)
{
    return (nif->WISP_PRIV(flags) & (WISP_NETIF_F_UP | WISP_NETIF_F_LINK_UP)) == (WISP_NETIF_F_UP | WISP_NETIF_F_LINK_UP);
}

#endif /* WISP_NETIF_H */
