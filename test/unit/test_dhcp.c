/**
 * @file test_dhcp.c
 * Unit tests of the DHCP client (src/core/dhcp.c) at segment level: crafted
 * OFFER / ACK / NAK frames are injected into a test stack and the bytes of
 * the DISCOVER / REQUEST / DECLINE / RELEASE messages and ARP probes it
 * sends are checked, along with timing (RFC 2131 §4.1 backoff, T1 / T2 /
 * expiry), interface configuration and drop counters. One rule per test.
 */
#include <stdlib.h>

#include "testutil.h"
#include "wisp/dhcp.h"

#define ETH 14u
#define IPH 20u
#define UDPH 8u
#define DOFF (ETH + IPH + UDPH) /* DHCP message in a frame */

#define SRV tu_ip_peer()                      /* the server, 198.18.0.1 */
#define YI wisp_ip4(198, 18, 0, 50)            /* the offered address */
#define DNS1 wisp_ip4(198, 18, 0, 53)
#define DNS2 wisp_ip4(198, 18, 1, 53)

/* ---------------------------------------------------------------- helpers */

struct ev_rec {
    unsigned bound, renewed, lost, conflict;
    wisp_ip4_t last_addr;
};

static void ev_cb(void *arg, struct wisp_dhcp *d, enum wisp_dhcp_event ev)
{
    struct ev_rec *r = arg;
    r->last_addr = d->lease.addr;
    switch (ev) {
    case WISP_DHCP_EV_BOUND:
        r->bound++;
        break;
    case WISP_DHCP_EV_RENEWED:
        r->renewed++;
        break;
    case WISP_DHCP_EV_LOST:
        r->lost++;
        break;
    case WISP_DHCP_EV_CONFLICT:
        r->conflict++;
        break;
    }
}

struct fixture {
    struct tu_env *e;
    struct wisp_dhcp d;
    struct wisp_dhcp_cfg cfg;
    struct ev_rec ev;
};

/* Test defaults: no start delay, no ARP check (the check has its own
 * tests), RFC timings otherwise. */
static struct fixture *fx_new(uint64_t seed)
{
    struct fixture *f = calloc(1, sizeof(*f));
    assert_non_null(f);
    f->e = tu_env_new(seed);
    wisp_dhcp_cfg_defaults(&f->cfg);
    f->cfg.init_delay_ms = 0;
    f->cfg.arp_check = false;
    return f;
}

static void fx_start(struct fixture *f)
{
    assert_int_equal(wisp_dhcp_start(&f->d, &f->e->nif, &f->cfg, ev_cb, &f->ev), WISP_OK);
}

static void fx_free(struct fixture *f)
{
    wisp_dhcp_stop(&f->d, false);
    tu_env_free(f->e);
    free(f);
}

/* A frame the stack sent. */
struct sent {
    uint8_t f[2048];
    int n;
    const uint8_t *m; /* DHCP message (when a DHCP frame) */
    size_t mlen;
};

/* Pop frames until a DHCP client message (UDP 68 -> 67); ARP and other
 * frames are skipped. False when none is pending. */
static bool next_dhcp(struct tu_env *e, struct sent *s)
{
    while ((s->n = tu_pop(e, s->f, sizeof(s->f))) >= 0) {
        if (s->n >= (int)DOFF && wisp_rd16(s->f + 12) == WISP_ETHTYPE_IP4 && s->f[ETH + 9] == WISP_IP4_PROTO_UDP &&
            wisp_rd16(s->f + ETH + IPH) == 68 && wisp_rd16(s->f + ETH + IPH + 2) == 67) {
            s->m = s->f + DOFF;
            s->mlen = (size_t)s->n - DOFF;
            return true;
        }
    }
    return false;
}

/* Pop frames until an ARP packet; false when none. */
static bool next_arp(struct tu_env *e, struct sent *s)
{
    while ((s->n = tu_pop(e, s->f, sizeof(s->f))) >= 0) {
        if (s->n >= 42 && wisp_rd16(s->f + 12) == WISP_ETHTYPE_ARP) {
            return true;
        }
    }
    return false;
}

/* Option code in message m: its length and value, -1 when absent. */
static int opt(const struct sent *s, uint8_t code, const uint8_t **val)
{
    size_t i = 240;
    while (i < s->mlen) {
        uint8_t c = s->m[i];
        if (c == 0) {
            i++;
            continue;
        }
        if (c == 255 || i + 1 >= s->mlen) {
            return -1;
        }
        if (c == code) {
            if (val != NULL) {
                *val = s->m + i + 2;
            }
            return s->m[i + 1];
        }
        i += 2u + s->m[i + 1];
    }
    return -1;
}

static int msg_type(const struct sent *s)
{
    const uint8_t *v;
    return opt(s, 53, &v) == 1 ? v[0] : -1;
}

static wisp_ip4_t opt_ip(const struct sent *s, uint8_t code)
{
    const uint8_t *v;
    return opt(s, code, &v) == 4 ? wisp_ip4_rd(v) : 0;
}

/* Advance in steps of step ms, up to max ms, until a DHCP message is
 * sent; returns the ms waited, -1 when none came. */
static long wait_dhcp(struct tu_env *e, struct sent *s, uint32_t max, uint32_t step)
{
    uint32_t t = 0;
    if (next_dhcp(e, s)) {
        return 0;
    }
    while (t < max) {
        tu_advance(e, step);
        t += step;
        if (next_dhcp(e, s)) {
            return (long)t;
        }
    }
    return -1;
}

/* A server message under construction. */
struct msgb {
    uint8_t b[1200];
    size_t n;
};

static void mb_opt(struct msgb *m, uint8_t code, uint8_t len, const void *v)
{
    m->b[m->n++] = code;
    m->b[m->n++] = len;
    memcpy(m->b + m->n, v, len);
    m->n += len;
}

static void mb_u32(struct msgb *m, uint8_t code, uint32_t v)
{
    uint8_t b[4];
    wisp_wr32(b, v);
    mb_opt(m, code, 4, b);
}

static void mb_ip(struct msgb *m, uint8_t code, wisp_ip4_t a)
{
    uint8_t b[4];
    wisp_ip4_wr(b, a);
    mb_opt(m, code, 4, b);
}

/* BOOTREPLY header, cookie, message type. */
static void mb_head(struct msgb *m, uint8_t type, uint32_t xid, wisp_ip4_t yiaddr)
{
    memset(m, 0, sizeof(*m));
    m->b[0] = 2;
    m->b[1] = 1;
    m->b[2] = 6;
    wisp_wr32(m->b + 4, xid);
    wisp_ip4_wr(m->b + 16, yiaddr);
    memcpy(m->b + 28, tu_mac_self, 6);
    m->b[236] = 99;
    m->b[237] = 130;
    m->b[238] = 83;
    m->b[239] = 99;
    m->n = 240;
    mb_opt(m, 53, 1, &type);
}

static void mb_end(struct msgb *m)
{
    m->b[m->n++] = 255;
    if (m->n < 300) {
        m->n = 300;
    }
}

