/**
 * @file ip4_frag.c
 * IPv4 fragmentation of outgoing datagrams and reassembly of incoming
 * fragments (RFC 791 §3.2, RFC 815, RFC 1122 §3.3.2).
 *
 * Fragmentation: the payload is cut in slices of the largest multiple of 8
 * bytes that fits the MTU after the 20-byte header. Every fragment is a
 * fresh transmit POOL pbuf holding its header and a COPY of its slice. A
 * zero-copy REF into the caller's buffers is not safe here: the transmit
 * queue of wisp_netif_tx keeps frames by reference while the device is
 * busy (and copies only REF data), so fragments that point into the
 * caller's memory would have to outlive wisp_ip4_output, which does not
 * consume its packet. Copying costs one pass over the data on the rare
 * fragmented path and keeps ownership simple.
 *
 * Reassembly: received fragments are kept as they arrived (no copy), in
 * offset order, per datagram keyed by (src, dst, id, proto). Policy:
 *  - bounded memory: at most WISP_IP_REASS_MAX_DGRAMS datagrams and
 *    WISP_IP_REASS_MAX_PBUFS buffers held in all; when a new fragment would
 *    exceed a bound the OLDEST datagram is evicted (ip4.reass.evict), so a
 *    stream of junk fragments cannot lock out new traffic forever;
 *  - an exact duplicate (same offset, length and MF) is dropped alone
 *    (ip4.reass.dup): the simulated wire and real networks duplicate frames;
 *  - any other overlap drops the WHOLE datagram (ip4.reass.overlap). Trimming
 *    overlaps (RFC 791's "fill in" algorithm, RFC 815) lets an attacker
 *    choose which copy of the bytes wins, the classic way to slip a
 *    different transport header past a filter (RFC 1858 §4). RFC 5722 made
 *    "discard the whole datagram on any overlap" mandatory for IPv6 for
 *    that reason; legitimate senders never produce overlapping fragments,
 *    so the same rule is applied here;
 *  - a datagram that would end beyond 65535 bytes is dropped
 *    (ip4.reass.toobig, the "ping of death");
 *  - a non-last fragment whose length is 0 or not a multiple of 8 cannot
 *    come from RFC 791 fragmentation: the fragment is dropped
 *    (ip4.reass.badfrag);
 *  - tiny first fragment (RFC 1858 §3): the transport layers need their
 *    header contiguous in the first buffer. A completed datagram whose first
 *    buffer does not hold the IP header plus min(payload, 60) bytes (60 =
 *    the largest TCP header) is dropped (ip4.reass.badfrag). Legitimate
 *    first fragments carry at least MTU - IHL*4 rounded down to 8 bytes,
 *    i.e. >= 60 on any link with an MTU of 80 or more;
 *  - timeout WISP_IP_REASS_TIMEOUT_MS after the first fragment of a
 *    datagram arrived (RFC 791 §3.2 / RFC 1122 §3.3.2), one event timer
 *    armed for the earliest deadline (ip4.reass.timeout). RFC 792 allows
 *    (does not require) an ICMP time exceeded (code 1) when the first
 *    fragment was received; we do not send one.
 */
#define WISP_PRIVATE_ACCESS 1 /* library code: sees the private tier (wisp/arch.h) */
#include "wisp/stack.h"
#include "wisp/chksum.h"
#include "wisp/prot/ip4.h"
#include "wisp/prot/tcp.h"

/* Bytes after the IP header the transport layers want contiguous: the
 * largest TCP header (RFC 9293 §3.1: data offset <= 15 words). */
#define REASS_CONTIG_MIN WISP_TCP_MAX_HLEN

/* --------------------------------------------------------- fragmentation */

