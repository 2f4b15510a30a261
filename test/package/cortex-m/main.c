/**
 * @file main.c
 * An example Cortex-M firmware that consumes wisp through add_subdirectory
 * (test/package/run.sh builds it with cmake/arm-none-eabi.cmake; it is
 * linked, not run): one stack in static RAM, an Ethernet interface on a
 * stub driver, a raw-API UDP echo, the main loop polling the stack. The
 * board provides the clock and the core's assertion hook (WISP_DEBUG).
 */
#include <string.h>

#include "wisp/wisp.h"

static struct wisp_stack stack;
static struct wisp_netif eth0;
static volatile uint32_t ticks; /* a SysTick handler would count here */

void wisp_assert_fail(const char *expr, const char *file, int line);
void wisp_assert_fail(const char *expr, const char *file, int line)
{
    (void)expr;
    (void)file;
    (void)line;
    for (;;) {
    }
}

static uint32_t clock_ms(void *ctx)
{
    (void)ctx;
    return ticks;
}

static wisp_err_t drv_transmit(struct wisp_dev *dev, struct wisp_pbuf *frame)
{
    (void)dev;
    (void)frame;
    return WISP_OK; /* a MAC would start its DMA here */
}

static const struct wisp_dev_ops drv_ops = { drv_transmit, NULL, NULL };
static struct wisp_dev drv = { &drv_ops, NULL, NULL, NULL, NULL };

static void echo_recv(void *arg, struct wisp_udp_pcb *pcb, struct wisp_pbuf *p, const wisp_ipaddr_t *src,
                      uint16_t port, const struct wisp_ip_info *ip)
{
    (void)arg;
    (void)ip;
    (void)wisp_udp_sendto(pcb, p, src, port);
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
    (void)wisp_udp_bind(pcb, NULL, 7);
    wisp_udp_recv(pcb, echo_recv, NULL);
    for (;;) {
        wisp_stack_poll(&stack);
    }
}
