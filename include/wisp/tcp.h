/**
 * @file tcp.h
 * TCP (RFC 9293) and its raw callback API.
 *
 * Reading list (the rules implemented, cited at the implementing lines):
 * RFC 9293 (TCP), RFC 1122 §4.2 (host requirements), RFC 5681 (congestion
 * control), RFC 6582 (NewReno), RFC 9438 (CUBIC), RFC 2018 + RFC 6675 (SACK and SACK-based
 * recovery), RFC 2883 (D-SACK, receive side), RFC 3042 (limited transmit), RFC 6298 (RTO), RFC 7323 (window
 * scaling, timestamps, PAWS), RFC 6691 (MSS), RFC 6928 (initial window),
 * RFC 5961 (blind-attack mitigations), RFC 6528 (ISN), RFC 6056 (ephemeral
 * ports), RFC 4987 (SYN cookies), RFC 896 (Nagle), RFC 1122 §4.2.3.4
 * (Nagle / delayed ACK interplay).
 *
 * The raw API runs in the core context (the thread that owns the stack);
 * every raw API function but the pure ones (state and algorithm names)
 * checks that (WISP_CORE_ASSERT_OWNER, debug builds of a stack run by a
 * stack thread; tools/owner-check-lint.py keeps it so). Every callback is called from the
 * core context too, from inside wisp_dev_input() or wisp_stack_poll() or a
 * raw API call; a callback may call raw API functions on its own PCB
 * (write, output, recved, close, shutdown, abort — after abort it must
 * return WISP_ERR_ABRT). Callbacks run only once the segment that causes
 * them has been taken into account as a whole (e.g. the sent callback sees
 * SND.UNA, the send window and the congestion state of its ACK), and
 * output asked for from inside them (wisp_tcp_output, close, shutdown,
 * recved) is sent when the stack has finished with that segment or timer.
 *
 * Buffer budgets: the receive window a connection announces never
 * promises more than the free receive blocks (WISP_PBUF_RX_COUNT) can hold
 * in full-size segments, less a reserve kept for ACKs and control
 * segments, nor more than the connection's fair share of the receive
 * blocks (counting what its application holds: received, not yet given
 * back with wisp_tcp_recved); an announced right edge is never taken back.
 * Data the stack keeps (refused by the application, out of order) holds
 * blocks by its bytes, not by its segments: a segment shorter than a
 * full-size one is copied into the free room of the block before it, so
 * 1-byte segments at full window fit the blocks the window counted
 * (counter tcp.rx.coalesce; full-size segments are never copied). An
 * application that queues received pbufs itself should refuse short ones
 * beyond a few (wisp_tcp_rx_short), as netconn does.
 * Writes never take the last transmit blocks (a reserve for ACK and RST
 * headers), and each connection's copies of written data stay within its
 * share of the transmit blocks (a guaranteed minimum, a progress reserve,
 * a fair share: opt.h, WISP_TCP_SND_MIN_BLOCKS): a write beyond it is
 * refused with WISP_ERR_MEM, like one the pool cannot take. A peer that
 * keeps its window closed is given up on after WISP_TCP_PERSIST_TIMEOUT_MS
 * when it stops answering, or while its blocks are short for others. So
 * blocks held by applications cannot keep the stack from receiving the
 * ACKs that free its transmit blocks.
 *
 * Ownership: a PCB given to the application (wisp_tcp_new, the accept
 * callback) stays valid until the application calls wisp_tcp_close() (then
 * the stack frees it when the connection is done; no more callbacks after
 * close) or wisp_tcp_abort(), or until the error callback
 * reports that the stack freed it (reset, retries exhausted, ...).
 *
 * A callback may also free its own PCB (abort, or close with refused data
 * pending): the stack defers the free until the callback returns and then
 * touches the PCB no more.
 *
 * Who may call: the core context only.
 */
#ifndef WISP_TCP_H
#define WISP_TCP_H

#include "wisp/ip4.h"
#include "wisp/timer.h"
#include "wisp/prot/tcp.h" /* the header layout: WISP_TCP_HLEN, WISP_TCP_FLAG_*, WISP_TCP_OPT_* ... */

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
 *  or the peer closed its direction (p == NULL, once, after all data).
 *  Return WISP_OK when p was taken. Any other return leaves p with the
 *  stack, which offers it again later (refused data, retried every 20 ms;
 *  the window stays closed by it meanwhile; data arriving meanwhile is
 *  queued behind it, in order, as chains of at most 65535 bytes each --
 *  everything within the window is kept). The receive window reopens only
 *  when the application calls wisp_tcp_recved(). Without a recv callback
 *  data is consumed and the window reopened by the stack. */
