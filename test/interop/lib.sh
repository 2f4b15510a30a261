# shellcheck shell=bash
# lib.sh -- shared helpers of wisp's interop tests (sourced, not run).
#
# Each test runs wisp-node on a tap interface inside its own network
# namespace (wisp-it-<pid>-<test>) and talks to it from the Linux kernel in
# that namespace. Nothing is configured in the root namespace; only
# addresses of 198.18.0.0/15 (RFC 2544 benchmarking) are used. Every command
# runs under timeout(1); every loop is bounded. The EXIT trap stops the node
# (only the PID we started) and deletes the namespace.
#
# Exit codes: 0 pass, 1 fail, 77 skipped (not root, or no `ip netns`).
#
# Usage in a test:
#   source "$(dirname "$0")/lib.sh"
#   it_init "$@"            # checks, namespace, tap, addresses
#   it_start_node --pcap "$IT_DIR/cap.pcap"
#   ... it_ns <command> ...
#   it_stop_node            # SIGTERM, exit 0, "pools: all back at baseline"
#   it_pcap_clean "$IT_DIR/cap.pcap"
#   it_pass

set -u
set -o pipefail

IT_NAME=$(basename "$0" .sh)
IT_NODE=""
IT_NS=""
IT_DIR=""
IT_NODE_PID=""
IT_NODE_LOG=""
IT_NODE_RC=""
IT_TAP=wtap0
IT_LINUX_IP=198.18.0.1
IT_NODE_IP=198.18.0.2
IT_PREFIX=24
IT_NODE_MAX_S=600          # wisp-node is killed by timeout(1) after this
IT_NODE_STOP_S=15          # it_stop_node: longest wait for exit after SIGTERM
IT_KEEP=${WISP_IT_KEEP:-0} # 1: keep the work directory even on success

it_log() { printf '[%s] %s\n' "$IT_NAME" "$*"; }

it_fail() {
    printf '[%s] FAIL: %s\n' "$IT_NAME" "$*" >&2
    exit 1
}

it_skip() {
    printf '[%s] SKIP: %s\n' "$IT_NAME" "$*"
    exit 77
}

# Run a command inside the test's namespace, bounded by timeout(1).
# it_ns_t SECONDS cmd...   (it_ns uses 30 s)
it_ns_t() {
    local t=$1
    shift
    timeout -k 5 "$t" ip netns exec "$IT_NS" "$@"
}
it_ns() { it_ns_t 30 "$@"; }

it_cleanup() {
    local rc=$?
    local p
    trap - EXIT INT TERM
    # Linux-side helpers started with it_bg_start (only our own PIDs).
    # SIGTERM to timeout(1) goes on to its process group and arms its
    # own SIGKILL 5 s later (-k 5): wait longer than that (10 s), so the
    # helper is gone before timeout(1) itself could be killed.
    for p in ${IT_BG_PIDS:-}; do
        if kill -TERM "$p" 2>/dev/null; then
            for _ in $(seq 1 100); do
                kill -0 "$p" 2>/dev/null || break
                sleep 0.1
            done
            kill -KILL "$p" 2>/dev/null
            wait "$p" 2>/dev/null
        fi
    done
    if [ -n "$IT_NODE_PID" ]; then
        it_stop_timed "$IT_NODE_PID" 5 || true
        IT_NODE_PID=""
    fi
    if [ -n "$IT_NS" ]; then
        timeout -k 5 20 ip netns del "$IT_NS" 2>/dev/null || echo "[$IT_NAME] warning: could not delete namespace $IT_NS" >&2
    fi
    if [ "$rc" -ne 0 ] && [ "$rc" -ne 77 ] && [ -n "$IT_NODE_LOG" ] && [ -f "$IT_NODE_LOG" ]; then
        echo "----- wisp-node log (last 120 lines) -----" >&2
        tail -n 120 "$IT_NODE_LOG" >&2
        echo "----- end of log; work directory kept: $IT_DIR -----" >&2
    elif [ -n "$IT_DIR" ] && [ "$IT_KEEP" != 1 ]; then
        rm -rf "$IT_DIR"
    fi
    exit "$rc"
}

