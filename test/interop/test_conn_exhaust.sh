#!/usr/bin/env bash
# test_conn_exhaust.sh -- connection exhaustion from the outside (issue 11
# items 2 and 3): attackers in python (test/interop/attacker.py) from two
# extra addresses of the namespace (198.18.0.3, 198.18.0.4), legitimate
# clients from 198.18.0.1 (socat for echo, curl for HTTP). Each phase
# starts wisp-node, lets the attackers take every record, then runs 10
# legitimate requests one after the other:
#
#  - TCP echo (port 7) against idle connections on every record, for
#    --api raw, netconn and socket: 10/10 must be echoed (idle attackers
#    are reclaimed), and again against attackers that trickle a byte per
#    second to discard on every record (the fair-share rule of
#    apps/lib/reclaim.h takes theirs); the idle timeout (--svc-idle-ms 1500) closes idle
#    discard connections and resets chargen connections that read
#    nothing, on every API; then raw with the defences switched off
#    (reclaim and idle timeout at 2^31 - 1 ms): the attack must deny the
#    service (at most 1 of 10);
#  - HTTP against slowloris (one byte of a request head per second):
#    with the default options 10/10 GETs get 200 and, after the request
#    deadline (10 s), the server has answered 408 to the attackers; with
#    the defences off at most 1 of 10 succeeds.
# Every phase stops the node cleanly (pools back at baseline) and checks
# its counters (reclaimed, head_timeouts).
#
# Usage: test_conn_exhaust.sh PATH-TO-wisp-node   (root; exit 77 = skipped)

source "$(dirname "$0")/lib.sh"
it_init "$@"
it_python
command -v curl >/dev/null 2>&1 || it_fail "curl not installed"
command -v socat >/dev/null 2>&1 || it_fail "socat not installed"
ATTACKER="$(dirname "$0")/attacker.py"
[ -r "$ATTACKER" ] || it_fail "missing $ATTACKER"
ATTACKER=$(readlink -f "$ATTACKER")
SRC_A=198.18.0.3
SRC_B=198.18.0.4
it_ns ip addr add "$SRC_A/$IT_PREFIX" dev "$IT_TAP" || it_fail "address $SRC_A"
it_ns ip addr add "$SRC_B/$IT_PREFIX" dev "$IT_TAP" || it_fail "address $SRC_B"
NEVER=2147483647

# attack LOG MODE PORT PER_SOURCE SECONDS: start the attacker (both
# sources) in the background; wait until it holds WANT connections for a
# second (or fail).
attack() {
    local log=$1 mode=$2 port=$3 per=$4 secs=$5 want=$6 i
    it_bg_start "$log" $((secs + 20)) "$IT_PY" "$ATTACKER" "$mode" "$IT_NODE_IP" "$port" "$SRC_A,$SRC_B" "$per" "$secs"
    ATTACK_PID=$IT_BG_PID
    for i in $(seq 1 30); do
        if awk -v w="$want" '$1 == "attacker:" && $2 == "alive" && $3 >= w { f = 1 } END { exit !f }' "$log"; then
            it_log "attacker ($mode, port $port): $(grep 'alive' "$log" | tail -n 1)"
            return 0
        fi
        sleep 0.5
    done
    cat "$log" >&2
    it_fail "the attacker did not get $want connections held"
}

attack_end() {
    it_bg_wait "$ATTACK_PID" 60 || it_fail "attacker failed or did not end"
    it_log "$(tail -n 1 "$1")"
}

# echo_clients N: N echo requests with socat from 198.18.0.1; OK gets the
# number echoed correctly.
echo_clients() {
    local i out
    OK=0
    for i in $(seq 1 "$1"); do
        out=$(echo "legit-$i" | it_ns_t 10 socat -t 4 -T 4 - "TCP:$IT_NODE_IP:7,bind=$IT_LINUX_IP" 2>/dev/null)
        [ "$out" = "legit-$i" ] && OK=$((OK + 1))
    done
}

# http_clients N: N GETs with curl from 198.18.0.1; OK gets the 200s.
http_clients() {
    local i code
    OK=0
    for i in $(seq 1 "$1"); do
        code=$(it_ns_t 10 curl --noproxy '*' -s --interface "$IT_LINUX_IP" --max-time 4 -o "$IT_DIR/page" \
            -w '%{http_code}' "http://$IT_NODE_IP/index.html" 2>/dev/null)
        [ "$code" = 200 ] && grep -q '<title>wisp</title>' "$IT_DIR/page" && OK=$((OK + 1))
    done
}

svc_field() { it_tcp_svc "tcp/7" "$1"; }

