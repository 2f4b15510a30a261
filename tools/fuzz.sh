#!/bin/bash
# tools/fuzz.sh: build and run wisp's libFuzzer harnesses (test/fuzz/fuzz_*.c).
#
#   tools/fuzz.sh build                 build every harness into $FUZZ_BUILD (default build-fuzz)
#   tools/fuzz.sh run TARGET [SECONDS] [libFuzzer args...]
#                                       fuzz one target (default 300 s), ONE process
#   tools/fuzz.sh repro TARGET FILE...  run the harness once on given inputs
#   tools/fuzz.sh min TARGET CRASHFILE  minimize a crash input (-minimize_crash, 60 s)
#   tools/fuzz.sh ci [SECONDS]          CI (tools/test.sh): build, then fuzz every target for
#                                       SECONDS (default 20), $JOBS (default 2) at a time, from
#                                       the committed seeds; fails when any target finds a
#                                       crash, leak, hang (> 20 s per input) or check failure,
#                                       and leaves the reproducer in $FUZZ_BUILD/ci/
#                                       (FUZZ_PREBUILT=1: the harnesses of an earlier
#                                       'build' are used as they are)
#
# The libraries (core, unix port, apps) are built by CMake with clang and
# -fsanitize=fuzzer-no-link,address,undefined; each harness is linked with
# -fsanitize=fuzzer. New corpus entries go to $FUZZ_BUILD/corpus/TARGET (the
# seeds in test/fuzz/corpus/TARGET are read, never written); crashes to
# $FUZZ_BUILD/artifacts/. Targets: eth tcp dhcp dns http iperf arp ip4_frag
# sockets.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
B=${FUZZ_BUILD:-$ROOT/build-fuzz}
TARGETS=${FUZZ_TARGETS:-"eth tcp dhcp dns http iperf arp ip4_frag sockets"}
SAN="-fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer"

build() {
    CC=clang cmake -S "$ROOT" -B "$B" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
        -DCMAKE_C_FLAGS="-fsanitize=fuzzer-no-link $SAN" >/dev/null
    cmake --build "$B" --target wisp_apps wisp_api wisp_unix wisp -j2
    for t in $TARGETS; do
        clang -std=c99 -g -O1 $SAN -fsanitize=fuzzer -DFUZZ_LIBFUZZER \
            -Wall -Wextra -Werror -pedantic -Wshadow -Wstrict-prototypes -Wmissing-prototypes -Wundef \
            -DWISP_OPTS_HEADER='"wisp_opts_host.h"' -DWISP_PRIVATE_ACCESS=1 \
            -I"$ROOT/include" -I"$ROOT/ports/unix" -I"$ROOT/apps/lib" -I"$ROOT/test/fuzz" \
            "$ROOT/test/fuzz/fuzz_$t.c" "$ROOT/test/fuzz/fuzz_env.c" \
            -Wl,--start-group "$B/libwisp_apps.a" "$B/libwisp_api.a" "$B/libwisp.a" "$B/libwisp_unix.a" -Wl,--end-group \
            -lpthread -o "$B/fuzz_$t"
        echo "built $B/fuzz_$t"
    done
}

case "${1:-}" in
build)
    build
    ;;
run)
    t=$2
    secs=${3:-300}
    shift 3 || shift $#
    mkdir -p "$B/corpus/$t" "$B/artifacts"
    exec "$B/fuzz_$t" -max_total_time="$secs" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 \
        -artifact_prefix="$B/artifacts/$t-" "$@" "$B/corpus/$t" "$ROOT/test/fuzz/corpus/$t"
    ;;
repro)
    t=$2
    shift 2
    exec "$B/fuzz_$t" "$@"
    ;;
min)
    exec "$B/fuzz_$2" -minimize_crash=1 -max_total_time=60 -exact_artifact_path="$3.min" "$3"
    ;;
ci)
    secs=${2:-20}
    jobs=${JOBS:-2}
    [ "${FUZZ_PREBUILT:-0}" = 1 ] || build >/dev/null
    rm -rf "$B/ci"
    mkdir -p "$B/ci"
    start=$(date +%s)
    for t in $TARGETS; do
        while [ "$(jobs -rp | wc -l)" -ge "$jobs" ]; do
            wait -n || true
        done
        mkdir -p "$B/ci/corpus-$t"
        ( set +e
          "$B/fuzz_$t" -max_total_time="$secs" -timeout=20 -rss_limit_mb=2048 -print_final_stats=1 \
              -artifact_prefix="$B/ci/$t-" "$B/ci/corpus-$t" "$ROOT/test/fuzz/corpus/$t" >"$B/ci/$t.log" 2>&1
          echo $? >"$B/ci/$t.rc" ) &
    done
    wait
    fail=0
    for t in $TARGETS; do
        rc=$(cat "$B/ci/$t.rc" 2>/dev/null || echo 1)
        runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$B/ci/$t.log")
        cov=$(grep -o 'cov: [0-9]*' "$B/ci/$t.log" | tail -n 1)
        printf '  fuzz_%-9s %ss: %s inputs, %s%s\n' "$t" "$secs" "${runs:-?}" "${cov:-cov: ?}" \
            "$([ "$rc" = 0 ] || echo "  FAILED (exit $rc)")"
        if [ "$rc" != 0 ]; then
            fail=1
            grep -E 'ERROR|SUMMARY|fuzz check failed|runtime error|Test unit written' "$B/ci/$t.log" | head -n 20 | sed 's/^/    /'
            echo "    log: $B/ci/$t.log"
            for a in "$B/ci/$t"-*; do
                [ -f "$a" ] || continue
                echo "    reproducer: $a"
                echo "      replay: tools/fuzz.sh repro $t $a"
                echo "      keep it: cp $a test/fuzz/corpus/$t/crash-<what>.bin (unit.test_fuzz_corpus replays it)"
            done
        fi
    done
    echo "  fuzzing took $(( $(date +%s) - start )) s"
    exit $fail
    ;;
*)
    sed -n '2,20p' "$0"
    exit 2
    ;;
esac
