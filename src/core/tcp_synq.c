/**
 * @file tcp_synq.c
 * TCP passive opens and closed connections' remains: listeners
 * (wisp_tcp_listen, wisp_tcp_accept), the shared SYN queue of embryonic
 * connections (SYN received, SYN-ACK sent and retransmitted), SYN cookies
 * when a listener's backlog or the queue is full (RFC 4987 §3.6,
 * WISP_TCP_SYNCOOKIES), the input of segments for listeners and embryos
 * (RFC 9293 §3.10.7.2, the RFC 5961 §4 challenge ACK), TIME-WAIT (RFC 9293
 * §3.6.1, RFC 6191 reuse, RFC 1337) in compact records or, with
 * WISP_TCP_TW_COMPACT 0, in the connection's own PCB, and the keyed hash
 * index that finds SYN-queue entries and TIME-WAIT records (their expiry
 * timer: tcp_timer.c). The choices are listed in tcp.c.
 */
#define WISP_PRIVATE_ACCESS 1 /* library code: sees the private tier (wisp/arch.h) */
#include "tcp_priv.h"

#if WISP_TCP

/* --------------------------------- hash index (SYN queue, TIME-WAIT) */

#define TCP_HNONE 0xffffu

/* Bucket of a remote address and port pair among nb (a power of two): a
 * multiplicative mix keyed by hseed (derived from the secret key, so the
 * buckets cannot be aimed at; a collision costs a longer chain, never a
 * wrong match: every candidate is compared in full). */
static unsigned tcp_bucket(const struct wisp_stack *s, const wisp_ipaddr_t *rip, uint16_t rport, uint16_t lport,
                           unsigned nb)
{
    uint32_t h = ((uint32_t)wisp_ipaddr_ip4(rip) ^ s->tcp.hseed) * 0x9e3779b1u; /* IPv4 only: IPv6 extends */
    h ^= ((uint32_t)rport << 16) | lport;
    h *= 0x85ebca6bu;
    h ^= h >> 16;
    return (unsigned)(h & (nb - 1u));
}

/* The 4-tuple lip:lport - rip:rport is the one segment in came with. */
static bool tcp_in_is(const struct tcp_in *in, const wisp_ipaddr_t *lip, const wisp_ipaddr_t *rip, uint16_t lport,
                      uint16_t rport)
{
    return lport == in->dport && rport == in->sport && wisp_ipaddr_eq(lip, &in->ip->dst) &&
           wisp_ipaddr_eq(rip, &in->ip->src);
}

/* Insert entry i at the head of its chain / take it out of its chain. */
static void tcp_hlink(uint16_t *head, uint16_t *next, unsigned b, unsigned i)
{
    next[i] = head[b];
    head[b] = (uint16_t)i;
}

static void tcp_hunlink(uint16_t *head, uint16_t *next, unsigned b, unsigned i)
{
    uint16_t *pp = &head[b];
    while (*pp != TCP_HNONE) {
        if (*pp == i) {
            *pp = next[i];
            next[i] = TCP_HNONE;
            return;
        }
        pp = &next[*pp];
    }
}

#define TCP_SYNQ_NB WISP_TCP_HBUCKETS(WISP_TCP_SYNQ_COUNT)
/* An embryo's timestamp clock offset (RFC 7323 §5.4): none without
 * timestamps (no hash computed). */
#define TCP_SYN_TS_OFF(s, t) (WISP_TCP_TIMESTAMPS ? tcp_ts_offset((s), (t)) : 0u)
#define TCP_TW_NB WISP_TCP_HBUCKETS(WISP_TCP_TW_COUNT)

void tcp_hindex_reset(struct wisp_stack *s)
{
    memset(s->tcp.synq_head, 0xff, sizeof(s->tcp.synq_head));
    memset(s->tcp.synq_next, 0xff, sizeof(s->tcp.synq_next));
#if WISP_TCP_TW_COMPACT
    memset(s->tcp.tw_head, 0xff, sizeof(s->tcp.tw_head));
    memset(s->tcp.tw_next, 0xff, sizeof(s->tcp.tw_next));
#endif
}

/* An ACK <SEQ=seq><ACK=ack><CTL=ACK> for a connection without a PCB (a
 * TIME-WAIT record, an embryo), with the timestamp option (RFC 7323
 * Appendix A layout: NOP NOP TS length TSval TSecr) when ts. */
static void tcp_bare_ack(struct wisp_stack *s, const struct tcp_tuple *t, uint32_t seq, uint32_t ack, uint16_t wnd,
                         bool ts, uint32_t ts_off, uint32_t ts_recent, uint8_t tos, uint8_t ttl)
{
    uint8_t opt[WISP_TCP_TS_OPTLEN];
    const uint8_t *o = NULL; /* opt once written (never read unwritten) */
    uint8_t optlen = 0;
    if (WISP_TCP_TIMESTAMPS && ts) {
        (void)tcp_put_ts(opt, TCP_OPT4(WISP_TCP_OPT_NOP, WISP_TCP_OPT_NOP, 0, 0), wisp_now(s) + ts_off, ts_recent);
        optlen = WISP_TCP_TS_OPTLEN;
        o = opt;
    }
    (void)tcp_xmit_raw(s, t, seq, ack, WISP_TCP_FLAG_ACK, wnd, o, optlen, NULL, tos, ttl);
}

/* --------------------------------------------------------- TIME-WAIT */

#if WISP_TCP_TW_COMPACT
/* Compact records: what TIME-WAIT needs of a connection, the PCB freed. */
typedef struct wisp_tcp_tw tcp_tw_t;
#if WISP_TCP_TIMESTAMPS
#define TW_TS(w) ((w)->ts_ok != 0u)
#define TW_TS_RECENT(w) ((w)->ts_recent)
#else
#define TW_TS(w) false
#define TW_TS_RECENT(w) 0u
#endif

static unsigned tcp_tw_bucket(const struct wisp_stack *s, const struct wisp_tcp_tw *w)
{
    return tcp_bucket(s, &w->remote_ip, w->remote_port, w->local_port, TCP_TW_NB);
}

/* Free TIME-WAIT record w (in the index). */
void tcp_tw_free(struct wisp_stack *s, struct wisp_tcp_tw *w)
{
    unsigned i = (unsigned)(w - s->tcp.tw);
    tcp_hunlink(s->tcp.tw_head, s->tcp.tw_next, tcp_tw_bucket(s, w), i);
    memset(w, 0, sizeof(*w));
}

static void tcp_tw_end(struct wisp_stack *s, tcp_tw_t *w)
{
    tcp_tw_free(s, w);
    tcp_tw_arm(s);
}

