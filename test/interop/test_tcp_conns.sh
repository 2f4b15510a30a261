#!/usr/bin/env bash
# test_tcp_conns.sh -- many short TCP connections against wisp-node.
#
#  - 500 (WISP_IT_TCP_CONNS) connections to the echo service (port 7),
#    opened and closed in sequence by Linux, each exchanging a short
#    message that must come back exactly: all succeed;
#  - the node reports every one closed cleanly (no resets, no refusals,
#    none left active);
#  - 4 more connections (to discard, port 9) are left open and idle when
#    the node is stopped: it aborts them (one RST each) and still stops
#    cleanly with every pool (TCP PCBs, listeners, segments, buffers) back
#    at baseline;
#  - the capture decodes clean (IPv4/TCP checksums), holds exactly one SYN
#    from Linux per connection and no RST but the 4 of the node's stop.
#
# Usage: test_tcp_conns.sh PATH-TO-wisp-node   (root; exit 77 = skipped)

source "$(dirname "$0")/lib.sh"
it_init "$@"
it_python

COUNT=${WISP_IT_TCP_CONNS:-500}
PCAP="$IT_DIR/tcp_conns.pcap"
T_START=$(date +%s)

it_start_node --pcap "$PCAP"

it_peer 150 conns "$IT_NODE_IP" 7 "$COUNT" || it_fail "connections failed"
echo "$IT_PEER_OUT" | grep -q "^RESULT ok ok=$COUNT\$" || it_fail "conns: not all $COUNT succeeded"
it_node_alive "after $COUNT connections"
sleep 0.5
[ "$(grep -c '^wisp-node: tcp/7 echo .* closed: rx' "$IT_NODE_LOG")" -eq "$COUNT" ] ||
    it_fail "not every connection was reported closed while the node runs"

# Idle connections left open at the node's stop.
HOLD_LOG="$IT_DIR/hold.log"
it_bg_start "$HOLD_LOG" 60 "$IT_PY" "$IT_TCPPEER" hold "$IT_NODE_IP" 9 4 50
it_wait_line "$HOLD_LOG" '^HELD 4$' 10 || it_fail "could not open 4 idle connections: $(cat "$HOLD_LOG")"
it_log "4 idle connections open to discard; stopping the node"

it_stop_node

it_log "node: tcp/7 echo connections $(it_tcp_svc tcp/7 connections) closed $(it_tcp_svc tcp/7 closed)" \
    "resets $(it_tcp_svc tcp/7 resets) aborted $(it_tcp_svc tcp/7 aborted) refused $(it_tcp_svc tcp/7 refused)" \
    "active $(it_tcp_svc tcp/7 active)"
[ "$(it_tcp_svc tcp/7 connections)" = "$COUNT" ] || it_fail "echo accepted $(it_tcp_svc tcp/7 connections), want $COUNT"
[ "$(it_tcp_svc tcp/7 closed)" = "$COUNT" ] || it_fail "echo closed $(it_tcp_svc tcp/7 closed) cleanly, want $COUNT"
[ "$(it_tcp_svc tcp/7 active)" = 0 ] || it_fail "echo connections still active at exit"
# The counters are printed before the services stop: 4 active then, and
# one "aborted" line each when the stop aborts them.
[ "$(it_tcp_svc tcp/9 active)" = 4 ] || it_fail "discard had $(it_tcp_svc tcp/9 active) active connections at stop, want 4"
aborted=$(grep -cE '^wisp-node: tcp/9 discard [0-9.:]+ aborted: rx 0 tx 0, ERR_ABRT$' "$IT_NODE_LOG")
[ "$aborted" -eq 4 ] || it_fail "the node aborted $aborted discard connections at stop, want 4"
# The pool lines of the exit report (high-water marks) for the record.
grep -iE '^ *pool|tcp' "$IT_NODE_LOG" | grep -viE '^wisp-node: tcp/' | head -n 20 |
    while IFS= read -r line; do it_log "report: $line"; done

it_pcap_tcp_check "$PCAP" 4 -d tcp.port==7,data -d tcp.port==9,data
node_rst=$(it_pcap_count "$PCAP" "tcp.flags.reset == 1 && ip.src == $IT_NODE_IP && tcp.srcport == 9")
[ "$node_rst" -eq 4 ] || it_fail "capture holds $node_rst RSTs from the node's discard port, want 4"
syns=$(it_pcap_count "$PCAP" "tcp.flags.syn == 1 && tcp.flags.ack == 0 && ip.src == $IT_LINUX_IP")
it_log "capture: $syns SYNs from Linux"
[ "$syns" -eq $((COUNT + 4)) ] || it_fail "capture holds $syns SYNs from Linux, want $((COUNT + 4)) (retransmitted SYNs?)"
it_log "run time $(($(date +%s) - T_START)) s"
it_pass
