/**
 * @file test_ethernet.c
 * Unit tests of Ethernet II framing (src/core/ethernet.c): receive filters
 * and their counters, dispatch, and header construction on output.
 */
#include "testutil.h"

static const uint8_t mac_zero[6] = { 0, 0, 0, 0, 0, 0 };

/* A valid ARP request from the peer for our address, Ethernet dst given. */
static size_t arp_request_frame(uint8_t *buf, const uint8_t dst[6], const uint8_t src[6])
{
    uint8_t *a = buf + tu_eth(buf, dst, src, WISP_ETHTYPE_ARP);
    wisp_wr16(a, 1);
    wisp_wr16(a + 2, WISP_ETHTYPE_IP4);
    a[4] = 6;
    a[5] = 4;
    wisp_wr16(a + 6, 1);
    memcpy(a + 8, tu_mac_peer, 6);
    wisp_ip4_wr(a + 14, tu_ip_peer());
    memcpy(a + 18, mac_zero, 6);
    wisp_ip4_wr(a + 24, tu_ip_self());
    return 42;
}

static void inject(struct tu_env *e, const uint8_t *f, size_t n)
{
    assert_true(tu_inject(e, f, n));
}

static void eth_short_frame_dropped(void **state)
{
    struct tu_env *e = tu_env_new(1);
    uint8_t f[64];
    size_t n;
    (void)state;

    arp_request_frame(f, wisp_eth_bcast, tu_mac_peer);
    for (n = 0; n < WISP_ETH_HLEN; n++)
        inject(e, f, n);
    assert_int_equal(TU_CTR(e, ETH_DROP_SHORT), WISP_ETH_HLEN);
    assert_int_equal(TU_CTR(e, ARP_RX), 0);
    assert_int_equal(tu_pending(e), 0);
    tu_env_free(e);
}

static void eth_frame_for_other_mac_dropped(void **state)
{
    struct tu_env *e = tu_env_new(1);
    static const uint8_t other[6] = { 0x02, 0, 0, 0, 0, 0x99 };
    uint8_t f[64];
    (void)state;

    inject(e, f, arp_request_frame(f, other, tu_mac_peer));
    assert_int_equal(TU_CTR(e, ETH_DROP_NOTFORUS), 1);
    assert_int_equal(TU_CTR(e, ARP_RX), 0);
    assert_int_equal(tu_pending(e), 0);
    tu_env_free(e);
}

static void eth_group_source_dropped(void **state)
{
    struct tu_env *e = tu_env_new(1);
    static const uint8_t mcast[6] = { 0x01, 0x00, 0x5e, 0x00, 0x00, 0x01 };
    uint8_t f[64];
    (void)state;

    inject(e, f, arp_request_frame(f, wisp_eth_bcast, wisp_eth_bcast));
    inject(e, f, arp_request_frame(f, tu_mac_self, mcast));
    assert_int_equal(TU_CTR(e, ETH_DROP_SRC), 2);
    assert_int_equal(TU_CTR(e, ARP_RX), 0);
    assert_int_equal(tu_pending(e), 0);
    tu_env_free(e);
}

static void eth_unknown_ethertype_dropped(void **state)
{
    struct tu_env *e = tu_env_new(1);
    static const uint16_t types[] = { 0x88cc /* LLDP */, WISP_ETHTYPE_IP6, 0x002a /* 802.3 length */, 0x8035 };
    uint8_t f[64];
    unsigned i;
    (void)state;

    for (i = 0; i < WISP_ARRAY_SIZE(types); i++) {
        arp_request_frame(f, wisp_eth_bcast, tu_mac_peer);
        wisp_wr16(f + 12, types[i]);
        inject(e, f, 60);
    }
    assert_int_equal(TU_CTR(e, ETH_DROP_TYPE), WISP_ARRAY_SIZE(types));
    assert_int_equal(TU_CTR(e, ARP_RX), 0);
    assert_int_equal(tu_pending(e), 0);
    tu_env_free(e);
}

