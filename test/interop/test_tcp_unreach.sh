#!/usr/bin/env bash
# test_tcp_unreach.sh -- a TCP connect ended by an ICMP error from a real
# Linux router (RFC 1122 §4.2.3.9, RFC 1812 §5.2.7.1).
#
#  - The Linux side of the tap forwards (in the test's namespace only) and
#    holds a "prohibit" route for 198.18.5.0/24: a SYN wisp sends there
#    through its gateway draws ICMP type 3 code 13 ("communication
#    administratively prohibited") from Linux;
#  - wisp-node --connect 198.18.5.5:5001 fails at once (not after its SYN
#    retries, 127 s) on the raw API with ERR_HOSTUNREACH and
#    on the socket API with errno 113 (EHOSTUNREACH), counts icmp.err.hard,
#    and leaves its pools at baseline; the capture holds the ICMP message
#    and decodes clean.
#
# Usage: test_tcp_unreach.sh PATH-TO-wisp-node   (root; exit 77 = skipped)

source "$(dirname "$0")/lib.sh"
it_init "$@"

it_ns sysctl -q -w net.ipv4.ip_forward=1 >/dev/null || it_fail "forwarding"
it_ns ip route add prohibit 198.18.5.0/24 || it_fail "prohibit route"

for api in raw socket; do
    log="$IT_DIR/node_$api.log"
    t0=$(date +%s%N)
    timeout -k 5 60 ip netns exec "$IT_NS" "$IT_NODE" --tap "$IT_TAP" --addr "$IT_NODE_IP/$IT_PREFIX" \
        --gw "$IT_LINUX_IP" --api "$api" --pcap "$IT_DIR/$api.pcap" --connect 198.18.5.5:5001 --send 1000 \
        >"$log" 2>&1
    rc=$?
    ms=$((($(date +%s%N) - t0) / 1000000))
    IT_NODE_LOG=$log
    line=$(grep -E '^wisp-node: client: (connect|connection)' "$log" | head -n 1)
    it_log "$api: exit $rc after $ms ms: $line"
    [ "$rc" -eq 1 ] || it_fail "$api: wisp-node exit status $rc (want 1: the connect failed)"
    if [ "$api" = raw ]; then
        echo "$line" | grep -q 'connection failed: ERR_HOSTUNREACH' || it_fail "raw: want ERR_HOSTUNREACH: $line"
    else
        echo "$line" | grep -q 'connect: errno 113' || it_fail "socket: want errno 113 (EHOSTUNREACH): $line"
    fi
    [ "$(it_counter icmp.err.hard)" -ge 1 ] || it_fail "$api: icmp.err.hard not counted"
    # (a SYN retransmission can happen when the first ARP request is lost at
    # tap link-up; running out of SYN retries would take 127 s and end with
    # ERR_TIMEOUT / ETIMEDOUT, which the checks above exclude)
    it_log "$api: tcp.syn.retransmit=$(it_counter tcp.syn.retransmit) icmp.err.hard=$(it_counter icmp.err.hard)"
    grep -q '^pools: all back at baseline$' "$log" || it_fail "$api: pools not back at baseline"
    n=$(it_pcap_count "$IT_DIR/$api.pcap" "icmp.type == 3 && icmp.code == 13 && ip.src == $IT_LINUX_IP")
    [ "$n" -ge 1 ] || it_fail "$api: no ICMP 3/13 from Linux in the capture"
    it_pcap_clean "$IT_DIR/$api.pcap"
done
it_pass
