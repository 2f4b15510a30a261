/**
 * @file tcpip.c
 * The stack thread (see wisp/tcpip.h): a thread that owns one stack and is
 * its core context, its mailbox of calls, callbacks and received frames,
 * the core lock other threads may take instead, the wake-up of the sleeping
 * thread when a lock holder armed an earlier timer, and a stop that frees
 * whatever is still queued.
 *
 * Locks and their order (never taken the other way round):
 *   core lock  ->  post_lock  ->  the mailbox's own lock (inside the port)
 * The core lock guards the stack and the thread's sleep state; post_lock
 * guards the free message records, the stop and closed flags and the count
 * of blocking posts in progress (so that wisp_tcpip_stop() can drain every
 * message that will ever be posted). A stop request needs only post_lock,
 * so it gets through while the stack thread is busy.
 *
 * Portable: only wisp/sys.h services; no heap, no globals.
 */
#define WISP_PRIVATE_ACCESS 1 /* library code: sees the private tier (wisp/arch.h) */
#include "wisp/tcpip.h"

enum { MSG_CALL = 1, MSG_CALLBACK, MSG_INPUT, MSG_WAKE, MSG_STOP };

/* Messages run per hold of the core lock before other threads get a turn. */
#define TCPIP_BATCH 32u

/* ------------------------------------------------------------ helpers */

bool wisp_tcpip_on_stack_thread(const struct wisp_tcpip *ctx)
{
    return wisp_sys_thread_is_self(&ctx->thread);
}

/* Take the core for a short internal job; false when the caller (the stack
 * thread) already is the core context. The job is an event (one time). */
static bool core_enter(struct wisp_tcpip *ctx)
{
    bool entered = !wisp_tcpip_on_stack_thread(ctx);
    if (entered) {
        wisp_sys_mutex_lock(&ctx->core);
    }
    wisp_event_begin(ctx->stack);
    return entered;
}

/* Wake the sleeping stack thread when it must look at the stack earlier
 * than it planned: the next deadline (a timer a lock holder armed,
 * loopback packets it queued) is before the time the thread sleeps until.
 * Core lock held. The wake message exists once, so a burst of lock holders
 * posts it at most once per sleep. */
static void kick(struct wisp_tcpip *ctx)
{
    uint32_t due;
    if (!ctx->sleeping || ctx->wake_posted) {
        return;
    }
    if (!wisp_stack_next_deadline(ctx->stack, &due)) {
        return;
    }
    if (!ctx->sleep_forever && !wisp_time_before(due, ctx->sleep_due)) {
        return;
    }
    /* A full mailbox needs no wake: the thread is about to fetch anyway. */
    if (wisp_sys_mbox_trypost(&ctx->mbox, &ctx->wake) == WISP_OK) {
        ctx->wake_posted = 1;
        ctx->st.wakes++;
    }
}

static void core_leave(struct wisp_tcpip *ctx, bool entered)
{
    wisp_event_end(ctx->stack);
    if (entered) {
        kick(ctx);
        wisp_sys_mutex_unlock(&ctx->core);
    }
}

/* post_lock held. */
static void msg_release(struct wisp_tcpip *ctx, struct wisp_tcpip_msg *m)
{
    m->next_free = ctx->free_msgs;
    ctx->free_msgs = m;
}

static void msg_free(struct wisp_tcpip *ctx, struct wisp_tcpip_msg *m)
{
    wisp_sys_mutex_lock(&ctx->post_lock);
    msg_release(ctx, m);
    wisp_sys_mutex_unlock(&ctx->post_lock);
}

/* Post a message record from the pool without waiting. */
static wisp_err_t post_pooled(struct wisp_tcpip *ctx, uint8_t type, wisp_tcpip_fn fn, void *arg,
                              struct wisp_dev *dev)
{
    struct wisp_tcpip_msg *m;
    wisp_err_t r = WISP_OK;

