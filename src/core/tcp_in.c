/**
 * @file tcp_in.c
 * TCP input: validation of received segments (length, data offset,
 * checksum, options), demultiplexing (connections, TIME-WAIT records, the
 * SYN queue, listeners, else a RST), and the event processing of RFC 9293
 * §3.10.7 for connections: SYN-SENT, the sequence and timestamp checks,
 * RST/SYN/ACK handling with the RFC 5961 mitigations, in-order delivery to
 * the application (zero-copy, with refused data kept and retried), the
 * out-of-order queue with SACK information, FIN processing and the
 * delayed-ACK policy.
 *
 * Reading list -- the rules implemented here, cited at the lines:
 *  - RFC 9293 Transmission Control Protocol: §3.1 header, §3.2 options,
 *    §3.3.2 state machine, §3.4 sequence numbers, §3.5 establishment
 *    (incl. simultaneous open), §3.6 closing (simultaneous close,
 *    half-close), §3.8.6 window management, §3.10.7 SEGMENT ARRIVES.
 *  - RFC 1122 §4.2: host requirements for TCP (§4.2.2.13 closing with
 *    pending data, §4.2.3.2 delayed ACK, §4.2.3.10 broadcast SYNs).
 *  - RFC 5961: blind in-window attacks -- §3 RST, §4 SYN, §5 ACK
 *    validation, §7 challenge-ACK throttling.
 *  - RFC 7323: window scaling (§2), timestamps and RTTM (§3, §4), PAWS
 *    (§5).
 *  - RFC 2018 (SACK option) and RFC 6675 (SACK-based loss recovery).
 *  - RFC 5681 §4.2: generating ACKs (every second full-size segment,
 *    immediately for out-of-order data and for data filling a gap).
 *  - RFC 6191: reuse of TIME-WAIT with timestamps (tcp.c).
 *  - RFC 4987: SYN cookies (tcp.c).
 *  - RFC 1337: TIME-WAIT assassination (tcp.c).
 *
 * Parse, then act: the header is copied out after its length was checked,
 * options are parsed with every length checked before use, every bad
 * segment is dropped and counted; no wire value is asserted.
 *
 * Choices:
 *  - Refused data is kept as a short queue of pbuf chains (each within a
 *    chain's 65535 bytes, WISP_TCP_REFUSED_SLOTS of them: a window's worth),
 *    so nothing in the window is dropped behind it.
 *  - In-order data that would leave fewer than half of TCP_RX_RESERVE
 *    receive blocks free is dropped (counted; the peer resends): the
 *    window promised full-size segments, so this only happens with smaller
 *    segments or blocks held elsewhere, and the reserve must stay for the
 *    ACKs that free the transmit blocks.
 *  - A busy connection's PCB moves to the front of the list when a segment
 *    finds it (the lookup is a linear scan).
 *  - The out-of-order queue is bounded per connection
 *    (WISP_TCP_OOSEQ_MAX_PBUFS) and, over all connections, never takes the
 *    last quarter (at least 2) of the receive blocks, so the segments that
 *    fill the gaps can always be received.
 *  - Once timestamps are negotiated, non-RST segments without them are
 *    dropped (RFC 7323 §3.2 SHOULD); TIME-WAIT follows RFC 1337.
 *  - URG is ignored (urgent data is delivered as normal data).
 *  - Out-of-order data triggers an immediate ACK; a pure ACK ahead of
 *    RCV.NXT does not (two such ACKs would bounce forever).
 */
#include "tcp_priv.h"

#if WISP_TCP

/* -------------------------------------------------------- helpers */

struct wisp_pbuf *tcp_pbuf_skip(struct wisp_pbuf *p, uint32_t n)
{
    while (p != NULL && n > 0) {
        struct wisp_pbuf *next;
        if (n < p->len) {
            (void)wisp_pbuf_pop(p, (uint16_t)n);
            return p;
        }
        n -= p->len;
        next = p->next;
        p->next = NULL; /* p held the only reference to next: it is ours now */
        wisp_pbuf_free(p);
        p = next;
    }
    while (p != NULL && p->len == 0) {
        struct wisp_pbuf *next = p->next;
        p->next = NULL;
        wisp_pbuf_free(p);
        p = next;
    }
    return p;
}

/* Keep the first n bytes of p (NULL when n is 0). */
static struct wisp_pbuf *tcp_pbuf_keep(struct wisp_pbuf *p, uint32_t n)
{
    if (p == NULL) {
        return NULL;
    }
    if (n == 0) {
        wisp_pbuf_free(p);
        return NULL;
    }
    if (n < p->tot_len) {
        wisp_pbuf_trim(p, (uint16_t)n);
    }
    return p;
}

/* RFC 9293 §3.2: options. Every option but EOL and NOP has a length octet
 * counting kind and length; the length octet must be present and >= 2
 * (a length of 0 or 1 would loop forever), and the option must fit.
 * Malformed lists end parsing (counted); unknown options are skipped. */
