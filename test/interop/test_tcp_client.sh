#!/usr/bin/env bash
# test_tcp_client.sh -- wisp-node as TCP client to a Linux server.
#
#  - wisp -> Linux: the node connects (--connect) and sends 20 MB
#    (WISP_IT_TCP_CLIENT_MB) of its deterministic pattern (--send), then
#    closes; the Linux server (tcppeer.py server-recv) reads until EOF; the
#    SHA-256 the node reports for what it sent equals the one Linux
#    computed over what arrived, and the byte counts match;
#  - Linux -> wisp: the Linux server sends 20 MB of random data and closes;
#    the node (--recv) reads until the close; the SHA-256 the node
#    computed equals the server's;
#  - both node runs end with exit 0 and the pools back at baseline; both
#    captures decode clean (IPv4/TCP checksums) and hold no RST.
# Goodput of both directions is logged.
#
# Usage: test_tcp_client.sh PATH-TO-wisp-node   (root; exit 77 = skipped)

source "$(dirname "$0")/lib.sh"
it_init "$@"
it_python

MB=${WISP_IT_TCP_CLIENT_MB:-20}
bytes=$((MB * 1024 * 1024))
T_START=$(date +%s)

# ---- wisp -> Linux
PORT=5001
SRV_LOG="$IT_DIR/server_recv.log"
it_bg_start "$SRV_LOG" 180 "$IT_PY" "$IT_TCPPEER" server-recv "$IT_LINUX_IP" "$PORT"
srv=$IT_BG_PID
it_wait_line "$SRV_LOG" '^LISTENING' 10 || it_fail "Linux server not listening: $(cat "$SRV_LOG")"
it_run_node_client "$IT_DIR/node_send.log" 120 --pcap "$IT_DIR/send.pcap" \
    --connect "$IT_LINUX_IP:$PORT" --send "$bytes" --write-size 1000
it_bg_wait "$srv" 20
rc=$?
while IFS= read -r line; do it_log "server: $line"; done <"$SRV_LOG"
[ "$rc" -eq 0 ] || it_fail "Linux server (recv) failed (status $rc)"
node_hash=$(sed -nE 's/^wisp-node: client sent .* sha256 ([0-9a-f]{64})$/\1/p' "$IT_DIR/node_send.log")
node_acked=$(sed -nE 's/^wisp-node: client sent [0-9]+ of [0-9]+ bytes \(([0-9]+) acknowledged\).*/\1/p' "$IT_DIR/node_send.log")
srv_hash=$(sed -nE 's/^RESULT ok .*sha256=([0-9a-f]{64}).*/\1/p' "$SRV_LOG")
srv_bytes=$(sed -nE 's/^RESULT ok bytes=([0-9]+).*/\1/p' "$SRV_LOG")
[ -n "$node_hash" ] || it_fail "the node reported no SHA-256 of what it sent"
[ "$srv_bytes" = "$bytes" ] || it_fail "Linux received ${srv_bytes:-?} bytes, want $bytes"
[ "$node_acked" = "$bytes" ] || it_fail "the node saw ${node_acked:-?} bytes acknowledged, want $bytes"
[ "$node_hash" = "$srv_hash" ] || it_fail "SHA-256 differs: node sent $node_hash, Linux received ${srv_hash:-?}"
it_log "wisp -> Linux: $bytes bytes, SHA-256 matches ($node_hash)"
it_pcap_tcp_check "$IT_DIR/send.pcap" 0 -d tcp.port==$PORT,data

# ---- Linux -> wisp
PORT=5002
SRV_LOG="$IT_DIR/server_send.log"
it_bg_start "$SRV_LOG" 180 "$IT_PY" "$IT_TCPPEER" server-send "$IT_LINUX_IP" "$PORT" "$bytes"
srv=$IT_BG_PID
it_wait_line "$SRV_LOG" '^LISTENING' 10 || it_fail "Linux server not listening: $(cat "$SRV_LOG")"
it_run_node_client "$IT_DIR/node_recv.log" 120 --pcap "$IT_DIR/recv.pcap" \
    --connect "$IT_LINUX_IP:$PORT" --recv
it_bg_wait "$srv" 20
rc=$?
while IFS= read -r line; do it_log "server: $line"; done <"$SRV_LOG"
[ "$rc" -eq 0 ] || it_fail "Linux server (send) failed (status $rc)"
node_hash=$(sed -nE 's/^wisp-node: client received .* sha256 ([0-9a-f]{64})$/\1/p' "$IT_DIR/node_recv.log")
node_bytes=$(sed -nE 's/^wisp-node: client received ([0-9]+) bytes.*/\1/p' "$IT_DIR/node_recv.log")
srv_hash=$(sed -nE 's/^RESULT ok .*sha256=([0-9a-f]{64}).*/\1/p' "$SRV_LOG")
[ "$node_bytes" = "$bytes" ] || it_fail "the node received ${node_bytes:-?} bytes, want $bytes"
[ -n "$srv_hash" ] || it_fail "the Linux server reported no SHA-256"
[ "$node_hash" = "$srv_hash" ] || it_fail "SHA-256 differs: Linux sent $srv_hash, node received ${node_hash:-?}"
it_log "Linux -> wisp: $bytes bytes, SHA-256 matches ($node_hash)"
it_pcap_tcp_check "$IT_DIR/recv.pcap" 0 -d tcp.port==$PORT,data

it_log "run time $(($(date +%s) - T_START)) s"
it_pass
