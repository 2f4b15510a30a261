/**
 * @file test_netif.c
 * Unit tests of interfaces: the emergency/common transmit queues (wisp/netif.h;
 * the lwIP-analysis paper's §4.3), device busy/free signalling, queue bounds, link down flush,
 * interface lookup, DSCP mapping.
 */
#include "testutil.h"

static struct wisp_pbuf *frame(struct tu_env *e, uint8_t tag, uint8_t prio)
{
    struct wisp_pbuf *p = wisp_pbuf_alloc(e->s, WISP_LAYER_RAW, 60, WISP_PBUF_RAM);
    assert_non_null(p);
    memset(p->payload, tag, 60);
    p->prio = prio;
    return p;
}

static void send_tagged(struct tu_env *e, uint8_t tag, uint8_t prio, wisp_err_t expect)
{
    struct wisp_pbuf *p = frame(e, tag, prio);
    assert_int_equal(wisp_netif_tx(&e->nif, p), expect);
    wisp_pbuf_free(p); /* wisp_netif_tx never takes the caller's reference */
}

static void test_free_device_sends_at_once(void **state)
{
    struct tu_env *e = tu_env_new(1);
    uint8_t buf[64];
    (void)state;
    send_tagged(e, 0x11, WISP_PRIO_COMMON, WISP_OK);
    assert_int_equal(tu_pending(e), 1);
    assert_int_equal(tu_pop(e, buf, sizeof(buf)), 60);
    assert_int_equal(buf[0], 0x11);
    assert_int_equal(e->nif.st.tx_queued, 0);
    assert_int_equal(e->nif.st.tx_common, 1);
    assert_int_equal(e->nif.st.tx_emerg, 1); /* the gratuitous ARP of link up */
    tu_env_free(e);
}

static void test_emergency_queue_served_first(void **state)
{
    struct tu_env *e = tu_env_new(2);
    uint8_t buf[64];
    static const uint8_t expect[] = { 0xE1, 0xE2, 0xC1, 0xC2, 0xC3 };
    unsigned i;
    uint32_t emerg0 = e->nif.st.tx_emerg, common0 = e->nif.st.tx_common; /* link-up announcement */
    (void)state;
    e->dev.busy = true;
    send_tagged(e, 0xC1, WISP_PRIO_COMMON, WISP_OK);
    send_tagged(e, 0xC2, WISP_PRIO_COMMON, WISP_OK);
    send_tagged(e, 0xE1, WISP_PRIO_EMERG, WISP_OK);
    send_tagged(e, 0xC3, WISP_PRIO_COMMON, WISP_OK);
    send_tagged(e, 0xE2, WISP_PRIO_EMERG, WISP_OK);
    assert_int_equal(tu_pending(e), 0);
    assert_int_equal(wisp_netif_txq_len(&e->nif, WISP_PRIO_EMERG), 2);
    assert_int_equal(wisp_netif_txq_len(&e->nif, WISP_PRIO_COMMON), 3);
    e->dev.busy = false;
    wisp_dev_tx_ready(&e->dev.dev);
    for (i = 0; i < sizeof(expect); i++) {
        assert_int_equal(tu_pop(e, buf, sizeof(buf)), 60);
        assert_int_equal(buf[0], expect[i]);
    }
    assert_int_equal(e->nif.st.tx_emerg - emerg0, 2);
    assert_int_equal(e->nif.st.tx_common - common0, 3);
    assert_int_equal(e->nif.st.txq_emerg_high, 2);
    assert_int_equal(e->nif.st.txq_common_high, 3);
    tu_env_free(e);
}

/* Urgent frames queued behind common ones leave first once the device is free. */
static void test_urgent_overtakes_queued_common(void **state)
{
    struct tu_env *e = tu_env_new(3);
    uint8_t buf[64];
    (void)state;
    e->dev.busy = true;
    send_tagged(e, 0xC1, WISP_PRIO_COMMON, WISP_OK);
    send_tagged(e, 0xC2, WISP_PRIO_COMMON, WISP_OK);
    /* The device frees up, takes C1, then an urgent frame arrives while it
     * is busy again: it must overtake C2. */
    e->dev.busy = false;
    {
        /* emulate: accept exactly one frame */
        struct wisp_pbuf *c;
        wisp_dev_tx_ready(&e->dev.dev); /* sends both C1 and C2 since device stays free */
        assert_int_equal(tu_pending(e), 2);
        tu_clear(e);
        e->dev.busy = true;
        send_tagged(e, 0xC3, WISP_PRIO_COMMON, WISP_OK);
        send_tagged(e, 0xC4, WISP_PRIO_COMMON, WISP_OK);
        c = frame(e, 0xE9, WISP_PRIO_EMERG);
        assert_int_equal(wisp_netif_tx(&e->nif, c), WISP_OK);
        wisp_pbuf_free(c);
    }
    e->dev.busy = false;
    wisp_dev_tx_ready(&e->dev.dev);
    assert_int_equal(tu_pop(e, buf, sizeof(buf)), 60);
    assert_int_equal(buf[0], 0xE9);
    assert_int_equal(tu_pop(e, buf, sizeof(buf)), 60);
    assert_int_equal(buf[0], 0xC3);
    tu_env_free(e);
}

