#!/bin/bash
# Header tiers (wisp/arch.h): include/wisp/ is the public API,
# include/wisp/prot/ the wire formats, include/wisp/priv/ the private tier
# (struct layouts for their size only, members named through WISP_PRIV()).
# Checks, each of which can fail:
#  1. applications, examples, the size probe and the interop programs use
#     the public tier only: they neither define WISP_PRIVATE_ACCESS nor
#     include a private header, and no build file gives them the define
#     (so the build of apps/ itself proves they name no private member);
#  2. every public header compiles on its own, without private access;
#  3. a program that names a private member does not compile without
#     WISP_PRIVATE_ACCESS, and does with it (the mechanism works);
#  4. every library source defines WISP_PRIVATE_ACCESS before its first
#     #include (so a user's own build of the sources needs no flag).
# Usage: tools/check-tiers.sh [cc]
set -u
root=$(cd "$(dirname "$0")/.." && pwd)
cc=${1:-${CC:-cc}}
fail=0
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# 1
bad=$(grep -rnE 'WISP_PRIVATE_ACCESS|wisp/priv/|wisp_priv_|#include.*("tcp_priv\.h"|"tcp_cc\.h"|src/)' \
      "$root/apps" "$root/tools/size/probe_raw.c" "$root/tools/size/probe_full.c" "$root/test/interop" 2>/dev/null)
if [ -n "$bad" ]; then
    echo "FAIL: private tier used outside the library:"; echo "$bad"; fail=1
fi
if grep -n 'WISP_PRIVATE_ACCESS' "$root/CMakeLists.txt"; then
    echo "FAIL: the top-level build gives WISP_PRIVATE_ACCESS to a target (only test/ may)"; fail=1
fi

# 2
n=0
for h in "$root"/include/wisp/*.h; do
    name=$(basename "$h")
    printf '#include "wisp/%s"\nint wisp_tier_probe_%s;\n' "$name" "${name%.h}" > "$tmp/h.c"
    if ! "$cc" -std=c99 -Wall -Wextra -Werror -fsyntax-only -I "$root/include" -I "$root/ports/unix" \
        '-DWISP_OPTS_HEADER="wisp_opts_host.h"' "$tmp/h.c" \
        >"$tmp/err" 2>&1; then
        echo "FAIL: wisp/$name does not compile on its own:"; head -5 "$tmp/err"; fail=1
    fi
    n=$((n + 1))
done
echo "public headers compiled on their own: $n"

# 3
cat > "$tmp/p.c" <<'C'
#include "wisp/wisp.h"
unsigned wisp_tier_probe(struct wisp_stack *s);
unsigned wisp_tier_probe(struct wisp_stack *s) { return s->now; }
C
if "$cc" -std=c99 -fsyntax-only -I "$root/include" "$tmp/p.c" >/dev/null 2>&1; then
    echo "FAIL: a private member (struct wisp_stack.now) is reachable without WISP_PRIVATE_ACCESS"; fail=1
fi
if ! "$cc" -std=c99 -fsyntax-only -DWISP_PRIVATE_ACCESS=1 -I "$root/include" "$tmp/p.c" >"$tmp/err" 2>&1; then
    echo "FAIL: the same member is not reachable with WISP_PRIVATE_ACCESS:"; head -5 "$tmp/err"; fail=1
fi

# 5 (after 4 below): every application and example source compiles on its
#   own without private access (the ones the tests build are compiled with
#   the tests' white-box flags there, so check them here too)
# 4
for f in $(find "$root/src" "$root/ports" "$root/sim" -name '*.c'); do
    first=$(grep -nm1 '^#include' "$f" | cut -d: -f1)
    def=$(grep -nm1 '^#define WISP_PRIVATE_ACCESS 1' "$f" | cut -d: -f1)
    if [ -z "$def" ] || [ -z "$first" ] || [ "$def" -gt "$first" ]; then
        echo "FAIL: $f does not define WISP_PRIVATE_ACCESS before its first #include"; fail=1
    fi
done

# 5
n=0
for f in $(find "$root/apps" -name '*.c') "$root/tools/size/probe_raw.c"; do
    if ! "$cc" -std=c99 -Wall -Wextra -Werror -fsyntax-only -D_GNU_SOURCE -I "$root/include" -I "$root/ports/unix" \
        -I "$root/apps/lib" -I "$root/apps/examples" -I "$root/apps/demo" -I "$root/sim" -I "$root/test/sim" \
        '-DWISP_OPTS_HEADER="wisp_opts_host.h"' "$f" >"$tmp/err" 2>&1; then
        echo "FAIL: $f does not compile against the public tier:"; head -5 "$tmp/err"; fail=1
    fi
    n=$((n + 1))
done
echo "application sources compiled without private access: $n"

[ $fail -eq 0 ] && echo "header tiers: OK"
exit $fail
