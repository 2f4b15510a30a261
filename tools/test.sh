#!/usr/bin/env bash
# The whole wisp test suite, as CI runs it (README's second command).
#  1. installs what it needs (Debian packages) when missing and run as root;
#  2. gcc build (-Wall -Wextra -Werror), all tiers: unit, simulator, interop
#     (Linux kernel over TAP in network namespaces), Cortex-M4 cross build;
#     the option matrix: unit + simulator tests again for each option set
#     of test/opts/ (minimal, lwIP-like, everything incl. WISP_IPV6=1);
#     the unit tests big-endian (s390x cross build run under qemu-user);
#  3. clang build with AddressSanitizer + UndefinedBehaviorSanitizer, all
#     tiers again (wisp-node itself runs sanitized in the interop tests);
#  4. clang ThreadSanitizer build of the threaded tests (label threads);
#  5. Release and MinSizeRel builds with gcc and clang: compile only;
#     the CMake package from outside the tree (test/package/run.sh);
#  6. every libFuzzer harness for FUZZ_SECONDS (10) under ASan+UBSan
#     (tools/fuzz.sh ci: a crash fails the suite and leaves its reproducer);
#  7. line coverage of the input parsers against tools/coverage-floor.txt
#     (tools/coverage.sh, gcovr).
# Every build uses -DWISP_WERROR=ON (warnings are errors in CI only).
# Usage: tools/test.sh [ctest -R regex]   (env JOBS=N, SKIP_ASAN=1, SKIP_TSAN=1, SKIP_MATRIX=1, SKIP_BE=1,
#        SKIP_OPT=1, SKIP_PKG=1, SKIP_FUZZ=1, SKIP_COV=1, FUZZ_SECONDS=N; 5-7 run without a regex only)
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"
jobs=${JOBS:-2}
filter=${1:-}

need_pkgs=(build-essential cmake clang libclang-rt-14-dev libcmocka-dev pkg-config gcc-arm-none-eabi libnewlib-arm-none-eabi
           binutils-arm-none-eabi iproute2 iputils-ping tshark socat python3 procps kmod dnsmasq-base iperf curl valgrind
           strace)
need_pkgs+=(gcovr)  # tools/coverage.sh
need_pkgs+=(nettle-dev)  # wisp-node's SHA-256
need_pkgs+=(chromium)  # test/interop/test_status_page.sh (headless)
need_pkgs+=(liblwip-dev)  # test_lwip_compat.sh: the lwip-style application against Debian's lwIP
need_pkgs+=(qemu-system-arm)  # firmware tests (test/interop/test_fw_*.sh)
# The big-endian unit tests (step 2b): s390x cross compiler, QEMU user mode,
# cmocka of the s390x architecture (Debian multiarch).
need_pkgs+=(gcc-s390x-linux-gnu libc6-dev-s390x-cross qemu-user libcmocka-dev:s390x)  # the C library for the cross linker: only a Recommends of the compiler
missing=()
for p in "${need_pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
    echo "[${SECONDS} s] == installing: ${missing[*]}"
    export DEBIAN_FRONTEND=noninteractive
    echo "wireshark-common wireshark-common/install-setuid boolean false" | debconf-set-selections 2>/dev/null || true
    case " ${missing[*]}" in *:s390x*) dpkg --add-architecture s390x ;; esac
    apt-get update -qq >/dev/null
    apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
  else
    echo "[${SECONDS} s] == missing packages (run as root to install): ${missing[*]}"
  fi
fi

args=(--output-on-failure -j "$jobs")
[ -n "$filter" ] && args+=(-R "$filter")

echo "[${SECONDS} s] == gcc build"
cmake -S . -B build -DCMAKE_C_COMPILER=gcc -DCMAKE_BUILD_TYPE=RelWithDebInfo -DWISP_WERROR=ON >/dev/null
cmake --build build -j "$jobs"
# Two interop tests run in one pass only, to keep the suite within its
# time: test_conn_exhaust (two minutes of wall-clock attacks) under the
# sanitizers (pass 3), where hostile input matters most, and
# test_tcp_tx_fairness as bench.tcp_tx_fairness here (the same script,
# which also checks the goodput ratio); pass 3 runs the plain one.
(cd build && ctest "${args[@]}" -E '^interop\.(test_conn_exhaust|test_tcp_tx_fairness)$')

