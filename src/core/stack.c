/**
 * @file stack.c
 * The stack instance: initialisation and teardown, injected clock and
 * random numbers, the event timer list, the poll entry point (timers and
 * loopback delivery), counters and the diagnostic dump.
 */
#define WISP_PRIVATE_ACCESS 1 /* library code: sees the private tier (wisp/arch.h) */
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

/* Time once per event (stack.h): the clock is read when the outermost
 * event begins and, outside any event, at each wisp_now(). */
uint32_t wisp_now(struct wisp_stack *s)
{
    WISP_CORE_ASSERT_OWNER(s);
    if (s->event_depth == 0u) {
        s->now = s->cfg.now_ms(s->cfg.clock_ctx);
    }
    return s->now;
}

void wisp_event_begin(struct wisp_stack *s)
{
    WISP_CORE_ASSERT_OWNER(s);
    WISP_ASSERT(s->event_depth < UINT16_MAX);
    if (s->event_depth++ == 0u) {
        s->now = s->cfg.now_ms(s->cfg.clock_ctx);
    }
}

void wisp_event_end(struct wisp_stack *s)
{
    WISP_CORE_ASSERT_OWNER(s);
    WISP_ASSERT(s->event_depth > 0u);
    if (s->event_depth > 0u) {
        s->event_depth--;
    }
}

/* ----------------------------------------------------- owner check */

void wisp_core_owner_check(const struct wisp_stack *s, const char *where)
{
    if (s == NULL || s->owner_check == NULL || s->owner_check(s->owner_ctx)) {
        return;
    }
    if (s->cfg.fail != NULL) {
        s->cfg.fail(s->cfg.fail_ctx, "called outside the core context of its stack", where);
        return;
    }
#if WISP_DEBUG
    /* line 0: "file" is the function (the unix port prints both). */
    wisp_assert_fail("called outside the core context of its stack (not on the stack thread, not through "
                     "wisp_tcpip_call(), not between wisp_tcpip_lock() and wisp_tcpip_unlock())",
                     where, 0);
#endif
}

