/**
 * @file fuzz_ip4_frag.c
 * Fuzz harness: sequences of IPv4 fragments into reassembly
 * (src/core/ip4_frag.c): overlaps, duplicates, holes, floods of
 * datagrams, oversize ends, timeouts; completed datagrams go up to UDP
 * (an echo on port 7, whose replies above the MTU are fragmented again on
 * output), ICMP (echo) and TCP (a listener on port 80).
 *
 * Four template datagrams with correct transport checksums (UDP to 7 with
 * 1000 and 3900 bytes of data, ICMP echo of 2000 bytes, a TCP SYN with
 * options to 80); a fragment cuts bytes [off, off + len) of its template,
 * so consistent fragments reassemble to a valid datagram. Input: records
 * of 5 bytes [ctl][o1][o2][l1][l2]: ctl bits 0-1 template, bit 2 MF, bit
 * 3 DF, bits 4-5 advance the clock after the fragment (0, 100 ms, 5 s,
 * 16 s > WISP_IP_REASS_TIMEOUT_MS), bit 6 a second source host (another
 * reassembly key), bit 7 ID + 1 (another datagram of the same source; the
 * IDs of the templates never collide);
 * fragment offset = (o1 << 8 | o2) & 0x1fff in 8-byte units, length =
 * (l1 << 8 | l2) & 0x7ff bytes (at most 1480: one frame of MTU 1500;
 * bytes past the template are zeros); l1 bit 7 adds 40 bytes of IP options
 * (NOPs, IHL 15; the payload shrinks to keep the frame within the MTU).
 *
 * Checks: a UDP datagram delivered to port 7 is its template byte for
 * byte (no mixed-up or lost data). After every fragment the receive pool
 * holds at most
 * WISP_IP_REASS_MAX_PBUFS buffers (everything else is freed when the
 * frame has been handled); at the end, after the reassembly timeout,
 * pool use is back at the baseline, and after the teardown every pool is
 * at zero.
 */
#include <stdio.h>
#include <string.h>

#include "fuzz_env.h"

#define FRAG_TPL_MAX 4000u

static struct fz_env frag_env;
static uint8_t frag_tpl[4][FRAG_TPL_MAX];
static uint16_t frag_tpl_len[4];
static const uint8_t frag_proto[4] = { WISP_IP4_PROTO_UDP, WISP_IP4_PROTO_UDP, WISP_IP4_PROTO_ICMP,
                                       WISP_IP4_PROTO_TCP };

static wisp_ip4_t frag_src(int other)
{
    return other ? wisp_ip4(198, 18, 0, 9) : fz_ip_peer();
}

/* Port 7: a datagram delivered must be one of the UDP templates, byte
 * for byte (each datagram's fragments come from one template: the
 * reassembly key's ID is unique per template), then it is echoed. */
static void frag_udp_echo(void *arg, struct wisp_udp_pcb *pcb, struct wisp_pbuf *p, const wisp_ipaddr_t *src,
                          uint16_t port, const struct wisp_ip_info *ip)
{
    static uint8_t got[FRAG_TPL_MAX];
    unsigned t = p->tot_len == 1000u ? 0u : 1u;
    (void)arg;
    (void)ip;
    if ((p->tot_len != 1000u && p->tot_len != 3900u) || wisp_pbuf_copy_out(p, got, sizeof(got), 0) != p->tot_len ||
        memcmp(got, frag_tpl[t] + 8, p->tot_len) != 0) {
        fz_fail("frag: UDP datagram of %u bytes delivered that is not template %u", (unsigned)p->tot_len, t);
    }
    (void)wisp_udp_sendto(pcb, p, src, port);
    wisp_pbuf_free(p);
}

/* Template t as sent by source src (the transport checksums cover the
 * pseudo header, so they depend on the source). */
static void frag_build(unsigned t, wisp_ip4_t src)
{
    uint8_t *d = frag_tpl[t];
    uint16_t i, len;
    memset(d, 0, FRAG_TPL_MAX);
    switch (t) {
    case 0:
    case 1:
        len = (uint16_t)(8u + (t == 0 ? 1000u : 3900u));
        wisp_wr16(d, 4000);
        wisp_wr16(d + 2, 7);
        wisp_wr16(d + 4, len);
        for (i = 8; i < len; i++) {
            d[i] = (uint8_t)(i * 7u + t);
        }
        wisp_wr16(d + 6, (uint16_t)~wisp_chksum_add(wisp_chksum_pseudo4(src, fz_ip_self(), WISP_IP4_PROTO_UDP, len),
                                                    wisp_chksum_sum(d, len)));
        break;
    case 2:
        len = 8u + 2000u;
        d[0] = 8; /* echo request */
        wisp_wr16(d + 4, 0x4242);
        wisp_wr16(d + 6, 1);
        for (i = 8; i < len; i++) {
            d[i] = (uint8_t)i;
        }
        wisp_wr16(d + 2, (uint16_t)~wisp_chksum_sum(d, len));
        break;
    default:
        len = 20u + 20u;
        wisp_wr16(d, 40100);
        wisp_wr16(d + 2, 80);
        wisp_wr32(d + 4, 0x01020304u);
        d[12] = (uint8_t)(10u << 4);
        d[13] = FZ_SYN;
        wisp_wr16(d + 14, 65535);
        d[20] = 2; /* MSS 1460, SACK permitted, window scale 7, timestamps */
        d[21] = 4;
        wisp_wr16(d + 22, 1460);
        d[24] = 4;
        d[25] = 2;
        d[26] = 3;
        d[27] = 3;
        d[28] = 7;
        d[29] = 8;
        d[30] = 10;
        wisp_wr32(d + 31, 1);
        wisp_wr16(d + 16, (uint16_t)~wisp_chksum_add(wisp_chksum_pseudo4(src, fz_ip_self(), WISP_IP4_PROTO_TCP, len),
                                                     wisp_chksum_sum(d, len)));
        break;
    }
    frag_tpl_len[t] = len;
}

