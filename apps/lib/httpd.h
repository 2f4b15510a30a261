/**
 * @file httpd.h
 * A small HTTP/1.1 origin server (RFC 9110 semantics, RFC 9112 message
 * syntax) on the raw (core-context) TCP API: static files from a table
 * compiled into the program (httpd_files.c), a large generated file, and a
 * live status page of the stack (/status as HTML, /status.json).
 *
 * Portable like services.c: no stdio, no allocation; all state lives in
 * the caller's struct wisp_httpd (connections in a fixed array of
 * WISP_HTTPD_MAX_CONNS records), so it runs on bare metal as well.
 *
 * Behaviour:
 *  - GET and HEAD; any other method gets 405 with "Allow: GET, HEAD"
 *    (RFC 9110 §15.5.6). HEAD gets the headers GET would get, no body.
 *  - Persistent connections (RFC 9112 §9.3): HTTP/1.1 stays open unless
 *    the request says "Connection: close"; HTTP/1.0 closes unless it says
 *    "Connection: keep-alive" (answered with "Connection: keep-alive").
 *    Pipelined requests are answered in order, one at a time: the next
 *    request is parsed only once the previous response is queued.
 *  - The request parser (struct wisp_http_parser) is strict and bounded: it
 *    keeps no copy of the request beyond the target (WISP_HTTPD_PATH_MAX),
 *    counts the bytes of the head (WISP_HTTPD_HDR_MAX) and the fields
 *    (WISP_HTTPD_MAX_FIELDS). Errors: 400 (malformed request line or field,
 *    obs-fold, whitespace before the colon, bare CR, control characters, a
 *    1.1 request without Host or with two, Content-Length together with
 *    Transfer-Encoding, a bad Content-Length), 413 (Content-Length above
 *    WISP_HTTPD_BODY_MAX), 414 (target longer than WISP_HTTPD_PATH_MAX),
 *    431 (head or field count over the bounds), 501 (a method name longer
 *    than any we know, any Transfer-Encoding: request bodies are only
 *    accepted with a Content-Length), 505 (major version other than 1).
 *    After an error the connection is closed once the response is sent.
 *  - Request bodies up to WISP_HTTPD_BODY_MAX bytes are read and discarded
 *    (a 405 for a POST keeps the connection usable).
 *  - Errors 404 (unknown path) and 405 keep the connection open.
 *  - Closing: our FIN follows the last response (wisp_tcp_shutdown); what
 *    the client still sends is read and discarded until its FIN or
 *    WISP_HTTPD_LINGER_MS (a lingering close, so that unread request
 *    bytes do not make our stack reset the connection before the client
 *    has read the response, RFC 9112 §9.6).
 *  - Idle timeout: a connection without progress (nothing received,
 *    nothing acknowledged) for idle_ms is closed from the poll callback:
 *    gracefully when it is between requests, with 408 when a request head
 *    is incomplete, with a reset when a response is stuck.
 *  - Request deadline (slowloris, issue 11 #3): a request whose head (and
 *    the body we read and discard) is not complete head_ms after its first
 *    byte gets 408 and the connection is closed, however steadily the
 *    bytes trickle in (the idle timeout alone restarts with every byte).
 *  - Admission: at most max_conns connections (<= WISP_HTTPD_MAX_CONNS),
 *    at most per_source of them from one remote address. When the records
 *    are full (or the address is at its cap), one is reclaimed (reset,
 *    counted as reclaimed) for the new connection, chosen as reclaim.h
 *    says: at the cap, the address's own connection waiting the longest,
 *    at least reclaim_ms; else one waiting at least reclaim_ms or one of
 *    an address holding two connections more than the new one's (fair
 *    share), the biggest holder's first. A connection's wait runs from its
 *    accept or its last queued response (a head arriving byte by byte
 *    does not reset it); a response being sent is taken only when it has
 *    not moved for reclaim_ms. A slowloris or idle connection therefore
 *    cannot keep a working client out. Without a candidate the accept callback declines
 *    (the stack resets the new connection) and the refusal is counted
 *    (refused; capped too when the cap was the reason).
 *  - Sending: file-table bodies are written without copying
 *    (wisp_tcp_write without WISP_TCP_WRITE_COPY: the stack references the
 *    constant data); generated bodies (the 1 MiB /big.bin) are produced in
 *    chunks of WISP_HTTPD_CHUNK bytes into a scratch buffer and copied;
 *    the status pages are rendered once per request into the server's
 *    status buffer (one response at a time uses it; another status request
 *    waits for it). Every write takes only what the send buffer has room
 *    for; the rest follows from the sent callback (flow control), or from
 *    the poll callback after WISP_ERR_MEM. Nothing ever waits inside a
 *    callback.
 *  - No Date header: the server has no clock of the real time (RFC 9110
 *    §6.6.1: an origin server without a reliable clock MUST NOT send one).
 *
 * Who may call: the core context only (every function here).
 */
