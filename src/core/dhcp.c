/**
 * @file dhcp.c
 * DHCP client (RFC 2131) with the options of RFC 2132 it needs, address
 * conflict detection by ARP probes (RFC 5227 §2.1.1), in the core: one
 * UDP PCB on port 68 bound to the interface, two event timers (the
 * exchange: retransmissions and state steps; the lease: T1, T2, expiry).
 *
 * Choices where the RFCs leave room:
 *  - The first acceptable OFFER is taken (RFC 2131 §4.4.1 allows it).
 *  - Retransmission waits are base * 2^(n-1) capped at the maximum and
 *    randomised by +-base/4 (RFC 2131 §4.1: 4, 8, ... 64 s +-1 s). DISCOVER
 *    is retransmitted for ever; a REQUEST in REQUESTING / REBOOTING
 *    WISP_DHCP_REQUEST_TRIES times, then the client restarts discovery
 *    (REBOOTING with a still valid lease keeps it instead: RFC 2131 §4.4.2
 *    allows using it for the rest of the lease).
 *  - Lease times run on a 64-bit millisecond clock extended from the stack
 *    clock (the lease timer fires at least every 2^30 ms), so leases of
 *    any length (up to infinite, 0xffffffff) are exact.
 *  - The lease starts when the acknowledged exchange's first REQUEST was
 *    sent (RFC 2131 §4.4.1: "the time at which the original request was
 *    sent"). T1 / T2 that are not T1 <= T2 <= lease are replaced by the
 *    defaults 0.5 / 0.875 of the lease (RFC 2131 §4.4.5).
 *  - Options are parsed bounded (no byte read outside the message), every
 *    known option with a wrong length is a malformed message (counted
 *    drop), unknown options are skipped, option overload (52) is honoured
 *    (options field, then 'file', then 'sname', RFC 2131 §4.1); a field
 *    that ends without the End option is accepted at its boundary. A
 *    repeated option: the last one counts (no RFC 3396 concatenation).
 *    Missing subnet mask: the classful mask of the address. A router
 *    that is not on the leased subnet is ignored. Interface MTU below 68
 *    is ignored; above the device MTU it is capped to it.
 *  - An OFFER or ACK without server identifier or lease time (both MUST,
 *    RFC 2131 Table 3), or with an unusable yiaddr, is a malformed
 *    message. A NAK with a server identifier other than the server being
 *    talked to (REQUESTING, RENEWING) is ignored.
 *  - After a NAK or an expiry the client starts again from INIT with the
 *    random start delay; after a DECLINE it waits cfg.decline_wait_ms.
 *  - On link up with a live lease the address stays configured while
 *    INIT-REBOOT asks for it again (like lwIP); without one: INIT.
 *  - DHCPRELEASE goes unicast to the server when the next hop's MAC is in
 *    the ARP cache, else to the limited broadcast (a frame that waits for
 *    ARP would be flushed when the address is removed right after).
 *  - Messages are padded to 300 bytes, the BOOTP minimum (RFC 1542 §2.1).
 */
#define WISP_PRIVATE_ACCESS 1 /* library code: sees the private tier (wisp/arch.h) */
#include "wisp/dhcp.h"
#include "wisp/ethernet.h"
#include "wisp/prot/dhcp.h"

#if WISP_DHCP

/* RFC 5227 §1.1 constants (ms). */
#define PROBE_WAIT_MS 1000u
#define PROBE_NUM 3u
#define PROBE_MIN_MS 1000u
#define PROBE_MAX_MS 2000u
#define ANNOUNCE_WAIT_MS 2000u

/* Longest single arming of a timer: well inside the stack clock's
 * wrap-safe range (2^31 ms). */
#define DHCP_TIMER_CHUNK_MS (1u << 30)
#define DHCP_NEVER UINT64_MAX

/* Parameter request list (RFC 2132 §9.8): what we use. */
static const uint8_t dhcp_prl[] = { WISP_DHCP_OPT_MASK,  WISP_DHCP_OPT_ROUTER, WISP_DHCP_OPT_DNS, WISP_DHCP_OPT_MTU,
                                    WISP_DHCP_OPT_LEASE, WISP_DHCP_OPT_T1,     WISP_DHCP_OPT_T2 };

/* Largest message we build: header, cookie, type (3), requested IP (6),
 * server id (6), max size (4), PRL, host name, End. */
#define DHCP_OPTS_MAX (3u + 6u + 6u + 4u + 2u + sizeof(dhcp_prl) + 2u + WISP_DHCP_HOSTNAME_MAX + 1u)
#define DHCP_MSG_MAX WISP_MAX(WISP_DHCP_MIN_LEN, WISP_DHCP_OFF_OPTIONS + DHCP_OPTS_MAX)

/* The states that wait for an ACK / NAK, as bits (1 << state). */
#define DHCP_REQ_STATES                                                                                     \
    ((1u << WISP_DHCP_REQUESTING) | (1u << WISP_DHCP_REBOOTING) | (1u << WISP_DHCP_RENEWING) |              \
     (1u << WISP_DHCP_REBINDING))

/* Have-bits of a parsed message. */
#define HAVE_MASK 0x01u
#define HAVE_ROUTER 0x02u
#define HAVE_LEASE 0x04u
#define HAVE_T1 0x08u
#define HAVE_T2 0x10u
#define HAVE_SERVER 0x20u

/** A received message, parsed: the options land in the lease they
 * describe (l.addr is yiaddr), which dhcp_make_lease then checks and
 * completes in place. */
struct dhcp_msg {
    uint8_t type, overload, have;
    struct wisp_dhcp_lease l;
};

static void dhcp_tmr_fn(struct wisp_stack *s, struct wisp_timer *t);
static void dhcp_lease_fn(struct wisp_stack *s, struct wisp_timer *t);

/* ----------------------------------------------------------------- helpers */

static struct wisp_stack *dhcp_stack(const struct wisp_dhcp *d)
{
    return d->nif->stack;
}

/* The 64-bit clock: the stack clock's progress since the last call. */
static uint64_t dhcp_clock(struct wisp_dhcp *d)
{
    uint32_t now = wisp_now(dhcp_stack(d));
    d->clock += (uint32_t)(now - d->clock_last);
    d->clock_last = now;
    return d->clock;
}

/* ms / 1000 for ms < 1000 * 2^32 (any lease: lease_s <= 0xffffffff), in
 * 32-bit divisions (long division by 16-bit digits: the remainder stays
 * below 1000, so (r << 16 | digit) fits 32 bits), so no 64-bit division
 * helper of libgcc is linked. */
static uint32_t dhcp_ms_to_s(uint64_t ms)
{
    uint32_t hi = (uint32_t)(ms >> 32), lo = (uint32_t)ms;
    uint32_t x1 = (hi << 16) | (lo >> 16);
    uint32_t x2 = ((x1 % 1000u) << 16) | (lo & 0xffffu);
    return ((x1 / 1000u) << 16) + x2 / 1000u;
}

