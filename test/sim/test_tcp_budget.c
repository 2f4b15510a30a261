/**
 * @file test_tcp_budget.c
 * Simulator tests of TCP against the stack's buffer budgets: more
 * connections than the receive and transmit blocks can carry at full
 * window must still all complete byte-exact. The echo service
 * (apps/lib/services.c) holds what it received until its send buffer takes
 * it, so with 8 connections the windows (8 x 256 KB) and send buffers
 * (8 x 256 KB) of the host build far exceed its 512 receive and 512
 * transmit blocks: without a receive budget every block ends up holding
 * data, no ACK can be received any more, and everything stalls for good.
 */
#include "simtest.h"
#include "tcp_simlib.h"

#define KB 1024u
#define MB (1024u * 1024u)
#define SEC 1000000ull

/* The echo clients of one run (tsl connections whose side B is the echo
 * service: side A expects its own stream back). */
struct echo_run {
    struct tsl_run *r;
    struct wisp_services *svc;
    unsigned n;
};

static bool echo_transfers_done(void *arg)
{
    struct echo_run *e = arg;
    unsigned i, done = 0;
    if (tsl_all_done(e->r)) {
        return true; /* a failure (the watchdog: no progress) */
    }
    for (i = 0; i < e->r->nconns; i++) {
        struct tsl_conn *c = e->r->conns[i];
        const struct tsl_ep *a = &c->ep[0];
        if (a->rx_got == a->rx_expect && a->tx_acked == a->tx.bytes) {
            if (!c->done) {
                c->done = true; /* no watchdog for it any more */
                c->done_us = sim_now_us(e->r->w);
                e->r->ndone++;
            }
            done++;
        }
    }
    return done == e->n;
}

static bool echo_closed(void *arg)
{
    const struct echo_run *e = arg;
    return e->svc->tcp[WISP_TCP_SVC_ECHO].st.closed >= e->n;
}

static void print_ctrs(const char *name, const struct wisp_stack *s)
{
    static const char *const want[] = { "netif.rx.nomem", "netif.txq.drop", "tcp.drop.nomem", "tcp.drop.rxbudget",
                                        "tcp.wnd.budgetlimited", "tcp.write.txreserve", "tcp.ooseq.drop",
                                        "tcp.retransmit", "tcp.timeout", "tcp.persist.probe" };
    tsl_print_ctrs(name, s, want, (unsigned)WISP_ARRAY_SIZE(want));
}

/* n echo transfers of bytes each at once against node b's echo service;
 * the clients start reading hold_ms late (their windows close, the echo
 * fills its send buffers and then holds what it receives). */
static void echo_parallel(uint64_t wseed, unsigned n, uint64_t bytes, double loss, uint32_t hold_ms)
{
    static struct wisp_services svc;
    struct sim_world *w = sim_world_new(wseed);
    struct sim_node *a, *b;
    struct sim_link_cfg l;
    struct tsl_run run;
    struct echo_run er;
    unsigned base[2], i;
    const struct wisp_tcp_service_stats *st;

    sim_link_defaults(&l);
    l.bandwidth_bps = 100000000u;
    l.latency_us = 1000;
    l.loss = loss;
    sim_set_link(w, &l);
    a = st_node(w, "a", 1);
    b = st_node(w, "b", 2);
    sim_set_max_events(w, 50000000ull);
    assert_int_equal(wisp_services_start(sim_stack(b), &svc), WISP_OK);
    tsl_init(&run, w);
    assert_true(sim_run_for(w, 1000));
    tsl_baseline(w, base);
    for (i = 0; i < n; i++) {
        struct tsl_cfg cfg;
        struct tsl_conn *c;
        memset(&cfg, 0, sizeof(cfg));
        cfg.a2b.bytes = bytes;
        cfg.a2b.wsize = 16 * KB;
        cfg.seed = wseed * 100u + i;
        cfg.close_mode = TSL_CLOSE_NONE;
        cfg.watchdog_ms = 60000;
        c = tsl_conn_new(&run, &cfg);
        assert_non_null(c);
        /* the echo of A's stream comes back to A */
        c->ep[0].rx_seed = c->ep[0].tx_seed;
        c->ep[0].rx_expect = bytes;
        c->ep[1].rx_expect = 0;
        c->ep[0].hold = hold_ms > 0;
        assert_int_equal(tsl_ep_open(c, 0, a, 0, sim_ip(b), WISP_PORT_ECHO), WISP_OK);
    }
    if (hold_ms > 0) {
        assert_true(sim_run_for(w, (uint64_t)hold_ms * 1000u));
        printf("  readers start at %.3f s: %llu bytes echoed so far\n", (double)sim_now_us(w) / 1e6,
               (unsigned long long)svc.tcp[WISP_TCP_SVC_ECHO].st.bytes_tx);
        print_ctrs("b (echo)", sim_stack(b));
        for (i = 0; i < run.nconns; i++) {
            tsl_ep_release(&run.conns[i]->ep[0]);
        }
    }
    er.r = &run;
    er.svc = &svc;
    er.n = n;
    if (!sim_run_until(w, echo_transfers_done, &er, 600 * SEC) || run.nfailed > 0) {
        tsl_run_print_failures(&run, stderr);
        for (i = 0; i < run.nconns; i++) {
            tsl_conn_print(run.conns[i], stderr);
        }
        print_ctrs("a", sim_stack(a));
        print_ctrs("b", sim_stack(b));
        fail_msg("%u echo transfers of %llu bytes did not complete (t = %.3f s)", n, (unsigned long long)bytes,
                 (double)sim_now_us(w) / 1e6);
    }
    printf("  %u x %llu bytes echoed at %.3f s (loss %.0f %%)\n", n, (unsigned long long)bytes,
           (double)sim_now_us(w) / 1e6, loss * 100.0);
    print_ctrs("a (clients)", sim_stack(a));
    print_ctrs("b (echo)", sim_stack(b));
    for (i = 0; i < run.nconns; i++) {
        assert_int_equal(tsl_ep_close(&run.conns[i]->ep[0]), WISP_OK);
    }
    assert_true(sim_run_until(w, echo_closed, &er, 60 * SEC));
    st = &svc.tcp[WISP_TCP_SVC_ECHO].st;
    assert_int_equal(st->connections, n);
    assert_int_equal(st->closed, n);
    assert_int_equal(st->resets, 0);
    assert_int_equal(st->aborted, 0);
    assert_int_equal(st->bytes_rx, (uint64_t)n * bytes);
    assert_int_equal(st->bytes_tx, (uint64_t)n * bytes);
    assert_true(tsl_settle(w, base, 300 * SEC, stderr));
    tsl_fini(&run);
    wisp_services_stop(&svc);
    ST_FREE(w);
}

