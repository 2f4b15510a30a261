/**
 * @file test_ip4_frag.c
 * Unit tests of IPv4 fragmentation and reassembly (src/core/ip4_frag.c):
 * byte-exact output fragments, reassembly in any order with duplicates,
 * the overlap / tiny-fragment / oversize / bad-length rules, timeout,
 * eviction at both bounds, and a 60 KB datagram in 41 fragments. Every
 * test ends with tu_env_free, the pool leak check.
 */
#include "testutil.h"

#include <stdlib.h>

#define ETH WISP_ETH_HLEN
#define IPH WISP_IP4_HLEN
#define SINK_PORT 9000u
#define SRC_PORT 5555u

static uint8_t g_dg[70000];   /* the UDP datagram (header + data) under test */
static uint8_t g_frame[2048];
static uint8_t g_out[2048];

/* ---------------------------------------------------------------- helpers */

struct sink {
    unsigned n;
    uint16_t len;
    uint8_t data[65536];
};
static struct sink g_sink;

static void sink_recv(void *arg, struct wisp_udp_pcb *pcb, struct wisp_pbuf *p, const wisp_ipaddr_t *src,
                      uint16_t port, const struct wisp_ip_info *ip)
{
    struct sink *k = (struct sink *)arg;
    (void)pcb;
    (void)src;
    (void)port;
    (void)ip;
    k->n++;
    k->len = wisp_pbuf_copy_out(p, k->data, p->tot_len, 0);
    wisp_pbuf_free(p);
}

struct fenv {
    struct tu_env *e;
    struct wisp_udp_pcb *pcb;
};

static struct fenv fenv_new(void)
{
    struct fenv f;
    f.e = tu_env_new(11);
    tu_arp_peer(f.e);
    tu_clear(f.e);
    memset(&g_sink, 0, sizeof(g_sink));
    f.pcb = wisp_udp_new(f.e->s);
    assert_non_null(f.pcb);
    assert_int_equal(wisp_udp_bind(f.pcb, NULL, SINK_PORT), WISP_OK);
    wisp_udp_recv(f.pcb, sink_recv, &g_sink);
    return f;
}

static void fenv_free(struct fenv *f)
{
    wisp_udp_remove(f->pcb);
    tu_env_free(f->e);
}

/* A UDP datagram peer:SRC_PORT -> self:SINK_PORT with dlen data bytes of a
 * position-dependent pattern, checksum filled; returns its length. */
static uint32_t mk_udp(uint32_t dlen)
{
    uint32_t len = 8u + dlen, i;
    uint16_t ck;
    for (i = 0; i < dlen; i++) {
        g_dg[8 + i] = (uint8_t)((i * 31u) ^ (i >> 8));
    }
    wisp_wr16(g_dg, SRC_PORT);
    wisp_wr16(g_dg + 2, SINK_PORT);
    wisp_wr16(g_dg + 4, (uint16_t)len);
    wisp_wr16(g_dg + 6, 0);
    ck = (uint16_t)~wisp_chksum_add(wisp_chksum_pseudo4(tu_ip_peer(), tu_ip_self(), WISP_IP4_PROTO_UDP,
                                                        (uint16_t)len),
                                    wisp_chksum_sum_ref(g_dg, len));
    wisp_wr16(g_dg + 6, ck == 0 ? 0xFFFF : ck);
    return len;
}

/* Inject one fragment of g_dg: bytes [off, off + len), MF as given. */
static void send_frag_proto(struct tu_env *e, uint8_t proto, uint16_t id, uint32_t off, uint32_t len, bool mf)
{
    uint16_t fo = (uint16_t)((off / 8u) | (mf ? WISP_IP4_FLAG_MF : 0u));
    assert_true(ETH + IPH + len <= sizeof(g_frame));
    tu_eth(g_frame, tu_mac_self, tu_mac_peer, WISP_ETHTYPE_IP4);
    tu_ip4(g_frame + ETH, tu_ip_peer(), tu_ip_self(), proto, (uint16_t)len, id, fo, 64);
    memcpy(g_frame + ETH + IPH, g_dg + off, len);
    assert_true(tu_inject(e, g_frame, ETH + IPH + len));
}

static void send_frag(struct tu_env *e, uint16_t id, uint32_t off, uint32_t len, bool mf)
{
    send_frag_proto(e, WISP_IP4_PROTO_UDP, id, off, len, mf);
}

