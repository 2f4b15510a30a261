/**
 * @file test_tcp_scenarios.c
 * Simulator tests of TCP connection life-cycle scenarios through the raw
 * API, observed on the wire with the sim tap (harness: tcp_simlib):
 * keepalive timing and a dead peer, TIME-WAIT (2 MSL, re-ACK of a
 * retransmitted FIN), simultaneous open and close, resets (refused connect,
 * abort, blind in-window RST answered by a challenge ACK, exact-sequence
 * RST), a SYN flood against a listener while established connections
 * keep transferring, and the RTT after a lost SYN-ACK (the echo of the
 * latest SYN; none taken from an echo of an earlier one). Every test ends with the pools back at baseline and
 * sim_world_free() == 0.
 */
#include "simtest.h"
#include "tcp_simlib.h"

#define KB 1024u
#define SEC 1000000ull
#define MS 1000ull

/* A world with nodes a (.1), b (.2) and optionally c (.3, attacker /
 * replayer / b's gateway), a run, a listener on b:5001, a segment log and
 * the pool baseline. */
struct env {
    struct sim_world *w;
    struct sim_node *a, *b, *c;
    struct tsl_run run;
    struct tsl_log log;
    unsigned base[3];
};

static void env_up(struct env *e, uint64_t seed, bool third, bool b_gw_is_c, bool listen)
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
    e->b = sim_node_add(e->w, "b", ST_NET "2/24", b_gw_is_c ? ST_NET "3" : NULL);
    assert_non_null(e->b);
    if (third) {
        e->c = st_node(e->w, "c", 3);
    }
    tsl_init(&e->run, e->w);
    if (listen) {
        assert_int_equal(tsl_listen(&e->run, e->b, 5001, 16), WISP_OK);
    }
    assert_true(sim_run_for(e->w, 1000));
    tsl_baseline(e->w, e->base);
    e->log.payload_too = true;
    sim_set_tap(e->w, tsl_log_tap, &e->log);
}

/* Settle the pools, free everything, leak check. */
static void env_down(struct env *e, uint64_t settle_us)
{
    sim_set_tap(e->w, NULL, NULL);
    if (!tsl_settle(e->w, e->base, settle_us, stderr)) {
        fail_msg("pools not back at baseline");
    }
    tsl_fini(&e->run);
    tsl_log_free(&e->log);
    ST_FREE(e->w);
}

static void run_done(struct env *e, uint64_t max_us)
{
    if (!tsl_run_until_done(&e->run, max_us)) {
        tsl_run_print_failures(&e->run, stderr);
        fail_msg("transfer failed");
    }
}

static struct tsl_cfg xcfg(uint64_t a2b, uint64_t b2a, uint8_t mode, uint64_t seed)
{
    struct tsl_cfg cfg;
    memset(&cfg, 0, sizeof(cfg));
    cfg.a2b.bytes = a2b;
    cfg.b2a.bytes = b2a;
    cfg.close_mode = mode;
    cfg.seed = seed;
    return cfg;
}

/* Index of the first logged segment at or after from sent by node n whose
 * flags include all of set and none of clear; -1 when none. */
static long find_seg(const struct tsl_log *log, size_t from, const struct sim_node *n, uint8_t set, uint8_t clear)
{
    size_t i;
    for (i = from; i < log->n; i++) {
        const struct tsl_seg *s = &log->e[i].seg;
        if (log->e[i].from == n && (s->flags & set) == set && (s->flags & clear) == 0) {
            return (long)i;
        }
    }
    return -1;
}

static unsigned count_seg(const struct tsl_log *log, size_t from, const struct sim_node *n, uint8_t set)
{
    size_t i;
    unsigned k = 0;
    for (i = from; i < log->n; i++) {
        if ((n == NULL || log->e[i].from == n) && (log->e[i].seg.flags & set) == set) {
            k++;
        }
    }
    return k;
}

struct wait_log {
    const struct tsl_log *log;
    size_t from;
    const struct sim_node *n;
    unsigned count;
};

static bool log_has(void *arg)
{
    struct wait_log *wl = arg;
    size_t i;
    unsigned k = 0;
    for (i = wl->from; i < wl->log->n; i++) {
        if (wl->log->e[i].from == wl->n) {
            k++;
        }
    }
    return k >= wl->count;
}

static bool err_called(void *arg)
{
    return ((struct tsl_ep *)arg)->err_called;
}

/* ---------------------------------------------------------- keepalive */

/* Keepalive idle 10 s, interval 1 s, 3 probes (RFC 9293 §3.8.4, RFC 1122
 * §4.2.3.6): on an idle connection a probe (SEG.SEQ = SND.NXT - 1) goes
 * out 10 s after the last segment received, the live peer answers, the
 * next comes 10 s after that answer; once the peer is unplugged, 3 probes
 * 1 s apart and the error callback (WISP_ERR_ABRT) 10 + 3 x 1 s after the
 * last answer. */
