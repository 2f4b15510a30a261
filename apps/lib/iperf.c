/**
 * @file iperf.c
 * iperf 2 compatible server (TCP and UDP) and client on the raw API. See
 * iperf.h for the wire format, the accounting and the choices made.
 * Portable: no stdio, no allocation, all state in the caller's structs.
 */
#include "iperf.h"

/* Sender states. */
#define TX_FREE 0u
#define TX_CONNECTING 1u
#define TX_SENDING 2u
#define TX_SHUT 3u       /* FIN queued: waiting for the ACKs and the peer's FIN */
#define TX_DONE 4u

/* UDP session states. */
#define SESS_FREE 0u
#define SESS_RUN 1u
#define SESS_DONE 2u

/* UDP client phases. */
#define UC_SEND 0u
#define UC_FIN 1u
#define UC_DONE 2u

/* iperf 2.1.8's version words (version_u = major.minor, version_l =
 * patch.release-kind); see iperf.h. */
#define IPERF_VERSION_U 0x00020001u
#define IPERF_VERSION_L 0x00080003u

/* Most datagrams one timer turn of the UDP client sends (bounds a burst
 * after a late timer). */
#define UC_BURST 64u

/* The stream pattern: the ASCII digits repeated; a write of up to
 * PATTERN_WINDOW bytes starts at offset (stream offset mod 10). */
#define P10 "0123456789"
#define P100 P10 P10 P10 P10 P10 P10 P10 P10 P10 P10
#define PATTERN_WINDOW 1000u
static const char pattern[] = P100 P100 P100 P100 P100 P100 P100 P100 P100 P100 P10;
WISP_STATIC_ASSERT(iperf_pattern_len, sizeof(pattern) == PATTERN_WINDOW + 10u + 1u);

/* Headroom of a UDP datagram we build: link, IP and UDP headers. */
#define UDP_HEADROOM ((enum wisp_pbuf_layer)(WISP_LAYER_IP + WISP_UDP_HLEN))

static uint64_t clock_us(struct wisp_stack *s, wisp_iperf_clock_fn fn, void *ctx)
{
    if (fn != NULL) {
        return fn(ctx);
    }
    return (uint64_t)wisp_now(s) * 1000u;
}

static uint32_t min_u32(uint32_t a, uint32_t b)
{
    return a < b ? a : b;
}

/* ---------------------------------------------------------- headers */

/* The client header (iperf 2.1 client_hdr_v1 + extension), 60 bytes:
 * flags, numThreads, mPort, mBufLen, mWinBand, mAmount; type, length,
 * flags, version_u, version_l, reserved, mRate, mUDPRateUnits, mRealtime.
 * udp: 16 more bytes of UDP test fields (zero) and the SEQNO64B flag. */
static unsigned build_client_hdr(uint8_t *h, bool udp, const struct wisp_iperf_client_cfg *cfg, uint16_t port)
{
    unsigned len = udp ? WISP_IPERF_UDP_CLIENT_HDR_LEN : WISP_IPERF_CLIENT_HDR_LEN;
    uint32_t flags = WISP_IPERF_HDR_EXTEND | WISP_IPERF_HDR_LEN_BIT | ((len << 1) & WISP_IPERF_HDR_LEN_MASK);
    int32_t amount;

    if (udp) {
        flags |= WISP_IPERF_HDR_SEQNO64B;
    }
    if (cfg->bytes != 0) {
        amount = cfg->bytes > 0x7FFFFFFFu ? 0x7FFFFFFF : (int32_t)cfg->bytes;
    } else {
        amount = -(int32_t)(cfg->time_ms / 10u);   /* units of 10 ms, negative = time */
    }
    memset(h, 0, len);
    wisp_wr32(h + 0, flags);
    wisp_wr32(h + 4, 1u);                  /* numThreads */
    wisp_wr32(h + 8, port);                /* mPort: where -r/-d would be answered */
    wisp_wr32(h + 20, (uint32_t)amount);
    wisp_wr32(h + 36, IPERF_VERSION_U);
    wisp_wr32(h + 40, IPERF_VERSION_L);
    if (udp) {
        wisp_wr32(h + 48, (uint32_t)(cfg->rate_bps > 0xFFFFFFFFu ? 0xFFFFFFFFu : cfg->rate_bps));   /* mRate */
    }
    return len;
}

bool wisp_iperf_parse_report(const uint8_t *buf, size_t len, struct wisp_iperf_udp_report *r)
{
    const uint8_t *h = buf + WISP_IPERF_UDP_HDR_LEN;
    uint32_t jit_s, jit_us;

    if (buf == NULL || r == NULL || len < WISP_IPERF_UDP_HDR_LEN + 40u) {
        return false;
    }
    memset(r, 0, sizeof(*r));
    r->flags = wisp_rd32(h);
    if ((r->flags & WISP_IPERF_HDR_VERSION1) == 0) {
        return false;
    }
    r->bytes = ((uint64_t)wisp_rd32(h + 4) << 32) | wisp_rd32(h + 8);
    r->duration_us = (uint64_t)wisp_rd32(h + 12) * 1000000u + wisp_rd32(h + 16) % 1000000u;
    r->lost = wisp_rd32(h + 20);
    r->out_of_order = wisp_rd32(h + 24);
    r->datagrams = wisp_rd32(h + 28);
    jit_s = wisp_rd32(h + 32);
    jit_us = wisp_rd32(h + 36);
    r->jitter_us = jit_s > 4000u ? 0xFFFFFFFFu : jit_s * 1000000u + jit_us % 1000000u;
    if ((r->flags & WISP_IPERF_HDR_SEQNO64B) != 0 && len >= WISP_IPERF_SERVER_REPORT_LEN) {
        r->lost |= (uint64_t)wisp_rd32(buf + 116) << 32;
        r->out_of_order |= (uint64_t)wisp_rd32(buf + 120) << 32;
        r->datagrams |= (uint64_t)wisp_rd32(buf + 124) << 32;
    }
    return true;
}

