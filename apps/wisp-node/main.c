/**
 * @file main.c
 * wisp-node: one wisp stack on a Linux TAP interface, serving the standard
 * small services (UDP echo 7, discard 9; TCP echo 7, discard 9, chargen
 * 19), for interoperability tests against the Linux kernel; optionally a
 * TCP client transfer to a Linux peer (--connect).
 *
 *   wisp-node --tap NAME --addr A.B.C.D/PREFIX [--gw ADDR] [--pcap FILE]
 *             [--mtu N] [--seed N] [--api raw|netconn|socket] [--quiet]
 *             [--connect ADDR:PORT (--send BYTES | --recv) [--write-size N]
 *                                  | --connects N)]
 *
 * Client mode: --send writes BYTES of a deterministic pattern (splitmix64
 * of the 8-byte block index, little-endian) in writes of --write-size
 * bytes (default 1460), then closes; --recv takes everything until the
 * peer closes. Either prints bytes, goodput (MB = 10^6 bytes) and the
 * SHA-256 of the bytes sent / received; the node then waits until the
 * connection has left its pools (at most 3 s) and exits: 0 = transfer
 * complete and no leak. --connects N instead opens and closes N
 * connections in sequence and prints the connect times.
 *
 * --api: raw (default) runs services and client on the raw callback API
 * in the main loop. netconn and socket start a stack thread
 * (wisp_tcpip_start) and run the same services and the client as
 * application threads on that API (apps/lib/services_netconn.c,
 * services_socket.c; worker threads of a bounded pool of connection slots);
 * the main loop is then the tap's I/O thread: it reads the tap under the
 * core lock and writes the frames the stack queued in the tap's transmit
 * ring without it (deferred transmit, ports/unix/tapdev.h). At a stop
 * the threads close their connections first (FIN), then the stack thread
 * stops, and the report and pool check are those of raw.
 *
 * --dns ADDR gives the stack's DNS resolver (wisp/dns.h) its server;
 * --resolve NAME (raw API) resolves NAME, prints "wisp-node: resolve NAME
 * -> A.B.C.D (ttl N)" or "wisp-node: resolve NAME: NXDOMAIN" (or why it
 * failed) and exits: 0 = resolved, 1 = not.
 *
 * The event loop waits in ppoll() on the tap fd with the time until the
 * stack's next timer (capped) and then runs the due timers. SIGINT/SIGTERM
 * only set a flag (they are blocked outside ppoll, so none is missed);
 * the loop then ends, prints every counter, the interfaces and the pools,
 * tears the stack down and checks that every pool is back at zero use.
 *
 * --udp-probe ADDR:PORT (raw API) sends a datagram from a connected UDP
 * PCB every 200 ms (at most 10) until an ICMP error about them comes back
 * (RFC 1122 §4.1.3.3), prints "wisp-node: udp-probe: ERR_REFUSED after N
 * datagrams (ICMP type 3 code 3 from A.B.C.D)" and exits: 0 = refused
 * (port unreachable), 1 = another error or none.
 *
 * Exit status: 0 = clean, 1 = runtime error or a pool leak, 2 = usage.
 */
#include "node.h"

/* --------------------------------------------------------------- pcap */

static int pcap_file_write(void *ctx, const void *buf, size_t len)
{
    FILE *f = ctx;
    return fwrite(buf, 1, len, f) == len ? 0 : -1;
}

/* Flush whole records after each loop turn: a reader (tshark) sees a valid
 * file while the node runs. */
static void pcap_flush(struct node *n)
{
    uint32_t recs;

    if (n->pcap_file == NULL) {
        return;
    }
    recs = n->pcap.rx_records + n->pcap.tx_records;
    if (recs != n->pcap_flushed) {
        n->pcap_flushed = recs;
        if (fflush(n->pcap_file) != 0) {
            n->pcap.failed = 1;
        }
    }
}

/* ------------------------------------------------------------ signals */

static volatile sig_atomic_t stop_signal;

static void on_signal(int sig)
{
    stop_signal = sig;
}

/* Block SIGINT/SIGTERM (they are delivered only inside ppoll) and install
 * a handler that just records them. *wait_mask is the mask for ppoll. */