static void frag_send(struct fz_env *e, const uint8_t *r)
{
    static uint8_t f[1514];
    uint8_t ctl = r[0];
    unsigned t = ctl & 3u;
    uint16_t fo = (uint16_t)(((unsigned)r[1] << 8 | r[2]) & 0x1fffu);
    uint16_t len = (uint16_t)(((unsigned)r[3] << 8 | r[4]) & 0x7ffu);
    uint32_t start = (uint32_t)fo * 8u;
    wisp_ip4_t src = frag_src((ctl & 0x40u) != 0);
    uint8_t *ip = f + 14;
    uint16_t opt = (r[3] & 0x80u) ? 40u : 0u;
    if (len > 1480 - opt) {
        len = (uint16_t)(1480 - opt);
    }
    frag_build(t, src);
    memset(f, 0, sizeof(f));
    fz_eth_ip4(f, fz_mac_self, src, fz_ip_self(), frag_proto[t], (uint16_t)(len + opt));
    if (opt > 0) {
        ip[0] = 0x4f;
        memset(ip + 20, 1, opt); /* NOP options */
    }
    wisp_wr16(ip + 4, (uint16_t)(0x5000u + t * 2u + ((ctl & 0x80u) ? 1u : 0u))); /* unique per template */
    wisp_wr16(ip + 6, (uint16_t)(fo | ((ctl & 4u) ? 0x2000u : 0u) | ((ctl & 8u) ? 0x4000u : 0u)));
    wisp_wr16(ip + 10, 0);
    wisp_wr16(ip + 10, (uint16_t)~wisp_chksum_sum(ip, (uint16_t)(20u + opt)));
    if (start < frag_tpl_len[t]) {
        uint32_t n = frag_tpl_len[t] - start;
        memcpy(f + 34 + opt, frag_tpl[t] + start, n < len ? n : len);
    }
    fz_inject(e, f, 34u + opt + len);
}

int fuzz_ip4_frag_one(const uint8_t *data, size_t size);

int fuzz_ip4_frag_one(const uint8_t *data, size_t size)
{
    static const uint32_t adv[4] = { 0, 100, 5000, 16000 };
    struct fz_env *e = &frag_env;
    struct wisp_udp_pcb *upcb;
    struct wisp_tcp_pcb *pcb, *lpcb;
    wisp_err_t err;
    unsigned baseline;
    size_t off = 0;

    fz_env_init(e, 5, 1);
    fz_arp_peer(e);
    if (wisp_arp_add_static(&e->nif, frag_src(1), fz_mac_peer) != WISP_OK) {
        fz_fail("frag: arp");
    }
    upcb = wisp_udp_new(e->s);
    if (upcb == NULL || wisp_udp_bind(upcb, NULL, 7) != WISP_OK) {
        fz_fail("frag: udp setup");
    }
    wisp_udp_recv(upcb, frag_udp_echo, NULL);
    pcb = wisp_tcp_new(e->s);
    if (pcb == NULL || wisp_tcp_bind(pcb, NULL, 80) != WISP_OK) {
        fz_fail("frag: tcp setup");
    }
    lpcb = wisp_tcp_listen(pcb, 4, &err);
    if (lpcb == NULL) {
        fz_fail("frag: listen");
    }
    baseline = wisp_stack_pools_in_use(e->s);

    while (off + 5 <= size) {
        const uint8_t *r = data + off;
        off += 5;
        frag_send(e, r);
        fz_clear(e);
        if (e->s->pool[WISP_POOL_PBUF_RX].used > WISP_IP_REASS_MAX_PBUFS) {
            fz_fail("frag: %u receive buffers held, reassembly bound %u", (unsigned)e->s->pool[WISP_POOL_PBUF_RX].used,
                    (unsigned)WISP_IP_REASS_MAX_PBUFS);
        }
        if (adv[(r[0] >> 4) & 3u] > 0) {
            fz_advance(e, adv[(r[0] >> 4) & 3u]);
            fz_clear(e);
        }
    }
    /* past the reassembly timeout and the SYN-RECEIVED give-up of any
     * connection a reassembled SYN opened */
    fz_advance(e, 10u * 60u * 1000u);
    fz_clear(e);
    fz_check_pools(e, baseline, "frag: after the reassembly timeout");
    (void)wisp_tcp_close(lpcb);
    wisp_udp_remove(upcb);
    fz_env_fini(e);
    return 0;
}

#ifdef FUZZ_LIBFUZZER
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    return fuzz_ip4_frag_one(data, size);
}
#endif
