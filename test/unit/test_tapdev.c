/**
 * @file test_tapdev.c
 * The unix TAP driver's deferred transmit (ports/unix/tapdev.c), with a
 * SOCK_SEQPACKET socket pair standing in for the tap fd (one frame per
 * read / write, like a tap): frames of every size come out whole and in
 * order across ring wraps; a full ring refuses (WISP_ERR_WOULDBLOCK) and
 * owes exactly one tx_ready once half empty; the wake fd is signalled only
 * while the I/O thread sleeps; EAGAIN from the fd keeps the frame and waits
 * for POLLOUT; an oversize frame is an error; wisp_tapdev_tx_direct()
 * writes the rest and returns to direct writes; and a producer thread
 * (under a "core" mutex, like transmit under the core lock) against a
 * flushing thread loses and reorders nothing.
 */
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/socket.h>

#include "testutil.h"
#include "tapdev.h"

#define FRAME_MAX 9000u

struct fixture {
    struct tu_env *e;
    struct wisp_tapdev *t;
    int peer;                 /**< the "Linux side": frames the tap wrote */
    uint8_t buf[65536];
    uint32_t rng;
};

static uint32_t rnd(struct fixture *f)
{
    f->rng = f->rng * 1103515245u + 12345u;
    return f->rng >> 8;
}

static uint8_t pat(uint32_t seq, uint32_t i)
{
    return (uint8_t)(seq * 131u + i * 7u + (i >> 8));
}

/* A frame of len bytes (>= 4) numbered seq, as a pbuf chain. */
static struct wisp_pbuf *make_frame(struct fixture *f, uint32_t seq, uint16_t len)
{
    static uint8_t tmp[FRAME_MAX];
    struct wisp_pbuf *p = wisp_pbuf_alloc(f->e->s, WISP_LAYER_RAW, len, WISP_PBUF_POOL);
    uint32_t i;
    assert_non_null(p);
    for (i = 0; i < len; i++) {
        tmp[i] = pat(seq, i);
    }
    memcpy(tmp, &seq, 4);
    assert_int_equal(wisp_pbuf_copy_in(p, tmp, len, 0), WISP_OK);
    return p;
}

static wisp_err_t xmit(struct fixture *f, uint32_t seq, uint16_t len)
{
    struct wisp_pbuf *p = make_frame(f, seq, len);
    wisp_err_t r = f->t->dev.ops->transmit(&f->t->dev, p);
    wisp_pbuf_free(p); /* transmit never takes the caller's reference */
    return r;
}

/* Read every frame the tap wrote so far; each must be the next expected
 * one (seq *next, length lens[seq]). Returns how many were read. */
static unsigned drain_check(struct fixture *f, uint32_t *next, const uint16_t *lens)
{
    unsigned got = 0;
    for (;;) {
        ssize_t n = recv(f->peer, f->buf, sizeof f->buf, 0);
        uint32_t seq, i;
        if (n < 0) {
            assert_true(errno == EAGAIN || errno == EWOULDBLOCK);
            return got;
        }
        memcpy(&seq, f->buf, 4);
        assert_int_equal(seq, *next);
        assert_int_equal((size_t)n, lens[seq]);
        for (i = 4; i < (uint32_t)n; i++) {
            if (f->buf[i] != pat(seq, i)) {
                fail_msg("frame %u byte %u: %u, want %u", (unsigned)seq, (unsigned)i, f->buf[i], pat(seq, i));
            }
        }
        (*next)++;
        got++;
    }
}

static bool wake_readable(const struct fixture *f)
{
    struct pollfd p;
    p.fd = wisp_tapdev_tx_wake_fd(f->t);
    p.events = POLLIN;
    p.revents = 0;
    return poll(&p, 1, 0) == 1 && (p.revents & POLLIN);
}

static struct fixture *fx_new(size_t ring)
{
    struct fixture *f = calloc(1, sizeof *f);
    int sv[2];
    assert_non_null(f);
    f->e = tu_env_new(7);
    f->t = calloc(1, sizeof *f->t);
    assert_non_null(f->t);
    assert_int_equal(socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_NONBLOCK | SOCK_CLOEXEC, 0, sv), 0);
    wisp_tapdev_attach_fd(f->t, f->e->s, sv[0], "test0");
    f->peer = sv[1];
    f->rng = 12345u;
    assert_int_equal(wisp_tapdev_tx_defer(f->t, ring, NULL, 0), 0);
    assert_true(wisp_tapdev_tx_wake_fd(f->t) >= 0);
    return f;
}

static void fx_free(struct fixture *f)
{
    wisp_tapdev_close(f->t);
    close(f->peer);
    tu_env_free(f->e);
    free(f->t);
    free(f);
}

