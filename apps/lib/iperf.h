/**
 * @file iperf.h
 * An iperf 2 compatible traffic server and client on the raw (core-
 * context) API, interoperable with iperf 2.1 (checked against Debian's
 * iperf 2.1.8) in both directions, over TCP and UDP. Portable like
 * services.h: no allocation, no stdio; all state lives in the caller's
 * struct wisp_iperf_server / struct wisp_iperf_client.
 *
 * Wire format (iperf 2, every field a 32-bit word in network order):
 *
 *  - TCP: the client opens the connection and sends a byte stream for a
 *    time or an amount of bytes, then closes. An iperf 2.1 client starts
 *    the stream with a "first message" header: client_hdr_v1 {flags,
 *    numThreads, mPort, mBufLen, mWinBand, mAmount} and, when flags holds
 *    WISP_IPERF_HDR_EXTEND, an extension (type, length, flags, version_u,
 *    version_l, reserved, mRate, mUDPRateUnits, mRealtime); flags holds
 *    the header length (bytes << 1) under WISP_IPERF_HDR_LEN_BIT. The
 *    server counts every byte of the stream (header included, like iperf)
 *    and reads only flags, mPort and mAmount (for -r / -d, below). mAmount
 *    is a byte count, or when negative a time in units of 10 ms.
 *
 *  - UDP: every datagram starts with {id, tv_sec, tv_usec, id2}: the
 *    sequence number (1, 2, ...; 64 bits as id2:id when the client header
 *    flags hold WISP_IPERF_HDR_SEQNO64B, else the signed 32-bit id) and
 *    the sender's time. The client header (as for TCP, plus 16 bytes of
 *    UDP test fields) follows at offset 16 in every datagram. The last
 *    datagram (the FIN) carries the negated next sequence number; the
 *    client repeats it (every 250 ms, at most 10 times) until the server
 *    answers with a server report datagram: 16 bytes of zero ids, then
 *    server_hdr_v1 {flags = WISP_IPERF_HDR_VERSION1 [| SEQNO64B],
 *    total_len1, total_len2, stop_sec, stop_usec, error_cnt, outorder_cnt,
 *    datagrams, jitter1 (s), jitter2 (us)} and an 18-word extension whose
 *    last three words (offsets 116, 120, 124) are the upper halves of
 *    error_cnt, outorder_cnt and datagrams (read when SEQNO64B is set):
 *    128 bytes in all.
 *
 * Server accounting (UDP), as iperf 2 counts: total datagrams = the
 * highest sequence number seen (the FIN's, so the FIN counts as one, and
 * its bytes count too); a datagram above highest + 1 opens a gap of
 * "lost" datagrams; one at or below the highest is out of order (a late
 * datagram fills a gap, so lost = gaps - out of order; a duplicate is
 * indistinguishable and also counts as out of order). Jitter is the
 * interarrival jitter of RFC 3550 §6.4.1 over the data datagrams, in
 * microseconds (integer form of RFC 3550 §A.8). Duration = arrival of the
 * FIN - arrival of the first datagram.
 *
 * Choices where iperf is silent or where the server differs from iperf:
 *  - TCP -r (tradeoff) / -d (dualtest): the header flag
 *    WISP_IPERF_HDR_VERSION1 asks the server to connect back to the
 *    client's address at port mPort and send the same amount (-d: at
 *    once; -r: once the client's stream has ended). Supported when
 *    cfg.reverse is set (wisp-node sets it), with the amount capped by
 *    WISP_IPERF_REVERSE_MAX_MS / WISP_IPERF_REVERSE_MAX_BYTES (no
 *    amplification beyond that), only to the client's own address, one
 *    reverse stream per connection. The reverse stream carries no header
 *    (like iperf's). Without cfg.reverse the request is ignored (the
 *    iperf client reports "expected reverse connect did not occur").
 *    UDP -r / -d are not supported: ignored the same way.
 *  - UDP sessions are keyed by the peer's address and port; up to
 *    WISP_IPERF_UDP_SESSIONS at once. A finished session is kept (to
 *    answer repeated FINs with the same report) until its slot is needed;
 *    a session idle for WISP_IPERF_UDP_IDLE_MS may be taken over by a new
 *    peer (reported as ended without FIN). Datagrams shorter than 16 bytes
 *    are dropped and counted (runts).
 *  - The client's datagrams and header imitate iperf 2.1.8's
 *    (flags EXTEND | SEQNO64B, version 2.1.8 in the version fields so the
 *    peer treats us as a current client); the pattern after the header is
 *    the ASCII digits "0123456789" repeated.
 *  - Time: a microsecond clock hook (cfg.clock); NULL = wisp_now() * 1000.
 *    Timestamps in our datagrams are that clock's (only their differences
 *    matter for jitter).
 *
 * Who may call: the core context only (callbacks run there too).
 */
