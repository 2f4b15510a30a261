/**
 * @file test_services.c
 * Admission and timeouts of the raw-API TCP services (apps/lib/services.c,
 * issue 11 item 2) on the simulated wire, in virtual time: a server stack
 * with the services and three client stacks (198.18.0.1 the legitimate
 * client, .3 and .4 the attackers).
 *  - the idle timeout: an idle discard connection is closed (FIN) after
 *    idle_ms and not before; an echo client that reads nothing and a
 *    chargen client that reads nothing are reset;
 *  - the per-source cap (set to 6 of 8): the seventh connection from one address
 *    is refused while its six are fresh, and reclaims that address's own
 *    oldest idle one once it has been idle for reclaim_ms;
 *  - idle attackers holding every record (reconnecting at once whenever
 *    they are reset) and 10 legitimate echo exchanges: 10/10 answered,
 *    while a working echo connection (a message every 300 ms) is never
 *    taken; with the defences off (cap = records, reclaim and idle at
 *    2^31 - 1 ms) the same attack refuses the legitimate client every time.
 * Every test ends with the pools of every stack back at zero.
 */
#include "testutil.h"
#include "simwire.h"
#include "services.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NEVER 0x7FFFFFFFu

/* A raw-API client that records what it receives. */
struct sc {
    struct wisp_tcp_pcb *pcb;
    uint8_t rx[256];
    size_t rx_len;
    uint64_t rx_total;
    bool connected, fin, errd, no_window;
    wisp_err_t err;
};

struct st {
    struct sim_world *w;
    struct sim_node *srv, *cli, *a, *b;
    struct wisp_services svc;
};

static wisp_err_t sc_recv(void *arg, struct wisp_tcp_pcb *pcb, struct wisp_pbuf *p, wisp_err_t err)
{
    struct sc *c = (struct sc *)arg;
    (void)err;
    if (p == NULL) {
        c->fin = true;
        return WISP_OK;
    }
    if (c->rx_len < sizeof c->rx) {
        c->rx_len += wisp_pbuf_copy_out(p, c->rx + c->rx_len, (uint32_t)(sizeof c->rx - c->rx_len), 0);
    }
    c->rx_total += p->tot_len;
    if (!c->no_window) {
        wisp_tcp_recved(pcb, p->tot_len);
    }
    wisp_pbuf_free(p);
    return WISP_OK;
}

static void sc_errf(void *arg, wisp_err_t err)
{
    struct sc *c = (struct sc *)arg;
    c->errd = true;
    c->err = err;
    c->pcb = NULL;
}

static wisp_err_t sc_connected(void *arg, struct wisp_tcp_pcb *pcb, wisp_err_t err)
{
    (void)pcb;
    ((struct sc *)arg)->connected = (err == WISP_OK);
    return WISP_OK;
}

static bool sc_is_connected(void *arg)
{
    struct sc *c = (struct sc *)arg;
    return c->connected || c->errd;
}

/* Connect from node n to the server's port (the handshake completes even
 * when the service then refuses: that shows as a reset afterwards). */
static void sc_open(struct st *t, struct sim_node *n, struct sc *c, uint16_t port)
{
    wisp_ipaddr_t ip = wisp_ipaddr4(sim_ip(t->srv));
    memset(c, 0, sizeof(*c));
    c->pcb = wisp_tcp_new(sim_stack(n));
    assert_non_null(c->pcb);
    wisp_tcp_arg(c->pcb, c);
    wisp_tcp_recv(c->pcb, sc_recv);
    wisp_tcp_err(c->pcb, sc_errf);
    assert_int_equal(wisp_tcp_connect(c->pcb, &ip, port, sc_connected), WISP_OK);
    assert_true(sim_run_until(t->w, sc_is_connected, c, 5000000));
}

static void sc_send(struct sc *c, const void *data, size_t len)
{
    assert_non_null(c->pcb);
    assert_int_equal(wisp_tcp_write(c->pcb, data, (uint32_t)len, WISP_TCP_WRITE_COPY), WISP_OK);
    assert_int_equal(wisp_tcp_output(c->pcb), WISP_OK);
}

static void sc_close(struct sc *c)
{
    if (c->pcb != NULL) {
        wisp_tcp_arg(c->pcb, NULL);
        if (wisp_tcp_close(c->pcb) != WISP_OK) {
            wisp_tcp_abort(c->pcb);
        }
        c->pcb = NULL;
    }
}

static void st_init(struct st *t, uint64_t seed, const struct wisp_services_opts *o)
{
    memset(t, 0, sizeof(*t));
    t->w = sim_world_new(seed);
    assert_non_null(t->w);
    t->cli = sim_node_add(t->w, "client", "198.18.0.1/24", NULL);
    t->srv = sim_node_add(t->w, "server", "198.18.0.2/24", NULL);
    t->a = sim_node_add(t->w, "attacker-a", "198.18.0.3/24", NULL);
    t->b = sim_node_add(t->w, "attacker-b", "198.18.0.4/24", NULL);
    assert_true(t->cli != NULL && t->srv != NULL && t->a != NULL && t->b != NULL);
    assert_int_equal(wisp_services_start_opts(sim_stack(t->srv), &t->svc, o), WISP_OK);
    assert_true(sim_run_for(t->w, 10000));
}

