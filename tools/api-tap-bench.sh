#!/usr/bin/env bash
# api-tap-bench.sh -- netconn vs BSD socket API of wisp over a Linux TAP, in
# one run: wisp-node --api X in client mode sends N MB (MB = 10^6 bytes) to
# a Linux discard server in a network namespace, for write sizes 128, 512,
# 1024 and 1460 bytes; the runs of the APIs are interleaved (netconn,
# socket, raw, netconn, socket, raw, ...) and each figure is the median of
# RUNS runs; then the mean connect time of C sequential connects to Linux
# per API (wisp-node --connects C). Prints a markdown table: goodput per
# API (raw = the callback API in the main loop, for reference) and the
# ratio socket / netconn (the median of the ratios of back-to-back runs).
#
# Goodput is measured by the node: from the connection's establishment to
# the moment the whole transfer is known delivered (raw: last byte
# acknowledged; netconn / socket: after the write side was shut down, the
# Linux server's close, which it sends once it read everything).
#
# Usage: tools/api-tap-bench.sh [options] [PATH-TO-wisp-node]
#   --quick          check-sized run: 8 MB per run, 5 runs, 50 connects,
#                    no raw runs
#   --mb N           MB per run (default 20; bounded to 1..200)
#   --runs N         runs per API and size (default 3; 1..9)
#   --connects N     sequential connects per API (default 200; 1..2000)
#   --sizes "A B"    write sizes (default "128 512 1024 1460")
#   --no-raw         leave out the raw API
#   --check RATIO    exit 1 when socket goodput < RATIO x netconn at any
#                    size (a size below it gets RUNS more runs of both and
#                    is judged on the medians of all: a noisy machine);
#                    e.g. --check 0.95
# Needs root (network namespace, tap), python3. Exit 0 ok, 1 failure or
# check failed, 2 usage, 77 no namespaces (skip). Everything runs in the
# namespace wisp-apibench-PID (addresses 198.18.0.0/24), deleted at exit;
# every node run is bounded by timeout(1).

set -u
set -o pipefail

NODE=""
MB=20
RUNS=3
CONNECTS=200
SIZES="128 512 1024 1460"
RAW=1
CHECK=""
while [ $# -gt 0 ]; do
    case "$1" in
    --quick) MB=8; RUNS=5; CONNECTS=50; RAW=0 ;;
    --mb) MB=$2; shift ;;
    --runs) RUNS=$2; shift ;;
    --connects) CONNECTS=$2; shift ;;
    --sizes) SIZES=$2; shift ;;
    --no-raw) RAW=0 ;;
    --check) CHECK=$2; shift ;;
    -h | --help) sed -n '2,32p' "$0"; exit 0 ;;
    -*) echo "api-tap-bench: unknown option $1" >&2; exit 2 ;;
    *) NODE=$1 ;;
    esac
    shift
done
if [ -z "$NODE" ]; then
    NODE="$(dirname "$0")/../build/wisp-node"
fi
num() { [[ "$1" =~ ^[0-9]+$ ]] && [ "$1" -ge "$2" ] && [ "$1" -le "$3" ]; }
num "$MB" 1 200 && num "$RUNS" 1 9 && num "$CONNECTS" 1 2000 || {
    echo "api-tap-bench: bad --mb / --runs / --connects" >&2
    exit 2
}
for s in $SIZES; do num "$s" 1 65536 || { echo "api-tap-bench: bad size $s" >&2; exit 2; }; done
if [ -n "$CHECK" ] && ! [[ "$CHECK" =~ ^[0-9]*\.?[0-9]+$ ]]; then
    echo "api-tap-bench: bad --check $CHECK" >&2
    exit 2
fi
[ -x "$NODE" ] || { echo "api-tap-bench: wisp-node not executable: $NODE" >&2; exit 2; }
NODE=$(readlink -f "$NODE")
[ "$(id -u)" = 0 ] || { echo "api-tap-bench: needs root (network namespace, tap)"; exit 77; }
PY=$(command -v python3) || { echo "api-tap-bench: python3 missing" >&2; exit 1; }

