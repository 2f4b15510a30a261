/**
 * @file services_socket.c
 * UDP echo / discard and TCP echo / discard / chargen as threads on the BSD
 * socket API (see services_socket.h). Public calls only: wisp/sockets.h
 * for the network, wisp/sys.h for threads and locks.
 */
#include "services_socket.h"

#include <string.h>

#include "services_thread.h"

static const char *const tcp_names[WISP_TCP_SVC_COUNT] = { "echo", "discard", "chargen" };
static const uint16_t tcp_ports[WISP_TCP_SVC_COUNT] = { WISP_PORT_ECHO, WISP_PORT_DISCARD, WISP_PORT_CHARGEN };
static const uint16_t udp_ports[WISP_UDP_SVC_COUNT] = { WISP_PORT_ECHO, WISP_PORT_DISCARD };

/* How a connection failed, as the report's wisp_err_t. */
static wisp_err_t errno_how(int e)
{
    switch (e) {
    case WISP_ECONNRESET: return WISP_ERR_RST;
    case WISP_ETIMEDOUT: return WISP_ERR_TIMEOUT;
    case WISP_ECONNABORTED: return WISP_ERR_ABRT;
    case WISP_EPIPE: return WISP_ERR_CLSD;
    default: return WISP_ERR_VAL;
    }
}

/* Both timeouts of a socket: blocked calls return now and then. */
static int set_timeouts(int fd)
{
    struct wisp_timeval tv;
    tv.tv_sec = (long)(WISP_SOCK_SERVICES_POLL_MS / 1000u);
    tv.tv_usec = (long)(WISP_SOCK_SERVICES_POLL_MS % 1000u) * 1000L;
    if (wisp_setsockopt(fd, WISP_SOL_SOCKET, WISP_SO_RCVTIMEO, &tv, sizeof tv) != 0 ||
        wisp_setsockopt(fd, WISP_SOL_SOCKET, WISP_SO_SNDTIMEO, &tv, sizeof tv) != 0) {
        return -1;
    }
    return 0;
}

/* ------------------------------------------------------------------ TCP */

/* send() all of data; a send that timed out returns what it sent. */
static wisp_err_t send_all(struct wisp_sock_services *svc, struct wisp_sock_svc_slot *slot, size_t len, uint64_t *tx)
{
    const uint8_t *data = slot->buf;
    int fd = slot->fd;

    while (len > 0) {
        wisp_ssize_t n = wisp_send(fd, data, len, 0);
        if (n < 0) {
            if (wisp_errno() != WISP_EAGAIN) {
                /* a reset: ECONNRESET (sockets.h: the send after a
                 * partial one reports it); EPIPE only after our own
                 * shutdown or a reset already reported */
                return errno_how(wisp_errno());
            }
            n = 0;
        }
        data += n;
        len -= (size_t)n;
        *tx += (uint64_t)n;
        if (n > 0 && wisp_svc_progress(&svc->lock, &svc->stop, &slot->c) != WISP_OK) {
            return WISP_ERR_ABRT;
        }
        if (len > 0) {
            wisp_err_t err = wisp_svc_conn_check(&svc->lock, &svc->stop, svc->opt.idle_ms, &slot->c, true);
            if (err != WISP_OK) {
                return err;
            }
        }
    }
    return WISP_OK;
}

/* RFC 862: "Once a connection is established any data received is sent
 * back." */
static wisp_err_t run_echo(struct wisp_sock_services *svc, struct wisp_sock_svc_slot *slot, uint64_t *rx,
                           uint64_t *tx)
{
    for (;;) {
        wisp_ssize_t n = wisp_recv(slot->fd, slot->buf, sizeof slot->buf, 0);
        wisp_err_t err;
        if (n == 0) {
            return WISP_OK; /* the peer's FIN: all it sent was sent back */
        }
        if (n < 0) {
            if (wisp_errno() != WISP_EAGAIN) {
                return errno_how(wisp_errno());
            }
            err = wisp_svc_conn_check(&svc->lock, &svc->stop, svc->opt.idle_ms, &slot->c, false);
            if (err != WISP_OK) {
                return err;
            }
            continue;
        }
        *rx += (uint64_t)n;
        err = wisp_svc_progress(&svc->lock, &svc->stop, &slot->c);
        if (err == WISP_OK) {
            err = send_all(svc, slot, (size_t)n, tx);
        }
        if (err != WISP_OK) {
            return err;
        }
    }
}