/* Fragment k of a datagram of dglen bytes cut in slices of fs bytes. */
static void send_piece(struct tu_env *e, uint16_t id, uint32_t dglen, uint32_t fs, unsigned k)
{
    uint32_t off = k * fs;
    uint32_t len = WISP_MIN(fs, dglen - off);
    send_frag(e, id, off, len, off + len < dglen);
}

static unsigned npieces(uint32_t dglen, uint32_t fs)
{
    return (unsigned)((dglen + fs - 1u) / fs);
}

static void assert_delivered(const struct tu_env *e, uint32_t dglen)
{
    assert_int_equal(g_sink.n, 1);
    assert_int_equal(g_sink.len, dglen - 8u);
    assert_memory_equal(g_sink.data, g_dg + 8, dglen - 8u);
    assert_int_equal(e->s->ctr[WISP_CTR_UDP_DROP_CHKSUM], 0);
    assert_int_equal(e->s->ip4.reass_nbufs, 0);
}

static uint32_t g_rng;
static uint32_t rnd(void)
{
    g_rng = g_rng * 1103515245u + 12345u;
    return g_rng >> 8;
}

/* --------------------------------------------------------- fragmentation */

/* RFC 791 §3.2: 4000 bytes at MTU 1500 -> 1480 + 1480 + 1040, offsets 0,
 * 185, 370 (8-byte units), MF on all but the last, one ID, exact checksums,
 * the data unchanged; the caller's pbuf is untouched. */
static void test_frag_output_4000_at_mtu_1500(void **state)
{
    struct tu_env *e = tu_env_new(3);
    struct wisp_pbuf *p, *b;
    static const uint16_t dlen[3] = { 1480, 1480, 1040 };
    static const uint16_t fo[3] = { 0x2000 | 0, 0x2000 | 185, 370 };
    uint16_t id, i, k;
    uint32_t off = 0;
    (void)state;
    tu_arp_peer(e);
    tu_clear(e);
    p = wisp_pbuf_alloc(e->s, WISP_LAYER_TRANSPORT, 4000, WISP_PBUF_POOL);
    assert_non_null(p);
    for (b = p, k = 0; b != NULL; b = b->next) {
        for (i = 0; i < b->len; i++, k++) {
            b->payload[i] = (uint8_t)(k * 7u + (k >> 8));
            g_dg[k] = b->payload[i];
        }
    }
    id = e->s->ip4.next_id;
    assert_int_equal(wisp_ip4_output(e->s, p, 0, tu_ip_peer(), 0, 0, 253, false), WISP_OK);
    assert_int_equal(tu_pending(e), 3);
    for (i = 0; i < 3; i++) {
        uint8_t h[IPH];
        int m = tu_pop(e, g_out, sizeof(g_out));
        assert_int_equal(m, (int)(ETH + IPH + dlen[i]));
        assert_memory_equal(g_out, tu_mac_peer, 6);
        memcpy(h, g_out + ETH, IPH);
        assert_int_equal(h[0], 0x45);
        assert_int_equal(h[1], 0);
        assert_int_equal(wisp_rd16(h + 2), IPH + dlen[i]);
        assert_int_equal(wisp_rd16(h + 4), id);
        assert_int_equal(wisp_rd16(h + 6), fo[i]);
        assert_int_equal(h[8], WISP_IP_DEFAULT_TTL);
        assert_int_equal(h[9], 253);
        assert_true(wisp_ip4_rd(h + 12) == tu_ip_self());
        assert_true(wisp_ip4_rd(h + 16) == tu_ip_peer());
        /* the checksum equals a recomputation over this header */
        wisp_wr16(h + 10, 0);
        assert_int_equal(wisp_rd16(g_out + ETH + 10), (uint16_t)~wisp_chksum_sum_ref(h, IPH));
        assert_memory_equal(g_out + ETH + IPH, g_dg + off, dlen[i]);
        off += dlen[i];
    }
    assert_int_equal(off, 4000);
    assert_int_equal(TU_CTR(e, IP4_FRAG_TX), 3);
    assert_int_equal(TU_CTR(e, IP4_TX), 1);
    assert_int_equal(e->s->ip4.next_id, (uint16_t)(id + 1u));
    /* the caller's pbuf is as it was, and the fragments are gone */
    assert_int_equal(p->tot_len, 4000);
    assert_int_equal(p->ref, 1);
    assert_int_equal(wisp_pbuf_headroom(p), WISP_LAYER_TRANSPORT);
    assert_int_equal(tu_tx_used(e), wisp_pbuf_clen(p));
    wisp_pbuf_free(p);
    tu_env_free(e);
}