/* A complete OFFER / ACK: server id, /24 mask, router, two DNS servers,
 * the lease (t1 / t2 0 = options absent). */
static void mb_lease(struct msgb *m, uint8_t type, uint32_t xid, uint32_t lease, uint32_t t1, uint32_t t2)
{
    uint8_t dns[8];
    mb_head(m, type, xid, YI);
    mb_ip(m, 54, SRV);
    mb_ip(m, 1, wisp_ip4_prefix_mask(24));
    mb_ip(m, 3, SRV);
    wisp_ip4_wr(dns, DNS1);
    wisp_ip4_wr(dns + 4, DNS2);
    mb_opt(m, 6, 8, dns);
    mb_u32(m, 51, lease);
    if (t1 != 0) {
        mb_u32(m, 58, t1);
    }
    if (t2 != 0) {
        mb_u32(m, 59, t2);
    }
    mb_end(m);
}

static void mb_std(struct msgb *m, uint8_t type, uint32_t xid)
{
    mb_lease(m, type, xid, 3600, 0, 0);
}

/* Inject m from the server (port sport) to dst (broadcast or unicast). */
static void inject_from(struct tu_env *e, const struct msgb *m, wisp_ip4_t dst, uint16_t sport)
{
    static uint8_t f[2048];
    uint8_t *u = f + ETH + IPH;
    uint16_t sum;
    tu_eth(f, dst == WISP_IP4_BCAST ? wisp_eth_bcast : tu_mac_self, tu_mac_peer, WISP_ETHTYPE_IP4);
    tu_ip4(f + ETH, SRV, dst, WISP_IP4_PROTO_UDP, (uint16_t)(UDPH + m->n), 0x2222, 0, 64);
    wisp_wr16(u, sport);
    wisp_wr16(u + 2, 68);
    wisp_wr16(u + 4, (uint16_t)(UDPH + m->n));
    wisp_wr16(u + 6, 0);
    memcpy(u + UDPH, m->b, m->n);
    sum = (uint16_t)~wisp_chksum_add(wisp_chksum_pseudo4(SRV, dst, WISP_IP4_PROTO_UDP, (uint16_t)(UDPH + m->n)),
                                     wisp_chksum_sum(u, UDPH + m->n));
    wisp_wr16(u + 6, sum == 0 ? 0xffff : sum);
    assert_true(tu_inject(e, f, ETH + IPH + UDPH + m->n));
}

static void inject(struct tu_env *e, const struct msgb *m)
{
    inject_from(e, m, WISP_IP4_BCAST, 67);
}

/* Start, take the DISCOVER; returns its xid. */
static uint32_t fx_discover(struct fixture *f, struct sent *s)
{
    fx_start(f);
    tu_advance(f->e, 0);
    assert_true(next_dhcp(f->e, s));
    assert_int_equal(msg_type(s), 1);
    return wisp_rd32(s->m + 4);
}

/* Start and get to BOUND with the given lease; returns the xid. The
 * server's MAC is then put in the ARP cache (for unicast renewals). */
static uint32_t fx_bind(struct fixture *f, uint32_t lease, uint32_t t1, uint32_t t2)
{
    struct sent s;
    struct msgb m;
    uint32_t xid = fx_discover(f, &s);
    mb_lease(&m, 2, xid, lease, t1, t2);
    inject(f->e, &m);
    assert_true(next_dhcp(f->e, &s));
    assert_int_equal(msg_type(&s), 3);
    mb_lease(&m, 5, xid, lease, t1, t2);
    inject(f->e, &m);
    assert_int_equal(wisp_dhcp_state(&f->d), WISP_DHCP_BOUND);
    tu_arp_peer(f->e);
    tu_clear(f->e);
    return xid;
}

/* ------------------------------------------------------------ DISCOVER */

/* RFC 2131 §4.1/§4.4.1: DISCOVER from 0.0.0.0:68 to 255.255.255.255:67,
 * BOOTREQUEST, our chaddr, BROADCAST flag, cookie, type 1, padded. */
static void test_discover_bytes(void **state)
{
    struct fixture *f = fx_new(1);
    struct sent s;
    const uint8_t *v;
    uint16_t sum;
    (void)state;

    fx_discover(f, &s);
    assert_memory_equal(s.f, wisp_eth_bcast, 6);
    assert_memory_equal(s.f + 6, tu_mac_self, 6);
    assert_int_equal(wisp_chksum_sum(s.f + ETH, IPH), 0xffff);
    assert_true(wisp_ip4_rd(s.f + ETH + 12) == WISP_IP4_ANY);
    assert_true(wisp_ip4_rd(s.f + ETH + 16) == WISP_IP4_BCAST);
    sum = wisp_chksum_add(wisp_chksum_pseudo4(0, WISP_IP4_BCAST, 17, (uint16_t)(s.n - ETH - IPH)),
                          wisp_chksum_sum(s.f + ETH + IPH, (size_t)s.n - ETH - IPH));
    assert_int_equal(sum, 0xffff);
    assert_true(s.mlen >= 300);
    assert_int_equal(s.m[0], 1);
    assert_int_equal(s.m[1], 1);
    assert_int_equal(s.m[2], 6);
    assert_int_equal(s.m[3], 0);
    assert_int_equal(wisp_rd16(s.m + 10), 0x8000);
    assert_true(wisp_ip4_rd(s.m + 12) == 0 && wisp_ip4_rd(s.m + 16) == 0);
    assert_memory_equal(s.m + 28, tu_mac_self, 6);
    assert_int_equal(s.m[236], 99);
    assert_int_equal(s.m[237], 130);
    assert_int_equal(s.m[238], 83);
    assert_int_equal(s.m[239], 99);
    assert_int_equal(msg_type(&s), 1);
    assert_true(opt(&s, 55, &v) >= 7);
    assert_int_equal(opt(&s, 54, NULL), -1);
    assert_int_equal(opt(&s, 50, NULL), -1);
    assert_int_equal(wisp_dhcp_state(&f->d), WISP_DHCP_SELECTING);
    assert_true(wisp_netif_ip4_addr(&f->e->nif) == 0);
    fx_free(f);
}

/* RFC 2131 §4.4.1: the first DISCOVER waits a random delay (here within
 * [max/10, max]). */
static void test_discover_waits_start_delay(void **state)
{
    struct fixture *f = fx_new(2);
    struct sent s;
    long t;
    (void)state;

    f->cfg.init_delay_ms = 10000;
    fx_start(f);
    t = wait_dhcp(f->e, &s, 12000, 10);
    assert_true(t >= 1000 && t <= 10000);
    fx_free(f);
}

/* RFC 2131 §4.1: retransmission after 4, 8, 16, 32, 64, 64 s, each +-1 s,
 * same xid. */
