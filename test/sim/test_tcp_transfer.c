/**
 * @file test_tcp_transfer.c
 * Simulator tests of TCP bulk transfers through the raw API (harness:
 * tcp_simlib): byte-exact transfers both ways at once on a clean wire and
 * at 20 % loss, copy / zero-copy / random-size writes, a long fat path that
 * needs window scaling, a zero window that must be probed and reopened,
 * small-write goodput on a slow wire, and 200 connections at once. Every
 * test ends with the pools back at baseline and sim_world_free() == 0.
 */
#include "simtest.h"
#include "tcp_simlib.h"

#define MB (1024u * 1024u)
#define KB 1024u
#define SEC 1000000ull

static void wire(struct sim_link_cfg *l, uint64_t bps, uint32_t latency_us, double loss)
{
    sim_link_defaults(l);
    l->bandwidth_bps = bps;
    l->latency_us = latency_us;
    l->loss = loss;
}

static void dir(struct tsl_dir_cfg *d, uint64_t bytes, uint32_t wsize, bool wrandom, bool nocopy)
{
    memset(d, 0, sizeof(*d));
    d->bytes = bytes;
    d->wsize = wsize;
    d->wrandom = wrandom;
    d->nocopy = nocopy;
}

static void print_result(const char *what, uint64_t seed, const struct tsl_result *r)
{
    printf("  %s seed %llu: %s%s A->B %.2f Mbit/s B->A %.2f Mbit/s, done at %.3f s, %llu events, "
           "rtx A %lu B %lu, RTO A %lu B %lu, fast rec A %lu B %lu, write MEM A %lu B %lu\n",
           what, (unsigned long long)seed, r->ok && r->settled && !r->leaked ? "ok" : "FAILED: ", r->why,
           r->mbps[0], r->mbps[1], (double)r->end_us / 1e6, (unsigned long long)r->events,
           (unsigned long)r->info[0].retransmits, (unsigned long)r->info[1].retransmits,
           (unsigned long)r->info[0].timeouts, (unsigned long)r->info[1].timeouts,
           (unsigned long)r->info[0].fast_recoveries, (unsigned long)r->info[1].fast_recoveries, r->write_mem[0],
           r->write_mem[1]);
}

/* ---------------------------------------------------- the harness */

/* The stream generator is position-addressable (any split of the stream
 * gives the same bytes) and its checker finds a single flipped bit: the
 * receivers' verification can fail. */
static void stream_generator_is_consistent_and_checked(void **state)
{
    static uint8_t whole[10000], part[10000];
    uint32_t off;
    (void)state;
    tsl_stream_fill(77, 3, whole, sizeof(whole));
    for (off = 0; off < 64; off += 7) {
        tsl_stream_fill(77, 3 + off, part, 999);
        assert_memory_equal(part, whole + off, 999);
    }
    assert_int_equal(tsl_stream_check(77, 3, whole, sizeof(whole)), sizeof(whole));
    whole[4321] ^= 0x10;
    assert_int_equal(tsl_stream_check(77, 3, whole, sizeof(whole)), 4321);
    tsl_stream_fill(78, 3, part, sizeof(part)); /* another seed, another stream */
    assert_true(tsl_stream_check(77, 3, part, sizeof(part)) < 8);
}

/* ------------------------------------------------------ clean wire */

/* 4 MB each way at once over a clean 100 Mbit/s, 1 ms wire: byte-exact,
 * closed by both, no retransmission timeout. */
static void clean_wire_4mb_each_way_byte_exact(void **state)
{
    struct sim_link_cfg l;
    struct tsl_cfg cfg;
    struct tsl_result r;
    (void)state;
    wire(&l, 100000000u, 1000, 0.0);
    memset(&cfg, 0, sizeof(cfg));
    dir(&cfg.a2b, 4 * MB, 1460, false, false);
    dir(&cfg.b2a, 4 * MB, 1460, false, false);
    cfg.seed = 1;
    assert_true(tsl_xfer(1, &l, &cfg, 600 * SEC, NULL, false, &r));
    print_result("clean 4MB<->4MB", 1, &r);
    assert_int_equal(r.info[0].timeouts, 0);
    assert_int_equal(r.info[1].timeouts, 0);
    assert_true(r.mbps[0] > 1.0 && r.mbps[1] > 1.0);
}