static void eth_link_down_dropped(void **state)
{
    struct tu_env *e = tu_env_new(1);
    uint8_t f[64];
    (void)state;

    wisp_netif_set_link(&e->nif, false);
    inject(e, f, arp_request_frame(f, wisp_eth_bcast, tu_mac_peer));
    assert_int_equal(TU_CTR(e, ETH_DROP_LINKDOWN), 1);
    assert_int_equal(TU_CTR(e, ARP_RX), 0);
    tu_env_free(e);
}

static void eth_accepts_unicast_broadcast_and_multicast(void **state)
{
    struct tu_env *e = tu_env_new(1);
    static const uint8_t mcast[6] = { 0x01, 0x00, 0x5e, 0x00, 0x00, 0xfb };
    uint8_t f[64];
    (void)state;

    inject(e, f, arp_request_frame(f, tu_mac_self, tu_mac_peer));
    inject(e, f, arp_request_frame(f, wisp_eth_bcast, tu_mac_peer));
    inject(e, f, arp_request_frame(f, mcast, tu_mac_peer));
    assert_int_equal(TU_CTR(e, ETH_RX), 3);
    assert_int_equal(TU_CTR(e, ARP_RX), 3);
    assert_int_equal(TU_CTR(e, ARP_REPLY_TX), 3);
    assert_int_equal(tu_pending(e), 3);
    tu_env_free(e);
}

/* Expected frame: dst, our MAC, type, then the payload bytes. */
static void expect_frame(struct tu_env *e, const uint8_t dst[6], uint16_t type, const uint8_t *data, size_t n)
{
    uint8_t got[256];
    assert_int_equal(tu_pop(e, got, sizeof(got)), (int)(14 + n));
    assert_memory_equal(got, dst, 6);
    assert_memory_equal(got + 6, tu_mac_self, 6);
    assert_int_equal(wisp_rd16(got + 12), type);
    assert_memory_equal(got + 14, data, n);
}

static void eth_output_header_in_headroom(void **state)
{
    struct tu_env *e = tu_env_new(1);
    struct wisp_pbuf *p = wisp_pbuf_alloc(e->s, WISP_LAYER_LINK, 24, WISP_PBUF_RAM);
    uint8_t data[24];
    uint8_t *payload;
    uint32_t tx;
    (void)state;

    assert_non_null(p);
    memset(data, 0x5a, sizeof(data));
    memcpy(p->payload, data, sizeof(data));
    payload = p->payload;
    tx = TU_CTR(e, ETH_TX);
    assert_int_equal(wisp_eth_output(&e->nif, p, tu_mac_peer, 0x1234), WISP_OK);
    expect_frame(e, tu_mac_peer, 0x1234, data, sizeof(data));
    /* The caller's packet is as it was, and no buffer was added. */
    assert_ptr_equal(p->payload, payload);
    assert_int_equal(p->len, 24);
    assert_int_equal(p->tot_len, 24);
    assert_int_equal(tu_tx_used(e), 1);
    assert_int_equal(TU_CTR(e, ETH_TX), tx + 1);
    wisp_pbuf_free(p);
    tu_env_free(e);
}

static void eth_output_chains_header_without_headroom(void **state)
{
    struct tu_env *e = tu_env_new(1);
    static const uint8_t rom[10] = { 1, 2, 3, 4, 5, 6, 7, 8, 9, 10 };
    uint8_t ram[16];
    struct wisp_pbuf *pr, *pm, *pw;
    uint32_t tx = TU_CTR(e, ETH_TX);
    (void)state;

    memset(ram, 0x77, sizeof(ram));
    pr = wisp_pbuf_alloc_ref(e->s, ram, sizeof(ram), WISP_PBUF_REF);
    pm = wisp_pbuf_alloc_ref(e->s, rom, sizeof(rom), WISP_PBUF_ROM);
    pw = wisp_pbuf_alloc(e->s, WISP_LAYER_RAW, 8, WISP_PBUF_RAM);
    assert_non_null(pr);
    assert_non_null(pm);
    assert_non_null(pw);
    memset(pw->payload, 0x11, 8);

    assert_int_equal(wisp_eth_output(&e->nif, pr, wisp_eth_bcast, WISP_ETHTYPE_IP4), WISP_OK);
    expect_frame(e, wisp_eth_bcast, WISP_ETHTYPE_IP4, ram, sizeof(ram));
    assert_int_equal(wisp_eth_output(&e->nif, pm, tu_mac_peer, WISP_ETHTYPE_IP4), WISP_OK);
    expect_frame(e, tu_mac_peer, WISP_ETHTYPE_IP4, rom, sizeof(rom));
    assert_int_equal(wisp_eth_output(&e->nif, pw, tu_mac_peer, WISP_ETHTYPE_ARP), WISP_OK);
    expect_frame(e, tu_mac_peer, WISP_ETHTYPE_ARP, pw->payload, 8);
    /* Header buffers were freed; the callers' buffers are untouched. */
    assert_int_equal(pr->ref, 1);
    assert_null(pr->next);
    assert_int_equal(pr->tot_len, sizeof(ram));
    assert_int_equal(pm->ref, 1);
    assert_int_equal(pw->ref, 1);
    assert_int_equal(pw->tot_len, 8);
    assert_int_equal(tu_tx_used(e), 1);
    assert_int_equal(e->s->pool[WISP_POOL_PBUF_REF].used, 2);
    assert_int_equal(TU_CTR(e, ETH_TX), tx + 3);
    wisp_pbuf_free(pr);
    wisp_pbuf_free(pm);
    wisp_pbuf_free(pw);
    tu_env_free(e);
}

