/**
 * @file sockets.c
 * BSD sockets on top of netconn (wisp/sockets.h): the socket table, the
 * event counters fed by the netconn callback, select/poll with a list of
 * waiting threads woken through their own semaphores, and every socket
 * call as a thin, direct wrapper of the netconn call (no extra copy, no
 * extra thread).
 *
 * Locking. One mutex per table (the "table lock") guards the entries'
 * state, the event counters and the waiter list. It is a leaf lock with
 * respect to netconn: the netconn callback takes it (possibly with the
 * core lock held), and no thread ever calls a netconn function or takes
 * the core lock while holding it (netconn.h's rule for callbacks).
 *
 * Lifetime. A call "enters" a socket (users + 1 under the table lock,
 * refused with EBADF once close() ran) and "leaves" it at the end. close()
 * marks the entry closing, wakes the threads blocked in it (select/poll
 * waiters through their semaphores; netconn waiters by closing the netconn,
 * which is sticky: a thread that enters the netconn call afterwards returns
 * at once) and leaves; whoever leaves last deletes the netconn and frees
 * the entry. So a netconn is never deleted while a thread of this layer
 * may still be about to call into it -- which is why the netconns are
 * layered (wisp_netconn_set_layered): netconn does not count the callers
 * again, does not lock writers again (tx_busy serialises them) and takes
 * the writer's settings from the call (wisp_netconn_write_layered). A
 * send is one table-lock round trip in, the core lock, one table-lock
 * round trip out (SO_SNDTIMEO, kept in the netconn -- RAM per socket --
 * is read there only when it is set): no more locking than netconn_write
 * by itself (which enters and leaves through the netconn lock).
 *
 * Receive. TCP data comes as pbuf chains (netconn_recv_tcp_pbuf_flags);
 * recv copies straight from the chain into the caller's buffer and keeps
 * a partly read chain (last.p) for the next call; consumed chains are
 * freed in batches (wisp_netconn_tcp_consumed: one core-lock entry per
 * batch, which also reopens the window by the bytes copied out and has the
 * stack offer data the full receive mailbox refused). UDP datagrams come
 * as netbufs; blocking UDP receives wait inside netconn, and close /
 * shutdown(SHUT_RD) wake them by closing / shutting the netconn.
 */
#define WISP_PRIVATE_ACCESS 1 /* library code: sees the private tier (wisp/arch.h) */
#include "wisp/sockets.h"
#include "wisp/netconn.h"

/* The socket slot keeps the keepalive defaults in Linux's widths
 * (priv/sockets.h): seconds in 16 bits, the count in 7. */
#if WISP_TCP_KEEPCNT > 127u || WISP_TCP_KEEPIDLE_MS / 1000u > 65535u || WISP_TCP_KEEPINTVL_MS / 1000u > 65535u
#error "sockets: WISP_TCP_KEEPCNT must be <= 127, WISP_TCP_KEEPIDLE_MS / WISP_TCP_KEEPINTVL_MS <= 65535 s"
#endif

/* The socket slot keeps errnos in a byte (priv/sockets.h): the largest
 * WISP_E* (sockets.h) must stay below 256. */
#if WISP_EINPROGRESS > 255 || WISP_EALREADY > 255 || WISP_EHOSTUNREACH > 255 || WISP_ECONNREFUSED > 255
#error "sockets: errno values must be < 256 (struct wisp_sock rx_err, last_err)"
#endif

#include <stdarg.h>

#ifndef WISP_SOCKET_ERRNO_SET
#include <errno.h>
#define WISP_SOCKET_ERRNO_SET(e) (errno = (e))
#define WISP_SOCKET_ERRNO_GET() (errno)
#endif

/* The process's socket table (sockets.h: descriptors are process-wide by
 * the definition of the BSD API). One of wisp's two process-wide pointers,
 * both in the socket layer: this one and netdb.c's resolver table (the
 * BSD resolver calls name no stack either). The core has none.
 * Written only by wisp_sockets_init/deinit, which run while no other
 * thread uses sockets. */
static struct wisp_sockets *g_socks;

/* Is sk a stream (TCP) socket? Its netconn's type, set once. */
#define SK_STREAM(sk) (wisp_netconn_type((sk)->conn) == WISP_NETCONN_TCP)

/** Largest UDP payload in one IPv4 datagram (65535 - 20 - 8). */
#define SOCK_UDP_MAX 65507u
/** Consumed TCP chains freed per core-lock entry. */
#define SOCK_FREE_BATCH 16

/** A thread waiting in select/poll (or for its turn to read/write). Lives
 *  on the waiting thread's stack, linked into the table while it waits. */
struct wisp_select_wait {
    struct wisp_select_wait *next;
    wisp_sys_sem_t sem;
    /* what it watches (one of the three) */
    const wisp_fd_set *set[3];    /**< select: the read, write, except sets (NULL: none) */
    int maxfdp1;
    const struct wisp_pollfd *fds;
    wisp_nfds_t nfds;
    const struct wisp_sock *watch; /**< non-NULL: waits for any change of this entry (turn, UDP data) */
    uint8_t signalled;
};

/* ------------------------------------------------------------ errno */

/* Out of line: the errno store (a call into the C library's per-thread
 * errno on most ports) is on the error paths of every call; one copy. */
static WISP_NOINLINE int set_errno(int e)
{
    WISP_SOCKET_ERRNO_SET(e);
    return -1;
}

int wisp_errno(void)
{
    return WISP_SOCKET_ERRNO_GET();
}

int wisp_err_to_errno(wisp_err_t err)
{
    switch (err) {
    case WISP_OK: return 0;
    case WISP_ERR_MEM: return WISP_ENOMEM;
    case WISP_ERR_BUF: return WISP_ENOBUFS;
    case WISP_ERR_TIMEOUT: return WISP_ETIMEDOUT;
    case WISP_ERR_RTE: return WISP_EHOSTUNREACH;
    case WISP_ERR_INPROGRESS: return WISP_EINPROGRESS;
    case WISP_ERR_VAL: return WISP_EINVAL;
    case WISP_ERR_WOULDBLOCK: return WISP_EAGAIN;
    case WISP_ERR_USE: return WISP_EADDRINUSE;
    case WISP_ERR_ALREADY: return WISP_EALREADY;
    case WISP_ERR_ISCONN: return WISP_EISCONN;
    case WISP_ERR_CONN: return WISP_ENOTCONN;
    case WISP_ERR_IF: return WISP_ENETDOWN;
    case WISP_ERR_ABRT: return WISP_ECONNABORTED;
    case WISP_ERR_RST: return WISP_ECONNRESET;
    case WISP_ERR_CLSD: return WISP_ENOTCONN;
    case WISP_ERR_ARG: return WISP_EINVAL;
    case WISP_ERR_REFUSED: return WISP_ECONNREFUSED;
    case WISP_ERR_HOSTUNREACH: return WISP_EHOSTUNREACH;
    case WISP_ERR_NETUNREACH: return WISP_ENETUNREACH;
    default: return WISP_EIO;
    }
}

/* ------------------------------------------------------- table helpers */

static int sock_idx(const struct wisp_sockets *t, const struct wisp_sock *sk)
{
    return (int)(sk - t->sock);
}

static void lock_tbl(struct wisp_sockets *t)
{
    wisp_sys_mutex_lock(&t->lock);
}

static void unlock_tbl(struct wisp_sockets *t)
{
    wisp_sys_mutex_unlock(&t->lock);
}

/* The same, out of line, for the calls off the send / recv fast path (one
 * call instead of loading the table at each of its many uses). */
static WISP_NOINLINE void tbl_lock(void)
{
    lock_tbl(g_socks);
}

static WISP_NOINLINE void tbl_unlock(void)
{
    unlock_tbl(g_socks);
}

/* Which sets of select waiter w hold descriptor fd: bit k for set[k]
 * (read, write, except: the RDY_IN, RDY_OUT, RDY_ERR bits). */
static unsigned sel_sets(const struct wisp_select_wait *w, int fd)
{
    unsigned k, m = 0;
    for (k = 0; k < 3 && fd < w->maxfdp1; k++) {
        if (w->set[k] != NULL && WISP_FD_ISSET(fd, w->set[k])) {
            m |= 1u << k;
        }
    }
    return m;
}

/* Does select / poll waiter w watch descriptor fd? */
static bool sel_watches(const struct wisp_select_wait *w, int fd)
{
    wisp_nfds_t i;
    if (w->fds == NULL) {
        return sel_sets(w, fd) != 0;
    }
    for (i = 0; i < w->nfds; i++) {
        if (w->fds[i].fd == fd) {
            return true;
        }
    }
    return false;
}

/* Does waiter w watch entry sk, descriptor fd? (table lock held) */
static bool waiter_watches(const struct wisp_select_wait *w, const struct wisp_sock *sk, int fd)
{
    if (w->watch != NULL) {
        return w->watch == sk;
    }
    return sel_watches(w, fd);
}

/* Wake every waiter that watches entry sk (table lock held): every
 * change of an entry's state calls it; with nobody in select / poll or
 * waiting for a turn the list is empty. */
static void wake_waiters(const struct wisp_sock *sk)
{
    struct wisp_sockets *t = g_socks;
    struct wisp_select_wait *w;
    int fd = sock_idx(t, sk) + WISP_SOCKET_OFFSET;
    for (w = t->waiters; w != NULL; w = w->next) {
        if (!w->signalled && waiter_watches(w, sk, fd)) {
            w->signalled = 1;
            wisp_sys_sem_signal(&w->sem);
        }
    }
}

static void waiter_add(struct wisp_sockets *t, struct wisp_select_wait *w)
{
    w->signalled = 0;
    w->next = t->waiters;
    t->waiters = w;
}

static void waiter_remove(struct wisp_sockets *t, struct wisp_select_wait *w)
{
    struct wisp_select_wait **pp;
    for (pp = &t->waiters; *pp != NULL; pp = &(*pp)->next) {
        if (*pp == w) {
            *pp = w->next;
            return;
        }
    }
}

/* Apply netconn event evt to entry sk (table lock held): true when it
 * may have made sk ready. */
static WISP_NOINLINE bool sk_event(struct wisp_sock *sk, enum wisp_netconn_evt evt, uint16_t len)
{
    switch (evt) {
    case WISP_NETCONN_EVT_RCVPLUS:
        sk->rcvevent++;
        sk->rcv_bytes += len;
        break;
    case WISP_NETCONN_EVT_RCVMINUS:
        sk->rcvevent--;
        sk->rcv_bytes = (sk->rcv_bytes > len) ? sk->rcv_bytes - len : 0u;
        return false; /* never makes anything ready */
    case WISP_NETCONN_EVT_SENDPLUS:
        sk->f.sendevent = 1;
        if (sk->f.connecting && !sk->f.dead) {
            sk->f.connecting = 0; /* a non-blocking connect completed */
            sk->f.established = 1;
        }
        break;
    case WISP_NETCONN_EVT_SENDMINUS:
        sk->f.sendevent = 0;
        return false;
    case WISP_NETCONN_EVT_ERROR:
        sk->f.errevent = 1;
        if (!SK_STREAM(sk)) {
            break; /* an ICMP error for a connected UDP socket: it lives on */
        }
        sk->f.dead = 1;
        if (sk->f.connecting) {
            sk->f.connecting = 0; /* a non-blocking connect failed */
            sk->f.connect_failed = 1;
        }
        break;
    default:
        break;
    }
    return true;
}

/* The netconn event callback (netconn.h: core context for PLUS/SENDMINUS/
 * ERROR, the receiving thread for RCVMINUS; never blocks). */
static void sock_event(struct wisp_netconn *conn, enum wisp_netconn_evt evt, uint16_t len)
{
    struct wisp_sockets *t = g_socks;
    struct wisp_sock *sk;
    int idx;
    if (t == NULL || conn == NULL) {
        return;
    }
    lock_tbl(t);
    idx = conn->socket;
    if (idx < 0) {
        /* An accepted netconn whose socket does not exist yet: count its
         * receive events in conn->socket (-1 - n), as lwIP does; accept()
         * turns them into rcvevent. */
        if (evt == WISP_NETCONN_EVT_RCVPLUS && idx > -30000) {
            conn->socket = idx - 1;
        }
    } else if (idx < WISP_SOCKET_COUNT) {
        sk = &t->sock[idx];
        if (sk->conn == conn && sk_event(sk, evt, len)) {
            wake_waiters(sk);
        }
    }
    unlock_tbl(t);
}

/* Find the open entry of descriptor fd (table lock held): NULL with *e set. */
static struct wisp_sock *lookup(struct wisp_sockets *t, int fd, int *e)
{
    int idx;
    if (fd < WISP_SOCKET_OFFSET) {
        *e = (fd < 0) ? WISP_EBADF : WISP_ENOTSOCK;
        return NULL;
    }
    idx = fd - WISP_SOCKET_OFFSET;
    if (idx >= WISP_SOCKET_COUNT || t->sock[idx].conn == NULL || t->sock[idx].f.closing) {
        *e = WISP_EBADF;
        return NULL;
    }
    return &t->sock[idx];
}

/* Enter socket fd: NULL with errno set, or the entry with users + 1 and
 * the table lock held. */
static struct wisp_sock *sock_enter_lock(int fd)
{
    struct wisp_sockets *t = g_socks;
    struct wisp_sock *sk;
    int e = WISP_EBADF;
    if (t != NULL) {
        tbl_lock();
        sk = lookup(t, fd, &e);
        if (sk != NULL) {
            sk->users++;
            return sk;
        }
        tbl_unlock();
    }
    set_errno(e);
    return NULL;
}

/* Enter socket fd: NULL with errno set, or the entry with users + 1. */
static struct wisp_sock *sock_enter(int fd)
{
    struct wisp_sock *sk = sock_enter_lock(fd);
    if (sk != NULL) {
        tbl_unlock();
    }
    return sk;
}

