/**
 * @file arp.c
 * ARP for IPv4 over Ethernet (RFC 826) with the host requirements of
 * RFC 1122 §2.3.2: a small cache of resolved and pending entries, a bounded
 * queue of packets per pending entry, request retransmission and entry
 * ageing driven by one event timer, replies to requests for our address,
 * and gratuitous announcements / address defence (RFC 5227 §3, §2.4).
 */
#define WISP_PRIVATE_ACCESS 1 /* library code: sees the private tier (wisp/arch.h) */
#include "wisp/arp.h"
#include "wisp/ethernet.h"
#include "wisp/ip4.h"
#include "wisp/stack.h"
#include "wisp/prot/arp.h"

/* RFC 5227 §1.1: minimum time between two defences of our address. */
#define ARP_DEFEND_INTERVAL_MS 10000u
/* A stable entry used within its last tenth of life is refreshed with one
 * unicast request (RFC 1122 §2.3.2.1 "unicast poll"). */
#define ARP_REFRESH_AGE_MS (WISP_ARP_MAX_AGE_MS - WISP_ARP_MAX_AGE_MS / 10u)

static const uint8_t arp_zero_mac[WISP_ETH_ADDR_LEN] = { 0, 0, 0, 0, 0, 0 };

static void arp_timer_fn(struct wisp_stack *s, struct wisp_timer *t);

/* ------------------------------------------------------------ table */

static struct wisp_arp_entry *arp_find(struct wisp_stack *s, uint8_t if_idx, wisp_ip4_t ip)
{
    unsigned i;
    for (i = 0; i < WISP_ARP_TABLE_SIZE; i++) {
        struct wisp_arp_entry *e = &s->arp.e[i];
        if (e->state != WISP_ARP_EMPTY && e->ip == ip && (if_idx == 0 || e->if_idx == if_idx))
            return e;
    }
    return NULL;
}

/* Free the packets queued on e; counted as drops when they were never sent. */
static void arp_drop_queue(struct wisp_stack *s, struct wisp_arp_entry *e)
{
    unsigned i;
    for (i = 0; i < e->qlen; i++) {
        wisp_pbuf_free(e->q[i]);
        e->q[i] = NULL;
        WISP_CTR_INC(s, ARP_QUEUE_DROP);
    }
    e->qlen = 0;
}

static void arp_clear(struct wisp_stack *s, struct wisp_arp_entry *e)
{
    arp_drop_queue(s, e);
    memset(e, 0, sizeof(*e));
}

/* A new entry for ip on interface if_idx in state st, stamped now, the
 * rest cleared: a free entry, recycling when the table is full: the oldest
 * stable entry first, then the oldest pending entry without queued packets,
 * and -- only when evict_queued -- the oldest pending entry with packets.
 * Static entries are never recycled. NULL (counted) when nothing can go. */
static struct wisp_arp_entry *arp_alloc(struct wisp_stack *s, bool evict_queued, uint8_t if_idx, wisp_ip4_t ip,
                                        uint8_t st)
{
    struct wisp_arp_entry *victim = NULL;
    uint32_t now = wisp_now(s);
    uint32_t victim_age = 0;
    unsigned i, victim_rank = 0;

    /* The recycling order as ranks (0: never): stable 3, pending without
     * packets 2, pending with packets 1 when evict_queued; the oldest of
     * the highest rank goes. */
    for (i = 0; i < WISP_ARP_TABLE_SIZE; i++) {
        struct wisp_arp_entry *e = &s->arp.e[i];
        uint32_t age = now - e->stamp;
        unsigned rank;
        if (e->state == WISP_ARP_EMPTY) {
            victim = e;
            goto found;
        }
        if (e->state == WISP_ARP_STABLE) {
            rank = 3u;
        } else if (e->state != WISP_ARP_PENDING) {
            rank = 0u; /* static */
        } else {
            rank = e->qlen == 0 ? 2u : (unsigned)evict_queued;
        }
        if (rank > victim_rank || (rank == victim_rank && age > victim_age)) {
            victim = e;
            victim_rank = rank;
            victim_age = age;
        }
    }
    if (victim_rank == 0) {
        WISP_CTR_INC(s, ARP_TABLE_FULL);
        return NULL;
    }
found:
    arp_clear(s, victim);
    victim->ip = ip;
    victim->if_idx = if_idx;
    victim->state = st;
    victim->stamp = now;
    return victim;
}

