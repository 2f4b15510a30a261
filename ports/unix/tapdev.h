/**
 * @file tapdev.h
 * Linux TAP driver: a wisp device over /dev/net/tun (IFF_TAP | IFF_NO_PI).
 * Frames written by Linux to the tap interface are received by the stack;
 * frames the stack transmits appear on the Linux side.
 *
 * The fd is non-blocking. The owner's event loop polls it with the events
 * from wisp_tapdev_poll_events() and calls wisp_tapdev_handle() with what
 * poll() returned: readable -> up to a bounded batch of frames is read into
 * receive pbufs and handed to the stack; writable after a refused write ->
 * the stack is told the device is free again (wisp_dev_tx_ready).
 *
 * Who may call: the thread that owns the stack (core context).
 */
#ifndef WISP_TAPDEV_H
#define WISP_TAPDEV_H

#include <stddef.h>
#include <stdint.h>

#include "wisp/netif.h"

/** Largest frame read from or written to the tap (bytes). */
#define WISP_TAPDEV_MAX_FRAME 65536u
/** Frames read per wisp_tapdev_handle() call at most (bounded work). */
#define WISP_TAPDEV_RX_BATCH 64u

struct wisp_tapdev {
    struct wisp_dev dev;              /**< the device (wrap it or attach it) */
    struct wisp_stack *stack;
    int fd;                           /**< -1 when closed */
    char name[16];                    /**< interface name (IFNAMSIZ) */
    uint8_t want_pollout;             /**< a write said EAGAIN: wait for POLLOUT */
    uint32_t rx_frames, rx_bytes;     /**< frames handed to the stack */
    uint32_t rx_nomem;                /**< frames dropped: receive pool empty */
    uint32_t rx_errors;               /**< read errors other than EAGAIN, runts */
    uint32_t tx_frames, tx_bytes;     /**< frames written */
    uint32_t tx_wouldblock;           /**< writes refused with EAGAIN */
    uint32_t tx_errors;               /**< other write errors, oversize frames */
    uint8_t rxbuf[WISP_TAPDEV_MAX_FRAME];
};

/** Open (or create) the tap interface name and bring its Linux side up
 *  when it is down; no address is configured. On failure returns -1 and
 *  writes a readable reason into err (errlen bytes). t is large (64 KB
 *  receive buffer): allocate it statically or on the heap. */
int wisp_tapdev_open(struct wisp_tapdev *t, struct wisp_stack *s, const char *name, char *err, size_t errlen);
/** Close the fd (the kernel removes a non-persistent interface). */
void wisp_tapdev_close(struct wisp_tapdev *t);

/** poll() events to wait for (POLLIN, plus POLLOUT after a refused write). */
short wisp_tapdev_poll_events(const struct wisp_tapdev *t);
/** Handle what poll() reported for the fd: receive a bounded batch, resume
 *  transmission. Returns the number of frames received. */
unsigned wisp_tapdev_handle(struct wisp_tapdev *t, short revents);
/** Read up to max frames now (non-blocking); returns how many were read. */
unsigned wisp_tapdev_rx(struct wisp_tapdev *t, unsigned max);

/** The stack-side MAC for an IPv4 address (network order):
 *  02:77:69:73:70:NN ("wisp", locally administered), NN = last octet. */
void wisp_tapdev_mac_for(uint32_t ip4_be, uint8_t mac[6]);

#endif /* WISP_TAPDEV_H */
