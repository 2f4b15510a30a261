#!/usr/bin/env bash
# test_fw_freertos.sh -- the FreeRTOS mps2-an385 firmware (ports/mps2/
# app_freertos.c: FreeRTOS ARM_CM3 + heap_4, wisp's stack thread, the
# LAN9118 driver task, TCP/UDP services as application threads on the
# socket API and then on the netconn API, HTTP/iperf/DHCP on the raw API in
# the core context) in QEMU, against the Linux kernel and Debian tools over
# a TAP inside a network namespace the test creates (lib.sh). The checks of
# test_fw_tap.sh (the bare-metal image), in less time:
#  - DHCP from dnsmasq on the tap (198.18.0.100-150);
#  - ping, and a fragmented ping (-s 3000), from Linux and from the
#    firmware (console "ping", apps/lib/ping.c, run in the core context);
#  - socket API services: TCP echo of 4 MB (SHA-256), 4 echo transfers at
#    once, 150 connections opened and closed in turn, chargen 1 MB checked
#    against the RFC 864 pattern;
#  - HTTP GET with curl: / and the 1 MiB /big.bin (SHA-256);
#  - iperf 2 TCP from Linux (-t 2) and back (-r: the firmware connects);
#  - idle: fewer than 3000 idle-hook wake-ups a second (WFI; tick 1 kHz);
#  - RX FIFO drops: 3 parallel 512 KB echoes while the driver task, told
#    over the console, leaves the NIC unread for 200 ms every 0.6 s; every
#    byte still arrives (hash);
#  - "api netconn": the services restart on the netconn API (same ports):
#    echo 2 MB (SHA-256), 100 connections, chargen 512 KB;
#  - "quit": pool high-water marks reported, every pool back at the
#    baseline taken after DHCP, the lease released, the stack torn down,
#    exit through semihosting with status 0; the pcap of every frame
#    decodes clean in tshark.
# Figures are logged ("FIGURES"); QEMU speed says nothing about an MCU.
#
# Bounds: the firmware build <= FW_BUILD_S (300 s, shared with the bare
# image: one tools/fw-build.sh builds both); QEMU and dnsmasq live <=
# FW_MAX_S = 400 s, the sum of the step bounds below plus a margin; a
# normal run takes about a minute after the build.
#
# Usage: test_fw_freertos.sh PATH-TO-wisp-node   (root; 77 = skipped: no
# cross compiler, QEMU, or FreeRTOS kernel)
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/fw_lib.sh"
FW_MAX_S=400
FW_IMAGE=freertos
it_init "$@"
it_python
fw_tap_boot "$IT_NODE"
A=$FW_ADDR
tr -d '\r' <"$IT_NODE_LOG" | grep -q '^fw: services .* on the socket API$' || it_fail "no socket services line"

# --- ping, plain and fragmented, both ways
fw_tap_pings 3 2

# --- socket API services
fw_tcp_step 60 "socket API: echo 4 MB" echo "$A" 7 4000000
fw_tcp_step 45 "socket API: echo 4 x 256 KB parallel" echo-parallel "$A" 7 4 262144
fw_tcp_step 45 "socket API: 150 connections" conns "$A" 7 150
fw_tcp_step 45 "socket API: chargen 1 MB" chargen "$A" 19 1000000

# --- HTTP (raw API in the core context)
fw_tap_http

# --- iperf 2 from Linux and back (raw API in the core context)
fw_tap_iperf 2

FW_UP="" FW_IDLE=""
fw_rtos_stat() { # sets FW_UP (uptime ms), FW_IDLE (idle wake-ups) from a fresh "stat"; fw_drv reads its driver line
    fw_stat '^rtos:'
    read -r FW_UP FW_IDLE <<<"$(echo "$FW_STAT_LINE" |
        awk '{ for (i = 2; i < NF; i++) { if ($i == "uptime_ms") u = $(i + 1); if ($i == "idle" && $(i + 1) == "wakes") w = $(i + 2) } } END { print u, w }')"
}

# --- idle: the idle hook sleeps in WFI, so an idle image wakes about once
# per tick (1 kHz) plus once per interrupt; an idle task that spins would
# run its hook millions of times a second. Counted by the firmware itself.
fw_rtos_stat
up0=$FW_UP idle0=$FW_IDLE
sleep 2
fw_rtos_stat
rate=$(( (FW_IDLE - idle0) * 1000 / (FW_UP - up0) ))
it_log "FIGURES idle firmware: $rate idle-hook wake-ups a second (tick 1000 Hz)"
[ "$rate" -lt 3000 ] || it_fail "idle firmware ran its idle hook $rate times a second (no WFI?)"

# --- RX FIFO overflow while the driver task is told to stall
fw_stall_phase fw_rtos_stat 0.6 60 "socket API: echo 3 x 512 KB parallel with RX stalls" echo-parallel "$A" 7 3 524288
[ "$FW_STALLS" -gt 0 ] || it_fail "no stall acknowledged by the firmware"

# --- the same services on the netconn API
fw_cmd "api netconn"
it_wait_line "$IT_NODE_LOG" '^fw: services .* on the netconn API' 10 || it_fail "services did not restart on netconn"
fw_tcp_step 60 "netconn API: echo 2 MB" echo "$A" 7 2000000
fw_tcp_step 45 "netconn API: 100 connections" conns "$A" 7 100
fw_tcp_step 45 "netconn API: chargen 512 KB" chargen "$A" 19 512000

# --- quit: report, pools, semihosting exit; frames, lease release, pcap
fw_quit
tr -d '\r' <"$IT_NODE_LOG" | sed -n '/^fw: report/,$p' | grep -E '^rtos( stacks)?: ' | while IFS= read -r l; do it_log "fw: $l"; done
fw_tap_end
