/**
 * @file test_tcp_ooseq_pool.c
 * TCP under loss on the default pool sizes of opt.h (the small-pool
 * simulator build, test/sim/wisp_opts_small.h: 4 out-of-order queues,
 * 8 connection PCBs, 8 receive and 8 transmit blocks -- a Cortex-M class
 * device), where the pools, not the window, run out first.
 *
 * more_connections_than_ooseq_queues: the pool of out-of-order queues
 * (opt.h WISP_TCP_OOSEQ_COUNT, pool WISP_POOL_TCP_OOSEQ) running dry.
 * OOSEQ_CONNS nodes each open one connection to a listener on node b
 * (more connections than b has queues) and send OOSEQ_BYTES in paced
 * 200-byte writes over a 100 Mbit/s, 1 ms wire with seeded loss and
 * reordering, dark for 1 ms about every 100 ms, so that the writes after
 * an outage arrive out of order on every connection at once. Once all
 * queues are held, the out-of-order segments of the other connections
 * are dropped (tcp.ooseq.drop; RFC 9293 §3.10.7.4 lets a receiver drop
 * them) and resent. For every seed: the pool did run dry on b (its
 * allocation failed, high-water mark = its size, tcp.ooseq.drop > 0);
 * every connection delivered every byte (verified against the sent
 * pattern by tcp_simlib) and closed without a reset; every pool of every
 * node, the queues included, is back at its baseline once TIME-WAIT is
 * over. On these pools each connection's share of b's receive budget is
 * one block (1448 bytes, less than the MSS): before the receiver's SWS
 * threshold took the share into account (tcp_rcv_right) a window once
 * closed never reopened and every connection stalled here.
 *
 * lossy_senders_share_transmit_blocks: 7 connections from ONE node
 * (8 transmit blocks, each connection's queued copies holding up to its
 * share) at 10 % loss and 10 % reordering, 256-byte writes. Repeated
 * timeouts make the black-hole detection lower the MSS (RFC 4821 §7.5,
 * tcp_icmp.c), whose re-cut of the outstanding segments needs blocks that
 * the other stalled connections hold: before the retransmission timeout
 * sent such a segment whole, the connections waited on each other until
 * the watchdog fired (no byte for 60 s). Every connection must complete,
 * byte-exact, with the pools back at their baseline.
 *
 * Deterministic from the seeds (virtual time, the world's generator).
 */
#include <time.h>
#include "simtest.h"
#include "tcp_simlib.h"

#define KB 1024u
#define SEC 1000000ull

/* Connections at once: more than the queues, within b's PCBs. */
#define OOSEQ_CONNS 7u
/* Bytes a sends on each. */
#define OOSEQ_BYTES (96u * KB)
/* Each sender writes OOSEQ_WRITE bytes every OOSEQ_PACE_US (nodelay):
 * short segments, several in the one-block window each connection gets
 * of b's receive budget (8 blocks for 7 connections). */
#define OOSEQ_WRITE 200u
#define OOSEQ_PACE_US 1000u
/* The outages (run_with_outages) and the seeded impairments between. The
 * period is no whole number of milliseconds: retransmission timeouts,
 * whole milliseconds that double, would otherwise meet the dark
 * millisecond every time (a stall of the test, not of the stack). */
#define OOSEQ_OUTAGE_EVERY_US 100137u
#define OOSEQ_OUTAGE_US 1000u
#define OOSEQ_LOSS 0.01
#define OOSEQ_REORDER 0.02
/* Seeds (worlds) run. */
#define OOSEQ_SEEDS 4u

#if !WISP_TCP_OOSEQ_POOL
#error "this test needs the pool of out-of-order queues (WISP_TCP_OOSEQ_POOL)"
#endif
/* more connections than queues, and every one fits in b's PCBs */
WISP_STATIC_ASSERT(ooseq_conns_exceed_queues, OOSEQ_CONNS > WISP_TCP_OOSEQ_COUNT);
WISP_STATIC_ASSERT(ooseq_conns_fit_pcbs, OOSEQ_CONNS <= WISP_TCP_PCB_COUNT);

