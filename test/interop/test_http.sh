#!/usr/bin/env bash
# test_http.sh -- curl (Linux) against wisp-node's HTTP/1.1 server
# (--http, apps/lib/httpd.c, port 80):
#
#  - keep-alive: two URLs in one curl invocation share one connection
#    (%{num_connects} is 1 then 0), both 200 with the right bytes;
#  - 404 for an unknown path; 405 with "Allow: GET, HEAD" for POST and
#    DELETE; HEAD of the 1 MiB file: its length, no body;
#  - 400 for a malformed request line and for HTTP/1.1 without Host (raw
#    requests through socat), the server closing afterwards;
#  - /big.bin: exactly 1048576 bytes, SHA-256 equal to a copy generated
#    here (python3); time and goodput logged;
#  - 50 curl clients at once (each bounded by --max-time), all 200 with
#    the page's bytes;
#  - /status.json parses (python3 -m json.tool) and lists the interface,
#    a TCP connection and the pools; /status is HTML;
#  - clean stop (pools at baseline); the server's report: no refused
#    connection, no 5xx, the 4xx counted.
#
# Usage: test_http.sh PATH-TO-wisp-node   (root; exit 77 = skipped)

source "$(dirname "$0")/lib.sh"
it_init "$@"
it_python
command -v curl >/dev/null 2>&1 || it_fail "curl not installed"
command -v socat >/dev/null 2>&1 || it_fail "socat not installed"

BASE="http://$IT_NODE_IP"
PARALLEL=${WISP_IT_HTTP_PARALLEL:-50}
CURL=(curl --noproxy '*' -s --max-time 20)

it_start_node --http

# --- keep-alive: one connection for two URLs
out=$(it_ns "${CURL[@]}" -o "$IT_DIR/ka1" -o "$IT_DIR/ka2" -w '%{http_code} %{num_connects}\n' \
    "$BASE/" "$BASE/style.css") || it_fail "curl keep-alive run failed"
it_log "keep-alive: $(echo "$out" | tr '\n' ' ')"
[ "$(echo "$out" | sed -n 1p)" = "200 1" ] || it_fail "first URL: '$(echo "$out" | sed -n 1p)', want '200 1'"
[ "$(echo "$out" | sed -n 2p)" = "200 0" ] || it_fail "second URL reconnected or failed: '$(echo "$out" | sed -n 2p)', want '200 0'"
grep -q '<title>wisp</title>' "$IT_DIR/ka1" || it_fail "index page content"
grep -q '^body {' "$IT_DIR/ka2" || it_fail "style sheet content"

# --- 404, 405 (+ Allow), HEAD
code=$(it_ns "${CURL[@]}" -o /dev/null -w '%{http_code}' "$BASE/no/such/file") || it_fail "curl 404"
[ "$code" = 404 ] || it_fail "unknown path: $code, want 404"
code=$(it_ns "${CURL[@]}" -o /dev/null -w '%{http_code}' -X DELETE "$BASE/index.html") || it_fail "curl DELETE"
[ "$code" = 405 ] || it_fail "DELETE: $code, want 405"
hdrs=$(it_ns "${CURL[@]}" -D - -o /dev/null -X POST --data 'a=1&b=2' "$BASE/") || it_fail "curl POST"
echo "$hdrs" | grep -q '^HTTP/1.1 405 ' || it_fail "POST: $(echo "$hdrs" | head -n 1), want 405"
echo "$hdrs" | grep -qi '^Allow: GET, HEAD' || it_fail "405 without 'Allow: GET, HEAD'"
hdrs=$(it_ns "${CURL[@]}" -I "$BASE/big.bin") || it_fail "curl HEAD"
echo "$hdrs" | grep -q '^HTTP/1.1 200 ' || it_fail "HEAD: $(echo "$hdrs" | head -n 1)"
echo "$hdrs" | grep -qi '^Content-Length: 1048576' || it_fail "HEAD /big.bin: no Content-Length 1048576"
it_log "404, 405 (Allow: GET, HEAD), HEAD ok"

# --- 400: raw requests (socat), the server answers and closes
raw=$(printf 'BOGUS REQUEST\r\n\r\n' | it_ns_t 10 socat -t 5 - "TCP:$IT_NODE_IP:80") || it_fail "socat (bogus request)"
echo "$raw" | head -n 1 | grep -q '^HTTP/1.1 400 Bad Request' || it_fail "bogus request: '$(echo "$raw" | head -n 1)', want 400"
echo "$raw" | grep -qi '^Connection: close' || it_fail "400 without Connection: close"
raw=$(printf 'GET / HTTP/1.1\r\n\r\n' | it_ns_t 10 socat -t 5 - "TCP:$IT_NODE_IP:80") || it_fail "socat (no Host)"
echo "$raw" | head -n 1 | grep -q '^HTTP/1.1 400 ' || it_fail "HTTP/1.1 without Host: '$(echo "$raw" | head -n 1)', want 400"
raw=$(printf 'GET /style.css HTTP/1.0\r\n\r\n' | it_ns_t 10 socat -t 5 - "TCP:$IT_NODE_IP:80") || it_fail "socat (1.0)"
echo "$raw" | head -n 1 | grep -q '^HTTP/1.1 200 OK' || it_fail "HTTP/1.0 request: '$(echo "$raw" | head -n 1)'"
it_log "400 for a bogus request line and for 1.1 without Host; 1.0 answered"