NS="wisp-apibench-$$"
TAP=wtap0
LINUX_IP=198.18.0.1
NODE_IP=198.18.0.2
PORT=5009
DIR=$(mktemp -d /tmp/wisp-apibench.XXXXXX) || exit 1
SRV_PID=""
cleanup() {
    local rc=$?
    trap - EXIT INT TERM
    if [ -n "$SRV_PID" ]; then
        kill -TERM "$SRV_PID" 2>/dev/null
        wait "$SRV_PID" 2>/dev/null
    fi
    timeout -k 5 20 ip netns del "$NS" 2>/dev/null
    if [ "$rc" -ne 0 ] && [ "$rc" -ne 77 ]; then
        echo "api-tap-bench: logs kept in $DIR" >&2
    else
        rm -rf "$DIR"
    fi
    exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

if ! timeout 10 ip netns add "$NS" 2>"$DIR/netns.err"; then
    echo "api-tap-bench: ip netns unavailable: $(cat "$DIR/netns.err")"
    NS=""
    exit 77
fi
nsx() { timeout -k 5 "$1" ip netns exec "$NS" "${@:2}"; }
nsx 10 ip link set lo up || exit 1
nsx 10 sysctl -q -w net.ipv6.conf.all.disable_ipv6=1 >/dev/null 2>&1
nsx 10 sysctl -q -w net.ipv6.conf.default.disable_ipv6=1 >/dev/null 2>&1
nsx 10 ip tuntap add dev "$TAP" mode tap || exit 1
nsx 10 ip addr add "$LINUX_IP/24" dev "$TAP" || exit 1
nsx 10 ip link set "$TAP" up || exit 1

# The Linux discard server: every connection read to EOF, then closed.
cat >"$DIR/discard.py" <<'PYEOF'
import socket, sys, threading
l = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
l.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
l.bind((sys.argv[1], int(sys.argv[2])))
l.listen(512)
print("LISTENING", flush=True)
def serve(c):
    buf = bytearray(1 << 20)
    try:
        c.settimeout(60)
        while c.recv_into(buf):
            pass
    except OSError:
        pass
    c.close()
while True:
    c, _ = l.accept()
    threading.Thread(target=serve, args=(c,), daemon=True).start()
PYEOF
timeout -k 5 3600 ip netns exec "$NS" "$PY" "$DIR/discard.py" "$LINUX_IP" "$PORT" >"$DIR/server.log" 2>&1 &
SRV_PID=$!
for _ in $(seq 1 50); do
    grep -q LISTENING "$DIR/server.log" 2>/dev/null && break
    sleep 0.1
done
grep -q LISTENING "$DIR/server.log" || { echo "api-tap-bench: discard server not listening" >&2; exit 1; }

APIS="netconn socket"
[ "$RAW" = 1 ] && APIS="$APIS raw"
bytes=$((MB * 1000000))
RUNNO=0

# run_send API SIZE LOG: one transfer; prints the goodput (MB/s).
run_send() {
    local log=$3 g
    if ! nsx 120 "$NODE" --tap "$TAP" --addr "$NODE_IP/24" --quiet --api "$1" \
        --connect "$LINUX_IP:$PORT" --send "$bytes" --write-size "$2" >"$log" 2>&1; then
        echo "api-tap-bench: wisp-node --api $1 --write-size $2 failed (log $log):" >&2
        grep -E 'client|pools|FAIL' "$log" | tail -n 5 >&2
        return 1
    fi
    grep -q '^pools: all back at baseline$' "$log" || { echo "api-tap-bench: pool leak in $log" >&2; return 1; }
    g=$(sed -nE 's/^wisp-node: client sent .* goodput ([0-9.]+) MB\/s.*/\1/p' "$log")
    [ -n "$g" ] || { echo "api-tap-bench: no goodput in $log" >&2; return 1; }
    echo "$g"
}

median() { tr ' ' '\n' | grep . | sort -g | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }

# measure SIZE APIS...: RUNS interleaved runs; sets MED_<api>, the median
# of every run of that size so far (MORE=1 keeps the earlier runs: a
# repeated measurement adds to them).
declare -A ALL
measure() {
    local size=$1 r api g
    shift
    if [ "${MORE:-0}" != 1 ]; then
        for api in "$@"; do ALL[$api]=""; done
    fi
    for r in $(seq 1 "$RUNS"); do
        for api in "$@"; do
            RUNNO=$((RUNNO + 1))
            g=$(run_send "$api" "$size" "$DIR/run$RUNNO-$api-$size.log") || exit 1
            ALL[$api]="${ALL[$api]} $g"
        done
    done
    for api in "$@"; do
        eval "MED_$api=$(echo "${ALL[$api]}" | median)"
        echo "  size $size $api:${ALL[$api]} MB/s (median $(eval echo "\$MED_$api"))" >&2
    done
}

# The ratio socket / netconn of a size: the median of the ratios of the
# runs made back to back (run i of socket right after run i of netconn),
# which share the machine's load of the moment -- steadier on a busy
# machine than the ratio of the medians.
pair_ratio() {
    awk -v s="${ALL[socket]}" -v n="${ALL[netconn]}" 'BEGIN {
        k = split(s, a, " "); split(n, b, " ");
        for (i = 1; i <= k; i++) r[i] = (b[i] > 0 ? a[i] / b[i] : 0);
        for (i = 1; i <= k; i++) for (j = i + 1; j <= k; j++) if (r[j] < r[i]) { t = r[i]; r[i] = r[j]; r[j] = t }
        printf "%.3f", (k % 2 ? r[(k + 1) / 2] : (r[k / 2] + r[k / 2 + 1]) / 2) }'
}
below() { awk -v r="$1" -v c="$2" 'BEGIN { exit !(r < c) }'; }

