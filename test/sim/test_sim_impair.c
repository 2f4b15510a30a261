/**
 * @file test_sim_impair.c
 * Simulator tests of the impaired wire: reproducibility from the seed,
 * loss / duplication / reordering doing what they say, and corruption:
 * damaged frames are dropped by the checksums and counted, and no damaged
 * payload ever reaches an application.
 */
#include "simtest.h"

/* --------------------------------------------------------- determinism */

/* Everything a run can be compared by: the world counters and every
 * stack counter of both nodes, plus what the client saw. */
struct snapshot {
    struct sim_counters wire;
    uint32_t ctr[2][WISP_CTR_COUNT];
    unsigned rx, tries;
    uint64_t end_us;
};

static bool ping_replied(void *arg)
{
    return ((struct st_ping *)arg)->replies > 0;
}

static void scenario(uint64_t seed, struct snapshot *snap)
{
    struct sim_world *w = sim_world_new(seed);
    struct sim_node *a = st_node(w, "a", 1), *b = st_node(w, "b", 2);
    struct wisp_services svc;
    struct st_client c;
    struct sim_link_cfg link;
    struct sim_rng r;
    wisp_ipaddr_t dst = st_addr(b);
    static uint8_t data[6000];
    unsigned i, t;

    memset(snap, 0, sizeof(*snap));
    assert_int_equal(wisp_services_udp_start(sim_stack(b), &svc), WISP_OK);
    st_client_open(&c, w, a, 0);
    sim_get_link(w, &link);
    link.loss = 0.05;
    link.dup = 0.03;
    link.reorder = 0.10;
    link.corrupt = 0.02;
    link.bandwidth_bps = 100000000;
    sim_set_link(w, &link);
    sim_rng_seed(&r, seed);
    for (i = 0; i < 60; i++) {
        uint16_t len = (uint16_t)(8 + sim_rng_below(&r, sizeof(data) - 8));
        t = st_echo_retry(&c, data, len, i, &dst, WISP_PORT_ECHO, 20000, 200);
        assert_true(t > 0);
        snap->tries += t;
    }
    assert_int_equal(c.bad, 0);
    snap->wire = *sim_counters(w);
    memcpy(snap->ctr[0], sim_stack(a)->ctr, sizeof(snap->ctr[0]));
    memcpy(snap->ctr[1], sim_stack(b)->ctr, sizeof(snap->ctr[1]));
    snap->rx = c.rx;
    snap->end_us = sim_now_us(w);
    st_client_close(&c);
    wisp_services_udp_stop(&svc);
    ST_FREE(w);
}

static void same_seed_same_run_other_seed_other_run(void **state)
{
    struct snapshot *s1 = calloc(3, sizeof(*s1));
    (void)state;
    assert_non_null(s1);
    scenario(1234, &s1[0]);
    scenario(1234, &s1[1]);
    scenario(4321, &s1[2]);
    assert_true(s1[0].wire.sent > 100);
    assert_true(s1[0].wire.lost > 0);
    assert_memory_equal(&s1[0].wire, &s1[1].wire, sizeof(s1[0].wire));
    assert_memory_equal(s1[0].ctr, s1[1].ctr, sizeof(s1[0].ctr));
    assert_int_equal(s1[0].rx, s1[1].rx);
    assert_int_equal(s1[0].tries, s1[1].tries);
    assert_int_equal(s1[0].end_us, s1[1].end_us);
    /* another seed: another run */
    assert_true(memcmp(&s1[0].wire, &s1[2].wire, sizeof(s1[0].wire)) != 0);
    assert_true(s1[0].end_us != s1[2].end_us);
    free(s1);
}

/* The same world seed gives every stack the same random numbers; nodes of
 * one world get different ones (e.g. their ephemeral ports). */
static void stack_seeds_derive_from_world_seed(void **state)
{
    struct sim_world *w1 = sim_world_new(77), *w2 = sim_world_new(77);
    struct sim_node *a1 = st_node(w1, "a", 1), *b1 = st_node(w1, "b", 2);
    struct sim_node *a2 = st_node(w2, "a", 1);
    uint32_t x1 = wisp_random(sim_stack(a1)), y1 = wisp_random(sim_stack(b1)), x2 = wisp_random(sim_stack(a2));
    (void)state;
    assert_int_equal(x1, x2);
    assert_true(x1 != y1);
    assert_int_equal(sim_seed(w1), 77);
    ST_FREE(w1);
    ST_FREE(w2);
}

/* ------------------------------------------------- loss, dup, reorder */

struct seq_sink {
    unsigned rx;
    uint32_t last, max;
    unsigned out_of_order, repeats;
    uint8_t seen[1000];
};

