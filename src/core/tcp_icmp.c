/**
 * @file tcp_icmp.c
 * TCP's reaction to ICMP errors (RFC 1122 §4.2.3.9, RFC 5927, RFC 5461)
 * and path MTU discovery (RFC 1191) with a black-hole fallback in the
 * manner of packetization-layer PMTUD (RFC 4821).
 *
 * icmp.c has validated the quotation (well-formed IPv4 header of a
 * datagram we sent, first fragment, 8 bytes of TCP header); here:
 *  - the connection is found by its 4-tuple and the quoted sequence number
 *    must lie in SND.UNA..SND.NXT-1 (RFC 5927 §4.1 / §5.1), else the error
 *    is dropped and counted (icmp.err.drop.seq);
 *  - source quench never gets here (icmp.c ignores it, RFC 6633);
 *  - in SYN-SENT, protocol and port unreachable are hard errors and end
 *    the connect at once (RFC 1122 §4.2.3.9: "SHOULD abort"), reported as
 *    WISP_ERR_RST (a refused connect, ECONNREFUSED at the socket layer);
 *    so are "administratively prohibited" (codes 9, 10, 13), reported as
 *    WISP_ERR_HOSTUNREACH (as Linux);
 *  - every other error is soft (RFC 1122 §4.2.3.9; RFC 5461 / RFC 5927
 *    §4.1 recommend soft treatment of the "hard" codes too in synchronized
 *    states, as Linux does): it is remembered, and when a connect runs out
 *    of SYN retransmissions the last soft error is the reason given
 *    (WISP_ERR_HOSTUNREACH / WISP_ERR_NETUNREACH: EHOSTUNREACH /
 *    ENETUNREACH from connect, as on Linux). In synchronized states a soft
 *    error changes nothing (the retransmission timer decides);
 *  - "fragmentation needed" (type 3 code 4, RFC 1191) lowers the path MTU
 *    of the destination (per-stack cache in icmp.c, floor WISP_PMTU_MIN),
 *    the send MSS of every connection to it, and marks this connection's
 *    sent segments that are now too large lost; the output engine re-cuts
 *    each into copies of at most one MSS as it retransmits it (so the
 *    copies never take more buffers than the congestion window lets out;
 *    out of buffers it retries shortly), at once and without reducing the
 *    congestion window (the loss was no congestion signal; RFC 1191 §6.4
 *    allows waiting for the RTO; like Linux's tcp_simple_retransmit we do
 *    not).
 *    After WISP_PMTU_AGE_MS the MSS is raised again (RFC 1191 §6.3); a
 *    path that is still narrow answers the first full-size segment with a
 *    new "too big".
 *  - Black hole (RFC 4821 §7.5, simplified): when a segment larger than
 *    WISP_PMTU_MIN - 40 bytes with DF set has timed out
 *    WISP_PMTU_BLACKHOLE_RTOS times in a row without any ACK, the path MTU
 *    of the destination is set to WISP_PMTU_MIN and the outstanding data is
 *    re-cut at that size before the retransmission. After
 *    WISP_PMTU_PROBE_MS the full MSS is tried again: the next full-size
 *    segments are the probe (when they are lost again, the fallback lowers
 *    the MSS again after as many RTOs). There is no separate probe
 *    segment and no search between the two sizes (RFC 4821 §7.2 would
 *    binary-search; two sizes keep it small and predictable).
 */
#define WISP_PRIVATE_ACCESS 1 /* library code: sees the private tier (wisp/arch.h) */
#include "tcp_priv.h"

#if WISP_TCP

/* IPv4 + TCP headers without options (RFC 9293 §3.7.1: MSS = MTU - 40). */
#define TCP_IP_HDRS (WISP_IP4_HLEN + WISP_TCP_HLEN)

/* ---------------------------------------------------------- path MTU */

/* The send MSS the path allows pcb (never above mss_max). */
static uint16_t tcp_pmtu_mss(struct wisp_tcp_pcb *pcb)
{
    struct wisp_stack *s = pcb->c.stack;
    uint16_t mtu = wisp_pmtu_get(s, wisp_ipaddr_ip4(&pcb->remote_ip), NULL); /* IPv4 only: IPv6 extends */
    uint32_t m = pcb->mss_max;
    if (mtu != 0 && (uint32_t)mtu - TCP_IP_HDRS < m) {
        m = (uint32_t)mtu - TCP_IP_HDRS;
    }
    return (uint16_t)m;
}

void tcp_pmtu_init(struct wisp_tcp_pcb *pcb)
{
    pcb->mss_max = pcb->mss;
    pcb->mss = tcp_pmtu_mss(pcb);
    if (pcb->mss < pcb->mss_max) {
        pcb->flags |= TF_PMTU_LOW;
        pcb->pmtu_raise_at = wisp_now(pcb->c.stack) + (uint32_t)WISP_PMTU_AGE_MS;
    }
}

