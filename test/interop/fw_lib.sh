# shellcheck shell=bash
# fw_lib.sh -- helpers of the firmware tests (test_fw_*.sh), sourced after
# lib.sh: build the mps2-an385 images (tools/fw-build.sh), run one in QEMU
# (qemu-system-arm -M mps2-an385) under timeout(1) with its UART0 on a
# FIFO (commands in) and a log (console out), semihosting for the exit
# status, and a pcap of every frame (-object filter-dump).
#
# The QEMU process is recorded like wisp-node (IT_NODE_PID = the PID of
# its timeout(1), IT_NODE_LOG = the console log), so lib.sh's it_cleanup
# stops it (by PID) and shows the console on failure. Pitfalls of
# MPS2-AN385.md followed: QEMU always under timeout and killed by PID,
# -semihosting-config enable=on (else no exit), no -icount sleep=off.

FW_ELF=""
FW_IMAGE=${FW_IMAGE:-bare}  # bare (app_bare.c) or freertos (app_freertos.c)
FW_UART=""
FW_BUILD_S=300              # the firmware build (about 30 s on a quiet machine)
FW_MAX_S=${FW_MAX_S:-300}   # QEMU is killed by timeout(1) after this (a test
                            # sets it to the sum of its step bounds)
FW_EXIT_S=30                # fw_quit: longest wait for the exit (the firmware waits 8 s at most)
FW_RC=""

# fw_build WISP-NODE-PATH: build the images next to the host build (the
# directory of wisp-node); skip when the cross compiler or QEMU is missing.
fw_build() {
    local bdir top out
    command -v qemu-system-arm >/dev/null 2>&1 || it_skip "qemu-system-arm not installed"
    command -v arm-none-eabi-gcc >/dev/null 2>&1 || it_skip "arm-none-eabi-gcc not installed"
    bdir=$(dirname "$(readlink -f "$1")")
    top=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
    if ! out=$(timeout -k 5 "$FW_BUILD_S" bash "$top/tools/fw-build.sh" "$bdir/fw-mps2" 2>&1); then
        echo "$out" | tail -n 20 >&2
        it_fail "firmware build failed (tools/fw-build.sh)"
    fi
    FW_ELF="$bdir/fw-mps2/wisp-mps2-$FW_IMAGE.elf"
    if [ "$FW_IMAGE" = freertos ] && [ ! -s "$FW_ELF" ]; then
        it_skip "no FreeRTOS image: $(echo "$out" | grep -m1 'FreeRTOS' || echo 'kernel missing')"
    fi
    [ -s "$FW_ELF" ] || it_fail "no firmware image $FW_ELF"
    it_log "firmware: $(echo "$out" | grep "wisp-mps2-$FW_IMAGE.elf" | awk '{print "text " $1 " data " $2 " bss " $3}') ($FW_ELF)"
}

