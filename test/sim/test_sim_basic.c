/**
 * @file test_sim_basic.c
 * Simulator tests on a clean wire: ARP resolution between two nodes, ping
 * both ways at several sizes, UDP echo and discard (apps/lib/services),
 * three nodes on one hub, link MTU, bandwidth timing, pcap capture, and the
 * pool check at the end of every test.
 */
#define _POSIX_C_SOURCE 200809L
#include "simtest.h"

#include <unistd.h>

/* ---------------------------------------------------------------- ARP */

struct arp_seen {
    unsigned requests, replies;
    uint8_t req_dst[6], reply_dst[6];
    wisp_ip4_t req_target;
};

static void arp_tap(void *arg, struct sim_node *from, const uint8_t *f, size_t len, uint64_t t)
{
    struct arp_seen *a = (struct arp_seen *)arg;
    (void)from;
    (void)t;
    if (len < 42 || wisp_rd16(f + 12) != WISP_ETHTYPE_ARP) {
        return;
    }
    /* skip gratuitous announcements (sender IP == target IP) */
    if (memcmp(f + 14 + 14, f + 14 + 24, 4) == 0) {
        return;
    }
    if (wisp_rd16(f + 14 + 6) == 1) {
        a->requests++;
        memcpy(a->req_dst, f, 6);
        a->req_target = wisp_ip4_rd(f + 14 + 24);
    } else if (wisp_rd16(f + 14 + 6) == 2) {
        a->replies++;
        memcpy(a->reply_dst, f, 6);
    }
}

static bool ping_replied(void *arg)
{
    return ((struct st_ping *)arg)->replies > 0;
}

static void arp_resolves_between_two_nodes(void **state)
{
    struct sim_world *w = sim_world_new(1);
    struct sim_node *a = st_node(w, "a", 1), *b = st_node(w, "b", 2);
    struct wisp_stack *sa = sim_stack(a), *sb = sim_stack(b);
    struct arp_seen seen;
    struct st_ping pg;
    uint8_t mac[6];
    (void)state;

    assert_true(sim_run_for(w, 10000)); /* the gratuitous announcements */
    /* RFC 826 merge rule: an announcement creates no entry */
    assert_false(wisp_arp_lookup(sa, sim_netif(a)->index, sim_ip(b), mac));
    assert_false(wisp_arp_lookup(sb, sim_netif(b)->index, sim_ip(a), mac));

    memset(&seen, 0, sizeof(seen));
    memset(&pg, 0, sizeof(pg));
    sim_set_tap(w, arp_tap, &seen);
    wisp_icmp_set_echo_cb(sa, st_ping_cb, &pg);
    assert_int_equal(wisp_icmp_echo_request(sa, sim_ip(b), 7, 1, 56, 0), WISP_OK);
    assert_true(sim_run_until(w, ping_replied, &pg, 1000000));
    assert_int_equal(pg.bad, 0);

    /* one broadcast request for b, one unicast reply to a */
    assert_int_equal(seen.requests, 1);
    assert_int_equal(seen.replies, 1);
    assert_memory_equal(seen.req_dst, wisp_eth_bcast, 6);
    assert_true(seen.req_target == sim_ip(b));
    assert_memory_equal(seen.reply_dst, sim_mac(a), 6);
    assert_int_equal(sa->ctr[WISP_CTR_ARP_REQ_TX], 1);
    assert_int_equal(sa->ctr[WISP_CTR_ARP_REPLY_RX], 1);
    assert_int_equal(sb->ctr[WISP_CTR_ARP_REPLY_TX], 1);
    assert_true(sb->ctr[WISP_CTR_ARP_REQ_RX] >= 1);

    /* both caches now hold the right MACs (b learned a from the request) */
    assert_true(wisp_arp_lookup(sa, sim_netif(a)->index, sim_ip(b), mac));
    assert_memory_equal(mac, sim_mac(b), 6);
    assert_true(wisp_arp_lookup(sb, sim_netif(b)->index, sim_ip(a), mac));
    assert_memory_equal(mac, sim_mac(a), 6);

    /* a second ping needs no ARP */
    pg.replies = 0;
    assert_int_equal(wisp_icmp_echo_request(sa, sim_ip(b), 7, 2, 56, 0), WISP_OK);
    assert_true(sim_run_until(w, ping_replied, &pg, 1000000));
    assert_int_equal(seen.requests, 1);
    assert_int_equal(sa->ctr[WISP_CTR_ARP_REQ_TX], 1);
    wisp_icmp_set_echo_cb(sa, NULL, NULL);
    ST_FREE(w);
}

