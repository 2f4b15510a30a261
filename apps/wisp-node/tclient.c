/**
 * @file tclient.c
 * wisp-node: the --connect client as an application thread on the netconn or
 * socket API (--api netconn|socket).
 */
#include "node.h"

/* ------------------------------------------- client on netconn / socket
 * The transfer of --connect as an application thread on the netconn or
 * the socket API (--api netconn|socket), public calls only. Every
 * blocking call has a timeout of NODE_TCLIENT_POLL_MS, after which the
 * thread looks at the stop flag; a stop while connecting closes the
 * connection (under tc.lock) to wake the connect.
 *  - send: the pattern in --write-size writes (netconn_write_partly with
 *    NETCONN_COPY / send()), then shutdown of the write side (FIN), then
 *    read until the peer closes: the peer has then received everything;
 *    that close ends the goodput interval (which starts when connected);
 *  - recv: read until the peer closes. */

#define NODE_TCLIENT_POLL_MS 200u

static bool tclient_stopping(struct node *n)
{
    bool s;
    wisp_sys_mutex_lock(&n->tc.lock);
    s = n->tc.stop;
    wisp_sys_mutex_unlock(&n->tc.lock);
    return s;
}

/* Enter the connect phase (false: already stopping). */
static bool tclient_connecting(struct node *n, struct wisp_netconn *conn, int fd)
{
    bool ok;
    wisp_sys_mutex_lock(&n->tc.lock);
    ok = !n->tc.stop;
    if (ok) {
        n->tc.conn = conn;
        n->tc.fd = fd;
        n->tc.connecting = true;
    }
    wisp_sys_mutex_unlock(&n->tc.lock);
    return ok;
}

/* Leave it: false when a stop closed the connection meanwhile (netconn:
 * closed, still to be deleted; socket: closed, the descriptor is gone). */
static bool tclient_connected(struct node *n)
{
    bool ok;
    wisp_sys_mutex_lock(&n->tc.lock);
    ok = !n->tc.closed_by_stop;
    n->tc.connecting = false;
    n->tc.conn = NULL;
    n->tc.fd = -1;
    wisp_sys_mutex_unlock(&n->tc.lock);
    return ok;
}

void tclient_request_stop(struct node *n)
{
    if (!n->tc.running) {
        return;
    }
    wisp_sys_mutex_lock(&n->tc.lock);
    n->tc.stop = true;
    if (n->tc.connecting && !n->tc.closed_by_stop) {
        if (n->tc.conn != NULL) {
            (void)wisp_netconn_close(n->tc.conn);
        } else if (n->tc.fd >= 0) {
            (void)wisp_close(n->tc.fd);
        }
        n->tc.closed_by_stop = true;
    }
    wisp_sys_mutex_unlock(&n->tc.lock);
}

bool tclient_finished(struct node *n)
{
    bool f;
    if (!n->tc.running) {
        return true;
    }
    wisp_sys_mutex_lock(&n->tc.lock);
    f = n->tc.finished;
    wisp_sys_mutex_unlock(&n->tc.lock);
    return f;
}

void tclient_join(struct node *n)
{
    if (n->tc.running) {
        (void)wisp_sys_thread_join(&n->tc.thread);
        n->tc.running = false;
    }
}

static bool tclient_fail(struct node_client *c, const char *what, wisp_err_t err)
{
    fprintf(stderr, "wisp-node: client: %s: %s\n", what, wisp_err_str(err));
    if (c->err == WISP_OK) {
        c->err = err;
    }
    return false;
}

/* A socket error as the client's wisp_err_t (for the report line). */
static bool tclient_fail_errno(struct node_client *c, const char *what)
{
    int e = wisp_errno();
    wisp_err_t err = e == WISP_ECONNRESET || e == WISP_ECONNREFUSED ? WISP_ERR_RST
                     : e == WISP_ETIMEDOUT                           ? WISP_ERR_TIMEOUT
                     : e == WISP_EPIPE                               ? WISP_ERR_CLSD
                                                                     : WISP_ERR_VAL;
    fprintf(stderr, "wisp-node: client: %s: errno %d (%s)\n", what, e, strerror(e));
    if (c->err == WISP_OK) {
        c->err = err;
    }
    return false;
}

/* The next --write-size piece of the pattern (hashed as it is made). */
static void client_next_chunk(struct node_client *c)
{
    uint64_t left = c->total - c->written;
    c->chunk_len = left < c->wsize ? (uint32_t)left : c->wsize;
    c->chunk_off = 0;
    pattern_fill(c->written, c->chunk, c->chunk_len);
    node_hash_update(&c->hash, c->chunk, c->chunk_len);
}

static void tclient_print_connected(struct node_client *c, uint16_t lport)
{
    char a[16];
    printf("wisp-node: client connected to %s:%u from port %u in %.1f ms\n", wisp_ip4_ntoa(c->ip, a),
           (unsigned)c->port, (unsigned)lport, (c->t_conn - c->t_start) * 1e3);
}

