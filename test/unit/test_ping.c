/**
 * @file test_ping.c
 * The ping client (apps/lib/ping.c) against a second stack on the
 * simulated wire (virtual time, microsecond RTTs from the world clock):
 * every request answered with the RTT of the link, duplicates counted when
 * the wire duplicates every frame, timeouts for an address nobody has,
 * partial loss adding up, sequence numbers and sizes on the wire, the echo
 * hook taken by someone else, stopping mid-run.
 */
#include "testutil.h"
#include "simwire.h"
#include "ping.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct pt {
    struct sim_world *w;
    struct sim_node *a, *b;
    struct wisp_ping ping;
    unsigned done_calls, replies, dup_replies, bad_replies;
    uint16_t last_seq;
    uint16_t bytes;
    unsigned seen[64];    /* replies per sequence number (first 64) */
};

static uint64_t pt_clock(void *ctx)
{
    return sim_now_us((const struct sim_world *)ctx);
}

static void pt_done(void *arg, struct wisp_ping *p)
{
    struct pt *t = (struct pt *)arg;
    assert_ptr_equal(p, &t->ping);
    t->done_calls++;
}

static void pt_reply(void *arg, struct wisp_ping *p, const struct wisp_ping_reply *r)
{
    struct pt *t = (struct pt *)arg;
    (void)p;
    t->replies++;
    t->dup_replies += r->dup ? 1u : 0u;
    t->bad_replies += r->bad ? 1u : 0u;
    t->last_seq = r->seq;
    t->bytes = r->bytes;
    if (r->seq < 64u) {
        t->seen[r->seq]++;
    }
}

static void pt_init(struct pt *t, uint64_t seed)
{
    memset(t, 0, sizeof(*t));
    t->w = sim_world_new(seed);
    assert_non_null(t->w);
    t->a = sim_node_add(t->w, "a", "198.18.0.1/24", NULL);
    t->b = sim_node_add(t->w, "b", "198.18.0.2/24", NULL);
    assert_non_null(t->a);
    assert_non_null(t->b);
    assert_true(sim_run_for(t->w, 10000));   /* gratuitous ARPs settle */
}

static void pt_start(struct pt *t, wisp_ip4_t dst, uint32_t count, uint32_t interval_ms, uint16_t size)
{
    struct wisp_ping_cfg cfg;
    memset(&cfg, 0, sizeof(cfg));
    cfg.dst = dst;
    cfg.count = count;
    cfg.interval_ms = interval_ms;
    cfg.size = size;
    cfg.timeout_ms = 1000;
    cfg.done = pt_done;
    cfg.arg = t;
    cfg.on_reply = pt_reply;
    cfg.reply_arg = t;
    cfg.now_us = pt_clock;
    cfg.clock_ctx = t->w;
    assert_int_equal(wisp_ping_start_cfg(&t->ping, sim_stack(t->a), &cfg), WISP_OK);
}

static bool pt_finished(void *arg)
{
    return wisp_ping_finished(&((struct pt *)arg)->ping);
}

static void pt_free(struct pt *t)
{
    wisp_ping_stop(&t->ping);
    assert_null(sim_stack(t->a)->icmp.echo_cb);   /* the hook is given back */
    assert_int_equal(sim_world_free(t->w), 0);
}

/* Every request answered; the RTT is the wire's: 100 us latency each way
 * (infinite bandwidth), so exactly 200 us once ARP is done. */
static void test_ping_all_answered(void **state)
{
    struct pt t;
    const struct wisp_ping_stats *st;
    unsigned i;
    (void)state;
    pt_init(&t, 1);
    pt_start(&t, sim_ip(t.b), 20, 100, 56);
    assert_true(sim_run_until(t.w, pt_finished, &t, 10000000));
    st = wisp_ping_stats(&t.ping);
    assert_int_equal(t.done_calls, 1);
    assert_int_equal(st->sent, 20);
    assert_int_equal(st->received, 20);
    assert_int_equal(st->duplicates, 0);
    assert_int_equal(st->timeouts, 0);
    assert_int_equal(st->errors, 0);
    assert_int_equal(wisp_ping_loss_permille(&t.ping), 0);
    assert_int_equal(t.replies, 20);
    assert_int_equal(t.bytes, 64);          /* 8-byte header + 56 */
    for (i = 0; i < 20; i++) {
        assert_int_equal(t.seen[i], 1);     /* seq 0..19, once each */
    }
    assert_int_equal(st->max_us >= st->avg_us && st->avg_us >= st->min_us, 1);
    assert_int_equal(st->min_us, 200);      /* 2 x 100 us */
    assert_true(st->max_us < 1000000u);     /* the first waits for ARP only */
    assert_true(st->mdev_us <= st->max_us - st->min_us);
    /* 19 intervals of 100 ms, then the last reply */
    assert_true(st->elapsed_ms >= 1900 && st->elapsed_ms <= 1901);
    assert_int_equal(TU_CTR(&(struct tu_env){ .s = sim_stack(t.b) }, ICMP_ECHO_RX), 20);
    pt_free(&t);
}

/* The wire duplicates every frame: each request reaches b twice and each
 * reply comes back twice: 4 replies per request, 3 of them duplicates --
 * except for the last request, whose first reply ends the run (its copies
 * arrive after it): 4 x 3 duplicates. */
