/**
 * @file test_sys.c
 * The POSIX sys port (ports/unix/sys_posix.c) against the contract of
 * wisp/sys.h: mutual exclusion, owner tracking and the debug detection of
 * recursive locking and unlocking by a non-owner, semaphore counting and
 * timeouts, mailbox order, capacity, blocking and timeouts, threads, sleep,
 * the monotonic clock, and the core ownership check.
 *
 * Timing: machines are noisy, so timed tests only check what the contract
 * guarantees -- a wait that returns WISP_ERR_TIMEOUT waited at least its
 * timeout -- and use generous upper bounds only where something must
 * happen eventually.
 */
#define _POSIX_C_SOURCE 200809L

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <time.h>
#include <unistd.h>
#include <sys/wait.h>
#include <cmocka.h>

#include "wisp/sys.h"
#include "wisp/tcpip.h"
#include "wisp/stack.h"

/* Precise monotonic microseconds, independent of the port under test. */
static uint64_t mono_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u;
}

/* Run fn(arg) in a forked child with stderr captured; returns the wait
 * status and copies what the child printed to stderr into out. */
static int run_in_child(void (*fn)(void *), void *arg, char *out, size_t cap)
{
    int fds[2], status = 0;
    pid_t pid;
    ssize_t n;
    size_t got = 0;

    assert_int_equal(pipe(fds), 0);
    fflush(stdout);
    fflush(stderr);
    pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        close(fds[0]);
        dup2(fds[1], 2);
        fn(arg);
        _exit(0); /* fn returned: no abort */
    }
    close(fds[1]);
    while (got + 1 < cap && (n = read(fds[0], out + got, cap - 1 - got)) > 0) {
        got += (size_t)n;
    }
    out[got] = '\0';
    close(fds[0]);
    assert_int_equal(waitpid(pid, &status, 0), pid);
    return status;
}

static bool aborted(int status)
{
    return WIFSIGNALED(status) && WTERMSIG(status) == SIGABRT;
}

/* --------------------------------------------------------------- mutexes */

#define INC_THREADS 4
#define INC_PER_THREAD 100000

struct inc_shared {
    wisp_sys_mutex_t m;
    volatile unsigned long counter;  /* non-atomic read-modify-write */
};

static void inc_worker(void *arg)
{
    struct inc_shared *sh = (struct inc_shared *)arg;
    int i;
    for (i = 0; i < INC_PER_THREAD; i++) {
        wisp_sys_mutex_lock(&sh->m);
        sh->counter = sh->counter + 1u;
        wisp_sys_mutex_unlock(&sh->m);
    }
}

static void test_mutex_excludes_four_threads(void **state)
{
    struct inc_shared sh;
    wisp_sys_thread_t t[INC_THREADS];
    int i;
    (void)state;
    assert_int_equal(wisp_sys_init(), WISP_OK);
    assert_int_equal(wisp_sys_mutex_new(&sh.m), WISP_OK);
    sh.counter = 0;
    for (i = 0; i < INC_THREADS; i++) {
        assert_int_equal(wisp_sys_thread_new(&t[i], "inc", inc_worker, &sh, 0, 0), WISP_OK);
    }
    for (i = 0; i < INC_THREADS; i++) {
        assert_int_equal(wisp_sys_thread_join(&t[i]), WISP_OK);
    }
    assert_int_equal(sh.counter, (unsigned long)INC_THREADS * INC_PER_THREAD);
    wisp_sys_mutex_free(&sh.m);
}

struct held_probe {
    wisp_sys_mutex_t *m;
    bool held_in_other;
};

static void held_worker(void *arg)
{
    struct held_probe *p = (struct held_probe *)arg;
    p->held_in_other = wisp_sys_mutex_held(p->m);
}