/* --------------------------------------------------------------- ping */

static void ping_both_ways_all_sizes(void **state)
{
    static const uint16_t sizes[] = { 0, 56, 1472, 4000, 8000 };
    struct sim_world *w = sim_world_new(2);
    struct sim_node *n[2];
    struct st_ping pg[2];
    unsigned i, dir;
    uint16_t seq = 1;
    (void)state;

    n[0] = st_node(w, "a", 1);
    n[1] = st_node(w, "b", 2);
    memset(pg, 0, sizeof(pg));
    wisp_icmp_set_echo_cb(sim_stack(n[0]), st_ping_cb, &pg[0]);
    wisp_icmp_set_echo_cb(sim_stack(n[1]), st_ping_cb, &pg[1]);

    for (i = 0; i < WISP_ARRAY_SIZE(sizes); i++) {
        for (dir = 0; dir < 2; dir++) {
            struct sim_node *from = n[dir], *to = n[1 - dir];
            struct st_ping *p = &pg[dir];
            unsigned before = p->replies;
            p->replies = 0;
            assert_int_equal(wisp_icmp_echo_request(sim_stack(from), sim_ip(to), 0x1234, seq, sizes[i], 0),
                             WISP_OK);
            assert_true(sim_run_until(w, ping_replied, p, 2000000));
            assert_int_equal(p->replies, 1);
            assert_int_equal(p->bad, 0);
            assert_int_equal(p->last_id, 0x1234);
            assert_int_equal(p->last_seq, seq);
            assert_int_equal(p->last_len, sizes[i]);
            assert_true(p->last_src == sim_ip(to));
            p->replies += before;
            seq++;
        }
    }
    /* 4000 and 8000 bytes went as fragments both ways */
    for (dir = 0; dir < 2; dir++) {
        struct wisp_stack *s = sim_stack(n[dir]);
        assert_int_equal(pg[dir].replies, WISP_ARRAY_SIZE(sizes));
        assert_true(s->ctr[WISP_CTR_IP4_FRAG_TX] > 0);
        assert_true(s->ctr[WISP_CTR_IP4_REASS_OK] >= 4); /* 2 requests + 2 replies */
        assert_int_equal(s->ctr[WISP_CTR_ICMP_ECHO_REPLY_TX], WISP_ARRAY_SIZE(sizes));
        wisp_icmp_set_echo_cb(s, NULL, NULL);
    }
    assert_int_equal(sim_counters(w)->lost, 0);
    ST_FREE(w);
}

/* ----------------------------------------------------------- UDP echo */

