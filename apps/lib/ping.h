/**
 * @file ping.h
 * A ping client on the raw API: ICMP echo requests (RFC 792) to one
 * address, one every interval, with an identifier of its own and sequence
 * numbers 0, 1, 2, ...; each reply is matched to its request, its data is
 * checked against what was sent, and its round-trip time goes into the
 * statistics (min / avg / max / mdev like ping(8)).
 *
 * Portable (no stdio, no allocation): all state lives in the caller's
 * struct wisp_ping; one event timer drives it. It uses the stack's echo
 * reply hook (wisp_icmp_set_echo_cb), so one ping runs per stack at a time.
 *
 * Rules (where RFC 792 is silent):
 *  - a request counts as answered when its reply arrives within
 *    timeout_ms; a reply after that is counted as late, not received;
 *  - a second reply to an answered request is a duplicate (counted, not
 *    received again);
 *  - a reply with the wrong length or data is counted as an error (not
 *    received); so is a request the stack could not send (no route, no
 *    buffer);
 *  - replies carrying another identifier or from another address are
 *    ignored (another ping, a reply to someone else's request);
 *  - the run ends when every request is answered or timed out; then the
 *    done callback runs (once).
 *  - RTT resolution: the optional microsecond clock (now_us), else the
 *    stack's millisecond clock.
 *
 * Who may call: the core context only.
 */
#ifndef WISP_PING_H
#define WISP_PING_H

#include "wisp/wisp.h"

/** Requests tracked at once (a reply to a request this far behind the
 *  newest is no longer matched). Default 64. */
#ifndef WISP_PING_WINDOW
#define WISP_PING_WINDOW 64
#endif

/** Default timeout per request (ms). */
#ifndef WISP_PING_TIMEOUT_MS
#define WISP_PING_TIMEOUT_MS 2000u
#endif

/** Results (valid at any time; the RTT figures over the replies so far). */
struct wisp_ping_stats {
    uint32_t sent;          /**< requests sent */
    uint32_t received;      /**< requests answered in time */
    uint32_t duplicates;    /**< extra replies to answered requests */
    uint32_t late;          /**< replies after their request timed out */
    uint32_t timeouts;      /**< requests not answered in time */
    uint32_t errors;        /**< sends that failed + bad replies */
    uint32_t min_us, avg_us, max_us, mdev_us;   /**< RTT (mdev: standard deviation) */
    uint64_t sum_us, sum2_us;                   /**< sums for avg and mdev */
    uint32_t elapsed_ms;    /**< first request to the end (or now) */
};

/** One reply (for per-reply output like ping(8)'s lines). */
struct wisp_ping_reply {
    wisp_ip4_t from;        /**< network order */
    uint16_t seq;
    uint16_t bytes;         /**< ICMP bytes (header + data) */
    uint8_t ttl;
    bool dup;               /**< a duplicate */
    bool late;              /**< arrived after the timeout */
    bool bad;               /**< wrong length or data */
    uint32_t rtt_us;
};

struct wisp_ping;
typedef void (*wisp_ping_done_fn)(void *arg, struct wisp_ping *p);
typedef void (*wisp_ping_reply_fn)(void *arg, struct wisp_ping *p, const struct wisp_ping_reply *r);

/** Everything wisp_ping_start_cfg takes; zero fields take defaults. */
struct wisp_ping_cfg {
    wisp_ip4_t dst;             /**< network order */
    uint32_t count;             /**< requests (0 = 1) */
    uint32_t interval_ms;       /**< between requests (0 = 1000) */
    uint32_t timeout_ms;        /**< per request (0 = WISP_PING_TIMEOUT_MS) */
    uint16_t size;              /**< data bytes after the 8-byte header (ping's -s) */
    uint8_t ttl;                /**< 0 = default */
    wisp_ping_done_fn done;     /**< the run is over (may be NULL) */
    void *arg;
    wisp_ping_reply_fn on_reply;    /**< each reply (may be NULL) */
    void *reply_arg;
    uint64_t (*now_us)(void *ctx);  /**< microsecond clock (NULL: the stack's ms clock) */
    void *clock_ctx;
};

/** Per-request state (internal). */
struct wisp_ping_slot {
    uint64_t sent_us;
    uint32_t n;             /**< request number (seq = n mod 65536) */
    uint8_t state;          /**< 0 free, 1 waiting, 2 answered, 3 timed out */
};

struct wisp_ping {
    struct wisp_stack *s;
    struct wisp_ping_cfg cfg;
    uint16_t id;
    uint8_t running;
    uint8_t finished;
    uint32_t next_n;            /**< requests sent so far */
    uint32_t next_send_ms;      /**< when the next one goes (stack clock) */
    uint32_t start_ms;
    uint32_t end_ms;
    struct wisp_timer tmr;
    struct wisp_ping_slot slot[WISP_PING_WINDOW];
    struct wisp_ping_stats st;
};

/** Start pinging dst (network order): count requests of size data bytes,
 *  interval_ms apart (0 = 1000); done(arg, p) runs at the end. The first
 *  request goes out at once. WISP_ERR_USE when the stack's echo hook is
 *  taken by someone else, WISP_ERR_VAL for size > 65507 or dst 0. */
wisp_err_t wisp_ping_start(struct wisp_ping *p, struct wisp_stack *s, wisp_ip4_t dst, uint32_t count,
                           uint32_t interval_ms, uint16_t size, wisp_ping_done_fn done, void *arg);
/** The same with every option. */
wisp_err_t wisp_ping_start_cfg(struct wisp_ping *p, struct wisp_stack *s, const struct wisp_ping_cfg *cfg);
/** Stop now (no done callback); requests still waiting count as timed out
 *  in the statistics. Safe to call twice and after the end. */
void wisp_ping_stop(struct wisp_ping *p);
/** The statistics (avg / mdev / elapsed brought up to date). */
const struct wisp_ping_stats *wisp_ping_stats(struct wisp_ping *p);
/** True once the run is over (done called, or stopped). */
bool wisp_ping_finished(const struct wisp_ping *p);
/** Packet loss in per mille of the requests sent (0..1000). */
uint32_t wisp_ping_loss_permille(const struct wisp_ping *p);

#endif /* WISP_PING_H */
