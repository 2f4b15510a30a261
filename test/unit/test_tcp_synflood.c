/**
 * @file test_tcp_synflood.c
 * A SYN flood at segment level (RFC 4987): spoofed SYNs from many off-link
 * sources (198.19.0.0/16, reached through the gateway, so no ARP work)
 * against a listener whose share of the SYN queue is full, while an
 * established connection keeps transferring. Checks that
 *  - every flood SYN is answered by exactly one SYN cookie SYN-ACK (none
 *    is lost, none is queued), the SYN queue stays within the backlog and
 *    its SYN-ACK retransmissions stay bounded;
 *  - the flood allocates nothing that outlives a SYN (pools back at their
 *    baseline after every burst), wakes no application callback and does
 *    not touch the established connection (data still flows, in order);
 *  - a cookie from the flood's period still completes a real handshake.
 *
 * Profiling: WISP_SYNFLOOD_N=<count> sets the number of flood SYNs (default
 * 2000); run under `valgrind --tool=callgrind` and divide the inclusive
 * cost of wisp_dev_input by the count for instructions per SYN.
 */
#include "tcp_testlib.h"

static uint8_t g_data[4096];

/* A Linux-like SYN (MSS, SACK-permitted, timestamps, window scale 7) from
 * src:sport with ISN seq. */
static void flood_syn(struct tt *t, wisp_ip4_t src, uint16_t sport, uint32_t seq, uint32_t tsval)
{
    uint8_t *f = tt_frame_buf;
    uint8_t *h = f + TT_ETH + TT_IPH;
    static const uint8_t opt[20] = { 2, 4, 0x05, 0xb4, 4, 2, 8, 10, 0, 0, 0, 0, 0, 0, 0, 0, 1, 3, 3, 7 };
    uint16_t tlen = 40, sum;
    memset(h, 0, tlen);
    tu_eth(f, tu_mac_self, tu_mac_peer, WISP_ETHTYPE_IP4);
    tu_ip4(f + TT_ETH, src, tu_ip_self(), WISP_IP4_PROTO_TCP, tlen, (uint16_t)seq, 0, 64);
    wisp_wr16(h, sport);
    wisp_wr16(h + 2, t->port);
    wisp_wr32(h + 4, seq);
    h[12] = (uint8_t)(10u << 4);
    h[13] = TT_SYN;
    wisp_wr16(h + 14, 64240);
    memcpy(h + 20, opt, sizeof(opt));
    wisp_wr32(h + 28, tsval);
    sum = wisp_chksum_add(wisp_chksum_pseudo4(src, tu_ip_self(), WISP_IP4_PROTO_TCP, tlen), wisp_chksum_sum(h, tlen));
    wisp_wr16(h + 16, (uint16_t)~sum);
    assert_true(tu_inject(t->e, f, TT_ETH + TT_IPH + tlen));
}

static unsigned flood_count(void)
{
    const char *v = getenv("WISP_SYNFLOOD_N");
    long n = v != NULL ? strtol(v, NULL, 10) : 0;
    return (n > 0 && n <= 10000000) ? (unsigned)n : 2000u;
}

/* Pop every recorded frame; count the pure ACKs of ack to the peer. */
static unsigned acks_to_peer(struct tt *t, uint32_t ack)
{
    static uint8_t b[2048];
    unsigned n = 0;
    int len;
    while ((len = tu_pop(t->e, b, sizeof(b))) >= 0) {
        const uint8_t *ip = b + TT_ETH, *h = b + TT_ETH + TT_IPH;
        if (len >= (int)(TT_ETH + TT_IPH + 20u) && wisp_ip4_rd(ip + 16) == tu_ip_peer() &&
            (h[13] & 0x17u) == TT_ACK && wisp_rd32(h + 8) == ack) {
            n++;
        }
    }
    return n;
}

static uint32_t g_rng = 12345u;
static uint32_t rnd(void)
{
    g_rng = g_rng * 1103515245u + 12345u;
    return g_rng >> 8;
}

