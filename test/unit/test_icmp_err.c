/**
 * @file test_icmp_err.c
 * ICMP errors to TCP and UDP (src/core/icmp.c, tcp_icmp.c, udp.c) with
 * crafted messages: validation of the quotation (short, bad version,
 * non-initial fragment, not our address, unknown 4-tuple, sequence number
 * outside SND.UNA..SND.NXT, unknown protocol, sent to broadcast) -- each
 * ignored and counted; source quench and redirect ignored; a connect ended
 * by port unreachable (hard) and by host / net unreachable once the SYN
 * retries ran out (soft, the reason reported); soft errors in ESTABLISHED;
 * path MTU discovery (RFC 1191): DF on segments, "fragmentation needed"
 * lowers the MSS and the sent data is resent in pieces byte-exact without
 * a cwnd cut, the plateau table, the clamp to WISP_PMTU_MIN (DF then off),
 * no raise, aging back to the full MSS; the black-hole fallback; connected
 * UDP told of a port unreachable. Leak check after each test (tt_done).
 */
#include "tcp_testlib.h"

#define ROUTER wisp_ip4(198, 18, 0, 1)

static uint8_t g_f[4][1600];
static int g_n[4];

/* An ICMP error to the stack from `from` (type, code, next-hop MTU field)
 * quoting qlen bytes of q (an IP header and what follows). */
static void inject_icmp_to(struct tu_env *e, wisp_ip4_t from, wisp_ip4_t to, const uint8_t *mac, uint8_t type,
                           uint8_t code, uint16_t mtu, const uint8_t *q, uint16_t qlen)
{
    static uint8_t f[1600];
    uint8_t *m = f + TT_ETH + TT_IPH;
    tu_eth(f, mac, tu_mac_peer, WISP_ETHTYPE_IP4);
    tu_ip4(f + TT_ETH, from, to, WISP_IP4_PROTO_ICMP, (uint16_t)(8u + qlen), 0x2222, 0, 64);
    m[0] = type;
    m[1] = code;
    wisp_wr16(m + 2, 0);
    wisp_wr16(m + 4, 0);
    wisp_wr16(m + 6, mtu);
    memcpy(m + 8, q, qlen);
    wisp_wr16(m + 2, (uint16_t)~wisp_chksum_sum(m, 8u + qlen));
    assert_true(tu_inject(e, f, TT_ETH + TT_IPH + 8u + qlen));
}

static void inject_icmp(struct tu_env *e, uint8_t type, uint8_t code, uint16_t mtu, const uint8_t *q, uint16_t qlen)
{
    inject_icmp_to(e, ROUTER, tu_ip_self(), tu_mac_self, type, code, mtu, q, qlen);
}

/* Pop the next frame the stack sent into g_f[i] (raw, for quoting). */
static const uint8_t *pop_raw(struct tt *t, unsigned i)
{
    g_n[i] = tu_pop(t->e, g_f[i], sizeof(g_f[i]));
    assert_true(g_n[i] > (int)(TT_ETH + TT_IPH));
    return g_f[i] + TT_ETH;
}

static uint32_t raw_seq(unsigned i)
{
    return wisp_rd32(g_f[i] + TT_ETH + TT_IPH + 4);
}

static bool raw_df(unsigned i)
{
    return (wisp_rd16(g_f[i] + TT_ETH + 6) & WISP_IP4_FLAG_DF) != 0;
}

static uint16_t info_mss(struct tt *t)
{
    struct wisp_tcp_info in;
    wisp_tcp_get_info(t->pcb, &in);
    return in.mss;
}

/* ESTABLISHED (active open, peer MSS 1460, no timestamps) with `segs`
 * full-size segments of pattern data sent, unacknowledged, popped into
 * g_f[0..segs-1]. */