static void sock_free_entry(struct wisp_sock *sk);

/* Leave (table lock held on entry; released on return): the last user of
 * a closing socket frees it. */
static void sock_leave_locked(struct wisp_sock *sk)
{
    WISP_ASSERT(sk->users > 0);
    sk->users--;
    if (sk->users == 0 && sk->f.closing && !sk->f.freeing) {
        sk->f.freeing = 1;
        tbl_unlock();
        sock_free_entry(sk);
        return;
    }
    tbl_unlock();
}

static void sock_leave(struct wisp_sock *sk)
{
    tbl_lock();
    sock_leave_locked(sk);
}

/* Record error e for socket sk and the calling thread, leave; returns -1. */
static int sock_fail_leave(struct wisp_sock *sk, int e)
{
    tbl_lock();
    sk->last_err = (uint8_t)e;
    sock_leave_locked(sk);
    return set_errno(e);
}

/* Fail a call on descriptor s with e, after the check that s is an open
 * socket (EBADF / ENOTSOCK first, as Linux checks). Returns -1. */
static int sock_fail(int s, int e)
{
    struct wisp_sock *sk = sock_enter(s);
    return sk == NULL ? -1 : sock_fail_leave(sk, e);
}

/* The state flags of sk, read under the table lock. */
static struct wisp_sock_flags sk_flags(const struct wisp_sock *sk)
{
    struct wisp_sock_flags f;
    tbl_lock();
    f = sk->f;
    tbl_unlock();
    return f;
}

static bool sock_is_closing(const struct wisp_sock *sk)
{
    return sk_flags(sk).closing != 0;
}

/* errno for connection error err the stack reported (table lock held):
 * a reset of a stream socket whose connect failed or that was never
 * established means "refused". */
static WISP_NOINLINE int conn_errno(const struct wisp_sock *sk, wisp_err_t err)
{
    return err == WISP_ERR_RST && SK_STREAM(sk) && (sk->f.connect_failed || !sk->f.established)
               ? WISP_ECONNREFUSED
               : wisp_err_to_errno(err); /* RST: ECONNRESET, TIMEOUT: ETIMEDOUT, ABRT: ECONNABORTED */
}

/* Is err a connection error (the stack ended the connection)? */
#define ERR_BIT(err) (1ul << -(err))
WISP_STATIC_ASSERT(sock_err_bits, WISP_ERR_NETUNREACH == -19); /* the last of enum wisp_err (err.h) */
static bool is_conn_err(wisp_err_t err)
{
    return err < 0 && err >= WISP_ERR_NETUNREACH &&
           (ERR_BIT(err) & (ERR_BIT(WISP_ERR_RST) | ERR_BIT(WISP_ERR_ABRT) | ERR_BIT(WISP_ERR_TIMEOUT) |
                            ERR_BIT(WISP_ERR_HOSTUNREACH) | ERR_BIT(WISP_ERR_NETUNREACH))) != 0;
}

/*
 * The pending connection error of a socket (POSIX so_error, Linux sk_err).
 * It lives in one of two places: in the netconn (its pending error, taken
 * once by the next netconn call; errevent says it is there) or, once a
 * socket call took it from the netconn but could not report it -- a send
 * that returns the bytes it wrote before the reset, a recv that returns
 * the data received before it -- in sk->rx_err. The next send, recv (after
 * the queued data) or getsockopt(SO_ERROR) reports it and clears it; the
 * calls after that see a dead connection: EPIPE for send, 0 for recv (as
 * Linux). A call that was in progress when the error came (blocked in
 * netconn) reports it too: netconn returns the error to every call it
 * interrupts.
 */

/* A call got connection error err from netconn. It reports it (keep
 * false): the pending error is consumed, wherever it was; or it returns
 * data / bytes written (keep true): the error stays pending in the
 * socket for the next call. Returns its errno. */
static WISP_NOINLINE int conn_err(struct wisp_sock *sk, wisp_err_t err, bool keep)
{
    int e;
    tbl_lock();
    e = conn_errno(sk, err);
    sk->f.errevent = 0;
    sk->rx_err = (uint8_t)(keep ? (sk->rx_err != 0 ? sk->rx_err : e) : 0);
    tbl_unlock();
    return e;
}

/* Take the pending error (0: none): the socket's, else the netconn's. */
static int take_pending_err(struct wisp_sock *sk)
{
    bool in_conn;
    int e;
    tbl_lock();
    e = sk->rx_err;
    sk->rx_err = 0;
    in_conn = e == 0 && sk->f.errevent;
    sk->f.errevent = 0;
    tbl_unlock();
    if (in_conn) {
        /* no lock held: a netconn call (takes only the netconn's own lock) */
        wisp_err_t err = wisp_netconn_err(sk->conn);
        if (err != WISP_OK) {
            tbl_lock();
            e = conn_errno(sk, err);
            tbl_unlock();
        }
    }
    return e;
}

/* A UDP call returned the socket's pending ICMP error (netconn took it):
 * select/poll no longer report it. */
static void udp_err_taken(struct wisp_sock *sk)
{
    tbl_lock();
    sk->f.errevent = 0;
    tbl_unlock();
}

/* The errno a call on sk reports for netconn error err. map: the call's
 * own pairs EM(err, errno), ended by EM_END(the default errno; 0:
 * wisp_err_to_errno). ERR_CLSD once close() ran is EBADF whatever the
 * map says (the descriptor is gone, sockets.h); ERR_REFUSED, a UDP
 * socket's pending ICMP error, was taken by the call. */
#define EM(err, e) (uint8_t)-(err), (uint8_t)(e)
#define EM_END(e) 0u, (uint8_t)(e)
static WISP_NOINLINE int err_errno(struct wisp_sock *sk, wisp_err_t err, const uint8_t *map)
{
    if (err == WISP_ERR_CLSD && sock_is_closing(sk)) {
        return WISP_EBADF;
    }
    if (err == WISP_ERR_REFUSED && !SK_STREAM(sk)) {
        udp_err_taken(sk);
    }
    for (; map[0] != 0u; map += 2) {
        if (map[0] == (uint8_t)-err) {
            return map[1];
        }
    }
    return map[1] != 0u ? map[1] : wisp_err_to_errno(err);
}

/* ------------------------------------------------------ netconn helpers */

/* Free consumed TCP chains and reopen the window by the bytes consumed,
 * with one entry into the core (received with NETCONN_NOAUTORCVD, so this
 * is the only window update). */
struct rx_batch {
    struct wisp_pbuf *done[SOCK_FREE_BATCH];  /**< consumed chains */
    unsigned n;
    uint32_t recved;                          /**< bytes consumed */
};

/* Flush batch b (if it holds anything). */
static void rx_flush(struct wisp_sock *sk, struct rx_batch *b)
{
    if (b->n > 0 || b->recved > 0) {
        (void)wisp_netconn_tcp_consumed(sk->conn, b->done, b->n, b->recved);
        b->n = 0;
        b->recved = 0;
    }
}

/* The options this layer knows, by kind. The order matters: OK_NODELAY
 * .. OK_CONGESTION are TCP's (a stream socket's only); setsockopt reads
 * the kinds below OK_CONGESTION (and options not known) as an int. */
enum {
    OK_NONE,          /* not known: ENOPROTOOPT */
    OK_NOP,           /* SO_DEBUG, SO_DONTROUTE, SO_OOBINLINE: set accepted, no effect */
    OK_REUSEADDR,     /* SO_REUSEADDR, SO_REUSEPORT */
    OK_KEEPALIVE,
    OK_BROADCAST,
    OK_SNDBUF,
    OK_RCVBUF,
    OK_TOS,
    OK_TTL,
    OK_TYPE,          /* get only */
    OK_ACCEPTCONN,    /* get only */
    OK_ERROR,         /* get only */
    OK_NODELAY,       /* TCP's from here */
    OK_KEEPIDLE,
    OK_KEEPINTVL,
    OK_KEEPCNT,
    OK_MAXSEG,
    OK_INFO,          /* get only */
    OK_CONGESTION,    /* TCP's up to here; not an int from here */
    OK_RCVTIMEO,      /* struct timeval */
    OK_SNDTIMEO,
    OK_LINGER,        /* struct linger: linger_s here, */
    OK_LINGER_ON      /* l_onoff here (not an option by itself) */
};

/* optname -> kind, by level: SOL_SOCKET's names 0..30, then
 * IPPROTO_TCP's 0..13, then IPPROTO_IP's 0..2 (sockets.h: Linux's
 * numbers, small). */
#define OPT_TCP 31u /* where IPPROTO_TCP's start, */
#define OPT_IP 45u  /* IPPROTO_IP's, */
#define OPT_N 48u   /* the end */
static const uint8_t opt_table[OPT_N] = {
    [WISP_SO_DEBUG] = OK_NOP,
    [WISP_SO_REUSEADDR] = OK_REUSEADDR,
    [WISP_SO_TYPE] = OK_TYPE,
    [WISP_SO_ERROR] = OK_ERROR,
    [WISP_SO_DONTROUTE] = OK_NOP,
    [WISP_SO_BROADCAST] = OK_BROADCAST,
    [WISP_SO_SNDBUF] = OK_SNDBUF,
    [WISP_SO_RCVBUF] = OK_RCVBUF,
    [WISP_SO_KEEPALIVE] = OK_KEEPALIVE,
    [WISP_SO_OOBINLINE] = OK_NOP,
    [WISP_SO_LINGER] = OK_LINGER,
    [WISP_SO_REUSEPORT] = OK_REUSEADDR,
    [WISP_SO_RCVTIMEO] = OK_RCVTIMEO,
    [WISP_SO_SNDTIMEO] = OK_SNDTIMEO,
    [WISP_SO_ACCEPTCONN] = OK_ACCEPTCONN,
    [OPT_TCP + WISP_TCPOPT_NODELAY] = OK_NODELAY,
    [OPT_TCP + WISP_TCPOPT_MAXSEG] = OK_MAXSEG,
    [OPT_TCP + WISP_TCPOPT_KEEPIDLE] = OK_KEEPIDLE,
    [OPT_TCP + WISP_TCPOPT_KEEPINTVL] = OK_KEEPINTVL,
    [OPT_TCP + WISP_TCPOPT_KEEPCNT] = OK_KEEPCNT,
    [OPT_TCP + WISP_TCPOPT_INFO] = OK_INFO,
    [OPT_TCP + WISP_TCPOPT_CONGESTION] = OK_CONGESTION,
    [OPT_IP + WISP_IP_TOS] = OK_TOS,
    [OPT_IP + WISP_IP_TTL] = OK_TTL,
};
/* Each level's names stay in its part. */
WISP_STATIC_ASSERT(sock_opt_names, WISP_SO_ACCEPTCONN < OPT_TCP && WISP_SO_SNDTIMEO < OPT_TCP &&
                                       WISP_TCPOPT_CONGESTION < OPT_IP - OPT_TCP && WISP_IP_TTL < OPT_N - OPT_IP);

/* The kind of option (level, optname): OK_NONE when not known. */
static unsigned opt_kind(int level, int optname)
{
    unsigned base = 0, n = OPT_TCP;
    if (level == WISP_IPPROTO_TCP) {
        base = OPT_TCP;
        n = OPT_IP - OPT_TCP;
    } else if (level == WISP_IPPROTO_IP) {
        base = OPT_IP;
        n = OPT_N - OPT_IP;
    } else if (level != WISP_SOL_SOCKET) {
        return OK_NONE;
    }
    return (unsigned)optname < n ? opt_table[base + (unsigned)optname] : OK_NONE;
}

/* Is option kind one sk has? TCP's options are a stream socket's only. */
static bool opt_for(const struct wisp_sock *sk, unsigned kind)
{
    return kind != OK_NONE && (kind < OK_NODELAY || kind > OK_CONGESTION || SK_STREAM(sk));
}

/* Where option kind lives in struct wisp_sock: {offset | size code (1:
 * a byte, 2: 16 bits, 3: 32 bits; 0: not stored), a flag of a byte (0:
 * the whole field)}. */
#define OPT_AT(m, flag) {(uint8_t)(offsetof(struct wisp_sock, m) | \
    (sizeof(((struct wisp_sock *)0)->m) == 1 ? 0x40u : sizeof(((struct wisp_sock *)0)->m) == 2 ? 0x80u : 0xc0u)), flag}
static const uint8_t opt_at[OK_LINGER_ON + 1][2] = {
    [OK_REUSEADDR] = OPT_AT(opts, WISP_SOCK_O_REUSEADDR),
    [OK_KEEPALIVE] = OPT_AT(opts, WISP_SOCK_O_KEEPALIVE),
    [OK_BROADCAST] = OPT_AT(opts, WISP_SOCK_O_BROADCAST),
    [OK_SNDBUF] = OPT_AT(sndbuf, 0),
    [OK_RCVBUF] = OPT_AT(rcvbuf, 0),
    [OK_TOS] = OPT_AT(tos, 0),
    [OK_TTL] = OPT_AT(ttl, 0),
    [OK_NODELAY] = OPT_AT(opts, WISP_SOCK_O_NODELAY),
    [OK_KEEPIDLE] = OPT_AT(keepidle_s, 0),
    [OK_KEEPINTVL] = OPT_AT(keepintvl_s, 0),
    [OK_KEEPCNT] = OPT_AT(keepcnt, 0),
    [OK_MAXSEG] = OPT_AT(maxseg, 0),
    [OK_CONGESTION] = OPT_AT(opts, WISP_SOCK_O_CUBIC),
    [OK_LINGER] = OPT_AT(linger_s, 0),
    [OK_LINGER_ON] = OPT_AT(opts, WISP_SOCK_O_LINGER),
    [OK_SNDTIMEO] = OPT_AT(opts, WISP_SOCK_O_SNDTIMEO), /* whether set; the value: the netconn's */
};
/* The offsets fit the 6 bits of opt_at. */
WISP_STATIC_ASSERT(sock_opt_offsets, offsetof(struct wisp_sock, rcv_bytes) <= 64u);
/* TCP_CONGESTION is one flag: the algorithms are 0 and 1 (tcp.h). */
WISP_STATIC_ASSERT(sock_cc_is_one_bit, WISP_TCP_CC_NEWRENO == 0 && WISP_TCP_CC_CUBIC == 1);