static void test_discover_backoff(void **state)
{
    static const long want[] = { 4000, 8000, 16000, 32000, 64000, 64000 };
    struct fixture *f = fx_new(3);
    struct sent s;
    uint32_t xid;
    unsigned i;
    (void)state;

    xid = fx_discover(f, &s);
    for (i = 0; i < WISP_ARRAY_SIZE(want); i++) {
        long t = wait_dhcp(f->e, &s, 70000, 10);
        assert_true(t >= want[i] - 1000 && t <= want[i] + 1000);
        assert_int_equal(msg_type(&s), 1);
        assert_int_equal(wisp_rd32(s.m + 4), xid);
    }
    assert_int_equal(TU_CTR(f->e, DHCP_RETRANSMIT), WISP_ARRAY_SIZE(want));
    fx_free(f);
}

/* The base of the backoff is configurable (for tests): base 400 ms gives
 * 400 +- 100 then 800 +- 100. */
static void test_backoff_base_configurable(void **state)
{
    struct fixture *f = fx_new(4);
    struct sent s;
    long t;
    (void)state;

    f->cfg.backoff_base_ms = 400;
    fx_discover(f, &s);
    t = wait_dhcp(f->e, &s, 2000, 1);
    assert_true(t >= 300 && t <= 500);
    t = wait_dhcp(f->e, &s, 2000, 1);
    assert_true(t >= 700 && t <= 900);
    fx_free(f);
}

/* RFC 2131 §4.1: xid comes from the stack's random source: seeds differ,
 * xids differ; the same seed gives the same xid. */
static void test_xid_from_wisp_random(void **state)
{
    struct fixture *a = fx_new(10), *b = fx_new(11), *c = fx_new(10);
    struct sent s;
    uint32_t xa, xb, xc;
    (void)state;

    xa = fx_discover(a, &s);
    xb = fx_discover(b, &s);
    xc = fx_discover(c, &s);
    assert_true(xa != xb);
    assert_int_equal(xa, xc);
    fx_free(a);
    fx_free(b);
    fx_free(c);
}

/* ------------------------------------------------------------- REQUEST */

/* RFC 2131 §4.4.1: an OFFER is answered by a broadcast REQUEST with the
 * same xid and 'secs', requested IP = yiaddr, server id, ciaddr 0. */
static void test_offer_gets_request(void **state)
{
    struct fixture *f = fx_new(5);
    struct sent s, r;
    struct msgb m;
    uint32_t xid;
    (void)state;

    xid = fx_discover(f, &s);
    mb_std(&m, 2, xid);
    inject(f->e, &m);
    assert_true(next_dhcp(f->e, &r));
    assert_int_equal(msg_type(&r), 3);
    assert_memory_equal(r.f, wisp_eth_bcast, 6);
    assert_true(wisp_ip4_rd(r.f + ETH + 12) == 0 && wisp_ip4_rd(r.f + ETH + 16) == WISP_IP4_BCAST);
    assert_int_equal(wisp_rd32(r.m + 4), xid);
    assert_int_equal(wisp_rd16(r.m + 8), wisp_rd16(s.m + 8));
    assert_int_equal(wisp_rd16(r.m + 10), 0x8000);
    assert_true(wisp_ip4_rd(r.m + 12) == 0);
    assert_true(opt_ip(&r, 50) == YI);
    assert_true(opt_ip(&r, 54) == SRV);
    assert_int_equal(wisp_dhcp_state(&f->d), WISP_DHCP_REQUESTING);
    fx_free(f);
}

/* The ACK configures the interface: address, mask, router, DNS, MTU; the
 * callback says BOUND once. */
static void test_ack_configures_interface(void **state)
{
    struct fixture *f = fx_new(6);
    struct sent s;
    struct msgb m;
    uint32_t xid;
    uint8_t mtu[2];
    (void)state;

    xid = fx_discover(f, &s);
    mb_std(&m, 2, xid);
    inject(f->e, &m);
    mb_head(&m, 5, xid, YI);
    mb_ip(&m, 54, SRV);
    mb_ip(&m, 1, wisp_ip4_prefix_mask(24));
    mb_ip(&m, 3, SRV);
    mb_ip(&m, 6, DNS1);
    mb_u32(&m, 51, 3600);
    wisp_wr16(mtu, 1400);
    mb_opt(&m, 26, 2, mtu);
    mb_end(&m);
    inject(f->e, &m);
    assert_int_equal(wisp_dhcp_state(&f->d), WISP_DHCP_BOUND);
    assert_true(wisp_netif_ip4_addr(&f->e->nif) == YI);
    assert_true(wisp_netif_ip4_mask(&f->e->nif) == wisp_ip4_prefix_mask(24));
    assert_true(wisp_netif_ip4_gw(&f->e->nif) == SRV);
    assert_int_equal(f->e->nif.mtu, 1400);
    assert_int_equal(f->ev.bound, 1);
    assert_non_null(wisp_dhcp_lease(&f->d));
    assert_int_equal(wisp_dhcp_lease(&f->d)->dns_count, 1);
    assert_true(wisp_dhcp_lease(&f->d)->dns[0] == DNS1);
    assert_int_equal(wisp_dhcp_lease(&f->d)->lease_s, 3600);
    assert_int_equal(TU_CTR(f->e, DHCP_BOUND), 1);
    fx_free(f);
}

/* RFC 2131 §4.4.5: without options 58/59, T1 = 0.5 and T2 = 0.875 of the
 * lease. */
static void test_t1_t2_defaults(void **state)
{
    struct fixture *f = fx_new(7);
    (void)state;

    fx_bind(f, 1000, 0, 0);
    assert_int_equal(f->d.lease.t1_s, 500);
    assert_int_equal(f->d.lease.t2_s, 875);
    fx_free(f);
}

/* T1 / T2 that contradict the lease (T2 > lease) fall back to defaults. */
static void test_t1_t2_inconsistent_replaced(void **state)
{
    struct fixture *f = fx_new(8);
    (void)state;

    fx_bind(f, 1000, 100, 2000);
    assert_int_equal(f->d.lease.t1_s, 500);
    assert_int_equal(f->d.lease.t2_s, 875);
    fx_free(f);
}

/* A router that is not on the leased subnet is not used as gateway. */
static void test_router_off_subnet_ignored(void **state)
{
    struct fixture *f = fx_new(9);
    struct sent s;
    struct msgb m;
    uint32_t xid;
    (void)state;

    xid = fx_discover(f, &s);
    mb_std(&m, 2, xid);
    inject(f->e, &m);
    mb_head(&m, 5, xid, YI);
    mb_ip(&m, 54, SRV);
    mb_ip(&m, 1, wisp_ip4_prefix_mask(24));
    mb_ip(&m, 3, wisp_ip4(198, 19, 0, 1));
    mb_u32(&m, 51, 3600);
    mb_end(&m);
    inject(f->e, &m);
    assert_true(wisp_netif_ip4_addr(&f->e->nif) == YI);
    assert_true(wisp_netif_ip4_gw(&f->e->nif) == 0);
    fx_free(f);
}

