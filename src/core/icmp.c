/**
 * @file icmp.c
 * ICMP for IPv4 (RFC 792, RFC 1122 §3.2.2): answers echo requests (in place
 * when the received buffers are not shared), hands echo replies to a ping
 * application, counts received error messages, and originates destination
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
#include "wisp/stack.h"
#include "wisp/chksum.h"

#define ICMP_HLEN 8u
/* RFC 792: "Internet Header + 64 bits of Original Data Datagram" */
#define ICMP_QUOTE_DATA 8u
/* One token, in the milli-tokens of the bucket. */
#define ICMP_TOKEN_MT 1000u
#define ICMP_BUCKET_MT ((uint32_t)WISP_ICMP_ERR_BURST * ICMP_TOKEN_MT)

/* ----------------------------------------------------------------- helpers */

/* True for ICMP types that are queries/informational rather than errors.
 * RFC 1122 §3.2.2: no error is sent about an ICMP error message, but errors
 * about queries are allowed. Unknown types count as errors (the safe side). */
static bool icmp_type_is_query(uint8_t type)
{
    switch (type) {
    case 0:  /* echo reply (RFC 792) */
    case 8:  /* echo (RFC 792) */
    case 9:  /* router advertisement (RFC 1256) */
    case 10: /* router solicitation (RFC 1256) */
    case 13: /* timestamp (RFC 792) */
    case 14: /* timestamp reply (RFC 792) */
    case 15: /* information request (RFC 792) */
    case 16: /* information reply (RFC 792) */
    case 17: /* address mask request (RFC 950) */
    case 18: /* address mask reply (RFC 950) */
        return true;
    default:
        return false;
    }
}

/* True when a source address "defines a single host": not zero, not a
 * (limited or directed) broadcast, not multicast, not class E, and not
 * loopback unless it arrived on the loopback interface. RFC 1122 §3.2.2 (the
 * error-suppression list) and §3.2.1.3 (the address forms). */