/* Arm the single ARP timer for the earliest deadline of the table: retry of
 * a pending entry, or expiry of a stable one; cancel it when none. */
static void arp_rearm(struct wisp_stack *s)
{
    bool any = false;
    uint32_t due = 0, now;
    unsigned i;

    for (i = 0; i < WISP_ARP_TABLE_SIZE; i++) {
        const struct wisp_arp_entry *e = &s->arp.e[i];
        uint32_t d;
        if (e->state == WISP_ARP_PENDING)
            d = e->stamp + WISP_ARP_RETRY_MS;
        else if (e->state == WISP_ARP_STABLE)
            d = e->stamp + WISP_ARP_MAX_AGE_MS;
        else
            continue;
        if (!any || wisp_time_before(d, due)) {
            due = d;
            any = true;
        }
    }
    if (!any) {
        wisp_timer_cancel(s, &s->arp.tmr);
        return;
    }
    now = wisp_now(s);
    wisp_timer_arm(s, &s->arp.tmr, wisp_time_before(now, due) ? due - now : 0u, arp_timer_fn);
}

/* ------------------------------------------------------------ transmit */

/* Build and send one ARP packet (RFC 826 "Packet format") to eth_dst;
 * counted as arp.tx and as ctr. Sender fields are ours; spa is given (our
 * address, or 0 in a probe). The target hardware address is the
 * requester's in a reply (eth_dst, RFC 826 "Packet Reception": the fields
 * swapped); in a request it is unknown, sent as 0 (RFC 826, RFC 5227). */
static wisp_err_t arp_send(struct wisp_netif *nif, uint16_t op, const uint8_t eth_dst[WISP_ETH_ADDR_LEN],
                           wisp_ip4_t spa, wisp_ip4_t tpa, unsigned ctr)
{
    struct wisp_stack *s = nif->stack;
    struct wisp_pbuf *p;
    uint8_t *b;
    wisp_err_t err;

    p = wisp_pbuf_alloc(s, WISP_LAYER_LINK, WISP_ARP_LEN, WISP_PBUF_RAM);
    if (p == NULL) {
        WISP_CTR_INC(s, ARP_NOMEM);
        return WISP_ERR_MEM;
    }
    b = p->payload;
    wisp_wr16(b + WISP_ARP_OFF_HTYPE, WISP_ARP_HTYPE_ETH);
    wisp_wr16(b + WISP_ARP_OFF_PTYPE, WISP_ETHTYPE_IP4);
    b[WISP_ARP_OFF_HLEN] = WISP_ETH_ADDR_LEN;
    b[WISP_ARP_OFF_PLEN] = WISP_ARP_PLEN_IP4;
    wisp_wr16(b + WISP_ARP_OFF_OP, op);
    memcpy(b + WISP_ARP_OFF_SHA, nif->hwaddr, WISP_ETH_ADDR_LEN);
    wisp_ip4_wr(b + WISP_ARP_OFF_SPA, spa);
    memcpy(b + WISP_ARP_OFF_THA, op == WISP_ARP_OP_REPLY ? eth_dst : arp_zero_mac, WISP_ETH_ADDR_LEN);
    wisp_ip4_wr(b + WISP_ARP_OFF_TPA, tpa);
    /* Resolution gates urgent traffic: ARP uses the emergency queue. */
    p->prio = WISP_PRIO_EMERG;
    p->if_idx = nif->index;
    err = wisp_eth_output(nif, p, eth_dst, WISP_ETHTYPE_ARP);
    wisp_pbuf_free(p);
    if (err == WISP_OK) {
        WISP_CTR_INC(s, ARP_TX);
        WISP_CTR_INC_ID(s, ctr);
    }
    return err;
}

