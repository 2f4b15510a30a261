#!/usr/bin/env bash
# bench/run.sh -- the benchmark suite: wisp (socket, netconn and raw API
# servers of wisp-node) against Debian's lwIP 2.1.3 (the lwip-style
# application built against liblwip-dev: netconn discard 9 / echo 7, raw
# echo 7007) and against the Linux kernel reached through the same TAP +
# user-space copy (bench/taprelay.c copies frames between a TAP and a
# second TAP in another namespace, where bench/wprobe.c serves), measured
# from the outside by Linux probes (bench/wprobe.c), all in one run.
#
# wisp-lwipstyle is the same lwip-style application as lwIP's target,
# compiled against wisp's lwIP compatibility layer (lwip-style-wisp): the
# same application code on both stacks (netconn discard 9, echo 7, raw echo
# 7007); wisp-node's services (wisp-sock/-netconn/-raw) are wisp's own apps
# (on the threaded APIs a worker thread per connection slot, made on the
# slot's first use and kept for the connections after it).
#
# Experiments (each a section of docs/bench/README.md):
#   1 (seed 003) receive goodput by sender write size 64..1460 and random
#     1..1460, Nagle on and TCP_NODELAY, Linux sender -> discard server;
#     the sender's retransmissions and segment counts, server CPU per MB,
#     wisp's drop counters per cell;
#   2 (seed 000) socket vs netconn: wisp as the sender (wisp-node
#     --connect --send --write-size 128/512/1024/1460 to a Linux sink),
#     goodput and CPU per MB of the node, connect time (--connects);
#   3 connections/s (sequential connect, half-close, server's close) and
#     ping-pong latency (64-byte echo, TCP_NODELAY) on every target;
#   4 in-process figures: two wisp instances on an unlimited simulated
#     wire, bulk TCP, goodput per CPU second of the process (both stacks,
#     apps/bench/inproc_bench.c, built with the benchmark options: no debug
#     checks), copied and zero-copy writes, with a callgrind breakdown of
#     where the instructions go; checksum / copy GB/s against Debian's
#     lwIP and memcpy (apps/bench/chksum_bench.c);
#   5 (seed 001) transmit response time (send call .. frame on the wire)
#     of urgent (DSCP EF) and common UDP traffic at rising offered load,
#     with the paper's optimizations on and off (apps/bench/prio_bench.c:
#     checksum and copy routines -- a second build with the byte-wise
#     ones --, core locking vs message passing, priority queues), on an
#     emulated 100 Mbit/s and 1 Gbit/s wire in virtual time (the CPU time
#     of every send is measured, so the machine's load does not queue it);
#   6 (seed 000) 50 and 100 concurrent connections: a Linux sender on each
#     (1460-byte writes, Nagle on) to wisp-node's socket and netconn
#     discard servers (a build with 128 service threads), aggregate
#     goodput, slowest/fastest connection, server CPU per MB, the server's
#     resident set growth per connection and wisp's pool high-water marks.
#     The probe connects 5 ms apart; WPROBE_MSEND_GAP_US=0 in the
#     environment makes it one burst (the server's accept queue overflows).
# --exp runs some sections only: the report keeps the other sections of
# the existing docs/bench/README.md (each section names its run).
# Output: docs/bench/README.md (tables: medians with min-max over the
# repetitions, ratios against lwIP and the ceiling), docs/bench/*.png
# (gnuplot), docs/bench/results.tsv (every run).
#
# Usage: bench/run.sh [--quick] [--reps N] [--secs S] [--exp "1 2 3"]
#                     [--out DIR] [--build DIR]
#   --quick   1-second runs, 3 repetitions (a few minutes)
#   default   3-second runs, 3 repetitions (~20 minutes)
# Environment (experiments, not the report's method): BENCH_TARGETS, a
# subset of the targets; BENCH_NODE_ARGS, more wisp-node options (e.g.
# "--tx-direct-max 0").
# Needs root (namespaces, TAPs), gcc, cmake, liblwip-dev; installs
# gnuplot-nox with apt-get when gnuplot is missing. Not run by the test
# suite: it prints ratios and wants a quiet machine. Addresses are in
# 198.18.0.0/15 only; every target runs in its own network namespace
# (wb<PID>-<target>), deleted at exit; every process is bounded by
# timeout(1) and stopped by its PID.