/* Read (store false) or write val into the stored value of option kind
 * of sk, under the table lock. Returns the value (after the write). */
static uint32_t opt_access(struct wisp_sock *sk, unsigned kind, bool store, uint32_t val)
{
    unsigned at = opt_at[kind][0], flag = opt_at[kind][1];
    uint8_t *p = (uint8_t *)sk + (at & 0x3fu);
    /* the timeouts: the netconn's own, not copied here (RAM per socket;
     * netconn waits with the receive timeout; the send timeout of a
     * layered netconn is only kept there, send_tcp passes it on): read
     * here, written by opt_store; whether SO_SNDTIMEO is set is a flag
     * here (so a send reads the netconn's only then) */
    if (kind == OK_RCVTIMEO || (kind == OK_SNDTIMEO && !store)) {
        return (kind == OK_RCVTIMEO ? wisp_netconn_get_recvtimeout : wisp_netconn_get_sendtimeout)(sk->conn);
    }
    tbl_lock();
    switch (at >> 6) {
    case 1:
        if (flag != 0) {
            if (store) {
                *p = (uint8_t)(val != 0 ? (*p | flag) : (*p & ~flag));
            }
            val = (*p & flag) != 0;
        } else {
            if (store) {
                *p = (uint8_t)val;
            }
            val = *p;
        }
        break;
    case 2:
        if (store) {
            *(uint16_t *)(void *)p = (uint16_t)val;
        }
        val = *(uint16_t *)(void *)p;
        break;
#if WISP_TCP_SND_BUF > 0xffff || WISP_TCP_WND > 0xffff
    case 3: /* a wisp_sock_buf_t of 32 bits (priv/sockets.h) */
        if (store) {
            *(uint32_t *)(void *)p = val;
        }
        val = *(uint32_t *)(void *)p;
        break;
#endif
    default:
        break;
    }
    tbl_unlock();
    return val;
}

static uint32_t opt_get(struct wisp_sock *sk, unsigned kind)
{
    return opt_access(sk, kind, false, 0);
}

/* -------------------------------------------------- allocation and free */

/* Reserve a free entry (table lock held): NULL when the table is full. */
static struct wisp_sock *reserve_entry(struct wisp_sockets *t)
{
    unsigned i;
    for (i = 0; i < WISP_SOCKET_COUNT; i++) {
        struct wisp_sock *sk = &t->sock[i];
        if (sk->conn == NULL && !sk->f.reserved) {
            memset(sk, 0, sizeof(*sk));
            sk->f.reserved = 1;
            return sk;
        }
    }
    return NULL;
}

/* Bind a reserved entry to conn (table lock held). Returns its
 * descriptor. */
static WISP_NOINLINE int attach_entry(struct wisp_sock *sk, struct wisp_netconn *conn)
{
    int idx = sock_idx(g_socks, sk);
    /* the entry was zeroed by reserve_entry: ttl, sndbuf, rcvbuf, maxseg 0 */
    sk->conn = conn;
    sk->f.reserved = 0;
    sk->keepidle_s = WISP_TCP_KEEPIDLE_MS / 1000u;
    sk->keepintvl_s = WISP_TCP_KEEPINTVL_MS / 1000u;
    sk->keepcnt = WISP_TCP_KEEPCNT;
    sk->opts = WISP_TCP_CC_DEFAULT ? WISP_SOCK_O_CUBIC : 0u;
    sk->f.sendevent = !SK_STREAM(sk);
    conn->socket = (int16_t)idx;
    return idx + WISP_SOCKET_OFFSET;
}

/* Does closing sk reset its connection (SO_LINGER {1, 0} on a stream
 * socket that does not listen)? Table lock held. */
static bool sk_linger0(const struct wisp_sock *sk)
{
    return SK_STREAM(sk) && (sk->opts & WISP_SOCK_O_LINGER) && sk->linger_s == 0 && !sk->f.listening;
}

/* Last user gone: delete the netconn and release the entry. */
static void sock_free_entry(struct wisp_sock *sk)
{
    struct wisp_netconn *conn = sk->conn;
    bool abort_it;

    tbl_lock();
    abort_it = sk_linger0(sk);
    conn->socket = -1; /* events from now on find no socket */
    tbl_unlock();
    if (abort_it) {
        (void)wisp_netconn_abort(conn); /* SO_LINGER {1, 0}: reset instead of the orderly close */
    }
    if (sk->last.p != NULL) {
        if (SK_STREAM(sk)) {
            (void)wisp_netconn_pbuf_free(conn->api, sk->last.p);
        } else {
            wisp_netbuf_delete(sk->last.buf);
        }
        sk->last.p = NULL;
    }
    (void)wisp_netconn_delete(conn);
    tbl_lock();
    sk->conn = NULL;
    sk->f.closing = 0;
    sk->f.freeing = 0;
    sk->users = 0;
    tbl_unlock();
}

/* ------------------------------------------------------------- set-up */

wisp_err_t wisp_sockets_init(struct wisp_sockets *tbl, struct wisp_netconn_api *default_api)
{
    if (tbl == NULL) {
        return WISP_ERR_ARG;
    }
    if (g_socks != NULL) {
        return WISP_ERR_ALREADY;
    }
    memset(tbl, 0, sizeof(*tbl));
    if (wisp_sys_mutex_new(&tbl->lock) != WISP_OK) {
        return WISP_ERR_MEM;
    }
    tbl->default_api = default_api;
    g_socks = tbl;
    return WISP_OK;
}

int wisp_sockets_deinit(void)
{
    struct wisp_sockets *t = g_socks;
    int open_n = 0;
    unsigned i;
    if (t == NULL) {
        return 0;
    }
    for (i = 0; i < WISP_SOCKET_COUNT; i++) {
        struct wisp_sock *sk = &t->sock[i];
        if (sk->conn != NULL) {
            open_n++;
            sk->f.closing = 1;
            sk->f.freeing = 1;
            sock_free_entry(sk);
        }
    }
    g_socks = NULL;
    wisp_sys_mutex_free(&t->lock);
    return open_n;
}

int wisp_sockets_in_use(void)
{
    struct wisp_sockets *t = g_socks;
    int n = 0;
    unsigned i;
    if (t == NULL) {
        return 0;
    }
    tbl_lock();
    for (i = 0; i < WISP_SOCKET_COUNT; i++) {
        if (t->sock[i].conn != NULL || t->sock[i].f.reserved) {
            n++;
        }
    }
    tbl_unlock();
    return n;
}

int wisp_socket_errno(int s)
{
    struct wisp_sockets *t = g_socks;
    struct wisp_sock *sk;
    int e, r;
    if (t == NULL) {
        return -1;
    }
    tbl_lock();
    sk = lookup(t, s, &e);
    r = (sk != NULL) ? sk->last_err : -1;
    tbl_unlock();
    return r;
}

/* ------------------------------------------------------------ sockets */

int wisp_socket_on(struct wisp_netconn_api *api, int domain, int type, int protocol)
{
    struct wisp_sockets *t = g_socks;
    struct wisp_sock *sk;
    struct wisp_netconn *conn;
    enum wisp_netconn_type nct;
    int base = type & ~(WISP_SOCK_NONBLOCK | WISP_SOCK_CLOEXEC);
    int fd;

    if (t == NULL || api == NULL) {
        return set_errno(WISP_ENOSYS);
    }
    if (domain != WISP_AF_INET) {
        return set_errno(WISP_EAFNOSUPPORT);
    }
    switch (base) {
    case WISP_SOCK_STREAM:
        if (protocol != 0 && protocol != WISP_IPPROTO_TCP) {
            return set_errno(WISP_EPROTONOSUPPORT);
        }
        nct = WISP_NETCONN_TCP;
        break;
    case WISP_SOCK_DGRAM:
        if (protocol != 0 && protocol != WISP_IPPROTO_UDP) {
            return set_errno(WISP_EPROTONOSUPPORT);
        }
        nct = WISP_NETCONN_UDP;
        break;
    case WISP_SOCK_RAW:
        return set_errno(WISP_EPROTONOSUPPORT);
    default:
        return set_errno(WISP_EINVAL);
    }
    tbl_lock();
    sk = reserve_entry(t);
    tbl_unlock();
    if (sk == NULL) {
        return set_errno(WISP_EMFILE);
    }
    conn = wisp_netconn_new_with_proto_and_callback(api, nct, 0, sock_event);
    /* this layer counts its callers and serialises each direction itself */
    wisp_netconn_set_layered(conn);
    tbl_lock();
    if (conn == NULL) {
        sk->f.reserved = 0;
        tbl_unlock();
        return set_errno(WISP_ENOBUFS);
    }
    fd = attach_entry(sk, conn);
    sk->f.nonblock = (type & WISP_SOCK_NONBLOCK) != 0;
    tbl_unlock();
    if (type & WISP_SOCK_NONBLOCK) {
        wisp_netconn_set_nonblocking(conn, true);
    }
    return fd;
}

int wisp_socket(int domain, int type, int protocol)
{
    struct wisp_sockets *t = g_socks;
    /* no table: wisp_socket_on says ENOSYS */
    return wisp_socket_on(t != NULL ? t->default_api : NULL, domain, type, protocol);
}

/** An endpoint, parsed from a socket address. */
struct sock_ep {
    wisp_ipaddr_t ip;
    uint16_t port;
};

/* parse_sin and fill_sin are the one place that converts between socket
 * addresses and wisp_ipaddr_t (the rest of the socket layer and netconn
 * carry wisp_ipaddr_t); struct sockaddr_in6 gets its case here.
 * Parse a struct sockaddr_in into *ep: 0, or the errno when it is not
 * one. */
static int parse_sin(const struct wisp_sockaddr *name, wisp_socklen_t namelen, struct sock_ep *ep, bool allow_unspec)
{
    struct wisp_sockaddr_in sin;
    if (name == NULL) {
        return WISP_EFAULT;
    }
    if (namelen < sizeof(wisp_sa_family_t)) {
        return WISP_EINVAL;
    }
    memcpy(&sin.sin_family, &name->sa_family, sizeof sin.sin_family);
    if (allow_unspec && sin.sin_family == WISP_AF_UNSPEC) {
        ep->ip = wisp_ipaddr4(WISP_IP4_ANY);
        ep->port = 0;
        return 0;
    }
    if (sin.sin_family != WISP_AF_INET) {
        return WISP_EAFNOSUPPORT;
    }
    if (namelen < sizeof(struct wisp_sockaddr_in)) {
        return WISP_EINVAL;
    }
    memcpy(&sin, name, sizeof sin);
    ep->ip = wisp_ipaddr4(sin.sin_addr.s_addr);
    ep->port = wisp_ntohs(sin.sin_port);
    return 0;
}

/* Write ip:port as a struct sockaddr_in into name (truncated to *namelen,
 * which is set to the full size, as POSIX says). */
static void fill_sin(struct wisp_sockaddr *name, wisp_socklen_t *namelen, const wisp_ipaddr_t *ip, uint16_t port)
{
    struct wisp_sockaddr_in sin;
    size_t n;
    if (name == NULL || namelen == NULL) {
        return;
    }
    memset(&sin, 0, sizeof sin);
    sin.sin_family = WISP_AF_INET;
    sin.sin_port = wisp_htons(port);
    sin.sin_addr.s_addr = ip != NULL ? wisp_ipaddr_ip4(ip) : 0u;
    n = WISP_MIN((size_t)*namelen, sizeof sin);
    memcpy(name, &sin, n);
    *namelen = (wisp_socklen_t)sizeof sin;
}

static const uint8_t bind_errs[] = {EM(WISP_ERR_CLSD, WISP_EINVAL), EM_END(0)};

int wisp_bind(int s, const struct wisp_sockaddr *name, wisp_socklen_t namelen)
{
    struct wisp_sock *sk = sock_enter_lock(s);
    struct sock_ep ep;
    int e, pe;
    wisp_err_t err;
    if (sk == NULL) {
        return -1;
    }
    e = (sk->f.bound || sk->f.listening || sk->f.established || sk->f.connecting) ? WISP_EINVAL : 0;
    tbl_unlock();
    /* the address errors first, then EINVAL for a bound socket */
    pe = parse_sin(name, namelen, &ep, false);
    if (pe != 0 || e != 0) {
        return sock_fail_leave(sk, pe != 0 ? pe : e);
    }
    err = wisp_netconn_bind(sk->conn, &ep.ip, ep.port);
    if (err == WISP_OK) {
        tbl_lock();
        sk->f.bound = 1;
        sock_leave_locked(sk);
        return 0;
    }
    /* ERR_USE: EADDRINUSE; ERR_VAL: EINVAL for the any address */
    return sock_fail_leave(sk, err == WISP_ERR_VAL && !wisp_ipaddr_is_any(&ep.ip) ? WISP_EADDRNOTAVAIL
                                                                                  : err_errno(sk, err, bind_errs));
}

static const uint8_t listen_errs[] = {EM(WISP_ERR_MEM, WISP_ENOBUFS), EM(WISP_ERR_USE, WISP_EADDRINUSE),
                                       EM(WISP_ERR_CLSD, WISP_EINVAL), EM_END(WISP_EINVAL)};

