/**
 * @file sys.h
 * The OS abstraction layer ("sys port"): the few OS services the stack
 * thread (src/api/tcpip.c) and the sequential APIs built on it need --
 * threads, mutexes, semaphores, mailboxes, sleep and a monotonic clock.
 *
 * The core (src/core) never calls any of this: it is single-threaded and
 * gets its clock through struct wisp_config. Only the OS layer and the
 * APIs above it include this header.
 *
 * A port is one C file plus one small header:
 *  - the header (named by the option WISP_SYS_PORT_HEADER, e.g.
 *    "sys_posix.h") defines the four handle structs
 *    struct wisp_sys_thread, struct wisp_sys_mutex, struct wisp_sys_sem and
 *    struct wisp_sys_mbox. Their contents belong to the port; everybody
 *    else only embeds them (by value, so no allocation is needed to hold a
 *    handle) and passes pointers.
 *  - the C file implements every function below with exactly the
 *    semantics written here. docs/porting.md walks through it, with a
 *    FreeRTOS mapping as an example.
 * Ports in the tree: ports/unix/sys_posix.c (pthreads) and
 * ports/none/sys_none.c (no OS: one context, no threads).
 *
 * Conventions:
 *  - Timeouts are milliseconds on a monotonic clock, uint32_t. 0 means
 *    "do not wait" (poll once); WISP_SYS_FOREVER means "no timeout". This is
 *    the convention of wisp_stack_next_timeout() too (0 = due now,
 *    UINT32_MAX = nothing armed), so the stack thread passes that value
 *    straight to wisp_sys_mbox_fetch(). (lwIP uses 0 = forever; wisp does
 *    not, because 0 = "now" is what every timer computation produces.)
 *  - Timed waits return WISP_OK or WISP_ERR_TIMEOUT and never return early
 *    with WISP_ERR_TIMEOUT: a timed-out wait has waited at least timeout_ms
 *    (rounded up to the port's tick); spurious wake-ups are the port's
 *    business.
 *  - new() functions initialise a handle in place and return WISP_OK, or
 *    WISP_ERR_MEM when the OS is out of resources (the handle is then
 *    unusable and must not be freed). free() releases it; freeing an object
 *    another thread still waits on is a programming error.
 *  - Who may call: any thread, unless stated otherwise. Nothing here may be
 *    called from an interrupt handler (ISR-safe variants are a port
 *    extension; see docs/porting.md).
 */
#ifndef WISP_SYS_H
#define WISP_SYS_H

#include "wisp/opt.h"
#include "wisp/arch.h"
#include "wisp/err.h"

#ifndef WISP_SYS_PORT_HEADER
#error "wisp/sys.h needs WISP_SYS_PORT_HEADER (e.g. \"sys_posix.h\" or \"sys_none.h\") in your options header"
#endif
#include WISP_SYS_PORT_HEADER

typedef struct wisp_sys_thread wisp_sys_thread_t;
typedef struct wisp_sys_mutex wisp_sys_mutex_t;
typedef struct wisp_sys_sem wisp_sys_sem_t;
typedef struct wisp_sys_mbox wisp_sys_mbox_t;

/** Timeout value: wait without limit. */
#define WISP_SYS_FOREVER UINT32_MAX
/** Timeout value: do not wait. */
#define WISP_SYS_NO_WAIT 0u

/** Initialise the port. Call once, before any other wisp_sys_ function
 *  (calling it again is harmless). WISP_OK or a port error. */
wisp_err_t wisp_sys_init(void);

/* --------------------------------------------------------------- threads */

typedef void (*wisp_sys_thread_fn)(void *arg);

/** Create a thread running fn(arg). name: for debuggers (may be truncated;
 *  NULL allowed). stack_size: bytes, 0 = the port's default. prio: the
 *  port's priority scale, 0 = the port's default priority (POSIX ignores
 *  it). *t must stay valid until wisp_sys_thread_join() returned.
 *  WISP_OK, WISP_ERR_MEM (no resources) or WISP_ERR_VAL (the port has no
 *  threads: ports/none). */