#if WISP_IP_FRAG
wisp_err_t wisp_ip4_frag(struct wisp_netif *nif, struct wisp_pbuf *p, const uint8_t *hdr, wisp_ip4_t next_hop)
{
    struct wisp_stack *s = nif->stack;
    uint16_t hlen = wisp_ip4_hdr_hlen(hdr);
    uint16_t ffield = wisp_rd16(hdr + WISP_IP4_OFF_FRAG);
    uint16_t base = (uint16_t)(ffield & WISP_IP4_OFFMASK); /* in 8-byte units */
    uint16_t total = p->tot_len;
    uint16_t maxdata, pos, n;
    uint8_t prio = wisp_dscp_prio((uint8_t)(hdr[WISP_IP4_OFF_TOS] >> 2));
    WISP_CORE_ASSERT_OWNER(s);

    /* We never send options, so the header is copied whole into every
     * fragment; a DF datagram must not be fragmented (RFC 791 §3.2). */
    if (hlen != WISP_IP4_HLEN || (ffield & WISP_IP4_FLAG_DF) != 0 || nif->mtu < hlen + 8u) {
        WISP_CTR_INC(s, IP4_DROP_DF);
        return WISP_ERR_VAL;
    }
    /* RFC 791 §3.2: every fragment but the last carries a multiple of 8
     * data octets; take as many as fit the MTU. */
    maxdata = (uint16_t)((nif->mtu - hlen) & ~7u);

    for (pos = 0; pos < total; pos = (uint16_t)(pos + n)) {
        struct wisp_pbuf *q, *r;
        uint16_t off, fo;
        uint8_t *h;
        bool last;
        wisp_err_t err;

        n = (uint16_t)WISP_MIN((uint32_t)maxdata, (uint32_t)total - pos);
        last = (uint32_t)pos + n == total;

        q = wisp_pbuf_alloc(s, WISP_LAYER_IP, n, WISP_PBUF_POOL);
        if (q == NULL) {
            WISP_CTR_INC(s, IP4_DROP_NOMEM);
            return WISP_ERR_MEM;
        }
        /* This fragment's slice of the payload, buffer by buffer. */
        off = pos;
        for (r = q; r != NULL; r = r->next) {
            (void)wisp_pbuf_copy_out(p, r->payload, r->len, off);
            off = (uint16_t)(off + r->len);
        }
        (void)wisp_pbuf_push(q, hlen); /* WISP_LAYER_IP headroom */
        h = q->payload;
        memcpy(h, hdr, hlen);
        /* RFC 791 §3.2 fragmentation procedure: total length of this
         * fragment, offset advanced by the data before it, MF set on all
         * but the last, which keeps the original MF. */
        wisp_wr16(h + WISP_IP4_OFF_LEN, (uint16_t)(hlen + n));
        fo = (uint16_t)((base + pos / 8u) & WISP_IP4_OFFMASK);
        fo |= last ? (uint16_t)(ffield & WISP_IP4_FLAG_MF) : (uint16_t)WISP_IP4_FLAG_MF;
        wisp_wr16(h + WISP_IP4_OFF_FRAG, fo);
        wisp_ip4_hdr_csum(h, hlen);
        q->prio = prio;

        err = wisp_ip4_link_output(nif, q, next_hop);
        wisp_pbuf_free(q); /* a queue that kept the fragment holds its own reference */
        if (err != WISP_OK) {
            return err;
        }
        WISP_CTR_INC(s, IP4_FRAG_TX);
    }
    return WISP_OK;
}
#else
wisp_err_t wisp_ip4_frag(struct wisp_netif *nif, struct wisp_pbuf *p, const uint8_t *hdr, wisp_ip4_t next_hop)
{
    WISP_CORE_ASSERT_OWNER(nif->stack);
    WISP_UNUSED(p);
    WISP_UNUSED(hdr);
    WISP_UNUSED(next_hop);
    WISP_CTR_INC(nif->stack, IP4_DROP_DF);
    return WISP_ERR_VAL;
}
#endif /* WISP_IP_FRAG */

/* ------------------------------------------------------------ reassembly */

#if WISP_IP_REASS

static uint32_t reass_deadline(const struct wisp_ip4_reass *r)
{
    return r->created + (uint32_t)WISP_IP_REASS_TIMEOUT_MS;
}

/* Free a datagram's fragments (those still held) and its slot. */
static void reass_free(struct wisp_stack *s, struct wisp_ip4_reass *r)
{
    unsigned i;
    for (i = 0; i < r->nfrags; i++) {
        wisp_pbuf_free(r->frag[i].p);
        r->frag[i].p = NULL;
    }
    s->ip4.reass_nbufs = (uint16_t)(s->ip4.reass_nbufs - r->nbufs);
    r->nfrags = 0;
    r->nbufs = 0;
    r->in_use = 0;
}

static void reass_timeout(struct wisp_stack *s, struct wisp_timer *t);
static struct wisp_ip4_reass *reass_oldest(struct wisp_stack *s, const struct wisp_ip4_reass *keep);