/* RFC 863: "Any data received is thrown away." */
static wisp_err_t run_discard(struct wisp_sock_services *svc, struct wisp_sock_svc_slot *slot, uint64_t *rx)
{
    for (;;) {
        wisp_ssize_t n = wisp_recv(slot->fd, slot->buf, sizeof slot->buf, 0);
        if (n == 0) {
            return WISP_OK;
        }
        if (n < 0) {
            wisp_err_t err;
            if (wisp_errno() != WISP_EAGAIN) {
                return errno_how(wisp_errno());
            }
            err = wisp_svc_conn_check(&svc->lock, &svc->stop, svc->opt.idle_ms, &slot->c, false);
            if (err != WISP_OK) {
                return err;
            }
            continue;
        }
        *rx += (uint64_t)n;
        if (wisp_svc_progress(&svc->lock, &svc->stop, &slot->c) != WISP_OK) {
            return WISP_ERR_ABRT;
        }
    }
}

/* RFC 864: a stream of data is sent; received data is thrown away. A
 * non-blocking read between sends notices the peer's FIN. */
static wisp_err_t run_chargen(struct wisp_sock_services *svc, struct wisp_sock_svc_slot *slot, uint64_t *rx,
                              uint64_t *tx)
{
    uint32_t pos = 0;

    for (;;) {
        wisp_ssize_t n = wisp_recv(slot->fd, slot->buf, sizeof slot->buf, WISP_MSG_DONTWAIT);
        if (n == 0) {
            return WISP_OK;
        }
        if (n > 0) {
            *rx += (uint64_t)n;
        } else if (wisp_errno() != WISP_EAGAIN) {
            return errno_how(wisp_errno());
        }
        n = wisp_send(slot->fd, svc->chargen + pos, WISP_SOCK_SERVICES_BUF, 0);
        if (n < 0) {
            if (wisp_errno() != WISP_EAGAIN) {
                return errno_how(wisp_errno());
            }
            n = 0;
        }
        *tx += (uint64_t)n;
        pos = (uint32_t)((pos + (uint32_t)n) % WISP_CHARGEN_PERIOD);
        if (n > 0 && wisp_svc_progress(&svc->lock, &svc->stop, &slot->c) != WISP_OK) {
            return WISP_ERR_ABRT;
        }
        if ((size_t)n < WISP_SOCK_SERVICES_BUF) {
            wisp_err_t err = wisp_svc_conn_check(&svc->lock, &svc->stop, svc->opt.idle_ms, &slot->c, true);
            if (err != WISP_OK) {
                return err;
            }
        }
    }
}

/* One connection of the slot's worker, from its start to its accounting
 * (the slot is free again when this returns). */
static void conn_run(struct wisp_sock_services *svc, struct wisp_sock_svc_slot *slot)
{
    struct wisp_tcp_service_stats *st = &svc->st.tcp[slot->id];
    struct wisp_tcp_conn_report r;
    wisp_err_t how;

    memset(&r, 0, sizeof r);
    r.service = tcp_names[slot->id];
    r.port = tcp_ports[slot->id];
    r.remote_ip = wisp_ipaddr4(slot->peer.sin_addr.s_addr);
    r.remote_port = wisp_ntohs(slot->peer.sin_port);
    slot->c.end = WISP_SVC_END_NONE;
    if (set_timeouts(slot->fd) != 0) {
        how = WISP_ERR_VAL;
    } else if (slot->id == WISP_TCP_SVC_ECHO) {
        how = run_echo(svc, slot, &r.bytes_rx, &r.bytes_tx);
    } else if (slot->id == WISP_TCP_SVC_DISCARD) {
        how = run_discard(svc, slot, &r.bytes_rx);
    } else {
        how = run_chargen(svc, slot, &r.bytes_rx, &r.bytes_tx);
    }
    if (slot->c.end == WISP_SVC_END_RECLAIM || slot->c.end == WISP_SVC_END_STUCK) {
        /* Reclaimed, or our data does not move: the close resets. */
        struct wisp_linger lg;
        lg.l_onoff = 1;
        lg.l_linger = 0;
        (void)wisp_setsockopt(slot->fd, WISP_SOL_SOCKET, WISP_SO_LINGER, &lg, sizeof lg);
    }
    (void)wisp_close(slot->fd); /* FIN after the queued data */
    slot->fd = -1;
    r.how = how;

    wisp_svc_conn_done(&svc->lock, st, &slot->c, how, r.bytes_rx, r.bytes_tx);
    if (svc->report != NULL) {
        svc->report(svc->report_ctx, &r);
    }
}