# fw_start PCAP PREFIX-CMD... -- NETDEV-ARGS...: start QEMU (PREFIX-CMD, e.g.
# `ip netns exec NS`, may be empty) with the netdev n0 given by NETDEV-ARGS.
fw_start() {
    local pcap=$1 pre=()
    shift
    while [ $# -gt 0 ] && [ "$1" != "--" ]; do
        pre+=("$1")
        shift
    done
    shift
    FW_UART="$IT_DIR/uart.in"
    IT_NODE_LOG="$IT_DIR/console.log"
    rm -f "$FW_UART"
    mkfifo "$FW_UART" || it_fail "mkfifo"
    # Keep the FIFO open read-write in this shell: QEMU never sees EOF on
    # its console and our writes never block.
    exec 7<>"$FW_UART"
    timeout -k 5 "$FW_MAX_S" "${pre[@]}" qemu-system-arm -M mps2-an385 -nographic -monitor none \
        -semihosting-config enable=on,target=native -kernel "$FW_ELF" \
        -netdev "$@" -net nic,netdev=n0,model=lan9118 \
        -object filter-dump,id=f0,netdev=n0,file="$pcap" <"$FW_UART" >"$IT_NODE_LOG" 2>&1 &
    IT_NODE_PID=$!
    it_log "QEMU started (timeout pid $IT_NODE_PID): -netdev $*"
}

# fw_cmd LINE: one console command.
fw_cmd() {
    printf '%s\r' "$1" >&7
}

# fw_wait_ready SECONDS: wait for the DHCP lease; FW_ADDR gets the address.
FW_ADDR=""
fw_wait_ready() {
    it_wait_line "$IT_NODE_LOG" '^fw: ready' "$1" || {
        it_node_alive "waiting for DHCP"
        it_fail "firmware not ready (no DHCP lease) after $1 s"
    }
    FW_ADDR=$(tr -d '\r' <"$IT_NODE_LOG" | sed -nE 's/^fw: dhcp bound ([0-9.]+)\/.*/\1/p' | head -n 1)
    [ -n "$FW_ADDR" ] || it_fail "no 'dhcp bound' line"
    it_log "firmware: $(tr -d '\r' <"$IT_NODE_LOG" | grep -m1 '^fw: dhcp bound')"
}

# fw_quit: "quit" on the console, wait (bounded) for QEMU to exit; require
# status 0 (semihosting) and "pools: all back at baseline"; log the pool
# high-water marks.
fw_quit() {
    local i
    fw_cmd quit
    for i in $(seq 1 $((FW_EXIT_S * 10))); do
        kill -0 "$IT_NODE_PID" 2>/dev/null || break
        sleep 0.1
    done
    if kill -0 "$IT_NODE_PID" 2>/dev/null; then
        it_fail "firmware did not exit within $FW_EXIT_S s of quit"
    fi
    wait "$IT_NODE_PID"
    FW_RC=$?
    IT_NODE_PID=""
    exec 7>&-
    # the final report: pool high-water marks, driver counters, the verdict
    tr -d '\r' <"$IT_NODE_LOG" | sed -n '/^fw: report/,$p' |
        grep -E '^pool [a-z_]+ |^lan9118:|^pools: (in use|all|LEAK)' | while IFS= read -r l; do it_log "fw: $l"; done
    [ "$FW_RC" -eq 0 ] || it_fail "firmware exit status $FW_RC (want 0, through semihosting)"
    tr -d '\r' <"$IT_NODE_LOG" | grep -q '^pools: all back at baseline$' || it_fail "pools not back at baseline"
    it_log "firmware exited with status 0, every pool back at baseline"
}

# fw_drv KEY: a counter of the driver's last "lan9118:" line.
fw_drv() {
    tr -d '\r' <"$IT_NODE_LOG" | grep '^lan9118:' | tail -n 1 |
        awk -v k="$1" '{ for (i = 2; i < NF; i++) if ($i == k) v = $(i + 1) } END { print (v == "" ? 0 : v) }'
}

# fw_stat PATTERN: "stat" on the console, then wait (10 s at most) for a new
# line matching PATTERN (grep); FW_STAT_LINE = the last such line, without
# its CR. The driver's "lan9118:" line comes with it (fw_drv, fw_drv_seen).
FW_STAT_LINE=""
fw_stat() {
    local n
    n=$(grep -c "$1" "$IT_NODE_LOG")
    fw_cmd stat
    for _ in $(seq 1 100); do
        [ "$(grep -c "$1" "$IT_NODE_LOG")" -gt "$n" ] && break
        sleep 0.1
    done
    [ "$(grep -c "$1" "$IT_NODE_LOG")" -gt "$n" ] || it_fail "no answer to 'stat'"
    FW_STAT_LINE=$(tr -d '\r' <"$IT_NODE_LOG" | grep "$1" | tail -n 1)
}

# fw_drv_seen: frames the driver has read (rx + errors + nomem), from its
# last "lan9118:" line.
fw_drv_seen() {
    echo $(( $(fw_drv rx_frames) + $(fw_drv rx_errors) + $(fw_drv rx_nomem) ))
}

# fw_ping ADDR COUNT SIZE: the firmware pings ADDR (console "ping", apps/lib/
# ping.c); fails unless every request is answered.
fw_ping() {
    local n line
    n=$(grep -c '^fw: ping done' "$IT_NODE_LOG")
    fw_cmd "ping $1 $2 $3"
    for _ in $(seq 1 $(( ($2 * 2 + 10) * 10 ))); do
        [ "$(grep -c '^fw: ping done' "$IT_NODE_LOG")" -gt "$n" ] && break
        sleep 0.1
    done
    line=$(tr -d '\r' <"$IT_NODE_LOG" | grep '^fw: ping done' | sed -n "$((n + 1))p")
    [ -n "$line" ] || it_fail "firmware ping $1 ($2 x $3 bytes) did not finish"
    echo "$line" | grep -q "sent $2 received $2 errors 0 " || it_fail "firmware ping $1 -s $3: $line"
    it_log "firmware -> $1, $3 data bytes: ${line#fw: ping done }"
}

# fw_idle SECONDS: the firmware idles for SECONDS (nothing sent to it);
# its main loop must pass fewer than 300 times a second (SysTick wakes it
# 100 times a second; a busy-polling loop passes 100000s of times) and
# sleep in WFI on nearly every pass. Counted by the firmware itself
# ("loop:" line of "stat"), so the host's load does not matter. Also
# measures QEMU's share of a host CPU over the time (/proc; a figure only:
# it depends on the host). Sets FW_IDLE_RATE and FW_IDLE_SHARE (per cent).
# (Not in a $(...): it_fail must end the test, not a subshell.)
FW_T="" FW_P="" FW_S="" FW_IDLE_RATE="" FW_IDLE_SHARE=""
fw_loop_stat() { # sets FW_T FW_P FW_S: uptime_ms passes sleeps, from a fresh "stat"
    fw_stat '^loop:'
    read -r FW_T FW_P FW_S <<<"$(echo "$FW_STAT_LINE" | awk '{ print $3, $5, $7 }')"
}
fw_idle() {
    local secs=$1 pid tck c0 c1 t0 p0 s0
    pid=$(it_timed_child "$IT_NODE_PID") || it_fail "QEMU process not found"
    tck=$(getconf CLK_TCK)
    fw_loop_stat
    t0=$FW_T p0=$FW_P s0=$FW_S
    c0=$(awk '{ print $14 + $15 }' "/proc/$pid/stat")
    sleep "$secs"
    c1=$(awk '{ print $14 + $15 }' "/proc/$pid/stat")
    fw_loop_stat
    [ "$FW_T" -gt "$t0" ] || it_fail "firmware uptime did not advance"
    FW_IDLE_RATE=$(( (FW_P - p0) * 1000 / (FW_T - t0) ))
    FW_IDLE_SHARE=$(( (c1 - c0) * 100 / (tck * secs) ))
    [ "$FW_IDLE_RATE" -lt 300 ] || it_fail "idle firmware passed its main loop $FW_IDLE_RATE times a second (busy-polling?)"
    [ $(( (FW_S - s0) * 10 )) -ge $(( (FW_P - p0) * 9 )) ] ||
        it_fail "idle firmware slept in WFI on only $((FW_S - s0)) of $((FW_P - p0)) passes"
}

# ------------------------------------------------------------------------
# The TAP tests (test_fw_tap.sh, test_fw_freertos.sh): the firmware on a
# TAP in the test's namespace, against the Linux kernel and Debian tools.

# fw_tap_boot WISP-NODE-PATH: the tools the TAP tests need, the firmware
# build (fw_build), dnsmasq on the TAP (198.18.0.100-150, lives <= FW_MAX_S),
# QEMU on the TAP (pcap FW_PCAP), the lease (40 s at most), checked against
# the range and dnsmasq's log. Sets FW_T0 (the test's start), FW_PCAP,
# FW_DLOG (dnsmasq's log), FW_ADDR, FW_MAC (the firmware's) and FW_BOOT_S
# (QEMU start to lease).
FW_T0="" FW_PCAP="" FW_DLOG="" FW_MAC="" FW_BOOT_S=""
fw_tap_boot() {
    local dnsmasq=/usr/sbin/dnsmasq t_q
    FW_T0=$(date +%s)
    [ -x "$dnsmasq" ] || it_fail "dnsmasq not installed (Debian: dnsmasq-base)"
    command -v iperf >/dev/null 2>&1 || it_fail "iperf (2) not installed (Debian package iperf)"
    command -v curl >/dev/null 2>&1 || it_fail "curl not installed"
    fw_build "$1"
    FW_PCAP="$IT_DIR/fw.pcap"
    FW_DLOG="$IT_DIR/dnsmasq.log"
    it_bg_start "$FW_DLOG" "$FW_MAX_S" "$dnsmasq" --no-daemon --conf-file=/dev/null --user=root \
        --no-resolv --no-hosts --port=0 --interface="$IT_TAP" --bind-interfaces --pid-file="$IT_DIR/dnsmasq.pid" \
        --dhcp-range=198.18.0.100,198.18.0.150,255.255.255.0,10m \
        --dhcp-leasefile="$IT_DIR/dnsmasq.leases" --dhcp-option=option:router,"$IT_LINUX_IP" --log-dhcp
    it_wait_line "$FW_DLOG" 'DHCP, IP range' 10 || it_fail "dnsmasq did not start: $(tail -n 5 "$FW_DLOG")"
    t_q=$(date +%s)
    fw_start "$FW_PCAP" ip netns exec "$IT_NS" -- tap,id=n0,ifname="$IT_TAP",script=no,downscript=no
    fw_wait_ready 40
    case "$FW_ADDR" in
    198.18.0.1[0-4][0-9] | 198.18.0.150) ;;
    *) it_fail "leased address $FW_ADDR outside the dnsmasq range" ;;
    esac
    grep -q "DHCPACK(.*) $FW_ADDR" "$FW_DLOG" || it_fail "dnsmasq log shows no DHCPACK for $FW_ADDR"
    FW_MAC=$(tr -d '\r' <"$IT_NODE_LOG" | sed -nE 's/^fw: lan9118 mac ([0-9a-f:]+) .*/\1/p' | head -n 1)
    FW_BOOT_S=$(( $(date +%s) - t_q ))
}