/* (Re)start the 2 MSL of w. */
static void tcp_tw_restart(struct wisp_stack *s, tcp_tw_t *w)
{
    w->expire = wisp_now(s) + 2u * WISP_TCP_MSL_MS;
    tcp_tw_arm(s);
}

static void tcp_tw_ack(struct wisp_stack *s, const struct wisp_tcp_tw *w)
{
    struct tcp_tuple t;
    uint32_t wnd = (uint32_t)WISP_TCP_WND >> w->rcv_wscale;
    t.lip = w->local_ip;
    t.rip = w->remote_ip;
    t.lport = w->local_port;
    t.rport = w->remote_port;
    tcp_bare_ack(s, &t, w->snd_nxt, w->rcv_nxt, (uint16_t)(wnd > 65535u ? 65535u : wnd), TW_TS(w),
#if WISP_TCP_TIMESTAMPS
                 w->ts_off, w->ts_recent,
#else
                 0u, 0u,
#endif
                 w->tos, w->ttl);
}

/* RFC 9293 §3.6.1: keep the connection's identity for 2 MSL in a compact
 * record; the PCB is freed. When the pool of records is full the oldest
 * one is recycled (counted). */
void tcp_enter_time_wait(struct wisp_tcp_pcb *pcb)
{
    struct wisp_stack *s = pcb->c.stack;
    struct wisp_tcp_tw *w = NULL;
    unsigned i;

    for (i = 0; i < WISP_TCP_TW_COUNT; i++) {
        struct wisp_tcp_tw *x = &s->tcp.tw[i];
        if (x->local_port == 0) {
            w = x;
            break;
        }
        if (w == NULL || wisp_time_before(x->expire, w->expire)) {
            w = x;
        }
    }
    if (w->local_port != 0) {
        WISP_CTR_INC(s, TCP_TW_RECYCLED);
        tcp_tw_free(s, w);
    }
    w->local_ip = pcb->c.local_ip;
    w->remote_ip = pcb->remote_ip;
    w->local_port = pcb->c.local_port;
    w->remote_port = pcb->remote_port;
    w->snd_nxt = pcb->snd_nxt;
    w->rcv_nxt = pcb->rcv_nxt;
#if WISP_TCP_TIMESTAMPS
    w->ts_recent = pcb->ts_recent;
    w->ts_off = pcb->ts_off;
    w->ts_ok = (pcb->flags & TF_TS) ? 1u : 0u;
#endif
    w->tos = pcb->c.tos;
    w->ttl = pcb->c.ttl;
#if WISP_TCP_WND_SCALE
    w->rcv_wscale = pcb->rcv_wscale;
#endif
    tcp_hlink(s->tcp.tw_head, s->tcp.tw_next, tcp_tw_bucket(s, w), (unsigned)(w - s->tcp.tw));
    tcp_tw_restart(s, w);
    if (pcb->refused_n > 0u) {
        WISP_CTR_INC(s, TCP_DROP_REFUSED); /* the application never took it */
    }
    tcp_pcb_kill(pcb, WISP_ERR_CLSD);
}

static tcp_tw_t *tcp_tw_find(struct wisp_stack *s, const struct tcp_in *in)
{
    unsigned i;
    for (i = s->tcp.tw_head[tcp_bucket(s, &in->ip->src, in->sport, in->dport, TCP_TW_NB)]; i != TCP_HNONE;
         i = s->tcp.tw_next[i]) {
        struct wisp_tcp_tw *x = &s->tcp.tw[i];
        if (tcp_in_is(in, &x->local_ip, &x->remote_ip, x->local_port, x->remote_port)) {
            return x;
        }
    }
    return NULL;
}

bool tcp_tw_uses(const struct wisp_stack *s, uint16_t lport, const struct tcp_tuple *t)
{
    unsigned i;
    for (i = 0; i < WISP_TCP_TW_COUNT; i++) {
        const struct wisp_tcp_tw *w = &s->tcp.tw[i];
        if (w->local_port == lport &&
            (t == NULL || (w->remote_port == t->rport && wisp_ipaddr_eq(&w->local_ip, &t->lip) &&
                           wisp_ipaddr_eq(&w->remote_ip, &t->rip)))) {
            return true;
        }
    }
    return false;
}

void tcp_tw_reset(struct wisp_stack *s)
{
    memset(s->tcp.tw, 0, sizeof(s->tcp.tw)); /* (the tick finds nothing: tcp_timer.c) */
}

#else /* !WISP_TCP_TW_COMPACT */
/* TIME-WAIT in the connection's own PCB (as lwIP): the PCB leaves the
 * list of connections for s->tcp.tw_pcbs, belongs to the stack (the
 * application is told as with a record: the error callback with
 * WISP_ERR_CLSD) and its FIN-WAIT-2 deadline holds the 2 MSL. */
typedef struct wisp_tcp_pcb tcp_tw_t;
#if WISP_TCP_TIMESTAMPS
#define TW_TS(w) (((w)->flags & TF_TS) != 0u)
#define TW_TS_RECENT(w) ((w)->ts_recent)
#else
#define TW_TS(w) false
#define TW_TS_RECENT(w) 0u
#endif

/* RFC 9293 §3.10.8: 2 MSL over (tcp_timer.c), reuse, recycling. */
void tcp_tw_pcb_end(struct wisp_tcp_pcb *pcb)
{
    struct wisp_tcp_pcb **pp;
    for (pp = &pcb->c.stack->tcp.tw_pcbs; *pp != NULL; pp = &(*pp)->next) {
        if (*pp == pcb) {
            *pp = pcb->next;
            break;
        }
    }
    pcb->next = NULL;
    tcp_pcb_release(pcb); /* no longer on s->tcp.pcbs: just freed */
}

static void tcp_tw_end(struct wisp_stack *s, tcp_tw_t *w)
{
    WISP_UNUSED(s);
    tcp_tw_pcb_end(w);
}

static void tcp_tw_restart(struct wisp_stack *s, tcp_tw_t *w)
{
    WISP_UNUSED(s);
    tcp_timer_set(w, TCP_TMR_FW2, 2u * WISP_TCP_MSL_MS);
}

static void tcp_tw_ack(struct wisp_stack *s, tcp_tw_t *w)
{
    WISP_UNUSED(s);
    (void)tcp_send_ack(w);
}

/* RFC 9293 §3.6.1: the PCB stays for 2 MSL (its data all acknowledged);
 * what the application had not taken is dropped (counted). */
