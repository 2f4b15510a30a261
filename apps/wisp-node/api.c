/**
 * @file api.c
 * wisp-node: the application-API table: the services on the raw API in the main
 * loop, or on netconn / sockets as application threads of a stack thread.
 */
#include "node.h"

/* One line per TCP service connection that ends (the interop tests read
 * them: bytes per connection, how it ended). */
static void raw_conn_report(void *ctx, const struct wisp_tcp_conn_report *r)
{
    struct node *n = ctx;
    char a[16];

    if (n->o.quiet) {
        return;
    }
    printf("wisp-node: tcp/%u %s %s:%u %s: rx %" PRIu64 " tx %" PRIu64 "%s%s\n", (unsigned)r->port, r->service,
           wisp_ip4_ntoa(wisp_ipaddr_ip4(&r->remote_ip), a), (unsigned)r->remote_port,
           r->how == WISP_OK ? "closed" : (r->how == WISP_ERR_ABRT ? "aborted" : "ended"), r->bytes_rx,
           r->bytes_tx, r->how == WISP_OK ? "" : ", ", r->how == WISP_OK ? "" : wisp_err_str(r->how));
    if (r->have_info && (r->info.retransmits != 0 || r->info.timeouts != 0)) {
        print_tcp_info("wisp-node:   tcp: ", &r->info);
    }
}

static int raw_start(struct node *n)
{
    unsigned i, cnt;
    const struct wisp_service_desc *t = wisp_services_table(&cnt);
    wisp_err_t err = wisp_services_start_opts(&n->stack, &n->svc, &n->o.svc_opt);

    if (err != WISP_OK) {
        fprintf(stderr, "wisp-node: cannot start the services: %s\n", wisp_err_str(err));
        return -1;
    }
    wisp_services_set_report(&n->svc, raw_conn_report, n);
    n->services_up = true;
    if (!n->o.quiet) {
        for (i = 0; i < cnt; i++) {
            printf("wisp-node: service %s/%u %s (raw API)\n", t[i].proto == WISP_IP4_PROTO_UDP ? "udp" : "tcp",
                   (unsigned)t[i].port, t[i].name);
        }
        printf("wisp-node: tcp services: %u records, %u per source, idle %" PRIu32 " ms, reclaim after %" PRIu32
               " ms\n", (unsigned)WISP_SERVICES_TCP_CONNS, (unsigned)n->svc.opt.per_source, n->svc.opt.idle_ms,
               n->svc.opt.reclaim_ms);
    }
    return 0;
}

static void raw_stop(struct node *n)
{
    if (n->services_up) {
        wisp_services_stop(&n->svc);
        n->services_up = false;
    }
}

static void print_service(const char *name, const struct wisp_service_stats *st)
{
    printf("  %-16s datagrams %" PRIu32 " bytes %" PRIu32 " dropped %" PRIu32 " send_err %" PRIu32 "\n", name,
           st->datagrams, st->bytes, st->dropped, st->send_err);
}

static void print_tcp_service(const char *name, const struct wisp_tcp_service_stats *st)
{
    printf("  %-16s connections %" PRIu32 " active %" PRIu32 " closed %" PRIu32 " resets %" PRIu32
           " aborted %" PRIu32 " refused %" PRIu32 " rx %" PRIu64 " tx %" PRIu64 " timeouts %" PRIu32
           " reclaimed %" PRIu32 " capped %" PRIu32 "\n",
           name, st->connections, st->active, st->closed, st->resets, st->aborted, st->refused, st->bytes_rx,
           st->bytes_tx, st->timeouts, st->reclaimed, st->capped);
}

static void raw_dump(struct node *n)
{
    printf("services:\n");
    print_service("udp/7 echo", &n->svc.udp_echo_st);
    print_service("udp/9 discard", &n->svc.udp_discard_st);
    print_tcp_service("tcp/7 echo", &n->svc.tcp[WISP_TCP_SVC_ECHO].st);
    print_tcp_service("tcp/9 discard", &n->svc.tcp[WISP_TCP_SVC_DISCARD].st);
    print_tcp_service("tcp/19 chargen", &n->svc.tcp[WISP_TCP_SVC_CHARGEN].st);
}

/* ------------------------------------------------ --api netconn|socket
 * The stack runs on its own thread (wisp_tcpip_start, core locking); the
 * main loop is the tap's I/O thread: it reads the tap in batches under the
 * core lock (wisp_tcpip_lock; each frame goes straight to wisp_dev_input,
 * no mailbox hop) and writes the tap's transmit ring without any lock.
 * Transmit runs in whichever thread holds the core lock (an application
 * thread's write, this thread's ACK processing, the stack thread's timers)
 * and only copies the frame into that ring (wisp_tapdev_tx_defer), so no
 * thread holds the core while Linux runs its receive path inside a tap
 * write(2) of bulk data; a short frame (--tx-direct-max, default 256 B:
 * ACKs, SYN-ACKs, FINs, short replies) that finds the ring empty and this
 * thread asleep is written by its sender instead, which saves a thread
 * switch per request/response. The services and the client are application threads on the
 * chosen API (apps/lib/services_netconn.c, services_socket.c). */


