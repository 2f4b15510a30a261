#!/usr/bin/env bash
# test_syn_flood.sh -- goodput of an established bulk transfer during a SYN
# flood (issue 11 item 4; RFC 4987). A benchmark (ctest label bench: gcc
# pass only, not under sanitizers).
#
#  - wisp-node runs its services with gateway 198.18.0.1 (Linux);
#  - Linux sends bulk data to the node's TCP discard service (tcppeer.py,
#    64 KB writes), sized from a calibration run to last about 2 s;
#  - rawpeer.py floods the node's discard port with spoofed SYNs from
#    random 198.19.0.0/16 sources (off-link: the node answers through its
#    gateway with one ARP entry; Linux does not forward, so the SYN-ACKs
#    die there) at WISP_IT_SYNFLOOD_RATE per second (default 10000),
#    bounded in count and time and stopped when the transfer is done;
#  - the node's CPU time per flood SYN, from /proc over a 5 s flood with
#    no transfer (less the same span idle), is reported;
#  - five rounds of (clean, flooded) transfers; the goodput ratio is the
#    median flooded over the median clean one. It goes to the log and to
#    interop-syn-flood.txt next to wisp-node. The gate is the issue's goal
#    (a ratio >= WISP_IT_SYNFLOOD_MIN_RATIO, default 0.8); because the
#    machine is shared and the flooder and Linux's side take CPU from the
#    same cores, five more rounds are run when the first five fall short
#    and the medians are taken over all ten;
#  - the node answered at least half the flood SYNs with cookies
#    (tcp.cookie.sent; the tap may drop some under load), every discard
#    connection closed cleanly with all its bytes, and the node stops with
#    its pools at baseline.
#
# Usage: test_syn_flood.sh PATH-TO-wisp-node   (root; exit 77 = skipped)

source "$(dirname "$0")/lib.sh"
it_init "$@"
it_python
RAWPEER="$(dirname "$0")/rawpeer.py"
RATE=${WISP_IT_SYNFLOOD_RATE:-10000}
MIN_RATIO=${WISP_IT_SYNFLOOD_MIN_RATIO:-0.8}
ROUNDS=5          # five more when the ratio falls short (a busy machine)
FLOOD_MAX_S=20
OUT="$(dirname "$IT_NODE")/interop-syn-flood.txt"

it_start_node --gw "$IT_LINUX_IP"
it_ns ping -c 1 -W 2 "$IT_NODE_IP" >/dev/null || it_fail "no ping reply from the node"
flood_sent=0

# discard BYTES: one transfer; prints its MB/s
discard_mbps() {
    it_peer 120 discard "$IT_NODE_IP" 9 "$1" 65536 >/dev/null || it_fail "discard transfer of $1 bytes failed"
    echo "$IT_PEER_OUT" | sed -nE 's/^RESULT ok .*mbps=([0-9.]+).*/\1/p'
}

# The node's CPU time per flood SYN (no transfer): utime + stime of the
# wisp-node process (timeout(1)'s child: `ip netns exec` execs it) over a
# 5 s flood, less the same span idle. Reported, not gated.
npid=$(pgrep -P "$IT_NODE_PID" | head -n 1)
node_ticks() { awk '{ print $14 + $15 }' "/proc/$npid/stat" 2>/dev/null || echo 0; }
cpu_note="node CPU per flood SYN: not measured"
if [ -n "$npid" ] && grep -q "^wisp-node" "/proc/$npid/comm" 2>/dev/null; then
    hz=$(getconf CLK_TCK)
    t0=$(node_ticks)
    sleep 5
    t1=$(node_ticks)
    flog="$IT_DIR/flood.cpu.log"
    it_bg_start "$flog" 20 env RAWPEER_FLOOD_ONLINK=${WISP_IT_SYNFLOOD_ONLINK:-} "$IT_PY" "$RAWPEER" flood "$IT_NODE_IP" 9 "$RATE" 5
    fpid=$IT_BG_PID
    it_wait_line "$flog" '^FLOOD start' 10 || it_fail "the flooder did not start: $(tail -n 3 "$flog")"
    t2=$(node_ticks)
    it_bg_wait "$fpid" 15 || it_fail "flooder (cpu): $(tail -n 3 "$flog")"
    t3=$(node_ticks)
    sent=$(awk '/^FLOOD sent/ { print $3 }' "$flog")
    cpu_note=$(awk -v i=$((t1 - t0)) -v f=$((t3 - t2)) -v n="${sent:-0}" -v hz="$hz" 'BEGIN {
        us = (f - i) * 1e6 / hz / (n > 0 ? n : 1);
        printf "node CPU: idle %.1f %%, during %d flood SYNs in 5 s %.1f %% -> %.2f us per flood SYN",
            i * 100 / hz / 5, n, f * 100 / hz / 5, us }')
    flood_sent=$((flood_sent + ${sent:-0}))
    it_node_alive "after the CPU measurement"
fi
it_log "$cpu_note"

total=0
conns=0
cal=$((32 * 1024 * 1024))
m=$(discard_mbps "$cal")
[ -n "$m" ] || it_fail "calibration: no result"
total=$((total + cal))
conns=$((conns + 1))
# about 1.5 s per clean transfer, 16..512 MiB
bytes=$(awk -v m="$m" 'BEGIN { b = m * 1e6 * 1.5; if (b < 16777216) b = 16777216; if (b > 536870912) b = 536870912;
    printf "%d", int(b / 65536) * 65536 }')
