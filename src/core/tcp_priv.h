/**
 * @file tcp_priv.h
 * Internal declarations shared by the TCP implementation, split by
 * concern: tcp.c (PCB lifecycle, the raw API's setters and getters, ISN,
 * ports), tcp_in.c (segment arrival, the state machine, ACK processing
 * with RTT sampling and loss detection), tcp_out.c (write and
 * segmentation, output, header building, the transmit and receive
 * budgets), tcp_timer.c (the per-PCB timer: RTO, persist, keepalive,
 * delayed ACK, FIN-WAIT-2; TIME-WAIT expiry), tcp_synq.c (listeners, SYN
 * queue, SYN cookies, TIME-WAIT records and their hash index), tcp_cc.c
 * (congestion control, its interface in tcp_cc.h) and tcp_icmp.c (ICMP
 * errors, path MTU). Not part of the public API.
 */
#ifndef WISP_TCP_PRIV_H
#define WISP_TCP_PRIV_H

#include "wisp/stack.h"
#include "wisp/chksum.h"

/* --------------------------------------------------- sequence numbers
 * RFC 9293 §3.4: sequence numbers are compared modulo 2^32. Every
 * comparison of two sequence numbers (and of timestamps, RFC 7323 §5.2)
 * goes through these macros. */
#define TCP_SEQ_DIFF(a, b) ((int32_t)((uint32_t)(a) - (uint32_t)(b)))
#define TCP_SEQ_LT(a, b) (TCP_SEQ_DIFF(a, b) < 0)
#define TCP_SEQ_LEQ(a, b) (TCP_SEQ_DIFF(a, b) <= 0)
#define TCP_SEQ_GT(a, b) (TCP_SEQ_DIFF(a, b) > 0)
#define TCP_SEQ_GEQ(a, b) (TCP_SEQ_DIFF(a, b) >= 0)
/** lo <= a <= hi */
#define TCP_SEQ_BETWEEN(a, lo, hi) (TCP_SEQ_GEQ(a, lo) && TCP_SEQ_LEQ(a, hi))
#define TCP_SEQ_MAX(a, b) (TCP_SEQ_GT(a, b) ? (a) : (b))
#define TCP_SEQ_MIN(a, b) (TCP_SEQ_LT(a, b) ? (a) : (b))

/* ------------------------------------------------------- header (RFC 9293 §3.1)
 * The layout (offsets, control bits, option kinds and lengths) is defined
 * once, in the wire-format tier; tcp*.c use its WISP_TCP_* names. */
#include "wisp/prot/tcp.h"

/* RFC 9293 §3.7.1: default send MSS without the option (IPv4). */
#define TCP_DEFAULT_MSS 536u
/* RFC 7323 §2.3: the largest shift. */
#define TCP_MAX_WSCALE 14u
/* RFC 5681 §3.2 / RFC 6675 §2: DupThresh. */
#define TCP_DUPTHRESH 3u
/* RFC 5961 §7: challenge ACKs per second per stack (token bucket). */
#define TCP_CHALLENGE_PER_S 10u
/* RFC 4987 §3.6: cookie time counter period (ms) and validity (periods). */
#define TCP_COOKIE_PERIOD_MS 64000u
/* Receive blocks that out-of-order queueing never takes (all connections
 * together): the segments that fill the gaps must still find a block. */
#define TCP_OOSEQ_RX_RESERVE (WISP_PBUF_RX_COUNT / 4u > 2u ? WISP_PBUF_RX_COUNT / 4u : 2u)
/* Keep trying to hand refused data to the application this often (ms). */
#define TCP_REFUSED_RETRY_MS 20u
/* Retry output after a local transmit failure (no buffer, queue full);
 * also a SYN or SYN-ACK that never left (a local failure is no loss). */
#define TCP_OUTPUT_RETRY_MS 10u
/* The receive budget (all connections together). An announced window
 * never promises more full-size segments than the free receive blocks
 * minus this reserve can hold (the reserve stays for ACKs and control
 * segments), nor more than the connection's fair share of the blocks
 * less what its application holds; so a stack whose receive blocks are
 * held by the applications still hears the ACKs that free its transmit
 * blocks. In-order data that would take the last half of the reserve
 * (segments smaller than full-size, blocks held elsewhere) is dropped for
 * the peer to resend. */