/* Option 26 larger than the device's MTU is capped to it. */
static void test_mtu_option_capped(void **state)
{
    struct fixture *f = fx_new(12);
    struct sent s;
    struct msgb m;
    uint32_t xid;
    uint8_t mtu[2];
    (void)state;

    xid = fx_discover(f, &s);
    mb_std(&m, 2, xid);
    inject(f->e, &m);
    mb_head(&m, 5, xid, YI);
    mb_ip(&m, 54, SRV);
    mb_u32(&m, 51, 3600);
    wisp_wr16(mtu, 9000);
    mb_opt(&m, 26, 2, mtu);
    mb_end(&m);
    inject(f->e, &m);
    assert_true(wisp_netif_ip4_addr(&f->e->nif) == YI);
    assert_int_equal(f->e->nif.mtu, 1500);
    fx_free(f);
}

/* RFC 2131 §3.1 step 5: REQUESTING gives up after WISP_DHCP_REQUEST_TRIES
 * REQUESTs and discovers again. */
static void test_requesting_gives_up(void **state)
{
    struct fixture *f = fx_new(13);
    struct sent s;
    struct msgb m;
    unsigned i;
    uint32_t xid;
    (void)state;

    xid = fx_discover(f, &s);
    mb_std(&m, 2, xid);
    inject(f->e, &m);
    for (i = 0; i < WISP_DHCP_REQUEST_TRIES; i++) {
        assert_true(wait_dhcp(f->e, &s, 70000, 100) >= 0);
        assert_int_equal(msg_type(&s), 3);
    }
    assert_true(wait_dhcp(f->e, &s, 70000, 100) >= 0);
    assert_int_equal(msg_type(&s), 1);
    assert_int_equal(wisp_dhcp_state(&f->d), WISP_DHCP_SELECTING);
    assert_true(wisp_rd32(s.m + 4) != xid);
    fx_free(f);
}

/* ------------------------------------------------------------ bad input */

/* A reply with another xid is a counted drop. */
static void test_wrong_xid_dropped(void **state)
{
    struct fixture *f = fx_new(14);
    struct sent s;
    struct msgb m;
    uint32_t xid;
    (void)state;

    xid = fx_discover(f, &s);
    mb_std(&m, 2, xid + 1);
    inject(f->e, &m);
    assert_int_equal(TU_CTR(f->e, DHCP_DROP_XID), 1);
    assert_false(next_dhcp(f->e, &s));
    assert_int_equal(wisp_dhcp_state(&f->d), WISP_DHCP_SELECTING);
    fx_free(f);
}

/* A reply for another hardware address is a counted drop. */
static void test_wrong_chaddr_dropped(void **state)
{
    struct fixture *f = fx_new(15);
    struct sent s;
    struct msgb m;
    uint32_t xid;
    (void)state;

    xid = fx_discover(f, &s);
    mb_std(&m, 2, xid);
    m.b[33] ^= 0x01;
    inject(f->e, &m);
    assert_int_equal(TU_CTR(f->e, DHCP_DROP_CHADDR), 1);
    assert_false(next_dhcp(f->e, &s));
    fx_free(f);
}

/* A message shorter than the fixed header and cookie is a counted drop. */
static void test_truncated_dropped(void **state)
{
    struct fixture *f = fx_new(16);
    struct sent s;
    struct msgb m;
    uint32_t xid;
    (void)state;

    xid = fx_discover(f, &s);
    mb_std(&m, 2, xid);
    m.n = 239;
    inject(f->e, &m);
    assert_int_equal(TU_CTR(f->e, DHCP_DROP_SHORT), 1);
    assert_false(next_dhcp(f->e, &s));
    fx_free(f);
}

/* A bad magic cookie is a counted drop. */
static void test_bad_cookie_dropped(void **state)
{
    struct fixture *f = fx_new(17);
    struct sent s;
    struct msgb m;
    uint32_t xid;
    (void)state;

    xid = fx_discover(f, &s);
    mb_std(&m, 2, xid);
    m.b[239] = 98;
    inject(f->e, &m);
    assert_int_equal(TU_CTR(f->e, DHCP_DROP_BAD), 1);
    assert_false(next_dhcp(f->e, &s));
    fx_free(f);
}

/* A reply not from port 67 is a counted drop. */
static void test_wrong_source_port_dropped(void **state)
{
    struct fixture *f = fx_new(18);
    struct sent s;
    struct msgb m;
    uint32_t xid;
    (void)state;

    xid = fx_discover(f, &s);
    mb_std(&m, 2, xid);
    inject_from(f->e, &m, WISP_IP4_BCAST, 1067);
    assert_int_equal(TU_CTR(f->e, DHCP_DROP_BAD), 1);
    assert_false(next_dhcp(f->e, &s));
    fx_free(f);
}

/* A known option with a wrong length (mask of 3 bytes) is a counted drop. */
static void test_bad_option_length_dropped(void **state)
{
    struct fixture *f = fx_new(19);
    struct sent s;
    struct msgb m;
    uint32_t xid;
    uint8_t b3[3] = { 255, 255, 255 };
    (void)state;

    xid = fx_discover(f, &s);
    mb_head(&m, 2, xid, YI);
    mb_ip(&m, 54, SRV);
    mb_u32(&m, 51, 3600);
    mb_opt(&m, 1, 3, b3);
    mb_end(&m);
    inject(f->e, &m);
    assert_int_equal(TU_CTR(f->e, DHCP_DROP_OPTS), 1);
    assert_false(next_dhcp(f->e, &s));
    fx_free(f);
}

/* An option whose length runs past the end of the message is a counted
 * drop (nothing is read beyond the datagram). */
static void test_option_overrun_dropped(void **state)
{
    struct fixture *f = fx_new(20);
    struct sent s;
    struct msgb m;
    uint32_t xid;
    (void)state;

    xid = fx_discover(f, &s);
    mb_head(&m, 2, xid, YI);
    mb_ip(&m, 54, SRV);
    mb_u32(&m, 51, 3600);
    m.b[m.n++] = 6;   /* DNS ... */
    m.b[m.n++] = 200; /* ... claiming 200 bytes that are not there */
    m.b[m.n++] = 1;
    inject(f->e, &m);
    assert_int_equal(TU_CTR(f->e, DHCP_DROP_OPTS), 1);
    assert_false(next_dhcp(f->e, &s));
    fx_free(f);
}

/* RFC 2131 Table 3: an OFFER without server identifier is a counted drop. */
static void test_offer_without_server_id_dropped(void **state)
{
    struct fixture *f = fx_new(21);
    struct sent s;
    struct msgb m;
    uint32_t xid;
    (void)state;

    xid = fx_discover(f, &s);
    mb_head(&m, 2, xid, YI);
    mb_u32(&m, 51, 3600);
    mb_end(&m);
    inject(f->e, &m);
    assert_int_equal(TU_CTR(f->e, DHCP_DROP_OPTS), 1);
    assert_false(next_dhcp(f->e, &s));
    fx_free(f);
}

/* RFC 2132 §9.3: with option overload 1, the 'file' field holds options
 * (here the server id and lease time): the OFFER is accepted. */
