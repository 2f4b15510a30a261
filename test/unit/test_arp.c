/**
 * @file test_arp.c
 * Unit tests of ARP (src/core/arp.c): replies, the RFC 826 merge rule,
 * resolution with queued packets, retries, ageing, table replacement,
 * gratuitous announcements, address conflicts and malformed input.
 */
#include "testutil.h"
#include "wisp/prot/arp.h"

#define ARP_FRAME_LEN (WISP_ETH_HLEN + WISP_ARP_LEN)

static const uint8_t mac_zero[6] = { 0, 0, 0, 0, 0, 0 };
static const uint8_t mac_other[6] = { 0x02, 0, 0, 0, 0, 0x33 };

/* Build an Ethernet + ARP (Ethernet/IPv4) frame; returns 42. */
static size_t arp_frame(uint8_t *buf, const uint8_t eth_dst[6], const uint8_t eth_src[6], uint16_t op,
                        const uint8_t sha[6], wisp_ip4_t spa, const uint8_t tha[6], wisp_ip4_t tpa)
{
    uint8_t *a = buf + tu_eth(buf, eth_dst, eth_src, WISP_ETHTYPE_ARP);
    wisp_wr16(a, 1);
    wisp_wr16(a + 2, WISP_ETHTYPE_IP4);
    a[4] = 6;
    a[5] = 4;
    wisp_wr16(a + 6, op);
    memcpy(a + 8, sha, 6);
    wisp_ip4_wr(a + 14, spa);
    memcpy(a + 18, tha, 6);
    wisp_ip4_wr(a + 24, tpa);
    return ARP_FRAME_LEN;
}

/* A request from the peer for ip, broadcast. */
static size_t peer_request(uint8_t *buf, wisp_ip4_t ip)
{
    return arp_frame(buf, wisp_eth_bcast, tu_mac_peer, 1, tu_mac_peer, tu_ip_peer(), mac_zero, ip);
}

/* A reply from the peer to us. */
static size_t peer_reply(uint8_t *buf, const uint8_t mac[6])
{
    return arp_frame(buf, tu_mac_self, mac, 2, mac, tu_ip_peer(), tu_mac_self, tu_ip_self());
}

static void inject(struct tu_env *e, const uint8_t *f, size_t n)
{
    assert_true(tu_inject(e, f, n));
}

/* A fake IP packet (no link header) with LINK headroom: n bytes of which
 * the first is 0x45 and the rest a pattern starting at tag. */
static struct wisp_pbuf *ip_packet(struct tu_env *e, uint16_t n, uint8_t tag)
{
    struct wisp_pbuf *p = wisp_pbuf_alloc(e->s, WISP_LAYER_LINK, n, WISP_PBUF_RAM);
    uint16_t i;
    assert_non_null(p);
    for (i = 0; i < n; i++)
        p->payload[i] = (uint8_t)(tag + i);
    p->payload[0] = 0x45;
    return p;
}

/* Pop one frame and check it is a broadcast ARP request from us for ip. */
static void expect_request(struct tu_env *e, const uint8_t eth_dst[6], wisp_ip4_t ip)
{
    uint8_t got[128], want[ARP_FRAME_LEN];
    arp_frame(want, eth_dst, tu_mac_self, 1, tu_mac_self, tu_ip_self(), mac_zero, ip);
    assert_int_equal(tu_pop(e, got, sizeof(got)), ARP_FRAME_LEN);
    assert_memory_equal(got, want, ARP_FRAME_LEN);
}

static void arp_reply_to_request_for_our_ip(void **state)
{
    struct tu_env *e = tu_env_new(1);
    uint8_t f[64], got[128], want[ARP_FRAME_LEN];
    uint8_t mac[6];
    (void)state;

    inject(e, f, peer_request(f, tu_ip_self()));
    /* RFC 826: opcode 2, our addresses as sender, the requester as target,
     * unicast to the requester. */
    arp_frame(want, tu_mac_peer, tu_mac_self, 2, tu_mac_self, tu_ip_self(), tu_mac_peer, tu_ip_peer());
    assert_int_equal(tu_pending(e), 1);
    assert_int_equal(tu_pop(e, got, sizeof(got)), ARP_FRAME_LEN);
    assert_memory_equal(got, want, ARP_FRAME_LEN);
    assert_int_equal(TU_CTR(e, ARP_REPLY_TX), 1);
    assert_int_equal(TU_CTR(e, ARP_REQ_RX), 1);
    /* The requester is cached (it is about to talk to us). */
    assert_true(wisp_arp_lookup(e->s, e->nif.index, tu_ip_peer(), mac));
    assert_memory_equal(mac, tu_mac_peer, 6);
    tu_env_free(e);
}

