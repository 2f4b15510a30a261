/**
 * @file test_sim_prio.c
 * Simulator test of the two transmit queues (wisp/netif.h; the lwIP-analysis paper's §4.3) on a
 * bandwidth-limited wire: urgent datagrams (DSCP EF, tos 0xB8 on the UDP
 * PCB) sent amid a bulk UDP stream that keeps the common queue full leave
 * before the common frames queued ahead of them. The queueing delay of each
 * datagram is measured from the send call to its entry on the wire (the
 * world's tap), per class.
 */
#include "simtest.h"

#define BULK_PORT 4001u
#define URG_PORT 4002u
#define STEPS 200u
#define URG_EVERY 10u
#define MAXN 256u

struct prio_meas {
    struct sim_node *sender;
    uint64_t sent_t[2][MAXN];   /**< [class][seq] send-call time */
    uint64_t wire_t[2][MAXN];   /**< [class][seq] wire-entry time */
    bool on_wire[2][MAXN];
    unsigned n_sent[2];
    unsigned urgent_tos_ok;     /**< urgent frames carrying tos 0xB8 */
    unsigned overtakes;         /**< urgent frames that passed queued bulk ones */
    unsigned bulk_on_wire;      /**< highest bulk seq on the wire + 1 */
};

/* Frame from the sender: Ethernet, IPv4 (20 bytes), UDP to port 9, then
 * the 4-byte sequence number of our datagram. */
static void prio_tap(void *arg, struct sim_node *from, const uint8_t *f, size_t len, uint64_t t)
{
    struct prio_meas *m = (struct prio_meas *)arg;
    const uint8_t *ip = f + 14, *udp = f + 34;
    unsigned cls;
    uint32_t seq;
    if (from != m->sender || len < 46 || wisp_rd16(f + 12) != WISP_ETHTYPE_IP4 || ip[9] != WISP_IP4_PROTO_UDP ||
        (wisp_rd16(ip + 6) & WISP_IP4_OFFMASK) != 0 || wisp_rd16(udp + 2) != WISP_PORT_DISCARD) {
        return;
    }
    cls = wisp_rd16(udp) == URG_PORT ? 1u : 0u;
    seq = wisp_rd32(udp + 8);
    assert_true(seq < MAXN);
    assert_false(m->on_wire[cls][seq]);
    m->on_wire[cls][seq] = true;
    m->wire_t[cls][seq] = t;
    if (cls == 1) {
        if (ip[1] == 0xB8) {
            m->urgent_tos_ok++;
        }
        /* a bulk datagram sent before this urgent one still waits */
        if (m->bulk_on_wire < m->n_sent[0] && m->sent_t[0][m->bulk_on_wire] <= m->sent_t[1][seq]) {
            m->overtakes++;
        }
    } else if (seq + 1 > m->bulk_on_wire) {
        m->bulk_on_wire = seq + 1;
    }
}

static bool ping_replied(void *arg)
{
    return ((struct st_ping *)arg)->replies > 0;
}

static void send_seq(struct prio_meas *m, struct st_client *c, unsigned cls, uint16_t len, const wisp_ipaddr_t *dst,
                     struct sim_world *w)
{
    static uint8_t d[1472];
    unsigned seq = m->n_sent[cls];
    assert_true(seq < MAXN);
    memset(d, (int)cls, len);
    wisp_wr32(d, seq);
    m->sent_t[cls][seq] = sim_now_us(w);
    m->n_sent[cls]++;
    assert_int_equal(st_send(c, d, len, dst, WISP_PORT_DISCARD), WISP_OK);
}