#ifndef WISP_HTTPD_H
#define WISP_HTTPD_H

#include "wisp/wisp.h"
#include "wisp/tcp.h"

/* ------------------------------------------------------------ options */

/** Connection records of one server (the stack's WISP_TCP_PCB_COUNT bounds
 *  it too). Default: 128 with a PCB pool of 256 or more (the host build:
 *  the default per-source cap of half the records then still lets one
 *  client open 64 connections at once), 64 with 128 or more, else half
 *  the PCB pool (4 with the defaults of opt.h). Each record is about
 *  WISP_HTTPD_PATH_MAX + 250 bytes. */
#ifndef WISP_HTTPD_MAX_CONNS
#if WISP_TCP_PCB_COUNT >= 256
#define WISP_HTTPD_MAX_CONNS 128
#elif WISP_TCP_PCB_COUNT >= 128
#define WISP_HTTPD_MAX_CONNS 64
#else
#define WISP_HTTPD_MAX_CONNS ((WISP_TCP_PCB_COUNT) / 2 > 0 ? (WISP_TCP_PCB_COUNT) / 2 : 1)
#endif
#endif

/** Longest request target kept (bytes); longer ones get 414. Default 128. */
#ifndef WISP_HTTPD_PATH_MAX
#define WISP_HTTPD_PATH_MAX 128
#endif

/** Longest request head (request line and fields, bytes); longer ones get
 *  431. Only counted, never stored. Default 4096. */
#ifndef WISP_HTTPD_HDR_MAX
#define WISP_HTTPD_HDR_MAX 4096
#endif

/** Most header fields per request; more get 431. Default 64. */
#ifndef WISP_HTTPD_MAX_FIELDS
#define WISP_HTTPD_MAX_FIELDS 64
#endif

/** Largest request body read (and discarded); a Content-Length above it
 *  gets 413. Default 4096. */
#ifndef WISP_HTTPD_BODY_MAX
#define WISP_HTTPD_BODY_MAX 4096u
#endif

/** Received bytes a connection holds unparsed (pipelined requests behind a
 *  response being sent); more is refused (the stack keeps it and offers it
 *  again, the window stays closed). At most 65535. Default 8192. */
#ifndef WISP_HTTPD_RXQ_MAX
#define WISP_HTTPD_RXQ_MAX 8192u
#endif

/** Bytes generated and copied per write of a generated body. Default 1460. */
#ifndef WISP_HTTPD_CHUNK
#define WISP_HTTPD_CHUNK 1460u
#endif

/** Size of the status-page buffer (one per server). Default 32 KB with a
 *  large PCB pool (the host build), else 4 KB. A page that does not fit is
 *  cut at a row boundary and says so ("truncated"). */
#ifndef WISP_HTTPD_STATUS_MAX
#if WISP_TCP_PCB_COUNT >= 128
#define WISP_HTTPD_STATUS_MAX 32768u
#else
#define WISP_HTTPD_STATUS_MAX 4096u
#endif
#endif

/** Default idle timeout (ms). */
#ifndef WISP_HTTPD_IDLE_MS
#define WISP_HTTPD_IDLE_MS 10000u
#endif

