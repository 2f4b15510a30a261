/**
 * @file tcp_cc.c
 * Congestion control (tcp_cc.h): what every algorithm shares -- the
 * initial window, slow start, the window cap -- the dispatch to the
 * connection's algorithm, NewReno's operations (RFC 5681 §3.1 congestion
 * avoidance and eq. (4); its fast recovery, RFC 6582, is run by the core,
 * tcp_in.c), and the public selection API (wisp_tcp_set_cc & co.).
 */
#define WISP_PRIVATE_ACCESS 1 /* library code: sees the private tier (wisp/arch.h) */
#include "tcp_priv.h"
#include "tcp_cc.h"

#if WISP_TCP

#if WISP_TCP_CC_DEFAULT != 0 && !(WISP_TCP_CC_DEFAULT == 1 && WISP_TCP_CUBIC) /* enum wisp_tcp_cc */
#error "WISP_TCP_CC_DEFAULT names an algorithm that is not compiled in (opt.h WISP_TCP_CUBIC)"
#endif

/* The largest congestion window, bytes (1 GiB: far above any window the
 * peer can offer, 2^30 = 65535 << 14, and clear of 32-bit overflow). */
#define TCP_CWND_MAX 0x40000000u

/* ------------------------------------------------------------ NewReno */

static void newreno_init(struct wisp_tcp_pcb *pcb, uint32_t now)
{
    (void)now;
    pcb->ca_acked = 0;
}

/* RFC 5681 §3.1 congestion avoidance: one SMSS per window of
 * acknowledged data (byte counting, RFC 3465 §2.1). */
static void newreno_cong_avoid(struct wisp_tcp_pcb *pcb, uint32_t acked, uint32_t now)
{
    (void)now;
    pcb->ca_acked += acked;
    if (pcb->ca_acked >= pcb->cwnd) {
        pcb->ca_acked -= pcb->cwnd;
        pcb->cwnd += tcp_seg_max(pcb);
    }
}

static uint32_t newreno_ssthresh(struct wisp_tcp_pcb *pcb, uint32_t flight, bool rto, uint32_t now)
{
    (void)rto;
    (void)now;
    return WISP_MAX(flight / 2u, 2u * tcp_seg_max(pcb)); /* RFC 5681 §3.1 eq. (4) */
}

const struct tcp_cc_ops tcp_cc_newreno = {
    "reno", newreno_init, newreno_cong_avoid, newreno_ssthresh, NULL
};

/* ----------------------------------------------------------- dispatch */

/* Linux's TCP_CONGESTION names, by enum wisp_tcp_cc (compiled in or not). */
static const char *const tcp_cc_names[] = { "reno", "cubic" };
#define TCP_CC_N (sizeof(tcp_cc_names) / sizeof(tcp_cc_names[0]))

#if WISP_TCP_CUBIC
/* Indexed by enum wisp_tcp_cc. */
static const struct tcp_cc_ops *const tcp_cc_table[TCP_CC_N] = { &tcp_cc_newreno, &tcp_cc_cubic };

const struct tcp_cc_ops *tcp_cc_ops_of(const struct wisp_tcp_pcb *pcb)
{
    return tcp_cc_table[pcb->c.cc_algo]; /* wisp_tcp_set_cc admits compiled-in ones only */
}
#define TCP_CC_OP(pcb, op) (tcp_cc_ops_of(pcb)->op)
#define TCP_CC_KNOWN(algo) ((algo) < TCP_CC_N)
#else
/* NewReno alone: direct calls (no table, no operations structure in the
 * image; tcp_cc_newreno stays for the unit tests). */
const struct tcp_cc_ops *tcp_cc_ops_of(const struct wisp_tcp_pcb *pcb)
{
    (void)pcb;
    return &tcp_cc_newreno;
}
#define TCP_CC_OP(pcb, op) newreno_##op
#define TCP_CC_KNOWN(algo) ((algo) == 0u)
#endif

/* RFC 6928 §2: IW = min(10*MSS, max(2*MSS, 14600)). */
uint32_t tcp_initial_cwnd(uint32_t mss)
{
    return WISP_MIN(10u * mss, WISP_MAX(2u * mss, 14600u));
}