static void arp_padded_request_is_answered(void **state)
{
    struct tu_env *e = tu_env_new(1);
    uint8_t f[WISP_ETH_MIN_FRAME], got[128];
    (void)state;

    memset(f, 0xee, sizeof(f));
    peer_request(f, tu_ip_self());
    inject(e, f, sizeof(f));   /* 18 bytes of padding after the ARP packet */
    assert_int_equal(tu_pop(e, got, sizeof(got)), ARP_FRAME_LEN);
    assert_int_equal(wisp_rd16(got + 20), 2);
    tu_env_free(e);
}

static void arp_request_for_other_ip_no_reply_no_entry(void **state)
{
    struct tu_env *e = tu_env_new(1);
    uint8_t f[64];
    (void)state;

    inject(e, f, peer_request(f, wisp_ip4(198, 18, 0, 77)));
    assert_int_equal(tu_pending(e), 0);
    assert_int_equal(wisp_arp_count(e->s), 0);
    assert_int_equal(TU_CTR(e, ARP_DROP_NOTFORUS), 1);
    tu_env_free(e);
}

static void arp_unsolicited_reply_creates_no_entry(void **state)
{
    struct tu_env *e = tu_env_new(1);
    uint8_t f[64];
    (void)state;

    inject(e, f, peer_reply(f, tu_mac_peer));
    assert_int_equal(wisp_arp_count(e->s), 0);
    assert_false(wisp_arp_lookup(e->s, 0, tu_ip_peer(), NULL));
    assert_int_equal(TU_CTR(e, ARP_DROP_UNSOLICITED), 1);
    assert_int_equal(tu_pending(e), 0);
    tu_env_free(e);
}

static void arp_merge_updates_existing_entry(void **state)
{
    struct tu_env *e = tu_env_new(1);
    uint8_t f[64], mac[6];
    (void)state;

    inject(e, f, peer_request(f, tu_ip_self()));
    tu_clear(e);
    /* RFC 826 merge: the peer, now with another MAC, asks for someone else. */
    inject(e, f, arp_frame(f, wisp_eth_bcast, mac_other, 1, mac_other, tu_ip_peer(), mac_zero,
                           wisp_ip4(198, 18, 0, 77)));
    assert_true(wisp_arp_lookup(e->s, e->nif.index, tu_ip_peer(), mac));
    assert_memory_equal(mac, mac_other, 6);
    assert_int_equal(TU_CTR(e, ARP_DROP_NOTFORUS), 0);
    assert_int_equal(tu_pending(e), 0);
    tu_env_free(e);
}

static void arp_reply_resolves_and_flushes_queue_in_order(void **state)
{
    struct tu_env *e = tu_env_new(1);
    uint8_t f[64], got[256];
    struct wisp_pbuf *p[3];
    uint32_t emerg, common;
    unsigned i;
    (void)state;

    for (i = 0; i < 3; i++) {
        p[i] = ip_packet(e, (uint16_t)(40 + i), (uint8_t)(0x10 * (i + 1)));
        p[i]->prio = (uint8_t)(i == 1 ? WISP_PRIO_EMERG : WISP_PRIO_COMMON);
        assert_int_equal(wisp_arp_output(&e->nif, p[i], tu_ip_peer()), WISP_OK);
    }
    /* One request only (RFC 1122 §2.3.2.1), broadcast, byte-exact. */
    assert_int_equal(tu_pending(e), 1);
    expect_request(e, wisp_eth_bcast, tu_ip_peer());
    assert_int_equal(TU_CTR(e, ARP_REQ_TX), 1);
    assert_int_equal(wisp_arp_count(e->s), 1);

    emerg = e->nif.st.tx_emerg;
    common = e->nif.st.tx_common;
    inject(e, f, peer_reply(f, tu_mac_peer));
    assert_int_equal(tu_pending(e), 3);
    /* Queued IP packets keep their own transmit class. */
    assert_int_equal(e->nif.st.tx_emerg, emerg + 1);
    assert_int_equal(e->nif.st.tx_common, common + 2);
    for (i = 0; i < 3; i++) {
        int n = tu_pop(e, got, sizeof(got));
        assert_int_equal(n, 14 + 40 + (int)i);
        assert_memory_equal(got, tu_mac_peer, 6);
        assert_memory_equal(got + 6, tu_mac_self, 6);
        assert_int_equal(wisp_rd16(got + 12), WISP_ETHTYPE_IP4);
        assert_memory_equal(got + 14, p[i]->payload, 40 + i);
        /* The caller's packet is unchanged (no link header left on it). */
        assert_int_equal(p[i]->tot_len, 40 + i);
        wisp_pbuf_free(p[i]);
    }
    assert_true(wisp_arp_lookup(e->s, e->nif.index, tu_ip_peer(), NULL));
    assert_int_equal(TU_CTR(e, ARP_QUEUE_DROP), 0);
    assert_int_equal(tu_tx_used(e), 0);
    /* Now resolved: the next packet leaves at once. */
    p[0] = ip_packet(e, 20, 0);
    assert_int_equal(wisp_arp_output(&e->nif, p[0], tu_ip_peer()), WISP_OK);
    assert_int_equal(tu_pop(e, got, sizeof(got)), 34);
    assert_memory_equal(got, tu_mac_peer, 6);
    wisp_pbuf_free(p[0]);
    tu_env_free(e);
}

