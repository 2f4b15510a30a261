/**
 * @file test_udp.c
 * Unit tests of UDP (src/core/udp.c): PCB pool, bind (ephemeral ports and
 * conflicts), connect, byte-exact send with checksum, receive validation
 * (length, checksum), zero-copy delivery, demultiplexing and the port
 * unreachable for datagrams without a listener.
 */
#include "testutil.h"

#define ETH 14u
#define IPH 20u
#define UDP_OFF (ETH + IPH)

static uint8_t g_frame[70000];
static uint8_t g_out[70000];

/* ---------------------------------------------------------------- helpers */

static struct tu_env *env(void)
{
    struct tu_env *e = tu_env_new(7);
    tu_arp_peer(e);
    tu_clear(e);
    return e;
}

static wisp_ipaddr_t peer(void) { return wisp_ipaddr4(tu_ip_peer()); }

struct rx_seen {
    unsigned calls;
    uint8_t data[2048];
    uint16_t len;
    uint16_t port;
    wisp_ip4_t src, dst;
    struct wisp_udp_pcb *pcb;
    bool from_rx_pool;   /* the delivered buffer is the received one */
};

static void rx_cb(void *arg, struct wisp_udp_pcb *pcb, struct wisp_pbuf *p, const wisp_ipaddr_t *src,
                  uint16_t port, const struct wisp_ip_info *ip)
{
    struct rx_seen *r = arg;
    r->calls++;
    r->pcb = pcb;
    r->len = wisp_pbuf_copy_out(p, r->data, sizeof(r->data), 0);
    assert_int_equal(r->len, p->tot_len);
    r->port = port;
    r->src = wisp_ipaddr_ip4(src);
    r->dst = wisp_ipaddr_ip4(&ip->dst);
    r->from_rx_pool = p->pool == &pcb->stack->pool[WISP_POOL_PBUF_RX];
    wisp_pbuf_free(p);
}

/* Check a UDP frame the stack sent to the peer; returns the UDP length. */
static uint16_t check_udp_frame(const uint8_t *f, int n, wisp_ip4_t src, wisp_ip4_t dst, uint16_t sport,
                                uint16_t dport, const void *data, uint16_t len)
{
    const uint8_t *u = f + UDP_OFF;
    uint16_t ck;
    uint8_t tmp[2048];

    assert_int_equal(n, (int)(UDP_OFF + 8u + len));
    assert_memory_equal(f, tu_mac_peer, 6);
    assert_memory_equal(f + 6, tu_mac_self, 6);
    assert_int_equal(wisp_rd16(f + 12), WISP_ETHTYPE_IP4);
    assert_int_equal(f[ETH], 0x45);
    assert_int_equal(wisp_rd16(f + ETH + 2), IPH + 8u + len);
    assert_int_equal(f[ETH + 9], WISP_IP4_PROTO_UDP);
    assert_int_equal(wisp_chksum_sum(f + ETH, IPH), 0xFFFF);
    assert_true(wisp_ip4_rd(f + ETH + 12) == src);
    assert_true(wisp_ip4_rd(f + ETH + 16) == dst);
    /* RFC 768 header */
    assert_int_equal(wisp_rd16(u), sport);
    assert_int_equal(wisp_rd16(u + 2), dport);
    assert_int_equal(wisp_rd16(u + 4), 8u + len);
    assert_memory_equal(u + 8, data, len);
    /* checksum recomputed here from the pseudo header, header and data */
    assert_true(len + 8u <= sizeof(tmp));
    memcpy(tmp, u, 8u + len);
    ck = wisp_rd16(u + 6);
    wisp_wr16(tmp + 6, 0);
    {
        uint16_t sum = wisp_chksum_add(wisp_chksum_pseudo4(src, dst, WISP_IP4_PROTO_UDP, (uint16_t)(8u + len)),
                                       wisp_chksum_sum(tmp, 8u + len));
        uint16_t want = (uint16_t)~sum;
        if (want == 0) {
            want = 0xFFFF;
        }
        assert_int_equal(ck, want);
    }
    return wisp_rd16(u + 4);
}

/* A frame to us from the peer with an explicit UDP length and checksum
 * fixed up over that length (the IP length covers all of data). */
static size_t udp_frame_len(uint8_t *buf, uint16_t sport, uint16_t dport, const void *data, uint16_t len,
                            uint16_t ulen_field)
{
    size_t n = tu_udp_frame(buf, sport, dport, data, len);
    uint8_t *u = buf + UDP_OFF;
    wisp_wr16(u + 4, ulen_field);
    wisp_wr16(u + 6, 0);
    if (ulen_field >= 8u && ulen_field <= 8u + len) {
        uint16_t sum = wisp_chksum_add(wisp_chksum_pseudo4(tu_ip_peer(), tu_ip_self(), WISP_IP4_PROTO_UDP, ulen_field),
                                       wisp_chksum_sum(u, ulen_field));
        sum = (uint16_t)~sum;
        wisp_wr16(u + 6, sum == 0 ? 0xFFFF : sum);
    }
    return n;
}

static struct wisp_pbuf *payload(struct tu_env *e, const void *data, uint16_t len)
{
    struct wisp_pbuf *p = wisp_pbuf_alloc(e->s, WISP_LAYER_TRANSPORT, len, WISP_PBUF_RAM);
    assert_non_null(p);
    assert_int_equal(wisp_pbuf_copy_in(p, data, len, 0), WISP_OK);
    return p;
}

/* --------------------------------------------------------------- send */

/* wisp_udp_sendto_from: the source given (the address a request was sent
 * to, when answering), or the usual choice for a non-unicast one; the TOS
 * set through wisp_udp_set_tos; the binding read back (wisp_udp_local). */
