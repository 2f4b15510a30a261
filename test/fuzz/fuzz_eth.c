/**
 * @file fuzz_eth.c
 * Fuzz harness: raw Ethernet frames into a stack with one netif.
 *
 * The stack runs a UDP echo PCB (port 7), a TCP echo listener (port 80)
 * and one ESTABLISHED connection on it (peer port 40000, reached by a
 * scripted handshake after the peer announced itself with an ARP request),
 * so ARP, IPv4 (fragments, options), ICMP, UDP and TCP input all see the
 * frames. Input: records [ctrl][len hi][len lo][len bytes of frame]; ctrl
 * bit 0 fixes the IPv4 header checksum, bit 1 the TCP/UDP/ICMP checksum
 * (unfragmented datagrams), bit 2 sets the destination MAC to ours, bit 5
 * sets the IPv4 total length to the frame's, bit 6 makes the sequence and
 * acknowledgment numbers of an unfragmented TCP segment relative to the
 * scripted connection's (added to the peer's / the stack's next sequence
 * number; only together with bit 1); bits 3-4 advance the clock
 * after the frame (none, 10 ms, 1 s, 30 s). Afterwards the clock runs 5 s,
 * every connection is aborted, the clock runs 20 minutes, and pool use
 * must be back at the baseline (listener + UDP PCB); then the stack is
 * torn down and every pool must be at zero.
 */
#include <stdio.h>
#include <string.h>

#include "fuzz_env.h"

#define ETH_CONNS 16

struct eth_app {
    struct wisp_tcp_pcb *conn[ETH_CONNS];
};

static struct fz_env eth_env;
static struct eth_app eth_app;

static void eth_udp_recv(void *arg, struct wisp_udp_pcb *pcb, struct wisp_pbuf *p, const wisp_ipaddr_t *src,
                         uint16_t port, const struct wisp_ip_info *ip)
{
    (void)arg;
    (void)ip;
    (void)wisp_udp_sendto(pcb, p, src, port);
    wisp_pbuf_free(p);
}

static void eth_forget(struct wisp_tcp_pcb *pcb)
{
    unsigned i;
    for (i = 0; i < ETH_CONNS; i++) {
        if (eth_app.conn[i] == pcb) {
            eth_app.conn[i] = NULL;
        }
    }
}

static void eth_err(void *arg, wisp_err_t err)
{
    (void)err;
    eth_forget((struct wisp_tcp_pcb *)arg);
}

static wisp_err_t eth_recv(void *arg, struct wisp_tcp_pcb *pcb, struct wisp_pbuf *p, wisp_err_t err)
{
    uint8_t buf[512];
    uint16_t n;
    (void)arg;
    (void)err;
    if (p == NULL) {
        eth_forget(pcb);
        if (wisp_tcp_close(pcb) != WISP_OK) {
            wisp_tcp_abort(pcb);
        }
        return WISP_OK;
    }
    n = wisp_pbuf_copy_out(p, buf, sizeof(buf), 0);
    (void)wisp_tcp_write(pcb, buf, n, WISP_TCP_WRITE_COPY);
    wisp_tcp_recved(pcb, p->tot_len);
    wisp_pbuf_free(p);
    return WISP_OK;
}

static wisp_err_t eth_accept(void *arg, struct wisp_tcp_pcb *pcb, wisp_err_t err)
{
    unsigned i;
    (void)arg;
    (void)err;
    for (i = 0; i < ETH_CONNS; i++) {
        if (eth_app.conn[i] == NULL) {
            eth_app.conn[i] = pcb;
            wisp_tcp_arg(pcb, pcb);
            wisp_tcp_recv(pcb, eth_recv);
            wisp_tcp_err(pcb, eth_err);
            return WISP_OK;
        }
    }
    return WISP_ERR_MEM;
}

