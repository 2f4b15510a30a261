/**
 * @file services.h
 * Small standard network services on the raw (core-context) API, started
 * per stack: UDP echo (RFC 862, port 7) and UDP discard (RFC 863, port 9),
 * TCP echo (RFC 862, port 7), TCP discard (RFC 863, port 9) and TCP
 * chargen (RFC 864, port 19).
 *
 * The services are listed in a table of {name, protocol, port, start,
 * stop} (wisp_services_table). All state lives in a struct wisp_services
 * owned by the caller (TCP connections in a fixed pool of
 * WISP_SERVICES_TCP_CONNS records inside it): no allocation, no stdio,
 * portable.
 *
 * Echo policy (where RFC 862 is silent):
 *  - the reply goes to the datagram's source address and port, from the
 *    address it was sent to, with the DSCP of the request (ECN bits
 *    cleared), reusing the received pbuf (no copy);
 *  - no reply, counted as dropped: datagrams received as broadcast or
 *    multicast (no amplification), from source port 0 (RFC 768: no reply
 *    expected), or from the port of another reflecting service (echo 7,
 *    discard 9, daytime 13, quote 17, chargen 19, time 37), which would
 *    start an endless echo loop between two servers.
 *
 * TCP policy (where RFCs 862-864 are silent):
 *  - admission (struct wisp_services_opts, defaults below; the choice is
 *    reclaim.h's): a remote address holds at most per_source records at
 *    once; when the pool is full (or the address is at its cap) a record
 *    is reclaimed -- aborted (RST, counted as reclaimed) and given to the
 *    new connection: at its cap, the address's own record without
 *    progress for the longest time, at least reclaim_ms; else a record
 *    without progress for at least reclaim_ms or one of an address that
 *    holds two records more than the new one's (fair share), the biggest
 *    holder's first, then the one idle the longest (progress: data
 *    received, ours acknowledged); when no record qualifies the new
 *    connection is refused
 *    (the accept callback declines it: the stack resets it) and counted
 *    (refused; capped as well when the per-source cap was the reason). So
 *    idle connections cannot deny the services to others (issue 11 #2):
 *    TCP keepalive (2 h) is far too slow for that;
 *  - idle timeout: a connection without progress (nothing received,
 *    nothing of ours acknowledged) for idle_ms is ended from the poll
 *    callback (counted as a timeout): closed (FIN) when nothing of ours is
 *    waiting to be sent or acknowledged, else aborted (RST: the peer does
 *    not read);
 *  - echo copies the received bytes into the send buffer
 *    (WISP_TCP_WRITE_COPY) and frees the received buffers once copied; what
 *    does not fit stays queued (the received buffers, in a ring of
 *    WISP_SERVICES_ECHO_CHAINS chains, bounded by our receive window) and
 *    the window is reopened (wisp_tcp_recved) only for bytes
 *    moved into the send buffer, so a client that does not read is flow-
 *    controlled end to end; the rest is written from the sent callback
 *    (or the poll callback after WISP_ERR_MEM);
 *  - discard consumes every byte and reopens the window at once;
 *  - chargen sends the RFC 864 pattern (72-character lines, line i starting
 *    at printable character i mod 95, CR LF) as fast as the send buffer
 *    allows, refilled from the sent callback; received bytes are discarded;
 *  - when the peer closes its direction, the service closes ours (echo
 *    after every received byte has been queued for sending; chargen stops
 *    generating; queued data is still delivered before our FIN);
 *  - wisp_services_stop / wisp_services_tcp_stop close the listeners and
 *    abort (RST) the connections still open;
 *  - wisp_tcp_output is called only from the poll callback: from the
 *    receive / sent callbacks the stack sends by itself once it has
 *    processed the segment (and wisp_tcp_write arms its output timer).
 *
 * Who may call: the core context only.
 */
#ifndef WISP_SERVICES_H
#define WISP_SERVICES_H

#include "wisp/wisp.h"
#include "wisp/tcp.h"

