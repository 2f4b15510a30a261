/**
 * @file tcp.c
 * TCP (RFC 9293): PCB lifecycle and the raw callback API, the per-PCB
 * event timer, compact TIME-WAIT records, the SYN queue with SYN cookies
 * (RFC 4987), initial sequence numbers (RFC 6528), ephemeral ports
 * (RFC 6056) and the challenge-ACK rate limit (RFC 5961 §7).
 *
 * Input processing is in tcp_in.c, output, retransmission and congestion
 * control in tcp_out.c; tcp_priv.h holds what the three share.
 *
 * Choices where the RFCs leave room (see also tcp_in.c / tcp_out.c):
 *  - A connection PCB has one wisp_timer armed for the earliest of its
 *    deadlines (RTO, persist, delayed ACK, keepalive, FIN-WAIT-2, poll,
 *    deferred output, refused-data retry); the SYN queue and the TIME-WAIT
 *    records have one stack-wide timer each, armed for their earliest entry.
 *  - Freeing a PCB while one of its own callbacks runs is deferred (TF_DEAD)
 *    until the stack leaves that PCB, so an application may abort or close
 *    from any callback.
 *  - Ports: bind conflicts with listeners, bound-but-unconnected PCBs and
 *    connections the application still holds; orphaned connections (closed
 *    by the application) and TIME-WAIT do not block a bind (like
 *    SO_REUSEADDR on Linux). connect refuses a 4-tuple in use by a
 *    connection or a TIME-WAIT record (WISP_ERR_USE).
 *  - The backlog of a listener bounds its entries in the SYN queue; SYNs
 *    beyond it (or beyond the shared queue) are answered with SYN cookies.
 *    Accept is a callback, so no accepted-but-unclaimed queue exists.
 *  - TIME-WAIT ignores RST (RFC 1337 §3, TIME-WAIT assassination).
 *  - When the application still holds a PCB that reaches CLOSED or
 *    TIME-WAIT (it used shutdown() instead of close()), the PCB is freed and
 *    the error callback reports WISP_ERR_CLSD.
 *  - Exhausted retransmissions (SYN, data, unanswered zero-window probes)
 *    report WISP_ERR_TIMEOUT (data: after a RST); unanswered keepalives
 *    WISP_ERR_ABRT. A closed connection stuck in FIN-WAIT-2 is dropped
 *    after 2 MSL.
 *  - The timestamp clock of a connection is the ms clock plus a keyed hash
 *    of its 4-tuple (RFC 7323 §5.4); for a connection made from a SYN
 *    cookie, of its 4-tuple, cookie counter and peer ISN (the same hash as
 *    the cookie's, so the ACK recomputes it).
 *  - SYN cookies: 5 bits of a 64 s counter, 3 bits MSS index (8 values),
 *    24 bits SipHash of the 4-tuple, counter and peer ISN; valid for the
 *    current and the previous period. With timestamps, window scale and
 *    SACK-permitted travel in the low 6 bits of our TSval (as on Linux);
 *    without, the cookie's SYN-ACK offers neither. A flood SYN costs one
 *    SipHash, one route lookup and one transmission; it allocates nothing
 *    that outlives it and wakes no application.
 *  - The SYN queue and the TIME-WAIT records are found through a hash
 *    index (remote address and ports, keyed), so a segment for no
 *    connection does not walk every entry.
 */
#include "tcp_priv.h"

#if WISP_TCP

/* ------------------------------------------------------------ names */

const char *wisp_tcp_state_str(unsigned state)
{
    static const char *const names[] = { "CLOSED",     "LISTEN",     "SYN-SENT",   "SYN-RECEIVED",
                                         "ESTABLISHED", "FIN-WAIT-1", "FIN-WAIT-2", "CLOSE-WAIT",
                                         "CLOSING",    "LAST-ACK",   "TIME-WAIT" };
    return state < WISP_ARRAY_SIZE(names) ? names[state] : "?";
}

struct wisp_tcp_common *tcp_common(struct wisp_tcp_pcb *pcb)
{
    return (struct wisp_tcp_common *)(void *)pcb;
}

static struct wisp_tcp_listen *tcp_as_listen(struct wisp_tcp_pcb *pcb)
{
    return (struct wisp_tcp_listen *)(void *)pcb;
}

static bool tcp_is_listen(struct wisp_tcp_pcb *pcb)
{
    return tcp_common(pcb)->state == WISP_TCP_LISTEN;
}

/* ------------------------------------------------------- SipHash-2-4 */

/* SipHash-2-4 is wisp_siphash24 (stack.c); this name stays for tcp_hash
 * and the tests. */
uint64_t tcp_siphash24(const uint32_t key[4], const uint8_t *m, size_t len)
{
    return wisp_siphash24(key, m, len);
}

/* Hash of a 4-tuple in a domain (0 ISN, 1 timestamp offset, 2 cookie)
 * with up to two extra words. */
static uint32_t tcp_hash(struct wisp_stack *s, const struct tcp_tuple *t, uint8_t domain, uint32_t x, uint32_t y)
{
    uint8_t m[21];
    wisp_ip4_wr(m, t->lip);
    wisp_ip4_wr(m + 4, t->rip);
    wisp_wr16(m + 8, t->lport);
    wisp_wr16(m + 10, t->rport);
    m[12] = domain;
    wisp_wr32(m + 13, x);
    wisp_wr32(m + 17, y);
    return (uint32_t)tcp_siphash24(s->tcp.key, m, sizeof(m));
}

/* RFC 6528 §3: ISN = M + F(localip, localport, remoteip, remoteport,
 * secretkey), M a timer ticking every 4 microseconds (ms * 250). */
uint32_t tcp_isn(struct wisp_stack *s, const struct tcp_tuple *t)
{
    return wisp_now(s) * 250u + tcp_hash(s, t, 0, 0, 0);
}

/* RFC 7323 §5.4 / §7.1: a per-connection offset of the timestamp clock
 * (a keyed hash of the 4-tuple, so SYN cookies can recompute it). */
uint32_t tcp_ts_offset(struct wisp_stack *s, const struct tcp_tuple *t)
{
    return tcp_hash(s, t, 1, 0, 0);
}

/* ------------------------------------------------- challenge ACKs */

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

/* ------------------------------------------------------------ timers */

static void tcp_pcb_timer_fn(struct wisp_stack *s, struct wisp_timer *t);

void tcp_timer_set(struct wisp_tcp_pcb *pcb, unsigned which, uint32_t delay_ms)
{
    pcb->due[which] = wisp_now(pcb->c.stack) + delay_ms;
    pcb->tmr_on = (uint8_t)(pcb->tmr_on | (1u << which));
    tcp_timer_update(pcb);
}

void tcp_timer_clear(struct wisp_tcp_pcb *pcb, unsigned which)
{
    bool was_on = (pcb->tmr_on & (1u << which)) != 0;

    pcb->tmr_on = (uint8_t)(pcb->tmr_on & ~(1u << which));
    /* An event timer armed for exactly this deadline would fire for
     * nothing -- and wake a stack thread that sleeps until the next
     * deadline (tcpip.c): every write arms the output timer "now" and the
     * writer's own output run clears it. Re-arm for the next deadline.
     * Otherwise the event timer may stay armed early: it re-arms itself
     * when it fires. */
    if (was_on && wisp_timer_armed(&pcb->tmr) && pcb->tmr.due == pcb->due[which] && !(pcb->flags & TF_DEAD)) {
        wisp_timer_cancel(pcb->c.stack, &pcb->tmr);
        tcp_timer_update(pcb);
    }
}

bool tcp_timer_on(const struct wisp_tcp_pcb *pcb, unsigned which)
{
    return (pcb->tmr_on & (1u << which)) != 0;
}

/* Arm the PCB's event timer for the earliest active deadline. Lazy: an
 * armed timer that is due no later stays (it recomputes when it fires). */
void tcp_timer_update(struct wisp_tcp_pcb *pcb)
{
    struct wisp_stack *s = pcb->c.stack;
    uint32_t earliest = 0, now;
    bool any = false;
    unsigned i;

    if (pcb->flags & TF_DEAD) {
        return;
    }
    for (i = 0; i < WISP_TCP_NTMR; i++) {
        if ((pcb->tmr_on & (1u << i)) && (!any || wisp_time_before(pcb->due[i], earliest))) {
            earliest = pcb->due[i];
            any = true;
        }
    }
    if (!any) {
        wisp_timer_cancel(s, &pcb->tmr);
        return;
    }
    if (wisp_timer_armed(&pcb->tmr) && !wisp_time_before(earliest, pcb->tmr.due)) {
        return;
    }
    now = wisp_now(s);
    wisp_timer_arm(s, &pcb->tmr, wisp_time_before(now, earliest) ? earliest - now : 0u, tcp_pcb_timer_fn);
}

struct wisp_tcp_pcb *tcp_enter(struct wisp_stack *s, struct wisp_tcp_pcb *pcb)
{
    struct wisp_tcp_pcb *prev = s->tcp.in_pcb;
    s->tcp.in_pcb = pcb;
    return prev;
}

bool tcp_leave(struct wisp_stack *s, struct wisp_tcp_pcb *pcb, struct wisp_tcp_pcb *prev)
{
    s->tcp.in_pcb = prev;
    if (pcb->flags & TF_DEAD) {
        wisp_pool_free(&s->pool[WISP_POOL_TCP_PCB], pcb);
        return false;
    }
    return true;
}

bool tcp_dead(const struct wisp_tcp_pcb *pcb)
{
    return (pcb->flags & TF_DEAD) != 0;
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
    if (pcb->keep_probes >= pcb->keep_cnt) {
        WISP_CTR_INC(s, TCP_ABORT_KEEPALIVE);
        tcp_send_rst(pcb);
        tcp_pcb_kill(pcb, WISP_ERR_ABRT);
        return;
    }
    (void)tcp_send_keepalive(pcb);
    pcb->keep_probes++;
    WISP_CTR_INC(s, TCP_KEEPALIVE);
    tcp_timer_set(pcb, TCP_TMR_KEEP, pcb->keep_intvl);
}

