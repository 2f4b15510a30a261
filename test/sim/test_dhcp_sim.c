/**
 * @file test_dhcp_sim.c
 * Simulator tests of the DHCP client (src/core/dhcp.c) against a scripted
 * DHCP server on the simulated wire, in virtual time: a lost OFFER
 * (retransmission), NAK in REQUESTING and in RENEWING (back to INIT),
 * lease expiry (interface unconfigured), renewal at T1 by unicast,
 * rebinding at T2 by broadcast, an ARP conflict (DECLINE, then another
 * address), malformed server messages, and INIT-REBOOT on link up.
 *
 * The server is a UDP PCB on port 67 of a second wisp stack (198.18.0.1)
 * that answers like RFC 2131 §4.1 says (broadcast while the client has no
 * address, unicast to ciaddr otherwise) and whose behaviour each test
 * scripts (drop, NAK, stay silent, send malformed messages).
 */
#include "simtest.h"
#include "wisp/dhcp.h"

#define POOL1 wisp_ip4(198, 18, 0, 100)
#define POOL2 wisp_ip4(198, 18, 0, 101)
#define SEC 1000000ull /* us */
#define SLACK 10000ull /* us: the stacks' millisecond clocks */

/* ------------------------------------------------------------- server */

struct srv {
    struct sim_world *w;
    struct sim_node *n;
    struct wisp_udp_pcb *pcb;
    wisp_ip4_t addr;          /* the address offered */
    uint32_t lease, t1, t2;   /* t1/t2 0 = options absent */
    /* script */
    unsigned drop_discovers;  /* the first N DISCOVERs get no OFFER */
    unsigned nak_requests;    /* the first N REQUESTs (SELECTING) get a NAK */
    unsigned bad_offers;      /* the first N OFFERs are malformed (kinds cycle) */
    bool nak_renew;           /* NAK unicast renewals */
    bool ignore_renew;        /* no answer to unicast renewals */
    bool ignore_rebind;       /* no answer to broadcast REQUESTs with ciaddr */
    bool silent_after_bind;   /* no answer to anything once an ACK went out */
    /* what it saw */
    unsigned discovers, requests, renews, rebinds, reboots, declines, releases, acks, naks, offers;
    uint64_t t_discover[8];
    uint64_t t_ack, t_renew, t_rebind, t_decline;
    wisp_ip4_t renew_dst, renew_ciaddr, declined;
};

static int srv_opt(const uint8_t *m, uint16_t n, uint8_t code, const uint8_t **v)
{
    uint16_t i = 240;
    while (i + 1u < n) {
        if (m[i] == 0) {
            i++;
            continue;
        }
        if (m[i] == 255) {
            return -1;
        }
        if (m[i] == code) {
            *v = m + i + 2;
            return m[i + 1];
        }
        i = (uint16_t)(i + 2u + m[i + 1]);
    }
    return -1;
}

/* kind: 0 good, 1 bad option length, 2 truncated, 3 wrong xid,
 * 4 option running past the end. */