static int setup_signals(sigset_t *wait_mask)
{
    struct sigaction sa;
    sigset_t block;

    sigemptyset(&block);
    sigaddset(&block, SIGINT);
    sigaddset(&block, SIGTERM);
    if (sigprocmask(SIG_BLOCK, &block, wait_mask) != 0) {
        return -1;
    }
    sigdelset(wait_mask, SIGINT);
    sigdelset(wait_mask, SIGTERM);
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    sa.sa_flags = 0;
    if (sigaction(SIGINT, &sa, NULL) != 0 || sigaction(SIGTERM, &sa, NULL) != 0) {
        return -1;
    }
    signal(SIGPIPE, SIG_IGN);
    return 0;
}

/* --------------------------------------------------------------- main */

/* --resolve NAME: the resolver's answer (core context: the main loop). */
static void node_resolved(void *arg, const char *name, wisp_err_t err, const wisp_ipaddr_t *addr, uint32_t ttl_s)
{
    struct node *n = arg;
    char a[16];

    n->resolve_done = true;
    n->resolve_ok = err == WISP_OK;
    if (err == WISP_OK) {
        printf("wisp-node: resolve %s -> %s (ttl %" PRIu32 ")\n", name, wisp_ip4_ntoa(wisp_ipaddr_ip4(addr), a), ttl_s);
    } else if (err == WISP_DNS_ERR_NOTFOUND) {
        printf("wisp-node: resolve %s: NXDOMAIN\n", name);
    } else {
        printf("wisp-node: resolve %s: %s\n", name,
               err == WISP_ERR_TIMEOUT ? "timeout" : err == WISP_ERR_CONN ? "server failure" : wisp_err_str(err));
    }
}

/* Start --resolve; 0, or 1 when it cannot start. */
int node_resolve_start(struct node *n)
{
    wisp_ipaddr_t a;
    wisp_err_t err = wisp_dns_gethostbyname(&n->stack, n->o.resolve, &a, node_resolved, n);
    if (err == WISP_OK) {
        node_resolved(n, n->o.resolve, WISP_OK, &a, 0); /* a literal or "localhost" */
    } else if (err != WISP_ERR_INPROGRESS) {
        fprintf(stderr, "wisp-node: resolve %s: %s\n", n->o.resolve,
                err == WISP_ERR_VAL ? "no DNS server (--dns ADDR)" : wisp_err_str(err));
        return 1;
    }
    return 0;
}

/* --udp-probe: an ICMP error about one of our datagrams (core context). */
static void node_probe_err(void *arg, struct wisp_udp_pcb *pcb, wisp_err_t err, const struct wisp_icmp_err *e)
{
    struct node *n = arg;
    char a[16];
    (void)pcb;
    if (n->probe_done) {
        return;
    }
    n->probe_done = true;
    n->probe_err = err;
    printf("wisp-node: udp-probe: %s after %u datagrams (ICMP type %u code %u from %s)\n", wisp_err_str(err),
           n->probe_sent, (unsigned)e->type, (unsigned)e->code, wisp_ip4_ntoa(e->reporter, a));
}

static void node_probe_tmr(struct wisp_stack *s, struct wisp_timer *t)
{
    struct node *n = (struct node *)(void *)((uint8_t *)t - offsetof(struct node, probe_tmr));
    static const char msg[] = "wisp-udp-probe\n";
    struct wisp_pbuf *p;
    if (n->probe_done) {
        return;
    }
    if (n->probe_sent >= 10u) {
        n->probe_done = true;
        n->probe_err = WISP_ERR_TIMEOUT;
        printf("wisp-node: udp-probe: no ICMP error after %u datagrams\n", n->probe_sent);
        return;
    }
    p = wisp_pbuf_alloc(s, WISP_LAYER_TRANSPORT, (uint16_t)(sizeof msg - 1u), WISP_PBUF_RAM);
    if (p != NULL) {
        memcpy(p->payload, msg, sizeof msg - 1u);
        if (wisp_udp_send(n->probe, p) == WISP_OK) {
            n->probe_sent++;
        }
        wisp_pbuf_free(p);
    }
    wisp_timer_arm(s, t, 200, node_probe_tmr);
}

