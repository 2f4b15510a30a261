/**
 * @file tcp_testlib.h
 * Segment-level TCP test helpers (header-only, static): the test plays the
 * peer 198.18.0.1 against one tu_env stack (198.18.0.2). It builds TCP
 * segments with options (correct IP and TCP checksums), parses every
 * segment the stack emits (checksums verified), records the application
 * callbacks (recv, sent, err, accept, connected) and brings connections to
 * canned states (ESTABLISHED by an active or a passive open, with chosen
 * peer options).
 */
#ifndef WISP_TCP_TESTLIB_H
#define WISP_TCP_TESTLIB_H

#include "testutil.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TT_ETH WISP_ETH_HLEN
#define TT_IPH WISP_IP4_HLEN
#define TT_FIN WISP_TCP_FLAG_FIN
#define TT_SYN WISP_TCP_FLAG_SYN
#define TT_RST WISP_TCP_FLAG_RST
#define TT_PSH WISP_TCP_FLAG_PSH
#define TT_ACK WISP_TCP_FLAG_ACK

/** Options the peer puts on its segments. */
struct tt_opts {
    uint16_t mss;        /**< 0 = none (on SYNs) */
    uint8_t ws;          /**< 0xff = none (on SYNs) */
    bool sackp;          /**< SACK-permitted (on SYNs) */
    bool ts;             /**< timestamps */
    uint32_t tsval, tsecr;
    uint8_t nsack;       /**< SACK blocks */
    uint32_t sack[4][2];
    const uint8_t *raw;  /**< raw option bytes instead of all the above */
    uint8_t rawlen;
};

/** A segment the stack sent, parsed. */
struct tt_seg {
    uint16_t sport, dport;
    uint32_t seq, ack;
    uint8_t flags;
    uint16_t wnd;
    uint8_t hlen;
    uint8_t tos, ttl;
    uint16_t mss;        /**< 0 = absent */
    uint8_t ws;          /**< 0xff = absent */
    bool sackp, ts;
    uint32_t tsval, tsecr;
    uint8_t nsack;
    uint32_t sack[4][2];
    uint16_t len;
    uint8_t data[2048];
};

/** A test: the stack, the peer's view of one connection, and what the
 *  application callbacks saw. */
struct tt {
    struct tu_env *e;
    struct wisp_tcp_pcb *pcb;     /**< the stack's connection */
    struct wisp_tcp_pcb *lpcb;    /**< a listener */
    uint16_t port;                /**< the stack's port */
    uint16_t pport;               /**< the peer's port */
    uint32_t snd;                 /**< peer: next sequence number to send */
    uint32_t rcv;                 /**< peer: next sequence number expected */
    uint32_t iss;                 /**< the stack's ISS */
    struct tt_opts o;             /**< peer options on every segment */
    uint32_t clock;               /**< peer TSval clock */
    uint32_t last_tsval;          /**< last TSval the stack sent */
    uint16_t wnd;                 /**< peer's advertised window field */
    /* application side */
    uint8_t *rx;                  /**< received bytes (malloc'd 1 MB) */
    uint32_t rx_len;
    unsigned recv_calls, eof;
    bool refuse;                  /**< recv callback returns WISP_ERR_MEM */
    bool no_recved;               /**< do not call wisp_tcp_recved */
    bool close_on_eof;
    uint32_t sent_total;
    unsigned sent_calls;
    bool err_called;
    wisp_err_t err;
    unsigned accepts, connects;
    wisp_err_t accept_ret;
    unsigned polls;
};

static uint8_t tt_frame_buf[70000];

static inline void tt_rec_err(void *arg, wisp_err_t err)
{
    struct tt *t = (struct tt *)arg;
    t->err_called = true;
    t->err = err;
    t->pcb = NULL;
}

static inline wisp_err_t tt_rec_recv(void *arg, struct wisp_tcp_pcb *pcb, struct wisp_pbuf *p, wisp_err_t err)
{
    struct tt *t = (struct tt *)arg;
    (void)err;
    t->recv_calls++;
    if (p == NULL) {
        t->eof++;
        if (t->close_on_eof) {
            assert_int_equal(wisp_tcp_close(pcb), WISP_OK);
            t->pcb = NULL;
        }
        return WISP_OK;
    }
    if (t->refuse) {
        return WISP_ERR_MEM;
    }
    assert_true(t->rx_len + p->tot_len <= (1u << 20));
    t->rx_len += wisp_pbuf_copy_out(p, t->rx + t->rx_len, p->tot_len, 0);
    if (!t->no_recved) {
        wisp_tcp_recved(pcb, p->tot_len);
    }
    wisp_pbuf_free(p);
    return WISP_OK;
}