void tcp_enter_time_wait(struct wisp_tcp_pcb *pcb)
{
    struct wisp_stack *s = pcb->c.stack;
    struct wisp_tcp_pcb **pp;
    wisp_tcp_err_fn fn = (pcb->flags & TF_CLOSED) ? NULL : pcb->errf;
    void *arg = pcb->c.arg;

    if (pcb->refused_n > 0u) {
        WISP_CTR_INC(s, TCP_DROP_REFUSED); /* the application never took it */
        (void)tcp_refused_free(pcb);
    }
    tcp_free_ooseq(pcb); /* beyond the FIN: never deliverable */
    for (pp = &s->tcp.pcbs; *pp != NULL; pp = &(*pp)->next) {
        if (*pp == pcb) {
            *pp = pcb->next;
            s->tcp.npcbs--; /* no share of the receive budget */
            break;
        }
    }
    pcb->next = s->tcp.tw_pcbs;
    s->tcp.tw_pcbs = pcb;
    pcb->c.state = WISP_TCP_TIME_WAIT; /* (from CLOSING too: RFC 9293 §3.10.7.4 fifth) */
    pcb->flags |= TF_CLOSED;
    pcb->recv = NULL;
    pcb->sent = NULL;
    pcb->errf = NULL;
    pcb->poll = NULL;
    pcb->connected = NULL;
    pcb->tmr_on = 0;
    tcp_tw_restart(s, pcb);
    if (fn != NULL) {
        fn(arg, WISP_ERR_CLSD);
    }
}

static tcp_tw_t *tcp_tw_find(struct wisp_stack *s, const struct tcp_in *in)
{
    struct wisp_tcp_pcb *pcb;
    for (pcb = s->tcp.tw_pcbs; pcb != NULL; pcb = pcb->next) {
        if (tcp_in_is(in, &pcb->c.local_ip, &pcb->remote_ip, pcb->c.local_port, pcb->remote_port)) {
            return pcb;
        }
    }
    return NULL;
}

bool tcp_tw_uses(const struct wisp_stack *s, uint16_t lport, const struct tcp_tuple *t)
{
    const struct wisp_tcp_pcb *w;
    for (w = s->tcp.tw_pcbs; w != NULL; w = w->next) {
        if (w->c.local_port == lport &&
            (t == NULL || (w->remote_port == t->rport && wisp_ipaddr_eq(&w->c.local_ip, &t->lip) &&
                           wisp_ipaddr_eq(&w->remote_ip, &t->rip)))) {
            return true;
        }
    }
    return false;
}

/* A connection PCB; when none is free, the TIME-WAIT PCB nearest its end
 * is given up for it (counted), as lwIP does. */
struct wisp_tcp_pcb *tcp_pcb_alloc(struct wisp_stack *s)
{
    struct wisp_tcp_pcb *pcb = (struct wisp_tcp_pcb *)wisp_pool_alloc(&s->pool[WISP_POOL_TCP_PCB]);
    if (pcb == NULL && s->tcp.tw_pcbs != NULL) {
        struct wisp_tcp_pcb *w, *old = s->tcp.tw_pcbs;
        for (w = old->next; w != NULL; w = w->next) { /* newest first: ties go to the older */
            if (!wisp_time_before(tcp_timer_due(old, TCP_TMR_FW2), tcp_timer_due(w, TCP_TMR_FW2))) {
                old = w;
            }
        }
        WISP_CTR_INC(s, TCP_TW_RECYCLED);
        tcp_tw_pcb_end(old);
        pcb = (struct wisp_tcp_pcb *)wisp_pool_alloc(&s->pool[WISP_POOL_TCP_PCB]);
    }
    return pcb;
}

void tcp_tw_reset(struct wisp_stack *s)
{
    while (s->tcp.tw_pcbs != NULL) {
        tcp_tw_pcb_end(s->tcp.tw_pcbs);
    }
}
#endif /* WISP_TCP_TW_COMPACT */

bool tcp_tw_input(struct wisp_stack *s, struct wisp_pbuf *p, const struct tcp_in *in)
{
    tcp_tw_t *w = tcp_tw_find(s, in);
    bool ts;

    if (w == NULL) {
        return false;
    }
    ts = TW_TS(w) && in->opt.ts;
    if (in->flags & WISP_TCP_FLAG_RST) {
        /* RFC 1337 §3 (TIME-WAIT assassination): ignore RST in TIME-WAIT. */
        WISP_CTR_INC(s, TCP_RST_RX);
        goto out;
    }
    if ((in->flags & (WISP_TCP_FLAG_SYN | WISP_TCP_FLAG_ACK)) == WISP_TCP_FLAG_SYN) {
        /* RFC 6191 §2 / RFC 1122 §4.2.2.13: a new incarnation may reuse
         * the 4-tuple when its timestamp (or, without timestamps, its
         * sequence number) is above the old connection's. */
        if ((ts && TCP_SEQ_GT(in->opt.tsval, TW_TS_RECENT(w))) || (!ts && TCP_SEQ_GT(in->seq, w->rcv_nxt))) {
            tcp_tw_end(s, w);
            WISP_CTR_INC(s, TCP_TW_REOPEN);
            return false; /* the caller hands the SYN to the listener */
        }
        goto ack;
    }
    if (!(in->flags & (WISP_TCP_FLAG_SYN | WISP_TCP_FLAG_ACK))) {
        /* RFC 9293 §3.10.7.4 fifth: "if the ACK bit is off drop the
         * segment" -- applied before any reply (as for connections), so
         * an ACK-less FIN or data segment draws nothing. */
        WISP_CTR_INC(s, TCP_DROP_NOACK);
        goto out;
    }
    /* RFC 7323 §5.3 PAWS */
    if (ts && TCP_SEQ_LT(in->opt.tsval, TW_TS_RECENT(w))) {
        WISP_CTR_INC(s, TCP_DROP_PAWS);
        goto ack;
    }
    if ((in->flags & WISP_TCP_FLAG_FIN) && in->seq + in->len + 1u == w->rcv_nxt) {
        /* RFC 9293 §3.10.7.4 TIME-WAIT, eighth step: the retransmitted
         * FIN (it ends at RCV.NXT): acknowledge it and restart the 2 MSL
         * timeout. Any other FIN is only acknowledged below. */
        tcp_tw_restart(s, w);
        goto ack;
    }
    if (in->len == 0 && !(in->flags & WISP_TCP_FLAG_FIN) && in->seq == w->rcv_nxt) {
        goto out;
    }
    WISP_CTR_INC(s, TCP_DROP_OOW); /* RFC 9293 §3.10.7.4 first step: unacceptable -> ACK */
ack:
    tcp_tw_ack(s, w);
out:
    wisp_pbuf_free(p);
    return true;
}

/* --------------------------------------------------------- SYN queue */