set -u
set -o pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
SECS=3
REPS=3
EXPS="1 2 3 4 5 6"
OUT=$ROOT/docs/bench
BUILD=$ROOT/build-bench
MODE=full
while [ $# -gt 0 ]; do
    case "$1" in
    --quick) SECS=1; MODE=quick ;;
    --reps) REPS=$2; shift ;;
    --secs) SECS=$2; shift ;;
    --exp) EXPS=$2; shift ;;
    --out) OUT=$2; shift ;;
    --build) BUILD=$2; shift ;;
    -h | --help) sed -n '2,65p' "$0"; exit 0 ;;
    *) echo "bench: unknown argument $1" >&2; exit 2 ;;
    esac
    shift
done
[[ "$REPS" =~ ^[0-9]+$ ]] && [ "$REPS" -ge 1 ] && [ "$REPS" -le 20 ] || { echo "bench: bad --reps" >&2; exit 2; }
[[ "$SECS" =~ ^[0-9]+$ ]] && [ "$SECS" -ge 1 ] && [ "$SECS" -le 30 ] || { echo "bench: bad --secs" >&2; exit 2; }
[ "$(id -u)" = 0 ] || { echo "bench: needs root (network namespaces, TAPs)" >&2; exit 1; }

log() { echo "bench: $*" >&2; }

# ---- tools and binaries ----
if ! command -v gnuplot >/dev/null 2>&1; then
    log "installing gnuplot-nox (apt-get)"
    timeout 600 apt-get install -y gnuplot-nox >/dev/null || log "gnuplot-nox not installed: no plots"
fi
mkdir -p "$BUILD" "$OUT" || exit 1
# in-process experiments: a second build with the benchmark options (no
# debug checks: production-like timings)
if [[ " $EXPS " == *" 4 "* ]] || [[ " $EXPS " == *" 5 "* ]]; then
    log "building wisp-inproc-bench, wisp-chksum-bench, wisp-prio-bench in $BUILD-opt (benchmark options)"
    cmake -S "$ROOT" -B "$BUILD-opt" -DCMAKE_C_COMPILER=gcc -DCMAKE_BUILD_TYPE=RelWithDebInfo \
        -DWISP_OPTS_HEADER=wisp_opts_bench.h -DWISP_OPTS_DIR="$ROOT/apps/bench" >/dev/null || exit 1
    cmake --build "$BUILD-opt" -j2 --target wisp-inproc-bench >"$BUILD/bench-build-opt.log" 2>&1 ||
        { tail -n 20 "$BUILD/bench-build-opt.log" >&2; exit 1; }
    cmake --build "$BUILD-opt" -j2 --target wisp-chksum-bench >>"$BUILD/bench-build-opt.log" 2>&1 ||
        log "wisp-chksum-bench not built (liblwip-dev missing?)"
    cmake --build "$BUILD-opt" -j2 --target wisp-prio-bench >>"$BUILD/bench-build-opt.log" 2>&1 ||
        { tail -n 20 "$BUILD/bench-build-opt.log" >&2; exit 1; }
fi
if [[ " $EXPS " == *" 5 "* ]]; then
    # seed 001 without the checksum / copy optimizations: the library takes
    # them from the "port" (wisp/chksum.h hooks), which prio_bench.c makes
    # the byte-wise reference versions
    for v in "ref:-DWISP_ARCH_CHKSUM_SUM -DWISP_ARCH_CHKSUM_COPY -DWISP_ARCH_MEMCPY" \
        "refsum:-DWISP_ARCH_CHKSUM_SUM -DWISP_ARCH_CHKSUM_COPY" "refcpy:-DWISP_ARCH_MEMCPY"; do
        log "building wisp-prio-bench with ${v#*:} (byte-wise versions) in $BUILD-${v%%:*}"
        cmake -S "$ROOT" -B "$BUILD-${v%%:*}" -DCMAKE_C_COMPILER=gcc -DCMAKE_BUILD_TYPE=RelWithDebInfo \
            -DWISP_OPTS_HEADER=wisp_opts_bench.h -DWISP_OPTS_DIR="$ROOT/apps/bench" \
            "-DCMAKE_C_FLAGS=${v#*:}" >/dev/null || exit 1
        cmake --build "$BUILD-${v%%:*}" -j2 --target wisp-prio-bench >"$BUILD/bench-build-${v%%:*}.log" 2>&1 ||
            { tail -n 20 "$BUILD/bench-build-${v%%:*}.log" >&2; exit 1; }
    done