static inline wisp_err_t tt_rec_sent(void *arg, struct wisp_tcp_pcb *pcb, uint32_t len)
{
    struct tt *t = (struct tt *)arg;
    (void)pcb;
    t->sent_total += len;
    t->sent_calls++;
    return WISP_OK;
}

static inline wisp_err_t tt_rec_poll(void *arg, struct wisp_tcp_pcb *pcb)
{
    (void)pcb;
    ((struct tt *)arg)->polls++;
    return WISP_OK;
}

static inline void tt_callbacks(struct tt *t, struct wisp_tcp_pcb *pcb)
{
    wisp_tcp_arg(pcb, t);
    wisp_tcp_recv(pcb, tt_rec_recv);
    wisp_tcp_sent(pcb, tt_rec_sent);
    wisp_tcp_err(pcb, tt_rec_err);
}

static inline wisp_err_t tt_rec_accept(void *arg, struct wisp_tcp_pcb *newpcb, wisp_err_t err)
{
    struct tt *t = (struct tt *)arg;
    (void)err;
    t->accepts++;
    if (t->accept_ret != WISP_OK) {
        return t->accept_ret;
    }
    t->pcb = newpcb;
    tt_callbacks(t, newpcb);
    return WISP_OK;
}

static inline wisp_err_t tt_rec_connected(void *arg, struct wisp_tcp_pcb *pcb, wisp_err_t err)
{
    struct tt *t = (struct tt *)arg;
    (void)pcb;
    assert_int_equal(err, WISP_OK);
    t->connects++;
    return WISP_OK;
}

/** New test: an environment with the peer in the ARP cache. */
static inline void tt_init(struct tt *t)
{
    memset(t, 0, sizeof(*t));
    t->e = tu_env_new(42);
    tu_arp_peer(t->e);
    t->rx = (uint8_t *)malloc(1u << 20);
    assert_non_null(t->rx);
    t->port = 8080;
    t->pport = 40000;
    t->snd = 0x10000000u;
    t->clock = 5000;
    t->wnd = 65535;
    t->o.ws = 0xff;
}

/** End: the connection must already be gone (or is closed here), then the
 *  leak check. */
static inline void tt_done(struct tt *t)
{
    if (t->pcb != NULL) {
        wisp_tcp_abort(t->pcb);
        t->pcb = NULL;
    }
    if (t->lpcb != NULL) {
        wisp_tcp_close(t->lpcb);
        t->lpcb = NULL;
    }
    free(t->rx);
    tu_env_free(t->e);
}

/* ------------------------------------------------------------ building */

static inline uint8_t tt_build_opts(const struct tt_opts *o, bool syn, uint8_t *b)
{
    uint8_t n = 0, i;
    if (o->raw != NULL) {
        memcpy(b, o->raw, o->rawlen);
        n = o->rawlen;
        while (n % 4u) {
            b[n++] = 0; /* EOL padding */
        }
        return n;
    }
    if (syn && o->mss) {
        b[n++] = 2;
        b[n++] = 4;
        wisp_wr16(b + n, o->mss);
        n += 2;
    }
    if (syn && o->ws != 0xff) {
        b[n++] = 1;
        b[n++] = 3;
        b[n++] = 3;
        b[n++] = o->ws;
    }
    if (syn && o->sackp) {
        b[n++] = 1;
        b[n++] = 1;
        b[n++] = 4;
        b[n++] = 2;
    }
    if (o->ts) {
        b[n++] = 1;
        b[n++] = 1;
        b[n++] = 8;
        b[n++] = 10;
        wisp_wr32(b + n, o->tsval);
        wisp_wr32(b + n + 4, o->tsecr);
        n += 8;
    }
    if (!syn && o->nsack) {
        b[n++] = 1;
        b[n++] = 1;
        b[n++] = 5;
        b[n++] = (uint8_t)(2u + 8u * o->nsack);
        for (i = 0; i < o->nsack; i++) {
            wisp_wr32(b + n, o->sack[i][0]);
            wisp_wr32(b + n + 4, o->sack[i][1]);
            n += 8;
        }
    }
    return n;
}

