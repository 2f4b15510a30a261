/**
 * @file test_devwrap.c
 * Unit tests of the device wrappers: the pcap capture wrapper (byte-exact
 * stream in a memory buffer) and the impairment wrapper (loss, duplication,
 * corruption, reordering, ownership), alone and stacked over the test
 * device of tu_env. Every test ends with tu_env_free (the pool leak check).
 */
#include "testutil.h"
#include "wisp/pcapdev.h"
#include "wisp/impairdev.h"

#include <stdlib.h>

/* ------------------------------------------------------------ helpers */

#define CAP_SIZE (256u * 1024u)

struct cap {
    uint8_t *buf;
    size_t len;
    unsigned writes;
    int fail_at;        /* fail the write with this 1-based number; 0 = never */
    uint64_t now_us;    /* timestamp handed out */
};

static int cap_write(void *ctx, const void *buf, size_t len)
{
    struct cap *c = ctx;
    c->writes++;
    if (c->fail_at != 0 && (int)c->writes >= c->fail_at) {
        return -1;
    }
    assert_true(c->len + len <= CAP_SIZE);
    memcpy(c->buf + c->len, buf, len);
    c->len += len;
    return 0;
}

static uint64_t cap_time(void *ctx)
{
    return ((struct cap *)ctx)->now_us;
}

static struct cap *cap_new(void)
{
    struct cap *c = calloc(1, sizeof *c);
    assert_non_null(c);
    c->buf = calloc(1, CAP_SIZE);
    assert_non_null(c->buf);
    return c;
}

static void cap_free(struct cap *c)
{
    free(c->buf);
    free(c);
}

static uint32_t le32(const uint8_t *p)
{
    return (uint32_t)p[0] | ((uint32_t)p[1] << 8) | ((uint32_t)p[2] << 16) | ((uint32_t)p[3] << 24);
}

static uint16_t le16(const uint8_t *p)
{
    return (uint16_t)(p[0] | (p[1] << 8));
}

/* Walk to record idx (0-based) of a capture; returns its header, or NULL. */
static const uint8_t *cap_record(const struct cap *c, unsigned idx)
{
    size_t off = WISP_PCAP_GLOBAL_HDR_LEN;
    unsigned i;
    for (i = 0; off + WISP_PCAP_RECORD_HDR_LEN <= c->len; i++) {
        uint32_t incl = le32(c->buf + off + 8);
        if (i == idx) {
            return c->buf + off;
        }
        off += WISP_PCAP_RECORD_HDR_LEN + incl;
    }
    return NULL;
}

static unsigned cap_count(const struct cap *c)
{
    size_t off = WISP_PCAP_GLOBAL_HDR_LEN;
    unsigned n = 0;
    while (off + WISP_PCAP_RECORD_HDR_LEN <= c->len) {
        off += WISP_PCAP_RECORD_HDR_LEN + le32(c->buf + off + 8);
        n++;
    }
    assert_int_equal(off, c->len); /* no partial record */
    return n;
}

/* A test frame: to the stack's MAC from the peer, local experimental
 * ethertype 0x88b5 (IEEE 802 "local experimental"), tag byte + pattern. */
static size_t mk_frame(uint8_t *buf, size_t len, uint8_t tag)
{
    size_t i;
    tu_eth(buf, tu_mac_self, tu_mac_peer, 0x88b5);
    for (i = 14; i < len; i++) {
        buf[i] = (uint8_t)(tag + i * 7u);
    }
    buf[14] = tag;
    return len;
}

/* A RAM pbuf holding the frame. */
static struct wisp_pbuf *mk_pbuf(struct tu_env *e, const uint8_t *frame, size_t len)
{
    struct wisp_pbuf *p = wisp_pbuf_alloc(e->s, WISP_LAYER_RAW, (uint16_t)len, WISP_PBUF_RAM);
    assert_non_null(p);
    assert_int_equal(wisp_pbuf_copy_in(p, frame, (uint16_t)len, 0), WISP_OK);
    return p;
}

/* A test environment whose device counters start at zero (tu_env_new
 * discards the recorded gratuitous ARP but it still counts as sent). */
