/**
 * @file main.c
 * wisp-node: one wisp stack on a Linux TAP interface, serving the standard
 * small services (UDP echo 7, discard 9; TCP echo 7, discard 9, chargen
 * 19), for interoperability tests against the Linux kernel; optionally a
 * TCP client transfer to a Linux peer (--connect).
 *
 *   wisp-node --tap NAME --addr A.B.C.D/PREFIX [--gw ADDR] [--pcap FILE]
 *             [--mtu N] [--seed N] [--api raw|netconn|socket] [--quiet]
 *             [--connect ADDR:PORT (--send BYTES | --recv) [--write-size N]
 *                                  | --connects N)]
 *
 * Client mode: --send writes BYTES of a deterministic pattern (splitmix64
 * of the 8-byte block index, little-endian) in writes of --write-size
 * bytes (default 1460), then closes; --recv takes everything until the
 * peer closes. Either prints bytes, goodput (MB = 10^6 bytes) and the
 * SHA-256 of the bytes sent / received; the node then waits until the
 * connection has left its pools (at most 3 s) and exits: 0 = transfer
 * complete and no leak. --connects N instead opens and closes N
 * connections in sequence and prints the connect times.
 *
 * --api: raw (default) runs services and client on the raw callback API
 * in the main loop. netconn and socket start a stack thread
 * (wisp_tcpip_start) and run the same services and the client as
 * application threads on that API (apps/lib/services_netconn.c,
 * services_socket.c; one thread per TCP connection from a bounded pool);
 * the main loop is then the tap's I/O thread: it reads the tap under the
 * core lock and writes the frames the stack queued in the tap's transmit
 * ring without it (deferred transmit, ports/unix/tapdev.h). At a stop
 * the threads close their connections first (FIN), then the stack thread
 * stops, and the report and pool check are those of raw.
 *
 * --dns ADDR gives the stack's DNS resolver (wisp/dns.h) its server;
 * --resolve NAME (raw API) resolves NAME, prints "wisp-node: resolve NAME
 * -> A.B.C.D (ttl N)" or "wisp-node: resolve NAME: NXDOMAIN" (or why it
 * failed) and exits: 0 = resolved, 1 = not.
 *
 * The event loop waits in ppoll() on the tap fd with the time until the
 * stack's next timer (capped) and then runs the due timers. SIGINT/SIGTERM
 * only set a flag (they are blocked outside ppoll, so none is missed);
 * the loop then ends, prints every counter, the interfaces and the pools,
 * tears the stack down and checks that every pool is back at zero use.
 *
 * --udp-probe ADDR:PORT (raw API) sends a datagram from a connected UDP
 * PCB every 200 ms (at most 10) until an ICMP error about them comes back
 * (RFC 1122 §4.1.3.3), prints "wisp-node: udp-probe: ERR_REFUSED after N
 * datagrams (ICMP type 3 code 3 from A.B.C.D)" and exits: 0 = refused
 * (port unreachable), 1 = another error or none.
 *
 * Exit status: 0 = clean, 1 = runtime error or a pool leak, 2 = usage.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "wisp/wisp.h"
#include "wisp/pcapdev.h"
#include "wisp/dhcp.h"
#include "services.h"
#include "iperf.h"
#include "httpd.h"
#include "ping.h"
#include "services_netconn.h"
#include "services_socket.h"
#include "tapdev.h"
#include "unix_port.h"

/** Longest wait in the event loop (ms): bounds the reaction to anything
 *  that is not an fd event or a timer. */
#define NODE_MAX_WAIT_MS 1000u

/** Client mode: longest wait after the transfer for the closing
 *  connection to leave the pools (the FIN handshake), in ms. */
#define NODE_CLIENT_LINGER_MS 3000u
/** Largest --write-size. */
#define NODE_MAX_WRITE_SIZE (16u << 20)

struct node_opts {
    const char *tap;
    const char *pcap;
    const char *api;
    wisp_ip4_t addr, mask, gw;
    unsigned prefix;
    unsigned mtu;
    uint64_t seed;
    bool have_seed;
    bool quiet;
    bool dhcp;                   /**< --dhcp: address from a DHCP lease */
    /* client mode */
    bool client;
    wisp_ip4_t peer_ip;
    uint16_t peer_port;
    bool send, recv;
    uint64_t send_bytes;
    uint32_t write_size;
    uint32_t connects;           /**< --connects N (0 = a transfer) */
    /* iperf 2 (apps/lib/iperf.h): --iperf server, --iperf-client test */
    bool iperf, iperf_client, iperf_udp;
    wisp_ip4_t iperf_ip;
    uint16_t iperf_port;
    uint64_t iperf_rate, iperf_bytes;
    uint32_t iperf_time_ms, iperf_len;
    /* --http (apps/lib/httpd.h), --ping ADDR (apps/lib/ping.h) */
    bool http, ping;
    /* --http-max-conns, --http-per-source, --http-idle-ms, --http-head-ms,
     * --http-reclaim-ms; --svc-idle-ms, --svc-per-source, --svc-reclaim-ms
     * (zero = the library's default) */
    struct wisp_httpd_opts http_opt;
    struct wisp_services_opts svc_opt;
    wisp_ip4_t ping_ip;
    uint32_t ping_count, ping_interval_ms;
    uint16_t ping_size;
    bool have_ping_count, have_ping_interval, have_ping_size;
    /* DNS: --dns ADDR (the resolver's server), --resolve NAME (resolve,
     * print the result, exit) */
    wisp_ip4_t dns_server;
    const char *resolve;
    /* --udp-probe ADDR:PORT (raw API) */
    bool udp_probe;
    wisp_ip4_t probe_ip;
    uint16_t probe_port;
};

/** SHA-256 state (FIPS 180-4), for the client's transfer check. */
struct sha256 {
    uint32_t h[8];
    uint64_t len;          /**< bytes hashed */
    uint8_t buf[64];
    unsigned fill;
};

/** State of the --connect transfer. */
struct node_client {
    wisp_ip4_t ip;
    uint16_t port;
    bool send_mode;
    uint64_t total;              /**< send: bytes to send */
    uint32_t wsize;              /**< write size */
    struct wisp_tcp_pcb *pcb;    /**< NULL once closed / freed */
    uint8_t *chunk;              /**< current write (send) */
    uint32_t chunk_len, chunk_off;
    uint64_t written, acked, received, writes, write_mem;
    bool connected, peer_closed, shut_tx, close_pending, done, ok;
    wisp_err_t err;
    double t_start, t_conn, t_last, t_end;
    bool have_info;
    struct wisp_tcp_info info;
    struct sha256 hash;
    /* --connects N */
    uint32_t connects, connects_done;
    double *conn_times;          /**< seconds per connect */
    bool next_due;               /**< raw API: start the next connection */
};

/** The client thread of --api netconn / socket. */
struct node_tclient {
    wisp_sys_thread_t thread;
    wisp_sys_mutex_t lock;       /**< the fields below */
    bool lock_made, running;     /**< (main thread only) */
    bool stop, finished;
    bool connecting, closed_by_stop;
    struct wisp_netconn *conn;   /**< while connecting (netconn) */
    int fd;                      /**< while connecting (socket), else -1 */
};

enum node_api_kind { NODE_API_RAW = 0, NODE_API_NETCONN, NODE_API_SOCKET };

struct node {
    struct node_opts o;
    struct wisp_stack stack;
    struct wisp_tapdev tap;
    struct wisp_pcapdev pcap;
    FILE *pcap_file;
    uint32_t pcap_flushed;       /**< records written at the last fflush */
    struct wisp_netif nif;
    struct wisp_services svc;
    bool services_up;
    struct node_client client;
    /* --api netconn / socket: the stack thread, the API layers, the
     * services and the client as application threads */
    enum node_api_kind kind;
    bool threaded;
    bool tcpip_up, ncapi_up, socks_up;
    struct wisp_tcpip tcpip;
    struct wisp_netconn_api ncapi;
    struct wisp_sockets socks;
    struct wisp_nc_services ncsvc;
    struct wisp_sock_services sksvc;
    struct node_tclient tc;
    /* snapshots taken before the threaded layers stop */
    struct wisp_nc_services_stats tsvc_st;
    struct wisp_netconn_stats nc_st;
    struct wisp_tcpip_stats tcpip_st;
    bool have_tstats;
    /* iperf 2 server (--iperf) and client (--iperf-client), raw API */
    struct wisp_iperf_server iperf_srv;
    bool iperf_up;
    struct wisp_iperf_client iperf_cl;
    bool iperf_cl_done;
    struct wisp_iperf_result iperf_res;
    /* --dhcp: the DHCP client (raw API) */
    struct wisp_dhcp dhcp;
    /* HTTP server (--http) and ping client (--ping), raw API */
    struct wisp_httpd *httpd;        /**< allocated when --http */
    struct wisp_ping ping;
    bool ping_up;
    /* --resolve NAME (raw API): the outcome */
    bool resolve_done, resolve_ok;
    bool resolve_started;        /**< with --dhcp: started once the lease is bound */
    /* --udp-probe (raw API) */
    struct wisp_udp_pcb *probe;
    struct wisp_timer probe_tmr;
    unsigned probe_sent;
    bool probe_done;
    wisp_err_t probe_err;
};

/* ------------------------------------------------------------ SHA-256
 * FIPS 180-4 SHA-256, for the client's transfer check (no libcrypto). */


static const uint32_t sha256_k[64] = {
    0x428a2f98u, 0x71374491u, 0xb5c0fbcfu, 0xe9b5dba5u, 0x3956c25bu, 0x59f111f1u, 0x923f82a4u, 0xab1c5ed5u,
    0xd807aa98u, 0x12835b01u, 0x243185beu, 0x550c7dc3u, 0x72be5d74u, 0x80deb1feu, 0x9bdc06a7u, 0xc19bf174u,
    0xe49b69c1u, 0xefbe4786u, 0x0fc19dc6u, 0x240ca1ccu, 0x2de92c6fu, 0x4a7484aau, 0x5cb0a9dcu, 0x76f988dau,
    0x983e5152u, 0xa831c66du, 0xb00327c8u, 0xbf597fc7u, 0xc6e00bf3u, 0xd5a79147u, 0x06ca6351u, 0x14292967u,
    0x27b70a85u, 0x2e1b2138u, 0x4d2c6dfcu, 0x53380d13u, 0x650a7354u, 0x766a0abbu, 0x81c2c92eu, 0x92722c85u,
    0xa2bfe8a1u, 0xa81a664bu, 0xc24b8b70u, 0xc76c51a3u, 0xd192e819u, 0xd6990624u, 0xf40e3585u, 0x106aa070u,
    0x19a4c116u, 0x1e376c08u, 0x2748774cu, 0x34b0bcb5u, 0x391c0cb3u, 0x4ed8aa4au, 0x5b9cca4fu, 0x682e6ff3u,
    0x748f82eeu, 0x78a5636fu, 0x84c87814u, 0x8cc70208u, 0x90befffau, 0xa4506cebu, 0xbef9a3f7u, 0xc67178f2u,
};

#define ROR32(x, n) (((x) >> (n)) | ((x) << (32 - (n))))

static void sha256_init(struct sha256 *c)
{
    static const uint32_t h0[8] = { 0x6a09e667u, 0xbb67ae85u, 0x3c6ef372u, 0xa54ff53au,
                                    0x510e527fu, 0x9b05688cu, 0x1f83d9abu, 0x5be0cd19u };
    memcpy(c->h, h0, sizeof h0);
    c->len = 0;
    c->fill = 0;
}

