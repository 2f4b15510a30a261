/**
 * @file test_tcpip.c
 * The stack thread (src/api/tcpip.c) on the POSIX sys port: clean start and
 * stop, calls and callbacks run on the stack thread in order, core locking
 * from several threads, the wake-up of a sleeping stack thread when a lock
 * holder arms a timer, frames posted by driver threads, and a stop that
 * frees what is still queued (the pool leak check of tu_env_free).
 *
 * Each test uses a tu_env (recording device, peer in the ARP cache) whose
 * clock is switched to the sys port's monotonic clock before the thread
 * starts: the thread sleeps in real time. While the thread runs, the test
 * touches the stack and the recording device only in the core context.
 */
#include <stdlib.h>

#include "testutil.h"
#include "wisp/tcpip.h"

static uint32_t real_clock(void *ctx)
{
    (void)ctx;
    return wisp_sys_now_ms();
}

struct tenv {
    struct tu_env *e;
    struct wisp_tcpip *ctx;
};

/* tu_env on the real clock, thread started with max_wait_ms. */
static struct tenv tenv_start(uint32_t max_wait_ms)
{
    struct tenv t;
    struct wisp_tcpip_cfg cfg;
    assert_int_equal(wisp_sys_init(), WISP_OK);
    t.e = tu_env_new(11);
    tu_arp_peer(t.e);
    t.e->s->cfg.now_ms = real_clock;
    t.e->s->cfg.clock_ctx = NULL;
    (void)wisp_now(t.e->s);
    t.ctx = calloc(1, sizeof(*t.ctx));
    assert_non_null(t.ctx);
    memset(&cfg, 0, sizeof cfg);
    cfg.name = "test-tcpip";
    cfg.max_wait_ms = max_wait_ms;
    assert_int_equal(wisp_tcpip_start(t.ctx, t.e->s, &cfg), WISP_OK);
    assert_ptr_equal(t.e->s->core_lock, &t.ctx->core);
    return t;
}

static void tenv_stop_free(struct tenv *t)
{
    wisp_tcpip_stop(t->ctx);
    assert_null(t->e->s->core_lock);
    free(t->ctx);
    tu_env_free(t->e); /* leak check */
}

static wisp_err_t noop(struct wisp_stack *s, void *arg)
{
    (void)s;
    (void)arg;
    return WISP_OK;
}

/* --------------------------------------------------------- start/stop */

static wisp_err_t init_probe(struct wisp_stack *s, void *arg)
{
    struct wisp_udp_pcb **pcb = (struct wisp_udp_pcb **)arg;
    *pcb = wisp_udp_new(s); /* core context: allowed */
    return *pcb != NULL ? WISP_OK : WISP_ERR_MEM;
}

static wisp_err_t init_fails(struct wisp_stack *s, void *arg)
{
    (void)s;
    (void)arg;
    return WISP_ERR_IF;
}

static wisp_err_t remove_pcb(struct wisp_stack *s, void *arg)
{
    (void)s;
    wisp_udp_remove((struct wisp_udp_pcb *)arg);
    return WISP_OK;
}

static void test_tcpip_start_stop_clean(void **state)
{
    struct tenv t = tenv_start(0);
    struct wisp_tcpip_stats st;
    struct wisp_tcpip_cfg cfg;
    struct wisp_udp_pcb *pcb = NULL;
    (void)state;
    assert_false(wisp_tcpip_on_stack_thread(t.ctx));
    assert_int_equal(wisp_tcpip_call(t.ctx, noop, NULL), WISP_OK);
    wisp_tcpip_get_stats(t.ctx, &st);
    assert_int_equal(st.calls, 1);
    wisp_tcpip_stop(t.ctx);
    assert_null(t.e->s->core_lock);

    /* Restart the same context on the same stack, with an init function
     * that runs in the core context before start returns. */
    memset(&cfg, 0, sizeof cfg);
    cfg.init = init_probe;
    cfg.init_arg = &pcb;
    assert_int_equal(wisp_tcpip_start(t.ctx, t.e->s, &cfg), WISP_OK);
    assert_non_null(pcb);
    assert_int_equal(wisp_tcpip_call(t.ctx, remove_pcb, pcb), WISP_OK);
    wisp_tcpip_stop(t.ctx);

    /* A failing init function makes start fail and leaves nothing running. */
    cfg.init = init_fails;
    assert_int_equal(wisp_tcpip_start(t.ctx, t.e->s, &cfg), WISP_ERR_IF);
    assert_null(t.e->s->core_lock);
    free(t.ctx);
    tu_env_free(t.e);
}