static void arp_queue_overflow_drops_oldest(void **state)
{
    struct tu_env *e = tu_env_new(1);
    uint8_t f[64], got[256];
    const unsigned n = WISP_ARP_QUEUE_LEN + 2;
    unsigned i;
    (void)state;

    for (i = 0; i < n; i++) {
        struct wisp_pbuf *p = ip_packet(e, 30, (uint8_t)i);
        p->payload[1] = (uint8_t)i;   /* sequence number */
        assert_int_equal(wisp_arp_output(&e->nif, p, tu_ip_peer()), WISP_OK);
        wisp_pbuf_free(p);
    }
    assert_int_equal(TU_CTR(e, ARP_QUEUE_DROP), 2);
    /* Only the queued ones still use buffers. */
    assert_int_equal(tu_tx_used(e), WISP_ARP_QUEUE_LEN);
    tu_clear(e);
    inject(e, f, peer_reply(f, tu_mac_peer));
    assert_int_equal(tu_pending(e), WISP_ARP_QUEUE_LEN);
    for (i = 2; i < n; i++) {
        assert_int_equal(tu_pop(e, got, sizeof(got)), 44);
        assert_int_equal(got[15], i);   /* the newest ones, in order */
    }
    assert_int_equal(tu_tx_used(e), 0);
    tu_env_free(e);
}

static void arp_ref_packet_is_copied_when_queued(void **state)
{
    struct tu_env *e = tu_env_new(1);
    uint8_t data[32], f[64], got[128];
    struct wisp_pbuf *p;
    (void)state;

    memset(data, 0xab, sizeof(data));
    p = wisp_pbuf_alloc_ref(e->s, data, sizeof(data), WISP_PBUF_REF);
    assert_non_null(p);
    assert_int_equal(wisp_arp_output(&e->nif, p, tu_ip_peer()), WISP_OK);
    wisp_pbuf_free(p);
    memset(data, 0x00, sizeof(data));   /* the caller reuses its memory */
    tu_clear(e);
    inject(e, f, peer_reply(f, tu_mac_peer));
    assert_int_equal(tu_pop(e, got, sizeof(got)), 14 + 32);
    assert_int_equal(got[14], 0xab);
    assert_int_equal(got[14 + 31], 0xab);
    tu_env_free(e);
}

static void arp_retries_every_second_then_resolve_fail(void **state)
{
    struct tu_env *e = tu_env_new(1);
    struct wisp_pbuf *p;
    unsigned i;
    (void)state;

    p = ip_packet(e, 28, 1);
    assert_int_equal(wisp_arp_output(&e->nif, p, tu_ip_peer()), WISP_OK);
    wisp_pbuf_free(p);   /* the queue keeps its own reference */
    expect_request(e, wisp_eth_bcast, tu_ip_peer());
    for (i = 1; i < WISP_ARP_MAX_TRIES; i++) {
        tu_advance(e, WISP_ARP_RETRY_MS - 1);
        assert_int_equal(tu_pending(e), 0);   /* never faster than 1/s */
        tu_advance(e, 1);
        assert_int_equal(tu_pending(e), 1);
        expect_request(e, wisp_eth_bcast, tu_ip_peer());
    }
    assert_int_equal(TU_CTR(e, ARP_REQ_TX), WISP_ARP_MAX_TRIES);
    assert_int_equal(TU_CTR(e, ARP_RESOLVE_FAIL), 0);
    tu_advance(e, WISP_ARP_RETRY_MS);
    assert_int_equal(tu_pending(e), 0);
    assert_int_equal(TU_CTR(e, ARP_RESOLVE_FAIL), 1);
    assert_int_equal(TU_CTR(e, ARP_QUEUE_DROP), 1);
    assert_int_equal(wisp_arp_count(e->s), 0);
    assert_int_equal(tu_tx_used(e), 0);
    assert_false(wisp_timer_armed(&e->s->arp.tmr));
    tu_env_free(e);
}

