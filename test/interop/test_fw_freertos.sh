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
t0=$(date +%s)
DNSMASQ=/usr/sbin/dnsmasq
[ -x "$DNSMASQ" ] || it_fail "dnsmasq not installed (Debian: dnsmasq-base)"
command -v iperf >/dev/null 2>&1 || it_fail "iperf (2) not installed (Debian package iperf)"
command -v curl >/dev/null 2>&1 || it_fail "curl not installed"
fw_build "$IT_NODE"
PCAP="$IT_DIR/fw.pcap"
DLOG="$IT_DIR/dnsmasq.log"

it_bg_start "$DLOG" "$FW_MAX_S" "$DNSMASQ" --no-daemon --conf-file=/dev/null --user=root \
    --no-resolv --no-hosts --port=0 --interface="$IT_TAP" --bind-interfaces --pid-file="$IT_DIR/dnsmasq.pid" \
    --dhcp-range=198.18.0.100,198.18.0.150,255.255.255.0,10m \
    --dhcp-leasefile="$IT_DIR/dnsmasq.leases" --dhcp-option=option:router,"$IT_LINUX_IP" --log-dhcp
it_wait_line "$DLOG" 'DHCP, IP range' 10 || it_fail "dnsmasq did not start: $(tail -n 5 "$DLOG")"

t_q=$(date +%s)
fw_start "$PCAP" ip netns exec "$IT_NS" -- tap,id=n0,ifname="$IT_TAP",script=no,downscript=no
fw_wait_ready 40
A=$FW_ADDR
case "$A" in 198.18.0.1[0-4][0-9] | 198.18.0.150) ;; *) it_fail "leased address $A outside the dnsmasq range" ;; esac
grep -q "DHCPACK(.*) $A" "$DLOG" || it_fail "dnsmasq log shows no DHCPACK for $A"
tr -d '\r' <"$IT_NODE_LOG" | grep -q '^fw: services .* on the socket API$' || it_fail "no socket services line"
MAC=$(tr -d '\r' <"$IT_NODE_LOG" | sed -nE 's/^fw: lan9118 mac ([0-9a-f:]+) .*/\1/p' | head -n 1)
t_boot=$(( $(date +%s) - t_q ))

# --- ping, plain and fragmented, both ways
out=$(it_ns_t 20 ping -n -c 5 -i 0.2 -W 3 "$A" 2>&1) || it_fail "ping: $(echo "$out" | tail -n 2)"
echo "$out" | grep -q ' 5 received' || it_fail "ping: $(echo "$out" | grep received)"
rtt=$(echo "$out" | sed -nE 's/^rtt .* = ([0-9.]+)\/([0-9.]+)\/.*/\2/p')
out=$(it_ns_t 20 ping -n -c 3 -i 0.3 -s 3000 -W 3 "$A" 2>&1) || it_fail "ping -s 3000: $(echo "$out" | tail -n 2)"
echo "$out" | grep -q ' 3 received' || it_fail "ping -s 3000: $(echo "$out" | grep received)"
it_log "ping: 5/5, avg rtt $rtt ms; ping -s 3000 (fragmented): 3/3"
fw_ping "$IT_LINUX_IP" 3 56
fw_ping "$IT_LINUX_IP" 2 3000

tcp_step() { # SECONDS WHAT ARGS...
    local t=$1 what=$2 s e
    shift 2
    s=$(date +%s.%N)
    it_peer "$t" "$@" || it_fail "$what failed"
    e=$(date +%s.%N)
    it_log "FIGURES $what: $(echo "$s $e" | awk '{printf "%.1f s", $2 - $1}')"
}

# --- socket API services
tcp_step 60 "socket API: echo 4 MB" echo "$A" 7 4000000
tcp_step 45 "socket API: echo 4 x 256 KB parallel" echo-parallel "$A" 7 4 262144
tcp_step 45 "socket API: 150 connections" conns "$A" 7 150
tcp_step 45 "socket API: chargen 1 MB" chargen "$A" 19 1000000

