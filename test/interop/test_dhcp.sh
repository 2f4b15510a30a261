#!/usr/bin/env bash
# test_dhcp.sh -- wisp's DHCP client (src/core/dhcp.c) against dnsmasq.
#
# dnsmasq (Debian's dnsmasq-base) serves DHCP on the Linux side of the tap
# (198.18.0.1/24, pool 198.18.0.100-150, lease 120 s -- dnsmasq's minimum --
# with T1 forced to 8 s so the renewal happens within the test). wisp-node
# runs with --dhcp instead of --addr and must:
#  - get a lease ("wisp-node: dhcp bound A/24 gw 198.18.0.1 dns 198.18.0.1
#    lease 120 s t1 8 s ..."), after its ARP probes (RFC 5227);
#  - renew it at T1 by unicast ("wisp-node: dhcp renewed ..." within 20 s);
#  - answer ping at the leased address;
#  - on SIGTERM send a DHCPRELEASE (dnsmasq logs it), exit 0 with every
#    pool back at baseline.
# The capture must decode clean and hold DISCOVER, the two REQUESTs (the
# second one unicast from the leased address), ACKs and the RELEASE.
#
# Usage: test_dhcp.sh PATH-TO-wisp-node   (root; exit 77 = skipped)

source "$(dirname "$0")/lib.sh"
it_init "$@"

DNSMASQ=/usr/sbin/dnsmasq
[ -x "$DNSMASQ" ] || it_fail "dnsmasq not installed (Debian: dnsmasq-base)"
PCAP="$IT_DIR/dhcp.pcap"
DLOG="$IT_DIR/dnsmasq.log"
T1=8

# dnsmasq in the foreground on the tap: DHCP, and DNS for the names of
# wisp.example only (no upstream, no /etc/hosts).
it_bg_start "$DLOG" 300 "$DNSMASQ" --no-daemon --conf-file=/dev/null --user=root \
    --no-resolv --no-hosts --local=/wisp.example/ --address=/www.wisp.example/198.18.7.7 \
    --interface="$IT_TAP" --bind-interfaces --pid-file="$IT_DIR/dnsmasq.pid" \
    --dhcp-range=198.18.0.100,198.18.0.150,255.255.255.0,2m \
    --dhcp-leasefile="$IT_DIR/dnsmasq.leases" \
    --dhcp-option=option:router,"$IT_LINUX_IP" --dhcp-option=option:dns-server,"$IT_LINUX_IP" \
    --dhcp-option=option:T1,"$T1" --dhcp-option=option:T2,100 --log-dhcp
DNSMASQ_PID=$IT_BG_PID
it_wait_line "$DLOG" 'DHCP, IP range' 10 || it_fail "dnsmasq did not start: $(tail -n 5 "$DLOG")"
it_log "dnsmasq running (pid $DNSMASQ_PID)"

# wisp-node with --dhcp (it_start_node passes --addr, so start it here).
IT_NODE_LOG="$IT_DIR/node.log"
timeout -k 5 120 ip netns exec "$IT_NS" "$IT_NODE" --tap "$IT_TAP" --dhcp --pcap "$PCAP" \
    >"$IT_NODE_LOG" 2>&1 &
IT_NODE_PID=$!
it_wait_line "$IT_NODE_LOG" '^wisp-node: ready' 10 || it_fail "wisp-node not ready"
it_node_alive "starting"
t_start=$(date +%s.%N)