wisp_err_t wisp_sys_thread_new(wisp_sys_thread_t *t, const char *name, wisp_sys_thread_fn fn, void *arg,
                               size_t stack_size, int prio);
/** Wait until the thread's fn returned, then release the thread. Every
 *  created thread is joined exactly once, never by itself. */
wisp_err_t wisp_sys_thread_join(wisp_sys_thread_t *t);
/** True when the caller is the thread t (created by wisp_sys_thread_new and
 *  not yet joined). Works from the first instruction of fn on. */
bool wisp_sys_thread_is_self(const wisp_sys_thread_t *t);

/* --------------------------------------------------------------- mutexes */

/** A non-recursive mutex, initially unlocked. */
wisp_err_t wisp_sys_mutex_new(wisp_sys_mutex_t *m);
/** Lock m, waiting as long as needed. Locking a mutex the caller already
 *  holds is a programming error (deadlock); debug builds (WISP_DEBUG)
 *  detect it and fail with WISP_ASSERT. */
void wisp_sys_mutex_lock(wisp_sys_mutex_t *m);
/** Unlock m. Only the holder may unlock; debug builds detect an unlock by
 *  another thread or of an unlocked mutex and fail with WISP_ASSERT. */
void wisp_sys_mutex_unlock(wisp_sys_mutex_t *m);
/** Release m (must be unlocked). */
void wisp_sys_mutex_free(wisp_sys_mutex_t *m);
/** Debug helper: true when the calling thread holds m. Never false when the
 *  caller holds m; a port that cannot tell returns true, which turns the
 *  ownership checks built on it into no-ops. Not for program logic. */
bool wisp_sys_mutex_held(const wisp_sys_mutex_t *m);

/* ------------------------------------------------------------ semaphores */

/** A counting semaphore with initial count (a binary semaphore is one that
 *  starts at 0 or 1 and is signalled at most once per wait). Counts up to
 *  65535 must be supported. */
wisp_err_t wisp_sys_sem_new(wisp_sys_sem_t *sem, unsigned count);
/** Increment the count, waking one waiter. */
void wisp_sys_sem_signal(wisp_sys_sem_t *sem);
/** Wait until the count is positive, then decrement it: WISP_OK; or
 *  WISP_ERR_TIMEOUT after timeout_ms (0 = just try, WISP_SYS_FOREVER = no
 *  limit) without decrementing. */
wisp_err_t wisp_sys_sem_wait(wisp_sys_sem_t *sem, uint32_t timeout_ms);
/** Release sem (nobody may be waiting on it). */
void wisp_sys_sem_free(wisp_sys_sem_t *sem);

/* ------------------------------------------------------------- mailboxes */

/** A bounded FIFO of pointers (NULL is a valid message) with room for
 *  capacity messages (>= 1). Any number of threads may post and fetch. */
wisp_err_t wisp_sys_mbox_new(wisp_sys_mbox_t *mb, unsigned capacity);
/** Append msg, waiting as long as the mailbox is full. */
void wisp_sys_mbox_post(wisp_sys_mbox_t *mb, void *msg);
/** Append msg if there is room: WISP_OK, or WISP_ERR_WOULDBLOCK (full,
 *  nothing done). Never waits. */
wisp_err_t wisp_sys_mbox_trypost(wisp_sys_mbox_t *mb, void *msg);
/** Take the oldest message into *msg: WISP_OK; or WISP_ERR_TIMEOUT after
 *  timeout_ms (0 = just try, WISP_SYS_FOREVER = no limit) with *msg
 *  unchanged. */
wisp_err_t wisp_sys_mbox_fetch(wisp_sys_mbox_t *mb, void **msg, uint32_t timeout_ms);
/** Take the oldest message if there is one: WISP_OK, or
 *  WISP_ERR_WOULDBLOCK (empty, *msg unchanged). Never waits. */
