/**
 * @file test_tcp_tx_fairness.c
 * The transmit budget under attack (issue 11 item 1), on the simulated
 * wire: node x opens connections to node b's chargen (or echo) service,
 * reads a little and then keeps its window at zero (it takes what arrives
 * and never gives the window back: RFC 9293 §3.8.6, a peer may do so for
 * ever while it answers the probes). Each such connection holds the copies
 * of what b's service wrote (up to WISP_TCP_SND_BUF) for as long as x
 * likes. Then node a echoes 1 MB through b's echo service, byte-exact. Its
 * goodput must be at least half of the same echo in the same world without
 * the attackers (the fair share, the guarantee and the progress reserve of
 * the transmit budget, opt.h WISP_TCP_SND_MIN_BLOCKS).
 *
 * Persist give-up (opt.h WISP_TCP_PERSIST_TIMEOUT_MS): a zero-window peer
 * that answers the probes is kept (for twice the limit, nothing else short
 * of blocks); once it vanishes (its link goes down) it is aborted at the
 * limit after its last answer, and b's pools return to their baseline.
 * A zero-window peer that answers but holds blocks while another
 * connection's writes are refused for want of them is aborted after the
 * limit too.
 *
 * Built twice: with the host options (512 transmit blocks) and with the
 * default pool sizes of opt.h (8 transmit blocks, ports/none style:
 * test/sim/wisp_opts_small.h), where a single attacker used to suffice.
 */
#include "simtest.h"
#include "tcp_simlib.h"
#include "reclaim.h"

#define KB 1024u
#define MB (1024u * 1024u)
#define SEC 1000000ull
#define MAX_ATK 4u
/* The goodput ratio is required where the transmit budget can give the
 * attackers and the echo their guarantee each ((n + 1) * G <= T - C): on
 * the host always, on the default pools (8 blocks: C 2, G 3) with one
 * attacker. With three attackers there, two of them take the six blocks
 * for data; the echo must still complete, byte-exact (the persist give-up
 * frees the blocks of the peers that hold them while it is short), and its
 * goodput is printed. */
#define RATIO_REQUIRED(n) (((n) + 1u) * (unsigned)WISP_TCP_SND_MIN_BLOCKS + TCP_TX_RESERVE_T <= (unsigned)WISP_PBUF_TX_COUNT)
/* the control reserve of the transmit budget (src/core/tcp_priv.h) */
#define TCP_TX_RESERVE_T (WISP_PBUF_TX_COUNT / 16u > 2u ? WISP_PBUF_TX_COUNT / 16u : 2u)

/* ------------------------------------------------------- attackers */

enum atk_kind { ATK_CHARGEN, ATK_ECHO };

struct atk {
    struct wisp_tcp_pcb *pcb;
    enum atk_kind kind;
    uint32_t read_bytes;   /* bytes given back with wisp_tcp_recved ("reads a little") */
    uint64_t got, given;
    uint64_t written, to_write;
    bool connected, err_called;
    wisp_err_t err;
};

static uint8_t g_junk[2048];

static void atk_push(struct atk *k)
{
    while (k->pcb != NULL && k->written < k->to_write) {
        uint32_t n = (uint32_t)WISP_MIN((uint64_t)sizeof(g_junk), k->to_write - k->written);
        n = WISP_MIN(n, wisp_tcp_sndbuf(k->pcb));
        if (n == 0 || wisp_tcp_write(k->pcb, g_junk, n, WISP_TCP_WRITE_COPY) != WISP_OK) {
            break;
        }
        k->written += n;
    }
    if (k->pcb != NULL) {
        (void)wisp_tcp_output(k->pcb);
    }
}

static wisp_err_t atk_recv(void *arg, struct wisp_tcp_pcb *pcb, struct wisp_pbuf *p, wisp_err_t err)
{
    struct atk *k = arg;
    (void)err;
    if (p == NULL) {
        return WISP_OK;
    }
    k->got += p->tot_len;
    if (k->given < k->read_bytes) {
        uint32_t n = (uint32_t)WISP_MIN((uint64_t)p->tot_len, k->read_bytes - k->given);
        k->given += n;
        wisp_tcp_recved(pcb, n);
    }
    /* the rest is taken and never given back: the window closes */
    wisp_pbuf_free(p);
    return WISP_OK;
}

static wisp_err_t atk_sent(void *arg, struct wisp_tcp_pcb *pcb, uint32_t len)
{
    (void)pcb;
    (void)len;
    atk_push(arg);
    return WISP_OK;
}