/* Fragments carry the datagram's priority: EF fragments wait in the
 * emergency queue while the device is busy, and go out intact. */
static void test_frag_output_keeps_dscp_priority(void **state)
{
    struct tu_env *e = tu_env_new(3);
    struct wisp_pbuf *p;
    int i;
    (void)state;
    tu_arp_peer(e);
    tu_clear(e);
    p = wisp_pbuf_alloc(e->s, WISP_LAYER_TRANSPORT, 3000, WISP_PBUF_POOL);
    assert_non_null(p);
    assert_int_equal(wisp_pbuf_copy_in(p, g_dg, 3000, 0), WISP_OK);
    e->dev.busy = true;
    assert_int_equal(wisp_ip4_output(e->s, p, 0, tu_ip_peer(), 0, 0xB8, 253, false), WISP_OK);
    assert_int_equal(wisp_netif_txq_len(&e->nif, WISP_PRIO_EMERG), 3);
    assert_int_equal(wisp_netif_txq_len(&e->nif, WISP_PRIO_COMMON), 0);
    wisp_pbuf_free(p);
    e->dev.busy = false;
    wisp_dev_tx_ready(&e->dev.dev);
    assert_int_equal(tu_pending(e), 3);
    for (i = 0; i < 3; i++) {
        int m = tu_pop(e, g_out, sizeof(g_out));
        assert_true(m > (int)(ETH + IPH));
        assert_int_equal(g_out[ETH + 1], 0xB8);
        assert_int_equal(wisp_chksum_sum_ref(g_out + ETH, IPH), 0xFFFF);
    }
    tu_env_free(e);
}

/* Our own fragments, turned around (addresses swapped), reassemble into the
 * datagram a UDP sender produced (the UDP checksum is symmetric in the
 * addresses, so it stays valid). */
static void test_frag_output_roundtrip(void **state)
{
    struct fenv f = fenv_new();
    struct tu_env *e = f.e;
    struct wisp_udp_pcb *tx = wisp_udp_new(e->s);
    wisp_ipaddr_t peer = wisp_ipaddr4(tu_ip_peer());
    struct wisp_pbuf *p;
    uint32_t i;
    unsigned n = 0;
    (void)state;
    assert_non_null(tx);
    assert_int_equal(wisp_udp_bind(tx, NULL, 4444), WISP_OK);
    p = wisp_pbuf_alloc(e->s, WISP_LAYER_TRANSPORT, 5000, WISP_PBUF_POOL);
    assert_non_null(p);
    for (i = 0; i < 5000; i++) {
        g_dg[i] = (uint8_t)(i * 13u);
    }
    assert_int_equal(wisp_pbuf_copy_in(p, g_dg, 5000, 0), WISP_OK);
    assert_int_equal(wisp_udp_sendto(tx, p, &peer, SINK_PORT), WISP_OK);
    wisp_pbuf_free(p);
    assert_int_equal(TU_CTR(e, IP4_FRAG_TX), 4);
    while (tu_pending(e) > 0) {
        int m = tu_pop(e, g_frame, sizeof(g_frame));
        uint8_t *h = g_frame + ETH;
        assert_true(m > (int)(ETH + IPH));
        memcpy(g_frame, tu_mac_self, 6);
        memcpy(g_frame + 6, tu_mac_peer, 6);
        wisp_ip4_wr(h + 12, tu_ip_peer());
        wisp_ip4_wr(h + 16, tu_ip_self());
        wisp_wr16(h + 10, 0);
        wisp_wr16(h + 10, (uint16_t)~wisp_chksum_sum_ref(h, IPH));
        assert_true(tu_inject(e, g_frame, (size_t)m));
        n++;
    }
    assert_int_equal(n, 4);
    assert_int_equal(TU_CTR(e, IP4_REASS_OK), 1);
    assert_int_equal(g_sink.n, 1);
    assert_int_equal(g_sink.len, 5000);
    assert_memory_equal(g_sink.data, g_dg, 5000);
    wisp_udp_remove(tx);
    fenv_free(&f);
}

/* ------------------------------------------------------------ reassembly */