# it_init "$@": argument check, root/netns check, namespace with the tap.
it_init() {
    local t
    IT_NODE=${1:-}
    [ -n "$IT_NODE" ] || it_fail "usage: $0 PATH-TO-wisp-node"
    [ -x "$IT_NODE" ] || it_fail "wisp-node not executable: $IT_NODE"
    IT_NODE=$(readlink -f "$IT_NODE")
    [ "$(id -u)" = 0 ] || it_skip "needs root (network namespaces and a tap device)"
    command -v ip >/dev/null 2>&1 || it_skip "ip (iproute2) not installed"
    for t in timeout tshark ping sed awk grep seq; do
        command -v "$t" >/dev/null 2>&1 || it_fail "required tool missing: $t"
    done

    IT_DIR=$(mktemp -d "/tmp/wisp-it-$IT_NAME.XXXXXX") || it_fail "mktemp"
    trap it_cleanup EXIT
    trap 'exit 130' INT TERM

    IT_NS="wisp-it-$$-$IT_NAME"
    if ! timeout 10 ip netns add "$IT_NS" 2>"$IT_DIR/netns.err"; then
        local why
        why=$(cat "$IT_DIR/netns.err")
        IT_NS=""
        it_skip "ip netns unavailable: $why"
    fi
    it_ns ip link set lo up || it_fail "lo up"
    # IPv6 off in our namespace only: no router solicitations / MLD on the
    # tap, so the capture holds exactly the test's traffic.
    it_ns sysctl -q -w net.ipv6.conf.all.disable_ipv6=1 >/dev/null 2>&1 || true
    it_ns sysctl -q -w net.ipv6.conf.default.disable_ipv6=1 >/dev/null 2>&1 || true
    # A persistent tap, configured before the node attaches (no race).
    it_ns ip tuntap add dev "$IT_TAP" mode tap || it_fail "cannot create tap $IT_TAP in $IT_NS"
    it_ns ip addr add "$IT_LINUX_IP/$IT_PREFIX" dev "$IT_TAP" || it_fail "address on $IT_TAP"
    it_ns ip link set "$IT_TAP" up || it_fail "$IT_TAP up"
    it_log "namespace $IT_NS, Linux $IT_LINUX_IP/$IT_PREFIX on $IT_TAP, node $IT_NODE_IP"
}

# it_start_node [extra wisp-node options]: start and wait for "ready".
it_start_node() {
    IT_NODE_LOG="$IT_DIR/node.log"
    timeout -k 5 "$IT_NODE_MAX_S" ip netns exec "$IT_NS" \
        "$IT_NODE" --tap "$IT_TAP" --addr "$IT_NODE_IP/$IT_PREFIX" "$@" >"$IT_NODE_LOG" 2>&1 &
    IT_NODE_PID=$!
    for _ in $(seq 1 100); do
        if grep -q '^wisp-node: ready' "$IT_NODE_LOG" 2>/dev/null; then
            it_log "wisp-node running (pid $IT_NODE_PID): $*"
            return 0
        fi
        if ! kill -0 "$IT_NODE_PID" 2>/dev/null; then
            wait "$IT_NODE_PID"
            IT_NODE_RC=$?
            IT_NODE_PID=""
            it_fail "wisp-node exited during start-up (status $IT_NODE_RC)"
        fi
        sleep 0.1
    done
    it_fail "wisp-node not ready after 10 s"
}

# Fail when the node is no longer running (crash, sanitizer abort).
it_node_alive() {
    [ -n "$IT_NODE_PID" ] || it_fail "wisp-node not started"
    if ! kill -0 "$IT_NODE_PID" 2>/dev/null; then
        wait "$IT_NODE_PID"
        IT_NODE_RC=$?
        IT_NODE_PID=""
        it_fail "wisp-node died (status $IT_NODE_RC) ${1:+while $1}"
    fi
}

