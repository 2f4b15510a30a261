/**
 * @file tcp_out.c
 * TCP output: the send queue (segmentation and coalescing at write time),
 * segment transmission (a small header pbuf with the data chained behind
 * it, so queued data is never modified by lower layers and can be
 * retransmitted at any time), the output engine (Nagle, sender SWS
 * avoidance, congestion and receive windows, limited transmit, loss
 * retransmissions), the receive window we announce (the receive budget),
 * the transmit budget, and the control segments (SYN, ACK, RST,
 * keepalive). ACK processing is in tcp_in.c, the retransmission and
 * persist timers in tcp_timer.c, congestion control in tcp_cc.c.
 *
 * Rules implemented (cited at the lines): RFC 9293 §3.8 (data
 * communication), RFC 1122 §4.2.3.4 + RFC 896 (Nagle), RFC 5681
 * (congestion control), RFC 6928 (initial window), RFC 3042 (limited
 * transmit), RFC 6582 (NewReno), RFC 6675 + RFC 2018 (SACK loss recovery),
 * RFC 6298 (RTO), RFC 7323 (timestamps, window scaling), RFC 6691 (MSS).
 *
 * Choices:
 *  - IP output with DF set when WISP_PMTU (path MTU discovery, RFC 1191,
 *    tcp_icmp.c); segments never exceed the interface MTU.
 *  - A local transmit failure (no header buffer, full interface queue)
 *    leaves the segment unsent and retries shortly; it is no congestion
 *    signal. The same holds for a SYN or SYN-ACK (no RTO backoff).
 *  - The announced window stays within the receive budget (tcp_rcv_right:
 *    the free receive blocks minus TCP_RX_RESERVE, and a fair share per
 *    connection of what its application holds plus its window); a window
 *    the free blocks held back is looked at again on the output timer (20
 *    to 320 ms) so that the space other connections give back is
 *    announced. Copies of written data leave TCP_TX_RESERVE transmit
 *    blocks free, and each connection takes them within its share of the
 *    transmit budget (tcp_tx_may_take, the rules in opt.h at
 *    WISP_TCP_SND_MIN_BLOCKS); a zero-window peer is given up on after
 *    WISP_TCP_PERSIST_TIMEOUT_MS of silence, or of holding blocks while
 *    others ran short of them (tcp_persist_give_up).
 *  - Output asked for from callbacks waits for the end of the processing
 *    (TF_OUTPUT_PENDING).
 *  - ACKs and RSTs carry SEG.SEQ = min(SND.NXT, SND.UNA + SND.WND) (as
 *    Linux does): after a zero-window probe they stay acceptable to the
 *    peer's zero window.
 *  - Without SACKed or lost segments (TF_SCOREBOARD clear) output takes
 *    pipe = SND.NXT - SND.UNA and skips the walk for lost segments.
 *  - A segment partly acknowledged stays whole until fully acknowledged
 *    (its data may be chained in a queued frame); a retransmission resends
 *    it whole and the receiver trims the old part.
 *  - Nagle in Minshall's variant: a short segment waits only while an
 *    earlier short segment is unacknowledged. Data written with
 *    WISP_TCP_WRITE_MORE gets no PSH and a short tail waits while anything
 *    is unacknowledged, even with Nagle off.
 *  - Segments are cut at the send MSS when written; a window smaller than
 *    the segment (SWS rule, zero-window probe) splits it by copying the
 *    front part into a fresh buffer.
 *  - Zero-window probes carry one new octet; when the window opens and
 *    did not take it, it is retransmitted first.
 */
#define WISP_PRIVATE_ACCESS 1 /* library code: sees the private tier (wisp/arch.h) */
#include "tcp_priv.h"

#if WISP_TCP

/* ----------------------------------------------------- transmission */

/* DF on TCP segments (RFC 1191 §6.4) when path MTU discovery is on, unless
 * the path's MTU was clamped to WISP_PMTU_MIN (tcp_icmp.c). */
static bool tcp_df(struct wisp_stack *s, const wisp_ipaddr_t *dst)
{
    bool nodf = false;
    if (!WISP_PMTU) {
        return false;
    }
    (void)wisp_pmtu_get(s, wisp_ipaddr_ip4(dst), &nodf); /* IPv4 only: IPv6 extends */
    return !nodf;
}

wisp_err_t tcp_xmit_raw(struct wisp_stack *s, const struct tcp_tuple *t, uint32_t seq, uint32_t ack, uint8_t flags,
                        uint16_t wnd, const uint8_t *opt, uint8_t optlen, struct wisp_pbuf *data, uint8_t tos,
                        uint8_t ttl)
{
    uint16_t hlen = (uint16_t)(WISP_TCP_HLEN + optlen);
    struct wisp_pbuf *h;
    uint8_t *u;
    uint16_t tlen, sum;
    wisp_err_t err;

    /* IPv4 only: IPv6 extends (its header and datagram limits) */
    if (data != NULL && (uint32_t)data->tot_len + hlen + WISP_IP4_HLEN > WISP_IP4_MAX_LEN) {
        return WISP_ERR_VAL;
    }
    /* RFC 9293 §3.1 header in a small RAM buffer with room for IP and link
     * headers; the data is chained behind it (never copied, never
     * modified). */
    h = wisp_pbuf_alloc(s, WISP_LAYER_IP, hlen, WISP_PBUF_RAM);
    if (h == NULL) {
        WISP_CTR_INC(s, TCP_DROP_NOMEM);
        return WISP_ERR_MEM;
    }
    u = h->payload;
    wisp_wr16(u + WISP_TCP_OFF_SPORT, t->lport);
    wisp_wr16(u + WISP_TCP_OFF_DPORT, t->rport);
    wisp_wr32(u + WISP_TCP_OFF_SEQ, seq);
    wisp_wr32(u + WISP_TCP_OFF_ACK, (flags & WISP_TCP_FLAG_ACK) ? ack : 0u);
    u[WISP_TCP_OFF_HLEN] = (uint8_t)((hlen / 4u) << 4);
    u[WISP_TCP_OFF_FLAGS] = flags;
    wisp_wr16(u + WISP_TCP_OFF_WND, wnd);
    wisp_wr16(u + WISP_TCP_OFF_CSUM, 0);
    wisp_wr16(u + WISP_TCP_OFF_URP, 0);
    if (optlen > 0) {
        memcpy(u + WISP_TCP_HLEN, opt, optlen);
    }
    if (data != NULL && data->tot_len > 0) {
        wisp_pbuf_chain(h, data);
    }
    tlen = h->tot_len;
    /* RFC 9293 §3.1 Checksum: pseudo header + header + data. */
    sum = wisp_chksum_add(wisp_ip_chksum_pseudo(&t->lip, &t->rip, WISP_IP4_PROTO_TCP, tlen), wisp_pbuf_chksum(h, 0, tlen));
    wisp_wr16(u + WISP_TCP_OFF_CSUM, (uint16_t)~sum);
    err = wisp_ip_output(s, h, &t->lip, &t->rip, ttl, tos, WISP_IP4_PROTO_TCP, tcp_df(s, &t->rip));
    if (err == WISP_OK) {
        WISP_CTR_INC(s, TCP_TX);
        if (flags & WISP_TCP_FLAG_RST) {
            WISP_CTR_INC(s, TCP_RST_TX);
        }
    }
    wisp_pbuf_free(h);
    return err;
}

/* A segment of pcb: its endpoints, TOS and TTL, SEG.ACK = RCV.NXT (sent
 * as 0 without the ACK flag). The one transmit path of every segment a
 * connection sends: SYN, SYN-ACK, ACK, RST, keepalive and data. */
static wisp_err_t tcp_pcb_xmit(struct wisp_tcp_pcb *pcb, uint32_t seq, uint8_t flags, uint16_t wnd, const uint8_t *opt,
                               uint8_t optlen, struct wisp_pbuf *data)
{
    struct tcp_tuple t;
    t.lip = pcb->c.local_ip;
    t.rip = pcb->remote_ip;
    t.lport = pcb->c.local_port;
    t.rport = pcb->remote_port;
    return tcp_xmit_raw(pcb->c.stack, &t, seq, pcb->rcv_nxt, flags, wnd, opt, optlen, data, pcb->c.tos, pcb->c.ttl);
}

/* ---------------------------------------------------------- options */

/* The writer of four option bytes as one word (TCP_OPT4; shared by every
 * option: MSS, the NOP-padded SACK-permitted, timestamps, window scale
 * and SACK, and their values). */
static uint8_t *tcp_put4(uint8_t *o, uint32_t v)
{
    wisp_wr32(o, v);
    return o + 4;
}

uint8_t *tcp_put_ts(uint8_t *o, uint32_t b, uint32_t tsval, uint32_t tsecr)
{
    o = tcp_put4(o, b | TCP_OPT4(0, 0, WISP_TCP_OPT_TS, WISP_TCP_OPTLEN_TS));
    o = tcp_put4(o, tsval);
    return tcp_put4(o, tsecr);
}

