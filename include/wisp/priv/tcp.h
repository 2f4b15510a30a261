/**
 * @file priv/tcp.h
 * Private tier: the layout of the structures of wisp/tcp.h that a user
 * allocates or that the stack instance holds. Not API: applications
 * use the functions of wisp/tcp.h; the members are named through
 * WISP_PRIV() (wisp/arch.h), so code outside the library (no
 * WISP_PRIVATE_ACCESS) cannot use them by accident. May change in
 * any release.
 */
#ifndef WISP_PRIV_TCP_H
#define WISP_PRIV_TCP_H

#include "wisp/tcp.h"

/** One segment of the send queue: the data of [seq, seq + len) plus a FIN
 *  when flagged. p holds the data only (never a header), so a segment can
 *  be (re)transmitted at any time by chaining it behind a fresh header. */
struct wisp_tcp_seg {
    struct wisp_tcp_seg *WISP_PRIV(next);
    struct wisp_pbuf *WISP_PRIV(p);          /**< data (NULL when len == 0) */
    uint32_t WISP_PRIV(seq);                 /**< first sequence number */
    uint32_t WISP_PRIV(sent_ms);             /**< time of the last transmission */
    uint16_t WISP_PRIV(len);                 /**< data bytes (FIN not counted) */
    uint8_t WISP_PRIV(flags);                /**< TCP_SEGF_* (tcp_priv.h) */
    uint8_t WISP_PRIV(nrtx);                 /**< retransmissions of this segment */
    uint16_t WISP_PRIV(nblk);                /**< transmit blocks of copied data it holds (counted in the PCB's snd_blk) */
};

/** The head shared by connection and listening PCBs. */
struct wisp_tcp_common {
    struct wisp_stack *WISP_PRIV(stack);
    void *WISP_PRIV(arg);                    /**< callback argument */
    wisp_ipaddr_t WISP_PRIV(local_ip);       /**< any = all local addresses (unbound / wildcard) */
    uint16_t WISP_PRIV(local_port);          /**< 0 = not bound */
    uint8_t WISP_PRIV(state);                /**< enum wisp_tcp_state */
    uint8_t WISP_PRIV(tos);                  /**< IP TOS (DSCP << 2) */
    uint8_t WISP_PRIV(ttl);                  /**< 0 = default */
    uint8_t WISP_PRIV(cc_algo);              /**< enum wisp_tcp_cc (tcp_cc.c); a listener's: of the connections it accepts */
    /* two bytes of the connection PCB, here where the head has room (a
     * listener leaves them 0) */
    uint8_t WISP_PRIV(syn_rtx);              /**< SYN / SYN-ACK retransmissions */
    uint8_t WISP_PRIV(keep_probes);          /**< unanswered keepalive probes */
};

/** A listening PCB (LISTEN only; small). */
struct wisp_tcp_listen {
    struct wisp_tcp_common WISP_PRIV(c);     /**< must be first */
    struct wisp_tcp_listen *WISP_PRIV(next);
    wisp_tcp_accept_fn WISP_PRIV(accept);
    wisp_tcp_accept_ready_fn WISP_PRIV(ready); /**< NULL: the accept queue always has room */
    uint8_t WISP_PRIV(backlog);              /**< SYN-queue entries this listener may hold */
    uint8_t WISP_PRIV(synq_n);               /**< entries it holds now */
};

/** An out-of-order received segment (data only, header hidden): the
 *  data [seq, seq + p->tot_len); its FIN and SACK age are its queue's
 *  fa[] byte of the same index (tcp_priv.h TCP_OO_*). */
struct wisp_tcp_ooseq {
    struct wisp_pbuf *WISP_PRIV(p);          /**< NULL for a FIN without data */
    uint32_t WISP_PRIV(seq);
};

/** A connection's out-of-order queue, in sequence order: taken from the
 *  stack's pool (WISP_POOL_TCP_OOSEQ, opt.h WISP_TCP_OOSEQ_COUNT) with its
 *  first entry, given back when it empties (tcp_in.c). */
struct wisp_tcp_ooq {
    struct wisp_tcp_ooseq WISP_PRIV(e)[WISP_TCP_OOSEQ_SLOTS];
    uint16_t WISP_PRIV(bufs);                /**< receive buffers it holds */
    uint8_t WISP_PRIV(n);                    /**< entries in e[] (> 0 while the PCB holds it) */
    uint8_t WISP_PRIV(fa)[WISP_TCP_OOSEQ_SLOTS]; /**< of e[i]: TCP_OO_FIN | SACK age (tcp_priv.h) */
};

