/**
 * @file tapdev.c
 * Linux TAP driver (see tapdev.h): /dev/net/tun in IFF_TAP | IFF_NO_PI
 * mode, non-blocking, frames copied into receive pbufs on input and
 * written with writev() straight from the chain's buffers on output --
 * or, in deferred mode, copied into a ring that the I/O thread writes out
 * without the core lock.
 *
 * The ring: records of a 4-byte length followed by the frame, each at a
 * 4-byte aligned offset; a record that does not fit before the end of the
 * buffer is preceded by a wrap marker (length TXQ_WRAP) and starts at 0.
 * One producer at a time (transmit runs in the core context, serialised by
 * the core lock), one consumer (the I/O thread); the indices and flags are
 * guarded by the ring's own mutex, which nobody holds across a syscall:
 * the consumer writes the record at the tail without it (producers never
 * touch used space).
 */
#define WISP_PRIVATE_ACCESS 1 /* library code: sees the private tier (wisp/arch.h) */
#include "tapdev.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <net/if.h>
#include <linux/if_tun.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/uio.h>

#include "wisp/stack.h"
#include "wisp/ethernet.h"

/* Buffers of one chain written with one writev(); longer chains are copied
 * into the (then idle) receive buffer first. */
#define TAP_IOV_MAX 64

void wisp_tapdev_mac_for(uint32_t ip4_be, uint8_t mac[6])
{
    /* 02 = locally administered unicast (IEEE 802 U/L bit), then "wisp". */
    mac[0] = 0x02;
    mac[1] = 0x77;
    mac[2] = 0x69;
    mac[3] = 0x73;
    mac[4] = 0x70;
    mac[5] = wisp_ip4_octet(ip4_be, 3);
}

static void tap_err(char *err, size_t errlen, const char *fmt, const char *a, int e);

/* ------------------------------------------------ deferred transmit */

#define TXQ_HDR 4u
#define TXQ_WRAP 0xffffffffu

struct wisp_tapdev_txq {
    pthread_mutex_t mtx;
    uint8_t *buf;
    size_t cap;            /**< bytes, multiple of 4 */
    size_t head, tail;     /**< next record written / read (offsets) */
    size_t used;           /**< bytes between tail and head incl. skips */
    bool sleeping;         /**< the I/O thread waits in poll */
    bool kicked;           /**< the wake fd was signalled for this sleep */
    bool refused;          /**< a frame was refused: tx_ready owed */
    size_t direct_max;     /**< frames up to this long may be written by their producer */
    uint32_t full, high, oversize, kicks;
    uint32_t direct, direct_bytes, direct_errors;
    int wake_fd;           /**< eventfd */
};

static size_t txq_rec_len(size_t frame_len)
{
    return TXQ_HDR + ((frame_len + 3u) & ~(size_t)3u);
}

/* Write a frame to the tap from its pbuf chain: -1 with errno, or the
 * bytes written. A chain of more than TAP_IOV_MAX pieces is linearised
 * into flat (frame-sized), or refused (EMSGSIZE) when flat is NULL. */
static ssize_t frame_writev(struct wisp_tapdev *t, const struct wisp_pbuf *frame, uint8_t *flat)
{
    struct iovec iov[TAP_IOV_MAX];
    const struct wisp_pbuf *p;
    int niov = 0;
    ssize_t n;

    for (p = frame; p != NULL && niov < TAP_IOV_MAX; p = p->next) {
        if (p->len != 0) {
            iov[niov].iov_base = p->payload;
            iov[niov].iov_len = p->len;
            niov++;
        }
    }
    while (p != NULL && p->len == 0) {
        p = p->next;
    }
    if (p != NULL) {
        if (flat == NULL) {
            errno = EMSGSIZE;
            return -1;
        }
        iov[0].iov_base = flat;
        iov[0].iov_len = wisp_pbuf_copy_out(frame, flat, frame->tot_len, 0);
        niov = 1;
    }
    do {
        n = writev(t->fd, iov, niov);
    } while (n < 0 && errno == EINTR);
    return n;
}

/* Transmit in deferred mode (core context): copy into the ring, or write
 * a short frame at once (below). */
