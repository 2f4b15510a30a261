/**
 * @file testutil.c
 * Shared helpers for wisp's tests: a recording test device, a manual
 * clock, frame builders and the pool-leak check.
 */
#include "testutil.h"
#include "wisp/sys.h"

#include <sched.h>
#include <stdio.h>
#include <stdlib.h>

const uint8_t tu_mac_self[6] = { 0x02, 0, 0, 0, 0, 0x02 };
const uint8_t tu_mac_peer[6] = { 0x02, 0, 0, 0, 0, 0x01 };

wisp_ip4_t tu_ip_self(void) { return wisp_ip4(198, 18, 0, 2); }
wisp_ip4_t tu_ip_peer(void) { return wisp_ip4(198, 18, 0, 1); }

static uint32_t tu_clock(void *ctx)
{
    return ((struct tu_env *)ctx)->now;
}

static wisp_err_t tu_transmit(struct wisp_dev *dev, struct wisp_pbuf *frame)
{
    struct tu_dev *d = (struct tu_dev *)dev->ctx;
    unsigned slot;
    if (d->busy) {
        return WISP_ERR_WOULDBLOCK;
    }
    d->sent++;
    if (d->count == TU_MAX_FRAMES) {
        return WISP_OK; /* recorder full: accepted, not recorded */
    }
    slot = (d->head + d->count) % TU_MAX_FRAMES;
    d->frame[slot] = malloc(frame->tot_len ? frame->tot_len : 1);
    assert_non_null(d->frame[slot]);
    d->flen[slot] = (uint16_t)wisp_pbuf_copy_out(frame, d->frame[slot], frame->tot_len, 0);
    d->count++;
    return WISP_OK;
}

static const struct wisp_dev_ops tu_dev_ops = { tu_transmit, NULL, NULL };

struct tu_env *tu_env_new(uint64_t seed)
{
    struct tu_env *e = calloc(1, sizeof(*e));
    struct wisp_config cfg;
    assert_non_null(e);
    e->s = malloc(sizeof(*e->s));
    assert_non_null(e->s);
    e->now = 1000;
    memset(&cfg, 0, sizeof(cfg));
    cfg.now_ms = tu_clock;
    cfg.clock_ctx = e;
    cfg.seed = seed;
    assert_int_equal(wisp_stack_init(e->s, &cfg), WISP_OK);
    e->dev.dev.ops = &tu_dev_ops;
    e->dev.dev.ctx = &e->dev;
    memcpy(e->mac, tu_mac_self, 6);
    assert_int_equal(wisp_netif_add_eth(e->s, &e->nif, "tu0", &e->dev.dev, e->mac, 1500), WISP_OK);
    wisp_netif_set_ip4(&e->nif, tu_ip_self(), wisp_ip4_prefix_mask(24), tu_ip_peer());
    wisp_netif_set_up(&e->nif, true);
    wisp_netif_set_link(&e->nif, true);
    tu_clear(e);
    return e;
}

void tu_clear(struct tu_env *e)
{
    while (e->dev.count > 0) {
        free(e->dev.frame[e->dev.head]);
        e->dev.frame[e->dev.head] = NULL;
        e->dev.head = (e->dev.head + 1) % TU_MAX_FRAMES;
        e->dev.count--;
    }
}

void tu_env_free(struct tu_env *e)
{
    unsigned i;
    tu_clear(e);
    wisp_stack_deinit(e->s);
    for (i = 0; i < WISP_POOL_COUNT; i++) {
        if (e->s->pool[i].used != 0) {
            print_error("leak: pool %s has %u elements in use after teardown\n", e->s->pool[i].name,
                        (unsigned)e->s->pool[i].used);
        }
    }
    assert_int_equal(wisp_stack_pools_in_use(e->s), 0);
    free(e->s);
    free(e);
}

