/**
 * @file sys_none.c
 * The no-OS sys port of wisp/sys.h (see sys_none.h): one execution
 * context, no threads. Mutexes are flags that catch recursive locking,
 * semaphores and mailboxes are counters and rings whose timed waits spin
 * on the board's wisp_sys_now_ms() (an interrupt handler may be the one
 * that signals), threads cannot be created.
 *
 * What is available in this mode: the raw API from the application's main
 * loop (wisp_dev_input, wisp_stack_poll, wisp_udp_*, wisp_tcp_*) -- see
 * docs/porting.md "No OS". No heap, no globals, C99 only.
 */
#define WISP_PRIVATE_ACCESS 1 /* library code: sees the private tier (wisp/arch.h) */
#include "wisp/sys.h"

wisp_err_t wisp_sys_init(void)
{
    return WISP_OK;
}

/* ------------------------------------------------------------------ time */

/* wisp_sys_now_ms() is the board's (see sys_none.h). */

void wisp_sys_sleep_ms(uint32_t ms)
{
    uint32_t start = wisp_sys_now_ms();
    while (wisp_sys_now_ms() - start < ms) {
        /* busy wait: a board with a low-power wait puts it here */
    }
}

/* True once timeout_ms passed since start (never for WISP_SYS_FOREVER). */
static bool expired(uint32_t start, uint32_t timeout_ms)
{
    if (timeout_ms == WISP_SYS_FOREVER) {
        return false;
    }
    return wisp_sys_now_ms() - start >= timeout_ms;
}

/* --------------------------------------------------------------- threads */

wisp_err_t wisp_sys_thread_new(wisp_sys_thread_t *t, const char *name, wisp_sys_thread_fn fn, void *arg,
                               size_t stack_size, int prio)
{
    WISP_UNUSED(t);
    WISP_UNUSED(name);
    WISP_UNUSED(fn);
    WISP_UNUSED(arg);
    WISP_UNUSED(stack_size);
    WISP_UNUSED(prio);
    return WISP_ERR_VAL; /* no threads without an OS */
}

wisp_err_t wisp_sys_thread_join(wisp_sys_thread_t *t)
{
    WISP_UNUSED(t);
    return WISP_ERR_VAL;
}

bool wisp_sys_thread_is_self(const wisp_sys_thread_t *t)
{
    WISP_UNUSED(t);
    return false;
}

/* --------------------------------------------------------------- mutexes */

wisp_err_t wisp_sys_mutex_new(wisp_sys_mutex_t *m)
{
    m->locked = 0;
    return WISP_OK;
}

void wisp_sys_mutex_lock(wisp_sys_mutex_t *m)
{
    /* One context: a locked mutex can only be the caller's own (recursion),
     * which would deadlock on a real OS. */
    WISP_ASSERT(m->locked == 0);
    m->locked = 1;
}

void wisp_sys_mutex_unlock(wisp_sys_mutex_t *m)
{
    WISP_ASSERT(m->locked != 0);
    m->locked = 0;
}

void wisp_sys_mutex_free(wisp_sys_mutex_t *m)
{
    WISP_ASSERT(m->locked == 0);
    m->locked = 0;
}

bool wisp_sys_mutex_held(const wisp_sys_mutex_t *m)
{
    return m->locked != 0;
}

/* ------------------------------------------------------------ semaphores */

wisp_err_t wisp_sys_sem_new(wisp_sys_sem_t *sem, unsigned count)
{
    sem->count = count;
    return WISP_OK;
}

void wisp_sys_sem_signal(wisp_sys_sem_t *sem)
{
    sem->count = sem->count + 1u;
}

wisp_err_t wisp_sys_sem_wait(wisp_sys_sem_t *sem, uint32_t timeout_ms)
{
    uint32_t start = wisp_sys_now_ms();
    while (sem->count == 0) {
        if (timeout_ms == 0 || expired(start, timeout_ms)) {
            return WISP_ERR_TIMEOUT;
        }
    }
    sem->count = sem->count - 1u;
    return WISP_OK;
}