echo "api-tap-bench: $MB MB per run, $RUNS runs per API and size, APIs: $APIS; node $NODE" >&2
declare -A ROW
fail=0
for size in $SIZES; do
    # shellcheck disable=SC2086
    measure "$size" $APIS
    r=$(pair_ratio)
    if [ -n "$CHECK" ] && below "$r" "$CHECK"; then
        echo "  size $size: socket/netconn $r < $CHECK: measuring once more" >&2
        MORE=1 measure "$size" netconn socket
        r=$(pair_ratio)
        if below "$r" "$CHECK"; then
            echo "  size $size: socket/netconn $r < $CHECK again: FAIL" >&2
            fail=1
        fi
    fi
    echo "  size $size: socket/netconn $r (median of the per-pair ratios)" >&2
    raw="-"
    [ "$RAW" = 1 ] && raw=$(eval echo "\$MED_raw")
    ROW[$size]="| $size | $MED_netconn | $MED_socket | $r | $raw |"
done

# Connect times: C sequential connects (connect .. established) per API.
declare -A CT
for api in $APIS; do
    log="$DIR/connects_$api.log"
    if ! nsx 120 "$NODE" --tap "$TAP" --addr "$NODE_IP/24" --quiet --api "$api" \
        --connect "$LINUX_IP:$PORT" --connects "$CONNECTS" >"$log" 2>&1; then
        echo "api-tap-bench: --connects with --api $api failed (log $log)" >&2
        exit 1
    fi
    CT[$api]=$(sed -nE 's/^wisp-node: client [0-9]+ connects to .* mean ([0-9.]+) us, median ([0-9.]+) us.*/\1 \2/p' "$log")
    [ -n "${CT[$api]}" ] || { echo "api-tap-bench: no connect times in $log" >&2; exit 1; }
done

echo
echo "wisp -> Linux over TAP, goodput in MB/s (10^6 bytes), median of $RUNS runs of $MB MB (sizes re-measured by --check: of all runs), interleaved;"
echo "Linux discard server in a network namespace; $(nproc) CPUs; $(date -u '+%Y-%m-%d %H:%M UTC')"
echo
echo "| write size (bytes) | netconn | socket | socket / netconn | raw (reference) |"
echo "|---:|---:|---:|---:|---:|"
for size in $SIZES; do echo "${ROW[$size]}"; done
echo
echo "| API | connect time, mean of $CONNECTS sequential (us) | median (us) |"
echo "|---|---:|---:|"
for api in $APIS; do
    set -- ${CT[$api]}
    echo "| $api | $1 | $2 |"
done
if [ -n "$CHECK" ]; then
    if [ "$fail" -ne 0 ]; then
        echo
        echo "CHECK FAILED: socket goodput below $CHECK x netconn"
        exit 1
    fi
    echo
    echo "check passed: socket goodput >= $CHECK x netconn at every size"
fi
exit 0