static void test_overload_file_parsed(void **state)
{
    struct fixture *f = fx_new(22);
    struct sent s;
    struct msgb m;
    uint32_t xid;
    uint8_t ov = 1, *file;
    (void)state;

    xid = fx_discover(f, &s);
    mb_head(&m, 2, xid, YI);
    mb_opt(&m, 52, 1, &ov);
    mb_end(&m);
    file = m.b + 108;
    file[0] = 54;
    file[1] = 4;
    wisp_ip4_wr(file + 2, SRV);
    file[6] = 51;
    file[7] = 4;
    wisp_wr32(file + 8, 3600);
    file[12] = 255;
    inject(f->e, &m);
    assert_true(next_dhcp(f->e, &s));
    assert_int_equal(msg_type(&s), 3);
    assert_true(opt_ip(&s, 54) == SRV);
    fx_free(f);
}

/* Option overload inside an overloaded field is malformed: counted drop. */
static void test_overload_nested_dropped(void **state)
{
    struct fixture *f = fx_new(23);
    struct sent s;
    struct msgb m;
    uint32_t xid;
    uint8_t ov = 1, *file;
    (void)state;

    xid = fx_discover(f, &s);
    mb_head(&m, 2, xid, YI);
    mb_ip(&m, 54, SRV);
    mb_u32(&m, 51, 3600);
    mb_opt(&m, 52, 1, &ov);
    mb_end(&m);
    file = m.b + 108;
    file[0] = 52;
    file[1] = 1;
    file[2] = 2;
    file[3] = 255;
    inject(f->e, &m);
    assert_int_equal(TU_CTR(f->e, DHCP_DROP_OPTS), 1);
    assert_false(next_dhcp(f->e, &s));
    fx_free(f);
}

/* An ACK while BOUND (no exchange under way) is a counted drop. */
static void test_ack_in_bound_dropped(void **state)
{
    struct fixture *f = fx_new(24);
    struct msgb m;
    uint32_t xid;
    (void)state;

    xid = fx_bind(f, 3600, 0, 0);
    mb_std(&m, 5, xid);
    inject(f->e, &m);
    assert_int_equal(TU_CTR(f->e, DHCP_DROP_STATE), 1);
    assert_int_equal(f->ev.bound, 1);
    assert_int_equal(f->ev.renewed, 0);
    fx_free(f);
}

/* An ACK in REQUESTING from a server we did not choose is a counted drop. */
static void test_ack_from_other_server_dropped(void **state)
{
    struct fixture *f = fx_new(25);
    struct sent s;
    struct msgb m;
    uint32_t xid;
    (void)state;

    xid = fx_discover(f, &s);
    mb_std(&m, 2, xid);
    inject(f->e, &m);
    mb_head(&m, 5, xid, YI);
    mb_ip(&m, 54, wisp_ip4(198, 18, 0, 9));
    mb_u32(&m, 51, 3600);
    mb_end(&m);
    inject(f->e, &m);
    assert_int_equal(TU_CTR(f->e, DHCP_DROP_STATE), 1);
    assert_int_equal(wisp_dhcp_state(&f->d), WISP_DHCP_REQUESTING);
    assert_true(wisp_netif_ip4_addr(&f->e->nif) == 0);
    fx_free(f);
}

/* ----------------------------------------------------------------- NAK */

/* RFC 2131 §4.4.1: a NAK in REQUESTING sends the client back to INIT and
 * discovery starts again with a new xid. */
static void test_nak_in_requesting_restarts(void **state)
{
    struct fixture *f = fx_new(26);
    struct sent s;
    struct msgb m;
    uint32_t xid;
    (void)state;

    xid = fx_discover(f, &s);
    mb_std(&m, 2, xid);
    inject(f->e, &m);
    mb_head(&m, 6, xid, 0);
    mb_ip(&m, 54, SRV);
    mb_end(&m);
    inject(f->e, &m);
    assert_int_equal(TU_CTR(f->e, DHCP_NAK_RX), 1);
    assert_int_equal(wisp_dhcp_state(&f->d), WISP_DHCP_INIT);
    assert_true(next_dhcp(f->e, &s)); /* the REQUEST */
    assert_true(wait_dhcp(f->e, &s, 1000, 10) >= 0);
    assert_int_equal(msg_type(&s), 1);
    assert_true(wisp_rd32(s.m + 4) != xid);
    fx_free(f);
}

/* RFC 2131 §4.4.5: a NAK in RENEWING stops the use of the address at once:
 * the interface is unconfigured and the callback says LOST. */
static void test_nak_in_renewing_unconfigures(void **state)
{
    struct fixture *f = fx_new(27);
    struct sent s;
    struct msgb m;
    (void)state;

    fx_bind(f, 1000, 0, 0);
    assert_true(wait_dhcp(f->e, &s, 600000, 1000) >= 0);
    assert_int_equal(wisp_dhcp_state(&f->d), WISP_DHCP_RENEWING);
    mb_head(&m, 6, wisp_rd32(s.m + 4), 0);
    mb_ip(&m, 54, SRV);
    mb_end(&m);
    inject_from(f->e, &m, YI, 67);
    assert_true(wisp_netif_ip4_addr(&f->e->nif) == 0);
    assert_int_equal(f->ev.lost, 1);
    assert_int_equal(wisp_dhcp_state(&f->d), WISP_DHCP_INIT);
    fx_free(f);
}

/* ------------------------------------------------------------ lease timers */

/* RFC 2131 §4.4.5: at T1 the client unicasts a REQUEST to its server:
 * ciaddr = its address, no requested IP, no server id, no BROADCAST flag. */
static void test_renew_request_bytes(void **state)
{
    struct fixture *f = fx_new(28);
    struct sent s;
    (void)state;

    fx_bind(f, 1000, 0, 0);
    assert_true(wait_dhcp(f->e, &s, 600000, 1000) >= 0);
    assert_int_equal(msg_type(&s), 3);
    assert_memory_equal(s.f, tu_mac_peer, 6);
    assert_true(wisp_ip4_rd(s.f + ETH + 12) == YI);
    assert_true(wisp_ip4_rd(s.f + ETH + 16) == SRV);
    assert_true(wisp_ip4_rd(s.m + 12) == YI);
    assert_int_equal(wisp_rd16(s.m + 10), 0);
    assert_int_equal(opt(&s, 50, NULL), -1);
    assert_int_equal(opt(&s, 54, NULL), -1);
    fx_free(f);
}

/* T1 from option 58: the renewal starts T1 seconds after the REQUEST. */
static void test_renew_at_t1_option(void **state)
{
    struct fixture *f = fx_new(29);
    struct sent s;
    long t;
    (void)state;

    fx_bind(f, 1000, 100, 200);
    t = wait_dhcp(f->e, &s, 300000, 100);
    assert_true(t >= 99900 && t <= 100000);
    assert_int_equal(wisp_dhcp_state(&f->d), WISP_DHCP_RENEWING);
    fx_free(f);
}

/* An ACK in RENEWING extends the lease: callback RENEWED, BOUND again,
 * the next renewal T1 after the renewing REQUEST. */
