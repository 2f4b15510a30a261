/**
 * @file app_freertos.c
 * The FreeRTOS firmware of mps2-an385: FreeRTOS (GCC/ARM_CM3 port, heap_4,
 * rtos/FreeRTOSConfig.h), one wisp stack run by its stack thread
 * (wisp_tcpip_start, ports/freertos), the LAN9118 driver of the bare-metal
 * image (lan9118.c) in a driver task, and application tasks.
 *
 * Tasks (FreeRTOS priorities; higher runs first):
 *  - "eth" (4): the driver task. The LAN9118 interrupt only masks the chip,
 *    sets a flag and notifies this task (lan9118_isr's signal hook,
 *    vTaskNotifyGiveFromISR). The task then drains the RX FIFO under the
 *    core lock (wisp_tcpip_lock: each frame goes straight to wisp_dev_input
 *    in this task, no mailbox hop -- as wisp-node's threaded mode does with
 *    its TAP), 16 frames per lock, and unmasks the chip's interrupt.
 *  - "wisp-tcpip" (3): the stack thread: timers and API messages.
 *  - application threads (1): the TCP echo (7), discard (9) and chargen
 *    (19) and UDP echo/discard services on the socket API
 *    (apps/lib/services_socket.c), or on the netconn API
 *    (services_netconn.c) after "api netconn"; one thread per connection.
 *  - "console" (2): UART0 commands, polled every 10 ms (vTaskDelay).
 *  - the raw-API applications run in the core context (callbacks from
 *    whichever task holds the core lock): DHCP client, HTTP (80, httpd.c),
 *    the iperf 2 server (5001), ping (apps/lib/ping.c).
 *  - idle: WFI in the idle hook (MPS2-AN385.md pitfall 7).
 *
 * Clocks: SysTick belongs to FreeRTOS (1 kHz); wisp's clock is the tick
 * count (wisp_sys_now_ms). Microseconds (ping RTT, iperf) come from the
 * FREE_RUN counter (board_now_us; only called in the core context, so
 * from one holder of the core lock at a time).
 *
 * Console commands (UART0, one per line), as in app_bare.c:
 *   stat          pools, driver counters, service counters, heap, tasks
 *   ping A N S    ping A N times with S data bytes (fragmented above the MTU)
 *   stall MS      the driver task leaves the NIC unread for MS ms (<= 2000)
 *   api netconn|socket   stop the TCP/UDP services and start them on the
 *                 other API (same ports)
 *   seed          run seed 000 over loopback (seed000.c) and print its tables
 *   quit          wait (at most 8 s) until every pool is back at the
 *                 baseline taken once DHCP bound, report, stop every task's
 *                 work, release the lease, tear the stack down and exit
 *                 through semihosting: 0 when the pools were at baseline and
 *                 are empty after teardown, 1 otherwise.
 * Exit statuses: 0/1 as above, 2 fault or task stack overflow, 3 assertion
 * (wisp's or configASSERT), 4 bring-up failed.
 */
#define WISP_PRIVATE_ACCESS 1 /* ports/ rule of tools/check-tiers.sh; only public API is used */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "FreeRTOS.h"
#include "task.h"
#include "semphr.h"

#include "board.h"
#include "console.h"
#include "fw_rtos.h"
#include "wisp/sockets.h"
#include "services_netconn.h"
#include "services_socket.h"
#include "httpd.h"

#define FW_RX_BUDGET 16u       /* frames per core-lock hold */
#define FW_PRIO_ETH 4
#define FW_PRIO_TCPIP 3
#define FW_PRIO_CONSOLE 2
#define FW_STACK_ETH 1024u     /* words */
#define FW_STACK_CONSOLE 2048u /* words: the bench and the reports run here */
#define FW_STACK_TCPIP 4096u   /* bytes (wisp_tcpip_cfg) */
/* NVIC priority of the LAN9118 line: below (numerically above)
 * configMAX_SYSCALL_INTERRUPT_PRIORITY, since its ISR calls a FromISR
 * function. */
#define FW_ETH_IRQ_PRIO (6u << (8u - configPRIO_BITS))

enum fw_api { FW_API_SOCKET = 0, FW_API_NETCONN };