#define TCP_RX_RESERVE (WISP_PBUF_RX_COUNT / 16u > 2u ? WISP_PBUF_RX_COUNT / 16u : 2u)
/* Transmit blocks wisp_tcp_write leaves free (copies), so that the headers
 * of ACKs, RSTs and retransmissions can always be built (the control
 * reserve C of the transmit budget, opt.h WISP_TCP_SND_MIN_BLOCKS; the
 * same expression is checked there). */
#define TCP_TX_RESERVE (WISP_PBUF_TX_COUNT / 16u > 2u ? WISP_PBUF_TX_COUNT / 16u : 2u)
/* A window held back by the receive budget is re-examined after this
 * (ms), doubling up to 16 times that while nothing changes. */
#define TCP_STARVE_RETRY_MS 20u
#define TCP_STARVE_STEPS 5u
/* A FIN-WAIT-2 connection the application closed gives up after this
 * (the peer never sends its FIN; RFC 9293 sets no limit, Linux 60 s). */
#define TCP_FIN_WAIT2_MS (2u * WISP_TCP_MSL_MS)
/* RFC 7323 §5.5: ts_recent is invalid after 24 days of idleness. */
#define TCP_PAWS_IDLE_MS (24u * 24u * 3600u * 1000u)

/* ----------------------------------------------------- segment flags */
#define TCP_SEGF_FIN 0x01u      /* carries FIN after its data */
#define TCP_SEGF_PSH 0x02u      /* last segment of a write without MORE */
#define TCP_SEGF_MORE 0x04u     /* written with WISP_TCP_WRITE_MORE */
#define TCP_SEGF_SENT 0x08u     /* transmitted at least once */
#define TCP_SEGF_SACKED 0x10u   /* covered by a SACK block (RFC 6675 scoreboard) */
#define TCP_SEGF_LOST 0x20u     /* deemed lost: retransmission pending */
#define TCP_SEGF_RTXD 0x40u     /* retransmitted since marked lost */
#define TCP_SEGF_COPY 0x80u     /* its last pbuf is our RAM block (coalescing allowed) */

/* -------------------------------------------------------- PCB flags */
#define TF_ACK_NOW 0x00000001u     /* send an ACK at the end of processing */
#define TF_ACK_DELAY 0x00000002u   /* an ACK is owed (delayed-ACK timer) */
#define TF_NODELAY 0x00000004u     /* Nagle off */
#define TF_CLOSED 0x00000008u      /* the application closed: no callbacks, orphan */
#define TF_SHUT_RX 0x00000010u     /* no more delivery */
#define TF_FIN_QUEUED 0x00000020u  /* our FIN is in the send queue */
#define TF_EOF_PENDING 0x00000040u /* peer's FIN not yet reported to recv */
/* An option compiled out (opt.h WISP_TCP_TIMESTAMPS, WISP_TCP_SACK,
 * WISP_TCP_WND_SCALE = 0) has the flag 0: every test of it is constant
 * false, so the compiler drops the code behind it with the PCB fields. */