uint8_t tcp_build_syn_opts(uint8_t *o, uint16_t mss, uint8_t ws, bool sack, bool ts, uint32_t tsval,
                           uint32_t tsecr)
{
    uint8_t *p = o;
    /* options compiled out are never offered (the code below goes too) */
    ts = ts && WISP_TCP_TIMESTAMPS;
    sack = sack && WISP_TCP_SACK;
    if (!WISP_TCP_WND_SCALE) {
        ws = 0xffu;
    }
    /* RFC 9293 §3.7.1: MSS option on every SYN. */
    p = tcp_put4(p, TCP_OPT4(WISP_TCP_OPT_MSS, WISP_TCP_OPTLEN_MSS, 0, 0) | mss);
    if (ts) {
        p = tcp_put_ts(p, sack ? TCP_OPT4(WISP_TCP_OPT_SACK_PERM, WISP_TCP_OPTLEN_SACK_PERM, 0, 0)
                               : TCP_OPT4(WISP_TCP_OPT_NOP, WISP_TCP_OPT_NOP, 0, 0), tsval, tsecr);
    } else if (sack) {
        /* RFC 2018 §2 */
        p = tcp_put4(p, TCP_OPT4(WISP_TCP_OPT_NOP, WISP_TCP_OPT_NOP, WISP_TCP_OPT_SACK_PERM, WISP_TCP_OPTLEN_SACK_PERM));
    }
    if (ws != 0xffu) {
        /* RFC 7323 §2.2 */
        p = tcp_put4(p, TCP_OPT4(WISP_TCP_OPT_NOP, WISP_TCP_OPT_WS, WISP_TCP_OPTLEN_WS, ws));
    }
    return (uint8_t)(p - o);
}

uint32_t tcp_tsval(const struct wisp_tcp_pcb *pcb)
{
    /* RFC 7323 §5.4: the ms clock plus the per-connection offset. */
    return wisp_now(pcb->c.stack) + TCP_TS_OFF(pcb);
}

#if WISP_TCP_SACK
/* SACK blocks (RFC 2018 §4) from the out-of-order queue, written at o:
 * the block with the most recent arrival first, then the other recent
 * ones, then the rest; at most max blocks. Returns the end of what was
 * written. */
static uint8_t *tcp_sack_blocks(const struct wisp_tcp_pcb *pcb, uint8_t *o, unsigned max)
{
    uint32_t r[WISP_TCP_OOSEQ_SLOTS][2];
    uint8_t age[WISP_TCP_OOSEQ_SLOTS]; /* of its most recent entry; 0xff: listed */
    unsigned nr = 0, i, best, nb = 0;
    const struct wisp_tcp_ooq *q = pcb->ooq;

    for (i = 0; q != NULL && i < q->n; i++) {
        const struct wisp_tcp_ooseq *e = &q->e[i];
        uint8_t fa = q->fa[i];
        uint32_t end = e->seq + tcp_oo_len(e) + ((fa & TCP_OO_FIN) ? 1u : 0u);
        if (nr > 0 && r[nr - 1][1] == e->seq) {
            r[nr - 1][1] = end; /* contiguous with the previous entry */
            age[nr - 1] = (uint8_t)WISP_MIN(age[nr - 1], fa & TCP_OO_AGE);
        } else {
            r[nr][0] = e->seq;
            r[nr][1] = end;
            age[nr] = (uint8_t)(fa & TCP_OO_AGE);
            nr++;
        }
    }
    /* the blocks of the recent arrivals, newest first (their ages differ:
     * one arrival each), then the rest (age TCP_SACK_RECENT) in sequence
     * order */
    for (; nb < max && nb < nr; nb++) {
        best = 0;
        for (i = 1; i < nr; i++) {
            if (age[i] < age[best]) {
                best = i;
            }
        }
        age[best] = 0xff; /* listed */
        o = tcp_put4(o, r[best][0]);
        o = tcp_put4(o, r[best][1]);
    }
    return o;
}
#endif /* WISP_TCP_SACK */

/* Options of a non-SYN segment: timestamps (RFC 7323 §3.2: on every
 * segment once negotiated) and SACK blocks that fit in room bytes (at
 * most WISP_TCP_MAX_OPTLEN). */
static uint8_t tcp_build_opts(struct wisp_tcp_pcb *pcb, uint8_t *o, unsigned room)
{
    uint8_t *p = o;
    if (pcb->flags & TF_TS) {
        p = tcp_put_ts(p, TCP_OPT4(WISP_TCP_OPT_NOP, WISP_TCP_OPT_NOP, 0, 0), tcp_tsval(pcb), TCP_TS_RECENT(pcb));
    }
#if WISP_TCP_SACK
    if ((pcb->flags & TF_SACK) && (pcb->ooq != NULL || (pcb->flags & TF_DSACK)) &&
        room >= (unsigned)(p - o) + 2u + WISP_TCP_OPT_HDRLEN + WISP_TCP_SACK_BLOCK_LEN) {
        /* NOP NOP SACK length, then the blocks; RFC 2018 §3: at most 4
         * blocks, 3 with timestamps -- what fits in room <= 40 bytes. */
        uint8_t *q = p + 2u + WISP_TCP_OPT_HDRLEN;
        unsigned max = (room - (unsigned)(p - o) - 2u - WISP_TCP_OPT_HDRLEN) / WISP_TCP_SACK_BLOCK_LEN;
#if WISP_TCP_DSACK
        if (pcb->flags & TF_DSACK) {
            /* RFC 2883 §4: the D-SACK block first (rule 3: the duplicate
             * range), reported in one ACK only (rule 2) */
            q = tcp_put4(q, pcb->dsack);
            q = tcp_put4(q, pcb->dsack + pcb->dsack_len);
            max--;
            pcb->flags &= ~TF_DSACK;
        }
#endif
        q = tcp_sack_blocks(pcb, q, max);
        if (q != p + 2u + WISP_TCP_OPT_HDRLEN) {
            (void)tcp_put4(p, TCP_OPT4(WISP_TCP_OPT_NOP, WISP_TCP_OPT_NOP, WISP_TCP_OPT_SACK, (unsigned)(q - p) - 2u));
            p = q;
        }
    }
#else
    (void)room;
#endif
    return (uint8_t)(p - o);
}

/* ------------------------------------------------- receive budget */

uint16_t tcp_rx_blk(uint16_t mss)
{
    /* A full-size segment of a peer with timestamps, in a frame of
     * link + IP + TCP headers: one block when it fits, else a chain. */
    uint32_t d = mss > WISP_TCP_TS_OPTLEN ? (uint32_t)mss - WISP_TCP_TS_OPTLEN : 1u;
    uint32_t frame = d + WISP_HLEN_LINK + WISP_HLEN_IP4 + WISP_TCP_HLEN + WISP_TCP_TS_OPTLEN;
    uint32_t nb = (frame + WISP_PBUF_BLOCK_SIZE - 1u) / WISP_PBUF_BLOCK_SIZE;
    d /= nb;
    return (uint16_t)(d > 0u ? (d < 65535u ? d : 65535u) : 1u);
}

uint32_t tcp_rx_blocks_avail(struct wisp_stack *s, uint32_t npcbs, uint32_t *share)
{
    const struct wisp_pool *rx = &s->pool[WISP_POOL_PBUF_RX];
    uint32_t free_blk = (uint32_t)rx->count - rx->used;
    uint32_t budget = rx->count > TCP_RX_RESERVE ? (uint32_t)rx->count - TCP_RX_RESERVE : 0u;
    uint32_t sh = budget / (npcbs > 0u ? npcbs : 1u);

    /* A fair share of the budget per connection (at least one block) for
     * what its application holds plus what its window promises: some
     * connections cannot take every block from the others, and all the
     * shares together stay within the budget. */
    *share = sh > 0u ? sh : 1u;
    /* New space never beyond what the free blocks hold, minus the
     * reserve for ACKs and control segments. */
    return free_blk > TCP_RX_RESERVE ? free_blk - TCP_RX_RESERVE : 0u;
}

uint32_t tcp_rcv_right(struct wisp_tcp_pcb *pcb, bool *limited, uint32_t *buf)
{
    struct wisp_stack *s = pcb->c.stack;
    uint32_t blk = pcb->rcv_blk;
    uint32_t wmax = tcp_wnd_max(pcb);
    uint32_t want = WISP_MIN(pcb->rcv_wnd, wmax);
    /* delivered (or refused) and not yet given back with wisp_tcp_recved */
    uint32_t held = pcb->rcv_wnd < pcb->rcv_buf ? (uint32_t)pcb->rcv_buf - pcb->rcv_wnd : 0u;
    uint32_t share, fresh = tcp_rx_blocks_avail(s, s->tcp.npcbs, &share);
    uint32_t hb = (held + blk - 1u) / blk;
    uint32_t by_share = (share > hb ? share - hb : 0u) * blk;
    /* the whole window within the free blocks (what it already promised
     * included: those blocks are free until the data arrives) */
    uint32_t by_free = fresh * blk;
    uint32_t wnd = WISP_MIN(want, WISP_MIN(by_share, by_free));
    /* Held back by blocks in use elsewhere (they free up without any
     * segment of ours), not by the connection's own share. */
    *limited = by_free < WISP_MIN(want, by_share);
    /* (share <= 65535 blocks of rcv_blk <= 65535 bytes: no overflow) */
    *buf = WISP_MIN(wmax, share * blk);
    return pcb->rcv_nxt + wnd;
}