/* -------------------------------------------------------------- calls */

struct call_probe {
    struct wisp_tcpip *ctx;
    bool on_thread, held, nested_on_thread;
};

static wisp_err_t nested(struct wisp_stack *s, void *arg)
{
    struct call_probe *p = (struct call_probe *)arg;
    (void)s;
    p->nested_on_thread = wisp_tcpip_on_stack_thread(p->ctx);
    return WISP_ERR_ALREADY;
}

static wisp_err_t probe(struct wisp_stack *s, void *arg)
{
    struct call_probe *p = (struct call_probe *)arg;
    p->on_thread = wisp_tcpip_on_stack_thread(p->ctx);
    p->held = wisp_sys_mutex_held((wisp_sys_mutex_t *)s->core_lock);
    /* A call from the stack thread runs directly instead of deadlocking. */
    if (wisp_tcpip_call(p->ctx, nested, p) != WISP_ERR_ALREADY) {
        return WISP_ERR_VAL;
    }
    return WISP_ERR_USE; /* a distinctive result */
}

static void test_tcpip_call_runs_on_stack_thread_and_returns_result(void **state)
{
    struct tenv t = tenv_start(0);
    struct call_probe p;
    wisp_sys_sem_t done;
    (void)state;
    memset(&p, 0, sizeof p);
    p.ctx = t.ctx;
    assert_int_equal(wisp_tcpip_call(t.ctx, probe, &p), WISP_ERR_USE);
    assert_true(p.on_thread);
    assert_true(p.held);
    assert_true(p.nested_on_thread);

    /* The same with the caller's own semaphore, which is left at 0. */
    memset(&p, 0, sizeof p);
    p.ctx = t.ctx;
    assert_int_equal(wisp_sys_sem_new(&done, 0), WISP_OK);
    assert_int_equal(wisp_tcpip_call_sem(t.ctx, probe, &p, &done), WISP_ERR_USE);
    assert_true(p.on_thread);
    assert_int_equal(wisp_sys_sem_wait(&done, 0), WISP_ERR_TIMEOUT);
    wisp_sys_sem_free(&done);
    tenv_stop_free(&t);
}

struct order_log {
    struct wisp_tcpip *ctx;
    int seen[32];
    unsigned n;
    bool all_on_thread;
};

struct order_item {
    struct order_log *log;
    int value;
};

static wisp_err_t log_value(struct wisp_stack *s, void *arg)
{
    struct order_item *it = (struct order_item *)arg;
    (void)s;
    if (!wisp_tcpip_on_stack_thread(it->log->ctx)) {
        it->log->all_on_thread = false;
    }
    if (it->log->n < 32) {
        it->log->seen[it->log->n++] = it->value;
    }
    return WISP_OK;
}

static void test_tcpip_callbacks_run_on_stack_thread_in_order(void **state)
{
    struct tenv t = tenv_start(0);
    struct order_log log;
    struct order_item items[20];
    struct wisp_tcpip_stats st;
    int i;
    (void)state;
    memset(&log, 0, sizeof log);
    log.ctx = t.ctx;
    log.all_on_thread = true;
    for (i = 0; i < 20; i++) {
        items[i].log = &log;
        items[i].value = i;
        assert_int_equal(wisp_tcpip_callback(t.ctx, log_value, &items[i]), WISP_OK);
    }
    /* The mailbox is FIFO: a call posted now runs after every callback. */
    assert_int_equal(wisp_tcpip_call(t.ctx, noop, NULL), WISP_OK);
    assert_int_equal(log.n, 20);
    assert_true(log.all_on_thread);
    for (i = 0; i < 20; i++) {
        assert_int_equal(log.seen[i], i);
    }
    wisp_tcpip_get_stats(t.ctx, &st);
    assert_int_equal(st.callbacks, 20);
    assert_int_equal(st.callback_fails, 0);
    tenv_stop_free(&t);
}

/* ------------------------------------------------------ core locking */

#define SENDERS 4
#define SENDS_PER_THREAD 100

