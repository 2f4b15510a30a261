#!/usr/bin/env bash
# bench-compare.sh -- compare the TAP benchmarks of two wisp-node builds
# (e.g. the tree before and after a change), run INTERLEAVED in one session
# (old, new, old, new, ...) so that the machine's drift hits both alike:
#  - api:      tools/api-tap-bench.sh (netconn / socket / raw goodput per
#              write size, connect times), API_OPTS passed through;
#  - iperf:    test/interop/test_iperf.sh (its FIGURES: TCP Linux -> wisp
#              and wisp -> Linux, Mbit/s as the Linux end counted them);
#  - synflood: test/interop/test_syn_flood.sh (clean and flooded goodput
#              medians, their ratio, node CPU per flood SYN).
# The benchmark scripts are this tree's (run against both binaries).
# Prints, per figure, each build's values over the pairs, their median and
# spread ((max - min) / median: the noise of one build), and new / old as
# the ratio of the medians and as the median of the per-pair ratios.
#
# Usage: tools/bench-compare.sh [options] OLD-wisp-node NEW-wisp-node
#   --pairs N        old/new pairs per benchmark (default 3; 1..9)
#   --what "LIST"    benchmarks, of: api iperf synflood (default all three)
#   --api-opts "..." options for api-tap-bench.sh, as shell words (default
#                    "--runs 3 --mb 20")
#   --out DIR        keep every log there (default a mktemp dir, kept)
# Build both wisp-nodes the same way (same compiler, build type, options
# header). Needs root (the scripts make their own network namespaces,
# 198.18.0.0/15); every run is bounded by timeout(1). Exit 0 when every run
# passed, 1 when one failed (its log is named; the others still count).

# shellcheck disable=SC2317  # the run_* functions are called as "run_$b"
set -u
set -o pipefail

PAIRS=3
WHAT="api iperf synflood"
API_OPTS="--runs 3 --mb 20"
OUT=""
args=()
while [ $# -gt 0 ]; do
    case "$1" in
    --pairs) PAIRS=$2; shift ;;
    --what) WHAT=$2; shift ;;
    --api-opts) API_OPTS=$2; shift ;;
    --out) OUT=$2; shift ;;
    -h | --help) sed -n '2,25p' "$0"; exit 0 ;;
    -*) echo "bench-compare: unknown option $1" >&2; exit 2 ;;
    *) args+=("$1") ;;
    esac
    shift
done
[ "${#args[@]}" -eq 2 ] || { echo "usage: $0 [options] OLD-wisp-node NEW-wisp-node" >&2; exit 2; }
[[ "$PAIRS" =~ ^[1-9]$ ]] || { echo "bench-compare: --pairs 1..9" >&2; exit 2; }
declare -A NODE
NODE[old]=$(readlink -f "${args[0]}")
NODE[new]=$(readlink -f "${args[1]}")
for t in old new; do
    [ -x "${NODE[$t]}" ] || { echo "bench-compare: not executable: ${NODE[$t]}" >&2; exit 2; }
done
top=$(cd "$(dirname "$0")/.." && pwd)
[ -n "$OUT" ] || OUT=$(mktemp -d /tmp/wisp-bench-compare.XXXXXX)
mkdir -p "$OUT" || exit 1
VALS="$OUT/values.txt"   # lines: bench metric tree pair value
: >"$VALS"
fail=0
echo "bench-compare: old ${NODE[old]}, new ${NODE[new]}; $PAIRS pairs of: $WHAT; logs in $OUT" >&2

run_api() {  # tree pair
    local log="$OUT/api-$1-$2.txt" opts
    eval "opts=($API_OPTS)"   # shell words: --api-opts '--sizes "128 1460"'
    if ! timeout -k 10 1800 "$top/tools/api-tap-bench.sh" "${opts[@]}" "${NODE[$1]}" >"$log" 2>&1; then
        echo "bench-compare: api-tap-bench ($1, pair $2) failed: $log" >&2
        return 1
    fi
    awk -v t="$1" -v p="$2" -F'|' '
        NF >= 7 && $2 ~ /^ *[0-9]+ *$/ {
            s = $2 + 0
            print "api", "goodput_" s "_netconn", t, p, $3 + 0
            print "api", "goodput_" s "_socket", t, p, $4 + 0
            print "api", "ratio_" s "_socket/netconn", t, p, $5 + 0
            if ($6 ~ /[0-9]/) print "api", "goodput_" s "_raw", t, p, $6 + 0
        }
        NF == 5 && $2 ~ /^ *(netconn|socket|raw) *$/ && $3 ~ /[0-9]/ {
            gsub(/ /, "", $2)
            print "api", "connect_us_mean_" $2, t, p, $3 + 0
            print "api", "connect_us_median_" $2, t, p, $4 + 0
        }' "$log" >>"$VALS"
}