#if WISP_TCP_TIMESTAMPS
#define TF_TS 0x00000080u          /* timestamps negotiated */
#else
#define TF_TS 0u
#endif
#if WISP_TCP_SACK
#define TF_SACK 0x00000100u        /* SACK permitted both ways */
#else
#define TF_SACK 0u
#endif
#if WISP_TCP_WND_SCALE
#define TF_WS 0x00000200u          /* window scaling in effect */
#else
#define TF_WS 0u
#endif
#define TF_DEAD 0x00000400u        /* freed while being processed */
#define TF_KEEPALIVE 0x00000800u
#define TF_RECOVERY 0x00001000u    /* in fast recovery */
#define TF_RTT 0x00002000u         /* timing rtt_seq (Karn) */
#define TF_PERSIST 0x00004000u     /* persist mode (zero window) */
#define TF_FORCE_RTX 0x00008000u   /* send the first lost segment regardless of cwnd */
#define TF_PASSIVE 0x00010000u     /* created by a listener */
#define TF_EOF_DONE 0x00020000u    /* EOF delivered */
#define TF_OUTPUT_PENDING 0x00040000u /* output asked for while the PCB was processed */
#define TF_CTL_UNSENT 0x00080000u  /* our SYN / SYN-ACK never left (local failure): retry soon */
#define TF_SCOREBOARD 0x00100000u  /* some sent segment is flagged SACKED or LOST */
#define TF_WRITE_MEM 0x00200000u   /* a write was refused for want of buffers (s->tcp.mem_waiters) */
#if WISP_TCP_SACK && WISP_TCP_DSACK
#define TF_DSACK 0x00400000u       /* pcb->dsack holds a D-SACK block to report (RFC 2883) */
#else
#define TF_DSACK 0u
#endif
#define TF_RTO_RTX 0x00800000u     /* the retransmission timeout's own output run (tcp_rto_expired) */
#define TF_PMTU_LOW 0x80000000u    /* mss is held below mss_max by the path MTU */
/* two flags of the congestion control algorithm's own (tcp_cubic.c),
 * cleared with pcb->cc when the algorithm starts */
#define TF_CC_1 0x40000000u
#define TF_CC_2 0x20000000u
#define TF_CC_MASK (TF_CC_1 | TF_CC_2)

/* Fields of compiled-out options read as constants (writes are #if'd). */
#if WISP_TCP_TIMESTAMPS
#define TCP_TS_OFF(pcb) ((pcb)->ts_off)
#define TCP_TS_RECENT(pcb) ((pcb)->ts_recent)
#else
#define TCP_TS_OFF(pcb) 0u
#define TCP_TS_RECENT(pcb) 0u
#endif
#if WISP_TCP_WND_SCALE
#define TCP_SND_WS(pcb) ((pcb)->snd_wscale)
#define TCP_RCV_WS(pcb) ((pcb)->rcv_wscale)
#else
#define TCP_SND_WS(pcb) 0u
#define TCP_RCV_WS(pcb) 0u
#endif

/* Per-connection statistics (opt.h WISP_TCP_PCB_STATS). */
#if WISP_TCP_PCB_STATS
#define TCP_STAT_ADD(pcb, field, n) ((pcb)->field += (uint32_t)(n))
#else
#define TCP_STAT_ADD(pcb, field, n) ((void)0)
#endif

/* ----------------------------------------------------------- timers */
enum {
    TCP_TMR_RTO = 0,   /* retransmission (also SYN / SYN-ACK) */
    TCP_TMR_PERSIST,   /* zero-window probe / SWS override */
    TCP_TMR_DELACK,
    TCP_TMR_KEEP,
    TCP_TMR_FW2,       /* orphaned FIN-WAIT-2 */
    TCP_TMR_POLL,
    TCP_TMR_OUTPUT,    /* deferred output after write / retry after local failure */
    TCP_TMR_REFUSED    /* refused data retry */
};
/* The deadlines of timers that are never needed at once share a slot of
 * pcb->tcnt (tcp_timer.c): RTO and PERSIST (persist mode holds no
 * retransmission timer: tcp_out.c), KEEP and FW2 (keepalive probes only
 * in ESTABLISHED / CLOSE-WAIT, FW2 only in FIN-WAIT-2 / TIME-WAIT).
 * Setting one stops its mate; tmr_on keeps one bit per timer. */
#define TCP_TMR_SLOT(w) (tcp_tmr_slot[(w)])
extern const uint8_t tcp_tmr_slot[WISP_TCP_NTMR];

/* Out-of-order arrivals whose blocks a SACK option lists first, most
 * recent first (RFC 2018 §4; the age bits of pcb->ooq->fa[]). */
#define TCP_SACK_RECENT 4u
/* pcb->ooq->fa[i]: entry i ends with a FIN; the arrivals noted since
 * its last one, up to TCP_SACK_RECENT (SACK block order). */