static void test_mutex_held_only_by_owner(void **state)
{
    wisp_sys_mutex_t m;
    wisp_sys_thread_t t;
    struct held_probe p;
    (void)state;
    assert_int_equal(wisp_sys_mutex_new(&m), WISP_OK);
    assert_false(wisp_sys_mutex_held(&m));
    wisp_sys_mutex_lock(&m);
    assert_true(wisp_sys_mutex_held(&m));
    p.m = &m;
    p.held_in_other = true;
    assert_int_equal(wisp_sys_thread_new(&t, "held", held_worker, &p, 0, 0), WISP_OK);
    assert_int_equal(wisp_sys_thread_join(&t), WISP_OK);
    assert_false(p.held_in_other);
    wisp_sys_mutex_unlock(&m);
    assert_false(wisp_sys_mutex_held(&m));
    wisp_sys_mutex_free(&m);
}

#if WISP_DEBUG
static void lock_twice(void *arg)
{
    wisp_sys_mutex_t m;
    (void)arg;
    wisp_sys_mutex_new(&m);
    wisp_sys_mutex_lock(&m);
    wisp_sys_mutex_lock(&m); /* must abort, not deadlock */
}

static void test_mutex_recursive_lock_detected_in_debug(void **state)
{
    char err[512];
    (void)state;
    assert_true(aborted(run_in_child(lock_twice, NULL, err, sizeof err)));
    assert_non_null(strstr(err, "assertion failed"));
}

static void locker(void *arg)
{
    wisp_sys_mutex_lock((wisp_sys_mutex_t *)arg);
}

static void unlock_foreign(void *arg)
{
    wisp_sys_mutex_t m;
    wisp_sys_thread_t t;
    (void)arg;
    wisp_sys_mutex_new(&m);
    wisp_sys_thread_new(&t, "locker", locker, &m, 0, 0); /* exits holding m */
    wisp_sys_thread_join(&t);
    wisp_sys_mutex_unlock(&m); /* not ours: must abort */
}

static void unlock_unlocked(void *arg)
{
    wisp_sys_mutex_t m;
    (void)arg;
    wisp_sys_mutex_new(&m);
    wisp_sys_mutex_unlock(&m);
}

static void test_mutex_unlock_by_non_owner_detected_in_debug(void **state)
{
    char err[512];
    (void)state;
    assert_true(aborted(run_in_child(unlock_foreign, NULL, err, sizeof err)));
    assert_non_null(strstr(err, "assertion failed"));
    assert_true(aborted(run_in_child(unlock_unlocked, NULL, err, sizeof err)));
}
#endif

/* ------------------------------------------------------------ semaphores */

static void test_sem_counts(void **state)
{
    wisp_sys_sem_t s;
    (void)state;
    assert_int_equal(wisp_sys_sem_new(&s, 2), WISP_OK);
    wisp_sys_sem_signal(&s);
    assert_int_equal(wisp_sys_sem_wait(&s, 0), WISP_OK);
    assert_int_equal(wisp_sys_sem_wait(&s, WISP_SYS_NO_WAIT), WISP_OK);
    assert_int_equal(wisp_sys_sem_wait(&s, WISP_SYS_FOREVER), WISP_OK);
    assert_int_equal(wisp_sys_sem_wait(&s, 0), WISP_ERR_TIMEOUT);
    wisp_sys_sem_free(&s);
}

static void test_sem_wait_times_out_after_at_least_timeout(void **state)
{
    wisp_sys_sem_t s;
    uint64_t t0;
    uint32_t timeouts[] = { 1, 20, 120 };
    unsigned i;
    (void)state;
    assert_int_equal(wisp_sys_sem_new(&s, 0), WISP_OK);
    for (i = 0; i < sizeof timeouts / sizeof timeouts[0]; i++) {
        t0 = mono_us();
        assert_int_equal(wisp_sys_sem_wait(&s, timeouts[i]), WISP_ERR_TIMEOUT);
        assert_true(mono_us() - t0 >= (uint64_t)timeouts[i] * 1000u);
    }
    /* A zero timeout returns at once (generous bound: 1 s). */
    t0 = mono_us();
    assert_int_equal(wisp_sys_sem_wait(&s, 0), WISP_ERR_TIMEOUT);
    assert_true(mono_us() - t0 < 1000000u);
    wisp_sys_sem_free(&s);
}

