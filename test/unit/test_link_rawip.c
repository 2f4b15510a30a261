/**
 * @file test_link_rawip.c
 * Unit tests of the link-layer split (struct wisp_link_ops): the raw-IP
 * link (wisp_link_rawip, bare IP datagrams as TUN/SLIP/PPP devices carry
 * them) between two stacks (UDP echo both ways, no ARP, no link header on
 * the wire), a crafted ping answered on it, bad input counted, off-link
 * routing, and the argument checks of wisp_netif_add.
 */
#include "testutil.h"

#define RAW_MTU 1500u

/* A tu_env whose netif is replaced by a raw-IP one on the same recording
 * device: tu_inject / tu_pop then carry bare IP datagrams. */
static struct tu_env *raw_env(uint64_t seed, wisp_ip4_t ip, wisp_ip4_t mask, wisp_ip4_t gw)
{
    struct tu_env *e = tu_env_new(seed);
    wisp_netif_remove(&e->nif);
    tu_clear(e);
    assert_int_equal(wisp_netif_add(e->s, &e->nif, "tun0", &e->dev.dev, &wisp_link_rawip, NULL, 0, RAW_MTU),
                     WISP_OK);
    assert_ptr_equal(e->nif.link, &wisp_link_rawip);
    assert_int_equal(e->nif.hwaddr_len, 0);
    assert_int_equal(e->nif.flags & (WISP_NETIF_F_ETHARP | WISP_NETIF_F_BROADCAST), 0);
    wisp_netif_set_ip4(&e->nif, ip, mask, gw);
    wisp_netif_set_up(&e->nif, true);
    wisp_netif_set_link(&e->nif, true);
    assert_int_equal(tu_pending(e), 0); /* no gratuitous ARP on a raw-IP link */
    return e;
}

/* Move every recorded datagram of a to b and back until both are quiet;
 * returns the number moved. Each one is checked to be a bare IPv4
 * datagram (no link header) with a valid header checksum. */
static unsigned pump(struct tu_env *a, struct tu_env *b)
{
    uint8_t buf[RAW_MTU];
    unsigned moved = 0, round;
    for (round = 0; round < 64 && (tu_pending(a) > 0 || tu_pending(b) > 0); round++) {
        struct tu_env *from = tu_pending(a) > 0 ? a : b;
        struct tu_env *to = from == a ? b : a;
        int n = tu_pop(from, buf, sizeof(buf));
        assert_true(n >= 20);
        assert_int_equal(buf[0], 0x45);
        assert_int_equal(wisp_rd16(buf + 2), (uint16_t)n);
        assert_int_equal(wisp_chksum_sum(buf, 20), 0xffff);
        assert_true(tu_inject(to, buf, (size_t)n));
        moved++;
    }
    assert_int_equal(tu_pending(a) + tu_pending(b), 0);
    return moved;
}

struct echo_seen {
    unsigned calls;
    uint8_t data[64];
    uint16_t len, port;
    wisp_ip4_t src;
    bool echo;   /* send it back */
};

static void udp_cb(void *arg, struct wisp_udp_pcb *pcb, struct wisp_pbuf *p, const wisp_ipaddr_t *src, uint16_t port,
                   const struct wisp_ip_info *ip)
{
    struct echo_seen *r = arg;
    (void)ip;
    r->calls++;
    r->len = wisp_pbuf_copy_out(p, r->data, sizeof(r->data), 0);
    r->port = port;
    r->src = wisp_ipaddr_ip4(src);
    if (r->echo) {
        assert_int_equal(wisp_udp_sendto(pcb, p, src, port), WISP_OK);
    }
    wisp_pbuf_free(p);
}