void wisp_iperf_build_report(uint8_t *buf, const struct wisp_iperf_udp_report *r, bool seq64)
{
    uint8_t *h = buf + WISP_IPERF_UDP_HDR_LEN;

    memset(buf, 0, WISP_IPERF_SERVER_REPORT_LEN);
    wisp_wr32(h, WISP_IPERF_HDR_VERSION1 | (seq64 ? WISP_IPERF_HDR_SEQNO64B : 0u));
    wisp_wr32(h + 4, (uint32_t)(r->bytes >> 32));
    wisp_wr32(h + 8, (uint32_t)r->bytes);
    wisp_wr32(h + 12, (uint32_t)(r->duration_us / 1000000u));
    wisp_wr32(h + 16, (uint32_t)(r->duration_us % 1000000u));
    wisp_wr32(h + 20, (uint32_t)r->lost);
    wisp_wr32(h + 24, (uint32_t)r->out_of_order);
    wisp_wr32(h + 28, (uint32_t)r->datagrams);
    wisp_wr32(h + 32, r->jitter_us / 1000000u);
    wisp_wr32(h + 36, r->jitter_us % 1000000u);
    if (seq64) {
        wisp_wr32(buf + 116, (uint32_t)(r->lost >> 32));
        wisp_wr32(buf + 120, (uint32_t)(r->out_of_order >> 32));
        wisp_wr32(buf + 124, (uint32_t)(r->datagrams >> 32));
    }
}

/* ------------------------------------------------------- TCP sender
 * Our client's stream, and the server's -r/-d stream back. Writes the
 * header (if any), then the pattern, for tx->total bytes or until
 * tx->end_us; then shuts down its direction and waits for every byte to be
 * acknowledged and for the peer's FIN (at most WISP_IPERF_LINGER_MS). */

static uint64_t tx_now(struct wisp_iperf_tx *tx)
{
    return clock_us(tx->stack, tx->clock, tx->clock_ctx);
}

static struct wisp_iperf_tx *tx_of_timer(struct wisp_timer *t)
{
    return (struct wisp_iperf_tx *)(void *)((uint8_t *)t - offsetof(struct wisp_iperf_tx, tmr));
}

static void tx_timer(struct wisp_stack *s, struct wisp_timer *t);
static wisp_err_t tx_start(struct wisp_iperf_tx *tx, struct wisp_stack *s, const wisp_ipaddr_t *ip, uint16_t port);
/* A refused reverse connect is tried again this many times, this far apart. */
#define TX_REFUSED_RETRIES 10u
#define TX_REFUSED_DELAY_MS 50u

/* The end: release the PCB (close, or abort when not ok) and tell the
 * owner. Returns WISP_ERR_ABRT when the PCB was aborted (a callback of it
 * must then return that), else WISP_OK. */
static wisp_err_t tx_finish(struct wisp_iperf_tx *tx, bool ok, wisp_err_t err)
{
    wisp_err_t ret = WISP_OK;

    if (tx->state == TX_DONE || tx->state == TX_FREE) {
        return WISP_OK;
    }
    wisp_timer_cancel(tx->stack, &tx->tmr);
    tx->state = TX_DONE;
    tx->res.ok = ok;
    tx->res.err = ok ? WISP_OK : (err != WISP_OK ? err : WISP_ERR_ABRT);
    tx->res.bytes = tx->acked;
    if (tx->t_conn != 0) {
        uint64_t t1 = tx->t_last != 0 ? tx->t_last : tx_now(tx);
        tx->res.duration_us = t1 > tx->t_conn ? t1 - tx->t_conn : 0;
    }
    if (tx->pcb != NULL) {
        struct wisp_tcp_pcb *pcb = tx->pcb;
        tx->pcb = NULL;
        wisp_tcp_arg(pcb, NULL);
        if (!ok || wisp_tcp_close(pcb) != WISP_OK) {
            wisp_tcp_abort(pcb);
            ret = WISP_ERR_ABRT;
        }
    }
    if (tx->finished != NULL) {
        tx->finished(tx);
    }
    return ret;
}

/* Done when everything sent is acknowledged and the peer closed too. */
static wisp_err_t tx_check_done(struct wisp_iperf_tx *tx)
{
    if (tx->state == TX_SHUT && tx->peer_closed && tx->acked >= tx->written) {
        return tx_finish(tx, true, WISP_OK);
    }
    return WISP_OK;
}

static bool tx_out_of_data(struct wisp_iperf_tx *tx, uint64_t now)
{
    if (tx->total != 0) {
        return tx->written >= tx->total;
    }
    return now >= tx->end_us;
}

/* Queue as much as the send buffer takes; FIN once the test is over.
 * in_input: from a callback of segment processing (the stack sends by
 * itself afterwards); else wisp_tcp_output is called here. Returns
 * WISP_ERR_ABRT when the PCB was aborted. */
static wisp_err_t tx_pump(struct wisp_iperf_tx *tx, bool in_input)
{
    unsigned guard = 0;
    uint64_t now;
    wisp_err_t err = WISP_OK;

    if (tx->pcb == NULL || tx->state != TX_SENDING) {
        return WISP_OK;
    }
    now = tx_now(tx);
    while (!tx_out_of_data(tx, now) && guard++ < 512u) {
        uint32_t room = wisp_tcp_sndbuf(tx->pcb);
        const void *src;
        uint32_t n;

        if (room == 0) {
            break;
        }
        if (tx->written < tx->hdr_len) {
            src = tx->hdr + tx->written;
            n = (uint32_t)(tx->hdr_len - tx->written);
        } else {
            src = pattern + (tx->written % 10u);
            n = tx->wlen;
        }
        n = min_u32(n, room);
        if (tx->total != 0 && tx->total - tx->written < n) {
            n = (uint32_t)(tx->total - tx->written);
        }
        err = wisp_tcp_write(tx->pcb, src, n, WISP_TCP_WRITE_COPY | WISP_TCP_WRITE_MORE);
        if (err == WISP_ERR_MEM) {
            err = WISP_OK;
            break;   /* the sent or poll callback retries */
        }
        if (err != WISP_OK) {
            return tx_finish(tx, false, err);
        }
        tx->written += n;
    }
    if (tx_out_of_data(tx, now)) {
        err = wisp_tcp_shutdown(tx->pcb, false, true);
        if (err == WISP_OK) {
            tx->state = TX_SHUT;
            wisp_timer_arm(tx->stack, &tx->tmr, WISP_IPERF_LINGER_MS, tx_timer);
        } else if (err != WISP_ERR_MEM) {
            return tx_finish(tx, false, err);
        }
    }
    if (!in_input && tx->pcb != NULL) {
        (void)wisp_tcp_output(tx->pcb);
    }
    return WISP_OK;
}

