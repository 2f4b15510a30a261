/**
 * @file probe_full.c
 * Size probe, "full" image (threaded): the stack thread (wisp/tcpip.h), the
 * netconn API, BSD sockets with select and getaddrinfo, on the stand-in RTOS
 * port of sys_probe.c (one-pointer handles). main brings up the interface
 * and DHCP in the core context, then runs a netconn echo server, a socket
 * server multiplexed with select, and a socket client that resolves its
 * peer with getaddrinfo. Never run: tools/size-report.sh links it with
 * --gc-sections and counts what the stack's archive contributes.
 *
 * With -DPROBE_FULL_NO_MAIN the file has neither main nor the stand-in
 * port's hook (rtos_call): a real port's image calls probe_full_run from a
 * task instead (test/freertos/rtos_probe_cm3.c, FreeRTOS on Cortex-M3,
 * measured by tools/freertos-cm3.sh).
 */
#include "wisp/wisp.h"
#include "wisp/dhcp.h"
#include "wisp/dns.h"
#include "wisp/tcpip.h"
#include "wisp/netconn.h"
#include "wisp/sockets.h"
#include "wisp/netdb.h"

#include "probe_dev.h"

static struct wisp_stack stack;
static struct wisp_netif eth0;
static struct wisp_dhcp dhcp;
static struct wisp_tcpip tcpip;
static struct wisp_netconn_api api;
static struct wisp_sockets sockets;
static struct wisp_netdb netdb;
static volatile int rx_ready;

#ifndef PROBE_FULL_NO_MAIN
void *rtos_call(int op, void *a, void *b, uint32_t t);
void *rtos_call(int op, void *a, void *b, uint32_t t)
{
    static volatile uintptr_t sink;
    sink += (uintptr_t)op + (uintptr_t)a + (uintptr_t)b + t;
    return (void *)sink;
}
#endif

static uint32_t clock_ms(void *ctx)
{
    (void)ctx;
    return wisp_sys_now_ms();
}

static wisp_err_t net_up(struct wisp_stack *s, void *arg)
{
    static const uint8_t mac[6] = { 2, 0, 0, 0, 0, 1 };
    (void)arg;
    wisp_netif_add_eth(s, &eth0, "eth0", &drv, mac, 1500);
    wisp_netif_set_up(&eth0, true);
    wisp_netif_set_link(&eth0, true);
    return wisp_dhcp_start(&dhcp, &eth0, NULL, NULL, NULL);
}

static wisp_err_t rx_frame(struct wisp_stack *s, void *arg)
{
    struct wisp_pbuf *p = wisp_pbuf_alloc_rx(s, 1514);
    (void)arg;
    if (p != NULL) {
        wisp_dev_input(&drv, p);
    }
    return WISP_OK;
}

static void netconn_echo(void *arg)
{
    struct wisp_netconn *l = wisp_netconn_new(&api, WISP_NETCONN_TCP), *c;
    (void)arg;
    wisp_netconn_bind(l, NULL, 7);
    wisp_netconn_listen(l);
    while (wisp_netconn_accept(l, &c) == WISP_OK) {
        struct wisp_netbuf *buf;
        while (wisp_netconn_recv(c, &buf) == WISP_OK) {
            do {
                void *data;
                uint16_t len;
                wisp_netbuf_data(buf, &data, &len);
                wisp_netconn_write(c, data, len, WISP_NETCONN_COPY);
            } while (wisp_netbuf_next(buf) >= 0);
            wisp_netbuf_delete(buf);
        }
        wisp_netconn_close(c);
        wisp_netconn_delete(c);
    }
}