void tu_advance(struct tu_env *e, uint32_t ms)
{
    uint32_t end = e->now + ms;
    unsigned guard = 0;
    wisp_stack_poll(e->s);
    while (wisp_time_before(e->now, end) && guard++ < 10000000u) {
        uint32_t due;
        if (!wisp_stack_next_deadline(e->s, &due) || !wisp_time_before(due, end)) {
            break;
        }
        /* Jump to the deadline (or one ms on, when it is already due). */
        e->now = wisp_time_before(e->now, due) ? due : e->now + 1;
        wisp_stack_poll(e->s);
    }
    e->now = end;
    wisp_stack_poll(e->s);
}

bool tu_inject(struct tu_env *e, const uint8_t *frame, size_t len)
{
    struct wisp_pbuf *p = wisp_pbuf_alloc_rx(e->s, (uint16_t)len);
    if (p == NULL) {
        return false;
    }
    assert_int_equal(wisp_pbuf_copy_in(p, frame, (uint16_t)len, 0), WISP_OK);
    wisp_dev_input(&e->dev.dev, p);
    return true;
}

int tu_pop(struct tu_env *e, uint8_t *buf, size_t cap)
{
    int n;
    if (e->dev.count == 0) {
        return -1;
    }
    n = e->dev.flen[e->dev.head];
    memcpy(buf, e->dev.frame[e->dev.head], (size_t)n < cap ? (size_t)n : cap);
    free(e->dev.frame[e->dev.head]);
    e->dev.frame[e->dev.head] = NULL;
    e->dev.head = (e->dev.head + 1) % TU_MAX_FRAMES;
    e->dev.count--;
    return n;
}

unsigned tu_pending(const struct tu_env *e)
{
    return e->dev.count;
}

size_t tu_eth(uint8_t *buf, const uint8_t dst[6], const uint8_t src[6], uint16_t type)
{
    memcpy(buf, dst, 6);
    memcpy(buf + WISP_ETH_OFF_SRC, src, 6);
    wisp_wr16(buf + WISP_ETH_OFF_TYPE, type);
    return WISP_ETH_HLEN;
}

size_t tu_ip4(uint8_t *buf, wisp_ip4_t src, wisp_ip4_t dst, uint8_t proto, uint16_t payload_len, uint16_t id,
              uint16_t flags_off, uint8_t ttl)
{
    buf[WISP_IP4_OFF_VHL] = 0x45;
    buf[WISP_IP4_OFF_TOS] = 0;
    wisp_wr16(buf + WISP_IP4_OFF_LEN, (uint16_t)(WISP_IP4_HLEN + payload_len));
    wisp_wr16(buf + WISP_IP4_OFF_ID, id);
    wisp_wr16(buf + WISP_IP4_OFF_FRAG, flags_off);
    buf[WISP_IP4_OFF_TTL] = ttl;
    buf[WISP_IP4_OFF_PROTO] = proto;
    wisp_wr16(buf + WISP_IP4_OFF_CSUM, 0);
    wisp_ip4_wr(buf + WISP_IP4_OFF_SRC, src);
    wisp_ip4_wr(buf + WISP_IP4_OFF_DST, dst);
    wisp_wr16(buf + WISP_IP4_OFF_CSUM, (uint16_t)~wisp_chksum_sum(buf, WISP_IP4_HLEN));
    return WISP_IP4_HLEN;
}

size_t tu_udp_frame_from(uint8_t *buf, const uint8_t dst_mac[6], wisp_ip4_t src, wisp_ip4_t dst, uint16_t sport,
                         uint16_t dport, const void *data, uint16_t len)
{
    uint8_t *u = buf + WISP_ETH_HLEN + WISP_IP4_HLEN;
    uint16_t sum;
    tu_eth(buf, dst_mac, tu_mac_peer, WISP_ETHTYPE_IP4);
    tu_ip4(buf + WISP_ETH_HLEN, src, dst, WISP_IP4_PROTO_UDP, (uint16_t)(WISP_UDP_HLEN + len), 0x1234, 0, 64);
    wisp_wr16(u, sport);
    wisp_wr16(u + WISP_UDP_OFF_DPORT, dport);
    wisp_wr16(u + WISP_UDP_OFF_LEN, (uint16_t)(WISP_UDP_HLEN + len));
    wisp_wr16(u + WISP_UDP_OFF_CSUM, 0);
    memcpy(u + WISP_UDP_HLEN, data, len);
    sum = wisp_chksum_add(wisp_chksum_pseudo4(src, dst, WISP_IP4_PROTO_UDP, (uint16_t)(WISP_UDP_HLEN + len)),
                          wisp_chksum_sum(u, WISP_UDP_HLEN + len));
    sum = (uint16_t)~sum;
    wisp_wr16(u + WISP_UDP_OFF_CSUM, sum == 0 ? 0xffff : sum);
    return WISP_ETH_HLEN + WISP_IP4_HLEN + WISP_UDP_HLEN + len;
}

