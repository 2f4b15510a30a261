#!/usr/bin/env bash
# Cross-build wisp's FreeRTOS port for Cortex-M3 (arm-none-eabi-gcc
# -mcpu=cortex-m3 -mthumb -Os, the kernel's GCC/ARM_CM3 port, heap_4,
# ports/freertos/example/FreeRTOSConfig.h, ports/freertos/wisp_opts_freertos.h)
# and print sizes: the port's object, the kernel's objects, and a linked
# image of test/freertos/rtos_probe_cm3.c (the application of the "full"
# size probe, tools/size/probe_full.c, in a FreeRTOS task: stack thread,
# DHCP, netconn echo server, socket server with select, socket client with
# getaddrinfo; --gc-sections, newlib-nano, no startup code). Also the RAM
# one TCP connection takes with this port.
#
# Usage: tools/freertos-cm3.sh [OUTDIR]   (FREERTOS_KERNEL_PATH or the
# default ../shared/third_party/FreeRTOS-Kernel; exit 77 when absent)
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
out=${1:-$top/build/freertos-cm3}
kern=${FREERTOS_KERNEL_PATH:-$top/../shared/third_party/FreeRTOS-Kernel}
if [ ! -f "$kern/tasks.c" ] || [ ! -f "$kern/portable/GCC/ARM_CM3/port.c" ]; then
  echo "no FreeRTOS kernel with the GCC/ARM_CM3 port at $kern (set FREERTOS_KERNEL_PATH): skipped"
  exit 77
fi
command -v arm-none-eabi-gcc >/dev/null || { echo "arm-none-eabi-gcc missing: skipped"; exit 77; }
mkdir -p "$out"/obj
arch="-mcpu=cortex-m3 -mthumb -Os -ffunction-sections -fdata-sections"
inc=(-I"$top/include" -I"$top/ports/freertos" -I"$top/ports/freertos/example"
     -I"$kern/include" -I"$kern/portable/GCC/ARM_CM3")