/** Per-connection state of the congestion control algorithm (tcp_cc.h). */
union wisp_tcp_cc_state {
    uint32_t WISP_PRIV(none_);
#if WISP_TCP_CUBIC
    struct {                      /* RFC 9438 §4 (tcp_cubic.c) */
        uint32_t WISP_PRIV(w_max);           /**< W_max, bytes (§4.1.2): plateau of the curve of this stage */
        uint32_t WISP_PRIV(cwnd_prior);      /**< cwnd_prior, bytes (§4.1.2): cwnd at the last congestion event */
        uint32_t WISP_PRIV(w_est);           /**< W_est, bytes (§4.3): Reno-friendly estimate */
        uint32_t WISP_PRIV(k_ms);            /**< K, ms (§4.2): time of this stage's curve to reach W_max */
        uint32_t WISP_PRIV(epoch_ms);        /**< t_epoch, ms (§4.2): start of this stage, idle time excluded */
        uint32_t WISP_PRIV(last_ms);         /**< last window growth, ms (idle detection, §5.8) */
        uint32_t WISP_PRIV(est_acc);         /**< W_est growth not yet a whole byte (scaled remainder) */
        uint32_t WISP_PRIV(cwnd_acc);        /**< cwnd growth not yet a whole byte (remainder) */
    } WISP_PRIV(cubic);                      /* (its flags: TF_CC_* of the PCB's flags, tcp_cubic.c) */
#endif
};

/* Types of the receive / send buffer sizes of a PCB: 16-bit when their
 * compile-time bounds fit. */
#if WISP_TCP_WND <= 0xffff
typedef uint16_t wisp_tcp_rsize_t;
#else
typedef uint32_t wisp_tcp_rsize_t;
#endif
#if WISP_TCP_SND_BUF <= 0xffff
typedef uint16_t wisp_tcp_ssize_t;
#else
typedef uint32_t wisp_tcp_ssize_t;
#endif

/** A connection PCB (SYN-SENT .. LAST-ACK, or CLOSED before connect).
 *  The most used fields first, within reach of the short loads of Thumb
 *  (62 bytes for 16-bit fields, 124 for words: ~150 bytes of M4 code
 *  against a layout by topic), in groups that a 32-bit target pads
 *  nothing in (words, then 16-bit, then bytes); the fields of an option
 *  compiled out
 *  (opt.h WISP_TCP_TIMESTAMPS, WISP_TCP_SACK, WISP_TCP_DSACK,
 *  WISP_TCP_WND_SCALE, WISP_TCP_PCB_STATS) are gone. */
struct wisp_tcp_pcb {
    struct wisp_tcp_common WISP_PRIV(c);     /**< must be first */
    struct wisp_tcp_pcb *WISP_PRIV(next);
    wisp_ipaddr_t WISP_PRIV(remote_ip);
    uint16_t WISP_PRIV(remote_port);
    uint16_t WISP_PRIV(mss);                 /**< effective send MSS (RFC 6691: options excluded) */
    uint32_t WISP_PRIV(flags);               /**< TF_* (tcp_priv.h) */

    /* much used 16-bit fields. Buffer sizes: wisp_tcp_set_bufs clamps
     * them to WISP_TCP_WND and WISP_TCP_SND_BUF, 16-bit when those fit;
     * two of a kind keep the fields after them aligned either way. */
    wisp_tcp_rsize_t WISP_PRIV(rcv_wnd);     /**< buffer space the application left us */
    wisp_tcp_rsize_t WISP_PRIV(rcv_buf);     /**< receive buffer = largest window, bytes (default WISP_TCP_WND) */
    wisp_tcp_ssize_t WISP_PRIV(snd_queued);  /**< bytes written and not yet acknowledged (<= snd_buf) */
    wisp_tcp_ssize_t WISP_PRIV(snd_buf);     /**< send buffer, bytes (default WISP_TCP_SND_BUF) */

