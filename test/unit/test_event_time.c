/**
 * @file test_event_time.c
 * Time once per event (stack.h): the stack samples its clock once when an
 * event enters (a received frame, a poll, wisp_event_begin) and wisp_now()
 * returns that sample for the whole event; outside events every wisp_now()
 * samples afresh, so nothing is armed from a stale time.
 *
 * The clock here advances by a large step at every read and counts the
 * reads: a time that moved inside one event, or a timer armed from an old
 * sample, shows as a deadline off by multiples of the step.
 */
#include "tcp_testlib.h"

uint32_t tcp_timer_due(const struct wisp_tcp_pcb *pcb, unsigned which); /* tcp_priv.h */

#define STEP 1000u /* ms the clock moves at every read */

struct cclock {
    uint32_t t;      /**< value of the next read */
    unsigned reads;
};

static uint32_t counting_clock(void *ctx)
{
    struct cclock *c = (struct cclock *)ctx;
    uint32_t v = c->t;
    c->t += STEP;
    c->reads++;
    return v;
}

static void use_clock(struct wisp_stack *s, struct cclock *c, uint32_t start)
{
    c->t = start;
    c->reads = 0;
    s->cfg.now_ms = counting_clock;
    s->cfg.clock_ctx = c;
}

static uint32_t (*env_clock_fn)(void *);

/* One established connection with 2 x MSS of the stack's data in flight. */
static void setup_in_flight(struct tt *t, uint8_t *buf, uint32_t *mss)
{
    struct tt_seg g;
    tt_init(t);
    t->o.mss = 536;
    (void)tt_open_active(t);
    env_clock_fn = t->e->s->cfg.now_ms;
    *mss = 536;
    tt_pattern(buf, 2 * 536, 0);
    assert_int_equal(wisp_tcp_write(t->pcb, buf, 2 * 536, WISP_TCP_WRITE_COPY), WISP_OK);
    assert_int_equal(wisp_tcp_output(t->pcb), WISP_OK);
    tt_expect(t, &g);
    tt_expect(t, &g);
    tt_expect_none(t);
}

/* Back to the test environment's manual clock (for tt_done). */
static void restore(struct tt *t, uint32_t now)
{
    t->e->now = now;
    t->e->s->cfg.now_ms = env_clock_fn;
    t->e->s->cfg.clock_ctx = t->e;
}

/* A data segment that acknowledges new data: the stack takes an RTT
 * sample, restarts the retransmission timer, queues the data for the
 * application and schedules its ACK -- with one read of the clock, and
 * every deadline it sets relative to that one time. */
static void test_segment_reads_clock_once(void **state)
{
    struct tt t;
    struct cclock c;
    struct wisp_tcp_info inf;
    uint8_t buf[2 * 536];
    uint32_t mss, t0;
    (void)state;
    setup_in_flight(&t, buf, &mss);

    use_clock(t.e->s, &c, t.e->now + 100u);
    t0 = c.t;
    /* data + ACK of the first segment only: RTO restarts for the second */
    tt_send(&t, TT_ACK, t.snd, t.iss + 1u + mss, "0123456789", 10);
    t.snd += 10;
    assert_int_equal(c.reads, 1);
    assert_int_equal(t.rx_len, 10);

    wisp_tcp_get_info(t.pcb, &inf);
    assert_true(inf.unacked > 0);
    /* RFC 6298 §5.3: restarted "now" -- the event's time */
    assert_true(wisp_timer_armed(&t.e->s->tcp.tick_tmr));
    assert_true((t.pcb->tmr_on & 1u) != 0); /* TCP_TMR_RTO */
    assert_int_equal(tcp_timer_due(t.pcb, 0u), t0 + inf.rto_ms);
    /* the stack's tick runs at the earliest deadline, computed from t0 */
    assert_true(t.e->s->tcp.tick_tmr.due - t0 <= inf.rto_ms);
    if ((t.pcb->tmr_on & 4u) != 0) { /* TCP_TMR_DELACK */
        assert_int_equal(tcp_timer_due(t.pcb, 2u), t0 + WISP_TCP_DELACK_MS); /* TCP_TMR_DELACK */
    }
    /* the event is over: the next read is a fresh one */
    assert_int_equal(wisp_now(t.e->s), t0 + STEP);
    assert_int_equal(c.reads, 2);

    restore(&t, c.t);
    tt_done(&t);
}

/* A raw API call outside any event samples afresh: the retransmission
 * timer it arms starts at the time of the call, not at the last event's. */
