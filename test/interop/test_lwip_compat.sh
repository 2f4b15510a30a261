#!/bin/bash
# test_lwip_compat.sh -- the lwip-style application (apps/lwip-style: one
# set of lwIP application files) built against wisp's lwIP compatibility
# layer (lwip-style-wisp) and against Debian's lwIP 2.1.3 (lwip-style-lwip),
# each run on a tap in its own namespace, both put through the same checks
# from the Linux side:
#  - ping;
#  - TCP echo on port 7 (netconn) and 7007 (raw API): 300 KB of random
#    data in writes of 1..4000 bytes, echoed back with the same SHA-256;
#  - UDP echo on port 7 (raw API): 40 datagrams of 1..1472 bytes;
#  - raw-API TCP client (tcp_connect, tcp_write with flow control from the
#    sent callback, tcp_shutdown, recv of the reply): 200 KB to a Linux
#    listener, which answers with the SHA-256 it got;
#  - HTTP on port 80 (sockets + select / poll): curl GET / and 4 parallel
#    GET /data/1000000 with the body's SHA-256 checked;
#  - SIGTERM: services stop, the interface is removed, exit status 0; on
#    wisp every pool is back at its baseline after the stack's shutdown.
# DHCP (dhcp_start, dhcp_supplied_address) against dnsmasq, then DNS
# (dns_gethostbyname through the lease's server, dnsmasq): on wisp; on
# Debian's lwIP only when its build has DHCP (Debian's has LWIP_DHCP 0:
# the application reports that and the check is skipped for it).
#
# Usage: test_lwip_compat.sh PATH-TO-wisp-node  (the lwip-style binaries
# are next to it; root; exit 77 = skipped)

source "$(dirname "$0")/lib.sh"
it_init "$@"
it_python
BIN_DIR=$(dirname "$IT_NODE")
PEER="$(dirname "$0")/lwipstyle_peer.py"
DNSMASQ=/usr/sbin/dnsmasq
command -v curl >/dev/null 2>&1 || it_fail "curl not installed"
[ -x "$BIN_DIR/lwip-style-wisp" ] || it_fail "missing $BIN_DIR/lwip-style-wisp"
STACKS="wisp"
if [ -x "$BIN_DIR/lwip-style-lwip" ]; then
    STACKS="wisp lwip"
else
    it_log "lwip-style-lwip not built (no liblwip-dev): checking wisp only"
fi
HTTP_N=1000000
HTTP_SHA=$("$IT_PY" "$PEER" http-sha "$HTTP_N") || it_fail "http-sha"

# app_start STACK ADDR LOG [ARGS...]: start the application, wait for its
# ready line (its address goes to APP_ADDR).
APP_ADDR=""
app_start() {
    local stack=$1 addr=$2 log=$3
    shift 3
    IT_NODE_LOG=$log
    timeout -k 5 300 ip netns exec "$IT_NS" "$BIN_DIR/lwip-style-$stack" "$IT_TAP" "$addr" "$@" >"$log" 2>&1 &
    IT_NODE_PID=$!
    # 45 s: start-up plus the application's own 30 s wait for a DHCP lease
    for _ in $(seq 1 450); do
        if grep -q '^lwip-style: ready' "$log"; then
            APP_ADDR=$(sed -n 's/^lwip-style: ready \([0-9.]*\)$/\1/p' "$log")
            it_log "$stack: $(grep '^lwip-style: stack' "$log")"
            grep '^lwip-style: lwIP PBUF_POOL' "$log" | while IFS= read -r l; do it_log "$stack: $l"; done
            it_log "$stack: ready at $APP_ADDR (pid $IT_NODE_PID)"
            return 0
        fi
        if ! kill -0 "$IT_NODE_PID" 2>/dev/null; then
            wait "$IT_NODE_PID"
            IT_NODE_RC=$?
            IT_NODE_PID=""
            return "$IT_NODE_RC"
        fi
        sleep 0.1
    done
    it_fail "$stack: not ready after 45 s"
}