static void tcp_timer_handle(struct wisp_tcp_pcb *pcb, unsigned which)
{
    switch (which) {
    case TCP_TMR_RTO:
        tcp_rto_expired(pcb);
        break;
    case TCP_TMR_PERSIST:
        tcp_persist_expired(pcb);
        break;
    case TCP_TMR_DELACK:
        if (pcb->flags & TF_ACK_DELAY) {
            pcb->flags |= TF_ACK_NOW;
            tcp_output_run(pcb);
        }
        break;
    case TCP_TMR_KEEP:
        tcp_keep_fire(pcb);
        break;
    case TCP_TMR_FW2:
        if (pcb->c.state == WISP_TCP_FIN_WAIT_2 && (pcb->flags & TF_CLOSED)) {
            tcp_pcb_release(pcb);
        }
        break;
    case TCP_TMR_POLL:
        if (pcb->poll != NULL && pcb->poll_interval > 0 && !(pcb->flags & TF_CLOSED)) {
            tcp_timer_set(pcb, TCP_TMR_POLL, (uint32_t)pcb->poll_interval * WISP_TCP_POLL_UNIT_MS);
            if (pcb->poll(pcb->c.arg, pcb) == WISP_ERR_ABRT || tcp_dead(pcb)) {
                return;
            }
            tcp_output_run(pcb);
        }
        break;
    case TCP_TMR_OUTPUT:
        tcp_output_run(pcb);
        break;
    case TCP_TMR_REFUSED:
        tcp_deliver_refused(pcb);
        if (!tcp_dead(pcb)) {
            tcp_output_run(pcb);
        }
        break;
    default:
        break;
    }
}

static void tcp_pcb_timer_fn(struct wisp_stack *s, struct wisp_timer *t)
{
    struct wisp_tcp_pcb *pcb = (struct wisp_tcp_pcb *)(void *)((uint8_t *)t - offsetof(struct wisp_tcp_pcb, tmr));
    struct wisp_tcp_pcb *prev = tcp_enter(s, pcb);
    uint32_t now = wisp_now(s);
    unsigned i;

    for (i = 0; i < WISP_TCP_NTMR && !tcp_dead(pcb); i++) {
        if ((pcb->tmr_on & (1u << i)) && !wisp_time_before(now, pcb->due[i])) {
            pcb->tmr_on = (uint8_t)(pcb->tmr_on & ~(1u << i));
            tcp_timer_handle(pcb, i);
        }
    }
    if (!tcp_dead(pcb) && (pcb->flags & TF_OUTPUT_PENDING)) {
        tcp_output_run(pcb); /* asked for by a callback meanwhile */
    }
    if (tcp_leave(s, pcb, prev)) {
        tcp_timer_update(pcb);
    }
}

/* ------------------------------------------------------------- PCBs */

uint8_t tcp_rcv_wscale_ours(void)
{
    /* RFC 7323 §2.2: the smallest shift that lets WISP_TCP_WND fit. */
    uint8_t sh = 0;
#if WISP_TCP_WND_SCALE
    while (sh < TCP_MAX_WSCALE && ((uint32_t)WISP_TCP_WND >> sh) > 65535u) {
        sh++;
    }
#endif
    return sh;
}

/* The interface that carries traffic to dst (ours when dst is local). */
static struct wisp_netif *tcp_route(struct wisp_stack *s, wisp_ip4_t dst)
{
    struct wisp_netif *nif;
    for (nif = s->netifs; nif != NULL; nif = nif->next) {
        if (nif->ip4 != WISP_IP4_ANY && nif->ip4 == dst) {
            return nif;
        }
    }
    return wisp_ip4_route(s, dst);
}

/* RFC 9293 §3.7.1 / RFC 6691: the MSS we announce = MTU - 40, at most
 * WISP_TCP_MSS. */
uint16_t tcp_mss_for(struct wisp_stack *s, wisp_ip4_t dst)
{
    struct wisp_netif *nif = tcp_route(s, dst);
    uint32_t m = WISP_TCP_MSS;
    if (nif != NULL && nif->mtu > 40u && (uint32_t)nif->mtu - 40u < m) {
        m = (uint32_t)nif->mtu - 40u;
    }
    return (uint16_t)m;
}

void tcp_new_defaults(struct wisp_stack *s, struct wisp_tcp_pcb *pcb)
{
    memset(pcb, 0, sizeof(*pcb));
    pcb->c.stack = s;
    pcb->c.state = WISP_TCP_CLOSED;
    pcb->mss = TCP_DEFAULT_MSS;
    pcb->rto = WISP_TCP_RTO_INIT_MS;
    pcb->rcv_wnd = WISP_TCP_WND;
    pcb->rcv_buf = WISP_TCP_WND;
    pcb->snd_buf = WISP_TCP_SND_BUF;
    pcb->ssthresh = 0xFFFFFFFFu;
    pcb->keep_idle = WISP_TCP_KEEPIDLE_MS;
    pcb->keep_intvl = WISP_TCP_KEEPINTVL_MS;
    pcb->keep_cnt = (uint8_t)WISP_TCP_KEEPCNT;
    pcb->rcv_wscale = 0;
    pcb->rcv_blk = tcp_rx_blk((uint16_t)WISP_TCP_MSS);
    pcb->last_rx_ms = wisp_now(s);
}

static void tcp_link(struct wisp_stack *s, struct wisp_tcp_pcb *pcb)
{
    pcb->next = s->tcp.pcbs;
    s->tcp.pcbs = pcb;
    s->tcp.npcbs++;
}

struct wisp_tcp_pcb *wisp_tcp_new(struct wisp_stack *s)
{
    struct wisp_tcp_pcb *pcb;
    WISP_CORE_ASSERT_OWNER(s);
    pcb = (struct wisp_tcp_pcb *)wisp_pool_alloc(&s->pool[WISP_POOL_TCP_PCB]);
    if (pcb == NULL) {
        return NULL;
    }
    tcp_new_defaults(s, pcb);
    tcp_link(s, pcb);
    return pcb;
}

static void tcp_free_ooseq(struct wisp_tcp_pcb *pcb)
{
    unsigned i;
    for (i = 0; i < pcb->ooseq_n; i++) {
        wisp_pbuf_free(pcb->ooseq[i].p);
        pcb->ooseq[i].p = NULL;
    }
    pcb->ooseq_n = 0;
    pcb->ooseq_bufs = 0;
}

void tcp_pcb_release(struct wisp_tcp_pcb *pcb)
{
    struct wisp_stack *s = pcb->c.stack;
    struct wisp_tcp_pcb **pp;

    if (pcb->flags & TF_DEAD) {
        return;
    }
    for (pp = &s->tcp.pcbs; *pp != NULL; pp = &(*pp)->next) {
        if (*pp == pcb) {
            *pp = pcb->next;
            s->tcp.npcbs--;
            break;
        }
    }
    wisp_timer_cancel(s, &pcb->tmr);
    pcb->tmr_on = 0;
    if (pcb->flags & TF_WRITE_MEM) {
        pcb->flags &= ~TF_WRITE_MEM;
        s->tcp.mem_waiters--;
    }
    if (pcb->sndq != NULL) {
        tcp_free_sndq(pcb);
        tcp_mem_freed(s);
    }
    tcp_free_ooseq(pcb);
    (void)tcp_refused_free(pcb);
    pcb->c.state = WISP_TCP_CLOSED;
    pcb->starve = 0;
    if (s->tcp.in_pcb == pcb) {
        pcb->flags |= TF_DEAD; /* the processor returns the memory */
    } else {
        wisp_pool_free(&s->pool[WISP_POOL_TCP_PCB], pcb);
    }
}

void tcp_pcb_kill(struct wisp_tcp_pcb *pcb, wisp_err_t err)
{
    wisp_tcp_err_fn fn = (pcb->flags & TF_CLOSED) ? NULL : pcb->errf;
    void *arg = pcb->c.arg;
    tcp_pcb_release(pcb);
    if (fn != NULL) {
        fn(arg, err);
    }
}

/* ------------------------------------------------------------ ports */

static bool tcp_port_taken(const struct wisp_stack *s, const struct wisp_tcp_pcb *self, wisp_ip4_t ip,
                           uint16_t port)
{
    const struct wisp_tcp_pcb *q;
    const struct wisp_tcp_listen *l;
    for (l = s->tcp.listens; l != NULL; l = l->next) {
        if (l->c.local_port == port && (l->c.local_ip == WISP_IP4_ANY || ip == WISP_IP4_ANY || l->c.local_ip == ip)) {
            return true;
        }
    }
    for (q = s->tcp.pcbs; q != NULL; q = q->next) {
        if (q == self || q->c.local_port != port || (q->flags & TF_CLOSED)) {
            continue;
        }
        if (q->c.local_ip == WISP_IP4_ANY || ip == WISP_IP4_ANY || q->c.local_ip == ip) {
            return true;
        }
    }
    return false;
}

/* True when any PCB, listener or TIME-WAIT record uses port locally. */
static bool tcp_port_used_any(const struct wisp_stack *s, uint16_t port)
{
    const struct wisp_tcp_pcb *q;
    const struct wisp_tcp_listen *l;
    unsigned i;
    for (l = s->tcp.listens; l != NULL; l = l->next) {
        if (l->c.local_port == port) {
            return true;
        }
    }
    for (q = s->tcp.pcbs; q != NULL; q = q->next) {
        if (q->c.local_port == port) {
            return true;
        }
    }
    for (i = 0; i < WISP_TCP_TW_COUNT; i++) {
        if (s->tcp.tw[i].local_port == port) {
            return true;
        }
    }
    return false;
}

static bool tcp_port_free(struct wisp_stack *s, uint16_t port, const void *ctx)
{
    (void)ctx;
    return !tcp_port_used_any(s, port);
}

/* RFC 6056 (wisp_port_select, stack.c): Algorithm 4 (double-hash) when the
 * destination is known (connect), Algorithm 1 (keyed random start) when
 * not (bind); at most one pass. 0 when every port is in use. */
static uint16_t tcp_ephemeral_port(struct wisp_stack *s, const struct tcp_tuple *t)
{
    return wisp_port_select(s, WISP_IP4_PROTO_TCP, t != NULL ? t->lip : WISP_IP4_ANY,
                            t != NULL ? t->rip : WISP_IP4_ANY, t != NULL ? t->rport : 0u, tcp_port_free, NULL);
}

