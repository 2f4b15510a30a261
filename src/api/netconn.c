/**
 * @file netconn.c
 * The sequential netconn API (wisp/netconn.h): netconns and their pool,
 * the raw-API callbacks that fill their mailboxes in the core context, the
 * blocking / timed / non-blocking calls of application threads and the
 * wake-up of blocked threads on close, delete and connection errors.
 *
 * Who touches what:
 *  - core context (the core lock: wisp_tcpip_run with core locking, the
 *    stack thread with message passing, the raw callbacks): a netconn's
 *    PCB pointer, state and cflags. Application
 *    threads reach them only through core operations (do_*).
 *  - the api lock (taken inside the core lock, never the other way round,
 *    never held while calling a callback or entering the core; only a
 *    mailbox's non-blocking post, whose lock is the port's leaf, happens
 *    under it: tcp_accept_cb): the
 *    pools, every netconn's flags, pending error, connect result, users,
 *    backlog counters and timeouts, and the counters.
 *  - the OS objects of a slot (a mailbox and a semaphore: lwIP's count)
 *    are made once by wisp_netconn_api_init and reused.
 *
 * Blocking and wake-up:
 *  - recv / accept wait on the mailbox. Every terminal event (peer's FIN,
 *    connection error, close, shutdown(RD), delete) first records itself in
 *    the flags under the api lock and then posts the netconn's marker (the
 *    address of conn itself: never an item of its own mailbox) when the mailbox has room. A reader that
 *    fetches the marker posts it again (so every blocked reader wakes) and
 *    returns the error the flags say. A reader looks at the flags only
 *    when the mailbox is empty (peer events: data received before them is
 *    delivered first) or before fetching (application events: close,
 *    shutdown, delete), so a marker that found the mailbox full is never
 *    needed: nobody blocks on a full mailbox.
 *  - every other wait (a writer for room or for its turn, a blocking
 *    connect, delete for the callers to leave) is nc_wait_locked, a
 *    condition-variable wait under the api lock: the waiter found its
 *    condition false and links itself into the api's list of waiters
 *    (one list for every netconn: RAM per connection) in the same
 *    api-locked section; a waker that changed a condition (under the api
 *    lock) broadcasts: it signals the semaphore of every linked waiter
 *    of that netconn and unlinks them. Waits re-check their condition after every
 *    wake-up. The first waiter borrows the slot's semaphore, a second
 *    concurrent one makes a semaphore for its wait, so a netconn keeps
 *    two OS objects (a mailbox and a semaphore: lwIP's count) and a
 *    wake-up never reaches the wrong thread. A writer that do_write
 *    could not finish (NC_C_WRITE_WAIT) is woken by the sent / poll /
 *    error callbacks; close, shutdown and delete broadcast too. As the
 *    writer enters nc_wait_locked only after do_write returned, do_write
 *    clears wkick and every broadcast sets it: a writer that finds it set
 *    does not wait (the wake-up came in between). Writers of a netconn
 *    take turns (conn->writing, waited for the same way) instead of
 *    holding a mutex.
 *  - connection errors: tcp_err_cb keeps the error twice, as the pending
 *    error (taken once by the next call) and in conn_err (kept). A recv
 *    that entered before the netconn died, or a write that saw it
 *    established, returns conn_err when the pending error is already
 *    gone: every call the error interrupts reports it (netconn.h).
 *  - netconn_delete refuses new calls on the netconn (NC_F_DELETING),
 *    closes it in the core, wakes everybody, waits on the semaphore until
 *    the other callers left (users == 0), then frees what is still queued
 *    and the slot.
 */
#define WISP_PRIVATE_ACCESS 1 /* library code: sees the private tier (wisp/arch.h) */
#include "wisp/netconn.h"

#if WISP_TCP || WISP_UDP

/* conn->flags (api lock) */
#define NC_F_NONBLOCK 0x01u
#define NC_F_RX_FIN 0x02u    /* the peer's FIN arrived */
#define NC_F_RX_SHUT 0x04u   /* shutdown(RD) by the application */
#define NC_F_CLOSED 0x08u    /* closed by the application */
#define NC_F_DEAD 0x10u      /* the stack freed the PCB (error or done) */
#define NC_F_DELETING 0x20u  /* netconn_delete in progress */
#define NC_F_CONN_DONE 0x40u /* a blocking connect's outcome is in connect_result */
#define NC_F_LISTEN 0x80u    /* a listener (its mailbox holds netconns) */

/* nc_msg.sel of the close operations */
#define NC_SHUT_RX 0x01u
#define NC_SHUT_TX 0x02u
#define NC_SHUT_ABORT 0x04u

/* conn->state (core) */
#define NC_USERS_MAX 2047u /* the users bitfield (priv/netconn.h) */

enum { NC_S_NONE = 0, NC_S_LISTEN, NC_S_CONNECTING, NC_S_CONNECTED, NC_S_CLOSED };

/* conn->cflags (core) */
#define NC_C_WRITE_WAIT 0x01u   /* a writer is registered on the semaphore (do_write) */
#define NC_C_CONNECT_WAIT 0x02u /* a blocking connect waits for its outcome */
#define NC_C_NOCOPY 0x04u       /* the stack references a writer's memory (unacknowledged) */
#define NC_C_WSPACE 0x08u       /* SENDMINUS was signalled: SENDPLUS due when space returns */
#define NC_C_POLL 0x10u         /* the poll callback is armed (write retry) */
#define NC_C_REFUSED 0x20u      /* the mailbox refused data: offer it again when room returns */
/* In wisp_pbuf.flags (0x80 is the API layer's, pbuf.h): a short TCP item
 * counted in rx_items (nc_rx_take). */
#define NC_PBUF_SHORT 0x80u


/* "Writable" for the events: half the send buffer free (lwIP's TCP_SNDLOWAT
 * idea); the connection's buffer, which SO_SNDBUF may have made smaller. */
#define NC_SNDLOWAT(pcb) (wisp_tcp_sndbuf_size(pcb) / 2u)
/* Smallest piece a write retries with after the stack ran out of buffers. */
#define NC_WRITE_MIN_CHUNK 536u

const wisp_ipaddr_t wisp_netconn_addr_any = WISP_IPADDR4_INIT(0);
const wisp_ipaddr_t wisp_netconn_addr_bcast = WISP_IPADDR4_INIT(0xffffffffu);

/* What a call needs of the api-locked fields, read when it enters (one
 * lock round trip for the call's bookkeeping and its settings). */
struct nc_snap {
    uint8_t flags;
    uint32_t recv_timeout, send_timeout;
};

/* Arguments of the core operations: a few generic fields every operation
 * reads in its own way (one message shape, built in one place for the
 * simple calls: nc_op). The bytes first: short loads on Thumb. */
struct nc_msg {
    struct wisp_netconn *conn;
    uint8_t op;               /* NC_OP_*: what do_op runs */
    uint8_t sel;              /* bind / getaddr / drain: local (listener); options: NC_OPT_*;
                                 close: NC_SHUT_* bits; recved: only free the chains */
    uint8_t apiflags;         /* write */
    bool blocking, started;   /* connect, write */
    bool copy, done;          /* write */
    bool alive;               /* write: a do_write found the connection established */
    uint32_t len;             /* port, backlog, option value, bytes consumed, pbuf size */
    void *ptr;                /* address, netbuf, option values, tcp_info, chains (read-only
                                 for the calls that pass const data) */
    void *out;                /* getaddr: the port; pbuf_replace: the netbuf */
    /* write (data: ptr) */
    size_t size, off;
    uint32_t chunk;
};

/* The core operations (nc_msg.op): one entry point, do_op, runs them all
 * in the core context (a switch instead of a function pointer per call
 * site and a function per operation). */
enum { NC_OP_NEW, NC_OP_DRAIN, NC_OP_CLOSE, NC_OP_BIND_CONNECT, NC_OP_DISCONNECT, NC_OP_GETADDR, NC_OP_LISTEN,
       NC_OP_RECVED, NC_OP_SEND, NC_OP_WRITE, NC_OP_NOCOPY_RELEASE, NC_OP_OPTION, NC_OP_PBUF_REPLACE };

static wisp_err_t do_op(struct wisp_stack *s, void *arg);

/* ---------------------------------------------------------- small helpers */

/* A zeroed message (one out-of-line copy of the memset for the API calls). */
static void nc_msg_zero(struct nc_msg *m)
{
    memset(m, 0, sizeof(*m));
}

WISP_NOINLINE static void api_lock(struct wisp_netconn_api *api)
{
    wisp_sys_mutex_lock(&api->lock);
}

WISP_NOINLINE static void api_unlock(struct wisp_netconn_api *api)
{
    wisp_sys_mutex_unlock(&api->lock);
}

/* Run core operation op (NC_OP_*) on conn with message m. */
static wisp_err_t nc_run(struct wisp_netconn *conn, uint8_t op, struct nc_msg *m)
{
    m->conn = conn;
    m->op = op;
    return wisp_tcpip_run(conn->api->tcpip, do_op, m);
}

static bool conn_enter(struct wisp_netconn *conn, struct nc_snap *snap);
static void conn_leave(struct wisp_netconn *conn);

/* The generic call path: a whole call that is one core operation op with
 * the arguments sel, len, ptr and out (struct nc_msg says how each
 * operation reads them): conn checked, enter, run fn, leave. Every simple
 * call of the API is this one function and a line. */
WISP_NOINLINE static wisp_err_t nc_op(struct wisp_netconn *conn, uint8_t op, uint8_t sel, uint32_t len,
                                      const void *ptr, void *out)
{
    struct nc_msg m;
    wisp_err_t r;
    if (conn == NULL) {
        return WISP_ERR_ARG;
    }
    if (!conn_enter(conn, NULL)) {
        return WISP_ERR_CLSD;
    }
    nc_msg_zero(&m);
    m.sel = sel;
    m.len = len;
    m.ptr = (void *)(uintptr_t)ptr; /* const for the calls that only read it */
    m.out = out;
    r = nc_run(conn, op, &m);
    conn_leave(conn);
    return r;
}

static void nc_event_len(struct wisp_netconn *conn, enum wisp_netconn_evt evt, uint32_t len)
{
    if (conn->callback != NULL) {
        conn->callback(conn, evt, (uint16_t)(len > 0xffffu ? 0xffffu : len));
    }
}

/* An event without a length (one copy of the 0 for the many callers). */
WISP_NOINLINE static void nc_event(struct wisp_netconn *conn, enum wisp_netconn_evt evt)
{
    nc_event_len(conn, evt, 0);
}

/* Wake the readers of conn (see the file comment). */
WISP_NOINLINE static void wake_mbox(struct wisp_netconn *conn)
{
    (void)wisp_sys_mbox_trypost(&conn->mbox, conn);
}

/* A thread waiting in nc_wait_locked (on its stack), linked into the
 * api's list (struct wisp_netconn_api waiters). */
struct nc_waiter {
    struct nc_waiter *next;
    struct wisp_netconn *conn;        /* the netconn it waits on */
    wisp_sys_sem_t *sem;
    bool woken;
};

/* Api lock held: wake every thread in nc_wait_locked on conn (see the
 * file comment) and tell the writer that something happened (wkick). */
static void sem_broadcast_locked(struct wisp_netconn *conn)
{
    struct nc_waiter **pp = &conn->api->waiters;
    conn->wkick = 1;
    while (*pp != NULL) {
        struct nc_waiter *w = *pp; /* w stays valid: it needs the api lock to leave */
        if (w->conn == conn) {
            *pp = w->next;
            w->woken = true;
            wisp_sys_sem_signal(w->sem);
        } else {
            pp = &w->next;
        }
    }
}

static void sem_broadcast(struct wisp_netconn *conn)
{
    api_lock(conn->api);
    sem_broadcast_locked(conn);
    api_unlock(conn->api);
}

/* Api lock held (released meanwhile): wait until a broadcast or until ms
 * passed. The first waiter borrows the slot's semaphore; a thread that
 * waits on the same netconn at the same time makes its own for the wait
 * (and polls every 10 ms when the OS has none left). Each semaphore has
 * one waiter, so no wake-up is taken by the wrong thread. */
