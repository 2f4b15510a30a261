/**
 * @file tcp.h
 * TCP (RFC 9293) and its raw callback API.
 *
 * Reading list (the rules implemented, cited at the implementing lines):
 * RFC 9293 (TCP), RFC 1122 §4.2 (host requirements), RFC 5681 (congestion
 * control), RFC 6582 (NewReno), RFC 2018 + RFC 6675 (SACK and SACK-based
 * recovery), RFC 3042 (limited transmit), RFC 6298 (RTO), RFC 7323 (window
 * scaling, timestamps, PAWS), RFC 6691 (MSS), RFC 6928 (initial window),
 * RFC 5961 (blind-attack mitigations), RFC 6528 (ISN), RFC 6056 (ephemeral
 * ports), RFC 4987 (SYN cookies), RFC 896 (Nagle), RFC 1122 §4.2.3.4
 * (Nagle / delayed ACK interplay).
 *
 * The raw API runs in the core context (the thread that owns the stack).
 * Every callback is called from the core context too, from inside
 * wisp_dev_input() or wisp_stack_poll() or a raw API call; a callback may
 * call raw API functions on its own PCB (write, output, recved, close,
 * abort — after abort it must return WISP_ERR_ABRT).
 *
 * Ownership: a PCB given to the application (wisp_tcp_new, the accept
 * callback) stays valid until the application calls wisp_tcp_close() (then
 * the stack frees it when the connection is done; no more callbacks after
 * close except none) or wisp_tcp_abort(), or until the error callback
 * reports that the stack freed it (reset, retries exhausted, ...).
 *
 * Who may call: the core context only.
 */
#ifndef WISP_TCP_H
#define WISP_TCP_H

#include "wisp/ip4.h"
#include "wisp/timer.h"

#define WISP_TCP_HLEN 20u

/** RFC 9293 §3.3.2 states. */
enum wisp_tcp_state {
    WISP_TCP_CLOSED = 0,
    WISP_TCP_LISTEN,
    WISP_TCP_SYN_SENT,
    WISP_TCP_SYN_RCVD,
    WISP_TCP_ESTABLISHED,
    WISP_TCP_FIN_WAIT_1,
    WISP_TCP_FIN_WAIT_2,
    WISP_TCP_CLOSE_WAIT,
    WISP_TCP_CLOSING,
    WISP_TCP_LAST_ACK,
    WISP_TCP_TIME_WAIT
};

/** Name of a state ("ESTABLISHED"). */
const char *wisp_tcp_state_str(unsigned state);

struct wisp_tcp_pcb;

/* ----------------------------------------------------------- callbacks */

/** Data arrived (p, owned by the callee: zero-copy, the received pbufs),
 *  or the peer closed its direction (p == NULL). Return WISP_OK when p was
 *  taken. Any other return leaves p with the stack, which offers it again
 *  later (refused data; the window stays closed meanwhile). The receive
 *  window reopens only when the application calls wisp_tcp_recved(). */
typedef wisp_err_t (*wisp_tcp_recv_fn)(void *arg, struct wisp_tcp_pcb *pcb, struct wisp_pbuf *p, wisp_err_t err);
/** len more bytes of written data were acknowledged (send buffer space). */
typedef wisp_err_t (*wisp_tcp_sent_fn)(void *arg, struct wisp_tcp_pcb *pcb, uint32_t len);
/** A connection initiated by wisp_tcp_connect is established (err OK). */
typedef wisp_err_t (*wisp_tcp_connected_fn)(void *arg, struct wisp_tcp_pcb *pcb, wisp_err_t err);
/** A listener accepted newpcb (ESTABLISHED). Return WISP_OK to keep it;
 *  any other value aborts it (and the callee must not touch it again). */
typedef wisp_err_t (*wisp_tcp_accept_fn)(void *arg, struct wisp_tcp_pcb *newpcb, wisp_err_t err);
/** The PCB is gone (already freed): err says why: WISP_ERR_RST (reset by
 *  peer), WISP_ERR_ABRT (aborted: retries exhausted, keepalive failed,
 *  out of memory), WISP_ERR_TIMEOUT (connect / retransmission timeout),
 *  WISP_ERR_CLSD. */