static int node_probe_start(struct node *n)
{
    wisp_ipaddr_t dst = wisp_ipaddr4(n->o.probe_ip);
    wisp_err_t err;
    n->probe = wisp_udp_new(&n->stack);
    if (n->probe == NULL) {
        fprintf(stderr, "wisp-node: udp-probe: no UDP PCB\n");
        return -1;
    }
    wisp_udp_err(n->probe, node_probe_err, n);
    err = wisp_udp_connect(n->probe, &dst, n->o.probe_port);
    if (err != WISP_OK) {
        fprintf(stderr, "wisp-node: udp-probe: connect: %s\n", wisp_err_str(err));
        return -1;
    }
    wisp_timer_arm(&n->stack, &n->probe_tmr, 0, node_probe_tmr);
    return 0;
}

static void node_probe_stop(struct node *n)
{
    wisp_timer_cancel(&n->stack, &n->probe_tmr);
    if (n->probe != NULL) {
        wisp_udp_remove(n->probe);
        n->probe = NULL;
    }
}

/* Client mode: true once the transfer is over and its connection has left
 * the pools (or the linger time is up). */
static bool client_finished(struct node *n, unsigned baseline, double *linger_until)
{
    struct node_client *c = &n->client;
    double now;

    if (n->o.iperf_client) {
        return node_iperf_finished(n, baseline, linger_until);
    }
    if (n->o.ping) {
        return wisp_ping_finished(&n->ping);
    }
    if (n->o.resolve != NULL) {
        return n->resolve_done;
    }
    if (n->o.udp_probe) {
        return n->probe_done;
    }
    if (!n->o.client || !c->done) {
        return false;
    }
    now = mono_s();
    if (*linger_until == 0) {
        *linger_until = now + NODE_CLIENT_LINGER_MS / 1e3;
    }
    if (c->close_pending) {
        return now >= *linger_until;
    }
    return wisp_stack_pools_in_use(&n->stack) <= baseline || now >= *linger_until;
}

/* Write what the stack queued for the tap (deferred transmit: no lock
 * held during the writes); when the ring had refused a frame and has room
 * again, tell the stack (core lock) and write what that released. */
static void node_tx_flush(struct node *n)
{
    unsigned k;

    for (k = 0; k < 4u; k++) {
        (void)wisp_tapdev_tx_flush(&n->tap, 64u);
        if (!wisp_tapdev_tx_ready_due(&n->tap)) {
            break;
        }
        wisp_tcpip_lock(&n->tcpip);
        wisp_dev_tx_ready(&n->tap.dev);
        pcap_flush(n);
        wisp_tcpip_unlock(&n->tcpip);
    }
}

/* The I/O thread of --api netconn|socket (the main thread): write the
 * transmit ring, wait on the tap and the ring's wake fd for at most
 * wait_ms (ppoll with wait_mask; NULL = keep the signals blocked; no wait
 * while frames are queued), then take what the tap brought in batches
 * under the core lock, writing what each batch made the stack send right
 * after it (outside the lock). 0, or -1 on a fatal error. */
int node_tap_pump(struct node *n, const sigset_t *wait_mask, uint32_t wait_ms)
{
    struct pollfd pfd[2];
    struct timespec ts;
    unsigned batch;
    int r;

    node_tx_flush(n);
    if (!wisp_tapdev_tx_sleep_begin(&n->tap) && !n->tap.want_pollout) {
        wait_ms = 0;   /* frames queued: just look (after EAGAIN: wait for POLLOUT) */
    }
    ts.tv_sec = (time_t)(wait_ms / 1000u);
    ts.tv_nsec = (long)(wait_ms % 1000u) * 1000000L;
    /* want_pollout is this thread's own in deferred mode: no lock */
    pfd[0].fd = n->tap.fd;
    pfd[0].events = wisp_tapdev_poll_events(&n->tap);
    pfd[0].revents = 0;
    pfd[1].fd = wisp_tapdev_tx_wake_fd(&n->tap);
    pfd[1].events = POLLIN;
    pfd[1].revents = 0;
    r = ppoll(pfd, 2, &ts, wait_mask);
    wisp_tapdev_tx_sleep_end(&n->tap, r > 0 ? pfd[1].revents : 0);
    if (r < 0) {
        if (errno == EINTR) {
            return 0;
        }
        perror("wisp-node: ppoll");
        return -1;
    }
    if (r == 0) {
        return 0;
    }
    if ((pfd[0].revents | pfd[1].revents) & POLLNVAL) {
        fprintf(stderr, "wisp-node: tap fd became invalid\n");
        return -1;
    }
    if (pfd[0].revents & POLLOUT) {
        (void)wisp_tapdev_handle(&n->tap, POLLOUT);   /* deferred: only clears the wait */
    }
    /* Bounded batches: the application threads get the lock in between. */
    for (batch = 0; batch < WISP_TAPDEV_RX_BATCH / 16u && (pfd[0].revents & (POLLIN | POLLERR | POLLHUP)); batch++) {
        unsigned got;
        wisp_tcpip_lock(&n->tcpip);
        got = wisp_tapdev_rx(&n->tap, 16u);
        pcap_flush(n);
        wisp_tcpip_unlock(&n->tcpip);
        node_tx_flush(n);
        if (got < 16u) {
            break;
        }
    }
    return 0;
}