static wisp_err_t atk_poll(void *arg, struct wisp_tcp_pcb *pcb)
{
    (void)pcb;
    atk_push(arg);
    return WISP_OK;
}

static wisp_err_t atk_connected(void *arg, struct wisp_tcp_pcb *pcb, wisp_err_t err)
{
    struct atk *k = arg;
    (void)pcb;
    k->connected = err == WISP_OK;
    atk_push(k);
    return WISP_OK;
}

static void atk_err(void *arg, wisp_err_t err)
{
    struct atk *k = arg;
    if (k == NULL) {
        return; /* aborted by the test */
    }
    k->pcb = NULL;
    k->err_called = true;
    k->err = err;
}

static void atk_open(struct atk *k, struct sim_node *x, struct sim_node *b, enum atk_kind kind)
{
    wisp_ipaddr_t dst = st_addr(b);
    memset(k, 0, sizeof(*k));
    k->kind = kind;
    k->read_bytes = 2000;
    k->to_write = kind == ATK_ECHO ? 4u * (uint64_t)WISP_TCP_SND_BUF + 4u * (uint64_t)WISP_TCP_WND : 0u;
    k->pcb = wisp_tcp_new(sim_stack(x));
    assert_non_null(k->pcb);
    wisp_tcp_arg(k->pcb, k);
    wisp_tcp_recv(k->pcb, atk_recv);
    wisp_tcp_sent(k->pcb, atk_sent);
    wisp_tcp_err(k->pcb, atk_err);
    wisp_tcp_poll(k->pcb, atk_poll, 2);
    assert_int_equal(wisp_tcp_connect(k->pcb, &dst, kind == ATK_ECHO ? WISP_PORT_ECHO : WISP_PORT_CHARGEN,
                                      atk_connected),
                     WISP_OK);
}

static void atk_close(struct atk *k)
{
    if (k->pcb != NULL) {
        wisp_tcp_arg(k->pcb, NULL);
        wisp_tcp_abort(k->pcb); /* RST: b frees its side */
        k->pcb = NULL;
    }
}

/* ------------------------------------------------------------ world */

struct fworld {
    struct sim_world *w;
    struct sim_node *a, *b, *x;
    struct wisp_services svc;
    struct atk atk[MAX_ATK];
    unsigned natk;
    unsigned base[3];
    uint64_t closed_us; /* the last attacker opened (its window closed right after) */
};

static void fw_open(struct fworld *f, uint64_t seed)
{
    struct sim_link_cfg l;
    memset(f, 0, sizeof(*f));
    f->w = sim_world_new(seed);
    assert_non_null(f->w);
    /* a LAN: 100 Mbit/s, 1 ms one way (a bandwidth-delay product of 25 KB,
     * 17 full-size segments) */
    sim_link_defaults(&l);
    l.bandwidth_bps = 100000000u;
    l.latency_us = 1000;
    sim_set_link(f->w, &l);
    f->a = st_node(f->w, "a", 1);
    f->b = st_node(f->w, "b", 2);
    f->x = st_node(f->w, "x", 3);
    sim_set_max_events(f->w, 100000000ull);
    {
        /* The TCP transmit budget and persist give-up are under test, not
         * the services' own defences (idle timeout, reclaim: apps/lib/
         * reclaim.h), which would end the attackers first: off here. */
        struct wisp_services_opts o;
        memset(&o, 0, sizeof o);
        o.idle_ms = WISP_RECLAIM_OFF;
        o.reclaim_ms = WISP_RECLAIM_OFF;
        assert_int_equal(wisp_services_start_opts(sim_stack(f->b), &f->svc, &o), WISP_OK);
    }
    assert_true(sim_run_for(f->w, 1000));
    tsl_baseline(f->w, f->base);
}

static void fw_close(struct fworld *f)
{
    unsigned i;
    for (i = 0; i < f->natk; i++) {
        atk_close(&f->atk[i]);
    }
    assert_true(tsl_settle(f->w, f->base, 300 * SEC, stderr));
    wisp_services_stop(&f->svc);
    ST_FREE(f->w);
}

static uint64_t ctr(struct sim_node *n, const char *name)
{
    unsigned j;
    for (j = 0; j < WISP_CTR_COUNT; j++) {
        if (strcmp(wisp_counter_name(j), name) == 0) {
            return sim_stack(n)->ctr[j];
        }
    }
    fail_msg("no counter %s", name);
    return 0;
}

