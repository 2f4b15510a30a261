/**
 * @file console.h
 * The console of the mps2-an385 firmware images (app_bare.c,
 * app_freertos.c): what both print and parse on UART0 -- the line reader,
 * the "ping" and "stall" arguments, the DHCP, iperf and ping reports, the
 * pool, driver and service counters of "stat" and of the final report, and
 * the configurations of the raw-API applications both run (DHCP, iperf).
 * The tests (test/interop/test_fw_*.sh) read these lines.
 *
 * Each image provides fw_say (the bare image prints straight to UART0; the
 * FreeRTOS one serialises tasks with a mutex). Functions that read the
 * stack run in its core context (the FreeRTOS image holds the core lock).
 * Not part of the wisp library.
 */
#ifndef WISP_MPS2_CONSOLE_H
#define WISP_MPS2_CONSOLE_H

#include <stdbool.h>
#include <stdint.h>

#include "lan9118.h"
#include "wisp/wisp.h"
#include "wisp/dhcp.h"
#include "services.h"
#include "iperf.h"
#include "ping.h"

#define FW_QUIT_WAIT_MS 8000u  /* > httpd linger (2 s) and iperf linger (5 s) */
#define FW_STALL_MAX_MS 2000u

/** printf to the console (provided by the image). */
int fw_say(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/** A console line being typed. */
struct fw_line {
    char buf[48];
    unsigned len;
};

/** Read the waiting console bytes into l; true when a line ended (CR or
 *  LF): l->buf holds it, NUL-terminated, until the next call. Bytes past
 *  the buffer's size are dropped. */
bool fw_line_poll(struct fw_line *l);

/** "ping A N S": fill cfg (count 1..100, size 0..8000, 200 ms apart, the
 *  "fw: ping done" report at the end, RTT from now_us); false (usage
 *  printed) when the arguments are bad. */
bool fw_ping_parse(const char *args, struct wisp_ping_cfg *cfg, uint64_t (*now_us)(void *ctx));

/** "stall MS": the milliseconds, at most FW_STALL_MAX_MS. */
uint32_t fw_stall_ms(const char *args);

/** DHCP client configuration of the images (1 s initial delay). */
void fw_dhcp_cfg(struct wisp_dhcp_cfg *c, const char *hostname);
/** The "fw: dhcp ..." line of an event. */
void fw_print_dhcp(struct wisp_dhcp *d, enum wisp_dhcp_event ev);

/** iperf 2 server configuration: TCP and UDP, -r/-d honoured, results
 *  reported as "fw: iperf ..." lines. */
void fw_iperf_cfg(struct wisp_iperf_server_cfg *c, wisp_iperf_clock_fn clock);

/** "fw: lan9118 mac ..." (where the address came from, the link). */
void fw_print_mac(struct lan9118 *eth);
/** "pool ..." lines (core context). */
void fw_print_pools(struct wisp_stack *s);
/** The "lan9118: ..." counters line. */
void fw_print_driver(const struct lan9118 *eth);
/** "svc tcp NAME ..." of the TCP service i (WISP_TCP_SVC_*, < WISP_TCP_SVC_COUNT). */
void fw_print_tcp_service(unsigned i, const struct wisp_tcp_service_stats *t);
/** "httpd requests ..." and "iperf ..." counters. */
void fw_print_raw_apps(uint32_t http_requests, const struct wisp_iperf_server_stats *ist);

#endif /* WISP_MPS2_CONSOLE_H */
