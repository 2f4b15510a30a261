/**
 * @file test_icmp.c
 * Unit tests of ICMP (src/core/icmp.c): echo reply (byte-exact, in place,
 * large reassembled requests), input validation, the RFC 1122 §3.2.2
 * suppression rules of destination unreachable, the rate limit and the echo
 * request API with its reply callback.
 */
#include "testutil.h"

#include <stdlib.h>

#define ETH WISP_ETH_HLEN
#define IPH WISP_IP4_HLEN
#define ICMP_OFF (ETH + IPH)

static uint8_t g_frame[70000];
static uint8_t g_out[70000];

/* ---------------------------------------------------------------- helpers */

static struct tu_env *env(void)
{
    struct tu_env *e = tu_env_new(42);
    tu_arp_peer(e);
    tu_clear(e);
    return e;
}

/* Check the Ethernet + IPv4 header of a frame the stack sent to the peer. */
static void check_ip_to_peer(const uint8_t *f, int n, uint8_t proto, uint16_t ip_len)
{
    assert_true(n >= (int)(ETH + IPH));
    assert_memory_equal(f, tu_mac_peer, 6);
    assert_memory_equal(f + 6, tu_mac_self, 6);
    assert_int_equal(wisp_rd16(f + 12), WISP_ETHTYPE_IP4);
    assert_int_equal(f[ETH], 0x45);
    assert_int_equal(wisp_rd16(f + ETH + 2), ip_len);
    assert_int_equal(f[ETH + 9], proto);
    assert_int_equal(wisp_chksum_sum(f + ETH, IPH), 0xFFFF);
    assert_true(wisp_ip4_rd(f + ETH + 12) == tu_ip_self());
    assert_true(wisp_ip4_rd(f + ETH + 16) == tu_ip_peer());
}

/* A fresh echo request frame with `len` payload bytes of a test pattern. */
static size_t ping(uint8_t *buf, uint16_t id, uint16_t seq, uint16_t len)
{
    static uint8_t data[65536];
    uint32_t i;
    for (i = 0; i < len; i++) {
        data[i] = (uint8_t)(i * 7u + 3u);
    }
    return tu_ping_frame(buf, id, seq, data, len);
}

/* Send a ping of len bytes, check the reply byte by byte. */
static void ping_and_check(uint16_t len)
{
    struct tu_env *e = env();
    size_t n = ping(g_frame, 0xBEEF, 0x0102, len);
    int m;
    uint16_t ck;

    assert_true(tu_inject(e, g_frame, n));
    assert_int_equal(tu_pending(e), 1);
    m = tu_pop(e, g_out, sizeof(g_out));
    assert_int_equal(m, (int)n);
    check_ip_to_peer(g_out, m, WISP_IP4_PROTO_ICMP, (uint16_t)(IPH + 8u + len));
    assert_int_equal(g_out[ETH + 8], WISP_IP_DEFAULT_TTL);
    /* RFC 792: type 0, code, id, seq and data unchanged */
    assert_int_equal(g_out[ICMP_OFF], WISP_ICMP_ECHO_REPLY);
    assert_int_equal(g_out[ICMP_OFF + 1], 0);
    assert_int_equal(wisp_rd16(g_out + ICMP_OFF + 4), 0xBEEF);
    assert_int_equal(wisp_rd16(g_out + ICMP_OFF + 6), 0x0102);
    assert_memory_equal(g_out + ICMP_OFF + 8, g_frame + ICMP_OFF + 8, len);
    /* checksum valid and equal to a recomputation */
    assert_int_equal(wisp_chksum_sum(g_out + ICMP_OFF, 8u + len), 0xFFFF);
    ck = wisp_rd16(g_out + ICMP_OFF + 2);
    wisp_wr16(g_out + ICMP_OFF + 2, 0);
    assert_int_equal(ck, (uint16_t)~wisp_chksum_sum(g_out + ICMP_OFF, 8u + len));

    assert_int_equal(TU_CTR(e, ICMP_RX), 1);
    assert_int_equal(TU_CTR(e, ICMP_ECHO_RX), 1);
    assert_int_equal(TU_CTR(e, ICMP_ECHO_REPLY_TX), 1);
    assert_int_equal(TU_CTR(e, ICMP_TX), 1);
    tu_env_free(e);
}

/* A received datagram for direct calls: frame copied into receive buffers,
 * link and IP header popped (the IP header stays in front), ip filled. */
static struct wisp_pbuf *mk_dgram(struct tu_env *e, const uint8_t *frame, size_t len, struct wisp_ip_info *ip)
{
    struct wisp_pbuf *p = wisp_pbuf_alloc_rx(e->s, (uint16_t)len);
    const uint8_t *h = frame + ETH;
    assert_non_null(p);
    assert_int_equal(wisp_pbuf_copy_in(p, frame, (uint16_t)len, 0), WISP_OK);
    assert_int_equal(wisp_pbuf_pop(p, ETH), WISP_OK);
    memset(ip, 0, sizeof(*ip));
    ip->nif = &e->nif;
    ip->hlen = (uint16_t)((h[0] & 0x0f) * 4u);
    ip->tot_len = wisp_rd16(h + 2);
    ip->tos = h[1];
    ip->ttl = h[8];
    ip->proto = h[9];
    ip->src = wisp_ipaddr4(wisp_ip4_rd(h + 12));
    ip->dst = wisp_ipaddr4(wisp_ip4_rd(h + 16));
    assert_int_equal(wisp_pbuf_pop(p, ip->hlen), WISP_OK);
    return p;
}