/* Run the paced senders (one write per OOSEQ_PACE_US each, as
 * tsl_run_until_done does) until every connection is done or failed, or
 * max_us. Every OOSEQ_OUTAGE_EVERY_US the wire loses every frame for
 * OOSEQ_OUTAGE_US (one write of every connection): the writes after it
 * arrive out of order on all connections at once, more of them than
 * there are queues. Between outages the link of l (seeded loss and
 * reordering). True when all are done and none failed. */
static bool run_with_outages(struct tsl_run *r, const struct sim_link_cfg *l, uint64_t max_us)
{
    struct sim_link_cfg dark = *l;
    uint64_t end = sim_now_us(r->w) + max_us;
    unsigned i, k;
    dark.loss = 1.0;
    while (!tsl_all_done(r) && sim_now_us(r->w) < end) {
        uint64_t t = sim_now_us(r->w) % OOSEQ_OUTAGE_EVERY_US;
        sim_set_link(r->w, t < OOSEQ_OUTAGE_US ? &dark : l);
        if (!sim_run_for(r->w, OOSEQ_PACE_US)) {
            return false;
        }
        for (i = 0; i < r->nconns; i++) {
            struct tsl_conn *c = r->conns[i];
            for (k = 0; k < 2 && !c->done && !c->failed; k++) {
                c->ep[k].turn = true;
                tsl_ep_kick(&c->ep[k]);
                c->ep[k].turn = false;
            }
        }
    }
    sim_set_link(r->w, l);
    return sim_error(r->w) == NULL && r->nfailed == 0 && r->ndone == r->nconns;
}

static uint64_t ctr(struct sim_node *n, const char *name)
{
    return tsl_ctr(sim_stack(n), name);
}

struct seed_figures {
    uint64_t drops, queued, pool_failed, rtx, fast_rtx, timeouts;
    uint64_t end_us;
};

/* A world of seed on a 100 Mbit/s, 1 ms wire with loss and reordering
 * (the link's settings in *l), its event bound set. */
static struct sim_world *lossy_lan(uint64_t seed, double loss, double reorder, struct sim_link_cfg *l)
{
    struct sim_world *w = sim_world_new(seed);
    assert_non_null(w);
    sim_link_defaults(l);
    l->bandwidth_bps = 100000000u;
    l->latency_us = 1000;
    l->loss = loss;
    l->reorder = reorder;
    sim_set_link(w, l);
    sim_set_max_events(w, 50000000ull);
    return w;
}

