/**
 * @file stack.h
 * The stack instance. Everything a stack owns hangs off struct wisp_stack:
 * interfaces, PCB lists, timers, pools (with their storage, sized from
 * opt.h), counters. The core has no mutable globals, so several stacks can run
 * in one process (the simulator and the tests do).
 *
 * Time and randomness are injected: the clock callback returns monotonic
 * milliseconds; the entropy comes from the rand callback or, when none is
 * given, from cfg.seed (deterministic runs: same seed, same values).
 *
 * Secrets and random values (RFC 6528, RFC 5452, RFC 6056): wisp_stack_init
 * draws a 128-bit master secret from that source once and derives one key
 * per purpose from it with a keyed PRF (SipHash-2-4, wisp_siphash24):
 *  - the TCP key (s->tcp.key): ISNs (RFC 6528 §3), timestamp offsets and
 *    SYN cookies;
 *  - WISP_KEY_PORT: ephemeral port selection (RFC 6056 §3.3.4 / §3.3.1,
 *    wisp_port_select);
 *  - WISP_KEY_ID: identifiers seen on the wire -- DHCP xid, DNS query ID,
 *    IPv4 ID start, ICMP echo identifier, random ports (wisp_random_id);
 *  - WISP_KEY_GEN: other random values -- delays and jitter (wisp_random).
 * Values are SipHash of a counter under the purpose key, so what an
 * observer sees (ids, ports, ISNs) reveals neither the keys nor the next
 * value, and no secret is a generator output anyone sees. The master
 * secret is not kept.
 *
 * The core is single-threaded: one context at a time calls into a stack
 * ("the core context"). The host loop (or the simulator) calls
 * wisp_stack_poll() whenever wisp_stack_next_deadline() says a timer is due,
 * and feeds received frames with wisp_dev_input(). A stack run by a stack
 * thread (wisp/tcpip.h) has an owner hook (owner_check): in WISP_DEBUG
 * builds every public core entry point asks it whether the caller owns the
 * core (WISP_CORE_ASSERT_OWNER, opt.h) and reports a violation through
 * cfg.fail.
 *
 * Time once per event: the clock is sampled once when an event enters the
 * stack -- a received frame (wisp_dev_input), a poll (timers and loopback
 * delivery, wisp_stack_poll), a message handled by the stack thread or a
 * wisp_tcpip_run() job (wisp/tcpip.h), or any code between wisp_event_begin() and
 * wisp_event_end() -- and wisp_now() returns that sample until the event
 * ends, so one segment's processing (RTT sample, timestamps, timers armed)
 * sees one time. Nested events do not resample (a depth counter). Outside
 * any event, wisp_now() samples the clock at each call, so nothing is ever
 * armed from a stale time; a raw API call made from the application's own
 * loop, outside an event, may see the clock move between its reads unless
 * the application brackets it with wisp_event_begin()/wisp_event_end()
 * (calls made from the stack's callbacks are inside the event).
 */
#ifndef WISP_STACK_H
#define WISP_STACK_H

#include "wisp/opt.h"
#include "wisp/arch.h"
#include "wisp/err.h"
#include "wisp/pool.h"
#include "wisp/pbuf.h"
#include "wisp/stats.h"
#include "wisp/timer.h"
#include "wisp/netif.h"
#include "wisp/arp.h"
#include "wisp/ip4.h"
#include "wisp/icmp.h"
#include "wisp/udp.h"
#include "wisp/tcp.h"
#include "wisp/dns.h"

struct wisp_config {
    /** Monotonic milliseconds (wrapping is handled). Required. */
    uint32_t (*now_ms)(void *ctx);
    void *clock_ctx;
    /** Entropy source: random 32-bit values. It MUST be cryptographically
     *  strong in production (a hardware TRNG, getrandom() on a host: see
     *  ports/unix wisp_unix_random): every secret of the stack derives
     *  from it. Called only by wisp_stack_init (4 times, 128 bits).
     *  NULL = derive everything from seed instead (deterministic runs:
     *  simulator, tests, reproducing a run; not for production). */
    uint32_t (*rand)(void *ctx);
    void *rand_ctx;
    /** Used only when rand is NULL. */
    uint64_t seed;
    /** Programming errors the stack detects at run time in debug builds
     *  (so far: an entry point called by a thread that does not own the
     *  core, WISP_CORE_ASSERT_OWNER): what = the broken rule, where = the
     *  function. NULL = wisp_assert_fail(what, where, 0), the port's
     *  assertion hook (the unix port prints both and aborts). A handler
     *  that returns lets the call go on (tests count violations). */
    void (*fail)(void *ctx, const char *what, const char *where);
    void *fail_ctx;
};