static void test_reass_in_order(void **state)
{
    struct fenv f = fenv_new();
    uint32_t len = mk_udp(4000);
    unsigned k, n = npieces(len, 1480);
    (void)state;
    for (k = 0; k < n; k++) {
        assert_int_equal(g_sink.n, 0);
        send_piece(f.e, 0x100, len, 1480, k);
    }
    assert_int_equal(TU_CTR(f.e, IP4_FRAG_RX), n);
    assert_int_equal(TU_CTR(f.e, IP4_REASS_OK), 1);
    assert_int_equal(TU_CTR(f.e, IP4_DELIVERED), 1);
    assert_delivered(f.e, len);
    assert_false(wisp_timer_armed(&f.e->s->ip4.reass_tmr));
    fenv_free(&f);
}

static void test_reass_reverse_order(void **state)
{
    struct fenv f = fenv_new();
    uint32_t len = mk_udp(6000);
    unsigned k, n = npieces(len, 1480);
    (void)state;
    for (k = n; k-- > 0;) {
        send_piece(f.e, 0x101, len, 1480, k);
    }
    assert_int_equal(TU_CTR(f.e, IP4_REASS_OK), 1);
    assert_delivered(f.e, len);
    fenv_free(&f);
}

/* Seeded random order, each fragment sent 1..3 times. The expected
 * counters come from a model: a copy of a fragment already held is a
 * duplicate; copies arriving after completion start a new datagram that
 * never completes and times out. */
static void test_reass_random_permutation_with_duplicates(void **state)
{
    unsigned seed;
    (void)state;
    for (seed = 1; seed <= 20; seed++) {
        struct fenv f = fenv_new();
        uint32_t len = mk_udp(8000);
        unsigned n = npieces(len, 512), seq[64], cnt = 0, i, k;
        bool held[64];
        unsigned nheld = 0, exp_dup = 0, exp_ok = 0;
        g_rng = seed;
        assert_true(n <= 16);
        for (k = 0; k < n; k++) {
            unsigned copies = 1u + rnd() % 3u;
            while (copies-- > 0) {
                seq[cnt++] = k;
            }
        }
        for (i = cnt; i > 1; i--) { /* Fisher-Yates */
            unsigned j = rnd() % i, t = seq[i - 1];
            seq[i - 1] = seq[j];
            seq[j] = t;
        }
        memset(held, 0, sizeof(held));
        for (i = 0; i < cnt; i++) {
            /* the model */
            if (held[seq[i]]) {
                exp_dup++;
            } else {
                held[seq[i]] = true;
                if (++nheld == n) {
                    exp_ok++;
                    nheld = 0;
                    memset(held, 0, sizeof(held));
                }
            }
            send_piece(f.e, (uint16_t)(0x2000 + seed), len, 512, seq[i]);
        }
        assert_int_equal(TU_CTR(f.e, IP4_REASS_OK), exp_ok);
        assert_int_equal(TU_CTR(f.e, IP4_REASS_DUP), exp_dup);
        assert_int_equal(TU_CTR(f.e, IP4_REASS_OVERLAP), 0);
        assert_int_equal(g_sink.n, exp_ok);
        assert_true(exp_ok >= 1);
        assert_int_equal(g_sink.len, len - 8u);
        assert_memory_equal(g_sink.data, g_dg + 8, len - 8u);
        /* leftovers time out */
        tu_advance(f.e, WISP_IP_REASS_TIMEOUT_MS);
        assert_int_equal(TU_CTR(f.e, IP4_REASS_TIMEOUT), nheld > 0 ? 1 : 0);
        assert_int_equal(f.e->s->ip4.reass_nbufs, 0);
        fenv_free(&f);
    }
}

/* Fragment sequences, one per case: the fragments (or checkpoints) in
 * order. Each checkpoint checks the five reassembly counters, the buffers
 * held, that the receive pool holds no more than those, IP4_DELIVERED and
 * what the UDP sink got (and, when a datagram was delivered, that it is
 * byte-exact: assert_delivered). */