/* Rewrite the IP addresses of a frame built by the tu builders. */
static void set_ip(uint8_t *f, wisp_ip4_t src, wisp_ip4_t dst, uint16_t flags_off)
{
    wisp_ip4_wr(f + ETH + 12, src);
    wisp_ip4_wr(f + ETH + 16, dst);
    wisp_wr16(f + ETH + 6, flags_off);
    wisp_wr16(f + ETH + 10, 0);
    wisp_wr16(f + ETH + 10, (uint16_t)~wisp_chksum_sum(f + ETH, IPH));
}

/* ------------------------------------------------------------- echo reply */

static void test_echo_reply_byte_exact(void **state)
{
    (void)state;
    ping_and_check(56);
}

static void test_echo_reply_empty_payload(void **state)
{
    (void)state;
    ping_and_check(0);
}

static void test_echo_reply_full_mtu_payload(void **state)
{
    (void)state;
    ping_and_check(1472); /* 20 + 8 + 1472 = 1500 */
}

/* RFC 1624 §3-5: an all-zero reply (id 0, seq 0, no data) must carry the
 * checksum 0xFFFF that a full computation gives, not the 0x0000 that the
 * incremental update yields. */
static void test_echo_reply_all_zero_checksum(void **state)
{
    struct tu_env *e = env();
    size_t n = tu_ping_frame(g_frame, 0, 0, "", 0);
    int m;
    (void)state;
    assert_int_equal(wisp_rd16(g_frame + ICMP_OFF + 2), 0xF7FF);
    assert_true(tu_inject(e, g_frame, n));
    m = tu_pop(e, g_out, sizeof(g_out));
    assert_int_equal(m, (int)n);
    assert_int_equal(g_out[ICMP_OFF], WISP_ICMP_ECHO_REPLY);
    assert_int_equal(wisp_rd16(g_out + ICMP_OFF + 2), 0xFFFF);
    assert_int_equal(wisp_chksum_sum(g_out + ICMP_OFF, 8), 0xFFFF);
    tu_env_free(e);
}

/* The reply keeps the TOS of the request (RFC 1122 §3.2.2.6 via IP). */
static void test_echo_reply_keeps_tos(void **state)
{
    struct tu_env *e = env();
    size_t n = ping(g_frame, 1, 1, 16);
    int m;
    (void)state;
    g_frame[ETH + 1] = 0xB8; /* EF */
    wisp_wr16(g_frame + ETH + 10, 0);
    wisp_wr16(g_frame + ETH + 10, (uint16_t)~wisp_chksum_sum(g_frame + ETH, IPH));
    assert_true(tu_inject(e, g_frame, n));
    m = tu_pop(e, g_out, sizeof(g_out));
    assert_true(m > 0);
    assert_int_equal(g_out[ETH + 1], 0xB8);
    assert_int_equal(g_out[ICMP_OFF], WISP_ICMP_ECHO_REPLY);
    tu_env_free(e);
}

/* An unshared request is answered in place: no transmit buffer is needed for
 * the ICMP message (only the receive buffer carries it). */
static void test_echo_reply_in_place(void **state)
{
    struct tu_env *e = env();
    size_t n = ping(g_frame, 9, 9, 100);
    uint32_t tx_allocs;
    (void)state;
    tx_allocs = tu_tx_allocs(e);
    assert_true(tu_inject(e, g_frame, n));
    assert_int_equal(tu_pending(e), 1);
    assert_int_equal(tu_tx_allocs(e), tx_allocs);
    tu_env_free(e);
}

/* A shared request (someone else holds a reference) is copied, never
 * modified: the holder still sees the echo request. */
static void test_echo_reply_shared_pbuf_copied(void **state)
{
    struct tu_env *e = env();
    struct wisp_ip_info ip;
    size_t n = ping(g_frame, 7, 8, 32);
    struct wisp_pbuf *p = mk_dgram(e, g_frame, n, &ip);
    int m;
    (void)state;
    wisp_pbuf_ref(p); /* our own reference */
    wisp_icmp_input(e->s, p, &ip);
    /* the reply went out ... */
    m = tu_pop(e, g_out, sizeof(g_out));
    assert_int_equal(m, (int)n);
    assert_int_equal(g_out[ICMP_OFF], WISP_ICMP_ECHO_REPLY);
    assert_int_equal(wisp_chksum_sum(g_out + ICMP_OFF, 8u + 32u), 0xFFFF);
    /* ... and our buffer is untouched */
    assert_int_equal(p->ref, 1);
    assert_int_equal(p->tot_len, 8u + 32u);
    assert_int_equal(wisp_pbuf_get_u8(p, 0), WISP_ICMP_ECHO);
    assert_int_equal(wisp_pbuf_chksum(p, 0, p->tot_len), 0xFFFF);
    wisp_pbuf_free(p);
    tu_env_free(e);
}

/* An 8000-byte echo request arrives in fragments, is reassembled, and the
 * reply (8008 bytes of ICMP) is fragmented by IP on the way out. */