static void tcp_synq_timer_fn(struct wisp_stack *s, struct wisp_timer *t);

static unsigned tcp_synq_bucket(const struct wisp_stack *s, const struct wisp_tcp_syn *e)
{
    return tcp_bucket(s, &e->remote_ip, e->remote_port, e->local_port, TCP_SYNQ_NB);
}

static void tcp_synq_arm(struct wisp_stack *s)
{
    uint32_t earliest = 0;
    bool any = false;
    unsigned i;
    for (i = 0; i < WISP_TCP_SYNQ_COUNT; i++) {
        const struct wisp_tcp_syn *e = &s->tcp.synq[i];
        if (e->lpcb != NULL && (!any || wisp_time_before(e->due, earliest))) {
            earliest = e->due;
            any = true;
        }
    }
    tcp_timer_arm_at(s, &s->tcp.synq_tmr, any, earliest, tcp_synq_timer_fn);
}

static void tcp_synq_remove(struct wisp_stack *s, struct wisp_tcp_syn *e)
{
    if (e->lpcb != NULL) {
        tcp_hunlink(s->tcp.synq_head, s->tcp.synq_next, tcp_synq_bucket(s, e), (unsigned)(e - s->tcp.synq));
        if (e->lpcb->synq_n > 0) {
            e->lpcb->synq_n--;
        }
    }
    memset(e, 0, sizeof(*e));
}

static void tcp_synq_tuple(const struct wisp_tcp_syn *e, struct tcp_tuple *t)
{
    t->lip = e->local_ip;
    t->rip = e->remote_ip;
    t->lport = e->local_port;
    t->rport = e->remote_port;
}

/* The SYN-ACK of embryo e (a SYN-queue entry, or one built for a cookie
 * on the stack; 4-tuple t) from listener l, offering window e->wnd and our MSS
 * ours, with timestamp clock offset ts_off. cookie_bits: the low TSval
 * bits of a SYN cookie (RFC 4987 §3.6 with timestamps), or -1. Returns
 * tcp_xmit_raw's result (a local failure is retried by the SYN queue; a
 * cookie's SYN-ACK is not: the peer resends its SYN). */
static wisp_err_t tcp_send_synack(struct wisp_stack *s, const struct wisp_tcp_listen *l, const struct wisp_tcp_syn *e,
                                  const struct tcp_tuple *t, int cookie_bits, uint16_t ours, uint32_t ts_off)
{
    uint8_t opt[WISP_TCP_MAX_OPTLEN];
    uint8_t n;
    uint32_t tsval = wisp_now(s) + ts_off;
#if !WISP_TCP_SYNCOOKIES
    WISP_UNUSED(cookie_bits);
#else
    if (cookie_bits >= 0) {
        /* Linux's layout: the low 6 bits carry the options; keep the
         * value at or below the clock so later TSvals never go back. */
        uint32_t v = (tsval & ~0x3fu) | (uint32_t)cookie_bits;
        if (TCP_SEQ_GT(v, tsval)) {
            v -= 64u;
        }
        tsval = v;
    }
#endif
    n = tcp_build_syn_opts(opt, ours, e->peer_wscale == 0xffu ? 0xffu : tcp_rcv_wscale_ours(),
                           (e->opts & TCP_SYNO_SACK) != 0, (e->opts & TCP_SYNO_TS) != 0, tsval, e->ts_recent);
    return tcp_xmit_raw(s, t, e->iss, e->irs + 1u, WISP_TCP_FLAG_SYN | WISP_TCP_FLAG_ACK, e->wnd, opt, n, NULL,
                        l->c.tos, l->c.ttl);
}

/* Helpers the SYN and the cookie's ACK both call: kept out of line then
 * (smaller code; not on a connection's per-segment path). */
#if WISP_TCP_SYNCOOKIES
#define TCP_SYN_NOINLINE WISP_NOINLINE
#else
#define TCP_SYN_NOINLINE
#endif

/* The window a SYN-ACK offers (unscaled, RFC 7323 §2.2) when our MSS
 * towards the peer is ours: the buffer, within the receive budget (one
 * more connection's share). */
static TCP_SYN_NOINLINE uint16_t tcp_synack_wnd(struct wisp_stack *s, uint16_t ours)
{
    return tcp_syn_wnd(s, WISP_TCP_WND, (uint32_t)s->tcp.npcbs + 1u, tcp_rx_blk(ours));
}

/* An embryo's connection state (what a SYN-ACK and the PCB made from it
 * need): a SYN-queue entry, or one on the stack for a SYN cookie. */
static TCP_SYN_NOINLINE void tcp_syn_fill(struct wisp_tcp_syn *e, const struct tcp_tuple *t, uint32_t iss, uint32_t irs, uint8_t ws,
                         bool sack, bool ts, uint32_t ts_recent)
{
    memset(e, 0, sizeof(*e));
    e->local_ip = t->lip;
    e->remote_ip = t->rip;
    e->local_port = t->lport;
    e->remote_port = t->rport;
    e->iss = iss;
    e->irs = irs;
    e->peer_wscale = ws;
    e->opts = (uint8_t)((sack ? TCP_SYNO_SACK : 0u) | (ts ? TCP_SYNO_TS : 0u));
    e->ts_recent = ts_recent;
}

/* RFC 9293 §3.10.7.4 first step for an embryo: seq lies in the window
 * its SYN-ACK offered, [IRS+1, IRS+1+wnd) (a zero window: just IRS+1). */
static bool tcp_synq_in_window(const struct wisp_tcp_syn *e, uint32_t seq)
{
    return tcp_seq_in_wnd(seq, e->irs + 1u, e->wnd);
}

/* RFC 5961 §3.2 / §7 for an embryo: a throttled challenge ACK
 * <SEQ=SND.NXT><ACK=RCV.NXT><CTL=ACK>, i.e. <SEQ=ISS+1><ACK=IRS+1>, with
 * the timestamp option when it was negotiated (RFC 7323 §3.2). */
static void tcp_synq_challenge_ack(struct wisp_stack *s, const struct wisp_tcp_syn *e)
{
    struct tcp_tuple t;
    bool ts = (e->opts & TCP_SYNO_TS) != 0;
    if (!tcp_challenge_allowed(s)) {
        return;
    }
    WISP_CTR_INC(s, TCP_CHALLENGE_ACK);
    tcp_synq_tuple(e, &t);
    /* RFC 7323 §2.2: unlike the SYN-ACK's, this window field is scaled
     * when both SYNs carry the option */
    tcp_bare_ack(s, &t, e->iss + 1u, e->irs + 1u,
                 (uint16_t)((e->peer_wscale != 0xffu && WISP_TCP_WND_SCALE) ? e->wnd >> tcp_rcv_wscale_ours() : e->wnd),
                 ts, ts ? TCP_SYN_TS_OFF(s, &t) : 0u, e->ts_recent, e->lpcb->c.tos, e->lpcb->c.ttl);
}