static void srv_send(struct srv *v, uint8_t type, uint32_t xid, wisp_ip4_t yiaddr, const uint8_t *chaddr,
                     wisp_ip4_t dst, int kind)
{
    uint8_t m[400];
    uint16_t n = 240;
    struct wisp_pbuf *p;
    wisp_ipaddr_t to = wisp_ipaddr4(dst);

    memset(m, 0, sizeof(m));
    m[0] = 2;
    m[1] = 1;
    m[2] = 6;
    wisp_wr32(m + 4, kind == 3 ? xid ^ 0x5a5a5a5au : xid);
    wisp_ip4_wr(m + 16, yiaddr);
    memcpy(m + 28, chaddr, 16);
    m[236] = 99;
    m[237] = 130;
    m[238] = 83;
    m[239] = 99;
    m[n++] = 53;
    m[n++] = 1;
    m[n++] = type;
    m[n++] = 54;
    m[n++] = 4;
    wisp_ip4_wr(m + n, sim_ip(v->n));
    n += 4;
    if (type != 6) {
        m[n++] = 1;
        m[n++] = kind == 1 ? 3 : 4;
        wisp_ip4_wr(m + n, wisp_ip4_prefix_mask(24));
        n = (uint16_t)(n + (kind == 1 ? 3 : 4));
        m[n++] = 3;
        m[n++] = 4;
        wisp_ip4_wr(m + n, sim_ip(v->n));
        n += 4;
        m[n++] = 51;
        m[n++] = 4;
        wisp_wr32(m + n, v->lease);
        n += 4;
        if (v->t1 != 0) {
            m[n++] = 58;
            m[n++] = 4;
            wisp_wr32(m + n, v->t1);
            n += 4;
        }
        if (v->t2 != 0) {
            m[n++] = 59;
            m[n++] = 4;
            wisp_wr32(m + n, v->t2);
            n += 4;
        }
    }
    if (kind == 4) {
        m[n++] = 6;
        m[n++] = 250;
        m[n++] = 1;
    } else {
        m[n++] = 255;
        if (n < 300) {
            n = 300;
        }
    }
    if (kind == 2) {
        n = 200;
    }
    p = wisp_pbuf_alloc(sim_stack(v->n), WISP_LAYER_TRANSPORT, n, WISP_PBUF_RAM);
    assert_non_null(p);
    assert_int_equal(wisp_pbuf_copy_in(p, m, n, 0), WISP_OK);
    (void)wisp_udp_sendto(v->pcb, p, &to, 68);
    wisp_pbuf_free(p);
}

static void srv_recv(void *arg, struct wisp_udp_pcb *pcb, struct wisp_pbuf *p, const wisp_ipaddr_t *src,
                     uint16_t port, const struct wisp_ip_info *ip)
{
    struct srv *v = arg;
    uint8_t m[600];
    uint16_t n = wisp_pbuf_copy_out(p, m, sizeof(m), 0);
    const uint8_t *o;
    uint8_t type;
    uint32_t xid;
    wisp_ip4_t ciaddr, req = 0, dst;
    uint64_t now = sim_now_us(v->w);
    (void)pcb;
    (void)src;
    (void)port;

    wisp_pbuf_free(p);
    if (n < 240 || m[0] != 1 || srv_opt(m, n, 53, &o) != 1) {
        return;
    }
    type = o[0];
    xid = wisp_rd32(m + 4);
    ciaddr = wisp_ip4_rd(m + 12);
    if (srv_opt(m, n, 50, &o) == 4) {
        req = wisp_ip4_rd(o);
    }
    /* RFC 2131 §4.1: unicast to ciaddr when set, else broadcast (the
     * client sets the BROADCAST flag). */
    dst = ciaddr != 0 ? ciaddr : WISP_IP4_BCAST;
    if (v->silent_after_bind && v->acks > 0 && type != 4 && type != 7) {
        if (type == 3 && ciaddr != 0) {
            if (ip->bcast) {
                v->rebinds++;
                if (v->t_rebind == 0) {
                    v->t_rebind = now;
                }
            } else {
                v->renews++;
                if (v->t_renew == 0) {
                    v->t_renew = now;
                }
            }
        }
        return;
    }
    switch (type) {
    case 1: /* DISCOVER */
        if (v->discovers < WISP_ARRAY_SIZE(v->t_discover)) {
            v->t_discover[v->discovers] = now;
        }
        v->discovers++;
        if (v->drop_discovers > 0) {
            v->drop_discovers--;
            return;
        }
        if (v->bad_offers > 0) {
            static const int kinds[] = { 1, 2, 3, 4 };
            v->bad_offers--;
            srv_send(v, 2, xid, v->addr, m + 28, dst, kinds[v->bad_offers % 4]);
            return;
        }
        v->offers++;
        srv_send(v, 2, xid, v->addr, m + 28, dst, 0);
        return;
    case 3: /* REQUEST */
        if (ciaddr != 0) {
            if (!ip->bcast) {
                v->renews++;
                v->renew_dst = wisp_ipaddr_ip4(&ip->dst);
                v->renew_ciaddr = ciaddr;
                if (v->t_renew == 0) {
                    v->t_renew = now;
                }
                if (v->ignore_renew) {
                    return;
                }
                if (v->nak_renew) {
                    v->naks++;
                    srv_send(v, 6, xid, 0, m + 28, dst, 0);
                    return;
                }
            } else {
                v->rebinds++;
                if (v->t_rebind == 0) {
                    v->t_rebind = now;
                }
                if (v->ignore_rebind) {
                    return;
                }
            }
            v->acks++;
            v->t_ack = now;
            srv_send(v, 5, xid, ciaddr, m + 28, dst, 0);
            return;
        }
        if (srv_opt(m, n, 54, &o) != 4) {
            v->reboots++; /* INIT-REBOOT: no server identifier */
        } else {
            v->requests++;
        }
        if (req != v->addr || v->nak_requests > 0) {
            if (v->nak_requests > 0) {
                v->nak_requests--;
            }
            v->naks++;
            srv_send(v, 6, xid, 0, m + 28, WISP_IP4_BCAST, 0);
            return;
        }
        v->acks++;
        v->t_ack = now;
        srv_send(v, 5, xid, req, m + 28, dst, 0);
        return;
    case 4: /* DECLINE */
        v->declines++;
        v->declined = req;
        v->t_decline = now;
        v->addr = POOL2; /* offer another one next time */
        return;
    case 7: /* RELEASE */
        v->releases++;
        return;
    default:
        return;
    }
}

