/**
 * @file test_ip4.c
 * Unit tests of IPv4 input, routing and output (src/core/ip4.c): one test
 * per validation rule (each asserting its drop counter and, through
 * tu_env_free, that nothing leaked), options, padding, protocol
 * unreachable, longest-prefix routing over two interfaces, byte-exact
 * output headers, DSCP priority and loopback delivery.
 */
#include "testutil.h"

#include <stdlib.h>

#define ETH WISP_ETH_HLEN
#define IPH WISP_IP4_HLEN

static uint8_t g_buf[4096];
static uint8_t g_out[4096];

/* ---------------------------------------------------------------- helpers */

static struct tu_env *env(void)
{
    struct tu_env *e = tu_env_new(7);
    tu_arp_peer(e);
    tu_clear(e);
    return e;
}

/* Hand len bytes of IP datagram straight to wisp_ip4_input on nif, as the
 * Ethernet layer would (receive buffers, if_idx, link flags). */
static void ip_in(struct tu_env *e, struct wisp_netif *nif, const uint8_t *d, size_t len, uint8_t flags)
{
    struct wisp_pbuf *p = wisp_pbuf_alloc_rx(e->s, (uint16_t)len);
    assert_non_null(p);
    assert_int_equal(wisp_pbuf_copy_in(p, d, (uint16_t)len, 0), WISP_OK);
    p->if_idx = nif->index;
    p->flags = flags;
    wisp_ip4_input(nif, p);
}

static void fix_ck(uint8_t *h)
{
    unsigned hlen = (h[0] & 0x0fu) * 4u;
    wisp_wr16(h + 10, 0);
    wisp_wr16(h + 10, (uint16_t)~wisp_chksum_sum_ref(h, hlen));
}

/* An ICMP echo request datagram (IP header + 8 + dlen) from src to dst. */
static size_t echo_dgram(uint8_t *b, wisp_ip4_t src, wisp_ip4_t dst, uint16_t dlen)
{
    uint8_t *m = b + IPH;
    uint16_t i;
    tu_ip4(b, src, dst, WISP_IP4_PROTO_ICMP, (uint16_t)(8u + dlen), 0x1111, 0, 64);
    m[0] = WISP_ICMP_ECHO;
    m[1] = 0;
    wisp_wr16(m + 2, 0);
    wisp_wr16(m + 4, 0x77);
    wisp_wr16(m + 6, 1);
    for (i = 0; i < dlen; i++) {
        m[8 + i] = (uint8_t)(i ^ 0x5a);
    }
    wisp_wr16(m + 2, (uint16_t)~wisp_chksum_sum_ref(m, 8u + dlen));
    return IPH + 8u + dlen;
}

/* A datagram of an unassigned protocol carrying dlen pattern bytes. */
static size_t raw_dgram(uint8_t *b, wisp_ip4_t src, wisp_ip4_t dst, uint8_t proto, uint16_t dlen)
{
    uint16_t i;
    tu_ip4(b, src, dst, proto, dlen, 0x2222, 0, 64);
    for (i = 0; i < dlen; i++) {
        b[IPH + i] = (uint8_t)(i + 1u);
    }
    return IPH + dlen;
}

static void assert_no_ip_drops(struct tu_env *e)
{
    assert_int_equal(TU_CTR(e, IP4_DROP_SHORT), 0);
    assert_int_equal(TU_CTR(e, IP4_DROP_VERSION), 0);
    assert_int_equal(TU_CTR(e, IP4_DROP_IHL), 0);
    assert_int_equal(TU_CTR(e, IP4_DROP_LEN), 0);
    assert_int_equal(TU_CTR(e, IP4_DROP_CHKSUM), 0);
    assert_int_equal(TU_CTR(e, IP4_DROP_TTL), 0);
    assert_int_equal(TU_CTR(e, IP4_DROP_SRC), 0);
    assert_int_equal(TU_CTR(e, IP4_DROP_NOTFORUS), 0);
    assert_int_equal(TU_CTR(e, IP4_DROP_PROTO), 0);
    assert_int_equal(TU_CTR(e, IP4_DROP_OPTS), 0);
}

/* Inject d and assert it was dropped by exactly one reason. */
static void expect_drop(const uint8_t *d, size_t len, enum wisp_counter ctr)
{
    struct tu_env *e = env();
    ip_in(e, &e->nif, d, len, 0);
    assert_int_equal(e->s->ctr[ctr], 1);
    assert_int_equal(TU_CTR(e, IP4_RX), 1);
    assert_int_equal(TU_CTR(e, IP4_DELIVERED), 0);
    assert_int_equal(TU_CTR(e, ICMP_RX), 0);
    assert_int_equal(tu_pending(e), 0);
    assert_int_equal(wisp_stack_pools_in_use(e->s), 0);
    tu_env_free(e);
}

/* A second Ethernet interface with its own recording device. */
struct rec_dev {
    struct wisp_dev dev;
    unsigned sent;
    uint8_t last[2048];
    uint16_t last_len;
};

static wisp_err_t rec_transmit(struct wisp_dev *dev, struct wisp_pbuf *frame)
{
    struct rec_dev *r = (struct rec_dev *)dev->ctx;
    r->sent++;
    r->last_len = wisp_pbuf_copy_out(frame, r->last, sizeof(r->last), 0);
    return WISP_OK;
}

static const struct wisp_dev_ops rec_ops = { rec_transmit, NULL, NULL };
static const uint8_t mac2[6] = { 0x02, 0, 0, 0, 1, 0x02 };
static const uint8_t mac2_peer[6] = { 0x02, 0, 0, 0, 1, 0x01 };

static void add_nif2(struct tu_env *e, struct wisp_netif *nif, struct rec_dev *rd, wisp_ip4_t ip, unsigned prefix,
                     wisp_ip4_t gw)
{
    memset(rd, 0, sizeof(*rd));
    rd->dev.ops = &rec_ops;
    rd->dev.ctx = rd;
    assert_int_equal(wisp_netif_add_eth(e->s, nif, "rec1", &rd->dev, mac2, 1500), WISP_OK);
    wisp_netif_set_ip4(nif, ip, wisp_ip4_prefix_mask(prefix), gw);
    wisp_netif_set_up(nif, true);
    wisp_netif_set_link(nif, true);
    rd->sent = 0; /* forget the gratuitous ARP */
}

/* ----------------------------------------------------------------- input */

/* A valid datagram is counted received and delivered to its protocol. */
static void test_valid_datagram_delivered(void **state)
{
    struct tu_env *e = env();
    size_t n = echo_dgram(g_buf, tu_ip_peer(), tu_ip_self(), 24);
    (void)state;
    ip_in(e, &e->nif, g_buf, n, 0);
    assert_int_equal(TU_CTR(e, IP4_RX), 1);
    assert_int_equal(TU_CTR(e, IP4_DELIVERED), 1);
    assert_int_equal(TU_CTR(e, ICMP_RX), 1);
    assert_int_equal(TU_CTR(e, ICMP_ECHO_RX), 1);
    assert_no_ip_drops(e);
    assert_int_equal(tu_pending(e), 1); /* the echo reply */
    tu_env_free(e);
}

/* The same through the Ethernet layer: a complete frame. */
static void test_valid_frame_via_ethernet(void **state)
{
    struct tu_env *e = env();
    static const uint8_t data[4] = { 1, 2, 3, 4 };
    size_t n = tu_ping_frame(g_buf, 1, 2, data, sizeof(data));
    (void)state;
    assert_true(tu_inject(e, g_buf, n));
    assert_int_equal(TU_CTR(e, IP4_RX), 1);
    assert_int_equal(TU_CTR(e, IP4_DELIVERED), 1);
    assert_no_ip_drops(e);
    assert_int_equal(tu_pending(e), 1);
    tu_env_free(e);
}