#define WISP_PORT_ECHO 7u     /**< RFC 862 */
#define WISP_PORT_DISCARD 9u  /**< RFC 863 */
#define WISP_PORT_CHARGEN 19u /**< RFC 864 */

/** TCP connections the services hold at once (all TCP services together;
 *  each record is small, the data lives in the stack's buffers). The stack
 *  itself holds at most WISP_TCP_PCB_COUNT connections. Default 8. */
#ifndef WISP_SERVICES_TCP_CONNS
#define WISP_SERVICES_TCP_CONNS 8
#endif

/** Accept backlog of each TCP listener (1..255). Default 8. */
#ifndef WISP_SERVICES_TCP_BACKLOG
#define WISP_SERVICES_TCP_BACKLOG 8
#endif

/** Poll callback interval of service connections, in units of
 *  WISP_TCP_POLL_UNIT_MS (retries after WISP_ERR_MEM). Default 2. */
#ifndef WISP_SERVICES_TCP_POLL
#define WISP_SERVICES_TCP_POLL 2
#endif

/** Idle timeout of a TCP service connection (ms, 1..2^31): no byte
 *  received and none of ours acknowledged for this long ends it. Default
 *  30000: far above any interactive round trip, short enough that idle
 *  connections give their records back well before keepalive (2 h) would
 *  notice anything. Runtime: wisp_services_opts.idle_ms. */
#ifndef WISP_SERVICES_IDLE_MS
#define WISP_SERVICES_IDLE_MS 30000u
#endif

/** A connection without progress for at least this long (ms) may be
 *  reclaimed (aborted) for a new connection when every record is in use.
 *  Default 1000: a working client (a round trip of a few ms to some
 *  hundred ms) is never taken, a connection that sits idle loses its
 *  record under pressure only. Runtime: wisp_services_opts.reclaim_ms. */
#ifndef WISP_SERVICES_RECLAIM_MS
#define WISP_SERVICES_RECLAIM_MS 1000u
#endif

/** Echo: chains of received data a connection may hold while its send
 *  buffer is full. A pbuf chain holds at most 65535 bytes (16-bit length),
 *  so a full receive window of WISP_TCP_WND bytes needs several; every two
 *  consecutive chains hold more than 64 KB, hence the default
 *  2 * WISP_TCP_WND / 65536 + 2 (2 for the default window). When all are in
 *  use the data is refused (the stack offers it again). */
#ifndef WISP_SERVICES_ECHO_CHAINS
#define WISP_SERVICES_ECHO_CHAINS (2 * (WISP_TCP_WND) / 65536 + 2)
#endif

#if WISP_SERVICES_ECHO_CHAINS < 1 || WISP_SERVICES_ECHO_CHAINS > 255
#error "WISP_SERVICES_ECHO_CHAINS must be 1..255"
#endif
#if WISP_SERVICES_TCP_CONNS < 1 || WISP_SERVICES_TCP_CONNS > 255
#error "WISP_SERVICES_TCP_CONNS must be 1..255"
#endif
#if WISP_SERVICES_TCP_BACKLOG < 1 || WISP_SERVICES_TCP_BACKLOG > 255
#error "WISP_SERVICES_TCP_BACKLOG must be 1..255"
#endif

/** The TCP services (index of struct wisp_services.tcp[]). */
enum wisp_tcp_service_id {
    WISP_TCP_SVC_ECHO = 0,
    WISP_TCP_SVC_DISCARD,
    WISP_TCP_SVC_CHARGEN,
    WISP_TCP_SVC_COUNT
};

/** Counters of one service. */
struct wisp_service_stats {
    uint32_t datagrams;   /**< datagrams served (echoed / discarded) */
    uint32_t bytes;       /**< payload bytes served */
    uint32_t dropped;     /**< datagrams not served (policy, or send failed) */
    uint32_t send_err;    /**< echo replies the stack refused to send */
};

