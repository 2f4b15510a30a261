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

#define ETH WISP_ETH_HLEN
#define IPH WISP_IP4_HLEN
#define UDPH WISP_UDP_HLEN
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

/* Addresses by role, so that the tables below can be static (0 = "not
 * checked" in expectations, "option absent" in messages). */
enum role { R_NONE, R_ZERO, R_BCAST, R_YI, R_SRV, R_MASK24, R_DNS1, R_DNS2, R_OTHER_NET, R_OTHER_SRV, R_ABSENT };

static wisp_ip4_t addr_of(enum role r)
{
    switch (r) {
    case R_BCAST:
        return WISP_IP4_BCAST;
    case R_YI:
        return YI;
    case R_SRV:
        return SRV;
    case R_MASK24:
        return wisp_ip4_prefix_mask(24);
    case R_DNS1:
        return DNS1;
    case R_DNS2:
        return DNS2;
    case R_OTHER_NET:
        return wisp_ip4(198, 19, 0, 1); /* a router off the leased subnet */
    case R_OTHER_SRV:
        return wisp_ip4(198, 18, 0, 9); /* a server we did not choose */
    default:
        return 0;
    }
}

/* The interface's IPv4 address / mask / gateway (one place to change when
 * the netif's address configuration moves). */
static wisp_ip4_t nif_addr(const struct fixture *f) { return wisp_netif_ip4_addr(&f->e->nif); }
static wisp_ip4_t nif_mask(const struct fixture *f) { return wisp_netif_ip4_mask(&f->e->nif); }
static wisp_ip4_t nif_gw(const struct fixture *f) { return wisp_netif_ip4_gw(&f->e->nif); }

/* ------------------------------------------------- client message checks */

/* What a client message must hold; 0 (R_NONE) fields are not checked.
 * For the options req_ip (50) and sid (54), R_ABSENT = the option is not
 * there. */
struct want {
    int type;                 /* option 53 */
    enum role eth_dst;        /* R_BCAST or R_SRV (the server's MAC) */
    enum role ip_src, ip_dst;
    enum role ciaddr;
    enum role req_ip, sid;
    int flags;                /* 0 not checked, else FL_BCAST / FL_NONE */
    bool xid_chk;
    uint32_t xid;
};
#define FL_BCAST 1
#define FL_NONE 2

static void expect_role(wisp_ip4_t got, enum role r)
{
    if (r != R_NONE) {
        assert_true(got == addr_of(r));
    }
}

static void expect_opt(const struct sent *s, uint8_t code, enum role r)
{
    if (r == R_ABSENT) {
        assert_int_equal(opt(s, code, NULL), -1);
    } else if (r != R_NONE) {
        assert_true(opt_ip(s, code) == addr_of(r));
    }
}

static void expect_msg(const struct sent *s, const struct want *w)
{
    assert_int_equal(msg_type(s), w->type);
    if (w->eth_dst == R_BCAST) {
        assert_memory_equal(s->f, wisp_eth_bcast, 6);
    } else if (w->eth_dst == R_SRV) {
        assert_memory_equal(s->f, tu_mac_peer, 6);
    }
    expect_role(wisp_ip4_rd(s->f + ETH + 12), w->ip_src);
    expect_role(wisp_ip4_rd(s->f + ETH + 16), w->ip_dst);
    expect_role(wisp_ip4_rd(s->m + 12), w->ciaddr);
    expect_opt(s, 50, w->req_ip);
    expect_opt(s, 54, w->sid);
    if (w->flags != 0) {
        assert_int_equal(wisp_rd16(s->m + 10), w->flags == FL_BCAST ? 0x8000 : 0);
    }
    if (w->xid_chk) {
        assert_int_equal(wisp_rd32(s->m + 4), w->xid);
    }
}

/* ---------------------------------------------------- server messages */

