#!/usr/bin/env bash
# Regenerate docs/tcp-throughput.md: TCP goodput tables from the simulator
# (apps/bench/tcp_table.c). The output is deterministic (virtual time, fixed
# seeds), so `git diff docs/tcp-throughput.md` shows a change's effect.
# Usage: tools/tcp-table.sh [-q]     (-q: quick, one seed, smaller transfers)
# Env: BUILD_DIR (default build), JOBS (default 2).
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
build=${BUILD_DIR:-$top/build}
jobs=${JOBS:-2}
cmake -S "$top" -B "$build" >/dev/null
cmake --build "$build" -j "$jobs" --target wisp-tcp-table >/dev/null
mkdir -p "$top/docs"
tmp=$(mktemp)
trap 'rm -f "$tmp"' EXIT
status=0
"$build/wisp-tcp-table" "$@" >"$tmp" || status=$?
cat "$tmp" >"$top/docs/tcp-throughput.md"
echo "wrote $top/docs/tcp-throughput.md"
exit $status