/** Request deadline (ms): a request head (and the body read with it) must
 *  be complete this long after its first byte, else 408 and close.
 *  Default 10000: a head fits in one or two segments, so even a slow link
 *  takes a few round trips, not seconds; trickling one byte per second
 *  (slowloris) ends after 10 s whatever the idle timeout. Runtime:
 *  wisp_httpd_opts.head_ms. */
#ifndef WISP_HTTPD_HEAD_MS
#define WISP_HTTPD_HEAD_MS 10000u
#endif

/** Least time (ms) a connection has been waiting for a request (since it
 *  was accepted or its last response was queued) before it may be
 *  reclaimed for a new connection when the records are full. Default
 *  1000: a working client sends its request within a round trip of
 *  connecting, so only connections that hold a record without asking
 *  for anything (idle keep-alive, slowloris) are taken. Runtime:
 *  wisp_httpd_opts.reclaim_ms. */
#ifndef WISP_HTTPD_RECLAIM_MS
#define WISP_HTTPD_RECLAIM_MS 1000u
#endif

/** Longest lingering close (ms): after our FIN, how long the client's
 *  remaining data is read before the connection is closed anyway. */
#ifndef WISP_HTTPD_LINGER_MS
#define WISP_HTTPD_LINGER_MS 2000u
#endif

/** Accept backlog of the listener (1..255). Default 16. */
#ifndef WISP_HTTPD_BACKLOG
#define WISP_HTTPD_BACKLOG 16
#endif

/* ------------------------------------------------------------- parser */

/** Request methods the server tells apart. */
enum wisp_http_method { WISP_HTTP_M_NONE = 0, WISP_HTTP_M_GET, WISP_HTTP_M_HEAD, WISP_HTTP_M_OTHER };

/** A parsed request head (what the server needs of it). */
struct wisp_http_req {
    uint8_t method;                     /**< enum wisp_http_method */
    uint8_t ver_major, ver_minor;       /**< HTTP-version digits */
    uint8_t conn_close;                 /**< "close" in Connection */
    uint8_t conn_keepalive;             /**< "keep-alive" in Connection */
    uint8_t hosts;                      /**< Host field lines seen (saturates at 255) */
    uint8_t has_cl;                     /**< Content-Length present */
    uint8_t has_te;                     /**< Transfer-Encoding present */
    uint8_t expect;                     /**< Expect present */
    uint32_t content_length;            /**< valid when has_cl (saturates at UINT32_MAX) */
    uint16_t target_len;                /**< bytes in target */
    char target[WISP_HTTPD_PATH_MAX + 1];   /**< request-target, NUL-terminated */
};

/** Result of wisp_http_parse. */
enum wisp_http_pres {
    WISP_HTTP_MORE = 0,   /**< everything consumed, the head is not complete */
    WISP_HTTP_DONE,       /**< a complete head ends at *used (req is valid) */
    WISP_HTTP_ERROR       /**< malformed / over a bound: status says which */
};

/** Incremental request-head parser (RFC 9112 §2-§5). Byte-at-a-time state
 *  machine: any split of the input gives the same result. */
struct wisp_http_parser {
    uint8_t state;          /**< internal */
    uint8_t field;          /**< internal: field being read */
    uint8_t sub;            /**< internal: position inside a fixed token */
    uint8_t tok_len;        /**< internal */
    uint8_t flags;          /**< internal */
    uint16_t status;        /**< error status (WISP_HTTP_ERROR), else 0 */
    uint16_t fields;        /**< field lines seen */
    uint32_t head_bytes;    /**< bytes of the head so far */
    uint32_t cl_cur;        /**< internal: Content-Length being read */
    char tok[24];           /**< internal: method, field name or token */
    struct wisp_http_req req;
};

/** Start parsing a new request. */
void wisp_http_parser_init(struct wisp_http_parser *p);
/** Feed len bytes. *used gets the bytes consumed: all of them for MORE;
 *  up to and including the head's final LF for DONE (the rest is the body
 *  or the next request); up to and including the offending byte for
 *  ERROR. After DONE or ERROR the parser stays in that state until
 *  re-initialised. */
enum wisp_http_pres wisp_http_parse(struct wisp_http_parser *p, const uint8_t *data, uint32_t len, uint32_t *used);
/** Reason phrase of a status code ("Not Found"), "" when unknown. */
const char *wisp_http_reason(unsigned status);