# --- HTTP (raw API in the core context)
CURL=(curl --noproxy '*' -s --max-time 30)
code=$(it_ns_t 40 "${CURL[@]}" -o "$IT_DIR/index.html" -w '%{http_code}' "http://$A/") || it_fail "curl /"
[ "$code" = 200 ] && [ -s "$IT_DIR/index.html" ] || it_fail "GET /: $code"
"$IT_PY" - "$IT_DIR/big.want" <<'PY' || it_fail "cannot generate the reference file"
import sys
words = bytearray()
for k in range(262144):
    words += (((k * 0x9E3779B1) + 0x7F4A7C15) & 0xFFFFFFFF).to_bytes(4, "big")
open(sys.argv[1], "wb").write(words)
PY
out=$(it_ns_t 40 "${CURL[@]}" -o "$IT_DIR/big.got" -w '%{http_code} %{size_download} %{time_total}' \
    "http://$A/big.bin") || it_fail "curl /big.bin"
read -r code size t_total <<<"$out"
[ "$code" = 200 ] && [ "$size" = 1048576 ] || it_fail "/big.bin: status $code, $size bytes"
[ "$(sha256sum <"$IT_DIR/big.want")" = "$(sha256sum <"$IT_DIR/big.got")" ] || it_fail "/big.bin content differs"
it_log "HTTP: GET / 200; GET /big.bin 1048576 bytes, SHA-256 ok; FIGURES /big.bin ${t_total} s"

# --- iperf 2 from Linux (raw API in the core context)
it_ns_t 20 iperf -c "$A" -t 2 -f b >"$IT_DIR/iperf1.log" 2>&1 || it_fail "iperf -c: $(tail -n 3 "$IT_DIR/iperf1.log")"
it_wait_line "$IT_NODE_LOG" '^fw: iperf server tcp from ' 10 || it_fail "no iperf result on the firmware"
up=$(sed -nE 's/.* ([0-9]+) bits\/sec.*/\1/p' "$IT_DIR/iperf1.log" | tail -n 1)
it_ns_t 30 iperf -c "$A" -r -t 2 -f b >"$IT_DIR/iperf2.log" 2>&1 || it_fail "iperf -c -r: $(tail -n 3 "$IT_DIR/iperf2.log")"
it_wait_line "$IT_NODE_LOG" '^fw: iperf reverse tcp to ' 15 || it_fail "no reverse iperf stream"
rev=$(tr -d '\r' <"$IT_NODE_LOG" | sed -nE 's/^fw: iperf reverse tcp to [0-9.]+: ([0-9]+) bytes.*/\1/p' | head -n 1)
tr -d '\r' <"$IT_NODE_LOG" | grep -q '^fw: iperf reverse .*(ended)' && it_fail "reverse stream did not end cleanly"
[ "${rev:-0}" -gt 0 ] || it_fail "reverse stream sent nothing"
it_log "iperf: FIGURES Linux -> firmware $(awk -v b="${up:-0}" 'BEGIN{printf "%.1f", b/1e6}') Mbit/s; firmware -> Linux (-r) $rev bytes"

FW_SEEN="" FW_UP="" FW_IDLE=""
fw_rx_seen() { # sets FW_SEEN (frames read by the driver), FW_UP (uptime ms), FW_IDLE (idle wake-ups) from a fresh "stat"
    local n
    n=$(grep -c '^rtos:' "$IT_NODE_LOG")
    fw_cmd stat
    for _ in $(seq 1 100); do
        [ "$(grep -c '^rtos:' "$IT_NODE_LOG")" -gt "$n" ] && break
        sleep 0.1
    done
    [ "$(grep -c '^rtos:' "$IT_NODE_LOG")" -gt "$n" ] || it_fail "no answer to 'stat'"
    FW_SEEN=$(( $(fw_drv rx_frames) + $(fw_drv rx_errors) + $(fw_drv rx_nomem) ))
    read -r FW_UP FW_IDLE <<<"$(tr -d '\r' <"$IT_NODE_LOG" | grep '^rtos:' | tail -n 1 |
        awk '{ for (i = 2; i < NF; i++) { if ($i == "uptime_ms") u = $(i + 1); if ($i == "idle" && $(i + 1) == "wakes") w = $(i + 2) } } END { print u, w }')"
}