int wisp_listen(int s, int backlog)
{
    struct wisp_sock *sk = sock_enter_lock(s);
    wisp_err_t err;
    int e;
    if (sk == NULL) {
        return -1;
    }
    e = !SK_STREAM(sk) ? WISP_EOPNOTSUPP : ((sk->f.established || sk->f.connecting) ? WISP_EINVAL : 0);
    tbl_unlock();
    if (e != 0) {
        return sock_fail_leave(sk, e);
    }
    backlog = backlog < 1 ? 1 : (backlog > 255 ? 255 : backlog);
    err = wisp_netconn_listen_with_backlog(sk->conn, (uint8_t)backlog);
    if (err == WISP_OK) {
        tbl_lock();
        sk->f.listening = 1;
        sk->f.bound = 1;
        sock_leave_locked(sk);
        return 0;
    }
    return sock_fail_leave(sk, err_errno(sk, err, listen_errs));
}

static int opt_store(struct wisp_sock *sk, unsigned kind, uint32_t val);

/* The options accept() passes on to the new connection's netconn (the
 * timeouts: stored there). */
static const uint8_t opt_inherit[] = {OK_RCVTIMEO, OK_SNDTIMEO, OK_NODELAY, OK_KEEPALIVE, OK_SNDBUF, OK_RCVBUF, OK_MAXSEG};

static const uint8_t accept_errs[] = {EM(WISP_ERR_WOULDBLOCK, WISP_EAGAIN), EM(WISP_ERR_TIMEOUT, WISP_EAGAIN),
                                       EM(WISP_ERR_CLSD, WISP_EINVAL),       EM(WISP_ERR_MEM, WISP_ENOBUFS),
                                       EM(WISP_ERR_ABRT, WISP_ECONNABORTED), EM(WISP_ERR_RST, WISP_ECONNABORTED),
                                       EM_END(0)};

int wisp_accept(int s, struct wisp_sockaddr *addr, wisp_socklen_t *addrlen)
{
    struct wisp_sock *sk = sock_enter_lock(s);
    struct wisp_sock *nsk;
    struct wisp_netconn *nc = NULL;
    wisp_ipaddr_t ip;
    uint16_t port = 0;
    wisp_err_t err;
    int fd, early;
    bool listening, apply_ka;
    unsigned i;

    if (sk == NULL) {
        return -1;
    }
    listening = sk->f.listening != 0;
    tbl_unlock();
    if (!listening) {
        return sock_fail_leave(sk, SK_STREAM(sk) ? WISP_EINVAL : WISP_EOPNOTSUPP);
    }
    err = wisp_netconn_accept(sk->conn, &nc);
    if (err != WISP_OK) {
        return sock_fail_leave(sk, err_errno(sk, err, accept_errs));
    }
    tbl_lock();
    nsk = reserve_entry(g_socks);
    if (nsk == NULL) {
        /* No descriptor for it: reset the connection (the peer learns at
         * once) and report EMFILE; the listener stays usable. */
        tbl_unlock();
        (void)wisp_netconn_abort(nc);
        (void)wisp_netconn_delete(nc);
        return sock_fail_leave(sk, WISP_EMFILE);
    }
    early = (nc->socket < -1) ? (-1 - nc->socket) : 0;
    fd = attach_entry(nsk, nc);
    nsk->rcvevent = (int16_t)early;
    nsk->f.sendevent = 1;
    nsk->f.established = 1;
    nsk->f.bound = 1;
    /* options inherited from the listener (as BSD does), tos .. linger_s
     * at once */
    memcpy(&nsk->tos, &sk->tos, offsetof(struct wisp_sock, rcv_bytes) - offsetof(struct wisp_sock, tos));
    apply_ka = (sk->opts & WISP_SOCK_O_KEEPALIVE) || sk->keepidle_s != WISP_TCP_KEEPIDLE_MS / 1000u ||
               sk->keepintvl_s != WISP_TCP_KEEPINTVL_MS / 1000u || sk->keepcnt != WISP_TCP_KEEPCNT;
    tbl_unlock();
    /* what the listener's netconn does not pass on itself (its DSCP, TTL
     * and congestion control it does), where not the default */
    for (i = 0; i < sizeof opt_inherit; i++) {
        unsigned k = opt_inherit[i];
        uint32_t v = opt_get(sk, k);
        if (k == OK_KEEPALIVE ? apply_ka : v != 0) {
            (void)opt_store(nsk, k, v);
        }
    }
    if (addr != NULL && addrlen != NULL) {
        ip = wisp_ipaddr4(WISP_IP4_ANY);
        (void)wisp_netconn_getaddr(nc, &ip, &port, 0);
        fill_sin(addr, addrlen, &ip, port);
    }
    sock_leave(sk);
    return fd;
}

/* A TCP connect's errors; a UDP one's are the tail of them. */
static const uint8_t connect_errs[] = {EM(WISP_ERR_RST, WISP_ECONNREFUSED), EM(WISP_ERR_USE, WISP_EADDRNOTAVAIL),
                                       EM(WISP_ERR_CLSD, WISP_ECONNABORTED), EM(WISP_ERR_MEM, WISP_ENOBUFS),
                                       EM(WISP_ERR_RTE, WISP_ENETUNREACH), EM_END(0)};
#define connect_udp_errs (connect_errs + 8)

int wisp_connect(int s, const struct wisp_sockaddr *name, wisp_socklen_t namelen)
{
    struct wisp_sock *sk = sock_enter(s);
    struct sock_ep ep;
    wisp_err_t err;
    int e;
    bool nonblock;

    if (sk == NULL) {
        return -1;
    }
    e = parse_sin(name, namelen, &ep, !SK_STREAM(sk));
    if (e != 0) {
        return sock_fail_leave(sk, e);
    }
    if (!SK_STREAM(sk)) {
        /* AF_UNSPEC: dissolve the association (POSIX) */
        bool unspec = name->sa_family == WISP_AF_UNSPEC;
        err = unspec ? wisp_netconn_disconnect(sk->conn) : wisp_netconn_connect(sk->conn, &ep.ip, ep.port);
        if (err != WISP_OK) {
            return sock_fail_leave(sk, err_errno(sk, err, connect_udp_errs));
        }
        tbl_lock();
        sk->f.established = !unspec;
        if (!unspec) {
            sk->f.bound = 1;
        }
        sock_leave_locked(sk);
        return 0;
    }
    tbl_lock();
    e = sk->f.listening ? WISP_EISCONN : (sk->f.connecting ? WISP_EALREADY : (sk->f.established ? WISP_EISCONN : 0));
    if (e == 0 && sk->f.dead) {
        e = WISP_ECONNABORTED; /* a failed connect: the socket cannot be reused (BSD) */
    }
    nonblock = sk->f.nonblock != 0;
    if (e == 0 && nonblock) {
        sk->f.connecting = 1; /* before the call: the SENDPLUS may come first */
    }
    tbl_unlock();
    if (e != 0) {
        return sock_fail_leave(sk, e);
    }
    err = wisp_netconn_connect(sk->conn, &ep.ip, ep.port);
    /* OK: 0; INPROGRESS: EINPROGRESS; ALREADY, ISCONN, TIMEOUT, ABRT, VAL,
     * *UNREACH: as mapped */
    e = err_errno(sk, err, connect_errs);
    tbl_lock();
    if (err == WISP_OK || err == WISP_ERR_INPROGRESS) {
        sk->f.bound = 1;
        if (err == WISP_OK) {
            sk->f.connecting = 0;
            sk->f.established = 1;
        }
    } else {
        sk->f.connecting = 0;
        if (sk->f.closing) {
            e = WISP_EBADF;
        } else if (is_conn_err(err)) {
            /* the connection failed (reset, timeout, abort; SYN retries ran
             * out after ICMP unreachable, RFC 1122 §4.2.3.9): the socket
             * cannot be reused (BSD), the error is reported here */
            sk->f.errevent = 0;
            sk->f.dead = 1;
        }
    }
    if (e != 0) {
        sk->last_err = (uint8_t)e;
    }
    sock_leave_locked(sk);
    return e != 0 ? set_errno(e) : 0;
}

/* ---------------------------------------------------- rx / tx ownership */

/** The state a reading / writing call needs, read under the table lock
 *  when it enters (so the fast path takes the lock once on entry and once
 *  on leaving). */
struct sock_snap {
    struct wisp_sock_flags f;
    uint8_t opts; /**< WISP_SOCK_O_* (send: SO_SNDTIMEO set?) */
};

/* Does a thread read (rx) / write this socket now? Set / clear that (table
 * lock held). One thread at a time per direction. */
static bool dir_busy(const struct wisp_sock *sk, bool rx)
{
    return rx ? sk->f.rx_busy : sk->f.tx_busy;
}

static void dir_set_busy(struct wisp_sock *sk, bool rx, bool on)
{
    if (rx) {
        sk->f.rx_busy = on;
    } else {
        sk->f.tx_busy = on;
    }
}

/* The wait loop of select and poll (below), also the wait for a turn. */
typedef int (*sel_scan_fn)(struct wisp_sockets *t, void *ctx);
static int sel_run(struct wisp_select_wait *w, uint32_t ms, sel_scan_fn scan, void *ctx);

struct turn_ctx {
    struct wisp_sock *sk;
    bool rx;
    struct sock_snap *snap;
};

/* The scan of a thread waiting for its turn (lock held): 1 when it took
 * it, 0 while another thread reads (writes), -EBADF once close() ran. */
static int turn_scan(struct wisp_sockets *t, void *arg)
{
    struct turn_ctx *c = (struct turn_ctx *)arg;
    WISP_UNUSED(t);
    if (c->sk->f.closing) {
        return -WISP_EBADF;
    }
    if (dir_busy(c->sk, c->rx)) {
        return 0;
    }
    dir_set_busy(c->sk, c->rx, true);
    c->snap->f = c->sk->f; /* the state a reading / writing call looks at */
    c->snap->opts = c->sk->opts;
    return 1;
}

/* Enter fd for reading (rx) or writing (tx): one thread at a time per
 * direction. The common case -- the socket is open and nobody else reads
 * (writes) it -- takes the table lock once; a second reader (writer)
 * waits for its turn within its timeout (SO_RCVTIMEO / SO_SNDTIMEO),
 * woken through the waiter list when the turn is free. NULL with errno
 * set. */
static struct wisp_sock *sock_enter_dir(int fd, bool rx, bool dontwait, struct sock_snap *snap)
{
    struct wisp_select_wait w;
    struct turn_ctx c;
    uint32_t timeo;
    int n;

    c.sk = sock_enter_lock(fd);
    if (c.sk == NULL) {
        return NULL;
    }
    c.rx = rx;
    c.snap = snap;
    n = turn_scan(g_socks, &c);
    dontwait = dontwait || c.sk->f.nonblock;
    tbl_unlock();
    if (n > 0) {
        return c.sk;
    }
    timeo = opt_get(c.sk, rx ? OK_RCVTIMEO : OK_SNDTIMEO);
    memset(&w, 0, sizeof w);
    w.watch = c.sk;
    /* SO_RCVTIMEO / SO_SNDTIMEO 0: no limit */
    n = sel_run(&w, dontwait ? 0u : (timeo == 0 ? WISP_SYS_FOREVER : timeo), turn_scan, &c);
    if (n > 0) {
        return c.sk;
    }
    (void)sock_fail_leave(c.sk, n < 0 ? -n : WISP_EAGAIN);
    return NULL;
}

/* Enter s for a vectored read (rx) / write: the iovec is checked first
 * (EINVAL, after the socket check, as Linux does). NULL with errno set. */
static struct wisp_sock *sock_enter_iov(int s, const struct wisp_iovec *iov, int iovcnt, int flags, bool rx,
                                        struct sock_snap *snap)
{
    if (iovcnt < 0 || iovcnt > WISP_SOCKET_IOV_MAX || (iov == NULL && iovcnt > 0)) {
        (void)sock_fail(s, WISP_EINVAL);
        return NULL;
    }
    return sock_enter_dir(s, rx, (flags & WISP_MSG_DONTWAIT) != 0, snap);
}

/* Leave after reading / writing; e != 0 is the call's error (recorded). */
static WISP_NOINLINE void sock_leave_dir(struct wisp_sock *sk, bool rx, int e)
{
    tbl_lock();
    dir_set_busy(sk, rx, false);
    if (rx) {
        sk->f.has_last = sk->last.p != NULL; /* either member: a pointer or NULL */
    }
    if (e != 0) {
        sk->last_err = (uint8_t)e;
    }
    wake_waiters(sk);
    sock_leave_locked(sk);
}

/* ------------------------------------------------------------- receive */

/* Scatter state over an iovec array. */
struct iov_pos {
    const struct wisp_iovec *iov;
    int n, i;
    size_t off;
};

static WISP_NOINLINE size_t iov_total(const struct wisp_iovec *iov, int n)
{
    size_t tot = 0;
    int i;
    for (i = 0; i < n; i++) {
        if (iov[i].iov_len > (size_t)PTRDIFF_MAX - tot) {
            return (size_t)PTRDIFF_MAX;
        }
        tot += iov[i].iov_len;
    }
    return tot;
}

/* Copy up to len bytes of chain p from offset off into the iovec; returns
 * the bytes copied. */
static size_t copy_to_iov(const struct wisp_pbuf *p, uint32_t off, size_t len, struct iov_pos *ip)
{
    size_t done = 0;
    while (p != NULL && done < len && ip->i < ip->n) {
        size_t room = ip->iov[ip->i].iov_len - ip->off, n;
        if (off >= p->len) {
            off -= p->len; /* on to the buffer holding off */
            p = p->next;
            continue;
        }
        if (room == 0) {
            ip->i++; /* on to the next part with room */
            ip->off = 0;
            continue;
        }
        n = WISP_MIN(WISP_MIN(room, (size_t)p->len - off), len - done);
        memcpy((uint8_t *)ip->iov[ip->i].iov_base + ip->off, p->payload + off, n);
        done += n;
        ip->off += n;
        off += (uint32_t)n;
    }
    return done;
}

