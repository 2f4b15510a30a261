/**
 * @file probe_raw.c
 * Size probe, "raw" image (no OS): a firmware's main that brings up one
 * Ethernet interface, runs DHCP, resolves a name, serves UDP echo and (when
 * the core has TCP) a TCP echo server plus one outgoing TCP connection, all
 * through the raw callback API, and polls the stack from its main loop.
 * The same file is the "UDP-only" image when the core is built with
 * WISP_TCP 0. Never run: tools/size-report.sh links it with --gc-sections
 * and counts what the stack's archive contributes (from the linker map).
 */
#include "wisp/wisp.h"
#include "wisp/dhcp.h"
#include "wisp/dns.h"

#include "probe_dev.h"

static struct wisp_stack stack;
static struct wisp_netif eth0;
static struct wisp_dhcp dhcp;
static volatile uint32_t ticks;
static volatile int rx_ready;

uint32_t probe_clock_ms(void *ctx);
uint32_t probe_clock_ms(void *ctx)
{
    (void)ctx;
    return ticks;
}

static void udp_echo(void *arg, struct wisp_udp_pcb *pcb, struct wisp_pbuf *p, const wisp_ipaddr_t *src,
                     uint16_t port, const struct wisp_ip_info *ip)
{
    (void)arg;
    (void)ip;
    wisp_udp_sendto(pcb, p, src, port);
    wisp_pbuf_free(p);
}

static void dns_found(void *arg, const char *name, wisp_err_t err, const wisp_ipaddr_t *addr, uint32_t ttl_s);

#if WISP_TCP
static wisp_err_t tcp_echo_recv(void *arg, struct wisp_tcp_pcb *pcb, struct wisp_pbuf *p, wisp_err_t err)
{
    (void)arg;
    if (p == NULL || err != WISP_OK) {
        wisp_tcp_close(pcb);
        return WISP_OK;
    }
    for (struct wisp_pbuf *q = p; q != NULL; q = q->next) {
        if (wisp_tcp_write(pcb, q->payload, q->len, WISP_TCP_WRITE_COPY) != WISP_OK) {
            wisp_tcp_abort(pcb);
            wisp_pbuf_free(p);
            return WISP_ERR_ABRT;
        }
    }
    wisp_tcp_recved(pcb, p->tot_len);
    wisp_pbuf_free(p);
    return wisp_tcp_output(pcb);
}

static void tcp_echo_err(void *arg, wisp_err_t err)
{
    (void)arg;
    (void)err;
}

static wisp_err_t tcp_echo_accept(void *arg, struct wisp_tcp_pcb *newpcb, wisp_err_t err)
{
    (void)arg;
    if (err != WISP_OK) {
        return err;
    }
    wisp_tcp_recv(newpcb, tcp_echo_recv);
    wisp_tcp_err(newpcb, tcp_echo_err);
    return WISP_OK;
}

static wisp_err_t client_connected(void *arg, struct wisp_tcp_pcb *pcb, wisp_err_t err)
{
    static const char req[] = "GET / HTTP/1.0\r\n\r\n";
    (void)arg;
    if (err != WISP_OK) {
        return err;
    }
    wisp_tcp_recv(pcb, tcp_echo_recv);
    return wisp_tcp_write(pcb, req, sizeof(req) - 1, 0);
}

static void tcp_start(void)
{
    struct wisp_tcp_pcb *l = wisp_tcp_new(&stack);
    if (l != NULL && wisp_tcp_bind(l, NULL, 7) == WISP_OK) {
        l = wisp_tcp_listen(l, 4, NULL);
        if (l != NULL) {
            wisp_tcp_accept(l, tcp_echo_accept);
        }
    }
}

static void dns_found(void *arg, const char *name, wisp_err_t err, const wisp_ipaddr_t *addr, uint32_t ttl_s)
{
    struct wisp_tcp_pcb *c;
    (void)arg;
    (void)name;
    (void)ttl_s;
    if (err != WISP_OK || (c = wisp_tcp_new(&stack)) == NULL) {
        return;
    }
    wisp_tcp_err(c, tcp_echo_err);
    if (wisp_tcp_connect(c, addr, 80, client_connected) != WISP_OK) {
        wisp_tcp_abort(c);
    }
}
#else
static void tcp_start(void)
{
}

static void dns_found(void *arg, const char *name, wisp_err_t err, const wisp_ipaddr_t *addr, uint32_t ttl_s)
{
    static const char req[] = "hello";
    struct wisp_udp_pcb *u;
    struct wisp_pbuf *p;
    (void)arg;
    (void)name;
    (void)ttl_s;
    if (err != WISP_OK || (u = wisp_udp_new(&stack)) == NULL) {
        return;
    }
    p = wisp_pbuf_alloc(&stack, WISP_LAYER_TRANSPORT, sizeof(req), WISP_PBUF_RAM);
    if (p != NULL) {
        wisp_pbuf_copy_in(p, req, sizeof(req), 0);
        wisp_udp_sendto(u, p, addr, 5000);
        wisp_pbuf_free(p);
    }
    wisp_udp_remove(u);
}
#endif

int main(void);
int main(void)
{
    static const uint8_t mac[6] = { 2, 0, 0, 0, 0, 1 };
    struct wisp_config cfg;
    struct wisp_udp_pcb *pcb;
    wisp_ipaddr_t addr;
    memset(&cfg, 0, sizeof(cfg));
    cfg.now_ms = probe_clock_ms;
    cfg.seed = 1;
    wisp_stack_init(&stack, &cfg);
    wisp_netif_add_eth(&stack, &eth0, "eth0", &drv, mac, 1500);
    wisp_netif_set_up(&eth0, true);
    wisp_netif_set_link(&eth0, true);
    wisp_dhcp_start(&dhcp, &eth0, NULL, NULL, NULL);
    pcb = wisp_udp_new(&stack);
    wisp_udp_bind(pcb, NULL, 7);
    wisp_udp_recv(pcb, udp_echo, NULL);
    tcp_start();
    if (wisp_dns_gethostbyname(&stack, "example.org", &addr, dns_found, NULL) == WISP_OK) {
        dns_found(NULL, "example.org", WISP_OK, &addr, 0);
    }
    for (;;) {
        if (rx_ready) {
            struct wisp_pbuf *p = wisp_pbuf_alloc_rx(&stack, 1514);
            if (p != NULL) {
                wisp_dev_input(&drv, p); /* a frame from the "DMA ring" */
            }
        }
        wisp_stack_poll(&stack);
    }
}