static void keepalive_probes_on_time_and_detects_dead_peer(void **state)
{
    struct env e;
    struct tsl_conn *c;
    struct tsl_cfg cfg = xcfg(1000, 1000, TSL_CLOSE_NONE, 51);
    struct wait_log wl;
    long i;
    uint64_t last_rx, t_probe[8];
    uint32_t peer_ack = 0;
    unsigned np = 0, k;
    const uint64_t tol = 600 * MS;
    (void)state;
    env_up(&e, 51, false, false, true);
    c = tsl_connect(&e.run, e.a, &cfg);
    assert_non_null(c);
    wisp_tcp_keepalive(c->ep[0].pcb, true, 10000, 1000, 3);
    run_done(&e, 5 * SEC);
    /* let delayed ACKs out, then the connection is idle */
    assert_true(sim_run_for(e.w, 500 * MS));
    assert_true(e.log.n > 0);
    i = (long)e.log.n - 1;
    while (i >= 0 && e.log.e[i].from != e.b) {
        i--;
    }
    assert_true(i >= 0);
    last_rx = e.log.e[i].t_us + 1000; /* arrival at a: +latency */
    peer_ack = e.log.e[i].seg.ack;

    /* live peer: two probes, each answered */
    wl.log = &e.log;
    wl.from = e.log.n;
    wl.n = e.b;
    wl.count = 2;
    assert_true(sim_run_until(e.w, log_has, &wl, 30 * SEC));
    for (i = (long)wl.from; i < (long)e.log.n; i++) {
        const struct tsl_logent *le = &e.log.e[i];
        if (le->from == e.a) {
            printf("  probe %u at %.3f s (idle since %.3f s) seq %lu, peer ack %lu, len %u\n", np,
                   (double)le->t_us / 1e6, (double)last_rx / 1e6, (unsigned long)le->seg.seq,
                   (unsigned long)peer_ack, (unsigned)le->seg.plen);
            assert_true(np < 2);
            assert_true(le->t_us + tol >= last_rx + 10 * SEC && le->t_us <= last_rx + 10 * SEC + tol);
            assert_int_equal(le->seg.seq, peer_ack - 1u); /* SEG.SEQ = SND.NXT - 1 */
            assert_true(le->seg.plen <= 1);
            np++;
        } else {
            assert_int_equal(le->seg.flags & TSL_RST, 0);
            last_rx = le->t_us + 1000;
            peer_ack = le->seg.ack;
        }
    }
    assert_int_equal(np, 2);
    assert_int_equal(wisp_tcp_state(c->ep[0].pcb), WISP_TCP_ESTABLISHED);

    /* dead peer */
    sim_node_set_link(e.b, false);
    c->ep[0].expect_err = true;
    c->ep[1].expect_err = true;
    wl.from = e.log.n;
    assert_true(sim_run_until(e.w, err_called, &c->ep[0], 40 * SEC));
    np = 0;
    for (i = (long)wl.from; i < (long)e.log.n; i++) {
        const struct tsl_logent *le = &e.log.e[i];
        if (le->from == e.a && (le->seg.flags & TSL_RST) == 0 && np < 8) {
            t_probe[np++] = le->t_us;
        }
    }
    printf("  dead peer: %u probes, error %s %.3f s after the last answer\n", np, wisp_err_str(c->ep[0].err),
           (double)(c->ep[0].err_us - last_rx) / 1e6);
    assert_int_equal(np, 3);
    for (k = 0; k < np; k++) {
        uint64_t want = last_rx + 10 * SEC + (uint64_t)k * SEC;
        printf("  probe %u at +%.3f s (want +%.3f)\n", k, (double)(t_probe[k] - last_rx) / 1e6,
               (double)(want - last_rx) / 1e6);
        assert_true(t_probe[k] + tol >= want && t_probe[k] <= want + tol);
    }
    assert_int_equal(c->ep[0].err, WISP_ERR_ABRT);
    assert_true(c->ep[0].err_us + tol >= last_rx + 13 * SEC && c->ep[0].err_us <= last_rx + 13 * SEC + tol);
    /* b still holds its side; abort it (its cable is out) */
    tsl_ep_abort(&c->ep[1]);
    sim_node_set_link(e.b, true);
    env_down(&e, 200 * SEC);
}

/* ----------------------------------------------------------- TIME-WAIT */

/* Replay seg (b's FIN) from node from, with a timestamp that is not older
 * than the original's. */
static void replay(struct sim_node *from, const struct tsl_seg *orig)
{
    uint8_t frame[128], opts[12];
    uint8_t optlen = 0;
    size_t len;
    if (orig->ts) {
        opts[0] = 1;
        opts[1] = 1;
        opts[2] = 8;
        opts[3] = 10;
        wisp_wr32(opts + 4, orig->tsval + 1u);
        wisp_wr32(opts + 8, orig->tsecr);
        optlen = 12;
    }
    len = tsl_build(frame, sizeof(frame), orig, opts, optlen, NULL, 0);
    assert_true(len > 0);
    assert_true(tsl_inject(from, frame, len));
}

/* The active closer holds TIME-WAIT for 2 MSL (RFC 9293 §3.3.2, §3.10.7.4
 * "TIME-WAIT STATE"): a retransmitted FIN just before 2 MSL is
 * acknowledged again (and restarts the 2 MSL timeout); 2 MSL after that the
 * connection is gone, and the same FIN gets a reset (§3.10.7.1). */