    wisp_sys_mutex_lock(&ctx->post_lock);
    m = ctx->free_msgs;
    if (ctx->closed) {
        r = WISP_ERR_CLSD;
    } else if (m == NULL) {
        r = WISP_ERR_MEM;
    } else {
        m->type = type;
        m->fn = fn;
        m->arg = arg;
        m->to.dev = dev;
        if (wisp_sys_mbox_trypost(&ctx->mbox, m) == WISP_OK) {
            ctx->free_msgs = m->next_free;
            m->next_free = NULL;
        } else {
            r = WISP_ERR_MEM;
        }
    }
    if (r != WISP_OK) {
        if (type == MSG_INPUT) {
            ctx->st.input_drops++;
        } else {
            ctx->st.callback_fails++;
        }
    }
    wisp_sys_mutex_unlock(&ctx->post_lock);
    return r;
}

/* ------------------------------------------------------- the thread */

static bool stop_requested(struct wisp_tcpip *ctx)
{
    bool r;
    wisp_sys_mutex_lock(&ctx->post_lock);
    r = ctx->stop_req != 0;
    wisp_sys_mutex_unlock(&ctx->post_lock);
    return r;
}

/* Run one message in the core context (core lock held). drop: the thread
 * ended and wisp_tcpip_stop drains the mailbox -- a call fails with
 * WISP_ERR_CLSD, a callback is not run, a frame is freed (counted). Out of
 * line: the thread and the stop share one copy. */
WISP_NOINLINE static void handle(struct wisp_tcpip *ctx, struct wisp_tcpip_msg *m, bool drop)
{
    struct wisp_stack *s = ctx->stack;
    uint8_t type = m->type;
    wisp_event_begin(s); /* one message, one time (stack.h) */
    if (type == MSG_CALL) {
        wisp_sys_sem_t *done = m->to.done;
        if (drop) {
            ctx->st.dropped_at_stop++;
            m->result = WISP_ERR_CLSD;
        } else {
            ctx->st.calls++;
            m->result = m->fn(s, m->arg);
        }
        wisp_sys_sem_signal(done); /* m lives on the caller's stack: gone now */
    } else if (type == MSG_CALLBACK || type == MSG_INPUT) {
        wisp_tcpip_fn fn = m->fn;
        void *arg = m->arg;
        struct wisp_dev *dev = m->to.dev;
        struct wisp_pbuf *frame = (struct wisp_pbuf *)arg; /* MSG_INPUT */
        msg_free(ctx, m); /* first, so that fn can post again */
        if (drop) {
            ctx->st.dropped_at_stop++;
            if (type == MSG_INPUT) {
                WISP_CTR_INC(s, TCPIP_INPUT_DROP);
                wisp_pbuf_free(frame);
            }
        } else if (type == MSG_CALLBACK) {
            ctx->st.callbacks++;
            (void)fn(s, arg);
        } else {
            ctx->st.inputs++;
            wisp_dev_input(dev, frame);
        }
    } else if (type == MSG_WAKE) {
        ctx->wake_posted = 0;
    } /* else MSG_STOP: only wakes the thread, stop_req says the rest */
    wisp_event_end(s);
}

