#!/usr/bin/env bash
# sim.demo: runs wisp-demo with a fixed seed, the default impairment and a
# temporary capture, and checks that it exits 0 and that its report holds
# sane figures:
#  1. ping: three sizes, every request answered unless the wire lost one of
#     its frames (replies + hit == sent; with seed 1: replies == sent), the
#     8000-byte ping in 6 fragments, 0 < min <= avg <= max RTT;
#  2. UDP echo: the random-size and the 60 KB echoes all came back;
#  3. HTTP: three GETs answered "HTTP/1.1 200" with Content-Length == body
#     bytes, /big.bin 1048576 bytes and byte-exact (when the server is not
#     in the build: the client saw the refusal, and a note says so);
#  4. emergency queue: four loads, and at the highest the urgent mean
#     latency is below the common one;
#  5. TCP bulk: raw, netconn and socket each moved every byte, byte-exact,
#     goodput > 0;
#  6. small writes: four sizes, every API > 0, none below half of the
#     1460-byte goodput (no collapse);
#  7. pools back at baseline after both teardowns; "result: N/N checks held";
#  capture: `tshark -r FILE -q -z io,stat,0` exits 0, counts as many frames
#  as the demo reported, finds no malformed packet (when tshark exists).
# The demo runs with --quick (smaller TCP transfers: the test also runs
# under sanitizers); DEMO_CHECK_FULL=1 runs the full-size demo.
# Usage: demo_check.sh PATH/TO/wisp-demo [extra wisp-demo options]
# (exit 77 = skipped: no binary given)
set -u
demo=${1:-}
if [ -z "$demo" ]; then
  echo "demo_check: no wisp-demo path given, skipping"
  exit 77
fi
shift
if [ ! -x "$demo" ]; then
  echo "demo_check: $demo is not an executable"
  exit 1
fi

