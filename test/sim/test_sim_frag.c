/**
 * @file test_sim_frag.c
 * Simulator test of fragmentation and reassembly under impairment: 60 KB
 * (61440-byte) UDP datagrams, fragmented for a 1500-byte MTU, echoed over
 * a wire with 5 % loss, 10 % reordering and 2 % duplication. The client
 * resends a datagram until its echo comes back intact (bounded tries);
 * every datagram must eventually come back byte-exact, for 20 seeds, and
 * every pool must be empty at the end.
 */
#include "simtest.h"

#define BIG 61440u
#define SEEDS 20u
#define DGRAMS_PER_SEED 2u
/* One try needs all 42 fragments there and all 42 back: 0.95^84 = 1.3 %,
 * so about 75 tries on average; 3000 makes a failure by bad luck
 * practically impossible (0.987^3000 < 1e-17). */
#define MAX_TRIES 3000u
#define TRY_TIMEOUT_US 5000u

static bool ping_replied(void *arg)
{
    return ((struct st_ping *)arg)->replies > 0;
}

/* Resolve ARP both ways on a clean wire first, so that the impaired part
 * measures IP alone (ARP retries take a second each). */
static void warm_arp(struct sim_world *w, struct sim_node *a, struct sim_node *b)
{
    struct st_ping pg;
    memset(&pg, 0, sizeof(pg));
    wisp_icmp_set_echo_cb(sim_stack(a), st_ping_cb, &pg);
    assert_int_equal(wisp_icmp_echo_request(sim_stack(a), sim_ip(b), 1, 1, 8, 0), WISP_OK);
    assert_true(sim_run_until(w, ping_replied, &pg, 1000000));
    wisp_icmp_set_echo_cb(sim_stack(a), NULL, NULL);
}

static void run_seed(uint64_t seed, uint8_t *data, unsigned *tries_total, uint64_t *reass_ok)
{
    struct sim_world *w = sim_world_new(seed);
    struct sim_node *a = st_node(w, "client", 1), *b = st_node(w, "server", 2);
    struct wisp_services svc;
    struct st_client c;
    struct sim_link_cfg link;
    wisp_ipaddr_t dst = st_addr(b);
    const struct sim_counters *wc = sim_counters(w);
    unsigned d;

    assert_int_equal(wisp_services_udp_start(sim_stack(b), &svc), WISP_OK);
    st_client_open(&c, w, a, 0);
    warm_arp(w, a, b);

    sim_get_link(w, &link);
    link.loss = 0.05;
    link.reorder = 0.10;
    link.dup = 0.02;
    sim_set_link(w, &link);

    for (d = 0; d < DGRAMS_PER_SEED; d++) {
        unsigned t = st_echo_retry(&c, data, (uint16_t)BIG, (uint32_t)(seed * 16u + d), &dst, WISP_PORT_ECHO,
                                   TRY_TIMEOUT_US, MAX_TRIES);
        if (t == 0) {
            sim_dump(w, stderr);
        }
        assert_true(t > 0);
        *tries_total += t;
        assert_int_equal(c.last_len, BIG);
        assert_memory_equal(c.last, data, BIG);
    }
    /* no corrupted or mixed-up datagram was ever delivered */
    assert_int_equal(c.bad, 0);
    assert_int_equal(svc.udp_echo_st.dropped, 0);
    /* the impairments did happen */
    assert_true(wc->lost > 0);
    assert_true(wc->reordered > 0);
    assert_true(wc->duplicated > 0);
    *reass_ok += sim_stack(a)->ctr[WISP_CTR_IP4_REASS_OK];

    /* let late frames and partial reassemblies drain, then check pools */
    link.loss = link.reorder = link.dup = 0;
    sim_set_link(w, &link);
    assert_true(sim_run_for(w, 100000));
    st_client_close(&c);
    wisp_services_udp_stop(&svc);
    ST_FREE(w);
}

static void udp_60k_fragmented_echo_over_lossy_wire_20_seeds(void **state)
{
    uint8_t *data = malloc(BIG);
    unsigned tries = 0;
    uint64_t seed, reass_ok = 0;
    (void)state;
    assert_non_null(data);
    for (seed = 1; seed <= SEEDS; seed++) {
        run_seed(seed, data, &tries, &reass_ok);
    }
    print_message("%u datagrams of %u bytes echoed in %u tries over %u seeds\n", SEEDS * DGRAMS_PER_SEED, BIG, tries,
                  SEEDS);
    /* every datagram needed its echo reassembled at the client */
    assert_true(reass_ok >= SEEDS * DGRAMS_PER_SEED);
    /* with 5 % loss over 84 fragments, retries must have been needed */
    assert_true(tries > SEEDS * DGRAMS_PER_SEED);
    free(data);
}

/* Clean wire: one 60 KB datagram, one try, 42 fragments each way. */
static void udp_60k_fragmented_echo_clean_wire(void **state)
{
    struct sim_world *w = sim_world_new(99);
    struct sim_node *a = st_node(w, "client", 1), *b = st_node(w, "server", 2);
    struct wisp_services svc;
    struct st_client c;
    wisp_ipaddr_t dst = st_addr(b);
    uint8_t *data = malloc(BIG);
    (void)state;

    assert_non_null(data);
    assert_int_equal(wisp_services_udp_start(sim_stack(b), &svc), WISP_OK);
    st_client_open(&c, w, a, 0);
    warm_arp(w, a, b);
    assert_int_equal(st_echo_retry(&c, data, (uint16_t)BIG, 7, &dst, WISP_PORT_ECHO, 100000, 1), 1);
    assert_int_equal(c.last_len, BIG);
    assert_memory_equal(c.last, data, BIG);
    /* ceil((61440 + 8) / 1480) = 42 fragments */
    assert_int_equal(sim_stack(a)->ctr[WISP_CTR_IP4_FRAG_TX], 42);
    assert_int_equal(sim_stack(b)->ctr[WISP_CTR_IP4_FRAG_TX], 42);
    assert_int_equal(sim_stack(b)->ctr[WISP_CTR_IP4_REASS_OK], 1);
    assert_int_equal(sim_stack(a)->ctr[WISP_CTR_IP4_REASS_OK], 1);
    st_client_close(&c);
    wisp_services_udp_stop(&svc);
    ST_FREE(w);
    free(data);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(udp_60k_fragmented_echo_clean_wire),
        cmocka_unit_test(udp_60k_fragmented_echo_over_lossy_wire_20_seeds),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