/* Sending time over (TX_SENDING), or the linger limit (TX_SHUT). */
static void tx_timer(struct wisp_stack *s, struct wisp_timer *t)
{
    struct wisp_iperf_tx *tx = tx_of_timer(t);
    WISP_UNUSED(s);
    if (tx->state == TX_SENDING) {
        (void)tx_pump(tx, false);
        if (tx->state == TX_SENDING) {
            /* FIN not queued yet (no memory): try again soon. */
            wisp_timer_arm(tx->stack, &tx->tmr, 10u, tx_timer);
        }
    } else if (tx->state == TX_SHUT) {
        /* The peer never closed: fine when it has every byte. */
        (void)tx_finish(tx, tx->acked >= tx->written, WISP_ERR_TIMEOUT);
    } else if (tx->state == TX_CONNECTING && tx->pcb == NULL) {
        /* a refused reverse connect, tried again (tx_err) */
        wisp_ipaddr_t ip = tx->res.peer_ip;
        wisp_err_t err = tx_start(tx, tx->stack, &ip, tx->res.peer_port);
        if (err != WISP_OK) {
            tx->state = TX_CONNECTING;   /* tx_start freed it: report the failure */
            (void)tx_finish(tx, false, err);
        }
    }
}

static wisp_err_t tx_recv(void *arg, struct wisp_tcp_pcb *pcb, struct wisp_pbuf *p, wisp_err_t err)
{
    struct wisp_iperf_tx *tx = (struct wisp_iperf_tx *)arg;
    if (tx == NULL || (p != NULL && err != WISP_OK)) {
        wisp_pbuf_free(p);
        return WISP_OK;
    }
    if (p == NULL) {
        tx->peer_closed = true;
        return tx_check_done(tx);
    }
    /* Whatever the peer sends is read and dropped. */
    wisp_tcp_recved(pcb, p->tot_len);
    wisp_pbuf_free(p);
    return WISP_OK;
}

static wisp_err_t tx_sent(void *arg, struct wisp_tcp_pcb *pcb, uint32_t len)
{
    struct wisp_iperf_tx *tx = (struct wisp_iperf_tx *)arg;
    WISP_UNUSED(pcb);
    if (tx == NULL) {
        return WISP_OK;
    }
    tx->acked += len;
    if (tx->acked > tx->written) {
        tx->acked = tx->written;   /* our FIN counts as a byte */
    }
    if (tx->acked == tx->written) {
        tx->t_last = tx_now(tx);
    }
    if (tx_pump(tx, true) != WISP_OK) {
        return WISP_ERR_ABRT;
    }
    return tx_check_done(tx);
}

static wisp_err_t tx_poll(void *arg, struct wisp_tcp_pcb *pcb)
{
    struct wisp_iperf_tx *tx = (struct wisp_iperf_tx *)arg;
    WISP_UNUSED(pcb);
    if (tx == NULL) {
        return WISP_OK;
    }
    return tx_pump(tx, false);
}

static void tx_err(void *arg, wisp_err_t err)
{
    struct wisp_iperf_tx *tx = (struct wisp_iperf_tx *)arg;
    if (tx == NULL) {
        return;
    }
    tx->pcb = NULL;
    /* iperf 2's -d client starts its listener while it connects, so a fast
     * server's reverse connect can meet a RST: try again a few times. */
    if (err == WISP_ERR_RST && tx->state == TX_CONNECTING && tx->res.role == WISP_IPERF_ROLE_REVERSE &&
        tx->refused < TX_REFUSED_RETRIES) {
        tx->refused++;
        wisp_timer_arm(tx->stack, &tx->tmr, TX_REFUSED_DELAY_MS, tx_timer);
        return;
    }
    /* WISP_ERR_CLSD: after our shutdown both directions closed normally. */
    (void)tx_finish(tx, err == WISP_ERR_CLSD && tx->state == TX_SHUT && tx->acked >= tx->written, err);
}

static wisp_err_t tx_connected(void *arg, struct wisp_tcp_pcb *pcb, wisp_err_t err)
{
    struct wisp_iperf_tx *tx = (struct wisp_iperf_tx *)arg;
    WISP_UNUSED(pcb);
    if (tx == NULL) {
        return WISP_OK;
    }
    if (err != WISP_OK) {
        return tx_finish(tx, false, err);
    }
    tx->state = TX_SENDING;
    tx->t_conn = tx_now(tx);
    if (tx->total == 0) {
        tx->end_us = tx->t_conn + (uint64_t)tx->time_ms * 1000u;
        wisp_timer_arm(tx->stack, &tx->tmr, tx->time_ms, tx_timer);
    }
    return tx_pump(tx, true);
}

/* Open the connection of a sender set up by the caller (hdr, total or
 * time_ms, wlen, clock, finished, owner, res.role/proto). */
static wisp_err_t tx_start(struct wisp_iperf_tx *tx, struct wisp_stack *s, const wisp_ipaddr_t *ip, uint16_t port)
{
    wisp_err_t err;

    tx->stack = s;
    tx->res.proto = WISP_IP4_PROTO_TCP;
    tx->res.peer_ip = *ip;
    tx->res.peer_port = port;
    tx->pcb = wisp_tcp_new(s);
    if (tx->pcb == NULL) {
        return WISP_ERR_MEM;
    }
    tx->state = TX_CONNECTING;
    wisp_tcp_arg(tx->pcb, tx);
    wisp_tcp_recv(tx->pcb, tx_recv);
    wisp_tcp_sent(tx->pcb, tx_sent);
    wisp_tcp_err(tx->pcb, tx_err);
    wisp_tcp_poll(tx->pcb, tx_poll, 1);
    err = wisp_tcp_connect(tx->pcb, ip, port, tx_connected);
    if (err != WISP_OK) {
        wisp_tcp_arg(tx->pcb, NULL);
        wisp_tcp_abort(tx->pcb);
        tx->pcb = NULL;
        tx->state = TX_FREE;
    }
    return err;
}

/* Abort without reporting. */
static void tx_drop(struct wisp_iperf_tx *tx)
{
    if (tx->stack != NULL) {
        wisp_timer_cancel(tx->stack, &tx->tmr);
    }
    if (tx->pcb != NULL) {
        wisp_tcp_arg(tx->pcb, NULL);
        wisp_tcp_abort(tx->pcb);
        tx->pcb = NULL;
    }
    tx->state = TX_FREE;
}

/* ------------------------------------------------------- TCP server */

static void srv_report(struct wisp_iperf_server *srv, const struct wisp_iperf_result *r)
{
    if (srv->cfg.report != NULL) {
        srv->cfg.report(srv->cfg.report_ctx, r);
    }
}