static void test_ack_in_renewing_extends(void **state)
{
    struct fixture *f = fx_new(30);
    struct sent s;
    struct msgb m;
    long t;
    (void)state;

    fx_bind(f, 1000, 100, 200);
    assert_true(wait_dhcp(f->e, &s, 300000, 100) >= 0);
    tu_advance(f->e, 500);
    mb_lease(&m, 5, wisp_rd32(s.m + 4), 1000, 100, 200);
    inject_from(f->e, &m, YI, 67);
    assert_int_equal(wisp_dhcp_state(&f->d), WISP_DHCP_BOUND);
    assert_int_equal(f->ev.renewed, 1);
    assert_int_equal(TU_CTR(f->e, DHCP_RENEWED), 1);
    t = wait_dhcp(f->e, &s, 300000, 100);
    assert_true(t >= 99400 && t <= 99500);
    fx_free(f);
}

/* RFC 2131 §4.4.5: RENEWING retransmits after half the time to T2, but
 * not sooner than 60 s. T1 100 s, T2 400 s: next REQUEST at 250 s, then
 * 325 s (75 s), then 385 s (60 s minimum), then T2 at 400 s. */
static void test_renew_retransmit_interval(void **state)
{
    struct fixture *f = fx_new(31);
    struct sent s;
    (void)state;

    fx_bind(f, 1000, 100, 400);
    assert_true(wait_dhcp(f->e, &s, 200000, 100) >= 0);
    assert_int_equal(wait_dhcp(f->e, &s, 200000, 100), 150000);
    assert_int_equal(wait_dhcp(f->e, &s, 200000, 100), 75000);
    assert_int_equal(wait_dhcp(f->e, &s, 200000, 100), 60000);
    assert_int_equal(wisp_dhcp_state(&f->d), WISP_DHCP_RENEWING);
    assert_int_equal(wait_dhcp(f->e, &s, 200000, 100), 15000); /* T2: REBINDING */
    assert_int_equal(wisp_dhcp_state(&f->d), WISP_DHCP_REBINDING);
    fx_free(f);
}

/* RFC 2131 §4.4.5: at T2 the client broadcasts its REQUEST (REBINDING),
 * ciaddr still its address. */
static void test_rebind_at_t2_broadcast(void **state)
{
    struct fixture *f = fx_new(32);
    struct sent s;
    long t;
    (void)state;

    fx_bind(f, 1000, 100, 200);
    assert_true(wait_dhcp(f->e, &s, 300000, 100) >= 0); /* T1 */
    assert_int_equal(wait_dhcp(f->e, &s, 300000, 100), 60000); /* RENEWING retransmission (60 s minimum) */
    assert_int_equal(wisp_dhcp_state(&f->d), WISP_DHCP_RENEWING);
    t = wait_dhcp(f->e, &s, 300000, 100);
    assert_int_equal(t, 40000); /* T2 = 200 s */
    assert_int_equal(wisp_dhcp_state(&f->d), WISP_DHCP_REBINDING);
    assert_memory_equal(s.f, wisp_eth_bcast, 6);
    assert_true(wisp_ip4_rd(s.f + ETH + 12) == YI);
    assert_true(wisp_ip4_rd(s.f + ETH + 16) == WISP_IP4_BCAST);
    assert_true(wisp_ip4_rd(s.m + 12) == YI);
    fx_free(f);
}

/* RFC 2131 §4.4.5: on expiry the interface is unconfigured, the callback
 * says LOST, discovery starts again. */
static void test_expiry_unconfigures(void **state)
{
    struct fixture *f = fx_new(33);
    struct sent s;
    (void)state;

    fx_bind(f, 1000, 0, 0);
    tu_advance(f->e, 999000);
    assert_true(wisp_netif_ip4_addr(&f->e->nif) == YI);
    tu_advance(f->e, 1000);
    assert_true(wisp_netif_ip4_addr(&f->e->nif) == 0);
    assert_int_equal(f->ev.lost, 1);
    assert_int_equal(TU_CTR(f->e, DHCP_EXPIRED), 1);
    assert_int_equal(wisp_dhcp_state(&f->d), WISP_DHCP_SELECTING); /* start delay 0 */
    do {
        assert_true(next_dhcp(f->e, &s)); /* renewal REQUESTs, then the DISCOVER */
    } while (msg_type(&s) != 1);
    fx_free(f);
}

/* RFC 2131 §3.3: an infinite lease (0xffffffff) is never renewed. */
static void test_infinite_lease_not_renewed(void **state)
{
    struct fixture *f = fx_new(34);
    struct sent s;
    (void)state;

    fx_bind(f, 0xffffffffu, 0, 0);
    assert_false(wisp_timer_armed(&f->d.lease_tmr));
    tu_advance(f->e, 0x7fffffffu);
    assert_false(next_dhcp(f->e, &s));
    assert_int_equal(wisp_dhcp_lease_left_s(&f->d), 0xffffffffu);
    fx_free(f);
}

/* A lease longer than the 32-bit millisecond timer range (40 days) renews
 * at T1 = 20 days exactly. */
static void test_long_lease_renews_exactly(void **state)
{
    struct fixture *f = fx_new(35);
    struct sent s;
    uint32_t day = 86400000u;
    (void)state;

    fx_bind(f, 40u * 86400u, 0, 0);
    tu_advance(f->e, 10u * day);
    tu_advance(f->e, 10u * day - 1000u);
    assert_false(next_dhcp(f->e, &s));
    tu_advance(f->e, 1000u);
    assert_true(next_dhcp(f->e, &s));
    assert_int_equal(wisp_dhcp_state(&f->d), WISP_DHCP_RENEWING);
    fx_free(f);
}

/* ------------------------------------------------------ ARP check (5227) */

/* RFC 5227 §2.1.1: after the ACK, PROBE_NUM (3) probes: ARP requests with
 * sender IP 0, target IP the address, target MAC 0, broadcast, the first
 * within 1 s, 1..2 s apart; the interface has no address meanwhile. */
static void test_arp_probe_bytes(void **state)
{
    struct fixture *f = fx_new(36);
    struct sent s;
    struct msgb m;
    uint32_t xid;
    unsigned i, t = 0, last = 0;
    unsigned probes = 0;
    static const uint8_t zero[6];
    (void)state;

    f->cfg.arp_check = true;
    xid = fx_discover(f, &s);
    mb_std(&m, 2, xid);
    inject(f->e, &m);
    assert_true(next_dhcp(f->e, &s));
    mb_std(&m, 5, xid);
    inject(f->e, &m);
    assert_int_equal(wisp_dhcp_state(&f->d), WISP_DHCP_CHECKING);
    assert_true(wisp_netif_ip4_addr(&f->e->nif) == 0);
    for (i = 0; i < 6000 && probes < 3; i++) {
        tu_advance(f->e, 1);
        t++;
        if (next_arp(f->e, &s)) {
            const uint8_t *a = s.f + ETH;
            assert_memory_equal(s.f, wisp_eth_bcast, 6);
            assert_int_equal(wisp_rd16(a + 6), 1);
            assert_memory_equal(a + 8, tu_mac_self, 6);
            assert_true(wisp_ip4_rd(a + 14) == 0);
            assert_memory_equal(a + 18, zero, 6);
            assert_true(wisp_ip4_rd(a + 24) == YI);
            if (probes == 0) {
                assert_true(t <= 1000);
            } else {
                assert_true(t - last >= 1000 && t - last <= 2000);
            }
            last = t;
            probes++;
        }
    }
    assert_int_equal(probes, 3);
    assert_true(wisp_netif_ip4_addr(&f->e->nif) == 0);
    fx_free(f);
}

