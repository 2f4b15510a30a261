/**
 * @file fuzz_arp.c
 * Fuzz harness: ARP (src/core/arp.c) between received ARP packets and the
 * stack's own use of the cache.
 *
 * One stack (fuzz_env, 198.18.0.2/24, gateway 198.18.0.1) with a UDP PCB;
 * an address-conflict watch (wisp_arp_watch, as DHCP uses it) is
 * registered. Input: records of 4 bytes [op][a][b][c]:
 *  - op 0..3: a received ARP packet built from selectors: operation
 *    (request, reply, other), sender and target IP (ours, the peer, an
 *    on-link host .10+k, 0.0.0.0, broadcast, off-link, multicast), sender
 *    MAC (peer, host k, ours, broadcast, multicast), Ethernet destination
 *    (ours, broadcast, other); with op & 2 the hardware/protocol type and
 *    lengths come from c (malformed headers) and a short or padded length;
 *  - op 4: a UDP datagram from the stack to an on-link host .10+k, the
 *    peer (gateway, used for off-link), or broadcast: ARP resolution,
 *    queueing (WISP_ARP_QUEUE_LEN) and the table's eviction;
 *  - op 5: wisp_arp_request / announce / probe / add_static / flush /
 *    lookup;
 *  - op 6: a raw frame of the next c bytes of input (type ARP);
 *  - op 7: advance the clock (retries, ageing, give-up).
 * Checks after every record: the table never holds more than its size,
 * a resolved entry never carries a broadcast/multicast or our own MAC.
 * At the end: flush, 20 minutes, pools back at the baseline, then every
 * pool at zero after the teardown.
 */
#include <stdio.h>
#include <string.h>

#include "fuzz_env.h"

static struct fz_env arp_env;
static unsigned arp_watch_calls;

static void arp_watch_fn(void *arg, struct wisp_netif *nif, uint16_t op, const uint8_t sha[6], wisp_ip4_t spa,
                         wisp_ip4_t tpa)
{
    (void)arg;
    (void)nif;
    (void)op;
    (void)spa;
    (void)tpa;
    if (memcmp(sha, fz_mac_self, 6) == 0) {
        fz_fail("arp: watch called for a packet with our own sender MAC");
    }
    arp_watch_calls++;
}

static wisp_ip4_t arp_ip(uint8_t sel)
{
    switch (sel & 7u) {
    case 0: return fz_ip_self();
    case 1: return fz_ip_peer();
    case 2:
    case 3: return wisp_ip4(198, 18, 0, (uint8_t)(10u + ((sel >> 3) & 15u)));
    case 4: return WISP_IP4_ANY;
    case 5: return wisp_ip4(198, 18, 0, 255);
    case 6: return wisp_ip4(203, 0, 113, (uint8_t)(sel >> 3));
    default: return wisp_ip4(224, 0, 0, 251);
    }
}

static void arp_mac(uint8_t sel, uint8_t mac[6])
{
    static const uint8_t bcast[6] = { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff };
    static const uint8_t mcast[6] = { 0x01, 0x00, 0x5e, 0x00, 0x00, 0xfb };
    switch (sel & 7u) {
    case 0:
    case 1: memcpy(mac, fz_mac_peer, 6); break;
    case 2:
    case 3:
        memcpy(mac, fz_mac_peer, 6);
        mac[5] = (uint8_t)(0x10u + ((sel >> 3) & 15u));
        break;
    case 4: memcpy(mac, fz_mac_self, 6); break;
    case 5: memcpy(mac, bcast, 6); break;
    case 6: memcpy(mac, mcast, 6); break;
    default: memset(mac, 0, 6); break;
    }
}

static void arp_packet(struct fz_env *e, uint8_t op, uint8_t a, uint8_t b, uint8_t c)
{
    uint8_t f[64];
    size_t n = 42;
    static const uint16_t ops[4] = { 1, 2, 1, 3 };
    memset(f, 0, sizeof(f));
    /* Ethernet destination: ours, broadcast, another host */
    switch (c & 3u) {
    case 0: memcpy(f, fz_mac_self, 6); break;
    case 3:
        memcpy(f, fz_mac_peer, 6);
        f[5] = 0x77;
        break;
    default: memset(f, 0xff, 6); break;
    }
    arp_mac(a, f + 6);
    wisp_wr16(f + 12, WISP_ETHTYPE_ARP);
    wisp_wr16(f + 14, 1);
    wisp_wr16(f + 16, WISP_ETHTYPE_IP4);
    f[18] = 6;
    f[19] = 4;
    wisp_wr16(f + 20, ops[(c >> 2) & 3u]);
    arp_mac(a, f + 22);
    wisp_ip4_wr(f + 28, arp_ip(b));
    if (c & 0x10u) {
        arp_mac((uint8_t)(a >> 3), f + 32);
    }
    wisp_ip4_wr(f + 38, arp_ip((uint8_t)(b >> 3)));
    if (op & 2u) { /* malformed header / length */
        switch ((c >> 5) & 7u) {
        case 0: wisp_wr16(f + 14, 6); break;       /* IEEE 802 hardware */
        case 1: wisp_wr16(f + 16, 0x86dd); break;  /* IPv6 protocol */
        case 2: f[18] = 8; break;
        case 3: f[19] = 16; break;
        case 4: n = 14u + (a & 31u); break;        /* truncated */
        case 5: n = 60; break;                     /* Ethernet minimum, padded */
        case 6: wisp_wr16(f + 20, (uint16_t)(a << 8 | b)); break;
        default: n = 64; break;
        }
    }
    fz_inject(e, f, n);
}