#define TCP_OO_FIN 0x80u
#define TCP_OO_AGE 0x7fu

/* SYN queue option bits. */
#define TCP_SYNO_SACK 0x01u
#define TCP_SYNO_TS 0x02u
#define TCP_SYNO_UNSENT 0x04u      /* the SYN-ACK never left (local failure): retry soon */

/* -------------------------------------------------- parsed segments */
struct tcp_opts {
    uint16_t mss;          /* 0 = absent */
    uint8_t ws;            /* 0xff = absent */
    uint8_t sack_ok;
    uint8_t ts;            /* TS option present */
    uint8_t nsack;
    uint32_t tsval, tsecr;
    uint32_t sack[4][2];   /* left, right edges */
};

struct tcp_in {
    const struct wisp_ip_info *ip;
    uint16_t sport, dport;
    uint32_t seq, ack;
    uint16_t wnd;
    uint8_t flags;
    uint16_t len;          /* data bytes (header hidden) */
    struct tcp_opts opt;
};

/* Endpoints of a segment we send without (or with) a PCB. */
struct tcp_tuple {
    wisp_ipaddr_t lip, rip;
    uint16_t lport, rport;
};

/* A bound address (any = every local address) covers a: the wildcard
 * or the same address. */
static inline bool tcp_ip_covers(const wisp_ipaddr_t *bound, const wisp_ipaddr_t *a)
{
    return wisp_ipaddr_is_any(bound) || wisp_ipaddr_eq(bound, a);
}

/* ------------------------------------------------------------ tcp.c */
struct wisp_tcp_common *tcp_common(struct wisp_tcp_pcb *pcb);
/* Release everything; the memory goes back to the pool unless the PCB is
 * being processed (then TF_DEAD and the processor frees it). */
void tcp_pcb_release(struct wisp_tcp_pcb *pcb);
/* Free the out-of-order queue (its data, and the queue to its pool). */
void tcp_free_ooseq(struct wisp_tcp_pcb *pcb);
/* Release and report err to the application (unless it closed). */
void tcp_pcb_kill(struct wisp_tcp_pcb *pcb, wisp_err_t err);
/* Begin/end processing pcb (deferred free). end returns false when dead. */
struct wisp_tcp_pcb *tcp_enter(struct wisp_stack *s, struct wisp_tcp_pcb *pcb);
bool tcp_leave(struct wisp_stack *s, struct wisp_tcp_pcb *pcb, struct wisp_tcp_pcb *prev);
/* End the processing begun by tcp_enter: run pcb's output when it lives
 * and (pcb->flags & need) == need (need 0: always; TF_OUTPUT_PENDING:
 * only when asked for meanwhile), then tcp_leave and re-arm its timer. */
void tcp_finish(struct wisp_stack *s, struct wisp_tcp_pcb *pcb, struct wisp_tcp_pcb *prev, uint32_t need);
bool tcp_dead(const struct wisp_tcp_pcb *pcb);
void tcp_new_defaults(struct wisp_stack *s, struct wisp_tcp_pcb *pcb);
/* Put a new connection PCB on the stack's list. */
void tcp_link(struct wisp_stack *s, struct wisp_tcp_pcb *pcb);
/* Give pcb (active or passive open) its 4-tuple t, its ISS with
 * SND.UNA = SND.NXT = ISS, its timestamp clock offset and the data bytes
 * per receive block for our MSS towards the peer; returns that MSS. */
uint16_t tcp_pcb_open(struct wisp_tcp_pcb *pcb, const struct tcp_tuple *t, uint32_t iss, uint32_t ts_off);
uint8_t tcp_rcv_wscale_ours(void);
uint16_t tcp_mss_for(struct wisp_stack *s, const wisp_ipaddr_t *dst);
/* The MSS pcb announces: tcp_mss_for its peer, capped by the user's
 * (wisp_tcp_set_user_mss, TCP_MAXSEG). */