static void time_wait_reacks_fin_and_ends_after_2msl(void **state)
{
    struct env e;
    struct tsl_conn *c;
    struct tsl_cfg cfg = xcfg(10 * KB, 0, TSL_CLOSE_PLAIN, 52);
    const uint64_t two_msl = 2ull * WISP_TCP_MSL_MS * MS;
    struct tsl_seg fin;
    long i, j;
    uint64_t t_tw, t1;
    size_t mark;
    (void)state;
    env_up(&e, 52, true, false, true);
    c = tsl_connect(&e.run, e.a, &cfg);
    assert_non_null(c);
    run_done(&e, 10 * SEC);
    assert_true(sim_run_for(e.w, 1 * SEC));
    i = find_seg(&e.log, 0, e.b, TSL_FIN, 0);
    assert_true(i >= 0);
    fin = e.log.e[i].seg;
    /* a's ACK of b's FIN: a enters TIME-WAIT */
    for (j = i + 1; j < (long)e.log.n; j++) {
        if (e.log.e[j].from == e.a && e.log.e[j].seg.ack == fin.seq + fin.plen + 1u) {
            break;
        }
    }
    assert_true(j < (long)e.log.n);
    t_tw = e.log.e[j].t_us;
    assert_int_equal(count_seg(&e.log, 0, NULL, TSL_RST), 0);
    sim_node_set_link(e.b, false); /* b is CLOSED: it would reset a's answers */

    /* just before 2 MSL: still in TIME-WAIT, the FIN is acknowledged */
    assert_true(sim_run_for(e.w, t_tw + two_msl - 1 * SEC - sim_now_us(e.w)));
    mark = e.log.n;
    replay(e.c, &fin);
    t1 = sim_now_us(e.w);
    assert_true(sim_run_for(e.w, 50 * MS));
    i = find_seg(&e.log, mark, e.a, TSL_ACK, TSL_RST | TSL_SYN);
    if (i < 0) {
        tsl_log_print(&e.log, mark, stdout);
    }
    assert_true(i >= 0);
    assert_int_equal(e.log.e[i].seg.ack, fin.seq + fin.plen + 1u);
    assert_int_equal(e.log.e[i].seg.seq, fin.ack);

    /* 2 MSL after the restart: gone, the FIN gets a reset */
    assert_true(sim_run_for(e.w, t1 + two_msl + 1 * SEC - sim_now_us(e.w)));
    mark = e.log.n;
    replay(e.c, &fin);
    assert_true(sim_run_for(e.w, 50 * MS));
    i = find_seg(&e.log, mark, e.a, TSL_RST, 0);
    if (i < 0) {
        tsl_log_print(&e.log, mark, stdout);
    }
    assert_true(i >= 0);
    assert_int_equal(e.log.e[i].seg.seq, fin.ack); /* <SEQ=SEG.ACK><CTL=RST> */
    sim_node_set_link(e.b, true);
    env_down(&e, 10 * SEC);
}

/* ------------------------------------------------- simultaneous open */

/* Up e (seed), a and b connect to each other's port at once (a's port pa,
 * b's pa + 1), 64 KB each way, run until done; the connection. */
static struct tsl_conn *open_crossed(struct env *e, uint8_t mode, uint64_t seed, uint16_t pa)
{
    struct tsl_cfg cfg = xcfg(64 * KB, 64 * KB, mode, seed);
    struct tsl_conn *c;
    env_up(e, seed, false, false, false);
    c = tsl_conn_new(&e->run, &cfg);
    assert_non_null(c);
    assert_int_equal(tsl_ep_open(c, 0, e->a, pa, sim_ip(e->b), (uint16_t)(pa + 1u)), WISP_OK);
    assert_int_equal(tsl_ep_open(c, 1, e->b, (uint16_t)(pa + 1u), sim_ip(e->a), pa), WISP_OK);
    run_done(e, 60 * SEC);
    return c;
}

/* Both ends connect to each other's port at the same moment (RFC 9293
 * §3.5 figure 8): SYNs cross, each answers with SYN,ACK, both become
 * established and transfer byte-exact. */
static void simultaneous_open(void **state)
{
    struct env e;
    long sa, sb;
    (void)state;
    (void)open_crossed(&e, TSL_CLOSE_SHUTDOWN, 53, 6001);
    sa = find_seg(&e.log, 0, e.a, TSL_SYN, TSL_ACK);
    sb = find_seg(&e.log, 0, e.b, TSL_SYN, TSL_ACK);
    assert_true(sa >= 0 && sb >= 0);
    assert_true(find_seg(&e.log, 0, e.a, TSL_SYN | TSL_ACK, 0) > sa);
    assert_true(find_seg(&e.log, 0, e.b, TSL_SYN | TSL_ACK, 0) > sb);
    assert_int_equal(count_seg(&e.log, 0, NULL, TSL_RST), 0);
    env_down(&e, 2ull * WISP_TCP_MSL_MS * MS + 60 * SEC);
}

/* srtt of an open endpoint's connection, ms. */
static uint32_t srtt_ms(const struct tsl_ep *ep)
{
    struct wisp_tcp_info in;
    assert_non_null(ep->pcb);
    wisp_tcp_get_info(ep->pcb, &in);
    return in.srtt_ms;
}

/* After a simultaneous open, both ends time their data (RFC 6298 §2, §3):
 * their SYN's timing ends with the handshake (a SYN-ACK answering our
 * SYN-ACK takes no sample), so the first data is timed and the round trip
 * of the 1 ms wire is measured -- with timestamps (RFC 7323 §4.1) or,
 * in an option set without them, by the timed segment (TF_RTT). */
