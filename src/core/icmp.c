/**
 * @file icmp.c
 * ICMP for IPv4 (RFC 792, RFC 1122 §3.2.2): answers echo requests (in place
 * when the received buffers are not shared), hands echo replies to a ping
 * application, validates received error messages and hands them to the
 * transport protocol of the quoted datagram (RFC 1122 §3.2.2.1, RFC 5927
 * §4.1; source quench and redirect are ignored and counted), keeps the
 * per-stack path MTU cache (RFC 1191), and originates destination
 * unreachable messages under the RFC 1122 §3.2.2 suppression rules and a
 * token-bucket rate limit (RFC 1812 §4.3.2.8) refilled lazily from the
 * stack clock (no timer).
 *
 * Convention shared with the transport layers: a datagram handed to
 * wisp_icmp_dest_unreach() is the transport part (IP header hidden), and its
 * IP header (ip->hlen bytes) still sits in front of the payload in the first
 * buffer, so wisp_pbuf_push(p, ip->hlen) makes it visible again.
 *
 * Size of the quotation in our errors: the original IP header plus the first
 * 8 bytes of its payload, exactly as RFC 792 specifies. RFC 1812 §4.3.2.3
 * allows quoting more (up to 576 bytes in all) but that applies to routers;
 * the RFC 792 minimum is all a host's peer needs (ports / ICMP id) and keeps
 * the message in one small RAM buffer.
 */
#define WISP_PRIVATE_ACCESS 1 /* library code: sees the private tier (wisp/arch.h) */
#include "wisp/stack.h"
#include "wisp/chksum.h"
#include "wisp/prot/icmp.h"
#include "wisp/prot/ip4.h"
#include "wisp/prot/tcp.h"

/* One token, in the milli-tokens of the bucket. */
#define ICMP_TOKEN_MT 1000u
#define ICMP_BUCKET_MT ((uint32_t)WISP_ICMP_ERR_BURST * ICMP_TOKEN_MT)

/* ----------------------------------------------------------------- helpers */

/* True for ICMP types that are queries/informational rather than errors.
 * RFC 1122 §3.2.2: no error is sent about an ICMP error message, but errors
 * about queries are allowed. Unknown types count as errors (the safe side). */
static bool icmp_type_is_query(uint8_t type)
{
    /* 0/8 echo reply/echo (RFC 792), 9/10 router advertisement/solicitation
     * (RFC 1256), 13/14 timestamp (reply), 15/16 information request/reply
     * (RFC 792), 17/18 address mask request/reply (RFC 950). */
    return type <= 18u && ((0x7e701u >> type) & 1u) != 0;
}

/* True when a source address "defines a single host": not zero, not a
 * (limited or directed) broadcast, not multicast, not class E, and not
 * loopback unless it arrived on the loopback interface. RFC 1122 §3.2.2 (the
 * error-suppression list) and §3.2.1.3 (the address forms). */
static bool icmp_src_is_unicast(const struct wisp_ip_info *ip)
{
    wisp_ip4_t a = wisp_ipaddr_ip4(&ip->src);

    /* 0.0.0.0; multicast (224/4), class E (240/4) and the limited
     * broadcast (in 240/4): a first octet of 224 or more */
    if (a == WISP_IP4_ANY || wisp_ip4_octet(a, 0) >= 224u) {
        return false;
    }
    if (ip->nif != NULL) {
        if (wisp_ip4_is_bcast(ip->nif, a)) {
            return false;
        }
        if (wisp_ip4_is_loopback(a) && (ip->nif->flags & WISP_NETIF_F_LOOPBACK) == 0) {
            return false; /* RFC 1122 §3.2.1.3 (g): 127/8 never from outside */
        }
    }
    return true;
}

/* Refill the error bucket from the time elapsed since the last refill and
 * take one token. RFC 1812 §4.3.2.8 / RFC 1122 §3.2.2: rate-limit errors. */
