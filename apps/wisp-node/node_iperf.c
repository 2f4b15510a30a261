/**
 * @file node_iperf.c
 * wisp-node: the iperf 2 server (--iperf) and client (--iperf-client) on the
 * raw API (apps/lib/iperf.h), their reports and options.
 */
#include "node.h"

/* -------------------------------------------------------------- iperf
 * --iperf: the iperf 2 server (apps/lib/iperf.c) on TCP and UDP port 5001
 * next to the services; --iperf-client: one iperf 2 test against a server
 * (the node exits when it is over). Raw API, in the main loop. Report
 * lines are iperf-like: interval, bytes, Mbits/sec (10^6 bit/s); UDP adds
 * jitter, lost/total and out-of-order. */

static uint64_t node_iperf_clock(void *ctx)
{
    struct timespec ts;
    (void)ctx;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u;
}

static double node_mbps(uint64_t bytes, uint64_t us)
{
    return us > 0 ? (double)bytes * 8.0 / (double)us : 0.0;
}

static void node_iperf_print_udp_report(const char *what, const struct wisp_iperf_udp_report *r)
{
    printf("wisp-node: iperf %s: 0.000-%.3f sec, %" PRIu64 " bytes, %.2f Mbits/sec, jitter %.3f ms, "
           "lost %" PRIu64 "/%" PRIu64 " (%.2g%%), out-of-order %" PRIu64 "\n",
           what, (double)r->duration_us / 1e6, r->bytes, node_mbps(r->bytes, r->duration_us),
           (double)r->jitter_us / 1e3, r->lost, r->datagrams,
           r->datagrams > 0 ? 100.0 * (double)r->lost / (double)r->datagrams : 0.0, r->out_of_order);
}

static void node_iperf_report(void *ctx, const struct wisp_iperf_result *r)
{
    struct node *n = ctx;
    char a[16];
    const char *role = r->role == WISP_IPERF_ROLE_REVERSE ? "reverse" : "server";

    (void)n;
    printf("wisp-node: iperf %s %s %s %s:%u: 0.000-%.3f sec, %" PRIu64 " bytes, %.2f Mbits/sec%s%s",
           role, r->proto == WISP_IP4_PROTO_UDP ? "udp" : "tcp", r->role == WISP_IPERF_ROLE_REVERSE ? "to" : "from",
           wisp_ip4_ntoa(wisp_ipaddr_ip4(&r->peer_ip), a), (unsigned)r->peer_port, (double)r->duration_us / 1e6, r->bytes,
           node_mbps(r->bytes, r->duration_us), r->ok ? "" : ", ended: ", r->ok ? "" : wisp_err_str(r->err));
    if (r->proto == WISP_IP4_PROTO_UDP) {
        printf(", jitter %.3f ms, lost %" PRIu64 "/%" PRIu64 ", out-of-order %" PRIu64 ", received %" PRIu64 "\n",
               (double)r->report.jitter_us / 1e3, r->report.lost, r->report.datagrams, r->report.out_of_order,
               r->received);
    } else {
        printf(", header flags 0x%08" PRIx32 "%s\n", r->hdr_flags, r->reverse ? ", reverse stream started" : "");
    }
}

static void node_iperf_done(void *ctx, const struct wisp_iperf_result *r)
{
    struct node *n = ctx;
    n->iperf_res = *r;
    n->iperf_cl_done = true;
}

/* The server (after the services, before the pool baseline). 0 or -1. */
int node_iperf_start(struct node *n)
{
    struct wisp_iperf_server_cfg cfg;
    wisp_err_t err;

    if (!n->o.iperf) {
        return 0;
    }
    memset(&cfg, 0, sizeof cfg);
    cfg.tcp = cfg.udp = true;
    cfg.reverse = true;
    cfg.clock = node_iperf_clock;
    cfg.report = node_iperf_report;
    cfg.report_ctx = n;
    err = wisp_iperf_server_start(&n->stack, &n->iperf_srv, &cfg);
    if (err != WISP_OK) {
        fprintf(stderr, "wisp-node: cannot start the iperf server: %s\n", wisp_err_str(err));
        return -1;
    }
    n->iperf_up = true;
    if (!n->o.quiet) {
        printf("wisp-node: iperf server on tcp/%u and udp/%u (raw API)\n", WISP_IPERF_PORT, WISP_IPERF_PORT);
    }
    return 0;
}

/* Resolve the next hop to the iperf server before the test (at most 3 s,
 * a request every 250 ms), as a host's neighbour cache usually has it: a
 * UDP test starts sending at once, and datagrams beyond the ARP queue
 * would be lost while the first request is answered (or retried after
 * WISP_ARP_RETRY_MS when the tap was not up yet). Signals stay blocked. */
static void node_iperf_resolve(struct node *n)
{
    wisp_ip4_t hop = ((n->o.iperf_ip ^ n->o.addr) & n->o.mask) == 0 ? n->o.iperf_ip : n->o.gw;
    uint8_t mac[6];
    double until = mono_s() + 3.0, next_req = 0;

    while (hop != 0 && !wisp_arp_lookup(&n->stack, wisp_netif_index(&n->nif), hop, mac) && mono_s() < until) {
        struct pollfd pfd;
        struct timespec ts = { 0, 10000000L };
        if (mono_s() >= next_req) {
            (void)wisp_arp_request(&n->nif, hop);
            next_req = mono_s() + 0.25;
        }
        pfd.fd = n->tap.fd;
        pfd.events = wisp_tapdev_poll_events(&n->tap);
        pfd.revents = 0;
        if (ppoll(&pfd, 1, &ts, NULL) > 0 && !(pfd.revents & POLLNVAL)) {
            (void)wisp_tapdev_handle(&n->tap, pfd.revents);
        }
        wisp_stack_poll(&n->stack);
    }
}

