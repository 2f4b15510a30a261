/**
 * @file testutil.h
 * Shared helpers for wisp's unit and simulator tests (cmocka).
 *
 *  - tu_env: one stack with a manual clock and one Ethernet netif whose
 *    device records every transmitted frame (a copy), so a test can inject
 *    frames and inspect what the stack sent.
 *  - Frame builders for Ethernet/IPv4/UDP/ICMP with correct checksums.
 *  - tu_env_free() deinitialises the stack and fails the test when any
 *    pool is not back at zero use (the leak check after every test).
 */
#ifndef WISP_TESTUTIL_H
#define WISP_TESTUTIL_H

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include "wisp/wisp.h"

#define TU_MAX_FRAMES 512

struct tu_dev {
    struct wisp_dev dev;
    uint8_t *frame[TU_MAX_FRAMES];   /**< malloc'd copies of sent frames */
    uint16_t flen[TU_MAX_FRAMES];
    unsigned head, count;            /**< FIFO of recorded frames */
    unsigned sent;                   /**< frames accepted in total */
    bool busy;                       /**< when true, transmit says WOULDBLOCK */
};

struct tu_env {
    struct wisp_stack *s;            /**< heap-allocated stack */
    uint32_t now;                    /**< the clock the stack reads */
    struct wisp_netif nif;
    struct tu_dev dev;
    uint8_t mac[6];
};

/** Our default test addressing: stack 198.18.0.2/24 gw 198.18.0.1,
 *  MAC 02:00:00:00:00:02; the "peer" is 198.18.0.1 / 02:00:00:00:00:01. */
extern const uint8_t tu_mac_self[6], tu_mac_peer[6];
wisp_ip4_t tu_ip_self(void);
wisp_ip4_t tu_ip_peer(void);

/** New environment: stack initialised (seed), netif added, addressed, up
 *  with link up. The gratuitous ARP sent on link-up is discarded. */
struct tu_env *tu_env_new(uint64_t seed);
/** Leak check + free: drops recorded frames, deinits the stack, asserts
 *  every pool has zero elements in use, frees memory. */
void tu_env_free(struct tu_env *e);

/** Advance the clock by ms and run due timers (in steps so each timer runs
 *  at its deadline). */
void tu_advance(struct tu_env *e, uint32_t ms);

/** Inject a received frame (copied into receive pbufs). Returns false when
 *  the receive pool is empty. */
bool tu_inject(struct tu_env *e, const uint8_t *frame, size_t len);

/** Pop the oldest recorded transmitted frame into buf (up to cap bytes);
 *  returns its length, or -1 when none. */
int tu_pop(struct tu_env *e, uint8_t *buf, size_t cap);
/** Number of recorded frames waiting to be popped. */
unsigned tu_pending(const struct tu_env *e);
/** Drop all recorded frames. */
void tu_clear(struct tu_env *e);

/** Transmit-budget pbufs in use / allocated in total (full and small
 *  blocks together: short RAM pbufs come from the small pool). */
unsigned tu_tx_used(const struct tu_env *e);
unsigned long tu_tx_allocs(const struct tu_env *e);

/** Counter value by id. */
#define TU_CTR(e, id) ((e)->s->ctr[WISP_CTR_##id])

/* ------------------------------------------------------------ builders */
/** Write an Ethernet header at buf; returns 14. */
size_t tu_eth(uint8_t *buf, const uint8_t dst[6], const uint8_t src[6], uint16_t type);
/** Write a 20-byte IPv4 header (checksum filled) at buf; returns 20.
 *  flags_off is the host-order flags+fragment-offset word. */
size_t tu_ip4(uint8_t *buf, wisp_ip4_t src, wisp_ip4_t dst, uint8_t proto, uint16_t payload_len, uint16_t id,
              uint16_t flags_off, uint8_t ttl);
/** A full Ethernet+IPv4+UDP frame to the stack from the peer; returns its
 *  length. */
size_t tu_udp_frame(uint8_t *buf, uint16_t sport, uint16_t dport, const void *data, uint16_t len);
/** The same from the peer's MAC to dst_mac, with any IPv4 source and
 *  destination (checksum filled). tu_udp_frame is this with the default
 *  addressing. */
size_t tu_udp_frame_from(uint8_t *buf, const uint8_t dst_mac[6], wisp_ip4_t src, wisp_ip4_t dst, uint16_t sport,
                         uint16_t dport, const void *data, uint16_t len);
/** A full Ethernet+IPv4+ICMP echo request frame to the stack; returns length. */
size_t tu_ping_frame(uint8_t *buf, uint16_t id, uint16_t seq, const void *data, uint16_t len);
/** Preload the ARP cache with the peer so output does not wait for ARP. */
void tu_arp_peer(struct tu_env *e);

/* ------------------------------------------- waiting on a condition */
/** A bounded poll of a condition the caller evaluates (threaded tests):
 *    struct tu_poll tp = tu_poll_start(5000);
 *    while (!cond) { TU_POLL(&tp, "what did not happen"); }
 *  tu_poll_more() pauses briefly (a yield, later 1 ms) and returns false
 *  once timeout_ms passed since tu_poll_start; TU_POLL fails the test then.
 *  Use it for states that have no wake-up to wait on (a counter in the
 *  core, read under the core lock); for "thread T is blocked in a call"
 *  use the sys port's probe (tu_wait_blocked). */
struct tu_poll {
    uint32_t start, timeout_ms;
    unsigned n;
};
struct tu_poll tu_poll_start(uint32_t timeout_ms);
bool tu_poll_more(struct tu_poll *tp);
/** Deadline of the threaded tests' condition waits, ms: far above what any
 *  wait needs on a loaded machine; only reached when the awaited thing
 *  does not happen. */
#define TU_WAIT_MS 10000u
/** Fail unless thread t (wisp_sys_thread_t *) blocks on obj (NULL: any
 *  semaphore or mailbox) within TU_WAIT_MS: the sys port's probe. */
#define TU_WAIT_BLOCKED(t, obj) assert_true(wisp_sys_debug_wait_blocked((t), (obj), TU_WAIT_MS))
#define TU_POLL(tp, what) \
    do { \
        if (!tu_poll_more(tp)) { \
            fail_msg("timeout: %s", (what)); \
        } \
    } while (0)

#endif