/* 8 echo transfers of 2 MB at once (every echo record of the service)
 * whose clients start reading 2 s late: the echo's send buffers fill (8 x
 * 256 KB of copies > its transmit blocks), then it holds what it receives
 * (8 windows of 256 KB > its receive blocks). When the readers start,
 * their ACKs must still get in: every byte comes back. */
static void receive_budget_eight_echo_connections_late_readers(void **state)
{
    (void)state;
    echo_parallel(61, WISP_SERVICES_TCP_CONNS, 2 * MB, 0.0, 2000);
}

/* 8 echo transfers of 1 MB with 1 % loss (out-of-order queues take
 * receive blocks too). */
static void receive_budget_eight_echo_connections_with_loss(void **state)
{
    (void)state;
    echo_parallel(62, WISP_SERVICES_TCP_CONNS, 1 * MB, 0.01, 0);
}

/* 8 bulk transfers both ways at once between two stacks (4 MB each way
 * per connection): every window and send buffer full at the same time. */
static void receive_budget_eight_bulk_connections_both_ways(void **state)
{
    struct sim_world *w = sim_world_new(63);
    struct sim_node *a, *b;
    struct sim_link_cfg l;
    struct tsl_run run;
    unsigned base[2], i;
    (void)state;
    sim_link_defaults(&l);
    l.bandwidth_bps = 100000000u;
    l.latency_us = 1000;
    sim_set_link(w, &l);
    a = st_node(w, "a", 1);
    b = st_node(w, "b", 2);
    sim_set_max_events(w, 50000000ull);
    tsl_init(&run, w);
    assert_int_equal(tsl_listen(&run, b, 5001, 16), WISP_OK);
    assert_true(sim_run_for(w, 1000));
    tsl_baseline(w, base);
    for (i = 0; i < 8; i++) {
        struct tsl_cfg cfg;
        memset(&cfg, 0, sizeof(cfg));
        cfg.a2b.bytes = 4 * MB;
        cfg.a2b.wsize = 65535;
        cfg.b2a.bytes = 4 * MB;
        cfg.b2a.wsize = 65535;
        cfg.seed = 6300 + i;
        assert_non_null(tsl_connect(&run, a, &cfg));
    }
    if (!tsl_run_until_done(&run, 600 * SEC)) {
        tsl_run_print_failures(&run, stderr);
        print_ctrs("a", sim_stack(a));
        print_ctrs("b", sim_stack(b));
        fail_msg("%u of 8 connections failed", run.nfailed);
    }
    printf("  8 x 4 MB both ways done at %.3f s\n", (double)sim_now_us(w) / 1e6);
    print_ctrs("a", sim_stack(a));
    print_ctrs("b", sim_stack(b));
    assert_true(tsl_settle(w, base, 300 * SEC, stderr));
    tsl_fini(&run);
    ST_FREE(w);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(receive_budget_eight_echo_connections_late_readers),
        cmocka_unit_test(receive_budget_eight_echo_connections_with_loss),
        cmocka_unit_test(receive_budget_eight_bulk_connections_both_ways),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
