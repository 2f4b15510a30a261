/**
 * @file test_dns.c
 * The DNS stub resolver (src/core/dns.c) on a tu_env: the queries it sends
 * are popped from the recording device and checked byte by byte, crafted
 * responses are injected as frames from the server. Covers good answers,
 * CNAME chains, every kind of malformed name (compression loop, forward
 * pointer, label > 63, name > 255), a valid answer truncated at every byte
 * offset, wrong ID / question / source port / source address, NXDOMAIN,
 * NODATA, SERVFAIL then the second server, timeouts and server rotation,
 * TC, TTL expiry and capping in the cache, ID and port randomness,
 * coalescing and cancelling.
 *
 * The last group runs getaddrinfo / gethostbyname (src/api/netdb.c) from
 * the test thread through a stack thread, against a scripted DNS server
 * on the same stack's loopback (a UDP PCB on 127.0.0.1:53).
 */
#include <stdio.h>
#include <stdlib.h>

#include "testutil.h"
#include "wisp/dns.h"
#include "wisp/netdb.h"

/* ------------------------------------------------------------- helpers */

#define SRV2 wisp_ip4(198, 18, 5, 5) /* off-link: reached through the gateway (the peer) */

struct res {
    int calls;
    wisp_err_t err;
    wisp_ip4_t addr;
    uint32_t ttl;
    char name[256];
};

static void found(void *arg, const char *name, wisp_err_t err, const wisp_ipaddr_t *addr, uint32_t ttl_s)
{
    struct res *r = arg;
    r->calls++;
    r->err = err;
    r->addr = addr != NULL ? wisp_ipaddr_ip4(addr) : 0;
    r->ttl = ttl_s;
    snprintf(r->name, sizeof r->name, "%s", name);
}

/* A query the stack sent. */
struct cap {
    wisp_ip4_t dst;
    uint16_t sport, dport, id, flags;
    uint8_t dns[600];
    size_t len;
};

/* Pop frames until a UDP datagram to port 53; false when none. */
static bool pop_query(struct tu_env *e, struct cap *c)
{
    uint8_t f[1600];
    int n;
    while ((n = tu_pop(e, f, sizeof f)) >= 0) {
        if (n < 42 || wisp_rd16(f + 12) != 0x0800 || f[23] != 17 || wisp_rd16(f + 36) != 53) {
            continue;
        }
        memset(c, 0, sizeof *c);
        c->dst = wisp_ip4_rd(f + 30);
        c->sport = wisp_rd16(f + 34);
        c->dport = wisp_rd16(f + 36);
        c->len = (size_t)wisp_rd16(f + 38) - 8u;
        assert_true(c->len <= sizeof c->dns && (size_t)n >= 42 + c->len);
        memcpy(c->dns, f + 42, c->len);
        c->id = wisp_rd16(c->dns);
        c->flags = wisp_rd16(c->dns + 2);
        return true;
    }
    return false;
}

/* Response builder. */
struct rb {
    uint8_t b[1500];
    size_t n;
};

static void rb_u8(struct rb *r, unsigned v)
{
    r->b[r->n++] = (uint8_t)v;
}
static void rb_u16(struct rb *r, unsigned v)
{
    rb_u8(r, v >> 8);
    rb_u8(r, v & 0xff);
}
static void rb_u32(struct rb *r, uint32_t v)
{
    rb_u16(r, v >> 16);
    rb_u16(r, v & 0xffff);
}
static void rb_ptr(struct rb *r, unsigned off)
{
    rb_u16(r, 0xC000u | off);
}
/* Uncompressed name (dotted text; "" = root). */
static void rb_name(struct rb *r, const char *t)
{
    while (*t != '\0') {
        const char *d = strchr(t, '.');
        size_t l = d != NULL ? (size_t)(d - t) : strlen(t);
        rb_u8(r, (unsigned)l);
        memcpy(r->b + r->n, t, l);
        r->n += l;
        t += l;
        if (*t == '.') {
            t++;
        }
    }
    rb_u8(r, 0);
}
static void rb_hdr(struct rb *r, unsigned id, unsigned flags, unsigned qd, unsigned an)
{
    r->n = 0;
    rb_u16(r, id);
    rb_u16(r, flags);
    rb_u16(r, qd);
    rb_u16(r, an);
    rb_u16(r, 0);
    rb_u16(r, 0);
}
static void rb_question(struct rb *r, const char *name, unsigned type)
{
    rb_name(r, name);
    rb_u16(r, type);
    rb_u16(r, 1);
}
/* Fixed part of a record after its owner name. */
static void rb_rr(struct rb *r, unsigned type, uint32_t ttl, unsigned rdlen)
{
    rb_u16(r, type);
    rb_u16(r, 1);
    rb_u32(r, ttl);
    rb_u16(r, rdlen);
}
static void rb_a(struct rb *r, wisp_ip4_t a)
{
    memcpy(r->b + r->n, &a, 4);
    r->n += 4;
}

/* The usual good answer: question name, one A record with a pointer to it. */
static void rb_answer(struct rb *r, unsigned id, const char *name, uint32_t ttl, wisp_ip4_t a)
{
    rb_hdr(r, id, 0x8180, 1, 1);
    rb_question(r, name, 1);
    rb_ptr(r, 12);
    rb_rr(r, 1, ttl, 4);
    rb_a(r, a);
}

/* Inject a DNS payload as a UDP datagram from src:sport to our dport. */
static void inject_from(struct tu_env *e, wisp_ip4_t src, uint16_t sport, uint16_t dport, const uint8_t *dns,
                        size_t len)
{
    uint8_t f[1600];
    size_t o = tu_eth(f, tu_mac_self, tu_mac_peer, WISP_ETHTYPE_IP4);
    o += tu_ip4(f + o, src, tu_ip_self(), WISP_IP4_PROTO_UDP, (uint16_t)(8u + len), 7, 0, 64);
    wisp_wr16(f + o, sport);
    wisp_wr16(f + o + 2, dport);
    wisp_wr16(f + o + 4, (uint16_t)(8u + len));
    wisp_wr16(f + o + 6, 0); /* no checksum (RFC 768) */
    memcpy(f + o + 8, dns, len);
    assert_true(tu_inject(e, f, o + 8 + len));
}

/* Reply to query c from the server it went to. */
static void reply(struct tu_env *e, const struct cap *c, const struct rb *r)
{
    inject_from(e, c->dst, 53, c->sport, r->b, r->n);
}

static struct tu_env *env(uint64_t seed)
{
    struct tu_env *e = tu_env_new(seed);
    tu_arp_peer(e);
    assert_int_equal(wisp_dns_set_server(e->s, 0, tu_ip_peer()), WISP_OK);
    return e;
}

/* Start resolving name: INPROGRESS, one query popped into c. */
static void start(struct tu_env *e, const char *name, struct res *r, struct cap *c)
{
    wisp_ipaddr_t a;
    memset(r, 0, sizeof *r);
    assert_int_equal(wisp_dns_gethostbyname(e->s, name, &a, found, r), WISP_ERR_INPROGRESS);
    assert_true(pop_query(e, c));
}

/* ---------------------------------------------------------------- tests */