static void tcpip_thread(void *arg)
{
    struct wisp_tcpip *ctx = (struct wisp_tcpip *)arg;
    struct wisp_stack *s = ctx->stack;
    bool poll = false;

    wisp_sys_mutex_lock(&ctx->core);
    while (!stop_requested(ctx)) {
        void *msg = NULL;
        unsigned n = 0;
        wisp_err_t r;
        if (poll) {
            /* timers due after the batch, and no stop request */
            poll = false;
            ctx->st.polls++;
            wisp_stack_poll(s);
            continue;
        }
        /* Sleep until the next timer (0 = due now: just look at the
         * mailbox), at most max_wait. Same convention as the sys timeouts. */
        uint32_t timeout = wisp_stack_next_timeout(s);
        if (timeout > ctx->max_wait) {
            timeout = ctx->max_wait;
        }
        if (timeout != 0) {
            ctx->sleeping = 1;
            ctx->sleep_forever = (uint8_t)(timeout == WISP_SYS_FOREVER);
            ctx->sleep_due = wisp_now(s) + timeout;
        }
        /* Released even when not sleeping, so lock users get their turn. */
        wisp_sys_mutex_unlock(&ctx->core);
        r = wisp_sys_mbox_fetch(&ctx->mbox, &msg, timeout);
        wisp_sys_mutex_lock(&ctx->core);
        ctx->sleeping = 0;

        while (r == WISP_OK) {
            handle(ctx, (struct wisp_tcpip_msg *)msg, false);
            if (stop_requested(ctx) || ++n >= TCPIP_BATCH) {
                break;
            }
            r = wisp_sys_mbox_tryfetch(&ctx->mbox, &msg);
        }
        poll = wisp_stack_next_timeout(s) == 0; /* polled after the loop's stop check */
    }
    wisp_sys_mutex_unlock(&ctx->core);
}

/* ------------------------------------------------------ start / stop */

/* The owner hook of a stack run by a stack thread: its core lock's holder. */
static bool core_lock_held(const void *core)
{
    return wisp_sys_mutex_held((const wisp_sys_mutex_t *)core);
}

void wisp_tcpip_set_owner(struct wisp_stack *s, wisp_sys_mutex_t *core)
{
    s->core_lock = core;
    s->owner_ctx = core;
    s->owner_check = core != NULL ? core_lock_held : NULL;
}

/* Undo what start created: the first made of core, post_lock, mbox. */
static void release_objects(struct wisp_tcpip *ctx, unsigned made)
{
    if (made >= 3u) {
        wisp_sys_mbox_free(&ctx->mbox);
    }
    if (made >= 2u) {
        wisp_sys_mutex_free(&ctx->post_lock);
    }
    if (made >= 1u) {
        wisp_sys_mutex_free(&ctx->core);
    }
}

wisp_err_t wisp_tcpip_start(struct wisp_tcpip *ctx, struct wisp_stack *s, const struct wisp_tcpip_cfg *cfg)
{
    unsigned i, made = 0;
    wisp_err_t r;

    if (ctx == NULL || s == NULL) {
        return WISP_ERR_ARG;
    }
    memset(ctx, 0, sizeof(*ctx));
    ctx->stack = s;
    if (cfg != NULL) {
        ctx->cfg = *cfg;
    }
    if (ctx->cfg.name == NULL) {
        ctx->cfg.name = "wisp-tcpip";
    }
    ctx->max_wait = ctx->cfg.max_wait_ms != 0 ? ctx->cfg.max_wait_ms
                    : (WISP_TCPIP_MAX_WAIT_MS != 0 ? (uint32_t)WISP_TCPIP_MAX_WAIT_MS : WISP_SYS_FOREVER);
    for (i = WISP_TCPIP_MSG_COUNT; i-- > 0;) {
        msg_release(ctx, &ctx->msgs[i]); /* the free list in pool order */
    }
    ctx->wake.type = MSG_WAKE;
    ctx->stop_msg.type = MSG_STOP;

    r = wisp_sys_mutex_new(&ctx->core);
    if (r == WISP_OK) {
        made++;
        r = wisp_sys_mutex_new(&ctx->post_lock);
    }
    if (r == WISP_OK) {
        made++;
        r = wisp_sys_mbox_new(&ctx->mbox, WISP_TCPIP_MBOX_SIZE);
    }
    if (r == WISP_OK) {
        made++;
        /* From here on the stack belongs to the core lock's holder. */
        wisp_tcpip_set_owner(s, &ctx->core);
        r = wisp_sys_thread_new(&ctx->thread, ctx->cfg.name, tcpip_thread, ctx, ctx->cfg.stack_size, ctx->cfg.prio);
        if (r != WISP_OK) {
            wisp_tcpip_set_owner(s, NULL);
        }
    }
    if (r != WISP_OK) {
        release_objects(ctx, made);
        return r;
    }
    if (ctx->cfg.init != NULL) {
        r = wisp_tcpip_call(ctx, ctx->cfg.init, ctx->cfg.init_arg);
        if (r != WISP_OK) {
            wisp_tcpip_stop(ctx);
            return r;
        }
    }
    return WISP_OK;
}

