/**
 * @file tcp_simlib.c
 * TCP simulator harness: deterministic byte streams, a bulk-transfer
 * application on the raw TCP API (sender, verifying receiver, close
 * handshake, watchdog), pool settling, and segment parse / build / inject /
 * log tools for the sim tap. See tcp_simlib.h.
 *
 * Host code (malloc, stdio); uses only the public API of wisp/tcp.h, never
 * the TCP implementation's structures.
 */
#define WISP_PRIVATE_ACCESS 1 /* test library: white-box, sees the private tier */
#include "tcp_simlib.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#define TSL_DEFAULT_WSIZE 1460u
#define TSL_DEFAULT_WATCHDOG_MS 30000u
#define TSL_SCAN_US 100000u            /* watchdog scan period, virtual */
#define TSL_POLL_INTERVAL 1u           /* poll callback every WISP_TCP_POLL_UNIT_MS */
#define TSL_RING_MIN (256u * 1024u)    /* zero-copy ring, at least */

/* ------------------------------------------------------ byte streams */

static uint64_t mix64(uint64_t z)
{
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

/* 8 bytes of the stream at block j (bytes 8j..8j+7, little end first). */
static uint64_t stream_block(uint64_t seed, uint64_t j)
{
    return mix64(seed * 0x9e3779b97f4a7c15ull + j * 0xd1b54a32d192ed03ull + 0x632be59bd9b4e019ull);
}

void tsl_stream_fill(uint64_t seed, uint64_t off, uint8_t *dst, size_t len)
{
    size_t i = 0;
    uint64_t v = stream_block(seed, off >> 3);
    while (i < len) {
        unsigned k = (unsigned)(off & 7u);
        dst[i++] = (uint8_t)(v >> (8u * k));
        off++;
        if ((off & 7u) == 0 && i < len) {
            v = stream_block(seed, off >> 3);
        }
    }
}

size_t tsl_stream_check(uint64_t seed, uint64_t off, const uint8_t *src, size_t len)
{
    size_t i = 0;
    uint64_t v = stream_block(seed, off >> 3);
    while (i < len) {
        unsigned k = (unsigned)(off & 7u);
        if (src[i] != (uint8_t)(v >> (8u * k))) {
            return i;
        }
        i++;
        off++;
        if ((off & 7u) == 0 && i < len) {
            v = stream_block(seed, off >> 3);
        }
    }
    return len;
}

/* ----------------------------------------------------------- helpers */

void tsl_fail(struct tsl_conn *c, const char *fmt, ...)
{
    va_list ap;
    if (c->failed) {
        return;
    }
    va_start(ap, fmt);
    vsnprintf(c->why, sizeof(c->why), fmt, ap);
    va_end(ap);
    c->failed = true;
    c->run->nfailed++;
    if (!c->run->quiet) {
        fprintf(stderr, "tsl: conn %u failed at t=%llu us (seed %llu): %s\n", c->id,
                (unsigned long long)sim_now_us(c->run->w), (unsigned long long)sim_seed(c->run->w), c->why);
    }
}

static uint64_t now_us(const struct tsl_conn *c)
{
    return sim_now_us(c->run->w);
}

static void progress(struct tsl_conn *c)
{
    c->last_progress_us = now_us(c);
}

static bool rx_complete(const struct tsl_ep *ep)
{
    return ep->rx_got == ep->rx_expect;
}

static uint8_t close_mode(const struct tsl_conn *c)
{
    if (c->cfg.close_mode != TSL_CLOSE_AUTO) {
        return c->cfg.close_mode;
    }
    return (c->cfg.a2b.bytes > 0 && c->cfg.b2a.bytes > 0) ? (uint8_t)TSL_CLOSE_SHUTDOWN : (uint8_t)TSL_CLOSE_PLAIN;
}

/* Is the connection finished (by its close mode)? */
static void check_done(struct tsl_conn *c)
{
    unsigned i;
    bool all = true;
    if (c->done || c->failed) {
        return;
    }
    for (i = 0; i < 2; i++) {
        const struct tsl_ep *ep = &c->ep[i];
        if (!ep->connected || !rx_complete(ep)) {
            all = false;
        }
        if (close_mode(c) == TSL_CLOSE_NONE) {
            if (ep->tx_acked != ep->tx.bytes) {
                all = false;
            }
        } else if (!ep->closed) {
            all = false;
        }
    }
    if (all) {
        c->done = true;
        c->done_us = now_us(c);
        c->run->ndone++;
    }
}

static void snapshot(struct tsl_ep *ep)
{
    if (ep->pcb != NULL) {
        wisp_tcp_get_info(ep->pcb, &ep->info);
    }
}

/* ----------------------------------------------------------- sending */

static uint32_t draw_chunk(struct tsl_ep *ep)
{
    uint32_t w = ep->tx.wsize ? ep->tx.wsize : TSL_DEFAULT_WSIZE;
    if (ep->tx.wrandom) {
        return 1u + (uint32_t)sim_rng_below(&ep->wrng, w);
    }
    return w;
}

/* Write as much as the stack takes. */
static void push(struct tsl_ep *ep)
{
    struct tsl_conn *c = ep->c;
    bool wrote = false;
    if (ep->pcb == NULL || ep->closed || !ep->connected || c->failed) {
        return;
    }
    if (ep->tx.pace_us != 0 && (!ep->turn || now_us(c) < ep->next_turn_us)) {
        return; /* not this application's turn */
    }
    if (ep->buf == NULL && ep->cheap_tx == NULL && ep->tx_written < ep->tx.bytes) {
        ep->buf = malloc(ep->buf_size);
        if (ep->buf == NULL) {
            tsl_fail(c, "out of memory");
            return;
        }
    }
    while (ep->tx_written < ep->tx.bytes) {
        uint64_t left = ep->tx.bytes - ep->tx_written;
        uint32_t n;
        const uint8_t *data;
        uint8_t flags = 0;
        wisp_err_t err;
        if (ep->tx_chunk == 0) {
            ep->tx_chunk = draw_chunk(ep);
        }
        n = ep->tx_chunk;
        if ((uint64_t)n > left) {
            n = (uint32_t)left;
        }
        if (n > WISP_TCP_SND_BUF) {
            /* Larger than the whole send buffer: it could never be taken
             * at once, so write what fits (a partial write, like send()
             * on a non-blocking socket); the rest of the write follows. */
            uint32_t room = wisp_tcp_sndbuf(ep->pcb);
            if (room == 0) {
                break; /* resumed by the sent callback */
            }
            if (n > room) {
                n = room;
            }
        }
        if (ep->cheap_tx != NULL) {
            /* The pattern buffer never changes: copied and zero-copy
             * writes both point into it. */
            if (n > TSL_CHEAP_SPAN) {
                n = TSL_CHEAP_SPAN;
            }
            data = ep->cheap_tx + ep->tx_written % TSL_CHEAP_PRIME;
            if (!ep->tx.nocopy) {
                flags |= WISP_TCP_WRITE_COPY;
            }
        } else if (ep->tx.nocopy) {
            /* The ring keeps every byte until the sent callback covers it. */
            uint32_t pos = (uint32_t)(ep->tx_written % ep->buf_size);
            uint64_t unacked = ep->tx_written - ep->tx_acked;
            if (n > ep->buf_size - pos) {
                n = ep->buf_size - pos;
            }
            if (unacked + n > ep->buf_size) {
                break; /* resumed by the sent callback */
            }
            tsl_stream_fill(ep->tx_seed, ep->tx_written, ep->buf + pos, n);
            data = ep->buf + pos;
        } else {
            tsl_stream_fill(ep->tx_seed, ep->tx_written, ep->buf, n);
            data = ep->buf;
            flags |= WISP_TCP_WRITE_COPY;
        }
        if (ep->tx.more && ep->tx_written + n < ep->tx.bytes) {
            flags |= WISP_TCP_WRITE_MORE;
        }
        err = wisp_tcp_write(ep->pcb, data, n, flags);
        if (err == WISP_ERR_MEM) {
            ep->write_mem++;
            break; /* resumed from the sent or poll callback */
        }
        if (err != WISP_OK) {
            tsl_fail(c, "side %u: wisp_tcp_write(%u) returned %s in state %s", ep->side, (unsigned)n,
                     wisp_err_str(err), wisp_tcp_state_str(wisp_tcp_state(ep->pcb)));
            return;
        }
        if (ep->writes == 0) {
            ep->tx_start_us = now_us(c);
        }
        ep->writes++;
        ep->tx_written += n;
        ep->tx_chunk = n < ep->tx_chunk ? ep->tx_chunk - n : 0;
        wrote = true;
        if (ep->tx.pace_us != 0) {
            /* one write per turn (a write cut by the send buffer finishes
             * in later turns) */
            ep->next_turn_us = now_us(c) + ep->tx.pace_us;
            break;
        }
    }
    if (wrote) {
        wisp_err_t err = wisp_tcp_output(ep->pcb);
        if (err != WISP_OK && err != WISP_ERR_MEM && err != WISP_ERR_WOULDBLOCK) {
            tsl_fail(c, "side %u: wisp_tcp_output returned %s", ep->side, wisp_err_str(err));
        }
    }
}

wisp_err_t tsl_ep_close(struct tsl_ep *ep)
{
    wisp_err_t err;
    if (ep->pcb == NULL || ep->closed) {
        return WISP_ERR_CONN;
    }
    snapshot(ep);
    err = wisp_tcp_close(ep->pcb);
    if (err == WISP_OK) {
        ep->pcb = NULL; /* the stack's now: no more callbacks */
        ep->closed = true;
        ep->close_pending = false;
        progress(ep->c);
        check_done(ep->c);
    } else if (err == WISP_ERR_MEM) {
        ep->close_pending = true;
    } else {
        tsl_fail(ep->c, "side %u: wisp_tcp_close returned %s", ep->side, wisp_err_str(err));
    }
    return err;
}

void tsl_ep_abort(struct tsl_ep *ep)
{
    struct wisp_tcp_pcb *pcb = ep->pcb;
    if (pcb == NULL || ep->closed) {
        return;
    }
    snapshot(ep);
    ep->expect_err = true;
    ep->aborting = true;
    wisp_tcp_abort(pcb); /* calls our error callback with WISP_ERR_ABRT */
    ep->aborting = false;
    ep->pcb = NULL;
    ep->closed = true;
}

/* Close handshake by the connection's close mode. */
static void maybe_close(struct tsl_ep *ep)
{
    struct tsl_conn *c = ep->c;
    uint8_t mode = close_mode(c);
    bool tx_all = ep->tx_written == ep->tx.bytes;
    if (ep->pcb == NULL || ep->closed || !ep->connected || c->failed || mode == TSL_CLOSE_NONE) {
        return;
    }
    if (mode == TSL_CLOSE_SHUTDOWN) {
        if (tx_all && !ep->shut_tx) {
            wisp_err_t err = wisp_tcp_shutdown(ep->pcb, false, true);
            if (err == WISP_OK) {
                ep->shut_tx = true;
                ep->close_pending = false;
                progress(c);
            } else if (err == WISP_ERR_MEM) {
                ep->close_pending = true;
                return;
            } else {
                tsl_fail(c, "side %u: wisp_tcp_shutdown(tx) returned %s", ep->side, wisp_err_str(err));
                return;
            }
        }
        if (ep->shut_tx && rx_complete(ep) && ep->rx_fin) {
            (void)tsl_ep_close(ep);
        }
    } else if (tx_all && (ep->rx_expect == 0 || (rx_complete(ep) && ep->rx_fin))) {
        (void)tsl_ep_close(ep);
    }
}

void tsl_ep_kick(struct tsl_ep *ep)
{
    push(ep);
    maybe_close(ep);
}

void tsl_conn_more(struct tsl_conn *c, uint64_t a2b, uint64_t b2a)
{
    c->ep[0].tx.bytes += a2b;
    c->ep[1].rx_expect += a2b;
    c->ep[1].tx.bytes += b2a;
    c->ep[0].rx_expect += b2a;
    c->cfg.a2b.bytes += a2b;
    c->cfg.b2a.bytes += b2a;
    if (c->done) {
        c->done = false;
        c->run->ndone--;
    }
    progress(c);
    tsl_ep_kick(&c->ep[0]);
    tsl_ep_kick(&c->ep[1]);
}

void tsl_ep_release(struct tsl_ep *ep)
{
    ep->hold = false;
    if (ep->pcb != NULL && ep->held > 0) {
        uint64_t h = ep->held;
        while (h > 0) {
            uint32_t n = h > 0x40000000u ? 0x40000000u : (uint32_t)h;
            wisp_tcp_recved(ep->pcb, n);
            h -= n;
        }
    }
    ep->held = 0;
    ep->c->last_progress_us = now_us(ep->c);
}

/* --------------------------------------------------------- callbacks */

static wisp_err_t cb_recv(void *arg, struct wisp_tcp_pcb *pcb, struct wisp_pbuf *p, wisp_err_t err)
{
    struct tsl_ep *ep = arg;
    struct tsl_conn *c = ep->c;
    const struct wisp_pbuf *q;
    uint16_t n;
    (void)err;
    if (ep->closed) {
        tsl_fail(c, "side %u: recv callback after close", ep->side);
    }
    if (pcb != ep->pcb) {
        tsl_fail(c, "side %u: recv callback for a foreign PCB", ep->side);
    }
    if (p == NULL) {
        if (ep->rx_fin) {
            tsl_fail(c, "side %u: FIN reported twice", ep->side);
        }
        ep->rx_fin = true;
        if (!rx_complete(ep)) {
            tsl_fail(c, "side %u: FIN after %llu of %llu bytes", ep->side, (unsigned long long)ep->rx_got,
                     (unsigned long long)ep->rx_expect);
        }
        progress(c);
        maybe_close(ep);
        check_done(c);
        return WISP_OK;
    }
    if (ep->refuse) {
        ep->refused++;
        return WISP_ERR_MEM; /* the stack keeps p and offers it again */
    }
    n = p->tot_len;
    ep->rx_calls++;
    if (ep->rx_fin) {
        tsl_fail(c, "side %u: %u bytes after FIN", ep->side, (unsigned)n);
    }
    if (ep->rx_got + n > ep->rx_expect) {
        tsl_fail(c, "side %u: %llu bytes received, only %llu sent", ep->side,
                 (unsigned long long)(ep->rx_got + n), (unsigned long long)ep->rx_expect);
    } else {
        uint64_t off = ep->rx_got;
        for (q = p; q != NULL && !c->failed; q = q->next) {
            size_t k;
            if (ep->cheap_rx != NULL) {
                const uint8_t *want = ep->cheap_rx + off % TSL_CHEAP_PRIME;
                k = q->len; /* q->len <= 65535 < TSL_CHEAP_SPAN */
                if (memcmp(q->payload, want, q->len) != 0) {
                    for (k = 0; k < q->len && q->payload[k] == want[k]; k++) {
                    }
                }
            } else {
                k = tsl_stream_check(ep->rx_seed, off, q->payload, q->len);
            }
            if (k != q->len) {
                tsl_fail(c, "side %u: byte %llu of the stream differs (got 0x%02x)", ep->side,
                         (unsigned long long)(off + k), q->payload[k]);
            }
            off += q->len;
        }
    }
    if (ep->rx_got == 0) {
        ep->rx_first_us = now_us(c);
    }
    ep->rx_got += n;
    ep->rx_last_us = now_us(c);
    wisp_pbuf_free(p);
    if (ep->hold) {
        ep->held += n;
    } else {
        wisp_tcp_recved(pcb, n);
    }
    progress(c);
    check_done(c);
    return WISP_OK;
}

static wisp_err_t cb_sent(void *arg, struct wisp_tcp_pcb *pcb, uint32_t len)
{
    struct tsl_ep *ep = arg;
    struct tsl_conn *c = ep->c;
    (void)pcb;
    if (ep->closed) {
        tsl_fail(c, "side %u: sent callback after close", ep->side);
        return WISP_OK;
    }
    ep->tx_acked += len;
    if (ep->tx_acked > ep->tx_written) {
        tsl_fail(c, "side %u: sent callback reports %llu bytes acknowledged, only %llu written", ep->side,
                 (unsigned long long)ep->tx_acked, (unsigned long long)ep->tx_written);
        return WISP_OK;
    }
    progress(c);
    push(ep);
    maybe_close(ep);
    check_done(c);
    return WISP_OK;
}

static wisp_err_t cb_poll(void *arg, struct wisp_tcp_pcb *pcb)
{
    struct tsl_ep *ep = arg;
    (void)pcb;
    if (ep->closed) {
        tsl_fail(ep->c, "side %u: poll callback after close", ep->side);
        return WISP_OK;
    }
    push(ep);
    maybe_close(ep);
    return WISP_OK;
}

static void cb_err(void *arg, wisp_err_t err)
{
    struct tsl_ep *ep = arg;
    struct tsl_conn *c = ep->c;
    if (ep->closed && !ep->aborting) {
        tsl_fail(c, "side %u: error callback (%s) after close", ep->side, wisp_err_str(err));
    }
    if (ep->err_called) {
        tsl_fail(c, "side %u: error callback twice (%s, then %s)", ep->side, wisp_err_str(ep->err), wisp_err_str(err));
    }
    ep->err_called = true;
    ep->err = err;
    ep->err_us = now_us(c);
    ep->pcb = NULL; /* freed by the stack */
    if (!ep->expect_err) {
        tsl_fail(c, "side %u: connection lost: %s", ep->side, wisp_err_str(err));
    }
    progress(c);
}

static void setup_pcb(struct tsl_ep *ep, struct wisp_tcp_pcb *pcb)
{
    ep->pcb = pcb;
    wisp_tcp_arg(pcb, ep);
    wisp_tcp_recv(pcb, cb_recv);
    wisp_tcp_sent(pcb, cb_sent);
    wisp_tcp_err(pcb, cb_err);
    wisp_tcp_poll(pcb, cb_poll, TSL_POLL_INTERVAL);
    if (ep->c->cfg.nodelay) {
        wisp_tcp_nodelay(pcb, true);
    }
    if (ep->c->cfg.cc != 0 && (wisp_tcp_set_cc(pcb, ep->c->cfg.cc - 1u) != WISP_OK ||
                               wisp_tcp_get_cc(pcb) != ep->c->cfg.cc - 1u)) {
        tsl_fail(ep->c, "side %u: congestion control %u (TSL_CC) not available", ep->side, ep->c->cfg.cc - 1u);
    }
}

static void established(struct tsl_ep *ep)
{
    ep->connected = true;
    ep->est_us = now_us(ep->c);
    progress(ep->c);
    push(ep);
    maybe_close(ep);
    check_done(ep->c);
}

static wisp_err_t cb_connected(void *arg, struct wisp_tcp_pcb *pcb, wisp_err_t err)
{
    struct tsl_ep *ep = arg;
    (void)pcb;
    if (err != WISP_OK) {
        tsl_fail(ep->c, "side %u: connected callback with %s", ep->side, wisp_err_str(err));
        return WISP_OK;
    }
    if (ep->connected) {
        tsl_fail(ep->c, "side %u: connected twice", ep->side);
        return WISP_OK;
    }
    established(ep);
    return WISP_OK;
}

static wisp_err_t cb_accept(void *arg, struct wisp_tcp_pcb *newpcb, wisp_err_t err)
{
    struct tsl_run *r = arg;
    wisp_ipaddr_t ip;
    uint16_t port;
    unsigned i;
    if (err != WISP_OK || newpcb == NULL) {
        return WISP_ERR_VAL;
    }
    wisp_tcp_remote(newpcb, &ip, &port);
    for (i = 0; i < r->nconns; i++) {
        struct tsl_conn *c = r->conns[i];
        struct tsl_ep *b = &c->ep[1];
        if (b->pcb == NULL && !b->connected && c->a_port == port && c->ep[0].node != NULL &&
            sim_ip(c->ep[0].node) == wisp_ipaddr_ip4(&ip) && b->node == r->srv) {
            r->accepted++;
            setup_pcb(b, newpcb);
            if (wisp_tcp_state(newpcb) != WISP_TCP_ESTABLISHED) {
                tsl_fail(c, "accepted PCB in state %s", wisp_tcp_state_str(wisp_tcp_state(newpcb)));
            }
            established(b);
            return WISP_OK;
        }
    }
    r->unexpected++;
    return WISP_ERR_ABRT; /* not ours: the stack aborts it */
}

/* --------------------------------------------------------------- run */

void tsl_init(struct tsl_run *r, struct sim_world *w)
{
    memset(r, 0, sizeof(*r));
    r->w = w;
    r->stop_on_fail = true;
}

void tsl_fini(struct tsl_run *r)
{
    unsigned i, k;
    tsl_unlisten(r);
    for (i = 0; i < r->nconns; i++) {
        struct tsl_conn *c = r->conns[i];
        for (k = 0; k < 2; k++) {
            if (c->ep[k].pcb != NULL && !c->ep[k].closed) {
                tsl_ep_abort(&c->ep[k]);
            }
            free(c->ep[k].buf);
            free(c->ep[k].cheap_tx);
            free(c->ep[k].cheap_rx);
        }
        free(c);
    }
    free(r->conns);
    r->conns = NULL;
    r->nconns = r->cap = 0;
}

wisp_err_t tsl_listen(struct tsl_run *r, struct sim_node *node, uint16_t port, uint8_t backlog)
{
    struct wisp_tcp_pcb *pcb = wisp_tcp_new(sim_stack(node));
    wisp_err_t err = WISP_OK;
    if (pcb == NULL) {
        return WISP_ERR_MEM;
    }
    err = wisp_tcp_bind(pcb, NULL, port);
    if (err != WISP_OK) {
        wisp_tcp_abort(pcb);
        return err;
    }
    r->lpcb = wisp_tcp_listen(pcb, backlog, &err);
    if (r->lpcb == NULL) {
        wisp_tcp_abort(pcb); /* a failed listen keeps the PCB passed in */
        return err != WISP_OK ? err : WISP_ERR_MEM;
    }
    wisp_tcp_arg(r->lpcb, r);
    wisp_tcp_accept(r->lpcb, cb_accept);
    r->srv = node;
    r->port = port;
    return WISP_OK;
}

void tsl_unlisten(struct tsl_run *r)
{
    if (r->lpcb != NULL) {
        (void)wisp_tcp_close(r->lpcb);
        r->lpcb = NULL;
    }
}

/* cfg.cheap: TSL_CHEAP_PRIME bytes of the stream of seed, followed by
 * their first TSL_CHEAP_SPAN bytes again, so that the TSL_CHEAP_SPAN bytes
 * at any offset o of the repeated stream sit contiguously at
 * buf + o % TSL_CHEAP_PRIME. */
static uint8_t *cheap_new(uint64_t seed)
{
    uint8_t *b = malloc((size_t)TSL_CHEAP_PRIME + TSL_CHEAP_SPAN);
    if (b != NULL) {
        tsl_stream_fill(seed, 0, b, TSL_CHEAP_PRIME);
        /* the period again, then the few bytes the span exceeds it by */
        memcpy(b + TSL_CHEAP_PRIME, b, TSL_CHEAP_PRIME);
        memcpy(b + 2u * TSL_CHEAP_PRIME, b, TSL_CHEAP_SPAN - TSL_CHEAP_PRIME);
    }
    return b;
}

static void ep_init(struct tsl_conn *c, unsigned side)
{
    struct tsl_ep *ep = &c->ep[side];
    const struct tsl_dir_cfg *tx = side == 0 ? &c->cfg.a2b : &c->cfg.b2a;
    const struct tsl_dir_cfg *rx = side == 0 ? &c->cfg.b2a : &c->cfg.a2b;
    ep->c = c;
    ep->side = side;
    ep->tx = *tx;
    if (ep->tx.wsize == 0) {
        ep->tx.wsize = TSL_DEFAULT_WSIZE;
    }
    ep->tx_seed = mix64(c->cfg.seed * 4u + 1u + side);
    ep->rx_seed = mix64(c->cfg.seed * 4u + 1u + (side ^ 1u));
    ep->rx_expect = rx->bytes;
    sim_rng_seed(&ep->wrng, ep->tx_seed ^ 0x5bd1e995u);
    if (ep->tx.nocopy) {
        ep->buf_size = TSL_RING_MIN;
        if (ep->buf_size < 2u * WISP_TCP_SND_BUF) {
            ep->buf_size = 2u * WISP_TCP_SND_BUF;
        }
    } else {
        ep->buf_size = ep->tx.wsize;
    }
    if (c->cfg.cheap) {
        ep->cheap_tx = cheap_new(ep->tx_seed);
        ep->cheap_rx = cheap_new(ep->rx_seed);
        if (ep->cheap_tx == NULL || ep->cheap_rx == NULL) {
            tsl_fail(c, "out of memory");
        }
    }
}

struct tsl_conn *tsl_conn_new(struct tsl_run *r, const struct tsl_cfg *cfg)
{
    struct tsl_conn *c;
    if (r->nconns == r->cap) {
        unsigned cap = r->cap ? r->cap * 2u : 8u;
        struct tsl_conn **a = realloc(r->conns, cap * sizeof(*a));
        if (a == NULL) {
            return NULL;
        }
        r->conns = a;
        r->cap = cap;
    }
    c = calloc(1, sizeof(*c));
    if (c == NULL) {
        return NULL;
    }
    c->run = r;
    c->id = r->nconns;
    c->cfg = *cfg;
    if (c->cfg.cc == 0 && getenv("TSL_CC") != NULL && *getenv("TSL_CC") != '\0') {
        int algo = wisp_tcp_cc_by_name(getenv("TSL_CC"));
        c->cfg.cc = algo < 0 ? 0xffu : (uint8_t)(algo + 1);
    }
    if (c->cfg.watchdog_ms == 0) {
        c->cfg.watchdog_ms = TSL_DEFAULT_WATCHDOG_MS;
    }
    c->start_us = c->last_progress_us = sim_now_us(r->w);
    r->conns[r->nconns++] = c;
    ep_init(c, 0);
    ep_init(c, 1);
    return c;
}

struct tsl_conn *tsl_connect(struct tsl_run *r, struct sim_node *client, const struct tsl_cfg *cfg)
{
    struct tsl_conn *c = tsl_conn_new(r, cfg);
    struct tsl_ep *a;
    struct wisp_tcp_pcb *pcb;
    wisp_ipaddr_t dst, lip;
    wisp_err_t err;
    if (c == NULL) {
        return NULL;
    }
    a = &c->ep[0];
    a->node = client;
    c->ep[1].node = r->srv;
    if (r->srv == NULL) {
        tsl_fail(c, "no listener");
        return NULL;
    }
    pcb = wisp_tcp_new(sim_stack(client));
    if (pcb == NULL) {
        tsl_fail(c, "wisp_tcp_new: no PCB");
        return NULL;
    }
    setup_pcb(a, pcb);
    dst = wisp_ipaddr4(sim_ip(r->srv));
    err = wisp_tcp_connect(pcb, &dst, r->port, cb_connected);
    if (err != WISP_OK) {
        tsl_fail(c, "wisp_tcp_connect returned %s", wisp_err_str(err));
        if (a->pcb != NULL) {
            tsl_ep_abort(a);
        }
        return NULL;
    }
    wisp_tcp_local(pcb, &lip, &c->a_port);
    return c;
}

wisp_err_t tsl_ep_open(struct tsl_conn *c, unsigned side, struct sim_node *node, uint16_t local_port, wisp_ip4_t ip,
                       uint16_t port)
{
    struct tsl_ep *ep = &c->ep[side & 1u];
    struct wisp_tcp_pcb *pcb = wisp_tcp_new(sim_stack(node));
    wisp_ipaddr_t dst = wisp_ipaddr4(ip);
    wisp_err_t err;
    ep->node = node;
    if (pcb == NULL) {
        tsl_fail(c, "wisp_tcp_new: no PCB");
        return WISP_ERR_MEM;
    }
    setup_pcb(ep, pcb);
    err = wisp_tcp_bind(pcb, NULL, local_port);
    if (err == WISP_OK) {
        err = wisp_tcp_connect(pcb, &dst, port, cb_connected);
    }
    if (err != WISP_OK) {
        tsl_fail(c, "side %u: bind/connect returned %s", ep->side, wisp_err_str(err));
        tsl_ep_abort(ep);
    }
    if (side == 0) {
        c->a_port = local_port;
    }
    return err;
}

static void watchdog(struct tsl_run *r)
{
    uint64_t t = sim_now_us(r->w);
    unsigned i;
    if (t - r->last_scan_us < TSL_SCAN_US) {
        return;
    }
    r->last_scan_us = t;
    for (i = 0; i < r->nconns; i++) {
        struct tsl_conn *c = r->conns[i];
        if (c->done || c->failed || c->ep[0].hold || c->ep[1].hold || c->ep[0].refuse || c->ep[1].refuse) {
            continue;
        }
        if (t - c->last_progress_us > (uint64_t)c->cfg.watchdog_ms * 1000u) {
            tsl_fail(c, "stalled: no progress for %u ms (A %llu/%llu in, B %llu/%llu in)", (unsigned)c->cfg.watchdog_ms,
                     (unsigned long long)c->ep[0].rx_got, (unsigned long long)c->ep[0].rx_expect,
                     (unsigned long long)c->ep[1].rx_got, (unsigned long long)c->ep[1].rx_expect);
        }
    }
}

bool tsl_all_done(void *arg)
{
    struct tsl_run *r = arg;
    watchdog(r);
    if (r->stop_on_fail && r->nfailed > 0) {
        return true;
    }
    return r->ndone + r->nfailed >= r->nconns;
}

bool tsl_run_until_done(struct tsl_run *r, uint64_t max_us)
{
    unsigned i;
    bool ok;
    uint32_t pace = 0;
    r->last_scan_us = sim_now_us(r->w);
    for (i = 0; i < r->nconns; i++) {
        unsigned k;
        for (k = 0; k < 2; k++) {
            uint32_t p = r->conns[i]->ep[k].tx.pace_us;
            if (p != 0 && (pace == 0 || p < pace)) {
                pace = p;
            }
        }
    }
    if (pace == 0) {
        ok = sim_run_until(r->w, tsl_all_done, r, max_us);
    } else {
        /* Paced applications: advance the world one turn at a time and
         * give every paced sender its turn after each step. */
        uint64_t end = sim_now_us(r->w) + max_us;
        ok = tsl_all_done(r);
        while (!ok && sim_now_us(r->w) < end) {
            uint64_t step = end - sim_now_us(r->w) < pace ? end - sim_now_us(r->w) : pace;
            if (!sim_run_for(r->w, step)) {
                break;
            }
            for (i = 0; i < r->nconns; i++) {
                struct tsl_conn *c = r->conns[i];
                unsigned k;
                for (k = 0; k < 2 && !c->done && !c->failed; k++) {
                    c->ep[k].turn = true;
                    tsl_ep_kick(&c->ep[k]);
                    c->ep[k].turn = false;
                }
            }
            ok = tsl_all_done(r);
        }
    }
    if (sim_error(r->w) != NULL) {
        return false;
    }
    if (!ok) {
        for (i = 0; i < r->nconns; i++) {
            struct tsl_conn *c = r->conns[i];
            if (!c->done && !c->failed) {
                tsl_fail(c, "not done after %llu us (A %llu/%llu in, B %llu/%llu in)", (unsigned long long)max_us,
                         (unsigned long long)c->ep[0].rx_got, (unsigned long long)c->ep[0].rx_expect,
                         (unsigned long long)c->ep[1].rx_got, (unsigned long long)c->ep[1].rx_expect);
            }
        }
    }
    for (i = 0; i < r->nconns; i++) {
        snapshot(&r->conns[i]->ep[0]);
        snapshot(&r->conns[i]->ep[1]);
    }
    return r->nfailed == 0 && r->ndone == r->nconns;
}

double tsl_goodput_mbps(const struct tsl_conn *c, unsigned dir)
{
    const struct tsl_ep *tx = &c->ep[dir & 1u], *rx = &c->ep[(dir & 1u) ^ 1u];
    uint64_t dt;
    if (rx->rx_got == 0 || tx->writes == 0 || rx->rx_last_us <= tx->tx_start_us) {
        return 0.0;
    }
    dt = rx->rx_last_us - tx->tx_start_us;
    return (double)rx->rx_got * 8.0 / (double)dt;
}

static void ep_print(const struct tsl_ep *ep, FILE *f)
{
    const struct wisp_tcp_info *in = &ep->info;
    fprintf(f,
            "  %c: %s tx %llu/%llu written %llu acked (%lu writes, %lu MEM) rx %llu/%llu%s%s%s%s err %s "
            "| state %s mss %u ws %u/%u ts %d sack %d cwnd %lu ssthresh %lu srtt %lu rto %lu snd_wnd %lu "
            "rcv_wnd %lu unacked %lu rtx %lu frec %lu rto_exp %lu ooseq %lu\n",
            ep->side ? 'B' : 'A', ep->connected ? "est" : "not-est", (unsigned long long)ep->tx_written,
            (unsigned long long)ep->tx.bytes, (unsigned long long)ep->tx_acked, ep->writes, ep->write_mem,
            (unsigned long long)ep->rx_got, (unsigned long long)ep->rx_expect, ep->rx_fin ? " fin" : "",
            ep->shut_tx ? " shut" : "", ep->closed ? " closed" : "", ep->hold ? " hold" : "",
            ep->err_called ? wisp_err_str(ep->err) : "-", wisp_tcp_state_str(in->state), (unsigned)in->mss,
            (unsigned)in->snd_wscale, (unsigned)in->rcv_wscale, (int)in->ts_ok, (int)in->sack_ok,
            (unsigned long)in->cwnd, (unsigned long)in->ssthresh, (unsigned long)in->srtt_ms,
            (unsigned long)in->rto_ms, (unsigned long)in->snd_wnd, (unsigned long)in->rcv_wnd,
            (unsigned long)in->unacked, (unsigned long)in->retransmits, (unsigned long)in->fast_recoveries,
            (unsigned long)in->timeouts, (unsigned long)in->ooseq_pbufs);
}

void tsl_conn_print(const struct tsl_conn *c, FILE *f)
{
    fprintf(f, "conn %u (world seed %llu, data seed %llu, a_port %u): %s%s%s\n", c->id,
            (unsigned long long)sim_seed(c->run->w), (unsigned long long)c->cfg.seed, (unsigned)c->a_port,
            c->done ? "done" : (c->failed ? "FAILED: " : "running"), c->failed ? c->why : "", "");
    ep_print(&c->ep[0], f);
    ep_print(&c->ep[1], f);
}

void tsl_run_print_failures(const struct tsl_run *r, FILE *f)
{
    unsigned i, shown = 0;
    for (i = 0; i < r->nconns && shown < 8; i++) {
        if (r->conns[i]->failed || !r->conns[i]->done) {
            tsl_conn_print(r->conns[i], f);
            shown++;
        }
    }
}

/* ------------------------------------------------------------- pools */

unsigned tsl_pools_used(const struct sim_world *w, unsigned i)
{
    struct sim_node *n = sim_node_at(w, i);
    return n != NULL ? wisp_stack_pools_in_use(sim_stack(n)) : 0;
}

void tsl_baseline(const struct sim_world *w, unsigned *base)
{
    unsigned i;
    for (i = 0; i < sim_node_count(w); i++) {
        base[i] = tsl_pools_used(w, i);
    }
}

struct settle_arg {
    struct sim_world *w;
    const unsigned *base;
};

static bool settled(void *arg)
{
    struct settle_arg *a = arg;
    unsigned i;
    for (i = 0; i < sim_node_count(a->w); i++) {
        if (tsl_pools_used(a->w, i) > a->base[i]) {
            return false;
        }
    }
    return true;
}

bool tsl_settle(struct sim_world *w, const unsigned *base, uint64_t max_us, FILE *f)
{
    struct settle_arg a;
    unsigned i, k;
    a.w = w;
    a.base = base;
    if (sim_run_until(w, settled, &a, max_us)) {
        return true;
    }
    if (f != NULL) {
        for (i = 0; i < sim_node_count(w); i++) {
            struct sim_node *n = sim_node_at(w, i);
            const struct wisp_stack *s = sim_stack(n);
            if (tsl_pools_used(w, i) <= base[i]) {
                continue;
            }
            fprintf(f, "tsl: node %s: %u pool element(s) in use, baseline %u:", sim_name(n), tsl_pools_used(w, i),
                    base[i]);
            for (k = 0; k < WISP_POOL_COUNT; k++) {
                if (s->pool[k].used != 0) {
                    fprintf(f, " %s=%u", s->pool[k].name, (unsigned)s->pool[k].used);
                }
            }
            fprintf(f, "\n");
        }
    }
    return false;
}

/* ----------------------------------------------------- segment tools */

bool tsl_parse(const uint8_t *frame, size_t len, struct tsl_seg *seg)
{
    const uint8_t *ip, *t;
    size_t ihl, tot, thl, tlen;
    uint16_t sum;
    memset(seg, 0, sizeof(*seg));
    seg->wscale = -1;
    if (len < WISP_ETH_HLEN + WISP_IP4_HLEN || wisp_rd16(frame + WISP_ETH_OFF_TYPE) != WISP_ETHTYPE_IP4) {
        return false;
    }
    memcpy(seg->dmac, frame, 6);
    memcpy(seg->smac, frame + WISP_ETH_OFF_SRC, 6);
    ip = frame + WISP_ETH_HLEN;
    ihl = wisp_ip4_hdr_hlen(ip);
    tot = wisp_rd16(ip + WISP_IP4_OFF_LEN);
    if (wisp_ip4_hdr_version(ip) != WISP_IP4_VERSION || ihl < WISP_IP4_HLEN || tot < ihl || WISP_ETH_HLEN + tot > len ||
        ip[WISP_IP4_OFF_PROTO] != WISP_IP4_PROTO_TCP ||
        (wisp_rd16(ip + WISP_IP4_OFF_FRAG) & (WISP_IP4_FLAG_MF | WISP_IP4_OFFMASK)) != 0) {
        return false;
    }
    seg->src = wisp_ip4_rd(ip + WISP_IP4_OFF_SRC);
    seg->dst = wisp_ip4_rd(ip + WISP_IP4_OFF_DST);
    t = ip + ihl;
    tlen = tot - ihl;
    if (tlen < WISP_TCP_HLEN) {
        return false;
    }
    thl = (size_t)(t[WISP_TCP_OFF_HLEN] >> 4) * 4u;
    if (thl < WISP_TCP_HLEN || thl > tlen) {
        return false;
    }
    seg->sport = wisp_rd16(t);
    seg->dport = wisp_rd16(t + WISP_TCP_OFF_DPORT);
    seg->seq = wisp_rd32(t + WISP_TCP_OFF_SEQ);
    seg->ack = wisp_rd32(t + WISP_TCP_OFF_ACK);
    seg->flags = (uint8_t)(t[WISP_TCP_OFF_FLAGS] & 0x3fu);
    seg->wnd = wisp_rd16(t + WISP_TCP_OFF_WND);
    seg->hlen = (uint8_t)thl;
    seg->plen = (uint16_t)(tlen - thl);
    sum = wisp_chksum_add(wisp_chksum_pseudo4(seg->src, seg->dst, WISP_IP4_PROTO_TCP, (uint16_t)tlen),
                          wisp_chksum_sum(t, tlen));
    seg->csum_ok = sum == 0xffffu;
    {
        size_t i = WISP_TCP_HLEN;
        while (i < thl) {
            uint8_t kind = t[i], olen;
            if (kind == WISP_TCP_OPT_EOL) {
                break;
            }
            if (kind == WISP_TCP_OPT_NOP) {
                i++;
                continue;
            }
            if (i + 1 >= thl || (olen = t[i + 1]) < 2 || i + olen > thl) {
                break;
            }
            if (kind == WISP_TCP_OPT_MSS && olen == WISP_TCP_OPTLEN_MSS) {
                seg->mss = wisp_rd16(t + i + 2);
            } else if (kind == WISP_TCP_OPT_WS && olen == WISP_TCP_OPTLEN_WS) {
                seg->wscale = t[i + 2];
            } else if (kind == WISP_TCP_OPT_SACK_PERM && olen == WISP_TCP_OPTLEN_SACK_PERM) {
                seg->sack_perm = true;
            } else if (kind == WISP_TCP_OPT_SACK && olen >= 2u + WISP_TCP_SACK_BLOCK_LEN) {
                seg->nsack = (uint8_t)((olen - 2) / WISP_TCP_SACK_BLOCK_LEN);
            } else if (kind == WISP_TCP_OPT_TS && olen == WISP_TCP_OPTLEN_TS) {
                seg->ts = true;
                seg->tsval = wisp_rd32(t + i + 2);
                seg->tsecr = wisp_rd32(t + i + 6);
            }
            i += olen;
        }
    }
    return true;
}

size_t tsl_build(uint8_t *buf, size_t cap, const struct tsl_seg *seg, const uint8_t *opts, uint8_t optlen,
                 const uint8_t *payload, uint16_t plen)
{
    size_t thl = WISP_TCP_HLEN + optlen, tlen = thl + plen, flen = WISP_ETH_HLEN + WISP_IP4_HLEN + tlen;
    uint8_t *ip = buf + WISP_ETH_HLEN, *t = buf + WISP_ETH_HLEN + WISP_IP4_HLEN;
    uint16_t sum;
    if (flen > cap || (optlen % 4u) != 0 || optlen > WISP_TCP_MAX_OPTLEN || tlen > 65515u) {
        return 0;
    }
    memcpy(buf, seg->dmac, 6);
    memcpy(buf + WISP_ETH_OFF_SRC, seg->smac, 6);
    wisp_wr16(buf + WISP_ETH_OFF_TYPE, WISP_ETHTYPE_IP4);
    ip[WISP_IP4_OFF_VHL] = 0x45;
    ip[WISP_IP4_OFF_TOS] = 0;
    wisp_wr16(ip + WISP_IP4_OFF_LEN, (uint16_t)(WISP_IP4_HLEN + tlen));
    wisp_wr16(ip + WISP_IP4_OFF_ID, (uint16_t)(seg->seq ^ (seg->seq >> 16)));
    wisp_wr16(ip + WISP_IP4_OFF_FRAG, 0);
    ip[WISP_IP4_OFF_TTL] = 64;
    ip[WISP_IP4_OFF_PROTO] = WISP_IP4_PROTO_TCP;
    wisp_wr16(ip + WISP_IP4_OFF_CSUM, 0);
    wisp_ip4_wr(ip + WISP_IP4_OFF_SRC, seg->src);
    wisp_ip4_wr(ip + WISP_IP4_OFF_DST, seg->dst);
    wisp_wr16(ip + WISP_IP4_OFF_CSUM, (uint16_t)~wisp_chksum_sum(ip, WISP_IP4_HLEN));
    wisp_wr16(t, seg->sport);
    wisp_wr16(t + WISP_TCP_OFF_DPORT, seg->dport);
    wisp_wr32(t + WISP_TCP_OFF_SEQ, seg->seq);
    wisp_wr32(t + WISP_TCP_OFF_ACK, seg->ack);
    t[WISP_TCP_OFF_HLEN] = (uint8_t)((thl / 4u) << 4);
    t[WISP_TCP_OFF_FLAGS] = seg->flags;
    wisp_wr16(t + WISP_TCP_OFF_WND, seg->wnd);
    wisp_wr16(t + WISP_TCP_OFF_CSUM, 0);
    wisp_wr16(t + WISP_TCP_OFF_URP, 0);
    if (optlen > 0) {
        memcpy(t + WISP_TCP_HLEN, opts, optlen);
    }
    if (plen > 0) {
        memcpy(t + thl, payload, plen);
    }
    sum = wisp_chksum_add(wisp_chksum_pseudo4(seg->src, seg->dst, WISP_IP4_PROTO_TCP, (uint16_t)tlen),
                          wisp_chksum_sum(t, tlen));
    wisp_wr16(t + WISP_TCP_OFF_CSUM, (uint16_t)~sum);
    return flen;
}

bool tsl_inject(struct sim_node *from, const uint8_t *frame, size_t len)
{
    struct wisp_stack *s = sim_stack(from);
    struct wisp_pbuf *p;
    wisp_err_t err;
    if (len == 0 || len > 0xffffu) {
        return false;
    }
    p = wisp_pbuf_alloc(s, WISP_LAYER_RAW, (uint16_t)len, WISP_PBUF_POOL);
    if (p == NULL) {
        return false;
    }
    if (wisp_pbuf_copy_in(p, frame, (uint16_t)len, 0) != WISP_OK) {
        wisp_pbuf_free(p);
        return false;
    }
    err = wisp_netif_tx(sim_netif(from), p);
    wisp_pbuf_free(p);
    return err == WISP_OK;
}

void tsl_log_tap(void *arg, struct sim_node *from, const uint8_t *frame, size_t len, uint64_t t_us)
{
    struct tsl_log *log = arg;
    struct tsl_seg seg;
    if (!tsl_parse(frame, len, &seg) || (seg.plen > 0 && !log->payload_too)) {
        return;
    }
    if (log->n == log->cap) {
        size_t cap = log->cap ? log->cap * 2u : 1024u;
        struct tsl_logent *e = realloc(log->e, cap * sizeof(*e));
        if (e == NULL) {
            return;
        }
        log->e = e;
        log->cap = cap;
    }
    log->e[log->n].t_us = t_us;
    log->e[log->n].from = from;
    log->e[log->n].seg = seg;
    log->n++;
}

void tsl_log_clear(struct tsl_log *log)
{
    log->n = 0;
}

void tsl_log_free(struct tsl_log *log)
{
    free(log->e);
    log->e = NULL;
    log->n = log->cap = 0;
}

void tsl_log_print(const struct tsl_log *log, size_t from, FILE *f)
{
    size_t i;
    for (i = from; i < log->n; i++) {
        const struct tsl_logent *e = &log->e[i];
        const struct tsl_seg *s = &e->seg;
        char a[16], b[16];
        fprintf(f, "%10.6f %s %s:%u > %s:%u [%s%s%s%s%s] seq %lu ack %lu win %u len %u%s\n", (double)e->t_us / 1e6,
                sim_name(e->from), wisp_ip4_ntoa(s->src, a), (unsigned)s->sport, wisp_ip4_ntoa(s->dst, b),
                (unsigned)s->dport, (s->flags & TSL_SYN) ? "S" : "", (s->flags & TSL_FIN) ? "F" : "",
                (s->flags & TSL_RST) ? "R" : "", (s->flags & TSL_PSH) ? "P" : "", (s->flags & TSL_ACK) ? "." : "",
                (unsigned long)s->seq, (unsigned long)s->ack, (unsigned)s->wnd, (unsigned)s->plen,
                s->csum_ok ? "" : " BADSUM");
    }
}

/* ---------------------------------------------------- one-shot run */

/* tsl_xfer's tap: count data-carrying TCP segments per sending node (a
 * few header reads per frame). */
struct seg_count {
    struct sim_node *a;
    struct tsl_result *res;
};

static void count_tap(void *arg, struct sim_node *from, const uint8_t *f, size_t len, uint64_t t_us)
{
    struct seg_count *sc = arg;
    const uint8_t *ip = f + WISP_ETH_HLEN;
    unsigned ihl, tot, thl, side;
    (void)t_us;
    if (len < WISP_ETH_HLEN + 40u || f[WISP_ETH_OFF_TYPE] != 0x08u || f[WISP_ETH_OFF_TYPE + 1u] != 0x00u ||
        ip[WISP_IP4_OFF_PROTO] != 6u) {
        return;
    }
    ihl = (ip[WISP_IP4_OFF_VHL] & 0x0fu) * 4u;
    tot = ((unsigned)ip[WISP_IP4_OFF_LEN] << 8) | ip[WISP_IP4_OFF_LEN + 1u];
    if (len < WISP_ETH_HLEN + ihl + 20u || tot < ihl + 20u) {
        return;
    }
    thl = (ip[ihl + WISP_TCP_OFF_HLEN] >> 4) * 4u;
    if (tot <= ihl + thl) {
        return;
    }
    side = from == sc->a ? 0u : 1u;
    sc->res->data_segs[side]++;
    sc->res->data_bytes[side] += tot - ihl - thl;
}

bool tsl_xfer(uint64_t wseed, const struct sim_link_cfg *link, const struct tsl_cfg *cfg, uint64_t max_us,
              const char *pcap_path, bool quiet, struct tsl_result *res)
{
    struct sim_world *w = sim_world_new(wseed);
    struct sim_node *a, *b;
    struct tsl_run r;
    struct tsl_conn *c;
    unsigned base[2];
    wisp_err_t err;
    struct seg_count sc;

    memset(res, 0, sizeof(*res));
    if (w == NULL) {
        snprintf(res->why, sizeof(res->why), "out of memory");
        return false;
    }
    sim_set_link(w, link);
    if (pcap_path != NULL && sim_pcap_open(w, pcap_path) != 0) {
        fprintf(stderr, "tsl: cannot create %s\n", pcap_path);
    }
    a = sim_node_add(w, "a", "198.18.0.1/24", NULL);
    b = sim_node_add(w, "b", "198.18.0.2/24", NULL);
    if (a == NULL || b == NULL) {
        snprintf(res->why, sizeof(res->why), "sim_node_add failed");
        res->leaked = sim_world_free(w);
        return false;
    }
    sim_set_max_events(w, 50000000ull);
    sc.a = a;
    sc.res = res;
    sim_set_tap(w, count_tap, &sc);
    tsl_init(&r, w);
    r.quiet = quiet;
    err = tsl_listen(&r, b, 5001, 8);
    if (err != WISP_OK) {
        snprintf(res->why, sizeof(res->why), "listen: %s", wisp_err_str(err));
        tsl_fini(&r);
        res->leaked = sim_world_free(w);
        return false;
    }
    (void)sim_run_for(w, 1000); /* gratuitous ARPs out */
    tsl_baseline(w, base);
    c = tsl_connect(&r, a, cfg);
    res->ok = c != NULL && tsl_run_until_done(&r, max_us);
    res->end_us = sim_now_us(w);
    if (c != NULL) {
        res->mbps[0] = tsl_goodput_mbps(c, 0);
        res->mbps[1] = tsl_goodput_mbps(c, 1);
        res->info[0] = c->ep[0].info;
        res->info[1] = c->ep[1].info;
        res->write_mem[0] = c->ep[0].write_mem;
        res->write_mem[1] = c->ep[1].write_mem;
        if (c->failed) {
            snprintf(res->why, sizeof(res->why), "%s", c->why);
        }
    }
    if (sim_error(w) != NULL) {
        snprintf(res->why, sizeof(res->why), "%s", sim_error(w));
    } else if (!res->ok && res->why[0] == '\0') {
        snprintf(res->why, sizeof(res->why), "connection not created");
    }
    if (!res->ok && !quiet) {
        tsl_run_print_failures(&r, stderr);
    }
    if (res->ok) {
        res->settled = tsl_settle(w, base, 2ull * WISP_TCP_MSL_MS * 1000u + 60000000ull, quiet ? NULL : stderr);
        if (!res->settled) {
            snprintf(res->why, sizeof(res->why), "pools not back at baseline after the close");
        }
    }
    res->wire = *sim_counters(w);
    res->events = res->wire.events;
    tsl_fini(&r);
    res->leaked = sim_world_free(w);
    if (res->leaked != 0 && res->why[0] == '\0') {
        snprintf(res->why, sizeof(res->why), "%u pool element(s) leaked", res->leaked);
    }
    return res->ok && res->settled && res->leaked == 0;
}

/* ------------------------------------------------------------ counters */

unsigned long tsl_ctr(const struct wisp_stack *s, const char *name)
{
    unsigned j;
    for (j = 0; j < WISP_CTR_COUNT; j++) {
        if (strcmp(wisp_counter_name(j), name) == 0) {
            return (unsigned long)s->ctr[j];
        }
    }
    fprintf(stderr, "tsl_ctr: no counter %s\n", name);
    abort();
}

void tsl_print_ctrs(const char *label, const struct wisp_stack *s, const char *const *want, unsigned n)
{
    unsigned i;
    printf("  %s:", label);
    for (i = 0; i < n; i++) {
        printf(" %s %lu", want[i], tsl_ctr(s, want[i]));
    }
    printf("; rx blocks high %u/%u, tx blocks high %u/%u\n", (unsigned)s->pool[WISP_POOL_PBUF_RX].high,
           (unsigned)s->pool[WISP_POOL_PBUF_RX].count, (unsigned)s->pool[WISP_POOL_PBUF_TX].high,
           (unsigned)s->pool[WISP_POOL_PBUF_TX].count);
}