uint16_t tcp_syn_wnd(struct wisp_stack *s, uint32_t want, uint32_t npcbs, uint32_t blk)
{
    uint32_t share, fresh = tcp_rx_blocks_avail(s, npcbs, &share);
    return (uint16_t)WISP_MIN(WISP_MIN(want, 65535u), WISP_MIN(fresh, share) * blk);
}

/* The window was (not) held back by the receive budget: while it is, the
 * output timer comes back to announce the space that frees up (nothing
 * else would: the blocks are freed by other connections' applications). */
/* While the window is held back (pcb->starve), the output timer comes
 * back after the retry time of the backoff step. */
static void tcp_starve_arm(struct wisp_tcp_pcb *pcb)
{
    if (pcb->starve && !tcp_timer_on(pcb, TCP_TMR_OUTPUT)) {
        tcp_timer_set(pcb, TCP_TMR_OUTPUT, TCP_STARVE_RETRY_MS << (pcb->starve - 1u));
    }
}

static void tcp_starve_note(struct wisp_tcp_pcb *pcb, bool limited)
{
    if (!limited) {
        pcb->starve = 0;
        return;
    }
    if (pcb->starve == 0) {
        pcb->starve = 1;
        WISP_CTR_INC(pcb->c.stack, TCP_WND_LIMITED);
    }
    tcp_starve_arm(pcb);
}

/* A window held back by the budget: announce it now when the right edge
 * can move by the receiver SWS threshold and the peer's view of the
 * window has fallen to half the buffer (the wisp_tcp_recved rule); else
 * back off. */
static void tcp_starve_check(struct wisp_tcp_pcb *pcb)
{
    uint32_t wmax; /* the SWS rule's RCV.BUFF (tcp_wnd_field) */
    bool limited;
    uint32_t right = tcp_rcv_right(pcb, &limited, &wmax);
    uint32_t thresh = WISP_MIN(wmax / 2u, (uint32_t)pcb->mss);
    uint32_t adv = TCP_SEQ_GT(pcb->rcv_adv, pcb->rcv_nxt) ? pcb->rcv_adv : pcb->rcv_nxt;

    if (pcb->c.state != WISP_TCP_ESTABLISHED && pcb->c.state != WISP_TCP_FIN_WAIT_1 &&
        pcb->c.state != WISP_TCP_FIN_WAIT_2) {
        pcb->starve = 0;
        return;
    }
    if (TCP_SEQ_GT(right, adv) && right - adv >= thresh && adv - pcb->rcv_nxt <= wmax / 2u) {
        pcb->flags |= TF_ACK_NOW;
        pcb->starve = 1;
    } else if (!limited) {
        pcb->starve = 0;
    } else if (pcb->starve < TCP_STARVE_STEPS) {
        pcb->starve++;
    }
}

/* The window field of an outgoing segment. RFC 9293 §3.8.6.2.2: the
 * right edge moves on only by at least min(RCV.BUFF/2, MSS) (receiver SWS
 * avoidance) and never moves left (RFC 9293 §3.8.6 "shrinking the
 * window" is discouraged); it moves on only as far as the receive budget
 * allows (tcp_rcv_right); RFC 7323 §2.3: scaled by our shift. RCV.BUFF
 * is the buffer the connection may count on, its fair share of the
 * receive budget included (tcp_rcv_right's *buf): with a share of one block
 * (fewer receive blocks than twice the connections) a threshold of a
 * whole MSS could never be met by the share of rcv_blk bytes, and a
 * window once closed would stay closed for good (RFC 1122 §4.2.3.3 takes
 * the threshold as a fraction of the buffer for such small buffers). */
uint16_t tcp_wnd_field(struct wisp_tcp_pcb *pcb)
{
    uint32_t wmax;
    bool limited;
    uint32_t right = tcp_rcv_right(pcb, &limited, &wmax);
    uint32_t adv = pcb->rcv_adv;
    uint32_t thresh = WISP_MIN(wmax / 2u, (uint32_t)pcb->mss);
    uint32_t wnd, field;

    if (TCP_SEQ_LT(adv, pcb->rcv_nxt)) {
        adv = pcb->rcv_nxt;
    }
    if (TCP_SEQ_GT(right, adv) && (right - adv >= thresh || (right - pcb->rcv_nxt >= wmax))) {
        adv = right;
    }
    wnd = adv - pcb->rcv_nxt;
    field = wnd >> TCP_RCV_WS(pcb);
    if (field > 65535u) {
        field = 65535u;
    }
    if (TCP_SEQ_GT(pcb->rcv_nxt + (field << TCP_RCV_WS(pcb)), pcb->rcv_adv)) {
        pcb->rcv_adv = pcb->rcv_nxt + (field << TCP_RCV_WS(pcb));
    }
    tcp_starve_note(pcb, limited);
    return (uint16_t)field;
}

/* SEG.SEQ of a segment without data (ACK, RST): SND.NXT, but never beyond
 * the peer's right edge. After a zero-window probe the peer's RCV.NXT is
 * below SND.NXT, and with its window still zero it accepts only SEG.SEQ =
 * RCV.NXT (RFC 9293 §3.10.7.4 first step; RFC 5961 §3.2 for RST): an ACK
 * at SND.NXT, e.g. our window update, would be dropped there. */
static WISP_NOINLINE uint32_t tcp_acceptable_seq(const struct wisp_tcp_pcb *pcb)
{
    uint32_t edge = pcb->snd_una + pcb->snd_wnd;
    if (tcp_state_synced(pcb->c.state) && TCP_SEQ_LT(edge, pcb->snd_nxt)) {
        return edge;
    }
    return pcb->snd_nxt;
}

/* What one step of the output engine did. */
enum tcp_out_step {
    TCP_OUT_NONE = 0,  /* nothing of this kind to send */
    TCP_OUT_MORE,      /* sent (or re-cut) something: look again */
    TCP_OUT_STOP       /* blocked (window, cwnd, Nagle, buffers): done */
};

/* A local failure (no buffer, full queue): try again shortly. */
static WISP_NOINLINE enum tcp_out_step tcp_output_retry(struct wisp_tcp_pcb *pcb)
{
    tcp_timer_set(pcb, TCP_TMR_OUTPUT, TCP_OUTPUT_RETRY_MS);
    return TCP_OUT_STOP;
}

/* Bookkeeping after any segment carrying our current ACK went out. */
static void tcp_acked_out(struct wisp_tcp_pcb *pcb)
{
    pcb->flags &= ~(TF_ACK_NOW | TF_ACK_DELAY);
    pcb->last_ack_sent = pcb->rcv_nxt; /* (in-order data not ACKed: rcv_nxt - last_ack_sent) */
    tcp_timer_clear(pcb, TCP_TMR_DELACK);
}

/* A segment of a synchronized pcb: its options (timestamps, SACK blocks
 * that fit in room bytes) and window field, then tcp_pcb_xmit. */
static wisp_err_t tcp_pcb_xmit_opts(struct wisp_tcp_pcb *pcb, uint32_t seq, uint8_t flags, unsigned room,
                                    struct wisp_pbuf *data)
{
    uint8_t opt[WISP_TCP_MAX_OPTLEN];
    uint8_t n = tcp_build_opts(pcb, opt, room);
    return tcp_pcb_xmit(pcb, seq, flags, tcp_wnd_field(pcb), opt, n, data);
}

wisp_err_t tcp_send_ack(struct wisp_tcp_pcb *pcb)
{
    wisp_err_t err;

    if (pcb->c.state == WISP_TCP_SYN_RCVD) {
        return tcp_send_syn(pcb);
    }
    err = tcp_pcb_xmit_opts(pcb, tcp_acceptable_seq(pcb), WISP_TCP_FLAG_ACK, WISP_TCP_MAX_OPTLEN, NULL);
    if (err == WISP_OK) {
        tcp_acked_out(pcb);
    } else {
        pcb->flags |= TF_ACK_NOW;
        (void)tcp_output_retry(pcb);
    }
    return err;
}

/* RFC 5961 §3.2 / §4.2 / §5.2 challenge ACK, rate limited (§7). */
void tcp_send_challenge_ack(struct wisp_tcp_pcb *pcb)
{
    if (tcp_challenge_allowed(pcb->c.stack)) {
        WISP_CTR_INC(pcb->c.stack, TCP_CHALLENGE_ACK);
        (void)tcp_send_ack(pcb);
    }
}

