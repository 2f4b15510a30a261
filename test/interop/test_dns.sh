#!/usr/bin/env bash
# test_dns.sh -- wisp's DNS resolver against dnsmasq (Debian dnsmasq-base)
# serving on the Linux side of the tap.
#
# dnsmasq runs in the test's namespace on 198.18.0.1:53 without upstream
# servers, answering only from its command line:
#   *.wisp-test.example   -> 198.18.7.7       (--address)
#   web.wisp.lan          -> 198.18.7.8       (--host-record)
#   alias.wisp.lan        CNAME web.wisp.lan  (--cname)
#   other names in wisp.lan: NXDOMAIN         (--local=/wisp.lan/)
#   anything else: REFUSED (no upstream)
# Each case runs `wisp-node --dns 198.18.0.1 --resolve NAME`, which must
# print the right line, exit 0 (resolved) or 1 (not), and leave its pools
# at baseline:
#  - A record, TTL as configured (--local-ttl 120);
#  - the same in other letter case (question matched case-insensitively);
#  - a CNAME chain in one answer;
#  - NXDOMAIN -> "NXDOMAIN", exit 1;
#  - REFUSED from the only server -> "server failure" after the retries;
#  - no server listening (dnsmasq stopped) -> "timeout" after the retries
#    (ICMP port unreachable is not taken as an answer).
# The capture of the CNAME run decodes clean in tshark (DNS dissector).
#
# Usage: test_dns.sh PATH-TO-wisp-node   (root; exit 77 = skipped)

source "$(dirname "$0")/lib.sh"
it_init "$@"

DNSMASQ=/usr/sbin/dnsmasq
[ -x "$DNSMASQ" ] || DNSMASQ=$(command -v dnsmasq 2>/dev/null || true)
[ -n "$DNSMASQ" ] && [ -x "$DNSMASQ" ] || it_fail "dnsmasq not installed (Debian: dnsmasq-base)"

it_bg_start "$IT_DIR/dnsmasq.log" 300 "$DNSMASQ" --no-daemon --conf-file=/dev/null --no-resolv --no-hosts \
    --port=53 --listen-address="$IT_LINUX_IP" --bind-interfaces --pid-file= --user=root --group=root \
    --log-queries --log-facility=- --local-ttl=120 \
    --address=/wisp-test.example/198.18.7.7 \
    --host-record=web.wisp.lan,198.18.7.8 \
    --cname=alias.wisp.lan,web.wisp.lan \
    --local=/wisp.lan/
DNSMASQ_PID=$IT_BG_PID
# dnsmasq answers once it logs that it started; check it is alive.
for _ in $(seq 1 50); do
    grep -qi 'started' "$IT_DIR/dnsmasq.log" 2>/dev/null && break
    kill -0 "$DNSMASQ_PID" 2>/dev/null || break
    sleep 0.1
done
kill -0 "$DNSMASQ_PID" 2>/dev/null || { cat "$IT_DIR/dnsmasq.log" >&2; it_fail "dnsmasq did not start"; }
it_log "dnsmasq running (pid $DNSMASQ_PID) on $IT_LINUX_IP:53"

RUN_N=0
# resolve NAME WANT_RC WANT_REGEX [extra wisp-node options]: one node run.
resolve() {
    local name=$1 want_rc=$2 want=$3 rc line t0 t1
    shift 3
    RUN_N=$((RUN_N + 1))
    IT_NODE_LOG="$IT_DIR/node-$RUN_N.log"
    t0=$(date +%s%N)
    timeout -k 5 30 ip netns exec "$IT_NS" "$IT_NODE" --tap "$IT_TAP" --addr "$IT_NODE_IP/$IT_PREFIX" \
        --dns "$IT_LINUX_IP" --resolve "$name" "$@" >"$IT_NODE_LOG" 2>&1
    rc=$?
    t1=$(date +%s%N)
    line=$(grep -E '^wisp-node: resolve ' "$IT_NODE_LOG" | head -n 1)
    it_log "node: ${line:-<no resolve line>} (exit $rc, $(((t1 - t0) / 1000000)) ms)"
    [ "$rc" -eq "$want_rc" ] || it_fail "resolve $name: exit status $rc, want $want_rc"
    echo "$line" | grep -qE "$want" || it_fail "resolve $name: got '$line', want /$want/"
    grep -q '^pools: all back at baseline$' "$IT_NODE_LOG" ||
        it_fail "resolve $name: no 'pools: all back at baseline' line"
    grep -qiE 'runtime error|AddressSanitizer|LeakSanitizer' "$IT_NODE_LOG" && it_fail "resolve $name: sanitizer report"
    return 0
}

