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
    local n
    n=$(grep -c '^loop:' "$IT_NODE_LOG")
    fw_cmd stat
    for _ in $(seq 1 100); do
        [ "$(grep -c '^loop:' "$IT_NODE_LOG")" -gt "$n" ] && break
        sleep 0.1
    done
    [ "$(grep -c '^loop:' "$IT_NODE_LOG")" -gt "$n" ] || it_fail "no answer to 'stat'"
    read -r FW_T FW_P FW_S <<<"$(tr -d '\r' <"$IT_NODE_LOG" | grep '^loop:' | tail -n 1 | awk '{ print $3, $5, $7 }')"
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