/* --------------------------------------------------------- file table */

/** Kinds of table entries. */
enum wisp_httpd_kind {
    WISP_HTTPD_ROM = 0,     /**< constant bytes (data, len), sent without copying */
    WISP_HTTPD_GEN,         /**< generated on the fly: gen(off, dst, n) */
    WISP_HTTPD_STATUS_HTML, /**< the status page */
    WISP_HTTPD_STATUS_JSON  /**< the status as JSON */
};

/** Writes bytes [off, off + n) of a generated file into dst. */
typedef void (*wisp_httpd_gen_fn)(uint32_t off, uint8_t *dst, uint32_t n);

/** One entry of the compiled-in file table. */
struct wisp_httpd_file {
    const char *path;       /**< "/index.html" */
    const char *type;       /**< Content-Type */
    uint8_t kind;           /**< enum wisp_httpd_kind */
    const uint8_t *data;    /**< ROM: the bytes */
    uint32_t len;           /**< ROM, GEN: the length */
    wisp_httpd_gen_fn gen;  /**< GEN: the generator */
};

/** The table (httpd_files.c): *n gets its number of entries. "/" serves
 *  "/index.html". */
const struct wisp_httpd_file *wisp_httpd_files(unsigned *n);

/** Length of /big.bin: exactly 1 MiB. */
#define WISP_HTTPD_BIG_LEN 1048576u
/** The content of /big.bin: byte i is byte (i mod 4) (big-endian) of the
 *  32-bit word ((i / 4) * 0x9E3779B1 + 0x7F4A7C15) mod 2^32 -- every
 *  4-byte word differs, so a reordered or repeated segment shows. */
void wisp_httpd_big_gen(uint32_t off, uint8_t *dst, uint32_t n);

/* ------------------------------------------------------------- server */

/** Server statistics (core context writes; reading is fine anywhere). */
struct wisp_httpd_stats {
    uint32_t connections;   /**< accepted */
    uint32_t active;        /**< open now */
    uint32_t active_high;   /**< high-water mark of active */
    uint32_t refused;       /**< declined: every record in use */
    uint32_t closed;        /**< ended by a normal close */
    uint32_t resets;        /**< ended by the peer (reset) or the stack */
    uint32_t aborted;       /**< reset by us (stuck, stop) */
    uint32_t timeouts;      /**< idle timeouts and request deadlines (any kind) */
    uint32_t head_timeouts; /**< requests not complete by the deadline (408; also in timeouts) */
    uint32_t reclaimed;     /**< connections reset to make room for a new one */
    uint32_t capped;        /**< refusals because of the per-source cap (also in refused) */
    uint32_t requests;      /**< request heads received (incl. bad ones) */
    uint32_t reused;        /**< requests on a connection after its first */
    uint32_t responses[6];  /**< by status class: [2] = 2xx ... [5] = 5xx */
    uint32_t write_mem;     /**< writes deferred by WISP_ERR_MEM */
    uint64_t bytes_rx;      /**< bytes received */
    uint64_t bytes_tx;      /**< bytes queued for sending (heads + bodies) */
    uint64_t body_tx;       /**< body bytes queued */
};

/** One finished response (for an access log). */
struct wisp_httpd_log {
    wisp_ipaddr_t remote_ip;
    uint16_t remote_port;
    uint16_t status;
    uint8_t method;         /**< enum wisp_http_method */
    uint8_t keep;           /**< the connection stays open */
    uint32_t body_bytes;    /**< body length (0 for HEAD) */
    const char *target;     /**< request target ("" when unparsed) */
};
typedef void (*wisp_httpd_log_fn)(void *ctx, const struct wisp_httpd_log *e);