struct sem_waiter {
    wisp_sys_sem_t *s;
    wisp_err_t r;
};

static void sem_wait_forever(void *arg)
{
    struct sem_waiter *w = (struct sem_waiter *)arg;
    w->r = wisp_sys_sem_wait(w->s, WISP_SYS_FOREVER);
}

static void test_sem_signal_wakes_waiter(void **state)
{
    wisp_sys_sem_t s;
    wisp_sys_thread_t t;
    struct sem_waiter w;
    (void)state;
    assert_int_equal(wisp_sys_sem_new(&s, 0), WISP_OK);
    w.s = &s;
    w.r = WISP_ERR_VAL;
    assert_int_equal(wisp_sys_thread_new(&t, "waiter", sem_wait_forever, &w, 0, 0), WISP_OK);
    /* it waits: the signal below is what wakes it */
    assert_true(wisp_sys_debug_wait_blocked(&t, &s, 10000));
    wisp_sys_sem_signal(&s);
    assert_int_equal(wisp_sys_thread_join(&t), WISP_OK);
    assert_int_equal(w.r, WISP_OK);
    assert_int_equal(wisp_sys_sem_wait(&s, 0), WISP_ERR_TIMEOUT); /* consumed */
    wisp_sys_sem_free(&s);
}

/* ------------------------------------------------------------- mailboxes */

static void test_mbox_fifo_order(void **state)
{
    wisp_sys_mbox_t mb;
    int v[10];
    void *msg;
    int i;
    (void)state;
    assert_int_equal(wisp_sys_mbox_new(&mb, 10), WISP_OK);
    for (i = 0; i < 10; i++) {
        if (i % 2) {
            wisp_sys_mbox_post(&mb, &v[i]);
        } else {
            assert_int_equal(wisp_sys_mbox_trypost(&mb, &v[i]), WISP_OK);
        }
    }
    for (i = 0; i < 10; i++) {
        msg = NULL;
        if (i % 2) {
            assert_int_equal(wisp_sys_mbox_fetch(&mb, &msg, WISP_SYS_FOREVER), WISP_OK);
        } else {
            assert_int_equal(wisp_sys_mbox_tryfetch(&mb, &msg), WISP_OK);
        }
        assert_ptr_equal(msg, &v[i]);
    }
    /* NULL is a message like any other. */
    assert_int_equal(wisp_sys_mbox_trypost(&mb, NULL), WISP_OK);
    msg = &v[0];
    assert_int_equal(wisp_sys_mbox_fetch(&mb, &msg, 0), WISP_OK);
    assert_null(msg);
    wisp_sys_mbox_free(&mb);
}

#define FIFO_PRODUCERS 3
#define FIFO_PER_PRODUCER 2000

struct producer {
    wisp_sys_mbox_t *mb;
    uintptr_t id;
};

static void produce(void *arg)
{
    struct producer *p = (struct producer *)arg;
    uintptr_t i;
    for (i = 0; i < FIFO_PER_PRODUCER; i++) {
        wisp_sys_mbox_post(p->mb, (void *)((p->id << 16) | i));
    }
}

/* Several producers through a small mailbox: each producer's messages
 * arrive in its order, none lost or duplicated (posts block when full). */