/* Copy and zero-copy writes of fixed and random sizes, with and without
 * WISP_TCP_WRITE_MORE, 1 % loss: every mix byte-exact. */
static void write_modes_byte_exact(void **state)
{
    static const struct {
        uint32_t wsize;
        bool wrandom, nocopy, more;
    } m[] = {
        { 1000, false, true, false },  { 4000, true, false, false }, { 3000, true, true, false },
        { 1, false, false, false },    { 7, false, true, true },     { 65000, false, false, false },
        { 200, true, false, true },    { 65535, true, true, false },
    };
    unsigned i;
    (void)state;
    for (i = 0; i < sizeof(m) / sizeof(m[0]); i++) {
        struct sim_link_cfg l;
        struct tsl_cfg cfg;
        struct tsl_result r;
        uint64_t bytes = m[i].wsize == 1 ? 64 * KB : 1 * MB;
        wire(&l, 100000000u, 1000, 0.01);
        memset(&cfg, 0, sizeof(cfg));
        dir(&cfg.a2b, bytes, m[i].wsize, m[i].wrandom, m[i].nocopy);
        dir(&cfg.b2a, bytes / 2, m[i].wsize, m[i].wrandom, !m[i].nocopy);
        cfg.a2b.more = cfg.b2a.more = m[i].more;
        cfg.seed = 100 + i;
        if (!tsl_xfer(100 + i, &l, &cfg, 600 * SEC, NULL, false, &r)) {
            print_result("write mode", 100 + i, &r);
            fail_msg("write mode %u (wsize %u random %d nocopy %d more %d) failed: %s", i, (unsigned)m[i].wsize,
                     (int)m[i].wrandom, (int)m[i].nocopy, (int)m[i].more, r.why);
        }
    }
}

/* Half-open style: data one way only, plain close by the sender, both
 * directions in turn. */
static void one_way_transfer_and_plain_close(void **state)
{
    struct sim_link_cfg l;
    struct tsl_cfg cfg;
    struct tsl_result r;
    (void)state;
    wire(&l, 100000000u, 1000, 0.02);
    memset(&cfg, 0, sizeof(cfg));
    dir(&cfg.a2b, 2 * MB, 1460, false, false);
    cfg.seed = 7;
    assert_true(tsl_xfer(7, &l, &cfg, 600 * SEC, NULL, false, &r));
    memset(&cfg, 0, sizeof(cfg));
    dir(&cfg.b2a, 2 * MB, 1460, false, false);
    cfg.seed = 8;
    assert_true(tsl_xfer(8, &l, &cfg, 600 * SEC, NULL, false, &r));
}

/* ------------------------------------------------------- heavy loss */

/* 20 % loss (each way, data and ACKs): 256 KB each way still completes
 * byte-exact, for several seeds. */
static void loss_20pct_256kb_each_way_completes(void **state)
{
    uint64_t seed;
    unsigned bad = 0;
    (void)state;
    for (seed = 1; seed <= 5; seed++) {
        struct sim_link_cfg l;
        struct tsl_cfg cfg;
        struct tsl_result r;
        wire(&l, 100000000u, 1000, 0.20);
        memset(&cfg, 0, sizeof(cfg));
        dir(&cfg.a2b, 256 * KB, 1460, false, false);
        dir(&cfg.b2a, 256 * KB, 1460, false, false);
        cfg.seed = seed;
        cfg.watchdog_ms = 900000; /* backed-off RTOs of up to 60 s; the stack gives up by itself first */
        if (!tsl_xfer(2000 + seed, &l, &cfg, 7200 * SEC, NULL, false, &r)) {
            bad++;
        }
        print_result("20% loss 256KB<->256KB", 2000 + seed, &r);
    }
    assert_int_equal(bad, 0);
}

/* ------------------------------------------------------ long fat path */