/* Set the send MSS to what the path allows now (lower or higher). */
static void tcp_pmtu_set(struct wisp_tcp_pcb *pcb, uint16_t mss)
{
    struct wisp_stack *s = pcb->c.stack;
    if (mss < 64u) {
        mss = 64u; /* the floor of tcp_set_established */
    }
    if (mss < pcb->mss) {
        WISP_CTR_INC(s, TCP_PMTU_LOWER);
    } else if (mss > pcb->mss) {
        WISP_CTR_INC(s, TCP_PMTU_RAISE);
    }
    pcb->mss = mss;
    if (pcb->cwnd < tcp_seg_max(pcb)) {
        /* RFC 5681 §3.1: never below one (new) SMSS -- a window of less
         * than a segment with nothing in flight would stall for good */
        pcb->cwnd = tcp_seg_max(pcb);
    }
    if (mss < pcb->mss_max) {
        pcb->flags |= TF_PMTU_LOW;
    } else {
        pcb->flags &= ~TF_PMTU_LOW;
    }
    pcb->pmtu_raise_at = wisp_now(s) + (uint32_t)WISP_PMTU_AGE_MS;
}

bool tcp_pmtu_recut(struct wisp_tcp_pcb *pcb, struct wisp_tcp_seg **gp)
{
    struct wisp_stack *s = pcb->c.stack;
    const struct wisp_pool *tx = &s->pool[WISP_POOL_PBUF_TX];
    uint32_t smss = tcp_seg_max(pcb), off = 0;
    struct wisp_tcp_seg **pp = tcp_seg_pp(pcb, *gp), *g = *gp, *head = NULL, **tail = &head, *n = NULL;
    uint8_t keep;

    if (*pp == NULL || g->len <= smss) {
        return true;
    }
    keep = (uint8_t)(g->flags & (TCP_SEGF_SENT | TCP_SEGF_SACKED | TCP_SEGF_LOST | TCP_SEGF_RTXD));
    while (off < g->len) {
        uint32_t k = WISP_MIN(smss, (uint32_t)g->len - off);
        n = NULL;
        if ((uint32_t)tx->count - tx->used > TCP_TX_RESERVE) { /* the last blocks stay for headers */
            n = tcp_seg_copy(s, g, off, k);
        }
        if (n == NULL) {
            while (head != NULL) {
                n = head->next;
                tcp_seg_drop(pcb, head); /* (not accounted yet: nblk 0) */
                head = n;
            }
            WISP_CTR_INC(s, TCP_PMTU_RESEG_NOMEM);
            return false;
        }
        n->sent_ms = g->sent_ms;
        n->nrtx = g->nrtx;
        n->flags = (uint8_t)(keep | TCP_SEGF_COPY);
        *tail = n;
        tail = &n->next;
        off += k;
    }
    /* FIN and PSH stay with the end of the data (n: the last piece) */
    n->flags = (uint8_t)(n->flags | (g->flags & (TCP_SEGF_FIN | TCP_SEGF_PSH | TCP_SEGF_MORE)));
    n->next = g->next;
    *pp = head;
    if (pcb->sndq_tail == g) {
        pcb->sndq_tail = n;
    }
    if (pcb->sndq_next == g) {
        pcb->sndq_next = head;
    }
    for (n = head; n != g->next; n = n->next) {
        tcp_seg_account(pcb, n); /* the copies count against the transmit budget */
    }
    tcp_seg_drop(pcb, g); /* a queued frame may still hold the data: it stays till sent */
    WISP_CTR_INC(s, TCP_PMTU_RESEG);
    pcb->flags &= ~TF_RTT; /* Karn: the timed segment may have been g */
    *gp = head;
    return true;
}

/* Mark the sent segments longer than the send MSS (not SACKed) lost: a
 * router dropped them. Returns 2 per segment marked, plus 1 when any sent
 * segment is longer than the send MSS (SACKed ones included). */
static unsigned tcp_pmtu_mark_lost(struct wisp_tcp_pcb *pcb)
{
    struct wisp_tcp_seg *g;
    uint32_t smss = tcp_seg_max(pcb);
    unsigned n = 0;
    for (g = pcb->sndq; g != NULL && g != pcb->sndq_next; g = g->next) {
        if (g->len > smss) {
            n |= 1u;
            if (!(g->flags & TCP_SEGF_SACKED)) {
                g->flags = (uint8_t)((g->flags & ~TCP_SEGF_RTXD) | TCP_SEGF_LOST);
                pcb->flags |= TF_SCOREBOARD;
                n += 2u;
            }
        }
    }
    return n;
}