static void sha256_block(struct sha256 *c, const uint8_t *p)
{
    uint32_t w[64], a, b, d, e, f, g, h, cc;
    unsigned i;

    for (i = 0; i < 16; i++) {
        w[i] = (uint32_t)p[4 * i] << 24 | (uint32_t)p[4 * i + 1] << 16 | (uint32_t)p[4 * i + 2] << 8 | p[4 * i + 3];
    }
    for (i = 16; i < 64; i++) {
        uint32_t s0 = ROR32(w[i - 15], 7) ^ ROR32(w[i - 15], 18) ^ (w[i - 15] >> 3);
        uint32_t s1 = ROR32(w[i - 2], 17) ^ ROR32(w[i - 2], 19) ^ (w[i - 2] >> 10);
        w[i] = w[i - 16] + s0 + w[i - 7] + s1;
    }
    a = c->h[0];
    b = c->h[1];
    cc = c->h[2];
    d = c->h[3];
    e = c->h[4];
    f = c->h[5];
    g = c->h[6];
    h = c->h[7];
    for (i = 0; i < 64; i++) {
        uint32_t s1 = ROR32(e, 6) ^ ROR32(e, 11) ^ ROR32(e, 25);
        uint32_t ch = (e & f) ^ (~e & g);
        uint32_t t1 = h + s1 + ch + sha256_k[i] + w[i];
        uint32_t s0 = ROR32(a, 2) ^ ROR32(a, 13) ^ ROR32(a, 22);
        uint32_t maj = (a & b) ^ (a & cc) ^ (b & cc);
        uint32_t t2 = s0 + maj;
        h = g;
        g = f;
        f = e;
        e = d + t1;
        d = cc;
        cc = b;
        b = a;
        a = t1 + t2;
    }
    c->h[0] += a;
    c->h[1] += b;
    c->h[2] += cc;
    c->h[3] += d;
    c->h[4] += e;
    c->h[5] += f;
    c->h[6] += g;
    c->h[7] += h;
}

static void sha256_update(struct sha256 *c, const void *data, size_t len)
{
    const uint8_t *p = data;
    c->len += len;
    if (c->fill > 0) {
        size_t n = 64 - c->fill;
        if (n > len) {
            n = len;
        }
        memcpy(c->buf + c->fill, p, n);
        c->fill += (unsigned)n;
        p += n;
        len -= n;
        if (c->fill < 64) {
            return;
        }
        sha256_block(c, c->buf);
        c->fill = 0;
    }
    while (len >= 64) {
        sha256_block(c, p);
        p += 64;
        len -= 64;
    }
    memcpy(c->buf, p, len);
    c->fill = (unsigned)len;
}

/* Finish and format as 64 lowercase hex digits (hex: 65 bytes). */
static void sha256_hex(struct sha256 *c, char *hex)
{
    uint64_t bits = c->len * 8u;
    uint8_t pad = 0x80;
    uint8_t lenb[8];
    unsigned i;

    sha256_update(c, &pad, 1);
    pad = 0;
    while (c->fill != 56) {
        sha256_update(c, &pad, 1);
    }
    for (i = 0; i < 8; i++) {
        lenb[i] = (uint8_t)(bits >> (56 - 8 * i));
    }
    sha256_update(c, lenb, 8);
    for (i = 0; i < 32; i++) {
        sprintf(hex + 2 * i, "%02x", (unsigned)(uint8_t)(c->h[i / 4] >> (24 - 8 * (i % 4))));
    }
    hex[64] = '\0';
}

/* ------------------------------------------------------------- client
 * --connect ADDR:PORT with --send BYTES (a deterministic pattern, then
 * close) or --recv (everything until the peer closes), on the raw API.
 * The loop ends when the transfer is done; the node then waits (bounded)
 * until its closing connection has left the pools, and exits. */

/* Byte i of the send pattern: splitmix64 of i / 8, little-endian. */
static uint64_t splitmix64(uint64_t x)
{
    x += 0x9e3779b97f4a7c15ull;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
    return x ^ (x >> 31);
}

static void pattern_fill(uint64_t off, uint8_t *dst, size_t len)
{
    while (len > 0) {
        uint64_t v = splitmix64(off / 8u);
        unsigned b = (unsigned)(off % 8u);
        for (; b < 8 && len > 0; b++, len--, off++) {
            *dst++ = (uint8_t)(v >> (8 * b));
        }
    }
}

static double mono_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void client_finish(struct node_client *c, bool ok)
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
            sha256_update(&c->hash, c->chunk, c->chunk_len);
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
            sha256_update(&c->hash, q->payload, q->len);
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

static int tclient_start(struct node *n);
static int rc_connect_next(struct node *n);