static void nc_wait_locked(struct wisp_netconn *conn, uint32_t ms)
{
    struct nc_waiter w;
    wisp_sys_sem_t own;
    bool signalled;
    if (!conn->sem_lent) {
        conn->sem_lent = 1;
        w.sem = &conn->sem;
    } else if (wisp_sys_sem_new(&own, 0) == WISP_OK) {
        w.sem = &own;
    } else {
        api_unlock(conn->api);
        wisp_sys_sleep_ms(WISP_MIN(ms, 10u));
        api_lock(conn->api);
        return;
    }
    w.woken = false;
    w.conn = conn;
    w.next = conn->api->waiters;
    conn->api->waiters = &w;
    api_unlock(conn->api);
    signalled = wisp_sys_sem_wait(w.sem, ms) == WISP_OK;
    api_lock(conn->api);
    if (!w.woken) {
        /* timed out (a broadcast sets woken before it signals): unlink */
        struct nc_waiter **pp = &conn->api->waiters;
        while (*pp != &w) {
            pp = &(*pp)->next;
        }
        *pp = w.next;
    } else if (!signalled) {
        (void)wisp_sys_sem_wait(w.sem, WISP_SYS_NO_WAIT); /* the signal that raced the timeout */
    }
    if (w.sem == &conn->sem) {
        conn->sem_lent = 0;
    } else {
        wisp_sys_sem_free(&own);
    }
}

/* Wake readers, writers, connecter and deleter. */
static void wake_all(struct wisp_netconn *conn)
{
    wake_mbox(conn);
    sem_broadcast(conn);
}

/* Free a pbuf chain outside the core context (pools are core-only), and
 * return how many buffers went back to their pools. */
static unsigned core_pbuf_free(struct wisp_netconn_api *api, struct wisp_pbuf *p)
{
    unsigned n;
    if (p == NULL) {
        return 0;
    }
    if (wisp_tcpip_on_stack_thread(api->tcpip)) {
        return wisp_pbuf_free(p);
    }
    wisp_tcpip_lock(api->tcpip);
    n = wisp_pbuf_free(p);
    wisp_tcpip_unlock(api->tcpip);
    return n;
}

/* Enter / leave a call on conn: delete waits for the callers inside. A
 * layered netconn (wisp_netconn_set_layered) is not counted: the layer
 * above deletes it only after its own callers left. snap may be NULL. */
static bool conn_enter(struct wisp_netconn *conn, struct nc_snap *snap)
{
    bool ok;
    api_lock(conn->api);
    ok = conn->in_use && !(conn->flags & NC_F_DELETING);
    if (ok && !conn->layered) {
        /* users is 11 bits (priv/netconn.h): a 2048th concurrent caller is
         * refused like a call on a deleted netconn, never wraps the count */
        ok = conn->users < NC_USERS_MAX;
        if (ok) {
            conn->users++;
        }
    }
    if (snap != NULL) {
        snap->flags = conn->flags;
        snap->recv_timeout = conn->recv_timeout;
        snap->send_timeout = conn->send_timeout;
    }
    api_unlock(conn->api);
    return ok;
}

static void conn_leave(struct wisp_netconn *conn)
{
    if (conn->layered) {
        return;
    }
    api_lock(conn->api);
    conn->users--;
    if (conn->users == 0 && (conn->flags & NC_F_DELETING)) {
        sem_broadcast_locked(conn);
    }
    api_unlock(conn->api);
}

/* Set and clear flags of conn (under the api lock); returns the flags
 * before. */
WISP_NOINLINE static uint8_t nc_flags(struct wisp_netconn *conn, uint8_t set, uint8_t clear)
{
    uint8_t old;
    api_lock(conn->api);
    old = conn->flags;
    conn->flags = (uint8_t)((old & ~clear) | set);
    api_unlock(conn->api);
    return old;
}

static void set_flags(struct wisp_netconn *conn, uint8_t f)
{
    (void)nc_flags(conn, f, 0);
}

#if WISP_TCP
/* Count one event in counter c of api's counters (under the api lock). */
WISP_NOINLINE static void nc_count(struct wisp_netconn_api *api, uint32_t *c)
{
    api_lock(api);
    (*c)++;
    api_unlock(api);
}
#endif

/* A short item leaves the mailbox's count (taken, or its post failed: nc_rx_take). */
WISP_NOINLINE static void rx_uncount(struct wisp_netconn *conn, struct wisp_pbuf *p)
{
    if (p->flags & NC_PBUF_SHORT) {
        p->flags &= (uint8_t)~NC_PBUF_SHORT;
        api_lock(conn->api);
        conn->rx_items--;
        api_unlock(conn->api);
    }
}

/* The error of a netconn the application closed (for reading), or OK. */
static wisp_err_t app_closed_err(uint8_t flags)
{
    return (flags & (NC_F_CLOSED | NC_F_RX_SHUT | NC_F_DELETING)) ? WISP_ERR_CLSD : WISP_OK;
}

/* Api lock held: the pending error (taken), or CLSD after FIN / death.
 * entry_flags are conn's flags when the call entered: a connection error
 * that arrived during the call (the netconn was not dead yet) is returned
 * even when another thread's call took the pending error first -- both a
 * blocked reader and a blocked writer learn of the reset (netconn.h). */
WISP_NOINLINE static wisp_err_t peer_state_err(struct wisp_netconn *conn, uint8_t entry_flags)
{
    wisp_err_t r = conn->pending_err;
    if (r != WISP_OK) {
        conn->pending_err = WISP_OK;
        return r;
    }
    if (!(entry_flags & NC_F_DEAD) && conn->conn_err != WISP_OK) {
        return conn->conn_err;
    }
    return (conn->flags & (NC_F_RX_FIN | NC_F_DEAD)) ? WISP_ERR_CLSD : WISP_OK;
}

#if WISP_TCP
/* Core context: why a TCP netconn without PCB cannot be used. during: the
 * call saw the connection alive before (a write that waited): a connection
 * error is returned even when another call took the pending error. */
WISP_NOINLINE static wisp_err_t dead_err(struct wisp_netconn *conn, bool during)
{
    wisp_err_t r;
    api_lock(conn->api);
    r = conn->pending_err;
    if (r != WISP_OK) {
        conn->pending_err = WISP_OK;
    } else if (during && conn->conn_err != WISP_OK && !(conn->flags & (NC_F_CLOSED | NC_F_DELETING))) {
        r = conn->conn_err;
    } else if (conn->flags & (NC_F_CLOSED | NC_F_DEAD | NC_F_DELETING)) {
        r = WISP_ERR_CLSD;
    } else {
        r = WISP_ERR_CONN;
    }
    api_unlock(conn->api);
    return r;
}
#endif

/* ---------------------------------------------------------------- pools */

static void slot_free_objects(struct wisp_netconn *c)
{
    wisp_sys_mbox_free(&c->mbox);
    wisp_sys_sem_free(&c->sem);
}

static wisp_err_t slot_init(struct wisp_netconn *c)
{
    wisp_err_t r = wisp_sys_mbox_new(&c->mbox, WISP_NETCONN_RECVMBOX_SIZE);
    if (r != WISP_OK) {
        return r;
    }
    r = wisp_sys_sem_new(&c->sem, 0);
    if (r != WISP_OK) {
        wisp_sys_mbox_free(&c->mbox);
    }
    return r;
}

/* Api lock held: take a slot and reset it. */
static struct wisp_netconn *conn_alloc_locked(struct wisp_netconn_api *api, enum wisp_netconn_type type,
                                              wisp_netconn_callback cb)
{
    struct wisp_netconn *c = api->conns;
    while (c->in_use) {
        if (++c == api->conns + WISP_NETCONN_COUNT) {
            api->st.conns_failed++;
            return NULL;
        }
    }
    api->st.conns_used++;
    if (api->st.conns_used > api->st.conns_high) {
        api->st.conns_high = api->st.conns_used;
    }
    /* all but the slot's OS objects (kept): state NC_S_NONE, no PCB, no flags */
    memset(c, 0, offsetof(struct wisp_netconn, api));
    c->type = (uint8_t)type;
    c->socket = -1;
    c->callback = cb;
    c->in_use = 1;
    return c;
}

/* Return a slot whose mailbox is empty and that nobody uses any more. */
static void conn_release(struct wisp_netconn *c)
{
    struct wisp_netconn_api *api = c->api;
    api_lock(api);
    WISP_ASSERT(!c->sem_lent); /* nobody waits on c */
    c->in_use = 0;
    c->pcb.ip = NULL;
    c->callback = NULL;
    api->st.conns_used--;
    api_unlock(api);
}

/* Api lock held. */
static struct wisp_netbuf *netbuf_alloc_locked(struct wisp_netconn_api *api)
{
    struct wisp_netbuf *nb = api->bufs;
    while (nb->in_use) { /* the first free one, in pool order */
        if (++nb == api->bufs + WISP_NETBUF_COUNT) {
            api->st.bufs_failed++;
            return NULL;
        }
    }
    nb->in_use = 1;
    nb->p = NULL;
    nb->ptr = NULL;
    nb->addr = wisp_netconn_addr_any;
    nb->port = 0;
    api->st.bufs_used++;
    if (api->st.bufs_used > api->st.bufs_high) {
        api->st.bufs_high = api->st.bufs_used;
    }
    return nb;
}

/* Return a netbuf (its data already freed). */
static void netbuf_release(struct wisp_netbuf *nb)
{
    struct wisp_netconn_api *api = nb->api;
    api_lock(api);
    WISP_ASSERT(nb->in_use);
    nb->in_use = 0;
    nb->p = NULL;
    nb->ptr = NULL;
    api->st.bufs_used--;
    api_unlock(api);
}

/* ------------------------------------------------------------- instance */

wisp_err_t wisp_netconn_api_init(struct wisp_netconn_api *api, struct wisp_tcpip *tcpip)
{
    unsigned i;
    wisp_err_t r;
    if (api == NULL || tcpip == NULL) {
        return WISP_ERR_ARG;
    }
    memset(api, 0, sizeof(*api));
    api->tcpip = tcpip;
    r = wisp_sys_mutex_new(&api->lock);
    if (r != WISP_OK) {
        return r;
    }
    for (i = 0; i < WISP_NETCONN_COUNT; i++) {
        r = slot_init(&api->conns[i]);
        if (r != WISP_OK) {
            while (i-- > 0) {
                slot_free_objects(&api->conns[i]);
            }
            wisp_sys_mutex_free(&api->lock);
            return r;
        }
        api->conns[i].api = api;
        api->conns[i].socket = -1;
        api->n_ready++;
    }
    for (i = 0; i < WISP_NETBUF_COUNT; i++) {
        api->bufs[i].api = api;
    }
    return WISP_OK;
}

wisp_err_t wisp_netconn_api_deinit(struct wisp_netconn_api *api)
{
    unsigned i;
    bool busy;
    if (api == NULL) {
        return WISP_ERR_ARG;
    }
    api_lock(api);
    busy = api->st.conns_used != 0 || api->st.bufs_used != 0;
    api_unlock(api);
    if (busy) {
        return WISP_ERR_USE;
    }
    for (i = 0; i < api->n_ready; i++) {
        slot_free_objects(&api->conns[i]);
    }
    api->n_ready = 0;
    wisp_sys_mutex_free(&api->lock);
    return WISP_OK;
}

void wisp_netconn_api_stats(struct wisp_netconn_api *api, struct wisp_netconn_stats *out)
{
    api_lock(api);
    *out = api->st;
    api_unlock(api);
}

uint8_t wisp_netconn_pbuf_free(struct wisp_netconn_api *api, struct wisp_pbuf *p)
{
    unsigned n = core_pbuf_free(api, p);
    return (uint8_t)(n > 255u ? 255u : n);
}

/* ------------------------------------------------- raw callbacks: TCP */

#if WISP_TCP

