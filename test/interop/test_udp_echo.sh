#!/usr/bin/env bash
# test_udp_echo.sh -- Linux UDP sockets against wisp-node's UDP services.
#
#  - echo (RFC 862, port 7): datagrams of every size 1..1472 (unfragmented
#    at MTU 1500) and 4000, 8000, 30000 and 65507 (the largest UDP payload,
#    45 fragments each way) of random data come back byte-exact (SHA-256);
#    no datagram is lost, duplicated or late;
#  - discard (RFC 863, port 9): datagrams are taken without any reply (and
#    the node's discard service counts every one of them);
#  - a datagram to a closed port draws ICMP port unreachable: the connected
#    Linux socket sees ECONNREFUSED;
#  - the node stops cleanly (exit 0, pools at baseline) and its capture
#    decodes clean with IPv4/UDP/ICMP checksum validation.
# The client is python3 (Debian package python3-minimal or python3).
#
# Usage: test_udp_echo.sh PATH-TO-wisp-node   (root; exit 77 = skipped)

source "$(dirname "$0")/lib.sh"
it_init "$@"

PY=""
for p in /usr/bin/python3 "$(command -v python3 2>/dev/null)"; do
    if [ -n "$p" ] && [ -x "$p" ]; then PY=$p; break; fi
done
[ -n "$PY" ] || it_fail "python3 not installed (Debian: python3-minimal)"

PCAP="$IT_DIR/udp.pcap"
CLIENT="$IT_DIR/udp_client.py"
cat >"$CLIENT" <<'PYEOF'
# UDP client of test_udp_echo.sh: prints one line per check, "RESULT ok"
# or "RESULT fail" last; exit status 0 only when everything passed.
import errno, hashlib, os, socket, sys, time

HOST = sys.argv[1]
fails = []

def sock(port, timeout):
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4 << 20)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 4 << 20)
    s.connect((HOST, port))
    s.settimeout(timeout)
    return s

def echo(sizes):
    s = sock(7, 2.0)
    late = {}     # hash -> size of requests whose reply timed out
    ok = 0
    for n in sizes:
        data = os.urandom(n)
        want = hashlib.sha256(data).digest()
        s.send(data)
        deadline = time.monotonic() + 2.0
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                fails.append("echo %d: no reply within 2 s" % n)
                late[want] = n
                break
            s.settimeout(left)
            try:
                got = s.recv(70000)
            except socket.timeout:
                continue
            except OSError as e:
                fails.append("echo %d: recv error %s" % (n, e))
                break
            h = hashlib.sha256(got).digest()
            if h == want:
                ok += 1
                break
            if h in late:
                fails.append("echo %d: late reply of size %d arrived" % (n, late.pop(h)))
                continue
            fails.append("echo %d: reply differs (got %d bytes)" % (n, len(got)))
            break
    # Nothing more may arrive (duplicates).
    s.settimeout(0.5)
    extra = 0
    try:
        while True:
            s.recv(70000)
            extra += 1
    except socket.timeout:
        pass
    except OSError as e:
        fails.append("echo: error after the last reply: %s" % e)
    if extra:
        fails.append("echo: %d unexpected extra datagrams" % extra)
    print("echo: %d of %d datagrams echoed byte-exact" % (ok, len(sizes)))
    s.close()
    return ok

def discard(sizes):
    s = sock(9, 1.0)
    for n in sizes:
        s.send(os.urandom(n))
        time.sleep(0.01)
    try:
        got = s.recv(70000)
        fails.append("discard: got a %d-byte reply" % len(got))
    except socket.timeout:
        pass
    except OSError as e:
        fails.append("discard: error %s (port unreachable?)" % e)
    print("discard: %d datagrams sent, no reply" % len(sizes))
    s.close()

def closed(port, tries):
    refused = 0
    for i in range(tries):
        s = sock(port, 2.0)
        s.send(b"closed port probe %d" % i)
        try:
            s.recv(100)
            fails.append("closed port %d: got a reply" % port)
        except ConnectionRefusedError:
            refused += 1
        except socket.timeout:
            fails.append("closed port %d: no ICMP port unreachable within 2 s" % port)
        except OSError as e:
            fails.append("closed port %d: unexpected error %s" % (port, e))
        s.close()
        time.sleep(0.2)
    print("closed port %d: %d of %d probes refused (ECONNREFUSED)" % (port, refused, tries))

echo_sizes = list(range(1, 1473)) + [4000, 8000, 30000, 65507]
discard_sizes = [1, 100, 1472, 1473, 4000, 30000, 65507]
echo(echo_sizes)
discard(discard_sizes)
closed(4242, 3)
echo([1, 1472, 65507])  # still serving after all that
print("COUNTS echo=%d discard=%d" % (len(echo_sizes) + 3, len(discard_sizes)))
for f in fails[:50]:
    print("FAIL " + f)
print("RESULT " + ("ok" if not fails else "fail (%d problems)" % len(fails)))
sys.exit(0 if not fails else 1)
PYEOF

it_start_node --pcap "$PCAP"

out=$(it_ns_t 300 "$PY" "$CLIENT" "$IT_NODE_IP" 2>&1)
rc=$?
while IFS= read -r line; do it_log "client: $line"; done <<<"$out"
it_node_alive "running the UDP client"
[ "$rc" -eq 0 ] || it_fail "UDP client failed (status $rc)"
echo "$out" | grep -q '^RESULT ok$' || it_fail "UDP client did not report success"
want_echo=$(echo "$out" | sed -nE 's/^COUNTS echo=([0-9]+) discard=([0-9]+)$/\1/p')
want_discard=$(echo "$out" | sed -nE 's/^COUNTS echo=([0-9]+) discard=([0-9]+)$/\2/p')

it_stop_node

got_echo=$(awk '$1 == "udp/7" && $2 == "echo" { print $4 }' "$IT_NODE_LOG")
got_discard=$(awk '$1 == "udp/9" && $2 == "discard" { print $4 }' "$IT_NODE_LOG")
it_log "node: echo served ${got_echo:-?}, discard served ${got_discard:-?}," \
    "udp.drop.noport=$(it_counter udp.drop.noport) icmp.err.tx=$(it_counter icmp.err.tx)" \
    "ip4.reass.ok=$(it_counter ip4.reass.ok) ip4.frag.tx=$(it_counter ip4.frag.tx)"
[ "${got_echo:-x}" = "$want_echo" ] || it_fail "echo service served ${got_echo:-?} datagrams, want $want_echo"
[ "${got_discard:-x}" = "$want_discard" ] || it_fail "discard service took ${got_discard:-?} datagrams, want $want_discard"
[ "$(it_counter udp.drop.noport)" -eq 3 ] || it_fail "udp.drop.noport $(it_counter udp.drop.noport), want 3"

# The payloads are random bytes: decode them as data, not by heuristics.
it_pcap_clean "$PCAP" -d udp.port==7,data -d udp.port==9,data -d udp.port==4242,data
unreach=$(it_pcap_count "$PCAP" 'icmp.type == 3 && icmp.code == 3')
[ "$unreach" -eq 3 ] || it_fail "capture holds $unreach ICMP port unreachable messages, want 3"
from9=$(it_pcap_count "$PCAP" "ip.src == $IT_NODE_IP && udp.srcport == 9")
[ "$from9" -eq 0 ] || it_fail "capture holds $from9 datagrams from the discard port"

it_pass