# fw_tap_pings N-PLAIN N-FRAG: Linux pings the firmware (5 x 56 bytes, then
# 3 x 3000 bytes: fragmented), then the firmware pings Linux N-PLAIN times
# with 56 bytes and N-FRAG times with 3000; every request answered.
fw_tap_pings() {
    local out rtt
    out=$(it_ns_t 20 ping -n -c 5 -i 0.2 -W 3 "$FW_ADDR" 2>&1) || it_fail "ping: $(echo "$out" | tail -n 2)"
    echo "$out" | grep -q ' 5 received' || it_fail "ping: $(echo "$out" | grep received)"
    rtt=$(echo "$out" | sed -nE 's/^rtt .* = ([0-9.]+)\/([0-9.]+)\/.*/\2/p')
    out=$(it_ns_t 20 ping -n -c 3 -i 0.3 -s 3000 -W 3 "$FW_ADDR" 2>&1) || it_fail "ping -s 3000: $(echo "$out" | tail -n 2)"
    echo "$out" | grep -q ' 3 received' || it_fail "ping -s 3000: $(echo "$out" | grep received)"
    it_log "ping: 5/5, avg rtt $rtt ms; ping -s 3000 (fragmented): 3/3"
    fw_ping "$IT_LINUX_IP" "$1" 56
    fw_ping "$IT_LINUX_IP" "$2" 3000
}

