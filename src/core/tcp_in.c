/**
 * @file tcp_in.c
 * TCP input: validation of received segments (length, data offset,
 * checksum, options), demultiplexing (connections, TIME-WAIT records, the
 * SYN queue, listeners, else a RST), and the event processing of RFC 9293
 * §3.10.7 for connections: SYN-SENT, the sequence and timestamp checks,
 * RST/SYN/ACK handling with the RFC 5961 mitigations, in-order delivery to
 * the application (zero-copy, with refused data kept and retried), the
 * out-of-order queue with SACK information, FIN processing and the
 * delayed-ACK policy; ACK processing: RTT sampling (RFC 6298, RFC 7323
 * RTTM), the SACK scoreboard and loss detection, fast recovery (RFC 6675,
 * RFC 6582), the calls into congestion control (tcp_cc.h), the send
 * window update; the challenge-ACK rate limit (RFC 5961 §7). Segments
 * for listeners, the SYN queue and TIME-WAIT go to tcp_synq.c.
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
 *  - RFC 5681 §3 and RFC 6582 (NewReno), RFC 3042, RFC 6298 (RTT).
 *  - RFC 6191: reuse of TIME-WAIT with timestamps (tcp_synq.c).
 *  - RFC 4987: SYN cookies (tcp_synq.c).
 *  - RFC 1337: TIME-WAIT assassination (tcp_synq.c).
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
 *  - RTT from timestamps only when the echo is not older than the last
 *    transmission of the first newly acknowledged segment (a lost ACK
 *    followed by a retransmission would otherwise yield the whole loss
 *    episode as one sample); else Karn-timed segments.
 *  - cwnd grows only while it limits the sender (RFC 7661 idea; tcp_cc.c).
 *  - Duplicate ACKs do not count in persist mode (answers to probes).
 *  - The sent callback runs after the whole ACK was processed (SND.UNA,
 *    send window, congestion state).
 */
#define WISP_PRIVATE_ACCESS 1 /* library code: sees the private tier (wisp/arch.h) */
#include "tcp_priv.h"
#include "tcp_cc.h"

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

/* ------------------------------------------- receive coalescing */

/* The receive window promises the free receive blocks at rcv_blk data
 * bytes each (tcp_rcv_right), but a segment arrives in a block of its own
 * whatever its size: a sender of 1-byte segments could fill a block per
 * byte. So data the stack itself keeps (refused by the application, out
 * of order) never holds a block for less than it promised: a segment
 * shorter than a full-size one is copied into the free room at the end of
 * the queued chain it follows, and what does not fit starts a new block
 * (moved to the block's start, so the block fills up to its end with the
 * segments that come next). Blocks kept this way hold more than rcv_blk
 * bytes each (they are filled to WISP_PBUF_BLOCK_SIZE), so no data the
 * window admitted is dropped for want of blocks (RFC 9293 §3.8.6.2.2:
 * the window is the buffer we can offer; RFC 7323 §2.4: data within an
 * announced window must be accepted). Full-size segments are never
 * copied (the bulk path stays zero-copy). */

/* Append p (one segment's data, taken) to chain h that only the stack
 * holds, copying a short segment into h's last block. Returns the number
 * of new blocks h took (0: all copied). */
static unsigned tcp_rx_append(struct wisp_tcp_pcb *pcb, struct wisp_pbuf *h, struct wisp_pbuf *p)
{
    struct wisp_pbuf *t;
    uint32_t n;

    if (p->tot_len >= pcb->rcv_blk || p->next != NULL) {
        wisp_pbuf_cat(h, p); /* full-size (or a chain): kept as it came */
        return wisp_pbuf_clen(p);
    }
    t = tcp_pbuf_last(h);
    n = WISP_MIN(tcp_tailroom(t), (uint32_t)p->len);
    wisp_memcpy(t->payload + t->len, p->payload, n);
    tcp_chain_grow(h, (uint16_t)n);
    WISP_CTR_INC(pcb->c.stack, TCP_RX_COALESCE);
    if (n == p->len) {
        wisp_pbuf_free(p);
        return 0;
    }
    (void)wisp_pbuf_pop(p, (uint16_t)n);
    if (p->kind == WISP_PBUF_POOL && p->ref == 1u) {
        /* the rest starts the block, which the next ones fill up */
        uint8_t *start = (uint8_t *)p + WISP_PBUF_HDR_SIZE;
        memmove(start, p->payload, p->len);
        p->payload = start;
    }
    wisp_pbuf_cat(h, p);
    return 1;
}

bool wisp_tcp_rx_short(const struct wisp_tcp_pcb *pcb, const struct wisp_pbuf *p)
{
    const struct wisp_tcp_common *c = (const struct wisp_tcp_common *)(const void *)pcb;
    WISP_CORE_ASSERT_OWNER(tcp_stack_of(pcb));
    if (pcb == NULL || p == NULL || c->state == WISP_TCP_LISTEN) {
        return false;
    }
    return (uint32_t)p->tot_len < wisp_pbuf_clen(p) * (uint32_t)pcb->rcv_blk;
}

/* The length each known option must have (0: none fixed -- SACK, unknown
 * options, options compiled out, which are ignored like unknown ones). */
static const uint8_t tcp_opt_len[WISP_TCP_OPT_TS + 1u] = {
    [WISP_TCP_OPT_MSS] = WISP_TCP_OPTLEN_MSS,
    [WISP_TCP_OPT_WS] = WISP_TCP_WND_SCALE ? WISP_TCP_OPTLEN_WS : 0u,
    [WISP_TCP_OPT_SACK_PERM] = WISP_TCP_SACK ? WISP_TCP_OPTLEN_SACK_PERM : 0u,
    [WISP_TCP_OPT_TS] = WISP_TCP_TIMESTAMPS ? WISP_TCP_OPTLEN_TS : 0u,
};

/* RFC 9293 §3.2: options. Every option but EOL and NOP has a length octet
 * counting kind and length; the length octet must be present and >= 2
 * (a length of 0 or 1 would loop forever), and the option must fit.
 * Malformed lists end parsing (counted); an option of a known kind with
 * the wrong length is skipped (counted); unknown options are skipped. */
static WISP_NOINLINE void tcp_parse_opts(struct wisp_stack *s, const uint8_t *o, unsigned n, bool syn,
                                         struct tcp_opts *opt)
{
    unsigned i = 0;
    memset(opt, 0, sizeof(*opt));
    opt->ws = 0xffu;
    while (i < n) {
        unsigned kind = o[i], len;
        const uint8_t *v;
        if (kind == WISP_TCP_OPT_EOL) {
            break;
        }
        if (kind == WISP_TCP_OPT_NOP) {
            i++;
            continue;
        }
        if (i + 1u >= n) {
            WISP_CTR_INC(s, TCP_BADOPT); /* no room for the length octet */
            break;
        }
        len = o[i + 1u];
        if (len < WISP_TCP_OPT_HDRLEN || i + len > n) {
            WISP_CTR_INC(s, TCP_BADOPT);
            break;
        }
        v = o + i + WISP_TCP_OPT_HDRLEN; /* the option's value */
        i += len;
        if (kind <= WISP_TCP_OPT_TS && tcp_opt_len[kind] != 0u && len != tcp_opt_len[kind]) {
            WISP_CTR_INC(s, TCP_BADOPT);
            continue;
        }
        switch (kind) {
        case WISP_TCP_OPT_MSS:
            if (syn) { /* RFC 9293 §3.7.1: only in SYN segments */
                opt->mss = wisp_rd16(v);
            }
            break;
        case WISP_TCP_OPT_WS:
            if (WISP_TCP_WND_SCALE && syn) { /* RFC 7323 §2.2: ignored when not on a SYN */
                opt->ws = v[0];
            }
            break;
        case WISP_TCP_OPT_SACK_PERM:
            if (WISP_TCP_SACK && syn) { /* RFC 2018 §2 */
                opt->sack_ok = 1;
            }
            break;
        case WISP_TCP_OPT_TS:
            if (WISP_TCP_TIMESTAMPS) { /* compiled out: ignored like an unknown option */
                opt->ts = 1; /* RFC 7323 §3.2 */
                opt->tsval = wisp_rd32(v);
                opt->tsecr = wisp_rd32(v + 4u);
            }
            break;
        case WISP_TCP_OPT_SACK:
            if (!WISP_TCP_SACK) {
                break; /* compiled out: ignored like an unknown option */
            }
            if (len < WISP_TCP_OPT_HDRLEN + WISP_TCP_SACK_BLOCK_LEN ||
                ((len - WISP_TCP_OPT_HDRLEN) % WISP_TCP_SACK_BLOCK_LEN) != 0u) {
                WISP_CTR_INC(s, TCP_BADOPT); /* RFC 2018 §3: 8 bytes per block */
            } else if (!syn) {
                unsigned k, nb = (len - WISP_TCP_OPT_HDRLEN) / WISP_TCP_SACK_BLOCK_LEN;
                for (k = 0; k < nb && opt->nsack < 4u; k++) {
                    opt->sack[opt->nsack][0] = wisp_rd32(v + WISP_TCP_SACK_BLOCK_LEN * k);
                    opt->sack[opt->nsack][1] = wisp_rd32(v + 4u + WISP_TCP_SACK_BLOCK_LEN * k);
                    opt->nsack++;
                }
            }
            break;
        default:
            break; /* RFC 9293 §3.2: unknown options are ignored */
        }
    }
}