static void simultaneous_open_times_the_data(void **state)
{
    struct env e;
    struct tsl_conn *c;
    uint32_t ra, rb;
    (void)state;
    c = open_crossed(&e, TSL_CLOSE_NONE, 54, 6011);
    assert_true(find_seg(&e.log, 0, e.a, TSL_SYN | TSL_ACK, 0) >= 0);
    ra = srtt_ms(&c->ep[0]);
    rb = srtt_ms(&c->ep[1]);
    printf("  srtt a %u ms, b %u ms (wire: 1 ms each way)\n", (unsigned)ra, (unsigned)rb);
    assert_true(ra >= 2u && ra < 100u);
    assert_true(rb >= 2u && rb < 100u);
    tsl_ep_close(&c->ep[0]);
    tsl_ep_close(&c->ep[1]);
    env_down(&e, 2ull * WISP_TCP_MSL_MS * MS + 60 * SEC);
}

/* Both ends close at the same moment (RFC 9293 §3.6 figure 13): the FINs
 * cross, each acknowledges the other's, no reset, both TIME-WAITs end. */
static void simultaneous_close(void **state)
{
    struct env e;
    struct tsl_conn *c;
    struct tsl_cfg cfg = xcfg(32 * KB, 32 * KB, TSL_CLOSE_NONE, 54);
    size_t mark;
    long fa, fb;
    const struct tsl_seg *sfa, *sfb;
    (void)state;
    env_up(&e, 54, false, false, true);
    c = tsl_connect(&e.run, e.a, &cfg);
    assert_non_null(c);
    run_done(&e, 10 * SEC);
    assert_true(sim_run_for(e.w, 300 * MS));
    mark = e.log.n;
    assert_int_equal(tsl_ep_close(&c->ep[0]), WISP_OK);
    assert_int_equal(tsl_ep_close(&c->ep[1]), WISP_OK);
    assert_true(sim_run_for(e.w, 2 * SEC));
    fa = find_seg(&e.log, mark, e.a, TSL_FIN, 0);
    fb = find_seg(&e.log, mark, e.b, TSL_FIN, 0);
    if (fa < 0 || fb < 0) {
        tsl_log_print(&e.log, mark, stdout);
    }
    assert_true(fa >= 0 && fb >= 0);
    sfa = &e.log.e[fa].seg;
    sfb = &e.log.e[fb].seg;
    /* crossed: each FIN left before the other could have arrived */
    assert_true(e.log.e[fa].t_us < e.log.e[fb].t_us + 1000 && e.log.e[fb].t_us < e.log.e[fa].t_us + 1000);
    /* each side acknowledges the other's FIN */
    {
        size_t i;
        bool a_ok = false, b_ok = false;
        for (i = mark; i < e.log.n; i++) {
            const struct tsl_logent *le = &e.log.e[i];
            if (le->from == e.a && (le->seg.flags & TSL_ACK) && le->seg.ack == sfb->seq + sfb->plen + 1u) {
                a_ok = true;
            }
            if (le->from == e.b && (le->seg.flags & TSL_ACK) && le->seg.ack == sfa->seq + sfa->plen + 1u) {
                b_ok = true;
            }
        }
        if (!a_ok || !b_ok) {
            tsl_log_print(&e.log, mark, stdout);
        }
        assert_true(a_ok && b_ok);
    }
    assert_int_equal(count_seg(&e.log, 0, NULL, TSL_RST), 0);
    env_down(&e, 2ull * WISP_TCP_MSL_MS * MS + 60 * SEC);
}

/* --------------------------------------------------------------- resets */

/* A SYN to a port nobody listens on is answered with RST,ACK (RFC 9293
 * §3.10.7.1) and the connecting side gets WISP_ERR_RST at once. */
static void connect_to_closed_port_is_reset(void **state)
{
    struct env e;
    struct tsl_conn *c;
    struct tsl_cfg cfg = xcfg(0, 0, TSL_CLOSE_NONE, 55);
    long syn, rst;
    uint64_t t0;
    (void)state;
    env_up(&e, 55, false, false, false);
    c = tsl_conn_new(&e.run, &cfg);
    assert_non_null(c);
    c->ep[0].expect_err = true;
    t0 = sim_now_us(e.w);
    assert_int_equal(tsl_ep_open(c, 0, e.a, 0, sim_ip(e.b), 7777), WISP_OK);
    assert_true(sim_run_until(e.w, err_called, &c->ep[0], 5 * SEC));
    assert_int_equal(c->ep[0].err, WISP_ERR_RST);
    assert_false(c->ep[0].connected);
    assert_true(c->ep[0].err_us - t0 < 100 * MS);
    syn = find_seg(&e.log, 0, e.a, TSL_SYN, TSL_ACK);
    rst = find_seg(&e.log, 0, e.b, TSL_RST | TSL_ACK, 0);
    assert_true(syn >= 0 && rst > syn);
    assert_int_equal(e.log.e[rst].seg.ack, e.log.e[syn].seg.seq + 1u);
    assert_int_equal(e.log.e[rst].seg.seq, 0);
    env_down(&e, 10 * SEC);
}

/* wisp_tcp_abort sends RST (RFC 9293 §3.10.5 ABORT) and reports
 * WISP_ERR_ABRT locally; the peer reports WISP_ERR_RST. Idle, and in the
 * middle of a transfer (aborted by the receiving side). */