static void test_sendto_from_tos_and_local(void **state)
{
    struct tu_env *e = env();
    struct wisp_udp_pcb *pcb = wisp_udp_new(e->s);
    struct wisp_pbuf *p = payload(e, "abc", 3);
    wisp_ipaddr_t dst = peer(), from = wisp_ipaddr4(wisp_ip4(198, 18, 0, 77)), bc = wisp_ipaddr4(WISP_IP4_BCAST), any,
                  got;
    uint16_t port = 1;
    int n;
    (void)state;
    assert_non_null(pcb);
    memset(&any, 0, sizeof(any)); /* zeroed = any, in both address layouts */
    assert_int_equal(wisp_udp_bind(pcb, &any, 5001), WISP_OK);
    wisp_udp_local(pcb, &got, &port);
    assert_true(wisp_ipaddr_is_any(&got));
    assert_int_equal(port, 5001);
    assert_int_equal(wisp_udp_get_tos(pcb), 0);
    wisp_udp_set_tos(pcb, 0xB8); /* DSCP EF */
    assert_int_equal(wisp_udp_get_tos(pcb), 0xB8);
    assert_int_equal(wisp_udp_sendto_from(pcb, p, &from, &dst, 6000), WISP_OK);
    n = tu_pop(e, g_out, sizeof(g_out));
    check_udp_frame(g_out, n, wisp_ip4(198, 18, 0, 77), tu_ip_peer(), 5001, 6000, "abc", 3);
    assert_int_equal(g_out[ETH + 1], 0xB8);
    /* A broadcast (or any) source is no source: the interface's address. */
    assert_int_equal(wisp_udp_sendto_from(pcb, p, &bc, &dst, 6000), WISP_OK);
    n = tu_pop(e, g_out, sizeof(g_out));
    check_udp_frame(g_out, n, tu_ip_self(), tu_ip_peer(), 5001, 6000, "abc", 3);
    assert_int_equal(wisp_udp_sendto_from(pcb, p, NULL, &dst, 6000), WISP_OK);
    n = tu_pop(e, g_out, sizeof(g_out));
    check_udp_frame(g_out, n, tu_ip_self(), tu_ip_peer(), 5001, 6000, "abc", 3);
    /* Nor is the destination any. */
    assert_int_equal(wisp_udp_sendto_from(pcb, p, &from, &any, 6000), WISP_ERR_VAL);
    assert_int_equal(tu_pending(e), 0);
    wisp_pbuf_free(p);
    wisp_udp_remove(pcb);
    tu_env_free(e);
}

static void test_bind_sendto_frame_byte_exact(void **state)
{
    struct tu_env *e = env();
    struct wisp_udp_pcb *pcb = wisp_udp_new(e->s);
    struct wisp_pbuf *p = payload(e, "hello", 5);
    wisp_ipaddr_t dst = peer();
    uint8_t *before = p->payload;
    int n;
    (void)state;
    assert_non_null(pcb);
    assert_int_equal(wisp_udp_bind(pcb, NULL, 5000), WISP_OK);
    assert_int_equal(pcb->local_port, 5000);
    assert_int_equal(wisp_udp_sendto(pcb, p, &dst, 6000), WISP_OK);
    n = tu_pop(e, g_out, sizeof(g_out));
    check_udp_frame(g_out, n, tu_ip_self(), tu_ip_peer(), 5000, 6000, "hello", 5);
    assert_int_equal(g_out[ETH + 8], WISP_IP_DEFAULT_TTL);
    assert_int_equal(g_out[ETH + 1], 0);
    assert_int_equal(TU_CTR(e, UDP_TX), 1);
    /* the caller's buffer is given back unchanged */
    assert_ptr_equal(p->payload, before);
    assert_int_equal(p->len, 5);
    assert_int_equal(p->tot_len, 5);
    assert_int_equal(p->ref, 1);
    wisp_pbuf_free(p);
    wisp_udp_remove(pcb);
    tu_env_free(e);
}

/* RFC 768: a computed checksum of 0 is transmitted as all ones. The two
 * data bytes are chosen so that the sum comes out as 0xFFFF. */
static void test_send_zero_checksum_sent_as_ffff(void **state)
{
    struct tu_env *e = env();
    struct wisp_udp_pcb *pcb = wisp_udp_new(e->s);
    uint8_t hdr[8], data[2];
    uint16_t s0;
    struct wisp_pbuf *p;
    wisp_ipaddr_t dst = peer();
    int n;
    (void)state;
    assert_int_equal(wisp_udp_bind(pcb, NULL, 1000), WISP_OK);
    wisp_wr16(hdr, 1000);
    wisp_wr16(hdr + 2, 2000);
    wisp_wr16(hdr + 4, 10);
    wisp_wr16(hdr + 6, 0);
    s0 = wisp_chksum_add(wisp_chksum_pseudo4(tu_ip_self(), tu_ip_peer(), WISP_IP4_PROTO_UDP, 10),
                         wisp_chksum_sum(hdr, 8));
    wisp_wr16(data, (uint16_t)~s0); /* s0 + ~s0 = 0xFFFF: the checksum computes to 0 */
    p = payload(e, data, 2);
    assert_int_equal(wisp_udp_sendto(pcb, p, &dst, 2000), WISP_OK);
    n = tu_pop(e, g_out, sizeof(g_out));
    check_udp_frame(g_out, n, tu_ip_self(), tu_ip_peer(), 1000, 2000, data, 2);
    assert_int_equal(wisp_rd16(g_out + UDP_OFF + 6), 0xFFFF);
    wisp_pbuf_free(p);
    wisp_udp_remove(pcb);
    tu_env_free(e);
}

