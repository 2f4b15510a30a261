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
 * Who may call: the thread that owns the stack (core context), except the
 * deferred-transmit calls below.
 *
 * Deferred transmission (wisp_tapdev_tx_defer; for a stack on its stack
 * thread, where transmit runs under the core lock in whichever thread holds
 * it): transmit only copies the frame into a ring and returns; the I/O
 * thread writes the ring to the fd with wisp_tapdev_tx_flush() WITHOUT the
 * core lock, so a write(2) -- in which Linux runs its whole receive path --
 * never holds the stack up. A producer that queues into the ring while the
 * I/O thread sleeps signals the wake fd (an eventfd the I/O thread polls
 * too). A full ring refuses the frame (WISP_ERR_WOULDBLOCK, the interface
 * queues it); wisp_tapdev_tx_ready_due() then tells the I/O thread to call
 * wisp_dev_tx_ready() under the core lock once room is back.
 */
#ifndef WISP_TAPDEV_H
#define WISP_TAPDEV_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "wisp/netif.h"

/** Largest frame read from or written to the tap (bytes). */
#define WISP_TAPDEV_MAX_FRAME 65536u
/** Frames read per wisp_tapdev_handle() call at most (bounded work). */
#define WISP_TAPDEV_RX_BATCH 64u
/** Default size of the deferred-transmit ring (bytes). */
#define WISP_TAPDEV_TXQ_BYTES (512u * 1024u)

struct wisp_tapdev_txq;

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
    uint32_t tx_ring_full;            /**< deferred: frames refused, ring full */
    uint32_t tx_ring_high;            /**< deferred: ring use high-water mark (bytes) */
    uint32_t tx_ring_kicks;           /**< deferred: wake fd signalled (I/O thread asleep) */
    uint32_t tx_ring_direct;          /**< deferred: short frames their producer wrote (tx_direct_max) */
    struct wisp_tapdev_txq *txq;      /**< deferred-transmit ring, NULL = direct */
    uint8_t rxbuf[WISP_TAPDEV_MAX_FRAME];
};

/** Open (or create) the tap interface name and bring its Linux side up
 *  when it is down; no address is configured. On failure returns -1 and
 *  writes a readable reason into err (errlen bytes). t is large (64 KB
 *  receive buffer): allocate it statically or on the heap. */
int wisp_tapdev_open(struct wisp_tapdev *t, struct wisp_stack *s, const char *name, char *err, size_t errlen);
/** Use fd, already open and non-blocking, carrying one frame per read and
 *  write (a tap opened elsewhere; a SOCK_SEQPACKET socket in tests),
 *  instead of opening /dev/net/tun; name (may be NULL) is for messages.
 *  wisp_tapdev_close() closes it. */
void wisp_tapdev_attach_fd(struct wisp_tapdev *t, struct wisp_stack *s, int fd, const char *name);
/** Close the fd (the kernel removes a non-persistent interface). */
void wisp_tapdev_close(struct wisp_tapdev *t);

/** poll() events to wait for (POLLIN, plus POLLOUT after a refused write). */
short wisp_tapdev_poll_events(const struct wisp_tapdev *t);
/** Handle what poll() reported for the fd: receive a bounded batch, resume
 *  transmission (deferred mode: POLLOUT only clears the wait, the next
 *  wisp_tapdev_tx_flush() writes again). Returns the number of frames
 *  received. */
unsigned wisp_tapdev_handle(struct wisp_tapdev *t, short revents);
/** Read up to max frames now (non-blocking); returns how many were read. */
unsigned wisp_tapdev_rx(struct wisp_tapdev *t, unsigned max);

/** Switch to deferred transmission with a ring of ring_bytes (0 =
 *  WISP_TAPDEV_TXQ_BYTES; a frame that would not fit into the empty ring
 *  is dropped and counted in tx_errors). Call before
 *  other threads may transmit. -1 (reason in err) when out of memory or
 *  no eventfd. Core context. */
int wisp_tapdev_tx_defer(struct wisp_tapdev *t, size_t ring_bytes, char *err, size_t errlen);
/** Back to direct transmission: write what the ring holds, free it. Call
 *  when no other thread transmits any more (core context). */
void wisp_tapdev_tx_direct(struct wisp_tapdev *t);
/** Deferred: a frame of at most bytes (0, the default: none) that finds
 *  the ring empty while the I/O thread sleeps is written by its producer
 *  at once (under the core lock), instead of waking the I/O thread to
 *  write it: one system call either way, and no thread switch on the
 *  request/response path (ACKs, SYN-ACKs, FINs, short replies). Longer
 *  frames always go through the ring, so bulk writes stay off the lock.
 *  Any thread, after wisp_tapdev_tx_defer(). */
void wisp_tapdev_tx_direct_max(struct wisp_tapdev *t, size_t bytes);
/** Deferred: the fd to poll for POLLIN besides the tap (signalled when a
 *  frame is queued while the I/O thread sleeps); -1 in direct mode. */
int wisp_tapdev_tx_wake_fd(const struct wisp_tapdev *t);
/** Deferred: write up to max queued frames to the tap (no core lock; the
 *  I/O thread only). Returns the number written; stops early when the fd
 *  says EAGAIN (then poll for POLLOUT: wisp_tapdev_poll_events). */
unsigned wisp_tapdev_tx_flush(struct wisp_tapdev *t, unsigned max);
/** Deferred: frames are waiting in the ring (any thread). */
bool wisp_tapdev_tx_pending(struct wisp_tapdev *t);
/** Deferred: the ring refused a frame and has room again; true once per
 *  refusal: call wisp_dev_tx_ready(&t->dev) under the core lock (I/O
 *  thread). */
bool wisp_tapdev_tx_ready_due(struct wisp_tapdev *t);
/** Deferred, I/O thread, before it waits in poll: true when the ring is
 *  empty and from now on producers signal the wake fd (then wait; else
 *  flush first). Always pair a true with wisp_tapdev_tx_sleep_end(). */
bool wisp_tapdev_tx_sleep_begin(struct wisp_tapdev *t);
/** Deferred, I/O thread, after the poll: producers stop signalling;
 *  wake_revents are the poll's revents of the wake fd (drained when
 *  readable). */
void wisp_tapdev_tx_sleep_end(struct wisp_tapdev *t, short wake_revents);

/** The stack-side MAC for an IPv4 address (network order):
 *  02:77:69:73:70:NN ("wisp", locally administered), NN = last octet. */
void wisp_tapdev_mac_for(uint32_t ip4_be, uint8_t mac[6]);

#endif /* WISP_TAPDEV_H */