static void test_immediate(void **state)
{
    struct tu_env *e = tu_env_new(1);
    struct res r;
    wisp_ipaddr_t a;
    (void)state;
    memset(&r, 0, sizeof r);
    assert_int_equal(wisp_dns_gethostbyname(e->s, "198.18.7.7", &a, found, &r), WISP_OK);
    assert_int_equal(wisp_ipaddr_ip4(&a), wisp_ip4(198, 18, 7, 7));
    assert_int_equal(wisp_dns_gethostbyname(e->s, "LocalHost.", &a, found, &r), WISP_OK);
    assert_int_equal(wisp_ipaddr_ip4(&a), wisp_ip4(127, 0, 0, 1));
    /* no server */
    assert_int_equal(wisp_dns_gethostbyname(e->s, "example.com", &a, found, &r), WISP_ERR_VAL);
    assert_int_equal(wisp_dns_set_server(e->s, WISP_DNS_MAX_SERVERS, tu_ip_peer()), WISP_ERR_ARG);
    assert_int_equal(wisp_dns_set_server(e->s, 0, wisp_ip4(224, 0, 0, 1)), WISP_ERR_ARG);
    assert_int_equal(wisp_dns_set_server(e->s, 0, tu_ip_peer()), WISP_OK);
    assert_int_equal(wisp_dns_get_server(e->s, 0), tu_ip_peer());
    {   /* the family-tagged form of the same table */
        wisp_ipaddr_t sa, mc = wisp_ipaddr4(wisp_ip4(224, 0, 0, 1)), b = wisp_ipaddr4(wisp_ip4(198, 18, 7, 53));
        assert_int_equal(wisp_dns_get_server_addr(e->s, 0, &sa), WISP_OK);
        assert_int_equal(wisp_ipaddr_ip4(&sa), tu_ip_peer());
        assert_int_equal(wisp_dns_set_server_addr(e->s, 1, &mc), WISP_ERR_ARG);
        assert_int_equal(wisp_dns_set_server_addr(e->s, WISP_DNS_MAX_SERVERS, &b), WISP_ERR_ARG);
        assert_int_equal(wisp_dns_get_server_addr(e->s, WISP_DNS_MAX_SERVERS, &sa), WISP_ERR_ARG);
        assert_int_equal(wisp_dns_set_server_addr(e->s, 1, &b), WISP_OK);
        assert_int_equal(wisp_dns_get_server(e->s, 1), wisp_ip4(198, 18, 7, 53));
        memset(&b, 0, sizeof b); /* any: unset */
        assert_int_equal(wisp_dns_set_server_addr(e->s, 1, &b), WISP_OK);
        assert_int_equal(wisp_dns_get_server(e->s, 1), 0);
        assert_int_equal(wisp_dns_get_server_addr(e->s, 1, &sa), WISP_OK);
        assert_true(wisp_ipaddr_is_any(&sa));
    }
    /* bad names */
    assert_int_equal(wisp_dns_gethostbyname(e->s, "", &a, found, &r), WISP_ERR_ARG);
    assert_int_equal(wisp_dns_gethostbyname(e->s, "a..b", &a, found, &r), WISP_ERR_ARG);
    assert_int_equal(wisp_dns_gethostbyname(e->s, ".a", &a, found, &r), WISP_ERR_ARG);
    assert_int_equal(wisp_dns_gethostbyname(e->s, "a b", &a, found, &r), WISP_ERR_ARG);
    assert_int_equal(wisp_dns_gethostbyname(e->s, "a.b..", &a, found, &r), WISP_ERR_ARG);
    {
        char lab[80], longname[WISP_DNS_NAME_MAX + 8];
        memset(lab, 'x', 64);
        lab[64] = '\0';
        assert_int_equal(wisp_dns_gethostbyname(e->s, lab, &a, found, &r), WISP_ERR_ARG); /* label 64 */
        memset(longname, 'a', sizeof longname);
        for (size_t i = 10; i < sizeof longname; i += 10) {
            longname[i] = '.';
        }
        longname[WISP_DNS_NAME_MAX + 1] = '\0';
        assert_int_equal(wisp_dns_gethostbyname(e->s, longname, &a, found, &r), WISP_ERR_ARG);
    }
    assert_int_equal(wisp_dns_gethostbyname(e->s, NULL, &a, found, &r), WISP_ERR_ARG);
    assert_int_equal(tu_pending(e), 0);
    assert_int_equal(r.calls, 0);
    tu_env_free(e);
}

static void test_good_answer_and_cache(void **state)
{
    struct tu_env *e = env(2);
    struct res r;
    struct cap c;
    struct rb b;
    wisp_ipaddr_t a;
    static const uint8_t qwire[] = { 9, 'w', 'i', 's', 'p', '-', 'T', 'e', 's', 't', 7, 'e', 'x', 'a', 'm', 'p', 'l',
                                     'e', 0, 0, 1, 0, 1 };
    (void)state;

    start(e, "wisp-Test.example.", &r, &c);
    /* The query: to the server, port 53, from an ephemeral port, RD set,
     * one question as asked (case kept, trailing dot dropped). */
    assert_int_equal(c.dst, tu_ip_peer());
    assert_int_equal(c.dport, 53);
    assert_true(c.sport >= WISP_EPHEMERAL_MIN);
    assert_int_equal(c.flags, 0x0100);
    assert_int_equal(wisp_rd16(c.dns + 4), 1);
    assert_int_equal(wisp_rd16(c.dns + 6), 0);
    assert_int_equal(wisp_rd16(c.dns + 8), 0);
    assert_int_equal(wisp_rd16(c.dns + 10), 0);
    assert_int_equal(c.len, 12 + sizeof qwire);
    assert_memory_equal(c.dns + 12, qwire, sizeof qwire);
    assert_int_equal(TU_CTR(e, DNS_TX), 1);
    assert_int_equal(wisp_dns_pending(e->s), 1);

    /* Answer with the question in another letter case (RFC 4343). */
    rb_answer(&b, c.id, "WISP-test.EXAMPLE", 300, wisp_ip4(198, 18, 7, 7));
    reply(e, &c, &b);
    assert_int_equal(r.calls, 1);
    assert_int_equal(r.err, WISP_OK);
    assert_int_equal(r.addr, wisp_ip4(198, 18, 7, 7));
    assert_int_equal(r.ttl, 300);
    assert_string_equal(r.name, "wisp-Test.example");
    assert_int_equal(TU_CTR(e, DNS_ANSWER), 1);
    assert_int_equal(wisp_dns_pending(e->s), 0);

    /* Cached: answered at once, nothing sent. */
    memset(&r, 0, sizeof r);
    assert_int_equal(wisp_dns_gethostbyname(e->s, "wisp-test.example", &a, found, &r), WISP_OK);
    assert_int_equal(wisp_ipaddr_ip4(&a), wisp_ip4(198, 18, 7, 7));
    assert_int_equal(TU_CTR(e, DNS_CACHE_HIT), 1);
    assert_int_equal(tu_pending(e), 0);
    assert_int_equal(r.calls, 0);
    tu_env_free(e);
}