app_stop() {
    local stack=$1
    it_node_alive "$stack: before SIGTERM"
    it_stop_timed "$IT_NODE_PID" 20 || { IT_NODE_PID=""; it_fail "$stack: did not stop within 20 s"; }
    IT_NODE_PID=""
    [ "$IT_STOP_RC" -eq 0 ] || it_fail "$stack: exit status $IT_STOP_RC: $(tail -n 5 "$IT_NODE_LOG")"
    grep -q '^lwip-style: stopped, status 0$' "$IT_NODE_LOG" || it_fail "$stack: no clean stop line"
    if [ "$stack" = wisp ]; then
        grep -q '^pools: all back at baseline' "$IT_NODE_LOG" ||
            it_fail "wisp: pools not back at baseline: $(grep '^pools:' "$IT_NODE_LOG")"
    fi
    it_log "$stack: $(grep '^lwip-style: tap' "$IT_NODE_LOG")"
    it_log "$stack: stopped cleanly"
}

checks() {
    local stack=$1 a=$2 i pids="" rc
    it_ns ping -c 3 -i 0.2 -W 2 "$a" >/dev/null || it_fail "$stack: no ping reply from $a"
    it_log "$stack: ping ok"
    it_ns_t 90 "$IT_PY" "$PEER" tcp-echo "$a" 7 300000 1 >"$IT_DIR/p.out" 2>&1 ||
        it_fail "$stack: netconn echo: $(cat "$IT_DIR/p.out")"
    it_log "$stack: netconn $(cat "$IT_DIR/p.out")"
    it_ns_t 90 "$IT_PY" "$PEER" tcp-echo "$a" 7007 300000 2 >"$IT_DIR/p.out" 2>&1 ||
        it_fail "$stack: raw echo: $(cat "$IT_DIR/p.out")"
    it_log "$stack: raw $(cat "$IT_DIR/p.out")"
    it_ns_t 90 "$IT_PY" "$PEER" udp-echo "$a" 7 40 >"$IT_DIR/p.out" 2>&1 ||
        it_fail "$stack: udp echo: $(cat "$IT_DIR/p.out")"
    it_log "$stack: raw $(cat "$IT_DIR/p.out")"
    it_ns curl -sS --max-time 20 "http://$a/" >"$IT_DIR/page.html" || it_fail "$stack: curl GET /"
    grep -q '<h1>lwip-style</h1>' "$IT_DIR/page.html" || it_fail "$stack: GET / wrong page"
    for i in 1 2 3 4; do
        it_ns_t 60 curl -sS --max-time 50 -o "$IT_DIR/data$i" "http://$a/data/$HTTP_N" &
        pids="$pids $!"
    done
    rc=0
    for i in $pids; do wait "$i" || rc=1; done
    [ "$rc" -eq 0 ] || it_fail "$stack: a parallel GET /data failed"
    for i in 1 2 3 4; do
        [ "$(sha256sum <"$IT_DIR/data$i" | cut -d' ' -f1)" = "$HTTP_SHA" ] ||
            it_fail "$stack: GET /data/$HTTP_N body $i: wrong SHA-256 ($(wc -c <"$IT_DIR/data$i") bytes)"
    done
    it_log "$stack: HTTP GET / and 4 parallel GET /data/$HTTP_N ok (sha256 ${HTTP_SHA:0:16})"
}