wisp_flags="$arch -std=c99 -Wall -Wextra -Werror -DWISP_OPTS_HEADER=\"wisp_opts_freertos.h\""
objs=()
cc() { # cc FLAGS SRC OBJ
  # shellcheck disable=SC2086
  arm-none-eabi-gcc $1 "${inc[@]}" -c "$2" -o "$3"
  objs+=("$3")
}
for f in tasks queue list; do cc "$arch" "$kern/$f.c" "$out/obj/k_$f.o"; done
cc "$arch" "$kern/portable/GCC/ARM_CM3/port.c" "$out/obj/k_port.o"
cc "$arch" "$kern/portable/MemMang/heap_4.c" "$out/obj/k_heap_4.o"
kobjs=("${objs[@]}")
objs=()
cc "$wisp_flags" "$top/ports/freertos/sys_freertos.c" "$out/obj/sys_freertos.o"
for f in "$top"/src/core/*.c "$top"/src/netif/*.c "$top"/src/api/*.c; do
  cc "$wisp_flags" "$f" "$out/obj/w_$(basename "$f" .c).o"
done
wobjs=("${objs[@]}")
rm -f "$out/libwisp_rtos.a" "$out/libfreertos.a"
arm-none-eabi-ar rcs "$out/libwisp_rtos.a" "${wobjs[@]}"
arm-none-eabi-ar rcs "$out/libfreertos.a" "${kobjs[@]}"
echo "== ports/freertos/sys_freertos.c, Cortex-M3 -Os =="
arm-none-eabi-size "$out/obj/sys_freertos.o" | sed 's/^/  /'
echo "== FreeRTOS kernel (tasks, queue, list, ARM_CM3 port, heap_4; example FreeRTOSConfig.h) =="
arm-none-eabi-size -t "${kobjs[@]}" | awk 'NR==1 || /TOTALS/' | sed 's/^/  /'
echo "== wisp core + netif + OS layer/APIs (src/core, src/netif, src/api) with the FreeRTOS port =="
arm-none-eabi-size -t "$out/libwisp_rtos.a" | awk 'NR==1 || /TOTALS/' | sed 's/^/  /'
# shellcheck disable=SC2086
arm-none-eabi-gcc $wisp_flags -DPROBE_FULL_NO_MAIN "${inc[@]}" "$top/test/freertos/rtos_probe_cm3.c" \
    "$top/tools/size/probe_full.c" "$out/libwisp_rtos.a" "$out/libfreertos.a" -Wl,--gc-sections --specs=nosys.specs --specs=nano.specs \
    -o "$out/rtos_probe.elf"
echo "== linked image: tools/size/probe_full.c in a task (stack thread, DHCP, netconn echo, sockets with"
echo "   select, getaddrinfo; --gc-sections, newlib-nano;"
echo "   bss includes configTOTAL_HEAP_SIZE of heap_4 and one struct wisp_stack) =="
arm-none-eabi-size "$out/rtos_probe.elf" | sed 's/^/  /'
cat > "$out/sizeof_conn.c" <<'C'
#include "wisp/netconn.h"
#include "wisp/sockets.h"
#include "FreeRTOS.h"
struct os_objects {
    wisp_sys_mbox_t mbox;
    wisp_sys_sem_t snd, op, idle;
    wisp_sys_mutex_t wr;
};
char wisp_sizeof_tcp_pcb[sizeof(struct wisp_tcp_pcb)];
char wisp_sizeof_netconn[sizeof(struct wisp_netconn)];
char wisp_sizeof_netconn_os[sizeof(struct os_objects)];
char wisp_sizeof_socket_slot[sizeof(struct wisp_sock)];
char wisp_sizeof_kernel_queue[sizeof(StaticQueue_t)];
char wisp_netconn_recvmbox_size[WISP_NETCONN_RECVMBOX_SIZE];
char wisp_netconn_count[WISP_NETCONN_COUNT];
C
# shellcheck disable=SC2086
arm-none-eabi-gcc $wisp_flags -DWISP_PRIVATE_ACCESS=1 "${inc[@]}" -c "$out/sizeof_conn.c" -o "$out/sizeof_conn.o"
declare -A sz
while read -r _ size _ name; do
  sz[$name]=$((16#$size))
done < <(arm-none-eabi-nm -S "$out/sizeof_conn.o")
echo "== RAM per TCP connection with the FreeRTOS port (default options) =="
printf '  %-44s %6d bytes\n' "core TCP PCB (struct wisp_tcp_pcb)" "${sz[wisp_sizeof_tcp_pcb]}"
printf '  %-44s %6d bytes (its OS handles: %d)\n' "netconn (struct wisp_netconn)" "${sz[wisp_sizeof_netconn]}" \
       "${sz[wisp_sizeof_netconn_os]}"
printf '  %-44s %6d bytes\n' "socket slot (struct wisp_sock)" "${sz[wisp_sizeof_socket_slot]}"
q=${sz[wisp_sizeof_kernel_queue]}
printf '  %-44s %6d bytes + storage + 8 (heap_4 header)\n' "one kernel queue/semaphore (StaticQueue_t)" "$q"
# heap_4 blocks: 8-byte header, sizes rounded up to 8
blk() { echo $(( ($1 + 8 + 7) / 8 * 8 )); }
slot=$(( 4 * $(blk "$q") + $(blk $((q + 4 * ${sz[wisp_netconn_recvmbox_size]}))) ))
printf '  %-44s %6d bytes (mailbox of %d + 3 semaphores + 1 mutex)\n' "FreeRTOS heap per netconn slot" "$slot" \
       "${sz[wisp_netconn_recvmbox_size]}"
printf '  %-44s %6d bytes (all WISP_NETCONN_COUNT=%d slots, at wisp_netconn_api_init)\n' \
       "FreeRTOS heap of the netconn layer" "$((slot * ${sz[wisp_netconn_count]}))" "${sz[wisp_netconn_count]}"
