/**
 * @file tcp_timer.c
 * TCP timers: the stack-wide tick (one wisp_timer armed for the earliest
 * deadline of all connections, tcp_priv.h TCP_TMR_*) and what
 * its deadlines do -- retransmission timeout (RFC 6298 §5, the loss
 * window of RFC 5681 §3.1), zero-window probes and the SWS override
 * (persist, RFC 9293 §3.8.6.1), keepalive (RFC 9293 §3.8.4), the delayed
 * ACK, the orphaned FIN-WAIT-2 limit, the poll callback, deferred output
 * and the refused-data retry -- and the expiry of TIME-WAIT records
 * (RFC 9293 §3.10.8; the records themselves: tcp_synq.c).
 */
#define WISP_PRIVATE_ACCESS 1 /* library code: sees the private tier (wisp/arch.h) */
#include "tcp_priv.h"
#include "tcp_cc.h"

#if WISP_TCP

/* ------------------------------------------------ the stack-wide tick */

/* One timer of the stack (s->tcp.tick_tmr) serves every connection: it is
 * armed for the earliest deadline of all PCBs (of s->tcp.pcbs and, without
 * compact TIME-WAIT, s->tcp.tw_pcbs), and each time it fires it runs the
 * due timers of the PCB that is due first, then re-arms for the next one
 * (another PCB due at the same time: at once). No periodic tick: the
 * deadlines keep their 1 ms precision (RTO, RFC 6298 §2.4: "finer clock
 * granularity (<= 100 msec) perform somewhat better"; the 40 ms delayed
 * ACK, RFC 9293 §3.8.6.3), and a stack without deadlines never wakes up.
 *
 * A PCB keeps its deadlines as 16-bit counts from the stack's base time
 * s->tcp.tbase: near (tcnt = ms after tbase, up to 65.5 s: RTO, persist,
 * delayed ACK, 2 MSL, poll, output) or far (bit of tfar: tcnt = 1024 ms
 * units after tbase rounded down to 1024 ms, up to 18.6 h: keepalive; it
 * is rounded up to the next multiple of 1024 ms, so it fires up to 1 s
 * late). The base moves to now at every tick and when a near deadline
 * does not fit (tcp_tick_walk); the counts are re-expressed exactly (a
 * far deadline lies on the 1024 ms grid), so nothing drifts. While the
 * tick is not armed no PCB has a deadline (tcp_timer_set arms it for
 * every one), so the base moves freely. */

static void tcp_tick_fn(struct wisp_stack *s, struct wisp_timer *t);

#define TCP_TFAR_SHIFT 10u
#define TCP_TFAR_UNIT (1u << TCP_TFAR_SHIFT)

/* Slot of the deadlines of each timer (TCP_TMR_SLOT), and the timers that
 * share it (tmr_on bits). */
const uint8_t tcp_tmr_slot[WISP_TCP_NTMR] = {0, 0, 1, 2, 2, 3, 4, 5};
static const uint8_t tcp_tmr_mates[WISP_TCP_NTMR] = {0x03, 0x03, 0x04, 0x18, 0x18, 0x20, 0x40, 0x80};

/* The origin of slot k's count (the base, or for a far count the base
 * rounded down to the grid) and its unit (a shift). */
static uint32_t tcp_torigin(const struct wisp_tcp_pcb *pcb, unsigned k, unsigned *sh)
{
    uint32_t b = pcb->c.stack->tcp.tbase;
    *sh = 0;
    if (pcb->tfar & (1u << k)) {
        *sh = TCP_TFAR_SHIFT;
        b &= ~(TCP_TFAR_UNIT - 1u);
    }
    return b;
}

uint32_t tcp_timer_due(const struct wisp_tcp_pcb *pcb, unsigned which)
{
    unsigned k = TCP_TMR_SLOT(which), sh;
    uint32_t o = tcp_torigin(pcb, k, &sh);
    return o + ((uint32_t)pcb->tcnt[k] << sh);
}

/* Walk every PCB's deadlines: the PCB due first (ties: list order) and
 * its deadline (NULL: none); with move, the base moves to now (an overdue
 * deadline becomes due now). */