fi
# experiments over TAP (namespaces, wisp-node, lwIP, probes)
NET=0
for e in 1 2 3 6; do [[ " $EXPS " == *" $e "* ]] && NET=1; done
if [ $NET = 1 ]; then
if [[ "$EXPS" == *[123]* ]]; then
log "building wisp-node, lwip-style-wisp and lwip-style-lwip in $BUILD"
cmake -S "$ROOT" -B "$BUILD" -DCMAKE_C_COMPILER=gcc -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null || exit 1
cmake --build "$BUILD" -j2 --target wisp-node lwip-style-wisp lwip-style-lwip >"$BUILD/bench-build.log" 2>&1 ||
    { tail -n 20 "$BUILD/bench-build.log" >&2; exit 1; }
fi
gcc -O2 -Wall -Wextra -o "$BUILD/wprobe" "$ROOT/bench/wprobe.c" -lpthread || exit 1
gcc -O2 -Wall -Wextra -o "$BUILD/taprelay" "$ROOT/bench/taprelay.c" -lpthread || exit 1
fi
if [[ " $EXPS " == *" 6 "* ]]; then
    # 100 concurrent connections need 100 service threads (default 16)
    log "building wisp-node with 128 service threads in $BUILD-conns"
    cmake -S "$ROOT" -B "$BUILD-conns" -DCMAKE_C_COMPILER=gcc -DCMAKE_BUILD_TYPE=RelWithDebInfo \
        "-DCMAKE_C_FLAGS=-DWISP_SOCK_SERVICES_CONNS=128 -DWISP_NC_SERVICES_CONNS=128" >/dev/null || exit 1
    cmake --build "$BUILD-conns" -j2 --target wisp-node >"$BUILD/bench-build-conns.log" 2>&1 ||
        { tail -n 20 "$BUILD/bench-build-conns.log" >&2; exit 1; }
fi
NODE=$BUILD/wisp-node
LWIP=$BUILD/lwip-style-lwip
LWIPW=$BUILD/lwip-style-wisp
PROBE=$BUILD/wprobe
RELAY=$BUILD/taprelay

DIR=$(mktemp -d /tmp/wisp-bench.XXXXXX) || exit 1
RES=$DIR/results.tsv
: >"$RES"
: >"$DIR/stopnotes.txt"
PFX="wb$$"
TARGETS=${BENCH_TARGETS:-"wisp-sock wisp-netconn wisp-raw wisp-lwipstyle lwip-netconn linux"}
MAXT=7200 # bound of every server process (s)
KILL_AFTER=30 # SIGKILL this long after SIGTERM (lwIP can take >5 s to stop)
NSLIST=""
declare -A TPID CPUPIDS
FAILS=0

