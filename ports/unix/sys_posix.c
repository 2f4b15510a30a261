/**
 * @file sys_posix.c
 * The POSIX (pthreads) sys port of wisp/sys.h: threads, non-recursive
 * mutexes that know their owner (for the debug checks), counting
 * semaphores and bounded mailboxes built on a mutex and condition
 * variables bound to CLOCK_MONOTONIC (so setting the wall clock never
 * shortens or stretches a timeout). wisp_sys_mutex_held() answers the
 * core ownership check behind WISP_CORE_ASSERT_OWNER (through the owner
 * hook src/api/tcpip.c installs in the stack).
 *
 * Thread identity: every thread has a thread-local "token" (the address of
 * a thread-local byte), unique among live threads, so ownership and
 * "is self" checks need neither pthread_self() comparisons of handles the
 * creator may not have stored yet nor a registry. Mutex owners are kept
 * with relaxed atomics: only the holder writes its own token, anybody may
 * read it (the checks compare with their own token).
 *
 * Blocked-thread probe (WISP_SYS_DEBUG_PROBE, wisp/sys.h): every wait that
 * really sleeps marks the calling thread's handle "blocked on <object>"
 * while it holds the object's internal mutex, and clears the mark when the
 * wait ends; tests wait for the mark instead of sleeping.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE   /* pthread_setname_np, pthread_condattr_setclock */
#endif

#define WISP_PRIVATE_ACCESS 1 /* library code: sees the private tier (wisp/arch.h) */
#include "wisp/sys.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* The port's assertion hook (unix_port.c); declared here as well because
 * opt.h declares it only in debug builds. */
void wisp_assert_fail(const char *expr, const char *file, int line);

/* Per-thread identity (see the file comment). */
static __thread char self_token;
/* The wisp thread the caller is, NULL for threads not created by us. */
static __thread const struct wisp_sys_thread *self_thread;

static const void *self_id(void)
{
    return &self_token;
}

/* Abort on a failing pthread call that cannot fail in a correct program. */
static void sys_check(int rc, const char *what)
{
    if (rc != 0) {
        fprintf(stderr, "wisp sys_posix: %s failed: %s\n", what, strerror(rc));
        abort();
    }
}

wisp_err_t wisp_sys_init(void)
{
    return WISP_OK;
}

/* ------------------------------------------------------------------ time */

static void mono_now(struct timespec *ts)
{
    if (clock_gettime(CLOCK_MONOTONIC, ts) != 0) {
        ts->tv_sec = 0;
        ts->tv_nsec = 0;
    }
}