/* Random sizes (14..FRAME_MAX) through a 16 KB ring: many wraps, refusals
 * retried as the interface would after flushing; everything arrives whole
 * and in order. */
static void test_order_across_wraps(void **state)
{
    enum { N = 3000 };
    static uint16_t lens[N];
    struct fixture *f = fx_new(16384);
    uint32_t seq, next = 0;
    unsigned refused = 0;
    (void)state;

    for (seq = 0; seq < N; seq++) {
        wisp_err_t r;
        lens[seq] = (uint16_t)(rnd(f) % 4 == 0 ? 14u + rnd(f) % (FRAME_MAX - 14u) : 60u + rnd(f) % 1455u);
        while ((r = xmit(f, seq, lens[seq])) == WISP_ERR_WOULDBLOCK) {
            refused++;
            assert_true(wisp_tapdev_tx_pending(f->t));
            assert_true(wisp_tapdev_tx_flush(f->t, 1u + rnd(f) % 3u) > 0);
            (void)drain_check(f, &next, lens);
        }
        assert_int_equal(r, WISP_OK);
        if (rnd(f) % 3 == 0) {
            (void)wisp_tapdev_tx_flush(f->t, rnd(f) % 5u);
            (void)drain_check(f, &next, lens);
        }
    }
    while (wisp_tapdev_tx_pending(f->t)) {
        assert_true(wisp_tapdev_tx_flush(f->t, 7) > 0);
        (void)drain_check(f, &next, lens);
    }
    (void)drain_check(f, &next, lens);
    assert_int_equal(next, N);
    assert_true(refused > 100); /* the ring was really full, often */
    assert_int_equal(f->t->tx_frames, N);
    assert_int_equal(f->t->tx_errors, 0);
    wisp_tapdev_tx_direct(f->t);
    assert_int_equal(f->t->tx_ring_full, refused);
    assert_true(f->t->tx_ring_high <= 16384u);
    fx_free(f);
}

/* A refusal owes one tx_ready, due only once half the ring is free. */
static void test_refusal_owes_one_tx_ready(void **state)
{
    static uint16_t lens[64];
    struct fixture *f = fx_new(8192);
    uint32_t seq = 0, next = 0;
    (void)state;

    assert_false(wisp_tapdev_tx_ready_due(f->t));
    for (;;) {
        lens[seq] = 1000;
        if (xmit(f, seq, 1000) == WISP_ERR_WOULDBLOCK) {
            break;
        }
        seq++;
        assert_true(seq < 64);
    }
    assert_int_equal(seq, 8); /* 8 records of 1004 bytes in 8192 */
    assert_false(wisp_tapdev_tx_ready_due(f->t)); /* still full */
    assert_int_equal(wisp_tapdev_tx_flush(f->t, 1), 1);
    assert_false(wisp_tapdev_tx_ready_due(f->t)); /* 7 of 8 used: more than half */
    assert_int_equal(wisp_tapdev_tx_flush(f->t, 3), 3);
    assert_true(wisp_tapdev_tx_ready_due(f->t));  /* 4 of 8: half */
    assert_false(wisp_tapdev_tx_ready_due(f->t)); /* once */
    assert_int_equal(wisp_tapdev_tx_flush(f->t, 100), 4);
    assert_false(wisp_tapdev_tx_ready_due(f->t));
    assert_int_equal(drain_check(f, &next, lens), 8);
    fx_free(f);
}

/* The wake fd: signalled once per sleep, only while sleeping. */
static void test_wake_only_while_sleeping(void **state)
{
    static uint16_t lens[8] = { 100, 100, 100, 100 };
    struct fixture *f = fx_new(0);
    uint32_t next = 0;
    (void)state;

    assert_true(wisp_tapdev_tx_sleep_begin(f->t)); /* empty: may sleep */
    assert_false(wake_readable(f));
    assert_int_equal(xmit(f, 0, 100), WISP_OK);
    assert_true(wake_readable(f));
    assert_int_equal(xmit(f, 1, 100), WISP_OK); /* no second signal */
    wisp_tapdev_tx_sleep_end(f->t, POLLIN);
    assert_false(wake_readable(f)); /* drained */
    assert_int_equal(xmit(f, 2, 100), WISP_OK); /* awake: no signal */
    assert_false(wake_readable(f));
    assert_false(wisp_tapdev_tx_sleep_begin(f->t)); /* frames queued: flush first */
    assert_int_equal(wisp_tapdev_tx_flush(f->t, 10), 3);
    assert_true(wisp_tapdev_tx_sleep_begin(f->t));
    wisp_tapdev_tx_sleep_end(f->t, 0);
    assert_int_equal(xmit(f, 3, 100), WISP_OK);
    assert_false(wake_readable(f));
    wisp_tapdev_tx_direct(f->t); /* writes frame 3, back to direct mode */
    assert_int_equal(wisp_tapdev_tx_wake_fd(f->t), -1);
    assert_int_equal(f->t->tx_ring_kicks, 1);
    assert_int_equal(drain_check(f, &next, lens), 4);
    lens[4] = 200;
    assert_int_equal(xmit(f, 4, 200), WISP_OK); /* direct: written at once */
    assert_int_equal(drain_check(f, &next, lens), 1);
    assert_int_equal(f->t->tx_frames, 5);
    fx_free(f);
}

