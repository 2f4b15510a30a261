#!/usr/bin/env bash
# test_tcp_dsack.sh -- D-SACK (RFC 2883) from wisp-node seen by Linux.
#
# Linux connects to the node's discard service (port 9) and sends 100
# bytes; the peer helper captures that segment on the tap (AF_PACKET) and,
# once the node acknowledged it, puts the very same frame on the wire again:
# a duplicate, as when an ACK is lost and the sender retransmits. The node
# must answer with an ACK whose first SACK block reports the duplicate
# (RFC 2883 §4), which Linux counts in TcpExt TCPDSACKRecv (its nstat
# counter, read from /proc/net/netstat in the test's namespace); the node's
# own tcp.dsack counter must show it too, and the capture must hold the
# D-SACK: an ACK from the node with a SACK block below its ACK number.
# The node stops cleanly with the pools at baseline.
#
# Usage: test_tcp_dsack.sh PATH-TO-wisp-node   (root; exit 77 = skipped)

source "$(dirname "$0")/lib.sh"
it_init "$@"
it_python

PCAP="$IT_DIR/tcp_dsack.pcap"
it_start_node --pcap "$PCAP"

it_peer 60 dsack "$IT_NODE_IP" 9 "$IT_TAP" || it_fail "the duplicate did not earn a D-SACK from the node"
echo "$IT_PEER_OUT" | grep -q '^RESULT ok' || it_fail "dsack: no success line"
it_node_alive "after the duplicate"
it_wait_line "$IT_NODE_LOG" "^wisp-node: tcp/9 discard .* closed: rx 100 tx 0$" 5 ||
    it_fail "the node did not report the connection closed with 100 bytes: $(grep 'tcp/9' "$IT_NODE_LOG" | tail -n 2)"

it_stop_node
dsack=$(it_counter tcp.dsack)
[ "$dsack" -ge 1 ] || it_fail "node counter tcp.dsack is $dsack, want >= 1"
it_log "node: tcp.dsack $dsack"

# The D-SACK in the capture: from the node, a SACK left edge below the ACK.
n=$(tshark -r "$PCAP" -Y "ip.src == $IT_NODE_IP && tcp.options.sack_le && tcp.options.sack_le < tcp.ack" \
    -o tcp.relative_sequence_numbers:FALSE -T fields -e frame.number 2>/dev/null | wc -l)
[ "$n" -ge 1 ] || it_fail "no ACK with a D-SACK block from the node in the capture"
it_log "capture: $n ACK(s) from the node carry a D-SACK block"
it_pass