static void arp_retry_then_late_reply_resolves(void **state)
{
    struct tu_env *e = tu_env_new(1);
    uint8_t f[64], got[128];
    struct wisp_pbuf *p;
    (void)state;

    p = ip_packet(e, 28, 1);
    assert_int_equal(wisp_arp_output(&e->nif, p, tu_ip_peer()), WISP_OK);
    tu_advance(e, 2 * WISP_ARP_RETRY_MS);
    assert_int_equal(tu_pending(e), 3);
    tu_clear(e);
    inject(e, f, peer_reply(f, tu_mac_peer));
    assert_int_equal(tu_pop(e, got, sizeof(got)), 14 + 28);
    assert_memory_equal(got, tu_mac_peer, 6);
    /* Resolved: no more requests. */
    tu_advance(e, 10 * WISP_ARP_RETRY_MS);
    assert_int_equal(tu_pending(e), 0);
    wisp_pbuf_free(p);
    tu_env_free(e);
}

static void arp_entry_expires_after_max_age(void **state)
{
    struct tu_env *e = tu_env_new(1);
    uint8_t f[64];
    (void)state;

    inject(e, f, peer_request(f, tu_ip_self()));
    assert_true(wisp_timer_armed(&e->s->arp.tmr));
    tu_advance(e, WISP_ARP_MAX_AGE_MS - 1);
    assert_true(wisp_arp_lookup(e->s, e->nif.index, tu_ip_peer(), NULL));
    tu_advance(e, 1);
    assert_false(wisp_arp_lookup(e->s, e->nif.index, tu_ip_peer(), NULL));
    assert_int_equal(wisp_arp_count(e->s), 0);
    assert_false(wisp_timer_armed(&e->s->arp.tmr));
    tu_env_free(e);
}

static void arp_use_does_not_refresh_but_polls_near_expiry(void **state)
{
    struct tu_env *e = tu_env_new(1);
    const uint32_t refresh_at = WISP_ARP_MAX_AGE_MS - WISP_ARP_MAX_AGE_MS / 10u;
    uint8_t f[64], got[128];
    struct wisp_pbuf *p;
    (void)state;

    inject(e, f, peer_request(f, tu_ip_self()));
    tu_clear(e);
    p = ip_packet(e, 20, 0);
    tu_advance(e, refresh_at - 1);
    assert_int_equal(wisp_arp_output(&e->nif, p, tu_ip_peer()), WISP_OK);
    assert_int_equal(tu_pending(e), 1);   /* data only */
    tu_clear(e);
    tu_advance(e, 1);
    assert_int_equal(wisp_arp_output(&e->nif, p, tu_ip_peer()), WISP_OK);
    /* One unicast request to the known MAC, plus the data. */
    assert_int_equal(tu_pending(e), 2);
    expect_request(e, tu_mac_peer, tu_ip_peer());
    assert_int_equal(tu_pop(e, got, sizeof(got)), 34);
    assert_int_equal(wisp_rd16(got + 12), WISP_ETHTYPE_IP4);
    /* Only once. */
    assert_int_equal(wisp_arp_output(&e->nif, p, tu_ip_peer()), WISP_OK);
    assert_int_equal(tu_pending(e), 1);
    tu_clear(e);
    /* Without an answer the entry still expires at its age: use refreshed nothing. */
    tu_advance(e, WISP_ARP_MAX_AGE_MS - refresh_at - 1);
    assert_true(wisp_arp_lookup(e->s, e->nif.index, tu_ip_peer(), NULL));
    tu_advance(e, 1);
    assert_false(wisp_arp_lookup(e->s, e->nif.index, tu_ip_peer(), NULL));
    wisp_pbuf_free(p);
    tu_env_free(e);
}