static void socket_server(void *arg)
{
    struct wisp_sockaddr_in sa;
    int l = wisp_socket(WISP_AF_INET, WISP_SOCK_STREAM, 0), one = 1;
    int conns[4] = { -1, -1, -1, -1 };
    char buf[512];
    (void)arg;
    memset(&sa, 0, sizeof(sa));
    sa.sin_family = WISP_AF_INET;
    sa.sin_port = wisp_htons(80);
    wisp_setsockopt(l, WISP_SOL_SOCKET, WISP_SO_REUSEADDR, &one, sizeof(one));
    wisp_bind(l, (struct wisp_sockaddr *)&sa, sizeof(sa));
    wisp_listen(l, 4);
    for (;;) {
        wisp_fd_set rd;
        int maxfd = l;
        WISP_FD_ZERO(&rd);
        WISP_FD_SET(l, &rd);
        for (int i = 0; i < 4; i++) {
            if (conns[i] >= 0) {
                WISP_FD_SET(conns[i], &rd);
                maxfd = conns[i] > maxfd ? conns[i] : maxfd;
            }
        }
        if (wisp_select(maxfd + 1, &rd, NULL, NULL, NULL) <= 0) {
            continue;
        }
        if (WISP_FD_ISSET(l, &rd)) {
            int c = wisp_accept(l, NULL, NULL);
            for (int i = 0; i < 4 && c >= 0; i++) {
                if (conns[i] < 0) {
                    wisp_setsockopt(c, WISP_IPPROTO_TCP, WISP_TCPOPT_NODELAY, &one, sizeof(one));
                    conns[i] = c;
                    c = -1;
                }
            }
            if (c >= 0) {
                wisp_close(c);
            }
        }
        for (int i = 0; i < 4; i++) {
            if (conns[i] >= 0 && WISP_FD_ISSET(conns[i], &rd)) {
                wisp_ssize_t n = wisp_recv(conns[i], buf, sizeof(buf), 0);
                if (n <= 0 || wisp_send(conns[i], buf, (size_t)n, 0) < 0) {
                    wisp_close(conns[i]);
                    conns[i] = -1;
                }
            }
        }
    }
}

static void socket_client(void *arg)
{
    struct wisp_addrinfo hints, *res;
    static const char req[] = "GET / HTTP/1.0\r\n\r\n";
    char buf[256];
    (void)arg;
    memset(&hints, 0, sizeof(hints));
    hints.ai_family = WISP_AF_INET;
    hints.ai_socktype = WISP_SOCK_STREAM;
    if (wisp_getaddrinfo("example.org", "80", &hints, &res) != 0) {
        return;
    }
    int s = wisp_socket(res->ai_family, res->ai_socktype, res->ai_protocol);
    if (s >= 0 && wisp_connect(s, res->ai_addr, res->ai_addrlen) == 0) {
        wisp_send(s, req, sizeof(req) - 1, 0);
        while (wisp_recv(s, buf, sizeof(buf), 0) > 0) {
        }
    }
    wisp_close(s);
    wisp_freeaddrinfo(res);
}

/* The application: bring the stack up, start the threads, then serve as
 * the driver's receive task. Never returns. */
void probe_full_run(void);
void probe_full_run(void)
{
    struct wisp_config cfg;
    struct wisp_tcpip_cfg tcfg;
    wisp_sys_thread_t t1, t2, t3;
    memset(&cfg, 0, sizeof(cfg));
    memset(&tcfg, 0, sizeof(tcfg));
    cfg.now_ms = clock_ms;
    cfg.seed = 1;
    wisp_sys_init();
    wisp_stack_init(&stack, &cfg);
    tcfg.init = net_up;
    wisp_tcpip_start(&tcpip, &stack, &tcfg);
    wisp_netconn_api_init(&api, &tcpip);
    wisp_sockets_init(&sockets, &api);
    wisp_netdb_init(&netdb, &tcpip);
    wisp_sys_thread_new(&t1, "echo", netconn_echo, NULL, 1024, 1);
    wisp_sys_thread_new(&t2, "http", socket_server, NULL, 1024, 1);
    wisp_sys_thread_new(&t3, "client", socket_client, NULL, 1024, 1);
    for (;;) {
        if (rx_ready) {
            wisp_tcpip_call(&tcpip, rx_frame, NULL); /* the driver's receive task */
        }
        wisp_sys_sleep_ms(1);
    }
}

#ifndef PROBE_FULL_NO_MAIN
int main(void);
int main(void)
{
    probe_full_run();
    return 0;
}
#endif