static struct wisp_tcp_pcb *tcp_tick_walk(struct wisp_stack *s, bool move, uint32_t *due)
{
    struct wisp_tcp_pcb *pcb, *best = NULL;
    uint32_t now = wisp_now(s);
    unsigned l, i, sh;
    for (l = 0; l < 2u; l++) {
#if WISP_TCP_TW_COMPACT
        pcb = l == 0u ? s->tcp.pcbs : NULL;
#else
        pcb = l == 0u ? s->tcp.pcbs : s->tcp.tw_pcbs;
#endif
        for (; pcb != NULL; pcb = pcb->next) {
            for (i = 0; i < WISP_TCP_NTMR; i++) {
                if (pcb->tmr_on & (1u << i)) {
                    uint32_t d = tcp_timer_due(pcb, i), o;
                    unsigned k = TCP_TMR_SLOT(i);
                    if (best == NULL || wisp_time_before(d, *due)) {
                        best = pcb;
                        *due = d;
                    }
                    if (move) {
                        (void)tcp_torigin(pcb, k, &sh);
                        o = sh != 0u ? (now & ~(TCP_TFAR_UNIT - 1u)) : now;
                        pcb->tcnt[k] = (uint16_t)(wisp_time_before(o, d) ? (d - o) >> sh : 0u);
                    }
                }
            }
        }
    }
    if (move) {
        s->tcp.tbase = now;
    }
    return best;
}

void tcp_timer_set(struct wisp_tcp_pcb *pcb, unsigned which, uint32_t delay_ms)
{
    struct wisp_stack *s = pcb->c.stack;
    uint32_t now = wisp_now(s), off, d;
    unsigned k = TCP_TMR_SLOT(which), sh = 0;

    if (which == TCP_TMR_KEEP && (pcb->tmr_on & (1u << TCP_TMR_FW2))) {
        return; /* FIN-WAIT-2 / TIME-WAIT: no keepalive (tcp_keep_fire); the slot is FW2's */
    }
    pcb->tmr_on = (uint8_t)(pcb->tmr_on & ~tcp_tmr_mates[which]);
    if (!wisp_timer_armed(&s->tcp.tick_tmr)) {
        s->tcp.tbase = now; /* no deadline anywhere */
    }
    off = now - s->tcp.tbase;
    /* the base moves when a near deadline does not fit (a far one fits
     * while the base is less than 65.5 s old: keepalive, re-armed by
     * every segment, walks nothing) */
    if (off > 0xffffu || (delay_ms <= 0xffffu && delay_ms > 0xffffu - off)) {
        (void)tcp_tick_walk(s, true, &d);
        off = 0;
    }
    pcb->tfar = (uint8_t)(pcb->tfar & ~(1u << k));
    if (delay_ms > 0xffffu - off) {
        /* far: on the grid, rounded up (at most ~18.6 h ahead) */
        pcb->tfar = (uint8_t)(pcb->tfar | (1u << k));
        sh = TCP_TFAR_SHIFT;
        off += (s->tcp.tbase & (TCP_TFAR_UNIT - 1u)) + TCP_TFAR_UNIT - 1u;
        delay_ms = WISP_MIN(delay_ms, 0x3fff0000u);
    }
    d = (off + delay_ms) >> sh;
    pcb->tcnt[k] = (uint16_t)WISP_MIN(d, 0xffffu);
    pcb->tmr_on = (uint8_t)(pcb->tmr_on | (1u << which));
    /* the tick runs no later than every deadline (lazy: armed earlier, it
     * stays; it recomputes when it fires) */
    d = tcp_timer_due(pcb, which);
    if (!(pcb->flags & TF_DEAD)) {
        bool armed = wisp_timer_armed(&s->tcp.tick_tmr);
        if (!armed || wisp_time_before(d, s->tcp.tick_tmr.due)) {
            /* where the tick was is remembered: when this deadline is
             * cleared again (every write arms the output timer "now", its
             * output run clears it) the tick goes back there without a
             * walk over every PCB (tcp_timer_clear) */
            s->tcp.tick_back = armed ? 1u : 2u;
            s->tcp.tick_prev = s->tcp.tick_tmr.due;
            tcp_timer_arm_at(s, &s->tcp.tick_tmr, true, d, tcp_tick_fn);
        } else if (s->tcp.tick_back == 2u || (s->tcp.tick_back == 1u && wisp_time_before(d, s->tcp.tick_prev))) {
            s->tcp.tick_back = 1u; /* the way back stays no later than every other deadline */
            s->tcp.tick_prev = d;
        }
    }
}

