#!/usr/bin/env bash
# test_api_netconn.sh -- wisp-node --api netconn against Linux over TAP:
# the stack on its own thread, the services and the client as application
# threads on the netconn API (apps/lib/services_netconn.c). Also the body
# of test_api_socket.sh, which sets WISP_IT_API=socket and sources this
# file (same checks, BSD socket API: apps/lib/services_socket.c).
#
#  - TCP echo (7): a 4 MB echo (random data, two threads, SHA-256 of what
#    came back = SHA-256 of what was sent), 6 parallel echo transfers of
#    1 MB each (byte-exact, SHA-256 each), small exchanges 1..100000 bytes
#    and ping-pongs, a client that resets the connection mid-transfer, and
#    3 short connections after it; every echo connection the node reports
#    closed has rx = tx;
#  - TCP chargen (19): 2 MB read and every byte checked against the RFC 864
#    pattern (line i = 72 characters from character i mod 95, CR LF), then
#    a clean close (our FIN, the node's FIN after the rest is drained);
#  - TCP discard (9): 4 MB in random-sized writes; the node's report for
#    that connection says exactly that many bytes received, nothing sent;
#  - UDP echo (7): datagrams of every size 1..1472 and 4000, 30000, 65507
#    bytes come back byte-exact (SHA-256), none lost or duplicated; UDP
#    discard (9) takes datagrams without a reply, counted by the node;
#  - the node stops cleanly on SIGTERM (exit 0, services closed first,
#    "pools: all back at baseline"); its counters match the traffic;
#  - client mode through the API: wisp sends 8 MB (--send, --write-size
#    1000) to a Linux server (SHA-256 and byte count equal), Linux sends 8
#    MB to wisp (--recv; SHA-256 equal), and 20 sequential connects
#    (--connects) to a Linux listener; every run exits 0 with the pools at
#    baseline;
#  - the captures decode clean (IPv4/TCP/UDP checksums); no RST from the
#    node anywhere, and none at all in the client captures.
#
# Usage: test_api_netconn.sh PATH-TO-wisp-node   (root; exit 77 = skipped)

source "$(dirname "$0")/lib.sh"
it_init "$@"
it_python

API=${WISP_IT_API:-netconn}
MB=${WISP_IT_API_MB:-4}
CLIENT_MB=${WISP_IT_API_CLIENT_MB:-8}
PARALLEL=6
PCAP="$IT_DIR/api_$API.pcap"
T_START=$(date +%s)
it_log "API under test: $API"

it_start_node --api "$API" --pcap "$PCAP"
grep -q "^wisp-node: service tcp/7 echo ($API API" "$IT_NODE_LOG" ||
    it_fail "the node does not run its services on the $API API: $(grep 'service' "$IT_NODE_LOG" | head -n 2)"

# ------------------------------------------------------------- TCP echo
bytes=$((MB * 1024 * 1024))
it_peer 120 echo "$IT_NODE_IP" 7 "$bytes" || it_fail "echo of $bytes bytes failed"
echo "$IT_PEER_OUT" | grep -q '^RESULT ok' || it_fail "echo: no success line"
it_wait_line "$IT_NODE_LOG" "^wisp-node: tcp/7 echo .* closed: rx $bytes tx $bytes$" 5 ||
    it_fail "the node did not report a clean close with $bytes bytes each way: $(grep 'tcp/7' "$IT_NODE_LOG" | tail -n 3)"
it_peer 120 echo-parallel "$IT_NODE_IP" 7 "$PARALLEL" $((1024 * 1024)) || it_fail "parallel echo transfers failed"
it_peer 120 echo-small "$IT_NODE_IP" 7 || it_fail "small echo exchanges failed"
echo "$IT_PEER_OUT" | grep -q '^RESULT ok' || it_fail "echo-small: no success line"
it_node_alive "after the echo transfers"
it_peer 30 echo-reset "$IT_NODE_IP" 7 $((1024 * 1024)) || it_fail "echo-reset client failed"
rst_port=$(echo "$IT_PEER_OUT" | sed -nE 's/^LOCALPORT ([0-9]+)$/\1/p')
[ -n "$rst_port" ] || it_fail "echo-reset: no local port reported"
# Both APIs report the reset as a reset (ERR_RST): netconn hands it to the
# echo's next (or blocked) call, the socket layer turns it into ECONNRESET
# for the send or recv that meets it (sockets.h), never EPIPE / EOF.
rst_how=ERR_RST
it_wait_line "$IT_NODE_LOG" "^wisp-node: tcp/7 echo [0-9.]+:$rst_port ended: .*$rst_how" 5 ||
    it_fail "the node did not report the reset of port $rst_port: $(grep 'tcp/7' "$IT_NODE_LOG" | tail -n 2)"