static void dhcp_notify(struct wisp_dhcp *d, enum wisp_dhcp_event ev)
{
    if (d->cb != NULL) {
        d->cb(d->cb_arg, d, ev);
    }
}

static WISP_NOINLINE uint32_t dhcp_rand_below(struct wisp_dhcp *d, uint32_t n)
{
    return n == 0 ? 0u : wisp_random(dhcp_stack(d)) % n;
}

/* RFC 2131 §4.4.1: a random start delay, here uniform in [max/10, max]. */
static uint32_t dhcp_init_delay(struct wisp_dhcp *d)
{
    uint32_t max = d->cfg.init_delay_ms;
    if (max == 0) {
        return 0;
    }
    return max / 10u + dhcp_rand_below(d, max - max / 10u + 1u);
}

/* RFC 2131 §4.1: the wait after the tries-th transmission: base doubled
 * per retransmission up to the maximum, randomised by +-base/4 (+-1 s for
 * the RFC's 4 s base). */
static uint32_t dhcp_backoff(struct wisp_dhcp *d)
{
    uint32_t wait = d->cfg.backoff_base_ms, max = d->cfg.backoff_max_ms, jit = d->cfg.backoff_base_ms / 4u;
    unsigned i;
    for (i = 1; i < d->tries && wait < max; i++) {
        wait = wait > max / 2u ? max : wait * 2u;
    }
    if (wait > max) {
        wait = max;
    }
    return wait - jit + dhcp_rand_below(d, 2u * jit + 1u);
}

/* A new transaction id (RFC 2131 §4.1: random, so that clients differ). */
static void dhcp_new_xid(struct wisp_dhcp *d)
{
    d->xid = wisp_random_id(dhcp_stack(d), WISP_RID_DHCP_XID);
    d->exch_start = wisp_now(dhcp_stack(d));
}

/* RFC 2131 §2 'secs': seconds since the client began the exchange. */
static uint16_t dhcp_secs(struct wisp_dhcp *d)
{
    uint32_t s = (wisp_now(dhcp_stack(d)) - d->exch_start) / 1000u;
    return s > 0xffffu ? (uint16_t)0xffffu : (uint16_t)s;
}

/* A usable unicast host address for yiaddr / prev_addr. */
static bool dhcp_addr_ok(wisp_ip4_t a)
{
    uint8_t o0 = wisp_ip4_octet(a, 0); /* 0.0.0.0 and the limited broadcast fail on it too */
    return o0 != 0u && o0 != 127u && o0 < 224u;
}

static void dhcp_arm(struct wisp_dhcp *d, uint32_t ms)
{
    wisp_timer_arm(dhcp_stack(d), &d->tmr, ms, dhcp_tmr_fn);
}

/* ------------------------------------------------------------------ output */

/* The fields of a message that vary with its type and the state (RFC 2131
 * §4.4, Table 5): ciaddr, requested IP and server identifier (0 = field
 * zero / option absent), destination, 'secs'. */
struct dhcp_tx {
    wisp_ip4_t ci, req, sid, dst;
    uint16_t secs;
};

/* Fill t for a message of type in the current state; false when the state
 * sends no such message. DISCOVER and REQUEST are (re)transmissions of
 * the exchange: counted in d->tries (RFC 2131 §4.1). */
static bool dhcp_tx_fields(struct wisp_dhcp *d, uint8_t type, struct dhcp_tx *t)
{
    memset(t, 0, sizeof(*t));
    t->dst = WISP_IP4_BCAST;
    if (type == WISP_DHCP_MSG_DISCOVER || type == WISP_DHCP_MSG_REQUEST) {
        if (d->tries > 0) {
            WISP_CTR_INC(dhcp_stack(d), DHCP_RETRANSMIT);
        }
        d->tries++;
        t->secs = dhcp_secs(d);
    }
    switch (type) {
    case WISP_DHCP_MSG_DISCOVER:
        /* RFC 2131 §4.4.1: the client MAY suggest the address it had. */
        d->secs = t->secs;
        t->req = d->reboot_addr;
        return true;
    case WISP_DHCP_MSG_DECLINE:
        /* RFC 2131 Table 5: DECLINE: ciaddr 0, requested IP and server
         * identifier MUST, 'secs' 0. */
        t->req = d->pend.addr;
        t->sid = d->pend.server;
        return true;
    case WISP_DHCP_MSG_RELEASE:
        /* RFC 2131 §4.4.6: DHCPRELEASE to the server (destination chosen
         * by wisp_dhcp_stop): ciaddr ours, server identifier, 'secs' 0. */
        t->ci = d->lease.addr;
        t->sid = d->lease.server;
        return true;
    default: /* REQUEST: the one of the current state (RFC 2131 §4.3.2, Table 4/5) */
        break;
    }
    switch (d->state) {
    case WISP_DHCP_REQUESTING:
        /* RFC 2131 §4.4.1: broadcast, server identifier and requested IP
         * of the offer, ciaddr 0, 'secs' of the DISCOVER. */
        t->req = d->pend.addr;
        t->sid = d->pend.server;
        t->secs = d->secs;
        return true;
    case WISP_DHCP_REBOOTING:
        /* RFC 2131 §4.4.2: requested IP, no server identifier, ciaddr 0. */
        t->req = d->reboot_addr;
        return true;
    case WISP_DHCP_RENEWING:
        /* RFC 2131 §4.4.5: unicast to the leasing server, ciaddr ours, no
         * server identifier, no requested IP. */
        t->dst = d->lease.server;
        /* fall through */
    case WISP_DHCP_REBINDING:
        /* RFC 2131 §4.4.5: the same, broadcast. */
        t->ci = d->lease.addr;
        return true;
    default:
        return false;
    }
}

/* Build and send one message of type in the current state (RFC 2131 §4.4,
 * Table 5; the varying fields from dhcp_tx_fields), to dst when it is not
 * 0 (a RELEASE's). */
