/**
 * @file priv/stack.h
 * Private tier: the layout of the structures of wisp/stack.h that a user
 * allocates or that the stack instance holds. Not API: applications
 * use the functions of wisp/stack.h; the members are named through
 * WISP_PRIV() (wisp/arch.h), so code outside the library (no
 * WISP_PRIVATE_ACCESS) cannot use them by accident. May change in
 * any release.
 */
#ifndef WISP_PRIV_STACK_H
#define WISP_PRIV_STACK_H

#include "wisp/stack.h"

struct wisp_stack {
    struct wisp_config WISP_PRIV(cfg);
    uint32_t WISP_PRIV(key)[WISP_KEY_COUNT][4];   /**< per-purpose secret keys (see above) */
    uint64_t WISP_PRIV(rnd_ctr);                  /**< counter of the keyed generators */
    uint16_t WISP_PRIV(port_table)[WISP_PORT_TABLE_LEN]; /**< RFC 6056 §3.3.4 table[] */
    uint32_t WISP_PRIV(now);                      /**< clock sampled at the entry of the current event (else the last sample) */
    uint16_t WISP_PRIV(event_depth);              /**< events entered and not yet left (wisp_event_begin); 0 = outside any */
    void *WISP_PRIV(core_lock);                   /**< OS layer: the stack thread's core mutex (wisp/tcpip.h), NULL = single-threaded use */
    /** Owner hook behind WISP_CORE_ASSERT_OWNER: true when the calling
     *  thread owns the core. NULL = single-threaded use, nothing checked.
     *  Set by the OS layer (wisp_tcpip_set_owner). */
    bool (*WISP_PRIV(owner_check))(const void *ctx);
    const void *WISP_PRIV(owner_ctx);

    struct wisp_pool WISP_PRIV(pool)[WISP_POOL_COUNT];
#if WISP_ALLOC_FAIL_INJECT
    struct wisp_alloc_inject WISP_PRIV(alloc_inject); /**< wisp/debug.h, shared by the pools */
#endif
    struct wisp_netif *WISP_PRIV(netifs);         /**< list, in order of addition */
    struct wisp_netif *WISP_PRIV(netif_by_idx)[WISP_MAX_NETIFS + 1];
    struct wisp_timer *WISP_PRIV(timers);         /**< armed timers, sorted by deadline */

#if WISP_STATS
    uint32_t WISP_PRIV(ctr)[WISP_CTR_COUNT];      /**< counters, see stats.h */
#endif

    struct wisp_arp WISP_PRIV(arp);
    struct wisp_ip4 WISP_PRIV(ip4);
    struct wisp_icmp WISP_PRIV(icmp);
#if WISP_UDP
    struct wisp_udp_pcb *WISP_PRIV(udp_pcbs);
#endif
#if WISP_TCP
    struct wisp_tcp WISP_PRIV(tcp);               /**< TCP state (priv/tcp.h) */
#endif
#if WISP_DNS
    struct wisp_dns WISP_PRIV(dns);               /**< DNS resolver state (dns.h); zeroed by init */
#endif

#if WISP_LOOPBACK
    struct wisp_netif WISP_PRIV(loopif);
    struct wisp_pbuf *WISP_PRIV(loopq)[WISP_LOOP_QUEUE_LEN];
    uint8_t WISP_PRIV(loopq_head), WISP_PRIV(loopq_count);
#endif

    /* pool storage (kept last; 8-byte aligned through the union) */
    union { uint64_t WISP_PRIV(a_); uint8_t WISP_PRIV(b)[WISP_PBUF_RX_COUNT * WISP_PBUF_ELEM_SIZE]; } WISP_PRIV(mem_rx);
    union { uint64_t WISP_PRIV(a_); uint8_t WISP_PRIV(b)[WISP_PBUF_TX_COUNT * WISP_PBUF_ELEM_SIZE]; } WISP_PRIV(mem_tx);
    union { uint64_t WISP_PRIV(a_); uint8_t WISP_PRIV(b)[WISP_PBUF_REF_COUNT * WISP_POOL_ELEM(WISP_PBUF_HDR_SIZE)]; } WISP_PRIV(mem_ref);
#if WISP_PBUF_SMALL_COUNT > 0
    union { uint64_t WISP_PRIV(a_); uint8_t WISP_PRIV(b)[WISP_PBUF_SMALL_COUNT * WISP_POOL_ELEM(WISP_PBUF_HDR_SIZE + WISP_PBUF_SMALL_SIZE)]; } WISP_PRIV(mem_small);
#endif
#if WISP_UDP
    union { uint64_t WISP_PRIV(a_); uint8_t WISP_PRIV(b)[WISP_UDP_PCB_COUNT * WISP_POOL_ELEM(sizeof(struct wisp_udp_pcb))]; } WISP_PRIV(mem_udp);
#endif
#if WISP_TCP
    union { uint64_t WISP_PRIV(a_); uint8_t WISP_PRIV(b)[WISP_TCP_PCB_COUNT * WISP_POOL_ELEM(sizeof(struct wisp_tcp_pcb))]; } WISP_PRIV(mem_tcp_pcb);
    union { uint64_t WISP_PRIV(a_); uint8_t WISP_PRIV(b)[WISP_TCP_LISTEN_COUNT * WISP_POOL_ELEM(sizeof(struct wisp_tcp_listen))]; } WISP_PRIV(mem_tcp_listen);
    union { uint64_t WISP_PRIV(a_); uint8_t WISP_PRIV(b)[WISP_TCP_SEG_COUNT * WISP_POOL_ELEM(sizeof(struct wisp_tcp_seg))]; } WISP_PRIV(mem_tcp_seg);
#endif
#if WISP_TCP_OOSEQ_POOL
    union { uint64_t WISP_PRIV(a_); uint8_t WISP_PRIV(b)[WISP_TCP_OOSEQ_COUNT * WISP_POOL_ELEM(sizeof(struct wisp_tcp_ooq))]; } WISP_PRIV(mem_tcp_ooseq);
#endif
};

#endif /* WISP_PRIV_STACK_H */