static void test_udp_echo_between_two_stacks(void **state)
{
    wisp_ip4_t ipa = wisp_ip4(198, 18, 9, 1), ipb = wisp_ip4(198, 18, 9, 2), m30 = wisp_ip4_prefix_mask(30);
    struct tu_env *a = raw_env(11, ipa, m30, 0), *b = raw_env(12, ipb, m30, 0);
    struct echo_seen ra = { 0 }, rb = { 0 };
    struct wisp_udp_pcb *pa = wisp_udp_new(a->s), *pb = wisp_udp_new(b->s);
    wisp_ipaddr_t to = wisp_ipaddr4(ipb);
    struct wisp_pbuf *p;
    uint32_t arp_a0 = TU_CTR(a, ARP_TX), arp_b0 = TU_CTR(b, ARP_TX); /* tu_env_new's Ethernet netif announced */
    (void)state;
    assert_non_null(pa);
    assert_non_null(pb);
    rb.echo = true;
    assert_int_equal(wisp_udp_bind(pb, NULL, 7), WISP_OK);
    wisp_udp_recv(pb, udp_cb, &rb);
    assert_int_equal(wisp_udp_bind(pa, NULL, 40000), WISP_OK);
    wisp_udp_recv(pa, udp_cb, &ra);

    p = wisp_pbuf_alloc(a->s, WISP_LAYER_TRANSPORT, 5, WISP_PBUF_RAM);
    assert_non_null(p);
    memcpy(p->payload, "hello", 5);
    assert_int_equal(wisp_udp_sendto(pa, p, &to, 7), WISP_OK);
    wisp_pbuf_free(p);
    /* The datagram on the wire: 20 + 8 + 5 bytes, nothing in front. */
    assert_int_equal(tu_pending(a), 1);
    assert_int_equal(a->dev.flen[a->dev.head], 33);
    assert_int_equal(pump(a, b), 2); /* request and echo, nothing else */
    assert_int_equal(rb.calls, 1);
    assert_int_equal(rb.src, ipa);
    assert_int_equal(rb.port, 40000);
    assert_int_equal(ra.calls, 1);
    assert_int_equal(ra.src, ipb);
    assert_int_equal(ra.port, 7);
    assert_int_equal(ra.len, 5);
    assert_memory_equal(ra.data, "hello", 5);
    assert_int_equal(TU_CTR(a, ARP_TX), arp_a0); /* no ARP on a raw-IP link */
    assert_int_equal(TU_CTR(b, ARP_TX), arp_b0);
    assert_int_equal(TU_CTR(a, RAWIP_RX), 1);
    assert_int_equal(TU_CTR(b, RAWIP_RX), 1);
    assert_int_equal(TU_CTR(a, UDP_RX), 1);
    assert_int_equal(a->nif.st.rx_frames, 1);
    assert_int_equal(a->nif.st.tx_frames, 1);
    wisp_udp_remove(pa);
    wisp_udp_remove(pb);
    tu_env_free(a);
    tu_env_free(b);
}

/* A crafted echo request (RFC 792) as a bare datagram gets a bare reply. */
static void test_crafted_ping_answered(void **state)
{
    struct tu_env *e = raw_env(13, tu_ip_self(), wisp_ip4_prefix_mask(24), 0);
    uint8_t f[128], out[128];
    size_t n = tu_ping_frame(f, 0x77, 3, "ping!", 5);
    int m;
    (void)state;
    assert_true(tu_inject(e, f + WISP_ETH_HLEN, n - WISP_ETH_HLEN)); /* without its Ethernet header */
    m = tu_pop(e, out, sizeof(out));
    assert_int_equal(m, (int)(n - WISP_ETH_HLEN));
    assert_int_equal(out[0], 0x45);
    assert_int_equal(out[9], WISP_IP4_PROTO_ICMP);
    assert_int_equal(wisp_ip4_rd(out + 12), tu_ip_self());
    assert_int_equal(wisp_ip4_rd(out + 16), tu_ip_peer());
    assert_int_equal(out[20], 0); /* echo reply */
    assert_int_equal(wisp_rd16(out + 24), 0x77);
    assert_int_equal(wisp_rd16(out + 26), 3);
    assert_memory_equal(out + 28, "ping!", 5);
    assert_int_equal(wisp_chksum_sum(out + 20, (size_t)m - 20u), 0xffff);
    assert_int_equal(TU_CTR(e, ICMP_ECHO_REPLY_TX), 1);
    tu_env_free(e);
}

/* Anything but an IPv4 datagram is dropped and counted; a link that is
 * down drops too; the pools come back (tu_env_free checks). */
static void test_bad_input_counted(void **state)
{
    struct tu_env *e = raw_env(14, tu_ip_self(), wisp_ip4_prefix_mask(24), 0);
    uint8_t v6[48] = { 0x60 }, junk[8] = { 0 }, shortv4[6] = { 0x45, 0, 0, 6, 0, 0 }, f[128];
    size_t n;
    (void)state;
    assert_true(tu_inject(e, v6, sizeof(v6)));
    assert_true(tu_inject(e, junk, sizeof(junk)));
    assert_int_equal(TU_CTR(e, RAWIP_DROP_VERSION), 2);
    assert_true(tu_inject(e, shortv4, sizeof(shortv4)));
    assert_int_equal(TU_CTR(e, RAWIP_DROP_VERSION), 2);
    assert_int_equal(TU_CTR(e, IP4_DROP_SHORT), 1); /* IPv4 judged it */
    wisp_netif_set_link(&e->nif, false);
    n = tu_ping_frame(f, 1, 1, "x", 1);
    assert_true(tu_inject(e, f + WISP_ETH_HLEN, n - WISP_ETH_HLEN));
    assert_int_equal(TU_CTR(e, RAWIP_DROP_LINKDOWN), 1);
    assert_int_equal(TU_CTR(e, RAWIP_RX), 4);
    assert_int_equal(tu_pending(e), 0);
    tu_env_free(e);
}