static void test_echo_reply_large_reassembled(void **state)
{
    enum { DATA = 8000, MSG = DATA + 8, FRAG = 1480 };
    static uint8_t msg[MSG], back[MSG];
    struct tu_env *e = env();
    size_t n = ping(g_frame, 0x55AA, 3, DATA);
    unsigned off, got = 0, frames = 0;
    int m;
    (void)state;
    (void)n;
    memcpy(msg, g_frame + ICMP_OFF, MSG);

    for (off = 0; off < MSG; off += FRAG) {
        unsigned len = WISP_MIN((unsigned)FRAG, MSG - off);
        bool more = off + len < MSG;
        tu_eth(g_frame, tu_mac_self, tu_mac_peer, WISP_ETHTYPE_IP4);
        tu_ip4(g_frame + ETH, tu_ip_peer(), tu_ip_self(), WISP_IP4_PROTO_ICMP, (uint16_t)len, 0x7777,
               (uint16_t)((more ? WISP_IP4_FLAG_MF : 0u) | (off / 8u)), 64);
        memcpy(g_frame + ICMP_OFF, msg + off, len);
        assert_true(tu_inject(e, g_frame, ICMP_OFF + len));
    }
    assert_int_equal(TU_CTR(e, ICMP_ECHO_REPLY_TX), 1);

    memset(back, 0, sizeof(back));
    while ((m = tu_pop(e, g_out, sizeof(g_out))) > 0) {
        uint16_t fo = wisp_rd16(g_out + ETH + 6);
        uint16_t tl = wisp_rd16(g_out + ETH + 2);
        unsigned o = (fo & WISP_IP4_OFFMASK) * 8u;
        unsigned l = tl - IPH;
        assert_int_equal(g_out[ETH], 0x45);
        assert_int_equal(g_out[ETH + 9], WISP_IP4_PROTO_ICMP);
        assert_true(wisp_ip4_rd(g_out + ETH + 16) == tu_ip_peer());
        assert_int_equal(wisp_chksum_sum(g_out + ETH, IPH), 0xFFFF);
        assert_true(tl <= 1500);
        assert_true(o + l <= MSG);
        memcpy(back + o, g_out + ICMP_OFF, l);
        got += l;
        frames++;
    }
    assert_int_equal(got, MSG);
    assert_true(frames >= 6);
    assert_int_equal(back[0], WISP_ICMP_ECHO_REPLY);
    assert_int_equal(wisp_rd16(back + 4), 0x55AA);
    assert_int_equal(wisp_rd16(back + 6), 3);
    assert_memory_equal(back + 8, msg + 8, DATA);
    assert_int_equal(wisp_chksum_sum(back, MSG), 0xFFFF);
    tu_env_free(e);
}

/* ------------------------------------------------------ input validation */

/* ICMP messages from the peer that get no answer, one per case, with every
 * ICMP input counter checked. */
enum in_msg {
    IN_BAD_SUM,               /* an echo request, a data bit flipped after the checksum */
    IN_TRUNCATED,             /* a 4-byte ICMP message (Ethernet padded to 60) */
    IN_ECHO_BCAST,            /* an echo request to the limited broadcast */
    IN_ECHO_NET_BCAST,        /* ... to the directed broadcast of our subnet */
    IN_UNKNOWN_TYPE,          /* type 42 */
    IN_ERROR,                 /* a port unreachable (an error about an error is never sent) */
};

static const struct icmp_in_case {
    const char *what;
    enum in_msg msg;
    /* ICMP_RX, _DROP_SHORT, _DROP_CHKSUM, _DROP_TYPE, _DROP_BCAST, _ECHO_RX, _ERR_RX */
    uint8_t rx, drop_short, drop_chksum, drop_type, drop_bcast, echo_rx, err_rx;
} icmp_in_cases[] = {
    { "bad checksum", IN_BAD_SUM, 1, 0, 1, 0, 0, 0, 0 },
    { "truncated", IN_TRUNCATED, 1, 1, 0, 0, 0, 0, 0 },
    /* RFC 1122 §3.2.2.6: we choose not to answer echo requests sent to a
     * broadcast (limited or directed) address */
    { "echo to the limited broadcast", IN_ECHO_BCAST, 1, 0, 0, 0, 1, 1, 0 },
    { "echo to the directed broadcast", IN_ECHO_NET_BCAST, 1, 0, 0, 0, 1, 1, 0 },
    { "unknown type", IN_UNKNOWN_TYPE, 1, 0, 0, 1, 0, 0, 0 },
    { "error message counted", IN_ERROR, 1, 0, 0, 0, 0, 0, 1 },
};

