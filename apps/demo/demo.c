/**
 * @file demo.c
 * wisp-demo: two wisp stacks in one process on the simulated Ethernet wire
 * (sim/simwire.h), on virtual time, reproducible from a seed. It runs four
 * parts and prints a short report of what it measured:
 *
 *  1. ARP + ping: A resolves B and pings it at 56, 1472 and 8000 bytes
 *     (the last one fragmented): replies, loss, RTT in virtual ms.
 *  2. UDP echo: datagrams of random sizes echoed byte-exact by B's RFC 862
 *     service, then 60 KB datagrams fragmented across the impaired wire,
 *     with an application-level retry (how many attempts were needed).
 *  3. Emergency queue (paper 001 §4.3): on a 10 Mbit/s wire a bulk UDP
 *     stream (common class) with urgent datagrams (tos 0xB8, DSCP EF)
 *     interleaved, at several offered loads; the delay from the send call
 *     to the frame entering the wire (seen by the world's tap) per class.
 *  4. Pools: high-water marks of every pool of every node, and whether all
 *     pools are back at zero use after the teardown.
 *
 * The whole run is captured into a pcap file (sim_pcap_open). Exit status:
 * 0 when every check held, 1 when one failed, 2 on a usage error.
 *
 *   wisp-demo [--seed N] [--loss PCT] [--reorder PCT] [--dup PCT]
 *             [--corrupt PCT] [--latency-ms N] [--bandwidth-mbit N]
 *             [--pcap FILE]
 */
#define _POSIX_C_SOURCE 200809L /* clock_gettime */

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "simwire.h"
#include "services.h"

/* ------------------------------------------------------------ constants */

#define DEMO_NET "198.18.0."         /**< RFC 2544 benchmarking range */
#define PING_ID 0x5744u              /**< ICMP echo identifier of the demo */
#define PING_COUNT 10u               /**< echo requests per size */
#define ECHO_COUNT 200u              /**< random-size UDP datagrams */
#define ECHO_MIN 8u                  /**< smallest: holds the 8-byte header */
#define ECHO_MAX 1472u               /**< largest unfragmented (MTU 1500) */
#define BIG_COUNT 3u                 /**< 60 KB datagrams */
#define BIG_LEN 61440u
#define TRIES_MIN 20u                /**< retry budget: at least this... */
#define TRIES_CAP 5000u              /**< ...at most this (else skipped) */
#define CLIENT_PORT 5000u            /**< A's echo client */

/* Part 3: the emergency-queue experiment. */
#define PRIO_BW_BPS 10000000u        /**< 10 Mbit/s */
#define PRIO_BULK_LEN 1400u          /**< one transmit block per datagram */
#define PRIO_URG_LEN 200u
#define PRIO_URG_GAP_US 4000u        /**< mean gap between urgent datagrams */
#define PRIO_WINDOW_US 500000u       /**< sending time per load */
#define PRIO_MAX 4096u               /**< datagrams per class and load */
#define PRIO_BULK_PORT 4001u
#define PRIO_URG_PORT 4002u
#define PRIO_TOS_EF 0xB8u            /**< DSCP 46 (EF) << 2 */
#define PRIO_MAGIC 0x77697370u       /**< "wisp": marks the demo's datagrams */
#define PRIO_NLOADS 4u

#define ETH_HLEN 14u
#define IP_HLEN 20u
#define UDP_HLEN 8u

/** Offered bulk loads of part 3, percent of the link. */
static const unsigned prio_loads[PRIO_NLOADS] = { 30, 60, 90, 120 };
/** Ping sizes of part 1 (ICMP data bytes). */
static const uint16_t ping_sizes[] = { 56, 1472, 8000 };

/* ---------------------------------------------------------------- state */

struct demo_opts {
    uint64_t seed;
    double loss, reorder, dup, corrupt;   /**< percent */
    double latency_ms, bandwidth_mbit;
    const char *pcap;
};

/** What the tap saw of ARP (part 1). */
struct arp_watch {
    unsigned requests;          /**< A's non-gratuitous requests */
    unsigned replies;           /**< B's replies */
    uint64_t first_req_us, first_reply_us;
};

/** Echo replies awaited by A's ping (part 1). */
struct ping_state {
    struct sim_world *w;
    uint16_t seq;               /**< sequence number awaited */
    bool got;
    uint64_t t_reply;
    unsigned late;              /**< replies to earlier requests, duplicates */
    unsigned bad;               /**< replies with wrong data */
};

/** A's UDP echo client (part 2). */
struct echo_client {
    struct sim_world *w;
    struct wisp_udp_pcb *pcb;
    uint64_t seed;
    uint8_t *rx;                /**< last datagram received (65536 bytes) */
    uint8_t *ref;               /**< the expected contents (65536 bytes) */
    uint32_t want;              /**< datagram number awaited */
    bool got;                   /**< it came back intact */
    unsigned stale;             /**< intact echoes of earlier datagrams, duplicates */
    unsigned bad;               /**< echoes that match no datagram we sent */
};

/** One class of part 3, for one load. */
struct prio_class {
    uint64_t sent_us[PRIO_MAX];   /**< send-call time, by sequence number */
    uint64_t wire_us[PRIO_MAX];   /**< wire-entry time (UINT64_MAX: not yet) */
    unsigned n;                   /**< datagrams sent */
    unsigned seen;                /**< datagrams seen entering the wire */
    unsigned refused;             /**< sends the stack refused (queue full) */
    unsigned tos_ok;              /**< frames carrying the class's tos */
};

/** Part 3 measurement (0 = bulk, 1 = urgent). */
struct prio_meas {
    struct sim_node *sender;
    struct prio_class c[2];
};

/** One row of the part 3 table: statistics over the datagrams that
 *  reached the wire (n sent - refused). */
struct prio_row {
    unsigned n, refused;
    double mean_us;
    uint64_t p99_us, max_us;
    unsigned qmax;               /**< peak length of the class's queue */
};

