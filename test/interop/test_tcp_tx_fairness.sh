#!/usr/bin/env bash
# test_tcp_tx_fairness.sh -- the transmit budget under a remote zero-window
# attack (issue 11 item 1), Linux clients against wisp-node's services.
#
#  - unattacked: a 1 MB echo (tcppeer.py echo: random data, read
#    concurrently, SHA-256 and length checked), seven times;
#  - three attacker connections from Linux (zwpeer.py: the smallest
#    SO_RCVBUF; two read 2000 bytes of chargen and never again, one writes
#    to echo and never reads) keep their windows at zero: each holds what
#    the node's service copied into its send buffer (before the fix they
#    pinned 480 of the 512 transmit blocks and the echo moved 0 bytes);
#  - attacked: the same 1 MB echo seven times (with --ratio seven more
#    when the ratio falls short on a busy machine), byte-exact, while the
#    attackers hold (they answer the node's zero-window probes: they are
#    kept, no give-up within WISP_TCP_PERSIST_TIMEOUT_MS);
#  - the node's report: the fair share refused the attackers' services
#    (tcp.write.txshare > 0), the attackers' connections ended by their
#    resets when zwpeer.py exits, clean stop with the pools at baseline.
#  - goodput: the best attacked echo against the best unattacked one is
#    logged; with --ratio (ctest bench.tcp_tx_fairness, label bench: timing)
#    it must be at least 0.5.
#
# Usage: test_tcp_tx_fairness.sh PATH-TO-wisp-node [--ratio]  (root; 77 = skipped)

source "$(dirname "$0")/lib.sh"
RATIO=0
if [ "${2:-}" = "--ratio" ]; then
    RATIO=1
    set -- "$1"
fi
it_init "$@"
it_python
ZWPEER="$(dirname "$0")/zwpeer.py"
[ -r "$ZWPEER" ] || it_fail "missing $ZWPEER"

MB=$((1024 * 1024))
HOLD_S=45

# The services' own defences (idle timeout 30 s, reclaim) would end the
# attackers before their 45 s hold: off, the TCP transmit budget is under
# test here (test_conn_exhaust.sh tests those defences).
it_start_node --svc-idle-ms 600000 --svc-reclaim-ms 2147483647

# echo_secs WHAT: one 1 MB echo; prints its seconds (tcppeer.py's RESULT
# line; the peer's log goes to stderr)
echo_secs() {
    it_peer 120 echo "$IT_NODE_IP" 7 "$MB" >&2 || it_fail "1 MB echo failed ($1)"
    echo "$IT_PEER_OUT" | grep -q '^RESULT ok' || it_fail "echo ($1): no success line"
    echo "$IT_PEER_OUT" | sed -nE 's/^RESULT ok .*secs=([0-9.]+).*$/\1/p'
}
best() { printf '%s\n' "$@" | sort -g | head -n 1; }

# a 1 MB echo takes ~10 ms over TAP: the best of seven runs
runs=""
for _ in 1 2 3 4 5 6 7; do runs="$runs $(echo_secs clean)" || exit 1; done
# shellcheck disable=SC2086
clean=$(best $runs)
it_log "unattacked 1 MB echo:$runs s (best $clean s)"
it_node_alive "after the unattacked echoes"

ATK_LOG="$IT_DIR/zwpeer.log"
it_bg_start "$ATK_LOG" $((HOLD_S + 60)) "$IT_PY" "$ZWPEER" "$IT_NODE_IP" "$HOLD_S" chargen echo chargen
ATK_PID=$IT_BG_PID
it_wait_line "$ATK_LOG" '^READY 3$' 40 || it_fail "attackers not in place: $(tr '\n' ' ' <"$ATK_LOG")"
it_log "attackers: $(tr '\n' ' ' <"$ATK_LOG")"
sleep 1

runs=""
for _ in 1 2 3 4 5 6 7; do runs="$runs $(echo_secs attacked)" || exit 1; done
# shellcheck disable=SC2086
att=$(best $runs)
ratio=$(awk -v c="$clean" -v a="$att" 'BEGIN { printf "%.2f", c / a }')
if [ "$RATIO" = 1 ] && ! awk -v r="$ratio" 'BEGIN { exit !(r >= 0.5) }'; then
    # a busy machine: seven more attacked runs (the best of all counts)
    it_log "attacked 1 MB echo:$runs s (ratio $ratio): measured again"
    for _ in 1 2 3 4 5 6 7; do runs="$runs $(echo_secs attacked)" || exit 1; done
    # shellcheck disable=SC2086
    att=$(best $runs)
    ratio=$(awk -v c="$clean" -v a="$att" 'BEGIN { printf "%.2f", c / a }')
fi
it_log "attacked 1 MB echo:$runs s (best $att s)"
it_node_alive "after the attacked echoes"
grep -q '^HOLDING done' "$ATK_LOG" && it_fail "the attackers' hold ended before the attacked echoes did"
it_log "goodput attacked / unattacked: $ratio (bench gate: >= 0.5)"
if [ "$RATIO" = 1 ]; then
    awk -v r="$ratio" 'BEGIN { exit !(r >= 0.5) }' || it_fail "goodput ratio $ratio < 0.5"
fi

it_bg_wait "$ATK_PID" $((HOLD_S + 30)) || it_fail "zwpeer.py failed: $(tr '\n' ' ' <"$ATK_LOG")"
grep -q '^HOLDING done' "$ATK_LOG" || it_fail "zwpeer.py did not hold: $(tr '\n' ' ' <"$ATK_LOG")"
# the attackers' connections end with their resets
it_wait_line "$IT_NODE_LOG" "^wisp-node: tcp/19 chargen .* ended: .*ERR_RST" 10 ||
    it_fail "no reset chargen connection reported: $(grep 'tcp/19' "$IT_NODE_LOG" | tail -n 3)"
sleep 1

it_stop_node
share=$(it_counter tcp.write.txshare)
gave_up=$(it_counter tcp.abort.persist)
it_log "node: tcp.write.txshare $share, tcp.abort.persist $gave_up," \
    "chargen resets $(it_tcp_svc tcp/19 resets), echo resets $(it_tcp_svc tcp/7 resets)"
[ "$share" -gt 0 ] || it_fail "the fair share never refused a write (tcp.write.txshare 0): no attack?"
[ "$gave_up" = 0 ] || it_fail "$gave_up zero-window peer(s) given up although they answered the probes"
[ "$(it_tcp_svc tcp/19 resets)" = 2 ] || it_fail "chargen saw $(it_tcp_svc tcp/19 resets) resets, want 2"
[ "$(it_tcp_svc tcp/7 resets)" = 1 ] || it_fail "echo saw $(it_tcp_svc tcp/7 resets) resets, want 1"
it_pass