static bool icmp_take_token(struct wisp_stack *s)
{
    struct wisp_icmp *ic = &s->icmp;
    uint32_t now = wisp_now(s);
    uint32_t elapsed = now - ic->last_refill; /* wraps correctly */

    /* WISP_ICMP_ERR_RATE per second = that many milli-tokens per ms. The
     * comparison avoids an overflow of elapsed * rate after long idle. */
    if (elapsed >= ICMP_BUCKET_MT / (uint32_t)WISP_ICMP_ERR_RATE) {
        ic->tokens_mt = ICMP_BUCKET_MT;
    } else {
        ic->tokens_mt += elapsed * (uint32_t)WISP_ICMP_ERR_RATE;
        if (ic->tokens_mt > ICMP_BUCKET_MT) {
            ic->tokens_mt = ICMP_BUCKET_MT;
        }
    }
    ic->last_refill = now;
    if (ic->tokens_mt < ICMP_TOKEN_MT) {
        return false;
    }
    ic->tokens_mt -= ICMP_TOKEN_MT;
    return true;
}

/* True when every buffer of the chain is ours alone and the first one is
 * writable with the ICMP type/code/checksum words in it. */
static bool icmp_can_reuse(const struct wisp_pbuf *p)
{
    const struct wisp_pbuf *q;

    if (p->kind != WISP_PBUF_RAM && p->kind != WISP_PBUF_POOL) {
        return false;
    }
    if (p->len < 4u) {
        return false;
    }
    for (q = p; q != NULL; q = q->next) {
        if (q->ref != 1u) {
            return false;
        }
    }
    return true;
}

/* ------------------------------------------------------------ path MTU */

#if WISP_PMTU

/* RFC 1191 §7: the plateau table, for a "fragmentation needed" without a
 * next-hop MTU (routers older than RFC 1191). */
static const uint16_t icmp_plateaus[] = { 32000u, 17914u, 8166u, 4352u, 2002u, 1492u, 1006u, 508u, 296u, 68u };

/* The largest plateau below len (RFC 1191 §5: "the largest plateau value
 * that is less than the Total Length field of the returned datagram"). */
static uint16_t icmp_plateau_below(uint16_t len)
{
    unsigned i;
    for (i = 0; i < WISP_ARRAY_SIZE(icmp_plateaus); i++) {
        if (icmp_plateaus[i] < len) {
            return icmp_plateaus[i];
        }
    }
    return 68u;
}

static struct wisp_pmtu_entry *pmtu_find(struct wisp_stack *s, wisp_ip4_t dst)
{
    unsigned i;
    for (i = 0; i < WISP_PMTU_CACHE_SIZE; i++) {
        struct wisp_pmtu_entry *e = &s->icmp.pmtu[i];
        if (e->dst != WISP_IP4_ANY && e->dst == dst) {
            if (!wisp_time_before(wisp_now(s), e->expire)) {
                /* RFC 1191 §6.3: an aged estimate goes back to the
                 * first-hop MTU (a later "too big" lowers it again). */
                e->dst = WISP_IP4_ANY;
                WISP_CTR_INC(s, ICMP_PMTU_EXPIRED);
                return NULL;
            }
            return e;
        }
    }
    return NULL;
}

uint16_t wisp_pmtu_get(struct wisp_stack *s, wisp_ip4_t dst, bool *nodf)
{
    struct wisp_pmtu_entry *e = pmtu_find(s, dst);
    WISP_CORE_ASSERT_OWNER(s);
    if (nodf != NULL) {
        *nodf = e != NULL && e->nodf != 0;
    }
    return e != NULL ? e->mtu : 0u;
}

uint16_t wisp_pmtu_lower(struct wisp_stack *s, wisp_ip4_t dst, uint16_t mtu, bool blackhole)
{
    struct wisp_pmtu_entry *e = pmtu_find(s, dst);
    struct wisp_netif *nif;
    uint16_t cur;
    bool nodf = false;
    unsigned i;
    WISP_CORE_ASSERT_OWNER(s);

    if (e != NULL) {
        cur = e->mtu;
    } else {
        nif = wisp_ip4_route(s, dst);
        cur = nif != NULL ? nif->mtu : 0xffffu;
    }
    if (mtu < WISP_PMTU_MIN) {
        /* RFC 1191 §3 floor (68) raised to WISP_PMTU_MIN (opt.h): below it
         * we stop setting DF, so routers fragment (RFC 5927 §7.3 attack of
         * a forged tiny MTU gets segments of WISP_PMTU_MIN at worst). */
        mtu = (uint16_t)WISP_PMTU_MIN;
        nodf = !blackhole;
        WISP_CTR_INC(s, ICMP_PMTU_CLAMPED);
    }
    /* RFC 1191 §3: a host MUST NOT raise its estimate on a "too big". */
    if (mtu >= cur && !(nodf && e != NULL && !e->nodf && mtu == cur)) {
        return 0;
    }
    if (e == NULL) {
        /* a free entry, else the one that expires first */
        e = &s->icmp.pmtu[0];
        for (i = 0; i < WISP_PMTU_CACHE_SIZE; i++) {
            struct wisp_pmtu_entry *c = &s->icmp.pmtu[i];
            if (c->dst == WISP_IP4_ANY) {
                e = c;
                break;
            }
            if (wisp_time_before(c->expire, e->expire)) {
                e = c;
            }
        }
    }
    e->dst = dst;
    e->mtu = mtu;
    e->nodf = nodf ? 1u : 0u;
    e->blackhole = blackhole ? 1u : 0u;
    e->expire = wisp_now(s) + (blackhole ? (uint32_t)WISP_PMTU_PROBE_MS : (uint32_t)WISP_PMTU_AGE_MS);
    return mtu;
}

