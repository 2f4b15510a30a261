/**
 * @file test_dns_sim.c
 * The DNS resolver on the simulated wire against scripted DNS servers
 * (other nodes with a raw UDP PCB on port 53):
 *  - a server that ignores the first queries: retransmissions after the
 *    timeout, the name resolved in the expected virtual time;
 *  - a silent first server: rotation to the second one after one timeout;
 *  - malicious answers (compression loop, forward pointer, oversized
 *    RDLENGTH; spoofed answers from a third node) dropped and counted,
 *    then the real answer taken; a truncated (TC) answer moves on to the
 *    next server at once;
 *  - random loss on the wire (10 %) with two servers: 40 names resolved,
 *    each either right or with a clean timeout, every pool back at zero.
 */
#define _POSIX_C_SOURCE 200809L
#include "simtest.h"
#include "wisp/dns.h"

/* ------------------------------------------------------ scripted server */

enum srv_mode { SRV_ANSWER, SRV_SILENT, SRV_LOOP, SRV_FWDPTR, SRV_BIGRDLEN, SRV_TC };

struct srv {
    struct wisp_udp_pcb *pcb;
    unsigned queries;
    unsigned ignore_first;      /* queries not answered at first */
    enum srv_mode mode;         /* for answered queries */
    unsigned bad_answers;       /* malicious answers sent before the good one */
    wisp_ip4_t addr;            /* the address answered */
    uint16_t last_id, last_port;
    wisp_ipaddr_t last_src;
};

static void srv_send(struct srv *sv, const uint8_t *b, size_t n, const wisp_ipaddr_t *to, uint16_t port)
{
    struct wisp_pbuf *r = wisp_pbuf_alloc(sv->pcb->stack, WISP_LAYER_TRANSPORT, (uint16_t)n, WISP_PBUF_RAM);
    assert_non_null(r);
    memcpy(r->payload, b, n);
    (void)wisp_udp_sendto(sv->pcb, r, to, port);
    wisp_pbuf_free(r);
}

static void srv_recv(void *arg, struct wisp_udp_pcb *pcb, struct wisp_pbuf *p, const wisp_ipaddr_t *src,
                     uint16_t port, const struct wisp_ip_info *ip)
{
    struct srv *sv = arg;
    uint8_t q[512], out[600];
    uint16_t n = wisp_pbuf_copy_out(p, q, sizeof q, 0);
    size_t qend = 12, o;
    enum srv_mode mode = sv->mode;
    (void)pcb;
    (void)ip;
    wisp_pbuf_free(p);
    sv->queries++;
    if (n < 17) {
        return;
    }
    sv->last_id = wisp_rd16(q);
    sv->last_port = port;
    sv->last_src = *src;
    while (qend < n && q[qend] != 0) {
        qend += q[qend] + 1u;
    }
    qend += 5;
    if (sv->queries <= sv->ignore_first || mode == SRV_SILENT) {
        return;
    }
    if (sv->bad_answers == 0 && mode != SRV_TC) {
        mode = SRV_ANSWER;
    }
    memcpy(out, q, qend);
    wisp_wr16(out + 2, mode == SRV_TC ? 0x8380 : 0x8180);
    wisp_wr16(out + 6, 1);
    o = qend;
    switch (mode) {
    case SRV_LOOP:      /* owner name: a pointer to itself */
        wisp_wr16(out + o, (uint16_t)(0xC000u | o));
        o += 2;
        break;
    case SRV_FWDPTR:    /* owner name: a pointer forward */
        wisp_wr16(out + o, (uint16_t)(0xC000u | (o + 16)));
        o += 2;
        break;
    default:
        wisp_wr16(out + o, 0xC00C);
        o += 2;
        break;
    }
    wisp_wr16(out + o, 1);
    wisp_wr16(out + o + 2, 1);
    wisp_wr32(out + o + 4, 300);
    wisp_wr16(out + o + 8, mode == SRV_BIGRDLEN ? 300 : 4);
    memcpy(out + o + 10, &sv->addr, 4);
    o += 14;
    if (mode == SRV_FWDPTR) {
        memcpy(out + o, q + 12, qend - 12 - 4); /* the name the pointer points to */
        o += qend - 12 - 4;
    }
    if (mode != SRV_ANSWER && sv->bad_answers > 0) {
        sv->bad_answers--;
    }
    srv_send(sv, out, o, src, port);
}