run_iperf() {
    local log="$OUT/iperf-$1-$2.txt"
    if ! timeout -k 10 600 bash "$top/test/interop/test_iperf.sh" "${NODE[$1]}" >"$log" 2>&1; then
        echo "bench-compare: test_iperf ($1, pair $2) failed: $log" >&2
        return 1
    fi
    sed -nE "s/.*FIGURES tcp linux->wisp: .* Linux ([0-9.]+) Mbit\/s.*/iperf tcp_linux_to_wisp_Mbps $1 $2 \1/p;
             s/.*FIGURES tcp wisp->linux: .* Linux server ([0-9.]+) Mbit\/s.*/iperf tcp_wisp_to_linux_Mbps $1 $2 \1/p" \
        "$log" >>"$VALS"
}

run_synflood() {
    local log="$OUT/synflood-$1-$2.txt"
    if ! timeout -k 10 900 bash "$top/test/interop/test_syn_flood.sh" "${NODE[$1]}" >"$log" 2>&1; then
        echo "bench-compare: test_syn_flood ($1, pair $2) failed: $log" >&2
        fail=1   # a ratio below the gate is still a figure: parse it
    fi
    sed -nE "s/.*clean MB\/s:.*\(median ([0-9.]+)\).*/synflood clean_MBps $1 $2 \1/p;
             s/.*flooded MB\/s:.*\(median ([0-9.]+)\).*/synflood flooded_MBps $1 $2 \1/p;
             s/.*goodput ratio \(median flooded \/ median clean\): ([0-9.]+).*/synflood ratio_flooded\/clean $1 $2 \1/p;
             s/.*-> ([0-9.]+) us per flood SYN.*/synflood node_us_per_flood_SYN $1 $2 \1/p" "$log" | sort -u >>"$VALS"
}

for b in $WHAT; do
    case "$b" in api | iperf | synflood) ;; *) echo "bench-compare: unknown benchmark $b" >&2; exit 2 ;; esac
    for p in $(seq 1 "$PAIRS"); do
        for t in old new; do
            echo "bench-compare: $b $t pair $p ($(date -u +%T))" >&2
            "run_$b" "$t" "$p" || fail=1
        done
    done
done

python3 - "$VALS" <<'PYEOF'
import sys, statistics as st
rows = {}
order = []
for line in open(sys.argv[1]):
    b, m, t, p, v = line.split()
    k = (b, m)
    if k not in rows:
        rows[k] = {"old": {}, "new": {}}
        order.append(k)
    rows[k][t][int(p)] = float(v)
def fmt(x):
    return "%.3g" % x if abs(x) < 10 else "%.1f" % x
def spread(v):
    m = st.median(v)
    return (max(v) - min(v)) / m * 100 if m else 0.0
print("| bench | figure | old (per pair) | new (per pair) | old median | new median | spread old / new | new/old (medians) | new/old (median of pair ratios) |")
print("|---|---|---|---|---:|---:|---:|---:|---:|")
for k in order:
    o, n = rows[k]["old"], rows[k]["new"]
    if not o or not n:
        continue
    mo, mn = st.median(o.values()), st.median(n.values())
    pr = [n[p] / o[p] for p in o if p in n and o[p]]
    print("| %s | %s | %s | %s | %s | %s | %.0f %% / %.0f %% | %s | %s |" % (
        k[0], k[1], " ".join(fmt(o[p]) for p in sorted(o)), " ".join(fmt(n[p]) for p in sorted(n)),
        fmt(mo), fmt(mn), spread(list(o.values())), spread(list(n.values())),
        "%.3f" % (mn / mo) if mo else "-", "%.3f" % st.median(pr) if pr else "-"))
PYEOF
echo "bench-compare: logs and values in $OUT" >&2
exit "$fail"
