/**
 * @file services.c
 * UDP echo (RFC 862) and UDP discard (RFC 863), TCP echo (RFC 862), TCP
 * discard (RFC 863) and TCP chargen (RFC 864) on the raw API, organised as
 * a service table. Portable: no stdio, no allocation; all state in the
 * caller's struct wisp_services (TCP connections in its fixed pool of
 * records).
 */
#include "services.h"
#include "reclaim.h"

/* Source ports of services that answer every datagram: echoing to one of
 * them would make two servers bounce a datagram forever. */
static bool reflector_port(uint16_t port)
{
    return port == 7u || port == 9u || port == 13u || port == 17u || port == 19u || port == 37u;
}

/* ---------------------------------------------------------------- echo */

/* RFC 862 "UDP Based Echo Service": "When a datagram is received, the data
 * from it is sent back in an answering datagram." */
static void udp_echo_recv(void *arg, struct wisp_udp_pcb *pcb, struct wisp_pbuf *p, const wisp_ipaddr_t *src,
                          uint16_t port, const struct wisp_ip_info *ip)
{
    struct wisp_services *svc = (struct wisp_services *)arg;
    struct wisp_stack *s = svc->stack;
    uint16_t len = p->tot_len;
    uint8_t tos = wisp_udp_get_tos(pcb);
    wisp_err_t err;

    /* RFC 768: source port 0 means the sender expects no reply; broadcast
     * and multicast requests are not answered (no amplification); nor are
     * other reflecting services (loop). */
    if (port == 0 || ip->bcast || ip->mcast || reflector_port(port)) {
        svc->udp_echo_st.dropped++;
        wisp_pbuf_free(p);
        return;
    }

    /* Answer from the address the request was sent to, with its DSCP. */
    wisp_udp_set_tos(pcb, (uint8_t)(ip->tos & 0xFCu));
    /* Zero-copy: the received buffer goes back out; UDP writes its header
     * into the headroom left by the headers that were stripped. */
    err = wisp_udp_sendto_from(pcb, p, &ip->dst, src, port);
    if (err == WISP_ERR_BUF) {
        /* Not writable in place after all: send a copy. */
        struct wisp_pbuf *q = wisp_pbuf_clone(s, WISP_LAYER_TRANSPORT, p);
        err = (q != NULL) ? wisp_udp_sendto_from(pcb, q, &ip->dst, src, port) : WISP_ERR_MEM;
        wisp_pbuf_free(q);
    }
    wisp_udp_set_tos(pcb, tos);
    wisp_pbuf_free(p);

    if (err == WISP_OK) {
        svc->udp_echo_st.datagrams++;
        svc->udp_echo_st.bytes += len;
    } else {
        svc->udp_echo_st.dropped++;
        svc->udp_echo_st.send_err++;
    }
}

/* ------------------------------------------------------------- discard */

/* RFC 863 "UDP Based Discard Service": "When a datagram is received, it is
 * thrown away. No response is sent." */
static void udp_discard_recv(void *arg, struct wisp_udp_pcb *pcb, struct wisp_pbuf *p, const wisp_ipaddr_t *src,
                             uint16_t port, const struct wisp_ip_info *ip)
{
    struct wisp_services *svc = (struct wisp_services *)arg;
    WISP_UNUSED(pcb);
    WISP_UNUSED(src);
    WISP_UNUSED(port);
    WISP_UNUSED(ip);
    svc->udp_discard_st.datagrams++;
    svc->udp_discard_st.bytes += p->tot_len;
    wisp_pbuf_free(p);
}

/* ----------------------------------------------------------------- TCP */

/* RFC 864 "TCP Based Character Generator Service": the 95 printing ASCII
 * characters as a circle (character 0 = space follows character 94 = '~'),
 * followed by its first 71 characters again, so that every 72-character
 * line (starting at any character) is contiguous here: line i is
 * chargen_ring[i mod 95 .. i mod 95 + 71]. */
static const char chargen_ring[] =
    " !\"#$%&'()*+,-./0123456789:;<=>?@ABCDEFGHIJKLMNOPQRSTUVWXYZ[\\]^_`abcdefghijklmnopqrstuvwxyz{|}~"
    " !\"#$%&'()*+,-./0123456789:;<=>?@ABCDEFGHIJKLMNOPQRSTUVWXYZ[\\]^_`abcdef";