uint16_t tcp_mss_ours(const struct wisp_tcp_pcb *pcb);
uint32_t tcp_isn(struct wisp_stack *s, const struct tcp_tuple *t);
uint32_t tcp_ts_offset(struct wisp_stack *s, const struct tcp_tuple *t);
uint64_t tcp_siphash24(const uint32_t key[4], const uint8_t *m, size_t len);
/* SipHash of a 4-tuple in a domain (0 ISN, 1 timestamp offset, 2 SYN
 * cookie) with two extra words. */
uint64_t tcp_hash(struct wisp_stack *s, const struct tcp_tuple *t, uint8_t domain, uint32_t x, uint32_t y);

/* The stack of a PCB of any kind (NULL for NULL). */
/* RFC 9293 §3.10.7.4 first step: seq lies in the receive window [nxt,
 * nxt + wnd); a zero window takes just nxt. (Windows stay below 2^30,
 * RFC 7323 §2.3, so the unsigned distance decides.) Shared by
 * connections (tcp_in.c) and SYN-queue embryos (tcp_synq.c). */
static inline bool tcp_seq_in_wnd(uint32_t seq, uint32_t nxt, uint32_t wnd)
{
    return seq - nxt < (wnd != 0u ? wnd : 1u);
}

/* Data bytes of out-of-order entry e (its pbuf's; a bare FIN: 0). */
static inline uint32_t tcp_oo_len(const struct wisp_tcp_ooseq *e)
{
    return e->p != NULL ? e->p->tot_len : 0u;
}

static inline struct wisp_stack *tcp_stack_of(const struct wisp_tcp_pcb *pcb)
{
    return pcb != NULL ? ((const struct wisp_tcp_common *)(const void *)pcb)->stack : NULL;
}
/* A PCB handed to the raw API may be a listener (struct wisp_tcp_listen,
 * the same head). */
static inline bool tcp_is_listen(struct wisp_tcp_pcb *pcb)
{
    return ((struct wisp_tcp_common *)(void *)pcb)->state == WISP_TCP_LISTEN;
}
static inline struct wisp_tcp_listen *tcp_as_listen(struct wisp_tcp_pcb *pcb)
{
    return (struct wisp_tcp_listen *)(void *)pcb;
}
#if WISP_TCP
/* True while pcb is being processed (input, timer): application calls
 * from its callbacks then defer output to the end of the processing. */
static inline bool tcp_in_proc(const struct wisp_tcp_pcb *pcb)
{
    return pcb->c.stack->tcp.in_pcb == pcb;
}
#endif

/* ------------------------------------------------------ tcp_timer.c */
void tcp_timer_set(struct wisp_tcp_pcb *pcb, unsigned which, uint32_t delay_ms);
void tcp_timer_clear(struct wisp_tcp_pcb *pcb, unsigned which);
/** tcp_timer_set of the retransmission timer for the current RTO. */
void tcp_rto_arm(struct wisp_tcp_pcb *pcb);
/** t doubled n times, at most WISP_TCP_RTO_MAX_MS (RFC 6298 §5.5 backoff). */
uint32_t tcp_backoff(uint32_t t, unsigned n);
bool tcp_timer_on(const struct wisp_tcp_pcb *pcb, unsigned which);
uint32_t tcp_timer_due(const struct wisp_tcp_pcb *pcb, unsigned which); /* its deadline (ms; when on) */
void tcp_rto_expired(struct wisp_tcp_pcb *pcb);
void tcp_persist_expired(struct wisp_tcp_pcb *pcb);
/* Arm t for deadline due (any) or cancel it (!any). */
void tcp_timer_arm_at(struct wisp_stack *s, struct wisp_timer *t, bool any, uint32_t due, wisp_timer_fn fn);
#if WISP_TCP_TW_COMPACT
/* Arm the stack's TIME-WAIT timer for the earliest record's expiry. */
void tcp_tw_arm(struct wisp_stack *s);
#endif