it_peer 30 conns "$IT_NODE_IP" 7 3 || it_fail "echo after the reset failed"

# ---------------------------------------------------------- TCP chargen
cbytes=$((2 * 1024 * 1024))
it_peer 60 chargen "$IT_NODE_IP" 19 "$cbytes" || it_fail "chargen check failed"
echo "$IT_PEER_OUT" | grep -q '^RESULT ok' || it_fail "chargen: no success line"
it_wait_line "$IT_NODE_LOG" "^wisp-node: tcp/19 chargen .* closed: " 5 ||
    it_fail "the node did not report a clean chargen close: $(grep 'tcp/19' "$IT_NODE_LOG" | tail -n 2)"

# ---------------------------------------------------------- TCP discard
dbytes=$((MB * 1024 * 1024))
it_peer 60 discard "$IT_NODE_IP" 9 "$dbytes" random || it_fail "discard transfer failed"
it_wait_line "$IT_NODE_LOG" "^wisp-node: tcp/9 discard .* closed: rx $dbytes tx 0$" 5 ||
    it_fail "the node did not report $dbytes bytes discarded: $(grep 'tcp/9' "$IT_NODE_LOG" | tail -n 2)"

# ------------------------------------------------------------------ UDP
UDPC="$IT_DIR/udp_client.py"
cat >"$UDPC" <<'PYEOF'
# UDP echo / discard check of test_api_*.sh; "RESULT ok" last on success.
import hashlib, os, socket, sys, time
HOST = sys.argv[1]
fails = []
def sock(port, timeout):
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4 << 20)
    s.connect((HOST, port))
    s.settimeout(timeout)
    return s
s = sock(7, 2.0)
sizes = list(range(1, 1473)) + [4000, 30000, 65507]
ok = 0
for n in sizes:
    data = os.urandom(n)
    s.send(data)
    try:
        got = s.recv(70000)
    except socket.timeout:
        fails.append("echo %d: no reply within 2 s" % n)
        if len(fails) > 10:
            break
        continue
    if hashlib.sha256(got).digest() != hashlib.sha256(data).digest():
        fails.append("echo %d: reply differs (%d bytes)" % (n, len(got)))
    else:
        ok += 1
s.settimeout(0.3)
try:
    s.recv(70000)
    fails.append("echo: an extra datagram arrived")
except socket.timeout:
    pass
print("echo: %d of %d datagrams echoed byte-exact" % (ok, len(sizes)))
d = sock(9, 0.5)
dsizes = [1, 100, 1472, 4000, 65507]
for n in dsizes:
    d.send(os.urandom(n))
    time.sleep(0.01)
try:
    d.recv(70000)
    fails.append("discard: got a reply")
except socket.timeout:
    pass
print("COUNTS echo=%d echobytes=%d discard=%d" % (len(sizes), sum(sizes), len(dsizes)))
for f in fails[:20]:
    print("FAIL " + f)
print("RESULT " + ("ok" if not fails else "fail"))
sys.exit(0 if not fails else 1)
PYEOF
out=$(it_ns_t 120 "$IT_PY" "$UDPC" "$IT_NODE_IP" 2>&1)
rc=$?
while IFS= read -r line; do it_log "udp: $line"; done <<<"$out"
[ "$rc" -eq 0 ] || it_fail "UDP echo/discard check failed"
want_echo=$(echo "$out" | sed -nE 's/^COUNTS echo=([0-9]+) .*/\1/p')
want_ebytes=$(echo "$out" | sed -nE 's/^COUNTS .*echobytes=([0-9]+) .*/\1/p')
want_discard=$(echo "$out" | sed -nE 's/^COUNTS .*discard=([0-9]+)$/\1/p')
sleep 0.3

