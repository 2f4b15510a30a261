#!/usr/bin/env bash
# sim.demo: runs wisp-demo with a fixed seed and a temporary capture, and
# checks that it exits 0 and that its report holds sane figures:
#  - every ping size got replies, with 0 < min <= avg <= max RTT;
#  - the random-size UDP echo and the 60 KB echoes all came back;
#  - part 3 has urgent and bulk rows, and at the highest offered load the
#    urgent (EF) mean latency is below the bulk mean latency;
#  - "pools back at baseline: yes" and "result: N/N checks held";
#  - when tshark exists: it reads the capture without errors, finds as many
#    frames as the demo reported and no malformed packet.
# Usage: demo_check.sh PATH/TO/wisp-demo   (exit 77 = skipped: no binary given)
set -u
demo=${1:-}
if [ -z "$demo" ]; then
  echo "demo_check: no wisp-demo path given, skipping"
  exit 77
fi
if [ ! -x "$demo" ]; then
  echo "demo_check: $demo is not an executable"
  exit 1
fi

tmp=$(mktemp -d "${TMPDIR:-/tmp}/wisp_demo_check.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT
pcap=$tmp/demo.pcap
fail=0
bad() { echo "demo_check: FAIL: $*"; fail=1; }

"$demo" --seed 1 --pcap "$pcap" >"$tmp/report" 2>"$tmp/stderr"
rc=$?
cat "$tmp/report"
if [ -s "$tmp/stderr" ]; then
  echo "--- stderr:"; cat "$tmp/stderr"
fi
[ "$rc" -eq 0 ] || bad "wisp-demo exited $rc"

# ---------------------------------------------------- part 1: ping rows
# "   size  frames  sent  replies  loss%   min / avg / max"
ping_rows=$(awk '/^1\. /{s=1; next} /^2\. /{s=0} s && $1 ~ /^[0-9]+$/ && $5 ~ /%$/ {print}' "$tmp/report")
n=$(printf '%s\n' "$ping_rows" | grep -c .)
[ "$n" -eq 3 ] || bad "expected 3 ping rows, found $n"
while read -r size _ _ replies _ min _ avg _ max; do
  [ -n "$size" ] || continue
  [ "$replies" -gt 0 ] 2>/dev/null || bad "ping size $size: no replies ($replies)"
  awk -v a="$min" -v b="$avg" -v c="$max" 'BEGIN { exit !(a > 0 && a <= b && b <= c) }' ||
    bad "ping size $size: rtt min/avg/max not sane: $min / $avg / $max"
done <<<"$ping_rows"
grep -q '8000  *6  ' "$tmp/report" || bad "the 8000-byte ping did not go as 6 fragments"

# ----------------------------------------------------- part 2: UDP echo
grep -Eq 'random sizes .* ([0-9]+)/\1 echoed byte-exact' "$tmp/report" || bad "random-size echo incomplete"
grep -Eq -- '-> ([0-9]+)/\1 echoed byte-exact' "$tmp/report" || bad "60 KB echo incomplete"

# ----------------------------------------------- part 3: emergency queue
# "   120 %  urgent   sent  refused  mean  p99  max  queue"
prio_rows=$(awk '/^3\. /{s=1; next} /^4\. /{s=0} s && $2 == "%" && ($3 == "urgent" || $3 == "bulk") {print}' \
  "$tmp/report")
n=$(printf '%s\n' "$prio_rows" | grep -c .)
[ "$n" -ge 4 ] || bad "expected urgent and bulk rows for several loads, found $n rows"
top=$(printf '%s\n' "$prio_rows" | awk '$1 > m {m = $1} END {print m}')
u_mean=$(printf '%s\n' "$prio_rows" | awk -v t="$top" '$1 == t && $3 == "urgent" {print $6}')
b_mean=$(printf '%s\n' "$prio_rows" | awk -v t="$top" '$1 == t && $3 == "bulk" {print $6}')
if [ -z "$u_mean" ] || [ -z "$b_mean" ]; then
  bad "no urgent/bulk row at the highest load ($top %)"
else
  awk -v u="$u_mean" -v b="$b_mean" 'BEGIN { exit !(u < b) }' ||
    bad "at $top %: urgent mean $u_mean us is not below bulk mean $b_mean us"
  echo "demo_check: at $top %: urgent mean $u_mean us < bulk mean $b_mean us"
fi
# every class sent something at every load
printf '%s\n' "$prio_rows" | awk '$4 <= 0 {exit 1}' || bad "a part 3 row with no datagrams"

# ------------------------------------------------------ part 4 + result
grep -q 'pools back at baseline: yes' "$tmp/report" || bad "pools not back at baseline"
grep -Eq '^result: ([0-9]+)/\1 checks held$' "$tmp/report" || bad "not every check of the demo held"
grep -q 'check failed' "$tmp/report" && bad "the report lists a failed check"

# ---------------------------------------------------------- the capture
[ -s "$pcap" ] || bad "no capture written at $pcap"
frames=$(sed -n 's/^capture: .*, \([0-9][0-9]*\) frames as they entered the wire.*/\1/p' "$tmp/report")
if command -v tshark >/dev/null 2>&1 && [ -s "$pcap" ]; then
  if ! tshark -r "$pcap" >"$tmp/tshark.out" 2>"$tmp/tshark.err"; then
    bad "tshark -r failed: $(cat "$tmp/tshark.err")"
  fi
  # tshark warns when run as root; anything else on stderr is an error
  if grep -v 'Running as user' "$tmp/tshark.err" | grep -q .; then
    bad "tshark complained: $(grep -v 'Running as user' "$tmp/tshark.err")"
  fi
  got=$(grep -c . "$tmp/tshark.out")
  [ "$got" = "$frames" ] || bad "tshark read $got frames, the demo reported ${frames:-none}"
  malformed=$(tshark -r "$pcap" -Y _ws.malformed 2>/dev/null)
  [ -z "$malformed" ] || bad "tshark finds malformed packets: $malformed"
  echo "demo_check: tshark read $got frames, none malformed"
else
  echo "demo_check: tshark not found, capture not dissected"
fi

[ "$fail" -eq 0 ] && echo "demo_check: all checks passed"
exit "$fail"
