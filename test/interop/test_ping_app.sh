#!/usr/bin/env bash
# test_ping_app.sh -- wisp-node's ping client (--ping, apps/lib/ping.c)
# against the Linux kernel:
#
#  - `--ping <linux addr> --count 20` (200 ms apart): 20 replies, seq 0..19
#    each once, "0% packet loss", an rtt min/avg/max/mdev line, exit 0;
#  - 3 requests of 3000 data bytes (fragmented both ways): all answered;
#  - an address nobody has: 100% loss, exit 1 (like ping(8));
#  - every run ends with the pools back at baseline.
#
# Usage: test_ping_app.sh PATH-TO-wisp-node   (root; exit 77 = skipped)

source "$(dirname "$0")/lib.sh"
it_init "$@"

run_ping() { # LOG SECONDS options...
    local log=$1 t=$2
    shift 2
    IT_NODE_LOG=$log
    timeout -k 5 "$t" ip netns exec "$IT_NS" \
        "$IT_NODE" --tap "$IT_TAP" --addr "$IT_NODE_IP/$IT_PREFIX" --quiet "$@" >"$log" 2>&1
    IT_NODE_RC=$?
    grep -q '^pools: all back at baseline$' "$log" ||
        it_fail "no 'pools: all back at baseline' line: $(grep '^pools:' "$log" | tail -n 1)"
}

run_ping "$IT_DIR/ping20.log" 30 --ping "$IT_LINUX_IP" --count 20 --interval 200
sed -n '/^--- /,/^rtt/p' "$IT_DIR/ping20.log" | while IFS= read -r l; do it_log "node: $l"; done
[ "$IT_NODE_RC" = 0 ] || it_fail "wisp-node --ping exit status $IT_NODE_RC"
grep -q '^20 packets transmitted, 20 received, 0% packet loss' "$IT_DIR/ping20.log" ||
    it_fail "summary: $(grep 'packets transmitted' "$IT_DIR/ping20.log")"
grep -qE '^rtt min/avg/max/mdev = [0-9.]+/[0-9.]+/[0-9.]+/[0-9.]+ ms$' "$IT_DIR/ping20.log" || it_fail "no rtt line"
for s in $(seq 0 19); do
    n=$(grep -c "^64 bytes from $IT_LINUX_IP: icmp_seq=$s ttl=64 time=" "$IT_DIR/ping20.log")
    [ "$n" = 1 ] || it_fail "icmp_seq=$s answered $n times"
done

run_ping "$IT_DIR/pingbig.log" 20 --ping "$IT_LINUX_IP" --count 3 --interval 100 --size 3000
[ "$IT_NODE_RC" = 0 ] || it_fail "large pings: exit status $IT_NODE_RC"
grep -q '^3 packets transmitted, 3 received, 0% packet loss' "$IT_DIR/pingbig.log" ||
    it_fail "large pings: $(grep 'packets transmitted' "$IT_DIR/pingbig.log")"
grep -q "^3008 bytes from $IT_LINUX_IP" "$IT_DIR/pingbig.log" || it_fail "large pings: no 3008-byte replies"
it_log "3 x 3000 data bytes (fragmented): all answered"

run_ping "$IT_DIR/nobody.log" 20 --ping 198.18.0.77 --count 2 --interval 100
[ "$IT_NODE_RC" = 1 ] || it_fail "unanswered pings: exit status $IT_NODE_RC, want 1"
grep -q '^2 packets transmitted, 0 received, 100% packet loss' "$IT_DIR/nobody.log" ||
    it_fail "unanswered pings: $(grep 'packets transmitted' "$IT_DIR/nobody.log")"
it_log "an address nobody has: 100% packet loss, exit 1"
it_pass
