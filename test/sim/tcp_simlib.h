/**
 * @file tcp_simlib.h
 * TCP simulator harness (host library, no cmocka): bulk-transfer
 * "applications" written against the raw TCP API of wisp/tcp.h only, for
 * the simulator tests (test/sim/test_tcp_*.c) and the throughput table
 * (apps/bench/tcp_table.c).
 *
 *  - Data: every direction of a connection carries a deterministic
 *    pseudo-random byte stream (tsl_stream_fill). The receiver regenerates
 *    it and checks every byte, so a transfer is verified byte-exact without
 *    being stored.
 *  - Sender: writes of a fixed size or of a random size 1..N, copied
 *    (WISP_TCP_WRITE_COPY) or zero-copy (the data then lives in a ring that
 *    is only overwritten once the sent callback has covered it). A write
 *    refused with WISP_ERR_MEM is retried, unchanged, from the sent or the
 *    poll callback. A write larger than WISP_TCP_SND_BUF (which could never
 *    be taken whole) is cut to the free send buffer; the rest follows.
 *  - Receiver: verifies, frees, calls wisp_tcp_recved (or holds the window
 *    closed: hold, or refuses the data: refuse), records arrival times for
 *    goodput in virtual time.
 *  - Both directions at once, then a close handshake (half-close with
 *    wisp_tcp_shutdown when both directions carry data, plain close
 *    otherwise; or none, the test closes).
 *  - Watchdog: a connection that makes no progress (bytes verified, bytes
 *    acknowledged, state change) for watchdog_ms of virtual time fails as
 *    stalled.
 *  - Segment tools: parse the TCP segments seen by the sim tap, keep a log
 *    of them, build crafted Ethernet/IPv4/TCP frames and inject them from a
 *    node (an attacker or a replay).
 *
 * Failures never abort: they are recorded in the connection (failed, why)
 * and the run stops; tests assert on them.
 *
 * Who may call: the simulator's thread (the core context of every stack).
 */
#ifndef WISP_TCP_SIMLIB_H
#define WISP_TCP_SIMLIB_H

#include <stdio.h>
#include "simwire.h"
#include "wisp/wisp.h"
#include "wisp/tcp.h"

/* ------------------------------------------------------ byte streams */

/** Fill dst with bytes [off, off + len) of the stream of seed. */
void tsl_stream_fill(uint64_t seed, uint64_t off, uint8_t *dst, size_t len);
/** Compare src with bytes [off, off + len) of the stream of seed; returns
 *  the index of the first differing byte, or len when all match. */
size_t tsl_stream_check(uint64_t seed, uint64_t off, const uint8_t *src, size_t len);

/* ---------------------------------------------------- configuration */

/** One direction of a transfer. */
struct tsl_dir_cfg {
    uint64_t bytes;           /**< bytes to send (0 = none) */
    uint32_t wsize;           /**< write size, or the maximum when wrandom (default 1460) */
    bool wrandom;             /**< writes of uniformly random size 1..wsize */
    bool nocopy;              /**< zero-copy writes (no WISP_TCP_WRITE_COPY) */
    bool more;                /**< WISP_TCP_WRITE_MORE on writes followed by another */
    /** Paced application (0 = off: write as much as the stack takes): at
     *  most one write per application turn, one turn every pace_us of
     *  virtual time (an application loop that produces one write of wsize
     *  bytes per turn; a refused or cut write is retried at the next
     *  turn, never from a callback). tsl_run_until_done then advances the
     *  world in steps of the smallest pace_us and runs the turns between
     *  the steps. */
    uint32_t pace_us;
};

enum tsl_close_mode {
    TSL_CLOSE_AUTO = 0,       /**< SHUTDOWN when both directions carry data, else PLAIN */
    TSL_CLOSE_SHUTDOWN,       /**< shutdown(tx) once all is written; close once the peer's stream and FIN are in */
    TSL_CLOSE_PLAIN,          /**< close once all is written and (nothing is expected or the peer's FIN is in) */
    TSL_CLOSE_NONE            /**< the test closes; done = all received and all acknowledged */
};

