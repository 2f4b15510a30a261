/**
 * @file tcpip.h
 * The stack thread: one OS thread that owns one struct wisp_stack and is its
 * core context, plus the ways other threads get in.
 *
 * The thread loops: wait on its mailbox for at most the time until the next
 * stack timer (wisp_stack_next_timeout, capped by max_wait_ms), run the
 * messages it got (calls, callbacks, received frames), run the timers that
 * are due (wisp_stack_poll). It holds the *core lock* (a wisp_sys_mutex_t)
 * whenever it touches the stack and releases it while it sleeps.
 *
 * Ways in (all usable at the same time; WISP_TCPIP_CORE_LOCKING only picks
 * what wisp_tcpip_run() and the API layers built on it use):
 *  - core locking: wisp_tcpip_lock() ... core calls ... wisp_tcpip_unlock().
 *    The caller runs core functions itself. When it armed a timer earlier
 *    than the one the sleeping stack thread waits for (or queued loopback
 *    packets), wisp_tcpip_unlock() wakes the thread.
 *  - message passing: wisp_tcpip_call() runs a function on the stack thread
 *    and waits for its result; wisp_tcpip_callback() posts one and returns.
 *  - drivers: wisp_tcpip_input() posts a received frame; the thread hands it
 *    to wisp_dev_input(). Receive pbufs come from the stack's pools, which
 *    are core-only: a driver thread allocates them with wisp_tcpip_alloc_rx()
 *    (which takes the core lock for the allocation only), or simply calls
 *    wisp_tcpip_input_copy() with its own buffer. wisp_tcpip_tx_ready()
 *    tells the stack the device can transmit again.
 *
 * Rules:
 *  - Before wisp_tcpip_start() the stack is used single-threaded (set it up:
 *    interfaces, addresses). From start until wisp_tcpip_stop() returns,
 *    core functions may be called only in the core context: on the stack
 *    thread (inside calls, callbacks, and the stack's own callbacks such as
 *    UDP receive or timers) or between wisp_tcpip_lock/unlock. Debug builds
 *    check this in every core entry point (WISP_CORE_ASSERT_OWNER, through
 *    the owner hook wisp_tcpip_start installs: wisp_tcpip_set_owner).
 *  - Never block in the core context (no wisp_tcpip_call from inside
 *    wisp_tcpip_lock, no waiting for another thread that needs the core):
 *    the stack thread and every other user would stall.
 *  - The core lock is not recursive: do not call wisp_tcpip_lock() in the
 *    core context (debug builds catch it).
 *
 * No-OS systems (ports/none) have no stack thread: the application's main
 * loop is the core context (see docs/porting.md).
 */
#ifndef WISP_TCPIP_H
#define WISP_TCPIP_H

#include "wisp/stack.h"
#include "wisp/sys.h"

/** A function run in the core context. s is the context's stack, arg the
 *  caller's. Its result is returned by wisp_tcpip_call / wisp_tcpip_run. */
typedef wisp_err_t (*wisp_tcpip_fn)(struct wisp_stack *s, void *arg);

struct wisp_tcpip_cfg {
    const char *name;         /**< thread name; NULL = "wisp-tcpip" */
    size_t stack_size;        /**< thread stack in bytes; 0 = port default */
    int prio;                 /**< thread priority (port scale); 0 = default */
    /** Longest sleep without message or due timer (see
     *  WISP_TCPIP_MAX_WAIT_MS); 0 = that option, WISP_SYS_FOREVER = none. */
    uint32_t max_wait_ms;
    /** Optional: run on the stack thread, in the core context, before
     *  wisp_tcpip_start() returns; an error return makes the start fail. */
    wisp_tcpip_fn init;
    void *init_arg;
};

/** Counters of one context (read with wisp_tcpip_get_stats). */
struct wisp_tcpip_stats {
    uint32_t calls;           /**< wisp_tcpip_call messages run */
    uint32_t callbacks;       /**< wisp_tcpip_callback messages run */
    uint32_t inputs;          /**< frames handed to wisp_dev_input */
    uint32_t input_drops;     /**< frames dropped: no message, mailbox full, stopped */
    uint32_t callback_fails;  /**< callbacks refused: no message, mailbox full, stopped */
    uint32_t polls;           /**< wisp_stack_poll runs */
    uint32_t wakes;           /**< wake-ups posted by wisp_tcpip_unlock */
    uint32_t dropped_at_stop; /**< messages drained by wisp_tcpip_stop */
};

struct wisp_tcpip_msg;

struct wisp_tcpip;

/** Start a stack thread for s, which the caller has initialised (and
 *  usually given its interfaces); cfg may be NULL (defaults). From now on s
 *  belongs to the thread (see the rules above). WISP_OK; WISP_ERR_MEM (OS
 *  resources); WISP_ERR_VAL (the port has no threads); or the init
 *  function's error (the thread is stopped again). */
wisp_err_t wisp_tcpip_start(struct wisp_tcpip *ctx, struct wisp_stack *s, const struct wisp_tcpip_cfg *cfg);
/** Ask the stack thread to leave after the message it is running, without
 *  running what is still queued. Never waits for the core: callable from
 *  any thread, also while the stack thread is busy, and from the stack
 *  thread itself. */