/** Purposes of the stack's keys (s->key[]; the TCP key is s->tcp.key). */
enum wisp_key_purpose {
    WISP_KEY_GEN = 0,   /**< wisp_random: delays, jitter */
    WISP_KEY_ID,        /**< wisp_random_id: identifiers on the wire */
    WISP_KEY_PORT,      /**< wisp_port_select (RFC 6056 F and G) */
    WISP_KEY_COUNT
};

/** What a wisp_random_id value is for (its domain under WISP_KEY_ID). */
enum wisp_rid {
    WISP_RID_PORT = 1,  /**< start of a port search without destination */
    WISP_RID_DHCP_XID,  /**< DHCP transaction id (RFC 2131 §4.1) */
    WISP_RID_DNS_ID,    /**< DNS query ID (RFC 5452 §9.2) */
    WISP_RID_IP_ID,     /**< start of the IPv4 ID counter (RFC 7739) */
    WISP_RID_ICMP_ID    /**< ICMP echo identifier (apps) */
};

/** Pool identifiers. */
enum wisp_pool_id {
    WISP_POOL_PBUF_RX = 0,
    WISP_POOL_PBUF_TX,
    WISP_POOL_PBUF_REF,
#if WISP_PBUF_SMALL_COUNT > 0
    WISP_POOL_PBUF_SMALL,
#endif
#if WISP_UDP
    WISP_POOL_UDP_PCB,
#endif
#if WISP_TCP
    WISP_POOL_TCP_PCB,
    WISP_POOL_TCP_LISTEN,
    WISP_POOL_TCP_SEG,
#endif
#if WISP_TCP_OOSEQ_POOL
    WISP_POOL_TCP_OOSEQ,
#endif
    WISP_POOL_COUNT
};

struct wisp_stack;

/** Initialise s (all of it; s may be uninitialised memory). cfg is copied.
 *  Creates the loopback interface when WISP_LOOPBACK. */
wisp_err_t wisp_stack_init(struct wisp_stack *s, const struct wisp_config *cfg);
/** Release the packets the stack itself holds (transmit, ARP and loopback
 *  queues, reassembly) and disarm its timers. PCBs belong to the
 *  application, which removes them first (wisp_udp_remove): a PCB still
 *  allocated afterwards shows as pool use, and so does any pbuf an
 *  application leaked, so after deinit every pool is at zero use unless
 *  something leaked (the tests' leak check). The instance may be re-inited. */
void wisp_stack_deinit(struct wisp_stack *s);

/** Run every timer that is due and deliver looped-back packets. */
void wisp_stack_poll(struct wisp_stack *s);
/** Milliseconds until the next timer is due (0 = now), or UINT32_MAX when
 *  nothing is armed. */
uint32_t wisp_stack_next_timeout(struct wisp_stack *s);
/** Absolute deadline (stack clock) of the next timer; false when none. */
bool wisp_stack_next_deadline(struct wisp_stack *s, uint32_t *deadline);

/** Current time: inside an event, the clock sampled when the event began
 *  (the same value for the whole event); outside any event, a fresh sample
 *  of the clock (see "Time once per event" above). */
uint32_t wisp_now(struct wisp_stack *s);
/** Begin an event: the outermost begin samples the clock, which wisp_now()
 *  then returns until the matching wisp_event_end(); nested begins only
 *  count. wisp_dev_input, wisp_stack_poll and the stack thread (messages,
 *  wisp_tcpip_run) use them; an application may bracket a batch of raw API
 *  calls made outside any event. Core context only. */
void wisp_event_begin(struct wisp_stack *s);
/** End the event begun by the matching wisp_event_begin(). */
void wisp_event_end(struct wisp_stack *s);
/** The check behind the default WISP_CORE_ASSERT_OWNER (debug builds):
 *  when s has an owner hook and it says the caller does not own the core,
 *  report "where" through cfg.fail. s NULL: nothing to check. */
void wisp_core_owner_check(const struct wisp_stack *s, const char *where);
/** Next random 32-bit value for delays and jitter: SipHash-2-4 of a
 *  counter under WISP_KEY_GEN. */