static void udp_echo_random_datagrams_byte_exact(void **state)
{
    struct sim_world *w = sim_world_new(3);
    struct sim_node *a = st_node(w, "a", 1), *b = st_node(w, "b", 2);
    struct wisp_services svc;
    struct st_client c;
    struct sim_rng r;
    wisp_ipaddr_t dst = st_addr(b);
    uint8_t data[1472];
    unsigned i, n = 300;
    uint32_t bytes = 0;
    (void)state;

    assert_int_equal(wisp_services_udp_start(sim_stack(b), &svc), WISP_OK);
    st_client_open(&c, w, a, 0);
    sim_rng_seed(&r, 33);
    for (i = 0; i < n; i++) {
        uint16_t len = (uint16_t)(1 + sim_rng_below(&r, 1472));
        uint16_t j;
        for (j = 0; j < len; j++) {
            data[j] = (uint8_t)sim_rng_next(&r);
        }
        c.got = false;
        assert_int_equal(st_send(&c, data, len, &dst, WISP_PORT_ECHO), WISP_OK);
        assert_true(sim_run_until(w, st_client_got, &c, 1000000));
        assert_int_equal(c.last_len, len);
        assert_memory_equal(c.last, data, len);
        assert_true(c.last_src == sim_ip(b));
        assert_int_equal(c.last_port, WISP_PORT_ECHO);
        bytes += len;
    }
    assert_int_equal(c.rx, n);
    assert_int_equal(svc.udp_echo_st.datagrams, n);
    assert_int_equal(svc.udp_echo_st.bytes, bytes);
    assert_int_equal(svc.udp_echo_st.dropped, 0);

    /* discard: counted, never answered */
    for (i = 0; i < 10; i++) {
        assert_int_equal(st_send(&c, data, (uint16_t)(100 + i), &dst, WISP_PORT_DISCARD), WISP_OK);
    }
    assert_true(sim_run_for(w, 100000));
    assert_int_equal(svc.udp_discard_st.datagrams, 10);
    assert_int_equal(svc.udp_discard_st.bytes, 10 * 100 + 45);
    assert_int_equal(c.rx, n);

    st_client_close(&c);
    wisp_services_udp_stop(&svc);
    assert_null(svc.udp_echo);
    assert_null(svc.udp_discard);
    ST_FREE(w);
}

/* The echo service keeps the request's DSCP and does not answer source
 * port 0 (RFC 768: no reply expected) nor another reflector (port 19). */
static void udp_echo_policy(void **state)
{
    struct sim_world *w = sim_world_new(4);
    struct sim_node *a = st_node(w, "a", 1), *b = st_node(w, "b", 2);
    struct wisp_services svc;
    struct st_client c, chargen;
    wisp_ipaddr_t dst = st_addr(b);
    uint8_t data[32];
    (void)state;

    memset(data, 0x5a, sizeof(data));
    assert_int_equal(wisp_services_udp_start(sim_stack(b), &svc), WISP_OK);
    /* a second start on the same stack finds the ports taken */
    {
        struct wisp_services again;
        assert_int_equal(wisp_services_udp_start(sim_stack(b), &again), WISP_ERR_USE);
        assert_null(again.udp_echo);
        assert_null(again.udp_discard);
    }
    st_client_open(&c, w, a, 0);
    c.pcb->tos = 0xB8; /* DSCP EF */
    assert_int_equal(st_send(&c, data, sizeof(data), &dst, WISP_PORT_ECHO), WISP_OK);
    assert_true(sim_run_until(w, st_client_got, &c, 1000000));
    assert_int_equal(c.last_tos, 0xB8);

    st_client_open(&chargen, w, a, 19);
    assert_int_equal(st_send(&chargen, data, sizeof(data), &dst, WISP_PORT_ECHO), WISP_OK);
    assert_true(sim_run_for(w, 100000));
    assert_int_equal(chargen.rx, 0);
    assert_int_equal(svc.udp_echo_st.datagrams, 1);
    assert_int_equal(svc.udp_echo_st.dropped, 1);

    st_client_close(&chargen);
    st_client_close(&c);
    wisp_services_udp_stop(&svc);
    ST_FREE(w);
}

/* ------------------------------------------------------- three nodes */