/* netconn: the transfer on a connected netconn. */
static bool nc_transfer_data(struct node *n, struct wisp_netconn *conn)
{
    struct node_client *c = &n->client;
    wisp_err_t err;

    wisp_netconn_set_recvtimeout(conn, NODE_TCLIENT_POLL_MS);
    wisp_netconn_set_sendtimeout(conn, NODE_TCLIENT_POLL_MS);
    while (c->send_mode && c->written < c->total) {
        size_t done = 0, rest;
        if (c->chunk_off == c->chunk_len) {
            client_next_chunk(c);
        }
        rest = c->chunk_len - c->chunk_off;
        err = wisp_netconn_write_partly(conn, c->chunk + c->chunk_off, rest, WISP_NETCONN_COPY, &done);
        if (done > 0) {
            c->writes++;
            c->chunk_off += (uint32_t)done;
            c->written += done;
        }
        if (err == WISP_ERR_WOULDBLOCK || (err == WISP_OK && done < rest)) {
            if (tclient_stopping(n)) {
                return tclient_fail(c, "write", WISP_ERR_ABRT);
            }
        } else if (err != WISP_OK) {
            return tclient_fail(c, "write", err);
        }
    }
    if (c->send_mode) {
        err = wisp_netconn_shutdown(conn, 0, 1); /* FIN after the data */
        if (err != WISP_OK) {
            return tclient_fail(c, "shutdown", err);
        }
    }
    for (;;) {
        struct wisp_pbuf *p = NULL;
        const struct wisp_pbuf *q;
        err = wisp_netconn_recv_tcp_pbuf(conn, &p);
        if (err == WISP_ERR_CLSD) {
            break; /* the peer's FIN */
        }
        if (err == WISP_ERR_TIMEOUT || err == WISP_ERR_MEM) {
            if (tclient_stopping(n)) {
                return tclient_fail(c, "recv", WISP_ERR_ABRT);
            }
            continue;
        }
        if (err != WISP_OK) {
            return tclient_fail(c, "recv", err);
        }
        for (q = p; q != NULL; q = q->next) {
            if (!c->send_mode) {
                node_hash_update(&c->hash, q->payload, q->len);
            }
        }
        c->received += p->tot_len;
        (void)wisp_netconn_pbuf_free(&n->ncapi, p);
    }
    c->t_last = mono_s();
    c->peer_closed = true;
    if (c->send_mode) {
        c->acked = c->written; /* the peer read it all before it closed */
    }
    return true;
}

static bool nc_client(struct node *n)
{
    struct node_client *c = &n->client;
    wisp_ipaddr_t ip = wisp_ipaddr4(c->ip), lip;
    uint32_t i, rounds = c->connects > 0 ? c->connects : 1;
    bool ok = true;

    for (i = 0; i < rounds && ok; i++) {
        struct wisp_netconn *conn = wisp_netconn_new(&n->ncapi, WISP_NETCONN_TCP);
        wisp_err_t err;
        bool alive;
        uint16_t lport = 0;

        if (conn == NULL) {
            return tclient_fail(c, "netconn_new", WISP_ERR_MEM);
        }
        if (!tclient_connecting(n, conn, -1)) {
            wisp_netconn_delete(conn);
            return tclient_fail(c, "connect", WISP_ERR_ABRT);
        }
        c->t_start = mono_s();
        err = wisp_netconn_connect(conn, &ip, c->port);
        c->t_conn = mono_s();
        alive = tclient_connected(n);
        if (err != WISP_OK || !alive) {
            ok = tclient_fail(c, "connect", err != WISP_OK ? err : WISP_ERR_ABRT);
        } else if (c->connects > 0) {
            c->conn_times[c->connects_done++] = c->t_conn - c->t_start;
        } else {
            c->connected = true;
            (void)wisp_netconn_addr(conn, &lip, &lport);
            tclient_print_connected(c, lport);
            ok = nc_transfer_data(n, conn);
        }
        if (err == WISP_OK && alive) {
            (void)wisp_netconn_close(conn);
        }
        wisp_netconn_delete(conn);
    }
    return ok;
}