/* A connection or TIME-WAIT record with exactly this 4-tuple exists. */
static bool tcp_tuple_used(const struct wisp_stack *s, const struct wisp_tcp_pcb *self, const struct tcp_tuple *t)
{
    const struct wisp_tcp_pcb *q;
    unsigned i;
    for (q = s->tcp.pcbs; q != NULL; q = q->next) {
        if (q != self && q->c.state != WISP_TCP_CLOSED && q->c.local_port == t->lport && q->remote_port == t->rport &&
            q->c.local_ip == t->lip && q->remote_ip == t->rip) {
            return true;
        }
    }
    for (i = 0; i < WISP_TCP_TW_COUNT; i++) {
        const struct wisp_tcp_tw *w = &s->tcp.tw[i];
        if (w->local_port == t->lport && w->remote_port == t->rport && w->local_ip == t->lip && w->remote_ip == t->rip) {
            return true;
        }
    }
    return false;
}

/* -------------------------------------------------------- raw API */

void wisp_tcp_arg(struct wisp_tcp_pcb *pcb, void *arg)
{
    WISP_CORE_ASSERT_OWNER(tcp_stack_of(pcb));
    tcp_common(pcb)->arg = arg;
}

wisp_err_t wisp_tcp_bind(struct wisp_tcp_pcb *pcb, const wisp_ipaddr_t *ip, uint16_t port)
{
    struct wisp_stack *s;
    wisp_ip4_t a = WISP_IP4_ANY;

    WISP_CORE_ASSERT_OWNER(tcp_stack_of(pcb));
    if (pcb == NULL || tcp_is_listen(pcb)) {
        return WISP_ERR_VAL;
    }
    s = pcb->c.stack;
    if (pcb->c.state != WISP_TCP_CLOSED || pcb->c.local_port != 0) {
        return WISP_ERR_VAL;
    }
    if (ip != NULL && ip->family != WISP_AF_NONE) {
        if (ip->family != WISP_AF_INET4) {
            return WISP_ERR_VAL;
        }
        a = ip->u.ip4;
        if (a != WISP_IP4_ANY && !wisp_ip4_is_local(s, a) && !wisp_ip4_is_loopback(a)) {
            return WISP_ERR_VAL; /* not one of our addresses */
        }
    }
    if (port == 0) {
        port = tcp_ephemeral_port(s, NULL);
        if (port == 0) {
            return WISP_ERR_USE;
        }
    } else if (tcp_port_taken(s, pcb, a, port)) {
        return WISP_ERR_USE;
    }
    pcb->c.local_ip = a;
    pcb->c.local_port = port;
    return WISP_OK;
}

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
    l->c = pcb->c;
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

static void tcp_synq_remove(struct wisp_stack *s, struct wisp_tcp_syn *e);

static void tcp_listen_free(struct wisp_tcp_listen *l)
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

wisp_err_t wisp_tcp_connect(struct wisp_tcp_pcb *pcb, const wisp_ipaddr_t *ip, uint16_t port,
                            wisp_tcp_connected_fn fn)
{
    struct wisp_stack *s;
    struct wisp_netif *nif;
    struct tcp_tuple t;
    wisp_ip4_t dst;

    WISP_CORE_ASSERT_OWNER(tcp_stack_of(pcb));
    if (pcb == NULL || tcp_is_listen(pcb)) {
        return WISP_ERR_VAL;
    }
    s = pcb->c.stack;
    if (pcb->c.state == WISP_TCP_SYN_SENT) {
        return WISP_ERR_ALREADY;
    }
    if (pcb->c.state != WISP_TCP_CLOSED) {
        return WISP_ERR_ISCONN;
    }
    if (ip == NULL || ip->family != WISP_AF_INET4 || ip->u.ip4 == WISP_IP4_ANY || port == 0) {
        return WISP_ERR_VAL;
    }
    dst = ip->u.ip4;
    /* RFC 1122 §4.2.3.10: no connections to broadcast or multicast. */
    if (dst == WISP_IP4_BCAST || wisp_ip4_is_multicast(dst)) {
        return WISP_ERR_VAL;
    }
    nif = tcp_route(s, dst);
    if (nif == NULL) {
        return WISP_ERR_RTE;
    }
    if (wisp_ip4_is_bcast(nif, dst)) {
        return WISP_ERR_VAL;
    }
    t.lip = pcb->c.local_ip;
    if (t.lip == WISP_IP4_ANY) {
        /* RFC 1122 §4.2.3.7 / §3.3.4.3: the address of the interface the
         * route leaves by, fixed for the life of the connection. */
        t.lip = wisp_ip4_is_loopback(dst) ? dst : nif->ip4;
        if (t.lip == WISP_IP4_ANY) {
            return WISP_ERR_RTE;
        }
    }
    t.rip = dst;
    t.rport = port;
    if (pcb->c.local_port == 0) {
        unsigned tries;
        t.lport = 0;
        for (tries = 0; tries < 16u; tries++) {
            uint16_t lp = tcp_ephemeral_port(s, &t);
            if (lp == 0) {
                return WISP_ERR_USE;
            }
            t.lport = lp;
            if (!tcp_tuple_used(s, pcb, &t)) {
                break;
            }
            t.lport = 0;
        }
        if (t.lport == 0) {
            return WISP_ERR_USE;
        }
    } else {
        t.lport = pcb->c.local_port;
        if (tcp_tuple_used(s, pcb, &t)) {
            return WISP_ERR_USE;
        }
    }

    pcb->c.local_ip = t.lip;
    pcb->c.local_port = t.lport;
    pcb->remote_ip = t.rip;
    pcb->remote_port = t.rport;
    pcb->connected = fn;
    pcb->iss = tcp_isn(s, &t);
    pcb->ts_off = tcp_ts_offset(s, &t);
    pcb->snd_una = pcb->iss;
    pcb->snd_nxt = pcb->iss;
    pcb->snd_lbb = pcb->iss + 1u;
    pcb->snd_sml = pcb->iss;
    pcb->recover = pcb->iss;
    pcb->rcv_wscale = tcp_rcv_wscale_ours();
    pcb->rcv_wnd = pcb->rcv_buf; /* SO_RCVBUF bounds the SYN's window too */
    pcb->rcv_blk = tcp_rx_blk(tcp_mss_for(s, dst));
    /* The window our SYN offers (RFC 7323 §2.2: unscaled), within the
     * receive budget; it is promised until the connection is synchronized
     * and never taken back. */
    {
        uint32_t share, fresh = tcp_rx_blocks_avail(s, 0, s->tcp.npcbs, &share);
        pcb->syn_wnd = (uint16_t)WISP_MIN(WISP_MIN(pcb->rcv_wnd, 65535u),
                                          WISP_MIN(fresh, share) * (uint32_t)pcb->rcv_blk);
    }
    pcb->c.state = WISP_TCP_SYN_SENT;
    pcb->syn_rtx = 0;
    WISP_CTR_INC(s, TCP_CONNECT);
    /* A SYN the stack could not send (tcp_send_syn retries it soon) or one
     * lost on the way (the RTO resends it). */
    (void)tcp_send_syn(pcb);
    pcb->snd_nxt = pcb->iss + 1u;
    pcb->flags |= TF_RTT;
    pcb->rtt_seq = pcb->iss;
    pcb->rtt_start = wisp_now(s);
    tcp_timer_set(pcb, TCP_TMR_RTO, pcb->rto);
    return WISP_OK;
}

void wisp_tcp_recv(struct wisp_tcp_pcb *pcb, wisp_tcp_recv_fn fn)
{
    WISP_CORE_ASSERT_OWNER(tcp_stack_of(pcb));
    if (pcb != NULL && !tcp_is_listen(pcb)) {
        pcb->recv = fn;
    }
}

void wisp_tcp_sent(struct wisp_tcp_pcb *pcb, wisp_tcp_sent_fn fn)
{
    WISP_CORE_ASSERT_OWNER(tcp_stack_of(pcb));
    if (pcb != NULL && !tcp_is_listen(pcb)) {
        pcb->sent = fn;
    }
}

void wisp_tcp_err(struct wisp_tcp_pcb *pcb, wisp_tcp_err_fn fn)
{
    WISP_CORE_ASSERT_OWNER(tcp_stack_of(pcb));
    if (pcb != NULL && !tcp_is_listen(pcb)) {
        pcb->errf = fn;
    }
}

void wisp_tcp_poll(struct wisp_tcp_pcb *pcb, wisp_tcp_poll_fn fn, uint8_t interval)
{
    WISP_CORE_ASSERT_OWNER(tcp_stack_of(pcb));
    if (pcb == NULL || tcp_is_listen(pcb)) {
        return;
    }
    pcb->poll = fn;
    pcb->poll_interval = interval;
    if (fn != NULL && interval > 0) {
        tcp_timer_set(pcb, TCP_TMR_POLL, (uint32_t)interval * WISP_TCP_POLL_UNIT_MS);
    } else {
        tcp_timer_clear(pcb, TCP_TMR_POLL);
    }
}

void wisp_tcp_recved(struct wisp_tcp_pcb *pcb, uint32_t len)
{
    uint32_t right, adv_room, thresh;
    bool limited;
    WISP_CORE_ASSERT_OWNER(tcp_stack_of(pcb));
    if (pcb == NULL || tcp_is_listen(pcb) || pcb->c.state == WISP_TCP_CLOSED) {
        return;
    }
    pcb->rcv_wnd = (pcb->rcv_wnd >= pcb->rcv_buf || len > pcb->rcv_buf - pcb->rcv_wnd) ? pcb->rcv_buf
                                                                                       : pcb->rcv_wnd + len;
    if (pcb->c.state != WISP_TCP_ESTABLISHED && pcb->c.state != WISP_TCP_FIN_WAIT_1 &&
        pcb->c.state != WISP_TCP_FIN_WAIT_2) {
        return; /* the peer sends no more data: no window update needed */
    }
    /* RFC 9293 §3.8.6.2.2 (receiver SWS avoidance): announce a larger
     * window only when the right edge moves by min(RCV.BUFF/2, MSS);
     * send the update at once only when the window we announced has
     * fallen to half the buffer or less (else the next ACK carries it). */
    right = tcp_rcv_right(pcb, &limited); /* what the buffer and the receive budget allow */
    adv_room = pcb->rcv_adv - pcb->rcv_nxt;
    thresh = WISP_MIN(tcp_wnd_max(pcb) / 2u, (uint32_t)pcb->mss);
    if (TCP_SEQ_GT(right, pcb->rcv_adv) && right - pcb->rcv_adv >= thresh && adv_room <= tcp_wnd_max(pcb) / 2u) {
        pcb->flags |= TF_ACK_NOW;
        tcp_output_soon(pcb);
    }
}

