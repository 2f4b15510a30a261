/**
 * @file stack.c
 * The stack instance: initialisation and teardown, injected clock and
 * random numbers, the event timer list, the poll entry point (timers and
 * loopback delivery), counters and the diagnostic dump.
 */
#include "wisp/stack.h"

/* ------------------------------------------------------------ names */

static const char *const counter_names[WISP_CTR_COUNT] = {
#define WISP_CTR_NAME_(id, name) name,
    WISP_COUNTERS(WISP_CTR_NAME_)
#undef WISP_CTR_NAME_
};

const char *wisp_counter_name(unsigned id)
{
    return id < WISP_CTR_COUNT ? counter_names[id] : NULL;
}

const char *wisp_err_str(wisp_err_t e)
{
    static const char *const names[] = { "ERR_OK", "ERR_MEM", "ERR_BUF", "ERR_TIMEOUT", "ERR_RTE",
                                         "ERR_INPROGRESS", "ERR_VAL", "ERR_WOULDBLOCK", "ERR_USE",
                                         "ERR_ALREADY", "ERR_ISCONN", "ERR_CONN", "ERR_IF", "ERR_ABRT",
                                         "ERR_RST", "ERR_CLSD", "ERR_ARG", "ERR_REFUSED",
                                         "ERR_HOSTUNREACH", "ERR_NETUNREACH" };
    int i = -(int)e;
    return (i >= 0 && i < (int)WISP_ARRAY_SIZE(names)) ? names[i] : "ERR_UNKNOWN";
}

/* ------------------------------------------------- clock and random */

uint32_t wisp_now(struct wisp_stack *s)
{
    s->now = s->cfg.now_ms(s->cfg.clock_ctx);
    return s->now;
}