/* Arm the timer for the earliest deadline (that of the oldest datagram:
 * every deadline is its creation + the same timeout), or cancel it when
 * idle. */
static void reass_arm(struct wisp_stack *s)
{
    const struct wisp_ip4_reass *first = reass_oldest(s, NULL);
    uint32_t now, due;
    if (first == NULL) {
        wisp_timer_cancel(s, &s->ip4.reass_tmr);
        return;
    }
    due = reass_deadline(first);
    now = wisp_now(s);
    wisp_timer_arm(s, &s->ip4.reass_tmr, wisp_time_before(now, due) ? due - now : 0u, reass_timeout);
}

/* RFC 791 §3.2 / RFC 1122 §3.3.2: give up on datagrams whose timer ran out. */
static void reass_timeout(struct wisp_stack *s, struct wisp_timer *t)
{
    uint32_t now = wisp_now(s);
    unsigned i;
    WISP_UNUSED(t);
    for (i = 0; i < WISP_IP_REASS_MAX_DGRAMS; i++) {
        struct wisp_ip4_reass *r = &s->ip4.reass[i];
        if (r->in_use && !wisp_time_before(now, reass_deadline(r))) {
            WISP_CTR_INC(s, IP4_REASS_TIMEOUT);
            reass_free(s, r);
        }
    }
    reass_arm(s);
}

/* The oldest datagram in use other than keep, or NULL. */
static struct wisp_ip4_reass *reass_oldest(struct wisp_stack *s, const struct wisp_ip4_reass *keep)
{
    struct wisp_ip4_reass *old = NULL;
    unsigned i;
    for (i = 0; i < WISP_IP_REASS_MAX_DGRAMS; i++) {
        struct wisp_ip4_reass *r = &s->ip4.reass[i];
        if (r->in_use && r != keep && (old == NULL || wisp_time_before(r->created, old->created))) {
            old = r;
        }
    }
    return old;
}

/* Drop datagram r (when in use) and the fragment p, re-arm the timer. */
static struct wisp_pbuf *reass_abort(struct wisp_stack *s, struct wisp_ip4_reass *r, struct wisp_pbuf *p)
{
    if (r != NULL && r->in_use) {
        reass_free(s, r);
        reass_arm(s);
    }
    wisp_pbuf_free(p);
    return NULL;
}

/* All fragments present: [0, total) covered without gaps. */
static bool reass_complete(const struct wisp_ip4_reass *r)
{
    uint32_t pos = 0;
    unsigned i;
    if (!r->have_last || r->first_hlen == 0) {
        return false;
    }
    for (i = 0; i < r->nfrags; i++) {
        if (r->frag[i].off != pos) {
            return false;
        }
        pos = r->frag[i].end;
    }
    return pos == r->total;
}

/* Chain the fragments of a complete datagram and fix its header. */
static struct wisp_pbuf *reass_finish(struct wisp_stack *s, struct wisp_ip4_reass *r)
{
    struct wisp_pbuf *head = r->frag[0].p;
    uint16_t hlen = r->first_hlen;
    uint32_t need;
    unsigned i;
    uint16_t ffield;
    uint8_t *h;

    /* RFC 791 §3.1: a datagram is at most 65535 octets, header included
     * (each fragment was checked against its own header length; the first
     * fragment's may be longer). */
    if ((uint32_t)hlen + r->total > WISP_IP4_MAX_LEN) {
        WISP_CTR_INC(s, IP4_REASS_TOOBIG);
        return reass_abort(s, r, NULL);
    }
    /* The offset-0 fragment's header is still in front of its payload
     * (defensive: the push cannot fail). RFC 1858 §3 (tiny fragments) and
     * our contiguity contract: the first buffer must hold the transport
     * header. (On a drop the buffers are freed, pushed or not.) */
    need = (uint32_t)hlen + WISP_MIN(r->total, (uint32_t)REASS_CONTIG_MIN);
    if (wisp_pbuf_push(head, hlen) != WISP_OK || head->len < need) {
        WISP_CTR_INC(s, IP4_REASS_BADFRAG);
        return reass_abort(s, r, NULL);
    }
    for (i = 1; i < r->nfrags; i++) {
        wisp_pbuf_cat(head, r->frag[i].p); /* head takes over the reference */
        r->frag[i].p = NULL;
    }
    r->frag[0].p = NULL;
    (void)reass_abort(s, r, NULL); /* the slot, its buffers now in head */