static void setup_inflight(struct tt *t, uint8_t *data, unsigned segs)
{
    unsigned i;
    tt_init(t);
    t->o.mss = 1460;
    (void)tt_open_active(t);
    assert_int_equal(info_mss(t), 1460);
    tt_pattern(data, 1460u * segs, 0);
    assert_int_equal(wisp_tcp_write(t->pcb, data, 1460u * segs, WISP_TCP_WRITE_COPY), WISP_OK);
    assert_int_equal(wisp_tcp_output(t->pcb), WISP_OK);
    for (i = 0; i < segs; i++) {
        (void)pop_raw(t, i);
        assert_int_equal(g_n[i], TT_ETH + TT_IPH + 20 + 1460);
        assert_int_equal(raw_seq(i), t->iss + 1u + 1460u * i);
        assert_true(raw_df(i)); /* RFC 1191 §6.4: DF on TCP segments */
    }
    tt_expect_none(t);
}

/* Collect the stack's data segments into out (relative to iss + 1) until
 * none is pending; each at most maxlen bytes and DF as expected. Returns
 * the number of segments. */
static unsigned collect(struct tt *t, uint8_t *out, uint32_t total, uint16_t maxlen, bool df)
{
    struct tt_seg g;
    unsigned n = 0;
    static uint8_t f[1600];
    int len;
    while ((len = tu_pop(t->e, f, sizeof(f))) >= 0) {
        const uint8_t *ip = f + TT_ETH, *h = ip + TT_IPH;
        uint16_t hl, dl;
        uint32_t off;
        if (ip[9] != WISP_IP4_PROTO_TCP) {
            continue;
        }
        hl = (uint16_t)((h[12] >> 4) * 4u);
        dl = (uint16_t)(wisp_rd16(ip + 2) - TT_IPH - hl);
        if (dl == 0) {
            continue;
        }
        assert_true(dl <= maxlen);
        assert_int_equal((wisp_rd16(ip + 6) & WISP_IP4_FLAG_DF) != 0, df);
        off = wisp_rd32(h + 4) - (t->iss + 1u);
        assert_true(off + dl <= total);
        memcpy(out + off, h + hl, dl);
        n++;
    }
    (void)g;
    return n;
}

/* ------------------------------------------------------------- PMTU (TCP) */

static void test_frag_needed_lowers_mss_and_resends_pieces_byte_exact(void **state)
{
    static uint8_t data[4380], got[4380 + 2000];
    struct tt t;
    struct wisp_tcp_info before, after;
    unsigned n;
    (void)state;
    setup_inflight(&t, data, 3);
    wisp_tcp_get_info(t.pcb, &before);

    /* a router with a 1000-byte next hop refuses the first segment */
    inject_icmp(t.e, WISP_ICMP_DEST_UNREACH, WISP_ICMP_UNREACH_NEEDFRAG, 1000, g_f[0] + TT_ETH, 28);
    assert_int_equal(TU_CTR(t.e, ICMP_ERR_RX), 1);
    assert_int_equal(TU_CTR(t.e, ICMP_PMTU_LOWERED), 1);
    assert_int_equal(TU_CTR(t.e, TCP_PMTU_LOWER), 1);
    assert_int_equal(TU_CTR(t.e, TCP_PMTU_RESEG), 3);
    wisp_tcp_get_info(t.pcb, &after);
    assert_int_equal(after.mss, 1000 - 40);
    assert_int_equal(after.cwnd, before.cwnd); /* no congestion signal */
    assert_int_equal(after.timeouts, 0);

    /* resent at once in pieces of <= 960 bytes, DF still set */
    memset(got, 0, sizeof(got));
    n = collect(&t, got, sizeof(data), 960, true);
    assert_int_equal(n, 6); /* each 1460-byte segment re-cut into 960 + 500 */
    assert_memory_equal(got, data, sizeof(data));

    /* the peer acknowledges all: every byte delivered, nothing left */
    tt_send(&t, TT_ACK, t.snd, t.iss + 1u + 4380u, NULL, 0);
    assert_int_equal(t.sent_total, 4380);
    wisp_tcp_get_info(t.pcb, &after);
    assert_int_equal(after.unacked, 0);

    /* new data goes out at the new MSS */
    assert_int_equal(wisp_tcp_write(t.pcb, data, 2000, WISP_TCP_WRITE_COPY), WISP_OK);
    assert_int_equal(wisp_tcp_output(t.pcb), WISP_OK);
    n = collect(&t, got, 4380u + 2000u, 960, true);
    assert_int_equal(n, 3);
    tt_done(&t);
}