/* TTL and TOS of the PCB go into the IP header. */
static void test_send_uses_pcb_ttl_tos(void **state)
{
    struct tu_env *e = env();
    struct wisp_udp_pcb *pcb = wisp_udp_new(e->s);
    struct wisp_pbuf *p = payload(e, "x", 1);
    wisp_ipaddr_t dst = peer();
    int n;
    (void)state;
    pcb->ttl = 5;
    pcb->tos = 0xB8;
    assert_int_equal(wisp_udp_bind(pcb, NULL, 5001), WISP_OK);
    assert_int_equal(wisp_udp_sendto(pcb, p, &dst, 53), WISP_OK);
    n = tu_pop(e, g_out, sizeof(g_out));
    check_udp_frame(g_out, n, tu_ip_self(), tu_ip_peer(), 5001, 53, "x", 1);
    assert_int_equal(g_out[ETH + 8], 5);
    assert_int_equal(g_out[ETH + 1], 0xB8);
    wisp_pbuf_free(p);
    wisp_udp_remove(pcb);
    tu_env_free(e);
}

/* A REF buffer (caller memory, no headroom) gets a header buffer chained in
 * front; the caller's buffer keeps its single reference. */
static void test_send_ref_pbuf_chains_header(void **state)
{
    static const char msg[] = "zero-copy payload";
    struct tu_env *e = env();
    struct wisp_udp_pcb *pcb = wisp_udp_new(e->s);
    struct wisp_pbuf *p = wisp_pbuf_alloc_ref(e->s, msg, sizeof(msg), WISP_PBUF_REF);
    wisp_ipaddr_t dst = peer();
    int n;
    (void)state;
    assert_non_null(p);
    assert_int_equal(wisp_udp_bind(pcb, NULL, 7), WISP_OK);
    assert_int_equal(wisp_udp_sendto(pcb, p, &dst, 8), WISP_OK);
    n = tu_pop(e, g_out, sizeof(g_out));
    check_udp_frame(g_out, n, tu_ip_self(), tu_ip_peer(), 7, 8, msg, sizeof(msg));
    assert_int_equal(p->ref, 1);
    assert_int_equal(p->tot_len, sizeof(msg));
    assert_ptr_equal(p->payload, msg);
    wisp_pbuf_free(p);
    wisp_udp_remove(pcb);
    tu_env_free(e);
}

/* A datagram larger than the MTU is fragmented by IP. */
static void test_send_large_datagram_fragmented(void **state)
{
    enum { LEN = 4000 };
    static uint8_t data[LEN], back[LEN + 8];
    struct tu_env *e = env();
    struct wisp_udp_pcb *pcb = wisp_udp_new(e->s);
    struct wisp_pbuf *p = wisp_pbuf_alloc(e->s, WISP_LAYER_TRANSPORT, LEN, WISP_PBUF_POOL);
    wisp_ipaddr_t dst = peer();
    unsigned i, got = 0, frames = 0;
    uint16_t sum;
    int n;
    (void)state;
    assert_non_null(p);
    for (i = 0; i < LEN; i++) {
        data[i] = (uint8_t)(i ^ (i >> 8));
    }
    assert_int_equal(wisp_pbuf_copy_in(p, data, LEN, 0), WISP_OK);
    assert_int_equal(wisp_udp_bind(pcb, NULL, 4444), WISP_OK);
    assert_int_equal(wisp_udp_sendto(pcb, p, &dst, 5555), WISP_OK);
    while ((n = tu_pop(e, g_out, sizeof(g_out))) > 0) {
        unsigned o = (wisp_rd16(g_out + ETH + 6) & WISP_IP4_OFFMASK) * 8u;
        unsigned l = wisp_rd16(g_out + ETH + 2) - IPH;
        assert_int_equal(g_out[ETH + 9], WISP_IP4_PROTO_UDP);
        assert_true(o + l <= sizeof(back));
        memcpy(back + o, g_out + UDP_OFF, l);
        got += l;
        frames++;
    }
    assert_int_equal(got, LEN + 8);
    assert_int_equal(frames, 3);
    assert_int_equal(wisp_rd16(back + 4), LEN + 8);
    assert_memory_equal(back + 8, data, LEN);
    sum = wisp_chksum_add(wisp_chksum_pseudo4(tu_ip_self(), tu_ip_peer(), WISP_IP4_PROTO_UDP, LEN + 8),
                          wisp_chksum_sum(back, LEN + 8));
    assert_int_equal(sum, 0xFFFF);
    assert_int_equal(p->tot_len, LEN);
    wisp_pbuf_free(p);
    wisp_udp_remove(pcb);
    tu_env_free(e);
}

static void test_sendto_too_large_rejected(void **state)
{
    struct tu_env *e = env();
    struct wisp_udp_pcb *pcb = wisp_udp_new(e->s);
    static uint8_t big[65508];
    struct wisp_pbuf *p = wisp_pbuf_alloc_ref(e->s, big, sizeof(big), WISP_PBUF_ROM);
    wisp_ipaddr_t dst = peer();
    (void)state;
    assert_int_equal(wisp_udp_sendto(pcb, p, &dst, 9), WISP_ERR_VAL);
    assert_int_equal(tu_pending(e), 0);
    wisp_pbuf_free(p);
    wisp_udp_remove(pcb);
    tu_env_free(e);
}

static void test_sendto_port0_rejected(void **state)
{
    struct tu_env *e = env();
    struct wisp_udp_pcb *pcb = wisp_udp_new(e->s);
    struct wisp_pbuf *p = payload(e, "x", 1);
    wisp_ipaddr_t dst = peer();
    (void)state;
    assert_int_equal(wisp_udp_sendto(pcb, p, &dst, 0), WISP_ERR_VAL);
    assert_int_equal(wisp_udp_connect(pcb, &dst, 0), WISP_ERR_VAL);
    assert_int_equal(tu_pending(e), 0);
    assert_int_equal(TU_CTR(e, UDP_TX), 0);
    wisp_pbuf_free(p);
    wisp_udp_remove(pcb);
    tu_env_free(e);
}