#else /* !WISP_PMTU: no cache; every path has the interface MTU */

uint16_t wisp_pmtu_get(struct wisp_stack *s, wisp_ip4_t dst, bool *nodf)
{
    WISP_CORE_ASSERT_OWNER(s);
    WISP_UNUSED(s);
    WISP_UNUSED(dst);
    if (nodf != NULL) {
        *nodf = false;
    }
    return 0u;
}

uint16_t wisp_pmtu_lower(struct wisp_stack *s, wisp_ip4_t dst, uint16_t mtu, bool blackhole)
{
    WISP_CORE_ASSERT_OWNER(s);
    WISP_UNUSED(s);
    WISP_UNUSED(dst);
    WISP_UNUSED(mtu);
    WISP_UNUSED(blackhole);
    return 0u;
}

#endif /* WISP_PMTU */

/* ---------------------------------------------------------- errors (input) */

/* An ICMP error (destination unreachable, source quench, redirect, time
 * exceeded, parameter problem): validate the quotation and hand it to the
 * transport protocol that sent the quoted datagram (RFC 1122 §3.2.2.1,
 * §4.1.3.3, §4.2.3.9; RFC 5927 §4.1). Every drop is counted. Does not
 * consume p. */
static void icmp_error_input(struct wisp_stack *s, struct wisp_pbuf *p, const struct wisp_ip_info *ip,
                             const uint8_t *hdr)
{
    uint8_t q[WISP_IP4_MAX_HLEN + WISP_ICMP_QUOTE_DATA];
    struct wisp_icmp_err e;
    uint16_t qhl, qfrag;

    /* RFC 6633 §2 (updating RFC 1122 §4.2.3.9): source quench MUST be
     * silently ignored. */
    if (hdr[WISP_ICMP_OFF_TYPE] == WISP_ICMP_SOURCE_QUENCH) {
        WISP_CTR_INC(s, ICMP_QUENCH_IGNORED);
        return;
    }
    /* RFC 1122 §3.2.2.2 lets a host update its route cache from a
     * redirect; wisp keeps no route cache (one gateway per interface), so
     * redirects are ignored (as with Linux accept_redirects=0). */
    if (hdr[WISP_ICMP_OFF_TYPE] == WISP_ICMP_REDIRECT) {
        WISP_CTR_INC(s, ICMP_REDIRECT_IGNORED);
        return;
    }
    /* An error sent to a broadcast or multicast address is not about a
     * datagram of ours (RFC 1122 §3.2.2: errors are never sent to those). */
    if (ip->bcast || ip->mcast) {
        WISP_CTR_INC(s, ICMP_ERR_DROP_BCAST);
        return;
    }
    /* RFC 792 / RFC 5927 §4.1: the quotation holds the internet header and
     * at least the first 64 bits of the datagram (the ports; TCP's
     * sequence number). */
    if (p->tot_len < WISP_ICMP_HLEN + WISP_IP4_HLEN + WISP_ICMP_QUOTE_DATA) {
        WISP_CTR_INC(s, ICMP_ERR_DROP_SHORT);
        return;
    }
    /* the quotation, as much of it as q holds (the checks below read only
     * bytes the lengths show were there) */
    (void)wisp_pbuf_copy_out(p, q, sizeof(q), WISP_ICMP_HLEN);
    qhl = wisp_ip4_hdr_hlen(q);
    if (wisp_ip4_hdr_version(q) != WISP_IP4_VERSION || qhl < WISP_IP4_HLEN) {
        WISP_CTR_INC(s, ICMP_ERR_DROP_QUOTE);
        return;
    }
    if (p->tot_len < WISP_ICMP_HLEN + qhl + WISP_ICMP_QUOTE_DATA) {
        WISP_CTR_INC(s, ICMP_ERR_DROP_SHORT);
        return;
    }
    /* A non-initial fragment carries no transport header to match. */
    qfrag = wisp_rd16(&q[WISP_IP4_OFF_FRAG]);
    if ((qfrag & WISP_IP4_OFFMASK) != 0) {
        WISP_CTR_INC(s, ICMP_ERR_DROP_QUOTE);
        return;
    }
    memset(&e, 0, sizeof(e));
    e.type = hdr[WISP_ICMP_OFF_TYPE];
    e.code = hdr[WISP_ICMP_OFF_CODE];
    e.reporter = wisp_ipaddr_ip4(&ip->src);
    e.src = wisp_ip4_rd(&q[WISP_IP4_OFF_SRC]);
    e.dst = wisp_ip4_rd(&q[WISP_IP4_OFF_DST]);
    e.qtot = wisp_rd16(&q[WISP_IP4_OFF_LEN]);
    e.df = (qfrag & WISP_IP4_FLAG_DF) != 0 ? 1u : 0u;
    /* the quoted transport header: TCP and UDP put the ports at the same
     * offsets (RFC 9293 §3.1, RFC 768); TCP's sequence number follows */
    {
        const uint8_t *t = q + qhl; /* (a pointer: GCC then merges the byte loads) */
        e.sport = wisp_rd16(t + WISP_TCP_OFF_SPORT);
        e.dport = wisp_rd16(t + WISP_TCP_OFF_DPORT);
        e.seq = wisp_rd32(t + WISP_TCP_OFF_SEQ);
    }
    /* RFC 5927 §4.1: the quoted datagram must be one we sent. */
    if (!wisp_ip4_is_local(s, e.src)) {
        WISP_CTR_INC(s, ICMP_ERR_DROP_NOTOURS);
        return;
    }

    if (e.type == WISP_ICMP_DEST_UNREACH && e.code == WISP_ICMP_UNREACH_NEEDFRAG) {
        /* RFC 1191 §4: "fragmentation needed and DF set" about a datagram
         * we sent without DF is forged or corrupt (RFC 5927 §7.2 checks). */
        if (!WISP_PMTU) {
            WISP_CTR_INC(s, ICMP_PMTU_DROP_OFF);
            return;
        }
        if (!e.df) {
            WISP_CTR_INC(s, ICMP_PMTU_DROP_NODF);
            return;
        }
#if WISP_PMTU
        e.mtu = wisp_rd16(&hdr[WISP_ICMP_OFF_MTU]); /* RFC 1191 §4: low 16 bits of the unused field */
        if (e.mtu == 0) {
            e.mtu = icmp_plateau_below(e.qtot); /* RFC 1191 §5 / §7 */
        }
#endif
        /* The datagram the router refused was larger than its next hop
         * (RFC 1191 §4); a value that would have let it pass is bogus. */
        if (e.mtu >= e.qtot) {
            WISP_CTR_INC(s, ICMP_PMTU_DROP_BOGUS);
            return;
        }
    }

    switch (q[WISP_IP4_OFF_PROTO]) {
#if WISP_TCP
    case WISP_IP4_PROTO_TCP:
        wisp_tcp_icmp_err(s, &e);
        return;
#endif
#if WISP_UDP
    case WISP_IP4_PROTO_UDP:
        wisp_udp_icmp_err(s, &e);
        return;
#endif
    case WISP_IP4_PROTO_ICMP:
        /* about one of our echo requests: the ping application only
         * counts its replies; nothing to report */
        WISP_CTR_INC(s, ICMP_ERR_ICMP);
        return;
    default:
        WISP_CTR_INC(s, ICMP_ERR_DROP_PROTO);
        return;
    }
}