static void test_api_call_outside_event_not_stale(void **state)
{
    struct tt t;
    struct cclock c;
    struct wisp_tcp_info inf;
    struct tt_seg g;
    uint8_t buf[2 * 536];
    uint32_t mss, t0, t1;
    (void)state;
    setup_in_flight(&t, buf, &mss);
    use_clock(t.e->s, &c, t.e->now + 100u);
    t0 = c.t;
    tt_send(&t, TT_ACK, t.snd, t.iss + 1u + 2u * mss, NULL, 0); /* all acknowledged */
    assert_int_equal(c.reads, 1);
    assert_true((t.pcb->tmr_on & 1u) == 0); /* nothing in flight: no RTO */

    /* 5 s later, with no event in between, the application writes */
    c.t = t0 + 5000u;
    t1 = c.t;
    assert_int_equal(wisp_tcp_write(t.pcb, buf, 100, WISP_TCP_WRITE_COPY), WISP_OK);
    assert_int_equal(wisp_tcp_output(t.pcb), WISP_OK);
    tt_expect(&t, &g);
    wisp_tcp_get_info(t.pcb, &inf);
    assert_true((t.pcb->tmr_on & 1u) != 0);
    assert_false(wisp_time_before(tcp_timer_due(t.pcb, 0u), t1 + inf.rto_ms)); /* not from t0 */

    /* bracketed as one event: one read, the deadline exactly from it */
    tt_send(&t, TT_ACK, t.snd, g.seq + g.len, NULL, 0);
    c.t += 7000u;
    t1 = c.t;
    c.reads = 0;
    wisp_event_begin(t.e->s);
    assert_int_equal(wisp_tcp_write(t.pcb, buf, 100, WISP_TCP_WRITE_COPY), WISP_OK);
    assert_int_equal(wisp_tcp_output(t.pcb), WISP_OK);
    assert_int_equal(wisp_now(t.e->s), t1);
    wisp_event_end(t.e->s);
    assert_int_equal(c.reads, 1);
    wisp_tcp_get_info(t.pcb, &inf);
    assert_int_equal(tcp_timer_due(t.pcb, 0u), t1 + inf.rto_ms);
    tt_expect(&t, &g);

    restore(&t, c.t);
    tt_done(&t);
}

struct tick_rec {
    struct wisp_timer a, b;
    uint32_t seen[2];
    unsigned n;
};

static struct tick_rec *tick_rec_of;

static void tick_fn(struct wisp_stack *s, struct wisp_timer *tm)
{
    (void)tm;
    tick_rec_of->seen[tick_rec_of->n++] = wisp_now(s);
    if (tick_rec_of->n == 1) {
        wisp_timer_arm(s, &tick_rec_of->b, 10, tick_fn); /* re-armed from the poll's time */
    }
}

/* A poll is one event: the timers it runs see one time, and one re-armed
 * from a callback is relative to it. Events nest without resampling. */
static void test_poll_and_nesting(void **state)
{
    struct tu_env *e = tu_env_new(7);
    uint32_t (*fn)(void *) = e->s->cfg.now_ms;
    struct cclock c;
    struct tick_rec r;
    uint32_t t0;
    (void)state;
    memset(&r, 0, sizeof r);
    tick_rec_of = &r;
    use_clock(e->s, &c, 1000);
    wisp_timer_arm(e->s, &r.a, 5, tick_fn); /* read at 1000: due 1005 */
    c.t = 2000;
    c.reads = 0;
    wisp_stack_poll(e->s);
    assert_int_equal(c.reads, 1);
    assert_int_equal(r.n, 1);
    assert_int_equal(r.seen[0], 2000);
    assert_int_equal(r.b.due, 2010);

    /* nesting: only the outermost begin reads */
    c.reads = 0;
    t0 = c.t;
    wisp_event_begin(e->s);
    wisp_event_begin(e->s);
    assert_int_equal(wisp_now(e->s), t0);
    wisp_stack_poll(e->s); /* an event inside an event: no new read */
    wisp_event_end(e->s);
    assert_int_equal(wisp_now(e->s), t0);
    wisp_event_end(e->s);
    assert_int_equal(c.reads, 1);
    assert_int_equal(e->s->event_depth, 0);

    e->s->cfg.now_ms = fn;
    e->s->cfg.clock_ctx = e;
    e->now = c.t;
    wisp_timer_cancel(e->s, &r.b);
    tu_env_free(e);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_segment_reads_clock_once),
        cmocka_unit_test(test_api_call_outside_event_not_stale),
        cmocka_unit_test(test_poll_and_nesting),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