static const char chargen_crlf[] = "\r\n";

/* Compile-time check of the ring's length (95 + 71 characters). */
typedef char chargen_ring_len_check[(sizeof chargen_ring == 95u + WISP_CHARGEN_LINE - 1u + 1u) ? 1 : -1];

#define CHARGEN_LINE_BYTES (WISP_CHARGEN_LINE + 2u)   /* 72 characters, CR, LF */

/* Upper bound of writes per pump call (a guard: the send buffer bounds the
 * loop anyway, each write takes at least one byte of it). */
#define SVC_MAX_WRITES 4096u

uint8_t wisp_chargen_byte(uint32_t off)
{
    uint32_t pos = off % WISP_CHARGEN_PERIOD;
    uint32_t line = pos / CHARGEN_LINE_BYTES, col = pos % CHARGEN_LINE_BYTES;
    if (col < WISP_CHARGEN_LINE) {
        return (uint8_t)chargen_ring[line + col];
    }
    return (uint8_t)chargen_crlf[col - WISP_CHARGEN_LINE];
}

static const char *const tcp_service_names[WISP_TCP_SVC_COUNT] = { "echo", "discard", "chargen" };
static const uint16_t tcp_service_ports[WISP_TCP_SVC_COUNT] = { WISP_PORT_ECHO, WISP_PORT_DISCARD,
                                                                WISP_PORT_CHARGEN };

/* How a record ends (which counter it goes to). */
enum conn_end { END_CLOSED, END_ERROR, END_ABORTED };

static struct wisp_tcp_svc_conn *conn_alloc(struct wisp_services *svc, struct wisp_tcp_service *t)
{
    unsigned i;
    for (i = 0; i < WISP_SERVICES_TCP_CONNS; i++) {
        struct wisp_tcp_svc_conn *c = &svc->conns[i];
        if (c->service == NULL) {
            memset(c, 0, sizeof(*c));
            c->service = t;
            return c;
        }
    }
    return NULL;
}

/* Return the record to the pool: release the queued echo data, count, and
 * tell the report hook. The PCB is not touched (it is closed, aborted or
 * already freed by the stack). */
static void conn_free(struct wisp_tcp_svc_conn *c, enum conn_end end, wisp_err_t how,
                      const struct wisp_tcp_info *info)
{
    struct wisp_tcp_service *t = c->service;
    struct wisp_services *svc = t->svc;

    while (c->pend_count > 0) {
        wisp_pbuf_free(c->pending[c->pend_head]);
        c->pending[c->pend_head] = NULL;
        c->pend_head = (uint8_t)((c->pend_head + 1u) % WISP_SERVICES_ECHO_CHAINS);
        c->pend_count--;
    }
    if (t->st.active > 0) {
        t->st.active--;
    }
    if (c->timed_out) {
        t->st.timeouts++;
    }
    switch (end) {
    case END_CLOSED:
        t->st.closed++;
        break;
    case END_ERROR:
        t->st.resets++;
        break;
    default:
        t->st.aborted++;
        break;
    }
    if (svc->report != NULL) {
        struct wisp_tcp_conn_report r;
        r.service = tcp_service_names[t->id];
        r.port = tcp_service_ports[t->id];
        r.remote_ip = c->remote_ip;
        r.remote_port = c->remote_port;
        r.bytes_rx = c->bytes_rx;
        r.bytes_tx = c->bytes_tx;
        r.how = how;
        r.have_info = info != NULL;
        if (info != NULL) {
            r.info = *info;
        } else {
            memset(&r.info, 0, sizeof(r.info));
        }
        svc->report(svc->report_ctx, &r);
    }
    memset(c, 0, sizeof(*c));
}

/* Abort the connection (RST), free the record. The error callback that
 * wisp_tcp_abort calls finds no argument any more and does nothing. The
 * return value is what a callback must return after an abort. */
static wisp_err_t conn_abort(struct wisp_tcp_svc_conn *c)
{
    struct wisp_tcp_pcb *pcb = c->pcb;
    struct wisp_tcp_info info;
    wisp_tcp_get_info(pcb, &info);
    wisp_tcp_arg(pcb, NULL);
    wisp_tcp_abort(pcb);
    conn_free(c, END_ABORTED, WISP_ERR_ABRT, &info);
    return WISP_ERR_ABRT;
}