static wisp_err_t dhcp_send_to(struct wisp_dhcp *d, uint8_t type, wisp_ip4_t dst)
{
    struct wisp_stack *s = dhcp_stack(d);
    struct dhcp_tx t;
    struct wisp_pbuf *p;
    uint8_t *m, *o;
    uint16_t len;
    wisp_ipaddr_t to;
    wisp_err_t err;

    if (!dhcp_tx_fields(d, type, &t)) {
        return WISP_ERR_VAL;
    }
    if (dst != WISP_IP4_ANY) {
        t.dst = dst;
    }
    p = wisp_pbuf_alloc(s, WISP_LAYER_TRANSPORT, (uint16_t)DHCP_MSG_MAX, WISP_PBUF_RAM);
    if (p == NULL) {
        WISP_CTR_INC(s, DHCP_DROP_NOMEM);
        return WISP_ERR_MEM;
    }
    m = p->payload;
    memset(m, 0, DHCP_MSG_MAX);
    m[WISP_DHCP_OFF_OP] = WISP_DHCP_BOOTREQUEST;
    m[WISP_DHCP_OFF_HTYPE] = WISP_DHCP_HTYPE_ETH;
    m[WISP_DHCP_OFF_HLEN] = WISP_ETH_ADDR_LEN;
    wisp_wr32(m + WISP_DHCP_OFF_XID, d->xid);
    wisp_wr16(m + WISP_DHCP_OFF_SECS, t.secs);
    /* RFC 2131 §4.1: a client that cannot receive unicast datagrams before
     * its address is configured sets the BROADCAST bit. */
    if ((type == WISP_DHCP_MSG_DISCOVER || type == WISP_DHCP_MSG_REQUEST) && d->nif->ip4.addr == WISP_IP4_ANY) {
        wisp_wr16(m + WISP_DHCP_OFF_FLAGS, WISP_DHCP_FLAG_BROADCAST);
    }
    wisp_ip4_wr(m + WISP_DHCP_OFF_CIADDR, t.ci);
    memcpy(m + WISP_DHCP_OFF_CHADDR, d->nif->hwaddr, WISP_ETH_ADDR_LEN);
    /* RFC 2131 §3: the magic cookie 99.130.83.99 starts the options. */
    wisp_wr32(m + WISP_DHCP_OFF_COOKIE, WISP_DHCP_MAGIC_COOKIE);
    o = m + WISP_DHCP_OFF_OPTIONS;
    *o++ = WISP_DHCP_OPT_MSGTYPE; /* RFC 2132 §9.6 */
    *o++ = 1;
    *o++ = type;
    if (t.req != WISP_IP4_ANY) {
        *o++ = WISP_DHCP_OPT_REQ_IP; /* RFC 2132 §9.1 */
        *o++ = 4;
        wisp_ip4_wr(o, t.req);
        o += 4;
    }
    if (t.sid != WISP_IP4_ANY) {
        *o++ = WISP_DHCP_OPT_SERVER_ID; /* RFC 2132 §9.7 */
        *o++ = 4;
        wisp_ip4_wr(o, t.sid);
        o += 4;
    }
    /* RFC 2131 Table 5: PRL and maximum size only in DISCOVER / REQUEST. */
    if (type == WISP_DHCP_MSG_DISCOVER || type == WISP_DHCP_MSG_REQUEST) {
        size_t hn = strlen(d->hostname);
        /* RFC 2132 §9.10: at least 576; we take whole datagrams of our MTU. */
        *o++ = WISP_DHCP_OPT_MAX_SIZE;
        *o++ = 2;
        wisp_wr16(o, (uint16_t)WISP_MAX(576u, d->dev_mtu));
        o += 2;
        *o++ = WISP_DHCP_OPT_PRL; /* RFC 2132 §9.8 */
        *o++ = (uint8_t)sizeof(dhcp_prl);
        memcpy(o, dhcp_prl, sizeof(dhcp_prl));
        o += sizeof(dhcp_prl);
        if (hn > 0) {
            *o++ = WISP_DHCP_OPT_HOSTNAME; /* RFC 2132 §3.14 */
            *o++ = (uint8_t)hn;
            memcpy(o, d->hostname, hn);
            o += hn;
        }
    }
    *o++ = WISP_DHCP_OPT_END;
    len = (uint16_t)(o - m);
    if (len < WISP_DHCP_MIN_LEN) {
        len = WISP_DHCP_MIN_LEN; /* zero padding after End */
    }
    wisp_pbuf_trim(p, len);
    to = wisp_ipaddr4(t.dst);
    err = wisp_udp_sendto(d->pcb, p, &to, WISP_DHCP_SERVER_PORT);
    wisp_pbuf_free(p);
    if (err == WISP_OK) {
        WISP_CTR_INC(s, DHCP_TX);
    }
    return err;
}

static wisp_err_t dhcp_send(struct wisp_dhcp *d, uint8_t type)
{
    return dhcp_send_to(d, type, WISP_IP4_ANY);
}

static void dhcp_send_discover(struct wisp_dhcp *d)
{
    (void)dhcp_send(d, WISP_DHCP_MSG_DISCOVER);
    dhcp_arm(d, dhcp_backoff(d));
}

/* (Re)send the REQUEST of a requesting / rebooting state and wait the
 * backoff (RFC 2131 §4.1). */
static void dhcp_request_again(struct wisp_dhcp *d)
{
    (void)dhcp_send(d, WISP_DHCP_MSG_REQUEST);
    dhcp_arm(d, dhcp_backoff(d));
}

/* Enter REQUESTING / REBOOTING: the first REQUEST of the exchange; the
 * lease will start now (RFC 2131 §4.4.1). */
static void dhcp_request_start(struct wisp_dhcp *d, uint8_t state)
{
    d->state = state;
    d->tries = 0;
    d->req_start = dhcp_clock(d);
    dhcp_request_again(d);
}

/* RFC 2131 §4.4.5: in RENEWING wait half the time left until T2, in
 * REBINDING half the time left on the lease, at least renew_min_ms. */
static uint32_t dhcp_renew_wait(struct wisp_dhcp *d)
{
    uint64_t now = dhcp_clock(d);
    uint64_t until = d->state == WISP_DHCP_RENEWING ? d->t2_at : d->expire_at;
    uint64_t w = until > now ? (until - now) / 2u : 0u;
    if (w < d->cfg.renew_min_ms) {
        w = d->cfg.renew_min_ms;
    }
    return w > DHCP_TIMER_CHUNK_MS ? DHCP_TIMER_CHUNK_MS : (uint32_t)w;
}

/* (Re)send the REQUEST of RENEWING / REBINDING and wait (RFC 2131 §4.4.5). */
static void dhcp_renew_again(struct wisp_dhcp *d)
{
    (void)dhcp_send(d, WISP_DHCP_MSG_REQUEST);
    dhcp_arm(d, dhcp_renew_wait(d));
}

/* ------------------------------------------------------------ transitions */

/* Remove the lease's configuration from the interface. */
static void dhcp_unconfigure(struct wisp_dhcp *d)
{
    if (!d->have_lease) {
        return;
    }
    d->have_lease = 0;
    wisp_timer_cancel(dhcp_stack(d), &d->lease_tmr);
    d->nif->mtu = d->dev_mtu;
    wisp_netif_set_ip4(d->nif, WISP_IP4_ANY, WISP_IP4_ANY, WISP_IP4_ANY);
}

/* INIT or INIT-REBOOT: wait delay_ms, then discover / request the known
 * address (no timer while the link is down; link up restarts). */