/* ------------------------------------------------------------------- input */

/* Send the ICMP message q, whose first 8 bytes are the header h (type,
 * code, the type's 32-bit word; the checksum is filled in here), from src
 * (NULL: the outgoing interface's address) to dst; frees q. One path for
 * echo replies, errors and echo requests. */
static wisp_err_t icmp_send(struct wisp_stack *s, struct wisp_pbuf *q, uint8_t *h, const wisp_ipaddr_t *src,
                            const wisp_ipaddr_t *dst, uint8_t ttl, uint8_t tos)
{
    wisp_err_t err;

    /* RFC 792: the checksum is the one's complement of the one's complement
     * sum of the whole ICMP message, computed with the checksum field 0. */
    wisp_wr16(&h[WISP_ICMP_OFF_CSUM], 0);
    (void)wisp_pbuf_copy_in(q, h, WISP_ICMP_HLEN, 0);
    wisp_wr16(&h[WISP_ICMP_OFF_CSUM], (uint16_t)~wisp_pbuf_chksum(q, 0, q->tot_len));
    (void)wisp_pbuf_copy_in(q, &h[WISP_ICMP_OFF_CSUM], 2, WISP_ICMP_OFF_CSUM);
    err = wisp_ip_output(s, q, src, dst, ttl, tos, WISP_IP4_PROTO_ICMP, false);
    if (err == WISP_OK) {
        WISP_CTR_INC(s, ICMP_TX);
    }
    wisp_pbuf_free(q);
    return err;
}

