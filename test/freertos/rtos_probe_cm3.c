/**
 * @file rtos_probe_cm3.c
 * A minimal FreeRTOS application measured (not run) by tools/freertos-cm3.sh
 * for Cortex-M3: one stack with an Ethernet interface on a stub device, the
 * stack thread (wisp_tcpip_start), a netconn TCP echo task and a BSD socket
 * UDP echo task, the kernel started. Linked with --gc-sections and no
 * startup code or vector table, so the figure is what main() pulls in: the
 * kernel with the ARM_CM3 port and heap_4, wisp's core, OS layer and APIs,
 * the FreeRTOS sys port. Public headers only.
 */
#include "wisp/wisp.h"
#include "wisp/tcpip.h"
#include "wisp/netconn.h"
#include "wisp/sockets.h"

#include "FreeRTOS.h"
#include "task.h"

static struct wisp_stack stack;
static struct wisp_netif eth0;
static struct wisp_tcpip tcpip;
static struct wisp_netconn_api ncapi;
static struct wisp_sockets socks;

static uint32_t clock_ms(void *ctx)
{
    (void)ctx;
    return wisp_sys_now_ms();
}

static wisp_err_t drv_transmit(struct wisp_dev *dev, struct wisp_pbuf *frame)
{
    (void)dev;
    (void)frame;
    return WISP_OK;
}

static const struct wisp_dev_ops drv_ops = { drv_transmit, NULL, NULL };
static struct wisp_dev drv = { &drv_ops, NULL, NULL, NULL, NULL };

static void tcp_echo_task(void *arg)
{
    struct wisp_netconn *l = wisp_netconn_new(&ncapi, WISP_NETCONN_TCP), *c;
    wisp_ipaddr_t any = wisp_ipaddr_any4();
    (void)arg;
    wisp_netconn_bind(l, &any, 7);
    wisp_netconn_listen(l);
    while (wisp_netconn_accept(l, &c) == WISP_OK) {
        struct wisp_netbuf *b;
        while (wisp_netconn_recv(c, &b) == WISP_OK) {
            void *d;
            uint16_t n;
            if (wisp_netbuf_data(b, &d, &n) == WISP_OK) {
                wisp_netconn_write(c, d, n, WISP_NETCONN_COPY);
            }
            wisp_netbuf_delete(b);
        }
        wisp_netconn_close(c);
        wisp_netconn_delete(c);
    }
    vTaskDelete(NULL);
}

static void udp_echo_task(void *arg)
{
    static char buf[1472];
    struct wisp_sockaddr_in a;
    int s = wisp_socket(WISP_AF_INET, WISP_SOCK_DGRAM, 0);
    (void)arg;
    memset(&a, 0, sizeof a);
    a.sin_family = WISP_AF_INET;
    a.sin_port = wisp_htons(7);
    wisp_bind(s, (struct wisp_sockaddr *)&a, sizeof a);
    for (;;) {
        wisp_socklen_t len = sizeof a;
        wisp_ssize_t n = wisp_recvfrom(s, buf, sizeof buf, 0, (struct wisp_sockaddr *)&a, &len);
        if (n > 0) {
            wisp_sendto(s, buf, (size_t)n, 0, (struct wisp_sockaddr *)&a, len);
        }
    }
}

int main(void);
int main(void)
{
    static const uint8_t mac[6] = { 2, 0, 0, 0, 0, 1 };
    struct wisp_config cfg;
    memset(&cfg, 0, sizeof(cfg));
    cfg.now_ms = clock_ms;
    cfg.seed = 1;
    wisp_stack_init(&stack, &cfg);
    wisp_netif_add_eth(&stack, &eth0, "eth0", &drv, mac, 1500);
    wisp_netif_set_ip4(&eth0, wisp_htonl(0xC6120002u), wisp_htonl(0xFFFFFF00u), wisp_htonl(0xC6120001u));
    wisp_netif_set_up(&eth0, true);
    wisp_netif_set_link(&eth0, true);
    wisp_sys_init();
    wisp_tcpip_start(&tcpip, &stack, NULL);
    wisp_netconn_api_init(&ncapi, &tcpip);
    wisp_sockets_init(&socks, &ncapi);
    xTaskCreate(tcp_echo_task, "echo", 1024, NULL, 1, NULL);
    xTaskCreate(udp_echo_task, "uecho", 1024, NULL, 1, NULL);
    vTaskStartScheduler();
    for (;;) {
    }
}