/* -------------------------------------------------------------- client */

struct cli {
    struct sim_world *w;
    struct sim_node *n;
    struct wisp_dhcp d;
    unsigned bound, renewed, lost, conflict;
    uint64_t t_bound, t_renewed, t_lost;
};

static void cli_cb(void *arg, struct wisp_dhcp *d, enum wisp_dhcp_event ev)
{
    struct cli *c = arg;
    uint64_t now = sim_now_us(c->w);
    (void)d;
    switch (ev) {
    case WISP_DHCP_EV_BOUND:
        c->bound++;
        c->t_bound = now;
        break;
    case WISP_DHCP_EV_RENEWED:
        c->renewed++;
        c->t_renewed = now;
        break;
    case WISP_DHCP_EV_LOST:
        c->lost++;
        c->t_lost = now;
        break;
    case WISP_DHCP_EV_CONFLICT:
        c->conflict++;
        break;
    }
}

static bool cli_bound(void *arg)
{
    struct cli *c = arg;
    return c->bound > 0 && wisp_dhcp_state(&c->d) == WISP_DHCP_BOUND;
}

static bool cli_renewed(void *arg)
{
    return ((struct cli *)arg)->renewed > 0;
}

static bool cli_lost(void *arg)
{
    return ((struct cli *)arg)->lost > 0;
}

struct world {
    struct sim_world *w;
    struct srv srv;
    struct cli cli;
};

/* A world with the server (node 1, 198.18.0.1) and the client (node 2,
 * its configured address removed by the DHCP client); lease 120 s, T1 60,
 * T2 105 unless the test changes srv before calling world_start. */
static struct world *world_new(uint64_t seed)
{
    struct world *x = calloc(1, sizeof(*x));
    assert_non_null(x);
    x->w = sim_world_new(seed);
    assert_non_null(x->w);
    x->srv.w = x->w;
    x->srv.n = st_node(x->w, "srv", 1);
    x->srv.pcb = wisp_udp_new(sim_stack(x->srv.n));
    assert_non_null(x->srv.pcb);
    assert_int_equal(wisp_udp_bind(x->srv.pcb, NULL, 67), WISP_OK);
    wisp_udp_recv(x->srv.pcb, srv_recv, &x->srv);
    x->srv.addr = POOL1;
    x->srv.lease = 120;
    x->srv.t1 = 60;
    x->srv.t2 = 105;
    x->cli.w = x->w;
    x->cli.n = st_node(x->w, "cli", 2);
    return x;
}