void wisp_tcp_recv_retry(struct wisp_tcp_pcb *pcb)
{
    struct wisp_stack *s;
    struct wisp_tcp_pcb *prev;
    WISP_CORE_ASSERT_OWNER(tcp_stack_of(pcb));
    if (pcb == NULL || tcp_is_listen(pcb) || (pcb->refused_n == 0u && !(pcb->flags & TF_EOF_PENDING))) {
        return;
    }
    if (tcp_in_proc(pcb)) {
        tcp_timer_set(pcb, TCP_TMR_REFUSED, 0); /* from its own callback: right after the processing */
        return;
    }
    s = pcb->c.stack;
    prev = tcp_enter(s, pcb);
    tcp_timer_clear(pcb, TCP_TMR_REFUSED);
    tcp_deliver_refused(pcb); /* re-arms the retry timer when refused again */
    if (!tcp_dead(pcb)) {
        tcp_output_run(pcb); /* a window update the application asked for meanwhile */
    }
    if (tcp_leave(s, pcb, prev)) {
        tcp_timer_update(pcb);
    }
}

wisp_err_t wisp_tcp_close(struct wisp_tcp_pcb *pcb)
{
    wisp_err_t err;
    WISP_CORE_ASSERT_OWNER(tcp_stack_of(pcb));
    if (pcb == NULL) {
        return WISP_ERR_ARG;
    }
    if (tcp_is_listen(pcb)) {
        tcp_listen_free(tcp_as_listen(pcb));
        return WISP_OK;
    }
    switch (pcb->c.state) {
    case WISP_TCP_CLOSED:
    case WISP_TCP_SYN_SENT:
        tcp_pcb_release(pcb);
        return WISP_OK;
    default:
        break;
    }
    if (pcb->refused_n > 0u) {
        /* RFC 1122 §4.2.2.13: CLOSE with received data still pending
         * (the application refused it): send RST to show data was lost. */
        WISP_CTR_INC(pcb->c.stack, TCP_DROP_AFTERCLOSE);
        tcp_send_rst(pcb);
        pcb->flags |= TF_CLOSED;
        tcp_pcb_release(pcb);
        return WISP_OK;
    }
    if (pcb->c.state == WISP_TCP_SYN_RCVD || pcb->c.state == WISP_TCP_ESTABLISHED ||
        pcb->c.state == WISP_TCP_CLOSE_WAIT) {
        err = tcp_queue_fin(pcb);
        if (err != WISP_OK) {
            return err;
        }
        /* RFC 9293 §3.10.4 CLOSE: ESTABLISHED -> FIN-WAIT-1, CLOSE-WAIT -> LAST-ACK;
         * SYN-RECEIVED: the FIN is "queued for processing after entering
         * ESTABLISHED state" (tcp_in.c makes it FIN-WAIT-1 then) */
        if (pcb->c.state != WISP_TCP_SYN_RCVD) {
            pcb->c.state = (pcb->c.state == WISP_TCP_CLOSE_WAIT) ? (uint8_t)WISP_TCP_LAST_ACK
                                                                  : (uint8_t)WISP_TCP_FIN_WAIT_1;
        }
    }
    pcb->flags |= TF_CLOSED;
    pcb->recv = NULL;
    pcb->sent = NULL;
    pcb->errf = NULL;
    pcb->poll = NULL;
    pcb->connected = NULL;
    tcp_timer_clear(pcb, TCP_TMR_POLL);
    tcp_timer_clear(pcb, TCP_TMR_REFUSED);
    if (pcb->c.state == WISP_TCP_FIN_WAIT_2) {
        tcp_timer_set(pcb, TCP_TMR_FW2, TCP_FIN_WAIT2_MS);
    }
    tcp_output_soon(pcb);
    return WISP_OK;
}

wisp_err_t wisp_tcp_shutdown(struct wisp_tcp_pcb *pcb, bool shut_rx, bool shut_tx)
{
    wisp_err_t err;
    WISP_CORE_ASSERT_OWNER(tcp_stack_of(pcb));
    if (pcb == NULL) {
        return WISP_ERR_ARG;
    }
    if (tcp_is_listen(pcb)) {
        return (shut_rx || shut_tx) ? wisp_tcp_close(pcb) : WISP_OK;
    }
    if (shut_rx && shut_tx) {
        return wisp_tcp_close(pcb);
    }
    if (pcb->c.state == WISP_TCP_CLOSED || pcb->c.state == WISP_TCP_SYN_SENT) {
        return WISP_ERR_CONN;
    }
    if (shut_rx) {
        pcb->flags |= TF_SHUT_RX;
        if (pcb->refused_n > 0u) {
            wisp_tcp_recved(pcb, tcp_refused_free(pcb));
        }
        tcp_timer_clear(pcb, TCP_TMR_REFUSED);
    }
    if (shut_tx) {
        if (pcb->flags & TF_FIN_QUEUED) {
            return WISP_OK;
        }
        if (pcb->c.state != WISP_TCP_SYN_RCVD && pcb->c.state != WISP_TCP_ESTABLISHED &&
            pcb->c.state != WISP_TCP_CLOSE_WAIT) {
            return WISP_ERR_CONN;
        }
        err = tcp_queue_fin(pcb);
        if (err != WISP_OK) {
            return err;
        }
        if (pcb->c.state != WISP_TCP_SYN_RCVD) { /* RFC 9293 §3.10.4: as in wisp_tcp_close */
            pcb->c.state = (pcb->c.state == WISP_TCP_CLOSE_WAIT) ? (uint8_t)WISP_TCP_LAST_ACK
                                                                  : (uint8_t)WISP_TCP_FIN_WAIT_1;
        }
        tcp_output_soon(pcb);
    }
    return WISP_OK;
}

void wisp_tcp_abort(struct wisp_tcp_pcb *pcb)
{
    WISP_CORE_ASSERT_OWNER(tcp_stack_of(pcb));
    if (pcb == NULL) {
        return;
    }
    if (tcp_is_listen(pcb)) {
        tcp_listen_free(tcp_as_listen(pcb));
        return;
    }
    if (pcb->c.state == WISP_TCP_SYN_RCVD || (tcp_state_synced(pcb->c.state) && pcb->c.state != WISP_TCP_TIME_WAIT)) {
        tcp_send_rst(pcb); /* RFC 9293 §3.10.5 ABORT */
    }
    tcp_pcb_kill(pcb, WISP_ERR_ABRT);
}

void wisp_tcp_nodelay(struct wisp_tcp_pcb *pcb, bool on)
{
    WISP_CORE_ASSERT_OWNER(tcp_stack_of(pcb));
    if (pcb == NULL || tcp_is_listen(pcb)) {
        return;
    }
    if (on) {
        pcb->flags |= TF_NODELAY;
    } else {
        pcb->flags &= ~TF_NODELAY;
    }
}

void wisp_tcp_keepalive(struct wisp_tcp_pcb *pcb, bool enable, uint32_t idle_ms, uint32_t intvl_ms, uint32_t cnt)
{
    WISP_CORE_ASSERT_OWNER(tcp_stack_of(pcb));
    if (pcb == NULL || tcp_is_listen(pcb)) {
        return;
    }
    if (idle_ms != 0) {
        pcb->keep_idle = idle_ms;
    }
    if (intvl_ms != 0) {
        pcb->keep_intvl = intvl_ms;
    }
    if (cnt != 0) {
        pcb->keep_cnt = (uint8_t)(cnt > 255u ? 255u : cnt);
    }
    if (enable) {
        pcb->flags |= TF_KEEPALIVE;
        pcb->keep_probes = 0;
        tcp_timer_set(pcb, TCP_TMR_KEEP, pcb->keep_idle);
    } else {
        pcb->flags &= ~TF_KEEPALIVE;
        tcp_timer_clear(pcb, TCP_TMR_KEEP);
    }
}

void wisp_tcp_set_dscp(struct wisp_tcp_pcb *pcb, uint8_t dscp)
{
    WISP_CORE_ASSERT_OWNER(tcp_stack_of(pcb));
    if (pcb != NULL) {
        tcp_common(pcb)->tos = (uint8_t)((dscp & 0x3fu) << 2);
    }
}

void wisp_tcp_set_ttl(struct wisp_tcp_pcb *pcb, uint8_t ttl)
{
    WISP_CORE_ASSERT_OWNER(tcp_stack_of(pcb));
    if (pcb != NULL) {
        tcp_common(pcb)->ttl = ttl;
    }
}

unsigned wisp_tcp_state(const struct wisp_tcp_pcb *pcb)
{
    WISP_CORE_ASSERT_OWNER(tcp_stack_of(pcb));
    return pcb == NULL ? (unsigned)WISP_TCP_CLOSED : ((const struct wisp_tcp_common *)(const void *)pcb)->state;
}

void wisp_tcp_local(const struct wisp_tcp_pcb *pcb, wisp_ipaddr_t *ip, uint16_t *port)
{
    const struct wisp_tcp_common *c = (const struct wisp_tcp_common *)(const void *)pcb;
    WISP_CORE_ASSERT_OWNER(tcp_stack_of(pcb));
    if (ip != NULL) {
        *ip = wisp_ipaddr4(c->local_ip);
    }
    if (port != NULL) {
        *port = c->local_port;
    }
}

void wisp_tcp_remote(const struct wisp_tcp_pcb *pcb, wisp_ipaddr_t *ip, uint16_t *port)
{
    const struct wisp_tcp_common *c = (const struct wisp_tcp_common *)(const void *)pcb;
    bool l = c->state == WISP_TCP_LISTEN;
    WISP_CORE_ASSERT_OWNER(tcp_stack_of(pcb));
    if (ip != NULL) {
        *ip = wisp_ipaddr4(l ? WISP_IP4_ANY : pcb->remote_ip);
    }
    if (port != NULL) {
        *port = l ? 0u : pcb->remote_port;
    }
}