/* A slot's worker: made on the slot's first connection, it serves the
 * slot's connections one after the other until the set stops. */
static void worker_thread(void *arg)
{
    struct wisp_sock_svc_slot *slot = (struct wisp_sock_svc_slot *)arg;
    struct wisp_sock_services *svc = slot->svc;

    wisp_sys_mutex_lock(&svc->lock);
    while (wisp_svc_worker_next(&svc->lock, &svc->stop, &slot->c, &slot->go)) {
        wisp_sys_mutex_unlock(&svc->lock);
        conn_run(svc, slot);
        wisp_sys_mutex_lock(&svc->lock);
    }
    svc->st.threads--;
    wisp_sys_mutex_unlock(&svc->lock);
}

/* Hand an accepted connection to a slot's worker (made now on the slot's
 * first use), or close it. */
static void serve(struct wisp_sock_svc_server *srv, int fd, const struct wisp_sockaddr_in *peer)
{
    struct wisp_sock_services *svc = srv->svc;
    struct wisp_tcp_service_stats *st = &svc->st.tcp[srv->id];
    struct wisp_sock_svc_slot *slot = NULL;
    bool capped = false;
    int v;

    v = wisp_svc_admit(&svc->lock, &svc->stop, &svc->opt, &svc->slots[0].c, sizeof svc->slots[0],
                       (unsigned)(sizeof svc->slots / sizeof svc->slots[0]), peer->sin_addr.s_addr,
                       WISP_SVC_ADMIT_TRIES(WISP_SOCK_SERVICES_POLL_MS), &capped);
    if (v >= 0) {
        slot = &svc->slots[v];
    }
    if (slot != NULL) {
        /* Reserved for us: nobody else writes the slot until it runs. */
        slot->svc = svc;
        slot->fd = fd;
        slot->id = srv->id;
        slot->peer.sin_family = peer->sin_family;
        slot->peer.sin_addr.s_addr = peer->sin_addr.s_addr;
        slot->peer.sin_port = peer->sin_port;
        if (wisp_svc_hand_off(&svc->lock, st, &svc->st.threads, &slot->c, &slot->go, &slot->thread, "wisp-sk-conn",
                              worker_thread, slot)) {
            return;
        }
        wisp_sys_mutex_lock(&svc->lock);
        slot->c.state = WISP_SVC_SLOT_FREE;
        slot->fd = -1;
        wisp_sys_mutex_unlock(&svc->lock);
        capped = false;
    }
    wisp_sys_mutex_lock(&svc->lock);
    st->refused++;
    if (capped) {
        st->capped++;
    }
    wisp_sys_mutex_unlock(&svc->lock);
    (void)wisp_close(fd);
}

static void tcp_server_thread(void *arg)
{
    struct wisp_sock_svc_server *srv = (struct wisp_sock_svc_server *)arg;
    struct wisp_sock_services *svc = srv->svc;

    while (!wisp_svc_stopping(&svc->lock, &svc->stop)) {
        struct wisp_sockaddr_in peer;
        wisp_socklen_t plen = sizeof peer;
        int fd;

        memset(&peer, 0, sizeof peer);
        fd = wisp_accept(srv->fd, (struct wisp_sockaddr *)&peer, &plen);
        if (fd >= 0) {
            serve(srv, fd, &peer);
        } else if (wisp_errno() != WISP_EAGAIN) {
            wisp_sys_sleep_ms(10); /* ECONNABORTED, EMFILE, ...: go on */
        }
    }
    (void)wisp_close(srv->fd);
    srv->fd = -1;
    wisp_svc_thread_done(&svc->lock, &svc->st.threads);
}

/* ------------------------------------------------------------------ UDP */

