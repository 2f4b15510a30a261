/**
 * @file test_stack.c
 * Unit tests of the stack instance: event timers and the next-deadline
 * report, injected clock wrap-around, seeded randomness, two independent
 * instances in one process, counters and error names, address helpers.
 */
#include "testutil.h"

struct fired {
    struct wisp_timer t;
    int count;
    uint32_t at;
    struct tu_env *e;
};

static void on_fire(struct wisp_stack *s, struct wisp_timer *t)
{
    struct fired *f = (struct fired *)t;
    (void)s;
    f->count++;
    f->at = f->e->now;
}

static void test_timer_fires_at_deadline(void **state)
{
    struct tu_env *e = tu_env_new(1);
    struct fired a = { { 0 }, 0, 0, e }, b = { { 0 }, 0, 0, e };
    uint32_t due;
    uint32_t t0 = e->now;
    (void)state;
    wisp_timer_arm(e->s, &b.t, 250, on_fire);
    wisp_timer_arm(e->s, &a.t, 7, on_fire);
    assert_true(wisp_stack_next_deadline(e->s, &due));
    assert_int_equal(due, t0 + 7);
    assert_int_equal(wisp_stack_next_timeout(e->s), 7);
    tu_advance(e, 6);
    assert_int_equal(a.count, 0);
    tu_advance(e, 1);
    assert_int_equal(a.count, 1);
    assert_int_equal(a.at, t0 + 7);
    assert_int_equal(wisp_stack_next_timeout(e->s), 243);
    wisp_timer_cancel(e->s, &b.t);
    assert_false(wisp_timer_armed(&b.t));
    tu_advance(e, 1000);
    assert_int_equal(b.count, 0);
    tu_env_free(e);
}

static void test_timer_rearm_moves_deadline(void **state)
{
    struct tu_env *e = tu_env_new(2);
    struct fired a = { { 0 }, 0, 0, e };
    (void)state;
    wisp_timer_arm(e->s, &a.t, 10, on_fire);
    wisp_timer_arm(e->s, &a.t, 100, on_fire);
    tu_advance(e, 50);
    assert_int_equal(a.count, 0);
    tu_advance(e, 50);
    assert_int_equal(a.count, 1);
    tu_env_free(e);
}

static void test_clock_wraparound(void **state)
{
    struct tu_env *e = tu_env_new(3);
    struct fired a = { { 0 }, 0, 0, e };
    (void)state;
    e->now = 0xFFFFFFF0u;
    wisp_timer_arm(e->s, &a.t, 0x20, on_fire); /* due after the wrap */
    assert_int_equal(wisp_stack_next_timeout(e->s), 0x20);
    tu_advance(e, 0x1F);
    assert_int_equal(a.count, 0);
    tu_advance(e, 1);
    assert_int_equal(a.count, 1);
    assert_int_equal(a.at, 0x10);
    tu_env_free(e);
}

static void test_seeded_random_is_reproducible(void **state)
{
    struct tu_env *a = tu_env_new(42), *b = tu_env_new(42), *c = tu_env_new(43);
    unsigned i, same = 0;
    (void)state;
    for (i = 0; i < 100; i++) {
        uint32_t x = wisp_random(a->s), y = wisp_random(b->s), z = wisp_random(c->s);
        assert_int_equal(x, y);
        same += (x == z);
    }
    assert_true(same < 3);
    tu_env_free(a);
    tu_env_free(b);
    tu_env_free(c);
}

static void test_two_instances_are_independent(void **state)
{
    struct tu_env *a = tu_env_new(1), *b = tu_env_new(1);
    struct wisp_pbuf *p;
    (void)state;
    p = wisp_pbuf_alloc(a->s, WISP_LAYER_RAW, 10, WISP_PBUF_RAM);
    assert_int_equal(tu_tx_used(a), 1);
    assert_int_equal(tu_tx_used(b), 0);
    WISP_CTR_INC(a->s, IP4_RX);
    assert_int_equal(TU_CTR(b, IP4_RX), 0);
    wisp_pbuf_free(p);
    tu_env_free(a);
    tu_env_free(b);
}

/* Every pool's elements lie inside the stack instance and no two pools
 * share a byte (a stride rounded past the storage once overlapped them). */
static void test_pools_fit_their_storage(void **state)
{
    struct tu_env *e = tu_env_new(5);
    const uint8_t *lo = (const uint8_t *)e->s, *hi = lo + sizeof(*e->s);
    unsigned i, j;
    (void)state;
    for (i = 0; i < WISP_POOL_COUNT; i++) {
        const struct wisp_pool *a = &e->s->pool[i];
        const uint8_t *a_end = a->base + (size_t)a->count * a->elem_size;
        assert_true(a->count > 0);
        assert_true(a->base >= lo && a_end <= hi);
        for (j = 0; j < WISP_POOL_COUNT; j++) {
            const struct wisp_pool *b = &e->s->pool[j];
            const uint8_t *b_end = b->base + (size_t)b->count * b->elem_size;
            if (i != j) {
                assert_true(a_end <= b->base || b_end <= a->base);
            }
        }
    }
    tu_env_free(e);
}