#define REST 0xFFFFu /* a fragment's length: to the end of the datagram */
struct fstep {
    char op;                  /* 'f' a fragment, 'p' piece k of 1480 bytes, 'c' a checkpoint, 0 the end */
    uint16_t id;
    uint16_t off, len;        /* 'f'; 'p': off = k */
    bool mf;
    uint8_t dup, overlap, badfrag, toobig, ok, nbufs, delivered; /* 'c' */
};
#define FRAG(id, off, len, mf) { 'f', (id), (off), (len), (mf), 0, 0, 0, 0, 0, 0, 0 }
#define PIECE(id, k) { 'p', (id), (k), 0, false, 0, 0, 0, 0, 0, 0, 0 }
#define CHECK(dup, overlap, badfrag, toobig, ok, nbufs, delivered) \
    { 'c', 0, 0, 0, false, (dup), (overlap), (badfrag), (toobig), (ok), (nbufs), (delivered) }

static const struct frag_case {
    const char *what;
    uint32_t dlen;            /* data bytes of the UDP datagram */
    struct fstep steps[12];
} frag_cases[] = {
    /* an exact duplicate is dropped alone; the datagram still completes */
    { "exact duplicates", 3000,
      { PIECE(0x102, 0), PIECE(0x102, 0), PIECE(0x102, 2), PIECE(0x102, 2), CHECK(2, 0, 0, 0, 0, 2, 0),
        PIECE(0x102, 1), CHECK(2, 0, 0, 0, 1, 0, 1) } },
    /* partial overlap: the whole datagram is dropped (RFC 5722 reasoning);
     * the rest alone can never complete */
    { "partial overlap", 4000,
      { FRAG(0x103, 0, 1480, true), FRAG(0x103, 1472, 1480, true), CHECK(0, 1, 0, 0, 0, 0, 0),
        FRAG(0x103, 1480, 1480, true), FRAG(0x103, 2960, REST, false), CHECK(0, 1, 0, 0, 0, 2, 0) } },
    { "same offset, other length", 4000,
      { FRAG(0x104, 1480, 1480, true), FRAG(0x104, 1480, 1472, true), CHECK(0, 1, 0, 0, 0, 0, 0) } },
    /* data beyond the end a last fragment announced (2480) */
    { "data after the last", 4000,
      { FRAG(0x105, 1480, 1000, false), FRAG(0x105, 2960, 80, true), CHECK(0, 1, 0, 0, 0, 0, 0) } },
    /* a second, different last fragment, no byte in common */
    { "a second last fragment", 4000,
      { FRAG(0x106, 1480, 200, false), FRAG(0x106, 2960, 48, false), CHECK(0, 1, 0, 0, 0, 0, 0) } },
    /* a last fragment claiming the end at 1600, before data held */
    { "last before held data", 4000,
      { FRAG(0x107, 2960, 1000, true), FRAG(0x107, 1480, 120, false), CHECK(0, 1, 0, 0, 0, 0, 0) } },
    /* RFC 1858 §3: a first fragment too small to hold the transport header */
    { "tiny first fragment", 200,
      { FRAG(0x108, 0, 8, true), FRAG(0x108, 8, REST, false), CHECK(0, 0, 1, 0, 0, 0, 0) } },
    /* with the whole transport header (>= 60 bytes of payload) it is fine */
    { "small first fragment", 200,
      { FRAG(0x109, 0, 64, true), FRAG(0x109, 64, REST, false), CHECK(0, 0, 0, 0, 1, 0, 1) } },
    /* RFC 791 §3.2: a non-last fragment carries a multiple of 8 bytes; the
     * proper fragments still make it */
    { "not a multiple of 8", 3000,
      { FRAG(0x10a, 0, 1479, true), CHECK(0, 0, 1, 0, 0, 0, 0), PIECE(0x10a, 0), PIECE(0x10a, 1), PIECE(0x10a, 2),
        CHECK(0, 0, 1, 0, 1, 0, 1) } },
    /* the "ping of death": offset 8189 * 8 + 100 bytes ends past 65535 - 20
     * (the datagram is gone); one byte past is too big, exactly at it fine */
    { "oversize", 4000,
      { FRAG(0x10b, 0, 1480, true), CHECK(0, 0, 0, 0, 0, 1, 0), FRAG(0x10b, 8189u * 8u, 100, false),
        CHECK(0, 0, 0, 1, 0, 0, 0), FRAG(0x10c, 8189u * 8u, 4, false), CHECK(0, 0, 0, 2, 0, 0, 0),
        FRAG(0x10c, 8189u * 8u, 3, false), CHECK(0, 0, 0, 2, 0, 1, 0) } },
};

