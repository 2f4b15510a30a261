#!/usr/bin/env bash
# test_tcp_rfc_edges.sh -- RFC edge cases of TCP segment arrival and IPv4
# option validation, from the outside (issue 11 item 6), against wisp-node
# with its echo (7) and HTTP (80) services. The peer is rawpeer.py: a
# hand-made TCP/IP peer on raw sockets using 198.19.77.1, an address the
# Linux kernel does not own (wisp-node reaches it through its gateway,
# Linux, which does not forward: the kernel never answers for the peer).
#
#  - SYN-RECEIVED of a passive open: a RST inside the window but not at
#    RCV.NXT draws a challenge ACK <SEQ=ISS+1><ACK=IRS+1> (RFC 5961 §3.2,
#    RFC 9293 §3.10.7.4), one outside the window nothing; the handshake
#    then completes and the echo answers;
#  - a FIN without ACK in ESTABLISHED (at RCV.NXT and out of the window)
#    and in TIME-WAIT (the HTTP server closed first) draws nothing and is
#    not taken (RFC 9293 §3.10.7.4 fifth: "if the ACK bit is off drop the
#    segment"); the retransmitted FIN with ACK in TIME-WAIT is ACKed;
#  - ICMP echo requests with malformed IPv4 options (Record Route pointer
#    0 or leaving a partial slot, source routes with a length not 3 + 4n,
#    a source route still under way, timestamp pointer 4 or flag 2) get no
#    reply and are counted (ip4.drop.opts); well-formed options are
#    answered (RFC 791 §3.1, RFC 1122 §3.2.1.8, §3.3.5); a SYN with a bad
#    option gets no SYN-ACK;
#  - the node stops cleanly with its pools at baseline; the node's frames
#    in the capture decode without malformed frames or bad checksums (the
#    peer's are malformed on purpose).
#
# Usage: test_tcp_rfc_edges.sh PATH-TO-wisp-node   (root; exit 77 = skipped)

source "$(dirname "$0")/lib.sh"
it_init "$@"
it_python
RAWPEER="$(dirname "$0")/rawpeer.py"
PEER_IP=198.19.77.1
PCAP="$IT_DIR/rfc_edges.pcap"

it_start_node --gw "$IT_LINUX_IP" --http --pcap "$PCAP"
# the node's MAC in Linux's neighbour table (the raw peer's datagrams go
# out through the kernel)
it_ns ping -c 1 -W 2 "$IT_NODE_IP" >/dev/null || it_fail "no ping reply from the node"

out=$(it_ns_t 90 "$IT_PY" "$RAWPEER" edges "$IT_NODE_IP" "$PEER_IP" 2>&1)
rc=$?
while IFS= read -r line; do it_log "peer: $line"; done <<<"$out"
[ "$rc" -eq 0 ] || it_fail "rawpeer edges: $(echo "$out" | grep -E '^(FAIL|RESULT)' | head -n 5)"
it_node_alive "after the edge cases"

it_stop_node
drops=$(it_counter ip4.drop.opts)
chal=$(it_counter tcp.challengeack)
noack=$(it_counter tcp.drop.noack)
it_log "node: ip4.drop.opts $drops tcp.challengeack $chal tcp.drop.noack $noack"
[ "$drops" -ge 8 ] || it_fail "ip4.drop.opts = $drops, want >= 8 (7 echo requests and a SYN)"
[ "$chal" -ge 1 ] || it_fail "no challenge ACK counted"
[ "$noack" -ge 4 ] || it_fail "tcp.drop.noack = $noack, want >= 4"
# The peer's frames are malformed on purpose: check what the node sent.
bad=$(timeout -k 5 120 tshark -n -r "$PCAP" -o ip.check_checksum:TRUE -o tcp.check_checksum:TRUE \
    -o udp.check_checksum:TRUE -d tcp.port==7,data \
    -Y "ip.src == $IT_NODE_IP && (_ws.malformed || ip.checksum.status == 0 || tcp.checksum.status == 0 || icmp.checksum.status == 0)" \
    2>/dev/null) || it_fail "tshark cannot read $PCAP"
[ -z "$bad" ] || it_fail "the node sent malformed frames or bad checksums: $(echo "$bad" | head -n 5)"
sent=$(it_pcap_count "$PCAP" "ip.src == $IT_NODE_IP && tcp")
it_log "capture: the node's $sent TCP segments decode clean"
it_pass