static struct fw {
    struct wisp_stack stack;
    struct wisp_netif nif;
    struct lan9118 eth;
    struct wisp_tcpip tcpip;
    struct wisp_netconn_api ncapi;
    struct wisp_sockets socks;
    struct wisp_nc_services ncsvc;
    struct wisp_sock_services sksvc;
    struct wisp_dhcp dhcp;
    struct wisp_httpd httpd;
    struct wisp_iperf_server iperf;
    struct wisp_ping ping;
    enum fw_api api;
    bool svc_up;
    unsigned baseline;
    bool have_baseline;
    size_t heap_at_baseline;
    size_t heap_per_nc_slot;
    SemaphoreHandle_t print_lock;
    TaskHandle_t eth_task;
    volatile uint32_t stall_ms;  /* console -> driver task */
    volatile bool eth_quit;      /* console -> driver task: stop serving */
    volatile bool eth_stopped;   /* driver task -> console */
    uint32_t eth_wakes;          /* driver task wake-ups */
    volatile uint32_t idle_wakes; /* idle hook: WFI sleeps ended */
    struct fw_line line;
} fw;

/* ----------------------------------------------------------- small helpers */

int fw_say(const char *fmt, ...)
{
    char buf[256];
    va_list ap;
    int n;
    va_start(ap, fmt);
    n = vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    if (fw.print_lock != NULL && xTaskGetSchedulerState() == taskSCHEDULER_RUNNING) {
        xSemaphoreTake(fw.print_lock, portMAX_DELAY);
        board_puts(buf);
        xSemaphoreGive(fw.print_lock);
    } else {
        board_puts(buf);
    }
    return n;
}

static int fw_vprint(void *ctx, const char *fmt, ...)
{
    char buf[256];
    va_list ap;
    int n;
    (void)ctx;
    va_start(ap, fmt);
    n = vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    (void)fw_say("%s", buf);
    return n;
}

uint32_t fw_cycles(void)
{
    return *(volatile uint32_t *)(MPS2_LAN9118_BASE + 0x9Cu); /* FREE_RUN */
}

static uint32_t pool_bytes_locked(void)
{
    unsigned i;
    uint32_t b = 0;
    struct wisp_pool_stats ps;
    for (i = 0; i < WISP_POOL_COUNT; i++) {
        if (wisp_stack_pool_stats(&fw.stack, i, &ps)) {
            b += (uint32_t)ps.used * ps.elem_size;
        }
    }
    return b;
}

uint32_t fw_pool_bytes(void)
{
    uint32_t b;
    wisp_tcpip_lock(&fw.tcpip);
    b = pool_bytes_locked();
    wisp_tcpip_unlock(&fw.tcpip);
    return b;
}

static unsigned pools_in_use(void)
{
    unsigned n;
    wisp_tcpip_lock(&fw.tcpip);
    n = wisp_stack_pools_in_use(&fw.stack);
    wisp_tcpip_unlock(&fw.tcpip);
    return n;
}

static uint32_t fw_clock_ms(void *ctx)
{
    (void)ctx;
    return wisp_sys_now_ms(); /* the FreeRTOS tick */
}

static uint64_t fw_clock_us(void *ctx)
{
    (void)ctx;
    return board_now_us(); /* FREE_RUN; core context only */
}

/* ------------------------------------------------------ kernel hooks, ISR */

void fw_rtos_assert(const char *file, int line)
{
    board_irq_off();
    board_printf("\nconfigASSERT at %s:%d\n", file, line);
    board_exit(3);
}

void vApplicationIdleHook(void);
void vApplicationIdleHook(void)
{
    fw.idle_wakes++;
    board_wfi(); /* SysTick (1 kHz) or the LAN9118 ends it */
}

void vApplicationStackOverflowHook(TaskHandle_t task, char *name);
void vApplicationStackOverflowHook(TaskHandle_t task, char *name)
{
    (void)task;
    board_irq_off();
    board_printf("\nstack overflow in task %s\n", name);
    board_exit(2);
}

static void eth_signal(void *ctx)
{
    BaseType_t woken = pdFALSE;
    (void)ctx;
    vTaskNotifyGiveFromISR(fw.eth_task, &woken);
    portYIELD_FROM_ISR(woken);
}

void ETH_IRQHandler(void);
void ETH_IRQHandler(void)
{
    lan9118_isr(&fw.eth);
}

/* ----------------------------------------------------------- driver task */