void tcp_in_tuple(const struct tcp_in *in, struct tcp_tuple *t)
{
    t->lip = in->ip->dst;
    t->rip = in->ip->src;
    t->lport = in->dport;
    t->rport = in->sport;
}

void tcp_rst_reply(struct wisp_stack *s, const struct tcp_in *in)
{
    struct tcp_tuple t;
    /* <SEQ=0><ACK=SEG.SEQ+SEG.LEN><CTL=RST,ACK>; SYN and FIN count */
    uint32_t seq = 0, ack = in->seq + in->len + ((in->flags & WISP_TCP_FLAG_SYN) ? 1u : 0u) +
                               ((in->flags & WISP_TCP_FLAG_FIN) ? 1u : 0u);
    uint8_t flags = WISP_TCP_FLAG_RST | WISP_TCP_FLAG_ACK;
    if (in->flags & WISP_TCP_FLAG_RST) {
        return; /* RFC 9293 §3.10.7.1: never a RST in reply to a RST */
    }
    if (in->flags & WISP_TCP_FLAG_ACK) {
        /* RFC 9293 §3.10.7.1: <SEQ=SEG.ACK><CTL=RST> (no ACK field) */
        seq = in->ack;
        flags = WISP_TCP_FLAG_RST;
    }
    tcp_in_tuple(in, &t);
    (void)tcp_xmit_raw(s, &t, seq, ack, flags, 0, NULL, 0, NULL, 0, 0);
}

void tcp_send_rst(struct wisp_tcp_pcb *pcb)
{
    (void)tcp_pcb_xmit(pcb, tcp_acceptable_seq(pcb), WISP_TCP_FLAG_RST | WISP_TCP_FLAG_ACK, 0, NULL, 0, NULL);
}

void tcp_rst_close(struct wisp_tcp_pcb *pcb)
{
    tcp_send_rst(pcb);
    pcb->flags |= TF_CLOSED;
    tcp_pcb_release(pcb);
}

wisp_err_t tcp_send_syn(struct wisp_tcp_pcb *pcb)
{
    uint8_t opt[WISP_TCP_MAX_OPTLEN];
    uint8_t n, flags = WISP_TCP_FLAG_SYN;
    uint16_t mss = tcp_mss_ours(pcb); /* (TCP_MAXSEG caps the MSS we announce) */
    /* the window our SYN offered (tcp_connect; RFC 7323 §2.2: never
     * scaled), in a SYN-ACK of a simultaneous open too */
    uint16_t wnd = (uint16_t)WISP_MIN(pcb->rcv_adv - pcb->rcv_nxt, 65535u);
    /* RFC 7323 §2.2 / §3.2, RFC 2018 §2: a SYN offers what we support */
    uint32_t f = TF_WS | TF_SACK | TF_TS, tsecr = 0;
    wisp_err_t err;
    if (pcb->c.state != WISP_TCP_SYN_SENT) {
        /* SYN-ACK of a simultaneous open: answer only what the peer
         * offered. */
        flags |= WISP_TCP_FLAG_ACK;
        f = pcb->flags;
        tsecr = TCP_TS_RECENT(pcb);
    }
    /* (the window a SYN offers was fixed, and promised, at connect) */
    n = tcp_build_syn_opts(opt, mss, (f & TF_WS) ? (uint8_t)TCP_RCV_WS(pcb) : 0xffu, (f & TF_SACK) != 0,
                           (f & TF_TS) != 0, tcp_tsval(pcb), tsecr);
    err = tcp_pcb_xmit(pcb, pcb->iss, flags, wnd, opt, n, NULL);
    /* A SYN or SYN-ACK the stack itself could not send (no buffer, full
     * queue) is no segment lost in the network: try again soon, without
     * backing off the retransmission timer. */
    if (err == WISP_OK) {
        pcb->flags &= ~TF_CTL_UNSENT;
        if (flags & WISP_TCP_FLAG_ACK) {
            tcp_acked_out(pcb);
        } else {
            pcb->rtt_start = wisp_now(pcb->c.stack); /* the latest SYN's time (its TSval's clock) */
        }
    } else {
        pcb->flags |= TF_CTL_UNSENT;
        WISP_CTR_INC(pcb->c.stack, TCP_CTL_LOCAL_RETRY);
        (void)tcp_output_retry(pcb);
    }
    return err;
}

wisp_err_t tcp_send_keepalive(struct wisp_tcp_pcb *pcb)
{
    /* RFC 9293 §3.8.4 / RFC 1122 §4.2.3.6: SEG.SEQ = SND.NXT - 1, no data:
     * the peer answers with an ACK of what it has. */
    return tcp_pcb_xmit_opts(pcb, pcb->snd_nxt - 1u, WISP_TCP_FLAG_ACK, WISP_TCP_MAX_OPTLEN, NULL);
}

/* ----------------------------------------------------- send queue */

uint32_t tcp_seg_max(const struct wisp_tcp_pcb *pcb)
{
    /* RFC 6691 §2: the MSS excludes options; fixed options (timestamps)
     * reduce the data of every segment. */
    uint32_t m = pcb->mss;
    if (pcb->flags & TF_TS) {
        m -= WISP_TCP_TS_OPTLEN;
    }
    return m;
}

static struct wisp_tcp_seg *tcp_seg_alloc(struct wisp_stack *s)
{
    struct wisp_tcp_seg *g = (struct wisp_tcp_seg *)wisp_pool_alloc(&s->pool[WISP_POOL_TCP_SEG]);
    if (g != NULL) {
        memset(g, 0, sizeof(*g));
    }
    return g;
}

static WISP_NOINLINE void tcp_seg_free(struct wisp_stack *s, struct wisp_tcp_seg *g)
{
    wisp_pbuf_free(g->p);
    wisp_pool_free(&s->pool[WISP_POOL_TCP_SEG], g);
}

/* ------------------------------------------------- transmit budget
 * Every queued segment knows the transmit blocks its chain holds
 * (g->nblk, copies of written data and split-off fronts); the PCB sums
 * them (snd_blk) for the fair share of wisp_tcp_write (opt.h,
 * WISP_TCP_SND_MIN_BLOCKS). */

/* Transmit-pool blocks of chain p. */
static uint16_t tcp_chain_txblk(const struct wisp_stack *s, const struct wisp_pbuf *p)
{
    uint32_t n = 0;
    for (; p != NULL; p = p->next) {
        if (p->pool == &s->pool[WISP_POOL_PBUF_TX]) {
            n++;
        }
    }
    return (uint16_t)(n < 0xFFFFu ? n : 0xFFFFu);
}

/* Account g's blocks anew (its chain was built or changed). */
void tcp_seg_account(struct wisp_tcp_pcb *pcb, struct wisp_tcp_seg *g)
{
    uint16_t n = tcp_chain_txblk(pcb->c.stack, g->p);
    pcb->snd_blk = (uint16_t)(pcb->snd_blk - WISP_MIN(pcb->snd_blk, g->nblk) + n);
    g->nblk = n;
}

/* Free a segment of pcb's queue (unlinked by the caller). */
void tcp_seg_drop(struct wisp_tcp_pcb *pcb, struct wisp_tcp_seg *g)
{
    WISP_ASSERT(pcb->snd_blk >= g->nblk);
    pcb->snd_blk = (uint16_t)(pcb->snd_blk - WISP_MIN(pcb->snd_blk, g->nblk));
    tcp_seg_free(pcb->c.stack, g);
}

/* A write was refused below its guarantee (the transmit blocks ran short
 * of the control reserve): zero-window peers that hold blocks for long
 * may be given up on (tcp_persist_give_up). */
static void tcp_tx_short(struct wisp_stack *s)
{
    s->tcp.tx_short = 1;
    s->tcp.tx_short_ms = wisp_now(s);
}

/* May a connection that holds held blocks, and has taken k more for the
 * write in progress (which needs need blocks in all), take one more
 * transmit block now? The rules of opt.h (WISP_TCP_SND_MIN_BLOCKS). */
static bool tcp_tx_may_take(struct wisp_stack *s, uint32_t held, uint32_t k, uint32_t need)
{
    const struct wisp_pool *tx = &s->pool[WISP_POOL_PBUF_TX];
    const uint32_t rsv = TCP_TX_RESERVE + (uint32_t)WISP_TCP_SND_RESERVE_BLOCKS;
    uint32_t h = held + k + 1u, f;

    if (tx->used >= tx->count || (uint32_t)tx->count - tx->used - 1u < TCP_TX_RESERVE) {
        /* the last blocks are left for ACK, RST and retransmission headers */
        WISP_CTR_INC(s, TCP_WRITE_TXRESERVE);
        if (h <= (uint32_t)WISP_TCP_SND_MIN_BLOCKS) {
            tcp_tx_short(s); /* not even the guarantee */
        }
        return false;
    }
    f = (uint32_t)tx->count - tx->used - 1u; /* free after taking it */
    if (h <= (uint32_t)WISP_TCP_SND_MIN_BLOCKS) {
        return true; /* the guarantee (may take the progress reserve) */
    }
    if (need + rsv > (uint32_t)WISP_PBUF_TX_COUNT) {
        /* a write too large for the shared part: whole, but only when
         * nothing else of the connection is queued */
        if (held == 0u) {
            return true;
        }
        WISP_CTR_INC(s, TCP_WRITE_TXSHARE);
        return false;
    }
    if (f < rsv) {
        WISP_CTR_INC(s, TCP_WRITE_TXSHARE); /* the progress reserve */
        return false;
    }
    if ((k == 0u || h == (uint32_t)WISP_TCP_SND_MIN_BLOCKS + 1u) &&
        h - (uint32_t)WISP_TCP_SND_MIN_BLOCKS > f - rsv) {
        /* the fair share, looked at where the write starts (or leaves the
         * guarantee): beyond G no more than stays free for the others */
        WISP_CTR_INC(s, TCP_WRITE_TXSHARE);
        return false;
    }
    return true;
}