#ifndef WISP_IPERF_H
#define WISP_IPERF_H

#include "wisp/wisp.h"
#include "wisp/tcp.h"
#include "wisp/udp.h"

#define WISP_IPERF_PORT 5001u    /**< iperf 2's default port */

/* Header flags (the first word of the client header). */
#define WISP_IPERF_HDR_VERSION1 0x80000000u  /**< -r/-d: connect back (server report, in a report) */
#define WISP_IPERF_HDR_EXTEND 0x40000000u    /**< extension follows */
#define WISP_IPERF_HDR_SEQNO64B 0x08000000u  /**< 64-bit UDP sequence numbers (id2:id) */
#define WISP_IPERF_HDR_LEN_BIT 0x00010000u   /**< header length present in the flags */
#define WISP_IPERF_HDR_LEN_MASK 0x000001FEu  /**< header length << 1 */
#define WISP_IPERF_RUN_NOW 0x00000001u       /**< -d: connect back at once */

#define WISP_IPERF_UDP_HDR_LEN 16u           /**< id, tv_sec, tv_usec, id2 */
#define WISP_IPERF_CLIENT_HDR_LEN 60u        /**< client_hdr_v1 (24) + extension (36) */
#define WISP_IPERF_UDP_CLIENT_HDR_LEN 76u    /**< ... + UDP test fields (16) */
#define WISP_IPERF_SERVER_REPORT_LEN 128u    /**< report datagram: 16 + 40 + 72 */
#define WISP_IPERF_FIN_TRIES 10u             /**< client FIN retransmissions */
#define WISP_IPERF_FIN_WAIT_MS 250u          /**< between FIN retransmissions */

/** TCP connections the server holds at once. Default 4. */
#ifndef WISP_IPERF_TCP_CONNS
#define WISP_IPERF_TCP_CONNS 4
#endif
/** UDP sessions (peers) the server tracks at once. Default 4. */
#ifndef WISP_IPERF_UDP_SESSIONS
#define WISP_IPERF_UDP_SESSIONS 4
#endif
/** TCP server: a connection that received nothing for this long is reset
 *  (ms; counted in tcp_timeouts). A test streams without pause, so 10 s of
 *  silence is a dead or idle client. Runtime: cfg.tcp_idle_ms. */
#ifndef WISP_IPERF_TCP_IDLE_MS
#define WISP_IPERF_TCP_IDLE_MS 10000u
#endif
/** TCP server: when every record is in use, the connection silent the
 *  longest, at least this long (ms), is reset for the new one (counted in
 *  tcp_reclaimed). No per-source cap: iperf -P opens parallel streams
 *  from one client. Runtime: cfg.tcp_reclaim_ms. */
#ifndef WISP_IPERF_TCP_RECLAIM_MS
#define WISP_IPERF_TCP_RECLAIM_MS 1000u
#endif
/** A running UDP session idle this long may be replaced (ms). */
#ifndef WISP_IPERF_UDP_IDLE_MS
#define WISP_IPERF_UDP_IDLE_MS 10000u
#endif
/** Longest reverse (-r/-d) stream the server sends (ms). Default 60 s. */
#ifndef WISP_IPERF_REVERSE_MAX_MS
#define WISP_IPERF_REVERSE_MAX_MS 60000u
#endif
/** Most bytes a reverse stream sends. Default 1 GB. */
#ifndef WISP_IPERF_REVERSE_MAX_BYTES
#define WISP_IPERF_REVERSE_MAX_BYTES 1000000000u
#endif
/** After its FIN a sender waits this long for the peer's FIN (ms). */
#ifndef WISP_IPERF_LINGER_MS
#define WISP_IPERF_LINGER_MS 5000u
#endif

#if WISP_IPERF_TCP_CONNS < 1 || WISP_IPERF_TCP_CONNS > 255
#error "WISP_IPERF_TCP_CONNS must be 1..255"
#endif
#if WISP_IPERF_UDP_SESSIONS < 1 || WISP_IPERF_UDP_SESSIONS > 255
#error "WISP_IPERF_UDP_SESSIONS must be 1..255"
#endif

/** Microsecond clock hook (monotonic). */
typedef uint64_t (*wisp_iperf_clock_fn)(void *ctx);

/** Who produced a result. */
enum wisp_iperf_role {
    WISP_IPERF_ROLE_SERVER = 0,   /**< the server received a test */
    WISP_IPERF_ROLE_CLIENT,       /**< our client sent a test */
    WISP_IPERF_ROLE_REVERSE       /**< the server's -r/-d stream back to a client */
};

