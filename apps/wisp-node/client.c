/**
 * @file client.c
 * wisp-node: the --connect client on the raw API: a transfer of a deterministic
 * pattern checked with SHA-256, or --connects N (connect times).
 */
#include "node.h"

/* ------------------------------------------------------------- client
 * --connect ADDR:PORT with --send BYTES (a deterministic pattern, then
 * close) or --recv (everything until the peer closes), on the raw API.
 * The loop ends when the transfer is done; the node then waits (bounded)
 * until its closing connection has left the pools, and exits. */

void node_hash_hex(struct sha256_ctx *c, char *hex)
{
    static const char digits[] = "0123456789abcdef";
    uint8_t d[SHA256_DIGEST_SIZE];
    sha256_digest(c, sizeof(d), d);
    for (unsigned i = 0; i < sizeof(d); i++) {
        hex[2 * i] = digits[d[i] >> 4];
        hex[2 * i + 1] = digits[d[i] & 15u];
    }
    hex[2 * sizeof(d)] = '\0';
}

/* Byte i of the send pattern: splitmix64 of i / 8, little-endian. */
static uint64_t splitmix64(uint64_t x)
{
    x += 0x9e3779b97f4a7c15ull;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
    return x ^ (x >> 31);
}

void pattern_fill(uint64_t off, uint8_t *dst, size_t len)
{
    while (len > 0) {
        uint64_t v = splitmix64(off / 8u);
        unsigned b = (unsigned)(off % 8u);
        for (; b < 8 && len > 0; b++, len--, off++) {
            *dst++ = (uint8_t)(v >> (8 * b));
        }
    }
}

double mono_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

void client_finish(struct node_client *c, bool ok)
{
    if (!c->done) {
        c->done = true;
        c->ok = ok;
        c->t_end = mono_s();
    }
}

/* Close our PCB (the stack finishes the handshake); abort if that fails. */
static wisp_err_t client_close(struct node_client *c)
{
    wisp_err_t err;
    if (c->pcb == NULL) {
        return WISP_OK;
    }
    wisp_tcp_get_info(c->pcb, &c->info);
    c->have_info = true;
    wisp_tcp_arg(c->pcb, NULL);
    err = wisp_tcp_close(c->pcb);
    if (err == WISP_ERR_MEM) {
        wisp_tcp_arg(c->pcb, c);
        c->close_pending = true;
        return WISP_OK;
    }
    if (err != WISP_OK) {
        fprintf(stderr, "wisp-node: client: close failed: %s\n", wisp_err_str(err));
        wisp_tcp_abort(c->pcb);
        c->pcb = NULL;
        client_finish(c, false);
        return WISP_ERR_ABRT;
    }
    c->pcb = NULL;
    return WISP_OK;
}

static wisp_err_t client_fail(struct node_client *c, const char *what, wisp_err_t err)
{
    fprintf(stderr, "wisp-node: client: %s: %s\n", what, wisp_err_str(err));
    if (c->pcb != NULL) {
        wisp_tcp_get_info(c->pcb, &c->info);
        c->have_info = true;
        wisp_tcp_arg(c->pcb, NULL);
        wisp_tcp_abort(c->pcb);
        c->pcb = NULL;
    }
    client_finish(c, false);
    return WISP_ERR_ABRT;
}

/* Done when everything went both ways: (send) all bytes acknowledged and
 * the peer's FIN in; (recv) the peer's FIN in. Then close. */
static wisp_err_t client_check_done(struct node_client *c)
{
    if (c->done || !c->peer_closed) {
        return WISP_OK;
    }
    if (c->send_mode && c->acked < c->total) {
        return WISP_OK;
    }
    client_finish(c, true);
    return client_close(c);
}

/* Write as much of the pattern as the send buffer takes. Writes are of
 * --write-size bytes (a write waits for room rather than being split,
 * unless it is larger than the whole send buffer). */
/* in_input: called from a callback of segment processing (connected,
 * sent): the stack sends once it has processed the segment (and
 * wisp_tcp_write arms its output timer), so wisp_tcp_output is called only
 * from the poll timer (from inside segment processing it would use a peer
 * window not yet updated from that segment). */