struct tsl_cfg {
    struct tsl_dir_cfg a2b, b2a;
    uint64_t seed;            /**< streams and random write sizes */
    uint8_t close_mode;       /**< enum tsl_close_mode */
    bool nodelay;             /**< disable Nagle on both ends */
    uint32_t watchdog_ms;     /**< stall limit, 0 = 30000 */
    /** Congestion control of both ends (wisp_tcp_set_cc): TSL_CC_RENO or
     *  TSL_CC_CUBIC; 0 = the environment variable TSL_CC ("reno",
     *  "cubic"; the TCP simulator suite runs once per algorithm), else the
     *  stack's default. */
    uint8_t cc;
    /** Cheap pattern (for benchmarks): the stream of an endpoint is a
     *  pre-filled buffer of TSL_CHEAP_PRIME pseudo-random bytes repeated
     *  (byte at offset o = buf[o mod TSL_CHEAP_PRIME]); the sender writes
     *  straight from the buffer and the receiver checks with one memcmp per
     *  pbuf, so the harness costs (almost) nothing per byte. Writes are cut
     *  to TSL_CHEAP_SPAN bytes. Still verified byte-exact (a prime period
     *  never lines up with segment or buffer sizes). */
    bool cheap;
};
#define TSL_CHEAP_PRIME 65521u /* largest prime below 2^16 */
#define TSL_CHEAP_SPAN 65536u  /* longest write / pbuf compared at once */
#define TSL_CC_RENO (WISP_TCP_CC_NEWRENO + 1u)
#define TSL_CC_CUBIC (WISP_TCP_CC_CUBIC + 1u)

/* --------------------------------------------------------- endpoints */

struct tsl_conn;
struct tsl_run;

/** One end of a connection: A (side 0, the client) or B (side 1). */
struct tsl_ep {
    struct tsl_conn *c;
    unsigned side;
    struct sim_node *node;
    struct wisp_tcp_pcb *pcb;  /**< NULL once closed, aborted or freed by the stack */

    /* sending */
    struct tsl_dir_cfg tx;
    uint64_t tx_seed;
    uint64_t tx_written;       /**< bytes accepted by wisp_tcp_write */
    uint64_t tx_acked;         /**< bytes reported by the sent callback */
    uint32_t tx_chunk;         /**< size of the write being attempted, 0 = draw a new one */
    struct sim_rng wrng;
    uint8_t *buf;              /**< copy mode: scratch; zero-copy mode: the ring */
    uint8_t *cheap_tx, *cheap_rx; /**< cfg.cheap: the two streams' buffers (TSL_CHEAP_PRIME + TSL_CHEAP_SPAN) */
    uint64_t next_turn_us;     /**< tx.pace_us: virtual time of the next application turn */
    bool turn;                 /**< tx.pace_us: the application's turn is running (tsl_run_until_done) */
    uint32_t buf_size;
    uint64_t tx_start_us;      /**< first write */
    unsigned long writes, write_mem;   /**< writes accepted / refused with WISP_ERR_MEM */
    bool shut_tx;              /**< shutdown(tx) done */

    /* receiving */
    uint64_t rx_seed, rx_expect, rx_got;
    uint64_t rx_first_us, rx_last_us;
    unsigned long rx_calls;
    bool rx_fin;
    bool hold;                 /**< take data but do not call wisp_tcp_recved */
    uint64_t held;             /**< bytes taken and not yet given back */
    bool refuse;               /**< the recv callback refuses data (returns WISP_ERR_MEM) */
    unsigned long refused;

    /* life cycle */
    bool connected;            /**< connected / accepted */
    uint64_t est_us;
    bool closed;               /**< wisp_tcp_close (or abort) done */
    bool close_pending;        /**< close / shutdown refused with WISP_ERR_MEM, retried */
    bool err_called;
    wisp_err_t err;            /**< argument of the error callback */
    uint64_t err_us;
    bool expect_err;           /**< an error callback is not a failure */
    bool aborting;
    struct wisp_tcp_info info; /**< snapshot taken just before close / at the end */
};

struct tsl_conn {
    struct tsl_run *run;
    unsigned id;
    struct tsl_cfg cfg;
    struct tsl_ep ep[2];
    uint16_t a_port;           /**< A's local port (matches the accept) */
    uint64_t start_us, done_us, last_progress_us;
    bool done, failed;
    char why[200];
};

/** A set of connections in one world, with at most one listener. */
struct tsl_run {
    struct sim_world *w;
    struct tsl_conn **conns;
    unsigned nconns, cap;
    unsigned ndone, nfailed;
    struct wisp_tcp_pcb *lpcb; /**< the listener (on srv) */
    struct sim_node *srv;
    uint16_t port;
    unsigned accepted;         /**< connections accepted and matched */
    unsigned unexpected;       /**< accepted connections that matched nothing (refused) */
    uint64_t last_scan_us;
    bool stop_on_fail;         /**< tsl_run_until_done stops at the first failure (default true) */
    bool quiet;                /**< no messages on stderr */
};