/** Counters of one TCP service. */
struct wisp_tcp_service_stats {
    uint32_t connections;  /**< connections accepted */
    uint32_t active;       /**< connections open now */
    uint32_t closed;       /**< connections ended by a close (peer closed, we closed) */
    uint32_t resets;       /**< connections ended by a reset or an error */
    uint32_t aborted;      /**< connections aborted by us (stop, write error) */
    uint32_t refused;      /**< connections refused: no free record (or the per-source cap) */
    uint64_t bytes_rx;     /**< payload bytes received */
    uint64_t bytes_tx;     /**< payload bytes queued for sending */
    uint32_t timeouts;     /**< connections ended by the idle timeout */
    uint32_t reclaimed;    /**< connections aborted to make room for a new one */
    uint32_t capped;       /**< refusals because of the per-source cap (also in refused) */
};

/** Runtime options of the TCP services (zero fields take the defaults). */
struct wisp_services_opts {
    uint32_t idle_ms;      /**< idle timeout (0 = WISP_SERVICES_IDLE_MS) */
    /** Least idle time of a reclaimed connection (0 = WISP_SERVICES_RECLAIM_MS;
     *  2^31 - 1 = WISP_RECLAIM_OFF of reclaim.h: never reclaim). Values
     *  above 2^31 - 1 are taken as 2^31 - 1, idle_ms too. */
    uint32_t reclaim_ms;
    /** Records one remote address may hold at once (0 = all of them: no
     *  hard cap by default, so one client may use every record for
     *  parallel transfers while nobody else asks -- the fair-share rule of
     *  reclaim.h gives a record of its to any other address that comes;
     *  set it to keep a share free at all times). */
    uint16_t per_source;
};

struct wisp_services;

/** One TCP service: its listener and counters. */
struct wisp_tcp_service {
    struct wisp_services *svc;
    struct wisp_tcp_pcb *listener;      /**< NULL while stopped */
    uint8_t id;                         /**< enum wisp_tcp_service_id */
    struct wisp_tcp_service_stats st;
};

/** One connection of a TCP service (a record of the services' pool). */
struct wisp_tcp_svc_conn {
    struct wisp_tcp_service *service;   /**< NULL = free record */
    struct wisp_tcp_pcb *pcb;
    /** echo: received data not yet in the send buffer, a ring of chains
     *  (oldest at pend_head) */
    struct wisp_pbuf *pending[WISP_SERVICES_ECHO_CHAINS];
    uint8_t pend_head, pend_count;
    uint16_t pending_off;               /**< echo: bytes of the oldest buffer already sent */
    uint16_t chargen_pos;               /**< chargen: offset in the 7030-byte pattern period */
    uint8_t peer_closed;                /**< the peer closed its direction (FIN) */
    uint8_t close_pending;              /**< wisp_tcp_close failed with WISP_ERR_MEM: retry */
    uint8_t timed_out;                  /**< ended by the idle timeout (how the end is counted) */
    wisp_ipaddr_t remote_ip;
    uint16_t remote_port;
    uint32_t last_ms;                   /**< last progress (accepted, received, acknowledged) */
    uint64_t bytes_rx, bytes_tx;
};

/** How a TCP service connection ended, for the optional report hook. */
struct wisp_tcp_conn_report {
    const char *service;      /**< "echo", "discard", "chargen" */
    uint16_t port;            /**< the service's port */
    wisp_ipaddr_t remote_ip;
    uint16_t remote_port;
    uint64_t bytes_rx, bytes_tx;
    /** WISP_OK: closed (the peer closed, we closed our side); else the
     *  error of the error callback (WISP_ERR_RST, WISP_ERR_ABRT, ...) or
     *  WISP_ERR_ABRT when we aborted it. */
    wisp_err_t how;
    /** The connection's statistics just before we closed or aborted it
     *  (have_info false when the stack had already freed it). */
    bool have_info;
    struct wisp_tcp_info info;
};
typedef void (*wisp_tcp_conn_report_fn)(void *ctx, const struct wisp_tcp_conn_report *r);