static void eth_task(void *arg)
{
    (void)arg;
    while (!fw.eth_quit) {
        /* the timeout only bounds a lost wake-up; the interrupt notifies */
        (void)ulTaskNotifyTake(pdTRUE, pdMS_TO_TICKS(100));
        fw.eth_wakes++;
        if (fw.stall_ms != 0u) {
            uint32_t ms = fw.stall_ms;
            fw.stall_ms = 0;
            board_nvic_disable(MPS2_LAN9118_IRQ);
            vTaskDelay(pdMS_TO_TICKS(ms));
            fw.eth.pending = 1; /* look at the FIFO now */
            board_nvic_enable(MPS2_LAN9118_IRQ);
        }
        while (fw.eth.pending && !fw.eth_quit) {
            wisp_tcpip_lock(&fw.tcpip);
            (void)lan9118_service(&fw.eth, FW_RX_BUDGET);
            wisp_tcpip_unlock(&fw.tcpip);
            if (fw.eth.pending) {
                /* more frames (budget used) or a transmitter still full:
                 * let the others run, then come back */
                if (fw.eth.tx_blocked) {
                    vTaskDelay(1);
                } else {
                    taskYIELD();
                }
            }
        }
    }
    fw.eth_stopped = true;
    vTaskSuspend(NULL);
}

/* ------------------------------------------------------- raw-API callbacks */

/* core context (the DHCP client's timer or input) */
static void dhcp_cb(void *arg, struct wisp_dhcp *d, enum wisp_dhcp_event ev)
{
    (void)arg;
    fw_print_dhcp(d, ev);
    if ((ev == WISP_DHCP_EV_BOUND || ev == WISP_DHCP_EV_RENEWED) && !fw.have_baseline) {
        fw.baseline = wisp_stack_pools_in_use(&fw.stack);
        fw.heap_at_baseline = xPortGetFreeHeapSize();
        fw.have_baseline = true;
        fw_say("fw: ready, pools in use at baseline %u, heap free %lu\n", fw.baseline,
               (unsigned long)fw.heap_at_baseline);
    }
}

/* -------------------------------------------------------------- services */

static wisp_err_t services_start(enum fw_api api)
{
    wisp_err_t err;
    if (api == FW_API_SOCKET) {
        err = wisp_sock_services_start(&fw.sksvc, NULL, NULL);
    } else {
        err = wisp_nc_services_start(&fw.ncsvc, &fw.ncapi, NULL, NULL);
    }
    if (err == WISP_OK) {
        fw.api = api;
        fw.svc_up = true;
        fw_say("fw: services echo 7 discard 9 chargen 19 (tcp, udp) on the %s API\n",
               api == FW_API_SOCKET ? "socket" : "netconn");
    }
    return err;
}

static void services_stop(void)
{
    if (!fw.svc_up) {
        return;
    }
    if (fw.api == FW_API_SOCKET) {
        wisp_sock_services_stop(&fw.sksvc);
    } else {
        wisp_nc_services_stop(&fw.ncsvc);
    }
    fw.svc_up = false;
}

static void svc_snapshot(struct wisp_nc_services_stats *out)
{
    memset(out, 0, sizeof *out);
    if (fw.api == FW_API_SOCKET) {
        struct wisp_sock_services_stats st;
        wisp_sock_services_stats(&fw.sksvc, &st);
        memcpy(out->udp, st.udp, sizeof out->udp);
        memcpy(out->tcp, st.tcp, sizeof out->tcp);
        out->threads = st.threads;
    } else {
        wisp_nc_services_stats(&fw.ncsvc, out);
    }
}

/* ------------------------------------------------------------- reporting */

static void print_services(void)
{
    struct wisp_nc_services_stats st;
    struct wisp_netconn_stats ns;
    struct wisp_tcpip_stats ts;
    struct wisp_iperf_server_stats ist;
    uint32_t http_req;
    unsigned i;
    svc_snapshot(&st);
    for (i = 0; i < WISP_TCP_SVC_COUNT; i++) {
        fw_print_tcp_service(i, &st.tcp[i]);
    }
    fw_say("svc udp echo %lu discard %lu threads %u api %s\n", (unsigned long)st.udp[WISP_UDP_SVC_ECHO].datagrams,
           (unsigned long)st.udp[WISP_UDP_SVC_DISCARD].datagrams, st.threads,
           fw.api == FW_API_SOCKET ? "socket" : "netconn");
    wisp_tcpip_lock(&fw.tcpip); /* the raw applications' counters belong to the core context */
    http_req = wisp_httpd_stats(&fw.httpd)->requests;
    ist = fw.iperf.st;
    wisp_tcpip_unlock(&fw.tcpip);
    fw_print_raw_apps(http_req, &ist);
    wisp_netconn_api_stats(&fw.ncapi, &ns);
    fw_say("netconn layer: conns high %u bufs high %u conns failed %lu bufs failed %lu accept drops %lu\n",
           (unsigned)ns.conns_high, (unsigned)ns.bufs_high, (unsigned long)ns.conns_failed,
           (unsigned long)ns.bufs_failed, (unsigned long)ns.accept_drops);
    wisp_tcpip_get_stats(&fw.tcpip, &ts);
    fw_say("stack thread: calls %lu callbacks %lu inputs %lu input drops %lu polls %lu wakes %lu\n",
           (unsigned long)ts.calls, (unsigned long)ts.callbacks, (unsigned long)ts.inputs,
           (unsigned long)ts.input_drops, (unsigned long)ts.polls, (unsigned long)ts.wakes);
}