/* Core context: forget the PCB after the stack freed it or we gave it back. */
WISP_NOINLINE static void tcp_forget(struct wisp_netconn *conn)
{
    conn->pcb.tcp = NULL;
    conn->state = NC_S_CLOSED;
    conn->cflags &= (uint8_t) ~(NC_C_NOCOPY | NC_C_POLL);
}

/* Core context: detach conn from its PCB: no callback reaches conn any more
 * (every callback of ours leaves a PCB whose arg is NULL alone: recv
 * consumes and frees, accept refuses, the others return). */
static void tcp_detach(struct wisp_tcp_pcb *pcb)
{
    wisp_tcp_arg(pcb, NULL);
}

/* Core context: reset the connection (RST) and forget it. */
static void tcp_abort_conn(struct wisp_netconn *conn)
{
    struct wisp_tcp_pcb *pcb = conn->pcb.tcp;
    if (pcb == NULL) {
        return;
    }
    tcp_detach(pcb);
    wisp_tcp_abort(pcb);
    tcp_forget(conn);
    set_flags(conn, NC_F_DEAD);
}

/* Short pbufs (wisp_tcp_rx_short: a small segment alone in its receive
 * block) the mailbox takes while it holds fewer of them than this;
 * beyond, they are refused and the stack keeps them, copied together into
 * shared blocks, until the reader takes one (do_recved offers them again
 * as one chain). So a slow reader's mailbox holds at most this many
 * blocks beyond what the window counted for its data, and the window the
 * stack announced stays within the receive blocks (issue 12; RFC 9293
 * §3.8.6.2.2: the window offers buffer we have). Full-size segments are
 * queued as they came (zero-copy) up to the mailbox's size, without the
 * API lock: only short items are counted (rx_items), each marked with
 * NC_PBUF_SHORT so the reader knows to uncount it. */
#define NC_RX_SHORT_MAX 4u

/* Core: post TCP data p to conn's mailbox; false when it is refused. */
static bool nc_rx_take(struct wisp_netconn *conn, struct wisp_tcp_pcb *pcb, struct wisp_pbuf *p)
{
    bool short_ = wisp_tcp_rx_short(pcb, p);
    if (short_) {
        bool room;
        api_lock(conn->api);
        room = conn->rx_items < NC_RX_SHORT_MAX;
        if (room) {
            conn->rx_items++; /* before the post: the reader's decrement follows its fetch */
        }
        api_unlock(conn->api);
        if (!room) {
            return false;
        }
        p->flags |= NC_PBUF_SHORT;
    }
    if (wisp_sys_mbox_trypost(&conn->mbox, p) != WISP_OK) {
        rx_uncount(conn, p);
        return false;
    }
    return true;
}

static wisp_err_t tcp_recv_cb(void *arg, struct wisp_tcp_pcb *pcb, struct wisp_pbuf *p, wisp_err_t err)
{
    struct wisp_netconn *conn = (struct wisp_netconn *)arg;
    uint8_t fl;
    uint16_t len;
    WISP_UNUSED(err);
    if (conn == NULL) {
        if (p != NULL) {
            wisp_tcp_recved(pcb, p->tot_len);
            wisp_pbuf_free(p);
        }
        return WISP_OK;
    }
    fl = nc_flags(conn, p == NULL ? NC_F_RX_FIN : 0u, 0);
    if (p == NULL) {
        /* The peer closed its direction: after the data (RFC 9293 §3.10.7.4
         * eighth step, FIN processing), recv returns ERR_CLSD. */
        wake_mbox(conn);
        nc_event_len(conn, WISP_NETCONN_EVT_RCVPLUS, 0); /* shares the data's call */
        return WISP_OK;
    }
    len = p->tot_len;
    if (fl & (NC_F_CLOSED | NC_F_RX_SHUT | NC_F_DELETING)) {
        /* Nobody will read it: consume it. */
        wisp_tcp_recved(pcb, len);
        wisp_pbuf_free(p);
        return WISP_OK;
    }
    if (!nc_rx_take(conn, pcb, p)) {
        /* refused: the stack keeps p; the reader that makes room asks for
         * it again (do_recved), the stack's retry timer is the backstop */
        conn->cflags |= NC_C_REFUSED;
        nc_count(conn->api, &conn->api->st.tcp_refused);
        return WISP_ERR_MEM;
    }
    nc_event_len(conn, WISP_NETCONN_EVT_RCVPLUS, len);
    return WISP_OK;
}

/* Core: no longer writable (NC_SNDLOWAT): SENDMINUS once, SENDPLUS when
 * room returns (tcp_sent_cb). */
WISP_NOINLINE static void nc_wspace(struct wisp_netconn *conn, struct wisp_tcp_pcb *pcb)
{
    if (!(conn->cflags & NC_C_WSPACE) && wisp_tcp_sndbuf(pcb) < NC_SNDLOWAT(pcb)) {
        conn->cflags |= NC_C_WSPACE;
        nc_event(conn, WISP_NETCONN_EVT_SENDMINUS);
    }
}

/* Core: wake the writer that waits for room (NC_C_WRITE_WAIT). */
WISP_NOINLINE static void wake_writer(struct wisp_netconn *conn)
{
    if (conn->cflags & NC_C_WRITE_WAIT) {
        conn->cflags &= (uint8_t)~NC_C_WRITE_WAIT;
        sem_broadcast(conn);
    }
}

static wisp_err_t tcp_sent_cb(void *arg, struct wisp_tcp_pcb *pcb, uint32_t len)
{
    struct wisp_netconn *conn = (struct wisp_netconn *)arg;
    if (conn == NULL) {
        return WISP_OK;
    }
    /* A NOCOPY writer keeps its turn until its data is acknowledged, so
     * nothing is queued after its last piece: the stack's count of bytes
     * not acknowledged yet reaching 0 means the writer's memory is free. */
    if ((conn->cflags & NC_C_NOCOPY) && pcb->snd_queued == 0) {
        conn->cflags &= (uint8_t)~NC_C_NOCOPY;
    }
    if ((conn->cflags & NC_C_WSPACE) && wisp_tcp_sndbuf(pcb) >= NC_SNDLOWAT(pcb)) {
        conn->cflags &= (uint8_t)~NC_C_WSPACE;
        nc_event_len(conn, WISP_NETCONN_EVT_SENDPLUS, len);
    }
    wake_writer(conn);
    return WISP_OK;
}

/* Armed when a write found the stack's buffers exhausted with nothing of
 * ours in flight (no sent callback would come): retry the writer. */
/* Poll periods (NC_ACCEPT_POLL units of WISP_TCP_POLL_UNIT_MS) a connection
 * may wait for accept (WISP_NETCONN_ACCEPT_MAX_MS). */
#define NC_ACCEPT_POLL 2u
#define NC_ACCEPT_POLLS \
    ((WISP_NETCONN_ACCEPT_MAX_MS + NC_ACCEPT_POLL * WISP_TCP_POLL_UNIT_MS - 1u) / \
     (NC_ACCEPT_POLL * WISP_TCP_POLL_UNIT_MS))
/* (the count is 16-bit, role.accept_polls: a longer limit would wrap it
 * and never expire) */
#if NC_ACCEPT_POLLS > 0xffffu
#error "WISP_NETCONN_ACCEPT_MAX_MS: at most 65535 poll periods of 2 * WISP_TCP_POLL_UNIT_MS (18.2 h at 500 ms)"
#endif

static wisp_err_t tcp_poll_cb(void *arg, struct wisp_tcp_pcb *pcb)
{
    struct wisp_netconn *conn = (struct wisp_netconn *)arg;
    bool waiting;
    if (conn == NULL) {
        return WISP_OK;
    }
    api_lock(conn->api);
    waiting = conn->unaccepted != 0;
    api_unlock(conn->api);
    if (waiting) {
        /* Queued on a listener, not accepted yet: reset it when it has
         * waited too long (the error callback marks the netconn dead). */
        unsigned polls = conn->role.accept_polls + 1u; /* < NC_ACCEPT_POLLS: no wrap */
        conn->role.accept_polls = (uint16_t)polls;
        if (polls < NC_ACCEPT_POLLS) {
            return WISP_OK;
        }
        nc_count(conn->api, &conn->api->st.accept_expired);
        wisp_tcp_abort(pcb);
        return WISP_ERR_ABRT;
    }
    wake_writer(conn);
    conn->cflags &= (uint8_t)~NC_C_POLL;
    wisp_tcp_poll(pcb, NULL, 0);
    return WISP_OK;
}

static wisp_err_t tcp_connected_cb(void *arg, struct wisp_tcp_pcb *pcb, wisp_err_t err)
{
    struct wisp_netconn *conn = (struct wisp_netconn *)arg;
    bool waiting;
    WISP_UNUSED(pcb);
    WISP_UNUSED(err);
    if (conn == NULL) {
        return WISP_OK;
    }
    conn->state = NC_S_CONNECTED;
    waiting = (conn->cflags & NC_C_CONNECT_WAIT) != 0;
    conn->cflags &= (uint8_t)~NC_C_CONNECT_WAIT;
    /* the event first: a woken connect finds it delivered */
    nc_event(conn, WISP_NETCONN_EVT_SENDPLUS);
    if (waiting) {
        api_lock(conn->api);
        conn->flags |= NC_F_CONN_DONE;
        conn->connect_result = WISP_OK;
        sem_broadcast_locked(conn);
        api_unlock(conn->api);
    }
    return WISP_OK;
}

static void tcp_err_cb(void *arg, wisp_err_t err)
{
    struct wisp_netconn *conn = (struct wisp_netconn *)arg;
    bool waiting;
    if (conn == NULL) {
        return;
    }
    waiting = (conn->cflags & NC_C_CONNECT_WAIT) != 0;
    tcp_forget(conn); /* the stack freed the PCB */
    conn->cflags &= (uint8_t)~NC_C_CONNECT_WAIT;
    api_lock(conn->api);
    conn->flags |= NC_F_DEAD;
    if (waiting) {
        /* a blocking connect returns it; not kept pending */
        conn->flags |= NC_F_CONN_DONE;
        conn->connect_result = err;
    } else if (err != WISP_ERR_CLSD) {
        conn->pending_err = err;
        conn->conn_err = err; /* kept: for the calls it interrupts */
    }
    api_unlock(conn->api);
    if (err != WISP_ERR_CLSD) {
        nc_event(conn, WISP_NETCONN_EVT_ERROR);
        nc_event(conn, WISP_NETCONN_EVT_RCVPLUS);
        nc_event(conn, WISP_NETCONN_EVT_SENDPLUS);
    }
    wake_all(conn);
}

static void tcp_attach(struct wisp_netconn *conn, struct wisp_tcp_pcb *pcb)
{
    conn->pcb.tcp = pcb;
    wisp_tcp_arg(pcb, conn);
    wisp_tcp_recv(pcb, tcp_recv_cb);
    wisp_tcp_sent(pcb, tcp_sent_cb);
    wisp_tcp_err(pcb, tcp_err_cb);
}

/* Core context, asked before the listener creates a connection: room in
 * the accept queue (accept_pending < backlog). While
 * there is none the core drops the handshake's final ACK (the connection
 * waits in the SYN queue, tcp.listen.full) instead of making a connection
 * tcp_accept_cb would have to refuse, i.e. reset. A closing listener
 * says yes: tcp_accept_cb refuses (resets) for it. */
static bool tcp_accept_ready_cb(void *arg)
{
    struct wisp_netconn *conn = (struct wisp_netconn *)arg;
    bool room = true;
    if (conn != NULL) {
        api_lock(conn->api);
        room = (conn->flags & (NC_F_CLOSED | NC_F_DELETING)) || conn->role.l.accept_pending < conn->role.l.backlog;
        api_unlock(conn->api);
    }
    return room;
}