static void dhcp_enter(struct wisp_dhcp *d, uint8_t state, uint32_t delay_ms)
{
    d->state = state;
    d->tries = 0;
    wisp_timer_cancel(dhcp_stack(d), &d->tmr);
    if (wisp_netif_is_usable(d->nif)) {
        dhcp_arm(d, delay_ms);
    }
}

/* INIT -> SELECTING: a new exchange, the first DISCOVER. */
static void dhcp_discover(struct wisp_dhcp *d)
{
    dhcp_new_xid(d);
    d->state = WISP_DHCP_SELECTING;
    d->tries = 0;
    dhcp_send_discover(d);
}

/* Arm the lease timer for the next deadline of the current state. */
static void dhcp_lease_arm(struct wisp_dhcp *d)
{
    uint64_t now = dhcp_clock(d), next = d->expire_at, delay;

    if (!d->have_lease) {
        wisp_timer_cancel(dhcp_stack(d), &d->lease_tmr);
        return;
    }
    if (d->state == WISP_DHCP_BOUND || d->state == WISP_DHCP_RENEWING) {
        next = WISP_MIN(next, d->t2_at);
    }
    if (d->state == WISP_DHCP_BOUND) {
        next = WISP_MIN(next, d->t1_at);
    }
    if (next == DHCP_NEVER) {
        wisp_timer_cancel(dhcp_stack(d), &d->lease_tmr);
        return;
    }
    delay = next > now ? next - now : 0u;
    if (delay > DHCP_TIMER_CHUNK_MS) {
        delay = DHCP_TIMER_CHUNK_MS;
    }
    wisp_timer_arm(dhcp_stack(d), &d->lease_tmr, (uint32_t)delay, dhcp_lease_fn);
}

/* The acknowledged lease (pend) is checked: configure the interface and
 * start the lease timers (RFC 2131 §4.4.1, §4.4.5). */
static void dhcp_bind(struct wisp_dhcp *d, enum wisp_dhcp_event ev)
{
    struct wisp_stack *s = dhcp_stack(d);
    uint16_t mtu;

    d->lease = d->pend;
    d->lease_start = d->req_start;
    if (d->lease.lease_s == WISP_DHCP_INFINITE) {
        d->t1_at = d->t2_at = d->expire_at = DHCP_NEVER;
    } else {
        d->t1_at = d->lease_start + (uint64_t)d->lease.t1_s * 1000u;
        d->t2_at = d->lease_start + (uint64_t)d->lease.t2_s * 1000u;
        d->expire_at = d->lease_start + (uint64_t)d->lease.lease_s * 1000u;
    }
    /* RFC 2132 §5.1: the interface MTU, never above what the device carries. */
    mtu = (d->lease.mtu != 0 && d->lease.mtu < d->dev_mtu) ? d->lease.mtu : d->dev_mtu;
    d->nif->mtu = mtu;
    wisp_netif_set_ip4(d->nif, d->lease.addr, d->lease.mask, d->lease.router);
    d->have_lease = 1;
    d->reboot_addr = d->lease.addr;
    d->state = WISP_DHCP_BOUND;
    d->tries = 0;
    wisp_timer_cancel(s, &d->tmr);
    dhcp_lease_arm(d);
    if (ev == WISP_DHCP_EV_BOUND) {
        WISP_CTR_INC(s, DHCP_BOUND);
    } else {
        WISP_CTR_INC(s, DHCP_RENEWED);
    }
    dhcp_notify(d, ev);
}

/* RFC 5227 §2.1.1: probe the address before using it. */
static void dhcp_check_start(struct wisp_dhcp *d)
{
    d->state = WISP_DHCP_CHECKING;
    d->probes = 0;
    d->conflict = 0;
    /* "wait for a random time interval selected uniformly in the range
     * zero to PROBE_WAIT seconds" */
    dhcp_arm(d, dhcp_rand_below(d, PROBE_WAIT_MS + 1u));
}

/* RFC 2131 §3.1 step 5 / §4.4.1: the address is in use: DECLINE it and
 * restart after a wait of at least ten seconds. */
static void dhcp_decline(struct wisp_dhcp *d)
{
    struct wisp_stack *s = dhcp_stack(d);

    WISP_CTR_INC(s, DHCP_CONFLICT);
    if (dhcp_send(d, WISP_DHCP_MSG_DECLINE) == WISP_OK) {
        WISP_CTR_INC(s, DHCP_DECLINE_TX);
    }
    d->reboot_addr = WISP_IP4_ANY; /* never suggest the address again */
    dhcp_enter(d, WISP_DHCP_INIT, d->cfg.decline_wait_ms);
    dhcp_notify(d, WISP_DHCP_EV_CONFLICT);
}

/* An ACK with a lease in pend (REQUESTING, REBOOTING, RENEWING,
 * REBINDING). */
static void dhcp_accept(struct wisp_dhcp *d)
{
    if (d->have_lease && d->pend.addr == d->lease.addr) {
        dhcp_bind(d, WISP_DHCP_EV_RENEWED);
        return;
    }
    /* A new address: the old one (if any) goes first. */
    dhcp_unconfigure(d);
    /* RFC 2131 §4.4.1: "The client SHOULD perform a check on the suggested
     * address to ensure that the address is not already in use", here with
     * RFC 5227 probes. */
    if (d->cfg.arp_check) {
        dhcp_check_start(d);
    } else {
        dhcp_bind(d, WISP_DHCP_EV_BOUND);
    }
}

/* NAK (RFC 2131 §4.4.1 / §4.4.5) or expiry: stop using the address and
 * start again from INIT. */
static void dhcp_restart(struct wisp_dhcp *d)
{
    bool had = d->have_lease != 0;
    dhcp_unconfigure(d);
    dhcp_enter(d, WISP_DHCP_INIT, dhcp_init_delay(d));
    if (had) {
        dhcp_notify(d, WISP_DHCP_EV_LOST);
    }
}

/* ------------------------------------------------------------------ timers */