/* The frame of case msg in g_frame; returns its length. */
static size_t icmp_in_frame(enum in_msg msg)
{
    uint8_t *m = g_frame + ICMP_OFF;
    size_t n = 0;
    switch (msg) {
    case IN_BAD_SUM:
        n = ping(g_frame, 1, 2, 20);
        m[8] ^= 0x01; /* corrupt the data, keep the checksum */
        break;
    case IN_TRUNCATED:
        m[0] = WISP_ICMP_ECHO;
        m[1] = 0;
        wisp_wr16(m + 2, 0);
        wisp_wr16(m + 2, (uint16_t)~wisp_chksum_sum(m, 4));
        tu_eth(g_frame, tu_mac_self, tu_mac_peer, WISP_ETHTYPE_IP4);
        tu_ip4(g_frame + ETH, tu_ip_peer(), tu_ip_self(), WISP_IP4_PROTO_ICMP, 4, 1, 0, 64);
        memset(m + 4, 0, 60 - ICMP_OFF - 4); /* Ethernet padding */
        n = 60;
        break;
    case IN_ECHO_BCAST:
    case IN_ECHO_NET_BCAST:
        n = ping(g_frame, 1, 1, 8);
        memcpy(g_frame, wisp_eth_bcast, 6);
        set_ip(g_frame, tu_ip_peer(), msg == IN_ECHO_BCAST ? WISP_IP4_BCAST : wisp_ip4(198, 18, 0, 255), 0);
        break;
    case IN_UNKNOWN_TYPE:
        n = ping(g_frame, 1, 1, 8);
        m[0] = 42;
        wisp_wr16(m + 2, 0);
        wisp_wr16(m + 2, (uint16_t)~wisp_chksum_sum(m, 16));
        break;
    case IN_ERROR:
        n = ping(g_frame, 1, 1, 28); /* room for a quoted header + 8 */
        m[0] = WISP_ICMP_DEST_UNREACH;
        m[1] = WISP_ICMP_UNREACH_PORT;
        wisp_wr16(m + 2, 0);
        wisp_wr16(m + 2, (uint16_t)~wisp_chksum_sum(m, 36));
        break;
    }
    return n;
}

static void test_input_cases(void **state)
{
    unsigned i;
    (void)state;
    for (i = 0; i < WISP_ARRAY_SIZE(icmp_in_cases); i++) {
        const struct icmp_in_case *c = &icmp_in_cases[i];
        struct tu_env *e = env();
        size_t n;
        print_message("case %u: %s\n", i, c->what);
        n = icmp_in_frame(c->msg);
        assert_true(tu_inject(e, g_frame, n));
        assert_int_equal(tu_pending(e), 0);
        assert_int_equal(TU_CTR(e, ICMP_RX), c->rx);
        assert_int_equal(TU_CTR(e, ICMP_DROP_SHORT), c->drop_short);
        assert_int_equal(TU_CTR(e, ICMP_DROP_CHKSUM), c->drop_chksum);
        assert_int_equal(TU_CTR(e, ICMP_DROP_TYPE), c->drop_type);
        assert_int_equal(TU_CTR(e, ICMP_DROP_BCAST), c->drop_bcast);
        assert_int_equal(TU_CTR(e, ICMP_ECHO_RX), c->echo_rx);
        assert_int_equal(TU_CTR(e, ICMP_ERR_RX), c->err_rx);
        assert_int_equal(TU_CTR(e, ICMP_ECHO_REPLY_TX), 0);
        assert_int_equal(TU_CTR(e, ICMP_TX), 0);
        tu_env_free(e);
    }
}

/* ------------------------------------------------- destination unreachable */

static void test_port_unreach_quotes_header_and_8_bytes(void **state)
{
    struct tu_env *e = env();
    const char data[] = "some data beyond eight bytes";
    size_t n = tu_udp_frame(g_frame, 1234, 9999, data, (uint16_t)sizeof(data));
    int m;
    uint16_t ck;
    (void)state;
    assert_true(tu_inject(e, g_frame, n));
    assert_int_equal(TU_CTR(e, UDP_DROP_NOPORT), 1);
    m = tu_pop(e, g_out, sizeof(g_out));
    assert_int_equal(m, (int)(ICMP_OFF + 8u + IPH + 8u));
    check_ip_to_peer(g_out, m, WISP_IP4_PROTO_ICMP, (uint16_t)(IPH + 8u + IPH + 8u));
    assert_int_equal(g_out[ETH + 1], 0); /* RFC 1349 §5.1: TOS 0 */
    assert_int_equal(g_out[ICMP_OFF], WISP_ICMP_DEST_UNREACH);
    assert_int_equal(g_out[ICMP_OFF + 1], WISP_ICMP_UNREACH_PORT);
    assert_int_equal(wisp_rd32(g_out + ICMP_OFF + 4), 0); /* unused */
    /* RFC 792: the original IP header + first 8 bytes, byte-exact */
    assert_memory_equal(g_out + ICMP_OFF + 8, g_frame + ETH, IPH + 8u);
    assert_int_equal(wisp_chksum_sum(g_out + ICMP_OFF, 8u + IPH + 8u), 0xFFFF);
    ck = wisp_rd16(g_out + ICMP_OFF + 2);
    wisp_wr16(g_out + ICMP_OFF + 2, 0);
    assert_int_equal(ck, (uint16_t)~wisp_chksum_sum(g_out + ICMP_OFF, 8u + IPH + 8u));
    assert_int_equal(TU_CTR(e, ICMP_ERR_TX), 1);
    assert_int_equal(TU_CTR(e, ICMP_TX), 1);
    assert_int_equal(tu_pending(e), 0);
    tu_env_free(e);
}