static void test_ping_duplicates(void **state)
{
    struct pt t;
    struct sim_link_cfg lc;
    const struct wisp_ping_stats *st;
    (void)state;
    pt_init(&t, 2);
    sim_get_link(t.w, &lc);
    lc.dup = 1.0;
    sim_set_link(t.w, &lc);
    pt_start(&t, sim_ip(t.b), 5, 200, 32);
    assert_true(sim_run_until(t.w, pt_finished, &t, 10000000));
    st = wisp_ping_stats(&t.ping);
    assert_int_equal(st->sent, 5);
    assert_int_equal(st->received, 5);
    assert_int_equal(st->duplicates, 12);
    assert_int_equal(t.dup_replies, 12);
    assert_int_equal(st->errors, 0);
    pt_free(&t);
}

/* Nobody has the address: ARP never resolves, every request times out;
 * the run ends one timeout after the last request. */
static void test_ping_timeouts(void **state)
{
    struct pt t;
    const struct wisp_ping_stats *st;
    wisp_ip4_t nobody;
    (void)state;
    pt_init(&t, 3);
    assert_true(wisp_ip4_aton("198.18.0.99", &nobody));
    pt_start(&t, nobody, 4, 250, 8);
    assert_true(sim_run_until(t.w, pt_finished, &t, 30000000));
    st = wisp_ping_stats(&t.ping);
    assert_int_equal(t.done_calls, 1);
    assert_int_equal(st->sent, 4);
    assert_int_equal(st->received, 0);
    assert_int_equal(st->timeouts + st->errors, 4);
    assert_int_equal(wisp_ping_loss_permille(&t.ping), 1000);
    assert_int_equal(st->min_us, 0);
    assert_int_equal(st->avg_us, 0);
    assert_true(st->elapsed_ms >= 750 + 1000 && st->elapsed_ms <= 750 + 1002);
    pt_free(&t);
}

/* 30 % loss each way: answered + timed out = sent, some of each. */
static void test_ping_loss_adds_up(void **state)
{
    struct pt t;
    struct sim_link_cfg lc;
    const struct wisp_ping_stats *st;
    (void)state;
    pt_init(&t, 4);
    sim_get_link(t.w, &lc);
    lc.loss = 0.3;
    sim_set_link(t.w, &lc);
    pt_start(&t, sim_ip(t.b), 60, 50, 100);
    assert_true(sim_run_until(t.w, pt_finished, &t, 60000000));
    st = wisp_ping_stats(&t.ping);
    assert_int_equal(st->sent, 60);
    assert_int_equal(st->received + st->timeouts + st->errors, 60);
    assert_true(st->received > 10 && st->received < 55);
    assert_int_equal(st->duplicates, 0);
    pt_free(&t);
}

static void other_hook(void *arg, const struct wisp_ip_info *ip, uint16_t id, uint16_t seq, struct wisp_pbuf *p)
{
    (void)arg;
    (void)ip;
    (void)id;
    (void)seq;
    wisp_pbuf_free(p);
}

/* Argument checks, the hook taken by someone else, stop mid-run (no done
 * callback, the waiting requests count as timed out). */
static void test_ping_start_stop(void **state)
{
    struct pt t;
    struct wisp_ping p2;
    const struct wisp_ping_stats *st;
    int dummy;
    (void)state;
    pt_init(&t, 5);
    assert_int_equal(wisp_ping_start(&p2, sim_stack(t.a), 0, 1, 0, 0, NULL, NULL), WISP_ERR_VAL);
    assert_int_equal(wisp_ping_start(&p2, sim_stack(t.a), sim_ip(t.b), 1, 0, 65508, NULL, NULL), WISP_ERR_VAL);
    wisp_icmp_set_echo_cb(sim_stack(t.a), other_hook, &dummy);
    assert_int_equal(wisp_ping_start(&p2, sim_stack(t.a), sim_ip(t.b), 1, 0, 0, NULL, NULL), WISP_ERR_USE);
    wisp_icmp_set_echo_cb(sim_stack(t.a), NULL, NULL);

    /* a big one (fragmented: 3000 bytes) and stop while it runs */
    pt_start(&t, sim_ip(t.b), 100, 100, 3000);
    assert_true(sim_run_for(t.w, 350000));
    assert_false(wisp_ping_finished(&t.ping));
    wisp_ping_stop(&t.ping);
    assert_true(wisp_ping_finished(&t.ping));
    assert_int_equal(t.done_calls, 0);
    st = wisp_ping_stats(&t.ping);
    assert_int_equal(st->sent, 4);
    assert_int_equal(st->received, 4);
    assert_int_equal(t.bytes, 3008);
    assert_true(sim_run_for(t.w, 2000000));   /* nothing runs after stop */
    assert_int_equal(wisp_ping_stats(&t.ping)->sent, 4);
    pt_free(&t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_ping_all_answered), cmocka_unit_test(test_ping_duplicates),
        cmocka_unit_test(test_ping_timeouts),     cmocka_unit_test(test_ping_loss_adds_up),
        cmocka_unit_test(test_ping_start_stop),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