static void test_frag_needed_without_mtu_uses_plateau_table(void **state)
{
    static uint8_t data[2920];
    struct tt t;
    (void)state;
    setup_inflight(&t, data, 2);
    /* RFC 1191 §5/§7: no next-hop MTU; quoted length 1500 -> plateau 1492 */
    inject_icmp(t.e, 3, 4, 0, g_f[0] + TT_ETH, 28);
    assert_int_equal(TU_CTR(t.e, ICMP_PMTU_LOWERED), 1);
    assert_int_equal(info_mss(&t), 1492 - 40);
    assert_int_equal(wisp_pmtu_get(t.e->s, tu_ip_peer(), NULL), 1492);
    tt_done(&t);
}

static void test_frag_needed_below_floor_is_clamped_and_df_cleared(void **state)
{
    static uint8_t data[2920], got[2920];
    struct tt t;
    bool nodf = false;
    (void)state;
    setup_inflight(&t, data, 2);
    inject_icmp(t.e, 3, 4, 300, g_f[1] + TT_ETH, 28);
    assert_int_equal(TU_CTR(t.e, ICMP_PMTU_CLAMPED), 1);
    assert_int_equal(wisp_pmtu_get(t.e->s, tu_ip_peer(), &nodf), WISP_PMTU_MIN);
    assert_true(nodf);
    assert_int_equal(info_mss(&t), WISP_PMTU_MIN - 40);
    /* the router fragments from now on: DF is clear */
    (void)collect(&t, got, sizeof(got), WISP_PMTU_MIN - 40, false);
    tt_done(&t);
}

static void test_frag_needed_that_would_raise_or_is_bogus_is_ignored(void **state)
{
    static uint8_t data[2920];
    struct tt t;
    uint8_t q[28];
    (void)state;
    setup_inflight(&t, data, 2);
    /* the reported MTU would have let the datagram pass: bogus */
    inject_icmp(t.e, 3, 4, 1500, g_f[0] + TT_ETH, 28);
    assert_int_equal(TU_CTR(t.e, ICMP_PMTU_DROP_BOGUS), 1);
    /* quoting a datagram sent without DF: forged */
    memcpy(q, g_f[0] + TT_ETH, 28);
    wisp_wr16(q + 6, 0);
    inject_icmp(t.e, 3, 4, 1000, q, 28);
    assert_int_equal(TU_CTR(t.e, ICMP_PMTU_DROP_NODF), 1);
    assert_int_equal(info_mss(&t), 1460);
    tt_expect_none(&t);

    /* lowered to 1000, then a second error says 1200 about the other
     * (already re-cut) segment: RFC 1191 §3, never raised by ICMP */
    inject_icmp(t.e, 3, 4, 1000, g_f[0] + TT_ETH, 28);
    assert_int_equal(info_mss(&t), 960);
    tu_clear(t.e);
    inject_icmp(t.e, 3, 4, 1200, g_f[1] + TT_ETH, 28);
    assert_int_equal(TU_CTR(t.e, ICMP_PMTU_DROP_NORAISE), 1);
    assert_int_equal(info_mss(&t), 960);
    assert_int_equal(wisp_pmtu_get(t.e->s, tu_ip_peer(), NULL), 1000);
    tt_expect_none(&t);
    tt_done(&t);
}