void wisp_tcp_get_info(const struct wisp_tcp_pcb *pcb, struct wisp_tcp_info *info)
{
    const struct wisp_tcp_common *c = (const struct wisp_tcp_common *)(const void *)pcb;
    WISP_CORE_ASSERT_OWNER(tcp_stack_of(pcb));
    memset(info, 0, sizeof(*info));
    info->state = c->state;
    if (c->state == WISP_TCP_LISTEN) {
        return;
    }
    info->mss = pcb->mss;
    info->snd_wscale = pcb->snd_wscale;
    info->rcv_wscale = pcb->rcv_wscale;
    info->ts_ok = (pcb->flags & TF_TS) != 0;
    info->sack_ok = (pcb->flags & TF_SACK) != 0;
    info->cwnd = pcb->cwnd;
    info->ssthresh = pcb->ssthresh;
    info->srtt_ms = pcb->srtt8 / 8u;
    info->rttvar_ms = pcb->rttvar4 / 4u;
    info->rto_ms = pcb->rto;
    info->snd_wnd = pcb->snd_wnd;
    info->rcv_wnd = pcb->rcv_wnd;
    info->unacked = pcb->snd_nxt - pcb->snd_una;
    info->retransmits = pcb->st_retransmits;
    info->fast_recoveries = pcb->st_fast_recoveries;
    info->timeouts = pcb->st_timeouts;
    info->bytes_acked = pcb->st_bytes_acked;
    info->bytes_received = pcb->st_bytes_received;
    info->ooseq_pbufs = pcb->ooseq_bufs;
    info->snd_blocks = pcb->snd_blk;
    info->rtx_backoff = (c->state == WISP_TCP_SYN_SENT || c->state == WISP_TCP_SYN_RCVD) ? pcb->syn_rtx : pcb->nrtx;
    info->snd_buf = pcb->snd_buf;
    info->rcv_buf = pcb->rcv_buf;
    {
        const struct wisp_tcp_seg *g;
        for (g = pcb->sndq; g != NULL && g != pcb->sndq_next; g = g->next) {
            if (g->flags & TCP_SEGF_SACKED) {
                continue;
            }
            info->unacked_segs++;
        }
    }
}

static uint32_t tcp_clamp_buf(uint32_t v, uint32_t max)
{
    uint32_t min = WISP_MIN((uint32_t)WISP_TCP_MSS, max);
    return v < min ? min : (v > max ? max : v);
}

void wisp_tcp_set_bufs(struct wisp_tcp_pcb *pcb, uint32_t sndbuf, uint32_t rcvbuf)
{
    WISP_CORE_ASSERT_OWNER(tcp_stack_of(pcb));
    if (pcb == NULL || tcp_is_listen(pcb)) {
        return;
    }
    if (sndbuf != 0) {
        pcb->snd_buf = tcp_clamp_buf(sndbuf, (uint32_t)WISP_TCP_SND_BUF);
    }
    if (rcvbuf != 0) {
        /* keep what is held (received, not consumed); the window is what
         * the new buffer leaves */
        uint32_t held = pcb->rcv_buf > pcb->rcv_wnd ? pcb->rcv_buf - pcb->rcv_wnd : 0u;
        pcb->rcv_buf = tcp_clamp_buf(rcvbuf, (uint32_t)WISP_TCP_WND);
        pcb->rcv_wnd = pcb->rcv_buf > held ? pcb->rcv_buf - held : 0u;
    }
}

uint32_t wisp_tcp_sndbuf_size(const struct wisp_tcp_pcb *pcb)
{
    const struct wisp_tcp_common *c = (const struct wisp_tcp_common *)(const void *)pcb;
    WISP_CORE_ASSERT_OWNER(tcp_stack_of(pcb));
    return c->state == WISP_TCP_LISTEN ? 0u : pcb->snd_buf;
}

void wisp_tcp_set_user_mss(struct wisp_tcp_pcb *pcb, uint16_t mss)
{
    WISP_CORE_ASSERT_OWNER(tcp_stack_of(pcb));
    if (pcb == NULL || tcp_is_listen(pcb)) {
        return;
    }
    pcb->user_mss = mss;
    /* A synchronized connection with nothing queued (segments are cut at
     * write time): lower the send MSS now; its initial window follows
     * (RFC 6928 §2) while nothing was sent. */
    if (mss != 0 && tcp_state_synced(pcb->c.state) && pcb->sndq == NULL && pcb->mss > mss) {
        pcb->mss = mss < 64u ? 64u : mss;
        if (pcb->mss_max > pcb->mss) {
            pcb->mss_max = pcb->mss; /* a path-MTU raise stays below the user's cap */
        }
        if (pcb->st_bytes_acked == 0u && pcb->snd_nxt - pcb->snd_una <= 1u) {
            pcb->cwnd = tcp_initial_cwnd(tcp_seg_max(pcb));
        }
    }
}

/* ------------------------------------- hash index (SYN queue, TIME-WAIT) */

#define TCP_HNONE 0xffffu

/* Bucket of a remote address and port pair among nb (a power of two): a
 * multiplicative mix keyed by hseed (derived from the secret key, so the
 * buckets cannot be aimed at; a collision costs a longer chain, never a
 * wrong match: every candidate is compared in full). */
static unsigned tcp_bucket(const struct wisp_stack *s, wisp_ip4_t rip, uint16_t rport, uint16_t lport, unsigned nb)
{
    uint32_t h = ((uint32_t)rip ^ s->tcp.hseed) * 0x9e3779b1u;
    h ^= ((uint32_t)rport << 16) | lport;
    h *= 0x85ebca6bu;
    h ^= h >> 16;
    return (unsigned)(h & (nb - 1u));
}

static unsigned tcp_synq_bucket(const struct wisp_stack *s, const struct wisp_tcp_syn *e)
{
    return tcp_bucket(s, e->remote_ip, e->remote_port, e->local_port, WISP_TCP_HBUCKETS(WISP_TCP_SYNQ_COUNT));
}

