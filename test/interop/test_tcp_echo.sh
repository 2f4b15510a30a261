#!/usr/bin/env bash
# test_tcp_echo.sh -- Linux TCP sockets against wisp-node's TCP echo
# service (RFC 862, port 7).
#
#  - bulk: 20 MB (WISP_IT_TCP_ECHO_MB) of random data sent while the echo is
#    read concurrently (two threads); the echo's SHA-256 and length match;
#  - small exchanges: sizes 1 .. 100000 on fresh connections (each read
#    back exactly, then a clean close), and a ping-pong of 200 short
#    messages on one connection with and without TCP_NODELAY (time per
#    exchange logged);
#  - flow control: 4 MB echoed while the reader starts 1.5 s late (the
#    windows close both ways, then everything must flow, byte-exact);
#  - 6 (WISP_IT_TCP_ECHO_PARALLEL) echo transfers of 2 MB at once, byte-
#    exact (the connections share the node's segment and buffer pools);
#  - a client that sends without reading and then resets the connection:
#    the node frees what it held (error callback), goes on serving;
#  - the node's exit report: every other echo connection closed cleanly
#    with bytes in = bytes out, one reset; clean stop with the pools at
#    baseline;
#  - the capture decodes clean (IPv4/TCP checksums) and holds no RST but
#    the reset connection's (from Linux only).
#
# Usage: test_tcp_echo.sh PATH-TO-wisp-node   (root; exit 77 = skipped)

source "$(dirname "$0")/lib.sh"
it_init "$@"
it_python

ECHO_MB=${WISP_IT_TCP_ECHO_MB:-20}
# Parallel echo connections: together their windows (6 x 256 KB) and send
# buffers exceed the host build's 512 receive and 512 transmit blocks; the
# receive budget (windows within the free receive blocks, a reserve for
# ACKs) and the transmit reserve keep them all moving. Up to 8 (the
# service's connection records).
PARALLEL=${WISP_IT_TCP_ECHO_PARALLEL:-6}
PCAP="$IT_DIR/tcp_echo.pcap"
T_START=$(date +%s)

it_start_node --pcap "$PCAP"

bytes=$((ECHO_MB * 1024 * 1024))
it_peer 150 echo "$IT_NODE_IP" 7 "$bytes" || it_fail "echo of $bytes bytes failed"
echo "$IT_PEER_OUT" | grep -q '^RESULT ok' || it_fail "echo: no success line"
it_node_alive "after the bulk echo"
it_wait_line "$IT_NODE_LOG" "^wisp-node: tcp/7 echo .* closed: rx $bytes tx $bytes$" 5 ||
    it_fail "the node did not report a clean close with $bytes bytes each way: $(grep 'tcp/7' "$IT_NODE_LOG" | tail -n 3)"

it_peer 120 echo-small "$IT_NODE_IP" 7 || it_fail "small echo exchanges failed"
echo "$IT_PEER_OUT" | grep -q '^RESULT ok' || it_fail "echo-small: no success line"
it_node_alive "after the small exchanges"

it_peer 120 echo-stall "$IT_NODE_IP" 7 $((4 * 1024 * 1024)) 1.5 || it_fail "echo with a late reader failed"
it_node_alive "after the late reader"

it_peer 150 echo-parallel "$IT_NODE_IP" 7 "$PARALLEL" $((2 * 1024 * 1024)) || it_fail "parallel echo transfers failed"
it_node_alive "after the parallel transfers"
sleep 0.3

it_peer 30 echo-reset "$IT_NODE_IP" 7 $((1024 * 1024)) || it_fail "echo-reset client failed"
rst_port=$(echo "$IT_PEER_OUT" | sed -nE 's/^LOCALPORT ([0-9]+)$/\1/p')
it_wait_line "$IT_NODE_LOG" "^wisp-node: tcp/7 echo [0-9.]+:$rst_port ended: .*ERR_RST" 5 ||
    it_fail "the node did not report the reset of port $rst_port: $(grep 'tcp/7' "$IT_NODE_LOG" | tail -n 2)"
it_log "node: $(grep -E "^wisp-node: tcp/7 echo [0-9.]+:$rst_port " "$IT_NODE_LOG")"
it_peer 30 conns "$IT_NODE_IP" 7 3 || it_fail "echo after the reset failed"
sleep 0.5

it_stop_node

conns=$(it_tcp_svc tcp/7 connections)
it_log "node: tcp/7 echo connections $conns closed $(it_tcp_svc tcp/7 closed) resets $(it_tcp_svc tcp/7 resets)" \
    "aborted $(it_tcp_svc tcp/7 aborted) refused $(it_tcp_svc tcp/7 refused)" \
    "rx $(it_tcp_svc tcp/7 rx) tx $(it_tcp_svc tcp/7 tx)"
# 1 bulk + 17 sizes + 2 ping-pong + 1 late reader + parallel + 1 reset + 3
want=$((25 + PARALLEL))
[ "$conns" = "$want" ] || it_fail "echo accepted $conns connections, want $want"
[ "$(it_tcp_svc tcp/7 closed)" = $((want - 1)) ] ||
    it_fail "echo closed $(it_tcp_svc tcp/7 closed) connections cleanly, want $((want - 1))"
[ "$(it_tcp_svc tcp/7 resets)" = 1 ] || it_fail "echo saw $(it_tcp_svc tcp/7 resets) resets, want 1"
[ "$(it_tcp_svc tcp/7 active)" = 0 ] || it_fail "echo connections still active at exit"
uneven=$(awk '/^wisp-node: tcp\/7 echo .* closed: rx/ && $7 != $9' "$IT_NODE_LOG")
[ -z "$uneven" ] || it_fail "closed echo connections with rx != tx: $uneven"

it_pcap_tcp_check "$PCAP" any -d tcp.port==7,data
other_rst=$(it_pcap_count "$PCAP" "tcp.flags.reset == 1 && !(tcp.port == $rst_port)")
node_rst=$(it_pcap_count "$PCAP" "tcp.flags.reset == 1 && ip.src == $IT_NODE_IP")
it_log "capture: $(it_tcp_stat rst) RST segments, all from Linux on port $rst_port: other $other_rst, from the node $node_rst"
[ "$(it_tcp_stat rst)" -ge 1 ] || it_fail "capture holds no RST of the reset connection"
[ "$other_rst" = 0 ] || it_fail "capture holds $other_rst RST segments of other connections"
[ "$node_rst" = 0 ] || it_fail "capture holds $node_rst RST segments from the node"
it_log "run time $(($(date +%s) - T_START)) s"
it_pass