static wisp_err_t tcp_accept_cb(void *arg, struct wisp_tcp_pcb *newpcb, wisp_err_t err)
{
    struct wisp_netconn *conn = (struct wisp_netconn *)arg;
    struct wisp_netconn_api *api;
    struct wisp_netconn *nc = NULL;
    if (conn == NULL || err != WISP_OK) {
        return WISP_ERR_VAL;
    }
    api = conn->api;
    /* Take a slot and queue it in one api-locked section (the mailbox's
     * own lock is a leaf below it): an accepting thread may fetch nc at
     * once, but everything it does with nc in the core waits for this
     * callback (core context) to finish attaching it. */
    api_lock(api);
    if (!(conn->flags & (NC_F_CLOSED | NC_F_DELETING)) && conn->role.l.accept_pending < conn->role.l.backlog) {
        nc = conn_alloc_locked(api, WISP_NETCONN_TCP, conn->callback);
    }
    if (nc != NULL) {
        nc->unaccepted = 1;
        nc->layered = conn->layered;
        if (wisp_sys_mbox_trypost(&conn->mbox, nc) == WISP_OK) {
            conn->role.l.accept_pending++;
        } else {
            nc->in_use = 0; /* the slot back (conn_release) */
            api->st.conns_used--;
            nc = NULL;
        }
    }
    if (nc == NULL) {
        api->st.accept_drops++;
    }
    api_unlock(api);
    if (nc == NULL) {
        return WISP_ERR_MEM; /* the stack resets newpcb */
    }
    /* accept_polls 0 (conn_alloc_locked); DSCP and TTL: newpcb has the
     * listener's (the core passes them on) */
    nc->state = NC_S_CONNECTED;
    tcp_attach(nc, newpcb);
    /* the wait for accept is bounded (WISP_NETCONN_ACCEPT_MAX_MS) */
    wisp_tcp_poll(newpcb, tcp_poll_cb, NC_ACCEPT_POLL);
    nc_event(conn, WISP_NETCONN_EVT_RCVPLUS);
    return WISP_OK;
}

#endif /* WISP_TCP */

/* ------------------------------------------------- raw callbacks: UDP */

#if WISP_UDP
static void udp_recv_cb(void *arg, struct wisp_udp_pcb *pcb, struct wisp_pbuf *p, const wisp_ipaddr_t *src,
                        uint16_t port, const struct wisp_ip_info *ip)
{
    struct wisp_netconn *conn = (struct wisp_netconn *)arg;
    struct wisp_netconn_api *api = conn->api;
    struct wisp_netbuf *nb = NULL;
    uint16_t len = p->tot_len;
    WISP_UNUSED(pcb);
    WISP_UNUSED(ip);
    /* take a netbuf and queue it in one api-locked section (the mailbox's
     * non-blocking post is a leaf below it, as in tcp_accept_cb) */
    api_lock(api);
    if (!(conn->flags & (NC_F_CLOSED | NC_F_RX_SHUT | NC_F_DELETING))) {
        nb = netbuf_alloc_locked(api);
    }
    if (nb != NULL) {
        nb->p = p;
        nb->ptr = p;
        nb->addr = *src;
        nb->port = port;
        if (wisp_sys_mbox_trypost(&conn->mbox, nb) != WISP_OK) {
            nb->in_use = 0; /* back to the pool (netbuf_release) */
            api->st.bufs_used--;
            nb = NULL;
        }
    }
    if (nb == NULL) {
        api->st.udp_drops++;
    }
    api_unlock(api);
    if (nb == NULL) {
        wisp_pbuf_free(p);
        return;
    }
    nc_event_len(conn, WISP_NETCONN_EVT_RCVPLUS, len);
}

/* ICMP error about a datagram of a connected UDP netconn (core context).
 * As a Linux socket without IP_RECVERR: only a hard error (port or
 * protocol unreachable: WISP_ERR_REFUSED) is kept, as the pending error
 * the next receive or send returns; a blocked receiver is woken. */
static void udp_err_cb(void *arg, struct wisp_udp_pcb *pcb, wisp_err_t err, const struct wisp_icmp_err *e)
{
    struct wisp_netconn *conn = (struct wisp_netconn *)arg;
    bool post;
    WISP_UNUSED(pcb);
    WISP_UNUSED(e);
    if (err != WISP_ERR_REFUSED) {
        return;
    }
    api_lock(conn->api);
    post = !(conn->flags & (NC_F_CLOSED | NC_F_RX_SHUT | NC_F_DELETING)) && conn->pending_err == WISP_OK;
    if (post) {
        conn->pending_err = err;
    }
    api_unlock(conn->api);
    if (post) {
        nc_event(conn, WISP_NETCONN_EVT_ERROR); /* select / poll / SO_ERROR */
        wake_mbox(conn);
    }
}
#endif

/* ---------------------------------------------------- create / delete */

static wisp_err_t do_new(struct wisp_stack *s, void *arg)
{
    struct wisp_netconn *conn = ((struct nc_msg *)arg)->conn;
#if WISP_TCP
    if (conn->type == WISP_NETCONN_TCP) {
        struct wisp_tcp_pcb *pcb = wisp_tcp_new(s);
        if (pcb == NULL) {
            return WISP_ERR_MEM;
        }
        tcp_attach(conn, pcb);
        return WISP_OK;
    }
#endif
#if WISP_UDP
    if (conn->type == WISP_NETCONN_UDP) {
        struct wisp_udp_pcb *pcb = wisp_udp_new(s);
        if (pcb == NULL) {
            return WISP_ERR_MEM;
        }
        conn->pcb.udp = pcb;
        wisp_udp_recv(pcb, udp_recv_cb, conn);
        wisp_udp_err(pcb, udp_err_cb, conn);
        return WISP_OK;
    }
#endif
    WISP_UNUSED(s);
    return WISP_ERR_VAL;
}

struct wisp_netconn *wisp_netconn_new_with_proto_and_callback(struct wisp_netconn_api *api,
                                                              enum wisp_netconn_type type, uint8_t proto,
                                                              wisp_netconn_callback callback)
{
    struct wisp_netconn *conn;
    struct nc_msg m;
    WISP_UNUSED(proto);
    if (api == NULL) {
        return NULL;
    }
    if (type == WISP_NETCONN_UDPNOCHKSUM) {
        type = WISP_NETCONN_UDP;
    }
    if ((type != WISP_NETCONN_TCP || !WISP_TCP) && (type != WISP_NETCONN_UDP || !WISP_UDP)) {
        return NULL;
    }
    api_lock(api);
    conn = conn_alloc_locked(api, type, callback);
    api_unlock(api);
    if (conn == NULL) {
        return NULL;
    }
    nc_msg_zero(&m);
    if (nc_run(conn, NC_OP_NEW, &m) != WISP_OK) {
        conn_release(conn);
        return NULL;
    }
    return conn;
}

struct wisp_netconn *wisp_netconn_new(struct wisp_netconn_api *api, enum wisp_netconn_type type)
{
    return wisp_netconn_new_with_proto_and_callback(api, type, 0, NULL);
}

struct wisp_netconn *wisp_netconn_new_with_callback(struct wisp_netconn_api *api, enum wisp_netconn_type type,
                                                    wisp_netconn_callback callback)
{
    return wisp_netconn_new_with_proto_and_callback(api, type, 0, callback);
}

static wisp_err_t do_close(struct wisp_stack *s, void *arg);

/* Free a queued item (core context); listener: nonzero for a listener. */
static void drain_mbox(struct wisp_netconn *conn, unsigned listener);

static void drop_pending_conn(struct wisp_netconn *nc)
{
#if WISP_TCP
    tcp_abort_conn(nc); /* detached first: no callback */
#endif
    drain_mbox(nc, 0);
    conn_release(nc);
}

static void drain_mbox(struct wisp_netconn *conn, unsigned listener)
{
    void *item;
    while (wisp_sys_mbox_tryfetch(&conn->mbox, &item) == WISP_OK) {
        if (item == conn) {
            continue;
        }
        if (listener) {
            drop_pending_conn((struct wisp_netconn *)item);
        } else if (conn->type == WISP_NETCONN_TCP) {
            wisp_pbuf_free((struct wisp_pbuf *)item);
        } else {
            struct wisp_netbuf *nb = (struct wisp_netbuf *)item;
            wisp_pbuf_free(nb->p);
            netbuf_release(nb);
        }
    }
}

static wisp_err_t do_drain(struct wisp_stack *s, void *arg)
{
    struct nc_msg *m = (struct nc_msg *)arg;
    WISP_UNUSED(s);
    drain_mbox(m->conn, m->sel);
    return WISP_OK;
}

/* Run a close-like operation, retrying while the FIN cannot be queued and
 * aborting after WISP_NETCONN_CLOSE_TIMEOUT_MS. */
static wisp_err_t run_close(struct wisp_netconn *conn, struct nc_msg *m)
{
    uint32_t start = wisp_sys_now_ms();
    for (;;) {
        wisp_err_t r = nc_run(conn, NC_OP_CLOSE, m);
        if (r != WISP_ERR_MEM || (m->sel & NC_SHUT_ABORT)) {
            return r;
        }
        if (wisp_sys_now_ms() - start >= WISP_NETCONN_CLOSE_TIMEOUT_MS) {
            m->sel |= NC_SHUT_ABORT;
        } else {
            wisp_sys_sleep_ms(10);
        }
    }
}

wisp_err_t wisp_netconn_delete(struct wisp_netconn *conn)
{
    struct wisp_netconn_api *api;
    struct nc_msg m;
    bool listener;
    if (conn == NULL) {
        return WISP_OK;
    }
    api = conn->api;
    api_lock(api);
    if (!conn->in_use || (conn->flags & NC_F_DELETING)) {
        api_unlock(api);
        return WISP_ERR_CLSD;
    }
    conn->flags |= NC_F_DELETING;
    listener = (conn->flags & NC_F_LISTEN) != 0;
    api_unlock(api);

    /* close in the core (do_close: a listener at once; abort when asked,
     * or when the stack references a writer's memory) */
    nc_msg_zero(&m);
    m.sel = NC_SHUT_RX | NC_SHUT_TX;
    (void)run_close(conn, &m);

    /* Wake everybody blocked on conn and wait until they left. */
    wake_all(conn);
    api_lock(api);
    while (conn->users > 0) {
        nc_wait_locked(conn, WISP_SYS_FOREVER);
    }
    api_unlock(api);

    m.sel = listener ? 1 : 0; /* do_drain reads nothing else */
    (void)nc_run(conn, NC_OP_DRAIN, &m);
    conn_release(conn);
    return WISP_OK;
}

/* ------------------------------------------------------------- addresses */

/* Core: bind (m->sel) or connect, to address m->ptr, port m->len. */
static wisp_err_t do_bind_connect(struct wisp_stack *s, void *arg)
{
    struct nc_msg *m = (struct nc_msg *)arg;
    struct wisp_netconn *conn = m->conn;
    bool bind = m->sel != 0;
    const wisp_ipaddr_t *addr = (const wisp_ipaddr_t *)m->ptr;
    uint16_t port = (uint16_t)m->len;
    WISP_UNUSED(s);
#if WISP_TCP
    if (conn->type == WISP_NETCONN_TCP) {
        wisp_err_t r;
        if (!bind && conn->state == NC_S_CONNECTING) {
            return WISP_ERR_ALREADY;
        }
        if (!bind && (conn->state == NC_S_CONNECTED || conn->state == NC_S_LISTEN)) {
            return WISP_ERR_ISCONN;
        }
        if (conn->pcb.tcp == NULL) {
            return dead_err(conn, false);
        }
        if (bind) {
            return conn->state != NC_S_NONE ? WISP_ERR_VAL : wisp_tcp_bind(conn->pcb.tcp, addr, port);
        }
        r = wisp_tcp_connect(conn->pcb.tcp, addr, port, tcp_connected_cb);
        if (r != WISP_OK) {
            return r;
        }
        conn->state = NC_S_CONNECTING;
        if (m->blocking) {
            conn->cflags |= NC_C_CONNECT_WAIT;
            (void)nc_flags(conn, 0, NC_F_CONN_DONE);
        }
        m->started = true;
        return WISP_OK;
    }
#endif
#if WISP_UDP
    if (conn->pcb.udp == NULL) {
        return WISP_ERR_CLSD;
    }
    return bind ? wisp_udp_bind(conn->pcb.udp, addr, port) : wisp_udp_connect(conn->pcb.udp, addr, port);
#else
    return WISP_ERR_VAL;
#endif
}