static struct tu_env *env_new(uint64_t seed)
{
    struct tu_env *e = tu_env_new(seed);
    e->dev.sent = 0;
    return e;
}

/* Transmit a frame through the netif (top of the device chain). */
static void tx_frame(struct tu_env *e, size_t len, uint8_t tag)
{
    uint8_t f[1600];
    struct wisp_pbuf *p;
    mk_frame(f, len, tag);
    p = mk_pbuf(e, f, len);
    assert_int_equal(wisp_netif_tx(&e->nif, p), WISP_OK);
    wisp_pbuf_free(p); /* our reference; a queue or a held frame keeps its own */
}

/* Transmit and check the caller's frame comes back untouched: still one
 * reference (the wrapper neither freed nor kept it) and the same bytes. */
static void tx_frame_owned(struct tu_env *e, size_t len, uint8_t tag)
{
    uint8_t f[1600], after[1600];
    struct wisp_pbuf *p;
    mk_frame(f, len, tag);
    p = mk_pbuf(e, f, len);
    assert_int_equal(wisp_netif_tx(&e->nif, p), WISP_OK);
    assert_int_equal(p->ref, 1);
    assert_int_equal(wisp_pbuf_copy_out(p, after, (uint16_t)len, 0), len);
    assert_memory_equal(after, f, len);
    wisp_pbuf_free(p);
}

static void rx_frame(struct tu_env *e, size_t len, uint8_t tag)
{
    uint8_t f[1600];
    mk_frame(f, len, tag);
    assert_true(tu_inject(e, f, len));
}

/* Tag byte (offset 14) of the oldest frame the test device sent; pops it. */
static int pop_tag(struct tu_env *e)
{
    uint8_t f[1600];
    int n = tu_pop(e, f, sizeof f);
    return n < 15 ? -1 : f[14];
}

static int rec_tag(const struct cap *c, unsigned idx)
{
    const uint8_t *r = cap_record(c, idx);
    if (r == NULL || le32(r + 8) < 15) {
        return -1;
    }
    return r[WISP_PCAP_RECORD_HDR_LEN + 14];
}

/* A stack with a capture and/or an impairment wrapper on its test device
 * (set up in place: the wrappers are linked by address). */
struct dw {
    struct tu_env *e;
    struct cap *c;            /* the capture (NULL: none) */
    struct wisp_pcapdev pc;
    struct wisp_impairdev im;
};

/* env_new(seed) and a capture wrapping the test device (time from the
 * capture's clock); returns the environment. */
static struct tu_env *dw_pcap(struct dw *d, uint64_t seed)
{
    memset(d, 0, sizeof(*d));
    d->e = env_new(seed);
    d->c = cap_new();
    assert_int_equal(wisp_pcapdev_init(&d->pc, d->e->s, &d->e->dev.dev, cap_write, d->c, cap_time, d->c), WISP_OK);
    return d->e;
}

/* env_new(seed) and an impairment (random seed rng, receive / transmit
 * settings, NULL = unchanged) wrapping the test device; with pcap, a
 * capture above it observes what goes up. Returns the environment. */
static struct tu_env *dw_impair(struct dw *d, uint64_t seed, uint32_t rng, const struct wisp_impair_cfg *rx,
                                const struct wisp_impair_cfg *tx, bool pcap)
{
    memset(d, 0, sizeof(*d));
    d->e = env_new(seed);
    assert_int_equal(wisp_impairdev_init(&d->im, d->e->s, &d->e->dev.dev, rng), WISP_OK);
    wisp_impairdev_set(&d->im, rx, tx);
    if (pcap) {
        d->c = cap_new();
        assert_int_equal(wisp_pcapdev_init(&d->pc, d->e->s, &d->im.dev, cap_write, d->c, cap_time, d->c), WISP_OK);
    }
    return d->e;
}

static void dw_free(struct dw *d)
{
    if (d->c != NULL) {
        cap_free(d->c);
    }
    tu_env_free(d->e); /* leak check */
}

/* ------------------------------------------------------------- pcap */

