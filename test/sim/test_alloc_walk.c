/**
 * @file test_alloc_walk.c
 * Allocation-failure walk (wisp/debug.h, WISP_ALLOC_FAIL_INJECT, on in the
 * host build through WISP_DEBUG): an exchange is run once to count its
 * allocations, then again from scratch for N = 1, 2, ... with the Nth
 * allocation of one stack failing (exactly like an empty pool), until a
 * run completes without reaching the Nth allocation. Every stack of every
 * exchange is walked in turn.
 *
 * Exchanges:
 *  - TCP: connect, handshake, 20 KB each way, both close, TIME-WAIT expiry
 *    (test/sim/tcp_simlib.c; every byte checked).
 *  - DHCP: DISCOVER / OFFER / REQUEST / ACK (with the ARP check of the
 *    offered address) against a minimal server on a second stack, then a
 *    RELEASE.
 *  - An 8000-byte UDP datagram fragmented by one stack, reassembled by the
 *    other and echoed back the same way (apps/lib/services.c echo).
 *  - An ICMP echo of 8000 bytes (fragmented both ways).
 *  - Also: a DNS query against a server node, and 12000 bytes through the
 *    TCP echo service of apps/lib/services.c.
 *
 * For every N: no crash (ASan/UBSan in the sanitizer pass), no hang (the
 * simulator's event cap and bounded virtual time), the exchange either
 * completes byte-exact or fails with an error code handed to the
 * application (TCP: a refused call or the error callback; a lost datagram
 * or DHCP message is recovered by retransmission within the bound), and
 * once everything is closed every pool of every stack is back at its
 * baseline, with nothing left after the stacks are torn down.
 *
 * Most walks are also run with runs of 4 (TCP: 16) consecutive failures
 * (a pool that stays empty for a while); TCP also with zero-copy writes
 * of random sizes, over a lossy, reordering wire, over loopback, and with
 * a receiver that holds its window closed or refuses data for 5 s. Built
 * on the small-pool simulator library (test/CMakeLists.txt: the opt.h
 * pool sizes of a Cortex-M class device).
 *
 * Diagnostics (environment): WALK_ONLY=i runs walk i of the table alone,
 * WALK_VERBOSE prints each TCP run's end state, WALK_PCAP=file with
 * WALK_PCAP_N=n captures the TCP run with N = n.
 */
#include "simtest.h"
#include "tcp_simlib.h"
#include "wisp/debug.h"
#include "wisp/dhcp.h"
#include "wisp/dns.h"

#define SEC 1000000ull   /* us */
#define WALK_MAX_N 5000u /* more allocations than any exchange here takes */

/* Consecutive allocations failed from the Nth on (1: the Nth alone; more:
 * a pool that stays empty for a while). */
static uint32_t walk_len = 1;

/* One walk: how it went over every N. */
struct walk {
    const char *name;
    uint32_t allocs[2];   /* allocations of each stack in the run without failure */
    unsigned runs;        /* runs with a failure injected and reached */
    unsigned completed;   /* ... where the exchange still completed */
    unsigned errors;      /* ... where it failed with an error to the application */
};

/* Runs of the current walk where the TCP server found no PCB for the
 * final ACK of a handshake (tcp.drop.pcbmem). */
static unsigned walk_pcbmem;

static void walk_print(const struct walk *wk, unsigned victim)
{
    print_message("%s, failing %u allocation(s) of stack %u from the Nth: %u values of N walked (%u completed, "
                  "%u failed with an error to the application); the exchange takes %u + %u allocations\n",
                  wk->name, (unsigned)walk_len, victim, wk->runs, wk->completed, wk->errors,
                  (unsigned)wk->allocs[0], (unsigned)wk->allocs[1]);
    if (walk_pcbmem > 0) {
        print_message("  (in %u of those runs the final ACK of the handshake found no PCB and was dropped)\n",
                      walk_pcbmem);
    }
}

/* What the application was told when the last run failed. */
static char walk_err[256];

/* A PCB allocation failing at the final ACK of the handshake drops that
 * ACK and keeps the embryo (src/core/tcp_synq.c): the client's next
 * segment completes the handshake once memory is back. With short bursts
 * of failures such a run must complete, never end in a reset. */
static void pcbmem_check(const struct wisp_stack *server, bool done, const char *what, uint32_t n)
{
    if (server->ctr[WISP_CTR_TCP_DROP_PCBMEM] == 0) {
        return;
    }
    walk_pcbmem++;
    if (walk_len <= 4u && !done) {
        fail_msg("%s N=%u: the final ACK found no PCB and the exchange did not complete: %s", what, (unsigned)n,
                 walk_err);
    }
}

/* Pool use of node i over its baseline, printed (diagnostics). */
static void pools_print(struct sim_world *w, const char *what, uint32_t n)
{
    unsigned i, k;
    for (i = 0; i < sim_node_count(w); i++) {
        const struct wisp_stack *s = sim_stack(sim_node_at(w, i));
        fprintf(stderr, "%s N=%u node %u:", what, (unsigned)n, i);
        for (k = 0; k < WISP_POOL_COUNT; k++) {
            if (s->pool[k].used != 0) {
                fprintf(stderr, " %s=%u", s->pool[k].name, (unsigned)s->pool[k].used);
            }
        }
        fprintf(stderr, "\n");
    }
}

/* The common end of a run: pools back at baseline within max_us (after
 * the application closed everything), no simulator error, nothing left
 * after the stacks are torn down. */
static void run_end(struct sim_world *w, const unsigned *base, uint64_t max_us, const char *what, uint32_t n)
{
    if (!tsl_settle(w, base, max_us, stderr)) {
        pools_print(w, what, n);
        fail_msg("%s N=%u: pools not back at baseline", what, (unsigned)n);
    }
    if (sim_error(w) != NULL) {
        fail_msg("%s N=%u: simulator: %s", what, (unsigned)n, sim_error(w));
    }
}

/* TIME-WAIT records hold no pool element: let them expire (2 MSL), then
 * no connection may be left and the pools must still be at baseline. */
static void tcp_time_wait_end(struct sim_world *w, const unsigned *base, const char *what, uint32_t n)
{
    unsigned i;
    assert_true(sim_run_for(w, 2ull * WISP_TCP_MSL_MS * 1000u + SEC));
    for (i = 0; i < sim_node_count(w); i++) {
        if (wisp_stack_tcp_next(sim_stack(sim_node_at(w, i)), NULL) != NULL) {
            fail_msg("%s N=%u: node %u still has a connection after TIME-WAIT", what, (unsigned)n, i);
        }
    }
    run_end(w, base, 0, what, n);
}