static void tcp_parse_opts(struct wisp_stack *s, const uint8_t *o, unsigned n, bool syn, struct tcp_opts *opt)
{
    unsigned i = 0;
    memset(opt, 0, sizeof(*opt));
    opt->ws = 0xffu;
    while (i < n) {
        unsigned kind = o[i], len;
        if (kind == TCP_OPT_EOL) {
            break;
        }
        if (kind == TCP_OPT_NOP) {
            i++;
            continue;
        }
        if (i + 1u >= n) {
            WISP_CTR_INC(s, TCP_BADOPT); /* no room for the length octet */
            break;
        }
        len = o[i + 1u];
        if (len < 2u || i + len > n) {
            WISP_CTR_INC(s, TCP_BADOPT);
            break;
        }
        switch (kind) {
        case TCP_OPT_MSS:
            if (len != 4u) {
                WISP_CTR_INC(s, TCP_BADOPT);
            } else if (syn) { /* RFC 9293 §3.7.1: only in SYN segments */
                opt->mss = wisp_rd16(o + i + 2u);
            }
            break;
        case TCP_OPT_WS:
            if (len != 3u) {
                WISP_CTR_INC(s, TCP_BADOPT);
            } else if (syn) { /* RFC 7323 §2.2: ignored when not on a SYN */
                opt->ws = o[i + 2u];
            }
            break;
        case TCP_OPT_SACK_PERM:
            if (len != 2u) {
                WISP_CTR_INC(s, TCP_BADOPT);
            } else if (syn) { /* RFC 2018 §2 */
                opt->sack_ok = 1;
            }
            break;
        case TCP_OPT_TS:
            if (len != 10u) {
                WISP_CTR_INC(s, TCP_BADOPT);
            } else {
                opt->ts = 1; /* RFC 7323 §3.2 */
                opt->tsval = wisp_rd32(o + i + 2u);
                opt->tsecr = wisp_rd32(o + i + 6u);
            }
            break;
        case TCP_OPT_SACK:
            if (len < 10u || ((len - 2u) % 8u) != 0u) {
                WISP_CTR_INC(s, TCP_BADOPT); /* RFC 2018 §3: 8 bytes per block */
            } else if (!syn) {
                unsigned k, nb = (len - 2u) / 8u;
                for (k = 0; k < nb && opt->nsack < 4u; k++) {
                    opt->sack[opt->nsack][0] = wisp_rd32(o + i + 2u + 8u * k);
                    opt->sack[opt->nsack][1] = wisp_rd32(o + i + 6u + 8u * k);
                    opt->nsack++;
                }
            }
            break;
        default:
            break; /* RFC 9293 §3.2: unknown options are ignored */
        }
        i += len;
    }
}

/* --------------------------------------------------- data delivery */

/* Refused data is a short queue of chains (a pbuf chain counts at most
 * 65535 bytes): len more in-order bytes fit when they join the last
 * chain or a chain slot is free. At most a window of data is refused
 * (the window stays closed by it), so with segments below 32 KB the
 * slots never run out. */
static bool tcp_refused_fits(const struct wisp_tcp_pcb *pcb, uint32_t len)
{
    return pcb->refused_n == 0u || pcb->refused_n < WISP_TCP_REFUSED_SLOTS ||
           (uint32_t)pcb->refused[pcb->refused_n - 1u]->tot_len + len <= 0xffffu;
}

/* Queue p behind the refused data (tcp_refused_fits said yes). */
static void tcp_refused_add(struct wisp_tcp_pcb *pcb, struct wisp_pbuf *p)
{
    if (pcb->refused_n > 0u && (uint32_t)pcb->refused[pcb->refused_n - 1u]->tot_len + p->tot_len <= 0xffffu) {
        wisp_pbuf_cat(pcb->refused[pcb->refused_n - 1u], p);
    } else if (pcb->refused_n < WISP_TCP_REFUSED_SLOTS) {
        pcb->refused[pcb->refused_n++] = p;
    } else {
        WISP_CTR_INC(pcb->c.stack, TCP_DROP_REFUSED); /* not reached (tcp_refused_fits) */
        wisp_pbuf_free(p);
    }
}

uint32_t tcp_refused_free(struct wisp_tcp_pcb *pcb)
{
    uint32_t n = 0;
    unsigned i;
    for (i = 0; i < pcb->refused_n; i++) {
        n += pcb->refused[i]->tot_len;
        wisp_pbuf_free(pcb->refused[i]);
        pcb->refused[i] = NULL;
    }
    pcb->refused_n = 0;
    return n;
}

/* Give p to the application (or to the refused queue). False when the
 * PCB died in the callback. */
static bool tcp_deliver(struct wisp_tcp_pcb *pcb, struct wisp_pbuf *p)
{
    uint32_t n = p->tot_len;
    wisp_err_t err;
    if (pcb->flags & TF_SHUT_RX) {
        wisp_pbuf_free(p); /* shut down for receiving: discard, keep the window open */
        wisp_tcp_recved(pcb, n);
        return true;
    }
    if (pcb->refused_n > 0u) {
        tcp_refused_add(pcb, p); /* behind what is held back, in order */
        return true;
    }
    if (pcb->recv == NULL) {
        wisp_pbuf_free(p); /* nobody listens: consume */
        wisp_tcp_recved(pcb, n);
        return true;
    }
    err = pcb->recv(pcb->c.arg, pcb, p, WISP_OK);
    if (tcp_dead(pcb)) {
        return false;
    }
    if (err != WISP_OK) {
        /* refused: keep it and offer it again later; the window stays
         * closed by these bytes meanwhile */
        tcp_refused_add(pcb, p);
        tcp_timer_set(pcb, TCP_TMR_REFUSED, TCP_REFUSED_RETRY_MS);
    }
    return true;
}

/* The peer closed its direction: tell the application (recv with NULL)
 * once everything before it was taken. */
static bool tcp_deliver_eof(struct wisp_tcp_pcb *pcb)
{
    if (pcb->flags & TF_EOF_DONE) {
        return true;
    }
    if (pcb->refused_n > 0u) {
        pcb->flags |= TF_EOF_PENDING;
        return true;
    }
    pcb->flags &= ~TF_EOF_PENDING;
    pcb->flags |= TF_EOF_DONE;
    if (pcb->recv != NULL && !(pcb->flags & (TF_SHUT_RX | TF_CLOSED))) {
        (void)pcb->recv(pcb->c.arg, pcb, NULL, WISP_OK);
        if (tcp_dead(pcb)) {
            return false;
        }
    }
    return true;
}

void tcp_deliver_refused(struct wisp_tcp_pcb *pcb)
{
    /* the chains in order, as long as the application takes them */
    while (pcb->refused_n > 0u) {
        struct wisp_pbuf *p = pcb->refused[0];
        wisp_err_t err;
        memmove(&pcb->refused[0], &pcb->refused[1], (pcb->refused_n - 1u) * sizeof(pcb->refused[0]));
        pcb->refused_n--;
        pcb->refused[pcb->refused_n] = NULL;
        if (pcb->recv == NULL || (pcb->flags & (TF_SHUT_RX | TF_CLOSED))) {
            uint32_t n = p->tot_len;
            wisp_pbuf_free(p);
            wisp_tcp_recved(pcb, n);
            continue;
        }
        err = pcb->recv(pcb->c.arg, pcb, p, WISP_OK);
        if (tcp_dead(pcb)) {
            return;
        }
        if (err != WISP_OK) {
            /* still refused: back to the front (its slot is free) */
            memmove(&pcb->refused[1], &pcb->refused[0], pcb->refused_n * sizeof(pcb->refused[0]));
            pcb->refused[0] = p;
            pcb->refused_n++;
            tcp_timer_set(pcb, TCP_TMR_REFUSED, TCP_REFUSED_RETRY_MS);
            return;
        }
    }
    if (pcb->flags & TF_EOF_PENDING) {
        (void)tcp_deliver_eof(pcb);
    }
}

