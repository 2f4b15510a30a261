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

/* Inject d (with link-layer flags) and assert it was dropped by exactly
 * one reason. */
static void expect_drop_f(const uint8_t *d, size_t len, uint8_t flags, enum wisp_counter ctr)
{
    struct tu_env *e = env();
    ip_in(e, &e->nif, d, len, flags);
    assert_int_equal(e->s->ctr[ctr], 1);
    assert_int_equal(TU_CTR(e, IP4_RX), 1);
    assert_int_equal(TU_CTR(e, IP4_DELIVERED), 0);
    assert_int_equal(TU_CTR(e, ICMP_RX), 0);
    assert_int_equal(tu_pending(e), 0);
    assert_int_equal(wisp_stack_pools_in_use(e->s), 0);
    tu_env_free(e);
}

static void expect_drop(const uint8_t *d, size_t len, enum wisp_counter ctr)
{
    expect_drop_f(d, len, 0, ctr);
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

/* One received datagram per case: how it is built and spoiled, and the
 * counter that must count it. A dropped datagram is checked by
 * expect_drop (that counter 1, IP4_RX 1, nothing delivered or answered, no
 * buffer held); an accepted one is delivered to its protocol with no IP
 * drop counted. */
enum dg_kind { DG_ECHO, DG_RAW };           /* an echo request with 8 data bytes, or raw_dgram() */
enum dg_spoil {
    SP_NONE,
    SP_BYTE,                                /* byte at set its value to val, checksum fixed */
    SP_BYTE_RAW,                            /* the same, checksum left as it was */
    SP_BAD_SUM,                             /* a bit of the header checksum flipped */
    SP_TOT_LEN,                             /* Total Length val, checksum fixed */
    SP_NOP_HDR,                             /* a 24-byte header (4 NOP options), Total Length val */
    SP_DHCP_UDP,                            /* a UDP header 68 -> 67, no checksum (raw UDP) */
};

struct in_case {
    const char *what;
    enum dg_kind kind;
    uint8_t proto;                          /* DG_RAW: the protocol */
    uint16_t dlen;                          /* DG_RAW: data bytes */
    wisp_ip4_t src, dst;
    enum dg_spoil spoil;
    uint8_t at;
    uint16_t val;
    uint8_t link_flags;                     /* WISP_PBUF_F_BCAST / _MCAST */
    enum wisp_counter ctr;                  /* the drop counter; IP4_DELIVERED: accepted */
};

static size_t in_case_dgram(const struct in_case *c)
{
    size_t n = c->kind == DG_ECHO ? echo_dgram(g_buf, c->src, c->dst, 8) : raw_dgram(g_buf, c->src, c->dst, c->proto,
                                                                                     c->dlen);
    switch (c->spoil) {
    case SP_NONE:
        break;
    case SP_BYTE:
    case SP_BYTE_RAW:
        g_buf[c->at] = (uint8_t)c->val;
        if (c->spoil == SP_BYTE) {
            fix_ck(g_buf);
        }
        break;
    case SP_BAD_SUM:
        g_buf[10] ^= 0x01;
        break;
    case SP_TOT_LEN:
        wisp_wr16(g_buf + 2, c->val);
        fix_ck(g_buf);
        break;
    case SP_NOP_HDR:
        g_buf[0] = 0x46; /* 24-byte header: bytes 20..23 become NOP options */
        memset(g_buf + 20, 1, 4);
        wisp_wr16(g_buf + 2, c->val);
        fix_ck(g_buf);
        break;
    case SP_DHCP_UDP:
        wisp_wr16(g_buf + IPH, 68);
        wisp_wr16(g_buf + IPH + 2, 67);
        wisp_wr16(g_buf + IPH + 4, 8);
        wisp_wr16(g_buf + IPH + 6, 0);
        break;
    }
    return n;
}

static void test_input_cases(void **state)
{
    const wisp_ip4_t peer = tu_ip_peer(), self = tu_ip_self(), any = WISP_IP4_ANY, bcast = WISP_IP4_BCAST;
    const wisp_ip4_t net_bcast = wisp_ip4(198, 18, 0, 255), lo = wisp_ip4(127, 0, 0, 1);
    const struct in_case cases[] = {
        /* RFC 1122 §3.2.1.1: version other than 4 is discarded */
        { "bad version", DG_ECHO, 0, 0, peer, self, SP_BYTE, 0, 0x65, 0, WISP_CTR_IP4_DROP_VERSION },
        /* RFC 791 §3.1: IHL below 5 is no valid header */
        { "IHL 4", DG_ECHO, 0, 0, peer, self, SP_BYTE_RAW, 0, 0x44, 0, WISP_CTR_IP4_DROP_IHL },
        /* IHL 15 (60 bytes) on a 40-byte packet: the header runs past the data */
        { "IHL 15 on a short packet", DG_RAW, 253, 20, peer, self, SP_BYTE_RAW, 0, 0x4f, 0, WISP_CTR_IP4_DROP_IHL },
        { "Total Length beyond what arrived", DG_RAW, 253, 20, peer, self, SP_TOT_LEN, 0, 41, 0,
          WISP_CTR_IP4_DROP_LEN },
        { "Total Length below the header", DG_RAW, 253, 20, peer, self, SP_TOT_LEN, 0, 19, 0, WISP_CTR_IP4_DROP_LEN },
        { "Total Length below IHL * 4", DG_RAW, 253, 20, peer, self, SP_NOP_HDR, 0, 22, 0, WISP_CTR_IP4_DROP_LEN },
        /* RFC 1122 §3.2.1.2 */
        { "bad header checksum", DG_ECHO, 0, 0, peer, self, SP_BAD_SUM, 0, 0, 0, WISP_CTR_IP4_DROP_CHKSUM },
        /* RFC 791 §3.1: TTL 0 is destroyed; RFC 1122 §3.2.1.7: a host must
         * not discard TTL 1 */
        { "TTL 0", DG_ECHO, 0, 0, peer, self, SP_BYTE, 8, 0, 0, WISP_CTR_IP4_DROP_TTL },
        { "TTL 1 accepted", DG_ECHO, 0, 0, peer, self, SP_BYTE, 8, 1, 0, WISP_CTR_IP4_DELIVERED },
        /* RFC 1122 §3.2.1.3: sources that are no host */
        { "limited broadcast source", DG_ECHO, 0, 0, bcast, self, SP_NONE, 0, 0, 0, WISP_CTR_IP4_DROP_SRC },
        { "directed broadcast source", DG_ECHO, 0, 0, net_bcast, self, SP_NONE, 0, 0, 0, WISP_CTR_IP4_DROP_SRC },
        /* RFC 1112 §4 */
        { "multicast source", DG_ECHO, 0, 0, wisp_ip4(224, 0, 0, 9), self, SP_NONE, 0, 0, 0, WISP_CTR_IP4_DROP_SRC },
        /* RFC 1122 §3.2.1.3 (g): 127/8 never arrives from a wire */
        { "loopback source from a wire", DG_ECHO, 0, 0, lo, self, SP_NONE, 0, 0, 0, WISP_CTR_IP4_DROP_SRC },
        /* 0.0.0.0 as source is refused except UDP to a broadcast (DHCP) */
        { "zero source, not UDP", DG_ECHO, 0, 0, any, self, SP_NONE, 0, 0, 0, WISP_CTR_IP4_DROP_SRC },
        { "zero source, UDP unicast", DG_RAW, WISP_IP4_PROTO_UDP, 8, any, self, SP_NONE, 0, 0, 0,
          WISP_CTR_IP4_DROP_SRC },
        { "zero source, UDP broadcast accepted", DG_RAW, WISP_IP4_PROTO_UDP, 8, any, bcast, SP_DHCP_UDP, 0, 0,
          WISP_PBUF_F_BCAST, WISP_CTR_IP4_DELIVERED },
        /* we are a host: another unicast destination is not for us */
        { "another unicast destination", DG_ECHO, 0, 0, peer, wisp_ip4(198, 18, 0, 99), SP_NONE, 0, 0, 0,
          WISP_CTR_IP4_DROP_NOTFORUS },
        /* no group but all-hosts is joined */
        { "another multicast group", DG_ECHO, 0, 0, peer, wisp_ip4(224, 0, 0, 251), SP_NONE, 0, 0, 0,
          WISP_CTR_IP4_DROP_NOTFORUS },
        { "loopback destination from a wire", DG_ECHO, 0, 0, peer, lo, SP_NONE, 0, 0, 0, WISP_CTR_IP4_DROP_NOTFORUS },
        /* RFC 1122 §3.3.6 */
        { "IP unicast in a link-layer broadcast", DG_ECHO, 0, 0, peer, self, SP_NONE, 0, 0, WISP_PBUF_F_BCAST,
          WISP_CTR_IP4_DROP_NOTFORUS },
    };
    unsigned i;
    (void)state;
    for (i = 0; i < WISP_ARRAY_SIZE(cases); i++) {
        const struct in_case *c = &cases[i];
        size_t n;
        print_message("case %u: %s\n", i, c->what);
        n = in_case_dgram(c);
        if (c->kind == DG_RAW) {
            assert_int_equal(n, IPH + c->dlen);
        }
        if (c->ctr != WISP_CTR_IP4_DELIVERED) {
            expect_drop_f(g_buf, n, c->link_flags, c->ctr);
        } else {
            struct tu_env *e = env();
            ip_in(e, &e->nif, g_buf, n, c->link_flags);
            assert_int_equal(TU_CTR(e, IP4_DELIVERED), 1);
            if (c->proto == WISP_IP4_PROTO_UDP) {
                assert_int_equal(TU_CTR(e, UDP_RX), 1);
            } else {
                assert_int_equal(TU_CTR(e, ICMP_RX), 1);
            }
            assert_no_ip_drops(e);
            tu_env_free(e);
        }
    }
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

/* Option lists, one per case: malformed ones are dropped and counted, not
 * answered; good ones are delivered and answered. */
static const struct opt_case {
    const char *what;
    bool raw;                 /* the four bytes in a 24-byte header of a raw datagram (opts_case) */
    uint8_t o[16];            /* else the option bytes of an echo request (opts_dgram) */
    uint8_t n;
    bool ok;
} opt_cases[] = {
    /* a malformed list: length 0, length 1, running past the header, a
     * length octet missing */
    { "length 0", true, { 0x44, 0, 0, 0 }, 4, false },
    { "length 1", true, { 0x44, 1, 0, 0 }, 4, false },
    { "NOP, then a 4-byte option with 3 bytes left", true, { 1, 0x07, 4, 4 }, 4, false },
    { "loose source route type in the last byte", true, { 1, 1, 1, 0x83 }, 4, false },
    /* RFC 791 §3.1 / RFC 1122 §3.2.1.8: Record Route with a pointer below
     * 4 (0 included) or leaving a partial address slot, or with a length
     * that is not 3 + 4n, is malformed; a full record (pointer past the
     * end) and a fresh one are fine */
    { "RR pointer 0", false, { 7, 7, 0, 0, 0, 0, 0, 0 }, 8, false },
    { "RR pointer 3", false, { 7, 7, 3, 0, 0, 0, 0, 0 }, 8, false },
    { "RR pointer 5", false, { 7, 7, 5, 0, 0, 0, 0, 0 }, 8, false },
    { "RR length 8", false, { 7, 8, 4, 0, 0, 0, 0, 0 }, 8, false },
    { "RR twice", false, { 7, 7, 4, 0, 0, 0, 0, 7, 7, 4, 0, 0, 0, 0, 0, 0 }, 16, false },
    { "RR fresh", false, { 7, 7, 4, 0, 0, 0, 0, 0 }, 8, true },
    { "RR full", false, { 7, 7, 8, 1, 2, 3, 4, 0 }, 8, true },
    /* source routes: an odd length (not 3 + 4n), a pointer below 4, two
     * source routes are malformed; a route not yet done (pointer at or
     * below the length) names a further hop, which a host does not forward
     * (RFC 1122 §3.3.1, §3.3.5); a completed one reached its destination */
    { "LSRR length 8", false, { 131, 8, 8, 0, 0, 0, 0, 0 }, 8, false },
    { "SSRR length 6", false, { 137, 6, 4, 0, 0, 0, 0, 0 }, 8, false },
    { "LSRR pointer 0", false, { 131, 7, 0, 1, 2, 3, 4, 0 }, 8, false },
    { "LSRR with a hop to go", false, { 131, 7, 4, 198, 18, 0, 9, 0 }, 8, false },
    { "SSRR with a hop to go", false, { 137, 11, 8, 198, 18, 0, 9, 198, 18, 0, 10, 0 }, 12, false },
    { "two source routes", false, { 131, 7, 8, 1, 2, 3, 4, 137, 7, 8, 1, 2, 3, 4, 0, 0 }, 16, false },
    { "LSRR done", false, { 131, 7, 8, 198, 18, 0, 9, 0 }, 8, true },
    { "SSRR done", false, { 137, 11, 12, 198, 18, 0, 9, 198, 18, 0, 10, 0 }, 12, true },
    /* Timestamp (RFC 791 §3.1): length >= 4, pointer >= 5, flags 0/1/3,
     * room for a whole slot; Stream ID: length 4 */
    { "TS pointer 4", false, { 68, 8, 4, 0, 0, 0, 0, 0 }, 8, false },
    { "TS length 3", false, { 68, 3, 5, 0 }, 4, false },
    { "TS flag 2", false, { 68, 8, 5, 2, 0, 0, 0, 0 }, 8, false },
    { "TS 8-byte slot, 4 bytes left", false, { 68, 8, 5, 1, 0, 0, 0, 0 }, 8, false },
    { "stream ID length 5", false, { 136, 5, 0, 0, 0, 0, 0, 0 }, 8, false },
    { "TS flag 0", false, { 68, 8, 5, 0, 0, 0, 0, 0 }, 8, true },
    { "TS flag 1", false, { 68, 12, 5, 1, 0, 0, 0, 0, 0, 0, 0, 0 }, 12, true },
    { "TS full (overflow count)", false, { 68, 8, 9, 0x10, 0, 0, 0, 1 }, 8, true },
    { "stream ID", false, { 136, 4, 0x12, 0x34 }, 4, true },
};

static void test_option_cases(void **state)
{
    unsigned i;
    (void)state;
    for (i = 0; i < WISP_ARRAY_SIZE(opt_cases); i++) {
        const struct opt_case *c = &opt_cases[i];
        print_message("case %u: %s\n", i, c->what);
        if (c->raw) {
            opts_case(c->o[0], c->o[1], c->o[2], c->o[3]);
        } else if (c->ok) {
            opts_ok(c->o, c->n);
        } else {
            opts_bad(c->o, c->n);
        }
    }
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

/* wisp_ip4_is_bcast (wisp/ip4.h): the limited broadcast always, a directed
 * one of the interface's subnet; no interface (NULL, documented) is no
 * crash -- its owner check comes after the NULL check. */
static void test_is_bcast(void **state)
{
    struct tu_env *e = env();
    (void)state;
    assert_true(wisp_ip4_is_bcast(NULL, WISP_IP4_BCAST));
    assert_false(wisp_ip4_is_bcast(NULL, wisp_ip4(198, 18, 0, 255)));
    assert_true(wisp_ip4_is_bcast(&e->nif, WISP_IP4_BCAST));
    assert_true(wisp_ip4_is_bcast(&e->nif, wisp_ip4(198, 18, 0, 255)));
    assert_false(wisp_ip4_is_bcast(&e->nif, tu_ip_peer()));
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

/* Output that is refused: the error, the counter, nothing sent, the
 * caller's buffer untouched. */
static void test_output_refused(void **state)
{
    static const struct {
        const char *what;
        uint16_t len;             /* the payload */
        enum wisp_pbuf_layer layer;
        enum wisp_pbuf_kind type;
        bool link_down;           /* through wisp_ip4_output_if on a link that is down */
        bool df;
        wisp_err_t err;
        enum wisp_counter ctr;
    } cases[] = {
        /* an interface that is down */
        { "link down", 8, WISP_LAYER_TRANSPORT, WISP_PBUF_RAM, true, false, WISP_ERR_IF, WISP_CTR_IP4_DROP_LINKDOWN },
        /* RFC 791 §3.2: too big with DF */
        { "too big with DF", 1481, WISP_LAYER_TRANSPORT, WISP_PBUF_POOL, false, true, WISP_ERR_VAL, WISP_CTR_IP4_DROP_DF },
        /* more than 65535 bytes with the header */
        { "too long", 65516, WISP_LAYER_RAW, WISP_PBUF_POOL, false, false, WISP_ERR_VAL, WISP_CTR_IP4_DROP_LEN },
    };
    unsigned i;
    (void)state;
    for (i = 0; i < WISP_ARRAY_SIZE(cases); i++) {
        struct tu_env *e = env();
        struct wisp_pbuf *p = wisp_pbuf_alloc(e->s, cases[i].layer, cases[i].len, cases[i].type);
        wisp_err_t err;
        print_message("case %u: %s\n", i, cases[i].what);
        assert_non_null(p);
        if (cases[i].link_down) {
            wisp_netif_set_link(&e->nif, false);
            err = wisp_ip4_output_if(&e->nif, p, 0, tu_ip_peer(), 0, 0, 253, cases[i].df);
        } else {
            err = wisp_ip4_output(e->s, p, 0, tu_ip_peer(), 0, 0, 253, cases[i].df);
        }
        assert_int_equal(err, cases[i].err);
        assert_int_equal(e->s->ctr[cases[i].ctr], 1);
        assert_int_equal(tu_pending(e), 0);
        assert_int_equal(p->tot_len, cases[i].len);
        wisp_pbuf_free(p);
        tu_env_free(e);
    }
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
        cmocka_unit_test(test_input_cases),
        cmocka_unit_test(test_broadcast_and_all_hosts_accepted),
        cmocka_unit_test(test_weak_host_other_interface_address),
        cmocka_unit_test(test_options_skipped),
        cmocka_unit_test(test_option_cases),
        cmocka_unit_test(test_padding_trimmed),
        cmocka_unit_test(test_unknown_protocol_unreachable),
        cmocka_unit_test(test_tcp_dispatched_syn_to_closed_port_gets_rst),
        cmocka_unit_test(test_unknown_protocol_broadcast_silent),
        cmocka_unit_test(test_route_longest_prefix),
        cmocka_unit_test(test_is_bcast),
        cmocka_unit_test(test_route_output_on_second_interface),
        cmocka_unit_test(test_route_default_gateway),
        cmocka_unit_test(test_no_route),
        cmocka_unit_test(test_route_loopback_and_broadcast),
        cmocka_unit_test(test_output_header_exact),
        cmocka_unit_test(test_output_ref_payload_chained_header),
        cmocka_unit_test(test_output_dscp_ef_emergency),
        cmocka_unit_test(test_output_refused),
        cmocka_unit_test(test_output_broadcast),
        cmocka_unit_test(test_output_arp_queued_datagram_intact),
        cmocka_unit_test(test_loopback_own_address),
        cmocka_unit_test(test_loopback_127),
        cmocka_unit_test(test_loopback_queue_full),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
