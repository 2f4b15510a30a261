#!/usr/bin/env bash
# test_pmtu.sh -- path MTU discovery (RFC 1191) against a real Linux router.
#
#   wisp-node (tap, 198.18.0.2/24, gateway 198.18.0.1)
#     | wtap0: Linux 198.18.0.1/24, namespace A (forwarding on)
#     | veth vpa 198.18.1.1/24, MTU 1000 (the narrow hop)
#     | veth vpb 198.18.1.2/24, MTU 1000, namespace B: the receiver, whose
#     |   route back announces MSS 1460 (advmss), so wisp starts with
#     |   1460-byte segments and must discover the path MTU
#
#  - wisp sends 4 MB (WISP_IT_PMTU_MB) to the Linux receiver in B with DF
#    set; the Linux router answers the first full-size segments with ICMP
#    "fragmentation needed" (next-hop MTU 1000); wisp lowers its MSS to 960,
#    resends, and the transfer completes: SHA-256 of what wisp sent equals
#    what Linux received, wisp counted icmp.pmtu.lowered and tcp.pmtu.lower
#    and exits 0 with its pools back at baseline;
#  - the capture on the tap shows the ICMP type 3 code 4 from the router
#    and no wisp segment larger than 1000 bytes after it;
#  - black hole: a policy route drops the ICMP messages the router
#    originates; a fresh node detects the black hole after its timeouts, falls back
#    to MSS 536 and completes the same transfer SHA-256-exact.
#
# Only namespaces this test creates are configured (A: the lib's; B: its
# own, deleted at exit); addresses in 198.18.0.0/15 only.
#
# Usage: test_pmtu.sh PATH-TO-wisp-node   (root; exit 77 = skipped)

source "$(dirname "$0")/lib.sh"
it_init "$@"
it_python

MB=${WISP_IT_PMTU_MB:-4}
bytes=$((MB * 1024 * 1024))
NS_B="wisp-it-$$-pmtu-b"
ROUTER_B=198.18.1.1
RECV_IP=198.18.1.2
PORT=5001

pmtu_cleanup() {
    local rc=$?
    timeout -k 5 20 ip netns del "$NS_B" 2>/dev/null
    (exit "$rc")
    it_cleanup
}
trap pmtu_cleanup EXIT

timeout 10 ip netns add "$NS_B" || it_fail "cannot create namespace $NS_B"
nsb() { timeout -k 5 30 ip netns exec "$NS_B" "$@"; }
nsb ip link set lo up || it_fail "lo up in B"
nsb sysctl -q -w net.ipv6.conf.all.disable_ipv6=1 >/dev/null 2>&1 || true
it_ns ip link add vpa mtu 1000 type veth peer name vpb netns "$NS_B" mtu 1000 || it_fail "veth pair"
it_ns ip addr add "$ROUTER_B/24" dev vpa || it_fail "address on vpa"
it_ns ip link set vpa up || it_fail "vpa up"
nsb ip addr add "$RECV_IP/24" dev vpb || it_fail "address on vpb"
nsb ip link set vpb up || it_fail "vpb up"
# the receiver announces MSS 1460 towards wisp (as a host on a 1500-byte
# LAN behind the narrow hop would)
nsb ip route add 198.18.0.0/24 via "$ROUTER_B" dev vpb advmss 1460 || it_fail "route in B"
it_ns sysctl -q -w net.ipv4.ip_forward=1 >/dev/null || it_fail "forwarding in A"
it_ns sysctl -q -w net.ipv4.conf.all.rp_filter=0 >/dev/null 2>&1 || true
it_log "router A: $IT_LINUX_IP (tap) -> $ROUTER_B (vpa, MTU 1000) -> B $RECV_IP"

SRV_LOG="$IT_DIR/server_recv.log"
timeout -k 5 150 ip netns exec "$NS_B" "$IT_PY" "$IT_TCPPEER" server-recv "$RECV_IP" "$PORT" >"$SRV_LOG" 2>&1 &
srv=$!
IT_BG_PIDS="$IT_BG_PIDS $srv"
it_wait_line "$SRV_LOG" '^LISTENING' 10 || it_fail "Linux server not listening: $(cat "$SRV_LOG")"

it_run_node_client "$IT_DIR/node_send.log" 120 --gw "$IT_LINUX_IP" --pcap "$IT_DIR/send.pcap" \
    --connect "$RECV_IP:$PORT" --send "$bytes" --write-size 1460
it_bg_wait "$srv" 20
rc=$?
while IFS= read -r line; do it_log "server: $line"; done <"$SRV_LOG"
[ "$rc" -eq 0 ] || it_fail "Linux server (recv) failed (status $rc)"
node_hash=$(sed -nE 's/^wisp-node: client sent .* sha256 ([0-9a-f]{64})$/\1/p' "$IT_DIR/node_send.log")
srv_hash=$(sed -nE 's/^RESULT ok .*sha256=([0-9a-f]{64}).*/\1/p' "$SRV_LOG")
srv_bytes=$(sed -nE 's/^RESULT ok bytes=([0-9]+).*/\1/p' "$SRV_LOG")
[ "$srv_bytes" = "$bytes" ] || it_fail "Linux received ${srv_bytes:-?} bytes, want $bytes"
[ -n "$node_hash" ] && [ "$node_hash" = "$srv_hash" ] ||
    it_fail "SHA-256 differs: node sent ${node_hash:-?}, Linux received ${srv_hash:-?}"
it_log "wisp -> Linux through the narrow hop: $bytes bytes, SHA-256 matches"