/* Answer an echo request (RFC 792 "Echo or Echo Reply Message",
 * RFC 1122 §3.2.2.6); hdr is its header. Does not consume p. */
static void icmp_echo_reply(struct wisp_stack *s, struct wisp_pbuf *p, const struct wisp_ip_info *ip, uint8_t *hdr)
{
    struct wisp_pbuf *r;

    WISP_CTR_INC(s, ICMP_ECHO_RX);

    /* RFC 1122 §3.2.2.6: an echo request to a broadcast or multicast address
     * MAY be silently discarded; we do (like Linux's default
     * icmp_echo_ignore_broadcasts=1), which also avoids smurf amplification. */
    if (ip->bcast || ip->mcast) {
        WISP_CTR_INC(s, ICMP_DROP_BCAST);
        return;
    }

    if (icmp_can_reuse(p)) {
        r = p; /* reply in place: no copy */
        wisp_pbuf_ref(r);
    } else {
        r = wisp_pbuf_clone(s, WISP_LAYER_IP, p);
        if (r == NULL) {
            WISP_CTR_INC(s, ICMP_DROP_NOMEM);
            return;
        }
    }
    r->flags = 0; /* the reply is unicast, whatever the request's link flags */

    /* RFC 792: the reply is the request with the type changed to 0; the
     * identifier, sequence number and data are returned unchanged (the code
     * is kept as received, as Linux does). The checksum is computed afresh
     * (always exact: no RFC 1624 §3 0x0000 / 0xFFFF ambiguity).
     * RFC 1122 §3.2.2.6: the reply's source is the specific destination of
     * the request; the TOS is returned unchanged (data and options other
     * than those are not echoed: IP builds a fresh option-less header). */
    hdr[WISP_ICMP_OFF_TYPE] = (uint8_t)WISP_ICMP_ECHO_REPLY;
    if (icmp_send(s, r, hdr, &ip->dst, &ip->src, 0, ip->tos) == WISP_OK) {
        WISP_CTR_INC(s, ICMP_ECHO_REPLY_TX);
    }
}

