/**
 * @file fuzz_env.c
 * The fuzz harnesses' stack environment: recording device, manual clock,
 * frame builders and the pool checks (see fuzz_env.h).
 */
#include "fuzz_env.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const uint8_t fz_mac_self[6] = { 0x02, 0, 0, 0, 0, 0x02 };
const uint8_t fz_mac_peer[6] = { 0x02, 0, 0, 0, 0, 0x01 };

wisp_ip4_t fz_ip_self(void) { return wisp_ip4(198, 18, 0, 2); }
wisp_ip4_t fz_ip_peer(void) { return wisp_ip4(198, 18, 0, 1); }

void fz_fail(const char *fmt, ...)
{
    va_list ap;
    fflush(stdout);
    fprintf(stderr, "fuzz check failed: ");
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fprintf(stderr, "\n");
    fflush(stderr);
    abort();
}

static int fz_print(void *ctx, const char *fmt, ...)
{
    va_list ap;
    int n;
    va_start(ap, fmt);
    n = vfprintf((FILE *)ctx, fmt, ap);
    va_end(ap);
    return n;
}

static uint32_t fz_clock(void *ctx)
{
    return ((struct fz_env *)ctx)->now;
}

static wisp_err_t fz_transmit(struct wisp_dev *dev, struct wisp_pbuf *frame)
{
    struct fz_env *e = (struct fz_env *)dev->ctx;
    unsigned slot;
    e->sent++;
    if (e->count == FZ_REC_MAX) { /* drop the oldest */
        e->head = (e->head + 1) % FZ_REC_MAX;
        e->count--;
    }
    slot = (e->head + e->count) % FZ_REC_MAX;
    e->flen[slot] = wisp_pbuf_copy_out(frame, e->frame[slot], FZ_FRAME_MAX, 0);
    e->count++;
    return WISP_OK;
}

static const struct wisp_dev_ops fz_dev_ops = { fz_transmit, NULL, NULL };

void fz_env_init(struct fz_env *e, uint64_t seed, int addressed)
{
    static struct wisp_stack *stack; /* test harness only: one per process, re-initialised */
    struct wisp_config cfg;
    if (stack == NULL) {
        stack = malloc(sizeof(*stack));
        if (stack == NULL) {
            fz_fail("out of memory");
        }
    }
    e->s = stack;
    e->now = 1000;
    e->head = e->count = 0;
    e->sent = 0;
    memset(&cfg, 0, sizeof(cfg));
    cfg.now_ms = fz_clock;
    cfg.clock_ctx = e;
    cfg.seed = seed;
    if (wisp_stack_init(e->s, &cfg) != WISP_OK) {
        fz_fail("wisp_stack_init");
    }
    memset(&e->dev, 0, sizeof(e->dev));
    e->dev.ops = &fz_dev_ops;
    e->dev.ctx = e;
    memcpy(e->mac, fz_mac_self, 6);
    if (wisp_netif_add_eth(e->s, &e->nif, "fz0", &e->dev, e->mac, 1500) != WISP_OK) {
        fz_fail("wisp_netif_add_eth");
    }
    if (addressed) {
        wisp_netif_set_ip4(&e->nif, fz_ip_self(), wisp_ip4_prefix_mask(24), fz_ip_peer());
    }
    wisp_netif_set_up(&e->nif, true);
    wisp_netif_set_link(&e->nif, true);
    fz_clear(e);
}

void fz_env_fini(struct fz_env *e)
{
    unsigned i;
    fz_clear(e);
    if (getenv("FUZZ_VERBOSE") != NULL) { /* what the input reached: the stack's counters */
        wisp_stack_dump(e->s, fz_print, stderr, false);
    }
    wisp_stack_deinit(e->s);
    for (i = 0; i < WISP_POOL_COUNT; i++) {
        if (e->s->pool[i].used != 0) {
            fz_fail("leak: pool %s has %u elements in use after teardown", e->s->pool[i].name,
                    (unsigned)e->s->pool[i].used);
        }
    }
}