wisp_err_t wisp_netconn_bind(struct wisp_netconn *conn, const wisp_ipaddr_t *addr, uint16_t port)
{
    return nc_op(conn, NC_OP_BIND_CONNECT, 1, port, addr, NULL);
}

wisp_err_t wisp_netconn_connect(struct wisp_netconn *conn, const wisp_ipaddr_t *addr, uint16_t port)
{
    struct nc_msg m;
    struct nc_snap snap;
    wisp_err_t r;
    bool nonblock;
    if (conn == NULL || addr == NULL) {
        return WISP_ERR_ARG;
    }
    if (!conn_enter(conn, &snap)) {
        return WISP_ERR_CLSD;
    }
    nonblock = (snap.flags & NC_F_NONBLOCK) != 0;
    nc_msg_zero(&m);
    m.ptr = (void *)(uintptr_t)addr;
    m.len = port;
    m.blocking = !nonblock;
    r = nc_run(conn, NC_OP_BIND_CONNECT, &m);
    if (r == WISP_OK && m.started) {
        if (nonblock) {
            r = WISP_ERR_INPROGRESS;
        } else {
            api_lock(conn->api);
            for (;;) {
                if (conn->flags & NC_F_CONN_DONE) {
                    conn->flags &= (uint8_t)~NC_F_CONN_DONE;
                    r = conn->connect_result;
                    break;
                }
                if (conn->flags & (NC_F_CLOSED | NC_F_DELETING)) {
                    r = WISP_ERR_CLSD;
                    break;
                }
                nc_wait_locked(conn, WISP_SYS_FOREVER);
            }
            api_unlock(conn->api);
        }
    }
    conn_leave(conn);
    return r;
}

static wisp_err_t do_disconnect(struct wisp_stack *s, void *arg)
{
    struct wisp_netconn *conn = ((struct nc_msg *)arg)->conn;
    WISP_UNUSED(s);
#if WISP_UDP
    if (conn->type == WISP_NETCONN_UDP) {
        if (conn->pcb.udp == NULL) {
            return WISP_ERR_CLSD;
        }
        wisp_udp_disconnect(conn->pcb.udp);
        return WISP_OK;
    }
#endif
    WISP_UNUSED(conn);
    return WISP_ERR_VAL;
}

wisp_err_t wisp_netconn_disconnect(struct wisp_netconn *conn)
{
    return nc_op(conn, NC_OP_DISCONNECT, 0, 0, NULL, NULL);
}

/* Core: the local (m->sel) or remote address into m->ptr, port m->out. */
static wisp_err_t do_getaddr(struct wisp_stack *s, void *arg)
{
    struct nc_msg *m = (struct nc_msg *)arg;
    struct wisp_netconn *conn = m->conn;
    wisp_ipaddr_t *addr = (wisp_ipaddr_t *)m->ptr;
    uint16_t *port = (uint16_t *)m->out;
    WISP_UNUSED(s);
#if WISP_TCP
    if (conn->type == WISP_NETCONN_TCP) {
        if (conn->pcb.tcp == NULL) {
            return WISP_ERR_CONN;
        }
        if (m->sel) {
            wisp_tcp_local(conn->pcb.tcp, addr, port);
            return WISP_OK;
        }
        if (conn->state != NC_S_CONNECTED && conn->state != NC_S_CONNECTING) {
            return WISP_ERR_CONN;
        }
        wisp_tcp_remote(conn->pcb.tcp, addr, port);
        return WISP_OK;
    }
#endif
#if WISP_UDP
    if (conn->pcb.udp == NULL) {
        return WISP_ERR_CONN;
    }
    if (m->sel) {
        *addr = conn->pcb.udp->local_ip;
        if (wisp_ipaddr_is_any(addr)) {
            *addr = wisp_netconn_addr_any;
        }
        *port = conn->pcb.udp->local_port;
        return WISP_OK;
    }
    if (!(conn->pcb.udp->flags & WISP_UDP_F_CONNECTED)) {
        return WISP_ERR_CONN;
    }
    *addr = conn->pcb.udp->remote_ip;
    *port = conn->pcb.udp->remote_port;
    return WISP_OK;
#else
    return WISP_ERR_CONN;
#endif
}

wisp_err_t wisp_netconn_getaddr(struct wisp_netconn *conn, wisp_ipaddr_t *addr, uint16_t *port, uint8_t local)
{
    if (addr == NULL || port == NULL) {
        return WISP_ERR_ARG;
    }
    return nc_op(conn, NC_OP_GETADDR, local, 0, addr, port);
}

/* ---------------------------------------------------------------- listen */

#if WISP_TCP
static wisp_err_t do_listen(struct wisp_stack *s, void *arg)
{
    struct nc_msg *m = (struct nc_msg *)arg;
    struct wisp_netconn *conn = m->conn;
    struct wisp_tcp_pcb *lpcb;
    wisp_err_t err = WISP_OK;
    uint8_t backlog = (uint8_t)(m->len == 0 ? 1u : m->len);
    uint8_t limit = (uint8_t)WISP_MIN((unsigned)backlog, (unsigned)WISP_NETCONN_RECVMBOX_SIZE - 1u);
    WISP_UNUSED(s);
    if (conn->pcb.tcp == NULL) {
        return WISP_ERR_CONN;
    }
    if (conn->state != NC_S_LISTEN) { /* else already listening: update the backlog */
        if (conn->state != NC_S_NONE) {
            return WISP_ERR_CONN;
        }
        if (wisp_tcp_state(conn->pcb.tcp) != WISP_TCP_CLOSED) {
            return WISP_ERR_VAL;
        }
        lpcb = wisp_tcp_listen(conn->pcb.tcp, backlog, &err);
        if (lpcb == NULL) {
            return err != WISP_OK ? err : WISP_ERR_MEM;
        }
        conn->pcb.tcp = lpcb; /* the connection PCB was freed by listen */
        conn->state = NC_S_LISTEN;
        wisp_tcp_arg(lpcb, conn);
        wisp_tcp_accept(lpcb, tcp_accept_cb);
        wisp_tcp_accept_ready(lpcb, tcp_accept_ready_cb); /* lpcb keeps DSCP and TTL */
    }
    api_lock(conn->api);
    conn->flags |= NC_F_LISTEN;
    conn->role.l.backlog = limit;
    api_unlock(conn->api);
    return WISP_OK;
}
#endif

wisp_err_t wisp_netconn_listen_with_backlog(struct wisp_netconn *conn, uint8_t backlog)
{
#if WISP_TCP
    if (conn == NULL || conn->type != WISP_NETCONN_TCP) {
        return WISP_ERR_ARG;
    }
    return nc_op(conn, NC_OP_LISTEN, 0, backlog, NULL, NULL);
#else
    WISP_UNUSED(conn);
    WISP_UNUSED(backlog);
    return WISP_ERR_ARG;
#endif
}

wisp_err_t wisp_netconn_listen(struct wisp_netconn *conn)
{
    return wisp_netconn_listen_with_backlog(conn, 255);
}

/* Core: the reader consumed received data -- free the chains it is done
 * with, reopen the window by len -- and, when the mailbox refused data,
 * offer that again now that the reader made room (without this, the stack
 * would retry only every 20 ms: a reader that keeps the mailbox full would
 * stall the connection). m->sel set: only free the chains. */
static wisp_err_t do_recved(struct wisp_stack *s, void *arg)
{
    struct nc_msg *m = (struct nc_msg *)arg;
    struct wisp_netconn *conn = m->conn;
    unsigned i;
    WISP_UNUSED(s);
    for (i = 0; i < m->size; i++) {
        (void)wisp_pbuf_free(((struct wisp_pbuf *const *)m->ptr)[i]);
    }
#if WISP_TCP
    if (!m->sel && conn->pcb.tcp != NULL && conn->state != NC_S_LISTEN) {
        if (m->len > 0) {
            wisp_tcp_recved(conn->pcb.tcp, m->len);
        }
        if (conn->cflags & NC_C_REFUSED) {
            conn->cflags &= (uint8_t)~NC_C_REFUSED;
            wisp_tcp_recv_retry(conn->pcb.tcp);
        }
    }
#else
    WISP_UNUSED(conn);
#endif
    return WISP_OK;
}

/* Take the next item of conn's mailbox (recv and accept); snap was read
 * when the call entered. offer: a TCP reader that reopens the window
 * itself (NOAUTORCVD) asks for refused data before it blocks. */
static wisp_err_t fetch_item(struct wisp_netconn *conn, const struct nc_snap *snap, void **item, bool dontblock,
                             bool offer)
{
    struct wisp_netconn_api *api = conn->api;
    void *m = NULL;
    wisp_err_t r = app_closed_err(snap->flags);

    if (r != WISP_OK) {
        return r;
    }
again:
    if (wisp_sys_mbox_tryfetch(&conn->mbox, &m) != WISP_OK) {
        /* Empty: peer events (FIN, errors) come after the data. */
        uint32_t timeout = snap->recv_timeout;
        api_lock(api);
        r = peer_state_err(conn, snap->flags);
        api_unlock(api);
        if (r != WISP_OK) {
            return r;
        }
        if (dontblock || (snap->flags & NC_F_NONBLOCK)) {
            return WISP_ERR_WOULDBLOCK;
        }
        if (offer) {
            struct nc_msg om;
            nc_msg_zero(&om);
            (void)nc_run(conn, NC_OP_RECVED, &om);
        }
        if (wisp_sys_mbox_fetch(&conn->mbox, &m, timeout != 0 ? timeout : WISP_SYS_FOREVER) != WISP_OK) {
            return WISP_ERR_TIMEOUT;
        }
    }
    if (m == conn) {
        bool udp_err;
        api_lock(api);
        /* A UDP netconn's marker that no terminal event posted was posted
         * by udp_err_cb: it wakes one reader for the ICMP error and is not
         * passed on (the error is taken once). */
        r = app_closed_err(conn->flags);
        udp_err = r == WISP_OK && conn->type == WISP_NETCONN_UDP && !(conn->flags & NC_F_DEAD);
        if (r == WISP_OK) {
            r = peer_state_err(conn, snap->flags);
        }
        api_unlock(api);
        if (udp_err) {
            if (r == WISP_OK) {
                goto again; /* another call took the error already */
            }
            return r;
        }
        wake_mbox(conn); /* for the other waiters */
        return r != WISP_OK ? r : WISP_ERR_CLSD;
    }
    *item = m;
    return WISP_OK;
}

/* --------------------------------------------------------------- receive */

/* What recv_item takes out of the mailbox besides TCP data and UDP netbufs. */
#define NC_ACCEPT 0u

/* The receive calls: accept (kind NC_ACCEPT), TCP recv and UDP recv
 * (kind WISP_NETCONN_TCP / _UDP): the argument checks, enter, take the
 * next item of the mailbox, the bookkeeping of its kind, the event, leave.
 * Returns the item (NULL when *rp is not WISP_OK). */