    /* RFC 791 §3.2 reassembly: the first fragment's header becomes the
     * datagram's, with the total length of the whole, MF and offset clear
     * (DF kept), and a new checksum. */
    h = head->payload;
    wisp_wr16(h + WISP_IP4_OFF_LEN, (uint16_t)(hlen + r->total));
    ffield = wisp_rd16(h + WISP_IP4_OFF_FRAG);
    wisp_wr16(h + WISP_IP4_OFF_FRAG, (uint16_t)(ffield & (uint16_t)~(WISP_IP4_FLAG_MF | WISP_IP4_OFFMASK)));
    wisp_ip4_hdr_csum(h, hlen);
    WISP_CTR_INC(s, IP4_REASS_OK);
    return head;
}

/* How a fragment [off, end) relates to those held for its datagram. */
enum { REASS_FITS = 0, REASS_DUP, REASS_CLASH };
static int reass_overlap(const struct wisp_ip4_reass *r, uint32_t off, uint32_t end, bool mf)
{
    unsigned k;
    for (k = 0; k < r->nfrags; k++) {
        const struct wisp_ip4_frag_ref *f = &r->frag[k];
        /* An exact duplicate: drop just the copy. (The held fragments never
         * overlap one another, so a copy of one clashes with no other: one
         * pass finds either.) */
        if (f->off == off && f->end == end && f->last == (mf ? 0u : 1u)) {
            return REASS_DUP;
        }
        /* Any other overlap, a second different last fragment, data
         * beyond the known end: drop the whole datagram (RFC 5722's
         * reasoning, RFC 1858 §4; see the file comment). */
        if ((off < f->end && f->off < end) || (!mf && f->end > end)) {
            return REASS_CLASH;
        }
    }
    if (r->have_last && (!mf || end > r->total)) {
        return REASS_CLASH;
    }
    return REASS_FITS;
}

/* A new datagram under reassembly: a free slot, else the oldest evicted. */
static struct wisp_ip4_reass *reass_new(struct wisp_stack *s, wisp_ip4_t src, wisp_ip4_t dst, uint16_t id,
                                        uint8_t proto)
{
    struct wisp_ip4_reass *r = NULL;
    unsigned i;
    for (i = 0; i < WISP_IP_REASS_MAX_DGRAMS && r == NULL; i++) {
        if (!s->ip4.reass[i].in_use) {
            r = &s->ip4.reass[i];
        }
    }
    if (r == NULL) {
        r = reass_oldest(s, NULL);
        WISP_CTR_INC(s, IP4_REASS_EVICT);
        reass_free(s, r);
    }
    memset(r, 0, sizeof(*r));
    r->in_use = 1;
    r->src = src;
    r->dst = dst;
    r->id = id;
    r->proto = proto;
    r->created = wisp_now(s);
    return r;
}

struct wisp_pbuf *wisp_ip4_reass(struct wisp_stack *s, struct wisp_pbuf *p)
{
    const uint8_t *hdr = p->payload;
    uint16_t hlen = wisp_ip4_hdr_hlen(hdr);
    uint16_t ffield = wisp_rd16(hdr + WISP_IP4_OFF_FRAG);
    uint32_t off = (uint32_t)(ffield & WISP_IP4_OFFMASK) * 8u;
    uint32_t len = (uint32_t)wisp_rd16(hdr + WISP_IP4_OFF_LEN) - hlen; /* input checked tot >= hlen */
    uint32_t end = off + len;
    bool mf = (ffield & WISP_IP4_FLAG_MF) != 0;
    wisp_ip4_t src = wisp_ip4_rd(hdr + WISP_IP4_OFF_SRC);
    wisp_ip4_t dst = wisp_ip4_rd(hdr + WISP_IP4_OFF_DST);
    uint16_t id = wisp_rd16(hdr + WISP_IP4_OFF_ID);
    uint8_t proto = hdr[WISP_IP4_OFF_PROTO];
    unsigned nb = wisp_pbuf_clen(p);
    struct wisp_ip4_reass *r = NULL;
    struct wisp_ip4_reass *kill = NULL; /* the datagram a drop ends too */
    unsigned i, at, ctr;
    WISP_CORE_ASSERT_OWNER(s);

