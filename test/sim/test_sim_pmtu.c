/**
 * @file test_sim_pmtu.c
 * Path MTU discovery in the simulator (RFC 1191, RFC 4821 fallback): two
 * stacks with 1500-byte interfaces transfer data both ways; mid-transfer a
 * router hop with a 1000-byte MTU appears on the path (simwire path_mtu).
 *  - With "fragmentation needed" messages (RFC 1191 §4) both senders lower
 *    their MSS to 960, re-cut what is in flight and the transfer completes
 *    byte-exact without any retransmission timeout.
 *  - As a black hole (the hop drops large DF packets silently) both
 *    senders detect it after WISP_PMTU_BLACKHOLE_RTOS timeouts, fall back to
 *    WISP_PMTU_MIN - 40 and complete byte-exact.
 * Also a UDP datagram to a closed port of another node draws a port
 * unreachable that a connected raw UDP PCB hears. Pools back at baseline
 * and no leak at the end of every test.
 */
#include "simtest.h"
#include "tcp_simlib.h"

#define KB 1024u
#define SEC 1000000ull

struct env {
    struct sim_world *w;
    struct sim_node *a, *b;
    struct tsl_run run;
    unsigned base[2];
};

/* RTO expirations of a connection: its own count (WISP_TCP_PCB_STATS), else
 * its stack's (one connection per stack here). */
#if WISP_TCP_PCB_STATS
#define PCB_TIMEOUTS(pcb, st) ((pcb)->st_timeouts)
#else
#define PCB_TIMEOUTS(pcb, st) ((st)->ctr[WISP_CTR_TCP_TIMEOUT])
#endif

static void env_up(struct env *e, uint64_t seed)
{
    struct sim_link_cfg l;
    memset(e, 0, sizeof(*e));
    e->w = sim_world_new(seed);
    assert_non_null(e->w);
    sim_link_defaults(&l);
    l.bandwidth_bps = 100000000u;
    l.latency_us = 1000;
    sim_set_link(e->w, &l);
    e->a = st_node(e->w, "a", 1);
    e->b = st_node(e->w, "b", 2);
    tsl_init(&e->run, e->w);
    assert_int_equal(tsl_listen(&e->run, e->b, 5001, 4), WISP_OK);
    assert_true(sim_run_for(e->w, 1000));
    tsl_baseline(e->w, e->base);
}

static void env_down(struct env *e)
{
    if (!tsl_settle(e->w, e->base, 200 * SEC, stderr)) {
        fail_msg("pools not back at baseline");
    }
    tsl_fini(&e->run);
    ST_FREE(e->w);
}

static bool a_sent_some(void *arg)
{
    struct tsl_conn *c = (struct tsl_conn *)arg;
    return c->ep[0].tx_acked >= 256u * KB && c->ep[1].tx_acked >= 64u * KB;
}

static void narrow_path_mid_transfer_lossy(bool icmp, uint64_t seed, double loss)
{
    struct env e;
    struct tsl_cfg cfg;
    struct tsl_conn *c;
    struct sim_link_cfg l;
    const struct sim_counters *wc;
    struct wisp_stack *sa, *sb;

    env_up(&e, seed);
    memset(&cfg, 0, sizeof(cfg));
    cfg.a2b.bytes = 2u * 1024u * KB;
    cfg.a2b.wsize = 4000;
    cfg.a2b.wrandom = (seed & 1u) == 0; /* the second run: random write sizes */
    cfg.b2a.bytes = 512u * KB;
    cfg.b2a.wsize = 3000;
    cfg.seed = seed;
    cfg.close_mode = TSL_CLOSE_NONE;
    cfg.watchdog_ms = 60000;
    c = tsl_connect(&e.run, e.a, &cfg);
    assert_non_null(c);
    assert_true(sim_run_until(e.w, a_sent_some, c, 30 * SEC));
    assert_false(c->done);
    assert_int_equal(c->ep[0].pcb->mss, 1460);

    /* a router with a 1000-byte next hop appears on the path */
    sim_get_link(e.w, &l);
    l.path_mtu = 1000;
    l.path_mtu_icmp = icmp;
    l.loss = loss;
    l.reorder = loss;
    l.path_mtu_router = wisp_ip4(198, 18, 0, 254);
    sim_set_link(e.w, &l);

    if (!tsl_run_until_done(&e.run, 200 * SEC)) {
        tsl_run_print_failures(&e.run, stderr);
        sim_dump(e.w, stderr);
        fail_msg("transfer failed");
    }
    sa = sim_stack(e.a);
    sb = sim_stack(e.b);
    wc = sim_counters(e.w);
    printf("  %s: done at %.3f s, wire pmtu_dropped %llu pmtu_icmp %llu; A mss %u rto %lu reseg %lu; "
           "B mss %u rto %lu reseg %lu\n",
           icmp ? "frag-needed" : "black hole", (double)sim_now_us(e.w) / 1e6,
           (unsigned long long)wc->pmtu_dropped, (unsigned long long)wc->pmtu_icmp,
           (unsigned)c->ep[0].pcb->mss, (unsigned long)PCB_TIMEOUTS(c->ep[0].pcb, sa),
           (unsigned long)sa->ctr[WISP_CTR_TCP_PMTU_RESEG], (unsigned)c->ep[1].pcb->mss,
           (unsigned long)PCB_TIMEOUTS(c->ep[1].pcb, sb), (unsigned long)sb->ctr[WISP_CTR_TCP_PMTU_RESEG]);
    assert_true(wc->pmtu_dropped > 0);
    if (loss > 0) {
        /* with loss the timers may fire too: only the outcome is fixed */
        assert_true(c->ep[0].pcb->mss <= 960 && c->ep[1].pcb->mss <= 960);
    } else if (icmp) {
        assert_true(wc->pmtu_icmp > 0);
        assert_int_equal(c->ep[0].pcb->mss, 960);
        assert_int_equal(c->ep[1].pcb->mss, 960);
        assert_true(sa->ctr[WISP_CTR_ICMP_PMTU_LOWERED] >= 1);
        assert_true(sb->ctr[WISP_CTR_ICMP_PMTU_LOWERED] >= 1);
        assert_true(sa->ctr[WISP_CTR_TCP_PMTU_RESEG] >= 1);
        /* re-cut and resent at once: no timeout, no black-hole guess */
        assert_int_equal(PCB_TIMEOUTS(c->ep[0].pcb, sa), 0);
        assert_int_equal(PCB_TIMEOUTS(c->ep[1].pcb, sb), 0);
        assert_int_equal(sa->ctr[WISP_CTR_TCP_PMTU_BLACKHOLE] + sb->ctr[WISP_CTR_TCP_PMTU_BLACKHOLE], 0);
    } else {
        assert_int_equal(wc->pmtu_icmp, 0);
        assert_int_equal(sa->ctr[WISP_CTR_TCP_PMTU_BLACKHOLE], 1);
        assert_int_equal(sb->ctr[WISP_CTR_TCP_PMTU_BLACKHOLE], 1);
        assert_int_equal(c->ep[0].pcb->mss, WISP_PMTU_MIN - 40);
        assert_int_equal(c->ep[1].pcb->mss, WISP_PMTU_MIN - 40);
    }
    /* every byte verified by the receivers (tsl) */
    assert_true(c->ep[1].rx_got == cfg.a2b.bytes && c->ep[0].rx_got == cfg.b2a.bytes);
    assert_int_equal(tsl_ep_close(&c->ep[0]), WISP_OK);
    assert_int_equal(tsl_ep_close(&c->ep[1]), WISP_OK);
    env_down(&e);
}