#if WISP_TCP_WND_SCALE
/* 100 Mbit/s with 20 ms RTT: the bandwidth-delay product (250 KB) exceeds
 * 64 KB, so without window scaling goodput is capped at 64 KB per RTT
 * (26 Mbit/s). Window scaling must be negotiated both ways and goodput
 * must be well above that cap. */
static void long_fat_path_window_scaling(void **state)
{
    struct sim_link_cfg l;
    struct tsl_cfg cfg;
    struct tsl_result r;
    double cap = 65535.0 * 8.0 / 0.020 / 1e6;
    (void)state;
    wire(&l, 100000000u, 10000, 0.0);
    memset(&cfg, 0, sizeof(cfg));
    dir(&cfg.a2b, 16 * MB, 1460, false, false);
    cfg.seed = 11;
    assert_true(tsl_xfer(11, &l, &cfg, 600 * SEC, NULL, false, &r));
    print_result("long fat path 16MB", 11, &r);
    printf("  64 KB/RTT cap = %.1f Mbit/s; A snd_wscale %u rcv_wscale %u, B snd_wscale %u rcv_wscale %u, "
           "A cwnd %lu snd_wnd %lu\n",
           cap, (unsigned)r.info[0].snd_wscale, (unsigned)r.info[0].rcv_wscale, (unsigned)r.info[1].snd_wscale,
           (unsigned)r.info[1].rcv_wscale, (unsigned long)r.info[0].cwnd, (unsigned long)r.info[0].snd_wnd);
    assert_true(r.info[0].snd_wscale > 0);
    assert_true(r.info[0].rcv_wscale > 0);
    assert_true(r.info[1].snd_wscale > 0);
    assert_true(r.info[1].rcv_wscale > 0);
    assert_true(r.mbps[0] > 2.0 * cap);
}
#endif

/* ------------------------------------------------------- zero window */

static bool a_window_closed(void *arg)
{
    struct tsl_conn *c = arg;
    struct wisp_tcp_info in;
    if (c->ep[0].pcb == NULL || c->ep[1].rx_got == 0) {
        return false;
    }
    wisp_tcp_get_info(c->ep[0].pcb, &in);
    return in.snd_wnd == 0;
}

/* The receiver takes data but stops reopening the window (no
 * wisp_tcp_recved) for 6 s; the sender must probe the zero window
 * (persist timer, RFC 9293 §3.8.6.1) and resume when it reopens. */
static void zero_window_is_probed_and_recovers(void **state)
{
    struct sim_world *w = sim_world_new(21);
    struct sim_node *a, *b;
    struct tsl_run run;
    struct tsl_conn *c;
    struct tsl_cfg cfg;
    struct tsl_log log;
    struct sim_link_cfg l;
    unsigned base[2], probes = 0, zero_acks = 0;
    uint64_t t_closed, t_release;
    size_t i, mark;
    (void)state;
    memset(&log, 0, sizeof(log));
    log.payload_too = true;
    wire(&l, 100000000u, 1000, 0.0);
    sim_set_link(w, &l);
    a = st_node(w, "a", 1);
    b = st_node(w, "b", 2);
    tsl_init(&run, w);
    assert_int_equal(tsl_listen(&run, b, 5001, 4), WISP_OK);
    assert_true(sim_run_for(w, 1000));
    tsl_baseline(w, base);
    memset(&cfg, 0, sizeof(cfg));
    dir(&cfg.a2b, 1 * MB, 1460, false, false);
    cfg.seed = 21;
    c = tsl_connect(&run, a, &cfg);
    assert_non_null(c);
    c->ep[1].hold = true; /* set before the accept: B never reopens */
    assert_true(sim_run_until(w, a_window_closed, c, 10 * SEC));
    t_closed = sim_now_us(w);
    printf("  window closed at %.3f s after %llu bytes\n", (double)t_closed / 1e6,
           (unsigned long long)c->ep[1].rx_got);
    assert_true(c->ep[1].rx_got > 0 && c->ep[1].rx_got < 1 * MB);
    sim_set_tap(w, tsl_log_tap, &log);
    mark = log.n;
    assert_true(sim_run_for(w, 6 * SEC));
    t_release = sim_now_us(w);
    /* during the stall only probes go A->B, each answered with a zero window */
    for (i = mark; i < log.n; i++) {
        const struct tsl_logent *e = &log.e[i];
        if (e->from == a) {
            probes++;
        } else if (e->from == b && e->seg.wnd == 0) {
            zero_acks++;
        }
    }
    printf("  %u probes, %u zero-window answers in 6 s\n", probes, zero_acks);
    if (probes < 2 || zero_acks < 2) {
        tsl_log_print(&log, mark, stdout);
    }
    assert_true(probes >= 2);
    assert_true(probes <= 40); /* backed off, not a flood */
    assert_true(zero_acks >= 2);
    assert_false(c->failed);
    tsl_ep_release(&c->ep[1]);
    sim_set_tap(w, NULL, NULL);
    if (!tsl_run_until_done(&run, 60 * SEC)) {
        tsl_run_print_failures(&run, stderr);
        fail_msg("transfer did not complete after the window reopened");
    }
    printf("  done %.3f s after the release\n", (double)(c->done_us - t_release) / 1e6);
    assert_true(c->done_us - t_release < 10 * SEC);
    assert_true(tsl_settle(w, base, 200 * SEC, stderr));
    tsl_fini(&run);
    tsl_log_free(&log);
    ST_FREE(w);
}

