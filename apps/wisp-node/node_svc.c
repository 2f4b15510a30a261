/**
 * @file node_svc.c
 * wisp-node: DHCP (--dhcp), the HTTP server (--http) and the ping client (--ping)
 * on the raw API, and their options.
 */
#include "node.h"

/* ------------------------------------------------------------- DHCP
 * --dhcp: the address comes from a DHCP lease (src/core/dhcp.c, raw API).
 * Each lease event prints one line ("wisp-node: dhcp bound A/N gw G dns D
 * lease S s", "dhcp renewed", "dhcp lost", "dhcp conflict"); at exit the
 * lease is released (DHCPRELEASE). The start delay is cut to at most 1 s
 * (RFC 2131 §4.4.1 suggests up to 10 s; one node on a TAP needs none). */

static unsigned node_prefix_len(wisp_ip4_t mask)
{
    uint32_t m = wisp_ntohl(mask);
    unsigned len = 0;
    while (m & 0x80000000u) {
        len++;
        m <<= 1;
    }
    return len;
}


static void node_dhcp_cb(void *arg, struct wisp_dhcp *d, enum wisp_dhcp_event ev)
{
    struct node *n = arg;
    const struct wisp_dhcp_lease *l = wisp_dhcp_last_lease(d);
    char a[16], g[16], s[16];
    unsigned i;

    switch (ev) {
    case WISP_DHCP_EV_BOUND:
    case WISP_DHCP_EV_RENEWED:
        printf("wisp-node: dhcp %s %s/%u gw %s dns", ev == WISP_DHCP_EV_BOUND ? "bound" : "renewed",
               wisp_ip4_ntoa(l->addr, a), node_prefix_len(l->mask), wisp_ip4_ntoa(l->router, g));
        for (i = 0; i < l->dns_count; i++) {
            printf("%s%s", i ? "," : " ", wisp_ip4_ntoa(l->dns[i], a));
        }
        if (l->dns_count == 0) {
            printf(" -");
        }
        printf(" lease %" PRIu32 " s t1 %" PRIu32 " s t2 %" PRIu32 " s server %s mtu %u\n", l->lease_s, l->t1_s,
               l->t2_s, wisp_ip4_ntoa(l->server, s), (unsigned)wisp_netif_mtu(wisp_dhcp_netif(d)));
        /* The lease's DNS servers feed the resolver unless --dns chose one;
         * a --resolve waiting for the lease starts now. */
        if (n->o.dns_server == 0) {
            for (i = 0; i < l->dns_count && i < WISP_DNS_MAX_SERVERS; i++) {
                (void)wisp_dns_set_server(&n->stack, i, l->dns[i]);
            }
        }
        if (ev == WISP_DHCP_EV_BOUND && n->o.resolve != NULL && !n->resolve_started) {
            n->resolve_started = true;
            if (node_resolve_start(n) != 0) {
                n->resolve_done = true;
            }
        }
        break;
    case WISP_DHCP_EV_LOST:
        printf("wisp-node: dhcp lost %s\n", wisp_ip4_ntoa(l->addr, a));
        break;
    case WISP_DHCP_EV_CONFLICT:
        printf("wisp-node: dhcp conflict on %s, declined\n", wisp_ip4_ntoa(wisp_dhcp_pending_addr(d), a));
        break;
    }
}

int node_dhcp_start(struct node *n)
{
    struct wisp_dhcp_cfg cfg;
    wisp_err_t e;

    wisp_dhcp_cfg_defaults(&cfg);
    cfg.init_delay_ms = 1000;
    cfg.hostname = "wisp-node";
    e = wisp_dhcp_start(&n->dhcp, &n->nif, &cfg, node_dhcp_cb, n);
    if (e != WISP_OK) {
        fprintf(stderr, "wisp-node: dhcp start failed: %s\n", wisp_err_str(e));
        return 1;
    }
    return 0;
}