static void udp_server_thread(void *arg)
{
    struct wisp_sock_svc_server *srv = (struct wisp_sock_svc_server *)arg;
    struct wisp_sock_services *svc = srv->svc;
    struct wisp_service_stats *st = &svc->st.udp[srv->id];
    uint8_t *buf = svc->udp_buf[srv->id];

    while (!wisp_svc_stopping(&svc->lock, &svc->stop)) {
        struct wisp_sockaddr_in from;
        wisp_socklen_t flen = sizeof from;
        wisp_ssize_t n, sent;
        uint16_t port;

        memset(&from, 0, sizeof from);
        n = wisp_recvfrom(srv->fd, buf, WISP_SOCK_SERVICES_UDP_BUF, 0, (struct wisp_sockaddr *)&from, &flen);
        if (n < 0) {
            if (wisp_errno() != WISP_EAGAIN) {
                wisp_sys_sleep_ms(10);
            }
            continue;
        }
        port = wisp_ntohs(from.sin_port);
        if (srv->id == WISP_UDP_SVC_DISCARD) {
            /* RFC 863: "Any received datagram is thrown away." */
            wisp_sys_mutex_lock(&svc->lock);
            st->datagrams++;
            st->bytes += (uint32_t)n;
            wisp_sys_mutex_unlock(&svc->lock);
            continue;
        }
        if (port == 0 || wisp_svc_reflector_port(port)) {
            /* RFC 768: source port 0 expects no reply; reflecting services
             * would bounce the datagram forever. */
            wisp_sys_mutex_lock(&svc->lock);
            st->dropped++;
            wisp_sys_mutex_unlock(&svc->lock);
            continue;
        }
        /* RFC 862: "the data from it is sent back in an answering datagram" */
        sent = wisp_sendto(srv->fd, buf, (size_t)n, 0, (const struct wisp_sockaddr *)&from, flen);
        wisp_sys_mutex_lock(&svc->lock);
        if (sent == n) {
            st->datagrams++;
            st->bytes += (uint32_t)n;
        } else {
            st->send_err++;
            st->dropped++;
        }
        wisp_sys_mutex_unlock(&svc->lock);
    }
    (void)wisp_close(srv->fd);
    srv->fd = -1;
    wisp_svc_thread_done(&svc->lock, &svc->st.threads);
}

/* ---------------------------------------------------------- start, stop */

static wisp_err_t server_open(struct wisp_sock_services *svc, struct wisp_sock_svc_server *srv, bool tcp,
                              uint8_t id)
{
    struct wisp_sockaddr_in a;
    int e;

    srv->svc = svc;
    srv->tcp = tcp ? 1 : 0;
    srv->id = id;
    srv->fd = wisp_socket(WISP_AF_INET, tcp ? WISP_SOCK_STREAM : WISP_SOCK_DGRAM, 0);
    if (srv->fd < 0) {
        return WISP_ERR_MEM;
    }
    memset(&a, 0, sizeof a);
    a.sin_family = WISP_AF_INET;
    a.sin_port = wisp_htons(tcp ? tcp_ports[id] : udp_ports[id]);
    a.sin_addr.s_addr = WISP_INADDR_ANY;
    if (wisp_bind(srv->fd, (const struct wisp_sockaddr *)&a, sizeof a) == 0 &&
        (!tcp || wisp_listen(srv->fd, WISP_SERVICES_TCP_BACKLOG) == 0) && set_timeouts(srv->fd) == 0) {
        return WISP_OK;
    }
    e = wisp_errno();
    (void)wisp_close(srv->fd);
    srv->fd = -1;
    return e == WISP_EADDRINUSE ? WISP_ERR_USE : (e == WISP_ENOBUFS || e == WISP_ENOMEM) ? WISP_ERR_MEM
                                                                                         : WISP_ERR_VAL;
}

static wisp_err_t server_run(struct wisp_sock_services *svc, struct wisp_sock_svc_server *srv)
{
    wisp_sys_mutex_lock(&svc->lock);
    svc->st.threads++;
    wisp_sys_mutex_unlock(&svc->lock);
    if (wisp_sys_thread_new(&srv->thread, srv->tcp ? "wisp-sk-listen" : "wisp-sk-udp",
                            srv->tcp ? tcp_server_thread : udp_server_thread, srv, 0, 0) != WISP_OK) {
        wisp_sys_mutex_lock(&svc->lock);
        svc->st.threads--;
        wisp_sys_mutex_unlock(&svc->lock);
        return WISP_ERR_MEM;
    }
    srv->running = 1;
    return WISP_OK;
}

wisp_err_t wisp_sock_services_start(struct wisp_sock_services *svc, wisp_tcp_conn_report_fn report,
                                    void *report_ctx)
{
    return wisp_sock_services_start_opts(svc, NULL, report, report_ctx);
}