/* RFC 791 §3.1: datagrams cut short at every length 0..33 of a 34-byte
 * datagram: < 20 bytes is "short", the rest lack what Total Length says. */
static void test_truncated_every_length(void **state)
{
    struct tu_env *e = env();
    size_t n = echo_dgram(g_buf, tu_ip_peer(), tu_ip_self(), 6);
    size_t k;
    (void)state;
    assert_int_equal(n, 34);
    for (k = 0; k < n; k++) {
        uint32_t short0 = TU_CTR(e, IP4_DROP_SHORT), len0 = TU_CTR(e, IP4_DROP_LEN);
        ip_in(e, &e->nif, g_buf, k, 0);
        if (k < IPH) {
            assert_int_equal(TU_CTR(e, IP4_DROP_SHORT), short0 + 1);
            assert_int_equal(TU_CTR(e, IP4_DROP_LEN), len0);
        } else {
            assert_int_equal(TU_CTR(e, IP4_DROP_LEN), len0 + 1);
            assert_int_equal(TU_CTR(e, IP4_DROP_SHORT), short0);
        }
        assert_int_equal(wisp_stack_pools_in_use(e->s), 0);
    }
    assert_int_equal(TU_CTR(e, IP4_DROP_SHORT), 20);
    assert_int_equal(TU_CTR(e, IP4_DROP_LEN), 14);
    assert_int_equal(TU_CTR(e, IP4_DELIVERED), 0);
    assert_int_equal(tu_pending(e), 0);
    /* the full datagram is fine */
    ip_in(e, &e->nif, g_buf, n, 0);
    assert_int_equal(TU_CTR(e, IP4_DELIVERED), 1);
    tu_env_free(e);
}

/* RFC 1122 §3.2.1.1: version other than 4 is discarded. */
static void test_bad_version_dropped(void **state)
{
    size_t n = echo_dgram(g_buf, tu_ip_peer(), tu_ip_self(), 8);
    (void)state;
    g_buf[0] = 0x65;
    fix_ck(g_buf);
    expect_drop(g_buf, n, WISP_CTR_IP4_DROP_VERSION);
}

/* RFC 791 §3.1: IHL below 5 is no valid header. */
static void test_ihl_4_dropped(void **state)
{
    size_t n = echo_dgram(g_buf, tu_ip_peer(), tu_ip_self(), 8);
    (void)state;
    g_buf[0] = 0x44;
    expect_drop(g_buf, n, WISP_CTR_IP4_DROP_IHL);
}

/* IHL 15 (60 bytes) on a 40-byte packet: the header runs past the data. */
static void test_ihl_15_short_packet_dropped(void **state)
{
    size_t n = raw_dgram(g_buf, tu_ip_peer(), tu_ip_self(), 253, 20);
    (void)state;
    assert_int_equal(n, 40);
    g_buf[0] = 0x4f;
    expect_drop(g_buf, n, WISP_CTR_IP4_DROP_IHL);
}

/* Total Length larger than what arrived. */
static void test_total_length_too_big_dropped(void **state)
{
    size_t n = raw_dgram(g_buf, tu_ip_peer(), tu_ip_self(), 253, 20);
    (void)state;
    wisp_wr16(g_buf + 2, (uint16_t)(n + 1));
    fix_ck(g_buf);
    expect_drop(g_buf, n, WISP_CTR_IP4_DROP_LEN);
}

/* Total Length smaller than the header itself. */
static void test_total_length_below_header_dropped(void **state)
{
    size_t n = raw_dgram(g_buf, tu_ip_peer(), tu_ip_self(), 253, 20);
    (void)state;
    wisp_wr16(g_buf + 2, 19);
    fix_ck(g_buf);
    expect_drop(g_buf, n, WISP_CTR_IP4_DROP_LEN);
}

/* Total Length below IHL*4 when options are present. */
static void test_total_length_below_ihl_dropped(void **state)
{
    size_t n = raw_dgram(g_buf, tu_ip_peer(), tu_ip_self(), 253, 20);
    (void)state;
    g_buf[0] = 0x46; /* 24-byte header: bytes 20..23 become NOP options */
    memset(g_buf + 20, 1, 4);
    wisp_wr16(g_buf + 2, 22);
    fix_ck(g_buf);
    expect_drop(g_buf, n, WISP_CTR_IP4_DROP_LEN);
}

/* RFC 1122 §3.2.1.2: a bad header checksum is discarded. */
static void test_bad_checksum_dropped(void **state)
{
    size_t n = echo_dgram(g_buf, tu_ip_peer(), tu_ip_self(), 8);
    (void)state;
    g_buf[10] ^= 0x01;
    expect_drop(g_buf, n, WISP_CTR_IP4_DROP_CHKSUM);
}

/* RFC 791 §3.1: TTL 0 is destroyed. */
static void test_ttl_zero_dropped(void **state)
{
    size_t n = echo_dgram(g_buf, tu_ip_peer(), tu_ip_self(), 8);
    (void)state;
    g_buf[8] = 0;
    fix_ck(g_buf);
    expect_drop(g_buf, n, WISP_CTR_IP4_DROP_TTL);
}

/* RFC 1122 §3.2.1.7: a host must not discard TTL 1. */
static void test_ttl_one_accepted(void **state)
{
    struct tu_env *e = env();
    size_t n = echo_dgram(g_buf, tu_ip_peer(), tu_ip_self(), 8);
    (void)state;
    g_buf[8] = 1;
    fix_ck(g_buf);
    ip_in(e, &e->nif, g_buf, n, 0);
    assert_int_equal(TU_CTR(e, IP4_DELIVERED), 1);
    assert_no_ip_drops(e);
    tu_env_free(e);
}

/* RFC 1122 §3.2.1.3: limited broadcast as source. */
static void test_limited_broadcast_source_dropped(void **state)
{
    size_t n = echo_dgram(g_buf, WISP_IP4_BCAST, tu_ip_self(), 8);
    (void)state;
    expect_drop(g_buf, n, WISP_CTR_IP4_DROP_SRC);
}

/* RFC 1122 §3.2.1.3: directed broadcast of the arrival subnet as source. */
static void test_directed_broadcast_source_dropped(void **state)
{
    size_t n = echo_dgram(g_buf, wisp_ip4(198, 18, 0, 255), tu_ip_self(), 8);
    (void)state;
    expect_drop(g_buf, n, WISP_CTR_IP4_DROP_SRC);
}

/* RFC 1112 §4: a multicast source is invalid. */
static void test_multicast_source_dropped(void **state)
{
    size_t n = echo_dgram(g_buf, wisp_ip4(224, 0, 0, 9), tu_ip_self(), 8);
    (void)state;
    expect_drop(g_buf, n, WISP_CTR_IP4_DROP_SRC);
}

/* RFC 1122 §3.2.1.3 (g): 127/8 never arrives from a wire. */
static void test_loopback_source_from_wire_dropped(void **state)
{
    size_t n = echo_dgram(g_buf, wisp_ip4(127, 0, 0, 1), tu_ip_self(), 8);
    (void)state;
    expect_drop(g_buf, n, WISP_CTR_IP4_DROP_SRC);
}