void node_dhcp_stop(struct node *n)
{
    if (n->o.dhcp && wisp_dhcp_state(&n->dhcp) != WISP_DHCP_STOPPED) {
        bool held = wisp_dhcp_lease(&n->dhcp) != NULL;
        wisp_dhcp_stop(&n->dhcp, true);
        if (held) {
            printf("wisp-node: dhcp released\n");
        }
    }
}

void node_iperf_dump(struct node *n)
{
    const struct wisp_iperf_server_stats *st = &n->iperf_srv.st;
    if (!n->o.iperf) {
        return;
    }
    printf("iperf server: tcp tests %" PRIu32 " refused %" PRIu32 "; udp tests %" PRIu32 " refused %" PRIu32
           " runts %" PRIu32 " reports %" PRIu32 " report_err %" PRIu32 "; reverse %" PRIu32 " failed %" PRIu32
           "; tcp timeouts %" PRIu32 " reclaimed %" PRIu32 "\n",
           st->tcp_tests, st->tcp_refused, st->udp_tests, st->udp_refused, st->udp_runts, st->reports_sent,
           st->report_err, st->reverse_started, st->reverse_failed, st->tcp_timeouts, st->tcp_reclaimed);
}

/* --------------------------------------------------------- http, ping
 * --http: the HTTP/1.1 server of apps/lib/httpd.c on port 80 (an access
 * line per response unless --quiet, statistics at exit). --ping ADDR: the
 * ping client of apps/lib/ping.c; ping(8)-like lines, the node exits when
 * the run is over (0 = at least one reply, like ping(8)). */

#define NODE_HTTP_PORT 80u

static const char *node_http_method(uint8_t m)
{
    return m == WISP_HTTP_M_GET ? "GET" : (m == WISP_HTTP_M_HEAD ? "HEAD" : "-");
}

static void node_http_log(void *ctx, const struct wisp_httpd_log *e)
{
    struct node *n = ctx;
    char a[16];
    if (n->o.quiet) {
        return;
    }
    printf("wisp-node: http %s:%u \"%s %s\" %u %" PRIu32 "%s\n", wisp_ip4_ntoa(wisp_ipaddr_ip4(&e->remote_ip), a),
           (unsigned)e->remote_port, node_http_method(e->method), e->target, (unsigned)e->status, e->body_bytes,
           e->keep ? " keep-alive" : " close");
}

int node_http_start(struct node *n)
{
    wisp_err_t err;
    if (!n->o.http) {
        return 0;
    }
    n->httpd = calloc(1, sizeof *n->httpd);
    if (n->httpd == NULL) {
        fprintf(stderr, "wisp-node: out of memory\n");
        return -1;
    }
    err = wisp_httpd_start_opts(n->httpd, &n->stack, NODE_HTTP_PORT, &n->o.http_opt);
    if (err != WISP_OK) {
        fprintf(stderr, "wisp-node: cannot start the HTTP server: %s\n", wisp_err_str(err));
        free(n->httpd);
        n->httpd = NULL;
        return -1;
    }
    wisp_httpd_set_log(n->httpd, node_http_log, n);
    if (!n->o.quiet) {
        printf("wisp-node: http server on tcp/%u (raw API, %u connections, %u per source, idle %" PRIu32
               " ms, request deadline %" PRIu32 " ms, reclaim after %" PRIu32 " ms)\n",
               NODE_HTTP_PORT, (unsigned)n->httpd->opt.max_conns, (unsigned)n->httpd->opt.per_source,
               n->httpd->opt.idle_ms, n->httpd->opt.head_ms, n->httpd->opt.reclaim_ms);
    }
    return 0;
}