static void st_free(struct st *t)
{
    assert_true(sim_run_for(t->w, 5000000));
    wisp_services_stop(&t->svc);
    assert_true(sim_run_for(t->w, 100000));
    assert_int_equal(sim_world_free(t->w), 0);
}

static const struct wisp_tcp_service_stats *echo_st(struct st *t)
{
    return &t->svc.tcp[WISP_TCP_SVC_ECHO].st;
}

/* Defaults: 30 s idle, 1 s reclaim, no per-source cap (all 8 records). */
static void test_opts_defaults(void **state)
{
    struct wisp_services_opts o;
    (void)state;
    memset(&o, 0, sizeof o);
    wisp_services_opts_resolve(&o, WISP_SERVICES_TCP_CONNS);
    assert_int_equal(o.idle_ms, WISP_SERVICES_IDLE_MS);
    assert_int_equal(o.idle_ms, 30000);
    assert_int_equal(o.reclaim_ms, 1000);
    assert_int_equal(o.per_source, WISP_SERVICES_TCP_CONNS);
    o.per_source = 1000;
    o.idle_ms = 0xFFFFFFFFu;
    wisp_services_opts_resolve(&o, 16);
    assert_int_equal(o.per_source, 16);
    assert_int_equal(o.idle_ms, 0x7FFFFFFFu);
}

/* The idle timeout: FIN for an idle connection, RST for a stuck one. */
static void test_idle_timeout(void **state)
{
    struct st t;
    struct sc d, e, g;
    struct wisp_services_opts o;
    static uint8_t junk[60000];
    unsigned i;
    (void)state;
    memset(&o, 0, sizeof o);
    o.idle_ms = 3000;
    st_init(&t, 21, &o);

    sc_open(&t, t.cli, &d, WISP_PORT_DISCARD);
    sc_send(&d, "some bytes", 10);
    assert_true(sim_run_for(t.w, 2500000));
    assert_false(d.fin || d.errd);   /* not before idle_ms */
    assert_true(sim_run_for(t.w, 2000000));
    assert_true(d.fin);              /* closed gracefully (the poll runs every second) */
    assert_false(d.errd);
    assert_int_equal(t.svc.tcp[WISP_TCP_SVC_DISCARD].st.timeouts, 1);
    assert_int_equal(t.svc.tcp[WISP_TCP_SVC_DISCARD].st.closed, 1);
    sc_close(&d);

    /* echo to a client that reads nothing: our data does not move, reset */
    sc_open(&t, t.cli, &e, WISP_PORT_ECHO);
    e.no_window = true;
    for (i = 0; i < 150 && e.pcb != NULL; i++) {
        /* more than the client's window, the server's send buffer and
         * its receive window together: the echo stalls */
        uint32_t room = wisp_tcp_sndbuf(e.pcb);
        if (room > 0) {
            sc_send(&e, junk, room < sizeof junk ? room : sizeof junk);
        }
        assert_true(sim_run_for(t.w, 10000));
    }
    assert_false(e.errd);
    assert_int_equal(wisp_tcp_sndbuf(e.pcb), 0);   /* stalled */
    /* chargen to a client that reads nothing */
    sc_open(&t, t.cli, &g, WISP_PORT_CHARGEN);
    g.no_window = true;
    assert_true(sim_run_for(t.w, 6000000));
    assert_true(e.errd);
    assert_int_equal(e.err, WISP_ERR_RST);
    assert_true(g.errd);
    assert_int_equal(g.err, WISP_ERR_RST);
    assert_int_equal(echo_st(&t)->timeouts, 1);
    assert_int_equal(echo_st(&t)->aborted, 1);
    assert_int_equal(t.svc.tcp[WISP_TCP_SVC_CHARGEN].st.timeouts, 1);
    assert_int_equal(wisp_services_tcp_active(&t.svc), 0);
    sc_close(&e);
    sc_close(&g);
    st_free(&t);
}

/* The per-source cap: refused while the address's records are fresh, its
 * own idle one reclaimed afterwards. */