    uint16_t WISP_PRIV(mss_max);             /**< send MSS without a path MTU limit (set when synchronized) */
    uint16_t WISP_PRIV(snd_blk);             /**< transmit blocks its queued copies hold (transmit budget share) */
    uint16_t WISP_PRIV(rcv_blk);             /**< data bytes one receive block holds (full-size segments) */
#if WISP_TCP_RTO_MAX_MS <= 0xffff
    uint16_t WISP_PRIV(rto);                 /**< RTO (RFC 6298), ms */
#else
    uint16_t WISP_PRIV(user_mss);            /**< TCP_MAXSEG cap of the MSS, 0 = none */
    uint32_t WISP_PRIV(rto);                 /**< RTO (RFC 6298), ms */
#endif

    /* much used words (sequence space RFC 9293 §3.3.1, congestion
     * control RFC 5681) */
    uint32_t WISP_PRIV(rcv_nxt), WISP_PRIV(snd_una);
    uint32_t WISP_PRIV(snd_nxt);             /**< highest sequence sent + 1 (SND.MAX) */
    struct wisp_tcp_seg *WISP_PRIV(sndq_next); /**< first segment never sent */
    uint32_t WISP_PRIV(cwnd);
    struct wisp_tcp_seg *WISP_PRIV(sndq);    /**< every queued segment, in sequence order */
    struct wisp_pbuf *WISP_PRIV(refused)[WISP_TCP_REFUSED_SLOTS]; /**< data the recv callback refused, in order */
    uint32_t WISP_PRIV(rcv_adv);             /**< right edge advertised (never moves left) */
    struct wisp_tcp_seg *WISP_PRIV(sndq_tail);
    struct wisp_tcp_ooq *WISP_PRIV(ooq);     /**< out-of-order queue, NULL = none (empty) */
    uint32_t WISP_PRIV(ssthresh);
    uint32_t WISP_PRIV(snd_wnd);
    uint32_t WISP_PRIV(srtt8), WISP_PRIV(rttvar4); /**< RTT (RFC 6298), ms: srtt scaled by 8, rttvar by 4 */
    uint32_t WISP_PRIV(snd_lbb);             /**< next sequence to give queued data */
    uint32_t WISP_PRIV(ca_acked), WISP_PRIV(max_snd_wnd);
    uint32_t WISP_PRIV(iss);
    wisp_tcp_recv_fn WISP_PRIV(recv);
    wisp_tcp_err_fn WISP_PRIV(errf);
    wisp_tcp_poll_fn WISP_PRIV(poll);
    wisp_tcp_sent_fn WISP_PRIV(sent);
    wisp_tcp_connected_fn WISP_PRIV(connected);

    /* the rest of the send sequence space (RFC 9293 §3.3.1) */
    uint32_t WISP_PRIV(snd_wl1), WISP_PRIV(snd_wl2);
    uint32_t WISP_PRIV(snd_sml);             /**< end of the last short segment sent (Minshall's Nagle) */
    uint32_t WISP_PRIV(persist_ms);          /**< when the peer's window last closed on queued data (persist mode) */
    uint32_t WISP_PRIV(persist_next);        /**< when the next zero-window probe is due (the timer may look earlier) */

    /* congestion control and loss recovery (RFC 5681, 6582, 6675): cwnd,
     * ssthresh, ca_acked above */
    uint32_t WISP_PRIV(recover);
#if WISP_TCP_CUBIC
    union wisp_tcp_cc_state WISP_PRIV(cc);   /**< the algorithm's own state (tcp_cc.h; NewReno has none) */
#endif

    uint32_t WISP_PRIV(rtt_seq), WISP_PRIV(rtt_start);

    /* the rest of the receive sequence space */
    uint32_t WISP_PRIV(irs);
    uint32_t WISP_PRIV(last_ack_sent);       /**< RCV.NXT of our last ACK (RFC 7323 §4.3 Last.ACK.sent); rcv_nxt - last_ack_sent: in-order data not acknowledged yet */

#if WISP_TCP_TIMESTAMPS
    /* timestamps (RFC 7323) */
    uint32_t WISP_PRIV(ts_off), WISP_PRIV(ts_recent); /* (TS.Recent's age, RFC 7323 §5.5: last_rx_ms) */
#endif
#if WISP_TCP_SACK
#if WISP_TCP_DSACK
    /* RFC 2883 D-SACK: duplicate data of the latest segment, reported
     * once as the first SACK block of the next ACK (when TF_DSACK):
     * [dsack, dsack + dsack_len) */
    uint32_t WISP_PRIV(dsack);
#endif
#endif