static void test_lowered_pmtu_ages_back_to_full_mss(void **state)
{
    static uint8_t data[2920], got[8000];
    struct tt t;
    (void)state;
    setup_inflight(&t, data, 2);
    inject_icmp(t.e, 3, 4, 1000, g_f[0] + TT_ETH, 28);
    tu_clear(t.e);
    tt_send(&t, TT_ACK, t.snd, t.iss + 1u + 2920u, NULL, 0);
    assert_int_equal(t.sent_total, 2920);
    tu_advance(t.e, WISP_PMTU_AGE_MS - 1000u);
    assert_int_equal(wisp_pmtu_get(t.e->s, tu_ip_peer(), NULL), 1000);
    tu_advance(t.e, 2000);
    /* RFC 1191 §6.3: after the age the first-hop MTU is tried again (at
     * the next output); the next writes are cut at the full MSS */
    assert_int_equal(wisp_tcp_write(t.pcb, data, 100, WISP_TCP_WRITE_COPY), WISP_OK);
    assert_int_equal(wisp_tcp_output(t.pcb), WISP_OK);
    assert_int_equal(TU_CTR(t.e, ICMP_PMTU_EXPIRED), 1);
    assert_int_equal(TU_CTR(t.e, TCP_PMTU_RAISE), 1);
    assert_int_equal(info_mss(&t), 1460);
    assert_int_equal(wisp_tcp_write(t.pcb, data, 2920, WISP_TCP_WRITE_COPY), WISP_OK);
    assert_int_equal(wisp_tcp_output(t.pcb), WISP_OK);
    assert_int_equal(collect(&t, got, sizeof(got), 1460, true), 3);
    assert_int_equal(got[2920 + 100 + 1459], data[1459]); /* a full 1460-byte segment went out */
    tt_done(&t);
}

static void test_black_hole_falls_back_to_safe_mss(void **state)
{
    static uint8_t data[4380], got[4380];
    struct tt t;
    unsigned steps = 0;
    (void)state;
    setup_inflight(&t, data, 3);
    /* full-size segments vanish without any ICMP: RTO after RTO */
    while (TU_CTR(t.e, TCP_PMTU_BLACKHOLE) == 0 && steps++ < 100) {
        tu_clear(t.e);
        tu_advance(t.e, 100);
    }
    assert_int_equal(TU_CTR(t.e, TCP_PMTU_BLACKHOLE), 1);
    assert_int_equal(TU_CTR(t.e, TCP_TIMEOUT), WISP_PMTU_BLACKHOLE_RTOS);
    assert_int_equal(info_mss(&t), WISP_PMTU_MIN - 40);
    /* the retransmission after the second RTO is a small segment */
    memset(got, 0, sizeof(got));
    assert_true(collect(&t, got, sizeof(got), WISP_PMTU_MIN - 40, true) >= 1);
    /* the small segments get through: everything goes out and is acked */
    while (t.sent_total < 4380 && steps++ < 200) {
        struct tt_seg g;
        if (tt_pop(&t, &g)) {
            if (g.len > 0) {
                assert_true(g.len <= WISP_PMTU_MIN - 40);
                memcpy(got + (g.seq - t.iss - 1u), g.data, g.len);
                tt_send(&t, TT_ACK, t.snd, g.seq + g.len, NULL, 0);
            }
        } else {
            tu_advance(t.e, 50);
        }
    }
    assert_int_equal(t.sent_total, 4380);
    assert_memory_equal(got, data, sizeof(data));
    tt_done(&t);
}

/* ----------------------------------------------------- validation (TCP) */