/* Close our direction (FIN after the queued data) and give the PCB back to
 * the stack: no callbacks after close (the argument is cleared first, for
 * safety). WISP_ERR_MEM: retried from the poll callback. */
static wisp_err_t conn_close(struct wisp_tcp_svc_conn *c)
{
    struct wisp_tcp_pcb *pcb = c->pcb;
    struct wisp_tcp_info info;
    wisp_err_t err;

    wisp_tcp_get_info(pcb, &info);
    wisp_tcp_arg(pcb, NULL);
    err = wisp_tcp_close(pcb);
    if (err == WISP_ERR_MEM) {
        wisp_tcp_arg(pcb, c);
        c->close_pending = 1;
        return WISP_OK;
    }
    if (err != WISP_OK) {
        wisp_tcp_arg(pcb, c);
        return conn_abort(c);
    }
    conn_free(c, END_CLOSED, WISP_OK, &info);
    return WISP_OK;
}

/* Oldest buffer of the echo queue, or NULL. */
static struct wisp_pbuf *echo_head(const struct wisp_tcp_svc_conn *c)
{
    return c->pend_count > 0 ? c->pending[c->pend_head] : NULL;
}

/* Take the oldest buffer off the echo queue. The queue holds each chain
 * through its head; the rest keeps a reference of its own (ref, then the
 * free of the head drops the head's hold on it). */
static void echo_pop(struct wisp_tcp_svc_conn *c)
{
    struct wisp_pbuf *b = c->pending[c->pend_head];
    struct wisp_pbuf *next = b->next;
    if (next != NULL) {
        wisp_pbuf_ref(next);
    }
    wisp_pbuf_free(b);
    if (next != NULL) {
        c->pending[c->pend_head] = next;
    } else {
        c->pending[c->pend_head] = NULL;
        c->pend_head = (uint8_t)((c->pend_head + 1u) % WISP_SERVICES_ECHO_CHAINS);
        c->pend_count--;
    }
    c->pending_off = 0;
}

/* Queue received data p for echoing: appended to the newest chain while its
 * 16-bit length allows, else as a new chain. False when the ring is full
 * (p is not taken). */
static bool echo_queue(struct wisp_tcp_svc_conn *c, struct wisp_pbuf *p)
{
    if (c->pend_count > 0) {
        unsigned tail = (c->pend_head + c->pend_count - 1u) % WISP_SERVICES_ECHO_CHAINS;
        if ((uint32_t)c->pending[tail]->tot_len + p->tot_len <= 0xFFFFu) {
            wisp_pbuf_cat(c->pending[tail], p);
            return true;
        }
    }
    if (c->pend_count >= WISP_SERVICES_ECHO_CHAINS) {
        return false;
    }
    if (c->pend_count == 0) {
        c->pending_off = 0;
    }
    c->pending[(c->pend_head + c->pend_count) % WISP_SERVICES_ECHO_CHAINS] = p;
    c->pend_count++;
    return true;
}

/* RFC 862 "TCP Based Echo Service": "Once a connection is established any
 * data received is sent back." Move queued received bytes into the send
 * buffer (copied) as far as it has room, reopen the receive window by what
 * was moved (so the client is flow-controlled by our send side), and close
 * our side once the peer has closed and everything is queued. */