static void test_cname_chain(void **state)
{
    struct tu_env *e = env(3);
    struct res r;
    struct cap c;
    struct rb b;
    size_t o_alias1, o_alias2;
    (void)state;

    start(e, "www.example.com", &r, &c);
    /* www -> alias1.example.com (ttl 100) -> alias2.cdn.net (ttl 50) -> A
     * (ttl 200); the A record comes first, the links out of order, names
     * compressed. */
    rb_hdr(&b, c.id, 0x8180, 1, 4);
    rb_question(&b, "www.example.com", 1);          /* "example.com" at 16 */
    /* unrelated A record for another name */
    rb_name(&b, "other.org");
    rb_rr(&b, 1, 999, 4);
    rb_a(&b, wisp_ip4(10, 0, 0, 1));
    /* A for alias2 (owner written out in full; referenced later) */
    o_alias2 = b.n;
    rb_name(&b, "alias2.cdn.net");
    rb_rr(&b, 1, 200, 4);
    rb_a(&b, wisp_ip4(198, 18, 7, 8));
    /* alias1 CNAME alias2 */
    o_alias1 = b.n;
    rb_u8(&b, 6);
    memcpy(b.b + b.n, "alias1", 6);
    b.n += 6;
    rb_ptr(&b, 16);
    rb_rr(&b, 5, 50, 2);
    rb_ptr(&b, (unsigned)o_alias2);
    /* www CNAME alias1 */
    rb_ptr(&b, 12);
    rb_rr(&b, 5, 100, 2);
    rb_ptr(&b, (unsigned)o_alias1);
    reply(e, &c, &b);
    assert_int_equal(r.calls, 1);
    assert_int_equal(r.err, WISP_OK);
    assert_int_equal(r.addr, wisp_ip4(198, 18, 7, 8));
    assert_int_equal(r.ttl, 50);
    tu_env_free(e);
}

static void test_cname_loop(void **state)
{
    struct tu_env *e = env(4);
    struct res r;
    struct cap c, c2;
    struct rb b;
    size_t o_a;
    (void)state;

    start(e, "loop.example", &r, &c);
    /* loop.example CNAME a.loop.example; a.loop.example CNAME loop.example */
    rb_hdr(&b, c.id, 0x8180, 1, 2);
    rb_question(&b, "loop.example", 1);
    rb_ptr(&b, 12);
    rb_rr(&b, 5, 60, 4);
    o_a = b.n;
    rb_u8(&b, 1);
    rb_u8(&b, 'a');
    rb_ptr(&b, 12);
    rb_ptr(&b, (unsigned)o_a);
    rb_rr(&b, 5, 60, 2);
    rb_ptr(&b, 12);
    reply(e, &c, &b);
    assert_int_equal(TU_CTR(e, DNS_CNAME_LIMIT), 1);
    assert_int_equal(r.calls, 0);
    /* A failure of that server: the next transmission goes out at once. */
    tu_advance(e, 0);
    assert_true(pop_query(e, &c2));
    rb_answer(&b, c2.id, "loop.example", 10, wisp_ip4(1, 2, 3, 4));
    reply(e, &c2, &b);
    assert_int_equal(r.calls, 1);
    assert_int_equal(r.err, WISP_OK);
    tu_env_free(e);
}

static uint32_t drops(struct tu_env *e)
{
    return TU_CTR(e, DNS_DROP_SHORT) + TU_CTR(e, DNS_DROP_MALFORMED) + TU_CTR(e, DNS_DROP_QUESTION) +
           TU_CTR(e, DNS_DROP_HDR) + TU_CTR(e, DNS_DROP_ID) + TU_CTR(e, DNS_DROP_SRC) + TU_CTR(e, DNS_DROP_LEN);
}

/* The answer section of a crafted response, as steps. */
enum step_op { S_END, S_U8, S_PTR, S_PTR_AHEAD, S_MARK, S_PTR_MARK, S_NAME, S_LABELS, S_RR, S_A };
struct step {
    uint8_t op;
    uint16_t a, b;
    const char *s;
};
#define U8(v) { S_U8, (v), 0, NULL }
#define PTR(off) { S_PTR, (off), 0, NULL }
#define PTR_AHEAD(k) { S_PTR_AHEAD, (k), 0, NULL } /* a pointer to its own offset + k */
#define MARK { S_MARK, 0, 0, NULL }                 /* remember this offset ... */
#define PTR_MARK { S_PTR_MARK, 0, 0, NULL }         /* ... and point to it */
#define NAME(t) { S_NAME, 0, 0, (t) }
#define LABELS(n, len, ch) { S_LABELS, (n), (len), (ch) } /* n labels of len octets ch */
#define RR(type, rdlen) { S_RR, (type), (rdlen), NULL }   /* class IN, TTL 60 */
#define A(v) { S_A, (v), 0, NULL }
#define ANSWER_A PTR(12), RR(1, 4), A(1)              /* an A record for the question */

/* A response by its fields; zero fields take the defaults. */
struct dresp {
    uint16_t id_xor;          /* ID = the query's ^ id_xor */
    uint16_t flags;           /* 0: 0x8180 (response, RD, RA, NOERROR) */
    uint16_t an;              /* ANCOUNT */
    const char *qname;        /* NULL: the query's name */
    uint16_t qtype;           /* 0: A */
    bool two_questions;       /* the question twice (QDCOUNT 2) */
    struct step ans[12];      /* the answer section (S_END ends it) */
    uint16_t sport;           /* 0: 53 */
    bool other_src;           /* from 198.18.0.9 instead of the server */
    uint16_t pad;             /* zero octets appended */
};

static void rb_steps(struct rb *b, const struct step *st)
{
    size_t mark = 0;
    unsigned i, k;
    for (; st->op != S_END; st++) {
        switch (st->op) {
        case S_U8:
            rb_u8(b, st->a);
            break;
        case S_PTR:
            rb_ptr(b, st->a);
            break;
        case S_PTR_AHEAD:
            rb_ptr(b, (unsigned)b->n + st->a);
            break;
        case S_MARK:
            mark = b->n;
            break;
        case S_PTR_MARK:
            rb_ptr(b, (unsigned)mark);
            break;
        case S_NAME:
            rb_name(b, st->s);
            break;
        case S_LABELS:
            for (i = 0; i < st->a; i++) {
                rb_u8(b, st->b);
                for (k = 0; k < st->b; k++) {
                    rb_u8(b, (unsigned char)st->s[0]);
                }
            }
            break;
        case S_RR:
            rb_rr(b, st->a, 60, st->b);
            break;
        case S_A:
            rb_a(b, (wisp_ip4_t)st->a);
            break;
        default:
            fail();
        }
    }
}

/* Send the response d to query c (for name). */
static void send_resp(struct tu_env *e, const struct cap *c, const char *name, const struct dresp *d)
{
    struct rb b;
    rb_hdr(&b, c->id ^ d->id_xor, d->flags != 0 ? d->flags : 0x8180u, d->two_questions ? 2 : 1, d->an);
    rb_question(&b, d->qname != NULL ? d->qname : name, d->qtype != 0 ? d->qtype : 1);
    if (d->two_questions) {
        rb_question(&b, d->qname != NULL ? d->qname : name, d->qtype != 0 ? d->qtype : 1);
    }
    rb_steps(&b, d->ans);
    memset(b.b + b.n, 0, d->pad);
    b.n += d->pad;
    inject_from(e, d->other_src ? wisp_ip4(198, 18, 0, 9) : c->dst, d->sport != 0 ? d->sport : 53, c->sport, b.b,
                b.n);
}

/* Responses to "host.example" that must be dropped, each counted by ctr;
 * the query goes on. */