/* Walk N = 1, 2, ... over stack victim with run(victim, n): run returns
 * whether the exchange completed (false: failed with an error to the
 * application) and whether the armed failure was reached. */
typedef bool (*walk_run_fn)(unsigned victim, uint32_t n, bool *reached, uint32_t allocs[2]);

static void walk_do(struct walk *wk, walk_run_fn run, unsigned victim)
{
    uint32_t n;
    bool reached = false;
    wk->runs = wk->completed = wk->errors = 0;
    walk_pcbmem = 0;
    assert_true(run(victim, 0, &reached, wk->allocs)); /* without failure: must complete */
    for (n = 1; n <= WALK_MAX_N; n++) {
        uint32_t a[2];
        bool done = run(victim, n, &reached, a);
        if (!reached) {
            /* done without getting to the Nth allocation: walked all */
            assert_true(done);
            break;
        }
        wk->runs++;
        if (done) {
            wk->completed++;
        } else {
            wk->errors++;
            print_message("  %s, stack %u, N=%u (x%u): %s\n", wk->name, victim, (unsigned)n, (unsigned)walk_len,
                          walk_err);
        }
    }
    assert_true(n <= WALK_MAX_N);
    assert_true(wk->runs > 0);
    walk_print(wk, victim);
}

/* ---------------------------------------------------------------- TCP */

#define TCP_BYTES 20000u
#define TCP_BYTES_LOSSY 30000u /* enough segments for losses and reordering */
#define TCP_PORT 5001u
#define TCP_WATCHDOG_MS 900000u /* > the whole backoff of WISP_TCP_MAXRTX retransmissions */
#define TCP_MAX_US (3600ull * SEC)

/* TCP variants */
enum tcp_mode {
    TM_PLAIN = 0,
    TM_ZERO_COPY, /* zero-copy writes of random sizes, no Nagle */
    TM_LOSSY,     /* the wire loses, reorders, duplicates */
    TM_LOOPBACK,  /* one stack connects to its own address (loopback path) */
    TM_HOLD,      /* B's application takes data without giving the window back for a while */
    TM_REFUSE,    /* B's receive callback refuses data for a while */
    TM_PMTU,      /* a 1000-byte hop appears mid-transfer (ICMP "fragmentation needed") */
    TM_PMTU_BH    /* ... as a black hole (no ICMP) */
};
#define TCP_STALL_US (5ull * SEC) /* how long TM_HOLD / TM_REFUSE last */
static enum tcp_mode tcp_mode;

/* A has had some of its data acknowledged (TM_PMTU*: queued segments then
 * wait to be cut again for the smaller MSS). */
static bool tcp_a_moving(void *arg)
{
    struct tsl_conn *c = arg;
    return c->ep[0].tx_acked >= 2920u || c->done || c->ep[0].err_called || c->ep[1].err_called || c->failed;
}

static bool tcp_over(void *arg)
{
    struct tsl_run *r = arg;
    unsigned i;
    if (tsl_all_done(r)) {
        return true;
    }
    for (i = 0; i < r->nconns; i++) {
        if (r->conns[i]->ep[0].err_called || r->conns[i]->ep[1].err_called) {
            return true;
        }
    }
    return false;
}