/* The RTO of an embryo after n retransmissions (RFC 6298 §5.5: the
 * initial RTO doubled per retry). */
static uint32_t tcp_synq_rto(unsigned n)
{
    return tcp_backoff(WISP_TCP_RTO_INIT_MS, n);
}

/* (Re)send the SYN-ACK of e and set its next deadline: the RTO when it
 * left, a quick retry when the stack itself could not send it (no buffer,
 * full queue: no loss in the network, no backoff). */
static void tcp_synq_send(struct wisp_stack *s, struct wisp_tcp_syn *e)
{
    struct tcp_tuple t;
    uint32_t d = TCP_OUTPUT_RETRY_MS;
    tcp_synq_tuple(e, &t);
    e->opts = (uint8_t)(e->opts & ~TCP_SYNO_UNSENT);
    if (tcp_send_synack(s, e->lpcb, e, &t, -1, tcp_mss_for(s, &t.rip), TCP_SYN_TS_OFF(s, &t)) == WISP_OK) {
        d = tcp_synq_rto(e->retries);
    } else {
        e->opts = (uint8_t)(e->opts | TCP_SYNO_UNSENT);
        WISP_CTR_INC(s, TCP_CTL_LOCAL_RETRY);
    }
    e->due = wisp_now(s) + d;
}

static void tcp_synq_timer_fn(struct wisp_stack *s, struct wisp_timer *t)
{
    uint32_t now = wisp_now(s);
    unsigned i;
    WISP_UNUSED(t);
    for (i = 0; i < WISP_TCP_SYNQ_COUNT; i++) {
        struct wisp_tcp_syn *e = &s->tcp.synq[i];
        if (e->lpcb == NULL || wisp_time_before(now, e->due)) {
            continue;
        }
        if (e->opts & TCP_SYNO_UNSENT) {
            tcp_synq_send(s, e); /* never left: no retransmission */
            continue;
        }
        if (e->retries >= WISP_TCP_SYNMAXRTX) {
            WISP_CTR_INC(s, TCP_SYNQ_TIMEOUT);
            tcp_synq_remove(s, e);
            continue;
        }
        e->retries++;
        WISP_CTR_INC(s, TCP_SYN_RETRANSMIT);
        tcp_synq_send(s, e);
    }
    tcp_synq_arm(s);
}

/* --------------------------------------------------------- listeners */

struct wisp_tcp_pcb *wisp_tcp_listen(struct wisp_tcp_pcb *pcb, uint8_t backlog, wisp_err_t *err)
{
    struct wisp_stack *s;
    struct wisp_tcp_listen *l;
    wisp_err_t e = WISP_OK;

    WISP_CORE_ASSERT_OWNER(tcp_stack_of(pcb));
    if (pcb == NULL || tcp_is_listen(pcb) || pcb->c.state != WISP_TCP_CLOSED) {
        e = WISP_ERR_VAL;
        goto fail;
    }
    s = pcb->c.stack;
    if (pcb->c.local_port == 0) {
        e = wisp_tcp_bind(pcb, NULL, 0);
        if (e != WISP_OK) {
            goto fail;
        }
    }
    l = (struct wisp_tcp_listen *)wisp_pool_alloc(&s->pool[WISP_POOL_TCP_LISTEN]);
    if (l == NULL) {
        e = WISP_ERR_MEM;
        goto fail;
    }
    memset(l, 0, sizeof(*l));
    l->c = pcb->c; /* (with cc_algo: passed on to the connections it accepts) */
    l->c.state = WISP_TCP_LISTEN;
    l->backlog = backlog == 0 ? 1u : backlog;
    tcp_pcb_release(pcb); /* lwIP tcp_listen semantics: the PCB passed in is freed */
    l->next = s->tcp.listens;
    s->tcp.listens = l;
    if (err != NULL) {
        *err = WISP_OK;
    }
    return (struct wisp_tcp_pcb *)(void *)l;
fail:
    if (err != NULL) {
        *err = e;
    }
    return NULL;
}

void wisp_tcp_accept(struct wisp_tcp_pcb *lpcb, wisp_tcp_accept_fn fn)
{
    WISP_CORE_ASSERT_OWNER(tcp_stack_of(lpcb));
    if (lpcb != NULL && tcp_is_listen(lpcb)) {
        tcp_as_listen(lpcb)->accept = fn;
    }
}

void wisp_tcp_accept_ready(struct wisp_tcp_pcb *lpcb, wisp_tcp_accept_ready_fn fn)
{
    WISP_CORE_ASSERT_OWNER(tcp_stack_of(lpcb));
    if (lpcb != NULL && tcp_is_listen(lpcb)) {
        tcp_as_listen(lpcb)->ready = fn;
    }
}

/* Room in l's accept queue (asked before a connection is created, never
 * after: no connection is accepted and then reset for want of room). */
static bool tcp_listen_room(const struct wisp_tcp_listen *l)
{
    return l->ready == NULL || l->ready(l->c.arg);
}

void tcp_listen_free(struct wisp_tcp_listen *l)
{
    struct wisp_stack *s = l->c.stack;
    struct wisp_tcp_listen **pp;
    unsigned i;
    for (i = 0; i < WISP_TCP_SYNQ_COUNT; i++) {
        if (s->tcp.synq[i].lpcb == l) {
            tcp_synq_remove(s, &s->tcp.synq[i]);
        }
    }
    for (pp = &s->tcp.listens; *pp != NULL; pp = &(*pp)->next) {
        if (*pp == l) {
            *pp = l->next;
            break;
        }
    }
    wisp_pool_free(&s->pool[WISP_POOL_TCP_LISTEN], l);
}

static struct wisp_tcp_listen *tcp_find_listener(struct wisp_stack *s, const struct tcp_in *in)
{
    struct wisp_tcp_listen *l, *best = NULL;
    for (l = s->tcp.listens; l != NULL; l = l->next) {
        if (l->c.local_port != in->dport) {
            continue;
        }
        if (wisp_ipaddr_eq(&l->c.local_ip, &in->ip->dst)) {
            return l; /* a specific address beats the wildcard */
        }
        if (wisp_ipaddr_is_any(&l->c.local_ip)) {
            best = l;
        }
    }
    return best;
}

/* ------------------------------------------------------- SYN cookies */