void tcp_free_sndq(struct wisp_tcp_pcb *pcb)
{
    struct wisp_tcp_seg *g = pcb->sndq;
    while (g != NULL) {
        struct wisp_tcp_seg *n = g->next;
        tcp_seg_drop(pcb, g);
        g = n;
    }
    WISP_ASSERT(pcb->snd_blk == 0u);
    pcb->snd_blk = 0;
    pcb->sndq = pcb->sndq_tail = pcb->sndq_next = NULL;
    pcb->snd_queued = 0;
}

struct wisp_pbuf *tcp_pbuf_last(struct wisp_pbuf *p)
{
    while (p->next != NULL) {
        p = p->next;
    }
    return p;
}

/* Free bytes after the data of a RAM or pool pbuf we own (written data
 * copies; received data the stack keeps, tcp_rx_append). */
uint32_t tcp_tailroom(const struct wisp_pbuf *p)
{
    const uint8_t *start = (const uint8_t *)p + WISP_PBUF_HDR_SIZE;
    uint32_t cap = p->pool->elem_size - (uint32_t)WISP_PBUF_HDR_SIZE;
    uint32_t used = (uint32_t)(p->payload - start) + p->len;
    if ((p->kind != WISP_PBUF_RAM && p->kind != WISP_PBUF_POOL) || p->ref != 1u || used >= cap) {
        return 0;
    }
    return cap - used;
}

/* Grow the last pbuf of chain h by n bytes (tot_len of every buffer). */
void tcp_chain_grow(struct wisp_pbuf *h, uint16_t n)
{
    struct wisp_pbuf *q;
    for (q = h; q != NULL; q = q->next) {
        q->tot_len = (uint16_t)(q->tot_len + n);
        if (q->next == NULL) {
            q->len = (uint16_t)(q->len + n);
        }
    }
}

/* ------------------------------------------- waiting for buffers
 * A write refused for want of transmit blocks, segments or references
 * (not of send buffer: the sent callback reports that) is retried by the
 * application from its poll callback. So that it need not wait for the
 * poll interval, the connections refused so since are polled soon after
 * other connections' acknowledged data gave buffers back. */

static void tcp_wake_fn(struct wisp_stack *s, struct wisp_timer *t)
{
    const struct wisp_pool *tx = &s->pool[WISP_POOL_PBUF_TX];
    struct wisp_tcp_pcb *pcb;
    WISP_UNUSED(t);
    if ((uint32_t)tx->count - tx->used <= TCP_TX_RESERVE) {
        return; /* still nothing to write into: the next freeing re-arms */
    }
    for (pcb = s->tcp.pcbs; pcb != NULL && s->tcp.mem_waiters > 0; pcb = pcb->next) {
        if (pcb->flags & TF_WRITE_MEM) {
            pcb->flags &= ~TF_WRITE_MEM;
            s->tcp.mem_waiters--;
            if (pcb->poll != NULL && pcb->poll_interval > 0 && !(pcb->flags & TF_CLOSED)) {
                tcp_timer_set(pcb, TCP_TMR_POLL, 0); /* re-armed for its interval when it runs */
            }
        }
    }
}

void tcp_mem_wait(struct wisp_tcp_pcb *pcb)
{
    if (!(pcb->flags & TF_WRITE_MEM)) {
        pcb->flags |= TF_WRITE_MEM;
        pcb->c.stack->tcp.mem_waiters++;
    }
}

void tcp_mem_freed(struct wisp_stack *s)
{
    if (s->tcp.mem_waiters > 0 && !wisp_timer_armed(&s->tcp.wake_tmr)) {
        /* batched: a burst of ACKs wakes the waiters once */
        wisp_timer_arm(s, &s->tcp.wake_tmr, TCP_OUTPUT_RETRY_MS, tcp_wake_fn);
    }
}

/* Append the linked segments first .. last to pcb's send queue (the
 * first unsent one when nothing else is). */
static WISP_NOINLINE void tcp_sndq_append(struct wisp_tcp_pcb *pcb, struct wisp_tcp_seg *first, struct wisp_tcp_seg *last)
{
    if (pcb->sndq_tail == NULL) {
        pcb->sndq = first;
    } else {
        pcb->sndq_tail->next = first;
    }
    pcb->sndq_tail = last;
    if (pcb->sndq_next == NULL) {
        pcb->sndq_next = first;
    }
}

/* Segment size used when writing: the send MSS once known. */
static WISP_NOINLINE uint32_t tcp_write_mss(const struct wisp_tcp_pcb *pcb)
{
    if (pcb->c.state == WISP_TCP_CLOSED || pcb->c.state == WISP_TCP_SYN_SENT || pcb->c.state == WISP_TCP_SYN_RCVD) {
        return (uint32_t)WISP_TCP_MSS - (WISP_TCP_TIMESTAMPS ? WISP_TCP_TS_OPTLEN : 0u);
    }
    return tcp_seg_max(pcb);
}

/* A write being taken into the send queue (wisp_tcp_write). */
struct tcp_write {
    const uint8_t *src;
    uint32_t len;
    uint32_t segmax;              /* data bytes per segment */
    bool copy;                    /* WISP_TCP_WRITE_COPY */
    uint32_t need;                /* transmit blocks the copies need (transmit budget) */
    uint32_t taken;               /* transmit blocks taken so far */
    struct wisp_tcp_seg *tail;    /* the last unsent segment, when it takes data */
    uint32_t n_tail;              /* bytes it takes */
    struct wisp_pbuf *tail_ref;   /* their reference (no copy) */
    struct wisp_tcp_seg *head, *last; /* the new segments */
};

/* Whether a write of len bytes can be taken: WISP_ERR_VAL when it could
 * never be taken whole, not even with the send buffer, the segment pool
 * and the transmit blocks all free (the caller splits it); WISP_ERR_MEM
 * only when it may fit later. Sets w->need. */
static wisp_err_t tcp_write_fits(const struct wisp_tcp_pcb *pcb, struct tcp_write *w)
{
    uint32_t nseg, per_seg = (w->segmax + WISP_PBUF_BLOCK_SIZE - 1u) / WISP_PBUF_BLOCK_SIZE;
    if (w->len > (uint32_t)WISP_TCP_SND_BUF) {
        return WISP_ERR_VAL;
    }
    nseg = (w->len + w->segmax - 1u) / w->segmax;
    if (nseg > (uint32_t)WISP_TCP_SEG_COUNT ||
        (w->copy && nseg * per_seg + TCP_TX_RESERVE > (uint32_t)WISP_PBUF_TX_COUNT)) {
        return WISP_ERR_VAL;
    }
    w->need = w->copy ? nseg * per_seg : 0u;
    if (w->len > pcb->snd_buf) {
        return WISP_ERR_VAL; /* never fits the connection's send buffer (SO_SNDBUF) */
    }
    if (pcb->snd_queued >= pcb->snd_buf || w->len > (uint32_t)pcb->snd_buf - pcb->snd_queued) {
        return WISP_ERR_MEM;
    }
    return WISP_OK;
}

/* 1. Room in the last unsent segment (small writes are coalesced into
 * full-size segments). False when the reference could not be allocated
 * (counted; the writer waits for buffers). */
static bool tcp_write_tail(struct wisp_tcp_pcb *pcb, struct tcp_write *w)
{
    struct wisp_stack *s = pcb->c.stack;
    struct wisp_tcp_seg *tail = pcb->sndq_tail;
    if (tail != NULL && !(tail->flags & (TCP_SEGF_SENT | TCP_SEGF_FIN)) && tail->len < w->segmax) {
        w->tail = tail;
        if (w->copy) {
            if ((tail->flags & TCP_SEGF_COPY) && tail->p != NULL) {
                uint32_t room = WISP_MIN(tcp_tailroom(tcp_pbuf_last(tail->p)), w->segmax - tail->len);
                w->n_tail = WISP_MIN(room, w->len);
            }
        } else {
            w->n_tail = WISP_MIN(w->segmax - tail->len, w->len);
            w->tail_ref = wisp_pbuf_alloc_ref(s, w->src, (uint16_t)w->n_tail, WISP_PBUF_ROM);
            if (w->tail_ref == NULL) {
                WISP_CTR_INC(s, TCP_DROP_NOMEM);
                tcp_mem_wait(pcb);
                return false;
            }
        }
    }
    return true;
}