cleanup() {
    local rc=$? t
    trap - EXIT INT TERM
    for t in "${!TPID[@]}"; do
        for p in ${TPID[$t]}; do kill -TERM "$p" 2>/dev/null; done
    done
    for t in "${!TPID[@]}"; do
        for p in ${TPID[$t]}; do wait "$p" 2>/dev/null; done
    done
    for ns in $NSLIST; do timeout -k 5 20 ip netns del "$ns" 2>/dev/null; done
    log "logs in $DIR"
    exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

ns_of() { echo "$PFX-$1"; }
mkns() { # NS TAP ADDR/PREFIX
    timeout 10 ip netns add "$1" || return 1
    NSLIST="$NSLIST $1"
    local x="timeout -k 5 10 ip netns exec $1"
    $x ip link set lo up
    $x sysctl -q -w net.ipv6.conf.all.disable_ipv6=1 >/dev/null 2>&1
    $x sysctl -q -w net.ipv6.conf.default.disable_ipv6=1 >/dev/null 2>&1
    $x sysctl -q -w net.ipv4.ip_local_port_range="1024 65000" >/dev/null 2>&1
    $x ip tuntap add dev "$2" mode tap || return 1
    $x ip addr add "$3" dev "$2" || return 1
    $x ip link set "$2" up
    if [ "$3" = 198.18.0.1/24 ]; then # the probes' extra client addresses (connection rate)
        for i in $(seq 100 119); do $x ip addr add "198.18.0.$i/24" dev "$2" || return 1; done
    fi
}
if [ $NET = 1 ]; then
    for t in $TARGETS; do
        mkns "$(ns_of "$t")" wbt0 198.18.0.1/24 || { log "namespace $t"; exit 1; }
    done
    mkns "$(ns_of linuxsrv)" wbt1 198.18.0.2/24 || exit 1
    mkns "$(ns_of cli)" wbt0 198.18.0.1/24 || exit 1
fi

child_of() { # the command timeout(1) runs (ip netns exec execs it)
    local i c
    for i in $(seq 1 50); do
        c=$(pgrep -P "$1" | head -n 1)
        [ -n "$c" ] && { echo "$c"; return 0; }
        sleep 0.05
    done
    return 1
}

start_target() { # TARGET CELL
    local t=$1 ns p1 p2 c1 c2 i lg=$DIR/srv-$1-$2.log
    ns=$(ns_of "$t")
    case "$t" in
    wisp-lwipstyle)
        timeout -k $KILL_AFTER $MAXT ip netns exec "$ns" "$LWIPW" wbt0 198.18.0.2/24 >"$lg" 2>&1 &
        p1=$!
        c1=$(child_of $p1) || return 1
        TPID[$t]=$p1
        CPUPIDS[$t]=$c1
        ;;
    wisp-*)
        local api=${t#wisp-}
        [ "$api" = sock ] && api=socket
        # shellcheck disable=SC2086
        timeout -k $KILL_AFTER $MAXT ip netns exec "$ns" "$NODE" --tap wbt0 --addr 198.18.0.2/24 --quiet --api "$api" \
            ${BENCH_NODE_ARGS:-} >"$lg" 2>&1 &
        p1=$!
        c1=$(child_of $p1) || return 1
        TPID[$t]=$p1
        CPUPIDS[$t]=$c1
        ;;
    lwip-netconn)
        timeout -k $KILL_AFTER $MAXT ip netns exec "$ns" "$LWIP" wbt0 198.18.0.2/24 >"$lg" 2>&1 &
        p1=$!
        c1=$(child_of $p1) || return 1
        TPID[$t]=$p1
        CPUPIDS[$t]=$c1
        ;;
    linux)
        # SO_RCVBUF 64 KB (a ~64 KB window, as lwIP's TCP_WND): with Linux's
        # autotuned multi-MB window the sender overruns the relay's TAP queue
        # (thousands of TAP drops and retransmissions per cell in a first run)
        WPROBE_RCVBUF=65536 timeout -k $KILL_AFTER $MAXT ip netns exec "$(ns_of linuxsrv)" "$PROBE" serve 198.18.0.2 $MAXT \
            >"$lg" 2>&1 &
        p1=$!
        timeout -k $KILL_AFTER $MAXT ip netns exec "$ns" "$RELAY" wbt0 "/var/run/netns/$(ns_of linuxsrv)" wbt1 $MAXT \
            >"$DIR/relay-$2.log" 2>&1 &
        p2=$!
        c1=$(child_of $p1) || return 1
        c2=$(child_of $p2) || return 1
        TPID[$t]="$p1 $p2"
        CPUPIDS[$t]="$c1 $c2"
        ;;
    esac
    for i in $(seq 1 100); do
        timeout 3 ip netns exec "$ns" ping -c 1 -W 1 198.18.0.2 >/dev/null 2>&1 && return 0
        sleep 0.1
    done
    log "$t did not answer ping (log $lg)"
    return 1
}

stop_target() { # TARGET CELL
    local t=$1 p rc=0
    for p in ${TPID[$t]}; do kill -TERM "$p" 2>/dev/null; done
    for p in ${TPID[$t]}; do wait "$p" || rc=$?; done
    unset "TPID[$t]"
    case "$t" in
    wisp-lwipstyle) ;;
    wisp-*)
        grep -q '^pools: all back at baseline' "$DIR/srv-$t-$2.log" || { log "$t: pools not at baseline ($2)"; rc=1; }
        sed -n '/^counters:/,/^interfaces:/p' "$DIR/srv-$t-$2.log" | grep -E '^  ' >"$DIR/counters-$2-$t.txt"
        ;;
    esac
    if [ "$rc" -ne 0 ]; then
        log "$t stopped with status $rc ($2)"
        if [ "$t" = lwip-netconn ] || [ "$t" = wisp-lwipstyle ]; then
            # lwIP's shutdown (threads joined with 5 s timeouts) is not a measurement: noted, not a failure
            echo "$2 $t: lwip-style stopped with status $rc: $(grep -v '^lwip-style: \(tap\|stopping\|ready\|stack\|lwIP\)' "$DIR/srv-$t-$2.log" | tr '\n' ' ')" >>"$DIR/stopnotes.txt"
        else
            FAILS=$((FAILS + 1))
        fi
    fi
}