/* A datagram shorter than 8 bytes of payload is quoted as it is. */
static void test_unreach_quotes_short_payload(void **state)
{
    struct tu_env *e = env();
    struct wisp_ip_info ip;
    struct wisp_pbuf *p;
    size_t n = tu_udp_frame(g_frame, 1, 2, "", 0);
    int m;
    (void)state;
    wisp_wr16(g_frame + ETH + 2, IPH + 5u); /* a 5-byte transport part */
    p = mk_dgram(e, g_frame, ICMP_OFF + 5u, &ip);
    (void)n;
    wisp_icmp_dest_unreach(e->s, p, &ip, WISP_ICMP_UNREACH_PROTO);
    m = tu_pop(e, g_out, sizeof(g_out));
    assert_int_equal(m, (int)(ICMP_OFF + 8u + IPH + 5u));
    assert_int_equal(g_out[ICMP_OFF + 1], WISP_ICMP_UNREACH_PROTO);
    assert_memory_equal(g_out + ICMP_OFF + 8, g_frame + ETH, IPH + 5u);
    assert_int_equal(wisp_chksum_sum(g_out + ICMP_OFF, 8u + IPH + 5u), 0xFFFF);
    /* not consumed, and restored */
    assert_int_equal(p->tot_len, 5);
    assert_int_equal(wisp_pbuf_get_u8(p, 0), 0);
    wisp_pbuf_free(p);
    tu_env_free(e);
}

/* RFC 1122 §3.2.2 / RFC 1812 §4.3.2.7: when wisp_icmp_dest_unreach may
 * send. One datagram per case, handed to it directly: sent (ICMP_ERR_TX)
 * or suppressed (ICMP_ERR_SUPPRESSED), nothing else. An ICMP query (echo)
 * may be the subject of an error; an ICMP error message (or a message too
 * short to tell), a datagram to a multicast address or in a link-layer
 * broadcast, a fragment but the first, a source that is no unicast host
 * may not. */
enum sup_dgram { SUP_ECHO, SUP_UDP, SUP_UDP8 };

struct sup_case {
    const char *what;
    enum sup_dgram dgram;     /* an echo request (8 bytes), UDP "x" or UDP "12345678" */
    int icmp_type;            /* SUP_ECHO: the ICMP type written over (-1: kept) */
    bool no_transport;        /* Total Length 20: no byte after the IP header */
    bool set_ip;              /* then: */
    wisp_ip4_t src, dst;
    uint16_t flags_off;
    bool mcast;               /* ip->mcast (arrived as a multicast) */
    bool link_bcast;          /* arrived as a link-layer broadcast */
    uint8_t code;
    bool sent;
};

static void test_dest_unreach_cases(void **state)
{
    const wisp_ip4_t peer = tu_ip_peer(), self = tu_ip_self();
    const struct sup_case cases[] = {
        { "about an echo request", SUP_ECHO, -1, false, false, 0, 0, 0, false, false, WISP_ICMP_UNREACH_PORT, true },
        { "about a dest unreachable", SUP_ECHO, WISP_ICMP_DEST_UNREACH, false, false, 0, 0, 0, false, false,
          WISP_ICMP_UNREACH_PORT, false },
        { "about a time exceeded", SUP_ECHO, WISP_ICMP_TIME_EXCEEDED, false, false, 0, 0, 0, false, false,
          WISP_ICMP_UNREACH_PORT, false },
        { "about an unknown type (an error)", SUP_ECHO, 99, false, false, 0, 0, 0, false, false,
          WISP_ICMP_UNREACH_PORT, false },
        { "no ICMP byte at all", SUP_ECHO, 99, true, false, 0, 0, 0, false, false, WISP_ICMP_UNREACH_PORT, false },
        { "to a multicast group", SUP_UDP, -1, false, true, peer, wisp_ip4(224, 0, 0, 251), 0, true, false,
          WISP_ICMP_UNREACH_PORT, false },
        { "in a link-layer broadcast", SUP_UDP, -1, false, false, 0, 0, 0, false, true, WISP_ICMP_UNREACH_PORT, false },
        /* offset 185*8 = 1480, last fragment */
        { "a fragment but the first", SUP_UDP8, -1, false, true, peer, self, 185, false, false,
          WISP_ICMP_UNREACH_PROTO, false },
        /* MF set, offset 0 */
        { "the first fragment", SUP_UDP8, -1, false, true, peer, self, WISP_IP4_FLAG_MF, false, false,
          WISP_ICMP_UNREACH_PROTO, true },
        { "source 0.0.0.0", SUP_UDP, -1, false, true, WISP_IP4_ANY, self, 0, false, false, WISP_ICMP_UNREACH_PORT,
          false },
        { "source limited broadcast", SUP_UDP, -1, false, true, WISP_IP4_BCAST, self, 0, false, false,
          WISP_ICMP_UNREACH_PORT, false },
        { "source directed broadcast", SUP_UDP, -1, false, true, wisp_ip4(198, 18, 0, 255), self, 0, false, false,
          WISP_ICMP_UNREACH_PORT, false },
        { "source multicast", SUP_UDP, -1, false, true, wisp_ip4(224, 1, 2, 3), self, 0, false, false,
          WISP_ICMP_UNREACH_PORT, false },
        { "source class E", SUP_UDP, -1, false, true, wisp_ip4(240, 0, 0, 1), self, 0, false, false,
          WISP_ICMP_UNREACH_PORT, false },
        { "source loopback", SUP_UDP, -1, false, true, wisp_ip4(127, 0, 0, 1), self, 0, false, false,
          WISP_ICMP_UNREACH_PORT, false },
    };
    unsigned i;
    (void)state;
    for (i = 0; i < WISP_ARRAY_SIZE(cases); i++) {
        const struct sup_case *c = &cases[i];
        struct tu_env *e = env();
        struct wisp_ip_info ip;
        struct wisp_pbuf *p;
        size_t n;
        print_message("case %u: %s\n", i, c->what);
        if (c->dgram == SUP_ECHO) {
            n = ping(g_frame, 1, 1, 8);
        } else {
            n = c->dgram == SUP_UDP ? tu_udp_frame(g_frame, 1234, 9999, "x", 1)
                                    : tu_udp_frame(g_frame, 1234, 9999, "12345678", 8);
        }
        if (c->icmp_type >= 0) {
            g_frame[ICMP_OFF] = (uint8_t)c->icmp_type;
        }
        if (c->set_ip) {
            set_ip(g_frame, c->src, c->dst, c->flags_off);
        }
        if (c->no_transport) {
            wisp_wr16(g_frame + ETH + 2, IPH);
            n = ICMP_OFF;
        }
        p = mk_dgram(e, g_frame, n, &ip);
        ip.mcast = c->mcast;
        if (c->link_bcast) {
            p->flags |= WISP_PBUF_F_BCAST;
        }
        wisp_icmp_dest_unreach(e->s, p, &ip, c->code);
        wisp_pbuf_free(p);
        assert_int_equal(tu_pending(e), c->sent ? 1 : 0);
        assert_int_equal(TU_CTR(e, ICMP_ERR_TX), c->sent ? 1 : 0);
        assert_int_equal(TU_CTR(e, ICMP_ERR_SUPPRESSED), c->sent ? 0 : 1);
        tu_env_free(e);
    }
}