static void print_rtos(void)
{
    fw_say("rtos: uptime_ms %lu heap free %lu min-ever free %lu of %lu, tasks %lu, driver wakes %lu, idle wakes %lu\n",
           (unsigned long)wisp_sys_now_ms(), (unsigned long)xPortGetFreeHeapSize(),
           (unsigned long)xPortGetMinimumEverFreeHeapSize(), (unsigned long)configTOTAL_HEAP_SIZE,
           (unsigned long)uxTaskGetNumberOfTasks(), (unsigned long)fw.eth_wakes, (unsigned long)fw.idle_wakes);
    fw_say("rtos stacks: never used (bytes): eth %lu of %lu, console %lu of %lu\n",
           (unsigned long)(uxTaskGetStackHighWaterMark(fw.eth_task) * sizeof(StackType_t)),
           (unsigned long)(FW_STACK_ETH * sizeof(StackType_t)),
           (unsigned long)(uxTaskGetStackHighWaterMark(NULL) * sizeof(StackType_t)),
           (unsigned long)(FW_STACK_CONSOLE * sizeof(StackType_t)));
}

/* "stat", and the final report: pools, driver, services, kernel */
static void stat_cmd(void)
{
    wisp_tcpip_lock(&fw.tcpip);
    fw_print_pools(&fw.stack);
    wisp_tcpip_unlock(&fw.tcpip);
    fw_print_driver(&fw.eth);
    print_services();
    print_rtos();
}

/* -------------------------------------------------------------- console */

static void ping_cmd(const char *args)
{
    struct wisp_ping_cfg cfg;
    wisp_err_t err;
    if (!fw_ping_parse(args, &cfg, fw_clock_us)) {
        return;
    }
    wisp_tcpip_lock(&fw.tcpip);
    wisp_ping_stop(&fw.ping); /* a run still going ends here */
    err = wisp_ping_start_cfg(&fw.ping, &fw.stack, &cfg);
    wisp_tcpip_unlock(&fw.tcpip);
    if (err != WISP_OK) {
        fw_say("fw: ping failed to start: %s\n", wisp_err_str(err));
    }
}

static void api_cmd(const char *name)
{
    enum fw_api want;
    wisp_err_t err;
    if (strcmp(name, "socket") == 0) {
        want = FW_API_SOCKET;
    } else if (strcmp(name, "netconn") == 0) {
        want = FW_API_NETCONN;
    } else {
        fw_say("fw: usage: api netconn|socket\n");
        return;
    }
    services_stop();
    err = services_start(want);
    if (err != WISP_OK) {
        fw_say("fw: services failed to start on the %s API: %s\n", name, wisp_err_str(err));
    }
}

static void seed_cmd(void)
{
    struct seed000_env env;
    int bad;
    env.tcpip = &fw.tcpip;
    env.api = &fw.ncapi;
    env.heap_per_netconn_slot = fw.heap_per_nc_slot;
    bad = seed000_run(&env);
    fw_say("seed000: done, %d failed steps\n", bad);
}

static bool command(const char *cmd)
{
    if (strcmp(cmd, "stat") == 0) {
        stat_cmd();
    } else if (strncmp(cmd, "stall ", 6) == 0) {
        uint32_t ms = fw_stall_ms(cmd + 6);
        if (ms == 0u) {
            ms = 1u;
        }
        fw.stall_ms = ms;
        xTaskNotifyGive(fw.eth_task);
        fw_say("fw: stall %lu ms\n", (unsigned long)ms);
    } else if (strncmp(cmd, "ping ", 5) == 0) {
        ping_cmd(cmd + 5);
    } else if (strncmp(cmd, "api ", 4) == 0) {
        api_cmd(cmd + 4);
    } else if (strcmp(cmd, "seed") == 0) {
        seed_cmd();
    } else if (strcmp(cmd, "quit") == 0) {
        return true;
    } else if (cmd[0] != '\0') {
        fw_say("fw: unknown command '%s'\n", cmd);
    }
    return false;
}