static void seq_recv(void *arg, struct wisp_udp_pcb *pcb, struct wisp_pbuf *p, const wisp_ipaddr_t *src,
                     uint16_t port, const struct wisp_ip_info *ip)
{
    struct seq_sink *k = (struct seq_sink *)arg;
    uint8_t b[4];
    uint32_t n;
    (void)pcb;
    (void)src;
    (void)port;
    (void)ip;
    assert_int_equal(wisp_pbuf_copy_out(p, b, 4, 0), 4);
    n = wisp_rd32(b);
    assert_true(n < 1000);
    if (k->seen[n]++) {
        k->repeats++;
    }
    if (k->rx > 0 && n < k->max) {
        k->out_of_order++;
    }
    if (n > k->max) {
        k->max = n;
    }
    k->rx++;
    wisp_pbuf_free(p);
}

/* Send 1000 numbered datagrams, one every 100 us, and collect them. */
static void numbered_stream(const struct sim_link_cfg *link, uint64_t seed, struct seq_sink *k,
                            struct sim_counters *wire)
{
    struct sim_world *w = sim_world_new(seed);
    struct sim_node *a = st_node(w, "a", 1), *b = st_node(w, "b", 2);
    struct wisp_udp_pcb *rx = wisp_udp_new(sim_stack(b));
    struct st_client c;
    wisp_ipaddr_t dst = st_addr(b);
    uint8_t d[64];
    uint32_t i;

    memset(k, 0, sizeof(*k));
    memset(d, 0, sizeof(d));
    assert_non_null(rx);
    assert_int_equal(wisp_udp_bind(rx, NULL, 6000), WISP_OK);
    wisp_udp_recv(rx, seq_recv, k);
    st_client_open(&c, w, a, 0);
    /* ARP on a clean wire */
    assert_int_equal(st_send(&c, d, 4, &dst, 6001), WISP_OK);
    assert_true(sim_run_for(w, 100000));
    assert_int_equal(sim_stack(a)->ctr[WISP_CTR_ARP_REPLY_RX], 1);
    {
        struct sim_counters before = *sim_counters(w);
        sim_set_link(w, link);
        for (i = 0; i < 1000; i++) {
            wisp_wr32(d, i);
            assert_int_equal(st_send(&c, d, sizeof(d), &dst, 6000), WISP_OK);
            assert_true(sim_run_for(w, 100));
        }
        assert_true(sim_run_for(w, 1000000));
        *wire = *sim_counters(w);
        wire->sent -= before.sent;
        wire->delivered -= before.delivered;
    }
    st_client_close(&c);
    wisp_udp_remove(rx);
    ST_FREE(w);
}

static void loss_duplication_reordering(void **state)
{
    struct sim_link_cfg link;
    struct seq_sink *k = calloc(1, sizeof(*k));
    struct sim_counters wc;
    (void)state;
    assert_non_null(k);

    /* clean: everything, once, in order */
    sim_link_defaults(&link);
    numbered_stream(&link, 1, k, &wc);
    assert_int_equal(k->rx, 1000);
    assert_int_equal(k->out_of_order, 0);
    assert_int_equal(k->repeats, 0);

    /* 20 % loss: about 800 arrive, the counter says how many were lost */
    sim_link_defaults(&link);
    link.loss = 0.2;
    numbered_stream(&link, 2, k, &wc);
    assert_int_equal(k->rx, 1000 - wc.lost);
    assert_true(wc.lost > 150 && wc.lost < 250);
    assert_int_equal(k->repeats, 0);

    /* 100 % loss: nothing */
    link.loss = 1.0;
    numbered_stream(&link, 3, k, &wc);
    assert_int_equal(k->rx, 0);
    assert_int_equal(wc.lost, 1000);
    assert_int_equal(wc.delivered, 0);

    /* 10 % duplication: the stack delivers duplicates (UDP does not
     * suppress them), exactly as many as the wire made */
    sim_link_defaults(&link);
    link.dup = 0.1;
    numbered_stream(&link, 4, k, &wc);
    assert_int_equal(k->rx, 1000 + wc.duplicated);
    assert_int_equal(k->repeats, wc.duplicated);
    assert_true(wc.duplicated > 50 && wc.duplicated < 150);
    assert_int_equal(wc.delivered, 1000 + wc.duplicated);

    /* 10 % reordering: all arrive, some after later ones */
    sim_link_defaults(&link);
    link.reorder = 0.1;
    numbered_stream(&link, 5, k, &wc);
    assert_int_equal(k->rx, 1000);
    assert_int_equal(k->repeats, 0);
    assert_true(wc.reordered > 50 && wc.reordered < 150);
    assert_true(k->out_of_order >= wc.reordered / 2);
    free(k);
}

/* ---------------------------------------------------------- corruption */

struct sink {
    unsigned ok, bad;
};

