/**
 * @file services_netconn.c
 * UDP echo / discard and TCP echo / discard / chargen as threads on the
 * netconn API (see services_netconn.h). Public calls only: wisp/netconn.h
 * for the network, wisp/sys.h for threads and locks.
 */
#include "services_netconn.h"

#include <string.h>

#include "reclaim.h"

/* Slot states (under svc->lock). */
enum { SLOT_FREE = 0, SLOT_RESERVED, SLOT_RUNNING, SLOT_DONE };

static const char *const tcp_names[WISP_TCP_SVC_COUNT] = { "echo", "discard", "chargen" };
static const uint16_t tcp_ports[WISP_TCP_SVC_COUNT] = { WISP_PORT_ECHO, WISP_PORT_DISCARD, WISP_PORT_CHARGEN };
static const uint16_t udp_ports[WISP_UDP_SVC_COUNT] = { WISP_PORT_ECHO, WISP_PORT_DISCARD };

static bool stopping(struct wisp_nc_services *svc)
{
    bool s;
    wisp_sys_mutex_lock(&svc->lock);
    s = svc->stop != 0;
    wisp_sys_mutex_unlock(&svc->lock);
    return s;
}

/* A thread ends: the last thing it does with svc. */
static void thread_done(struct wisp_nc_services *svc, struct wisp_nc_svc_slot *slot)
{
    wisp_sys_mutex_lock(&svc->lock);
    if (slot != NULL) {
        slot->state = SLOT_DONE;
    }
    svc->st.threads--;
    wisp_sys_mutex_unlock(&svc->lock);
}

/* Source ports of services that answer every datagram: echoing to one of
 * them would make two servers bounce a datagram forever. */
static bool reflector_port(uint16_t port)
{
    return port == 7u || port == 9u || port == 13u || port == 17u || port == 19u || port == 37u;
}

/* ------------------------------------------------------------------ TCP */

/* Why a connection thread ends, beyond the connection's own error
 * (slot->end). */
enum { END_NONE = 0, END_IDLE, END_STUCK, END_RECLAIM };

/* Accept-thread tries (10 ms apart) to get the slot a reclaim frees. */
#define ADMIT_TRIES (3u * WISP_NC_SERVICES_POLL_MS / 10u + 1u)

/* The connection made progress (received data, the stack took ours).
 * WISP_ERR_ABRT when it is to end now: reclaimed (slot->end) or stop --
 * looked at here too, so a peer that keeps a little data flowing is not
 * missed by the checks after timeouts. */
static wisp_err_t progress(struct wisp_nc_services *svc, struct wisp_nc_svc_slot *slot)
{
    bool stop, evict;
    wisp_sys_mutex_lock(&svc->lock);
    slot->last_ms = wisp_sys_now_ms();
    stop = svc->stop != 0;
    evict = slot->evict != 0;
    wisp_sys_mutex_unlock(&svc->lock);
    if (evict) {
        slot->end = END_RECLAIM;
    }
    return (evict || stop) ? WISP_ERR_ABRT : WISP_OK;
}

/* After a call that timed out or could not finish: WISP_OK to go on,
 * WISP_ERR_ABRT on stop or reclaim, WISP_ERR_TIMEOUT at the idle timeout
 * (slot->end says which). writing: the thread waits for the peer to read. */
static wisp_err_t conn_check(struct wisp_nc_services *svc, struct wisp_nc_svc_slot *slot, bool writing)
{
    bool stop, evict, idle;
    wisp_sys_mutex_lock(&svc->lock);
    stop = svc->stop != 0;
    evict = slot->evict != 0;
    idle = wisp_sys_now_ms() - slot->last_ms >= svc->opt.idle_ms;
    wisp_sys_mutex_unlock(&svc->lock);
    if (evict) {
        slot->end = END_RECLAIM;
        return WISP_ERR_ABRT;
    }
    if (stop) {
        return WISP_ERR_ABRT;
    }
    if (idle) {
        slot->end = writing ? END_STUCK : END_IDLE;
        return WISP_ERR_TIMEOUT;
    }
    return WISP_OK;
}

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
        if (done > 0 && (err == WISP_OK || err == WISP_ERR_WOULDBLOCK) && progress(svc, slot) != WISP_OK) {
            return WISP_ERR_ABRT;
        }
        if (err == WISP_ERR_WOULDBLOCK || (err == WISP_OK && len > 0)) {
            err = conn_check(svc, slot, true);
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
            err = conn_check(svc, slot, false);
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
        err = progress(svc, slot);
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
            err = conn_check(svc, slot, false);
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
        err = progress(svc, slot);
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
        if (done > 0 && (err == WISP_OK || err == WISP_ERR_WOULDBLOCK) && progress(svc, slot) != WISP_OK) {
            return WISP_ERR_ABRT;
        }
        if (err == WISP_ERR_WOULDBLOCK || (err == WISP_OK && done < WISP_NC_SERVICES_CHUNK)) {
            err = conn_check(svc, slot, true);
            if (err != WISP_OK) {
                return err;
            }
        } else if (err != WISP_OK) {
            return err;
        }
    }
}