static void test_names(void **state)
{
    unsigned i;
    (void)state;
    assert_string_equal(wisp_err_str(WISP_ERR_MEM), "ERR_MEM");
    assert_string_equal(wisp_err_str(WISP_ERR_ARG), "ERR_ARG");
    assert_string_equal(wisp_err_str((wisp_err_t)-100), "ERR_UNKNOWN");
    assert_string_equal(wisp_counter_name(WISP_CTR_IP4_DROP_CHKSUM), "ip4.drop.chksum");
    assert_null(wisp_counter_name(WISP_CTR_COUNT));
    for (i = 0; i < WISP_CTR_COUNT; i++) {
        assert_non_null(wisp_counter_name(i));
    }
}

static void test_addr_text(void **state)
{
    wisp_ip4_t a;
    char buf[16];
    (void)state;
    assert_true(wisp_ip4_aton("198.18.0.2", &a));
    assert_int_equal(a, wisp_ip4(198, 18, 0, 2));
    assert_string_equal(wisp_ip4_ntoa(a, buf), "198.18.0.2");
    assert_string_equal(wisp_ip4_ntoa(wisp_ip4(0, 0, 0, 0), buf), "0.0.0.0");
    assert_string_equal(wisp_ip4_ntoa(wisp_ip4(255, 255, 255, 255), buf), "255.255.255.255");
    assert_false(wisp_ip4_aton("256.1.1.1", &a));
    assert_false(wisp_ip4_aton("1.2.3", &a));
    assert_false(wisp_ip4_aton("1.2.3.4.", &a));
    assert_false(wisp_ip4_aton("1.2.3.4x", &a));
    assert_false(wisp_ip4_aton("1..3.4", &a));
    assert_false(wisp_ip4_aton("0001.2.3.4", &a));
    assert_false(wisp_ip4_aton("", &a));
    assert_int_equal(wisp_ip4_prefix_mask(24), wisp_ip4(255, 255, 255, 0));
    assert_int_equal(wisp_ip4_prefix_mask(0), 0);
    assert_int_equal(wisp_ip4_prefix_mask(32), 0xffffffffu);
    assert_int_equal(wisp_ip4_prefix_mask(15), wisp_ip4(255, 254, 0, 0));
}

/* wisp_ipaddr_t in the layout this build chose (opt.h WISP_IPV6): 4 bytes
 * without IPv6, 20 tagged bytes with it; the accessors behave the same. */
static void test_ipaddr_layout(void **state)
{
    wisp_ipaddr_t a = wisp_ipaddr4(wisp_ip4(198, 18, 0, 2)), b = wisp_ipaddr_any4(), z;
    static const wisp_ipaddr_t st = WISP_IPADDR4_INIT(0x01020304u);
    (void)state;
    assert_int_equal(sizeof(wisp_ipaddr_t), WISP_IPV6 ? 20u : 4u);
    assert_true(wisp_ipaddr_is4(&a));
    assert_int_equal(wisp_ipaddr_family(&a), WISP_AF_INET4);
    assert_int_equal(wisp_ipaddr_ip4(&a), wisp_ip4(198, 18, 0, 2));
    assert_false(wisp_ipaddr_is_any(&a));
    assert_true(wisp_ipaddr_is_any(&b));
    assert_true(wisp_ipaddr_is_any(NULL));
    assert_false(wisp_ipaddr_eq(&a, &b));
    wisp_ipaddr_set4(&b, wisp_ip4(198, 18, 0, 2));
    assert_true(wisp_ipaddr_eq(&a, &b));
    assert_int_equal(wisp_ipaddr_ip4(&st), 0x01020304u);
    assert_true(wisp_ipaddr_is4(&st));
    memset(&z, 0, sizeof(z)); /* a zeroed address reads as "any" in both layouts */
    assert_true(wisp_ipaddr_is_any(&z));
    assert_int_equal(wisp_ipaddr_ip4(&z), 0);
#if WISP_IPV6
    memset(z.u.ip6, 0, 16);
    z.family = WISP_AF_INET6;
    assert_true(wisp_ipaddr_is_any(&z));
    z.u.ip6[15] = 1;
    assert_false(wisp_ipaddr_is_any(&z));
    assert_false(wisp_ipaddr_is4(&z));
    assert_int_equal(wisp_ipaddr_ip4(&z), 0);
    assert_false(wisp_ipaddr_eq(&z, &a));
#endif
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_timer_fires_at_deadline),
        cmocka_unit_test(test_timer_rearm_moves_deadline),
        cmocka_unit_test(test_clock_wraparound),
        cmocka_unit_test(test_seeded_random_is_reproducible),
        cmocka_unit_test(test_two_instances_are_independent),
        cmocka_unit_test(test_pools_fit_their_storage),
        cmocka_unit_test(test_names),
        cmocka_unit_test(test_addr_text),
        cmocka_unit_test(test_ipaddr_layout),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