lowered=$(it_counter icmp.pmtu.lowered)
tcplow=$(it_counter tcp.pmtu.lower)
reseg=$(it_counter tcp.pmtu.reseg)
it_log "node: icmp.pmtu.lowered=$lowered tcp.pmtu.lower=$tcplow tcp.pmtu.reseg=$reseg" \
    "icmp.err.drop.seq=$(it_counter icmp.err.drop.seq) tcp.timeout=$(it_counter tcp.timeout)"
[ "$lowered" -ge 1 ] || it_fail "wisp did not lower the path MTU (icmp.pmtu.lowered=$lowered)"
[ "$tcplow" -ge 1 ] || it_fail "wisp did not lower its MSS (tcp.pmtu.lower=$tcplow)"

f="$IT_DIR/send.pcap"
nicmp=$(it_pcap_count "$f" "icmp.type == 3 && icmp.code == 4 && ip.src == $IT_LINUX_IP && icmp.mtu == 1000")
[ "$nicmp" -ge 1 ] || it_fail "no 'fragmentation needed' (MTU 1000) from the Linux router in the capture"
ndf=$(it_pcap_count "$f" "ip.src == $IT_NODE_IP && tcp && ip.flags.df == 1")
[ "$ndf" -ge 1 ] || it_fail "wisp's segments do not carry DF"
first=$(timeout -k 5 60 tshark -n -r "$f" -Y "icmp.type == 3 && icmp.code == 4" -T fields -e frame.number 2>/dev/null |
    head -n 1)
big=$(it_pcap_count "$f" "frame.number > $((first + 40)) && ip.src == $IT_NODE_IP && ip.len > 1000")
it_log "capture: $nicmp frag-needed, first at frame $first; wisp datagrams > 1000 bytes 40 frames later: $big"
[ "$big" -eq 0 ] || it_fail "wisp still sends datagrams larger than the path MTU ($big)"
# The TCP headers quoted inside the ICMP messages are truncated segments
# (tshark calls their checksum bad): check the TCP stream without them.
timeout -k 5 60 tshark -n -r "$f" -Y '!icmp' -w "$IT_DIR/tcp_only.pcap" 2>/dev/null || it_fail "tshark filter"
badicmp=$(it_pcap_count "$f" "icmp && (icmp.checksum.status == 0 || ip.checksum.status == 0)")
[ "$badicmp" -eq 0 ] || it_fail "$badicmp ICMP messages with a bad checksum"
it_pcap_tcp_check "$IT_DIR/tcp_only.pcap" 0 -d tcp.port==$PORT,data

# ---- black hole: the same path, but the router's "fragmentation needed"
# never reaches wisp: a policy rule in the router's namespace sends every
# ICMP message the router itself originates into a blackhole route (as a
# firewall dropping ICMP would; forwarded traffic is untouched). A fresh
# node (empty path MTU cache) must detect the black hole by its timeouts
# and fall back to WISP_PMTU_MIN - 40 (RFC 4821-style), then complete.
if ! it_ns ip rule add ipproto icmp lookup 100 prio 100 2>"$IT_DIR/rule.err" ||
    ! it_ns ip route add blackhole default table 100 2>>"$IT_DIR/rule.err"; then
    it_log "black-hole part skipped: policy rule unavailable: $(head -n 2 "$IT_DIR/rule.err")"
    it_pass
fi
PORT=5002
SRV_LOG="$IT_DIR/server_recv2.log"
timeout -k 5 150 ip netns exec "$NS_B" "$IT_PY" "$IT_TCPPEER" server-recv "$RECV_IP" "$PORT" >"$SRV_LOG" 2>&1 &
srv=$!
IT_BG_PIDS="$IT_BG_PIDS $srv"
it_wait_line "$SRV_LOG" '^LISTENING' 10 || it_fail "Linux server not listening: $(cat "$SRV_LOG")"
it_run_node_client "$IT_DIR/node_bh.log" 120 --gw "$IT_LINUX_IP" --pcap "$IT_DIR/bh.pcap" \
    --connect "$RECV_IP:$PORT" --send "$bytes" --write-size 1460
it_bg_wait "$srv" 20
rc=$?
while IFS= read -r line; do it_log "server: $line"; done <"$SRV_LOG"
[ "$rc" -eq 0 ] || it_fail "Linux server (recv, black hole) failed (status $rc)"
node_hash=$(sed -nE 's/^wisp-node: client sent .* sha256 ([0-9a-f]{64})$/\1/p' "$IT_DIR/node_bh.log")
srv_hash=$(sed -nE 's/^RESULT ok .*sha256=([0-9a-f]{64}).*/\1/p' "$SRV_LOG")
srv_bytes=$(sed -nE 's/^RESULT ok bytes=([0-9]+).*/\1/p' "$SRV_LOG")
[ "$srv_bytes" = "$bytes" ] || it_fail "black hole: Linux received ${srv_bytes:-?} bytes, want $bytes"
[ -n "$node_hash" ] && [ "$node_hash" = "$srv_hash" ] ||
    it_fail "black hole: SHA-256 differs: node sent ${node_hash:-?}, Linux received ${srv_hash:-?}"
bh=$(it_counter tcp.pmtu.blackhole)
it_log "black hole: $bytes bytes, SHA-256 matches; tcp.pmtu.blackhole=$bh icmp.pmtu.lowered=$(it_counter icmp.pmtu.lowered)" \
    "tcp.timeout=$(it_counter tcp.timeout); $(grep '^wisp-node: client tcp:' "$IT_DIR/node_bh.log")"
[ "$bh" -ge 1 ] || it_fail "black hole not detected (tcp.pmtu.blackhole=$bh)"
[ "$(it_counter icmp.pmtu.lowered)" -eq 0 ] || it_fail "an ICMP came through the filter"
grep -q '^wisp-node: client tcp: mss 536 ' "$IT_DIR/node_bh.log" || it_fail "MSS is not 536 after the fallback"
it_pass