/* Request for ip, broadcast or (refresh of a known entry) unicast to dst. */
static wisp_err_t arp_send_request(struct wisp_netif *nif, const uint8_t dst[WISP_ETH_ADDR_LEN], wisp_ip4_t ip)
{
    return arp_send(nif, WISP_ARP_OP_REQUEST, dst, nif->ip4.addr, ip, WISP_CTR_ARP_REQ_TX);
}

/* Send the packets that waited for e (now resolved), oldest first, then
 * free them. The queue is detached first so that re-entry (a synchronous
 * driver looping traffic back) finds a consistent entry. */
static void arp_send_queue(struct wisp_netif *nif, struct wisp_arp_entry *e)
{
    struct wisp_pbuf *q[WISP_ARP_QUEUE_LEN];
    uint8_t mac[WISP_ETH_ADDR_LEN];
    unsigned i, n = e->qlen;

    memcpy(q, e->q, sizeof(q));
    memcpy(mac, e->mac, sizeof(mac));
    memset(e->q, 0, sizeof(e->q));
    e->qlen = 0;
    for (i = 0; i < n; i++) {
        /* IP packets keep the prio that IP output gave them. */
        (void)wisp_eth_output(nif, q[i], mac, WISP_ETHTYPE_IP4);
        wisp_pbuf_free(q[i]);
    }
}

/* Queue p on pending entry e: a reference, or a copy when p holds REF
 * buffers (caller memory that may change). Full queue: the oldest goes. */
static wisp_err_t arp_enqueue(struct wisp_stack *s, struct wisp_arp_entry *e, struct wisp_pbuf *p)
{
    struct wisp_pbuf *q;

    if (wisp_pbuf_has_ref(p)) {
        q = wisp_pbuf_clone(s, WISP_LAYER_LINK, p);
        if (q == NULL) {
            WISP_CTR_INC(s, ARP_NOMEM);
            return WISP_ERR_MEM;
        }
    } else {
        wisp_pbuf_ref(p);
        q = p;
    }
    if (e->qlen >= WISP_ARP_QUEUE_LEN) {
        /* RFC 1122 §2.3.2.2: queue at least one; we keep the newest. */
        wisp_pbuf_free(e->q[0]);
        memmove(&e->q[0], &e->q[1], (WISP_ARP_QUEUE_LEN - 1u) * sizeof(e->q[0]));
        e->qlen = WISP_ARP_QUEUE_LEN - 1u;
        WISP_CTR_INC(s, ARP_QUEUE_DROP);
    }
    e->q[e->qlen++] = q;
    return WISP_OK;
}

/* e is resolved to mac (state st, stable or static), stamped now; the
 * packets that waited for it go out. */
static void arp_resolved(struct wisp_netif *nif, struct wisp_arp_entry *e, const uint8_t *mac, uint8_t st)
{
    bool was_pending = (e->state == WISP_ARP_PENDING);
    memcpy(e->mac, mac, WISP_ETH_ADDR_LEN);
    e->state = st;
    e->stamp = wisp_now(nif->stack);
    e->tries = 0;
    if (was_pending)
        arp_send_queue(nif, e);
}

/* ------------------------------------------------------------ timer */