static void world_start(struct world *x)
{
    struct wisp_dhcp_cfg cfg;
    wisp_dhcp_cfg_defaults(&cfg);
    cfg.init_delay_ms = 0;
    assert_true(sim_run_for(x->w, 10000)); /* start-up announcements */
    assert_int_equal(wisp_dhcp_start(&x->cli.d, sim_netif(x->cli.n), &cfg, cli_cb, &x->cli), WISP_OK);
    assert_true(wisp_netif_ip4_addr(sim_netif(x->cli.n)) == 0);
}

static void world_free(struct world *x)
{
    wisp_dhcp_stop(&x->cli.d, false);
    wisp_udp_remove(x->srv.pcb);
    assert_null(sim_error(x->w));
    ST_FREE(x->w);
    free(x);
}

static wisp_ip4_t cli_ip(struct world *x)
{
    return wisp_netif_ip4_addr(sim_netif(x->cli.n));
}

static uint32_t cli_ctr(struct world *x, enum wisp_counter c)
{
    return sim_stack(x->cli.n)->ctr[c];
}

/* --------------------------------------------------------------- tests */

/* RFC 2131 §4.1: the first OFFER is lost; the DISCOVER is retransmitted
 * 4 +- 1 s later and the second OFFER leads to a lease. */
static void test_lost_offer_retransmits(void **state)
{
    struct world *x = world_new(101);
    uint64_t gap;
    (void)state;

    x->srv.drop_discovers = 1;
    world_start(x);
    assert_true(sim_run_until(x->w, cli_bound, &x->cli, 30 * SEC));
    assert_int_equal(x->srv.discovers, 2);
    gap = x->srv.t_discover[1] - x->srv.t_discover[0];
    assert_true(gap >= 3 * SEC && gap <= 5 * SEC);
    assert_true(cli_ip(x) == POOL1);
    assert_true(wisp_netif_ip4_gw(sim_netif(x->cli.n)) == sim_ip(x->srv.n));
    assert_int_equal(cli_ctr(x, WISP_CTR_DHCP_RETRANSMIT), 1);
    world_free(x);
}

/* RFC 2131 §4.4.1: a NAK in REQUESTING: back to INIT, a new DISCOVER, and
 * the second exchange succeeds. */
static void test_nak_in_requesting(void **state)
{
    struct world *x = world_new(102);
    (void)state;

    x->srv.nak_requests = 1;
    world_start(x);
    assert_true(sim_run_until(x->w, cli_bound, &x->cli, 60 * SEC));
    assert_int_equal(x->srv.naks, 1);
    assert_int_equal(x->srv.discovers, 2);
    assert_int_equal(x->srv.requests, 2);
    assert_int_equal(cli_ctr(x, WISP_CTR_DHCP_NAK_RX), 1);
    assert_true(cli_ip(x) == POOL1);
    assert_int_equal(x->cli.lost, 0);
    world_free(x);
}

/* RFC 2131 §4.4.5: a NAK to the renewal at T1: the address is dropped at
 * once (LOST), then the client starts over and gets a lease again. */
static void test_nak_in_renewing(void **state)
{
    struct world *x = world_new(103);
    (void)state;

    x->srv.nak_renew = true;
    world_start(x);
    assert_true(sim_run_until(x->w, cli_bound, &x->cli, 30 * SEC));
    assert_true(sim_run_until(x->w, cli_lost, &x->cli, 70 * SEC));
    assert_true(cli_ip(x) == 0);
    assert_int_equal(x->srv.renews, 1);
    assert_int_equal(x->srv.naks, 1);
    assert_true(x->cli.t_lost - x->srv.t_renew < SEC);
    x->srv.nak_renew = false;
    x->cli.bound = 0;
    assert_true(sim_run_until(x->w, cli_bound, &x->cli, 60 * SEC));
    assert_true(cli_ip(x) == POOL1);
    world_free(x);
}