/* Short frames (wisp_tapdev_tx_direct_max): written by their producer
 * only while the ring is empty and the I/O thread sleeps; otherwise, and
 * for longer frames, queued -- and nothing overtakes a queued frame. */
static void test_short_frames_direct(void **state)
{
    static uint16_t lens[16];
    struct fixture *f = fx_new(0);
    uint32_t next = 0;
    unsigned i;
    (void)state;

    for (i = 0; i < 16; i++) {
        lens[i] = (uint16_t)(i == 1 || i == 6 ? 1000u : 100u);
    }
    assert_int_equal(xmit(f, 0, 100), WISP_OK); /* the default: none direct */
    assert_true(wisp_tapdev_tx_pending(f->t));
    assert_int_equal(wisp_tapdev_tx_flush(f->t, 10), 1);
    wisp_tapdev_tx_direct_max(f->t, 256);
    assert_true(wisp_tapdev_tx_sleep_begin(f->t));
    assert_int_equal(xmit(f, 1, 1000), WISP_OK); /* long: queued, wakes the I/O thread */
    assert_true(wisp_tapdev_tx_pending(f->t));
    assert_true(wake_readable(f));
    assert_int_equal(xmit(f, 2, 100), WISP_OK); /* short, but behind a queued frame */
    assert_true(wisp_tapdev_tx_pending(f->t));
    wisp_tapdev_tx_sleep_end(f->t, POLLIN);
    assert_int_equal(wisp_tapdev_tx_flush(f->t, 10), 2);
    assert_int_equal(drain_check(f, &next, lens), 3);
    assert_int_equal(xmit(f, 3, 100), WISP_OK); /* ring empty, I/O thread awake: queued */
    assert_true(wisp_tapdev_tx_pending(f->t));
    assert_int_equal(wisp_tapdev_tx_flush(f->t, 10), 1);
    assert_true(wisp_tapdev_tx_sleep_begin(f->t));
    assert_int_equal(xmit(f, 4, 100), WISP_OK); /* empty and asleep: written at once */
    assert_int_equal(xmit(f, 5, 100), WISP_OK);
    assert_false(wisp_tapdev_tx_pending(f->t));
    assert_false(wake_readable(f));             /* no wake-up for them */
    assert_int_equal(drain_check(f, &next, lens), 3); /* 3 (flushed), 4, 5 */
    assert_int_equal(xmit(f, 6, 1000), WISP_OK); /* long: queued */
    assert_int_equal(xmit(f, 7, 100), WISP_OK);  /* short behind it: queued */
    assert_true(wake_readable(f));
    wisp_tapdev_tx_sleep_end(f->t, POLLIN);
    assert_int_equal(wisp_tapdev_tx_flush(f->t, 10), 2);
    assert_int_equal(drain_check(f, &next, lens), 2);
    assert_int_equal(next, 8);
    wisp_tapdev_tx_direct(f->t);
    assert_int_equal(f->t->tx_ring_direct, 2);
    assert_int_equal(f->t->tx_frames, 8);
    assert_int_equal(f->t->tx_errors, 0);
    fx_free(f);
}

/* The fd says EAGAIN: the frame stays queued, nothing more is written
 * until POLLOUT was seen; then the rest follows, in order. */