/* --------------------------------------------------- data delivery */

/* Refused data is a short queue of chains (a pbuf chain counts at most
 * 65535 bytes): len more in-order bytes fit when they join the last
 * chain or a chain slot is free. At most a window of data is refused
 * (the window stays closed by it), so with segments below 32 KB the
 * slots never run out. */
static WISP_NOINLINE bool tcp_refused_fits(const struct wisp_tcp_pcb *pcb, uint32_t len)
{
    return pcb->refused_n == 0u || pcb->refused_n < WISP_TCP_REFUSED_SLOTS ||
           (uint32_t)pcb->refused[pcb->refused_n - 1u]->tot_len + len <= 0xffffu;
}

/* Queue p behind the refused data (tcp_refused_fits said yes). */
static void tcp_refused_add(struct wisp_tcp_pcb *pcb, struct wisp_pbuf *p)
{
    if (pcb->refused_n > 0u && (uint32_t)pcb->refused[pcb->refused_n - 1u]->tot_len + p->tot_len <= 0xffffu) {
        (void)tcp_rx_append(pcb, pcb->refused[pcb->refused_n - 1u], p); /* short ones share blocks */
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

/* Offer in-order data p to the application: TCP_OFFER_TAKEN when it
 * took it, or when it was consumed here (shut down for receiving, closed,
 * nobody listens: discarded, the window kept open); TCP_OFFER_REFUSED
 * when the application refused it (the caller keeps p, offered again
 * when the retry timer runs out); TCP_OFFER_DEAD when the PCB died in the
 * callback. */
#define TCP_OFFER_TAKEN 0u
#define TCP_OFFER_REFUSED 1u
#define TCP_OFFER_DEAD 2u
static WISP_NOINLINE unsigned tcp_offer(struct wisp_tcp_pcb *pcb, struct wisp_pbuf *p)
{
    wisp_err_t err;
    if (pcb->recv == NULL || (pcb->flags & (TF_SHUT_RX | TF_CLOSED))) {
        uint32_t n = p->tot_len;
        wisp_pbuf_free(p);
        wisp_tcp_recved(pcb, n);
        return TCP_OFFER_TAKEN;
    }
    err = pcb->recv(pcb->c.arg, pcb, p, WISP_OK);
    if (tcp_dead(pcb)) {
        return TCP_OFFER_DEAD;
    }
    if (err != WISP_OK) {
        /* refused: kept and offered again later; the window stays
         * closed by these bytes meanwhile */
        tcp_timer_set(pcb, TCP_TMR_REFUSED, TCP_REFUSED_RETRY_MS);
        return TCP_OFFER_REFUSED;
    }
    return TCP_OFFER_TAKEN;
}

/* Give p to the application (or to the refused queue, behind what is
 * held back, in order). False when the PCB died in the callback. */
static bool tcp_deliver(struct wisp_tcp_pcb *pcb, struct wisp_pbuf *p)
{
    unsigned r = TCP_OFFER_REFUSED;
    if (pcb->refused_n == 0u || (pcb->flags & TF_SHUT_RX)) {
        r = tcp_offer(pcb, p);
    }
    if (r == TCP_OFFER_REFUSED) {
        tcp_refused_add(pcb, p);
    }
    return r != TCP_OFFER_DEAD;
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
        unsigned r;
        memmove(&pcb->refused[0], &pcb->refused[1], (pcb->refused_n - 1u) * sizeof(pcb->refused[0]));
        pcb->refused_n--;
        pcb->refused[pcb->refused_n] = NULL;
        r = tcp_offer(pcb, p);
        if (r == TCP_OFFER_DEAD) {
            return;
        }
        if (r == TCP_OFFER_REFUSED) {
            /* still refused: back to the front (its slot is free) */
            memmove(&pcb->refused[1], &pcb->refused[0], pcb->refused_n * sizeof(pcb->refused[0]));
            pcb->refused[0] = p;
            pcb->refused_n++;
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
#if WISP_TCP_SACK && WISP_TCP_DSACK
    if ((pcb->flags & TF_SACK) && TCP_SEQ_LT(l, r)) {
        pcb->flags |= TF_DSACK;
        pcb->dsack = l;
        pcb->dsack_len = (uint16_t)(r - l); /* (part of one segment) */
        WISP_CTR_INC(pcb->c.stack, TCP_DSACK); /* duplicate data reported */
    }
#else
    (void)pcb, (void)l, (void)r;
#endif
}

/* Segment data [*seq, *seq + *len) in p (taken): cut off what lies
 * below upto (above *seq), reported as duplicate data (RFC 2883 §4).
 * Returns what is left of p (NULL: nothing). */
static WISP_NOINLINE struct wisp_pbuf *tcp_trim_front(struct wisp_tcp_pcb *pcb, struct wisp_pbuf *p, uint32_t *seq, uint32_t *len,
                                        uint32_t upto)
{
    uint32_t d = upto - *seq;
    tcp_dsack_set(pcb, *seq, *seq + WISP_MIN(d, *len));
    *seq = upto;
    if (d >= *len) {
        *len = 0;
        wisp_pbuf_free(p);
        return NULL;
    }
    *len -= d;
    return tcp_pbuf_skip(p, d);
}

#if WISP_TCP_OOSEQ_POOL
/* An arrival into q->e[i]: it becomes the most recent (age 0), the
 * others age by one arrival (up to TCP_SACK_RECENT). */
static void tcp_sack_note(struct wisp_tcp_ooq *q, unsigned i)
{
#if WISP_TCP_SACK
    /* RFC 2018 §4: remember the most recent arrivals (first block first) */
    unsigned k;
    /* (q->n <= WISP_TCP_OOSEQ_SLOTS always; the second bound says so to
     * gcc -O3, whose -Wstringop-overflow cannot see it) */
    for (k = 0; k < q->n && k < WISP_TCP_OOSEQ_SLOTS; k++) {
        if ((q->fa[k] & TCP_OO_AGE) < TCP_SACK_RECENT) {
            q->fa[k]++;
        }
    }
    q->fa[i] &= TCP_OO_FIN;
#else
    (void)q, (void)i;
#endif
}
#endif

/* Remove out-of-order entry pos (its pbuf is the caller's). */
static void tcp_ooseq_del(struct wisp_tcp_ooq *q, unsigned pos)
{
    unsigned n = q->n - pos - 1u;
    memmove(&q->e[pos], &q->e[pos + 1u], n * sizeof(q->e[0]));
    memmove(&q->fa[pos], &q->fa[pos + 1u], n);
    q->n--;
}

#if WISP_TCP_OOSEQ_POOL
/* Queue an out-of-order segment [seq, seq + len) (+ FIN) in q, the PCB's
 * queue. Takes p. */
static WISP_NOINLINE void tcp_ooseq_add(struct wisp_tcp_pcb *pcb, struct wisp_tcp_ooq *q, struct wisp_pbuf *p,
                                        uint32_t seq, uint32_t len, bool fin)
{
    struct wisp_stack *s = pcb->c.stack;
    struct wisp_tcp_ooseq *prev;
    unsigned i, pos, nb;
    uint32_t end;

    WISP_ASSERT(p == NULL || p->tot_len == len); /* an entry's length is its data's (tcp_oo_len) */
    /* trim against the entries before (RFC 9293 §3.10.7.4: overlapping
     * data is the same data; keep one copy) */
    for (pos = 0; pos < q->n && TCP_SEQ_LEQ(q->e[pos].seq, seq); pos++) {
        const struct wisp_tcp_ooseq *e = &q->e[pos];
        uint32_t eend = e->seq + tcp_oo_len(e);
        if (TCP_SEQ_GEQ(eend, seq + len) && (!fin || (q->fa[pos] & TCP_OO_FIN) || TCP_SEQ_GT(eend, seq + len))) {
            wisp_pbuf_free(p); /* nothing new */
            /* RFC 2883 §4 rule 4: the D-SACK block, then the block holding it */
            tcp_dsack_set(pcb, seq, seq + len);
            tcp_sack_note(q, pos);
            return;
        }
        if (TCP_SEQ_GT(eend, seq)) {
            p = tcp_trim_front(pcb, p, &seq, &len, eend); /* RFC 2883 §4: the duplicate part */
        }
    }
    end = seq + len;
    /* drop later entries the new one covers completely */
    while (pos < q->n) {
        uint32_t eend = q->e[pos].seq + tcp_oo_len(&q->e[pos]);
        if (!TCP_SEQ_LEQ(eend, end) || ((q->fa[pos] & TCP_OO_FIN) && !fin && eend == end)) {
            break;
        }
        q->bufs = (uint16_t)(q->bufs - wisp_pbuf_clen(q->e[pos].p));
        wisp_pbuf_free(q->e[pos].p);
        tcp_ooseq_del(q, pos);
    }
    /* trim the tail against the next entry */
    if (pos < q->n && TCP_SEQ_LT(q->e[pos].seq, end)) {
        len = q->e[pos].seq - seq;
        p = tcp_pbuf_keep(p, len);
        fin = false;
        end = seq + len;
    }
    if (len == 0 && !fin) {
        wisp_pbuf_free(p);
        return;
    }
    nb = wisp_pbuf_clen(p); /* (a bare FIN: 0) */
    /* The entry before ends where this begins: join it, a short segment
     * copied into its last block (tcp_rx_append), so runs of small
     * segments behind a hole take blocks by their bytes. */
    prev = pos > 0 ? &q->e[pos - 1u] : NULL;
    if (prev != NULL) {
        uint32_t plen = tcp_oo_len(prev);
        if (p == NULL || (q->fa[pos - 1u] & TCP_OO_FIN) || prev->seq + plen != seq || plen + len > 0xffffu) {
            prev = NULL;
        }
    }
    if ((prev == NULL && q->n >= WISP_TCP_OOSEQ_SLOTS) ||
        (unsigned)q->bufs + nb > WISP_TCP_OOSEQ_MAX_PBUFS ||
        (nb > 0 && (unsigned)(s->pool[WISP_POOL_PBUF_RX].count - s->pool[WISP_POOL_PBUF_RX].used) <
                       TCP_OOSEQ_RX_RESERVE)) {
        /* bounded per connection, and never the last receive blocks of
         * the stack (the gap must stay fillable): the peer resends it */
        WISP_CTR_INC(s, TCP_OOSEQ_DROP);
        wisp_pbuf_free(p);
        return;
    }
    if (prev != NULL) {
        q->bufs = (uint16_t)(q->bufs + tcp_rx_append(pcb, prev->p, p)); /* its length grows by len */
        q->fa[pos - 1u] = (uint8_t)(q->fa[pos - 1u] | (fin ? TCP_OO_FIN : 0u));
        tcp_sack_note(q, pos - 1u);
        WISP_CTR_INC(s, TCP_OOSEQ);
        return;
    }
    for (i = q->n; i > pos; i--) {
        q->e[i] = q->e[i - 1u];
        q->fa[i] = q->fa[i - 1u];
    }
    q->e[pos].p = p; /* p holds len bytes (tcp_oo_len) */
    q->e[pos].seq = seq;
    q->fa[pos] = fin ? TCP_OO_FIN : 0u;
    q->n++;
    q->bufs = (uint16_t)(q->bufs + nb);
    tcp_sack_note(q, pos);
    WISP_CTR_INC(s, TCP_OOSEQ);
}
#endif

/* Queue an out-of-order segment [seq, seq + len) (+ FIN). Takes p. */
static void tcp_ooseq_insert(struct wisp_tcp_pcb *pcb, struct wisp_pbuf *p, uint32_t seq, uint32_t len, bool fin)
{
#if WISP_TCP_OOSEQ_POOL
    struct wisp_pool *pool = &pcb->c.stack->pool[WISP_POOL_TCP_OOSEQ];
    struct wisp_tcp_ooq *q = pcb->ooq;
    if (q == NULL) {
        /* its first out-of-order data: take a queue; none free, drop it
         * like data beyond the queue's bounds (the peer resends it) */
        q = (struct wisp_tcp_ooq *)wisp_pool_alloc(pool);
        if (q == NULL) {
            WISP_CTR_INC(pcb->c.stack, TCP_OOSEQ_DROP);
            wisp_pbuf_free(p);
            return;
        }
        q->n = 0;
        q->bufs = 0;
    }
    tcp_ooseq_add(pcb, q, p, seq, len, fin);
    if (q->n == 0) {
        wisp_pool_free(pool, q); /* nothing was kept: give the queue back */
        q = NULL;
    }
    pcb->ooq = q;
#else
    WISP_CTR_INC(pcb->c.stack, TCP_OOSEQ_DROP); /* no queue: out-of-order data is dropped */
    wisp_pbuf_free(p);
    (void)seq, (void)len, (void)fin;
#endif
}

/* Accept in-order data p of len bytes at rcv_nxt. False when pcb died.
 * Out of line: gcc -Os inlines it into both callers, with tcp_deliver. */
static WISP_NOINLINE bool tcp_take(struct wisp_tcp_pcb *pcb, struct wisp_pbuf *p, uint32_t len)
{
    pcb->rcv_nxt += len;
    pcb->rcv_wnd = pcb->rcv_wnd > len ? pcb->rcv_wnd - len : 0u;
    return tcp_deliver(pcb, p);
}

/* Move what became in-order from the out-of-order queue into the stream.
 * *fin: an in-order FIN was found. False when pcb died. */
static bool tcp_ooseq_merge(struct wisp_tcp_pcb *pcb, bool *fin)
{
    struct wisp_tcp_ooq *q;
    /* (the queue read again each time: the application ran in between) */
    while ((q = pcb->ooq) != NULL && TCP_SEQ_LEQ(q->e[0].seq, pcb->rcv_nxt) && !*fin) {
        struct wisp_tcp_ooseq e = q->e[0];
        uint32_t end = e.seq + tcp_oo_len(&e);
        bool e_fin = (q->fa[0] & TCP_OO_FIN) != 0;
        q->bufs = (uint16_t)(q->bufs - wisp_pbuf_clen(e.p)); /* (a bare FIN: 0) */
        tcp_ooseq_del(q, 0);
        if (q->n == 0) {
            tcp_free_ooseq(pcb); /* empty: the queue goes back */
        }
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
        if (e_fin && end == pcb->rcv_nxt) {
            *fin = true;
        }
    }
    if (*fin) {
        tcp_free_ooseq(pcb); /* nothing can follow a FIN */
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
    bool fin = (in->flags & WISP_TCP_FLAG_FIN) != 0;
    uint32_t right = TCP_SEQ_GT(pcb->rcv_adv, pcb->rcv_nxt) ? pcb->rcv_adv : pcb->rcv_nxt;

    *fin_in = false;
    /* Only the new part of a segment straddling RCV.NXT is processed. */
    if (TCP_SEQ_LT(seq, pcb->rcv_nxt)) {
        if (pcb->rcv_nxt - seq > len) {
            fin = false; /* an old FIN */
        }
        p = tcp_trim_front(pcb, p, &seq, &len, pcb->rcv_nxt); /* RFC 2883 §4: the part below RCV.NXT */
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
        bool had_gap = pcb->ooq != NULL;
        const struct wisp_pool *rx = &pcb->c.stack->pool[WISP_POOL_PBUF_RX];
        if (!tcp_refused_fits(pcb, len)) {
            WISP_CTR_INC(pcb->c.stack, TCP_DROP_REFUSED); /* cannot hold more: the peer resends */
            wisp_pbuf_free(p);
            pcb->flags |= TF_ACK_NOW;
            return true;
        }
        if (p->pool == rx && (uint32_t)rx->count - rx->used < TCP_RX_RESERVE / 2u &&
            !(pcb->refused_n > 0u && len < pcb->rcv_blk)) {
            /* The receive blocks are nearly gone (others hold them, or
             * the application keeps short segments in blocks of their
             * own; a short one joining refused data takes no block of
             * its own, tcp_rx_append): keeping this data could leave no block for the ACKs
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
        if (pcb->rcv_nxt - pcb->last_ack_sent >= 2u * (uint32_t)pcb->mss - 2u * WISP_TCP_MAX_OPTLEN) {
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
        if (pcb->ooq != NULL && !*fin_in) {
            if (!tcp_ooseq_merge(pcb, fin_in)) {
                return false;
            }
        }
    }
    return true;
}

/* ---------------------------------------------------- SYN-SENT */

/* The peer's SYN taken, for an active open (its SYN-ACK, tcp_syn_sent)
 * and a passive one (the SYN-queue entry, tcp_passive_pcb) alike: IRS,
 * RCV.NXT = IRS + 1 (RFC 9293 §3.10.7.3), the window our SYN or SYN-ACK
 * offered (promised: rcv_adv), SND.WL1, and the options -- each feature
 * only when both SYNs carried it (RFC 7323 §2.2/§3.2, RFC 2018 §2).
 * ws: the peer's shift (0xff: no option); synopts: TCP_SYNO_SACK |
 * TCP_SYNO_TS; tsval: its TSval (TS.Recent). */
void tcp_syn_take(struct wisp_tcp_pcb *pcb, uint32_t irs, uint32_t offered, uint16_t peer_mss, uint8_t ws,
                  unsigned synopts, uint32_t tsval)
{
    uint16_t ours = tcp_mss_ours(pcb);
    pcb->irs = irs;
    pcb->rcv_nxt = irs + 1u;
    pcb->last_ack_sent = pcb->rcv_nxt;
    pcb->rcv_adv = pcb->rcv_nxt + offered;
    pcb->snd_wl1 = irs;
    /* RFC 9293 §3.7.1 / RFC 6691: min(peer MSS or 536, MTU - 40) */
    pcb->mss = (uint16_t)WISP_MIN(peer_mss != 0 ? peer_mss : TCP_DEFAULT_MSS, ours);
#if WISP_TCP_WND_SCALE
    if (ws != 0xffu) {
        /* RFC 7323 §2.2/§2.3: both SYNs carried the option; shifts > 14
         * are taken as 14 */
        pcb->flags |= TF_WS;
        pcb->snd_wscale = (uint8_t)WISP_MIN(ws, TCP_MAX_WSCALE);
        pcb->rcv_wscale = tcp_rcv_wscale_ours();
    } else {
        pcb->snd_wscale = 0;
        pcb->rcv_wscale = 0;
    }
#else
    (void)ws;
#endif
    if (synopts & TCP_SYNO_SACK) {
        pcb->flags |= TF_SACK; /* 0 when compiled out */
    }
#if WISP_TCP_TIMESTAMPS
    if (synopts & TCP_SYNO_TS) {
        pcb->flags |= TF_TS;
        pcb->ts_recent = tsval;
        pcb->last_rx_ms = wisp_now(pcb->c.stack); /* TS.Recent's age (RFC 7323 §5.5) */
    }
#else
    (void)tsval;
#endif
}

/* The connected callback of an active open (or a simultaneous one, from
 * SYN-RECEIVED). False when the application aborted the connection. */
static WISP_NOINLINE bool tcp_notify_connected(struct wisp_tcp_pcb *pcb)
{
    if (pcb->connected != NULL) {
        wisp_err_t err = pcb->connected(pcb->c.arg, pcb, WISP_OK);
        if (err == WISP_ERR_ABRT || tcp_dead(pcb)) {
            return false;
        }
    }
    return true;
}

/* The result of a step of segment processing (tcp_process): TCP_GO, go
 * on with the next step; else the segment is dropped (freed), counted by
 * that counter id unless TCP_FREE (its counters, if any, already done). */
#define TCP_GO ((unsigned)WISP_CTR_COUNT)
#define TCP_FREE ((unsigned)WISP_CTR_COUNT + 1u)

/* RFC 9293 §3.10.7.3 SYN-SENT. TCP_GO when the connection is established
 * and the segment goes on to the sixth step (its data, its FIN: in->seq
 * then is the first data octet). */
static unsigned tcp_syn_sent(struct wisp_tcp_pcb *pcb, struct tcp_in *in)
{
    struct wisp_stack *s = pcb->c.stack;
    uint32_t now = wisp_now(s);

    /* first: check the ACK */
    if ((in->flags & WISP_TCP_FLAG_ACK) && (TCP_SEQ_LEQ(in->ack, pcb->iss) || TCP_SEQ_GT(in->ack, pcb->snd_nxt))) {
        tcp_rst_reply(s, in); /* <SEQ=SEG.ACK><CTL=RST> unless RST */
        return WISP_CTR_TCP_DROP_BADACK;
    }
    /* second: RST (RFC 5961 §3.2 for SYN-SENT: only with an acceptable
     * ACK) */
    if (in->flags & WISP_TCP_FLAG_RST) {
        WISP_CTR_INC(s, TCP_RST_RX);
        if (!(in->flags & WISP_TCP_FLAG_ACK)) {
            return WISP_CTR_TCP_DROP_RST;
        }
        tcp_pcb_kill(pcb, WISP_ERR_RST); /* "connection reset" / refused */
        return TCP_FREE;
    }
    /* fourth: SYN */
    if (!(in->flags & WISP_TCP_FLAG_SYN)) {
        return WISP_CTR_TCP_DROP_STATE;
    }
    /* what our SYN offered (tcp_connect set RCV.ADV - RCV.NXT to it) */
    tcp_syn_take(pcb, in->seq, pcb->rcv_adv - pcb->rcv_nxt, in->opt.mss, in->opt.ws,
                 (in->opt.sack_ok ? TCP_SYNO_SACK : 0u) | (in->opt.ts ? TCP_SYNO_TS : 0u), in->opt.tsval);
    /* RFC 7323 §2.2: the window of a SYN is never scaled */
    pcb->snd_wnd = in->wnd;
    pcb->max_snd_wnd = in->wnd;
    pcb->snd_wl2 = in->ack;
    pcb->flags |= TF_ACK_NOW;
    if (!(in->flags & WISP_TCP_FLAG_ACK)) {
        /* RFC 9293 §3.5 simultaneous open: SYN-SENT -> SYN-RECEIVED, send
         * <SEQ=ISS><ACK=RCV.NXT><CTL=SYN,ACK> (data on the SYN is not
         * kept). */
        pcb->c.state = WISP_TCP_SYN_RCVD;
        return TCP_FREE;
    }
    pcb->snd_una = in->ack;
    if ((pcb->flags & TF_TS) && in->opt.tsecr != 0) {
        /* RFC 7323 §4.1: the echo of our latest SYN (rtt_start: when it
         * left). A peer that answers a retransmitted SYN with the first
         * one's TSval would make the sample span our SYN timeout: no
         * sample then (RFC 6298 §5.7 sets the RTO). */
        if (TCP_SEQ_GEQ(in->opt.tsecr, pcb->rtt_start + TCP_TS_OFF(pcb))) {
            tcp_rtt_sample(pcb, (now + TCP_TS_OFF(pcb)) - in->opt.tsecr);
        }
    } else if ((pcb->flags & TF_RTT) && pcb->c.syn_rtx == 0) {
        tcp_rtt_sample(pcb, now - pcb->rtt_start); /* RFC 6298 §3 (Karn) */
    }
    tcp_set_established(pcb); /* (ends the SYN's timing: TF_RTT) */
    if (!tcp_notify_connected(pcb)) {
        return TCP_FREE;
    }
    /* data or FIN on the SYN-ACK: continue at the sixth step */
    in->seq += 1u;
    return TCP_GO;
}

/* RFC 9293 §3.3.2 (figure 5), the closing transitions as a per-state
 * table: the low nibble is where the peer's in-order FIN moves a state
 * (eighth step), the high nibble where the acknowledgment of our FIN
 * moves it (fifth step); a state that does not move maps to itself. */
#define TCP_FIN_NEXT(rx, tx) ((uint8_t)((unsigned)WISP_TCP_##rx | ((unsigned)WISP_TCP_##tx << 4)))
static const uint8_t tcp_fin_next[WISP_TCP_TIME_WAIT + 1] = {
    [WISP_TCP_CLOSED] = TCP_FIN_NEXT(CLOSED, CLOSED),
    [WISP_TCP_LISTEN] = TCP_FIN_NEXT(LISTEN, LISTEN),
    [WISP_TCP_SYN_SENT] = TCP_FIN_NEXT(SYN_SENT, SYN_SENT),
    [WISP_TCP_SYN_RCVD] = TCP_FIN_NEXT(CLOSE_WAIT, SYN_RCVD),
    [WISP_TCP_ESTABLISHED] = TCP_FIN_NEXT(CLOSE_WAIT, ESTABLISHED),
    [WISP_TCP_FIN_WAIT_1] = TCP_FIN_NEXT(CLOSING, FIN_WAIT_2), /* rx: simultaneous close (§3.6) */
    [WISP_TCP_FIN_WAIT_2] = TCP_FIN_NEXT(TIME_WAIT, FIN_WAIT_2),
    [WISP_TCP_CLOSE_WAIT] = TCP_FIN_NEXT(CLOSE_WAIT, CLOSE_WAIT),
    [WISP_TCP_CLOSING] = TCP_FIN_NEXT(CLOSING, TIME_WAIT),
    [WISP_TCP_LAST_ACK] = TCP_FIN_NEXT(LAST_ACK, CLOSED),
    [WISP_TCP_TIME_WAIT] = TCP_FIN_NEXT(TIME_WAIT, TIME_WAIT),
};

/* Our FIN is sent and acknowledged. */
static bool tcp_fin_acked(const struct wisp_tcp_pcb *pcb)
{
    return (pcb->flags & TF_FIN_QUEUED) && pcb->snd_una == pcb->snd_lbb;
}

/* RFC 9293 §3.10.7.4 eighth step: the state change for an in-order FIN
 * (FIN-WAIT-1 with our FIN acknowledged: CLOSING, then TIME-WAIT). */
static void tcp_fin_state(struct wisp_tcp_pcb *pcb)
{
    unsigned st = tcp_fin_next[pcb->c.state] & 0x0fu;
    if (tcp_fin_acked(pcb)) {
        st = tcp_fin_next[st] >> 4;
    }
    pcb->c.state = (uint8_t)st;
    if (st != WISP_TCP_FIN_WAIT_2) {
        tcp_timer_clear(pcb, TCP_TMR_FW2);
    }
}

/* ------------------------------------------------- the state machine */

/* RFC 9293 §3.10.7.4 first step: is the segment acceptable? Its table:
 * a segment without data (SYN/FIN count) is when RCV.NXT =< SEG.SEQ <
 * RCV.NXT + RCV.WND (a zero window: SEG.SEQ = RCV.NXT); one with data
 * when its first or its last octet is (a zero window: none is -- the
 * "special allowance ... to accept valid ACKs, URGs, and RSTs" takes one
 * at RCV.NXT, processed with its data trimmed off: tcp_seq_in_wnd). */
static bool tcp_seq_acceptable(const struct wisp_tcp_pcb *pcb, const struct tcp_in *in)
{
    uint32_t wnd = TCP_SEQ_GT(pcb->rcv_adv, pcb->rcv_nxt) ? pcb->rcv_adv - pcb->rcv_nxt : 0u;
    uint32_t seglen =
        in->len + ((in->flags & WISP_TCP_FLAG_SYN) ? 1u : 0u) + ((in->flags & WISP_TCP_FLAG_FIN) ? 1u : 0u);
    /* (the last octet's test is false for a zero window: x < 0) */
    return tcp_seq_in_wnd(in->seq, pcb->rcv_nxt, wnd) ||
           (seglen > 0u && in->seq + seglen - 1u - pcb->rcv_nxt < wnd);
}

/* The checks before RFC 9293 §3.10.7.4's first step: a repeated SYN of a
 * simultaneous open, a segment without ACK, SYN or RST, PAWS. False when
 * the segment is dropped (a step result). */
static unsigned tcp_precheck(struct wisp_tcp_pcb *pcb, struct tcp_in *in, uint32_t now)
{

    /* Simultaneous open: the peer's SYN-ACK repeats its SYN (RFC 9293 §3.5
     * figure 8, line 6); its SYN was already taken. */
    if (pcb->c.state == WISP_TCP_SYN_RCVD && (in->flags & WISP_TCP_FLAG_SYN) && in->seq == pcb->irs) {
        in->flags = (uint8_t)(in->flags & ~WISP_TCP_FLAG_SYN);
        in->seq += 1u;
        if (!(in->flags & WISP_TCP_FLAG_ACK)) {
            pcb->flags |= TF_ACK_NOW; /* a retransmitted SYN: resend SYN-ACK */
            return TCP_FREE;
        }
    }

    /* RFC 9293 §3.10.7.4 fifth: "if the ACK bit is off drop the segment".
     * In a synchronized state (or SYN-RECEIVED) a segment with none of
     * ACK, SYN, RST can never be processed; it is dropped here, before
     * the first step could answer it (a PAWS or out-of-window ACK), so a
     * bare FIN or data without ACK draws no reply (as on Linux). */
    if (!(in->flags & (WISP_TCP_FLAG_ACK | WISP_TCP_FLAG_SYN | WISP_TCP_FLAG_RST))) {
        return WISP_CTR_TCP_DROP_NOACK;
    }

    /* RFC 7323 §5.3 PAWS (R1): a TSval older than TS.Recent is a
     * duplicate from an old incarnation; RSTs are exempt. */
#if WISP_TCP_TIMESTAMPS
    if (pcb->flags & TF_TS) {
        if (in->opt.ts) {
            /* RFC 7323 §5.5: TS.Recent expired after the connection was
             * idle (no acceptable segment, which refreshes it) that long */
            if (wisp_time_before(pcb->last_rx_ms + TCP_PAWS_IDLE_MS, now)) {
                pcb->ts_recent = in->opt.tsval;
            } else if (!(in->flags & WISP_TCP_FLAG_RST) && TCP_SEQ_LT(in->opt.tsval, pcb->ts_recent)) {
                pcb->flags |= TF_ACK_NOW;
                return WISP_CTR_TCP_DROP_PAWS;
            }
        } else if (!(in->flags & WISP_TCP_FLAG_RST)) {
            /* RFC 7323 §3.2: once negotiated, a non-RST segment without
             * the option is dropped */
            return WISP_CTR_TCP_DROP_NOTS;
        }
    }
#else
    (void)now;
#endif
    return TCP_GO;
}

/* RFC 9293 §3.10.7.4 first step (sequence number) and what an acceptable
 * segment refreshes: the keepalive idle time, TS.Recent. False when the
 * segment is dropped (a step result). */
static unsigned tcp_first_step(struct wisp_tcp_pcb *pcb, const struct tcp_in *in, uint32_t now)
{
    if (!tcp_seq_acceptable(pcb, in)) {
        if (!(in->flags & WISP_TCP_FLAG_RST)) {
            pcb->flags |= TF_ACK_NOW; /* <SEQ=SND.NXT><ACK=RCV.NXT><CTL=ACK> */
            if (in->len > 0 && TCP_SEQ_LT(in->seq, pcb->rcv_nxt)) {
                /* RFC 2883 §4: old data received again (the ACK of the
                 * first copy was lost, or the retransmission was needless) */
                uint32_t end = in->seq + in->len;
                tcp_dsack_set(pcb, in->seq, TCP_SEQ_GT(end, pcb->rcv_nxt) ? pcb->rcv_nxt : end);
            }
        }
        return WISP_CTR_TCP_DROP_OOW;
    }
    pcb->last_rx_ms = now;
    pcb->c.keep_probes = 0;
    if (pcb->flags & TF_KEEPALIVE) {
        tcp_timer_set(pcb, TCP_TMR_KEEP, pcb->keep_idle);
    }
    /* RFC 7323 §4.3 (2): record TS.Recent when the segment covers
     * Last.ACK.sent. */
#if WISP_TCP_TIMESTAMPS
    if ((pcb->flags & TF_TS) && in->opt.ts && TCP_SEQ_GEQ(in->opt.tsval, pcb->ts_recent) &&
        TCP_SEQ_LEQ(in->seq, pcb->last_ack_sent)) {
        pcb->ts_recent = in->opt.tsval; /* (its time: last_rx_ms, above) */
    }
#endif
    return TCP_GO;
}

/* RFC 9293 §3.10.7.4 second (RST) and fourth (SYN) steps, and the fifth
 * step's "ACK bit off" (a step result). */
static unsigned tcp_rst_syn_steps(struct wisp_tcp_pcb *pcb, const struct tcp_in *in)
{
    /* second: RST (RFC 5961 §3.2) */
    if (in->flags & WISP_TCP_FLAG_RST) {
        WISP_CTR_INC(pcb->c.stack, TCP_RST_RX);
        if (in->seq == pcb->rcv_nxt) {
            /* exactly RCV.NXT: reset (SYN-RECEIVED from an active open:
             * refused; the others: reset; CLOSING/LAST-ACK: just closed) */
            tcp_pcb_kill(pcb, WISP_ERR_RST);
            return TCP_FREE;
        }
        tcp_send_challenge_ack(pcb); /* in the window but not exact */
        return WISP_CTR_TCP_DROP_RST;
    }

    /* fourth: SYN in a synchronized state (RFC 5961 §4.2: challenge ACK) */
    if (in->flags & WISP_TCP_FLAG_SYN) {
        tcp_send_challenge_ack(pcb);
        return WISP_CTR_TCP_DROP_SYN;
    }

    /* fifth: ACK */
    if (!(in->flags & WISP_TCP_FLAG_ACK)) {
        return WISP_CTR_TCP_DROP_NOACK;
    }
    return TCP_GO;
}

/* RFC 9293 §3.10.7.4 fifth step in SYN-RECEIVED: an ACK of our SYN
 * establishes the connection (the connected callback of a simultaneous
 * open), any other ACK gets a RST (a step result). */
static unsigned tcp_synrcvd_ack(struct wisp_tcp_pcb *pcb, const struct tcp_in *in)
{
    if (TCP_SEQ_GT(in->ack, pcb->snd_una) && TCP_SEQ_LEQ(in->ack, pcb->snd_nxt)) {
        pcb->snd_una = in->ack;
        tcp_set_established(pcb);
        if (pcb->flags & TF_FIN_QUEUED) {
            /* RFC 9293 §3.10.4: a CLOSE in SYN-RECEIVED waited for ESTABLISHED */
            pcb->c.state = WISP_TCP_FIN_WAIT_1;
        }
        pcb->snd_wnd = (uint32_t)in->wnd << TCP_SND_WS(pcb);
        pcb->max_snd_wnd = WISP_MAX(pcb->max_snd_wnd, pcb->snd_wnd);
        pcb->snd_wl1 = in->seq;
        pcb->snd_wl2 = in->ack;
        return tcp_notify_connected(pcb) ? TCP_GO : TCP_FREE;
    }
    tcp_rst_reply(pcb->c.stack, in); /* RFC 9293 §3.10.7.4 SYN-RECEIVED */
    return WISP_CTR_TCP_DROP_BADACK;
}

/* RFC 9293 §3.10.7.4 fifth step, the closing states: our FIN acknowledged
 * moves FIN-WAIT-1 to FIN-WAIT-2, CLOSING to TIME-WAIT, LAST-ACK to
 * CLOSED (tcp_fin_next; a step result: TCP_FREE when the PCB is gone). */
static unsigned tcp_fin_acked_state(struct wisp_tcp_pcb *pcb)
{
    unsigned st = tcp_fin_next[pcb->c.state] >> 4;
    if (st == pcb->c.state || !tcp_fin_acked(pcb)) {
        return TCP_GO;
    }
    if (st == WISP_TCP_FIN_WAIT_2) {
        pcb->c.state = WISP_TCP_FIN_WAIT_2;
        if (pcb->flags & TF_CLOSED) {
            tcp_timer_set(pcb, TCP_TMR_FW2, TCP_FIN_WAIT2_MS);
        }
        return TCP_GO;
    }
    if (st == WISP_TCP_TIME_WAIT) {
        tcp_enter_time_wait(pcb); /* RFC 9293 §3.6 simultaneous close */
    } else {
        tcp_pcb_kill(pcb, WISP_ERR_CLSD); /* LAST-ACK -> CLOSED */
    }
    return TCP_FREE;
}

/* RFC 9293 §3.10.7.4 fifth step (ACK) (a step result). */
static unsigned tcp_ack_step(struct wisp_tcp_pcb *pcb, const struct tcp_in *in)
{
    if (pcb->c.state == WISP_TCP_SYN_RCVD) {
        unsigned r = tcp_synrcvd_ack(pcb, in);
        if (r != TCP_GO) {
            return r;
        }
    }
    /* RFC 5961 §5.2: SND.UNA - MAX.SND.WND =< SEG.ACK =< SND.NXT, else
     * discard and send an ACK (throttled, §7); RFC 9293: an ACK of
     * something not yet sent gets an ACK too. */
    if (TCP_SEQ_GT(in->ack, pcb->snd_nxt) || TCP_SEQ_LT(in->ack, pcb->snd_una - pcb->max_snd_wnd)) {
        tcp_send_challenge_ack(pcb);
        return WISP_CTR_TCP_DROP_BADACK;
    }
    if (!tcp_ack_received(pcb, in)) {
        return TCP_FREE;
    }
    return tcp_fin_acked_state(pcb);
}

/* RFC 9293 §3.10.7.4 sixth (URG) is not supported: the urgent pointer is
 * ignored. Seventh: segment text; eighth: FIN. Consumes p. */
static void tcp_text_fin_steps(struct wisp_tcp_pcb *pcb, struct wisp_pbuf *p, struct tcp_in *in)
{
    bool fin_in = false;
    if (pcb->c.state == WISP_TCP_ESTABLISHED || pcb->c.state == WISP_TCP_FIN_WAIT_1 ||
        pcb->c.state == WISP_TCP_FIN_WAIT_2) {
        if (in->len > 0 && (pcb->flags & TF_CLOSED) && TCP_SEQ_GT(in->seq + in->len, pcb->rcv_nxt)) {
            /* RFC 1122 §4.2.2.13 / RFC 9293 §3.10.4: new data after the
             * application closed cannot be delivered: RST */
            WISP_CTR_INC(pcb->c.stack, TCP_DROP_AFTERCLOSE);
            wisp_pbuf_free(p);
            tcp_rst_close(pcb);
            return;
        }
        if (!tcp_receive(pcb, p, in, &fin_in)) {
            return;
        }
    } else {
        /* CLOSE-WAIT, CLOSING, LAST-ACK: the peer already sent its FIN;
         * anything else from it is a duplicate */
        if (in->len > 0 || (in->flags & WISP_TCP_FLAG_FIN)) {
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

/* RFC 9293 §3.10.7.4 SEGMENT ARRIVES, "Otherwise" (and §3.10.7.3 for
 * SYN-SENT): the steps in their order, each helper consuming the segment
 * when it ends the processing. */
void tcp_process(struct wisp_tcp_pcb *pcb, struct wisp_pbuf *p, struct tcp_in *in)
{
    struct wisp_stack *s = pcb->c.stack;
    uint32_t now = wisp_now(s);
    unsigned r;

    if (pcb->c.state == WISP_TCP_SYN_SENT) {
        r = tcp_syn_sent(pcb, in);
    } else {
        pcb->flags &= ~TF_DSACK; /* RFC 2883 §4 rule 1: D-SACK reports the latest segment only */
        r = tcp_precheck(pcb, in, now);
        if (r == TCP_GO) {
            r = tcp_first_step(pcb, in, now);
        }
        if (r == TCP_GO) {
            r = tcp_rst_syn_steps(pcb, in);
        }
        if (r == TCP_GO) {
            r = tcp_ack_step(pcb, in);
        }
    }
    if (r == TCP_GO) {
        tcp_text_fin_steps(pcb, p, in);
        return;
    }
    if (r != TCP_FREE) {
        WISP_CTR_INC_ID(s, r);
    }
    wisp_pbuf_free(p);
}

/* ---------------------------------------------------------- input */

void wisp_tcp_input(struct wisp_stack *s, struct wisp_pbuf *p, const struct wisp_ip_info *ip)
{
    uint8_t hdr[WISP_TCP_MAX_HLEN];
    struct tcp_in in;
    struct wisp_tcp_pcb *pcb, **pp;
    uint16_t hlen, tot = p->tot_len;
    unsigned drop;
    WISP_CORE_ASSERT_OWNER(s);

    WISP_CTR_INC(s, TCP_RX);
    /* RFC 1122 §4.2.3.10 / RFC 9293 §3.9.2: nothing for broadcast or
     * multicast destinations. */
    if (ip->bcast || ip->mcast) {
        drop = WISP_CTR_TCP_DROP_BCAST;
        goto drop;
    }
    if (tot < WISP_TCP_HLEN) {
        drop = WISP_CTR_TCP_DROP_SHORT;
        goto drop;
    }
    (void)wisp_pbuf_copy_out(p, hdr, WISP_TCP_HLEN, 0);
    /* RFC 9293 §3.1 Data Offset: 5..15 words, within the segment. */
    hlen = (uint16_t)((hdr[WISP_TCP_OFF_HLEN] >> 4) * 4u);
    if (hlen < WISP_TCP_HLEN || hlen > tot) {
        drop = WISP_CTR_TCP_DROP_BADOFF;
        goto drop;
    }
    /* RFC 9293 §3.1 Checksum (pseudo header + segment); RFC 1122 §4.2.2.7:
     * a bad checksum is discarded. */
    if (wisp_chksum_add(wisp_ip_chksum_pseudo(&ip->src, &ip->dst, WISP_IP4_PROTO_TCP, tot), wisp_pbuf_chksum(p, 0, tot)) !=
        0xFFFFu) {
        drop = WISP_CTR_TCP_DROP_CHKSUM;
        goto drop;
    }
    if (hlen > WISP_TCP_HLEN) {
        (void)wisp_pbuf_copy_out(p, hdr + WISP_TCP_HLEN, (uint16_t)(hlen - WISP_TCP_HLEN), WISP_TCP_HLEN);
    }
    in.ip = ip;
    in.sport = wisp_rd16(hdr + WISP_TCP_OFF_SPORT);
    in.dport = wisp_rd16(hdr + WISP_TCP_OFF_DPORT);
    in.seq = wisp_rd32(hdr + WISP_TCP_OFF_SEQ);
    in.ack = wisp_rd32(hdr + WISP_TCP_OFF_ACK);
    in.flags = (uint8_t)(hdr[WISP_TCP_OFF_FLAGS] & 0x3fu);
    in.wnd = wisp_rd16(hdr + WISP_TCP_OFF_WND);
    in.len = (uint16_t)(tot - hlen);
    tcp_parse_opts(s, hdr + WISP_TCP_HLEN, hlen - WISP_TCP_HLEN, (in.flags & WISP_TCP_FLAG_SYN) != 0, &in.opt);
    p = tcp_pbuf_skip(p, hlen); /* data only from here on (NULL: none) */

    /* connections */
    for (pp = &s->tcp.pcbs; (pcb = *pp) != NULL; pp = &pcb->next) {
        if (pcb->c.state != WISP_TCP_CLOSED && pcb->c.local_port == in.dport && pcb->remote_port == in.sport &&
            wisp_ipaddr_eq(&pcb->remote_ip, &ip->src) && wisp_ipaddr_eq(&pcb->c.local_ip, &ip->dst)) {
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
            tcp_finish(s, pcb, prev, 0u);
            return;
        }
    }
    if (tcp_tw_input(s, p, &in) || tcp_synq_input(s, p, &in) || tcp_listen_input(s, p, &in)) {
        return;
    }
    /* RFC 9293 §3.10.7.1 CLOSED: a RST for anything but a RST. */
    tcp_rst_reply(s, &in);
    drop = WISP_CTR_TCP_NOPORT;
drop:
    WISP_CTR_INC_ID(s, drop);
    wisp_pbuf_free(p);
}

/* ---------------------------------------------------- challenge ACKs */

/* RFC 5961 §7: a stack-wide limit on challenge ACKs (token bucket of
 * TCP_CHALLENGE_PER_S per second, in milli-tokens). */
bool tcp_challenge_allowed(struct wisp_stack *s)
{
    uint32_t now = wisp_now(s);
    uint32_t el = now - s->tcp.chal_last;
    uint32_t cap = TCP_CHALLENGE_PER_S * 1000u;
    s->tcp.chal_last = now;
    if (el > 1000u) {
        el = 1000u;
    }
    s->tcp.chal_tokens += el * TCP_CHALLENGE_PER_S;
    if (s->tcp.chal_tokens > cap) {
        s->tcp.chal_tokens = cap;
    }
    if (s->tcp.chal_tokens < 1000u) {
        WISP_CTR_INC(s, TCP_CHALLENGE_RATELIMIT);
        return false;
    }
    s->tcp.chal_tokens -= 1000u;
    return true;
}

/* ---------------------------------------------------- RTT (RFC 6298) */

void tcp_rtt_sample(struct wisp_tcp_pcb *pcb, uint32_t rtt)
{
    uint32_t rto, var;
    if (rtt == 0) {
        rtt = 1; /* clock granularity G = 1 ms */
    }
    if (pcb->srtt8 == 0) {
        /* RFC 6298 §2.2: the first measurement */
        pcb->srtt8 = rtt * 8u;
        pcb->rttvar4 = rtt * 2u;
    } else {
        /* RFC 6298 §2.3: RTTVAR <- 3/4 RTTVAR + 1/4 |SRTT - R'|,
         * SRTT <- 7/8 SRTT + 1/8 R' (scaled by 4 and 8) */
        uint32_t srtt = pcb->srtt8 / 8u;
        uint32_t d = rtt > srtt ? rtt - srtt : srtt - rtt;
        pcb->rttvar4 = pcb->rttvar4 - pcb->rttvar4 / 4u + d;
        pcb->srtt8 = pcb->srtt8 - pcb->srtt8 / 8u + rtt;
    }
    /* RTO <- SRTT + max(G, 4 * RTTVAR), bounded (§2.4, §2.5) */
    var = pcb->rttvar4 > 1u ? pcb->rttvar4 : 1u;
    rto = pcb->srtt8 / 8u + var;
    if (rto < WISP_TCP_RTO_MIN_MS) {
        rto = WISP_TCP_RTO_MIN_MS;
    }
    if (rto > WISP_TCP_RTO_MAX_MS) {
        rto = WISP_TCP_RTO_MAX_MS;
    }
    pcb->rto = rto;
}

/* ------------------------------------------------------ synchronized */

void tcp_set_established(struct wisp_tcp_pcb *pcb)
{
    pcb->c.state = WISP_TCP_ESTABLISHED;
    if (pcb->mss < 64u) {
        pcb->mss = 64u; /* a floor against absurd peer MSS values */
    }
    tcp_pmtu_init(pcb); /* a path MTU known for the peer (tcp_icmp.c) */
    tcp_cc_init(pcb, wisp_now(pcb->c.stack)); /* initial window, ssthresh (tcp_cc.c) */
    pcb->dupacks = 0;
    pcb->nrtx = 0;
    if (pcb->c.syn_rtx > 0 && pcb->srtt8 == 0 && pcb->rto < 3000u) {
        pcb->rto = 3000u; /* RFC 6298 §5.7 */
    }
    /* the SYN's timing ends here (a simultaneous open's SYN-ACK takes no
     * sample: tcp_synrcvd_ack moves SND.UNA before the ACK processing) */
    pcb->flags &= ~(TF_CTL_UNSENT | TF_RTT);
    tcp_timer_clear(pcb, TCP_TMR_RTO); /* our SYN is acknowledged (a passive PCB has none on) */
}

/* ---------------------------------------------------- ACK processing */

/* RFC 6675 §5 (scoreboard update) + §4 IsLost: mark SACKed segments,
 * then every unSACKed segment with DupThresh SACKed segments or more than
 * (DupThresh - 1) * SMSS SACKed bytes above it as lost. */
static void tcp_sack_update(struct wisp_tcp_pcb *pcb, const struct tcp_in *in)
{
    struct wisp_tcp_seg *g;
    uint32_t sacked_segs = 0, sacked_bytes = 0, smss = tcp_seg_max(pcb);
    unsigned i;

    pcb->flags |= TF_SCOREBOARD;
    for (i = 0; i < in->opt.nsack; i++) {
        uint32_t l = in->opt.sack[i][0], r = in->opt.sack[i][1];
        /* RFC 2018 §4 / RFC 6675 §5: ignore blocks that are empty, below
         * SND.UNA (D-SACK) or beyond what was sent. */
        if (!TCP_SEQ_LT(l, r) || TCP_SEQ_LEQ(r, pcb->snd_una) || TCP_SEQ_GT(r, pcb->snd_nxt)) {
            continue;
        }
        for (g = pcb->sndq; g != NULL && g != pcb->sndq_next; g = g->next) {
            if (g->len > 0 && TCP_SEQ_GEQ(g->seq, l) && TCP_SEQ_LEQ(g->seq + g->len, r)) {
                g->flags |= TCP_SEGF_SACKED;
            }
        }
    }
    for (g = pcb->sndq; g != NULL && g != pcb->sndq_next; g = g->next) {
        if (g->flags & TCP_SEGF_SACKED) {
            sacked_segs++;
            sacked_bytes += g->len;
        }
    }
    for (g = pcb->sndq; g != NULL && g != pcb->sndq_next && sacked_segs > 0; g = g->next) {
        if (g->flags & TCP_SEGF_SACKED) {
            sacked_segs--;
            sacked_bytes -= g->len;
            continue;
        }
        if (!(g->flags & TCP_SEGF_LOST) &&
            (sacked_segs >= TCP_DUPTHRESH || sacked_bytes > (TCP_DUPTHRESH - 1u) * smss)) {
            g->flags = (uint8_t)((g->flags | TCP_SEGF_LOST) & ~TCP_SEGF_RTXD);
        }
    }
}

/* Mark sent segment g lost (to be retransmitted next, RFC 6675 §4 /
 * RFC 6582 §3.2) and make the output send it (NULL or unsent: nothing). */
static WISP_NOINLINE void tcp_mark_lost(struct wisp_tcp_pcb *pcb, struct wisp_tcp_seg *g)
{
    if (g != NULL && (g->flags & TCP_SEGF_SENT)) {
        g->flags = (uint8_t)((g->flags | TCP_SEGF_LOST) & ~TCP_SEGF_RTXD);
        pcb->flags |= TF_FORCE_RTX | TF_SCOREBOARD;
    }
}

/* The first outstanding segment not SACKed. */
static struct wisp_tcp_seg *tcp_first_hole(struct wisp_tcp_pcb *pcb)
{
    struct wisp_tcp_seg *g;
    for (g = pcb->sndq; g != NULL && g != pcb->sndq_next; g = g->next) {
        if (!(g->flags & TCP_SEGF_SACKED)) {
            return g;
        }
    }
    return NULL;
}

/* RTT of an ACK of new data: RFC 7323 §4.1 (RTTM, only for ACKs of new
 * data), else the Karn-timed segment (RFC 6298 §3). An echo older than
 * the last transmission of the first newly acknowledged segment is
 * stale: the peer got an earlier copy whose ACK was lost and did not
 * record the duplicate's timestamp (RFC 7323 §4.3), so the sample would
 * include the whole loss episode and blow up SRTT; such samples are not
 * taken. */
static void tcp_ack_rtt(struct wisp_tcp_pcb *pcb, const struct tcp_in *in, uint32_t now)
{
    const struct wisp_tcp_seg *g = pcb->sndq;
    if ((pcb->flags & TF_TS) && in->opt.ts && in->opt.tsecr != 0 &&
        (g == NULL || !(g->flags & TCP_SEGF_SENT) || TCP_SEQ_GEQ(in->opt.tsecr, g->sent_ms + TCP_TS_OFF(pcb)))) {
        uint32_t rtt = (now + TCP_TS_OFF(pcb)) - in->opt.tsecr;
        if (rtt < WISP_TCP_RTO_MAX_MS) {
            tcp_rtt_sample(pcb, rtt);
        }
    } else if ((pcb->flags & TF_RTT) && TCP_SEQ_GT(in->ack, pcb->rtt_seq)) {
        tcp_rtt_sample(pcb, now - pcb->rtt_start);
        pcb->flags &= ~TF_RTT;
    }
}

/* Free the segments ack covers whole (SND.UNA already moved); returns
 * their data bytes (send buffer space given back). */
static uint32_t tcp_ack_free_segs(struct wisp_tcp_pcb *pcb, uint32_t ack)
{
    struct wisp_tcp_seg *g;
    uint32_t freed = 0;
    while ((g = pcb->sndq) != NULL && (g->flags & TCP_SEGF_SENT) && TCP_SEQ_LEQ(tcp_seg_end(g), ack)) {
        pcb->sndq = g->next;
        if (pcb->sndq_tail == g) {
            pcb->sndq_tail = NULL;
        }
        freed += g->len;
        tcp_seg_drop(pcb, g);
    }
    pcb->snd_queued -= WISP_MIN(freed, pcb->snd_queued);
    if (freed > 0) {
        tcp_mem_freed(pcb->c.stack);
    }
    if (pcb->snd_una == pcb->snd_nxt) {
        pcb->flags &= ~TF_SCOREBOARD; /* nothing sent is outstanding */
    }
    return freed;
}

/* Congestion control on an ACK of acked bytes of new data (flight: bytes
 * outstanding before it): the end of loss recovery, a partial ACK, or the
 * window's growth (tcp_cc.c). */
static void tcp_ack_cc(struct wisp_tcp_pcb *pcb, uint32_t ack, uint32_t acked, uint32_t flight, uint32_t now)
{
    uint32_t smss = tcp_seg_max(pcb);
    if (pcb->flags & TF_RECOVERY) {
        if (TCP_SEQ_GEQ(ack, pcb->recover)) {
            /* full ACK: leave recovery (RFC 6675 §5 / RFC 6582 §3.2
             * step 3, option 1) */
            flight = pcb->snd_nxt - pcb->snd_una;
            pcb->flags &= ~TF_RECOVERY;
            if (pcb->flags & TF_SACK) {
                pcb->cwnd = pcb->ssthresh;
            } else {
                pcb->cwnd = WISP_MIN(pcb->ssthresh, WISP_MAX(flight, smss) + smss);
            }
            pcb->dupacks = 0;
            tcp_cc_recovered(pcb, now);
        } else if (!(pcb->flags & TF_SACK)) {
            /* RFC 6582 §3.2 step 5: partial ACK -- retransmit the next
             * hole, deflate by the data acknowledged, add back one
             * SMSS when at least one SMSS was acknowledged. */
            tcp_mark_lost(pcb, pcb->sndq);
            pcb->cwnd = pcb->cwnd > acked ? pcb->cwnd - acked : smss;
            if (acked >= smss) {
                pcb->cwnd += smss;
            }
        }
    } else {
        pcb->dupacks = 0;
        /* slow start or the algorithm's congestion avoidance (tcp_cc.c) */
        tcp_cc_ack(pcb, acked, flight, now);
    }
}

/* An ACK of new data: RTT, SND.UNA, the acknowledged segments, congestion
 * control, the retransmission timer. Returns the data bytes freed. */
static uint32_t tcp_ack_new_data(struct wisp_tcp_pcb *pcb, const struct tcp_in *in, uint32_t now)
{
    uint32_t ack = in->ack;
    uint32_t acked = ack - pcb->snd_una;
    uint32_t flight = pcb->snd_nxt - pcb->snd_una; /* before this ACK */
    uint32_t freed;

    tcp_ack_rtt(pcb, in, now);
    pcb->snd_una = ack;
    if (!(pcb->flags & TF_PERSIST)) {
        pcb->nrtx = 0;
    }
    freed = tcp_ack_free_segs(pcb, ack);
    tcp_ack_cc(pcb, ack, acked, flight, now);
    /* RFC 6298 §5.2 / §5.3 */
    if (pcb->snd_una == pcb->snd_nxt) {
        tcp_timer_clear(pcb, TCP_TMR_RTO);
    } else if (!(pcb->flags & TF_PERSIST)) {
        tcp_rto_arm(pcb);
    }
    return freed;
}

/* RFC 9293 §3.10.7.4 fifth step: the send window, and leaving persist
 * mode when it opened. */
static void tcp_ack_wnd_update(struct wisp_tcp_pcb *pcb, const struct tcp_in *in, uint32_t new_wnd)
{
    /* window update when SND.WL1 < SEG.SEQ or (SND.WL1 = SEG.SEQ and
     * SND.WL2 =< SEG.ACK). */
    if (TCP_SEQ_LT(pcb->snd_wl1, in->seq) || (pcb->snd_wl1 == in->seq && TCP_SEQ_LEQ(pcb->snd_wl2, in->ack))) {
        pcb->snd_wnd = new_wnd;
        pcb->snd_wl1 = in->seq;
        pcb->snd_wl2 = in->ack;
        if (new_wnd > pcb->max_snd_wnd) {
            pcb->max_snd_wnd = new_wnd;
        }
    }
    if (pcb->flags & TF_PERSIST) {
        /* the window opened: leave persist mode (and when nothing is
         * left to send) */
        bool opened = pcb->sndq_next != NULL && TCP_SEQ_DIFF(pcb->snd_una + pcb->snd_wnd, pcb->sndq_next->seq) > 0;
        if (!opened && (pcb->sndq_next != NULL || pcb->snd_una != pcb->snd_nxt)) {
            return;
        }
        pcb->flags &= ~TF_PERSIST;
        tcp_timer_clear(pcb, TCP_TMR_PERSIST);
        if (opened) {
            /* a probe octet the window did not take goes again first */
            pcb->persist_backoff = 0;
            pcb->nrtx = 0;
            if (pcb->snd_una != pcb->snd_nxt) {
                tcp_mark_lost(pcb, pcb->sndq);
                tcp_rto_arm(pcb);
            }
        }
    }
}

/* Loss detection: DupThresh duplicate ACKs (RFC 5681 §3.2 step 2) or
 * the first hole deemed lost by the SACK scoreboard (RFC 6675 §5 (b)),
 * once per window (RFC 6582 §3.2 step 2: only when the ACK covers more
 * than "recover"). dupack: this ACK was a duplicate. */
static void tcp_ack_loss_detect(struct wisp_tcp_pcb *pcb, bool dupack, uint32_t now)
{
    struct wisp_stack *s = pcb->c.stack;
    uint32_t smss = tcp_seg_max(pcb);
    if (!(pcb->flags & TF_RECOVERY) && pcb->snd_una != pcb->snd_nxt && TCP_SEQ_GT(pcb->snd_una, pcb->recover)) {
        struct wisp_tcp_seg *hole = tcp_first_hole(pcb);
        bool lost = (pcb->flags & TF_SACK) && hole != NULL && (hole->flags & TCP_SEGF_LOST);
        if (hole != NULL && (pcb->dupacks >= TCP_DUPTHRESH || lost)) {
            uint32_t flight = pcb->snd_nxt - pcb->snd_una;
            pcb->ssthresh = tcp_cc_ssthresh(pcb, flight, false, now); /* RFC 5681 eq. (4), tcp_cc.c */
            pcb->recover = pcb->snd_nxt;
            pcb->flags = (pcb->flags | TF_RECOVERY) & ~TF_RTT;
            tcp_mark_lost(pcb, hole); /* (outstanding: sent) */
            /* RFC 6675 §5 step 4.2: cwnd = ssthresh; RFC 6582 §3.2 step 2
             * (NewReno): ssthresh + 3 * SMSS */
            pcb->cwnd = (pcb->flags & TF_SACK) ? pcb->ssthresh : pcb->ssthresh + TCP_DUPTHRESH * smss;
            TCP_STAT_ADD(pcb, st_fast_recoveries, 1u);
            WISP_CTR_INC(s, TCP_FAST_RETRANSMIT);
        }
    } else if ((pcb->flags & TF_RECOVERY) && dupack && !(pcb->flags & TF_SACK)) {
        pcb->cwnd += smss; /* RFC 6582 §3.2 step 4: inflate per duplicate ACK */
    }
}

bool tcp_ack_received(struct wisp_tcp_pcb *pcb, const struct tcp_in *in)
{
    uint32_t ack = in->ack;
    uint32_t now = wisp_now(pcb->c.stack);
    uint32_t new_wnd = (uint32_t)in->wnd << TCP_SND_WS(pcb);
    uint32_t freed = 0;
    bool dupack = false;

    if (pcb->flags & TF_PERSIST) {
        pcb->nrtx = 0; /* the peer answers our probes */
    }
    if (TCP_SEQ_GT(ack, pcb->snd_una)) {
        freed = tcp_ack_new_data(pcb, in, now);
    } else if (ack == pcb->snd_una && pcb->snd_nxt != pcb->snd_una && in->len == 0 &&
               !(in->flags & (WISP_TCP_FLAG_SYN | WISP_TCP_FLAG_FIN)) && new_wnd == pcb->snd_wnd && new_wnd != 0 &&
               !(pcb->flags & TF_PERSIST)) {
        /* RFC 5681 §2 DUPLICATE ACKNOWLEDGMENT (a)-(e); answers to
         * zero-window probes are no loss signal */
        dupack = true;
        if (pcb->dupacks < 255u) {
            pcb->dupacks++;
        }
    }
    tcp_ack_wnd_update(pcb, in, new_wnd);
    if ((pcb->flags & TF_SACK) && in->opt.nsack > 0) {
        tcp_sack_update(pcb, in);
    }
    tcp_ack_loss_detect(pcb, dupack, now);

    /* Only now, with SND.UNA, the send window (SND.WND/WL1/WL2) and the
     * congestion state all taken from this ACK, the application hears of
     * the freed send buffer: whatever it writes or sends from the
     * callback sees the peer's current right edge (and wisp_tcp_output
     * is deferred to the end of the segment's processing anyway). */
    if (freed > 0 && pcb->sent != NULL && !(pcb->flags & TF_CLOSED)) {
        wisp_err_t err = pcb->sent(pcb->c.arg, pcb, freed);
        if (err == WISP_ERR_ABRT || tcp_dead(pcb)) {
            return false;
        }
    }
    return true;
}

#else
typedef int wisp_tcp_in_disabled_t;
#endif /* WISP_TCP */