/* Transmit blocks b's connections hold (their queued copies), printed. */
static unsigned fw_print_b(struct fworld *f, const char *when)
{
    struct wisp_stack *s = sim_stack(f->b);
    struct wisp_tcp_pcb *p;
    unsigned sum = 0;
    printf("  %s: b tx blocks used %u/%u (high %u), per connection:", when, (unsigned)s->pool[WISP_POOL_PBUF_TX].used,
           (unsigned)s->pool[WISP_POOL_PBUF_TX].count, (unsigned)s->pool[WISP_POOL_PBUF_TX].high);
    for (p = s->tcp.pcbs; p != NULL; p = p->next) {
        struct wisp_tcp_info in;
        wisp_tcp_get_info(p, &in);
        printf(" %u", (unsigned)in.snd_blocks);
        sum += in.snd_blocks;
    }
    printf("; tcp.write.txshare %llu, tcp.write.txreserve %llu\n", (unsigned long long)ctr(f->b, "tcp.write.txshare"),
           (unsigned long long)ctr(f->b, "tcp.write.txreserve"));
    return sum;
}

/* Open n attackers of the given kinds and let them fill b's buffers. */
static void fw_attack(struct fworld *f, unsigned n, const enum atk_kind *kinds)
{
    unsigned i;
    for (i = 0; i < n; i++) {
        atk_open(&f->atk[i], f->x, f->b, kinds[i]);
        f->natk++;
        f->closed_us = sim_now_us(f->w);
        assert_true(sim_run_for(f->w, 2 * SEC)); /* one after another */
    }
    assert_true(sim_run_for(f->w, 5 * SEC));
    for (i = 0; i < n; i++) {
        assert_true(f->atk[i].connected);
        assert_non_null(f->atk[i].pcb);
    }
}

/* The legitimate echo of bytes from a through b; returns its goodput in
 * Mbit/s (bytes both ways verified, virtual time from connect to the last
 * byte echoed and acknowledged). */
struct echo_wait {
    struct tsl_run *r;
    struct tsl_conn *c;
    uint64_t bytes;
};

static bool echo_done(void *arg)
{
    struct echo_wait *e = arg;
    const struct tsl_ep *a = &e->c->ep[0];
    if (tsl_all_done(e->r)) {
        return true; /* failed (watchdog) */
    }
    return a->rx_got == e->bytes && a->tx_acked == e->bytes;
}

static double fw_echo(struct fworld *f, uint64_t bytes, uint64_t max_s)
{
    struct tsl_run run;
    struct tsl_cfg cfg;
    struct tsl_conn *c;
    struct echo_wait ew;
    uint64_t t0, t1;
    double mbps;

    tsl_init(&run, f->w);
    memset(&cfg, 0, sizeof(cfg));
    cfg.a2b.bytes = bytes;
    cfg.a2b.wsize = 1460;
    cfg.seed = sim_seed(f->w) * 7u + 1u;
    cfg.close_mode = TSL_CLOSE_NONE;
    cfg.watchdog_ms = 120000;
    c = tsl_conn_new(&run, &cfg);
    assert_non_null(c);
    c->ep[0].rx_seed = c->ep[0].tx_seed; /* the echo of A's stream comes back */
    c->ep[0].rx_expect = bytes;
    c->ep[1].rx_expect = 0;
    t0 = sim_now_us(f->w);
    assert_int_equal(tsl_ep_open(c, 0, f->a, 0, sim_ip(f->b), WISP_PORT_ECHO), WISP_OK);
    ew.r = &run;
    ew.c = c;
    ew.bytes = bytes;
    if (!sim_run_until(f->w, echo_done, &ew, max_s * SEC) || run.nfailed > 0 || c->ep[0].rx_got != bytes) {
        tsl_run_print_failures(&run, stderr);
        tsl_conn_print(c, stderr);
        (void)fw_print_b(f, "echo failed");
        fail_msg("the echo of %llu bytes did not complete (t = %.3f s)", (unsigned long long)bytes,
                 (double)sim_now_us(f->w) / 1e6);
    }
    t1 = sim_now_us(f->w);
    mbps = (double)bytes * 8.0 / (double)(t1 - t0);
    assert_int_equal(tsl_ep_close(&c->ep[0]), WISP_OK);
    assert_true(sim_run_for(f->w, 2 * SEC));
    tsl_fini(&run);
    return mbps;
}

/* The echo's goodput with n attackers of the given kinds, in a world of
 * seed. */