typedef wisp_err_t (*wisp_tcp_recv_fn)(void *arg, struct wisp_tcp_pcb *pcb, struct wisp_pbuf *p, wisp_err_t err);
/** len more bytes of written data were acknowledged (send buffer space). */
typedef wisp_err_t (*wisp_tcp_sent_fn)(void *arg, struct wisp_tcp_pcb *pcb, uint32_t len);
/** A connection initiated by wisp_tcp_connect is established (err OK). */
typedef wisp_err_t (*wisp_tcp_connected_fn)(void *arg, struct wisp_tcp_pcb *pcb, wisp_err_t err);
/** A listener accepted newpcb (ESTABLISHED). Return WISP_OK to keep it;
 *  any other value aborts it (and the callee must not touch it again). */
typedef wisp_err_t (*wisp_tcp_accept_fn)(void *arg, struct wisp_tcp_pcb *newpcb, wisp_err_t err);
/** Asked (with the listener's arg) before a listener creates a connection:
 *  true when the application can take one more now (room in its accept
 *  queue). While false, the handshake's final ACK is dropped and the
 *  embryo stays in the SYN queue (its SYN-ACK retransmissions, or the
 *  peer's retransmitted ACK or data, complete it once there is room), a
 *  cookie ACK is dropped likewise and new SYNs are dropped (the peer
 *  retransmits them); each drop counts tcp.listen.full. No RST. */
typedef bool (*wisp_tcp_accept_ready_fn)(void *arg);
/** The PCB is gone (already freed): err says why: WISP_ERR_RST (reset by
 *  the peer, incl. a refused connect), WISP_ERR_ABRT (wisp_tcp_abort, or
 *  keepalive probes unanswered), WISP_ERR_TIMEOUT (connect: SYN
 *  retransmissions exhausted -- WISP_ERR_HOSTUNREACH / WISP_ERR_NETUNREACH
 *  instead when ICMP errors came for the SYNs, and WISP_ERR_RST at once
 *  for an ICMP port / protocol unreachable; data: WISP_TCP_MAXRTX retransmissions or
 *  zero-window probes unanswered -- a RST is sent), WISP_ERR_CLSD (both
 *  directions closed normally while the application still held the PCB,
 *  i.e. it used wisp_tcp_shutdown and never wisp_tcp_close). Not called
 *  after wisp_tcp_close. */
typedef void (*wisp_tcp_err_fn)(void *arg, wisp_err_t err);
/** Called every interval (units of WISP_TCP_POLL_UNIT_MS) while the PCB
 *  lives: for retrying writes that failed with WISP_ERR_MEM, idle checks.
 *  After a write failed for want of buffers (transmit blocks, segments,
 *  references), it is also called soon (about 10 ms) after other
 *  connections' acknowledged data gave buffers back. */
typedef wisp_err_t (*wisp_tcp_poll_fn)(void *arg, struct wisp_tcp_pcb *pcb);

/* --------------------------------------------------------- write flags */

#define WISP_TCP_WRITE_COPY 0x01u   /**< copy the data (else: reference it, zero-copy,
                                         the caller keeps it unchanged until acknowledged,
                                         i.e. until the sent callback has covered it) */
#define WISP_TCP_WRITE_MORE 0x02u   /**< more data follows: no PSH, and a short last
                                         segment waits while data is unacknowledged
                                         (even with Nagle off) */

/* ------------------------------------------------------------- raw API */

/** A new PCB in CLOSED state, or NULL when the pool is empty. */
struct wisp_tcp_pcb *wisp_tcp_new(struct wisp_stack *s);
/** The argument passed to every callback. */
void wisp_tcp_arg(struct wisp_tcp_pcb *pcb, void *arg);
/** Bind to a local address (NULL/any = all) and port (0 = random ephemeral,
 *  RFC 6056). WISP_ERR_USE when a listener, a bound PCB or a connection the
 *  application holds uses the port (no SO_REUSEADDR yet: a port held only
 *  by TIME-WAIT records or by connections the application closed can be
 *  rebound, like SO_REUSEADDR on Linux). WISP_ERR_VAL for an address that
 *  is not ours. */
