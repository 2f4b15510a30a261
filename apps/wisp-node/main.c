/**
 * @file main.c
 * wisp-node: one wisp stack on a Linux TAP interface, serving the standard
 * small services (UDP echo 7, discard 9; TCP echo 7, discard 9, chargen
 * 19), for interoperability tests against the Linux kernel; optionally a
 * TCP client transfer to a Linux peer (--connect).
 *
 *   wisp-node --tap NAME --addr A.B.C.D/PREFIX [--gw ADDR] [--pcap FILE]
 *             [--mtu N] [--seed N] [--api raw] [--quiet]
 *             [--connect ADDR:PORT (--send BYTES | --recv) [--write-size N]]
 *
 * Client mode: --send writes BYTES of a deterministic pattern (splitmix64
 * of the 8-byte block index, little-endian) in writes of --write-size
 * bytes (default 1460), then closes; --recv takes everything until the
 * peer closes. Either prints bytes, goodput (MB = 10^6 bytes) and the
 * SHA-256 of the bytes sent / received; the node then waits until the
 * connection has left its pools (at most 3 s) and exits: 0 = transfer
 * complete and no leak.
 *
 * The event loop waits in ppoll() on the tap fd with the time until the
 * stack's next timer (capped) and then runs the due timers. SIGINT/SIGTERM
 * only set a flag (they are blocked outside ppoll, so none is missed);
 * the loop then ends, prints every counter, the interfaces and the pools,
 * tears the stack down and checks that every pool is back at zero use.
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
#include "services.h"
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
    /* client mode */
    bool client;
    wisp_ip4_t peer_ip;
    uint16_t peer_port;
    bool send, recv;
    uint64_t send_bytes;
    uint32_t write_size;
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
};

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