void node_http_dump(struct node *n)
{
    const struct wisp_httpd_stats *st;
    if (n->httpd == NULL) {
        return;
    }
    st = wisp_httpd_stats(n->httpd);
    printf("http server: connections %" PRIu32 " active %" PRIu32 " high %" PRIu32 " refused %" PRIu32
           " closed %" PRIu32 " resets %" PRIu32 " aborted %" PRIu32 " timeouts %" PRIu32 " requests %" PRIu32
           " reused %" PRIu32 " 2xx %" PRIu32 " 3xx %" PRIu32 " 4xx %" PRIu32 " 5xx %" PRIu32 " write_mem %" PRIu32
           " rx %" PRIu64 " tx %" PRIu64 " head_timeouts %" PRIu32 " reclaimed %" PRIu32 " capped %" PRIu32 "\n",
           st->connections, st->active, st->active_high, st->refused, st->closed, st->resets, st->aborted,
           st->timeouts, st->requests, st->reused, st->responses[2], st->responses[3], st->responses[4],
           st->responses[5], st->write_mem, st->bytes_rx, st->bytes_tx, st->head_timeouts, st->reclaimed,
           st->capped);
}

static uint64_t node_ping_clock(void *ctx)
{
    WISP_UNUSED(ctx);
    return (uint64_t)(mono_s() * 1e6);
}

static void node_ping_reply(void *arg, struct wisp_ping *p, const struct wisp_ping_reply *r)
{
    char a[16];
    WISP_UNUSED(arg);
    WISP_UNUSED(p);
    printf("%u bytes from %s: icmp_seq=%u ttl=%u time=%.3f ms%s%s%s\n", (unsigned)r->bytes,
           wisp_ip4_ntoa(r->from, a), (unsigned)r->seq, (unsigned)r->ttl, r->rtt_us / 1000.0,
           r->dup ? " (DUP!)" : "", r->late ? " (late)" : "", r->bad ? " (BAD DATA)" : "");
}

int node_ping_start(struct node *n)
{
    struct wisp_ping_cfg cfg;
    char a[16];
    wisp_err_t err;

    memset(&cfg, 0, sizeof cfg);
    cfg.dst = n->o.ping_ip;
    cfg.count = n->o.ping_count;
    cfg.interval_ms = n->o.ping_interval_ms;
    cfg.size = n->o.ping_size;
    cfg.on_reply = node_ping_reply;
    cfg.now_us = node_ping_clock;
    printf("PING %s (%s) %u(%u) bytes of data.\n", wisp_ip4_ntoa(cfg.dst, a), a, (unsigned)cfg.size,
           (unsigned)cfg.size + 28u);
    err = wisp_ping_start_cfg(&n->ping, &n->stack, &cfg);
    if (err != WISP_OK) {
        fprintf(stderr, "wisp-node: ping: %s\n", wisp_err_str(err));
        return -1;
    }
    n->ping_up = true;
    return 0;
}

/* The ping(8)-like summary; 0 when at least one reply came back. */
int node_ping_report(struct node *n)
{
    const struct wisp_ping_stats *st = wisp_ping_stats(&n->ping);
    uint32_t loss = wisp_ping_loss_permille(&n->ping);
    char a[16];

    printf("\n--- %s ping statistics ---\n", wisp_ip4_ntoa(n->o.ping_ip, a));
    printf("%" PRIu32 " packets transmitted, %" PRIu32 " received", st->sent, st->received);
    if (st->duplicates != 0) {
        printf(", +%" PRIu32 " duplicates", st->duplicates);
    }
    if (st->errors != 0) {
        printf(", +%" PRIu32 " errors", st->errors);
    }
    if (loss % 10u == 0u) {
        printf(", %" PRIu32 "%% packet loss", loss / 10u);
    } else {
        printf(", %" PRIu32 ".%" PRIu32 "%% packet loss", loss / 10u, loss % 10u);
    }
    printf(", time %" PRIu32 "ms\n", st->elapsed_ms);
    if (st->received > 0) {
        printf("rtt min/avg/max/mdev = %.3f/%.3f/%.3f/%.3f ms\n", st->min_us / 1000.0, st->avg_us / 1000.0,
               st->max_us / 1000.0, st->mdev_us / 1000.0);
    }
    return st->received > 0 ? 0 : 1;
}

