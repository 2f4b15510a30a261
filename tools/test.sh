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
# The builds of 2-7 and the tests that know no clock run in a background
# job at nice 19 while the interop tests wait on the network (see "Work in
# the background" below); label bench runs last, on a quiet machine.
# Usage: tools/test.sh [ctest -R regex]   (env JOBS=N, PREBUILD=0, SKIP_ASAN=1, SKIP_TSAN=1, SKIP_MATRIX=1, SKIP_BE=1,
#        SKIP_OPT=1, SKIP_PKG=1, SKIP_FUZZ=1, SKIP_COV=1, FUZZ_SECONDS=N; 5-7 run without a regex only)
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"
jobs=${JOBS:-2}
prebuild_mode=0
if [ "${1:-}" = --prebuild-steps ]; then  # (internal: the background job, see below)
  prebuild_mode=1; shift
  filter=${WISP_TEST_FILTER:-}
else
  filter=${1:-}
fi

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
[ $prebuild_mode = 1 ] && need_pkgs=()
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

# ---------------------------------------------------------------------------
# Work in the background. Most of the suite's wall-clock time is the
# interop tests, which wait on the network and leave the CPU ~80 % idle
# (load ~0.3-0.9 on 2 cores). Once the gcc pass is built, a background job
# (PREBUILD=0: none) runs, in order and at nice 19 (it takes the idle CPU,
# the tests in front keep their share), the builds of passes 2-7 and the
# tests that know no clock: the unit and simulator test programs that run
# no threads (single-threaded core, virtual time; not label threads) of
# the option matrix, big-endian and sanitizer passes, the fuzzers (time-
# bounded: a busy machine only runs fewer inputs) and the coverage run.
# In front run the interop tests, the threaded tests (label threads: real
# threads and timeouts) and, after the background job ended, the timing-
# sensitive ones (label bench). Each pass waits for its build (await_step),
# or runs it itself when no background job is left to do it; a failed step
# fails the suite with its log.
# ---------------------------------------------------------------------------
opt_flags() {  # the option set of header $1 (dir test/opts or test/opts/build)
  echo "-I$top/$(dirname "$1") -I$top/ports/unix"
}
step_matrix() {  # option set $1: the test programs behind unit.test_* and sim.test_*
  local hdr=test/opts/wisp_opts_$1.h bdir=build-opt-$1 progs
  # (-O2 without -g: debug information is a third of the build time)
  cmake -S . -B "$bdir" -DCMAKE_C_COMPILER=gcc -DCMAKE_BUILD_TYPE=RelWithDebInfo -DWISP_WERROR=ON \
        -DCMAKE_C_FLAGS_RELWITHDEBINFO="-O2 -DNDEBUG" \
        -DWISP_OPTS_HEADER="$(basename "$hdr")" -DCMAKE_C_FLAGS="$(opt_flags "$hdr")" >/dev/null
  progs=$(tools/test-progs.sh "$bdir" 'unit|sim')
  # shellcheck disable=SC2086
  cmake --build "$bdir" -j "$jobs" --target $progs
}
step_coreset() {  # build-only option set $1: the core library
  local hdr=test/opts/build/wisp_opts_$1.h
  cmake -S . -B "build-opt-$1" -DCMAKE_C_COMPILER=gcc -DCMAKE_BUILD_TYPE=MinSizeRel -DWISP_WERROR=ON \
        -DWISP_OPTS_HEADER="$(basename "$hdr")" -DCMAKE_C_FLAGS="$(opt_flags "$hdr")" >/dev/null
  cmake --build "build-opt-$1" -j "$jobs" --target wisp
}
step_be() {  # the unit test programs for s390x (-O1: at -O0 the emulated tests take 3x longer)
  local units
  cmake -S . -B build-be -DCMAKE_TOOLCHAIN_FILE="$top/cmake/s390x-linux-gnu.cmake" -DCMAKE_BUILD_TYPE=Debug \
        -DCMAKE_C_FLAGS_DEBUG="-g -O1" -DWISP_WERROR=ON >/dev/null
  units=$(tools/test-progs.sh build-be unit)
  # shellcheck disable=SC2086
  cmake --build build-be -j "$jobs" --target $units
}
step_asan() {
  cmake -S . -B build-asan -DCMAKE_C_COMPILER=clang -DWISP_SANITIZE=ON -DCMAKE_BUILD_TYPE=Debug -DWISP_WERROR=ON >/dev/null
  cmake --build build-asan -j "$jobs"
}
step_tsan() {  # the programs of the tests labelled threads
  local progs
  cmake -S . -B build-tsan -DCMAKE_C_COMPILER=clang -DCMAKE_BUILD_TYPE=Debug -DWISP_WERROR=ON \
        -DCMAKE_C_FLAGS="-fsanitize=thread -fno-omit-frame-pointer" -DCMAKE_EXE_LINKER_FLAGS=-fsanitize=thread >/dev/null
  progs=$(tools/test-progs.sh build-tsan threads)
  # shellcheck disable=SC2086
  cmake --build build-tsan -j "$jobs" --target $progs
}
step_opt() {  # compiler $1, build type $2: what a user builds (the libraries, ports and programs; not our test programs)
  local b=build-$1-$2 targets
  cmake -S . -B "$b" -DCMAKE_C_COMPILER="$1" -DCMAKE_BUILD_TYPE="$2" -DWISP_WERROR=ON >/dev/null
  targets=$(cmake --build "$b" --target help | sed -n 's/^\.\.\. \(wisp[A-Za-z0-9_.-]*\|lwip-style[A-Za-z0-9_.-]*\).*/\1/p' |
            grep -v '^wisp_testutil$' | sort -u)
  # shellcheck disable=SC2086
  cmake --build "$b" -j "$jobs" --target $targets
}
step_package() { test/package/run.sh; }
step_fuzzbuild() { tools/fuzz.sh build; }
step_covbuild() { JOBS=$jobs tools/coverage.sh build; }
# the tests of the background (label threads runs in front)
NOCLOCK_R='^(unit|sim)\.test_'
NOCLOCK_LE='bench|cross|threads'
step_mtests() {  # option set $1 (the heavy impairment test: 20 seeds, 201..220)
  (cd "build-opt-$1" && TSL_IMPAIR_SEEDS=20 TSL_IMPAIR_SEED0=201 ctest "${args[@]}" -R "$NOCLOCK_R" -LE "$NOCLOCK_LE")
}
step_betests() {  # (see the big-endian pass below for --repeat)
  (cd build-be && ctest --output-on-failure -j "$jobs" -L unit -LE "$NOCLOCK_LE" -R "${filter:-^unit\.test_}" --repeat until-pass:2)
}
step_asantests() {  # (the sanitizer pass below says which seeds)
  (cd build-asan && TSL_IMPAIR_SEEDS=${TSL_IMPAIR_SEEDS:-25} TSL_IMPAIR_SEED0=${TSL_IMPAIR_SEED0:-101} \
     ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1 \
     ctest "${args[@]}" -R "$NOCLOCK_R" -LE "$NOCLOCK_LE")
}
step_fuzz() { FUZZ_PREBUILT=1 JOBS=$jobs tools/fuzz.sh ci "${FUZZ_SECONDS:-10}"; }
step_cov() { JOBS=$jobs tools/coverage.sh check; }
# The names of the tests step_asantests runs, as a ctest -E regex for the
# sanitizer pass in front.
asan_bg_names() {  # (from the top directory)
  local names
  names=$(cd "$top/build-asan" && ctest -N -R "$NOCLOCK_R" -LE "$NOCLOCK_LE" |
          sed -n 's/.*Test *#[0-9]*: \([A-Za-z0-9_.]*\)$/\1/p' | sed 's/\./\\./g' | paste -sd'|')
  [ -n "$names" ] || { echo "tools/test.sh: no test for the background in build-asan" >&2; return 1; }
  echo "^(${names})\$"
}