static void test_pcap_global_header_exact(void **state)
{
    static const uint8_t want[24] = {
        0xd4, 0xc3, 0xb2, 0xa1,  /* magic, little-endian */
        2, 0, 4, 0,              /* version 2.4 */
        0, 0, 0, 0,              /* thiszone */
        0, 0, 0, 0,              /* sigfigs */
        0xff, 0xff, 0, 0,        /* snaplen 65535 */
        1, 0, 0, 0               /* LINKTYPE_ETHERNET */
    };
    struct dw d;
    struct tu_env *e = dw_pcap(&d, 1);
    (void)state;
    assert_int_equal(d.c->len, 24);
    assert_memory_equal(d.c->buf, want, 24);
    assert_ptr_equal(e->nif.dev, &d.pc.dev); /* wrapping an attached device re-points the netif */
    assert_int_equal(le32(d.c->buf), WISP_PCAP_MAGIC);
    assert_int_equal(le16(d.c->buf + 4), 2);
    dw_free(&d);
}

static void test_pcap_records_both_directions_byte_exact(void **state)
{
    uint8_t a[60], b[98];
    const uint8_t *r;
    struct dw d;
    struct tu_env *e = dw_pcap(&d, 2);
    (void)state;
    mk_frame(a, sizeof a, 0xa1);
    mk_frame(b, sizeof b, 0xb2);

    d.c->now_us = 1234567890123456ull;
    tx_frame(e, sizeof a, 0xa1);
    d.c->now_us = 1234567891000001ull;
    rx_frame(e, sizeof b, 0xb2);

    assert_int_equal(d.c->len, 24u + 16u + sizeof a + 16u + sizeof b);
    assert_int_equal(cap_count(d.c), 2);
    r = cap_record(d.c, 0);
    assert_int_equal(le32(r + 0), 1234567890u);
    assert_int_equal(le32(r + 4), 123456u);
    assert_int_equal(le32(r + 8), sizeof a);
    assert_int_equal(le32(r + 12), sizeof a);
    assert_memory_equal(r + 16, a, sizeof a);
    r = cap_record(d.c, 1);
    assert_int_equal(le32(r + 0), 1234567891u);
    assert_int_equal(le32(r + 4), 1u);
    assert_int_equal(le32(r + 8), sizeof b);
    assert_int_equal(le32(r + 12), sizeof b);
    assert_memory_equal(r + 16, b, sizeof b);
    assert_int_equal(d.pc.tx_records, 1);
    assert_int_equal(d.pc.rx_records, 1);

    /* The frames went on: the test device sent a, the netif received b. */
    assert_int_equal(e->dev.sent, 1);
    assert_int_equal(e->nif.st.rx_frames, 1);
    assert_int_equal(pop_tag(e), 0xa1);
    dw_free(&d);
}

static void test_pcap_chain_written_piece_by_piece(void **state)
{
    uint8_t f[300];
    struct wisp_pbuf *h, *t;
    const uint8_t *r;
    unsigned writes_before;
    struct dw d;
    struct tu_env *e = dw_pcap(&d, 3);
    (void)state;
    mk_frame(f, sizeof f, 0x33);
    /* 14-byte RAM head + 286-byte REF tail (caller memory). */
    h = mk_pbuf(e, f, 14);
    t = wisp_pbuf_alloc_ref(e->s, f + 14, sizeof f - 14, WISP_PBUF_REF);
    assert_non_null(t);
    wisp_pbuf_cat(h, t);
    assert_int_equal(h->tot_len, sizeof f);
    writes_before = d.c->writes;
    assert_int_equal(wisp_netif_tx(&e->nif, h), WISP_OK);
    assert_int_equal(d.c->writes - writes_before, 3); /* header + one per buffer */
    r = cap_record(d.c, 0);
    assert_non_null(r);
    assert_int_equal(le32(r + 8), sizeof f);
    assert_memory_equal(r + 16, f, sizeof f);
    wisp_pbuf_free(h);
    dw_free(&d);
}

static void test_pcap_stack_clock_when_no_time_callback(void **state)
{
    struct tu_env *e = env_new(4);
    struct cap *c = cap_new();
    struct wisp_pcapdev pc;
    const uint8_t *r;
    (void)state;
    assert_int_equal(wisp_pcapdev_init(&pc, e->s, &e->dev.dev, cap_write, c, NULL, NULL), WISP_OK);
    e->now = 7250; /* ms */
    tx_frame(e, 60, 1);
    r = cap_record(c, 0);
    assert_non_null(r);
    assert_int_equal(le32(r + 0), 7u);
    assert_int_equal(le32(r + 4), 250000u);
    cap_free(c);
    tu_env_free(e);
}