void node_http_ping_stop(struct node *n)
{
    if (n->ping_up) {
        wisp_ping_stop(&n->ping);
        n->ping_up = false;
    }
    if (n->httpd != NULL) {
        wisp_httpd_stop(n->httpd);
        free(n->httpd);
        n->httpd = NULL;
    }
}


/* Options 1101..1105 (--http, --ping, --count, --interval, --size). */
int node_http_ping_opt(int c, const char *arg, struct node_opts *o)
{
    unsigned long long v;
    switch (c) {
    case 1101:
        o->http = true;
        return 0;
    case 1102:
        if (!wisp_ip4_aton(arg, &o->ping_ip) || o->ping_ip == 0) {
            return usage_error("bad --ping '%s' (want A.B.C.D)", arg);
        }
        o->ping = true;
        return 0;
    case 1103:
        if (!parse_uint(arg, 1000000, &v) || v < 1) {
            return usage_error("bad --count '%s' (1..1000000)", arg);
        }
        o->ping_count = (uint32_t)v;
        o->have_ping_count = true;
        return 0;
    case 1104:
        if (!parse_uint(arg, 3600000, &v) || v < 1) {
            return usage_error("bad --interval '%s' (1..3600000 ms)", arg);
        }
        o->ping_interval_ms = (uint32_t)v;
        o->have_ping_interval = true;
        return 0;
    default:
        if (!parse_uint(arg, 65507, &v)) {
            return usage_error("bad --size '%s' (0..65507)", arg);
        }
        o->ping_size = (uint16_t)v;
        o->have_ping_size = true;
        return 0;
    }
}

/* Options 1301..1308: admission and timeouts of the services and the
 * HTTP server (0 = the library's default). */
int node_limit_opt(int c, const char *arg, struct node_opts *o)
{
    static const char *const names[] = { "--svc-idle-ms", "--svc-per-source", "--svc-reclaim-ms",
                                         "--http-max-conns", "--http-per-source", "--http-idle-ms",
                                         "--http-head-ms", "--http-reclaim-ms" };
    bool count = (c == 1302 || c == 1304 || c == 1305);
    unsigned long long v;
    if (!parse_uint(arg, count ? 65535u : 2147483647u, &v)) {
        fprintf(stderr, "wisp-node: bad %s '%s' (%s)\n", names[c - 1301], arg,
                count ? "0..65535, 0 = default" : "ms, 0..2147483647, 0 = default");
        return usage_error("%s", "see above");
    }
    switch (c) {
    case 1301: o->svc_opt.idle_ms = (uint32_t)v; break;
    case 1302: o->svc_opt.per_source = (uint16_t)v; break;
    case 1303: o->svc_opt.reclaim_ms = (uint32_t)v; break;
    case 1304: o->http_opt.max_conns = (uint16_t)v; break;
    case 1305: o->http_opt.per_source = (uint16_t)v; break;
    case 1306: o->http_opt.idle_ms = (uint32_t)v; break;
    case 1307: o->http_opt.head_ms = (uint32_t)v; break;
    default: o->http_opt.reclaim_ms = (uint32_t)v; break;
    }
    return 0;
}

/* Consistency of --http / --ping and defaults; 0 = fine. */
int node_http_ping_check(struct node_opts *o)
{
    if ((o->have_ping_count || o->have_ping_interval || o->have_ping_size) && !o->ping) {
        return usage_error("%s", "--count, --interval and --size need --ping ADDR");
    }
    if ((o->http || o->ping) && strcmp(o->api, "raw") != 0) {
        return usage_error("%s", "--http and --ping run on --api raw only");
    }
    if (o->ping && (o->client || o->iperf_client)) {
        return usage_error("%s", "--ping excludes --connect and --iperf-client");
    }
    if (o->ping_count == 0) {
        o->ping_count = 4;
    }
    if (o->ping_interval_ms == 0) {
        o->ping_interval_ms = 1000;
    }
    if (!o->have_ping_size) {
        o->ping_size = 56;   /* ping(8)'s default */
    }
    return 0;
}