static void test_invalid_or_unmatched_errors_are_ignored_and_counted(void **state)
{
    static uint8_t data[1460];
    struct tt t;
    uint8_t q[28];
    uint32_t rx;
    (void)state;
    setup_inflight(&t, data, 1);

    /* quotation shorter than the IP header + 8 bytes */
    inject_icmp(t.e, 3, 3, 0, g_f[0] + TT_ETH, 24);
    assert_int_equal(TU_CTR(t.e, ICMP_ERR_DROP_SHORT), 1);
    /* not IPv4 */
    memcpy(q, g_f[0] + TT_ETH, 28);
    q[0] = 0x65;
    inject_icmp(t.e, 3, 3, 0, q, 28);
    assert_int_equal(TU_CTR(t.e, ICMP_ERR_DROP_QUOTE), 1);
    /* a non-initial fragment (no transport header in it) */
    memcpy(q, g_f[0] + TT_ETH, 28);
    wisp_wr16(q + 6, 0x0010);
    inject_icmp(t.e, 3, 3, 0, q, 28);
    assert_int_equal(TU_CTR(t.e, ICMP_ERR_DROP_QUOTE), 2);
    /* quoted source is not one of our addresses */
    memcpy(q, g_f[0] + TT_ETH, 28);
    wisp_ip4_wr(q + 12, wisp_ip4(198, 18, 0, 99));
    inject_icmp(t.e, 3, 3, 0, q, 28);
    assert_int_equal(TU_CTR(t.e, ICMP_ERR_DROP_NOTOURS), 1);
    /* no connection with that 4-tuple */
    memcpy(q, g_f[0] + TT_ETH, 28);
    wisp_wr16(q + 20, 1234);
    inject_icmp(t.e, 3, 4, 1000, q, 28);
    assert_int_equal(TU_CTR(t.e, ICMP_ERR_DROP_NOPCB), 1);
    /* RFC 5927 §4.1: sequence number outside SND.UNA..SND.NXT-1 */
    memcpy(q, g_f[0] + TT_ETH, 28);
    wisp_wr32(q + 24, t.iss + 1u + 1460u); /* = SND.NXT */
    inject_icmp(t.e, 3, 4, 1000, q, 28);
    wisp_wr32(q + 24, t.iss); /* < SND.UNA */
    inject_icmp(t.e, 3, 1, 0, q, 28);
    wisp_wr32(q + 24, t.iss + 0x40000000u);
    inject_icmp(t.e, 3, 3, 0, q, 28);
    assert_int_equal(TU_CTR(t.e, ICMP_ERR_DROP_SEQ), 3);
    /* a protocol we do not speak */
    memcpy(q, g_f[0] + TT_ETH, 28);
    q[9] = 47;
    inject_icmp(t.e, 3, 2, 0, q, 28);
    assert_int_equal(TU_CTR(t.e, ICMP_ERR_DROP_PROTO), 1);
    /* an error sent to the broadcast address */
    inject_icmp_to(t.e, ROUTER, wisp_ip4(198, 18, 0, 255), (const uint8_t *)"\xff\xff\xff\xff\xff\xff", 3, 4, 1000,
                   g_f[0] + TT_ETH, 28);
    assert_int_equal(TU_CTR(t.e, ICMP_ERR_DROP_BCAST), 1);
    /* source quench (RFC 6633) and redirect: ignored */
    inject_icmp(t.e, 4, 0, 0, g_f[0] + TT_ETH, 28);
    assert_int_equal(TU_CTR(t.e, ICMP_QUENCH_IGNORED), 1);
    inject_icmp(t.e, 5, 1, 0, g_f[0] + TT_ETH, 28);
    assert_int_equal(TU_CTR(t.e, ICMP_REDIRECT_IGNORED), 1);

    /* nothing of it touched the connection */
    assert_int_equal(info_mss(&t), 1460);
    assert_int_equal(wisp_tcp_state(t.pcb), WISP_TCP_ESTABLISHED);
    assert_int_equal(TU_CTR(t.e, ICMP_ERR_SOFT) + TU_CTR(t.e, ICMP_ERR_HARD), 0);
    assert_int_equal(TU_CTR(t.e, ICMP_PMTU_LOWERED), 0);
    assert_int_equal(TU_CTR(t.e, ICMP_ERR_RX), 12);
    tt_expect_none(&t);

    /* RFC 5461 / RFC 5927 §4.1: port unreachable once synchronized is
     * soft: counted, the connection goes on */
    rx = TU_CTR(t.e, ICMP_ERR_RX);
    inject_icmp(t.e, 3, 3, 0, g_f[0] + TT_ETH, 28);
    assert_int_equal(TU_CTR(t.e, ICMP_ERR_RX), rx + 1);
    assert_int_equal(TU_CTR(t.e, ICMP_ERR_SOFT), 1);
    assert_false(t.err_called);
    assert_int_equal(wisp_tcp_state(t.pcb), WISP_TCP_ESTABLISHED);
    tt_send(&t, TT_ACK, t.snd, t.iss + 1u + 1460u, NULL, 0);
    assert_int_equal(t.sent_total, 1460);
    tt_done(&t);
}

/* ------------------------------------------------------- connect (TCP) */

static void start_connect(struct tt *t)
{
    wisp_ipaddr_t dst = wisp_ipaddr4(tu_ip_peer());
    tt_init(t);
    t->pcb = wisp_tcp_new(t->e->s);
    assert_non_null(t->pcb);
    tt_callbacks(t, t->pcb);
    assert_int_equal(wisp_tcp_connect(t->pcb, &dst, t->pport, tt_rec_connected), WISP_OK);
    (void)pop_raw(t, 0);
    t->iss = raw_seq(0);
}

