/**
 * @file app_bare.c
 * The bare-metal firmware of mps2-an385: one wisp stack, no OS, raw API.
 *
 * Boot: UART0, LAN9118 reset (lan9118.c), clock from FREE_RUN, stack with
 * one Ethernet netif, DHCP client, then the services of apps/lib on the raw
 * API: UDP/TCP echo (7), discard (9), TCP chargen (19), HTTP (80, httpd.c)
 * and the iperf 2 server (5001, TCP and UDP, -r/-d streams back).
 *
 * Main loop (the core context): drain the NIC when its interrupt said so
 * (lan9118_service), run due timers (wisp_stack_poll), read console
 * commands; then sleep in WFI until the next interrupt -- the Ethernet RX
 * interrupt or the 10 ms SysTick -- with interrupts masked around the
 * check so no wake-up is lost (a pending interrupt wakes WFI even with
 * PRIMASK set). Never busy-polls (MPS2-AN385.md pitfall 7).
 *
 * Console commands (UART0, one per line):
 *   stat       pools (used / high-water / size), driver counters, and the
 *              main loop's passes and WFI sleeps (an idle firmware passes
 *              about 100 times a second: the SysTick)
 *   ping A N S ping address A N times (1..100) with S data bytes (0..8000;
 *              above the MTU the requests go out fragmented), 200 ms
 *              apart (apps/lib/ping.c); prints "fw: ping ... done" with
 *              the counts and RTTs
 *   stall MS   do not read the NIC for MS ms (at most 2000): what a late
 *              CPU does; the RX FIFO overflows and drops (the tests use it)
 *   quit       wait (at most 8 s) until every pool is back at the baseline
 *              taken once DHCP bound, print the report, stop every
 *              service, release the lease, tear the stack down and exit
 *              through semihosting: 0 when the pools were at baseline and
 *              are empty after teardown, 1 otherwise.
 * Exit statuses: 0/1 as above, 2 fault, 3 assertion, 4 bring-up failed.
 */
#define WISP_PRIVATE_ACCESS 1 /* ports/ rule of tools/check-tiers.sh; only public API is used */
#include <stdarg.h>
#include <string.h>

#include "board.h"
#include "console.h"
#include "httpd.h"

#define FW_RX_BUDGET 16u       /* frames per service call, then timers get a turn */

static struct fw {
    struct wisp_stack stack;
    struct wisp_netif nif;
    struct lan9118 eth;
    struct wisp_dhcp dhcp;
    struct wisp_services svc;
    struct wisp_httpd httpd;
    struct wisp_iperf_server iperf;
    struct wisp_ping ping;
    unsigned baseline;
    bool have_baseline;
    bool quit;
    bool stalled;
    uint32_t stall_until;
    struct fw_line line;
    uint32_t passes;            /**< main-loop passes (each ends in WFI when idle) */
    uint32_t sleeps;            /**< of those, the ones that slept in WFI */
} fw;

/* The console's printer: straight to UART0 (one context: the main loop). */
int fw_say(const char *fmt, ...)
{
    va_list ap;
    int n;
    va_start(ap, fmt);
    n = board_vprintf(fmt, ap);
    va_end(ap);
    return n;
}

static uint32_t fw_clock_ms(void *ctx)
{
    (void)ctx;
    return board_now_ms();
}

static uint64_t fw_clock_us(void *ctx)
{
    (void)ctx;
    return board_now_us();
}

/* The two interrupts of this image: the LAN9118 (only signals, see
 * lan9118.h) and SysTick (only counts: it ends WFI every MPS2_TICK_MS). */
void ETH_IRQHandler(void);
void ETH_IRQHandler(void)
{
    lan9118_isr(&fw.eth);
}

void SysTick_Handler(void);
void SysTick_Handler(void)
{
    board_tick_count++;
}

static void dhcp_cb(void *arg, struct wisp_dhcp *d, enum wisp_dhcp_event ev)
{
    (void)arg;
    fw_print_dhcp(d, ev);
    if ((ev == WISP_DHCP_EV_BOUND || ev == WISP_DHCP_EV_RENEWED) && !fw.have_baseline) {
        fw.baseline = wisp_stack_pools_in_use(&fw.stack);
        fw.have_baseline = true;
        board_printf("fw: ready, pools in use at baseline %u\n", fw.baseline);
    }
}