# --- 1 MiB, byte-exact
"$IT_PY" - "$IT_DIR/big.want" <<'EOF' || it_fail "cannot generate the reference file"
import sys
words = bytearray()
for k in range(262144):
    words += (((k * 0x9E3779B1) + 0x7F4A7C15) & 0xFFFFFFFF).to_bytes(4, "big")
open(sys.argv[1], "wb").write(words)
EOF
out=$(it_ns "${CURL[@]}" -o "$IT_DIR/big.got" -w '%{http_code} %{size_download} %{time_connect} %{time_starttransfer} %{time_total} %{speed_download}' \
    "$BASE/big.bin") || it_fail "curl /big.bin failed"
read -r code size t_conn t_first t_total speed <<<"$out"
[ "$code" = 200 ] || it_fail "/big.bin: $code"
[ "$size" = 1048576 ] || it_fail "/big.bin: $size bytes, want 1048576"
want=$(sha256sum "$IT_DIR/big.want" | cut -d' ' -f1)
got=$(sha256sum "$IT_DIR/big.got" | cut -d' ' -f1)
[ "$want" = "$got" ] || it_fail "/big.bin SHA-256 $got, want $want"
it_log "/big.bin: 1048576 bytes, sha256 $got ok; connect ${t_conn}s, first byte ${t_first}s, total ${t_total}s," \
    "goodput $(awk -v s="$speed" 'BEGIN { printf "%.1f MB/s (%.0f Mbit/s)", s / 1e6, s * 8 / 1e6 }')"

# --- parallel clients
it_log "$PARALLEL clients at once"
pids=""
for i in $(seq 1 "$PARALLEL"); do
    timeout -k 5 30 ip netns exec "$IT_NS" curl --noproxy '*' -s --max-time 20 -o "$IT_DIR/par.$i" \
        -w '%{http_code}\n' "$BASE/index.html" >"$IT_DIR/par.$i.code" 2>&1 &
    pids="$pids $!"
done
fails=0
for p in $pids; do
    wait "$p" || fails=$((fails + 1))
done
ok=0
for i in $(seq 1 "$PARALLEL"); do
    if [ "$(cat "$IT_DIR/par.$i.code")" = 200 ] && cmp -s "$IT_DIR/par.$i" "$IT_DIR/ka1"; then
        ok=$((ok + 1))
    fi
done
it_log "parallel: $ok of $PARALLEL got 200 with the page ($fails curl failures)"
[ "$ok" = "$PARALLEL" ] || it_fail "only $ok of $PARALLEL parallel clients succeeded"
it_node_alive "after the parallel clients"

# --- status
it_ns "${CURL[@]}" -o "$IT_DIR/status.json" "$BASE/status.json" || it_fail "curl /status.json"
"$IT_PY" -m json.tool "$IT_DIR/status.json" >/dev/null || it_fail "/status.json does not parse: $(head -c 300 "$IT_DIR/status.json")"
"$IT_PY" - "$IT_DIR/status.json" "$IT_NODE_IP" <<'EOF' || it_fail "/status.json content"
import json, sys
d = json.load(open(sys.argv[1]))
assert any(i["addr"] == sys.argv[2] and i["mtu"] == 1500 for i in d["interfaces"]), d["interfaces"]
assert any(c["state"] == "ESTABLISHED" and c["local"] == sys.argv[2] + ":80" for c in d["tcp"]), d["tcp"]
assert any(p["high"] > 0 for p in d["pools"]), d["pools"]
assert d["http"]["requests"] >= 58, d["http"]
assert d["truncated"] is False
print("status.json: %d interfaces, %d tcp, %d pools, %d drop counters, http %s" % (
    len(d["interfaces"]), len(d["tcp"]), len(d["pools"]), len(d["drops"]), d["http"]))
EOF
it_ns "${CURL[@]}" -o "$IT_DIR/status.html" "$BASE/status" || it_fail "curl /status"
grep -q '<h2>TCP connections</h2>' "$IT_DIR/status.html" || it_fail "/status is not the HTML page"

it_stop_node
line=$(grep '^http server:' "$IT_NODE_LOG") || it_fail "no 'http server:' line in the node's report"
it_log "node: $line"
field() { echo "$line" | awk -v k="$1" '{ for (i = 1; i < NF; i++) if ($i == k) print $(i + 1) }'; }
[ "$(field refused)" = 0 ] || it_fail "the server refused $(field refused) connections"
[ "$(field 5xx)" = 0 ] || it_fail "the server sent $(field 5xx) 5xx responses"
[ "$(field 4xx)" = 5 ] || it_fail "4xx responses: $(field 4xx), want 5 (404, 405 x 2, 400 x 2)"
[ "$(field active)" = 0 ] || it_fail "connections still active at exit"
it_pass