static wisp_err_t echo_pump(struct wisp_tcp_svc_conn *c)
{
    struct wisp_tcp_service *t = c->service;
    uint32_t moved = 0;
    unsigned writes = 0;
    wisp_err_t err = WISP_OK;

    while (echo_head(c) != NULL && writes < SVC_MAX_WRITES) {
        struct wisp_pbuf *b = echo_head(c);
        uint32_t avail = (uint32_t)b->len - c->pending_off;
        uint32_t room, n;
        uint8_t flags = WISP_TCP_WRITE_COPY;

        if (avail == 0) {
            echo_pop(c);
            continue;
        }
        room = wisp_tcp_sndbuf(c->pcb);
        if (room == 0) {
            break;
        }
        n = avail < room ? avail : room;
        if (n < avail || b->next != NULL || c->pend_count > 1) {
            flags |= WISP_TCP_WRITE_MORE;
        }
        writes++;
        err = wisp_tcp_write(c->pcb, b->payload + c->pending_off, n, flags);
        if (err == WISP_ERR_MEM) {
            /* Segment pool or buffer full: the sent or poll callback retries. */
            err = WISP_OK;
            break;
        }
        if (err != WISP_OK) {
            break;
        }
        c->pending_off = (uint16_t)(c->pending_off + n);
        moved += n;
        c->bytes_tx += n;
        t->st.bytes_tx += n;
        if (c->pending_off == b->len) {
            echo_pop(c);
        }
    }
    if (err != WISP_OK) {
        return conn_abort(c);
    }
    if (moved != 0) {
        wisp_tcp_recved(c->pcb, moved);
    }
    /* Send now (from inside a callback of the stack, the stack sends once
     * it has processed the whole segment). */
    (void)wisp_tcp_output(c->pcb);
    if (c->pend_count == 0 && c->peer_closed) {
        return conn_close(c);
    }
    return WISP_OK;
}

/* RFC 864: send the pattern as long as the send buffer has room; the sent
 * callback refills it. The writes copy from the constant ring, 72 characters
 * and then CR LF per line (writes are coalesced into full segments). */
static wisp_err_t chargen_pump(struct wisp_tcp_svc_conn *c, bool in_accept)
{
    struct wisp_tcp_service *t = c->service;
    unsigned writes = 0;
    wisp_err_t err = WISP_OK;

    if (c->peer_closed) {
        return WISP_OK;
    }
    while (writes < SVC_MAX_WRITES) {
        uint32_t room = wisp_tcp_sndbuf(c->pcb);
        uint32_t line = c->chargen_pos / CHARGEN_LINE_BYTES, col = c->chargen_pos % CHARGEN_LINE_BYTES;
        const char *src;
        uint32_t n;

        if (room == 0) {
            break;
        }
        if (col < WISP_CHARGEN_LINE) {
            src = &chargen_ring[line + col];
            n = WISP_CHARGEN_LINE - col;
        } else {
            src = &chargen_crlf[col - WISP_CHARGEN_LINE];
            n = CHARGEN_LINE_BYTES - col;
        }
        if (n > room) {
            n = room;
        }
        writes++;
        err = wisp_tcp_write(c->pcb, src, n, WISP_TCP_WRITE_COPY | WISP_TCP_WRITE_MORE);
        if (err == WISP_ERR_MEM) {
            err = WISP_OK;
            break;
        }
        if (err != WISP_OK) {
            break;
        }
        c->chargen_pos = (uint16_t)((c->chargen_pos + n) % WISP_CHARGEN_PERIOD);
        c->bytes_tx += n;
        t->st.bytes_tx += n;
    }
    if (err != WISP_OK) {
        /* In the accept callback the stack aborts a PCB that is declined:
         * hand it the error instead of aborting here. */
        return in_accept ? err : conn_abort(c);
    }
    (void)wisp_tcp_output(c->pcb);   /* see echo_pump */
    return WISP_OK;
}

/* From the sent and poll callbacks: more data into the send buffer. */
static wisp_err_t tcp_svc_pump(struct wisp_tcp_svc_conn *c)
{
    if (c->close_pending) {
        return conn_close(c);
    }
    switch (c->service->id) {
    case WISP_TCP_SVC_ECHO:
        return echo_pump(c);
    case WISP_TCP_SVC_CHARGEN:
        return chargen_pump(c, false);
    default:
        return WISP_OK;
    }
}

/* The poll callback's idle check: WISP_OK and *ended false when the
 * connection lives on. */
static wisp_err_t idle_check(struct wisp_tcp_svc_conn *c, bool *ended)
{
    struct wisp_services *svc = c->service->svc;
    uint32_t now = wisp_now(svc->stack);

    *ended = false;
    if (now - c->last_ms < svc->opt.idle_ms) {
        return WISP_OK;
    }
    *ended = true;
    c->timed_out = 1;
    if (c->pend_count == 0 && wisp_tcp_sndbuf(c->pcb) == (uint32_t)WISP_TCP_SND_BUF &&
        c->service->id != WISP_TCP_SVC_CHARGEN) {
        /* Nothing of ours waits: a graceful close (FIN). */
        return conn_close(c);
    }
    /* Our data does not move (the peer reads nothing): reset. */
    return conn_abort(c);
}