void tcp_rto_arm(struct wisp_tcp_pcb *pcb)
{
    tcp_timer_set(pcb, TCP_TMR_RTO, pcb->rto);
}

uint32_t tcp_backoff(uint32_t t, unsigned n)
{
    for (; n > 0u && t < WISP_TCP_RTO_MAX_MS; n--) {
        t *= 2u;
    }
    return WISP_MIN(t, (uint32_t)WISP_TCP_RTO_MAX_MS);
}

/* Arm the tick for the earliest deadline: of a PCB, or the end of a
 * compact TIME-WAIT record. */
static void tcp_tick_arm(struct wisp_stack *s)
{
    uint32_t due = 0;
    bool any = tcp_tick_walk(s, false, &due) != NULL;
    s->tcp.tick_back = 0;
#if WISP_TCP_TW_COMPACT
    unsigned i;
    for (i = 0; i < WISP_TCP_TW_COUNT; i++) {
        const struct wisp_tcp_tw *w = &s->tcp.tw[i];
        if (w->local_port != 0 && (!any || wisp_time_before(w->expire, due))) {
            due = w->expire;
            any = true;
        }
    }
#endif
    tcp_timer_arm_at(s, &s->tcp.tick_tmr, any, due, tcp_tick_fn);
}

void tcp_timer_clear(struct wisp_tcp_pcb *pcb, unsigned which)
{
    struct wisp_stack *s = pcb->c.stack;
    bool was_on = (pcb->tmr_on & (1u << which)) != 0;

    pcb->tmr_on = (uint8_t)(pcb->tmr_on & ~(1u << which));
    /* A tick armed for exactly this deadline would fire for nothing --
     * and wake a stack thread that sleeps until the next deadline
     * (tcpip.c): every write arms the output timer "now" and the writer's
     * own output run clears it. Re-arm for the next deadline: where the
     * tcp_timer_set that advanced the tick found it (no deadline was
     * earlier then, and one set earlier since would have advanced it
     * again), else after a walk over every PCB. Otherwise the tick may
     * stay armed early: it re-arms itself when it fires. */
    if (was_on && wisp_timer_armed(&s->tcp.tick_tmr) && s->tcp.tick_tmr.due == tcp_timer_due(pcb, which) &&
        !(pcb->flags & TF_DEAD)) {
        if (s->tcp.tick_back != 0u) {
            tcp_timer_arm_at(s, &s->tcp.tick_tmr, s->tcp.tick_back == 1u, s->tcp.tick_prev, tcp_tick_fn);
            s->tcp.tick_back = 0;
        } else {
            tcp_tick_arm(s);
        }
    }
}

bool tcp_timer_on(const struct wisp_tcp_pcb *pcb, unsigned which)
{
    return (pcb->tmr_on & (1u << which)) != 0;
}

void tcp_timer_arm_at(struct wisp_stack *s, struct wisp_timer *t, bool any, uint32_t due, wisp_timer_fn fn)
{
    uint32_t now = wisp_now(s);
    if (!any) {
        wisp_timer_cancel(s, t);
        return;
    }
    wisp_timer_arm(s, t, wisp_time_before(now, due) ? due - now : 0u, fn);
}

/* Give up on pcb: count it (counter ctr), RST, report err. The one abort
 * of every timer (retransmissions, persist, keepalive). */
static void tcp_timer_abort(struct wisp_tcp_pcb *pcb, unsigned ctr, wisp_err_t err)
{
    WISP_CTR_INC_ID(pcb->c.stack, ctr);
    tcp_send_rst(pcb);
    tcp_pcb_kill(pcb, err);
}

static void tcp_keep_fire(struct wisp_tcp_pcb *pcb)
{
    struct wisp_stack *s = pcb->c.stack;
    if (!(pcb->flags & TF_KEEPALIVE) ||
        (pcb->c.state != WISP_TCP_ESTABLISHED && pcb->c.state != WISP_TCP_CLOSE_WAIT)) {
        return;
    }
    /* RFC 9293 §3.8.4 / RFC 1122 §4.2.3.6: after keep_idle without any
     * segment from the peer, probe every keep_intvl; give up after
     * keep_cnt unanswered probes. */
    if (pcb->c.keep_probes >= pcb->keep_cnt) {
        tcp_timer_abort(pcb, WISP_CTR_TCP_ABORT_KEEPALIVE, WISP_ERR_ABRT);
        return;
    }
    (void)tcp_send_keepalive(pcb);
    pcb->c.keep_probes++;
    WISP_CTR_INC(s, TCP_KEEPALIVE);
    tcp_timer_set(pcb, TCP_TMR_KEEP, pcb->keep_intvl);
}