stamps=$top/build/prebuild
run_step() {  # name [args]: runs step_<name> [args], log and stamp in $stamps
  local id t0 rc=0
  id=$(IFS=-; echo "$*")
  t0=$(date +%s)
  "step_$1" "${@:2}" >"$stamps/$id.log" 2>&1 || rc=$?
  echo "$rc $(( $(date +%s) - t0 )) $step_where" >"$stamps/$id.tmp"
  mv "$stamps/$id.tmp" "$stamps/$id.done"
}
step_where="here"
bg_pid=
await_step() {  # name [args]: wait for the background's step, or run it here; fails the suite when it failed
  local id rc secs where
  id=$(IFS=-; echo "$*")
  while [ ! -e "$stamps/$id.done" ]; do
    if [ -z "$bg_pid" ] || ! kill -0 "$bg_pid" 2>/dev/null; then
      [ -e "$stamps/$id.done" ] || run_step "$@"
      break
    fi
    sleep 1
  done
  read -r rc secs where <"$stamps/$id.done"
  if [ "$rc" != 0 ]; then
    cat "$stamps/$id.log"
    stop_bg
    echo "[${SECONDS} s] == FAILED: step $id (exit $rc, log $stamps/$id.log)"
    exit 1
  fi
  echo "  ($id: $where, $secs s)"
}
show_step() {  # name [args]: await_step, then its log
  local id
  id=$(IFS=-; echo "$*")
  echo "---- background step $id: its output"
  await_step "$@"
  cat "$stamps/$id.log"
}
stop_bg() {  # the background job's process group (its pid, written by itself)
  local pg
  if [ -n "$bg_pid" ] && kill -0 "$bg_pid" 2>/dev/null; then
    pg=$(cat "$stamps/background.pgid" 2>/dev/null || true)
    [ -n "$pg" ] && kill -- -"$pg" 2>/dev/null
    kill "$bg_pid" 2>/dev/null || true
  fi
}
if [ $prebuild_mode = 1 ]; then
  # the background job: setsid made it a process group leader
  echo $$ >"$stamps/background.pgid"
  step_where="in the background at nice $(nice)"
  for s in "$@"; do
    # shellcheck disable=SC2086
    run_step $s
  done
  exit 0
