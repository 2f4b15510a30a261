/**
 * @file tcp.c
 * TCP (RFC 9293): PCB lifecycle (allocation, release, deferred free while
 * a PCB is processed) and the raw callback API's calls, setters and
 * getters (bind, connect, close, shutdown, abort, options, info), initial
 * sequence numbers (RFC 6528), ephemeral ports (RFC 6056).
 *
 * The rest of TCP, by concern: tcp_in.c (segment arrival, the state
 * machine, ACK processing), tcp_out.c (write, segmentation, output),
 * tcp_timer.c (the stack-wide tick of the connections' timers, TIME-WAIT expiry), tcp_synq.c
 * (listeners, SYN queue, SYN cookies, TIME-WAIT records), tcp_cc.c
 * (congestion control, tcp_cc.h), tcp_icmp.c (ICMP errors, path MTU);
 * tcp_priv.h holds what they share.
 *
 * Choices where the RFCs leave room, for TCP as a whole (see also
 * tcp_in.c / tcp_out.c):
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
#define WISP_PRIVATE_ACCESS 1 /* library code: sees the private tier (wisp/arch.h) */
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

/* ------------------------------------------------------- SipHash-2-4 */

/* SipHash-2-4 is wisp_siphash24 (stack.c); this name stays for tcp_hash
 * and the tests. */
uint64_t tcp_siphash24(const uint32_t key[4], const uint8_t *m, size_t len)
{
    return wisp_siphash24(key, m, len);
}

/* Hash of a 4-tuple in a domain (0 ISN, 1 timestamp offset, 2 cookie:
 * tcp_synq.c) with up to two extra words. */
uint64_t tcp_hash(struct wisp_stack *s, const struct tcp_tuple *t, uint8_t domain, uint32_t x, uint32_t y)
{
    uint8_t m[21];
    wisp_ip4_wr(m, wisp_ipaddr_ip4(&t->lip)); /* IPv4 only: IPv6 extends */
    wisp_ip4_wr(m + 4, wisp_ipaddr_ip4(&t->rip));
    wisp_wr16(m + 8, t->lport);
    wisp_wr16(m + 10, t->rport);
    m[12] = domain;
    wisp_wr32(m + 13, x);
    wisp_wr32(m + 17, y);
    return tcp_siphash24(s->tcp.key, m, sizeof(m));
}

/* RFC 6528 §3: ISN = M + F(localip, localport, remoteip, remoteport,
 * secretkey), M a timer ticking every 4 microseconds (ms * 250). */
uint32_t tcp_isn(struct wisp_stack *s, const struct tcp_tuple *t)
{
    return wisp_now(s) * 250u + (uint32_t)tcp_hash(s, t, 0, 0, 0);
}

/* RFC 7323 §5.4 / §7.1: a per-connection offset of the timestamp clock
 * (a keyed hash of the 4-tuple, so SYN cookies can recompute it). */