struct sender {
    struct tenv *t;
    struct wisp_udp_pcb *pcb;
    uint32_t id;
    unsigned failures;
};

static void send_worker(void *arg)
{
    struct sender *sd = (struct sender *)arg;
    wisp_ipaddr_t peer = wisp_ipaddr4(tu_ip_peer());
    uint32_t i;
    for (i = 0; i < SENDS_PER_THREAD; i++) {
        uint8_t data[8];
        struct wisp_pbuf *p;
        wisp_wr32(data, sd->id);
        wisp_wr32(data + 4, i);
        wisp_tcpip_lock(sd->t->ctx);
        p = wisp_pbuf_alloc(sd->t->e->s, WISP_LAYER_TRANSPORT, sizeof data, WISP_PBUF_RAM);
        if (p == NULL || wisp_pbuf_copy_in(p, data, sizeof data, 0) != WISP_OK ||
            wisp_udp_sendto(sd->pcb, p, &peer, 9000) != WISP_OK) {
            sd->failures++;
        }
        wisp_pbuf_free(p);
        wisp_tcpip_unlock(sd->t->ctx);
    }
}

static void test_tcpip_core_locking_four_threads_udp_no_loss(void **state)
{
    struct tenv t = tenv_start(0);
    struct sender sd[SENDERS];
    wisp_sys_thread_t th[SENDERS];
    struct wisp_udp_pcb *pcb;
    wisp_ipaddr_t any = wisp_ipaddr4(WISP_IP4_ANY);
    bool seen[SENDERS][SENDS_PER_THREAD];
    uint8_t f[128];
    unsigned i, frames = 0, sent0;
    int n;
    (void)state;

    wisp_tcpip_lock(t.ctx);
    pcb = wisp_udp_new(t.e->s);
    assert_non_null(pcb);
    assert_int_equal(wisp_udp_bind(pcb, &any, 4000), WISP_OK);
    sent0 = t.e->dev.sent;
    wisp_tcpip_unlock(t.ctx);

    for (i = 0; i < SENDERS; i++) {
        sd[i].t = &t;
        sd[i].pcb = pcb;
        sd[i].id = i;
        sd[i].failures = 0;
        assert_int_equal(wisp_sys_thread_new(&th[i], "sender", send_worker, &sd[i], 0, 0), WISP_OK);
    }
    for (i = 0; i < SENDERS; i++) {
        assert_int_equal(wisp_sys_thread_join(&th[i]), WISP_OK);
        assert_int_equal(sd[i].failures, 0);
    }

    memset(seen, 0, sizeof seen);
    wisp_tcpip_lock(t.ctx);
    assert_int_equal(TU_CTR(t.e, UDP_TX), SENDERS * SENDS_PER_THREAD);
    assert_int_equal(t.e->dev.sent - sent0, SENDERS * SENDS_PER_THREAD);
    while ((n = tu_pop(t.e, f, sizeof f)) >= 0) {
        uint32_t id, seq;
        assert_int_equal(n, 42 + 8);
        assert_int_equal(wisp_rd16(f + 12), WISP_ETHTYPE_IP4);
        assert_int_equal(wisp_rd16(f + 34), 4000);
        assert_int_equal(wisp_rd16(f + 36), 9000);
        id = wisp_rd32(f + 42);
        seq = wisp_rd32(f + 46);
        assert_true(id < SENDERS && seq < SENDS_PER_THREAD);
        assert_false(seen[id][seq]); /* no duplicate */
        seen[id][seq] = true;
        frames++;
    }
    wisp_udp_remove(pcb);
    wisp_tcpip_unlock(t.ctx);
    assert_int_equal(frames, SENDERS * SENDS_PER_THREAD); /* none lost */
    tenv_stop_free(&t);
}

struct run_probe {
    struct wisp_tcpip *ctx;
    bool on_thread, held;
};

static wisp_err_t run_fn(struct wisp_stack *s, void *arg)
{
    struct run_probe *p = (struct run_probe *)arg;
    p->on_thread = wisp_tcpip_on_stack_thread(p->ctx);
    p->held = wisp_sys_mutex_held((wisp_sys_mutex_t *)s->core_lock);
    return WISP_ERR_INPROGRESS;
}

/* wisp_tcpip_run takes the way WISP_TCPIP_CORE_LOCKING selects: the caller
 * runs fn under the core lock, or the stack thread runs it. */