static void test_mbox_fifo_order_per_producer_under_contention(void **state)
{
    wisp_sys_mbox_t mb;
    wisp_sys_thread_t t[FIFO_PRODUCERS];
    struct producer p[FIFO_PRODUCERS];
    uintptr_t next[FIFO_PRODUCERS] = { 0 };
    unsigned i, total = FIFO_PRODUCERS * FIFO_PER_PRODUCER;
    (void)state;
    assert_int_equal(wisp_sys_mbox_new(&mb, 4), WISP_OK);
    for (i = 0; i < FIFO_PRODUCERS; i++) {
        p[i].mb = &mb;
        p[i].id = i;
        assert_int_equal(wisp_sys_thread_new(&t[i], "prod", produce, &p[i], 0, 0), WISP_OK);
    }
    for (i = 0; i < total; i++) {
        void *msg;
        uintptr_t v, id;
        assert_int_equal(wisp_sys_mbox_fetch(&mb, &msg, 10000), WISP_OK);
        v = (uintptr_t)msg;
        id = v >> 16;
        assert_true(id < FIFO_PRODUCERS);
        assert_int_equal(v & 0xffffu, next[id]);
        next[id]++;
    }
    for (i = 0; i < FIFO_PRODUCERS; i++) {
        assert_int_equal(wisp_sys_thread_join(&t[i]), WISP_OK);
        assert_int_equal(next[i], FIFO_PER_PRODUCER);
    }
    wisp_sys_mbox_free(&mb);
}

static void test_mbox_trypost_fails_when_full(void **state)
{
    wisp_sys_mbox_t mb;
    int a, b, c;
    void *msg;
    (void)state;
    assert_int_equal(wisp_sys_mbox_new(&mb, 2), WISP_OK);
    assert_int_equal(wisp_sys_mbox_trypost(&mb, &a), WISP_OK);
    assert_int_equal(wisp_sys_mbox_trypost(&mb, &b), WISP_OK);
    assert_int_equal(wisp_sys_mbox_trypost(&mb, &c), WISP_ERR_WOULDBLOCK);
    /* Nothing of the refused post got in. */
    assert_int_equal(wisp_sys_mbox_tryfetch(&mb, &msg), WISP_OK);
    assert_ptr_equal(msg, &a);
    assert_int_equal(wisp_sys_mbox_tryfetch(&mb, &msg), WISP_OK);
    assert_ptr_equal(msg, &b);
    assert_int_equal(wisp_sys_mbox_tryfetch(&mb, &msg), WISP_ERR_WOULDBLOCK);
    assert_ptr_equal(msg, &b);
    wisp_sys_mbox_free(&mb);
}

struct blocked_poster {
    wisp_sys_mbox_t *mb;
    void *msg;
    wisp_sys_sem_t posted;
};

static void post_blocking(void *arg)
{
    struct blocked_poster *bp = (struct blocked_poster *)arg;
    wisp_sys_mbox_post(bp->mb, bp->msg);
    wisp_sys_sem_signal(&bp->posted);
}

static void test_mbox_blocking_post_unblocks_when_fetched(void **state)
{
    wisp_sys_mbox_t mb;
    wisp_sys_thread_t t;
    struct blocked_poster bp;
    int first, second;
    void *msg;
    (void)state;
    assert_int_equal(wisp_sys_mbox_new(&mb, 1), WISP_OK);
    wisp_sys_mbox_post(&mb, &first);
    bp.mb = &mb;
    bp.msg = &second;
    assert_int_equal(wisp_sys_sem_new(&bp.posted, 0), WISP_OK);
    assert_int_equal(wisp_sys_thread_new(&t, "poster", post_blocking, &bp, 0, 0), WISP_OK);
    /* The mailbox is full: the post blocks. */
    assert_true(wisp_sys_debug_wait_blocked(&t, &mb, 10000));
    assert_int_equal(wisp_sys_sem_wait(&bp.posted, 0), WISP_ERR_TIMEOUT);
    assert_int_equal(wisp_sys_mbox_fetch(&mb, &msg, 0), WISP_OK);
    assert_ptr_equal(msg, &first);
    /* Room now: the poster completes (generous bound). */
    assert_int_equal(wisp_sys_sem_wait(&bp.posted, 10000), WISP_OK);
    assert_int_equal(wisp_sys_thread_join(&t), WISP_OK);
    assert_int_equal(wisp_sys_mbox_fetch(&mb, &msg, 0), WISP_OK);
    assert_ptr_equal(msg, &second);
    wisp_sys_sem_free(&bp.posted);
    wisp_sys_mbox_free(&mb);
}