/** A UDP server report (what the server measured), as received by the
 *  client or as sent by the server. */
struct wisp_iperf_udp_report {
    uint32_t flags;             /**< server_hdr flags */
    uint64_t bytes;             /**< bytes received (FIN included) */
    uint64_t duration_us;       /**< first datagram to FIN */
    uint64_t datagrams;         /**< datagrams the client sent (highest sequence number) */
    uint64_t lost;              /**< datagrams missing */
    uint64_t out_of_order;      /**< datagrams that came late */
    uint32_t jitter_us;         /**< RFC 3550 interarrival jitter */
};

/** The outcome of one test (one connection / UDP session / client run). */
struct wisp_iperf_result {
    uint8_t proto;              /**< WISP_IP4_PROTO_TCP or _UDP */
    uint8_t role;               /**< enum wisp_iperf_role */
    bool ok;                    /**< completed normally */
    wisp_err_t err;             /**< why not (WISP_OK when ok) */
    wisp_ipaddr_t peer_ip;
    uint16_t peer_port;
    uint32_t hdr_flags;         /**< flags word of the peer's client header (0: none seen) */
    uint64_t bytes;             /**< TCP: received (server) or acknowledged (senders);
                                     UDP: received (server) or sent (client) */
    uint64_t duration_us;
    /* UDP */
    uint64_t datagrams;         /**< client: sent (FIN included); server: report.datagrams */
    uint64_t received;          /**< server: datagrams received (FIN and duplicates included) */
    uint32_t send_refused;      /**< client: datagrams the stack refused (WISP_ERR_MEM), retried later */
    uint8_t fin_tries;          /**< client: FINs sent */
    bool have_report;           /**< client: the server's report arrived; server: always */
    bool fin_seen;              /**< server: the session ended with a FIN */
    struct wisp_iperf_udp_report report;
    bool reverse;               /**< server, TCP: a -r/-d stream back was started */
};

/** Called once per finished test (server: each connection or session and
 *  each reverse stream; client: once). */
typedef void (*wisp_iperf_report_fn)(void *ctx, const struct wisp_iperf_result *r);

/** A TCP sender (our client, or the server's -r/-d stream back). Internal. */
struct wisp_iperf_tx {
    struct wisp_stack *stack;
    struct wisp_tcp_pcb *pcb;   /**< NULL when not connected / closed */
    struct wisp_timer tmr;      /**< end of the sending time, then the linger limit */
    wisp_iperf_clock_fn clock;
    void *clock_ctx;
    void (*finished)(struct wisp_iperf_tx *tx);  /**< owner's completion hook */
    void *owner;
    uint8_t hdr[WISP_IPERF_CLIENT_HDR_LEN];
    uint8_t hdr_len;
    uint8_t state;              /**< TX_* (iperf.c) */
    uint8_t refused;            /**< reverse connects refused so far (retried) */
    bool peer_closed, close_pending;
    uint32_t wlen;              /**< bytes per write (at most 1000) */
    uint64_t total;             /**< bytes to send; 0 = for time_ms */
    uint32_t time_ms;
    uint64_t end_us;
    uint64_t written, acked;
    uint64_t t_conn, t_last;
    struct wisp_iperf_result res;
};

/** One TCP connection of the server. Internal. */
struct wisp_iperf_tcp_conn {
    struct wisp_iperf_server *srv;
    struct wisp_tcp_pcb *pcb;   /**< NULL = free */
    uint8_t hdr[24];
    uint8_t hdr_n;
    bool rev_pending;           /**< -r: start the reverse stream at the peer's FIN */
    uint16_t rev_port;
    int32_t rev_amount;
    uint64_t t_first, t_last;
    uint32_t last_ms;           /**< stack time of the last data (idle timeout, reclaim) */
    struct wisp_iperf_result res;
};

/** One UDP session of the server. Internal. */
struct wisp_iperf_udp_sess {
    uint8_t state;              /**< 0 free, 1 running, 2 finished */
    bool seq64;
    wisp_ipaddr_t peer;
    uint16_t port;
    uint32_t hdr_flags;
    uint64_t bytes, received, max_id, gaps, ooo;
    int64_t prev_transit;
    bool have_transit;
    int64_t jitter16;           /**< jitter in us, scaled by 16 (RFC 3550 §A.8) */
    uint64_t t_first, t_last;
    uint32_t last_ms;           /**< stack time of the last datagram */
};