static wisp_err_t txq_put(struct wisp_tapdev *t, struct wisp_pbuf *frame)
{
    struct wisp_tapdev_txq *q = t->txq;
    size_t rec = txq_rec_len(frame->tot_len), skip = 0;
    uint32_t len = frame->tot_len;
    bool kick = false;

    if (rec > q->cap) {
        pthread_mutex_lock(&q->mtx);
        q->oversize++;
        pthread_mutex_unlock(&q->mtx);
        return WISP_ERR_IF;
    }
    pthread_mutex_lock(&q->mtx);
    if (q->used == 0 && q->sleeping && len <= q->direct_max && t->fd >= 0) {
        /* A short frame while the ring is empty and the I/O thread sleeps:
         * written here, which costs what the wake-up would (one system
         * call) and saves the I/O thread's wake-up and write. Nothing can
         * overtake it: every producer holds the core lock, and the ring
         * holds no record (none in flight either: the tail moves after
         * its write). */
        ssize_t n;
        pthread_mutex_unlock(&q->mtx);
        n = frame_writev(t, frame, NULL); /* (rxbuf is the I/O thread's) */
        pthread_mutex_lock(&q->mtx);
        if (n >= 0 || (errno != EAGAIN && errno != EWOULDBLOCK)) {
            if (n == (ssize_t)len) {
                q->direct++;
                q->direct_bytes += len;
            } else {
                q->direct_errors++;
            }
            pthread_mutex_unlock(&q->mtx);
            return WISP_OK;
        }
        /* the tap is full: queue it; the I/O thread waits for POLLOUT */
    }
    if (q->used == 0) {
        q->head = q->tail = 0;       /* empty (the consumer holds no record) */
    }
    if (q->head + rec > q->cap) {
        skip = q->cap - q->head;     /* wrap: the rest of the buffer unused */
    }
    if (rec + skip > q->cap - q->used) {
        q->refused = true;
        q->full++;
        pthread_mutex_unlock(&q->mtx);
        return WISP_ERR_WOULDBLOCK;
    }
    if (skip > 0) {
        uint32_t w = TXQ_WRAP;
        memcpy(q->buf + q->head, &w, TXQ_HDR);   /* skip >= 4: offsets are 4-aligned */
        q->head = 0;
    }
    memcpy(q->buf + q->head, &len, TXQ_HDR);
    (void)wisp_pbuf_copy_out(frame, q->buf + q->head + TXQ_HDR, frame->tot_len, 0);
    q->head += rec;
    if (q->head == q->cap) {
        q->head = 0;
    }
    q->used += rec + skip;
    if (q->used > q->high) {
        q->high = (uint32_t)q->used;
    }
    if (q->sleeping && !q->kicked) {
        q->kicked = true;
        q->kicks++;
        kick = true;
    }
    pthread_mutex_unlock(&q->mtx);
    if (kick) {
        uint64_t one = 1;
        ssize_t r;
        do {
            r = write(q->wake_fd, &one, sizeof one);
        } while (r < 0 && errno == EINTR);
        /* EAGAIN: the counter is saturated, i.e. already readable */
    }
    return WISP_OK;
}

int wisp_tapdev_tx_defer(struct wisp_tapdev *t, size_t ring_bytes, char *err, size_t errlen)
{
    struct wisp_tapdev_txq *q;

    if (t->txq != NULL) {
        return 0;
    }
    if (ring_bytes == 0) {
        ring_bytes = WISP_TAPDEV_TXQ_BYTES;
    }
    ring_bytes = (ring_bytes + 3u) & ~(size_t)3u;
    q = calloc(1, sizeof *q);
    if (q != NULL) {
        q->buf = malloc(ring_bytes);
    }
    if (q == NULL || q->buf == NULL) {
        if (q != NULL) {
            free(q);
        }
        if (err != NULL && errlen > 0) {
            snprintf(err, errlen, "no memory for a %zu-byte transmit ring", ring_bytes);
        }
        return -1;
    }
    q->wake_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    if (q->wake_fd < 0) {
        tap_err(err, errlen, "eventfd for %s", t->name, errno);
        free(q->buf);
        free(q);
        return -1;
    }
    if (pthread_mutex_init(&q->mtx, NULL) != 0) {
        if (err != NULL && errlen > 0) {
            snprintf(err, errlen, "no mutex for the transmit ring");
        }
        close(q->wake_fd);
        free(q->buf);
        free(q);
        return -1;
    }
    q->cap = ring_bytes;
    t->txq = q;
    return 0;
}