/* ------------------------------------------------ out-of-order queue */

/* RFC 2883 §4: duplicate data [l, r) of the segment being processed goes
 * into the first SACK block of the ACK it causes (rule 1: of the most
 * recent segment only -- tcp_process clears it for every segment; rule 2:
 * reported once -- tcp_build_opts clears it when sent). */
static void tcp_dsack_set(struct wisp_tcp_pcb *pcb, uint32_t l, uint32_t r)
{
    if (WISP_TCP_DSACK && (pcb->flags & TF_SACK) && TCP_SEQ_LT(l, r)) {
        pcb->dsack_on = 1;
        pcb->dsack[0] = l;
        pcb->dsack[1] = r;
        WISP_CTR_INC(pcb->c.stack, TCP_DSACK); /* duplicate data reported */
    }
}

static void tcp_sack_note(struct wisp_tcp_pcb *pcb, uint32_t seq)
{
    /* RFC 2018 §4: remember the most recent arrivals (first block first) */
    memmove(&pcb->sack_recent[1], &pcb->sack_recent[0], 3u * sizeof(pcb->sack_recent[0]));
    pcb->sack_recent[0] = seq;
}

/* Queue an out-of-order segment [seq, seq + len) (+ FIN). Takes p. */
static void tcp_ooseq_insert(struct wisp_tcp_pcb *pcb, struct wisp_pbuf *p, uint32_t seq, uint32_t len, bool fin)
{
    struct wisp_stack *s = pcb->c.stack;
    unsigned i, pos, nb;
    uint32_t end;

    if (WISP_TCP_OOSEQ_MAX_PBUFS == 0) {
        WISP_CTR_INC(s, TCP_OOSEQ_DROP);
        wisp_pbuf_free(p);
        return;
    }
    /* trim against the entries before (RFC 9293 §3.10.7.4: overlapping
     * data is the same data; keep one copy) */
    for (pos = 0; pos < pcb->ooseq_n && TCP_SEQ_LEQ(pcb->ooseq[pos].seq, seq); pos++) {
        const struct wisp_tcp_ooseq *e = &pcb->ooseq[pos];
        uint32_t eend = e->seq + e->len;
        if (TCP_SEQ_GEQ(eend, seq + len) && (!fin || e->fin || TCP_SEQ_GT(eend, seq + len))) {
            wisp_pbuf_free(p); /* nothing new */
            /* RFC 2883 §4 rule 4: the D-SACK block, then the block holding it */
            tcp_dsack_set(pcb, seq, seq + len);
            tcp_sack_note(pcb, e->seq);
            return;
        }
        if (TCP_SEQ_GT(eend, seq)) {
            uint32_t d = eend - seq;
            tcp_dsack_set(pcb, seq, seq + WISP_MIN(d, len)); /* RFC 2883 §4: the duplicate part */
            if (d >= len) {
                wisp_pbuf_free(p);
                p = NULL;
                len = 0;
            } else {
                p = tcp_pbuf_skip(p, d);
                len -= d;
            }
            seq = eend;
        }
    }
    end = seq + len;
    /* drop later entries the new one covers completely */
    while (pos < pcb->ooseq_n && TCP_SEQ_LEQ(pcb->ooseq[pos].seq + pcb->ooseq[pos].len, end) &&
           !(pcb->ooseq[pos].fin && !fin && pcb->ooseq[pos].seq + pcb->ooseq[pos].len == end)) {
        pcb->ooseq_bufs = (uint16_t)(pcb->ooseq_bufs - wisp_pbuf_clen(pcb->ooseq[pos].p));
        wisp_pbuf_free(pcb->ooseq[pos].p);
        memmove(&pcb->ooseq[pos], &pcb->ooseq[pos + 1u], (pcb->ooseq_n - pos - 1u) * sizeof(pcb->ooseq[0]));
        pcb->ooseq_n--;
    }
    /* trim the tail against the next entry */
    if (pos < pcb->ooseq_n && TCP_SEQ_LT(pcb->ooseq[pos].seq, end)) {
        len = pcb->ooseq[pos].seq - seq;
        p = tcp_pbuf_keep(p, len);
        fin = false;
        end = seq + len;
    }
    if (len == 0 && !fin) {
        wisp_pbuf_free(p);
        return;
    }
    nb = p != NULL ? wisp_pbuf_clen(p) : 0u;
    if (pcb->ooseq_n >= WISP_TCP_OOSEQ_SLOTS || (unsigned)pcb->ooseq_bufs + nb > WISP_TCP_OOSEQ_MAX_PBUFS ||
        (nb > 0 && (unsigned)(s->pool[WISP_POOL_PBUF_RX].count - s->pool[WISP_POOL_PBUF_RX].used) <
                       TCP_OOSEQ_RX_RESERVE)) {
        /* bounded per connection, and never the last receive blocks of
         * the stack (the gap must stay fillable): the peer resends it */
        WISP_CTR_INC(s, TCP_OOSEQ_DROP);
        wisp_pbuf_free(p);
        return;
    }
    for (i = pcb->ooseq_n; i > pos; i--) {
        pcb->ooseq[i] = pcb->ooseq[i - 1u];
    }
    pcb->ooseq[pos].p = p;
    pcb->ooseq[pos].seq = seq;
    pcb->ooseq[pos].len = (uint16_t)len;
    pcb->ooseq[pos].fin = fin ? 1u : 0u;
    pcb->ooseq_n++;
    pcb->ooseq_bufs = (uint16_t)(pcb->ooseq_bufs + nb);
    tcp_sack_note(pcb, seq);
    WISP_CTR_INC(s, TCP_OOSEQ);
}

