/**
 * @file stack.h
 * The stack instance. Everything a stack owns hangs off struct wisp_stack:
 * interfaces, PCB lists, timers, pools (with their storage, sized from
 * opt.h), counters. There are no mutable globals, so several stacks can run
 * in one process (the simulator and the tests do).
 *
 * Time and randomness are injected: the clock callback returns monotonic
 * milliseconds; randomness comes from the rand callback or, when none is
 * given, from a generator seeded with cfg.seed (deterministic runs).
 *
 * The core is single-threaded: one context at a time calls into a stack
 * ("the core context"). The host loop (or the simulator) calls
 * wisp_stack_poll() whenever wisp_stack_next_deadline() says a timer is due,
 * and feeds received frames with wisp_dev_input().
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
    /** Random 32-bit values; NULL = internal generator seeded from seed. */
    uint32_t (*rand)(void *ctx);
    void *rand_ctx;
    uint64_t seed;
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
    WISP_POOL_COUNT
};

struct wisp_stack {
    struct wisp_config cfg;
    uint64_t rng[2];                   /**< internal generator state */
    uint32_t now;                      /**< clock sampled at the last entry */
    void *core_lock;                   /**< OS layer: the stack thread's core mutex (wisp/tcpip.h), NULL = single-threaded use */

    struct wisp_pool pool[WISP_POOL_COUNT];
    struct wisp_netif *netifs;         /**< list, in order of addition */
    struct wisp_netif *netif_by_idx[WISP_MAX_NETIFS + 1];
    struct wisp_timer *timers;         /**< armed timers, sorted by deadline */

    uint32_t ctr[WISP_CTR_COUNT];      /**< counters, see stats.h */

    struct wisp_arp arp;
    struct wisp_ip4 ip4;
    struct wisp_icmp icmp;
#if WISP_UDP
    struct wisp_udp_pcb *udp_pcbs;
#endif
#if WISP_TCP
    struct wisp_tcp tcp;               /**< TCP state (tcp.h) */
#endif
#if WISP_DNS
    struct wisp_dns dns;               /**< DNS resolver state (dns.h); zeroed by init */
#endif

#if WISP_LOOPBACK
    struct wisp_netif loopif;
    struct wisp_pbuf *loopq[WISP_LOOP_QUEUE_LEN];
    uint8_t loopq_head, loopq_count;
#endif

    /* pool storage (kept last; 8-byte aligned through the union) */
    union { uint64_t a_; uint8_t b[WISP_PBUF_RX_COUNT * WISP_PBUF_ELEM_SIZE]; } mem_rx;
    union { uint64_t a_; uint8_t b[WISP_PBUF_TX_COUNT * WISP_PBUF_ELEM_SIZE]; } mem_tx;
    union { uint64_t a_; uint8_t b[WISP_PBUF_REF_COUNT * WISP_POOL_ELEM(WISP_PBUF_HDR_SIZE)]; } mem_ref;
#if WISP_PBUF_SMALL_COUNT > 0
    union { uint64_t a_; uint8_t b[WISP_PBUF_SMALL_COUNT * WISP_POOL_ELEM(WISP_PBUF_HDR_SIZE + WISP_PBUF_SMALL_SIZE)]; } mem_small;
#endif
#if WISP_UDP
    union { uint64_t a_; uint8_t b[WISP_UDP_PCB_COUNT * WISP_POOL_ELEM(sizeof(struct wisp_udp_pcb))]; } mem_udp;
#endif
#if WISP_TCP
    union { uint64_t a_; uint8_t b[WISP_TCP_PCB_COUNT * WISP_POOL_ELEM(sizeof(struct wisp_tcp_pcb))]; } mem_tcp_pcb;
    union { uint64_t a_; uint8_t b[WISP_TCP_LISTEN_COUNT * WISP_POOL_ELEM(sizeof(struct wisp_tcp_listen))]; } mem_tcp_listen;
    union { uint64_t a_; uint8_t b[WISP_TCP_SEG_COUNT * WISP_POOL_ELEM(sizeof(struct wisp_tcp_seg))]; } mem_tcp_seg;
#endif
};

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

/** Current time (samples the clock). */
uint32_t wisp_now(struct wisp_stack *s);
/** Next random 32-bit value. */
uint32_t wisp_random(struct wisp_stack *s);

/** Sum of pool use (every pool), for leak checks. */
unsigned wisp_stack_pools_in_use(const struct wisp_stack *s);
/** Print counters (non-zero only unless all), interfaces and pool
 *  high-water marks through a printf-like callback. */
typedef int (*wisp_print_fn)(void *ctx, const char *fmt, ...);
void wisp_stack_dump(const struct wisp_stack *s, wisp_print_fn pr, void *ctx, bool all);

#if WISP_TCP
/** Iterate the stack's TCP connection PCBs (for status pages): the first
 *  when prev is NULL, else the one after prev; NULL at the end. Read them
 *  only (wisp_tcp_state, wisp_tcp_local, wisp_tcp_remote,
 *  wisp_tcp_get_info) and keep no pointer past the current core-context
 *  call. Interfaces: s->netifs / nif->next; pools: s->pool[]; counters:
 *  s->ctr[] with wisp_counter_name(). Core context only. */
static inline const struct wisp_tcp_pcb *wisp_stack_tcp_next(const struct wisp_stack *s,
                                                            const struct wisp_tcp_pcb *prev)
{
    return prev == NULL ? s->tcp.pcbs : prev->next;
}
#endif

#endif /* WISP_STACK_H */