static void print_loop(void)
{
    board_printf("loop: uptime_ms %lu passes %lu sleeps %lu\n", (unsigned long)board_now_ms(),
                 (unsigned long)fw.passes, (unsigned long)fw.sleeps);
}

static void print_stats(void)
{
    unsigned i;
    fw_print_pools(&fw.stack);
    fw_print_driver(&fw.eth);
    for (i = 0; i < WISP_TCP_SVC_COUNT; i++) {
        fw_print_tcp_service(i, &fw.svc.tcp[i].st);
    }
    board_printf("svc udp echo %lu discard %lu\n", (unsigned long)fw.svc.udp_echo_st.datagrams,
                 (unsigned long)fw.svc.udp_discard_st.datagrams);
    fw_print_raw_apps(wisp_httpd_stats(&fw.httpd)->requests, &fw.iperf.st);
}

static void ping_cmd(const char *args)
{
    struct wisp_ping_cfg cfg;
    wisp_err_t err;
    if (!fw_ping_parse(args, &cfg, fw_clock_us)) {
        return;
    }
    wisp_ping_stop(&fw.ping); /* a run still going ends here */
    err = wisp_ping_start_cfg(&fw.ping, &fw.stack, &cfg);
    if (err != WISP_OK) {
        board_printf("fw: ping failed to start: %s\n", wisp_err_str(err));
    }
}

static void command(const char *cmd)
{
    if (strcmp(cmd, "stat") == 0) {
        print_stats();
        print_loop();
    } else if (strncmp(cmd, "stall ", 6) == 0) {
        uint32_t ms = fw_stall_ms(cmd + 6);
        fw.stalled = true;
        fw.stall_until = board_now_ms() + ms;
        board_nvic_disable(MPS2_LAN9118_IRQ);
        board_printf("fw: stall %lu ms\n", (unsigned long)ms);
    } else if (strncmp(cmd, "ping ", 5) == 0) {
        ping_cmd(cmd + 5);
    } else if (strcmp(cmd, "quit") == 0) {
        fw.quit = true;
    } else if (cmd[0] != '\0') {
        board_printf("fw: unknown command '%s'\n", cmd);
    }
}

static void console_poll(void)
{
    while (fw_line_poll(&fw.line)) {
        command(fw.line.buf);
    }
}

static void stall_check(void)
{
    if (fw.stalled && (int32_t)(board_now_ms() - fw.stall_until) >= 0) {
        fw.stalled = false;
        fw.eth.pending = 1; /* look at the FIFO now */
        board_nvic_enable(MPS2_LAN9118_IRQ);
    }
}

/* One pass of the main loop; then sleep until an interrupt when nothing is
 * due. */
static void run_once(void)
{
    uint32_t tick = board_tick_count;
    fw.passes++;
    stall_check();
    if (!fw.stalled && fw.eth.pending) {
        (void)lan9118_service(&fw.eth, FW_RX_BUDGET);
    }
    if (wisp_stack_next_timeout(&fw.stack) == 0) {
        wisp_stack_poll(&fw.stack);
    }
    console_poll();
    board_irq_off();
    if (!(fw.eth.pending && !fw.stalled) && !fw.quit && tick == board_tick_count &&
        wisp_stack_next_timeout(&fw.stack) != 0) {
        fw.sleeps++;
        board_wfi(); /* the Ethernet IRQ or SysTick wakes us (console: SysTick) */
    }
    board_irq_on();
}