static const struct bad_case {
    const char *what;
    struct dresp r;
    enum wisp_counter ctr;
} bad_cases[] = {
    /* malformed names (RFC 1035 §4.1.4, §3.1) */
    { "compression loop: the owner points to itself", { .an = 1, .ans = { PTR_AHEAD(0), RR(1, 4), A(1) } },
      WISP_CTR_DNS_DROP_MALFORMED },
    { "two-step loop through a label", { .an = 1, .ans = { MARK, U8(1), U8('y'), PTR_MARK, RR(1, 4), A(1) } },
      WISP_CTR_DNS_DROP_MALFORMED },
    { "forward pointer to a valid name",
      { .an = 1, .ans = { PTR_AHEAD(2 + 10 + 4), RR(1, 4), A(1), NAME("bad.example") } }, WISP_CTR_DNS_DROP_MALFORMED },
    { "pointer into the header", { .an = 1, .ans = { PTR(4), RR(1, 4), A(1) } }, WISP_CTR_DNS_DROP_MALFORMED },
    { "label of 64 (0x40: a reserved label type)", { .an = 1, .ans = { LABELS(1, 64, "z"), U8(0), RR(1, 4), A(1) } },
      WISP_CTR_DNS_DROP_MALFORMED },
    { "name of 4 x 63 + root = 257 > 255", { .an = 1, .ans = { LABELS(4, 63, "q"), U8(0), RR(1, 4), A(1) } },
      WISP_CTR_DNS_DROP_MALFORMED },
    /* the same length through compression: 3 x 63 here, a pointer to a
     * suffix of 2 x 63 = 321 octets (after a harmless TXT-typed record) */
    { "name over 255 through compression",
      { .an = 2, .ans = { MARK, LABELS(2, 63, "r"), U8(0), RR(16, 0), LABELS(3, 63, "s"), PTR_MARK, RR(1, 4), A(1) } },
      WISP_CTR_DNS_DROP_MALFORMED },
    { "A record with RDLENGTH 5", { .an = 1, .ans = { PTR(12), RR(1, 5), A(1), U8(0) } }, WISP_CTR_DNS_DROP_MALFORMED },
    { "RDLENGTH beyond the datagram", { .an = 1, .ans = { PTR(12), RR(16, 400), A(1) } }, WISP_CTR_DNS_DROP_MALFORMED },
    { "ANCOUNT larger than the records present", { .an = 0xFFFF, .ans = { ANSWER_A } }, WISP_CTR_DNS_DROP_MALFORMED },
    { "CNAME not ending at the end of its RDATA", { .an = 1, .ans = { PTR(12), RR(5, 3), PTR(12), U8(0) } },
      WISP_CTR_DNS_DROP_MALFORMED },
    { "pointer whose second octet is missing", { .an = 1, .ans = { U8(0xC0) } }, WISP_CTR_DNS_DROP_MALFORMED },
    /* not the answer to our question (RFC 5452 §4.3) */
    { "wrong ID", { .id_xor = 1, .an = 1, .ans = { ANSWER_A } }, WISP_CTR_DNS_DROP_ID },
    { "wrong question name (longer)", { .qname = "host.example.net", .an = 1, .ans = { ANSWER_A } },
      WISP_CTR_DNS_DROP_QUESTION },
    { "wrong question name (shorter)", { .qname = "hosT.exampl", .an = 1, .ans = { ANSWER_A } },
      WISP_CTR_DNS_DROP_QUESTION },
    { "wrong question type", { .qtype = 28 }, WISP_CTR_DNS_DROP_QUESTION },
    { "two questions", { .two_questions = true }, WISP_CTR_DNS_DROP_QUESTION },
    { "QR clear", { .flags = 0x0180, .an = 1, .ans = { ANSWER_A } }, WISP_CTR_DNS_DROP_HDR },
    { "opcode 2", { .flags = 0x9180, .an = 1, .ans = { ANSWER_A } }, WISP_CTR_DNS_DROP_HDR },
    { "wrong source port", { .sport = 5353, .an = 1, .ans = { ANSWER_A } }, WISP_CTR_DNS_DROP_SRC },
    { "wrong source address", { .other_src = true, .an = 1, .ans = { ANSWER_A } }, WISP_CTR_DNS_DROP_SRC },
    { "over 512 bytes", { .an = 1, .ans = { ANSWER_A }, .pad = 600 }, WISP_CTR_DNS_DROP_LEN },
};

/* Every bad response in turn to one query: each is dropped and counted by
 * its own counter (and no other), the query goes on; then the good answer
 * still works, and a second copy of it finds no PCB listening. */
static void test_bad_responses(void **state)
{
    struct tu_env *e = env(5);
    struct res r;
    struct cap c;
    struct rb b;
    unsigned i;
    (void)state;

    start(e, "host.example", &r, &c);
    for (i = 0; i < WISP_ARRAY_SIZE(bad_cases); i++) {
        const struct bad_case *k = &bad_cases[i];
        uint32_t before = e->s->ctr[k->ctr], all = drops(e);
        print_message("case %u: %s\n", i, k->what);
        send_resp(e, &c, "host.example", &k->r);
        assert_int_equal(e->s->ctr[k->ctr], before + 1);
        assert_int_equal(drops(e), all + 1);
        assert_int_equal(r.calls, 0);
        assert_int_equal(wisp_dns_pending(e->s), 1);
    }
    assert_int_equal(TU_CTR(e, DNS_DROP_MALFORMED), 12);
    rb_answer(&b, c.id, "host.example", 60, wisp_ip4(198, 18, 3, 3));
    reply(e, &c, &b);
    assert_int_equal(r.calls, 1);
    assert_int_equal(r.err, WISP_OK);
    assert_int_equal(r.addr, wisp_ip4(198, 18, 3, 3));
    /* A second answer after completion: no PCB listens any more. */
    reply(e, &c, &b);
    assert_int_equal(r.calls, 1);
    assert_int_equal(TU_CTR(e, UDP_DROP_NOPORT), 1);
    tu_env_free(e);
}

static void test_truncated_everywhere(void **state)
{
    struct tu_env *e = env(6);
    struct res r;
    struct cap c;
    struct rb b;
    size_t k;
    (void)state;

    start(e, "trunc.example.org", &r, &c);
    /* A valid answer with a CNAME and an A record, compressed. */
    rb_hdr(&b, c.id, 0x8180, 1, 2);
    rb_question(&b, "trunc.example.org", 1);
    rb_ptr(&b, 12);
    rb_rr(&b, 5, 30, 7);
    rb_u8(&b, 4);
    memcpy(b.b + b.n, "real", 4);
    b.n += 4;
    rb_ptr(&b, 18); /* "example.org" */
    rb_ptr(&b, (unsigned)b.n - 7);
    rb_rr(&b, 1, 30, 4);
    rb_a(&b, wisp_ip4(198, 18, 1, 2));
    for (k = 0; k < b.n; k++) {
        uint32_t before = drops(e);
        inject_from(e, c.dst, 53, c.sport, b.b, k);
        assert_int_equal(drops(e), before + 1);
        assert_int_equal(r.calls, 0);
        assert_int_equal(wisp_dns_pending(e->s), 1);
    }
    assert_int_equal(TU_CTR(e, DNS_DROP_SHORT), 12);
    reply(e, &c, &b);
    assert_int_equal(r.calls, 1);
    assert_int_equal(r.err, WISP_OK);
    assert_int_equal(r.addr, wisp_ip4(198, 18, 1, 2));
    tu_env_free(e);
}

static void test_nxdomain_nodata(void **state)
{
    struct tu_env *e = env(8);
    struct res r;
    struct cap c;
    struct rb b;
    (void)state;

    start(e, "nope.example", &r, &c);
    rb_hdr(&b, c.id, 0x8183, 1, 0);
    rb_question(&b, "nope.example", 1);
    reply(e, &c, &b);
    assert_int_equal(r.calls, 1);
    assert_int_equal(r.err, WISP_DNS_ERR_NOTFOUND);
    assert_int_equal(TU_CTR(e, DNS_NXDOMAIN), 1);
    /* not cached: asked again */
    start(e, "nope.example", &r, &c);
    /* NOERROR without an A record (an AAAA only): NODATA */
    rb_hdr(&b, c.id, 0x8180, 1, 1);
    rb_question(&b, "nope.example", 1);
    rb_ptr(&b, 12);
    rb_rr(&b, 28, 60, 16);
    memset(b.b + b.n, 0, 16);
    b.n += 16;
    reply(e, &c, &b);
    assert_int_equal(r.calls, 1);
    assert_int_equal(r.err, WISP_DNS_ERR_NOTFOUND);
    assert_int_equal(TU_CTR(e, DNS_NODATA), 1);
    tu_env_free(e);
}

