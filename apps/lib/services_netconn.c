/**
 * @file services_netconn.c
 * UDP echo / discard and TCP echo / discard / chargen as threads on the
 * netconn API (see services_netconn.h). Public calls only: wisp/netconn.h
 * for the network, wisp/sys.h for threads and locks.
 */
#include "services_netconn.h"

#include <string.h>

#include "services_thread.h"

static const char *const tcp_names[WISP_TCP_SVC_COUNT] = { "echo", "discard", "chargen" };
static const uint16_t tcp_ports[WISP_TCP_SVC_COUNT] = { WISP_PORT_ECHO, WISP_PORT_DISCARD, WISP_PORT_CHARGEN };
static const uint16_t udp_ports[WISP_UDP_SVC_COUNT] = { WISP_PORT_ECHO, WISP_PORT_DISCARD };

/* ------------------------------------------------------------------ TCP */

/* Write all of data (NETCONN_COPY). The send timeout makes a blocked write
 * return now and then to look at the stop flag and the idle time. */
static wisp_err_t write_all(struct wisp_nc_services *svc, struct wisp_nc_svc_slot *slot, const uint8_t *data,
                            size_t len, uint64_t *tx)
{
    while (len > 0) {
        size_t done = 0;
        wisp_err_t err = wisp_netconn_write_partly(slot->conn, data, len, WISP_NETCONN_COPY, &done);
        data += done;
        len -= done;
        *tx += done;
        if (done > 0 && (err == WISP_OK || err == WISP_ERR_WOULDBLOCK) &&
            wisp_svc_progress(&svc->lock, &svc->stop, &slot->c) != WISP_OK) {
            return WISP_ERR_ABRT;
        }
        if (err == WISP_ERR_WOULDBLOCK || (err == WISP_OK && len > 0)) {
            err = wisp_svc_conn_check(&svc->lock, &svc->stop, svc->opt.idle_ms, &slot->c, true);
            if (err != WISP_OK) {
                return err;
            }
            continue;
        }
        if (err != WISP_OK) {
            return err;
        }
    }
    return WISP_OK;
}

/* RFC 862: "Once a connection is established any data received is sent
 * back." Returns WISP_OK after the peer's FIN, WISP_ERR_ABRT on stop or
 * reclaim, WISP_ERR_TIMEOUT when idle, or the connection's error. */
static wisp_err_t run_echo(struct wisp_nc_services *svc, struct wisp_nc_svc_slot *slot, uint64_t *rx, uint64_t *tx)
{
    for (;;) {
        struct wisp_pbuf *p = NULL;
        const struct wisp_pbuf *q;
        wisp_err_t err = wisp_netconn_recv_tcp_pbuf(slot->conn, &p);

        if (err == WISP_ERR_TIMEOUT || err == WISP_ERR_MEM) {
            err = wisp_svc_conn_check(&svc->lock, &svc->stop, svc->opt.idle_ms, &slot->c, false);
            if (err != WISP_OK) {
                return err;
            }
            continue;
        }
        if (err == WISP_ERR_CLSD) {
            return WISP_OK; /* the peer's FIN: everything received was written back */
        }
        if (err != WISP_OK) {
            return err;
        }
        *rx += p->tot_len;
        err = wisp_svc_progress(&svc->lock, &svc->stop, &slot->c);
        for (q = p; q != NULL && err == WISP_OK; q = q->next) {
            err = write_all(svc, slot, (const uint8_t *)q->payload, q->len, tx);
        }
        (void)wisp_netconn_pbuf_free(svc->api, p);
        if (err != WISP_OK) {
            return err;
        }
    }
}

/* RFC 863: "Any data received is thrown away." */
static wisp_err_t run_discard(struct wisp_nc_services *svc, struct wisp_nc_svc_slot *slot, uint64_t *rx)
{
    for (;;) {
        struct wisp_pbuf *p = NULL;
        wisp_err_t err = wisp_netconn_recv_tcp_pbuf(slot->conn, &p);

        if (err == WISP_ERR_TIMEOUT || err == WISP_ERR_MEM) {
            err = wisp_svc_conn_check(&svc->lock, &svc->stop, svc->opt.idle_ms, &slot->c, false);
            if (err != WISP_OK) {
                return err;
            }
            continue;
        }
        if (err == WISP_ERR_CLSD) {
            return WISP_OK;
        }
        if (err != WISP_OK) {
            return err;
        }
        *rx += p->tot_len;
        (void)wisp_netconn_pbuf_free(svc->api, p);
        err = wisp_svc_progress(&svc->lock, &svc->stop, &slot->c);
        if (err != WISP_OK) {
            return err;
        }
    }
}