static bool tcp_run(unsigned victim, uint32_t n, bool *reached, uint32_t allocs[2])
{
    struct sim_world *w = sim_world_new(1301);
    struct sim_node *node[2];
    struct tsl_run r;
    struct tsl_conn *c;
    struct tsl_cfg cfg;
    unsigned base[2], k;
    uint32_t a0[2];
    wisp_err_t err;
    bool done = false;

    assert_non_null(w);
    node[0] = st_node(w, "a", 1);
    node[1] = st_node(w, "b", 2);
    sim_set_max_events(w, 5000000ull);
    if (tcp_mode == TM_LOSSY) {
        struct sim_link_cfg link;
        sim_get_link(w, &link);
        link.loss = 0.05;
        link.reorder = 0.10;
        link.dup = 0.02;
        sim_set_link(w, &link);
    }
    tsl_init(&r, w);
    r.quiet = true;
    assert_true(sim_run_for(w, 1000)); /* gratuitous ARPs out */
    tsl_baseline(w, base);
    for (k = 0; k < 2; k++) {
        a0[k] = wisp_debug_alloc_count(sim_stack(node[k]));
    }
    assert_int_equal(wisp_debug_fail_allocs(sim_stack(node[victim]), n, walk_len), WISP_OK);

    if (getenv("WALK_PCAP") != NULL && n == (uint32_t)atoi(getenv("WALK_PCAP_N"))) {
        (void)sim_pcap_open(w, getenv("WALK_PCAP"));
    }
    memset(&cfg, 0, sizeof(cfg));
    cfg.a2b.bytes = tcp_mode == TM_LOSSY ? TCP_BYTES_LOSSY : TCP_BYTES;
    cfg.b2a.bytes = tcp_mode == TM_LOSSY ? TCP_BYTES_LOSSY : TCP_BYTES;
    cfg.seed = 13;
    if (tcp_mode == TM_ZERO_COPY) {
        /* zero-copy writes (reference pbufs) of random sizes, no Nagle */
        cfg.a2b.nocopy = cfg.b2a.nocopy = true;
        cfg.a2b.wrandom = cfg.b2a.wrandom = true;
        cfg.a2b.wsize = cfg.b2a.wsize = 3000;
        cfg.nodelay = true;
    }
    /* a run of failures can hold a retransmission back through several
     * backoffs (RTO up to 60 s): no progress for this long is a stall */
    cfg.watchdog_ms = TCP_WATCHDOG_MS;
    err = tsl_listen(&r, node[1], TCP_PORT, 8);
    if (err != WISP_OK) {
        if (err != WISP_ERR_MEM) {
            fail_msg("tcp N=%u: listen: %s", (unsigned)n, wisp_err_str(err));
        }
        snprintf(walk_err, sizeof(walk_err), "listen refused: %s", wisp_err_str(err));
        goto end;
    }
    c = tsl_connect(&r, tcp_mode == TM_LOOPBACK ? node[1] : node[0], &cfg);
    if (c == NULL) {
        /* wisp_tcp_new or wisp_tcp_connect refused: an error code */
        assert_int_equal(r.nconns, 1);
        if (strstr(r.conns[0]->why, "no PCB") == NULL && strstr(r.conns[0]->why, "ERR_MEM") == NULL &&
            strstr(r.conns[0]->why, "out of memory") == NULL) {
            fail_msg("tcp N=%u: connect: %s", (unsigned)n, r.conns[0]->why);
        }
        snprintf(walk_err, sizeof(walk_err), "connect refused: %s", r.conns[0]->why);
        goto end;
    }
    c->ep[0].expect_err = true;
    c->ep[1].expect_err = true;
    if (tcp_mode == TM_HOLD || tcp_mode == TM_REFUSE) {
        /* set before the accept: B does not consume from the start */
        if (tcp_mode == TM_HOLD) {
            c->ep[1].hold = true;
        } else {
            c->ep[1].refuse = true;
        }
        if (!sim_run_until(w, tcp_over, &r, TCP_STALL_US)) {
            if (tcp_mode == TM_HOLD) {
                tsl_ep_release(&c->ep[1]);
            } else {
                c->ep[1].refuse = false;
                if (c->ep[1].pcb != NULL) {
                    wisp_tcp_recv_retry(c->ep[1].pcb);
                }
            }
        }
    }
    if ((tcp_mode == TM_PMTU || tcp_mode == TM_PMTU_BH) && sim_run_until(w, tcp_a_moving, c, 10ull * SEC) &&
        !c->done) {
        struct sim_link_cfg link;
        sim_get_link(w, &link);
        link.path_mtu = 1000;
        link.path_mtu_icmp = tcp_mode == TM_PMTU;
        link.path_mtu_router = wisp_ip4(198, 18, 0, 254);
        sim_set_link(w, &link);
    }
    if (!sim_run_until(w, tcp_over, &r, TCP_MAX_US)) {
        tsl_conn_print(c, stderr);
        fail_msg("tcp N=%u: neither done nor failed after %llu s", (unsigned)n,
                 (unsigned long long)(TCP_MAX_US / SEC));
    }
    if (c->failed) {
        /* stalled, data corrupted, callbacks out of order: never right */
        tsl_conn_print(c, stderr);
        fail_msg("tcp N=%u (stack %u): %s", (unsigned)n, victim, c->why);
    }
    done = c->done;
    if (getenv("WALK_VERBOSE") != NULL) {
        fprintf(stderr, "tcp N=%u at %llu us:\n", (unsigned)n, (unsigned long long)sim_now_us(w));
        tsl_conn_print(c, stderr);
    }
    if (!done) {
        /* An error reached the application on one side: the other side's
         * application closes its end (as it would on a broken exchange). */
        snprintf(walk_err, sizeof(walk_err), "error callback: A %s, B %s",
                 c->ep[0].err_called ? wisp_err_str(c->ep[0].err) : "-",
                 c->ep[1].err_called ? wisp_err_str(c->ep[1].err) : "-");
        for (k = 0; k < 2; k++) {
            struct tsl_ep *ep = &c->ep[k];
            if (ep->pcb != NULL && !ep->closed) {
                if (tsl_ep_close(ep) != WISP_OK && ep->pcb != NULL) {
                    tsl_ep_abort(ep);
                }
            }
        }
    }
end:
    tsl_unlisten(&r);
    if (n == 0 && getenv("WALK_VERBOSE") != NULL) {
        const struct sim_counters *wc = sim_counters(w);
        print_message("  wire: %llu frames, %llu lost, %llu reordered, %llu duplicated, %llu over the path MTU; "
                      "out of order: A %u B %u; cut again for the path MTU: A %u B %u\n",
                      (unsigned long long)wc->sent, (unsigned long long)wc->lost, (unsigned long long)wc->reordered,
                      (unsigned long long)wc->duplicated, (unsigned long long)wc->pmtu_dropped,
                      (unsigned)sim_stack(node[0])->ctr[WISP_CTR_TCP_OOSEQ],
                      (unsigned)sim_stack(node[1])->ctr[WISP_CTR_TCP_OOSEQ],
                      (unsigned)sim_stack(node[0])->ctr[WISP_CTR_TCP_PMTU_RESEG],
                      (unsigned)sim_stack(node[1])->ctr[WISP_CTR_TCP_PMTU_RESEG]);
    }
    /* a peer that stayed silent (its receive allocations failed) is
     * retried WISP_TCP_MAXRTX times before the connection is given up */
    run_end(w, base, 2ull * WISP_TCP_MSL_MS * 1000u + (uint64_t)TCP_WATCHDOG_MS * 1000u, "tcp", n);
    tcp_time_wait_end(w, base, "tcp", n);
    for (k = 0; k < 2; k++) {
        allocs[k] = wisp_debug_alloc_count(sim_stack(node[k])) - a0[k];
    }
    *reached = wisp_debug_alloc_injected(sim_stack(node[victim])) > 0;
    pcbmem_check(sim_stack(node[1]), done, "tcp", n);
    if (n == 0 && getenv("WALK_VERBOSE") != NULL) {
        print_message("  %llu simulator events, %llu us virtual\n", (unsigned long long)sim_counters(w)->events,
                      (unsigned long long)sim_now_us(w));
    }
    tsl_fini(&r);
    ST_FREE(w);
    return done;
}

/* ---------------------------------------------- TCP echo (services) */

#define ECHO_BYTES 12000u
#define ECHO_MAX_US (3600ull * SEC)

/* A client of the TCP echo service (apps/lib/services.c): writes
 * ECHO_BYTES (retrying refused writes from the sent and poll callbacks),
 * checks every byte that comes back, closes once all are back. */
struct ecli {
    struct wisp_tcp_pcb *pcb;
    uint32_t written, rx;
    bool connected, closed, close_pending, fin, err_called, bad;
    wisp_err_t err;
};

static uint8_t echo_byte(uint32_t i)
{
    return (uint8_t)((i * 131u) ^ (i >> 7));
}

static void ecli_push(struct ecli *e)
{
    uint8_t buf[1460];
    while (e->pcb != NULL && !e->closed && e->written < ECHO_BYTES) {
        uint32_t len = ECHO_BYTES - e->written, i;
        wisp_err_t err;
        if (len > sizeof(buf)) {
            len = sizeof(buf);
        }
        for (i = 0; i < len; i++) {
            buf[i] = echo_byte(e->written + i);
        }
        err = wisp_tcp_write(e->pcb, buf, len, WISP_TCP_WRITE_COPY);
        if (err != WISP_OK) {
            break; /* WISP_ERR_MEM: again from the sent / poll callback */
        }
        e->written += len;
    }
    if (e->pcb != NULL && !e->closed) {
        (void)wisp_tcp_output(e->pcb);
    }
    if (e->pcb != NULL && !e->closed && e->rx == ECHO_BYTES) {
        wisp_err_t err = wisp_tcp_close(e->pcb);
        if (err == WISP_OK) {
            e->closed = true;
            e->pcb = NULL;
        } else {
            e->close_pending = true; /* WISP_ERR_MEM: again from poll */
        }
    }
}