int node_iperf_client_start(struct node *n)
{
    struct wisp_iperf_client_cfg cfg;
    wisp_err_t err;
    char a[16];

    node_iperf_resolve(n);
    memset(&cfg, 0, sizeof cfg);
    cfg.server = wisp_ipaddr4(n->o.iperf_ip);
    cfg.port = n->o.iperf_port;
    cfg.udp = n->o.iperf_udp;
    cfg.rate_bps = n->o.iperf_rate;
    cfg.time_ms = n->o.iperf_time_ms;
    cfg.bytes = n->o.iperf_bytes;
    cfg.len = n->o.iperf_len;
    cfg.clock = node_iperf_clock;
    cfg.done = node_iperf_done;
    cfg.done_ctx = n;
    err = wisp_iperf_client_start(&n->stack, &n->iperf_cl, &cfg);
    if (err != WISP_OK) {
        fprintf(stderr, "wisp-node: iperf client: %s\n", wisp_err_str(err));
        return -1;
    }
    printf("wisp-node: iperf client %s to %s:%u, %s%s\n", cfg.udp ? "udp" : "tcp", wisp_ip4_ntoa(n->o.iperf_ip, a),
           (unsigned)n->iperf_cl.cfg.port, n->iperf_cl.cfg.bytes ? "bytes-limited" : "time-limited",
           cfg.udp ? ", paced" : "");
    return 0;
}

/* The client's result lines; 0 = the test completed (UDP: with the
 * server's report). */
int node_iperf_client_report(struct node *n)
{
    const struct wisp_iperf_result *r = &n->iperf_res;
    char a[16];

    if (!n->iperf_cl_done) {
        printf("wisp-node: iperf client FAILED: not finished\n");
        return 1;
    }
    printf("wisp-node: iperf client %s to %s:%u: 0.000-%.3f sec, %" PRIu64 " bytes, %.2f Mbits/sec",
           r->proto == WISP_IP4_PROTO_UDP ? "udp" : "tcp", wisp_ip4_ntoa(wisp_ipaddr_ip4(&r->peer_ip), a), (unsigned)r->peer_port,
           (double)r->duration_us / 1e6, r->bytes, node_mbps(r->bytes, r->duration_us));
    if (r->proto == WISP_IP4_PROTO_UDP) {
        printf(", sent %" PRIu64 " datagrams, %u FIN, %" PRIu32 " refused sends\n", r->datagrams,
               (unsigned)r->fin_tries, r->send_refused);
        if (r->have_report) {
            node_iperf_print_udp_report("server report", &r->report);
        } else {
            printf("wisp-node: iperf client: no server report after %u FINs\n", (unsigned)r->fin_tries);
        }
    } else {
        printf("\n");
    }
    if (!r->ok || (r->proto == WISP_IP4_PROTO_UDP && !r->have_report)) {
        printf("wisp-node: iperf client FAILED%s%s\n", r->err != WISP_OK ? ": " : "",
               r->err != WISP_OK ? wisp_err_str(r->err) : "");
        return 1;
    }
    printf("wisp-node: iperf client done\n");
    return 0;
}

/* Client mode: the test is over and its PCBs left the pools (or the
 * linger time is up). */
bool node_iperf_finished(struct node *n, unsigned baseline, double *linger_until)
{
    double now;

    if (!n->iperf_cl_done) {
        return false;
    }
    now = mono_s();
    if (*linger_until == 0) {
        *linger_until = now + NODE_CLIENT_LINGER_MS / 1e3;
    }
    return wisp_stack_pools_in_use(&n->stack) <= baseline || now >= *linger_until;
}

void node_iperf_stop(struct node *n)
{
    if (n->o.iperf_client) {
        wisp_iperf_client_stop(&n->iperf_cl);
    }
    if (n->iperf_up) {
        wisp_iperf_server_stop(&n->iperf_srv);
        n->iperf_up = false;
    }
}

/* --iperf-client A.B.C.D[:PORT] */
bool node_iperf_parse_target(const char *arg, struct node_opts *o)
{
    char buf[32];
    char *colon, *end;
    unsigned long port = WISP_IPERF_PORT;

    if (strlen(arg) >= sizeof buf) {
        return false;
    }
    strcpy(buf, arg);
    colon = strchr(buf, ':');
    if (colon != NULL) {
        *colon = '\0';
        errno = 0;
        port = strtoul(colon + 1, &end, 10);
        if (errno != 0 || *end != '\0' || colon[1] < '0' || colon[1] > '9' || port < 1 || port > 65535) {
            return false;
        }
    }
    if (!wisp_ip4_aton(buf, &o->iperf_ip) || o->iperf_ip == 0) {
        return false;
    }
    o->iperf_port = (uint16_t)port;
    return true;
}

/* A positive decimal number with an optional suffix (k/M/G = 10^3/6/9
 * when metric; unused when scale is 0), times mult; false when malformed
 * or out of range. */
bool node_iperf_parse_num(const char *arg, bool metric, double mult, double max, double *out)
{
    char *end;
    double v;

    if (arg == NULL || *arg < '0' || *arg > '9') {
        return false;
    }
    errno = 0;
    v = strtod(arg, &end);
    if (errno != 0 || end == arg) {
        return false;
    }
    if (metric && (*end == 'k' || *end == 'K')) {
        v *= 1e3;
        end++;
    } else if (metric && *end == 'M') {
        v *= 1e6;
        end++;
    } else if (metric && *end == 'G') {
        v *= 1e9;
        end++;
    }
    v *= mult;
    if (*end != '\0' || !(v >= 1.0) || v > max) {
        return false;
    }
    *out = v;
    return true;
}