/* RFC 5227 §2.1.1: no answer: the address is used ANNOUNCE_WAIT (2 s)
 * after the last probe. */
static void test_arp_check_binds_after_announce_wait(void **state)
{
    struct fixture *f = fx_new(37);
    struct sent s;
    struct msgb m;
    uint32_t xid;
    unsigned probes = 0, i;
    (void)state;

    f->cfg.arp_check = true;
    xid = fx_discover(f, &s);
    mb_std(&m, 2, xid);
    inject(f->e, &m);
    mb_std(&m, 5, xid);
    inject(f->e, &m);
    for (i = 0; i < 6000 && probes < 3; i++) {
        tu_advance(f->e, 1);
        while (next_arp(f->e, &s)) {
            probes++;
        }
    }
    tu_advance(f->e, 1999);
    assert_int_equal(wisp_dhcp_state(&f->d), WISP_DHCP_CHECKING);
    tu_advance(f->e, 1);
    assert_int_equal(wisp_dhcp_state(&f->d), WISP_DHCP_BOUND);
    assert_true(wisp_netif_ip4_addr(&f->e->nif) == YI);
    assert_int_equal(f->ev.bound, 1);
    fx_free(f);
}

/* Inject an ARP packet from another host (02:..:99). */
static void inject_arp(struct tu_env *e, uint16_t op, wisp_ip4_t spa, wisp_ip4_t tpa)
{
    static const uint8_t other[6] = { 0x02, 0, 0, 0, 0, 0x99 };
    uint8_t f[60];
    uint8_t *a = f + ETH;
    memset(f, 0, sizeof(f));
    tu_eth(f, wisp_eth_bcast, other, WISP_ETHTYPE_ARP);
    wisp_wr16(a, 1);
    wisp_wr16(a + 2, WISP_ETHTYPE_IP4);
    a[4] = 6;
    a[5] = 4;
    wisp_wr16(a + 6, op);
    memcpy(a + 8, other, 6);
    wisp_ip4_wr(a + 14, spa);
    wisp_ip4_wr(a + 24, tpa);
    assert_true(tu_inject(e, f, sizeof(f)));
}

/* Get to CHECKING with the ARP check on; returns the xid. */
static uint32_t fx_checking(struct fixture *f)
{
    struct sent s;
    struct msgb m;
    uint32_t xid;
    f->cfg.arp_check = true;
    xid = fx_discover(f, &s);
    mb_std(&m, 2, xid);
    inject(f->e, &m);
    mb_std(&m, 5, xid);
    inject(f->e, &m);
    tu_clear(f->e);
    assert_int_equal(wisp_dhcp_state(&f->d), WISP_DHCP_CHECKING);
    return xid;
}

/* RFC 2131 §3.1 step 5 / RFC 5227 §2.1.1: an ARP reply from the address
 * while probing: DECLINE broadcast (requested IP, server id, ciaddr 0), the
 * callback says CONFLICT, the interface stays unconfigured. */
static void test_conflict_sends_decline(void **state)
{
    struct fixture *f = fx_new(38);
    struct sent s;
    uint32_t xid;
    (void)state;

    xid = fx_checking(f);
    tu_advance(f->e, 500);
    inject_arp(f->e, 2, YI, 0);
    tu_advance(f->e, 0);
    assert_true(next_dhcp(f->e, &s));
    assert_int_equal(msg_type(&s), 4);
    assert_memory_equal(s.f, wisp_eth_bcast, 6);
    assert_true(wisp_ip4_rd(s.f + ETH + 12) == 0);
    assert_int_equal(wisp_rd32(s.m + 4), xid);
    assert_true(wisp_ip4_rd(s.m + 12) == 0);
    assert_true(opt_ip(&s, 50) == YI);
    assert_true(opt_ip(&s, 54) == SRV);
    assert_int_equal(opt(&s, 55, NULL), -1);
    assert_int_equal(f->ev.conflict, 1);
    assert_int_equal(f->ev.bound, 0);
    assert_int_equal(TU_CTR(f->e, DHCP_DECLINE_TX), 1);
    assert_true(wisp_netif_ip4_addr(&f->e->nif) == 0);
    fx_free(f);
}

/* RFC 5227 §2.1.1: another host's probe for the same address is a
 * conflict too. */
static void test_conflict_from_other_probe(void **state)
{
    struct fixture *f = fx_new(39);
    struct sent s;
    (void)state;

    fx_checking(f);
    inject_arp(f->e, 1, 0, YI);
    tu_advance(f->e, 0);
    assert_true(next_dhcp(f->e, &s));
    assert_int_equal(msg_type(&s), 4);
    assert_int_equal(TU_CTR(f->e, DHCP_CONFLICT), 1);
    fx_free(f);
}

/* RFC 2131 §3.1 step 5: after a DECLINE, discovery restarts no sooner
 * than 10 s. */
static void test_decline_waits_before_restart(void **state)
{
    struct fixture *f = fx_new(40);
    struct sent s;
    long t;
    (void)state;

    fx_checking(f);
    inject_arp(f->e, 2, YI, 0);
    tu_advance(f->e, 0);
    assert_true(next_dhcp(f->e, &s));
    t = wait_dhcp(f->e, &s, 20000, 10);
    assert_true(t >= 10000);
    assert_int_equal(msg_type(&s), 1);
    assert_int_equal(opt(&s, 50, NULL), -1); /* the declined address is not suggested */
    fx_free(f);
}

/* ------------------------------------------------------ RELEASE, reboot */

/* RFC 2131 §4.4.6: stop with release unicasts a RELEASE to the server
 * (ciaddr ours, server id, no requested IP) and unconfigures the
 * interface. */
static void test_release_on_stop(void **state)
{
    struct fixture *f = fx_new(41);
    struct sent s;
    (void)state;

    fx_bind(f, 3600, 0, 0);
    wisp_dhcp_stop(&f->d, true);
    assert_true(next_dhcp(f->e, &s));
    assert_int_equal(msg_type(&s), 7);
    assert_memory_equal(s.f, tu_mac_peer, 6);
    assert_true(wisp_ip4_rd(s.f + ETH + 16) == SRV);
    assert_true(wisp_ip4_rd(s.m + 12) == YI);
    assert_true(opt_ip(&s, 54) == SRV);
    assert_int_equal(opt(&s, 50, NULL), -1);
    assert_true(wisp_netif_ip4_addr(&f->e->nif) == 0);
    assert_int_equal(wisp_dhcp_state(&f->d), WISP_DHCP_STOPPED);
    assert_int_equal(TU_CTR(f->e, DHCP_RELEASE_TX), 1);
    fx_free(f);
}

