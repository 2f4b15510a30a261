#!/usr/bin/env bash
# test_iperf.sh -- wisp's iperf 2 server and client against Debian's iperf
# 2.1.8 (/usr/bin/iperf), both directions, TCP and UDP.
#
#  Linux client -> wisp-node --iperf (server on TCP and UDP port 5001):
#  - TCP: `iperf -c NODE -t 3`: exit 0, Linux wrote N > 0 bytes, the node
#    counted exactly N (header included) and > WISP_IT_IPERF_MIN_MBPS;
#  - TCP -d (dualtest): the node connects back to the client's listener
#    and sends for the same time; Linux reports both streams, no
#    "expected reverse connect did not occur";
#  - UDP: `iperf -c NODE -u -b 50M -t 3`: exit 0, the Linux client prints
#    the server report the node sent (bytes, jitter, lost/total), with
#    total = datagrams Linux sent and loss <= WISP_IT_IPERF_MAX_LOSS %;
#    the node's own line agrees;
#  - the node stops with exit 0 and its pools back at baseline; the
#    capture decodes clean (checksums) and holds no RST but the client's
#    refusals of a reverse connect that came before its listener (retried).
#  wisp-node --iperf-client -> Linux `iperf -s` / `iperf -s -u`:
#  - TCP 3 s: node exit 0 (pools at baseline), the Linux server counted
#    exactly the bytes the node reports acknowledged;
#  - UDP 50 Mbit/s 3 s: the node got Linux's server report back (exit 0),
#    its figures match what the Linux server printed, loss within bounds.
# Every iperf figure is logged ("FIGURES" lines).
#
# Usage: test_iperf.sh PATH-TO-wisp-node   (root; exit 77 = skipped)

source "$(dirname "$0")/lib.sh"
it_init "$@"

command -v iperf >/dev/null 2>&1 || it_fail "iperf (2) not installed (Debian package iperf)"
MIN_MBPS=${WISP_IT_IPERF_MIN_MBPS:-20}
MAX_LOSS=${WISP_IT_IPERF_MAX_LOSS:-5}
T_START=$(date +%s)

# Bytes and bits/sec of the last "[ ID] a-b sec N Bytes R bits/sec" line of
# FILE (iperf -f b) matching REGEX: prints "bytes bps".
iperf_line() {
    grep -E "$2" "$1" | grep -E 'sec +[0-9]+ Bytes +[0-9]+ bits/sec' | tail -n 1 |
        sed -E 's/.*sec +([0-9]+) Bytes +([0-9]+) bits\/sec.*/\1 \2/'
}

mbps_ok() { awk -v b="$1" -v m="$2" 'BEGIN { exit !(b / 1e6 >= m) }'; }

# ------------------------------------------------------- Linux -> wisp
it_start_node --iperf --pcap "$IT_DIR/server.pcap"

# TCP
it_ns_t 20 iperf -c "$IT_NODE_IP" -t 3 -f b >"$IT_DIR/c_tcp.log" 2>&1 ||
    it_fail "iperf -c (TCP) failed: $(tail -n 5 "$IT_DIR/c_tcp.log")"
it_wait_line "$IT_NODE_LOG" '^wisp-node: iperf server tcp from ' 5 || it_fail "no TCP result line from the node"
read -r lbytes lbps <<<"$(iperf_line "$IT_DIR/c_tcp.log" '^\[ *1\] 0\.0+-')"
nbytes=$(sed -nE 's/^wisp-node: iperf server tcp from .* sec, ([0-9]+) bytes, ([0-9.]+) Mbits\/sec.*/\1/p' "$IT_NODE_LOG" | head -n 1)
nmbps=$(sed -nE 's/^wisp-node: iperf server tcp from .* sec, ([0-9]+) bytes, ([0-9.]+) Mbits\/sec.*/\2/p' "$IT_NODE_LOG" | head -n 1)
[ -n "${lbytes:-}" ] && [ "$lbytes" -gt 0 ] || it_fail "Linux iperf client reported no bytes: $(tail -n 3 "$IT_DIR/c_tcp.log")"
[ "$nbytes" = "$lbytes" ] || it_fail "node counted ${nbytes:-?} bytes, the Linux client sent $lbytes"
mbps_ok "$lbps" "$MIN_MBPS" || it_fail "TCP Linux -> wisp: $lbps bit/s, below $MIN_MBPS Mbit/s"
it_log "FIGURES tcp linux->wisp: $lbytes bytes, Linux $(awk -v b="$lbps" 'BEGIN { printf "%.1f", b / 1e6 }') Mbit/s, node $nmbps Mbit/s"

# TCP dualtest: the node connects back to the client's port 5001 listener.
it_ns_t 20 iperf -c "$IT_NODE_IP" -d -t 2 -f b >"$IT_DIR/c_dual.log" 2>&1 ||
    it_fail "iperf -c -d failed: $(tail -n 5 "$IT_DIR/c_dual.log")"