static void dhcp_tmr_fn(struct wisp_stack *s, struct wisp_timer *t)
{
    struct wisp_dhcp *d = (struct wisp_dhcp *)(void *)((uint8_t *)t - offsetof(struct wisp_dhcp, tmr));
    uint64_t now = dhcp_clock(d);
    WISP_UNUSED(s);

    switch (d->state) {
    case WISP_DHCP_INIT:
        dhcp_discover(d);
        break;
    case WISP_DHCP_SELECTING:
        dhcp_send_discover(d); /* RFC 2131 §4.1: retransmit */
        break;
    case WISP_DHCP_REQUESTING:
        if (d->tries >= WISP_DHCP_REQUEST_TRIES) {
            /* RFC 2131 §3.1 step 5: no ACK nor NAK: restart. */
            dhcp_discover(d);
        } else {
            dhcp_request_again(d);
        }
        break;
    case WISP_DHCP_CHECKING:
        if (d->conflict) {
            dhcp_decline(d);
        } else if (d->probes < PROBE_NUM) {
            /* RFC 5227 §2.1.1: PROBE_NUM probes, PROBE_MIN..PROBE_MAX
             * apart, then ANNOUNCE_WAIT after the last. */
            (void)wisp_arp_probe(d->nif, d->pend.addr);
            d->probes++;
            if (d->probes < PROBE_NUM) {
                dhcp_arm(d, PROBE_MIN_MS + dhcp_rand_below(d, PROBE_MAX_MS - PROBE_MIN_MS + 1u));
            } else {
                dhcp_arm(d, ANNOUNCE_WAIT_MS);
            }
        } else {
            dhcp_bind(d, WISP_DHCP_EV_BOUND);
        }
        break;
    case WISP_DHCP_RENEWING:
    case WISP_DHCP_REBINDING:
        dhcp_renew_again(d);
        break;
    case WISP_DHCP_INIT_REBOOT:
        dhcp_new_xid(d);
        dhcp_request_start(d, WISP_DHCP_REBOOTING);
        break;
    case WISP_DHCP_REBOOTING:
        if (d->tries < WISP_DHCP_REQUEST_TRIES) {
            dhcp_request_again(d);
        } else if (d->have_lease && now < d->expire_at) {
            /* RFC 2131 §4.4.2: no answer: the client MAY use the address
             * for the rest of its lease. */
            d->state = WISP_DHCP_BOUND;
            d->tries = 0;
            dhcp_lease_arm(d);
        } else {
            bool had = d->have_lease != 0;
            dhcp_unconfigure(d);
            dhcp_discover(d);
            if (had) {
                dhcp_notify(d, WISP_DHCP_EV_LOST);
            }
        }
        break;
    default:
        break;
    }
}

static void dhcp_lease_fn(struct wisp_stack *s, struct wisp_timer *t)
{
    struct wisp_dhcp *d = (struct wisp_dhcp *)(void *)((uint8_t *)t - offsetof(struct wisp_dhcp, lease_tmr));
    uint64_t now = dhcp_clock(d);

    if (!d->have_lease) {
        return;
    }
    if (now >= d->expire_at) {
        /* RFC 2131 §4.4.5: the lease expired: stop using the address and
         * start over as if uninitialised. */
        WISP_CTR_INC(s, DHCP_EXPIRED);
        dhcp_restart(d);
        return;
    }
    if ((d->state == WISP_DHCP_BOUND || d->state == WISP_DHCP_RENEWING) && now >= d->t2_at) {
        /* RFC 2131 §4.4.5: T2: REBINDING, broadcast to any server. */
        d->state = WISP_DHCP_REBINDING;
    } else if (d->state == WISP_DHCP_BOUND && now >= d->t1_at) {
        /* RFC 2131 §4.4.5: T1: RENEWING, unicast to our server. */
        d->state = WISP_DHCP_RENEWING;
    } else {
        dhcp_lease_arm(d); /* a chunk of a long wait, or a state without T1/T2 */
        return;
    }
    dhcp_new_xid(d);
    d->tries = 0;
    d->req_start = now;
    dhcp_lease_arm(d);
    if (wisp_netif_is_usable(d->nif)) {
        dhcp_renew_again(d);
    }
}

/* ------------------------------------------------------------------- input */

/* The options holding one 32-bit value (an address, network order as
 * wisp_ip4_t, or a time in seconds): where it goes in struct dhcp_msg. */
#define OPT_ADDR 0x01u /* an IPv4 address (else a 32-bit number) */
#define OPT_LIST 0x02u /* a list of addresses, the first is taken */
static const struct {
    uint8_t code, have, flags, off;
} dhcp_u32_opts[] = {
    { WISP_DHCP_OPT_MASK, HAVE_MASK, OPT_ADDR, offsetof(struct dhcp_msg, l.mask) },                /* RFC 2132 §3.3 */
    { WISP_DHCP_OPT_ROUTER, HAVE_ROUTER, OPT_ADDR | OPT_LIST, offsetof(struct dhcp_msg, l.router) }, /* §3.5: preferred first */
    { WISP_DHCP_OPT_LEASE, HAVE_LEASE, 0, offsetof(struct dhcp_msg, l.lease_s) },                  /* RFC 2132 §9.2 */
    { WISP_DHCP_OPT_T1, HAVE_T1, 0, offsetof(struct dhcp_msg, l.t1_s) },                           /* RFC 2132 §9.11 */
    { WISP_DHCP_OPT_T2, HAVE_T2, 0, offsetof(struct dhcp_msg, l.t2_s) },                           /* RFC 2132 §9.12 */
    { WISP_DHCP_OPT_SERVER_ID, HAVE_SERVER, OPT_ADDR, offsetof(struct dhcp_msg, l.server) },       /* RFC 2132 §9.7 */
};

/* One option (code, olen bytes of value at vo in p; v its first <= 4
 * bytes, zero-padded). False when malformed: a known option with a wrong
 * length or value. */
static bool dhcp_parse_opt(const struct wisp_pbuf *p, uint8_t code, uint8_t olen, uint16_t vo, const uint8_t *v,
                           struct dhcp_msg *m, bool top)
{
    unsigned k;

    for (k = 0; k < WISP_ARRAY_SIZE(dhcp_u32_opts); k++) {
        if (dhcp_u32_opts[k].code == code) {
            uint8_t fl = dhcp_u32_opts[k].flags;
            uint32_t val = (fl & OPT_ADDR) ? wisp_ip4_rd(v) : wisp_rd32(v);
            if ((fl & OPT_LIST) ? (olen < 4u || (olen % 4u) != 0) : olen != 4u) {
                return false;
            }
            memcpy((uint8_t *)m + dhcp_u32_opts[k].off, &val, sizeof(val));
            m->have |= dhcp_u32_opts[k].have;
            return true;
        }
    }
    switch (code) {
    case WISP_DHCP_OPT_DNS: /* RFC 2132 §3.8 */
        if (olen < 4u || (olen % 4u) != 0) {
            return false;
        }
        m->l.dns_count = 0;
        for (k = 0; k < olen / 4u && m->l.dns_count < WISP_DHCP_MAX_DNS; k++) {
            uint8_t a[4];
            (void)wisp_pbuf_copy_out(p, a, 4, (uint16_t)(vo + 4u * k));
            m->l.dns[m->l.dns_count++] = wisp_ip4_rd(a);
        }
        return true;
    case WISP_DHCP_OPT_MTU: /* RFC 2132 §5.1: minimum 68 */
        if (olen != 2u) {
            return false;
        }
        m->l.mtu = wisp_rd16(v) >= 68u ? wisp_rd16(v) : 0u;
        return true;
    case WISP_DHCP_OPT_MSGTYPE: /* RFC 2132 §9.6: 1..8 */
        if (olen != 1u || v[0] < 1u || v[0] > 8u) {
            return false;
        }
        m->type = v[0];
        return true;
    case WISP_DHCP_OPT_OVERLOAD: /* RFC 2132 §9.3: 1 file, 2 sname, 3 both */
        if (!top || olen != 1u || v[0] < 1u || v[0] > 3u) {
            return false;
        }
        m->overload = v[0];
        return true;
    default:
        return true; /* not used: skipped */
    }
}