typedef void (*wisp_tcp_err_fn)(void *arg, wisp_err_t err);
/** Called every interval (units of WISP_TCP_POLL_UNIT_MS) while the PCB
 *  lives: for retrying writes that failed with WISP_ERR_MEM, idle checks. */
typedef wisp_err_t (*wisp_tcp_poll_fn)(void *arg, struct wisp_tcp_pcb *pcb);

/* --------------------------------------------------------- write flags */

#define WISP_TCP_WRITE_COPY 0x01u   /**< copy the data (else: reference it, zero-copy,
                                         the caller keeps it unchanged until acknowledged,
                                         i.e. until the sent callback has covered it) */
#define WISP_TCP_WRITE_MORE 0x02u   /**< more data follows: do not set PSH, let Nagle hold */

/* ------------------------------------------------------------- raw API */

/** A new PCB in CLOSED state, or NULL when the pool is empty. */
struct wisp_tcp_pcb *wisp_tcp_new(struct wisp_stack *s);
/** The argument passed to every callback. */
void wisp_tcp_arg(struct wisp_tcp_pcb *pcb, void *arg);
/** Bind to a local address (NULL/any = all) and port (0 = random ephemeral,
 *  RFC 6056). WISP_ERR_USE when taken (no SO_REUSEADDR yet: a port in
 *  TIME-WAIT can be rebound, like SO_REUSEADDR on Linux). */
wisp_err_t wisp_tcp_bind(struct wisp_tcp_pcb *pcb, const wisp_ipaddr_t *ip, uint16_t port);
/** Turn a bound PCB into a listener with an accept backlog (1..255).
 *  Returns the listening PCB (which may be a different, smaller object:
 *  the PCB passed in is then freed, as with lwIP's tcp_listen) or NULL with
 *  *err set. */
struct wisp_tcp_pcb *wisp_tcp_listen(struct wisp_tcp_pcb *pcb, uint8_t backlog, wisp_err_t *err);
/** Set the accept callback of a listener. */
void wisp_tcp_accept(struct wisp_tcp_pcb *lpcb, wisp_tcp_accept_fn fn);
/** Connect (binds an ephemeral port if unbound); the connected callback
 *  reports the outcome; failures come through the error callback. */
wisp_err_t wisp_tcp_connect(struct wisp_tcp_pcb *pcb, const wisp_ipaddr_t *ip, uint16_t port,
                            wisp_tcp_connected_fn fn);

/** Queue len bytes for sending (flags WISP_TCP_WRITE_*). Small writes are
 *  coalesced into full segments. WISP_ERR_MEM when the send buffer or the
 *  segment pool is full (nothing queued: retry from the sent or poll
 *  callback). WISP_ERR_CONN when the PCB cannot send. The data goes out
 *  on wisp_tcp_output() or at the latest when the stack next runs. */
wisp_err_t wisp_tcp_write(struct wisp_tcp_pcb *pcb, const void *data, uint32_t len, uint8_t flags);
/** Send what the windows, Nagle and congestion control allow, now. */
wisp_err_t wisp_tcp_output(struct wisp_tcp_pcb *pcb);
/** Free bytes in the send buffer. */
uint32_t wisp_tcp_sndbuf(const struct wisp_tcp_pcb *pcb);

void wisp_tcp_recv(struct wisp_tcp_pcb *pcb, wisp_tcp_recv_fn fn);
/** The application consumed len bytes: reopen the receive window (with
 *  receiver-side silly window avoidance, RFC 9293 §3.8.6.2.2). */
void wisp_tcp_recved(struct wisp_tcp_pcb *pcb, uint32_t len);
void wisp_tcp_sent(struct wisp_tcp_pcb *pcb, wisp_tcp_sent_fn fn);
void wisp_tcp_err(struct wisp_tcp_pcb *pcb, wisp_tcp_err_fn fn);
void wisp_tcp_poll(struct wisp_tcp_pcb *pcb, wisp_tcp_poll_fn fn, uint8_t interval);