static wisp_err_t tcp_svc_recv(void *arg, struct wisp_tcp_pcb *pcb, struct wisp_pbuf *p, wisp_err_t err)
{
    struct wisp_tcp_svc_conn *c = (struct wisp_tcp_svc_conn *)arg;
    struct wisp_tcp_service *t;
    uint16_t len;

    WISP_UNUSED(pcb);
    if (c == NULL || (p != NULL && err != WISP_OK)) {
        /* No record (cannot happen after close: no callbacks then). */
        wisp_pbuf_free(p);
        return WISP_OK;
    }
    t = c->service;
    if (p == NULL) {
        /* The peer closed its direction: close ours (RFC 9293 §3.10.4). */
        c->peer_closed = 1;
        if (t->id == WISP_TCP_SVC_ECHO) {
            return echo_pump(c);
        }
        return conn_close(c);
    }
    len = p->tot_len;
    c->last_ms = wisp_now(t->svc->stack);
    if (t->id == WISP_TCP_SVC_ECHO) {
        if (!echo_queue(c, p)) {
            /* Every chain in use (cannot happen within the window the
             * default WISP_SERVICES_ECHO_CHAINS covers): refuse, the stack
             * offers it again later. */
            return WISP_ERR_MEM;
        }
        c->bytes_rx += len;
        t->st.bytes_rx += len;
        return echo_pump(c);
    }
    /* RFC 863 "TCP Based Discard Service": "Once a connection is
     * established any data received is thrown away." Chargen: RFC 864
     * "Data received is thrown away". */
    c->bytes_rx += len;
    t->st.bytes_rx += len;
    wisp_pbuf_free(p);
    wisp_tcp_recved(c->pcb, len);
    return WISP_OK;
}

static wisp_err_t tcp_svc_sent(void *arg, struct wisp_tcp_pcb *pcb, uint32_t len)
{
    struct wisp_tcp_svc_conn *c = (struct wisp_tcp_svc_conn *)arg;
    WISP_UNUSED(pcb);
    WISP_UNUSED(len);
    if (c == NULL) {
        return WISP_OK;
    }
    c->last_ms = wisp_now(c->service->svc->stack);
    return tcp_svc_pump(c);
}

static wisp_err_t tcp_svc_poll(void *arg, struct wisp_tcp_pcb *pcb)
{
    struct wisp_tcp_svc_conn *c = (struct wisp_tcp_svc_conn *)arg;
    bool ended;
    wisp_err_t err;
    WISP_UNUSED(pcb);
    if (c == NULL) {
        return WISP_OK;
    }
    if (!c->close_pending) {
        err = idle_check(c, &ended);
        if (ended) {
            return err;
        }
    }
    return tcp_svc_pump(c);
}

/* Admission of a new connection from ip (services.h, reclaim.h): a record
 * for it, after reclaiming one if need be, or NULL (refused, counted). */
static struct wisp_tcp_svc_conn *conn_admit(struct wisp_tcp_service *t, const wisp_ipaddr_t *ip)
{
    struct wisp_services *svc = t->svc;
    struct wisp_reclaim_rec r[WISP_SERVICES_TCP_CONNS];
    struct wisp_tcp_svc_conn *c = NULL;
    uint32_t now = wisp_now(svc->stack);
    bool capped;
    unsigned i;
    int v = -1;

    for (i = 0; i < WISP_SERVICES_TCP_CONNS; i++) {
        const struct wisp_tcp_svc_conn *x = &svc->conns[i];
        r[i].used = x->service != NULL;
        r[i].takeable = x->service != NULL && x->pcb != NULL && !x->close_pending;
        r[i].ip = wisp_ipaddr_ip4(&x->remote_ip);
        r[i].idle_ms = now - x->last_ms;
    }
    capped = wisp_reclaim_count(r, WISP_SERVICES_TCP_CONNS, wisp_ipaddr_ip4(ip)) >= svc->opt.per_source;
    if (!capped) {
        c = conn_alloc(svc, t);
    }
    if (c == NULL) {
        v = wisp_reclaim_pick(r, WISP_SERVICES_TCP_CONNS, wisp_ipaddr_ip4(ip), capped, svc->opt.reclaim_ms);
    }
    if (v >= 0) {
        svc->conns[v].service->st.reclaimed++;
        (void)conn_abort(&svc->conns[v]);
        c = conn_alloc(svc, t);
    }
    if (c == NULL) {
        t->st.refused++;
        if (capped) {
            t->st.capped++;
        }
    }
    return c;
}

