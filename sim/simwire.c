/**
 * @file simwire.c
 * The simulated network: wisp stacks joined by a virtual Ethernet hub on
 * virtual time, with a configurable impaired link (bandwidth, latency,
 * loss, duplication, reordering, corruption, MTU), reproducible from one
 * seed, with optional pcap capture of the wire. See simwire.h.
 *
 * Host code (malloc, stdio). Everything lives in a struct sim_world; there
 * is no global state.
 */
#define WISP_PRIVATE_ACCESS 1 /* simulator: white-box, sees the private tier (wisp/arch.h) */
#include "simwire.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "wisp/pcapdev.h"
#include "wisp/chksum.h"
#include "wisp/ethernet.h"

#define SIM_MAX_NODES 254u
#define SIM_DEFAULT_MAX_EVENTS 20000000ull
/** Events processed without the clock moving before the run is declared
 *  stuck (a livelock in a stack or a zero-delay ping-pong). */
#define SIM_MAX_SAME_TIME 1000000ull
#define SIM_MIN_FRAME WISP_ETH_MIN_FRAME /* Ethernet minimum without FCS (RFC 894 padding) */

enum sim_ev_kind { SIM_EV_FRAME = 1, SIM_EV_TXDONE = 2 };

/** One scheduled event: a frame copy arriving at every other port, or a
 *  port finishing the serialisation of its frame. */
struct sim_event {
    uint64_t t;              /**< virtual time, us */
    uint64_t seq;            /**< insertion order: ties run first-in first-out */
    struct sim_node *node;   /**< sender (frame) / port (txdone) */
    uint8_t *data;           /**< frame bytes (malloc'd), FRAME only */
    uint16_t len;
    uint8_t kind;            /**< enum sim_ev_kind */
};

struct sim_node {
    struct sim_world *w;
    unsigned num;             /**< 1-based node number (last MAC byte) */
    char name[32];
    struct wisp_stack *s;     /**< heap-allocated stack */
    struct wisp_netif nif;
    struct wisp_dev dev;      /**< our "driver", bottom of the device chain */
    uint8_t mac[6];
    wisp_ip4_t ip;
    bool busy;                /**< serialising a frame (transmit says WOULDBLOCK) */
    bool plugged;             /**< cable in */
};

struct sim_world {
    uint64_t seed;
    uint64_t now_us;
    struct sim_rng rng;
    struct sim_link_cfg link;
    struct sim_counters ctr;

    struct sim_node **nodes;
    unsigned nnodes, cap_nodes;

    struct sim_event *heap;   /**< binary min-heap on (t, seq) */
    size_t nheap, cap_heap;
    uint64_t next_seq;

    sim_tap_fn tap;
    void *tap_arg;

    uint64_t max_events;
    const char *error;
    char errbuf[160];
    bool closing;

    /* capture: the generic pcap writer of src/netif/pcapdev.c, fed with the
     * frames entering the wire (it is not part of any device chain; its
     * dummy lower device only satisfies wisp_pcapdev_init) */
    FILE *pcap_file;
    bool pcap_ready;          /**< header written (needs a stack, see pcap_start) */
    struct wisp_pcapdev pcap;
    struct wisp_dev pcap_lower;
};

/* ------------------------------------------------------------ random */