static wisp_err_t ecli_recv(void *arg, struct wisp_tcp_pcb *pcb, struct wisp_pbuf *p, wisp_err_t err)
{
    struct ecli *e = arg;
    const struct wisp_pbuf *q;
    uint32_t len = 0;
    (void)err;
    if (p == NULL) {
        e->fin = true;
        return WISP_OK;
    }
    for (q = p; q != NULL; q = q->next) {
        uint16_t i;
        for (i = 0; i < q->len; i++) {
            if (((const uint8_t *)q->payload)[i] != echo_byte(e->rx + len + i) || e->rx + len + i >= ECHO_BYTES) {
                e->bad = true;
            }
        }
        len += q->len;
    }
    e->rx += len;
    wisp_tcp_recved(pcb, len);
    wisp_pbuf_free(p);
    ecli_push(e);
    return WISP_OK;
}

static wisp_err_t ecli_sent(void *arg, struct wisp_tcp_pcb *pcb, uint32_t len)
{
    (void)pcb;
    (void)len;
    ecli_push(arg);
    return WISP_OK;
}

static wisp_err_t ecli_poll(void *arg, struct wisp_tcp_pcb *pcb)
{
    (void)pcb;
    ecli_push(arg);
    return WISP_OK;
}

static void ecli_err(void *arg, wisp_err_t err)
{
    struct ecli *e = arg;
    e->err_called = true;
    e->err = err;
    e->pcb = NULL;
}

static wisp_err_t ecli_connected(void *arg, struct wisp_tcp_pcb *pcb, wisp_err_t err)
{
    struct ecli *e = arg;
    (void)pcb;
    e->connected = err == WISP_OK;
    ecli_push(e);
    return WISP_OK;
}

static bool ecli_over(void *arg)
{
    struct ecli *e = arg;
    return e->closed || e->err_called || e->bad;
}

static bool echo_run(unsigned victim, uint32_t n, bool *reached, uint32_t allocs[2])
{
    struct sim_world *w = sim_world_new(1306);
    struct sim_node *node[2];
    struct wisp_services svc;
    struct ecli e;
    wisp_ipaddr_t dst;
    unsigned base[2], k;
    uint32_t a0[2];
    wisp_err_t err;
    bool done = false;

    assert_non_null(w);
    memset(&e, 0, sizeof(e));
    node[0] = st_node(w, "client", 1);
    node[1] = st_node(w, "server", 2);
    sim_set_max_events(w, 5000000ull);
    memset(&svc, 0, sizeof(svc));
    svc.stack = sim_stack(node[1]);
    assert_int_equal(wisp_services_tcp_start(&svc), WISP_OK);
    assert_true(sim_run_for(w, 1000));
    tsl_baseline(w, base);
    for (k = 0; k < 2; k++) {
        a0[k] = wisp_debug_alloc_count(sim_stack(node[k]));
    }
    assert_int_equal(wisp_debug_fail_allocs(sim_stack(node[victim]), n, walk_len), WISP_OK);

    e.pcb = wisp_tcp_new(sim_stack(node[0]));
    if (e.pcb == NULL) {
        snprintf(walk_err, sizeof(walk_err), "wisp_tcp_new: no PCB");
        goto end;
    }
    wisp_tcp_arg(e.pcb, &e);
    wisp_tcp_recv(e.pcb, ecli_recv);
    wisp_tcp_sent(e.pcb, ecli_sent);
    wisp_tcp_err(e.pcb, ecli_err);
    wisp_tcp_poll(e.pcb, ecli_poll, 1);
    dst = st_addr(node[1]);
    err = wisp_tcp_connect(e.pcb, &dst, WISP_PORT_ECHO, ecli_connected);
    if (err != WISP_OK) {
        if (err != WISP_ERR_MEM) {
            fail_msg("echo N=%u: connect: %s", (unsigned)n, wisp_err_str(err));
        }
        snprintf(walk_err, sizeof(walk_err), "wisp_tcp_connect refused: %s", wisp_err_str(err));
        wisp_tcp_abort(e.pcb);
        goto end;
    }
    if (!sim_run_until(w, ecli_over, &e, ECHO_MAX_US)) {
        fail_msg("echo N=%u (stack %u): stuck: %u of %u bytes written, %u back, pcb %s", (unsigned)n, victim,
                 (unsigned)e.written, ECHO_BYTES, (unsigned)e.rx,
                 e.pcb != NULL ? wisp_tcp_state_str(wisp_tcp_state(e.pcb)) : "-");
    }
    if (e.bad) {
        fail_msg("echo N=%u (stack %u): wrong data echoed (at %u)", (unsigned)n, victim, (unsigned)e.rx);
    }
    if (e.closed) {
        done = true;
    } else {
        snprintf(walk_err, sizeof(walk_err), "error callback: %s (%u of %u bytes back)", wisp_err_str(e.err),
                 (unsigned)e.rx, ECHO_BYTES);
    }
end:
    run_end(w, base, 2ull * WISP_TCP_MSL_MS * 1000u + (uint64_t)TCP_WATCHDOG_MS * 1000u, "echo", n);
    tcp_time_wait_end(w, base, "echo", n);
    assert_int_equal(wisp_services_tcp_active(&svc), 0);
    for (k = 0; k < 2; k++) {
        allocs[k] = wisp_debug_alloc_count(sim_stack(node[k])) - a0[k];
    }
    *reached = wisp_debug_alloc_injected(sim_stack(node[victim])) > 0;
    pcbmem_check(sim_stack(node[1]), done, "echo", n);
    wisp_services_tcp_stop(&svc);
    ST_FREE(w);
    return done;
}

/* --------------------------------------------------------------- DHCP */

#define DHCP_ADDR wisp_ip4(198, 18, 0, 100)
#define DHCP_MAX_US (120ull * SEC)

struct dsrv {
    struct sim_node *n;
    struct wisp_udp_pcb *pcb;
};

/* The value of option code in message m (n bytes), its length or -1. */
static int dsrv_opt(const uint8_t *m, uint16_t n, uint8_t code, const uint8_t **v)
{
    uint16_t i = 240;
    while (i + 1u < n && m[i] != 255) {
        if (m[i] == 0) {
            i++;
            continue;
        }
        if (m[i] == code) {
            *v = m + i + 2;
            return m[i + 1];
        }
        i = (uint16_t)(i + 2u + m[i + 1]);
    }
    return -1;
}