static void test_no_unreach_about_broadcast(void **state)
{
    struct tu_env *e = env();
    size_t n;
    (void)state;
    /* directed broadcast to a closed port, through the whole stack */
    n = tu_udp_frame(g_frame, 1234, 9999, "x", 1);
    memcpy(g_frame, wisp_eth_bcast, 6);
    set_ip(g_frame, tu_ip_peer(), wisp_ip4(198, 18, 0, 255), 0);
    wisp_wr16(g_frame + ICMP_OFF + 6, 0); /* no UDP checksum */
    assert_true(tu_inject(e, g_frame, n));
    /* limited broadcast */
    n = tu_udp_frame(g_frame, 1234, 9999, "x", 1);
    memcpy(g_frame, wisp_eth_bcast, 6);
    set_ip(g_frame, tu_ip_peer(), WISP_IP4_BCAST, 0);
    wisp_wr16(g_frame + ICMP_OFF + 6, 0);
    assert_true(tu_inject(e, g_frame, n));

    assert_int_equal(TU_CTR(e, UDP_DROP_NOPORT), 2);
    assert_int_equal(tu_pending(e), 0);
    assert_int_equal(TU_CTR(e, ICMP_ERR_SUPPRESSED), 2);
    assert_int_equal(TU_CTR(e, ICMP_ERR_TX), 0);
    tu_env_free(e);
}

/* RFC 1191 §4: code 4 carries the next-hop MTU in the low 16 bits. */
static void test_unreach_needfrag_carries_mtu(void **state)
{
    struct tu_env *e = env();
    struct wisp_ip_info ip;
    struct wisp_pbuf *p;
    size_t n = tu_udp_frame(g_frame, 1234, 9999, "x", 1);
    int m;
    (void)state;
    p = mk_dgram(e, g_frame, n, &ip);
    wisp_icmp_dest_unreach(e->s, p, &ip, WISP_ICMP_UNREACH_NEEDFRAG);
    wisp_pbuf_free(p);
    m = tu_pop(e, g_out, sizeof(g_out));
    assert_true(m > 0);
    assert_int_equal(g_out[ICMP_OFF + 1], WISP_ICMP_UNREACH_NEEDFRAG);
    assert_int_equal(wisp_rd16(g_out + ICMP_OFF + 4), 0);
    assert_int_equal(wisp_rd16(g_out + ICMP_OFF + 6), 1500);
    assert_int_equal(wisp_chksum_sum(g_out + ICMP_OFF, (size_t)m - ICMP_OFF), 0xFFFF);
    tu_env_free(e);
}

static unsigned send_closed_port_burst(struct tu_env *e, unsigned count)
{
    unsigned i, frames = 0;
    for (i = 0; i < count; i++) {
        size_t n = tu_udp_frame(g_frame, 1000, (uint16_t)(2000 + i), "abc", 3);
        assert_true(tu_inject(e, g_frame, n));
    }
    while (tu_pop(e, g_out, sizeof(g_out)) > 0) {
        assert_int_equal(g_out[ICMP_OFF], WISP_ICMP_DEST_UNREACH);
        frames++;
    }
    return frames;
}

/* RFC 1812 §4.3.2.8: a token bucket of WISP_ICMP_ERR_BURST refilled at
 * WISP_ICMP_ERR_RATE per second, lazily from the clock. */
