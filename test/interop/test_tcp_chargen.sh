#!/usr/bin/env bash
# test_tcp_chargen.sh -- Linux TCP sockets against wisp-node's TCP chargen
# service (RFC 864, port 19).
#
#  - Linux reads 50 MB (WISP_IT_TCP_CHARGEN_MB) and checks every byte
#    against the RFC 864 pattern (72-character lines, line i starting at
#    printable character i mod 95, CR LF), then shuts down its write side
#    and drains (still checking) until the node closes: a clean close on
#    both sides (no RST);
#  - the node goes on serving: a second, short chargen connection (1 MB)
#    succeeds;
#  - a third connection reads 100 KB and closes with unread data: Linux
#    resets it; the node frees it (error callback) and reports the reset;
#  - a short echo exchange still succeeds;
#  - the node reports two chargen connections closed cleanly and one
#    reset; clean stop with the pools at baseline; the capture decodes
#    clean (IPv4/TCP checksums) and holds no RST but Linux's on the third.
#
# Usage: test_tcp_chargen.sh PATH-TO-wisp-node   (root; exit 77 = skipped)

source "$(dirname "$0")/lib.sh"
it_init "$@"
it_python

CG_MB=${WISP_IT_TCP_CHARGEN_MB:-50}
PCAP="$IT_DIR/tcp_chargen.pcap"
T_START=$(date +%s)

it_start_node --pcap "$PCAP"

bytes=$((CG_MB * 1000 * 1000))
it_peer 150 chargen "$IT_NODE_IP" 19 "$bytes" || it_fail "chargen read of $bytes bytes failed"
echo "$IT_PEER_OUT" | grep -q '^RESULT ok' || it_fail "chargen: no success line"
total=$(echo "$IT_PEER_OUT" | sed -nE 's/^RESULT ok .*total=([0-9]+).*/\1/p')
it_node_alive "after the chargen transfer"
it_wait_line "$IT_NODE_LOG" "^wisp-node: tcp/19 chargen .* closed: rx 0 tx $total$" 5 ||
    it_fail "the node did not report a clean close with $total bytes sent: $(grep 'tcp/19' "$IT_NODE_LOG" | tail -n 3)"

it_peer 60 chargen "$IT_NODE_IP" 19 1000000 || it_fail "second chargen connection failed"
it_peer 30 chargen-abort "$IT_NODE_IP" 19 100000 || it_fail "chargen-abort client failed"
rst_port=$(echo "$IT_PEER_OUT" | sed -nE 's/^LOCALPORT ([0-9]+)$/\1/p')
it_wait_line "$IT_NODE_LOG" "^wisp-node: tcp/19 chargen [0-9.]+:$rst_port ended: .*ERR_RST" 5 ||
    it_fail "the node did not report the reset of port $rst_port: $(grep 'tcp/19' "$IT_NODE_LOG" | tail -n 2)"
it_log "node: $(grep -E "^wisp-node: tcp/19 chargen [0-9.]+:$rst_port " "$IT_NODE_LOG")"
it_peer 30 conns "$IT_NODE_IP" 7 3 || it_fail "echo after chargen failed"
it_node_alive "after the second chargen connection"
sleep 0.5

it_stop_node

it_log "node: tcp/19 chargen connections $(it_tcp_svc tcp/19 connections) closed $(it_tcp_svc tcp/19 closed)" \
    "resets $(it_tcp_svc tcp/19 resets) aborted $(it_tcp_svc tcp/19 aborted) tx $(it_tcp_svc tcp/19 tx)"
[ "$(it_tcp_svc tcp/19 connections)" = 3 ] || it_fail "chargen accepted $(it_tcp_svc tcp/19 connections) connections, want 3"
[ "$(it_tcp_svc tcp/19 closed)" = 2 ] || it_fail "chargen closed $(it_tcp_svc tcp/19 closed) connections cleanly, want 2"
[ "$(it_tcp_svc tcp/19 resets)" = 1 ] || it_fail "chargen saw $(it_tcp_svc tcp/19 resets) resets, want 1"
[ "$(it_tcp_svc tcp/19 active)" = 0 ] || it_fail "chargen connections still active at exit"
[ "$(it_tcp_svc tcp/7 closed)" = 3 ] || it_fail "echo closed $(it_tcp_svc tcp/7 closed) connections, want 3"

it_pcap_tcp_check "$PCAP" any -d tcp.port==7,data
other_rst=$(it_pcap_count "$PCAP" "tcp.flags.reset == 1 && !(tcp.port == $rst_port)")
node_rst=$(it_pcap_count "$PCAP" "tcp.flags.reset == 1 && ip.src == $IT_NODE_IP")
it_log "capture: $(it_tcp_stat rst) RST segments on port $rst_port (Linux's close with unread data)," \
    "other $other_rst, from the node $node_rst"
[ "$(it_tcp_stat rst)" -ge 1 ] || it_fail "capture holds no RST of the aborted connection"
[ "$other_rst" = 0 ] || it_fail "capture holds $other_rst RST segments of other connections"
[ "$node_rst" = 0 ] || it_fail "capture holds $node_rst RST segments from the node"
it_log "run time $(($(date +%s) - T_START)) s"
it_pass