static void narrow_path_mid_transfer(bool icmp, uint64_t seed)
{
    narrow_path_mid_transfer_lossy(icmp, seed, 0.0);
}

static void frag_needed_mid_transfer_completes_byte_exact(void **state)
{
    (void)state;
    narrow_path_mid_transfer(true, 11);
    narrow_path_mid_transfer(true, 12);
}

static void black_hole_mid_transfer_recovers_by_fallback(void **state)
{
    (void)state;
    narrow_path_mid_transfer(false, 21);
    narrow_path_mid_transfer(false, 22);
}

/* The same with 2 % loss and 2 % reordering after the path narrowed
 * (loss recovery, SACK and the re-cut interleave): byte-exact. */
static void narrow_path_with_loss_completes(void **state)
{
    uint64_t seed;
    (void)state;
    for (seed = 31; seed < 35; seed++) {
        narrow_path_mid_transfer_lossy(true, seed, 0.02);
        narrow_path_mid_transfer_lossy(false, seed + 100, 0.02);
    }
}

/* ------------------------------------------------------------- UDP */

struct uerr {
    unsigned n;
    wisp_err_t err;
};

static void uerr_cb(void *arg, struct wisp_udp_pcb *pcb, wisp_err_t err, const struct wisp_icmp_err *e)
{
    struct uerr *u = (struct uerr *)arg;
    (void)pcb;
    (void)e;
    u->n++;
    u->err = err;
}

static bool uerr_seen(void *arg)
{
    return ((struct uerr *)arg)->n > 0;
}

static void udp_to_closed_port_is_refused(void **state)
{
    struct sim_world *w = sim_world_new(5);
    struct sim_node *a, *b;
    struct wisp_udp_pcb *pcb;
    struct wisp_pbuf *p;
    wisp_ipaddr_t dst;
    struct uerr u;
    (void)state;
    assert_non_null(w);
    a = st_node(w, "a", 1);
    b = st_node(w, "b", 2);
    memset(&u, 0, sizeof(u));
    pcb = wisp_udp_new(sim_stack(a));
    assert_non_null(pcb);
    wisp_udp_err(pcb, uerr_cb, &u);
    dst = st_addr(b);
    assert_int_equal(wisp_udp_connect(pcb, &dst, 9999), WISP_OK);
    p = wisp_pbuf_alloc(sim_stack(a), WISP_LAYER_TRANSPORT, 32, WISP_PBUF_RAM);
    assert_non_null(p);
    memset(p->payload, 1, 32);
    assert_int_equal(wisp_udp_send(pcb, p), WISP_OK);
    wisp_pbuf_free(p);
    assert_true(sim_run_until(w, uerr_seen, &u, SEC));
    assert_int_equal(u.err, WISP_ERR_REFUSED);
    assert_int_equal(sim_stack(b)->ctr[WISP_CTR_UDP_DROP_NOPORT], 1);
    assert_int_equal(sim_stack(a)->ctr[WISP_CTR_ICMP_ERR_UDP], 1);
    wisp_udp_remove(pcb);
    ST_FREE(w);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(frag_needed_mid_transfer_completes_byte_exact),
        cmocka_unit_test(black_hole_mid_transfer_recovers_by_fallback),
        cmocka_unit_test(narrow_path_with_loss_completes),
        cmocka_unit_test(udp_to_closed_port_is_refused),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