static void test_tcpip_run_uses_configured_mechanism(void **state)
{
    struct tenv t = tenv_start(0);
    struct run_probe p;
    (void)state;
    memset(&p, 0, sizeof p);
    p.ctx = t.ctx;
    assert_int_equal(wisp_tcpip_run(t.ctx, run_fn, &p), WISP_ERR_INPROGRESS);
    assert_true(p.held);
    assert_int_equal(p.on_thread, WISP_TCPIP_CORE_LOCKING ? false : true);
    tenv_stop_free(&t);
}

/* ---------------------------------------------------------- timers */

struct timer_probe {
    struct wisp_timer tm;
    struct wisp_tcpip *ctx;
    wisp_sys_sem_t fired;
    bool on_thread;
    uint32_t fired_at;
};

static void timer_fn(struct wisp_stack *s, struct wisp_timer *tm)
{
    struct timer_probe *p = (struct timer_probe *)(void *)tm; /* tm is the first member */
    (void)s;
    p->on_thread = wisp_tcpip_on_stack_thread(p->ctx);
    p->fired_at = wisp_sys_now_ms();
    wisp_sys_sem_signal(&p->fired);
}

/* The thread sleeps without timeout (no timer armed, no cap); a timer armed
 * under the core lock must wake it and then fire on the stack thread. */
static void test_tcpip_timer_armed_under_lock_wakes_sleeping_thread(void **state)
{
    struct tenv t = tenv_start(WISP_SYS_FOREVER);
    struct timer_probe p;
    struct wisp_tcpip_stats st;
    uint32_t armed_at = 0;
    bool asleep = false;
    struct tu_poll tp = tu_poll_start(TU_WAIT_MS);
    (void)state;
    memset(&p, 0, sizeof p);
    p.ctx = t.ctx;
    assert_int_equal(wisp_sys_sem_new(&p.fired, 0), WISP_OK);

    /* Wait until the thread sleeps without a deadline (white box: the
     * sleep state is read under the core lock that guards it). */
    for (;;) {
        wisp_tcpip_lock(t.ctx);
        asleep = t.ctx->sleeping && t.ctx->sleep_forever;
        if (asleep) {
            armed_at = wisp_sys_now_ms();
            wisp_timer_arm(t.e->s, &p.tm, 30, timer_fn);
        }
        wisp_tcpip_unlock(t.ctx);
        if (asleep) {
            break;
        }
        TU_POLL(&tp, "the stack thread did not go to sleep without a deadline");
    }
    /* Without the wake-up this would wait forever; 10 s is generous. */
    assert_int_equal(wisp_sys_sem_wait(&p.fired, 10000), WISP_OK);
    assert_true(p.on_thread);
    assert_true(p.fired_at - armed_at >= 29u); /* ms truncation */
    wisp_tcpip_get_stats(t.ctx, &st);
    assert_true(st.wakes >= 1);
    assert_true(st.polls >= 1);
    wisp_sys_sem_free(&p.fired);
    tenv_stop_free(&t);
}

/* The stack's own timers run on the stack thread: an unanswered ARP request
 * is retried after WISP_ARP_RETRY_MS without anybody calling the stack. */
static void test_tcpip_stack_timers_fire_on_stack_thread(void **state)
{
    struct tenv t = tenv_start(0);
    struct wisp_udp_pcb *pcb;
    struct wisp_pbuf *p;
    wisp_ipaddr_t unknown = wisp_ipaddr4(wisp_ip4(198, 18, 0, 77));
    uint8_t f[128];
    unsigned requests = 0;
    (void)state;

    wisp_tcpip_lock(t.ctx);
    pcb = wisp_udp_new(t.e->s);
    assert_non_null(pcb);
    p = wisp_pbuf_alloc(t.e->s, WISP_LAYER_TRANSPORT, 4, WISP_PBUF_RAM);
    assert_non_null(p);
    assert_int_equal(wisp_pbuf_copy_in(p, "ping", 4, 0), WISP_OK);
    assert_int_equal(wisp_udp_sendto(pcb, p, &unknown, 9), WISP_OK);
    wisp_pbuf_free(p);
    wisp_tcpip_unlock(t.ctx);

    {
        struct tu_poll tp = tu_poll_start(TU_WAIT_MS); /* a request every ARP retry period */
        while (requests < 2) {
            int n;
            TU_POLL(&tp, "fewer than two ARP requests");
            wisp_tcpip_lock(t.ctx);
            while ((n = tu_pop(t.e, f, sizeof f)) >= 0) {
                if (n >= 42 && wisp_rd16(f + 12) == WISP_ETHTYPE_ARP && wisp_ip4_rd(f + 38) == wisp_ipaddr_ip4(&unknown)) {
                    requests++;
                }
            }
            wisp_tcpip_unlock(t.ctx);
        }
    }
    assert_int_equal(wisp_tcpip_call(t.ctx, remove_pcb, pcb), WISP_OK);
    tenv_stop_free(&t);
}

