#!/usr/bin/env bash
# Build the mps2-an385 firmware images (ports/mps2, Cortex-M3, arm-none-eabi-gcc
# with newlib-nano) in their own CMake build directory and print their sizes.
# Images: wisp-mps2-bare.elf (app_bare.c) and, when a FreeRTOS kernel is
# found (FREERTOS_KERNEL_PATH, default ../shared/third_party/FreeRTOS-Kernel),
# wisp-mps2-freertos.elf (app_freertos.c).
# Usage: tools/fw-build.sh [BUILD-DIR]   (default build/fw-mps2)
# Exit 77 when the cross compiler is missing (tests skip on that).
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
out=${1:-$top/build/fw-mps2}
if ! command -v arm-none-eabi-gcc >/dev/null; then
    echo "fw-build: arm-none-eabi-gcc missing (apt-get install gcc-arm-none-eabi libnewlib-arm-none-eabi)"
    exit 77
fi
cmake -S "$top/ports/mps2" -B "$out" -DCMAKE_TOOLCHAIN_FILE="$top/cmake/arm-none-eabi.cmake" \
      -DCMAKE_BUILD_TYPE=MinSizeRel -DWISP_WERROR=ON >/dev/null
cmake --build "$out" -j2 >/dev/null
echo "== mps2-an385 firmware (Cortex-M3 -Os, newlib-nano; text = flash, data + bss = RAM) =="
arm-none-eabi-size "$out"/*.elf | sed 's/^/  /'
if [ ! -f "$out/wisp-mps2-freertos.elf" ]; then
    echo "fw-build: FreeRTOS image skipped: no FreeRTOS kernel with GCC/ARM_CM3 (set FREERTOS_KERNEL_PATH;" \
         "default ../shared/third_party/FreeRTOS-Kernel)"
fi