static uint64_t splitmix64(uint64_t *x)
{
    uint64_t z = (*x += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

uint32_t wisp_random(struct wisp_stack *s)
{
    uint64_t a, b;
    if (s->cfg.rand != NULL) {
        return s->cfg.rand(s->cfg.rand_ctx);
    }
    /* xorshift128+ */
    a = s->rng[0];
    b = s->rng[1];
    s->rng[0] = b;
    a ^= a << 23;
    s->rng[1] = a ^ b ^ (a >> 17) ^ (b >> 26);
    return (uint32_t)((s->rng[1] + b) >> 32);
}

/* ------------------------------------------------------------ timers */

void wisp_timer_cancel(struct wisp_stack *s, struct wisp_timer *t)
{
    struct wisp_timer **pp;
    WISP_CORE_ASSERT_OWNER(s);
    if (!t->armed) {
        return;
    }
    for (pp = &s->timers; *pp != NULL; pp = &(*pp)->next) {
        if (*pp == t) {
            *pp = t->next;
            break;
        }
    }
    t->next = NULL;
    t->armed = 0;
}

void wisp_timer_arm(struct wisp_stack *s, struct wisp_timer *t, uint32_t delay_ms, wisp_timer_fn fn)
{
    struct wisp_timer **pp;
    WISP_CORE_ASSERT_OWNER(s);
    wisp_timer_cancel(s, t);
    t->fn = fn;
    t->due = wisp_now(s) + delay_ms;
    t->armed = 1;
    /* Keep the list sorted; equal deadlines run in arming order. */
    for (pp = &s->timers; *pp != NULL && !wisp_time_before(t->due, (*pp)->due); pp = &(*pp)->next) {
    }
    t->next = *pp;
    *pp = t;
}

bool wisp_stack_next_deadline(struct wisp_stack *s, uint32_t *deadline)
{
#if WISP_LOOPBACK
    if (s->loopq_count > 0) {
        *deadline = wisp_now(s);
        return true;
    }
#endif
    if (s->timers == NULL) {
        return false;
    }
    *deadline = s->timers->due;
    return true;
}

uint32_t wisp_stack_next_timeout(struct wisp_stack *s)
{
    uint32_t due, now;
    if (!wisp_stack_next_deadline(s, &due)) {
        return UINT32_MAX;
    }
    now = wisp_now(s);
    return wisp_time_before(now, due) ? due - now : 0;
}

/* -------------------------------------------------------------- poll */

void wisp_stack_poll(struct wisp_stack *s)
{
    unsigned budget = 1024; /* a timer re-arming itself at 0 ms cannot spin forever */
    uint32_t now = wisp_now(s);
    WISP_CORE_ASSERT_OWNER(s);
#if WISP_LOOPBACK
    {
        /* Deliver only what was queued before this poll: a looped packet
         * that causes another one is delivered by the next poll. */
        unsigned n = s->loopq_count;
        while (n-- > 0) {
            struct wisp_pbuf *p = s->loopq[s->loopq_head];
            s->loopq[s->loopq_head] = NULL;
            s->loopq_head = (uint8_t)((s->loopq_head + 1u) % WISP_LOOP_QUEUE_LEN);
            s->loopq_count--;
            s->loopif.st.rx_frames++;
            s->loopif.st.rx_bytes += p->tot_len;
            p->if_idx = s->loopif.index;
            wisp_ip4_input(&s->loopif, p);
        }
    }
#endif
    while (s->timers != NULL && !wisp_time_before(now, s->timers->due) && budget-- > 0) {
        struct wisp_timer *t = s->timers;
        s->timers = t->next;
        t->next = NULL;
        t->armed = 0;
        t->fn(s, t);
    }
}

/* ------------------------------------------------------ init / deinit */

wisp_err_t wisp_stack_init(struct wisp_stack *s, const struct wisp_config *cfg)
{
    uint64_t x;
    if (s == NULL || cfg == NULL || cfg->now_ms == NULL) {
        return WISP_ERR_ARG;
    }
    memset(s, 0, offsetof(struct wisp_stack, mem_rx));
    s->cfg = *cfg;
    x = cfg->seed;
    s->rng[0] = splitmix64(&x);
    s->rng[1] = splitmix64(&x);
    if ((s->rng[0] | s->rng[1]) == 0) {
        s->rng[1] = 1;
    }
    wisp_now(s);

    wisp_pool_init(&s->pool[WISP_POOL_PBUF_RX], "pbuf_rx", s->mem_rx.b, sizeof(s->mem_rx), WISP_PBUF_ELEM_SIZE, WISP_PBUF_RX_COUNT);
    wisp_pool_init(&s->pool[WISP_POOL_PBUF_TX], "pbuf_tx", s->mem_tx.b, sizeof(s->mem_tx), WISP_PBUF_ELEM_SIZE, WISP_PBUF_TX_COUNT);
    wisp_pool_init(&s->pool[WISP_POOL_PBUF_REF], "pbuf_ref", s->mem_ref.b, sizeof(s->mem_ref), WISP_PBUF_HDR_SIZE, WISP_PBUF_REF_COUNT);
#if WISP_PBUF_SMALL_COUNT > 0
    wisp_pool_init(&s->pool[WISP_POOL_PBUF_SMALL], "pbuf_small", s->mem_small.b, sizeof(s->mem_small),
                   WISP_PBUF_HDR_SIZE + WISP_PBUF_SMALL_SIZE, WISP_PBUF_SMALL_COUNT);
#endif
#if WISP_UDP
    wisp_pool_init(&s->pool[WISP_POOL_UDP_PCB], "udp_pcb", s->mem_udp.b, sizeof(s->mem_udp), sizeof(struct wisp_udp_pcb),
                   WISP_UDP_PCB_COUNT);
#endif
#if WISP_TCP
    wisp_pool_init(&s->pool[WISP_POOL_TCP_PCB], "tcp_pcb", s->mem_tcp_pcb.b, sizeof(s->mem_tcp_pcb), sizeof(struct wisp_tcp_pcb),
                   WISP_TCP_PCB_COUNT);
    wisp_pool_init(&s->pool[WISP_POOL_TCP_LISTEN], "tcp_listen", s->mem_tcp_listen.b, sizeof(s->mem_tcp_listen), sizeof(struct wisp_tcp_listen),
                   WISP_TCP_LISTEN_COUNT);
    wisp_pool_init(&s->pool[WISP_POOL_TCP_SEG], "tcp_seg", s->mem_tcp_seg.b, sizeof(s->mem_tcp_seg), sizeof(struct wisp_tcp_seg),
                   WISP_TCP_SEG_COUNT);
#endif

    wisp_arp_init(s);
    wisp_ip4_init(s);
    wisp_icmp_init(s);
#if WISP_UDP
    wisp_udp_init(s);
#endif
#if WISP_TCP
    wisp_tcp_init(s);
#endif

#if WISP_LOOPBACK
    {
        struct wisp_netif *lo = &s->loopif;
        memset(lo, 0, sizeof(*lo));
        lo->stack = s;
        memcpy(lo->name, "lo", 3);
        lo->flags = WISP_NETIF_F_UP | WISP_NETIF_F_LINK_UP | WISP_NETIF_F_LOOPBACK;
        lo->mtu = 65535u;
        lo->ip4 = wisp_ip4(127, 0, 0, 1);
        lo->mask4 = wisp_ip4_prefix_mask(8);
        lo->index = 1;
        s->netif_by_idx[1] = lo;
        s->netifs = lo;
    }
#endif
    return WISP_OK;
}

void wisp_stack_deinit(struct wisp_stack *s)
{
    struct wisp_netif *nif;
#if WISP_DNS
    wisp_dns_deinit(s); /* resolver queries (their UDP PCBs), cache */
#endif
#if WISP_TCP
    wisp_tcp_deinit(s); /* orphaned connections, SYN queue, TIME-WAIT */
#endif
    for (nif = s->netifs; nif != NULL; nif = nif->next) {
        wisp_netif_set_link(nif, false); /* flushes transmit queues and ARP */
    }
    wisp_arp_flush(s, 0);
    wisp_ip4_deinit(s);
#if WISP_LOOPBACK
    while (s->loopq_count > 0) {
        wisp_pbuf_free(s->loopq[s->loopq_head]);
        s->loopq[s->loopq_head] = NULL;
        s->loopq_head = (uint8_t)((s->loopq_head + 1u) % WISP_LOOP_QUEUE_LEN);
        s->loopq_count--;
    }
#endif
    while (s->timers != NULL) {
        wisp_timer_cancel(s, s->timers);
    }
}

unsigned wisp_stack_pools_in_use(const struct wisp_stack *s)
{
    unsigned i, n = 0;
    for (i = 0; i < WISP_POOL_COUNT; i++) {
        n += s->pool[i].used;
    }
    return n;
}

void wisp_stack_dump(const struct wisp_stack *s, wisp_print_fn pr, void *ctx, bool all)
{
    unsigned i;
    const struct wisp_netif *nif;
    pr(ctx, "counters:\n");
    for (i = 0; i < WISP_CTR_COUNT; i++) {
        if (all || s->ctr[i] != 0) {
            pr(ctx, "  %-24s %lu\n", counter_names[i], (unsigned long)s->ctr[i]);
        }
    }
    pr(ctx, "interfaces:\n");
    for (nif = s->netifs; nif != NULL; nif = nif->next) {
        char a[16];
        const struct wisp_netif_stats *st = &nif->st;
        pr(ctx, "  %-4s #%u %s/%s mtu %u rx %lu frames %lu bytes %lu drops, tx %lu frames %lu bytes %lu drops "
                "(emergency %lu, common %lu, queued %lu, queue high-water emergency %u common %u)\n",
           nif->name, (unsigned)nif->index, wisp_ip4_ntoa(nif->ip4, a),
           (nif->flags & WISP_NETIF_F_LINK_UP) ? "up" : "down", (unsigned)nif->mtu,
           (unsigned long)st->rx_frames, (unsigned long)st->rx_bytes, (unsigned long)st->rx_drops,
           (unsigned long)st->tx_frames, (unsigned long)st->tx_bytes, (unsigned long)st->tx_drops,
           (unsigned long)st->tx_emerg, (unsigned long)st->tx_common, (unsigned long)st->tx_queued,
           (unsigned)st->txq_emerg_high, (unsigned)st->txq_common_high);
    }
    pr(ctx, "pools:            used  high  fail  size\n");
    for (i = 0; i < WISP_POOL_COUNT; i++) {
        const struct wisp_pool *p = &s->pool[i];
        pr(ctx, "  %-14s %5u %5u %5lu %5u\n", p->name, (unsigned)p->used, (unsigned)p->high,
           (unsigned long)p->failed, (unsigned)p->count);
    }
}