static void txq_free(struct wisp_tapdev *t)
{
    struct wisp_tapdev_txq *q = t->txq;
    if (q == NULL) {
        return;
    }
    t->tx_errors += q->oversize;
    t->tx_ring_full = q->full;
    t->tx_ring_high = q->high;
    t->tx_ring_kicks = q->kicks;
    t->tx_ring_direct = q->direct;
    t->tx_frames += q->direct;
    t->tx_bytes += q->direct_bytes;
    t->tx_errors += q->direct_errors;
    pthread_mutex_destroy(&q->mtx);
    close(q->wake_fd);
    free(q->buf);
    free(q);
    t->txq = NULL;
}

void wisp_tapdev_tx_direct(struct wisp_tapdev *t)
{
    unsigned guard;
    if (t->txq == NULL) {
        return;
    }
    /* Bounded: a tap that keeps saying EAGAIN loses what is left. */
    for (guard = 0; guard < 100u && wisp_tapdev_tx_pending(t); guard++) {
        if (wisp_tapdev_tx_flush(t, 256u) == 0 && t->want_pollout) {
            struct pollfd pfd;
            pfd.fd = t->fd;
            pfd.events = POLLOUT;
            pfd.revents = 0;
            (void)poll(&pfd, 1, 10);
            t->want_pollout = 0;
        }
    }
    t->want_pollout = 0;
    txq_free(t);
}

void wisp_tapdev_tx_direct_max(struct wisp_tapdev *t, size_t bytes)
{
    struct wisp_tapdev_txq *q = t->txq;
    if (q != NULL) {
        pthread_mutex_lock(&q->mtx);
        q->direct_max = bytes;
        pthread_mutex_unlock(&q->mtx);
    }
}

int wisp_tapdev_tx_wake_fd(const struct wisp_tapdev *t)
{
    return t->txq != NULL ? t->txq->wake_fd : -1;
}

bool wisp_tapdev_tx_pending(struct wisp_tapdev *t)
{
    struct wisp_tapdev_txq *q = t->txq;
    bool r;
    if (q == NULL) {
        return false;
    }
    pthread_mutex_lock(&q->mtx);
    r = q->used > 0;
    pthread_mutex_unlock(&q->mtx);
    return r;
}

unsigned wisp_tapdev_tx_flush(struct wisp_tapdev *t, unsigned max)
{
    struct wisp_tapdev_txq *q = t->txq;
    unsigned done = 0;

    if (q == NULL || t->want_pollout) {
        return 0;
    }
    while (done < max) {
        uint32_t len;
        size_t skip = 0, tail;
        ssize_t n;

        pthread_mutex_lock(&q->mtx);
        if (q->used == 0) {
            q->head = q->tail = 0;   /* empty: start over, records stay contiguous */
            pthread_mutex_unlock(&q->mtx);
            break;
        }
        memcpy(&len, q->buf + q->tail, TXQ_HDR);
        if (len == TXQ_WRAP) {
            skip = q->cap - q->tail;
            q->tail = 0;
            q->used -= skip;
            memcpy(&len, q->buf, TXQ_HDR);
        }
        tail = q->tail;
        pthread_mutex_unlock(&q->mtx);

        /* The record at the tail is ours until the tail moves. */
        if (t->fd < 0) {
            n = -1;
            errno = EBADF;
        } else {
            do {
                n = write(t->fd, q->buf + tail + TXQ_HDR, len);
            } while (n < 0 && errno == EINTR);
        }
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
            t->tx_wouldblock++;
            t->want_pollout = 1;
            break;
        }
        if (n < 0 || (size_t)n != len) {
            t->tx_errors++;
        } else {
            t->tx_frames++;
            t->tx_bytes += (uint32_t)n;
        }
        done++;
        pthread_mutex_lock(&q->mtx);
        q->tail += txq_rec_len(len);
        if (q->tail == q->cap) {
            q->tail = 0;
        }
        q->used -= txq_rec_len(len);
        pthread_mutex_unlock(&q->mtx);
    }
    return done;
}

bool wisp_tapdev_tx_ready_due(struct wisp_tapdev *t)
{
    struct wisp_tapdev_txq *q = t->txq;
    bool r = false;
    if (q == NULL) {
        return false;
    }
    pthread_mutex_lock(&q->mtx);
    /* Resume once half the ring is free: a refused burst fits again. */
    if (q->refused && q->used <= q->cap / 2u) {
        q->refused = false;
        r = true;
    }
    pthread_mutex_unlock(&q->mtx);
    return r;
}