# it_timed_child PID: the PID of the command that timeout(1) (PID) runs --
# its only child (`ip netns exec` execs the command) -- or nothing.
it_timed_child() {
    local f st ppid pid
    for f in /proc/[0-9]*/stat; do
        st=$(cat "$f" 2>/dev/null) || continue
        read -r _ ppid _ <<<"${st##*) }"
        if [ "$ppid" = "$1" ]; then
            pid=${f#/proc/}
            echo "${pid%/stat}"
            return 0
        fi
    done
    return 1
}

# it_stop_timed PID SECONDS: stop a command started under
# `timeout -k 5 ...` (PID is timeout's) by SIGTERM to the command's own PID.
# Not to timeout(1): that would forward the signal and SIGKILL the command
# 5 s later (-k 5), whatever SECONDS says -- an ASan build that needs more
# than 5 s to shut down then "fails" with status 137. Waits up to SECONDS
# for the exit, then SIGKILLs the command (its own PID) and reaps timeout.
# IT_STOP_RC gets the exit status (timeout(1) passes the command's on);
# returns 0, or 1 when the command had to be killed. Not in a subshell:
# only this shell can wait for PID.
IT_STOP_RC=""
it_stop_timed() {
    local tpid=$1 t=$2 cpid i
    cpid=$(it_timed_child "$tpid")
    if [ -n "$cpid" ]; then
        kill -TERM "$cpid" 2>/dev/null
    else
        kill -TERM "$tpid" 2>/dev/null # command not started or gone: timeout itself
    fi
    for i in $(seq 1 $((t * 10))); do
        kill -0 "$tpid" 2>/dev/null || break
        sleep 0.1
    done
    if kill -0 "$tpid" 2>/dev/null; then
        [ -n "$cpid" ] && kill -KILL "$cpid" 2>/dev/null
        for i in $(seq 1 50); do # timeout(1) exits right after its child
            kill -0 "$tpid" 2>/dev/null || break
            sleep 0.1
        done
        kill -KILL "$tpid" 2>/dev/null
        wait "$tpid" 2>/dev/null
        IT_STOP_RC=137
        return 1
    fi
    wait "$tpid"
    IT_STOP_RC=$?
    return 0
}

# SIGTERM to the node's own PID, wait (bounded), require exit 0 and the
# clean-pools line.
it_stop_node() {
    it_node_alive "before SIGTERM"
    if ! it_stop_timed "$IT_NODE_PID" "$IT_NODE_STOP_S"; then
        IT_NODE_PID=""
        it_fail "wisp-node did not stop within $IT_NODE_STOP_S s of SIGTERM"
    fi
    IT_NODE_RC=$IT_STOP_RC
    IT_NODE_PID=""
    [ "$IT_NODE_RC" -eq 0 ] || it_fail "wisp-node exit status $IT_NODE_RC (want 0)"
    grep -q '^pools: all back at baseline$' "$IT_NODE_LOG" ||
        it_fail "no 'pools: all back at baseline' line: $(grep '^pools:' "$IT_NODE_LOG" | tail -n 1)"
    it_log "wisp-node stopped cleanly, pools back at baseline"
}

# Value of a stack counter from the node's exit report ("  name   value").
it_counter() {
    awk -v n="$1" '$1 == n && NF == 2 { v = $2 } END { print (v == "" ? 0 : v) }' "$IT_NODE_LOG"
}

# it_pcap_clean FILE [tshark options]: tshark decodes FILE without malformed
# packets, bad checksums (IPv4, ICMP, UDP validated) or expert warnings or
# errors. Pass e.g. `-d udp.port==7,data` for ports that carry random bytes
# (else a heuristic dissector may take them for RTCP and complain).
it_pcap_clean() {
    local f=$1 out
    shift
    [ -s "$f" ] || it_fail "capture $f missing or empty"
    if ! out=$(timeout -k 5 120 tshark -n -r "$f" "$@" \
        -o ip.check_checksum:TRUE -o udp.check_checksum:TRUE -o ip.defragment:TRUE \
        -Y '_ws.malformed || _ws.expert.severity >= warning || ip.checksum.status == 0 || icmp.checksum.status == 0 || udp.checksum.status == 0' \
        2>"$IT_DIR/tshark.err"); then
        it_fail "tshark cannot read $f: $(grep -v 'Running as user' "$IT_DIR/tshark.err" | head -n 5)"
    fi
    if [ -n "$out" ]; then
        echo "$out" | head -n 40 >&2
        it_fail "capture has malformed packets, bad checksums or expert warnings ($(echo "$out" | wc -l) frames, first shown above)"
    fi
    it_log "capture decodes clean ($(timeout 120 tshark -n -r "$f" "$@" 2>/dev/null | wc -l) frames)"
}

# Number of frames of FILE matching a display filter.
it_pcap_count() {
    timeout -k 5 120 tshark -n -r "$1" -o ip.defragment:TRUE -Y "$2" -T fields -e frame.number 2>/dev/null | wc -l
}

it_pass() {
    it_log "PASS"
    exit 0
}

# ------------------------------------------------------------------ TCP
# Helpers of the TCP tests (test_tcp_*.sh): the Linux-side peer is
# tcppeer.py (python3, stdlib only) next to this file.

IT_BG_PIDS=""           # background helpers, stopped by it_cleanup
IT_BG_PID=""
IT_PY=""
IT_TCPPEER="$(dirname "${BASH_SOURCE[0]}")/tcppeer.py"

# it_python: set IT_PY to a python3 interpreter (fail when there is none).
it_python() {
    local p
    for p in /usr/bin/python3 "$(command -v python3 2>/dev/null)"; do
        if [ -n "$p" ] && [ -x "$p" ]; then
            IT_PY=$p
            break
        fi
    done
    [ -n "$IT_PY" ] || it_fail "python3 not installed (Debian: python3-minimal)"
    [ -r "$IT_TCPPEER" ] || it_fail "missing $IT_TCPPEER"
}

# it_peer SECONDS MODE ARGS...: run tcppeer.py in the namespace (bounded);
# its output is logged line by line and kept in IT_PEER_OUT; returns its
# exit status.
IT_PEER_OUT=""
it_peer() {
    local t=$1 rc line
    shift
    IT_PEER_OUT=$(it_ns_t "$t" "$IT_PY" "$IT_TCPPEER" "$@" 2>&1)
    rc=$?
    while IFS= read -r line; do it_log "peer: $line"; done <<<"$IT_PEER_OUT"
    if [ "$rc" -eq 124 ] || [ "$rc" -eq 137 ]; then
        it_log "peer: killed by timeout after $t s"
    fi
    return "$rc"
}

# it_bg_start LOG SECONDS cmd...: run cmd in the namespace in the
# background (bounded by timeout(1)); its PID goes to IT_BG_PID and to the
# list it_cleanup stops. SECONDS must cover every bounded wait of the test
# while the helper is needed (e.g. a server: its start-up wait + the
# client's timeout + 5 s kill delay + it_bg_wait), so that a slow but
# passing run never loses its helper.
it_bg_start() {
    local log=$1 t=$2
    shift 2
    timeout -k 5 "$t" ip netns exec "$IT_NS" "$@" >"$log" 2>&1 &
    IT_BG_PID=$!
    IT_BG_PIDS="$IT_BG_PIDS $IT_BG_PID"
}

# it_wait_line FILE REGEX SECONDS: wait until a line of FILE matches.
it_wait_line() {
    local i n=$(($3 * 10))
    for i in $(seq 1 "$n"); do
        grep -qE "$2" "$1" 2>/dev/null && return 0
        sleep 0.1
    done
    return 1
}

# it_bg_wait PID SECONDS: wait (bounded) for a background helper; returns
# its exit status, 124 when it is still running after SECONDS.
it_bg_wait() {
    local pid=$1 i n=$(($2 * 10))
    for i in $(seq 1 "$n"); do
        kill -0 "$pid" 2>/dev/null || break
        sleep 0.1
    done
    kill -0 "$pid" 2>/dev/null && return 124
    wait "$pid"
}

# it_run_node_client LOG SECONDS [wisp-node options]: run wisp-node in
# client mode (--connect ...) to its end (bounded); IT_NODE_RC gets its
# exit status. Fails unless it exits 0 with "pools: all back at baseline".
it_run_node_client() {
    local log=$1 t=$2 i n
    shift 2
    IT_NODE_LOG=$log
    timeout -k 5 "$t" ip netns exec "$IT_NS" \
        "$IT_NODE" --tap "$IT_TAP" --addr "$IT_NODE_IP/$IT_PREFIX" "$@" >"$IT_NODE_LOG" 2>&1 &
    IT_NODE_PID=$!
    n=$(((t + 10) * 10))
    for i in $(seq 1 "$n"); do
        kill -0 "$IT_NODE_PID" 2>/dev/null || break
        sleep 0.1
    done
    if kill -0 "$IT_NODE_PID" 2>/dev/null; then
        it_fail "wisp-node (client) still running after $t s"
    fi
    wait "$IT_NODE_PID"
    IT_NODE_RC=$?
    IT_NODE_PID=""
    grep -E '^wisp-node: client' "$IT_NODE_LOG" | while IFS= read -r line; do it_log "node: $line"; done
    [ "$IT_NODE_RC" -eq 0 ] || it_fail "wisp-node (client) exit status $IT_NODE_RC (want 0)"
    grep -q '^pools: all back at baseline$' "$IT_NODE_LOG" ||
        it_fail "no 'pools: all back at baseline' line: $(grep '^pools:' "$IT_NODE_LOG" | tail -n 1)"
}

# Field N (1-based, whitespace-separated) of the node's exit-report line for
# a TCP service ("  tcp/9 discard connections 1 active 0 ... rx N tx M"):
# it_tcp_svc "tcp/9" KEY prints the value after KEY.
it_tcp_svc() {
    awk -v s="$1" -v k="$2" '$1 == s { for (i = 3; i < NF; i++) if ($i == k) v = $(i + 1) }
        END { print (v == "" ? "?" : v) }' "$IT_NODE_LOG"
}

# it_pcap_tcp_check FILE WANT_RST [tshark options]: one tshark pass over
# FILE with IPv4/TCP/UDP/ICMP checksum validation. Fails on malformed
# frames, bad checksums, or a number of RST segments other than WANT_RST
# ("any": not checked). Logs the TCP analysis flags (retransmissions,
# duplicate ACKs, ... informational on a clean link) and sets
# IT_TCP_STATS to "name=count ..." for the caller.
IT_TCP_STATS=""
it_pcap_tcp_check() {
    local f=$1 want_rst=$2 out row names i v bad=0 rst
    shift 2
    [ -s "$f" ] || it_fail "capture $f missing or empty"
    # A TCP checksum field of 0xffff where 0x0000 is computed is the other
    # one's-complement zero: every receiver accepts it (the sum verifies),
    # tshark calls it bad (RFC 1624 says -0 should not be sent). Linux sends
    # it now and then; it is counted apart (chksum_minus0_*), not failed.
    local m0='tcp.checksum == 0xffff && tcp.checksum_calculated == 0x0000'
    names="frames tcp malformed bad_ip_chksum bad_tcp_chksum bad_udp_icmp_chksum rst retransmission
        fast_retransmission spurious_retransmission duplicate_ack lost_segment ack_lost_segment out_of_order
        zero_window window_full zero_window_probe keep_alive chksum_minus0_linux chksum_minus0_wisp"
    if ! out=$(timeout -k 5 300 tshark -n -q -r "$f" "$@" \
        -o ip.check_checksum:TRUE -o tcp.check_checksum:TRUE -o udp.check_checksum:TRUE \
        -z "io,stat,0,frame,tcp,_ws.malformed,ip.checksum.status==0,tcp.checksum.status==0 && !($m0),udp.checksum.status==0 || icmp.checksum.status==0,tcp.flags.reset==1,tcp.analysis.retransmission,tcp.analysis.fast_retransmission,tcp.analysis.spurious_retransmission,tcp.analysis.duplicate_ack,tcp.analysis.lost_segment,tcp.analysis.ack_lost_segment,tcp.analysis.out_of_order,tcp.analysis.zero_window,tcp.analysis.window_full,tcp.analysis.zero_window_probe,tcp.analysis.keep_alive,$m0 && ip.src == $IT_LINUX_IP,$m0 && ip.src == $IT_NODE_IP" \
        2>"$IT_DIR/tshark.err"); then
        it_fail "tshark cannot read $f: $(grep -v 'Running as user' "$IT_DIR/tshark.err" | head -n 5)"
    fi
    row=$(echo "$out" | grep '<>' | tail -n 1)
    [ -n "$row" ] || it_fail "tshark io,stat output not understood: $(echo "$out" | tail -n 5)"
    IT_TCP_STATS=""
    i=0
    for n in $names; do
        i=$((i + 1))
        v=$(echo "$row" | awk -F'|' -v k="$i" '{ x = $(2 * k + 1); gsub(/ /, "", x); print x }')
        IT_TCP_STATS="$IT_TCP_STATS $n=${v:-?}"
    done
    IT_TCP_STATS=${IT_TCP_STATS# }
    it_log "capture $(basename "$f"): $IT_TCP_STATS"
    for n in malformed bad_ip_chksum bad_tcp_chksum bad_udp_icmp_chksum; do
        v=$(it_tcp_stat "$n")
        if [ "$v" != 0 ]; then
            bad=1
            it_log "capture: $n=$v"
        fi
    done
    if [ "$bad" -ne 0 ]; then
        timeout -k 5 120 tshark -n -r "$f" "$@" -o ip.check_checksum:TRUE -o tcp.check_checksum:TRUE \
            -o udp.check_checksum:TRUE \
            -Y "_ws.malformed || ip.checksum.status == 0 || (tcp.checksum.status == 0 && !($m0)) || udp.checksum.status == 0 || icmp.checksum.status == 0" \
            2>/dev/null | head -n 20 >&2
        it_fail "capture $f has malformed frames or bad checksums (first ones above)"
    fi
    rst=$(it_tcp_stat rst)
    if [ "$want_rst" != any ] && [ "$rst" != "$want_rst" ]; then
        timeout -k 5 120 tshark -n -r "$f" "$@" -Y 'tcp.flags.reset == 1' 2>/dev/null | head -n 10 >&2
        it_fail "capture $f holds $rst RST segments, want $want_rst (first ones above)"
    fi
}

# Value of one IT_TCP_STATS entry.
it_tcp_stat() {
    local kv
    for kv in $IT_TCP_STATS; do
        if [ "${kv%%=*}" = "$1" ]; then
            echo "${kv#*=}"
            return
        fi
    done
    echo "?"
}
