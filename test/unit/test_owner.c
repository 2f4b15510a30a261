/**
 * @file test_owner.c
 * The core ownership check (WISP_CORE_ASSERT_OWNER, debug builds) on a
 * stack run by a stack thread: pools know their stack, so a pbuf freed or
 * referenced by a thread that does not own the core is reported by name,
 * and so is a raw API call; the same calls on the stack thread or under
 * wisp_tcpip_lock() are not. Violations go to a counting failure handler
 * (struct wisp_config.fail) instead of the default abort; the abort itself
 * is tested in test_sys.c.
 *
 * The violating calls are made while the stack thread is idle (it has no
 * work and sleeps in its mailbox), so they do not race with it in fact.
 */
#include <stdio.h>
#include <stdlib.h>

#include "testutil.h"
#include "wisp/tcpip.h"

#define MAX_SEEN 16

struct viol {
    unsigned n;
    char where[MAX_SEEN][48];
};

static void count_fail(void *ctx, const char *what, const char *where)
{
    struct viol *v = (struct viol *)ctx;
    assert_non_null(strstr(what, "outside the core context"));
    if (v->n < MAX_SEEN) {
        snprintf(v->where[v->n], sizeof v->where[0], "%s", where);
    }
    v->n++;
}

static uint32_t real_clock(void *ctx)
{
    (void)ctx;
    return wisp_sys_now_ms();
}

struct oenv {
    struct tu_env *e;
    struct wisp_tcpip *ctx;
    struct viol v;
    struct wisp_pbuf *p;
};

static void oenv_init(struct oenv *o)
{
    memset(o, 0, sizeof(*o));
    assert_int_equal(wisp_sys_init(), WISP_OK);
    o->e = tu_env_new(5);
    o->e->s->cfg.now_ms = real_clock;
    o->e->s->cfg.clock_ctx = NULL;
    o->e->s->cfg.fail = count_fail;
    o->e->s->cfg.fail_ctx = &o->v;
    o->ctx = calloc(1, sizeof(*o->ctx));
    assert_non_null(o->ctx);
}

static void oenv_start(struct oenv *o)
{
    struct wisp_tcpip_cfg cfg;
    memset(&cfg, 0, sizeof cfg);
    cfg.name = "test-owner";
    assert_int_equal(wisp_tcpip_start(o->ctx, o->e->s, &cfg), WISP_OK);
    assert_non_null(o->e->s->owner_check);
}

static void oenv_free(struct oenv *o)
{
    free(o->ctx);
    tu_env_free(o->e); /* leak check */
}

/* The calls under test: a pbuf reference and release (the buffer stays
 * allocated: ref 1 -> 2 -> 1) and two raw API calls. */
static void touch(struct wisp_stack *s, struct wisp_pbuf *p)
{
    wisp_pbuf_ref(p);
    (void)wisp_pbuf_free(p);
    wisp_icmp_set_echo_cb(s, NULL, NULL);
    (void)wisp_arp_count(s);
}

static const char *const touch_names[] = { "wisp_pbuf_ref", "wisp_pbuf_free", "wisp_icmp_set_echo_cb",
                                           "wisp_arp_count" };

static void expect_touch_reported(const struct viol *v, unsigned from)
{
    unsigned i;
    assert_int_equal(v->n, from + WISP_ARRAY_SIZE(touch_names));
    for (i = 0; i < WISP_ARRAY_SIZE(touch_names); i++) {
        assert_string_equal(v->where[from + i], touch_names[i]);
    }
}

static wisp_err_t alloc_in_core(struct wisp_stack *s, void *arg)
{
    struct oenv *o = (struct oenv *)arg;
    o->p = wisp_pbuf_alloc(s, WISP_LAYER_TRANSPORT, 100, WISP_PBUF_RAM);
    return o->p != NULL ? WISP_OK : WISP_ERR_MEM;
}

static wisp_err_t touch_in_core(struct wisp_stack *s, void *arg)
{
    touch(s, ((struct oenv *)arg)->p);
    return WISP_OK;
}