/* RFC 864: "Once a connection is established a stream of data is sent out
 * the connection (and any data received is thrown away)." Between writes a
 * non-blocking receive takes what the peer sent and notices its FIN. */
static wisp_err_t run_chargen(struct wisp_nc_services *svc, struct wisp_nc_svc_slot *slot, uint64_t *rx,
                              uint64_t *tx)
{
    uint32_t pos = 0;

    for (;;) {
        struct wisp_pbuf *p = NULL;
        size_t done = 0;
        wisp_err_t err = wisp_netconn_recv_tcp_pbuf_flags(slot->conn, &p, WISP_NETCONN_DONTBLOCK);

        if (err == WISP_OK) {
            *rx += p->tot_len;
            (void)wisp_netconn_pbuf_free(svc->api, p);
        } else if (err == WISP_ERR_CLSD) {
            return WISP_OK;
        } else if (err != WISP_ERR_WOULDBLOCK && err != WISP_ERR_MEM) {
            return err;
        }
        err = wisp_netconn_write_partly(slot->conn, svc->chargen + pos, WISP_NC_SERVICES_CHUNK, WISP_NETCONN_COPY,
                                        &done);
        *tx += done;
        pos = (uint32_t)((pos + done) % WISP_CHARGEN_PERIOD);
        if (done > 0 && (err == WISP_OK || err == WISP_ERR_WOULDBLOCK) &&
            wisp_svc_progress(&svc->lock, &svc->stop, &slot->c) != WISP_OK) {
            return WISP_ERR_ABRT;
        }
        if (err == WISP_ERR_WOULDBLOCK || (err == WISP_OK && done < WISP_NC_SERVICES_CHUNK)) {
            err = wisp_svc_conn_check(&svc->lock, &svc->stop, svc->opt.idle_ms, &slot->c, true);
            if (err != WISP_OK) {
                return err;
            }
        } else if (err != WISP_OK) {
            return err;
        }
    }
}

/* One connection of the slot's worker, from its start to its accounting
 * (the slot is free again when this returns). */
