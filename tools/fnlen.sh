#!/usr/bin/env bash
# Function length check (issue 13: no function over ~120 lines in the core).
# Lists every function definition in the C files given (default: src/core,
# src/api and src/netif)
# with its length in lines, from the line naming it to its closing brace
# (the project's style: the opening and closing braces of a function body
# stand alone in column 0). With --check, exits 1 when a function is longer
# than MAX (default 120) and not on the allow-list below.
#   tools/fnlen.sh [--check] [--max N] [--top N] [files...]
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
check=0
max=120
show=0
while [ $# -gt 0 ]; do
    case "$1" in
    --check) check=1; shift ;;
    --max) max=$2; shift 2 ;;
    --top) show=$2; shift 2 ;;
    *) break ;;
    esac
done
if [ $# -eq 0 ]; then
    set -- "$top"/src/core/*.c "$top"/src/api/*.c "$top"/src/netif/*.c
fi
# Functions outside TCP allowed over the limit, each named (file:function),
# each one tight loop or parser over a protocol's cases. Every TCP
# function (src/core/tcp*.c) is within the limit: never add one here.
allow="
chksum.c:wisp_chksum_copy
"
list=$(awk '
    FNR == 1 { cand = ""; infn = 0 }
    infn == 0 && /^[A-Za-z_][A-Za-z0-9_ *]*[ *]([A-Za-z_][A-Za-z0-9_]*)\(/ && !/;[ \t]*$/ {
        s = $0; sub(/\(.*/, "", s); n = split(s, w, /[ *]+/); cand = w[n]; candline = FNR; next
    }
    infn == 0 && /;[ \t]*$/ { cand = ""; next }
    infn == 0 && /^\{/ && cand != "" { infn = 1; next }
    infn == 1 && /^\}/ {
        f = FILENAME; sub(/.*\//, "", f);
        printf "%d %s:%s\n", FNR - candline + 1, f, cand; infn = 0; cand = ""; next
    }
' "$@" | sort -rn)
if [ "$show" != 0 ]; then
    printf '%s\n' "$list" | head -n "$show"
elif [ "$check" = 0 ]; then
    printf '%s\n' "$list"
fi
if [ "$check" = 1 ]; then
    bad=0
    while read -r n fn; do
        [ -n "$n" ] || continue
        if [ "$n" -gt "$max" ]; then
            if printf '%s\n' "$allow" | grep -qx "$fn"; then
                echo "allowed: $fn $n lines (over $max)"
            else
                echo "FAIL: $fn is $n lines (over $max): split it into well-named helpers"
                bad=1
            fi
        fi
    done <<< "$list"
    [ "$bad" = 0 ] && echo "function length: every function in the checked files is at most $max lines (or allow-listed)"
    exit "$bad"
fi
