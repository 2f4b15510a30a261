#!/usr/bin/env bash
# test/package/run.sh: wisp as a package, from outside its tree.
#  1. configure wisp alone (a user's build: no -Werror, port unix), build,
#     cmake --install into a temp prefix (twice: without an options header,
#     and with test/package/host/pkg_opts.h);
#  2. test/package/host with find_package(wisp) (CMAKE_PREFIX_PATH): build, run;
#  3. the same program with make + pkg-config (wisp.pc): build, run;
#  4. test/package/cortex-m: a Cortex-M firmware project that uses
#     add_subdirectory(wisp) with cmake/arm-none-eabi.cmake and its own
#     options header: builds and links; checks that the core was compiled
#     with that header, without -Werror, and without host programs or tests.
# Usage: test/package/run.sh [work dir]   (default: a temp dir, removed after)
set -euo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
here=$top/test/package
if [ -n "${1:-}" ]; then
  w=$1; mkdir -p "$w"
else
  w=$(mktemp -d); trap 'rm -rf "$w"' EXIT
fi
cc=${CC:-gcc}
fail() { echo "package: FAILED: $*"; exit 1; }

# One package build, installed into $w/<name>/prefix, and both consumers.
package_variant() {
  local name=$1; shift
  local v=$w/$name
  echo "== package ($name): build wisp, install into $v/prefix"
  cmake -S "$top" -B "$v/wisp" -DCMAKE_C_COMPILER="$cc" -DCMAKE_BUILD_TYPE=Release -DWISP_HOST=OFF \
        -DWISP_INSTALL=ON "$@" >"$v.log" || { cat "$v.log"; fail "configure"; }
  cmake --build "$v/wisp" -j2 >>"$v.log" 2>&1 || { cat "$v.log"; fail "build"; }
  # (another prefix than the configured one: the package is relocatable)
  cmake --install "$v/wisp" --prefix "$v/prefix" >>"$v.log" || { cat "$v.log"; fail "install"; }
  for f in lib/libwisp.a lib/libwisp_unix.a lib/libwisp_api.a include/wisp/wisp.h include/wisp/ports/unix/sys_posix.h \
           lib/cmake/wisp/wispConfig.cmake lib/cmake/wisp/wispConfigVersion.cmake lib/pkgconfig/wisp.pc; do
    [ -f "$v/prefix/$f" ] || fail "not installed: $f"
  done
  echo "  installed: $(cd "$v/prefix" && find . -type f | wc -l) files"

  echo "== package ($name): consumer with find_package(wisp)"
  cmake -S "$here/host" -B "$v/c-cmake" -DCMAKE_C_COMPILER="$cc" -DCMAKE_PREFIX_PATH="$v/prefix" >"$v/c-cmake.log" ||
    { cat "$v/c-cmake.log"; fail "consumer configure"; }
  grep 'wisp 0' "$v/c-cmake.log" | sed 's/^-- /  /'
  cmake --build "$v/c-cmake" >>"$v/c-cmake.log" 2>&1 || { cat "$v/c-cmake.log"; fail "consumer build"; }
  "$v/c-cmake/consumer" | sed 's/^/  /' || fail "consumer (find_package) run"
  # find_package with a version the package does not satisfy must fail.
  if cmake -S "$here/host" -B "$v/c-badver" -DCMAKE_PREFIX_PATH="$v/prefix" \
        -DCMAKE_C_COMPILER="$cc" -DWISP_CONSUMER_VERSION=99.0 >/dev/null 2>&1; then
    fail "find_package(wisp 99.0) succeeded"
  fi

  echo "== package ($name): consumer with pkg-config (wisp.pc)"
  echo "  pkg-config --cflags wisp: $(PKG_CONFIG_PATH="$v/prefix/lib/pkgconfig" pkg-config --cflags wisp)"
  mkdir -p "$v/c-pc"
  PKG_CONFIG_PATH="$v/prefix/lib/pkgconfig" make -s -C "$v/c-pc" -f "$here/host/Makefile" CC="$cc" \
       SRC="$here/host/main.c" >"$v/c-pc.log" 2>&1 || { cat "$v/c-pc.log"; fail "pkg-config build"; }
  "$v/c-pc/consumer-pc" >"$v/c-pc.out" || { cat "$v/c-pc.out"; fail "consumer (pkg-config) run"; }
  tail -n 1 "$v/c-pc.out" | sed 's/^/  /'
}
# A user's package build: no options header (opt.h defaults), port unix;
# then one with an options header, installed with the package.
package_variant defaults
package_variant opts -DWISP_OPTS_HEADER=pkg_opts.h -DWISP_OPTS_DIR="$here/host"
grep -q "^ok: the package's options header sized" "$w/opts/c-pc.out" || fail "the options header check did not run"

if command -v arm-none-eabi-gcc >/dev/null; then
  echo "== package: Cortex-M firmware with add_subdirectory(wisp) and its own options header"
  cmake -S "$here/cortex-m" -B "$w/fw" -DCMAKE_TOOLCHAIN_FILE="$top/cmake/arm-none-eabi.cmake" \
        -DCMAKE_BUILD_TYPE=MinSizeRel -DWISP_SOURCE_DIR="$top" -DCMAKE_EXPORT_COMPILE_COMMANDS=ON >"$w/fw.log" ||
    { cat "$w/fw.log"; fail "firmware configure"; }
  cmake --build "$w/fw" -j2 >>"$w/fw.log" 2>&1 || { cat "$w/fw.log"; fail "firmware build"; }
  [ -f "$w/fw/fw.elf" ] || fail "no fw.elf"
  arm-none-eabi-size "$w/fw/fw.elf" | sed 's/^/  /'
  python3 - "$w/fw/compile_commands.json" <<'PY2' || fail "firmware build check"
import json, sys
cmds = json.load(open(sys.argv[1]))
core = [c for c in cmds if '/src/core/' in c['file'] or '/src/netif/' in c['file']]
bad = []
if len(core) < 10:
    bad.append('only %d core files compiled' % len(core))
bad += ['%s: not compiled with fw_wisp_opts.h' % c['file'] for c in core if 'fw_wisp_opts.h' not in c['command']]
bad += ['%s: -Werror forced' % c['file'] for c in cmds if '-Werror' in c['command']]
bad += ['%s: host program, test or unix port built' % c['file'] for c in cmds
        if any(d in c['file'] for d in ('/test/unit', '/test/sim', '/sim/', '/apps/', '/ports/unix/'))]
if not any(c['file'].endswith('/ports/none/sys_none.c') for c in cmds):
    bad.append('ports/none not built')
for b in bad:
    print('  ' + b)
if bad:
    sys.exit(1)
print('  %d core files with fw_wisp_opts.h, %d files in all: no -Werror, no host programs or tests, no unix port'
      % (len(core), len(cmds)))
PY2
else
  echo "== package: arm-none-eabi-gcc missing: Cortex-M consumer skipped"
fi
echo "== package: all checks passed"