static void test_send_unconnected_is_err_conn(void **state)
{
    struct tu_env *e = env();
    struct wisp_udp_pcb *pcb = wisp_udp_new(e->s);
    struct wisp_pbuf *p = payload(e, "x", 1);
    (void)state;
    assert_int_equal(wisp_udp_send(pcb, p), WISP_ERR_CONN);
    assert_int_equal(tu_pending(e), 0);
    wisp_pbuf_free(p);
    wisp_udp_remove(pcb);
    tu_env_free(e);
}

static void test_send_no_route_is_err_rte(void **state)
{
    struct tu_env *e = env();
    struct wisp_udp_pcb *pcb = wisp_udp_new(e->s);
    struct wisp_pbuf *p = payload(e, "x", 1);
    wisp_ipaddr_t dst = wisp_ipaddr4(wisp_ip4(203, 0, 113, 9));
    (void)state;
    wisp_netif_set_ip4(&e->nif, tu_ip_self(), wisp_ip4_prefix_mask(24), 0); /* no gateway */
    assert_int_equal(wisp_udp_sendto(pcb, p, &dst, 9), WISP_ERR_RTE);
    assert_int_equal(tu_pending(e), 0);
    assert_int_equal(p->tot_len, 1);
    wisp_pbuf_free(p);
    wisp_udp_remove(pcb);
    tu_env_free(e);
}

/* Sending to a broadcast address is allowed without WISP_UDP_F_BCAST. */
static void test_sendto_broadcast_allowed(void **state)
{
    struct tu_env *e = env();
    struct wisp_udp_pcb *pcb = wisp_udp_new(e->s);
    struct wisp_pbuf *p = payload(e, "disc", 4);
    wisp_ipaddr_t dst = wisp_ipaddr4(WISP_IP4_BCAST);
    int n;
    (void)state;
    assert_int_equal(wisp_udp_bind(pcb, NULL, 68), WISP_OK);
    assert_int_equal(wisp_udp_sendto(pcb, p, &dst, 67), WISP_OK);
    n = tu_pop(e, g_out, sizeof(g_out));
    assert_true(n > 0);
    assert_memory_equal(g_out, wisp_eth_bcast, 6);
    /* the frame's other fields as for unicast (check_udp_frame skips no
     * field but the Ethernet destination, checked above) */
    memcpy(g_out, tu_mac_peer, 6);
    check_udp_frame(g_out, n, tu_ip_self(), WISP_IP4_BCAST, 68, 67, "disc", 4);
    wisp_pbuf_free(p);
    wisp_udp_remove(pcb);
    tu_env_free(e);
}

/* A PCB bound to a specific address sends from it. */
static void test_send_from_bound_address(void **state)
{
    struct tu_env *e = env();
    struct wisp_udp_pcb *pcb = wisp_udp_new(e->s);
    struct wisp_pbuf *p = payload(e, "abc", 3);
    wisp_ipaddr_t self = wisp_ipaddr4(tu_ip_self()), dst = peer();
    int n;
    (void)state;
    assert_int_equal(wisp_udp_bind(pcb, &self, 1111), WISP_OK);
    assert_int_equal(wisp_udp_sendto(pcb, p, &dst, 2222), WISP_OK);
    n = tu_pop(e, g_out, sizeof(g_out));
    check_udp_frame(g_out, n, tu_ip_self(), tu_ip_peer(), 1111, 2222, "abc", 3);
    wisp_pbuf_free(p);
    wisp_udp_remove(pcb);
    tu_env_free(e);
}

/* ---------------------------------------------------- bind and connect */

static void test_connect_binds_ephemeral_and_sends(void **state)
{
    struct tu_env *e = env();
    struct wisp_udp_pcb *pcb = wisp_udp_new(e->s);
    struct wisp_pbuf *p = payload(e, "ping", 4);
    wisp_ipaddr_t dst = peer();
    int n;
    (void)state;
    assert_int_equal(wisp_udp_connect(pcb, &dst, 7000), WISP_OK);
    assert_true(pcb->flags & WISP_UDP_F_CONNECTED);
    assert_in_range(pcb->local_port, WISP_EPHEMERAL_MIN, WISP_EPHEMERAL_MAX);
    assert_int_equal(wisp_udp_send(pcb, p), WISP_OK);
    n = tu_pop(e, g_out, sizeof(g_out));
    check_udp_frame(g_out, n, tu_ip_self(), tu_ip_peer(), pcb->local_port, 7000, "ping", 4);
    wisp_udp_disconnect(pcb);
    assert_false(pcb->flags & WISP_UDP_F_CONNECTED);
    assert_int_equal(pcb->remote_port, 0);
    assert_int_equal(wisp_udp_send(pcb, p), WISP_ERR_CONN);
    wisp_pbuf_free(p);
    wisp_udp_remove(pcb);
    tu_env_free(e);
}

/* sendto on an unbound PCB binds an ephemeral port first. */
static void test_sendto_unbound_binds_ephemeral(void **state)
{
    struct tu_env *e = env();
    struct wisp_udp_pcb *pcb = wisp_udp_new(e->s);
    struct wisp_pbuf *p = payload(e, "q", 1);
    wisp_ipaddr_t dst = peer();
    int n;
    (void)state;
    assert_int_equal(wisp_udp_sendto(pcb, p, &dst, 53), WISP_OK);
    assert_in_range(pcb->local_port, WISP_EPHEMERAL_MIN, WISP_EPHEMERAL_MAX);
    n = tu_pop(e, g_out, sizeof(g_out));
    check_udp_frame(g_out, n, tu_ip_self(), tu_ip_peer(), pcb->local_port, 53, "q", 1);
    wisp_pbuf_free(p);
    wisp_udp_remove(pcb);
    tu_env_free(e);
}