static void arp_refresh_reply_extends_life(void **state)
{
    struct tu_env *e = tu_env_new(1);
    const uint32_t refresh_at = WISP_ARP_MAX_AGE_MS - WISP_ARP_MAX_AGE_MS / 10u;
    uint8_t f[64];
    struct wisp_pbuf *p;
    (void)state;

    inject(e, f, peer_request(f, tu_ip_self()));
    p = ip_packet(e, 20, 0);
    tu_advance(e, refresh_at);
    assert_int_equal(wisp_arp_output(&e->nif, p, tu_ip_peer()), WISP_OK);
    inject(e, f, peer_reply(f, tu_mac_peer));
    tu_advance(e, WISP_ARP_MAX_AGE_MS - 1);
    assert_true(wisp_arp_lookup(e->s, e->nif.index, tu_ip_peer(), NULL));
    tu_advance(e, 1);
    assert_false(wisp_arp_lookup(e->s, e->nif.index, tu_ip_peer(), NULL));
    wisp_pbuf_free(p);
    tu_env_free(e);
}

static wisp_ip4_t host_ip(unsigned i) { return wisp_ip4(198, 18, 0, (uint8_t)(10 + i)); }

static void host_mac(uint8_t mac[6], unsigned i)
{
    static const uint8_t base[6] = { 0x02, 0, 0, 0, 0x01, 0 };
    memcpy(mac, base, 6);
    mac[5] = (uint8_t)i;
}

static void host_request(struct tu_env *e, unsigned i)
{
    uint8_t f[64], mac[6];
    host_mac(mac, i);
    inject(e, f, arp_frame(f, wisp_eth_bcast, mac, 1, mac, host_ip(i), mac_zero, tu_ip_self()));
}

static void arp_table_full_replaces_oldest_stable(void **state)
{
    struct tu_env *e = tu_env_new(1);
    uint8_t mac[6], want[6];
    unsigned i;
    (void)state;

    for (i = 0; i < WISP_ARP_TABLE_SIZE; i++) {
        host_request(e, i);
        tu_advance(e, 10);
    }
    /* Refresh host 0 so that host 1 is now the oldest. */
    host_request(e, 0);
    tu_advance(e, 10);
    assert_int_equal(wisp_arp_count(e->s), WISP_ARP_TABLE_SIZE);
    host_request(e, 200);
    assert_int_equal(wisp_arp_count(e->s), WISP_ARP_TABLE_SIZE);
    assert_true(wisp_arp_lookup(e->s, e->nif.index, host_ip(200), mac));
    host_mac(want, 200);
    assert_memory_equal(mac, want, 6);
    assert_true(wisp_arp_lookup(e->s, e->nif.index, host_ip(0), NULL));
    assert_false(wisp_arp_lookup(e->s, e->nif.index, host_ip(1), NULL));
    for (i = 2; i < WISP_ARP_TABLE_SIZE; i++)
        assert_true(wisp_arp_lookup(e->s, e->nif.index, host_ip(i), NULL));
    assert_int_equal(TU_CTR(e, ARP_TABLE_FULL), 0);
    tu_env_free(e);
}

static void arp_table_full_keeps_pending_with_queue(void **state)
{
    struct tu_env *e = tu_env_new(1);
    struct wisp_pbuf *p;
    uint8_t got[128];
    unsigned i;
    (void)state;

    p = ip_packet(e, 20, 0);
    for (i = 0; i < WISP_ARP_TABLE_SIZE; i++)
        assert_int_equal(wisp_arp_output(&e->nif, p, host_ip(100 + i)), WISP_OK);
    tu_clear(e);
    /* A request for us from a new host: answered, but nobody evicted. */
    host_request(e, 0);
    assert_int_equal(tu_pop(e, got, sizeof(got)), ARP_FRAME_LEN);
    assert_int_equal(wisp_rd16(got + 20), 2);
    assert_false(wisp_arp_lookup(e->s, e->nif.index, host_ip(0), NULL));
    assert_int_equal(wisp_arp_count(e->s), WISP_ARP_TABLE_SIZE);
    assert_int_equal(TU_CTR(e, ARP_TABLE_FULL), 1);
    assert_int_equal(TU_CTR(e, ARP_QUEUE_DROP), 0);
    wisp_pbuf_free(p);
    tu_env_free(e);
}