static void abort_sends_rst_peer_sees_rst(void **state)
{
    struct env e;
    struct tsl_conn *c, *d;
    struct tsl_cfg cfg = xcfg(64 * KB, 64 * KB, TSL_CLOSE_NONE, 56);
    struct tsl_cfg big = xcfg(8u * 1024u * KB, 0, TSL_CLOSE_NONE, 57);
    size_t mark;
    (void)state;
    env_up(&e, 56, false, false, true);
    c = tsl_connect(&e.run, e.a, &cfg);
    assert_non_null(c);
    run_done(&e, 10 * SEC);
    mark = e.log.n;
    c->ep[1].expect_err = true;
    tsl_ep_abort(&c->ep[0]);
    assert_true(c->ep[0].err_called);
    assert_int_equal(c->ep[0].err, WISP_ERR_ABRT);
    assert_true(sim_run_until(e.w, err_called, &c->ep[1], 1 * SEC));
    assert_int_equal(c->ep[1].err, WISP_ERR_RST);
    assert_true(find_seg(&e.log, mark, e.a, TSL_RST, 0) >= 0);

    /* mid-transfer, aborted by the receiver */
    d = tsl_connect(&e.run, e.a, &big);
    assert_non_null(d);
    assert_true(sim_run_for(e.w, 100 * MS));
    assert_true(d->ep[1].rx_got > 0 && d->ep[1].rx_got < big.a2b.bytes);
    mark = e.log.n;
    d->ep[0].expect_err = true;
    tsl_ep_abort(&d->ep[1]);
    assert_int_equal(d->ep[1].err, WISP_ERR_ABRT);
    assert_true(sim_run_until(e.w, err_called, &d->ep[0], 1 * SEC));
    assert_int_equal(d->ep[0].err, WISP_ERR_RST);
    assert_true(find_seg(&e.log, mark, e.b, TSL_RST, 0) >= 0);
    env_down(&e, 200 * SEC);
}

/* An established, idle connection a<->b: returns b's RCV.NXT as seen in
 * its last segment. */
static uint32_t idle_conn(struct env *e, struct tsl_conn **cp, uint64_t seed)
{
    struct tsl_cfg cfg = xcfg(16 * KB, 16 * KB, TSL_CLOSE_NONE, seed);
    struct tsl_conn *c = tsl_connect(&e->run, e->a, &cfg);
    long i;
    assert_non_null(c);
    run_done(e, 10 * SEC);
    assert_true(sim_run_for(e->w, 500 * MS));
    i = (long)e->log.n - 1;
    while (i >= 0 && e->log.e[i].from != e->b) {
        i--;
    }
    assert_true(i >= 0);
    *cp = c;
    return e->log.e[i].seg.ack;
}

/* A RST "from a" crafted by c, to b. */
static void inject_rst(struct env *e, const struct tsl_conn *c, uint32_t seq)
{
    struct tsl_seg s;
    uint8_t frame[64];
    size_t len;
    memset(&s, 0, sizeof(s));
    memcpy(s.smac, sim_mac(e->c), 6);
    memcpy(s.dmac, sim_mac(e->b), 6);
    s.src = sim_ip(e->a);
    s.dst = sim_ip(e->b);
    s.sport = c->a_port;
    s.dport = 5001;
    s.seq = seq;
    s.flags = TSL_RST;
    len = tsl_build(frame, sizeof(frame), &s, NULL, 0, NULL, 0);
    assert_true(tsl_inject(e->c, frame, len));
}

/* RFC 5961 §3.2: a RST whose sequence number is in the window but not
 * exactly RCV.NXT gets a challenge ACK (<SEQ=SND.NXT><ACK=RCV.NXT>) and the
 * connection survives (and then transfers byte-exact); a RST outside the
 * window is dropped silently. */
static void blind_in_window_rst_gets_challenge_ack(void **state)
{
    struct env e;
    struct tsl_conn *c;
    struct wisp_tcp_info in;
    uint32_t rcv_nxt, off;
    size_t mark;
    long i;
    (void)state;
    env_up(&e, 58, true, false, true);
    rcv_nxt = idle_conn(&e, &c, 58);
    wisp_tcp_get_info(c->ep[1].pcb, &in);
    assert_true(in.rcv_wnd > 2);
    off = in.rcv_wnd / 2u;
    if (off > 1000u) {
        off = 1000u;
    }
    mark = e.log.n;
    inject_rst(&e, c, rcv_nxt + off);
    assert_true(sim_run_for(e.w, 100 * MS));
    i = find_seg(&e.log, mark, e.b, TSL_ACK, TSL_RST);
    if (i < 0) {
        tsl_log_print(&e.log, mark, stdout);
    }
    assert_true(i >= 0);
    assert_int_equal(e.log.e[i].seg.ack, rcv_nxt);
    assert_false(c->ep[1].err_called);
    assert_int_equal(wisp_tcp_state(c->ep[1].pcb), WISP_TCP_ESTABLISHED);

    /* out of window: nothing */
    mark = e.log.n;
    inject_rst(&e, c, rcv_nxt + in.rcv_wnd + 100000u);
    inject_rst(&e, c, rcv_nxt - 100000u);
    assert_true(sim_run_for(e.w, 100 * MS));
    assert_int_equal(find_seg(&e.log, mark, e.b, 0, 0), -1);
    assert_false(c->ep[1].err_called);

    /* still works */
    tsl_conn_more(c, 256 * KB, 256 * KB);
    run_done(&e, 30 * SEC);
    assert_true(tsl_ep_close(&c->ep[0]) == WISP_OK && tsl_ep_close(&c->ep[1]) == WISP_OK);
    env_down(&e, 2ull * WISP_TCP_MSL_MS * MS + 60 * SEC);
}