/* Copy n bytes from w->src + off into new RAM blocks of segment g, within
 * the transmit budget. False when out of blocks. */
static bool tcp_write_copy_seg(struct wisp_tcp_pcb *pcb, struct tcp_write *w, struct wisp_tcp_seg *g, uint32_t off,
                               uint32_t n)
{
    struct wisp_stack *s = pcb->c.stack;
    uint32_t left = n, at = 0;
    while (left > 0) {
        uint32_t chunk = WISP_MIN(w->segmax, (uint32_t)WISP_PBUF_BLOCK_SIZE);
        uint32_t k = WISP_MIN(left, chunk);
        struct wisp_pbuf *q;
        /* the transmit budget: the control reserve, the
         * guarantee, the progress reserve, the fair share */
        if (!tcp_tx_may_take(s, pcb->snd_blk, w->taken, w->need)) {
            return false;
        }
        q = wisp_pbuf_alloc(s, WISP_LAYER_RAW, (uint16_t)chunk, WISP_PBUF_RAM);
        if (q == NULL) {
            if (pcb->snd_blk + w->taken < (uint32_t)WISP_TCP_SND_MIN_BLOCKS) {
                tcp_tx_short(s);
            }
            return false;
        }
        if (q->pool == &s->pool[WISP_POOL_PBUF_TX]) {
            w->taken++;
        }
        q->len = q->tot_len = (uint16_t)k;
        wisp_memcpy(q->payload, w->src + off + at, k);
        if (g->p == NULL) {
            g->p = q;
        } else {
            wisp_pbuf_cat(g->p, q);
        }
        at += k;
        left -= k;
    }
    g->flags |= TCP_SEGF_COPY;
    return true;
}

/* 2. New segments for the rest; everything allocated before anything
 * is committed, so a failure leaves the queue unchanged. False when out
 * of segments or buffers (what was allocated stays in w for
 * tcp_write_abandon). */
static WISP_NOINLINE bool tcp_write_segs(struct wisp_tcp_pcb *pcb, struct tcp_write *w)
{
    struct wisp_stack *s = pcb->c.stack;
    uint32_t rest = w->len - w->n_tail;
    uint32_t off = w->n_tail;
    while (rest > 0) {
        uint32_t n = WISP_MIN(rest, w->segmax);
        struct wisp_tcp_seg *g = tcp_seg_alloc(s);
        if (g == NULL) {
            return false;
        }
        if (w->last == NULL) {
            w->head = g;
        } else {
            w->last->next = g;
        }
        w->last = g;
        g->len = (uint16_t)n;
        if (w->copy) {
            if (!tcp_write_copy_seg(pcb, w, g, off, n)) {
                return false;
            }
        } else {
            g->p = wisp_pbuf_alloc_ref(s, w->src + off, (uint16_t)n, WISP_PBUF_ROM);
            if (g->p == NULL) {
                return false;
            }
        }
        off += n;
        rest -= n;
    }
    return true;
}

/* 3. Commit: the tail's share, the new segments at the end of the queue,
 * PSH or MORE on the last one. */
static void tcp_write_commit(struct wisp_tcp_pcb *pcb, struct tcp_write *w, uint8_t flags)
{
    struct wisp_tcp_seg *tail = w->tail, *g;
    if (w->n_tail > 0) {
        if (w->copy) {
            struct wisp_pbuf *lp = tcp_pbuf_last(tail->p);
            wisp_memcpy(lp->payload + lp->len, w->src, w->n_tail);
            tcp_chain_grow(tail->p, (uint16_t)w->n_tail);
        } else {
            if (tail->p == NULL) {
                tail->p = w->tail_ref;
            } else {
                wisp_pbuf_cat(tail->p, w->tail_ref);
            }
            tail->flags &= (uint8_t)~TCP_SEGF_COPY;
        }
        tail->len = (uint16_t)(tail->len + w->n_tail);
        tail->flags &= (uint8_t)~(TCP_SEGF_PSH | TCP_SEGF_MORE);
    }
    {
        uint32_t seq = pcb->snd_lbb + w->n_tail;
        for (g = w->head; g != NULL; g = g->next) {
            g->seq = seq;
            seq += g->len;
            tcp_seg_account(pcb, g);
        }
    }
    if (w->head != NULL) {
        tcp_sndq_append(pcb, w->head, w->last);
    }
    if (pcb->sndq_next == NULL && w->n_tail > 0) {
        pcb->sndq_next = tail;
    }
    /* RFC 9293 §3.9.1 SEND: PUSH on the last segment of the write unless
     * more follows. */
    g = pcb->sndq_tail;
    g->flags |= (flags & WISP_TCP_WRITE_MORE) ? TCP_SEGF_MORE : TCP_SEGF_PSH;
    pcb->snd_lbb += w->len;
    pcb->snd_queued += w->len;
}

/* Out of buffers: free what the write allocated (the queue is unchanged),
 * count it, and let the writer wait for buffers. */
static wisp_err_t tcp_write_abandon(struct wisp_tcp_pcb *pcb, struct tcp_write *w)
{
    struct wisp_stack *s = pcb->c.stack;
    struct wisp_tcp_seg *g;
    while (w->head != NULL) {
        g = w->head->next;
        tcp_seg_free(s, w->head);
        w->head = g;
    }
    wisp_pbuf_free(w->tail_ref);
    WISP_CTR_INC(s, TCP_DROP_NOMEM);
    tcp_mem_wait(pcb);
    return WISP_ERR_MEM;
}

wisp_err_t wisp_tcp_write(struct wisp_tcp_pcb *pcb, const void *data, uint32_t len, uint8_t flags)
{
    struct tcp_write w;
    wisp_err_t err;

    WISP_CORE_ASSERT_OWNER(tcp_stack_of(pcb));
    if (pcb == NULL) {
        return WISP_ERR_CONN;
    }
    /* (read through the common head: pcb may be a listener) */
    switch (((const struct wisp_tcp_common *)(const void *)pcb)->state) {
    case WISP_TCP_SYN_SENT:
    case WISP_TCP_SYN_RCVD:
    case WISP_TCP_ESTABLISHED:
    case WISP_TCP_CLOSE_WAIT:
        break;
    default:
        return WISP_ERR_CONN; /* RFC 9293 §3.10.2: "connection closing" / not open */
    }
    if (pcb->flags & (TF_FIN_QUEUED | TF_CLOSED)) {
        return WISP_ERR_CONN;
    }
    if (len == 0) {
        return WISP_OK;
    }
    if (data == NULL) {
        return WISP_ERR_ARG;
    }
    memset(&w, 0, sizeof(w));
    w.src = (const uint8_t *)data;
    w.len = len;
    w.copy = (flags & WISP_TCP_WRITE_COPY) != 0;
    w.segmax = tcp_write_mss(pcb);
    err = tcp_write_fits(pcb, &w);
    if (err != WISP_OK) {
        return err;
    }
    if (!tcp_write_tail(pcb, &w)) {
        return WISP_ERR_MEM;
    }
    if (!tcp_write_segs(pcb, &w)) {
        return tcp_write_abandon(pcb, &w);
    }
    tcp_write_commit(pcb, &w, flags);
    /* "at the latest when the stack next runs" */
    tcp_timer_set(pcb, TCP_TMR_OUTPUT, 0);
    return WISP_OK;
}

uint32_t wisp_tcp_sndbuf(const struct wisp_tcp_pcb *pcb)
{
    const struct wisp_tcp_common *c = (const struct wisp_tcp_common *)(const void *)pcb;
    WISP_CORE_ASSERT_OWNER(tcp_stack_of(pcb));
    if (c->state == WISP_TCP_LISTEN) {
        return 0;
    }
    return pcb->snd_queued < pcb->snd_buf ? (uint32_t)pcb->snd_buf - pcb->snd_queued : 0u;
}

/* Queue a FIN (flag on the last unsent segment or an empty segment). */
static wisp_err_t tcp_queue_fin(struct wisp_tcp_pcb *pcb)
{
    struct wisp_tcp_seg *tail = pcb->sndq_tail;
    if (pcb->flags & TF_FIN_QUEUED) {
        return WISP_OK;
    }
    if (tail != NULL && !(tail->flags & TCP_SEGF_SENT)) {
        tail->flags |= TCP_SEGF_FIN;
    } else {
        struct wisp_tcp_seg *g = tcp_seg_alloc(pcb->c.stack);
        if (g == NULL) {
            WISP_CTR_INC(pcb->c.stack, TCP_DROP_NOMEM);
            return WISP_ERR_MEM;
        }
        g->seq = pcb->snd_lbb;
        g->flags = TCP_SEGF_FIN | TCP_SEGF_PSH;
        tcp_sndq_append(pcb, g, g);
    }
    pcb->snd_lbb += 1u; /* RFC 9293 §3.4: the FIN occupies a sequence number */
    pcb->flags |= TF_FIN_QUEUED;
    return WISP_OK;
}