struct demo {
    struct demo_opts o;
    struct sim_world *w;
    struct sim_node *a, *b;
    struct wisp_services svc;    /**< B's echo and discard services */
    bool svc_up;
    struct sim_rng rng;          /**< the demo's own draws: sizes, send times */
    struct arp_watch arp;
    struct prio_meas *prio;      /**< non-NULL while part 3 measures */
    struct ping_state ping;
    struct echo_client ec;
    uint8_t *tx;                 /**< datagram being sent (65536 bytes) */
    unsigned checks, failed;
};

/* -------------------------------------------------------------- helpers */

static void check(struct demo *d, bool ok, const char *what)
{
    d->checks++;
    if (!ok) {
        d->failed++;
        printf("   !! check failed: %s\n", what);
    }
}

/** The world failed (event budget, time stuck): say so once. */
static bool world_ok(struct demo *d)
{
    const char *e = sim_error(d->w);
    if (e != NULL) {
        check(d, false, e);
        return false;
    }
    return true;
}

static double ms(uint64_t us)
{
    return (double)us / 1000.0;
}

/** Serialisation time of a frame of len bytes on the current link (us). */
static uint64_t ser_us(const struct sim_link_cfg *l, unsigned len)
{
    if (l->bandwidth_bps == 0) {
        return 0;
    }
    return ((uint64_t)len * 8u * 1000000u + l->bandwidth_bps - 1u) / l->bandwidth_bps;
}

/** Frames an IP datagram with payload len bytes takes at the link MTU. */
static unsigned ip_frames(const struct sim_link_cfg *l, unsigned payload)
{
    unsigned per = ((unsigned)l->mtu - IP_HLEN) & ~7u; /* RFC 791: 8-byte units */
    if (payload + IP_HLEN <= l->mtu) {
        return 1;
    }
    return (payload + per - 1u) / per;
}

/** How long to wait for the answer to a request of `frames` full-size
 *  frames each way: serialisation both ways plus the latency, with room
 *  for the reordering delay (up to 3 x latency + 1 ms) and 5 ms slack. */
static uint64_t wait_us(struct demo *d, unsigned frames)
{
    struct sim_link_cfg l;
    sim_get_link(d->w, &l);
    return 2u * ((uint64_t)frames * ser_us(&l, ETH_HLEN + l.mtu) + 4u * (uint64_t)l.latency_us + 1000u) + 5000u;
}

/** Send len bytes of data from pcb to dst:port (a copy: RAM pbuf when the
 *  datagram fits one block, else a POOL chain). */
static wisp_err_t udp_send_copy(struct wisp_udp_pcb *pcb, const uint8_t *data, uint16_t len, wisp_ip4_t dst,
                                uint16_t port)
{
    wisp_ipaddr_t to = wisp_ipaddr4(dst);
    struct wisp_pbuf *p;
    wisp_err_t err;
    enum wisp_pbuf_kind kind =
        ((uint32_t)len + WISP_LAYER_TRANSPORT <= WISP_PBUF_BLOCK_SIZE) ? WISP_PBUF_RAM : WISP_PBUF_POOL;

    p = wisp_pbuf_alloc(pcb->stack, WISP_LAYER_TRANSPORT, len, kind);
    if (p == NULL) {
        return WISP_ERR_MEM;
    }
    err = wisp_pbuf_copy_in(p, data, len, 0);
    if (err == WISP_OK) {
        err = wisp_udp_sendto(pcb, p, &to, port);
    }
    wisp_pbuf_free(p);
    return err;
}

/* ---------------------------------------------------------------- tap */

/* Part 3: a UDP datagram from the sender whose payload starts with the
 * magic, then the class (4 bytes) and the sequence number (4 bytes). */
static void prio_tap(struct prio_meas *m, const uint8_t *f, size_t len, uint64_t t)
{
    const uint8_t *ip = f + ETH_HLEN, *udp, *pl;
    unsigned ihl, cls;
    uint32_t seq;
    struct prio_class *c;

    if (len < ETH_HLEN + IP_HLEN || wisp_rd16(f + 12) != WISP_ETHTYPE_IP4 || ip[9] != WISP_IP4_PROTO_UDP ||
        (wisp_rd16(ip + 6) & WISP_IP4_OFFMASK) != 0) {
        return;
    }
    ihl = (ip[0] & 0x0fu) * 4u;
    if (ihl < IP_HLEN || len < ETH_HLEN + ihl + UDP_HLEN + 12u) {
        return;
    }
    udp = ip + ihl;
    pl = udp + UDP_HLEN;
    if (wisp_rd16(udp + 2) != WISP_PORT_DISCARD || wisp_rd32(pl) != PRIO_MAGIC) {
        return;
    }
    cls = wisp_rd32(pl + 4) == 1u ? 1u : 0u;
    seq = wisp_rd32(pl + 8);
    c = &m->c[cls];
    if (seq >= c->n || c->wire_us[seq] != UINT64_MAX) {
        return; /* not one of ours, or seen already */
    }
    c->wire_us[seq] = t;
    c->seen++;
    if (ip[1] == (cls == 1u ? PRIO_TOS_EF : 0u)) {
        c->tos_ok++;
    }
}

/* Part 1: A's ARP requests and B's replies (gratuitous announcements,
 * whose sender and target addresses are equal, are not counted). */
static void arp_tap(struct demo *d, struct sim_node *from, const uint8_t *f, size_t len, uint64_t t)
{
    const uint8_t *arp = f + ETH_HLEN;
    uint16_t op;

    if (len < ETH_HLEN + 28u || wisp_rd16(f + 12) != WISP_ETHTYPE_ARP || memcmp(arp + 14, arp + 24, 4) == 0) {
        return;
    }
    op = wisp_rd16(arp + 6);
    if (op == 1u && from == d->a) {
        if (d->arp.requests++ == 0) {
            d->arp.first_req_us = t;
        }
    } else if (op == 2u && from == d->b) {
        if (d->arp.replies++ == 0) {
            d->arp.first_reply_us = t;
        }
    }
}