# node counter of the last run
last_counter() {
    awk -v n="$1" '$1 == n && NF == 2 { v = $2 } END { print (v == "" ? 0 : v) }' "$IT_NODE_LOG"
}

resolve host.wisp-test.example 0 '^wisp-node: resolve host\.wisp-test\.example -> 198\.18\.7\.7 \(ttl 120\)$'
# One query on a clean link -- unless the node's first ARP request was lost
# while the tap's carrier was still coming up (seen once in CI: the ARP
# retry and the DNS retransmission both fire at 1 s; arp.req.tx then >= 2).
if [ "$(last_counter dns.tx)" -ne 1 ] && [ "$(last_counter arp.req.tx)" -lt 2 ]; then
    it_fail "dns.tx $(last_counter dns.tx), want 1 (no retransmission on a clean link; arp.req.tx $(last_counter arp.req.tx))"
fi
resolve web.wisp.lan 0 '^wisp-node: resolve web\.wisp\.lan -> 198\.18\.7\.8 \(ttl 120\)$'
resolve WeB.WISP.lan 0 '^wisp-node: resolve WeB\.WISP\.lan -> 198\.18\.7\.8 '
resolve alias.wisp.lan 0 '^wisp-node: resolve alias\.wisp\.lan -> 198\.18\.7\.8 ' --pcap "$IT_DIR/cname.pcap"
PCAP_CNAME="$IT_DIR/cname.pcap"
resolve nothere.wisp.lan 1 '^wisp-node: resolve nothere\.wisp\.lan: NXDOMAIN$'
[ "$(last_counter dns.nxdomain)" -eq 1 ] || it_fail "dns.nxdomain $(last_counter dns.nxdomain), want 1"
resolve elsewhere.invalid 1 '^wisp-node: resolve elsewhere\.invalid: server failure$'
[ "$(last_counter dns.rcode.err)" -ge 1 ] || it_fail "dns.rcode.err $(last_counter dns.rcode.err), want >= 1 (REFUSED)"
resolve 198.18.3.4 0 '^wisp-node: resolve 198\.18\.3\.4 -> 198\.18\.3\.4 '

# The queries dnsmasq saw (its log): our names, type A.
grep -q 'query\[A\] alias.wisp.lan from 198.18.0.2' "$IT_DIR/dnsmasq.log" ||
    it_fail "dnsmasq log has no A query for alias.wisp.lan from the node"

# The capture of the CNAME run: clean DNS, one query, one answer with the chain.
it_pcap_clean "$PCAP_CNAME"
q=$(it_pcap_count "$PCAP_CNAME" 'dns.flags.response == 0 && dns.qry.name == "alias.wisp.lan" && dns.qry.type == 1')
a=$(it_pcap_count "$PCAP_CNAME" 'dns.flags.response == 1 && dns.cname == "web.wisp.lan" && dns.a == 198.18.7.8')
[ "$q" -eq 1 ] && [ "$a" -eq 1 ] || it_fail "capture: $q queries and $a CNAME answers for alias.wisp.lan, want 1 and 1"

# No server: stop dnsmasq; the node gets ICMP port unreachables and times out.
kill -TERM "$DNSMASQ_PID" 2>/dev/null
it_bg_wait "$DNSMASQ_PID" 10 || true
resolve web.wisp.lan 1 '^wisp-node: resolve web\.wisp\.lan: timeout$'
[ "$(last_counter dns.timeout)" -eq 4 ] || it_fail "dns.timeout $(last_counter dns.timeout), want 4"

it_pass