/* OFFER (2) or ACK (5) of DHCP_ADDR, broadcast (RFC 2131 §4.1). */
static void dsrv_send(struct dsrv *v, uint8_t type, uint32_t xid, const uint8_t *chaddr)
{
    static const uint8_t magic[4] = { 99, 130, 83, 99 };
    uint8_t m[300];
    uint16_t n = 240;
    wisp_ipaddr_t to = wisp_ipaddr4(WISP_IP4_BCAST);
    struct wisp_pbuf *p;
    memset(m, 0, sizeof(m));
    m[0] = 2;
    m[1] = 1;
    m[2] = 6;
    wisp_wr32(m + 4, xid);
    wisp_ip4_wr(m + 16, DHCP_ADDR);
    memcpy(m + 28, chaddr, 16);
    memcpy(m + 236, magic, 4);
    m[n++] = 53;
    m[n++] = 1;
    m[n++] = type;
    m[n++] = 54;
    m[n++] = 4;
    wisp_ip4_wr(m + n, sim_ip(v->n));
    n += 4;
    m[n++] = 1;
    m[n++] = 4;
    wisp_ip4_wr(m + n, wisp_ip4_prefix_mask(24));
    n += 4;
    m[n++] = 51;
    m[n++] = 4;
    wisp_wr32(m + n, 3600);
    n += 4;
    m[n++] = 255;
    /* allocations here are the server's (victim 0 walks them too) */
    p = wisp_pbuf_alloc(sim_stack(v->n), WISP_LAYER_TRANSPORT, sizeof(m), WISP_PBUF_RAM);
    if (p == NULL) {
        return; /* lost answer: the client retransmits */
    }
    (void)wisp_pbuf_copy_in(p, m, sizeof(m), 0);
    (void)wisp_udp_sendto(v->pcb, p, &to, 68);
    wisp_pbuf_free(p);
}

static void dsrv_recv(void *arg, struct wisp_udp_pcb *pcb, struct wisp_pbuf *p, const wisp_ipaddr_t *src,
                      uint16_t port, const struct wisp_ip_info *ip)
{
    struct dsrv *v = arg;
    uint8_t m[600];
    uint16_t n = wisp_pbuf_copy_out(p, m, sizeof(m), 0);
    const uint8_t *o;
    (void)pcb;
    (void)src;
    (void)port;
    (void)ip;
    wisp_pbuf_free(p);
    if (n < 240 || m[0] != 1 || dsrv_opt(m, n, 53, &o) != 1) {
        return;
    }
    if (o[0] == 1) {
        dsrv_send(v, 2, wisp_rd32(m + 4), m + 28); /* DISCOVER -> OFFER */
    } else if (o[0] == 3) {
        dsrv_send(v, 5, wisp_rd32(m + 4), m + 28); /* REQUEST -> ACK */
    }
}

static bool dhcp_bound(void *arg)
{
    return wisp_dhcp_state((struct wisp_dhcp *)arg) == WISP_DHCP_BOUND;
}

static bool dhcp_run(unsigned victim, uint32_t n, bool *reached, uint32_t allocs[2])
{
    struct sim_world *w = sim_world_new(1302);
    struct sim_node *node[2];
    struct dsrv v;
    struct wisp_dhcp d;
    struct wisp_dhcp_cfg cfg;
    unsigned base[2], k;
    uint32_t a0[2];
    wisp_err_t err;
    bool done = false;

    assert_non_null(w);
    memset(&d, 0, sizeof(d));
    node[0] = st_node(w, "srv", 1);
    node[1] = st_node(w, "cli", 2);
    sim_set_max_events(w, 5000000ull);
    v.n = node[0];
    v.pcb = wisp_udp_new(sim_stack(v.n));
    assert_non_null(v.pcb);
    assert_int_equal(wisp_udp_bind(v.pcb, NULL, 67), WISP_OK);
    wisp_udp_recv(v.pcb, dsrv_recv, &v);
    assert_true(sim_run_for(w, 10000)); /* start-up announcements */
    tsl_baseline(w, base);
    for (k = 0; k < 2; k++) {
        a0[k] = wisp_debug_alloc_count(sim_stack(node[k]));
    }
    assert_int_equal(wisp_debug_fail_allocs(sim_stack(node[victim]), n, walk_len), WISP_OK);

    wisp_dhcp_cfg_defaults(&cfg);
    cfg.init_delay_ms = 0;
    err = wisp_dhcp_start(&d, sim_netif(node[1]), &cfg, NULL, NULL);
    if (err == WISP_OK) {
        if (!sim_run_until(w, dhcp_bound, &d, DHCP_MAX_US)) {
            fail_msg("dhcp N=%u (stack %u): not bound after %llu s (state %s)", (unsigned)n, victim,
                     (unsigned long long)(DHCP_MAX_US / SEC), wisp_dhcp_state_name(wisp_dhcp_state(&d)));
        }
        assert_true(wisp_netif_ip4_addr(sim_netif(node[1])) == DHCP_ADDR);
        done = true;
        wisp_dhcp_stop(&d, true); /* RELEASE */
    } else if (err != WISP_ERR_MEM) {
        fail_msg("dhcp N=%u: start: %s", (unsigned)n, wisp_err_str(err));
    } else {
        snprintf(walk_err, sizeof(walk_err), "wisp_dhcp_start refused: %s", wisp_err_str(err));
    }
    run_end(w, base, 60ull * SEC, "dhcp", n);
    for (k = 0; k < 2; k++) {
        allocs[k] = wisp_debug_alloc_count(sim_stack(node[k])) - a0[k];
    }
    *reached = wisp_debug_alloc_injected(sim_stack(node[victim])) > 0;
    wisp_udp_remove(v.pcb);
    ST_FREE(w);
    return done;
}

/* ---------------------------------------------------------------- DNS */

#define DNS_ADDR wisp_ip4(198, 18, 7, 7)
#define DNS_MAX_US (60ull * SEC)

/* A server answering every A query with DNS_ADDR (port 53 of node 0). */
static void dnsrv_recv(void *arg, struct wisp_udp_pcb *pcb, struct wisp_pbuf *p, const wisp_ipaddr_t *src,
                       uint16_t port, const struct wisp_ip_info *ip)
{
    uint8_t q[512], out[600];
    uint16_t n = wisp_pbuf_copy_out(p, q, sizeof(q), 0);
    size_t qend = 12, o;
    struct wisp_pbuf *r;
    wisp_ip4_t a = DNS_ADDR;
    (void)arg;
    (void)ip;
    wisp_pbuf_free(p);
    if (n < 17) {
        return;
    }
    while (qend < n && q[qend] != 0) {
        qend += q[qend] + 1u;
    }
    qend += 5;
    if (qend > n) {
        return;
    }
    memcpy(out, q, qend);
    wisp_wr16(out + 2, 0x8180);
    wisp_wr16(out + 6, 1);
    o = qend;
    wisp_wr16(out + o, 0xC00C);
    wisp_wr16(out + o + 2, 1);
    wisp_wr16(out + o + 4, 1);
    wisp_wr32(out + o + 6, 300);
    wisp_wr16(out + o + 10, 4);
    memcpy(out + o + 12, &a, 4);
    o += 16;
    r = wisp_pbuf_alloc(pcb->stack, WISP_LAYER_TRANSPORT, (uint16_t)o, WISP_PBUF_RAM);
    if (r == NULL) {
        return; /* lost answer: the resolver retransmits */
    }
    (void)wisp_pbuf_copy_in(r, out, (uint16_t)o, 0);
    (void)wisp_udp_sendto(pcb, r, src, port);
    wisp_pbuf_free(r);
}

