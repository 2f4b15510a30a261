#!/usr/bin/env bash
# test_fw_tap.sh -- the bare-metal mps2-an385 firmware (ports/mps2: wisp on
# a Cortex-M3, no OS, raw API, interrupt-driven LAN9118 driver) in QEMU,
# against the Linux kernel and Debian tools over a TAP inside a network
# namespace the test creates (lib.sh):
#  - DHCP from dnsmasq on the tap (198.18.0.100-150);
#  - ping, and a fragmented ping (-s 3000: three fragments each way), from
#    Linux and from the firmware (console "ping", apps/lib/ping.c);
#  - TCP echo of 4 MB (SHA-256 of what came back = of what was sent),
#    4 echo transfers at once, 300 connections opened and closed in turn;
#  - chargen: 1 MB checked against the RFC 864 pattern;
#  - HTTP GET with curl: / and the 1 MiB /big.bin (SHA-256 of the
#    generated reference);
#  - iperf 2 TCP both ways (-c, then -r: the firmware connects back);
#  - RX FIFO drops: 3 parallel 1 MB echoes while the firmware, told over its console,
#    leaves the NIC unread for 200 ms every 0.8 s; QEMU's 10 KiB RX FIFO
#    overflows and drops frames silently (MPS2-AN385.md), TCP recovers:
#    the hash still matches. Dropped = frames to the firmware in the pcap
#    (recorded before the NIC model) minus the frames its driver read, over
#    that phase; must be > 0, so the recovery was exercised;
#  - "quit": the firmware reports its pools' high-water marks, waits until
#    every pool is back at the baseline taken after DHCP, releases the
#    lease, tears down and exits through semihosting with status 0;
#  - the pcap of every frame (QEMU filter-dump) decodes clean in tshark
#    (no malformed frames, no bad checksums).
# Figures are logged ("FIGURES"); QEMU speed says nothing about an MCU.
#
# Bounds: the firmware build <= FW_BUILD_S (300 s); QEMU and dnsmasq live
# <= FW_MAX_S = 600 s, the sum of the step bounds below (about 580 s) plus
# a margin (tcppeer.py's own socket timeout, 30 s, stays under every bound);
# a normal run takes about a minute.
#
# Usage: test_fw_tap.sh PATH-TO-wisp-node   (root; 77 = skipped)
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/fw_lib.sh"
FW_MAX_S=600
it_init "$@"
it_python
fw_tap_boot "$IT_NODE"
A=$FW_ADDR

# --- ping, plain and fragmented, both ways
fw_tap_pings 5 3

# --- TCP echo, parallel echo, many connections, chargen
fw_tcp_step 60 "echo 4 MB" echo "$A" 7 4000000
fw_tcp_step 45 "echo 4 x 256 KB parallel" echo-parallel "$A" 7 4 262144
fw_tcp_step 45 "300 connections" conns "$A" 7 300
fw_tcp_step 45 "chargen 1 MB" chargen "$A" 19 1000000

# --- HTTP
fw_tap_http

# --- iperf 2, both directions
fw_tap_iperf 3

# --- RX FIFO overflow: stalls while 3 connections echo 1 MB each (3 receive
# windows of 8 KiB outrun the 10 KiB FIFO while the NIC is not read; one
# window alone fits, wisp_opts_mps2.h). Drops of this phase:
# frames to the firmware in the pcap minus frames its driver read, both
# counted before and after ("stat" on the console).
fw_stall_phase fw_loop_stat 0.4 60 "echo 3 x 1 MB parallel with RX stalls" echo-parallel "$A" 7 3 1000000
[ "$FW_PHASE_DROPS" -gt 0 ] || it_fail "no frame dropped during the stalls: the recovery was not exercised"

# --- quit: report, pools, semihosting exit; frames, lease release, pcap
fw_quit
fw_tap_end