/* Set rd_eof (table lock). */
static void mark_eof(struct wisp_sock *sk)
{
    tbl_lock();
    sk->f.rd_eof = 1;
    tbl_unlock();
}

static const uint8_t recv_tcp_errs[] = {EM(WISP_ERR_MEM, WISP_ENOBUFS), EM_END(0)};

/* recv_tcp got no data from netconn (err): the errno the call reports, or
 * 0 -- end of stream, or (have_data) the call returns the data it copied
 * and a connection error stays pending for the next call. */
static WISP_NOINLINE int recv_tcp_fail(struct wisp_sock *sk, wisp_err_t err, bool have_data, const struct sock_snap *snap)
{
    int e = 0;
    bool conn = false;
    switch (err) {
    case WISP_ERR_WOULDBLOCK:
        e = WISP_EAGAIN;
        break;
    case WISP_ERR_TIMEOUT:
        /* our SO_RCVTIMEO, or the connection timed out (retransmissions
         * exhausted: a connection error, and the connection is dead) */
        if (!snap->f.nonblock && !sk_flags(sk).dead && wisp_netconn_get_recvtimeout(sk->conn) != 0) {
            e = WISP_EAGAIN;
            break;
        }
        conn = true;
        break;
    case WISP_ERR_RST:
    case WISP_ERR_ABRT:
        conn = true;
        break;
    case WISP_ERR_CLSD:
        break; /* end of stream, SHUT_RD, or dead after an error */
    default: /* ERR_MEM: ENOBUFS; ERR_CONN: ENOTCONN */
        return have_data ? 0 : err_errno(sk, err, recv_tcp_errs);
    }
    if ((conn || err == WISP_ERR_CLSD) && sock_is_closing(sk)) {
        return WISP_EBADF;
    }
    if (have_data) {
        if (conn) {
            (void)conn_err(sk, err, true); /* after the data, as Linux: next call */
        }
        return 0;
    }
    if (conn) {
        /* netconn handed the connection error to this call */
        e = conn_err(sk, err, false);
    } else {
        /* No data now (EAGAIN) or no more (0): a pending connection error
         * comes first -- the one a send took from netconn but could not
         * report, or the one still in netconn (recv after the data). */
        int pe = take_pending_err(sk);
        if (pe != 0) {
            e = pe;
        } else if (e != 0) {
            return e;
        }
    }
    mark_eof(sk); /* reported once, or the end of stream (or SHUT_RD): from now on end of stream (Linux) */
    return e;
}

/* TCP receive of up to total bytes into pos. Returns bytes (>= 0) or -errno. */
static wisp_ssize_t recv_tcp(struct wisp_sock *sk, struct iov_pos *pos, size_t total, int flags,
                             const struct sock_snap *snap)
{
    struct rx_batch b;
    size_t copied = 0;
    int e = 0;
    /* rd_eof is written by the reading thread only (this one): the entry
     * snapshot stays valid while we read */
    bool eof = snap->f.rd_eof != 0, dontwait = (flags & WISP_MSG_DONTWAIT) != 0;

    b.n = 0;
    b.recved = 0;
    while (copied < total) {
        size_t n;
        if (sk->last.p == NULL) {
            struct wisp_pbuf *p = NULL;
            bool block = !dontwait && (copied == 0 || (flags & WISP_MSG_WAITALL));
            uint8_t nflags = block ? WISP_NETCONN_NOAUTORCVD : WISP_NETCONN_NOAUTORCVD | WISP_NETCONN_DONTBLOCK;
            wisp_err_t err;
            if (eof) {
                break;
            }
            if (block) {
                rx_flush(sk, &b); /* about to wait: give the window back first */
            }
            err = wisp_netconn_recv_tcp_pbuf_flags(sk->conn, &p, nflags);
            /* the mailbox ran dry: give the window back now, which also
             * posts what the stack kept for us meanwhile (short segments
             * refused by the mailbox, netconn.c nc_rx_take), and look
             * once more */
            if (err == WISP_ERR_WOULDBLOCK && !block && (b.n > 0 || b.recved > 0)) {
                rx_flush(sk, &b);
                err = wisp_netconn_recv_tcp_pbuf_flags(sk->conn, &p, nflags);
            }
            if (err != WISP_OK) {
                e = recv_tcp_fail(sk, err, copied > 0, snap);
                break;
            }
            sk->last.p = p;
            sk->lastoff = 0;
        }
        n = copy_to_iov(sk->last.p, sk->lastoff, total - copied, pos);
        copied += n;
        if (flags & WISP_MSG_PEEK) {
            break;
        }
        sk->lastoff = (uint16_t)(sk->lastoff + n);
        b.recved += (uint32_t)n;
        if (sk->lastoff >= sk->last.p->tot_len) {
            b.done[b.n++] = sk->last.p;
            sk->last.p = NULL;
            sk->lastoff = 0;
            if (b.n == SOCK_FREE_BATCH) {
                rx_flush(sk, &b);
            }
        }
    }
    rx_flush(sk, &b);
    if (e != 0 && copied == 0) {
        return -(wisp_ssize_t)e;
    }
    return (wisp_ssize_t)copied;
}

static const uint8_t recv_udp_errs[] = {EM(WISP_ERR_TIMEOUT, WISP_EAGAIN), EM(WISP_ERR_CLSD, 0), EM_END(0)};

/* UDP receive into pos (total: its room). Returns bytes (>= 0) or -errno. Blocking waits
 * happen inside netconn (its receive timeout is SO_RCVTIMEO); close and
 * shutdown(SHUT_RD) wake them by closing / shutting the netconn. */
static wisp_ssize_t recv_udp(struct wisp_sock *sk, struct iov_pos *pos, size_t total, int flags,
                             struct wisp_sockaddr *from, wisp_socklen_t *fromlen, int *msg_flags,
                             const struct sock_snap *snap)
{
    struct wisp_netbuf *buf = sk->last.buf;
    size_t copied = 0, dlen;

    if (buf == NULL) {
        wisp_err_t err;
        if (snap->f.rd_shut) {
            return 0;
        }
        err = wisp_netconn_recv_udp_raw_netbuf_flags(
            sk->conn, &buf, (flags & WISP_MSG_DONTWAIT) ? WISP_NETCONN_DONTBLOCK : WISP_NETCONN_NOFLAG);
        if (err != WISP_OK) {
            /* ERR_WOULDBLOCK: EAGAIN; ERR_CLSD: SHUT_RD, end of stream */
            return -(wisp_ssize_t)err_errno(sk, err, recv_udp_errs);
        }
    }
    sk->last.buf = NULL;
    dlen = wisp_netbuf_len(buf);
    if (buf->p != NULL) {
        copied = copy_to_iov(buf->p, 0, WISP_MIN(total, dlen), pos);
    }
    if (dlen > copied && msg_flags != NULL) {
        *msg_flags |= WISP_MSG_TRUNC;
    }
    fill_sin(from, fromlen, &buf->addr, buf->port);
    if (flags & WISP_MSG_PEEK) {
        sk->last.buf = buf;
    } else {
        wisp_netbuf_delete(buf);
    }
    return (wisp_ssize_t)((flags & WISP_MSG_TRUNC) ? dlen : copied);
}

/* Leave after reading (rx) / writing with result r (bytes, or -errno):
 * the call's return value (-1 with errno set). */
static WISP_NOINLINE wisp_ssize_t sock_leave_dir_r(struct wisp_sock *sk, bool rx, wisp_ssize_t r)
{
    int e = r < 0 ? (int)-r : 0;
    sock_leave_dir(sk, rx, e);
    return e != 0 ? set_errno(e) : r;
}

static wisp_ssize_t do_recv(int s, const struct wisp_iovec *iov, int iovcnt, int flags, struct wisp_sockaddr *from,
                            wisp_socklen_t *fromlen, int *msg_flags)
{
    struct sock_snap snap;
    struct wisp_sock *sk = sock_enter_iov(s, iov, iovcnt, flags, true, &snap);
    wisp_ssize_t r = 0;
    struct iov_pos pos; /* where the data goes: one set-up for both kinds */
    size_t total;

    if (sk == NULL) {
        return -1;
    }
    total = iov_total(iov, iovcnt);
    pos.iov = iov;
    pos.n = iovcnt;
    pos.i = 0;
    pos.off = 0;
    if (flags & WISP_MSG_OOB) {
        r = -(wisp_ssize_t)WISP_EOPNOTSUPP;
    } else if (!SK_STREAM(sk)) {
        r = recv_udp(sk, &pos, total, flags, from, fromlen, msg_flags, &snap);
    } else if (snap.f.listening || (!snap.f.established && !snap.f.connecting && !snap.f.dead)) {
        r = -(wisp_ssize_t)WISP_ENOTCONN;
    } else if (!snap.f.rd_shut || sk->last.p != NULL) {
        r = recv_tcp(sk, &pos, total, flags, &snap);
        if (r >= 0 && fromlen != NULL) {
            *fromlen = 0; /* connected stream: no address (as Linux) */
        }
    }
    return sock_leave_dir_r(sk, true, r);
}

wisp_ssize_t wisp_recv(int s, void *mem, size_t len, int flags)
{
    /* NULL with room: the receive of nothing, then EFAULT when it succeeds */
    bool fault = mem == NULL && len > 0;
    struct wisp_iovec v;
    wisp_ssize_t r;
    v.iov_base = mem;
    v.iov_len = fault ? 0 : len;
    r = do_recv(s, &v, 1, flags, NULL, NULL, NULL);
    return (fault && r >= 0) ? set_errno(WISP_EFAULT) : r;
}

wisp_ssize_t wisp_recvfrom(int s, void *mem, size_t len, int flags, struct wisp_sockaddr *from,
                           wisp_socklen_t *fromlen)
{
    struct wisp_iovec v;
    v.iov_base = mem;
    v.iov_len = (mem == NULL) ? 0 : len;
    if (mem == NULL && len > 0) {
        return sock_fail(s, WISP_EFAULT);
    }
    return do_recv(s, &v, 1, flags, from, fromlen, NULL);
}

wisp_ssize_t wisp_recvmsg(int s, struct wisp_msghdr *msg, int flags)
{
    wisp_ssize_t r;
    int mflags = 0;
    if (msg == NULL || msg->msg_iovlen > (size_t)WISP_SOCKET_IOV_MAX) {
        return sock_fail(s, msg == NULL ? WISP_EFAULT : WISP_EMSGSIZE);
    }
    r = do_recv(s, msg->msg_iov, (int)msg->msg_iovlen, flags, (struct wisp_sockaddr *)msg->msg_name,
                msg->msg_name != NULL ? &msg->msg_namelen : NULL, &mflags);
    if (r >= 0) {
        msg->msg_controllen = 0;
        msg->msg_flags = mflags;
    }
    return r;
}

wisp_ssize_t wisp_read(int s, void *mem, size_t len)
{
    return wisp_recv(s, mem, len, 0);
}

wisp_ssize_t wisp_readv(int s, const struct wisp_iovec *iov, int iovcnt)
{
    return do_recv(s, iov, iovcnt, 0, NULL, NULL, NULL);
}

/* ---------------------------------------------------------------- send */

/* netconn write flags of a send with flags (the socket's own
 * non-blocking mode included: the write is layered, sockets.c keeps it). */
static uint8_t tcp_write_flags(int flags, const struct sock_snap *snap)
{
    uint8_t f = WISP_NETCONN_COPY;
    if ((flags & WISP_MSG_DONTWAIT) || snap->f.nonblock) {
        f |= WISP_NETCONN_DONTBLOCK;
    }
    if (flags & WISP_MSG_MORE) {
        f |= WISP_NETCONN_MORE;
    }
    return f;
}

/* A TCP write returned err (or wrote less than asked with WISP_OK) after
 * sent bytes of the call: what the call returns, bytes or -errno. Once
 * close() woke us the descriptor is gone (EBADF, see sockets.h), bytes
 * written or not; else a partial write counts (non-blocking, SO_SNDTIMEO,
 * or the connection failed after some bytes: the error is the next
 * call's, as Linux). The state is read once for both. */
static wisp_ssize_t tcp_sent(struct wisp_sock *sk, wisp_err_t err, size_t sent)
{
    struct wisp_sock_flags f = sk_flags(sk);
    int e;
    if (f.closing) {
        return -(wisp_ssize_t)WISP_EBADF;
    }
    if (err == WISP_OK || sent > 0) {
        if (is_conn_err(err)) {
            (void)conn_err(sk, err, true);
        }
        return (wisp_ssize_t)sent;
    }
    switch (err) {
    case WISP_ERR_WOULDBLOCK:
    case WISP_ERR_INPROGRESS: e = WISP_EAGAIN; break;
    case WISP_ERR_CLSD:
        /* the connection is gone: its error first, if not reported yet
         * (a recv or a partial send took it from netconn); EPIPE once it
         * was, and after shutdown(SHUT_WR) (Linux) */
        e = take_pending_err(sk);
        if (e == 0) {
            e = WISP_EPIPE;
        }
        break;
    case WISP_ERR_CONN:
        e = (f.wr_shut || f.established) ? WISP_EPIPE : (f.connecting ? WISP_EAGAIN : WISP_ENOTCONN);
        break;
    case WISP_ERR_RST:
    case WISP_ERR_ABRT:
    case WISP_ERR_TIMEOUT: e = conn_err(sk, err, false); break;
    default: e = err_errno(sk, err, recv_tcp_errs); break; /* ERR_MEM: ENOBUFS */
    }
    return -(wisp_ssize_t)e;
}