void wisp_tcpip_request_stop(struct wisp_tcpip *ctx);
/** Stop the thread (request_stop, then wait for it) and release the
 *  context's OS objects. Messages still queued are not run: received frames
 *  are freed (counted in tcpip.input.drop), callbacks are dropped (their
 *  arguments stay the poster's business), wisp_tcpip_call()s waiting for
 *  them return WISP_ERR_CLSD, and so do calls and callbacks posted while
 *  the stop runs. Stop driver threads first (a frame they still post would
 *  have to be freed into a stack that is no longer theirs). Afterwards the
 *  caller owns s single-threaded again (to remove PCBs and
 *  wisp_stack_deinit it) and ctx is dead until started again: no thread may
 *  use it any more. Not from the stack thread, not holding the core lock. */
void wisp_tcpip_stop(struct wisp_tcpip *ctx);

/** Take the core lock: the caller is the core context until unlock. The
 *  hold is not an event by itself (stack.h, "time once per event"): the
 *  holder's calls are like raw calls of a single-threaded application,
 *  whose wisp_stack_poll and wisp_dev_input are events of their own; a
 *  holder wanting one time for several calls brackets them with
 *  wisp_event_begin/end. (Messages and wisp_tcpip_run are events.) */
void wisp_tcpip_lock(struct wisp_tcpip *ctx);
/** Wake the stack thread if the caller armed an earlier timer (or queued
 *  loopback packets), then release the core lock. */
void wisp_tcpip_unlock(struct wisp_tcpip *ctx);

/** Run fn(s, arg) on the stack thread and return its result; waits as long
 *  as needed (the mailbox may be full). Called on the stack thread it runs
 *  fn directly. Must not be called by a thread holding the core lock.
 *  WISP_ERR_CLSD when the context is stopping (fn not run). */
wisp_err_t wisp_tcpip_call(struct wisp_tcpip *ctx, wisp_tcpip_fn fn, void *arg);
/** wisp_tcpip_call() with the caller's semaphore (count 0; left at 0) for
 *  the completion: for callers that keep one per thread or per connection
 *  instead of creating one per call. */
wisp_err_t wisp_tcpip_call_sem(struct wisp_tcpip *ctx, wisp_tcpip_fn fn, void *arg, wisp_sys_sem_t *done);
/** Post fn(s, arg) to run later on the stack thread (its result is
 *  ignored) and return at once: WISP_OK; WISP_ERR_MEM (no free message
 *  record or mailbox full; nothing posted); WISP_ERR_CLSD (stopping). Any
 *  thread, the stack thread included. Runs in posting order. */
wisp_err_t wisp_tcpip_callback(struct wisp_tcpip *ctx, wisp_tcpip_fn fn, void *arg);
/** Run fn(s, arg) in the core context by the mechanism WISP_TCPIP_CORE_LOCKING
 *  selects (lock + direct call, or wisp_tcpip_call) and return its result.
 *  On the stack thread it runs fn directly. The entry point of the
 *  sequential APIs. */
wisp_err_t wisp_tcpip_run(struct wisp_tcpip *ctx, wisp_tcpip_fn fn, void *arg);

/** Driver up-call from a thread other than the stack thread: post a received
 *  frame for dev (whose chain must be attached to a netif of this stack).
 *  Always consumes frame: WISP_OK, or dropped and freed (WISP_ERR_MEM: no
 *  message / mailbox full; WISP_ERR_CLSD: stopping), counted in
 *  tcpip.input.drop. Not while holding the core lock (on the stack thread,
 *  call wisp_dev_input directly). */
wisp_err_t wisp_tcpip_input(struct wisp_tcpip *ctx, struct wisp_dev *dev, struct wisp_pbuf *frame);
/** Allocate a receive pbuf of len bytes for a driver thread (takes the core
 *  lock for the allocation). NULL when the receive budget is exhausted
 *  (counted as netif.rx.nomem). */
struct wisp_pbuf *wisp_tcpip_alloc_rx(struct wisp_tcpip *ctx, uint16_t len);
/** Copy len bytes into a receive pbuf and post it (wisp_tcpip_alloc_rx +
 *  wisp_pbuf_copy_in + wisp_tcpip_input). WISP_OK or why it was dropped. */
wisp_err_t wisp_tcpip_input_copy(struct wisp_tcpip *ctx, struct wisp_dev *dev, const void *data, uint16_t len);
/** Free a pbuf of this stack outside the core context (takes the lock). */
void wisp_tcpip_pbuf_free(struct wisp_tcpip *ctx, struct wisp_pbuf *p);
/** Driver up-call: dev can transmit again (wisp_dev_tx_ready under the core
 *  lock, so it is never lost to a full mailbox). Not in the core context. */
void wisp_tcpip_tx_ready(struct wisp_tcpip *ctx, struct wisp_dev *dev);

/** Register core as the mutex whose holder owns s (s->core_lock and the
 *  owner hook behind WISP_CORE_ASSERT_OWNER); NULL: s is used
 *  single-threaded again, nothing is checked. wisp_tcpip_start and
 *  wisp_tcpip_stop call it; tests and other OS layers may too. */
void wisp_tcpip_set_owner(struct wisp_stack *s, wisp_sys_mutex_t *core);

/** True when the caller is ctx's stack thread. */
bool wisp_tcpip_on_stack_thread(const struct wisp_tcpip *ctx);
/** A snapshot of the counters (takes the core lock and post_lock; not in
 *  the core context). */
void wisp_tcpip_get_stats(struct wisp_tcpip *ctx, struct wisp_tcpip_stats *out);

/* the layout of the structures above (private tier) */
#include "wisp/priv/tcpip.h"

#endif /* WISP_TCPIP_H */