static void demo_tap(void *arg, struct sim_node *from, const uint8_t *frame, size_t len, uint64_t t_us)
{
    struct demo *d = (struct demo *)arg;
    arp_tap(d, from, frame, len, t_us);
    if (d->prio != NULL && from == d->prio->sender) {
        prio_tap(d->prio, frame, len, t_us);
    }
}

/* ----------------------------------------------------- part 1: ping */

/* Echo reply on A. The data of wisp_icmp_echo_request is byte i = i. */
static void ping_cb(void *arg, const struct wisp_ip4_info *ip, uint16_t id, uint16_t seq, struct wisp_pbuf *p)
{
    struct ping_state *ps = (struct ping_state *)arg;
    uint16_t i, n = p->tot_len;
    bool ok = n >= 8 && wisp_pbuf_get_u8(p, 0) == (int)WISP_ICMP_ECHO_REPLY && id == PING_ID;

    (void)ip;
    for (i = 8; ok && i < n; i++) {
        ok = wisp_pbuf_get_u8(p, i) == (int)(uint8_t)(i - 8u);
    }
    if (!ok) {
        ps->bad++;
    } else if (seq == ps->seq && !ps->got) {
        ps->got = true;
        ps->t_reply = sim_now_us(ps->w);
    } else {
        ps->late++;
    }
    wisp_pbuf_free(p);
}

static bool ping_done(void *arg)
{
    return ((struct ping_state *)arg)->got;
}

/** One echo request of len data bytes; its RTT in *rtt. False when no
 *  reply came within timeout (or the request could not be sent). */
static bool ping_once(struct demo *d, uint16_t seq, uint16_t len, uint64_t timeout, uint64_t *rtt)
{
    uint64_t t0 = sim_now_us(d->w);
    d->ping.seq = seq;
    d->ping.got = false;
    if (wisp_icmp_echo_request(sim_stack(d->a), sim_ip(d->b), PING_ID, seq, len, 0) != WISP_OK) {
        (void)sim_run_for(d->w, timeout); /* a refused send is a lost one */
        return false;
    }
    if (!sim_run_until(d->w, ping_done, &d->ping, timeout)) {
        return false;
    }
    *rtt = d->ping.t_reply - t0;
    return true;
}

static void part_ping(struct demo *d)
{
    struct wisp_stack *sa = sim_stack(d->a), *sb = sim_stack(d->b);
    struct sim_link_cfg l;
    uint8_t mac[6];
    uint64_t rtt = 0, arp_timeout;
    uint16_t seq = 0;
    unsigned i, k, total_replies = 0;
    char ipa[16], ipb[16];
    bool a_knows, b_knows;

    sim_get_link(d->w, &l);
    memset(&d->ping, 0, sizeof(d->ping));
    d->ping.w = d->w;
    wisp_icmp_set_echo_cb(sa, ping_cb, &d->ping);

    printf("\n1. ARP + ping  (A %s -> B %s)\n", wisp_ip4_ntoa(sim_ip(d->a), ipa), wisp_ip4_ntoa(sim_ip(d->b), ipb));

    /* The first request waits for ARP (up to all of its tries). */
    arp_timeout = (uint64_t)WISP_ARP_MAX_TRIES * WISP_ARP_RETRY_MS * 1000u + wait_us(d, 1);
    if (ping_once(d, seq++, 56, arp_timeout, &rtt)) {
        printf("   ARP              %u request(s) from A, B's reply on the wire %.3f ms after the first;\n",
               d->arp.requests, ms(d->arp.first_reply_us - d->arp.first_req_us));
        printf("                    first ping (56 B) answered after %.3f ms including ARP\n", ms(rtt));
    } else {
        printf("   ARP              %u request(s) from A, %u reply(ies) from B: no answer to the first ping\n",
               d->arp.requests, d->arp.replies);
    }
    a_knows = wisp_arp_lookup(sa, sim_netif(d->a)->index, sim_ip(d->b), mac) && memcmp(mac, sim_mac(d->b), 6) == 0;
    b_knows = wisp_arp_lookup(sb, sim_netif(d->b)->index, sim_ip(d->a), mac) && memcmp(mac, sim_mac(d->a), 6) == 0;
    printf("   ARP caches       A has B's MAC: %s; B learned A's from the request: %s\n", a_knows ? "yes" : "no",
           b_knows ? "yes" : "no");
    check(d, a_knows, "A resolved B's MAC address");

    printf("   %8s  %6s  %4s  %7s  %6s   %s\n", "size (B)", "frames", "sent", "replies", "loss",
           "rtt min / avg / max (virtual ms)");
    for (i = 0; i < WISP_ARRAY_SIZE(ping_sizes); i++) {
        uint16_t len = ping_sizes[i];
        unsigned frames = ip_frames(&l, 8u + len), replies = 0;
        uint64_t min = UINT64_MAX, max = 0, sum = 0;
        uint64_t timeout = wait_us(d, frames);

        if (timeout < 1000000u) {
            timeout = 1000000u; /* ping's customary 1 s */
        }
        for (k = 0; k < PING_COUNT; k++) {
            if (ping_once(d, seq++, len, timeout, &rtt)) {
                replies++;
                sum += rtt;
                min = rtt < min ? rtt : min;
                max = rtt > max ? rtt : max;
            }
            if (!world_ok(d)) {
                return;
            }
        }
        total_replies += replies;
        if (replies > 0) {
            printf("   %8u  %6u  %4u  %7u  %5.1f%%   %.3f / %.3f / %.3f\n", (unsigned)len, frames, PING_COUNT,
                   replies, 100.0 * (PING_COUNT - replies) / PING_COUNT, ms(min), ms(sum) / replies, ms(max));
        } else {
            printf("   %8u  %6u  %4u  %7u  %5.1f%%   -\n", (unsigned)len, frames, PING_COUNT, replies, 100.0);
        }
    }
    printf("   frames = Ethernet frames per request (IP fragments, RFC 791); %u late or duplicate replies ignored\n",
           d->ping.late);
    check(d, d->ping.bad == 0, "every echo reply carried the request's data");
    check(d, total_replies > 0, "B answered pings");
    wisp_icmp_set_echo_cb(sa, NULL, NULL);
}