void tcp_pmtu_check(struct wisp_tcp_pcb *pcb)
{
    uint16_t m;
    if (!(pcb->flags & TF_PMTU_LOW) || wisp_time_before(wisp_now(pcb->c.stack), pcb->pmtu_raise_at)) {
        return;
    }
    /* RFC 1191 §6.3 / RFC 4821 §7.7: the cached estimate has aged out (or
     * will be looked at again later): use what the cache says now. */
    m = tcp_pmtu_mss(pcb);
    tcp_pmtu_set(pcb, m > pcb->mss ? m : pcb->mss);
}

void tcp_pmtu_rto(struct wisp_tcp_pcb *pcb)
{
    struct wisp_stack *s = pcb->c.stack;
    bool nodf = false;
    uint16_t safe = (uint16_t)(WISP_PMTU_MIN - TCP_IP_HDRS);

    if (!WISP_PMTU || WISP_PMTU_BLACKHOLE_RTOS == 0 || pcb->nrtx != (uint8_t)WISP_PMTU_BLACKHOLE_RTOS ||
        pcb->mss <= safe || pcb->sndq == NULL ||
        pcb->sndq->len <= safe - ((pcb->flags & TF_TS) ? WISP_TCP_TS_OPTLEN : 0u)) {
        return;
    }
    (void)wisp_pmtu_get(s, wisp_ipaddr_ip4(&pcb->remote_ip), &nodf); /* IPv4 only: IPv6 extends */
    if (nodf) {
        return; /* sent with DF clear: routers fragment, no MTU black hole */
    }
    /* RFC 4821 §7.5: full-size segments keep being lost while nothing is
     * acknowledged: assume a path that drops them silently. */
    WISP_CTR_INC(s, TCP_PMTU_BLACKHOLE);
    (void)wisp_pmtu_lower(s, wisp_ipaddr_ip4(&pcb->remote_ip), (uint16_t)WISP_PMTU_MIN, true);
    tcp_pmtu_set(pcb, safe);
    pcb->pmtu_raise_at = wisp_now(s) + (uint32_t)WISP_PMTU_PROBE_MS;
    /* tcp_rto_expired marks everything lost; the output engine re-cuts
     * each segment as it retransmits it (tcp_pmtu_recut) */
}

wisp_err_t tcp_icmp_timeout_err(const struct wisp_tcp_pcb *pcb)
{
    return pcb->soft_err != WISP_OK ? pcb->soft_err : (wisp_err_t)WISP_ERR_TIMEOUT;
}

/* ------------------------------------------------------------ errors */

static struct wisp_tcp_pcb *tcp_icmp_find(struct wisp_stack *s, const struct wisp_icmp_err *e)
{
    struct wisp_tcp_pcb *pcb;
    for (pcb = s->tcp.pcbs; pcb != NULL; pcb = pcb->next) {
        if (pcb->c.state != WISP_TCP_CLOSED && pcb->c.state != WISP_TCP_LISTEN &&
            pcb->c.local_port == e->sport && pcb->remote_port == e->dport &&
            wisp_ipaddr_is4(&pcb->remote_ip) && /* IPv4 only (ICMPv4 errors): IPv6 extends */
            wisp_ipaddr_ip4(&pcb->remote_ip) == e->dst && wisp_ipaddr_ip4(&pcb->c.local_ip) == e->src) {
            return pcb;
        }
    }
    return NULL;
}

/* Destination-unreachable codes (RFC 792, RFC 1122 §3.2.2.1, RFC 1812
 * §5.2.7.1) as bits of a mask: */
#define TCP_ICMP_BIT(c) (1u << (c))
/* network unreachable, destination network unknown (6), network
 * unreachable for TOS (11): ENETUNREACH (as Linux's icmp_err_convert) */
#define TCP_ICMPB_NET (TCP_ICMP_BIT(WISP_ICMP_UNREACH_NET) | TCP_ICMP_BIT(6u) | TCP_ICMP_BIT(11u))
/* protocol and port unreachable: a refused connection */
#define TCP_ICMPB_REFUSED (TCP_ICMP_BIT(WISP_ICMP_UNREACH_PROTO) | TCP_ICMP_BIT(WISP_ICMP_UNREACH_PORT))
/* "administratively prohibited" (RFC 1122 §3.2.2.1 codes 9, 10; RFC 1812
 * §5.2.7.1 code 13): a filter's standing decision, no transient condition */
#define TCP_ICMPB_PROHIB (TCP_ICMP_BIT(9u) | TCP_ICMP_BIT(10u) | TCP_ICMP_BIT(13u))