/* 0.0.0.0 as source is refused except UDP to a broadcast (DHCP). */
static void test_zero_source_non_udp_dropped(void **state)
{
    size_t n = echo_dgram(g_buf, WISP_IP4_ANY, tu_ip_self(), 8);
    (void)state;
    expect_drop(g_buf, n, WISP_CTR_IP4_DROP_SRC);
}

static void test_zero_source_udp_unicast_dropped(void **state)
{
    size_t n = raw_dgram(g_buf, WISP_IP4_ANY, tu_ip_self(), WISP_IP4_PROTO_UDP, 8);
    (void)state;
    expect_drop(g_buf, n, WISP_CTR_IP4_DROP_SRC);
}

static void test_zero_source_udp_broadcast_accepted(void **state)
{
    struct tu_env *e = env();
    size_t n = raw_dgram(g_buf, WISP_IP4_ANY, WISP_IP4_BCAST, WISP_IP4_PROTO_UDP, 8);
    (void)state;
    /* UDP header: ports 68 -> 67, length 8, no checksum */
    wisp_wr16(g_buf + IPH, 68);
    wisp_wr16(g_buf + IPH + 2, 67);
    wisp_wr16(g_buf + IPH + 4, 8);
    wisp_wr16(g_buf + IPH + 6, 0);
    ip_in(e, &e->nif, g_buf, n, WISP_PBUF_F_BCAST);
    assert_int_equal(TU_CTR(e, IP4_DELIVERED), 1);
    assert_int_equal(TU_CTR(e, UDP_RX), 1);
    assert_no_ip_drops(e);
    tu_env_free(e);
}

/* We are a host: another unicast destination is not for us. */
static void test_not_for_us_dropped(void **state)
{
    size_t n = echo_dgram(g_buf, tu_ip_peer(), wisp_ip4(198, 18, 0, 99), 8);
    (void)state;
    expect_drop(g_buf, n, WISP_CTR_IP4_DROP_NOTFORUS);
}

/* No group but all-hosts is joined. */
static void test_other_multicast_not_for_us(void **state)
{
    size_t n = echo_dgram(g_buf, tu_ip_peer(), wisp_ip4(224, 0, 0, 251), 8);
    (void)state;
    expect_drop(g_buf, n, WISP_CTR_IP4_DROP_NOTFORUS);
}

/* RFC 1122 §3.2.1.3 (g): a loopback destination from a wire. */
static void test_loopback_destination_from_wire_dropped(void **state)
{
    size_t n = echo_dgram(g_buf, tu_ip_peer(), wisp_ip4(127, 0, 0, 1), 8);
    (void)state;
    expect_drop(g_buf, n, WISP_CTR_IP4_DROP_NOTFORUS);
}

/* RFC 1122 §3.3.6: a link-layer broadcast carrying an IP unicast. */
static void test_unicast_in_link_broadcast_dropped(void **state)
{
    struct tu_env *e = env();
    size_t n = echo_dgram(g_buf, tu_ip_peer(), tu_ip_self(), 8);
    (void)state;
    ip_in(e, &e->nif, g_buf, n, WISP_PBUF_F_BCAST);
    assert_int_equal(TU_CTR(e, IP4_DROP_NOTFORUS), 1);
    assert_int_equal(TU_CTR(e, IP4_DELIVERED), 0);
    tu_env_free(e);
}

/* Broadcasts (limited and directed) and 224.0.0.1 are accepted. */
static void test_broadcast_and_all_hosts_accepted(void **state)
{
    struct tu_env *e = env();
    const wisp_ip4_t dst[3] = { WISP_IP4_BCAST, wisp_ip4(198, 18, 0, 255), wisp_ip4(224, 0, 0, 1) };
    unsigned i;
    (void)state;
    for (i = 0; i < 3; i++) {
        size_t n = echo_dgram(g_buf, tu_ip_peer(), dst[i], 8);
        ip_in(e, &e->nif, g_buf, n, i == 2 ? WISP_PBUF_F_MCAST : WISP_PBUF_F_BCAST);
    }
    assert_int_equal(TU_CTR(e, IP4_DELIVERED), 3);
    assert_int_equal(TU_CTR(e, ICMP_DROP_BCAST), 3); /* ICMP ignores broadcast echoes */
    assert_no_ip_drops(e);
    assert_int_equal(tu_pending(e), 0);
    tu_env_free(e);
}

/* Weak host model (RFC 1122 §3.3.4.2): the address of another interface
 * is accepted on this one. */
static void test_weak_host_other_interface_address(void **state)
{
    struct tu_env *e = env();
    struct wisp_netif nif2;
    struct rec_dev rd;
    size_t n;
    (void)state;
    add_nif2(e, &nif2, &rd, wisp_ip4(10, 9, 0, 1), 24, 0);
    n = echo_dgram(g_buf, tu_ip_peer(), wisp_ip4(10, 9, 0, 1), 8);
    ip_in(e, &e->nif, g_buf, n, 0);
    assert_int_equal(TU_CTR(e, IP4_DELIVERED), 1);
    assert_no_ip_drops(e);
    /* the reply leaves by the route to the peer (tu0), from 10.9.0.1 */
    assert_int_equal(tu_pop(e, g_out, sizeof(g_out)), (int)(ETH + n));
    assert_true(wisp_ip4_rd(g_out + ETH + 12) == wisp_ip4(10, 9, 0, 1));
    tu_env_free(e);
}

/* RFC 1122 §3.2.1.8: options are skipped; the reply carries none. */
static void test_options_skipped(void **state)
{
    struct tu_env *e = env();
    uint8_t d[128];
    size_t n = echo_dgram(g_buf, tu_ip_peer(), tu_ip_self(), 16);
    int m;
    (void)state;
    /* 12 option bytes: NOP, record route (type 7, len 7, ptr 4, 4 bytes),
     * NOP, an unknown option (30, experimental, RFC 4727) len 2, EOL */
    memcpy(d, g_buf, IPH);
    d[0] = 0x48;
    d[20] = 1;
    d[21] = 7; d[22] = 7; d[23] = 4; d[24] = 0; d[25] = 0; d[26] = 0; d[27] = 0;
    d[28] = 30; d[29] = 2;
    d[30] = 0; d[31] = 0;
    memcpy(d + 32, g_buf + IPH, n - IPH);
    wisp_wr16(d + 2, (uint16_t)(n + 12));
    fix_ck(d);
    ip_in(e, &e->nif, d, n + 12, 0);
    assert_int_equal(TU_CTR(e, IP4_DELIVERED), 1);
    assert_no_ip_drops(e);
    m = tu_pop(e, g_out, sizeof(g_out));
    assert_int_equal(m, (int)(ETH + n));
    assert_int_equal(g_out[ETH], 0x45);
    assert_int_equal(g_out[ETH + IPH], WISP_ICMP_ECHO_REPLY);
    assert_memory_equal(g_out + ETH + IPH + 4, g_buf + IPH + 4, n - IPH - 4);
    tu_env_free(e);
}

/* A malformed option list is dropped: length 0, length 1, running past the
 * header, and a length octet missing. */
static void opts_case(uint8_t o0, uint8_t o1, uint8_t o2, uint8_t o3)
{
    size_t n = raw_dgram(g_buf + 4, tu_ip_peer(), tu_ip_self(), 253, 8);
    memmove(g_buf, g_buf + 4, IPH);
    g_buf[0] = 0x46;
    g_buf[20] = o0;
    g_buf[21] = o1;
    g_buf[22] = o2;
    g_buf[23] = o3;
    wisp_wr16(g_buf + 2, (uint16_t)(n + 4));
    fix_ck(g_buf);
    expect_drop(g_buf, n + 4, WISP_CTR_IP4_DROP_OPTS);
}