static void three_nodes_on_one_hub(void **state)
{
    struct sim_world *w = sim_world_new(5);
    struct sim_node *n[3];
    struct wisp_services svc[3];
    struct st_ping pg[3];
    struct st_client c;
    uint8_t data[600];
    unsigned i, j;
    (void)state;

    for (i = 0; i < 3; i++) {
        char name[8];
        snprintf(name, sizeof(name), "n%u", i + 1);
        n[i] = st_node(w, name, i + 1);
        assert_int_equal(wisp_services_udp_start(sim_stack(n[i]), &svc[i]), WISP_OK);
        memset(&pg[i], 0, sizeof(pg[i]));
        wisp_icmp_set_echo_cb(sim_stack(n[i]), st_ping_cb, &pg[i]);
    }
    assert_int_equal(sim_node_count(w), 3);
    assert_ptr_equal(sim_node_at(w, 2), n[2]);
    assert_null(sim_node_at(w, 3));
    assert_int_equal(sim_mac(n[2])[5], 3);
    assert_int_equal(sim_mac(n[2])[0], 2);

    /* everyone pings everyone */
    for (i = 0; i < 3; i++) {
        for (j = 0; j < 3; j++) {
            if (i == j) {
                continue;
            }
            pg[i].replies = 0;
            assert_int_equal(wisp_icmp_echo_request(sim_stack(n[i]), sim_ip(n[j]), 1, (uint16_t)(i * 3 + j), 100, 0),
                             WISP_OK);
            assert_true(sim_run_until(w, ping_replied, &pg[i], 2000000));
            assert_true(pg[i].last_src == sim_ip(n[j]));
            assert_int_equal(pg[i].bad, 0);
        }
    }
    /* UDP echo from n1 to n2 and n3 */
    st_client_open(&c, w, n[0], 4000);
    for (j = 1; j < 3; j++) {
        wisp_ipaddr_t dst = st_addr(n[j]);
        st_fill(data, sizeof(data), j);
        c.got = false;
        assert_int_equal(st_send(&c, data, sizeof(data), &dst, WISP_PORT_ECHO), WISP_OK);
        assert_true(sim_run_until(w, st_client_got, &c, 1000000));
        assert_true(c.last_src == sim_ip(n[j]));
        assert_int_equal(c.last_len, sizeof(data));
        assert_memory_equal(c.last, data, sizeof(data));
        assert_int_equal(svc[j].udp_echo_st.datagrams, 1);
    }
    /* a hub: the third node saw (and dropped) unicast frames of the others */
    for (i = 0; i < 3; i++) {
        assert_true(sim_stack(n[i])->ctr[WISP_CTR_ETH_DROP_NOTFORUS] > 0);
        assert_int_equal(sim_stack(n[i])->ctr[WISP_CTR_IP4_DROP_CHKSUM], 0);
    }
    /* every frame reached both other ports */
    assert_int_equal(sim_counters(w)->delivered, 2 * sim_counters(w)->sent);

    st_client_close(&c);
    for (i = 0; i < 3; i++) {
        wisp_icmp_set_echo_cb(sim_stack(n[i]), NULL, NULL);
        wisp_services_udp_stop(&svc[i]);
    }
    ST_FREE(w);
}

/* -------------------------------------------------------- link model */

/* A frame longer than the link MTU + 14 is dropped and counted; a node
 * added after the MTU change uses the new MTU and fragments to fit. */
static void link_mtu_drops_oversize_frames(void **state)
{
    struct sim_world *w = sim_world_new(6);
    struct sim_node *a = st_node(w, "a", 1), *b = st_node(w, "b", 2), *c3;
    struct wisp_services svc;
    struct st_client c, c2;
    struct sim_link_cfg link;
    wisp_ipaddr_t dst = st_addr(b);
    uint8_t data[1472];
    (void)state;

    assert_int_equal(wisp_services_udp_start(sim_stack(b), &svc), WISP_OK);
    st_client_open(&c, w, a, 0);
    st_fill(data, sizeof(data), 1);
    /* resolve ARP first with a small datagram */
    assert_int_equal(st_send(&c, data, 100, &dst, WISP_PORT_ECHO), WISP_OK);
    assert_true(sim_run_until(w, st_client_got, &c, 1000000));

    sim_get_link(w, &link);
    assert_int_equal(link.mtu, 1500);
    link.mtu = 1000;
    sim_set_link(w, &link);
    c.got = false;
    /* the port refuses the frame, so the send reports the device error */
    assert_int_equal(st_send(&c, data, sizeof(data), &dst, WISP_PORT_ECHO), WISP_ERR_VAL);
    assert_false(sim_run_until(w, st_client_got, &c, 100000));
    assert_int_equal(sim_counters(w)->oversize, 1);
    assert_int_equal(sim_stack(a)->ctr[WISP_CTR_NETIF_TX_ERR], 1);

    /* a new node gets the 1000-byte MTU and fragments; b answers with
     * 1514-byte frames that the wire drops, so only b's discard counts */
    c3 = st_node(w, "c", 3);
    assert_int_equal(sim_netif(c3)->mtu, 1000);
    st_client_open(&c2, w, c3, 0);
    assert_int_equal(st_send(&c2, data, sizeof(data), &dst, WISP_PORT_DISCARD), WISP_OK);
    assert_true(sim_run_for(w, 1000000));
    assert_int_equal(svc.udp_discard_st.datagrams, 1);
    assert_int_equal(svc.udp_discard_st.bytes, sizeof(data));
    assert_true(sim_stack(c3)->ctr[WISP_CTR_IP4_FRAG_TX] >= 2);

    st_client_close(&c2);
    st_client_close(&c);
    wisp_services_udp_stop(&svc);
    ST_FREE(w);
}