/* The stack freed the PCB (reset, retries exhausted, ...). */
static void tcp_svc_err(void *arg, wisp_err_t err)
{
    struct wisp_tcp_svc_conn *c = (struct wisp_tcp_svc_conn *)arg;
    if (c == NULL) {
        return;
    }
    c->pcb = NULL;
    conn_free(c, END_ERROR, err, NULL);
}

static wisp_err_t tcp_svc_accept(void *arg, struct wisp_tcp_pcb *newpcb, wisp_err_t err)
{
    struct wisp_tcp_service *t = (struct wisp_tcp_service *)arg;
    struct wisp_tcp_svc_conn *c;

    if (t == NULL || newpcb == NULL || err != WISP_OK) {
        return err != WISP_OK ? err : WISP_ERR_VAL;
    }
    {
        wisp_ipaddr_t rip;
        uint16_t rport = 0;
        memset(&rip, 0, sizeof rip);
        wisp_tcp_remote(newpcb, &rip, &rport);
        c = conn_admit(t, &rip);
        if (c == NULL) {
            /* No record (or the address is at its cap): decline, the
             * stack resets the connection. */
            return WISP_ERR_MEM;
        }
        c->remote_ip = rip;
        c->remote_port = rport;
    }
    c->pcb = newpcb;
    c->last_ms = wisp_now(t->svc->stack);
    t->st.connections++;
    t->st.active++;
    wisp_tcp_arg(newpcb, c);
    wisp_tcp_recv(newpcb, tcp_svc_recv);
    wisp_tcp_sent(newpcb, tcp_svc_sent);
    wisp_tcp_err(newpcb, tcp_svc_err);
    wisp_tcp_poll(newpcb, tcp_svc_poll, WISP_SERVICES_TCP_POLL);
    if (t->id == WISP_TCP_SVC_CHARGEN) {
        /* RFC 864: "Once a connection is established a stream of data is
         * sent out the connection". */
        err = chargen_pump(c, true);
        if (err != WISP_OK) {
            /* Cannot send: decline (the stack aborts it). */
            wisp_tcp_arg(newpcb, NULL);
            conn_free(c, END_ABORTED, err, NULL);
            return err;
        }
    }
    return WISP_OK;
}

static wisp_err_t tcp_listen_open(struct wisp_services *svc, unsigned id)
{
    struct wisp_tcp_service *t = &svc->tcp[id];
    struct wisp_tcp_pcb *pcb, *l;
    wisp_err_t err;

    if (t->listener != NULL) {
        return WISP_ERR_ALREADY;
    }
    t->svc = svc;
    t->id = (uint8_t)id;
    pcb = wisp_tcp_new(svc->stack);
    if (pcb == NULL) {
        return WISP_ERR_MEM;
    }
    err = wisp_tcp_bind(pcb, NULL, tcp_service_ports[id]);
    if (err != WISP_OK) {
        (void)wisp_tcp_close(pcb);
        return err;
    }
    l = wisp_tcp_listen(pcb, (uint8_t)WISP_SERVICES_TCP_BACKLOG, &err);
    if (l == NULL) {
        (void)wisp_tcp_close(pcb);
        return err != WISP_OK ? err : WISP_ERR_MEM;
    }
    wisp_tcp_arg(l, t);
    wisp_tcp_accept(l, tcp_svc_accept);
    t->listener = l;
    return WISP_OK;
}

