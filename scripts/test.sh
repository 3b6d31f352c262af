#!/usr/bin/env bash
# Builds kernrl from scratch and runs every CPU test (the CI entry point):
#   unit tests, every problem (spec, reference, guards, solution compile), the torch: texts, the CLI.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/deps.sh
BUILD="${BUILD_DIR:-build}"
JOBS="${JOBS:-$(nproc)}"
cmake --preset ci -B "$BUILD" -DCUDAToolkit_ROOT="${CUDA_HOME:-/usr/local/cuda}"
cmake --build "$BUILD" -j "$JOBS"
ctest --test-dir "$BUILD" --output-on-failure -j 2