static void test_unreach_rate_limit(void **state)
{
    struct tu_env *e = env();
    (void)state;
    /* 50 in the same clock millisecond: exactly one burst goes out */
    assert_int_equal(send_closed_port_burst(e, 50), WISP_ICMP_ERR_BURST);
    assert_int_equal(TU_CTR(e, ICMP_ERR_TX), WISP_ICMP_ERR_BURST);
    assert_int_equal(TU_CTR(e, ICMP_ERR_RATELIMIT), 50 - WISP_ICMP_ERR_BURST);
    assert_int_equal(TU_CTR(e, UDP_DROP_NOPORT), 50);

    /* still the same ms: nothing */
    assert_int_equal(send_closed_port_burst(e, 1), 0);

    /* the time for one token: exactly one */
    e->now += 1000u / WISP_ICMP_ERR_RATE;
    assert_int_equal(send_closed_port_burst(e, 5), 1);

    /* a second (or much longer): full burst again, never more */
    e->now += 1000u;
    assert_int_equal(send_closed_port_burst(e, 50), WISP_ICMP_ERR_BURST);
    e->now += 100000000u;
    assert_int_equal(send_closed_port_burst(e, 50), WISP_ICMP_ERR_BURST);
    assert_int_equal(TU_CTR(e, ICMP_ERR_TX), 3 * WISP_ICMP_ERR_BURST + 1);
    tu_env_free(e);
}

/* Suppressed errors do not use up tokens. */
static void test_suppressed_errors_take_no_token(void **state)
{
    struct tu_env *e = env();
    size_t n;
    unsigned i;
    (void)state;
    for (i = 0; i < 30; i++) {
        n = tu_udp_frame(g_frame, 1234, 9999, "x", 1);
        memcpy(g_frame, wisp_eth_bcast, 6);
        set_ip(g_frame, tu_ip_peer(), WISP_IP4_BCAST, 0);
        wisp_wr16(g_frame + ICMP_OFF + 6, 0);
        assert_true(tu_inject(e, g_frame, n));
    }
    assert_int_equal(TU_CTR(e, ICMP_ERR_SUPPRESSED), 30);
    assert_int_equal(send_closed_port_burst(e, 50), WISP_ICMP_ERR_BURST);
    tu_env_free(e);
}

/* ------------------------------------------------------------ echo request */

struct echo_seen {
    unsigned calls;
    uint16_t id, seq, len;
    wisp_ip4_t src;
    int type;
};

static void echo_cb(void *arg, const struct wisp_ip_info *ip, uint16_t id, uint16_t seq, struct wisp_pbuf *p)
{
    struct echo_seen *seen = arg;
    seen->calls++;
    seen->id = id;
    seen->seq = seq;
    seen->len = p->tot_len;
    seen->src = wisp_ipaddr_ip4(&ip->src);
    seen->type = wisp_pbuf_get_u8(p, 0);
    wisp_pbuf_free(p);
}

static void check_echo_request(uint16_t len, uint8_t ttl)
{
    struct tu_env *e = env();
    struct echo_seen seen;
    unsigned i;
    int m;
    (void)memset(&seen, 0, sizeof(seen));

    wisp_icmp_set_echo_cb(e->s, echo_cb, &seen);
    assert_int_equal(wisp_icmp_echo_request(e->s, tu_ip_peer(), 0x1001, 0x2002, len, ttl), WISP_OK);
    m = tu_pop(e, g_out, sizeof(g_out));
    assert_true(m > 0);
    check_ip_to_peer(g_out, m, WISP_IP4_PROTO_ICMP, (uint16_t)(IPH + 8u + len));
    assert_int_equal(g_out[ETH + 8], ttl ? ttl : WISP_IP_DEFAULT_TTL);
    assert_int_equal(g_out[ICMP_OFF], WISP_ICMP_ECHO);
    assert_int_equal(g_out[ICMP_OFF + 1], 0);
    assert_int_equal(wisp_rd16(g_out + ICMP_OFF + 4), 0x1001);
    assert_int_equal(wisp_rd16(g_out + ICMP_OFF + 6), 0x2002);
    for (i = 0; i < len; i++) {
        assert_int_equal(g_out[ICMP_OFF + 8 + i], (uint8_t)i); /* the documented pattern */
    }
    assert_int_equal(wisp_chksum_sum(g_out + ICMP_OFF, 8u + len), 0xFFFF);
    assert_int_equal(TU_CTR(e, ICMP_TX), 1);

    /* the peer answers: turn the request into a reply and inject it */
    memcpy(g_frame, g_out, (size_t)m);
    memcpy(g_frame, tu_mac_self, 6);
    memcpy(g_frame + 6, tu_mac_peer, 6);
    set_ip(g_frame, tu_ip_peer(), tu_ip_self(), 0);
    g_frame[ICMP_OFF] = WISP_ICMP_ECHO_REPLY;
    wisp_wr16(g_frame + ICMP_OFF + 2, 0);
    wisp_wr16(g_frame + ICMP_OFF + 2, (uint16_t)~wisp_chksum_sum(g_frame + ICMP_OFF, 8u + len));
    assert_true(tu_inject(e, g_frame, (size_t)m));
    assert_int_equal(seen.calls, 1);
    assert_int_equal(seen.id, 0x1001);
    assert_int_equal(seen.seq, 0x2002);
    assert_int_equal(seen.len, 8u + len);
    assert_int_equal(seen.type, WISP_ICMP_ECHO_REPLY);
    assert_true(seen.src == tu_ip_peer());
    assert_int_equal(TU_CTR(e, ICMP_ECHO_REPLY_RX), 1);
    assert_int_equal(tu_pending(e), 0);

    /* without a callback the reply is just freed */
    wisp_icmp_set_echo_cb(e->s, NULL, NULL);
    assert_true(tu_inject(e, g_frame, (size_t)m));
    assert_int_equal(seen.calls, 1);
    assert_int_equal(TU_CTR(e, ICMP_ECHO_REPLY_RX), 2);
    tu_env_free(e);
}