static void arp_gratuitous_on_link_up(void **state)
{
    struct tu_env *e = tu_env_new(1);
    uint8_t got[128], want[ARP_FRAME_LEN];
    uint32_t before = TU_CTR(e, ARP_GRATUITOUS_TX);
    (void)state;

    wisp_netif_set_link(&e->nif, false);
    tu_clear(e);
    wisp_netif_set_link(&e->nif, true);
    /* RFC 5227 §3: request, sender IP = target IP = ours, target MAC 0. */
    arp_frame(want, wisp_eth_bcast, tu_mac_self, 1, tu_mac_self, tu_ip_self(), mac_zero, tu_ip_self());
    assert_int_equal(tu_pending(e), 1);
    assert_int_equal(tu_pop(e, got, sizeof(got)), ARP_FRAME_LEN);
    assert_memory_equal(got, want, ARP_FRAME_LEN);
    assert_int_equal(TU_CTR(e, ARP_GRATUITOUS_TX), before + 1);
    assert_int_equal(e->nif.st.tx_emerg >= 1, 1);   /* ARP uses the emergency class */
    tu_env_free(e);
}

static void arp_truncated_frames_dropped(void **state)
{
    struct tu_env *e = tu_env_new(1);
    uint8_t f[64];
    size_t n;
    (void)state;

    peer_request(f, tu_ip_self());
    for (n = 0; n < ARP_FRAME_LEN; n++) {
        uint32_t eth_short = TU_CTR(e, ETH_DROP_SHORT), arp_short = TU_CTR(e, ARP_DROP_SHORT);
        inject(e, f, n);
        if (n < WISP_ETH_HLEN)
            assert_int_equal(TU_CTR(e, ETH_DROP_SHORT), eth_short + 1);
        else
            assert_int_equal(TU_CTR(e, ARP_DROP_SHORT), arp_short + 1);
        assert_int_equal(tu_pending(e), 0);
        assert_int_equal(wisp_arp_count(e->s), 0);
    }
    /* The untruncated frame is valid. */
    inject(e, f, ARP_FRAME_LEN);
    assert_int_equal(tu_pending(e), 1);
    tu_env_free(e);
}

/* Inject the valid request with byte `off` of the ARP packet replaced by
 * val; expect no reply and no entry. */
static void inject_mutated(struct tu_env *e, unsigned off, uint8_t val)
{
    uint8_t f[64];
    peer_request(f, tu_ip_self());
    f[14 + off] = val;
    inject(e, f, ARP_FRAME_LEN);
    assert_int_equal(tu_pending(e), 0);
    assert_int_equal(wisp_arp_count(e->s), 0);
}

static void arp_bad_hardware_type_or_length_dropped(void **state)
{
    struct tu_env *e = tu_env_new(1);
    (void)state;

    inject_mutated(e, 1, 6);     /* htype 6 (IEEE 802) */
    inject_mutated(e, 0, 1);     /* htype 0x0101 */
    inject_mutated(e, 4, 8);     /* hlen 8 */
    inject_mutated(e, 4, 0);     /* hlen 0 */
    assert_int_equal(TU_CTR(e, ARP_DROP_HW), 4);
    tu_env_free(e);
}

static void arp_bad_protocol_type_or_length_dropped(void **state)
{
    struct tu_env *e = tu_env_new(1);
    (void)state;

    inject_mutated(e, 2, 0x86);  /* ptype 0x8600 */
    inject_mutated(e, 3, 0x06);  /* ptype 0x0806 */
    inject_mutated(e, 5, 16);    /* plen 16 */
    inject_mutated(e, 5, 0);     /* plen 0 */
    assert_int_equal(TU_CTR(e, ARP_DROP_PROTO), 4);
    tu_env_free(e);
}

static void arp_bad_opcode_dropped(void **state)
{
    struct tu_env *e = tu_env_new(1);
    (void)state;

    inject_mutated(e, 7, 0);     /* op 0 */
    inject_mutated(e, 7, 3);     /* op 3 (RARP request) */
    inject_mutated(e, 6, 1);     /* op 0x0101 */
    assert_int_equal(TU_CTR(e, ARP_DROP_OP), 3);
    tu_env_free(e);
}