/* ------------------------------------------------------- tcp_synq.c */
/* Free a listener and its SYN-queue entries. */
void tcp_listen_free(struct wisp_tcp_listen *l);
/* Empty the hash index of the SYN queue and the TIME-WAIT records. */
void tcp_hindex_reset(struct wisp_stack *s);
#if WISP_TCP_TW_COMPACT
/* Free TIME-WAIT record w (in the index). */
void tcp_tw_free(struct wisp_stack *s, struct wisp_tcp_tw *w);
/* A connection PCB from the pool (NULL when none is free). */
#define tcp_pcb_alloc(s) ((struct wisp_tcp_pcb *)wisp_pool_alloc(&(s)->pool[WISP_POOL_TCP_PCB]))
#else
/* A connection PCB from the pool; when none is free, the TIME-WAIT PCB
 * nearest its end is recycled (NULL when there is none either). */
struct wisp_tcp_pcb *tcp_pcb_alloc(struct wisp_stack *s);
/* End the TIME-WAIT of pcb (a PCB on s->tcp.tw_pcbs): free it. */
void tcp_tw_pcb_end(struct wisp_tcp_pcb *pcb);
#endif
void tcp_enter_time_wait(struct wisp_tcp_pcb *pcb);
/* True when a connection in TIME-WAIT uses local port lport (t NULL) or
 * exactly the 4-tuple t (t->lport == lport). */
bool tcp_tw_uses(const struct wisp_stack *s, uint16_t lport, const struct tcp_tuple *t);
/* Free every TIME-WAIT record or PCB and stop their timer (deinit). */
void tcp_tw_reset(struct wisp_stack *s);
/* Input of segments for TIME-WAIT / SYN queue / listeners (consume p).
 * Each returns true when it handled the segment (only then may the SYN
 * queue or a listener have changed *in: tcp_process, no copy made). */
bool tcp_tw_input(struct wisp_stack *s, struct wisp_pbuf *p, const struct tcp_in *in);
bool tcp_synq_input(struct wisp_stack *s, struct wisp_pbuf *p, struct tcp_in *in);
bool tcp_listen_input(struct wisp_stack *s, struct wisp_pbuf *p, struct tcp_in *in);

/* --------------------------------------------------------- tcp_in.c */
/* Continue processing a segment on a PCB (used for the final ACK of a
 * handshake that created pcb). Consumes p. */
void tcp_process(struct wisp_tcp_pcb *pcb, struct wisp_pbuf *p, struct tcp_in *in);
/* Hand data (or EOF) held back to the application (timer retry). */
void tcp_deliver_refused(struct wisp_tcp_pcb *pcb);
/* Free the refused data; returns its bytes. */
uint32_t tcp_refused_free(struct wisp_tcp_pcb *pcb);
/* Drop n bytes from the front of chain p (returns the new head, NULL when
 * nothing is left). */
struct wisp_pbuf *tcp_pbuf_skip(struct wisp_pbuf *p, uint32_t n);
bool tcp_challenge_allowed(struct wisp_stack *s);
void tcp_set_established(struct wisp_tcp_pcb *pcb);
/* The peer's SYN taken by a PCB (IRS, RCV.NXT, the offered window, MSS,
 * window scale, SACK and timestamps; tcp_in.c). */
void tcp_syn_take(struct wisp_tcp_pcb *pcb, uint32_t irs, uint32_t offered, uint16_t peer_mss, uint8_t ws,
                  unsigned synopts, uint32_t tsval);
/* Process an acceptable ACK (RFC 9293 §3.10.7.4 fifth step, ESTABLISHED
 * rules), RTT sampling, loss detection and recovery, congestion control
 * (through tcp_cc.h). False when pcb died (sent callback aborted it). */
bool tcp_ack_received(struct wisp_tcp_pcb *pcb, const struct tcp_in *in);
void tcp_rtt_sample(struct wisp_tcp_pcb *pcb, uint32_t rtt);

/* -------------------------------------------------------- tcp_out.c */
wisp_err_t tcp_xmit_raw(struct wisp_stack *s, const struct tcp_tuple *t, uint32_t seq, uint32_t ack, uint8_t flags,
                        uint16_t wnd, const uint8_t *opt, uint8_t optlen, struct wisp_pbuf *data, uint8_t tos,
                        uint8_t ttl);