static void test_mbox_fetch_times_out(void **state)
{
    wisp_sys_mbox_t mb;
    int sentinel;
    void *msg = &sentinel;
    uint64_t t0;
    (void)state;
    assert_int_equal(wisp_sys_mbox_new(&mb, 3), WISP_OK);
    t0 = mono_us();
    assert_int_equal(wisp_sys_mbox_fetch(&mb, &msg, 50), WISP_ERR_TIMEOUT);
    assert_true(mono_us() - t0 >= 50000u);
    assert_ptr_equal(msg, &sentinel); /* unchanged */
    assert_int_equal(wisp_sys_mbox_fetch(&mb, &msg, 0), WISP_ERR_TIMEOUT);
    wisp_sys_mbox_free(&mb);
}

struct late_poster {
    wisp_sys_mbox_t *mb;
    void *msg;
    const wisp_sys_thread_t *fetcher;
    bool saw_blocked;
};

/* Posts once the fetcher (main, registered with the probe) waits. */
static void post_later(void *arg)
{
    struct late_poster *lp = (struct late_poster *)arg;
    lp->saw_blocked = wisp_sys_debug_wait_blocked(lp->fetcher, lp->mb, 10000);
    wisp_sys_mbox_post(lp->mb, lp->msg);
}

static void test_mbox_fetch_forever_gets_late_message(void **state)
{
    wisp_sys_mbox_t mb;
    wisp_sys_thread_t t, self;
    struct late_poster lp;
    int v;
    void *msg = NULL;
    (void)state;
    assert_int_equal(wisp_sys_mbox_new(&mb, 1), WISP_OK);
    wisp_sys_debug_thread_register(&self);
    lp.mb = &mb;
    lp.msg = &v;
    lp.fetcher = &self;
    lp.saw_blocked = false;
    assert_int_equal(wisp_sys_thread_new(&t, "late", post_later, &lp, 0, 0), WISP_OK);
    assert_int_equal(wisp_sys_mbox_fetch(&mb, &msg, WISP_SYS_FOREVER), WISP_OK);
    assert_ptr_equal(msg, &v);
    assert_int_equal(wisp_sys_thread_join(&t), WISP_OK);
    wisp_sys_debug_thread_unregister(&self);
    assert_true(lp.saw_blocked); /* the fetch waited for the post */
    wisp_sys_mbox_free(&mb);
}

/* --------------------------------------------------------------- threads */

struct thread_probe {
    wisp_sys_thread_t *self;
    bool is_self;
    int value;
};

static void probe_thread(void *arg)
{
    struct thread_probe *p = (struct thread_probe *)arg;
    volatile char stackuse[64 * 1024]; /* the requested stack is usable */
    stackuse[0] = 1;
    stackuse[sizeof stackuse - 1] = 2;
    p->is_self = wisp_sys_thread_is_self(p->self);
    p->value = 42 + stackuse[0] + stackuse[sizeof stackuse - 1] - 3;
}

static void test_thread_create_join(void **state)
{
    wisp_sys_thread_t t;
    struct thread_probe p;
    (void)state;
    memset(&p, 0, sizeof p);
    p.self = &t;
    assert_int_equal(wisp_sys_thread_new(&t, "a-rather-long-thread-name", probe_thread, &p, 256 * 1024, 3),
                     WISP_OK);
    assert_false(wisp_sys_thread_is_self(&t)); /* the creator is not t */
    assert_int_equal(wisp_sys_thread_join(&t), WISP_OK);
    assert_true(p.is_self);
    assert_int_equal(p.value, 42);
    assert_int_equal(wisp_sys_thread_new(&t, NULL, NULL, NULL, 0, 0), WISP_ERR_ARG);
}

/* ------------------------------------------------ blocked-thread probe */

struct probe_locker {
    wisp_sys_mutex_t *m;
};

static void lock_unlock(void *arg)
{
    struct probe_locker *pl = (struct probe_locker *)arg;
    wisp_sys_mutex_lock(pl->m);
    wisp_sys_mutex_unlock(pl->m);
}