/* One option field (options, 'file' or 'sname') of p: off, len. False when
 * malformed (an option running past the field, a known option with a bad
 * length, overload outside the options field). */
static bool dhcp_parse_field(const struct wisp_pbuf *p, uint32_t off, uint32_t len, struct dhcp_msg *m, bool top)
{
    uint32_t i = 0;

    while (i < len) {
        uint8_t code = (uint8_t)wisp_pbuf_get_u8(p, (uint16_t)(off + i));
        uint8_t olen, v[4];
        uint16_t vo;

        /* RFC 2132 §3.1 / §3.2: Pad and End are single octets. */
        if (code == WISP_DHCP_OPT_PAD) {
            i++;
            continue;
        }
        if (code == WISP_DHCP_OPT_END) {
            return true;
        }
        if (i + 1u >= len) {
            return false;
        }
        olen = (uint8_t)wisp_pbuf_get_u8(p, (uint16_t)(off + i + 1u));
        if (i + 2u + olen > len) {
            return false;
        }
        vo = (uint16_t)(off + i + 2u);
        memset(v, 0, sizeof(v));
        (void)wisp_pbuf_copy_out(p, v, olen < 4u ? olen : 4u, vo);
        if (!dhcp_parse_opt(p, code, olen, vo, v, m, top)) {
            return false;
        }
        i += 2u + olen;
    }
    return true;
}

/* Check and complete in place the lease an OFFER / ACK describes (m->l);
 * false when unusable. */
static bool dhcp_make_lease(struct dhcp_msg *m)
{
    struct wisp_dhcp_lease *l = &m->l;
    uint32_t hm;

    /* (m was zeroed before parsing: an absent server identifier or lease
     * time reads 0) */
    if (!dhcp_addr_ok(l->addr) || l->server == WISP_IP4_ANY || l->lease_s == 0) {
        return false;
    }
    if (m->have & HAVE_MASK) {
        hm = wisp_ntohl(l->mask);
        /* a contiguous, non-zero mask (RFC 950 §2.1 recommends it; RFC 4632) */
        if (hm == 0 || ((~hm) & (~hm + 1u)) != 0) {
            return false;
        }
    } else {
        /* RFC 1122 §3.3.1.1 leaves it open: the classful mask. */
        uint8_t o0 = wisp_ip4_octet(l->addr, 0);
        l->mask = wisp_ip4_prefix_mask(o0 < 128u ? 8u : (o0 < 192u ? 16u : 24u));
    }
    if (!((m->have & HAVE_ROUTER) && dhcp_addr_ok(l->router) && l->router != l->addr &&
          ((l->router ^ l->addr) & l->mask) == 0)) {
        l->router = WISP_IP4_ANY;
    }
    if (l->lease_s == WISP_DHCP_INFINITE) {
        l->t1_s = l->t2_s = WISP_DHCP_INFINITE;
    } else {
        /* RFC 2131 §4.4.5: T1 defaults to 0.5 * lease, T2 to 0.875 * lease. */
        uint32_t t1 = l->lease_s / 2u, t2 = (uint32_t)(((uint64_t)l->lease_s * 7u) / 8u);
        if (m->have & HAVE_T1) {
            t1 = l->t1_s;
        }
        if (m->have & HAVE_T2) {
            t2 = l->t2_s;
        }
        if (!(t1 <= t2 && t2 <= l->lease_s)) {
            t1 = l->lease_s / 2u;
            t2 = (uint32_t)(((uint64_t)l->lease_s * 7u) / 8u);
        }
        l->t1_s = t1;
        l->t2_s = t2;
    }
    return true;
}

static void dhcp_recv(void *arg, struct wisp_udp_pcb *pcb, struct wisp_pbuf *p, const wisp_ipaddr_t *src,
                      uint16_t port, const struct wisp_ip_info *ip)
{
    struct wisp_dhcp *d = (struct wisp_dhcp *)arg;
    struct wisp_stack *s = pcb->stack;
    struct dhcp_msg m;
    uint8_t h[WISP_DHCP_OFF_SNAME];
    uint8_t cookie[4];
    uint16_t tot;
    bool ok;

    WISP_UNUSED(src);
    WISP_UNUSED(ip);
    WISP_CTR_INC(s, DHCP_RX);

    /* ---- parse */
    tot = p->tot_len;
    if (port != WISP_DHCP_SERVER_PORT) {
        WISP_CTR_INC(s, DHCP_DROP_BAD); /* RFC 2131 §4.1: servers send from 67 */
        wisp_pbuf_free(p);
        return;
    }
    if (tot < WISP_DHCP_OFF_OPTIONS) {
        WISP_CTR_INC(s, DHCP_DROP_SHORT);
        wisp_pbuf_free(p);
        return;
    }
    (void)wisp_pbuf_copy_out(p, h, sizeof(h), 0);
    (void)wisp_pbuf_copy_out(p, cookie, sizeof(cookie), WISP_DHCP_OFF_COOKIE);
    if (h[WISP_DHCP_OFF_OP] != WISP_DHCP_BOOTREPLY || h[WISP_DHCP_OFF_HTYPE] != WISP_DHCP_HTYPE_ETH ||
        h[WISP_DHCP_OFF_HLEN] != WISP_ETH_ADDR_LEN || wisp_rd32(cookie) != WISP_DHCP_MAGIC_COOKIE) {
        WISP_CTR_INC(s, DHCP_DROP_BAD);
        wisp_pbuf_free(p);
        return;
    }
    /* RFC 2131 §4.4.1: replies are matched by 'xid' ... */
    if (wisp_rd32(h + WISP_DHCP_OFF_XID) != d->xid) {
        WISP_CTR_INC(s, DHCP_DROP_XID);
        wisp_pbuf_free(p);
        return;
    }
    /* ... and must carry our hardware address (broadcast replies reach every
     * client on the link). */
    if (memcmp(h + WISP_DHCP_OFF_CHADDR, d->nif->hwaddr, WISP_ETH_ADDR_LEN) != 0) {
        WISP_CTR_INC(s, DHCP_DROP_CHADDR);
        wisp_pbuf_free(p);
        return;
    }
    memset(&m, 0, sizeof(m));
    m.l.addr = wisp_ip4_rd(h + WISP_DHCP_OFF_YIADDR);
    ok = dhcp_parse_field(p, WISP_DHCP_OFF_OPTIONS, (uint32_t)tot - WISP_DHCP_OFF_OPTIONS, &m, true);
    /* RFC 2131 §4.1: with option overload, 'file' then 'sname' hold more
     * options. */
    if (ok && (m.overload & 1u)) {
        ok = dhcp_parse_field(p, WISP_DHCP_OFF_FILE, WISP_DHCP_FILE_LEN, &m, false);
    }
    if (ok && (m.overload & 2u)) {
        ok = dhcp_parse_field(p, WISP_DHCP_OFF_SNAME, WISP_DHCP_SNAME_LEN, &m, false);
    }
    wisp_pbuf_free(p);
    if (!ok || m.type == 0) {
        WISP_CTR_INC(s, DHCP_DROP_OPTS);
        return;
    }
    if ((m.type == WISP_DHCP_MSG_OFFER || m.type == WISP_DHCP_MSG_ACK) && !dhcp_make_lease(&m)) {
        WISP_CTR_INC(s, DHCP_DROP_OPTS);
        return;
    }

    /* ---- act */
    if (m.type == WISP_DHCP_MSG_OFFER) {
        if (d->state != WISP_DHCP_SELECTING) {
            goto stale;
        }
        /* RFC 2131 §4.4.1: the first offer is taken; REQUEST it with the
         * same xid (below). */
    } else if (m.type != WISP_DHCP_MSG_ACK && m.type != WISP_DHCP_MSG_NAK) {
        WISP_CTR_INC(s, DHCP_DROP_BAD); /* not a message a server sends a client */
        return;
    } else if (((1u << d->state) & DHCP_REQ_STATES) == 0 ||
               /* ACK (server identifier certain) or NAK from a server we
                * did not choose / are not renewing with: ignored */
               ((m.have & HAVE_SERVER) != 0 &&
                ((d->state == WISP_DHCP_REQUESTING && m.l.server != d->pend.server) ||
                 (m.type == WISP_DHCP_MSG_NAK && d->state == WISP_DHCP_RENEWING &&
                  m.l.server != d->lease.server)))) {
        goto stale;
    } else if (m.type == WISP_DHCP_MSG_NAK) {
        /* RFC 2131 §4.4.1, §4.4.5: NAK: stop using the address, INIT. */
        WISP_CTR_INC(s, DHCP_NAK_RX);
        dhcp_restart(d);
        return;
    }
    /* An OFFER taken, or an ACK: its lease is the pending one. */
    d->pend = m.l;
    if (m.type == WISP_DHCP_MSG_OFFER) {
        dhcp_request_start(d, WISP_DHCP_REQUESTING);
    } else {
        dhcp_accept(d);
    }
    return;
stale:
    WISP_CTR_INC(s, DHCP_DROP_STATE);
}