/* ------------------------------------------------- part 2: UDP echo */

/** Datagram k of len bytes: its number and length (4 bytes each), then
 *  bytes drawn from a generator seeded by the run seed and k, so that any
 *  echo can be checked byte for byte against what was sent. */
static void echo_fill(uint8_t *buf, uint32_t len, uint64_t seed, uint32_t k)
{
    struct sim_rng r;
    uint32_t i;
    uint64_t x = 0;

    sim_rng_seed(&r, seed * 0x100000001b3ull + k);
    wisp_wr32(buf, k);
    wisp_wr32(buf + 4, len);
    for (i = 8; i < len; i++) {
        if ((i & 7u) == 0) {
            x = sim_rng_next(&r);
        }
        buf[i] = (uint8_t)x;
        x >>= 8;
    }
}

static void echo_recv(void *arg, struct wisp_udp_pcb *pcb, struct wisp_pbuf *p, const wisp_ipaddr_t *src,
                      uint16_t port, const struct wisp_ip4_info *ip)
{
    struct echo_client *c = (struct echo_client *)arg;
    uint16_t len = wisp_pbuf_copy_out(p, c->rx, p->tot_len, 0);
    uint32_t k;

    (void)pcb;
    (void)src;
    (void)ip;
    wisp_pbuf_free(p);
    if (port != WISP_PORT_ECHO || len < 8 || wisp_rd32(c->rx + 4) != len) {
        c->bad++;
        return;
    }
    k = wisp_rd32(c->rx);
    echo_fill(c->ref, len, c->seed, k);
    if (k > c->want || memcmp(c->rx, c->ref, len) != 0) {
        c->bad++; /* not byte-exact, or never sent */
    } else if (k == c->want && !c->got) {
        c->got = true;
    } else {
        c->stale++;
    }
}

static bool echo_done(void *arg)
{
    return ((struct echo_client *)arg)->got;
}

/** Send datagram k (len bytes) to B's echo service until it comes back
 *  intact; returns the attempts used, or 0 when max_tries were not enough. */
static unsigned echo_retry(struct demo *d, uint32_t k, uint16_t len, uint64_t timeout, unsigned max_tries)
{
    unsigned t;
    echo_fill(d->tx, len, d->o.seed, k);
    d->ec.want = k;
    d->ec.got = false;
    for (t = 1; t <= max_tries; t++) {
        (void)udp_send_copy(d->ec.pcb, d->tx, len, sim_ip(d->b), WISP_PORT_ECHO); /* refused = lost */
        if (sim_run_until(d->w, echo_done, &d->ec, timeout)) {
            return t;
        }
        if (sim_error(d->w) != NULL) {
            return 0;
        }
    }
    return 0;
}

/** Attempts to allow for an exchange of `frames` frames each way: enough
 *  that all of them fail with probability below 1e-6, given the wire's
 *  loss and corruption, and at least TRIES_MIN. 0 when that would take
 *  more than TRIES_CAP (the wire is too bad for this exchange). *p gets
 *  the probability that one attempt succeeds. */
static unsigned retry_budget(struct demo *d, unsigned frames, double *p)
{
    struct sim_link_cfg l;
    double q, all_fail = 1.0;
    unsigned i, n;

    sim_get_link(d->w, &l);
    q = (1.0 - l.loss) * (1.0 - l.corrupt);
    *p = 1.0;
    for (i = 0; i < 2u * frames; i++) {
        *p *= q;
    }
    for (n = 1; n <= TRIES_CAP; n++) {
        all_fail *= 1.0 - *p;
        if (all_fail < 1e-6) {
            return n < TRIES_MIN ? TRIES_MIN : n;
        }
    }
    return 0;
}

/** Random sizes: one frame each way, stop-and-wait with resends. */
static void echo_random(struct demo *d, uint32_t *k)
{
    uint64_t timeout = wait_us(d, 1);
    double p;
    unsigned i, t, ok = 0, resends = 0, max_tries = retry_budget(d, 1, &p);

    if (max_tries == 0) {
        printf("   random sizes     skipped: one attempt gets through with p = %.2g, too low\n", p);
        return;
    }
    for (i = 0; i < ECHO_COUNT; i++) {
        uint16_t len = (uint16_t)(ECHO_MIN + sim_rng_below(&d->rng, ECHO_MAX - ECHO_MIN + 1u));
        t = echo_retry(d, (*k)++, len, timeout, max_tries);
        if (t == 0) {
            break; /* already beyond the odds: no point going on */
        }
        ok++;
        resends += t - 1u;
    }
    printf("   random sizes     %u datagrams of %u..%u B: %u/%u echoed byte-exact\n", ECHO_COUNT, ECHO_MIN, ECHO_MAX,
           ok, ECHO_COUNT);
    printf("   resends          %u (timeout %.1f virtual ms); %u late or duplicate echoes ignored, %u corrupt\n",
           resends, ms(timeout), d->ec.stale, d->ec.bad);
    printf("   B's echo count   %u datagrams, %u bytes echoed, %u dropped (A sent %u)\n",
           (unsigned)d->svc.udp_echo_st.datagrams, (unsigned)d->svc.udp_echo_st.bytes,
           (unsigned)d->svc.udp_echo_st.dropped, ok + resends);
    check(d, ok == ECHO_COUNT, "every random-size datagram came back byte-exact");
    check(d, d->svc.udp_echo_st.datagrams >= ok, "B's echo service counted every datagram that came back");
}

/** 60 KB datagrams: 42 fragments each way; one lost fragment loses the
 *  whole datagram, so the application tries again. */