# run EXP TARGET CELLKEY REP CMD...: one bounded probe run in the target's namespace
run() {
    local exp=$1 t=$2 key=$3 rep=$4 out nst=$2
    shift 4
    [ "$t" = lwip-raw ] && nst=lwip-netconn
    [ "$t" = wisp-lwipstyle-raw ] && nst=wisp-lwipstyle
    out=$(timeout -k 5 $((SECS + 40)) ip netns exec "$(ns_of "$nst")" "$@" 2>>"$DIR/probe.err")
    if [ $? -ne 0 ] || [ -z "$out" ]; then
        log "run failed: $exp $t $key rep $rep"
        out="fail=1"
        FAILS=$((FAILS + 1))
    fi
    printf '%s\t%s\t%s\t%s\t%s\n' "$exp" "$t" "$key" "$rep" "$out" >>"$RES"
}

START_UTC=$(date -u '+%Y-%m-%d %H:%M UTC')
{
    echo "start=$START_UTC"
    echo "mode=$MODE secs=$SECS reps=$REPS"
    echo "cpu=$(lscpu | sed -n 's/^Model name: *//p') ($(nproc) CPUs, $(lscpu | sed -n 's/^Hypervisor vendor: *//p'))"
    echo "kernel=$(uname -r)"
    echo "load_start=$(cut -d' ' -f1-3 /proc/loadavg)"
    echo "commit=$(git -C "$ROOT" rev-parse --short HEAD 2>/dev/null)"
    echo "lwip=$(dpkg-query -W -f '${Version}' liblwip-dev 2>/dev/null)"
} >"$DIR/meta.txt"

# ---- experiment 1: receive goodput by write size ----
if [[ " $EXPS " == *" 1 "* ]]; then
    for nag in NAGLE NODELAY; do
        for size in 64 128 256 512 1024 1460 rand; do
            cell="e1-$nag-$size"
            log "experiment 1: $nag $size"
            for t in $TARGETS; do start_target "$t" "$cell" || exit 1; done
            for rep in $(seq 1 "$REPS"); do
                for t in $TARGETS; do
                    # shellcheck disable=SC2086
                    run e1 "$t" "$nag-$size" "$rep" "$PROBE" send 198.18.0.2 9 "$size" "$nag" "$SECS" ${CPUPIDS[$t]}
                done
            done
            for t in $TARGETS; do stop_target "$t" "$cell"; done
        done
    done
fi

# ---- experiment 2: socket vs netconn, wisp sending ----
if [[ " $EXPS " == *" 2 "* ]]; then
    ns=$(ns_of cli)
    MB=$((SECS * 12))
    timeout -k $KILL_AFTER $MAXT ip netns exec "$ns" "$PROBE" serve 198.18.0.1 $MAXT >"$DIR/cli-serve.log" 2>&1 &
    TPID[cli]=$!
    sleep 0.5
    for size in 128 512 1024 1460; do
        log "experiment 2: write size $size"
        for rep in $(seq 1 "$REPS"); do
            for api in netconn socket raw; do
                lg=$DIR/e2-$api-$size-$rep.log
                /usr/bin/time -f "cpu_user=%U cpu_sys=%S" -o "$DIR/time.out" \
                    timeout -k 5 120 ip netns exec "$ns" "$NODE" --tap wbt0 --addr 198.18.0.2/24 --quiet --api "$api" \
                    --connect 198.18.0.1:9 --send $((MB * 1000000)) --write-size "$size" >"$lg" 2>&1
                rc=$?
                g=$(sed -nE 's/^wisp-node: client sent .* goodput ([0-9.]+) MB\/s.*/\1/p' "$lg")
                if [ $rc -ne 0 ] || [ -z "$g" ] || ! grep -q '^pools: all back at baseline$' "$lg"; then
                    log "experiment 2: $api $size failed (log $lg)"
                    FAILS=$((FAILS + 1))
                    out="fail=1"
                else
                    out="mbyte_s=$g mb=$MB $(cat "$DIR/time.out")"
                fi
                printf '%s\t%s\t%s\t%s\t%s\n' e2 "wisp-$api" "$size" "$rep" "$out" >>"$RES"
            done
        done
    done
    for rep in $(seq 1 "$REPS"); do
        for api in netconn socket raw; do
            lg=$DIR/e2c-$api-$rep.log
            timeout -k 5 120 ip netns exec "$ns" "$NODE" --tap wbt0 --addr 198.18.0.2/24 --quiet --api "$api" \
                --connect 198.18.0.1:9 --connects $((SECS * 100)) >"$lg" 2>&1
            ct=$(sed -nE 's/^wisp-node: client [0-9]+ connects to .* mean ([0-9.]+) us, median ([0-9.]+) us.*/mean_us=\1 median_us=\2/p' "$lg")
            [ -n "$ct" ] || { ct="fail=1"; FAILS=$((FAILS + 1)); log "experiment 2: connects $api failed ($lg)"; }
            printf '%s\t%s\t%s\t%s\t%s\n' e2c "wisp-$api" connects "$rep" "$ct" >>"$RES"
        done
    done
    kill -TERM "${TPID[cli]}" 2>/dev/null
    wait "${TPID[cli]}" 2>/dev/null
    unset "TPID[cli]"