/** The services of one stack. Zero it (or let start do it) before use. */
struct wisp_services {
    struct wisp_stack *stack;
    struct wisp_udp_pcb *udp_echo;      /**< NULL while stopped */
    struct wisp_udp_pcb *udp_discard;
    struct wisp_service_stats udp_echo_st;
    struct wisp_service_stats udp_discard_st;
    struct wisp_tcp_service tcp[WISP_TCP_SVC_COUNT];
    struct wisp_tcp_svc_conn conns[WISP_SERVICES_TCP_CONNS];
    wisp_tcp_conn_report_fn report;     /**< optional: called when a connection ends */
    void *report_ctx;
    struct wisp_services_opts opt;      /**< TCP admission and timeouts (set before wisp_services_tcp_start) */
};

/** One row of the service table. */
struct wisp_service_desc {
    const char *name;       /**< "echo", "discard", ... */
    uint8_t proto;          /**< WISP_IP4_PROTO_UDP / _TCP */
    uint16_t port;          /**< well-known port */
    /** Open the service on svc->stack (svc->stack set by the caller). */
    wisp_err_t (*start)(struct wisp_services *svc);
    /** Close it (no-op when not running). */
    void (*stop)(struct wisp_services *svc);
};

/** The service table and its length (*n). */
const struct wisp_service_desc *wisp_services_table(unsigned *n);

/** Start every UDP service of the table on stack s. svc is zeroed first
 *  and stays owned by the caller, who must keep it alive until stop. On
 *  failure (no PCB, port in use) the services already started are stopped
 *  again and the error is returned. */
wisp_err_t wisp_services_udp_start(struct wisp_stack *s, struct wisp_services *svc);
/** Stop every UDP service: their PCBs are removed. Counters are kept. */
void wisp_services_udp_stop(struct wisp_services *svc);

/** Start every TCP service of the table (listeners with a backlog of
 *  WISP_SERVICES_TCP_BACKLOG) on svc->stack. svc must have been set up by
 *  wisp_services_udp_start (or zeroed, with svc->stack set); it is not
 *  zeroed here. On failure the TCP services already started are stopped
 *  and the error is returned. */
wisp_err_t wisp_services_tcp_start(struct wisp_services *svc);
/** Stop every TCP service: close the listeners and abort (RST) the
 *  connections still open (each is reported through the hook with
 *  WISP_ERR_ABRT). Counters are kept. */
void wisp_services_tcp_stop(struct wisp_services *svc);

/** Start every service of the table (UDP and TCP) on stack s; svc is
 *  zeroed first. On failure everything started is stopped again. */
wisp_err_t wisp_services_start(struct wisp_stack *s, struct wisp_services *svc);
/** The same with TCP options (o may be NULL: defaults). */
wisp_err_t wisp_services_start_opts(struct wisp_stack *s, struct wisp_services *svc,
                                    const struct wisp_services_opts *o);
/** The options with every zero field replaced by its default (per_source
 *  bounded by max_records). */
void wisp_services_opts_resolve(struct wisp_services_opts *o, unsigned max_records);
/** Stop every service (TCP, then UDP). Counters are kept. */
void wisp_services_stop(struct wisp_services *svc);

/** Set the hook called when a TCP service connection ends (NULL = none).
 *  Call after start (start zeroes svc). */
void wisp_services_set_report(struct wisp_services *svc, wisp_tcp_conn_report_fn fn, void *ctx);

/** Connections of the TCP services open now (records in use). */
unsigned wisp_services_tcp_active(const struct wisp_services *svc);

/** The RFC 864 chargen pattern: byte at offset off of the stream (the
 *  stream is periodic with WISP_CHARGEN_PERIOD bytes). For tests. */
#define WISP_CHARGEN_LINE 72u                                    /**< characters per line */
#define WISP_CHARGEN_PERIOD (95u * (WISP_CHARGEN_LINE + 2u))     /**< 95 lines of 74 bytes */
uint8_t wisp_chargen_byte(uint32_t off);

#endif /* WISP_SERVICES_H */