grep -q 'reverse connect did not occur' "$IT_DIR/c_dual.log" && it_fail "dualtest: the node did not connect back"
it_wait_line "$IT_NODE_LOG" '^wisp-node: iperf reverse tcp to ' 10 || it_fail "no reverse stream result from the node"
ndual=$(grep -cE 'sec +[0-9]+ Bytes +[0-9]+ bits/sec' "$IT_DIR/c_dual.log")
[ "$ndual" -ge 2 ] || it_fail "dualtest: want 2 result lines from Linux, got $ndual: $(cat "$IT_DIR/c_dual.log")"
rev=$(sed -nE 's/^wisp-node: iperf reverse tcp to .* sec, ([0-9]+) bytes.*/\1/p' "$IT_NODE_LOG" | head -n 1)
[ -n "$rev" ] && [ "$rev" -gt 0 ] || it_fail "reverse stream sent no bytes"
grep -q '^wisp-node: iperf reverse tcp to .*ended' "$IT_NODE_LOG" && it_fail "reverse stream did not end cleanly"
it_log "FIGURES tcp dualtest: wisp->linux reverse stream $rev bytes; $(grep -E 'bits/sec' "$IT_DIR/c_dual.log" | tr -s ' ' | tr '\n' ';')"

# UDP 50 Mbit/s
it_ns_t 20 iperf -c "$IT_NODE_IP" -u -b 50M -t 3 -f b >"$IT_DIR/c_udp.log" 2>&1 ||
    it_fail "iperf -c -u failed: $(tail -n 5 "$IT_DIR/c_udp.log")"
grep -q 'Server Report:' "$IT_DIR/c_udp.log" || it_fail "Linux client got no server report: $(tail -n 5 "$IT_DIR/c_udp.log")"
grep -q 'did not receive ack' "$IT_DIR/c_udp.log" && it_fail "Linux client: FIN not acknowledged"
sent=$(sed -nE 's/.*Sent ([0-9]+) datagrams.*/\1/p' "$IT_DIR/c_udp.log")
rep=$(grep -A2 'Server Report:' "$IT_DIR/c_udp.log" | grep -E 'ms +[0-9]+/[0-9]+' | tail -n 1)
read -r rbytes _ <<<"$(echo "$rep" | sed -E 's/.*sec +([0-9]+) Bytes +([0-9]+) bits\/sec.*/\1 \2/')"
rjit=$(echo "$rep" | sed -E 's/.* ([0-9.]+) ms +[0-9]+\/[0-9]+.*/\1/')
rlost=$(echo "$rep" | sed -E 's/.* ms +([0-9]+)\/([0-9]+).*/\1/')
rtotal=$(echo "$rep" | sed -E 's/.* ms +([0-9]+)\/([0-9]+).*/\2/')
[ -n "$rtotal" ] && [ "$rtotal" -gt 0 ] || it_fail "server report not understood: $rep"
[ "$rbytes" -gt 0 ] || it_fail "server report: no bytes"
# Linux counts one more datagram sent than its FIN's number
[ "$rtotal" -ge $((sent - 1)) ] && [ "$rtotal" -le "$sent" ] || it_fail "report total $rtotal, Linux sent $sent"
[ $((rlost * 100)) -le $((rtotal * MAX_LOSS)) ] || it_fail "UDP loss $rlost/$rtotal above $MAX_LOSS %"
it_wait_line "$IT_NODE_LOG" '^wisp-node: iperf server udp from ' 5 || it_fail "no UDP result line from the node"
nline=$(grep '^wisp-node: iperf server udp from ' "$IT_NODE_LOG" | tail -n 1)
echo "$nline" | grep -q "lost $rlost/$rtotal," || it_fail "node line disagrees with the report Linux printed: $nline / $rep"
it_log "FIGURES udp linux->wisp 50M: report $rbytes bytes, jitter $rjit ms, lost $rlost/$rtotal; node: ${nline#wisp-node: }"

it_stop_node
grep -q '^iperf server: tcp tests 2 .*udp tests 1 ' "$IT_NODE_LOG" || it_fail "node counters: $(grep '^iperf server:' "$IT_NODE_LOG")"
# iperf 2's -d client starts its listener while it connects: the node's
# reverse connect may meet a RST and is tried again (apps/lib/iperf.c,
# tx_err). Such refusals -- a RST from the client's port 5001 acknowledging
# one of the node's SYNs -- are the only RSTs allowed.
refused=$(timeout -k 5 300 tshark -n -r "$IT_DIR/server.pcap" -T fields -e tcp.flags.reset -e tcp.seq_raw -e tcp.ack_raw \
    -Y "(ip.src == $IT_NODE_IP && tcp.dstport == 5001 && tcp.flags.syn == 1 && tcp.flags.ack == 0) || (ip.src == $IT_LINUX_IP && tcp.srcport == 5001 && tcp.flags.reset == 1)" \
    2>/dev/null | awk '$1 == "0" || $1 == "False" { syn[sprintf("%.0f", ($2 + 1) % 4294967296)] = 1; next } (sprintf("%.0f", $3) in syn) { n++ } END { print n + 0 }')