/* RFC 6056: random ephemeral ports, in range, distinct across PCBs. */
static void test_ephemeral_ports_in_range_and_distinct(void **state)
{
    struct tu_env *e = env();
    struct wisp_udp_pcb *pcb[WISP_UDP_PCB_COUNT];
    unsigned i, j;
    (void)state;
    for (i = 0; i < WISP_UDP_PCB_COUNT; i++) {
        pcb[i] = wisp_udp_new(e->s);
        assert_non_null(pcb[i]);
        assert_int_equal(wisp_udp_bind(pcb[i], NULL, 0), WISP_OK);
        assert_in_range(pcb[i]->local_port, WISP_EPHEMERAL_MIN, WISP_EPHEMERAL_MAX);
        for (j = 0; j < i; j++) {
            assert_int_not_equal(pcb[i]->local_port, pcb[j]->local_port);
        }
    }
    /* not simply sequential from the range start */
    assert_true(pcb[0]->local_port != WISP_EPHEMERAL_MIN || pcb[1]->local_port != WISP_EPHEMERAL_MIN + 1);
    for (i = 0; i < WISP_UDP_PCB_COUNT; i++) {
        wisp_udp_remove(pcb[i]);
    }
    tu_env_free(e);
}

/* The probe skips used ports: the search starts where an identical stack
 * (same seed: the keyed generator gives the same start) put its first
 * ephemeral port; with that port and the next taken, the one after is
 * chosen (RFC 6056 §3.3.1: linear probing, wrapping in the range). */
static uint16_t next_ephemeral(uint16_t p)
{
    return p == WISP_EPHEMERAL_MAX ? (uint16_t)WISP_EPHEMERAL_MIN : (uint16_t)(p + 1u);
}

static void test_ephemeral_probe_skips_used_ports(void **state)
{
    struct tu_env *e0 = env();
    struct wisp_udp_pcb *x = wisp_udp_new(e0->s);
    struct tu_env *e;
    struct wisp_udp_pcb *a, *b, *c;
    uint16_t first;
    (void)state;
    assert_int_equal(wisp_udp_bind(x, NULL, 0), WISP_OK);
    first = x->local_port;
    wisp_udp_remove(x);
    tu_env_free(e0);

    e = env();
    a = wisp_udp_new(e->s);
    b = wisp_udp_new(e->s);
    c = wisp_udp_new(e->s);
    assert_int_equal(wisp_udp_bind(a, NULL, first), WISP_OK);
    assert_int_equal(wisp_udp_bind(b, NULL, next_ephemeral(first)), WISP_OK);
    assert_int_equal(wisp_udp_bind(c, NULL, 0), WISP_OK);
    assert_int_equal(c->local_port, next_ephemeral(next_ephemeral(first)));
    wisp_udp_remove(a);
    wisp_udp_remove(b);
    wisp_udp_remove(c);
    tu_env_free(e);
}

static void test_bind_conflict_is_err_use(void **state)
{
    struct tu_env *e = env();
    struct wisp_udp_pcb *a = wisp_udp_new(e->s), *b = wisp_udp_new(e->s), *c = wisp_udp_new(e->s);
    wisp_ipaddr_t self = wisp_ipaddr4(tu_ip_self()), lo = wisp_ipaddr4(wisp_ip4(127, 0, 0, 1));
    (void)state;
    /* two specific addresses on the same port do not overlap */
    assert_int_equal(wisp_udp_bind(a, &self, 5000), WISP_OK);
    assert_int_equal(wisp_udp_bind(b, &lo, 5000), WISP_OK);
    /* the wildcard overlaps both */
    assert_int_equal(wisp_udp_bind(c, NULL, 5000), WISP_ERR_USE);
    assert_int_equal(c->local_port, 0);
    /* same specific address */
    assert_int_equal(wisp_udp_bind(c, &self, 5000), WISP_ERR_USE);
    /* another port is fine */
    assert_int_equal(wisp_udp_bind(c, NULL, 5001), WISP_OK);
    /* specific vs an existing wildcard */
    assert_int_equal(wisp_udp_bind(a, &self, 5001), WISP_ERR_USE);
    /* re-binding a PCB to its own port is not a conflict with itself */
    assert_int_equal(wisp_udp_bind(c, NULL, 5001), WISP_OK);
    /* after remove the port is free again */
    wisp_udp_remove(c);
    assert_int_equal(wisp_udp_bind(a, &self, 5001), WISP_OK);
    wisp_udp_remove(a);
    wisp_udp_remove(b);
    tu_env_free(e);
}

static void test_pcb_pool_exhaustion_and_recovery(void **state)
{
    struct tu_env *e = env();
    struct wisp_udp_pcb *pcb[WISP_UDP_PCB_COUNT], *extra;
    unsigned i;
    (void)state;
    for (i = 0; i < WISP_UDP_PCB_COUNT; i++) {
        pcb[i] = wisp_udp_new(e->s);
        assert_non_null(pcb[i]);
        assert_ptr_equal(pcb[i]->stack, e->s);
        assert_int_equal(pcb[i]->local_port, 0);
        assert_int_equal(pcb[i]->flags, 0);
    }
    assert_null(wisp_udp_new(e->s));
    assert_int_equal(e->s->pool[WISP_POOL_UDP_PCB].failed, 1);
    wisp_udp_remove(pcb[3]);
    extra = wisp_udp_new(e->s);
    assert_non_null(extra);
    pcb[3] = extra;
    for (i = 0; i < WISP_UDP_PCB_COUNT; i++) {
        wisp_udp_remove(pcb[i]);
    }
    assert_int_equal(e->s->pool[WISP_POOL_UDP_PCB].used, 0);
    assert_null(e->s->udp_pcbs);
    tu_env_free(e);
}