static uint64_t splitmix64(uint64_t *x)
{
    uint64_t z = (*x += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

/* The seed's stream of 32-bit words, in the shape of the rand callback:
 * splitmix64 outputs, low half first (one copy of the generator, called
 * through the same loop as cfg.rand). */
struct seed_gen {
    uint64_t x, a;
    unsigned half;
};
static uint32_t seed_next(void *ctx)
{
    struct seed_gen *g = (struct seed_gen *)ctx;
    if (g->half == 0u) {
        g->a = splitmix64(&g->x);
    }
    g->half ^= 1u;
    return g->half != 0u ? (uint32_t)g->a : (uint32_t)(g->a >> 32);
}

/* SipHash-2-4 (Aumasson & Bernstein, "SipHash: a fast short-input PRF",
 * 2012): the keyed PRF behind every secret-dependent value of the stack.
 * The rounds are a loop (one copy of the SipRound), not unrolled: about a
 * third of the code on Cortex-M, for a few cycles per round. */
static uint64_t sip_rotl(uint64_t x, unsigned b)
{
    return (x << b) | (x >> (64u - b));
}

static void sip_rounds(uint64_t v[4], unsigned n)
{
    while (n-- > 0u) {
        v[0] += v[1];
        v[1] = sip_rotl(v[1], 13) ^ v[0];
        v[0] = sip_rotl(v[0], 32);
        v[2] += v[3];
        v[3] = sip_rotl(v[3], 16) ^ v[2];
        v[0] += v[3];
        v[3] = sip_rotl(v[3], 21) ^ v[0];
        v[2] += v[1];
        v[1] = sip_rotl(v[1], 17) ^ v[2];
        v[2] = sip_rotl(v[2], 32);
    }
}

uint64_t wisp_siphash24(const uint32_t key[4], const void *msg, size_t len)
{
    const uint8_t *m = msg;
    uint64_t k0 = (uint64_t)key[0] | ((uint64_t)key[1] << 32);
    uint64_t k1 = (uint64_t)key[2] | ((uint64_t)key[3] << 32);
    uint64_t v[4];
    size_t i = 0;

    v[0] = 0x736f6d6570736575ull ^ k0;
    v[1] = 0x646f72616e646f6dull ^ k1;
    v[2] = 0x6c7967656e657261ull ^ k0;
    v[3] = 0x7465646279746573ull ^ k1;
    for (;;) {
        /* 8-byte little-endian words; the last one holds the length
         * (mod 256) in its top byte and the 0..7 remaining bytes. */
        size_t n = len - i < 8u ? len - i : 8u;
        uint8_t b[8] = { 0 };
        uint32_t lo = 0, hi = 0;
        uint64_t w;
        unsigned j;
        memcpy(b, m + i, n);
        if (n < 8u) {
            b[7] = (uint8_t)len;
        }
        /* little-endian, assembled in two 32-bit halves (a 64-bit shift by
         * a variable count is a long sequence on 32-bit cores) */
        for (j = 8u; j-- > 0u;) {
            hi = (hi << 8) | (lo >> 24);
            lo = (lo << 8) | b[j];
        }
        w = (uint64_t)hi << 32 | lo;
        v[3] ^= w;
        sip_rounds(v, 2); /* c = 2 compression rounds */
        v[0] ^= w;
        if (n < 8u) {
            break;
        }
        i += 8u;
    }
    v[2] ^= 0xffu;
    sip_rounds(v, 4); /* d = 4 finalisation rounds */
    return v[0] ^ v[1] ^ v[2] ^ v[3];
}

/* Purpose byte of the TCP key (kept in s->tcp.key, not in s->key[]). */
#define STACK_KEY_TCP 0x80u

/* A per-purpose key: SipHash of "wisp", the purpose and the half under the
 * master secret (a PRF used as key-derivation function: knowing one
 * derived key tells nothing about the master or another key). */
static void stack_key_derive(const uint32_t master[4], uint8_t purpose, uint32_t out[4])
{
    uint8_t m[6] = { 'w', 'i', 's', 'p', 0, 0 };
    unsigned h;
    m[4] = purpose;
    for (h = 0; h < 2u; h++) {
        uint64_t x;
        m[5] = (uint8_t)h;
        x = wisp_siphash24(master, m, sizeof(m));
        out[2u * h] = (uint32_t)x;
        out[2u * h + 1u] = (uint32_t)(x >> 32);
    }
}

/* The keyed generators: SipHash of (counter, domain) under a key. The
 * counter never repeats within a stack's life (2^64), so every output is a
 * fresh PRF value: outputs say nothing about the key, about each other or
 * about the other keys (unlike a state generator such as xorshift, whose
 * state follows from a few outputs). */
static WISP_NOINLINE uint64_t stack_keyed_next(struct wisp_stack *s, unsigned key, uint8_t domain)
{
    uint8_t m[9];
    uint64_t c = s->rnd_ctr++;
    unsigned i;
    for (i = 0; i < 8u; i++) {
        m[i] = (uint8_t)(c >> (8u * i));
    }
    m[8] = domain;
    return wisp_siphash24(s->key[key], m, sizeof(m));
}

uint32_t wisp_random(struct wisp_stack *s)
{
    WISP_CORE_ASSERT_OWNER(s);
    return (uint32_t)stack_keyed_next(s, WISP_KEY_GEN, 0);
}

uint32_t wisp_random_id(struct wisp_stack *s, enum wisp_rid what)
{
    WISP_CORE_ASSERT_OWNER(s);
    return (uint32_t)stack_keyed_next(s, WISP_KEY_ID, (uint8_t)what);
}

/* RFC 6056 §3.3.4 (Algorithm 4, "double-hash port selection") with the
 * destination; §3.3.1 (Algorithm 1, random start) without one. */
uint16_t wisp_port_select(struct wisp_stack *s, uint8_t proto, wisp_ip4_t lip, wisp_ip4_t rip, uint16_t rport,
                          wisp_port_free_fn port_free, const void *ctx)
{
    const uint32_t num = (uint32_t)WISP_EPHEMERAL_MAX - (uint32_t)WISP_EPHEMERAL_MIN + 1u;
    uint32_t offset, count;
    uint16_t alg1 = 0, *next;
    WISP_CORE_ASSERT_OWNER(s);

    if (rip == WISP_IP4_ANY) {
        /* RFC 6056 §3.3.1: no destination yet (bind, a resolver's query
         * port): a start from the keyed generator, then linear probing. */
        offset = wisp_random_id(s, WISP_RID_PORT) % num;
        next = &alg1;
    } else {
        /* RFC 6056 §3.3.4: offset = F(local address, remote address,
         * remote port, secret_key1); index = G(..., secret_key2); the
         * search starts at offset + table[index] and each probe advances
         * table[index]. F and G: SipHash under the port key, told apart by
         * the last byte (separate keys in effect). A destination sees its
         * own ports advance one by one; other destinations' choices do
         * not show. */
        uint8_t m[12];
        wisp_ip4_wr(m, lip);
        wisp_ip4_wr(m + 4, rip);
        wisp_wr16(m + 8, rport);
        m[10] = proto;
        m[11] = 'F';
        offset = (uint32_t)(wisp_siphash24(s->key[WISP_KEY_PORT], m, sizeof(m)) % num);
        m[11] = 'G';
        next = &s->port_table[wisp_siphash24(s->key[WISP_KEY_PORT], m, sizeof(m)) % WISP_PORT_TABLE_LEN];
    }
    for (count = 0; count < num; count++) {
        uint16_t port = (uint16_t)(WISP_EPHEMERAL_MIN + (offset + *next) % num);
        (*next)++;
        if (port_free(s, port, ctx)) {
            return port;
        }
    }
    return 0;
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
    WISP_CORE_ASSERT_OWNER(s);
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
    WISP_CORE_ASSERT_OWNER(s);
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
    uint32_t now;
    WISP_CORE_ASSERT_OWNER(s);
    wisp_event_begin(s); /* one time for every timer and looped packet of this poll */
    now = wisp_now(s);
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
    wisp_event_end(s);
}

/* ------------------------------------------------------ init / deinit */

/* The instance's pools, in wisp_pool_id order: one table and one loop
 * (smaller than a wisp_pool_init call per pool). */
struct stack_pool_def {
    const char *name;
    uint32_t mem_off, mem_size; /* the storage: a member of struct wisp_stack */
    uint16_t elem_size, count;
};
#define STACK_POOL(id, nm, mem, esz, cnt) \
    [id] = { nm, (uint32_t)offsetof(struct wisp_stack, mem), (uint32_t)sizeof(((struct wisp_stack *)0)->mem), \
             (uint16_t)(esz), (uint16_t)(cnt) }
/* elem_size is kept in 16 bits */
WISP_STATIC_ASSERT(stack_pool_elem_fits, WISP_PBUF_ELEM_SIZE <= 0xffffu && WISP_PBUF_HDR_SIZE + WISP_PBUF_SMALL_SIZE <= 0xffffu);
/* the names: arrays of their own (a string literal in the table would pull
 * in the file's whole merged string section) */
static const char pn_pbuf_rx[] = "pbuf_rx";
static const char pn_pbuf_tx[] = "pbuf_tx";
static const char pn_pbuf_ref[] = "pbuf_ref";
#if WISP_PBUF_SMALL_COUNT > 0
static const char pn_pbuf_small[] = "pbuf_small";
#endif
#if WISP_UDP
static const char pn_udp_pcb[] = "udp_pcb";
#endif
#if WISP_TCP
static const char pn_tcp_pcb[] = "tcp_pcb";
static const char pn_tcp_listen[] = "tcp_listen";
static const char pn_tcp_seg[] = "tcp_seg";
#endif
#if WISP_TCP_OOSEQ_POOL
static const char pn_tcp_ooseq[] = "tcp_ooseq";
#endif
static const struct stack_pool_def stack_pools[WISP_POOL_COUNT] = {
    STACK_POOL(WISP_POOL_PBUF_RX, pn_pbuf_rx, mem_rx, WISP_PBUF_ELEM_SIZE, WISP_PBUF_RX_COUNT),
    STACK_POOL(WISP_POOL_PBUF_TX, pn_pbuf_tx, mem_tx, WISP_PBUF_ELEM_SIZE, WISP_PBUF_TX_COUNT),
    STACK_POOL(WISP_POOL_PBUF_REF, pn_pbuf_ref, mem_ref, WISP_PBUF_HDR_SIZE, WISP_PBUF_REF_COUNT),
#if WISP_PBUF_SMALL_COUNT > 0
    STACK_POOL(WISP_POOL_PBUF_SMALL, pn_pbuf_small, mem_small, WISP_PBUF_HDR_SIZE + WISP_PBUF_SMALL_SIZE, WISP_PBUF_SMALL_COUNT),
#endif
#if WISP_UDP
    STACK_POOL(WISP_POOL_UDP_PCB, pn_udp_pcb, mem_udp, sizeof(struct wisp_udp_pcb), WISP_UDP_PCB_COUNT),
#endif
#if WISP_TCP
    STACK_POOL(WISP_POOL_TCP_PCB, pn_tcp_pcb, mem_tcp_pcb, sizeof(struct wisp_tcp_pcb), WISP_TCP_PCB_COUNT),
    STACK_POOL(WISP_POOL_TCP_LISTEN, pn_tcp_listen, mem_tcp_listen, sizeof(struct wisp_tcp_listen), WISP_TCP_LISTEN_COUNT),
    STACK_POOL(WISP_POOL_TCP_SEG, pn_tcp_seg, mem_tcp_seg, sizeof(struct wisp_tcp_seg), WISP_TCP_SEG_COUNT),
#endif
#if WISP_TCP_OOSEQ_POOL
    STACK_POOL(WISP_POOL_TCP_OOSEQ, pn_tcp_ooseq, mem_tcp_ooseq, sizeof(struct wisp_tcp_ooq), WISP_TCP_OOSEQ_COUNT),
#endif
};

#if WISP_LOOPBACK
/* wisp_stack_init zeroes the instance up to mem_rx: the loopback netif too */
WISP_STATIC_ASSERT(stack_loopif_zeroed, offsetof(struct wisp_stack, loopif) < offsetof(struct wisp_stack, mem_rx));
#endif

wisp_err_t wisp_stack_init(struct wisp_stack *s, const struct wisp_config *cfg)
{
    uint32_t master[4];
    volatile uint32_t *wipe = master;
    unsigned i;
    if (s == NULL || cfg == NULL || cfg->now_ms == NULL) {
        return WISP_ERR_ARG;
    }
    memset(s, 0, offsetof(struct wisp_stack, mem_rx));
    s->cfg = *cfg;
    /* The master secret: 128 bits of the injected entropy source (the
     * only time it is called), or from the seed (deterministic runs). */
    {
        uint32_t (*rnd)(void *) = cfg->rand;
        void *ctx = cfg->rand_ctx;
        struct seed_gen g;
        if (rnd == NULL) {
            g.x = cfg->seed;
            g.a = 0;
            g.half = 0;
            rnd = seed_next;
            ctx = &g;
        }
        for (i = 0; i < 4u; i++) {
            master[i] = rnd(ctx);
        }
    }
    for (i = 0; i < WISP_KEY_COUNT; i++) {
        stack_key_derive(master, (uint8_t)i, s->key[i]);
    }
    wisp_now(s);

    for (i = 0; i < WISP_POOL_COUNT; i++) {
        const struct stack_pool_def *d = &stack_pools[i];
        wisp_pool_init(&s->pool[i], d->name, (uint8_t *)s + d->mem_off, d->mem_size, d->elem_size, d->count);
#if WISP_ALLOC_FAIL_INJECT
        s->pool[i].inject = &s->alloc_inject; /* zeroed above: no failure armed */
#endif
        s->pool[i].stack = s; /* pools know their stack: pbufs find their owner */
    }

    /* ARP's table and the UDP PCB list start empty: zeroed above */
    wisp_ip4_init(s);
    wisp_icmp_init(s);
#if WISP_TCP
    wisp_tcp_init(s);
    /* RFC 6528 §3: the secret key of F (ISNs), also keying the timestamp
     * offsets and SYN cookies (tcp.c, domain-separated). */
    stack_key_derive(master, STACK_KEY_TCP, s->tcp.key);
    {
        /* the seed of the bucket hash of the SYN-queue / TIME-WAIT index
         * (tcp_synq.c): from the key just derived, so buckets cannot be
         * aimed at */
        static const uint8_t dom[] = { 'w', 'i', 's', 'p', '-', 'h', 'i', 'd', 'x' };
        s->tcp.hseed = (uint32_t)wisp_siphash24(s->tcp.key, dom, sizeof(dom));
    }
#endif
    for (i = 0; i < 4u; i++) {
        wipe[i] = 0; /* the master secret is not kept */
    }

#if WISP_LOOPBACK
    {
        struct wisp_netif *lo = &s->loopif; /* zeroed above (before mem_rx) */
        lo->stack = s;
        memcpy(lo->name, "lo", 3);
        lo->flags = WISP_NETIF_F_UP | WISP_NETIF_F_LINK_UP | WISP_NETIF_F_LOOPBACK;
        lo->mtu = 65535u;
        lo->ip4.addr = wisp_ip4(127, 0, 0, 1);
        lo->ip4.mask = wisp_ip4_prefix_mask(8);
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
    WISP_CORE_ASSERT_OWNER(s);
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
    WISP_CORE_ASSERT_OWNER(s);
    for (i = 0; i < WISP_POOL_COUNT; i++) {
        n += s->pool[i].used;
    }
    return n;
}

void wisp_stack_dump(const struct wisp_stack *s, wisp_print_fn pr, void *ctx, bool all)
{
    unsigned i;
    const struct wisp_netif *nif;
    WISP_CORE_ASSERT_OWNER(s);
#if WISP_STATS
    pr(ctx, "counters:\n");
    for (i = 0; i < WISP_CTR_COUNT; i++) {
        if (all || s->ctr[i] != 0) {
            pr(ctx, "  %-24s %lu\n", counter_names[i], (unsigned long)s->ctr[i]);
        }
    }
#else
    WISP_UNUSED(all);
#endif
    pr(ctx, "interfaces:\n");
    for (nif = s->netifs; nif != NULL; nif = nif->next) {
        char a[16];
        const struct wisp_netif_stats *st = &nif->st;
        pr(ctx, "  %-4s #%u %s/%s mtu %u rx %lu frames %lu bytes %lu drops, tx %lu frames %lu bytes %lu drops "
                "(emergency %lu, common %lu, queued %lu, queue high-water emergency %u common %u)\n",
           nif->name, (unsigned)nif->index, wisp_ip4_ntoa(nif->ip4.addr, a),
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

#if WISP_STATS && WISP_STATS_OUTLINE
void wisp_ctr_inc(struct wisp_stack *s, unsigned id)
{
    s->ctr[id]++;
}
#endif

uint32_t wisp_stack_counter(const struct wisp_stack *s, unsigned id)
{
    WISP_CORE_ASSERT_OWNER(s);
#if WISP_STATS
    return id < (unsigned)WISP_CTR_COUNT ? s->ctr[id] : 0u;
#else
    WISP_UNUSED(s);
    WISP_UNUSED(id);
    return 0u;
#endif
}

bool wisp_stack_pool_stats(const struct wisp_stack *s, unsigned id, struct wisp_pool_stats *st)
{
    const struct wisp_pool *pl;
    WISP_CORE_ASSERT_OWNER(s);
    if (id >= (unsigned)WISP_POOL_COUNT || st == NULL) {
        return false;
    }
    pl = &s->pool[id];
    st->name = pl->name;
    st->elem_size = pl->elem_size;
    st->count = pl->count;
    st->used = pl->used;
    st->high = pl->high;
    st->failed = pl->failed;
    st->allocs = pl->allocs;
    return true;
}

unsigned wisp_stack_pool_used(const struct wisp_stack *s, unsigned id)
{
    WISP_CORE_ASSERT_OWNER(s);
    return id < (unsigned)WISP_POOL_COUNT ? s->pool[id].used : 0u;
}

const char *wisp_stack_pool_name(const struct wisp_stack *s, unsigned id)
{
    WISP_CORE_ASSERT_OWNER(s);
    return id < (unsigned)WISP_POOL_COUNT ? s->pool[id].name : NULL;
}

struct wisp_netif *wisp_stack_netif_next(const struct wisp_stack *s, const struct wisp_netif *prev)
{
    WISP_CORE_ASSERT_OWNER(s);
    return prev == NULL ? s->netifs : prev->next;
}

#if WISP_TCP
const struct wisp_tcp_pcb *wisp_stack_tcp_next(const struct wisp_stack *s, const struct wisp_tcp_pcb *prev)
{
    WISP_CORE_ASSERT_OWNER(s);
    return prev == NULL ? s->tcp.pcbs : prev->next;
}
#endif