/* RFC 5961 §3.2 / RFC 9293 §3.10.7.4: a RST with exactly RCV.NXT resets
 * the connection: WISP_ERR_RST. */
static void exact_sequence_rst_resets(void **state)
{
    struct env e;
    struct tsl_conn *c;
    uint32_t rcv_nxt;
    (void)state;
    env_up(&e, 59, true, false, true);
    rcv_nxt = idle_conn(&e, &c, 59);
    c->ep[1].expect_err = true;
    inject_rst(&e, c, rcv_nxt);
    assert_true(sim_run_until(e.w, err_called, &c->ep[1], 1 * SEC));
    assert_int_equal(c->ep[1].err, WISP_ERR_RST);
    tsl_ep_abort(&c->ep[0]);
    env_down(&e, 10 * SEC);
}

/* ------------------------------------------------------------ SYN flood */

struct flood_tap {
    struct sim_node *b;
    unsigned synacks;          /* b -> spoofed addresses */
};

static void flood_tap_fn(void *arg, struct sim_node *from, const uint8_t *frame, size_t len, uint64_t t_us)
{
    struct flood_tap *ft = arg;
    struct tsl_seg s;
    (void)t_us;
    if (from == ft->b && tsl_parse(frame, len, &s) && (s.flags & (TSL_SYN | TSL_ACK)) == (TSL_SYN | TSL_ACK) &&
        wisp_ip4_octet(s.dst, 2) != 0) {
        ft->synacks++;
    }
}

/* A third node floods b's listener with SYNs from random sources in
 * 198.18.0.0/15 (outside the /24, routed via c) and random ports: the two
 * established connections keep transferring byte-exact, a legitimate new
 * connection opened in the middle of the flood is accepted (SYN cookies,
 * RFC 4987 §3.6, once the SYN queue is full), no spoofed connection is
 * ever accepted, and the pools return to baseline. */
static void syn_flood_listener_keeps_serving(void **state)
{
    struct env e;
    struct tsl_conn *c1, *c2, *c3 = NULL;
    struct tsl_cfg big1 = xcfg(4u * 1024u * KB, 4u * 1024u * KB, TSL_CLOSE_AUTO, 61);
    struct tsl_cfg big2 = xcfg(4u * 1024u * KB, 4u * 1024u * KB, TSL_CLOSE_AUTO, 62);
    struct tsl_cfg legit = xcfg(256 * KB, 256 * KB, TSL_CLOSE_AUTO, 63);
    struct flood_tap ft;
    struct sim_rng rng;
    unsigned step, k, sent = 0;
    uint64_t flood_end, t3 = 0;
    (void)state;
    env_up(&e, 60, true, true, true);
    sim_set_tap(e.w, NULL, NULL);
    memset(&ft, 0, sizeof(ft));
    ft.b = e.b;
    sim_set_tap(e.w, flood_tap_fn, &ft);
    sim_set_max_events(e.w, 100000000ull);
    sim_rng_seed(&rng, 60);
    big1.watchdog_ms = big2.watchdog_ms = legit.watchdog_ms = 60000;
    c1 = tsl_connect(&e.run, e.a, &big1);
    c2 = tsl_connect(&e.run, e.a, &big2);
    assert_non_null(c1);
    assert_non_null(c2);
    assert_true(sim_run_for(e.w, 20 * MS));
    assert_true(c1->ep[1].connected && c2->ep[1].connected);
    e.run.stop_on_fail = false;
    for (step = 0; step < 2000; step++) {
        for (k = 0; k < 5; k++) {
            struct tsl_seg s;
            uint8_t frame[96], opts[20];
            wisp_ip4_t src;
            size_t len;
            do {
                uint32_t host = 0xC6120000u + (uint32_t)sim_rng_below(&rng, 0x20000u); /* 198.18.0.0/15 */
                uint8_t o[4];
                wisp_wr32(o, host);
                memcpy(&src, o, 4);
            } while (wisp_ip4_octet(src, 1) == 18 && wisp_ip4_octet(src, 2) == 0);
            memset(&s, 0, sizeof(s));
            memcpy(s.smac, sim_mac(e.c), 6);
            memcpy(s.dmac, sim_mac(e.b), 6);
            s.src = src;
            s.dst = sim_ip(e.b);
            s.sport = (uint16_t)(1024u + sim_rng_below(&rng, 64512u));
            s.dport = 5001;
            s.seq = (uint32_t)sim_rng_next(&rng);
            s.flags = TSL_SYN;
            s.wnd = 64240;
            /* MSS 1460, SACK permitted, timestamps, NOP, window scale 7 (like Linux) */
            opts[0] = 2; opts[1] = 4; wisp_wr16(opts + 2, 1460);
            opts[4] = 4; opts[5] = 2;
            opts[6] = 8; opts[7] = 10; wisp_wr32(opts + 8, (uint32_t)sim_rng_next(&rng)); wisp_wr32(opts + 12, 0);
            opts[16] = 1; opts[17] = 3; opts[18] = 3; opts[19] = 7;
            len = tsl_build(frame, sizeof(frame), &s, opts, 20, NULL, 0);
            if (tsl_inject(e.c, frame, len)) {
                sent++;
            }
        }
        /* Without SYN cookies (WISP_TCP_SYNCOOKIES 0) the flood keeps the
         * backlog full and a legitimate SYN is dropped too -- what that
         * option set gives up -- so no legitimate connection is tried. */
        if (step == 1000 && WISP_TCP_SYNCOOKIES) {
            t3 = sim_now_us(e.w);
            c3 = tsl_connect(&e.run, e.a, &legit);
            assert_non_null(c3);
        }
        assert_true(sim_run_for(e.w, 1 * MS));
        (void)tsl_all_done(&e.run); /* watchdog */
        if (e.run.nfailed > 0) {
            break;
        }
    }
    flood_end = sim_now_us(e.w);
    printf("  flood: %u SYNs injected, %u SYN-ACKs to spoofed sources during the flood; legit connection %s at "
           "%.3f s (flood %.3f..%.3f s)\n",
           sent, ft.synacks, c3 != NULL && c3->ep[1].connected ? "accepted" : "NOT accepted",
           c3 != NULL ? (double)c3->ep[1].est_us / 1e6 : 0.0, (double)(flood_end - 2 * SEC) / 1e6,
           (double)flood_end / 1e6);
    assert_int_equal(e.run.nfailed, 0);
    assert_true(sent >= 9000);
#if WISP_TCP_SYNCOOKIES
    assert_non_null(c3);
    assert_true(c3->ep[1].connected);
    assert_true(c3->ep[1].est_us < flood_end);
    assert_true(c3->ep[0].est_us - t3 < 4 * SEC); /* at most a couple of SYN retransmissions */
#else
    (void)t3;
#endif
    if (!tsl_run_until_done(&e.run, 600 * SEC)) {
        tsl_run_print_failures(&e.run, stderr);
        fail_msg("transfers failed after the flood");
    }
    assert_int_equal(e.run.accepted, WISP_TCP_SYNCOOKIES ? 3 : 2);
    assert_int_equal(e.run.unexpected, 0);
    sim_set_tap(e.w, NULL, NULL);
    env_down(&e, 2ull * WISP_TCP_MSL_MS * MS + 300 * SEC);
}