/** Close both directions (sends FIN after queued data). The PCB must not be
 *  used afterwards; the stack frees it when the close completes (or at
 *  once in LISTEN/CLOSED/SYN-SENT). Data arriving after close is answered
 *  with RST (RFC 9293 §3.10.7.4 / RFC 1122 §4.2.2.13). WISP_ERR_MEM when
 *  the FIN cannot be queued now (retry). */
wisp_err_t wisp_tcp_close(struct wisp_tcp_pcb *pcb);
/** Half-close: shut_rx stops delivery, shut_tx sends FIN after queued data
 *  (the PCB stays usable for receiving). */
wisp_err_t wisp_tcp_shutdown(struct wisp_tcp_pcb *pcb, bool shut_rx, bool shut_tx);
/** Send RST (when synchronized) and free the PCB at once; the error
 *  callback is called with WISP_ERR_ABRT. */
void wisp_tcp_abort(struct wisp_tcp_pcb *pcb);

/** Nagle on/off (RFC 896; off = TCP_NODELAY). */
void wisp_tcp_nodelay(struct wisp_tcp_pcb *pcb, bool on);
/** Keepalive (RFC 9293 §3.8.4): enable, idle time, interval, probe count
 *  (0 = keep the current value). */
void wisp_tcp_keepalive(struct wisp_tcp_pcb *pcb, bool enable, uint32_t idle_ms, uint32_t intvl_ms, uint32_t cnt);
/** DSCP (0..63) of the connection's segments; DSCP >= WISP_EMERG_DSCP_MIN
 *  selects the emergency transmit queue. */
void wisp_tcp_set_dscp(struct wisp_tcp_pcb *pcb, uint8_t dscp);
/** TTL of the connection's segments (0 = default). */
void wisp_tcp_set_ttl(struct wisp_tcp_pcb *pcb, uint8_t ttl);

/** Current state (enum wisp_tcp_state). */
unsigned wisp_tcp_state(const struct wisp_tcp_pcb *pcb);
/** Local / remote endpoint. */
void wisp_tcp_local(const struct wisp_tcp_pcb *pcb, wisp_ipaddr_t *ip, uint16_t *port);
void wisp_tcp_remote(const struct wisp_tcp_pcb *pcb, wisp_ipaddr_t *ip, uint16_t *port);

/** Per-connection statistics (for tests, benchmarks, the status page). */
struct wisp_tcp_info {
    uint8_t state;
    uint16_t mss;             /**< effective send MSS */
    uint8_t snd_wscale, rcv_wscale;
    bool ts_ok, sack_ok;
    uint32_t cwnd, ssthresh;  /**< bytes */
    uint32_t srtt_ms, rttvar_ms, rto_ms;
    uint32_t snd_wnd, rcv_wnd;
    uint32_t unacked;         /**< bytes in flight */
    uint32_t retransmits;     /**< segments retransmitted */
    uint32_t fast_recoveries;
    uint32_t timeouts;        /**< RTO expirations */
    uint32_t bytes_acked, bytes_received;
    uint32_t ooseq_pbufs;     /**< buffers in the out-of-order queue */
};
void wisp_tcp_get_info(const struct wisp_tcp_pcb *pcb, struct wisp_tcp_info *info);

/** Input of a segment (IP header hidden; consumes p). */
void wisp_tcp_input(struct wisp_stack *s, struct wisp_pbuf *p, const struct wisp_ip4_info *ip);

/* Internal: stack init / deinit (deinit aborts nothing: the application
 * closes its PCBs; deinit frees TIME-WAIT records and embryonic state). */
void wisp_tcp_init(struct wisp_stack *s);
void wisp_tcp_deinit(struct wisp_stack *s);

/* ------------------------------------------------- structures (internal)
 * The structures below are owned by the TCP implementation (src/core/
 * tcp*.c); they are public only so that struct wisp_stack can hold their
 * storage. Applications use the functions above. */

/* TCP_STRUCTS_BEGIN (defined by the TCP implementation) */
/* TCP_STRUCTS_END */

#endif /* WISP_TCP_H */