if [ "${SKIP_MATRIX:-0}" != 1 ]; then
  # The option matrix (issue 9): the unit and simulator tests again with
  # each option set of test/opts/ (wisp_opts_<set>.h: e.g. minimal,
  # lwiplike, everything -- the last one with WISP_IPV6 1, the tagged
  # 20-byte wisp_ipaddr_t), so that no combination of compile-time switches
  # rots. Optimised builds (RelWithDebInfo: the sets' own WISP_DEBUG
  # decides the checks) of the test programs only; the heavy impairment
  # test runs 20 seeds (201..220) per set. The default set is the gcc pass
  # above.
  for hdr in test/opts/wisp_opts_*.h; do
    set_name=$(basename "$hdr" .h); set_name=${set_name#wisp_opts_}
    echo "[${SECONDS} s] == option set '$set_name' ($hdr): gcc, unit + simulator tests"
    bdir=build-opt-$set_name
    # (-O2 without -g: debug information is a third of the build time)
    cmake -S . -B "$bdir" -DCMAKE_C_COMPILER=gcc -DCMAKE_BUILD_TYPE=RelWithDebInfo -DWISP_WERROR=ON \
          -DCMAKE_C_FLAGS_RELWITHDEBINFO="-O2 -DNDEBUG" \
          -DWISP_OPTS_HEADER="$(basename "$hdr")" -DCMAKE_C_FLAGS="-I$top/test/opts -I$top/ports/unix" >/dev/null
    # the test programs behind the unit.test_* and sim.* tests
    progs=$(cd "$bdir" && ctest -N -L 'unit|sim' | sed -n 's/.*Test *#[0-9]*: \(unit\|sim\)\.\(test_[A-Za-z0-9_]*\).*$/\2/p' | sort -u)
    # shellcheck disable=SC2086
    cmake --build "$bdir" -j "$jobs" --target $progs
    (cd "$bdir" && TSL_IMPAIR_SEEDS=20 TSL_IMPAIR_SEED0=201 ctest "${args[@]}" -R '^(unit|sim)\.test_' -LE bench)
  done
  # Build-only sets (test/opts/build/: e.g. the core at its smallest, with
  # counters off, which the tests read): the core library must compile
  # warning-free with them.
  for hdr in test/opts/build/wisp_opts_*.h; do
    [ -e "$hdr" ] || continue
    set_name=$(basename "$hdr" .h); set_name=${set_name#wisp_opts_}
    echo "[${SECONDS} s] == option set '$set_name' ($hdr): gcc, the core library compiles"
    bdir=build-opt-$set_name
    cmake -S . -B "$bdir" -DCMAKE_C_COMPILER=gcc -DCMAKE_BUILD_TYPE=MinSizeRel -DWISP_WERROR=ON \
          -DWISP_OPTS_HEADER="$(basename "$hdr")" -DCMAKE_C_FLAGS="-I$top/test/opts/build -I$top/ports/unix" >/dev/null
    cmake --build "$bdir" -j "$jobs" --target wisp
  done
fi

if [ "${SKIP_BE:-0}" != 1 ]; then
  # Big-endian: the unit test programs built for s390x (Debian's cross
  # compiler, cmake/s390x-linux-gnu.cmake) and run by ctest under
  # qemu-s390x (user mode). -O1: at -O0 the emulated tests take 3x longer.
  echo "[${SECONDS} s] == big-endian (s390x under qemu-user): unit tests"
  be_start=$(date +%s)
  cmake -S . -B build-be -DCMAKE_TOOLCHAIN_FILE="$top/cmake/s390x-linux-gnu.cmake" -DCMAKE_BUILD_TYPE=Debug \
        -DCMAKE_C_FLAGS_DEBUG="-g -O1" -DWISP_WERROR=ON >/dev/null
  units=$(cd build-be && ctest -N -L unit | sed -n 's/.*Test *#[0-9]*: unit\.\(test_[A-Za-z0-9_]*\)$/\1/p')
  # shellcheck disable=SC2086
  cmake --build build-be -j "$jobs" --target $units
  # (the unit test programs; the lint checks of label unit are host scripts)
  # A failed program is run once more: once in ~60 emulated runs
  # test_sockets_opts (threads) ended mid-test with no message under
  # qemu-user, never natively and never again under qemu; a test that fails
  # big-endian fails twice.
  (cd build-be && ctest --output-on-failure -j "$jobs" -L unit -R "${filter:-^unit\.test_}" --repeat until-pass:2)
  echo "  big-endian pass: $(( $(date +%s) - be_start )) s"
fi

if [ "${SKIP_ASAN:-0}" != 1 ]; then
  echo "[${SECONDS} s] == clang + ASan + UBSan build"
  cmake -S . -B build-asan -DCMAKE_C_COMPILER=clang -DWISP_SANITIZE=ON -DCMAKE_BUILD_TYPE=Debug -DWISP_WERROR=ON >/dev/null
  cmake --build build-asan -j "$jobs"
  # Benchmarks (label bench: ratios of timings) run in the gcc pass only.
  # The heavy impairment test (sim/test_tcp_impair.c) runs seeds 1..100 in
  # the gcc pass and 25 other seeds (101..125) under the sanitizers, where
  # it is ~10x slower.
  # The firmware tests (test_fw_*: QEMU running the Cortex-M images) and
  # the cross builds (label cross) run no sanitized code: gcc pass only.
  # The FreeRTOS node's interop tests (the same services and checks as
  # interop.test_api_*, which run here) too; its unit tests run here.
  (cd build-asan && TSL_IMPAIR_SEEDS=${TSL_IMPAIR_SEEDS:-25} TSL_IMPAIR_SEED0=${TSL_IMPAIR_SEED0:-101} ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1 ctest "${args[@]}" -LE 'bench|cross' -E 'test_fw_|^interop\.freertos_')
fi
if [ "${SKIP_TSAN:-0}" != 1 ] && [ -z "$filter" ]; then
  echo "[${SECONDS} s] == clang + ThreadSanitizer build (the tests that use threads)"
  cmake -S . -B build-tsan -DCMAKE_C_COMPILER=clang -DCMAKE_BUILD_TYPE=Debug -DWISP_WERROR=ON \
        -DCMAKE_C_FLAGS="-fsanitize=thread -fno-omit-frame-pointer" -DCMAKE_EXE_LINKER_FLAGS=-fsanitize=thread >/dev/null
  cmake --build build-tsan -j "$jobs"
  (cd build-tsan && TSAN_OPTIONS=halt_on_error=1:second_deadlock_stack=1 ctest --output-on-failure -L threads)
fi
if [ "${SKIP_OPT:-0}" != 1 ] && [ -z "$filter" ]; then
  echo "[${SECONDS} s] == Release and MinSizeRel builds, gcc and clang: libraries, ports, programs (compile only, warnings are errors)"
  for cc in gcc clang; do
    for bt in Release MinSizeRel; do
      cmake -S . -B "build-$cc-$bt" -DCMAKE_C_COMPILER=$cc -DCMAKE_BUILD_TYPE=$bt -DWISP_WERROR=ON >/dev/null
      # what a user builds: the libraries, ports and programs (not our
      # test programs, which the passes above build)
      targets=$(cmake --build "build-$cc-$bt" --target help | sed -n 's/^\.\.\. \(wisp[A-Za-z0-9_.-]*\|lwip-style[A-Za-z0-9_.-]*\).*/\1/p' |
                grep -v '^wisp_testutil$' | sort -u)
      # shellcheck disable=SC2086
      cmake --build "build-$cc-$bt" -j "$jobs" --target $targets >/dev/null
      echo "  $cc $bt: ok"
    done
  done
fi
if [ "${SKIP_PKG:-0}" != 1 ] && [ -z "$filter" ]; then
  echo "[${SECONDS} s] == CMake package: install, find_package, pkg-config, add_subdirectory for Cortex-M (test/package/run.sh)"
  test/package/run.sh
fi
if [ "${SKIP_FUZZ:-0}" != 1 ] && [ -z "$filter" ]; then
  echo "[${SECONDS} s] == libFuzzer harnesses, ${FUZZ_SECONDS:-10} s each under ASan+UBSan (tools/fuzz.sh ci)"
  JOBS=$jobs tools/fuzz.sh ci "${FUZZ_SECONDS:-10}"
fi
if [ "${SKIP_COV:-0}" != 1 ] && [ -z "$filter" ]; then
  echo "[${SECONDS} s] == coverage of the input parsers (tools/coverage.sh, floor tools/coverage-floor.txt)"
  JOBS=$jobs tools/coverage.sh check
fi
echo "[${SECONDS} s] == all tiers passed"
