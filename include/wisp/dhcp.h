/**
 * @file dhcp.h
 * DHCP client (RFC 2131, options of RFC 2132) on the raw API, one client
 * per interface, in a struct wisp_dhcp that the application owns (like
 * lwIP's dhcp_set_struct): no allocation besides one UDP PCB from the
 * stack's pool while the client runs.
 *
 * States (RFC 2131 §4.4, Figure 5), plus two of our own:
 *  - INIT: waiting a random delay (RFC 2131 §4.4.1) before the first
 *    DISCOVER, or the wait after a DECLINE (§3.1 step 5);
 *  - SELECTING: DISCOVER sent (retransmitted with the §4.1 backoff), the
 *    first acceptable OFFER wins;
 *  - REQUESTING: REQUEST broadcast for the offer; after
 *    WISP_DHCP_REQUEST_TRIES unanswered tries, back to INIT;
 *  - CHECKING (ours): the acknowledged address is probed with ARP
 *    (RFC 5227 §2.1.1) before it is used; a conflict sends a DECLINE;
 *  - BOUND: the interface is configured; T1 starts RENEWING;
 *  - RENEWING: REQUEST unicast to the leasing server; T2 starts REBINDING;
 *  - REBINDING: REQUEST broadcast; expiry unconfigures the interface and
 *    goes back to INIT;
 *  - INIT_REBOOT / REBOOTING: a previous address is known (a live lease
 *    when the link comes back up, or cfg.prev_addr): REQUEST for it
 *    without a server identifier (§3.2, §4.4.2).
 *
 * The interface is configured from the lease (address, mask, router,
 * MTU from option 26 bounded by the device MTU) with wisp_netif_set_ip4,
 * and cleared on expiry, NAK, or stop. Replies are accepted only from port
 * 67, with our xid and our hardware address; everything else is a
 * counted drop (dhcp.drop.*). Until it has an address the client sets the
 * BROADCAST flag (§4.1), so servers broadcast their replies (wisp accepts
 * UDP to 255.255.255.255 without an address; it does not accept unicast
 * to an address it does not have).
 *
 * Who may call: the core context only. The callback runs in the core
 * context too (from input or a timer), always as the last thing the client
 * does in that step; it may read the lease and may call wisp_dhcp_stop.
 */
#ifndef WISP_DHCP_H
#define WISP_DHCP_H

#include "wisp/stack.h"

#if WISP_DHCP

#define WISP_DHCP_SERVER_PORT 67u
#define WISP_DHCP_CLIENT_PORT 68u
/** RFC 2131 §3.3: a lease of 0xffffffff seconds is infinite. */
#define WISP_DHCP_INFINITE 0xffffffffu

enum wisp_dhcp_state {
    WISP_DHCP_STOPPED = 0,
    WISP_DHCP_INIT,
    WISP_DHCP_SELECTING,
    WISP_DHCP_REQUESTING,
    WISP_DHCP_CHECKING,
    WISP_DHCP_BOUND,
    WISP_DHCP_RENEWING,
    WISP_DHCP_REBINDING,
    WISP_DHCP_INIT_REBOOT,
    WISP_DHCP_REBOOTING
};

/** What the callback is told. */
enum wisp_dhcp_event {
    WISP_DHCP_EV_BOUND = 1,   /**< a new lease; the interface is configured */
    WISP_DHCP_EV_RENEWED,     /**< the lease was extended (RENEWING, REBINDING, or a reboot keeping the address) */
    WISP_DHCP_EV_LOST,        /**< the lease ended (expiry, NAK): the interface was unconfigured */
    WISP_DHCP_EV_CONFLICT     /**< the offered address is in use (ARP): DECLINE sent, restarting */
};

/** A lease as acknowledged by the server (addresses in network order). */
struct wisp_dhcp_lease {
    wisp_ip4_t addr;                    /**< yiaddr */
    wisp_ip4_t mask;                    /**< option 1 (classful default when absent) */
    wisp_ip4_t router;                  /**< first of option 3 when on-link, else 0 */
    wisp_ip4_t server;                  /**< option 54, server identifier */
    wisp_ip4_t dns[WISP_DHCP_MAX_DNS];  /**< option 6, the first ones */
    uint8_t dns_count;
    uint16_t mtu;                       /**< option 26, 0 = not given */
    uint32_t lease_s;                   /**< option 51 (WISP_DHCP_INFINITE = infinite) */
    uint32_t t1_s, t2_s;                /**< options 58/59, or 0.5 / 0.875 of the lease (§4.4.5) */
};