bool wisp_tapdev_tx_sleep_begin(struct wisp_tapdev *t)
{
    struct wisp_tapdev_txq *q = t->txq;
    bool empty;
    if (q == NULL) {
        return true;
    }
    pthread_mutex_lock(&q->mtx);
    empty = q->used == 0;
    if (empty) {
        q->sleeping = true;
        q->kicked = false;
    }
    pthread_mutex_unlock(&q->mtx);
    return empty;
}

void wisp_tapdev_tx_sleep_end(struct wisp_tapdev *t, short wake_revents)
{
    struct wisp_tapdev_txq *q = t->txq;
    if (q == NULL) {
        return;
    }
    pthread_mutex_lock(&q->mtx);
    q->sleeping = false;
    pthread_mutex_unlock(&q->mtx);
    if (wake_revents & POLLIN) {
        uint64_t v;
        ssize_t r;
        do {
            r = read(q->wake_fd, &v, sizeof v);
        } while (r < 0 && errno == EINTR);
    }
}

/* ------------------------------------------------------------ transmit */

static wisp_err_t tap_transmit(struct wisp_dev *dev, struct wisp_pbuf *frame)
{
    struct wisp_tapdev *t = (struct wisp_tapdev *)dev->ctx;
    ssize_t n;

    if (t->txq != NULL) {
        return txq_put(t, frame);   /* any thread holding the core lock */
    }
    if (t->fd < 0) {
        t->tx_errors++;
        return WISP_ERR_IF;
    }
    /* A very long chain is linearised into rxbuf: free here, a received
     * frame was copied into its pbuf before being handed to the stack. */
    n = frame_writev(t, frame, t->rxbuf);
    if (n < 0) {
        if (errno == EAGAIN || errno == EWOULDBLOCK) {
            t->tx_wouldblock++;
            t->want_pollout = 1;
            return WISP_ERR_WOULDBLOCK;
        }
        t->tx_errors++;
        return WISP_ERR_IF;
    }
    if ((size_t)n != frame->tot_len) {
        t->tx_errors++;
        return WISP_ERR_IF;
    }
    t->tx_frames++;
    t->tx_bytes += (uint32_t)n;
    return WISP_OK;
}

static const struct wisp_dev_ops tapdev_ops = { tap_transmit, NULL, NULL };

unsigned wisp_tapdev_rx(struct wisp_tapdev *t, unsigned max)
{
    unsigned got = 0, tries;

    for (tries = 0; tries < max && t->fd >= 0; tries++) {
        struct wisp_pbuf *p;
        ssize_t n = read(t->fd, t->rxbuf, sizeof t->rxbuf);

        if (n < 0) {
            if (errno == EINTR) {
                continue;
            }
            if (errno != EAGAIN && errno != EWOULDBLOCK) {
                t->rx_errors++;
            }
            break;
        }
        if (n < (ssize_t)WISP_ETH_HLEN || n > 65535) {
            t->rx_errors++;   /* runt (or impossible giant): not a frame */
            continue;
        }
        p = wisp_pbuf_alloc_rx(t->stack, (uint16_t)n);
        if (p == NULL) {
            WISP_CTR_INC(t->stack, NETIF_RX_NOMEM);
            t->rx_nomem++;
            continue;
        }
        if (wisp_pbuf_copy_in(p, t->rxbuf, (uint16_t)n, 0) != WISP_OK) {
            wisp_pbuf_free(p);
            t->rx_errors++;
            continue;
        }
        t->rx_frames++;
        t->rx_bytes += (uint32_t)n;
        got++;
        wisp_dev_input(&t->dev, p);   /* the stack owns it now */
    }
    return got;
}

short wisp_tapdev_poll_events(const struct wisp_tapdev *t)
{
    return (short)(POLLIN | (t->want_pollout ? POLLOUT : 0));
}

unsigned wisp_tapdev_handle(struct wisp_tapdev *t, short revents)
{
    if ((revents & POLLOUT) && t->want_pollout) {
        t->want_pollout = 0;
        if (t->txq == NULL) {
            wisp_dev_tx_ready(&t->dev);
        }
    }
    if (revents & (POLLIN | POLLERR | POLLHUP)) {
        return wisp_tapdev_rx(t, WISP_TAPDEV_RX_BATCH);
    }
    return 0;
}