static void test_option_length_zero_dropped(void **state)
{
    (void)state;
    opts_case(0x44, 0, 0, 0);
}

static void test_option_length_one_dropped(void **state)
{
    (void)state;
    opts_case(0x44, 1, 0, 0);
}

static void test_option_past_header_dropped(void **state)
{
    (void)state;
    opts_case(1, 0x07, 4, 4); /* NOP, then a 4-byte option with 3 bytes left */
}

static void test_option_missing_length_dropped(void **state)
{
    (void)state;
    opts_case(1, 1, 1, 0x83); /* loose source route type in the last byte */
}

/* An echo request to us carrying the option bytes o (n a multiple of 4,
 * at most 40) in g_buf; returns the datagram length. */
static size_t opts_dgram(const uint8_t *o, size_t n)
{
    size_t m = echo_dgram(g_out, tu_ip_peer(), tu_ip_self(), 8);
    memcpy(g_buf, g_out, IPH);
    memcpy(g_buf + IPH, o, n);
    memcpy(g_buf + IPH + n, g_out + IPH, m - IPH);
    g_buf[0] = (uint8_t)(0x40u | ((IPH + n) / 4u));
    wisp_wr16(g_buf + 2, (uint16_t)(m + n));
    fix_ck(g_buf);
    return m + n;
}

/* The datagram with options o is delivered (and answered). */
static void opts_ok(const uint8_t *o, size_t n)
{
    struct tu_env *e = env();
    size_t len = opts_dgram(o, n);
    ip_in(e, &e->nif, g_buf, len, 0);
    assert_int_equal(TU_CTR(e, IP4_DELIVERED), 1);
    assert_no_ip_drops(e);
    assert_true(tu_pop(e, g_out, sizeof(g_out)) > 0);
    tu_env_free(e);
}

/* The datagram with options o is dropped and counted, nothing answered. */
static void opts_bad(const uint8_t *o, size_t n)
{
    expect_drop(g_buf, opts_dgram(o, n), WISP_CTR_IP4_DROP_OPTS);
}

/* RFC 791 §3.1 / RFC 1122 §3.2.1.8: Record Route with a pointer below 4
 * (0 included) or leaving a partial address slot, or with a length that
 * is not 3 + 4n, is malformed: dropped and counted, not answered. A full
 * record (pointer past the end) and a fresh one are fine. */
static void test_option_record_route_pointer_checked(void **state)
{
    static const uint8_t ptr0[8] = { 7, 7, 0, 0, 0, 0, 0, 0 };
    static const uint8_t ptr3[8] = { 7, 7, 3, 0, 0, 0, 0, 0 };
    static const uint8_t ptr5[8] = { 7, 7, 5, 0, 0, 0, 0, 0 };
    static const uint8_t len8[8] = { 7, 8, 4, 0, 0, 0, 0, 0 };
    static const uint8_t twice[16] = { 7, 7, 4, 0, 0, 0, 0, 7, 7, 4, 0, 0, 0, 0, 0, 0 };
    static const uint8_t fresh[8] = { 7, 7, 4, 0, 0, 0, 0, 0 };
    static const uint8_t full[8] = { 7, 7, 8, 1, 2, 3, 4, 0 };
    (void)state;
    opts_bad(ptr0, sizeof(ptr0));
    opts_bad(ptr3, sizeof(ptr3));
    opts_bad(ptr5, sizeof(ptr5));
    opts_bad(len8, sizeof(len8));
    opts_bad(twice, sizeof(twice));
    opts_ok(fresh, sizeof(fresh));
    opts_ok(full, sizeof(full));
}

/* Source routes: an odd length (not 3 + 4n), a pointer below 4, two
 * source routes are malformed; a route not yet done (pointer at or below
 * the length) names a further hop, which a host does not forward (RFC
 * 1122 §3.3.1, §3.3.5); a completed one reached its destination. */
static void test_option_source_route_checked(void **state)
{
    static const uint8_t lsrr_len8[8] = { 131, 8, 8, 0, 0, 0, 0, 0 };
    static const uint8_t ssrr_len6[8] = { 137, 6, 4, 0, 0, 0, 0, 0 };
    static const uint8_t lsrr_ptr0[8] = { 131, 7, 0, 1, 2, 3, 4, 0 };
    static const uint8_t lsrr_hop[8] = { 131, 7, 4, 198, 18, 0, 9, 0 };
    static const uint8_t ssrr_hop[12] = { 137, 11, 8, 198, 18, 0, 9, 198, 18, 0, 10, 0 };
    static const uint8_t two[16] = { 131, 7, 8, 1, 2, 3, 4, 137, 7, 8, 1, 2, 3, 4, 0, 0 };
    static const uint8_t lsrr_done[8] = { 131, 7, 8, 198, 18, 0, 9, 0 };
    static const uint8_t ssrr_done[12] = { 137, 11, 12, 198, 18, 0, 9, 198, 18, 0, 10, 0 };
    (void)state;
    opts_bad(lsrr_len8, sizeof(lsrr_len8));
    opts_bad(ssrr_len6, sizeof(ssrr_len6));
    opts_bad(lsrr_ptr0, sizeof(lsrr_ptr0));
    opts_bad(lsrr_hop, sizeof(lsrr_hop));
    opts_bad(ssrr_hop, sizeof(ssrr_hop));
    opts_bad(two, sizeof(two));
    opts_ok(lsrr_done, sizeof(lsrr_done));
    opts_ok(ssrr_done, sizeof(ssrr_done));
}

/* Timestamp (RFC 791 §3.1): length >= 4, pointer >= 5, flags 0/1/3, room
 * for a whole slot; Stream ID: length 4. */
static void test_option_timestamp_checked(void **state)
{
    static const uint8_t ptr4[8] = { 68, 8, 4, 0, 0, 0, 0, 0 };
    static const uint8_t len3[4] = { 68, 3, 5, 0 };
    static const uint8_t flag2[8] = { 68, 8, 5, 2, 0, 0, 0, 0 };
    static const uint8_t part[8] = { 68, 8, 5, 1, 0, 0, 0, 0 }; /* 8-byte slot, 4 bytes left */
    static const uint8_t sid5[8] = { 136, 5, 0, 0, 0, 0, 0, 0 };
    static const uint8_t ts0[8] = { 68, 8, 5, 0, 0, 0, 0, 0 };
    static const uint8_t ts1[12] = { 68, 12, 5, 1, 0, 0, 0, 0, 0, 0, 0, 0 };
    static const uint8_t tsfull[8] = { 68, 8, 9, 0x10, 0, 0, 0, 1 };
    static const uint8_t sid[4] = { 136, 4, 0x12, 0x34 };
    (void)state;
    opts_bad(ptr4, sizeof(ptr4));
    opts_bad(len3, sizeof(len3));
    opts_bad(flag2, sizeof(flag2));
    opts_bad(part, sizeof(part));
    opts_bad(sid5, sizeof(sid5));
    opts_ok(ts0, sizeof(ts0));
    opts_ok(ts1, sizeof(ts1));
    opts_ok(tsfull, sizeof(tsfull));
    opts_ok(sid, sizeof(sid));
}

/* RFC 894 padding beyond Total Length is trimmed: the ICMP checksum (over
 * the whole message) would fail if the pad bytes were kept. */