/* Stop without release sends nothing. */
static void test_stop_without_release_silent(void **state)
{
    struct fixture *f = fx_new(42);
    struct sent s;
    (void)state;

    fx_bind(f, 3600, 0, 0);
    wisp_dhcp_stop(&f->d, false);
    assert_false(next_dhcp(f->e, &s));
    assert_true(wisp_netif_ip4_addr(&f->e->nif) == 0);
    fx_free(f);
}

/* RFC 2131 §3.2: link down / up with a live lease: INIT-REBOOT, a
 * broadcast REQUEST with requested IP, without server id, ciaddr 0; the
 * ACK renews it. */
static void test_link_up_reboots(void **state)
{
    struct fixture *f = fx_new(43);
    struct sent s;
    struct msgb m;
    (void)state;

    fx_bind(f, 3600, 0, 0);
    wisp_netif_set_link(&f->e->nif, false);
    tu_advance(f->e, 1000);
    wisp_netif_set_link(&f->e->nif, true);
    assert_int_equal(wisp_dhcp_state(&f->d), WISP_DHCP_INIT_REBOOT);
    assert_true(wait_dhcp(f->e, &s, 1000, 10) >= 0);
    assert_int_equal(msg_type(&s), 3);
    assert_int_equal(wisp_dhcp_state(&f->d), WISP_DHCP_REBOOTING);
    assert_true(wisp_ip4_rd(s.f + ETH + 16) == WISP_IP4_BCAST);
    assert_true(wisp_ip4_rd(s.m + 12) == 0);
    assert_true(opt_ip(&s, 50) == YI);
    assert_int_equal(opt(&s, 54, NULL), -1);
    mb_std(&m, 5, wisp_rd32(s.m + 4));
    inject(f->e, &m);
    assert_int_equal(wisp_dhcp_state(&f->d), WISP_DHCP_BOUND);
    assert_int_equal(f->ev.renewed, 1);
    assert_true(wisp_netif_ip4_addr(&f->e->nif) == YI);
    fx_free(f);
}

/* RFC 2131 §3.2: a known previous address starts in INIT-REBOOT: the first
 * message is a REQUEST for it, not a DISCOVER. */
static void test_prev_addr_starts_init_reboot(void **state)
{
    struct fixture *f = fx_new(44);
    struct sent s;
    (void)state;

    f->cfg.prev_addr = YI;
    fx_start(f);
    tu_advance(f->e, 0);
    assert_true(next_dhcp(f->e, &s));
    assert_int_equal(msg_type(&s), 3);
    assert_true(opt_ip(&s, 50) == YI);
    assert_int_equal(opt(&s, 54, NULL), -1);
    assert_int_equal(wisp_rd16(s.m + 10), 0x8000);
    fx_free(f);
}

/* A NAK in REBOOTING sends the client to INIT (the address is not used). */
static void test_nak_in_rebooting(void **state)
{
    struct fixture *f = fx_new(45);
    struct sent s;
    struct msgb m;
    (void)state;

    f->cfg.prev_addr = YI;
    fx_start(f);
    tu_advance(f->e, 0);
    assert_true(next_dhcp(f->e, &s));
    mb_head(&m, 6, wisp_rd32(s.m + 4), 0);
    mb_ip(&m, 54, SRV);
    mb_end(&m);
    inject(f->e, &m);
    assert_int_equal(wisp_dhcp_state(&f->d), WISP_DHCP_INIT);
    assert_true(wisp_netif_ip4_addr(&f->e->nif) == 0);
    fx_free(f);
}

/* Host name option 12 is sent in DISCOVER when configured. */
static void test_hostname_option(void **state)
{
    struct fixture *f = fx_new(46);
    struct sent s;
    const uint8_t *v;
    (void)state;

    f->cfg.hostname = "wisp-test";
    fx_discover(f, &s);
    assert_int_equal(opt(&s, 12, &v), 9);
    assert_memory_equal(v, "wisp-test", 9);
    fx_free(f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_discover_bytes),
        cmocka_unit_test(test_discover_waits_start_delay),
        cmocka_unit_test(test_discover_backoff),
        cmocka_unit_test(test_backoff_base_configurable),
        cmocka_unit_test(test_xid_from_wisp_random),
        cmocka_unit_test(test_offer_gets_request),
        cmocka_unit_test(test_ack_configures_interface),
        cmocka_unit_test(test_t1_t2_defaults),
        cmocka_unit_test(test_t1_t2_inconsistent_replaced),
        cmocka_unit_test(test_router_off_subnet_ignored),
        cmocka_unit_test(test_mtu_option_capped),
        cmocka_unit_test(test_requesting_gives_up),
        cmocka_unit_test(test_wrong_xid_dropped),
        cmocka_unit_test(test_wrong_chaddr_dropped),
        cmocka_unit_test(test_truncated_dropped),
        cmocka_unit_test(test_bad_cookie_dropped),
        cmocka_unit_test(test_wrong_source_port_dropped),
        cmocka_unit_test(test_bad_option_length_dropped),
        cmocka_unit_test(test_option_overrun_dropped),
        cmocka_unit_test(test_offer_without_server_id_dropped),
        cmocka_unit_test(test_overload_file_parsed),
        cmocka_unit_test(test_overload_nested_dropped),
        cmocka_unit_test(test_ack_in_bound_dropped),
        cmocka_unit_test(test_ack_from_other_server_dropped),
        cmocka_unit_test(test_nak_in_requesting_restarts),
        cmocka_unit_test(test_nak_in_renewing_unconfigures),
        cmocka_unit_test(test_renew_request_bytes),
        cmocka_unit_test(test_renew_at_t1_option),
        cmocka_unit_test(test_ack_in_renewing_extends),
        cmocka_unit_test(test_renew_retransmit_interval),
        cmocka_unit_test(test_rebind_at_t2_broadcast),
        cmocka_unit_test(test_expiry_unconfigures),
        cmocka_unit_test(test_infinite_lease_not_renewed),
        cmocka_unit_test(test_long_lease_renews_exactly),
        cmocka_unit_test(test_arp_probe_bytes),
        cmocka_unit_test(test_arp_check_binds_after_announce_wait),
        cmocka_unit_test(test_conflict_sends_decline),
        cmocka_unit_test(test_conflict_from_other_probe),
        cmocka_unit_test(test_decline_waits_before_restart),
        cmocka_unit_test(test_release_on_stop),
        cmocka_unit_test(test_stop_without_release_silent),
        cmocka_unit_test(test_link_up_reboots),
        cmocka_unit_test(test_prev_addr_starts_init_reboot),
        cmocka_unit_test(test_nak_in_rebooting),
        cmocka_unit_test(test_hostname_option),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