static uint64_t srv_now(struct wisp_iperf_server *srv)
{
    return clock_us(srv->stack, srv->cfg.clock, srv->cfg.clock_ctx);
}

/* A reverse stream ended: report it and free its slot. */
static void rev_finished(struct wisp_iperf_tx *tx)
{
    struct wisp_iperf_server *srv = (struct wisp_iperf_server *)tx->owner;
    struct wisp_iperf_result r = tx->res;
    tx->state = TX_FREE;
    srv_report(srv, &r);
}

/* -r / -d: connect back to the client's address at the port of its header
 * and send the amount it asked for (capped). */
static void rev_start(struct wisp_iperf_tcp_conn *c)
{
    struct wisp_iperf_server *srv = c->srv;
    struct wisp_iperf_tx *tx = NULL;
    unsigned i;

    c->rev_pending = false;
    for (i = 0; i < WISP_IPERF_TCP_CONNS; i++) {
        if (srv->rev[i].state == TX_FREE) {
            tx = &srv->rev[i];
            break;
        }
    }
    if (tx == NULL || c->rev_port == 0) {
        srv->st.reverse_failed++;
        return;
    }
    memset(tx, 0, sizeof(*tx));
    tx->owner = srv;
    tx->finished = rev_finished;
    tx->clock = srv->cfg.clock;
    tx->clock_ctx = srv->cfg.clock_ctx;
    tx->wlen = PATTERN_WINDOW;
    tx->res.role = WISP_IPERF_ROLE_REVERSE;
    tx->res.hdr_flags = c->res.hdr_flags;
    if (c->rev_amount < 0) {
        uint64_t ms = (uint64_t)(-(int64_t)c->rev_amount) * 10u;
        tx->time_ms = (uint32_t)(ms > WISP_IPERF_REVERSE_MAX_MS ? WISP_IPERF_REVERSE_MAX_MS : ms);
        if (tx->time_ms == 0) {
            tx->time_ms = 10u;
        }
    } else {
        uint64_t b = (uint64_t)c->rev_amount;
        tx->total = b > WISP_IPERF_REVERSE_MAX_BYTES ? WISP_IPERF_REVERSE_MAX_BYTES : (b == 0 ? 1u : b);
    }
    if (tx_start(tx, srv->stack, &c->res.peer_ip, c->rev_port) != WISP_OK) {
        memset(tx, 0, sizeof(*tx));
        srv->st.reverse_failed++;
        return;
    }
    c->res.reverse = true;
    srv->st.reverse_started++;
}

/* Report the connection and free its record (the PCB is already gone or
 * closed by the caller). */
static void conn_end(struct wisp_iperf_tcp_conn *c, bool ok, wisp_err_t err)
{
    struct wisp_iperf_server *srv = c->srv;
    struct wisp_iperf_result r;

    c->res.ok = ok;
    c->res.err = ok ? WISP_OK : err;
    c->res.duration_us = c->t_last > c->t_first ? c->t_last - c->t_first : 0;
    r = c->res;
    if (ok && c->rev_pending) {
        rev_start(c);   /* -r: the client now waits for our stream */
        r.reverse = c->res.reverse;
    }
    c->pcb = NULL;
    c->srv = NULL;
    srv_report(srv, &r);
}

/* Read the first bytes of the stream as a client header. */
static void conn_header(struct wisp_iperf_tcp_conn *c, const struct wisp_pbuf *p)
{
    uint16_t want = (uint16_t)(sizeof(c->hdr) - c->hdr_n);
    uint32_t flags;

    c->hdr_n = (uint8_t)(c->hdr_n + wisp_pbuf_copy_out(p, c->hdr + c->hdr_n, want, 0));
    if (c->hdr_n < sizeof(c->hdr)) {
        return;
    }
    flags = wisp_rd32(c->hdr);
    c->res.hdr_flags = flags;
    /* iperf 2 client_hdr_v1: VERSION1 asks for the stream back to mPort
     * (RUN_NOW: at once, -d; else after this test, -r). */
    if ((flags & WISP_IPERF_HDR_VERSION1) != 0 && c->srv->cfg.reverse) {
        uint32_t port = wisp_rd32(c->hdr + 8);
        c->rev_port = (uint16_t)(port <= 0xFFFFu ? port : 0u);
        c->rev_amount = (int32_t)wisp_rd32(c->hdr + 20);
        if ((flags & WISP_IPERF_RUN_NOW) != 0) {
            rev_start(c);
        } else {
            c->rev_pending = true;
        }
    }
}

static wisp_err_t conn_recv(void *arg, struct wisp_tcp_pcb *pcb, struct wisp_pbuf *p, wisp_err_t err)
{
    struct wisp_iperf_tcp_conn *c = (struct wisp_iperf_tcp_conn *)arg;
    uint64_t now;

    if (c == NULL || (p != NULL && err != WISP_OK)) {
        wisp_pbuf_free(p);
        return WISP_OK;
    }
    now = srv_now(c->srv);
    if (p == NULL) {
        /* The client is done: close our side, report. */
        wisp_tcp_arg(pcb, NULL);
        if (wisp_tcp_close(pcb) != WISP_OK) {
            wisp_tcp_abort(pcb);
            conn_end(c, true, WISP_OK);
            return WISP_ERR_ABRT;
        }
        conn_end(c, true, WISP_OK);
        return WISP_OK;
    }
    if (c->res.bytes == 0) {
        c->t_first = now;
    }
    c->t_last = now;
    c->last_ms = wisp_now(c->srv->stack);
    if (c->hdr_n < sizeof(c->hdr)) {
        conn_header(c, p);
    }
    c->res.bytes += p->tot_len;
    wisp_tcp_recved(pcb, p->tot_len);
    wisp_pbuf_free(p);
    return WISP_OK;
}

static void conn_err(void *arg, wisp_err_t err)
{
    struct wisp_iperf_tcp_conn *c = (struct wisp_iperf_tcp_conn *)arg;
    if (c == NULL || c->srv == NULL) {
        return;
    }
    c->rev_pending = false;
    conn_end(c, false, err);
}

/* Reset a connection and report it as failed with err. */
static void conn_kill(struct wisp_iperf_tcp_conn *c, wisp_err_t err)
{
    struct wisp_tcp_pcb *pcb = c->pcb;
    wisp_tcp_arg(pcb, NULL);
    wisp_tcp_abort(pcb);
    c->rev_pending = false;
    conn_end(c, false, err);
}