/* Close the listener (no new connections) and abort the open ones. */
static void tcp_service_close(struct wisp_services *svc, unsigned id)
{
    struct wisp_tcp_service *t = &svc->tcp[id];
    unsigned i;

    if (t->listener != NULL) {
        wisp_tcp_arg(t->listener, NULL);
        (void)wisp_tcp_close(t->listener);
        t->listener = NULL;
    }
    for (i = 0; i < WISP_SERVICES_TCP_CONNS; i++) {
        struct wisp_tcp_svc_conn *c = &svc->conns[i];
        if (c->service == t && c->pcb != NULL) {
            (void)conn_abort(c);
        }
    }
}

static wisp_err_t tcp_echo_start(struct wisp_services *svc)
{
    return tcp_listen_open(svc, WISP_TCP_SVC_ECHO);
}

static void tcp_echo_stop(struct wisp_services *svc)
{
    tcp_service_close(svc, WISP_TCP_SVC_ECHO);
}

static wisp_err_t tcp_discard_start(struct wisp_services *svc)
{
    return tcp_listen_open(svc, WISP_TCP_SVC_DISCARD);
}

static void tcp_discard_stop(struct wisp_services *svc)
{
    tcp_service_close(svc, WISP_TCP_SVC_DISCARD);
}

static wisp_err_t tcp_chargen_start(struct wisp_services *svc)
{
    return tcp_listen_open(svc, WISP_TCP_SVC_CHARGEN);
}

static void tcp_chargen_stop(struct wisp_services *svc)
{
    tcp_service_close(svc, WISP_TCP_SVC_CHARGEN);
}

/* --------------------------------------------------------------- table */

static wisp_err_t udp_open(struct wisp_services *svc, struct wisp_udp_pcb **slot, uint16_t port,
                           wisp_udp_recv_fn fn)
{
    struct wisp_udp_pcb *pcb;
    wisp_err_t err;
    if (*slot != NULL) {
        return WISP_ERR_ALREADY;
    }
    pcb = wisp_udp_new(svc->stack);
    if (pcb == NULL) {
        return WISP_ERR_MEM;
    }
    err = wisp_udp_bind(pcb, NULL, port);
    if (err != WISP_OK) {
        wisp_udp_remove(pcb);
        return err;
    }
    wisp_udp_recv(pcb, fn, svc);
    *slot = pcb;
    return WISP_OK;
}

static void udp_close(struct wisp_udp_pcb **slot)
{
    if (*slot != NULL) {
        wisp_udp_remove(*slot);
        *slot = NULL;
    }
}

static wisp_err_t udp_echo_start(struct wisp_services *svc)
{
    return udp_open(svc, &svc->udp_echo, WISP_PORT_ECHO, udp_echo_recv);
}

static void udp_echo_stop(struct wisp_services *svc)
{
    udp_close(&svc->udp_echo);
}

static wisp_err_t udp_discard_start(struct wisp_services *svc)
{
    return udp_open(svc, &svc->udp_discard, WISP_PORT_DISCARD, udp_discard_recv);
}

static void udp_discard_stop(struct wisp_services *svc)
{
    udp_close(&svc->udp_discard);
}

static const struct wisp_service_desc service_table[] = {
    { "echo", WISP_IP4_PROTO_UDP, WISP_PORT_ECHO, udp_echo_start, udp_echo_stop },
    { "discard", WISP_IP4_PROTO_UDP, WISP_PORT_DISCARD, udp_discard_start, udp_discard_stop },
    { "echo", WISP_IP4_PROTO_TCP, WISP_PORT_ECHO, tcp_echo_start, tcp_echo_stop },
    { "discard", WISP_IP4_PROTO_TCP, WISP_PORT_DISCARD, tcp_discard_start, tcp_discard_stop },
    { "chargen", WISP_IP4_PROTO_TCP, WISP_PORT_CHARGEN, tcp_chargen_start, tcp_chargen_stop },
};

const struct wisp_service_desc *wisp_services_table(unsigned *n)
{
    if (n != NULL) {
        *n = (unsigned)WISP_ARRAY_SIZE(service_table);
    }
    return service_table;
}

wisp_err_t wisp_services_udp_start(struct wisp_stack *s, struct wisp_services *svc)
{
    unsigned i;
    if (s == NULL || svc == NULL) {
        return WISP_ERR_ARG;
    }
    memset(svc, 0, sizeof(*svc));
    svc->stack = s;
    for (i = 0; i < WISP_ARRAY_SIZE(service_table); i++) {
        wisp_err_t err;
        if (service_table[i].proto != WISP_IP4_PROTO_UDP) {
            continue;
        }
        err = service_table[i].start(svc);
        if (err != WISP_OK) {
            wisp_services_udp_stop(svc);
            return err;
        }
    }
    return WISP_OK;
}