static wisp_err_t client_pump(struct node_client *c, bool in_input)
{
    wisp_err_t err;
    unsigned guard = 0;

    if (c->close_pending) {
        c->close_pending = false;
        return client_close(c);
    }
    if (c->pcb == NULL || !c->send_mode || !c->connected) {
        return WISP_OK;
    }
    while (c->written < c->total && guard++ < 100000u) {
        uint32_t room = wisp_tcp_sndbuf(c->pcb);
        uint32_t rest, n;
        uint8_t flags = WISP_TCP_WRITE_COPY;

        if (c->chunk_off == c->chunk_len) {
            uint64_t left = c->total - c->written;
            c->chunk_len = left < c->wsize ? (uint32_t)left : c->wsize;
            c->chunk_off = 0;
            pattern_fill(c->written, c->chunk, c->chunk_len);
            node_hash_update(&c->hash, c->chunk, c->chunk_len);
        }
        rest = c->chunk_len - c->chunk_off;
        if (room == 0 || (room < rest && rest <= WISP_TCP_SND_BUF)) {
            break;
        }
        n = rest < room ? rest : room;
        if (c->written + n < c->total) {
            flags |= WISP_TCP_WRITE_MORE;
        }
        err = wisp_tcp_write(c->pcb, c->chunk + c->chunk_off, n, flags);
        if (err == WISP_ERR_MEM) {
            c->write_mem++;
            break;
        }
        if (err != WISP_OK) {
            return client_fail(c, "write", err);
        }
        c->writes++;
        c->chunk_off += n;
        c->written += n;
    }
    if (c->written == c->total && !c->shut_tx) {
        /* Everything is queued: FIN after it (half-close; the peer's FIN
         * still comes through the receive callback). */
        err = wisp_tcp_shutdown(c->pcb, false, true);
        if (err == WISP_OK) {
            c->shut_tx = true;
        } else if (err != WISP_ERR_MEM) {
            return client_fail(c, "shutdown", err);
        }
    }
    if (!in_input) {
        err = wisp_tcp_output(c->pcb);
        if (err != WISP_OK && err != WISP_ERR_MEM) {
            return client_fail(c, "output", err);
        }
    }
    return WISP_OK;
}

static wisp_err_t client_connected(void *arg, struct wisp_tcp_pcb *pcb, wisp_err_t err)
{
    struct node_client *c = arg;
    char a[16];
    uint16_t lport;
    wisp_ipaddr_t lip;

    if (c == NULL) {
        return WISP_OK;
    }
    if (err != WISP_OK) {
        return client_fail(c, "connect", err);
    }
    c->connected = true;
    c->t_conn = mono_s();
    wisp_tcp_local(pcb, &lip, &lport);
    printf("wisp-node: client connected to %s:%u from port %u in %.1f ms\n", wisp_ip4_ntoa(c->ip, a),
           (unsigned)c->port, (unsigned)lport, (c->t_conn - c->t_start) * 1e3);
    return client_pump(c, true);
}

static wisp_err_t client_recv(void *arg, struct wisp_tcp_pcb *pcb, struct wisp_pbuf *p, wisp_err_t err)
{
    struct node_client *c = arg;
    const struct wisp_pbuf *q;
    uint16_t len;

    if (c == NULL || (p != NULL && err != WISP_OK)) {
        wisp_pbuf_free(p);
        return WISP_OK;
    }
    if (p == NULL) {
        c->peer_closed = true;
        if (!c->send_mode) {
            c->t_last = mono_s();
        }
        return client_check_done(c);
    }
    len = p->tot_len;
    for (q = p; q != NULL; q = q->next) {
        if (!c->send_mode) {
            node_hash_update(&c->hash, q->payload, q->len);
        }
    }
    c->received += len;
    wisp_pbuf_free(p);
    wisp_tcp_recved(pcb, len);
    return WISP_OK;
}

static wisp_err_t client_sent(void *arg, struct wisp_tcp_pcb *pcb, uint32_t len)
{
    struct node_client *c = arg;
    WISP_UNUSED(pcb);
    if (c == NULL) {
        return WISP_OK;
    }
    c->acked += len;
    if (c->acked > c->written) {
        c->acked = c->written;   /* a FIN reported as a byte */
    }
    if (c->send_mode && c->acked == c->total && c->t_last == 0) {
        c->t_last = mono_s();
    }
    if (client_pump(c, true) != WISP_OK) {
        return WISP_ERR_ABRT;
    }
    return client_check_done(c);
}

static wisp_err_t client_poll(void *arg, struct wisp_tcp_pcb *pcb)
{
    struct node_client *c = arg;
    WISP_UNUSED(pcb);
    if (c == NULL) {
        return WISP_OK;
    }
    return client_pump(c, false);
}