uint32_t wisp_random(struct wisp_stack *s);
/** Next random 32-bit identifier that goes on the wire (truncate as
 *  needed): SipHash-2-4 of (counter, what) under WISP_KEY_ID. */
uint32_t wisp_random_id(struct wisp_stack *s, enum wisp_rid what);
/** SipHash-2-4 of len bytes at msg under a 128-bit key (four 32-bit
 *  words, key[0] the least significant: the reference key bytes k[0..15]
 *  read as little-endian words). */
uint64_t wisp_siphash24(const uint32_t key[4], const void *msg, size_t len);

/** Whether an ephemeral port may be taken (the caller's own rules). */
typedef bool (*wisp_port_free_fn)(struct wisp_stack *s, uint16_t port, const void *ctx);
/** An ephemeral port (WISP_EPHEMERAL_MIN..MAX) accepted by port_free, or 0
 *  when none is. With a destination (rip not any): RFC 6056 §3.3.4
 *  (Algorithm 4): offset = F(lip, rip, rport, proto) mod num, index =
 *  G(...) mod WISP_PORT_TABLE_LEN, where F and G are SipHash-2-4 under
 *  s->key[WISP_KEY_PORT] of the 12 bytes lip, rip (network order), rport
 *  (big-endian), proto, then 'F' or 'G'; probes start at offset +
 *  port_table[index] and each probe advances port_table[index]. Without
 *  a destination: RFC 6056 §3.3.1 (Algorithm 1), the start from
 *  wisp_random_id(WISP_RID_PORT). One pass at most. */
uint16_t wisp_port_select(struct wisp_stack *s, uint8_t proto, wisp_ip4_t lip, wisp_ip4_t rip, uint16_t rport,
                          wisp_port_free_fn port_free, const void *ctx);

/** Sum of pool use (every pool), for leak checks. */
unsigned wisp_stack_pools_in_use(const struct wisp_stack *s);
/** Print counters (non-zero only unless all), interfaces and pool
 *  high-water marks through a printf-like callback. */
typedef int (*wisp_print_fn)(void *ctx, const char *fmt, ...);
void wisp_stack_dump(const struct wisp_stack *s, wisp_print_fn pr, void *ctx, bool all);

/* Read-only views for status pages, monitors and tests (the members of
 * struct wisp_stack are private). Core context only; keep no pointer
 * past the current core-context call. */

/** Value of counter id (WISP_CTR_*, stats.h; names: wisp_counter_name);
 *  0 for an unknown id. */
uint32_t wisp_stack_counter(const struct wisp_stack *s, unsigned id);

/** A pool's figures (wisp_stack_pool_stats). */
struct wisp_pool_stats {
    const char *name;
    uint32_t elem_size;   /**< bytes per element */
    uint16_t count;       /**< elements in all */
    uint16_t used;        /**< in use now */
    uint16_t high;        /**< high-water mark of used */
    uint32_t failed;      /**< allocations refused (pool empty) */
    uint32_t allocs;      /**< successful allocations, total */
};
/** Figures of pool id (enum wisp_pool_id); false for an unknown id. */
bool wisp_stack_pool_stats(const struct wisp_stack *s, unsigned id, struct wisp_pool_stats *st);
/** Elements of pool id in use now (0 for an unknown id). */
unsigned wisp_stack_pool_used(const struct wisp_stack *s, unsigned id);
/** Name of pool id ("pbuf_rx"), NULL for an unknown id. */
const char *wisp_stack_pool_name(const struct wisp_stack *s, unsigned id);

/** Iterate the stack's interfaces in order of addition: the first when
 *  prev is NULL, else the one after prev; NULL at the end. */
struct wisp_netif *wisp_stack_netif_next(const struct wisp_stack *s, const struct wisp_netif *prev);

#if WISP_TCP
/** Iterate the stack's TCP connection PCBs: the first when prev is NULL,
 *  else the one after prev; NULL at the end. Read them only
 *  (wisp_tcp_state, wisp_tcp_local, wisp_tcp_remote, wisp_tcp_get_info). */
const struct wisp_tcp_pcb *wisp_stack_tcp_next(const struct wisp_stack *s, const struct wisp_tcp_pcb *prev);
#endif

/* the layout of the structures above (private tier) */
#include "wisp/priv/stack.h"

#endif /* WISP_STACK_H */
