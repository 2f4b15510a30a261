/**
 * @file test_parser_edges.c
 * Input-parser paths that the fuzz harnesses cannot reach through their
 * drivers (they inject frames copied into fresh receive chains), found by
 * the coverage floor (tools/coverage.sh, tools/coverage-floor.txt):
 *  - Ethernet: a chain whose first buffer is shorter than the 14-byte
 *    header (a driver that splits a frame badly) is dropped and counted
 *    (eth.drop.short), not parsed across buffers; the pools return to
 *    baseline;
 *  - IPv4: a chain split inside the 20-byte header (first buffer: the
 *    Ethernet header and 10 bytes) is dropped like a bad header length
 *    (ip4.drop.ihl); the same datagram in one buffer is answered.
 */
#include "testutil.h"

static size_t arp_request(uint8_t *f)
{
    size_t n = tu_eth(f, (const uint8_t *)"\xff\xff\xff\xff\xff\xff", tu_mac_peer, WISP_ETHTYPE_ARP);
    wisp_wr16(f + n, 1);
    wisp_wr16(f + n + 2, WISP_ETHTYPE_IP4);
    f[n + 4] = 6;
    f[n + 5] = 4;
    wisp_wr16(f + n + 6, 1);
    memcpy(f + n + 8, tu_mac_peer, 6);
    wisp_ip4_wr(f + n + 14, tu_ip_peer());
    memset(f + n + 18, 0, 6);
    wisp_ip4_wr(f + n + 24, tu_ip_self());
    return n + 28;
}

static void test_eth_short_first_buffer(void **state)
{
    struct tu_env *e = tu_env_new(1);
    uint8_t f[64];
    size_t n = arp_request(f);
    struct wisp_pbuf *a, *b;
    unsigned rx0 = e->s->pool[WISP_POOL_PBUF_RX].used;
    (void)state;

    /* the same frame whole: answered */
    assert_true(tu_inject(e, f, n));
    assert_int_equal(TU_CTR(e, ARP_REQ_RX), 1);
    assert_int_equal(TU_CTR(e, ETH_DROP_SHORT), 0);
    tu_clear(e);

    /* 10 + rest bytes: the header straddles the first two buffers */
    a = wisp_pbuf_alloc_rx(e->s, 10);
    b = wisp_pbuf_alloc_rx(e->s, (uint16_t)(n - 10));
    assert_non_null(a);
    assert_non_null(b);
    wisp_pbuf_cat(a, b);
    assert_int_equal(a->tot_len, n);
    assert_int_equal(wisp_pbuf_copy_in(a, f, (uint16_t)n, 0), WISP_OK);
    wisp_dev_input(&e->dev.dev, a);
    assert_int_equal(TU_CTR(e, ETH_DROP_SHORT), 1);
    assert_int_equal(TU_CTR(e, ARP_REQ_RX), 1); /* not parsed */
    assert_int_equal(tu_pending(e), 0);
    assert_int_equal(e->s->pool[WISP_POOL_PBUF_RX].used, rx0);
    tu_env_free(e);
}

static void inject_split(struct tu_env *e, const uint8_t *f, size_t n, uint16_t first)
{
    struct wisp_pbuf *a = wisp_pbuf_alloc_rx(e->s, first);
    struct wisp_pbuf *b = wisp_pbuf_alloc_rx(e->s, (uint16_t)(n - first));
    assert_non_null(a);
    assert_non_null(b);
    wisp_pbuf_cat(a, b);
    assert_int_equal(wisp_pbuf_copy_in(a, f, (uint16_t)n, 0), WISP_OK);
    wisp_dev_input(&e->dev.dev, a);
}

static void test_ip4_header_split(void **state)
{
    struct tu_env *e = tu_env_new(2);
    uint8_t f[128];
    size_t n = tu_ping_frame(f, 0x77, 1, "split", 5);
    (void)state;
    tu_arp_peer(e);

    assert_true(tu_inject(e, f, n));
    assert_int_equal(TU_CTR(e, ICMP_ECHO_RX), 1);
    assert_int_equal(tu_pending(e), 1); /* the reply */
    tu_clear(e);

    inject_split(e, f, n, 14 + 10);
    assert_int_equal(TU_CTR(e, IP4_DROP_IHL), 1);
    assert_int_equal(TU_CTR(e, ICMP_ECHO_RX), 1);
    assert_int_equal(tu_pending(e), 0);
    assert_int_equal(e->s->pool[WISP_POOL_PBUF_RX].used, 0);
    tu_env_free(e);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_eth_short_first_buffer),
        cmocka_unit_test(test_ip4_header_split),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
