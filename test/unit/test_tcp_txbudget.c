/**
 * @file test_tcp_txbudget.c
 * Segment-level tests of the TCP transmit budget (opt.h
 * WISP_TCP_SND_MIN_BLOCKS, WISP_TCP_SND_RESERVE_BLOCKS): the blocks one
 * connection's copies may take, exactly, with a given number of free
 * transmit blocks (the fair share: beyond the guarantee G no more than
 * stays free outside the control reserve C and the progress reserve P);
 * the guarantee taken from the progress reserve; the accounting of the
 * blocks through zero-window probes (split segments) back to zero. The
 * test holds transmit blocks itself to set the free count (as another
 * protocol could). The peer announces MSS 1000 without timestamps: every
 * 1000-byte write is one segment in one block.
 */
#include "tcp_testlib.h"

#define SEG 1000u
#define C_RSV (WISP_PBUF_TX_COUNT / 16u > 2u ? WISP_PBUF_TX_COUNT / 16u : 2u)
#define G_MIN ((unsigned)WISP_TCP_SND_MIN_BLOCKS)
#define P_RSV ((unsigned)WISP_TCP_SND_RESERVE_BLOCKS)

static uint8_t g_data[SEG];
static struct wisp_pbuf *g_hold[WISP_PBUF_TX_COUNT];
static unsigned g_nhold;

static void t_open(struct tt *t)
{
    tt_init(t);
    tt_pattern(g_data, sizeof(g_data), 0);
    t->o.mss = SEG;
    tt_open_passive(t);
}

static unsigned tx_free(struct tt *t)
{
    const struct wisp_pool *tx = &t->e->s->pool[WISP_POOL_PBUF_TX];
    return (unsigned)(tx->count - tx->used);
}

/* Hold transmit blocks until exactly n are free. */
static void hold_until_free(struct tt *t, unsigned n)
{
    while (tx_free(t) > n) {
        g_hold[g_nhold] = wisp_pbuf_alloc(t->e->s, WISP_LAYER_RAW, WISP_PBUF_BLOCK_SIZE - 64u, WISP_PBUF_RAM);
        assert_non_null(g_hold[g_nhold]);
        g_nhold++;
    }
    assert_int_equal(tx_free(t), n);
}

static void release_held(void)
{
    while (g_nhold > 0) {
        wisp_pbuf_free(g_hold[--g_nhold]);
    }
}

static unsigned snd_blocks(struct tt *t)
{
    struct wisp_tcp_info in;
    wisp_tcp_get_info(t->pcb, &in);
    return (unsigned)in.snd_blocks;
}

/* One-block writes until refused; returns the writes accepted. */
static unsigned fill(struct tt *t)
{
    unsigned n = 0;
    wisp_err_t err;
    while ((err = wisp_tcp_write(t->pcb, g_data, SEG, WISP_TCP_WRITE_COPY)) == WISP_OK) {
        n++;
        assert_true(n <= WISP_PBUF_TX_COUNT);
    }
    assert_int_equal(err, WISP_ERR_MEM);
    return n;
}

/* The fair share, exactly: with f0 blocks free, a connection whose peer
 * keeps a zero window takes h blocks, the largest with h - G <= (f0 - h) -
 * C - P (what stays free for the others outside the reserves), then
 * WISP_ERR_MEM counted as tcp.write.txshare; the others can still take
 * theirs. */
static void fair_share_is_half_of_the_free_blocks_outside_the_reserves(void **state)
{
    struct tt t;
    unsigned f0 = C_RSV + P_RSV + 40u, want = (40u + G_MIN) / 2u, got;
    (void)state;
    t_open(&t);
    t.wnd = 0;
    tt_ack(&t); /* the peer's window closes */
    hold_until_free(&t, f0);
    got = fill(&t);
    assert_int_equal(got, want);
    assert_int_equal(snd_blocks(&t), want);
    assert_true(TU_CTR(t.e, TCP_WRITE_TXSHARE) > 0);
    assert_int_equal(TU_CTR(t.e, TCP_WRITE_TXRESERVE), 0);
    /* what stays free: at least the reserves and this connection's share */
    assert_true(tx_free(&t) >= C_RSV + P_RSV + (want - G_MIN));
    release_held();
    tt_done(&t);
}

/* The guarantee: with only the control reserve and G blocks free (all the
 * rest held elsewhere, the progress reserve included), a connection still
 * gets G blocks; the control reserve is never taken
 * (tcp.write.txreserve). */
static void guarantee_is_taken_from_the_progress_reserve(void **state)
{
    struct tt t;
    (void)state;
    t_open(&t);
    t.wnd = 0;
    tt_ack(&t);
    hold_until_free(&t, C_RSV + G_MIN);
    assert_int_equal(fill(&t), G_MIN);
    assert_int_equal(snd_blocks(&t), G_MIN);
    assert_int_equal(tx_free(&t), C_RSV);
    assert_true(TU_CTR(t.e, TCP_WRITE_TXRESERVE) > 0);
    release_held();
    tt_done(&t);
}

/* The accounting follows the segments: zero-window probes split one octet
 * off (a copy), the window opens, everything is sent and acknowledged:
 * the connection holds no block, the pools are back at baseline. */
static void blocks_are_accounted_through_probes_and_acks(void **state)
{
    struct tt t;
    struct tt_seg g;
    struct wisp_tcp_info info;
    unsigned i, n;
    (void)state;
    t_open(&t);
    t.wnd = 0;
    tt_ack(&t);
    for (i = 0; i < 5; i++) {
        assert_int_equal(wisp_tcp_write(t.pcb, g_data, SEG, WISP_TCP_WRITE_COPY), WISP_OK);
    }
    assert_int_equal(snd_blocks(&t), 5);
    tu_advance(t.e, 0);
    wisp_tcp_get_info(t.pcb, &info);
    tu_advance(t.e, info.rto_ms); /* the first probe: one octet split off */
    assert_true(tt_pop(&t, &g));
    assert_int_equal(g.len, 1);
    while (tt_pop(&t, &g)) {
    }
    n = snd_blocks(&t);
    assert_true(n == 5 || n == 6); /* the octet's copy may take a block */
    /* the window opens: all goes out; acknowledge it */
    t.wnd = 65535;
    tt_ack(&t);
    for (i = 0; i < 100 && t.sent_total < 5u * SEG; i++) {
        tu_advance(t.e, 10);
        while (tt_pop(&t, &g)) {
            if (g.len > 0 && g.seq + g.len > t.rcv) {
                t.rcv = g.seq + g.len;
            }
        }
        tt_ack(&t);
    }
    assert_int_equal(t.sent_total, 5u * SEG);
    assert_int_equal(snd_blocks(&t), 0);
    tt_done(&t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(fair_share_is_half_of_the_free_blocks_outside_the_reserves),
        cmocka_unit_test(guarantee_is_taken_from_the_progress_reserve),
        cmocka_unit_test(blocks_are_accounted_through_probes_and_acks),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