static void echo_big(struct demo *d, uint32_t *k)
{
    struct sim_link_cfg l;
    uint64_t timeout;
    double p;
    unsigned i, frames, max_tries, ok = 0;
    unsigned tries[BIG_COUNT];

    sim_get_link(d->w, &l);
    frames = ip_frames(&l, UDP_HLEN + BIG_LEN);
    timeout = wait_us(d, frames);
    max_tries = retry_budget(d, frames, &p);
    printf("   60 KB datagrams  %u x %u B, %u fragments each way; one attempt succeeds with p = %.3g %%\n", BIG_COUNT,
           BIG_LEN, frames, 100.0 * p);
    if (max_tries == 0) {
        printf("   attempts needed  skipped: would take more than %u attempts per datagram\n", TRIES_CAP);
        return;
    }
    for (i = 0; i < BIG_COUNT; i++) {
        tries[i] = echo_retry(d, (*k)++, (uint16_t)BIG_LEN, timeout, max_tries);
        if (tries[i] == 0) {
            break;
        }
        ok++;
    }
    printf("   attempts needed ");
    for (i = 0; i < BIG_COUNT; i++) {
        if (i < ok) {
            printf("%s#%u: %u", i > 0 ? ", " : " ", i + 1, tries[i]);
        } else {
            printf("%s#%u: gave up", i > 0 ? ", " : " ", i + 1);
            break;
        }
    }
    printf(" (of up to %u, timeout %.1f virtual ms) -> %u/%u echoed byte-exact\n", max_tries, ms(timeout), ok,
           BIG_COUNT);
    printf("   reassembly       A %u, B %u datagrams reassembled; %u + %u given up (timeout or evicted)\n",
           (unsigned)sim_stack(d->a)->ctr[WISP_CTR_IP4_REASS_OK], (unsigned)sim_stack(d->b)->ctr[WISP_CTR_IP4_REASS_OK],
           (unsigned)(sim_stack(d->a)->ctr[WISP_CTR_IP4_REASS_TIMEOUT] +
                      sim_stack(d->a)->ctr[WISP_CTR_IP4_REASS_EVICT]),
           (unsigned)(sim_stack(d->b)->ctr[WISP_CTR_IP4_REASS_TIMEOUT] +
                      sim_stack(d->b)->ctr[WISP_CTR_IP4_REASS_EVICT]));
    check(d, ok == BIG_COUNT, "every 60 KB datagram came back byte-exact");
}

static void part_echo(struct demo *d)
{
    uint32_t k = 0; /* datagram numbers, unique over the part */

    printf("\n2. UDP echo  (B runs the RFC 862 echo service on port %u; A resends after a timeout)\n",
           WISP_PORT_ECHO);
    echo_random(d, &k);
    if (world_ok(d)) {
        echo_big(d, &k);
    }
    check(d, d->ec.bad == 0, "no corrupted or foreign datagram reached the application");
}

/* ------------------------------------------ part 3: emergency queue */

static bool prio_all_seen(void *arg)
{
    const struct prio_meas *m = (const struct prio_meas *)arg;
    return m->c[0].seen + m->c[0].refused == m->c[0].n && m->c[1].seen + m->c[1].refused == m->c[1].n;
}

static int cmp_u64(const void *x, const void *y)
{
    uint64_t a = *(const uint64_t *)x, b = *(const uint64_t *)y;
    return a < b ? -1 : a > b;
}

/** Mean, p99 (nearest rank) and max of the send-to-wire delays of class c;
 *  scratch holds PRIO_MAX values. */
static void prio_stats(const struct prio_class *c, uint64_t *scratch, struct prio_row *r)
{
    unsigned i, n = 0;
    uint64_t sum = 0;

    for (i = 0; i < c->n; i++) {
        if (c->wire_us[i] != UINT64_MAX) {
            scratch[n] = c->wire_us[i] - c->sent_us[i];
            sum += scratch[n++];
        }
    }
    r->n = c->n;
    r->refused = c->refused;
    r->mean_us = r->p99_us = r->max_us = 0;
    if (n > 0) {
        qsort(scratch, n, sizeof(*scratch), cmp_u64);
        r->mean_us = (double)sum / n;
        r->p99_us = scratch[(99u * n + 99u) / 100u - 1u]; /* nearest rank: ceil(0.99 n) */
        r->max_us = scratch[n - 1];
    }
}

/** Next gap of a stream with mean gap `mean` us: uniformly 0.5..1.5 x the
 *  mean, so the streams do not lock into one phase. */
static uint64_t prio_gap(struct demo *d, double mean)
{
    uint64_t g = (uint64_t)(mean * (0.5 + sim_rng_double(&d->rng)));
    return g > 0 ? g : 1;
}

static void prio_send(struct demo *d, struct wisp_udp_pcb *pcb, unsigned cls, uint16_t len)
{
    struct prio_class *c = &d->prio->c[cls];
    unsigned seq = c->n;

    memset(d->tx, 0x55, len);
    wisp_wr32(d->tx, PRIO_MAGIC);
    wisp_wr32(d->tx + 4, cls);
    wisp_wr32(d->tx + 8, seq);
    c->sent_us[seq] = sim_now_us(d->w);
    c->wire_us[seq] = UINT64_MAX;
    c->n++;
    if (udp_send_copy(pcb, d->tx, len, sim_ip(d->b), WISP_PORT_DISCARD) != WISP_OK) {
        c->refused++;
    }
}

/** One load: bulk at load % of the link plus the urgent stream, for
 *  PRIO_WINDOW_US, then drain. Fills rows[0] (urgent), rows[1] (bulk). */