void fz_check_pools(struct fz_env *e, unsigned baseline, const char *where)
{
    unsigned i, use = wisp_stack_pools_in_use(e->s);
    if (use != baseline) {
        const struct wisp_tcp_pcb *t = NULL;
        for (i = 0; i < WISP_POOL_COUNT; i++) {
            fprintf(stderr, "  pool %s: %u in use\n", e->s->pool[i].name, (unsigned)e->s->pool[i].used);
        }
        while ((t = wisp_stack_tcp_next(e->s, t)) != NULL) {
            struct wisp_tcp_info inf;
            wisp_tcp_get_info(t, &inf);
            fprintf(stderr, "  tcp pcb %s: snd_wnd %u unacked %u retransmits %u timeouts %u rto %u ms\n",
                    wisp_tcp_state_str(inf.state), (unsigned)inf.snd_wnd, (unsigned)inf.unacked,
                    (unsigned)inf.retransmits, (unsigned)inf.timeouts, (unsigned)inf.rto_ms);
        }
        for (i = 0; i < WISP_CTR_COUNT; i++) {
            if (e->s->ctr[i] != 0) {
                fprintf(stderr, "  counter %s %u\n", wisp_counter_name(i), (unsigned)e->s->ctr[i]);
            }
        }
        fz_fail("%s: %u pool elements in use, baseline %u", where, use, baseline);
    }
}

void fz_advance(struct fz_env *e, uint32_t ms)
{
    uint32_t end = e->now + ms;
    unsigned guard = 0;
    wisp_stack_poll(e->s);
    while (wisp_time_before(e->now, end)) {
        uint32_t due;
        if (!wisp_stack_next_deadline(e->s, &due) || !wisp_time_before(due, end)) {
            break;
        }
        if (++guard > 1000000u) { /* timers re-arming at "now" forever: a hang */
            fz_fail("timers do not make progress (next deadline %u, now %u)", (unsigned)due, (unsigned)e->now);
        }
        e->now = wisp_time_before(e->now, due) ? due : e->now + 1;
        wisp_stack_poll(e->s);
    }
    e->now = end;
    wisp_stack_poll(e->s);
}

int fz_inject(struct fz_env *e, const uint8_t *frame, size_t len)
{
    struct wisp_pbuf *p;
    if (len == 0 || len > 0xffffu) {
        return 0;
    }
    p = wisp_pbuf_alloc_rx(e->s, (uint16_t)len);
    if (p == NULL) {
        return 0;
    }
    if (wisp_pbuf_copy_in(p, frame, (uint16_t)len, 0) != WISP_OK) {
        fz_fail("pbuf_copy_in");
    }
    wisp_dev_input(&e->dev, p);
    return 1;
}

int fz_pop(struct fz_env *e, uint8_t *buf, size_t cap)
{
    int n;
    if (e->count == 0) {
        return -1;
    }
    n = e->flen[e->head];
    memcpy(buf, e->frame[e->head], (size_t)n < cap ? (size_t)n : cap);
    e->head = (e->head + 1) % FZ_REC_MAX;
    e->count--;
    return n;
}

void fz_clear(struct fz_env *e)
{
    e->head = e->count = 0;
}

void fz_arp_peer(struct fz_env *e)
{
    if (wisp_arp_add_static(&e->nif, fz_ip_peer(), fz_mac_peer) != WISP_OK) {
        fz_fail("arp_add_static");
    }
}