static void test_pcap_refused_frame_recorded_once_when_sent(void **state)
{
    struct dw d;
    struct tu_env *e = dw_pcap(&d, 5);
    (void)state;
    e->dev.busy = true;
    tx_frame(e, 60, 0x51); /* queued by the netif: not on the wire yet */
    assert_int_equal(cap_count(d.c), 0);
    assert_int_equal(e->dev.sent, 0);
    e->dev.busy = false;
    wisp_dev_tx_ready(&e->dev.dev); /* passes up through the wrapper */
    assert_int_equal(e->dev.sent, 1);
    assert_int_equal(cap_count(d.c), 1);
    assert_int_equal(rec_tag(d.c, 0), 0x51);
    assert_int_equal(pop_tag(e), 0x51);
    dw_free(&d);
}

static void test_pcap_write_failure_stops_capture_not_traffic(void **state)
{
    struct dw d;
    struct tu_env *e = dw_pcap(&d, 6);
    (void)state;
    d.c->fail_at = 3; /* global header ok, record header ok, frame data fails */
    tx_frame(e, 60, 1);
    tx_frame(e, 60, 2);
    rx_frame(e, 60, 3);
    assert_int_equal(d.pc.failed, 1);
    assert_int_equal(d.pc.write_errors, 1);
    assert_int_equal(d.c->writes, 3); /* nothing attempted after the failure */
    assert_int_equal(e->dev.sent, 2);
    assert_int_equal(e->nif.st.rx_frames, 1);
    dw_free(&d);
}

static void test_pcap_header_write_failure_reported(void **state)
{
    struct tu_env *e = env_new(7);
    struct cap *c = cap_new();
    struct wisp_pcapdev pc;
    (void)state;
    c->fail_at = 1;
    assert_int_equal(wisp_pcapdev_init(&pc, e->s, &e->dev.dev, cap_write, c, cap_time, c), WISP_ERR_IF);
    tx_frame(e, 60, 1); /* the wrapper still passes frames */
    assert_int_equal(e->dev.sent, 1);
    assert_int_equal(wisp_pcapdev_init(&pc, e->s, &e->dev.dev, NULL, c, NULL, NULL), WISP_ERR_ARG);
    cap_free(c);
    tu_env_free(e);
}

/* -------------------------------------------------------- impairment */

static const struct wisp_impair_cfg no_impair = { 0, 0, 0, 0 };

static void test_impair_loss_all_tx_drops_every_frame(void **state)
{
    struct wisp_impair_cfg tx = { WISP_IMPAIR_PPM_ALL, 0, 0, 0 };
    unsigned i;
    struct dw d;
    struct tu_env *e = dw_impair(&d, 10, 42, NULL, &tx, false);
    (void)state;
    for (i = 0; i < 20; i++) {
        tx_frame_owned(e, 60, (uint8_t)i);
    }
    assert_int_equal(e->dev.sent, 0);
    assert_int_equal(tu_tx_used(e), 0);
    assert_int_equal(d.im.tx.frames, 20);
    assert_int_equal(d.im.tx.lost, 20);
    assert_int_equal(d.im.tx.passed, 0);
    /* The other direction is unaffected. */
    rx_frame(e, 60, 1);
    assert_int_equal(e->nif.st.rx_frames, 1);
    dw_free(&d);
}

static void test_impair_loss_all_rx_drops_and_frees(void **state)
{
    struct wisp_impair_cfg rx = { WISP_IMPAIR_PPM_ALL, 0, 0, 0 };
    unsigned i;
    struct dw d;
    struct tu_env *e = dw_impair(&d, 11, 42, &rx, &no_impair, false);
    (void)state;
    for (i = 0; i < 20; i++) {
        rx_frame(e, 60, (uint8_t)i);
    }
    assert_int_equal(e->nif.st.rx_frames, 0);
    assert_int_equal(d.im.rx.lost, 20);
    assert_int_equal(e->s->pool[WISP_POOL_PBUF_RX].used, 0); /* freed, not leaked */
    tx_frame(e, 60, 1);
    assert_int_equal(e->dev.sent, 1);
    dw_free(&d);
}