/* ------------------------------------------------ a lost SYN-ACK */
#if WISP_TCP_TIMESTAMPS

/* Frames entering the wire while dark are lost; the link is otherwise
 * clean (env_up's). */
static void set_dark(struct env *e, bool dark)
{
    struct sim_link_cfg l;
    sim_get_link(e->w, &l);
    l.loss = dark ? 1.0 : 0.0;
    sim_set_link(e->w, &l);
}

/* Connect a -> b:5001 and lose b's first SYN-ACK: the link goes dark
 * 0.5 ms after the SYN left until 1.5 ms (the SYN-ACK leaves ~1 ms after
 * it). Returns the connection; the log holds SYN 1 and SYN-ACK 1. */
static struct tsl_conn *connect_losing_synack(struct env *e, const struct tsl_cfg *cfg)
{
    struct tsl_conn *c = tsl_connect(&e->run, e->a, cfg);
    assert_non_null(c);
    assert_true(sim_run_for(e->w, 500));
    set_dark(e, true);
    assert_true(sim_run_for(e->w, 1000));
    set_dark(e, false);
    assert_true(find_seg(&e->log, 0, e->b, TSL_SYN | TSL_ACK, 0) >= 0);
    return c;
}

/* b's first SYN-ACK is lost; a resends its SYN after its 1 s timeout. The
 * SYN-ACK that answers it echoes the TSval of that second SYN (RFC 7323
 * §4.1), not the first one's: a peer's RTT sample from it is the wire's
 * (~2 ms), not the 1 s it waited, which would hold its RTO near 3 s for
 * dozens of samples and stretch every loss recovery after it. */
static void lost_synack_resent_echoes_the_latest_syn(void **state)
{
    struct env e;
    struct tsl_cfg cfg = xcfg(4 * KB, 0, TSL_CLOSE_NONE, 61);
    struct tsl_conn *c;
    long syn1, syn2, sa2, ack;
    (void)state;
    env_up(&e, 61, false, false, true);
    c = connect_losing_synack(&e, &cfg);
    run_done(&e, 30 * SEC);
    syn1 = find_seg(&e.log, 0, e.a, TSL_SYN, TSL_ACK);
    syn2 = find_seg(&e.log, (size_t)syn1 + 1u, e.a, TSL_SYN, TSL_ACK);
    assert_true(syn1 >= 0 && syn2 > syn1);
    assert_true(e.log.e[syn2].seg.ts && e.log.e[syn2].seg.tsval != e.log.e[syn1].seg.tsval);
    /* the SYN-ACK that answers SYN 2: b's last before a's handshake ACK
     * (b's own timer may resend SYN-ACK 1, echoing SYN 1, just before) */
    ack = find_seg(&e.log, (size_t)syn2 + 1u, e.a, TSL_ACK, TSL_SYN);
    assert_true(ack > syn2);
    for (sa2 = ack - 1; sa2 > syn2 && !(e.log.e[sa2].from == e.b && (e.log.e[sa2].seg.flags & TSL_SYN)); sa2--) {
    }
    assert_true(sa2 > syn2);
    assert_int_equal(e.log.e[sa2].seg.tsecr, e.log.e[syn2].seg.tsval);
    printf("  SYN-ACK 2 echoes SYN 2's TSval %u (SYN 1's: %u); a's srtt %u ms\n", (unsigned)e.log.e[sa2].seg.tsecr,
           (unsigned)e.log.e[syn1].seg.tsval, (unsigned)srtt_ms(&c->ep[0]));
    assert_true(srtt_ms(&c->ep[0]) < 100u);
    tsl_ep_close(&c->ep[0]);
    tsl_ep_close(&c->ep[1]);
    env_down(&e, 2ull * WISP_TCP_MSL_MS * MS + 60 * SEC);
}