size_t fz_eth_ip4(uint8_t *buf, const uint8_t dst_mac[6], wisp_ip4_t src, wisp_ip4_t dst, uint8_t proto,
                  uint16_t len)
{
    uint8_t *ip = buf + WISP_ETH_HLEN;
    memcpy(buf, dst_mac, 6);
    memcpy(buf + WISP_ETH_OFF_SRC, fz_mac_peer, 6);
    wisp_wr16(buf + WISP_ETH_OFF_TYPE, WISP_ETHTYPE_IP4);
    ip[WISP_IP4_OFF_VHL] = 0x45;
    ip[WISP_IP4_OFF_TOS] = 0;
    wisp_wr16(ip + WISP_IP4_OFF_LEN, (uint16_t)(WISP_IP4_HLEN + len));
    wisp_wr16(ip + WISP_IP4_OFF_ID, 0x1234);
    wisp_wr16(ip + WISP_IP4_OFF_FRAG, 0);
    ip[WISP_IP4_OFF_TTL] = 64;
    ip[WISP_IP4_OFF_PROTO] = proto;
    wisp_wr16(ip + WISP_IP4_OFF_CSUM, 0);
    wisp_ip4_wr(ip + WISP_IP4_OFF_SRC, src);
    wisp_ip4_wr(ip + WISP_IP4_OFF_DST, dst);
    wisp_wr16(ip + WISP_IP4_OFF_CSUM, (uint16_t)~wisp_chksum_sum(ip, WISP_IP4_HLEN));
    return WISP_ETH_HLEN + WISP_IP4_HLEN;
}

size_t fz_udp_frame(uint8_t *buf, const uint8_t dst_mac[6], wisp_ip4_t src, wisp_ip4_t dst, uint16_t sport,
                    uint16_t dport, const uint8_t *data, uint16_t len)
{
    uint8_t *u = buf + WISP_ETH_HLEN + WISP_IP4_HLEN;
    uint16_t sum;
    uint16_t ulen = (uint16_t)(WISP_UDP_HLEN + len);
    fz_eth_ip4(buf, dst_mac, src, dst, WISP_IP4_PROTO_UDP, ulen);
    wisp_wr16(u, sport);
    wisp_wr16(u + WISP_UDP_OFF_DPORT, dport);
    wisp_wr16(u + WISP_UDP_OFF_LEN, ulen);
    wisp_wr16(u + WISP_UDP_OFF_CSUM, 0);
    if (len > 0) {
        memcpy(u + WISP_UDP_HLEN, data, len);
    }
    sum = (uint16_t)~wisp_chksum_add(wisp_chksum_pseudo4(src, dst, WISP_IP4_PROTO_UDP, ulen), wisp_chksum_sum(u, ulen));
    wisp_wr16(u + WISP_UDP_OFF_CSUM, sum == 0 ? 0xffff : sum);
    return WISP_ETH_HLEN + WISP_IP4_HLEN + ulen;
}

size_t fz_tcp_frame(uint8_t *buf, uint16_t sport, uint16_t dport, uint32_t seq, uint32_t ack, uint8_t flags,
                    uint16_t wnd, const uint8_t *opt, uint8_t optlen, const uint8_t *data, uint16_t len)
{
    uint8_t *t = buf + WISP_ETH_HLEN + WISP_IP4_HLEN;
    uint8_t olen = (uint8_t)((optlen > WISP_TCP_MAX_OPTLEN ? WISP_TCP_MAX_OPTLEN : optlen + 3u) & ~3u);
    uint16_t tlen;
    if (optlen > WISP_TCP_MAX_OPTLEN) {
        optlen = WISP_TCP_MAX_OPTLEN;
    }
    tlen = (uint16_t)(WISP_TCP_HLEN + olen + len);
    fz_eth_ip4(buf, fz_mac_self, fz_ip_peer(), fz_ip_self(), WISP_IP4_PROTO_TCP, tlen);
    wisp_wr16(t, sport);
    wisp_wr16(t + WISP_TCP_OFF_DPORT, dport);
    wisp_wr32(t + WISP_TCP_OFF_SEQ, seq);
    wisp_wr32(t + WISP_TCP_OFF_ACK, ack);
    t[WISP_TCP_OFF_HLEN] = (uint8_t)(((WISP_TCP_HLEN + olen) / 4u) << 4);
    t[WISP_TCP_OFF_FLAGS] = flags;
    wisp_wr16(t + WISP_TCP_OFF_WND, wnd);
    wisp_wr16(t + WISP_TCP_OFF_CSUM, 0);
    wisp_wr16(t + WISP_TCP_OFF_URP, 0);
    memset(t + WISP_TCP_HLEN, 0, olen); /* EOL padding */
    if (optlen > 0) {
        memcpy(t + WISP_TCP_HLEN, opt, optlen);
    }
    if (len > 0) {
        memcpy(t + WISP_TCP_HLEN + olen, data, len);
    }
    wisp_wr16(t + WISP_TCP_OFF_CSUM,
              (uint16_t)~wisp_chksum_add(wisp_chksum_pseudo4(fz_ip_peer(), fz_ip_self(), WISP_IP4_PROTO_TCP, tlen),
                                         wisp_chksum_sum(t, tlen)));
    return WISP_ETH_HLEN + WISP_IP4_HLEN + tlen;
}