it_stop_node
grep -q "^services ($API API):" "$IT_NODE_LOG" || it_fail "no services report of the $API API"
conns=$(it_tcp_svc tcp/7 connections)
want=$((1 + PARALLEL + 19 + 1 + 3))  # bulk + parallel + echo-small (17 sizes + 2 ping-pongs) + reset + 3
it_log "node: tcp/7 echo connections $conns closed $(it_tcp_svc tcp/7 closed) resets $(it_tcp_svc tcp/7 resets)" \
    "aborted $(it_tcp_svc tcp/7 aborted) refused $(it_tcp_svc tcp/7 refused) rx $(it_tcp_svc tcp/7 rx) tx $(it_tcp_svc tcp/7 tx)"
[ "$conns" = "$want" ] || it_fail "echo accepted $conns connections, want $want"
[ "$(it_tcp_svc tcp/7 closed)" = $((want - 1)) ] || it_fail "echo closed $(it_tcp_svc tcp/7 closed) cleanly, want $((want - 1))"
[ "$(it_tcp_svc tcp/7 resets)" = 1 ] || it_fail "echo saw $(it_tcp_svc tcp/7 resets) resets, want 1"
[ "$(it_tcp_svc tcp/7 active)" = 0 ] || it_fail "echo connections still active at exit"
uneven=$(awk '/^wisp-node: tcp\/7 echo .* closed: rx/ && $7 != $9' "$IT_NODE_LOG")
[ -z "$uneven" ] || it_fail "closed echo connections with rx != tx: $uneven"
[ "$(it_tcp_svc tcp/9 rx)" = "$dbytes" ] || it_fail "discard received $(it_tcp_svc tcp/9 rx) bytes, want $dbytes"
[ "$(it_tcp_svc tcp/9 tx)" = 0 ] || it_fail "discard sent bytes"
[ "$(it_tcp_svc tcp/19 closed)" = 1 ] || it_fail "chargen closed $(it_tcp_svc tcp/19 closed) connections, want 1"
ctx=$(it_tcp_svc tcp/19 tx)
[ "$ctx" -ge "$cbytes" ] || it_fail "chargen sent $ctx bytes, want at least $cbytes"
got_echo=$(awk '$1 == "udp/7" && $2 == "echo" { print $4 }' "$IT_NODE_LOG")
got_ebytes=$(awk '$1 == "udp/7" && $2 == "echo" { print $6 }' "$IT_NODE_LOG")
got_discard=$(awk '$1 == "udp/9" && $2 == "discard" { print $4 }' "$IT_NODE_LOG")
it_log "node: udp echo ${got_echo:-?} datagrams ${got_ebytes:-?} bytes, discard ${got_discard:-?}"
[ "${got_echo:-x}" = "$want_echo" ] || it_fail "UDP echo served ${got_echo:-?} datagrams, want $want_echo"
[ "${got_ebytes:-x}" = "$want_ebytes" ] || it_fail "UDP echo served ${got_ebytes:-?} bytes, want $want_ebytes"
[ "${got_discard:-x}" = "$want_discard" ] || it_fail "UDP discard took ${got_discard:-?} datagrams, want $want_discard"

it_pcap_tcp_check "$PCAP" any -d tcp.port==7,data -d tcp.port==9,data -d tcp.port==19,data -d udp.port==7,data -d udp.port==9,data
node_rst=$(it_pcap_count "$PCAP" "tcp.flags.reset == 1 && ip.src == $IT_NODE_IP")
other_rst=$(it_pcap_count "$PCAP" "tcp.flags.reset == 1 && !(tcp.port == $rst_port)")
[ "$node_rst" = 0 ] || it_fail "capture holds $node_rst RST segments from the node"
[ "$other_rst" = 0 ] || it_fail "capture holds $other_rst RST segments of connections other than the reset one"

# -------------------------------------------------------- client mode
cb=$((CLIENT_MB * 1024 * 1024))
PORT=5001
SRV_LOG="$IT_DIR/server_recv.log"
it_bg_start "$SRV_LOG" 120 "$IT_PY" "$IT_TCPPEER" server-recv "$IT_LINUX_IP" "$PORT"
srv=$IT_BG_PID
it_wait_line "$SRV_LOG" '^LISTENING' 10 || it_fail "Linux server not listening: $(cat "$SRV_LOG")"
it_run_node_client "$IT_DIR/node_send.log" 60 --api "$API" --pcap "$IT_DIR/send.pcap" \
    --connect "$IT_LINUX_IP:$PORT" --send "$cb" --write-size 1000