/* The endpoints of a segment we reply to (ours local). */
void tcp_in_tuple(const struct tcp_in *in, struct tcp_tuple *t);
/* RST in reply to a segment (RFC 9293 §3.10.7.1), never to a RST. */
void tcp_rst_reply(struct wisp_stack *s, const struct tcp_in *in);
void tcp_send_rst(struct wisp_tcp_pcb *pcb);
/* Reset and free pcb, the application not told (TF_CLOSED). */
void tcp_rst_close(struct wisp_tcp_pcb *pcb);
wisp_err_t tcp_send_ack(struct wisp_tcp_pcb *pcb);
void tcp_send_challenge_ack(struct wisp_tcp_pcb *pcb);
wisp_err_t tcp_send_syn(struct wisp_tcp_pcb *pcb);
wisp_err_t tcp_send_keepalive(struct wisp_tcp_pcb *pcb);
/* The output engine: retransmissions, new data, ACKs. */
void tcp_output_run(struct wisp_tcp_pcb *pcb);
/* Output now, or at the end of the processing when pcb is being
 * processed (an application call from one of its callbacks). */
void tcp_output_soon(struct wisp_tcp_pcb *pcb);
/* Transmit segment g (first time or retransmission). */
wisp_err_t tcp_send_seg(struct wisp_tcp_pcb *pcb, struct wisp_tcp_seg *g, bool rtx);
/* Split the first n bytes (0 < n < g->len) of the unsent segment g into
 * a new segment in front of it (a copy). False when out of memory. */
bool tcp_seg_split(struct wisp_tcp_pcb *pcb, struct wisp_tcp_seg *g, uint32_t n);
/* A new segment holding a copy of bytes [off, off + n) of g's data, its
 * seq set (flags 0; not linked, not accounted). NULL when out of segments
 * or buffers (not counted). */
struct wisp_tcp_seg *tcp_seg_copy(struct wisp_stack *s, const struct wisp_tcp_seg *g, uint32_t off, uint32_t n);
/* The link that points at g in pcb's send queue (at the NULL end when g
 * is not queued). */
struct wisp_tcp_seg **tcp_seg_pp(struct wisp_tcp_pcb *pcb, const struct wisp_tcp_seg *g);
/* Receive budget: data bytes one receive block holds for a connection
 * announcing mss; the receive blocks new window space may take now
 * (returned) and, in *share, a connection's fair share of the budget
 * with npcbs connections (blocks its application holds and its window
 * promises, in all); the right edge the buffer and the budget allow pcb
 * now (*limited: the free blocks cut it; *buf: the receive buffer of the
 * receiver SWS rule, RFC 9293 §3.8.6.2.2 RCV.BUFF -- the connection's
 * buffer, tcp_wnd_max, at most its fair share of the budget). */
uint16_t tcp_rx_blk(uint16_t mss);
/* tcp_out.c: chain helpers (also for received data, tcp_in.c) */
struct wisp_pbuf *tcp_pbuf_last(struct wisp_pbuf *p);
uint32_t tcp_tailroom(const struct wisp_pbuf *p);
void tcp_chain_grow(struct wisp_pbuf *h, uint16_t n);
uint32_t tcp_rx_blocks_avail(struct wisp_stack *s, uint32_t npcbs, uint32_t *share);
uint32_t tcp_rcv_right(struct wisp_tcp_pcb *pcb, bool *limited, uint32_t *buf);
/* The window a SYN or SYN-ACK offers (unscaled, RFC 7323 §2.2): want,
 * at most 65535, within the receive budget shared by npcbs connections
 * with blk data bytes per receive block. */
uint16_t tcp_syn_wnd(struct wisp_stack *s, uint32_t want, uint32_t npcbs, uint32_t blk);
/* Options of a SYN or SYN-ACK (returns the length). mss = ours;
 * ws 0xff = none; tsval/tsecr used when ts. */
uint8_t tcp_build_syn_opts(uint8_t *o, uint16_t mss, uint8_t ws, bool sack, bool ts, uint32_t tsval,
                           uint32_t tsecr);