    /* keepalive (RFC 9293 §3.8.4) */
    uint32_t WISP_PRIV(last_rx_ms), WISP_PRIV(keep_idle), WISP_PRIV(keep_intvl);

#if WISP_TCP_PCB_STATS
    /* statistics (wisp_tcp_get_info; bytes acked and received are read
     * off the sequence space) */
    uint32_t WISP_PRIV(st_retransmits), WISP_PRIV(st_fast_recoveries), WISP_PRIV(st_timeouts);
#endif

    /* ICMP errors and path MTU (tcp_icmp.c) */
    uint32_t WISP_PRIV(pmtu_raise_at);       /**< ms: try mss_max again (RFC 1191 §6.3, RFC 4821 §7.7) */

    /* 16-bit fields */
    uint16_t WISP_PRIV(tcnt)[WISP_TCP_NTMR_SLOTS]; /**< deadlines of its timers from the stack's tbase: ms, or 1024 ms units when far (tcp_timer.c; one slot per pair of mutually exclusive timers, TCP_TMR_SLOT) */
#if WISP_TCP_RTO_MAX_MS <= 0xffff
    uint16_t WISP_PRIV(user_mss);            /**< TCP_MAXSEG cap of the MSS, 0 = none */
#endif
#if WISP_TCP_SACK && WISP_TCP_DSACK
    uint16_t WISP_PRIV(dsack_len);
#endif

    /* byte fields */
    uint8_t WISP_PRIV(poll_interval);
    uint8_t WISP_PRIV(tmr_on);               /**< bit i: timer i (TCP_TMR_*) is active */
    uint8_t WISP_PRIV(tfar);                 /**< bit k: tcnt[k] counts 1024 ms units (tcp_timer.c) */
    uint8_t WISP_PRIV(dupacks), WISP_PRIV(nrtx);
    uint8_t WISP_PRIV(refused_n);            /**< chains in refused[] */
    uint8_t WISP_PRIV(starve);               /**< window limited by the receive budget: retry backoff step + 1 */
    uint8_t WISP_PRIV(keep_cnt);
    wisp_err_t WISP_PRIV(soft_err);          /**< last soft ICMP error (RFC 1122 §4.2.3.9), WISP_OK = none */
#if WISP_TCP_WND_SCALE
    uint8_t WISP_PRIV(snd_wscale), WISP_PRIV(rcv_wscale);
#endif
    uint8_t WISP_PRIV(persist_backoff);
};

#if WISP_TCP_TW_COMPACT
/** A compact TIME-WAIT record (RFC 9293 §3.6.1). local_port 0 = free. */
struct wisp_tcp_tw {
    wisp_ipaddr_t WISP_PRIV(local_ip), WISP_PRIV(remote_ip);
    uint16_t WISP_PRIV(local_port), WISP_PRIV(remote_port);
    uint32_t WISP_PRIV(snd_nxt), WISP_PRIV(rcv_nxt);
#if WISP_TCP_TIMESTAMPS
    uint32_t WISP_PRIV(ts_recent), WISP_PRIV(ts_off);
#endif
    uint32_t WISP_PRIV(expire);              /**< ms */
    uint8_t WISP_PRIV(ts_ok), WISP_PRIV(tos), WISP_PRIV(ttl), WISP_PRIV(rcv_wscale);
};
#endif

/** An embryonic connection in the SYN queue (SYN received, SYN-ACK sent). */
struct wisp_tcp_syn {
    struct wisp_tcp_listen *WISP_PRIV(lpcb); /**< NULL = free */
    wisp_ipaddr_t WISP_PRIV(local_ip), WISP_PRIV(remote_ip);
    uint16_t WISP_PRIV(local_port), WISP_PRIV(remote_port);
    uint32_t WISP_PRIV(iss), WISP_PRIV(irs), WISP_PRIV(ts_recent);
    uint32_t WISP_PRIV(due);                 /**< next SYN-ACK retransmission (ms) */
    uint16_t WISP_PRIV(peer_mss);
    uint16_t WISP_PRIV(wnd);                 /**< window offered by the SYN-ACK */
    uint8_t WISP_PRIV(peer_wscale);          /**< 0xff: the SYN had no window scale option */
    uint8_t WISP_PRIV(opts);                 /**< TCP_SYNO_* (tcp_priv.h) */
    uint8_t WISP_PRIV(retries);
};