static void test_eagain_waits_for_pollout(void **state)
{
    enum { N = 200 };
    static uint16_t lens[N];
    struct fixture *f = fx_new(N * 1100u);
    uint32_t seq, next = 0;
    unsigned rounds = 0;
    int small = 4096;
    (void)state;

    assert_int_equal(setsockopt(f->t->fd, SOL_SOCKET, SO_SNDBUF, &small, sizeof small), 0);
    for (seq = 0; seq < N; seq++) {
        lens[seq] = 1000;
        assert_int_equal(xmit(f, seq, 1000), WISP_OK);
    }
    while (next < N) {
        unsigned w = wisp_tapdev_tx_flush(f->t, 1000);
        if (next + w < N) {
            assert_int_equal(f->t->want_pollout, 1);
            assert_true(wisp_tapdev_poll_events(f->t) & POLLOUT);
            assert_int_equal(wisp_tapdev_tx_flush(f->t, 1000), 0); /* waits for POLLOUT */
            assert_false(wisp_tapdev_tx_sleep_begin(f->t));
        }
        (void)drain_check(f, &next, lens);
        (void)wisp_tapdev_handle(f->t, POLLOUT);
        assert_int_equal(f->t->want_pollout, 0);
        rounds++;
        assert_true(rounds < 1000);
    }
    assert_true(rounds > 1); /* the small buffer did say EAGAIN */
    assert_true(f->t->tx_wouldblock > 0);
    assert_false(wisp_tapdev_tx_pending(f->t));
    assert_int_equal(f->t->tx_frames, N);
    fx_free(f);
}

/* A frame larger than the whole ring: an error, counted; the ring goes on. */
static void test_oversize_frame(void **state)
{
    static uint16_t lens[2] = { 100 };
    struct fixture *f = fx_new(4096);
    uint32_t next = 0;
    (void)state;

    assert_int_equal(xmit(f, 0, 100), WISP_OK);
    assert_int_equal(xmit(f, 1, 5000), WISP_ERR_IF);
    wisp_tapdev_tx_direct(f->t);
    assert_int_equal(drain_check(f, &next, lens), 1);
    assert_int_equal(f->t->tx_errors, 1);
    fx_free(f);
}

/* ---------------------------------------------- two threads */

struct mt {
    struct fixture *f;
    pthread_mutex_t core;     /**< stands for the core lock */
    uint16_t *lens;
    uint32_t n;
    unsigned refused;
};

static void *producer(void *arg)
{
    struct mt *m = arg;
    uint32_t seq;
    for (seq = 0; seq < m->n; seq++) {
        for (;;) {
            wisp_err_t r;
            pthread_mutex_lock(&m->core);
            r = xmit(m->f, seq, m->lens[seq]);
            pthread_mutex_unlock(&m->core);
            if (r == WISP_OK) {
                break;
            }
            m->refused++;
            sched_yield();
        }
    }
    return NULL;
}

static void test_producer_thread_vs_flusher(void **state)
{
    enum { N = 20000 };
    static uint16_t lens[N];
    struct fixture *f = fx_new(32768);
    struct mt m;
    pthread_t th;
    uint32_t i, next = 0;
    unsigned guard = 0;
    (void)state;

    for (i = 0; i < N; i++) {
        lens[i] = (uint16_t)(60u + rnd(f) % 1455u);
    }
    memset(&m, 0, sizeof m);
    m.f = f;
    m.lens = lens;
    m.n = N;
    assert_int_equal(pthread_mutex_init(&m.core, NULL), 0);
    assert_int_equal(pthread_create(&th, NULL, producer, &m), 0);
    /* The I/O thread's loop, as in wisp-node's node_tap_pump (the peer is
     * drained at once: a unix datagram queue holds only a few frames). */
    while (next < N && guard++ < 2000000u) {
        struct pollfd p[2];
        int wait = 20;
        (void)wisp_tapdev_tx_flush(f->t, 64);
        (void)drain_check(f, &next, lens);
        (void)wisp_tapdev_tx_ready_due(f->t);
        if (!wisp_tapdev_tx_sleep_begin(f->t) && !f->t->want_pollout) {
            wait = 0;
        }
        p[0].fd = f->t->want_pollout ? f->t->fd : -1;
        p[0].events = POLLOUT;
        p[1].fd = wisp_tapdev_tx_wake_fd(f->t);
        p[1].events = POLLIN;
        p[0].revents = p[1].revents = 0;
        (void)poll(p, 2, wait);
        wisp_tapdev_tx_sleep_end(f->t, p[1].revents);
        if (p[0].revents & POLLOUT) {
            (void)wisp_tapdev_handle(f->t, POLLOUT);
        }
    }
    assert_int_equal(pthread_join(th, NULL), 0);
    assert_int_equal(next, N);
    assert_false(wisp_tapdev_tx_pending(f->t));
    assert_int_equal(f->t->tx_frames, N);
    pthread_mutex_destroy(&m.core);
    fx_free(f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_order_across_wraps),
        cmocka_unit_test(test_refusal_owes_one_tx_ready),
        cmocka_unit_test(test_wake_only_while_sleeping),
        cmocka_unit_test(test_short_frames_direct),
        cmocka_unit_test(test_eagain_waits_for_pollout),
        cmocka_unit_test(test_oversize_frame),
        cmocka_unit_test(test_producer_thread_vs_flusher),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