/* A server message by its fields; zero fields are left out. */
struct smsg {
    uint8_t type;             /* 2 OFFER, 5 ACK, 6 NAK */
    int32_t xid_delta;        /* added to the exchange's xid */
    enum role yiaddr;
    enum role sid, mask, router; /* options 54, 1, 3 */
    enum role dns[2];         /* option 6 with the non-zero ones */
    uint32_t lease, t1, t2;   /* options 51, 58, 59 */
    uint16_t mtu;             /* option 26 */
    uint8_t extra[8];         /* raw options after those */
    uint8_t extra_len;
    uint8_t file[16];         /* first bytes of 'file' (option overload) */
    bool no_end;              /* neither end option nor padding */
    uint16_t cut;             /* when non-zero: the message cut to cut bytes */
    bool bad_chaddr, bad_cookie;
    uint16_t sport;           /* source port (0 = 67) */
};

/* A server message as bytes. */
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

static void mb_ip(struct msgb *m, uint8_t code, enum role r)
{
    uint8_t b[4];
    if (r != R_NONE) {
        wisp_ip4_wr(b, addr_of(r));
        mb_opt(m, code, 4, b);
    }
}

/* BOOTREPLY header, cookie, the options of sm in a fixed order. */
static void mb_build(struct msgb *m, const struct smsg *sm, uint32_t xid)
{
    uint8_t dns[8];
    uint8_t nd = 0;
    unsigned i;
    memset(m, 0, sizeof(*m));
    m->b[0] = 2;
    m->b[1] = 1;
    m->b[2] = 6;
    wisp_wr32(m->b + 4, xid + (uint32_t)sm->xid_delta);
    wisp_ip4_wr(m->b + 16, addr_of(sm->yiaddr));
    memcpy(m->b + 28, tu_mac_self, 6);
    m->b[33] ^= sm->bad_chaddr ? 0x01 : 0;
    memcpy(m->b + 108, sm->file, sizeof(sm->file));
    m->b[236] = 99;
    m->b[237] = 130;
    m->b[238] = 83;
    m->b[239] = sm->bad_cookie ? 98 : 99;
    m->n = 240;
    mb_opt(m, 53, 1, &sm->type);
    mb_ip(m, 54, sm->sid);
    mb_ip(m, 1, sm->mask);
    mb_ip(m, 3, sm->router);
    for (i = 0; i < 2; i++) {
        if (sm->dns[i] != R_NONE) {
            wisp_ip4_wr(dns + 4 * nd++, addr_of(sm->dns[i]));
        }
    }
    if (nd > 0) {
        mb_opt(m, 6, (uint8_t)(4 * nd), dns);
    }
    if (sm->lease != 0) {
        mb_u32(m, 51, sm->lease);
    }
    if (sm->t1 != 0) {
        mb_u32(m, 58, sm->t1);
    }
    if (sm->t2 != 0) {
        mb_u32(m, 59, sm->t2);
    }
    if (sm->mtu != 0) {
        uint8_t b[2];
        wisp_wr16(b, sm->mtu);
        mb_opt(m, 26, 2, b);
    }
    memcpy(m->b + m->n, sm->extra, sm->extra_len);
    m->n += sm->extra_len;
    if (!sm->no_end) {
        m->b[m->n++] = 255;
        if (m->n < 300) {
            m->n = 300;
        }
    }
    if (sm->cut != 0) {
        m->n = sm->cut;
    }
}

/* A complete OFFER / ACK: server id, /24 mask, router, two DNS servers,
 * the lease (t1 / t2 0 = options absent). */
static struct smsg sm_lease(uint8_t type, uint32_t lease, uint32_t t1, uint32_t t2)
{
    struct smsg sm;
    memset(&sm, 0, sizeof(sm));
    sm.type = type;
    sm.yiaddr = R_YI;
    sm.sid = R_SRV;
    sm.mask = R_MASK24;
    sm.router = R_SRV;
    sm.dns[0] = R_DNS1;
    sm.dns[1] = R_DNS2;
    sm.lease = lease;
    sm.t1 = t1;
    sm.t2 = t2;
    return sm;
}

/* Send sm for exchange xid from the server to dst (broadcast or
 * unicast). */
static void send_to(struct tu_env *e, const struct smsg *sm, uint32_t xid, wisp_ip4_t dst)
{
    static uint8_t f[2048];
    struct msgb m;
    size_t n;
    mb_build(&m, sm, xid);
    n = tu_udp_frame_from(f, dst == WISP_IP4_BCAST ? wisp_eth_bcast : tu_mac_self, SRV, dst,
                          sm->sport != 0 ? sm->sport : 67, 68, m.b, (uint16_t)m.n);
    assert_true(tu_inject(e, f, n));
}