CLIENT_N=200000
CLIENT_SHA=$("$IT_PY" "$PEER" http-sha "$CLIENT_N") || it_fail "http-sha"
for stack in $STACKS; do
    it_bg_start "$IT_DIR/sink-$stack.log" 120 "$IT_PY" "$PEER" sink-reply 9000 60
    it_wait_line "$IT_DIR/sink-$stack.log" '^listening' 10 || it_fail "sink-reply did not start"
    app_start "$stack" "$IT_NODE_IP/$IT_PREFIX" "$IT_DIR/$stack.log" "client=$IT_LINUX_IP:9000:$CLIENT_N" ||
        it_fail "$stack: exited at start-up"
    it_wait_line "$IT_DIR/$stack.log" '^lwip-style: raw client:' 40 || it_fail "$stack: raw client did not finish"
    grep -q "^lwip-style: raw client: status 0, sent $CLIENT_N bytes, reply: sha256 $CLIENT_SHA $CLIENT_N\$" \
        "$IT_DIR/$stack.log" || it_fail "$stack: raw client: $(grep 'raw client' "$IT_DIR/$stack.log")"
    it_log "$stack: raw client sent $CLIENT_N bytes, the peer got them (sha256 ${CLIENT_SHA:0:16})"
    checks "$stack" "$APP_ADDR"
    app_stop "$stack"
    it_ns ip neigh flush dev "$IT_TAP" >/dev/null 2>&1 || true
done

# DHCP against dnsmasq
if [ -x "$DNSMASQ" ]; then
    it_bg_start "$IT_DIR/dnsmasq.log" 200 "$DNSMASQ" --no-daemon --conf-file=/dev/null --user=root \
        --no-resolv --no-hosts --local=/wisp.example/ --address=/www.wisp.example/198.18.7.7 \
        --interface="$IT_TAP" --bind-interfaces --pid-file="$IT_DIR/dnsmasq.pid" \
        --dhcp-range=198.18.0.100,198.18.0.150,255.255.255.0,2m \
        --dhcp-leasefile="$IT_DIR/dnsmasq.leases" --log-dhcp
    it_wait_line "$IT_DIR/dnsmasq.log" 'DHCP, IP range' 10 || it_fail "dnsmasq did not start"
    for stack in $STACKS; do
        if app_start "$stack" dhcp "$IT_DIR/$stack-dhcp.log" resolve=www.wisp.example; then
            case "$APP_ADDR" in
                198.18.0.1[0-4][0-9] | 198.18.0.150) ;;
                *) it_fail "$stack: DHCP address $APP_ADDR not from the pool" ;;
            esac
            it_log "$stack: DHCP lease $APP_ADDR"
            it_wait_line "$IT_DIR/$stack-dhcp.log" '^lwip-style: resolve' 25 || it_fail "$stack: no DNS result"
            if grep -q '^lwip-style: resolved www.wisp.example 198.18.7.7$' "$IT_DIR/$stack-dhcp.log"; then
                it_log "$stack: dns_gethostbyname www.wisp.example -> 198.18.7.7 (server from the lease)"
            elif grep -q 'has no DNS' "$IT_DIR/$stack-dhcp.log"; then
                it_log "$stack: DNS check skipped: this build has no DNS"
            else
                it_fail "$stack: DNS: $(grep '^lwip-style: resol' "$IT_DIR/$stack-dhcp.log")"
            fi
            it_ns curl -sS --max-time 20 "http://$APP_ADDR/" | grep -q '<h1>lwip-style</h1>' ||
                it_fail "$stack: GET / at the leased address"
            app_stop "$stack"
            it_wait_line "$IT_DIR/dnsmasq.log" "DHCPRELEASE.*$APP_ADDR" 5 || it_fail "$stack: no DHCPRELEASE seen by dnsmasq"
            it_log "$stack: DHCP bound, served, released"
        elif [ "${IT_NODE_RC:-}" = 3 ] && grep -q 'has no DHCP' "$IT_DIR/$stack-dhcp.log"; then
            it_log "$stack: DHCP check skipped: $(grep 'has no DHCP' "$IT_DIR/$stack-dhcp.log")"
        else
            it_fail "$stack: exited at DHCP start-up: $(tail -n 3 "$IT_DIR/$stack-dhcp.log")"
        fi
    done
else
    it_log "dnsmasq not installed: DHCP check skipped"
fi
it_pass