static void test_impair_loss_none_passes_every_frame_in_order(void **state)
{
    unsigned i;
    struct dw d;
    struct tu_env *e = dw_impair(&d, 12, 42, &no_impair, &no_impair, true);
    (void)state;
    for (i = 0; i < 50; i++) {
        tx_frame(e, 60, (uint8_t)i);
        rx_frame(e, 60, (uint8_t)(100 + i));
    }
    assert_int_equal(e->dev.sent, 50);
    assert_int_equal(e->nif.st.rx_frames, 50);
    for (i = 0; i < 50; i++) {
        assert_int_equal(pop_tag(e), (int)i);
        assert_int_equal(rec_tag(d.c, 2 * i + 1), (int)(100 + i));
    }
    assert_int_equal(d.im.tx.passed, 50);
    assert_int_equal(d.im.rx.passed, 50);
    assert_int_equal(d.im.tx.lost + d.im.rx.lost, 0);
    dw_free(&d);
}

static void test_impair_dup_tx_transmits_twice(void **state)
{
    struct wisp_impair_cfg tx = { 0, WISP_IMPAIR_PPM_ALL, 0, 0 };
    struct dw d;
    struct tu_env *e = dw_impair(&d, 13, 42, NULL, &tx, false);
    (void)state;
    tx_frame_owned(e, 60, 0x77);
    assert_int_equal(e->dev.sent, 2);
    assert_int_equal(pop_tag(e), 0x77);
    assert_int_equal(pop_tag(e), 0x77);
    assert_int_equal(d.im.tx.duplicated, 1);
    assert_int_equal(d.im.tx.passed, 2);
    dw_free(&d);
}

static void test_impair_dup_rx_delivers_two_private_copies(void **state)
{
    struct wisp_impair_cfg rx = { 0, WISP_IMPAIR_PPM_ALL, 0, 0 };
    uint8_t f[80];
    const uint8_t *r0, *r1;
    struct dw d;
    struct tu_env *e = dw_impair(&d, 14, 42, &rx, NULL, true);
    (void)state;
    mk_frame(f, sizeof f, 0x66);
    rx_frame(e, sizeof f, 0x66);
    assert_int_equal(e->nif.st.rx_frames, 2);
    assert_int_equal(cap_count(d.c), 2);
    r0 = cap_record(d.c, 0);
    r1 = cap_record(d.c, 1);
    assert_int_equal(le32(r0 + 8), sizeof f);
    assert_int_equal(le32(r1 + 8), sizeof f);
    assert_memory_equal(r0 + 16, f, sizeof f);
    assert_memory_equal(r1 + 16, f, sizeof f);
    assert_int_equal(d.im.rx.duplicated, 1);
    assert_int_equal(e->s->pool[WISP_POOL_PBUF_RX].used, 0);
    dw_free(&d);
}

static unsigned bit_diffs(const uint8_t *a, const uint8_t *b, size_t len, size_t *where, unsigned *bit)
{
    unsigned n = 0, k;
    size_t i;
    for (i = 0; i < len; i++) {
        uint8_t x = (uint8_t)(a[i] ^ b[i]);
        for (k = 0; k < 8; k++) {
            if (x & (1u << k)) {
                n++;
                *where = i;
                *bit = k;
            }
        }
    }
    return n;
}