static void sink_recv(void *arg, struct wisp_udp_pcb *pcb, struct wisp_pbuf *p, const wisp_ipaddr_t *src,
                      uint16_t port, const struct wisp_ip_info *ip)
{
    struct sink *k = (struct sink *)arg;
    static uint8_t buf[65536];
    uint16_t n = wisp_pbuf_copy_out(p, buf, p->tot_len, 0);
    uint32_t num;
    (void)pcb;
    (void)src;
    (void)port;
    (void)ip;
    if (st_valid(buf, n, &num)) {
        k->ok++;
    } else {
        k->bad++;
    }
    wisp_pbuf_free(p);
}

static void corrupted_frames_dropped_never_delivered(void **state)
{
    struct sim_world *w = sim_world_new(2024);
    struct sim_node *a = st_node(w, "a", 1), *b = st_node(w, "b", 2);
    struct wisp_services svc;
    struct st_client c;
    struct sim_link_cfg link;
    struct sim_rng r;
    struct sink k = { 0, 0 };
    struct wisp_udp_pcb *sinkpcb = wisp_udp_new(sim_stack(b));
    struct st_ping pg;
    wisp_ipaddr_t dst = st_addr(b);
    static uint8_t data[4000];
    const struct sim_counters *wc = sim_counters(w);
    uint64_t chk = 0, sink_sent = 0;
    unsigned i, n = 1500, s;
    (void)state;

    assert_non_null(sinkpcb);
    assert_int_equal(wisp_udp_bind(sinkpcb, NULL, 5001), WISP_OK);
    wisp_udp_recv(sinkpcb, sink_recv, &k);
    assert_int_equal(wisp_services_udp_start(sim_stack(b), &svc), WISP_OK);
    st_client_open(&c, w, a, 0);
    /* ARP has no checksum: resolve on a clean wire first */
    memset(&pg, 0, sizeof(pg));
    wisp_icmp_set_echo_cb(sim_stack(a), st_ping_cb, &pg);
    assert_int_equal(wisp_icmp_echo_request(sim_stack(a), sim_ip(b), 1, 1, 8, 0), WISP_OK);
    assert_true(sim_run_until(w, ping_replied, &pg, 1000000));

    sim_get_link(w, &link);
    link.corrupt = 0.01;
    sim_set_link(w, &link);
    sim_rng_seed(&r, 5);
    for (i = 0; i < n; i++) {
        uint16_t len = (uint16_t)(8 + sim_rng_below(&r, sizeof(data) - 8));
        unsigned t = st_echo_retry(&c, data, len, i, &dst, WISP_PORT_ECHO, 5000, 50);
        assert_true(t > 0);
        assert_int_equal(c.last_len, len);
        assert_memory_equal(c.last, data, len);
        if (i % 4 == 0) {
            assert_int_equal(st_send(&c, data, len, &dst, 5001), WISP_OK);
            sink_sent++;
        }
        /* pings with their pattern data check ICMP too */
        if (i % 8 == 0) {
            (void)wisp_icmp_echo_request(sim_stack(a), sim_ip(b), 2, (uint16_t)i, len, 0);
        }
    }
    assert_true(sim_run_for(w, 100000));

    for (s = 0; s < 2; s++) {
        const uint32_t *ctr = sim_stack(sim_node_at(w, s))->ctr;
        chk += ctr[WISP_CTR_IP4_DROP_CHKSUM] + ctr[WISP_CTR_UDP_DROP_CHKSUM] + ctr[WISP_CTR_ICMP_DROP_CHKSUM];
    }
    if (wc->corrupted == 0 || chk == 0 || chk > wc->corrupted || 2 * chk < wc->corrupted) {
        sim_dump(w, stderr);
    }
    print_message("corruption: %llu frames sent, %llu copies corrupted, %llu checksum drops, %u echoes, %u sink, "
                  "%u ping replies\n",
                  (unsigned long long)wc->sent, (unsigned long long)wc->corrupted, (unsigned long long)chk, c.rx, k.ok,
                  pg.replies);
    /* corruption happened, the checksums caught it (each damaged copy at
     * most one drop; most damage lands in checksummed bytes) ... */
    assert_true(wc->corrupted > 20);
    assert_true(chk > 0);
    assert_true(chk <= wc->corrupted);
    assert_true(2 * chk >= wc->corrupted);
    /* ... and no application saw damaged data */
    assert_int_equal(c.bad, 0);
    assert_int_equal(k.bad, 0);
    assert_true(k.ok > 0 && k.ok <= sink_sent);
    assert_int_equal(pg.bad, 0);
    assert_true(pg.replies > n / 8 / 2);

    wisp_icmp_set_echo_cb(sim_stack(a), NULL, NULL);
    wisp_udp_remove(sinkpcb);
    st_client_close(&c);
    wisp_services_udp_stop(&svc);
    ST_FREE(w);
}