/* Run timer which of pcb; the delayed ACK, poll, output and refused-data
 * timers end in one output run (which does nothing for a PCB that died
 * meanwhile). */
static WISP_NOINLINE void tcp_timer_handle(struct wisp_tcp_pcb *pcb, unsigned which)
{
    switch (which) {
    case TCP_TMR_RTO:
        tcp_rto_expired(pcb);
        return;
    case TCP_TMR_PERSIST:
        tcp_persist_expired(pcb);
        return;
    case TCP_TMR_DELACK:
        if (!(pcb->flags & TF_ACK_DELAY)) {
            return;
        }
        pcb->flags |= TF_ACK_NOW;
        break;
    case TCP_TMR_KEEP:
        tcp_keep_fire(pcb);
        return;
    case TCP_TMR_FW2:
        if (pcb->c.state == WISP_TCP_FIN_WAIT_2 && (pcb->flags & TF_CLOSED)) {
            tcp_pcb_release(pcb);
        }
#if !WISP_TCP_TW_COMPACT
        if (pcb->c.state == WISP_TCP_TIME_WAIT) {
            tcp_tw_pcb_end(pcb); /* RFC 9293 §3.10.8: 2 MSL over -> CLOSED */
        }
#endif
        return;
    case TCP_TMR_POLL:
        if (pcb->poll == NULL || pcb->poll_interval == 0 || (pcb->flags & TF_CLOSED)) {
            return;
        }
        tcp_timer_set(pcb, TCP_TMR_POLL, (uint32_t)pcb->poll_interval * WISP_TCP_POLL_UNIT_MS);
        if (pcb->poll(pcb->c.arg, pcb) == WISP_ERR_ABRT) {
            return;
        }
        break;
    case TCP_TMR_OUTPUT:
        break;
    default: /* TCP_TMR_REFUSED */
        tcp_deliver_refused(pcb);
        break;
    }
    tcp_output_run(pcb);
}

/* End the compact TIME-WAIT records that are due, run the due timers of
 * the PCB due first (the base moved to now), then re-arm for the next. */
static void tcp_tick_fn(struct wisp_stack *s, struct wisp_timer *t)
{
    uint32_t now = wisp_now(s), due = 0;
    struct wisp_tcp_pcb *pcb;
    WISP_UNUSED(t);
#if WISP_TCP_TW_COMPACT
    {
        unsigned i;
        for (i = 0; i < WISP_TCP_TW_COUNT; i++) {
            struct wisp_tcp_tw *w = &s->tcp.tw[i];
            if (w->local_port != 0 && !wisp_time_before(now, w->expire)) {
                tcp_tw_free(s, w); /* RFC 9293 §3.10.8: 2 MSL over -> CLOSED */
            }
        }
    }
#endif
    pcb = tcp_tick_walk(s, true, &due);

    if (pcb != NULL && !wisp_time_before(now, due)) {
        struct wisp_tcp_pcb *prev = tcp_enter(s, pcb);
        unsigned i;
        for (i = 0; i < WISP_TCP_NTMR && !tcp_dead(pcb); i++) {
            if ((pcb->tmr_on & (1u << i)) && !wisp_time_before(now, tcp_timer_due(pcb, i))) {
                pcb->tmr_on = (uint8_t)(pcb->tmr_on & ~(1u << i));
                tcp_timer_handle(pcb, i);
            }
        }
        tcp_finish(s, pcb, prev, TF_OUTPUT_PENDING); /* output asked for by a callback meanwhile */
    }
    tcp_tick_arm(s);
}

/* -------------------------------------------- retransmission timeout */

/* Abort for exhausted retransmissions. */
static void tcp_give_up(struct wisp_tcp_pcb *pcb)
{
    tcp_timer_abort(pcb, WISP_CTR_TCP_ABORT_RTX, WISP_ERR_TIMEOUT);
}