/* ------------------------------------------------------------- receive */

static struct wisp_udp_pcb *listener(struct tu_env *e, uint16_t port, struct rx_seen *seen)
{
    struct wisp_udp_pcb *pcb = wisp_udp_new(e->s);
    assert_non_null(pcb);
    assert_int_equal(wisp_udp_bind(pcb, NULL, port), WISP_OK);
    wisp_udp_recv(pcb, rx_cb, seen);
    return pcb;
}

static void test_recv_zero_copy_delivery(void **state)
{
    static struct rx_seen seen;
    struct tu_env *e = env();
    struct wisp_udp_pcb *pcb = listener(e, 5353, &seen);
    const char msg[] = "payload for the app";
    size_t n = tu_udp_frame(g_frame, 4321, 5353, msg, sizeof(msg));
    (void)state;
    memset(&seen, 0, sizeof(seen));
    assert_true(tu_inject(e, g_frame, n));
    assert_int_equal(seen.calls, 1);
    assert_ptr_equal(seen.pcb, pcb);
    assert_int_equal(seen.len, sizeof(msg));
    assert_memory_equal(seen.data, msg, sizeof(msg));
    assert_int_equal(seen.port, 4321);
    assert_true(seen.src == tu_ip_peer());
    assert_true(seen.dst == tu_ip_self());
    assert_true(seen.from_rx_pool); /* the received buffer itself, no copy */
    assert_int_equal(TU_CTR(e, UDP_RX), 1);
    assert_int_equal(tu_pending(e), 0);
    wisp_udp_remove(pcb);
    tu_env_free(e);
}

/* RFC 768: a zero checksum means "none" and is accepted. */
static void test_checksum_zero_accepted(void **state)
{
    static struct rx_seen seen;
    struct tu_env *e = env();
    struct wisp_udp_pcb *pcb = listener(e, 9, &seen);
    size_t n = tu_udp_frame(g_frame, 1, 9, "abcd", 4);
    (void)state;
    memset(&seen, 0, sizeof(seen));
    wisp_wr16(g_frame + UDP_OFF + 6, 0);
    assert_true(tu_inject(e, g_frame, n));
    assert_int_equal(seen.calls, 1);
    assert_int_equal(seen.len, 4);
    assert_int_equal(TU_CTR(e, UDP_DROP_CHKSUM), 0);
    wisp_udp_remove(pcb);
    tu_env_free(e);
}

static void test_bad_checksum_dropped(void **state)
{
    static struct rx_seen seen;
    struct tu_env *e = env();
    struct wisp_udp_pcb *pcb = listener(e, 9, &seen);
    size_t n = tu_udp_frame(g_frame, 1, 9, "abcd", 4);
    (void)state;
    memset(&seen, 0, sizeof(seen));
    g_frame[UDP_OFF + 8] ^= 0x40;
    assert_true(tu_inject(e, g_frame, n));
    assert_int_equal(seen.calls, 0);
    assert_int_equal(TU_CTR(e, UDP_DROP_CHKSUM), 1);
    assert_int_equal(tu_pending(e), 0); /* no ICMP either */
    wisp_udp_remove(pcb);
    tu_env_free(e);
}

static void test_length_field_bigger_than_packet_dropped(void **state)
{
    static struct rx_seen seen;
    struct tu_env *e = env();
    struct wisp_udp_pcb *pcb = listener(e, 9, &seen);
    size_t n = udp_frame_len(g_frame, 1, 9, "abcdefgh", 8, 8 + 9);
    (void)state;
    memset(&seen, 0, sizeof(seen));
    assert_true(tu_inject(e, g_frame, n));
    assert_int_equal(seen.calls, 0);
    assert_int_equal(TU_CTR(e, UDP_DROP_LEN), 1);
    assert_int_equal(tu_pending(e), 0);
    wisp_udp_remove(pcb);
    tu_env_free(e);
}

static void test_length_field_below_header_dropped(void **state)
{
    static struct rx_seen seen;
    struct tu_env *e = env();
    struct wisp_udp_pcb *pcb = listener(e, 9, &seen);
    size_t n = udp_frame_len(g_frame, 1, 9, "abcdefgh", 8, 7);
    (void)state;
    memset(&seen, 0, sizeof(seen));
    assert_true(tu_inject(e, g_frame, n));
    assert_int_equal(seen.calls, 0);
    assert_int_equal(TU_CTR(e, UDP_DROP_LEN), 1);
    wisp_udp_remove(pcb);
    tu_env_free(e);
}

/* RFC 768: the length field governs; bytes after it are not data. */
static void test_length_field_smaller_trims(void **state)
{
    static struct rx_seen seen;
    struct tu_env *e = env();
    struct wisp_udp_pcb *pcb = listener(e, 9, &seen);
    size_t n = udp_frame_len(g_frame, 1, 9, "abcdefghij", 10, 8 + 3);
    (void)state;
    memset(&seen, 0, sizeof(seen));
    assert_true(tu_inject(e, g_frame, n));
    assert_int_equal(seen.calls, 1);
    assert_int_equal(seen.len, 3);
    assert_memory_equal(seen.data, "abc", 3);
    assert_int_equal(TU_CTR(e, UDP_DROP_LEN), 0);
    assert_int_equal(TU_CTR(e, UDP_DROP_CHKSUM), 0);
    wisp_udp_remove(pcb);
    tu_env_free(e);
}