static void send_msg(struct tu_env *e, const struct smsg *sm, uint32_t xid)
{
    send_to(e, sm, xid, WISP_IP4_BCAST);
}

static void send_lease(struct tu_env *e, uint8_t type, uint32_t xid, uint32_t lease, uint32_t t1, uint32_t t2)
{
    struct smsg sm = sm_lease(type, lease, t1, t2);
    send_msg(e, &sm, xid);
}

static void send_std(struct tu_env *e, uint8_t type, uint32_t xid)
{
    send_lease(e, type, xid, 3600, 0, 0);
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
    uint32_t xid = fx_discover(f, &s);
    send_lease(f->e, 2, xid, lease, t1, t2);
    assert_true(next_dhcp(f->e, &s));
    assert_int_equal(msg_type(&s), 3);
    send_lease(f->e, 5, xid, lease, t1, t2);
    assert_int_equal(wisp_dhcp_state(&f->d), WISP_DHCP_BOUND);
    tu_arp_peer(f->e);
    tu_clear(f->e);
    return xid;
}

/* The phases a server message is injected in. */
enum phase { P_SELECTING, P_REQUESTING, P_BOUND, P_RENEWING, P_REBOOTING };

/* Bring f to phase p with nothing pending; returns the xid of the
 * exchange under way, *dst the address the server answers to, *first the
 * client's last message. */
static uint32_t fx_to(struct fixture *f, enum phase p, struct sent *first, wisp_ip4_t *dst)
{
    uint32_t xid = 0;
    *dst = WISP_IP4_BCAST;
    switch (p) {
    case P_SELECTING:
        xid = fx_discover(f, first);
        break;
    case P_REQUESTING:
        xid = fx_discover(f, first);
        send_std(f->e, 2, xid);
        assert_true(next_dhcp(f->e, first));
        assert_int_equal(msg_type(first), 3);
        break;
    case P_BOUND:
        xid = fx_bind(f, 3600, 0, 0);
        break;
    case P_RENEWING:
        fx_bind(f, 1000, 0, 0);
        assert_true(wait_dhcp(f->e, first, 600000, 1000) >= 0);
        assert_int_equal(wisp_dhcp_state(&f->d), WISP_DHCP_RENEWING);
        xid = wisp_rd32(first->m + 4);
        *dst = YI;
        break;
    case P_REBOOTING:
        f->cfg.prev_addr = YI;
        fx_start(f);
        tu_advance(f->e, 0);
        assert_true(next_dhcp(f->e, first));
        xid = wisp_rd32(first->m + 4);
        break;
    }
    tu_clear(f->e);
    return xid;
}

/* ------------------------------------------------------------ DISCOVER */

/* RFC 2131 §4.1/§4.4.1: DISCOVER from 0.0.0.0:68 to 255.255.255.255:67,
 * BOOTREQUEST, our chaddr, BROADCAST flag, cookie, type 1, padded. */
