#!/usr/bin/env bash
# test_api_bench.sh -- the netconn vs socket benchmark over TAP
# (tools/api-tap-bench.sh --quick) as a check: wisp-node --api netconn and
# --api socket each send 8 MB to a Linux discard server, 5 interleaved runs
# per API and write size (128, 512, 1024, 1460 bytes); the test fails when
# the socket API's median goodput is below 0.5 x netconn's at any size
# (a size below it is measured once more and judged on all its runs), or
# when any run fails (exit status, pool leak, missing figures). Also 50
# sequential connects per API. Prints the table. The ratio of a size is
# the median of the ratios of back-to-back runs (robust to slow load
# changes); WISP_IT_API_BENCH_RATIO overrides the threshold 0.5.
#
# Why 0.5 here and 0.95 in bench.api_socket_tax: over TAP single 8 MB runs
# of one API and size ranged from 38 to 117 MB/s in one CI run on the
# 2-core machine (kernel, tap and three node threads sharing two CPUs; a
# run lasts ~0.1 s), and a median ratio of 0.839 failed a 0.85 gate while
# 20 MB runs gave 0.94..1.09 -- so this check only catches a gross
# regression (e.g. an extra copy or thread hop per call). The 0.95
# requirement is checked by bench.api_socket_tax (apps/bench/api_bench.c:
# both APIs in one process pinned to one CPU, interleaved runs), and the
# CPU cost per MB of the two APIs is compared there too. Bounded: every node run
# under timeout(1); about 30 s.
#
# Usage: test_api_bench.sh PATH-TO-wisp-node   (root; exit 77 = skipped)

set -u
node=${1:-}
[ -n "$node" ] || { echo "usage: $0 PATH-TO-wisp-node" >&2; exit 1; }
bench="$(dirname "$0")/../../tools/api-tap-bench.sh"
[ -r "$bench" ] || { echo "[test_api_bench] FAIL: missing $bench" >&2; exit 1; }
t0=$(date +%s)
# WISP_IT_API_BENCH_RATIO: the threshold (default 0.5, see above).
ratio=${WISP_IT_API_BENCH_RATIO:-0.5}
timeout -k 10 170 bash "$bench" --quick --check "$ratio" "$node" 2>&1 | sed 's/^/[test_api_bench] /'
rc=${PIPESTATUS[0]}
echo "[test_api_bench] run time $(($(date +%s) - t0)) s"
case $rc in
0) echo "[test_api_bench] PASS" ;;
77) echo "[test_api_bench] SKIP: no network namespaces / not root" ;;
*) echo "[test_api_bench] FAIL (status $rc)" >&2 ;;
esac
exit "$rc"