/* RFC 5227 §2.1.1: while probing, a packet whose sender IP is the address,
 * or a probe (sender IP 0) for it from another host, is a conflict. */
static void dhcp_arp_fn(void *arg, struct wisp_netif *nif, uint16_t op, const uint8_t sha[6], wisp_ip4_t spa,
                        wisp_ip4_t tpa)
{
    struct wisp_dhcp *d = (struct wisp_dhcp *)arg;
    WISP_UNUSED(sha);

    if (d->state != WISP_DHCP_CHECKING || nif != d->nif || d->conflict) {
        return;
    }
    if (spa == d->pend.addr || (op == 1u && spa == WISP_IP4_ANY && tpa == d->pend.addr)) {
        d->conflict = 1;
        dhcp_arm(d, 0); /* act from the timer, outside ARP input */
    }
}

/* Link changes (RFC 2131 §3.2: a client that was configured before
 * reuses its address through INIT-REBOOT). */
static void dhcp_link_fn(void *arg, struct wisp_netif *nif, bool usable)
{
    struct wisp_dhcp *d = (struct wisp_dhcp *)arg;
    uint8_t st = WISP_DHCP_INIT;
    WISP_UNUSED(nif);

    if (d->state == WISP_DHCP_STOPPED) {
        return;
    }
    if (!usable) {
        /* Nothing can be sent: the exchange pauses, the lease keeps
         * ageing (its expiry still unconfigures the interface). */
        wisp_timer_cancel(dhcp_stack(d), &d->tmr);
        if (d->state == WISP_DHCP_CHECKING) {
            d->state = WISP_DHCP_INIT; /* the probes are void */
        }
        return;
    }
    if (d->have_lease && dhcp_clock(d) < d->expire_at) {
        d->reboot_addr = d->lease.addr;
        st = WISP_DHCP_INIT_REBOOT;
    } else if (!d->have_lease && d->reboot_addr != WISP_IP4_ANY &&
               (d->state == WISP_DHCP_INIT_REBOOT || d->state == WISP_DHCP_REBOOTING)) {
        st = WISP_DHCP_INIT_REBOOT; /* started with cfg.prev_addr: ask for it again */
    }
    dhcp_enter(d, st, dhcp_init_delay(d));
}

/* -------------------------------------------------------------------- API */

void wisp_dhcp_cfg_defaults(struct wisp_dhcp_cfg *cfg)
{
    memset(cfg, 0, sizeof(*cfg));
    cfg->backoff_base_ms = WISP_DHCP_BACKOFF_BASE_MS;
    cfg->backoff_max_ms = WISP_DHCP_BACKOFF_MAX_MS;
    cfg->init_delay_ms = WISP_DHCP_INIT_DELAY_MS;
    cfg->renew_min_ms = WISP_DHCP_RENEW_MIN_MS;
    cfg->decline_wait_ms = WISP_DHCP_DECLINE_WAIT_MS;
    cfg->arp_check = true;
}

/* Port 68 on this interface: another DHCP client may hold it on another
 * interface (its PCB bound to that interface), so the pair is taken over
 * directly when every holder is bound to a different interface. */
static wisp_err_t dhcp_bind_port(struct wisp_dhcp *d)
{
    struct wisp_stack *s = dhcp_stack(d);
    struct wisp_udp_pcb *q;
    wisp_err_t err = wisp_udp_bind(d->pcb, NULL, WISP_DHCP_CLIENT_PORT);

    if (err != WISP_ERR_USE) {
        return err;
    }
    for (q = s->udp_pcbs; q != NULL; q = q->next) {
        if (q != d->pcb && q->local_port == WISP_DHCP_CLIENT_PORT &&
            (q->bound_if == 0 || q->bound_if == d->pcb->bound_if)) {
            return WISP_ERR_USE;
        }
    }
    d->pcb->local_ip = wisp_ipaddr4(WISP_IP4_ANY);
    d->pcb->local_port = WISP_DHCP_CLIENT_PORT;
    return WISP_OK;
}