static void test_syn_flood_answered_by_cookies_connection_unharmed(void **state)
{
    struct tt t;
    struct wisp_tcp_pcb *first;
    unsigned n = flood_count(), i, sent0, synacks = 0, accepts, recvs;
    uint32_t rx_base, cookies0;
    (void)state;
    tt_init(&t);
    tt_pattern(g_data, sizeof(g_data), 0);
    tt_listen(&t, 2);
    tt_open_passive(&t); /* the established connection (peer 198.18.0.1) */
    accepts = t.accepts;
    recvs = t.recv_calls;
    rx_base = (uint32_t)wisp_stack_pools_in_use(t.e->s);
    tu_clear(t.e);
    sent0 = t.e->dev.sent;
    cookies0 = TU_CTR(t.e, TCP_COOKIE_SENT);
    for (i = 0; i < n; i++) {
        wisp_ip4_t src = wisp_htonl(0xc6130000u | (rnd() & 0xffffu)); /* 198.19.0.0/16 */
        flood_syn(&t, src, (uint16_t)(1024u + rnd() % 60000u), rnd() * 7u, rnd());
        if ((i & 1023u) == 1023u) {
            t.e->now += 100; /* 10 000 SYN/s: 1024 SYNs per ~100 ms */
            assert_int_equal(wisp_stack_pools_in_use(t.e->s), rx_base);
            tu_clear(t.e);
        }
    }
    tu_clear(t.e);
    /* one SYN-ACK per flood SYN: the queue's 2 (backlog) and cookies for
     * the rest; none waited for ARP (off-link: the gateway's entry) */
    synacks = t.e->dev.sent - sent0;
#if WISP_TCP_SYNCOOKIES
    assert_int_equal(synacks, n);
    assert_int_equal(TU_CTR(t.e, TCP_COOKIE_SENT) - cookies0, n - 2u);
#else
    /* without cookies (WISP_TCP_SYNCOOKIES 0) the rest are dropped */
    assert_int_equal(synacks, 2u);
    assert_int_equal(TU_CTR(t.e, TCP_COOKIE_SENT) - cookies0, 0u);
#endif
    assert_int_equal(TU_CTR(t.e, TCP_SYNQ_FULL), n - 2u);
    assert_int_equal(wisp_stack_pools_in_use(t.e->s), rx_base);
    assert_int_equal(t.accepts, accepts);
    assert_int_equal(t.recv_calls, recvs); /* no application wake-up */
    assert_int_equal(wisp_tcp_state(t.pcb), WISP_TCP_ESTABLISHED);
    /* the established connection: data in order, ACKed */
    t.clock += 10;
    tt_data(&t, g_data, 1000);
    assert_int_equal(t.rx_len, 1000);
    assert_memory_equal(t.rx, g_data, 1000);
    tu_advance(t.e, 500); /* the (delayed) ACK, among SYN-ACK retransmissions */
    assert_int_equal(acks_to_peer(&t, t.snd), 1);
    first = t.pcb;
#if WISP_TCP_SYNCOOKIES
    /* a real client's cookie handshake (peer address, new port) during
     * the flood: SYN, cookie SYN-ACK, ACK -> accepted */
    t.pport = 41000;
    t.snd = 0x20000000u;
    t.pcb = NULL;
    tt_open_passive(&t);
    assert_int_equal(t.accepts, accepts + 1u);
    assert_true(TU_CTR(t.e, TCP_COOKIE_OK) >= 1u);
    wisp_tcp_abort(t.pcb);
#endif
    wisp_tcp_abort(first);
    t.pcb = NULL;
    tu_clear(t.e);
    /* the two embryos time out after their bounded retransmissions */
    tu_advance(t.e, 200000);
    assert_int_equal(acks_to_peer(&t, 0), 0);
    assert_int_equal(TU_CTR(t.e, TCP_SYNQ_TIMEOUT), 2);
    assert_true(TU_CTR(t.e, TCP_SYN_RETRANSMIT) <= 2u * WISP_TCP_SYNMAXRTX);
    tt_done(&t);
}

/* The hash index of the SYN queue: many embryos from one peer address
 * (ports 30000..30000+n-1, so chains collide), removed in a scattered
 * order by exact RSTs (every other one) and completed by their final ACKs
 * (the rest): each segment finds exactly its own entry, removed ones are
 * gone (their ACK gets a RST from the listener), and the queue is empty
 * at the end. */
static void test_synq_index_many_embryos(void **state)
{
    enum { N = (WISP_TCP_SYNQ_COUNT < 200u ? WISP_TCP_SYNQ_COUNT : 200u) };
    static uint32_t iss[N];
    struct tt t;
    struct tt_seg g;
    unsigned i, k, accepted = 0, resets = 0;
    (void)state;
    tt_init(&t);
    tt_listen(&t, (uint8_t)(N < 255u ? N : 255u));
    for (i = 0; i < N; i++) {
        t.pport = (uint16_t)(30000u + i);
        tt_send(&t, TT_SYN, 0x1000000u * i, 0, NULL, 0);
        tt_expect(&t, &g);
        assert_int_equal(g.flags, TT_SYN | TT_ACK);
        iss[i] = g.seq;
    }
    assert_int_equal(TU_CTR(t.e, TCP_COOKIE_SENT), 0);
    /* every other embryo (scattered: stride 7) gets the exact RST */
    for (k = 0; k < N; k++) {
        i = (k * 7u) % N;
        if (i % 2u == 0u) {
            t.pport = (uint16_t)(30000u + i);
            tt_send(&t, TT_RST, 0x1000000u * i + 1u, 0, NULL, 0);
            tt_expect_none(&t);
        }
    }
    /* final ACKs for all: the odd ones are accepted, the even ones reset */
    for (k = 0; k < N; k++) {
        i = (k * 13u) % N;
        t.pport = (uint16_t)(30000u + i);
        t.pcb = NULL;
        tt_send(&t, TT_ACK, 0x1000000u * i + 1u, iss[i] + 1u, NULL, 0);
        if (i % 2u == 0u) {
            tt_expect(&t, &g);
            assert_int_equal(g.flags, TT_RST);
            assert_int_equal(g.seq, iss[i] + 1u);
            resets++;
        } else {
            tt_expect_none(&t);
            assert_non_null(t.pcb);
            assert_int_equal(wisp_tcp_state(t.pcb), WISP_TCP_ESTABLISHED);
            wisp_tcp_abort(t.pcb);
            tu_clear(t.e);
            accepted++;
        }
    }
    assert_int_equal(accepted, N / 2u);
    assert_int_equal(resets, (N + 1u) / 2u);
    assert_int_equal(TU_CTR(t.e, TCP_ACCEPT), N / 2u);
    t.pcb = NULL;
    tt_done(&t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_syn_flood_answered_by_cookies_connection_unharmed),
        cmocka_unit_test(test_synq_index_many_embryos),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
