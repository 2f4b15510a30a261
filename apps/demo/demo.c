/**
 * @file demo.c
 * wisp-demo: the whole stack in one short report, in under a minute, with
 * no root, no TAP device and no network. Four wisp stacks in one process:
 * two on the simulated Ethernet wire (sim/simwire.h, virtual time,
 * reproducible from the seed) and two with stack threads on a real-time
 * wire (demo_tcp.c, wall-clock time), all with the impairment given on the
 * command line. Parts:
 *
 *  1. ARP + ping: A resolves B and pings it at 56, 1472 and 8000 bytes
 *     (the last one fragmented): replies, loss, RTT in virtual ms.
 *  2. UDP echo: datagrams of random sizes echoed byte-exact by B's RFC 862
 *     service, then 60 KB datagrams fragmented across the impaired wire,
 *     with an application-level retry (how many attempts were needed).
 *  3. HTTP (demo_http.c): GETs from a raw-API client on A to B's wisp_httpd.
 *  4. Emergency queue (wisp/netif.h, lwIP-analysis paper §4.3): a bulk UDP stream (common queue)
 *     with urgent datagrams (tos 0xB8, DSCP EF) interleaved, at 30..120 %
 *     of the link; the delay from the send call to the frame entering the
 *     wire (seen by the world's tap), urgent against common.
 *  5. TCP bulk goodput of the raw, netconn and socket APIs, and
 *  6. small writes against full-size ones (demo_tcp.c, wall clock).
 *  7. Pools: high-water marks of every pool of every stack, and whether
 *     all pools are back at zero use after the teardowns.
 * Then a summary. Everything on a wire is captured into one pcap file.
 * Exit status: 0 when every check held, 1 when one failed, 2 on a usage
 * error.
 *
 *   wisp-demo [--seed N] [--loss PCT] [--delay-ms MS] [--rate-mbit N]
 *             [--reorder PCT] [--dup PCT] [--corrupt PCT] [--pcap FILE]
 *             [--quick]
 */
#define _POSIX_C_SOURCE 200809L /* clock_gettime */

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "demo.h"
#include "wisp/prot/arp.h"
#include "wisp/prot/ethernet.h"
#include "wisp/prot/ip4.h"
#include "wisp/prot/udp.h"

/* ------------------------------------------------------------ constants */

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

/* Part 4: the emergency-queue experiment, timed in bulk frames so that
 * it has the same shape at any rate. */
#define PRIO_BW_BPS 10000000u        /**< 10 Mbit/s when the wire's rate is infinite */
#define PRIO_BULK_LEN 1400u          /**< one transmit block per datagram */
#define PRIO_URG_LEN 200u
#define PRIO_URG_GAP_FRAMES 3.5      /**< mean gap between urgent datagrams */
#define PRIO_WINDOW_FRAMES 400u      /**< sending time per load */
#define PRIO_MAX 4096u               /**< datagrams per class and load */
#define PRIO_BULK_PORT 4001u
#define PRIO_URG_PORT 4002u
#define PRIO_TOS_EF 0xB8u            /**< DSCP 46 (EF) << 2 */
#define PRIO_MAGIC 0x77697370u       /**< "wisp": marks the demo's datagrams */
#define PRIO_NLOADS 4u

/** Offered bulk loads of the emergency-queue part, percent of the link. */
static const unsigned prio_loads[PRIO_NLOADS] = { 30, 60, 90, 120 };
/** Ping sizes of part 1 (ICMP data bytes). */
static const uint16_t ping_sizes[] = { 56, 1472, 8000 };

/* ---------------------------------------------------------------- state */

/** One class of the emergency-queue part, for one load. */
struct prio_class {
    uint64_t sent_us[PRIO_MAX];   /**< send-call time, by sequence number */
    uint64_t wire_us[PRIO_MAX];   /**< wire-entry time (UINT64_MAX: not yet) */
    unsigned n;                   /**< datagrams sent */
    unsigned seen;                /**< datagrams seen entering the wire */
    unsigned refused;             /**< sends the stack refused (queue full) */
    unsigned tos_ok;              /**< frames carrying the class's tos */
};