/* RFC 9293 §3.10.4 CLOSE, the sending half: our FIN queued, ESTABLISHED
 * -> FIN-WAIT-1, CLOSE-WAIT -> LAST-ACK; SYN-RECEIVED: the FIN is "queued
 * for processing after entering ESTABLISHED state" (tcp_in.c makes it
 * FIN-WAIT-1 then). WISP_ERR_CONN in the other states (nothing done),
 * WISP_ERR_MEM when the FIN could not be queued. */
wisp_err_t tcp_close_tx(struct wisp_tcp_pcb *pcb)
{
    wisp_err_t err;
    if (pcb->c.state != WISP_TCP_SYN_RCVD && pcb->c.state != WISP_TCP_ESTABLISHED &&
        pcb->c.state != WISP_TCP_CLOSE_WAIT) {
        return WISP_ERR_CONN;
    }
    err = tcp_queue_fin(pcb);
    if (err == WISP_OK && pcb->c.state != WISP_TCP_SYN_RCVD) {
        pcb->c.state = (pcb->c.state == WISP_TCP_CLOSE_WAIT) ? (uint8_t)WISP_TCP_LAST_ACK
                                                              : (uint8_t)WISP_TCP_FIN_WAIT_1;
    }
    return err;
}

struct wisp_tcp_seg *tcp_seg_copy(struct wisp_stack *s, const struct wisp_tcp_seg *g, uint32_t off, uint32_t n)
{
    struct wisp_tcp_seg *a = tcp_seg_alloc(s);
    if (a != NULL) {
        a->p = wisp_pbuf_alloc(s, WISP_LAYER_RAW, (uint16_t)n, WISP_PBUF_RAM);
        if (a->p == NULL) {
            wisp_pool_free(&s->pool[WISP_POOL_TCP_SEG], a);
            return NULL;
        }
        (void)wisp_pbuf_copy_out(g->p, a->p->payload, (uint16_t)n, (uint16_t)off);
        a->seq = g->seq + off;
        a->len = (uint16_t)n;
    }
    return a;
}

struct wisp_tcp_seg **tcp_seg_pp(struct wisp_tcp_pcb *pcb, const struct wisp_tcp_seg *g)
{
    struct wisp_tcp_seg **pp;
    for (pp = &pcb->sndq; *pp != NULL && *pp != g; pp = &(*pp)->next) {
    }
    return pp;
}

/* Split the first n bytes (0 < n < g->len) of the unsent segment g into
 * a new segment in front of it (a copy). False when out of memory. */
bool tcp_seg_split(struct wisp_tcp_pcb *pcb, struct wisp_tcp_seg *g, uint32_t n)
{
    struct wisp_tcp_seg *a = tcp_seg_copy(pcb->c.stack, g, 0, n), **pp;

    if (a == NULL) {
        WISP_CTR_INC(pcb->c.stack, TCP_DROP_NOMEM);
        return false;
    }
    a->flags = TCP_SEGF_PSH;
    g->p = tcp_pbuf_skip(g->p, n); /* g is unsent: its buffers are ours alone */
    g->seq += n;
    g->len = (uint16_t)(g->len - n);
    tcp_seg_account(pcb, a);
    tcp_seg_account(pcb, g);
    pp = tcp_seg_pp(pcb, g);
    a->next = g;
    *pp = a;
    if (pcb->sndq_next == g) {
        pcb->sndq_next = a;
    }
    return true;
}

/* RFC 6675 §2 "pipe": bytes thought to be in the network -- sent, not
 * SACKed, and not lost unless retransmitted. */
static uint32_t tcp_pipe(const struct wisp_tcp_pcb *pcb)
{
    const struct wisp_tcp_seg *g;
    uint32_t pipe = 0;
    for (g = pcb->sndq; g != NULL && g != pcb->sndq_next; g = g->next) {
        if ((g->flags & TCP_SEGF_SENT) && !(g->flags & TCP_SEGF_SACKED) &&
            (!(g->flags & TCP_SEGF_LOST) || (g->flags & TCP_SEGF_RTXD))) {
            pipe += g->len + ((g->flags & TCP_SEGF_FIN) ? 1u : 0u);
        }
    }
    return pipe;
}

/* Transmit segment g (first time or retransmission). */
wisp_err_t tcp_send_seg(struct wisp_tcp_pcb *pcb, struct wisp_tcp_seg *g, bool rtx)
{
    struct wisp_stack *s = pcb->c.stack;
    uint8_t flags = WISP_TCP_FLAG_ACK;
    unsigned room = WISP_TCP_MAX_OPTLEN;
    wisp_err_t err;

    if (g->len + room > pcb->mss) {
        room = pcb->mss > g->len ? (unsigned)pcb->mss - g->len : 0u; /* RFC 6691: data + options <= MSS */
    }
    /* Timestamps go on every segment once negotiated (segments are cut
     * for them: tcp_seg_max); SACK blocks only where they fit -- without
     * timestamps a full-size segment has no room for any (the old floor
     * of 12 bytes let one SACK block push it past the MTU). */
    if ((pcb->flags & TF_TS) && room < WISP_TCP_TS_OPTLEN) {
        room = WISP_TCP_TS_OPTLEN;
    }
    if (g->flags & TCP_SEGF_FIN) {
        flags |= WISP_TCP_FLAG_FIN;
    }
    if (g->flags & (TCP_SEGF_PSH | TCP_SEGF_FIN)) {
        flags |= WISP_TCP_FLAG_PSH;
    }
    err = tcp_pcb_xmit_opts(pcb, g->seq, flags, room, g->p);
    if (err != WISP_OK) {
        return err;
    }
    g->sent_ms = wisp_now(s);
    tcp_acked_out(pcb);
    if (!rtx) {
        uint32_t end = tcp_seg_end(g);
        g->flags |= TCP_SEGF_SENT;
        if (TCP_SEQ_GT(end, pcb->snd_nxt)) {
            pcb->snd_nxt = end;
        }
        pcb->sndq_next = g->next;
        if (g->len < tcp_seg_max(pcb)) {
            pcb->snd_sml = end;
        }
        /* RFC 6298 §3 (Karn): time one segment at a time when there are
         * no timestamps to measure with. */
        if (!(pcb->flags & (TF_RTT | TF_TS)) && g->len > 0) {
            pcb->flags |= TF_RTT;
            pcb->rtt_seq = g->seq;
            pcb->rtt_start = g->sent_ms;
        }
    } else {
        g->flags |= TCP_SEGF_RTXD;
        if (g->nrtx < 255u) {
            g->nrtx++;
        }
        TCP_STAT_ADD(pcb, st_retransmits, 1u);
        WISP_CTR_INC(s, TCP_RETRANSMIT);
        pcb->flags &= ~TF_RTT; /* Karn: no sample across a retransmission */
    }
    if (!tcp_timer_on(pcb, TCP_TMR_RTO) && !(pcb->flags & TF_PERSIST)) {
        tcp_rto_arm(pcb); /* RFC 6298 §5.1 */
    }
    return WISP_OK;
}

/* Send g (a retransmission when rtx) and count it in the pipe. */
static enum tcp_out_step tcp_output_seg(struct wisp_tcp_pcb *pcb, struct wisp_tcp_seg *g, bool rtx, uint32_t *pipe)
{
    if (tcp_send_seg(pcb, g, rtx) != WISP_OK) {
        return tcp_output_retry(pcb);
    }
    *pipe += g->len + ((g->flags & TCP_SEGF_FIN) ? 1u : 0u);
    return TCP_OUT_MORE;
}

/* Output of SYN-SENT / SYN-RECEIVED: a SYN or SYN-ACK that never left
 * (local failure), or the SYN-ACK again for a retransmitted SYN. */
static void tcp_output_ctl(struct wisp_tcp_pcb *pcb)
{
    if ((pcb->flags & TF_CTL_UNSENT) || (pcb->c.state == WISP_TCP_SYN_RCVD && (pcb->flags & TF_ACK_NOW))) {
        bool unsent = (pcb->flags & TF_CTL_UNSENT) != 0;
        if (tcp_send_syn(pcb) == WISP_OK && unsent) {
            /* it left only now: the timer starts from here (a SYN's
             * rtt_start: tcp_send_syn) */
            tcp_rto_arm(pcb);
        }
    }
}

/* 1. Retransmit the first segment deemed lost (RFC 6675 §4 NextSeg rule
 * 1; RFC 6582 §3.2; after an RTO, RFC 5681 §3.1 go back from SND.UNA), as
 * the congestion window allows; a fast retransmission goes out regardless
 * (RFC 5681 §3.2 step 2). The scan resumes where the last one stopped
 * (*lost). */
