#!/usr/bin/env bash
# Cross-build the wisp core for Cortex-M4 (arm-none-eabi-gcc -mcpu=cortex-m4
# -mthumb -Os, default options of include/wisp/opt.h) and print its size:
# text/data/bss of the core library (sum over its objects, per object with
# -v), and of a minimal linked image (ports/cortex-m/size_probe.c) whose bss
# holds one struct wisp_stack with the default pools.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
out=${1:-$top/build/cross}
verbose=${VERBOSE:-0}
command -v arm-none-eabi-gcc >/dev/null || { echo "arm-none-eabi-gcc missing (apt-get install gcc-arm-none-eabi libnewlib-arm-none-eabi)"; exit 1; }
cmake -S "$top" -B "$out" -DCMAKE_TOOLCHAIN_FILE="$top/cmake/arm-none-eabi.cmake" -DWISP_HOST=OFF \
      -DCMAKE_BUILD_TYPE=MinSizeRel >/dev/null
cmake --build "$out" -j2 >/dev/null
lib="$out/libwisp.a"
echo "== wisp core library, Cortex-M4 -Os (arm-none-eabi-size) =="
arm-none-eabi-size -t "$lib" | awk -v v="$verbose" '
  NR==1 {print "  " $0; next}
  /\(TOTALS\)/ {print "  " $0; next}
  v=="1" {print "  " $0}'
flags="-mcpu=cortex-m4 -mthumb -Os -std=c99 -ffunction-sections -fdata-sections -Wall -Wextra -Werror"
arm-none-eabi-gcc $flags -I"$top/include" "$top/ports/cortex-m/size_probe.c" "$lib" \
    -Wl,--gc-sections --specs=nosys.specs --specs=nano.specs -o "$out/size_probe.elf"
echo "== minimal image: one stack + UDP echo (linked, --gc-sections, newlib-nano) =="
arm-none-eabi-size "$out/size_probe.elf" | sed 's/^/  /'
# The same image from a core built without TCP (-DWISP_TCP=0): what a
# UDP-only firmware pays.
cmake -S "$top" -B "$out-notcp" -DCMAKE_TOOLCHAIN_FILE="$top/cmake/arm-none-eabi.cmake" -DWISP_HOST=OFF \
      -DCMAKE_BUILD_TYPE=MinSizeRel -DCMAKE_C_FLAGS="-mcpu=cortex-m4 -mthumb -ffunction-sections -fdata-sections -DWISP_TCP=0" >/dev/null
cmake --build "$out-notcp" -j2 >/dev/null
arm-none-eabi-gcc $flags -DWISP_TCP=0 -I"$top/include" "$top/ports/cortex-m/size_probe.c" "$out-notcp/libwisp.a" \
    -Wl,--gc-sections --specs=nosys.specs --specs=nano.specs -o "$out/size_probe_notcp.elf"
echo "== the same image, core built with WISP_TCP=0 (UDP-only firmware) =="
arm-none-eabi-size "$out/size_probe_notcp.elf" | sed 's/^/  /'
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