size_t tu_udp_frame(uint8_t *buf, uint16_t sport, uint16_t dport, const void *data, uint16_t len)
{
    return tu_udp_frame_from(buf, tu_mac_self, tu_ip_peer(), tu_ip_self(), sport, dport, data, len);
}

size_t tu_ping_frame(uint8_t *buf, uint16_t id, uint16_t seq, const void *data, uint16_t len)
{
    uint8_t *m = buf + WISP_ETH_HLEN + WISP_IP4_HLEN;
    tu_eth(buf, tu_mac_self, tu_mac_peer, WISP_ETHTYPE_IP4);
    tu_ip4(buf + WISP_ETH_HLEN, tu_ip_peer(), tu_ip_self(), WISP_IP4_PROTO_ICMP, (uint16_t)(WISP_ICMP_HLEN + len),
           0x4321, 0, 64);
    m[WISP_ICMP_OFF_TYPE] = WISP_ICMP_ECHO;
    m[WISP_ICMP_OFF_CODE] = 0;
    wisp_wr16(m + WISP_ICMP_OFF_CSUM, 0);
    wisp_wr16(m + WISP_ICMP_OFF_ID, id);
    wisp_wr16(m + WISP_ICMP_OFF_SEQ, seq);
    memcpy(m + WISP_ICMP_HLEN, data, len);
    wisp_wr16(m + WISP_ICMP_OFF_CSUM, (uint16_t)~wisp_chksum_sum(m, WISP_ICMP_HLEN + len));
    return WISP_ETH_HLEN + WISP_IP4_HLEN + WISP_ICMP_HLEN + len;
}

void tu_arp_peer(struct tu_env *e)
{
    assert_int_equal(wisp_arp_add_static(&e->nif, tu_ip_peer(), tu_mac_peer), WISP_OK);
}

unsigned tu_tx_used(const struct tu_env *e)
{
    unsigned n = e->s->pool[WISP_POOL_PBUF_TX].used;
#if WISP_PBUF_SMALL_COUNT > 0
    n += e->s->pool[WISP_POOL_PBUF_SMALL].used;
#endif
    return n;
}

unsigned long tu_tx_allocs(const struct tu_env *e)
{
    unsigned long n = e->s->pool[WISP_POOL_PBUF_TX].allocs;
#if WISP_PBUF_SMALL_COUNT > 0
    n += e->s->pool[WISP_POOL_PBUF_SMALL].allocs;
#endif
    return n;
}

/* ------------------------------------------- waiting on a condition */

struct tu_poll tu_poll_start(uint32_t timeout_ms)
{
    struct tu_poll tp;
    tp.start = wisp_sys_now_ms();
    tp.timeout_ms = timeout_ms;
    tp.n = 0;
    return tp;
}

bool tu_poll_more(struct tu_poll *tp)
{
    if (wisp_sys_now_ms() - tp->start > tp->timeout_ms) {
        return false;
    }
    /* The poll interval of a condition wait (not a guess at how long
     * another thread needs): yield first, then look every millisecond. */
    if (tp->n < 20u) {
        sched_yield();
    } else {
        wisp_sys_sleep_ms(1);
    }
    tp->n++;
    return true;
}
