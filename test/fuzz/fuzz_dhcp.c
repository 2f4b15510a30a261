/**
 * @file fuzz_dhcp.c
 * Fuzz harness: DHCP server messages (UDP 67 -> 68) delivered to a running
 * client (include/wisp/dhcp.h) in SELECTING, REQUESTING, BOUND or
 * RENEWING.
 *
 * The first input byte sets the scene: bits 0-1 the state reached with
 * canned messages before the fuzzed ones (0 SELECTING, 1 REQUESTING after
 * an OFFER, 2 BOUND after OFFER + ACK, 3 RENEWING: BOUND then T1), bit 2
 * the ARP probe of the address (RFC 5227) on, bit 3 start in INIT-REBOOT
 * (a previous address) instead, bit 4 release the lease at stop.
 * Then records [ctrl][len hi][len lo][len bytes]:
 *   ctrl bit 1 set: the bytes are [yiaddr (4)][options...] and the harness
 *     builds the BOOTREPLY around them (op, htype, hlen, our chaddr, the
 *     magic cookie); clear: the bytes are the whole UDP payload;
 *   bit 0 patch the xid to the client's current one;
 *   bit 2 send to our leased address (unicast) instead of 255.255.255.255;
 *   bit 3 send from port 1067 instead of 67;
 *   bits 4-6 clock advance after the record (0, 100 ms, 1 s, 4 s, 30 s,
 *     5 min, 1 h, 1 day);
 *   bit 7 then an ARP reply from another host claiming the address the
 *     client is acquiring (a conflict while CHECKING).
 * Afterwards the client is stopped, the clock runs 5 minutes, pool use
 * must be back at zero, then deinit.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_env.h"
#include "wisp/dhcp.h"

#define DH_OFF (WISP_ETH_HLEN + WISP_IP4_HLEN + WISP_UDP_HLEN) /* DHCP message in a frame */

struct dhcp_fx {
    struct fz_env e;
    struct wisp_dhcp d;
    unsigned events;
};

static struct dhcp_fx dfx;

static void dhcp_ev(void *arg, struct wisp_dhcp *d, enum wisp_dhcp_event ev)
{
    (void)d;
    (void)ev;
    ((struct dhcp_fx *)arg)->events++;
}

/* Drop the recorded frames: the harness needs nothing from the client's
 * messages (it takes the current xid from d.xid). */
static void dhcp_drain(void)
{
    fz_clear(&dfx.e);
}

static size_t dhcp_put_opt(uint8_t *m, size_t n, uint8_t code, uint8_t len, const void *v)
{
    m[n] = code;
    m[n + 1] = len;
    memcpy(m + n + 2, v, len);
    return n + 2u + len;
}

/* A BOOTREPLY with our chaddr and cookie; options from opt (raw). */
static size_t dhcp_build(uint8_t *m, uint32_t xid, wisp_ip4_t yiaddr, const uint8_t *opt, size_t optlen)
{
    memset(m, 0, 240);
    m[0] = 2;
    m[1] = 1;
    m[2] = 6;
    wisp_wr32(m + 4, xid);
    wisp_ip4_wr(m + 16, yiaddr);
    memcpy(m + 28, fz_mac_self, 6);
    m[236] = 99;
    m[237] = 130;
    m[238] = 83;
    m[239] = 99;
    memcpy(m + 240, opt, optlen);
    return 240u + optlen;
}

/* A canned OFFER or ACK for 198.18.0.50 from 198.18.0.1 (lease 1 h). */
static size_t dhcp_canned(uint8_t *m, uint8_t type)
{
    uint8_t o[64], v[4];
    size_t n = 0;
    n = dhcp_put_opt(o, n, 53, 1, &type);
    wisp_ip4_wr(v, fz_ip_peer());
    n = dhcp_put_opt(o, n, 54, 4, v);
    wisp_wr32(v, 3600);
    n = dhcp_put_opt(o, n, 51, 4, v);
    wisp_ip4_wr(v, wisp_ip4_prefix_mask(24));
    n = dhcp_put_opt(o, n, 1, 4, v);
    wisp_ip4_wr(v, fz_ip_peer());
    n = dhcp_put_opt(o, n, 3, 4, v);
    n = dhcp_put_opt(o, n, 6, 4, v);
    o[n++] = 255;
    return dhcp_build(m, dfx.d.xid, wisp_ip4(198, 18, 0, 50), o, n);
}

static void dhcp_send(const uint8_t *msg, size_t len, int unicast, uint16_t sport)
{
    static uint8_t f[DH_OFF + 65536];
    wisp_ip4_t dst = 0xffffffffu;
    size_t n;
    if (len > 1400) {
        len = 1400;
    }
    if (unicast && wisp_netif_ip4_addr(&dfx.e.nif) != 0) {
        dst = wisp_netif_ip4_addr(&dfx.e.nif);
    }
    n = fz_udp_frame(f, dst == 0xffffffffu ? (const uint8_t *)"\xff\xff\xff\xff\xff\xff" : fz_mac_self, fz_ip_peer(),
                     dst, sport, 68, msg, (uint16_t)len);
    fz_inject(&dfx.e, f, n);
}