static void arp_bad_sender_dropped(void **state)
{
    struct tu_env *e = tu_env_new(1);
    static const uint8_t mcast_mac[6] = { 0x01, 0x00, 0x5e, 0, 0, 1 };
    uint8_t f[64];
    (void)state;

    inject(e, f, arp_frame(f, wisp_eth_bcast, tu_mac_peer, 1, tu_mac_peer, WISP_IP4_BCAST, mac_zero, tu_ip_self()));
    inject(e, f, arp_frame(f, wisp_eth_bcast, tu_mac_peer, 1, tu_mac_peer, wisp_ip4(198, 18, 0, 255), mac_zero,
                           tu_ip_self()));
    inject(e, f, arp_frame(f, wisp_eth_bcast, tu_mac_peer, 1, tu_mac_peer, wisp_ip4(224, 0, 0, 1), mac_zero,
                           tu_ip_self()));
    inject(e, f, arp_frame(f, wisp_eth_bcast, tu_mac_peer, 1, wisp_eth_bcast, tu_ip_peer(), mac_zero, tu_ip_self()));
    inject(e, f, arp_frame(f, wisp_eth_bcast, tu_mac_peer, 1, mcast_mac, tu_ip_peer(), mac_zero, tu_ip_self()));
    inject(e, f, arp_frame(f, wisp_eth_bcast, tu_mac_peer, 1, mac_zero, tu_ip_peer(), mac_zero, tu_ip_self()));
    /* A reply from 0.0.0.0 is no probe. */
    inject(e, f, arp_frame(f, tu_mac_self, tu_mac_peer, 2, tu_mac_peer, 0, tu_mac_self, tu_ip_self()));
    assert_int_equal(TU_CTR(e, ARP_DROP_SRC), 7);
    assert_int_equal(tu_pending(e), 0);
    assert_int_equal(wisp_arp_count(e->s), 0);
    tu_env_free(e);
}

static void arp_probe_answered_without_entry(void **state)
{
    struct tu_env *e = tu_env_new(1);
    uint8_t f[64], got[128], want[ARP_FRAME_LEN];
    (void)state;

    /* RFC 5227 §2.1.1 probe: sender IP 0, target our address. */
    inject(e, f, arp_frame(f, wisp_eth_bcast, mac_other, 1, mac_other, 0, mac_zero, tu_ip_self()));
    arp_frame(want, mac_other, tu_mac_self, 2, tu_mac_self, tu_ip_self(), mac_other, 0);
    assert_int_equal(tu_pop(e, got, sizeof(got)), ARP_FRAME_LEN);
    assert_memory_equal(got, want, ARP_FRAME_LEN);
    assert_int_equal(wisp_arp_count(e->s), 0);
    assert_int_equal(TU_CTR(e, ARP_CONFLICT), 0);
    tu_env_free(e);
}

static void arp_conflict_counted_and_defended_once(void **state)
{
    struct tu_env *e = tu_env_new(1);
    uint8_t f[64], got[128], want[ARP_FRAME_LEN];
    (void)state;

    arp_frame(want, wisp_eth_bcast, tu_mac_self, 1, tu_mac_self, tu_ip_self(), mac_zero, tu_ip_self());
    /* Another host announces our address. */
    arp_frame(f, wisp_eth_bcast, mac_other, 1, mac_other, tu_ip_self(), mac_zero, tu_ip_self());
    inject(e, f, ARP_FRAME_LEN);
    assert_int_equal(TU_CTR(e, ARP_CONFLICT), 1);
    assert_int_equal(tu_pop(e, got, sizeof(got)), ARP_FRAME_LEN);
    assert_memory_equal(got, want, ARP_FRAME_LEN);
    /* RFC 5227 §2.4: not again within DEFEND_INTERVAL (10 s). */
    tu_advance(e, 9999);
    inject(e, f, ARP_FRAME_LEN);
    assert_int_equal(TU_CTR(e, ARP_CONFLICT), 2);
    assert_int_equal(tu_pending(e), 0);
    tu_advance(e, 1);
    inject(e, f, ARP_FRAME_LEN);
    assert_int_equal(TU_CTR(e, ARP_CONFLICT), 3);
    assert_int_equal(tu_pop(e, got, sizeof(got)), ARP_FRAME_LEN);
    assert_memory_equal(got, want, ARP_FRAME_LEN);
    /* Our own address is never cached. */
    assert_int_equal(wisp_arp_count(e->s), 0);
    tu_env_free(e);
}