static void test_reass_sequences(void **state)
{
    unsigned i;
    (void)state;
    for (i = 0; i < WISP_ARRAY_SIZE(frag_cases); i++) {
        const struct frag_case *c = &frag_cases[i];
        struct fenv f = fenv_new();
        uint32_t len = mk_udp(c->dlen);
        const struct fstep *st;
        print_message("case %u: %s\n", i, c->what);
        for (st = c->steps; st->op != 0; st++) {
            switch (st->op) {
            case 'f':
                send_frag(f.e, st->id, st->off, st->len == REST ? len - st->off : st->len, st->mf);
                break;
            case 'p':
                send_piece(f.e, st->id, len, 1480, st->off);
                break;
            default:
                assert_int_equal(TU_CTR(f.e, IP4_REASS_DUP), st->dup);
                assert_int_equal(TU_CTR(f.e, IP4_REASS_OVERLAP), st->overlap);
                assert_int_equal(TU_CTR(f.e, IP4_REASS_BADFRAG), st->badfrag);
                assert_int_equal(TU_CTR(f.e, IP4_REASS_TOOBIG), st->toobig);
                assert_int_equal(TU_CTR(f.e, IP4_REASS_OK), st->ok);
                assert_int_equal(f.e->s->ip4.reass_nbufs, st->nbufs);
                assert_true(f.e->s->pool[WISP_POOL_PBUF_RX].used <= st->nbufs);
                assert_int_equal(TU_CTR(f.e, IP4_DELIVERED), st->delivered);
                assert_int_equal(g_sink.n, st->delivered);
                if (st->delivered != 0) {
                    assert_delivered(f.e, len);
                }
                break;
            }
        }
        fenv_free(&f);
    }
}

/* RFC 791 §3.2: the timer runs from the first fragment; on expiry every
 * buffer goes back to its pool and the timer is idle. */
static void test_reass_timeout_frees_everything(void **state)
{
    struct fenv f = fenv_new();
    uint32_t len = mk_udp(4000);
    (void)state;
    send_piece(f.e, 0x10d, len, 1480, 0);
    tu_advance(f.e, 1000);
    send_piece(f.e, 0x10d, len, 1480, 2);
    assert_int_equal(f.e->s->pool[WISP_POOL_PBUF_RX].used, 2);
    assert_true(wisp_timer_armed(&f.e->s->ip4.reass_tmr));
    tu_advance(f.e, WISP_IP_REASS_TIMEOUT_MS - 1000u - 1u);
    assert_int_equal(TU_CTR(f.e, IP4_REASS_TIMEOUT), 0);
    assert_int_equal(f.e->s->ip4.reass_nbufs, 2);
    tu_advance(f.e, 1);
    assert_int_equal(TU_CTR(f.e, IP4_REASS_TIMEOUT), 1);
    assert_int_equal(f.e->s->ip4.reass_nbufs, 0);
    assert_int_equal(f.e->s->pool[WISP_POOL_PBUF_RX].used, 0);
    assert_false(wisp_timer_armed(&f.e->s->ip4.reass_tmr));
    /* the missing piece now starts a new datagram, no delivery */
    send_piece(f.e, 0x10d, len, 1480, 1);
    assert_int_equal(g_sink.n, 0);
    fenv_free(&f);
}

/* Two datagrams, each timed from its own first fragment. */
static void test_reass_timeout_per_datagram(void **state)
{
    struct fenv f = fenv_new();
    uint32_t len = mk_udp(4000);
    (void)state;
    send_piece(f.e, 0x10e, len, 1480, 0);
    tu_advance(f.e, 5000);
    send_piece(f.e, 0x10f, len, 1480, 0);
    tu_advance(f.e, WISP_IP_REASS_TIMEOUT_MS - 5000u);
    assert_int_equal(TU_CTR(f.e, IP4_REASS_TIMEOUT), 1);
    assert_int_equal(f.e->s->ip4.reass_nbufs, 1);
    send_piece(f.e, 0x10f, len, 1480, 1);
    send_piece(f.e, 0x10f, len, 1480, 2);
    assert_int_equal(TU_CTR(f.e, IP4_REASS_OK), 1);
    assert_delivered(f.e, len);
    fenv_free(&f);
}

/* At the buffer bound the OLDEST datagram is evicted and the new one
 * completes. */