it_wait_line "$IT_NODE_LOG" '^wisp-node: dhcp bound ' 25 || it_fail "no lease within 25 s"
t_bound=$(date +%s.%N)
bound=$(grep -m1 '^wisp-node: dhcp bound ' "$IT_NODE_LOG")
it_log "node: $bound ($(awk -v a="$t_start" -v b="$t_bound" 'BEGIN { printf "%.1f", b - a }') s)"
addr=$(echo "$bound" | sed -nE 's/^wisp-node: dhcp bound ([0-9.]+)\/([0-9]+) .*/\1/p')
prefix=$(echo "$bound" | sed -nE 's/^wisp-node: dhcp bound ([0-9.]+)\/([0-9]+) .*/\2/p')
[ -n "$addr" ] || it_fail "cannot parse the lease line: $bound"
last=${addr##*.}
[ "${addr%.*}" = 198.18.0 ] && [ "$last" -ge 100 ] && [ "$last" -le 150 ] ||
    it_fail "leased address $addr outside the dnsmasq range"
[ "$prefix" = 24 ] || it_fail "prefix /$prefix, want /24"
echo "$bound" | grep -q " gw $IT_LINUX_IP dns $IT_LINUX_IP lease 120 s t1 $T1 s " ||
    it_fail "lease parameters not as served: $bound"

# Renewal at T1 (8 s after the REQUEST): unicast REQUEST, ACK, "renewed".
it_wait_line "$IT_NODE_LOG" '^wisp-node: dhcp renewed ' 20 || it_fail "no renewal within 20 s of the lease"
t_ren=$(date +%s.%N)
it_log "node: $(grep -m1 '^wisp-node: dhcp renewed ' "$IT_NODE_LOG") ($(awk -v a="$t_bound" -v b="$t_ren" 'BEGIN { printf "%.1f", b - a }') s after bound)"
grep -q "DHCPACK(.*) $addr" "$DLOG" || it_fail "dnsmasq log shows no DHCPACK for $addr"

# The node answers at the leased address.
out=$(it_ns_t 20 ping -n -c 3 -i 0.2 -W 2 -q "$addr" 2>&1)
rc=$?
it_log "ping $addr: $(echo "$out" | grep 'packets transmitted')"
[ "$rc" -eq 0 ] || it_fail "ping $addr failed: $out"
echo "$out" | grep -q ' 3 received' || it_fail "ping $addr: not every echo answered: $out"

# Stop: DHCPRELEASE, exit 0, pools at baseline.
it_stop_node
grep -q '^wisp-node: dhcp released' "$IT_NODE_LOG" || it_fail "no 'dhcp released' line"
it_wait_line "$DLOG" "DHCPRELEASE\(.*\) $addr" 5 || it_fail "dnsmasq did not log the DHCPRELEASE of $addr"
it_log "dnsmasq: $(grep -m1 'DHCPRELEASE' "$DLOG" | sed 's/^dnsmasq-dhcp[^:]*: //')"
drops=$(( $(it_counter dhcp.drop.bad) + $(it_counter dhcp.drop.opts) + $(it_counter dhcp.drop.short) ))
[ "$drops" -eq 0 ] || it_fail "the node dropped $drops dnsmasq messages as malformed"

# The capture: clean, and the messages of the exchange.
it_pcap_clean "$PCAP"
disc=$(it_pcap_count "$PCAP" 'dhcp.option.dhcp == 1')
req=$(it_pcap_count "$PCAP" 'dhcp.option.dhcp == 3')
ren=$(it_pcap_count "$PCAP" "dhcp.option.dhcp == 3 && ip.src == $addr && ip.dst == $IT_LINUX_IP && dhcp.ip.client == $addr")
ack=$(it_pcap_count "$PCAP" 'dhcp.option.dhcp == 5')
rel=$(it_pcap_count "$PCAP" 'dhcp.option.dhcp == 7')
probe=$(it_pcap_count "$PCAP" "arp.opcode == 1 && arp.src.proto_ipv4 == 0.0.0.0 && arp.dst.proto_ipv4 == $addr")
it_log "capture: $disc DISCOVER, $req REQUEST ($ren unicast renewals), $ack ACK, $rel RELEASE, $probe ARP probes"
[ "$disc" -ge 1 ] || it_fail "no DISCOVER in the capture"
[ "$ren" -ge 1 ] || it_fail "no unicast renewal REQUEST in the capture"
[ "$ack" -ge 2 ] || it_fail "$ack ACKs in the capture, want >= 2"
[ "$rel" -eq 1 ] || it_fail "$rel RELEASEs in the capture, want 1"
[ "$probe" -eq 3 ] || it_fail "$probe ARP probes for $addr, want 3 (RFC 5227)"

# A second node: --dhcp --resolve. The resolver gets its server from the
# lease (option 6), and the name is asked once the lease is bound.
out=$(timeout -k 5 40 ip netns exec "$IT_NS" "$IT_NODE" --tap "$IT_TAP" --dhcp --resolve www.wisp.example 2>&1)
rc=$?
echo "$out" >"$IT_DIR/node2.log"
it_log "node 2: $(echo "$out" | grep -m1 '^wisp-node: resolve')"
[ "$rc" -eq 0 ] || it_fail "wisp-node --dhcp --resolve exited $rc: $(echo "$out" | tail -n 5)"
echo "$out" | grep -q '^wisp-node: dhcp bound .* dns '"$IT_LINUX_IP"' ' || it_fail "node 2: no lease with a DNS server"
echo "$out" | grep -q '^wisp-node: resolve www.wisp.example -> 198.18.7.7 ' ||
    it_fail "node 2: www.wisp.example not resolved through the leased DNS server"

it_pass