static void test_padding_trimmed(void **state)
{
    struct tu_env *e = env();
    static const uint8_t data[2] = { 0xAA, 0xBB };
    size_t n = tu_ping_frame(g_buf, 3, 4, data, sizeof(data));
    int m;
    (void)state;
    assert_true(n < 60);
    memset(g_buf + n, 0xEE, 60 - n);
    assert_true(tu_inject(e, g_buf, 60));
    assert_int_equal(TU_CTR(e, IP4_DELIVERED), 1);
    assert_int_equal(TU_CTR(e, ICMP_DROP_CHKSUM), 0);
    m = tu_pop(e, g_out, sizeof(g_out));
    assert_int_equal(m, (int)n);
    assert_int_equal(wisp_rd16(g_out + ETH + 2), IPH + 8u + 2u);
    tu_env_free(e);
}

/* RFC 1122 §3.2.2.1: unknown protocol -> ICMP protocol unreachable
 * quoting the header and 8 bytes. */
static void test_unknown_protocol_unreachable(void **state)
{
    struct tu_env *e = env();
    size_t n = raw_dgram(g_buf, tu_ip_peer(), tu_ip_self(), 253, 30);
    int m;
    (void)state;
    ip_in(e, &e->nif, g_buf, n, 0);
    assert_int_equal(TU_CTR(e, IP4_DROP_PROTO), 1);
    assert_int_equal(TU_CTR(e, IP4_DELIVERED), 0);
    m = tu_pop(e, g_out, sizeof(g_out));
    assert_int_equal(m, (int)(ETH + IPH + 8u + IPH + 8u));
    assert_true(wisp_ip4_rd(g_out + ETH + 16) == tu_ip_peer());
    assert_int_equal(g_out[ETH + 9], WISP_IP4_PROTO_ICMP);
    assert_int_equal(g_out[ETH + IPH], WISP_ICMP_DEST_UNREACH);
    assert_int_equal(g_out[ETH + IPH + 1], WISP_ICMP_UNREACH_PROTO);
    assert_int_equal(wisp_chksum_sum_ref(g_out + ETH + IPH, 8u + IPH + 8u), 0xFFFF);
    assert_memory_equal(g_out + ETH + IPH + 8, g_buf, IPH + 8u);
    assert_int_equal(wisp_stack_pools_in_use(e->s), 0);
    tu_env_free(e);
}

/* Protocol 6 is dispatched to TCP (no protocol unreachable): a SYN to a
 * closed port is answered by TCP with <SEQ=0><ACK=SEG.SEQ+1><RST,ACK>
 * (RFC 9293 §3.10.7.1). */
static void test_tcp_dispatched_syn_to_closed_port_gets_rst(void **state)
{
    struct tu_env *e = env();
    uint8_t *t = g_buf + IPH;
    uint16_t sum;
    int m;
    (void)state;
    tu_ip4(g_buf, tu_ip_peer(), tu_ip_self(), WISP_IP4_PROTO_TCP, 20, 0x2222, 0, 64);
    memset(t, 0, 20);
    wisp_wr16(t, 40000);        /* source port */
    wisp_wr16(t + 2, 7777);     /* closed destination port */
    wisp_wr32(t + 4, 0x01020304u);
    t[12] = 0x50;               /* data offset 5 */
    t[13] = 0x02;               /* SYN */
    wisp_wr16(t + 14, 1000);
    sum = wisp_chksum_add(wisp_chksum_pseudo4(tu_ip_peer(), tu_ip_self(), WISP_IP4_PROTO_TCP, 20),
                          wisp_chksum_sum(t, 20));
    wisp_wr16(t + 16, (uint16_t)~sum);
    ip_in(e, &e->nif, g_buf, IPH + 20u, 0);
    assert_int_equal(TU_CTR(e, IP4_DROP_PROTO), 0);
    assert_int_equal(TU_CTR(e, IP4_DELIVERED), 1);
    assert_int_equal(TU_CTR(e, TCP_NOPORT), 1);
    m = tu_pop(e, g_out, sizeof(g_out));
    assert_int_equal(m, (int)(ETH + IPH + 20u));
    assert_int_equal(g_out[ETH + 9], WISP_IP4_PROTO_TCP);
    assert_int_equal(wisp_rd16(g_out + ETH + IPH), 7777);
    assert_int_equal(wisp_rd16(g_out + ETH + IPH + 2), 40000);
    assert_int_equal(wisp_rd32(g_out + ETH + IPH + 4), 0);
    assert_int_equal(wisp_rd32(g_out + ETH + IPH + 8), 0x01020305u);
    assert_int_equal(g_out[ETH + IPH + 13], 0x14); /* RST|ACK */
    assert_int_equal(wisp_chksum_add(wisp_chksum_pseudo4(tu_ip_self(), tu_ip_peer(), WISP_IP4_PROTO_TCP, 20),
                                     wisp_chksum_sum(g_out + ETH + IPH, 20)),
                     0xFFFF);
    tu_env_free(e);
}

/* No protocol unreachable about a broadcast (RFC 1122 §3.2.2). */
static void test_unknown_protocol_broadcast_silent(void **state)
{
    struct tu_env *e = env();
    size_t n = raw_dgram(g_buf, tu_ip_peer(), WISP_IP4_BCAST, 253, 30);
    (void)state;
    ip_in(e, &e->nif, g_buf, n, WISP_PBUF_F_BCAST);
    assert_int_equal(TU_CTR(e, IP4_DROP_PROTO), 1);
    assert_int_equal(tu_pending(e), 0);
    tu_env_free(e);
}

/* --------------------------------------------------------------- routing */

static void test_route_longest_prefix(void **state)
{
    struct tu_env *e = env();
    struct wisp_netif nif2;
    struct rec_dev rd;
    (void)state;
    /* tu0: 198.18.0.2/24; rec1: 198.18.0.130/25 (a longer prefix) */
    add_nif2(e, &nif2, &rd, wisp_ip4(198, 18, 0, 130), 25, 0);
    assert_ptr_equal(wisp_ip4_route(e->s, wisp_ip4(198, 18, 0, 200)), &nif2);
    assert_ptr_equal(wisp_ip4_route(e->s, wisp_ip4(198, 18, 0, 5)), &e->nif);
    /* with rec1 down the /24 covers it */
    wisp_netif_set_link(&nif2, false);
    assert_ptr_equal(wisp_ip4_route(e->s, wisp_ip4(198, 18, 0, 200)), &e->nif);
    tu_env_free(e);
}

/* The second interface carries the datagram, to the on-link host. */
static void test_route_output_on_second_interface(void **state)
{
    struct tu_env *e = env();
    struct wisp_netif nif2;
    struct rec_dev rd;
    struct wisp_pbuf *p;
    (void)state;
    add_nif2(e, &nif2, &rd, wisp_ip4(10, 1, 0, 2), 16, 0);
    assert_int_equal(wisp_arp_add_static(&nif2, wisp_ip4(10, 1, 7, 7), mac2_peer), WISP_OK);
    p = wisp_pbuf_alloc(e->s, WISP_LAYER_TRANSPORT, 4, WISP_PBUF_RAM);
    assert_non_null(p);
    memset(p->payload, 0x33, 4);
    assert_int_equal(wisp_ip4_output(e->s, p, 0, wisp_ip4(10, 1, 7, 7), 0, 0, 253, false), WISP_OK);
    assert_int_equal(rd.sent, 1);
    assert_int_equal(tu_pending(e), 0);
    assert_int_equal(rd.last_len, ETH + IPH + 4u);
    assert_memory_equal(rd.last, mac2_peer, 6);
    assert_true(wisp_ip4_rd(rd.last + ETH + 12) == wisp_ip4(10, 1, 0, 2));
    assert_true(wisp_ip4_rd(rd.last + ETH + 16) == wisp_ip4(10, 1, 7, 7));
    wisp_pbuf_free(p);
    tu_env_free(e);
}