uint32_t wisp_sys_now_ms(void)
{
    struct timespec ts;
    mono_now(&ts);
    return (uint32_t)((uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u);
}

void wisp_sys_sleep_ms(uint32_t ms)
{
    struct timespec req, rem;
    req.tv_sec = (time_t)(ms / 1000u);
    req.tv_nsec = (long)(ms % 1000u) * 1000000L;
    while (nanosleep(&req, &rem) != 0 && errno == EINTR) {
        req = rem;
    }
}

/* Absolute CLOCK_MONOTONIC deadline ms from now. */
static void deadline_in(struct timespec *ts, uint32_t ms)
{
    mono_now(ts);
    ts->tv_sec += (time_t)(ms / 1000u);
    ts->tv_nsec += (long)(ms % 1000u) * 1000000L;
    if (ts->tv_nsec >= 1000000000L) {
        ts->tv_sec++;
        ts->tv_nsec -= 1000000000L;
    }
}

static void cond_init_mono(pthread_cond_t *c)
{
    pthread_condattr_t a;
    sys_check(pthread_condattr_init(&a), "pthread_condattr_init");
    sys_check(pthread_condattr_setclock(&a, CLOCK_MONOTONIC), "pthread_condattr_setclock");
    sys_check(pthread_cond_init(c, &a), "pthread_cond_init");
    pthread_condattr_destroy(&a);
}

/* Wait on c (mutex mtx held) until *ready says so or the timeout passes.
 * ready is re-evaluated by the caller's loop; this returns false once the
 * deadline passed. timeout 0 never waits; WISP_SYS_FOREVER waits plainly. */
static bool cond_wait_until(pthread_cond_t *c, pthread_mutex_t *mtx, uint32_t timeout_ms,
                            const struct timespec *deadline)
{
    int rc;
    if (timeout_ms == 0) {
        return false;
    }
    if (timeout_ms == WISP_SYS_FOREVER) {
        sys_check(pthread_cond_wait(c, mtx), "pthread_cond_wait");
        return true;
    }
    rc = pthread_cond_timedwait(c, mtx, deadline);
    if (rc == ETIMEDOUT) {
        return false;
    }
    sys_check(rc, "pthread_cond_timedwait");
    return true;
}

/* ------------------------------------------- debug: blocked-thread probe */

#if WISP_SYS_DEBUG_PROBE
/* One lock and one condition for the whole probe: a thread that starts or
 * stops blocking updates its record under dbg_mtx and broadcasts dbg_cond;
 * wisp_sys_debug_wait_blocked*() wait on dbg_cond. Lock order: an object's
 * internal mutex, then dbg_mtx (the probe never takes an object's lock). */
static pthread_mutex_t dbg_mtx = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t dbg_cond;
static pthread_once_t dbg_once = PTHREAD_ONCE_INIT;
static struct wisp_sys_thread *dbg_threads; /* known threads (dbg_next) */

static void dbg_init(void)
{
    cond_init_mono(&dbg_cond);
}

static void dbg_lock(void)
{
    sys_check(pthread_once(&dbg_once, dbg_init), "pthread_once");
    sys_check(pthread_mutex_lock(&dbg_mtx), "pthread_mutex_lock");
}

static void dbg_unlock(void)
{
    sys_check(pthread_mutex_unlock(&dbg_mtx), "pthread_mutex_unlock");
}

static void dbg_list_add(struct wisp_sys_thread *t)
{
    dbg_lock();
    t->dbg_obj = NULL;
    t->dbg_kind = WISP_SYS_WAIT_NONE;
    t->dbg_next = dbg_threads;
    dbg_threads = t;
    t->dbg_listed = 1;
    dbg_unlock();
}

static void dbg_list_remove(struct wisp_sys_thread *t)
{
    struct wisp_sys_thread **pp;
    dbg_lock();
    for (pp = &dbg_threads; *pp != NULL; pp = &(*pp)->dbg_next) {
        if (*pp == t) {
            *pp = t->dbg_next;
            break;
        }
    }
    t->dbg_listed = 0;
    t->dbg_obj = NULL;
    t->dbg_kind = WISP_SYS_WAIT_NONE;
    dbg_unlock();
}

/* The calling thread starts (obj != NULL) or stops (obj NULL) blocking. */
static void dbg_mark(const void *obj, int kind)
{
    struct wisp_sys_thread *t = (struct wisp_sys_thread *)self_thread;
    if (t == NULL) {
        return; /* a thread the port does not know */
    }
    dbg_lock();
    t->dbg_obj = obj;
    t->dbg_kind = obj != NULL ? kind : WISP_SYS_WAIT_NONE;
    sys_check(pthread_cond_broadcast(&dbg_cond), "pthread_cond_broadcast");
    dbg_unlock();
}

/* t blocked on obj (dbg_mtx held); obj NULL: on a semaphore or mailbox. */
static bool dbg_is_blocked(const struct wisp_sys_thread *t, const void *obj)
{
    if (t->dbg_obj == NULL) {
        return false;
    }
    if (obj != NULL) {
        return t->dbg_obj == obj;
    }
    return t->dbg_kind != WISP_SYS_WAIT_MUTEX;
}

static unsigned dbg_count_on(const void *obj)
{
    const struct wisp_sys_thread *t;
    unsigned n = 0;
    for (t = dbg_threads; t != NULL; t = t->dbg_next) {
        n += (obj != NULL && t->dbg_obj == obj) ? 1u : 0u;
    }
    return n;
}

void wisp_sys_debug_thread_register(wisp_sys_thread_t *t)
{
    WISP_ASSERT(self_thread == NULL);
    memset(t, 0, sizeof(*t));
    t->tid = pthread_self();
    self_thread = t;
    dbg_list_add(t);
}

void wisp_sys_debug_thread_unregister(wisp_sys_thread_t *t)
{
    WISP_ASSERT(self_thread == t);
    dbg_list_remove(t);
    self_thread = NULL;
}

/* Wait until t is blocked on obj (t != NULL) or n threads are blocked on
 * obj (t NULL), or the deadline passes. */
static bool dbg_wait(const struct wisp_sys_thread *t, const void *obj, unsigned n, uint32_t timeout_ms)
{
    struct timespec deadline;
    bool ok;
    if (timeout_ms != 0 && timeout_ms != WISP_SYS_FOREVER) {
        deadline_in(&deadline, timeout_ms);
    }
    dbg_lock();
    for (;;) {
        ok = t != NULL ? dbg_is_blocked(t, obj) : dbg_count_on(obj) >= n;
        if (ok || !cond_wait_until(&dbg_cond, &dbg_mtx, timeout_ms, &deadline)) {
            break;
        }
    }
    if (!ok) { /* one last look at the deadline */
        ok = t != NULL ? dbg_is_blocked(t, obj) : dbg_count_on(obj) >= n;
    }
    dbg_unlock();
    return ok;
}

bool wisp_sys_debug_wait_blocked(const wisp_sys_thread_t *t, const void *obj, uint32_t timeout_ms)
{
    return t != NULL && dbg_wait(t, obj, 0, timeout_ms);
}

bool wisp_sys_debug_wait_blocked_n(const void *obj, unsigned n, uint32_t timeout_ms)
{
    return n == 0 || (obj != NULL && dbg_wait(NULL, obj, n, timeout_ms));
}

const void *wisp_sys_debug_blocked_on(const wisp_sys_thread_t *t, enum wisp_sys_wait_kind *kind)
{
    const void *obj;
    int k;
    dbg_lock();
    obj = t->dbg_obj;
    k = t->dbg_kind;
    dbg_unlock();
    if (kind != NULL) {
        *kind = (enum wisp_sys_wait_kind)k;
    }
    return obj;
}

#define DBG_BLOCK(obj, kind) dbg_mark((obj), (kind))
#define DBG_UNBLOCK() dbg_mark(NULL, WISP_SYS_WAIT_NONE)
#else
#define DBG_BLOCK(obj, kind) ((void)0)
#define DBG_UNBLOCK() ((void)0)
#endif /* WISP_SYS_DEBUG_PROBE */

/* --------------------------------------------------------------- threads */

static void *thread_trampoline(void *arg)
{
    struct wisp_sys_thread *t = (struct wisp_sys_thread *)arg;
    self_thread = t;
#if WISP_SYS_DEBUG_PROBE
    dbg_list_add(t);
#endif
#ifdef __linux__
    if (t->name[0] != '\0') {
        (void)pthread_setname_np(pthread_self(), t->name);
    }
#endif
    t->fn(t->arg);
#if WISP_SYS_DEBUG_PROBE
    dbg_list_remove(t);
#endif
    self_thread = NULL;
    return NULL;
}

wisp_err_t wisp_sys_thread_new(wisp_sys_thread_t *t, const char *name, wisp_sys_thread_fn fn, void *arg,
                               size_t stack_size, int prio)
{
    pthread_attr_t attr;
    int rc;

    (void)prio; /* POSIX: one priority class for everybody */
    if (t == NULL || fn == NULL) {
        return WISP_ERR_ARG;
    }
    memset(t, 0, sizeof(*t));
    t->fn = fn;
    t->arg = arg;
    if (name != NULL) {
        strncpy(t->name, name, sizeof(t->name) - 1u);
    }
    sys_check(pthread_attr_init(&attr), "pthread_attr_init");
    if (stack_size != 0) {
        if (stack_size < (size_t)PTHREAD_STACK_MIN) {
            stack_size = (size_t)PTHREAD_STACK_MIN;
        }
        (void)pthread_attr_setstacksize(&attr, stack_size);
    }
    rc = pthread_create(&t->tid, &attr, thread_trampoline, t);
    pthread_attr_destroy(&attr);
    return rc == 0 ? WISP_OK : WISP_ERR_MEM;
}

wisp_err_t wisp_sys_thread_join(wisp_sys_thread_t *t)
{
    WISP_ASSERT(!wisp_sys_thread_is_self(t));
    return pthread_join(t->tid, NULL) == 0 ? WISP_OK : WISP_ERR_ARG;
}

bool wisp_sys_thread_is_self(const wisp_sys_thread_t *t)
{
    return t != NULL && self_thread == t;
}

/* --------------------------------------------------------------- mutexes */

wisp_err_t wisp_sys_mutex_new(wisp_sys_mutex_t *m)
{
    if (pthread_mutex_init(&m->mtx, NULL) != 0) {
        return WISP_ERR_MEM;
    }
    __atomic_store_n(&m->owner, (const void *)NULL, __ATOMIC_RELAXED);
    return WISP_OK;
}

bool wisp_sys_mutex_held(const wisp_sys_mutex_t *m)
{
    return __atomic_load_n(&m->owner, __ATOMIC_RELAXED) == self_id();
}

void wisp_sys_mutex_lock(wisp_sys_mutex_t *m)
{
    /* Recursion would deadlock below: catch it first (debug builds). */
    WISP_ASSERT(!wisp_sys_mutex_held(m));
#if WISP_SYS_DEBUG_PROBE
    if (pthread_mutex_trylock(&m->mtx) != 0) { /* held by another thread: blocks */
        DBG_BLOCK(m, WISP_SYS_WAIT_MUTEX);
        sys_check(pthread_mutex_lock(&m->mtx), "pthread_mutex_lock");
        DBG_UNBLOCK();
    }
#else
    sys_check(pthread_mutex_lock(&m->mtx), "pthread_mutex_lock");
#endif
    __atomic_store_n(&m->owner, self_id(), __ATOMIC_RELAXED);
}

void wisp_sys_mutex_unlock(wisp_sys_mutex_t *m)
{
    /* Unlock by a non-owner, or of an unlocked mutex (debug builds). */
    WISP_ASSERT(wisp_sys_mutex_held(m));
    __atomic_store_n(&m->owner, (const void *)NULL, __ATOMIC_RELAXED);
    sys_check(pthread_mutex_unlock(&m->mtx), "pthread_mutex_unlock");
}

void wisp_sys_mutex_free(wisp_sys_mutex_t *m)
{
    WISP_ASSERT(__atomic_load_n(&m->owner, __ATOMIC_RELAXED) == NULL);
    pthread_mutex_destroy(&m->mtx);
}

/* ------------------------------------------------------------ semaphores */

wisp_err_t wisp_sys_sem_new(wisp_sys_sem_t *sem, unsigned count)
{
    if (pthread_mutex_init(&sem->mtx, NULL) != 0) {
        return WISP_ERR_MEM;
    }
    cond_init_mono(&sem->cond);
    sem->count = count;
    return WISP_OK;
}

void wisp_sys_sem_signal(wisp_sys_sem_t *sem)
{
    sys_check(pthread_mutex_lock(&sem->mtx), "pthread_mutex_lock");
    sem->count++;
    sys_check(pthread_cond_signal(&sem->cond), "pthread_cond_signal");
    sys_check(pthread_mutex_unlock(&sem->mtx), "pthread_mutex_unlock");
}

wisp_err_t wisp_sys_sem_wait(wisp_sys_sem_t *sem, uint32_t timeout_ms)
{
    struct timespec deadline;
    wisp_err_t r = WISP_OK;

    if (timeout_ms != 0 && timeout_ms != WISP_SYS_FOREVER) {
        deadline_in(&deadline, timeout_ms);
    }
    sys_check(pthread_mutex_lock(&sem->mtx), "pthread_mutex_lock");
    if (sem->count == 0 && timeout_ms != 0) {
        DBG_BLOCK(sem, WISP_SYS_WAIT_SEM); /* under sem->mtx: see wisp/sys.h */
        while (sem->count == 0) {
            if (!cond_wait_until(&sem->cond, &sem->mtx, timeout_ms, &deadline)) {
                r = WISP_ERR_TIMEOUT;
                break;
            }
        }
        DBG_UNBLOCK();
    } else if (sem->count == 0) {
        r = WISP_ERR_TIMEOUT;
    }
    if (r == WISP_OK) {
        sem->count--;
    }
    sys_check(pthread_mutex_unlock(&sem->mtx), "pthread_mutex_unlock");
    return r;
}

void wisp_sys_sem_free(wisp_sys_sem_t *sem)
{
    pthread_cond_destroy(&sem->cond);
    pthread_mutex_destroy(&sem->mtx);
}

/* ------------------------------------------------------------- mailboxes */

wisp_err_t wisp_sys_mbox_new(wisp_sys_mbox_t *mb, unsigned capacity)
{
    if (capacity == 0) {
        return WISP_ERR_ARG;
    }
    mb->ring = (void **)calloc(capacity, sizeof(void *));
    if (mb->ring == NULL) {
        return WISP_ERR_MEM;
    }
    if (pthread_mutex_init(&mb->mtx, NULL) != 0) {
        free(mb->ring);
        mb->ring = NULL;
        return WISP_ERR_MEM;
    }
    cond_init_mono(&mb->not_empty);
    cond_init_mono(&mb->not_full);
    mb->cap = capacity;
    mb->head = 0;
    mb->count = 0;
    return WISP_OK;
}

/* Append (mutex held, room checked). */
static void mbox_put(wisp_sys_mbox_t *mb, void *msg)
{
    mb->ring[(mb->head + mb->count) % mb->cap] = msg;
    mb->count++;
    sys_check(pthread_cond_signal(&mb->not_empty), "pthread_cond_signal");
}

/* Remove the oldest (mutex held, not empty). */
static void *mbox_get(wisp_sys_mbox_t *mb)
{
    void *msg = mb->ring[mb->head];
    mb->ring[mb->head] = NULL;
    mb->head = (mb->head + 1u) % mb->cap;
    mb->count--;
    sys_check(pthread_cond_signal(&mb->not_full), "pthread_cond_signal");
    return msg;
}

void wisp_sys_mbox_post(wisp_sys_mbox_t *mb, void *msg)
{
    sys_check(pthread_mutex_lock(&mb->mtx), "pthread_mutex_lock");
    if (mb->count == mb->cap) {
        DBG_BLOCK(mb, WISP_SYS_WAIT_MBOX_POST);
        while (mb->count == mb->cap) {
            sys_check(pthread_cond_wait(&mb->not_full, &mb->mtx), "pthread_cond_wait");
        }
        DBG_UNBLOCK();
    }
    mbox_put(mb, msg);
    sys_check(pthread_mutex_unlock(&mb->mtx), "pthread_mutex_unlock");
}

wisp_err_t wisp_sys_mbox_trypost(wisp_sys_mbox_t *mb, void *msg)
{
    wisp_err_t r = WISP_ERR_WOULDBLOCK;
    sys_check(pthread_mutex_lock(&mb->mtx), "pthread_mutex_lock");
    if (mb->count < mb->cap) {
        mbox_put(mb, msg);
        r = WISP_OK;
    }
    sys_check(pthread_mutex_unlock(&mb->mtx), "pthread_mutex_unlock");
    return r;
}

wisp_err_t wisp_sys_mbox_fetch(wisp_sys_mbox_t *mb, void **msg, uint32_t timeout_ms)
{
    struct timespec deadline;
    wisp_err_t r = WISP_OK;

    if (timeout_ms != 0 && timeout_ms != WISP_SYS_FOREVER) {
        deadline_in(&deadline, timeout_ms);
    }
    sys_check(pthread_mutex_lock(&mb->mtx), "pthread_mutex_lock");
    if (mb->count == 0 && timeout_ms != 0) {
        DBG_BLOCK(mb, WISP_SYS_WAIT_MBOX_FETCH);
        while (mb->count == 0) {
            if (!cond_wait_until(&mb->not_empty, &mb->mtx, timeout_ms, &deadline)) {
                r = WISP_ERR_TIMEOUT;
                break;
            }
        }
        DBG_UNBLOCK();
    } else if (mb->count == 0) {
        r = WISP_ERR_TIMEOUT;
    }
    if (r == WISP_OK) {
        *msg = mbox_get(mb);
    }
    sys_check(pthread_mutex_unlock(&mb->mtx), "pthread_mutex_unlock");
    return r;
}

wisp_err_t wisp_sys_mbox_tryfetch(wisp_sys_mbox_t *mb, void **msg)
{
    wisp_err_t r = WISP_ERR_WOULDBLOCK;
    sys_check(pthread_mutex_lock(&mb->mtx), "pthread_mutex_lock");
    if (mb->count > 0) {
        *msg = mbox_get(mb);
        r = WISP_OK;
    }
    sys_check(pthread_mutex_unlock(&mb->mtx), "pthread_mutex_unlock");
    return r;
}

void wisp_sys_mbox_free(wisp_sys_mbox_t *mb)
{
    pthread_cond_destroy(&mb->not_full);
    pthread_cond_destroy(&mb->not_empty);
    pthread_mutex_destroy(&mb->mtx);
    free(mb->ring);
    mb->ring = NULL;
}