wisp_err_t wisp_sock_services_start_opts(struct wisp_sock_services *svc, const struct wisp_services_opts *o,
                                         wisp_tcp_conn_report_fn report, void *report_ctx)
{
    wisp_err_t err = WISP_OK;
    uint32_t i;

    memset(svc, 0, sizeof *svc);
    if (o != NULL) {
        svc->opt = *o;
    }
    wisp_services_opts_resolve(&svc->opt, WISP_SOCK_SERVICES_CONNS);
    svc->report = report;
    svc->report_ctx = report_ctx;
    for (i = 0; i < WISP_TCP_SVC_COUNT; i++) {
        svc->tcp_srv[i].fd = -1;
    }
    for (i = 0; i < WISP_UDP_SVC_COUNT; i++) {
        svc->udp_srv[i].fd = -1;
    }
    for (i = 0; i < WISP_SOCK_SERVICES_CONNS; i++) {
        svc->slots[i].fd = -1;
    }
    for (i = 0; i < sizeof svc->chargen; i++) {
        svc->chargen[i] = wisp_chargen_byte(i);
    }
    if (wisp_sys_mutex_new(&svc->lock) != WISP_OK) {
        return WISP_ERR_MEM;
    }
    svc->lock_made = 1;
    for (i = 0; i < WISP_TCP_SVC_COUNT && err == WISP_OK; i++) {
        err = server_open(svc, &svc->tcp_srv[i], true, (uint8_t)i);
    }
    for (i = 0; i < WISP_UDP_SVC_COUNT && err == WISP_OK; i++) {
        err = server_open(svc, &svc->udp_srv[i], false, (uint8_t)i);
    }
    for (i = 0; i < WISP_TCP_SVC_COUNT && err == WISP_OK; i++) {
        err = server_run(svc, &svc->tcp_srv[i]);
    }
    for (i = 0; i < WISP_UDP_SVC_COUNT && err == WISP_OK; i++) {
        err = server_run(svc, &svc->udp_srv[i]);
    }
    if (err != WISP_OK) {
        wisp_sock_services_stop(svc);
    }
    return err;
}

void wisp_sock_services_request_stop(struct wisp_sock_services *svc)
{
    unsigned i;

    if (svc->lock_made) {
        wisp_sys_mutex_lock(&svc->lock);
        svc->stop = 1;
        for (i = 0; i < WISP_SOCK_SERVICES_CONNS; i++) {
            if (svc->slots[i].c.worker) {
                wisp_sys_sem_signal(&svc->slots[i].go); /* an idle worker ends */
            }
        }
        wisp_sys_mutex_unlock(&svc->lock);
    }
}

static void server_stop(struct wisp_sock_svc_server *srv)
{
    if (srv->running) {
        (void)wisp_sys_thread_join(&srv->thread);
        srv->running = 0;
    } else if (srv->fd >= 0) {
        (void)wisp_close(srv->fd);
        srv->fd = -1;
    }
}

void wisp_sock_services_stop(struct wisp_sock_services *svc)
{
    unsigned i;

    if (!svc->lock_made) {
        return;
    }
    wisp_sock_services_request_stop(svc);
    for (i = 0; i < WISP_TCP_SVC_COUNT; i++) {
        server_stop(&svc->tcp_srv[i]);
    }
    for (i = 0; i < WISP_UDP_SVC_COUNT; i++) {
        server_stop(&svc->udp_srv[i]);
    }
    /* The accept threads are gone: no slot gets a worker any more, and
     * every worker was woken (request_stop) or finds the stop flag when
     * its connection ends. */
    for (i = 0; i < WISP_SOCK_SERVICES_CONNS; i++) {
        uint8_t worker;
        wisp_sys_mutex_lock(&svc->lock);
        worker = svc->slots[i].c.worker;
        wisp_sys_mutex_unlock(&svc->lock);
        if (worker) {
            (void)wisp_sys_thread_join(&svc->slots[i].thread);
            wisp_sys_sem_free(&svc->slots[i].go);
            wisp_sys_mutex_lock(&svc->lock);
            svc->slots[i].c.worker = 0;
            svc->slots[i].c.state = WISP_SVC_SLOT_FREE;
            wisp_sys_mutex_unlock(&svc->lock);
        }
    }
    wisp_sys_mutex_free(&svc->lock);
    svc->lock_made = 0;
}

void wisp_sock_services_stats(struct wisp_sock_services *svc, struct wisp_sock_services_stats *out)
{
    if (svc->lock_made) {
        wisp_sys_mutex_lock(&svc->lock);
        *out = svc->st;
        wisp_sys_mutex_unlock(&svc->lock);
    } else {
        *out = svc->st;
    }
}