static uint64_t splitmix64(uint64_t *x)
{
    uint64_t z = (*x += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

void sim_rng_seed(struct sim_rng *r, uint64_t seed)
{
    uint64_t x = seed;
    unsigned i;
    for (i = 0; i < 4; i++) {
        r->s[i] = splitmix64(&x);
    }
    if ((r->s[0] | r->s[1] | r->s[2] | r->s[3]) == 0) {
        r->s[0] = 1; /* xoshiro must not start from all zeros */
    }
}

static uint64_t rotl64(uint64_t x, int k)
{
    return (x << k) | (x >> (64 - k));
}

/* xoshiro256** 1.0 (Blackman & Vigna). */
uint64_t sim_rng_next(struct sim_rng *r)
{
    uint64_t *s = r->s;
    uint64_t result = rotl64(s[1] * 5u, 7) * 9u;
    uint64_t t = s[1] << 17;
    s[2] ^= s[0];
    s[3] ^= s[1];
    s[1] ^= s[2];
    s[0] ^= s[3];
    s[2] ^= t;
    s[3] = rotl64(s[3], 45);
    return result;
}

uint64_t sim_rng_below(struct sim_rng *r, uint64_t n)
{
    uint64_t lim, v;
    if (n == 0) {
        return 0;
    }
    /* Rejection sampling: no modulo bias. */
    lim = UINT64_MAX - (UINT64_MAX % n);
    do {
        v = sim_rng_next(r);
    } while (v >= lim);
    return v % n;
}

double sim_rng_double(struct sim_rng *r)
{
    return (double)(sim_rng_next(r) >> 11) * (1.0 / 9007199254740992.0); /* 53 bits / 2^53 */
}

static bool chance(struct sim_world *w, double p)
{
    if (p <= 0.0) {
        return false; /* no draw: a zero probability does not shift the stream */
    }
    return sim_rng_double(&w->rng) < p;
}

/* ------------------------------------------------------------- events */

static bool ev_before(const struct sim_event *a, const struct sim_event *b)
{
    return a->t < b->t || (a->t == b->t && a->seq < b->seq);
}

static bool ev_push(struct sim_world *w, uint64_t t, uint8_t kind, struct sim_node *n, uint8_t *data, uint16_t len)
{
    size_t i;
    struct sim_event ev;
    if (w->nheap == w->cap_heap) {
        size_t cap = w->cap_heap ? w->cap_heap * 2 : 256;
        struct sim_event *h = realloc(w->heap, cap * sizeof(*h));
        if (h == NULL) {
            return false;
        }
        w->heap = h;
        w->cap_heap = cap;
    }
    ev.t = t;
    ev.seq = w->next_seq++;
    ev.node = n;
    ev.data = data;
    ev.len = len;
    ev.kind = kind;
    i = w->nheap++;
    while (i > 0) {
        size_t parent = (i - 1) / 2;
        if (!ev_before(&ev, &w->heap[parent])) {
            break;
        }
        w->heap[i] = w->heap[parent];
        i = parent;
    }
    w->heap[i] = ev;
    return true;
}

static struct sim_event ev_pop(struct sim_world *w)
{
    struct sim_event top = w->heap[0];
    struct sim_event last = w->heap[--w->nheap];
    size_t i = 0, n = w->nheap;
    for (;;) {
        size_t c = 2 * i + 1;
        if (c >= n) {
            break;
        }
        if (c + 1 < n && ev_before(&w->heap[c + 1], &w->heap[c])) {
            c++;
        }
        if (!ev_before(&w->heap[c], &last)) {
            break;
        }
        w->heap[i] = w->heap[c];
        i = c;
    }
    if (n > 0) {
        w->heap[i] = last;
    }
    return top;
}

static void fail(struct sim_world *w, const char *why)
{
    if (w->error == NULL) {
        snprintf(w->errbuf, sizeof(w->errbuf), "sim: %s at t=%llu us (seed %llu)", why,
                 (unsigned long long)w->now_us, (unsigned long long)w->seed);
        w->error = w->errbuf;
        fprintf(stderr, "%s\n", w->errbuf);
    }
}

/* ------------------------------------------------------------ capture */

static int pcap_write_cb(void *ctx, const void *buf, size_t len)
{
    struct sim_world *w = ctx;
    return fwrite(buf, 1, len, w->pcap_file) == len ? 0 : -1;
}

static uint64_t pcap_time_cb(void *ctx)
{
    const struct sim_world *w = ctx;
    return w->now_us;
}

/* wisp_pcapdev_init wants a stack (only as a clock fallback, unused since we
 * give our own clock), so the header is written once the first node exists. */
static void pcap_start(struct sim_world *w, struct wisp_stack *s)
{
    if (w->pcap_file == NULL || w->pcap_ready) {
        return;
    }
    memset(&w->pcap_lower, 0, sizeof(w->pcap_lower));
    if (wisp_pcapdev_init(&w->pcap, s, &w->pcap_lower, pcap_write_cb, w, pcap_time_cb, w) == WISP_OK) {
        w->pcap_ready = true;
    } else {
        fprintf(stderr, "sim: pcap header could not be written\n");
    }
}

static void pcap_frame(struct sim_world *w, const uint8_t *frame, uint16_t len)
{
    struct wisp_pbuf view;
    if (!w->pcap_ready) {
        return;
    }
    /* A read-only view of our copy for the writer (never freed or queued). */
    memset(&view, 0, sizeof(view));
    view.payload = (uint8_t *)(uintptr_t)frame;
    view.len = len;
    view.tot_len = len;
    view.ref = 1;
    view.kind = WISP_PBUF_ROM;
    wisp_pcapdev_record(&w->pcap, &view);
}

int sim_pcap_open(struct sim_world *w, const char *path)
{
    sim_pcap_close(w);
    w->pcap_file = fopen(path, "wb");
    if (w->pcap_file == NULL) {
        return -1;
    }
    if (w->nnodes > 0) {
        pcap_start(w, w->nodes[0]->s);
    }
    return 0;
}

void sim_pcap_close(struct sim_world *w)
{
    if (w->pcap_file != NULL) {
        fclose(w->pcap_file);
    }
    w->pcap_file = NULL;
    w->pcap_ready = false;
}

/* --------------------------------------------------------------- wire */

/* Flip 1..3 distinct bits of data. Unless corrupt_any, every flipped bit
 * has the same original value, so the flips move the ones'-complement sum
 * of any region they touch by +-(2^a [+ 2^b [+ 2^c]]), which is never a
 * multiple of 0xFFFF: the Internet checksum always sees the damage. */
static void corrupt_bits(struct sim_world *w, uint8_t *data, uint16_t len)
{
    uint32_t bits = (uint32_t)len * 8u;
    uint32_t pos[3];
    unsigned n = 1u + (unsigned)sim_rng_below(&w->rng, 3);
    unsigned k = 1, i, tries;
    int val;
    if (len == 0) {
        return;
    }
    pos[0] = (uint32_t)sim_rng_below(&w->rng, bits);
    val = (data[pos[0] / 8] >> (pos[0] % 8)) & 1;
    for (tries = 0; k < n && tries < 256; tries++) {
        uint32_t b = (uint32_t)sim_rng_below(&w->rng, bits);
        bool dup = false;
        for (i = 0; i < k; i++) {
            dup = dup || pos[i] == b;
        }
        if (dup || (!w->link.corrupt_any && ((data[b / 8] >> (b % 8)) & 1) != val)) {
            continue;
        }
        pos[k++] = b;
    }
    for (i = 0; i < k; i++) {
        data[pos[i] / 8] ^= (uint8_t)(1u << (pos[i] % 8));
    }
}

/* Put one frame on the wire at time t (after serialisation + latency):
 * apply loss, duplication, reordering and corruption. Takes buf. */
static void wire_schedule(struct sim_world *w, struct sim_node *from, uint8_t *buf, uint16_t len, uint64_t t)
{
    unsigned copies = 1, c;
    if (chance(w, w->link.loss)) {
        w->ctr.lost++;
        free(buf);
        return;
    }
    if (chance(w, w->link.dup)) {
        copies = 2;
        w->ctr.duplicated++;
    }
    for (c = 0; c < copies; c++) {
        uint8_t *data = buf;
        uint64_t at = t + c; /* the duplicate follows 1 us behind */
        if (c + 1 < copies) {
            data = malloc(len);
            if (data == NULL) {
                fail(w, "out of memory");
                continue;
            }
            memcpy(data, buf, len);
        }
        if (chance(w, w->link.reorder)) {
            uint64_t lat = w->link.latency_us;
            at += lat + sim_rng_below(&w->rng, 2 * lat + 1) + 1000u; /* 1..3 x latency + 1 ms */
            w->ctr.reordered++;
        }
        if (chance(w, w->link.corrupt)) {
            corrupt_bits(w, data, len);
            w->ctr.corrupted++;
        }
        if (!ev_push(w, at, SIM_EV_FRAME, from, data, len)) {
            free(data);
            fail(w, "out of memory");
        }
    }
}

/* The path_mtu hop (simwire.h): true when it drops the frame buf (an IPv4
 * packet with DF longer than path_mtu); then an ICMP "fragmentation needed"
 * goes back to the sender at time t when path_mtu_icmp. Does not take buf. */
static bool path_mtu_drop(struct sim_world *w, const uint8_t *buf, uint16_t len, uint64_t t)
{
    const uint8_t *ip = buf + WISP_ETH_HLEN;
    uint16_t tot, ihl, qlen, flen;
    uint8_t *f, *h, *m;

    if (w->link.path_mtu == 0 || len < WISP_ETH_HLEN + WISP_IP4_HLEN ||
        wisp_rd16(buf + WISP_ETH_OFF_TYPE) != WISP_ETHTYPE_IP4 || wisp_ip4_hdr_version(ip) != WISP_IP4_VERSION) {
        return false;
    }
    tot = wisp_rd16(ip + WISP_IP4_OFF_LEN);
    if (tot <= w->link.path_mtu || (wisp_rd16(ip + WISP_IP4_OFF_FRAG) & WISP_IP4_FLAG_DF) == 0) {
        return false;
    }
    w->ctr.pmtu_dropped++;
    if (!w->link.path_mtu_icmp) {
        return true;
    }
    ihl = wisp_ip4_hdr_hlen(ip);
    if (ihl < WISP_IP4_HLEN || (uint32_t)WISP_ETH_HLEN + ihl + WISP_ICMP_QUOTE_DATA > len) {
        return true;
    }
    qlen = (uint16_t)(ihl + WISP_ICMP_QUOTE_DATA);
    flen = (uint16_t)(WISP_ETH_HLEN + WISP_IP4_HLEN + WISP_ICMP_HLEN + qlen);
    f = calloc(1, flen < SIM_MIN_FRAME ? SIM_MIN_FRAME : flen);
    if (f == NULL) {
        fail(w, "out of memory");
        return true;
    }
    memcpy(f + WISP_ETH_OFF_DST, buf + WISP_ETH_OFF_SRC, 6); /* to the sender */
    memcpy(f + WISP_ETH_OFF_SRC, buf + WISP_ETH_OFF_DST, 6); /* from the next hop it was sent to */
    wisp_wr16(f + WISP_ETH_OFF_TYPE, WISP_ETHTYPE_IP4);
    h = f + WISP_ETH_HLEN;     /* RFC 791 header */
    h[WISP_IP4_OFF_VHL] = 0x45;
    wisp_wr16(h + WISP_IP4_OFF_LEN, (uint16_t)(WISP_IP4_HLEN + WISP_ICMP_HLEN + qlen));
    h[WISP_IP4_OFF_TTL] = 64;
    h[WISP_IP4_OFF_PROTO] = WISP_IP4_PROTO_ICMP;
    wisp_ip4_wr(h + WISP_IP4_OFF_SRC, w->link.path_mtu_router);
    memcpy(h + WISP_IP4_OFF_DST, ip + WISP_IP4_OFF_SRC, 4);
    wisp_wr16(h + WISP_IP4_OFF_CSUM, (uint16_t)~wisp_chksum_sum(h, WISP_IP4_HLEN));
    m = h + WISP_IP4_HLEN;     /* RFC 792 / RFC 1191 §4 message */
    m[WISP_ICMP_OFF_TYPE] = WISP_ICMP_DEST_UNREACH;
    m[WISP_ICMP_OFF_CODE] = WISP_ICMP_UNREACH_NEEDFRAG;
    wisp_wr16(m + WISP_ICMP_OFF_MTU, w->link.path_mtu);
    memcpy(m + WISP_ICMP_HLEN, ip, qlen);
    wisp_wr16(m + WISP_ICMP_OFF_CSUM, (uint16_t)~wisp_chksum_sum(m, (size_t)WISP_ICMP_HLEN + qlen));
    if (flen < SIM_MIN_FRAME) {
        flen = SIM_MIN_FRAME;
    }
    pcap_frame(w, f, flen);
    w->ctr.pmtu_icmp++;
    if (!ev_push(w, t, SIM_EV_FRAME, NULL, f, flen)) {
        free(f);
        fail(w, "out of memory");
    }
    return true;
}

static wisp_err_t sim_dev_transmit(struct wisp_dev *dev, struct wisp_pbuf *frame)
{
    struct sim_node *n = dev->ctx;
    struct sim_world *w = n->w;
    uint16_t len = frame->tot_len, wlen;
    uint64_t ser = 0;
    uint8_t *buf;

    if (w->closing || !n->plugged) {
        return WISP_ERR_IF;
    }
    if (n->busy) {
        w->ctr.wouldblock++;
        return WISP_ERR_WOULDBLOCK;
    }
    if ((uint32_t)len > (uint32_t)w->link.mtu + WISP_ETH_HLEN) {
        w->ctr.oversize++;
        return WISP_ERR_VAL; /* the port refuses it: the stack counts netif.tx.err */
    }
    wlen = len < SIM_MIN_FRAME ? (uint16_t)SIM_MIN_FRAME : len;
    buf = calloc(1, wlen); /* zeroed: the padding of a short frame */
    if (buf == NULL) {
        fail(w, "out of memory");
        return WISP_ERR_MEM;
    }
    (void)wisp_pbuf_copy_out(frame, buf, len, 0);
    w->ctr.sent++;
    w->ctr.bytes += wlen;
    if (w->tap != NULL) {
        w->tap(w->tap_arg, n, buf, wlen, w->now_us);
    }
    pcap_frame(w, buf, wlen);

    if (w->link.bandwidth_bps > 0) {
        ser = ((uint64_t)wlen * 8u * 1000000u + w->link.bandwidth_bps - 1u) / w->link.bandwidth_bps;
    }
    if (ser > 0) {
        /* One frame at a time per port: busy until the last bit is out. */
        n->busy = true;
        if (!ev_push(w, w->now_us + ser, SIM_EV_TXDONE, n, NULL, 0)) {
            fail(w, "out of memory");
        }
    }
    if (path_mtu_drop(w, buf, wlen, w->now_us + ser + 2u * (uint64_t)w->link.latency_us)) {
        free(buf);
        return WISP_OK;
    }
    wire_schedule(w, n, buf, wlen, w->now_us + ser + w->link.latency_us);
    return WISP_OK;
}

static const struct wisp_dev_ops sim_dev_ops = { sim_dev_transmit, NULL, NULL };

/* The hub: the frame reaches every other plugged port. */
static void deliver(struct sim_world *w, const struct sim_event *ev)
{
    unsigned i;
    for (i = 0; i < w->nnodes; i++) {
        struct sim_node *m = w->nodes[i];
        struct wisp_pbuf *p;
        if (m == ev->node || !m->plugged) {
            continue;
        }
        p = wisp_pbuf_alloc_rx(m->s, ev->len);
        if (p == NULL) {
            w->ctr.rx_nomem++;
            WISP_CTR_INC(m->s, NETIF_RX_NOMEM);
            continue;
        }
        (void)wisp_pbuf_copy_in(p, ev->data, ev->len, 0);
        w->ctr.delivered++;
        wisp_dev_input(&m->dev, p);
    }
}

static void process(struct sim_world *w, struct sim_event *ev)
{
    if (ev->kind == SIM_EV_FRAME) {
        deliver(w, ev);
        free(ev->data);
    } else {
        struct sim_node *n = ev->node;
        n->busy = false;
        if (n->plugged) {
            wisp_dev_tx_ready(&n->dev);
        }
    }
}

/* ------------------------------------------------------------- world */

void sim_link_defaults(struct sim_link_cfg *cfg)
{
    memset(cfg, 0, sizeof(*cfg));
    cfg->bandwidth_bps = 0;
    cfg->latency_us = 100;
    cfg->mtu = 1500;
}

struct sim_world *sim_world_new(uint64_t seed)
{
    struct sim_world *w = calloc(1, sizeof(*w));
    if (w == NULL) {
        return NULL;
    }
    w->seed = seed;
    sim_rng_seed(&w->rng, seed);
    sim_link_defaults(&w->link);
    w->max_events = SIM_DEFAULT_MAX_EVENTS;
    return w;
}

unsigned sim_world_free(struct sim_world *w)
{
    unsigned i, leaked = 0;
    if (w == NULL) {
        return 0;
    }
    w->closing = true;
    for (i = 0; i < w->nnodes; i++) {
        struct sim_node *n = w->nodes[i];
        unsigned used;
        wisp_stack_deinit(n->s);
        used = wisp_stack_pools_in_use(n->s);
        if (used != 0) {
            unsigned k;
            for (k = 0; k < WISP_POOL_COUNT; k++) {
                if (n->s->pool[k].used != 0) {
                    fprintf(stderr, "sim: node %s: pool %s still has %u element(s) in use\n", n->name,
                            n->s->pool[k].name, (unsigned)n->s->pool[k].used);
                }
            }
        }
        leaked += used;
        free(n->s);
        free(n);
    }
    while (w->nheap > 0) {
        struct sim_event ev = ev_pop(w);
        free(ev.data);
    }
    sim_pcap_close(w);
    free(w->heap);
    free(w->nodes);
    free(w);
    return leaked;
}

void sim_set_link(struct sim_world *w, const struct sim_link_cfg *cfg)
{
    w->link = *cfg;
}

void sim_get_link(const struct sim_world *w, struct sim_link_cfg *cfg)
{
    *cfg = w->link;
}

uint64_t sim_now_us(const struct sim_world *w)
{
    return w->now_us;
}

bool sim_set_clock(struct sim_world *w, uint64_t us)
{
    if (w->nnodes > 0) {
        return false;
    }
    w->now_us = us;
    return true;
}

uint64_t sim_seed(const struct sim_world *w)
{
    return w->seed;
}

const struct sim_counters *sim_counters(const struct sim_world *w)
{
    return &w->ctr;
}

void sim_set_tap(struct sim_world *w, sim_tap_fn fn, void *arg)
{
    w->tap = fn;
    w->tap_arg = arg;
}

void sim_set_max_events(struct sim_world *w, uint64_t max_events)
{
    w->max_events = max_events ? max_events : SIM_DEFAULT_MAX_EVENTS;
}

const char *sim_error(const struct sim_world *w)
{
    return w->error;
}

/* ------------------------------------------------------------- nodes */

static uint32_t sim_clock_ms(void *ctx)
{
    const struct sim_world *w = ctx;
    return (uint32_t)(w->now_us / 1000u);
}

/* "a.b.c.d/len" -> address and mask; strict. */
static bool parse_cidr(const char *s, wisp_ip4_t *ip, wisp_ip4_t *mask)
{
    char buf[20];
    const char *slash = strchr(s, '/');
    size_t n;
    unsigned prefix = 0, digits = 0;
    if (slash == NULL || (n = (size_t)(slash - s)) >= sizeof(buf)) {
        return false;
    }
    memcpy(buf, s, n);
    buf[n] = '\0';
    if (!wisp_ip4_aton(buf, ip)) {
        return false;
    }
    for (s = slash + 1; *s != '\0'; s++) {
        if (*s < '0' || *s > '9' || ++digits > 2) {
            return false;
        }
        prefix = prefix * 10u + (unsigned)(*s - '0');
    }
    if (digits == 0 || prefix > 32) {
        return false;
    }
    *mask = wisp_ip4_prefix_mask(prefix);
    return true;
}

struct sim_node *sim_node_add(struct sim_world *w, const char *name, const char *ip_cidr, const char *gw)
{
    struct sim_node *n;
    struct wisp_config cfg;
    wisp_ip4_t ip, mask, gw4 = 0;
    uint64_t x;

    if (w->nnodes >= SIM_MAX_NODES || ip_cidr == NULL || !parse_cidr(ip_cidr, &ip, &mask)) {
        return NULL;
    }
    if (gw != NULL && !wisp_ip4_aton(gw, &gw4)) {
        return NULL;
    }
    if (w->nnodes == w->cap_nodes) {
        unsigned cap = w->cap_nodes ? w->cap_nodes * 2 : 4;
        struct sim_node **a = realloc(w->nodes, cap * sizeof(*a));
        if (a == NULL) {
            return NULL;
        }
        w->nodes = a;
        w->cap_nodes = cap;
    }
    n = calloc(1, sizeof(*n));
    if (n == NULL) {
        return NULL;
    }
    n->s = calloc(1, sizeof(*n->s));
    if (n->s == NULL) {
        free(n);
        return NULL;
    }
    n->w = w;
    n->num = w->nnodes + 1u;
    snprintf(n->name, sizeof(n->name), "%s", name != NULL ? name : "node");
    n->ip = ip;

    memset(&cfg, 0, sizeof(cfg));
    cfg.now_ms = sim_clock_ms;
    cfg.clock_ctx = w;
    cfg.rand = NULL; /* the stack's own generator, seeded below */
    x = w->seed ^ ((uint64_t)n->num * 0xd1b54a32d192ed03ull);
    cfg.seed = splitmix64(&x);
    if (wisp_stack_init(n->s, &cfg) != WISP_OK) {
        free(n->s);
        free(n);
        return NULL;
    }

    n->dev.ops = &sim_dev_ops;
    n->dev.ctx = n;
    n->mac[0] = 0x02; /* locally administered, unicast */
    n->mac[5] = (uint8_t)n->num;
    if (wisp_netif_add_eth(n->s, &n->nif, "eth0", &n->dev, n->mac, w->link.mtu) != WISP_OK) {
        wisp_stack_deinit(n->s);
        free(n->s);
        free(n);
        return NULL;
    }
    wisp_netif_set_ip4(&n->nif, ip, mask, gw4);

    w->nodes[w->nnodes++] = n;
    n->plugged = true;
    pcap_start(w, n->s);
    wisp_netif_set_up(&n->nif, true);
    wisp_netif_set_link(&n->nif, true);
    return n;
}

unsigned sim_node_count(const struct sim_world *w)
{
    return w->nnodes;
}

struct sim_node *sim_node_at(const struct sim_world *w, unsigned i)
{
    return i < w->nnodes ? w->nodes[i] : NULL;
}

struct wisp_stack *sim_stack(struct sim_node *n)
{
    return n->s;
}

struct wisp_netif *sim_netif(struct sim_node *n)
{
    return &n->nif;
}

wisp_ip4_t sim_ip(const struct sim_node *n)
{
    return n->ip;
}

const uint8_t *sim_mac(const struct sim_node *n)
{
    return n->mac;
}

const char *sim_name(const struct sim_node *n)
{
    return n->name;
}

void sim_node_set_link(struct sim_node *n, bool up)
{
    n->plugged = up;
    wisp_netif_set_link(&n->nif, up);
}

/* --------------------------------------------------------------- run */

/* Virtual time at which node n's next timer is due; UINT64_MAX when none. */
static uint64_t stack_due_us(const struct sim_world *w, struct sim_node *n)
{
    uint32_t due, now_ms = (uint32_t)(w->now_us / 1000u);
    int32_t delta;
    if (!wisp_stack_next_deadline(n->s, &due)) {
        return UINT64_MAX;
    }
    delta = (int32_t)(due - now_ms);
    if (delta <= 0) {
        return w->now_us;
    }
    return (w->now_us / 1000u + (uint64_t)delta) * 1000u;
}

/* 1 = done, 0 = reached end, -1 = failed. */
static int run(struct sim_world *w, uint64_t end, bool (*done)(void *arg), void *arg)
{
    uint64_t budget = w->max_events, same = 0, last_t = w->now_us;
    for (;;) {
        uint64_t t = UINT64_MAX;
        struct sim_node *due = NULL;
        unsigned i;
        if (w->error != NULL) {
            return -1;
        }
        if (done != NULL && done(arg)) {
            return 1;
        }
        if (w->nheap > 0) {
            t = w->heap[0].t;
        }
        for (i = 0; i < w->nnodes; i++) {
            uint64_t u = stack_due_us(w, w->nodes[i]);
            if (u < t) {
                t = u;
                due = w->nodes[i];
            }
        }
        if (t == UINT64_MAX || t > end) {
            if (end > w->now_us) {
                w->now_us = end;
            }
            return 0;
        }
        if (t > w->now_us) {
            w->now_us = t;
        }
        if (w->now_us != last_t) {
            last_t = w->now_us;
            same = 0;
        } else if (++same > SIM_MAX_SAME_TIME) {
            fail(w, "too many events without the clock moving (livelock?)");
            return -1;
        }
        if (budget-- == 0) {
            fail(w, "event budget of this run exceeded");
            return -1;
        }
        w->ctr.events++;
        if (due != NULL) {
            wisp_stack_poll(due->s);
        } else {
            struct sim_event ev = ev_pop(w);
            process(w, &ev);
        }
    }
}

bool sim_run_for(struct sim_world *w, uint64_t us)
{
    return run(w, w->now_us + us, NULL, NULL) >= 0;
}

bool sim_run_until(struct sim_world *w, bool (*done)(void *arg), void *arg, uint64_t max_us)
{
    return run(w, w->now_us + max_us, done, arg) == 1;
}

/* ------------------------------------------------------------- dump */

static int dump_pr(void *ctx, const char *fmt, ...)
{
    va_list ap;
    int r;
    va_start(ap, fmt);
    r = vfprintf((FILE *)ctx, fmt, ap);
    va_end(ap);
    return r;
}

void sim_dump(const struct sim_world *w, FILE *f)
{
    const struct sim_counters *c = &w->ctr;
    unsigned i;
    fprintf(f,
            "sim world seed %llu t=%llu us: sent %llu (%llu bytes) delivered %llu lost %llu duplicated %llu "
            "reordered %llu corrupted %llu oversize %llu pmtu_dropped %llu pmtu_icmp %llu rx_nomem %llu wouldblock %llu "
            "events %llu\n",
            (unsigned long long)w->seed, (unsigned long long)w->now_us, (unsigned long long)c->sent,
            (unsigned long long)c->bytes, (unsigned long long)c->delivered, (unsigned long long)c->lost,
            (unsigned long long)c->duplicated, (unsigned long long)c->reordered, (unsigned long long)c->corrupted,
            (unsigned long long)c->oversize, (unsigned long long)c->pmtu_dropped,
            (unsigned long long)c->pmtu_icmp, (unsigned long long)c->rx_nomem, (unsigned long long)c->wouldblock,
            (unsigned long long)c->events);
    for (i = 0; i < w->nnodes; i++) {
        fprintf(f, "node %u %s:\n", w->nodes[i]->num, w->nodes[i]->name);
        wisp_stack_dump(w->nodes[i]->s, dump_pr, f, false);
    }
}