static void arp_multicast_and_broadcast_mapped_without_arp(void **state)
{
    struct tu_env *e = tu_env_new(1);
    static const uint8_t mdns[6] = { 0x01, 0x00, 0x5e, 0x00, 0x00, 0xfb };
    static const uint8_t ssdp[6] = { 0x01, 0x00, 0x5e, 0x7f, 0xff, 0xfa };
    struct wisp_pbuf *p = ip_packet(e, 20, 0);
    uint8_t got[128];
    (void)state;

    /* RFC 1112 §6.4: 01:00:5e + low 23 bits of the group. */
    assert_int_equal(wisp_arp_output(&e->nif, p, wisp_ip4(224, 0, 0, 251)), WISP_OK);
    assert_int_equal(tu_pop(e, got, sizeof(got)), 34);
    assert_memory_equal(got, mdns, 6);
    assert_int_equal(wisp_arp_output(&e->nif, p, wisp_ip4(239, 255, 255, 250)), WISP_OK);
    assert_int_equal(tu_pop(e, got, sizeof(got)), 34);
    assert_memory_equal(got, ssdp, 6);
    assert_int_equal(wisp_arp_output(&e->nif, p, WISP_IP4_BCAST), WISP_OK);
    assert_int_equal(tu_pop(e, got, sizeof(got)), 34);
    assert_memory_equal(got, wisp_eth_bcast, 6);
    assert_int_equal(wisp_arp_output(&e->nif, p, wisp_ip4(198, 18, 0, 255)), WISP_OK);
    assert_int_equal(tu_pop(e, got, sizeof(got)), 34);
    assert_memory_equal(got, wisp_eth_bcast, 6);
    assert_int_equal(wisp_arp_count(e->s), 0);
    assert_int_equal(TU_CTR(e, ARP_REQ_TX), 0);
    wisp_pbuf_free(p);
    tu_env_free(e);
}

static void arp_static_entry_never_ages(void **state)
{
    struct tu_env *e = tu_env_new(1);
    struct wisp_pbuf *p = ip_packet(e, 20, 0);
    uint8_t got[128];
    (void)state;

    tu_arp_peer(e);
    tu_advance(e, 3 * WISP_ARP_MAX_AGE_MS);
    assert_true(wisp_arp_lookup(e->s, e->nif.index, tu_ip_peer(), NULL));
    assert_int_equal(wisp_arp_output(&e->nif, p, tu_ip_peer()), WISP_OK);
    assert_int_equal(tu_pop(e, got, sizeof(got)), 34);
    assert_memory_equal(got, tu_mac_peer, 6);
    assert_int_equal(tu_pending(e), 0);   /* no refresh request either */
    wisp_pbuf_free(p);
    tu_env_free(e);
}

static void arp_flush_frees_queue(void **state)
{
    struct tu_env *e = tu_env_new(1);
    struct wisp_pbuf *p = ip_packet(e, 20, 0);
    (void)state;

    assert_int_equal(wisp_arp_output(&e->nif, p, tu_ip_peer()), WISP_OK);
    wisp_pbuf_free(p);
    assert_int_equal(tu_tx_used(e), 1);
    wisp_arp_flush(e->s, e->nif.index);
    assert_int_equal(wisp_arp_count(e->s), 0);
    assert_int_equal(TU_CTR(e, ARP_QUEUE_DROP), 1);
    assert_int_equal(tu_tx_used(e), 0);
    assert_false(wisp_timer_armed(&e->s->arp.tmr));
    tu_env_free(e);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(arp_reply_to_request_for_our_ip),
        cmocka_unit_test(arp_padded_request_is_answered),
        cmocka_unit_test(arp_request_for_other_ip_no_reply_no_entry),
        cmocka_unit_test(arp_unsolicited_reply_creates_no_entry),
        cmocka_unit_test(arp_merge_updates_existing_entry),
        cmocka_unit_test(arp_reply_resolves_and_flushes_queue_in_order),
        cmocka_unit_test(arp_queue_overflow_drops_oldest),
        cmocka_unit_test(arp_ref_packet_is_copied_when_queued),
        cmocka_unit_test(arp_retries_every_second_then_resolve_fail),
        cmocka_unit_test(arp_retry_then_late_reply_resolves),
        cmocka_unit_test(arp_entry_expires_after_max_age),
        cmocka_unit_test(arp_use_does_not_refresh_but_polls_near_expiry),
        cmocka_unit_test(arp_refresh_reply_extends_life),
        cmocka_unit_test(arp_table_full_replaces_oldest_stable),
        cmocka_unit_test(arp_table_full_keeps_pending_with_queue),
        cmocka_unit_test(arp_gratuitous_on_link_up),
        cmocka_unit_test(arp_truncated_frames_dropped),
        cmocka_unit_test(arp_bad_hardware_type_or_length_dropped),
        cmocka_unit_test(arp_bad_protocol_type_or_length_dropped),
        cmocka_unit_test(arp_bad_opcode_dropped),
        cmocka_unit_test(arp_bad_sender_dropped),
        cmocka_unit_test(arp_probe_answered_without_entry),
        cmocka_unit_test(arp_conflict_counted_and_defended_once),
        cmocka_unit_test(arp_multicast_and_broadcast_mapped_without_arp),
        cmocka_unit_test(arp_static_entry_never_ages),
        cmocka_unit_test(arp_flush_frees_queue),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