/* The receive callback refuses data (returns an error) for 3 s: the stack
 * keeps it, offers it again, and the transfer completes byte-exact. */
static void refused_data_is_offered_again(void **state)
{
    struct sim_world *w = sim_world_new(22);
    struct sim_node *a, *b;
    struct tsl_run run;
    struct tsl_conn *c;
    struct tsl_cfg cfg;
    struct sim_link_cfg l;
    unsigned base[2];
    (void)state;
    wire(&l, 100000000u, 1000, 0.0);
    sim_set_link(w, &l);
    a = st_node(w, "a", 1);
    b = st_node(w, "b", 2);
    tsl_init(&run, w);
    assert_int_equal(tsl_listen(&run, b, 5001, 4), WISP_OK);
    assert_true(sim_run_for(w, 1000));
    tsl_baseline(w, base);
    memset(&cfg, 0, sizeof(cfg));
    dir(&cfg.a2b, 512 * KB, 1460, false, false);
    cfg.seed = 22;
    c = tsl_connect(&run, a, &cfg);
    assert_non_null(c);
    c->ep[1].refuse = true;
    assert_true(sim_run_for(w, 3 * SEC));
    printf("  refused %lu times, %llu bytes taken\n", c->ep[1].refused, (unsigned long long)c->ep[1].rx_got);
    assert_true(c->ep[1].refused >= 1);
    assert_int_equal(c->ep[1].rx_got, 0);
    c->ep[1].refuse = false;
    if (!tsl_run_until_done(&run, 60 * SEC)) {
        tsl_run_print_failures(&run, stderr);
        fail_msg("transfer did not complete after the receiver took data again");
    }
    assert_true(tsl_settle(w, base, 200 * SEC, stderr));
    tsl_fini(&run);
    ST_FREE(w);
}

/* ------------------------------------------------------- small writes */

/* On a 10 Mbit/s, 1 ms wire, writes of 64 bytes must reach at least half
 * the goodput of 1460-byte writes (the stack coalesces small writes into
 * full segments). */
static void small_writes_goodput(void **state)
{
    static const uint32_t sizes[] = { 64, 128, 256, 512, 1024, 1460, 1460 };
    double g[7];
    unsigned i;
    (void)state;
    for (i = 0; i < 7; i++) {
        struct sim_link_cfg l;
        struct tsl_cfg cfg;
        struct tsl_result r;
        wire(&l, 10000000u, 1000, 0.0);
        memset(&cfg, 0, sizeof(cfg));
        dir(&cfg.a2b, 1 * MB, sizes[i], i == 6, false);
        cfg.seed = 31;
        assert_true(tsl_xfer(31, &l, &cfg, 600 * SEC, NULL, false, &r));
        g[i] = r.mbps[0];
        printf("  writes of %s%u bytes: %.3f Mbit/s\n", i == 6 ? "1.." : "", (unsigned)sizes[i], g[i]);
    }
    assert_true(g[5] > 5.0);
    assert_true(g[0] >= 0.5 * g[5]);
}