#if WISP_TCP_SYNCOOKIES
/* RFC 4987 §3.6 SYN cookie: top 5 bits a coarse time counter, 3 bits the
 * index of the MSS in this table, 24 bits a keyed hash of the 4-tuple, the
 * counter and the peer's ISN. */
static const uint16_t tcp_cookie_mss[8] = { 216, 536, 1200, 1360, 1400, 1440, 1452, 1460 };

/* The cookie of counter cnt without its MSS bits: the one SipHash of a
 * cookie (the 4-tuple, domain 2, the counter and the peer's ISN). Its low
 * 24 bits go into the cookie, its high 32 bits are the connection's
 * timestamp clock offset (*ts_off; RFC 7323 §5.4: per connection,
 * recomputed from the cookie's ACK), so a flood SYN costs one hash. */
static uint32_t tcp_cookie_at(struct wisp_stack *s, const struct tcp_tuple *t, uint32_t cnt,
                             uint32_t irs, uint32_t *ts_off)
{
    uint64_t h = tcp_hash(s, t, 2, cnt, irs);
    *ts_off = (uint32_t)(h >> 32);
    return ((cnt & 31u) << 27) | ((uint32_t)h & 0xffffffu);
}

static uint32_t tcp_cookie_make(struct wisp_stack *s, const struct tcp_tuple *t, uint32_t irs, uint16_t mss,
                                uint32_t *ts_off)
{
    uint32_t idx = 0, i;
    for (i = 0; i < 8u; i++) {
        if (tcp_cookie_mss[i] <= mss) {
            idx = i;
        }
    }
    return tcp_cookie_at(s, t, wisp_now(s) / TCP_COOKIE_PERIOD_MS, irs, ts_off) | (idx << 24);
}

/* Valid cookie: *mss gets the encoded MSS, *ts_off the connection's
 * timestamp offset. The counter may be this period's or the previous
 * one's. */
static bool tcp_cookie_check(struct wisp_stack *s, const struct tcp_tuple *t, uint32_t cookie, uint32_t irs,
                             uint16_t *mss, uint32_t *ts_off)
{
    uint32_t cnt = wisp_now(s) / TCP_COOKIE_PERIOD_MS;
    unsigned d;
    for (d = 0; d < 2u; d++) {
        uint32_t c = cnt - d;
        if ((c & 31u) == (cookie >> 27) && tcp_cookie_at(s, t, c, irs, ts_off) == (cookie & ~(7u << 24))) {
            *mss = tcp_cookie_mss[(cookie >> 24) & 7u];
            return true;
        }
    }
    return false;
}
#endif /* WISP_TCP_SYNCOOKIES */

/* ------------------------------------------------------ passive open */

/* A connection PCB for a completed passive open (ESTABLISHED) of embryo
 * e (4-tuple t). */
static struct wisp_tcp_pcb *tcp_passive_pcb(struct wisp_stack *s, struct wisp_tcp_listen *l,
                                            const struct wisp_tcp_syn *e, const struct tcp_tuple *t, uint32_t ts_off)
{
    struct wisp_tcp_pcb *pcb = tcp_pcb_alloc(s);
    uint32_t iss = e->iss;
    if (pcb == NULL) {
        return NULL;
    }
    tcp_new_defaults(s, pcb);
    pcb->c.arg = l->c.arg;
    pcb->c.tos = l->c.tos;
    pcb->c.ttl = l->c.ttl;
    pcb->c.cc_algo = l->c.cc_algo;
    pcb->flags |= TF_PASSIVE;
    /* (ts_off: the clock our SYN-ACK's TSval was read from) */
    (void)tcp_pcb_open(pcb, t, iss, ts_off);
    pcb->snd_una = iss + 1u; /* our SYN is acknowledged */
    pcb->snd_nxt = iss + 1u;
    pcb->snd_wl2 = iss;
    /* IRS, RCV.NXT, the window the SYN-ACK offered, the options */
    tcp_syn_take(pcb, e->irs, e->wnd, e->peer_mss, e->peer_wscale, e->opts & (TCP_SYNO_SACK | TCP_SYNO_TS),
                 e->ts_recent);
    pcb->c.state = WISP_TCP_SYN_RCVD;
    tcp_link(s, pcb);
    tcp_set_established(pcb); /* (takes over the promise of the SYN-ACK's window) */
    if (e->wnd < WISP_MIN((uint32_t)WISP_TCP_WND, 65535u)) {
        /* the receive budget held the offer back: announce more once the
         * blocks are there (the peer may have nothing to send before) */
        pcb->starve = 1;
        tcp_timer_set(pcb, TCP_TMR_OUTPUT, TCP_STARVE_RETRY_MS);
    }
    return pcb;
}

/* Hand a passive connection to the listener's accept callback, then
 * process the rest of the segment (data, FIN) on it. Consumes p. */
static void tcp_accept_and_process(struct wisp_stack *s, struct wisp_tcp_listen *l, struct wisp_tcp_pcb *pcb,
                                   struct wisp_pbuf *p, struct tcp_in *in)
{
    struct wisp_tcp_pcb *prev = tcp_enter(s, pcb);
    wisp_err_t err = WISP_ERR_ABRT;
    WISP_CTR_INC(s, TCP_ACCEPT);
    if (l->accept != NULL) {
        err = l->accept(l->c.arg, pcb, WISP_OK);
    }
    if (!tcp_dead(pcb) && err != WISP_OK) {
        /* refused by the application (or no accept callback): abort */
        tcp_rst_close(pcb);
    }
    if (tcp_dead(pcb)) {
        (void)tcp_leave(s, pcb, prev);
        wisp_pbuf_free(p);
        return;
    }
    tcp_process(pcb, p, in);
    tcp_finish(s, pcb, prev, 0u);
}

/* RFC 9293 §3.10.7.4 SYN-RECEIVED, fifth step: an acceptable ACK of
 * embryo e (4-tuple t; a SYN-queue entry, or one built from a SYN cookie,
 * e->lpcb NULL) moves the connection to ESTABLISHED: a PCB made from e,
 * handed to listener l, processes the rest of the segment. Returns
 * WISP_CTR_COUNT when it did (p consumed), else the counter of the drop
 * (p is the caller's; the embryo stays). */