static void test_connect_port_unreachable_is_refused_at_once(void **state)
{
    struct tt t;
    uint8_t q[28];
    (void)state;
    start_connect(&t);
    /* a quote of the SYN with a sequence number past it: ignored */
    memcpy(q, g_f[0] + TT_ETH, 28);
    wisp_wr32(q + 24, t.iss + 1u);
    inject_icmp(t.e, 3, 3, 0, q, 28);
    assert_int_equal(TU_CTR(t.e, ICMP_ERR_DROP_SEQ), 1);
    assert_false(t.err_called);
    /* RFC 1122 §4.2.3.9: port unreachable in SYN-SENT aborts */
    inject_icmp(t.e, 3, 3, 0, g_f[0] + TT_ETH, 28);
    assert_true(t.err_called);
    assert_int_equal(t.err, WISP_ERR_RST);
    assert_int_equal(TU_CTR(t.e, ICMP_ERR_HARD), 1);
    assert_int_equal(TU_CTR(t.e, TCP_ICMP_REFUSED), 1);
    assert_int_equal(t.e->s->pool[WISP_POOL_TCP_PCB].used, 0);
    tt_done(&t);
}

static void test_connect_admin_prohibited_fails_at_once(void **state)
{
    struct tt t;
    (void)state;
    start_connect(&t);
    inject_icmp(t.e, 3, 13, 0, g_f[0] + TT_ETH, 28); /* RFC 1812 §5.2.7.1 */
    assert_true(t.err_called);
    assert_int_equal(t.err, WISP_ERR_HOSTUNREACH);
    assert_int_equal(TU_CTR(t.e, ICMP_ERR_HARD), 1);
    assert_int_equal(t.e->s->pool[WISP_POOL_TCP_PCB].used, 0);
    tt_done(&t);
}

static void connect_soft(uint8_t type, uint8_t code, wisp_err_t expect)
{
    struct tt t;
    unsigned steps = 0;
    start_connect(&t);
    inject_icmp(t.e, type, code, 0, g_f[0] + TT_ETH, 28);
    assert_int_equal(TU_CTR(t.e, ICMP_ERR_SOFT), 1);
    assert_false(t.err_called);
    assert_int_equal(wisp_tcp_state(t.pcb), WISP_TCP_SYN_SENT);
    /* the SYN is retried; when the retries run out the soft error is
     * the reason (as Linux: connect fails with EHOSTUNREACH) */
    while (!t.err_called && steps++ < 1000) {
        tu_clear(t.e);
        tu_advance(t.e, 1000);
    }
    assert_true(t.err_called);
    assert_int_equal(t.err, expect);
    assert_int_equal(TU_CTR(t.e, TCP_SYN_RETRANSMIT), WISP_TCP_SYNMAXRTX);
    tt_done(&t);
}

static void test_connect_host_unreachable_fails_after_syn_retries(void **state)
{
    (void)state;
    connect_soft(3, 1, WISP_ERR_HOSTUNREACH);
    connect_soft(3, 0, WISP_ERR_NETUNREACH);
    connect_soft(11, 0, WISP_ERR_HOSTUNREACH);
}

/* ----------------------------------------------------------------- UDP */

struct uerr {
    unsigned n;
    wisp_err_t err;
    uint8_t type, code;
};

static void udp_err_rec(void *arg, struct wisp_udp_pcb *pcb, wisp_err_t err, const struct wisp_icmp_err *e)
{
    struct uerr *u = (struct uerr *)arg;
    (void)pcb;
    u->n++;
    u->err = err;
    u->type = e->type;
    u->code = e->code;
}