static void conn_thread(void *arg)
{
    struct wisp_nc_svc_slot *slot = (struct wisp_nc_svc_slot *)arg;
    struct wisp_nc_services *svc = slot->svc;
    struct wisp_netconn *conn = slot->conn;
    struct wisp_tcp_service_stats *st = &svc->st.tcp[slot->id];
    struct wisp_tcp_conn_report r;
    wisp_err_t how;

    memset(&r, 0, sizeof r);
    r.service = tcp_names[slot->id];
    r.port = tcp_ports[slot->id];
    slot->end = END_NONE;
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
    if (slot->end == END_RECLAIM || slot->end == END_STUCK) {
        /* Reclaimed, or our data does not move: reset. */
        (void)wisp_netconn_abort(conn);
    } else if (how == WISP_OK || how == WISP_ERR_ABRT || slot->end == END_IDLE) {
        /* Our FIN after the queued data (a reset or failed connection has
         * nothing left to close). */
        (void)wisp_netconn_close(conn);
    }
    wisp_netconn_delete(conn);
    slot->conn = NULL;
    r.how = how;

    wisp_sys_mutex_lock(&svc->lock);
    st->active--;
    if (slot->end == END_RECLAIM) {
        st->reclaimed++;
        st->aborted++;
    } else if (slot->end == END_IDLE || slot->end == END_STUCK) {
        st->timeouts++;
        if (slot->end == END_IDLE) {
            st->closed++;
        } else {
            st->aborted++;
        }
    } else if (how == WISP_OK) {
        st->closed++;
    } else if (how == WISP_ERR_ABRT) {
        st->aborted++;
    } else {
        st->resets++;
    }
    st->bytes_rx += r.bytes_rx;
    st->bytes_tx += r.bytes_tx;
    wisp_sys_mutex_unlock(&svc->lock);
    if (svc->report != NULL) {
        svc->report(svc->report_ctx, &r);
    }
    thread_done(svc, slot);
}

/* One admission try for a connection from ip (services_netconn.h), under
 * the lock: a reserved slot, or NULL with *wait true while a reclaim that
 * frees one for it is under way (*capped: the address is at its cap). */
static struct wisp_nc_svc_slot *admit_locked(struct wisp_nc_services *svc, const wisp_ipaddr_t *ip, bool *capped,
                                             bool *wait, bool *join)
{
    struct wisp_nc_svc_slot *found = NULL;
    struct wisp_reclaim_rec r[WISP_NC_SERVICES_CONNS];
    uint32_t now = wisp_sys_now_ms();
    unsigned i;
    int v;

    *wait = false;
    *join = false;
    for (i = 0; i < WISP_NC_SERVICES_CONNS; i++) {
        const struct wisp_nc_svc_slot *sl = &svc->slots[i];
        r[i].used = sl->state == SLOT_RESERVED || sl->state == SLOT_RUNNING;
        r[i].takeable = sl->state == SLOT_RUNNING && !sl->evict;
        r[i].ip = sl->peer.u.ip4;
        r[i].idle_ms = now - sl->last_ms;
        if (sl->state == SLOT_RUNNING && sl->evict) {
            *wait = true; /* a reclaim under way frees a slot: one at a time */
        }
    }
    *capped = wisp_reclaim_count(r, WISP_NC_SERVICES_CONNS, ip->u.ip4) >= svc->opt.per_source;
    for (i = 0; i < WISP_NC_SERVICES_CONNS && found == NULL && !*capped; i++) {
        if (svc->slots[i].state == SLOT_FREE) {
            found = &svc->slots[i];
        }
    }
    for (i = 0; i < WISP_NC_SERVICES_CONNS && found == NULL && !*capped; i++) {
        if (svc->slots[i].state == SLOT_DONE) {
            found = &svc->slots[i];
            *join = true;
        }
    }
    if (found != NULL) {
        *wait = false;
        found->state = SLOT_RESERVED;
        found->evict = 0;
        found->peer = *ip;
        found->last_ms = now;
        return found;
    }
    if (*wait) {
        return NULL;
    }
    v = wisp_reclaim_pick(r, WISP_NC_SERVICES_CONNS, ip->u.ip4, *capped, svc->opt.reclaim_ms);
    if (v >= 0) {
        svc->slots[v].evict = 1; /* its thread resets it within a poll */
        *wait = true;
    }
    return NULL;
}