/** Start an empty run in world w. */
void tsl_init(struct tsl_run *r, struct sim_world *w);
/** Abort every connection still open, close the listener, free memory. */
void tsl_fini(struct tsl_run *r);

/** Listen on node:port (backlog 1..255). */
wisp_err_t tsl_listen(struct tsl_run *r, struct sim_node *node, uint16_t port, uint8_t backlog);
/** Close the listener (no-op when none). */
void tsl_unlisten(struct tsl_run *r);

/** A connection from client to the listener, transferring per cfg. NULL
 *  when wisp_tcp_new / connect failed at once (the conn is then failed
 *  and kept in r). */
struct tsl_conn *tsl_connect(struct tsl_run *r, struct sim_node *client, const struct tsl_cfg *cfg);
/** A connection object without PCBs (for tsl_ep_open). */
struct tsl_conn *tsl_conn_new(struct tsl_run *r, const struct tsl_cfg *cfg);
/** Open side (0 = A, 1 = B) of c actively from node, bound to local_port,
 *  connecting to ip:port (simultaneous open: both sides do this). */
wisp_err_t tsl_ep_open(struct tsl_conn *c, unsigned side, struct sim_node *node, uint16_t local_port,
                       wisp_ip4_t ip, uint16_t port);

/** Push pending data / close of an endpoint (done by the callbacks; tests
 *  call it after changing an endpoint's settings). */
void tsl_ep_kick(struct tsl_ep *ep);
/** Send a2b / b2a more bytes (continuing the streams) on a connection
 *  (TSL_CLOSE_NONE), which is no longer done until they are in. */
void tsl_conn_more(struct tsl_conn *c, uint64_t a2b, uint64_t b2a);
/** Stop holding: give the held bytes back with wisp_tcp_recved. */
void tsl_ep_release(struct tsl_ep *ep);
/** Close the endpoint now (returns wisp_tcp_close's result). */
wisp_err_t tsl_ep_close(struct tsl_ep *ep);
/** Abort the endpoint (its error callback is expected). */
void tsl_ep_abort(struct tsl_ep *ep);