    /* Parse: find the datagram this fragment belongs to. */
    for (i = 0; i < WISP_IP_REASS_MAX_DGRAMS; i++) {
        struct wisp_ip4_reass *c = &s->ip4.reass[i];
        if (c->in_use && c->src == src && c->dst == dst && c->id == id && c->proto == proto) {
            r = c;
            break;
        }
    }

    /* RFC 791 §3.1: no datagram exceeds 65535 octets; a fragment reaching
     * past that is the "ping of death" -- drop the datagram it belongs to. */
    if (end > WISP_IP4_MAX_LEN - hlen) {
        ctr = WISP_CTR_IP4_REASS_TOOBIG;
        kill = r;
        goto drop;
    }
    /* RFC 791 §3.2: all fragments but the last carry a non-zero multiple of
     * 8 octets. */
    if (mf && (len == 0 || (len & 7u) != 0)) {
        ctr = WISP_CTR_IP4_REASS_BADFRAG;
        goto drop;
    }
    if (nb > WISP_IP_REASS_MAX_PBUFS) {
        ctr = WISP_CTR_IP4_DROP_NOMEM; /* can never fit the reassembly budget */
        goto drop;
    }

    if (r != NULL) {
        switch (reass_overlap(r, off, end, mf)) {
        case REASS_DUP:
            ctr = WISP_CTR_IP4_REASS_DUP;
            goto drop;
        case REASS_CLASH:
            ctr = WISP_CTR_IP4_REASS_OVERLAP;
            kill = r;
            goto drop;
        default:
            break;
        }
    } else {
        r = reass_new(s, src, dst, id, proto);
    }

    /* Buffer budget: evict the oldest other datagrams until the fragment
     * fits. When this datagram alone is too large for the budget it can
     * never complete: drop it. */
    while ((uint32_t)s->ip4.reass_nbufs + nb > WISP_IP_REASS_MAX_PBUFS) {
        struct wisp_ip4_reass *old = reass_oldest(s, r);
        if (old == NULL) {
            ctr = WISP_CTR_IP4_REASS_EVICT;
            kill = r;
            goto drop;
        }
        WISP_CTR_INC(s, IP4_REASS_EVICT);
        reass_free(s, old);
    }

    /* Act: keep the fragment (header hidden), sorted by offset. */
    if (off == 0) {
        r->first_hlen = (uint8_t)hlen;
    }
    (void)wisp_pbuf_pop(p, hlen); /* input checked hlen <= p->len */
    for (at = r->nfrags; at > 0 && r->frag[at - 1u].off > off; at--) {
        r->frag[at] = r->frag[at - 1u];
    }
    r->frag[at].p = p;
    r->frag[at].off = (uint16_t)off;
    r->frag[at].end = (uint16_t)end;
    r->frag[at].last = mf ? 0u : 1u;
    r->nfrags++;
    r->nbufs = (uint16_t)(r->nbufs + nb);
    s->ip4.reass_nbufs = (uint16_t)(s->ip4.reass_nbufs + nb);
    if (!mf) {
        r->have_last = 1;
        r->total = end;
    }

    if (reass_complete(r)) {
        return reass_finish(s, r);
    }
    if (!wisp_timer_armed(&s->ip4.reass_tmr)) {
        reass_arm(s);
    }
    return NULL;
drop: /* the fragment (and, when kill is set, its datagram) */
    WISP_CTR_INC_ID(s, ctr);
    return reass_abort(s, kill, p);
}

void wisp_ip4_deinit(struct wisp_stack *s)
{
    unsigned i;
    WISP_CORE_ASSERT_OWNER(s);
    for (i = 0; i < WISP_IP_REASS_MAX_DGRAMS; i++) {
        if (s->ip4.reass[i].in_use) {
            reass_free(s, &s->ip4.reass[i]);
        }
    }
    wisp_timer_cancel(s, &s->ip4.reass_tmr);
}

#else /* !WISP_IP_REASS */

struct wisp_pbuf *wisp_ip4_reass(struct wisp_stack *s, struct wisp_pbuf *p)
{
    WISP_CORE_ASSERT_OWNER(s);
    WISP_CTR_INC(s, IP4_REASS_BADFRAG);
    wisp_pbuf_free(p);
    return NULL;
}

void wisp_ip4_deinit(struct wisp_stack *s)
{
    WISP_CORE_ASSERT_OWNER(s);
    WISP_UNUSED(s);
}

#endif /* WISP_IP_REASS */