/* Arrival = send + frame bits / bandwidth + latency; a second frame sent
 * at once waits for the first (the port is busy: WOULDBLOCK, queued). */
static void bandwidth_and_latency_timing(void **state)
{
    struct sim_world *w = sim_world_new(7);
    struct sim_node *a = st_node(w, "a", 1), *b = st_node(w, "b", 2);
    struct st_client ca, cb;
    struct sim_link_cfg link;
    wisp_ipaddr_t dst = st_addr(b);
    uint8_t data[1000];
    uint64_t t0, ser;
    (void)state;

    memset(data, 1, sizeof(data));
    st_client_open(&ca, w, a, 0);
    st_client_open(&cb, w, b, 5000);
    assert_int_equal(st_send(&ca, data, 10, &dst, 5000), WISP_OK); /* ARP */
    assert_true(sim_run_until(w, st_client_got, &cb, 1000000));
    assert_true(sim_run_for(w, 10000));

    sim_get_link(w, &link);
    link.bandwidth_bps = 1000000; /* 1 Mbit/s: 8 us per byte */
    link.latency_us = 1000;
    sim_set_link(w, &link);

    cb.got = false;
    t0 = sim_now_us(w);
    assert_int_equal(st_send(&ca, data, 1000, &dst, 5000), WISP_OK);
    assert_true(sim_run_until(w, st_client_got, &cb, 1000000));
    ser = (1000u + 42u) * 8u;
    assert_int_equal(cb.last_t - t0, ser + 1000);

    /* a short frame is padded to 60 bytes on the wire */
    assert_true(sim_run_for(w, 100000));
    cb.got = false;
    t0 = sim_now_us(w);
    assert_int_equal(st_send(&ca, data, 1, &dst, 5000), WISP_OK);
    assert_true(sim_run_until(w, st_client_got, &cb, 1000000));
    assert_int_equal(cb.last_t - t0, 60u * 8u + 1000u);
    assert_int_equal(cb.last_len, 1);

    /* two at once: the second waits for the first to be serialised */
    assert_true(sim_run_for(w, 100000));
    cb.rx = 0;
    t0 = sim_now_us(w);
    assert_int_equal(st_send(&ca, data, 1000, &dst, 5000), WISP_OK);
    assert_int_equal(st_send(&ca, data, 1000, &dst, 5000), WISP_OK);
    assert_int_equal(wisp_netif_txq_len(sim_netif(a), WISP_PRIO_COMMON), 1);
    assert_true(sim_run_for(w, 100000));
    assert_int_equal(cb.rx, 2);
    assert_int_equal(cb.last_t - t0, 2 * ser + 1000);
    assert_true(sim_counters(w)->wouldblock >= 1);
    assert_true(sim_netif(a)->st.tx_queued >= 1);
    assert_int_equal(wisp_netif_txq_len(sim_netif(a), WISP_PRIO_COMMON), 0);

    st_client_close(&ca);
    st_client_close(&cb);
    ST_FREE(w);
}