void wisp_tcpip_request_stop(struct wisp_tcpip *ctx)
{
    wisp_sys_mutex_lock(&ctx->post_lock);
    ctx->stop_req = 1;
    /* Wake a sleeping thread. A full mailbox needs no wake: the thread
     * fetches anyway and looks at stop_req after that message. */
    if (!ctx->stop_posted && wisp_sys_mbox_trypost(&ctx->mbox, &ctx->stop_msg) == WISP_OK) {
        ctx->stop_posted = 1;
    }
    wisp_sys_mutex_unlock(&ctx->post_lock);
}

void wisp_tcpip_stop(struct wisp_tcpip *ctx)
{
    WISP_ASSERT(!wisp_tcpip_on_stack_thread(ctx));
    WISP_ASSERT(!wisp_sys_mutex_held(&ctx->core));
    wisp_tcpip_request_stop(ctx);
    (void)wisp_sys_thread_join(&ctx->thread);

    /* Close the mailbox, then drain it until no blocking post is still in
     * progress (each of those finds room as we drain, and no new one can
     * start once closed is set). */
    for (;;) {
        void *msg;
        unsigned in_flight;
        wisp_sys_mutex_lock(&ctx->post_lock);
        ctx->closed = 1;
        in_flight = ctx->in_flight;
        wisp_sys_mutex_unlock(&ctx->post_lock);
        wisp_sys_mutex_lock(&ctx->core);
        while (wisp_sys_mbox_tryfetch(&ctx->mbox, &msg) == WISP_OK) {
            handle(ctx, (struct wisp_tcpip_msg *)msg, true);
        }
        wisp_sys_mutex_unlock(&ctx->core);
        if (in_flight == 0) {
            break;
        }
        wisp_sys_sleep_ms(1);
    }
    wisp_tcpip_set_owner(ctx->stack, NULL); /* single-threaded again */
    release_objects(ctx, 3u);
}

/* ------------------------------------------------------- ways in */

void wisp_tcpip_lock(struct wisp_tcpip *ctx)
{
    wisp_sys_mutex_lock(&ctx->core);
}

void wisp_tcpip_unlock(struct wisp_tcpip *ctx)
{
    kick(ctx);
    wisp_sys_mutex_unlock(&ctx->core);
}

wisp_err_t wisp_tcpip_call_sem(struct wisp_tcpip *ctx, wisp_tcpip_fn fn, void *arg, wisp_sys_sem_t *done)
{
    struct wisp_tcpip_msg m;

    if (wisp_tcpip_on_stack_thread(ctx)) {
        return fn(ctx->stack, arg);
    }
    /* Waiting for the stack thread while holding its lock never ends. */
    WISP_ASSERT(!wisp_sys_mutex_held(&ctx->core));
    m.type = MSG_CALL; /* every field handle() reads of a call */
    m.fn = fn;
    m.arg = arg;
    m.to.done = done;
    m.result = WISP_ERR_CLSD;

    wisp_sys_mutex_lock(&ctx->post_lock);
    if (ctx->closed) {
        wisp_sys_mutex_unlock(&ctx->post_lock);
        return WISP_ERR_CLSD;
    }
    ctx->in_flight++;
    wisp_sys_mutex_unlock(&ctx->post_lock);

    wisp_sys_mbox_post(&ctx->mbox, &m); /* waits while the mailbox is full */

    wisp_sys_mutex_lock(&ctx->post_lock);
    ctx->in_flight--;
    wisp_sys_mutex_unlock(&ctx->post_lock);

    (void)wisp_sys_sem_wait(done, WISP_SYS_FOREVER);
    return m.result;
}