wisp_err_t wisp_tcp_bind(struct wisp_tcp_pcb *pcb, const wisp_ipaddr_t *ip, uint16_t port);
/** Turn a bound PCB into a listener with an accept backlog (1..255; 0 is
 *  taken as 1). Returns the listening PCB (a different, smaller object:
 *  the PCB passed in is freed, as with lwIP's tcp_listen) or NULL with
 *  *err set (the PCB passed in is then kept). Accept is a callback, so the
 *  backlog bounds the listener's embryonic connections (SYN received,
 *  SYN-ACK sent) in the shared SYN queue; SYNs beyond it are answered with
 *  SYN cookies (RFC 4987). An unbound PCB gets an ephemeral port. */
struct wisp_tcp_pcb *wisp_tcp_listen(struct wisp_tcp_pcb *pcb, uint8_t backlog, wisp_err_t *err);
/** Set the accept callback of a listener. */
void wisp_tcp_accept(struct wisp_tcp_pcb *lpcb, wisp_tcp_accept_fn fn);
/** Set (NULL: clear; then there is always room) a listener's accept
 *  queue gate (wisp_tcp_accept_ready_fn). */
void wisp_tcp_accept_ready(struct wisp_tcp_pcb *lpcb, wisp_tcp_accept_ready_fn fn);
/** Connect (binds an ephemeral port if unbound); the connected callback
 *  reports the outcome; failures come through the error callback.
 *  WISP_ERR_USE when the 4-tuple is in use (also by a TIME-WAIT record),
 *  WISP_ERR_RTE without a route, WISP_ERR_VAL for broadcast/multicast. */
wisp_err_t wisp_tcp_connect(struct wisp_tcp_pcb *pcb, const wisp_ipaddr_t *ip, uint16_t port,
                            wisp_tcp_connected_fn fn);

/** Queue len bytes for sending (flags WISP_TCP_WRITE_*). Small writes are
 *  coalesced into full segments. WISP_ERR_MEM when the write may fit later
 *  but not now: the send buffer, the segment pool or the transmit blocks
 *  (copies never take the last ones, kept for ACK headers) are in use
 *  (nothing queued: retry from the sent or poll callback). WISP_ERR_VAL
 *  when it can never be taken whole: len above WISP_TCP_SND_BUF, or more
 *  segments (WISP_TCP_SEG_COUNT) or, with WISP_TCP_WRITE_COPY, more
 *  transmit blocks than the stack has (nothing queued: split the write).
 *  WISP_ERR_CONN when the PCB cannot send. The data goes out on
 *  wisp_tcp_output() or at the latest when the stack next runs. */
wisp_err_t wisp_tcp_write(struct wisp_tcp_pcb *pcb, const void *data, uint32_t len, uint8_t flags);
/** Send what the windows, Nagle and congestion control allow, now (from a
 *  callback of this PCB: once the stack has finished the segment or timer
 *  that called it). */
wisp_err_t wisp_tcp_output(struct wisp_tcp_pcb *pcb);
/** Free bytes in the send buffer. */
uint32_t wisp_tcp_sndbuf(const struct wisp_tcp_pcb *pcb);

void wisp_tcp_recv(struct wisp_tcp_pcb *pcb, wisp_tcp_recv_fn fn);
/** The application consumed len bytes: reopen the receive window (with
 *  receiver-side silly window avoidance, RFC 9293 §3.8.6.2.2). */
void wisp_tcp_recved(struct wisp_tcp_pcb *pcb, uint32_t len);
/** The application can take data again (e.g. its receive queue has room
 *  now): offer the data it refused (and a FIN held behind it) at once,
 *  instead of at the next 20 ms retry. Does nothing when nothing was
 *  refused (cheap to call). From a callback of this PCB the offer is made
 *  once the stack has finished that segment or timer. Core context. */
void wisp_tcp_recv_retry(struct wisp_tcp_pcb *pcb);
/** True when p (data the recv callback got) holds fewer bytes than its
 *  receive blocks hold in full-size segments, which is what the window
 *  counted them for (a short segment alone in its block). An application
 *  that queues received pbufs (netconn's mailbox) should keep only a few
 *  such ones and refuse the rest (WISP_ERR_MEM): the stack keeps refused
 *  data with short segments copied together into shared blocks, so the
 *  window it announced stays within the receive blocks (issue 12). Core
 *  context. */