wisp_err_t wisp_dhcp_start(struct wisp_dhcp *d, struct wisp_netif *nif, const struct wisp_dhcp_cfg *cfg,
                           wisp_dhcp_fn fn, void *arg)
{
    struct wisp_stack *s;
    wisp_err_t err;
    size_t i;

    if (d == NULL || nif == NULL || (nif->flags & WISP_NETIF_F_ETHARP) == 0) {
        return WISP_ERR_ARG;
    }
    s = nif->stack;
    WISP_CORE_ASSERT_OWNER(s);
    if (d->state != WISP_DHCP_STOPPED) {
        return WISP_ERR_ALREADY;
    }
    memset(d, 0, sizeof(*d));
    if (cfg != NULL) {
        d->cfg = *cfg;
    } else {
        wisp_dhcp_cfg_defaults(&d->cfg);
    }
    if (d->cfg.backoff_base_ms < 4u) {
        d->cfg.backoff_base_ms = 4u;
    }
    if (d->cfg.backoff_max_ms < d->cfg.backoff_base_ms) {
        d->cfg.backoff_max_ms = d->cfg.backoff_base_ms;
    }
    if (d->cfg.backoff_max_ms > DHCP_TIMER_CHUNK_MS) {
        d->cfg.backoff_max_ms = DHCP_TIMER_CHUNK_MS;
    }
    if (d->cfg.hostname != NULL) {
        for (i = 0; i < WISP_DHCP_HOSTNAME_MAX && d->cfg.hostname[i] != '\0'; i++) {
            d->hostname[i] = d->cfg.hostname[i];
        }
    }
    d->cfg.hostname = NULL; /* copied; the caller's string is not kept */
    d->nif = nif;
    d->cb = fn;
    d->cb_arg = arg;
    d->pcb = wisp_udp_new(s);
    if (d->pcb == NULL) {
        return WISP_ERR_MEM;
    }
    d->pcb->bound_if = nif->index;
    err = dhcp_bind_port(d);
    if (err != WISP_OK) {
        wisp_udp_remove(d->pcb);
        d->pcb = NULL;
        return err;
    }
    wisp_udp_recv(d->pcb, dhcp_recv, d);
    d->dev_mtu = nif->mtu;
    d->clock_last = wisp_now(s);
    d->arp_watch.fn = dhcp_arp_fn;
    d->arp_watch.arg = d;
    wisp_arp_watch_add(s, &d->arp_watch);
    d->nif_watch.fn = dhcp_link_fn;
    d->nif_watch.arg = d;
    wisp_netif_watch_add(nif, &d->nif_watch);
    /* The lease will configure the interface; until then it has none. */
    wisp_netif_set_ip4(nif, WISP_IP4_ANY, WISP_IP4_ANY, WISP_IP4_ANY);
    if (dhcp_addr_ok(d->cfg.prev_addr)) {
        /* RFC 2131 §3.2: a client that knows its previous address starts
         * in INIT-REBOOT. */
        d->reboot_addr = d->cfg.prev_addr;
    }
    dhcp_enter(d, d->reboot_addr != WISP_IP4_ANY ? WISP_DHCP_INIT_REBOOT : WISP_DHCP_INIT, dhcp_init_delay(d));
    return WISP_OK;
}

void wisp_dhcp_stop(struct wisp_dhcp *d, bool release)
{
    struct wisp_stack *s;

    if (d == NULL || d->state == WISP_DHCP_STOPPED) {
        return;
    }
    s = dhcp_stack(d);
    WISP_CORE_ASSERT_OWNER(s);
    wisp_timer_cancel(s, &d->tmr);
    wisp_timer_cancel(s, &d->lease_tmr);
    wisp_arp_watch_remove(s, &d->arp_watch);
    wisp_netif_watch_remove(d->nif, &d->nif_watch);
    if (release && d->have_lease && wisp_netif_is_usable(d->nif)) {
        /* RFC 2131 §4.4.6: DHCPRELEASE with a new xid (the fields:
         * dhcp_tx_fields), unicast when the next hop is resolved (see the
         * file comment). */
        wisp_ip4_t nh = ((d->lease.server ^ d->lease.addr) & d->lease.mask) == 0 ? d->lease.server : d->lease.router;
        wisp_ip4_t dst = (nh != WISP_IP4_ANY && wisp_arp_lookup(s, d->nif->index, nh, NULL)) ? d->lease.server
                                                                                             : WISP_IP4_BCAST;
        dhcp_new_xid(d);
        if (dhcp_send_to(d, WISP_DHCP_MSG_RELEASE, dst) == WISP_OK) {
            WISP_CTR_INC(s, DHCP_RELEASE_TX);
        }
    }
    dhcp_unconfigure(d);
    wisp_udp_remove(d->pcb);
    d->pcb = NULL;
    d->state = WISP_DHCP_STOPPED;
}

const char *wisp_dhcp_state_name(enum wisp_dhcp_state st)
{
    static const char *const names[] = { "STOPPED", "INIT",      "SELECTING",   "REQUESTING", "CHECKING",
                                         "BOUND",   "RENEWING",  "REBINDING",   "INIT-REBOOT", "REBOOTING" };
    return (unsigned)st < WISP_ARRAY_SIZE(names) ? names[st] : "?";
}

enum wisp_dhcp_state wisp_dhcp_state(const struct wisp_dhcp *d)
{
    WISP_CORE_ASSERT_OWNER(d->nif != NULL ? d->nif->stack : NULL);
    return (enum wisp_dhcp_state)d->state;
}

const struct wisp_dhcp_lease *wisp_dhcp_last_lease(const struct wisp_dhcp *d)
{
    WISP_CORE_ASSERT_OWNER(d->nif != NULL ? d->nif->stack : NULL);
    return &d->lease;
}

struct wisp_netif *wisp_dhcp_netif(const struct wisp_dhcp *d)
{
    WISP_CORE_ASSERT_OWNER(d->nif != NULL ? d->nif->stack : NULL);
    return d->nif;
}

wisp_ip4_t wisp_dhcp_pending_addr(const struct wisp_dhcp *d)
{
    WISP_CORE_ASSERT_OWNER(d->nif != NULL ? d->nif->stack : NULL);
    return d->pend.addr;
}

const struct wisp_dhcp_lease *wisp_dhcp_lease(const struct wisp_dhcp *d)
{
    WISP_CORE_ASSERT_OWNER(d->nif != NULL ? d->nif->stack : NULL);
    return d->have_lease ? &d->lease : NULL;
}

uint32_t wisp_dhcp_lease_left_s(struct wisp_dhcp *d)
{
    uint64_t now;
    WISP_CORE_ASSERT_OWNER(d->nif != NULL ? d->nif->stack : NULL);
    if (!d->have_lease) {
        return 0;
    }
    if (d->expire_at == DHCP_NEVER) {
        return WISP_DHCP_INFINITE;
    }
    now = dhcp_clock(d);
    return now >= d->expire_at ? 0u : dhcp_ms_to_s(d->expire_at - now);
}

#else
typedef int wisp_dhcp_disabled_t; /* ISO C forbids an empty translation unit */
#endif /* WISP_DHCP */