/** Mark c failed with a printf-style reason (first reason wins). */
void tsl_fail(struct tsl_conn *c, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

/** The sim_run_until predicate: every connection done or failed (or, with
 *  stop_on_fail, any failed). Also runs the watchdog. */
bool tsl_all_done(void *run);
/** Run until tsl_all_done or max_us; true when every connection is done
 *  and none failed (a sim error counts as a failure). */
bool tsl_run_until_done(struct tsl_run *r, uint64_t max_us);

/** Goodput of direction dir (0 = A to B, 1 = B to A) in Mbit/s of virtual
 *  time: bytes * 8 / (last byte in - first write). 0 when nothing moved. */
double tsl_goodput_mbps(const struct tsl_conn *c, unsigned dir);
/** Print a connection's state (diagnostics). */
void tsl_conn_print(const struct tsl_conn *c, FILE *f);
/** Print every failed connection (diagnostics). */
void tsl_run_print_failures(const struct tsl_run *r, FILE *f);

/* ---------------------------------------------------- one-shot run */

/** Outcome of tsl_xfer. */
struct tsl_result {
    bool ok;                   /**< every byte verified, closed, no failure */
    bool settled;              /**< pools back at baseline after the close */
    unsigned leaked;           /**< sim_world_free's result */
    double mbps[2];            /**< goodput A->B, B->A */
    uint64_t end_us;           /**< virtual time when the transfer was done */
    uint64_t events;           /**< simulator events */
    struct wisp_tcp_info info[2];  /**< A's and B's info just before close */
    unsigned long write_mem[2];
    struct sim_counters wire;
    /** TCP segments that carried data, sent by A / by B (retransmissions
     *  included), and their payload bytes: the mean segment size shows how
     *  writes were packed. */
    uint64_t data_segs[2], data_bytes[2];
    char why[200];             /**< failure reason ("" when ok) */
};

/** A whole transfer in a fresh world of seed wseed: node "a" 198.18.0.1
 *  connects to node "b" 198.18.0.2 port 5001 over link, transfers per cfg
 *  within max_us, settles the pools (2 MSL + 60 s at most), frees the world.
 *  pcap_path: capture the wire there (NULL: none). Failure details go to
 *  stderr unless quiet. Returns res->ok && res->settled && !res->leaked. */
bool tsl_xfer(uint64_t wseed, const struct sim_link_cfg *link, const struct tsl_cfg *cfg, uint64_t max_us,
              const char *pcap_path, bool quiet, struct tsl_result *res);

/* ------------------------------------------------------------- pools */

/** Pool elements in use in node i of w (i in order of addition). */
unsigned tsl_pools_used(const struct sim_world *w, unsigned i);
/** Record every node's pool use into base[] (sized for the node count). */
void tsl_baseline(const struct sim_world *w, unsigned *base);
/** Run until every node's pool use is at most base[i] (TIME-WAIT expired,
 *  closing connections finished); false after max_us, with the excess
 *  printed to f (when not NULL). */
bool tsl_settle(struct sim_world *w, const unsigned *base, uint64_t max_us, FILE *f);

/* ---------------------------------------------------------- counters */

/** Counter `name` (wisp_counter_name) of s; aborts when there is none. */
unsigned long tsl_ctr(const struct wisp_stack *s, const char *name);
/** Print "  label: <name> <value> ...; rx blocks high h/n, tx blocks
 *  high h/n" for the n counters named in want, to stdout. */
void tsl_print_ctrs(const char *label, const struct wisp_stack *s, const char *const *want, unsigned n);

/* ----------------------------------------------------- segment tools */

#define TSL_FIN WISP_TCP_FLAG_FIN
#define TSL_SYN WISP_TCP_FLAG_SYN
#define TSL_RST WISP_TCP_FLAG_RST
#define TSL_PSH WISP_TCP_FLAG_PSH
#define TSL_ACK WISP_TCP_FLAG_ACK
#define TSL_URG WISP_TCP_FLAG_URG

/** A TCP segment as seen on the wire (host order). */
struct tsl_seg {
    uint8_t smac[6], dmac[6];
    wisp_ip4_t src, dst;      /**< network order */
    uint16_t sport, dport;
    uint32_t seq, ack;
    uint8_t flags;            /**< TSL_* */
    uint16_t wnd;             /**< raw window field */
    uint8_t hlen;             /**< TCP header bytes */
    uint16_t plen;            /**< payload bytes */
    /* options (parse only) */
    int wscale;               /**< -1 when absent */
    uint16_t mss;             /**< 0 when absent */
    bool sack_perm, ts;
    uint32_t tsval, tsecr;
    uint8_t nsack;            /**< SACK blocks */
    bool csum_ok;             /**< TCP checksum verified */
};

/** Parse an Ethernet/IPv4/TCP frame (unfragmented); false when it is not
 *  one or is truncated. */
bool tsl_parse(const uint8_t *frame, size_t len, struct tsl_seg *seg);

/** Build an Ethernet/IPv4/TCP frame from seg's addresses, ports, seq, ack,
 *  flags and wnd, with optlen (multiple of 4, <= 40) option bytes and plen
 *  payload bytes, checksums filled. Returns the frame length (0 when cap is
 *  too small). */
size_t tsl_build(uint8_t *buf, size_t cap, const struct tsl_seg *seg, const uint8_t *opts, uint8_t optlen,
                 const uint8_t *payload, uint16_t plen);

/** Transmit a complete frame from node's interface (through its transmit
 *  queues and the wire like any other frame). */
bool tsl_inject(struct sim_node *from, const uint8_t *frame, size_t len);

/** One logged segment. */
struct tsl_logent {
    uint64_t t_us;
    struct sim_node *from;
    struct tsl_seg seg;
};

/** A log of the TCP segments entering the wire (a sim tap). */
struct tsl_log {
    struct tsl_logent *e;
    size_t n, cap;
    bool payload_too;          /**< false: skip segments that carry data (big transfers) */
};

/** The tap function: install with sim_set_tap(w, tsl_log_tap, log). */
void tsl_log_tap(void *arg, struct sim_node *from, const uint8_t *frame, size_t len, uint64_t t_us);
void tsl_log_clear(struct tsl_log *log);
void tsl_log_free(struct tsl_log *log);
/** Print entries [from, log->n) (diagnostics). */
void tsl_log_print(const struct tsl_log *log, size_t from, FILE *f);

#endif /* WISP_TCP_SIMLIB_H */