static void client_err(void *arg, wisp_err_t err)
{
    struct node_client *c = arg;
    if (c == NULL) {
        return;
    }
    c->pcb = NULL;
    if (err == WISP_ERR_CLSD && c->connected) {
        /* After our shutdown(tx) the stack frees the PCB itself when the
         * connection reaches TIME-WAIT or CLOSED: a normal end once the
         * peer has closed too and everything was acknowledged. */
        c->peer_closed = true;
        if (!c->send_mode || c->acked == c->total) {
            if (c->t_last == 0) {
                c->t_last = mono_s();
            }
            client_finish(c, true);
            return;
        }
    }
    c->err = err;
    fprintf(stderr, "wisp-node: client: connection %s: %s\n", c->connected ? "lost" : "failed", wisp_err_str(err));
    client_finish(c, false);
}

static int rc_connect_next(struct node *n);

int client_start(struct node *n)
{
    struct node_client *c = &n->client;
    wisp_ipaddr_t ip = wisp_ipaddr4(c->ip);
    wisp_err_t err;

    node_hash_init(&c->hash);
    c->connects = n->o.connects;
    if (c->connects > 0) {
        c->conn_times = calloc(c->connects, sizeof c->conn_times[0]);
        if (c->conn_times == NULL) {
            fprintf(stderr, "wisp-node: out of memory\n");
            return -1;
        }
    }
    if (c->send_mode && c->connects == 0) {
        c->chunk = malloc(c->wsize);
        if (c->chunk == NULL) {
            fprintf(stderr, "wisp-node: out of memory\n");
            return -1;
        }
    }
    if (n->threaded) {
        return tclient_start(n); /* --api netconn | socket: a client thread */
    }
    if (c->connects > 0) {
        return rc_connect_next(n);
    }
    if (c->send_mode && c->chunk == NULL) {
        c->chunk = malloc(c->wsize);
        if (c->chunk == NULL) {
            fprintf(stderr, "wisp-node: out of memory\n");
            return -1;
        }
    }
    c->pcb = wisp_tcp_new(&n->stack);
    if (c->pcb == NULL) {
        fprintf(stderr, "wisp-node: client: no TCP PCB\n");
        return -1;
    }
    wisp_tcp_arg(c->pcb, c);
    wisp_tcp_recv(c->pcb, client_recv);
    wisp_tcp_sent(c->pcb, client_sent);
    wisp_tcp_err(c->pcb, client_err);
    wisp_tcp_poll(c->pcb, client_poll, 1);
    c->t_start = mono_s();
    err = wisp_tcp_connect(c->pcb, &ip, c->port, client_connected);
    if (err != WISP_OK) {
        fprintf(stderr, "wisp-node: client: connect: %s\n", wisp_err_str(err));
        wisp_tcp_arg(c->pcb, NULL);
        wisp_tcp_abort(c->pcb);
        c->pcb = NULL;
        return -1;
    }
    return 0;
}

/* Abort a transfer still running when the node stops. */
void client_stop(struct node *n)
{
    struct node_client *c = &n->client;
    if (c->pcb != NULL) {
        wisp_tcp_arg(c->pcb, NULL);
        wisp_tcp_abort(c->pcb);
        c->pcb = NULL;
    }
    free(c->chunk);
    c->chunk = NULL;
    free(c->conn_times);
    c->conn_times = NULL;
}

void print_tcp_info(const char *prefix, const struct wisp_tcp_info *i)
{
    printf("%smss %u wscale %u/%u ts %d sack %d cwnd %" PRIu32 " ssthresh %" PRIu32 " srtt %" PRIu32
           " ms rto %" PRIu32 " ms snd_wnd %" PRIu32 " rcv_wnd %" PRIu32 " retransmits %" PRIu32
           " fast_recoveries %" PRIu32 " timeouts %" PRIu32 " ooseq %" PRIu32 "\n",
           prefix, (unsigned)i->mss, (unsigned)i->snd_wscale, (unsigned)i->rcv_wscale, (int)i->ts_ok,
           (int)i->sack_ok, i->cwnd, i->ssthresh, i->srtt_ms, i->rto_ms, i->snd_wnd, i->rcv_wnd, i->retransmits,
           i->fast_recoveries, i->timeouts, i->ooseq_pbufs);
}

/* The client's result lines; returns 0 on success. */
static int connects_report(struct node *n);

