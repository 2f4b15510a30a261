#!/usr/bin/env bash
# test_fw_slirp.sh -- the bare-metal mps2-an385 firmware (ports/mps2) in
# QEMU against QEMU's own user-mode network (slirp, restrict=on: no way
# out, 198.18.70.0/24): the firmware boots, gets its address from slirp's
# DHCP server (198.18.70.15, no router with restrict=on), pings slirp's own
# address 198.18.70.2 (5 plain requests, 3 of 3000 bytes: fragmented both
# ways, reassembled by each side), idles in WFI (fewer than 300 main-loop
# passes a second, nearly all ending in WFI), serves TCP through slirp's
# port forwarding from 127.0.0.1 (echo of 300 KB with SHA-256, chargen
# 100 KB pattern-checked, HTTP GET / with curl), and on "quit"
# reports its pools back at baseline and ends QEMU
# through semihosting with status 0. The pcap of every frame decodes clean
# (tshark). No root needed and nothing configured on the host (QEMU only
# listens on three random ports of 127.0.0.1).
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
it_python
FW_MAX_S=180
# Three host ports on 127.0.0.1 forwarded by slirp to the firmware's HTTP,
# echo and chargen (random; QEMU exits at once when one is taken: retry).
for try in 1 2 3; do
    base=$((20000 + (RANDOM % 4000) * 10))
    P_HTTP=$base P_ECHO=$((base + 1)) P_CHARGEN=$((base + 2))
    fw_start "$IT_DIR/slirp.pcap" -- user,id=n0,net=198.18.70.0/24,restrict=on,hostfwd=tcp:127.0.0.1:$P_HTTP-:80,hostfwd=tcp:127.0.0.1:$P_ECHO-:7,hostfwd=tcp:127.0.0.1:$P_CHARGEN-:19
    sleep 0.5
    kill -0 "$IT_NODE_PID" 2>/dev/null && break
    wait "$IT_NODE_PID"
    IT_NODE_PID=""
    exec 7>&-
    it_log "QEMU did not start (port taken?): $(tail -n 2 "$IT_NODE_LOG")"
    [ "$try" -lt 3 ] || it_fail "QEMU did not start three times"
done
fw_wait_ready 30
[ "$FW_ADDR" = 198.18.70.15 ] || it_fail "slirp leased $FW_ADDR, want 198.18.70.15"
fw_idle 3
it_log "FIGURES idle firmware: $FW_IDLE_RATE main-loop passes a second, each ending in WFI; QEMU used $FW_IDLE_SHARE % of a host CPU"
fw_ping 198.18.70.2 5 56
fw_ping 198.18.70.2 3 3000
# TCP from the host through slirp's port forwarding (slirp terminates the
# host's connection and opens its own to the firmware)
peer() { # SECONDS MODE ARGS...: tcppeer.py on the host side (bounded)
    local t=$1 out rc
    shift
    out=$(timeout -k 5 "$t" "$IT_PY" "$IT_TCPPEER" "$@" 2>&1)
    rc=$?
    while IFS= read -r line; do it_log "peer: $line"; done <<<"$out"
    return "$rc"
}
peer 60 echo 127.0.0.1 "$P_ECHO" 300000 || it_fail "echo through slirp"
peer 60 chargen 127.0.0.1 "$P_CHARGEN" 100000 || it_fail "chargen through slirp"
code=$(timeout -k 5 40 curl --noproxy '*' -s --max-time 30 -o "$IT_DIR/index.html" -w '%{http_code}' \
    "http://127.0.0.1:$P_HTTP/") || it_fail "curl through slirp"
[ "$code" = 200 ] && [ -s "$IT_DIR/index.html" ] || it_fail "GET / through slirp: $code"
it_log "HTTP GET / through slirp: 200, $(wc -c <"$IT_DIR/index.html") bytes"
fw_quit
grep -q 'fw: dhcp bound 198.18.70.15/24 gw 0.0.0.0' <(tr -d '\r' <"$IT_NODE_LOG") || it_fail "lease line"
n=$(it_pcap_count "$IT_DIR/slirp.pcap" 'dhcp.option.dhcp == 7')
[ "$n" -ge 1 ] || it_fail "no DHCPRELEASE in the capture after quit"
it_pcap_clean "$IT_DIR/slirp.pcap"
it_log "FIGURES wall time $(( $(date +%s) - t0 )) s"
it_pass