/* An unplugged node neither sends nor receives; plugged back, it works. */
static void unplugged_node_is_isolated(void **state)
{
    struct sim_world *w = sim_world_new(8);
    struct sim_node *a = st_node(w, "a", 1), *b = st_node(w, "b", 2);
    struct st_ping pg;
    (void)state;

    memset(&pg, 0, sizeof(pg));
    wisp_icmp_set_echo_cb(sim_stack(a), st_ping_cb, &pg);
    sim_node_set_link(b, false);
    assert_false(wisp_netif_is_usable(sim_netif(b)));
    assert_int_equal(wisp_icmp_echo_request(sim_stack(a), sim_ip(b), 1, 1, 10, 0), WISP_OK);
    assert_false(sim_run_until(w, ping_replied, &pg, 500000));
    sim_node_set_link(b, true);
    assert_true(sim_run_for(w, 10000000)); /* let a's ARP attempt give up */
    assert_int_equal(wisp_icmp_echo_request(sim_stack(a), sim_ip(b), 1, 2, 10, 0), WISP_OK);
    assert_true(sim_run_until(w, ping_replied, &pg, 2000000));
    assert_int_equal(pg.last_seq, 2);
    wisp_icmp_set_echo_cb(sim_stack(a), NULL, NULL);
    ST_FREE(w);
}

/* -------------------------------------------------------------- pcap */

static uint32_t le32(const uint8_t *p)
{
    return (uint32_t)p[0] | ((uint32_t)p[1] << 8) | ((uint32_t)p[2] << 16) | ((uint32_t)p[3] << 24);
}

static void pcap_capture_of_the_wire(void **state)
{
    char path[] = "/tmp/wisp_sim_pcap_XXXXXX";
    int fd = mkstemp(path);
    struct sim_world *w;
    struct sim_node *a, *b;
    struct st_ping pg;
    FILE *f;
    uint8_t hdr[24], rec[16], frame[65536];
    uint64_t records = 0, last = 0, sent;
    (void)state;

    assert_true(fd >= 0);
    close(fd);
    w = sim_world_new(9);
    assert_int_equal(sim_pcap_open(w, path), 0); /* before any node: deferred header */
    a = st_node(w, "a", 1);
    b = st_node(w, "b", 2);
    memset(&pg, 0, sizeof(pg));
    wisp_icmp_set_echo_cb(sim_stack(a), st_ping_cb, &pg);
    assert_int_equal(wisp_icmp_echo_request(sim_stack(a), sim_ip(b), 3, 4, 3000, 0), WISP_OK);
    assert_true(sim_run_until(w, ping_replied, &pg, 1000000));
    assert_true(sim_run_for(w, 1500000));
    sent = sim_counters(w)->sent;
    wisp_icmp_set_echo_cb(sim_stack(a), NULL, NULL);
    ST_FREE(w); /* closes the capture */

    f = fopen(path, "rb");
    assert_non_null(f);
    assert_int_equal(fread(hdr, 1, 24, f), 24);
    assert_int_equal(le32(hdr), 0xa1b2c3d4u);
    assert_int_equal(hdr[4] | (hdr[5] << 8), 2);
    assert_int_equal(hdr[6] | (hdr[7] << 8), 4);
    assert_int_equal(le32(hdr + 20), 1); /* LINKTYPE_ETHERNET */
    while (fread(rec, 1, 16, f) == 16) {
        uint64_t t = (uint64_t)le32(rec) * 1000000u + le32(rec + 4);
        uint32_t incl = le32(rec + 8);
        assert_int_equal(incl, le32(rec + 12));
        assert_true(incl >= 60 && incl <= 1514);
        assert_int_equal(fread(frame, 1, incl, f), incl);
        assert_true(t >= last);
        last = t;
        if (records == 0) {
            /* the first frame: a's gratuitous ARP at virtual time 0 */
            assert_int_equal(wisp_rd16(frame + 12), WISP_ETHTYPE_ARP);
            assert_memory_equal(frame, wisp_eth_bcast, 6);
            assert_int_equal(t, 0);
        }
        records++;
    }
    fclose(f);
    unlink(path);
    /* 2 announcements + ARP request/reply + 3 fragments each way */
    assert_int_equal(records, sent);
    assert_true(records >= 10);
}