/** Per-client settings; wisp_dhcp_cfg_defaults fills the opt.h defaults. */
struct wisp_dhcp_cfg {
    uint32_t backoff_base_ms;   /**< first retransmission wait (§4.1: 4 s) */
    uint32_t backoff_max_ms;    /**< longest wait (§4.1: 64 s) */
    uint32_t init_delay_ms;     /**< longest random delay before DISCOVER (§4.4.1), 0 = none */
    uint32_t renew_min_ms;      /**< shortest RENEWING/REBINDING retransmission wait (§4.4.5: 60 s) */
    uint32_t decline_wait_ms;   /**< wait after a DECLINE (§3.1: 10 s) */
    wisp_ip4_t prev_addr;       /**< != 0: start in INIT-REBOOT asking for it */
    const char *hostname;       /**< option 12 (copied, at most WISP_DHCP_HOSTNAME_MAX), NULL = none */
    bool arp_check;             /**< probe the address before use (RFC 5227), default true */
};

struct wisp_dhcp;

/** Event callback (core context). d->lease holds the lease (for LOST, the
 *  one that ended). */
typedef void (*wisp_dhcp_fn)(void *arg, struct wisp_dhcp *d, enum wisp_dhcp_event ev);

struct wisp_dhcp;

/** Fill cfg with the defaults of opt.h. */
void wisp_dhcp_cfg_defaults(struct wisp_dhcp_cfg *cfg);

/** Start the client on nif (an Ethernet netif, added; it may still be
 *  down). d must be zeroed memory or a stopped client (a running one gives
 *  WISP_ERR_ALREADY). cfg NULL = defaults; fn may be NULL. The interface's address is
 *  cleared (the lease will set it). Returns WISP_ERR_MEM when no UDP PCB is
 *  free, WISP_ERR_USE when port 68 is taken on this interface,
 *  WISP_ERR_ARG for a netif without ARP. */
wisp_err_t wisp_dhcp_start(struct wisp_dhcp *d, struct wisp_netif *nif, const struct wisp_dhcp_cfg *cfg,
                           wisp_dhcp_fn fn, void *arg);

/** Stop the client: with release, a DHCPRELEASE is sent first when a lease
 *  is held (RFC 2131 §4.4.6). The interface is unconfigured, timers,
 *  observers and the UDP PCB are released. d may be started again. Call
 *  before wisp_netif_remove / wisp_stack_deinit. No-op when stopped. */
void wisp_dhcp_stop(struct wisp_dhcp *d, bool release);

/** Current state (enum wisp_dhcp_state) and its name ("BOUND"). */
enum wisp_dhcp_state wisp_dhcp_state(const struct wisp_dhcp *d);
const char *wisp_dhcp_state_name(enum wisp_dhcp_state st);

/** The lease in use, or NULL when none is configured. */
const struct wisp_dhcp_lease *wisp_dhcp_lease(const struct wisp_dhcp *d);

/** Seconds left on the lease in use (WISP_DHCP_INFINITE for an infinite
 *  one, 0 when none). */
uint32_t wisp_dhcp_lease_left_s(struct wisp_dhcp *d);
/** The lease bound last, also after it ended (WISP_DHCP_EV_LOST reports
 *  that one); zeroed before the first. */
const struct wisp_dhcp_lease *wisp_dhcp_last_lease(const struct wisp_dhcp *d);
/** The interface the client runs on (NULL when stopped). */
struct wisp_netif *wisp_dhcp_netif(const struct wisp_dhcp *d);
/** The address being offered or requested (network order; 0 = none):
 *  on WISP_DHCP_EV_CONFLICT, the address found in use and declined. */
wisp_ip4_t wisp_dhcp_pending_addr(const struct wisp_dhcp *d);

#endif /* WISP_DHCP */
/* the layout of the structures above (private tier) */
#include "wisp/priv/dhcp.h"

#endif /* WISP_DHCP_H */