/** Runtime options (wisp_httpd_start_opts); zero fields take defaults. */
struct wisp_httpd_opts {
    uint16_t max_conns;     /**< 1..WISP_HTTPD_MAX_CONNS (0 = all) */
    uint32_t idle_ms;       /**< idle timeout (0 = WISP_HTTPD_IDLE_MS) */
    uint32_t linger_ms;     /**< lingering close (0 = WISP_HTTPD_LINGER_MS) */
    uint32_t head_ms;       /**< request deadline (0 = WISP_HTTPD_HEAD_MS) */
    /** Least wait of a reclaimed connection (0 = WISP_HTTPD_RECLAIM_MS;
     *  2^31 - 1 or more: never reclaim, see reclaim.h). */
    uint32_t reclaim_ms;
    /** Connections per remote address (0 = half of max_conns, at least 1;
     *  RFC 2616 §8.1.4 once asked clients for at most 2 per server: the
     *  embedded default of 4 records gives each address 2). */
    uint16_t per_source;
};

struct wisp_httpd;

/** One connection (internal). */
struct wisp_httpd_conn {
    struct wisp_httpd *h;           /**< NULL = free record */
    struct wisp_tcp_pcb *pcb;
    struct wisp_pbuf *rxq;          /**< received, not yet parsed */
    uint16_t rxq_off;               /**< bytes of rxq's first buffer already used */
    uint8_t phase;                  /**< internal (CONN_*) */
    uint8_t peer_closed;
    uint8_t close_pending;          /**< shutdown/close refused with WISP_ERR_MEM */
    uint8_t wait_status;            /**< waiting for the status buffer */
    uint32_t body_left;             /**< request body bytes still to discard */
    uint32_t last_ms;               /**< last progress */
    uint32_t wait_ms;               /**< accepted or last response queued (reclaim order) */
    uint32_t req_ms;                /**< first byte of the current request (deadline) */
    uint32_t linger_ms;             /**< when the lingering close began */
    uint32_t nreq;                  /**< requests on this connection */
    wisp_ipaddr_t remote_ip;
    uint16_t remote_port;
    /* the response being sent */
    uint8_t r_active, r_head_sent, r_head_only, r_close, r_kind;
    uint16_t r_status;
    const struct wisp_httpd_file *r_file;
    uint32_t r_len, r_off;
    struct wisp_http_parser ps;
};

struct wisp_httpd {
    struct wisp_stack *s;
    struct wisp_tcp_pcb *listener;
    uint16_t port;
    struct wisp_httpd_opts opt;
    struct wisp_httpd_stats st;
    wisp_httpd_log_fn log;
    void *log_ctx;
    struct wisp_httpd_conn *status_owner;   /**< response using status_buf */
    uint32_t status_len;
    struct wisp_timer kick_tmr;     /**< resumes responses that waited for status_buf */
    uint8_t running;
    struct wisp_httpd_conn conns[WISP_HTTPD_MAX_CONNS];
    uint8_t scratch[WISP_HTTPD_CHUNK];
    char status_buf[WISP_HTTPD_STATUS_MAX];
};

/** Start a server on port with default options (listener on every
 *  address). h may be uninitialised memory. WISP_ERR_USE when the port is
 *  taken, WISP_ERR_MEM without a PCB. */
wisp_err_t wisp_httpd_start(struct wisp_httpd *h, struct wisp_stack *s, uint16_t port);
/** The same with options (o may be NULL). */
wisp_err_t wisp_httpd_start_opts(struct wisp_httpd *h, struct wisp_stack *s, uint16_t port,
                                 const struct wisp_httpd_opts *o);
/** Stop: close the listener and reset the open connections (their received
 *  data is freed). The statistics stay readable. Safe to call twice. */
void wisp_httpd_stop(struct wisp_httpd *h);
/** An access-log hook, called once per response when it is fully queued
 *  (NULL to remove). */
void wisp_httpd_set_log(struct wisp_httpd *h, wisp_httpd_log_fn fn, void *ctx);
/** The statistics. */
const struct wisp_httpd_stats *wisp_httpd_stats(const struct wisp_httpd *h);

/** Render the status page of the stack s (html: the HTML page, else JSON)
 *  into buf (cap bytes, not NUL-terminated); returns the length. The
 *  server's own statistics are included when h is not NULL. */
uint32_t wisp_httpd_render_status(struct wisp_stack *s, const struct wisp_httpd *h, bool html, char *buf,
                                  uint32_t cap);

#endif /* WISP_HTTPD_H */