wisp_err_t wisp_sys_mbox_tryfetch(wisp_sys_mbox_t *mb, void **msg);
/** Release mb. Messages still in it are forgotten (the owner drains it
 *  first when they hold resources); nobody may be waiting on it. */
void wisp_sys_mbox_free(wisp_sys_mbox_t *mb);

/* ------------------------------------------------------------------ time */

/** Block the caller for at least ms milliseconds. */
void wisp_sys_sleep_ms(uint32_t ms);
/** Monotonic milliseconds (arbitrary origin, wraps at 2^32; compare with
 *  wisp_time_before()). Never goes back when the wall clock is set. Fits
 *  struct wisp_config.now_ms through a one-line adapter. */
uint32_t wisp_sys_now_ms(void);

/* ------------------------------------------- debug: blocked-thread probe */

#if WISP_SYS_DEBUG_PROBE
/** What a thread waits in (wisp_sys_debug_blocked_kind). */
enum wisp_sys_wait_kind {
    WISP_SYS_WAIT_NONE = 0,     /**< running (or not known to the port) */
    WISP_SYS_WAIT_SEM,          /**< wisp_sys_sem_wait on an empty semaphore */
    WISP_SYS_WAIT_MBOX_FETCH,   /**< wisp_sys_mbox_fetch on an empty mailbox */
    WISP_SYS_WAIT_MBOX_POST,    /**< wisp_sys_mbox_post on a full mailbox */
    WISP_SYS_WAIT_MUTEX         /**< wisp_sys_mutex_lock of a mutex another thread holds */
};

/** Test/debug probe (WISP_SYS_DEBUG_PROBE): the port tracks, for every
 *  thread created by wisp_sys_thread_new() or registered here, whether it
 *  is blocked in one of the waits above and on which object (the address
 *  of the wisp_sys_sem_t / wisp_sys_mbox_t / wisp_sys_mutex_t). "Blocked"
 *  is set by the waiting thread while it holds the object's internal lock,
 *  just before it sleeps: once the probe reports a thread blocked on a
 *  semaphore or mailbox, a signal / post that follows is guaranteed to
 *  reach it as a wake-up (the wait did not finish before). Not for program
 *  logic.
 *
 *  Register the calling thread (one not created by wisp_sys_thread_new,
 *  e.g. main) under the handle t, which stays valid until unregistered;
 *  wisp_sys_thread_is_self(t) is then true on it. */
void wisp_sys_debug_thread_register(wisp_sys_thread_t *t);
/** Undo wisp_sys_debug_thread_register (the calling thread, handle t). */
void wisp_sys_debug_thread_unregister(wisp_sys_thread_t *t);
/** Wait up to timeout_ms until thread t is blocked on obj; obj NULL = on
 *  any semaphore or mailbox (a mutex only when named: mutex waits are
 *  normally short). True once it is, false on timeout (immediately, when
 *  the port has no threads). With message passing (WISP_TCPIP_CORE_LOCKING
 *  0) every API call also waits briefly on a semaphore for the stack
 *  thread: name the object where that matters. */
bool wisp_sys_debug_wait_blocked(const wisp_sys_thread_t *t, const void *obj, uint32_t timeout_ms);
/** Wait up to timeout_ms until at least n known threads are blocked on obj
 *  at the same time. True once they are, false on timeout. */
bool wisp_sys_debug_wait_blocked_n(const void *obj, unsigned n, uint32_t timeout_ms);
/** Now: the object t is blocked on (NULL: not blocked) and, when kind is
 *  not NULL, the kind of wait. */
const void *wisp_sys_debug_blocked_on(const wisp_sys_thread_t *t, enum wisp_sys_wait_kind *kind);
#endif /* WISP_SYS_DEBUG_PROBE */

#endif /* WISP_SYS_H */