static void one_seed(uint64_t seed, struct seed_figures *fig)
{
    struct sim_link_cfg l;
    struct sim_world *w = lossy_lan(seed, OOSEQ_LOSS, OOSEQ_REORDER, &l);
    struct sim_node *a[OOSEQ_CONNS], *b;
    struct tsl_run run;
    unsigned base[OOSEQ_CONNS + 1u], i;
    char name[8];
    const struct wisp_pool *oq;

    b = st_node(w, "b", 1);
    for (i = 0; i < OOSEQ_CONNS; i++) {
        snprintf(name, sizeof(name), "a%u", i);
        a[i] = st_node(w, name, 2u + i);
    }
    oq = &sim_stack(b)->pool[WISP_POOL_TCP_OOSEQ];
    /* the pool as built: its size is the option's, fewer than the
     * connections */
    assert_int_equal(oq->count, WISP_TCP_OOSEQ_COUNT);
    assert_true(oq->count < OOSEQ_CONNS);
    tsl_init(&run, w);
    assert_int_equal(tsl_listen(&run, b, 5001, (uint8_t)OOSEQ_CONNS), WISP_OK);
    assert_true(sim_run_for(w, 1000));
    tsl_baseline(w, base);
    assert_int_equal(oq->used, 0);
    assert_int_equal(oq->failed, 0);

    for (i = 0; i < OOSEQ_CONNS; i++) {
        struct tsl_cfg cfg;
        memset(&cfg, 0, sizeof(cfg));
        cfg.a2b.bytes = OOSEQ_BYTES;
        cfg.a2b.wsize = OOSEQ_WRITE;
        cfg.a2b.pace_us = OOSEQ_PACE_US;
        cfg.nodelay = true;
        cfg.seed = seed * 100u + i;
        cfg.watchdog_ms = 60000;
        if (tsl_connect(&run, a[i], &cfg) == NULL) {
            tsl_run_print_failures(&run, stderr);
            fail_msg("seed %llu: connection %u could not be started", (unsigned long long)seed, i);
        }
    }
    run.stop_on_fail = false;
    if (!run_with_outages(&run, &l, 600 * SEC)) {
        tsl_run_print_failures(&run, stderr);
        fail_msg("seed %llu: %u of %u connections failed, %u done", (unsigned long long)seed, run.nfailed,
                 OOSEQ_CONNS, run.ndone);
    }
    fig->end_us = sim_now_us(w);
    assert_int_equal(run.accepted, OOSEQ_CONNS);
    assert_int_equal(run.unexpected, 0);
    assert_int_equal(run.nconns, OOSEQ_CONNS);
    for (i = 0; i < run.nconns; i++) {
        const struct tsl_conn *c = run.conns[i];
        /* every byte verified against the stream (the harness fails the
         * connection at the first differing byte), the FIN in, both ends
         * closed without an error */
        assert_true(c->done);
        assert_false(c->failed);
        assert_true(c->ep[1].rx_got == OOSEQ_BYTES);
        assert_true(c->ep[1].rx_expect == OOSEQ_BYTES);
        assert_true(c->ep[1].rx_fin);
        assert_true(c->ep[0].tx_written == OOSEQ_BYTES);
        assert_true(c->ep[0].closed && c->ep[1].closed);
        assert_false(c->ep[0].err_called);
        assert_false(c->ep[1].err_called);
    }

    /* the pool ran dry: allocations of a queue were refused, and each such
     * refusal dropped its segment (tcp_ooseq_insert counts it) */
    fig->drops = ctr(b, "tcp.ooseq.drop");
    fig->queued = ctr(b, "tcp.ooseq");
    fig->pool_failed = oq->failed;
    for (i = 0; i < OOSEQ_CONNS; i++) {
        fig->fast_rtx += ctr(a[i], "tcp.fastretransmit");
        fig->timeouts += ctr(a[i], "tcp.timeout");
        fig->rtx += ctr(a[i], "tcp.retransmit");
    }
    printf("  seed %llu: b tcp.ooseq %llu, tcp.ooseq.drop %llu, queue pool %u/%u high, %llu allocs, %llu refused; "
           "a retransmitted %llu segments (%llu fast retransmits, %llu timeouts); done at %.3f s virtual\n",
           (unsigned long long)seed, (unsigned long long)fig->queued, (unsigned long long)fig->drops,
           (unsigned)oq->high, (unsigned)oq->count, (unsigned long long)oq->allocs,
           (unsigned long long)fig->pool_failed, (unsigned long long)fig->rtx, (unsigned long long)fig->fast_rtx,
           (unsigned long long)fig->timeouts, (double)fig->end_us / 1e6);
    assert_int_equal(oq->high, oq->count);
    assert_true(oq->failed > 0);
    assert_true(fig->drops >= oq->failed);
    assert_true(fig->queued > 0);
    assert_true(fig->rtx > 0);
    /* closed cleanly: FIN handshakes, no connection reset or given up */
    for (i = 0; i <= OOSEQ_CONNS; i++) {
        struct sim_node *n = i < OOSEQ_CONNS ? a[i] : b;
        assert_int_equal(ctr(n, "tcp.rst.tx"), 0);
        assert_int_equal(ctr(n, "tcp.rst.rx"), 0);
        assert_int_equal(ctr(n, "tcp.abort.retransmit"), 0);
    }

    /* every pool back at its baseline (TIME-WAIT over), the queues first */
    if (!tsl_settle(w, base, 300 * SEC, stderr)) {
        sim_dump(w, stderr);
        fail_msg("seed %llu: pools not back at baseline", (unsigned long long)seed);
    }
    assert_int_equal(oq->used, 0);
    for (i = 0; i < OOSEQ_CONNS; i++) {
        assert_int_equal(sim_stack(a[i])->pool[WISP_POOL_TCP_OOSEQ].used, 0);
    }
    assert_int_equal(sim_stack(b)->pool[WISP_POOL_TCP_PCB].used, 0);
    tsl_fini(&run);
    ST_FREE(w);
}

/* OOSEQ_CONNS connections with out-of-order data, WISP_TCP_OOSEQ_COUNT
 * queues: the pool runs dry, nothing is lost, everything returns. */