/* Main loop of --api netconn|socket: serve the tap; in client mode stop
 * once the client thread is done and its connection left the pools. */
static int run_loop_threaded(struct node *n, const sigset_t *wait_mask, unsigned baseline)
{
    double linger_until = 0;

    while (!stop_signal) {
        if (n->o.client && tclient_finished(n)) {
            double now = mono_s();
            tclient_join(n);
            if (linger_until == 0) {
                linger_until = now + NODE_CLIENT_LINGER_MS / 1e3;
            }
            if (node_pools_in_use(n) <= baseline || now >= linger_until) {
                break;
            }
        }
        if (node_tap_pump(n, wait_mask, n->o.client ? 5u : 20u) != 0) {
            return 1;
        }
    }
    return 0;
}

static int run_loop(struct node *n, const sigset_t *wait_mask, unsigned baseline)
{
    double linger_until = 0;

    if (n->threaded) {
        return run_loop_threaded(n, wait_mask, baseline);
    }
    while (!stop_signal && !client_finished(n, baseline, &linger_until)) {
        struct pollfd pfd;
        struct timespec ts;
        uint32_t wait_ms = wisp_stack_next_timeout(&n->stack);
        int r;

        if (wait_ms > NODE_MAX_WAIT_MS) {
            wait_ms = NODE_MAX_WAIT_MS;
        }
        if (((n->o.client && n->client.done) || n->iperf_cl_done) && wait_ms > 10u) {
            wait_ms = 10u;   /* lingering: check the pools often */
        }
        ts.tv_sec = (time_t)(wait_ms / 1000u);
        ts.tv_nsec = (long)(wait_ms % 1000u) * 1000000L;
        pfd.fd = n->tap.fd;
        pfd.events = wisp_tapdev_poll_events(&n->tap);
        pfd.revents = 0;
        r = ppoll(&pfd, 1, &ts, wait_mask);
        if (r < 0) {
            if (errno == EINTR) {
                continue;
            }
            perror("wisp-node: ppoll");
            return 1;
        }
        if (r > 0) {
            if (pfd.revents & POLLNVAL) {
                fprintf(stderr, "wisp-node: tap fd became invalid\n");
                return 1;
            }
            (void)wisp_tapdev_handle(&n->tap, pfd.revents);
        }
        wisp_stack_poll(&n->stack);
        client_tick(n);
        pcap_flush(n);
    }
    return 0;
}

static void print_report(struct node *n, const struct node_api *api)
{
    const struct wisp_tapdev *t = &n->tap;

    if ((n->o.client || n->o.iperf_client) && stop_signal == 0) {
        printf("wisp-node: stopping (client transfer over)\n");
    } else {
        printf("wisp-node: stopping (signal %d)\n", (int)stop_signal);
    }
    wisp_stack_dump(&n->stack, wisp_unix_print, stdout, !n->o.quiet);
    printf("tap %s: rx %" PRIu32 " frames %" PRIu32 " bytes, %" PRIu32 " nomem, %" PRIu32 " errors; "
           "tx %" PRIu32 " frames %" PRIu32 " bytes, %" PRIu32 " wouldblock, %" PRIu32 " errors\n",
           t->name, t->rx_frames, t->rx_bytes, t->rx_nomem, t->rx_errors, t->tx_frames, t->tx_bytes,
           t->tx_wouldblock, t->tx_errors);
    if (n->threaded) {
        printf("tap %s tx ring (deferred transmit): %" PRIu32 " frames refused (ring full), high %" PRIu32
               " bytes, %" PRIu32 " wake-ups of the I/O thread, %" PRIu32 " short frames written by their sender\n",
               t->name, t->tx_ring_full, t->tx_ring_high, t->tx_ring_kicks, t->tx_ring_direct);
    }
    if (n->pcap_file != NULL) {
        printf("pcap %s: %" PRIu32 " rx records, %" PRIu32 " tx records, %" PRIu32 " write errors%s\n", n->o.pcap,
               n->pcap.rx_records, n->pcap.tx_records, n->pcap.write_errors,
               n->pcap.failed ? " (capture stopped)" : "");
    }
    api->dump(n);
    node_iperf_dump(n);
    node_http_dump(n);
}