/* ----------------------------------------------------------- input */

#define INPUTTERS 2
#define INPUTS_PER_THREAD 50

struct rx_log {
    struct wisp_tcpip *ctx;
    bool seen[INPUTTERS][INPUTS_PER_THREAD];
    unsigned got, dups, off_thread;
};

static void rx_recv(void *arg, struct wisp_udp_pcb *pcb, struct wisp_pbuf *p, const wisp_ipaddr_t *src,
                    uint16_t port, const struct wisp_ip_info *ip)
{
    struct rx_log *log = (struct rx_log *)arg;
    uint8_t d[8];
    (void)pcb;
    (void)src;
    (void)port;
    (void)ip;
    if (!wisp_tcpip_on_stack_thread(log->ctx)) {
        log->off_thread++;
    }
    if (wisp_pbuf_copy_out(p, d, 8, 0) == 8) {
        uint32_t id = wisp_rd32(d), seq = wisp_rd32(d + 4);
        if (id < INPUTTERS && seq < INPUTS_PER_THREAD) {
            if (log->seen[id][seq]) {
                log->dups++;
            }
            log->seen[id][seq] = true;
            log->got++;
        }
    }
    wisp_pbuf_free(p);
}

struct inputter {
    struct tenv *t;
    uint32_t id;
    unsigned retries;
};

static void input_worker(void *arg)
{
    struct inputter *in = (struct inputter *)arg;
    uint32_t i;
    for (i = 0; i < INPUTS_PER_THREAD; i++) {
        uint8_t data[8], f[128];
        size_t n;
        wisp_wr32(data, in->id);
        wisp_wr32(data + 4, i);
        n = tu_udp_frame(f, 5555, 7000, data, sizeof data);
        /* A full mailbox / empty pool drops the frame: the driver retries. */
        struct tu_poll tp = tu_poll_start(TU_WAIT_MS);
        while (wisp_tcpip_input_copy(in->t->ctx, &in->t->e->dev.dev, f, (uint16_t)n) != WISP_OK) {
            in->retries++;
            if (!tu_poll_more(&tp)) { /* never room: the count check in the test fails */
                return;
            }
        }
    }
}