/** TCP state of one stack. */
struct wisp_tcp {
    struct wisp_tcp_pcb *WISP_PRIV(pcbs);        /**< every connection PCB */
    struct wisp_tcp_listen *WISP_PRIV(listens);  /**< every listener */
    struct wisp_tcp_pcb *WISP_PRIV(in_pcb);      /**< PCB being processed (its free is deferred) */
    uint16_t WISP_PRIV(npcbs);                   /**< connection PCBs in pcbs (receive budget shares) */
    uint16_t WISP_PRIV(mem_waiters);             /**< PCBs whose write was refused for want of buffers */
    uint8_t WISP_PRIV(tx_short);                 /**< a write was refused for want of transmit blocks ... */
    uint8_t WISP_PRIV(tick_back);                /**< 1: tick_prev is where the tick goes back to, 2: the tick had no deadline, 0: unknown (tcp_timer.c) */
    uint32_t WISP_PRIV(tx_short_ms);             /**< ... last at this time (ms): persist give-up under pressure */
    struct wisp_timer WISP_PRIV(wake_tmr);       /**< polls them soon after buffers were given back */
    struct wisp_timer WISP_PRIV(tick_tmr);       /**< the connections' timers (tcp_timer.c) */
    uint32_t WISP_PRIV(tbase);                   /**< ms: origin of their deadlines (the PCBs' tcnt) */
    uint32_t WISP_PRIV(tick_prev);               /**< ms: the tick's deadline before the last tcp_timer_set advanced it */
    uint32_t WISP_PRIV(key)[4];                  /**< secret of the keyed hash (RFC 6528, cookies) */
    uint32_t WISP_PRIV(chal_tokens), WISP_PRIV(chal_last);  /**< challenge ACK bucket (RFC 5961 §7) */
#if WISP_TCP_SYNCOOKIES
    uint32_t WISP_PRIV(cookie_last);             /**< when the last SYN cookie was sent (ms) */
    uint8_t WISP_PRIV(cookie_used);
#endif
    struct wisp_timer WISP_PRIV(synq_tmr);
    struct wisp_tcp_syn WISP_PRIV(synq)[WISP_TCP_SYNQ_COUNT];
#if WISP_TCP_TW_COMPACT
    struct wisp_tcp_tw WISP_PRIV(tw)[WISP_TCP_TW_COUNT];
#else
    struct wisp_tcp_pcb *WISP_PRIV(tw_pcbs);     /**< connections in TIME-WAIT (full PCBs, tcp_synq.c) */
#endif
    /* Hash index of the SYN queue and the TIME-WAIT records by remote
     * address and ports (tcp_synq.c): bucket heads and per-entry links, entry
     * indexes, 0xffff = none. A segment that matches no connection (a
     * flood SYN) costs a bucket, not a walk over every entry. */
    uint32_t WISP_PRIV(hseed);                   /**< key of the bucket hash (from key) */
    uint16_t WISP_PRIV(synq_head)[WISP_TCP_HBUCKETS(WISP_TCP_SYNQ_COUNT)];
    uint16_t WISP_PRIV(synq_next)[WISP_TCP_SYNQ_COUNT];
#if WISP_TCP_TW_COMPACT
    uint16_t WISP_PRIV(tw_head)[WISP_TCP_HBUCKETS(WISP_TCP_TW_COUNT)];
    uint16_t WISP_PRIV(tw_next)[WISP_TCP_TW_COUNT];
#endif
};

/* ---- library-internal functions (WISP_PRIVATE_ACCESS only) ---- */
#ifdef WISP_PRIVATE_ACCESS
/** Internal (icmp.c): a validated ICMP error about a TCP segment
 *  (tcp_icmp.c: RFC 1122 §4.2.3.9, RFC 5927, RFC 1191). */
void wisp_tcp_icmp_err(struct wisp_stack *s, const struct wisp_icmp_err *e);
/* Internal: stack init / deinit (deinit aborts nothing: the application
 * closes its PCBs; deinit frees TIME-WAIT records and embryonic state). */
void wisp_tcp_init(struct wisp_stack *s);
void wisp_tcp_deinit(struct wisp_stack *s);
#endif /* WISP_PRIVATE_ACCESS */

#endif /* WISP_PRIV_TCP_H */