static wisp_err_t recv_item(struct wisp_netconn *conn, void *out, uint8_t kind, uint8_t flags)
{
    struct nc_snap snap;
    void *item = NULL;
    wisp_err_t r;
    uint32_t len = 0;
    if (out == NULL) {
        return WISP_ERR_ARG;
    }
    memcpy(out, &item, sizeof(item)); /* NULL until an item is taken */
    if (conn == NULL || (kind != NC_ACCEPT && conn->type != kind)) {
        return WISP_ERR_ARG;
    }
    if (!conn_enter(conn, &snap)) {
        return WISP_ERR_CLSD;
    }
    if (kind == NC_ACCEPT) {
        r = wisp_netconn_err(conn);
        if (r == WISP_OK && !(snap.flags & NC_F_LISTEN)) {
            r = WISP_ERR_CLSD; /* lwIP: not accepting */
        }
    } else {
        r = (snap.flags & NC_F_LISTEN) ? WISP_ERR_CONN : WISP_OK;
    }
    if (r == WISP_OK) {
        r = fetch_item(conn, &snap, &item, (flags & WISP_NETCONN_DONTBLOCK) != 0,
                       kind == WISP_NETCONN_TCP && (flags & WISP_NETCONN_NOAUTORCVD));
    }
    if (r == WISP_OK) {
        if (kind == NC_ACCEPT) {
            api_lock(conn->api);
            conn->role.l.accept_pending--;
            ((struct wisp_netconn *)item)->unaccepted = 0;
            api_unlock(conn->api);
        } else if (kind == WISP_NETCONN_TCP) {
            struct wisp_pbuf *p = (struct wisp_pbuf *)item;
            len = p->tot_len;
            rx_uncount(conn, p); /* nc_rx_take */
            if (!(flags & WISP_NETCONN_NOAUTORCVD)) {
                /* The application took the data: reopen the window now, as
                 * lwIP's netconn_recv does (and take refused data, if any). */
                struct nc_msg m;
                nc_msg_zero(&m);
                m.len = len;
                (void)nc_run(conn, NC_OP_RECVED, &m);
            }
        } else {
            len = wisp_netbuf_len((struct wisp_netbuf *)item);
        }
        nc_event_len(conn, WISP_NETCONN_EVT_RCVMINUS, len);
        memcpy(out, &item, sizeof(item));
    }
    conn_leave(conn);
    return r;
}

wisp_err_t wisp_netconn_accept(struct wisp_netconn *conn, struct wisp_netconn **new_conn)
{
    return recv_item(conn, new_conn, NC_ACCEPT, 0);
}

wisp_err_t wisp_netconn_recv_tcp_pbuf_flags(struct wisp_netconn *conn, struct wisp_pbuf **new_buf, uint8_t flags)
{
    return recv_item(conn, new_buf, WISP_NETCONN_TCP, flags);
}

wisp_err_t wisp_netconn_recv_tcp_pbuf(struct wisp_netconn *conn, struct wisp_pbuf **new_buf)
{
    return wisp_netconn_recv_tcp_pbuf_flags(conn, new_buf, 0);
}

wisp_err_t wisp_netconn_tcp_consumed(struct wisp_netconn *conn, struct wisp_pbuf *const *chains, unsigned n,
                                     size_t len)
{
    struct nc_msg m;
    bool entered;
    if (conn == NULL || conn->type != WISP_NETCONN_TCP || (chains == NULL && n > 0)) {
        return WISP_ERR_ARG;
    }
    nc_msg_zero(&m);
    m.ptr = (void *)(uintptr_t)chains;
    m.size = n;
    m.len = (uint32_t)WISP_MIN(len, (size_t)0xffffffffu);
    entered = conn_enter(conn, NULL);
    m.sel = !entered; /* being deleted: just free the chains */
    (void)nc_run(conn, NC_OP_RECVED, &m);
    if (!entered) {
        return WISP_ERR_CLSD;
    }
    conn_leave(conn);
    return WISP_OK;
}

wisp_err_t wisp_netconn_tcp_recvd(struct wisp_netconn *conn, size_t len)
{
    return wisp_netconn_tcp_consumed(conn, NULL, 0, len);
}

wisp_err_t wisp_netconn_recv_udp_raw_netbuf_flags(struct wisp_netconn *conn, struct wisp_netbuf **new_buf,
                                                  uint8_t flags)
{
    return recv_item(conn, new_buf, WISP_NETCONN_UDP, flags);
}

wisp_err_t wisp_netconn_recv(struct wisp_netconn *conn, struct wisp_netbuf **new_buf)
{
    struct wisp_netbuf *buf;
    struct wisp_pbuf *p = NULL;
    wisp_err_t r;
    if (new_buf == NULL) {
        return WISP_ERR_ARG;
    }
    *new_buf = NULL;
    if (conn == NULL) {
        return WISP_ERR_ARG;
    }
    if (conn->type != WISP_NETCONN_TCP) {
        return wisp_netconn_recv_udp_raw_netbuf_flags(conn, new_buf, 0);
    }
    /* lwIP: the netbuf first, so that an empty pool leaves the data queued. */
    buf = wisp_netbuf_new(conn->api);
    if (buf == NULL) {
        return WISP_ERR_MEM;
    }
    r = wisp_netconn_recv_tcp_pbuf_flags(conn, &p, 0);
    if (r != WISP_OK) {
        netbuf_release(buf);
        return r;
    }
    buf->p = p;
    buf->ptr = p;
    *new_buf = buf;
    return WISP_OK;
}

/* ------------------------------------------------------------------ send */

#if WISP_UDP
static wisp_err_t do_send(struct wisp_stack *s, void *arg)
{
    struct nc_msg *m = (struct nc_msg *)arg;
    struct wisp_udp_pcb *pcb = m->conn->pcb.udp;
    struct wisp_netbuf *buf = (struct wisp_netbuf *)m->ptr;
    WISP_UNUSED(s);
    if (pcb == NULL) {
        return WISP_ERR_CLSD;
    }
    if (pcb->flags & WISP_UDP_F_CONNECTED) {
        /* an ICMP error since the last call (udp_err_cb): reported once */
        wisp_err_t r;
        r = wisp_netconn_err(m->conn); /* taken */
        if (r != WISP_OK) {
            return r;
        }
    }
    if (wisp_ipaddr_is_any(&buf->addr)) {
        if (!(pcb->flags & WISP_UDP_F_CONNECTED)) {
            return WISP_ERR_CONN;
        }
        return wisp_udp_send(pcb, buf->p);
    }
    return wisp_udp_sendto(pcb, buf->p, &buf->addr, buf->port);
}
#endif

wisp_err_t wisp_netconn_send(struct wisp_netconn *conn, struct wisp_netbuf *buf)
{
#if WISP_UDP
    if (conn == NULL || buf == NULL) {
        return WISP_ERR_ARG;
    }
    if (conn->type != WISP_NETCONN_UDP) {
        return WISP_ERR_CONN;
    }
    if (buf->p == NULL) {
        return WISP_ERR_BUF;
    }
    return nc_op(conn, NC_OP_SEND, 0, 0, buf, NULL);
#else
    WISP_UNUSED(buf);
    return conn == NULL ? WISP_ERR_ARG : WISP_ERR_CONN;
#endif
}

wisp_err_t wisp_netconn_sendto(struct wisp_netconn *conn, struct wisp_netbuf *buf, const wisp_ipaddr_t *addr,
                               uint16_t port)
{
    if (buf == NULL) {
        return WISP_ERR_ARG;
    }
    if (addr != NULL) {
        buf->addr = *addr;
        buf->port = port;
    }
    return wisp_netconn_send(conn, buf);
}

#if WISP_TCP
/* Core: queue as much of the write as the send buffer takes. Sets m->done
 * when the write is complete (queued; NOCOPY: acknowledged), else arms the
 * writer's wake-up. */
static wisp_err_t do_write(struct wisp_stack *s, void *arg)
{
    struct nc_msg *m = (struct nc_msg *)arg;
    struct wisp_netconn *conn = m->conn;
    struct wisp_tcp_pcb *pcb = conn->pcb.tcp;
    bool wrote = false;
    /* MORE between the pieces of one write; the caller's MORE on the
     * last piece, except for a NOCOPY write, which waits for the
     * acknowledgement of that very piece. */
    uint8_t last = m->copy ? WISP_TCP_WRITE_COPY | ((m->apiflags & WISP_NETCONN_MORE) ? WISP_TCP_WRITE_MORE : 0u)
                           : 0u;
    WISP_UNUSED(s);

    if (pcb == NULL || conn->state != NC_S_CONNECTED) {
        if (conn->state == NC_S_CONNECTING) {
            return WISP_ERR_INPROGRESS;
        }
        if (conn->state == NC_S_NONE || conn->state == NC_S_LISTEN) {
            return WISP_ERR_CONN;
        }
        /* m->alive: the error ended the connection while this write
         * waited -- it gets the error, whoever took the pending one */
        return dead_err(conn, m->alive);
    }
    m->alive = true;
    while (m->off < m->size) {
        uint32_t avail = wisp_tcp_sndbuf(pcb);
        size_t left = m->size - m->off;
        uint32_t n;
        wisp_err_t r;
        if (avail == 0) {
            break;
        }
        n = (uint32_t)WISP_MIN(left, (size_t)WISP_MIN(avail, m->chunk));
        r = wisp_tcp_write(pcb, (const uint8_t *)m->ptr + m->off, n,
                           (uint8_t)(n < left ? last | WISP_TCP_WRITE_MORE : last));
        if (r == WISP_ERR_MEM) {
            if (m->chunk > NC_WRITE_MIN_CHUNK) {
                m->chunk = WISP_MAX(m->chunk / 2u, NC_WRITE_MIN_CHUNK);
                continue;
            }
            /* Buffers exhausted: a sent callback wakes us when ours are in
             * flight; the poll callback covers the case they are not. */
            if (!(conn->cflags & NC_C_POLL)) {
                conn->cflags |= NC_C_POLL;
                wisp_tcp_poll(pcb, tcp_poll_cb, 1);
            }
            break;
        }
        if (r != WISP_OK) {
            if (wrote) {
                (void)wisp_tcp_output(pcb);
            }
            return r;
        }
        m->off += n;
        wrote = true;
        if (!m->copy) {
            conn->cflags |= NC_C_NOCOPY; /* until snd_queued is 0 (tcp_sent_cb) */
        }
    }
    if (wrote) {
        (void)wisp_tcp_output(pcb);
        nc_wspace(conn, pcb);
    }
    m->done = m->off == m->size && (m->copy || !(conn->cflags & NC_C_NOCOPY));
    if (!m->done && m->blocking) {
        /* the callbacks that follow this call wake the writer; one that
         * comes before the writer waits leaves wkick set (file comment) */
        conn->cflags |= NC_C_WRITE_WAIT;
        api_lock(conn->api);
        conn->wkick = 0;
        api_unlock(conn->api);
    }
    return WISP_OK;
}

/* Core: a NOCOPY writer leaves before its data was acknowledged (closed,
 * deleted): make sure the stack no longer references it. */
static wisp_err_t do_nocopy_release(struct wisp_stack *s, void *arg)
{
    struct wisp_netconn *conn = ((struct nc_msg *)arg)->conn;
    WISP_UNUSED(s);
    conn->cflags &= (uint8_t)~NC_C_WRITE_WAIT;
    if (conn->cflags & NC_C_NOCOPY) {
        tcp_abort_conn(conn);
    }
    return WISP_OK;
}
#endif /* WISP_TCP */

#if WISP_TCP
/* Take the writer's turn on conn (waiting while another writer has it):
 * false when the netconn is closed or deleted meanwhile -- also when
 * the turn came free because the writer before saw that (a writer woken
 * by delete must not start queueing data). */
static bool write_turn(struct wisp_netconn *conn)
{
    bool ok;
    api_lock(conn->api);
    for (;;) {
        ok = !(conn->flags & (NC_F_CLOSED | NC_F_DELETING));
        if (!ok || !conn->writing) {
            break;
        }
        nc_wait_locked(conn, WISP_SYS_FOREVER);
    }
    if (ok) {
        conn->writing = 1;
    }
    api_unlock(conn->api);
    return ok;
}

static void write_turn_end(struct wisp_netconn *conn)
{
    api_lock(conn->api);
    conn->writing = 0;
    sem_broadcast_locked(conn); /* the next writer */
    api_unlock(conn->api);
}

/* The write loop of an entered call: queue, wait for room (or the
 * acknowledgement of NOCOPY data), queue again. */