static void test_tcpip_input_from_driver_threads_reaches_stack(void **state)
{
    struct tenv t = tenv_start(0);
    struct rx_log *log = calloc(1, sizeof(*log));
    struct inputter in[INPUTTERS];
    wisp_sys_thread_t th[INPUTTERS];
    struct wisp_udp_pcb *pcb;
    struct wisp_pbuf *p;
    struct wisp_tcpip_stats st;
    wisp_ipaddr_t any = wisp_ipaddr4(WISP_IP4_ANY);
    uint8_t f[128];
    unsigned i, j;
    size_t n;
    int len;
    (void)state;
    assert_non_null(log);
    log->ctx = t.ctx;

    wisp_tcpip_lock(t.ctx);
    pcb = wisp_udp_new(t.e->s);
    assert_non_null(pcb);
    assert_int_equal(wisp_udp_bind(pcb, &any, 7000), WISP_OK);
    wisp_udp_recv(pcb, rx_recv, log);
    wisp_tcpip_unlock(t.ctx);

    for (i = 0; i < INPUTTERS; i++) {
        in[i].t = &t;
        in[i].id = i;
        in[i].retries = 0;
        assert_int_equal(wisp_sys_thread_new(&th[i], "rx", input_worker, &in[i], 0, 0), WISP_OK);
    }
    for (i = 0; i < INPUTTERS; i++) {
        assert_int_equal(wisp_sys_thread_join(&th[i]), WISP_OK);
    }

    /* A ping through the alloc_rx + input path: the reply is transmitted. */
    n = tu_ping_frame(f, 0x99, 1, "abc", 3);
    p = wisp_tcpip_alloc_rx(t.ctx, (uint16_t)n);
    assert_non_null(p);
    assert_int_equal(wisp_pbuf_copy_in(p, f, (uint16_t)n, 0), WISP_OK);
    assert_int_equal(wisp_tcpip_input(t.ctx, &t.e->dev.dev, p), WISP_OK);

    /* FIFO: once this call returns, every posted frame was processed. */
    assert_int_equal(wisp_tcpip_call(t.ctx, noop, NULL), WISP_OK);
    assert_int_equal(log->got, INPUTTERS * INPUTS_PER_THREAD);
    assert_int_equal(log->dups, 0);
    assert_int_equal(log->off_thread, 0);
    for (i = 0; i < INPUTTERS; i++) {
        for (j = 0; j < INPUTS_PER_THREAD; j++) {
            assert_true(log->seen[i][j]);
        }
    }
    wisp_tcpip_get_stats(t.ctx, &st);
    assert_int_equal(st.inputs, INPUTTERS * INPUTS_PER_THREAD + 1u);

    wisp_tcpip_lock(t.ctx);
    len = tu_pop(t.e, f, sizeof f);
    assert_int_equal(len, 34 + 8 + 3);
    assert_int_equal(f[23], WISP_IP4_PROTO_ICMP);
    assert_int_equal(f[34], 0); /* echo reply */
    assert_int_equal(wisp_rd16(f + 38), 0x99);
    assert_memory_equal(f + 42, "abc", 3);
    wisp_udp_remove(pcb);
    wisp_tcpip_unlock(t.ctx);
    free(log);
    tenv_stop_free(&t);
}

/* ------------------------------------------------- pool of messages */

struct gate {
    wisp_sys_sem_t entered, release;
};

static wisp_err_t blocker(struct wisp_stack *s, void *arg)
{
    struct gate *g = (struct gate *)arg;
    (void)s;
    wisp_sys_sem_signal(&g->entered);
    (void)wisp_sys_sem_wait(&g->release, WISP_SYS_FOREVER);
    return WISP_OK;
}

static wisp_err_t count_cb(struct wisp_stack *s, void *arg)
{
    (void)s;
    (*(unsigned *)arg)++;
    return WISP_OK;
}

#define CB_ROOM (WISP_TCPIP_MSG_COUNT < WISP_TCPIP_MBOX_SIZE ? WISP_TCPIP_MSG_COUNT : WISP_TCPIP_MBOX_SIZE)

/* Callbacks use the context's message records: when all are queued, the
 * next callback fails at once with WISP_ERR_MEM instead of blocking. */
static void test_tcpip_callback_fails_when_messages_exhausted(void **state)
{
    struct tenv t = tenv_start(0);
    struct gate g;
    struct wisp_tcpip_stats st;
    unsigned ran = 0, i;
    (void)state;
    assert_int_equal(wisp_sys_sem_new(&g.entered, 0), WISP_OK);
    assert_int_equal(wisp_sys_sem_new(&g.release, 0), WISP_OK);
    assert_int_equal(wisp_tcpip_callback(t.ctx, blocker, &g), WISP_OK);
    assert_int_equal(wisp_sys_sem_wait(&g.entered, 10000), WISP_OK);
    /* The blocker's record was released before it ran, and the mailbox is
     * empty: records (or mailbox slots, if fewer) are all available. */
    for (i = 0; i < CB_ROOM; i++) {
        assert_int_equal(wisp_tcpip_callback(t.ctx, count_cb, &ran), WISP_OK);
    }
    assert_int_equal(wisp_tcpip_callback(t.ctx, count_cb, &ran), WISP_ERR_MEM);
    wisp_sys_sem_signal(&g.release);
    assert_int_equal(wisp_tcpip_call(t.ctx, noop, NULL), WISP_OK);
    assert_int_equal(ran, CB_ROOM);
    wisp_tcpip_get_stats(t.ctx, &st);
    assert_int_equal(st.callback_fails, 1);
    wisp_sys_sem_free(&g.entered);
    wisp_sys_sem_free(&g.release);
    tenv_stop_free(&t);
}

/* ---------------------------------------------------------- shutdown */