/* Accept in-order data p of len bytes at rcv_nxt. False when pcb died. */
static bool tcp_take(struct wisp_tcp_pcb *pcb, struct wisp_pbuf *p, uint32_t len)
{
    pcb->rcv_nxt += len;
    pcb->rcv_wnd = pcb->rcv_wnd > len ? pcb->rcv_wnd - len : 0u;
    pcb->rcv_unacked += len;
    pcb->st_bytes_received += len;
    return tcp_deliver(pcb, p);
}

/* Move what became in-order from the out-of-order queue into the stream.
 * *fin: an in-order FIN was found. False when pcb died. */
static bool tcp_ooseq_merge(struct wisp_tcp_pcb *pcb, bool *fin)
{
    while (pcb->ooseq_n > 0 && TCP_SEQ_LEQ(pcb->ooseq[0].seq, pcb->rcv_nxt) && !*fin) {
        struct wisp_tcp_ooseq e = pcb->ooseq[0];
        uint32_t end = e.seq + e.len;
        pcb->ooseq_bufs = (uint16_t)(pcb->ooseq_bufs - (e.p != NULL ? wisp_pbuf_clen(e.p) : 0u));
        memmove(&pcb->ooseq[0], &pcb->ooseq[1], (pcb->ooseq_n - 1u) * sizeof(pcb->ooseq[0]));
        pcb->ooseq_n--;
        if (TCP_SEQ_GT(end, pcb->rcv_nxt)) {
            uint32_t len = end - pcb->rcv_nxt;
            struct wisp_pbuf *p = tcp_pbuf_skip(e.p, pcb->rcv_nxt - e.seq);
            if (!tcp_refused_fits(pcb, len)) {
                WISP_CTR_INC(pcb->c.stack, TCP_DROP_REFUSED); /* no room to hold it: the peer resends */
                wisp_pbuf_free(p);
                continue;
            }
            if (!tcp_take(pcb, p, len)) {
                return false;
            }
        } else {
            wisp_pbuf_free(e.p);
        }
        if (e.fin && end == pcb->rcv_nxt) {
            *fin = true;
        }
    }
    if (*fin) {
        unsigned i;
        for (i = 0; i < pcb->ooseq_n; i++) {
            wisp_pbuf_free(pcb->ooseq[i].p); /* nothing can follow a FIN */
        }
        pcb->ooseq_n = 0;
        pcb->ooseq_bufs = 0;
    }
    return true;
}

/* RFC 9293 §3.10.7.4 seventh (segment text) and the FIN part of the
 * eighth step, for ESTABLISHED / FIN-WAIT-1 / FIN-WAIT-2. in->seq is the
 * first data octet (SYN already removed). Takes p. *fin_in: a FIN is now
 * in order. False when pcb died. */
static bool tcp_receive(struct wisp_tcp_pcb *pcb, struct wisp_pbuf *p, const struct tcp_in *in, bool *fin_in)
{
    uint32_t seq = in->seq, len = in->len;
    bool fin = (in->flags & TCP_FIN) != 0;
    uint32_t right = TCP_SEQ_GT(pcb->rcv_adv, pcb->rcv_nxt) ? pcb->rcv_adv : pcb->rcv_nxt;

    *fin_in = false;
    /* Only the new part of a segment straddling RCV.NXT is processed. */
    if (TCP_SEQ_LT(seq, pcb->rcv_nxt)) {
        uint32_t d = pcb->rcv_nxt - seq;
        tcp_dsack_set(pcb, seq, seq + WISP_MIN(d, len)); /* RFC 2883 §4: the part below RCV.NXT */
        if (d >= len) {
            if (d > len) {
                fin = false; /* an old FIN */
            }
            wisp_pbuf_free(p);
            p = NULL;
            len = 0;
        } else {
            p = tcp_pbuf_skip(p, d);
            len -= d;
        }
        seq = pcb->rcv_nxt;
        pcb->flags |= TF_ACK_NOW; /* a duplicate: tell the peer at once */
    }
    /* Data beyond the window is cut off (and a FIN after it with it). */
    if (len > 0 && TCP_SEQ_GT(seq + len, right)) {
        uint32_t keep = TCP_SEQ_GT(right, seq) ? right - seq : 0u;
        p = tcp_pbuf_keep(p, keep);
        len = keep;
        fin = false;
        pcb->flags |= TF_ACK_NOW;
    }
    if (seq != pcb->rcv_nxt) {
        /* RFC 5681 §4.2 / RFC 9293 §3.8.6.3: out-of-order data -> queue it
         * and send an immediate (duplicate) ACK with SACK blocks. A pure
         * ACK ahead of RCV.NXT (data before it was lost) is no reason to
         * answer: two such ACKs would bounce forever. */
        if (len > 0 || fin) {
            pcb->flags |= TF_ACK_NOW;
            tcp_ooseq_insert(pcb, p, seq, len, fin);
        } else {
            wisp_pbuf_free(p);
        }
        return true;
    }
    if (len > 0) {
        bool had_gap = pcb->ooseq_n > 0;
        const struct wisp_pool *rx = &pcb->c.stack->pool[WISP_POOL_PBUF_RX];
        if (!tcp_refused_fits(pcb, len)) {
            WISP_CTR_INC(pcb->c.stack, TCP_DROP_REFUSED); /* cannot hold more: the peer resends */
            wisp_pbuf_free(p);
            pcb->flags |= TF_ACK_NOW;
            return true;
        }
        if (p->pool == rx && (uint32_t)rx->count - rx->used < TCP_RX_RESERVE / 2u) {
            /* The receive blocks are nearly gone (the window promised
             * full-size segments, these are smaller, or others hold the
             * blocks): keeping this data could leave no block for the ACKs
             * that free our transmit buffers. Drop it; the peer resends
             * once the applications gave blocks back. */
            WISP_CTR_INC(pcb->c.stack, TCP_DROP_RXBUDGET);
            wisp_pbuf_free(p);
            pcb->flags |= TF_ACK_NOW;
            return true;
        }
        if (!tcp_take(pcb, p, len)) {
            return false;
        }
        p = NULL;
        if (fin) {
            *fin_in = true;
        }
        if (had_gap) {
            /* RFC 5681 §4.2: the segment fills (part of) a gap: ACK now */
            pcb->flags |= TF_ACK_NOW;
            if (!tcp_ooseq_merge(pcb, fin_in)) {
                return false;
            }
        }
        /* RFC 5681 §4.2 / RFC 1122 §4.2.3.2: ACK at least every second
         * full-size segment, else within the delayed-ACK time. */
        if (pcb->rcv_unacked >= 2u * (uint32_t)pcb->mss - 2u * TCP_MAX_OPTLEN) {
            pcb->flags |= TF_ACK_NOW;
        } else if (!(pcb->flags & TF_ACK_NOW)) {
            pcb->flags |= TF_ACK_DELAY;
            if (!tcp_timer_on(pcb, TCP_TMR_DELACK)) {
                tcp_timer_set(pcb, TCP_TMR_DELACK, WISP_TCP_DELACK_MS);
            }
        }
    } else {
        wisp_pbuf_free(p);
        if (fin) {
            *fin_in = true;
        }
        if (pcb->ooseq_n > 0 && !*fin_in) {
            if (!tcp_ooseq_merge(pcb, fin_in)) {
                return false;
            }
        }
    }
    return true;
}