# fw_tcp_step SECONDS WHAT ARGS...: one tcppeer.py run against the firmware
# (it_peer, bounded by SECONDS); fails the test when it fails; logs its time.
fw_tcp_step() {
    local t=$1 what=$2 s e
    shift 2
    s=$(date +%s.%N)
    it_peer "$t" "$@" || it_fail "$what failed"
    e=$(date +%s.%N)
    it_log "FIGURES $what: $(echo "$s $e" | awk '{printf "%.1f s", $2 - $1}')"
}

# fw_tap_http: curl GET / (200, not empty) and GET /big.bin (1 MiB, SHA-256
# of the generated reference), 40 s at most each.
fw_tap_http() {
    local curl=(curl --noproxy '*' -s --max-time 30) code out size t_total
    code=$(it_ns_t 40 "${curl[@]}" -o "$IT_DIR/index.html" -w '%{http_code}' "http://$FW_ADDR/") || it_fail "curl /"
    [ "$code" = 200 ] && [ -s "$IT_DIR/index.html" ] || it_fail "GET /: $code"
    "$IT_PY" - "$IT_DIR/big.want" <<'PY' || it_fail "cannot generate the reference file"
import sys
words = bytearray()
for k in range(262144):
    words += (((k * 0x9E3779B1) + 0x7F4A7C15) & 0xFFFFFFFF).to_bytes(4, "big")
open(sys.argv[1], "wb").write(words)
PY
    out=$(it_ns_t 40 "${curl[@]}" -o "$IT_DIR/big.got" -w '%{http_code} %{size_download} %{time_total}' \
        "http://$FW_ADDR/big.bin") || it_fail "curl /big.bin"
    read -r code size t_total <<<"$out"
    [ "$code" = 200 ] && [ "$size" = 1048576 ] || it_fail "/big.bin: status $code, $size bytes"
    [ "$(sha256sum <"$IT_DIR/big.want")" = "$(sha256sum <"$IT_DIR/big.got")" ] || it_fail "/big.bin content differs"
    it_log "HTTP: GET / 200; GET /big.bin 1048576 bytes, SHA-256 ok; FIGURES /big.bin ${t_total} s"
}