/** Emergency-queue measurement (0 = bulk, 1 = urgent). */
struct prio_meas {
    struct sim_node *sender;
    struct prio_class c[2];
};

/** One row of the emergency-queue table: statistics over the datagrams that
 *  reached the wire (n sent - refused). */
struct prio_row {
    unsigned n, refused;
    double mean_us;
    uint64_t p99_us, max_us;
    unsigned qmax;               /**< peak length of the class's queue */
};

/* -------------------------------------------------------------- helpers */

void demo_check(struct demo *d, bool ok, const char *what)
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
        demo_check(d, false, e);
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
    unsigned per = ((unsigned)l->mtu - WISP_IP4_HLEN) & ~7u; /* RFC 791: 8-byte units */
    if (payload + WISP_IP4_HLEN <= l->mtu) {
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
    return 2u * ((uint64_t)frames * ser_us(&l, WISP_ETH_HLEN + l.mtu) + 4u * (uint64_t)l.latency_us + 1000u) + 5000u;
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

    p = wisp_pbuf_alloc(wisp_udp_stack(pcb), WISP_LAYER_TRANSPORT, len, kind);
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

/* Emergency queue: a UDP datagram from the sender whose payload starts with the
 * magic, then the class (4 bytes) and the sequence number (4 bytes). */
static void prio_tap(struct prio_meas *m, const uint8_t *f, size_t len, uint64_t t)
{
    const uint8_t *ip = f + WISP_ETH_HLEN, *udp, *pl;
    unsigned ihl, cls;
    uint32_t seq;
    struct prio_class *c;

    if (len < WISP_ETH_HLEN + WISP_IP4_HLEN || wisp_rd16(f + WISP_ETH_OFF_TYPE) != WISP_ETHTYPE_IP4 ||
        ip[WISP_IP4_OFF_PROTO] != WISP_IP4_PROTO_UDP ||
        (wisp_rd16(ip + WISP_IP4_OFF_FRAG) & WISP_IP4_OFFMASK) != 0) {
        return;
    }
    ihl = wisp_ip4_hdr_hlen(ip);
    if (ihl < WISP_IP4_HLEN || len < WISP_ETH_HLEN + ihl + WISP_UDP_HLEN + 12u) {
        return;
    }
    udp = ip + ihl;
    pl = udp + WISP_UDP_HLEN;
    if (wisp_rd16(udp + WISP_UDP_OFF_DPORT) != WISP_PORT_DISCARD || wisp_rd32(pl) != PRIO_MAGIC) {
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
    if (ip[WISP_IP4_OFF_TOS] == (cls == 1u ? PRIO_TOS_EF : 0u)) {
        c->tos_ok++;
    }
}

/* Part 1: A's ARP requests and B's replies (gratuitous announcements,
 * whose sender and target addresses are equal, are not counted). */
static void arp_tap(struct demo *d, struct sim_node *from, const uint8_t *f, size_t len, uint64_t t)
{
    const uint8_t *arp = f + WISP_ETH_HLEN;
    uint16_t op;

    if (len < WISP_ETH_HLEN + WISP_ARP_LEN || wisp_rd16(f + WISP_ETH_OFF_TYPE) != WISP_ETHTYPE_ARP ||
        memcmp(arp + WISP_ARP_OFF_SPA, arp + WISP_ARP_OFF_TPA, WISP_ARP_PLEN_IP4) == 0) {
        return;
    }
    op = wisp_rd16(arp + WISP_ARP_OFF_OP);
    if (op == WISP_ARP_OP_REQUEST && from == d->a) {
        if (d->arp.requests++ == 0) {
            d->arp.first_req_us = t;
        }
    } else if (op == WISP_ARP_OP_REPLY && from == d->b) {
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
static void ping_cb(void *arg, const struct wisp_ip_info *ip, uint16_t id, uint16_t seq, struct wisp_pbuf *p)
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
    unsigned i, k, total_replies = 0, total_hit = 0;
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
    a_knows = wisp_arp_lookup(sa, wisp_netif_index(sim_netif(d->a)), sim_ip(d->b), mac) && memcmp(mac, sim_mac(d->b), 6) == 0;
    b_knows = wisp_arp_lookup(sb, wisp_netif_index(sim_netif(d->b)), sim_ip(d->a), mac) && memcmp(mac, sim_mac(d->a), 6) == 0;
    printf("   ARP caches       A has B's MAC: %s; B learned A's from the request: %s\n", a_knows ? "yes" : "no",
           b_knows ? "yes" : "no");
    demo_check(d, a_knows, "A resolved B's MAC address");

    printf("   %8s  %6s  %4s  %7s  %4s   %s\n", "size (B)", "frames", "sent", "replies", "hit",
           "rtt min / avg / max (virtual ms)");
    for (i = 0; i < WISP_ARRAY_SIZE(ping_sizes); i++) {
        uint16_t len = ping_sizes[i];
        unsigned frames = ip_frames(&l, 8u + len), replies = 0, hit = 0;
        uint64_t min = UINT64_MAX, max = 0, sum = 0;
        uint64_t timeout = wait_us(d, frames);

        if (timeout < 1000000u) {
            timeout = 1000000u; /* ping's customary 1 s */
        }
        for (k = 0; k < PING_COUNT; k++) {
            const struct sim_counters *wc = sim_counters(d->w);
            uint64_t bad0 = wc->lost + wc->corrupted;
            bool ok = ping_once(d, seq++, len, timeout, &rtt);
            bool wire_hit = wc->lost + wc->corrupted != bad0;
            if (ok) {
                replies++;
                sum += rtt;
                min = rtt < min ? rtt : min;
                max = rtt > max ? rtt : max;
            } else if (wire_hit) {
                hit++; /* a request or reply frame lost / corrupted on the wire */
            }
            if (!world_ok(d)) {
                return;
            }
        }
        total_replies += replies;
        total_hit += hit;
        if (replies > 0) {
            printf("   %8u  %6u  %4u  %7u  %4u   %.3f / %.3f / %.3f\n", (unsigned)len, frames, PING_COUNT, replies, hit,
                   ms(min), ms(sum) / replies, ms(max));
        } else {
            printf("   %8u  %6u  %4u  %7u  %4u   -\n", (unsigned)len, frames, PING_COUNT, replies, hit);
        }
    }
    printf("   frames = Ethernet frames per request (IP fragments, RFC 791); hit = unanswered requests whose\n"
           "   exchange lost a frame on the impaired wire; %u late or duplicate replies ignored\n",
           d->ping.late);
    d->sum.ping_sent = PING_COUNT * (unsigned)WISP_ARRAY_SIZE(ping_sizes);
    d->sum.ping_replies = total_replies;
    demo_check(d, d->ping.bad == 0, "every echo reply carried the request's data");
    demo_check(d, total_replies + total_hit == d->sum.ping_sent,
               "every request whose frames all crossed the wire was answered");
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
                      uint16_t port, const struct wisp_ip_info *ip)
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
    d->sum.echo_ok = ok;
    d->sum.echo_total = ECHO_COUNT;
    demo_check(d, ok == ECHO_COUNT, "every random-size datagram came back byte-exact");
    demo_check(d, d->svc.udp_echo_st.datagrams >= ok, "B's echo service counted every datagram that came back");
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
    frames = ip_frames(&l, WISP_UDP_HLEN + BIG_LEN);
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
           (unsigned)wisp_stack_counter(sim_stack(d->a), WISP_CTR_IP4_REASS_OK),
           (unsigned)wisp_stack_counter(sim_stack(d->b), WISP_CTR_IP4_REASS_OK),
           (unsigned)(wisp_stack_counter(sim_stack(d->a), WISP_CTR_IP4_REASS_TIMEOUT) +
                      wisp_stack_counter(sim_stack(d->a), WISP_CTR_IP4_REASS_EVICT)),
           (unsigned)(wisp_stack_counter(sim_stack(d->b), WISP_CTR_IP4_REASS_TIMEOUT) +
                      wisp_stack_counter(sim_stack(d->b), WISP_CTR_IP4_REASS_EVICT)));
    d->sum.big_ok = ok;
    d->sum.big_total = BIG_COUNT;
    demo_check(d, ok == BIG_COUNT, "every 60 KB datagram came back byte-exact");
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
    demo_check(d, d->ec.bad == 0, "no corrupted or foreign datagram reached the application");
}

/* ------------------------------------------ part 4: emergency queue */

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
 *  PRIO_WINDOW_FRAMES bulk frame times, then drain. Fills rows[0] (urgent), rows[1] (bulk). */
static bool prio_run_load(struct demo *d, struct wisp_udp_pcb *bulk, struct wisp_udp_pcb *urg, unsigned load,
                          uint64_t *scratch, struct prio_row rows[2])
{
    struct sim_link_cfg l;
    struct wisp_netif *nif = sim_netif(d->a);
    uint64_t now = sim_now_us(d->w), end, next_bulk, next_urg, frame_us;
    double bulk_gap, urg_gap;
    unsigned qmax[2] = { 0, 0 }, q, cls;

    sim_get_link(d->w, &l);
    frame_us = ser_us(&l, WISP_ETH_HLEN + WISP_IP4_HLEN + WISP_UDP_HLEN + PRIO_BULK_LEN);
    end = now + PRIO_WINDOW_FRAMES * frame_us;
    bulk_gap = (double)frame_us * 100.0 / load;
    urg_gap = (double)frame_us * PRIO_URG_GAP_FRAMES;
    memset(d->prio->c, 0, sizeof(d->prio->c));
    next_bulk = now + prio_gap(d, bulk_gap);
    next_urg = now + prio_gap(d, urg_gap);
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
            next_urg += prio_gap(d, urg_gap);
        }
        for (cls = 0; cls < 2; cls++) {
            q = wisp_netif_txq_len(nif, cls == 1 ? WISP_PRIO_EMERG : WISP_PRIO_COMMON);
            qmax[cls] = q > qmax[cls] ? q : qmax[cls];
        }
    }
    /* drain: every datagram the stack accepted reaches the wire */
    if (!sim_run_until(d->w, prio_all_seen, d->prio, 10000000u)) {
        if (world_ok(d)) {
            demo_check(d, false, "every accepted datagram of the emergency-queue part reached the wire");
        }
        return false;
    }
    prio_stats(&d->prio->c[1], scratch, &rows[0]);
    prio_stats(&d->prio->c[0], scratch, &rows[1]);
    rows[0].qmax = qmax[1];
    rows[1].qmax = qmax[0];
    demo_check(d, d->prio->c[1].tos_ok == d->prio->c[1].seen, "urgent datagrams carried tos 0xB8 on the wire");
    return true;
}