static int start(void)
{
    static const uint8_t fallback_mac[6] = { 0x02, 0x00, 0x5e, 0x18, 0x00, 0x02 };
    struct wisp_config cfg;
    struct wisp_dhcp_cfg dcfg;
    struct wisp_iperf_server_cfg icfg;
    wisp_err_t err;

    err = lan9118_init(&fw.eth, MPS2_LAN9118_BASE, &fw.stack, fallback_mac);
    if (err != WISP_OK) {
        board_printf("fw: lan9118 init failed: %s\n", wisp_err_str(err));
        return 4;
    }
    board_clock_start(); /* after the reset: it restarts FREE_RUN */
    memset(&cfg, 0, sizeof cfg);
    cfg.now_ms = fw_clock_ms;
    /* No TRNG on this board: the seed mixes the MAC with the boot time.
     * Good enough for a test image, not for production (stack.h). */
    cfg.seed = ((uint64_t)fw.eth.mac[5] << 40) ^ ((uint64_t)fw.eth.mac[4] << 32) ^ board_ticks() ^ 0x5eed1e55u;
    if (wisp_stack_init(&fw.stack, &cfg) != WISP_OK) {
        return 4;
    }
    fw_print_mac(&fw.eth);
    err = wisp_netif_add_eth(&fw.stack, &fw.nif, "eth0", &fw.eth.dev, fw.eth.mac, 1500);
    if (err != WISP_OK) {
        return 4;
    }
    wisp_netif_set_up(&fw.nif, true);
    wisp_netif_set_link(&fw.nif, lan9118_link_up(&fw.eth));
    if (wisp_services_start(&fw.stack, &fw.svc) != WISP_OK || wisp_httpd_start(&fw.httpd, &fw.stack, 80) != WISP_OK) {
        board_printf("fw: services failed to start\n");
        return 4;
    }
    fw_iperf_cfg(&icfg, fw_clock_us);
    if (wisp_iperf_server_start(&fw.stack, &fw.iperf, &icfg) != WISP_OK) {
        board_printf("fw: iperf failed to start\n");
        return 4;
    }
    fw_dhcp_cfg(&dcfg, "wisp-mps2");
    if (wisp_dhcp_start(&fw.dhcp, &fw.nif, &dcfg, dhcp_cb, NULL) != WISP_OK) {
        return 4;
    }
    lan9118_irq_start(&fw.eth);
    board_nvic_enable(MPS2_LAN9118_IRQ);
    board_systick_start();
    board_printf("fw: services echo 7 discard 9 chargen 19 http 80 iperf 5001; waiting for DHCP\n");
    return 0;
}

/* quit: the pools back at baseline (bounded wait), report, teardown. */
static int finish(void)
{
    uint32_t t0 = board_now_ms();
    unsigned in_use = wisp_stack_pools_in_use(&fw.stack);
    bool at_base;
    fw.quit = false;
    while (fw.have_baseline && in_use > fw.baseline && board_now_ms() - t0 < FW_QUIT_WAIT_MS) {
        run_once();
        in_use = wisp_stack_pools_in_use(&fw.stack);
    }
    at_base = fw.have_baseline && in_use == fw.baseline;
    board_printf("fw: report after %lu ms of uptime\n", (unsigned long)board_now_ms());
    print_stats();
    wisp_stack_dump(&fw.stack, board_vprint, NULL, false);
    board_printf("pools: in use %u, baseline %u: %s\n", in_use, fw.baseline, at_base ? "at baseline" : "NOT at baseline");
    wisp_ping_stop(&fw.ping);
    wisp_iperf_server_stop(&fw.iperf);
    wisp_httpd_stop(&fw.httpd);
    wisp_services_stop(&fw.svc);
    wisp_dhcp_stop(&fw.dhcp, true);
    (void)lan9118_service(&fw.eth, FW_RX_BUDGET); /* send the RELEASE */
    board_nvic_disable(MPS2_LAN9118_IRQ);
    wisp_netif_remove(&fw.nif);
    wisp_stack_deinit(&fw.stack);
    in_use = wisp_stack_pools_in_use(&fw.stack);
    if (in_use == 0 && at_base) {
        board_printf("pools: all back at baseline\n");
        return 0;
    }
    board_printf("pools: LEAK, %u elements in use after teardown\n", in_use);
    return 1;
}

int main(void)
{
    int rc;
    board_uart_init();
    board_printf("\nwisp mps2-an385 bare-metal firmware (Cortex-M3, raw API, no OS)\n");
    rc = start();
    if (rc != 0) {
        return rc;
    }
    while (!fw.quit) {
        run_once();
    }
    rc = finish();
    board_printf("fw: exit %d\n", rc);
    return rc;
}