static void touch_thread(void *arg)
{
    struct oenv *o = (struct oenv *)arg;
    touch(o->e->s, o->p);
}

static void test_non_owner_reported_owner_not(void **state)
{
    struct oenv o;
    wisp_sys_thread_t th;
    unsigned n;
    (void)state;
#if !WISP_DEBUG
    skip();
#endif
    oenv_init(&o);
    /* Single-threaded use (no stack thread yet): nothing to check. */
    assert_int_equal(alloc_in_core(o.e->s, &o), WISP_OK);
    assert_ptr_equal(o.p->pool->stack, o.e->s); /* pools know their stack */
    touch(o.e->s, o.p);
    assert_int_equal(o.v.n, 0);

    oenv_start(&o);
    /* The stack thread is the owner: nothing reported. */
    assert_int_equal(wisp_tcpip_call(o.ctx, touch_in_core, &o), WISP_OK);
    assert_int_equal(o.v.n, 0);
    /* So is a thread holding the core lock. */
    wisp_tcpip_lock(o.ctx);
    touch(o.e->s, o.p);
    wisp_tcpip_unlock(o.ctx);
    assert_int_equal(o.v.n, 0);

    /* Another thread, no lock: each call reported by name. */
    assert_int_equal(wisp_sys_thread_new(&th, "non-owner", touch_thread, &o, 0, 0), WISP_OK);
    assert_int_equal(wisp_sys_thread_join(&th), WISP_OK);
    expect_touch_reported(&o.v, 0);
    /* The test's own thread is no owner either. */
    n = o.v.n;
    touch(o.e->s, o.p);
    expect_touch_reported(&o.v, n);

    /* The driver way out of the core: takes the lock, not reported. */
    n = o.v.n;
    wisp_tcpip_pbuf_free(o.ctx, o.p);
    o.p = NULL;
    assert_int_equal(o.v.n, n);

    wisp_tcpip_stop(o.ctx);
    assert_null(o.e->s->owner_check);
    /* Single-threaded again: nothing to check. */
    assert_int_equal(alloc_in_core(o.e->s, &o), WISP_OK);
    touch(o.e->s, o.p);
    (void)wisp_pbuf_free(o.p);
    assert_int_equal(o.v.n, n);
    oenv_free(&o);
}

/* A pbuf allocated from the stack thread and freed, as its last reference,
 * by another thread: the free and the pool it goes back to are reported
 * (the most common threading bug of lwIP users). The stack thread is
 * stopped first, so the report is all that happens. */
static void free_thread(void *arg)
{
    struct oenv *o = (struct oenv *)arg;
    (void)wisp_pbuf_free(o->p);
}

static void test_last_free_by_non_owner_reported(void **state)
{
    struct oenv o;
    wisp_sys_thread_t th;
    wisp_sys_mutex_t lock;
    (void)state;
#if !WISP_DEBUG
    skip();
#endif
    oenv_init(&o);
    oenv_start(&o);
    assert_int_equal(wisp_tcpip_call(o.ctx, alloc_in_core, &o), WISP_OK);
    wisp_tcpip_stop(o.ctx);
    /* the owner is now a lock nobody holds (what a running stack thread's
     * lock looks like to a thread outside it) */
    assert_int_equal(wisp_sys_mutex_new(&lock), WISP_OK);
    wisp_tcpip_set_owner(o.e->s, &lock);
    assert_int_equal(wisp_sys_thread_new(&th, "freer", free_thread, &o, 0, 0), WISP_OK);
    assert_int_equal(wisp_sys_thread_join(&th), WISP_OK);
    assert_int_equal(o.v.n, 2);
    assert_string_equal(o.v.where[0], "wisp_pbuf_free");
    assert_string_equal(o.v.where[1], "wisp_pool_free");
    wisp_tcpip_set_owner(o.e->s, NULL);
    wisp_sys_mutex_free(&lock);
    oenv_free(&o); /* the buffer did go back: no leak */
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_non_owner_reported_owner_not),
        cmocka_unit_test(test_last_free_by_non_owner_reported),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