/* -------------------------------------------------- many connections */

/* 200 connections at once between two nodes, 64 KB each way on each,
 * all byte-exact, all established within 2 s and done within 5 s of
 * virtual time (the SYNs beyond the ARP queue wait for one SYN timeout). */
static void two_hundred_connections(void **state)
{
    struct sim_world *w = sim_world_new(41);
    struct sim_node *a, *b;
    struct tsl_run run;
    struct sim_link_cfg l;
    unsigned base[2], i, n = 200;
    (void)state;
    wire(&l, 100000000u, 1000, 0.0);
    sim_set_link(w, &l);
    a = st_node(w, "a", 1);
    b = st_node(w, "b", 2);
    sim_set_max_events(w, 50000000ull);
    tsl_init(&run, w);
    assert_int_equal(tsl_listen(&run, b, 5001, 255), WISP_OK);
    assert_true(sim_run_for(w, 1000));
    tsl_baseline(w, base);
    for (i = 0; i < n; i++) {
        struct tsl_cfg cfg;
        memset(&cfg, 0, sizeof(cfg));
        dir(&cfg.a2b, 64 * KB, 1460, false, false);
        dir(&cfg.b2a, 64 * KB, 1460, false, false);
        cfg.seed = 1000 + i;
        cfg.watchdog_ms = 60000;
        if (tsl_connect(&run, a, &cfg) == NULL) {
            tsl_run_print_failures(&run, stderr);
            fail_msg("connection %u could not be started (WISP_TCP_PCB_COUNT = %u)", i, (unsigned)WISP_TCP_PCB_COUNT);
        }
    }
    run.stop_on_fail = false;
    if (!tsl_run_until_done(&run, 900 * SEC)) {
        tsl_run_print_failures(&run, stderr);
        fail_msg("%u of %u connections failed, %u done", run.nfailed, n, run.ndone);
    }
    printf("  %u connections done at %.3f s, %u accepted\n", n, (double)sim_now_us(w) / 1e6, run.accepted);
    {
        /* A SYN or SYN-ACK the stack could not send (full transmit queue)
         * goes again within milliseconds, not after the SYN timeout: only
         * the SYNs dropped from the ARP queue wait for one (1 s). Before
         * that rule the last connections waited for the 4th SYN timeout
         * (15 s). */
        uint64_t est = 0;
        unsigned k;
        for (k = 0; k < run.nconns; k++) {
            if (run.conns[k]->ep[0].est_us > est) {
                est = run.conns[k]->ep[0].est_us;
            }
        }
        printf("  last connection established at %.3f s\n", (double)est / 1e6);
        assert_true(est < 2 * SEC);
        assert_true(sim_now_us(w) < 5 * SEC);
    }
    assert_int_equal(run.accepted, n);
    assert_int_equal(run.unexpected, 0);
    assert_true(tsl_settle(w, base, 300 * SEC, stderr));
    tsl_fini(&run);
    ST_FREE(w);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(stream_generator_is_consistent_and_checked),
        cmocka_unit_test(clean_wire_4mb_each_way_byte_exact),
        cmocka_unit_test(write_modes_byte_exact),
        cmocka_unit_test(one_way_transfer_and_plain_close),
        cmocka_unit_test(loss_20pct_256kb_each_way_completes),
#if WISP_TCP_WND_SCALE
        cmocka_unit_test(long_fat_path_window_scaling),
#endif
        cmocka_unit_test(zero_window_is_probed_and_recovers),
        cmocka_unit_test(refused_data_is_offered_again),
        cmocka_unit_test(small_writes_goodput),
        cmocka_unit_test(two_hundred_connections),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