static void test_discover_bytes(void **state)
{
    static const struct want w = {
        .type = 1, .eth_dst = R_BCAST, .ip_src = R_ZERO, .ip_dst = R_BCAST, .ciaddr = R_ZERO,
        .req_ip = R_ABSENT, .sid = R_ABSENT, .flags = FL_BCAST,
    };
    struct fixture *f = fx_new(1);
    struct sent s;
    const uint8_t *v;
    uint16_t sum;
    (void)state;

    fx_discover(f, &s);
    expect_msg(&s, &w);
    assert_memory_equal(s.f + 6, tu_mac_self, 6);
    assert_int_equal(wisp_chksum_sum(s.f + ETH, IPH), 0xffff);
    sum = wisp_chksum_add(wisp_chksum_pseudo4(0, WISP_IP4_BCAST, 17, (uint16_t)(s.n - ETH - IPH)),
                          wisp_chksum_sum(s.f + ETH + IPH, (size_t)s.n - ETH - IPH));
    assert_int_equal(sum, 0xffff);
    assert_true(s.mlen >= 300);
    assert_int_equal(s.m[0], 1);
    assert_int_equal(s.m[1], 1);
    assert_int_equal(s.m[2], 6);
    assert_int_equal(s.m[3], 0);
    assert_true(wisp_ip4_rd(s.m + 16) == 0);
    assert_memory_equal(s.m + 28, tu_mac_self, 6);
    assert_int_equal(s.m[236], 99);
    assert_int_equal(s.m[237], 130);
    assert_int_equal(s.m[238], 83);
    assert_int_equal(s.m[239], 99);
    assert_true(opt(&s, 55, &v) >= 7);
    assert_int_equal(wisp_dhcp_state(&f->d), WISP_DHCP_SELECTING);
    assert_true(nif_addr(f) == 0);
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


/* ------------------------------------------ server messages, one table */

/* What must hold after a server message. */
struct outcome {
    struct want reply;        /* the client's message at once (type 0: none; xid checked against the exchange's) */
    bool restart;             /* instead: a DISCOVER with a new xid within 1 s */
    enum wisp_dhcp_state state;
    enum role ip, mask, gw;   /* the interface */
    uint16_t mtu;             /* the interface's, 0 = not checked */
    uint8_t bound, renewed, lost; /* callbacks so far */
    enum wisp_counter ctr;        /* this counter reads ctr_val */
    uint32_t ctr_val;
    uint8_t dns_count;        /* with state BOUND: the lease's DNS servers ... */
    enum role dns0;
    uint32_t lease_s;         /* ... and lease time */
};

struct reply_case {
    const char *name;
    enum phase phase;
    struct smsg msg;
    struct outcome out;
};

/* A standard OFFER, and the REQUEST that answers it (RFC 2131 §4.4.1:
 * broadcast, same xid, requested IP = yiaddr, server id, ciaddr 0). */
#define LEASE_STD .yiaddr = R_YI, .sid = R_SRV, .mask = R_MASK24, .router = R_SRV, .dns = { R_DNS1, R_DNS2 }, \
                  .lease = 3600
#define OFFER_STD .type = 2, LEASE_STD
#define WANT_REQUEST { .type = 3, .eth_dst = R_BCAST, .ip_src = R_ZERO, .ip_dst = R_BCAST, .ciaddr = R_ZERO, \
                       .req_ip = R_YI, .sid = R_SRV, .flags = FL_BCAST, .xid_chk = true }
/* A dropped message in SELECTING: counter c is 1, nothing sent. */
#define DROPPED_SEL(c) { .state = WISP_DHCP_SELECTING, .ip = R_ZERO, .ctr = WISP_CTR_##c, .ctr_val = 1 }