void tcp_rto_expired(struct wisp_tcp_pcb *pcb)
{
    struct wisp_stack *s = pcb->c.stack;
    struct wisp_tcp_seg *g;
    uint32_t flight, smss;

    bool syn = pcb->c.state == WISP_TCP_SYN_SENT || pcb->c.state == WISP_TCP_SYN_RCVD;

    if (syn) {
        if (pcb->c.syn_rtx >= WISP_TCP_SYNMAXRTX) {
            WISP_CTR_INC(s, TCP_ABORT_RTX);
            if (pcb->c.state == WISP_TCP_SYN_RCVD) {
                tcp_send_rst(pcb);
            }
            /* RFC 1122 §4.2.3.9: the last soft ICMP error is the reason */
            tcp_pcb_kill(pcb, tcp_icmp_timeout_err(pcb));
            return;
        }
        pcb->c.syn_rtx++;
        WISP_CTR_INC(s, TCP_SYN_RETRANSMIT);
    } else {
        if (pcb->snd_una == pcb->snd_nxt || (pcb->flags & TF_PERSIST)) {
            return;
        }
        if (pcb->nrtx >= WISP_TCP_MAXRTX) {
            tcp_give_up(pcb);
            return;
        }
        pcb->nrtx++;
        TCP_STAT_ADD(pcb, st_timeouts, 1u);
        WISP_CTR_INC(s, TCP_TIMEOUT);
        tcp_pmtu_rto(pcb); /* black-hole detection (tcp_icmp.c, RFC 4821) */
    }
    /* RFC 6298 §5.5: back off the timer (Karn: no RTT sample across a
     * retransmission). */
    pcb->rto = tcp_backoff(pcb->rto, 1u);
    pcb->flags &= ~TF_RTT;
    if (syn) {
        (void)tcp_send_syn(pcb);
        tcp_rto_arm(pcb);
        return;
    }
    smss = tcp_seg_max(pcb);
    flight = pcb->snd_nxt - pcb->snd_una;
    /* RFC 5681 §3.1 eq. (4), only for the first timeout of a series
     * (ssthresh is held for retransmissions of a retransmission). */
    if (pcb->nrtx == 1u) {
        pcb->ssthresh = tcp_cc_ssthresh(pcb, flight, true, wisp_now(s));
    }
    pcb->cwnd = smss; /* loss window */
    pcb->ca_acked = 0;
    pcb->dupacks = 0;
    pcb->flags &= ~TF_RECOVERY;
    pcb->recover = pcb->snd_nxt; /* RFC 6582 §3.2 step 4 guard */
    /* RFC 6675 §5.1 / RFC 2018 §8: the SACK information is discarded and
     * everything outstanding is retransmitted from SND.UNA. */
    for (g = pcb->sndq; g != NULL && g != pcb->sndq_next; g = g->next) {
        g->flags = (uint8_t)((g->flags & ~(TCP_SEGF_SACKED | TCP_SEGF_RTXD)) | TCP_SEGF_LOST);
    }
    pcb->flags |= TF_FORCE_RTX | TF_SCOREBOARD | TF_RTO_RTX;
    tcp_output_run(pcb);
    pcb->flags &= ~TF_RTO_RTX; /* (a dead PCB's flags are not read again) */
    if (!tcp_dead(pcb) && !tcp_timer_on(pcb, TCP_TMR_RTO) && pcb->snd_una != pcb->snd_nxt) {
        tcp_rto_arm(pcb);
    }
}

/* ----------------------------------------------------------- persist */

/* RFC 9293 §3.8.6.1: a peer may hold its window closed as long as it
 * answers the probes (RFC 1122 §4.2.2.17), "subject to the
 * implementation's resource management" (RFC 6429). Given up on (RST,
 * WISP_ERR_TIMEOUT): a peer silent for WISP_TCP_PERSIST_TIMEOUT_MS while
 * probed (it vanished), and one whose window has been closed that long
 * on data held in transmit blocks while a write was refused below its
 * guarantee (the blocks ran short) within that time. Returns the ms left
 * until then at now (the persist timer looks no later: the probe backoff
 * would overshoot it by up to WISP_TCP_RTO_MAX_MS), 0 when pcb was
 * killed. */