void wisp_icmp_input(struct wisp_stack *s, struct wisp_pbuf *p, const struct wisp_ip_info *ip)
{
    uint8_t hdr[WISP_ICMP_HLEN];
    WISP_CORE_ASSERT_OWNER(s);

    WISP_CTR_INC(s, ICMP_RX);

    /* RFC 792: every message has at least the 8-byte header. */
    if (p->tot_len < WISP_ICMP_HLEN) {
        WISP_CTR_INC(s, ICMP_DROP_SHORT);
        wisp_pbuf_free(p);
        return;
    }
    /* RFC 792: the checksum covers the whole ICMP message; RFC 1122 §3.2.2:
     * messages with a bad checksum are discarded silently. */
    if (wisp_pbuf_chksum(p, 0, p->tot_len) != 0xFFFFu) {
        WISP_CTR_INC(s, ICMP_DROP_CHKSUM);
        wisp_pbuf_free(p);
        return;
    }
    (void)wisp_pbuf_copy_out(p, hdr, WISP_ICMP_HLEN, 0);

    switch (hdr[WISP_ICMP_OFF_TYPE]) {
    case WISP_ICMP_ECHO:
        icmp_echo_reply(s, p, ip, hdr);
        wisp_pbuf_free(p);
        return;

    case WISP_ICMP_ECHO_REPLY:
        WISP_CTR_INC(s, ICMP_ECHO_REPLY_RX);
        if (s->icmp.echo_cb != NULL) {
            /* the callee owns p (ICMP header visible) */
            s->icmp.echo_cb(s->icmp.echo_arg, ip, wisp_rd16(&hdr[WISP_ICMP_OFF_ID]),
                              wisp_rd16(&hdr[WISP_ICMP_OFF_SEQ]), p);
        } else {
            wisp_pbuf_free(p);
        }
        return;

    case WISP_ICMP_DEST_UNREACH:
    case WISP_ICMP_SOURCE_QUENCH:
    case WISP_ICMP_REDIRECT:
    case WISP_ICMP_TIME_EXCEEDED:
    case WISP_ICMP_PARAM_PROBLEM:
        WISP_CTR_INC(s, ICMP_ERR_RX);
        icmp_error_input(s, p, ip, hdr);
        wisp_pbuf_free(p);
        return;

    default:
        /* RFC 1122 §3.2.2: an unknown type MUST be silently discarded. */
        WISP_CTR_INC(s, ICMP_DROP_TYPE);
        wisp_pbuf_free(p);
        return;
    }
}

/* ------------------------------------------------------ destination unreach */

/* The body of wisp_icmp_dest_unreach, with p's IP header (hlen bytes,
 * contiguous: IP input checked it) visible in front of the transport part. */
static void icmp_error_send(struct wisp_stack *s, struct wisp_pbuf *p, const struct wisp_ip_info *ip, uint8_t code)
{
    const uint8_t *iph = p->payload;
    uint16_t hlen = ip->hlen;
    uint16_t qlen;
    struct wisp_pbuf *q;
    uint8_t h[WISP_ICMP_HLEN];
    int t = wisp_pbuf_get_u8(p, hlen);

    /* RFC 1122 §3.2.2: an ICMP error MUST NOT be sent about
     *  - an ICMP error message (or one too short to tell its type),
     *  - a datagram destined to an IP broadcast or multicast address,
     *  - a datagram sent as a link-layer broadcast or multicast,
     *  - a non-initial fragment,
     *  - a datagram whose source does not define a single host. */
    if ((ip->proto == WISP_IP4_PROTO_ICMP && (t < 0 || !icmp_type_is_query((uint8_t)t))) || ip->bcast ||
        ip->mcast || (p->flags & (WISP_PBUF_F_BCAST | WISP_PBUF_F_MCAST)) != 0 ||
        (wisp_rd16(&iph[WISP_IP4_OFF_FRAG]) & WISP_IP4_OFFMASK) != 0 || !icmp_src_is_unicast(ip)) {
        WISP_CTR_INC(s, ICMP_ERR_SUPPRESSED);
        return;
    }
    /* RFC 1812 §4.3.2.8, RFC 1122 §3.2.2: limit the rate of errors. */
    if (!icmp_take_token(s)) {
        WISP_CTR_INC(s, ICMP_ERR_RATELIMIT);
        return;
    }

    /* RFC 792: IP header + first 64 bits of the original data (less when the
     * datagram carried less). */
    qlen = (uint16_t)WISP_MIN(p->tot_len, hlen + WISP_ICMP_QUOTE_DATA);
    q = wisp_pbuf_alloc(s, WISP_LAYER_IP, (uint16_t)(WISP_ICMP_HLEN + qlen), WISP_PBUF_RAM);
    if (q == NULL) {
        WISP_CTR_INC(s, ICMP_DROP_NOMEM);
        return;
    }
    (void)wisp_pbuf_copy_out(p, q->payload + WISP_ICMP_HLEN, qlen, 0);
    h[WISP_ICMP_OFF_TYPE] = (uint8_t)WISP_ICMP_DEST_UNREACH;
    h[WISP_ICMP_OFF_CODE] = code;
    wisp_wr16(&h[WISP_ICMP_OFF_ID], 0); /* RFC 792: unused, zero */
    /* RFC 1191 §4: next-hop MTU in the low 16 bits */
    wisp_wr16(&h[WISP_ICMP_OFF_MTU], (code == WISP_ICMP_UNREACH_NEEDFRAG && ip->nif != NULL) ? ip->nif->mtu : 0u);

    /* Sent from the address the datagram was sent to (a unicast address of
     * ours, broadcasts were excluded above), with the default TOS
     * (RFC 1349 §5.1: ICMP errors use TOS 0) and TTL. */
    if (icmp_send(s, q, h, &ip->dst, &ip->src, 0, 0) == WISP_OK) {
        WISP_CTR_INC(s, ICMP_ERR_TX);
    }
}

