/**
 * @file tcp_cc.h
 * Congestion control behind a small per-connection operations interface
 * (private to src/core/tcp*.c). The TCP core keeps what every algorithm
 * shares -- slow start (RFC 5681 §3.1), loss detection, fast recovery and
 * its window arithmetic (RFC 6675 §5, RFC 6582 §3.2), the loss window
 * after a timeout -- and asks the connection's algorithm (pcb->c.cc_algo)
 * only what differs: how the window grows in congestion avoidance and
 * how far it is cut on a congestion event.
 *
 * Algorithms: NewReno (RFC 5681 + RFC 6582; tcp_cc.c, always compiled)
 * and CUBIC (RFC 9438; tcp_cubic.c, WISP_TCP_CUBIC). Their per-connection
 * state is pcb->cc (union wisp_tcp_cc_state, wisp/priv/tcp.h).
 */
#ifndef WISP_TCP_CC_H
#define WISP_TCP_CC_H

#include "wisp/tcp.h"

struct tcp_cc_ops {
    const char *name;   /**< as Linux's TCP_CONGESTION names it */
    /** The connection became synchronized (cwnd = initial window and
     *  ssthresh "arbitrarily high" are set), or the algorithm was chosen
     *  for a synchronized connection (cwnd, ssthresh kept): reset the
     *  algorithm's own state. */
    void (*init)(struct wisp_tcp_pcb *pcb, uint32_t now);
    /** Congestion avoidance (cwnd >= ssthresh, outside loss recovery,
     *  while cwnd limits the sender): acked bytes of new data were
     *  acknowledged; grow pcb->cwnd. */
    void (*cong_avoid)(struct wisp_tcp_pcb *pcb, uint32_t acked, uint32_t now);
    /** A congestion event: loss detected by duplicate ACKs or the SACK
     *  scoreboard (rto false: fast recovery follows, the core sets cwnd
     *  from the result), or the first retransmission timeout of a series
     *  (rto true: the core sets cwnd to the loss window, 1 SMSS). flight:
     *  bytes outstanding. Returns the new ssthresh, at least 2 SMSS. */
    uint32_t (*ssthresh)(struct wisp_tcp_pcb *pcb, uint32_t flight, bool rto, uint32_t now);
    /** Loss recovery ended with a full ACK (cwnd already set from
     *  ssthresh by the core). May be NULL. */
    void (*recovered)(struct wisp_tcp_pcb *pcb, uint32_t now);
};

extern const struct tcp_cc_ops tcp_cc_newreno;
#if WISP_TCP_CUBIC
extern const struct tcp_cc_ops tcp_cc_cubic;
/** Floor of the cube root of x (tcp_cubic.c; exposed for its unit test). */
uint32_t tcp_cubic_cbrt(uint64_t x);
#endif

/** The operations of pcb's algorithm. */
const struct tcp_cc_ops *tcp_cc_ops_of(const struct wisp_tcp_pcb *pcb);

/* Called by the TCP core (tcp_in.c, tcp_timer.c): */
/** Initial window and ssthresh when the connection becomes synchronized. */
void tcp_cc_init(struct wisp_tcp_pcb *pcb, uint32_t now);
/** New data acknowledged outside loss recovery: slow start or the
 *  algorithm's congestion avoidance; flight = bytes outstanding before
 *  this ACK (the window grows only while it limits the sender). */
void tcp_cc_ack(struct wisp_tcp_pcb *pcb, uint32_t acked, uint32_t flight, uint32_t now);
/** The new ssthresh on a congestion event (see the ops). */
uint32_t tcp_cc_ssthresh(struct wisp_tcp_pcb *pcb, uint32_t flight, bool rto, uint32_t now);
/** Loss recovery ended with a full ACK. */
#if WISP_TCP_CUBIC
void tcp_cc_recovered(struct wisp_tcp_pcb *pcb, uint32_t now);
#else
static inline void tcp_cc_recovered(struct wisp_tcp_pcb *pcb, uint32_t now)
{
    (void)pcb; /* NewReno alone: nothing to do */
    (void)now;
}
#endif

#endif /* WISP_TCP_CC_H */