static void conn_run(struct wisp_nc_services *svc, struct wisp_nc_svc_slot *slot)
{
    struct wisp_netconn *conn = slot->conn;
    struct wisp_tcp_service_stats *st = &svc->st.tcp[slot->id];
    struct wisp_tcp_conn_report r;
    wisp_err_t how;

    memset(&r, 0, sizeof r);
    r.service = tcp_names[slot->id];
    r.port = tcp_ports[slot->id];
    slot->c.end = WISP_SVC_END_NONE;
    (void)wisp_netconn_peer(conn, &r.remote_ip, &r.remote_port);
    wisp_netconn_set_recvtimeout(conn, WISP_NC_SERVICES_POLL_MS);
    wisp_netconn_set_sendtimeout(conn, WISP_NC_SERVICES_POLL_MS);

    switch (slot->id) {
    case WISP_TCP_SVC_ECHO:
        how = run_echo(svc, slot, &r.bytes_rx, &r.bytes_tx);
        break;
    case WISP_TCP_SVC_DISCARD:
        how = run_discard(svc, slot, &r.bytes_rx);
        break;
    default:
        how = run_chargen(svc, slot, &r.bytes_rx, &r.bytes_tx);
        break;
    }
    if (slot->c.end == WISP_SVC_END_RECLAIM || slot->c.end == WISP_SVC_END_STUCK) {
        /* Reclaimed, or our data does not move: reset. */
        (void)wisp_netconn_abort(conn);
    } else if (how == WISP_OK || how == WISP_ERR_ABRT || slot->c.end == WISP_SVC_END_IDLE) {
        /* Our FIN after the queued data (a reset or failed connection has
         * nothing left to close). */
        (void)wisp_netconn_close(conn);
    }
    wisp_netconn_delete(conn);
    slot->conn = NULL;
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
    struct wisp_nc_svc_slot *slot = (struct wisp_nc_svc_slot *)arg;
    struct wisp_nc_services *svc = slot->svc;

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
static void serve(struct wisp_nc_svc_server *srv, struct wisp_netconn *conn)
{
    struct wisp_nc_services *svc = srv->svc;
    struct wisp_tcp_service_stats *st = &svc->st.tcp[srv->id];
    struct wisp_nc_svc_slot *slot = NULL;
    wisp_ipaddr_t ip;
    uint16_t port = 0;
    bool capped = false;
    int v;

    memset(&ip, 0, sizeof ip);
    (void)wisp_netconn_peer(conn, &ip, &port);
    v = wisp_svc_admit(&svc->lock, &svc->stop, &svc->opt, &svc->slots[0].c, sizeof svc->slots[0],
                       (unsigned)(sizeof svc->slots / sizeof svc->slots[0]), wisp_ipaddr_ip4(&ip),
                       WISP_SVC_ADMIT_TRIES(WISP_NC_SERVICES_POLL_MS), &capped);
    if (v >= 0) {
        slot = &svc->slots[v];
    }
    if (slot != NULL) {
        /* Reserved for us: nobody else writes the slot until it runs. */
        slot->svc = svc;
        slot->conn = conn;
        slot->id = srv->id;
        if (wisp_svc_hand_off(&svc->lock, st, &svc->st.threads, &slot->c, &slot->go, &slot->thread, "wisp-nc-conn",
                              worker_thread, slot)) {
            return;
        }
        wisp_sys_mutex_lock(&svc->lock);
        slot->c.state = WISP_SVC_SLOT_FREE;
        slot->conn = NULL;
        wisp_sys_mutex_unlock(&svc->lock);
        capped = false;
    }
    wisp_sys_mutex_lock(&svc->lock);
    st->refused++;
    if (capped) {
        st->capped++;
    }
    wisp_sys_mutex_unlock(&svc->lock);
    (void)wisp_netconn_close(conn);
    wisp_netconn_delete(conn);
}

static void tcp_server_thread(void *arg)
{
    struct wisp_nc_svc_server *srv = (struct wisp_nc_svc_server *)arg;
    struct wisp_nc_services *svc = srv->svc;

    while (!wisp_svc_stopping(&svc->lock, &svc->stop)) {
        struct wisp_netconn *conn = NULL;
        wisp_err_t err = wisp_netconn_accept(srv->conn, &conn);
        if (err == WISP_OK) {
            serve(srv, conn);
        } else if (err != WISP_ERR_TIMEOUT) {
            wisp_sys_sleep_ms(10); /* a pending error (aborted connection): go on */
        }
    }
    (void)wisp_netconn_close(srv->conn);
    wisp_netconn_delete(srv->conn);
    srv->conn = NULL;
    wisp_svc_thread_done(&svc->lock, &svc->st.threads);
}

/* ------------------------------------------------------------------ UDP */

static void udp_server_thread(void *arg)
{
    struct wisp_nc_svc_server *srv = (struct wisp_nc_svc_server *)arg;
    struct wisp_nc_services *svc = srv->svc;
    struct wisp_service_stats *st = &svc->st.udp[srv->id];

    while (!wisp_svc_stopping(&svc->lock, &svc->stop)) {
        struct wisp_netbuf *buf = NULL;
        uint16_t len, port;
        wisp_err_t err = wisp_netconn_recv(srv->conn, &buf);

        if (err == WISP_ERR_TIMEOUT) {
            continue;
        }
        if (err != WISP_OK) {
            wisp_sys_sleep_ms(10);
            continue;
        }
        len = wisp_netbuf_len(buf);
        port = wisp_netbuf_fromport(buf);
        if (srv->id == WISP_UDP_SVC_DISCARD) {
            /* RFC 863: "Any received datagram is thrown away." */
            wisp_sys_mutex_lock(&svc->lock);
            st->datagrams++;
            st->bytes += len;
            wisp_sys_mutex_unlock(&svc->lock);
        } else if (port == 0 || wisp_svc_reflector_port(port)) {
            /* RFC 768: source port 0 means no reply is expected; other
             * reflecting services would bounce the datagram forever. */
            wisp_sys_mutex_lock(&svc->lock);
            st->dropped++;
            wisp_sys_mutex_unlock(&svc->lock);
        } else {
            /* RFC 862: "the data from it is sent back in an answering
             * datagram" -- the netbuf holds the source as its address. */
            err = wisp_netconn_send(srv->conn, buf);
            wisp_sys_mutex_lock(&svc->lock);
            if (err == WISP_OK) {
                st->datagrams++;
                st->bytes += len;
            } else {
                st->send_err++;
                st->dropped++;
            }
            wisp_sys_mutex_unlock(&svc->lock);
        }
        wisp_netbuf_delete(buf);
    }
    wisp_netconn_delete(srv->conn);
    srv->conn = NULL;
    wisp_svc_thread_done(&svc->lock, &svc->st.threads);
}

/* ---------------------------------------------------------- start, stop */

/* Make, bind (and for TCP listen on) a server's netconn. */
static wisp_err_t server_open(struct wisp_nc_services *svc, struct wisp_nc_svc_server *srv, bool tcp, uint8_t id)
{
    wisp_err_t err;

    srv->svc = svc;
    srv->tcp = tcp ? 1 : 0;
    srv->id = id;
    srv->conn = wisp_netconn_new(svc->api, tcp ? WISP_NETCONN_TCP : WISP_NETCONN_UDP);
    if (srv->conn == NULL) {
        return WISP_ERR_MEM;
    }
    err = wisp_netconn_bind(srv->conn, NULL, tcp ? tcp_ports[id] : udp_ports[id]);
    if (err == WISP_OK && tcp) {
        err = wisp_netconn_listen_with_backlog(srv->conn, WISP_SERVICES_TCP_BACKLOG);
    }
    if (err != WISP_OK) {
        wisp_netconn_delete(srv->conn);
        srv->conn = NULL;
        return err;
    }
    wisp_netconn_set_recvtimeout(srv->conn, WISP_NC_SERVICES_POLL_MS);
    return WISP_OK;
}

static wisp_err_t server_run(struct wisp_nc_services *svc, struct wisp_nc_svc_server *srv)
{
    wisp_sys_mutex_lock(&svc->lock);
    svc->st.threads++;
    wisp_sys_mutex_unlock(&svc->lock);
    if (wisp_sys_thread_new(&srv->thread, srv->tcp ? "wisp-nc-listen" : "wisp-nc-udp",
                            srv->tcp ? tcp_server_thread : udp_server_thread, srv, 0, 0) != WISP_OK) {
        wisp_sys_mutex_lock(&svc->lock);
        svc->st.threads--;
        wisp_sys_mutex_unlock(&svc->lock);
        return WISP_ERR_MEM;
    }
    srv->running = 1;
    return WISP_OK;
}

wisp_err_t wisp_nc_services_start(struct wisp_nc_services *svc, struct wisp_netconn_api *api,
                                  wisp_tcp_conn_report_fn report, void *report_ctx)
{
    return wisp_nc_services_start_opts(svc, api, NULL, report, report_ctx);
}

wisp_err_t wisp_nc_services_start_opts(struct wisp_nc_services *svc, struct wisp_netconn_api *api,
                                       const struct wisp_services_opts *o, wisp_tcp_conn_report_fn report,
                                       void *report_ctx)
{
    wisp_err_t err = WISP_OK;
    uint32_t i;

    memset(svc, 0, sizeof *svc);
    if (o != NULL) {
        svc->opt = *o;
    }
    wisp_services_opts_resolve(&svc->opt, WISP_NC_SERVICES_CONNS);
    svc->api = api;
    svc->report = report;
    svc->report_ctx = report_ctx;
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
        wisp_nc_services_stop(svc);
    }
    return err;
}