/* The idle timeout (iperf.h): nothing received for tcp_idle_ms. */
static wisp_err_t conn_poll(void *arg, struct wisp_tcp_pcb *pcb)
{
    struct wisp_iperf_tcp_conn *c = (struct wisp_iperf_tcp_conn *)arg;
    struct wisp_iperf_server *srv;
    uint32_t idle = WISP_IPERF_TCP_IDLE_MS;
    WISP_UNUSED(pcb);
    if (c == NULL || c->srv == NULL) {
        return WISP_OK;
    }
    srv = c->srv;
    if (srv->cfg.tcp_idle_ms != 0u) {
        idle = srv->cfg.tcp_idle_ms;
    }
    if (wisp_now(srv->stack) - c->last_ms >= idle) {
        srv->st.tcp_timeouts++;
        conn_kill(c, WISP_ERR_TIMEOUT);
        return WISP_ERR_ABRT;
    }
    return WISP_OK;
}

static wisp_err_t srv_accept(void *arg, struct wisp_tcp_pcb *newpcb, wisp_err_t err)
{
    struct wisp_iperf_server *srv = (struct wisp_iperf_server *)arg;
    struct wisp_iperf_tcp_conn *c = NULL, *v = NULL;
    uint32_t now, best = 0, min_idle = WISP_IPERF_TCP_RECLAIM_MS;
    unsigned i;

    if (srv == NULL || newpcb == NULL || err != WISP_OK) {
        return err != WISP_OK ? err : WISP_ERR_VAL;
    }
    now = wisp_now(srv->stack);
    if (srv->cfg.tcp_reclaim_ms != 0u) {
        min_idle = srv->cfg.tcp_reclaim_ms;
    }
    for (i = 0; i < WISP_IPERF_TCP_CONNS; i++) {
        struct wisp_iperf_tcp_conn *x = &srv->conns[i];
        if (x->srv == NULL) {
            c = x;
            break;
        }
        if (x->pcb != NULL && now - x->last_ms >= min_idle && (v == NULL || now - x->last_ms > best)) {
            v = x;
            best = now - x->last_ms;
        }
    }
    if (c == NULL && v != NULL) {
        /* Every record in use: the one silent the longest makes room. */
        srv->st.tcp_reclaimed++;
        conn_kill(v, WISP_ERR_ABRT);
        c = v;
    }
    if (c == NULL) {
        srv->st.tcp_refused++;
        return WISP_ERR_MEM;   /* the stack resets it */
    }
    memset(c, 0, sizeof(*c));
    c->srv = srv;
    c->pcb = newpcb;
    c->res.proto = WISP_IP4_PROTO_TCP;
    c->res.role = WISP_IPERF_ROLE_SERVER;
    wisp_tcp_remote(newpcb, &c->res.peer_ip, &c->res.peer_port);
    c->t_first = c->t_last = srv_now(srv);
    c->last_ms = now;
    srv->st.tcp_tests++;
    wisp_tcp_arg(newpcb, c);
    wisp_tcp_recv(newpcb, conn_recv);
    wisp_tcp_err(newpcb, conn_err);
    wisp_tcp_poll(newpcb, conn_poll, 2);
    return WISP_OK;
}

/* ------------------------------------------------------- UDP server */

static struct wisp_iperf_udp_sess *sess_find(struct wisp_iperf_server *srv, const wisp_ipaddr_t *ip, uint16_t port)
{
    unsigned i;
    for (i = 0; i < WISP_IPERF_UDP_SESSIONS; i++) {
        struct wisp_iperf_udp_sess *x = &srv->sess[i];
        if (x->state != SESS_FREE && x->port == port && wisp_ipaddr_eq(&x->peer, ip)) {
            return x;
        }
    }
    return NULL;
}

static void sess_result(const struct wisp_iperf_udp_sess *x, struct wisp_iperf_result *r)
{
    memset(r, 0, sizeof(*r));
    r->proto = WISP_IP4_PROTO_UDP;
    r->role = WISP_IPERF_ROLE_SERVER;
    r->peer_ip = x->peer;
    r->peer_port = x->port;
    r->hdr_flags = x->hdr_flags;
    r->bytes = x->bytes;
    r->duration_us = x->t_last > x->t_first ? x->t_last - x->t_first : 0;
    r->report.flags = WISP_IPERF_HDR_VERSION1 | (x->seq64 ? WISP_IPERF_HDR_SEQNO64B : 0u);
    r->report.bytes = x->bytes;
    r->report.duration_us = r->duration_us;
    r->report.datagrams = x->max_id;
    r->report.out_of_order = x->ooo;
    r->report.lost = x->gaps > x->ooo ? x->gaps - x->ooo : 0;
    r->report.jitter_us = (uint32_t)(x->jitter16 >> 4);
    r->datagrams = x->max_id;
    r->received = x->received;
    r->have_report = true;
}

/* A free slot, a finished session's (oldest first) or an idle one's. */
static struct wisp_iperf_udp_sess *sess_new(struct wisp_iperf_server *srv)
{
    struct wisp_iperf_udp_sess *best = NULL;
    uint32_t now = wisp_now(srv->stack);
    unsigned i;

    for (i = 0; i < WISP_IPERF_UDP_SESSIONS; i++) {
        struct wisp_iperf_udp_sess *x = &srv->sess[i];
        if (x->state == SESS_FREE) {
            return x;
        }
        if (x->state == SESS_DONE && (best == NULL || wisp_time_before(x->last_ms, best->last_ms))) {
            best = x;
        }
    }
    if (best != NULL) {
        return best;
    }
    for (i = 0; i < WISP_IPERF_UDP_SESSIONS; i++) {
        struct wisp_iperf_udp_sess *x = &srv->sess[i];
        if ((uint32_t)(now - x->last_ms) >= WISP_IPERF_UDP_IDLE_MS) {
            struct wisp_iperf_result r;
            sess_result(x, &r);
            r.ok = false;
            r.err = WISP_ERR_TIMEOUT;
            x->state = SESS_FREE;
            srv_report(srv, &r);
            return x;
        }
    }
    return NULL;
}