/* TCP send of the iovec. Returns bytes or -errno. */
static wisp_ssize_t send_tcp(struct wisp_sock *sk, const struct wisp_iovec *iov, int iovcnt, int flags,
                             const struct sock_snap *snap)
{
    size_t sent = 0;
    int i;
    uint8_t base = tcp_write_flags(flags, snap); /* MSG_MORE: every part's */
    /* SO_SNDTIMEO, kept in the netconn: read there only when set (no API
     * lock round trip per send) */
    uint32_t timeo = (snap->opts & WISP_SOCK_O_SNDTIMEO) ? wisp_netconn_get_sendtimeout(sk->conn) : 0u;
    for (i = 0; i < iovcnt; i++) {
        size_t written; /* set by netconn in every case */
        uint8_t f = base;
        wisp_err_t err;
        /* (an empty part: netconn writes nothing and says OK) */
        if (i + 1 < iovcnt) {
            f |= WISP_NETCONN_MORE;
        }
        err = wisp_netconn_write_layered(sk->conn, iov[i].iov_base, iov[i].iov_len, f, timeo, &written);
        sent += written;
        if (err != WISP_OK || written < iov[i].iov_len) {
            return tcp_sent(sk, err, sent); /* non-blocking or SO_SNDTIMEO: partial */
        }
    }
    return (wisp_ssize_t)sent;
}

static const uint8_t send_udp_errs[] = {EM(WISP_ERR_MEM, WISP_ENOBUFS), EM(WISP_ERR_CONN, WISP_EDESTADDRREQ),
                                        EM(WISP_ERR_RTE, WISP_ENETUNREACH),
                                        EM(WISP_ERR_VAL, WISP_EACCES), /* broadcast without SO_BROADCAST */
                                        EM(WISP_ERR_CLSD, WISP_EPIPE), EM_END(0)};

/* UDP send of the iovec as one datagram, to to (NULL: the connected
 * peer). Returns bytes or -errno. */
static wisp_ssize_t send_udp(struct wisp_sock *sk, const struct wisp_iovec *iov, int iovcnt, const struct sock_ep *to)
{
    struct wisp_netbuf *buf = NULL;
    size_t total = iov_total(iov, iovcnt);
    wisp_err_t err = WISP_OK;
    int i;

    if (total > SOCK_UDP_MAX) {
        return -(wisp_ssize_t)WISP_EMSGSIZE;
    }
    i = 0;
    do {
        /* empty parts are left out; nothing at all (an empty iovec, or
         * only empty parts): one empty datagram */
        const void *base = "";
        size_t len = 0;
        struct wisp_netbuf *nb;
        if (i < iovcnt) {
            base = iov[i].iov_base;
            len = iov[i].iov_len;
        }
        if (len == 0 && (buf != NULL || i + 1 < iovcnt)) {
            continue;
        }
        nb = wisp_netbuf_new(sk->conn->api);
        if (nb == NULL) {
            err = WISP_ERR_MEM;
            break;
        }
        err = wisp_netbuf_ref(nb, base, (uint16_t)len);
        if (err != WISP_OK) {
            wisp_netbuf_delete(nb);
            break;
        }
        if (buf == NULL) {
            buf = nb;
        } else {
            wisp_netbuf_chain(buf, nb);
        }
    } while (++i < iovcnt);
    if (err == WISP_OK) {
        err = (to != NULL) ? wisp_netconn_sendto(sk->conn, buf, &to->ip, to->port) : wisp_netconn_send(sk->conn, buf);
    }
    wisp_netbuf_delete(buf);
    /* ERR_BUF: ENOBUFS; ERR_REFUSED: ECONNREFUSED (ICMP, earlier datagram) */
    return err == WISP_OK ? (wisp_ssize_t)total : -(wisp_ssize_t)err_errno(sk, err, send_udp_errs);
}

static wisp_ssize_t do_send(int s, const struct wisp_iovec *iov, int iovcnt, int flags, const struct wisp_sockaddr *to,
                            wisp_socklen_t tolen)
{
    struct sock_snap snap;
    struct wisp_sock *sk = sock_enter_iov(s, iov, iovcnt, flags, false, &snap);
    wisp_ssize_t r;
    struct sock_ep ep;
    int e = 0;

    if (sk == NULL) {
        return -1;
    }
    if (flags & WISP_MSG_OOB) {
        r = -(wisp_ssize_t)WISP_EOPNOTSUPP;
    } else if (snap.f.wr_shut) {
        r = -(wisp_ssize_t)WISP_EPIPE;
    } else if (SK_STREAM(sk)) {
        r = snap.f.listening ? -(wisp_ssize_t)WISP_ENOTCONN : send_tcp(sk, iov, iovcnt, flags, &snap);
    } else if (to != NULL && (e = parse_sin(to, tolen, &ep, false)) != 0) {
        r = -(wisp_ssize_t)e;
    } else if (to != NULL && wisp_ipaddr_is4(&ep.ip) && wisp_ipaddr_ip4(&ep.ip) == WISP_IP4_BCAST &&
               !opt_get(sk, OK_BROADCAST)) {
        r = -(wisp_ssize_t)WISP_EACCES; /* SO_BROADCAST not set (POSIX, Linux) */
    } else {
        r = send_udp(sk, iov, iovcnt, to != NULL ? &ep : NULL);
    }
    return sock_leave_dir_r(sk, false, r);
}

/* A send of one buffer (send, sendto). */
static wisp_ssize_t send_one(int s, const void *data, size_t size, int flags, const struct wisp_sockaddr *to,
                             wisp_socklen_t tolen)
{
    struct wisp_iovec v;
    if (data == NULL && size > 0) {
        return sock_fail(s, WISP_EFAULT);
    }
    v.iov_base = (void *)(uintptr_t)data;
    v.iov_len = size;
    return do_send(s, &v, 1, flags, to, tolen);
}

wisp_ssize_t wisp_send(int s, const void *data, size_t size, int flags)
{
    /* one path for every send: a TCP write of one part goes through
     * send_tcp straight to netconn_write_layered as well */
    return send_one(s, data, size, flags, NULL, 0);
}

wisp_ssize_t wisp_sendto(int s, const void *data, size_t size, int flags, const struct wisp_sockaddr *to,
                         wisp_socklen_t tolen)
{
    return send_one(s, data, size, flags, to, tolen);
}

wisp_ssize_t wisp_sendmsg(int s, const struct wisp_msghdr *msg, int flags)
{
    if (msg == NULL || msg->msg_iovlen > (size_t)WISP_SOCKET_IOV_MAX) {
        return sock_fail(s, msg == NULL ? WISP_EFAULT : WISP_EMSGSIZE);
    }
    return do_send(s, msg->msg_iov, (int)msg->msg_iovlen, flags, (const struct wisp_sockaddr *)msg->msg_name,
                   msg->msg_namelen);
}

wisp_ssize_t wisp_write(int s, const void *data, size_t size)
{
    return wisp_send(s, data, size, 0);
}

wisp_ssize_t wisp_writev(int s, const struct wisp_iovec *iov, int iovcnt)
{
    return do_send(s, iov, iovcnt, 0, NULL, 0);
}

/* ------------------------------------------------------ shutdown/close */

int wisp_shutdown(int s, int how)
{
    struct wisp_sock *sk = sock_enter_lock(s); /* the state read while entering */
    bool rx, tx, connected;
    wisp_err_t err = WISP_OK;
    if (sk == NULL) {
        return -1;
    }
    connected = sk->f.established || sk->f.dead;
    tbl_unlock();
    if (how != WISP_SHUT_RD && how != WISP_SHUT_WR && how != WISP_SHUT_RDWR) {
        return sock_fail_leave(sk, WISP_EINVAL);
    }
    rx = how != WISP_SHUT_WR;
    tx = how != WISP_SHUT_RD;
    if (!connected) {
        return sock_fail_leave(sk, WISP_ENOTCONN);
    }
    if (SK_STREAM(sk) || rx) {
        /* TCP: FIN and / or no more receiving; UDP: readers blocked in
         * the netconn wake (SHUT_WR alone has nothing to send there). */
        err = wisp_netconn_shutdown(sk->conn, rx, SK_STREAM(sk) && tx);
    }
    tbl_lock();
    if (rx) {
        sk->f.rd_shut = 1;
        if (!SK_STREAM(sk)) {
            sk->f.rd_eof = 1;
        }
    }
    if (tx) {
        sk->f.wr_shut = 1;
    }
    wake_waiters(sk);
    tbl_unlock();
    if (err != WISP_OK && err != WISP_ERR_CONN && err != WISP_ERR_CLSD) {
        return sock_fail_leave(sk, wisp_err_to_errno(err));
    }
    sock_leave(sk);
    return 0;
}

int wisp_close(int s)
{
    struct wisp_sock *sk = sock_enter_lock(s);
    bool others, linger0;
    if (sk == NULL) {
        return -1;
    }
    sk->f.closing = 1;
    others = sk->users > 1;
    linger0 = sk_linger0(sk);
    wake_waiters(sk);
    tbl_unlock();
    if (others) {
        /* Threads blocked inside netconn calls on it (recv, accept, send,
         * connect): closing the netconn wakes them (ERR_CLSD) and makes
         * later calls fail at once; the last one to leave deletes it.
         * With SO_LINGER {1, 0} the connection is reset instead. */
        (void)(linger0 ? wisp_netconn_abort(sk->conn) : wisp_netconn_close(sk->conn));
    }
    sock_leave(sk);
    return 0;
}

/* ----------------------------------------------------------- addresses */

static int get_name(int s, struct wisp_sockaddr *name, wisp_socklen_t *namelen, uint8_t local)
{
    struct wisp_sock *sk = sock_enter(s);
    wisp_ipaddr_t ip;
    uint16_t port = 0;
    wisp_err_t err;
    if (sk == NULL) {
        return -1;
    }
    if (name == NULL || namelen == NULL) {
        return sock_fail_leave(sk, WISP_EFAULT);
    }
    ip = wisp_ipaddr4(WISP_IP4_ANY);
    err = wisp_netconn_getaddr(sk->conn, &ip, &port, local);
    if (err != WISP_OK) {
        if (!local) {
            return sock_fail_leave(sk, WISP_ENOTCONN);
        }
        ip = wisp_ipaddr4(WISP_IP4_ANY);
        port = 0;
    }
    if (!local && !SK_STREAM(sk) && port == 0) {
        return sock_fail_leave(sk, WISP_ENOTCONN);
    }
    fill_sin(name, namelen, &ip, port);
    sock_leave(sk);
    return 0;
}

int wisp_getsockname(int s, struct wisp_sockaddr *name, wisp_socklen_t *namelen)
{
    return get_name(s, name, namelen, 1);
}

int wisp_getpeername(int s, struct wisp_sockaddr *name, wisp_socklen_t *namelen)
{
    return get_name(s, name, namelen, 0);
}

/* ------------------------------------------------------------ options */

/* tv (validated: tv_sec >= 0, 0 <= tv_usec < 1000000) in ms, rounded up,
 * clamped below WISP_SYS_FOREVER. 32-bit arithmetic only: a 64-bit
 * multiply / divide would pull libgcc's division helpers into every image. */
static uint32_t tv_to_ms(const struct wisp_timeval *tv)
{
    if (tv->tv_sec >= (long)((WISP_SYS_FOREVER - 1u) / 1000u)) {
        return WISP_SYS_FOREVER - 1u;
    }
    /* tv_sec <= 4294966: at most 4294966000 + 1000, no overflow */
    return (uint32_t)tv->tv_sec * 1000u + ((uint32_t)tv->tv_usec + 999u) / 1000u;
}

/* Is tv a valid time (tv_sec >= 0, 0 <= tv_usec < 1000000)? *ms: it in
 * ms (tv_to_ms). */
static bool tv_ms(const struct wisp_timeval *tv, uint32_t *ms)
{
    if (tv->tv_sec < 0 || tv->tv_usec < 0 || tv->tv_usec >= 1000000L) {
        return false;
    }
    *ms = tv_to_ms(tv);
    return true;
}

static void ms_to_tv(uint32_t ms, struct wisp_timeval *tv)
{
    tv->tv_sec = (long)(ms / 1000u);
    tv->tv_usec = (long)(ms % 1000u) * 1000L;
}

/* TCP_CONGESTION (Linux): optval holds the name, optlen bytes (a NUL ends
 * it earlier); an algorithm not known or not compiled in is ENOENT. */
static int setopt_tcp_congestion(struct wisp_sock *sk, const void *optval, wisp_socklen_t optlen)
{
    char name[WISP_TCP_CA_NAME_MAX];
    size_t n = WISP_MIN((size_t)optlen, sizeof name - 1u);
    wisp_err_t err;
    int algo;
    if (optlen < 1) {
        return WISP_EINVAL;
    }
    memcpy(name, optval, n);
    name[n] = '\0';
    algo = wisp_tcp_cc_by_name(name);
    if (algo < 0) {
        return WISP_ENOENT;
    }
    err = wisp_netconn_set_cc(sk->conn, (unsigned)algo);
    if (err == WISP_ERR_VAL) {
        return WISP_ENOENT; /* known but not compiled in */
    }
    (void)opt_access(sk, OK_CONGESTION, true, (uint32_t)algo);
    if (err == WISP_ERR_CLSD) {
        err = WISP_OK; /* no connection (any more): remembered */
    }
    return wisp_err_to_errno(err);
}

/* Store val as option kind of sk and pass it on to the netconn where it
 * acts there (setsockopt; accept, for what the listener had): 0 or the
 * errno to fail with (the netconn's answer, mapped). */