tmp=$(mktemp -d "${TMPDIR:-/tmp}/wisp_demo_check.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT
pcap=$tmp/demo.pcap
rep=$tmp/report
fail=0
bad() { echo "demo_check: FAIL: $*"; fail=1; }
# lines of section N (from "N. " to the next numbered section or the summary)
section() { awk -v n="$1" '$0 ~ "^"n"\\. " {s=1; next} /^[0-9]\. / || /^summary/ {s=0} s' "$rep"; }
gt() { awk -v a="$1" -v b="$2" 'BEGIN { exit !(a + 0 > b + 0) }'; }

quick=--quick
if [ "${DEMO_CHECK_FULL:-0}" = 1 ]; then
  quick=
fi
start=$(date +%s)
# shellcheck disable=SC2086
timeout 120 "$demo" --seed 1 --pcap "$pcap" $quick "$@" >"$rep" 2>"$tmp/stderr"
rc=$?
secs=$(($(date +%s) - start))
cat "$rep"
if [ -s "$tmp/stderr" ]; then
  echo "--- stderr:"; cat "$tmp/stderr"
fi
[ "$rc" -eq 0 ] || bad "wisp-demo exited $rc"
[ "$secs" -lt 60 ] || bad "the demo took $secs s (limit 60 s)"

# ------------------------------------------------------------- 1. ping
# "   size  frames  sent  replies  hit   min / avg / max"
ping_rows=$(section 1 | awk '$1 ~ /^[0-9]+$/ && $2 ~ /^[0-9]+$/ && NF >= 5')
n=$(printf '%s\n' "$ping_rows" | grep -c .)
[ "$n" -eq 3 ] || bad "expected 3 ping rows, found $n"
while read -r size frames sent replies hit min _ avg _ max; do
  [ -n "$size" ] || continue
  [ $((replies + hit)) -eq "$sent" ] || bad "ping $size B: $replies replies + $hit hit by the wire != $sent requests"
  [ "$hit" -ne 0 ] || [ "$replies" -eq "$sent" ] || bad "ping $size B: $replies replies to $sent requests"
  [ "$replies" -gt 0 ] || bad "ping $size B: no replies"
  [ "$size" != 8000 ] || [ "$frames" -eq 6 ] || bad "the 8000-byte ping went as $frames frames, not 6"
  awk -v a="$min" -v b="$avg" -v c="$max" 'BEGIN { exit !(a > 0 && a <= b && b <= c) }' ||
    bad "ping $size B: rtt min/avg/max not sane: $min / $avg / $max"
done <<<"$ping_rows"
grep -Eq '^   ping +([0-9]+)/\1 echo replies' "$rep" || echo "demo_check: note: not every ping answered (wire loss)"

# --------------------------------------------------------- 2. UDP echo
section 2 | grep -Eq 'random sizes .* ([0-9]+)/\1 echoed byte-exact' || bad "random-size echo incomplete"
section 2 | grep -Eq -- '-> ([0-9]+)/\1 echoed byte-exact' || bad "60 KB echo incomplete"

# ------------------------------------------------------------- 3. HTTP
if section 3 | grep -q 'HTTP server not in this build'; then
  echo "demo_check: note: no HTTP server in this build; checking the client's refusal only"
  section 3 | grep -q 'connection refused (RST)' || bad "HTTP client: no refusal seen"
else
  # "   /path  HTTP/1.1 200 OK  fields  type  length  body  ms  Mbit/s"
  http_rows=$(section 3 | awk '$1 ~ /^\// && $2 ~ /^HTTP\//')
  n=$(printf '%s\n' "$http_rows" | grep -c .)
  [ "$n" -eq 3 ] || bad "expected 3 HTTP rows, found $n"
  while read -r path ver code _ fields _ len body ms _; do
    [ -n "$path" ] || continue
    [ "$ver" = HTTP/1.1 ] && [ "$code" = 200 ] || bad "GET $path: status $ver $code"
    [ "$len" = "$body" ] || bad "GET $path: Content-Length $len but $body body bytes"
    [ "$fields" -gt 0 ] 2>/dev/null || bad "GET $path: no header fields"
    gt "$ms" 0 || bad "GET $path: time $ms"
    [ "$path" != /big.bin ] || [ "$body" = 1048576 ] || bad "/big.bin: $body bytes, not 1048576"
  done <<<"$http_rows"
  section 3 | grep -q "server's generator: byte-exact" || bad "/big.bin not checked byte-exact"
fi

# -------------------------------------------------- 4. emergency queue
# "   120 %   110 /  479      56 /   114    5072 /  7761    34    1 /  64"
prio_rows=$(section 4 | awk '$2 == "%" && $4 == "/" && $7 == "/"')
n=$(printf '%s\n' "$prio_rows" | grep -c .)
[ "$n" -eq 4 ] || bad "expected 4 emergency-queue rows (one per load), found $n"
printf '%s\n' "$prio_rows" | awk '$3 <= 0 || $5 <= 0 {exit 1}' || bad "an emergency-queue load sent nothing"
top=$(printf '%s\n' "$prio_rows" | tail -n 1)
u_mean=$(awk '{print $6}' <<<"$top")
c_mean=$(awk '{print $9}' <<<"$top")
if [ -z "$u_mean" ] || [ -z "$c_mean" ]; then
  bad "no row at the highest load"
elif gt "$c_mean" "$u_mean"; then
  echo "demo_check: at $(awk '{print $1}' <<<"$top") %: urgent mean $u_mean us < common mean $c_mean us"
else
  bad "urgent mean $u_mean us is not below common mean $c_mean us at the highest load"
fi

# --------------------------------------------------------- 5. TCP bulk
# the transfer size is in the title: "(..., A -> B, 1024 KiB each)"
kib=$(sed -n 's/^5\. TCP bulk goodput .*, \([0-9][0-9]*\) KiB each)$/\1/p' "$rep")
bulk_bytes=$((${kib:-0} * 1024))
[ "$bulk_bytes" -gt 0 ] || bad "no transfer size in the TCP bulk title"
for api in raw netconn socket; do
  row=$(section 5 | awk -v a="$api" '$1 == a')
  if [ -z "$row" ]; then
    bad "no TCP bulk row for $api"
    continue
  fi
  read -r _ bytes _ mbit _ _ _ exact <<<"$row"
  [ "$bytes" = "$bulk_bytes" ] || bad "TCP $api: $bytes bytes received, expected $bulk_bytes"
  gt "$mbit" 0 || bad "TCP $api: goodput $mbit"
  [ "$exact" = yes ] || bad "TCP $api: not byte-exact/complete ($exact)"
done

# ----------------------------------------------------- 6. small writes
small_rows=$(section 6 | awk '$2 == "B" && $1 ~ /^[0-9]+$/')
n=$(printf '%s\n' "$small_rows" | grep -c .)
[ "$n" -eq 4 ] || bad "expected 4 small-write rows, found $n"
while read -r size _ raw nc so rel _; do
  [ -n "$size" ] || continue
  for g in "$raw" "$nc" "$so"; do
    gt "$g" 0 || bad "small writes of $size B: a goodput of $g"
  done
  gt "$rel" 49 || bad "small writes of $size B collapse: $rel % of the 1460-byte goodput"
done <<<"$small_rows"

# ---------------------------------------------------- 7. pools + result
n=$(grep -c 'pools back at baseline: yes' "$rep")
[ "$n" -eq 3 ] || bad "pools not back at baseline after every teardown ($n of 3 lines say yes)"
grep -q '^   pools  *all back at baseline' "$rep" || bad "summary: pools not all back at baseline"
grep -Eq '^result: ([0-9]+)/\1 checks held$' "$rep" || bad "not every check of the demo held"
grep -q 'check failed' "$rep" && bad "the report lists a failed check"

# ------------------------------------------------------------ capture
frames=$(sed -n 's/^   capture  *[^ ]*: \([0-9][0-9]*\) frames.*/\1/p' "$rep")
[ -s "$pcap" ] || bad "no capture written at $pcap"
if command -v tshark >/dev/null 2>&1 && [ -s "$pcap" ]; then
  if ! tshark -r "$pcap" -q -z io,stat,0 >"$tmp/io" 2>"$tmp/tshark.err"; then
    bad "tshark -r -q -z io,stat,0 failed: $(grep -v 'Running as user' "$tmp/tshark.err")"
  fi
  # tshark warns when run as root; anything else on stderr is an error
  if grep -v 'Running as user' "$tmp/tshark.err" | grep -q .; then
    bad "tshark complained: $(grep -v 'Running as user' "$tmp/tshark.err")"
  fi
  got=$(awk -F'|' '/<>/ {gsub(/ /, "", $3); print $3}' "$tmp/io")
  [ -n "$got" ] && [ "$got" = "$frames" ] || bad "tshark counted ${got:-no} frames, the demo reported ${frames:-none}"
  malformed=$(tshark -r "$pcap" -Y _ws.malformed 2>/dev/null | head -5)
  [ -z "$malformed" ] || bad "tshark finds malformed packets: $malformed"
  nhttp=$(tshark -r "$pcap" -Y 'http.request' 2>/dev/null | grep -c .)
  nsyn=$(tshark -r "$pcap" -Y 'ip.src == 198.18.1.1 && tcp.flags.syn == 1' 2>/dev/null | grep -c .)
  [ "$nsyn" -ge 15 ] || bad "the capture holds $nsyn SYNs of the real-time part, expected >= 15"
  echo "demo_check: tshark read $got frames ($nhttp HTTP requests, $nsyn SYNs of the real-time part), none malformed"
else
  echo "demo_check: tshark not found, capture not dissected"
fi

[ "$fail" -eq 0 ] && echo "demo_check: all checks passed (demo: $secs s)"
exit "$fail"