# --- idle: the idle hook sleeps in WFI, so an idle image wakes about once
# per tick (1 kHz) plus once per interrupt; an idle task that spins would
# run its hook millions of times a second. Counted by the firmware itself.
fw_rx_seen
up0=$FW_UP idle0=$FW_IDLE
sleep 2
fw_rx_seen
rate=$(( (FW_IDLE - idle0) * 1000 / (FW_UP - up0) ))
it_log "FIGURES idle firmware: $rate idle-hook wake-ups a second (tick 1000 Hz)"
[ "$rate" -lt 3000 ] || it_fail "idle firmware ran its idle hook $rate times a second (no WFI?)"

# --- RX FIFO overflow while the driver task is told to stall
fw_rx_seen
seen0=$FW_SEEN
sent0=$(it_pcap_count "$PCAP" "eth.src != $MAC")
(
    for _ in $(seq 1 100); do
        printf 'stall 200\r' >&7
        sleep 0.6
    done
) &
STALL_PID=$!
IT_BG_PIDS="$IT_BG_PIDS $STALL_PID"
tcp_step 60 "socket API: echo 3 x 512 KB parallel with RX stalls" echo-parallel "$A" 7 3 524288
kill "$STALL_PID" 2>/dev/null
wait "$STALL_PID" 2>/dev/null
sleep 0.5 # the last stall ends
fw_rx_seen
sent1=$(it_pcap_count "$PCAP" "eth.src != $MAC")
stalls=$(tr -d '\r' <"$IT_NODE_LOG" | grep -c '^fw: stall ')
it_log "FIGURES stall phase: $stalls RX stalls of 200 ms, $((sent1 - sent0)) frames to the firmware, $(( (sent1 - sent0) - (FW_SEEN - seen0) )) dropped by the RX FIFO; every byte echoed (hash above)"
[ "$stalls" -gt 0 ] || it_fail "no stall acknowledged by the firmware"

# --- the same services on the netconn API
fw_cmd "api netconn"
it_wait_line "$IT_NODE_LOG" '^fw: services .* on the netconn API' 10 || it_fail "services did not restart on netconn"
tcp_step 60 "netconn API: echo 2 MB" echo "$A" 7 2000000
tcp_step 45 "netconn API: 100 connections" conns "$A" 7 100
tcp_step 45 "netconn API: chargen 512 KB" chargen "$A" 19 512000

# --- quit: report, pools, semihosting exit
fw_quit
tr -d '\r' <"$IT_NODE_LOG" | sed -n '/^fw: report/,$p' | grep -E '^rtos( stacks)?: ' | while IFS= read -r l; do it_log "fw: $l"; done
sent=$(it_pcap_count "$PCAP" "eth.src != $MAC")
seen=$(( $(fw_drv rx_frames) + $(fw_drv rx_errors) + $(fw_drv rx_nomem) ))
it_log "FIGURES whole run: frames to the firmware $sent (pcap), read by its driver $seen, $((sent - seen)) dropped by the RX FIFO; RX FIFO high-water $(fw_drv rx_fifo_high) bytes"
it_wait_line "$DLOG" "DHCPRELEASE\(.*\) $A" 5 || it_fail "dnsmasq saw no DHCPRELEASE"
it_pcap_tcp_check "$PCAP" any
it_log "pcap: $IT_TCP_STATS"
it_log "FIGURES boot to lease ${t_boot} s, wall time $(( $(date +%s) - t0 )) s"
it_pass
