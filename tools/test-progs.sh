#!/usr/bin/env bash
# tools/test-progs.sh BUILD_DIR LABEL_REGEX: the test programs (CMake
# targets) behind the tests KIND.test_NAME[.VARIANT] of a configured build
# that carry a label matching LABEL_REGEX, one per line -- what a pass
# builds when it runs only those tests (tools/test.sh, tools/coverage.sh).
set -euo pipefail
cd "$1"
ctest -N -L "$2" | sed -n 's/.*Test *#[0-9]*: [a-z]*\.\(test_[A-Za-z0-9_]*\).*$/\1/p' | sort -u