static int client_start(struct node *n)
{
    struct node_client *c = &n->client;
    wisp_ipaddr_t ip = wisp_ipaddr4(c->ip);
    wisp_err_t err;

    sha256_init(&c->hash);
    if (c->send_mode) {
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
static int client_report(struct node *n)
{
    struct node_client *c = &n->client;
    char hex[65];
    double t0 = c->connected ? c->t_conn : c->t_start;
    double t1 = c->t_last > 0 ? c->t_last : c->t_end;
    double dt = t1 > t0 ? t1 - t0 : 1e-9;
    uint64_t bytes = c->send_mode ? c->acked : c->received;

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

/* ---------------------------------------------------------- API table
 * One row per application API; each starts and stops the node's services
 * on that API. Only "raw" (the core-context callback API) exists so far;
 * netconn and socket add rows here. */
struct node_api {
    const char *name;
    int (*start)(struct node *n);
    void (*stop)(struct node *n);
    void (*dump)(struct node *n);
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
           wisp_ip4_ntoa(r->remote_ip.u.ip4, a), (unsigned)r->remote_port,
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
    wisp_err_t err = wisp_services_start(&n->stack, &n->svc);

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
           " aborted %" PRIu32 " refused %" PRIu32 " rx %" PRIu64 " tx %" PRIu64 "\n",
           name, st->connections, st->active, st->closed, st->resets, st->aborted, st->refused, st->bytes_rx,
           st->bytes_tx);
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

static const struct node_api node_apis[] = {
    { "raw", raw_start, raw_stop, raw_dump },
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

/* ------------------------------------------------------------ options */

static void usage(FILE *f)
{
    fprintf(f,
            "usage: wisp-node --tap NAME --addr A.B.C.D/PREFIX [options]\n"
            "  --tap NAME          tap interface to use (created when absent)\n"
            "  --addr A.B.C.D/N    the stack's IPv4 address and prefix length\n"
            "  --gw ADDR           default gateway\n"
            "  --pcap FILE         write a capture of every frame to FILE\n"
            "  --mtu N             IP MTU of the interface (68..65000, default 1500)\n"
            "  --seed N            seed of the stack's generator (default: random)\n"
            "  --api raw           application API of the services (raw; netconn and\n"
            "                      socket are not available yet)\n"
            "  --quiet             no start-up messages; only non-zero counters at exit\n"
            "  --connect ADDR:PORT TCP client transfer to ADDR:PORT (with --send or --recv);\n"
            "                      the node exits when it is done\n"
            "  --send BYTES        send BYTES of a deterministic pattern, then close\n"
            "  --recv              receive until the peer closes\n"
            "  --write-size N      bytes per write of --send (1..16777216, default 1460)\n"
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
    if (!have_addr) {
        return usage_error("%s", "--addr A.B.C.D/PREFIX is required");
    }
    if (find_api(o->api) == NULL) {
        return usage_error("--api '%s' is not available (have: raw)", o->api);
    }
    if (o->client && o->send == o->recv) {
        return usage_error("%s", "--connect needs exactly one of --send BYTES and --recv");
    }
    if (!o->client && (o->send || o->recv)) {
        return usage_error("%s", "--send and --recv need --connect ADDR:PORT");
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

/* Client mode: true once the transfer is over and its connection has left
 * the pools (or the linger time is up). */
static bool client_finished(struct node *n, unsigned baseline, double *linger_until)
{
    struct node_client *c = &n->client;
    double now;

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

static int run_loop(struct node *n, const sigset_t *wait_mask, unsigned baseline)
{
    double linger_until = 0;

    while (!stop_signal && !client_finished(n, baseline, &linger_until)) {
        struct pollfd pfd;
        struct timespec ts;
        uint32_t wait_ms = wisp_stack_next_timeout(&n->stack);
        int r;

        if (wait_ms > NODE_MAX_WAIT_MS) {
            wait_ms = NODE_MAX_WAIT_MS;
        }
        if (n->o.client && n->client.done && wait_ms > 10u) {
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
        pcap_flush(n);
    }
    return 0;
}

static void print_report(struct node *n, const struct node_api *api)
{
    const struct wisp_tapdev *t = &n->tap;

    if (n->o.client && stop_signal == 0) {
        printf("wisp-node: stopping (client transfer over)\n");
    } else {
        printf("wisp-node: stopping (signal %d)\n", (int)stop_signal);
    }
    wisp_stack_dump(&n->stack, wisp_unix_print, stdout, !n->o.quiet);
    printf("tap %s: rx %" PRIu32 " frames %" PRIu32 " bytes, %" PRIu32 " nomem, %" PRIu32 " errors; "
           "tx %" PRIu32 " frames %" PRIu32 " bytes, %" PRIu32 " wouldblock, %" PRIu32 " errors\n",
           t->name, t->rx_frames, t->rx_bytes, t->rx_nomem, t->rx_errors, t->tx_frames, t->tx_bytes,
           t->tx_wouldblock, t->tx_errors);
    if (n->pcap_file != NULL) {
        printf("pcap %s: %" PRIu32 " rx records, %" PRIu32 " tx records, %" PRIu32 " write errors%s\n", n->o.pcap,
               n->pcap.rx_records, n->pcap.tx_records, n->pcap.write_errors,
               n->pcap.failed ? " (capture stopped)" : "");
    }
    api->dump(n);
}

/* Tear down and check the pools; returns 0 (clean) or 1 (leak). */
static int teardown(struct node *n, const struct node_api *api, bool nif_added)
{
    unsigned i, in_use;

    client_stop(n);
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
            if (n->stack.pool[i].used != 0) {
                printf(" %s=%u", n->stack.pool[i].name, (unsigned)n->stack.pool[i].used);
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
    cfg.seed = n->o.have_seed ? n->o.seed : wisp_unix_seed();
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
    e = wisp_netif_add_eth(&n->stack, &n->nif, strlen(n->tap.name) < sizeof n->nif.name ? n->tap.name : "tap0", top,
                           mac, (uint16_t)n->o.mtu);
    if (e != WISP_OK) {
        fprintf(stderr, "wisp-node: cannot add the interface: %s\n", wisp_err_str(e));
        rc = 1;
    } else {
        char a[16], g[16];
        wisp_netif_set_ip4(&n->nif, n->o.addr, n->o.mask, n->o.gw);
        wisp_netif_set_up(&n->nif, true);
        wisp_netif_set_link(&n->nif, true);   /* the tap fd is open: carrier */
        rc = (api->start(n) == 0) ? -1 : 1;
        if (rc < 0) {
            if (!n->o.quiet) {
                printf("wisp-node: up on %s, %s/%u gw %s, mac %02x:%02x:%02x:%02x:%02x:%02x, mtu %u, api %s, "
                       "seed %" PRIu64 "%s%s\n",
                       n->tap.name, wisp_ip4_ntoa(n->o.addr, a), n->o.prefix, wisp_ip4_ntoa(n->o.gw, g), mac[0],
                       mac[1], mac[2], mac[3], mac[4], mac[5], n->o.mtu, api->name, cfg.seed,
                       n->o.pcap ? ", pcap " : "", n->o.pcap ? n->o.pcap : "");
            }
            {
                unsigned baseline = wisp_stack_pools_in_use(&n->stack);
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
                if (rc < 0) {
                    printf("wisp-node: ready\n");
                    rc = run_loop(n, &wait_mask, baseline);
                    if (n->o.client && rc == 0 && client_report(n) != 0) {
                        rc = 1;
                    }
                }
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