struct dns_res {
    int calls;
    wisp_err_t err;
    wisp_ip4_t addr;
};

static void dns_found(void *arg, const char *name, wisp_err_t err, const wisp_ipaddr_t *addr, uint32_t ttl_s)
{
    struct dns_res *r = arg;
    (void)name;
    (void)ttl_s;
    r->calls++;
    r->err = err;
    r->addr = addr != NULL ? wisp_ipaddr_ip4(addr) : 0;
}

static bool dns_done(void *arg)
{
    return ((struct dns_res *)arg)->calls > 0;
}

static bool dns_run(unsigned victim, uint32_t n, bool *reached, uint32_t allocs[2])
{
    struct sim_world *w = sim_world_new(1305);
    struct sim_node *node[2];
    struct wisp_udp_pcb *srv;
    struct dns_res res;
    wisp_ipaddr_t addr;
    unsigned base[2], k;
    uint32_t a0[2];
    wisp_err_t err;
    bool done = false;

    assert_non_null(w);
    memset(&res, 0, sizeof(res));
    node[0] = st_node(w, "srv", 1);
    node[1] = st_node(w, "cli", 2);
    sim_set_max_events(w, 5000000ull);
    srv = wisp_udp_new(sim_stack(node[0]));
    assert_non_null(srv);
    assert_int_equal(wisp_udp_bind(srv, NULL, 53), WISP_OK);
    wisp_udp_recv(srv, dnsrv_recv, NULL);
    assert_int_equal(wisp_dns_set_server(sim_stack(node[1]), 0, sim_ip(node[0])), WISP_OK);
    assert_true(sim_run_for(w, 1000));
    tsl_baseline(w, base);
    for (k = 0; k < 2; k++) {
        a0[k] = wisp_debug_alloc_count(sim_stack(node[k]));
    }
    assert_int_equal(wisp_debug_fail_allocs(sim_stack(node[victim]), n, walk_len), WISP_OK);

    err = wisp_dns_gethostbyname(sim_stack(node[1]), "host.example", &addr, dns_found, &res);
    if (err == WISP_ERR_INPROGRESS) {
        if (!sim_run_until(w, dns_done, &res, DNS_MAX_US)) {
            fail_msg("dns N=%u (stack %u): no answer nor error after %llu s", (unsigned)n, victim,
                     (unsigned long long)(DNS_MAX_US / SEC));
        }
        assert_int_equal(res.calls, 1);
        if (res.err == WISP_OK) {
            assert_true(res.addr == DNS_ADDR);
            done = true;
        } else if (res.err == WISP_ERR_TIMEOUT && walk_len > 1) {
            /* every retransmission's allocation failed: a clean timeout */
            snprintf(walk_err, sizeof(walk_err), "resolver callback: %s", wisp_err_str(res.err));
        } else {
            fail_msg("dns N=%u (stack %u): resolver callback: %s", (unsigned)n, victim, wisp_err_str(res.err));
        }
    } else if (err == WISP_ERR_MEM) {
        snprintf(walk_err, sizeof(walk_err), "wisp_dns_gethostbyname refused: %s", wisp_err_str(err));
    } else {
        fail_msg("dns N=%u: gethostbyname: %s", (unsigned)n, wisp_err_str(err));
    }
    assert_int_equal(wisp_dns_pending(sim_stack(node[1])), 0);
    run_end(w, base, 30ull * SEC, "dns", n);
    for (k = 0; k < 2; k++) {
        allocs[k] = wisp_debug_alloc_count(sim_stack(node[k])) - a0[k];
    }
    *reached = wisp_debug_alloc_injected(sim_stack(node[victim])) > 0;
    wisp_udp_remove(srv);
    ST_FREE(w);
    return done;
}

/* ----------------------------------------------- fragmented datagrams */

#define BIG 8000u
#define BIG_TRIES 8u /* > the longest run of failures walked (4) */
#define BIG_TRY_US (3ull * SEC) /* above the ARP retry (1 s) */
/* partial reassemblies are dropped after WISP_IP_REASS_TIMEOUT_MS */
#define BIG_SETTLE_US ((uint64_t)WISP_IP_REASS_TIMEOUT_MS * 1000u + 30ull * SEC)

static uint8_t big_data[BIG];

static bool udp_run(unsigned victim, uint32_t n, bool *reached, uint32_t allocs[2])
{
    struct sim_world *w = sim_world_new(1303);
    struct sim_node *node[2];
    struct wisp_services svc;
    struct st_client c;
    wisp_ipaddr_t dst;
    unsigned base[2], k, t;
    uint32_t a0[2];

    assert_non_null(w);
    node[0] = st_node(w, "client", 1);
    node[1] = st_node(w, "server", 2);
    sim_set_max_events(w, 5000000ull);
    dst = st_addr(node[1]);
    assert_int_equal(wisp_services_udp_start(sim_stack(node[1]), &svc), WISP_OK);
    st_client_open(&c, w, node[0], 0);
    assert_true(sim_run_for(w, 1000));
    tsl_baseline(w, base);
    for (k = 0; k < 2; k++) {
        a0[k] = wisp_debug_alloc_count(sim_stack(node[k]));
    }
    assert_int_equal(wisp_debug_fail_allocs(sim_stack(node[victim]), n, walk_len), WISP_OK);

    /* a lost datagram (a fragment or the echo not sent, a reassembly
     * dropped) is sent again by the application, like any UDP loss */
    t = st_echo_retry(&c, big_data, (uint16_t)BIG, 5, &dst, WISP_PORT_ECHO, BIG_TRY_US, BIG_TRIES);
    if (t == 0) {
        pools_print(w, "udp", n);
        fail_msg("udp N=%u (stack %u): no echo in %u tries", (unsigned)n, victim, BIG_TRIES);
    }
    assert_int_equal(c.last_len, BIG);
    assert_memory_equal(c.last, big_data, BIG);
    assert_int_equal(c.bad, 0);
    run_end(w, base, BIG_SETTLE_US, "udp", n);
    for (k = 0; k < 2; k++) {
        allocs[k] = wisp_debug_alloc_count(sim_stack(node[k])) - a0[k];
    }
    *reached = wisp_debug_alloc_injected(sim_stack(node[victim])) > 0;
    st_client_close(&c);
    wisp_services_udp_stop(&svc);
    ST_FREE(w);
    return true;
}