void wisp_sys_sem_free(wisp_sys_sem_t *sem)
{
    sem->count = 0;
}

/* ------------------------------------------------------------- mailboxes */

wisp_err_t wisp_sys_mbox_new(wisp_sys_mbox_t *mb, unsigned capacity)
{
    if (capacity == 0) {
        return WISP_ERR_ARG;
    }
    if (capacity > WISP_SYS_NONE_MBOX_MAX) {
        return WISP_ERR_MEM;
    }
    mb->cap = capacity;
    mb->head = 0;
    mb->count = 0;
    return WISP_OK;
}

wisp_err_t wisp_sys_mbox_trypost(wisp_sys_mbox_t *mb, void *msg)
{
    if (mb->count >= mb->cap) {
        return WISP_ERR_WOULDBLOCK;
    }
    mb->slot[(mb->head + mb->count) % mb->cap] = msg;
    mb->count = mb->count + 1u;
    return WISP_OK;
}

void wisp_sys_mbox_post(wisp_sys_mbox_t *mb, void *msg)
{
    /* One context: a full mailbox only drains if an interrupt handler
     * fetches. Posting to a full one from the main loop is a design error. */
    WISP_ASSERT(mb->count < mb->cap);
    while (wisp_sys_mbox_trypost(mb, msg) != WISP_OK) {
    }
}

wisp_err_t wisp_sys_mbox_tryfetch(wisp_sys_mbox_t *mb, void **msg)
{
    if (mb->count == 0) {
        return WISP_ERR_WOULDBLOCK;
    }
    *msg = mb->slot[mb->head];
    mb->slot[mb->head] = NULL;
    mb->head = (mb->head + 1u) % mb->cap;
    mb->count = mb->count - 1u;
    return WISP_OK;
}

wisp_err_t wisp_sys_mbox_fetch(wisp_sys_mbox_t *mb, void **msg, uint32_t timeout_ms)
{
    uint32_t start = wisp_sys_now_ms();
    while (wisp_sys_mbox_tryfetch(mb, msg) != WISP_OK) {
        if (timeout_ms == 0 || expired(start, timeout_ms)) {
            return WISP_ERR_TIMEOUT;
        }
    }
    return WISP_OK;
}

void wisp_sys_mbox_free(wisp_sys_mbox_t *mb)
{
    mb->count = 0;
}

/* ------------------------------------------- debug: blocked-thread probe */

#if WISP_SYS_DEBUG_PROBE
/* One context: while the caller runs, no other thread exists that could be
 * blocked, so the probe knows no threads and every wait for one fails at
 * once (an interrupt handler never blocks). */
void wisp_sys_debug_thread_register(wisp_sys_thread_t *t)
{
    WISP_UNUSED(t);
}

void wisp_sys_debug_thread_unregister(wisp_sys_thread_t *t)
{
    WISP_UNUSED(t);
}

bool wisp_sys_debug_wait_blocked(const wisp_sys_thread_t *t, const void *obj, uint32_t timeout_ms)
{
    WISP_UNUSED(t);
    WISP_UNUSED(obj);
    WISP_UNUSED(timeout_ms);
    return false;
}

bool wisp_sys_debug_wait_blocked_n(const void *obj, unsigned n, uint32_t timeout_ms)
{
    WISP_UNUSED(obj);
    WISP_UNUSED(timeout_ms);
    return n == 0;
}

const void *wisp_sys_debug_blocked_on(const wisp_sys_thread_t *t, enum wisp_sys_wait_kind *kind)
{
    WISP_UNUSED(t);
    if (kind != NULL) {
        *kind = WISP_SYS_WAIT_NONE;
    }
    return NULL;
}
#endif /* WISP_SYS_DEBUG_PROBE */