static void eth_output_keeps_prio_on_chained_header(void **state)
{
    struct tu_env *e = tu_env_new(1);
    uint8_t ram[20];
    struct wisp_pbuf *p;
    (void)state;

    memset(ram, 0x42, sizeof(ram));
    p = wisp_pbuf_alloc_ref(e->s, ram, sizeof(ram), WISP_PBUF_REF);
    assert_non_null(p);
    p->prio = WISP_PRIO_EMERG;
    e->dev.busy = true;
    assert_int_equal(wisp_eth_output(&e->nif, p, tu_mac_peer, WISP_ETHTYPE_IP4), WISP_OK);
    assert_int_equal(wisp_netif_txq_len(&e->nif, WISP_PRIO_EMERG), 1);
    assert_int_equal(wisp_netif_txq_len(&e->nif, WISP_PRIO_COMMON), 0);
    wisp_pbuf_free(p);
    e->dev.busy = false;
    wisp_dev_tx_ready(&e->dev.dev);
    expect_frame(e, tu_mac_peer, WISP_ETHTYPE_IP4, ram, sizeof(ram));
    assert_int_equal(e->nif.st.tx_emerg, 1 + 1);   /* + the announcement at link up */
    tu_env_free(e);
}

static void eth_output_queued_frame_keeps_its_header(void **state)
{
    struct tu_env *e = tu_env_new(1);
    struct wisp_pbuf *p = wisp_pbuf_alloc(e->s, WISP_LAYER_LINK, 30, WISP_PBUF_RAM);
    uint8_t data[30];
    (void)state;

    assert_non_null(p);
    memset(data, 0x3c, sizeof(data));
    memcpy(p->payload, data, sizeof(data));
    e->dev.busy = true;
    assert_int_equal(wisp_eth_output(&e->nif, p, tu_mac_peer, WISP_ETHTYPE_IP4), WISP_OK);
    assert_int_equal(wisp_netif_txq_len(&e->nif, WISP_PRIO_COMMON), 1);
    wisp_pbuf_free(p);
    e->dev.busy = false;
    wisp_dev_tx_ready(&e->dev.dev);
    /* The queue held the same buffer: its link header must still be there. */
    expect_frame(e, tu_mac_peer, WISP_ETHTYPE_IP4, data, sizeof(data));
    tu_env_free(e);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(eth_short_frame_dropped),
        cmocka_unit_test(eth_frame_for_other_mac_dropped),
        cmocka_unit_test(eth_group_source_dropped),
        cmocka_unit_test(eth_unknown_ethertype_dropped),
        cmocka_unit_test(eth_link_down_dropped),
        cmocka_unit_test(eth_accepts_unicast_broadcast_and_multicast),
        cmocka_unit_test(eth_output_header_in_headroom),
        cmocka_unit_test(eth_output_chains_header_without_headroom),
        cmocka_unit_test(eth_output_keeps_prio_on_chained_header),
        cmocka_unit_test(eth_output_queued_frame_keeps_its_header),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