# fw_tap_iperf SECONDS: iperf 2 TCP from Linux for SECONDS (-t), then -r -t 2
# (the firmware connects back and must end its stream cleanly).
fw_tap_iperf() {
    local rev up
    it_ns_t 20 iperf -c "$FW_ADDR" -t "$1" -f b >"$IT_DIR/iperf1.log" 2>&1 || it_fail "iperf -c: $(tail -n 3 "$IT_DIR/iperf1.log")"
    it_wait_line "$IT_NODE_LOG" '^fw: iperf server tcp from ' 10 || it_fail "no iperf result on the firmware"
    it_ns_t 30 iperf -c "$FW_ADDR" -r -t 2 -f b >"$IT_DIR/iperf2.log" 2>&1 || it_fail "iperf -c -r: $(tail -n 3 "$IT_DIR/iperf2.log")"
    it_wait_line "$IT_NODE_LOG" '^fw: iperf reverse tcp to ' 15 || it_fail "no reverse iperf stream"
    rev=$(tr -d '\r' <"$IT_NODE_LOG" | sed -nE 's/^fw: iperf reverse tcp to [0-9.]+: ([0-9]+) bytes.*/\1/p' | head -n 1)
    tr -d '\r' <"$IT_NODE_LOG" | grep -q '^fw: iperf reverse .*(ended)' && it_fail "reverse stream did not end cleanly"
    [ "${rev:-0}" -gt 0 ] || it_fail "reverse stream sent nothing"
    up=$(sed -nE 's/.* ([0-9]+) bits\/sec.*/\1/p' "$IT_DIR/iperf1.log" | tail -n 1)
    it_log "iperf: FIGURES Linux -> firmware $(awk -v b="${up:-0}" 'BEGIN{printf "%.1f", b/1e6}') Mbit/s; firmware -> Linux (-r) $rev bytes"
}

# fw_stall_phase STAT-FN EVERY SECONDS WHAT ARGS...: fw_tcp_step SECONDS WHAT
# ARGS... while, in the background, the console asks for a 200 ms RX stall
# every EVERY seconds (100 times at most); STAT-FN (a function that gets a
# fresh "stat" answer, e.g. fw_loop_stat) runs before and after. Sets
# FW_PHASE_SENT (frames to the firmware during the phase, from the pcap),
# FW_PHASE_DROPS (of those, the ones its driver did not read: dropped by the
# RX FIFO) and FW_STALLS (stalls the firmware acknowledged so far).
FW_PHASE_SENT="" FW_PHASE_DROPS="" FW_STALLS=""
fw_stall_phase() {
    local stat=$1 every=$2 seen0 sent0 pid
    shift 2
    "$stat"
    seen0=$(fw_drv_seen)
    sent0=$(fw_pcap_to_fw)
    (
        for _ in $(seq 1 100); do
            printf 'stall 200\r' >&7
            sleep "$every"
        done
    ) &
    pid=$!
    IT_BG_PIDS="$IT_BG_PIDS $pid"
    fw_tcp_step "$@"
    kill "$pid" 2>/dev/null
    wait "$pid" 2>/dev/null
    sleep 0.5 # the last stall ends
    "$stat"
    FW_PHASE_SENT=$(( $(fw_pcap_to_fw) - sent0 ))
    FW_PHASE_DROPS=$(( FW_PHASE_SENT - ($(fw_drv_seen) - seen0) ))
    FW_STALLS=$(tr -d '\r' <"$IT_NODE_LOG" | grep -c '^fw: stall ')
    it_log "FIGURES stall phase: $FW_STALLS RX stalls of 200 ms, $FW_PHASE_SENT frames to the firmware, $FW_PHASE_DROPS dropped by the RX FIFO; every byte echoed (hash above)"
}

# fw_pcap_to_fw: frames to the firmware so far, counted in the pcap.
fw_pcap_to_fw() {
    it_pcap_count "$FW_PCAP" "eth.src != $FW_MAC"
}

# fw_tap_end: after fw_quit: the frames to the firmware (pcap) against the
# frames its driver read, dnsmasq saw the DHCPRELEASE (5 s at most), the
# pcap decodes clean; figures; the test passes.
fw_tap_end() {
    local sent seen
    sent=$(fw_pcap_to_fw)
    seen=$(fw_drv_seen)
    it_log "FIGURES whole run: frames to the firmware $sent (pcap), read by its driver $seen, $((sent - seen)) dropped by the RX FIFO; RX FIFO high-water $(fw_drv rx_fifo_high) bytes"
    it_wait_line "$FW_DLOG" "DHCPRELEASE\(.*\) $FW_ADDR" 5 || it_fail "dnsmasq saw no DHCPRELEASE"
    it_pcap_tcp_check "$FW_PCAP" any
    it_log "pcap: $IT_TCP_STATS"
    it_log "FIGURES boot to lease ${FW_BOOT_S} s, wall time $(( $(date +%s) - FW_T0 )) s"
    it_pass
}
