#!/usr/bin/env bash
# The wisp demo (README's first command): builds build/wisp-demo and runs
# it. Four wisp stacks in one process: two on the simulated wire (virtual
# time: ARP + ping, UDP echo, HTTP, the emergency queue) and two with stack
# threads on a real-time wire (wall clock: TCP goodput of the raw, netconn
# and socket APIs, small writes). Needs no root, no TAP device and no
# network, and takes well under a minute.
#  - run as root on a fresh Debian machine, it installs the missing build
#    tools with apt-get (build-essential cmake libcmocka-dev: the CMake
#    configuration finds cmocka for the tests);
#  - every argument goes to wisp-demo, e.g. the wire's impairment for the
#    whole demo: tools/demo.sh --loss 1 --delay-ms 5 --rate-mbit 100 --seed 7
#    (tools/demo.sh --help lists them all).
# The capture (wisp-demo.pcap unless --pcap) is written to the current
# directory. Env: BUILD_DIR (default: build, under the repository top),
# JOBS (default 2).
# Exit status: wisp-demo's (0 = every check of the run held).
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
build=${BUILD_DIR:-build}
case "$build" in /*) ;; *) build="$top/$build" ;; esac

need_pkgs=(build-essential cmake libcmocka-dev)
missing=()
for p in "${need_pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
    echo "== installing: ${missing[*]}" >&2
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq >/dev/null
    apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
  elif ! command -v dpkg-query >/dev/null; then
    : # not Debian: assume the tools are there, cmake will say otherwise
  else
    echo "== missing packages (run as root to install): ${missing[*]}" >&2
  fi
fi

echo "== building $build/wisp-demo" >&2
cmake -S "$top" -B "$build" >/dev/null
cmake --build "$build" -j "${JOBS:-2}" --target wisp-demo >/dev/null
echo >&2
exec "$build/wisp-demo" "$@"