static void test_reass_evict_at_pbuf_bound(void **state)
{
    struct fenv f = fenv_new();
    const unsigned hold = WISP_IP_REASS_MAX_PBUFS - 6u;
    uint32_t len;
    unsigned k;
    (void)state;
    assert_true(hold + 10u < WISP_PBUF_RX_COUNT);
    /* datagram A: `hold` 8-byte fragments, never the last */
    (void)mk_udp(8u * hold + 100u);
    for (k = 0; k < hold; k++) {
        send_frag(f.e, 0x200, 8u * k, 8, true);
    }
    assert_int_equal(f.e->s->ip4.reass_nbufs, hold);
    assert_int_equal(TU_CTR(f.e, IP4_REASS_EVICT), 0);
    /* datagram B: 10 fragments of 64 bytes */
    len = mk_udp(10u * 64u - 8u);
    for (k = 0; k < 10; k++) {
        send_piece(f.e, 0x201, len, 64, k);
        if (k < 6) {
            assert_int_equal(TU_CTR(f.e, IP4_REASS_EVICT), 0);
        }
    }
    assert_int_equal(TU_CTR(f.e, IP4_REASS_EVICT), 1);
    assert_int_equal(TU_CTR(f.e, IP4_REASS_OK), 1);
    assert_delivered(f.e, len);
    assert_int_equal(f.e->s->pool[WISP_POOL_PBUF_RX].used, 0);
    fenv_free(&f);
}

/* At the datagram bound the oldest datagram makes room. */
static void test_reass_evict_at_datagram_bound(void **state)
{
    struct fenv f = fenv_new();
    uint32_t len = mk_udp(3000);
    unsigned d;
    (void)state;
    for (d = 0; d <= WISP_IP_REASS_MAX_DGRAMS; d++) {
        send_piece(f.e, (uint16_t)(0x300 + d), len, 1480, 0);
        tu_advance(f.e, 10);
    }
    assert_int_equal(TU_CTR(f.e, IP4_REASS_EVICT), 1);
    assert_int_equal(f.e->s->ip4.reass_nbufs, WISP_IP_REASS_MAX_DGRAMS);
    /* the first (evicted) cannot complete; the second can */
    send_piece(f.e, 0x300, len, 1480, 1);
    send_piece(f.e, 0x300, len, 1480, 2);
    assert_int_equal(TU_CTR(f.e, IP4_REASS_OK), 0);
    assert_int_equal(TU_CTR(f.e, IP4_REASS_EVICT), 2); /* 0x300 came back and pushed 0x301 out */
    send_piece(f.e, 0x302, len, 1480, 1);
    send_piece(f.e, 0x302, len, 1480, 2);
    assert_int_equal(TU_CTR(f.e, IP4_REASS_OK), 1);
    assert_int_equal(g_sink.n, 1);
    assert_memory_equal(g_sink.data, g_dg + 8, len - 8u);
    fenv_free(&f);
}

/* 60 KB in 41 fragments, shuffled, reassembled byte-exact. */
static void test_reass_60k_41_fragments(void **state)
{
    struct fenv f = fenv_new();
    uint32_t len = mk_udp(60000);
    unsigned n = npieces(len, 1480), order[64], i;
    (void)state;
    assert_int_equal(n, 41);
    for (i = 0; i < n; i++) {
        order[i] = i;
    }
    g_rng = 4242;
    for (i = n; i > 1; i--) {
        unsigned j = rnd() % i, t = order[i - 1];
        order[i - 1] = order[j];
        order[j] = t;
    }
    for (i = 0; i < n; i++) {
        assert_int_equal(g_sink.n, 0);
        send_piece(f.e, 0x400, len, 1480, order[i]);
    }
    assert_int_equal(TU_CTR(f.e, IP4_FRAG_RX), 41);
    assert_int_equal(TU_CTR(f.e, IP4_REASS_OK), 1);
    assert_delivered(f.e, len);
    assert_int_equal(wisp_stack_pools_in_use(f.e->s), 1); /* the UDP PCB */
    fenv_free(&f);
}

/* A small last fragment arrives in a padded 60-byte frame: the padding is
 * trimmed before reassembly (else the UDP checksum would fail). */