static void test_impair_corrupt_tx_flips_one_bit_of_a_clone(void **state)
{
    struct wisp_impair_cfg tx = { 0, 0, WISP_IMPAIR_PPM_ALL, 0 };
    uint8_t f[200], got[256], mine[200];
    struct wisp_pbuf *p;
    unsigned round, bit = 0;
    size_t where = 0;
    int n;
    struct dw d;
    struct tu_env *e = dw_impair(&d, 15, 1234, NULL, &tx, false);
    (void)state;
    for (round = 0; round < 30; round++) {
        mk_frame(f, sizeof f, (uint8_t)round);
        p = mk_pbuf(e, f, sizeof f);
        assert_int_equal(wisp_netif_tx(&e->nif, p), WISP_OK);
        /* The caller's frame is intact and still only the caller's. */
        assert_int_equal(p->ref, 1);
        assert_int_equal(wisp_pbuf_copy_out(p, mine, sizeof mine, 0), sizeof mine);
        assert_memory_equal(mine, f, sizeof f);
        wisp_pbuf_free(p);
        n = tu_pop(e, got, sizeof got);
        assert_int_equal(n, sizeof f);
        assert_int_equal(bit_diffs(f, got, sizeof f, &where, &bit), 1);
        assert_int_equal(where, d.im.last_corrupt_off);
        assert_int_equal(bit, d.im.last_corrupt_bit);
    }
    assert_int_equal(d.im.tx.corrupted, 30);
    assert_int_equal(tu_tx_used(e), 0); /* clones freed */
    dw_free(&d);
}

static void test_impair_corrupt_rx_flips_exactly_one_bit(void **state)
{
    struct wisp_impair_cfg rx = { 0, 0, WISP_IMPAIR_PPM_ALL, 0 };
    uint8_t f[120];
    unsigned round, bit = 0;
    size_t where = 0;
    const uint8_t *r;
    struct dw d;
    struct tu_env *e = dw_impair(&d, 16, 99, &rx, NULL, true);
    (void)state;
    for (round = 0; round < 20; round++) {
        mk_frame(f, sizeof f, (uint8_t)round);
        assert_true(tu_inject(e, f, sizeof f));
        r = cap_record(d.c, round);
        assert_non_null(r);
        assert_int_equal(le32(r + 8), sizeof f);
        assert_int_equal(bit_diffs(f, r + 16, sizeof f, &where, &bit), 1);
        assert_int_equal(where, d.im.last_corrupt_off);
        assert_int_equal(bit, d.im.last_corrupt_bit);
    }
    assert_int_equal(d.im.rx.corrupted, 20);
    dw_free(&d);
}

static void test_impair_reorder_tx_releases_after_next_frame(void **state)
{
    struct wisp_impair_cfg tx = { 0, 0, 0, WISP_IMPAIR_PPM_ALL };
    struct dw d;
    struct tu_env *e = dw_impair(&d, 17, 5, NULL, &tx, false);
    (void)state;
    tx_frame(e, 60, 1); /* held */
    assert_int_equal(e->dev.sent, 0);
    assert_non_null(d.im.tx_held);
    tx_frame(e, 60, 2); /* passes, then releases 1 */
    tx_frame(e, 60, 3); /* held */
    tx_frame(e, 60, 4); /* passes, releases 3 */
    tx_frame(e, 60, 5); /* held until the flush */
    assert_int_equal(e->dev.sent, 4);
    wisp_impairdev_flush(&d.im);
    assert_null(d.im.tx_held);
    assert_int_equal(e->dev.sent, 5);
    assert_int_equal(pop_tag(e), 2);
    assert_int_equal(pop_tag(e), 1);
    assert_int_equal(pop_tag(e), 4);
    assert_int_equal(pop_tag(e), 3);
    assert_int_equal(pop_tag(e), 5);
    assert_int_equal(d.im.tx.reordered, 3);
    dw_free(&d);
}

static void test_impair_reorder_tx_held_frame_waits_for_busy_device(void **state)
{
    struct wisp_impair_cfg tx = { 0, 0, 0, WISP_IMPAIR_PPM_ALL };
    struct dw d;
    struct tu_env *e = dw_impair(&d, 18, 5, NULL, &tx, false);
    (void)state;
    tx_frame(e, 60, 1); /* held */
    e->dev.busy = true;
    wisp_impairdev_flush(&d.im); /* device busy: stays held, due */
    assert_non_null(d.im.tx_held);
    assert_int_equal(d.im.tx_held_due, 1);
    e->dev.busy = false;
    wisp_dev_tx_ready(&e->dev.dev);
    assert_null(d.im.tx_held);
    assert_int_equal(pop_tag(e), 1);
    dw_free(&d);
}