static void tap_err(char *err, size_t errlen, const char *fmt, const char *a, int e)
{
    char msg[160];

    if (err == NULL || errlen == 0) {
        return;
    }
    snprintf(msg, sizeof msg, fmt, a);
    snprintf(err, errlen, "%s: %s", msg, strerror(e));
}

/* Bring the Linux side of the interface up (SIOCSIFFLAGS) if it is down. */
static int tap_link_up(const char *name, char *err, size_t errlen)
{
    struct ifreq ifr;
    int sk = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    int rc = -1;

    if (sk < 0) {
        tap_err(err, errlen, "socket for interface %s", name, errno);
        return -1;
    }
    memset(&ifr, 0, sizeof ifr);
    memcpy(ifr.ifr_name, name, strlen(name) + 1);
    if (ioctl(sk, SIOCGIFFLAGS, &ifr) < 0) {
        tap_err(err, errlen, "SIOCGIFFLAGS %s", name, errno);
    } else if (ifr.ifr_flags & IFF_UP) {
        rc = 0;
    } else {
        ifr.ifr_flags = (short)(ifr.ifr_flags | IFF_UP);
        if (ioctl(sk, SIOCSIFFLAGS, &ifr) < 0) {
            tap_err(err, errlen, "cannot set %s up (SIOCSIFFLAGS)", name, errno);
        } else {
            rc = 0;
        }
    }
    close(sk);
    return rc;
}

static void tap_init(struct wisp_tapdev *t, struct wisp_stack *s)
{
    memset(t, 0, offsetof(struct wisp_tapdev, rxbuf));
    t->fd = -1;
    t->dev.ops = &tapdev_ops;
    t->dev.ctx = t;
    t->stack = s;
}

void wisp_tapdev_attach_fd(struct wisp_tapdev *t, struct wisp_stack *s, int fd, const char *name)
{
    tap_init(t, s);
    if (name != NULL) {
        size_t n = strlen(name);
        if (n >= sizeof t->name) {
            n = sizeof t->name - 1;
        }
        memcpy(t->name, name, n);
        t->name[n] = '\0';
    }
    t->fd = fd;
}

int wisp_tapdev_open(struct wisp_tapdev *t, struct wisp_stack *s, const char *name, char *err, size_t errlen)
{
    struct ifreq ifr;
    int fd, e;

    tap_init(t, s);
    if (name == NULL || name[0] == '\0' || strlen(name) >= IFNAMSIZ || strlen(name) >= sizeof t->name) {
        if (err != NULL && errlen > 0) {
            snprintf(err, errlen, "invalid tap interface name (1..%d characters)", IFNAMSIZ - 1);
        }
        return -1;
    }
    fd = open("/dev/net/tun", O_RDWR | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0) {
        e = errno;
        tap_err(err, errlen, "cannot open /dev/net/tun%s", e == ENOENT ? " (tun module not loaded?)" :
                (e == EACCES || e == EPERM) ? " (need root or CAP_NET_ADMIN)" : "", e);
        return -1;
    }
    memset(&ifr, 0, sizeof ifr);
    ifr.ifr_flags = IFF_TAP | IFF_NO_PI;
    memcpy(ifr.ifr_name, name, strlen(name) + 1);
    if (ioctl(fd, TUNSETIFF, &ifr) < 0) {
        e = errno;
        tap_err(err, errlen,
                e == EPERM ? "cannot attach to tap %s (need CAP_NET_ADMIN, or the device belongs to another user)"
                : e == EBUSY ? "cannot attach to tap %s (already in use by another process)"
                : e == EINVAL ? "cannot attach to tap %s (exists but is not a tap device?)"
                : "cannot attach to tap %s (TUNSETIFF)", name, e);
        close(fd);
        return -1;
    }
    memcpy(t->name, ifr.ifr_name, sizeof t->name - 1);
    t->name[sizeof t->name - 1] = '\0';
    if (tap_link_up(t->name, err, errlen) < 0) {
        close(fd);
        return -1;
    }
    t->fd = fd;
    return 0;
}

void wisp_tapdev_close(struct wisp_tapdev *t)
{
    txq_free(t);
    if (t->fd >= 0) {
        close(t->fd);
        t->fd = -1;
    }
    t->want_pollout = 0;
}