refused=${refused:-0}
[ "$refused" -gt 0 ] && it_log "capture: $refused reverse connect(s) refused by the client's listener (iperf -d race), retried by the node"
it_pcap_tcp_check "$IT_DIR/server.pcap" "$refused" -d tcp.port==5001,data -d udp.port==5001,data

# ------------------------------------------------------- wisp -> Linux
# TCP
it_bg_start "$IT_DIR/s_tcp.log" 60 iperf -s -f b
srv=$IT_BG_PID
it_wait_line "$IT_DIR/s_tcp.log" 'Server listening' 10 || it_fail "Linux iperf -s did not start"
sleep 0.2
it_run_node_client "$IT_DIR/node_tcp.log" 25 --iperf-client "$IT_LINUX_IP" --iperf-time 3
grep -q '^wisp-node: iperf client done' "$IT_NODE_LOG" || it_fail "node client not done"
line=$(grep '^wisp-node: iperf client tcp to .*: 0\.000-' "$IT_NODE_LOG")
nbytes=$(echo "$line" | sed -nE 's/.* sec, ([0-9]+) bytes, ([0-9.]+) Mbits\/sec.*/\1/p')
nmbps=$(echo "$line" | sed -nE 's/.* sec, ([0-9]+) bytes, ([0-9.]+) Mbits\/sec.*/\2/p')
it_wait_line "$IT_DIR/s_tcp.log" 'sec +[0-9]+ Bytes' 5 || it_fail "Linux server printed no result: $(cat "$IT_DIR/s_tcp.log")"
read -r sbytes sbps <<<"$(iperf_line "$IT_DIR/s_tcp.log" '.')"
[ "$sbytes" = "$nbytes" ] || it_fail "Linux server counted ${sbytes:-?} bytes, the node had $nbytes acknowledged"
mbps_ok "$sbps" "$MIN_MBPS" || it_fail "TCP wisp -> Linux: $sbps bit/s, below $MIN_MBPS Mbit/s"
it_log "FIGURES tcp wisp->linux: $sbytes bytes, Linux server $(awk -v b="$sbps" 'BEGIN { printf "%.1f", b / 1e6 }') Mbit/s, node $nmbps Mbit/s"
kill -TERM "$srv" 2>/dev/null

# UDP 50 Mbit/s
it_bg_start "$IT_DIR/s_udp.log" 60 iperf -s -u -f b
srv=$IT_BG_PID
it_wait_line "$IT_DIR/s_udp.log" 'Server listening' 10 || it_fail "Linux iperf -s -u did not start"
sleep 0.2
it_run_node_client "$IT_DIR/node_udp.log" 25 --iperf-client "$IT_LINUX_IP" --iperf-udp 50M --iperf-time 3
grep -q '^wisp-node: iperf client done' "$IT_NODE_LOG" || it_fail "node client not done"
rline=$(grep '^wisp-node: iperf server report: ' "$IT_NODE_LOG")
[ -n "$rline" ] || it_fail "the node got no server report"
cline=$(grep '^wisp-node: iperf client udp to .*: 0\.000-' "$IT_NODE_LOG")
csent=$(echo "$cline" | sed -nE 's/.*sent ([0-9]+) datagrams.*/\1/p')
rb=$(echo "$rline" | sed -nE 's/.* sec, ([0-9]+) bytes, .*/\1/p')
rl=$(echo "$rline" | sed -nE 's/.* lost ([0-9]+)\/([0-9]+) .*/\1/p')
rt=$(echo "$rline" | sed -nE 's/.* lost ([0-9]+)\/([0-9]+) .*/\2/p')
[ "$rt" = "$csent" ] || it_fail "report total ${rt:-?}, node sent ${csent:-?}"
[ $((rl * 100)) -le $((rt * MAX_LOSS)) ] || it_fail "UDP loss $rl/$rt above $MAX_LOSS %"
it_wait_line "$IT_DIR/s_udp.log" 'ms +[0-9]+/[0-9]+' 5 || it_fail "Linux UDP server printed no result"
sl=$(grep -E 'ms +[0-9]+/[0-9]+' "$IT_DIR/s_udp.log" | tail -n 1)
read -r sb _ <<<"$(iperf_line "$IT_DIR/s_udp.log" 'ms +[0-9]+/[0-9]+')"
echo "$sl" | grep -qE " $rl/$rt " || it_fail "node's report ($rl/$rt) differs from the Linux server's line: $sl"
[ "$sb" = "$rb" ] || it_fail "report bytes $rb, Linux server printed $sb"
mbps_ok "$(echo "$rline" | sed -nE 's/.* ([0-9.]+) Mbits\/sec.*/\1/p' | awk '{ print $1 * 1e6 }')" 40 ||
    it_fail "UDP wisp -> Linux below 40 Mbit/s: $rline"
it_log "FIGURES udp wisp->linux 50M: ${cline#wisp-node: }; ${rline#wisp-node: }"
kill -TERM "$srv" 2>/dev/null

it_log "run time $(($(date +%s) - T_START)) s"
it_pass