uint32_t tcp_ts_offset(struct wisp_stack *s, const struct tcp_tuple *t)
{
    return (uint32_t)tcp_hash(s, t, 1, 0, 0);
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

void tcp_finish(struct wisp_stack *s, struct wisp_tcp_pcb *pcb, struct wisp_tcp_pcb *prev, uint32_t need)
{
    if (!tcp_dead(pcb) && (pcb->flags & need) == need) {
        tcp_output_run(pcb);
    }
    (void)tcp_leave(s, pcb, prev);
}

bool tcp_dead(const struct wisp_tcp_pcb *pcb)
{
    return (pcb->flags & TF_DEAD) != 0;
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
static struct wisp_netif *tcp_route(struct wisp_stack *s, const wisp_ipaddr_t *dst)
{
    struct wisp_netif *nif;
    for (nif = s->netifs; nif != NULL; nif = nif->next) {
        /* IPv4 only: IPv6 extends */
        if (wisp_ipaddr_is4(dst) && wisp_netif_ip4_addr(nif) != WISP_IP4_ANY && wisp_netif_ip4_addr(nif) == wisp_ipaddr_ip4(dst)) {
            return nif;
        }
    }
    return wisp_ip_route(s, dst);
}

/* RFC 9293 §3.7.1 / RFC 6691: the MSS we announce = MTU - 40, at most
 * WISP_TCP_MSS. */
uint16_t tcp_mss_for(struct wisp_stack *s, const wisp_ipaddr_t *dst)
{
    struct wisp_netif *nif = tcp_route(s, dst);
    uint32_t m = WISP_TCP_MSS;
    if (nif != NULL && nif->mtu > 40u && (uint32_t)nif->mtu - 40u < m) {
        m = (uint32_t)nif->mtu - 40u;
    }
    return (uint16_t)m;
}

uint16_t tcp_mss_ours(const struct wisp_tcp_pcb *pcb)
{
    uint16_t m = tcp_mss_for(pcb->c.stack, &pcb->remote_ip);
    return pcb->user_mss != 0u && pcb->user_mss < m ? pcb->user_mss : m; /* TCP_MAXSEG caps it */
}

void tcp_new_defaults(struct wisp_stack *s, struct wisp_tcp_pcb *pcb)
{
    memset(pcb, 0, sizeof(*pcb));
    pcb->c.stack = s;
    pcb->c.state = WISP_TCP_CLOSED;
    pcb->c.local_ip = wisp_ipaddr_any4(); /* IPv4 only: IPv6 extends (bind and connect set the family) */
    pcb->remote_ip = wisp_ipaddr_any4();
    pcb->c.cc_algo = (uint8_t)WISP_TCP_CC_DEFAULT;
    pcb->mss = TCP_DEFAULT_MSS;
    pcb->rto = WISP_TCP_RTO_INIT_MS;
    pcb->rcv_wnd = WISP_TCP_WND;
    pcb->rcv_buf = WISP_TCP_WND;
    pcb->snd_buf = WISP_TCP_SND_BUF;
    pcb->ssthresh = 0xFFFFFFFFu;
    pcb->keep_idle = WISP_TCP_KEEPIDLE_MS;
    pcb->keep_intvl = WISP_TCP_KEEPINTVL_MS;
    pcb->keep_cnt = (uint8_t)WISP_TCP_KEEPCNT;
    pcb->rcv_blk = tcp_rx_blk((uint16_t)WISP_TCP_MSS);
    pcb->last_rx_ms = wisp_now(s);
}

void tcp_link(struct wisp_stack *s, struct wisp_tcp_pcb *pcb)
{
    pcb->next = s->tcp.pcbs;
    s->tcp.pcbs = pcb;
    s->tcp.npcbs++;
}

uint16_t tcp_pcb_open(struct wisp_tcp_pcb *pcb, const struct tcp_tuple *t, uint32_t iss, uint32_t ts_off)
{
    uint16_t ours = tcp_mss_for(pcb->c.stack, &t->rip);
    pcb->c.local_ip = t->lip;
    pcb->c.local_port = t->lport;
    pcb->remote_ip = t->rip;
    pcb->remote_port = t->rport;
    /* RFC 9293 §3.4 / §3.10.1: SND.UNA = ISS, SND.NXT = ISS (+ 1 once the
     * SYN is out) */
    pcb->iss = iss;
    pcb->snd_una = iss;
    pcb->snd_nxt = iss;
    pcb->snd_lbb = iss + 1u;
    pcb->snd_sml = iss;
    pcb->recover = iss;
#if WISP_TCP_TIMESTAMPS
    pcb->ts_off = ts_off; /* RFC 7323 §5.4: the clock our SYN's TSval was read from */
#else
    (void)ts_off;
#endif
    pcb->rcv_blk = tcp_rx_blk(ours);
    return ours;
}

struct wisp_tcp_pcb *wisp_tcp_new(struct wisp_stack *s)
{
    struct wisp_tcp_pcb *pcb;
    WISP_CORE_ASSERT_OWNER(s);
    pcb = tcp_pcb_alloc(s);
    if (pcb == NULL) {
        return NULL;
    }
    tcp_new_defaults(s, pcb);
    tcp_link(s, pcb);
    return pcb;
}

void tcp_free_ooseq(struct wisp_tcp_pcb *pcb)
{
#if WISP_TCP_OOSEQ_POOL
    struct wisp_tcp_ooq *q = pcb->ooq;
    unsigned i;
    if (q != NULL) {
        for (i = 0; i < q->n; i++) {
            wisp_pbuf_free(q->e[i].p);
        }
        wisp_pool_free(&pcb->c.stack->pool[WISP_POOL_TCP_OOSEQ], q); /* back to the pool */
        pcb->ooq = NULL;
    }
#else
    (void)pcb; /* never holds a queue */
#endif
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
    pcb->tmr_on = 0; /* (the tick may still fire for it: it finds nothing) */
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

static bool tcp_port_taken(const struct wisp_stack *s, const struct wisp_tcp_pcb *self, const wisp_ipaddr_t *ip,
                           uint16_t port)
{
    const struct wisp_tcp_pcb *q;
    const struct wisp_tcp_listen *l;
    for (l = s->tcp.listens; l != NULL; l = l->next) {
        if (l->c.local_port == port && (wisp_ipaddr_is_any(ip) || tcp_ip_covers(&l->c.local_ip, ip))) {
            return true;
        }
    }
    for (q = s->tcp.pcbs; q != NULL; q = q->next) {
        if (q == self || q->c.local_port != port || (q->flags & TF_CLOSED)) {
            continue;
        }
        if (wisp_ipaddr_is_any(ip) || tcp_ip_covers(&q->c.local_ip, ip)) {
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
    return tcp_tw_uses(s, port, NULL);
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
    /* IPv4 only: IPv6 extends (wisp_port_select hashes IPv4 addresses) */
    return wisp_port_select(s, WISP_IP4_PROTO_TCP, t != NULL ? wisp_ipaddr_ip4(&t->lip) : WISP_IP4_ANY,
                            t != NULL ? wisp_ipaddr_ip4(&t->rip) : WISP_IP4_ANY, t != NULL ? t->rport : 0u,
                            tcp_port_free, NULL);
}

/* A connection or TIME-WAIT record with exactly this 4-tuple exists. */
static bool tcp_tuple_used(const struct wisp_stack *s, const struct wisp_tcp_pcb *self, const struct tcp_tuple *t)
{
    const struct wisp_tcp_pcb *q;
    for (q = s->tcp.pcbs; q != NULL; q = q->next) {
        if (q != self && q->c.state != WISP_TCP_CLOSED && q->c.local_port == t->lport && q->remote_port == t->rport &&
            wisp_ipaddr_eq(&q->c.local_ip, &t->lip) && wisp_ipaddr_eq(&q->remote_ip, &t->rip)) {
            return true;
        }
    }
    return tcp_tw_uses(s, t->lport, t);
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
    wisp_ipaddr_t a = wisp_ipaddr_any4(); /* IPv4 only: IPv6 extends (the unbound family) */

    WISP_CORE_ASSERT_OWNER(tcp_stack_of(pcb));
    if (pcb == NULL || tcp_is_listen(pcb)) {
        return WISP_ERR_VAL;
    }
    s = pcb->c.stack;
    if (pcb->c.state != WISP_TCP_CLOSED || pcb->c.local_port != 0) {
        return WISP_ERR_VAL;
    }
    if (ip != NULL && wisp_ipaddr_family(ip) != WISP_AF_NONE) {
        if (!wisp_ipaddr_is4(ip)) {
            return WISP_ERR_VAL; /* IPv4 only: IPv6 extends */
        }
        a = *ip;
        if (!wisp_ipaddr_is_any(&a) && !wisp_ip_is_local(s, &a) && !wisp_ip4_is_loopback(wisp_ipaddr_ip4(&a))) {
            return WISP_ERR_VAL; /* not one of our addresses */
        }
    }
    if (port == 0) {
        port = tcp_ephemeral_port(s, NULL);
        if (port == 0) {
            return WISP_ERR_USE;
        }
    } else if (tcp_port_taken(s, pcb, &a, port)) {
        return WISP_ERR_USE;
    }
    pcb->c.local_ip = a;
    pcb->c.local_port = port;
    return WISP_OK;
}

wisp_err_t wisp_tcp_connect(struct wisp_tcp_pcb *pcb, const wisp_ipaddr_t *ip, uint16_t port,
                            wisp_tcp_connected_fn fn)
{
    struct wisp_stack *s;
    struct wisp_netif *nif;
    struct tcp_tuple t;
    wisp_ip4_t dst;
    unsigned tries;

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
    if (ip == NULL || !wisp_ipaddr_is4(ip) || wisp_ipaddr_is_any(ip) || port == 0) {
        return WISP_ERR_VAL; /* IPv4 only: IPv6 extends */
    }
    dst = wisp_ipaddr_ip4(ip);
    /* RFC 1122 §4.2.3.10: no connections to broadcast or multicast.
     * IPv4 only: IPv6 extends */
    if (dst == WISP_IP4_BCAST || wisp_ip4_is_multicast(dst)) {
        return WISP_ERR_VAL;
    }
    nif = tcp_route(s, ip);
    if (nif == NULL) {
        return WISP_ERR_RTE;
    }
    if (wisp_ip4_is_bcast(nif, dst)) {
        return WISP_ERR_VAL;
    }
    t.lip = pcb->c.local_ip;
    if (wisp_ipaddr_is_any(&t.lip)) {
        /* RFC 1122 §4.2.3.7 / §3.3.4.3: the address of the interface the
         * route leaves by, fixed for the life of the connection. */
        wisp_ipaddr_set4(&t.lip, wisp_ip4_is_loopback(dst) ? dst : wisp_netif_ip4_addr(nif)); /* IPv4 only: IPv6 extends */
        if (wisp_ipaddr_is_any(&t.lip)) {
            return WISP_ERR_RTE;
        }
    }
    t.rip = *ip;
    t.rport = port;
    /* the bound port, or an ephemeral one (at most 16 tries at a 4-tuple
     * no connection or TIME-WAIT record uses) */
    t.lport = pcb->c.local_port;
    for (tries = 0;; tries++) {
        if (pcb->c.local_port == 0) {
            t.lport = tcp_ephemeral_port(s, &t);
        }
        if (t.lport != 0 && !tcp_tuple_used(s, pcb, &t)) {
            break;
        }
        if (t.lport == 0 || pcb->c.local_port != 0 || tries >= 15u) {
            return WISP_ERR_USE;
        }
    }

    pcb->connected = fn;
#if WISP_TCP_WND_SCALE
    pcb->rcv_wscale = tcp_rcv_wscale_ours();
#endif
    pcb->rcv_wnd = pcb->rcv_buf; /* SO_RCVBUF bounds the SYN's window too */
    (void)tcp_pcb_open(pcb, &t, tcp_isn(s, &t), tcp_ts_offset(s, &t));
    /* The window our SYN offers (RFC 7323 §2.2: unscaled), within the
     * receive budget; it is promised until the connection is synchronized
     * and never taken back: until the peer's SYN sets RCV.NXT, rcv_adv -
     * rcv_nxt holds it. */
    pcb->rcv_adv = pcb->rcv_nxt + tcp_syn_wnd(s, pcb->rcv_wnd, s->tcp.npcbs, pcb->rcv_blk);
    pcb->c.state = WISP_TCP_SYN_SENT;
    pcb->c.syn_rtx = 0;
    WISP_CTR_INC(s, TCP_CONNECT);
    /* A SYN the stack could not send (tcp_send_syn retries it soon) or one
     * lost on the way (the RTO resends it). */
    (void)tcp_send_syn(pcb); /* (stamps rtt_start when the SYN leaves) */
    pcb->snd_nxt = pcb->iss + 1u;
    pcb->flags |= TF_RTT; /* RFC 6298 §3: the SYN is timed (Karn: if never retransmitted) */
    tcp_rto_arm(pcb);
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
    uint32_t right, adv_room, thresh, buf;
    bool limited;
    WISP_CORE_ASSERT_OWNER(tcp_stack_of(pcb));
    if (pcb == NULL || tcp_is_listen(pcb) || pcb->c.state == WISP_TCP_CLOSED) {
        return;
    }
    pcb->rcv_wnd = (pcb->rcv_wnd >= pcb->rcv_buf || len > (uint32_t)pcb->rcv_buf - pcb->rcv_wnd) ? pcb->rcv_buf
                                                                                       : pcb->rcv_wnd + len;
    if (pcb->c.state != WISP_TCP_ESTABLISHED && pcb->c.state != WISP_TCP_FIN_WAIT_1 &&
        pcb->c.state != WISP_TCP_FIN_WAIT_2) {
        return; /* the peer sends no more data: no window update needed */
    }
    /* RFC 9293 §3.8.6.2.2 / RFC 1122 §4.2.3.3 (receiver SWS avoidance):
     * announce a larger window only when the right edge moves by
     * min(RCV.BUFF/2, MSS); send a pure update for it only when the
     * window the peer sees has fallen to half the buffer and the update
     * at least doubles it (else the ACK of the peer's next data carries
     * it): a zero or sub-MSS window is announced as soon as it opens by
     * an MSS (the sender may be blocked on it), a series of reads sends a
     * few updates, not one per read. */
    right = tcp_rcv_right(pcb, &limited, &buf); /* what the buffer and the receive budget allow */
    adv_room = pcb->rcv_adv - pcb->rcv_nxt;
    thresh = WISP_MAX(WISP_MIN(buf / 2u, (uint32_t)pcb->mss), adv_room); /* (tcp_wnd_field) */
    /* (an update that doubles the window leaves the peer at most half;
     * thresh > 0, so the edge moves right) */
    if (TCP_SEQ_GEQ(right, pcb->rcv_adv + thresh)) {
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
    (void)tcp_leave(s, pcb, prev);
}

wisp_err_t wisp_tcp_close(struct wisp_tcp_pcb *pcb)
{
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
        tcp_rst_close(pcb);
        return WISP_OK;
    }
    if (tcp_close_tx(pcb) == WISP_ERR_MEM) {
        return WISP_ERR_MEM; /* (other states send no FIN now) */
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
        err = tcp_close_tx(pcb);
        if (err != WISP_OK) {
            return err;
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
        pcb->c.keep_probes = 0;
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
        *ip = c->local_ip;
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
        *ip = l ? wisp_ipaddr_any4() : pcb->remote_ip; /* IPv4 only: IPv6 extends (the listener's family) */
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
    info->cc = c->cc_algo;
    if (c->state == WISP_TCP_LISTEN) {
        return;
    }
    info->mss = pcb->mss;
    info->snd_wscale = (uint8_t)TCP_SND_WS(pcb);
    info->rcv_wscale = (uint8_t)TCP_RCV_WS(pcb);
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
#if WISP_TCP_PCB_STATS
    info->retransmits = pcb->st_retransmits;
    info->fast_recoveries = pcb->st_fast_recoveries;
    info->timeouts = pcb->st_timeouts;
#endif
    /* Data bytes acknowledged / received (modulo 2^32, like a counter):
     * read off the sequence space, without the SYN and FIN it holds. */
    if (TCP_SEQ_GT(pcb->snd_una, pcb->iss)) {
        bool fin_acked = (pcb->flags & TF_FIN_QUEUED) && pcb->snd_una == pcb->snd_lbb;
        info->bytes_acked = pcb->snd_una - pcb->iss - 1u - (fin_acked ? 1u : 0u);
    }
    if (c->state >= WISP_TCP_SYN_RCVD) {
        bool fin_in = c->state == WISP_TCP_CLOSE_WAIT || c->state == WISP_TCP_CLOSING || c->state == WISP_TCP_LAST_ACK ||
                      c->state == WISP_TCP_TIME_WAIT;
        info->bytes_received = pcb->rcv_nxt - pcb->irs - 1u - (fin_in ? 1u : 0u);
    }
    info->ooseq_pbufs = pcb->ooq != NULL ? pcb->ooq->bufs : 0u;
    info->snd_blocks = pcb->snd_blk;
    info->rtx_backoff = (c->state == WISP_TCP_SYN_SENT || c->state == WISP_TCP_SYN_RCVD) ? pcb->c.syn_rtx : pcb->nrtx;
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

static WISP_NOINLINE uint32_t tcp_clamp_buf(uint32_t v, uint32_t max)
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
        uint32_t held = pcb->rcv_buf > pcb->rcv_wnd ? (uint32_t)pcb->rcv_buf - pcb->rcv_wnd : 0u;
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
        if (pcb->snd_una - pcb->iss <= 1u && pcb->snd_nxt - pcb->snd_una <= 1u) { /* nothing sent or acked beyond the SYN */
            pcb->cwnd = tcp_initial_cwnd(tcp_seg_max(pcb)); /* tcp_cc.c */
        }
    }
}

/* ------------------------------------------------- init / deinit */

void wisp_tcp_init(struct wisp_stack *s)
{
    memset(&s->tcp, 0, sizeof(s->tcp));
    /* RFC 6528 §3: the secret key -- wisp_stack_init derives it next. */
    s->tcp.chal_tokens = TCP_CHALLENGE_PER_S * 1000u;
    s->tcp.chal_last = wisp_now(s);
    tcp_hindex_reset(s); /* (its bucket seed: wisp_stack_init, with the key) */
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
    tcp_tw_reset(s);
    tcp_hindex_reset(s);
    wisp_timer_cancel(s, &s->tcp.synq_tmr);
    wisp_timer_cancel(s, &s->tcp.wake_tmr);
    wisp_timer_cancel(s, &s->tcp.tick_tmr);
}

#else
typedef int wisp_tcp_disabled_t; /* ISO C forbids an empty translation unit */
#endif /* WISP_TCP */