fi

# ---- experiment 3: connections/s and ping-pong latency ----
if [[ " $EXPS " == *" 3 "* ]]; then
    log "experiment 3: connections/s, ping-pong"
    for t in $TARGETS; do start_target "$t" e3 || exit 1; done
    for rep in $(seq 1 "$REPS"); do
        for t in $TARGETS; do
            # shellcheck disable=SC2086
            run e3c "$t" connrate "$rep" "$PROBE" connrate 198.18.0.2 9 "$SECS" 20 ${CPUPIDS[$t]}
            run e3p "$t" pingpong "$rep" "$PROBE" pingpong 198.18.0.2 7 64 "$SECS"
        done
        run e3p lwip-raw pingpong "$rep" "$PROBE" pingpong 198.18.0.2 7007 64 "$SECS"
        run e3p wisp-lwipstyle-raw pingpong "$rep" "$PROBE" pingpong 198.18.0.2 7007 64 "$SECS"
    done 2>&1
    for t in $TARGETS; do stop_target "$t" e3; done
fi

# ---- experiment 4: in-process figures ----
if [[ " $EXPS " == *" 4 "* ]]; then
    IPB=$BUILD-opt/wisp-inproc-bench
    MB=$((SECS * 100)) # 300 MB per run at the default 3 s
    log "experiment 4: in-process bulk TCP, $MB MB per run"
    for rep in $(seq 1 "$REPS"); do
        for mode in copy nocopy; do
            for ws in 16384 1460; do
                flag=""
                [ "$mode" = nocopy ] && flag=--nocopy
                out=$(timeout -k 5 600 "$IPB" --mb "$MB" --wsize "$ws" --reps 1 $flag 2>>"$DIR/probe.err" | tail -n 1)
                [ -n "$out" ] || { out="fail=1"; FAILS=$((FAILS + 1)); log "experiment 4: $mode $ws failed"; }
                printf '%s\t%s\t%s\t%s\t%s\n' e4 "$mode" "$ws" "$rep" "$out" >>"$RES"
            done
        done
        # the generated test stream, for comparison (the harness dominates)
        out=$(timeout -k 5 600 "$IPB" --mb $((MB / 10 + 1)) --wsize 16384 --reps 1 --pattern stream 2>>"$DIR/probe.err" | tail -n 1)
        [ -n "$out" ] || out="fail=1"
        printf '%s\t%s\t%s\t%s\t%s\n' e4 stream 16384 "$rep" "$out" >>"$RES"
    done
    if command -v valgrind >/dev/null 2>&1 && command -v callgrind_annotate >/dev/null 2>&1; then
        log "experiment 4: callgrind breakdown (64 MB, copied 16 KB writes)"
        timeout -k 5 900 valgrind --tool=callgrind --callgrind-out-file="$DIR/e4.callgrind" \
            "$IPB" --mb 64 --wsize 16384 --reps 1 >/dev/null 2>"$DIR/e4-valgrind.log" &&
            (cd "$ROOT" && callgrind_annotate --threshold=100 --auto=no "$DIR/e4.callgrind" &&
                callgrind_annotate --inclusive=yes --threshold=100 --auto=no "$DIR/e4.callgrind" >"$DIR/e4-callgrind-incl.txt") >"$DIR/e4-callgrind.txt" 2>/dev/null ||
            log "experiment 4: callgrind failed ($DIR/e4-valgrind.log)"
    fi
    if [ -x "$BUILD-opt/wisp-chksum-bench" ]; then
        timeout -k 5 300 "$BUILD-opt/wisp-chksum-bench" >"$DIR/e4-chksum.md" 2>>"$DIR/probe.err" ||
            log "experiment 4: wisp-chksum-bench failed"
    fi