/* Tear down and check the pools; returns 0 (clean) or 1 (leak). */
static int teardown(struct node *n, const struct node_api *api, bool nif_added)
{
    unsigned i, in_use;

    node_dhcp_stop(n);
    client_stop(n);
    node_iperf_stop(n);
    node_http_ping_stop(n);
    api->stop(n);
    if (nif_added) {
        wisp_netif_remove(&n->nif);
    }
    wisp_stack_deinit(&n->stack);
    wisp_tapdev_close(&n->tap);
    in_use = wisp_stack_pools_in_use(&n->stack);
    if (in_use == 0) {
        printf("pools: all back at baseline\n");
    } else {
        printf("pools: LEAK, %u elements still in use:", in_use);
        for (i = 0; i < WISP_POOL_COUNT; i++) {
            if (wisp_stack_pool_used(&n->stack, i) != 0) {
                printf(" %s=%u", wisp_stack_pool_name(&n->stack, i), (unsigned)wisp_stack_pool_used(&n->stack, i));
            }
        }
        printf("\n");
    }
    fflush(stdout);
    return in_use == 0 ? 0 : 1;
}

int main(int argc, char **argv)
{
    struct node *n;
    const struct node_api *api;
    struct wisp_config cfg;
    struct wisp_dev *top;
    sigset_t wait_mask;
    char err[256];
    uint8_t mac[6];
    wisp_err_t e;
    int rc;

    setvbuf(stdout, NULL, _IOLBF, 0);
    n = calloc(1, sizeof *n);
    if (n == NULL) {
        fprintf(stderr, "wisp-node: out of memory\n");
        return 1;
    }
    rc = parse_args(argc, argv, &n->o);
    if (rc >= 0) {
        free(n);
        return rc;
    }
    api = find_api(n->o.api);
    if (setup_signals(&wait_mask) != 0) {
        perror("wisp-node: signals");
        free(n);
        return 1;
    }

    memset(&cfg, 0, sizeof cfg);
    cfg.now_ms = wisp_unix_now_ms;
    if (n->o.have_seed) {
        cfg.seed = n->o.seed; /* reproducible run */
    } else {
        cfg.rand = wisp_unix_random; /* the host's entropy: getrandom() */
    }
    e = wisp_stack_init(&n->stack, &cfg);
    if (e != WISP_OK) {
        fprintf(stderr, "wisp-node: stack init failed: %s\n", wisp_err_str(e));
        free(n);
        return 1;
    }
    if (wisp_tapdev_open(&n->tap, &n->stack, n->o.tap, err, sizeof err) != 0) {
        fprintf(stderr, "wisp-node: %s\n", err);
        wisp_stack_deinit(&n->stack);
        free(n);
        return 1;
    }
    top = &n->tap.dev;
    if (n->o.pcap != NULL) {
        n->pcap_file = fopen(n->o.pcap, "wb");
        if (n->pcap_file == NULL) {
            fprintf(stderr, "wisp-node: cannot open %s: %s\n", n->o.pcap, strerror(errno));
            (void)teardown(n, api, false);
            free(n);
            return 1;
        }
        if (wisp_pcapdev_init(&n->pcap, &n->stack, top, pcap_file_write, n->pcap_file, wisp_unix_time_us, NULL) !=
            WISP_OK) {
            fprintf(stderr, "wisp-node: cannot write %s\n", n->o.pcap);
            fclose(n->pcap_file);
            (void)teardown(n, api, false);
            free(n);
            return 1;
        }
        fflush(n->pcap_file);
        top = &n->pcap.dev;
    }

    wisp_tapdev_mac_for(n->o.addr, mac);
    /* The netif is named like the tap when that fits (netif names: 7 chars). */
    e = wisp_netif_add_eth(&n->stack, &n->nif, strlen(n->tap.name) < WISP_NETIF_NAME_MAX ? n->tap.name : "tap0", top,
                           mac, (uint16_t)n->o.mtu);
    if (e != WISP_OK) {
        fprintf(stderr, "wisp-node: cannot add the interface: %s\n", wisp_err_str(e));
        rc = 1;
    } else {
        char a[16], g[16];
        if (!n->o.dhcp) {
            wisp_netif_set_ip4(&n->nif, n->o.addr, n->o.mask, n->o.gw);
        }
        wisp_netif_set_up(&n->nif, true);
        wisp_netif_set_link(&n->nif, true);   /* the tap fd is open: carrier */
        if (n->o.dns_server != 0) {
            (void)wisp_dns_set_server(&n->stack, 0, n->o.dns_server);
        }
        rc = (api->start(n) == 0) ? -1 : 1;
        if (rc < 0 && node_iperf_start(n) != 0) {
            rc = 1;
        }
        if (rc < 0 && n->o.dhcp && node_dhcp_start(n) != 0) {
            rc = 1;
        }
        if (rc < 0 && node_http_start(n) != 0) {
            rc = 1;
        }
        if (rc < 0) {
            if (!n->o.quiet) {
                char entropy[48] = "entropy getrandom";
                if (n->o.have_seed) {
                    snprintf(entropy, sizeof entropy, "seed %" PRIu64, n->o.seed);
                }
                printf("wisp-node: up on %s, %s/%u gw %s, mac %02x:%02x:%02x:%02x:%02x:%02x, mtu %u, api %s, "
                       "%s%s%s\n",
                       n->tap.name, wisp_ip4_ntoa(n->o.addr, a), n->o.prefix, wisp_ip4_ntoa(n->o.gw, g), mac[0],
                       mac[1], mac[2], mac[3], mac[4], mac[5], n->o.mtu, api->name, entropy,
                       n->o.pcap ? ", pcap " : "", n->o.pcap ? n->o.pcap : "");
            }
            {
                unsigned baseline = node_pools_in_use(n);
                if (n->o.client) {
                    n->client.ip = n->o.peer_ip;
                    n->client.port = n->o.peer_port;
                    n->client.send_mode = n->o.send;
                    n->client.total = n->o.send_bytes;
                    n->client.wsize = n->o.write_size;
                    if (client_start(n) != 0) {
                        rc = 1;
                    }
                }
                if (rc < 0 && n->o.iperf_client && node_iperf_client_start(n) != 0) {
                    rc = 1;
                }
                if (rc < 0 && n->o.resolve != NULL && !n->o.dhcp && node_resolve_start(n) != 0) {
                    rc = 1;
                }
                if (rc < 0 && n->o.ping && node_ping_start(n) != 0) {
                    rc = 1;
                }
                if (rc < 0 && n->o.udp_probe && node_probe_start(n) != 0) {
                    rc = 1;
                }
                if (rc < 0) {
                    printf("wisp-node: ready\n");
                    rc = run_loop(n, &wait_mask, baseline);
                    if (n->o.client && rc == 0 && client_report(n) != 0) {
                        rc = 1;
                    }
                    if (n->o.iperf_client && rc == 0 && node_iperf_client_report(n) != 0) {
                        rc = 1;
                    }
                    if (n->o.resolve != NULL && rc == 0 && !n->resolve_ok) {
                        rc = 1;
                    }
                    if (n->o.ping && rc == 0 && node_ping_report(n) != 0) {
                        rc = 1;
                    }
                    if (n->o.udp_probe && rc == 0 && n->probe_err != WISP_ERR_REFUSED) {
                        rc = 1;
                    }
                }
                if (n->o.udp_probe) {
                    node_probe_stop(n);
                }
            }
            if (api->quiesce != NULL) {
                api->quiesce(n); /* threads stopped: single-threaded again */
            }
            print_report(n, api);
        }
    }
    if (teardown(n, api, e == WISP_OK) != 0) {
        rc = 1;
    }
    if (n->pcap_file != NULL && fclose(n->pcap_file) != 0) {
        fprintf(stderr, "wisp-node: closing %s: %s\n", n->o.pcap, strerror(errno));
        rc = 1;
    }
    free(n);
    return rc;
}