/* The probe names the object and the kind of wait, counts several waiters
 * of one object, reports a woken thread as running, answers false on
 * timeout (at least the timeout later) and ignores mutexes unless named. */
static void test_probe_reports_blocked_threads(void **state)
{
    wisp_sys_sem_t s;
    wisp_sys_mutex_t m;
    wisp_sys_thread_t t[3], tm;
    struct sem_waiter w[3];
    struct probe_locker pl;
    enum wisp_sys_wait_kind k = WISP_SYS_WAIT_SEM;
    uint64_t t0;
    unsigned i;
    (void)state;
    assert_int_equal(wisp_sys_sem_new(&s, 0), WISP_OK);
    assert_int_equal(wisp_sys_mutex_new(&m), WISP_OK);
    /* nobody blocked yet: false after the timeout */
    t0 = mono_us();
    assert_false(wisp_sys_debug_wait_blocked_n(&s, 1, 30));
    assert_true(mono_us() - t0 >= 30000u);
    assert_true(wisp_sys_debug_wait_blocked_n(&s, 0, 0));
    for (i = 0; i < 3; i++) {
        w[i].s = &s;
        w[i].r = WISP_ERR_VAL;
        assert_int_equal(wisp_sys_thread_new(&t[i], "w", sem_wait_forever, &w[i], 0, 0), WISP_OK);
    }
    assert_true(wisp_sys_debug_wait_blocked_n(&s, 3, 10000));
    for (i = 0; i < 3; i++) {
        assert_true(wisp_sys_debug_wait_blocked(&t[i], &s, 0));
        assert_true(wisp_sys_debug_wait_blocked(&t[i], NULL, 0));
        assert_false(wisp_sys_debug_wait_blocked(&t[i], &m, 0));
        assert_ptr_equal(wisp_sys_debug_blocked_on(&t[i], &k), &s);
        assert_int_equal(k, WISP_SYS_WAIT_SEM);
    }
    /* a mutex wait: seen when the mutex is named, not as "any" */
    wisp_sys_mutex_lock(&m);
    pl.m = &m;
    assert_int_equal(wisp_sys_thread_new(&tm, "m", lock_unlock, &pl, 0, 0), WISP_OK);
    assert_true(wisp_sys_debug_wait_blocked(&tm, &m, 10000));
    assert_ptr_equal(wisp_sys_debug_blocked_on(&tm, &k), &m);
    assert_int_equal(k, WISP_SYS_WAIT_MUTEX);
    assert_false(wisp_sys_debug_wait_blocked(&tm, NULL, 0));
    wisp_sys_mutex_unlock(&m);
    assert_int_equal(wisp_sys_thread_join(&tm), WISP_OK);
    assert_null(wisp_sys_debug_blocked_on(&tm, &k));
    assert_int_equal(k, WISP_SYS_WAIT_NONE);
    /* woken: running again, nobody left on s */
    wisp_sys_sem_signal(&s);
    wisp_sys_sem_signal(&s);
    wisp_sys_sem_signal(&s);
    for (i = 0; i < 3; i++) {
        assert_int_equal(wisp_sys_thread_join(&t[i]), WISP_OK);
        assert_int_equal(w[i].r, WISP_OK);
        assert_null(wisp_sys_debug_blocked_on(&t[i], NULL));
    }
    assert_false(wisp_sys_debug_wait_blocked_n(&s, 1, 0));
    wisp_sys_mutex_free(&m);
    wisp_sys_sem_free(&s);
}

/* ------------------------------------------------------------------ time */

static void test_sleep_sleeps_at_least(void **state)
{
    uint64_t t0 = mono_us();
    (void)state;
    wisp_sys_sleep_ms(25);
    assert_true(mono_us() - t0 >= 25000u);
}

