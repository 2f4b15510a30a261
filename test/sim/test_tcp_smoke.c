/**
 * @file test_tcp_smoke.c
 * TCP smoke test on the simulated wire (the TCP implementer's own check;
 * the full simulator suite lives in the other test_tcp_*.c files): two
 * stacks, one connection, 1 MB in each direction at the same time, then an
 * orderly close from both sides -- on a clean wire and with 5 % frame
 * loss. The data is checked byte by byte and every pool must be empty at
 * the end.
 */
#include "simtest.h"

#define SMOKE_BYTES (1024u * 1024u)
#define SMOKE_PORT 5001u

static uint8_t smoke_byte(uint32_t dir, uint32_t off)
{
    uint32_t x = off * 2654435761u + dir * 97u;
    return (uint8_t)(x >> 13);
}

/* One endpoint: sends SMOKE_BYTES, receives and checks SMOKE_BYTES. */
struct smoke_end {
    struct wisp_tcp_pcb *pcb;
    uint32_t dir;            /* pattern of what it sends */
    uint32_t sent, acked, received;
    unsigned bad;
    bool eof, closed, err;
    wisp_err_t err_code;
    uint8_t chunk[2048];
};

static void smoke_fill(struct smoke_end *e)
{
    while (e->pcb != NULL && e->sent < SMOKE_BYTES) {
        uint32_t room = wisp_tcp_sndbuf(e->pcb), n, i;
        n = SMOKE_BYTES - e->sent;
        if (n > sizeof(e->chunk)) {
            n = sizeof(e->chunk);
        }
        if (n > room) {
            n = room;
        }
        if (n == 0) {
            break;
        }
        for (i = 0; i < n; i++) {
            e->chunk[i] = smoke_byte(e->dir, e->sent + i);
        }
        if (wisp_tcp_write(e->pcb, e->chunk, n, WISP_TCP_WRITE_COPY) != WISP_OK) {
            break; /* retried from sent / poll */
        }
        e->sent += n;
    }
    if (e->pcb != NULL) {
        (void)wisp_tcp_output(e->pcb);
    }
}

static void smoke_maybe_close(struct smoke_end *e)
{
    if (e->pcb != NULL && !e->closed && e->eof && e->acked == SMOKE_BYTES) {
        assert_int_equal(wisp_tcp_close(e->pcb), WISP_OK);
        e->closed = true;
        e->pcb = NULL;
    }
}

static wisp_err_t smoke_recv(void *arg, struct wisp_tcp_pcb *pcb, struct wisp_pbuf *p, wisp_err_t err)
{
    struct smoke_end *e = (struct smoke_end *)arg;
    struct wisp_pbuf *q;
    (void)err;
    if (p == NULL) {
        e->eof = true;
        smoke_maybe_close(e);
        return WISP_OK;
    }
    for (q = p; q != NULL; q = q->next) {
        uint16_t i;
        for (i = 0; i < q->len; i++) {
            if (q->payload[i] != smoke_byte(e->dir ^ 1u, e->received + i)) {
                e->bad++;
            }
        }
        e->received += q->len;
    }
    wisp_tcp_recved(pcb, p->tot_len);
    wisp_pbuf_free(p);
    if (e->received == SMOKE_BYTES) {
        /* everything arrived: half-close our direction once sent */
    }
    return WISP_OK;
}

static wisp_err_t smoke_sent(void *arg, struct wisp_tcp_pcb *pcb, uint32_t len)
{
    struct smoke_end *e = (struct smoke_end *)arg;
    (void)pcb;
    e->acked += len;
    smoke_fill(e);
    if (e->acked == SMOKE_BYTES && e->pcb != NULL) {
        assert_int_equal(wisp_tcp_shutdown(e->pcb, false, true), WISP_OK);
    }
    smoke_maybe_close(e);
    return WISP_OK;
}

static wisp_err_t smoke_poll(void *arg, struct wisp_tcp_pcb *pcb)
{
    (void)pcb;
    smoke_fill((struct smoke_end *)arg);
    return WISP_OK;
}

static void smoke_err(void *arg, wisp_err_t err)
{
    struct smoke_end *e = (struct smoke_end *)arg;
    e->err = true;
    e->err_code = err;
    e->pcb = NULL;
}

static void smoke_setup(struct smoke_end *e, struct wisp_tcp_pcb *pcb)
{
    e->pcb = pcb;
    wisp_tcp_arg(pcb, e);
    wisp_tcp_recv(pcb, smoke_recv);
    wisp_tcp_sent(pcb, smoke_sent);
    wisp_tcp_err(pcb, smoke_err);
    wisp_tcp_poll(pcb, smoke_poll, 1);
}

static wisp_err_t smoke_accept(void *arg, struct wisp_tcp_pcb *newpcb, wisp_err_t err)
{
    struct smoke_end *e = (struct smoke_end *)arg;
    (void)err;
    smoke_setup(e, newpcb);
    smoke_fill(e);
    return WISP_OK;
}

