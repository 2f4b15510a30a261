#!/usr/bin/env bash
# test_tcp_discard.sh -- Linux TCP sockets against wisp-node's TCP discard
# service (RFC 863, port 9).
#
#  - bulk: Linux sends 100 MB (WISP_IT_TCP_BULK_MB) in 64 KB writes, shuts
#    down its write side and waits for the node's close; the node's report
#    line for that connection must say exactly that many bytes received,
#    closed cleanly;
#  - goodput: for write sizes 64, 128, 256, 512, 1024, 1460 and random
#    1..1460, Linux (Nagle on, as by default) sends 20 MB
#    (WISP_IT_TCP_GOODPUT_MB) per size and measures connect .. peer's close;
#    the table goes to the log and to interop-tcp-goodput.txt next to
#    wisp-node (the build directory);
#  - the node's exit report: discard connections/closed/rx add up, no
#    resets or refusals; it stops cleanly with the pools at baseline;
#  - the capture decodes without malformed frames or bad checksums
#    (IPv4/TCP validated) and holds no RST; TCP analysis flags are logged.
#
# Usage: test_tcp_discard.sh PATH-TO-wisp-node   (root; exit 77 = skipped)

source "$(dirname "$0")/lib.sh"
it_init "$@"
it_python

BULK_MB=${WISP_IT_TCP_BULK_MB:-100}
GP_MB=${WISP_IT_TCP_GOODPUT_MB:-20}
SIZES="64 128 256 512 1024 1460 random"
PCAP="$IT_DIR/tcp_discard.pcap"
TABLE_OUT="$(dirname "$IT_NODE")/interop-tcp-goodput.txt"
T_START=$(date +%s)

it_start_node --pcap "$PCAP"

bulk=$((BULK_MB * 1024 * 1024))
it_peer 180 discard "$IT_NODE_IP" 9 "$bulk" 65536 || it_fail "bulk transfer of $bulk bytes to discard failed"
echo "$IT_PEER_OUT" | grep -q '^RESULT ok' || it_fail "bulk transfer: no success line"
bulk_mbps=$(echo "$IT_PEER_OUT" | sed -nE 's/^RESULT ok .*mbps=([0-9.]+).*/\1/p')
it_node_alive "after the bulk transfer"
# The node reports each connection when it closes it (after the peer's
# FIN, which the peer sends after its last byte).
it_wait_line "$IT_NODE_LOG" "^wisp-node: tcp/9 discard .* closed: rx $bulk tx 0$" 5 ||
    it_fail "the node did not report a clean close with exactly $bulk bytes received: $(grep 'tcp/9' "$IT_NODE_LOG" | tail -n 3)"
it_log "bulk: $BULK_MB MB received by the node exactly, $bulk_mbps MB/s"

gp=$((GP_MB * 1024 * 1024))
table="Linux -> wisp TCP discard goodput (MB = 10^6 bytes; $GP_MB MiB per size; Nagle on; connect .. close)
write size | MB/s"
total=$bulk
conns=1
for size in $SIZES; do
    it_peer 120 discard "$IT_NODE_IP" 9 "$gp" "$size" || it_fail "goodput run with write size $size failed"
    mbps=$(echo "$IT_PEER_OUT" | sed -nE 's/^RESULT ok .*mbps=([0-9.]+).*/\1/p')
    [ -n "$mbps" ] || it_fail "goodput run with write size $size: no result"
    table="$table
$(printf '%10s | %8s' "$size" "$mbps")"
    total=$((total + gp))
    conns=$((conns + 1))
    it_node_alive "after write size $size"
done
it_wait_line "$IT_NODE_LOG" "^wisp-node: tcp/9 discard .* closed: rx $gp tx 0$" 5 || true
while IFS= read -r line; do it_log "$line"; done <<<"$table"
{
    echo "$table"
    echo "(bulk $BULK_MB MiB in 64 KiB writes: $bulk_mbps MB/s; $(date -u '+%Y-%m-%d %H:%M:%S UTC'))"
} >"$TABLE_OUT" || it_log "warning: cannot write $TABLE_OUT"
it_log "goodput table written to $TABLE_OUT"

it_stop_node

got_conns=$(it_tcp_svc tcp/9 connections)
got_closed=$(it_tcp_svc tcp/9 closed)
got_rx=$(it_tcp_svc tcp/9 rx)
it_log "node: tcp/9 discard connections $got_conns closed $got_closed resets $(it_tcp_svc tcp/9 resets)" \
    "refused $(it_tcp_svc tcp/9 refused) rx $got_rx"
[ "$got_conns" = "$conns" ] || it_fail "discard accepted $got_conns connections, want $conns"
[ "$got_closed" = "$conns" ] || it_fail "discard closed $got_closed connections cleanly, want $conns"
[ "$got_rx" = "$total" ] || it_fail "discard received $got_rx bytes, want $total"
[ "$(it_tcp_svc tcp/9 resets)" = 0 ] || it_fail "discard saw resets"
[ "$(grep -c 'wisp-node: tcp/9 discard .* closed: rx' "$IT_NODE_LOG")" -eq "$conns" ] ||
    it_fail "not every discard connection was reported closed"

it_pcap_tcp_check "$PCAP" 0 -d tcp.port==9,data
it_log "run time $(($(date +%s) - T_START)) s"
it_pass