static void test_reass_padded_last_fragment(void **state)
{
    struct fenv f = fenv_new();
    uint32_t len = mk_udp(1484); /* 1492 bytes: 1480 + 12 */
    (void)state;
    send_frag(f.e, 0x500, 0, 1480, true);
    tu_eth(g_frame, tu_mac_self, tu_mac_peer, WISP_ETHTYPE_IP4);
    tu_ip4(g_frame + ETH, tu_ip_peer(), tu_ip_self(), WISP_IP4_PROTO_UDP, 12, 0x500, 1480u / 8u, 64);
    memcpy(g_frame + ETH + IPH, g_dg + 1480, 12);
    memset(g_frame + ETH + IPH + 12, 0xEE, 60u - (ETH + IPH + 12u));
    assert_true(tu_inject(f.e, g_frame, 60));
    assert_int_equal(TU_CTR(f.e, IP4_REASS_OK), 1);
    assert_delivered(f.e, len);
    fenv_free(&f);
}

/* RFC 791 §3.2: the reassembled header is the first fragment's with the
 * whole total length, MF and offset cleared and a fresh checksum -- seen in
 * the quotation of the protocol unreachable about it. */
static void test_reass_header_fixed_up(void **state)
{
    struct fenv f = fenv_new();
    int m;
    uint8_t *q;
    (void)state;
    (void)mk_udp(3000);
    send_frag_proto(f.e, 253, 0x700, 1480, 20, false);
    send_frag_proto(f.e, 253, 0x700, 0, 1480, true);
    assert_int_equal(TU_CTR(f.e, IP4_REASS_OK), 1);
    assert_int_equal(TU_CTR(f.e, IP4_DROP_PROTO), 1);
    m = tu_pop(f.e, g_out, sizeof(g_out));
    assert_int_equal(m, (int)(ETH + IPH + 8u + IPH + 8u));
    assert_int_equal(g_out[ETH + IPH], WISP_ICMP_DEST_UNREACH);
    assert_int_equal(g_out[ETH + IPH + 1], WISP_ICMP_UNREACH_PROTO);
    q = g_out + ETH + IPH + 8; /* the quoted header */
    assert_int_equal(wisp_rd16(q + 2), IPH + 1500u);
    assert_int_equal(wisp_rd16(q + 4), 0x700);
    assert_int_equal(wisp_rd16(q + 6), 0);
    assert_int_equal(q[9], 253);
    assert_int_equal(wisp_chksum_sum_ref(q, IPH), 0xFFFF);
    assert_memory_equal(q + IPH, g_dg, 8);
    assert_int_equal(f.e->s->ip4.reass_nbufs, 0);
    fenv_free(&f);
}

/* Fragments not addressed to us are dropped before reassembly. */
static void test_reass_fragment_not_for_us(void **state)
{
    struct fenv f = fenv_new();
    (void)mk_udp(3000);
    (void)state;
    tu_eth(g_frame, tu_mac_self, tu_mac_peer, WISP_ETHTYPE_IP4);
    tu_ip4(g_frame + ETH, tu_ip_peer(), wisp_ip4(198, 18, 0, 50), WISP_IP4_PROTO_UDP, 1480, 0x600,
           WISP_IP4_FLAG_MF, 64);
    memcpy(g_frame + ETH + IPH, g_dg, 1480);
    assert_true(tu_inject(f.e, g_frame, ETH + IPH + 1480u));
    assert_int_equal(TU_CTR(f.e, IP4_DROP_NOTFORUS), 1);
    assert_int_equal(TU_CTR(f.e, IP4_FRAG_RX), 0);
    assert_int_equal(f.e->s->ip4.reass_nbufs, 0);
    fenv_free(&f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_frag_output_4000_at_mtu_1500),
        cmocka_unit_test(test_frag_output_keeps_dscp_priority),
        cmocka_unit_test(test_frag_output_roundtrip),
        cmocka_unit_test(test_reass_in_order),
        cmocka_unit_test(test_reass_reverse_order),
        cmocka_unit_test(test_reass_random_permutation_with_duplicates),
        cmocka_unit_test(test_reass_sequences),
        cmocka_unit_test(test_reass_timeout_frees_everything),
        cmocka_unit_test(test_reass_timeout_per_datagram),
        cmocka_unit_test(test_reass_evict_at_pbuf_bound),
        cmocka_unit_test(test_reass_evict_at_datagram_bound),
        cmocka_unit_test(test_reass_60k_41_fragments),
        cmocka_unit_test(test_reass_padded_last_fragment),
        cmocka_unit_test(test_reass_header_fixed_up),
        cmocka_unit_test(test_reass_fragment_not_for_us),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