it_bg_wait "$srv" 20 || it_fail "Linux server (recv) failed: $(tail -n 3 "$SRV_LOG")"
node_hash=$(sed -nE 's/^wisp-node: client sent .* sha256 ([0-9a-f]{64})$/\1/p' "$IT_DIR/node_send.log")
srv_hash=$(sed -nE 's/^RESULT ok .*sha256=([0-9a-f]{64}).*/\1/p' "$SRV_LOG")
srv_bytes=$(sed -nE 's/^RESULT ok bytes=([0-9]+).*/\1/p' "$SRV_LOG")
[ "$srv_bytes" = "$cb" ] || it_fail "Linux received ${srv_bytes:-?} bytes, want $cb"
[ -n "$node_hash" ] && [ "$node_hash" = "$srv_hash" ] ||
    it_fail "SHA-256 differs: node sent ${node_hash:-?}, Linux received ${srv_hash:-?}"
it_log "client wisp -> Linux ($API): $cb bytes, SHA-256 matches"
it_pcap_tcp_check "$IT_DIR/send.pcap" 0 -d tcp.port==$PORT,data

PORT=5002
SRV_LOG="$IT_DIR/server_send.log"
it_bg_start "$SRV_LOG" 120 "$IT_PY" "$IT_TCPPEER" server-send "$IT_LINUX_IP" "$PORT" "$cb"
srv=$IT_BG_PID
it_wait_line "$SRV_LOG" '^LISTENING' 10 || it_fail "Linux server not listening: $(cat "$SRV_LOG")"
it_run_node_client "$IT_DIR/node_recv.log" 60 --api "$API" --pcap "$IT_DIR/recv.pcap" \
    --connect "$IT_LINUX_IP:$PORT" --recv
it_bg_wait "$srv" 20 || it_fail "Linux server (send) failed: $(tail -n 3 "$SRV_LOG")"
node_hash=$(sed -nE 's/^wisp-node: client received .* sha256 ([0-9a-f]{64})$/\1/p' "$IT_DIR/node_recv.log")
node_bytes=$(sed -nE 's/^wisp-node: client received ([0-9]+) bytes.*/\1/p' "$IT_DIR/node_recv.log")
srv_hash=$(sed -nE 's/^RESULT ok .*sha256=([0-9a-f]{64}).*/\1/p' "$SRV_LOG")
[ "$node_bytes" = "$cb" ] || it_fail "the node received ${node_bytes:-?} bytes, want $cb"
[ -n "$srv_hash" ] && [ "$node_hash" = "$srv_hash" ] ||
    it_fail "SHA-256 differs: Linux sent ${srv_hash:-?}, node received ${node_hash:-?}"
it_log "client Linux -> wisp ($API): $cb bytes, SHA-256 matches"
it_pcap_tcp_check "$IT_DIR/recv.pcap" 0 -d tcp.port==$PORT,data

# 20 sequential connects to a Linux listener that accepts and closes.
PORT=5003
ACC="$IT_DIR/acceptor.py"
cat >"$ACC" <<'PYEOF'
# Accept COUNT connections, read each to EOF and close; print "ACCEPTED n".
import socket, sys
host, port, count = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
l = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
l.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
l.bind((host, port))
l.listen(256)
l.settimeout(30)
print("LISTENING", flush=True)
n = 0
while n < count:
    c, _ = l.accept()
    c.settimeout(10)
    while c.recv(65536):
        pass
    c.close()
    n += 1
print("ACCEPTED %d" % n, flush=True)
PYEOF
it_bg_start "$IT_DIR/acceptor.log" 120 "$IT_PY" "$ACC" "$IT_LINUX_IP" "$PORT" 20
srv=$IT_BG_PID
it_wait_line "$IT_DIR/acceptor.log" '^LISTENING' 10 || it_fail "Linux acceptor not listening"
it_run_node_client "$IT_DIR/node_connects.log" 60 --api "$API" --connect "$IT_LINUX_IP:$PORT" --connects 20
it_bg_wait "$srv" 20 || it_fail "Linux acceptor failed: $(cat "$IT_DIR/acceptor.log")"
grep -q '^ACCEPTED 20$' "$IT_DIR/acceptor.log" || it_fail "Linux accepted $(cat "$IT_DIR/acceptor.log")"
grep -qE '^wisp-node: client 20 connects to .* mean [0-9.]+ us' "$IT_DIR/node_connects.log" ||
    it_fail "no connect-time line from the node"

it_log "run time $(($(date +%s) - T_START)) s"
it_pass