/** Inject a segment from the peer (any ports/flags/options). */
static inline void tt_inject(struct tt *t, uint16_t sport, uint16_t dport, uint32_t seq, uint32_t ack, uint8_t flags,
                             uint16_t wnd, const struct tt_opts *o, const void *data, uint16_t len)
{
    uint8_t *f = tt_frame_buf;
    uint8_t *h = f + TT_ETH + TT_IPH;
    uint8_t optlen;
    uint16_t tlen, sum;
    static const struct tt_opts none = { 0, 0xff, false, false, 0, 0, 0, { { 0, 0 } }, NULL, 0 };
    if (o == NULL) {
        o = &none;
    }
    memset(h, 0, WISP_TCP_MAX_HLEN);
    optlen = tt_build_opts(o, (flags & TT_SYN) != 0, h + WISP_TCP_HLEN);
    tlen = (uint16_t)(WISP_TCP_HLEN + optlen + len);
    tu_eth(f, tu_mac_self, tu_mac_peer, WISP_ETHTYPE_IP4);
    tu_ip4(f + TT_ETH, tu_ip_peer(), tu_ip_self(), WISP_IP4_PROTO_TCP, tlen, 0x1111, 0, 64);
    wisp_wr16(h, sport);
    wisp_wr16(h + WISP_TCP_OFF_DPORT, dport);
    wisp_wr32(h + WISP_TCP_OFF_SEQ, seq);
    wisp_wr32(h + WISP_TCP_OFF_ACK, ack);
    h[WISP_TCP_OFF_HLEN] = (uint8_t)(((WISP_TCP_HLEN + optlen) / 4u) << 4);
    h[WISP_TCP_OFF_FLAGS] = flags;
    wisp_wr16(h + WISP_TCP_OFF_WND, wnd);
    if (len > 0 && data != NULL) {
        memcpy(h + WISP_TCP_HLEN + optlen, data, len);
    }
    sum = wisp_chksum_add(wisp_chksum_pseudo4(tu_ip_peer(), tu_ip_self(), WISP_IP4_PROTO_TCP, tlen),
                          wisp_chksum_sum(h, tlen));
    wisp_wr16(h + WISP_TCP_OFF_CSUM, (uint16_t)~sum);
    assert_true(tu_inject(t->e, f, TT_ETH + TT_IPH + tlen));
}

/** Inject a segment of the test connection: current peer options (TSval
 *  from the peer clock, TSecr = the stack's last TSval). */
static inline void tt_send(struct tt *t, uint8_t flags, uint32_t seq, uint32_t ack, const void *data, uint16_t len)
{
    struct tt_opts o = t->o;
    o.tsval = t->clock;
    o.tsecr = t->last_tsval;
    tt_inject(t, t->pport, t->port, seq, ack, flags, t->wnd, &o, data, len);
}

/** Send data in order (advances t->snd) with ACK of t->rcv. */
static inline void tt_data(struct tt *t, const void *data, uint16_t len)
{
    tt_send(t, TT_ACK | TT_PSH, t->snd, t->rcv, data, len);
    t->snd += len;
}

/** A pure ACK of t->rcv. */
static inline void tt_ack(struct tt *t)
{
    tt_send(t, TT_ACK, t->snd, t->rcv, NULL, 0);
}

/* ------------------------------------------------------------- parsing */