static double echo_under_attack(uint64_t seed, unsigned n, const enum atk_kind *kinds, uint64_t bytes)
{
    struct fworld f;
    double mbps;
    unsigned held;
    fw_open(&f, seed);
    if (n > 0) {
        fw_attack(&f, n, kinds);
        held = fw_print_b(&f, "attackers in place");
        assert_true(held > 0);
    }
    mbps = fw_echo(&f, bytes, 600);
    if (n > 0) {
        unsigned i;
        (void)fw_print_b(&f, "after the echo");
        for (i = 0; i < n && RATIO_REQUIRED(n); i++) {
            /* the attackers were kept: they answer the probes (on the
             * small pools a slow echo may outlast the persist give-up of
             * peers holding blocks others are refused) */
            assert_non_null(f.atk[i].pcb);
        }
    }
    fw_close(&f);
    return mbps;
}

static void check_ratio(const char *what, unsigned n, const enum atk_kind *kinds, uint64_t seed)
{
    double clean = echo_under_attack(seed, 0, kinds, 1 * MB);
    double attacked = echo_under_attack(seed, n, kinds, 1 * MB);
    double ratio = attacked / clean;
    printf("  %s: 1 MB echo %.1f Mbit/s unattacked, %.1f Mbit/s with %u zero-window attacker(s): ratio %.2f "
           "(T %u blocks, G %u, P %u)\n",
           what, clean, attacked, n, ratio, (unsigned)WISP_PBUF_TX_COUNT, (unsigned)WISP_TCP_SND_MIN_BLOCKS,
           (unsigned)WISP_TCP_SND_RESERVE_BLOCKS);
    if (RATIO_REQUIRED(n)) {
        assert_true(ratio >= 0.5);
    }
}

/* ------------------------------------------------------------ tests */

/* Three chargen readers that read 2000 bytes and then hold their windows
 * at zero. */
static void three_chargen_attackers_echo_keeps_half_its_goodput(void **state)
{
    static const enum atk_kind k[3] = { ATK_CHARGEN, ATK_CHARGEN, ATK_CHARGEN };
    (void)state;
    check_ratio("3 x chargen", 3, k, 111);
}

/* Two chargen readers and an echo writer that never reads. */
static void mixed_attackers_echo_keeps_half_its_goodput(void **state)
{
    static const enum atk_kind k[3] = { ATK_CHARGEN, ATK_ECHO, ATK_CHARGEN };
    (void)state;
    check_ratio("2 x chargen + 1 x echo", 3, k, 112);
}

/* One attacker: what sufficed on the default pools. */
static void one_chargen_attacker_echo_keeps_half_its_goodput(void **state)
{
    static const enum atk_kind k[1] = { ATK_CHARGEN };
    (void)state;
    check_ratio("1 x chargen", 1, k, 113);
}

/* A zero-window peer that answers the probes is kept while nothing else
 * wants blocks (RFC 9293 §3.8.6.1, RFC 1122 §4.2.2.17); when it vanishes
 * it is aborted at WISP_TCP_PERSIST_TIMEOUT_MS after its last answer and
 * b's pools return to their baseline. */
static void vanished_zero_window_peer_is_given_up_and_blocks_return(void **state)
{
    static const enum atk_kind k[1] = { ATK_CHARGEN };
    struct fworld f;
    struct wisp_stack *b;
    uint64_t down_us, t;
    (void)state;
    fw_open(&f, 114);
    b = sim_stack(f.b);
    fw_attack(&f, 1, k);
    assert_true(fw_print_b(&f, "attacker in place") > 0);
    assert_true(sim_run_for(f.w, 2ull * WISP_TCP_PERSIST_TIMEOUT_MS * 1000u));
    assert_non_null(f.atk[0].pcb);
    assert_int_equal(ctr(f.b, "tcp.abort.persist"), 0);
    assert_true(ctr(f.b, "tcp.persist.probe") > 5);
    /* it vanishes (the answer to the probe in flight may be its last) */
    sim_node_set_link(f.x, false);
    down_us = sim_now_us(f.w);
    for (t = 0; t < WISP_TCP_PERSIST_TIMEOUT_MS + 2000u && ctr(f.b, "tcp.abort.persist") == 0; t += 100) {
        assert_true(sim_run_for(f.w, 100000));
    }
    printf("  vanished peer given up %.1f s after its link went down (limit %.1f s)\n",
           (double)(sim_now_us(f.w) - down_us) / 1e6, (double)WISP_TCP_PERSIST_TIMEOUT_MS / 1e3);
    assert_int_equal(ctr(f.b, "tcp.abort.persist"), 1);
    /* silent for the whole limit: not earlier than the limit minus the
     * longest probe interval before the link went down */
    assert_true(sim_now_us(f.w) - down_us + (uint64_t)WISP_TCP_RTO_MAX_MS * 1000u >=
                (uint64_t)WISP_TCP_PERSIST_TIMEOUT_MS * 1000u);
    assert_int_equal(f.svc.tcp[WISP_TCP_SVC_CHARGEN].st.active, 0);
    assert_int_equal(b->pool[WISP_POOL_TCP_PCB].used, 0);
    assert_int_equal(b->pool[WISP_POOL_TCP_SEG].used, 0);
    (void)fw_print_b(&f, "after the give-up");
    /* x comes back: its connection is gone on b (reset on its next
     * segment); the pools of both settle */
    sim_node_set_link(f.x, true);
    fw_close(&f);
}