static wisp_err_t write_run(struct wisp_netconn *conn, const void *dataptr, size_t size, uint8_t apiflags,
                            bool nonblock, uint32_t send_timeout, size_t *bytes_written)
{
    struct nc_msg m;
    wisp_err_t r;
    uint32_t start;
    bool dontblock = nonblock || send_timeout != 0;

    if (dontblock && bytes_written == NULL) {
        return WISP_ERR_VAL; /* lwIP: no way to report a partial write */
    }
    nc_msg_zero(&m);
    m.ptr = (void *)(uintptr_t)dataptr;
    m.size = size;
    m.apiflags = apiflags;
    m.chunk = (uint32_t)WISP_TCP_SND_BUF;
    /* A write that may return before the acknowledgement must not leave
     * references to the caller's memory behind: it copies. */
    m.copy = (apiflags & WISP_NETCONN_COPY) != 0 || dontblock;
    m.blocking = !nonblock;

    /* a layered netconn's layer serialises its writers */
    if (!conn->layered && !write_turn(conn)) {
        return WISP_ERR_CLSD;
    }
    start = wisp_sys_now_ms();
    for (;;) {
        uint32_t wait = WISP_SYS_FOREVER;
        bool closed;
        r = nc_run(conn, NC_OP_WRITE, &m);
        if (r != WISP_OK || m.done) {
            break;
        }
        if (nonblock) {
            r = m.off > 0 ? WISP_OK : WISP_ERR_WOULDBLOCK;
            break;
        }
        if (send_timeout != 0) {
            uint32_t elapsed = wisp_sys_now_ms() - start;
            if (elapsed >= send_timeout) {
                r = m.off > 0 ? WISP_OK : WISP_ERR_WOULDBLOCK;
                break;
            }
            wait = send_timeout - elapsed;
        }
        api_lock(conn->api);
        if (!conn->wkick) {
            nc_wait_locked(conn, wait);
        }
        closed = (conn->flags & (NC_F_CLOSED | NC_F_DELETING)) != 0;
        api_unlock(conn->api);
        if (closed) {
            r = WISP_ERR_CLSD;
            break;
        }
    }
    if (!m.done) {
        (void)nc_run(conn, NC_OP_NOCOPY_RELEASE, &m);
    }
    if (!conn->layered) {
        write_turn_end(conn);
    }
    if (bytes_written != NULL) {
        *bytes_written = m.off;
    }
    return r;
}
#endif

/* The argument checks of the writes: false with *r set when the call is
 * over before it started. */
static bool write_args(const struct wisp_netconn *conn, const void *dataptr, size_t size, size_t *bytes_written,
                       wisp_err_t *r)
{
    if (bytes_written != NULL) {
        *bytes_written = 0;
    }
    *r = WISP_OK;
    if (conn == NULL) {
        *r = WISP_ERR_ARG;
    } else if (conn->type != WISP_NETCONN_TCP || !WISP_TCP) {
        *r = WISP_ERR_VAL;
    } else if (size != 0 && dataptr == NULL) {
        *r = WISP_ERR_ARG;
    }
    return *r == WISP_OK && size != 0;
}

/* The writes: an application's (entered like every call; its netconn's
 * non-blocking flag and send timeout apply) or a layer's (layered: the
 * layer above serialises and counts its callers, gives the timeout and
 * says DONTBLOCK per call). */
static wisp_err_t write_call(struct wisp_netconn *conn, const void *dataptr, size_t size, uint8_t apiflags,
                             bool layered, uint32_t send_timeout_ms, size_t *bytes_written)
{
    wisp_err_t r;
    struct nc_snap snap;
    if (!write_args(conn, dataptr, size, bytes_written, &r)) {
        return r;
    }
#if WISP_TCP
    if (layered) {
        if (!conn->layered) {
            return WISP_ERR_ARG;
        }
        snap.flags = 0;
        snap.send_timeout = send_timeout_ms;
    } else if (!conn_enter(conn, &snap)) {
        return WISP_ERR_CLSD;
    }
    r = write_run(conn, dataptr, size, apiflags, (snap.flags & NC_F_NONBLOCK) || (apiflags & WISP_NETCONN_DONTBLOCK),
                  snap.send_timeout, bytes_written);
    if (!layered) {
        conn_leave(conn);
    }
#else
    WISP_UNUSED(apiflags);
    WISP_UNUSED(layered);
    WISP_UNUSED(send_timeout_ms);
    WISP_UNUSED(snap);
#endif
    return r;
}

wisp_err_t wisp_netconn_write_partly(struct wisp_netconn *conn, const void *dataptr, size_t size, uint8_t apiflags,
                                     size_t *bytes_written)
{
    return write_call(conn, dataptr, size, apiflags, false, 0, bytes_written);
}

wisp_err_t wisp_netconn_write_layered(struct wisp_netconn *conn, const void *dataptr, size_t size, uint8_t apiflags,
                                      uint32_t send_timeout_ms, size_t *bytes_written)
{
    return write_call(conn, dataptr, size, apiflags, true, send_timeout_ms, bytes_written);
}

wisp_err_t wisp_netconn_write(struct wisp_netconn *conn, const void *dataptr, size_t size, uint8_t apiflags)
{
    return wisp_netconn_write_partly(conn, dataptr, size, apiflags, NULL);
}

/* ----------------------------------------------------------------- close */

static wisp_err_t do_close(struct wisp_stack *s, void *arg)
{
    struct nc_msg *m = (struct nc_msg *)arg;
    struct wisp_netconn *conn = m->conn;
    uint8_t set = 0;
    WISP_UNUSED(s);
    if (conn->pcb.ip == NULL) {
        return WISP_ERR_CONN;
    }
#if WISP_UDP
    if (conn->type == WISP_NETCONN_UDP) {
        if (!(m->sel & NC_SHUT_RX)) {
            return WISP_ERR_CONN; /* no send direction to shut: a datagram has no FIN */
        }
        if (m->sel & NC_SHUT_TX) {
            wisp_udp_remove(conn->pcb.udp);
            conn->pcb.udp = NULL;
            set = NC_F_CLOSED;
        } else {
            set = NC_F_RX_SHUT;
        }
    }
#endif
#if WISP_TCP
    if (conn->type == WISP_NETCONN_TCP) {
        struct wisp_tcp_pcb *pcb = conn->pcb.tcp;
        bool listener = conn->state == NC_S_LISTEN;
        if (listener && !(m->sel & NC_SHUT_RX)) {
            return WISP_OK;
        }
        if (listener || (m->sel & NC_SHUT_RX && m->sel & NC_SHUT_TX)) {
            /* a listener is freed at once, closed or aborted alike */
            if (listener || (m->sel & NC_SHUT_ABORT) || (conn->cflags & NC_C_NOCOPY)) {
                tcp_abort_conn(conn);
            } else {
                wisp_err_t r = wisp_tcp_close(pcb);
                if (r != WISP_OK) {
                    return r;
                }
                tcp_forget(conn);
            }
            set = NC_F_CLOSED;
        } else {
            wisp_err_t r = wisp_tcp_shutdown(pcb, (m->sel & NC_SHUT_RX) != 0, (m->sel & NC_SHUT_TX) != 0);
            if (r != WISP_OK) {
                return r;
            }
            set = (m->sel & NC_SHUT_RX) ? NC_F_RX_SHUT : 0;
        }
    }
#endif
    set_flags(conn, set);
    return WISP_OK;
}

/* shutdown, close and abort. */
static wisp_err_t close_call(struct wisp_netconn *conn, uint8_t how)
{
    struct nc_msg m;
    wisp_err_t r;
    if (conn == NULL) {
        return WISP_ERR_ARG;
    }
    if (!(how & (NC_SHUT_RX | NC_SHUT_TX))) {
        return WISP_OK;
    }
    if (!conn_enter(conn, NULL)) {
        return WISP_ERR_CLSD;
    }
    nc_msg_zero(&m);
    m.sel = how;
    r = run_close(conn, &m);
    if (r == WISP_OK) {
        /* Wake the writer and a blocking connect; the readers only when
         * receiving stopped: after shutting the send side alone they keep
         * receiving until the peer's FIN (RFC 9293 §3.6: a half-closed
         * connection still delivers in the other direction). */
        if (how & NC_SHUT_RX) {
            wake_mbox(conn);
        }
        sem_broadcast(conn);
    }
    conn_leave(conn);
    return r;
}

wisp_err_t wisp_netconn_shutdown(struct wisp_netconn *conn, uint8_t shut_rx, uint8_t shut_tx)
{
    return close_call(conn, (uint8_t)((shut_rx ? NC_SHUT_RX : 0u) | (shut_tx ? NC_SHUT_TX : 0u)));
}

wisp_err_t wisp_netconn_close(struct wisp_netconn *conn)
{
    return close_call(conn, NC_SHUT_RX | NC_SHUT_TX);
}

wisp_err_t wisp_netconn_abort(struct wisp_netconn *conn)
{
    return close_call(conn, NC_SHUT_RX | NC_SHUT_TX | NC_SHUT_ABORT);
}

/* --------------------------------------------------------------- options */

wisp_err_t wisp_netconn_err(struct wisp_netconn *conn)
{
    wisp_err_t r;
    if (conn == NULL) {
        return WISP_OK;
    }
    api_lock(conn->api);
    r = conn->pending_err;
    conn->pending_err = WISP_OK;
    api_unlock(conn->api);
    return r;
}

/* Read a timeout of conn (t: its field) and, when set, replace it by v, under
 * the api lock (one function for the four calls). */
WISP_NOINLINE static uint32_t timeout_rw(struct wisp_netconn *conn, uint32_t *t, bool set, uint32_t v)
{
    uint32_t r;
    api_lock(conn->api);
    r = *t;
    if (set) {
        *t = v;
    }
    api_unlock(conn->api);
    return r;
}

void wisp_netconn_set_recvtimeout(struct wisp_netconn *conn, uint32_t timeout_ms)
{
    (void)timeout_rw(conn, &conn->recv_timeout, true, timeout_ms);
}

uint32_t wisp_netconn_get_recvtimeout(struct wisp_netconn *conn)
{
    return timeout_rw(conn, &conn->recv_timeout, false, 0);
}

void wisp_netconn_set_sendtimeout(struct wisp_netconn *conn, uint32_t timeout_ms)
{
    (void)timeout_rw(conn, &conn->send_timeout, true, timeout_ms);
}

uint32_t wisp_netconn_get_sendtimeout(struct wisp_netconn *conn)
{
    return timeout_rw(conn, &conn->send_timeout, false, 0);
}

void wisp_netconn_set_nonblocking(struct wisp_netconn *conn, bool on)
{
    (void)nc_flags(conn, on ? NC_F_NONBLOCK : 0u, on ? 0u : NC_F_NONBLOCK);
}

bool wisp_netconn_is_nonblocking(struct wisp_netconn *conn)
{
    return (nc_flags(conn, 0, 0) & NC_F_NONBLOCK) != 0;
}

void wisp_netconn_set_layered(struct wisp_netconn *conn)
{
    if (conn != NULL) {
        conn->layered = 1;
    }
}

/* Options set in the core (nc_msg.opt); from NC_OPT_NODELAY on, TCP
 * connection options (not for listeners). */
enum { NC_OPT_DSCP, NC_OPT_TTL, NC_OPT_BROADCAST, NC_OPT_CC, NC_OPT_NODELAY, NC_OPT_KEEPALIVE, NC_OPT_INFO,
       NC_OPT_BUFS, NC_OPT_MAXSEG };

/* Core: apply option m->sel (value m->len; keepalive and buffers: the
 * values at m->ptr; info: the struct at m->ptr). */