/* Off-link: the first usable interface with a gateway; the frame goes to
 * the gateway's MAC with the final destination in the IP header. */
static void test_route_default_gateway(void **state)
{
    struct tu_env *e = env();
    struct wisp_netif nif2;
    struct rec_dev rd;
    struct wisp_pbuf *p;
    int m;
    (void)state;
    add_nif2(e, &nif2, &rd, wisp_ip4(10, 1, 0, 2), 16, wisp_ip4(10, 1, 0, 1));
    assert_ptr_equal(wisp_ip4_route(e->s, wisp_ip4(8, 8, 8, 8)), &e->nif);
    /* without a gateway on tu0 the default is rec1's */
    wisp_netif_set_ip4(&e->nif, tu_ip_self(), wisp_ip4_prefix_mask(24), 0);
    assert_ptr_equal(wisp_ip4_route(e->s, wisp_ip4(8, 8, 8, 8)), &nif2);
    wisp_netif_set_ip4(&e->nif, tu_ip_self(), wisp_ip4_prefix_mask(24), tu_ip_peer());
    p = wisp_pbuf_alloc(e->s, WISP_LAYER_TRANSPORT, 4, WISP_PBUF_RAM);
    assert_non_null(p);
    assert_int_equal(wisp_ip4_output(e->s, p, 0, wisp_ip4(8, 8, 8, 8), 0, 0, 253, false), WISP_OK);
    m = tu_pop(e, g_out, sizeof(g_out));
    assert_int_equal(m, (int)(ETH + IPH + 4u));
    assert_memory_equal(g_out, tu_mac_peer, 6);
    assert_true(wisp_ip4_rd(g_out + ETH + 16) == wisp_ip4(8, 8, 8, 8));
    wisp_pbuf_free(p);
    tu_env_free(e);
}

/* No connected subnet and no gateway: no route. */
static void test_no_route(void **state)
{
    struct tu_env *e = env();
    struct wisp_pbuf *p;
    (void)state;
    wisp_netif_set_ip4(&e->nif, tu_ip_self(), wisp_ip4_prefix_mask(24), 0);
    assert_null(wisp_ip4_route(e->s, wisp_ip4(8, 8, 8, 8)));
    p = wisp_pbuf_alloc(e->s, WISP_LAYER_TRANSPORT, 4, WISP_PBUF_RAM);
    assert_non_null(p);
    assert_int_equal(wisp_ip4_output(e->s, p, 0, wisp_ip4(8, 8, 8, 8), 0, 0, 253, false), WISP_ERR_RTE);
    assert_int_equal(TU_CTR(e, IP4_DROP_NOROUTE), 1);
    assert_int_equal(TU_CTR(e, IP4_TX), 0);
    assert_int_equal(p->tot_len, 4);
    wisp_pbuf_free(p);
    tu_env_free(e);
}

static void test_route_loopback_and_broadcast(void **state)
{
    struct tu_env *e = env();
    (void)state;
    assert_ptr_equal(wisp_ip4_route(e->s, wisp_ip4(127, 0, 0, 1)), &e->s->loopif);
    assert_ptr_equal(wisp_ip4_route(e->s, wisp_ip4(127, 3, 2, 1)), &e->s->loopif);
    assert_ptr_equal(wisp_ip4_route(e->s, WISP_IP4_BCAST), &e->nif);
    assert_ptr_equal(wisp_ip4_route(e->s, wisp_ip4(198, 18, 0, 255)), &e->nif);
    wisp_netif_set_link(&e->nif, false);
    assert_null(wisp_ip4_route(e->s, WISP_IP4_BCAST));
    assert_null(wisp_ip4_route(e->s, tu_ip_peer()));
    tu_env_free(e);
}

/* ---------------------------------------------------------------- output */

/* RFC 791 §3.1 header, byte for byte; the caller's pbuf is given back. */
static void test_output_header_exact(void **state)
{
    struct tu_env *e = env();
    struct wisp_pbuf *p = wisp_pbuf_alloc(e->s, WISP_LAYER_TRANSPORT, 10, WISP_PBUF_RAM);
    uint8_t exp[IPH];
    uint8_t *payload;
    uint16_t id;
    int m, i;
    (void)state;
    assert_non_null(p);
    for (i = 0; i < 10; i++) {
        p->payload[i] = (uint8_t)(0xC0 + i);
    }
    payload = p->payload;
    id = e->s->ip4.next_id;
    assert_int_equal(wisp_ip4_output(e->s, p, 0, tu_ip_peer(), 0, 0x10, 253, true), WISP_OK);
    /* the caller's view is unchanged */
    assert_ptr_equal(p->payload, payload);
    assert_int_equal(p->len, 10);
    assert_int_equal(p->tot_len, 10);
    assert_int_equal(p->ref, 1);

    exp[0] = 0x45;
    exp[1] = 0x10;
    exp[2] = 0x00;
    exp[3] = 30;
    exp[4] = (uint8_t)(id >> 8);
    exp[5] = (uint8_t)id;
    exp[6] = 0x40; /* DF */
    exp[7] = 0x00;
    exp[8] = WISP_IP_DEFAULT_TTL;
    exp[9] = 253;
    exp[10] = 0;
    exp[11] = 0;
    wisp_ip4_wr(exp + 12, tu_ip_self());
    wisp_ip4_wr(exp + 16, tu_ip_peer());
    wisp_wr16(exp + 10, (uint16_t)~wisp_chksum_sum_ref(exp, IPH));

    m = tu_pop(e, g_out, sizeof(g_out));
    assert_int_equal(m, (int)(ETH + IPH + 10u));
    assert_memory_equal(g_out, tu_mac_peer, 6);
    assert_memory_equal(g_out + 6, tu_mac_self, 6);
    assert_int_equal(wisp_rd16(g_out + 12), WISP_ETHTYPE_IP4);
    assert_memory_equal(g_out + ETH, exp, IPH);
    assert_memory_equal(g_out + ETH + IPH, payload, 10);
    assert_int_equal(TU_CTR(e, IP4_TX), 1);
    assert_int_equal(e->s->ip4.next_id, (uint16_t)(id + 1u));

    /* the same pbuf again: explicit TTL and source, next ID, no DF */
    assert_int_equal(wisp_ip4_output(e->s, p, tu_ip_self(), tu_ip_peer(), 5, 0, 253, false), WISP_OK);
    m = tu_pop(e, g_out, sizeof(g_out));
    assert_int_equal(m, (int)(ETH + IPH + 10u));
    assert_int_equal(wisp_rd16(g_out + ETH + 4), (uint16_t)(id + 1u));
    assert_int_equal(wisp_rd16(g_out + ETH + 6), 0);
    assert_int_equal(g_out[ETH + 8], 5);
    assert_int_equal(wisp_chksum_sum_ref(g_out + ETH, IPH), 0xFFFF);
    assert_ptr_equal(p->payload, payload);
    wisp_pbuf_free(p);
    tu_env_free(e);
}

/* A REF payload (no headroom) gets a chained header buffer; the frame is
 * identical and the header buffer is freed. */