/* The same loss, but the SYN-ACK a receives after its second SYN echoes
 * the FIRST SYN's TSval (a peer that keeps TS.Recent from the first SYN,
 * as RFC 7323 §4.3's rule reads for a repeated SYN): a crafted SYN-ACK
 * (b's ISS and options from its lost SYN-ACK) is injected while b's own
 * second SYN-ACK is lost. a must not take the 1 s echo as an RTT sample;
 * the handshake completes with b and the data moves. */
static void synack_echoing_the_first_syn_gives_no_rtt_sample(void **state)
{
    struct env e;
    struct tsl_cfg cfg = xcfg(4 * KB, 0, TSL_CLOSE_NONE, 62);
    struct tsl_conn *c;
    struct wait_log wl;
    struct tsl_seg s;
    uint8_t opt[20], frame[128];
    long syn1, sa1;
    size_t len;
    (void)state;
    env_up(&e, 62, false, false, true);
    c = connect_losing_synack(&e, &cfg);
    syn1 = find_seg(&e.log, 0, e.a, TSL_SYN, TSL_ACK);
    sa1 = find_seg(&e.log, 0, e.b, TSL_SYN | TSL_ACK, 0);
    assert_true(syn1 >= 0 && sa1 > syn1 && e.log.e[sa1].seg.ts);
    /* a's second SYN, then b's answer lost too */
    wl.log = &e.log;
    wl.from = (size_t)sa1 + 1u;
    wl.n = e.a;
    wl.count = 1;
    assert_true(sim_run_until(e.w, log_has, &wl, 5 * SEC));
    assert_true(find_seg(&e.log, wl.from, e.a, TSL_SYN, TSL_ACK) >= 0);
    set_dark(&e, true);
    assert_true(sim_run_for(e.w, 2000));
    set_dark(&e, false);
    /* SYN-ACK 1 again, echoing SYN 1: MSS, SACK permitted, timestamps,
     * NOP, window scale (NOPs for the options b did not offer) */
    s = e.log.e[sa1].seg;
    memset(opt, 1, sizeof(opt));
    opt[0] = 2, opt[1] = 4, opt[2] = (uint8_t)(s.mss >> 8), opt[3] = (uint8_t)s.mss;
    if (s.sack_perm) {
        opt[4] = 4, opt[5] = 2;
    }
    opt[6] = 8, opt[7] = 10;
    wisp_wr32(opt + 8, s.tsval);
    wisp_wr32(opt + 12, e.log.e[syn1].seg.tsval);
    if (s.wscale >= 0) {
        opt[17] = 3, opt[18] = 3, opt[19] = (uint8_t)s.wscale;
    }
    len = tsl_build(frame, sizeof(frame), &s, opt, sizeof(opt), NULL, 0);
    assert_true(len > 0 && tsl_inject(e.b, frame, len));
    run_done(&e, 30 * SEC);
    printf("  injected SYN-ACK echoing SYN 1 (%u); a's srtt %u ms\n", (unsigned)e.log.e[syn1].seg.tsval,
           (unsigned)srtt_ms(&c->ep[0]));
    assert_true(srtt_ms(&c->ep[0]) < 100u);
    assert_int_equal(count_seg(&e.log, 0, NULL, TSL_RST), 0);
    tsl_ep_close(&c->ep[0]);
    tsl_ep_close(&c->ep[1]);
    env_down(&e, 2ull * WISP_TCP_MSL_MS * MS + 60 * SEC);
}
#else
/* Both cases are about the timestamp echo (WISP_TCP_TIMESTAMPS 0 here). */
static void lost_synack_resent_echoes_the_latest_syn(void **state)
{
    (void)state;
    skip();
}

static void synack_echoing_the_first_syn_gives_no_rtt_sample(void **state)
{
    (void)state;
    skip();
}
#endif

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(keepalive_probes_on_time_and_detects_dead_peer),
        cmocka_unit_test(time_wait_reacks_fin_and_ends_after_2msl),
        cmocka_unit_test(simultaneous_open),
        cmocka_unit_test(simultaneous_open_times_the_data),
        cmocka_unit_test(simultaneous_close),
        cmocka_unit_test(connect_to_closed_port_is_reset),
        cmocka_unit_test(abort_sends_rst_peer_sees_rst),
        cmocka_unit_test(blind_in_window_rst_gets_challenge_ack),
        cmocka_unit_test(exact_sequence_rst_resets),
        cmocka_unit_test(syn_flood_listener_keeps_serving),
        cmocka_unit_test(lost_synack_resent_echoes_the_latest_syn),
        cmocka_unit_test(synack_echoing_the_first_syn_gives_no_rtt_sample),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
