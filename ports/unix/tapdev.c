/**
 * @file tapdev.c
 * Linux TAP driver (see tapdev.h): /dev/net/tun in IFF_TAP | IFF_NO_PI
 * mode, non-blocking, frames copied into receive pbufs on input and
 * written with writev() straight from the chain's buffers on output.
 */
#include "tapdev.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <net/if.h>
#include <linux/if_tun.h>
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

static wisp_err_t tap_transmit(struct wisp_dev *dev, struct wisp_pbuf *frame)
{
    struct wisp_tapdev *t = (struct wisp_tapdev *)dev->ctx;
    struct iovec iov[TAP_IOV_MAX];
    const struct wisp_pbuf *q;
    int niov = 0;
    ssize_t n;

    if (t->fd < 0) {
        t->tx_errors++;
        return WISP_ERR_IF;
    }
    for (q = frame; q != NULL; q = q->next) {
        if (q->len == 0) {
            continue;
        }
        if (niov == TAP_IOV_MAX) {
            break;
        }
        iov[niov].iov_base = q->payload;
        iov[niov].iov_len = q->len;
        niov++;
    }
    if (q != NULL) {
        /* Very long chain: linearise. rxbuf is free here, a received frame
         * was copied into its pbuf before being handed to the stack. */
        uint16_t got = wisp_pbuf_copy_out(frame, t->rxbuf, frame->tot_len, 0);
        iov[0].iov_base = t->rxbuf;
        iov[0].iov_len = got;
        niov = 1;
    }
    do {
        n = writev(t->fd, iov, niov);
    } while (n < 0 && errno == EINTR);
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
        wisp_dev_tx_ready(&t->dev);
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

int wisp_tapdev_open(struct wisp_tapdev *t, struct wisp_stack *s, const char *name, char *err, size_t errlen)
{
    struct ifreq ifr;
    int fd, e;

    memset(t, 0, offsetof(struct wisp_tapdev, rxbuf));
    t->fd = -1;
    t->dev.ops = &tapdev_ops;
    t->dev.ctx = t;
    t->stack = s;
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
    if (t->fd >= 0) {
        close(t->fd);
        t->fd = -1;
    }
    t->want_pollout = 0;
}