static void test_impair_reorder_rx_swaps_neighbours(void **state)
{
    struct wisp_impair_cfg rx = { 0, 0, 0, WISP_IMPAIR_PPM_ALL };
    struct dw d;
    struct tu_env *e = dw_impair(&d, 19, 5, &rx, NULL, true);
    (void)state;
    rx_frame(e, 60, 1);
    rx_frame(e, 60, 2);
    rx_frame(e, 60, 3);
    assert_int_equal(cap_count(d.c), 2);
    assert_int_equal(rec_tag(d.c, 0), 2);
    assert_int_equal(rec_tag(d.c, 1), 1);
    wisp_impairdev_flush(&d.im);
    assert_int_equal(rec_tag(d.c, 2), 3);
    assert_int_equal(e->nif.st.rx_frames, 3);
    dw_free(&d);
}

static void test_impair_held_frames_freed_by_deinit(void **state)
{
    struct wisp_impair_cfg all = { 0, 0, 0, WISP_IMPAIR_PPM_ALL };
    struct dw d;
    struct tu_env *e = dw_impair(&d, 20, 5, &all, &all, false);
    (void)state;
    tx_frame(e, 60, 1);
    rx_frame(e, 60, 2);
    assert_non_null(d.im.tx_held);
    assert_non_null(d.im.rx_held);
    assert_true(wisp_stack_pools_in_use(e->s) > 0);
    wisp_impairdev_deinit(&d.im);
    assert_int_equal(wisp_stack_pools_in_use(e->s), 0);
    assert_int_equal(e->dev.sent, 0);
    assert_int_equal(e->nif.st.rx_frames, 0);
    dw_free(&d);
}

/* Loss pattern of 200 frames for a seed, as a bit string. */
static void loss_pattern(uint32_t seed, uint8_t out[25])
{
    struct tu_env *e = env_new(21);
    struct wisp_impairdev im;
    struct wisp_impair_cfg tx = { 300000, 0, 0, 0 };
    unsigned i, sent = 0;
    assert_int_equal(wisp_impairdev_init(&im, e->s, &e->dev.dev, seed), WISP_OK);
    wisp_impairdev_set(&im, NULL, &tx);
    memset(out, 0, 25);
    for (i = 0; i < 200; i++) {
        tx_frame(e, 60, 0);
        if (e->dev.sent != sent) {
            sent = e->dev.sent;
        } else {
            out[i / 8] = (uint8_t)(out[i / 8] | (1u << (i % 8)));
        }
    }
    /* 30 % nominal loss: well inside 15..45 % for 200 frames. */
    assert_in_range(im.tx.lost, 30, 90);
    assert_int_equal(im.tx.lost + im.tx.passed, 200);
    tu_env_free(e);
}

static void test_impair_same_seed_same_decisions(void **state)
{
    uint8_t a[25], b[25], c[25];
    (void)state;
    loss_pattern(777, a);
    loss_pattern(777, b);
    loss_pattern(778, c);
    assert_memory_equal(a, b, sizeof a);
    assert_memory_not_equal(a, c, sizeof a);
}

static void test_impair_set_clamps_probabilities(void **state)
{
    struct tu_env *e = env_new(22);
    struct wisp_impairdev im;
    struct wisp_impair_cfg big = { 5000000u, 0, 0, 0 };
    (void)state;
    assert_int_equal(wisp_impairdev_init(&im, e->s, &e->dev.dev, 0), WISP_OK); /* seed 0 allowed */
    assert_int_not_equal(im.rng, 0);
    wisp_impairdev_set(&im, &big, &big);
    assert_int_equal(im.rx_cfg.loss_ppm, WISP_IMPAIR_PPM_ALL);
    assert_int_equal(im.tx_cfg.loss_ppm, WISP_IMPAIR_PPM_ALL);
    assert_int_equal(wisp_impairdev_init(&im, NULL, &e->dev.dev, 1), WISP_ERR_ARG);
    tu_env_free(e);
}

/* -------------------------------------------------------- stacking */

