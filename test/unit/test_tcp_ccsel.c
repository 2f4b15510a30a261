/**
 * @file test_tcp_ccsel.c
 * Congestion control selection (tcp.h wisp_tcp_set_cc & co., tcp_cc.c):
 * names as Linux spells them, the default of new connections, refusal of
 * an algorithm that is not compiled in, a listener passing its choice on
 * to the connections it accepts, wisp_tcp_info.cc; and NewReno's window
 * arithmetic through the core's hooks (RFC 5681 §3.1: slow start by byte
 * counting, one SMSS per window in congestion avoidance, eq. (4)).
 */
#include "tcp_testlib.h"
#include "../../src/core/tcp_priv.h"
#include "../../src/core/tcp_cc.h"

static void test_cc_names(void **state)
{
    (void)state;
    assert_string_equal(wisp_tcp_cc_name(WISP_TCP_CC_NEWRENO), "reno");
    assert_string_equal(wisp_tcp_cc_name(WISP_TCP_CC_CUBIC), "cubic");
    assert_null(wisp_tcp_cc_name(2));
    assert_int_equal(wisp_tcp_cc_by_name("reno"), WISP_TCP_CC_NEWRENO);
    assert_int_equal(wisp_tcp_cc_by_name("cubic"), WISP_TCP_CC_CUBIC);
    assert_int_equal(wisp_tcp_cc_by_name("bbr"), -1);
    assert_int_equal(wisp_tcp_cc_by_name(""), -1);
    assert_int_equal(wisp_tcp_cc_by_name(NULL), -1);
}

static void test_cc_default_and_set(void **state)
{
    struct tt t;
    struct wisp_tcp_info info;
    (void)state;
    tt_init(&t);
    t.pcb = wisp_tcp_new(t.e->s);
    assert_non_null(t.pcb);
    assert_int_equal(wisp_tcp_get_cc(t.pcb), WISP_TCP_CC_DEFAULT);
    assert_int_equal(wisp_tcp_set_cc(t.pcb, 7), WISP_ERR_VAL);
    assert_int_equal(wisp_tcp_set_cc(NULL, WISP_TCP_CC_NEWRENO), WISP_ERR_VAL);
#if WISP_TCP_CUBIC
    assert_int_equal(wisp_tcp_set_cc(t.pcb, WISP_TCP_CC_CUBIC), WISP_OK);
    assert_int_equal(wisp_tcp_get_cc(t.pcb), WISP_TCP_CC_CUBIC);
    wisp_tcp_get_info(t.pcb, &info);
    assert_int_equal(info.cc, WISP_TCP_CC_CUBIC);
#else
    assert_int_equal(wisp_tcp_set_cc(t.pcb, WISP_TCP_CC_CUBIC), WISP_ERR_VAL);
#endif
    assert_int_equal(wisp_tcp_set_cc(t.pcb, WISP_TCP_CC_NEWRENO), WISP_OK);
    assert_int_equal(wisp_tcp_get_cc(t.pcb), WISP_TCP_CC_NEWRENO);
    wisp_tcp_get_info(t.pcb, &info);
    assert_int_equal(info.cc, WISP_TCP_CC_NEWRENO);
    wisp_tcp_abort(t.pcb);
    t.pcb = NULL;
    tt_done(&t);
}

/* A listener's choice is the accepted connection's algorithm. */
static void test_cc_listener_passes_choice_on(void **state)
{
    struct tt t;
    struct wisp_tcp_info info;
    unsigned want = WISP_TCP_CUBIC ? WISP_TCP_CC_CUBIC : WISP_TCP_CC_NEWRENO;
    (void)state;
    tt_init(&t);
    tt_listen(&t, 4);
    assert_int_equal(wisp_tcp_get_cc(t.lpcb), WISP_TCP_CC_DEFAULT);
    assert_int_equal(wisp_tcp_set_cc(t.lpcb, want), WISP_OK);
    assert_int_equal(wisp_tcp_get_cc(t.lpcb), want);
    wisp_tcp_get_info(t.lpcb, &info);
    assert_int_equal(info.cc, want);
    t.o.mss = 1460;
    (void)tt_open_passive(&t);
    assert_int_equal(wisp_tcp_get_cc(t.pcb), want);
    tt_done(&t);
}

/* NewReno through the hooks: slow start grows by min(acked, SMSS) while
 * cwnd < 2 * flight; congestion avoidance adds one SMSS per cwnd of acked
 * data, only while cwnd limits the sender; ssthresh = max(flight / 2,
 * 2 * SMSS); the window is capped at 1 GiB. */
static void test_cc_newreno_arithmetic(void **state)
{
    struct tt t;
    struct wisp_tcp_pcb *p;
    uint32_t smss;
    (void)state;
    tt_init(&t);
    t.o.mss = 1000;
    (void)tt_open_passive(&t);
    p = t.pcb;
    assert_int_equal(wisp_tcp_set_cc(p, WISP_TCP_CC_NEWRENO), WISP_OK);
    smss = tcp_seg_max(p);
    assert_int_equal(smss, 1000);
    assert_int_equal(p->cwnd, 10000); /* RFC 6928 §2 */
    /* slow start: byte counting with L = 1 SMSS */
    tcp_cc_ack(p, 3000, 10000, 0);
    assert_int_equal(p->cwnd, 11000);
    /* not cwnd-limited (cwnd >= 2 * flight): no growth */
    tcp_cc_ack(p, 1000, 5000, 0);
    assert_int_equal(p->cwnd, 11000);
    /* congestion avoidance */
    p->ssthresh = 11000;
    p->ca_acked = 0;
    tcp_cc_ack(p, 6000, 11000, 0);
    assert_int_equal(p->cwnd, 11000);
    tcp_cc_ack(p, 5000, 11000, 0);
    assert_int_equal(p->cwnd, 12000);
    assert_int_equal(p->ca_acked, 0);
    /* application-limited in congestion avoidance: nothing counted */
    tcp_cc_ack(p, 5000, 2000, 0);
    assert_int_equal(p->ca_acked, 0);
    assert_int_equal(p->cwnd, 12000);
    /* RFC 5681 eq. (4) */
    assert_int_equal(tcp_cc_ssthresh(p, 30000, false, 0), 15000);
    assert_int_equal(tcp_cc_ssthresh(p, 3000, true, 0), 2000);
    /* cap */
    p->cwnd = 0x40000000u - 100u;
    p->ssthresh = 0x7fffffffu;
    tcp_cc_ack(p, 1000, 0x30000000u, 0);
    assert_int_equal(p->cwnd, 0x40000000u);
    p->cwnd = 10000;
    p->ssthresh = 0x7fffffffu;
    tt_done(&t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_cc_names),
        cmocka_unit_test(test_cc_default_and_set),
        cmocka_unit_test(test_cc_listener_passes_choice_on),
        cmocka_unit_test(test_cc_newreno_arithmetic),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