/* RFC 2131 §4.4.5: the server goes silent after the first ACK: renewal at
 * T1 (unicast), rebinding at T2 (broadcast), and at expiry the interface
 * is unconfigured (LOST). */
static void test_lease_expiry_unconfigures(void **state)
{
    struct world *x = world_new(104);
    uint64_t t0;
    (void)state;

    x->srv.silent_after_bind = true;
    world_start(x);
    assert_true(sim_run_until(x->w, cli_bound, &x->cli, 30 * SEC));
    t0 = x->srv.t_ack;
    assert_true(sim_run_until(x->w, cli_lost, &x->cli, 200 * SEC));
    assert_true(cli_ip(x) == 0);
    assert_true(wisp_netif_ip4_gw(sim_netif(x->cli.n)) == 0);
    /* the lease starts when the REQUEST was sent, just before the ACK */
    assert_true(x->cli.t_lost <= t0 + 120 * SEC + SLACK && x->cli.t_lost + SEC >= t0 + 120 * SEC);
    assert_true(x->srv.renews >= 1);
    assert_true(x->srv.rebinds >= 1);
    assert_int_equal(cli_ctr(x, WISP_CTR_DHCP_EXPIRED), 1);
    world_free(x);
}

/* RFC 2131 §4.4.5: at T1 the REQUEST goes unicast to the server with
 * ciaddr set; the ACK renews (RENEWED), and the next renewal comes T1
 * later. */
static void test_renew_at_t1_unicast(void **state)
{
    struct world *x = world_new(105);
    uint64_t t0, t1;
    (void)state;

    world_start(x);
    assert_true(sim_run_until(x->w, cli_bound, &x->cli, 30 * SEC));
    t0 = x->srv.t_ack;
    assert_true(sim_run_until(x->w, cli_renewed, &x->cli, 70 * SEC));
    assert_int_equal(x->srv.renews, 1);
    assert_int_equal(x->srv.rebinds, 0);
    assert_true(x->srv.renew_dst == sim_ip(x->srv.n));
    assert_true(x->srv.renew_ciaddr == POOL1);
    assert_true(x->srv.t_renew + SEC >= t0 + 60 * SEC && x->srv.t_renew <= t0 + 60 * SEC + SLACK);
    assert_int_equal(wisp_dhcp_state(&x->cli.d), WISP_DHCP_BOUND);
    assert_true(cli_ip(x) == POOL1);
    t1 = x->srv.t_renew;
    x->cli.renewed = 0;
    x->srv.t_renew = 0;
    assert_true(sim_run_until(x->w, cli_renewed, &x->cli, 70 * SEC));
    assert_true(x->srv.t_renew >= t1 + 59 * SEC && x->srv.t_renew <= t1 + 61 * SEC);
    assert_int_equal(x->cli.lost, 0);
    world_free(x);
}

/* RFC 2131 §4.4.5: the server ignores unicast renewals; at T2 the client
 * broadcasts (REBINDING) and the ACK keeps the lease. */
static void test_rebind_at_t2_broadcast(void **state)
{
    struct world *x = world_new(106);
    uint64_t t0;
    (void)state;

    x->srv.ignore_renew = true;
    world_start(x);
    assert_true(sim_run_until(x->w, cli_bound, &x->cli, 30 * SEC));
    t0 = x->srv.t_ack;
    assert_true(sim_run_until(x->w, cli_renewed, &x->cli, 120 * SEC));
    assert_true(x->srv.renews >= 1);
    assert_int_equal(x->srv.rebinds, 1);
    assert_true(x->srv.t_rebind + SEC >= t0 + 105 * SEC && x->srv.t_rebind <= t0 + 105 * SEC + SLACK);
    assert_true(cli_ip(x) == POOL1);
    assert_int_equal(wisp_dhcp_state(&x->cli.d), WISP_DHCP_BOUND);
    assert_int_equal(x->cli.lost, 0);
    world_free(x);
}