static unsigned tcp_embryo_open(struct wisp_stack *s, struct wisp_tcp_listen *l, struct wisp_tcp_syn *e,
                                const struct tcp_tuple *t, uint32_t ts_off, struct wisp_pbuf *p, struct tcp_in *in)
{
    struct wisp_tcp_pcb *pcb;
    if (!tcp_listen_room(l)) {
        /* The application's accept queue is full. Drop the ACK (counted)
         * and keep the embryo in SYN-RECEIVED, as for a lost ACK (§3.5:
         * the handshake recovers from loss by retransmission): the
         * retransmitted SYN-ACK draws a new ACK, and the peer's data
         * carries one, and the first of them to arrive once there is room
         * completes the handshake; the entry's timeout bounds the wait (a
         * cookie's ACK comes back with the peer's retransmitted data
         * within the cookie's two periods, RFC 4987 §3.6). Linux drops
         * the ACK too (an overflowing accept queue); a RST would fail a
         * connection whose connect() had already succeeded. */
        return WISP_CTR_TCP_LISTEN_FULL;
    }
    if (WISP_TCP_SYNCOOKIES && e->lpcb == NULL) {
        WISP_CTR_INC(s, TCP_COOKIE_OK);
    }
    pcb = tcp_passive_pcb(s, l, e, t, ts_off);
    if (pcb == NULL) {
        /* No PCB to hold the connection now (memory pressure). Drop the
         * ACK (counted) and keep the embryo, its SYN-ACK retransmission
         * timer running: the peer's next segment (data, or the ACK
         * answering a retransmitted SYN-ACK) completes the handshake once
         * a PCB is free, and the entry's timeout bounds the wait (a
         * cookie stays valid for its two periods, RFC 4987 §3.6: the ACK
         * carries all the state). A RST would turn a passing shortage
         * into a failed connection (Linux drops too). */
        return WISP_CTR_TCP_DROP_PCBMEM;
    }
    if (!WISP_TCP_SYNCOOKIES || e->lpcb != NULL) {
        tcp_synq_remove(s, e);
        tcp_synq_arm(s);
    }
    tcp_accept_and_process(s, l, pcb, p, in);
    return WISP_CTR_COUNT;
}

bool tcp_synq_input(struct wisp_stack *s, struct wisp_pbuf *p, struct tcp_in *in)
{
    struct wisp_tcp_syn *e = NULL;
    struct wisp_tcp_listen *l;
    struct tcp_tuple t;
    unsigned drop, i;

    for (i = s->tcp.synq_head[tcp_bucket(s, &in->ip->src, in->sport, in->dport, TCP_SYNQ_NB)]; i != TCP_HNONE;
         i = s->tcp.synq_next[i]) {
        struct wisp_tcp_syn *x = &s->tcp.synq[i];
        if (tcp_in_is(in, &x->local_ip, &x->remote_ip, x->local_port, x->remote_port)) {
            e = x;
            break;
        }
    }
    if (e == NULL) {
        return false;
    }
    l = e->lpcb;
    if (in->flags & WISP_TCP_FLAG_RST) {
        WISP_CTR_INC(s, TCP_RST_RX);
        /* RFC 9293 §3.10.7.4 SYN-RECEIVED (passive), second: an exact RST
         * returns to LISTEN (drop the embryo); RFC 5961 §3.2: another RST
         * in the window the SYN-ACK offered draws a challenge ACK
         * (throttled, §7); one outside it is dropped silently (first). */
        if (in->seq == e->irs + 1u) {
            tcp_synq_remove(s, e);
            tcp_synq_arm(s);
            goto out;
        }
        if (tcp_synq_in_window(e, in->seq)) {
            tcp_synq_challenge_ack(s, e);
        }
        drop = WISP_CTR_TCP_DROP_RST;
        goto out_ctr;
    }
    if (in->flags & WISP_TCP_FLAG_SYN) {
        if (in->flags & WISP_TCP_FLAG_ACK) {
            drop = WISP_CTR_TCP_DROP_SYN;
            goto out_ctr;
        }
        if (in->seq != e->irs) {
            tcp_synq_remove(s, e); /* a new ISN: start over from LISTEN */
            return false;
        }
        /* The peer did not get our SYN-ACK. RFC 7323 §4.1 (RTTM): the
         * SYN-ACK that answers this SYN echoes its TSval -- the first
         * SYN's would give the peer an RTT sample spanning its SYN
         * timeout (~1 s, and an RTO inflated for many samples after);
         * never an older one (RFC 7323 §5.3). */
        if ((e->opts & TCP_SYNO_TS) && in->opt.ts && TCP_SEQ_GT(in->opt.tsval, e->ts_recent)) {
            e->ts_recent = in->opt.tsval;
        }
        goto resend;
    }
    if (!(in->flags & WISP_TCP_FLAG_ACK)) {
        drop = WISP_CTR_TCP_DROP_NOACK;
        goto out_ctr;
    }
    /* RFC 9293 §3.10.7.4 SYN-RECEIVED: an unacceptable ACK gets a RST. */
    if (in->ack != e->iss + 1u) {
        tcp_rst_reply(s, in);
        drop = WISP_CTR_TCP_DROP_BADACK;
        goto out_ctr;
    }
    /* first step: the sequence number must be in the window the SYN-ACK
     * offered (a zero window takes just RCV.NXT) */
    if (!tcp_synq_in_window(e, in->seq)) {
        WISP_CTR_INC(s, TCP_DROP_OOW);
        goto resend;
    }
    if ((e->opts & TCP_SYNO_TS) && in->opt.ts && TCP_SEQ_LT(in->opt.tsval, e->ts_recent)) {
        drop = WISP_CTR_TCP_DROP_PAWS; /* RFC 7323 §5.3 */
        goto out_ctr;
    }
    tcp_synq_tuple(e, &t);
    drop = tcp_embryo_open(s, l, e, &t, TCP_SYN_TS_OFF(s, &t), p, in);
    if (drop == WISP_CTR_COUNT) {
        return true;
    }
    goto out_ctr;
resend:
    tcp_synq_send(s, e);
    tcp_synq_arm(s);
    goto out;
out_ctr:
    WISP_CTR_INC_ID(s, drop);
out:
    wisp_pbuf_free(p);
    return true;
}

#if WISP_TCP_SYNCOOKIES
/* An ACK for a listener that returns a valid SYN cookie (RFC 4987 §3.6)
 * makes the connection. True when it did (p consumed). */