/** Server configuration. */
struct wisp_iperf_server_cfg {
    uint16_t port;              /**< 0 = WISP_IPERF_PORT */
    bool tcp, udp;              /**< which listeners to open */
    bool reverse;               /**< honour TCP -r/-d requests */
    wisp_iperf_clock_fn clock;  /**< NULL = wisp_now() * 1000 */
    void *clock_ctx;
    wisp_iperf_report_fn report;  /**< optional */
    void *report_ctx;
    uint32_t tcp_idle_ms;       /**< 0 = WISP_IPERF_TCP_IDLE_MS */
    uint32_t tcp_reclaim_ms;    /**< 0 = WISP_IPERF_TCP_RECLAIM_MS */
};

/** Server counters. */
struct wisp_iperf_server_stats {
    uint32_t tcp_tests, tcp_refused, udp_tests, udp_refused, udp_runts, reports_sent, report_err;
    uint32_t reverse_started, reverse_failed;
    uint32_t tcp_timeouts, tcp_reclaimed;   /**< idle connections reset; reset for a new one */
};

/** The server of one stack (caller-owned; start zeroes it). */
struct wisp_iperf_server {
    struct wisp_stack *stack;
    struct wisp_iperf_server_cfg cfg;
    struct wisp_tcp_pcb *listener;
    struct wisp_udp_pcb *udp;
    struct wisp_iperf_tcp_conn conns[WISP_IPERF_TCP_CONNS];
    struct wisp_iperf_tx rev[WISP_IPERF_TCP_CONNS];
    struct wisp_iperf_udp_sess sess[WISP_IPERF_UDP_SESSIONS];
    struct wisp_iperf_server_stats st;
};

/** Start the server on stack s (TCP and/or UDP on cfg->port, any local
 *  address). srv is zeroed first and must stay alive until stop. On failure
 *  nothing is left open. */
wisp_err_t wisp_iperf_server_start(struct wisp_stack *s, struct wisp_iperf_server *srv,
                                   const struct wisp_iperf_server_cfg *cfg);
/** Stop: close the listeners, abort open connections and reverse streams
 *  (each reported with WISP_ERR_ABRT), report running UDP sessions (not
 *  ok: no FIN) and remove the UDP PCB. */
void wisp_iperf_server_stop(struct wisp_iperf_server *srv);
/** Tests in progress (TCP connections, reverse streams, running UDP sessions). */
unsigned wisp_iperf_server_active(const struct wisp_iperf_server *srv);

/** Client configuration. */
struct wisp_iperf_client_cfg {
    wisp_ipaddr_t server;
    uint16_t port;              /**< 0 = WISP_IPERF_PORT */
    bool udp;
    uint32_t time_ms;           /**< test length when bytes == 0 (0 = 10 s, like iperf) */
    uint64_t bytes;             /**< bytes to send (header included), 0 = by time */
    uint32_t len;               /**< UDP: datagram payload (16..65507, default 1470);
                                     TCP: bytes per write (1..1000, default 1000) */
    uint64_t rate_bps;          /**< UDP: sending rate (0 = 1 Mbit/s, like iperf) */
    wisp_iperf_clock_fn clock;  /**< NULL = wisp_now() * 1000 */
    void *clock_ctx;
    wisp_iperf_report_fn done;  /**< called once at the end (required) */
    void *done_ctx;
};

/** The client (caller-owned; start zeroes it). */
struct wisp_iperf_client {
    struct wisp_stack *stack;
    struct wisp_iperf_client_cfg cfg;
    struct wisp_iperf_tx tcp;   /**< TCP test */
    /* UDP test */
    struct wisp_udp_pcb *udp;
    struct wisp_timer utmr;
    uint64_t seq;               /**< next sequence number */
    uint64_t t_start, t_end_send, end_us;
    uint8_t phase;              /**< UDP: 0 sending, 1 FIN sent, 2 done */
    bool running;
    struct wisp_iperf_result res;
};

/** Start a test against cfg->server. The result comes through cfg->done
 *  (also on failure after a successful start). */
wisp_err_t wisp_iperf_client_start(struct wisp_stack *s, struct wisp_iperf_client *c,
                                   const struct wisp_iperf_client_cfg *cfg);
/** Abort a running test (no callback) and release its PCBs and timers. */
void wisp_iperf_client_stop(struct wisp_iperf_client *c);
/** True while the test runs (started, done not yet called). */
bool wisp_iperf_client_running(const struct wisp_iperf_client *c);

/** Parse a server report datagram payload (offset 0 = the 16-byte id
 *  header). False when too short or not a report (no VERSION1 flag). */
bool wisp_iperf_parse_report(const uint8_t *buf, size_t len, struct wisp_iperf_udp_report *r);
/** Build a 128-byte report datagram payload from r (seq64: fill the upper
 *  halves and flag SEQNO64B). */
void wisp_iperf_build_report(uint8_t *buf, const struct wisp_iperf_udp_report *r, bool seq64);

#endif /* WISP_IPERF_H */