static void test_echo_request_and_reply_callback(void **state)
{
    (void)state;
    check_echo_request(56, 0);
}

static void test_echo_request_sets_ttl(void **state)
{
    (void)state;
    check_echo_request(0, 3);
}

/* Larger than one block: a POOL chain, fragmented by IP. */
static void test_echo_request_large_fragmented(void **state)
{
    enum { DATA = 4000, MSG = DATA + 8 };
    static uint8_t back[MSG];
    struct tu_env *e = env();
    unsigned got = 0, i;
    int m;
    (void)state;
    assert_int_equal(wisp_icmp_echo_request(e->s, tu_ip_peer(), 5, 6, DATA, 0), WISP_OK);
    while ((m = tu_pop(e, g_out, sizeof(g_out))) > 0) {
        unsigned o = (wisp_rd16(g_out + ETH + 6) & WISP_IP4_OFFMASK) * 8u;
        unsigned l = wisp_rd16(g_out + ETH + 2) - IPH;
        assert_true(o + l <= MSG);
        memcpy(back + o, g_out + ICMP_OFF, l);
        got += l;
    }
    assert_int_equal(got, MSG);
    assert_int_equal(back[0], WISP_ICMP_ECHO);
    for (i = 0; i < DATA; i++) {
        assert_int_equal(back[8 + i], (uint8_t)i);
    }
    assert_int_equal(wisp_chksum_sum(back, MSG), 0xFFFF);
    tu_env_free(e);
}

/* Ping ourselves over the loopback interface: the request is answered by
 * our own echo reply path and the reply reaches the callback. */
static void test_echo_request_loopback(void **state)
{
    struct tu_env *e = env();
    struct echo_seen seen;
    (void)state;
    memset(&seen, 0, sizeof(seen));
    wisp_icmp_set_echo_cb(e->s, echo_cb, &seen);
    assert_int_equal(wisp_icmp_echo_request(e->s, wisp_ip4(127, 0, 0, 1), 77, 88, 100, 0), WISP_OK);
    tu_advance(e, 1);
    tu_advance(e, 1);
    assert_int_equal(seen.calls, 1);
    assert_int_equal(seen.id, 77);
    assert_int_equal(seen.seq, 88);
    assert_int_equal(seen.len, 108);
    assert_true(seen.src == wisp_ip4(127, 0, 0, 1));
    assert_int_equal(TU_CTR(e, ICMP_ECHO_RX), 1);
    assert_int_equal(TU_CTR(e, ICMP_ECHO_REPLY_TX), 1);
    assert_int_equal(tu_pending(e), 0); /* nothing on the wire */
    tu_env_free(e);
}

static void test_echo_request_too_long_rejected(void **state)
{
    struct tu_env *e = env();
    (void)state;
    assert_int_equal(wisp_icmp_echo_request(e->s, tu_ip_peer(), 1, 1, 65535 - 28 + 1, 0), WISP_ERR_VAL);
    assert_int_equal(tu_pending(e), 0);
    tu_env_free(e);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_echo_reply_byte_exact),
        cmocka_unit_test(test_echo_reply_empty_payload),
        cmocka_unit_test(test_echo_reply_full_mtu_payload),
        cmocka_unit_test(test_echo_reply_all_zero_checksum),
        cmocka_unit_test(test_echo_reply_keeps_tos),
        cmocka_unit_test(test_echo_reply_in_place),
        cmocka_unit_test(test_echo_reply_shared_pbuf_copied),
        cmocka_unit_test(test_echo_reply_large_reassembled),
        cmocka_unit_test(test_input_cases),
        cmocka_unit_test(test_port_unreach_quotes_header_and_8_bytes),
        cmocka_unit_test(test_unreach_quotes_short_payload),
        cmocka_unit_test(test_dest_unreach_cases),
        cmocka_unit_test(test_no_unreach_about_broadcast),
        cmocka_unit_test(test_unreach_needfrag_carries_mtu),
        cmocka_unit_test(test_unreach_rate_limit),
        cmocka_unit_test(test_suppressed_errors_take_no_token),
        cmocka_unit_test(test_echo_request_and_reply_callback),
        cmocka_unit_test(test_echo_request_sets_ttl),
        cmocka_unit_test(test_echo_request_large_fragmented),
        cmocka_unit_test(test_echo_request_loopback),
        cmocka_unit_test(test_echo_request_too_long_rejected),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
