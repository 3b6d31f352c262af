#!/usr/bin/env bash
# The main job on a fresh machine: install dependencies, build, and grade every bundled solution
# with `kernrl grade-dir` (compile-only on a machine without a GPU), then print the report.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/deps.sh
BUILD="${BUILD_DIR:-build}"
cmake --preset release -B "$BUILD"
cmake --build "$BUILD" -j "$(nproc)"
DIR="$(mktemp -d)"
for d in problems/L*/*/; do
  id="$(basename "$(dirname "$d")")_$(basename "$d")"
  mkdir -p "$DIR/$id" && cp "$d/solution.cu" "$DIR/$id/solution.cu"
done
"$BUILD/kernrl" grade-dir "$DIR" --run bundled-solutions --out "${OUT:-$PWD}/demo-traces.jsonl" --no-resume
echo "traces: ${OUT:-$PWD}/demo-traces.jsonl"