static void test_per_source_cap(void **state)
{
    struct st t;
    struct sc a[WISP_SERVICES_TCP_CONNS + 1], x;
    struct wisp_services_opts o;
    unsigned i, cap = 6;
    (void)state;
    memset(&o, 0, sizeof o);
    o.per_source = (uint16_t)cap;
    st_init(&t, 22, &o);
    for (i = 0; i < cap; i++) {
        sc_open(&t, t.a, &a[i], WISP_PORT_ECHO);
        assert_true(sim_run_for(t.w, 50000));
    }
    sc_open(&t, t.a, &a[cap], WISP_PORT_ECHO);
    assert_true(sim_run_for(t.w, 100000));
    assert_true(a[cap].errd);        /* one over the cap: reset */
    assert_int_equal(echo_st(&t)->capped, 1);
    assert_int_equal(echo_st(&t)->refused, 1);
    sc_close(&a[cap]);
    for (i = 0; i < cap; i++) {
        assert_false(a[i].errd);
    }
    /* another address is not affected */
    sc_open(&t, t.cli, &x, WISP_PORT_ECHO);
    assert_true(sim_run_for(t.w, 100000));
    assert_false(x.errd);
    sc_send(&x, "hi", 2);
    assert_true(sim_run_for(t.w, 100000));
    assert_int_equal(x.rx_len, 2);
    /* after reclaim_ms the next one takes the address's oldest idle record */
    assert_true(sim_run_for(t.w, 1000000));
    sc_open(&t, t.a, &a[cap], WISP_PORT_ECHO);
    assert_true(sim_run_for(t.w, 100000));
    assert_false(a[cap].errd);
    assert_true(a[0].errd);          /* the oldest of a's */
    assert_int_equal(a[0].err, WISP_ERR_RST);
    for (i = 1; i < cap; i++) {
        assert_false(a[i].errd);
    }
    assert_false(x.errd);
    assert_int_equal(echo_st(&t)->reclaimed, 1);
    assert_int_equal(echo_st(&t)->capped, 1);
    for (i = 0; i <= cap; i++) {
        sc_close(&a[i]);
    }
    sc_close(&x);
    st_free(&t);
}

/* Attackers reopen every connection the server resets, at once. */
static void attackers_refill(struct st *t, struct sc *att, unsigned n)
{
    unsigned i;
    for (i = 0; i < n; i++) {
        if (att[i].errd || att[i].fin) {
            sc_close(&att[i]);
            sc_open(t, i < n / 2 ? t->a : t->b, &att[i], WISP_PORT_ECHO);
        }
    }
}

static bool echoed(void *arg)
{
    struct sc *c = (struct sc *)arg;
    return c->errd || c->rx_len >= 8;
}

/* Idle attackers on every record; returns the legitimate echoes answered
 * out of 10. keeper: a working connection echoing every 300 ms. */
static unsigned idle_attack(const struct wisp_services_opts *o, uint64_t seed, bool *keeper_ok)
{
    struct st t;
    struct sc att[8], legit, keeper;
    unsigned i, ok = 0;
    uint64_t keeper_rx = 0;

    st_init(&t, seed, o);
    /* a working client from attacker b's address, opened first */
    sc_open(&t, t.b, &keeper, WISP_PORT_ECHO);
    for (i = 0; i < 8; i++) {
        sc_open(&t, i < 4 ? t.a : t.b, &att[i], WISP_PORT_ECHO);
    }
    assert_true(sim_run_for(t.w, 200000));
    /* b's fourth does not fit (cap 4 with the keeper, or no record left) */
    attackers_refill(&t, att, 8);
    assert_true(sim_run_for(t.w, 1200000));
    *keeper_ok = true;
    for (i = 0; i < 10; i++) {
        char msg[9];
        sc_send(&keeper, "keep", 4);
        keeper_rx += 4;
        snprintf(msg, sizeof msg, "legit-%02u", i);
        sc_open(&t, t.cli, &legit, WISP_PORT_ECHO);
        if (!legit.errd) {
            sc_send(&legit, msg, 8);
            (void)sim_run_until(t.w, echoed, &legit, 2000000);
        }
        if (!legit.errd && legit.rx_len == 8 && memcmp(legit.rx, msg, 8) == 0) {
            ok++;
        } else {
            printf("legit %u: errd %d rx_len %u active %u refused %u reclaimed %u capped %u\n", i, legit.errd,
                   (unsigned)legit.rx_len, wisp_services_tcp_active(&t.svc), echo_st(&t)->refused,
                   echo_st(&t)->reclaimed, echo_st(&t)->capped);
        }
        sc_close(&legit);
        assert_true(sim_run_for(t.w, 300000));
        attackers_refill(&t, att, 8);
        if (keeper.errd || keeper.rx_total != keeper_rx) {
            *keeper_ok = false;
        }
    }
    for (i = 0; i < 8; i++) {
        sc_close(&att[i]);
    }
    sc_close(&keeper);
    st_free(&t);
    return ok;
}

static void test_idle_attack(void **state)
{
    struct wisp_services_opts off;
    bool keeper_ok = false;
    unsigned ok;
    (void)state;
    ok = idle_attack(NULL, 23, &keeper_ok);
    printf("idle attack, defaults: %u/10 legitimate echoes, working connection %s\n", ok,
           keeper_ok ? "kept" : "LOST");
    assert_int_equal(ok, 10);
    assert_true(keeper_ok);

    memset(&off, 0, sizeof off);
    off.idle_ms = NEVER;
    off.reclaim_ms = NEVER;
    off.per_source = WISP_SERVICES_TCP_CONNS;   /* the default anyway */
    ok = idle_attack(&off, 24, &keeper_ok);
    printf("idle attack, defences off: %u/10 legitimate echoes\n", ok);
    assert_int_equal(ok, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_opts_defaults),
        cmocka_unit_test(test_idle_timeout),
        cmocka_unit_test(test_per_source_cap),
        cmocka_unit_test(test_idle_attack),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