struct pending_call {
    struct wisp_tcpip *ctx;
    unsigned *ran;
    wisp_err_t result;
};

static void call_worker(void *arg)
{
    struct pending_call *pc = (struct pending_call *)arg;
    pc->result = wisp_tcpip_call(pc->ctx, count_cb, pc->ran);
}

static void test_tcpip_stop_frees_pending_messages(void **state)
{
    struct tenv t = tenv_start(0);
    struct gate g;
    struct pending_call pc;
    struct wisp_tcpip_stats st;
    wisp_sys_thread_t caller;
    unsigned ran = 0, call_ran = 0, i;
    struct wisp_pbuf *frames[10];
    uint8_t f[128];
    size_t n;
    (void)state;
    assert_int_equal(wisp_sys_sem_new(&g.entered, 0), WISP_OK);
    assert_int_equal(wisp_sys_sem_new(&g.release, 0), WISP_OK);

    /* Receive pbufs first: allocating needs the core, which the blocked
     * stack thread will hold. */
    n = tu_udp_frame(f, 1, 7000, "pending", 7);
    for (i = 0; i < 10; i++) {
        frames[i] = wisp_tcpip_alloc_rx(t.ctx, (uint16_t)n);
        assert_non_null(frames[i]);
        assert_int_equal(wisp_pbuf_copy_in(frames[i], f, (uint16_t)n, 0), WISP_OK);
    }
    /* Hold the stack thread inside a callback while messages pile up. */
    assert_int_equal(wisp_tcpip_callback(t.ctx, blocker, &g), WISP_OK);
    assert_int_equal(wisp_sys_sem_wait(&g.entered, 10000), WISP_OK);
    for (i = 0; i < 10; i++) {
        assert_int_equal(wisp_tcpip_input(t.ctx, &t.e->dev.dev, frames[i]), WISP_OK);
    }
    for (i = 0; i < 5; i++) {
        assert_int_equal(wisp_tcpip_callback(t.ctx, count_cb, &ran), WISP_OK);
    }
    pc.ctx = t.ctx;
    pc.ran = &call_ran;
    pc.result = WISP_OK;
    assert_int_equal(wisp_sys_thread_new(&caller, "caller", call_worker, &pc, 0, 0), WISP_OK);
    TU_WAIT_BLOCKED(&caller, NULL); /* the call posted and waits (either way it must not run) */

    /* Stop after the current message; then let the blocker return. */
    wisp_tcpip_request_stop(t.ctx);
    wisp_sys_sem_signal(&g.release);
    wisp_tcpip_stop(t.ctx);
    assert_int_equal(wisp_sys_thread_join(&caller), WISP_OK);

    assert_int_equal(ran, 0);                 /* queued callbacks dropped */
    assert_int_equal(call_ran, 0);            /* the waiting call did not run ... */
    assert_int_equal(pc.result, WISP_ERR_CLSD); /* ... and was told so */
    assert_int_equal(TU_CTR(t.e, TCPIP_INPUT_DROP), 10); /* frames freed, counted */
    assert_int_equal(TU_CTR(t.e, UDP_RX), 0);
    st = t.ctx->st; /* stopped: single-threaded again */
    assert_true(st.dropped_at_stop >= 15);
    assert_null(t.e->s->core_lock);
    wisp_sys_sem_free(&g.entered);
    wisp_sys_sem_free(&g.release);
    free(t.ctx);
    tu_env_free(t.e); /* every receive pbuf is back: no leak */
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_tcpip_start_stop_clean),
        cmocka_unit_test(test_tcpip_call_runs_on_stack_thread_and_returns_result),
        cmocka_unit_test(test_tcpip_callbacks_run_on_stack_thread_in_order),
        cmocka_unit_test(test_tcpip_core_locking_four_threads_udp_no_loss),
        cmocka_unit_test(test_tcpip_run_uses_configured_mechanism),
        cmocka_unit_test(test_tcpip_timer_armed_under_lock_wakes_sleeping_thread),
        cmocka_unit_test(test_tcpip_stack_timers_fire_on_stack_thread),
        cmocka_unit_test(test_tcpip_input_from_driver_threads_reaches_stack),
        cmocka_unit_test(test_tcpip_callback_fails_when_messages_exhausted),
        cmocka_unit_test(test_tcpip_stop_frees_pending_messages),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