/* Robustness: three nodes, a wire that loses, duplicates, reorders and
 * corrupts a lot (any bit pattern, ARP included, so caches get poisoned),
 * random pings and datagrams of every size to open and closed ports. No
 * assertion about delivery: the stacks must simply survive (ASan/UBSan
 * watch), the run must not stall, and every pool must drain. */
static void chaos_wire_never_breaks_the_stacks(void **state)
{
    uint64_t seed;
    static uint8_t data[9000];
    (void)state;
    memset(data, 0xA5, sizeof(data));
    for (seed = 1; seed <= 6; seed++) {
        struct sim_world *w = sim_world_new(seed * 7919u);
        struct sim_node *n[3];
        struct wisp_services svc[3];
        struct st_client c[3];
        struct sim_link_cfg link;
        struct sim_rng r;
        unsigned i, step;

        for (i = 0; i < 3; i++) {
            char name[8];
            snprintf(name, sizeof(name), "n%u", i + 1);
            n[i] = st_node(w, name, i + 1);
            assert_int_equal(wisp_services_udp_start(sim_stack(n[i]), &svc[i]), WISP_OK);
            st_client_open(&c[i], w, n[i], 0);
        }
        sim_get_link(w, &link);
        link.loss = 0.1;
        link.dup = 0.1;
        link.reorder = 0.2;
        link.corrupt = 0.2;
        link.corrupt_any = true;
        link.bandwidth_bps = 20000000;
        link.latency_us = 200;
        sim_set_link(w, &link);
        sim_rng_seed(&r, seed);
        for (step = 0; step < 600; step++) {
            unsigned from = (unsigned)sim_rng_below(&r, 3), to = (unsigned)sim_rng_below(&r, 3);
            uint16_t len = (uint16_t)sim_rng_below(&r, sizeof(data) + 1);
            wisp_ipaddr_t dst = st_addr(n[to]);
            static const uint16_t ports[] = { WISP_PORT_ECHO, WISP_PORT_DISCARD, 4444 };
            if (sim_rng_below(&r, 4) == 0) {
                (void)wisp_icmp_echo_request(sim_stack(n[from]), sim_ip(n[to]), 9, (uint16_t)step, len, 0);
            } else {
                (void)st_send(&c[from], data, len, &dst, ports[sim_rng_below(&r, 3)]);
            }
            assert_true(sim_run_for(w, sim_rng_below(&r, 3000)));
        }
        /* past every ARP retry and reassembly timeout */
        assert_true(sim_run_for(w, 30000000));
        assert_null(sim_error(w));
        assert_true(sim_counters(w)->corrupted > 0);
        print_message("chaos seed %llu: %llu frames sent, %llu lost, %llu corrupted, %u+%u+%u echoes\n",
                      (unsigned long long)seed, (unsigned long long)sim_counters(w)->sent,
                      (unsigned long long)sim_counters(w)->lost, (unsigned long long)sim_counters(w)->corrupted,
                      svc[0].udp_echo_st.datagrams, svc[1].udp_echo_st.datagrams, svc[2].udp_echo_st.datagrams);
        for (i = 0; i < 3; i++) {
            /* nothing left waiting in a queue */
            assert_int_equal(wisp_netif_txq_len(sim_netif(n[i]), WISP_PRIO_COMMON), 0);
            assert_int_equal(wisp_netif_txq_len(sim_netif(n[i]), WISP_PRIO_EMERG), 0);
            st_client_close(&c[i]);
            wisp_services_udp_stop(&svc[i]);
        }
        ST_FREE(w);
    }
}

/* The run loop cannot hang: a livelock or an event flood stops the run
 * and marks the world failed. */
static void event_budget_stops_a_run(void **state)
{
    struct sim_world *w = sim_world_new(3);
    struct sim_node *a = st_node(w, "a", 1), *b = st_node(w, "b", 2);
    struct st_client c;
    wisp_ipaddr_t dst = st_addr(b);
    uint8_t d[16] = { 0 };
    unsigned i;
    (void)state;

    st_client_open(&c, w, a, 0);
    sim_set_max_events(w, 5);
    for (i = 0; i < 10; i++) {
        (void)st_send(&c, d, sizeof(d), &dst, 9);
    }
    assert_false(sim_run_for(w, 1000000));
    assert_non_null(sim_error(w));
    assert_false(sim_run_for(w, 1000)); /* stays failed */
    st_client_close(&c);
    ST_FREE(w);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(same_seed_same_run_other_seed_other_run),
        cmocka_unit_test(stack_seeds_derive_from_world_seed),
        cmocka_unit_test(loss_duplication_reordering),
        cmocka_unit_test(corrupted_frames_dropped_never_delivered),
        cmocka_unit_test(chaos_wire_never_breaks_the_stacks),
        cmocka_unit_test(event_budget_stops_a_run),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
