/**
 * @file arp.h
 * ARP for IPv4 over Ethernet (RFC 826, RFC 1122 §2.3.2, RFC 5227 §3 for
 * gratuitous announcements).
 *
 * Policy: the cache has WISP_ARP_TABLE_SIZE entries, resolved entries age
 * out after WISP_ARP_MAX_AGE_MS; a pending entry holds at most
 * WISP_ARP_QUEUE_LEN packets (oldest dropped first) and gives up after
 * WISP_ARP_MAX_TRIES requests. Following RFC 826's merge rule, a received
 * ARP packet updates an entry that already exists; a new entry is created
 * only when the packet is a request addressed to us (the sender will talk to
 * us) -- never from an unsolicited reply for an address we did not ask about.
 * Who may call: the core context only.
 */
#ifndef WISP_ARP_H
#define WISP_ARP_H

#include "wisp/netif.h"
#include "wisp/timer.h"

enum wisp_arp_state { WISP_ARP_EMPTY = 0, WISP_ARP_PENDING, WISP_ARP_STABLE, WISP_ARP_STATIC };

struct wisp_arp_entry;

/** An observer of received ARP packets, for address conflict detection
 *  (RFC 5227 §2.1.1, used by DHCP while it probes an offered address).
 *  Intrusive: the owner keeps the struct alive while it is registered. fn
 *  is called for every well-formed request or reply (after the sender
 *  checks: never for our own MAC as sender) on any interface, before the
 *  ARP layer acts on it; it must not add or remove watches. */
struct wisp_arp_watch {
    struct wisp_arp_watch *next;
    void (*fn)(void *arg, struct wisp_netif *nif, uint16_t op, const uint8_t sha[6], wisp_ip4_t spa,
               wisp_ip4_t tpa);
    void *arg;
};

struct wisp_arp;

/** Input of an ARP packet (link header already removed; consumes p). */
void wisp_arp_input(struct wisp_netif *nif, struct wisp_pbuf *p, const uint8_t src_mac[6]);

/** Send IP packet p to next_hop on nif, resolving the hardware address;
 *  queues p (a reference, or a copy when it holds REF buffers) while the
 *  request is outstanding. Does not consume p. Broadcast and multicast
 *  destinations are mapped without ARP. */
wisp_err_t wisp_arp_output(struct wisp_netif *nif, struct wisp_pbuf *p, wisp_ip4_t next_hop);

/** Send an ARP request for ip on nif. */
wisp_err_t wisp_arp_request(struct wisp_netif *nif, wisp_ip4_t ip);
/** Send a gratuitous ARP announcement of nif's address (RFC 5227 §3). */
wisp_err_t wisp_arp_announce(struct wisp_netif *nif);
/** Send an ARP probe for ip (RFC 5227 §2.1.1: a broadcast request with
 *  sender IP 0.0.0.0, target hardware address 0, target IP ip). */
wisp_err_t wisp_arp_probe(struct wisp_netif *nif, wisp_ip4_t ip);
/** Register / unregister an observer of received ARP packets (see struct
 *  wisp_arp_watch). Adding one that is registered already is a no-op. */
void wisp_arp_watch_add(struct wisp_stack *s, struct wisp_arp_watch *w);
void wisp_arp_watch_remove(struct wisp_stack *s, struct wisp_arp_watch *w);
/** Look up a resolved entry; true and mac filled when found. */
bool wisp_arp_lookup(struct wisp_stack *s, uint8_t if_idx, wisp_ip4_t ip, uint8_t mac[6]);
/** Add a static entry (never ages). WISP_ERR_MEM when the table is full. */
wisp_err_t wisp_arp_add_static(struct wisp_netif *nif, wisp_ip4_t ip, const uint8_t mac[6]);
/** Drop every entry (and queued packet) of interface if_idx; 0 = all. */
void wisp_arp_flush(struct wisp_stack *s, uint8_t if_idx);
/** Number of entries in use (any state). */
unsigned wisp_arp_count(const struct wisp_stack *s);


/* the layout of the structures above (private tier) */
#include "wisp/priv/arp.h"

#endif /* WISP_ARP_H */