/* ICMP echo of 8000 bytes: wisp_icmp_echo_request refuses with an error
 * code when it cannot allocate; a lost request or reply is sent again. */
static bool icmp_replied(void *arg)
{
    return ((struct st_ping *)arg)->replies > 0;
}

static bool icmp_run(unsigned victim, uint32_t n, bool *reached, uint32_t allocs[2])
{
    struct sim_world *w = sim_world_new(1304);
    struct sim_node *node[2];
    struct st_ping pg;
    unsigned base[2], k, t;
    uint32_t a0[2];
    bool got = false;

    assert_non_null(w);
    node[0] = st_node(w, "client", 1);
    node[1] = st_node(w, "server", 2);
    sim_set_max_events(w, 5000000ull);
    memset(&pg, 0, sizeof(pg));
    wisp_icmp_set_echo_cb(sim_stack(node[0]), st_ping_cb, &pg);
    assert_true(sim_run_for(w, 1000));
    tsl_baseline(w, base);
    for (k = 0; k < 2; k++) {
        a0[k] = wisp_debug_alloc_count(sim_stack(node[k]));
    }
    assert_int_equal(wisp_debug_fail_allocs(sim_stack(node[victim]), n, walk_len), WISP_OK);

    for (t = 1; t <= BIG_TRIES && !got; t++) {
        wisp_err_t err = wisp_icmp_echo_request(sim_stack(node[0]), sim_ip(node[1]), 77, (uint16_t)t, BIG, 64);
        if (err != WISP_OK && err != WISP_ERR_MEM) {
            fail_msg("icmp N=%u: echo request: %s", (unsigned)n, wisp_err_str(err));
        }
        got = sim_run_until(w, icmp_replied, &pg, BIG_TRY_US);
    }
    if (!got) {
        pools_print(w, "icmp", n);
        fail_msg("icmp N=%u (stack %u): no reply in %u tries", (unsigned)n, victim, BIG_TRIES);
    }
    assert_int_equal(pg.bad, 0);
    assert_int_equal(pg.last_len, BIG);
    run_end(w, base, BIG_SETTLE_US, "icmp", n);
    for (k = 0; k < 2; k++) {
        allocs[k] = wisp_debug_alloc_count(sim_stack(node[k])) - a0[k];
    }
    *reached = wisp_debug_alloc_injected(sim_stack(node[victim])) > 0;
    wisp_icmp_set_echo_cb(sim_stack(node[0]), NULL, NULL);
    ST_FREE(w);
    return true;
}

/* ------------------------------------------------------------ walks */

/* One walk of the table: exchange, stack whose allocations fail, how
 * many in a row, TCP variant. The table is pruned to what adds coverage:
 * the whole walk stays at about 1 s of CPU in the gcc build and 6 s under
 * ASan (each run is a fresh world). */
struct walk_def {
    const char *name;
    walk_run_fn run;
    unsigned victim;
    uint32_t len;
    enum tcp_mode mode;
};

static const struct walk_def walks[] = {
    { "TCP 20 KB each way", tcp_run, 0, 1, TM_PLAIN },
    { "TCP 20 KB each way", tcp_run, 1, 1, TM_PLAIN },
    { "TCP 20 KB each way", tcp_run, 0, 4, TM_PLAIN },
    { "TCP 20 KB each way", tcp_run, 1, 4, TM_PLAIN },
    { "TCP 20 KB each way", tcp_run, 1, 16, TM_PLAIN },
    { "TCP 20 KB each way, zero-copy random writes", tcp_run, 0, 1, TM_ZERO_COPY },
    { "TCP 20 KB each way, zero-copy random writes", tcp_run, 1, 1, TM_ZERO_COPY },
    { "TCP 30 KB each way, lossy wire", tcp_run, 0, 1, TM_LOSSY },
    { "TCP 30 KB each way, lossy wire", tcp_run, 1, 1, TM_LOSSY },
    { "TCP 20 KB each way, over loopback", tcp_run, 1, 1, TM_LOOPBACK },
    { "TCP 20 KB each way, receiver holds the window 5 s", tcp_run, 0, 1, TM_HOLD },
    { "TCP 20 KB each way, receiver holds the window 5 s", tcp_run, 1, 1, TM_HOLD },
    { "TCP 20 KB each way, receiver refuses data 5 s", tcp_run, 1, 1, TM_REFUSE },
    { "TCP 20 KB each way, path MTU drops to 1000 (ICMP)", tcp_run, 0, 1, TM_PMTU },
    { "TCP 20 KB each way, path MTU drops to 1000 (ICMP)", tcp_run, 1, 1, TM_PMTU },
    { "TCP 20 KB each way, path MTU drops to 1000 (black hole)", tcp_run, 0, 1, TM_PMTU_BH },
    { "TCP echo service, 12000 bytes", echo_run, 0, 1, TM_PLAIN },
    { "TCP echo service, 12000 bytes", echo_run, 1, 1, TM_PLAIN },
    { "TCP echo service, 12000 bytes", echo_run, 0, 4, TM_PLAIN },
    { "TCP echo service, 12000 bytes", echo_run, 1, 4, TM_PLAIN },
    { "DHCP DISCOVER/OFFER/REQUEST/ACK", dhcp_run, 0, 1, TM_PLAIN },
    { "DHCP DISCOVER/OFFER/REQUEST/ACK", dhcp_run, 1, 1, TM_PLAIN },
    { "DHCP DISCOVER/OFFER/REQUEST/ACK", dhcp_run, 0, 4, TM_PLAIN },
    { "DHCP DISCOVER/OFFER/REQUEST/ACK", dhcp_run, 1, 4, TM_PLAIN },
    { "DNS query and answer", dns_run, 0, 1, TM_PLAIN },
    { "DNS query and answer", dns_run, 1, 1, TM_PLAIN },
    { "DNS query and answer", dns_run, 0, 4, TM_PLAIN },
    { "DNS query and answer", dns_run, 1, 4, TM_PLAIN },
    { "UDP 8000-byte datagram, fragmented echo", udp_run, 0, 1, TM_PLAIN },
    { "UDP 8000-byte datagram, fragmented echo", udp_run, 1, 1, TM_PLAIN },
    { "UDP 8000-byte datagram, fragmented echo", udp_run, 0, 4, TM_PLAIN },
    { "UDP 8000-byte datagram, fragmented echo", udp_run, 1, 4, TM_PLAIN },
    { "ICMP echo of 8000 bytes", icmp_run, 0, 1, TM_PLAIN },
    { "ICMP echo of 8000 bytes", icmp_run, 1, 1, TM_PLAIN },
    { "ICMP echo of 8000 bytes", icmp_run, 0, 4, TM_PLAIN },
    { "ICMP echo of 8000 bytes", icmp_run, 1, 4, TM_PLAIN },
};