static void srv_start(struct srv *sv, struct sim_node *n, wisp_ip4_t addr)
{
    memset(sv, 0, sizeof *sv);
    sv->addr = addr;
    sv->pcb = wisp_udp_new(sim_stack(n));
    assert_non_null(sv->pcb);
    assert_int_equal(wisp_udp_bind(sv->pcb, NULL, 53), WISP_OK);
    wisp_udp_recv(sv->pcb, srv_recv, sv);
}

/* ------------------------------------------------------------ client */

struct res {
    int calls;
    wisp_err_t err;
    wisp_ip4_t addr;
    uint64_t t_us;
    struct sim_world *w;
};

static void found(void *arg, const char *name, wisp_err_t err, const wisp_ipaddr_t *addr, uint32_t ttl_s)
{
    struct res *r = arg;
    (void)name;
    (void)ttl_s;
    r->calls++;
    r->err = err;
    r->addr = addr != NULL ? wisp_ipaddr_ip4(addr) : 0;
    r->t_us = sim_now_us(r->w);
}

static bool res_done(void *arg)
{
    return ((struct res *)arg)->calls > 0;
}

/* Resolve name on node c, run until done (max 30 s virtual). */
static void resolve(struct sim_world *w, struct sim_node *c, const char *name, struct res *r)
{
    wisp_ipaddr_t a;
    memset(r, 0, sizeof *r);
    r->w = w;
    assert_int_equal(wisp_dns_gethostbyname(sim_stack(c), name, &a, found, r), WISP_ERR_INPROGRESS);
    assert_true(sim_run_until(w, res_done, r, 30000000));
    assert_int_equal(r->calls, 1);
}

#define CTR(n, id) (sim_stack(n)->ctr[WISP_CTR_##id])

/* ------------------------------------------------------------- tests */

static void retries_after_lost_queries(void **state)
{
    struct sim_world *w = sim_world_new(101);
    struct sim_node *c = st_node(w, "client", 1), *s = st_node(w, "dns", 2);
    struct srv sv;
    struct res r;
    uint64_t t0;
    (void)state;

    assert_true(sim_run_for(w, 10000));
    srv_start(&sv, s, wisp_ip4(198, 18, 7, 7));
    sv.ignore_first = 2;
    assert_int_equal(wisp_dns_set_server(sim_stack(c), 0, sim_ip(s)), WISP_OK);
    t0 = sim_now_us(w);
    resolve(w, c, "retry.wisp-test", &r);
    assert_int_equal(r.err, WISP_OK);
    assert_int_equal(r.addr, wisp_ip4(198, 18, 7, 7));
    assert_int_equal(sv.queries, 3);
    /* one server: every transmission is a round, 1 s then 2 s */
    assert_true(r.t_us - t0 >= 3000000u && r.t_us - t0 < 3050000u);
    assert_int_equal(CTR(c, DNS_TIMEOUT), 2);
    assert_int_equal(CTR(c, DNS_RETRANSMIT), 2);
    assert_int_equal(CTR(c, UDP_DROP_NOPORT), 0);
    wisp_udp_remove(sv.pcb);
    ST_FREE(w);
}