static enum tcp_out_step tcp_output_rtx(struct wisp_tcp_pcb *pcb, struct wisp_tcp_seg **lost, uint32_t *pipe,
                                        uint32_t smss)
{
    struct wisp_tcp_seg *g;
    for (; *lost != NULL && *lost != pcb->sndq_next; *lost = (*lost)->next) {
        if (((*lost)->flags & (TCP_SEGF_LOST | TCP_SEGF_RTXD | TCP_SEGF_SACKED)) == TCP_SEGF_LOST) {
            break;
        }
    }
    if (*lost == NULL || *lost == pcb->sndq_next) {
        return TCP_OUT_NONE;
    }
    if ((*lost)->len > smss && !tcp_pmtu_recut(pcb, lost) && !(pcb->flags & TF_RTO_RTX)) {
        /* cut before the path MTU fell (tcp_icmp.c): no buffer
         * for the pieces now. Only the retransmission timeout's own
         * run sends it whole instead: the blocks the pieces need may be
         * held by connections that wait in the same way (each holding
         * its transmit share), and a retransmission that never leaves
         * would stall them all until they give up; at its old size it
         * gets through when the black hole was random loss (RFC 4821
         * §7.5's guess), and the next timeout tries the cut again. */
        return tcp_output_retry(pcb);
    }
    g = *lost;
    if (!(pcb->flags & TF_FORCE_RTX) && *pipe + g->len > pcb->cwnd) {
        return TCP_OUT_STOP;
    }
    pcb->flags &= ~TF_FORCE_RTX;
    return tcp_output_seg(pcb, g, true, pipe);
}

/* RFC 896 / RFC 1122 §4.2.3.4 (Nagle), in Minshall's variant (as Linux):
 * a short segment waits while an earlier short segment is
 * unacknowledged, so the tail of a large write is not held behind full
 * segments (no stall against the peer's delayed ACK). WISP_TCP_WRITE_MORE
 * holds it while anything is unacknowledged, even with Nagle off. True
 * when the short last segment g waits. */
static bool tcp_nagle_holds(const struct wisp_tcp_pcb *pcb, const struct wisp_tcp_seg *g, uint32_t smss)
{
    if (g->len < smss && !(g->flags & TCP_SEGF_FIN) && g->next == NULL) {
        if ((g->flags & TCP_SEGF_MORE) && pcb->snd_nxt != pcb->snd_una) {
            return true;
        }
        if (!(pcb->flags & TF_NODELAY) && TCP_SEQ_GT(pcb->snd_sml, pcb->snd_una)) {
            return true;
        }
    }
    return false;
}

/* 2. New data, as the send window (with sender SWS avoidance), the
 * congestion window (with limited transmit) and Nagle allow.
 * *wnd_blocked: the send window stopped it. */
static enum tcp_out_step tcp_output_new(struct wisp_tcp_pcb *pcb, uint32_t *pipe, uint32_t smss, bool *wnd_blocked)
{
    struct wisp_tcp_seg *g = pcb->sndq_next;
    int32_t usable;
    uint32_t cw, cw_room;

    if (g == NULL || (pcb->flags & TF_PERSIST)) {
        return TCP_OUT_STOP;
    }
    if (g->len > smss) {
        /* written before the MSS was known */
        return tcp_seg_split(pcb, g, smss) ? TCP_OUT_MORE : tcp_output_retry(pcb);
    }
    usable = TCP_SEQ_DIFF(pcb->snd_una + pcb->snd_wnd, g->seq);
    /* RFC 3042: limited transmit, one new segment per of the first two
     * duplicate ACKs. */
    cw = pcb->cwnd;
    if (!(pcb->flags & TF_RECOVERY) && pcb->dupacks > 0 && pcb->dupacks < TCP_DUPTHRESH) {
        cw += (uint32_t)pcb->dupacks * smss;
    }
    cw_room = cw > *pipe ? cw - *pipe : 0u;
    if (usable < (int32_t)g->len) {
        /* RFC 9293 §3.8.6.2.1 (sender SWS avoidance): a part of the
         * segment only when it is at least half the largest window
         * the peer offered. */
        if (usable > 0 && (uint32_t)usable >= pcb->max_snd_wnd / 2u && (uint32_t)usable <= cw_room &&
            (uint32_t)usable < g->len) {
            return tcp_seg_split(pcb, g, (uint32_t)usable) ? TCP_OUT_MORE : tcp_output_retry(pcb);
        }
        *wnd_blocked = true;
        return TCP_OUT_STOP;
    }
    if (g->len > cw_room) {
        return TCP_OUT_STOP; /* RFC 5681 §3.1: congestion window full */
    }
    if (tcp_nagle_holds(pcb, g, smss)) {
        return TCP_OUT_STOP;
    }
    return tcp_output_seg(pcb, g, false, pipe);
}

/* After the segments: an ACK nothing carried, persist mode for a window
 * that blocked everything, the timers. */
static void tcp_output_finish(struct wisp_tcp_pcb *pcb, bool wnd_blocked)
{
    if (pcb->flags & TF_ACK_NOW) {
        (void)tcp_send_ack(pcb); /* nothing carried the ACK */
    }
    if (pcb->snd_una == pcb->snd_nxt) {
        tcp_timer_clear(pcb, TCP_TMR_RTO);
        if (wnd_blocked && pcb->sndq_next != NULL && !(pcb->flags & TF_PERSIST)) {
            /* RFC 9293 §3.8.6.1: probe a zero (or useless) window. */
            pcb->flags |= TF_PERSIST;
            pcb->persist_backoff = 0;
            pcb->nrtx = 0;
            pcb->persist_ms = wisp_now(pcb->c.stack);
            pcb->persist_next = pcb->persist_ms + WISP_MAX(pcb->rto, (uint32_t)WISP_TCP_RTO_MIN_MS);
            tcp_timer_set(pcb, TCP_TMR_PERSIST, WISP_MAX(pcb->rto, (uint32_t)WISP_TCP_RTO_MIN_MS));
        }
    }
    tcp_starve_arm(pcb);
}

void tcp_output_run(struct wisp_tcp_pcb *pcb)
{
    struct wisp_tcp_seg *lost;
    unsigned guard;
    uint32_t pipe;
    bool wnd_blocked = false;

    if (pcb->flags & TF_DEAD) {
        return;
    }
    pcb->flags &= ~TF_OUTPUT_PENDING;
    tcp_timer_clear(pcb, TCP_TMR_OUTPUT);
    switch (pcb->c.state) {
    case WISP_TCP_SYN_SENT:
    case WISP_TCP_SYN_RCVD:
        tcp_output_ctl(pcb);
        return;
    case WISP_TCP_ESTABLISHED:
    case WISP_TCP_FIN_WAIT_1:
    case WISP_TCP_FIN_WAIT_2:
    case WISP_TCP_CLOSE_WAIT:
    case WISP_TCP_CLOSING:
    case WISP_TCP_LAST_ACK:
        break;
    default:
        return;
    }

    if (pcb->flags & TF_PMTU_LOW) {
        tcp_pmtu_check(pcb); /* RFC 1191 §6.3: raise again after a while */
    }
    if (pcb->starve) {
        tcp_starve_check(pcb);
    }
    /* Without SACKed or lost segments, every sent segment is in the
     * network (pipe = SND.NXT - SND.UNA) and there is nothing to
     * retransmit: no walk over the send queue. */
    if (pcb->flags & TF_SCOREBOARD) {
        pipe = tcp_pipe(pcb);
        lost = pcb->sndq;
    } else {
        pipe = pcb->snd_nxt - pcb->snd_una;
        lost = pcb->sndq_next;
    }
    for (guard = 0; guard < 2u * WISP_TCP_SEG_COUNT + 8u; guard++) {
        uint32_t smss = tcp_seg_max(pcb);
        enum tcp_out_step st = tcp_output_rtx(pcb, &lost, &pipe, smss);
        if (st == TCP_OUT_NONE) {
            pcb->flags &= ~TF_FORCE_RTX;
            st = tcp_output_new(pcb, &pipe, smss, &wnd_blocked);
        }
        if (st == TCP_OUT_STOP) {
            break;
        }
    }
    tcp_output_finish(pcb, wnd_blocked);
}

void tcp_output_soon(struct wisp_tcp_pcb *pcb)
{
    if (tcp_in_proc(pcb)) {
        /* A callback of the segment (or timer) being processed: the
         * window, SND.UNA and the congestion state may not all be up to
         * date yet; the processor runs output when it is done. */
        pcb->flags |= TF_OUTPUT_PENDING;
        return;
    }
    tcp_output_run(pcb);
}

wisp_err_t wisp_tcp_output(struct wisp_tcp_pcb *pcb)
{
    WISP_CORE_ASSERT_OWNER(tcp_stack_of(pcb));
    if (pcb == NULL || tcp_is_listen(pcb)) {
        return WISP_ERR_CONN;
    }
    tcp_output_soon(pcb);
    return WISP_OK;
}

#else
typedef int wisp_tcp_out_disabled_t;
#endif /* WISP_TCP */