/* Send the server report of x to its client. */
static void sess_send_report(struct wisp_iperf_server *srv, struct wisp_udp_pcb *pcb,
                             const struct wisp_iperf_udp_sess *x, const struct wisp_ip_info *ip)
{
    struct wisp_iperf_result r;
    uint8_t buf[WISP_IPERF_SERVER_REPORT_LEN];
    struct wisp_pbuf *p;
    wisp_err_t err;

    sess_result(x, &r);
    wisp_iperf_build_report(buf, &r.report, x->seq64);
    p = wisp_pbuf_alloc(srv->stack, UDP_HEADROOM, (uint16_t)sizeof(buf), WISP_PBUF_RAM);
    if (p == NULL) {
        srv->st.report_err++;
        return;
    }
    (void)wisp_pbuf_copy_in(p, buf, (uint16_t)sizeof(buf), 0);
    /* From the address the client sent to. */
    err = wisp_udp_sendto_from(pcb, p, &ip->dst, &x->peer, x->port);
    wisp_pbuf_free(p);
    if (err == WISP_OK) {
        srv->st.reports_sent++;
    } else {
        srv->st.report_err++;
    }
}

static void srv_udp_recv(void *arg, struct wisp_udp_pcb *pcb, struct wisp_pbuf *p, const wisp_ipaddr_t *src,
                         uint16_t port, const struct wisp_ip_info *ip)
{
    struct wisp_iperf_server *srv = (struct wisp_iperf_server *)arg;
    struct wisp_iperf_udp_sess *x;
    uint8_t h[WISP_IPERF_UDP_HDR_LEN + 4];
    uint16_t n = wisp_pbuf_copy_out(p, h, (uint16_t)sizeof(h), 0);
    uint16_t len = p->tot_len;
    uint64_t now = srv_now(srv), sent_us, num;
    uint32_t flags = 0;
    int64_t id, transit;

    wisp_pbuf_free(p);
    if (n < WISP_IPERF_UDP_HDR_LEN || ip->bcast || ip->mcast) {
        srv->st.udp_runts++;
        return;
    }
    if (n >= WISP_IPERF_UDP_HDR_LEN + 4u) {
        flags = wisp_rd32(h + WISP_IPERF_UDP_HDR_LEN);
    }
    x = sess_find(srv, src, port);
    if (x != NULL && x->state == SESS_DONE) {
        /* A repeated FIN: the same report again. A datagram of the
         * finished test arriving late: ignored. Else a new test from the
         * same port: a new session. */
        int64_t old = x->seq64 ? (int64_t)(((uint64_t)wisp_rd32(h + 12) << 32) | wisp_rd32(h))
                               : (int64_t)(int32_t)wisp_rd32(h);
        if (old < 0) {
            sess_send_report(srv, pcb, x, ip);
            return;
        }
        if ((uint64_t)old <= x->max_id && old > 1) {
            return;
        }
        x->state = SESS_FREE;
        x = NULL;
    }
    if (x == NULL) {
        x = sess_new(srv);
        if (x == NULL) {
            srv->st.udp_refused++;
            return;
        }
        memset(x, 0, sizeof(*x));
        x->state = SESS_RUN;
        x->peer = *src;
        x->port = port;
        x->hdr_flags = flags;
        x->seq64 = (flags & WISP_IPERF_HDR_SEQNO64B) != 0;
        x->t_first = now;
        srv->st.udp_tests++;
    }
    x->last_ms = wisp_now(srv->stack);
    x->t_last = now;
    x->bytes += len;
    x->received++;
    if (x->seq64) {
        id = (int64_t)(((uint64_t)wisp_rd32(h + 12) << 32) | wisp_rd32(h));
    } else {
        id = (int32_t)wisp_rd32(h);
    }
    if (id >= 0) {
        /* RFC 3550 §6.4.1: D(i-1,i) = (Rj - Ri) - (Sj - Si); J += (|D| - J) / 16,
         * integer form of §A.8 with J scaled by 16. */
        sent_us = (uint64_t)wisp_rd32(h + 4) * 1000000u + wisp_rd32(h + 8);
        transit = (int64_t)(now - sent_us);
        if (x->have_transit) {
            int64_t d = transit - x->prev_transit;
            if (d < 0) {
                d = -d;
            }
            x->jitter16 += d - ((x->jitter16 + 8) >> 4);
        }
        x->prev_transit = transit;
        x->have_transit = true;
        num = (uint64_t)id;
    } else {
        /* the FIN: its number counts as sent (iperf 2); negated in
         * unsigned arithmetic (a bogus -2^63 has no int64_t negation) */
        num = 0u - (uint64_t)id;
    }
    if (num == x->max_id + 1u) {
        x->max_id = num;
    } else if (num > x->max_id) {
        x->gaps += num - x->max_id - 1u;
        x->max_id = num;
    } else {
        x->ooo++;
    }
    if (x->seq64 ? (wisp_rd32(h + 12) & 0x80000000u) != 0 : (wisp_rd32(h) & 0x80000000u) != 0) {
        struct wisp_iperf_result r;
        x->state = SESS_DONE;
        sess_send_report(srv, pcb, x, ip);
        sess_result(x, &r);
        r.ok = true;
        r.fin_seen = true;
        srv_report(srv, &r);
    }
}

/* ----------------------------------------------------------- server */

wisp_err_t wisp_iperf_server_start(struct wisp_stack *s, struct wisp_iperf_server *srv,
                                   const struct wisp_iperf_server_cfg *cfg)
{
    wisp_err_t err = WISP_OK;

    if (s == NULL || srv == NULL || cfg == NULL || (!cfg->tcp && !cfg->udp)) {
        return WISP_ERR_ARG;
    }
    memset(srv, 0, sizeof(*srv));
    srv->stack = s;
    srv->cfg = *cfg;
    if (srv->cfg.port == 0) {
        srv->cfg.port = WISP_IPERF_PORT;
    }
    if (cfg->tcp) {
        struct wisp_tcp_pcb *pcb = wisp_tcp_new(s), *l;
        if (pcb == NULL) {
            return WISP_ERR_MEM;
        }
        err = wisp_tcp_bind(pcb, NULL, srv->cfg.port);
        if (err != WISP_OK) {
            (void)wisp_tcp_close(pcb);
            return err;
        }
        l = wisp_tcp_listen(pcb, (uint8_t)WISP_IPERF_TCP_CONNS, &err);
        if (l == NULL) {
            (void)wisp_tcp_close(pcb);
            return err != WISP_OK ? err : WISP_ERR_MEM;
        }
        wisp_tcp_arg(l, srv);
        wisp_tcp_accept(l, srv_accept);
        srv->listener = l;
    }
    if (cfg->udp) {
        struct wisp_udp_pcb *u = wisp_udp_new(s);
        if (u == NULL) {
            err = WISP_ERR_MEM;
        } else {
            err = wisp_udp_bind(u, NULL, srv->cfg.port);
            if (err != WISP_OK) {
                wisp_udp_remove(u);
            } else {
                wisp_udp_recv(u, srv_udp_recv, srv);
                srv->udp = u;
            }
        }
        if (err != WISP_OK) {
            wisp_iperf_server_stop(srv);
            return err;
        }
    }
    return WISP_OK;
}

