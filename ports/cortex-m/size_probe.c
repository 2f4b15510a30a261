/**
 * @file size_probe.c
 * A minimal bare-metal image used to measure wisp on Cortex-M4: one stack
 * instance in static RAM with one Ethernet interface on a stub device that
 * drops frames, the UDP echo of a raw PCB, and a main loop that polls. Linked
 * with --gc-sections so only what a real firmware pulls in is counted.
 * It is measured (arm-none-eabi-size), not run.
 */
#include "wisp/wisp.h"

static struct wisp_stack stack;
static struct wisp_netif eth0;
static volatile uint32_t ticks;

static uint32_t clock_ms(void *ctx)
{
    (void)ctx;
    return ticks;
}

static wisp_err_t drv_transmit(struct wisp_dev *dev, struct wisp_pbuf *frame)
{
    (void)dev;
    (void)frame;
    return WISP_OK;
}

static const struct wisp_dev_ops drv_ops = { drv_transmit, NULL, NULL };
static struct wisp_dev drv = { &drv_ops, NULL, NULL, NULL, NULL };

static void echo_recv(void *arg, struct wisp_udp_pcb *pcb, struct wisp_pbuf *p, const wisp_ipaddr_t *src,
                      uint16_t port, const struct wisp_ip_info *ip)
{
    (void)arg;
    (void)ip;
    wisp_udp_sendto(pcb, p, src, port);
    wisp_pbuf_free(p);
}

int main(void);
int main(void)
{
    static const uint8_t mac[6] = { 2, 0, 0, 0, 0, 1 };
    struct wisp_config cfg;
    struct wisp_udp_pcb *pcb;
    memset(&cfg, 0, sizeof(cfg));
    cfg.now_ms = clock_ms;
    cfg.seed = 1;
    wisp_stack_init(&stack, &cfg);
    wisp_netif_add_eth(&stack, &eth0, "eth0", &drv, mac, 1500);
    wisp_netif_set_ip4(&eth0, wisp_ip4(198, 18, 0, 2), wisp_ip4_prefix_mask(24), 0);
    wisp_netif_set_up(&eth0, true);
    wisp_netif_set_link(&eth0, true);
    pcb = wisp_udp_new(&stack);
    wisp_udp_bind(pcb, NULL, 7);
    wisp_udp_recv(pcb, echo_recv, NULL);
    for (;;) {
        struct wisp_pbuf *p = wisp_pbuf_alloc_rx(&stack, 60);
        if (p != NULL) {
            wisp_dev_input(&drv, p); /* a frame from the "DMA ring" */
        }
        wisp_stack_poll(&stack);
    }
}
