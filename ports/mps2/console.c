/**
 * @file console.c
 * The console of the mps2-an385 firmware images (see console.h).
 */
#define WISP_PRIVATE_ACCESS 1 /* ports/ rule of tools/check-tiers.sh; only public API is used */
#include <stdlib.h>
#include <string.h>

#include "board.h"
#include "console.h"

bool fw_line_poll(struct fw_line *l)
{
    int c;
    while ((c = board_getc()) >= 0) {
        if (c == '\r' || c == '\n') {
            l->buf[l->len] = '\0';
            l->len = 0;
            return true;
        }
        if (l->len + 1u < sizeof l->buf) {
            l->buf[l->len++] = (char)c;
        }
    }
    return false;
}

static void ping_done(void *arg, struct wisp_ping *p)
{
    const struct wisp_ping_stats *st = wisp_ping_stats(p);
    (void)arg;
    fw_say("fw: ping done sent %lu received %lu errors %lu rtt min/avg/max %lu/%lu/%lu us\n", (unsigned long)st->sent,
           (unsigned long)st->received, (unsigned long)st->errors, (unsigned long)st->min_us,
           (unsigned long)st->avg_us, (unsigned long)st->max_us);
}

bool fw_ping_parse(const char *args, struct wisp_ping_cfg *cfg, uint64_t (*now_us)(void *ctx))
{
    char addr[16];
    unsigned i = 0;
    unsigned long n, size;
    char *end;
    wisp_ip4_t dst;
    while (args[i] != '\0' && args[i] != ' ' && i + 1u < sizeof addr) {
        addr[i] = args[i];
        i++;
    }
    addr[i] = '\0';
    n = strtoul(args + i, &end, 10);
    size = strtoul(end, NULL, 10);
    if (!wisp_ip4_aton(addr, &dst) || n < 1u || n > 100u || size > 8000u) {
        fw_say("fw: usage: ping A.B.C.D COUNT SIZE\n");
        return false;
    }
    memset(cfg, 0, sizeof *cfg);
    cfg->dst = dst;
    cfg->count = (uint32_t)n;
    cfg->interval_ms = 200u;
    cfg->size = (uint16_t)size;
    cfg->done = ping_done;
    cfg->now_us = now_us;
    return true;
}

uint32_t fw_stall_ms(const char *args)
{
    uint32_t ms = (uint32_t)strtoul(args, NULL, 10);
    return ms > FW_STALL_MAX_MS ? FW_STALL_MAX_MS : ms;
}

void fw_dhcp_cfg(struct wisp_dhcp_cfg *c, const char *hostname)
{
    wisp_dhcp_cfg_defaults(c);
    c->init_delay_ms = 1000u; /* RFC 2131 §4.4.1 suggests 1..10 s; 1 s keeps boot short */
    c->hostname = hostname;
}

static unsigned mask_len(wisp_ip4_t m)
{
    unsigned n = 0;
    for (; m != 0; m &= m - 1u) {
        n++;
    }
    return n;
}

void fw_print_dhcp(struct wisp_dhcp *d, enum wisp_dhcp_event ev)
{
    const struct wisp_dhcp_lease *l = wisp_dhcp_last_lease(d);
    char a[16], g[16];
    (void)wisp_ip4_ntoa(l->addr, a);
    (void)wisp_ip4_ntoa(l->router, g);
    switch (ev) {
    case WISP_DHCP_EV_BOUND:
    case WISP_DHCP_EV_RENEWED:
        fw_say("fw: dhcp %s %s/%u gw %s lease %lu s\n", ev == WISP_DHCP_EV_BOUND ? "bound" : "renewed", a,
               mask_len(l->mask), g, (unsigned long)l->lease_s);
        break;
    case WISP_DHCP_EV_LOST:
        fw_say("fw: dhcp lost %s\n", a);
        break;
    case WISP_DHCP_EV_CONFLICT:
        fw_say("fw: dhcp conflict, declined\n");
        break;
    }
}

static void iperf_report(void *ctx, const struct wisp_iperf_result *r)
{
    char a[16];
    uint64_t ms = r->duration_us / 1000u;
    (void)ctx;
    (void)wisp_ip4_ntoa(wisp_ipaddr_ip4(&r->peer_ip), a);
    fw_say("fw: iperf %s %s %s %s: %lu bytes in %lu ms%s\n", r->role == WISP_IPERF_ROLE_REVERSE ? "reverse" : "server",
           r->proto == WISP_IP4_PROTO_TCP ? "tcp" : "udp", r->role == WISP_IPERF_ROLE_REVERSE ? "to" : "from", a,
           (unsigned long)r->bytes, (unsigned long)ms, r->ok ? "" : " (ended)");
}

void fw_iperf_cfg(struct wisp_iperf_server_cfg *c, wisp_iperf_clock_fn clock)
{
    memset(c, 0, sizeof *c);
    c->tcp = true;
    c->udp = true;
    c->reverse = true;
    c->clock = clock;
    c->report = iperf_report;
}

void fw_print_mac(struct lan9118 *eth)
{
    fw_say("fw: lan9118 mac %02x:%02x:%02x:%02x:%02x:%02x (%s), link %s\n", eth->mac[0], eth->mac[1], eth->mac[2],
           eth->mac[3], eth->mac[4], eth->mac[5], eth->mac_from_eeprom ? "eeprom" : "fallback",
           lan9118_link_up(eth) ? "up" : "down");
}

void fw_print_pools(struct wisp_stack *s)
{
    unsigned i;
    struct wisp_pool_stats ps;
    for (i = 0; i < WISP_POOL_COUNT; i++) {
        if (wisp_stack_pool_stats(s, i, &ps)) {
            fw_say("pool %-10s used %3u high %3u of %3u failed %lu\n", ps.name, (unsigned)ps.used, (unsigned)ps.high,
                   (unsigned)ps.count, (unsigned long)ps.failed);
        }
    }
}

void fw_print_driver(const struct lan9118 *eth)
{
    const struct lan9118_stats *st = &eth->st;
    fw_say("lan9118: irqs %lu rx_frames %lu rx_bytes %lu rx_nomem %lu rx_errors %lu rx_fifo_high %lu "
           "tx_frames %lu tx_bytes %lu tx_busy %lu tx_errors %lu\n",
           (unsigned long)st->irqs, (unsigned long)st->rx_frames, (unsigned long)st->rx_bytes,
           (unsigned long)st->rx_nomem, (unsigned long)st->rx_errors, (unsigned long)st->rx_fifo_high,
           (unsigned long)st->tx_frames, (unsigned long)st->tx_bytes, (unsigned long)st->tx_busy,
           (unsigned long)st->tx_errors);
}

void fw_print_tcp_service(unsigned i, const struct wisp_tcp_service_stats *t)
{
    static const char *const names[WISP_TCP_SVC_COUNT] = { "echo", "discard", "chargen" };
    fw_say("svc tcp %s connections %lu closed %lu resets %lu refused %lu rx %lu tx %lu\n", names[i],
           (unsigned long)t->connections, (unsigned long)t->closed, (unsigned long)t->resets,
           (unsigned long)t->refused, (unsigned long)t->bytes_rx, (unsigned long)t->bytes_tx);
}

void fw_print_raw_apps(uint32_t http_requests, const struct wisp_iperf_server_stats *ist)
{
    fw_say("httpd requests %lu\n", (unsigned long)http_requests);
    fw_say("iperf tcp_tests %lu udp_tests %lu reverse_started %lu\n", (unsigned long)ist->tcp_tests,
           (unsigned long)ist->udp_tests, (unsigned long)ist->reverse_started);
}