/* ---------------------------------------------------- SYN-SENT */

/* Take the peer's SYN options (RFC 7323 §2.2/§3.2, RFC 2018 §2: each
 * feature only when both SYNs carried it). */
static void tcp_syn_options(struct wisp_tcp_pcb *pcb, const struct tcp_in *in)
{
    struct wisp_stack *s = pcb->c.stack;
    uint16_t ours = tcp_mss_for(s, pcb->remote_ip);
    if (pcb->user_mss != 0u && pcb->user_mss < ours) {
        ours = pcb->user_mss; /* TCP_MAXSEG */
    }
    /* RFC 9293 §3.7.1 / RFC 6691: min(peer MSS or 536, MTU - 40) */
    pcb->mss = (uint16_t)WISP_MIN(in->opt.mss != 0 ? in->opt.mss : TCP_DEFAULT_MSS, ours);
    if (in->opt.ws != 0xffu && WISP_TCP_WND_SCALE) {
        pcb->flags |= TF_WS;
        pcb->snd_wscale = (uint8_t)WISP_MIN(in->opt.ws, TCP_MAX_WSCALE); /* RFC 7323 §2.3 */
    } else {
        pcb->snd_wscale = 0;
        pcb->rcv_wscale = 0;
    }
    if (in->opt.sack_ok && WISP_TCP_SACK) {
        pcb->flags |= TF_SACK;
    }
    if (in->opt.ts && WISP_TCP_TIMESTAMPS) {
        pcb->flags |= TF_TS;
        pcb->ts_recent = in->opt.tsval;
        pcb->ts_recent_ms = wisp_now(s);
    }
}

static void tcp_fin_state(struct wisp_tcp_pcb *pcb);

/* RFC 9293 §3.10.7.3 SYN-SENT. False when the PCB died. Takes p. */
static bool tcp_syn_sent(struct wisp_tcp_pcb *pcb, struct wisp_pbuf *p, struct tcp_in *in)
{
    struct wisp_stack *s = pcb->c.stack;
    uint32_t now = wisp_now(s);

    /* first: check the ACK */
    if ((in->flags & TCP_ACK) && (TCP_SEQ_LEQ(in->ack, pcb->iss) || TCP_SEQ_GT(in->ack, pcb->snd_nxt))) {
        WISP_CTR_INC(s, TCP_DROP_BADACK);
        tcp_rst_reply(s, in); /* <SEQ=SEG.ACK><CTL=RST> unless RST */
        wisp_pbuf_free(p);
        return true;
    }
    /* second: RST (RFC 5961 §3.2 for SYN-SENT: only with an acceptable
     * ACK) */
    if (in->flags & TCP_RST) {
        WISP_CTR_INC(s, TCP_RST_RX);
        wisp_pbuf_free(p);
        if (in->flags & TCP_ACK) {
            tcp_pcb_kill(pcb, WISP_ERR_RST); /* "connection reset" / refused */
            return false;
        }
        WISP_CTR_INC(s, TCP_DROP_RST);
        return true;
    }
    /* fourth: SYN */
    if (!(in->flags & TCP_SYN)) {
        WISP_CTR_INC(s, TCP_DROP_STATE);
        wisp_pbuf_free(p);
        return true;
    }
    pcb->irs = in->seq;
    pcb->rcv_nxt = in->seq + 1u;
    pcb->last_ack_sent = pcb->rcv_nxt;
    pcb->rcv_adv = pcb->rcv_nxt + pcb->syn_wnd; /* what our SYN offered */
    tcp_syn_options(pcb, in);
    /* RFC 7323 §2.2: the window of a SYN is never scaled */
    pcb->snd_wnd = in->wnd;
    pcb->max_snd_wnd = in->wnd;
    pcb->snd_wl1 = in->seq;
    pcb->snd_wl2 = in->ack;
    if (!(in->flags & TCP_ACK)) {
        /* RFC 9293 §3.5 simultaneous open: SYN-SENT -> SYN-RECEIVED, send
         * <SEQ=ISS><ACK=RCV.NXT><CTL=SYN,ACK> (data on the SYN is not
         * kept). */
        pcb->c.state = WISP_TCP_SYN_RCVD;
        pcb->flags |= TF_ACK_NOW;
        wisp_pbuf_free(p);
        return true;
    }
    pcb->snd_una = in->ack;
    if ((pcb->flags & TF_TS) && in->opt.tsecr != 0) {
        tcp_rtt_sample(pcb, (now + pcb->ts_off) - in->opt.tsecr);
    } else if ((pcb->flags & TF_RTT) && pcb->syn_rtx == 0) {
        tcp_rtt_sample(pcb, now - pcb->rtt_start); /* RFC 6298 §3 (Karn) */
    }
    pcb->flags &= ~TF_RTT;
    tcp_set_established(pcb);
    tcp_timer_clear(pcb, TCP_TMR_RTO);
    pcb->flags |= TF_ACK_NOW;
    if (pcb->connected != NULL) {
        wisp_err_t err = pcb->connected(pcb->c.arg, pcb, WISP_OK);
        if (err == WISP_ERR_ABRT || tcp_dead(pcb)) {
            wisp_pbuf_free(p);
            return false;
        }
    }
    /* data or FIN on the SYN-ACK: continue at the sixth step */
    if (in->len > 0 || (in->flags & TCP_FIN)) {
        bool fin_in;
        in->seq += 1u;
        if (!tcp_receive(pcb, p, in, &fin_in)) {
            return false;
        }
        if (fin_in) {
            pcb->rcv_nxt += 1u;
            pcb->flags |= TF_ACK_NOW;
            tcp_fin_state(pcb);
            if (tcp_dead(pcb) || !tcp_deliver_eof(pcb)) {
                return false;
            }
        }
    } else {
        wisp_pbuf_free(p);
    }
    return true;
}