/* socket: the transfer on a connected socket. */
static bool sk_transfer_data(struct node *n, int fd)
{
    struct node_client *c = &n->client;
    struct wisp_timeval tv;
    uint8_t *buf;
    bool ok = true;

    WISP_UNUSED(n);
    tv.tv_sec = 0;
    tv.tv_usec = (long)NODE_TCLIENT_POLL_MS * 1000L;
    if (wisp_setsockopt(fd, WISP_SOL_SOCKET, WISP_SO_RCVTIMEO, &tv, sizeof tv) != 0 ||
        wisp_setsockopt(fd, WISP_SOL_SOCKET, WISP_SO_SNDTIMEO, &tv, sizeof tv) != 0) {
        return tclient_fail_errno(c, "setsockopt");
    }
    while (c->send_mode && c->written < c->total) {
        size_t rest;
        wisp_ssize_t r;
        if (c->chunk_off == c->chunk_len) {
            client_next_chunk(c);
        }
        rest = c->chunk_len - c->chunk_off;
        r = wisp_send(fd, c->chunk + c->chunk_off, rest, 0);
        if (r < 0 && wisp_errno() != WISP_EAGAIN) {
            return tclient_fail_errno(c, "send");
        }
        if (r > 0) {
            c->writes++;
            c->chunk_off += (uint32_t)r;
            c->written += (uint64_t)r;
        }
        if (r < (wisp_ssize_t)rest && tclient_stopping(n)) {
            return tclient_fail(c, "send", WISP_ERR_ABRT);
        }
    }
    if (c->send_mode && wisp_shutdown(fd, WISP_SHUT_WR) != 0) {
        return tclient_fail_errno(c, "shutdown");
    }
    buf = malloc(65536);
    if (buf == NULL) {
        return tclient_fail(c, "recv buffer", WISP_ERR_MEM);
    }
    for (;;) {
        wisp_ssize_t r = wisp_recv(fd, buf, 65536, 0);
        if (r == 0) {
            break; /* the peer's FIN */
        }
        if (r < 0) {
            if (wisp_errno() != WISP_EAGAIN) {
                ok = tclient_fail_errno(c, "recv");
                break;
            }
            if (tclient_stopping(n)) {
                ok = tclient_fail(c, "recv", WISP_ERR_ABRT);
                break;
            }
            continue;
        }
        if (!c->send_mode) {
            node_hash_update(&c->hash, buf, (size_t)r);
        }
        c->received += (uint64_t)r;
    }
    free(buf);
    if (ok) {
        c->t_last = mono_s();
        c->peer_closed = true;
        if (c->send_mode) {
            c->acked = c->written;
        }
    }
    return ok;
}

static bool sk_client(struct node *n)
{
    struct node_client *c = &n->client;
    struct wisp_sockaddr_in to;
    uint32_t i, rounds = c->connects > 0 ? c->connects : 1;
    bool ok = true;

    memset(&to, 0, sizeof to);
    to.sin_family = WISP_AF_INET;
    to.sin_port = wisp_htons(c->port);
    to.sin_addr.s_addr = c->ip;
    for (i = 0; i < rounds && ok; i++) {
        int fd = wisp_socket(WISP_AF_INET, WISP_SOCK_STREAM, 0);
        int r;
        bool alive;

        if (fd < 0) {
            return tclient_fail_errno(c, "socket");
        }
        if (!tclient_connecting(n, NULL, fd)) {
            (void)wisp_close(fd);
            return tclient_fail(c, "connect", WISP_ERR_ABRT);
        }
        c->t_start = mono_s();
        r = wisp_connect(fd, (const struct wisp_sockaddr *)&to, sizeof to);
        c->t_conn = mono_s();
        alive = tclient_connected(n);
        if (!alive) {
            return tclient_fail(c, "connect", WISP_ERR_ABRT); /* fd closed by the stop */
        }
        if (r != 0) {
            ok = tclient_fail_errno(c, "connect");
        } else if (c->connects > 0) {
            c->conn_times[c->connects_done++] = c->t_conn - c->t_start;
        } else {
            struct wisp_sockaddr_in me;
            wisp_socklen_t len = sizeof me;
            memset(&me, 0, sizeof me);
            c->connected = true;
            (void)wisp_getsockname(fd, (struct wisp_sockaddr *)&me, &len);
            tclient_print_connected(c, wisp_ntohs(me.sin_port));
            ok = sk_transfer_data(n, fd);
        }
        (void)wisp_close(fd);
    }
    return ok;
}

static void tclient_thread(void *arg)
{
    struct node *n = arg;
    bool ok = n->kind == NODE_API_SOCKET ? sk_client(n) : nc_client(n);

    client_finish(&n->client, ok);
    wisp_sys_mutex_lock(&n->tc.lock);
    n->tc.finished = true;
    wisp_sys_mutex_unlock(&n->tc.lock);
}

int tclient_start(struct node *n)
{
    n->tc.fd = -1;
    if (wisp_sys_mutex_new(&n->tc.lock) != WISP_OK) {
        fprintf(stderr, "wisp-node: client: no mutex\n");
        return -1;
    }
    n->tc.lock_made = true;
    if (wisp_sys_thread_new(&n->tc.thread, "wisp-client", tclient_thread, n, 0, 0) != WISP_OK) {
        fprintf(stderr, "wisp-node: client: no thread\n");
        return -1;
    }
    n->tc.running = true;
    return 0;
}