static void test_servfail_then_second_server(void **state)
{
    struct tu_env *e = env(9);
    struct res r;
    struct cap c, c2;
    struct rb b;
    (void)state;

    assert_int_equal(wisp_dns_set_server(e->s, 1, SRV2), WISP_OK);
    start(e, "sf.example", &r, &c);
    assert_int_equal(c.dst, tu_ip_peer());
    rb_hdr(&b, c.id, 0x8182, 1, 0);
    rb_question(&b, "sf.example", 1);
    reply(e, &c, &b);
    assert_int_equal(TU_CTR(e, DNS_SERVFAIL), 1);
    assert_int_equal(r.calls, 0);
    tu_advance(e, 0);
    assert_true(pop_query(e, &c2));
    assert_int_equal(c2.dst, SRV2);
    assert_int_equal(TU_CTR(e, DNS_RETRANSMIT), 1);
    /* A repeat of the SERVFAIL (old ID) is dropped, so is an answer from
     * the first server now. */
    reply(e, &c, &b);
    rb_answer(&b, c2.id, "sf.example", 60, 5);
    inject_from(e, tu_ip_peer(), 53, c2.sport, b.b, b.n);
    assert_int_equal(r.calls, 0);
    rb_answer(&b, c2.id, "sf.example", 60, wisp_ip4(198, 18, 2, 2));
    reply(e, &c2, &b);
    assert_int_equal(r.calls, 1);
    assert_int_equal(r.err, WISP_OK);
    assert_int_equal(r.addr, wisp_ip4(198, 18, 2, 2));
    tu_env_free(e);
}

static void test_timeouts_rotation(void **state)
{
    struct tu_env *e = env(10);
    struct res r;
    struct cap c[WISP_DNS_MAX_RETRIES + 2];
    struct rb b;
    unsigned i;
    (void)state;

    assert_int_equal(wisp_dns_set_server(e->s, 1, SRV2), WISP_OK);
    start(e, "slow.example", &r, &c[0]);
    /* 1000 ms to server 1, 1000 ms to server 2, then 2000 ms each. */
    tu_advance(e, WISP_DNS_TIMEOUT_MS - 1);
    assert_false(pop_query(e, &c[1]));
    tu_advance(e, 1);
    assert_true(pop_query(e, &c[1]));
    assert_int_equal(c[1].dst, SRV2);
    tu_advance(e, WISP_DNS_TIMEOUT_MS);
    assert_true(pop_query(e, &c[2]));
    assert_int_equal(c[2].dst, tu_ip_peer());
    tu_advance(e, 2 * WISP_DNS_TIMEOUT_MS - 1);
    assert_false(pop_query(e, &c[3]));
    tu_advance(e, 1);
    assert_true(pop_query(e, &c[3]));
    assert_int_equal(c[3].dst, SRV2);
    for (i = 1; i < 4; i++) {
        assert_true(c[i].id != c[i - 1].id || c[i].sport != c[i - 1].sport);
    }
    /* A late answer to the first transmission is not taken. */
    rb_answer(&b, c[0].id, "slow.example", 60, 1);
    inject_from(e, tu_ip_peer(), 53, c[3].sport, b.b, b.n);
    assert_int_equal(r.calls, 0);
    tu_advance(e, 2 * WISP_DNS_TIMEOUT_MS);
    assert_int_equal(r.calls, 1);
    assert_int_equal(r.err, WISP_ERR_TIMEOUT);
    assert_int_equal(TU_CTR(e, DNS_TIMEOUT), 4);
    assert_int_equal(TU_CTR(e, DNS_TX), 4);
    assert_int_equal(TU_CTR(e, DNS_FAIL), 1);
    assert_false(pop_query(e, &c[4]));
    assert_int_equal(wisp_dns_pending(e->s), 0);
    tu_env_free(e);
}

static void test_tc_and_refused(void **state)
{
    struct tu_env *e = env(11);
    struct res r;
    struct cap c;
    struct rb b;
    unsigned i;
    (void)state;

    start(e, "big.example", &r, &c);
    for (i = 0; i <= WISP_DNS_MAX_RETRIES; i++) {
        if (i > 0) {
            tu_advance(e, 0);
            assert_true(pop_query(e, &c));
        }
        rb_answer(&b, c.id, "big.example", 60, 1);
        wisp_wr16(b.b + 2, i % 2 == 0 ? 0x8380 : 0x8185); /* TC / REFUSED */
        reply(e, &c, &b);
    }
    tu_advance(e, 0);
    assert_int_equal(r.calls, 1);
    assert_int_equal(r.err, WISP_ERR_CONN);
    assert_int_equal(TU_CTR(e, DNS_TRUNCATED), 2);
    assert_int_equal(TU_CTR(e, DNS_RCODE_ERR), 2);
    tu_env_free(e);
}

static void test_ttl_cache(void **state)
{
    struct tu_env *e = env(12);
    struct res r;
    struct cap c;
    struct rb b;
    wisp_ipaddr_t a;
    wisp_ip4_t ca;
    uint32_t ttl;
    (void)state;

    start(e, "short.example", &r, &c);
    rb_answer(&b, c.id, "short.example", 5, wisp_ip4(198, 18, 4, 4));
    reply(e, &c, &b);
    assert_int_equal(r.ttl, 5);
    tu_advance(e, 4000);
    assert_true(wisp_dns_cache_lookup(e->s, "SHORT.example", &ca, &ttl));
    assert_int_equal(ca, wisp_ip4(198, 18, 4, 4));
    assert_int_equal(ttl, 1);
    assert_int_equal(wisp_dns_gethostbyname(e->s, "short.example", &a, found, &r), WISP_OK);
    tu_advance(e, 1000);
    assert_false(wisp_dns_cache_lookup(e->s, "short.example", &ca, &ttl));
    start(e, "short.example", &r, &c); /* expired: asked again */

    /* TTL 0: not cached; top bit set: 0 (RFC 2181 §8). */
    rb_answer(&b, c.id, "short.example", 0, wisp_ip4(198, 18, 4, 5));
    reply(e, &c, &b);
    assert_int_equal(r.err, WISP_OK);
    assert_false(wisp_dns_cache_lookup(e->s, "short.example", NULL, NULL));
    start(e, "short.example", &r, &c);
    rb_answer(&b, c.id, "short.example", 0x80000001u, wisp_ip4(198, 18, 4, 5));
    reply(e, &c, &b);
    assert_int_equal(r.ttl, 0);
    assert_false(wisp_dns_cache_lookup(e->s, "short.example", NULL, NULL));
    /* huge TTL: capped */
    start(e, "short.example", &r, &c);
    rb_answer(&b, c.id, "short.example", 0x7fffffffu, wisp_ip4(198, 18, 4, 6));
    reply(e, &c, &b);
    assert_int_equal(r.ttl, WISP_DNS_MAX_TTL_S);
    assert_true(wisp_dns_cache_lookup(e->s, "short.example", NULL, &ttl));
    assert_int_equal(ttl, WISP_DNS_MAX_TTL_S);
    tu_env_free(e);
}