static void test_truncated_header_dropped(void **state)
{
    struct tu_env *e = env();
    (void)state;
    tu_udp_frame(g_frame, 1, 9, "", 0);
    wisp_wr16(g_frame + ETH + 2, IPH + 4u); /* only 4 bytes of UDP */
    wisp_wr16(g_frame + ETH + 10, 0);
    wisp_wr16(g_frame + ETH + 10, (uint16_t)~wisp_chksum_sum(g_frame + ETH, IPH));
    memset(g_frame + UDP_OFF + 4, 0, 60 - UDP_OFF - 4);
    assert_true(tu_inject(e, g_frame, 60));
    assert_int_equal(TU_CTR(e, UDP_RX), 1);
    assert_int_equal(TU_CTR(e, UDP_DROP_SHORT), 1);
    assert_int_equal(tu_pending(e), 0);
    tu_env_free(e);
}

/* A connected PCB receives only from its peer. */
static void test_connected_pcb_filters_other_peers(void **state)
{
    static struct rx_seen seen;
    struct tu_env *e = env();
    struct wisp_udp_pcb *pcb = listener(e, 6000, &seen);
    wisp_ipaddr_t dst = peer();
    size_t n;
    (void)state;
    memset(&seen, 0, sizeof(seen));
    assert_int_equal(wisp_udp_connect(pcb, &dst, 7000), WISP_OK);
    assert_int_equal(pcb->local_port, 6000); /* connect keeps the bound port */

    n = tu_udp_frame(g_frame, 7001, 6000, "no", 2); /* wrong source port */
    assert_true(tu_inject(e, g_frame, n));
    assert_int_equal(seen.calls, 0);
    assert_int_equal(TU_CTR(e, UDP_DROP_NOPORT), 1);
    tu_clear(e); /* the port unreachable */

    n = tu_udp_frame(g_frame, 7000, 6000, "ok", 2);
    assert_true(tu_inject(e, g_frame, n));
    assert_int_equal(seen.calls, 1);
    assert_memory_equal(seen.data, "ok", 2);

    wisp_udp_disconnect(pcb); /* any peer again */
    n = tu_udp_frame(g_frame, 7001, 6000, "any", 3);
    assert_true(tu_inject(e, g_frame, n));
    assert_int_equal(seen.calls, 2);
    wisp_udp_remove(pcb);
    tu_env_free(e);
}

/* A PCB bound to a specific address only receives datagrams to it. */
static void test_bound_address_filters_destination(void **state)
{
    static struct rx_seen seen;
    struct tu_env *e = env();
    struct wisp_udp_pcb *pcb = wisp_udp_new(e->s);
    wisp_ipaddr_t lo = wisp_ipaddr4(wisp_ip4(127, 0, 0, 1)), self = wisp_ipaddr4(tu_ip_self());
    size_t n = tu_udp_frame(g_frame, 1, 5000, "x", 1);
    (void)state;
    memset(&seen, 0, sizeof(seen));
    wisp_udp_recv(pcb, rx_cb, &seen);
    assert_int_equal(wisp_udp_bind(pcb, &lo, 5000), WISP_OK);
    assert_true(tu_inject(e, g_frame, n));
    assert_int_equal(seen.calls, 0);
    assert_int_equal(TU_CTR(e, UDP_DROP_NOPORT), 1);
    assert_int_equal(wisp_udp_bind(pcb, &self, 5000), WISP_OK);
    assert_true(tu_inject(e, g_frame, n));
    assert_int_equal(seen.calls, 1);
    wisp_udp_remove(pcb);
    tu_env_free(e);
}

/* Demultiplexing prefers the most specific PCB: with one PCB on 127.0.0.1
 * and one on our address, each gets its own datagrams. */
static void test_demux_by_local_address(void **state)
{
    static struct rx_seen seen_lo, seen_self;
    struct tu_env *e = env();
    struct wisp_udp_pcb *a = wisp_udp_new(e->s), *b = wisp_udp_new(e->s);
    wisp_ipaddr_t lo = wisp_ipaddr4(wisp_ip4(127, 0, 0, 1)), self = wisp_ipaddr4(tu_ip_self());
    size_t n = tu_udp_frame(g_frame, 1, 5000, "x", 1);
    (void)state;
    memset(&seen_lo, 0, sizeof(seen_lo));
    memset(&seen_self, 0, sizeof(seen_self));
    assert_int_equal(wisp_udp_bind(a, &self, 5000), WISP_OK);
    assert_int_equal(wisp_udp_bind(b, &lo, 5000), WISP_OK);
    wisp_udp_recv(a, rx_cb, &seen_self);
    wisp_udp_recv(b, rx_cb, &seen_lo);
    assert_true(tu_inject(e, g_frame, n));
    assert_int_equal(seen_self.calls, 1);
    assert_int_equal(seen_lo.calls, 0);
    wisp_udp_remove(a);
    wisp_udp_remove(b);
    tu_env_free(e);
}

/* A broadcast goes to the (single) wildcard listener; no port unreachable
 * for broadcasts without one. */
static void test_broadcast_delivered_to_wildcard(void **state)
{
    static struct rx_seen seen;
    struct tu_env *e = env();
    struct wisp_udp_pcb *pcb = listener(e, 67, &seen);
    size_t n = tu_udp_frame(g_frame, 68, 67, "dhcp", 4);
    (void)state;
    memset(&seen, 0, sizeof(seen));
    memcpy(g_frame, wisp_eth_bcast, 6);
    wisp_ip4_wr(g_frame + ETH + 16, WISP_IP4_BCAST);
    wisp_wr16(g_frame + ETH + 10, 0);
    wisp_wr16(g_frame + ETH + 10, (uint16_t)~wisp_chksum_sum(g_frame + ETH, IPH));
    wisp_wr16(g_frame + UDP_OFF + 6, 0);
    assert_true(tu_inject(e, g_frame, n));
    assert_int_equal(seen.calls, 1);
    assert_true(seen.dst == WISP_IP4_BCAST);
    assert_memory_equal(seen.data, "dhcp", 4);
    wisp_udp_remove(pcb);
    tu_env_free(e);
}