static void arp_send_udp(struct fz_env *e, struct wisp_udp_pcb *pcb, uint8_t a, uint8_t b)
{
    struct wisp_pbuf *p;
    wisp_ipaddr_t dst = wisp_ipaddr4(arp_ip(a));
    uint16_t len = (uint16_t)(b * 8u);
    p = wisp_pbuf_alloc(e->s, (enum wisp_pbuf_layer)(WISP_LAYER_IP + WISP_UDP_HLEN), len, WISP_PBUF_POOL);
    if (p == NULL) {
        return;
    }
    (void)wisp_udp_sendto(pcb, p, &dst, 9);
    wisp_pbuf_free(p);
}

static void arp_check(struct fz_env *e)
{
    unsigned i, used = 0;
    const struct wisp_arp *t = &e->s->arp;
    for (i = 0; i < WISP_ARP_TABLE_SIZE; i++) {
        const struct wisp_arp_entry *en = &t->e[i];
        if (en->state == WISP_ARP_EMPTY) {
            continue;
        }
        used++;
        if (en->qlen > WISP_ARP_QUEUE_LEN) {
            fz_fail("arp: entry %u queues %u packets", i, en->qlen);
        }
        if (en->state == WISP_ARP_STABLE && ((en->mac[0] & 1u) != 0 || memcmp(en->mac, fz_mac_self, 6) == 0)) {
            fz_fail("arp: entry %u resolved to a group or our own MAC", i);
        }
    }
    if (used != wisp_arp_count(e->s)) {
        fz_fail("arp: count %u, entries %u", wisp_arp_count(e->s), used);
    }
}

int fuzz_arp_one(const uint8_t *data, size_t size);

int fuzz_arp_one(const uint8_t *data, size_t size)
{
    static const uint32_t adv[8] = { 0, 10, 500, 1000, 5000, 30000, 300000, 1200000 };
    struct fz_env *e = &arp_env;
    struct wisp_arp_watch w;
    struct wisp_udp_pcb *pcb;
    unsigned baseline;
    size_t off = 0;

    arp_watch_calls = 0;
    fz_env_init(e, 4, 1);
    pcb = wisp_udp_new(e->s);
    if (pcb == NULL || wisp_udp_bind(pcb, NULL, 5353) != WISP_OK) {
        fz_fail("arp: udp setup");
    }
    memset(&w, 0, sizeof(w));
    w.fn = arp_watch_fn;
    wisp_arp_watch_add(e->s, &w);
    baseline = wisp_stack_pools_in_use(e->s);

    while (off + 4 <= size) {
        uint8_t op = data[off], a = data[off + 1], b = data[off + 2], c = data[off + 3];
        uint8_t mac[6];
        off += 4;
        switch (op & 7u) {
        case 0:
        case 1:
        case 2:
        case 3: arp_packet(e, op, a, b, c); break;
        case 4: arp_send_udp(e, pcb, a, b); break;
        case 5:
            switch (c & 7u) {
            case 0: (void)wisp_arp_request(&e->nif, arp_ip(a)); break;
            case 1: (void)wisp_arp_announce(&e->nif); break;
            case 2: (void)wisp_arp_probe(&e->nif, arp_ip(a)); break;
            case 3:
                arp_mac(b, mac);
                (void)wisp_arp_add_static(&e->nif, arp_ip(a), mac);
                break;
            case 4: wisp_arp_flush(e->s, (b & 1u) ? 0 : e->nif.index); break;
            case 5: (void)wisp_arp_lookup(e->s, e->nif.index, arp_ip(a), mac); break;
            case 6:
                wisp_netif_set_link(&e->nif, false); /* flushes ARP and the transmit queue */
                wisp_netif_set_link(&e->nif, true);
                break;
            default: wisp_arp_watch_remove(e->s, &w); break;
            }
            break;
        case 6: {
            uint8_t f[128];
            size_t n = c < size - off ? c : size - off;
            if (n > sizeof(f) - 14) {
                n = sizeof(f) - 14;
            }
            memcpy(f, (a & 1u) ? fz_mac_self : (const uint8_t *)"\xff\xff\xff\xff\xff\xff", 6);
            memcpy(f + 6, fz_mac_peer, 6);
            wisp_wr16(f + 12, WISP_ETHTYPE_ARP);
            memcpy(f + 14, data + off, n);
            off += n;
            fz_inject(e, f, 14 + n);
            break;
        }
        default: fz_advance(e, adv[a & 7u] + b); break;
        }
        fz_clear(e);
        arp_check(e);
    }

    wisp_arp_watch_remove(e->s, &w);
    fz_advance(e, 20u * 60u * 1000u);
    wisp_arp_flush(e->s, 0);
    fz_clear(e);
    arp_check(e);
    fz_check_pools(e, baseline, "arp: after flush and 20 min");
    wisp_udp_remove(pcb);
    fz_env_fini(e);
    return 0;
}

#ifdef FUZZ_LIBFUZZER
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    return fuzz_arp_one(data, size);
}
#endif