void wisp_icmp_dest_unreach(struct wisp_stack *s, struct wisp_pbuf *p, const struct wisp_ip_info *ip,
                            uint8_t code)
{
    uint16_t hlen = ip->hlen;
    WISP_CORE_ASSERT_OWNER(s);

    /* The IP header sits hidden in front of the transport part. */
    if (hlen < WISP_IP4_HLEN || hlen > WISP_IP4_MAX_HLEN || wisp_pbuf_push(p, hlen) != WISP_OK) {
        WISP_CTR_INC(s, ICMP_ERR_SUPPRESSED); /* nothing to quote */
        return;
    }
    icmp_error_send(s, p, ip, code);
    (void)wisp_pbuf_pop(p, hlen);
}

/* ------------------------------------------------------------ echo request */

wisp_err_t wisp_icmp_echo_request(struct wisp_stack *s, wisp_ip4_t dst, uint16_t id, uint16_t seq,
                                  uint16_t len, uint8_t ttl)
{
    struct wisp_pbuf *q, *b;
    uint16_t mlen, i = 0, k;
    uint8_t hdr[WISP_ICMP_HLEN];
    wisp_ipaddr_t to;
    WISP_CORE_ASSERT_OWNER(s);

    /* An IP datagram is at most 65535 bytes (RFC 791): 20 of header. */
    if ((uint32_t)len + WISP_ICMP_HLEN + WISP_IP4_HLEN > WISP_IP4_MAX_LEN) {
        return WISP_ERR_VAL;
    }
    mlen = (uint16_t)(WISP_ICMP_HLEN + len);
    if ((uint32_t)mlen + WISP_LAYER_IP <= WISP_PBUF_BLOCK_SIZE) {
        q = wisp_pbuf_alloc(s, WISP_LAYER_IP, mlen, WISP_PBUF_RAM);
    } else {
        q = wisp_pbuf_alloc(s, WISP_LAYER_IP, mlen, WISP_PBUF_POOL);
    }
    if (q == NULL) {
        return WISP_ERR_MEM;
    }

    /* Data: byte i of the payload is (uint8_t)i, easy to recognise and to
     * verify at any offset (a reply's data must match it). */
    k = WISP_ICMP_HLEN;
    for (b = q; b != NULL; b = b->next) {
        while (k < b->len) {
            b->payload[k++] = (uint8_t)i++;
        }
        k = 0;
    }

    /* RFC 792 "Echo or Echo Reply Message": type 8, code 0, id, seq. */
    hdr[WISP_ICMP_OFF_TYPE] = (uint8_t)WISP_ICMP_ECHO;
    hdr[WISP_ICMP_OFF_CODE] = 0;
    wisp_wr16(&hdr[WISP_ICMP_OFF_ID], id);
    wisp_wr16(&hdr[WISP_ICMP_OFF_SEQ], seq);
    to = wisp_ipaddr4(dst);
    return icmp_send(s, q, hdr, NULL, &to, ttl, 0);
}

void wisp_icmp_set_echo_cb(struct wisp_stack *s, wisp_icmp_echo_fn fn, void *arg)
{
    WISP_CORE_ASSERT_OWNER(s);
    s->icmp.echo_cb = fn;
    s->icmp.echo_arg = arg;
}

void wisp_icmp_init(struct wisp_stack *s)
{
    /* no echo callback, an empty PMTU cache: s->icmp is zeroed by
     * wisp_stack_init */
    s->icmp.tokens_mt = ICMP_BUCKET_MT; /* start with a full burst */
    s->icmp.last_refill = wisp_now(s);
}

void *wisp_icmp_echo_arg(const struct wisp_stack *s, bool *registered)
{
    WISP_CORE_ASSERT_OWNER(s);
    if (registered != NULL) {
        *registered = s->icmp.echo_cb != NULL;
    }
    return s->icmp.echo_cb != NULL ? s->icmp.echo_arg : NULL;
}