static void test_cache_lru(void **state)
{
    struct tu_env *e = env(13);
    struct res r;
    struct cap c;
    struct rb b;
    wisp_ipaddr_t a;
    char name[32];
    unsigned i;
    (void)state;

    for (i = 0; i < WISP_DNS_CACHE_SIZE + 1; i++) {
        snprintf(name, sizeof name, "n%u.example", i);
        start(e, name, &r, &c);
        rb_answer(&b, c.id, name, 600, wisp_ip4(198, 18, 6, (uint8_t)i));
        reply(e, &c, &b);
        assert_int_equal(r.err, WISP_OK);
        tu_advance(e, 10);
        if (i == 0) {
            continue;
        }
        /* keep n0 fresh: it is used after every insertion */
        assert_int_equal(wisp_dns_gethostbyname(e->s, "n0.example", &a, found, &r), WISP_OK);
    }
    /* n1 was the least recently used: evicted; n0 stayed. */
    assert_int_equal(TU_CTR(e, DNS_CACHE_EVICT), 1);
    assert_true(wisp_dns_cache_lookup(e->s, "n0.example", NULL, NULL));
    assert_false(wisp_dns_cache_lookup(e->s, "n1.example", NULL, NULL));
    wisp_dns_cache_flush(e->s);
    assert_false(wisp_dns_cache_lookup(e->s, "n0.example", NULL, NULL));
    tu_env_free(e);
}

static void test_id_port_random(void **state)
{
    struct tu_env *e = env(14);
    struct res r;
    struct cap c;
    struct rb b;
    uint16_t ids[64], ports[64];
    unsigned i, j, dup_id = 0, dup_port = 0, seq = 0;
    char name[32];
    (void)state;

    for (i = 0; i < 64; i++) {
        snprintf(name, sizeof name, "r%u.example", i);
        start(e, name, &r, &c);
        ids[i] = c.id;
        ports[i] = c.sport;
        assert_true(c.sport >= WISP_EPHEMERAL_MIN && c.sport <= WISP_EPHEMERAL_MAX);
        rb_hdr(&b, c.id, 0x8183, 1, 0);
        rb_question(&b, name, 1);
        reply(e, &c, &b);
        assert_int_equal(r.calls, 1);
    }
    for (i = 0; i < 64; i++) {
        for (j = 0; j < i; j++) {
            dup_id += ids[i] == ids[j];
            dup_port += ports[i] == ports[j];
        }
        if (i > 0 && (uint16_t)(ports[i] - ports[i - 1]) < 16) {
            seq++;
        }
    }
    /* 64 draws from 2^16 IDs / 2^14 ports: a few collisions at most. */
    assert_true(dup_id <= 2);
    assert_true(dup_port <= 3);
    assert_true(seq <= 2);
    tu_env_free(e);
}

static void test_coalesce_cancel(void **state)
{
    struct tu_env *e = env(15);
    struct res r1, r2, r3;
    struct cap c;
    struct rb b;
    wisp_ipaddr_t a;
    unsigned pools;
    (void)state;

    pools = wisp_stack_pools_in_use(e->s);
    start(e, "same.example", &r1, &c);
    memset(&r2, 0, sizeof r2);
    memset(&r3, 0, sizeof r3);
    assert_int_equal(wisp_dns_gethostbyname(e->s, "SAME.example.", &a, found, &r2), WISP_ERR_INPROGRESS);
    assert_int_equal(wisp_dns_gethostbyname(e->s, "same.example", &a, found, &r3), WISP_ERR_INPROGRESS);
    assert_int_equal(tu_pending(e), 0); /* joined: no second query */
    assert_int_equal(wisp_dns_pending(e->s), 1);
    assert_int_equal(wisp_dns_cancel(e->s, found, &r3), 1);
    rb_answer(&b, c.id, "same.example", 60, wisp_ip4(198, 18, 8, 8));
    reply(e, &c, &b);
    assert_int_equal(r1.calls, 1);
    assert_int_equal(r2.calls, 1);
    assert_int_equal(r3.calls, 0);
    assert_int_equal(r2.addr, wisp_ip4(198, 18, 8, 8));
    assert_int_equal(TU_CTR(e, DNS_TX), 1);

    /* Cancelling every waiter stops the query and frees its PCB. */
    start(e, "gone.example", &r1, &c);
    assert_int_equal(wisp_stack_pools_in_use(e->s), pools + 1);
    assert_int_equal(wisp_dns_cancel(e->s, found, &r1), 1);
    assert_int_equal(wisp_dns_pending(e->s), 0);
    assert_int_equal(wisp_stack_pools_in_use(e->s), pools);
    tu_advance(e, 10 * WISP_DNS_TIMEOUT_MS);
    assert_int_equal(r1.calls, 0);
    assert_int_equal(tu_pending(e), 0);

    /* Slots run out: WISP_ERR_MEM. */
    {
        struct res rr[WISP_DNS_MAX_QUERIES + 1];
        char name[32];
        unsigned i;
        for (i = 0; i < WISP_DNS_MAX_QUERIES; i++) {
            snprintf(name, sizeof name, "q%u.example", i);
            memset(&rr[i], 0, sizeof rr[i]);
            assert_int_equal(wisp_dns_gethostbyname(e->s, name, &a, found, &rr[i]), WISP_ERR_INPROGRESS);
        }
        assert_int_equal(wisp_dns_gethostbyname(e->s, "more.example", &a, found, &rr[i]), WISP_ERR_MEM);
        /* Deinit (in tu_env_free) ends them with ABRT. */
        wisp_dns_deinit(e->s);
        for (i = 0; i < WISP_DNS_MAX_QUERIES; i++) {
            assert_int_equal(rr[i].calls, 1);
            assert_int_equal(rr[i].err, WISP_ERR_ABRT);
        }
    }
    tu_env_free(e);
}

/* A callback that asks again from inside the callback. */
struct again {
    struct tu_env *e;
    int calls;
    wisp_err_t inner;
    wisp_ipaddr_t a;
};

static void found_again(void *arg, const char *name, wisp_err_t err, const wisp_ipaddr_t *addr, uint32_t ttl_s)
{
    struct again *g = arg;
    (void)addr;
    (void)ttl_s;
    (void)err;
    g->calls++;
    if (g->calls == 1) {
        g->inner = wisp_dns_gethostbyname(g->e->s, name, &g->a, found_again, g);
    }
}

static void test_reentrant_callback(void **state)
{
    struct tu_env *e = env(16);
    struct again g;
    struct cap c;
    struct rb b;
    (void)state;
    memset(&g, 0, sizeof g);
    g.e = e;
    assert_int_equal(wisp_dns_gethostbyname(e->s, "re.example", &g.a, found_again, &g), WISP_ERR_INPROGRESS);
    assert_true(pop_query(e, &c));
    rb_answer(&b, c.id, "re.example", 60, wisp_ip4(198, 18, 1, 1));
    reply(e, &c, &b);
    assert_int_equal(g.calls, 1);
    assert_int_equal(g.inner, WISP_OK); /* cached before the callbacks ran */
    assert_int_equal(wisp_ipaddr_ip4(&g.a), wisp_ip4(198, 18, 1, 1));
    tu_env_free(e);
}

/* ------------------------------------ getaddrinfo through the stack thread */

#include "wisp/tcpip.h"

static uint32_t real_clock(void *ctx)
{
    (void)ctx;
    return wisp_sys_now_ms();
}