/* "Fragmentation needed" for pcb (RFC 1191 §6.4 TCP actions). */
static void tcp_icmp_needfrag(struct wisp_stack *s, struct wisp_tcp_pcb *pcb, const struct wisp_icmp_err *e)
{
    struct wisp_tcp_pcb *q;
    uint16_t lowered = wisp_pmtu_lower(s, e->dst, e->mtu, false);
    bool cut = false;
    unsigned n;

    if (lowered != 0) {
        WISP_CTR_INC(s, ICMP_PMTU_LOWERED);
    }
    /* every connection to that destination sends smaller segments from
     * now on once the estimate fell (their own oversize segments draw
     * their own errors); pcb itself whenever the estimate is below its
     * MSS (a synchronized one: SYN-SENT takes it when synchronized) */
    for (q = s->tcp.pcbs; q != NULL; q = q->next) {
        if ((q == pcb || lowered != 0) && q->mss_max != 0 && wisp_ipaddr_is4(&q->remote_ip) &&
            wisp_ipaddr_ip4(&q->remote_ip) == e->dst) {
            uint16_t m = tcp_pmtu_mss(q);
            if (m < q->mss) {
                tcp_pmtu_set(q, m);
                cut = cut || q == pcb;
            }
        }
    }
    if (pcb->mss_max == 0) {
        return; /* SYN-SENT: applied when the connection is synchronized */
    }
    /* RFC 1191 §6.4: re-send what the router dropped, now in pieces (the
     * output engine re-cuts each as it retransmits it, so the copies take
     * no more buffers than the congestion window lets out) */
    n = tcp_pmtu_mark_lost(pcb);
    if (n > 1u) {
        pcb->flags |= TF_FORCE_RTX;
        tcp_output_run(pcb);
    } else if (n == 0u && !cut && lowered == 0) {
        /* it lowers nothing and no sent segment is too large for what we
         * know: a value that would raise the estimate (RFC 1191 §3) */
        WISP_CTR_INC(s, ICMP_PMTU_DROP_NORAISE);
    }
}

void wisp_tcp_icmp_err(struct wisp_stack *s, const struct wisp_icmp_err *e)
{
    struct wisp_tcp_pcb *pcb = tcp_icmp_find(s, e), *prev;
    uint32_t bit;
    WISP_CORE_ASSERT_OWNER(s);

    if (pcb == NULL) {
        /* SYN queue entries and TIME-WAIT records are not told (they
         * time out on their own) */
        WISP_CTR_INC(s, ICMP_ERR_DROP_NOPCB);
        return;
    }
    /* RFC 5927 §4.1 / §5.1: only an error about data in flight,
     * SND.UNA <= SEG.SEQ < SND.NXT, can be genuine (blind attacks). */
    if (TCP_SEQ_LT(e->seq, pcb->snd_una) || TCP_SEQ_GEQ(e->seq, pcb->snd_nxt)) {
        WISP_CTR_INC(s, ICMP_ERR_DROP_SEQ);
        return;
    }
    /* the code as a bit (0: time exceeded, parameter problem) */
    bit = (e->type == WISP_ICMP_DEST_UNREACH && e->code < 32u) ? TCP_ICMP_BIT(e->code) : 0u;
    if (bit == TCP_ICMP_BIT(WISP_ICMP_UNREACH_NEEDFRAG)) {
        /* (tcp_icmp_find found a connection in SYN-SENT or later) */
        prev = tcp_enter(s, pcb);
        tcp_icmp_needfrag(s, pcb, e);
        tcp_finish(s, pcb, prev, TF_OUTPUT_PENDING);
        return;
    }
    if (pcb->c.state == WISP_TCP_SYN_SENT && (bit & (TCP_ICMPB_REFUSED | TCP_ICMPB_PROHIB))) {
        /* RFC 1122 §4.2.3.9: a hard error ends the connection attempt;
         * "administratively prohibited" is hard in SYN-SENT too, as on
         * Linux. */
        WISP_CTR_INC(s, ICMP_ERR_HARD);
        if (bit & TCP_ICMPB_REFUSED) {
            WISP_CTR_INC(s, TCP_ICMP_REFUSED);
        }
        tcp_pcb_kill(pcb, (bit & TCP_ICMPB_REFUSED) ? WISP_ERR_RST : WISP_ERR_HOSTUNREACH);
        return;
    }
    /* RFC 1122 §4.2.3.9: soft; RFC 5461 §4 / RFC 5927 §4.1: also the hard
     * codes once synchronized. Remembered as the reason should the
     * connection attempt time out (as Linux's icmp_err_convert). */
    WISP_CTR_INC(s, ICMP_ERR_SOFT);
    pcb->soft_err = (bit & TCP_ICMPB_NET) ? WISP_ERR_NETUNREACH
                    : (bit & TCP_ICMPB_REFUSED) ? WISP_ERR_REFUSED
                                               : WISP_ERR_HOSTUNREACH;
}

#else
typedef int wisp_tcp_icmp_disabled_t; /* ISO C forbids an empty translation unit */
#endif /* WISP_TCP */