static void urgent_datagrams_overtake_queued_bulk(void **state)
{
    struct sim_world *w = sim_world_new(42);
    struct sim_node *a = st_node(w, "sender", 1), *b = st_node(w, "sink", 2);
    struct prio_meas *m = calloc(1, sizeof(*m));
    struct wisp_services svc;
    struct st_client bulk, urg;
    struct sim_link_cfg link;
    struct st_ping pg;
    wisp_ipaddr_t dst = st_addr(b);
    struct wisp_netif *nif = sim_netif(a);
    uint64_t sum[2] = { 0, 0 }, max[2] = { 0, 0 }, frame_us;
    uint32_t emerg0;
    unsigned i, cls;
    (void)state;

    assert_non_null(m);
    m->sender = a;
    assert_int_equal(wisp_services_udp_start(sim_stack(b), &svc), WISP_OK);
    st_client_open(&bulk, w, a, BULK_PORT);
    st_client_open(&urg, w, a, URG_PORT);
    urg.pcb->tos = 0xB8; /* DSCP 46, EF: the emergency queue */

    /* ARP first */
    memset(&pg, 0, sizeof(pg));
    wisp_icmp_set_echo_cb(sim_stack(a), st_ping_cb, &pg);
    assert_int_equal(wisp_icmp_echo_request(sim_stack(a), sim_ip(b), 1, 1, 8, 0), WISP_OK);
    assert_true(sim_run_until(w, ping_replied, &pg, 1000000));
    wisp_icmp_set_echo_cb(sim_stack(a), NULL, NULL);

    /* 10 Mbit/s: a 1514-byte frame takes 1211.2 us. One bulk datagram per
     * millisecond is 121 % of the link, so the common queue keeps growing
     * (about 35 frames after 200 ms, below its 64 slots); an urgent
     * datagram every 10 ms. */
    sim_get_link(w, &link);
    link.bandwidth_bps = 10000000;
    sim_set_link(w, &link);
    emerg0 = nif->st.tx_emerg; /* ARP went out as emergency frames */
    frame_us = ((uint64_t)1514u * 8u * 1000000u + link.bandwidth_bps - 1) / link.bandwidth_bps;
    sim_set_tap(w, prio_tap, m);

    for (i = 0; i < STEPS; i++) {
        send_seq(m, &bulk, 0, 1472, &dst, w);
        if (i % URG_EVERY == URG_EVERY / 2) {
            send_seq(m, &urg, 1, 200, &dst, w);
        }
        assert_true(sim_run_for(w, 1000));
    }
    assert_true(wisp_netif_txq_len(nif, WISP_PRIO_COMMON) > 20);
    assert_true(sim_run_for(w, 1000000)); /* drain */
    assert_int_equal(wisp_netif_txq_len(nif, WISP_PRIO_COMMON), 0);

    for (cls = 0; cls < 2; cls++) {
        for (i = 0; i < m->n_sent[cls]; i++) {
            uint64_t d;
            assert_true(m->on_wire[cls][i]); /* nothing was dropped */
            d = m->wire_t[cls][i] - m->sent_t[cls][i];
            sum[cls] += d;
            if (d > max[cls]) {
                max[cls] = d;
            }
        }
    }
    print_message("queueing delay: common mean %llu max %llu us, emergency mean %llu max %llu us (%u/%u sent)\n",
                  (unsigned long long)(sum[0] / m->n_sent[0]), (unsigned long long)max[0],
                  (unsigned long long)(sum[1] / m->n_sent[1]), (unsigned long long)max[1], m->n_sent[0],
                  m->n_sent[1]);
    assert_int_equal(m->n_sent[0], STEPS);
    assert_int_equal(m->n_sent[1], STEPS / URG_EVERY);
    /* an urgent datagram waits at most for the frame being serialised */
    assert_true(max[1] <= frame_us);
    /* the common class waits behind its queue: far longer on average */
    assert_true(sum[0] / m->n_sent[0] > 10 * (sum[1] / m->n_sent[1] + 1));
    /* every urgent datagram passed bulk ones queued before it */
    assert_int_equal(m->overtakes, m->n_sent[1]);
    assert_int_equal(m->urgent_tos_ok, m->n_sent[1]);
    /* the interface statistics agree */
    assert_int_equal(nif->st.tx_emerg - emerg0, m->n_sent[1]);
    assert_true(nif->st.txq_emerg_high >= 1);
    assert_true(nif->st.txq_common_high > 20);
    assert_int_equal(sim_stack(a)->ctr[WISP_CTR_NETIF_TXQ_DROP], 0);
    assert_int_equal(svc.udp_discard_st.datagrams, STEPS + STEPS / URG_EVERY);

    sim_set_tap(w, NULL, NULL);
    st_client_close(&bulk);
    st_client_close(&urg);
    wisp_services_udp_stop(&svc);
    ST_FREE(w);
    free(m);
}

/* Without the EF marking the "urgent" datagrams queue like everything
 * else: the same load shows no advantage (the control experiment). */
static void unmarked_datagrams_wait_in_the_common_queue(void **state)
{
    struct sim_world *w = sim_world_new(43);
    struct sim_node *a = st_node(w, "sender", 1), *b = st_node(w, "sink", 2);
    struct prio_meas *m = calloc(1, sizeof(*m));
    struct wisp_services svc;
    struct st_client bulk, urg;
    struct sim_link_cfg link;
    struct st_ping pg;
    wisp_ipaddr_t dst = st_addr(b);
    uint64_t sum1 = 0;
    uint32_t emerg0;
    unsigned i;
    (void)state;

    assert_non_null(m);
    m->sender = a;
    assert_int_equal(wisp_services_udp_start(sim_stack(b), &svc), WISP_OK);
    st_client_open(&bulk, w, a, BULK_PORT);
    st_client_open(&urg, w, a, URG_PORT);
    urg.pcb->tos = 0x28; /* AF11: still the common class */
    memset(&pg, 0, sizeof(pg));
    wisp_icmp_set_echo_cb(sim_stack(a), st_ping_cb, &pg);
    assert_int_equal(wisp_icmp_echo_request(sim_stack(a), sim_ip(b), 1, 1, 8, 0), WISP_OK);
    assert_true(sim_run_until(w, ping_replied, &pg, 1000000));
    wisp_icmp_set_echo_cb(sim_stack(a), NULL, NULL);
    sim_get_link(w, &link);
    link.bandwidth_bps = 10000000;
    sim_set_link(w, &link);
    sim_set_tap(w, prio_tap, m);
    emerg0 = sim_netif(a)->st.tx_emerg;
    for (i = 0; i < STEPS; i++) {
        send_seq(m, &bulk, 0, 1472, &dst, w);
        if (i % URG_EVERY == URG_EVERY / 2) {
            send_seq(m, &urg, 1, 200, &dst, w);
        }
        assert_true(sim_run_for(w, 1000));
    }
    assert_true(sim_run_for(w, 1000000));
    for (i = 0; i < m->n_sent[1]; i++) {
        assert_true(m->on_wire[1][i]);
        sum1 += m->wire_t[1][i] - m->sent_t[1][i];
    }
    assert_int_equal(m->overtakes, 0);
    assert_int_equal(sim_netif(a)->st.tx_emerg - emerg0, 0);
    assert_true(sum1 / m->n_sent[1] > 5000); /* it waited behind the bulk */

    sim_set_tap(w, NULL, NULL);
    st_client_close(&bulk);
    st_client_close(&urg);
    wisp_services_udp_stop(&svc);
    ST_FREE(w);
    free(m);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(urgent_datagrams_overtake_queued_bulk),
        cmocka_unit_test(unmarked_datagrams_wait_in_the_common_queue),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
