#!/usr/bin/env bash
# test_fw_slirp.sh -- the bare-metal mps2-an385 firmware (ports/mps2) in
# QEMU against QEMU's own user-mode network (slirp, restrict=on: no way
# out, 198.18.70.0/24): the firmware boots, gets its address from slirp's
# DHCP server (198.18.70.15, no router with restrict=on), pings slirp's own
# address 198.18.70.2 (5 plain requests, 3 of 3000 bytes: fragmented both
# ways, reassembled by each side), idles in WFI (fewer than 300 main-loop
# passes a second, nearly all ending in WFI), answers console commands, and on "quit"
# reports its pools back at baseline and ends QEMU
# through semihosting with status 0. The pcap of every frame decodes clean
# (tshark). No root needed and nothing configured on the host.
#
# Usage: test_fw_slirp.sh PATH-TO-wisp-node   (its build directory gets the
# firmware build; exit 77 = skipped: no cross compiler or QEMU)
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/fw_lib.sh"

IT_NODE=${1:-}
[ -n "$IT_NODE" ] || it_fail "usage: $0 PATH-TO-wisp-node"
command -v tshark >/dev/null 2>&1 || it_fail "tshark missing"
IT_DIR=$(mktemp -d "/tmp/wisp-it-$IT_NAME.XXXXXX") || it_fail "mktemp"
trap it_cleanup EXIT
trap 'exit 130' INT TERM
t0=$(date +%s)

fw_build "$IT_NODE"
FW_MAX_S=120
fw_start "$IT_DIR/slirp.pcap" -- user,id=n0,net=198.18.70.0/24,restrict=on
fw_wait_ready 30
[ "$FW_ADDR" = 198.18.70.15 ] || it_fail "slirp leased $FW_ADDR, want 198.18.70.15"
fw_idle 3
it_log "FIGURES idle firmware: $FW_IDLE_RATE main-loop passes a second, each ending in WFI; QEMU used $FW_IDLE_SHARE % of a host CPU"
fw_ping 198.18.70.2 5 56
fw_ping 198.18.70.2 3 3000
fw_cmd stat
it_wait_line "$IT_NODE_LOG" '^lan9118: ' 10 || it_fail "no answer to 'stat'"
fw_quit
grep -q 'fw: dhcp bound 198.18.70.15/24 gw 0.0.0.0' <(tr -d '\r' <"$IT_NODE_LOG") || it_fail "lease line"
n=$(it_pcap_count "$IT_DIR/slirp.pcap" 'dhcp.option.dhcp == 7')
[ "$n" -ge 1 ] || it_fail "no DHCPRELEASE in the capture after quit"
it_pcap_clean "$IT_DIR/slirp.pcap"
it_log "FIGURES wall time $(( $(date +%s) - t0 )) s"
it_pass