static void test_output_ref_payload_chained_header(void **state)
{
    struct tu_env *e = env();
    static const uint8_t data[12] = { 9, 8, 7, 6, 5, 4, 3, 2, 1, 0, 1, 2 };
    struct wisp_pbuf *p = wisp_pbuf_alloc_ref(e->s, data, sizeof(data), WISP_PBUF_REF);
    int m;
    (void)state;
    assert_non_null(p);
    assert_int_equal(wisp_ip4_output(e->s, p, 0, tu_ip_peer(), 0, 0, 253, false), WISP_OK);
    assert_int_equal(p->ref, 1);
    assert_int_equal(p->tot_len, sizeof(data));
    assert_int_equal(tu_tx_used(e), 0);
    m = tu_pop(e, g_out, sizeof(g_out));
    assert_int_equal(m, (int)(ETH + IPH + sizeof(data)));
    assert_int_equal(g_out[ETH], 0x45);
    assert_int_equal(wisp_rd16(g_out + ETH + 2), IPH + sizeof(data));
    assert_int_equal(wisp_chksum_sum_ref(g_out + ETH, IPH), 0xFFFF);
    assert_memory_equal(g_out + ETH + IPH, data, sizeof(data));
    wisp_pbuf_free(p);
    tu_env_free(e);
}

/* DSCP EF (TOS 0xB8) goes to the emergency queue; TOS 0 to the common. */
static void test_output_dscp_ef_emergency(void **state)
{
    struct tu_env *e = env();
    struct wisp_pbuf *p = wisp_pbuf_alloc(e->s, WISP_LAYER_TRANSPORT, 8, WISP_PBUF_RAM);
    int m;
    (void)state;
    assert_non_null(p);
    memset(p->payload, 0, 8);
    e->dev.busy = true;
    assert_int_equal(wisp_ip4_output(e->s, p, 0, tu_ip_peer(), 0, 0, 253, false), WISP_OK);
    assert_int_equal(wisp_netif_txq_len(&e->nif, WISP_PRIO_COMMON), 1);
    assert_int_equal(wisp_netif_txq_len(&e->nif, WISP_PRIO_EMERG), 0);
    wisp_pbuf_free(p);
    p = wisp_pbuf_alloc(e->s, WISP_LAYER_TRANSPORT, 8, WISP_PBUF_RAM);
    assert_non_null(p);
    memset(p->payload, 0, 8);
    assert_int_equal(wisp_ip4_output(e->s, p, 0, tu_ip_peer(), 0, 0xB8, 253, false), WISP_OK);
    assert_int_equal(p->prio, WISP_PRIO_EMERG);
    assert_int_equal(wisp_netif_txq_len(&e->nif, WISP_PRIO_EMERG), 1);
    wisp_pbuf_free(p);
    /* the EF datagram leaves first */
    e->dev.busy = false;
    wisp_dev_tx_ready(&e->dev.dev);
    assert_int_equal(tu_pending(e), 2);
    m = tu_pop(e, g_out, sizeof(g_out));
    assert_true(m > 0);
    assert_int_equal(g_out[ETH + 1], 0xB8);
    m = tu_pop(e, g_out, sizeof(g_out));
    assert_true(m > 0);
    assert_int_equal(g_out[ETH + 1], 0x00);
    tu_env_free(e);
}

/* An interface that is down: WISP_ERR_IF. */
static void test_output_link_down(void **state)
{
    struct tu_env *e = env();
    struct wisp_pbuf *p = wisp_pbuf_alloc(e->s, WISP_LAYER_TRANSPORT, 8, WISP_PBUF_RAM);
    (void)state;
    assert_non_null(p);
    wisp_netif_set_link(&e->nif, false);
    assert_int_equal(wisp_ip4_output_if(&e->nif, p, 0, tu_ip_peer(), 0, 0, 253, false), WISP_ERR_IF);
    assert_int_equal(TU_CTR(e, IP4_DROP_LINKDOWN), 1);
    assert_int_equal(p->tot_len, 8);
    wisp_pbuf_free(p);
    tu_env_free(e);
}

/* RFC 791 §3.2: too big with DF -> refused, counted, nothing sent. */
static void test_output_df_too_big(void **state)
{
    struct tu_env *e = env();
    struct wisp_pbuf *p = wisp_pbuf_alloc(e->s, WISP_LAYER_TRANSPORT, 1481, WISP_PBUF_POOL);
    (void)state;
    assert_non_null(p);
    assert_int_equal(wisp_ip4_output(e->s, p, 0, tu_ip_peer(), 0, 0, 253, true), WISP_ERR_VAL);
    assert_int_equal(TU_CTR(e, IP4_DROP_DF), 1);
    assert_int_equal(tu_pending(e), 0);
    assert_int_equal(p->tot_len, 1481);
    wisp_pbuf_free(p);
    tu_env_free(e);
}

/* More than 65535 bytes with the header: refused. */
static void test_output_too_long(void **state)
{
    struct tu_env *e = env();
    struct wisp_pbuf *p = wisp_pbuf_alloc(e->s, WISP_LAYER_RAW, 65516, WISP_PBUF_POOL);
    (void)state;
    assert_non_null(p);
    assert_int_equal(wisp_ip4_output(e->s, p, 0, tu_ip_peer(), 0, 0, 253, false), WISP_ERR_VAL);
    assert_int_equal(TU_CTR(e, IP4_DROP_LEN), 1);
    assert_int_equal(tu_pending(e), 0);
    wisp_pbuf_free(p);
    tu_env_free(e);
}

/* Broadcast output: Ethernet broadcast, IP destination kept. */
static void test_output_broadcast(void **state)
{
    struct tu_env *e = env();
    struct wisp_pbuf *p = wisp_pbuf_alloc(e->s, WISP_LAYER_TRANSPORT, 8, WISP_PBUF_RAM);
    int m;
    (void)state;
    assert_non_null(p);
    memset(p->payload, 0, 8);
    assert_int_equal(wisp_ip4_output(e->s, p, 0, WISP_IP4_BCAST, 0, 0, 253, false), WISP_OK);
    m = tu_pop(e, g_out, sizeof(g_out));
    assert_int_equal(m, (int)(ETH + IPH + 8u));
    assert_memory_equal(g_out, wisp_eth_bcast, 6);
    assert_true(wisp_ip4_rd(g_out + ETH + 16) == WISP_IP4_BCAST);
    wisp_pbuf_free(p);
    tu_env_free(e);
}

/* While ARP resolves, the packet is queued by reference: the IP header
 * must stay in place for the queue, and the queued datagram goes out
 * intact once the reply arrives. */
static void test_output_arp_queued_datagram_intact(void **state)
{
    struct tu_env *e = env();
    const wisp_ip4_t host = wisp_ip4(198, 18, 0, 77);
    static const uint8_t host_mac[6] = { 0x02, 0, 0, 0, 0, 0x77 };
    struct wisp_pbuf *p = wisp_pbuf_alloc(e->s, WISP_LAYER_TRANSPORT, 6, WISP_PBUF_RAM);
    uint8_t *a;
    int m;
    (void)state;
    assert_non_null(p);
    memcpy(p->payload, "abcdef", 6);
    assert_int_equal(wisp_ip4_output(e->s, p, 0, host, 0, 0, 253, false), WISP_OK);
    wisp_pbuf_free(p); /* the caller lets go; the ARP queue holds it */
    m = tu_pop(e, g_out, sizeof(g_out));
    assert_true(m >= 42);
    assert_int_equal(wisp_rd16(g_out + 12), WISP_ETHTYPE_ARP);
    /* ARP reply from the host */
    tu_eth(g_buf, tu_mac_self, host_mac, WISP_ETHTYPE_ARP);
    a = g_buf + ETH;
    wisp_wr16(a, 1);
    wisp_wr16(a + 2, 0x0800);
    a[4] = 6;
    a[5] = 4;
    wisp_wr16(a + 6, 2);
    memcpy(a + 8, host_mac, 6);
    wisp_ip4_wr(a + 14, host);
    memcpy(a + 18, tu_mac_self, 6);
    wisp_ip4_wr(a + 24, tu_ip_self());
    assert_true(tu_inject(e, g_buf, ETH + 28u));
    m = tu_pop(e, g_out, sizeof(g_out));
    assert_int_equal(m, (int)(ETH + IPH + 6u));
    assert_memory_equal(g_out, host_mac, 6);
    assert_int_equal(g_out[ETH], 0x45);
    assert_int_equal(wisp_chksum_sum_ref(g_out + ETH, IPH), 0xFFFF);
    assert_true(wisp_ip4_rd(g_out + ETH + 16) == host);
    assert_memory_equal(g_out + ETH + IPH, "abcdef", 6);
    tu_env_free(e);
}