void wisp_iperf_server_stop(struct wisp_iperf_server *srv)
{
    unsigned i;

    if (srv == NULL || srv->stack == NULL) {
        return;
    }
    if (srv->listener != NULL) {
        wisp_tcp_arg(srv->listener, NULL);
        (void)wisp_tcp_close(srv->listener);
        srv->listener = NULL;
    }
    for (i = 0; i < WISP_IPERF_TCP_CONNS; i++) {
        struct wisp_iperf_tcp_conn *c = &srv->conns[i];
        struct wisp_iperf_tx *tx = &srv->rev[i];
        if (c->srv != NULL && c->pcb != NULL) {
            struct wisp_tcp_pcb *pcb = c->pcb;
            wisp_tcp_arg(pcb, NULL);
            wisp_tcp_abort(pcb);
            c->rev_pending = false;
            conn_end(c, false, WISP_ERR_ABRT);
        }
        if (tx->state != TX_FREE && tx->state != TX_DONE) {
            (void)tx_finish(tx, false, WISP_ERR_ABRT);
        }
    }
    for (i = 0; i < WISP_IPERF_UDP_SESSIONS; i++) {
        struct wisp_iperf_udp_sess *x = &srv->sess[i];
        if (x->state == SESS_RUN) {
            struct wisp_iperf_result r;
            sess_result(x, &r);
            r.ok = false;
            r.err = WISP_ERR_ABRT;
            srv_report(srv, &r);
        }
        x->state = SESS_FREE;
    }
    if (srv->udp != NULL) {
        wisp_udp_remove(srv->udp);
        srv->udp = NULL;
    }
}

unsigned wisp_iperf_server_active(const struct wisp_iperf_server *srv)
{
    unsigned i, n = 0;
    if (srv == NULL) {
        return 0;
    }
    for (i = 0; i < WISP_IPERF_TCP_CONNS; i++) {
        n += srv->conns[i].srv != NULL;
        n += srv->rev[i].state != TX_FREE && srv->rev[i].state != TX_DONE;
    }
    for (i = 0; i < WISP_IPERF_UDP_SESSIONS; i++) {
        n += srv->sess[i].state == SESS_RUN;
    }
    return n;
}

/* ----------------------------------------------------------- client */

static uint64_t cl_now(struct wisp_iperf_client *c)
{
    return clock_us(c->stack, c->cfg.clock, c->cfg.clock_ctx);
}

static void cl_done(struct wisp_iperf_client *c)
{
    struct wisp_iperf_result r = c->res;
    c->running = false;
    if (c->cfg.done != NULL) {
        c->cfg.done(c->cfg.done_ctx, &r);
    }
}

static void cl_tcp_finished(struct wisp_iperf_tx *tx)
{
    struct wisp_iperf_client *c = (struct wisp_iperf_client *)tx->owner;
    c->res = tx->res;
    cl_done(c);
}

static struct wisp_iperf_client *cl_of_timer(struct wisp_timer *t)
{
    return (struct wisp_iperf_client *)(void *)((uint8_t *)t - offsetof(struct wisp_iperf_client, utmr));
}

/* One datagram: id (64 bits over id2:id), the time, the client header
 * when it fits, then the pattern. */
static wisp_err_t uc_send(struct wisp_iperf_client *c, int64_t id, uint64_t now)
{
    uint8_t h[WISP_IPERF_UDP_HDR_LEN + WISP_IPERF_UDP_CLIENT_HDR_LEN];
    uint16_t len = (uint16_t)c->cfg.len, hl = WISP_IPERF_UDP_HDR_LEN, off;
    struct wisp_pbuf *p = wisp_pbuf_alloc(c->stack, UDP_HEADROOM, len, WISP_PBUF_POOL);
    wisp_err_t err;

    if (p == NULL) {
        return WISP_ERR_MEM;
    }
    wisp_wr32(h, (uint32_t)(uint64_t)id);
    wisp_wr32(h + 4, (uint32_t)(now / 1000000u));
    wisp_wr32(h + 8, (uint32_t)(now % 1000000u));
    wisp_wr32(h + 12, (uint32_t)((uint64_t)id >> 32));
    if (len >= sizeof(h)) {
        hl = (uint16_t)(hl + build_client_hdr(h + WISP_IPERF_UDP_HDR_LEN, true, &c->cfg, WISP_IPERF_PORT));
    }
    (void)wisp_pbuf_copy_in(p, h, hl, 0);
    for (off = hl; off < len;) {
        uint16_t n = (uint16_t)min_u32((uint32_t)(len - off), PATTERN_WINDOW);
        (void)wisp_pbuf_copy_in(p, pattern + (off % 10u), n, off);
        off = (uint16_t)(off + n);
    }
    err = wisp_udp_send(c->udp, p);
    wisp_pbuf_free(p);
    return err;
}

static void uc_finish(struct wisp_iperf_client *c, bool ok, wisp_err_t err)
{
    if (c->phase == UC_DONE) {
        return;
    }
    c->phase = UC_DONE;
    wisp_timer_cancel(c->stack, &c->utmr);
    c->res.ok = ok;
    c->res.err = ok ? WISP_OK : err;
    c->res.duration_us = c->t_end_send > c->t_start ? c->t_end_send - c->t_start : 0;
    if (c->udp != NULL) {
        wisp_udp_remove(c->udp);
        c->udp = NULL;
    }
    cl_done(c);
}

/* The pacing timer: send what is due at cfg.rate_bps since the start;
 * then the FIN, repeated until the report arrives. */