static void arp_timer_fn(struct wisp_stack *s, struct wisp_timer *t)
{
    uint32_t now = wisp_now(s);
    unsigned i;

    WISP_UNUSED(t);
    for (i = 0; i < WISP_ARP_TABLE_SIZE; i++) {
        struct wisp_arp_entry *e = &s->arp.e[i];
        if (e->state == WISP_ARP_PENDING && !wisp_time_before(now, e->stamp + WISP_ARP_RETRY_MS)) {
            struct wisp_netif *nif = wisp_netif_by_index(s, e->if_idx);
            if (e->tries >= WISP_ARP_MAX_TRIES || nif == NULL) {
                /* Give up: the host does not answer; its packets are lost. */
                WISP_CTR_INC(s, ARP_RESOLVE_FAIL);
                arp_clear(s, e);
                continue;
            }
            /* RFC 1122 §2.3.2.1: at most one request per second per address. */
            e->tries++;
            e->stamp = now;
            (void)arp_send_request(nif, wisp_eth_bcast, e->ip);
        } else if (e->state == WISP_ARP_STABLE && !wisp_time_before(now, e->stamp + WISP_ARP_MAX_AGE_MS)) {
            /* RFC 1122 §2.3.2.1: entries time out. */
            arp_clear(s, e);
        }
    }
    arp_rearm(s);
}

/* ------------------------------------------------------------ receive */

/* Parse a received ARP packet into b (RFC 826 "Packet Reception";
 * trailing padding ignored) and check it: false, counted, when it is
 * dropped. */
static bool arp_parse(struct wisp_netif *nif, const struct wisp_pbuf *p, uint8_t *b, uint16_t *op)
{
    struct wisp_stack *s = nif->stack;
    const uint8_t *sha = b + WISP_ARP_OFF_SHA;
    wisp_ip4_t spa;

    if (p->tot_len < WISP_ARP_LEN || wisp_pbuf_copy_out(p, b, WISP_ARP_LEN, 0) != WISP_ARP_LEN) {
        WISP_CTR_INC(s, ARP_DROP_SHORT);
        return false;
    }
    if (wisp_rd16(b + WISP_ARP_OFF_HTYPE) != WISP_ARP_HTYPE_ETH || b[WISP_ARP_OFF_HLEN] != WISP_ETH_ADDR_LEN) {
        WISP_CTR_INC(s, ARP_DROP_HW);
        return false;
    }
    if (wisp_rd16(b + WISP_ARP_OFF_PTYPE) != WISP_ETHTYPE_IP4 || b[WISP_ARP_OFF_PLEN] != WISP_ARP_PLEN_IP4) {
        WISP_CTR_INC(s, ARP_DROP_PROTO);
        return false;
    }
    *op = wisp_rd16(b + WISP_ARP_OFF_OP);
    if (*op != WISP_ARP_OP_REQUEST && *op != WISP_ARP_OP_REPLY) {
        WISP_CTR_INC(s, ARP_DROP_OP);
        return false;
    }
    spa = wisp_ip4_rd(b + WISP_ARP_OFF_SPA);
    /* The sender must be a unicast host; 0.0.0.0 only in an RFC 5227 §2.1.1
     * probe (a request), which creates and updates nothing. Our own MAC as
     * sender is our own packet looped back (or a spoof). */
    if ((sha[0] & WISP_ETH_ADDR_GROUP) != 0 || memcmp(sha, arp_zero_mac, WISP_ETH_ADDR_LEN) == 0 ||
        memcmp(sha, nif->hwaddr, WISP_ETH_ADDR_LEN) == 0 ||
        wisp_ip4_is_multicast(spa) || wisp_ip4_is_bcast(nif, spa) /* the limited one too; never 0 */ ||
        (spa == 0 && *op != WISP_ARP_OP_REQUEST)) {
        WISP_CTR_INC(s, ARP_DROP_SRC);
        return false;
    }
    if (*op == WISP_ARP_OP_REQUEST)
        WISP_CTR_INC(s, ARP_REQ_RX);
    else
        WISP_CTR_INC(s, ARP_REPLY_RX);
    return true;
}