fi
trap stop_bg EXIT

matrix_sets=() core_sets=()
if [ "${SKIP_MATRIX:-0}" != 1 ]; then
  for hdr in test/opts/wisp_opts_*.h; do
    n=$(basename "$hdr" .h); matrix_sets+=("${n#wisp_opts_}")
  done
  for hdr in test/opts/build/wisp_opts_*.h; do
    [ -e "$hdr" ] || continue
    n=$(basename "$hdr" .h); core_sets+=("${n#wisp_opts_}")
  done
fi
steps=()
for n in "${matrix_sets[@]}"; do steps+=("matrix $n" "mtests $n"); done
for n in "${core_sets[@]}"; do steps+=("coreset $n"); done
[ "${SKIP_BE:-0}" != 1 ] && steps+=("be" "betests")
[ "${SKIP_ASAN:-0}" != 1 ] && steps+=("asan" "asantests")
if [ -z "$filter" ]; then
  [ "${SKIP_TSAN:-0}" != 1 ] && steps+=("tsan")
  if [ "${SKIP_OPT:-0}" != 1 ]; then
    for cc in gcc clang; do for bt in Release MinSizeRel; do steps+=("opt $cc $bt"); done; done
  fi
  [ "${SKIP_PKG:-0}" != 1 ] && steps+=("package")
  [ "${SKIP_FUZZ:-0}" != 1 ] && steps+=("fuzzbuild" "fuzz")
  [ "${SKIP_COV:-0}" != 1 ] && steps+=("covbuild" "cov")
fi