static inline void tt_parse_opts(struct tt_seg *g, const uint8_t *o, unsigned n)
{
    unsigned i = 0;
    while (i < n) {
        unsigned len;
        if (o[i] == 0) {
            break;
        }
        if (o[i] == 1) {
            i++;
            continue;
        }
        assert_true(i + 1 < n);
        len = o[i + 1];
        assert_true(len >= 2 && i + len <= n);
        switch (o[i]) {
        case 2:
            assert_int_equal(len, 4);
            g->mss = wisp_rd16(o + i + 2);
            break;
        case 3:
            assert_int_equal(len, 3);
            g->ws = o[i + 2];
            break;
        case 4:
            assert_int_equal(len, 2);
            g->sackp = true;
            break;
        case 5:
            assert_int_equal((len - 2) % 8, 0);
            for (g->nsack = 0; g->nsack < (len - 2) / 8; g->nsack++) {
                g->sack[g->nsack][0] = wisp_rd32(o + i + 2 + 8 * g->nsack);
                g->sack[g->nsack][1] = wisp_rd32(o + i + 6 + 8 * g->nsack);
            }
            break;
        case 8:
            assert_int_equal(len, 10);
            g->ts = true;
            g->tsval = wisp_rd32(o + i + 2);
            g->tsecr = wisp_rd32(o + i + 6);
            break;
        default:
            fail_msg("unexpected option kind %u", o[i]);
        }
        i += len;
    }
}

/** Pop the next TCP segment the stack sent (other frames are skipped);
 *  false when none. Checksums are verified. */
static inline bool tt_pop(struct tt *t, struct tt_seg *g)
{
    static uint8_t f[70000];
    int n;
    while ((n = tu_pop(t->e, f, sizeof(f))) >= 0) {
        const uint8_t *ip = f + TT_ETH, *h;
        uint16_t tot, tlen;
        if (n < (int)(TT_ETH + TT_IPH) || wisp_rd16(f + WISP_ETH_OFF_TYPE) != WISP_ETHTYPE_IP4 ||
            ip[WISP_IP4_OFF_PROTO] != WISP_IP4_PROTO_TCP) {
            continue;
        }
        assert_int_equal(wisp_chksum_sum(ip, WISP_IP4_HLEN), 0xFFFF);
        tot = wisp_rd16(ip + WISP_IP4_OFF_LEN);
        assert_true(tot <= n - TT_ETH);
        assert_true(wisp_ip4_rd(ip + WISP_IP4_OFF_SRC) == tu_ip_self());
        assert_true(wisp_ip4_rd(ip + WISP_IP4_OFF_DST) == tu_ip_peer());
        h = ip + WISP_IP4_HLEN;
        tlen = (uint16_t)(tot - WISP_IP4_HLEN);
        assert_int_equal(wisp_chksum_add(wisp_chksum_pseudo4(tu_ip_self(), tu_ip_peer(), WISP_IP4_PROTO_TCP, tlen),
                                         wisp_chksum_sum(h, tlen)),
                         0xFFFF);
        memset(g, 0, sizeof(*g));
        g->ws = 0xff;
        g->tos = ip[WISP_IP4_OFF_TOS];
        g->ttl = ip[WISP_IP4_OFF_TTL];
        g->sport = wisp_rd16(h);
        g->dport = wisp_rd16(h + WISP_TCP_OFF_DPORT);
        g->seq = wisp_rd32(h + WISP_TCP_OFF_SEQ);
        g->ack = wisp_rd32(h + WISP_TCP_OFF_ACK);
        g->hlen = (uint8_t)((h[WISP_TCP_OFF_HLEN] >> 4) * 4u);
        g->flags = h[WISP_TCP_OFF_FLAGS];
        g->wnd = wisp_rd16(h + WISP_TCP_OFF_WND);
        assert_true(g->hlen >= WISP_TCP_HLEN && g->hlen <= tlen);
        tt_parse_opts(g, h + WISP_TCP_HLEN, g->hlen - WISP_TCP_HLEN);
        g->len = (uint16_t)(tlen - g->hlen);
        assert_true(g->len <= sizeof(g->data));
        memcpy(g->data, h + g->hlen, g->len);
        if (g->ts) {
            t->last_tsval = g->tsval;
        }
        return true;
    }
    return false;
}

/** Connection PCBs one connection that entered TIME-WAIT still holds:
 *  none with compact records (WISP_TCP_TW_COMPACT 1), its own for 2 MSL
 *  when TIME-WAIT stays in the PCB (0). */
#define TT_TW_PCB (WISP_TCP_TW_COMPACT ? 0 : 1)

/** Pop a segment that must exist. */
static inline void tt_expect(struct tt *t, struct tt_seg *g)
{
    if (!tt_pop(t, g)) {
        fail_msg("expected a segment from the stack, got none");
    }
}