static void walk_test(void **state)
{
    const struct walk_def *d = *state;
    struct walk wk;
    if (getenv("WALK_ONLY") != NULL && atoi(getenv("WALK_ONLY")) != (int)(d - walks)) {
        return;
    }
    memset(&wk, 0, sizeof(wk));
    wk.name = d->name;
    walk_len = d->len;
    tcp_mode = d->mode;
    walk_do(&wk, d->run, d->victim);
}

/* The injection itself: the Nth attempt fails like an empty pool (NULL,
 * counted in the pool's failure counter), once; disarming works. */
static void injection_fails_the_nth_allocation_once(void **state)
{
    struct sim_world *w = sim_world_new(1300);
    struct sim_node *a;
    struct wisp_stack *s;
    struct wisp_pbuf *p[3];
    uint32_t c0, f0;
    (void)state;
    assert_non_null(w);
    a = st_node(w, "a", 1);
    s = sim_stack(a);
    c0 = wisp_debug_alloc_count(s);
    f0 = s->pool[WISP_POOL_PBUF_REF].failed;
    assert_int_equal(wisp_debug_fail_alloc(s, 2), WISP_OK);
    assert_true(wisp_debug_fail_armed(s));
    p[0] = wisp_pbuf_alloc(s, WISP_LAYER_RAW, 10, WISP_PBUF_REF);
    p[1] = wisp_pbuf_alloc(s, WISP_LAYER_RAW, 10, WISP_PBUF_REF);
    p[2] = wisp_pbuf_alloc(s, WISP_LAYER_RAW, 10, WISP_PBUF_REF);
    assert_non_null(p[0]);
    assert_null(p[1]);
    assert_non_null(p[2]);
    assert_false(wisp_debug_fail_armed(s));
    assert_int_equal(wisp_debug_alloc_count(s) - c0, 3);
    assert_int_equal(wisp_debug_alloc_injected(s), 1);
    assert_int_equal(s->pool[WISP_POOL_PBUF_REF].failed - f0, 1);
    wisp_pbuf_free(p[0]);
    wisp_pbuf_free(p[2]);
    /* disarmed: nothing fails */
    assert_int_equal(wisp_debug_fail_alloc(s, 1), WISP_OK);
    assert_int_equal(wisp_debug_fail_alloc(s, 0), WISP_OK);
    p[0] = wisp_pbuf_alloc(s, WISP_LAYER_RAW, 10, WISP_PBUF_REF);
    assert_non_null(p[0]);
    wisp_pbuf_free(p[0]);
    assert_int_equal(wisp_debug_alloc_injected(s), 1);
    ST_FREE(w);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(injection_fails_the_nth_allocation_once),
        cmocka_unit_test_prestate(walk_test, (void *)&walks[0]),
        cmocka_unit_test_prestate(walk_test, (void *)&walks[1]),
        cmocka_unit_test_prestate(walk_test, (void *)&walks[2]),
        cmocka_unit_test_prestate(walk_test, (void *)&walks[3]),
        cmocka_unit_test_prestate(walk_test, (void *)&walks[4]),
        cmocka_unit_test_prestate(walk_test, (void *)&walks[5]),
        cmocka_unit_test_prestate(walk_test, (void *)&walks[6]),
        cmocka_unit_test_prestate(walk_test, (void *)&walks[7]),
        cmocka_unit_test_prestate(walk_test, (void *)&walks[8]),
        cmocka_unit_test_prestate(walk_test, (void *)&walks[9]),
        cmocka_unit_test_prestate(walk_test, (void *)&walks[10]),
        cmocka_unit_test_prestate(walk_test, (void *)&walks[11]),
        cmocka_unit_test_prestate(walk_test, (void *)&walks[12]),
        cmocka_unit_test_prestate(walk_test, (void *)&walks[13]),
        cmocka_unit_test_prestate(walk_test, (void *)&walks[14]),
        cmocka_unit_test_prestate(walk_test, (void *)&walks[15]),
        cmocka_unit_test_prestate(walk_test, (void *)&walks[16]),
        cmocka_unit_test_prestate(walk_test, (void *)&walks[17]),
        cmocka_unit_test_prestate(walk_test, (void *)&walks[18]),
        cmocka_unit_test_prestate(walk_test, (void *)&walks[19]),
        cmocka_unit_test_prestate(walk_test, (void *)&walks[20]),
        cmocka_unit_test_prestate(walk_test, (void *)&walks[21]),
        cmocka_unit_test_prestate(walk_test, (void *)&walks[22]),
        cmocka_unit_test_prestate(walk_test, (void *)&walks[23]),
        cmocka_unit_test_prestate(walk_test, (void *)&walks[24]),
        cmocka_unit_test_prestate(walk_test, (void *)&walks[25]),
        cmocka_unit_test_prestate(walk_test, (void *)&walks[26]),
        cmocka_unit_test_prestate(walk_test, (void *)&walks[27]),
        cmocka_unit_test_prestate(walk_test, (void *)&walks[28]),
        cmocka_unit_test_prestate(walk_test, (void *)&walks[29]),
        cmocka_unit_test_prestate(walk_test, (void *)&walks[30]),
        cmocka_unit_test_prestate(walk_test, (void *)&walks[31]),
        cmocka_unit_test_prestate(walk_test, (void *)&walks[32]),
        cmocka_unit_test_prestate(walk_test, (void *)&walks[33]),
        cmocka_unit_test_prestate(walk_test, (void *)&walks[34]),
        cmocka_unit_test_prestate(walk_test, (void *)&walks[35]),
    };
    unsigned i;
    /* one cmocka test per walk of the table */
    (void)sizeof(char[WISP_ARRAY_SIZE(walks) == WISP_ARRAY_SIZE(tests) - 1u ? 1 : -1]);
#if !WISP_ALLOC_FAIL_INJECT
    print_message("test_alloc_walk: built without WISP_ALLOC_FAIL_INJECT, skipped\n");
    return 77;
#endif
    for (i = 0; i < BIG; i++) {
        big_data[i] = (uint8_t)(i * 7u + 3u);
    }
    return cmocka_run_group_tests(tests, NULL, NULL);
}