static void test_udp_connected_gets_refused_unconnected_not(void **state)
{
    struct tu_env *e = tu_env_new(3);
    struct wisp_udp_pcb *pcb;
    struct wisp_pbuf *p;
    wisp_ipaddr_t peer = wisp_ipaddr4(tu_ip_peer());
    struct uerr u;
    uint8_t f[200];
    int n;
    (void)state;
    tu_arp_peer(e);
    tu_clear(e);
    memset(&u, 0, sizeof(u));
    pcb = wisp_udp_new(e->s);
    assert_non_null(pcb);
    wisp_udp_err(pcb, udp_err_rec, &u);
    assert_int_equal(wisp_udp_bind(pcb, NULL, 5000), WISP_OK);
    assert_int_equal(wisp_udp_connect(pcb, &peer, 53), WISP_OK);
    p = wisp_pbuf_alloc(e->s, WISP_LAYER_TRANSPORT, 10, WISP_PBUF_RAM);
    assert_non_null(p);
    memset(p->payload, 'x', 10);
    assert_int_equal(wisp_udp_send(pcb, p), WISP_OK);
    wisp_pbuf_free(p);
    n = tu_pop(e, f, sizeof(f));
    assert_true(n >= (int)(TT_ETH + TT_IPH + 8));
    assert_int_equal(wisp_rd16(f + TT_ETH + 6) & WISP_IP4_FLAG_DF, 0); /* UDP: DF clear */

    /* RFC 1122 §4.1.3.3: passed to the application */
    inject_icmp(e, 3, 3, 0, f + TT_ETH, 28);
    assert_int_equal(u.n, 1);
    assert_int_equal(u.err, WISP_ERR_REFUSED);
    assert_int_equal(TU_CTR(e, ICMP_ERR_UDP), 1);
    assert_int_equal(TU_CTR(e, ICMP_ERR_HARD), 1);
    inject_icmp(e, 3, 1, 0, f + TT_ETH, 28);
    assert_int_equal(u.n, 2);
    assert_int_equal(u.err, WISP_ERR_HOSTUNREACH);
    assert_int_equal(TU_CTR(e, ICMP_ERR_SOFT), 1);
    /* "fragmentation needed" about a UDP datagram (sent without DF) */
    inject_icmp(e, 3, 4, 576, f + TT_ETH, 28);
    assert_int_equal(TU_CTR(e, ICMP_PMTU_DROP_NODF), 1);
    assert_int_equal(u.n, 2);
    /* an unconnected PCB is not told */
    wisp_udp_disconnect(pcb);
    inject_icmp(e, 3, 3, 0, f + TT_ETH, 28);
    assert_int_equal(u.n, 2);
    assert_int_equal(TU_CTR(e, ICMP_ERR_DROP_NOPCB), 1);
    wisp_udp_remove(pcb);
    tu_env_free(e);
}

static void test_error_about_our_echo_request_is_counted(void **state)
{
    struct tu_env *e = tu_env_new(4);
    uint8_t f[200];
    int n;
    (void)state;
    tu_arp_peer(e);
    tu_clear(e);
    assert_int_equal(wisp_icmp_echo_request(e->s, tu_ip_peer(), 1, 1, 16, 0), WISP_OK);
    n = tu_pop(e, f, sizeof(f));
    assert_true(n > 0);
    inject_icmp(e, 11, 0, 0, f + TT_ETH, 28);
    assert_int_equal(TU_CTR(e, ICMP_ERR_ICMP), 1);
    tu_env_free(e);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_frag_needed_lowers_mss_and_resends_pieces_byte_exact),
        cmocka_unit_test(test_frag_needed_without_mtu_uses_plateau_table),
        cmocka_unit_test(test_frag_needed_below_floor_is_clamped_and_df_cleared),
        cmocka_unit_test(test_frag_needed_that_would_raise_or_is_bogus_is_ignored),
        cmocka_unit_test(test_lowered_pmtu_ages_back_to_full_mss),
        cmocka_unit_test(test_black_hole_falls_back_to_safe_mss),
        cmocka_unit_test(test_invalid_or_unmatched_errors_are_ignored_and_counted),
        cmocka_unit_test(test_connect_port_unreachable_is_refused_at_once),
        cmocka_unit_test(test_connect_admin_prohibited_fails_at_once),
        cmocka_unit_test(test_connect_host_unreachable_fails_after_syn_retries),
        cmocka_unit_test(test_udp_connected_gets_refused_unconnected_not),
        cmocka_unit_test(test_error_about_our_echo_request_is_counted),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