static wisp_err_t do_option(struct wisp_stack *s, void *arg)
{
    struct nc_msg *m = (struct nc_msg *)arg;
    struct wisp_netconn *conn = m->conn;
    uint8_t v = (uint8_t)m->len;
    WISP_UNUSED(s);
    if (conn->pcb.ip == NULL) {
        return WISP_ERR_CLSD;
    }
#if WISP_TCP
    if (conn->type == WISP_NETCONN_TCP) {
        struct wisp_tcp_pcb *pcb = conn->pcb.tcp;
        const uint32_t *vals = (const uint32_t *)m->ptr;
        if (m->sel >= NC_OPT_NODELAY && conn->state == NC_S_LISTEN) {
            return WISP_ERR_CONN; /* connection options: set them on the accepted ones */
        }
        switch (m->sel) {
        case NC_OPT_DSCP: /* listeners too (common head); the core passes it on to accepted ones */
            wisp_tcp_set_dscp(pcb, v);
            return WISP_OK;
        case NC_OPT_TTL:
            wisp_tcp_set_ttl(pcb, v);
            return WISP_OK;
        case NC_OPT_BROADCAST:
            return WISP_ERR_VAL; /* UDP only */
        case NC_OPT_CC: /* a listener: for the connections it accepts */
            return wisp_tcp_set_cc(pcb, m->len);
        case NC_OPT_NODELAY:
            wisp_tcp_nodelay(pcb, v != 0);
            return WISP_OK;
        case NC_OPT_KEEPALIVE:
            wisp_tcp_keepalive(pcb, v != 0, vals[0], vals[1], vals[2]);
            return WISP_OK;
        case NC_OPT_BUFS:
            wisp_tcp_set_bufs(pcb, vals[0], vals[1]);
            nc_wspace(conn, pcb); /* a smaller buffer may not be writable any more */
            return WISP_OK;
        case NC_OPT_MAXSEG:
            wisp_tcp_set_user_mss(pcb, (uint16_t)m->len);
            return WISP_OK;
        default: /* NC_OPT_INFO */
            wisp_tcp_get_info(pcb, (struct wisp_tcp_info *)m->ptr);
            return WISP_OK;
        }
    }
#endif
#if WISP_UDP
    switch (m->sel) {
    case NC_OPT_DSCP:
        /* RFC 2474 §3: DSCP in the upper six bits of the TOS octet, ECN kept. */
        conn->pcb.udp->tos = (uint8_t)((v << 2) | (conn->pcb.udp->tos & 0x03u));
        return WISP_OK;
    case NC_OPT_TTL:
        conn->pcb.udp->ttl = v;
        return WISP_OK;
    case NC_OPT_BROADCAST:
        if (v != 0) {
            conn->pcb.udp->flags = (uint8_t)(conn->pcb.udp->flags | WISP_UDP_F_BCAST);
        } else {
            conn->pcb.udp->flags = (uint8_t)(conn->pcb.udp->flags & ~WISP_UDP_F_BCAST);
        }
        return WISP_OK;
    default:
        return WISP_ERR_VAL; /* TCP options */
    }
#else
    return WISP_ERR_VAL;
#endif
}

/* Set option opt to value v (more values at ptr) through the core. */
static wisp_err_t set_option(struct wisp_netconn *conn, uint8_t opt, uint32_t v, const void *ptr)
{
    return nc_op(conn, NC_OP_OPTION, opt, v, ptr, NULL);
}

wisp_err_t wisp_netconn_set_dscp(struct wisp_netconn *conn, uint8_t dscp)
{
    if (dscp > 63u) {
        return conn == NULL ? WISP_ERR_ARG : WISP_ERR_VAL;
    }
    return set_option(conn, NC_OPT_DSCP, dscp, NULL);
}

wisp_err_t wisp_netconn_set_ttl(struct wisp_netconn *conn, uint8_t ttl)
{
    return set_option(conn, NC_OPT_TTL, ttl, NULL);
}

wisp_err_t wisp_netconn_set_nodelay(struct wisp_netconn *conn, bool on)
{
    return set_option(conn, NC_OPT_NODELAY, on ? 1u : 0u, NULL);
}

wisp_err_t wisp_netconn_set_keepalive(struct wisp_netconn *conn, bool on, uint32_t idle_ms, uint32_t intvl_ms,
                                      uint32_t cnt)
{
    const uint32_t v[3] = { idle_ms, intvl_ms, cnt };
    return set_option(conn, NC_OPT_KEEPALIVE, on ? 1u : 0u, v);
}

wisp_err_t wisp_netconn_set_broadcast(struct wisp_netconn *conn, bool on)
{
    return set_option(conn, NC_OPT_BROADCAST, on ? 1u : 0u, NULL);
}

wisp_err_t wisp_netconn_set_bufs(struct wisp_netconn *conn, uint32_t sndbuf, uint32_t rcvbuf)
{
    const uint32_t v[2] = { sndbuf, rcvbuf };
    return set_option(conn, NC_OPT_BUFS, 0, v);
}

wisp_err_t wisp_netconn_set_maxseg(struct wisp_netconn *conn, uint16_t mss)
{
    return set_option(conn, NC_OPT_MAXSEG, mss, NULL);
}

wisp_err_t wisp_netconn_set_cc(struct wisp_netconn *conn, unsigned algo)
{
    return set_option(conn, NC_OPT_CC, algo, NULL);
}

wisp_err_t wisp_netconn_get_tcp_info(struct wisp_netconn *conn, struct wisp_tcp_info *info)
{
    if (info == NULL) {
        return WISP_ERR_ARG;
    }
    return set_option(conn, NC_OPT_INFO, 0, info);
}

/* ------------------------------------------------------ the core entry */

static wisp_err_t do_pbuf_replace(struct wisp_stack *s, void *arg);

/* Core: run the operation m->op names (each do_* has this one caller). */
static wisp_err_t do_op(struct wisp_stack *s, void *arg)
{
    switch (((struct nc_msg *)arg)->op) {
    case NC_OP_NEW:
        return do_new(s, arg);
    case NC_OP_DRAIN:
        return do_drain(s, arg);
    case NC_OP_CLOSE:
        return do_close(s, arg);
    case NC_OP_BIND_CONNECT:
        return do_bind_connect(s, arg);
    case NC_OP_DISCONNECT:
        return do_disconnect(s, arg);
    case NC_OP_GETADDR:
        return do_getaddr(s, arg);
    case NC_OP_RECVED:
        return do_recved(s, arg);
    case NC_OP_OPTION:
        return do_option(s, arg);
    case NC_OP_PBUF_REPLACE:
        return do_pbuf_replace(s, arg);
#if WISP_TCP
    case NC_OP_LISTEN:
        return do_listen(s, arg);
    case NC_OP_WRITE:
        return do_write(s, arg);
    case NC_OP_NOCOPY_RELEASE:
        return do_nocopy_release(s, arg);
#endif
#if WISP_UDP
    case NC_OP_SEND:
        return do_send(s, arg);
#endif
    default:
        return WISP_ERR_VAL;
    }
}

/* --------------------------------------------------------------- netbufs */

struct wisp_netbuf *wisp_netbuf_new(struct wisp_netconn_api *api)
{
    struct wisp_netbuf *nb;
    if (api == NULL) {
        return NULL;
    }
    api_lock(api);
    nb = netbuf_alloc_locked(api);
    api_unlock(api);
    return nb;
}

void wisp_netbuf_delete(struct wisp_netbuf *buf)
{
    if (buf == NULL) {
        return;
    }
    (void)core_pbuf_free(buf->api, buf->p);
    buf->p = NULL;
    netbuf_release(buf);
}

/* Core: replace buf's data by a fresh RAM buffer (len) or a reference. */
static wisp_err_t do_pbuf_replace(struct wisp_stack *s, void *arg)
{
    struct nc_msg *m = (struct nc_msg *)arg;
    struct wisp_netbuf *buf = (struct wisp_netbuf *)m->out;
    struct wisp_pbuf *p;
    wisp_pbuf_free(buf->p);
    buf->p = NULL;
    buf->ptr = NULL;
    if (m->ptr != NULL) {
        p = wisp_pbuf_alloc_ref(s, m->ptr, (uint16_t)m->len, WISP_PBUF_REF);
    } else {
        p = wisp_pbuf_alloc(s, WISP_LAYER_TRANSPORT, (uint16_t)m->len, WISP_PBUF_RAM);
    }
    if (p == NULL) {
        return WISP_ERR_MEM;
    }
    buf->p = p;
    buf->ptr = p;
    return WISP_OK;
}

/* Replace buf's data through the core (do_pbuf_replace). */
static wisp_err_t netbuf_replace(struct wisp_netbuf *buf, const void *data, uint16_t size)
{
    struct nc_msg m;
    nc_msg_zero(&m);
    m.out = buf;
    m.len = size;
    m.ptr = (void *)(uintptr_t)data;
    m.op = NC_OP_PBUF_REPLACE;
    return wisp_tcpip_run(buf->api->tcpip, do_op, &m);
}

void *wisp_netbuf_alloc(struct wisp_netbuf *buf, uint16_t size)
{
    if (buf == NULL) {
        return NULL;
    }
    if ((uint32_t)size + WISP_LAYER_TRANSPORT > (uint32_t)WISP_PBUF_BLOCK_SIZE) {
        wisp_netbuf_free(buf);
        return NULL;
    }
    if (netbuf_replace(buf, NULL, size) != WISP_OK) {
        return NULL;
    }
    return buf->p->payload;
}

void wisp_netbuf_free(struct wisp_netbuf *buf)
{
    if (buf == NULL) {
        return;
    }
    (void)core_pbuf_free(buf->api, buf->p);
    buf->p = NULL;
    buf->ptr = NULL;
}

wisp_err_t wisp_netbuf_ref(struct wisp_netbuf *buf, const void *dataptr, uint16_t size)
{
    if (buf == NULL || (dataptr == NULL && size != 0)) {
        return WISP_ERR_ARG;
    }
    return netbuf_replace(buf, dataptr != NULL ? dataptr : (const void *)&buf->port, /* size 0: any valid address */
                          size);
}

void wisp_netbuf_chain(struct wisp_netbuf *head, struct wisp_netbuf *tail)
{
    if (head == NULL || tail == NULL) {
        return;
    }
    if (head->p == NULL) {
        head->p = tail->p;
    } else if (tail->p != NULL) {
        /* head takes over tail's reference; pbuf chains change in the core
         * context only (WISP_CORE_ASSERT_OWNER) */
        bool lock = !wisp_tcpip_on_stack_thread(head->api->tcpip);
        if (lock) {
            wisp_tcpip_lock(head->api->tcpip);
        }
        wisp_pbuf_cat(head->p, tail->p);
        if (lock) {
            wisp_tcpip_unlock(head->api->tcpip);
        }
    }
    head->ptr = head->p;
    tail->p = NULL;
    netbuf_release(tail);
}

wisp_err_t wisp_netbuf_data(struct wisp_netbuf *buf, void **dataptr, uint16_t *len)
{
    if (buf == NULL || dataptr == NULL || len == NULL) {
        return WISP_ERR_ARG;
    }
    if (buf->ptr == NULL) {
        return WISP_ERR_BUF;
    }
    *dataptr = buf->ptr->payload;
    *len = buf->ptr->len;
    return WISP_OK;
}

int8_t wisp_netbuf_next(struct wisp_netbuf *buf)
{
    if (buf == NULL || buf->ptr == NULL || buf->ptr->next == NULL) {
        return -1;
    }
    buf->ptr = buf->ptr->next;
    return buf->ptr->next == NULL ? 1 : 0;
}

void wisp_netbuf_first(struct wisp_netbuf *buf)
{
    if (buf != NULL) {
        buf->ptr = buf->p;
    }
}

uint16_t wisp_netbuf_copy_partial(const struct wisp_netbuf *buf, void *dataptr, uint16_t len, uint16_t offset)
{
    if (buf == NULL || buf->p == NULL || dataptr == NULL) {
        return 0;
    }
    return wisp_pbuf_copy_out(buf->p, dataptr, len, offset);
}

wisp_err_t wisp_netbuf_take(struct wisp_netbuf *buf, const void *dataptr, uint16_t len)
{
    if (buf == NULL || buf->p == NULL || dataptr == NULL) {
        return WISP_ERR_ARG;
    }
    return wisp_pbuf_copy_in(buf->p, dataptr, len, 0);
}

uint16_t wisp_netbuf_len(const struct wisp_netbuf *buf)
{
    return (buf != NULL && buf->p != NULL) ? buf->p->tot_len : 0u;
}

#endif /* WISP_TCP || WISP_UDP */