/* RFC 5227 §2.1.1 + RFC 2131 §3.1 step 5: another host already uses the
 * offered address and answers the probe: DECLINE, at least 10 s of
 * waiting, then the next address is bound. */
static void test_arp_conflict_declines(void **state)
{
    struct world *x = world_new(107);
    struct sim_node *squat;
    (void)state;

    squat = st_node(x->w, "squatter", 100); /* 198.18.0.100 = POOL1 */
    world_start(x);
    assert_true(sim_run_until(x->w, cli_bound, &x->cli, 60 * SEC));
    assert_int_equal(x->srv.declines, 1);
    assert_true(x->srv.declined == POOL1);
    assert_int_equal(x->cli.conflict, 1);
    assert_true(cli_ip(x) == POOL2);
    assert_true(x->srv.t_discover[1] + SLACK >= x->srv.t_decline + 10 * SEC);
    assert_int_equal(cli_ctr(x, WISP_CTR_DHCP_DECLINE_TX), 1);
    /* the squatter kept its address undisturbed */
    assert_true(wisp_netif_ip4_addr(sim_netif(squat)) == POOL1);
    world_free(x);
}

/* Malformed OFFERs (bad option length, truncated, wrong xid, option past
 * the end) are counted drops; the client keeps retransmitting and binds
 * when a good OFFER comes. */
static void test_malformed_offers_dropped(void **state)
{
    struct world *x = world_new(108);
    struct wisp_stack *cs;
    (void)state;

    x->srv.bad_offers = 4;
    world_start(x);
    assert_true(sim_run_until(x->w, cli_bound, &x->cli, 200 * SEC));
    cs = sim_stack(x->cli.n);
    assert_int_equal(x->srv.discovers, 5);
    assert_int_equal(cs->ctr[WISP_CTR_DHCP_DROP_OPTS], 2);
    assert_int_equal(cs->ctr[WISP_CTR_DHCP_DROP_SHORT], 1);
    assert_int_equal(cs->ctr[WISP_CTR_DHCP_DROP_XID], 1);
    assert_true(cli_ip(x) == POOL1);
    world_free(x);
}

/* RFC 2131 §3.2: the cable is pulled and plugged back: INIT-REBOOT asks for
 * the address without server identifier; the ACK renews the lease. */
static void test_link_up_init_reboot(void **state)
{
    struct world *x = world_new(109);
    (void)state;

    world_start(x);
    assert_true(sim_run_until(x->w, cli_bound, &x->cli, 30 * SEC));
    sim_node_set_link(x->cli.n, false);
    assert_true(sim_run_for(x->w, 5 * SEC));
    sim_node_set_link(x->cli.n, true);
    assert_true(sim_run_until(x->w, cli_renewed, &x->cli, 30 * SEC));
    assert_int_equal(x->srv.reboots, 1);
    assert_int_equal(x->srv.discovers, 1);
    assert_true(cli_ip(x) == POOL1);
    world_free(x);
}

/* Stop with release: the server gets a RELEASE. */
static void test_release_reaches_server(void **state)
{
    struct world *x = world_new(110);
    (void)state;

    world_start(x);
    assert_true(sim_run_until(x->w, cli_bound, &x->cli, 30 * SEC));
    wisp_dhcp_stop(&x->cli.d, true);
    assert_true(sim_run_for(x->w, SEC));
    assert_int_equal(x->srv.releases, 1);
    assert_true(cli_ip(x) == 0);
    world_free(x);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_lost_offer_retransmits),
        cmocka_unit_test(test_nak_in_requesting),
        cmocka_unit_test(test_nak_in_renewing),
        cmocka_unit_test(test_lease_expiry_unconfigures),
        cmocka_unit_test(test_renew_at_t1_unicast),
        cmocka_unit_test(test_rebind_at_t2_broadcast),
        cmocka_unit_test(test_arp_conflict_declines),
        cmocka_unit_test(test_malformed_offers_dropped),
        cmocka_unit_test(test_link_up_init_reboot),
        cmocka_unit_test(test_release_reaches_server),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