/* An ARP reply from 02:..:66 claiming addr. */
static void dhcp_conflict(wisp_ip4_t addr)
{
    static const uint8_t other[6] = { 2, 0, 0, 0, 0, 0x66 };
    uint8_t f[42];
    memset(f, 0xff, 6);
    memcpy(f + 6, other, 6);
    wisp_wr16(f + 12, WISP_ETHTYPE_ARP);
    wisp_wr16(f + 14, 1);
    wisp_wr16(f + 16, WISP_ETHTYPE_IP4);
    f[18] = 6;
    f[19] = 4;
    wisp_wr16(f + 20, 2);
    memcpy(f + 22, other, 6);
    wisp_ip4_wr(f + 28, addr);
    memcpy(f + 32, fz_mac_self, 6);
    wisp_ip4_wr(f + 38, 0);
    fz_inject(&dfx.e, f, sizeof(f));
}

int fuzz_dhcp_one(const uint8_t *data, size_t size);

int fuzz_dhcp_one(const uint8_t *data, size_t size)
{
    static uint8_t msg[2048];
    static const uint32_t adv[8] = { 0, 100, 1000, 4000, 30000, 300000, 3600000, 86400000 };
    struct fz_env *e = &dfx.e;
    struct wisp_dhcp_cfg cfg;
    uint8_t setup = size > 0 ? data[0] : 0;
    unsigned st = setup & 3u;
    size_t off = 1, n;

    memset(&dfx.d, 0, sizeof(dfx.d));
    dfx.events = 0;
    fz_env_init(e, 3, 0);
    wisp_dhcp_cfg_defaults(&cfg);
    cfg.init_delay_ms = 0;
    cfg.arp_check = (setup & 4u) != 0;
    cfg.hostname = "fuzz";
    if (setup & 8u) {
        cfg.prev_addr = wisp_ip4(198, 18, 0, 50);
    }
    if (wisp_dhcp_start(&dfx.d, &e->nif, &cfg, dhcp_ev, &dfx) != WISP_OK) {
        fz_fail("dhcp start");
    }
    fz_advance(e, 10);
    dhcp_drain();
    if (!(setup & 8u) && st >= 1) {
        n = dhcp_canned(msg, 2);
        dhcp_send(msg, n, 0, 67);
        dhcp_drain();
        if (st >= 2) {
            n = dhcp_canned(msg, 5);
            dhcp_send(msg, n, 0, 67);
            fz_advance(e, 10000); /* ARP probes when checking */
            dhcp_drain();
            if (wisp_dhcp_state(&dfx.d) != WISP_DHCP_BOUND) {
                fz_fail("canned exchange: state %s", wisp_dhcp_state_name(wisp_dhcp_state(&dfx.d)));
            }
            if (st == 3) {
                fz_advance(e, 1800u * 1000u);
                dhcp_drain();
            }
        }
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
        if (len > 1000) {
            len = 1000;
        }
        if (ctrl & 2u) {
            wisp_ip4_t yi = 0;
            if (len >= 4) {
                yi = wisp_ip4_rd(data + off);
            }
            n = dhcp_build(msg, 0, yi, data + off + (len >= 4 ? 4 : len), len >= 4 ? len - 4 : 0);
        } else {
            memcpy(msg, data + off, len);
            n = len;
        }
        off += len;
        if ((ctrl & 1u) && n >= 8) {
            wisp_wr32(msg + 4, dfx.d.xid);
        }
        dhcp_send(msg, n, (ctrl & 4u) != 0, (ctrl & 8u) ? 1067 : 67);
        if (ctrl & 0x80u) {
            dhcp_conflict(dfx.d.pend.addr != 0 ? dfx.d.pend.addr : wisp_ip4(198, 18, 0, 50));
        }
        if (adv[(ctrl >> 4) & 7u] > 0) {
            fz_advance(e, adv[(ctrl >> 4) & 7u]);
        }
        dhcp_drain();
    }
    if (getenv("FUZZ_VERBOSE") != NULL) {
        fprintf(stderr, "dhcp: state %s, %u events\n", wisp_dhcp_state_name(wisp_dhcp_state(&dfx.d)), dfx.events);
    }
    wisp_dhcp_stop(&dfx.d, (setup & 0x10u) != 0);
    fz_advance(e, 5u * 60u * 1000u);
    fz_clear(e);
    fz_check_pools(e, 0, "dhcp: after stop and 5 min");
    fz_env_fini(e);
    return 0;
}

#ifdef FUZZ_LIBFUZZER
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    return fuzz_dhcp_one(data, size);
}
#endif