unsigned node_pools_in_use(struct node *n)
{
    unsigned v;
    if (!n->tcpip_up) {
        return wisp_stack_pools_in_use(&n->stack);
    }
    wisp_tcpip_lock(&n->tcpip);
    v = wisp_stack_pools_in_use(&n->stack);
    wisp_tcpip_unlock(&n->tcpip);
    return v;
}

static unsigned threaded_svc_threads(struct node *n)
{
    if (!n->services_up) {
        return 0;
    }
    if (n->kind == NODE_API_SOCKET) {
        struct wisp_sock_services_stats st;
        wisp_sock_services_stats(&n->sksvc, &st);
        return st.threads;
    } else {
        struct wisp_nc_services_stats st;
        wisp_nc_services_stats(&n->ncsvc, &st);
        return st.threads;
    }
}

/* Stop the client and the services (their connections closed while the
 * tap is still served, so the closes complete), then the API layers and
 * the stack thread. Idempotent. */
static void threaded_quiesce(struct node *n)
{
    double until;

    if (!n->tcpip_up) {
        wisp_tapdev_tx_direct(&n->tap);
        return;
    }
    tclient_request_stop(n);
    if (n->services_up) {
        if (n->kind == NODE_API_SOCKET) {
            wisp_sock_services_request_stop(&n->sksvc);
        } else {
            wisp_nc_services_request_stop(&n->ncsvc);
        }
    }
    until = mono_s() + 3.0;
    while (mono_s() < until && (!tclient_finished(n) || threaded_svc_threads(n) > 0)) {
        (void)node_tap_pump(n, NULL, 10);
    }
    tclient_join(n);
    if (n->services_up) {
        if (n->kind == NODE_API_SOCKET) {
            struct wisp_sock_services_stats st;
            wisp_sock_services_stop(&n->sksvc);
            wisp_sock_services_stats(&n->sksvc, &st);
            memcpy(n->tsvc_st.udp, st.udp, sizeof st.udp);
            memcpy(n->tsvc_st.tcp, st.tcp, sizeof st.tcp);
            n->tsvc_st.threads = st.threads;
        } else {
            wisp_nc_services_stop(&n->ncsvc);
            wisp_nc_services_stats(&n->ncsvc, &n->tsvc_st);
        }
        n->services_up = false;
        n->have_tstats = true;
    }
    /* Let the closing handshakes finish (bounded). */
    until = mono_s() + 1.0;
    while (mono_s() < until && node_pools_in_use(n) > 0) {
        (void)node_tap_pump(n, NULL, 10);
    }
    if (n->socks_up) {
        int left = wisp_sockets_deinit();
        if (left != 0) {
            fprintf(stderr, "wisp-node: %d sockets were still open\n", left);
        }
        n->socks_up = false;
    }
    if (n->ncapi_up) {
        wisp_netconn_api_stats(&n->ncapi, &n->nc_st);
        if (wisp_netconn_api_deinit(&n->ncapi) != WISP_OK) {
            fprintf(stderr, "wisp-node: netconns or netbufs still in use at stop\n");
        } else {
            n->ncapi_up = false;
        }
    }
    wisp_tcpip_get_stats(&n->tcpip, &n->tcpip_st);
    wisp_tcpip_stop(&n->tcpip);
    n->tcpip_up = false;
    wisp_tapdev_tx_direct(&n->tap);   /* single-threaded again: direct writes */
    if (n->tc.lock_made) {
        wisp_sys_mutex_free(&n->tc.lock);
        n->tc.lock_made = false;
    }
}