void wisp_arp_input(struct wisp_netif *nif, struct wisp_pbuf *p, const uint8_t src_mac[WISP_ETH_ADDR_LEN])
{
    struct wisp_stack *s = nif->stack;
    struct wisp_arp_entry *e;
    uint8_t b[WISP_ARP_LEN];
    const uint8_t *sha = b + WISP_ARP_OFF_SHA;
    wisp_ip4_t spa, tpa;
    uint16_t op = 0;
    bool merged = false, for_us, changed = false, ok;
    WISP_CORE_ASSERT_OWNER(nif->stack);

    WISP_UNUSED(src_mac);
    WISP_CTR_INC(s, ARP_RX);

    /* ---- parse */
    ok = arp_parse(nif, p, b, &op);
    wisp_pbuf_free(p);
    p = NULL;
    if (!ok) {
        return;
    }
    spa = wisp_ip4_rd(b + WISP_ARP_OFF_SPA);
    tpa = wisp_ip4_rd(b + WISP_ARP_OFF_TPA);

    /* RFC 5227 §2.1.1: observers (an address being probed) see every
     * valid packet, whoever it is addressed to. */
    {
        struct wisp_arp_watch *w, *wnext;
        for (w = s->arp.watch; w != NULL; w = wnext) {
            wnext = w->next;
            w->fn(w->arg, nif, op, sha, spa, tpa);
        }
    }

    /* ---- act */
    if (nif->ip4.addr != 0 && spa == nif->ip4.addr) {
        /* Another host claims our address (sha differs from ours, checked
         * above). RFC 5227 §2.4 (b): defend with one announcement, at most
         * once per DEFEND_INTERVAL; never cache our own address. */
        uint32_t now = wisp_now(s);
        WISP_CTR_INC(s, ARP_CONFLICT);
        if (!s->arp.defended || !wisp_time_before(now, s->arp.defend_at + ARP_DEFEND_INTERVAL_MS)) {
            s->arp.defended = 1;
            s->arp.defend_at = now;
            (void)wisp_arp_announce(nif);
        }
        goto out;
    }

    /* RFC 826 "Packet Reception" merge rule: if the sender's protocol
     * address is in the table, update its hardware address. */
    e = (spa != 0) ? arp_find(s, nif->index, spa) : NULL;
    if (e != NULL) {
        merged = true;
        if (e->state != WISP_ARP_STATIC) {
            arp_resolved(nif, e, sha, WISP_ARP_STABLE);
            changed = true;
        }
    }

    for_us = (nif->ip4.addr != 0 && tpa == nif->ip4.addr);
    if (!for_us) {
        /* Not the target: only the merge update above applies. */
        if (!merged)
            WISP_CTR_INC(s, ARP_DROP_NOTFORUS);
        goto done;
    }
    if (op == WISP_ARP_OP_REPLY) {
        /* arp.h policy: a reply never creates an entry; we did not ask. */
        if (!merged)
            WISP_CTR_INC(s, ARP_DROP_UNSOLICITED);
        goto done;
    }
    /* RFC 826: "If the merge flag is false, add the triplet to the table";
     * the requester is about to talk to us. Probes (spa 0) add nothing, and
     * a pending entry with queued packets is never evicted for this. */
    if (!merged && spa != 0) {
        e = arp_alloc(s, false, nif->index, spa, WISP_ARP_STABLE);
        if (e != NULL) {
            memcpy(e->mac, sha, WISP_ETH_ADDR_LEN);
            changed = true;
        }
    }
    /* RFC 826: swap the fields, put ours in the sender fields, opcode reply,
     * and send it to the requester's hardware address (unicast). */
    (void)arp_send(nif, WISP_ARP_OP_REPLY, sha, nif->ip4.addr, spa, WISP_CTR_ARP_REPLY_TX);

done:
    if (changed)
        arp_rearm(s);
out:
    wisp_pbuf_free(p);
}

/* ------------------------------------------------------------ output */

