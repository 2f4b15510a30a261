#!/usr/bin/env bash
# tools/coverage.sh: line coverage of wisp's input parsers, against the
# committed floor (tools/coverage-floor.txt).
#
#   tools/coverage.sh [check|report|build]   (env COV_BUILD=dir, default build-cov; JOBS=N)
#
# Builds the test programs with gcc --coverage (-O0, Debug; atomic counters:
# the threaded tests) in $COV_BUILD ("build" stops there: tools/test.sh
# builds ahead), runs the unit and simulator test programs there (tests
# unit.test_* and sim.test_*, not label bench; the fuzz corpus replay,
# unit.test_fuzz_corpus, is one of them), collects the
# counts with gcovr (Debian package gcovr) from the core and apps libraries
# (libwisp, libwisp_apps; not the bench/no-OS copies of the core, which are
# other builds of the same lines), and for each entry of the floor file
# computes the line coverage of the named functions (their lines from the
# definition to the closing brace at column 0; the whole file's line
# coverage is printed too, for information). "check" (the default)
# fails when an entry is below its floor; "report" only prints. Also writes
# $COV_BUILD/coverage.html (per file, with the lines not reached).
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"
B=${COV_BUILD:-$top/build-cov}
jobs=${JOBS:-2}
mode=${1:-check}
command -v gcovr >/dev/null || { echo "gcovr missing (apt-get install gcovr)"; exit 1; }

cmake -S . -B "$B" -DCMAKE_C_COMPILER=gcc -DCMAKE_BUILD_TYPE=Debug -DWISP_WERROR=ON \
      -DCMAKE_C_FLAGS="--coverage -fprofile-update=atomic -O0" -DCMAKE_EXE_LINKER_FLAGS=--coverage >/dev/null
# the programs behind the unit.test_* and sim.test_* tests (not the tools,
# apps and benchmarks: no test here runs them)
progs=$("$top/tools/test-progs.sh" "$B" 'unit|sim')
# shellcheck disable=SC2086
cmake --build "$B" -j "$jobs" --target $progs >/dev/null
[ "$mode" = build ] && exit 0
find "$B" -name '*.gcda' -delete
# Pass or fail is the business of the gcc and sanitizer passes: here a
# failed test only costs the coverage it would have brought (the floor
# check then says so). sim.demo (a script: its wall-clock checks are not
# meant for an instrumented -O0 build, and it reaches no parser line the
# other tests do not) and the lint scripts are left out.
(cd "$B" && TSL_IMPAIR_SEEDS=${TSL_IMPAIR_SEEDS:-10} ctest --output-on-failure -j "$jobs" -R '^(unit|sim)\.test_' -LE bench \
    >"$B/coverage-ctest.log" 2>&1) || {
  echo "coverage: some tests failed in the coverage build (log: $B/coverage-ctest.log); counting what ran."
  echo "coverage: they pass in the other passes, so this is a flake to look into; what failed:"
  grep -E '^\[  FAILED  \] [a-z]|\[  ERROR   \]|\[   LINE   \]|\(Failed\)|\(Timeout\)' "$B/coverage-ctest.log" | sed 's/^/  /' | head -n 40
}
objs=("$B/CMakeFiles/wisp.dir" "$B/CMakeFiles/wisp_apps.dir")
gcovr -r "$top" --json "$B/coverage.json" "${objs[@]}" >/dev/null
gcovr -r "$top" --html-details "$B/coverage.html" "${objs[@]}" >/dev/null 2>&1 || true

python3 - "$top/tools/coverage-floor.txt" "$B/coverage.json" "$mode" <<'PY'
import json, re, sys
floor_path, cov_path, mode = sys.argv[1:4]
cov = {f['file']: f for f in json.load(open(cov_path))['files']}
fail = 0
print('%-22s %-8s %-9s %-6s %-7s %s' % ('file', 'lines', 'coverage', 'floor', 'file', 'functions (lines not reached)'))
for raw in open(floor_path):
    line = raw.split('#', 1)[0].strip()
    if not line:
        continue
    path, floor, fns = line.split(None, 2)
    floor = float(floor)
    fns = fns.split()
    src = open(path).read().split('\n')
    spans = {}
    for fn in fns:
        start = None
        pat = re.compile(r'^[A-Za-z].*[\s*]' + re.escape(fn) + r'\(')
        for i, l in enumerate(src):
            if pat.match(l) and not l.rstrip().endswith(';'):
                start = i + 1
        if start is None:
            print('coverage: %s: function %s not found' % (path, fn))
            sys.exit(2)
        end = start
        while end <= len(src) and src[end - 1] != '}':
            end += 1
        spans[fn] = (start, end)
    lines = {}
    for l in cov.get(path, {'lines': []})['lines']:
        if l.get('gcovr/noncode'):
            continue
        lines[l['line_number']] = max(lines.get(l['line_number'], 0), l['count'])
    tot = hit = 0
    missed = []
    for fn, (a, b) in spans.items():
        for n in range(a, b + 1):
            if n in lines:
                tot += 1
                if lines[n] > 0:
                    hit += 1
                else:
                    missed.append(n)
    pct = 100.0 * hit / tot if tot else 0.0
    fpct = 100.0 * sum(1 for c in lines.values() if c > 0) / len(lines) if lines else 0.0
    ok = pct + 1e-9 >= floor
    fail += not ok
    print('%-22s %3d/%-4d %6.1f %%  %5.1f  %5.1f%%  %s%s' % (path.split('/')[-1], hit, tot, pct, floor, fpct, ' '.join(fns),
          '' if ok else '  BELOW THE FLOOR'))
    if missed:
        print('%-22s   not reached: %s' % ('', ' '.join(map(str, missed))))
if fail and mode == 'check':
    print('coverage: %d parser(s) below the floor of tools/coverage-floor.txt' % fail)
    sys.exit(1)
print('coverage: %s' % ('every parser at or above its floor' if not fail else 'report only'))
PY