static uint32_t tcp_persist_give_up(struct wisp_tcp_pcb *pcb, uint32_t now)
{
#if WISP_TCP_PERSIST_TIMEOUT_MS > 0
    struct wisp_stack *s = pcb->c.stack;
    const uint32_t lim = (uint32_t)WISP_TCP_PERSIST_TIMEOUT_MS;
    uint32_t left = lim - WISP_MIN(lim, now - pcb->last_rx_ms);

    if (s->tcp.tx_short && now - s->tcp.tx_short_ms >= lim) {
        s->tcp.tx_short = 0; /* no write refused for that long */
    }
    if (s->tcp.tx_short && pcb->snd_blk > 0u) {
        left = WISP_MIN(left, lim - WISP_MIN(lim, now - pcb->persist_ms));
    }
    if (left == 0u) {
        tcp_timer_abort(pcb, WISP_CTR_TCP_ABORT_PERSIST, WISP_ERR_TIMEOUT);
    }
    return left;
#else
    WISP_UNUSED(pcb);
    WISP_UNUSED(now);
    return 0xffffffffu;
#endif
}

void tcp_persist_expired(struct wisp_tcp_pcb *pcb)
{
    struct wisp_stack *s = pcb->c.stack;
    struct wisp_tcp_seg *g;
    int32_t usable;
    uint32_t delay, now, left;

    if (!(pcb->flags & TF_PERSIST)) {
        return;
    }
    if (pcb->sndq_next == NULL && pcb->snd_una == pcb->snd_nxt) {
        pcb->flags &= ~TF_PERSIST;
        return;
    }
    if (pcb->nrtx >= WISP_TCP_MAXRTX) {
        tcp_give_up(pcb); /* the peer stopped answering the probes */
        return;
    }
    now = wisp_now(s);
    left = tcp_persist_give_up(pcb, now);
    if (left == 0u) {
        return;
    }
    if (TCP_SEQ_LT(now, pcb->persist_next)) {
        /* an early look at a give-up deadline: not yet a probe */
        tcp_timer_set(pcb, TCP_TMR_PERSIST, WISP_MIN(pcb->persist_next - now, left));
        return;
    }
    g = pcb->sndq_next;
    usable = g != NULL ? TCP_SEQ_DIFF(pcb->snd_una + pcb->snd_wnd, g->seq) : 0;
    if (g != NULL && usable > 0) {
        /* RFC 9293 §3.8.6.2.1 (4): the SWS override timeout -- send what
         * the window takes now (out of persist mode first: the segment
         * arms the retransmission timer). */
        pcb->flags &= ~TF_PERSIST;
        if (((uint32_t)usable >= g->len || tcp_seg_split(pcb, g, (uint32_t)usable)) &&
            tcp_send_seg(pcb, pcb->sndq_next, false) == WISP_OK) {
            return;
        }
        pcb->flags |= TF_PERSIST;
    } else {
        /* RFC 9293 §3.8.6.1 / RFC 1122 §4.2.2.17: a zero-window probe of
         * one octet of new data (or the earlier probe again). */
        WISP_CTR_INC(s, TCP_PERSIST);
        pcb->nrtx++;
        if (pcb->snd_una != pcb->snd_nxt) {
            (void)tcp_send_seg(pcb, pcb->sndq, true);
        } else if (g != NULL && (g->len <= 1u || tcp_seg_split(pcb, g, 1u))) {
            (void)tcp_send_seg(pcb, pcb->sndq_next, false);
        }
        tcp_timer_clear(pcb, TCP_TMR_RTO);
    }
    /* exponential backoff within the RTO bounds */
    if (pcb->persist_backoff < 16u) {
        pcb->persist_backoff++;
    }
    delay = tcp_backoff(WISP_MAX(pcb->rto, (uint32_t)WISP_TCP_RTO_MIN_MS), pcb->persist_backoff);
    pcb->persist_next = now + delay;
    tcp_timer_set(pcb, TCP_TMR_PERSIST, WISP_MIN(delay, left));
}

/* -------------------------------------------------- TIME-WAIT expiry */
#if WISP_TCP_TW_COMPACT
/* The records' ends are deadlines of the tick too (tcp_tick_arm,
 * tcp_tick_fn). */
void tcp_tw_arm(struct wisp_stack *s)
{
    tcp_tick_arm(s);
}
#endif /* WISP_TCP_TW_COMPACT */

#else
typedef int wisp_tcp_timer_disabled_t; /* ISO C forbids an empty translation unit */
#endif /* WISP_TCP */