void wisp_nc_services_request_stop(struct wisp_nc_services *svc)
{
    unsigned i;

    if (svc->lock_made) {
        wisp_sys_mutex_lock(&svc->lock);
        svc->stop = 1;
        for (i = 0; i < WISP_NC_SERVICES_CONNS; i++) {
            if (svc->slots[i].c.worker) {
                wisp_sys_sem_signal(&svc->slots[i].go); /* an idle worker ends */
            }
        }
        wisp_sys_mutex_unlock(&svc->lock);
    }
}

static void server_stop(struct wisp_nc_svc_server *srv)
{
    if (srv->running) {
        (void)wisp_sys_thread_join(&srv->thread);
        srv->running = 0;
    } else if (srv->conn != NULL) {
        /* opened but its thread never started */
        if (srv->tcp) {
            (void)wisp_netconn_close(srv->conn);
        }
        wisp_netconn_delete(srv->conn);
        srv->conn = NULL;
    }
}

void wisp_nc_services_stop(struct wisp_nc_services *svc)
{
    unsigned i;

    if (!svc->lock_made) {
        return;
    }
    wisp_nc_services_request_stop(svc);
    /* The accept threads first: afterwards no slot gets a worker any
     * more, and every worker was woken (request_stop) or finds the stop
     * flag when its connection ends. */
    for (i = 0; i < WISP_TCP_SVC_COUNT; i++) {
        server_stop(&svc->tcp_srv[i]);
    }
    for (i = 0; i < WISP_UDP_SVC_COUNT; i++) {
        server_stop(&svc->udp_srv[i]);
    }
    for (i = 0; i < WISP_NC_SERVICES_CONNS; i++) {
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

void wisp_nc_services_stats(struct wisp_nc_services *svc, struct wisp_nc_services_stats *out)
{
    if (svc->lock_made) {
        wisp_sys_mutex_lock(&svc->lock);
        *out = svc->st;
        wisp_sys_mutex_unlock(&svc->lock);
    } else {
        *out = svc->st;
    }
}
