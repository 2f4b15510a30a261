/**
 * @file test_udp.c
 * Unit tests of UDP (src/core/udp.c): PCB pool, bind (ephemeral ports and
 * conflicts), connect, byte-exact send with checksum, receive validation
 * (length, checksum), zero-copy delivery, demultiplexing and the port
 * unreachable for datagrams without a listener.
 */
#include "testutil.h"

#define ETH WISP_ETH_HLEN
#define IPH WISP_IP4_HLEN
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

/* Datagrams sent: each is checked byte by byte (check_udp_frame: Ethernet,
 * IPv4 header and checksum, RFC 768 header, data, checksum recomputed
 * here), with the TTL and TOS, UDP_TX, and the caller's buffer given back
 * unchanged (same payload pointer, length, one reference). */
enum buf_kind { BUF_RAM, BUF_REF };

static const struct send_case {
    const char *what;
    const char *data;
    uint16_t len;
    enum buf_kind kind;       /* REF: caller memory without headroom (a header buffer is chained in front) */
    bool zero_sum;            /* data chosen so that the checksum computes to 0 */
    bool bind_self;           /* bound to our address, not the wildcard */
    uint16_t lport;           /* bound to this port; 0: not bound (sendto binds an ephemeral one) */
    uint8_t ttl, tos;         /* set on the PCB; ttl 0: default */
    bool bcast;               /* to 255.255.255.255 */
    uint16_t dport;
} send_cases[] = {
    { "bind and sendto", "hello", 5, BUF_RAM, false, false, 5000, 0, 0, false, 6000 },
    /* RFC 768: a computed checksum of 0 is transmitted as all ones */
    { "zero checksum sent as ffff", NULL, 2, BUF_RAM, true, false, 1000, 0, 0, false, 2000 },
    { "the PCB's TTL and TOS", "x", 1, BUF_RAM, false, false, 5001, 5, 0xB8, false, 53 },
    { "REF buffer gets a header chained", "zero-copy payload", 18, BUF_REF, false, false, 7, 0, 0, false, 8 },
    /* allowed without WISP_UDP_F_BCAST */
    { "to the broadcast address", "disc", 4, BUF_RAM, false, false, 68, 0, 0, true, 67 },
    { "from the bound address", "abc", 3, BUF_RAM, false, true, 1111, 0, 0, false, 2222 },
    { "unbound: an ephemeral port", "q", 1, BUF_RAM, false, false, 0, 0, 0, false, 53 },
};

/* Data of 2 bytes whose checksum (ports sport -> dport) computes to 0. */
static void zero_sum_data(uint8_t data[2], uint16_t sport, uint16_t dport)
{
    uint8_t hdr[8];
    uint16_t s0;
    wisp_wr16(hdr, sport);
    wisp_wr16(hdr + 2, dport);
    wisp_wr16(hdr + 4, 10);
    wisp_wr16(hdr + 6, 0);
    s0 = wisp_chksum_add(wisp_chksum_pseudo4(tu_ip_self(), tu_ip_peer(), WISP_IP4_PROTO_UDP, 10),
                         wisp_chksum_sum(hdr, 8));
    wisp_wr16(data, (uint16_t)~s0); /* s0 + ~s0 = 0xFFFF: the checksum computes to 0 */
}

/* Send p on pcb to dst:dport and check the frame; returns the source port. */
static uint16_t send_and_check(struct tu_env *e, struct wisp_udp_pcb *pcb, const struct send_case *c,
                               struct wisp_pbuf *p, const uint8_t *data)
{
    wisp_ipaddr_t dst = c->bcast ? wisp_ipaddr4(WISP_IP4_BCAST) : peer();
    void *before = p->payload;
    uint16_t sport;
    int n;
    assert_int_equal(wisp_udp_sendto(pcb, p, &dst, c->dport), WISP_OK);
    sport = pcb->local_port;
    if (c->lport != 0) {
        assert_int_equal(sport, c->lport);
    } else {
        assert_in_range(sport, WISP_EPHEMERAL_MIN, WISP_EPHEMERAL_MAX);
    }
    n = tu_pop(e, g_out, sizeof(g_out));
    assert_true(n > 0);
    if (c->bcast) {
        /* the other fields as for unicast (check_udp_frame checks the
         * Ethernet destination too) */
        assert_memory_equal(g_out, wisp_eth_bcast, 6);
        memcpy(g_out, tu_mac_peer, 6);
    }
    check_udp_frame(g_out, n, tu_ip_self(), wisp_ipaddr_ip4(&dst), sport, c->dport, data, c->len);
    if (c->zero_sum) {
        assert_int_equal(wisp_rd16(g_out + UDP_OFF + 6), 0xFFFF);
    }
    assert_int_equal(g_out[ETH + 8], c->ttl != 0 ? c->ttl : WISP_IP_DEFAULT_TTL);
    assert_int_equal(g_out[ETH + 1], c->tos);
    assert_int_equal(TU_CTR(e, UDP_TX), 1);
    assert_int_equal(tu_pending(e), 0);
    /* the caller's buffer is given back unchanged */
    assert_ptr_equal(p->payload, before);
    assert_int_equal(p->len, c->len);
    assert_int_equal(p->tot_len, c->len);
    assert_int_equal(p->ref, 1);
    return sport;
}