echo "[${SECONDS} s] == gcc build"
cmake -S . -B build -DCMAKE_C_COMPILER=gcc -DCMAKE_BUILD_TYPE=RelWithDebInfo -DWISP_WERROR=ON >/dev/null
cmake --build build -j "$jobs"
rm -rf "$stamps"; mkdir -p "$stamps"
if [ "${PREBUILD:-1}" != 0 ] && [ ${#steps[@]} -gt 0 ]; then
  # (setsid -w: its own process group and session, which stop_bg ends;
  # the pid here lives as long as the job)
  WISP_TEST_FILTER=$filter setsid -w nice -n 19 bash "$0" --prebuild-steps "${steps[@]}" </dev/null >"$stamps/background.log" 2>&1 &
  bg_pid=$!
  echo "[${SECONDS} s] == the background job (builds of passes 2-7, tests without a clock) at nice 19 (pid $bg_pid): ${#steps[@]} steps"
fi

# Two interop tests run in one pass only, to keep the suite within its
# time: test_conn_exhaust (two minutes of wall-clock attacks) under the
# sanitizers (pass 3), where hostile input matters most, and
# test_tcp_tx_fairness as bench.tcp_tx_fairness (the same script, which
# also checks the goodput ratio; at the end of the suite, with the other
# benchmarks); pass 3 runs the plain one.
(cd build && ctest "${args[@]}" -LE bench -E '^interop\.(test_conn_exhaust|test_tcp_tx_fairness)$')

if [ "${SKIP_MATRIX:-0}" != 1 ]; then
  # The option matrix (issue 9): the unit and simulator tests again with
  # each option set of test/opts/ (wisp_opts_<set>.h: e.g. minimal,
  # lwiplike, everything -- the last one with WISP_IPV6 1, the tagged
  # 20-byte wisp_ipaddr_t), so that no combination of compile-time switches
  # rots. Optimised builds (RelWithDebInfo: the sets' own WISP_DEBUG
  # decides the checks) of the test programs only; the heavy impairment
  # test runs 20 seeds (201..220) per set. The default set is the gcc pass
  # above.
  for set_name in "${matrix_sets[@]}"; do
    echo "[${SECONDS} s] == option set '$set_name' (test/opts/wisp_opts_$set_name.h): gcc, unit + simulator tests"
    await_step matrix "$set_name"
    # (the others: step_mtests, in the background)
    (cd "build-opt-$set_name" && ctest "${args[@]}" -R "$NOCLOCK_R" -L threads -LE bench)
  done
  # Build-only sets (test/opts/build/: e.g. the core at its smallest, with
  # counters off, which the tests read): the core library must compile
  # warning-free with them.
  for set_name in "${core_sets[@]}"; do
    echo "[${SECONDS} s] == option set '$set_name' (test/opts/build/wisp_opts_$set_name.h): gcc, the core library compiles"
    await_step coreset "$set_name"
  done
fi

if [ "${SKIP_BE:-0}" != 1 ]; then
  # Big-endian: the unit test programs built for s390x (Debian's cross
  # compiler, cmake/s390x-linux-gnu.cmake) and run by ctest under
  # qemu-s390x (user mode).
  echo "[${SECONDS} s] == big-endian (s390x under qemu-user): unit tests"
  await_step be
  be_start=$(date +%s)
  # (the unit test programs; the lint checks of label unit are host scripts)
  # A failed program is run once more: once in ~60 emulated runs
  # test_sockets_opts (threads) ended mid-test with no message under
  # qemu-user, never natively and never again under qemu; a test that fails
  # big-endian fails twice.
  # (here label threads; the others: step_betests, in the background)
  (cd build-be && ctest --output-on-failure -j "$jobs" -L threads -R "${filter:-^unit\.test_}" --repeat until-pass:2)
  echo "  big-endian tests: $(( $(date +%s) - be_start )) s"
fi

if [ "${SKIP_ASAN:-0}" != 1 ]; then
  echo "[${SECONDS} s] == clang + ASan + UBSan build"
  await_step asan
  # Benchmarks (label bench: ratios of timings) run in the gcc pass only.
  # The heavy impairment test (sim/test_tcp_impair.c) runs seeds 1..100 in
  # the gcc pass and 25 other seeds (101..125) under the sanitizers, where
  # it is ~10x slower.
  # The firmware tests (test_fw_*: QEMU running the Cortex-M images) and
  # the cross builds (label cross) run no sanitized code: gcc pass only.
  # The FreeRTOS node's interop tests (the same services and checks as
  # interop.test_api_*, which run here) too; its unit tests run here.
  # Here every test but those of step_asantests (the background).
  bg_re=$(asan_bg_names)
  (cd build-asan && TSL_IMPAIR_SEEDS=${TSL_IMPAIR_SEEDS:-25} TSL_IMPAIR_SEED0=${TSL_IMPAIR_SEED0:-101} ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1 ctest "${args[@]}" -LE 'bench|cross' -E "test_fw_|^interop\.freertos_|$bg_re")
fi
if [ "${SKIP_TSAN:-0}" != 1 ] && [ -z "$filter" ]; then
  echo "[${SECONDS} s] == clang + ThreadSanitizer build (the tests that use threads)"
  await_step tsan
  (cd build-tsan && TSAN_OPTIONS=halt_on_error=1:second_deadlock_stack=1 ctest --output-on-failure -L threads)
fi
if [ "${SKIP_OPT:-0}" != 1 ] && [ -z "$filter" ]; then
  echo "[${SECONDS} s] == Release and MinSizeRel builds, gcc and clang: libraries, ports, programs (compile only, warnings are errors)"
  for cc in gcc clang; do
    for bt in Release MinSizeRel; do
      await_step opt "$cc" "$bt"
    done
  done
fi
if [ "${SKIP_PKG:-0}" != 1 ] && [ -z "$filter" ]; then
  echo "[${SECONDS} s] == CMake package: install, find_package, pkg-config, add_subdirectory for Cortex-M (test/package/run.sh)"
  await_step package
  grep -E '^(== |  )' "$stamps/package.log" || true
fi
# The tests of the background job, each with its output as ctest (or the
# tool) printed it.
echo "[${SECONDS} s] == the background's tests (no clock: unit and simulator programs without threads; fuzzers; coverage)"
for set_name in "${matrix_sets[@]}"; do show_step mtests "$set_name"; done
[ "${SKIP_BE:-0}" != 1 ] && show_step betests
[ "${SKIP_ASAN:-0}" != 1 ] && show_step asantests
if [ -z "$filter" ]; then
  [ "${SKIP_FUZZ:-0}" != 1 ] && show_step fuzz
  [ "${SKIP_COV:-0}" != 1 ] && show_step cov
fi
if [ -n "$bg_pid" ]; then
  wait "$bg_pid" 2>/dev/null || true
  bg_pid=
fi
# The benchmarks of the gcc pass (label bench: goodput ratios and the
# socket tax), on a machine without our background work.
echo "[${SECONDS} s] == gcc pass: the timing-sensitive tests (label bench)"
(cd build && ctest "${args[@]}" -L bench)
echo "[${SECONDS} s] == all tiers passed"