/* RFC 9293 §3.10.7.4 eighth step: the state change for an in-order FIN. */
static void tcp_fin_state(struct wisp_tcp_pcb *pcb)
{
    bool fin_acked = (pcb->flags & TF_FIN_QUEUED) && pcb->snd_una == pcb->snd_lbb;
    switch (pcb->c.state) {
    case WISP_TCP_SYN_RCVD:
    case WISP_TCP_ESTABLISHED:
        pcb->c.state = WISP_TCP_CLOSE_WAIT;
        break;
    case WISP_TCP_FIN_WAIT_1:
        /* our FIN acknowledged -> TIME-WAIT, else simultaneous close */
        pcb->c.state = fin_acked ? (uint8_t)WISP_TCP_TIME_WAIT : (uint8_t)WISP_TCP_CLOSING;
        break;
    case WISP_TCP_FIN_WAIT_2:
        pcb->c.state = WISP_TCP_TIME_WAIT;
        break;
    default:
        break;
    }
    if (pcb->c.state != WISP_TCP_FIN_WAIT_2) {
        tcp_timer_clear(pcb, TCP_TMR_FW2);
    }
}

/* ------------------------------------------------- the state machine */

/* RFC 9293 §3.10.7.4 first step: is the segment acceptable? */
static bool tcp_seq_acceptable(const struct wisp_tcp_pcb *pcb, const struct tcp_in *in)
{
    uint32_t wnd = TCP_SEQ_GT(pcb->rcv_adv, pcb->rcv_nxt) ? pcb->rcv_adv - pcb->rcv_nxt : 0u;
    uint32_t seglen = in->len + ((in->flags & TCP_SYN) ? 1u : 0u) + ((in->flags & TCP_FIN) ? 1u : 0u);
    uint32_t seq = in->seq;
    if (seglen == 0) {
        if (wnd == 0) {
            return seq == pcb->rcv_nxt;
        }
        return TCP_SEQ_GEQ(seq, pcb->rcv_nxt) && TCP_SEQ_LT(seq, pcb->rcv_nxt + wnd);
    }
    if (wnd == 0) {
        /* "special allowance ... to accept valid ACKs, URGs, and RSTs":
         * a segment at RCV.NXT is processed with its data trimmed off. */
        return seq == pcb->rcv_nxt;
    }
    return (TCP_SEQ_GEQ(seq, pcb->rcv_nxt) && TCP_SEQ_LT(seq, pcb->rcv_nxt + wnd)) ||
           (TCP_SEQ_GEQ(seq + seglen - 1u, pcb->rcv_nxt) && TCP_SEQ_LT(seq + seglen - 1u, pcb->rcv_nxt + wnd));
}