wisp_err_t wisp_arp_output(struct wisp_netif *nif, struct wisp_pbuf *p, wisp_ip4_t next_hop)
{
    struct wisp_stack *s = nif->stack;
    struct wisp_arp_entry *e;
    uint8_t mac[WISP_ETH_ADDR_LEN];
    wisp_err_t err;
    WISP_CORE_ASSERT_OWNER(nif->stack);

    if (wisp_ip4_is_bcast(nif, next_hop)) /* limited or directed */
        return wisp_eth_output(nif, p, wisp_eth_bcast, WISP_ETHTYPE_IP4);
    if (wisp_ip4_is_multicast(next_hop)) {
        /* RFC 1112 §6.4: 01-00-5E-00-00-00 plus the low 23 bits of the group. */
        mac[0] = WISP_ETH_IP4_MCAST_0;
        mac[1] = WISP_ETH_IP4_MCAST_1;
        mac[2] = WISP_ETH_IP4_MCAST_2;
        mac[3] = (uint8_t)(wisp_ip4_octet(next_hop, 1) & 0x7fu);
        mac[4] = wisp_ip4_octet(next_hop, 2);
        mac[5] = wisp_ip4_octet(next_hop, 3);
        return wisp_eth_output(nif, p, mac, WISP_ETHTYPE_IP4);
    }
    if (next_hop == WISP_IP4_ANY)
        return WISP_ERR_VAL;

    e = arp_find(s, nif->index, next_hop);
    if (e != NULL && (e->state == WISP_ARP_STABLE || e->state == WISP_ARP_STATIC)) {
        memcpy(mac, e->mac, sizeof(mac));
        /* Use does not refresh the entry (it ages from its last ARP update),
         * but a stable entry in its last tenth of life is polled once with a
         * unicast request so it is renewed before it expires. */
        if (e->state == WISP_ARP_STABLE && e->tries == 0 && (wisp_now(s) - e->stamp) >= ARP_REFRESH_AGE_MS) {
            e->tries = 1;
            (void)arp_send_request(nif, mac, next_hop);
        }
        return wisp_eth_output(nif, p, mac, WISP_ETHTYPE_IP4);
    }
    if (e != NULL)
        return arp_enqueue(s, e, p);   /* pending: wait for the reply */

    if (!wisp_netif_is_usable(nif))
        return WISP_ERR_IF;
    /* Unknown: a pending entry, the packet queued, one request now. */
    e = arp_alloc(s, true, nif->index, next_hop, WISP_ARP_PENDING);
    if (e == NULL)
        return WISP_ERR_MEM;
    e->tries = 1;
    err = arp_enqueue(s, e, p);
    (void)arp_send_request(nif, wisp_eth_bcast, next_hop);   /* the timer retries on failure */
    arp_rearm(s);
    return err;
}

wisp_err_t wisp_arp_request(struct wisp_netif *nif, wisp_ip4_t ip)
{
    struct wisp_stack *s = nif->stack;
    WISP_CORE_ASSERT_OWNER(nif->stack);

    if (ip == WISP_IP4_ANY || ip == WISP_IP4_BCAST || wisp_ip4_is_multicast(ip))
        return WISP_ERR_VAL;
    /* Remember that we asked, so that the reply is not unsolicited. */
    if (arp_find(s, nif->index, ip) == NULL && ip != nif->ip4.addr) {
        struct wisp_arp_entry *e = arp_alloc(s, false, nif->index, ip, WISP_ARP_PENDING);
        if (e != NULL) {
            e->tries = 1;
            arp_rearm(s);
        }
    }
    return arp_send_request(nif, wisp_eth_bcast, ip);
}

wisp_err_t wisp_arp_announce(struct wisp_netif *nif)
{
    WISP_CORE_ASSERT_OWNER(nif->stack);

    if (nif->ip4.addr == 0)
        return WISP_ERR_VAL;
    /* RFC 5227 §3: an ARP request with sender and target IP both ours and
     * target hardware address zero, broadcast. */
    return arp_send(nif, WISP_ARP_OP_REQUEST, wisp_eth_bcast, nif->ip4.addr, nif->ip4.addr,
                    WISP_CTR_ARP_GRATUITOUS_TX);
}