static void test_stack_pcap_over_impair_over_testdev(void **state)
{
    struct tu_env *e = env_new(30);
    struct wisp_impairdev im;
    struct cap *top = cap_new(), *bottom = cap_new();
    struct wisp_pcapdev pc_top, pc_bottom;
    struct wisp_impair_cfg tx = { 500000, 0, 0, 0 };
    struct wisp_impair_cfg rx = { 0, WISP_IMPAIR_PPM_ALL, 0, 0 };
    unsigned i, top_tx, bottom_tx;
    (void)state;
    /* test device <- pcap(bottom) <- impair <- pcap(top) <- netif */
    assert_int_equal(wisp_pcapdev_init(&pc_bottom, e->s, &e->dev.dev, cap_write, bottom, cap_time, bottom), WISP_OK);
    assert_int_equal(wisp_impairdev_init(&im, e->s, &pc_bottom.dev, 2024), WISP_OK);
    assert_int_equal(wisp_pcapdev_init(&pc_top, e->s, &im.dev, cap_write, top, cap_time, top), WISP_OK);
    assert_ptr_equal(e->nif.dev, &pc_top.dev);
    assert_ptr_equal(pc_top.dev.netif, &e->nif);
    wisp_impairdev_set(&im, &rx, &tx);
    for (i = 0; i < 100; i++) {
        tx_frame(e, 60, (uint8_t)i);
    }
    rx_frame(e, 70, 0xee);
    top_tx = pc_top.tx_records;
    bottom_tx = pc_bottom.tx_records;
    /* Above the impairment every frame is seen, below only survivors. */
    assert_int_equal(top_tx, 100);
    assert_int_equal(bottom_tx, e->dev.sent);
    assert_int_equal(bottom_tx, 100 - im.tx.lost);
    assert_true(im.tx.lost > 20 && im.tx.lost < 80);
    /* Receive: once below, twice (duplicated) above and at the netif. */
    assert_int_equal(pc_bottom.rx_records, 1);
    assert_int_equal(pc_top.rx_records, 2);
    assert_int_equal(e->nif.st.rx_frames, 2);
    assert_int_equal(cap_count(top), 102);
    assert_int_equal(cap_count(bottom), 1 + bottom_tx);
    /* Busy device: the refusal travels up through every layer and the
     * tx_ready back up, the frame is recorded once at each level. */
    wisp_impairdev_set(&im, &no_impair, &no_impair);
    e->dev.busy = true;
    tx_frame(e, 60, 0xab);
    assert_int_equal(pc_top.tx_records, top_tx);
    e->dev.busy = false;
    wisp_dev_tx_ready(&e->dev.dev);
    assert_int_equal(pc_top.tx_records, top_tx + 1);
    assert_int_equal(pc_bottom.tx_records, bottom_tx + 1);
    cap_free(top);
    cap_free(bottom);
    tu_env_free(e);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_pcap_global_header_exact),
        cmocka_unit_test(test_pcap_records_both_directions_byte_exact),
        cmocka_unit_test(test_pcap_chain_written_piece_by_piece),
        cmocka_unit_test(test_pcap_stack_clock_when_no_time_callback),
        cmocka_unit_test(test_pcap_refused_frame_recorded_once_when_sent),
        cmocka_unit_test(test_pcap_write_failure_stops_capture_not_traffic),
        cmocka_unit_test(test_pcap_header_write_failure_reported),
        cmocka_unit_test(test_impair_loss_all_tx_drops_every_frame),
        cmocka_unit_test(test_impair_loss_all_rx_drops_and_frees),
        cmocka_unit_test(test_impair_loss_none_passes_every_frame_in_order),
        cmocka_unit_test(test_impair_dup_tx_transmits_twice),
        cmocka_unit_test(test_impair_dup_rx_delivers_two_private_copies),
        cmocka_unit_test(test_impair_corrupt_tx_flips_one_bit_of_a_clone),
        cmocka_unit_test(test_impair_corrupt_rx_flips_exactly_one_bit),
        cmocka_unit_test(test_impair_reorder_tx_releases_after_next_frame),
        cmocka_unit_test(test_impair_reorder_tx_held_frame_waits_for_busy_device),
        cmocka_unit_test(test_impair_reorder_rx_swaps_neighbours),
        cmocka_unit_test(test_impair_held_frames_freed_by_deinit),
        cmocka_unit_test(test_impair_same_seed_same_decisions),
        cmocka_unit_test(test_impair_set_clamps_probabilities),
        cmocka_unit_test(test_stack_pcap_over_impair_over_testdev),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