/* Off-link destinations need a gateway; the datagram then leaves as it is
 * (the raw-IP link has one peer, the next hop only decides the route). */
static void test_offlink_needs_gateway(void **state)
{
    struct tu_env *e = raw_env(15, wisp_ip4(198, 18, 9, 1), wisp_ip4_prefix_mask(30), 0);
    struct wisp_udp_pcb *pcb = wisp_udp_new(e->s);
    wisp_ipaddr_t far = wisp_ipaddr4(wisp_ip4(198, 19, 1, 1));
    struct wisp_pbuf *p = wisp_pbuf_alloc(e->s, WISP_LAYER_TRANSPORT, 4, WISP_PBUF_RAM);
    uint8_t out[64];
    (void)state;
    assert_non_null(pcb);
    assert_non_null(p);
    memset(p->payload, 0xab, 4);
    assert_int_equal(wisp_udp_sendto(pcb, p, &far, 9), WISP_ERR_RTE);
    assert_int_equal(tu_pending(e), 0);
    wisp_netif_set_ip4(&e->nif, wisp_ip4(198, 18, 9, 1), wisp_ip4_prefix_mask(30), wisp_ip4(198, 18, 9, 2));
    assert_int_equal(wisp_netif_ip4_gw(&e->nif), wisp_ip4(198, 18, 9, 2));
    assert_int_equal(wisp_udp_sendto(pcb, p, &far, 9), WISP_OK);
    assert_int_equal(tu_pop(e, out, sizeof(out)), 32);
    assert_int_equal(wisp_ip4_rd(out + 16), wisp_ip4(198, 19, 1, 1));
    wisp_pbuf_free(p);
    wisp_udp_remove(pcb);
    tu_env_free(e);
}

static void drop_input(struct wisp_netif *nif, struct wisp_pbuf *p)
{
    (void)nif;
    wisp_pbuf_free(p);
}

static const struct wisp_link_ops no_output = { "broken", 0u, 0u, drop_input, NULL, NULL, NULL };

static void test_netif_add_checks_arguments(void **state)
{
    struct tu_env *e = tu_env_new(16);
    struct wisp_netif n2;
    static const uint8_t hw[8] = { 1, 2, 3, 4, 5, 6, 7, 8 };
    (void)state;
    assert_int_equal(wisp_netif_add(e->s, &n2, "x", &e->dev.dev, NULL, NULL, 0, 1500), WISP_ERR_VAL);
    assert_int_equal(wisp_netif_add(e->s, &n2, "x", &e->dev.dev, &no_output, NULL, 0, 1500), WISP_ERR_VAL);
    assert_int_equal(wisp_netif_add(e->s, &n2, "x", &e->dev.dev, &wisp_link_rawip, hw, 7, 1500), WISP_ERR_VAL);
    assert_int_equal(wisp_netif_add(e->s, &n2, "x", &e->dev.dev, &wisp_link_rawip, NULL, 6, 1500), WISP_ERR_VAL);
    assert_int_equal(wisp_netif_add(e->s, &n2, "x", &e->dev.dev, &wisp_link_rawip, NULL, 0, 67), WISP_ERR_VAL);
    assert_null(wisp_netif_by_name(e->s, "x"));
    /* The Ethernet wrapper is the generic constructor with wisp_link_eth. */
    assert_ptr_equal(e->nif.link, &wisp_link_eth);
    assert_int_equal(e->nif.hwaddr_len, 6);
    assert_true((e->nif.flags & WISP_NETIF_F_ETHARP) != 0);
    assert_int_equal(wisp_netif_ip4_addr(&e->nif), tu_ip_self());
    assert_int_equal(wisp_netif_ip4_mask(&e->nif), wisp_ip4_prefix_mask(24));
    assert_int_equal(wisp_netif_ip4_gw(&e->nif), tu_ip_peer());
    tu_env_free(e);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_udp_echo_between_two_stacks),
        cmocka_unit_test(test_crafted_ping_answered),
        cmocka_unit_test(test_bad_input_counted),
        cmocka_unit_test(test_offlink_needs_gateway),
        cmocka_unit_test(test_netif_add_checks_arguments),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