void tcp_cc_init(struct wisp_tcp_pcb *pcb, uint32_t now)
{
    pcb->cwnd = tcp_initial_cwnd(tcp_seg_max(pcb));
    pcb->ssthresh = 0x7fffffffu; /* RFC 5681 §3.1: arbitrarily high */
    pcb->ca_acked = 0;
    TCP_CC_OP(pcb, init)(pcb, now);
}

void tcp_cc_ack(struct wisp_tcp_pcb *pcb, uint32_t acked, uint32_t flight, uint32_t now)
{
    uint32_t smss = tcp_seg_max(pcb);
    /* The window grows only while it limits the sender (RFC 7661 §4.3
     * idea, Linux's tcp_is_cwnd_limited): an application- or
     * receiver-limited flow must not inflate cwnd without bound. */
    if (pcb->cwnd < pcb->ssthresh) {
        /* RFC 5681 §3.1 slow start (byte counting, L = 1 SMSS) */
        if (pcb->cwnd < 2u * flight) {
            pcb->cwnd += WISP_MIN(acked, smss);
        }
    } else if (flight + smss >= pcb->cwnd) {
        TCP_CC_OP(pcb, cong_avoid)(pcb, acked, now); /* congestion avoidance */
    }
    if (pcb->cwnd > TCP_CWND_MAX) {
        pcb->cwnd = TCP_CWND_MAX;
    }
}

uint32_t tcp_cc_ssthresh(struct wisp_tcp_pcb *pcb, uint32_t flight, bool rto, uint32_t now)
{
    return TCP_CC_OP(pcb, ssthresh)(pcb, flight, rto, now);
}

#if WISP_TCP_CUBIC
void tcp_cc_recovered(struct wisp_tcp_pcb *pcb, uint32_t now)
{
    const struct tcp_cc_ops *ops = tcp_cc_ops_of(pcb);
    if (ops->recovered != NULL) {
        ops->recovered(pcb, now);
    }
}
#endif

/* --------------------------------------------------------- public API */

const char *wisp_tcp_cc_name(unsigned algo)
{
    return algo < TCP_CC_N ? tcp_cc_names[algo] : NULL;
}

int wisp_tcp_cc_by_name(const char *name)
{
    unsigned i;
    if (name == NULL) {
        return -1;
    }
    for (i = 0; i < TCP_CC_N; i++) {
        if (strcmp(name, tcp_cc_names[i]) == 0) {
            return (int)i;
        }
    }
    return -1;
}

wisp_err_t wisp_tcp_set_cc(struct wisp_tcp_pcb *pcb, unsigned algo)
{
    WISP_CORE_ASSERT_OWNER(tcp_stack_of(pcb));
    if (pcb == NULL || !TCP_CC_KNOWN(algo)) {
        return WISP_ERR_VAL;
    }
    if (tcp_common(pcb)->state == WISP_TCP_LISTEN) {
        /* inherited by the connections it accepts */
        tcp_common(pcb)->cc_algo = (uint8_t)algo;
        return WISP_OK;
    }
    if (pcb->c.cc_algo == algo) {
        return WISP_OK;
    }
    pcb->c.cc_algo = (uint8_t)algo;
#if WISP_TCP_CUBIC
    memset(&pcb->cc, 0, sizeof(pcb->cc));
#endif
    pcb->flags &= ~TF_CC_MASK;
    if (tcp_state_synced(pcb->c.state)) {
        /* from the current cwnd and ssthresh (tcp.h) */
        pcb->ca_acked = 0;
        TCP_CC_OP(pcb, init)(pcb, wisp_now(pcb->c.stack));
    }
    return WISP_OK;
}

unsigned wisp_tcp_get_cc(const struct wisp_tcp_pcb *pcb)
{
    const struct wisp_tcp_common *c = (const struct wisp_tcp_common *)(const void *)pcb;
    if (pcb == NULL) {
        return (unsigned)WISP_TCP_CC_DEFAULT;
    }
    WISP_CORE_ASSERT_OWNER(c->stack);
    return c->cc_algo; /* a listener's: of the connections it accepts */
}

#else
typedef int wisp_tcp_cc_disabled_t;
#endif /* WISP_TCP */