static void test_queue_full_counted_drop(void **state)
{
    struct tu_env *e = tu_env_new(4);
    unsigned i;
    (void)state;
    e->dev.busy = true;
    for (i = 0; i < WISP_TXQ_COMMON_LEN; i++) {
        send_tagged(e, (uint8_t)i, WISP_PRIO_COMMON, WISP_OK);
    }
    send_tagged(e, 0xFF, WISP_PRIO_COMMON, WISP_ERR_MEM);
    assert_int_equal(TU_CTR(e, NETIF_TXQ_DROP), 1);
    /* the emergency queue is independent */
    send_tagged(e, 0xEE, WISP_PRIO_EMERG, WISP_OK);
    tu_env_free(e); /* teardown flushes the queues: no leak */
}

static void test_link_down_flushes_and_refuses(void **state)
{
    struct tu_env *e = tu_env_new(5);
    (void)state;
    e->dev.busy = true;
    send_tagged(e, 1, WISP_PRIO_COMMON, WISP_OK);
    send_tagged(e, 2, WISP_PRIO_EMERG, WISP_OK);
    wisp_netif_set_link(&e->nif, false);
    assert_int_equal(wisp_netif_txq_len(&e->nif, WISP_PRIO_COMMON), 0);
    assert_int_equal(wisp_netif_txq_len(&e->nif, WISP_PRIO_EMERG), 0);
    assert_int_equal(tu_tx_used(e), 0);
    send_tagged(e, 3, WISP_PRIO_COMMON, WISP_ERR_IF);
    tu_env_free(e);
}

static void test_queued_ref_frame_is_copied(void **state)
{
    /* A REF frame queued while the device is busy is copied: the caller
     * may reuse its memory as soon as wisp_netif_tx returns. */
    struct tu_env *e = tu_env_new(6);
    uint8_t mem[60], buf[64];
    struct wisp_pbuf *p;
    (void)state;
    memset(mem, 0xAB, sizeof(mem));
    e->dev.busy = true;
    p = wisp_pbuf_alloc_ref(e->s, mem, sizeof(mem), WISP_PBUF_REF);
    assert_int_equal(wisp_netif_tx(&e->nif, p), WISP_OK);
    wisp_pbuf_free(p);
    memset(mem, 0, sizeof(mem));
    e->dev.busy = false;
    wisp_dev_tx_ready(&e->dev.dev);
    assert_int_equal(tu_pop(e, buf, sizeof(buf)), 60);
    assert_int_equal(buf[0], 0xAB);
    assert_int_equal(buf[59], 0xAB);
    tu_env_free(e);
}

static void test_dscp_mapping(void **state)
{
    (void)state;
    assert_int_equal(wisp_dscp_prio(0), WISP_PRIO_COMMON);
    assert_int_equal(wisp_dscp_prio(34), WISP_PRIO_COMMON); /* AF41 */
    assert_int_equal(wisp_dscp_prio(46), WISP_PRIO_EMERG);  /* EF */
    assert_int_equal(wisp_dscp_prio(48), WISP_PRIO_EMERG);  /* CS6 */
}

static void test_lookup_and_limits(void **state)
{
    struct tu_env *e = tu_env_new(7);
    struct wisp_netif extra[WISP_MAX_NETIFS];
    struct tu_dev devs[WISP_MAX_NETIFS];
    unsigned i, added = 0;
    (void)state;
    assert_ptr_equal(wisp_netif_by_name(e->s, "tu0"), &e->nif);
    assert_ptr_equal(wisp_netif_by_index(e->s, e->nif.index), &e->nif);
    assert_null(wisp_netif_by_index(e->s, 0));
    assert_null(wisp_netif_by_name(e->s, "nope"));
    memset(devs, 0, sizeof(devs));
    for (i = 0; i < WISP_MAX_NETIFS; i++) {
        devs[i].dev.ops = e->dev.dev.ops;
        devs[i].dev.ctx = &devs[i];
        if (wisp_netif_add_eth(e->s, &extra[i], "x", &devs[i].dev, tu_mac_peer, 1500) != WISP_OK) {
            break;
        }
        added++;
    }
    assert_true(added < WISP_MAX_NETIFS); /* the table has a bound */
    for (i = 0; i < added; i++) {
        wisp_netif_remove(&extra[i]);
    }
    assert_int_equal(wisp_netif_add_eth(e->s, &extra[0], "y", &devs[0].dev, tu_mac_peer, 40), WISP_ERR_VAL);
    tu_env_free(e);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_free_device_sends_at_once),
        cmocka_unit_test(test_emergency_queue_served_first),
        cmocka_unit_test(test_urgent_overtakes_queued_common),
        cmocka_unit_test(test_queue_full_counted_drop),
        cmocka_unit_test(test_link_down_flushes_and_refuses),
        cmocka_unit_test(test_queued_ref_frame_is_copied),
        cmocka_unit_test(test_dscp_mapping),
        cmocka_unit_test(test_lookup_and_limits),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