void tcp_process(struct wisp_tcp_pcb *pcb, struct wisp_pbuf *p, struct tcp_in *in)
{
    struct wisp_stack *s = pcb->c.stack;
    uint32_t now = wisp_now(s);
    bool fin_in = false, fin_acked;

    if (pcb->c.state == WISP_TCP_SYN_SENT) {
        (void)tcp_syn_sent(pcb, p, in);
        return;
    }
    pcb->dsack_on = 0; /* RFC 2883 §4 rule 1: D-SACK reports the latest segment only */

    /* Simultaneous open: the peer's SYN-ACK repeats its SYN (RFC 9293 §3.5
     * figure 8, line 6); its SYN was already taken. */
    if (pcb->c.state == WISP_TCP_SYN_RCVD && (in->flags & TCP_SYN) && in->seq == pcb->irs) {
        in->flags = (uint8_t)(in->flags & ~TCP_SYN);
        in->seq += 1u;
        if (!(in->flags & TCP_ACK)) {
            pcb->flags |= TF_ACK_NOW; /* a retransmitted SYN: resend SYN-ACK */
            wisp_pbuf_free(p);
            return;
        }
    }

    /* RFC 9293 §3.10.7.4 fifth: "if the ACK bit is off drop the segment".
     * In a synchronized state (or SYN-RECEIVED) a segment with none of
     * ACK, SYN, RST can never be processed; it is dropped here, before
     * the first step could answer it (a PAWS or out-of-window ACK), so a
     * bare FIN or data without ACK draws no reply (as on Linux). */
    if (!(in->flags & (TCP_ACK | TCP_SYN | TCP_RST))) {
        WISP_CTR_INC(s, TCP_DROP_NOACK);
        wisp_pbuf_free(p);
        return;
    }

    /* RFC 7323 §5.3 PAWS (R1): a TSval older than TS.Recent is a
     * duplicate from an old incarnation; RSTs are exempt. */
    if (pcb->flags & TF_TS) {
        if (in->opt.ts) {
            if (wisp_time_before(pcb->ts_recent_ms + TCP_PAWS_IDLE_MS, now)) {
                pcb->ts_recent = in->opt.tsval; /* RFC 7323 §5.5: TS.Recent expired */
                pcb->ts_recent_ms = now;
            } else if (!(in->flags & TCP_RST) && TCP_SEQ_LT(in->opt.tsval, pcb->ts_recent)) {
                WISP_CTR_INC(s, TCP_DROP_PAWS);
                pcb->flags |= TF_ACK_NOW;
                wisp_pbuf_free(p);
                return;
            }
        } else if (!(in->flags & TCP_RST)) {
            /* RFC 7323 §3.2: once negotiated, a non-RST segment without
             * the option is dropped */
            WISP_CTR_INC(s, TCP_DROP_NOTS);
            wisp_pbuf_free(p);
            return;
        }
    }

    /* first: sequence number */
    if (!tcp_seq_acceptable(pcb, in)) {
        WISP_CTR_INC(s, TCP_DROP_OOW);
        if (!(in->flags & TCP_RST)) {
            pcb->flags |= TF_ACK_NOW; /* <SEQ=SND.NXT><ACK=RCV.NXT><CTL=ACK> */
            if (in->len > 0 && TCP_SEQ_LT(in->seq, pcb->rcv_nxt)) {
                /* RFC 2883 §4: old data received again (the ACK of the
                 * first copy was lost, or the retransmission was needless) */
                uint32_t end = in->seq + in->len;
                tcp_dsack_set(pcb, in->seq, TCP_SEQ_GT(end, pcb->rcv_nxt) ? pcb->rcv_nxt : end);
            }
        }
        wisp_pbuf_free(p);
        return;
    }
    pcb->last_rx_ms = now;
    pcb->keep_probes = 0;
    if (pcb->flags & TF_KEEPALIVE) {
        tcp_timer_set(pcb, TCP_TMR_KEEP, pcb->keep_idle);
    }
    /* RFC 7323 §4.3 (2): record TS.Recent when the segment covers
     * Last.ACK.sent. */
    if ((pcb->flags & TF_TS) && in->opt.ts && TCP_SEQ_GEQ(in->opt.tsval, pcb->ts_recent) &&
        TCP_SEQ_LEQ(in->seq, pcb->last_ack_sent)) {
        pcb->ts_recent = in->opt.tsval;
        pcb->ts_recent_ms = now;
    }

    /* second: RST (RFC 5961 §3.2) */
    if (in->flags & TCP_RST) {
        WISP_CTR_INC(s, TCP_RST_RX);
        wisp_pbuf_free(p);
        if (in->seq == pcb->rcv_nxt) {
            /* exactly RCV.NXT: reset (SYN-RECEIVED from an active open:
             * refused; the others: reset; CLOSING/LAST-ACK: just closed) */
            tcp_pcb_kill(pcb, WISP_ERR_RST);
            return;
        }
        WISP_CTR_INC(s, TCP_DROP_RST);
        tcp_send_challenge_ack(pcb); /* in the window but not exact */
        return;
    }

    /* fourth: SYN in a synchronized state (RFC 5961 §4.2: challenge ACK) */
    if (in->flags & TCP_SYN) {
        WISP_CTR_INC(s, TCP_DROP_SYN);
        tcp_send_challenge_ack(pcb);
        wisp_pbuf_free(p);
        return;
    }

    /* fifth: ACK */
    if (!(in->flags & TCP_ACK)) {
        WISP_CTR_INC(s, TCP_DROP_NOACK);
        wisp_pbuf_free(p);
        return;
    }
    if (pcb->c.state == WISP_TCP_SYN_RCVD) {
        if (TCP_SEQ_GT(in->ack, pcb->snd_una) && TCP_SEQ_LEQ(in->ack, pcb->snd_nxt)) {
            pcb->snd_una = in->ack;
            tcp_set_established(pcb);
            if (pcb->flags & TF_FIN_QUEUED) {
                /* RFC 9293 §3.10.4: a CLOSE in SYN-RECEIVED waited for ESTABLISHED */
                pcb->c.state = WISP_TCP_FIN_WAIT_1;
            }
            tcp_timer_clear(pcb, TCP_TMR_RTO);
            pcb->snd_wnd = (uint32_t)in->wnd << pcb->snd_wscale;
            pcb->max_snd_wnd = WISP_MAX(pcb->max_snd_wnd, pcb->snd_wnd);
            pcb->snd_wl1 = in->seq;
            pcb->snd_wl2 = in->ack;
            if (pcb->connected != NULL) {
                wisp_err_t err = pcb->connected(pcb->c.arg, pcb, WISP_OK);
                if (err == WISP_ERR_ABRT || tcp_dead(pcb)) {
                    wisp_pbuf_free(p);
                    return;
                }
            }
        } else {
            WISP_CTR_INC(s, TCP_DROP_BADACK);
            tcp_rst_reply(s, in); /* RFC 9293 §3.10.7.4 SYN-RECEIVED */
            wisp_pbuf_free(p);
            return;
        }
    }
    /* RFC 5961 §5.2: SND.UNA - MAX.SND.WND =< SEG.ACK =< SND.NXT, else
     * discard and send an ACK (throttled, §7); RFC 9293: an ACK of
     * something not yet sent gets an ACK too. */
    if (TCP_SEQ_GT(in->ack, pcb->snd_nxt) || TCP_SEQ_LT(in->ack, pcb->snd_una - pcb->max_snd_wnd)) {
        WISP_CTR_INC(s, TCP_DROP_BADACK);
        tcp_send_challenge_ack(pcb);
        wisp_pbuf_free(p);
        return;
    }
    if (!tcp_ack_received(pcb, in)) {
        wisp_pbuf_free(p);
        return;
    }
    fin_acked = (pcb->flags & TF_FIN_QUEUED) && pcb->snd_una == pcb->snd_lbb;
    switch (pcb->c.state) {
    case WISP_TCP_FIN_WAIT_1:
        if (fin_acked) {
            pcb->c.state = WISP_TCP_FIN_WAIT_2;
            if (pcb->flags & TF_CLOSED) {
                tcp_timer_set(pcb, TCP_TMR_FW2, TCP_FIN_WAIT2_MS);
            }
        }
        break;
    case WISP_TCP_CLOSING:
        if (fin_acked) {
            wisp_pbuf_free(p);
            tcp_enter_time_wait(pcb); /* RFC 9293 §3.6 simultaneous close */
            return;
        }
        break;
    case WISP_TCP_LAST_ACK:
        if (fin_acked) {
            wisp_pbuf_free(p);
            tcp_pcb_kill(pcb, WISP_ERR_CLSD); /* -> CLOSED */
            return;
        }
        break;
    default:
        break;
    }

    /* sixth (URG) is not supported: the urgent pointer is ignored.
     * seventh: segment text; eighth: FIN. */
    if (pcb->c.state == WISP_TCP_ESTABLISHED || pcb->c.state == WISP_TCP_FIN_WAIT_1 ||
        pcb->c.state == WISP_TCP_FIN_WAIT_2) {
        if (in->len > 0 && (pcb->flags & TF_CLOSED) && TCP_SEQ_GT(in->seq + in->len, pcb->rcv_nxt)) {
            /* RFC 1122 §4.2.2.13 / RFC 9293 §3.10.4: new data after the
             * application closed cannot be delivered: RST */
            WISP_CTR_INC(s, TCP_DROP_AFTERCLOSE);
            wisp_pbuf_free(p);
            tcp_send_rst(pcb);
            tcp_pcb_release(pcb);
            return;
        }
        if (!tcp_receive(pcb, p, in, &fin_in)) {
            return;
        }
    } else {
        /* CLOSE-WAIT, CLOSING, LAST-ACK: the peer already sent its FIN;
         * anything else from it is a duplicate */
        if (in->len > 0 || (in->flags & TCP_FIN)) {
            pcb->flags |= TF_ACK_NOW;
        }
        wisp_pbuf_free(p);
    }
    if (fin_in) {
        pcb->rcv_nxt += 1u;
        pcb->flags |= TF_ACK_NOW; /* RFC 9293 §3.10.7.4 eighth: acknowledge the FIN */
        tcp_fin_state(pcb);
        if (!tcp_deliver_eof(pcb)) {
            return;
        }
        if (pcb->c.state == WISP_TCP_TIME_WAIT) {
            (void)tcp_send_ack(pcb);
            tcp_enter_time_wait(pcb);
            return;
        }
    }
}