int client_report(struct node *n)
{
    struct node_client *c = &n->client;
    char hex[65];
    double t0 = c->connected ? c->t_conn : c->t_start;
    double t1 = c->t_last > 0 ? c->t_last : c->t_end;
    double dt = t1 > t0 ? t1 - t0 : 1e-9;
    uint64_t bytes = c->send_mode ? c->acked : c->received;

    if (c->connects > 0) {
        return connects_report(n);
    }

    node_hash_hex(&c->hash, hex);
    if (c->send_mode) {
        printf("wisp-node: client sent %" PRIu64 " of %" PRIu64 " bytes (%" PRIu64 " acknowledged) in %.3f s, "
               "goodput %.2f MB/s, %" PRIu64 " writes of %" PRIu32 ", %" PRIu64 " refused (WISP_ERR_MEM), "
               "sha256 %s\n",
               c->written, c->total, c->acked, dt, (double)bytes / dt / 1e6, c->writes, c->wsize, c->write_mem,
               hex);
    } else {
        printf("wisp-node: client received %" PRIu64 " bytes in %.3f s, goodput %.2f MB/s, sha256 %s\n",
               c->received, dt, (double)bytes / dt / 1e6, hex);
    }
    if (c->have_info) {
        print_tcp_info("wisp-node: client tcp: ", &c->info);
    }
    if (!c->done || !c->ok) {
        printf("wisp-node: client FAILED%s%s\n", c->err != WISP_OK ? ": " : "",
               c->err != WISP_OK ? wisp_err_str(c->err) : "");
        return 1;
    }
    if (c->send_mode && c->acked != c->total) {
        printf("wisp-node: client FAILED: %" PRIu64 " of %" PRIu64 " bytes acknowledged\n", c->acked, c->total);
        return 1;
    }
    printf("wisp-node: client done\n");
    return 0;
}

/* ------------------------------------------------------------ connects
 * --connects N: N connections opened (timed) and closed in sequence. */

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : (x > y ? 1 : 0);
}

static int connects_report(struct node *n)
{
    struct node_client *c = &n->client;
    char a[16];
    double sum = 0;
    uint32_t i, k = c->connects_done;

    if (k > 0) {
        for (i = 0; i < k; i++) {
            sum += c->conn_times[i];
        }
        qsort(c->conn_times, k, sizeof c->conn_times[0], cmp_double);
        printf("wisp-node: client %" PRIu32 " connects to %s:%u: mean %.1f us, median %.1f us, min %.1f us, "
               "max %.1f us\n",
               k, wisp_ip4_ntoa(c->ip, a), (unsigned)c->port, sum / k * 1e6, c->conn_times[k / 2] * 1e6,
               c->conn_times[0] * 1e6, c->conn_times[k - 1] * 1e6);
    }
    if (!c->done || !c->ok || k != c->connects) {
        printf("wisp-node: client FAILED after %" PRIu32 " of %" PRIu32 " connects%s%s\n", k, c->connects,
               c->err != WISP_OK ? ": " : "", c->err != WISP_OK ? wisp_err_str(c->err) : "");
        return 1;
    }
    printf("wisp-node: client done\n");
    return 0;
}

/* Raw API: the connected callback takes the time and closes; the main
 * loop (client_tick) starts the next connection. */
static wisp_err_t rc_connected(void *arg, struct wisp_tcp_pcb *pcb, wisp_err_t err)
{
    struct node_client *c = arg;

    if (c == NULL) {
        return WISP_OK;
    }
    if (err != WISP_OK) {
        return client_fail(c, "connect", err);
    }
    c->conn_times[c->connects_done++] = mono_s() - c->t_start;
    wisp_tcp_arg(pcb, NULL);
    c->pcb = NULL;
    if (wisp_tcp_close(pcb) != WISP_OK) {
        wisp_tcp_abort(pcb);
        client_finish(c, false);
        return WISP_ERR_ABRT;
    }
    c->next_due = true;
    return WISP_OK;
}

static int rc_connect_next(struct node *n)
{
    struct node_client *c = &n->client;
    wisp_ipaddr_t ip = wisp_ipaddr4(c->ip);
    wisp_err_t err;

    c->next_due = false;
    if (c->connects_done == c->connects) {
        client_finish(c, true);
        return 0;
    }
    c->pcb = wisp_tcp_new(&n->stack);
    if (c->pcb == NULL) {
        fprintf(stderr, "wisp-node: client: no TCP PCB\n");
        client_finish(c, false);
        return -1;
    }
    wisp_tcp_arg(c->pcb, c);
    wisp_tcp_err(c->pcb, client_err);
    c->t_start = mono_s();
    err = wisp_tcp_connect(c->pcb, &ip, c->port, rc_connected);
    if (err != WISP_OK) {
        fprintf(stderr, "wisp-node: client: connect: %s\n", wisp_err_str(err));
        wisp_tcp_arg(c->pcb, NULL);
        wisp_tcp_abort(c->pcb);
        c->pcb = NULL;
        c->err = err;
        client_finish(c, false);
        return -1;
    }
    return 0;
}

/* Raw API, from the main loop: the next connection of --connects. */
void client_tick(struct node *n)
{
    if (n->o.client && n->client.connects > 0 && n->client.next_due && !n->client.done) {
        (void)rc_connect_next(n);
    }
}

