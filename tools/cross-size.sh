#!/usr/bin/env bash
# Cross-build the wisp core for Cortex-M4 (arm-none-eabi-gcc -mcpu=cortex-m4
# -mthumb -Os, default options of include/wisp/opt.h) and print its size:
# text/data/bss of the core library (sum over its objects, per object with
# -v), and of a linked image of the "raw" size probe (tools/size/probe_raw.c,
# the one tools/size-report.sh measures: DHCP, DNS, UDP echo, TCP echo server
# and client on the raw API) whose bss holds one struct wisp_stack with the
# default pools; and the RAM one TCP
# connection takes on the same target: its core PCB, its netconn and its
# socket slot (OS objects laid out by the no-OS port, ports/none/sys_none.h;
# an RTOS port lays out its own).
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
out=${1:-$top/build/cross}
verbose=${VERBOSE:-0}
command -v arm-none-eabi-gcc >/dev/null || { echo "arm-none-eabi-gcc missing (apt-get install gcc-arm-none-eabi libnewlib-arm-none-eabi)"; exit 1; }
cmake -S "$top" -B "$out" -DCMAKE_TOOLCHAIN_FILE="$top/cmake/arm-none-eabi.cmake" -DWISP_HOST=OFF -DWISP_WERROR=ON \
      -DCMAKE_BUILD_TYPE=MinSizeRel >/dev/null
cmake --build "$out" -j2 >/dev/null
lib="$out/libwisp.a"
echo "== wisp core library, Cortex-M4 -Os (arm-none-eabi-size) =="
arm-none-eabi-size -t "$lib" | awk -v v="$verbose" '
  NR==1 {print "  " $0; next}
  /\(TOTALS\)/ {print "  " $0; next}
  v=="1" {print "  " $0}'
flags="-mcpu=cortex-m4 -mthumb -Os -std=c99 -ffunction-sections -fdata-sections -Wall -Wextra -Werror"
probe=$top/tools/size/probe_raw.c
arm-none-eabi-gcc $flags -I"$top/include" "$probe" "$lib" \
    -Wl,--gc-sections --specs=nosys.specs --specs=nano.specs -o "$out/probe_raw.elf"
echo "== raw-API image (tools/size/probe_raw.c: one stack, DHCP, DNS, UDP echo, TCP echo + client;"
echo "   linked, --gc-sections, newlib-nano) =="
arm-none-eabi-size "$out/probe_raw.elf" | sed 's/^/  /'
# The same probe from a core built without TCP (-DWISP_TCP=0; the probe
# then resolves and sends UDP instead): what a UDP-only firmware pays.
cmake -S "$top" -B "$out-notcp" -DCMAKE_TOOLCHAIN_FILE="$top/cmake/arm-none-eabi.cmake" -DWISP_HOST=OFF -DWISP_WERROR=ON \
      -DCMAKE_BUILD_TYPE=MinSizeRel -DCMAKE_C_FLAGS="-mcpu=cortex-m4 -mthumb -ffunction-sections -fdata-sections -DWISP_TCP=0" >/dev/null
cmake --build "$out-notcp" -j2 >/dev/null
arm-none-eabi-gcc $flags -DWISP_TCP=0 -I"$top/include" "$probe" "$out-notcp/libwisp.a" \
    -Wl,--gc-sections --specs=nosys.specs --specs=nano.specs -o "$out/probe_raw_notcp.elf"
echo "== the same image, core built with WISP_TCP=0 (UDP-only firmware) =="
arm-none-eabi-size "$out/probe_raw_notcp.elf" | sed 's/^/  /'
cat > "$out/sizeof.c" <<'C'
#include "wisp/wisp.h"
char wisp_sizeof_stack[sizeof(struct wisp_stack)];
char wisp_sizeof_netif[sizeof(struct wisp_netif)];
char wisp_sizeof_udp_pcb[sizeof(struct wisp_udp_pcb)];
C
arm-none-eabi-gcc $flags -I"$top/include" -c "$out/sizeof.c" -o "$out/sizeof.o"
echo "== RAM of the instance structs with default options =="
arm-none-eabi-nm -S --size-sort "$out/sizeof.o" | while read -r _ size _ name; do
  printf '  %-22s %6d bytes\n' "$name" "$((16#$size))"
done
cat > "$out/sizeof_conn.c" <<'C'
#include "wisp/netconn.h"
#include "wisp/sockets.h"
struct os_objects {
    wisp_sys_mbox_t mbox;
    wisp_sys_sem_t sem;
};
char wisp_sizeof_tcp_pcb[sizeof(struct wisp_tcp_pcb)];
char wisp_sizeof_netconn[sizeof(struct wisp_netconn)];
char wisp_sizeof_netconn_os[sizeof(struct os_objects)];
char wisp_sizeof_socket_slot[sizeof(struct wisp_sock)];
C
arm-none-eabi-gcc $flags -DWISP_SYS_PORT_HEADER='"sys_none.h"' -I"$top/include" -I"$top/ports/none" \
    -c "$out/sizeof_conn.c" -o "$out/sizeof_conn.o"
echo "== RAM per TCP connection (default options; netconn OS objects as ports/none/sys_none.h) =="
declare -A sz
while read -r _ size _ name; do
  sz[$name]=$((16#$size))
done < <(arm-none-eabi-nm -S "$out/sizeof_conn.o")
pcb=${sz[wisp_sizeof_tcp_pcb]} nc=${sz[wisp_sizeof_netconn]} os=${sz[wisp_sizeof_netconn_os]} sock=${sz[wisp_sizeof_socket_slot]}
printf '  %-36s %6d bytes\n' "core TCP PCB (struct wisp_tcp_pcb)" "$pcb"
printf '  %-36s %6d bytes (OS objects: %d)\n' "netconn (struct wisp_netconn)" "$nc" "$os"
printf '  %-36s %6d bytes\n' "socket slot (struct wisp_sock)" "$sock"
printf '  %-36s %6d bytes\n' "total, netconn connection" "$((pcb + nc))"
printf '  %-36s %6d bytes\n' "total, socket connection" "$((pcb + nc + sock))"