static bool prio_run_load(struct demo *d, struct wisp_udp_pcb *bulk, struct wisp_udp_pcb *urg, unsigned load,
                          uint64_t *scratch, struct prio_row rows[2])
{
    struct sim_link_cfg l;
    struct wisp_netif *nif = sim_netif(d->a);
    uint64_t now = sim_now_us(d->w), end = now + PRIO_WINDOW_US, next_bulk, next_urg;
    double bulk_gap;
    unsigned qmax[2] = { 0, 0 }, q, cls;

    sim_get_link(d->w, &l);
    bulk_gap = (double)ser_us(&l, ETH_HLEN + IP_HLEN + UDP_HLEN + PRIO_BULK_LEN) * 100.0 / load;
    memset(d->prio->c, 0, sizeof(d->prio->c));
    next_bulk = now + prio_gap(d, bulk_gap);
    next_urg = now + prio_gap(d, PRIO_URG_GAP_US);
    for (;;) {
        uint64_t next = next_bulk < next_urg ? next_bulk : next_urg;
        if (next >= end || d->prio->c[0].n >= PRIO_MAX || d->prio->c[1].n >= PRIO_MAX) {
            break;
        }
        if (next > now && !sim_run_for(d->w, next - now)) {
            return false;
        }
        now = next;
        if (next_bulk == now) {
            prio_send(d, bulk, 0, PRIO_BULK_LEN);
            next_bulk += prio_gap(d, bulk_gap);
        }
        if (next_urg == now) {
            prio_send(d, urg, 1, PRIO_URG_LEN);
            next_urg += prio_gap(d, PRIO_URG_GAP_US);
        }
        for (cls = 0; cls < 2; cls++) {
            q = wisp_netif_txq_len(nif, cls == 1 ? WISP_PRIO_EMERG : WISP_PRIO_COMMON);
            qmax[cls] = q > qmax[cls] ? q : qmax[cls];
        }
    }
    /* drain: every datagram the stack accepted reaches the wire */
    if (!sim_run_until(d->w, prio_all_seen, d->prio, 10000000u)) {
        if (world_ok(d)) {
            check(d, false, "every accepted datagram of part 3 reached the wire");
        }
        return false;
    }
    prio_stats(&d->prio->c[1], scratch, &rows[0]);
    prio_stats(&d->prio->c[0], scratch, &rows[1]);
    rows[0].qmax = qmax[1];
    rows[1].qmax = qmax[0];
    check(d, d->prio->c[1].tos_ok == d->prio->c[1].seen, "urgent datagrams carried tos 0xB8 on the wire");
    return true;
}

static void print_prio_row(unsigned load, const char *cls, const struct prio_row *r)
{
    printf("   %4u %%  %-6s  %5u  %7u  %8.0f  %7llu  %7llu  %6u\n", load, cls, r->n, r->refused, r->mean_us,
           (unsigned long long)r->p99_us, (unsigned long long)r->max_us, r->qmax);
}

static void part_prio(struct demo *d)
{
    struct sim_link_cfg saved, l;
    struct wisp_udp_pcb *bulk = wisp_udp_new(sim_stack(d->a)), *urg = wisp_udp_new(sim_stack(d->a));
    struct prio_row rows[PRIO_NLOADS][2];
    struct prio_meas *meas = calloc(1, sizeof(*meas));
    uint64_t *scratch = malloc(PRIO_MAX * sizeof(uint64_t));
    uint64_t bulk_frame_us;
    double umin = 0, umax = 0;
    unsigned i, done = 0;

    d->prio = meas;
    if (bulk == NULL || urg == NULL || scratch == NULL || meas == NULL ||
        wisp_udp_bind(bulk, NULL, PRIO_BULK_PORT) != WISP_OK || wisp_udp_bind(urg, NULL, PRIO_URG_PORT) != WISP_OK) {
        check(d, false, "part 3 set-up (PCBs, memory)");
        goto out;
    }
    urg->tos = PRIO_TOS_EF; /* DSCP EF: IP output picks the emergency queue */
    d->prio->sender = d->a;

    sim_get_link(d->w, &saved);
    l = saved;
    l.bandwidth_bps = PRIO_BW_BPS;
    sim_set_link(d->w, &l);
    bulk_frame_us = ser_us(&l, ETH_HLEN + IP_HLEN + UDP_HLEN + PRIO_BULK_LEN);

    printf("\n3. Emergency queue  (paper 001 §4.3: A -> B's discard service on a %.0f Mbit/s wire)\n",
           PRIO_BW_BPS / 1e6);
    printf("   bulk   %u B datagrams, common queue, offered at %u..%u %% of the link\n", PRIO_BULK_LEN,
           prio_loads[0], prio_loads[PRIO_NLOADS - 1]);
    printf("   urgent %u B datagrams, UDP PCB tos 0x%02X (DSCP EF), one every %.0f ms on average\n", PRIO_URG_LEN,
           PRIO_TOS_EF, PRIO_URG_GAP_US / 1000.0);
    printf("   latency = send call -> frame enters the wire (virtual us), %.0f ms of sending per load\n",
           PRIO_WINDOW_US / 1000.0);
    printf("   %6s  %-6s  %5s  %7s  %8s  %7s  %7s  %6s\n", "load", "class", "sent", "refused", "mean us", "p99 us",
           "max us", "queue");
    for (i = 0; i < PRIO_NLOADS; i++) {
        if (!prio_run_load(d, bulk, urg, prio_loads[i], scratch, rows[i])) {
            break;
        }
        print_prio_row(prio_loads[i], "urgent", &rows[i][0]);
        print_prio_row(prio_loads[i], "bulk", &rows[i][1]);
        if (done == 0 || rows[i][0].mean_us < umin) {
            umin = rows[i][0].mean_us;
        }
        if (done == 0 || rows[i][0].mean_us > umax) {
            umax = rows[i][0].mean_us;
        }
        done++;
    }
    check(d, done == PRIO_NLOADS, "every load of part 3 ran and drained");
    if (done > 0) {
        const struct prio_row *top = rows[done - 1];
        printf("   queue = peak length of the class's transmit queue (emergency %u, common %u slots);\n"
               "   refused = sends rejected because that queue was full (an overloaded link)\n",
               (unsigned)WISP_TXQ_EMERG_LEN, (unsigned)WISP_TXQ_COMMON_LEN);
        printf("   urgent mean stays within %.0f..%.0f us (one bulk frame takes %llu us); bulk mean grows "
               "from %.0f to %.0f us\n",
               umin, umax, (unsigned long long)bulk_frame_us, rows[0][1].mean_us, top[1].mean_us);
        if (top[0].mean_us > 0) {
            printf("   at %u %%: urgent waits %.0fx less than bulk on average\n", prio_loads[done - 1],
                   top[1].mean_us / top[0].mean_us);
        }
    }
    sim_set_link(d->w, &saved);

out:
    d->prio = NULL;
    if (bulk != NULL) {
        wisp_udp_remove(bulk);
    }
    if (urg != NULL) {
        wisp_udp_remove(urg);
    }
    free(scratch);
    free(meas);
}