/* A bound PCB without a receive callback: the datagram is freed, no ICMP. */
static void test_no_recv_callback_frees(void **state)
{
    struct tu_env *e = env();
    struct wisp_udp_pcb *pcb = wisp_udp_new(e->s);
    size_t n = tu_udp_frame(g_frame, 1, 4000, "x", 1);
    (void)state;
    assert_int_equal(wisp_udp_bind(pcb, NULL, 4000), WISP_OK);
    assert_true(tu_inject(e, g_frame, n));
    assert_int_equal(TU_CTR(e, UDP_RX), 1);
    assert_int_equal(TU_CTR(e, UDP_DROP_NOPORT), 0);
    assert_int_equal(tu_pending(e), 0);
    wisp_udp_remove(pcb);
    tu_env_free(e); /* leak check */
}

/* RFC 1122 §4.1.3.1: no listener -> ICMP port unreachable. */
static void test_no_listener_port_unreachable(void **state)
{
    struct tu_env *e = env();
    size_t n = tu_udp_frame(g_frame, 1234, 4001, "hello world", 11);
    int m;
    (void)state;
    assert_true(tu_inject(e, g_frame, n));
    assert_int_equal(TU_CTR(e, UDP_DROP_NOPORT), 1);
    m = tu_pop(e, g_out, sizeof(g_out));
    assert_int_equal(m, (int)(UDP_OFF + 8u + IPH + 8u));
    assert_int_equal(g_out[ETH + 9], WISP_IP4_PROTO_ICMP);
    assert_int_equal(g_out[UDP_OFF], WISP_ICMP_DEST_UNREACH);
    assert_int_equal(g_out[UDP_OFF + 1], WISP_ICMP_UNREACH_PORT);
    assert_memory_equal(g_out + UDP_OFF + 8, g_frame + ETH, IPH + 8u);
    tu_env_free(e);
}

/* Round trip through the loopback interface: send to ourselves. */
static void test_loopback_round_trip(void **state)
{
    static struct rx_seen seen;
    struct tu_env *e = env();
    struct wisp_udp_pcb *rx = listener(e, 3000, &seen);
    struct wisp_udp_pcb *tx = wisp_udp_new(e->s);
    struct wisp_pbuf *p = payload(e, "loop", 4);
    wisp_ipaddr_t lo = wisp_ipaddr4(wisp_ip4(127, 0, 0, 1));
    (void)state;
    memset(&seen, 0, sizeof(seen));
    assert_int_equal(wisp_udp_bind(tx, NULL, 3001), WISP_OK);
    assert_int_equal(wisp_udp_sendto(tx, p, &lo, 3000), WISP_OK);
    tu_advance(e, 1);
    assert_int_equal(seen.calls, 1);
    assert_memory_equal(seen.data, "loop", 4);
    assert_int_equal(seen.port, 3001);
    assert_int_equal(TU_CTR(e, UDP_DROP_CHKSUM), 0);
    wisp_pbuf_free(p);
    wisp_udp_remove(rx);
    wisp_udp_remove(tx);
    tu_env_free(e);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_bind_sendto_frame_byte_exact),
        cmocka_unit_test(test_send_uses_pcb_ttl_tos),
        cmocka_unit_test(test_send_zero_checksum_sent_as_ffff),
        cmocka_unit_test(test_send_ref_pbuf_chains_header),
        cmocka_unit_test(test_send_large_datagram_fragmented),
        cmocka_unit_test(test_sendto_too_large_rejected),
        cmocka_unit_test(test_sendto_port0_rejected),
        cmocka_unit_test(test_send_unconnected_is_err_conn),
        cmocka_unit_test(test_send_no_route_is_err_rte),
        cmocka_unit_test(test_sendto_broadcast_allowed),
        cmocka_unit_test(test_send_from_bound_address),
        cmocka_unit_test(test_connect_binds_ephemeral_and_sends),
        cmocka_unit_test(test_sendto_unbound_binds_ephemeral),
        cmocka_unit_test(test_ephemeral_ports_in_range_and_distinct),
        cmocka_unit_test(test_ephemeral_probe_skips_used_ports),
        cmocka_unit_test(test_bind_conflict_is_err_use),
        cmocka_unit_test(test_pcb_pool_exhaustion_and_recovery),
        cmocka_unit_test(test_recv_zero_copy_delivery),
        cmocka_unit_test(test_checksum_zero_accepted),
        cmocka_unit_test(test_bad_checksum_dropped),
        cmocka_unit_test(test_length_field_bigger_than_packet_dropped),
        cmocka_unit_test(test_length_field_below_header_dropped),
        cmocka_unit_test(test_length_field_smaller_trims),
        cmocka_unit_test(test_truncated_header_dropped),
        cmocka_unit_test(test_connected_pcb_filters_other_peers),
        cmocka_unit_test(test_bound_address_filters_destination),
        cmocka_unit_test(test_demux_by_local_address),
        cmocka_unit_test(test_broadcast_delivered_to_wildcard),
        cmocka_unit_test(test_no_recv_callback_frees),
        cmocka_unit_test(test_no_listener_port_unreachable),
        cmocka_unit_test(test_loopback_round_trip),
        cmocka_unit_test(test_sendto_from_tos_and_local),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