# ---------------------------------------------------------------- echo
for api in raw netconn socket; do
    # records: raw 8 (4 per source), netconn/socket 16 (8 per source):
    # the attacker takes every record (a connection beyond the cap would
    # only reclaim one of its own source).
    if [ "$api" = raw ]; then per=4; else per=8; fi
    it_start_node --api "$api"
    attack "$IT_DIR/att-echo-$api.log" idle 7 "$per" 12 $((per * 2))
    sleep 1.2   # past the reclaim age (1 s)
    echo_clients 10
    it_log "echo ($api API) under attack: $OK/10 legitimate requests echoed"
    [ "$OK" = 10 ] || it_fail "echo ($api API): only $OK of 10 legitimate requests served"
    attack_end "$IT_DIR/att-echo-$api.log"
    # busy attackers: a byte per second to discard (never idle for long;
    # the records are shared by all the TCP services)
    attack "$IT_DIR/att-trickle-$api.log" slowloris 9 "$per" 10 $((per * 2))
    sleep 1.2
    echo_clients 10
    it_log "echo ($api API) with discard trickled on every record: $OK/10 legitimate requests echoed"
    [ "$OK" = 10 ] || it_fail "echo ($api API) against trickling attackers: only $OK of 10 served"
    attack_end "$IT_DIR/att-trickle-$api.log"
    it_stop_node
    it_log "node: $(grep -E '^ +tcp/7 ' "$IT_NODE_LOG")"
    [ "$(svc_field reclaimed)" -ge 1 ] || it_fail "echo ($api): no connection reclaimed"
done

# Idle timeouts (--svc-idle-ms 1500): an idle discard connection is closed
# (FIN), a chargen connection that reads nothing is reset, on every API.
for api in raw netconn socket; do
    it_start_node --api "$api" --svc-idle-ms 1500
    it_bg_start "$IT_DIR/idle-9-$api.log" 30 "$IT_PY" "$ATTACKER" idle "$IT_NODE_IP" 9 "$SRC_A,$SRC_B" 1 5 4
    p9=$IT_BG_PID
    it_bg_start "$IT_DIR/idle-19-$api.log" 30 "$IT_PY" "$ATTACKER" idle "$IT_NODE_IP" 19 "$SRC_A,$SRC_B" 1 5 4
    p19=$IT_BG_PID
    it_bg_wait "$p9" 25 || it_fail "idle attacker (discard) failed"
    it_bg_wait "$p19" 25 || it_fail "idle attacker (chargen) failed"
    it_log "idle timeout ($api API): discard $(tail -n 1 "$IT_DIR/idle-9-$api.log"); chargen $(tail -n 1 "$IT_DIR/idle-19-$api.log")"
    it_stop_node
    for port in 9 19; do
        d=$(awk '$1 == "attacker:" && $2 == "connects" { print $5 }' "$IT_DIR/idle-$port-$api.log")
        [ "${d:-0}" -ge 2 ] || it_fail "idle timeout ($api API, port $port): the attacker saw ${d:-0} connections end, want >= 2"
        to=$(it_tcp_svc "tcp/$port" timeouts)
        [ "$to" -ge 2 ] || it_fail "idle timeout ($api API, port $port): $to timeouts counted, want >= 2"
    done
    it_log "node: $(grep -E '^ +tcp/(9|19) ' "$IT_NODE_LOG" | tr -s ' ' | tr '\n' ';')"
done

# The same attack with the defences off: it must work (the test can fail).
it_start_node --api raw --svc-per-source 8 --svc-reclaim-ms "$NEVER" --svc-idle-ms "$NEVER"
attack "$IT_DIR/att-echo-off.log" idle 7 4 8 8
sleep 1.2
echo_clients 10
it_log "echo (raw API, defences off) under attack: $OK/10 legitimate requests echoed"
[ "$OK" -le 1 ] || it_fail "the idle attack did not deny the unprotected service ($OK/10 served): the test proves nothing"
attack_end "$IT_DIR/att-echo-off.log"
it_stop_node

# ---------------------------------------------------------------- HTTP
# Default options: 128 records, 64 per source; the attacker holds 128.
it_start_node --http
attack "$IT_DIR/att-http.log" slowloris 80 64 14 128
sleep 1.2
t0=$(date +%s)
http_clients 10
it_log "http under slowloris: $OK/10 legitimate GETs got 200 ($(($(date +%s) - t0)) s)"
[ "$OK" = 10 ] || it_fail "http: only $OK of 10 legitimate GETs served under slowloris"
attack_end "$IT_DIR/att-http.log"   # runs past the 10 s request deadline
it_stop_node
line=$(grep '^http server:' "$IT_NODE_LOG") || it_fail "no 'http server:' line"
it_log "node: $line"
hfield() { echo "$line" | awk -v k="$1" '{ for (i = 1; i < NF; i++) if ($i == k) print $(i + 1) }'; }
[ "$(hfield reclaimed)" -ge 1 ] || it_fail "http: no connection reclaimed"
[ "$(hfield head_timeouts)" -ge 1 ] || it_fail "http: no request deadline fired (slowloris for 14 s)"
[ "$(hfield 5xx)" = 0 ] || it_fail "http: 5xx responses"

# Defences off: a slowloris from one source holds every record.
it_start_node --http --http-max-conns 16 --http-per-source 16 --http-reclaim-ms "$NEVER" --http-head-ms "$NEVER" \
    --http-idle-ms "$NEVER"
attack "$IT_DIR/att-http-off.log" slowloris 80 8 8 16
sleep 1.2
http_clients 10
it_log "http (defences off) under slowloris: $OK/10 legitimate GETs got 200"
[ "$OK" -le 1 ] || it_fail "slowloris did not deny the unprotected server ($OK/10 served): the test proves nothing"
attack_end "$IT_DIR/att-http-off.log"
it_stop_node
it_pass