it_log "calibration: $m MB/s; $bytes bytes per transfer"

clean=""
flooded=""
rounds() {
for r in $(seq "$1" "$2"); do
    c=$(discard_mbps "$bytes")
    [ -n "$c" ] || it_fail "round $r clean: no result"
    total=$((total + bytes))
    conns=$((conns + 1))
    flog="$IT_DIR/flood.$r.log"
    it_bg_start "$flog" $((FLOOD_MAX_S + 10)) env RAWPEER_FLOOD_ONLINK=${WISP_IT_SYNFLOOD_ONLINK:-} "$IT_PY" "$RAWPEER" flood "$IT_NODE_IP" 9 "$RATE" "$FLOOD_MAX_S"
    fpid=$IT_BG_PID
    it_wait_line "$flog" '^FLOOD start' 10 || it_fail "round $r: the flooder did not start: $(tail -n 3 "$flog")"
    sleep 0.5
    f=$(discard_mbps "$bytes")
    kill -TERM "$fpid" 2>/dev/null
    it_bg_wait "$fpid" 10
    frc=$?
    [ "$frc" -eq 0 ] || it_fail "round $r: flooder exit status $frc: $(tail -n 3 "$flog")"
    line=$(grep '^FLOOD sent' "$flog")
    [ -n "$line" ] || it_fail "round $r: no flood summary: $(tail -n 3 "$flog")"
    [ -n "$f" ] || it_fail "round $r flooded: no result"
    total=$((total + bytes))
    conns=$((conns + 1))
    sent=$(echo "$line" | awk '{ print $3 }')
    frate=$(echo "$line" | awk '{ print $9 }')
    secs=$(echo "$line" | awk '{ print $7 }')
    flood_sent=$((flood_sent + sent))
    # the flood must have covered the transfer: still running when it ended
    awk -v s="$secs" -v m="$FLOOD_MAX_S" 'BEGIN { exit !(s < m) }' ||
        it_fail "round $r: the flood ended (${secs} s) before the transfer"
    awk -v fr="$frate" -v r="$RATE" 'BEGIN { exit !(fr >= 0.5 * r) }' ||
        it_fail "round $r: the flooder reached only $frate SYN/s of $RATE"
    it_log "round $r: clean $c MB/s, during $frate SYN/s ($sent SYNs in $secs s): $f MB/s"
    clean="$clean $c"
    flooded="$flooded $f"
    it_node_alive "after round $r"
done
}

median() { tr ' ' '\n' | grep -v '^$' | sort -g | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }'; }
rounds 1 "$ROUNDS"
mc=$(echo "$clean" | median)
mf=$(echo "$flooded" | median)
ratio=$(awk -v a="$mf" -v b="$mc" 'BEGIN { printf "%.3f", a / b }')
if ! awk -v r="$ratio" -v m="$MIN_RATIO" 'BEGIN { exit !(r >= m) }'; then
    it_log "ratio $ratio below $MIN_RATIO after $ROUNDS rounds: $ROUNDS more, medians over all"
    rounds $((ROUNDS + 1)) $((2 * ROUNDS))
    mc=$(echo "$clean" | median)
    mf=$(echo "$flooded" | median)
    ratio=$(awk -v a="$mf" -v b="$mc" 'BEGIN { printf "%.3f", a / b }')
fi
summary="SYN flood at $RATE SYN/s (spoofed, SYN cookies) vs an established bulk transfer (Linux -> wisp discard, $bytes bytes):
clean MB/s:$clean (median $mc)
flooded MB/s:$flooded (median $mf)
goodput ratio (median flooded / median clean): $ratio
$cpu_note"
while IFS= read -r line; do it_log "$line"; done <<<"$summary"
{
    echo "$summary"
    echo "($(date -u '+%Y-%m-%d %H:%M:%S UTC'))"
} >"$OUT" || it_log "warning: cannot write $OUT"

it_stop_node
cookies=$(it_counter tcp.cookie.sent)
synq_full=$(it_counter tcp.synq.full)
it_log "node: tcp.cookie.sent $cookies tcp.synq.full $synq_full (flood SYNs sent $flood_sent)"
[ "$cookies" -ge $((flood_sent / 2)) ] || it_fail "only $cookies cookies for $flood_sent flood SYNs"
[ "$(it_tcp_svc tcp/9 connections)" = "$conns" ] || it_fail "discard accepted $(it_tcp_svc tcp/9 connections), want $conns"
[ "$(it_tcp_svc tcp/9 closed)" = "$conns" ] || it_fail "discard closed $(it_tcp_svc tcp/9 closed) cleanly, want $conns"
[ "$(it_tcp_svc tcp/9 rx)" = "$total" ] || it_fail "discard received $(it_tcp_svc tcp/9 rx) bytes, want $total"
awk -v r="$ratio" -v m="$MIN_RATIO" 'BEGIN { exit !(r >= m) }' ||
    it_fail "goodput ratio $ratio below $MIN_RATIO"
it_pass