static void test_send_cases(void **state)
{
    unsigned i;
    (void)state;
    for (i = 0; i < WISP_ARRAY_SIZE(send_cases); i++) {
        const struct send_case *c = &send_cases[i];
        struct tu_env *e = env();
        struct wisp_udp_pcb *pcb = wisp_udp_new(e->s);
        wisp_ipaddr_t self = wisp_ipaddr4(tu_ip_self());
        uint8_t zdata[2];
        const uint8_t *data = (const uint8_t *)c->data;
        struct wisp_pbuf *p;
        print_message("case %u: %s\n", i, c->what);
        assert_non_null(pcb);
        if (c->zero_sum) {
            zero_sum_data(zdata, c->lport, c->dport);
            data = zdata;
        }
        p = c->kind == BUF_REF ? wisp_pbuf_alloc_ref(e->s, data, c->len, WISP_PBUF_REF) : payload(e, data, c->len);
        assert_non_null(p);
        if (c->ttl != 0) {
            pcb->ttl = c->ttl;
        }
        pcb->tos = c->tos;
        if (c->lport != 0) {
            assert_int_equal(wisp_udp_bind(pcb, c->bind_self ? &self : NULL, c->lport), WISP_OK);
            assert_int_equal(pcb->local_port, c->lport);
        }
        send_and_check(e, pcb, c, p, data);
        wisp_pbuf_free(p);
        wisp_udp_remove(pcb);
        tu_env_free(e);
    }
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

/* Sends that must fail: the error, nothing sent, UDP_TX 0, the buffer
 * given back whole. */
enum send_op { OP_SENDTO, OP_SEND, OP_CONNECT };

static const struct send_err_case {
    const char *what;
    enum send_op op;
    bool too_big;             /* a ROM buffer of 65508 bytes (+ 8 + 20 > 65535) */
    bool off_link_no_gw;      /* to 203.0.113.9 with no gateway configured */
    uint16_t dport;
    wisp_err_t err;
} send_err_cases[] = {
    { "too large", OP_SENDTO, true, false, 9, WISP_ERR_VAL },
    { "sendto port 0", OP_SENDTO, false, false, 0, WISP_ERR_VAL },
    { "connect port 0", OP_CONNECT, false, false, 0, WISP_ERR_VAL },
    { "send unconnected", OP_SEND, false, false, 0, WISP_ERR_CONN },
    { "no route", OP_SENDTO, false, true, 9, WISP_ERR_RTE },
};

static void test_send_errors(void **state)
{
    static uint8_t big[65508];
    unsigned i;
    (void)state;
    for (i = 0; i < WISP_ARRAY_SIZE(send_err_cases); i++) {
        const struct send_err_case *c = &send_err_cases[i];
        struct tu_env *e = env();
        struct wisp_udp_pcb *pcb = wisp_udp_new(e->s);
        struct wisp_pbuf *p = c->too_big ? wisp_pbuf_alloc_ref(e->s, big, sizeof(big), WISP_PBUF_ROM) : payload(e, "x", 1);
        wisp_ipaddr_t dst = c->off_link_no_gw ? wisp_ipaddr4(wisp_ip4(203, 0, 113, 9)) : peer();
        uint16_t len = p->tot_len;
        wisp_err_t err = WISP_OK;
        print_message("case %u: %s\n", i, c->what);
        if (c->off_link_no_gw) {
            wisp_netif_set_ip4(&e->nif, tu_ip_self(), wisp_ip4_prefix_mask(24), 0);
        }
        switch (c->op) {
        case OP_SENDTO:
            err = wisp_udp_sendto(pcb, p, &dst, c->dport);
            break;
        case OP_SEND:
            err = wisp_udp_send(pcb, p);
            break;
        case OP_CONNECT:
            err = wisp_udp_connect(pcb, &dst, c->dport);
            break;
        }
        assert_int_equal(err, c->err);
        assert_int_equal(tu_pending(e), 0);
        assert_int_equal(TU_CTR(e, UDP_TX), 0);
        assert_int_equal(p->tot_len, len);
        wisp_pbuf_free(p);
        wisp_udp_remove(pcb);
        tu_env_free(e);
    }
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

/* Datagrams from the peer: what the listener gets and what the counters
 * say. A delivered datagram is the received buffer itself (zero copy) with
 * the source port and address and the destination address. */
enum rx_sum { SUM_OK, SUM_ZERO, SUM_BAD };

static const struct rx_case {
    const char *what;
    uint16_t listen;          /* port of a wildcard listener; 0: none */
    bool no_cb;               /* the listener has no receive callback */
    uint16_t sport, dport;
    const char *data;
    uint16_t len;
    uint16_t ulen;            /* the UDP length field; 0: 8 + len */
    enum rx_sum sum;          /* BAD: a data bit flipped after the checksum */
    bool bcast;               /* to 255.255.255.255, Ethernet broadcast */
    bool short_hdr;           /* an IP datagram with 4 bytes of UDP header */
    /* outcome */
    const char *got;          /* delivered data (NULL: nothing delivered) */
    uint16_t got_len;
    uint8_t drop_chksum, drop_len, drop_short, drop_noport;
    bool icmp;                /* a port unreachable quoting the datagram (else nothing sent) */
} rx_cases[] = {
    { "zero-copy delivery", 5353, false, 4321, 5353, "payload for the app", 20, 0, SUM_OK, false, false,
      "payload for the app", 20, 0, 0, 0, 0, false },
    /* RFC 768: a zero checksum means "none" */
    { "zero checksum accepted", 9, false, 1, 9, "abcd", 4, 0, SUM_ZERO, false, false, "abcd", 4, 0, 0, 0, 0, false },
    { "bad checksum dropped, no ICMP", 9, false, 1, 9, "abcd", 4, 0, SUM_BAD, false, false, NULL, 0, 1, 0, 0, 0, false },
    { "length field beyond the packet", 9, false, 1, 9, "abcdefgh", 8, 8 + 9, SUM_OK, false, false, NULL, 0, 0, 1, 0, 0,
      false },
    { "length field below the header", 9, false, 1, 9, "abcdefgh", 8, 7, SUM_OK, false, false, NULL, 0, 0, 1, 0, 0,
      false },
    /* RFC 768: the length field governs; bytes after it are not data */
    { "length field smaller: trimmed", 9, false, 1, 9, "abcdefghij", 10, 8 + 3, SUM_OK, false, false, "abc", 3, 0, 0, 0,
      0, false },
    { "truncated header", 0, false, 1, 9, "", 0, 0, SUM_OK, false, true, NULL, 0, 0, 0, 1, 0, false },
    /* to the (single) wildcard listener */
    { "broadcast delivered", 67, false, 68, 67, "dhcp", 4, 0, SUM_ZERO, true, false, "dhcp", 4, 0, 0, 0, 0, false },
    /* freed, not counted as a drop, no ICMP (the leak check in tu_env_free) */
    { "bound without a receive callback", 4000, true, 1, 4000, "x", 1, 0, SUM_OK, false, false, NULL, 0, 0, 0, 0, 0,
      false },
    /* RFC 1122 §4.1.3.1 */
    { "no listener: port unreachable", 0, false, 1234, 4001, "hello world", 11, 0, SUM_OK, false, false, NULL, 0, 0, 0,
      0, 1, true },
};

static size_t rx_frame(const struct rx_case *c)
{
    wisp_ip4_t dst = c->bcast ? WISP_IP4_BCAST : tu_ip_self();
    size_t n = tu_udp_frame_from(g_frame, c->bcast ? wisp_eth_bcast : tu_mac_self, tu_ip_peer(), dst, c->sport,
                                 c->dport, c->data, c->len);
    uint8_t *u = g_frame + UDP_OFF;
    if (c->ulen != 0) {
        /* the checksum fixed up over that length (the IP length covers
         * all of the data) */
        wisp_wr16(u + 4, c->ulen);
        wisp_wr16(u + 6, 0);
        if (c->ulen >= 8u && c->ulen <= 8u + c->len) {
            uint16_t sum = wisp_chksum_add(wisp_chksum_pseudo4(tu_ip_peer(), dst, WISP_IP4_PROTO_UDP, c->ulen),
                                           wisp_chksum_sum(u, c->ulen));
            sum = (uint16_t)~sum;
            wisp_wr16(u + 6, sum == 0 ? 0xFFFF : sum);
        }
    }
    if (c->sum == SUM_ZERO) {
        wisp_wr16(u + 6, 0);
    } else if (c->sum == SUM_BAD) {
        u[8] ^= 0x40;
    }
    if (c->short_hdr) {
        wisp_wr16(g_frame + ETH + 2, IPH + 4u); /* only 4 bytes of UDP */
        wisp_wr16(g_frame + ETH + 10, 0);
        wisp_wr16(g_frame + ETH + 10, (uint16_t)~wisp_chksum_sum(g_frame + ETH, IPH));
        memset(u + 4, 0, 60 - UDP_OFF - 4);
        n = 60;
    }
    return n;
}

static void test_recv_cases(void **state)
{
    static struct rx_seen seen;
    unsigned i;
    (void)state;
    for (i = 0; i < WISP_ARRAY_SIZE(rx_cases); i++) {
        const struct rx_case *c = &rx_cases[i];
        struct tu_env *e = env();
        struct wisp_udp_pcb *pcb = NULL;
        size_t n;
        print_message("case %u: %s\n", i, c->what);
        memset(&seen, 0, sizeof(seen));
        if (c->listen != 0) {
            pcb = listener(e, c->listen, &seen);
            if (c->no_cb) {
                wisp_udp_recv(pcb, NULL, NULL);
            }
        }
        n = rx_frame(c);
        assert_true(tu_inject(e, g_frame, n));
        if (c->got != NULL) {
            assert_int_equal(seen.calls, 1);
            assert_ptr_equal(seen.pcb, pcb);
            assert_int_equal(seen.len, c->got_len);
            assert_memory_equal(seen.data, c->got, c->got_len);
            assert_int_equal(seen.port, c->sport);
            assert_true(seen.src == tu_ip_peer());
            assert_true(seen.dst == (c->bcast ? WISP_IP4_BCAST : tu_ip_self()));
            assert_true(seen.from_rx_pool); /* the received buffer itself, no copy */
        } else {
            assert_int_equal(seen.calls, 0);
        }
        assert_int_equal(TU_CTR(e, UDP_RX), 1);
        assert_int_equal(TU_CTR(e, UDP_DROP_CHKSUM), c->drop_chksum);
        assert_int_equal(TU_CTR(e, UDP_DROP_LEN), c->drop_len);
        assert_int_equal(TU_CTR(e, UDP_DROP_SHORT), c->drop_short);
        assert_int_equal(TU_CTR(e, UDP_DROP_NOPORT), c->drop_noport);
        if (c->icmp) {
            int m = tu_pop(e, g_out, sizeof(g_out));
            assert_int_equal(m, (int)(UDP_OFF + 8u + IPH + 8u));
            assert_int_equal(g_out[ETH + 9], WISP_IP4_PROTO_ICMP);
            assert_int_equal(g_out[UDP_OFF], WISP_ICMP_DEST_UNREACH);
            assert_int_equal(g_out[UDP_OFF + 1], WISP_ICMP_UNREACH_PORT);
            assert_memory_equal(g_out + UDP_OFF + 8, g_frame + ETH, IPH + 8u);
        }
        assert_int_equal(tu_pending(e), 0);
        if (pcb != NULL) {
            wisp_udp_remove(pcb);
        }
        tu_env_free(e);
    }
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
        cmocka_unit_test(test_send_cases),
        cmocka_unit_test(test_send_large_datagram_fragmented),
        cmocka_unit_test(test_send_errors),
        cmocka_unit_test(test_connect_binds_ephemeral_and_sends),
        cmocka_unit_test(test_ephemeral_ports_in_range_and_distinct),
        cmocka_unit_test(test_ephemeral_probe_skips_used_ports),
        cmocka_unit_test(test_bind_conflict_is_err_use),
        cmocka_unit_test(test_pcb_pool_exhaustion_and_recovery),
        cmocka_unit_test(test_recv_cases),
        cmocka_unit_test(test_connected_pcb_filters_other_peers),
        cmocka_unit_test(test_bound_address_filters_destination),
        cmocka_unit_test(test_demux_by_local_address),
        cmocka_unit_test(test_loopback_round_trip),
        cmocka_unit_test(test_sendto_from_tos_and_local),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