wisp_err_t wisp_tcpip_call(struct wisp_tcpip *ctx, wisp_tcpip_fn fn, void *arg)
{
    wisp_sys_sem_t done;
    wisp_err_t r;

    if (wisp_tcpip_on_stack_thread(ctx)) {
        return fn(ctx->stack, arg);
    }
    r = wisp_sys_sem_new(&done, 0);
    if (r != WISP_OK) {
        return r;
    }
    r = wisp_tcpip_call_sem(ctx, fn, arg, &done);
    wisp_sys_sem_free(&done);
    return r;
}

wisp_err_t wisp_tcpip_callback(struct wisp_tcpip *ctx, wisp_tcpip_fn fn, void *arg)
{
    return post_pooled(ctx, MSG_CALLBACK, fn, arg, NULL);
}

wisp_err_t wisp_tcpip_run(struct wisp_tcpip *ctx, wisp_tcpip_fn fn, void *arg)
{
#if WISP_TCPIP_CORE_LOCKING
    wisp_err_t r;
    bool entered = core_enter(ctx);
    r = fn(ctx->stack, arg);
    core_leave(ctx, entered);
    return r;
#else
    return wisp_tcpip_call(ctx, fn, arg);
#endif
}

/* ------------------------------------------------------- drivers */

struct wisp_pbuf *wisp_tcpip_alloc_rx(struct wisp_tcpip *ctx, uint16_t len)
{
    struct wisp_pbuf *p;
    bool entered = core_enter(ctx);
    p = wisp_pbuf_alloc_rx(ctx->stack, len);
    if (p == NULL) {
        WISP_CTR_INC(ctx->stack, NETIF_RX_NOMEM);
    }
    core_leave(ctx, entered);
    return p;
}

void wisp_tcpip_pbuf_free(struct wisp_tcpip *ctx, struct wisp_pbuf *p)
{
    bool entered = core_enter(ctx);
    wisp_pbuf_free(p);
    core_leave(ctx, entered);
}

wisp_err_t wisp_tcpip_input(struct wisp_tcpip *ctx, struct wisp_dev *dev, struct wisp_pbuf *frame)
{
    wisp_err_t r = post_pooled(ctx, MSG_INPUT, NULL, frame, dev);
    if (r != WISP_OK) {
        bool entered = core_enter(ctx);
        WISP_CTR_INC(ctx->stack, TCPIP_INPUT_DROP);
        wisp_pbuf_free(frame);
        core_leave(ctx, entered);
    }
    return r;
}

wisp_err_t wisp_tcpip_input_copy(struct wisp_tcpip *ctx, struct wisp_dev *dev, const void *data, uint16_t len)
{
    struct wisp_pbuf *p = wisp_tcpip_alloc_rx(ctx, len);
    if (p == NULL) {
        return WISP_ERR_MEM;
    }
    /* Filling our own fresh pbuf touches no pool: no lock needed. */
    if (wisp_pbuf_copy_in(p, data, len, 0) != WISP_OK) {
        wisp_tcpip_pbuf_free(ctx, p);
        return WISP_ERR_BUF;
    }
    return wisp_tcpip_input(ctx, dev, p);
}

void wisp_tcpip_tx_ready(struct wisp_tcpip *ctx, struct wisp_dev *dev)
{
    bool entered = core_enter(ctx);
    wisp_dev_tx_ready(dev);
    core_leave(ctx, entered);
}

void wisp_tcpip_get_stats(struct wisp_tcpip *ctx, struct wisp_tcpip_stats *out)
{
    bool entered = core_enter(ctx);
    wisp_sys_mutex_lock(&ctx->post_lock);
    *out = ctx->st;
    wisp_sys_mutex_unlock(&ctx->post_lock);
    core_leave(ctx, entered);
}