void wisp_services_udp_stop(struct wisp_services *svc)
{
    unsigned i;
    if (svc == NULL || svc->stack == NULL) {
        return;
    }
    for (i = 0; i < WISP_ARRAY_SIZE(service_table); i++) {
        if (service_table[i].proto == WISP_IP4_PROTO_UDP) {
            service_table[i].stop(svc);
        }
    }
}

void wisp_services_opts_resolve(struct wisp_services_opts *o, unsigned max_records)
{
    /* at most 2^31 - 1 ms: differences of the 32-bit ms clock stay valid */
    if (o->idle_ms == 0 || o->idle_ms > WISP_RECLAIM_OFF) {
        o->idle_ms = o->idle_ms == 0 ? WISP_SERVICES_IDLE_MS : WISP_RECLAIM_OFF;
    }
    if (o->reclaim_ms == 0 || o->reclaim_ms > WISP_RECLAIM_OFF) {
        o->reclaim_ms = o->reclaim_ms == 0 ? WISP_SERVICES_RECLAIM_MS : WISP_RECLAIM_OFF;
    }
    if (o->per_source == 0) {
        o->per_source = (uint16_t)max_records;
    }
    if (o->per_source > max_records) {
        o->per_source = (uint16_t)max_records;
    }
}

wisp_err_t wisp_services_tcp_start(struct wisp_services *svc)
{
    unsigned i;
    if (svc == NULL || svc->stack == NULL) {
        return WISP_ERR_ARG;
    }
    wisp_services_opts_resolve(&svc->opt, WISP_SERVICES_TCP_CONNS);
    for (i = 0; i < WISP_ARRAY_SIZE(service_table); i++) {
        wisp_err_t err;
        if (service_table[i].proto != WISP_IP4_PROTO_TCP) {
            continue;
        }
        err = service_table[i].start(svc);
        if (err != WISP_OK) {
            wisp_services_tcp_stop(svc);
            return err;
        }
    }
    return WISP_OK;
}

void wisp_services_tcp_stop(struct wisp_services *svc)
{
    unsigned i;
    if (svc == NULL || svc->stack == NULL) {
        return;
    }
    for (i = 0; i < WISP_ARRAY_SIZE(service_table); i++) {
        if (service_table[i].proto == WISP_IP4_PROTO_TCP) {
            service_table[i].stop(svc);
        }
    }
}

wisp_err_t wisp_services_start(struct wisp_stack *s, struct wisp_services *svc)
{
    wisp_err_t err = wisp_services_udp_start(s, svc);
    if (err != WISP_OK) {
        return err;
    }
    err = wisp_services_tcp_start(svc);
    if (err != WISP_OK) {
        wisp_services_udp_stop(svc);
    }
    return err;
}

wisp_err_t wisp_services_start_opts(struct wisp_stack *s, struct wisp_services *svc,
                                    const struct wisp_services_opts *o)
{
    wisp_err_t err = wisp_services_udp_start(s, svc);
    if (err != WISP_OK) {
        return err;
    }
    if (o != NULL) {
        svc->opt = *o;
    }
    err = wisp_services_tcp_start(svc);
    if (err != WISP_OK) {
        wisp_services_udp_stop(svc);
    }
    return err;
}

void wisp_services_stop(struct wisp_services *svc)
{
    wisp_services_tcp_stop(svc);
    wisp_services_udp_stop(svc);
}

void wisp_services_set_report(struct wisp_services *svc, wisp_tcp_conn_report_fn fn, void *ctx)
{
    if (svc != NULL) {
        svc->report = fn;
        svc->report_ctx = ctx;
    }
}

unsigned wisp_services_tcp_active(const struct wisp_services *svc)
{
    unsigned i, n = 0;
    if (svc == NULL) {
        return 0;
    }
    for (i = 0; i < WISP_SERVICES_TCP_CONNS; i++) {
        if (svc->conns[i].service != NULL) {
            n++;
        }
    }
    return n;
}