static const struct reply_case reply_cases[] = {
    /* RFC 2131 §4.4.1: an OFFER is answered by a broadcast REQUEST. */
    { "offer gets request", P_SELECTING, { OFFER_STD },
      { .reply = WANT_REQUEST, .state = WISP_DHCP_REQUESTING, .ip = R_ZERO, .ctr = WISP_CTR_DHCP_TX, .ctr_val = 2 } },
    /* Bad input in SELECTING: counted drops, nothing sent. */
    { "wrong xid", P_SELECTING, { OFFER_STD, .xid_delta = 1 }, DROPPED_SEL(DHCP_DROP_XID) },
    { "wrong chaddr", P_SELECTING, { OFFER_STD, .bad_chaddr = true }, DROPPED_SEL(DHCP_DROP_CHADDR) },
    { "shorter than header and cookie", P_SELECTING, { OFFER_STD, .cut = 239 }, DROPPED_SEL(DHCP_DROP_SHORT) },
    { "bad magic cookie", P_SELECTING, { OFFER_STD, .bad_cookie = true }, DROPPED_SEL(DHCP_DROP_BAD) },
    { "source port not 67", P_SELECTING, { OFFER_STD, .sport = 1067 }, DROPPED_SEL(DHCP_DROP_BAD) },
    { "mask of 3 bytes", P_SELECTING,
      { .type = 2, .yiaddr = R_YI, .sid = R_SRV, .lease = 3600, .extra = { 1, 3, 255, 255, 255 }, .extra_len = 5 },
      DROPPED_SEL(DHCP_DROP_OPTS) },
    /* nothing is read beyond the datagram: DNS claiming 200 bytes */
    { "option runs past the end", P_SELECTING,
      { .type = 2, .yiaddr = R_YI, .sid = R_SRV, .lease = 3600, .extra = { 6, 200, 1 }, .extra_len = 3, .no_end = true },
      DROPPED_SEL(DHCP_DROP_OPTS) },
    /* RFC 2131 Table 3 */
    { "offer without server id", P_SELECTING, { .type = 2, .yiaddr = R_YI, .lease = 3600 },
      DROPPED_SEL(DHCP_DROP_OPTS) },
    /* RFC 2132 §9.3: overload 1, 'file' holds the server id and lease */
    { "overloaded file parsed", P_SELECTING,
      { .type = 2, .yiaddr = R_YI, .extra = { 52, 1, 1 }, .extra_len = 3,
        .file = { 54, 4, 198, 18, 0, 1, 51, 4, 0, 0, 0x0e, 0x10, 255 } },
      { .reply = WANT_REQUEST, .state = WISP_DHCP_REQUESTING, .ip = R_ZERO, .ctr = WISP_CTR_DHCP_TX, .ctr_val = 2 } },
    { "overload inside the overloaded field", P_SELECTING,
      { .type = 2, .yiaddr = R_YI, .sid = R_SRV, .lease = 3600, .extra = { 52, 1, 1 }, .extra_len = 3,
        .file = { 52, 1, 2, 255 } },
      DROPPED_SEL(DHCP_DROP_OPTS) },

    /* The ACK configures the interface: address, mask, router, DNS, MTU;
     * the callback says BOUND once. */
    { "ack configures interface", P_REQUESTING,
      { .type = 5, .yiaddr = R_YI, .sid = R_SRV, .mask = R_MASK24, .router = R_SRV, .dns = { R_DNS1 }, .lease = 3600,
        .mtu = 1400 },
      { .state = WISP_DHCP_BOUND, .ip = R_YI, .mask = R_MASK24, .gw = R_SRV, .mtu = 1400, .bound = 1,
        .ctr = WISP_CTR_DHCP_BOUND, .ctr_val = 1, .dns_count = 1, .dns0 = R_DNS1, .lease_s = 3600 } },
    /* A router that is not on the leased subnet is not used as gateway. */
    { "router off subnet ignored", P_REQUESTING,
      { .type = 5, .yiaddr = R_YI, .sid = R_SRV, .mask = R_MASK24, .router = R_OTHER_NET, .lease = 3600 },
      { .state = WISP_DHCP_BOUND, .ip = R_YI, .mask = R_MASK24, .gw = R_ZERO, .bound = 1,
        .ctr = WISP_CTR_DHCP_BOUND, .ctr_val = 1, .lease_s = 3600 } },
    /* Option 26 larger than the device's MTU is capped to it. */
    { "mtu option capped", P_REQUESTING, { .type = 5, .yiaddr = R_YI, .sid = R_SRV, .lease = 3600, .mtu = 9000 },
      { .state = WISP_DHCP_BOUND, .ip = R_YI, .mtu = 1500, .bound = 1, .ctr = WISP_CTR_DHCP_BOUND, .ctr_val = 1,
        .lease_s = 3600 } },
    /* An ACK in REQUESTING from a server we did not choose: counted drop. */
    { "ack from other server", P_REQUESTING, { .type = 5, .yiaddr = R_YI, .sid = R_OTHER_SRV, .lease = 3600 },
      { .state = WISP_DHCP_REQUESTING, .ip = R_ZERO, .ctr = WISP_CTR_DHCP_DROP_STATE, .ctr_val = 1 } },
    /* RFC 2131 §4.4.1: a NAK in REQUESTING: back to INIT, discovery again
     * with a new xid. */
    { "nak in requesting restarts", P_REQUESTING, { .type = 6, .sid = R_SRV },
      { .restart = true, .state = WISP_DHCP_INIT, .ip = R_ZERO, .ctr = WISP_CTR_DHCP_NAK_RX, .ctr_val = 1 } },

    /* An ACK while BOUND (no exchange under way) is a counted drop. */
    { "ack in bound", P_BOUND, { .type = 5, LEASE_STD },
      { .state = WISP_DHCP_BOUND, .ip = R_YI, .bound = 1, .renewed = 0, .ctr = WISP_CTR_DHCP_DROP_STATE, .ctr_val = 1,
        .dns_count = 2, .dns0 = R_DNS1, .lease_s = 3600 } },
    /* RFC 2131 §4.4.5: a NAK in RENEWING stops the use of the address at
     * once: unconfigured, the callback says LOST. */
    { "nak in renewing unconfigures", P_RENEWING, { .type = 6, .sid = R_SRV },
      { .restart = true, .state = WISP_DHCP_INIT, .ip = R_ZERO, .bound = 1, .lost = 1, .ctr = WISP_CTR_DHCP_NAK_RX,
        .ctr_val = 1 } },
    /* A NAK in REBOOTING sends the client to INIT (the address is not used). */
    { "nak in rebooting", P_REBOOTING, { .type = 6, .sid = R_SRV },
      { .restart = true, .state = WISP_DHCP_INIT, .ip = R_ZERO, .ctr = WISP_CTR_DHCP_NAK_RX, .ctr_val = 1 } },
};