/* Checksum fixes the control byte asks for (frame in place). */
static void eth_fix(uint8_t *f, size_t n, uint8_t ctrl, uint32_t stack_nxt, uint32_t peer_nxt)
{
    uint8_t *ip = f + 14;
    size_t ihl, tot, l4len;
    uint8_t *l4;
    if (ctrl & 0x04u) {
        memcpy(f, fz_mac_self, 6);
    }
    if (n < 34 || wisp_rd16(f + 12) != WISP_ETHTYPE_IP4) {
        return;
    }
    ihl = (ip[0] & 0x0fu) * 4u;
    if (ihl < 20 || 14 + ihl > n) {
        return;
    }
    if (ctrl & 0x20u) {
        wisp_wr16(ip + 2, (uint16_t)(n - 14));
    }
    tot = wisp_rd16(ip + 2);
    if (ctrl & 0x01u) {
        wisp_wr16(ip + 10, 0);
        wisp_wr16(ip + 10, (uint16_t)~wisp_chksum_sum(ip, (uint16_t)ihl));
    }
    if (!(ctrl & 0x02u) || (wisp_rd16(ip + 6) & 0x3fffu) != 0 || tot < ihl || 14 + tot > n) {
        return;
    }
    l4 = ip + ihl;
    l4len = tot - ihl;
    if (ip[9] == WISP_IP4_PROTO_TCP && l4len >= 20 && (ctrl & 0x40u)) {
        /* sequence numbers relative to the scripted connection's */
        wisp_wr32(l4 + 4, wisp_rd32(l4 + 4) + peer_nxt);
        wisp_wr32(l4 + 8, wisp_rd32(l4 + 8) + stack_nxt);
    }
    if (ip[9] == WISP_IP4_PROTO_TCP && l4len >= 20) {
        wisp_wr16(l4 + 16, 0);
        wisp_wr16(l4 + 16, (uint16_t)~wisp_chksum_add(wisp_chksum_pseudo4(wisp_ip4_rd(ip + 12), wisp_ip4_rd(ip + 16),
                                                                          WISP_IP4_PROTO_TCP, (uint16_t)l4len),
                                                      wisp_chksum_sum(l4, (uint16_t)l4len)));
    } else if (ip[9] == WISP_IP4_PROTO_UDP && l4len >= 8) {
        uint16_t sum;
        wisp_wr16(l4 + 6, 0);
        sum = (uint16_t)~wisp_chksum_add(wisp_chksum_pseudo4(wisp_ip4_rd(ip + 12), wisp_ip4_rd(ip + 16),
                                                             WISP_IP4_PROTO_UDP, (uint16_t)l4len),
                                         wisp_chksum_sum(l4, (uint16_t)l4len));
        wisp_wr16(l4 + 6, sum == 0 ? 0xffff : sum);
    } else if (ip[9] == WISP_IP4_PROTO_ICMP && l4len >= 4) {
        wisp_wr16(l4 + 2, 0);
        wisp_wr16(l4 + 2, (uint16_t)~wisp_chksum_sum(l4, (uint16_t)l4len));
    }
}

/* The peer's ARP request for our address (we learn the peer from it). */
static void eth_arp_hello(struct fz_env *e)
{
    uint8_t f[42];
    memset(f, 0xff, 6);
    memcpy(f + 6, fz_mac_peer, 6);
    wisp_wr16(f + 12, WISP_ETHTYPE_ARP);
    wisp_wr16(f + 14, 1);
    wisp_wr16(f + 16, WISP_ETHTYPE_IP4);
    f[18] = 6;
    f[19] = 4;
    wisp_wr16(f + 20, 1);
    memcpy(f + 22, fz_mac_peer, 6);
    wisp_ip4_wr(f + 28, fz_ip_peer());
    memset(f + 32, 0, 6);
    wisp_ip4_wr(f + 38, fz_ip_self());
    fz_inject(e, f, sizeof(f));
}

int fuzz_eth_one(const uint8_t *data, size_t size);

int fuzz_eth_one(const uint8_t *data, size_t size)
{
    static uint8_t frame[65536];
    static const uint32_t adv[4] = { 0, 10, 1000, 30000 };
    struct fz_env *e = &eth_env;
    struct wisp_udp_pcb *upcb;
    struct wisp_tcp_pcb *lpcb, *pcb;
    wisp_err_t err;
    uint32_t stack_nxt, peer_nxt;
    unsigned baseline, i;
    size_t off = 0;

    memset(&eth_app, 0, sizeof(eth_app));
    fz_env_init(e, 1, 1);
    upcb = wisp_udp_new(e->s);
    if (upcb == NULL || wisp_udp_bind(upcb, NULL, 7) != WISP_OK) {
        fz_fail("udp setup");
    }
    wisp_udp_recv(upcb, eth_udp_recv, NULL);
    pcb = wisp_tcp_new(e->s);
    if (pcb == NULL || wisp_tcp_bind(pcb, NULL, 80) != WISP_OK) {
        fz_fail("tcp setup");
    }
    lpcb = wisp_tcp_listen(pcb, 8, &err);
    if (lpcb == NULL) {
        fz_fail("listen");
    }
    wisp_tcp_accept(lpcb, eth_accept);
    baseline = wisp_stack_pools_in_use(e->s);
    eth_arp_hello(e);
    if (!fz_handshake(e, 80, 40000, 0x10000000u, &stack_nxt, &peer_nxt) || eth_app.conn[0] == NULL) {
        fz_fail("handshake");
    }

    while (off < size) {
        uint8_t ctrl = data[off++];
        size_t len = 0;
        if (off + 2 <= size) {
            len = ((size_t)data[off] << 8) | data[off + 1];
            off += 2;
        }
        if (len > size - off) {
            len = size - off;
        }
        if (len > 0) {
            memcpy(frame, data + off, len);
            off += len;
            eth_fix(frame, len, ctrl, stack_nxt, peer_nxt);
            fz_inject(e, frame, len);
        }
        if (adv[(ctrl >> 3) & 3u] > 0) {
            fz_advance(e, adv[(ctrl >> 3) & 3u]);
        }
        fz_clear(e);
    }
    fz_advance(e, 5000);
    for (i = 0; i < ETH_CONNS; i++) {
        if (eth_app.conn[i] != NULL) {
            wisp_tcp_abort(eth_app.conn[i]); /* its err callback forgets it */
        }
    }
    fz_advance(e, 20u * 60u * 1000u);
    fz_clear(e);
    fz_check_pools(e, baseline, "eth: after abort and 20 min");
    (void)wisp_tcp_close(lpcb);
    wisp_udp_remove(upcb);
    fz_env_fini(e);
    return 0;
}

#ifdef FUZZ_LIBFUZZER
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    return fuzz_eth_one(data, size);
}
#endif