static void rotation_to_second_server(void **state)
{
    struct sim_world *w = sim_world_new(102);
    struct sim_node *c = st_node(w, "client", 1), *s1 = st_node(w, "dead", 2), *s2 = st_node(w, "dns", 3);
    struct srv d, sv;
    struct res r;
    uint64_t t0;
    (void)state;

    assert_true(sim_run_for(w, 10000));
    srv_start(&d, s1, 0);
    d.mode = SRV_SILENT;
    srv_start(&sv, s2, wisp_ip4(198, 18, 7, 9));
    assert_int_equal(wisp_dns_set_server(sim_stack(c), 0, sim_ip(s1)), WISP_OK);
    assert_int_equal(wisp_dns_set_server(sim_stack(c), 1, sim_ip(s2)), WISP_OK);
    t0 = sim_now_us(w);
    resolve(w, c, "rot.wisp-test", &r);
    assert_int_equal(r.err, WISP_OK);
    assert_int_equal(r.addr, wisp_ip4(198, 18, 7, 9));
    assert_int_equal(d.queries, 1);
    assert_int_equal(sv.queries, 1);
    assert_true(r.t_us - t0 >= 1000000u && r.t_us - t0 < 1050000u);
    /* The next name starts at the first server again (and is cached
     * elsewhere): the dead one is asked first. */
    resolve(w, c, "rot2.wisp-test", &r);
    assert_int_equal(r.err, WISP_OK);
    assert_int_equal(d.queries, 2);
    /* cached */
    {
        wisp_ipaddr_t a;
        assert_int_equal(wisp_dns_gethostbyname(sim_stack(c), "ROT.wisp-test", &a, found, &r), WISP_OK);
        assert_int_equal(wisp_ipaddr_ip4(&a), wisp_ip4(198, 18, 7, 9));
    }
    wisp_udp_remove(d.pcb);
    wisp_udp_remove(sv.pcb);
    ST_FREE(w);
}

/* The spoofer: a third node blasting answers with wrong IDs at the
 * client's query port once it has seen it on the (hub) wire. */
struct spoof {
    struct sim_node *node;
    struct wisp_udp_pcb *pcb;
    wisp_ip4_t client, server;
    uint16_t port, id;
    unsigned sent;
};

static void spoof_tap(void *arg, struct sim_node *from, const uint8_t *f, size_t len, uint64_t t)
{
    struct spoof *sp = arg;
    (void)from;
    (void)t;
    if (len >= 44 && wisp_rd16(f + 12) == 0x0800 && f[23] == 17 && wisp_rd16(f + 36) == 53) {
        sp->port = wisp_rd16(f + 34);
        sp->id = wisp_rd16(f + 42);
    }
}

static void malicious_answers(void **state)
{
    static const enum srv_mode modes[] = { SRV_LOOP, SRV_FWDPTR, SRV_BIGRDLEN };
    struct sim_world *w = sim_world_new(103);
    struct sim_node *c = st_node(w, "client", 1), *s = st_node(w, "dns", 2), *x = st_node(w, "spoofer", 3);
    struct srv sv;
    struct res r;
    struct spoof sp;
    unsigned i;
    (void)state;

    assert_true(sim_run_for(w, 10000));
    srv_start(&sv, s, wisp_ip4(198, 18, 7, 10));
    assert_int_equal(wisp_dns_set_server(sim_stack(c), 0, sim_ip(s)), WISP_OK);
    for (i = 0; i < WISP_ARRAY_SIZE(modes); i++) {
        char name[32];
        uint32_t drops = CTR(c, DNS_DROP_MALFORMED);
        snprintf(name, sizeof name, "evil%u.wisp-test", i);
        sv.mode = modes[i];
        sv.bad_answers = 1;
        resolve(w, c, name, &r);
        assert_int_equal(r.err, WISP_OK);
        assert_int_equal(r.addr, wisp_ip4(198, 18, 7, 10));
        assert_int_equal(CTR(c, DNS_DROP_MALFORMED), drops + 1);
    }
    assert_int_equal(CTR(c, DNS_TIMEOUT), 3); /* each malformed answer cost one timeout */

    /* Spoofed answers (guessed IDs, the right port seen on the hub) from
     * another node: all dropped, the real answer wins. */
    memset(&sp, 0, sizeof sp);
    sim_set_tap(w, spoof_tap, &sp);
    sv.mode = SRV_ANSWER;
    sv.ignore_first = sv.queries + 1; /* the next query is not answered at once */
    {
        wisp_ipaddr_t a;
        memset(&r, 0, sizeof r);
        r.w = w;
        assert_int_equal(wisp_dns_gethostbyname(sim_stack(c), "spoofed.wisp-test", &a, found, &r),
                         WISP_ERR_INPROGRESS);
        assert_true(sim_run_for(w, 100000));
        assert_true(sp.port != 0);
        sp.pcb = wisp_udp_new(sim_stack(x));
        assert_non_null(sp.pcb);
        assert_int_equal(wisp_udp_bind(sp.pcb, NULL, 53), WISP_OK);
        for (i = 0; i < 12; i++) { /* fits the spoofer's ARP queue */
            uint8_t b[64];
            size_t o = 12;
            struct wisp_pbuf *p;
            wisp_ipaddr_t to = wisp_ipaddr4(sim_ip(c));
            memset(b, 0, sizeof b);
            wisp_wr16(b, (uint16_t)(sp.id + 1u + i));
            wisp_wr16(b + 2, 0x8180);
            wisp_wr16(b + 4, 1);
            wisp_wr16(b + 6, 1);
            memcpy(b + o, "\7spoofed\11wisp-test\0\0\1\0\1", 23);
            o += 23;
            memcpy(b + o, "\300\14\0\1\0\1\0\0\16\20\0\4\6\6\6\6", 16);
            o += 16;
            p = wisp_pbuf_alloc(sim_stack(x), WISP_LAYER_TRANSPORT, (uint16_t)o, WISP_PBUF_RAM);
            assert_non_null(p);
            memcpy(p->payload, b, o);
            (void)wisp_udp_sendto(sp.pcb, p, &to, sp.port);
            wisp_pbuf_free(p);
            sp.sent++;
        }
        assert_true(sim_run_until(w, res_done, &r, 30000000));
        assert_int_equal(r.err, WISP_OK);
        assert_int_equal(r.addr, wisp_ip4(198, 18, 7, 10));
        assert_int_equal(CTR(c, DNS_DROP_SRC), 12);
        wisp_udp_remove(sp.pcb);
    }
    sim_set_tap(w, NULL, NULL);

    /* TC: the next server at once (here the same one, the only one). */
    sv.mode = SRV_TC;
    sv.ignore_first = 0;
    resolve(w, c, "tc.wisp-test", &r);
    assert_int_equal(r.err, WISP_ERR_CONN);
    assert_int_equal(CTR(c, DNS_TRUNCATED), WISP_DNS_MAX_RETRIES + 1);
    wisp_udp_remove(sv.pcb);
    ST_FREE(w);
}