/* Four option bytes as one word (network order). */
#define TCP_OPT4(a, b, c, d) (((uint32_t)(a) << 24) | ((uint32_t)(b) << 16) | ((uint32_t)(c) << 8) | (uint32_t)(d))
/* RFC 7323 §3.2 timestamps at o behind two bytes b in the top of a word
 * (NOP NOP, or a SYN's SACK-permitted, RFC 2018 §2); returns the end. */
uint8_t *tcp_put_ts(uint8_t *o, uint32_t b, uint32_t tsval, uint32_t tsecr);
uint16_t tcp_wnd_field(struct wisp_tcp_pcb *pcb);
uint32_t tcp_tsval(const struct wisp_tcp_pcb *pcb);
void tcp_free_sndq(struct wisp_tcp_pcb *pcb);
/* pcb's write was refused for want of buffers / buffers were given back:
 * the refused writers get an early poll. */
void tcp_mem_wait(struct wisp_tcp_pcb *pcb);
void tcp_mem_freed(struct wisp_stack *s);
uint32_t tcp_seg_max(const struct wisp_tcp_pcb *pcb);
/* Transmit budget: account a queued segment's blocks anew; free a
 * segment unlinked from pcb's queue and uncount its blocks. */
void tcp_seg_account(struct wisp_tcp_pcb *pcb, struct wisp_tcp_seg *g);
void tcp_seg_drop(struct wisp_tcp_pcb *pcb, struct wisp_tcp_seg *g);
/* RFC 9293 §3.10.4 CLOSE, the sending half (SYN-RECEIVED, ESTABLISHED,
 * CLOSE-WAIT): queue our FIN (flag on the last unsent segment or an empty
 * segment) and move the state; WISP_ERR_CONN in other states. */
wisp_err_t tcp_close_tx(struct wisp_tcp_pcb *pcb);

/* --------------------------------------------------------- tcp_cc.c */
/* RFC 6928 §2 initial window for an SMSS (the rest: tcp_cc.h). */
uint32_t tcp_initial_cwnd(uint32_t mss);

/* ------------------------------------------------------- tcp_icmp.c */
/* Path MTU at establishment: remember the unlimited MSS, apply a cached
 * path MTU. */
void tcp_pmtu_init(struct wisp_tcp_pcb *pcb);
/* Output hook: raise a lowered MSS again once its time has come. */
void tcp_pmtu_check(struct wisp_tcp_pcb *pcb);
/* Output hook: re-cut the sent segment *gp, longer than the send MSS since
 * the path MTU fell, into copies of at most one MSS; *gp becomes the
 * first. False when out of buffers (nothing changed; retry later). */
bool tcp_pmtu_recut(struct wisp_tcp_pcb *pcb, struct wisp_tcp_seg **gp);
/* RTO hook (after nrtx was counted): black-hole detection (RFC 4821). */
void tcp_pmtu_rto(struct wisp_tcp_pcb *pcb);
/* The error a connect that ran out of SYN retries reports: the last soft
 * ICMP error, else WISP_ERR_TIMEOUT. */
wisp_err_t tcp_icmp_timeout_err(const struct wisp_tcp_pcb *pcb);

/* The largest window we can announce: the buffer, or 65535 << shift when
 * that is smaller (no window scaling with this peer). RCV.BUFF of the
 * receiver SWS rule. */
static inline uint32_t tcp_wnd_max(const struct wisp_tcp_pcb *pcb)
{
    uint32_t m = (uint32_t)65535u << TCP_RCV_WS(pcb);
    return pcb->rcv_buf < m ? pcb->rcv_buf : m; /* SO_RCVBUF (wisp_tcp_set_bufs) */
}

/* The sequence number after segment g (its FIN counts). */
static inline uint32_t tcp_seg_end(const struct wisp_tcp_seg *g)
{
    return g->seq + g->len + ((g->flags & TCP_SEGF_FIN) ? 1u : 0u);
}

static inline bool tcp_state_synced(unsigned st)
{
    return st >= WISP_TCP_ESTABLISHED && st <= WISP_TCP_TIME_WAIT;
}

#endif /* WISP_TCP_PRIV_H */
