#!/usr/bin/env bash
# test_udp_unreach.sh -- ICMP port unreachable from Linux reaches a
# connected wisp UDP PCB (RFC 1122 §4.1.3.3).
#
#  - A Linux UDP socket is bound to a port, answers one datagram, and is
#    closed; wisp-node --udp-probe then sends datagrams from a connected PCB
#    to that (now closed) port: the Linux kernel answers with ICMP type 3
#    code 3, wisp validates the quotation (its own datagram, 4-tuple) and
#    reports ERR_REFUSED (ECONNREFUSED at the socket layer), exits 0 with
#    the pools back at baseline, counted in icmp.err.udp;
#  - the capture holds the port unreachable from Linux and decodes clean.
#
# Usage: test_udp_unreach.sh PATH-TO-wisp-node   (root; exit 77 = skipped)

source "$(dirname "$0")/lib.sh"
it_init "$@"
it_python

PORT=5999
# A Linux UDP socket that lives and dies: bound, closed again (the port is
# closed when wisp's datagrams arrive).
it_ns "$IT_PY" -c "
import socket
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.bind(('$IT_LINUX_IP', $PORT))
s.close()
print('closed')
" || it_fail "python UDP socket"

it_run_node_client "$IT_DIR/node.log" 30 --pcap "$IT_DIR/probe.pcap" --udp-probe "$IT_LINUX_IP:$PORT"
line=$(grep '^wisp-node: udp-probe' "$IT_DIR/node.log")
it_log "node: $line"
echo "$line" | grep -q 'ERR_REFUSED after [0-9]* datagrams (ICMP type 3 code 3 from 198.18.0.1)' ||
    it_fail "the node did not report a port unreachable: $line"
[ "$(it_counter icmp.err.udp)" -ge 1 ] || it_fail "icmp.err.udp not counted"
n=$(it_pcap_count "$IT_DIR/probe.pcap" "icmp.type == 3 && icmp.code == 3 && ip.src == $IT_LINUX_IP && udp.dstport == $PORT")
[ "$n" -ge 1 ] || it_fail "no port unreachable from Linux in the capture"
it_pcap_clean "$IT_DIR/probe.pcap"
it_pass