static void part_prio(struct demo *d, unsigned num)
{
    struct sim_link_cfg saved, l;
    struct wisp_udp_pcb *bulk = wisp_udp_new(sim_stack(d->a)), *urg = wisp_udp_new(sim_stack(d->a));
    struct prio_row rows[PRIO_NLOADS][2];
    struct prio_meas *meas = calloc(1, sizeof(*meas));
    uint64_t *scratch = malloc(PRIO_MAX * sizeof(uint64_t));
    uint64_t bulk_frame_us;
    unsigned i, done = 0;

    d->prio = meas;
    if (bulk == NULL || urg == NULL || scratch == NULL || meas == NULL ||
        wisp_udp_bind(bulk, NULL, PRIO_BULK_PORT) != WISP_OK || wisp_udp_bind(urg, NULL, PRIO_URG_PORT) != WISP_OK) {
        demo_check(d, false, "emergency queue set-up (PCBs, memory)");
        goto out;
    }
    wisp_udp_set_tos(urg, PRIO_TOS_EF); /* DSCP EF: IP output picks the emergency queue */
    d->prio->sender = d->a;

    sim_get_link(d->w, &saved);
    l = saved;
    if (l.bandwidth_bps == 0) {
        l.bandwidth_bps = PRIO_BW_BPS; /* an infinite wire never queues */
    }
    sim_set_link(d->w, &l);
    bulk_frame_us = ser_us(&l, WISP_ETH_HLEN + WISP_IP4_HLEN + WISP_UDP_HLEN + PRIO_BULK_LEN);

    printf("\n%u. Emergency queue  (Analysis and optimization of the lwIP mechanism, 2015, §4.3; A -> B's discard service, %g Mbit/s, virtual time)\n", num,
           (double)l.bandwidth_bps / 1e6);
    if (saved.bandwidth_bps == 0) {
        printf("   (%g Mbit/s here: a wire of infinite rate never queues)\n", (double)l.bandwidth_bps / 1e6);
    }
    printf("   common: %u B UDP datagrams (tos 0) offered at %u..%u %% of the link; one takes %llu us on the wire\n",
           PRIO_BULK_LEN, prio_loads[0], prio_loads[PRIO_NLOADS - 1], (unsigned long long)bulk_frame_us);
    printf("   urgent: %u B UDP datagrams (tos 0x%02X, DSCP EF -> emergency queue), one per %.1f common frame times\n",
           PRIO_URG_LEN, PRIO_TOS_EF, PRIO_URG_GAP_FRAMES);
    printf("   latency = send call -> frame enters the wire, us; %u common frame times of sending per load\n",
           PRIO_WINDOW_FRAMES);
    printf("   %6s  %11s  %19s  %19s  %7s  %10s\n", "load", "sent u / c", "urgent mean / p99", "common mean / p99",
           "refused", "peak queue");
    for (i = 0; i < PRIO_NLOADS; i++) {
        const struct prio_row *u, *c;
        if (!prio_run_load(d, bulk, urg, prio_loads[i], scratch, rows[i])) {
            break;
        }
        u = &rows[i][0];
        c = &rows[i][1];
        printf("   %4u %%  %4u / %4u  %8.0f / %8llu  %8.0f / %8llu  %7u  %4u / %3u\n", prio_loads[i], u->n, c->n,
               u->mean_us, (unsigned long long)u->p99_us, c->mean_us, (unsigned long long)c->p99_us,
               u->refused + c->refused, u->qmax, c->qmax);
        done++;
    }
    demo_check(d, done == PRIO_NLOADS, "every load of the emergency-queue part ran and drained");
    if (done > 0) {
        const struct prio_row *top = rows[done - 1];
        printf("   refused = sends rejected because their queue was full (emergency %u, common %u slots);\n"
               "   an urgent frame waits at most for the frame being sent (%llu us), a common one for the queue\n",
               (unsigned)WISP_TXQ_EMERG_LEN, (unsigned)WISP_TXQ_COMMON_LEN, (unsigned long long)bulk_frame_us);
        if (top[0].mean_us > 0) {
            printf("   at %u %%: urgent %.0f us vs common %.0f us on average: urgent %.0fx faster\n",
                   prio_loads[done - 1], top[0].mean_us, top[1].mean_us, top[1].mean_us / top[0].mean_us);
        }
        d->sum.prio_ran = true;
        d->sum.prio_load = prio_loads[done - 1];
        d->sum.prio_urgent_us = top[0].mean_us;
        d->sum.prio_common_us = top[1].mean_us;
        demo_check(d, top[0].mean_us < top[1].mean_us, "urgent latency below common latency under overload");
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

/* ---------------------------------------------------- part 7: pools */

void demo_pool_snapshot(struct demo *d, const char *node, const struct wisp_stack *s)
{
    struct demo_pool_snap *p;
    unsigned i;

    if (d->npools >= DEMO_MAX_STACKS) {
        return;
    }
    p = &d->pools[d->npools++];
    (void)snprintf(p->node, sizeof p->node, "%s", node);
    for (i = 0; i < WISP_POOL_COUNT; i++) {
        struct wisp_pool_stats ps;
        (void)wisp_stack_pool_stats(s, i, &ps);
        p->name[i] = ps.name;
        p->count[i] = (unsigned)ps.count;
        p->high[i] = (unsigned)ps.high;
        p->failed[i] = (unsigned)ps.failed;
    }
}

static void part_pools(struct demo *d, unsigned num)
{
    unsigned n, i;

    printf("\n%u. Pools  (high-water marks of every stack over its run; failed = allocations refused)\n", num);
    if (d->npools == 0) {
        return;
    }
    printf("   %-11s  %5s", "pool", "size");
    for (n = 0; n < d->npools; n++) {
        printf("  %6s", d->pools[n].node);
    }
    printf("  %6s\n", "failed");
    for (i = 0; i < WISP_POOL_COUNT; i++) {
        unsigned failed = 0;
        printf("   %-11s  %5u", d->pools[0].name[i] != NULL ? d->pools[0].name[i] : "?", d->pools[0].count[i]);
        for (n = 0; n < d->npools; n++) {
            printf("  %6u", d->pools[n].high[i]);
            failed += d->pools[n].failed[i];
        }
        printf("  %6u\n", failed);
    }
    printf("   after the teardowns: %u pool element(s) in use in %u stacks -> pools back at baseline: %s\n",
           d->sum.leaked, d->sum.stacks, d->sum.leaked == 0 ? "yes" : "NO");
}

/* ---------------------------------------------------------- options */

static void usage(FILE *f)
{
    fprintf(f, "usage: wisp-demo [options]\n"
               "  --seed N            seed of the run (default 1): with the same seed parts 1-4\n"
               "                      repeat exactly, parts 5-6 meet the same losses\n"
               "  --loss PCT          frames lost on the wire (default 1)\n"
               "  --reorder PCT       frame copies delayed past later ones (default 0)\n"
               "  --dup PCT           frames delivered twice (default 0)\n"
               "  --corrupt PCT       frame copies with 1..3 flipped bits (default 0)\n"
               "  --delay-ms MS       one-way delay (default 1; alias --latency-ms)\n"
               "  --rate-mbit N       link rate, 0 = infinite (default 100; alias --bandwidth-mbit);\n"
               "                      the small-write part caps it at 10, the emergency queue\n"
               "                      uses 10 when it is infinite\n"
               "  --pcap FILE         capture of the whole run (default wisp-demo.pcap)\n"
               "  --quick             smaller TCP transfers (the test under sanitizers)\n"
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
    o->rate_mbit = 100.0;
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
        } else if (strcmp(opt, "--quick") == 0) {
            o->quick = true;
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
        } else if (strcmp(opt, "--delay-ms") == 0 || strcmp(opt, "--latency-ms") == 0) {
            num = &o->latency_ms;
            hi = 10000.0;
        } else if (strcmp(opt, "--rate-mbit") == 0 || strcmp(opt, "--bandwidth-mbit") == 0) {
            num = &o->rate_mbit;
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

double demo_real_s(void)
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
    l.bandwidth_bps = (uint64_t)(d->o.rate_mbit * 1e6 + 0.5);
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

static void print_summary(struct demo *d, double t_virtual_s)
{
    const struct demo_summary *m = &d->sum;

    printf("\nsummary  (seed %llu; every wire: ", (unsigned long long)d->o.seed);
    if (d->o.rate_mbit > 0) {
        printf("%g Mbit/s", d->o.rate_mbit);
    } else {
        printf("infinite rate");
    }
    printf(", %g ms delay, loss %g %%", d->o.latency_ms, d->o.loss);
    if (d->o.reorder > 0 || d->o.dup > 0 || d->o.corrupt > 0) {
        printf(", reorder %g %%, dup %g %%, corrupt %g %%", d->o.reorder, d->o.dup, d->o.corrupt);
    }
    printf(")\n");
    printf("   %-13s %u/%u echo replies (56, 1472 and 8000 B, the last in 6 fragments)\n", "ping", m->ping_replies,
           m->ping_sent);
    printf("   %-13s %u/%u random-size and %u/%u 60 KB datagrams echoed byte-exact\n", "UDP echo", m->echo_ok,
           m->echo_total, m->big_ok, m->big_total);
    if (m->http_built) {
        printf("   %-13s %u/%u GETs answered 200 with the whole body; /big.bin %llu B in %.1f virtual ms\n", "HTTP",
               m->http_ok, m->http_total, (unsigned long long)m->http_big_bytes, m->http_big_ms);
    } else {
        printf("   %-13s server not in this build (apps/lib/httpd.h absent); the client saw the refusal\n", "HTTP");
    }
    if (m->tcp_ran) {
        printf("   %-13s raw %.1f, netconn %.1f, socket %.1f Mbit/s (wall clock); %u/3 byte-exact\n", "TCP goodput",
               m->tcp_mbit[0], m->tcp_mbit[1], m->tcp_mbit[2], m->tcp_exact);
        printf("   %-13s worst: %u B writes at %.0f %% of the 1460-byte goodput\n", "small writes",
               m->small_min_size, m->small_ratio * 100.0);
    }
    if (m->prio_ran) {
        printf("   %-13s at %u %% load: urgent %.0f us vs common %.0f us from send call to wire\n", "urgent",
               m->prio_load, m->prio_urgent_us, m->prio_common_us);
    }
    printf("   %-13s %s (%u stacks)\n", "pools", m->leaked == 0 ? "all back at baseline" : "NOT back at baseline",
           m->stacks);
    printf("   %-13s %s: %llu frames (tshark -r %s)\n", "capture", d->o.pcap,
           (unsigned long long)m->frames_captured, d->o.pcap);
    printf("   %-13s %.3f s virtual; whole demo %.1f s wall clock\n", "time", t_virtual_s,
           demo_real_s() - d->t_real0);
}

int main(int argc, char **argv)
{
    struct demo *d = calloc(1, sizeof(*d));
    struct sim_counters wire;
    uint64_t t_virtual;
    unsigned leaked;
    int rc;

    if (d == NULL) {
        fprintf(stderr, "wisp-demo: out of memory\n");
        return 1;
    }
    d->t_real0 = demo_real_s();
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
    setvbuf(stdout, NULL, _IOLBF, 0); /* the report as it happens, also into a pipe */

    printf("wisp demo: four wisp stacks in one process, seed %llu\n", (unsigned long long)d->o.seed);
    printf("wire (every part): ");
    if (d->o.rate_mbit > 0) {
        printf("%g Mbit/s", d->o.rate_mbit);
    } else {
        printf("infinite rate");
    }
    printf(", %g ms delay, loss %g %%, reorder %g %%, dup %g %%, corrupt %g %%, MTU 1500\n", d->o.latency_ms,
           d->o.loss, d->o.reorder, d->o.dup, d->o.corrupt);
    printf("parts 1-4: A " DEMO_NET "1, B " DEMO_NET "2 (UDP echo 7, discard 9, HTTP 80) on the simulated wire,\n"
           "           virtual time: reproducible from the seed\n");
    printf("parts 5-6: A " DEMO_RT_NET "1, B " DEMO_RT_NET "2 with stack threads on a real-time wire, wall-clock "
           "time\n");

    part_ping(d);
    if (world_ok(d)) {
        part_echo(d);
    }
    if (world_ok(d)) {
        demo_part_http(d, 3);
    }
    if (world_ok(d)) {
        part_prio(d, 4);
    }

    /* the simulated part ends here: its stacks go, the capture is closed
     * (the real-time part appends to it) */
    wire = *sim_counters(d->w);
    t_virtual = sim_now_us(d->w);
    d->pcap_end_us = t_virtual;
    demo_pool_snapshot(d, "sim-A", sim_stack(d->a));
    demo_pool_snapshot(d, "sim-B", sim_stack(d->b));
    leaked = teardown(d);
    d->w = NULL;
    d->sum.leaked += leaked;
    d->sum.stacks += 2;
    d->sum.frames_captured += wire.sent;
    printf("   simulated wire: %llu frames (%llu B), %llu lost, %llu duplicated, %llu reordered, %llu corrupted; "
           "%.3f s virtual\n",
           (unsigned long long)wire.sent, (unsigned long long)wire.bytes, (unsigned long long)wire.lost,
           (unsigned long long)wire.duplicated, (unsigned long long)wire.reordered,
           (unsigned long long)wire.corrupted, (double)t_virtual / 1e6);
    printf("   teardown: PCBs removed, services stopped, stacks freed; pools back at baseline: %s\n",
           leaked == 0 ? "yes" : "NO");
    demo_check(d, leaked == 0, "simulated part: every pool back at zero use after teardown");

    demo_part_tcp(d, 5);
    part_pools(d, 7);
    print_summary(d, (double)t_virtual / 1e6);
    printf("result: %u/%u checks held%s\n", d->checks - d->failed, d->checks, d->failed == 0 ? "" : " -- FAILED");

    rc = d->failed == 0 ? 0 : 1;
    free(d->tx);
    free(d->ec.rx);
    free(d->ec.ref);
    free(d);
    return rc;
}