bool wisp_tcp_rx_short(const struct wisp_tcp_pcb *pcb, const struct wisp_pbuf *p);
void wisp_tcp_sent(struct wisp_tcp_pcb *pcb, wisp_tcp_sent_fn fn);
void wisp_tcp_err(struct wisp_tcp_pcb *pcb, wisp_tcp_err_fn fn);
void wisp_tcp_poll(struct wisp_tcp_pcb *pcb, wisp_tcp_poll_fn fn, uint8_t interval);

/** Close both directions (sends FIN after queued data). The PCB must not be
 *  used afterwards; the stack frees it when the close completes (or at
 *  once in LISTEN/CLOSED/SYN-SENT); no callback is called after close.
 *  Received data the application refused and new data arriving after close
 *  are answered with RST (RFC 1122 §4.2.2.13). A closed connection whose
 *  peer never sends its FIN is dropped 2 * WISP_TCP_MSL_MS after entering
 *  FIN-WAIT-2. WISP_ERR_MEM when the FIN cannot be queued now (retry). */
wisp_err_t wisp_tcp_close(struct wisp_tcp_pcb *pcb);
/** Half-close: shut_rx stops delivery, shut_tx sends FIN after queued data
 *  (the PCB stays usable for receiving). */
wisp_err_t wisp_tcp_shutdown(struct wisp_tcp_pcb *pcb, bool shut_rx, bool shut_tx);
/** Send RST (when synchronized) and free the PCB at once; the error
 *  callback is called with WISP_ERR_ABRT. */
void wisp_tcp_abort(struct wisp_tcp_pcb *pcb);

/** Nagle on/off (RFC 896; off = TCP_NODELAY). Nagle is on by default, in
 *  Minshall's variant: a short segment waits only while an earlier short
 *  segment is unacknowledged. */
void wisp_tcp_nodelay(struct wisp_tcp_pcb *pcb, bool on);
/** Keepalive (RFC 9293 §3.8.4): enable, idle time, interval, probe count
 *  (0 = keep the current value). */
void wisp_tcp_keepalive(struct wisp_tcp_pcb *pcb, bool enable, uint32_t idle_ms, uint32_t intvl_ms, uint32_t cnt);
/** DSCP (0..63) of the connection's segments; DSCP >= WISP_EMERG_DSCP_MIN
 *  selects the emergency transmit queue. */
void wisp_tcp_set_dscp(struct wisp_tcp_pcb *pcb, uint8_t dscp);
/** TTL of the connection's segments (0 = default). */
void wisp_tcp_set_ttl(struct wisp_tcp_pcb *pcb, uint8_t ttl);

/** Per-connection buffer bounds (SO_SNDBUF / SO_RCVBUF), bytes; 0 leaves
 *  one unchanged. sndbuf bounds the bytes written and not yet acknowledged
 *  (wisp_tcp_sndbuf reports what is left; a write above it is WISP_ERR_VAL,
 *  one above what is left WISP_ERR_MEM); rcvbuf bounds the receive window
 *  (data received and not yet consumed with wisp_tcp_recved). Clamped to
 *  WISP_TCP_MSS .. WISP_TCP_SND_BUF / WISP_TCP_WND (the defaults). Set
 *  before connect, rcvbuf also bounds the window of the SYN; later, the
 *  window shrinks as data arrives (RFC 9293 §3.8.6: the right edge
 *  already announced is never moved left). */
void wisp_tcp_set_bufs(struct wisp_tcp_pcb *pcb, uint32_t sndbuf, uint32_t rcvbuf);
/** Send-buffer bound (wisp_tcp_set_bufs). */
uint32_t wisp_tcp_sndbuf_size(const struct wisp_tcp_pcb *pcb);
/** Upper bound of the MSS (TCP_MAXSEG; 0 = none): set before connect it
 *  caps the MSS option of our SYN and the send MSS; on a synchronized
 *  connection with nothing queued yet (e.g. just accepted) it lowers the
 *  send MSS. */
void wisp_tcp_set_user_mss(struct wisp_tcp_pcb *pcb, uint16_t mss);