/* ---------------------------------------------------------- input */

void wisp_tcp_input(struct wisp_stack *s, struct wisp_pbuf *p, const struct wisp_ip_info *ip)
{
    uint8_t hdr[TCP_MAX_HLEN];
    struct tcp_in in;
    struct wisp_tcp_pcb *pcb, **pp;
    uint16_t hlen, tot = p->tot_len;
    WISP_CORE_ASSERT_OWNER(s);

    WISP_CTR_INC(s, TCP_RX);
    /* RFC 1122 §4.2.3.10 / RFC 9293 §3.9.2: nothing for broadcast or
     * multicast destinations. */
    if (ip->bcast || ip->mcast) {
        WISP_CTR_INC(s, TCP_DROP_BCAST);
        wisp_pbuf_free(p);
        return;
    }
    if (tot < WISP_TCP_HLEN) {
        WISP_CTR_INC(s, TCP_DROP_SHORT);
        wisp_pbuf_free(p);
        return;
    }
    (void)wisp_pbuf_copy_out(p, hdr, WISP_TCP_HLEN, 0);
    /* RFC 9293 §3.1 Data Offset: 5..15 words, within the segment. */
    hlen = (uint16_t)((hdr[TCP_OFF_HLEN] >> 4) * 4u);
    if (hlen < WISP_TCP_HLEN || hlen > tot) {
        WISP_CTR_INC(s, TCP_DROP_BADOFF);
        wisp_pbuf_free(p);
        return;
    }
    /* RFC 9293 §3.1 Checksum (pseudo header + segment); RFC 1122 §4.2.2.7:
     * a bad checksum is discarded. */
    if (wisp_chksum_add(wisp_chksum_pseudo4(wisp_ipaddr_ip4(&ip->src), wisp_ipaddr_ip4(&ip->dst), WISP_IP4_PROTO_TCP, tot), wisp_pbuf_chksum(p, 0, tot)) !=
        0xFFFFu) {
        WISP_CTR_INC(s, TCP_DROP_CHKSUM);
        wisp_pbuf_free(p);
        return;
    }
    if (hlen > WISP_TCP_HLEN) {
        (void)wisp_pbuf_copy_out(p, hdr + WISP_TCP_HLEN, (uint16_t)(hlen - WISP_TCP_HLEN), WISP_TCP_HLEN);
    }
    in.ip = ip;
    in.sport = wisp_rd16(hdr + TCP_OFF_SPORT);
    in.dport = wisp_rd16(hdr + TCP_OFF_DPORT);
    in.seq = wisp_rd32(hdr + TCP_OFF_SEQ);
    in.ack = wisp_rd32(hdr + TCP_OFF_ACK);
    in.flags = (uint8_t)(hdr[TCP_OFF_FLAGS] & 0x3fu);
    in.wnd = wisp_rd16(hdr + TCP_OFF_WND);
    in.len = (uint16_t)(tot - hlen);
    tcp_parse_opts(s, hdr + WISP_TCP_HLEN, hlen - WISP_TCP_HLEN, (in.flags & TCP_SYN) != 0, &in.opt);
    p = tcp_pbuf_skip(p, hlen); /* data only from here on (NULL: none) */

    /* connections */
    for (pp = &s->tcp.pcbs; (pcb = *pp) != NULL; pp = &pcb->next) {
        if (pcb->c.state != WISP_TCP_CLOSED && pcb->c.local_port == in.dport && pcb->remote_port == in.sport &&
            pcb->remote_ip == wisp_ipaddr_ip4(&ip->src) && pcb->c.local_ip == wisp_ipaddr_ip4(&ip->dst)) {
            struct wisp_tcp_pcb *prev;
            if (pp != &s->tcp.pcbs) {
                /* move to the front: the next segment of a busy
                 * connection is found at once, not after every PCB */
                *pp = pcb->next;
                pcb->next = s->tcp.pcbs;
                s->tcp.pcbs = pcb;
            }
            prev = tcp_enter(s, pcb);
            tcp_process(pcb, p, &in);
            if (!tcp_dead(pcb)) {
                tcp_output_run(pcb);
            }
            if (tcp_leave(s, pcb, prev)) {
                tcp_timer_update(pcb);
            }
            return;
        }
    }
    if (tcp_tw_input(s, p, &in) || tcp_synq_input(s, p, &in) || tcp_listen_input(s, p, &in)) {
        return;
    }
    /* RFC 9293 §3.10.7.1 CLOSED: a RST for anything but a RST. */
    WISP_CTR_INC(s, TCP_NOPORT);
    tcp_rst_reply(s, &in);
    wisp_pbuf_free(p);
}

#else
typedef int wisp_tcp_in_disabled_t;
#endif /* WISP_TCP */