fi

# ---- experiment 5: seed 001, transmit response time ----
if [[ " $EXPS " == *" 5 "* ]]; then
    log "experiment 5: transmit response time, optimizations on / off"
    for rep in $(seq 1 "$REPS"); do
        for mbit in 100 1000; do
            # configuration: build, flags (all on; all off; one off at a time)
            for conf in "on opt" "off ref --msg --noprio" "nochk ref" "nosum refsum" "nocpy refcpy" "nolock opt --msg" \
                "noprio opt --noprio"; do
                set -- $conf
                name=$1 b=$2
                shift 2
                timeout -k 5 300 "$BUILD-$b/wisp-prio-bench" --n 1000 --loads 10,30,50,70,90 --mbit $mbit \
                    --seed "$rep" "$@" >"$DIR/e5-$name-$mbit-$rep.out" 2>>"$DIR/probe.err" ||
                    { log "experiment 5: $name $mbit failed"; FAILS=$((FAILS + 1)); }
                while read -r line; do
                    l=${line#load=}
                    l=${l%% *}
                    printf '%s\t%s\t%s\t%s\t%s\n' e5 "$name-$mbit" "$l" "$rep" "$line" >>"$RES"
                done <"$DIR/e5-$name-$mbit-$rep.out"
            done
        done
    done
fi

# ---- experiment 6: seed 000, 50 and 100 concurrent connections ----
if [[ " $EXPS " == *" 6 "* ]]; then
    NODE_SAVED=$NODE
    NODE=$BUILD-conns/wisp-node
    for k in 50 100; do
        for t in wisp-sock wisp-netconn; do
            cell="e6-$k-$t"
            log "experiment 6: $k concurrent connections, $t"
            start_target "$t" "$cell" || exit 1
            rss0=$(sed -n 's/^VmRSS:[[:space:]]*\([0-9]*\).*/\1/p' "/proc/${CPUPIDS[$t]}/status")
            for rep in $(seq 1 "$REPS"); do
                # shellcheck disable=SC2086
                run e6 "$t" "$k" "$rep" "$PROBE" msend 198.18.0.2 9 1460 "$k" "$SECS" ${CPUPIDS[$t]}
                sed -i "\$s/\$/ rss0_kb=${rss0:-0}/" "$RES"
            done
            stop_target "$t" "$cell"
            # pool high-water marks of the run (wisp-node's report at exit)
            sed -n '/^pools:  /,/^[^ ]/p' "$DIR/srv-$t-$cell.log" | awk 'NF == 5 && $1 != "pools:" {print $1, $3, $5}' \
                >"$DIR/pools-$cell.txt"
            grep -E '^netconn layer:' "$DIR/srv-$t-$cell.log" >>"$DIR/pools-$cell.txt"
        done
    done
    NODE=$NODE_SAVED
fi

echo "end=$(date -u '+%Y-%m-%d %H:%M UTC')" >>"$DIR/meta.txt"
echo "load_end=$(cut -d' ' -f1-3 /proc/loadavg)" >>"$DIR/meta.txt"
echo "failures=$FAILS" >>"$DIR/meta.txt"
echo "lwip_stop_notes=$(wc -l <"$DIR/stopnotes.txt" 2>/dev/null || echo 0)" >>"$DIR/meta.txt"
echo "exps=$EXPS" >>"$DIR/meta.txt"
python3 "$ROOT/bench/report.py" "$DIR" "$OUT" || exit 1
log "report: $OUT/README.md ($FAILS failed runs)"
[ "$FAILS" -eq 0 ]