static void check_outcome(struct fixture *f, const struct outcome *o, uint32_t xid, const struct sent *first)
{
    struct sent s;
    assert_int_equal(wisp_dhcp_state(&f->d), o->state);
    expect_role(nif_addr(f), o->ip);
    expect_role(nif_mask(f), o->mask);
    expect_role(nif_gw(f), o->gw);
    if (o->mtu != 0) {
        assert_int_equal(f->e->nif.mtu, o->mtu);
    }
    assert_int_equal(f->ev.bound, o->bound);
    assert_int_equal(f->ev.renewed, o->renewed);
    assert_int_equal(f->ev.lost, o->lost);
    assert_int_equal(f->e->s->ctr[o->ctr], o->ctr_val);
    if (o->state == WISP_DHCP_BOUND) {
        const struct wisp_dhcp_lease *l = wisp_dhcp_lease(&f->d);
        assert_non_null(l);
        assert_int_equal(l->dns_count, o->dns_count);
        if (o->dns_count > 0) {
            assert_true(l->dns[0] == addr_of(o->dns0));
        }
        assert_int_equal(l->lease_s, o->lease_s);
    }
    /* then what the client sends (the restart takes time: last) */
    if (o->restart) {
        assert_true(wait_dhcp(f->e, &s, 1000, 10) >= 0);
        assert_int_equal(msg_type(&s), 1);
        assert_true(wisp_rd32(s.m + 4) != xid);
    } else if (o->reply.type != 0) {
        struct want w = o->reply;
        w.xid = xid;
        assert_true(next_dhcp(f->e, &s));
        expect_msg(&s, &w);
        if (msg_type(first) == 1) {
            assert_int_equal(wisp_rd16(s.m + 8), wisp_rd16(first->m + 8)); /* 'secs' of the DISCOVER */
        }
    } else {
        assert_false(next_dhcp(f->e, &s));
    }
}

/* Each case: a fresh client brought to its phase, one server message,
 * the outcome checked. */
static void test_server_messages(void **state)
{
    unsigned i;
    (void)state;
    for (i = 0; i < WISP_ARRAY_SIZE(reply_cases); i++) {
        const struct reply_case *c = &reply_cases[i];
        struct fixture *f = fx_new(100 + i);
        struct sent first;
        wisp_ip4_t dst;
        uint32_t xid;
        print_message("case %u: %s\n", i, c->name);
        xid = fx_to(f, c->phase, &first, &dst);
        send_to(f->e, &c->msg, xid, dst);
        check_outcome(f, &c->out, xid, &first);
        fx_free(f);
    }
}

/* RFC 2131 §4.4.5: without options 58/59 T1 = 0.5 and T2 = 0.875 of the
 * lease; T1 / T2 that contradict the lease (T2 > lease) fall back to
 * these defaults. */