static bool icmp_src_is_unicast(const struct wisp_ip4_info *ip)
{
    wisp_ip4_t a = ip->src;

    if (a == WISP_IP4_ANY || a == WISP_IP4_BCAST) {
        return false;
    }
    if (wisp_ip4_is_multicast(a) || wisp_ip4_octet(a, 0) >= 240u) {
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

/* ------------------------------------------------------------------- input */

/* Answer an echo request (RFC 792 "Echo or Echo Reply Message",
 * RFC 1122 §3.2.2.6). Does not consume p. */
static void icmp_echo_reply(struct wisp_stack *s, struct wisp_pbuf *p, const struct wisp_ip4_info *ip)
{
    struct wisp_pbuf *r;
    uint8_t hdr[4];
    uint16_t old_word, new_word, ck;
    wisp_err_t err;

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
     * is kept as received, as Linux does). */
    (void)wisp_pbuf_copy_out(r, hdr, 4, 0);
    old_word = wisp_rd16(&hdr[0]);
    hdr[0] = (uint8_t)WISP_ICMP_ECHO_REPLY;
    new_word = wisp_rd16(&hdr[0]);
    /* RFC 1624 eqn. 3: incremental update for the changed type/code word. */
    ck = wisp_chksum_adjust(wisp_rd16(&hdr[2]), old_word, new_word);
    if (ck == 0x0000u) {
        /* RFC 1624 §3-5: the incremental form may give 0x0000 where a full
         * computation gives 0xFFFF (all-zero reply). Rare (1 in 65536):
         * recompute from scratch so the result is always exact. */
        wisp_wr16(&hdr[2], 0);
        (void)wisp_pbuf_copy_in(r, hdr, 4, 0);
        ck = (uint16_t)~wisp_pbuf_chksum(r, 0, r->tot_len);
    }
    wisp_wr16(&hdr[2], ck);
    (void)wisp_pbuf_copy_in(r, hdr, 4, 0);

    /* RFC 1122 §3.2.2.6: the reply's source is the specific destination of
     * the request; the TOS is returned unchanged (data and options other
     * than those are not echoed: IP builds a fresh option-less header). */
    err = wisp_ip4_output(s, r, ip->dst, ip->src, 0, ip->tos, WISP_IP4_PROTO_ICMP, false);
    if (err == WISP_OK) {
        WISP_CTR_INC(s, ICMP_ECHO_REPLY_TX);
        WISP_CTR_INC(s, ICMP_TX);
    }
    wisp_pbuf_free(r);
}

void wisp_icmp_input(struct wisp_stack *s, struct wisp_pbuf *p, const struct wisp_ip4_info *ip)
{
    uint8_t hdr[ICMP_HLEN];

    WISP_CTR_INC(s, ICMP_RX);

    /* RFC 792: every message has at least the 8-byte header. */
    if (p->tot_len < ICMP_HLEN) {
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
    (void)wisp_pbuf_copy_out(p, hdr, ICMP_HLEN, 0);

    switch (hdr[0]) {
    case WISP_ICMP_ECHO:
        icmp_echo_reply(s, p, ip);
        wisp_pbuf_free(p);
        return;

    case WISP_ICMP_ECHO_REPLY:
        WISP_CTR_INC(s, ICMP_ECHO_REPLY_RX);
        if (s->icmp.echo_cb != NULL) {
            /* the callee owns p (ICMP header visible) */
            s->icmp.echo_cb(s->icmp.echo_arg, ip, wisp_rd16(&hdr[4]), wisp_rd16(&hdr[6]), p);
        } else {
            wisp_pbuf_free(p);
        }
        return;

    case WISP_ICMP_DEST_UNREACH:
    case 4u: /* source quench (RFC 792; deprecated by RFC 6633) */
    case 5u: /* redirect (RFC 792; we keep no route cache to update) */
    case WISP_ICMP_TIME_EXCEEDED:
    case WISP_ICMP_PARAM_PROBLEM:
        WISP_CTR_INC(s, ICMP_ERR_RX);
        /* TODO(TCP): RFC 1122 §3.2.2.1 / §4.2.3.9: pass destination
         * unreachable (incl. code 4 for PMTU discovery, RFC 1191), time
         * exceeded and parameter problem to the transport layer named in the
         * quoted header (hdr + 8: IP header, then 8 bytes of the original
         * transport header) once TCP exists. Until then they are only
         * counted. */
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

void wisp_icmp_dest_unreach(struct wisp_stack *s, struct wisp_pbuf *p, const struct wisp_ip4_info *ip,
                            uint8_t code)
{
    uint8_t iph[60];
    uint16_t hlen = ip->hlen;
    uint16_t qdata, qlen, mtu = 0;
    uint16_t frag;
    struct wisp_pbuf *q;
    uint8_t *m;
    int t;

    /* The IP header sits hidden in front of the transport part. */
    if (hlen < WISP_IP4_HLEN || hlen > sizeof(iph) || wisp_pbuf_push(p, hlen) != WISP_OK) {
        WISP_CTR_INC(s, ICMP_ERR_SUPPRESSED); /* nothing to quote */
        return;
    }
    (void)wisp_pbuf_copy_out(p, iph, hlen, 0);
    (void)wisp_pbuf_pop(p, hlen);

    /* RFC 1122 §3.2.2: an ICMP error MUST NOT be sent about
     *  - an ICMP error message (or one too short to tell its type), */
    if (ip->proto == WISP_IP4_PROTO_ICMP) {
        t = wisp_pbuf_get_u8(p, 0);
        if (t < 0 || !icmp_type_is_query((uint8_t)t)) {
            WISP_CTR_INC(s, ICMP_ERR_SUPPRESSED);
            return;
        }
    }
    /*  - a datagram destined to an IP broadcast or multicast address,
     *  - a datagram sent as a link-layer broadcast or multicast, */
    if (ip->bcast || ip->mcast || (p->flags & (WISP_PBUF_F_BCAST | WISP_PBUF_F_MCAST)) != 0) {
        WISP_CTR_INC(s, ICMP_ERR_SUPPRESSED);
        return;
    }
    /*  - a non-initial fragment, */
    frag = wisp_rd16(&iph[6]);
    if ((frag & WISP_IP4_OFFMASK) != 0) {
        WISP_CTR_INC(s, ICMP_ERR_SUPPRESSED);
        return;
    }
    /*  - a datagram whose source does not define a single host. */
    if (!icmp_src_is_unicast(ip)) {
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
    qdata = (uint16_t)WISP_MIN(p->tot_len, ICMP_QUOTE_DATA);
    qlen = (uint16_t)(hlen + qdata);
    q = wisp_pbuf_alloc(s, WISP_LAYER_IP, (uint16_t)(ICMP_HLEN + qlen), WISP_PBUF_RAM);
    if (q == NULL) {
        WISP_CTR_INC(s, ICMP_DROP_NOMEM);
        return;
    }
    m = q->payload;
    m[0] = (uint8_t)WISP_ICMP_DEST_UNREACH;
    m[1] = code;
    wisp_wr16(&m[2], 0);
    if (code == WISP_ICMP_UNREACH_NEEDFRAG && ip->nif != NULL) {
        mtu = ip->nif->mtu; /* RFC 1191 §4: next-hop MTU in the low 16 bits */
    }
    wisp_wr16(&m[4], 0);   /* RFC 792: unused, zero */
    wisp_wr16(&m[6], mtu);
    memcpy(&m[ICMP_HLEN], iph, hlen);
    (void)wisp_pbuf_copy_out(p, &m[ICMP_HLEN + hlen], qdata, 0);
    wisp_wr16(&m[2], (uint16_t)~wisp_chksum_sum(m, (size_t)ICMP_HLEN + qlen));

    /* Sent from the address the datagram was sent to (a unicast address of
     * ours, broadcasts were excluded above), with the default TOS
     * (RFC 1349 §5.1: ICMP errors use TOS 0) and TTL. */
    if (wisp_ip4_output(s, q, ip->dst, ip->src, 0, 0, WISP_IP4_PROTO_ICMP, false) == WISP_OK) {
        WISP_CTR_INC(s, ICMP_ERR_TX);
        WISP_CTR_INC(s, ICMP_TX);
    }
    wisp_pbuf_free(q);
}

/* ------------------------------------------------------------ echo request */

wisp_err_t wisp_icmp_echo_request(struct wisp_stack *s, wisp_ip4_t dst, uint16_t id, uint16_t seq,
                                  uint16_t len, uint8_t ttl)
{
    struct wisp_pbuf *q, *b;
    uint16_t mlen, i = 0, k;
    uint8_t hdr[ICMP_HLEN];
    wisp_err_t err;

    /* An IP datagram is at most 65535 bytes (RFC 791): 20 of header. */
    if ((uint32_t)len + ICMP_HLEN + WISP_IP4_HLEN > WISP_IP4_MAX_LEN) {
        return WISP_ERR_VAL;
    }
    mlen = (uint16_t)(ICMP_HLEN + len);
    if ((uint32_t)mlen + WISP_LAYER_IP <= WISP_PBUF_BLOCK_SIZE) {
        q = wisp_pbuf_alloc(s, WISP_LAYER_IP, mlen, WISP_PBUF_RAM);
    } else {
        q = wisp_pbuf_alloc(s, WISP_LAYER_IP, mlen, WISP_PBUF_POOL);
    }
    if (q == NULL) {
        return WISP_ERR_MEM;
    }

    /* RFC 792 "Echo or Echo Reply Message": type 8, code 0, id, seq. */
    hdr[0] = (uint8_t)WISP_ICMP_ECHO;
    hdr[1] = 0;
    wisp_wr16(&hdr[2], 0);
    wisp_wr16(&hdr[4], id);
    wisp_wr16(&hdr[6], seq);
    (void)wisp_pbuf_copy_in(q, hdr, ICMP_HLEN, 0);

    /* Data: byte i of the payload is (uint8_t)i, easy to recognise and to
     * verify at any offset (a reply's data must match it). */
    k = ICMP_HLEN;
    for (b = q; b != NULL; b = b->next) {
        while (k < b->len) {
            b->payload[k++] = (uint8_t)i++;
        }
        k = 0;
    }

    wisp_wr16(&hdr[2], (uint16_t)~wisp_pbuf_chksum(q, 0, mlen));
    (void)wisp_pbuf_copy_in(q, &hdr[2], 2, 2);

    err = wisp_ip4_output(s, q, 0, dst, ttl, 0, WISP_IP4_PROTO_ICMP, false);
    if (err == WISP_OK) {
        WISP_CTR_INC(s, ICMP_TX);
    }
    wisp_pbuf_free(q);
    return err;
}

void wisp_icmp_set_echo_cb(struct wisp_stack *s, wisp_icmp_echo_fn fn, void *arg)
{
    s->icmp.echo_cb = fn;
    s->icmp.echo_arg = arg;
}

void wisp_icmp_init(struct wisp_stack *s)
{
    s->icmp.echo_cb = NULL;
    s->icmp.echo_arg = NULL;
    s->icmp.tokens_mt = ICMP_BUCKET_MT; /* start with a full burst */
    s->icmp.last_refill = wisp_now(s);
}