/* The scripted server on 127.0.0.1:53 (runs on the stack thread). */
struct srv {
    struct wisp_udp_pcb *pcb;
    unsigned queries;
};

static void srv_recv(void *arg, struct wisp_udp_pcb *pcb, struct wisp_pbuf *p, const wisp_ipaddr_t *src,
                     uint16_t port, const struct wisp_ip_info *ip)
{
    struct srv *sv = arg;
    uint8_t q[512], out[600];
    uint16_t n = wisp_pbuf_copy_out(p, q, sizeof q, 0);
    size_t qend = 12, o;
    struct wisp_pbuf *r;
    char first[64];
    unsigned rcode = 0, an = 0;
    (void)ip;
    wisp_pbuf_free(p);
    sv->queries++;
    if (n < 17) {
        return;
    }
    while (qend < n && q[qend] != 0) {
        qend += q[qend] + 1u;
    }
    qend += 5; /* root + type + class */
    memcpy(first, q + 13, q[12] < sizeof first ? q[12] : sizeof first - 1);
    first[q[12] < sizeof first ? q[12] : sizeof first - 1] = '\0';
    if (strcmp(first, "host") == 0) {
        an = 1;
    } else if (strcmp(first, "fail") == 0) {
        rcode = 2;
    } else if (strcmp(first, "refused") == 0) {
        rcode = 5;
    } else {
        rcode = 3;
    }
    memcpy(out, q, qend);
    wisp_wr16(out + 2, (uint16_t)(0x8180u | rcode));
    wisp_wr16(out + 6, (uint16_t)an);
    o = qend;
    if (an) {
        static const uint8_t rr[] = { 0xC0, 12, 0, 1, 0, 1, 0, 0, 0, 60, 0, 4, 198, 18, 7, 7 };
        memcpy(out + o, rr, sizeof rr);
        o += sizeof rr;
    }
    r = wisp_pbuf_alloc(pcb->stack, WISP_LAYER_TRANSPORT, (uint16_t)o, WISP_PBUF_RAM);
    if (r != NULL) {
        memcpy(r->payload, out, o);
        (void)wisp_udp_sendto(pcb, r, src, port);
        wisp_pbuf_free(r);
    }
}

struct tenv {
    struct tu_env *e;
    struct wisp_tcpip *ctx;
    struct wisp_netdb *db;
    struct srv sv;
};

static wisp_err_t srv_start(struct wisp_stack *s, void *arg)
{
    struct srv *sv = arg;
    wisp_ipaddr_t lo = wisp_ipaddr4(wisp_ip4(127, 0, 0, 1));
    sv->pcb = wisp_udp_new(s);
    if (sv->pcb == NULL || wisp_udp_bind(sv->pcb, &lo, 53) != WISP_OK) {
        return WISP_ERR_MEM;
    }
    wisp_udp_recv(sv->pcb, srv_recv, sv);
    return wisp_dns_set_server(s, 0, wisp_ip4(127, 0, 0, 1));
}

static wisp_err_t srv_stop(struct wisp_stack *s, void *arg)
{
    struct srv *sv = arg;
    (void)s;
    wisp_udp_remove(sv->pcb);
    return WISP_OK;
}

static void tenv_start(struct tenv *t)
{
    memset(t, 0, sizeof *t);
    assert_int_equal(wisp_sys_init(), WISP_OK);
    t->e = tu_env_new(21);
    t->e->s->cfg.now_ms = real_clock;
    t->e->s->cfg.clock_ctx = NULL;
    (void)wisp_now(t->e->s);
    t->ctx = calloc(1, sizeof *t->ctx);
    t->db = calloc(1, sizeof *t->db);
    assert_non_null(t->ctx);
    assert_non_null(t->db);
    assert_int_equal(wisp_tcpip_start(t->ctx, t->e->s, NULL), WISP_OK);
    assert_int_equal(wisp_tcpip_call(t->ctx, srv_start, &t->sv), WISP_OK);
    assert_int_equal(wisp_netdb_init(t->db, t->ctx), WISP_OK);
}

static void tenv_stop(struct tenv *t)
{
    assert_int_equal(wisp_netdb_ai_in_use(), 0);
    assert_int_equal(wisp_netdb_deinit(), 0);
    assert_int_equal(wisp_tcpip_call(t->ctx, srv_stop, &t->sv), WISP_OK);
    wisp_tcpip_stop(t->ctx);
    free(t->ctx);
    free(t->db);
    tu_env_free(t->e);
}