static void more_connections_than_ooseq_queues(void **state)
{
    struct seed_figures sum, fig;
    unsigned k;
    clock_t t0 = clock();
    (void)state;
    memset(&sum, 0, sizeof(sum));
    for (k = 0; k < OOSEQ_SEEDS; k++) {
        memset(&fig, 0, sizeof(fig));
        one_seed(7001u + k, &fig);
        sum.drops += fig.drops;
        sum.pool_failed += fig.pool_failed;
        sum.rtx += fig.rtx;
    }
    printf("  %u seeds x %u connections x %u KB over %u queues: tcp.ooseq.drop %llu in all (%llu for want of a "
           "queue), %llu retransmissions; %.2f s CPU\n",
           OOSEQ_SEEDS, OOSEQ_CONNS, OOSEQ_BYTES / KB, (unsigned)WISP_TCP_OOSEQ_COUNT,
           (unsigned long long)sum.drops, (unsigned long long)sum.pool_failed, (unsigned long long)sum.rtx,
           (double)(clock() - t0) / CLOCKS_PER_SEC);
}

/* Connections and bytes of lossy_senders_share_transmit_blocks. */
#define LOSSY_CONNS 7u
#define LOSSY_BYTES (32u * KB)
#define LOSSY_SEEDS 12u

static void lossy_senders_share_transmit_blocks(void **state)
{
    uint64_t blackholes = 0, nomem = 0, rtx = 0;
    unsigned seed, i;
    clock_t t0 = clock();
    (void)state;
    for (seed = 1; seed <= LOSSY_SEEDS; seed++) {
        struct sim_link_cfg l;
        struct sim_world *w = lossy_lan(8000u + seed, 0.10, 0.10, &l);
        struct sim_node *b = st_node(w, "b", 1), *a = st_node(w, "a", 2);
        struct tsl_run run;
        unsigned base[2];

        tsl_init(&run, w);
        assert_int_equal(tsl_listen(&run, b, 5001, (uint8_t)LOSSY_CONNS), WISP_OK);
        assert_true(sim_run_for(w, 1000));
        tsl_baseline(w, base);
        for (i = 0; i < LOSSY_CONNS; i++) {
            struct tsl_cfg cfg;
            memset(&cfg, 0, sizeof(cfg));
            cfg.a2b.bytes = LOSSY_BYTES;
            cfg.a2b.wsize = 256;
            cfg.seed = seed * 100u + i;
            cfg.watchdog_ms = 60000;
            assert_non_null(tsl_connect(&run, a, &cfg));
        }
        run.stop_on_fail = false;
        if (!tsl_run_until_done(&run, 600 * SEC)) {
            tsl_run_print_failures(&run, stderr);
            fail_msg("seed %u: %u of %u connections failed, %u done", 8000u + seed, run.nfailed, LOSSY_CONNS,
                     run.ndone);
        }
        for (i = 0; i < run.nconns; i++) {
            const struct tsl_conn *c = run.conns[i];
            assert_true(c->done && !c->failed);
            assert_true(c->ep[1].rx_got == LOSSY_BYTES && c->ep[1].rx_fin);
        }
        blackholes += ctr(a, "tcp.pmtu.blackhole");
        nomem += ctr(a, "tcp.pmtu.reseg.nomem");
        rtx += ctr(a, "tcp.retransmit");
        if (!tsl_settle(w, base, 300 * SEC, stderr)) {
            sim_dump(w, stderr);
            fail_msg("seed %u: pools not back at baseline", 8000u + seed);
        }
        tsl_fini(&run);
        ST_FREE(w);
    }
    printf("  %u seeds x %u connections x %u KB from one node: %llu retransmissions, black hole assumed %llu "
           "times, re-cut without buffers %llu times; %.2f s CPU\n",
           LOSSY_SEEDS, LOSSY_CONNS, LOSSY_BYTES / KB, (unsigned long long)rtx, (unsigned long long)blackholes,
           (unsigned long long)nomem, (double)(clock() - t0) / CLOCKS_PER_SEC);
    /* the path this guards was taken */
    assert_true(blackholes > 0);
    assert_true(nomem > 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(more_connections_than_ooseq_queues),
        cmocka_unit_test(lossy_senders_share_transmit_blocks),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