/* ------------------------------------------------------------ bring-up */

/* Core context, on the stack thread before wisp_tcpip_start returns. */
static wisp_err_t core_init(struct wisp_stack *s, void *arg)
{
    struct wisp_dhcp_cfg dcfg;
    struct wisp_iperf_server_cfg icfg;
    wisp_err_t err;
    (void)arg;
    err = wisp_netif_add_eth(s, &fw.nif, "eth0", &fw.eth.dev, fw.eth.mac, 1500);
    if (err != WISP_OK) {
        return err;
    }
    wisp_netif_set_up(&fw.nif, true);
    wisp_netif_set_link(&fw.nif, lan9118_link_up(&fw.eth));
    err = wisp_httpd_start(&fw.httpd, s, 80);
    if (err != WISP_OK) {
        return err;
    }
    fw_iperf_cfg(&icfg, fw_clock_us);
    err = wisp_iperf_server_start(s, &fw.iperf, &icfg);
    if (err != WISP_OK) {
        return err;
    }
    fw_dhcp_cfg(&dcfg, "wisp-mps2-rtos");
    return wisp_dhcp_start(&fw.dhcp, &fw.nif, &dcfg, dhcp_cb, NULL);
}

static int start(void)
{
    static const uint8_t fallback_mac[6] = { 0x02, 0x00, 0x5e, 0x18, 0x00, 0x03 };
    struct wisp_config cfg;
    struct wisp_tcpip_cfg tcfg;
    wisp_err_t err;
    size_t h0;

    err = lan9118_init(&fw.eth, MPS2_LAN9118_BASE, &fw.stack, fallback_mac);
    if (err != WISP_OK) {
        fw_say("fw: lan9118 init failed: %s\n", wisp_err_str(err));
        return 4;
    }
    board_clock_start(); /* after the reset: it restarts FREE_RUN */
    fw.eth.signal = eth_signal;
    memset(&cfg, 0, sizeof cfg);
    cfg.now_ms = fw_clock_ms;
    /* No TRNG on this board: the seed mixes the MAC with the boot time.
     * Good enough for a test image, not for production (stack.h). */
    cfg.seed = ((uint64_t)fw.eth.mac[5] << 40) ^ ((uint64_t)fw.eth.mac[4] << 32) ^ board_ticks() ^ 0x5eed7105u;
    if (wisp_stack_init(&fw.stack, &cfg) != WISP_OK || wisp_sys_init() != WISP_OK) {
        return 4;
    }
    fw_print_mac(&fw.eth);
    memset(&tcfg, 0, sizeof tcfg);
    tcfg.stack_size = FW_STACK_TCPIP;
    tcfg.prio = FW_PRIO_TCPIP;
    tcfg.init = core_init;
    err = wisp_tcpip_start(&fw.tcpip, &fw.stack, &tcfg);
    if (err != WISP_OK) {
        fw_say("fw: stack thread failed to start: %s\n", wisp_err_str(err));
        return 4;
    }
    h0 = xPortGetFreeHeapSize();
    err = wisp_netconn_api_init(&fw.ncapi, &fw.tcpip);
    if (err == WISP_OK) {
        fw.heap_per_nc_slot = (h0 - xPortGetFreeHeapSize()) / WISP_NETCONN_COUNT;
        err = wisp_sockets_init(&fw.socks, &fw.ncapi);
    }
    if (err == WISP_OK) {
        err = services_start(FW_API_SOCKET);
    }
    if (err != WISP_OK) {
        fw_say("fw: netconn/socket layer or services failed to start: %s\n", wisp_err_str(err));
        return 4;
    }
    /* the driver task exists before the interrupt can fire */
    *(volatile uint8_t *)(0xE000E400u + MPS2_LAN9118_IRQ) = (uint8_t)FW_ETH_IRQ_PRIO;
    wisp_tcpip_lock(&fw.tcpip);
    lan9118_irq_start(&fw.eth);
    wisp_tcpip_unlock(&fw.tcpip);
    board_nvic_enable(MPS2_LAN9118_IRQ);
    fw_say("fw: http 80 iperf 5001 (raw API, core context); netconn heap per slot %lu bytes; waiting for DHCP\n",
           (unsigned long)fw.heap_per_nc_slot);
    return 0;
}

