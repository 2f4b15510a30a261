#!/usr/bin/env bash
# test_fw_seed000.sh -- seed 000 on the FreeRTOS mps2-an385 firmware
# (ports/mps2/seed000.c): tools/fw-seed000.sh builds the images, boots the
# FreeRTOS one in QEMU (-icount shift=5,sleep=off; slirp restrict=on for
# DHCP, the bench itself runs over the firmware's loopback), runs the
# console command "seed" and writes the tables to a temporary file (not to
# docs/). Checks: every bench step ran ("0 failed steps"), the firmware
# exited through semihosting with status 0 (pools back at baseline after
# the bench), and the three tables are there with a ratio for each row. No
# timing threshold: QEMU time says nothing about an MCU; the figures are
# logged. No root needed. Bounded by timeout(1): 600 s for the build and
# the run (about 25 s after the build).
#
# Usage: test_fw_seed000.sh PATH-TO-wisp-node   (77 = skipped: no cross
# compiler, QEMU or FreeRTOS kernel)
source "$(dirname "$0")/lib.sh"

IT_NODE=${1:-}
[ -n "$IT_NODE" ] || it_fail "usage: $0 PATH-TO-wisp-node"
IT_DIR=$(mktemp -d "/tmp/wisp-it-$IT_NAME.XXXXXX") || it_fail "mktemp"
trap it_cleanup EXIT
trap 'exit 130' INT TERM
command -v qemu-system-arm >/dev/null 2>&1 || it_skip "qemu-system-arm not installed"
command -v arm-none-eabi-gcc >/dev/null 2>&1 || it_skip "arm-none-eabi-gcc not installed"
top=$(cd "$(dirname "$0")/../.." && pwd)
t0=$(date +%s)
out=$(FW_BUILD_DIR="$(dirname "$(readlink -f "$IT_NODE")")/fw-mps2" timeout -k 5 600 \
    bash "$top/tools/fw-seed000.sh" "$IT_DIR/seed000.md" 2>&1)
rc=$?
[ "$rc" -ne 77 ] || it_skip "$(echo "$out" | tail -n 1)"
[ "$rc" -eq 0 ] || { echo "$out" | tail -n 30 >&2; it_fail "tools/fw-seed000.sh failed (status $rc)"; }
md=$IT_DIR/seed000.md
grep -q '^| client connect | [0-9]* ± [0-9]* | [0-9]* ± [0-9]* | [0-9.]* |$' "$md" || it_fail "no connect row"
grep -q '^| server accept .* | [0-9.]* |$' "$md" || it_fail "no accept row"
for w in 128 512 1024 1460; do
    grep -qE "^\| $w \| [0-9.]+ \([0-9.-]+\) \| [0-9.]+ \([0-9.-]+\) \| [0-9]+\.[0-9]+ \|$" "$md" || it_fail "no goodput row for $w-byte writes"
done
grep -q '^| total per idle connection | [0-9]* | [0-9]* (netconn / socket [0-9.]*) |$' "$md" || it_fail "no RAM total row"
grep '^|' "$md" | grep -v -e '^|---' -e 'RAM per connection (bytes) |' | while IFS= read -r l; do it_log "FIGURES $l"; done
it_log "FIGURES wall time $(( $(date +%s) - t0 )) s"
it_pass