static void uc_tick(struct wisp_stack *s, struct wisp_timer *t)
{
    struct wisp_iperf_client *c = cl_of_timer(t);
    uint64_t now = cl_now(c);
    unsigned burst = 0;
    WISP_UNUSED(s);

    if (c->phase == UC_SEND) {
        uint64_t bits_per = (uint64_t)c->cfg.len * 8u;
        uint64_t elapsed = now - c->t_start;
        /* datagrams due by now: one at the start, then rate / size per second */
        uint64_t due = elapsed * c->cfg.rate_bps / bits_per / 1000000u + 1u;
        bool over = c->cfg.bytes != 0 ? c->res.bytes >= c->cfg.bytes : now >= c->end_us;

        while (!over && c->seq - 1u < due && burst < UC_BURST) {
            wisp_err_t err = uc_send(c, (int64_t)c->seq, now);
            if (err == WISP_ERR_MEM) {
                c->res.send_refused++;
                break;   /* buffers are busy: the next tick tries again */
            }
            if (err != WISP_OK) {
                uc_finish(c, false, err);
                return;
            }
            burst++;
            c->seq++;
            c->res.datagrams++;
            c->res.bytes += c->cfg.len;
            c->t_end_send = now;
            over = c->cfg.bytes != 0 ? c->res.bytes >= c->cfg.bytes : now >= c->end_us;
        }
        if (!over) {
            wisp_timer_arm(c->stack, &c->utmr, 1u, uc_tick);
            return;
        }
        c->phase = UC_FIN;
        c->t_end_send = now;
    }
    if (c->phase == UC_FIN) {
        if (c->res.fin_tries >= WISP_IPERF_FIN_TRIES) {
            /* No report: the test itself went out. */
            uc_finish(c, true, WISP_OK);
            return;
        }
        /* The FIN: the negated next sequence number. */
        if (uc_send(c, -(int64_t)c->seq, now) == WISP_OK) {
            if (c->res.fin_tries == 0) {
                c->res.datagrams++;
                c->res.bytes += c->cfg.len;
            }
        } else {
            c->res.send_refused++;
        }
        c->res.fin_tries++;
        wisp_timer_arm(c->stack, &c->utmr, WISP_IPERF_FIN_WAIT_MS, uc_tick);
    }
}

/* The server's report (only after our FIN, only from the server: the PCB
 * is connected). */
static void uc_recv(void *arg, struct wisp_udp_pcb *pcb, struct wisp_pbuf *p, const wisp_ipaddr_t *src,
                    uint16_t port, const struct wisp_ip_info *ip)
{
    struct wisp_iperf_client *c = (struct wisp_iperf_client *)arg;
    uint8_t buf[WISP_IPERF_SERVER_REPORT_LEN];
    uint16_t n = wisp_pbuf_copy_out(p, buf, (uint16_t)sizeof(buf), 0);
    WISP_UNUSED(pcb);
    WISP_UNUSED(src);
    WISP_UNUSED(port);
    WISP_UNUSED(ip);

    wisp_pbuf_free(p);
    if (c->phase != UC_FIN) {
        return;
    }
    if (wisp_iperf_parse_report(buf, n, &c->res.report)) {
        c->res.have_report = true;
        uc_finish(c, true, WISP_OK);
    }
}

wisp_err_t wisp_iperf_client_start(struct wisp_stack *s, struct wisp_iperf_client *c,
                                   const struct wisp_iperf_client_cfg *cfg)
{
    wisp_err_t err;

    if (s == NULL || c == NULL || cfg == NULL || cfg->done == NULL) {
        return WISP_ERR_ARG;
    }
    memset(c, 0, sizeof(*c));
    c->stack = s;
    c->cfg = *cfg;
    if (c->cfg.port == 0) {
        c->cfg.port = WISP_IPERF_PORT;
    }
    if (c->cfg.bytes == 0 && c->cfg.time_ms == 0) {
        c->cfg.time_ms = 10000u;
    }
    c->res.role = WISP_IPERF_ROLE_CLIENT;
    c->res.peer_ip = c->cfg.server;
    c->res.peer_port = c->cfg.port;
    if (!c->cfg.udp) {
        struct wisp_iperf_tx *tx = &c->tcp;
        if (c->cfg.len == 0) {
            c->cfg.len = PATTERN_WINDOW;
        }
        if (c->cfg.len > PATTERN_WINDOW) {
            return WISP_ERR_VAL;
        }
        tx->owner = c;
        tx->finished = cl_tcp_finished;
        tx->clock = c->cfg.clock;
        tx->clock_ctx = c->cfg.clock_ctx;
        tx->wlen = c->cfg.len;
        tx->total = c->cfg.bytes;
        tx->time_ms = c->cfg.time_ms;
        tx->hdr_len = (uint8_t)build_client_hdr(tx->hdr, false, &c->cfg, WISP_IPERF_PORT);
        tx->res.role = WISP_IPERF_ROLE_CLIENT;
        c->running = true;
        err = tx_start(tx, s, &c->cfg.server, c->cfg.port);
        if (err != WISP_OK) {
            c->running = false;
        }
        return err;
    }
    if (c->cfg.len == 0) {
        c->cfg.len = 1470u;
    }
    if (c->cfg.len < WISP_IPERF_UDP_HDR_LEN || c->cfg.len > 65507u) {
        return WISP_ERR_VAL;
    }
    if (c->cfg.rate_bps == 0) {
        c->cfg.rate_bps = 1000000u;
    }
    c->res.proto = WISP_IP4_PROTO_UDP;
    c->udp = wisp_udp_new(s);
    if (c->udp == NULL) {
        return WISP_ERR_MEM;
    }
    err = wisp_udp_connect(c->udp, &c->cfg.server, c->cfg.port);
    if (err != WISP_OK) {
        wisp_udp_remove(c->udp);
        c->udp = NULL;
        return err;
    }
    wisp_udp_recv(c->udp, uc_recv, c);
    c->seq = 1;
    c->t_start = cl_now(c);
    c->end_us = c->t_start + (uint64_t)c->cfg.time_ms * 1000u;
    c->phase = UC_SEND;
    c->running = true;
    wisp_timer_arm(s, &c->utmr, 0, uc_tick);
    return WISP_OK;
}

void wisp_iperf_client_stop(struct wisp_iperf_client *c)
{
    if (c == NULL || c->stack == NULL) {
        return;
    }
    tx_drop(&c->tcp);
    wisp_timer_cancel(c->stack, &c->utmr);
    if (c->udp != NULL) {
        wisp_udp_remove(c->udp);
        c->udp = NULL;
    }
    c->running = false;
}

bool wisp_iperf_client_running(const struct wisp_iperf_client *c)
{
    return c != NULL && c->running;
}