static int client_start(struct node *n)
{
    struct node_client *c = &n->client;
    wisp_ipaddr_t ip = wisp_ipaddr4(c->ip);
    wisp_err_t err;

    sha256_init(&c->hash);
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
static void client_stop(struct node *n)
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

static void print_tcp_info(const char *prefix, const struct wisp_tcp_info *i)
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

static int client_report(struct node *n)
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

    sha256_hex(&c->hash, hex);
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
static void client_tick(struct node *n)
{
    if (n->o.client && n->client.connects > 0 && n->client.next_due && !n->client.done) {
        (void)rc_connect_next(n);
    }
}

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

static void tclient_request_stop(struct node *n)
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

static bool tclient_finished(struct node *n)
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

static void tclient_join(struct node *n)
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
    sha256_update(&c->hash, c->chunk, c->chunk_len);
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
                sha256_update(&c->hash, q->payload, q->len);
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
            sha256_update(&c->hash, buf, (size_t)r);
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

static int tclient_start(struct node *n)
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

/* ---------------------------------------------------------- API table
 * One row per application API; each starts and stops the node's services
 * on that API. Only "raw" (the core-context callback API) exists so far;
 * netconn and socket add rows here. */
struct node_api {
    const char *name;
    int (*start)(struct node *n);
    void (*stop)(struct node *n);
    void (*dump)(struct node *n);
    /** Optional: stop the application threads and the stack thread before
     *  the exit report (the stack is single-threaded again afterwards). */
    void (*quiesce)(struct node *n);
};

/* One line per TCP service connection that ends (the interop tests read
 * them: bytes per connection, how it ended). */
static void raw_conn_report(void *ctx, const struct wisp_tcp_conn_report *r)
{
    struct node *n = ctx;
    char a[16];

    if (n->o.quiet) {
        return;
    }
    printf("wisp-node: tcp/%u %s %s:%u %s: rx %" PRIu64 " tx %" PRIu64 "%s%s\n", (unsigned)r->port, r->service,
           wisp_ip4_ntoa(wisp_ipaddr_ip4(&r->remote_ip), a), (unsigned)r->remote_port,
           r->how == WISP_OK ? "closed" : (r->how == WISP_ERR_ABRT ? "aborted" : "ended"), r->bytes_rx,
           r->bytes_tx, r->how == WISP_OK ? "" : ", ", r->how == WISP_OK ? "" : wisp_err_str(r->how));
    if (r->have_info && (r->info.retransmits != 0 || r->info.timeouts != 0)) {
        print_tcp_info("wisp-node:   tcp: ", &r->info);
    }
}

static int raw_start(struct node *n)
{
    unsigned i, cnt;
    const struct wisp_service_desc *t = wisp_services_table(&cnt);
    wisp_err_t err = wisp_services_start_opts(&n->stack, &n->svc, &n->o.svc_opt);

    if (err != WISP_OK) {
        fprintf(stderr, "wisp-node: cannot start the services: %s\n", wisp_err_str(err));
        return -1;
    }
    wisp_services_set_report(&n->svc, raw_conn_report, n);
    n->services_up = true;
    if (!n->o.quiet) {
        for (i = 0; i < cnt; i++) {
            printf("wisp-node: service %s/%u %s (raw API)\n", t[i].proto == WISP_IP4_PROTO_UDP ? "udp" : "tcp",
                   (unsigned)t[i].port, t[i].name);
        }
        printf("wisp-node: tcp services: %u records, %u per source, idle %" PRIu32 " ms, reclaim after %" PRIu32
               " ms\n", (unsigned)WISP_SERVICES_TCP_CONNS, (unsigned)n->svc.opt.per_source, n->svc.opt.idle_ms,
               n->svc.opt.reclaim_ms);
    }
    return 0;
}

static void raw_stop(struct node *n)
{
    if (n->services_up) {
        wisp_services_stop(&n->svc);
        n->services_up = false;
    }
}

static void print_service(const char *name, const struct wisp_service_stats *st)
{
    printf("  %-16s datagrams %" PRIu32 " bytes %" PRIu32 " dropped %" PRIu32 " send_err %" PRIu32 "\n", name,
           st->datagrams, st->bytes, st->dropped, st->send_err);
}

static void print_tcp_service(const char *name, const struct wisp_tcp_service_stats *st)
{
    printf("  %-16s connections %" PRIu32 " active %" PRIu32 " closed %" PRIu32 " resets %" PRIu32
           " aborted %" PRIu32 " refused %" PRIu32 " rx %" PRIu64 " tx %" PRIu64 " timeouts %" PRIu32
           " reclaimed %" PRIu32 " capped %" PRIu32 "\n",
           name, st->connections, st->active, st->closed, st->resets, st->aborted, st->refused, st->bytes_rx,
           st->bytes_tx, st->timeouts, st->reclaimed, st->capped);
}

static void raw_dump(struct node *n)
{
    printf("services:\n");
    print_service("udp/7 echo", &n->svc.udp_echo_st);
    print_service("udp/9 discard", &n->svc.udp_discard_st);
    print_tcp_service("tcp/7 echo", &n->svc.tcp[WISP_TCP_SVC_ECHO].st);
    print_tcp_service("tcp/9 discard", &n->svc.tcp[WISP_TCP_SVC_DISCARD].st);
    print_tcp_service("tcp/19 chargen", &n->svc.tcp[WISP_TCP_SVC_CHARGEN].st);
}

/* ------------------------------------------------ --api netconn|socket
 * The stack runs on its own thread (wisp_tcpip_start, core locking); the
 * main loop is the tap's I/O thread: it reads the tap in batches under the
 * core lock (wisp_tcpip_lock; each frame goes straight to wisp_dev_input,
 * no mailbox hop) and writes the tap's transmit ring without any lock.
 * Transmit runs in whichever thread holds the core lock (an application
 * thread's write, this thread's ACK processing, the stack thread's timers)
 * and only copies the frame into that ring (wisp_tapdev_tx_defer), so no
 * thread holds the core while Linux runs its receive path inside a tap
 * write(2). The services and the client are application threads on the
 * chosen API (apps/lib/services_netconn.c, services_socket.c). */

static int node_tap_pump(struct node *n, const sigset_t *wait_mask, uint32_t wait_ms);

static unsigned node_pools_in_use(struct node *n)
{
    unsigned v;
    if (!n->tcpip_up) {
        return wisp_stack_pools_in_use(&n->stack);
    }
    wisp_tcpip_lock(&n->tcpip);
    v = wisp_stack_pools_in_use(&n->stack);
    wisp_tcpip_unlock(&n->tcpip);
    return v;
}

static unsigned threaded_svc_threads(struct node *n)
{
    if (!n->services_up) {
        return 0;
    }
    if (n->kind == NODE_API_SOCKET) {
        struct wisp_sock_services_stats st;
        wisp_sock_services_stats(&n->sksvc, &st);
        return st.threads;
    } else {
        struct wisp_nc_services_stats st;
        wisp_nc_services_stats(&n->ncsvc, &st);
        return st.threads;
    }
}

/* Stop the client and the services (their connections closed while the
 * tap is still served, so the closes complete), then the API layers and
 * the stack thread. Idempotent. */
static void threaded_quiesce(struct node *n)
{
    double until;

    if (!n->tcpip_up) {
        wisp_tapdev_tx_direct(&n->tap);
        return;
    }
    tclient_request_stop(n);
    if (n->services_up) {
        if (n->kind == NODE_API_SOCKET) {
            wisp_sock_services_request_stop(&n->sksvc);
        } else {
            wisp_nc_services_request_stop(&n->ncsvc);
        }
    }
    until = mono_s() + 3.0;
    while (mono_s() < until && (!tclient_finished(n) || threaded_svc_threads(n) > 0)) {
        (void)node_tap_pump(n, NULL, 10);
    }
    tclient_join(n);
    if (n->services_up) {
        if (n->kind == NODE_API_SOCKET) {
            struct wisp_sock_services_stats st;
            wisp_sock_services_stop(&n->sksvc);
            wisp_sock_services_stats(&n->sksvc, &st);
            memcpy(n->tsvc_st.udp, st.udp, sizeof st.udp);
            memcpy(n->tsvc_st.tcp, st.tcp, sizeof st.tcp);
            n->tsvc_st.threads = st.threads;
        } else {
            wisp_nc_services_stop(&n->ncsvc);
            wisp_nc_services_stats(&n->ncsvc, &n->tsvc_st);
        }
        n->services_up = false;
        n->have_tstats = true;
    }
    /* Let the closing handshakes finish (bounded). */
    until = mono_s() + 1.0;
    while (mono_s() < until && node_pools_in_use(n) > 0) {
        (void)node_tap_pump(n, NULL, 10);
    }
    if (n->socks_up) {
        int left = wisp_sockets_deinit();
        if (left != 0) {
            fprintf(stderr, "wisp-node: %d sockets were still open\n", left);
        }
        n->socks_up = false;
    }
    if (n->ncapi_up) {
        wisp_netconn_api_stats(&n->ncapi, &n->nc_st);
        if (wisp_netconn_api_deinit(&n->ncapi) != WISP_OK) {
            fprintf(stderr, "wisp-node: netconns or netbufs still in use at stop\n");
        } else {
            n->ncapi_up = false;
        }
    }
    wisp_tcpip_get_stats(&n->tcpip, &n->tcpip_st);
    wisp_tcpip_stop(&n->tcpip);
    n->tcpip_up = false;
    wisp_tapdev_tx_direct(&n->tap);   /* single-threaded again: direct writes */
    if (n->tc.lock_made) {
        wisp_sys_mutex_free(&n->tc.lock);
        n->tc.lock_made = false;
    }
}

static int threaded_start(struct node *n, enum node_api_kind kind)
{
    unsigned i, cnt;
    const struct wisp_service_desc *t = wisp_services_table(&cnt);
    const char *what = kind == NODE_API_SOCKET ? "socket" : "netconn";
    char msg[160];
    wisp_err_t err;

    n->kind = kind;
    n->threaded = true;
    /* Transmit becomes a copy into a ring the main thread writes out
     * without the core lock (before any other thread may transmit). */
    if (wisp_tapdev_tx_defer(&n->tap, 0, msg, sizeof msg) != 0) {
        fprintf(stderr, "wisp-node: %s\n", msg);
        return -1;
    }
    err = wisp_sys_init();
    if (err == WISP_OK) {
        err = wisp_tcpip_start(&n->tcpip, &n->stack, NULL);
    }
    if (err != WISP_OK) {
        fprintf(stderr, "wisp-node: cannot start the stack thread: %s\n", wisp_err_str(err));
        return -1;
    }
    n->tcpip_up = true;
    err = wisp_netconn_api_init(&n->ncapi, &n->tcpip);
    if (err != WISP_OK) {
        fprintf(stderr, "wisp-node: cannot set up the netconn layer: %s\n", wisp_err_str(err));
        return -1;
    }
    n->ncapi_up = true;
    if (kind == NODE_API_SOCKET) {
        err = wisp_sockets_init(&n->socks, &n->ncapi);
        if (err != WISP_OK) {
            fprintf(stderr, "wisp-node: cannot install the socket table: %s\n", wisp_err_str(err));
            return -1;
        }
        n->socks_up = true;
        err = wisp_sock_services_start_opts(&n->sksvc, &n->o.svc_opt, raw_conn_report, n);
    } else {
        err = wisp_nc_services_start_opts(&n->ncsvc, &n->ncapi, &n->o.svc_opt, raw_conn_report, n);
    }
    if (err != WISP_OK) {
        fprintf(stderr, "wisp-node: cannot start the services: %s\n", wisp_err_str(err));
        return -1;
    }
    n->services_up = true;
    if (!n->o.quiet) {
        for (i = 0; i < cnt; i++) {
            printf("wisp-node: service %s/%u %s (%s API, application threads)\n",
                   t[i].proto == WISP_IP4_PROTO_UDP ? "udp" : "tcp", (unsigned)t[i].port, t[i].name, what);
        }
        {
            const struct wisp_services_opts *so = kind == NODE_API_SOCKET ? &n->sksvc.opt : &n->ncsvc.opt;
            printf("wisp-node: tcp services: %u threads, %u per source, idle %" PRIu32 " ms, reclaim after %" PRIu32
                   " ms\n", kind == NODE_API_SOCKET ? (unsigned)WISP_SOCK_SERVICES_CONNS
                                                     : (unsigned)WISP_NC_SERVICES_CONNS,
                   (unsigned)so->per_source, so->idle_ms, so->reclaim_ms);
        }
    }
    return 0;
}

static int netconn_start(struct node *n)
{
    return threaded_start(n, NODE_API_NETCONN);
}

static int socket_start(struct node *n)
{
    return threaded_start(n, NODE_API_SOCKET);
}

static void threaded_dump(struct node *n)
{
    const struct wisp_nc_services_stats *st = &n->tsvc_st;

    if (!n->have_tstats) {
        return;
    }
    printf("services (%s API):\n", n->kind == NODE_API_SOCKET ? "socket" : "netconn");
    print_service("udp/7 echo", &st->udp[WISP_UDP_SVC_ECHO]);
    print_service("udp/9 discard", &st->udp[WISP_UDP_SVC_DISCARD]);
    print_tcp_service("tcp/7 echo", &st->tcp[WISP_TCP_SVC_ECHO]);
    print_tcp_service("tcp/9 discard", &st->tcp[WISP_TCP_SVC_DISCARD]);
    print_tcp_service("tcp/19 chargen", &st->tcp[WISP_TCP_SVC_CHARGEN]);
    printf("netconn layer: conns high %u, bufs high %u, conns failed %" PRIu32 ", bufs failed %" PRIu32
           ", udp drops %" PRIu32 ", tcp refused %" PRIu32 ", accept drops %" PRIu32 "\n",
           (unsigned)n->nc_st.conns_high, (unsigned)n->nc_st.bufs_high, n->nc_st.conns_failed, n->nc_st.bufs_failed,
           n->nc_st.udp_drops, n->nc_st.tcp_refused, n->nc_st.accept_drops);
    printf("stack thread: calls %" PRIu32 " callbacks %" PRIu32 " inputs %" PRIu32 " input drops %" PRIu32
           " polls %" PRIu32 " wakes %" PRIu32 "\n",
           n->tcpip_st.calls, n->tcpip_st.callbacks, n->tcpip_st.inputs, n->tcpip_st.input_drops, n->tcpip_st.polls,
           n->tcpip_st.wakes);
}

static const struct node_api node_apis[] = {
    { "raw", raw_start, raw_stop, raw_dump, NULL },
    { "netconn", netconn_start, threaded_quiesce, threaded_dump, threaded_quiesce },
    { "socket", socket_start, threaded_quiesce, threaded_dump, threaded_quiesce },
};

static const struct node_api *find_api(const char *name)
{
    size_t i;
    for (i = 0; i < sizeof node_apis / sizeof node_apis[0]; i++) {
        if (strcmp(node_apis[i].name, name) == 0) {
            return &node_apis[i];
        }
    }
    return NULL;
}

/* -------------------------------------------------------------- iperf
 * --iperf: the iperf 2 server (apps/lib/iperf.c) on TCP and UDP port 5001
 * next to the services; --iperf-client: one iperf 2 test against a server
 * (the node exits when it is over). Raw API, in the main loop. Report
 * lines are iperf-like: interval, bytes, Mbits/sec (10^6 bit/s); UDP adds
 * jitter, lost/total and out-of-order. */

static uint64_t node_iperf_clock(void *ctx)
{
    struct timespec ts;
    (void)ctx;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u;
}

static double node_mbps(uint64_t bytes, uint64_t us)
{
    return us > 0 ? (double)bytes * 8.0 / (double)us : 0.0;
}

static void node_iperf_print_udp_report(const char *what, const struct wisp_iperf_udp_report *r)
{
    printf("wisp-node: iperf %s: 0.000-%.3f sec, %" PRIu64 " bytes, %.2f Mbits/sec, jitter %.3f ms, "
           "lost %" PRIu64 "/%" PRIu64 " (%.2g%%), out-of-order %" PRIu64 "\n",
           what, (double)r->duration_us / 1e6, r->bytes, node_mbps(r->bytes, r->duration_us),
           (double)r->jitter_us / 1e3, r->lost, r->datagrams,
           r->datagrams > 0 ? 100.0 * (double)r->lost / (double)r->datagrams : 0.0, r->out_of_order);
}

static void node_iperf_report(void *ctx, const struct wisp_iperf_result *r)
{
    struct node *n = ctx;
    char a[16];
    const char *role = r->role == WISP_IPERF_ROLE_REVERSE ? "reverse" : "server";

    (void)n;
    printf("wisp-node: iperf %s %s %s %s:%u: 0.000-%.3f sec, %" PRIu64 " bytes, %.2f Mbits/sec%s%s",
           role, r->proto == WISP_IP4_PROTO_UDP ? "udp" : "tcp", r->role == WISP_IPERF_ROLE_REVERSE ? "to" : "from",
           wisp_ip4_ntoa(wisp_ipaddr_ip4(&r->peer_ip), a), (unsigned)r->peer_port, (double)r->duration_us / 1e6, r->bytes,
           node_mbps(r->bytes, r->duration_us), r->ok ? "" : ", ended: ", r->ok ? "" : wisp_err_str(r->err));
    if (r->proto == WISP_IP4_PROTO_UDP) {
        printf(", jitter %.3f ms, lost %" PRIu64 "/%" PRIu64 ", out-of-order %" PRIu64 ", received %" PRIu64 "\n",
               (double)r->report.jitter_us / 1e3, r->report.lost, r->report.datagrams, r->report.out_of_order,
               r->received);
    } else {
        printf(", header flags 0x%08" PRIx32 "%s\n", r->hdr_flags, r->reverse ? ", reverse stream started" : "");
    }
}

static void node_iperf_done(void *ctx, const struct wisp_iperf_result *r)
{
    struct node *n = ctx;
    n->iperf_res = *r;
    n->iperf_cl_done = true;
}

/* The server (after the services, before the pool baseline). 0 or -1. */
static int node_iperf_start(struct node *n)
{
    struct wisp_iperf_server_cfg cfg;
    wisp_err_t err;

    if (!n->o.iperf) {
        return 0;
    }
    memset(&cfg, 0, sizeof cfg);
    cfg.tcp = cfg.udp = true;
    cfg.reverse = true;
    cfg.clock = node_iperf_clock;
    cfg.report = node_iperf_report;
    cfg.report_ctx = n;
    err = wisp_iperf_server_start(&n->stack, &n->iperf_srv, &cfg);
    if (err != WISP_OK) {
        fprintf(stderr, "wisp-node: cannot start the iperf server: %s\n", wisp_err_str(err));
        return -1;
    }
    n->iperf_up = true;
    if (!n->o.quiet) {
        printf("wisp-node: iperf server on tcp/%u and udp/%u (raw API)\n", WISP_IPERF_PORT, WISP_IPERF_PORT);
    }
    return 0;
}

/* Resolve the next hop to the iperf server before the test (at most 3 s,
 * a request every 250 ms), as a host's neighbour cache usually has it: a
 * UDP test starts sending at once, and datagrams beyond the ARP queue
 * would be lost while the first request is answered (or retried after
 * WISP_ARP_RETRY_MS when the tap was not up yet). Signals stay blocked. */
static void node_iperf_resolve(struct node *n)
{
    wisp_ip4_t hop = ((n->o.iperf_ip ^ n->o.addr) & n->o.mask) == 0 ? n->o.iperf_ip : n->o.gw;
    uint8_t mac[6];
    double until = mono_s() + 3.0, next_req = 0;

    while (hop != 0 && !wisp_arp_lookup(&n->stack, wisp_netif_index(&n->nif), hop, mac) && mono_s() < until) {
        struct pollfd pfd;
        struct timespec ts = { 0, 10000000L };
        if (mono_s() >= next_req) {
            (void)wisp_arp_request(&n->nif, hop);
            next_req = mono_s() + 0.25;
        }
        pfd.fd = n->tap.fd;
        pfd.events = wisp_tapdev_poll_events(&n->tap);
        pfd.revents = 0;
        if (ppoll(&pfd, 1, &ts, NULL) > 0 && !(pfd.revents & POLLNVAL)) {
            (void)wisp_tapdev_handle(&n->tap, pfd.revents);
        }
        wisp_stack_poll(&n->stack);
    }
}

static int node_iperf_client_start(struct node *n)
{
    struct wisp_iperf_client_cfg cfg;
    wisp_err_t err;
    char a[16];

    node_iperf_resolve(n);
    memset(&cfg, 0, sizeof cfg);
    cfg.server = wisp_ipaddr4(n->o.iperf_ip);
    cfg.port = n->o.iperf_port;
    cfg.udp = n->o.iperf_udp;
    cfg.rate_bps = n->o.iperf_rate;
    cfg.time_ms = n->o.iperf_time_ms;
    cfg.bytes = n->o.iperf_bytes;
    cfg.len = n->o.iperf_len;
    cfg.clock = node_iperf_clock;
    cfg.done = node_iperf_done;
    cfg.done_ctx = n;
    err = wisp_iperf_client_start(&n->stack, &n->iperf_cl, &cfg);
    if (err != WISP_OK) {
        fprintf(stderr, "wisp-node: iperf client: %s\n", wisp_err_str(err));
        return -1;
    }
    printf("wisp-node: iperf client %s to %s:%u, %s%s\n", cfg.udp ? "udp" : "tcp", wisp_ip4_ntoa(n->o.iperf_ip, a),
           (unsigned)n->iperf_cl.cfg.port, n->iperf_cl.cfg.bytes ? "bytes-limited" : "time-limited",
           cfg.udp ? ", paced" : "");
    return 0;
}

/* The client's result lines; 0 = the test completed (UDP: with the
 * server's report). */
static int node_iperf_client_report(struct node *n)
{
    const struct wisp_iperf_result *r = &n->iperf_res;
    char a[16];

    if (!n->iperf_cl_done) {
        printf("wisp-node: iperf client FAILED: not finished\n");
        return 1;
    }
    printf("wisp-node: iperf client %s to %s:%u: 0.000-%.3f sec, %" PRIu64 " bytes, %.2f Mbits/sec",
           r->proto == WISP_IP4_PROTO_UDP ? "udp" : "tcp", wisp_ip4_ntoa(wisp_ipaddr_ip4(&r->peer_ip), a), (unsigned)r->peer_port,
           (double)r->duration_us / 1e6, r->bytes, node_mbps(r->bytes, r->duration_us));
    if (r->proto == WISP_IP4_PROTO_UDP) {
        printf(", sent %" PRIu64 " datagrams, %u FIN, %" PRIu32 " refused sends\n", r->datagrams,
               (unsigned)r->fin_tries, r->send_refused);
        if (r->have_report) {
            node_iperf_print_udp_report("server report", &r->report);
        } else {
            printf("wisp-node: iperf client: no server report after %u FINs\n", (unsigned)r->fin_tries);
        }
    } else {
        printf("\n");
    }
    if (!r->ok || (r->proto == WISP_IP4_PROTO_UDP && !r->have_report)) {
        printf("wisp-node: iperf client FAILED%s%s\n", r->err != WISP_OK ? ": " : "",
               r->err != WISP_OK ? wisp_err_str(r->err) : "");
        return 1;
    }
    printf("wisp-node: iperf client done\n");
    return 0;
}

/* Client mode: the test is over and its PCBs left the pools (or the
 * linger time is up). */
static bool node_iperf_finished(struct node *n, unsigned baseline, double *linger_until)
{
    double now;

    if (!n->iperf_cl_done) {
        return false;
    }
    now = mono_s();
    if (*linger_until == 0) {
        *linger_until = now + NODE_CLIENT_LINGER_MS / 1e3;
    }
    return wisp_stack_pools_in_use(&n->stack) <= baseline || now >= *linger_until;
}

static void node_iperf_stop(struct node *n)
{
    if (n->o.iperf_client) {
        wisp_iperf_client_stop(&n->iperf_cl);
    }
    if (n->iperf_up) {
        wisp_iperf_server_stop(&n->iperf_srv);
        n->iperf_up = false;
    }
}

/* --iperf-client A.B.C.D[:PORT] */
static bool node_iperf_parse_target(const char *arg, struct node_opts *o)
{
    char buf[32];
    char *colon, *end;
    unsigned long port = WISP_IPERF_PORT;

    if (strlen(arg) >= sizeof buf) {
        return false;
    }
    strcpy(buf, arg);
    colon = strchr(buf, ':');
    if (colon != NULL) {
        *colon = '\0';
        errno = 0;
        port = strtoul(colon + 1, &end, 10);
        if (errno != 0 || *end != '\0' || colon[1] < '0' || colon[1] > '9' || port < 1 || port > 65535) {
            return false;
        }
    }
    if (!wisp_ip4_aton(buf, &o->iperf_ip) || o->iperf_ip == 0) {
        return false;
    }
    o->iperf_port = (uint16_t)port;
    return true;
}

/* A positive decimal number with an optional suffix (k/M/G = 10^3/6/9
 * when metric; unused when scale is 0), times mult; false when malformed
 * or out of range. */
static bool node_iperf_parse_num(const char *arg, bool metric, double mult, double max, double *out)
{
    char *end;
    double v;

    if (arg == NULL || *arg < '0' || *arg > '9') {
        return false;
    }
    errno = 0;
    v = strtod(arg, &end);
    if (errno != 0 || end == arg) {
        return false;
    }
    if (metric && (*end == 'k' || *end == 'K')) {
        v *= 1e3;
        end++;
    } else if (metric && *end == 'M') {
        v *= 1e6;
        end++;
    } else if (metric && *end == 'G') {
        v *= 1e9;
        end++;
    }
    v *= mult;
    if (*end != '\0' || !(v >= 1.0) || v > max) {
        return false;
    }
    *out = v;
    return true;
}

/* ------------------------------------------------------------- DHCP
 * --dhcp: the address comes from a DHCP lease (src/core/dhcp.c, raw API).
 * Each lease event prints one line ("wisp-node: dhcp bound A/N gw G dns D
 * lease S s", "dhcp renewed", "dhcp lost", "dhcp conflict"); at exit the
 * lease is released (DHCPRELEASE). The start delay is cut to at most 1 s
 * (RFC 2131 §4.4.1 suggests up to 10 s; one node on a TAP needs none). */

static unsigned node_prefix_len(wisp_ip4_t mask)
{
    uint32_t m = wisp_ntohl(mask);
    unsigned len = 0;
    while (m & 0x80000000u) {
        len++;
        m <<= 1;
    }
    return len;
}

static int node_resolve_start(struct node *n);

static void node_dhcp_cb(void *arg, struct wisp_dhcp *d, enum wisp_dhcp_event ev)
{
    struct node *n = arg;
    const struct wisp_dhcp_lease *l = wisp_dhcp_last_lease(d);
    char a[16], g[16], s[16];
    unsigned i;

    switch (ev) {
    case WISP_DHCP_EV_BOUND:
    case WISP_DHCP_EV_RENEWED:
        printf("wisp-node: dhcp %s %s/%u gw %s dns", ev == WISP_DHCP_EV_BOUND ? "bound" : "renewed",
               wisp_ip4_ntoa(l->addr, a), node_prefix_len(l->mask), wisp_ip4_ntoa(l->router, g));
        for (i = 0; i < l->dns_count; i++) {
            printf("%s%s", i ? "," : " ", wisp_ip4_ntoa(l->dns[i], a));
        }
        if (l->dns_count == 0) {
            printf(" -");
        }
        printf(" lease %" PRIu32 " s t1 %" PRIu32 " s t2 %" PRIu32 " s server %s mtu %u\n", l->lease_s, l->t1_s,
               l->t2_s, wisp_ip4_ntoa(l->server, s), (unsigned)wisp_netif_mtu(wisp_dhcp_netif(d)));
        /* The lease's DNS servers feed the resolver unless --dns chose one;
         * a --resolve waiting for the lease starts now. */
        if (n->o.dns_server == 0) {
            for (i = 0; i < l->dns_count && i < WISP_DNS_MAX_SERVERS; i++) {
                (void)wisp_dns_set_server(&n->stack, i, l->dns[i]);
            }
        }
        if (ev == WISP_DHCP_EV_BOUND && n->o.resolve != NULL && !n->resolve_started) {
            n->resolve_started = true;
            if (node_resolve_start(n) != 0) {
                n->resolve_done = true;
            }
        }
        break;
    case WISP_DHCP_EV_LOST:
        printf("wisp-node: dhcp lost %s\n", wisp_ip4_ntoa(l->addr, a));
        break;
    case WISP_DHCP_EV_CONFLICT:
        printf("wisp-node: dhcp conflict on %s, declined\n", wisp_ip4_ntoa(wisp_dhcp_pending_addr(d), a));
        break;
    }
}

static int node_dhcp_start(struct node *n)
{
    struct wisp_dhcp_cfg cfg;
    wisp_err_t e;

    wisp_dhcp_cfg_defaults(&cfg);
    cfg.init_delay_ms = 1000;
    cfg.hostname = "wisp-node";
    e = wisp_dhcp_start(&n->dhcp, &n->nif, &cfg, node_dhcp_cb, n);
    if (e != WISP_OK) {
        fprintf(stderr, "wisp-node: dhcp start failed: %s\n", wisp_err_str(e));
        return 1;
    }
    return 0;
}

static void node_dhcp_stop(struct node *n)
{
    if (n->o.dhcp && wisp_dhcp_state(&n->dhcp) != WISP_DHCP_STOPPED) {
        bool held = wisp_dhcp_lease(&n->dhcp) != NULL;
        wisp_dhcp_stop(&n->dhcp, true);
        if (held) {
            printf("wisp-node: dhcp released\n");
        }
    }
}

static void node_iperf_dump(struct node *n)
{
    const struct wisp_iperf_server_stats *st = &n->iperf_srv.st;
    if (!n->o.iperf) {
        return;
    }
    printf("iperf server: tcp tests %" PRIu32 " refused %" PRIu32 "; udp tests %" PRIu32 " refused %" PRIu32
           " runts %" PRIu32 " reports %" PRIu32 " report_err %" PRIu32 "; reverse %" PRIu32 " failed %" PRIu32
           "; tcp timeouts %" PRIu32 " reclaimed %" PRIu32 "\n",
           st->tcp_tests, st->tcp_refused, st->udp_tests, st->udp_refused, st->udp_runts, st->reports_sent,
           st->report_err, st->reverse_started, st->reverse_failed, st->tcp_timeouts, st->tcp_reclaimed);
}

/* --------------------------------------------------------- http, ping
 * --http: the HTTP/1.1 server of apps/lib/httpd.c on port 80 (an access
 * line per response unless --quiet, statistics at exit). --ping ADDR: the
 * ping client of apps/lib/ping.c; ping(8)-like lines, the node exits when
 * the run is over (0 = at least one reply, like ping(8)). */

#define NODE_HTTP_PORT 80u

static const char *node_http_method(uint8_t m)
{
    return m == WISP_HTTP_M_GET ? "GET" : (m == WISP_HTTP_M_HEAD ? "HEAD" : "-");
}

static void node_http_log(void *ctx, const struct wisp_httpd_log *e)
{
    struct node *n = ctx;
    char a[16];
    if (n->o.quiet) {
        return;
    }
    printf("wisp-node: http %s:%u \"%s %s\" %u %" PRIu32 "%s\n", wisp_ip4_ntoa(wisp_ipaddr_ip4(&e->remote_ip), a),
           (unsigned)e->remote_port, node_http_method(e->method), e->target, (unsigned)e->status, e->body_bytes,
           e->keep ? " keep-alive" : " close");
}

static int node_http_start(struct node *n)
{
    wisp_err_t err;
    if (!n->o.http) {
        return 0;
    }
    n->httpd = calloc(1, sizeof *n->httpd);
    if (n->httpd == NULL) {
        fprintf(stderr, "wisp-node: out of memory\n");
        return -1;
    }
    err = wisp_httpd_start_opts(n->httpd, &n->stack, NODE_HTTP_PORT, &n->o.http_opt);
    if (err != WISP_OK) {
        fprintf(stderr, "wisp-node: cannot start the HTTP server: %s\n", wisp_err_str(err));
        free(n->httpd);
        n->httpd = NULL;
        return -1;
    }
    wisp_httpd_set_log(n->httpd, node_http_log, n);
    if (!n->o.quiet) {
        printf("wisp-node: http server on tcp/%u (raw API, %u connections, %u per source, idle %" PRIu32
               " ms, request deadline %" PRIu32 " ms, reclaim after %" PRIu32 " ms)\n",
               NODE_HTTP_PORT, (unsigned)n->httpd->opt.max_conns, (unsigned)n->httpd->opt.per_source,
               n->httpd->opt.idle_ms, n->httpd->opt.head_ms, n->httpd->opt.reclaim_ms);
    }
    return 0;
}

static void node_http_dump(struct node *n)
{
    const struct wisp_httpd_stats *st;
    if (n->httpd == NULL) {
        return;
    }
    st = wisp_httpd_stats(n->httpd);
    printf("http server: connections %" PRIu32 " active %" PRIu32 " high %" PRIu32 " refused %" PRIu32
           " closed %" PRIu32 " resets %" PRIu32 " aborted %" PRIu32 " timeouts %" PRIu32 " requests %" PRIu32
           " reused %" PRIu32 " 2xx %" PRIu32 " 3xx %" PRIu32 " 4xx %" PRIu32 " 5xx %" PRIu32 " write_mem %" PRIu32
           " rx %" PRIu64 " tx %" PRIu64 " head_timeouts %" PRIu32 " reclaimed %" PRIu32 " capped %" PRIu32 "\n",
           st->connections, st->active, st->active_high, st->refused, st->closed, st->resets, st->aborted,
           st->timeouts, st->requests, st->reused, st->responses[2], st->responses[3], st->responses[4],
           st->responses[5], st->write_mem, st->bytes_rx, st->bytes_tx, st->head_timeouts, st->reclaimed,
           st->capped);
}

static uint64_t node_ping_clock(void *ctx)
{
    WISP_UNUSED(ctx);
    return (uint64_t)(mono_s() * 1e6);
}

static void node_ping_reply(void *arg, struct wisp_ping *p, const struct wisp_ping_reply *r)
{
    char a[16];
    WISP_UNUSED(arg);
    WISP_UNUSED(p);
    printf("%u bytes from %s: icmp_seq=%u ttl=%u time=%.3f ms%s%s%s\n", (unsigned)r->bytes,
           wisp_ip4_ntoa(r->from, a), (unsigned)r->seq, (unsigned)r->ttl, r->rtt_us / 1000.0,
           r->dup ? " (DUP!)" : "", r->late ? " (late)" : "", r->bad ? " (BAD DATA)" : "");
}

static int node_ping_start(struct node *n)
{
    struct wisp_ping_cfg cfg;
    char a[16];
    wisp_err_t err;

    memset(&cfg, 0, sizeof cfg);
    cfg.dst = n->o.ping_ip;
    cfg.count = n->o.ping_count;
    cfg.interval_ms = n->o.ping_interval_ms;
    cfg.size = n->o.ping_size;
    cfg.on_reply = node_ping_reply;
    cfg.now_us = node_ping_clock;
    printf("PING %s (%s) %u(%u) bytes of data.\n", wisp_ip4_ntoa(cfg.dst, a), a, (unsigned)cfg.size,
           (unsigned)cfg.size + 28u);
    err = wisp_ping_start_cfg(&n->ping, &n->stack, &cfg);
    if (err != WISP_OK) {
        fprintf(stderr, "wisp-node: ping: %s\n", wisp_err_str(err));
        return -1;
    }
    n->ping_up = true;
    return 0;
}

/* The ping(8)-like summary; 0 when at least one reply came back. */
static int node_ping_report(struct node *n)
{
    const struct wisp_ping_stats *st = wisp_ping_stats(&n->ping);
    uint32_t loss = wisp_ping_loss_permille(&n->ping);
    char a[16];

    printf("\n--- %s ping statistics ---\n", wisp_ip4_ntoa(n->o.ping_ip, a));
    printf("%" PRIu32 " packets transmitted, %" PRIu32 " received", st->sent, st->received);
    if (st->duplicates != 0) {
        printf(", +%" PRIu32 " duplicates", st->duplicates);
    }
    if (st->errors != 0) {
        printf(", +%" PRIu32 " errors", st->errors);
    }
    if (loss % 10u == 0u) {
        printf(", %" PRIu32 "%% packet loss", loss / 10u);
    } else {
        printf(", %" PRIu32 ".%" PRIu32 "%% packet loss", loss / 10u, loss % 10u);
    }
    printf(", time %" PRIu32 "ms\n", st->elapsed_ms);
    if (st->received > 0) {
        printf("rtt min/avg/max/mdev = %.3f/%.3f/%.3f/%.3f ms\n", st->min_us / 1000.0, st->avg_us / 1000.0,
               st->max_us / 1000.0, st->mdev_us / 1000.0);
    }
    return st->received > 0 ? 0 : 1;
}

static void node_http_ping_stop(struct node *n)
{
    if (n->ping_up) {
        wisp_ping_stop(&n->ping);
        n->ping_up = false;
    }
    if (n->httpd != NULL) {
        wisp_httpd_stop(n->httpd);
        free(n->httpd);
        n->httpd = NULL;
    }
}

static int usage_error(const char *fmt, const char *arg);
static bool parse_uint(const char *s, unsigned long long max, unsigned long long *out);

/* Options 1101..1105 (--http, --ping, --count, --interval, --size). */
static int node_http_ping_opt(int c, const char *arg, struct node_opts *o)
{
    unsigned long long v;
    switch (c) {
    case 1101:
        o->http = true;
        return 0;
    case 1102:
        if (!wisp_ip4_aton(arg, &o->ping_ip) || o->ping_ip == 0) {
            return usage_error("bad --ping '%s' (want A.B.C.D)", arg);
        }
        o->ping = true;
        return 0;
    case 1103:
        if (!parse_uint(arg, 1000000, &v) || v < 1) {
            return usage_error("bad --count '%s' (1..1000000)", arg);
        }
        o->ping_count = (uint32_t)v;
        o->have_ping_count = true;
        return 0;
    case 1104:
        if (!parse_uint(arg, 3600000, &v) || v < 1) {
            return usage_error("bad --interval '%s' (1..3600000 ms)", arg);
        }
        o->ping_interval_ms = (uint32_t)v;
        o->have_ping_interval = true;
        return 0;
    default:
        if (!parse_uint(arg, 65507, &v)) {
            return usage_error("bad --size '%s' (0..65507)", arg);
        }
        o->ping_size = (uint16_t)v;
        o->have_ping_size = true;
        return 0;
    }
}

/* Options 1301..1308: admission and timeouts of the services and the
 * HTTP server (0 = the library's default). */
static int node_limit_opt(int c, const char *arg, struct node_opts *o)
{
    static const char *const names[] = { "--svc-idle-ms", "--svc-per-source", "--svc-reclaim-ms",
                                         "--http-max-conns", "--http-per-source", "--http-idle-ms",
                                         "--http-head-ms", "--http-reclaim-ms" };
    bool count = (c == 1302 || c == 1304 || c == 1305);
    unsigned long long v;
    if (!parse_uint(arg, count ? 65535u : 2147483647u, &v)) {
        fprintf(stderr, "wisp-node: bad %s '%s' (%s)\n", names[c - 1301], arg,
                count ? "0..65535, 0 = default" : "ms, 0..2147483647, 0 = default");
        return usage_error("%s", "see above");
    }
    switch (c) {
    case 1301: o->svc_opt.idle_ms = (uint32_t)v; break;
    case 1302: o->svc_opt.per_source = (uint16_t)v; break;
    case 1303: o->svc_opt.reclaim_ms = (uint32_t)v; break;
    case 1304: o->http_opt.max_conns = (uint16_t)v; break;
    case 1305: o->http_opt.per_source = (uint16_t)v; break;
    case 1306: o->http_opt.idle_ms = (uint32_t)v; break;
    case 1307: o->http_opt.head_ms = (uint32_t)v; break;
    default: o->http_opt.reclaim_ms = (uint32_t)v; break;
    }
    return 0;
}

/* Consistency of --http / --ping and defaults; 0 = fine. */
static int node_http_ping_check(struct node_opts *o)
{
    if ((o->have_ping_count || o->have_ping_interval || o->have_ping_size) && !o->ping) {
        return usage_error("%s", "--count, --interval and --size need --ping ADDR");
    }
    if ((o->http || o->ping) && strcmp(o->api, "raw") != 0) {
        return usage_error("%s", "--http and --ping run on --api raw only");
    }
    if (o->ping && (o->client || o->iperf_client)) {
        return usage_error("%s", "--ping excludes --connect and --iperf-client");
    }
    if (o->ping_count == 0) {
        o->ping_count = 4;
    }
    if (o->ping_interval_ms == 0) {
        o->ping_interval_ms = 1000;
    }
    if (!o->have_ping_size) {
        o->ping_size = 56;   /* ping(8)'s default */
    }
    return 0;
}

/* ------------------------------------------------------------ options */

static void usage(FILE *f)
{
    fprintf(f,
            "usage: wisp-node --tap NAME (--addr A.B.C.D/PREFIX | --dhcp) [options]\n"
            "  --tap NAME          tap interface to use (created when absent)\n"
            "  --addr A.B.C.D/N    the stack's IPv4 address and prefix length\n"
            "  --dhcp              get address, mask, gateway, MTU from a DHCP server instead\n"
            "                      (--api raw; prints 'dhcp bound' / 'dhcp renewed' lines)\n"
            "  --gw ADDR           default gateway\n"
            "  --pcap FILE         write a capture of every frame to FILE\n"
            "  --mtu N             IP MTU of the interface (68..65000, default 1500)\n"
            "  --seed N            derive the stack's secrets from N: a reproducible run\n"
            "                      (default: entropy from getrandom())\n"
            "  --api API           application API of the services and the client: raw\n"
            "                      (callbacks in the main loop, default), netconn or socket\n"
            "                      (a stack thread; services and client as threads)\n"
            "  --quiet             no start-up messages; only non-zero counters at exit\n"
            "  --connect ADDR:PORT TCP client transfer to ADDR:PORT (with --send or --recv);\n"
            "                      the node exits when it is done\n"
            "  --send BYTES        send BYTES of a deterministic pattern, then close\n"
            "  --recv              receive until the peer closes\n"
            "  --write-size N      bytes per write of --send (1..16777216, default 1460)\n"
            "  --connects N        with --connect: open and close N connections in sequence,\n"
            "                      print the connect times (mean, median, min, max)\n"
            "  --iperf             iperf 2 server on TCP and UDP port 5001 (--api raw)\n"
            "  --iperf-client ADDR[:PORT]  one iperf 2 test to ADDR (port 5001), TCP unless\n"
            "                      --iperf-udp; prints iperf-like results and exits\n"
            "  --iperf-udp RATE    UDP test at RATE bit/s (suffix k, M, G = 10^3, 10^6, 10^9)\n"
            "  --iperf-time S      test length in seconds (default 10; decimals allowed)\n"
            "  --iperf-bytes N     send N bytes instead (header included)\n"
            "  --iperf-len N       UDP datagram payload (16..65507, default 1470); TCP bytes\n"
            "                      per write (1..1000, default 1000)\n"
            "  --http              HTTP/1.1 server on TCP port 80 (--api raw): /, /style.css,\n"
            "                      /big.bin (1 MiB), /status, /status.json\n"
            "  --http-max-conns N  connection records of the server (default 128 on the host)\n"
            "  --http-per-source N connections per remote address (default half the records)\n"
            "  --http-idle-ms MS   idle timeout (default 10000)\n"
            "  --http-head-ms MS   a request head must be complete this long after its first\n"
            "                      byte, else 408 (default 10000; slowloris)\n"
            "  --http-reclaim-ms MS  when full, a connection waiting this long for a request\n"
            "                      is reset for a new one (default 1000)\n"
            "  --svc-idle-ms MS    idle timeout of TCP echo/discard/chargen (default 30000)\n"
            "  --svc-per-source N  their connections per remote address (default: all the\n"
            "                      records, 8 raw, 16 netconn/socket)\n"
            "  --svc-reclaim-ms MS when full, a connection idle this long is reset for a new\n"
            "                      one (default 1000)\n"
            "  --ping ADDR         ping ADDR like ping(8) and exit (0 = a reply came back)\n"
            "  --count N           requests of --ping (default 4)\n"
            "  --interval MS       between requests (default 1000)\n"
            "  --size N            data bytes per request (default 56)\n"
            "  --dns ADDR          DNS server of the stack's resolver\n"
            "  --resolve NAME      resolve NAME (A record), print the address and TTL or why\n"
            "                      not, exit 0 (resolved) or 1 (--api raw)\n"
            "  --udp-probe A:P     connected UDP datagrams to A:P until an ICMP error comes\n"
            "                      back; exit 0 when it is port unreachable (--api raw)\n"
            "  --help              this text\n"
            "The client prints bytes, goodput (MB = 10^6 bytes) and the SHA-256 of the data.\n"
            "SIGINT/SIGTERM stop the node; exit 0 = clean (client: transfer complete),\n"
            "1 = error or leak, 2 = usage.\n");
}

static int usage_error(const char *fmt, const char *arg)
{
    fprintf(stderr, "wisp-node: ");
    fprintf(stderr, fmt, arg);
    fprintf(stderr, "\n");
    usage(stderr);
    return 2;
}

static bool parse_uint(const char *s, unsigned long long max, unsigned long long *out)
{
    char *end;
    unsigned long long v;

    if (s == NULL || *s < '0' || *s > '9') {
        return false;
    }
    errno = 0;
    v = strtoull(s, &end, 0);
    if (errno != 0 || *end != '\0' || v > max) {
        return false;
    }
    *out = v;
    return true;
}

static bool parse_addr(const char *arg, struct node_opts *o)
{
    char buf[32];
    char *slash;
    unsigned long long pfx;

    if (strlen(arg) >= sizeof buf) {
        return false;
    }
    strcpy(buf, arg);
    slash = strchr(buf, '/');
    if (slash == NULL) {
        return false;
    }
    *slash = '\0';
    if (!wisp_ip4_aton(buf, &o->addr) || !parse_uint(slash + 1, 32, &pfx) || pfx < 1) {
        return false;
    }
    o->prefix = (unsigned)pfx;
    o->mask = wisp_ip4_prefix_mask(o->prefix);
    return o->addr != 0;
}

static bool parse_hostport(const char *arg, struct node_opts *o)
{
    char buf[32];
    char *colon;
    unsigned long long port;

    if (strlen(arg) >= sizeof buf) {
        return false;
    }
    strcpy(buf, arg);
    colon = strrchr(buf, ':');
    if (colon == NULL) {
        return false;
    }
    *colon = '\0';
    if (!wisp_ip4_aton(buf, &o->peer_ip) || !parse_uint(colon + 1, 65535, &port) || port < 1) {
        return false;
    }
    o->peer_port = (uint16_t)port;
    return o->peer_ip != 0;
}

/* Returns -1 to go on, else the exit status. */
static int parse_args(int argc, char **argv, struct node_opts *o)
{
    static const struct option longopts[] = {
        { "tap", required_argument, NULL, 't' },  { "addr", required_argument, NULL, 'a' },
        { "gw", required_argument, NULL, 'g' },   { "pcap", required_argument, NULL, 'p' },
        { "mtu", required_argument, NULL, 'm' },  { "seed", required_argument, NULL, 's' },
        { "api", required_argument, NULL, 'A' },  { "quiet", no_argument, NULL, 'q' },
        { "connect", required_argument, NULL, 'c' }, { "send", required_argument, NULL, 'S' },
        { "recv", no_argument, NULL, 'R' },       { "write-size", required_argument, NULL, 'w' },
        { "connects", required_argument, NULL, 'C' },
        { "iperf", no_argument, NULL, 1001 },     { "iperf-client", required_argument, NULL, 1002 },
        { "iperf-udp", required_argument, NULL, 1003 }, { "iperf-time", required_argument, NULL, 1004 },
        { "iperf-bytes", required_argument, NULL, 1005 }, { "iperf-len", required_argument, NULL, 1006 },
        { "http", no_argument, NULL, 1101 },      { "ping", required_argument, NULL, 1102 },
        { "count", required_argument, NULL, 1103 }, { "interval", required_argument, NULL, 1104 },
        { "size", required_argument, NULL, 1105 },
        { "dns", required_argument, NULL, 1201 }, { "resolve", required_argument, NULL, 1202 },
        { "udp-probe", required_argument, NULL, 1203 },
        { "dhcp", no_argument, NULL, 1100 },
        { "svc-idle-ms", required_argument, NULL, 1301 }, { "svc-per-source", required_argument, NULL, 1302 },
        { "svc-reclaim-ms", required_argument, NULL, 1303 }, { "http-max-conns", required_argument, NULL, 1304 },
        { "http-per-source", required_argument, NULL, 1305 }, { "http-idle-ms", required_argument, NULL, 1306 },
        { "http-head-ms", required_argument, NULL, 1307 }, { "http-reclaim-ms", required_argument, NULL, 1308 },
        { "help", no_argument, NULL, 'h' },       { NULL, 0, NULL, 0 },
    };
    bool have_addr = false;
    unsigned long long v;
    int c;

    memset(o, 0, sizeof *o);
    o->mtu = 1500;
    o->api = "raw";
    o->write_size = 1460;
    opterr = 0;
    while ((c = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
        switch (c) {
        case 't':
            o->tap = optarg;
            break;
        case 'a':
            if (!parse_addr(optarg, o)) {
                return usage_error("bad --addr '%s' (want A.B.C.D/PREFIX, prefix 1..32)", optarg);
            }
            have_addr = true;
            break;
        case 'g':
            if (!wisp_ip4_aton(optarg, &o->gw)) {
                return usage_error("bad --gw '%s'", optarg);
            }
            break;
        case 'p':
            o->pcap = optarg;
            break;
        case 'm':
            if (!parse_uint(optarg, 65000, &v) || v < 68) {
                return usage_error("bad --mtu '%s' (68..65000)", optarg);
            }
            o->mtu = (unsigned)v;
            break;
        case 's':
            if (!parse_uint(optarg, UINT64_MAX, &v)) {
                return usage_error("bad --seed '%s'", optarg);
            }
            o->seed = v;
            o->have_seed = true;
            break;
        case 'A':
            o->api = optarg;
            break;
        case 'q':
            o->quiet = true;
            break;
        case 'c':
            if (!parse_hostport(optarg, o)) {
                return usage_error("bad --connect '%s' (want A.B.C.D:PORT)", optarg);
            }
            o->client = true;
            break;
        case 'S':
            if (!parse_uint(optarg, UINT64_MAX, &v)) {
                return usage_error("bad --send '%s'", optarg);
            }
            o->send_bytes = v;
            o->send = true;
            break;
        case 'R':
            o->recv = true;
            break;
        case 'w':
            if (!parse_uint(optarg, NODE_MAX_WRITE_SIZE, &v) || v < 1) {
                return usage_error("bad --write-size '%s' (1..16777216)", optarg);
            }
            o->write_size = (uint32_t)v;
            break;
        case 'C':
            if (!parse_uint(optarg, 1000000, &v) || v < 1) {
                return usage_error("bad --connects '%s' (1..1000000)", optarg);
            }
            o->connects = (uint32_t)v;
            break;
        case 1001:
            o->iperf = true;
            break;
        case 1101: case 1102: case 1103: case 1104: case 1105:
            if (node_http_ping_opt(c, optarg, o) != 0) {
                return 2;
            }
            break;
        case 1301: case 1302: case 1303: case 1304: case 1305: case 1306: case 1307: case 1308:
            if (node_limit_opt(c, optarg, o) != 0) {
                return 2;
            }
            break;
        case 1002:
            if (!node_iperf_parse_target(optarg, o)) {
                return usage_error("bad --iperf-client '%s' (want A.B.C.D[:PORT])", optarg);
            }
            o->iperf_client = true;
            break;
        case 1003: {
            double d;
            if (!node_iperf_parse_num(optarg, true, 1.0, 1e10, &d)) {
                return usage_error("bad --iperf-udp '%s' (bit/s, 1..10G, e.g. 50M)", optarg);
            }
            o->iperf_rate = (uint64_t)d;
            o->iperf_udp = true;
            break;
        }
        case 1004: {
            double d;
            if (!node_iperf_parse_num(optarg, false, 1000.0, 3600e3, &d)) {
                return usage_error("bad --iperf-time '%s' (seconds, 0.001..3600)", optarg);
            }
            o->iperf_time_ms = (uint32_t)d;
            break;
        }
        case 1005:
            if (!parse_uint(optarg, UINT64_MAX, &v) || v < 1) {
                return usage_error("bad --iperf-bytes '%s'", optarg);
            }
            o->iperf_bytes = v;
            break;
        case 1100:
            o->dhcp = true;
            break;
        case 1006:
            if (!parse_uint(optarg, 65507, &v) || v < 1) {
                return usage_error("bad --iperf-len '%s' (1..65507)", optarg);
            }
            o->iperf_len = (uint32_t)v;
            break;
        case 1201:
            if (!wisp_ip4_aton(optarg, &o->dns_server) || o->dns_server == 0) {
                return usage_error("bad --dns '%s' (want A.B.C.D)", optarg);
            }
            break;
        case 1202:
            o->resolve = optarg;
            break;
        case 1203: {
            struct node_opts hp;
            memset(&hp, 0, sizeof hp);
            if (!parse_hostport(optarg, &hp)) {
                return usage_error("bad --udp-probe '%s' (want A.B.C.D:PORT)", optarg);
            }
            o->udp_probe = true;
            o->probe_ip = hp.peer_ip;
            o->probe_port = hp.peer_port;
            break;
        }
        case 'h':
            usage(stdout);
            return 0;
        default:
            return usage_error("unknown option or missing argument near '%s'",
                               (optind > 0 && optind <= argc) ? argv[optind - 1] : "?");
        }
    }
    if (optind < argc) {
        return usage_error("unexpected argument '%s'", argv[optind]);
    }
    if (o->tap == NULL) {
        return usage_error("%s", "--tap NAME is required");
    }
    if (o->tap[0] == '\0' || strlen(o->tap) > 15) {
        return usage_error("bad --tap '%s' (1..15 characters)", o->tap);
    }
    if (!have_addr && !o->dhcp) {
        return usage_error("%s", "--addr A.B.C.D/PREFIX (or --dhcp) is required");
    }
    if (have_addr && o->dhcp) {
        return usage_error("%s", "--addr and --dhcp exclude each other");
    }
    if (o->dhcp && strcmp(o->api, "raw") != 0) {
        return usage_error("%s", "--dhcp needs --api raw");
    }
    if (find_api(o->api) == NULL) {
        return usage_error("--api '%s' is not available (have: raw, netconn, socket)", o->api);
    }
    if (o->connects > 0 && (!o->client || o->send || o->recv)) {
        return usage_error("%s", "--connects N needs --connect ADDR:PORT and neither --send nor --recv");
    }
    if (o->client && o->connects == 0 && o->send == o->recv) {
        return usage_error("%s", "--connect needs exactly one of --send BYTES and --recv");
    }
    if (!o->client && (o->send || o->recv)) {
        return usage_error("%s", "--send and --recv need --connect ADDR:PORT");
    }
    if (!o->iperf_client && (o->iperf_udp || o->iperf_time_ms || o->iperf_bytes || o->iperf_len)) {
        return usage_error("%s", "--iperf-udp, --iperf-time, --iperf-bytes and --iperf-len need --iperf-client");
    }
    if ((o->iperf || o->iperf_client) && strcmp(o->api, "raw") != 0) {
        return usage_error("%s", "--iperf and --iperf-client run on --api raw only");
    }
    if (o->iperf_client && o->client) {
        return usage_error("%s", "--iperf-client and --connect exclude each other");
    }
    if (node_http_ping_check(o) != 0) {
        return 2;
    }
    if (o->resolve != NULL && (strcmp(o->api, "raw") != 0 || o->client || o->iperf_client || o->ping)) {
        return usage_error("%s", "--resolve runs on --api raw, without --connect, --iperf-client or --ping");
    }
    if (o->udp_probe &&
        (strcmp(o->api, "raw") != 0 || o->client || o->iperf_client || o->ping || o->resolve != NULL)) {
        return usage_error("%s", "--udp-probe runs on --api raw, without other client modes");
    }
    return -1;
}

/* --------------------------------------------------------------- pcap */

static int pcap_file_write(void *ctx, const void *buf, size_t len)
{
    FILE *f = ctx;
    return fwrite(buf, 1, len, f) == len ? 0 : -1;
}

/* Flush whole records after each loop turn: a reader (tshark) sees a valid
 * file while the node runs. */
static void pcap_flush(struct node *n)
{
    uint32_t recs;

    if (n->pcap_file == NULL) {
        return;
    }
    recs = n->pcap.rx_records + n->pcap.tx_records;
    if (recs != n->pcap_flushed) {
        n->pcap_flushed = recs;
        if (fflush(n->pcap_file) != 0) {
            n->pcap.failed = 1;
        }
    }
}

/* ------------------------------------------------------------ signals */

static volatile sig_atomic_t stop_signal;

static void on_signal(int sig)
{
    stop_signal = sig;
}

/* Block SIGINT/SIGTERM (they are delivered only inside ppoll) and install
 * a handler that just records them. *wait_mask is the mask for ppoll. */
static int setup_signals(sigset_t *wait_mask)
{
    struct sigaction sa;
    sigset_t block;

    sigemptyset(&block);
    sigaddset(&block, SIGINT);
    sigaddset(&block, SIGTERM);
    if (sigprocmask(SIG_BLOCK, &block, wait_mask) != 0) {
        return -1;
    }
    sigdelset(wait_mask, SIGINT);
    sigdelset(wait_mask, SIGTERM);
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    sa.sa_flags = 0;
    if (sigaction(SIGINT, &sa, NULL) != 0 || sigaction(SIGTERM, &sa, NULL) != 0) {
        return -1;
    }
    signal(SIGPIPE, SIG_IGN);
    return 0;
}

/* --------------------------------------------------------------- main */

/* --resolve NAME: the resolver's answer (core context: the main loop). */
static void node_resolved(void *arg, const char *name, wisp_err_t err, const wisp_ipaddr_t *addr, uint32_t ttl_s)
{
    struct node *n = arg;
    char a[16];

    n->resolve_done = true;
    n->resolve_ok = err == WISP_OK;
    if (err == WISP_OK) {
        printf("wisp-node: resolve %s -> %s (ttl %" PRIu32 ")\n", name, wisp_ip4_ntoa(wisp_ipaddr_ip4(addr), a), ttl_s);
    } else if (err == WISP_DNS_ERR_NOTFOUND) {
        printf("wisp-node: resolve %s: NXDOMAIN\n", name);
    } else {
        printf("wisp-node: resolve %s: %s\n", name,
               err == WISP_ERR_TIMEOUT ? "timeout" : err == WISP_ERR_CONN ? "server failure" : wisp_err_str(err));
    }
}

/* Start --resolve; 0, or 1 when it cannot start. */
static int node_resolve_start(struct node *n)
{
    wisp_ipaddr_t a;
    wisp_err_t err = wisp_dns_gethostbyname(&n->stack, n->o.resolve, &a, node_resolved, n);
    if (err == WISP_OK) {
        node_resolved(n, n->o.resolve, WISP_OK, &a, 0); /* a literal or "localhost" */
    } else if (err != WISP_ERR_INPROGRESS) {
        fprintf(stderr, "wisp-node: resolve %s: %s\n", n->o.resolve,
                err == WISP_ERR_VAL ? "no DNS server (--dns ADDR)" : wisp_err_str(err));
        return 1;
    }
    return 0;
}

/* --udp-probe: an ICMP error about one of our datagrams (core context). */
static void node_probe_err(void *arg, struct wisp_udp_pcb *pcb, wisp_err_t err, const struct wisp_icmp_err *e)
{
    struct node *n = arg;
    char a[16];
    (void)pcb;
    if (n->probe_done) {
        return;
    }
    n->probe_done = true;
    n->probe_err = err;
    printf("wisp-node: udp-probe: %s after %u datagrams (ICMP type %u code %u from %s)\n", wisp_err_str(err),
           n->probe_sent, (unsigned)e->type, (unsigned)e->code, wisp_ip4_ntoa(e->reporter, a));
}

static void node_probe_tmr(struct wisp_stack *s, struct wisp_timer *t)
{
    struct node *n = (struct node *)(void *)((uint8_t *)t - offsetof(struct node, probe_tmr));
    static const char msg[] = "wisp-udp-probe\n";
    struct wisp_pbuf *p;
    if (n->probe_done) {
        return;
    }
    if (n->probe_sent >= 10u) {
        n->probe_done = true;
        n->probe_err = WISP_ERR_TIMEOUT;
        printf("wisp-node: udp-probe: no ICMP error after %u datagrams\n", n->probe_sent);
        return;
    }
    p = wisp_pbuf_alloc(s, WISP_LAYER_TRANSPORT, (uint16_t)(sizeof msg - 1u), WISP_PBUF_RAM);
    if (p != NULL) {
        memcpy(p->payload, msg, sizeof msg - 1u);
        if (wisp_udp_send(n->probe, p) == WISP_OK) {
            n->probe_sent++;
        }
        wisp_pbuf_free(p);
    }
    wisp_timer_arm(s, t, 200, node_probe_tmr);
}

static int node_probe_start(struct node *n)
{
    wisp_ipaddr_t dst = wisp_ipaddr4(n->o.probe_ip);
    wisp_err_t err;
    n->probe = wisp_udp_new(&n->stack);
    if (n->probe == NULL) {
        fprintf(stderr, "wisp-node: udp-probe: no UDP PCB\n");
        return -1;
    }
    wisp_udp_err(n->probe, node_probe_err, n);
    err = wisp_udp_connect(n->probe, &dst, n->o.probe_port);
    if (err != WISP_OK) {
        fprintf(stderr, "wisp-node: udp-probe: connect: %s\n", wisp_err_str(err));
        return -1;
    }
    wisp_timer_arm(&n->stack, &n->probe_tmr, 0, node_probe_tmr);
    return 0;
}

static void node_probe_stop(struct node *n)
{
    wisp_timer_cancel(&n->stack, &n->probe_tmr);
    if (n->probe != NULL) {
        wisp_udp_remove(n->probe);
        n->probe = NULL;
    }
}

/* Client mode: true once the transfer is over and its connection has left
 * the pools (or the linger time is up). */
static bool client_finished(struct node *n, unsigned baseline, double *linger_until)
{
    struct node_client *c = &n->client;
    double now;

    if (n->o.iperf_client) {
        return node_iperf_finished(n, baseline, linger_until);
    }
    if (n->o.ping) {
        return wisp_ping_finished(&n->ping);
    }
    if (n->o.resolve != NULL) {
        return n->resolve_done;
    }
    if (n->o.udp_probe) {
        return n->probe_done;
    }
    if (!n->o.client || !c->done) {
        return false;
    }
    now = mono_s();
    if (*linger_until == 0) {
        *linger_until = now + NODE_CLIENT_LINGER_MS / 1e3;
    }
    if (c->close_pending) {
        return now >= *linger_until;
    }
    return wisp_stack_pools_in_use(&n->stack) <= baseline || now >= *linger_until;
}

/* Write what the stack queued for the tap (deferred transmit: no lock
 * held during the writes); when the ring had refused a frame and has room
 * again, tell the stack (core lock) and write what that released. */
static void node_tx_flush(struct node *n)
{
    unsigned k;

    for (k = 0; k < 4u; k++) {
        (void)wisp_tapdev_tx_flush(&n->tap, 64u);
        if (!wisp_tapdev_tx_ready_due(&n->tap)) {
            break;
        }
        wisp_tcpip_lock(&n->tcpip);
        wisp_dev_tx_ready(&n->tap.dev);
        pcap_flush(n);
        wisp_tcpip_unlock(&n->tcpip);
    }
}

/* The I/O thread of --api netconn|socket (the main thread): write the
 * transmit ring, wait on the tap and the ring's wake fd for at most
 * wait_ms (ppoll with wait_mask; NULL = keep the signals blocked; no wait
 * while frames are queued), then take what the tap brought in batches
 * under the core lock, writing what each batch made the stack send right
 * after it (outside the lock). 0, or -1 on a fatal error. */
static int node_tap_pump(struct node *n, const sigset_t *wait_mask, uint32_t wait_ms)
{
    struct pollfd pfd[2];
    struct timespec ts;
    unsigned batch;
    int r;

    node_tx_flush(n);
    if (!wisp_tapdev_tx_sleep_begin(&n->tap) && !n->tap.want_pollout) {
        wait_ms = 0;   /* frames queued: just look (after EAGAIN: wait for POLLOUT) */
    }
    ts.tv_sec = (time_t)(wait_ms / 1000u);
    ts.tv_nsec = (long)(wait_ms % 1000u) * 1000000L;
    /* want_pollout is this thread's own in deferred mode: no lock */
    pfd[0].fd = n->tap.fd;
    pfd[0].events = wisp_tapdev_poll_events(&n->tap);
    pfd[0].revents = 0;
    pfd[1].fd = wisp_tapdev_tx_wake_fd(&n->tap);
    pfd[1].events = POLLIN;
    pfd[1].revents = 0;
    r = ppoll(pfd, 2, &ts, wait_mask);
    wisp_tapdev_tx_sleep_end(&n->tap, r > 0 ? pfd[1].revents : 0);
    if (r < 0) {
        if (errno == EINTR) {
            return 0;
        }
        perror("wisp-node: ppoll");
        return -1;
    }
    if (r == 0) {
        return 0;
    }
    if ((pfd[0].revents | pfd[1].revents) & POLLNVAL) {
        fprintf(stderr, "wisp-node: tap fd became invalid\n");
        return -1;
    }
    if (pfd[0].revents & POLLOUT) {
        (void)wisp_tapdev_handle(&n->tap, POLLOUT);   /* deferred: only clears the wait */
    }
    /* Bounded batches: the application threads get the lock in between. */
    for (batch = 0; batch < WISP_TAPDEV_RX_BATCH / 16u && (pfd[0].revents & (POLLIN | POLLERR | POLLHUP)); batch++) {
        unsigned got;
        wisp_tcpip_lock(&n->tcpip);
        got = wisp_tapdev_rx(&n->tap, 16u);
        pcap_flush(n);
        wisp_tcpip_unlock(&n->tcpip);
        node_tx_flush(n);
        if (got < 16u) {
            break;
        }
    }
    return 0;
}

/* Main loop of --api netconn|socket: serve the tap; in client mode stop
 * once the client thread is done and its connection left the pools. */
static int run_loop_threaded(struct node *n, const sigset_t *wait_mask, unsigned baseline)
{
    double linger_until = 0;

    while (!stop_signal) {
        if (n->o.client && tclient_finished(n)) {
            double now = mono_s();
            tclient_join(n);
            if (linger_until == 0) {
                linger_until = now + NODE_CLIENT_LINGER_MS / 1e3;
            }
            if (node_pools_in_use(n) <= baseline || now >= linger_until) {
                break;
            }
        }
        if (node_tap_pump(n, wait_mask, n->o.client ? 5u : 20u) != 0) {
            return 1;
        }
    }
    return 0;
}

static int run_loop(struct node *n, const sigset_t *wait_mask, unsigned baseline)
{
    double linger_until = 0;

    if (n->threaded) {
        return run_loop_threaded(n, wait_mask, baseline);
    }
    while (!stop_signal && !client_finished(n, baseline, &linger_until)) {
        struct pollfd pfd;
        struct timespec ts;
        uint32_t wait_ms = wisp_stack_next_timeout(&n->stack);
        int r;

        if (wait_ms > NODE_MAX_WAIT_MS) {
            wait_ms = NODE_MAX_WAIT_MS;
        }
        if (((n->o.client && n->client.done) || n->iperf_cl_done) && wait_ms > 10u) {
            wait_ms = 10u;   /* lingering: check the pools often */
        }
        ts.tv_sec = (time_t)(wait_ms / 1000u);
        ts.tv_nsec = (long)(wait_ms % 1000u) * 1000000L;
        pfd.fd = n->tap.fd;
        pfd.events = wisp_tapdev_poll_events(&n->tap);
        pfd.revents = 0;
        r = ppoll(&pfd, 1, &ts, wait_mask);
        if (r < 0) {
            if (errno == EINTR) {
                continue;
            }
            perror("wisp-node: ppoll");
            return 1;
        }
        if (r > 0) {
            if (pfd.revents & POLLNVAL) {
                fprintf(stderr, "wisp-node: tap fd became invalid\n");
                return 1;
            }
            (void)wisp_tapdev_handle(&n->tap, pfd.revents);
        }
        wisp_stack_poll(&n->stack);
        client_tick(n);
        pcap_flush(n);
    }
    return 0;
}

static void print_report(struct node *n, const struct node_api *api)
{
    const struct wisp_tapdev *t = &n->tap;

    if ((n->o.client || n->o.iperf_client) && stop_signal == 0) {
        printf("wisp-node: stopping (client transfer over)\n");
    } else {
        printf("wisp-node: stopping (signal %d)\n", (int)stop_signal);
    }
    wisp_stack_dump(&n->stack, wisp_unix_print, stdout, !n->o.quiet);
    printf("tap %s: rx %" PRIu32 " frames %" PRIu32 " bytes, %" PRIu32 " nomem, %" PRIu32 " errors; "
           "tx %" PRIu32 " frames %" PRIu32 " bytes, %" PRIu32 " wouldblock, %" PRIu32 " errors\n",
           t->name, t->rx_frames, t->rx_bytes, t->rx_nomem, t->rx_errors, t->tx_frames, t->tx_bytes,
           t->tx_wouldblock, t->tx_errors);
    if (n->threaded) {
        printf("tap %s tx ring (deferred transmit): %" PRIu32 " frames refused (ring full), high %" PRIu32
               " bytes, %" PRIu32 " wake-ups of the I/O thread\n",
               t->name, t->tx_ring_full, t->tx_ring_high, t->tx_ring_kicks);
    }
    if (n->pcap_file != NULL) {
        printf("pcap %s: %" PRIu32 " rx records, %" PRIu32 " tx records, %" PRIu32 " write errors%s\n", n->o.pcap,
               n->pcap.rx_records, n->pcap.tx_records, n->pcap.write_errors,
               n->pcap.failed ? " (capture stopped)" : "");
    }
    api->dump(n);
    node_iperf_dump(n);
    node_http_dump(n);
}

/* Tear down and check the pools; returns 0 (clean) or 1 (leak). */
static int teardown(struct node *n, const struct node_api *api, bool nif_added)
{
    unsigned i, in_use;

    node_dhcp_stop(n);
    client_stop(n);
    node_iperf_stop(n);
    node_http_ping_stop(n);
    api->stop(n);
    if (nif_added) {
        wisp_netif_remove(&n->nif);
    }
    wisp_stack_deinit(&n->stack);
    wisp_tapdev_close(&n->tap);
    in_use = wisp_stack_pools_in_use(&n->stack);
    if (in_use == 0) {
        printf("pools: all back at baseline\n");
    } else {
        printf("pools: LEAK, %u elements still in use:", in_use);
        for (i = 0; i < WISP_POOL_COUNT; i++) {
            if (wisp_stack_pool_used(&n->stack, i) != 0) {
                printf(" %s=%u", wisp_stack_pool_name(&n->stack, i), (unsigned)wisp_stack_pool_used(&n->stack, i));
            }
        }
        printf("\n");
    }
    fflush(stdout);
    return in_use == 0 ? 0 : 1;
}

int main(int argc, char **argv)
{
    struct node *n;
    const struct node_api *api;
    struct wisp_config cfg;
    struct wisp_dev *top;
    sigset_t wait_mask;
    char err[256];
    uint8_t mac[6];
    wisp_err_t e;
    int rc;

    setvbuf(stdout, NULL, _IOLBF, 0);
    n = calloc(1, sizeof *n);
    if (n == NULL) {
        fprintf(stderr, "wisp-node: out of memory\n");
        return 1;
    }
    rc = parse_args(argc, argv, &n->o);
    if (rc >= 0) {
        free(n);
        return rc;
    }
    api = find_api(n->o.api);
    if (setup_signals(&wait_mask) != 0) {
        perror("wisp-node: signals");
        free(n);
        return 1;
    }

    memset(&cfg, 0, sizeof cfg);
    cfg.now_ms = wisp_unix_now_ms;
    if (n->o.have_seed) {
        cfg.seed = n->o.seed; /* reproducible run */
    } else {
        cfg.rand = wisp_unix_random; /* the host's entropy: getrandom() */
    }
    e = wisp_stack_init(&n->stack, &cfg);
    if (e != WISP_OK) {
        fprintf(stderr, "wisp-node: stack init failed: %s\n", wisp_err_str(e));
        free(n);
        return 1;
    }
    if (wisp_tapdev_open(&n->tap, &n->stack, n->o.tap, err, sizeof err) != 0) {
        fprintf(stderr, "wisp-node: %s\n", err);
        wisp_stack_deinit(&n->stack);
        free(n);
        return 1;
    }
    top = &n->tap.dev;
    if (n->o.pcap != NULL) {
        n->pcap_file = fopen(n->o.pcap, "wb");
        if (n->pcap_file == NULL) {
            fprintf(stderr, "wisp-node: cannot open %s: %s\n", n->o.pcap, strerror(errno));
            (void)teardown(n, api, false);
            free(n);
            return 1;
        }
        if (wisp_pcapdev_init(&n->pcap, &n->stack, top, pcap_file_write, n->pcap_file, wisp_unix_time_us, NULL) !=
            WISP_OK) {
            fprintf(stderr, "wisp-node: cannot write %s\n", n->o.pcap);
            fclose(n->pcap_file);
            (void)teardown(n, api, false);
            free(n);
            return 1;
        }
        fflush(n->pcap_file);
        top = &n->pcap.dev;
    }

    wisp_tapdev_mac_for(n->o.addr, mac);
    /* The netif is named like the tap when that fits (netif names: 7 chars). */
    e = wisp_netif_add_eth(&n->stack, &n->nif, strlen(n->tap.name) < WISP_NETIF_NAME_MAX ? n->tap.name : "tap0", top,
                           mac, (uint16_t)n->o.mtu);
    if (e != WISP_OK) {
        fprintf(stderr, "wisp-node: cannot add the interface: %s\n", wisp_err_str(e));
        rc = 1;
    } else {
        char a[16], g[16];
        if (!n->o.dhcp) {
            wisp_netif_set_ip4(&n->nif, n->o.addr, n->o.mask, n->o.gw);
        }
        wisp_netif_set_up(&n->nif, true);
        wisp_netif_set_link(&n->nif, true);   /* the tap fd is open: carrier */
        if (n->o.dns_server != 0) {
            (void)wisp_dns_set_server(&n->stack, 0, n->o.dns_server);
        }
        rc = (api->start(n) == 0) ? -1 : 1;
        if (rc < 0 && node_iperf_start(n) != 0) {
            rc = 1;
        }
        if (rc < 0 && n->o.dhcp && node_dhcp_start(n) != 0) {
            rc = 1;
        }
        if (rc < 0 && node_http_start(n) != 0) {
            rc = 1;
        }
        if (rc < 0) {
            if (!n->o.quiet) {
                char entropy[48] = "entropy getrandom";
                if (n->o.have_seed) {
                    snprintf(entropy, sizeof entropy, "seed %" PRIu64, n->o.seed);
                }
                printf("wisp-node: up on %s, %s/%u gw %s, mac %02x:%02x:%02x:%02x:%02x:%02x, mtu %u, api %s, "
                       "%s%s%s\n",
                       n->tap.name, wisp_ip4_ntoa(n->o.addr, a), n->o.prefix, wisp_ip4_ntoa(n->o.gw, g), mac[0],
                       mac[1], mac[2], mac[3], mac[4], mac[5], n->o.mtu, api->name, entropy,
                       n->o.pcap ? ", pcap " : "", n->o.pcap ? n->o.pcap : "");
            }
            {
                unsigned baseline = node_pools_in_use(n);
                if (n->o.client) {
                    n->client.ip = n->o.peer_ip;
                    n->client.port = n->o.peer_port;
                    n->client.send_mode = n->o.send;
                    n->client.total = n->o.send_bytes;
                    n->client.wsize = n->o.write_size;
                    if (client_start(n) != 0) {
                        rc = 1;
                    }
                }
                if (rc < 0 && n->o.iperf_client && node_iperf_client_start(n) != 0) {
                    rc = 1;
                }
                if (rc < 0 && n->o.resolve != NULL && !n->o.dhcp && node_resolve_start(n) != 0) {
                    rc = 1;
                }
                if (rc < 0 && n->o.ping && node_ping_start(n) != 0) {
                    rc = 1;
                }
                if (rc < 0 && n->o.udp_probe && node_probe_start(n) != 0) {
                    rc = 1;
                }
                if (rc < 0) {
                    printf("wisp-node: ready\n");
                    rc = run_loop(n, &wait_mask, baseline);
                    if (n->o.client && rc == 0 && client_report(n) != 0) {
                        rc = 1;
                    }
                    if (n->o.iperf_client && rc == 0 && node_iperf_client_report(n) != 0) {
                        rc = 1;
                    }
                    if (n->o.resolve != NULL && rc == 0 && !n->resolve_ok) {
                        rc = 1;
                    }
                    if (n->o.ping && rc == 0 && node_ping_report(n) != 0) {
                        rc = 1;
                    }
                    if (n->o.udp_probe && rc == 0 && n->probe_err != WISP_ERR_REFUSED) {
                        rc = 1;
                    }
                }
                if (n->o.udp_probe) {
                    node_probe_stop(n);
                }
            }
            if (api->quiesce != NULL) {
                api->quiesce(n); /* threads stopped: single-threaded again */
            }
            print_report(n, api);
        }
    }
    if (teardown(n, api, e == WISP_OK) != 0) {
        rc = 1;
    }
    if (n->pcap_file != NULL && fclose(n->pcap_file) != 0) {
        fprintf(stderr, "wisp-node: closing %s: %s\n", n->o.pcap, strerror(errno));
        rc = 1;
    }
    free(n);
    return rc;
}