/* ---------------------------------------------------- part 4: pools */

static void part_pools(struct demo *d)
{
    unsigned n, i;

    printf("\n4. Pools  (high-water marks over the whole run)\n");
    printf("   %-4s  %-11s  %5s  %5s  %6s\n", "node", "pool", "size", "high", "failed");
    for (n = 0; n < sim_node_count(d->w); n++) {
        struct sim_node *node = sim_node_at(d->w, n);
        const struct wisp_stack *s = sim_stack(node);
        for (i = 0; i < WISP_POOL_COUNT; i++) {
            printf("   %-4s  %-11s  %5u  %5u  %6u\n", i == 0 ? sim_name(node) : "", s->pool[i].name,
                   (unsigned)s->pool[i].count, (unsigned)s->pool[i].high, (unsigned)s->pool[i].failed);
        }
    }
}

/* ---------------------------------------------------------- options */

static void usage(FILE *f)
{
    fprintf(f, "usage: wisp-demo [options]\n"
               "  --seed N            seed of the run (default 1): same seed, same run\n"
               "  --loss PCT          frames lost on the wire (default 1)\n"
               "  --reorder PCT       frame copies delayed past later ones (default 0)\n"
               "  --dup PCT           frames delivered twice (default 0)\n"
               "  --corrupt PCT       frame copies with 1..3 flipped bits (default 0)\n"
               "  --latency-ms N      propagation delay (default 1)\n"
               "  --bandwidth-mbit N  link speed, 0 = infinite (default 100); part 3 uses 10\n"
               "  --pcap FILE         capture of the whole run (default wisp-demo.pcap)\n"
               "  --help              this text\n"
               "exit status: 0 = every check held, 1 = a check failed, 2 = usage error\n");
}

static bool parse_num(const char *s, double lo, double hi, double *out)
{
    char *end;
    double v;
    if (s == NULL || *s == '\0') {
        return false;
    }
    errno = 0;
    v = strtod(s, &end);
    if (errno != 0 || *end != '\0' || !(v >= lo && v <= hi)) {
        return false;
    }
    *out = v;
    return true;
}

static bool parse_seed(const char *s, uint64_t *out)
{
    char *end;
    unsigned long long v;
    if (s == NULL || *s < '0' || *s > '9') {
        return false;
    }
    errno = 0;
    v = strtoull(s, &end, 0);
    if (errno != 0 || *end != '\0') {
        return false;
    }
    *out = v;
    return true;
}

/** Returns -1 to go on, else the exit status. */
static int parse_args(int argc, char **argv, struct demo_opts *o)
{
    int i;

    memset(o, 0, sizeof(*o));
    o->seed = 1;
    o->loss = 1.0;
    o->latency_ms = 1.0;
    o->bandwidth_mbit = 100.0;
    o->pcap = "wisp-demo.pcap";
    for (i = 1; i < argc; i++) {
        const char *opt = argv[i], *val = (i + 1 < argc) ? argv[i + 1] : NULL;
        double *num = NULL, hi = 100.0, v;
        if (strcmp(opt, "--help") == 0 || strcmp(opt, "-h") == 0) {
            usage(stdout);
            return 0;
        } else if (strcmp(opt, "--seed") == 0) {
            if (!parse_seed(val, &o->seed)) {
                fprintf(stderr, "wisp-demo: bad --seed '%s'\n", val != NULL ? val : "");
                return 2;
            }
            i++;
            continue;
        } else if (strcmp(opt, "--pcap") == 0) {
            if (val == NULL || *val == '\0') {
                fprintf(stderr, "wisp-demo: --pcap needs a file name\n");
                return 2;
            }
            o->pcap = val;
            i++;
            continue;
        } else if (strcmp(opt, "--loss") == 0) {
            num = &o->loss;
        } else if (strcmp(opt, "--reorder") == 0) {
            num = &o->reorder;
        } else if (strcmp(opt, "--dup") == 0) {
            num = &o->dup;
        } else if (strcmp(opt, "--corrupt") == 0) {
            num = &o->corrupt;
        } else if (strcmp(opt, "--latency-ms") == 0) {
            num = &o->latency_ms;
            hi = 10000.0;
        } else if (strcmp(opt, "--bandwidth-mbit") == 0) {
            num = &o->bandwidth_mbit;
            hi = 100000.0;
        } else {
            fprintf(stderr, "wisp-demo: unknown option '%s'\n", opt);
            usage(stderr);
            return 2;
        }
        if (!parse_num(val, 0.0, hi, &v)) {
            fprintf(stderr, "wisp-demo: bad %s '%s' (0..%g)\n", opt, val != NULL ? val : "", hi);
            return 2;
        }
        *num = v;
        i++;
    }
    return -1;
}

/* ------------------------------------------------------------- main */

static double real_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/** The world, two nodes, the link of the options, B's services, A's echo
 *  client, the tap and the capture. False on failure (message printed). */