/** Congestion control algorithms (opt.h WISP_TCP_CUBIC, WISP_TCP_CC_DEFAULT). */
enum wisp_tcp_cc {
    WISP_TCP_CC_NEWRENO = 0,  /**< RFC 5681 + RFC 6582 (+ RFC 6675 with SACK) */
    WISP_TCP_CC_CUBIC = 1     /**< RFC 9438 */
};
/** Choose the congestion control of a connection (any state; on a
 *  synchronized connection the new algorithm starts from the current cwnd
 *  and ssthresh; on a listener: of the connections it accepts, which
 *  otherwise take the listener's algorithm at wisp_tcp_listen time, i.e.
 *  WISP_TCP_CC_DEFAULT unless set before). WISP_ERR_VAL when the
 *  algorithm is not compiled in. */
wisp_err_t wisp_tcp_set_cc(struct wisp_tcp_pcb *pcb, unsigned algo);
/** The connection's algorithm (enum wisp_tcp_cc). */
unsigned wisp_tcp_get_cc(const struct wisp_tcp_pcb *pcb);
/** Name of an algorithm as Linux's TCP_CONGESTION spells it ("reno",
 *  "cubic"), NULL for an unknown one; and the reverse (-1 = unknown). */
const char *wisp_tcp_cc_name(unsigned algo);
int wisp_tcp_cc_by_name(const char *name);

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
    uint32_t snd_blocks;      /**< transmit blocks holding its queued copies (transmit budget) */
    uint32_t unacked_segs;    /**< segments in flight (sent, not acknowledged) */
    uint8_t rtx_backoff;      /**< consecutive RTO retransmissions of the oldest segment */
    uint8_t cc;               /**< congestion control, enum wisp_tcp_cc */
    uint32_t snd_buf, rcv_buf; /**< the connection's buffer bounds (wisp_tcp_set_bufs), bytes */
};
void wisp_tcp_get_info(const struct wisp_tcp_pcb *pcb, struct wisp_tcp_info *info);

struct wisp_icmp_err;

/** Input of a segment (IP header hidden; consumes p). */
void wisp_tcp_input(struct wisp_stack *s, struct wisp_pbuf *p, const struct wisp_ip_info *ip);


/* ------------------------------------------------- structures (internal)
 * The structures below are owned by the TCP implementation (src/core/
 * tcp*.c); they are public only so that struct wisp_stack can hold their
 * storage. Applications use the functions above. */

/* TCP_STRUCTS_BEGIN (defined by the TCP implementation) */

struct wisp_tcp_seg;

struct wisp_tcp_common;

struct wisp_tcp_listen;

struct wisp_tcp_ooseq;

#define WISP_TCP_NTMR 8           /**< per-connection deadlines (tcp_priv.h TCP_TMR_*) */
#define WISP_TCP_NTMR_SLOTS 6     /**< their storage: mates share a slot (tcp_priv.h TCP_TMR_SLOT) */
#define WISP_TCP_OOSEQ_SLOTS (WISP_TCP_OOSEQ_MAX_PBUFS > 0 ? WISP_TCP_OOSEQ_MAX_PBUFS : 1)
/** Chains of refused data (each at most 65535 bytes, pbuf tot_len): at
 *  most a window of data is refused (the receive buffer is at most
 *  WISP_TCP_WND), so one chain holds it when WISP_TCP_WND fits a chain;
 *  else every chain but the last holds more than 32 KB (received
 *  segments are far smaller). */
#define WISP_TCP_REFUSED_SLOTS ((WISP_TCP_WND) <= 65535 ? 1 : (WISP_TCP_WND) / 32768 + 2)

union wisp_tcp_cc_state;

struct wisp_tcp_pcb;

struct wisp_tcp_tw;

/** Buckets of the hash index of n entries (a power of two, about n / 1
 *  to n / 4, at most 1024). */
#define WISP_TCP_HBUCKETS(n) ((n) >= 4096 ? 1024u : (n) >= 256 ? 256u : (n) >= 64 ? 64u : (n) >= 16 ? 16u : 4u)

struct wisp_tcp_syn;

struct wisp_tcp;

/* TCP_STRUCTS_END */

/* the layout of the structures above (private tier) */
#include "wisp/priv/tcp.h"

#endif /* WISP_TCP_H */