/* Hand an accepted connection to a thread of its own, or close it. */
static void serve(struct wisp_nc_svc_server *srv, struct wisp_netconn *conn)
{
    struct wisp_nc_services *svc = srv->svc;
    struct wisp_tcp_service_stats *st = &svc->st.tcp[srv->id];
    struct wisp_nc_svc_slot *slot = NULL;
    wisp_ipaddr_t ip;
    uint16_t port = 0;
    bool capped = false, wait = false, join = false;
    unsigned tries;

    memset(&ip, 0, sizeof ip);
    (void)wisp_netconn_peer(conn, &ip, &port);
    for (tries = 0; tries < ADMIT_TRIES; tries++) {
        if (tries > 0) {
            wisp_sys_sleep_ms(10);
        }
        wisp_sys_mutex_lock(&svc->lock);
        slot = svc->stop ? NULL : admit_locked(svc, &ip, &capped, &wait, &join);
        wisp_sys_mutex_unlock(&svc->lock);
        if (slot != NULL || !wait) {
            break;
        }
    }
    if (slot != NULL) {
        if (join) {
            (void)wisp_sys_thread_join(&slot->thread);
        }
        slot->svc = svc;
        slot->conn = conn;
        slot->id = srv->id;
        wisp_sys_mutex_lock(&svc->lock);
        st->connections++;
        st->active++;
        svc->st.threads++;
        slot->state = SLOT_RUNNING;
        wisp_sys_mutex_unlock(&svc->lock);
        if (wisp_sys_thread_new(&slot->thread, "wisp-nc-conn", conn_thread, slot, 0, 0) == WISP_OK) {
            return;
        }
        wisp_sys_mutex_lock(&svc->lock);
        st->connections--;
        st->active--;
        svc->st.threads--;
        slot->state = SLOT_FREE;
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

    while (!stopping(svc)) {
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
    thread_done(svc, NULL);
}

/* ------------------------------------------------------------------ UDP */

static void udp_server_thread(void *arg)
{
    struct wisp_nc_svc_server *srv = (struct wisp_nc_svc_server *)arg;
    struct wisp_nc_services *svc = srv->svc;
    struct wisp_service_stats *st = &svc->st.udp[srv->id];

    while (!stopping(svc)) {
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
        } else if (port == 0 || reflector_port(port)) {
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
    thread_done(svc, NULL);
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
    if (svc->lock_made) {
        wisp_sys_mutex_lock(&svc->lock);
        svc->stop = 1;
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
    /* The accept threads first: afterwards nobody starts a connection
     * thread any more. */
    for (i = 0; i < WISP_TCP_SVC_COUNT; i++) {
        server_stop(&svc->tcp_srv[i]);
    }
    for (i = 0; i < WISP_UDP_SVC_COUNT; i++) {
        server_stop(&svc->udp_srv[i]);
    }
    for (i = 0; i < WISP_NC_SERVICES_CONNS; i++) {
        uint8_t state;
        wisp_sys_mutex_lock(&svc->lock);
        state = svc->slots[i].state;
        wisp_sys_mutex_unlock(&svc->lock);
        if (state == SLOT_RUNNING || state == SLOT_DONE) {
            (void)wisp_sys_thread_join(&svc->slots[i].thread);
            svc->slots[i].state = SLOT_FREE;
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