static void test_now_ms_is_monotonic_milliseconds(void **state)
{
    uint32_t a, b;
    uint64_t t0;
    int i;
    (void)state;
    a = wisp_sys_now_ms();
    for (i = 0; i < 100000; i++) {
        b = wisp_sys_now_ms();
        assert_false(wisp_time_before(b, a));
        a = b;
    }
    a = wisp_sys_now_ms();
    t0 = mono_us();
    wisp_sys_sleep_ms(40);
    b = wisp_sys_now_ms();
    /* Advanced by at least the time slept, less the truncation to ms, and
     * not by more than what really passed (plus that truncation). */
    assert_true(b - a >= 39u);
    assert_true((uint64_t)(b - a) <= (mono_us() - t0) / 1000u + 1u);
}

/* ------------------------------------------------- core ownership check */

struct core_probe {
    struct wisp_stack *s;
    wisp_sys_mutex_t *lock;
};

static uint32_t fixed_clock(void *ctx)
{
    (void)ctx;
    return 1000;
}

static void new_pcb_without_lock(void *arg)
{
    struct core_probe *cp = (struct core_probe *)arg;
    (void)wisp_udp_new(cp->s); /* core_lock set, not held: must abort */
}

static void test_core_check_requires_core_lock_holder(void **state)
{
    struct wisp_stack *s = malloc(sizeof(*s));
    struct wisp_config cfg;
    wisp_sys_mutex_t lock;
    struct wisp_udp_pcb *pcb;
    struct core_probe cp;
    char err[1024];
    (void)state;
    assert_non_null(s);
    memset(&cfg, 0, sizeof cfg);
    cfg.now_ms = fixed_clock;
    assert_int_equal(wisp_stack_init(s, &cfg), WISP_OK);
    assert_null(s->core_lock);
    /* Single-threaded use (no core lock registered): always allowed. */
    pcb = wisp_udp_new(s);
    assert_non_null(pcb);
    wisp_udp_remove(pcb);

    assert_int_equal(wisp_sys_mutex_new(&lock), WISP_OK);
    wisp_tcpip_set_owner(s, &lock); /* what wisp_tcpip_start does */
    wisp_sys_mutex_lock(&lock);
    pcb = wisp_udp_new(s); /* holder: allowed */
    assert_non_null(pcb);
    wisp_udp_remove(pcb);
    wisp_sys_mutex_unlock(&lock);
#if WISP_DEBUG
    cp.s = s;
    cp.lock = &lock;
    assert_true(aborted(run_in_child(new_pcb_without_lock, &cp, err, sizeof err)));
    assert_non_null(strstr(err, "wisp_udp_new called outside the core context"));
#else
    (void)cp;
    (void)err;
    (void)new_pcb_without_lock;
#endif
    wisp_tcpip_set_owner(s, NULL);
    wisp_sys_mutex_free(&lock);
    wisp_stack_deinit(s);
    assert_int_equal(wisp_stack_pools_in_use(s), 0);
    free(s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_mutex_excludes_four_threads),
        cmocka_unit_test(test_mutex_held_only_by_owner),
#if WISP_DEBUG
        cmocka_unit_test(test_mutex_recursive_lock_detected_in_debug),
        cmocka_unit_test(test_mutex_unlock_by_non_owner_detected_in_debug),
#endif
        cmocka_unit_test(test_sem_counts),
        cmocka_unit_test(test_sem_wait_times_out_after_at_least_timeout),
        cmocka_unit_test(test_sem_signal_wakes_waiter),
        cmocka_unit_test(test_mbox_fifo_order),
        cmocka_unit_test(test_mbox_fifo_order_per_producer_under_contention),
        cmocka_unit_test(test_mbox_trypost_fails_when_full),
        cmocka_unit_test(test_mbox_blocking_post_unblocks_when_fetched),
        cmocka_unit_test(test_mbox_fetch_times_out),
        cmocka_unit_test(test_mbox_fetch_forever_gets_late_message),
        cmocka_unit_test(test_thread_create_join),
        cmocka_unit_test(test_probe_reports_blocked_threads),
        cmocka_unit_test(test_sleep_sleeps_at_least),
        cmocka_unit_test(test_now_ms_is_monotonic_milliseconds),
        cmocka_unit_test(test_core_check_requires_core_lock_holder),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