static bool tcp_cookie_accept(struct wisp_stack *s, struct wisp_tcp_listen *l, struct wisp_pbuf *p, struct tcp_in *in,
                              const struct tcp_tuple *t)
{
    struct wisp_tcp_syn x;
    uint16_t mss;
    uint32_t ts_off;
    uint8_t ws = 0xffu;
    unsigned drop;
    bool sack = false, ts = false;

    if ((in->flags & WISP_TCP_FLAG_SYN) || !tcp_cookie_check(s, t, in->ack - 1u, in->seq - 1u, &mss, &ts_off)) {
        if (s->tcp.cookie_used && !wisp_time_before(s->tcp.cookie_last + 2u * TCP_COOKIE_PERIOD_MS, wisp_now(s))) {
            WISP_CTR_INC(s, TCP_COOKIE_BAD);
        }
        return false;
    }
    if (in->opt.ts && WISP_TCP_TIMESTAMPS) {
        /* our cookie TSval comes back in TSecr: 4 bits window
         * scale (15 = none), 1 bit SACK-permitted */
        ts = true;
        ws = (uint8_t)(in->opt.tsecr & 0x0fu);
        if (ws == 0x0fu) {
            ws = 0xffu;
        }
        sack = (in->opt.tsecr & 0x10u) != 0;
    }
    /* The cookie's SYN-ACK window was not kept (no state): what
     * the budget allows now is promised; data beyond it (when it
     * offered more) is dropped and resent. */
    tcp_syn_fill(&x, t, in->ack - 1u, in->seq - 1u, ws, sack, ts, in->opt.tsval);
    x.peer_mss = mss;
    x.wnd = tcp_synack_wnd(s, tcp_mss_for(s, &t->rip));
    drop = tcp_embryo_open(s, l, &x, t, ts_off, p, in);
    if (drop != WISP_CTR_COUNT) {
        WISP_CTR_INC_ID(s, drop);
        wisp_pbuf_free(p);
    }
    return true;
}
#endif /* WISP_TCP_SYNCOOKIES */

#if WISP_TCP_SYNCOOKIES
/* RFC 4987 §3.6: no room -- answer the SYN statelessly with a cookie
 * (embryo x, our MSS ours). Without timestamps the cookie cannot carry
 * window scaling or SACK, so the SYN-ACK offers neither. */
static void tcp_synq_cookie(struct wisp_stack *s, const struct wisp_tcp_listen *l, struct wisp_tcp_syn *x,
                            const struct tcp_tuple *t, uint16_t ours)
{
    uint16_t mss = x->peer_mss != 0 ? x->peer_mss : (uint16_t)TCP_DEFAULT_MSS;
    uint32_t ts_off;
    int bits = -1;
    if (x->opts & TCP_SYNO_TS) {
        bits = (int)((x->peer_wscale == 0xffu ? 0x0fu : (x->peer_wscale & 0x0fu)) |
                     ((x->opts & TCP_SYNO_SACK) ? 0x10u : 0u));
    } else {
        x->peer_wscale = 0xffu;
        x->opts = 0;
    }
    WISP_CTR_INC(s, TCP_COOKIE_SENT);
    s->tcp.cookie_used = 1;
    s->tcp.cookie_last = wisp_now(s);
    x->iss = tcp_cookie_make(s, t, x->irs, (uint16_t)WISP_MIN(mss, ours), &ts_off);
    (void)tcp_send_synack(s, l, x, t, bits, ours, ts_off);
}
#endif /* WISP_TCP_SYNCOOKIES */

bool tcp_listen_input(struct wisp_stack *s, struct wisp_pbuf *p, struct tcp_in *in)
{
    struct wisp_tcp_listen *l = tcp_find_listener(s, in);
    struct tcp_tuple t;
    struct wisp_tcp_syn *e = NULL, *y, x;
    uint16_t ours;
    unsigned i, drop;

    if (l == NULL) {
        return false;
    }
    tcp_in_tuple(in, &t);
    /* RFC 9293 §3.10.7.2 LISTEN, first: an incoming RST is ignored. */
    if (in->flags & WISP_TCP_FLAG_RST) {
        drop = WISP_CTR_TCP_RST_RX;
        goto out_ctr;
    }
    /* second: an ACK -- a SYN cookie (RFC 4987 §3.6) makes the
     * connection, else a RST <SEQ=SEG.ACK> */
    if (in->flags & WISP_TCP_FLAG_ACK) {
#if WISP_TCP_SYNCOOKIES
        if (tcp_cookie_accept(s, l, p, in, &t)) {
            return true;
        }
#endif
        tcp_rst_reply(s, in);
        drop = WISP_CTR_TCP_DROP_BADACK;
        goto out_ctr;
    }
    if (!(in->flags & WISP_TCP_FLAG_SYN)) {
        drop = WISP_CTR_TCP_DROP_STATE; /* RFC 9293 §3.10.7.2 fourth: drop */
        goto out_ctr;
    }
    /* third: a SYN -- dropped (counted) while the application's accept
     * queue is full (as Linux does: the peer retransmits it; a connection
     * made now could not be accepted, and a cookie's would be lost with
     * its ACK when the peer has nothing to send), else an entry in the
     * SYN queue within the backlog, else a cookie (without cookies:
     * dropped, the peer retransmits it). */
    if (!tcp_listen_room(l)) {
        drop = WISP_CTR_TCP_LISTEN_FULL;
        goto out_ctr;
    }
    if (l->synq_n < l->backlog) {
        for (i = 0; i < WISP_TCP_SYNQ_COUNT; i++) {
            if (s->tcp.synq[i].lpcb == NULL) {
                e = &s->tcp.synq[i];
                break;
            }
        }
    }
    /* the embryo: in a free SYN-queue entry within l's backlog, else on
     * the stack for a cookie (the SYN-ACK's window is kept for its
     * retransmissions) */
    y = e != NULL ? e : &x;
    ours = tcp_mss_for(s, &t.rip); /* one route lookup */
    tcp_syn_fill(y, &t, 0, in->seq, WISP_TCP_WND_SCALE ? in->opt.ws : 0xffu, in->opt.sack_ok && WISP_TCP_SACK,
                 in->opt.ts && WISP_TCP_TIMESTAMPS, in->opt.tsval);
    y->peer_mss = in->opt.mss;
    y->wnd = tcp_synack_wnd(s, ours);
    if (e != NULL) {
        /* the entry remembers the embryo, its SYN-ACK goes out */
        e->iss = tcp_isn(s, &t);
        e->lpcb = l;
        l->synq_n++;
        tcp_hlink(s->tcp.synq_head, s->tcp.synq_next, tcp_synq_bucket(s, e), (unsigned)(e - s->tcp.synq));
        tcp_synq_send(s, e);
        tcp_synq_arm(s);
    } else {
        WISP_CTR_INC(s, TCP_SYNQ_FULL);
#if WISP_TCP_SYNCOOKIES
        tcp_synq_cookie(s, l, &x, &t, ours);
#endif
    }
    goto out; /* data on a SYN is not kept (the peer resends it) */
out_ctr:
    WISP_CTR_INC_ID(s, drop);
out:
    wisp_pbuf_free(p);
    return true;
}

#else
typedef int wisp_tcp_synq_disabled_t; /* ISO C forbids an empty translation unit */
#endif /* WISP_TCP */
