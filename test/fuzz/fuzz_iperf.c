/**
 * @file fuzz_iperf.c
 * Fuzz harness: UDP datagrams into the iperf 2 server (apps/lib/iperf.h).
 *
 * The server runs UDP on port 5001 (with TCP too when bit 0 of the first
 * input byte is set, which then only sees the listener). Records
 * [ctrl][len hi][len lo][len bytes] are datagram payloads from the peer:
 *   ctrl bits 0-1 the peer's source port (40000..40003: up to four
 *     sessions), bit 2 from 198.18.0.7 instead of 198.18.0.1;
 *   bits 3-5 clock advance after the datagram (0, 1 ms, 10 ms, 100 ms,
 *     1 s, 11 s: a session idle long enough to be taken over, 60 s,
 *     10 min);
 *   bit 6 patch the sequence number: the harness counts per source port
 *     and writes id = the next number (id2 = 0), bit 7 with it makes the
 *     datagram the FIN (the number negated: id2:id as 64 bits).
 * Datagrams are cut at 1472 bytes (no fragmentation). Afterwards the
 * server is stopped (running sessions are reported), 1 minute passes and
 * every pool must be back at zero use; then deinit.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_env.h"
#include "iperf.h"

struct iperf_fx {
    struct fz_env e;
    struct wisp_iperf_server srv;
    uint32_t seq[4];
    unsigned reports;
};

static struct iperf_fx ifx;

static void iperf_report(void *ctx, const struct wisp_iperf_result *r)
{
    (void)ctx;
    if (r->proto == WISP_IP4_PROTO_UDP && r->report.datagrams > 0 && r->report.lost > r->report.datagrams) {
        fz_fail("iperf: %llu lost of %llu datagrams", (unsigned long long)r->report.lost,
                (unsigned long long)r->report.datagrams);
    }
    ifx.reports++;
}

int fuzz_iperf_one(const uint8_t *data, size_t size);

int fuzz_iperf_one(const uint8_t *data, size_t size)
{
    static uint8_t dg[1472], f[1600];
    static const uint32_t adv[8] = { 0, 1, 10, 100, 1000, 11000, 60000, 600000 };
    static const uint8_t mac7[6] = { 2, 0, 0, 0, 0, 7 };
    struct fz_env *e = &ifx.e;
    struct wisp_iperf_server_cfg cfg;
    uint8_t setup = size > 0 ? data[0] : 0;
    size_t off = 1, n;

    memset(ifx.seq, 0, sizeof(ifx.seq));
    ifx.reports = 0;
    fz_env_init(e, 6, 1);
    fz_arp_peer(e);
    (void)wisp_arp_add_static(&e->nif, wisp_ip4(198, 18, 0, 7), mac7);
    memset(&cfg, 0, sizeof(cfg));
    cfg.udp = true;
    cfg.tcp = (setup & 1u) != 0;
    cfg.reverse = true;
    cfg.report = iperf_report;
    if (wisp_iperf_server_start(e->s, &ifx.srv, &cfg) != WISP_OK) {
        fz_fail("iperf start");
    }

    while (off < size) {
        uint8_t ctrl = data[off++];
        unsigned pi = ctrl & 3u;
        size_t len = 0;
        if (off + 2 <= size) {
            len = ((size_t)data[off] << 8) | data[off + 1];
            off += 2;
        }
        if (len > size - off) {
            len = size - off;
        }
        n = len > sizeof(dg) ? sizeof(dg) : len;
        memcpy(dg, data + off, n);
        off += len;
        if ((ctrl & 0x40u) && n >= 16) {
            uint32_t id = ++ifx.seq[pi];
            wisp_wr32(dg, (ctrl & 0x80u) ? (uint32_t)(0u - id) : id);
            wisp_wr32(dg + 12, (ctrl & 0x80u) ? 0xffffffffu : 0u); /* id2: the upper half, 64-bit numbers */
        }
        n = fz_udp_frame(f, fz_mac_self, (ctrl & 4u) ? wisp_ip4(198, 18, 0, 7) : fz_ip_peer(), fz_ip_self(),
                         (uint16_t)(40000u + pi), WISP_IPERF_PORT, dg, (uint16_t)n);
        fz_inject(e, f, n);
        fz_advance(e, adv[(ctrl >> 3) & 7u]);
        fz_clear(e);
    }
    wisp_iperf_server_stop(&ifx.srv);
    if (getenv("FUZZ_VERBOSE") != NULL) {
        fprintf(stderr, "iperf: %u reports, udp tests %u runts %u reports sent %u\n", ifx.reports,
                (unsigned)ifx.srv.st.udp_tests, (unsigned)ifx.srv.st.udp_runts, (unsigned)ifx.srv.st.reports_sent);
    }
    fz_advance(e, 60000);
    fz_clear(e);
    fz_check_pools(e, 0, "iperf: after stop and 1 min");
    fz_env_fini(e);
    return 0;
}

#ifdef FUZZ_LIBFUZZER
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    return fuzz_iperf_one(data, size);
}
#endif