/* ------------------------------------------------------------- loopback */

struct echo_seen {
    unsigned n;
    uint16_t id, seq;
    wisp_ip4_t src;
};

static void on_echo(void *arg, const struct wisp_ip_info *ip, uint16_t id, uint16_t seq, struct wisp_pbuf *p)
{
    struct echo_seen *s = (struct echo_seen *)arg;
    s->n++;
    s->id = id;
    s->seq = seq;
    s->src = wisp_ipaddr_ip4(&ip->src);
    wisp_pbuf_free(p);
}

/* Ping our own address: the request and the reply travel the loopback
 * queue (delivered by wisp_stack_poll), nothing reaches the wire. */
static void loop_ping(wisp_ip4_t dst)
{
    struct tu_env *e = env();
    struct echo_seen seen;
    (void)memset(&seen, 0, sizeof(seen));
    wisp_icmp_set_echo_cb(e->s, on_echo, &seen);
    assert_int_equal(wisp_icmp_echo_request(e->s, dst, 0x99, 3, 40, 0), WISP_OK);
    assert_int_equal(e->s->loopq_count, 1);
    assert_int_equal(TU_CTR(e, IP4_DELIVERED), 0);
    wisp_stack_poll(e->s); /* the request */
    assert_int_equal(TU_CTR(e, IP4_DELIVERED), 1);
    assert_int_equal(TU_CTR(e, ICMP_ECHO_RX), 1);
    wisp_stack_poll(e->s); /* the reply */
    assert_int_equal(TU_CTR(e, IP4_DELIVERED), 2);
    assert_int_equal(seen.n, 1);
    assert_int_equal(seen.id, 0x99);
    assert_int_equal(seen.seq, 3);
    assert_true(seen.src == dst);
    assert_int_equal(tu_pending(e), 0);
    assert_no_ip_drops(e);
    tu_env_free(e);
}

static void test_loopback_own_address(void **state)
{
    (void)state;
    loop_ping(tu_ip_self());
}

static void test_loopback_127(void **state)
{
    (void)state;
    loop_ping(wisp_ip4(127, 0, 0, 1));
}

/* A full loopback queue drops (loop.drop) and says so. */
static void test_loopback_queue_full(void **state)
{
    struct tu_env *e = env();
    struct wisp_pbuf *p = wisp_pbuf_alloc(e->s, WISP_LAYER_TRANSPORT, 8, WISP_PBUF_RAM);
    unsigned i;
    (void)state;
    assert_non_null(p);
    memset(p->payload, 0, 8);
    for (i = 0; i < WISP_LOOP_QUEUE_LEN; i++) {
        assert_int_equal(wisp_ip4_output(e->s, p, 0, tu_ip_self(), 0, 0, 253, false), WISP_OK);
    }
    assert_int_equal(wisp_ip4_output(e->s, p, 0, tu_ip_self(), 0, 0, 253, false), WISP_ERR_MEM);
    assert_int_equal(TU_CTR(e, LOOP_DROP), 1);
    assert_int_equal(p->tot_len, 8);
    assert_int_equal(p->ref, 1);
    wisp_pbuf_free(p);
    tu_env_free(e); /* the queued copies are freed by deinit */
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_valid_datagram_delivered),
        cmocka_unit_test(test_valid_frame_via_ethernet),
        cmocka_unit_test(test_truncated_every_length),
        cmocka_unit_test(test_bad_version_dropped),
        cmocka_unit_test(test_ihl_4_dropped),
        cmocka_unit_test(test_ihl_15_short_packet_dropped),
        cmocka_unit_test(test_total_length_too_big_dropped),
        cmocka_unit_test(test_total_length_below_header_dropped),
        cmocka_unit_test(test_total_length_below_ihl_dropped),
        cmocka_unit_test(test_bad_checksum_dropped),
        cmocka_unit_test(test_ttl_zero_dropped),
        cmocka_unit_test(test_ttl_one_accepted),
        cmocka_unit_test(test_limited_broadcast_source_dropped),
        cmocka_unit_test(test_directed_broadcast_source_dropped),
        cmocka_unit_test(test_multicast_source_dropped),
        cmocka_unit_test(test_loopback_source_from_wire_dropped),
        cmocka_unit_test(test_zero_source_non_udp_dropped),
        cmocka_unit_test(test_zero_source_udp_unicast_dropped),
        cmocka_unit_test(test_zero_source_udp_broadcast_accepted),
        cmocka_unit_test(test_not_for_us_dropped),
        cmocka_unit_test(test_other_multicast_not_for_us),
        cmocka_unit_test(test_loopback_destination_from_wire_dropped),
        cmocka_unit_test(test_unicast_in_link_broadcast_dropped),
        cmocka_unit_test(test_broadcast_and_all_hosts_accepted),
        cmocka_unit_test(test_weak_host_other_interface_address),
        cmocka_unit_test(test_options_skipped),
        cmocka_unit_test(test_option_length_zero_dropped),
        cmocka_unit_test(test_option_length_one_dropped),
        cmocka_unit_test(test_option_past_header_dropped),
        cmocka_unit_test(test_option_missing_length_dropped),
        cmocka_unit_test(test_option_record_route_pointer_checked),
        cmocka_unit_test(test_option_source_route_checked),
        cmocka_unit_test(test_option_timestamp_checked),
        cmocka_unit_test(test_padding_trimmed),
        cmocka_unit_test(test_unknown_protocol_unreachable),
        cmocka_unit_test(test_tcp_dispatched_syn_to_closed_port_gets_rst),
        cmocka_unit_test(test_unknown_protocol_broadcast_silent),
        cmocka_unit_test(test_route_longest_prefix),
        cmocka_unit_test(test_route_output_on_second_interface),
        cmocka_unit_test(test_route_default_gateway),
        cmocka_unit_test(test_no_route),
        cmocka_unit_test(test_route_loopback_and_broadcast),
        cmocka_unit_test(test_output_header_exact),
        cmocka_unit_test(test_output_ref_payload_chained_header),
        cmocka_unit_test(test_output_dscp_ef_emergency),
        cmocka_unit_test(test_output_link_down),
        cmocka_unit_test(test_output_df_too_big),
        cmocka_unit_test(test_output_too_long),
        cmocka_unit_test(test_output_broadcast),
        cmocka_unit_test(test_output_arp_queued_datagram_intact),
        cmocka_unit_test(test_loopback_own_address),
        cmocka_unit_test(test_loopback_127),
        cmocka_unit_test(test_loopback_queue_full),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