static int threaded_start(struct node *n, enum node_api_kind kind)
{
    unsigned i, cnt;
    const struct wisp_service_desc *t = wisp_services_table(&cnt);
    const char *what = kind == NODE_API_SOCKET ? "socket" : "netconn";
    char msg[160];
    wisp_err_t err;

    n->kind = kind;
    n->threaded = true;
    /* Transmit becomes a copy into a ring the main thread writes out
     * without the core lock (before any other thread may transmit). */
    if (wisp_tapdev_tx_defer(&n->tap, 0, msg, sizeof msg) != 0) {
        fprintf(stderr, "wisp-node: %s\n", msg);
        return -1;
    }
    wisp_tapdev_tx_direct_max(&n->tap, n->o.tx_direct_max);
    err = wisp_sys_init();
    if (err == WISP_OK) {
        err = wisp_tcpip_start(&n->tcpip, &n->stack, NULL);
    }
    if (err != WISP_OK) {
        fprintf(stderr, "wisp-node: cannot start the stack thread: %s\n", wisp_err_str(err));
        return -1;
    }
    n->tcpip_up = true;
    err = wisp_netconn_api_init(&n->ncapi, &n->tcpip);
    if (err != WISP_OK) {
        fprintf(stderr, "wisp-node: cannot set up the netconn layer: %s\n", wisp_err_str(err));
        return -1;
    }
    n->ncapi_up = true;
    if (kind == NODE_API_SOCKET) {
        err = wisp_sockets_init(&n->socks, &n->ncapi);
        if (err != WISP_OK) {
            fprintf(stderr, "wisp-node: cannot install the socket table: %s\n", wisp_err_str(err));
            return -1;
        }
        n->socks_up = true;
        err = wisp_sock_services_start_opts(&n->sksvc, &n->o.svc_opt, raw_conn_report, n);
    } else {
        err = wisp_nc_services_start_opts(&n->ncsvc, &n->ncapi, &n->o.svc_opt, raw_conn_report, n);
    }
    if (err != WISP_OK) {
        fprintf(stderr, "wisp-node: cannot start the services: %s\n", wisp_err_str(err));
        return -1;
    }
    n->services_up = true;
    if (!n->o.quiet) {
        for (i = 0; i < cnt; i++) {
            printf("wisp-node: service %s/%u %s (%s API, application threads)\n",
                   t[i].proto == WISP_IP4_PROTO_UDP ? "udp" : "tcp", (unsigned)t[i].port, t[i].name, what);
        }
        {
            const struct wisp_services_opts *so = kind == NODE_API_SOCKET ? &n->sksvc.opt : &n->ncsvc.opt;
            printf("wisp-node: tcp services: %u threads, %u per source, idle %" PRIu32 " ms, reclaim after %" PRIu32
                   " ms\n", kind == NODE_API_SOCKET ? (unsigned)WISP_SOCK_SERVICES_CONNS
                                                     : (unsigned)WISP_NC_SERVICES_CONNS,
                   (unsigned)so->per_source, so->idle_ms, so->reclaim_ms);
        }
    }
    return 0;
}

static int netconn_start(struct node *n)
{
    return threaded_start(n, NODE_API_NETCONN);
}

static int socket_start(struct node *n)
{
    return threaded_start(n, NODE_API_SOCKET);
}

static void threaded_dump(struct node *n)
{
    const struct wisp_nc_services_stats *st = &n->tsvc_st;

    if (!n->have_tstats) {
        return;
    }
    printf("services (%s API):\n", n->kind == NODE_API_SOCKET ? "socket" : "netconn");
    print_service("udp/7 echo", &st->udp[WISP_UDP_SVC_ECHO]);
    print_service("udp/9 discard", &st->udp[WISP_UDP_SVC_DISCARD]);
    print_tcp_service("tcp/7 echo", &st->tcp[WISP_TCP_SVC_ECHO]);
    print_tcp_service("tcp/9 discard", &st->tcp[WISP_TCP_SVC_DISCARD]);
    print_tcp_service("tcp/19 chargen", &st->tcp[WISP_TCP_SVC_CHARGEN]);
    printf("netconn layer: conns high %u, bufs high %u, conns failed %" PRIu32 ", bufs failed %" PRIu32
           ", udp drops %" PRIu32 ", tcp refused %" PRIu32 ", accept drops %" PRIu32 "\n",
           (unsigned)n->nc_st.conns_high, (unsigned)n->nc_st.bufs_high, n->nc_st.conns_failed, n->nc_st.bufs_failed,
           n->nc_st.udp_drops, n->nc_st.tcp_refused, n->nc_st.accept_drops);
    printf("stack thread: calls %" PRIu32 " callbacks %" PRIu32 " inputs %" PRIu32 " input drops %" PRIu32
           " polls %" PRIu32 " wakes %" PRIu32 "\n",
           n->tcpip_st.calls, n->tcpip_st.callbacks, n->tcpip_st.inputs, n->tcpip_st.input_drops, n->tcpip_st.polls,
           n->tcpip_st.wakes);
}

static const struct node_api node_apis[] = {
    { "raw", raw_start, raw_stop, raw_dump, NULL },
    { "netconn", netconn_start, threaded_quiesce, threaded_dump, threaded_quiesce },
    { "socket", socket_start, threaded_quiesce, threaded_dump, threaded_quiesce },
};

const struct node_api *find_api(const char *name)
{
    size_t i;
    for (i = 0; i < sizeof node_apis / sizeof node_apis[0]; i++) {
        if (strcmp(node_apis[i].name, name) == 0) {
            return &node_apis[i];
        }
    }
    return NULL;
}