wisp_err_t wisp_arp_probe(struct wisp_netif *nif, wisp_ip4_t ip)
{
    WISP_CORE_ASSERT_OWNER(nif->stack);

    if (ip == WISP_IP4_ANY || ip == WISP_IP4_BCAST || wisp_ip4_is_multicast(ip))
        return WISP_ERR_VAL;
    /* RFC 5227 §2.1.1: an ARP request, sender hardware address ours, sender
     * IP all zeroes, target hardware address all zeroes, target IP the
     * address being probed, broadcast. */
    return arp_send(nif, WISP_ARP_OP_REQUEST, wisp_eth_bcast, WISP_IP4_ANY, ip, WISP_CTR_ARP_REQ_TX);
}

void wisp_arp_watch_add(struct wisp_stack *s, struct wisp_arp_watch *w)
{
    struct wisp_arp_watch *q;
    WISP_CORE_ASSERT_OWNER(s);

    for (q = s->arp.watch; q != NULL; q = q->next)
        if (q == w)
            return;
    w->next = s->arp.watch;
    s->arp.watch = w;
}

void wisp_arp_watch_remove(struct wisp_stack *s, struct wisp_arp_watch *w)
{
    struct wisp_arp_watch **pp;
    WISP_CORE_ASSERT_OWNER(s);

    for (pp = &s->arp.watch; *pp != NULL; pp = &(*pp)->next) {
        if (*pp == w) {
            *pp = w->next;
            w->next = NULL;
            return;
        }
    }
}

/* ------------------------------------------------------------ management */

bool wisp_arp_lookup(struct wisp_stack *s, uint8_t if_idx, wisp_ip4_t ip, uint8_t mac[WISP_ETH_ADDR_LEN])
{
    const struct wisp_arp_entry *e = arp_find(s, if_idx, ip);
    WISP_CORE_ASSERT_OWNER(s);

    if (e == NULL || (e->state != WISP_ARP_STABLE && e->state != WISP_ARP_STATIC))
        return false;
    if (mac != NULL)
        memcpy(mac, e->mac, WISP_ETH_ADDR_LEN);
    return true;
}

wisp_err_t wisp_arp_add_static(struct wisp_netif *nif, wisp_ip4_t ip, const uint8_t mac[WISP_ETH_ADDR_LEN])
{
    struct wisp_stack *s = nif->stack;
    struct wisp_arp_entry *e;
    WISP_CORE_ASSERT_OWNER(nif->stack);

    if (ip == WISP_IP4_ANY || ip == WISP_IP4_BCAST || wisp_ip4_is_multicast(ip) ||
        (mac[0] & WISP_ETH_ADDR_GROUP) != 0)
        return WISP_ERR_VAL;
    e = arp_find(s, nif->index, ip);
    if (e == NULL) {
        e = arp_alloc(s, false, nif->index, ip, WISP_ARP_EMPTY);
        if (e == NULL)
            return WISP_ERR_MEM;
    }
    arp_resolved(nif, e, mac, WISP_ARP_STATIC); /* resolved by hand: its queue goes out */
    arp_rearm(s);
    return WISP_OK;
}

void wisp_arp_flush(struct wisp_stack *s, uint8_t if_idx)
{
    unsigned i;
    WISP_CORE_ASSERT_OWNER(s);

    for (i = 0; i < WISP_ARP_TABLE_SIZE; i++) {
        struct wisp_arp_entry *e = &s->arp.e[i];
        if (e->state != WISP_ARP_EMPTY && (if_idx == 0 || e->if_idx == if_idx))
            arp_clear(s, e);
    }
    arp_rearm(s);
}

unsigned wisp_arp_count(const struct wisp_stack *s)
{
    unsigned i, n = 0;
    WISP_CORE_ASSERT_OWNER(s);

    for (i = 0; i < WISP_ARP_TABLE_SIZE; i++)
        if (s->arp.e[i].state != WISP_ARP_EMPTY)
            n++;
    return n;
}