static bool setup(struct demo *d)
{
    struct sim_link_cfg l;

    d->w = sim_world_new(d->o.seed);
    if (d->w == NULL) {
        fprintf(stderr, "wisp-demo: out of memory\n");
        return false;
    }
    /* Before the first node, so the capture starts with the gratuitous ARPs. */
    if (sim_pcap_open(d->w, d->o.pcap) != 0) {
        fprintf(stderr, "wisp-demo: cannot create %s: %s\n", d->o.pcap, strerror(errno));
        return false;
    }
    sim_set_tap(d->w, demo_tap, d);
    sim_link_defaults(&l);
    l.bandwidth_bps = (uint64_t)(d->o.bandwidth_mbit * 1e6 + 0.5);
    l.latency_us = (uint32_t)(d->o.latency_ms * 1000.0 + 0.5);
    l.loss = d->o.loss / 100.0;
    l.reorder = d->o.reorder / 100.0;
    l.dup = d->o.dup / 100.0;
    l.corrupt = d->o.corrupt / 100.0;
    sim_set_link(d->w, &l);

    d->a = sim_node_add(d->w, "A", DEMO_NET "1/24", NULL);
    d->b = sim_node_add(d->w, "B", DEMO_NET "2/24", NULL);
    if (d->a == NULL || d->b == NULL) {
        fprintf(stderr, "wisp-demo: cannot add the nodes\n");
        return false;
    }
    if (wisp_services_udp_start(sim_stack(d->b), &d->svc) != WISP_OK) {
        fprintf(stderr, "wisp-demo: cannot start B's services\n");
        return false;
    }
    d->svc_up = true;
    d->ec.w = d->w;
    d->ec.seed = d->o.seed;
    d->ec.pcb = wisp_udp_new(sim_stack(d->a));
    if (d->ec.pcb == NULL || wisp_udp_bind(d->ec.pcb, NULL, CLIENT_PORT) != WISP_OK) {
        fprintf(stderr, "wisp-demo: cannot open A's echo client\n");
        return false;
    }
    wisp_udp_recv(d->ec.pcb, echo_recv, &d->ec);
    sim_rng_seed(&d->rng, d->o.seed ^ 0xdeadbeefcafef00dull);
    return true;
}

/** Close what the application owns, then free the world (which
 *  deinitialises the stacks and counts pool elements still in use). */
static unsigned teardown(struct demo *d)
{
    if (d->ec.pcb != NULL) {
        wisp_udp_remove(d->ec.pcb);
        d->ec.pcb = NULL;
    }
    if (d->svc_up) {
        wisp_services_udp_stop(&d->svc);
        d->svc_up = false;
    }
    if (d->w != NULL) {
        sim_set_tap(d->w, NULL, NULL);
    }
    return sim_world_free(d->w);
}

int main(int argc, char **argv)
{
    struct demo *d = calloc(1, sizeof(*d));
    struct sim_counters wire;
    double t_real = real_seconds();
    uint64_t t_virtual;
    unsigned leaked;
    int rc;

    if (d == NULL) {
        fprintf(stderr, "wisp-demo: out of memory\n");
        return 1;
    }
    rc = parse_args(argc, argv, &d->o);
    if (rc >= 0) {
        free(d);
        return rc;
    }
    d->tx = malloc(65536);
    d->ec.rx = malloc(65536);
    d->ec.ref = malloc(65536);
    if (d->tx == NULL || d->ec.rx == NULL || d->ec.ref == NULL || !setup(d)) {
        (void)teardown(d);
        free(d->tx);
        free(d->ec.rx);
        free(d->ec.ref);
        free(d);
        return 1;
    }

    printf("wisp demo: two wisp stacks in one process on a simulated Ethernet wire, virtual time, seed %llu\n",
           (unsigned long long)d->o.seed);
    if (d->o.bandwidth_mbit > 0) {
        printf("wire: %g Mbit/s", d->o.bandwidth_mbit);
    } else {
        printf("wire: infinite bandwidth");
    }
    printf(", %g ms latency, loss %g %%, reorder %g %%, dup %g %%, corrupt %g %%, MTU 1500\n", d->o.latency_ms,
           d->o.loss, d->o.reorder, d->o.dup, d->o.corrupt);
    printf("nodes: A %s1/24 (02:00:00:00:00:01), B %s2/24 (02:00:00:00:00:02, UDP echo 7 + discard 9)\n", DEMO_NET,
           DEMO_NET);

    part_ping(d);
    if (world_ok(d)) {
        part_echo(d);
    }
    if (world_ok(d)) {
        part_prio(d);
    }
    part_pools(d);

    wire = *sim_counters(d->w);
    t_virtual = sim_now_us(d->w);
    leaked = teardown(d);
    printf("   teardown: PCBs removed, services stopped, stacks deinitialised (sim_world_free)\n");
    printf("   pools back at baseline: %s\n", leaked == 0 ? "yes" : "NO");
    if (leaked != 0) {
        printf("   %u pool element(s) still in use (see stderr)\n", leaked);
    }
    check(d, leaked == 0, "every pool back at zero use after teardown");

    printf("\nwire totals: %llu frames (%llu bytes) sent, %llu lost, %llu duplicated, %llu reordered, "
           "%llu corrupted\n",
           (unsigned long long)wire.sent, (unsigned long long)wire.bytes, (unsigned long long)wire.lost,
           (unsigned long long)wire.duplicated, (unsigned long long)wire.reordered,
           (unsigned long long)wire.corrupted);
    printf("capture: %s, %llu frames as they entered the wire (virtual timestamps, before impairments);\n"
           "         Wireshark opens it, or: tshark -r %s\n",
           d->o.pcap, (unsigned long long)wire.sent, d->o.pcap);
    printf("not yet: TCP, netconn/socket goodput and HTTP are not implemented; the demo will grow with them\n");
    printf("run: %.3f s of virtual time in %.2f s of real time\n", (double)t_virtual / 1e6,
           real_seconds() - t_real);
    printf("result: %u/%u checks held%s\n", d->checks - d->failed, d->checks, d->failed == 0 ? "" : " -- FAILED");

    rc = d->failed == 0 ? 0 : 1;
    free(d->tx);
    free(d->ec.rx);
    free(d->ec.ref);
    free(d);
    return rc;
}