static void lossy_wire_two_servers(void **state)
{
    struct sim_world *w = sim_world_new(104);
    struct sim_node *c = st_node(w, "client", 1), *s1 = st_node(w, "dns1", 2), *s2 = st_node(w, "dns2", 3);
    struct sim_link_cfg lc;
    struct srv a, b;
    struct res r;
    unsigned i, ok = 0, timeouts = 0;
    (void)state;

    assert_true(sim_run_for(w, 10000));
    srv_start(&a, s1, wisp_ip4(198, 18, 9, 1));
    srv_start(&b, s2, wisp_ip4(198, 18, 9, 1));
    assert_int_equal(wisp_dns_set_server(sim_stack(c), 0, sim_ip(s1)), WISP_OK);
    assert_int_equal(wisp_dns_set_server(sim_stack(c), 1, sim_ip(s2)), WISP_OK);
    sim_get_link(w, &lc);
    lc.loss = 0.10;
    lc.dup = 0.05;
    lc.reorder = 0.05;
    sim_set_link(w, &lc);
    for (i = 0; i < 40; i++) {
        char name[32];
        snprintf(name, sizeof name, "l%u.wisp-test", i);
        resolve(w, c, name, &r);
        if (r.err == WISP_OK) {
            assert_int_equal(r.addr, wisp_ip4(198, 18, 9, 1));
            ok++;
        } else {
            assert_int_equal(r.err, WISP_ERR_TIMEOUT);
            timeouts++;
        }
    }
    print_message("lossy wire: %u of 40 resolved, %u timed out; %u retransmissions, servers got %u + %u queries\n", ok,
                  timeouts, (unsigned)CTR(c, DNS_RETRANSMIT), a.queries, b.queries);
    assert_true(ok >= 38);
    assert_true(CTR(c, DNS_RETRANSMIT) > 0);
    assert_true(b.queries > 0);
    assert_int_equal(wisp_dns_pending(sim_stack(c)), 0);
    wisp_udp_remove(a.pcb);
    wisp_udp_remove(b.pcb);
    ST_FREE(w);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(retries_after_lost_queries),
        cmocka_unit_test(rotation_to_second_server),
        cmocka_unit_test(malicious_answers),
        cmocka_unit_test(lossy_wire_two_servers),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