static void test_getaddrinfo(void **state)
{
    struct tenv t;
    struct wisp_addrinfo hints, *res, *res2, *res3;
    const struct wisp_sockaddr_in *sin;
    (void)state;
    tenv_start(&t);

    /* numeric host and service: one TCP and one UDP record */
    assert_int_equal(wisp_getaddrinfo("198.18.0.5", "80", NULL, &res), 0);
    assert_non_null(res);
    assert_int_equal(res->ai_family, WISP_AF_INET);
    assert_int_equal(res->ai_socktype, WISP_SOCK_STREAM);
    assert_int_equal(res->ai_protocol, WISP_IPPROTO_TCP);
    assert_int_equal(res->ai_addrlen, sizeof(struct wisp_sockaddr_in));
    sin = (const struct wisp_sockaddr_in *)(const void *)res->ai_addr;
    assert_int_equal(sin->sin_family, WISP_AF_INET);
    assert_int_equal(sin->sin_port, wisp_htons(80));
    assert_int_equal(sin->sin_addr.s_addr, wisp_ip4(198, 18, 0, 5));
    assert_non_null(res->ai_next);
    assert_int_equal(res->ai_next->ai_socktype, WISP_SOCK_DGRAM);
    assert_null(res->ai_next->ai_next);
    assert_int_equal(wisp_netdb_ai_in_use(), 2);
    wisp_freeaddrinfo(res);
    assert_int_equal(wisp_netdb_ai_in_use(), 0);
    assert_int_equal(t.sv.queries, 0);

    /* passive / loopback, socktype given */
    memset(&hints, 0, sizeof hints);
    hints.ai_flags = WISP_AI_PASSIVE;
    hints.ai_socktype = WISP_SOCK_DGRAM;
    assert_int_equal(wisp_getaddrinfo(NULL, "7", &hints, &res), 0);
    sin = (const struct wisp_sockaddr_in *)(const void *)res->ai_addr;
    assert_int_equal(sin->sin_addr.s_addr, 0);
    assert_int_equal(res->ai_protocol, WISP_IPPROTO_UDP);
    assert_null(res->ai_next);
    wisp_freeaddrinfo(res);
    hints.ai_flags = 0;
    assert_int_equal(wisp_getaddrinfo(NULL, "7", &hints, &res), 0);
    sin = (const struct wisp_sockaddr_in *)(const void *)res->ai_addr;
    assert_int_equal(sin->sin_addr.s_addr, wisp_ip4(127, 0, 0, 1));
    wisp_freeaddrinfo(res);

    /* protocol alone picks the socket type; a raw socket keeps its protocol */
    memset(&hints, 0, sizeof hints);
    hints.ai_protocol = WISP_IPPROTO_UDP;
    assert_int_equal(wisp_getaddrinfo("1.2.3.4", NULL, &hints, &res), 0);
    assert_int_equal(res->ai_socktype, WISP_SOCK_DGRAM);
    assert_int_equal(res->ai_protocol, WISP_IPPROTO_UDP);
    assert_null(res->ai_next);
    wisp_freeaddrinfo(res);
    hints.ai_protocol = WISP_IPPROTO_TCP;
    assert_int_equal(wisp_getaddrinfo("1.2.3.4", NULL, &hints, &res), 0);
    assert_int_equal(res->ai_socktype, WISP_SOCK_STREAM);
    assert_null(res->ai_next);
    wisp_freeaddrinfo(res);
    hints.ai_socktype = WISP_SOCK_RAW;
    hints.ai_protocol = 1;
    assert_int_equal(wisp_getaddrinfo("1.2.3.4", NULL, &hints, &res), 0);
    assert_int_equal(res->ai_socktype, WISP_SOCK_RAW);
    assert_int_equal(res->ai_protocol, 1);
    assert_null(res->ai_next);
    wisp_freeaddrinfo(res);
    hints.ai_socktype = WISP_SOCK_STREAM;
    hints.ai_protocol = WISP_IPPROTO_UDP;
    assert_int_equal(wisp_getaddrinfo("1.2.3.4", NULL, &hints, &res), WISP_EAI_SOCKTYPE);
    assert_int_equal(wisp_netdb_ai_in_use(), 0);

    /* argument errors */
    memset(&hints, 0, sizeof hints);
    hints.ai_flags = WISP_AI_NUMERICHOST;
    assert_int_equal(wisp_getaddrinfo("host.wisp-test", NULL, &hints, &res), WISP_EAI_NONAME);
    assert_int_equal(wisp_getaddrinfo("1.2.3.4", "http", NULL, &res), WISP_EAI_SERVICE);
    hints.ai_flags = WISP_AI_NUMERICSERV;
    assert_int_equal(wisp_getaddrinfo("1.2.3.4", "http", &hints, &res), WISP_EAI_NONAME);
    assert_int_equal(wisp_getaddrinfo("1.2.3.4", "65536", NULL, &res), WISP_EAI_SERVICE);
    assert_int_equal(wisp_getaddrinfo(NULL, NULL, NULL, &res), WISP_EAI_NONAME);
    memset(&hints, 0, sizeof hints);
    hints.ai_family = WISP_AF_INET6_SOCK;
    assert_int_equal(wisp_getaddrinfo("1.2.3.4", NULL, &hints, &res), WISP_EAI_FAMILY);
    memset(&hints, 0, sizeof hints);
    hints.ai_socktype = 99;
    assert_int_equal(wisp_getaddrinfo("1.2.3.4", NULL, &hints, &res), WISP_EAI_SOCKTYPE);
    memset(&hints, 0, sizeof hints);
    hints.ai_flags = 0x4000;
    assert_int_equal(wisp_getaddrinfo("1.2.3.4", NULL, &hints, &res), WISP_EAI_BADFLAGS);
    assert_int_equal(t.sv.queries, 0);

    /* through the resolver and the scripted server */
    memset(&hints, 0, sizeof hints);
    hints.ai_flags = WISP_AI_CANONNAME;
    hints.ai_family = WISP_AF_INET;
    assert_int_equal(wisp_getaddrinfo("host.wisp-test", "53", &hints, &res), 0);
    sin = (const struct wisp_sockaddr_in *)(const void *)res->ai_addr;
    assert_int_equal(sin->sin_addr.s_addr, wisp_ip4(198, 18, 7, 7));
    assert_int_equal(sin->sin_port, wisp_htons(53));
    assert_string_equal(res->ai_canonname, "host.wisp-test");
    assert_int_equal(t.sv.queries, 1);
    /* second time from the cache; pool use adds up, then runs out */
    assert_int_equal(wisp_getaddrinfo("HOST.wisp-test", NULL, NULL, &res2), 0);
    assert_int_equal(t.sv.queries, 1);
    assert_int_equal(wisp_netdb_ai_in_use(), 4);
    assert_int_equal(wisp_getaddrinfo("198.18.0.1", NULL, NULL, &res3), WISP_EAI_MEMORY);
    assert_int_equal(wisp_netdb_ai_in_use(), 4);
    wisp_freeaddrinfo(res2);
    wisp_freeaddrinfo(res);
    assert_int_equal(wisp_netdb_ai_in_use(), 0);

    assert_int_equal(wisp_getaddrinfo("missing.wisp-test", NULL, NULL, &res), WISP_EAI_NONAME);
    assert_int_equal(wisp_getaddrinfo("fail.wisp-test", NULL, NULL, &res), WISP_EAI_AGAIN);
    assert_int_equal(wisp_getaddrinfo("refused.wisp-test", NULL, NULL, &res), WISP_EAI_FAIL);
    assert_int_equal(wisp_getaddrinfo("bad..name", NULL, NULL, &res), WISP_EAI_NONAME);
    assert_int_equal(t.sv.queries, 1 + 1 + 2 * (WISP_DNS_MAX_RETRIES + 1));
    assert_string_equal(wisp_gai_strerror(WISP_EAI_NONAME), "Name or service not known");
    assert_int_equal(wisp_netdb_ai_in_use(), 0);
    tenv_stop(&t);
}

static void test_gethostbyname(void **state)
{
    struct tenv t;
    struct wisp_hostent *h, he;
    char buf[128];
    int herr = -1;
    wisp_in_addr_t a;
    (void)state;
    tenv_start(&t);

    h = wisp_gethostbyname("host.wisp-test");
    assert_non_null(h);
    assert_string_equal(h->h_name, "host.wisp-test");
    assert_int_equal(h->h_addrtype, WISP_AF_INET);
    assert_int_equal(h->h_length, 4);
    memcpy(&a, h->h_addr_list[0], 4);
    assert_int_equal(a, wisp_ip4(198, 18, 7, 7));
    assert_null(h->h_addr_list[1]);
    assert_null(h->h_aliases[0]);
    assert_null(wisp_gethostbyname("missing.wisp-test"));
    assert_int_equal(wisp_h_errno(), WISP_HOST_NOT_FOUND);

    assert_int_equal(wisp_gethostbyname_r("host.wisp-test", &he, buf + 1, sizeof buf - 1, &h, &herr), 0);
    assert_ptr_equal(h, &he);
    assert_int_equal(herr, 0);
    memcpy(&a, he.h_addr_list[0], 4);
    assert_int_equal(a, wisp_ip4(198, 18, 7, 7));
    assert_string_equal(he.h_name, "host.wisp-test");
    assert_int_equal(wisp_gethostbyname_r("host.wisp-test", &he, buf, 20, &h, &herr), WISP_ERANGE);
    assert_null(h);
    assert_int_equal(wisp_gethostbyname_r("fail.wisp-test", &he, buf, sizeof buf, &h, &herr), 0);
    assert_null(h);
    assert_int_equal(herr, WISP_TRY_AGAIN);
    tenv_stop(&t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_immediate),
        cmocka_unit_test(test_good_answer_and_cache),
        cmocka_unit_test(test_cname_chain),
        cmocka_unit_test(test_cname_loop),
        cmocka_unit_test(test_bad_responses),
        cmocka_unit_test(test_truncated_everywhere),
        cmocka_unit_test(test_nxdomain_nodata),
        cmocka_unit_test(test_servfail_then_second_server),
        cmocka_unit_test(test_timeouts_rotation),
        cmocka_unit_test(test_tc_and_refused),
        cmocka_unit_test(test_ttl_cache),
        cmocka_unit_test(test_cache_lru),
        cmocka_unit_test(test_id_port_random),
        cmocka_unit_test(test_coalesce_cancel),
        cmocka_unit_test(test_reentrant_callback),
        cmocka_unit_test(test_getaddrinfo),
        cmocka_unit_test(test_gethostbyname),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