static int opt_store(struct wisp_sock *sk, unsigned kind, uint32_t val)
{
    struct wisp_netconn *conn = sk->conn;
    wisp_err_t err;
    (void)opt_access(sk, kind, true, val);
    switch (kind) {
    case OK_RCVTIMEO:
        wisp_netconn_set_recvtimeout(conn, val);
        return 0;
    case OK_SNDTIMEO:
        wisp_netconn_set_sendtimeout(conn, val);
        return 0;
    case OK_KEEPALIVE:
    case OK_KEEPIDLE:
    case OK_KEEPINTVL:
    case OK_KEEPCNT:
        if (SK_STREAM(sk)) {
            /* a listener keeps them for the connections it accepts:
             * netconn answers ERR_CONN, ignored */
            bool on;
            uint32_t idle, intvl, cnt;
            tbl_lock();
            on = (sk->opts & WISP_SOCK_O_KEEPALIVE) != 0;
            idle = sk->keepidle_s * 1000u;
            intvl = sk->keepintvl_s * 1000u;
            cnt = sk->keepcnt;
            tbl_unlock();
            (void)wisp_netconn_set_keepalive(conn, on, idle, intvl, cnt);
        }
        return 0; /* UDP: SO_KEEPALIVE kept here */
    case OK_BROADCAST:
        if (!SK_STREAM(sk)) {
            (void)wisp_netconn_set_broadcast(conn, val != 0);
        }
        return 0; /* TCP: kept here */
    case OK_TTL:
        (void)wisp_netconn_set_ttl(conn, (uint8_t)val); /* a listener passes it on */
        return 0;
    case OK_TOS:
        /* the DSCP picks the transmit queue (netif.h): the priority write
         * of the socket API */
        err = wisp_netconn_set_dscp(conn, (uint8_t)(val >> 2));
        break;
    case OK_NODELAY:
        err = wisp_netconn_set_nodelay(conn, val != 0);
        goto remembered;
    case OK_MAXSEG:
        err = wisp_netconn_set_maxseg(conn, (uint16_t)val);
        goto remembered;
    case OK_SNDBUF:
    case OK_RCVBUF:
        err = wisp_netconn_set_bufs(conn, kind == OK_SNDBUF ? val : 0u, kind == OK_RCVBUF ? val : 0u);
    remembered:
        if (err == WISP_ERR_CONN || err == WISP_ERR_CLSD) {
            err = WISP_OK; /* a listener: for what it accepts; closed: remembered */
        }
        break;
    default: /* SO_REUSEADDR, SO_LINGER: kept here */
        return 0;
    }
    return err == WISP_OK ? 0 : (err == WISP_ERR_CLSD ? WISP_EINVAL : wisp_err_to_errno(err));
}

/* Set option kind of sk to v (an int option) or to what optval holds: 0,
 * or the errno to fail with. */
static int setopt(struct wisp_sock *sk, unsigned kind, const void *optval, wisp_socklen_t optlen, int v)
{
    uint32_t val = (uint32_t)v;
    if (!opt_for(sk, kind)) {
        return WISP_ENOPROTOOPT;
    }
    /* check the value first: nothing is stored when it is wrong */
    switch (kind) {
    case OK_RCVTIMEO:
    case OK_SNDTIMEO: {
        struct wisp_timeval tv;
        if (optlen < sizeof tv) {
            return WISP_EINVAL;
        }
        memcpy(&tv, optval, sizeof tv);
        if (!tv_ms(&tv, &val)) {
            return WISP_EDOM;
        }
        break;
    }
    case OK_LINGER: {
        struct wisp_linger l;
        if (optlen < sizeof l) {
            return WISP_EINVAL;
        }
        memcpy(&l, optval, sizeof l);
        if (l.l_linger < 0) {
            return WISP_EINVAL;
        }
        (void)opt_access(sk, OK_LINGER_ON, true, l.l_onoff != 0);
        val = (uint32_t)WISP_MIN(l.l_linger, 65535);
        break;
    }
    case OK_KEEPIDLE:
    case OK_KEEPINTVL:
    case OK_KEEPCNT:
        /* Linux: 1..MAX_TCP_KEEPIDLE / MAX_TCP_KEEPINTVL (32767 s),
         * 1..MAX_TCP_KEEPCNT (127) */
        if (v < 1 || v > (kind == OK_KEEPCNT ? 127 : 32767)) {
            return WISP_EINVAL;
        }
        break;
    case OK_MAXSEG:
        /* Linux: 0 (no cap) or TCP_MIN_MSS (88) .. MAX_TCP_WINDOW (32767) */
        if (v != 0 && (v < 88 || v > 32767)) {
            return WISP_EINVAL;
        }
        break;
    case OK_TOS:
        if (v < 0 || v > 255) {
            return WISP_EINVAL;
        }
        val &= 0xfcu;
        break;
    case OK_TTL:
        if (v < -1 || v == 0 || v > 255) {
            return WISP_EINVAL;
        }
        val = v < 0 ? 0u : val; /* -1: back to the default */
        break;
    case OK_SNDBUF:
    case OK_RCVBUF:
        if (!SK_STREAM(sk)) {
            return 0; /* UDP: accepted without effect */
        }
        /* Linux: no error; a negative value (taken unsigned) is the
         * maximum; clamped to the stack's buffers (sockets.h) */
        {
            uint32_t max = kind == OK_SNDBUF ? (uint32_t)WISP_TCP_SND_BUF : (uint32_t)WISP_TCP_WND;
            val = WISP_MAX(WISP_MIN(val, max), WISP_MIN((uint32_t)WISP_TCP_MSS, max)); /* fits wisp_sock_buf_t */
        }
        break;
    case OK_CONGESTION:
        return setopt_tcp_congestion(sk, optval, optlen);
    case OK_NOP:
        return 0;
    case OK_TYPE:
    case OK_ACCEPTCONN:
    case OK_ERROR:
    case OK_INFO:
        return WISP_ENOPROTOOPT; /* read-only (Linux) */
    default:
        break;
    }
    return opt_store(sk, kind, val);
}

int wisp_setsockopt(int s, int level, int optname, const void *optval, wisp_socklen_t optlen)
{
    struct wisp_sock *sk = sock_enter(s);
    unsigned kind;
    int v = 0, e;

    if (sk == NULL) {
        return -1;
    }
    if (optval == NULL) {
        return sock_fail_leave(sk, WISP_EFAULT);
    }
    kind = opt_kind(level, optname);
    if (kind < OK_CONGESTION) { /* an int (or not known: checked as one) */
        if (optlen < sizeof(int)) {
            return sock_fail_leave(sk, WISP_EINVAL);
        }
        memcpy(&v, optval, sizeof v);
    }
    e = setopt(sk, kind, optval, optlen, v);
    if (e != 0) {
        return sock_fail_leave(sk, e);
    }
    sock_leave(sk);
    return 0;
}

/* Store an int option value (truncated to *optlen like Linux). */
static void put_int(void *optval, wisp_socklen_t *optlen, int v)
{
    size_t n = WISP_MIN((size_t)*optlen, sizeof v);
    memcpy(optval, &v, n);
    *optlen = (wisp_socklen_t)n;
}

/* Linux's TCP state numbers (include/net/tcp_states.h) for enum
 * wisp_tcp_state. */
static uint8_t linux_tcp_state(unsigned st)
{
    switch (st) {
    case WISP_TCP_ESTABLISHED: return 1;
    case WISP_TCP_SYN_SENT: return 2;
    case WISP_TCP_SYN_RCVD: return 3;
    case WISP_TCP_FIN_WAIT_1: return 4;
    case WISP_TCP_FIN_WAIT_2: return 5;
    case WISP_TCP_TIME_WAIT: return 6;
    case WISP_TCP_CLOSE_WAIT: return 8;
    case WISP_TCP_LAST_ACK: return 9;
    case WISP_TCP_LISTEN: return 10;
    case WISP_TCP_CLOSING: return 11;
    default: return 7; /* TCP_CLOSE */
    }
}

/* TCP_INFO: Linux's struct tcp_info (units: us, segments) from the
 * connection's statistics. */
static void sock_tcp_info(struct wisp_sock *sk, struct wisp_sock_tcp_info *ti)
{
    struct wisp_tcp_info info;
    wisp_err_t err;
    uint32_t smss;
    memset(ti, 0, sizeof(*ti));
    err = wisp_netconn_get_tcp_info(sk->conn, &info);
    if (err == WISP_ERR_CONN) {
        ti->tcpi_state = 10; /* a listener */
        return;
    }
    if (err != WISP_OK) {
        ti->tcpi_state = 7; /* closed */
        return;
    }
    ti->tcpi_state = linux_tcp_state(info.state);
    ti->tcpi_retransmits = info.rtx_backoff;
    ti->tcpi_backoff = info.rtx_backoff;
    ti->tcpi_options = (uint8_t)((info.ts_ok ? WISP_TCPI_OPT_TIMESTAMPS : 0) | (info.sack_ok ? WISP_TCPI_OPT_SACK : 0) |
                                 ((info.snd_wscale | info.rcv_wscale) != 0 ? WISP_TCPI_OPT_WSCALE : 0));
    ti->tcpi_wscale = (uint8_t)((info.snd_wscale & 0x0fu) | ((info.rcv_wscale & 0x0fu) << 4));
    ti->tcpi_rto = info.rto_ms * 1000u;
    smss = info.mss > (info.ts_ok ? 12u : 0u) ? info.mss - (info.ts_ok ? 12u : 0u) : 1u;
    ti->tcpi_snd_mss = smss;
    ti->tcpi_rcv_mss = info.mss;
    ti->tcpi_advmss = info.mss;
    ti->tcpi_pmtu = (uint32_t)info.mss + 40u;
    ti->tcpi_unacked = info.unacked_segs;
    ti->tcpi_total_retrans = info.retransmits;
    ti->tcpi_rtt = info.srtt_ms * 1000u;
    ti->tcpi_rttvar = info.rttvar_ms * 1000u;
    ti->tcpi_snd_cwnd = info.cwnd / smss > 0u ? info.cwnd / smss : 1u;
    ti->tcpi_snd_ssthresh = info.ssthresh >= 0x7fffffffu ? 0x7fffffffu : info.ssthresh / smss;
    ti->tcpi_rcv_space = info.rcv_wnd;
    ti->tcpi_rcv_ssthresh = info.rcv_buf;
}

/* Store n bytes of value src in optval (a struct: EINVAL when optlen is
 * shorter; cut = true: cut to optlen, as Linux cuts TCP_INFO and
 * TCP_CONGESTION). Returns GETOPT_STORED or the errno. */
#define GETOPT_STORED (-1)

static int put_val(void *optval, wisp_socklen_t *optlen, const void *src, size_t n, bool cut)
{
    if (cut) {
        n = WISP_MIN((size_t)*optlen, n);
    } else if (*optlen < n) {
        return WISP_EINVAL;
    }
    memcpy(optval, src, n);
    *optlen = (wisp_socklen_t)n;
    return GETOPT_STORED;
}

/* wisp_getsockopt of option kind: 0 with the value in *v (an int
 * option), or GETOPT_STORED when it stored a non-int value itself, or the
 * errno to fail with. */
static int getopt(struct wisp_sock *sk, unsigned kind, void *optval, wisp_socklen_t *optlen, int *v)
{
    uint32_t val = opt_get(sk, kind);
    *v = (int)val;
    switch (kind) {
    case OK_RCVTIMEO:
    case OK_SNDTIMEO: {
        struct wisp_timeval tv;
        ms_to_tv(val, &tv);
        return put_val(optval, optlen, &tv, sizeof tv, false);
    }
    case OK_LINGER: {
        struct wisp_linger l;
        l.l_onoff = (int)opt_get(sk, OK_LINGER_ON);
        l.l_linger = (int)val;
        return put_val(optval, optlen, &l, sizeof l, false);
    }
    case OK_ERROR:
        /* the pending asynchronous error, cleared by reading it */
        *v = take_pending_err(sk);
        if (*v != 0) {
            tbl_lock();
            sk->f.connecting = 0;
            tbl_unlock();
        }
        return 0;
    case OK_TYPE: *v = SK_STREAM(sk) ? WISP_SOCK_STREAM : WISP_SOCK_DGRAM; return 0;
    case OK_ACCEPTCONN: *v = sk_flags(sk).listening; return 0;
    case OK_SNDBUF:
    case OK_RCVBUF:
        if (SK_STREAM(sk)) {
            /* the bound in effect, doubled as Linux reports it */
            if (val == 0) {
                val = kind == OK_SNDBUF ? (uint32_t)WISP_TCP_SND_BUF : (uint32_t)WISP_TCP_WND;
            }
            *v = (int)(val > 0x3fffffffu ? 0x7fffffffu : 2u * val);
        } else if (kind == OK_RCVBUF) {
            *v = (int)(WISP_NETCONN_RECVMBOX_SIZE * SOCK_UDP_MAX > 0x7fffffff
                           ? 0x7fffffff
                           : WISP_NETCONN_RECVMBOX_SIZE * (long)SOCK_UDP_MAX);
        } else {
            *v = (int)SOCK_UDP_MAX;
        }
        return 0;
    case OK_MAXSEG: {
        /* Linux: the value set while closed or listening, else
         * mss_cache (536 before the handshake; after it the data
         * bytes per segment) */
        struct wisp_tcp_info info;
        if (sk_flags(sk).established && wisp_netconn_get_tcp_info(sk->conn, &info) == WISP_OK && info.mss != 0) {
            *v = (int)info.mss - (info.ts_ok ? 12 : 0);
        } else if (val == 0) {
            *v = 536;
        }
        return 0;
    }
    case OK_INFO: {
        struct wisp_sock_tcp_info ti;
        sock_tcp_info(sk, &ti);
        return put_val(optval, optlen, &ti, sizeof ti, true);
    }
    case OK_CONGESTION: {
        /* Linux: the name, NUL-padded to TCP_CA_NAME_MAX, cut to optlen */
        char name[WISP_TCP_CA_NAME_MAX];
        const char *cc = wisp_tcp_cc_name(val);
        memset(name, 0, sizeof name);
        if (cc != NULL) {
            memcpy(name, cc, WISP_MIN(strlen(cc), sizeof name - 1u));
        }
        return put_val(optval, optlen, name, sizeof name, true);
    }
    case OK_TTL:
        if (val == 0) {
            *v = WISP_IP_DEFAULT_TTL;
        }
        return 0;
    case OK_NONE:
    case OK_NOP:
        return WISP_ENOPROTOOPT;
    default: /* the other int options: as stored */
        return 0;
    }
}