static wisp_err_t smoke_connected(void *arg, struct wisp_tcp_pcb *pcb, wisp_err_t err)
{
    (void)pcb;
    (void)err;
    smoke_fill((struct smoke_end *)arg);
    return WISP_OK;
}

struct smoke {
    struct smoke_end a, b;
};

static bool smoke_done(void *arg)
{
    struct smoke *s = (struct smoke *)arg;
    return (s->a.closed || s->a.err) && (s->b.closed || s->b.err);
}

static void smoke_run(double loss, uint64_t seed)
{
    struct sim_world *w = sim_world_new(seed);
    struct sim_node *na, *nb;
    struct sim_link_cfg cfg;
    struct wisp_tcp_pcb *l, *c;
    struct smoke *sm = calloc(1, sizeof(*sm));
    wisp_ipaddr_t dst;
    wisp_err_t err;
    bool done;

    assert_non_null(w);
    assert_non_null(sm);
    sim_get_link(w, &cfg);
    cfg.bandwidth_bps = 100000000u;
    cfg.latency_us = 500;
    cfg.loss = loss;
    sim_set_link(w, &cfg);
    na = st_node(w, "a", 1);
    nb = st_node(w, "b", 2);
    sm->a.dir = 0;
    sm->b.dir = 1;

    l = wisp_tcp_new(sim_stack(nb));
    assert_non_null(l);
    assert_int_equal(wisp_tcp_bind(l, NULL, SMOKE_PORT), WISP_OK);
    l = wisp_tcp_listen(l, 4, &err);
    assert_non_null(l);
    wisp_tcp_arg(l, &sm->b);
    wisp_tcp_accept(l, smoke_accept);

    c = wisp_tcp_new(sim_stack(na));
    assert_non_null(c);
    smoke_setup(&sm->a, c);
    dst = st_addr(nb);
    assert_int_equal(wisp_tcp_connect(c, &dst, SMOKE_PORT, smoke_connected), WISP_OK);

    done = sim_run_until(w, smoke_done, sm, 600ull * 1000000ull);
    if (!done || sm->a.err || sm->b.err || sm->a.bad || sm->b.bad) {
        fprintf(stderr, "smoke loss %.2f: done %d a(sent %u acked %u rx %u eof %d err %d/%d bad %u) "
                        "b(sent %u acked %u rx %u eof %d err %d/%d bad %u) t=%llu ms\n",
                loss, done, sm->a.sent, sm->a.acked, sm->a.received, sm->a.eof, sm->a.err, sm->a.err_code, sm->a.bad,
                sm->b.sent, sm->b.acked, sm->b.received, sm->b.eof, sm->b.err, sm->b.err_code, sm->b.bad,
                (unsigned long long)(sim_now_us(w) / 1000u));
        sim_dump(w, stderr);
    }
    assert_true(done);
    assert_false(sm->a.err);
    assert_false(sm->b.err);
    assert_int_equal(sm->a.received, SMOKE_BYTES);
    assert_int_equal(sm->b.received, SMOKE_BYTES);
    assert_int_equal(sm->a.bad, 0);
    assert_int_equal(sm->b.bad, 0);
    /* let TIME-WAIT and the last ACKs settle, then everything must be free */
    assert_true(sim_run_for(w, 5ull * 1000000ull));
    assert_int_equal(wisp_tcp_close(l), WISP_OK);
    if (loss == 0.0) {
        assert_int_equal(sim_stack(na)->ctr[WISP_CTR_TCP_RETRANSMIT], 0);
        assert_int_equal(sim_stack(nb)->ctr[WISP_CTR_TCP_RETRANSMIT], 0);
    }
    fprintf(stderr, "smoke loss %.2f: %llu ms virtual, rtx a %u b %u, fast rtx a %u b %u, rto a %u b %u\n", loss,
            (unsigned long long)(sim_now_us(w) / 1000u), (unsigned)sim_stack(na)->ctr[WISP_CTR_TCP_RETRANSMIT],
            (unsigned)sim_stack(nb)->ctr[WISP_CTR_TCP_RETRANSMIT],
            (unsigned)sim_stack(na)->ctr[WISP_CTR_TCP_FAST_RETRANSMIT],
            (unsigned)sim_stack(nb)->ctr[WISP_CTR_TCP_FAST_RETRANSMIT],
            (unsigned)sim_stack(na)->ctr[WISP_CTR_TCP_TIMEOUT], (unsigned)sim_stack(nb)->ctr[WISP_CTR_TCP_TIMEOUT]);
    free(sm);
    ST_FREE(w);
}

static void test_tcp_smoke_1mb_each_way_clean(void **state)
{
    (void)state;
    smoke_run(0.0, 11);
}

static void test_tcp_smoke_1mb_each_way_5pct_loss(void **state)
{
    (void)state;
    smoke_run(0.05, 12);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_tcp_smoke_1mb_each_way_clean),
        cmocka_unit_test(test_tcp_smoke_1mb_each_way_5pct_loss),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