/* A stack timer drives the loop: ARP gives up after its tries, at the
 * virtual times the options say, without real waiting. */
static void virtual_time_follows_stack_timers(void **state)
{
    struct sim_world *w = sim_world_new(10);
    struct sim_node *a = st_node(w, "a", 1);
    struct st_client c;
    wisp_ipaddr_t nobody = wisp_ipaddr4(wisp_ip4(198, 18, 0, 99));
    uint8_t d[8] = { 0 };
    (void)state;

    st_client_open(&c, w, a, 0);
    assert_int_equal(st_send(&c, d, sizeof(d), &nobody, 9), WISP_OK);
    assert_true(sim_run_for(w, (uint64_t)WISP_ARP_RETRY_MS * 1000u * (WISP_ARP_MAX_TRIES + 2)));
    assert_int_equal(sim_stack(a)->ctr[WISP_CTR_ARP_REQ_TX], WISP_ARP_MAX_TRIES);
    assert_int_equal(sim_stack(a)->ctr[WISP_CTR_ARP_RESOLVE_FAIL], 1);
    assert_true(sim_counters(w)->events < 100);
    st_client_close(&c);
    ST_FREE(w);
}

/* The stacks' millisecond clock wraps (2^32 ms) in the middle of a run:
 * pings keep being answered and ARP still gives up after its tries. */
static void stack_clock_wraps_during_a_run(void **state)
{
    struct sim_world *w = sim_world_new(11);
    struct sim_node *a, *b;
    struct st_ping pg;
    struct st_client c;
    wisp_ipaddr_t nobody = wisp_ipaddr4(wisp_ip4(198, 18, 0, 99));
    uint8_t d[8] = { 0 };
    uint16_t i;
    (void)state;

    assert_true(sim_set_clock(w, (4294967296ull - 1500u) * 1000u)); /* 1.5 s before the wrap */
    a = st_node(w, "a", 1);
    b = st_node(w, "b", 2);
    assert_false(sim_set_clock(w, 0)); /* nodes exist: refused */
    assert_true(sim_now_us(w) == (4294967296ull - 1500u) * 1000u);
    memset(&pg, 0, sizeof(pg));
    wisp_icmp_set_echo_cb(sim_stack(a), st_ping_cb, &pg);
    st_client_open(&c, w, a, 0);
    assert_int_equal(st_send(&c, d, sizeof(d), &nobody, 9), WISP_OK); /* ARP for nobody, across the wrap */
    for (i = 0; i < 30; i++) {
        pg.replies = 0;
        assert_int_equal(wisp_icmp_echo_request(sim_stack(a), sim_ip(b), 5, i, 100, 0), WISP_OK);
        assert_true(sim_run_until(w, ping_replied, &pg, 50000));
        assert_int_equal(pg.last_seq, i);
        assert_true(sim_run_for(w, 100000));
    }
    assert_true(wisp_now(sim_stack(a)) < 10000u); /* wrapped */
    assert_true(sim_run_for(w, (uint64_t)WISP_ARP_RETRY_MS * 1000u * (WISP_ARP_MAX_TRIES + 2)));
    assert_int_equal(sim_stack(a)->ctr[WISP_CTR_ARP_RESOLVE_FAIL], 1);
    assert_int_equal(pg.bad, 0);
    st_client_close(&c);
    wisp_icmp_set_echo_cb(sim_stack(a), NULL, NULL);
    ST_FREE(w);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(arp_resolves_between_two_nodes),
        cmocka_unit_test(ping_both_ways_all_sizes),
        cmocka_unit_test(udp_echo_random_datagrams_byte_exact),
        cmocka_unit_test(udp_echo_policy),
        cmocka_unit_test(three_nodes_on_one_hub),
        cmocka_unit_test(link_mtu_drops_oversize_frames),
        cmocka_unit_test(bandwidth_and_latency_timing),
        cmocka_unit_test(unplugged_node_is_isolated),
        cmocka_unit_test(pcap_capture_of_the_wire),
        cmocka_unit_test(virtual_time_follows_stack_timers),
        cmocka_unit_test(stack_clock_wraps_during_a_run),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