static void test_t1_t2(void **state)
{
    static const struct {
        uint32_t lease, t1, t2, want_t1, want_t2;
    } cases[] = {
        { 1000, 0, 0, 500, 875 },
        { 1000, 100, 2000, 500, 875 },
        { 1000, 100, 200, 100, 200 },
    };
    unsigned i;
    (void)state;
    for (i = 0; i < WISP_ARRAY_SIZE(cases); i++) {
        struct fixture *f = fx_new(7 + i);
        fx_bind(f, cases[i].lease, cases[i].t1, cases[i].t2);
        assert_int_equal(f->d.lease.t1_s, cases[i].want_t1);
        assert_int_equal(f->d.lease.t2_s, cases[i].want_t2);
        fx_free(f);
    }
}

/* ------------------------------------------------------------ REQUEST */

/* RFC 2131 §3.1 step 5: REQUESTING gives up after WISP_DHCP_REQUEST_TRIES
 * REQUESTs and discovers again. */
static void test_requesting_gives_up(void **state)
{
    struct fixture *f = fx_new(13);
    struct sent s;
    unsigned i;
    uint32_t xid;
    (void)state;

    xid = fx_discover(f, &s);
    send_std(f->e, 2, xid);
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


/* ------------------------------------------------------------ lease timers */

/* RFC 2131 §4.4.5: at T1 the client unicasts a REQUEST to its server:
 * ciaddr = its address, no requested IP, no server id, no BROADCAST flag. */
static void test_renew_request_bytes(void **state)
{
    static const struct want w = {
        .type = 3, .eth_dst = R_SRV, .ip_src = R_YI, .ip_dst = R_SRV, .ciaddr = R_YI,
        .req_ip = R_ABSENT, .sid = R_ABSENT, .flags = FL_NONE,
    };
    struct fixture *f = fx_new(28);
    struct sent s;
    (void)state;

    fx_bind(f, 1000, 0, 0);
    assert_true(wait_dhcp(f->e, &s, 600000, 1000) >= 0);
    expect_msg(&s, &w);
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
    struct smsg sm;
    long t;
    (void)state;

    fx_bind(f, 1000, 100, 200);
    assert_true(wait_dhcp(f->e, &s, 300000, 100) >= 0);
    tu_advance(f->e, 500);
    sm = sm_lease(5, 1000, 100, 200);
    send_to(f->e, &sm, wisp_rd32(s.m + 4), YI);
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
    static const struct want w = { .type = 3, .eth_dst = R_BCAST, .ip_src = R_YI, .ip_dst = R_BCAST, .ciaddr = R_YI };
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
    expect_msg(&s, &w);
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
    assert_true(nif_addr(f) == YI);
    tu_advance(f->e, 1000);
    assert_true(nif_addr(f) == 0);
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

/* Get to CHECKING with the ARP check on (the REQUEST popped, the probes
 * left queued); returns the xid. */
static uint32_t fx_checking(struct fixture *f)
{
    struct sent s;
    uint32_t xid;
    f->cfg.arp_check = true;
    xid = fx_discover(f, &s);
    send_std(f->e, 2, xid);
    assert_true(next_dhcp(f->e, &s));
    assert_int_equal(msg_type(&s), 3);
    send_std(f->e, 5, xid);
    assert_int_equal(wisp_dhcp_state(&f->d), WISP_DHCP_CHECKING);
    assert_true(nif_addr(f) == 0);
    return xid;
}

/* RFC 5227 §2.1.1: after the ACK, PROBE_NUM (3) probes: ARP requests with
 * sender IP 0, target IP the address, target MAC 0, broadcast, the first
 * within 1 s, 1..2 s apart; the interface has no address meanwhile. */
static void test_arp_probe_bytes(void **state)
{
    struct fixture *f = fx_new(36);
    struct sent s;
    unsigned i, t = 0, last = 0;
    unsigned probes = 0;
    static const uint8_t zero[6];
    (void)state;

    fx_checking(f);
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
    assert_true(nif_addr(f) == 0);
    fx_free(f);
}

/* RFC 5227 §2.1.1: no answer: the address is used ANNOUNCE_WAIT (2 s)
 * after the last probe. */
static void test_arp_check_binds_after_announce_wait(void **state)
{
    struct fixture *f = fx_new(37);
    struct sent s;
    unsigned probes = 0, i;
    (void)state;

    fx_checking(f);
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
    assert_true(nif_addr(f) == YI);
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

/* RFC 2131 §3.1 step 5 / RFC 5227 §2.1.1: an ARP reply from the address
 * while probing: DECLINE broadcast (requested IP, server id, ciaddr 0), the
 * callback says CONFLICT, the interface stays unconfigured. */
static void test_conflict_sends_decline(void **state)
{
    struct want w = { .type = 4, .eth_dst = R_BCAST, .ip_src = R_ZERO, .ciaddr = R_ZERO, .req_ip = R_YI, .sid = R_SRV,
                      .xid_chk = true };
    struct fixture *f = fx_new(38);
    struct sent s;
    (void)state;

    w.xid = fx_checking(f);
    tu_advance(f->e, 500);
    inject_arp(f->e, 2, YI, 0);
    tu_advance(f->e, 0);
    assert_true(next_dhcp(f->e, &s));
    expect_msg(&s, &w);
    assert_int_equal(opt(&s, 55, NULL), -1);
    assert_int_equal(f->ev.conflict, 1);
    assert_int_equal(f->ev.bound, 0);
    assert_int_equal(TU_CTR(f->e, DHCP_DECLINE_TX), 1);
    assert_true(nif_addr(f) == 0);
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
    static const struct want w = { .type = 7, .eth_dst = R_SRV, .ip_dst = R_SRV, .ciaddr = R_YI, .req_ip = R_ABSENT,
                                   .sid = R_SRV };
    struct fixture *f = fx_new(41);
    struct sent s;
    (void)state;

    fx_bind(f, 3600, 0, 0);
    wisp_dhcp_stop(&f->d, true);
    assert_true(next_dhcp(f->e, &s));
    expect_msg(&s, &w);
    assert_true(nif_addr(f) == 0);
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
    assert_true(nif_addr(f) == 0);
    fx_free(f);
}

/* RFC 2131 §3.2: link down / up with a live lease: INIT-REBOOT, a
 * broadcast REQUEST with requested IP, without server id, ciaddr 0; the
 * ACK renews it. */
static void test_link_up_reboots(void **state)
{
    static const struct want w = { .type = 3, .ip_dst = R_BCAST, .ciaddr = R_ZERO, .req_ip = R_YI, .sid = R_ABSENT };
    struct fixture *f = fx_new(43);
    struct sent s;
    (void)state;

    fx_bind(f, 3600, 0, 0);
    wisp_netif_set_link(&f->e->nif, false);
    tu_advance(f->e, 1000);
    wisp_netif_set_link(&f->e->nif, true);
    assert_int_equal(wisp_dhcp_state(&f->d), WISP_DHCP_INIT_REBOOT);
    assert_true(wait_dhcp(f->e, &s, 1000, 10) >= 0);
    expect_msg(&s, &w);
    assert_int_equal(wisp_dhcp_state(&f->d), WISP_DHCP_REBOOTING);
    send_std(f->e, 5, wisp_rd32(s.m + 4));
    assert_int_equal(wisp_dhcp_state(&f->d), WISP_DHCP_BOUND);
    assert_int_equal(f->ev.renewed, 1);
    assert_true(nif_addr(f) == YI);
    fx_free(f);
}

/* RFC 2131 §3.2: a known previous address starts in INIT-REBOOT: the first
 * message is a REQUEST for it, not a DISCOVER. */
static void test_prev_addr_starts_init_reboot(void **state)
{
    static const struct want w = { .type = 3, .req_ip = R_YI, .sid = R_ABSENT, .flags = FL_BCAST };
    struct fixture *f = fx_new(44);
    struct sent s;
    (void)state;

    f->cfg.prev_addr = YI;
    fx_start(f);
    tu_advance(f->e, 0);
    assert_true(next_dhcp(f->e, &s));
    expect_msg(&s, &w);
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
        cmocka_unit_test(test_server_messages),
        cmocka_unit_test(test_t1_t2),
        cmocka_unit_test(test_requesting_gives_up),
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
        cmocka_unit_test(test_hostname_option),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
