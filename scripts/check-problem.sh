#!/usr/bin/env bash
# scripts/check-problem.sh 'L2_*' : builds what is needed and runs every CPU check for the matching
# problems (spec, reference at test sizes, guards, solution compile, torch: text).
set -euo pipefail
cd "$(dirname "$0")/.."
FILTER="${1:-*}"
BUILD="${BUILD_DIR:-build}"
[ -f "$BUILD/build.ninja" ] || cmake --preset default -B "$BUILD" >/dev/null
cmake --build "$BUILD" -j 2 --target kernrl_problem_tests kernrl_refdump kernrl-nvrtc
export KERNRL_PROBLEM_FILTER="$FILTER"
status=0
"$BUILD/kernrl_problem_tests" || status=1
/usr/bin/python3 tests/problems/torch_text_check.py --refdump "$BUILD/kernrl_refdump" || status=1
exit $status