static unsigned tcp_tw_bucket(const struct wisp_stack *s, const struct wisp_tcp_tw *w)
{
    return tcp_bucket(s, w->remote_ip, w->remote_port, w->local_port, WISP_TCP_HBUCKETS(WISP_TCP_TW_COUNT));
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

static void tcp_hindex_reset(struct wisp_stack *s)
{
    memset(s->tcp.synq_head, 0xff, sizeof(s->tcp.synq_head));
    memset(s->tcp.synq_next, 0xff, sizeof(s->tcp.synq_next));
    memset(s->tcp.tw_head, 0xff, sizeof(s->tcp.tw_head));
    memset(s->tcp.tw_next, 0xff, sizeof(s->tcp.tw_next));
}

/* Free TIME-WAIT record w (in the index). */
static void tcp_tw_free(struct wisp_stack *s, struct wisp_tcp_tw *w)
{
    unsigned i = (unsigned)(w - s->tcp.tw);
    tcp_hunlink(s->tcp.tw_head, s->tcp.tw_next, tcp_tw_bucket(s, w), i);
    memset(w, 0, sizeof(*w));
}

/* ------------------------------------------------------ TIME-WAIT */

static void tcp_tw_timer_fn(struct wisp_stack *s, struct wisp_timer *t);

static void tcp_tw_arm(struct wisp_stack *s)
{
    uint32_t earliest = 0, now = wisp_now(s);
    bool any = false;
    unsigned i;
    for (i = 0; i < WISP_TCP_TW_COUNT; i++) {
        const struct wisp_tcp_tw *w = &s->tcp.tw[i];
        if (w->local_port != 0 && (!any || wisp_time_before(w->expire, earliest))) {
            earliest = w->expire;
            any = true;
        }
    }
    if (!any) {
        wisp_timer_cancel(s, &s->tcp.tw_tmr);
        return;
    }
    wisp_timer_arm(s, &s->tcp.tw_tmr, wisp_time_before(now, earliest) ? earliest - now : 0u, tcp_tw_timer_fn);
}

static void tcp_tw_timer_fn(struct wisp_stack *s, struct wisp_timer *t)
{
    uint32_t now = wisp_now(s);
    unsigned i;
    WISP_UNUSED(t);
    for (i = 0; i < WISP_TCP_TW_COUNT; i++) {
        struct wisp_tcp_tw *w = &s->tcp.tw[i];
        if (w->local_port != 0 && !wisp_time_before(now, w->expire)) {
            tcp_tw_free(s, w); /* RFC 9293 §3.10.8: 2 MSL over -> CLOSED */
        }
    }
    tcp_tw_arm(s);
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
    w->ts_recent = pcb->ts_recent;
    w->ts_off = pcb->ts_off;
    w->ts_ok = (pcb->flags & TF_TS) ? 1u : 0u;
    w->tos = pcb->c.tos;
    w->ttl = pcb->c.ttl;
    w->rcv_wscale = pcb->rcv_wscale;
    w->expire = wisp_now(s) + 2u * WISP_TCP_MSL_MS;
    tcp_hlink(s->tcp.tw_head, s->tcp.tw_next, tcp_tw_bucket(s, w), (unsigned)(w - s->tcp.tw));
    tcp_tw_arm(s);
    if (pcb->refused_n > 0u) {
        WISP_CTR_INC(s, TCP_DROP_REFUSED); /* the application never took it */
    }
    tcp_pcb_kill(pcb, WISP_ERR_CLSD);
}

static void tcp_tw_ack(struct wisp_stack *s, const struct wisp_tcp_tw *w)
{
    struct tcp_tuple t;
    uint8_t opt[TCP_TS_OPTLEN];
    uint8_t optlen = 0;
    uint32_t wnd = (uint32_t)WISP_TCP_WND >> w->rcv_wscale;
    t.lip = w->local_ip;
    t.rip = w->remote_ip;
    t.lport = w->local_port;
    t.rport = w->remote_port;
    if (w->ts_ok) {
        opt[0] = TCP_OPT_NOP;
        opt[1] = TCP_OPT_NOP;
        opt[2] = TCP_OPT_TS;
        opt[3] = 10;
        wisp_wr32(opt + 4, wisp_now(s) + w->ts_off);
        wisp_wr32(opt + 8, w->ts_recent);
        optlen = TCP_TS_OPTLEN;
    }
    (void)tcp_xmit_raw(s, &t, w->snd_nxt, w->rcv_nxt, TCP_ACK, (uint16_t)(wnd > 65535u ? 65535u : wnd), opt, optlen,
                       NULL, w->tos, w->ttl);
}

bool tcp_tw_input(struct wisp_stack *s, struct wisp_pbuf *p, const struct tcp_in *in)
{
    struct wisp_tcp_tw *w = NULL;
    unsigned i;
    bool ts = false;

    for (i = s->tcp.tw_head[tcp_bucket(s, wisp_ipaddr_ip4(&in->ip->src), in->sport, in->dport, WISP_TCP_HBUCKETS(WISP_TCP_TW_COUNT))];
         i != TCP_HNONE; i = s->tcp.tw_next[i]) {
        struct wisp_tcp_tw *x = &s->tcp.tw[i];
        if (x->local_port == in->dport && x->remote_port == in->sport && x->local_ip == wisp_ipaddr_ip4(&in->ip->dst) &&
            x->remote_ip == wisp_ipaddr_ip4(&in->ip->src)) {
            w = x;
            break;
        }
    }
    if (w == NULL) {
        return false;
    }
    ts = w->ts_ok && in->opt.ts;
    if (in->flags & TCP_RST) {
        /* RFC 1337 §3 (TIME-WAIT assassination): ignore RST in TIME-WAIT. */
        WISP_CTR_INC(s, TCP_RST_RX);
        wisp_pbuf_free(p);
        return true;
    }
    if ((in->flags & (TCP_SYN | TCP_ACK)) == TCP_SYN) {
        /* RFC 6191 §2 / RFC 1122 §4.2.2.13: a new incarnation may reuse
         * the 4-tuple when its timestamp (or, without timestamps, its
         * sequence number) is above the old connection's. */
        if ((ts && TCP_SEQ_GT(in->opt.tsval, w->ts_recent)) || (!ts && TCP_SEQ_GT(in->seq, w->rcv_nxt))) {
            tcp_tw_free(s, w);
            tcp_tw_arm(s);
            WISP_CTR_INC(s, TCP_TW_REOPEN);
            return false; /* the caller hands the SYN to the listener */
        }
        tcp_tw_ack(s, w);
        wisp_pbuf_free(p);
        return true;
    }
    if (!(in->flags & (TCP_SYN | TCP_ACK))) {
        /* RFC 9293 §3.10.7.4 fifth: "if the ACK bit is off drop the
         * segment" -- applied before any reply (as for connections), so
         * an ACK-less FIN or data segment draws nothing. */
        WISP_CTR_INC(s, TCP_DROP_NOACK);
        wisp_pbuf_free(p);
        return true;
    }
    /* RFC 7323 §5.3 PAWS */
    if (ts && TCP_SEQ_LT(in->opt.tsval, w->ts_recent)) {
        WISP_CTR_INC(s, TCP_DROP_PAWS);
        tcp_tw_ack(s, w);
        wisp_pbuf_free(p);
        return true;
    }
    if ((in->flags & TCP_FIN) && in->seq + in->len + 1u == w->rcv_nxt) {
        /* RFC 9293 §3.10.7.4 TIME-WAIT, eighth step: the retransmitted
         * FIN (it ends at RCV.NXT): acknowledge it and restart the 2 MSL
         * timeout. Any other FIN is only acknowledged below. */
        w->expire = wisp_now(s) + 2u * WISP_TCP_MSL_MS;
        tcp_tw_arm(s);
        tcp_tw_ack(s, w);
    } else if (in->len > 0 || (in->flags & TCP_FIN) || in->seq != w->rcv_nxt) {
        WISP_CTR_INC(s, TCP_DROP_OOW);
        tcp_tw_ack(s, w); /* RFC 9293 §3.10.7.4 first step: unacceptable -> ACK */
    }
    wisp_pbuf_free(p);
    return true;
}

/* ---------------------------------------------------- SYN queue */

static void tcp_synq_timer_fn(struct wisp_stack *s, struct wisp_timer *t);

static void tcp_synq_arm(struct wisp_stack *s)
{
    uint32_t earliest = 0, now = wisp_now(s);
    bool any = false;
    unsigned i;
    for (i = 0; i < WISP_TCP_SYNQ_COUNT; i++) {
        const struct wisp_tcp_syn *e = &s->tcp.synq[i];
        if (e->lpcb != NULL && (!any || wisp_time_before(e->due, earliest))) {
            earliest = e->due;
            any = true;
        }
    }
    if (!any) {
        wisp_timer_cancel(s, &s->tcp.synq_tmr);
        return;
    }
    wisp_timer_arm(s, &s->tcp.synq_tmr, wisp_time_before(now, earliest) ? earliest - now : 0u, tcp_synq_timer_fn);
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

/* The options and TSval of a SYN-ACK offering window wnd and our MSS
 * ours, with timestamp clock offset ts_off. cookie_bits: the low TSval
 * bits of a SYN cookie (RFC 4987 §3.6 with timestamps), or -1. Returns
 * tcp_xmit_raw's result (a local failure is retried by the SYN queue; a
 * cookie's SYN-ACK is not: the peer resends its SYN). */
static wisp_err_t tcp_send_synack(struct wisp_stack *s, const struct tcp_tuple *t, uint32_t iss, uint32_t irs,
                                  uint8_t peer_ws, bool sack, bool ts, uint32_t ts_recent, int cookie_bits,
                                  uint16_t wnd, uint16_t ours, uint32_t ts_off, uint8_t tos, uint8_t ttl)
{
    uint8_t opt[TCP_MAX_OPTLEN];
    uint8_t n;
    uint32_t tsval = wisp_now(s) + ts_off;
    if (cookie_bits >= 0) {
        /* Linux's layout: the low 6 bits carry the options; keep the
         * value at or below the clock so later TSvals never go back. */
        uint32_t v = (tsval & ~0x3fu) | (uint32_t)cookie_bits;
        if (TCP_SEQ_GT(v, tsval)) {
            v -= 64u;
        }
        tsval = v;
    }
    n = tcp_build_syn_opts(opt, ours, peer_ws == 0xffu ? 0xffu : tcp_rcv_wscale_ours(), sack, ts, tsval, ts_recent);
    return tcp_xmit_raw(s, t, iss, irs + 1u, TCP_SYN | TCP_ACK, wnd, opt, n, NULL, tos, ttl);
}

/* The window a SYN-ACK offers (unscaled, RFC 7323 §2.2) when our MSS
 * towards the peer is ours: the buffer, within the receive budget (one
 * more connection's share); *blk: data bytes per receive block for that
 * peer. */
static uint16_t tcp_synack_wnd(struct wisp_stack *s, uint16_t ours, uint16_t *blk)
{
    uint32_t b = tcp_rx_blk(ours);
    uint32_t share, fresh = tcp_rx_blocks_avail(s, 0, (uint32_t)s->tcp.npcbs + 1u, &share);
    uint32_t cap = WISP_MIN(fresh, share) * b;
    *blk = (uint16_t)b;
    return (uint16_t)WISP_MIN(WISP_MIN((uint32_t)WISP_TCP_WND, 65535u), cap);
}

static void tcp_synq_tuple(const struct wisp_tcp_syn *e, struct tcp_tuple *t)
{
    t->lip = e->local_ip;
    t->rip = e->remote_ip;
    t->lport = e->local_port;
    t->rport = e->remote_port;
}

/* RFC 9293 §3.10.7.4 first step for an embryo: seq lies in the window
 * its SYN-ACK offered, [IRS+1, IRS+1+wnd) (a zero window: just IRS+1). */
static bool tcp_synq_in_window(const struct wisp_tcp_syn *e, uint32_t seq)
{
    return seq == e->irs + 1u || (TCP_SEQ_GT(seq, e->irs + 1u) && TCP_SEQ_LT(seq, e->irs + 1u + e->wnd));
}

/* RFC 5961 §3.2 / §7 for an embryo: a throttled challenge ACK
 * <SEQ=SND.NXT><ACK=RCV.NXT><CTL=ACK>, i.e. <SEQ=ISS+1><ACK=IRS+1>, with
 * the timestamp option when it was negotiated (RFC 7323 §3.2). */
static void tcp_synq_challenge_ack(struct wisp_stack *s, const struct wisp_tcp_syn *e)
{
    struct tcp_tuple t;
    uint8_t opt[TCP_TS_OPTLEN];
    uint8_t optlen = 0;
    if (!tcp_challenge_allowed(s)) {
        return;
    }
    WISP_CTR_INC(s, TCP_CHALLENGE_ACK);
    tcp_synq_tuple(e, &t);
    if (e->opts & TCP_SYNO_TS) {
        opt[0] = TCP_OPT_NOP;
        opt[1] = TCP_OPT_NOP;
        opt[2] = TCP_OPT_TS;
        opt[3] = 10;
        wisp_wr32(opt + 4, wisp_now(s) + tcp_ts_offset(s, &t));
        wisp_wr32(opt + 8, e->ts_recent);
        optlen = TCP_TS_OPTLEN;
    }
    /* RFC 7323 §2.2: unlike the SYN-ACK's, this window field is scaled
     * when both SYNs carry the option */
    (void)tcp_xmit_raw(s, &t, e->iss + 1u, e->irs + 1u, TCP_ACK,
                       (uint16_t)((e->peer_wscale != 0xffu && WISP_TCP_WND_SCALE) ? e->wnd >> tcp_rcv_wscale_ours()
                                                                                 : e->wnd),
                       opt, optlen, NULL, e->lpcb->c.tos, e->lpcb->c.ttl);
}

/* The RTO of an embryo after n retransmissions (RFC 6298 §5.5: the
 * initial RTO doubled per retry). */
static uint32_t tcp_synq_rto(unsigned n)
{
    uint32_t rto = WISP_TCP_RTO_INIT_MS;
    unsigned k;
    for (k = 0; k < n && rto < WISP_TCP_RTO_MAX_MS; k++) {
        rto *= 2u;
    }
    return WISP_MIN(rto, (uint32_t)WISP_TCP_RTO_MAX_MS);
}

/* (Re)send the SYN-ACK of e and set its next deadline: the RTO when it
 * left, a quick retry when the stack itself could not send it (no buffer,
 * full queue: no loss in the network, no backoff). */
static void tcp_synq_send(struct wisp_stack *s, struct wisp_tcp_syn *e)
{
    struct tcp_tuple t;
    wisp_err_t err;
    tcp_synq_tuple(e, &t);
    err = tcp_send_synack(s, &t, e->iss, e->irs, e->peer_wscale, (e->opts & TCP_SYNO_SACK) != 0,
                          (e->opts & TCP_SYNO_TS) != 0, e->ts_recent, -1, e->wnd, tcp_mss_for(s, t.rip),
                          tcp_ts_offset(s, &t), e->lpcb->c.tos, e->lpcb->c.ttl);
    if (err == WISP_OK) {
        e->opts = (uint8_t)(e->opts & ~TCP_SYNO_UNSENT);
        e->due = wisp_now(s) + tcp_synq_rto(e->retries);
    } else {
        e->opts = (uint8_t)(e->opts | TCP_SYNO_UNSENT);
        e->due = wisp_now(s) + TCP_OUTPUT_RETRY_MS;
        WISP_CTR_INC(s, TCP_CTL_LOCAL_RETRY);
    }
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

static struct wisp_tcp_listen *tcp_find_listener(struct wisp_stack *s, const struct tcp_in *in)
{
    struct wisp_tcp_listen *l, *best = NULL;
    for (l = s->tcp.listens; l != NULL; l = l->next) {
        if (l->c.local_port != in->dport) {
            continue;
        }
        if (l->c.local_ip == wisp_ipaddr_ip4(&in->ip->dst)) {
            return l; /* a specific address beats the wildcard */
        }
        if (l->c.local_ip == WISP_IP4_ANY) {
            best = l;
        }
    }
    return best;
}

static void tcp_in_tuple(const struct tcp_in *in, struct tcp_tuple *t)
{
    t->lip = wisp_ipaddr_ip4(&in->ip->dst);
    t->rip = wisp_ipaddr_ip4(&in->ip->src);
    t->lport = in->dport;
    t->rport = in->sport;
}

/* RFC 4987 §3.6 SYN cookie: top 5 bits a coarse time counter, 3 bits the
 * index of the MSS in this table, 24 bits a keyed hash of the 4-tuple, the
 * counter and the peer's ISN. */
static const uint16_t tcp_cookie_mss[8] = { 216, 536, 1200, 1360, 1400, 1440, 1452, 1460 };

/* The one SipHash of a cookie: the 4-tuple, domain 2, the counter and
 * the peer's ISN. Its low 24 bits go into the cookie, its high 32 bits are
 * the connection's timestamp clock offset (RFC 7323 §5.4: per connection,
 * recomputed from the cookie's ACK), so a flood SYN costs one hash. */
static uint64_t tcp_cookie_hash(struct wisp_stack *s, const struct tcp_tuple *t, uint32_t cnt, uint32_t irs)
{
    uint8_t m[21];
    wisp_ip4_wr(m, t->lip);
    wisp_ip4_wr(m + 4, t->rip);
    wisp_wr16(m + 8, t->lport);
    wisp_wr16(m + 10, t->rport);
    m[12] = 2;
    wisp_wr32(m + 13, cnt);
    wisp_wr32(m + 17, irs);
    return tcp_siphash24(s->tcp.key, m, sizeof(m));
}

static uint32_t tcp_cookie_make(struct wisp_stack *s, const struct tcp_tuple *t, uint32_t irs, uint16_t mss,
                                uint32_t *ts_off)
{
    uint32_t cnt = wisp_now(s) / TCP_COOKIE_PERIOD_MS;
    uint32_t idx = 0, i;
    uint64_t h = tcp_cookie_hash(s, t, cnt, irs);
    for (i = 0; i < 8u; i++) {
        if (tcp_cookie_mss[i] <= mss) {
            idx = i;
        }
    }
    *ts_off = (uint32_t)(h >> 32);
    return ((cnt & 31u) << 27) | (idx << 24) | ((uint32_t)h & 0xffffffu);
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
        uint64_t h;
        if ((c & 31u) != (cookie >> 27)) {
            continue;
        }
        h = tcp_cookie_hash(s, t, c, irs);
        if (((uint32_t)h & 0xffffffu) == (cookie & 0xffffffu)) {
            *mss = tcp_cookie_mss[(cookie >> 24) & 7u];
            *ts_off = (uint32_t)(h >> 32);
            return true;
        }
    }
    return false;
}

/* A connection PCB for a completed passive open (ESTABLISHED). */
static struct wisp_tcp_pcb *tcp_passive_pcb(struct wisp_stack *s, struct wisp_tcp_listen *l,
                                            const struct tcp_tuple *t, uint32_t iss, uint32_t irs,
                                            uint16_t peer_mss, uint8_t peer_ws, bool sack, bool ts,
                                            uint32_t ts_recent, uint16_t wnd, uint32_t ts_off)
{
    struct wisp_tcp_pcb *pcb = (struct wisp_tcp_pcb *)wisp_pool_alloc(&s->pool[WISP_POOL_TCP_PCB]);
    uint16_t ours;
    if (pcb == NULL) {
        return NULL;
    }
    tcp_new_defaults(s, pcb);
    pcb->c.arg = l->c.arg;
    pcb->c.tos = l->c.tos;
    pcb->c.ttl = l->c.ttl;
    pcb->c.local_ip = t->lip;
    pcb->c.local_port = t->lport;
    pcb->remote_ip = t->rip;
    pcb->remote_port = t->rport;
    pcb->flags |= TF_PASSIVE;
    pcb->iss = iss;
    pcb->snd_una = iss + 1u;
    pcb->snd_nxt = iss + 1u;
    pcb->snd_lbb = iss + 1u;
    pcb->snd_sml = iss;
    pcb->recover = iss;
    pcb->snd_wl1 = irs;
    pcb->snd_wl2 = iss;
    pcb->irs = irs;
    pcb->rcv_nxt = irs + 1u;
    pcb->rcv_adv = pcb->rcv_nxt + wnd; /* what the SYN-ACK offered */
    pcb->last_ack_sent = pcb->rcv_nxt;
    pcb->ts_off = ts_off; /* the clock our SYN-ACK's TSval was read from */
    /* RFC 9293 §3.7.1 / RFC 6691: send MSS = min(peer's MSS option or
     * 536, our MTU - 40). */
    ours = tcp_mss_for(s, t->rip);
    pcb->rcv_blk = tcp_rx_blk(ours);
    pcb->mss = (uint16_t)WISP_MIN(peer_mss != 0 ? peer_mss : TCP_DEFAULT_MSS, ours);
    if (peer_ws != 0xffu && WISP_TCP_WND_SCALE) {
        /* RFC 7323 §2.2/§2.3: both SYNs carried the option; shifts > 14
         * are taken as 14. */
        pcb->flags |= TF_WS;
        pcb->snd_wscale = (uint8_t)WISP_MIN(peer_ws, TCP_MAX_WSCALE);
        pcb->rcv_wscale = tcp_rcv_wscale_ours();
    }
    if (sack && WISP_TCP_SACK) {
        pcb->flags |= TF_SACK;
    }
    if (ts && WISP_TCP_TIMESTAMPS) {
        pcb->flags |= TF_TS;
        pcb->ts_recent = ts_recent;
        pcb->ts_recent_ms = wisp_now(s);
    }
    pcb->c.state = WISP_TCP_SYN_RCVD;
    tcp_link(s, pcb);
    tcp_set_established(pcb); /* (takes over the promise of the SYN-ACK's window) */
    if (wnd < WISP_MIN((uint32_t)WISP_TCP_WND, 65535u)) {
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
        tcp_send_rst(pcb);
        pcb->flags |= TF_CLOSED;
        tcp_pcb_release(pcb);
    }
    if (tcp_dead(pcb)) {
        (void)tcp_leave(s, pcb, prev);
        wisp_pbuf_free(p);
        return;
    }
    tcp_process(pcb, p, in);
    if (!tcp_dead(pcb)) {
        tcp_output_run(pcb);
    }
    if (tcp_leave(s, pcb, prev)) {
        tcp_timer_update(pcb);
    }
}

bool tcp_synq_input(struct wisp_stack *s, struct wisp_pbuf *p, const struct tcp_in *cin)
{
    struct wisp_tcp_syn *e = NULL;
    struct tcp_in in = *cin;
    struct wisp_tcp_listen *l;
    struct wisp_tcp_pcb *pcb;
    struct tcp_tuple t;
    unsigned i;

    for (i = s->tcp.synq_head[tcp_bucket(s, wisp_ipaddr_ip4(&in.ip->src), in.sport, in.dport,
                                         WISP_TCP_HBUCKETS(WISP_TCP_SYNQ_COUNT))];
         i != TCP_HNONE; i = s->tcp.synq_next[i]) {
        struct wisp_tcp_syn *x = &s->tcp.synq[i];
        if (x->local_port == in.dport && x->remote_port == in.sport && x->local_ip == wisp_ipaddr_ip4(&in.ip->dst) &&
            x->remote_ip == wisp_ipaddr_ip4(&in.ip->src)) {
            e = x;
            break;
        }
    }
    if (e == NULL) {
        return false;
    }
    l = e->lpcb;
    if (in.flags & TCP_RST) {
        WISP_CTR_INC(s, TCP_RST_RX);
        /* RFC 9293 §3.10.7.4 SYN-RECEIVED (passive), second: an exact RST
         * returns to LISTEN (drop the embryo); RFC 5961 §3.2: another RST
         * in the window the SYN-ACK offered draws a challenge ACK
         * (throttled, §7); one outside it is dropped silently (first). */
        if (in.seq == e->irs + 1u) {
            tcp_synq_remove(s, e);
            tcp_synq_arm(s);
        } else {
            WISP_CTR_INC(s, TCP_DROP_RST);
            if (tcp_synq_in_window(e, in.seq)) {
                tcp_synq_challenge_ack(s, e);
            }
        }
        wisp_pbuf_free(p);
        return true;
    }
    if (in.flags & TCP_SYN) {
        if (!(in.flags & TCP_ACK) && in.seq == e->irs) {
            tcp_synq_send(s, e); /* the peer did not get our SYN-ACK */
            tcp_synq_arm(s);
            wisp_pbuf_free(p);
            return true;
        }
        if (!(in.flags & TCP_ACK)) {
            tcp_synq_remove(s, e); /* a new ISN: start over from LISTEN */
            return false;
        }
        WISP_CTR_INC(s, TCP_DROP_SYN);
        wisp_pbuf_free(p);
        return true;
    }
    if (!(in.flags & TCP_ACK)) {
        WISP_CTR_INC(s, TCP_DROP_NOACK);
        wisp_pbuf_free(p);
        return true;
    }
    /* RFC 9293 §3.10.7.4 SYN-RECEIVED: an unacceptable ACK gets a RST. */
    if (in.ack != e->iss + 1u) {
        WISP_CTR_INC(s, TCP_DROP_BADACK);
        tcp_rst_reply(s, &in);
        wisp_pbuf_free(p);
        return true;
    }
    /* first step: the sequence number must be in the window the SYN-ACK
     * offered (a zero window takes just RCV.NXT) */
    if (TCP_SEQ_LT(in.seq, e->irs + 1u) || (in.seq != e->irs + 1u && TCP_SEQ_GEQ(in.seq, e->irs + 1u + e->wnd))) {
        WISP_CTR_INC(s, TCP_DROP_OOW);
        tcp_synq_send(s, e);
        tcp_synq_arm(s);
        wisp_pbuf_free(p);
        return true;
    }
    if ((e->opts & TCP_SYNO_TS) && in.opt.ts && TCP_SEQ_LT(in.opt.tsval, e->ts_recent)) {
        WISP_CTR_INC(s, TCP_DROP_PAWS); /* RFC 7323 §5.3 */
        wisp_pbuf_free(p);
        return true;
    }
    tcp_synq_tuple(e, &t);
    pcb = tcp_passive_pcb(s, l, &t, e->iss, e->irs, e->peer_mss, e->peer_wscale, (e->opts & TCP_SYNO_SACK) != 0,
                          (e->opts & TCP_SYNO_TS) != 0, e->ts_recent, e->wnd, tcp_ts_offset(s, &t));
    tcp_synq_remove(s, e);
    tcp_synq_arm(s);
    if (pcb == NULL) {
        /* no PCB for the connection: reset it rather than leave the peer
         * in ESTABLISHED */
        WISP_CTR_INC(s, TCP_LISTEN_OVERFLOW);
        tcp_rst_reply(s, &in);
        wisp_pbuf_free(p);
        return true;
    }
    tcp_accept_and_process(s, l, pcb, p, &in);
    return true;
}

bool tcp_listen_input(struct wisp_stack *s, struct wisp_pbuf *p, const struct tcp_in *cin)
{
    struct wisp_tcp_listen *l = tcp_find_listener(s, cin);
    struct tcp_in in = *cin;
    struct tcp_tuple t;
    bool ts, sack;

    if (l == NULL) {
        return false;
    }
    tcp_in_tuple(&in, &t);
    /* RFC 9293 §3.10.7.2 LISTEN, first: an incoming RST is ignored. */
    if (in.flags & TCP_RST) {
        WISP_CTR_INC(s, TCP_RST_RX);
        wisp_pbuf_free(p);
        return true;
    }
    /* second: an ACK -- a SYN cookie, else a RST <SEQ=SEG.ACK>. */
    if (in.flags & TCP_ACK) {
        uint16_t mss;
        uint32_t ts_off;
        if (!(in.flags & TCP_SYN) && tcp_cookie_check(s, &t, in.ack - 1u, in.seq - 1u, &mss, &ts_off)) {
            uint8_t ws = 0xffu;
            struct wisp_tcp_pcb *pcb;
            sack = false;
            ts = false;
            if (in.opt.ts && WISP_TCP_TIMESTAMPS) {
                /* our cookie TSval comes back in TSecr: 4 bits window
                 * scale (15 = none), 1 bit SACK-permitted */
                ts = true;
                ws = (uint8_t)(in.opt.tsecr & 0x0fu);
                if (ws == 0x0fu) {
                    ws = 0xffu;
                }
                sack = (in.opt.tsecr & 0x10u) != 0;
            }
            uint16_t wnd, blk;
            WISP_CTR_INC(s, TCP_COOKIE_OK);
            /* The cookie's SYN-ACK window was not kept (no state): what
             * the budget allows now is promised; data beyond it (when it
             * offered more) is dropped and resent. */
            wnd = tcp_synack_wnd(s, tcp_mss_for(s, t.rip), &blk);
            pcb = tcp_passive_pcb(s, l, &t, in.ack - 1u, in.seq - 1u, mss, ws, sack, ts, in.opt.tsval, wnd, ts_off);
            if (pcb == NULL) {
                WISP_CTR_INC(s, TCP_LISTEN_OVERFLOW);
                tcp_rst_reply(s, &in);
                wisp_pbuf_free(p);
                return true;
            }
            tcp_accept_and_process(s, l, pcb, p, &in);
            return true;
        }
        if (s->tcp.cookie_used && !wisp_time_before(s->tcp.cookie_last + 2u * TCP_COOKIE_PERIOD_MS, wisp_now(s))) {
            WISP_CTR_INC(s, TCP_COOKIE_BAD);
        }
        WISP_CTR_INC(s, TCP_DROP_BADACK);
        tcp_rst_reply(s, &in);
        wisp_pbuf_free(p);
        return true;
    }
    if (!(in.flags & TCP_SYN)) {
        WISP_CTR_INC(s, TCP_DROP_STATE); /* RFC 9293 §3.10.7.2 fourth: drop */
        wisp_pbuf_free(p);
        return true;
    }
    /* third: a SYN. */
    sack = in.opt.sack_ok && WISP_TCP_SACK;
    ts = in.opt.ts && WISP_TCP_TIMESTAMPS;
    {
        struct wisp_tcp_syn *e = NULL;
        uint16_t blk;
        unsigned i;
        if (l->synq_n < l->backlog) {
            for (i = 0; i < WISP_TCP_SYNQ_COUNT; i++) {
                if (s->tcp.synq[i].lpcb == NULL) {
                    e = &s->tcp.synq[i];
                    break;
                }
            }
        }
        if (e != NULL) {
            memset(e, 0, sizeof(*e));
            e->lpcb = l;
            l->synq_n++;
            e->local_ip = t.lip;
            e->remote_ip = t.rip;
            e->local_port = t.lport;
            e->remote_port = t.rport;
            e->irs = in.seq;
            e->iss = tcp_isn(s, &t);
            e->peer_mss = in.opt.mss;
            e->peer_wscale = WISP_TCP_WND_SCALE ? in.opt.ws : 0xffu;
            e->opts = (uint8_t)((sack ? TCP_SYNO_SACK : 0u) | (ts ? TCP_SYNO_TS : 0u));
            e->ts_recent = in.opt.tsval;
            e->wnd = tcp_synack_wnd(s, tcp_mss_for(s, t.rip), &blk); /* kept for its retransmissions */
            tcp_hlink(s->tcp.synq_head, s->tcp.synq_next, tcp_synq_bucket(s, e), (unsigned)(e - s->tcp.synq));
            tcp_synq_send(s, e);
            tcp_synq_arm(s);
        } else {
            /* RFC 4987 §3.6: no room -- answer statelessly with a cookie.
             * Without timestamps the cookie cannot carry window scaling
             * or SACK, so the SYN-ACK offers neither. */
            uint16_t mss = in.opt.mss != 0 ? in.opt.mss : (uint16_t)TCP_DEFAULT_MSS;
            uint16_t ours = tcp_mss_for(s, t.rip); /* one route lookup */
            uint8_t ws = (ts && WISP_TCP_WND_SCALE) ? in.opt.ws : 0xffu;
            uint32_t cookie, ts_off;
            int bits = -1;
            if (ts) {
                bits = (int)((ws == 0xffu ? 0x0fu : (ws & 0x0fu)) | (sack ? 0x10u : 0u));
            } else {
                sack = false;
            }
            WISP_CTR_INC(s, TCP_SYNQ_FULL);
            WISP_CTR_INC(s, TCP_COOKIE_SENT);
            s->tcp.cookie_used = 1;
            s->tcp.cookie_last = wisp_now(s);
            mss = (uint16_t)WISP_MIN(mss, ours);
            cookie = tcp_cookie_make(s, &t, in.seq, mss, &ts_off);
            (void)tcp_send_synack(s, &t, cookie, in.seq, ws, sack, ts, in.opt.tsval, bits,
                                  tcp_synack_wnd(s, ours, &blk), ours, ts_off, l->c.tos, l->c.ttl);
        }
    }
    wisp_pbuf_free(p); /* data on a SYN is not kept (the peer resends it) */
    return true;
}

/* ------------------------------------------------- init / deinit */

void wisp_tcp_init(struct wisp_stack *s)
{
    memset(&s->tcp, 0, sizeof(s->tcp));
    /* RFC 6528 §3: the secret key -- wisp_stack_init derives it next. */
    s->tcp.chal_tokens = TCP_CHALLENGE_PER_S * 1000u;
    s->tcp.chal_last = wisp_now(s);
    {
        static const uint8_t dom[] = { 'w', 'i', 's', 'p', '-', 'h', 'i', 'd', 'x' };
        s->tcp.hseed = (uint32_t)tcp_siphash24(s->tcp.key, dom, sizeof(dom));
    }
    tcp_hindex_reset(s);
}

void wisp_tcp_deinit(struct wisp_stack *s)
{
    struct wisp_tcp_pcb *pcb, *next;
    WISP_CORE_ASSERT_OWNER(s);
    /* Orphans (closed by the application) belong to the stack. */
    for (pcb = s->tcp.pcbs; pcb != NULL; pcb = next) {
        next = pcb->next;
        if (pcb->flags & TF_CLOSED) {
            tcp_pcb_release(pcb);
        }
    }
    memset(s->tcp.synq, 0, sizeof(s->tcp.synq));
    memset(s->tcp.tw, 0, sizeof(s->tcp.tw));
    tcp_hindex_reset(s);
    wisp_timer_cancel(s, &s->tcp.synq_tmr);
    wisp_timer_cancel(s, &s->tcp.tw_tmr);
    wisp_timer_cancel(s, &s->tcp.wake_tmr);
}

#else
typedef int wisp_tcp_disabled_t; /* ISO C forbids an empty translation unit */
#endif /* WISP_TCP */