int fz_parse_tcp(const uint8_t *f, int n, struct fz_seg *sg)
{
    const uint8_t *ip = f + WISP_ETH_HLEN, *t;
    unsigned ihl, thl, tot, i;
    if (n < (int)(WISP_ETH_HLEN + WISP_IP4_HLEN + WISP_TCP_HLEN) ||
        wisp_rd16(f + WISP_ETH_OFF_TYPE) != WISP_ETHTYPE_IP4 || ip[WISP_IP4_OFF_PROTO] != WISP_IP4_PROTO_TCP) {
        return 0;
    }
    ihl = wisp_ip4_hdr_hlen(ip);
    tot = wisp_rd16(ip + WISP_IP4_OFF_LEN);
    if (ihl < WISP_IP4_HLEN || tot < ihl + WISP_TCP_HLEN || WISP_ETH_HLEN + tot > (unsigned)n) {
        return 0;
    }
    t = ip + ihl;
    thl = (t[WISP_TCP_OFF_HLEN] >> 4) * 4u;
    if (thl < WISP_TCP_HLEN || ihl + thl > tot) {
        return 0;
    }
    memset(sg, 0, sizeof(*sg));
    sg->sport = wisp_rd16(t);
    sg->dport = wisp_rd16(t + WISP_TCP_OFF_DPORT);
    sg->seq = wisp_rd32(t + WISP_TCP_OFF_SEQ);
    sg->ack = wisp_rd32(t + WISP_TCP_OFF_ACK);
    sg->flags = t[WISP_TCP_OFF_FLAGS];
    sg->wnd = wisp_rd16(t + WISP_TCP_OFF_WND);
    sg->len = (uint16_t)(tot - ihl - thl);
    for (i = WISP_TCP_HLEN; i < thl;) {
        uint8_t k = t[i];
        if (k == 0) {
            break;
        }
        if (k == 1) {
            i++;
            continue;
        }
        if (i + 1 >= thl || t[i + 1] < 2 || i + t[i + 1] > thl) {
            break;
        }
        if (k == 8 && t[i + 1] == 10) {
            sg->tsval = wisp_rd32(t + i + 2);
            sg->has_ts = 1;
        }
        i += t[i + 1];
    }
    return 1;
}

int fz_handshake(struct fz_env *e, uint16_t port, uint16_t pport, uint32_t peer_iss, uint32_t *stack_nxt,
                 uint32_t *peer_nxt)
{
    static uint8_t buf[2048];
    static const uint8_t mss[4] = { 2, 4, 0x05, 0xb4 };
    struct fz_seg sg;
    size_t n;
    int k, got = 0;
    n = fz_tcp_frame(buf, pport, port, peer_iss, 0, FZ_SYN, 65535, mss, 4, NULL, 0);
    fz_inject(e, buf, n);
    while ((k = fz_pop(e, buf, sizeof(buf))) >= 0) {
        if (fz_parse_tcp(buf, k, &sg) && sg.dport == pport && (sg.flags & (FZ_SYN | FZ_ACK)) == (FZ_SYN | FZ_ACK) &&
            sg.ack == peer_iss + 1u) {
            *stack_nxt = sg.seq + 1u;
            got = 1;
        }
    }
    if (!got) {
        return 0;
    }
    *peer_nxt = peer_iss + 1u;
    n = fz_tcp_frame(buf, pport, port, *peer_nxt, *stack_nxt, FZ_ACK, 65535, NULL, 0, NULL, 0);
    fz_inject(e, buf, n);
    fz_clear(e);
    return 1;
}