/* Zero-window peers that answer the probes while another connection's
 * writes are refused for want of transmit blocks: given up on once their
 * windows have been closed for WISP_TCP_PERSIST_TIMEOUT_MS; the refused
 * writer then gets its blocks and completes. The shortage is made by the
 * test holding most of b's free transmit blocks (as another protocol
 * could). */
static void zero_window_peers_holding_short_blocks_are_given_up(void **state)
{
    static const enum atk_kind k[2] = { ATK_CHARGEN, ATK_CHARGEN };
    struct fworld f;
    struct wisp_stack *b;
    struct wisp_pbuf *hold[WISP_PBUF_TX_COUNT];
    unsigned nhold = 0, i;
    double mbps;
    (void)state;
    fw_open(&f, 115);
    b = sim_stack(f.b);
    fw_attack(&f, 2, k);
    (void)fw_print_b(&f, "attackers in place");
    /* leave only the control reserve and one more block free */
    while ((unsigned)(b->pool[WISP_POOL_PBUF_TX].count - b->pool[WISP_POOL_PBUF_TX].used) > TCP_TX_RESERVE_T + 1u) {
        hold[nhold] = wisp_pbuf_alloc(b, WISP_LAYER_RAW, WISP_PBUF_BLOCK_SIZE - 64u, WISP_PBUF_RAM);
        assert_non_null(hold[nhold]);
        nhold++;
    }
    /* the echo gets one block at a time at most; the attackers' windows
     * have been closed for ~10 s: they go WISP_TCP_PERSIST_TIMEOUT_MS after
     * that, then the echo runs on what they held */
    mbps = fw_echo(&f, 256 * KB, 2u * WISP_TCP_PERSIST_TIMEOUT_MS / 1000u + 60u);
    printf("  256 KB echo at %.3f Mbit/s with %u transmit blocks free; %llu zero-window peer(s) given up so far\n",
           mbps, (unsigned)TCP_TX_RESERVE_T + 1u, (unsigned long long)ctr(f.b, "tcp.abort.persist"));
    assert_true(ctr(f.b, "tcp.write.txreserve") > 0 || ctr(f.b, "tcp.write.txshare") > 0);
    for (i = 0; i < 2u * WISP_TCP_PERSIST_TIMEOUT_MS / 1000u && ctr(f.b, "tcp.abort.persist") < 2; i++) {
        assert_true(sim_run_for(f.w, SEC));
    }
    printf("  given up at %.1f s (windows closed at ~%.1f s, limit %.1f s)\n", (double)sim_now_us(f.w) / 1e6,
           (double)f.closed_us / 1e6, (double)WISP_TCP_PERSIST_TIMEOUT_MS / 1e3);
    assert_int_equal(ctr(f.b, "tcp.abort.persist"), 2);
    assert_true(sim_now_us(f.w) >= f.closed_us + (uint64_t)WISP_TCP_PERSIST_TIMEOUT_MS * 1000u);
    assert_true(b->pool[WISP_POOL_PBUF_TX].used <= nhold + 2u);
    for (i = 0; i < 2; i++) {
        assert_true(f.atk[i].pcb == NULL && f.atk[i].err_called); /* reset by b */
    }
    for (i = 0; i < nhold; i++) {
        wisp_pbuf_free(hold[i]);
    }
    fw_close(&f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(three_chargen_attackers_echo_keeps_half_its_goodput),
        cmocka_unit_test(mixed_attackers_echo_keeps_half_its_goodput),
        cmocka_unit_test(one_chargen_attacker_echo_keeps_half_its_goodput),
        cmocka_unit_test(vanished_zero_window_peer_is_given_up_and_blocks_return),
        cmocka_unit_test(zero_window_peers_holding_short_blocks_are_given_up),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