/** No TCP segment pending. */
static inline void tt_expect_none(struct tt *t)
{
    struct tt_seg g;
    if (tt_pop(t, &g)) {
        fail_msg("unexpected segment flags 0x%02x seq %u ack %u len %u", g.flags, (unsigned)g.seq, (unsigned)g.ack,
                 (unsigned)g.len);
    }
}

/** Pop a pure ACK (no data, only ACK) acknowledging ack. */
static inline void tt_expect_ack(struct tt *t, uint32_t ack)
{
    struct tt_seg g;
    tt_expect(t, &g);
    assert_int_equal(g.flags & (TT_SYN | TT_FIN | TT_RST | TT_ACK), TT_ACK);
    assert_int_equal(g.len, 0);
    assert_int_equal(g.ack, ack);
}

/* --------------------------------------------------------- canned states */

/** Listen on t->port with the recording accept callback. */
static inline void tt_listen(struct tt *t, uint8_t backlog)
{
    struct wisp_tcp_pcb *p = wisp_tcp_new(t->e->s);
    wisp_err_t err;
    assert_non_null(p);
    assert_int_equal(wisp_tcp_bind(p, NULL, t->port), WISP_OK);
    t->lpcb = wisp_tcp_listen(p, backlog, &err);
    assert_non_null(t->lpcb);
    assert_int_equal(err, WISP_OK);
    wisp_tcp_arg(t->lpcb, t);
    wisp_tcp_accept(t->lpcb, tt_rec_accept);
}

/** Passive open with the peer options in t->o: SYN, expect SYN-ACK, ACK.
 *  The accepted PCB is in t->pcb (ESTABLISHED). Returns the SYN-ACK. */
static inline struct tt_seg tt_open_passive(struct tt *t)
{
    struct tt_seg g;
    memset(&g, 0, sizeof(g)); /* (gcc cannot tell that tt_expect fills it) */
    if (t->lpcb == NULL) {
        tt_listen(t, 4);
    }
    tt_send(t, TT_SYN, t->snd, 0, NULL, 0);
    tt_expect(t, &g);
    assert_int_equal(g.flags, TT_SYN | TT_ACK);
    assert_int_equal(g.ack, t->snd + 1u);
    t->snd += 1u;
    t->iss = g.seq;
    t->rcv = g.seq + 1u;
    t->clock += 1;
    tt_ack(t);
    assert_non_null(t->pcb);
    assert_int_equal(wisp_tcp_state(t->pcb), WISP_TCP_ESTABLISHED);
    return g;
}

/** Active open to the peer (t->pport) with the peer answering with t->o.
 *  Returns the stack's SYN. */
static inline struct tt_seg tt_open_active(struct tt *t)
{
    struct tt_seg g, a;
    wisp_ipaddr_t dst = wisp_ipaddr4(tu_ip_peer());
    t->pcb = wisp_tcp_new(t->e->s);
    assert_non_null(t->pcb);
    tt_callbacks(t, t->pcb);
    assert_int_equal(wisp_tcp_bind(t->pcb, NULL, t->port), WISP_OK);
    assert_int_equal(wisp_tcp_connect(t->pcb, &dst, t->pport, tt_rec_connected), WISP_OK);
    tt_expect(t, &g);
    assert_int_equal(g.flags, TT_SYN);
    assert_int_equal(g.sport, t->port);
    assert_int_equal(g.dport, t->pport);
    t->iss = g.seq;
    t->rcv = g.seq + 1u;
    tt_send(t, TT_SYN | TT_ACK, t->snd, t->rcv, NULL, 0);
    t->snd += 1u;
    tt_expect(t, &a);
    assert_int_equal(a.flags, TT_ACK);
    assert_int_equal(a.ack, t->snd);
    assert_int_equal(t->connects, 1);
    assert_int_equal(wisp_tcp_state(t->pcb), WISP_TCP_ESTABLISHED);
    return g;
}

/** Fill buf with a position-dependent pattern. */
static inline void tt_pattern(uint8_t *buf, uint32_t len, uint32_t base)
{
    uint32_t i;
    for (i = 0; i < len; i++) {
        buf[i] = (uint8_t)((base + i) * 7u + ((base + i) >> 8));
    }
}

#endif /* WISP_TCP_TESTLIB_H */