/* quit: the pools back at baseline (bounded wait), report, teardown. */
static int finish(void)
{
    uint32_t t0 = wisp_sys_now_ms();
    unsigned in_use = pools_in_use();
    bool at_base;
    int left;
    while (fw.have_baseline && in_use > fw.baseline && wisp_sys_now_ms() - t0 < FW_QUIT_WAIT_MS) {
        vTaskDelay(pdMS_TO_TICKS(20));
        in_use = pools_in_use();
    }
    at_base = fw.have_baseline && in_use == fw.baseline;
    fw_say("fw: report after %lu ms of uptime\n", (unsigned long)wisp_sys_now_ms());
    stat_cmd();
    wisp_tcpip_lock(&fw.tcpip);
    wisp_stack_dump(&fw.stack, fw_vprint, NULL, false);
    wisp_tcpip_unlock(&fw.tcpip);
    fw_say("pools: in use %u, baseline %u: %s\n", in_use, fw.baseline, at_base ? "at baseline" : "NOT at baseline");

    services_stop();
    left = wisp_sockets_deinit();
    if (left != 0) {
        fw_say("fw: %d sockets still open at stop\n", left);
        at_base = false;
    }
    if (wisp_netconn_api_deinit(&fw.ncapi) != WISP_OK) {
        fw_say("fw: netconns or netbufs still in use at stop\n");
        at_base = false;
    }
    wisp_tcpip_lock(&fw.tcpip);
    wisp_ping_stop(&fw.ping);
    wisp_iperf_server_stop(&fw.iperf);
    wisp_httpd_stop(&fw.httpd);
    wisp_dhcp_stop(&fw.dhcp, true);
    (void)lan9118_service(&fw.eth, FW_RX_BUDGET); /* the RELEASE went out; pop its status */
    wisp_tcpip_unlock(&fw.tcpip);
    /* the driver task stops touching the stack before the stack thread ends */
    board_nvic_disable(MPS2_LAN9118_IRQ);
    fw.eth_quit = true;
    xTaskNotifyGive(fw.eth_task);
    for (t0 = wisp_sys_now_ms(); !fw.eth_stopped && wisp_sys_now_ms() - t0 < 1000u;) {
        vTaskDelay(1);
    }
    wisp_tcpip_stop(&fw.tcpip);
    wisp_netif_remove(&fw.nif);
    wisp_stack_deinit(&fw.stack);
    in_use = wisp_stack_pools_in_use(&fw.stack);
    vTaskDelay(pdMS_TO_TICKS(20)); /* the idle task frees the stacks of ended threads */
    fw_say("rtos: heap free %lu at exit, %lu at baseline (the service threads and the netconn layer's kernel objects "
           "are gone now), min-ever free %lu\n",
           (unsigned long)xPortGetFreeHeapSize(), (unsigned long)fw.heap_at_baseline,
           (unsigned long)xPortGetMinimumEverFreeHeapSize());
    if (in_use == 0 && at_base) {
        fw_say("pools: all back at baseline\n");
        return 0;
    }
    fw_say("pools: LEAK, %u elements in use after teardown\n", in_use);
    return 1;
}

static void console_task(void *arg)
{
    int rc;
    bool quit = false;
    (void)arg;
    rc = start();
    if (rc != 0) {
        board_exit(rc);
    }
    while (!quit) {
        vTaskDelay(pdMS_TO_TICKS(10));
        while (!quit && fw_line_poll(&fw.line)) {
            quit = command(fw.line.buf);
        }
    }
    rc = finish();
    fw_say("fw: exit %d\n", rc);
    board_exit(rc);
}

int main(void)
{
    board_uart_init();
    board_printf("\nwisp mps2-an385 FreeRTOS firmware (Cortex-M3, FreeRTOS %s ARM_CM3 heap_4, netconn + sockets)\n",
                 tskKERNEL_VERSION_NUMBER);
    fw.print_lock = xSemaphoreCreateMutex();
    if (fw.print_lock == NULL ||
        xTaskCreate(eth_task, "eth", FW_STACK_ETH, NULL, FW_PRIO_ETH, &fw.eth_task) != pdPASS ||
        xTaskCreate(console_task, "console", FW_STACK_CONSOLE, NULL, FW_PRIO_CONSOLE, NULL) != pdPASS) {
        board_printf("fw: cannot create the first tasks\n");
        return 4;
    }
    vTaskStartScheduler(); /* does not return: SysTick, PendSV and SVC are the kernel's now */
    return 4;
}