int wisp_getsockopt(int s, int level, int optname, void *optval, wisp_socklen_t *optlen)
{
    struct wisp_sock *sk = sock_enter(s);
    unsigned kind;
    int v = 0, e;

    if (sk == NULL) {
        return -1;
    }
    if (optval == NULL || optlen == NULL) {
        return sock_fail_leave(sk, WISP_EFAULT);
    }
    kind = opt_kind(level, optname);
    e = opt_for(sk, kind) ? getopt(sk, kind, optval, optlen, &v) : WISP_ENOPROTOOPT;
    if (e > 0) {
        return sock_fail_leave(sk, e);
    }
    if (e == 0) {
        put_int(optval, optlen, v);
    }
    sock_leave(sk);
    return 0;
}

/* ------------------------------------------------------- fcntl / ioctl */

static void set_nonblock(struct wisp_sock *sk, bool on)
{
    tbl_lock();
    sk->f.nonblock = on;
    tbl_unlock();
    wisp_netconn_set_nonblocking(sk->conn, on);
}

int wisp_fcntl(int s, int cmd, ...)
{
    struct wisp_sock *sk = sock_enter(s);
    int r = 0, val;
    va_list ap;
    if (sk == NULL) {
        return -1;
    }
    switch (cmd) {
    case WISP_F_GETFL:
        tbl_lock();
        r = WISP_O_RDWR | (sk->f.nonblock ? WISP_O_NONBLOCK : 0);
        tbl_unlock();
        break;
    case WISP_F_SETFL:
        va_start(ap, cmd);
        val = va_arg(ap, int);
        va_end(ap);
        set_nonblock(sk, (val & WISP_O_NONBLOCK) != 0);
        break;
    default:
        return sock_fail_leave(sk, WISP_EINVAL);
    }
    sock_leave(sk);
    return r;
}

int wisp_ioctl(int s, unsigned long request, ...)
{
    struct wisp_sock *sk;
    int *argp;
    va_list ap;
    va_start(ap, request);
    argp = va_arg(ap, int *);
    va_end(ap);
    switch (request) {
    case WISP_FIONBIO:
        /* F_SETFL's work; the pointer is checked after the descriptor */
        if (argp == NULL) {
            return sock_fail(s, WISP_EFAULT);
        }
        return wisp_fcntl(s, WISP_F_SETFL, *argp != 0 ? WISP_O_NONBLOCK : 0);
    case WISP_FIONREAD: {
        long n = 0;
        int e = 0;
        struct sock_snap snap;
        /* busy: another thread is reading (it owns last and the UDP
         * mailbox): report what the events say */
        bool busy = false;
        sk = sock_enter_dir(s, true, true, &snap);
        if (sk == NULL) {
            if (wisp_errno() != WISP_EAGAIN) {
                return -1;
            }
            sk = sock_enter(s);
            if (sk == NULL) {
                return -1;
            }
            busy = true;
        }
        if (argp == NULL) {
            e = WISP_EFAULT;
        } else if (!busy && !SK_STREAM(sk)) {
            bool pending;
            tbl_lock();
            pending = sk->rcvevent > 0;
            tbl_unlock();
            if (sk->last.buf == NULL && pending) {
                struct wisp_netbuf *buf = NULL;
                if (wisp_netconn_recv_udp_raw_netbuf_flags(sk->conn, &buf, WISP_NETCONN_DONTBLOCK) == WISP_OK) {
                    sk->last.buf = buf;
                }
            }
            n = (sk->last.buf != NULL) ? (long)wisp_netbuf_len(sk->last.buf) : 0;
        } else {
            tbl_lock();
            n = (long)WISP_MIN(sk->rcv_bytes, 0x7fffffffu);
            if (!busy && sk->last.p != NULL) {
                n += (long)(sk->last.p->tot_len - sk->lastoff);
            }
            tbl_unlock();
        }
        if (e == 0) {
            *argp = (int)WISP_MIN(n, 0x7fffffffL);
        }
        if (busy) {
            if (e != 0) {
                return sock_fail_leave(sk, e);
            }
            sock_leave(sk);
            return 0;
        }
        sock_leave_dir(sk, true, e);
        return e != 0 ? set_errno(e) : 0;
    }
    default:
        return sock_fail(s, WISP_EINVAL);
    }
}

/* ------------------------------------------------------- select / poll */

#define RDY_IN 0x1u
#define RDY_OUT 0x2u
#define RDY_ERR 0x4u
#define RDY_HUP 0x8u

/* Readiness of entry sk (table lock held). */
static unsigned readiness(const struct wisp_sock *sk)
{
    struct wisp_sock_flags f = sk->f;
    unsigned r = 0;
    bool err = f.errevent || sk->rx_err != 0;
    if (f.closing) {
        return RDY_IN | RDY_OUT; /* the call on it then fails with EBADF */
    }
    if (sk->rcvevent > 0 || f.has_last || f.rd_eof || sk->rx_err != 0 || f.dead || (f.errevent && !SK_STREAM(sk))) {
        r |= RDY_IN; /* a UDP socket's pending ICMP error: recv reports it (as Linux) */
    }
    if (!f.listening && (f.sendevent || f.dead || f.wr_shut)) {
        r |= RDY_OUT;
    }
    if (err) {
        r |= RDY_ERR;
    }
    if (f.dead || (f.rd_eof && f.wr_shut)) {
        r |= RDY_HUP;
    }
    return r;
}

/* Entry of descriptor fd for select/poll (lock held): NULL if not open. */
static struct wisp_sock *sel_entry(struct wisp_sockets *t, int fd)
{
    int e;
    return lookup(t, fd, &e);
}

/* The wait loop of select and poll (and of a thread waiting for its turn
 * to read / write): scan (table lock held) until it finds something (or
 * fails) or the time is up: ms, WISP_SYS_FOREVER (no limit) or 0 (one
 * scan only). w is set up but for its semaphore. Returns the scan's
 * result or -ENOMEM. */

static int sel_run(struct wisp_select_wait *w, uint32_t ms, sel_scan_fn scan, void *ctx)
{
    struct wisp_sockets *t = g_socks;
    bool sem_ok = false;
    /* the time left is counted in 31 bits: a longer wait (24.8 days) is
     * cut to that much, never turned into none or into forever */
    uint32_t deadline = wisp_sys_now_ms() + WISP_MIN(ms, 0x7fffffffu);
    int n;
    tbl_lock();
    while ((n = scan(t, ctx)) == 0 && ms != 0) {
        uint32_t tmo = WISP_SYS_FOREVER;
        if (!sem_ok) {
            tbl_unlock();
            if (wisp_sys_sem_new(&w->sem, 0) != WISP_OK) {
                return -WISP_ENOMEM;
            }
            sem_ok = true;
            tbl_lock();
            continue;
        }
        if (ms != WISP_SYS_FOREVER) {
            int32_t left = (int32_t)(deadline - wisp_sys_now_ms());
            if (left <= 0) {
                break; /* timed out: the scan above was the final one */
            }
            tmo = (uint32_t)left;
        }
        /* wait on w's semaphore, in the list while it waits; a signal
         * that raced with the timeout is harmless: w left the list,
         * nobody signals it any more, the loop rescans */
        waiter_add(t, w);
        tbl_unlock();
        (void)wisp_sys_sem_wait(&w->sem, tmo);
        tbl_lock();
        waiter_remove(t, w);
    }
    tbl_unlock();
    if (sem_ok) {
        wisp_sys_sem_free(&w->sem);
    }
    return n;
}

struct select_ctx {
    const struct wisp_select_wait *w;
    wisp_fd_set out[3];
};

/* The readiness bits are the select sets' order (read, write, except). */
WISP_STATIC_ASSERT(sock_rdy_bits, RDY_IN == 1u && RDY_OUT == 2u && RDY_ERR == 4u);

/* One scan of the select sets (lock held): fills the out sets, returns the
 * count, or -EBADF. */
static int select_scan_fn(struct wisp_sockets *t, void *arg)
{
    struct select_ctx *c = (struct select_ctx *)arg;
    int fd, n = 0;
    memset(c->out, 0, sizeof c->out);
    for (fd = 0; fd < c->w->maxfdp1; fd++) {
        unsigned want = sel_sets(c->w, fd), k;
        struct wisp_sock *sk;
        if (want == 0) {
            continue;
        }
        sk = sel_entry(t, fd);
        if (sk == NULL) {
            return -WISP_EBADF;
        }
        want &= readiness(sk); /* RDY_IN, RDY_OUT, RDY_ERR: bits 0..2 */
        for (k = 0; k < 3; k++) {
            if (want & (1u << k)) {
                WISP_FD_SET(fd, &c->out[k]);
                n++;
            }
        }
    }
    return n;
}

int wisp_select(int maxfdp1, wisp_fd_set *readset, wisp_fd_set *writeset, wisp_fd_set *exceptset,
                struct wisp_timeval *timeout)
{
    struct wisp_sockets *t = g_socks;
    struct wisp_select_wait w;
    struct select_ctx c;
    uint32_t ms = 0;
    int n, k;

    if (maxfdp1 < 0 || (timeout != NULL && !tv_ms(timeout, &ms))) {
        return set_errno(WISP_EINVAL);
    }
    if (t == NULL) {
        return set_errno(WISP_EBADF);
    }
    if (maxfdp1 > WISP_FD_SETSIZE) {
        maxfdp1 = WISP_FD_SETSIZE;
    }
    memset(&w, 0, sizeof w);
    w.set[0] = readset;
    w.set[1] = writeset;
    w.set[2] = exceptset;
    w.maxfdp1 = maxfdp1;
    c.w = &w;
    n = sel_run(&w, timeout == NULL ? WISP_SYS_FOREVER : ms, select_scan_fn, &c);
    if (n < 0) {
        return set_errno(-n);
    }
    for (k = 0; k < 3; k++) {
        if (w.set[k] != NULL) {
            memcpy((void *)(uintptr_t)w.set[k], &c.out[k], sizeof c.out[k]); /* the caller's set */
        }
    }
    return n;
}

/* One scan of the pollfds (lock held): sets revents, returns the count. */
static int poll_scan(struct wisp_sockets *t, struct wisp_pollfd *fds, wisp_nfds_t nfds)
{
    wisp_nfds_t i;
    int n = 0;
    for (i = 0; i < nfds; i++) {
        struct wisp_sock *sk;
        unsigned r;
        short rev = 0;
        fds[i].revents = 0;
        if (fds[i].fd < 0) {
            continue;
        }
        sk = sel_entry(t, fds[i].fd);
        if (sk == NULL) {
            fds[i].revents = WISP_POLLNVAL;
            n++;
            continue;
        }
        r = readiness(sk);
        if ((r & RDY_IN) && (fds[i].events & (WISP_POLLIN | WISP_POLLRDNORM))) {
            rev = (short)(rev | (fds[i].events & (WISP_POLLIN | WISP_POLLRDNORM)));
        }
        if ((r & RDY_OUT) && (fds[i].events & (WISP_POLLOUT | WISP_POLLWRNORM))) {
            rev = (short)(rev | (fds[i].events & (WISP_POLLOUT | WISP_POLLWRNORM)));
        }
        if (r & RDY_ERR) {
            rev = (short)(rev | WISP_POLLERR);
        }
        if (r & RDY_HUP) {
            rev = (short)(rev | WISP_POLLHUP);
        }
        fds[i].revents = rev;
        if (rev != 0) {
            n++;
        }
    }
    return n;
}

struct poll_ctx {
    struct wisp_pollfd *fds;
    wisp_nfds_t nfds;
};

static int poll_scan_fn(struct wisp_sockets *t, void *arg)
{
    struct poll_ctx *c = (struct poll_ctx *)arg;
    return poll_scan(t, c->fds, c->nfds);
}

int wisp_poll(struct wisp_pollfd *fds, wisp_nfds_t nfds, int timeout)
{
    struct wisp_sockets *t = g_socks;
    struct wisp_select_wait w;
    struct poll_ctx c;
    int n;

    if (fds == NULL && nfds > 0) {
        return set_errno(WISP_EFAULT);
    }
    if (t == NULL) {
        return set_errno(WISP_EINVAL);
    }
    memset(&w, 0, sizeof w);
    w.fds = fds;
    w.nfds = nfds;
    c.fds = fds;
    c.nfds = nfds;
    n = sel_run(&w, timeout < 0 ? WISP_SYS_FOREVER : (uint32_t)timeout, poll_scan_fn, &c);
    return n < 0 ? set_errno(-n) : n;
}

/* ------------------------------------------------------ address text */

int wisp_inet_pton(int af, const char *src, void *dst)
{
    wisp_ip4_t a;
    if (af != WISP_AF_INET) {
        return set_errno(WISP_EAFNOSUPPORT);
    }
    if (src == NULL || dst == NULL || !wisp_ip4_aton(src, &a)) {
        return 0;
    }
    memcpy(dst, &a, sizeof a);
    return 1;
}

const char *wisp_inet_ntop(int af, const void *src, char *dst, wisp_socklen_t size)
{
    char buf[WISP_INET_ADDRSTRLEN];
    wisp_ip4_t a;
    size_t n;
    if (af != WISP_AF_INET) {
        set_errno(WISP_EAFNOSUPPORT);
        return NULL;
    }
    if (src == NULL || dst == NULL) {
        set_errno(WISP_EFAULT);
        return NULL;
    }
    memcpy(&a, src, sizeof a);
    (void)wisp_ip4_ntoa(a, buf);
    n = strlen(buf) + 1;
    if (n > size) {
        set_errno(WISP_ENOSPC);
        return NULL;
    }
    memcpy(dst, buf, n);
    return dst;
}
